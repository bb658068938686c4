//! Parsing of quantities written with units: data rates, byte sizes, durations and 802.11 PHY
//! rates (802.11b DSSS, OFDM).
//!
//! Rates and sizes follow the rules of iproute2's `tc` (`lib/utils_math.c` and `lib/utils.c`),
//! so that the same functions can later parse `tc qdisc ...` command lines. Durations in scenario
//! files use the same unit names as `tc` but, unlike `tc`, require an explicit unit.
//!
//! All arithmetic is exact: the number is read as a decimal (integer part plus fraction digits)
//! and scaled with integer arithmetic, so `"5.5mbit"` is exactly 5 500 000 bit/s and `"0.1ms"`
//! exactly 100 000 ns. A value that does not come out as a whole number of the base unit (bit/s,
//! byte, nanosecond) is rejected rather than rounded.
//!
//! Accepted number syntax: ASCII digits with at most one decimal point (`"5"`, `"5.5"`, `".5"`,
//! `"5."`), optionally preceded by `+`; whitespace may surround the number and separate it from
//! the unit (`"10 ms"`). Exponents (`"1e6bit"`), hexadecimal and `inf`/`nan` are not accepted.
//! Unit suffixes are matched case-insensitively.

use std::fmt;

use crate::phy::dsss::DsssRate;
use crate::phy::error_rate::OfdmRate;
use crate::time::Nanos;

/// Which kind of quantity a string was supposed to hold (used to word [`UnitError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A `tc` data rate ([`parse_rate_bps`]).
    Rate,
    /// A `tc` size ([`parse_size_bytes`]).
    Size,
    /// A scenario-file duration ([`parse_time`]).
    Duration,
    /// A `tc` time, bare numbers in microseconds ([`parse_tc_time_us`]).
    TcTime,
    /// An 802.11b PHY rate ([`parse_phy_rate`]).
    PhyRate,
    /// An OFDM (802.11a/g, and the basic rates of an 802.11n cell) rate ([`parse_ofdm_rate`]).
    OfdmRate,
}

/// What was wrong with the string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitErrorKind {
    /// Nothing but whitespace.
    Empty,
    /// No number where one was expected (or a malformed number such as `"1.2.3"`).
    NotANumber,
    /// The suffix after the number is not a unit of this quantity (payload: the suffix as written).
    UnknownUnit(String),
    /// A bare number where a unit is required (scenario durations).
    MissingUnit,
    /// A leading minus sign.
    Negative,
    /// Zero where only positive values make sense (rates).
    Zero,
    /// Does not fit a `u64` of the base unit.
    TooLarge,
    /// Not a whole number of the base unit (bit/s, byte or nanosecond).
    Fractional,
    /// A `tc` rate given as a percentage of the link speed, which is not known here.
    Percent,
    /// A well-formed rate that is not one of the four 802.11b rates (or of the eight OFDM rates,
    /// for [`Quantity::OfdmRate`]).
    NotAPhyRate,
}

/// Why a quantity string was rejected. `Display` gives a complete, user-facing sentence that
/// quotes the input, says what was wrong and what would be accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The string as given.
    pub input: String,
    pub quantity: Quantity,
    pub kind: UnitErrorKind,
}

impl UnitError {
    fn new(input: &str, quantity: Quantity, kind: UnitErrorKind) -> UnitError {
        UnitError { input: input.to_string(), quantity, kind }
    }
}

const RATE_UNITS_HELP: &str = "bit, kbit, mbit, gbit, tbit, bps, kbps, mbps, gbps, tbps (bytes/s!), \
     or kibit, mibit, gibit, tibit, kibps, mibps, gibps, tibps (e.g. \"6mbit\")";
const SIZE_UNITS_HELP: &str = "b, k/kb (x1024), m/mb, g/gb (bytes), or kbit, mbit, gbit (e.g. \"1514\" or \"15k\")";
const DURATION_UNITS_HELP: &str =
    "s, sec, secs, ms, msec, msecs, us, usec, usecs, ns, min, h (e.g. \"10s\", \"200ms\" or \"10min\")";
const TC_TIME_UNITS_HELP: &str = "s, sec, secs, ms, msec, msecs, us, usec, usecs, ns, \
     or no unit for microseconds (e.g. \"5ms\")";
