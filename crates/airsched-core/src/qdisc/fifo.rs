//! pfifo, bfifo and pfifo_head_drop (Linux `net/sched/sch_fifo.c`, unchanged in behaviour
//! through 6.x). pfifo and pfifo_head_drop limit packets (default txqueuelen), bfifo limits
//! bytes (default txqueuelen * psched_mtu). pfifo and bfifo drop the arriving packet when full;
//! pfifo_head_drop drops the oldest and queues the new one (NET_XMIT_CN).
//! Deviation: none; the kernel's bypass of an empty FIFO changes no counter here.

use std::collections::VecDeque;

use super::{opt_parser, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::packet::PacketId;
use crate::tc::lex::TcDiag;
use crate::tc::opts::format_size;
use crate::time::Nanos;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FifoKind {
    Pfifo,
    Bfifo,
    PfifoHeadDrop,
}

impl FifoKind {
    fn name(self) -> &'static str {
        match self {
            FifoKind::Pfifo => "pfifo",
            FifoKind::Bfifo => "bfifo",
            FifoKind::PfifoHeadDrop => "pfifo_head_drop",
        }
    }
}

pub struct Fifo {
    kind: FifoKind,
    /// Packets (pfifo, pfifo_head_drop) or bytes (bfifo).
    limit: u64,
    handle: Handle,
    queue: VecDeque<PacketId>,
    stats: QdiscStats,
}

impl Fifo {
    pub fn new(kind: FifoKind, limit: u64, handle: Handle, _parent: Handle) -> Self {
        Fifo {
            kind,
            limit,
            handle,
            // Capacity up front (bounded), so steady state never allocates.
            queue: VecDeque::with_capacity(match kind {
                FifoKind::Bfifo => 1024,
                _ => limit.min(1 << 16) as usize,
            }),
            stats: QdiscStats::default(),
        }
    }
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let kind = match d.kind.text {
        "bfifo" => FifoKind::Bfifo,
        "pfifo_head_drop" => FifoKind::PfifoHeadDrop,
        _ => FifoKind::Pfifo,
    };
    let mut limit = match kind {
        FifoKind::Bfifo => cx.txqueuelen as u64 * cx.mtu as u64,
        _ => cx.txqueuelen as u64,
    };
    let mut p = opt_parser(&d.opts, d.end, diags);
    while let Some(k) = p.next() {
        match k.text {
            "limit" => {
                // tc reads every fifo limit with get_size (so "limit 1k" is 1024 packets for
                // pfifo) into 32 bits.
                let vt = p.peek();
                if let Some(v) = p.size(k) {
                    if v > u32::MAX as u64 {
                        p.error(vt.expect("size read a value"), "limit must fit 32 bits (tc's get_size)");
                    } else {
                        limit = v;
                    }
                }
            }
            _ => p.unknown(k, kind.name(), &["limit"]),
        }
    }
    if p.has_errors() {
        return None;
    }
    Some(QdiscImpl::Fifo(Fifo::new(kind, limit, d.handle, d.parent)))
}

impl Fifo {
    /// Linux's bypass of an empty FIFO (`TCQ_F_CAN_BYPASS`, `__dev_xmit_skb` in
    /// net/core/dev.c, 6.x): whether `pkt`, offered now, would be queued and be the next
    /// packet handed out (the FIFO is empty and has room for it).
    #[inline]
    pub fn takes_at_once(&self, pkt: PacketId, cx: &QCtx<'_>) -> bool {
        self.queue.is_empty()
            && match self.kind {
                FifoKind::Bfifo => cx.len(pkt) as u64 <= self.limit,
                _ => self.limit > 0,
            }
    }

    /// pfifo and bfifo: a full queue drops the packet offered, never one it holds, so what
    /// it holds leaves in order, each at its dequeue.
    #[inline]
    pub fn drops_only_the_offered(&self) -> bool {
        self.kind != FifoKind::PfifoHeadDrop
    }

    /// `pkt` goes through the empty FIFO at once (see [`Fifo::takes_at_once`]): stamped and
    /// counted as an enqueue followed at once by its dequeue would (offered and sent, with no
    /// sojourn).
    #[inline]
    pub fn pass(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) {
        debug_assert!(self.takes_at_once(pkt, cx));
        cx.stamp(pkt, now);
        let len = cx.len(pkt) as u64;
        self.stats.offered_packets += 1;
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += len;
    }

