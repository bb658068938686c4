//! The event queue: every future event of a run, popped in one documented total order.
//!
//! Total order of events (documented contract, relied on for determinism):
//! 1. time (integer nanoseconds), earliest first;
//! 2. event class ([`Event::class`]): the end of the warm-up first (what happens at that instant
//!    is measured), then medium events (end of a frame, end of an exchange), channel-access
//!    attempts, wired-link events, qdisc watchdogs, traffic sources, beacons, and statistics sampling last (a
//!    sample ending at t includes what happened at t);
//! 3. the id of the component the event belongs to (node, link, flow);
//! 4. the insertion sequence number, unique per run.
//!
//! Because (4) is unique, no two events compare equal and the order never depends on the heap's
//! internal layout. Same scenario + same seed therefore give bit-identical runs on any machine.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::ring::Ring;

use crate::packet::PacketId;
use crate::time::Nanos;

/// What happens. Small and `Copy`: the queue never allocates per event once warmed up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// End of the data PPDU of a successful exchange: the receiver gets the frame.
    TxEnd,
    /// End of the busy period (after the ACK, a collision or a beacon): the medium turns idle.
    ExchangeEnd,
    /// A channel-access attempt planned for this instant. `gen` invalidates stale attempts.
    Access {
        gen: u64,
    },
    /// A wired interface finished serialising its current packet.
    WireTxDone {
        iface: u32,
    },
    /// A packet reaches the far end of a wired link.
    WireDeliver {
        iface: u32,
        pkt: PacketId,
    },
    /// A shaping qdisc's watchdog fires: the interface tries to dequeue again.
    QdiscWake {
        iface: u32,
    },
    /// A flow starts (saturating sources fill their queue, CBR sources send their first packet).
    FlowStart {
        flow: u32,
    },
    /// A CBR source sends its `k`-th packet.
    FlowTick {
        flow: u32,
        k: u64,
    },
    /// A TCP connection's earliest timer (retransmission or delayed ACK); `gen` invalidates
    /// stale ones.
    TcpTimer {
        flow: u32,
        gen: u64,
    },
    /// Target beacon transmission time of the AP.
    Beacon,
    /// The warm-up ends: statistics are snapshot.
    WarmupEnd,
    /// End of a sample interval.
    Sample,
    /// Bluetooth: a master transmit slot, the end of the master's packet, the end of the
    /// slave's answer (`crate::bluetooth`).
    BtMasterTx,
    BtMasterEnd,
    BtSlaveEnd,
    /// PCF: the point coordinator's next step in a contention-free period (`wifi::cfp`).
    Cfp,
}

impl Event {
    /// Tie-break class at equal time (lower first).
    #[inline]
    pub fn class(&self) -> u8 {
        match self {
            Event::WarmupEnd => 0,
            Event::TxEnd => 1,
            Event::ExchangeEnd => 2,
            Event::Access { .. } => 3,
            Event::WireTxDone { .. } => 4,
            Event::WireDeliver { .. } => 5,
            Event::QdiscWake { .. } => 6,
            Event::FlowStart { .. } => 7,
            Event::FlowTick { .. } => 8,
            Event::Beacon => 9,
            Event::Sample => 10,
            Event::TcpTimer { .. } => 11,
            Event::BtMasterTx => 12,
            Event::BtMasterEnd => 13,
            Event::BtSlaveEnd => 14,
            Event::Cfp => 15,
        }
    }