const PHY_RATES_HELP: &str = "\"1Mbps\", \"2Mbps\", \"5.5Mbps\" or \"11Mbps\"";
const OFDM_RATES_HELP: &str = "\"6Mbps\", \"9Mbps\", \"12Mbps\", \"18Mbps\", \"24Mbps\", \"36Mbps\", \
     \"48Mbps\" or \"54Mbps\"";

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use UnitErrorKind as K;
        let noun = match self.quantity {
            Quantity::Rate => "rate",
            Quantity::Size => "size",
            Quantity::Duration | Quantity::TcTime => "duration",
            Quantity::PhyRate => "802.11b rate",
            Quantity::OfdmRate => "OFDM rate",
        };
        let units = match self.quantity {
            Quantity::Rate => RATE_UNITS_HELP,
            Quantity::Size => SIZE_UNITS_HELP,
            Quantity::Duration => DURATION_UNITS_HELP,
            Quantity::TcTime => TC_TIME_UNITS_HELP,
            Quantity::PhyRate => PHY_RATES_HELP,
            Quantity::OfdmRate => OFDM_RATES_HELP,
        };
        let input = &self.input;
        match &self.kind {
            K::Empty => write!(f, "empty string is not a {noun}; expected a number with {units}"),
            K::NotANumber => {
                write!(f, "{input:?} is not a {noun}: expected a number followed by {units}")
            }
            K::UnknownUnit(u) => match self.quantity {
                Quantity::PhyRate | Quantity::OfdmRate => {
                    write!(
                        f,
                        "{input:?} is not an {noun}: unknown unit {u:?}; \
                             expected {units}"
                    )
                }
                _ => write!(f, "{input:?} is not a {noun}: unknown unit {u:?}; expected a number with {units}"),
            },
            K::MissingUnit => write!(
                f,
                "{input:?} has no unit, which is ambiguous for a duration; write it with a unit, \
                 e.g. \"10s\" or \"200ms\""
            ),
            K::Negative => match self.quantity {
                Quantity::Duration | Quantity::TcTime => {
                    write!(f, "{input:?} is not a valid duration: durations must be positive or zero")
                }
                Quantity::Size => {
                    write!(f, "{input:?} is not a valid size: sizes must be positive or zero")
                }
                _ => write!(f, "{input:?} is not a valid {noun}: rates must be positive"),
            },
            K::Zero => write!(f, "{input:?} is not a valid {noun}: it must be greater than zero"),
            K::TooLarge => write!(
                f,
                "{input:?} is too large a {noun}: at most {} {}",
                u64::MAX,
                match self.quantity {
                    Quantity::Rate | Quantity::PhyRate | Quantity::OfdmRate => "bit/s",
                    Quantity::Size => "bytes",
                    Quantity::Duration | Quantity::TcTime => "ns (about 584 years)",
                }
            ),
            K::Fractional => match self.quantity {
                Quantity::Rate | Quantity::PhyRate | Quantity::OfdmRate => write!(
                    f,
                    "{input:?} is not a whole number of bits per second; use a smaller unit or \
                     fewer decimals"
                ),
                Quantity::Size => {
                    write!(f, "{input:?} is not a whole number of bytes; use a smaller unit or fewer decimals")
                }
                Quantity::Duration | Quantity::TcTime => write!(
                    f,
                    "{input:?} is more precise than a nanosecond, the resolution of the clock; \
                     use fewer decimals"
                ),
            },
            K::Percent => write!(
                f,
                "{input:?}: a rate as a percentage of the link speed is not supported here; \
                 give an absolute rate with {units}"
            ),
            K::NotAPhyRate => write!(f, "{input:?} is not an {noun}: expected one of {units}"),
        }
    }
}

impl std::error::Error for UnitError {}

/// A non-negative decimal number split into its integer part and its fraction digits
/// (trailing zeros removed): value = int + frac / 10^frac_digits.
struct Decimal {
    int: u128,
    frac: u128,
    frac_digits: u32,
}

/// The result of splitting "  -12.5 kbit " into sign, number and unit.
struct Split<'a> {
    negative: bool,
    number: &'a str,
    unit: &'a str,
}

