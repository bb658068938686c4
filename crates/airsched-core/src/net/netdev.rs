//! A network device's egress side: its root queueing discipline, the watchdog a shaper arms,
//! and the accounting of what the discipline drops (`net/core/dev.c`'s `__dev_xmit_skb` and
//! `qdisc_run`, `qdisc_watchdog` in `sch_api.c`, as far as a simulator needs them).

use crate::ctx::Ctx;
use crate::engine::{Event, Ring};
use crate::packet::PacketId;
use crate::qdisc::{Enq, Qdisc, QdiscImpl};
use crate::time::Nanos;

use super::topology::{Acct, DevId, Link};

pub struct Netdev {
    pub qdisc: QdiscImpl,
    pub link: Link,
    pub acct: Acct,
    /// A packet taken from the qdisc leaves its flow's first hop at once (false: it leaves
    /// when it leaves the driver, as in an 802.11n cell whose driver queues hold frames).
    pub leaves_at_dequeue: bool,
    /// Wired: a packet is being serialised and its `WireTxDone` is scheduled.
    pub busy: bool,
    /// Wired: a packet is being serialised until this time, and its `WireTxDone` was not
    /// scheduled because nothing could observe it yet (`Wire::kick`).
    pub tx_end: Option<Nanos>,
    /// Wired, behind a tail-drop FIFO: the packets at the head of the FIFO whose departure
    /// (the end of the serialisation before theirs) is already known, with that time, oldest
    /// first; their `WireDeliver` is scheduled and no `WireTxDone` is (`Wire::commit`). The
    /// FIFO holds them until something looks at it (`Wire::catch_up`).
    pub departures: Ring<(Nanos, PacketId)>,
    /// Saturating sources send on this device: it files a top-up request whenever it looks at
    /// its queue (no other device needs to).
    pub sourced: bool,
    /// Pending qdisc watchdog.
    pub wake_at: Option<Nanos>,
    /// Packets go through a virtual device before this device's qdisc (None: one branch).
    pub hook: Option<Box<Hook>>,
    /// The receive path's ingress hook (`tc qdisc add dev D ingress`), if any.
    pub ingress: Option<Box<Ingress>>,
    /// Every policer on this device's filters (its qdiscs' and its ingress hook's), for the
    /// run's report (`tc -s filter show`).
    pub policers: Vec<crate::qdisc::police::PolicerRef>,
}

/// A device's ingress hook (`sch_handle_ingress`, Linux 6.1): the filters every received
/// packet meets before the stack sees it, in the order they run; a policer's drop drops the
/// packet (no queue: a policed TCP flow sees loss, not delay).
#[derive(Clone, Debug)]
pub struct Ingress {
    pub filters: Vec<crate::qdisc::classify::Filter>,
}

impl Ingress {
    /// Whether a packet of `key` and `ip_len` received at `now` goes on up the stack.
    #[inline]
    pub fn admits(&self, key: &crate::packet::FlowKey, ip_len: u32, now: Nanos) -> bool {
        use crate::qdisc::classify::{classify_on, Verdict};
        let at = self.filters.first().map_or(crate::qdisc::Handle::UNSPEC, |f| f.parent);
        classify_on(&self.filters, at, key, ip_len, now, true) != Verdict::Shot
    }
}

/// A real device's egress hook, built from a script's clsact egress filters, its root qdisc's
/// redirecting filters (`act_mirred`, Linux 6.6) or an iptables IMQ rule (tc/virt.rs).
#[derive(Clone, Debug)]
pub struct Hook {
    /// IMQ: every packet goes to this device.
    pub imq: Option<DevId>,
    /// The rules in the order they run: the first match decides; its target, if any, is the
    /// ifb device, else the packet goes on to this device's own qdisc.
    pub rules: Vec<(crate::qdisc::classify::Filter, Option<DevId>)>,
}

