//! How iproute2's `tc` prints sizes, rates and times (`lib/json_print_math.c` `sprint_size`,
//! `lib/json_print.c` `print_color_rate`, `lib/utils.c` `print_time`), so that reports read like
//! `tc qdisc show`. Shared by tbf, red and prio. Printing only: nothing here feeds the clock.

/// C's `printf("%.<prec>g", x)` for finite x.
pub(in crate::qdisc) fn fmt_g(x: f64, prec: usize) -> String {
    let prec = prec.max(1);
    if x == 0.0 {
        return "0".into();
    }
    // The exponent after rounding to `prec` significant digits decides the style.
    let sci = format!("{:.*e}", prec - 1, x);
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    if exp < -4 || exp >= prec as i32 {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `sprint_size`: `15Kb`, `2Mb`, `1514b`. Binary multiples, printed only when the size is within
/// 16 bytes (Kb) or 1024 bytes (Mb, Gb) of a whole multiple.
pub(in crate::qdisc) fn sprint_size(sz: u64) -> String {
    const KILO: f64 = 1024.0;
    const MEGA: f64 = KILO * KILO;
    const GIGA: f64 = MEGA * KILO;
    let tmp = sz as f64;
    let near = |unit: f64, tol: f64| sz as f64 >= unit && (unit * (tmp / unit).round_ties_even() - tmp).abs() < tol;
    if near(GIGA, 1024.0) {
        format!("{}Gb", fmt_g((tmp / GIGA).round_ties_even(), 6))
    } else if near(MEGA, 1024.0) {
        format!("{}Mb", fmt_g((tmp / MEGA).round_ties_even(), 6))
    } else if near(KILO, 16.0) {
        format!("{}Kb", fmt_g((tmp / KILO).round_ties_even(), 6))
    } else {
        format!("{sz}b")
    }
}

/// `print_rate` (decimal units, as `tc` prints without `-iec`) of a rate in bytes per second:
/// `4Mbit`, `1500Kbit`, `125bit`.
pub(in crate::qdisc) fn sprint_rate(bytes_per_sec: u64) -> String {
    const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
    let mut rate = bytes_per_sec.saturating_mul(8);
    let mut i = 0;
    while i < UNITS.len() - 1 {
        if rate < 1000 || (!rate.is_multiple_of(1000) && rate < 1000 * 1000) {
            break;
        }
        rate /= 1000;
        i += 1;
    }
    format!("{rate}{}bit", UNITS[i])
}

/// `sprint_time` of a time in microseconds: `50ms`, `1.5s`, `800us`.
pub(in crate::qdisc) fn sprint_time_us(us: u32) -> String {
    let t = us as f64;
    if t >= 1e6 {
        format!("{}s", fmt_g(t / 1e6, 3))
    } else if t >= 1e3 {
        format!("{}ms", fmt_g(t / 1e3, 3))
    } else {
        format!("{us}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(sprint_size(15360), "15Kb");
        assert_eq!(sprint_size(1514), "1514b");
        assert_eq!(sprint_size(40360), "40360b");
        assert_eq!(sprint_size(2 * 1024 * 1024), "2Mb");
        assert_eq!(sprint_size(1_514_000), "1514000b");
        assert_eq!(sprint_rate(500_000), "4Mbit");
        assert_eq!(sprint_rate(187_500), "1500Kbit");
        assert_eq!(sprint_rate(125), "1Kbit");
        assert_eq!(sprint_rate(15), "120bit");
        assert_eq!(sprint_time_us(50_000), "50ms");
        assert_eq!(sprint_time_us(1_500_000), "1.5s");
        assert_eq!(sprint_time_us(800), "800us");
    }
}