fn split(s: &str) -> Split<'_> {
    let t = s.trim();
    let (negative, rest) = if let Some(r) = t.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = t.strip_prefix('+') {
        (false, r)
    } else {
        (false, t)
    };
    let mut end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    // An exponent, as C's strtod (which iproute2 reads numbers with) takes it: `e` or `E`, an
    // optional sign, at least one digit.
    let tail = &rest.as_bytes()[end..];
    if end > 0 && matches!(tail.first(), Some(b'e' | b'E')) {
        let signed = usize::from(matches!(tail.get(1), Some(b'+' | b'-')));
        let digits = tail[1 + signed..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 {
            end += 1 + signed + digits;
        }
    }
    Split { negative, number: &rest[..end], unit: rest[end..].trim_start() }
}

/// `number` with its exponent (if any) applied by moving the decimal point: "1.5e+03" is
/// "1500", "25e-1" is "2.5". Exponents beyond ±64 give a number too large or with too many
/// fraction digits for any quantity here, written so that [`parse_decimal`] reports it so.
fn without_exponent(number: &str) -> std::borrow::Cow<'_, str> {
    let Some(at) = number.find(['e', 'E']) else {
        return std::borrow::Cow::Borrowed(number);
    };
    let (mantissa, exp) = (&number[..at], &number[at + 1..]);
    if mantissa.matches('.').count() > 1 {
        return std::borrow::Cow::Borrowed(".."); // malformed, as without an exponent
    }
    // `split` leaves only digits after the sign; a longer run than i64 holds is out of range.
    let exp = match exp.parse::<i64>() {
        Ok(e) => e.clamp(-64, 64),
        Err(_) if exp.starts_with('-') => -64,
        Err(_) => 64,
    };
    let (int_s, frac_s) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int_s}{frac_s}");
    let point = int_s.len() as i64 + exp;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
    };
    std::borrow::Cow::Owned(text)
}