impl Hook {
    /// The virtual device a packet goes to first, if any.
    #[inline]
    pub fn target(&self, key: &crate::packet::FlowKey, ip_len: u32) -> Option<DevId> {
        if self.imq.is_some() {
            return self.imq;
        }
        self.rules.iter().find(|(f, _)| f.matches(key, ip_len)).and_then(|(_, to)| *to)
    }
}

impl Netdev {
    /// A device whose root is the default `pfifo` of `txqueuelen` packets.
    pub fn new(txqueuelen: u32, link: Link, acct: Acct) -> Netdev {
        Netdev {
            qdisc: QdiscImpl::default_root(txqueuelen),
            link,
            acct,
            leaves_at_dequeue: true,
            busy: false,
            tx_end: None,
            departures: Ring::with_capacity(16, (Nanos::ZERO, PacketId(0))),
            sourced: false,
            wake_at: None,
            hook: None,
            ingress: None,
            policers: Vec::new(),
        }
    }

    /// Offer a packet to the qdisc. Returns whether it was queued (false: dropped, already
    /// accounted and freed). Drops of other packets it caused are accounted too.
    #[inline(always)]
    pub fn enqueue(&mut self, id: DevId, pkt: PacketId, cx: &mut Ctx) -> bool {
        // A FIFO root with room queues it and drops nothing.
        if let QdiscImpl::Fifo(f) = &mut self.qdisc {
            let now = cx.now;
            if f.push_if_room(pkt, &mut cx.qctx(), now) {
                return true;
            }
        }
        self.enqueue_any(id, pkt, cx)
    }

    /// [`Self::enqueue`] through the root's own enqueue.
    fn enqueue_any(&mut self, id: DevId, pkt: PacketId, cx: &mut Ctx) -> bool {
        cx.dropped.clear();
        let now = cx.now;
        let res = self.qdisc.enqueue(pkt, &mut cx.qctx(), now);
        cx.account_dropped(id, self.acct, Some(pkt));
        res != Enq::Dropped
    }

    /// Whether `pkt`, offered now, would go through the root qdisc at once: the root is an
    /// empty FIFO with room (Linux bypasses such a qdisc, `TCQ_F_CAN_BYPASS`), so if the
    /// device takes a packet now it takes this one ([`Netdev::bypass`]).
    #[inline]
    pub fn can_bypass(&self, pkt: crate::packet::PacketId, cx: &mut Ctx) -> bool {
        matches!(&self.qdisc, QdiscImpl::Fifo(f) if f.takes_at_once(pkt, &cx.qctx()))
    }

    /// The device takes `pkt` straight through its empty root FIFO: the same counters, stamps
    /// and first-hop release as its enqueue and immediate dequeue.
    #[inline(always)]
    pub fn bypass(&mut self, id: DevId, pkt: crate::packet::PacketId, cx: &mut Ctx) {
        if let QdiscImpl::Fifo(f) = &mut self.qdisc {
            let now = cx.now;
            f.pass(pkt, &mut cx.qctx(), now);
        }
        if self.leaves_at_dequeue {
            cx.left_first_hop(id, pkt);
        }
    }

    /// Whether this device's root is a FIFO that drops only the packet offered to it when full
    /// (pfifo, bfifo): the packets it holds leave in the order they came, at times the wire
    /// alone decides.
    #[inline]
    pub fn tail_drop_fifo(&self) -> bool {
        matches!(&self.qdisc, QdiscImpl::Fifo(f) if f.drops_only_the_offered())
    }

    /// The head packet `pkt` leaves the root FIFO at `at` (a departure fixed by
    /// `Wire::commit`): the counters, stamp and first-hop release its dequeue at `at` gives.
    #[inline(always)]
    pub fn depart(&mut self, id: DevId, pkt: PacketId, at: Nanos, cx: &mut Ctx) {
        let out = match &mut self.qdisc {
            QdiscImpl::Fifo(f) => f.pop_head(&mut cx.qctx(), at),
            q => q.dequeue(&mut cx.qctx(), at),
        };
        debug_assert_eq!(out, Some(pkt), "a FIFO hands out its committed head");
        if self.leaves_at_dequeue {
            cx.left_first_hop(id, pkt);
        }
    }

