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
            let bits = (p.ip_len + ETHERNET_WIRE_OVERHEAD) as u64 * 8;
            let tx = Nanos::for_bits(bits, self.rate_bps);
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
}