    /// [`Qdisc::enqueue`] of a FIFO with room for `pkt`: queued, stamped and counted as that
    /// enqueue does. Returns false, changing nothing, when the FIFO is full (the enqueue then
    /// drops).
    #[inline]
    pub fn push_if_room(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> bool {
        let len = cx.len(pkt) as u64;
        let fits = match self.kind {
            FifoKind::Bfifo => self.stats.backlog_bytes + len <= self.limit,
            _ => (self.queue.len() as u64) < self.limit,
        };
        if !fits {
            return false;
        }
        cx.stamp(pkt, now);
        self.queue.push_back(pkt);
        self.stats.offered_packets += 1;
        self.stats.qlen += 1;
        self.stats.backlog_bytes += len;
        true
    }

    /// [`Qdisc::dequeue`]: the head packet leaves, with its sojourn and the counters (a FIFO
    /// drops nothing at dequeue).
    #[inline]
    pub fn pop_head(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let p = self.queue.pop_front()?;
        cx.unstamp(p, now);
        let len = cx.len(p) as u64;
        self.stats.qlen -= 1;
        self.stats.backlog_bytes -= len;
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += len;
        Some(p)
    }
}

impl Qdisc for Fifo {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        if self.push_if_room(pkt, cx, now) {
            return Enq::Queued;
        }
        let mark = cx.mark();
        let res = if self.kind == FifoKind::PfifoHeadDrop && self.limit > 0 {
            let head = self.queue.pop_front().expect("full and limit > 0 means non-empty");
            cx.unstamp(head, now);
            cx.drop(head);
            Enq::Congestion
        } else {
            cx.drop(pkt);
            Enq::Dropped
        };
        if res != Enq::Dropped {
            cx.stamp(pkt, now);
            self.queue.push_back(pkt);
        }
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.pop_head(cx, now)
    }

    fn peek(&mut self, _cx: &mut QCtx<'_>, _now: Nanos) -> Option<PacketId> {
        self.queue.front().copied()
    }

    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> {
        None
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.queue.iter().for_each(|&p| f(p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let options = match self.kind {
            // tc prints a bfifo limit with print_size: "limit 15Kb", "limit 40360b".
            FifoKind::Bfifo => format!("limit {}", format_size(self.limit)),
            _ => format!("limit {}p", self.limit),
        };
        out.push(QdiscReport {
            kind: self.kind.name(),
            handle: self.handle,
            parent,
            options,
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes: vec![],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::Bench;

    #[test]
    fn pfifo_is_fifo_with_tail_drop() {
        let mut b = Bench::new(1);
        let mut q = Fifo::new(FifoKind::Pfifo, 3, Handle::new(1, 0), Handle::ROOT);
        let ids: Vec<_> = (0..5).map(|_| b.pkt(0, 986)).collect();
        let res: Vec<_> = ids.iter().map(|&id| q.enqueue(id, &mut b.cx(), Nanos(100))).collect();
        assert_eq!(&res[..3], &[Enq::Queued; 3]);
        assert_eq!(res[3], Enq::Dropped);
        assert_eq!(b.dropped, vec![ids[3], ids[4]], "tail drop drops the arriving packets");
        assert_eq!(q.stats().backlog_bytes, 3 * 1000);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(350)), Some(ids[0]));
        assert_eq!(b.pkts.get(ids[0]).queue_delay, Nanos(250));
        let s = q.stats();
        assert_eq!((s.offered_packets, s.sent_packets, s.drops, s.qlen), (5, 1, 2, 2));
        assert!(s.identity_holds());
    }

    #[test]
    fn limits_read_like_tc_get_size() {
        use crate::qdisc::testutil::{build_err, build_opts_ok};
        let q = build_opts_ok("pfifo", Handle::new(1, 0), "limit 1k");
        assert_eq!(q.reports()[0].options, "limit 1024p");
        let q = build_opts_ok("bfifo", Handle::new(1, 0), "limit 15k");
        assert_eq!(q.reports()[0].options, "limit 15Kb");
        let q = build_opts_ok("pfifo_head_drop", Handle::new(1, 0), "");
        assert_eq!(q.reports()[0].options, "limit 1000p");
        let e = build_err("pfifo", "limit 5g");
        assert_eq!(e[0].token, "5g");
        let e = build_err("bfifo", "limit 10 bogus");
        assert_eq!(e[0].token, "bogus");
    }

    #[test]
    fn bfifo_limits_bytes() {
        let mut b = Bench::new(1);
        // 2500 bytes: two 1000-byte packets fit, the third does not, a 400-byte one does.
        let mut q = Fifo::new(FifoKind::Bfifo, 2500, Handle::new(1, 0), Handle::ROOT);
        let big: Vec<_> = (0..3).map(|_| b.pkt(0, 986)).collect();
        let small = b.pkt(0, 386);
        let r: Vec<_> = big.iter().chain([&small]).map(|&p| q.enqueue(p, &mut b.cx(), Nanos(0))).collect();
        assert_eq!(r, vec![Enq::Queued, Enq::Queued, Enq::Dropped, Enq::Queued]);
        assert_eq!(q.stats().backlog_bytes, 2400);
    }

    #[test]
    fn pfifo_head_drop_drops_the_oldest() {
        let mut b = Bench::new(1);
        let mut q = Fifo::new(FifoKind::PfifoHeadDrop, 2, Handle::new(1, 0), Handle::ROOT);
        let ids: Vec<_> = (0..3).map(|_| b.pkt(0, 986)).collect();
        let r: Vec<_> = ids.iter().map(|&p| q.enqueue(p, &mut b.cx(), Nanos(0))).collect();
        assert_eq!(r, vec![Enq::Queued, Enq::Queued, Enq::Congestion]);
        assert_eq!(b.dropped, vec![ids[0]]);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(1)), Some(ids[1]));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(1)), Some(ids[2]));
        let s = q.stats();
        assert_eq!((s.drops, s.qlen, s.backlog_bytes), (1, 0, 0));
        assert!(s.identity_holds());
    }
}
