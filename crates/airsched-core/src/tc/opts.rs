//! A discipline's options, read and printed: the option parser every discipline uses, and the
//! number formats of their `tc qdisc show` option text.
//!
//! A discipline's `build` function receives an [`OptParser`] positioned after its kind keyword
//! (`tbf rate 1mbit burst 10k latency 50ms`: the parser starts at `rate`). It reads keywords and
//! values, pushes errors for malformed input and warnings for options tc accepts but airsched
//! does not model, and never panics. Its report prints the options back as tc does
//! (`sprint_rate`, `sprint_size`, `sprint_time`: [`format_rate`], [`format_size`],
//! [`format_time_us`]).

use super::lex::{errors_since, Cursor, Severity, TcDiag, Tok};
use crate::time::Nanos;
use crate::units::{parse_rate_bps, parse_size_bytes, parse_tc_time_us};

/// Reads a discipline's options. `end` is the position just after the last token, used for
/// "missing value" errors.
pub struct OptParser<'a, 'd> {
    cur: Cursor<'a, 'a>,
    diags: &'d mut Vec<TcDiag>,
    /// Diagnostics already present when this parser started (other commands' own).
    first_diag: usize,
}

impl<'a, 'd> OptParser<'a, 'd> {
    pub fn new(toks: &'a [Tok<'a>], end: (u32, u32), diags: &'d mut Vec<TcDiag>) -> Self {
        let first_diag = diags.len();
        OptParser { cur: Cursor::new(toks, end), diags, first_diag }
    }

    /// The next token, consumed (a cursor, not an iterator: parsing also peeks and rewinds).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Tok<'a>> {
        self.cur.next()
    }

    pub fn peek(&self) -> Option<Tok<'a>> {
        self.cur.peek()
    }

    #[cfg(test)]
    pub fn is_done(&self) -> bool {
        self.cur.is_done()
    }

    /// Whether this parser reported an error (errors of earlier commands do not count).
    pub fn has_errors(&self) -> bool {
        errors_since(self.diags, self.first_diag)
    }

    pub fn error(&mut self, at: Tok<'_>, message: impl Into<String>) {
        self.diags.push(TcDiag::at(Severity::Error, at, message));
    }

    pub fn warn(&mut self, at: Tok<'_>, message: impl Into<String>) {
        self.diags.push(TcDiag::at(Severity::Warning, at, message));
    }

    /// An error at the end of the command (a required option or value is missing).
    pub fn error_at_end(&mut self, message: impl Into<String>) {
        self.diags.push(TcDiag::at_pos(Severity::Error, self.cur.end(), message));
    }

    /// An unknown option: names the known ones.
    pub fn unknown(&mut self, at: Tok<'_>, kind: &str, known: &[&str]) {
        self.error(at, format!("unknown {kind} option \"{}\"; expected one of: {}", at.text, known.join(", ")));
    }

    /// The value after option `key`, or an error saying what was expected.
    pub fn value(&mut self, key: Tok<'_>, expected: &str) -> Option<Tok<'a>> {
        self.cur.value(key, expected, self.diags)
    }

    /// A rate in tc units, as bits per second.
    pub fn rate(&mut self, key: Tok<'_>) -> Option<u64> {
        let v = self.value(key, "a rate like 1mbit or 500kbit")?;
        match parse_rate_bps(v.text) {
            Ok(r) => Some(r),
            Err(e) => {
                self.error(v, e.to_string());
                None
            }
        }
    }

    /// A size in tc units, in bytes.
    pub fn size(&mut self, key: Tok<'_>) -> Option<u64> {
        let v = self.value(key, "a size like 1514, 15k or 1mb")?;
        // tc accepts "burst 10k/8" (legacy cell size): keep the size, warn about the cell.
        let (text, cell) = match v.text.split_once('/') {
            Some((s, c)) => (s, Some(c)),
            None => (v.text, None),
        };
        if cell.is_some() {
            self.warn(
                v,
                "the \"/cell\" suffix sets the legacy rate-table cell size, which kernels since 3.8 ignore; ignored",
            );
        }
        match parse_size_bytes(text) {
            Ok(s) => Some(s),
            Err(e) => {
                self.error(v, e.to_string());
                None
            }
        }
    }

    /// A time in tc units (a bare number is microseconds).
    pub fn time(&mut self, key: Tok<'_>) -> Option<Nanos> {
        let v = self.value(key, "a time like 5ms, 100us or 1s")?;
        match parse_tc_time_us(v.text) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(v, e.to_string());
                None
            }
        }
    }

    /// An unsigned integer within [min, max]; accepts decimal and 0x hex.
    pub fn uint(&mut self, key: Tok<'_>, min: u64, max: u64) -> Option<u64> {
        let v = self.value(key, &format!("an integer from {min} to {max}"))?;
        let parsed = match v.text.strip_prefix("0x").or_else(|| v.text.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.text.parse::<u64>().ok(),
        };
        match parsed {
            Some(n) if (min..=max).contains(&n) => Some(n),
            Some(n) => {
                self.error(v, format!("{n} is out of range; expected an integer from {min} to {max}"));
                None
            }
            None => {
                self.error(v, format!("\"{}\" is not an integer; expected one from {min} to {max}", v.text));
                None
            }
        }
    }

    /// A hexadecimal number as tc reads minor ids (`default 20` is 0x20).
    pub fn hex(&mut self, key: Tok<'_>, max: u64) -> Option<u64> {
        let v = self.value(key, "a hexadecimal number like 20 or 0x20")?;
        let h = v.text.strip_prefix("0x").or_else(|| v.text.strip_prefix("0X")).unwrap_or(v.text);
        match u64::from_str_radix(h, 16) {
            Ok(n) if n <= max => Some(n),
            _ => {
                self.error(v, format!("\"{}\" is not a hexadecimal number up to {max:#x}", v.text));
                None
            }
        }
    }

    /// A floating-point number within [min, max] (probabilities, RED's `probability`).
    pub fn float(&mut self, key: Tok<'_>, min: f64, max: f64) -> Option<f64> {
        let v = self.value(key, &format!("a number from {min} to {max}"))?;
        match v.text.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= min && x <= max => Some(x),
            _ => {
                self.error(v, format!("\"{}\" is not a number from {min} to {max}", v.text));
                None
            }
        }
    }
}

