//! Queueing disciplines: one trait, one file per discipline, dispatched by `match` over
//! [`QdiscImpl`] (no trait objects in the per-packet path).
//!
//! The trait follows the kernel's `Qdisc_ops` contract (enqueue, dequeue, peek) plus the
//! watchdog time a shaper arms when it holds packets it may not send yet.

mod pfifo;

pub use pfifo::Pfifo;

use crate::packet::{PacketId, Packets};
use crate::time::Nanos;

/// Ethernet header the kernel counts in `qdisc_pkt_len` (WiFi netdevs are Ethernet-like).
pub const L2_HEADER_BYTES: u32 = 14;

/// Linux DEFAULT_TX_QUEUE_LEN.
pub const DEFAULT_TXQUEUELEN: u32 = 1000;

/// Outcome of an enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued,
    /// The qdisc dropped this packet (it may be the one offered or another it chose); the caller
    /// owns it again and must account for and free it.
    Dropped(PacketId),
}

/// Counters as `tc -s qdisc show` prints them, plus the offered count for the identities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    /// Packets handed to enqueue.
    pub offered_packets: u64,
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub drops: u64,
    pub overlimits: u64,
    pub requeues: u64,
    pub backlog_bytes: u64,
    pub qlen: u64,
}

impl QdiscStats {
    /// offered = sent + dropped + still queued; holds after every operation.
    pub fn identity_holds(&self) -> bool {
        self.offered_packets == self.sent_packets + self.drops + self.qlen
    }
}

/// What every queueing discipline implements.
pub trait Qdisc {
    /// Offer a packet at `now`. The length used for accounting is the packet's IP length plus
    /// the 14-byte Ethernet header (`qdisc_pkt_len`).
    fn enqueue(&mut self, pkt: PacketId, pkts: &mut Packets, now: Nanos) -> Enqueue;
    /// Hand the next packet to the device, if the discipline allows one now.
    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketId>;
    /// The packet `dequeue` would return, without removing it.
    fn peek(&self) -> Option<PacketId>;
    /// For shapers holding packets: when to try again. Work-conserving disciplines return None.
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos>;
    fn stats(&self) -> &QdiscStats;
    /// Every queued packet (end-of-run accounting).
    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId));
}

/// The disciplines airsched implements, dispatched by match.
pub enum QdiscImpl {
    Pfifo(Pfifo),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            QdiscImpl::Pfifo($q) => $e,
        }
    };
}

impl QdiscImpl {
    pub fn kind(&self) -> &'static str {
        match self {
            QdiscImpl::Pfifo(_) => "pfifo",
        }
    }
}

impl Qdisc for QdiscImpl {
    #[inline]
    fn enqueue(&mut self, pkt: PacketId, pkts: &mut Packets, now: Nanos) -> Enqueue {
        dispatch!(self, q => q.enqueue(pkt, pkts, now))
    }
    #[inline]
    fn dequeue(&mut self, pkts: &mut Packets, now: Nanos) -> Option<PacketId> {
        dispatch!(self, q => q.dequeue(pkts, now))
    }
    #[inline]
    fn peek(&self) -> Option<PacketId> {
        dispatch!(self, q => q.peek())
    }
    #[inline]
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        dispatch!(self, q => q.next_wakeup(now))
    }
    #[inline]
    fn stats(&self) -> &QdiscStats {
        dispatch!(self, q => q.stats())
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        dispatch!(self, q => q.for_each_queued(f))
    }
}
