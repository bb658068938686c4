//! The outbox: the one way a component reaches what lies outside it.
//!
//! A component handed the run's context ([`crate::ctx::Ctx`]) never calls another component.
//! It schedules future events here (they go straight into the event queue, so their insertion
//! order, the queue's last tie-break, is the order in which they were asked for), and it files
//! requests for the joining layer: "this packet has reached that node", "this device took
//! packets from its queue, its sources may top it up". The simulator drains the requests in
//! the order they were filed, at the points its documented processing order names
//! (`sim/mod.rs`). The request queue is a reused ring buffer: nothing is allocated per event
//! once it has grown to the run's largest burst.

use std::collections::VecDeque;

use super::queue::{Event, EventQueue};
use crate::time::Nanos;

/// Everything the event queue and the joining layer are asked for. `R` is the request type of
/// the layer above (the simulator's [`crate::ctx::Req`]).
pub struct Outbox<R> {
    queue: EventQueue,
    reqs: VecDeque<R>,
}

impl<R> Outbox<R> {
    pub fn new(queue: EventQueue) -> Self {
        Outbox { queue, reqs: VecDeque::with_capacity(256) }
    }

    /// Schedule `event` at `time`.
    #[inline]
    pub fn schedule(&mut self, time: Nanos, event: Event) {
        self.queue.schedule(time, event);
    }

    /// File a request for the joining layer.
    #[inline]
    pub fn push(&mut self, req: R) {
        self.reqs.push_back(req);
    }

    /// The oldest request not yet handled.
    #[inline]
    pub fn pop(&mut self) -> Option<R> {
        self.reqs.pop_front()
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.reqs.len()
    }

    /// The requests filed after the first `from` (oldest first).
    pub fn filed_since(&self, from: usize) -> impl Iterator<Item = &R> {
        self.reqs.range(from..)
    }

    /// Withdraw every request filed after the first `len`.
    pub fn truncate(&mut self, len: usize) {
        self.reqs.truncate(len);
    }

    #[inline]
    pub fn has_requests(&self) -> bool {
        !self.reqs.is_empty()
    }

    pub fn queue(&self) -> &EventQueue {
        &self.queue
    }

    pub fn queue_mut(&mut self) -> &mut EventQueue {
        &mut self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_come_out_in_filing_order_and_events_go_to_the_queue() {
        let mut o: Outbox<u32> = Outbox::new(EventQueue::with_capacity(4));
        o.push(3);
        o.push(1);
        o.schedule(Nanos(5), Event::Sample);
        o.push(2);
        assert_eq!((o.pop(), o.pop(), o.pop(), o.pop()), (Some(3), Some(1), Some(2), None));
        assert!(!o.has_requests());
        assert_eq!(o.queue_mut().pop(), Some((Nanos(5), Event::Sample)));
    }
}
