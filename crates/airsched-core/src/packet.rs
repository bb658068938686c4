//! Packets live in one arena and travel by handle; freed slots are reused, so a run in steady
//! state allocates nothing per packet.

use crate::time::Nanos;

/// Handle of a live packet in the [`Packets`] arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PacketId(pub u32);

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
    pub fn iter_live(&self) -> impl Iterator<Item = (PacketId, &Packet)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(i, _)| self.live[*i])
            .map(|(i, p)| (PacketId(i as u32), p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32) -> Packet {
        Packet { flow, ip_len: 100, payload: 72, created: Nanos(0), enqueued: Nanos(0), queue_delay: Nanos(0) }
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
