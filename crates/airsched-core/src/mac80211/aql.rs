//! AQL, Airtime Queue Limits (Kan Yan and Toke Høiland-Jørgensen, Linux ≈5.5; the per-AC
//! PHY limit is Fietkau's ≈6.0 addition; as in Linux 6.18): the estimated airtime of frames
//! handed to the driver and not yet completed, per station and AC, per AC and per radio. A
//! station's TXQ may dequeue while its pending airtime is below the low limit (5 ms), or below
//! the high limit (12 ms) as long as the whole radio has less than `aql_threshold` (24 ms)
//! pending.
//! Deviations: one limit pair per AC for all stations (the kernel copies the radio's values
//! into each station; per-station overrides are not modelled); no broadcast/multicast pending
//! counter; the caller computes the estimate (`ieee80211_calc_expected_tx_airtime`) and passes
//! it through [`tx_time_est`].

use super::{Ac, StationId, NUM_ACS};

/// `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`, µs.
pub const DEFAULT_AQL_LIMIT_LOW_US: u32 = 5_000;
/// `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_H`, µs.
pub const DEFAULT_AQL_LIMIT_HIGH_US: u32 = 12_000;
/// `IEEE80211_AQL_THRESHOLD`, µs: above this much radio-wide pending airtime stations are
/// held to the low limit.
pub const DEFAULT_AQL_THRESHOLD_US: u32 = 24_000;