/// Reads digits with at most one '.' and an optional exponent; `None` if malformed. `Err(())`
/// on integer-part overflow.
fn parse_decimal(number: &str) -> Option<Result<Decimal, ()>> {
    let number = &*without_exponent(number);
    if number.is_empty() || number.bytes().filter(|&b| b == b'.').count() > 1 {
        return None;
    }
    let (int_s, frac_s) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int_s.is_empty() && frac_s.is_empty() {
        return None;
    }
    let mut int: u128 = 0;
    for b in int_s.bytes() {
        match int.checked_mul(10).and_then(|v| v.checked_add(u128::from(b - b'0'))) {
            Some(v) => int = v,
            None => return Some(Err(())),
        }
    }
    let frac_s = frac_s.trim_end_matches('0');
    // More than 38 significant fraction digits cannot come out whole for any multiplier used
    // here (all are below 10^13): report it as fractional via an impossible marker.
    if frac_s.len() > 38 {
        return Some(Ok(Decimal { int, frac: 1, frac_digits: u32::MAX }));
    }
    let mut frac: u128 = 0;
    for b in frac_s.bytes() {
        frac = frac * 10 + u128::from(b - b'0');
    }
    Some(Ok(Decimal { int, frac, frac_digits: frac_s.len() as u32 }))
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Exact `value * mult` as a `u64`.
enum Scaled {
    Ok(u64),
    TooLarge,
    Fractional,
}

fn scale(d: &Decimal, mult: u64) -> Scaled {
    let mult = u128::from(mult);
    let Some(int_part) = d.int.checked_mul(mult) else {
        return Scaled::TooLarge;
    };
    let frac_part = if d.frac == 0 {
        0
    } else {
        if d.frac_digits > 38 {
            return Scaled::Fractional;
        }
        let den = 10u128.pow(d.frac_digits);
        let g = gcd(den, mult);
        let need = den / g;
        let (whole, rest) = (d.frac / need, d.frac % need);
        if rest != 0 {
            return Scaled::Fractional;
        }
        // frac < den, so whole * (mult / g) < mult: no overflow.
        whole * (mult / g)
    };
    match int_part.checked_add(frac_part).map(u64::try_from) {
        Some(Ok(v)) => Scaled::Ok(v),
        _ => Scaled::TooLarge,
    }
}

/// Common driver: split, look the unit up, scale exactly.
fn parse_with_units(s: &str, quantity: Quantity, unit_mult: impl Fn(&str) -> Option<u64>) -> Result<u64, UnitError> {
    let err = |kind| Err(UnitError::new(s, quantity, kind));
    if s.trim().is_empty() {
        return err(UnitErrorKind::Empty);
    }
    let sp = split(s);
    let Some(dec) = parse_decimal(sp.number) else {
        return err(UnitErrorKind::NotANumber);
    };
    let unit = sp.unit.to_ascii_lowercase();
    if quantity == Quantity::Rate && unit == "%" {
        return err(UnitErrorKind::Percent);
    }
    let Some(mult) = unit_mult(&unit) else {
        if unit.is_empty() {
            return err(UnitErrorKind::MissingUnit);
        }
        return err(UnitErrorKind::UnknownUnit(sp.unit.to_string()));
    };
    if sp.negative {
        return err(UnitErrorKind::Negative);
    }
    let Ok(dec) = dec else {
        return err(UnitErrorKind::TooLarge);
    };
    match scale(&dec, mult) {
        Scaled::Ok(v) => Ok(v),
        Scaled::TooLarge => err(UnitErrorKind::TooLarge),
        Scaled::Fractional => err(UnitErrorKind::Fractional),
    }
}

fn rate_multiplier(unit: &str) -> Option<u64> {
    const K: u64 = 1_000;
    const KI: u64 = 1 << 10;
    Some(match unit {
        "" | "bit" => 1,
        "kbit" => K,
        "mbit" => K * K,
        "gbit" => K * K * K,
        "tbit" => K * K * K * K,
        "kibit" => KI,
        "mibit" => KI * KI,
        "gibit" => KI * KI * KI,
        "tibit" => KI * KI * KI * KI,
        "bps" => 8,
        "kbps" => 8 * K,
        "mbps" => 8 * K * K,
        "gbps" => 8 * K * K * K,
        "tbps" => 8 * K * K * K * K,
        "kibps" => 8 * KI,
        "mibps" => 8 * KI * KI,
        "gibps" => 8 * KI * KI * KI,
        "tibps" => 8 * KI * KI * KI * KI,
        _ => return None,
    })
}

/// A `tc` rate in bits per second.
///
/// Rules of iproute2 (`get_rate`): the suffix is case-insensitive; a bare number or `bit` is
/// bit/s; `kbit`, `mbit`, `gbit`, `tbit` are decimal multiples; `kibit`, `mibit`, ... binary ones;
/// **`bps` means bytes per second** (so `"4mbps"` is 32 000 000 bit/s, `"4mbit"` 4 000 000).
/// Decimals are exact (`"5.5mbit"` = 5 500 000). Rejected: negative, zero, fractional bit/s
/// (`"0.5bit"`), more than `u64::MAX` bit/s, and percentages (`"30%"`, which need a link speed).
pub fn parse_rate_bps(s: &str) -> Result<u64, UnitError> {
    let v = parse_with_units(s, Quantity::Rate, rate_multiplier)?;
    if v == 0 {
        return Err(UnitError::new(s, Quantity::Rate, UnitErrorKind::Zero));
    }
    Ok(v)
}

fn size_multiplier(unit: &str) -> Option<u64> {
    Some(match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "kbit" => 1 << 7,
        "mbit" => 1 << 17,
        "gbit" => 1 << 27,
        _ => return None,
    })
}

/// A `tc` size in bytes (`burst`, `limit`, `mtu`, `quantum`, ...).
///
/// Rules of iproute2 (`get_size`), case-insensitive: a bare number or `b` is bytes; `k`/`kb`,
/// `m`/`mb`, `g`/`gb` are binary multiples of bytes (`"15k"` = 15 360); `kbit`, `mbit`, `gbit`
/// are binary multiples of bits converted to bytes (x128, x131 072, x2^27). Zero is accepted
/// (callers check their own ranges); negative and fractional byte counts are rejected.
/// The legacy `/cell` suffix of `burst`/`mtu` is not handled here.
pub fn parse_size_bytes(s: &str) -> Result<u64, UnitError> {
    parse_with_units(s, Quantity::Size, size_multiplier)
}

fn time_multiplier(unit: &str) -> Option<u64> {
    Some(match unit {
        "s" | "sec" | "secs" => 1_000_000_000,
        "ms" | "msec" | "msecs" => 1_000_000,
        "us" | "usec" | "usecs" => 1_000,
        "ns" | "nsec" | "nsecs" => 1,
        _ => return None,
    })
}

