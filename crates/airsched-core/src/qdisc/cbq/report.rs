//! `tc -s qdisc show` / `tc -s class show` for cbq (iproute2 `cbq_print_opt` without `-d`,
//! `cbq_print_xstats`).

use super::{Cbq, Class, NPRIO, PASTPERFECT};
use crate::qdisc::{ClassReport, Handle, Qdisc, QdiscReport, QdiscStats};
use crate::tc::opts::fmt_g;
use crate::tc::opts::format_rate_bytes;

impl Cbq {
    /// Counters of each class over itself and the classes that share into it (what its "Sent"
    /// covers in the kernel).
    fn class_stats(&self) -> Vec<QdiscStats> {
        let mut agg = vec![QdiscStats::default(); self.classes.len()];
        for (i, c) in self.classes.iter().enumerate() {
            let mut s = Some(i);
            while let Some(si) = s {
                let a = &mut agg[si];
                a.offered_packets += c.own.offered_packets;
                a.sent_bytes += c.own.sent_bytes;
                a.sent_packets += c.own.sent_packets;
                a.drops += c.own.drops;
                a.qlen += c.own.qlen;
                a.backlog_bytes += c.own.backlog_bytes;
                s = self.classes[si].share;
            }
        }
        for (a, c) in agg.iter_mut().zip(&self.classes) {
            a.overlimits = c.overlimits;
        }
        agg
    }

    /// `cbq_print_opt` without -d: `rate 4Mbit (bounded,isolated) prio 1`.
    fn options_text(&self, c: &Class) -> String {
        let mut s = format!("rate {} ", format_rate_bytes(u64::from(c.rtab.rate)));
        let flags: Vec<&str> = [(c.borrow.is_none(), "bounded"), (c.share.is_none(), "isolated")]
            .iter()
            .filter(|f| f.0)
            .map(|f| f.1)
            .collect();
        if !flags.is_empty() {
            s += &format!("({}) ", flags.join(","));
        }
        if c.priority as usize + 1 == NPRIO {
            s += "prio no-transmit";
        } else {
            s += &format!("prio {}", c.priority + 1);
        }
        s
    }

    /// `tc_cbq_xstats`: borrows, overactions, avgidle (scaled ticks), undertime (ticks from the
    /// last dequeue, 0 if under limit).
    fn xstats(&self, c: &Class) -> (Vec<(String, i64)>, String) {
        let undertime = if c.undertime == PASTPERFECT { 0 } else { c.undertime - self.now };
        let (b, o) = (c.borrows as u32, c.overactions as u32);
        let pairs = vec![
            ("borrows".to_string(), i64::from(b)),
            ("overactions".to_string(), i64::from(o)),
            ("avgidle".to_string(), c.avgidle),
            ("undertime".to_string(), undertime),
        ];
        let text = format!(
            "  borrowed {b} overactions {o} avgidle {} undertime {}",
            fmt_g(c.avgidle as f64, 6),
            fmt_g(undertime as f64, 6)
        );
        (pairs, text)
    }

    /// This qdisc's report, its classes' (the link class first), then its children's.
    pub(super) fn push_reports(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let agg = self.class_stats();
        let classes = self
            .classes
            .iter()
            .zip(&agg)
            .map(|(c, s)| {
                let (xstats, xstats_text) = self.xstats(c);
                ClassReport {
                    kind: "cbq",
                    classid: c.classid,
                    parent: match c.tparent {
                        None => Handle::ROOT,
                        Some(p) => self.classes[p].classid,
                    },
                    leaf: (c.q_handle != Handle::UNSPEC).then_some(c.q_handle),
                    options: self.options_text(c),
                    stats: *s,
                    xstats,
                    xstats_text,
                }
            })
            .collect();
        let link = &self.classes[0];
        let (xstats, xstats_text) = self.xstats(link);
        out.push(QdiscReport {
            kind: "cbq",
            handle: self.handle,
            parent,
            options: self.options_text(link),
            stats: self.stats,
            xstats,
            xstats_text,
            classes,
        });
        for c in &self.classes {
            c.q.report(c.classid, out);
        }
    }
}
