//! whtb — the Wireless Hierarchical Token Bucket of Garroppo, Giordano, Lucetti and Valori
//! (University of Pisa): HTB whose leaves are charged a *stretched* packet length, the real length
//! divided by the relative goodput towards the packet's destination (paper §4.4), plus the gate
//! the paper proposes in §6.3 and did not implement.
//!
//! The paper patched the HTB of Linux 2.4.24; here the stretch sits on the HTB of Linux 6.12 that
//! `htb.rs` models, so everything else (levels, borrowing, DRR per level, watchdog) is 6.12's.
//! Linux has no whtb: a real AP would need the paper's patched kernel and its channel monitor.
//! The relative goodput is what the simulator's channel monitor estimates (`QCtx::rel_goodput`).

use super::{Htb, QCtx};
use crate::qdisc::{Qdisc, REL_ONE};
use crate::tc::lex::Tok;
use crate::tc::opts::fmt_g;
use crate::tc::opts::OptParser;
use crate::time::Nanos;

/// Opportunities a gated leaf misses in a row before it may take one turn anyway. The paper
/// names the counter but gives no value; 8 keeps a station with a bad channel at one turn in nine
/// (its flows and the monitor's estimate stay alive) while the others get eight turns in a row.
pub(super) const DEFAULT_GATE_SKIP: u32 = 8;

/// The options of a whtb qdisc.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wireless {
    /// Gate threshold in 1/`REL_ONE` of relative goodput; 0 = the gate is off.
    pub(super) gate: u32,
    /// The threshold as written, in percent, for printing.
    pub(super) gate_pct: f64,
    /// Missed opportunities after which a gated leaf takes a turn; 0 = never.
    pub(super) gate_skip: u32,
}

impl Default for Wireless {
    fn default() -> Wireless {
        Wireless { gate: 0, gate_pct: 0.0, gate_skip: DEFAULT_GATE_SKIP }
    }
}

/// Paper §4.4: stretched = min(len · R_MAX / R̂, quantum), with `rel` = R̂ / R_MAX in 1/`REL_ONE`
/// read when the packet is dequeued. Never below the real length: a perfect channel charges
/// `len`, and so does a quantum smaller than the packet (the paper's cap would then charge less
/// than the real length, which no channel justifies).
pub(super) fn stretched(len: u32, rel: u32, quantum: i64) -> u32 {
    if rel >= REL_ONE {
        return len;
    }
    let s = len as u64 * REL_ONE as u64 / rel.max(1) as u64;
    s.min(quantum.max(0) as u64).max(len as u64) as u32
}

impl Wireless {
    pub(super) fn gate_on(&self) -> bool {
        self.gate > 0
    }

    /// Parse `gate PERCENT` or `gate_skip N` if `k` is one of them (whole words only: `gate` is
    /// a prefix of `gate_skip`). Returns whether `k` was one of whtb's options.
    pub(super) fn parse_option(&mut self, p: &mut OptParser<'_, '_>, k: Tok<'_>) -> bool {
        match k.text {
            "gate" => {
                if let Some(pct) = percent(p, k) {
                    self.gate_pct = pct;
                    self.gate = (pct / 100.0 * REL_ONE as f64).ceil() as u32;
                }
                true
            }
            "gate_skip" => {
                if let Some(n) = p.uint(k, 0, u32::MAX as u64) {
                    self.gate_skip = n as u32;
                }
                true
            }
            _ => false,
        }
    }

    /// What `tc qdisc show` prints after HTB's options (nothing while the gate is off).
    pub(super) fn options_text(&self) -> String {
        if self.gate_on() {
            format!(" gate {}% gate_skip {}", fmt_g(self.gate_pct, 6), self.gate_skip)
        } else {
            String::new()
        }
    }
}

/// A percentage from 0 to 100, `50` or `50%` (as tc's netem reads percentages).
fn percent(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<f64> {
    let v = p.value(k, "a percentage from 0 to 100, like 50%")?;
    let num = v.text.strip_suffix('%').unwrap_or(v.text);
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=100.0).contains(&x) => Some(x),
        Ok(x) if x.is_finite() => {
            p.error(v, format!("{} {} is out of range: expected a percentage from 0 to 100, like 50%", k.text, v.text));
            None
        }
        _ => {
            p.error(
                v,
                format!(
                    "\"{}\" is not a percentage: expected a number from 0 to 100, optionally followed by %, like 50%",
                    v.text
                ),
            );
            None
        }
    }
}

impl Htb {
    /// Whether the gate holds leaf `c` back from the turn the DRR pointer offers it at `level`:
    /// only at the first packet of a turn, only while the head packet's destination is below the
    /// gate, and not once `gate_skip` opportunities were missed in a row (then it counts a forced
    /// turn).
    pub(super) fn gate_holds(&mut self, c: usize, level: usize, cx: &mut QCtx<'_>, now: Nanos) -> bool {
        let Some(w) = self.wireless else { return false };
        if self.classes[c].turn_open & (1 << level) != 0 {
            return false;
        }
        let Some(rel) = self.head_rel(c, cx, now) else { return false };
        if rel >= w.gate {
            return false;
        }
        let cl = &mut self.classes[c];
        if w.gate_skip != 0 && cl.gate_skips >= w.gate_skip {
            cl.forced += 1;
            return false;
        }
        true
    }

    /// Relative goodput towards the destination of leaf `c`'s head packet (`None` if its child
    /// shows none). The child's peek may drop (CoDel): those drops are the leaf's.
    fn head_rel(&mut self, c: usize, cx: &mut QCtx<'_>, now: Nanos) -> Option<u32> {
        let cl = &mut self.classes[c];
        let mark = cx.mark();
        let head = cl.child.as_mut()?.peek(cx, now);
        cl.leaf_stats.after_dequeue(None, cx, mark);
        head.map(|p| cx.rel_goodput(p))
    }

    /// Leaf `c` misses its opportunity: the DRR pointer moves on, its deficit stays.
    pub(super) fn skip_gated(&mut self, c: usize, level: usize, prio: usize) {
        let cl = &mut self.classes[c];
        cl.gate_skips += 1;
        cl.gated += 1;
        self.gate_skipped.push(c as u32);
        self.advance_leaf_ptr(c, level, prio);
    }

    /// Every backlogged leaf of the row was gated: nobody else was served, so the skips of this
    /// dequeue were no missed opportunities.
    pub(super) fn unskip_gated(&mut self) {
        for &c in &self.gate_skipped {
            let cl = &mut self.classes[c as usize];
            cl.gate_skips -= 1;
            cl.gated -= 1;
        }
        self.gate_skipped.clear();
    }
}