    /// Component id used as the third key.
    #[inline]
    pub fn component(&self) -> u32 {
        match *self {
            Event::WireTxDone { iface } | Event::WireDeliver { iface, .. } | Event::QdiscWake { iface } => iface,
            Event::FlowStart { flow } | Event::FlowTick { flow, .. } | Event::TcpTimer { flow, .. } => flow,
            _ => 0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Scheduled {
    time: Nanos,
    class: u8,
    component: u32,
    seq: u64,
    event: Event,
}

impl Scheduled {
    #[inline]
    fn key(&self) -> (Nanos, u8, u32, u64) {
        (self.time, self.class, self.component, self.seq)
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    // Reversed so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Priority queue of future events.
///
/// A popped event is left at the heap's root until the next call needs the place: the first
/// event scheduled while it is handled takes its slot (one sift down, instead of the pop's sift
/// and the push's), and only if none is scheduled is it removed, at the next pop. The set of
/// pending events, and so the order they come out in, is the same as with a plain pop.
///
/// Deliveries at the far end of wired links (`WireDeliver`) are mostly scheduled in the
/// total order already (a wire serialises one packet after the other and adds a fixed
/// delay), so they need no heap: a delivery that comes after the last one in the lane, a FIFO,
/// is appended to it, any other goes into the heap. The next event is the earlier of the
/// heap's and the lane's heads under the same total order, so which of the two holds an event
/// changes nothing of the order.
pub struct EventQueue {
    heap: BinaryHeap<Scheduled>,
    /// The root is the event popped last, already handed out.
    stale_root: bool,
    /// Deliveries in the total order (time, then interface, then sequence number).
    lane: Ring<Delivery>,
    seq: u64,
    processed: u64,
    /// Time, class and component of the event popped last (the one being handled).
    last: (Nanos, u8, u32),
}

/// A pending `WireDeliver` in the lane.
#[derive(Clone, Copy, Debug)]
struct Delivery {
    time: Nanos,
    seq: u64,
    iface: u32,
    pkt: PacketId,
}

/// The class of `WireDeliver` (see [`Event::class`]).
const DELIVER_CLASS: u8 = 5;

impl Delivery {
    /// Whether this delivery comes before the heap's event `s` in the total order.
    #[inline(always)]
    fn before(&self, s: &Scheduled) -> bool {
        self.time < s.time
            || (self.time == s.time && (DELIVER_CLASS, self.iface, self.seq) < (s.class, s.component, s.seq))
    }
}

impl EventQueue {
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(cap),
            stale_root: false,
            lane: Ring::with_capacity(256, Delivery { time: Nanos::ZERO, seq: 0, iface: 0, pkt: PacketId(0) }),
            seq: 0,
            processed: 0,
            last: (Nanos::ZERO, 0, 0),
        }
    }

    #[inline(always)]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        self.seq += 1;
        if let Event::WireDeliver { iface, pkt } = event {
            // After the lane's last delivery (a later sequence number breaks a tie).
            if self.lane.back().is_none_or(|b| b.time < time || (b.time == time && b.iface <= iface)) {
                self.lane.push_back(Delivery { time, seq: self.seq, iface, pkt });
                return;
            }
        }
        let s = Scheduled { time, class: event.class(), component: event.component(), seq: self.seq, event };
        if self.stale_root {
            self.stale_root = false;
            // Sifted down into place when the guard drops.
            *self.heap.peek_mut().expect("a stale root") = s;
        } else {
            self.heap.push(s);
        }
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        match (self.heap_next(), self.lane.front()) {
            (Some(s), Some(d)) => Some(if d.before(s) { d.time } else { s.time }),
            (Some(s), None) => Some(s.time),
            (None, d) => d.map(|d| d.time),
        }
    }

    /// The earliest pending event in the heap: the root, or under a stale root the earlier of
    /// its children.
    #[inline]
    fn heap_next(&self) -> Option<&Scheduled> {
        let all = self.heap.as_slice();
        if !self.stale_root {
            return all.first();
        }
        match (all.get(1), all.get(2)) {
            // `Ord` is reversed: the greater entry is the earlier event.
            (Some(a), Some(b)) => Some(if a > b { a } else { b }),
            (a, _) => a,
        }
    }

    /// Whether `event` at `time`, had it been scheduled, would have been popped before the
    /// event being handled now. For a component's event that is skipped while nothing can
    /// observe it and scheduled only when something would (`net/wire.rs`): its time, class and
    /// component place it; a component never has two events of one class at one instant, so
    /// the sequence number it would have had does not matter.
    #[inline]
    pub fn before_current(&self, time: Nanos, event: &Event) -> bool {
        (time, event.class(), event.component()) < self.last
    }

    /// The next event.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.pop_until(Nanos(u64::MAX))
    }

    /// The next event, if it lies at or before `limit` (else it stays pending).
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Nanos) -> Option<(Nanos, Event)> {
        if self.stale_root {
            self.stale_root = false;
            self.heap.pop();
        }
        let from_lane = match (self.heap.as_slice().first(), self.lane.front()) {
            (Some(s), Some(d)) => d.before(s),
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => return None,
        };
        if from_lane {
            let d = *self.lane.front().expect("the lane's head");
            if d.time > limit {
                return None;
            }
            self.lane.pop_front();
            self.processed += 1;
            self.last = (d.time, DELIVER_CLASS, d.iface);
            return Some((d.time, Event::WireDeliver { iface: d.iface, pkt: d.pkt }));
        }
        let s = self.heap.as_slice()[0];
        if s.time > limit {
            return None;
        }
        self.stale_root = true;
        self.processed += 1;
        self.last = (s.time, s.class, s.component);
        Some((s.time, s.event))
    }

    /// An event of the model handled without going through the queue (its effect was fixed
    /// ahead, `net/wire.rs`): counted as processed, as if popped.
    #[inline]
    pub fn count_unqueued(&mut self) {
        self.processed += 1;
    }

    /// Whether `event` at `time` would be popped next: no pending event comes before it.
    #[inline]
    pub fn would_be_next(&self, time: Nanos, event: &Event) -> bool {
        let key = (time, event.class(), event.component());
        self.heap_next().is_none_or(|s| key < (s.time, s.class, s.component))
            && self.lane.front().is_none_or(|d| key < (d.time, DELIVER_CLASS, d.iface))
    }

