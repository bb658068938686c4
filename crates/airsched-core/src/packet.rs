//! Packets live in one arena and travel by handle; freed slots are reused, so a run in steady
//! state allocates nothing per packet.

use crate::time::Nanos;

/// Handle of a live packet in the [`Packets`] arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PacketId(pub u32);

/// The header fields of a flow's packets that classifiers and flow hashes read: the IPv4/UDP
/// 5-tuple, the TOS byte, the netfilter mark and the socket priority (`skb->priority`).
/// One per flow; packets refer to it through their flow index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub sport: u16,
    pub dport: u16,
    /// IP protocol number (17 = UDP).
    pub proto: u8,
    /// The IPv4 TOS byte (DSCP << 2 | ECN).
    pub tos: u8,
    /// `skb->mark` (set by iptables -j MARK; matched by the fw classifier).
    pub mark: u32,
    /// `skb->priority` (SO_PRIORITY, or derived from TOS by the IP stack).
    pub priority: u32,
}

impl FlowKey {
    /// The 28 bytes of IPv4 header (no options) and UDP header this flow's packets carry,
    /// for u32 matches at byte offsets. `ip_len` is the datagram length.
    pub fn header_bytes(&self, ip_len: u32) -> [u8; 28] {
        let mut h = [0u8; 28];
        h[0] = 0x45;
        h[1] = self.tos;
        h[2..4].copy_from_slice(&(ip_len.min(65535) as u16).to_be_bytes());
        h[8] = 64; // TTL
        h[9] = self.proto;
        h[12..16].copy_from_slice(&self.src_ip.to_be_bytes());
        h[16..20].copy_from_slice(&self.dst_ip.to_be_bytes());
        h[20..22].copy_from_slice(&self.sport.to_be_bytes());
        h[22..24].copy_from_slice(&self.dport.to_be_bytes());
        h[24..26].copy_from_slice(&((ip_len.saturating_sub(20)).min(65535) as u16).to_be_bytes());
        h
    }
}

/// Linux `rt_tos2priority`: the socket priority the IP stack derives from the TOS byte
/// (index = (tos & 0x1E) >> 1): 0-3 best effort (0), 4-7 bulk (2), 8-11 interactive (6),
/// 12-15 interactive bulk (4).
pub fn tos_to_priority(tos: u8) -> u32 {
    const MAP: [u32; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];
    MAP[((tos & 0x1E) >> 1) as usize]
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Index of the flow that sent it.
    pub flow: u32,
    /// IP datagram length in bytes (UDP payload + 28).
    pub ip_len: u32,
    /// UDP payload bytes, what goodput counts.
    pub payload: u32,
    /// When the application sent it.
    pub created: Nanos,
    /// When it entered the queue it is in now (for sojourn time).
    pub enqueued: Nanos,
    /// Sum of the time spent in queueing disciplines so far.
    pub queue_delay: Nanos,
    /// Sequence number within its flow (ping: the echo sequence; UDP: the send index).
    pub seq: u64,
    /// Ping reply: when the echo request it answers was sent (the RTT's start). TCP: the
    /// timestamp option, TSval on a segment and TSecr on an ACK. Else zero.
    pub echo: Nanos,
    /// TCP ACK: the cumulative acknowledgment and the advertised window (bytes); else zero.
    pub ack: u64,
    pub wnd: u64,
    /// TCP ACK: up to 3 SACK blocks as `(start, end)` byte offsets from `ack`, a `(0, 0)` pair
    /// ending the list (`tcp::SackBlocks::to_offsets`); else zero.
    pub sack: [u32; 6],
    /// The device a packet redirected to a virtual device (ifb, imq) came from, where it goes
    /// back to (`skb->skb_iif` in `ifb_ri_tasklet`); set only on redirection.
    pub iif: u32,
}