    /// Take the next packet from the qdisc, with the bookkeeping every dequeue needs. When the
    /// qdisc holds packets but may not send yet (a shaper), its watchdog is armed.
    #[inline]
    pub fn dequeue(&mut self, id: DevId, cx: &mut Ctx) -> Option<crate::packet::PacketId> {
        // An empty FIFO: its dequeue of nothing changes nothing (no drop, no watchdog).
        if self.qdisc.idle_dequeue_is_noop() && self.qdisc.stats().qlen == 0 {
            return None;
        }
        cx.dropped.clear();
        let now = cx.now;
        let out = self.qdisc.dequeue(&mut cx.qctx(), now);
        cx.account_dropped(id, self.acct, None);
        match out {
            Some(pkt) if self.leaves_at_dequeue => cx.left_first_hop(id, pkt),
            Some(_) => {}
            None => self.arm_watchdog(id, cx),
        }
        out
    }

    fn arm_watchdog(&mut self, id: DevId, cx: &mut Ctx) {
        if self.qdisc.stats().qlen == 0 {
            return;
        }
        if let Some(t) = self.qdisc.next_wakeup(cx.now) {
            // Never in the past or at this very instant: the device tried now.
            let t = t.max(cx.now + Nanos(1));
            if self.wake_at.is_none_or(|cur| t < cur) {
                self.wake_at = Some(t);
                cx.schedule(t, Event::QdiscWake { iface: id });
            }
        }
    }

