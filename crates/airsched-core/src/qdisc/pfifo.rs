//! pfifo: a tail-drop FIFO limited in packets (Linux `net/sched/sch_fifo.c`, unchanged in
//! behaviour since 2.6; followed here as in 6.x). Default limit = the device's txqueuelen (1000).
//! Deviation: none modelled; TCQ_F_CAN_BYPASS is not needed because stats count the same.

use std::collections::VecDeque;

use super::{Enqueue, Qdisc, QdiscStats, L2_HEADER_BYTES};
use crate::packet::{PacketId, Packets};
use crate::time::Nanos;

pub struct Pfifo {
    limit: u32,
    queue: VecDeque<PacketId>,
    stats: QdiscStats,
}

impl Pfifo {
    pub fn new(limit: u32) -> Self {
        Pfifo {
            limit,
            // Capacity for the whole limit up front (bounded), so steady state never allocates.
            queue: VecDeque::with_capacity(limit.min(1 << 16) as usize),
            stats: QdiscStats::default(),
        }
    }

    pub fn limit(&self) -> u32 {
        self.limit
    }
}

#[inline]
fn pkt_len(pkts: &Packets, id: PacketId) -> u64 {
    (pkts.get(id).ip_len + L2_HEADER_BYTES) as u64
}

impl Qdisc for Pfifo {
    fn enqueue(&mut self, pkt: PacketId, pkts: &mut Packets, now: Nanos) -> Enqueue {
        self.stats.offered_packets += 1;
        if self.queue.len() as u32 >= self.limit {
            self.stats.drops += 1;
            return Enqueue::Dropped(pkt);
        }
        pkts.get_mut(pkt).enqueued = now;
        self.stats.backlog_bytes += pkt_len(pkts, pkt);
        self.stats.qlen += 1;
        self.queue.push_back(pkt);
        Enqueue::Queued
    }

    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketId> {
        let id = self.queue.pop_front()?;
        let len = pkt_len(pkts, id);
        let p = pkts.get_mut(id);
        p.queue_delay += now - p.enqueued;
        self.stats.backlog_bytes -= len;
        self.stats.qlen -= 1;
        self.stats.sent_bytes += len;
        self.stats.sent_packets += 1;
        Some(id)
    }

    fn peek(&self) -> Option<PacketId> {
        self.queue.front().copied()
    }

    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> {
        None
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.queue.iter().for_each(|&p| f(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    fn pkt(pkts: &mut Packets, flow: u32) -> PacketId {
        pkts.alloc(Packet {
            flow,
            ip_len: 1000,
            payload: 972,
            created: Nanos(0),
            enqueued: Nanos(0),
            queue_delay: Nanos(0),
        })
    }

    #[test]
    fn fifo_order_tail_drop_and_identities() {
        let mut pkts = Packets::with_capacity(8);
        let mut q = Pfifo::new(3);
        let ids: Vec<_> = (0..5).map(|i| pkt(&mut pkts, i)).collect();
        let outcomes: Vec<_> = ids.iter().map(|&id| q.enqueue(id, &mut pkts, Nanos(100))).collect();
        assert_eq!(&outcomes[..3], &[Enqueue::Queued; 3]);
        assert_eq!(outcomes[3], Enqueue::Dropped(ids[3]), "tail drop drops the arriving packet");
        assert_eq!(outcomes[4], Enqueue::Dropped(ids[4]));
        assert_eq!(q.stats().backlog_bytes, 3 * 1014);
        assert_eq!(q.peek(), Some(ids[0]));
        assert_eq!(q.dequeue(&mut pkts, Nanos(350)), Some(ids[0]));
        assert_eq!(pkts.get(ids[0]).queue_delay, Nanos(250));
        assert_eq!(q.dequeue(&mut pkts, Nanos(400)), Some(ids[1]));
        let s = *q.stats();
        assert_eq!((s.offered_packets, s.sent_packets, s.drops, s.qlen), (5, 2, 2, 1));
        assert_eq!(s.sent_bytes, 2 * 1014);
        assert!(s.identity_holds());
        assert_eq!(q.next_wakeup(Nanos(400)), None);
    }
}
