//! What every component of the data path is handed: the clock, the packet arena, the flows'
//! header fields and channel estimates, the counters and the per-flow ledger, and the outbox.
//!
//! Components own their state and take `&mut Ctx` for what they share; they never hold or call
//! each other. What one needs from another (a packet handed up at the end of a link, sources
//! topping up a device's queue) is filed in the outbox ([`Req`]) and carried out by the joining
//! layer (`sim/`).

use crate::engine::{Event, Outbox};
use crate::metrics::Counters;
use crate::node::{Acct, DevId, Node};
use crate::packet::{FlowKey, PacketId, Packets};
use crate::qdisc::QCtx;
use crate::time::Nanos;

/// A request for the joining layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Req {
    /// A packet has reached node `at` (the far end of a link): hand it to the application or
    /// forward it.
    Deliver { at: Node, pkt: PacketId },
    /// Device `dev` took packets from its queue (or found it empty): the saturating sources
    /// whose first hop it is may top it up.
    Refill { dev: DevId },
    /// Device `dev`'s driver can take packets again (a Bluetooth netdev queue woken by
    /// kbnepd): run the device.
    Wake { dev: DevId },
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// A queue refused or discarded it (qdisc, driver queue, FQ-MAC).
    Queue,
    /// The MAC gave up after the retry limit.
    Retry,
}

/// Per-flow facts that several components read or update.
#[derive(Clone, Copy, Debug)]
pub struct FlowBook {
    /// The device the flow's source sends on.
    pub first_hop: DevId,
    /// A saturating source: it keeps `outstanding` packets queued at its first hop.
    pub saturate: bool,
    pub outstanding: u32,
    /// The station the flow is going to, if any.
    pub dst_station: Option<u32>,
    /// A TCP flow whose host reports local congestion to it (a kernel era is set): a segment
    /// its own qdisc refuses is taken back rather than lost, and `queued` counts the truesize
    /// of its packets at the first hop (TCP Small Queues).
    pub tcp_local: bool,
    pub queued: u64,
}

/// The shared state of a run (see the module documentation).
pub struct Ctx {
    pub now: Nanos,
    pub pkts: Packets,
    /// Header fields of each flow's packets (classifiers, flow hashes).
    pub keys: Vec<FlowKey>,
    /// Per flow: the channel monitor's relative goodput towards its destination (`QCtx::chan`).
    pub chan: Vec<u32>,
    /// Packets a queue dropped during the current operation (reused buffer).
    pub dropped: Vec<PacketId>,
    pub counters: Counters,
    pub flows: Vec<FlowBook>,
    pub out: Outbox<Req>,
    /// Packet captures of the air and the wire (`--pcap`); None, the default, costs one
    /// branch per frame.
    pub tap: Option<Box<crate::pcap::Tap>>,
    /// The two media's air logs in a cell with Bluetooth (`crate::coex`); None, without it,
    /// costs one branch per frame.
    pub coex: Option<Box<crate::coex::Coex>>,
}

impl Ctx {
    /// The context of a run: each flow's header fields (`keys`) and ledger entry (`flows`, in
    /// the same order), the run's counters and the event queue.
    pub fn new(keys: Vec<FlowKey>, flows: Vec<FlowBook>, counters: Counters, queue: crate::engine::EventQueue) -> Ctx {
        Ctx {
            now: Nanos::ZERO,
            pkts: Packets::with_capacity(4096),
            chan: vec![crate::qdisc::REL_ONE; keys.len()],
            keys,
            dropped: Vec::with_capacity(64),
            counters,
            flows,
            out: Outbox::new(queue),
            tap: None,
            coex: None,
        }
    }