// ----------------------------------------------------------------------------------------------
// Printing options as tc does

/// A rate as tc prints it (`sprint_rate`, SI units): `4Mbit`, `900Kbit`, `1500Kbit`, `64bit`.
/// A unit is taken while the number divides evenly or stays at a million or more.
pub fn format_rate(bits_per_second: u64) -> String {
    const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
    let mut rate = bits_per_second;
    let mut i = 0;
    while i < UNITS.len() - 1 {
        let rem = rate % 1000;
        if rate < 1000 || (rem != 0 && rate < 1_000_000) {
            break;
        }
        rate /= 1000;
        i += 1;
    }
    format!("{rate}{}bit", UNITS[i])
}

/// A rate the kernel keeps in bytes per second, as tc prints it: `sprint_rate` shifts it to
/// bits (`rate <<= 3`, wrapping like the C) and prints it as [`format_rate`] does.
pub fn format_rate_bytes(bytes_per_second: u64) -> String {
    format_rate(bytes_per_second.wrapping_shl(3))
}

/// A size in bytes as tc prints it (`sprint_size`, iproute2 6.x `lib/json_print_math.c`):
/// `1514b`, `15Kb`, `1Mb`, `3Gb`, `1600b`. A binary unit is used when the size is within 16
/// bytes of a whole number of KiB (1 KiB of a whole number of MiB or GiB); `rint` rounds half to
/// even.
pub fn format_size(bytes: u64) -> String {
    const K: f64 = 1024.0;
    const M: f64 = K * K;
    const G: f64 = M * K;
    let sz = bytes as f64;
    let near = |unit: f64, tol: f64| sz >= unit && (unit * (sz / unit).round_ties_even() - sz).abs() < tol;
    if near(G, 1024.0) {
        format!("{}Gb", fmt_g((sz / G).round_ties_even(), 6))
    } else if near(M, 1024.0) {
        format!("{}Mb", fmt_g((sz / M).round_ties_even(), 6))
    } else if near(K, 16.0) {
        format!("{}Kb", fmt_g((sz / K).round_ties_even(), 6))
    } else {
        format!("{bytes}b")
    }
}

