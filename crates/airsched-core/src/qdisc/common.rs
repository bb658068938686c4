//! Pieces several disciplines share: the one-packet peek stash of disciplines whose dequeue
//! cannot be undone ([`StashPeek`]), a child's pending watchdog as its parent sees it
//! ([`pending_wakeup`]), and the diagnostics a build reports about filter lines.

use super::classify::classify_at;
use super::{Filter, Handle, QCtx, Qdisc, QdiscImpl, QdiscStats};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag};
use crate::time::Nanos;

/// A diagnostic about a `tc filter` line (filters carry their line, not their tokens).
pub(super) fn filter_diag(f: &Filter, severity: Severity, message: impl Into<String>) -> TcDiag {
    TcDiag::at_pos(severity, (f.line, 1), message)
}

/// `sfq_classify` and `fq_codel_classify`: the bucket (0-based) of one of `n` a packet goes to.
/// A skb priority `handle:m`, else (when there are filters) the first matching filter's flowid
/// `:m`, picks bucket m - 1; without filters `hash` decides. None (dropped as unclassified) if
/// the filters match nothing or name no bucket in 1..=n.
pub(super) fn bucket_of(
    handle: Handle,
    filters: &[Filter],
    n: u32,
    cx: &QCtx<'_>,
    pkt: PacketId,
    now: Nanos,
    hash: impl FnOnce() -> u32,
) -> Option<u32> {
    let key = cx.key(pkt);
    let prio = Handle(key.priority);
    // A kernel qdisc always has a handle (8001: and up when none is given); one declared
    // without a handle here must not take plain priorities (major 0) for its own.
    if handle != Handle::UNSPEC && prio.qdisc() == handle {
        let m = prio.minor() as u32;
        if m > 0 && m <= n {
            return Some(m - 1);
        }
    }
    if filters.is_empty() {
        return Some(hash());
    }
    let m = classify_at(filters, handle, key, cx.pkts.get(pkt).ip_len, now).class()?.minor() as u32;
    (m > 0 && m <= n).then(|| m - 1)
}

pub(super) use crate::tc::lex::errors_since;

/// A child's watchdog as a parent reports it in its own `next_wakeup`: only a time after `now`.
///
/// In Linux a watchdog is a one-shot timer (`qdisc_watchdog_schedule_ns`, net/sched/sch_api.c,
/// Linux 6.6) that reschedules the root when it fires; it is not polled. A child remembers the
/// time it armed until it is dequeued again, so when its parent skips it (an HTB class out of
/// tokens, a band above it sending) that time goes stale. A stale time at or before `now` has
/// already fired: the device's attempt at `now` (or an earlier one) is the dequeue it caused.
/// Reporting it again would make the device retry one nanosecond later, and again, until the
/// parent visits the child: the nested-shaper spin (HTB -> prio -> tbf took 200 M events for
/// 1.4 s before this rule). What a throttled parent waits for is its own watchdog.
#[inline]
pub(super) fn pending_wakeup(child: &QdiscImpl, now: Nanos) -> Option<Nanos> {
    child.next_wakeup(now).filter(|&t| t > now)
}

/// Dequeue and peek for disciplines whose dequeue may drop (CoDel), advances scheduling
/// state (DRR rounds, HTB tokens) or releases only conforming packets (TBF): `peek` dequeues into a one-packet stash that the next dequeue hands
/// out, as the kernel's `qdisc_peek_dequeued` and `codel_peek` do. The stashed packet still
/// counts as queued (and against limits); drops made while filling the stash are accounted
/// at once.
pub(super) trait StashPeek {
    /// Leaves stamp the packets they store and unstamp what they hand out; parents do not.
    const LEAF: bool;
    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats);
    /// The discipline's own dequeue (run only while the stash is empty).
    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId>;

    fn dequeue_stashed(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        let out = match self.stash_and_stats().0.take() {
            Some(p) => Some(p),
            None => self.dequeue_inner(cx, now),
        };
        if let (true, Some(p)) = (Self::LEAF, out) {
            cx.unstamp(p, now);
        }
        self.stash_and_stats().1.after_dequeue(out, cx, mark);
        out
    }

    fn peek_stashed(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if self.stash_and_stats().0.is_none() {
            let mark = cx.mark();
            let p = self.dequeue_inner(cx, now);
            let (stash, stats) = self.stash_and_stats();
            *stash = p;
            stats.after_dequeue(None, cx, mark);
        }
        *self.stash_and_stats().0
    }
}