/// A duration in a scenario file, e.g. `"10s"`, `"200ms"`, `"0.1ms"`, `"102.4ms"`.
///
/// Units (case-insensitive): `s`/`sec`/`secs`, `ms`/`msec`/`msecs`, `us`/`usec`/`usecs`,
/// `ns`/`nsec`/`nsecs`, and for long runs `min`/`mins` and `h`/`hour`/`hours`. A bare number is rejected because it is ambiguous (`tc` reads it as
/// microseconds, people often mean seconds). Zero is accepted; negative values and values
/// finer than one nanosecond (`"0.5ns"`) are rejected. No upper bound other than `u64` ns;
/// the scenario parser applies `Nanos::MAX_SCENARIO`.
pub fn parse_time(s: &str) -> Result<Nanos, UnitError> {
    parse_with_units(s, Quantity::Duration, |u| match u {
        // Minutes and hours for long runs ("10min", "1h"); not in tc's times, which iproute2's
        // get_time reads in seconds at most. "m" alone is refused: minutes or metres?
        "min" | "mins" => Some(60_000_000_000),
        "h" | "hour" | "hours" => Some(3_600_000_000_000),
        _ => time_multiplier(u),
    })
    .map(Nanos)
}

/// A `tc` time (`latency`, `target`, `interval`, ...): like [`parse_time`], but a bare number
/// is microseconds, as iproute2's `get_time` reads it (`"5000"` = 5 ms).
pub fn parse_tc_time_us(s: &str) -> Result<Nanos, UnitError> {
    parse_with_units(s, Quantity::TcTime, |u| if u.is_empty() { Some(1_000) } else { time_multiplier(u) }).map(Nanos)
}

/// A PHY rate in Mb/s as a whole number of 100 kb/s (how `DsssRate` counts); a bare number is
/// Mb/s. Fractional, negative or huge values are "not one of the rates" (`NotAPhyRate`).
fn phy_rate_hundred_kbps(s: &str, q: Quantity) -> Result<u64, UnitError> {
    parse_with_units(s, q, |u| match u {
        "" | "m" | "mbps" | "mbit" | "mb/s" | "mbit/s" => Some(10),
        _ => None,
    })
    .map_err(|e| match e.kind {
        UnitErrorKind::Fractional | UnitErrorKind::TooLarge | UnitErrorKind::Negative => {
            UnitError::new(s, q, UnitErrorKind::NotAPhyRate)
        }
        _ => e,
    })
}

/// One of the four 802.11b rates: `"1Mbps"`, `"2Mbps"`, `"5.5Mbps"`, `"11Mbps"`.
///
/// **Here `Mbps` means megabits per second**, the 802.11 convention, unlike `tc` where `mbps`
/// is megabytes per second ([`parse_rate_bps`]). Accepted spellings, case-insensitive:
/// `Mbps`, `Mbit`, `Mb/s`, `Mbit/s`, `M`, or a bare number of Mb/s (`"11"`); `"5.50Mbps"` is
/// 5.5 Mb/s. Anything else is an error listing the four valid values.
pub fn parse_phy_rate(s: &str) -> Result<DsssRate, UnitError> {
    let q = Quantity::PhyRate;
    let hundred_kbps = phy_rate_hundred_kbps(s, q)?;
    DsssRate::ALL
        .into_iter()
        .find(|r| r.hundred_kbps() == hundred_kbps)
        .ok_or_else(|| UnitError::new(s, q, UnitErrorKind::NotAPhyRate))
}

