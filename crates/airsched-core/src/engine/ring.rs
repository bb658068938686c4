//! A FIFO of small `Copy` items on a power-of-two buffer: push at the back, look at and pop
//! the front. The per-packet queues of the wired path use it (the event queue's lane of
//! deliveries, a wire's fixed departures): a position is a mask away from its slot, so each
//! operation is a few instructions, and nothing is allocated once the buffer has grown to the
//! run's largest backlog (it doubles when full).

/// A first-in first-out ring of `T`.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    /// Power-of-two length; slot `(head + i) & mask` holds the `i`-th item.
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    /// An empty ring with room for at least `cap` items before it grows; `fill` fills the
    /// slots no item holds.
    pub fn with_capacity(cap: usize, fill: T) -> Self {
        Ring { buf: vec![fill; cap.max(1).next_power_of_two()], head: 0, len: 0 }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The oldest item.
    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.buf.get(self.head)
    }

    /// The newest item.
    #[inline(always)]
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        self.buf.get((self.head + self.len - 1) & self.mask())
    }

    /// Take the oldest item.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        let item = *self.front()?;
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(item)
    }

    /// Append an item.
    #[inline(always)]
    pub fn push_back(&mut self, item: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let slot = (self.head + self.len) & self.mask();
        self.buf[slot] = item;
        self.len += 1;
    }

    /// Double the buffer, the items in order from its start.
    #[cold]
    fn grow(&mut self) {
        let mut buf = Vec::with_capacity(self.buf.len() * 2);
        buf.extend(self.iter().copied());
        buf.resize(self.buf.len() * 2, self.buf[0]);
        self.buf = buf;
        self.head = 0;
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any sequence of pushes and pops gives what a `VecDeque` gives, across growth and
        /// wrap-around.
        #[test]
        fn a_ring_is_a_fifo(ops in proptest::collection::vec(proptest::option::of(0u32..1000), 0..300)) {
            let mut ring = Ring::with_capacity(2, 0);
            let mut model = std::collections::VecDeque::new();
            for op in ops {
                match op {
                    Some(x) => {
                        ring.push_back(x);
                        model.push_back(x);
                    }
                    None => proptest::prop_assert_eq!(ring.pop_front(), model.pop_front()),
                }
                proptest::prop_assert_eq!(ring.len(), model.len());
                proptest::prop_assert_eq!(ring.front(), model.front());
                proptest::prop_assert_eq!(ring.back(), model.back());
                proptest::prop_assert!(ring.iter().eq(model.iter()));
            }
        }
    }
}