impl Packet {
    /// A packet of flow `flow` created at `now`, with no sequence, timestamp or ACK fields.
    #[inline]
    pub fn new(flow: u32, ip_len: u32, payload: u32, now: Nanos) -> Packet {
        Packet {
            flow,
            ip_len,
            payload,
            created: now,
            enqueued: now,
            queue_delay: Nanos::ZERO,
            seq: 0,
            echo: Nanos::ZERO,
            ack: 0,
            wnd: 0,
            sack: [0; 6],
            iif: 0,
        }
    }
}

pub struct Packets {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<u32>,
    live_count: usize,
}

impl Packets {
    pub fn with_capacity(cap: usize) -> Self {
        Packets {
            slots: Vec::with_capacity(cap),
            live: Vec::with_capacity(cap),
            free: Vec::with_capacity(cap),
            live_count: 0,
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live_count += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            self.live[i as usize] = true;
            PacketId(i)
        } else {
            self.slots.push(p);
            self.live.push(true);
            PacketId((self.slots.len() - 1) as u32)
        }
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live[id.0 as usize], "double free of packet {}", id.0);
        self.live[id.0 as usize] = false;
        self.live_count -= 1;
        self.free.push(id.0);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live_count(&self) -> usize {
        self.live_count
    }

    /// Every live packet (end-of-run accounting).
    #[cfg(test)]
    pub fn iter_live(&self) -> impl Iterator<Item = (PacketId, &Packet)> {
        self.slots.iter().enumerate().filter(|(i, _)| self.live[*i]).map(|(i, p)| (PacketId(i as u32), p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32) -> Packet {
        Packet {
            flow,
            ip_len: 100,
            payload: 72,
            created: Nanos(0),
            enqueued: Nanos(0),
            queue_delay: Nanos(0),
            seq: 0,
            echo: Nanos(0),
            ack: 0,
            wnd: 0,
            sack: [0; 6],
            iif: 0,
        }
    }

    #[test]
    fn tos_maps_to_priority_as_the_ip_stack_does() {
        // reference linux-qdiscs.md 2.2: min delay (0x10) -> 6, max throughput (0x08) -> 2,
        // EF (0xB8) -> 4, AF41 (0x88) -> 2, CS1 (0x20) -> 0.
        assert_eq!(tos_to_priority(0x10), 6);
        assert_eq!(tos_to_priority(0x08), 2);
        assert_eq!(tos_to_priority(0xB8), 4);
        assert_eq!(tos_to_priority(0x88), 2);
        assert_eq!(tos_to_priority(0x20), 0);
        assert_eq!(tos_to_priority(0x00), 0);
    }

    #[test]
    fn header_bytes_put_fields_where_u32_expects_them() {
        let k = FlowKey {
            src_ip: 0x0a000001,
            dst_ip: 0xc0a80102,
            sport: 40000,
            dport: 5001,
            proto: 17,
            tos: 0xb8,
            mark: 0,
            priority: 0,
        };
        let h = k.header_bytes(1500);
        assert_eq!(h[1], 0xb8);
        assert_eq!(&h[2..4], &1500u16.to_be_bytes());
        assert_eq!(h[9], 17);
        assert_eq!(u32::from_be_bytes(h[12..16].try_into().unwrap()), 0x0a000001);
        assert_eq!(u32::from_be_bytes(h[16..20].try_into().unwrap()), 0xc0a80102);
        assert_eq!(u32::from_be_bytes(h[20..24].try_into().unwrap()), (40000 << 16) | 5001);
    }

    #[test]
    fn freed_slots_are_reused_and_counted() {
        let mut a = Packets::with_capacity(2);
        let x = a.alloc(pkt(1));
        let y = a.alloc(pkt(2));
        assert_eq!(a.live_count(), 2);
        a.free(x);
        let z = a.alloc(pkt(3));
        assert_eq!(z, x, "the freed slot is reused");
        assert_eq!(a.get(z).flow, 3);
        assert_eq!(a.get(y).flow, 2);
        assert_eq!(a.iter_live().count(), 2);
    }
}