    /// The context a queueing discipline is handed.
    #[inline]
    pub fn qctx(&mut self) -> QCtx<'_> {
        QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan }
    }

    #[inline(always)]
    pub fn schedule(&mut self, t: Nanos, ev: Event) {
        self.out.schedule(t, ev);
    }

    /// File "packet `pkt` has reached node `at`".
    #[inline]
    pub fn deliver(&mut self, at: Node, pkt: PacketId) {
        self.out.push(Req::Deliver { at, pkt });
    }

    /// A packet left the first hop of its flow at device `dev` (taken by the device, or
    /// dropped): a saturating source may send another.
    #[inline]
    pub fn left_first_hop(&mut self, dev: DevId, pkt: PacketId) {
        let p = self.pkts.get(pkt);
        self.leave_first_hop(p.flow as usize, p.payload, dev);
    }

    /// [`Self::left_first_hop`] of a packet of flow `f` with `payload` bytes.
    #[inline(always)]
    fn leave_first_hop(&mut self, f: usize, payload: u32, dev: DevId) {
        let fb = &mut self.flows[f];
        if fb.first_hop == dev {
            if fb.saturate {
                fb.outstanding -= 1;
            } else if fb.tcp_local {
                fb.queued = fb.queued.saturating_sub(crate::tcp::skb_truesize(payload as u64));
            }
        }
    }

    /// The station a packet of flow `flow` at a device accounted as `acct` is to or from.
    #[inline]
    pub fn station_of(&self, acct: Acct, flow: usize) -> Option<u32> {
        match acct {
            Acct::Downlink => self.flows[flow].dst_station,
            Acct::Station(s) => Some(s),
            Acct::Wired => None,
        }
    }

    /// Count a drop per flow and station, and free the packet.
    #[inline(always)]
    pub fn drop_packet(&mut self, pkt: PacketId, acct: Acct, cause: DropCause) {
        self.count_drop(self.pkts.get(pkt).flow as usize, acct, cause);
        self.pkts.free(pkt);
    }

    /// Count a drop of a packet of flow `f` per flow and station.
    #[inline(always)]
    fn count_drop(&mut self, f: usize, acct: Acct, cause: DropCause) {
        let station = self.station_of(acct, f);
        let fc = &mut self.counters.flows[f];
        match cause {
            DropCause::Queue => fc.drops_queue += 1,
            DropCause::Retry => fc.drops_retry += 1,
        }
        if let Some(s) = station {
            let sc = &mut self.counters.stations[s as usize];
            match cause {
                DropCause::Queue => sc.drops_queue += 1,
                DropCause::Retry => sc.drops_retry += 1,
            }
        }
    }

    /// A saturating source's datagram that its own host's qdisc refused at enqueue: as in
    /// Linux, where `udp_send_skb` turns the qdisc's NET_XMIT_DROP into -ENOBUFS, the send
    /// fails and the datagram never leaves the application, so it is neither sent nor dropped
    /// (the qdisc still counts the drop in its statistics, as the kernel's does). Counted in
    /// `refused_sends`; the source tries again when the device next dequeues. Returns whether
    /// `pkt` was such a datagram (and freed).
    fn refused_send(&mut self, dev: DevId, pkt: PacketId) -> bool {
        let f = self.pkts.get(pkt).flow as usize;
        let book = &self.flows[f];
        if !(book.saturate || book.tcp_local) || book.first_hop != dev {
            return false;
        }
        let fc = &mut self.counters.flows[f];
        fc.sent_packets -= 1;
        fc.refused_sends += 1;
        self.pkts.free(pkt);
        true
    }

    /// Packets a queue of device `dev` dropped during the last operation: each leaves its
    /// first hop (but `offered`, the packet the operation was offered, never entered it), is
    /// counted and freed.
    #[inline]
    pub fn account_dropped(&mut self, dev: DevId, acct: Acct, offered: Option<PacketId>) {
        if !self.dropped.is_empty() {
            self.account_drops(dev, acct, offered);
        }
    }

    #[inline(always)]
    fn account_drops(&mut self, dev: DevId, acct: Acct, offered: Option<PacketId>) {
        for i in 0..self.dropped.len() {
            let d = self.dropped[i];
            let p = self.pkts.get(d);
            let (f, payload) = (p.flow as usize, p.payload);
            if Some(d) != offered {
                self.leave_first_hop(f, payload, dev);
            } else if self.refused_send(dev, d) {
                continue;
            }
            self.count_drop(f, acct, DropCause::Queue);
            self.pkts.free(d);
        }
        self.dropped.clear();
    }
}