/// One of the eight OFDM rates (6, 9, 12, 18, 24, 36, 48, 54 Mb/s), in the same spellings as
/// [`parse_phy_rate`] (`"6Mbps"`, `"6Mbit"`, `"6"`, ...; `Mbps` is megabits per second).
pub fn parse_ofdm_rate(s: &str) -> Result<OfdmRate, UnitError> {
    let q = Quantity::OfdmRate;
    let hundred_kbps = phy_rate_hundred_kbps(s, q)?;
    OfdmRate::ALL
        .into_iter()
        .find(|r| u64::from(r.mbps()) * 10 == hundred_kbps)
        .ok_or_else(|| UnitError::new(s, q, UnitErrorKind::NotAPhyRate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rates_follow_tc() {
        let cases: &[(&str, u64)] = &[
            // Worked examples of reference 0.2.
            ("4mbit", 4_000_000),
            ("4Mbit", 4_000_000),
            ("4mbps", 32_000_000),
            ("4MBPS", 32_000_000),
            ("1000", 1_000),
            ("1000bit", 1_000),
            ("1kbit", 1_000),
            ("1gbit", 1_000_000_000),
            ("1tbit", 1_000_000_000_000),
            ("1kibit", 1_024),
            ("1mibit", 1_048_576),
            ("1gibit", 1 << 30),
            ("1tibit", 1 << 40),
            ("1bps", 8),
            ("1kbps", 8_000),
            ("1gbps", 8_000_000_000),
            ("1tbps", 8_000_000_000_000),
            ("1kibps", 8_192),
            ("1mibps", 8 << 20),
            ("1gibps", 8 << 30),
            ("1tibps", 8 << 40),
            ("5.5mbit", 5_500_000),
            ("0.5kbit", 500),
            ("100mbit", 100_000_000),
            ("6Mbit", 6_000_000),
            (".5kbit", 500),
            ("5.mbit", 5_000_000),
            ("0.001kbit", 1),
            ("2.000000000000000000000000000000000000000000000mbit", 2_000_000),
            (" 10 mbit ", 10_000_000),
            ("+3kbit", 3_000),
            ("1.5kibit", 1_536),
            ("0.125bps", 1),
            ("18446744073709551615", u64::MAX),
            // Exponents, as strtod reads them (a sweep's 1e+03 written by Python).
            ("1e3kbit", 1_000_000),
            ("1E+03kbit", 1_000_000),
            ("2.5e-1kbit", 250),
            (".5e1mbit", 5_000_000),
            ("125e-3bps", 1),
            ("1e6", 1_000_000),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_rate_bps(s), Ok(want), "{s}");
        }
    }

    #[test]
    fn exponents_move_the_decimal_point() {
        assert_eq!(parse_time("1e+03s"), Ok(Nanos::from_secs(1000)));
        assert_eq!(parse_time("1.5e-3s"), Ok(Nanos::from_us(1500)));
        assert_eq!(parse_size_bytes("1.5e1k"), Ok(15 * 1024));
        // Too many fraction digits for a whole value, too large, malformed, or a unit that only
        // starts with an `e`: errors, never a panic.
        assert!(parse_time("1e-20s").is_err());
        assert!(parse_rate_bps("1e99999999999999999999999bit").is_err());
        assert!(parse_rate_bps("1.2.3e4bit").is_err());
        assert!(parse_rate_bps("5ebit").is_err());
        assert_eq!(without_exponent("25e-1"), "2.5");
        assert_eq!(without_exponent("25"), "25");
    }

    #[test]
    fn bad_rates_say_why() {
        use UnitErrorKind as K;
        let cases: &[(&str, UnitErrorKind)] = &[
            ("", K::Empty),
            ("  ", K::Empty),
            ("mbit", K::NotANumber),
            ("1.2.3mbit", K::NotANumber),
            (".mbit", K::NotANumber),
            ("inf", K::NotANumber),
            ("NaN", K::NotANumber),
            ("6Mbt", K::UnknownUnit("Mbt".into())),
            ("6 mbits", K::UnknownUnit("mbits".into())),
            ("1e", K::UnknownUnit("e".into())),
            ("1e+", K::UnknownUnit("e+".into())),
            ("-1mbit", K::Negative),
            ("0", K::Zero),
            ("0.0mbit", K::Zero),
            ("0.5bit", K::Fractional),
            ("0.1bps", K::Fractional),
            ("1.0000000001kbit", K::Fractional),
            ("18446744073709551616", K::TooLarge),
            ("99999999999999999999999999999999999999999999tbps", K::TooLarge),
            ("30%", K::Percent),
        ];
        for (s, want) in cases {
            let e = parse_rate_bps(s).unwrap_err();
            assert_eq!(&e.kind, want, "{s}");
            assert_eq!(e.input, *s);
        }
        assert_eq!(
            parse_rate_bps("6Mbt").unwrap_err().to_string(),
            "\"6Mbt\" is not a rate: unknown unit \"Mbt\"; expected a number with bit, kbit, \
             mbit, gbit, tbit, bps, kbps, mbps, gbps, tbps (bytes/s!), or kibit, mibit, gibit, \
             tibit, kibps, mibps, gibps, tibps (e.g. \"6mbit\")"
        );
        assert!(parse_rate_bps("-1mbit").unwrap_err().to_string().contains("must be positive"));
        assert!(parse_rate_bps("0bit").unwrap_err().to_string().contains("greater than zero"));
    }

    #[test]
    fn sizes_follow_tc() {
        let cases: &[(&str, u64)] = &[
            ("15k", 15_360),
            ("15K", 15_360),
            ("15kb", 15_360),
            ("1514", 1_514),
            ("1514b", 1_514),
            ("0", 0),
            ("1m", 1 << 20),
            ("1mb", 1 << 20),
            ("1g", 1 << 30),
            ("1GB", 1 << 30),
            ("1kbit", 128),
            ("1mbit", 131_072),
            ("1gbit", 1 << 27),
            ("1.5k", 1_536),
            ("0.5kbit", 64),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_size_bytes(s), Ok(want), "{s}");
        }
        use UnitErrorKind as K;
        let bad: &[(&str, UnitErrorKind)] = &[
            ("1.5b", K::Fractional),
            ("0.001k", K::Fractional),
            ("-1k", K::Negative),
            ("1kib", K::UnknownUnit("kib".into())),
            ("k", K::NotANumber),
            ("99999999999g", K::TooLarge),
        ];
        for (s, want) in bad {
            assert_eq!(&parse_size_bytes(s).unwrap_err().kind, want, "{s}");
        }
    }

    #[test]
    fn scenario_durations_are_exact() {
        let cases: &[(&str, u64)] = &[
            ("10s", 10_000_000_000),
            ("10sec", 10_000_000_000),
            ("10secs", 10_000_000_000),
            ("200ms", 200_000_000),
            ("200msec", 200_000_000),
            ("200msecs", 200_000_000),
            ("50us", 50_000),
            ("50usec", 50_000),
            ("50usecs", 50_000),
            ("7ns", 7),
            ("7nsec", 7),
            ("0s", 0),
            ("0.1ms", 100_000),
            ("102.4ms", 102_400_000),
            ("0.000000001s", 1),
            ("1.5us", 1_500),
            ("60 s", 60_000_000_000),
            ("60S", 60_000_000_000),
            ("18446744073709551615ns", u64::MAX),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_time(s), Ok(Nanos(want)), "{s}");
        }
    }

    #[test]
    fn bad_scenario_durations_say_why() {
        use UnitErrorKind as K;
        let cases: &[(&str, UnitErrorKind)] = &[
            ("10", K::MissingUnit),
            ("0.5", K::MissingUnit),
            ("-1s", K::Negative),
            ("0.5ns", K::Fractional),
            ("0.0000000001s", K::Fractional),
            ("1.0000000000000000000000000000000000000000000001s", K::Fractional),
            ("10 m", K::UnknownUnit("m".into())),
            ("10mn", K::UnknownUnit("mn".into())),
            ("10m", K::UnknownUnit("m".into())),
            ("s", K::NotANumber),
            ("99999999999s", K::TooLarge),
        ];
        for (s, want) in cases {
            assert_eq!(&parse_time(s).unwrap_err().kind, want, "{s}");
        }
        let bare = parse_time("10").unwrap_err().to_string();
        assert!(bare.contains("\"10s\" or \"200ms\""), "{bare}");
        let neg = parse_time("-1s").unwrap_err().to_string();
        assert!(neg.contains("durations must be positive or zero"), "{neg}");
        let fine = parse_time("0.5ns").unwrap_err().to_string();
        assert!(fine.contains("more precise than a nanosecond"), "{fine}");
    }

    #[test]
    fn tc_times_default_to_microseconds() {
        let cases: &[(&str, u64)] = &[
            ("5000", 5_000_000),
            ("5ms", 5_000_000),
            ("100ms", 100_000_000),
            ("1s", 1_000_000_000),
            ("1secs", 1_000_000_000),
            ("20usec", 20_000),
            ("0.5", 500),
            ("0", 0),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_tc_time_us(s), Ok(Nanos(want)), "{s}");
        }
        assert_eq!(parse_tc_time_us("-5").unwrap_err().kind, UnitErrorKind::Negative);
        assert_eq!(parse_tc_time_us("0.0001").unwrap_err().kind, UnitErrorKind::Fractional);
    }

    #[test]
    fn phy_rates_are_megabits() {
        use DsssRate::*;
        let cases: &[(&str, DsssRate)] = &[
            ("1Mbps", R1),
            ("2Mbps", R2),
            ("5.5Mbps", R5_5),
            ("11Mbps", R11),
            ("11mbps", R11),
            ("11MBPS", R11),
            ("11Mbit", R11),
            ("11mb/s", R11),
            ("11Mb/s", R11),
            ("11Mbit/s", R11),
            ("11", R11),
            ("5.5", R5_5),
            ("5.50Mbps", R5_5),
            ("1.0", R1),
            ("2 Mbps", R2),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_phy_rate(s), Ok(want), "{s}");
        }
        for r in DsssRate::ALL {
            assert_eq!(parse_phy_rate(r.label()), Ok(r));
        }
        for s in ["12Mbps", "0", "5.25Mbps", "-1Mbps", "54Mbps", "1.00001", "99999999999999999999"] {
            let e = parse_phy_rate(s).unwrap_err();
            assert_eq!(e.kind, UnitErrorKind::NotAPhyRate, "{s}");
            let msg = e.to_string();
            assert!(msg.contains("\"1Mbps\", \"2Mbps\", \"5.5Mbps\" or \"11Mbps\""), "{msg}");
        }
        let e = parse_phy_rate("11kbps").unwrap_err();
        assert_eq!(e.kind, UnitErrorKind::UnknownUnit("kbps".into()));
        assert!(e.to_string().contains("\"5.5Mbps\""));
        assert_eq!(parse_phy_rate("fast").unwrap_err().kind, UnitErrorKind::NotANumber);
    }

    #[test]
    fn ofdm_rates_are_megabits() {
        use OfdmRate::*;
        for (s, want) in [
            ("6Mbps", R6),
            ("9mbit", R9),
            ("12", R12),
            ("18 Mb/s", R18),
            ("24.0", R24),
            ("36M", R36),
            ("48Mbit/s", R48),
            ("54MBPS", R54),
        ] {
            assert_eq!(parse_ofdm_rate(s), Ok(want), "{s}");
        }
        for s in ["1Mbps", "11Mbps", "5.5Mbps", "0", "-6Mbps", "6.5", "99999999999999999999"] {
            let e = parse_ofdm_rate(s).unwrap_err();
            assert_eq!(e.kind, UnitErrorKind::NotAPhyRate, "{s}");
            let msg = e.to_string();
            assert!(msg.contains("is not an OFDM rate: expected one of \"6Mbps\", \"9Mbps\""), "{msg}");
            assert!(msg.contains("\"48Mbps\" or \"54Mbps\""), "{msg}");
        }
        let e = parse_ofdm_rate("6kbps").unwrap_err();
        assert_eq!(e.kind, UnitErrorKind::UnknownUnit("kbps".into()));
        assert!(e.to_string().contains("not an OFDM rate: unknown unit"), "{e}");
        // The 802.11b wording is unchanged.
        assert!(parse_phy_rate("54Mbps").unwrap_err().to_string().contains("is not an 802.11b rate"));
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(s in any::<String>()) {
            let _ = parse_ofdm_rate(&s).map_err(|e| e.to_string());
            let _ = parse_rate_bps(&s).map_err(|e| e.to_string());
            let _ = parse_size_bytes(&s).map_err(|e| e.to_string());
            let _ = parse_time(&s).map_err(|e| e.to_string());
            let _ = parse_tc_time_us(&s).map_err(|e| e.to_string());
            let _ = parse_phy_rate(&s).map_err(|e| e.to_string());
        }

        #[test]
        fn number_like_strings_never_panic(
            s in "[+-]?[0-9]{0,45}(\\.[0-9]{0,45}){0,2}([eE][+-]?[0-9]{0,25})?[ ]?(bit|kbit|tibps|k|gb|s|ms|ns|us|Mbps|%|x|e)?"
        ) {
            let _ = parse_rate_bps(&s).map_err(|e| e.to_string());
            let _ = parse_size_bytes(&s).map_err(|e| e.to_string());
            let _ = parse_time(&s).map_err(|e| e.to_string());
            let _ = parse_tc_time_us(&s).map_err(|e| e.to_string());
            let _ = parse_phy_rate(&s).map_err(|e| e.to_string());
        }

        #[test]
        fn whole_numbers_scale_exactly(n in 0u64..1_000_000_000, frac in 0u32..1000) {
            let s = format!("{n}.{frac:03}ms");
            prop_assert_eq!(
                parse_time(&s),
                Ok(Nanos(n * 1_000_000 + u64::from(frac) * 1_000))
            );
        }
    }
}