    /// The watchdog event fires: true if it is the armed one (the device should try again).
    pub fn on_wake(&mut self, now: Nanos) -> bool {
        if self.wake_at != Some(now) {
            return false; // superseded by an earlier watchdog
        }
        self.wake_at = None;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::FlowBook;
    use crate::engine::{EventQueue, Outbox};
    use crate::metrics::Counters;
    use crate::packet::{FlowKey, Packet, Packets};

    fn ctx(flows: usize, saturate: bool) -> Ctx {
        Ctx {
            now: Nanos::ZERO,
            pkts: Packets::with_capacity(16),
            keys: vec![
                FlowKey { src_ip: 1, dst_ip: 2, sport: 1, dport: 2, proto: 17, tos: 0, mark: 0, priority: 0 };
                flows
            ],
            chan: vec![crate::qdisc::REL_ONE; flows],
            dropped: Vec::new(),
            counters: Counters::new(flows, 1),
            flows: vec![
                FlowBook {
                    first_hop: 0,
                    saturate,
                    outstanding: 0,
                    dst_station: Some(0),
                    tcp_local: false,
                    queued: 0
                };
                flows
            ],
            out: Outbox::new(EventQueue::with_capacity(8)),
            tap: None,
            coex: None,
        }
    }

    fn send(dev: &mut Netdev, cx: &mut Ctx) -> bool {
        let p = cx.pkts.alloc(Packet::new(0, 100, 72, cx.now));
        cx.flows[0].outstanding += 1;
        dev.enqueue(0, p, cx)
    }

    #[test]
    fn a_saturating_sources_refused_send_is_neither_sent_nor_dropped() {
        // Linux: the qdisc's NET_XMIT_DROP is -ENOBUFS from sendmsg; the datagram never left.
        let mut dev = Netdev::new(2, Link::Wifi(0), Acct::Downlink);
        let mut cx = ctx(1, true);
        for _ in 0..3 {
            cx.counters.flows[0].sent_packets += 1;
            send(&mut dev, &mut cx);
        }
        let fc = cx.counters.flows[0];
        assert_eq!((fc.sent_packets, fc.drops_queue, fc.refused_sends), (2, 0, 1));
        assert_eq!(cx.counters.stations[0].drops_queue, 0);
        assert_eq!(cx.pkts.live_count(), 2);
        // The qdisc counts it as the kernel's does.
        assert_eq!(dev.qdisc.stats().drops, 1);
        // A queue that is not the source's first hop drops it like any other packet.
        cx.flows[0].first_hop = 7;
        cx.counters.flows[0].sent_packets += 1;
        assert!(!send(&mut dev, &mut cx));
        assert_eq!((cx.counters.flows[0].drops_queue, cx.counters.flows[0].refused_sends), (1, 1));
    }

    #[test]
    fn a_full_queue_drops_and_accounts_the_offered_packet_against_flow_and_station() {
        let mut dev = Netdev::new(2, Link::Wifi(0), Acct::Downlink);
        let mut cx = ctx(1, false);
        assert!(send(&mut dev, &mut cx));
        assert!(send(&mut dev, &mut cx));
        assert!(!send(&mut dev, &mut cx));
        assert_eq!(cx.counters.flows[0].drops_queue, 1);
        assert_eq!(cx.counters.stations[0].drops_queue, 1);
        assert_eq!(cx.pkts.live_count(), 2);
        // The refused packet never entered the queue, so it never left it either: the source
        // still counts it (the caller takes it back).
        assert_eq!(cx.flows[0].outstanding, 3);
        assert!(!cx.out.has_requests(), "a netdev files no requests of its own");
    }

    #[test]
    fn dequeue_releases_the_first_hop_unless_the_driver_keeps_the_frame() {
        let mut cx = ctx(1, true);
        let mut dev = Netdev::new(10, Link::Wire(crate::net::Node::Ap), Acct::Wired);
        send(&mut dev, &mut cx);
        assert!(dev.dequeue(0, &mut cx).is_some());
        assert_eq!(cx.flows[0].outstanding, 0);
        let mut ht = Netdev::new(10, Link::Wifi(0), Acct::Downlink);
        ht.leaves_at_dequeue = false;
        send(&mut ht, &mut cx);
        assert!(ht.dequeue(0, &mut cx).is_some());
        assert_eq!(cx.flows[0].outstanding, 1);
        assert_eq!(dev.dequeue(0, &mut cx), None);
    }

    #[test]
    fn a_shaper_that_holds_packets_arms_one_watchdog_and_only_the_armed_one_counts() {
        let (script, mut diags) =
            crate::tc::parse_script("tc qdisc add dev eth0 root tbf rate 1mbit burst 1600 limit 10000");
        let specs = [crate::tc::DeviceSpec { name: "eth0".into(), txqueuelen: 100, seed: 1, stream: 0 }];
        let tree = crate::tc::check::build_unless_errors(&script, &specs, &mut diags).pop().expect("the tbf builds");
        let mut dev = Netdev::new(100, Link::Wire(crate::net::Node::Ap), Acct::Wired);
        dev.qdisc = tree.1;
        let mut cx = ctx(1, false);
        for _ in 0..3 {
            let p = cx.pkts.alloc(Packet::new(0, 1500, 1472, cx.now));
            assert!(dev.enqueue(0, p, &mut cx));
        }
        // The bucket holds one packet's worth: the first goes, the second must wait.
        assert!(dev.dequeue(0, &mut cx).is_some());
        assert!(dev.dequeue(0, &mut cx).is_none());
        let t = dev.wake_at.expect("watchdog armed");
        assert!(t > cx.now);
        let (when, ev) = cx.out.queue_mut().pop().unwrap();
        assert_eq!((when, ev), (t, Event::QdiscWake { iface: 0 }));
        // A second failed dequeue does not arm another.
        assert!(dev.dequeue(0, &mut cx).is_none());
        assert!(cx.out.queue_mut().pop().is_none());
        assert!(!dev.on_wake(t - Nanos(1)));
        assert!(dev.on_wake(t));
        cx.now = t;
        assert!(dev.dequeue(0, &mut cx).is_some(), "at the watchdog's time the shaper sends");
    }
}
