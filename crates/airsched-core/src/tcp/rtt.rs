//! Retransmission timer per RFC 6298: SRTT and RTTVAR from RTT samples, RTO =
//! max(RTO_min, SRTT + max(G, 4·RTTVAR)) with Linux's 200 ms floor and 120 s ceiling,
//! doubled per expiry (backoff) until the next valid sample.
//! Deviation: Linux's `tcp_rtt_estimator` keeps `mdev_max` per RTT and sets RTO ≈ SRTT +
//! max(mdev, RTO_min), which is more conservative than RFC 6298; the RFC formulas are used here.

use crate::time::Nanos;

/// RFC 6298's clock granularity G: one jiffy at HZ = 1000, the resolution of Linux's
/// retransmission timer.
pub const CLOCK_GRANULARITY: Nanos = Nanos::from_ms(1);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Nanos>,
    rttvar: Nanos,
    /// RTO without backoff.
    rto: Nanos,
    backoff: u32,
    min_rtt: Option<Nanos>,
    rto_min: Nanos,
    rto_max: Nanos,
}

impl RttEstimator {
    pub fn new(rto_initial: Nanos, rto_min: Nanos, rto_max: Nanos) -> RttEstimator {
        RttEstimator { srtt: None, rttvar: Nanos::ZERO, rto: rto_initial, backoff: 0, min_rtt: None, rto_min, rto_max }
    }

    /// RFC 6298 (2.2)/(2.3) with integer nanoseconds (divisions truncate). A valid sample
    /// also clears the backoff (5.7; Linux `tcp_ack_update_rtt`).
    pub fn on_sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Nanos(r.0 / 2);
            }
            Some(srtt) => {
                let diff = srtt.0.abs_diff(r.0);
                self.rttvar = Nanos((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Some(Nanos((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var = Nanos((4 * self.rttvar.0).max(CLOCK_GRANULARITY.0));
        self.rto = (srtt + var).max(self.rto_min).min(self.rto_max);
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// The timer expired: double the RTO (5.5), up to `rto_max`.
    pub fn back_off(&mut self) {
        if self.current_rto() < self.rto_max {
            self.backoff += 1;
        }
    }

    /// The RTO to arm the timer with: the computed one times 2^backoff, at most `rto_max`.
    pub fn current_rto(&self) -> Nanos {
        // back_off stops at the ceiling, so the shift stays far below 64.
        Nanos(self.rto.0.saturating_mul(1u64 << self.backoff.min(40)).min(self.rto_max.0))
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }
    #[cfg(test)]
    pub fn rttvar(&self) -> Nanos {
        self.rttvar
    }
    #[cfg(test)]
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// Smallest sample seen (what CUBIC uses as its delay; Linux keeps a windowed minimum).
    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{RTO_INITIAL, RTO_MAX, RTO_MIN};

    fn est() -> RttEstimator {
        RttEstimator::new(RTO_INITIAL, RTO_MIN, RTO_MAX)
    }

    #[test]
    fn rfc6298_on_a_sample_sequence() {
        let mut e = est();
        assert_eq!(e.current_rto(), Nanos::from_secs(1), "initial RTO");
        e.on_sample(Nanos::from_ms(100));
        // SRTT = R, RTTVAR = R/2, RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.srtt(), Some(Nanos::from_ms(100)));
        assert_eq!(e.rttvar(), Nanos::from_ms(50));
        assert_eq!(e.current_rto(), Nanos::from_ms(300));
        e.on_sample(Nanos::from_ms(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5;
        // RTO = 112.5 + 250 = 362.5 ms.
        assert_eq!(e.rttvar(), Nanos::from_us(62_500));
        assert_eq!(e.srtt(), Some(Nanos::from_us(112_500)));
        assert_eq!(e.current_rto(), Nanos::from_us(362_500));
        e.on_sample(Nanos::from_ms(50));
        // RTTVAR = 3/4·62.5 + 1/4·62.5 = 62.5; SRTT = 7/8·112.5 + 1/8·50 = 104.6875.
        assert_eq!(e.rttvar(), Nanos::from_us(62_500));
        assert_eq!(e.srtt(), Some(Nanos(104_687_500)));
        assert_eq!(e.current_rto(), Nanos(354_687_500));
        assert_eq!(e.min_rtt(), Some(Nanos::from_ms(50)));
    }

    #[test]
    fn rto_is_floored_at_200ms_and_backs_off_to_120s() {
        let mut e = est();
        for _ in 0..50 {
            e.on_sample(Nanos::from_ms(10));
        }
        assert!(e.srtt().unwrap() >= Nanos::from_ms(10) && e.srtt().unwrap() < Nanos::from_us(10_100));
        assert_eq!(e.current_rto(), RTO_MIN, "SRTT + 4·RTTVAR ≈ 10 ms is floored at TCP_RTO_MIN");
        e.back_off();
        assert_eq!(e.current_rto(), Nanos::from_ms(400));
        e.back_off();
        assert_eq!(e.current_rto(), Nanos::from_ms(800));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.current_rto(), RTO_MAX);
        assert!(e.backoff() <= 10, "backoff stops growing at the ceiling");
        e.on_sample(Nanos::from_ms(10));
        assert_eq!(e.backoff(), 0, "a valid sample clears the backoff");
        assert_eq!(e.current_rto(), RTO_MIN);
    }
}