    /// `event` at `time`, which [`Self::would_be_next`], is handled now without being queued:
    /// it becomes the event being handled (for [`Self::before_current`]) and counts as
    /// processed.
    #[inline]
    pub fn handle_unqueued(&mut self, time: Nanos, event: &Event) {
        debug_assert!(self.would_be_next(time, event));
        self.processed += 1;
        self.last = (time, event.class(), event.component());
    }

    /// Events processed so far (popped, or handled without the queue).
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Every pending event, in no particular order (end-of-run accounting only).
    pub fn pending(&self) -> impl Iterator<Item = Event> + '_ {
        let heap = self.heap.as_slice()[usize::from(self.stale_root)..].iter().map(|s| s.event);
        heap.chain(self.lane.iter().map(|d| Event::WireDeliver { iface: d.iface, pkt: d.pkt }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_class_then_component_then_insertion() {
        let mut q = EventQueue::with_capacity(8);
        q.schedule(Nanos(10), Event::Sample);
        q.schedule(Nanos(5), Event::FlowTick { flow: 2, k: 0 });
        q.schedule(Nanos(5), Event::FlowTick { flow: 1, k: 7 });
        q.schedule(Nanos(5), Event::ExchangeEnd);
        q.schedule(Nanos(5), Event::FlowTick { flow: 1, k: 8 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (Nanos(5), Event::ExchangeEnd),
                (Nanos(5), Event::FlowTick { flow: 1, k: 7 }),
                (Nanos(5), Event::FlowTick { flow: 1, k: 8 }),
                (Nanos(5), Event::FlowTick { flow: 2, k: 0 }),
                (Nanos(10), Event::Sample),
            ]
        );
        assert_eq!(q.processed(), 5);
    }

    #[test]
    fn an_unscheduled_event_is_placed_against_the_one_being_handled() {
        let mut q = EventQueue::with_capacity(8);
        q.schedule(Nanos(5), Event::WireDeliver { iface: 1, pkt: PacketId(0) });
        q.pop();
        let done = |iface| Event::WireTxDone { iface };
        // Earlier time, or the same time and a lower class (WireTxDone is class 4, before
        // WireDeliver's 5): it would have come first.
        assert!(q.before_current(Nanos(4), &done(9)));
        assert!(q.before_current(Nanos(5), &done(9)));
        // Later, or at the same time a later class.
        assert!(!q.before_current(Nanos(6), &done(0)));
        assert!(!q.before_current(Nanos(5), &Event::QdiscWake { iface: 0 }));
        // Same time and class: the component decides.
        assert!(q.before_current(Nanos(5), &Event::WireDeliver { iface: 0, pkt: PacketId(3) }));
        assert!(!q.before_current(Nanos(5), &Event::WireDeliver { iface: 2, pkt: PacketId(3) }));
    }

    proptest::proptest! {
        /// Pops and schedules in any interleaving give the events in the documented total
        /// order, as a sorted list of the pending events does (the stale root never shows).
        #[test]
        fn interleaved_pops_and_schedules_keep_the_total_order(
            ops in proptest::collection::vec((0u8..5, 0u64..40, 0u32..3), 1..200)
        ) {
            let mut q = EventQueue::with_capacity(4);
            let mut model: Vec<(Nanos, u8, u32, u64, Event)> = Vec::new();
            let mut seq = 0;
            let mut now = Nanos::ZERO;
            for (op, dt, comp) in ops {
                if op == 0 || op == 4 {
                    model.sort_by_key(|e| (e.0, e.1, e.2, e.3));
                    let want = (!model.is_empty()).then(|| model.remove(0)).map(|e| (e.0, e.4));
                    proptest::prop_assert_eq!(q.peek_time(), want.map(|w| w.0));
                    let got = q.pop();
                    proptest::prop_assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t;
                    }
                } else {
                    let ev = match op {
                        1 => Event::FlowTick { flow: comp, k: seq },
                        2 => Event::WireTxDone { iface: comp },
                        // Deliveries: in a lane while their times grow, in the heap otherwise.
                        _ => Event::WireDeliver { iface: comp, pkt: PacketId(seq as u32) },
                    };
                    seq += 1;
                    let t = now + Nanos(dt);
                    model.push((t, ev.class(), ev.component(), seq, ev));
                    q.schedule(t, ev);
                }
                let mut pending: Vec<Event> = q.pending().collect();
                let mut left: Vec<Event> = model.iter().map(|e| e.4).collect();
                let key = |e: &Event| format!("{e:?}");
                pending.sort_by_key(key);
                left.sort_by_key(key);
                proptest::prop_assert_eq!(pending, left);
            }
        }
    }
}
