//! The wired link between the AP and the server: full duplex, each direction serialising one
//! packet at a time at the link rate, then the propagation delay.

use crate::ctx::Ctx;
use crate::engine::Event;
use crate::node::Node;
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
    pub fn kick(&self, id: DevId, to: Node, dev: &mut Netdev, cx: &mut Ctx) -> bool {
        if dev.busy {
            return false;
        }
        if let Some(pkt) = dev.dequeue(id, cx) {
            let p = *cx.pkts.get(pkt);
            if let Some(tap) = cx.tap.as_deref_mut() {
                tap.wire_frame(cx.now, to == Node::Ap, &cx.keys[p.flow as usize], &p);
            }
            let bits = (p.ip_len + ETHERNET_WIRE_OVERHEAD) as u64 * 8;
            let tx = Nanos::for_bits(bits, self.rate_bps);
            dev.busy = true;
            cx.schedule(cx.now + tx, Event::WireTxDone { iface: id });
            cx.schedule(cx.now + tx + self.delay, Event::WireDeliver { iface: id, pkt });
        }
        true
    }
}
