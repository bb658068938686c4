//! `tc [-s] qdisc show` and `tc [-s] class show` text, as iproute2 prints it (`tc_qdisc.c`
//! `print_qdisc`, `tc_class.c` `print_class`, `tc_util.c` `print_tcstats2_attr`), and the
//! number formats disciplines use for their option text (`sprint_rate`, `sprint_size`,
//! `sprint_time`). Plus an indented tree for `airsched tc check`.
//!
//! The lines are those of `tc show dev DEV`, which do not repeat the device name. A qdisc's
//! line is `qdisc KIND MAJOR: root refcnt 2 OPTIONS` (the root qdisc's reference count is 2 on
//! current kernels; other qdiscs have 1, which tc does not print) or `qdisc KIND MAJOR: parent
//! CLASSID OPTIONS`; with `-s` the generic counters follow (` Sent ... (dropped ..., overlimits
//! ... requeues ...) ` and ` backlog ...b ...p requeues ...`; there is no `rate` line, rate
//! estimators are not modelled), then the discipline's `xstats_text` and a newline if it is not
//! empty. `xstats_text` is what the discipline's iproute2 `print_xstats` prints, verbatim,
//! without the newline tc adds after it (HTB's ends with its own newline, which gives the empty
//! line between HTB classes in `tc -s class show`).

use crate::qdisc::{ClassReport, Handle, QdiscReport, QdiscStats};

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

/// A class id as tc prints it (`print_tc_classid`): `root`, `none`, `:a`, `1:`, `1:10`.
pub fn classid_text(h: Handle) -> String {
    if h == Handle::ROOT {
        "root".into()
    } else if h == Handle::UNSPEC {
        "none".into()
    } else if h.major() == 0 {
        format!(":{:x}", h.minor())
    } else if h.minor() == 0 {
        format!("{:x}:", h.major())
    } else {
        format!("{:x}:{:x}", h.major(), h.minor())
    }
}

fn stats_block(out: &mut String, s: &QdiscStats) {
    out.push_str(&format!(
        " Sent {} bytes {} pkt (dropped {}, overlimits {} requeues {}) \n",
        s.sent_bytes, s.sent_packets, s.drops, s.overlimits, s.requeues
    ));
    out.push_str(&format!(" backlog {} {}p requeues {}", format_size(s.backlog_bytes), s.qlen, s.requeues));
}

fn qdisc_line(r: &QdiscReport) -> String {
    let mut line = format!("qdisc {} {:x}: ", r.kind, r.handle.major());
    if r.parent == Handle::ROOT {
        line.push_str("root refcnt 2 ");
    } else if r.parent != Handle::UNSPEC {
        line.push_str(&format!("parent {} ", classid_text(r.parent)));
    }
    line.push_str(&r.options);
    line
}

fn class_line(c: &ClassReport) -> String {
    let mut line = format!("class {} ", c.kind);
    if c.classid != Handle::UNSPEC {
        line.push_str(&classid_text(c.classid));
    }
    line.push(' ');
    if c.parent == Handle::ROOT {
        line.push_str("root ");
    } else {
        line.push_str(&format!("parent {} ", classid_text(c.parent)));
    }
    if let Some(leaf) = c.leaf {
        if leaf.major() != 0 {
            line.push_str(&format!("leaf {:x}: ", leaf.major()));
        }
    }
    line.push_str(&c.options);
    line
}

/// `tc [-s] qdisc show dev DEV` for a tree's reports (root first, as `QdiscImpl::reports`
/// gives them). `dev` is not printed: tc leaves it out when the device is named.
pub fn qdisc_show(dev: &str, reports: &[QdiscReport], stats: bool) -> String {
    let _ = dev;
    let mut out = String::new();
    for r in reports {
        out.push_str(&qdisc_line(r));
        out.push('\n');
        if stats {
            stats_block(&mut out, &r.stats);
            out.push('\n');
            if !r.xstats_text.is_empty() {
                out.push_str(&r.xstats_text);
                out.push('\n');
            }
        }
    }
    out
}

