//! Simulated time: whole nanoseconds in a `u64` newtype.
//!
//! No floating-point time exists anywhere in the core. 2^64 ns is about 584 years, so
//! overflow is impossible for any run a scenario can describe (durations are capped at
//! `Nanos::MAX_SCENARIO`).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    /// Longest simulated duration a scenario may ask for (one year).
    pub const MAX_SCENARIO: Nanos = Nanos(365 * 24 * 3600 * 1_000_000_000);

    #[inline]
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    #[inline]
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    #[inline]
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reporting only (never fed back into the clock).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    #[inline]
    pub fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }
    /// Time to serialise `bits` at `bits_per_second`, rounded up to the next nanosecond.
    #[inline]
    pub fn for_bits(bits: u64, bits_per_second: u64) -> Nanos {
        // In 64 bits while bits * 1e9 fits (any packet), the same quotient in 128 bits after.
        match bits.checked_mul(1_000_000_000) {
            Some(num) => Nanos(num.div_ceil(bits_per_second)),
            None => Nanos((bits as u128 * 1_000_000_000u128).div_ceil(bits_per_second as u128) as u64),
        }
    }
}

impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}
impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, o: Nanos) -> Nanos {
        debug_assert!(self.0 >= o.0, "time went backwards: {} - {}", self.0, o.0);
        Nanos(self.0 - o.0)
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns.is_multiple_of(1_000_000_000) {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{}ns", ns)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_up_to_the_nanosecond() {
        // 1500 B at 100 Mbit/s = 120 us exactly.
        assert_eq!(Nanos::for_bits(12_000, 100_000_000), Nanos::from_us(120));
        // 1 bit at 3 bit/s = 333_333_333.33 ns, rounded up.
        assert_eq!(Nanos::for_bits(1, 3), Nanos(333_333_334));
        // Either side of the largest bit count whose product with 1e9 fits 64 bits.
        let last64 = u64::MAX / 1_000_000_000;
        for bits in [last64 - 1, last64, last64 + 1, last64 * 3] {
            let exact = (bits as u128 * 1_000_000_000).div_ceil(7_000_000_007);
            assert_eq!(Nanos::for_bits(bits, 7_000_000_007), Nanos(exact as u64), "{bits} bits");
        }
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        assert_eq!(Nanos::from_secs(60).to_string(), "60s");
        assert_eq!(Nanos::from_ms(200).to_string(), "200ms");
        assert_eq!(Nanos::from_us(50).to_string(), "50us");
        assert_eq!(Nanos(7).to_string(), "7ns");
    }
}