/// `ieee80211_info_set_tx_time_est` round trip: the estimate is stored in a 10-bit field in
/// units of 4 µs after clamping to 4095 µs, so what is added to (and later subtracted from)
/// the pending counters is `min(est, 4095)` rounded down to a multiple of 4.
pub fn tx_time_est(est_us: u32) -> u32 {
    (est_us.min(4095) >> 2) << 2
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AqlParams {
    /// debugfs `aql_enable`: when off, every check passes (pending airtime is still counted).
    pub enabled: bool,
    /// `aql_txq_limit_low[ac]`, µs.
    pub limit_low_us: [u32; NUM_ACS],
    /// `aql_txq_limit_high[ac]`, µs.
    pub limit_high_us: [u32; NUM_ACS],
    /// `aql_threshold`, µs.
    pub threshold_us: u32,
}

impl Default for AqlParams {
    fn default() -> AqlParams {
        AqlParams {
            enabled: true,
            limit_low_us: [DEFAULT_AQL_LIMIT_LOW_US; NUM_ACS],
            limit_high_us: [DEFAULT_AQL_LIMIT_HIGH_US; NUM_ACS],
            threshold_us: DEFAULT_AQL_THRESHOLD_US,
        }
    }
}

/// Pending-airtime bookkeeping of one radio.
pub struct Aql {
    params: AqlParams,
    /// `sta->airtime[ac].aql_tx_pending`, µs.
    sta_pending: Vec<[u32; NUM_ACS]>,
    /// `local->aql_ac_pending_airtime[ac]`, µs.
    ac_pending: [u32; NUM_ACS],
    /// `local->aql_total_pending_airtime`, µs.
    total_pending: u32,
}

/// Subtract without going below zero. Completing more than was queued is a caller bug, which
/// debug builds report; release builds clamp at zero as the kernel does (`atomic_cmpxchg` to 0).
#[inline]
fn release(counter: &mut u32, us: u32, what: &str) {
    debug_assert!(*counter >= us, "AQL {what} pending would go negative: {} - {us}", *counter);
    *counter = counter.saturating_sub(us);
}

impl Aql {
    pub fn new(params: AqlParams, n_stations: usize) -> Aql {
        Aql { params, sta_pending: vec![[0; NUM_ACS]; n_stations], ac_pending: [0; NUM_ACS], total_pending: 0 }
    }

    /// `ieee80211_txq_airtime_check`: may the station's TXQ of this AC dequeue another frame?
    pub fn can_queue(&self, sta: StationId, ac: Ac) -> bool {
        if !self.params.enabled {
            return true;
        }
        let pending = self.sta_pending[sta.0 as usize][ac.index()];
        pending < self.params.limit_low_us[ac.index()]
            || (self.total_pending < self.params.threshold_us && pending < self.params.limit_high_us[ac.index()])
    }

    /// `ieee80211_txq_schedule_airtime_check` (≈6.0): may a scheduling round of this AC start,
    /// with `active_txqs` TXQs on its active list? Allowed while the AC's pending airtime is
    /// below `(active_txqs - 1) * low / 2 + high`.
    pub fn ac_can_schedule(&self, ac: Ac, active_txqs: usize) -> bool {
        if !self.params.enabled || active_txqs == 0 {
            // The kernel's unsigned (0 - 1) makes the limit huge with an empty list.
            return true;
        }
        let i = ac.index();
        let limit =
            (active_txqs as u64 - 1) * self.params.limit_low_us[i] as u64 / 2 + self.params.limit_high_us[i] as u64;
        (self.ac_pending[i] as u64) < limit
    }

    /// A frame with estimated airtime `est_us` (after [`tx_time_est`]) was dequeued for the
    /// station (`ieee80211_sta_update_pending_airtime(…, tx_completed = false)`).
    pub fn on_queued(&mut self, sta: StationId, ac: Ac, est_us: u32) {
        self.sta_pending[sta.0 as usize][ac.index()] += est_us;
        self.ac_pending[ac.index()] += est_us;
        self.total_pending += est_us;
    }

    /// The frame's TX status arrived (or it was freed): release the same estimate.
    pub fn on_completed(&mut self, sta: StationId, ac: Ac, est_us: u32) {
        release(&mut self.sta_pending[sta.0 as usize][ac.index()], est_us, "station");
        release(&mut self.ac_pending[ac.index()], est_us, "AC");
        release(&mut self.total_pending, est_us, "radio");
    }

    /// `aql_tx_pending` of a station and AC, µs.
    pub fn pending(&self, sta: StationId, ac: Ac) -> u32 {
        self.sta_pending[sta.0 as usize][ac.index()]
    }

    #[cfg(test)]
    pub fn ac_pending(&self, ac: Ac) -> u32 {
        self.ac_pending[ac.index()]
    }

    pub fn total_pending(&self) -> u32 {
        self.total_pending
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const S0: StationId = StationId(0);
    const S1: StationId = StationId(1);

    #[test]
    fn a_station_blocks_at_the_low_limit_once_the_radio_is_busy() {
        let mut aql = Aql::new(AqlParams::default(), 4);
        // Radio total below 24 ms: the high limit (12 ms) applies.
        for _ in 0..2 {
            aql.on_queued(S0, Ac::Be, 4_000);
        }
        assert!(aql.can_queue(S0, Ac::Be), "8 ms < 12 ms with the radio at 8 ms");
        aql.on_queued(S0, Ac::Be, 3_996);
        assert!(aql.can_queue(S0, Ac::Be), "11.996 ms < 12 ms");
        aql.on_queued(S0, Ac::Be, 4);
        assert!(!aql.can_queue(S0, Ac::Be), "12 ms is not below the high limit");
        assert!(aql.can_queue(S0, Ac::Vi), "other ACs are counted apart");
        aql.on_completed(S0, Ac::Be, 4);
        assert!(aql.can_queue(S0, Ac::Be), "unblocks as soon as it is below again");
        // Other stations fill the radio to 24 ms: station 0 (11.996 ms) is now over its low
        // limit and the radio over the threshold.
        aql.on_queued(S1, Ac::Be, 6_000);
        aql.on_queued(StationId(2), Ac::Vi, 6_004);
        assert_eq!(aql.total_pending(), 24_000);
        assert!(!aql.can_queue(S0, Ac::Be));
        assert!(!aql.can_queue(S1, Ac::Be), "6 ms >= 5 ms low limit, radio at the threshold");
        assert!(aql.can_queue(StationId(3), Ac::Be), "an idle station is below its low limit");
        aql.on_completed(S1, Ac::Be, 1_001);
        assert!(aql.can_queue(S1, Ac::Be), "4.999 ms < 5 ms");
        // Below the threshold again, station 0 may go up to 12 ms.
        assert_eq!(aql.total_pending(), 22_999);
        assert!(aql.can_queue(S0, Ac::Be));
        let off = Aql { params: AqlParams { enabled: false, ..AqlParams::default() }, ..aql };
        assert!(off.can_queue(S0, Ac::Be) && off.ac_can_schedule(Ac::Be, 1));
    }

    #[test]
    fn the_per_ac_phy_limit_grows_by_half_a_low_limit_per_active_txq() {
        let mut aql = Aql::new(AqlParams::default(), 3);
        aql.on_queued(S0, Ac::Be, 11_999);
        assert!(aql.ac_can_schedule(Ac::Be, 1), "one TXQ: below 12 ms");
        aql.on_queued(S1, Ac::Be, 1);
        assert!(!aql.ac_can_schedule(Ac::Be, 1));
        assert!(aql.ac_can_schedule(Ac::Be, 2), "two TXQs: 12 + 2.5 ms");
        aql.on_queued(S1, Ac::Be, 2_500);
        assert!(!aql.ac_can_schedule(Ac::Be, 2) && aql.ac_can_schedule(Ac::Be, 3));
        assert!(aql.ac_can_schedule(Ac::Vo, 1) && aql.ac_can_schedule(Ac::Be, 0));
    }

    #[test]
    fn estimates_are_stored_in_4us_units_up_to_4092() {
        assert_eq!(
            [tx_time_est(0), tx_time_est(3), tx_time_est(1_001), tx_time_est(4_095), tx_time_est(12_000)],
            [0, 0, 1_000, 4_092, 4_092]
        );
    }

    #[test]
    #[cfg_attr(debug_assertions, should_panic(expected = "would go negative"))]
    fn completing_more_than_queued_never_goes_negative() {
        let mut aql = Aql::new(AqlParams::default(), 1);
        aql.on_queued(S0, Ac::Bk, 100);
        aql.on_completed(S0, Ac::Bk, 250);
        // Release builds clamp at zero everywhere.
        assert_eq!((aql.pending(S0, Ac::Bk), aql.ac_pending(Ac::Bk), aql.total_pending()), (0, 0, 0));
        assert!(aql.can_queue(S0, Ac::Bk));
    }

    proptest! {
        #[test]
        fn pending_airtime_returns_to_zero(frames in prop::collection::vec((0u16..4, 0usize..4, 0u32..6_000, any::<bool>()), 1..300)) {
            // Queue frames and complete a random subset as they go (in any order), then
            // complete the rest: every counter is the sum of the outstanding estimates, and
            // zero at the end.
            let mut aql = Aql::new(AqlParams::default(), 4);
            let mut outstanding: Vec<(StationId, Ac, u32)> = vec![];
            for (sta, ac, est, complete_one) in frames {
                let f = (StationId(sta), Ac::ALL[ac], tx_time_est(est));
                aql.on_queued(f.0, f.1, f.2);
                outstanding.push(f);
                if complete_one {
                    let (s, a, e) = outstanding.swap_remove(est as usize % outstanding.len());
                    aql.on_completed(s, a, e);
                }
                let total: u32 = outstanding.iter().map(|f| f.2).sum();
                prop_assert_eq!(aql.total_pending(), total);
                for a in Ac::ALL {
                    let ac_sum: u32 = outstanding.iter().filter(|f| f.1 == a).map(|f| f.2).sum();
                    prop_assert_eq!(aql.ac_pending(a), ac_sum);
                    let s0: u32 = outstanding.iter().filter(|f| f.1 == a && f.0 == S0).map(|f| f.2).sum();
                    prop_assert_eq!(aql.pending(S0, a), s0);
                    // The check agrees with its definition.
                    let ok = s0 < 5_000 || (total < 24_000 && s0 < 12_000);
                    prop_assert_eq!(aql.can_queue(S0, a), ok);
                }
            }
            for (s, a, e) in outstanding.drain(..) {
                aql.on_completed(s, a, e);
            }
            prop_assert_eq!(aql.total_pending(), 0);
            for s in 0..4 {
                for a in Ac::ALL {
                    prop_assert_eq!(aql.pending(StationId(s), a), 0);
                    prop_assert_eq!(aql.ac_pending(a), 0);
                }
            }
        }
    }
}