/// `tc [-s] class show dev DEV`: every qdisc's classes, in report order.
pub fn class_show(dev: &str, reports: &[QdiscReport], stats: bool) -> String {
    let _ = dev;
    let mut out = String::new();
    for c in reports.iter().flat_map(|r| r.classes.iter()) {
        out.push_str(&class_line(c));
        out.push('\n');
        if stats {
            stats_block(&mut out, &c.stats);
            out.push('\n');
            if !c.xstats_text.is_empty() {
                out.push_str(&c.xstats_text);
                out.push('\n');
            }
        }
    }
    out
}

/// An indented tree of a device's qdiscs and classes, for `airsched tc check`: each qdisc,
/// under it its classes (child classes under their parent), and under each class the qdisc
/// attached to it. Lines are the `tc show` lines without statistics.
pub fn tree_text(dev: &str, reports: &[QdiscReport]) -> String {
    let mut out = format!("dev {dev}\n");
    let mut done = vec![false; reports.len()];
    let roots: Vec<usize> = (0..reports.len()).filter(|&i| reports[i].parent == Handle::ROOT).collect();
    for i in roots {
        tree_qdisc(reports, i, 1, &mut done, &mut out);
    }
    // Anything not reached from the root (should not happen): listed flat at the end.
    for i in 0..reports.len() {
        if !done[i] {
            tree_qdisc(reports, i, 1, &mut done, &mut out);
        }
    }
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn tree_qdisc(reports: &[QdiscReport], i: usize, depth: usize, done: &mut [bool], out: &mut String) {
    if done[i] || depth > 64 {
        return;
    }
    done[i] = true;
    let r = &reports[i];
    indent(out, depth);
    out.push_str(qdisc_line(r).trim_end());
    out.push('\n');
    let ids: Vec<Handle> = r.classes.iter().map(|c| c.classid).collect();
    let mut printed = vec![false; r.classes.len()];
    for (ci, c) in r.classes.iter().enumerate() {
        let top = c.parent == Handle::ROOT || c.parent == r.handle || !ids.contains(&c.parent);
        if top {
            tree_class(reports, r, ci, depth + 1, &mut printed, done, out);
        }
    }
    for ci in 0..r.classes.len() {
        if !printed[ci] {
            tree_class(reports, r, ci, depth + 1, &mut printed, done, out);
        }
    }
    // Qdiscs attached to classes the discipline does not report (implicit ones, like prio's
    // bands) hang directly under the qdisc.
    if r.handle.major() != 0 {
        for j in 0..reports.len() {
            let p = reports[j].parent;
            if !done[j] && p != Handle::ROOT && p != Handle::UNSPEC && p.major() == r.handle.major() {
                tree_qdisc(reports, j, depth + 1, done, out);
            }
        }
    }
}

fn tree_class(
    reports: &[QdiscReport],
    r: &QdiscReport,
    ci: usize,
    depth: usize,
    printed: &mut [bool],
    done: &mut [bool],
    out: &mut String,
) {
    if printed[ci] || depth > 64 {
        return;
    }
    printed[ci] = true;
    let c = &r.classes[ci];
    indent(out, depth);
    out.push_str(class_line(c).trim_end());
    out.push('\n');
    for j in 0..reports.len() {
        if !done[j] && reports[j].parent == c.classid {
            tree_qdisc(reports, j, depth + 1, done, out);
        }
    }
    for k in 0..r.classes.len() {
        if r.classes[k].parent == c.classid && k != ci {
            tree_class(reports, r, k, depth + 1, printed, done, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn classids_like_tc() {
        assert_eq!(classid_text(Handle::new(1, 0x10)), "1:10");
        assert_eq!(classid_text(Handle::new(0, 0xa)), ":a");
        assert_eq!(classid_text(Handle::UNSPEC), "none");
        assert_eq!(classid_text(Handle::ROOT), "root");
    }
}
