//! `tc [-s] qdisc show` and `tc [-s] class show` text, as iproute2 prints it (`tc_qdisc.c`
//! `print_qdisc`, `tc_class.c` `print_class`, `tc_util.c` `print_tcstats2_attr`), plus an
//! indented tree for `airsched tc check`. The number formats of the disciplines' option text
//! (`sprint_rate`, `sprint_size`, `sprint_time`) are in [`super::opts`].
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

use super::lex::Handle;
use super::opts::format_size;
use crate::qdisc::{ClassReport, QdiscReport, QdiscStats};

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
    fn classids_like_tc() {
        assert_eq!(classid_text(Handle::new(1, 0x10)), "1:10");
        assert_eq!(classid_text(Handle::new(0, 0xa)), ":a");
        assert_eq!(classid_text(Handle::UNSPEC), "none");
        assert_eq!(classid_text(Handle::ROOT), "root");
    }
}
