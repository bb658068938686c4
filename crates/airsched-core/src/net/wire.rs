//! The wired link between the AP and the server: full duplex, each direction serialising one
//! packet at a time at the link rate, then the propagation delay.

use crate::ctx::Ctx;
use crate::engine::Event;
use crate::node::Node;
use crate::packet::PacketId;
use crate::time::Nanos;

use super::netdev::Netdev;
use super::topology::DevId;

/// Bytes a packet occupies on the wire beyond its IP datagram: Ethernet header 14, FCS 4,
/// preamble and SFD 8, inter-frame gap 12.
pub const ETHERNET_WIRE_OVERHEAD: u32 = 38;

#[derive(Clone, Copy, Debug)]
pub struct Wire {
    pub rate_bps: u64,
    pub delay: Nanos,
}

impl Wire {
    /// An idle wired device takes the next packet from its qdisc and starts serialising it;
    /// `WireTxDone` frees the device, `WireDeliver` hands the packet to the far end. Returns
    /// whether it looked at its queue (false: busy), after which its sources may top it up.
    /// `to` is the node at the far end (for the capture's direction).
    ///
    /// A `WireTxDone` that would find the queue empty and change nothing is not scheduled
    /// when the serialisation starts: the queue is a FIFO (whose dequeue of nothing changes
    /// nothing), holds no packet, and no saturating source waits for the device to look at it.
    /// The end of the serialisation is kept in `tx_end`; when the device is run again, its
    /// `WireTxDone` is scheduled then if it lies after the event being handled (the device is
    /// still busy), and forgotten if it lies before (the device is idle, as that `WireTxDone`
    /// would have left it). The events keep their order (`EventQueue::before_current`) and the
    /// results are those of one `WireTxDone` per packet; only the count of events changes.
    ///
    /// `offered`: a packet being sent on the device whose empty root FIFO it would go
    /// through at once (`Netdev::can_bypass`); the wire takes it instead of dequeuing, and
    /// leaves `offered` empty, if it is idle.
    pub fn kick(&self, id: DevId, to: Node, dev: &mut Netdev, cx: &mut Ctx, offered: &mut Option<PacketId>) -> bool {
        if !dev.departures.is_empty() {
            self.catch_up(id, to, dev, cx, None);
        }
        if dev.busy {
            return false;
        }
        if let Some(end) = dev.tx_end {
            dev.tx_end = None;
            let done = Event::WireTxDone { iface: id };
            if !cx.out.queue().before_current(end, &done) {
                dev.busy = true;
                cx.schedule(end, done);
                return false;
            }
        }
        let next = match offered.take() {
            Some(pkt) => {
                dev.bypass(id, pkt, cx);
                Some(pkt)
            }
            None => dev.dequeue(id, cx),
        };
        if let Some(pkt) = next {
            let p = *cx.pkts.get(pkt);
            if let Some(tap) = cx.tap.as_deref_mut() {
                tap.wire_frame(cx.now, to == Node::Ap, &cx.keys[p.flow as usize], &p);
            }
            let tx = self.tx_time(p.ip_len);
            if dev.sourced || !dev.qdisc.idle_dequeue_is_noop() || crate::qdisc::Qdisc::stats(&dev.qdisc).qlen > 0 {
                dev.busy = true;
                cx.schedule(cx.now + tx, Event::WireTxDone { iface: id });
            } else {
                dev.tx_end = Some(cx.now + tx);
            }
            cx.schedule(cx.now + tx + self.delay, Event::WireDeliver { iface: id, pkt });
        }
        true
    }

    /// Time to serialise a packet of `ip_len` bytes (with the Ethernet framing).
    #[inline]
    fn tx_time(&self, ip_len: u32) -> Nanos {
        Nanos::for_bits((ip_len + ETHERNET_WIRE_OVERHEAD) as u64 * 8, self.rate_bps)
    }

    /// The time at which `pkt`, about to be queued on `dev` behind the packet being
    /// serialised, will be taken from the queue, if that is known now and nothing can observe
    /// the difference between taking it then and fixing it now ([`Wire::commit`]): the device
    /// is serialising until that time with no `WireTxDone` scheduled, its root is a tail-drop
    /// FIFO holding only packets whose departures are fixed (so `pkt` leaves when the last of
    /// them has been serialised, whatever else is queued after it), no saturating source or
    /// TCP socket waits for `pkt` to leave (its first-hop release changes nothing) and no
    /// capture records the wire. Call after [`Wire::catch_up`].
    #[inline]
    pub fn departure_of(id: DevId, dev: &Netdev, pkt: PacketId, cx: &Ctx) -> Option<Nanos> {
        let end = dev.tx_end?;
        if cx.out.queue().before_current(end, &Event::WireTxDone { iface: id }) {
            return None;
        }
        if dev.busy || dev.sourced || cx.tap.is_some() || !dev.tail_drop_fifo() {
            return None;
        }
        let fb = &cx.flows[cx.pkts.get(pkt).flow as usize];
        if fb.first_hop == id && (fb.saturate || fb.tcp_local) {
            return None;
        }
        debug_assert_eq!(crate::qdisc::Qdisc::stats(&dev.qdisc).qlen, dev.departures.len() as u64);
        Some(end)
    }

    /// `pkt`, just queued on `dev`, leaves the queue at `at` ([`Wire::departure_of`]): its
    /// serialisation follows and its `WireDeliver` is scheduled now, at the time the
    /// `WireTxDone` that would have taken it from the queue would have scheduled it. That
    /// `WireTxDone` is not scheduled; the packet stays in the FIFO, counted there, until
    /// [`Wire::catch_up`] takes it out as that event would have. Only the moment at which the
    /// events are put in the queue changes: their (time, class, component) keys are those of
    /// one `WireTxDone` per packet, and a device never has two deliveries at one instant, so
    /// the order of every event is unchanged.
    #[inline(always)]
    pub fn commit(&self, id: DevId, dev: &mut Netdev, pkt: PacketId, at: Nanos, cx: &mut Ctx) {
        let tx = self.tx_time(cx.pkts.get(pkt).ip_len);
        dev.departures.push_back((at, pkt));
        dev.tx_end = Some(at + tx);
        cx.schedule(at + tx + self.delay, Event::WireDeliver { iface: id, pkt });
    }

    /// The fixed departures of `dev` whose `WireTxDone` would have been handled by now, in
    /// order: those before the event being handled (`upto` None), or at or before `upto`
    /// (after the run, or a slice of it, has processed every event up to that time). Each
    /// packet leaves the FIFO at its time, as that event's dequeue would have taken it, and
    /// counts as the event processed. Whatever reads the device's queue or counters calls this
    /// first.
    #[inline(always)]
    pub fn catch_up(&self, id: DevId, to: Node, dev: &mut Netdev, cx: &mut Ctx, upto: Option<Nanos>) {
        while let Some(&(at, pkt)) = dev.departures.front() {
            let due = match upto {
                Some(t) => at <= t,
                None => cx.out.queue().before_current(at, &Event::WireTxDone { iface: id }),
            };
            if !due {
                break;
            }
            dev.departures.pop_front();
            dev.depart(id, pkt, at, cx);
            if let Some(tap) = cx.tap.as_deref_mut() {
                // A capture started after the departure was fixed.
                let p = *cx.pkts.get(pkt);
                tap.wire_frame(at, to == Node::Ap, &cx.keys[p.flow as usize], &p);
            }
            cx.out.queue_mut().count_unqueued();
        }
    }
}
