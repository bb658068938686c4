//! Numbers printed the way iproute2's `tc` prints them in `tc qdisc show` / `tc -s`:
//! `sprint_time` (microseconds, `%.3g` with a unit) and `sprint_size` (bytes with b/Kb/Mb/Gb),
//! as in iproute2 6.x `lib/utils.c` and `lib/json_print_math.c`.

/// C's `%.{prec}g` for a finite, non-negative value.
fn fmt_g(v: f64, prec: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{:.*e}", prec - 1, v);
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp has an exponent");
    let exp: i32 = exp.parse().expect("LowerExp exponent is an integer");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= prec as i32 {
        format!("{}e{}{:02}", trim(mantissa), if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        trim(&format!("{:.*}", (prec as i32 - 1 - exp) as usize, v))
    }
}

/// `sprint_time`: a time in microseconds, e.g. `5ms`, `100ms`, `500us`, `1.5s`.
pub(in crate::qdisc) fn tc_time(us: u32) -> String {
    let t = us as f64;
    if us >= 1_000_000 {
        format!("{}s", fmt_g(t / 1e6, 3))
    } else if us >= 1_000 {
        format!("{}ms", fmt_g(t / 1e3, 3))
    } else {
        format!("{us}us")
    }
}

/// `sprint_size`: bytes, e.g. `1514b`, `32Mb`, `15Kb`.
pub(in crate::qdisc) fn tc_size(sz: u64) -> String {
    const K: f64 = 1024.0;
    let t = sz as f64;
    for (unit, name) in [(K * K * K, "Gb"), (K * K, "Mb")] {
        if t >= unit && (unit * (t / unit).round() - t).abs() < 1024.0 {
            return format!("{}{name}", fmt_g((t / unit).round(), 6));
        }
    }
    if t >= K && (K * (t / K).round() - t).abs() < 16.0 {
        return format!("{}Kb", fmt_g((t / K).round(), 6));
    }
    format!("{sz}b")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_like_tc() {
        // The kernel reports 5 ms as 4 999 us (CoDel's 1024-ns unit); tc's %.3g shows 5ms.
        assert_eq!(tc_time(4_999), "5ms");
        assert_eq!(tc_time(99_999), "100ms");
        assert_eq!(tc_time(1_500), "1.5ms");
        assert_eq!(tc_time(999), "999us");
        assert_eq!(tc_time(2_500_000), "2.5s");
        assert_eq!(tc_time(999_999), "1e+03ms");
    }

    #[test]
    fn sizes_print_like_tc() {
        assert_eq!(tc_size(1514), "1514b");
        assert_eq!(tc_size(32 << 20), "32Mb");
        assert_eq!(tc_size(15 * 1024), "15Kb");
        assert_eq!(tc_size(1024 + 20), "1044b");
        assert_eq!(tc_size(0), "0b");
    }
}