/// A time in microseconds as tc prints it (`sprint_time`, `%.3g` with a unit): `50ms`,
/// `3.2ms`, `1s`, `100us`, with three significant digits above a millisecond.
pub fn format_time_us(us: u64) -> String {
    let t = us as f64;
    if t >= 1e6 {
        format!("{}s", fmt_g(t / 1e6, 3))
    } else if t >= 1e3 {
        format!("{}ms", fmt_g(t / 1e3, 3))
    } else {
        format!("{us}us")
    }
}

/// C's `%.{prec}g` (`%g` is `fmt_g(x, 6)`).
pub(crate) fn fmt_g(x: f64, prec: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            "inf".into()
        } else {
            "0".into()
        };
    }
    let prec = prec.max(1);
    let sci = format!("{:.*e}", prec - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= prec as i32 {
        let mant = trim_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let mut col = 1u32;
        let mut out = vec![];
        for w in s.split(' ') {
            out.push(Tok { text: w, line: 3, col });
            col += w.len() as u32 + 1;
        }
        out
    }

    #[test]
    fn reads_values_and_reports_positions() {
        let t = toks("rate 1mbit burst 10k/8 latency 50ms quantum 0x10 bogus");
        let mut diags = vec![];
        let mut p = OptParser::new(&t, (3, 60), &mut diags);
        let k = p.next().unwrap();
        assert_eq!(p.rate(k), Some(1_000_000));
        let k = p.next().unwrap();
        assert_eq!(p.size(k), Some(10 * 1024));
        let k = p.next().unwrap();
        assert_eq!(p.time(k), Some(Nanos::from_ms(50)));
        let k = p.next().unwrap();
        assert_eq!(p.uint(k, 1, 100), Some(16));
        let k = p.next().unwrap();
        p.unknown(k, "tbf", &["rate", "burst"]);
        assert!(p.is_done());
        assert_eq!(diags.len(), 2);
        assert_eq!(diags[0].severity, Severity::Warning);
        assert_eq!((diags[1].line, diags[1].col), (3, 50));
        assert!(diags[1].to_string().contains("unknown tbf option \"bogus\""), "{}", diags[1]);
    }

    #[test]
    fn errors_of_earlier_commands_do_not_count_as_this_parsers() {
        let t = toks("limit 10");
        let mut diags =
            vec![TcDiag { severity: Severity::Error, line: 1, col: 1, token: "x".into(), message: "earlier".into() }];
        let mut p = OptParser::new(&t, (3, 9), &mut diags);
        let k = p.next().unwrap();
        assert_eq!(p.uint(k, 0, 100), Some(10));
        assert!(!p.has_errors());
    }

    #[test]
    fn missing_and_bad_values_are_errors_at_the_right_token() {
        let t = toks("rate 1mbyte limit");
        let mut diags = vec![];
        let mut p = OptParser::new(&t, (3, 18), &mut diags);
        let k = p.next().unwrap();
        assert_eq!(p.rate(k), None);
        let k = p.next().unwrap();
        assert_eq!(p.size(k), None);
        assert_eq!(diags.len(), 2);
        assert_eq!((diags[0].col, diags[0].token.as_str()), (6, "1mbyte"));
        assert_eq!((diags[1].col, diags[1].token.as_str()), (13, "limit"));
        assert!(diags[1].message.contains("needs a value"));
    }

    #[test]
    fn rates_like_tc() {
        assert_eq!(format_rate(4_000_000), "4Mbit");
        assert_eq!(format_rate(900_000), "900Kbit");
        assert_eq!(format_rate(1_500_000), "1500Kbit");
        assert_eq!(format_rate(8), "8bit");
        assert_eq!(format_rate(1000), "1Kbit");
        assert_eq!(format_rate(1_234_567), "1234Kbit");
        assert_eq!(format_rate(100_000_000), "100Mbit");
        assert_eq!(format_rate(10_000_000_000), "10Gbit");
        assert_eq!(format_rate(0), "0bit");
        assert_eq!(format_rate(5_500_000), "5500Kbit");
    }

    #[test]
    fn sizes_like_tc() {
        assert_eq!(format_size(1514), "1514b");
        assert_eq!(format_size(1600), "1600b");
        assert_eq!(format_size(15360), "15Kb");
        assert_eq!(format_size(15370), "15Kb");
        assert_eq!(format_size(15376), "15376b");
        assert_eq!(format_size(1024 * 1024), "1Mb");
        assert_eq!(format_size(1_514_000), "1514000b");
        assert_eq!(format_size(0), "0b");
        assert_eq!(format_size(1023), "1023b");
        assert_eq!(format_size(3 << 30), "3Gb");
    }

    #[test]
    fn times_like_tc() {
        assert_eq!(format_time_us(50_000), "50ms");
        assert_eq!(format_time_us(3_200), "3.2ms");
        assert_eq!(format_time_us(5_000), "5ms");
        assert_eq!(format_time_us(100), "100us");
        assert_eq!(format_time_us(1_000_000), "1s");
        assert_eq!(format_time_us(12_345), "12.3ms");
        assert_eq!(format_time_us(123_456_789), "123s");
        assert_eq!(fmt_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(fmt_g(0.0001, 3), "0.0001");
        assert_eq!(fmt_g(0.00001, 3), "1e-05");
    }

    #[test]
    fn percent_g_like_c() {
        assert_eq!(fmt_g(50.0, 3), "50");
        assert_eq!(fmt_g(30.72, 3), "30.7");
        assert_eq!(fmt_g(1.5, 3), "1.5");
        assert_eq!(fmt_g(1234.0, 3), "1.23e+03");
        assert_eq!(fmt_g(0.0001234, 3), "0.000123");
        assert_eq!(fmt_g(15.0, 6), "15");
        assert_eq!(fmt_g(1e6, 6), "1e+06");
    }

    #[test]
    fn sizes_rates_times_as_tc_prints_them() {
        assert_eq!(format_size(15360), "15Kb");
        assert_eq!(format_size(1514), "1514b");
        assert_eq!(format_size(40360), "40360b");
        assert_eq!(format_size(2 * 1024 * 1024), "2Mb");
        assert_eq!(format_size(1_514_000), "1514000b");
        assert_eq!(format_rate_bytes(500_000), "4Mbit");
        assert_eq!(format_rate_bytes(187_500), "1500Kbit");
        assert_eq!(format_rate_bytes(125), "1Kbit");
        assert_eq!(format_rate_bytes(15), "120bit");
        assert_eq!(format_time_us(50_000), "50ms");
        assert_eq!(format_time_us(1_500_000), "1.5s");
        assert_eq!(format_time_us(800), "800us");
    }

    #[test]
    fn times_print_like_tc() {
        // The kernel reports 5 ms as 4 999 us (CoDel's 1024-ns unit); tc's %.3g shows 5ms.
        assert_eq!(format_time_us(4_999), "5ms");
        assert_eq!(format_time_us(99_999), "100ms");
        assert_eq!(format_time_us(1_500), "1.5ms");
        assert_eq!(format_time_us(999), "999us");
        assert_eq!(format_time_us(2_500_000), "2.5s");
        assert_eq!(format_time_us(999_999), "1e+03ms");
    }

    #[test]
    fn sizes_print_like_tc() {
        assert_eq!(format_size(1514), "1514b");
        assert_eq!(format_size(32 << 20), "32Mb");
        assert_eq!(format_size(15 * 1024), "15Kb");
        assert_eq!(format_size(1024 + 20), "1044b");
        assert_eq!(format_size(0), "0b");
    }
}
