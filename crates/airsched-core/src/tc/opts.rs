//! Tokens, diagnostics and the option parser shared by every discipline.
//!
//! A discipline's `build` function receives an [`OptParser`] positioned after its kind keyword
//! (`tbf rate 1mbit burst 10k latency 50ms`: the parser starts at `rate`). It reads keywords and
//! values, pushes errors for malformed input and warnings for options tc accepts but airsched
//! does not model, and never panics.

use crate::time::Nanos;
use crate::units::{parse_rate_bps, parse_size_bytes, parse_tc_time_us};

/// A whitespace-separated word of a tc command, with its position in the script (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok<'a> {
    pub text: &'a str,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    /// Accepted by tc but not modelled (or modelled differently): recorded in the run's
    /// metadata, never silently ignored.
    Warning,
}

/// An error or warning about a tc script, at a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcDiag {
    pub severity: Severity,
    pub line: u32,
    pub col: u32,
    /// The offending token ("" at the end of a line).
    pub token: String,
    pub message: String,
}

impl TcDiag {
    /// A diagnostic at token `at`.
    pub fn at(severity: Severity, at: Tok<'_>, message: impl Into<String>) -> TcDiag {
        TcDiag { severity, line: at.line, col: at.col, token: at.text.to_string(), message: message.into() }
    }

    /// A diagnostic at `(line, column)` without a token: the end of a command, or column 1 of a
    /// line as a whole.
    pub fn at_pos(severity: Severity, (line, col): (u32, u32), message: impl Into<String>) -> TcDiag {
        TcDiag { severity, line, col, token: String::new(), message: message.into() }
    }
}

/// True if a diagnostic pushed since index `from` is an error.
pub fn errors_since(diags: &[TcDiag], from: usize) -> bool {
    diags[from..].iter().any(|d| d.severity == Severity::Error)
}

impl std::fmt::Display for TcDiag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        if self.token.is_empty() {
            write!(f, "{}:{}: {what}: {}", self.line, self.col, self.message)
        } else {
            write!(f, "{}:{}: {what}: at \"{}\": {}", self.line, self.col, self.token, self.message)
        }
    }
}

/// Reads a discipline's options. `end` is the position just after the last token, used for
/// "missing value" errors.
pub struct OptParser<'a, 'd> {
    toks: &'a [Tok<'a>],
    pos: usize,
    end: (u32, u32),
    diags: &'d mut Vec<TcDiag>,
    /// Diagnostics already present when this parser started (other commands' own).
    first_diag: usize,
}

impl<'a, 'd> OptParser<'a, 'd> {
    pub fn new(toks: &'a [Tok<'a>], end: (u32, u32), diags: &'d mut Vec<TcDiag>) -> Self {
        let first_diag = diags.len();
        OptParser { toks, pos: 0, end, diags, first_diag }
    }

    /// The next token, consumed.
    pub fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.toks.get(self.pos).copied();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    pub fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    pub fn is_done(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Tokens not consumed yet (for kinds that hand a tail to another parser).
    pub fn rest(&self) -> &'a [Tok<'a>] {
        &self.toks[self.pos.min(self.toks.len())..]
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
        self.diags.push(TcDiag::at_pos(Severity::Error, self.end, message));
    }

    /// An unknown option: names the known ones.
    pub fn unknown(&mut self, at: Tok<'_>, kind: &str, known: &[&str]) {
        self.error(at, format!("unknown {kind} option \"{}\"; expected one of: {}", at.text, known.join(", ")));
    }

    /// The value after option `key`, or an error saying what was expected.
    pub fn value(&mut self, key: Tok<'_>, expected: &str) -> Option<Tok<'a>> {
        match self.next() {
            Some(v) => Some(v),
            None => {
                self.error(key, format!("\"{}\" needs a value: {expected}", key.text));
                None
            }
        }
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
            self.warn(v, "the \"/cell\" suffix sets the legacy rate-table cell size, which kernels since 3.8 ignore; ignored");
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
        let mut diags = vec![TcDiag { severity: Severity::Error, line: 1, col: 1, token: "x".into(), message: "earlier".into() }];
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
}
