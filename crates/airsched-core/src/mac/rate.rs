//! Per-link rate control: Fixed, ARF, AARF and legacy Minstrel, as sans-I/O state machines that
//! are told `now` and every attempt's outcome.
//!
//! Versions followed (docs/model-rate-control.md has the detail):
//! * ARF and AARF: ns-3 `src/wifi/model/rate-control/{arf,aarf}-wifi-manager.cc` (ns-3-dev),
//!   parameters and state machine, including its "recovery" rule and AARF's timer doubling.
//! * HostAP: the host-based rate control of the HostAP driver's AP mode (`hostap_ap.c`,
//!   `ap_update_sta_tx_rate` and `hostap_handle_sta_tx_exc`; HostAP 0.x for Linux 2.4 and the
//!   kernel's drivers/net/wireless/intersil/hostap, e.g. Linux 4.19): one rate per frame, chosen
//!   when the driver hands the frame to the card.
//! * Minstrel: Linux `net/mac80211/rc80211_minstrel.c` of the 4.x series (the `tx_status_ext`,
//!   `prob_ewma`/`prob_ewmv` form, before the 5.x averaging rework; EWMA 96/128 = 75 % old,
//!   throughput with the 90 % probability cap and 0 below 10 %), with ns-3's `MinstrelWifiManager`
//!   for the retry chain of a sample frame.
//!
//! Deviations: probabilities are 16-bit fixed point (Linux: 12 bits); a directly sampled rate
//! takes stage 1 and `max_tp[0]` stage 2 (ns-3; Linux 4.x keeps `max_tp[1]` in stage 2); the DCF's
//! retry limit, not the chain, ends a frame, so stages past the chain's end use the lowest rate;
//! statistics start their first 100 ms interval at the first call rather than at association.
//!
//! Rates are indices `0..n` into a per-link table of ascending rates; the controller knows each
//! rate only through the airtime of one attempt of a reference frame.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::phy::dsss;
use crate::time::Nanos;

/// Which rate control a link runs (this file; Minstrel-HT in mac/minstrel_ht.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateControl {
    /// Always the station's `rate`.
    Fixed,
    Arf,
    Aarf,
    Minstrel,
    /// 802.11n only: Minstrel-HT of Linux 4.11 (mac/minstrel_ht.rs) with ath9k's hardware
    /// retries of an A-MPDU through its multi-rate retry chain.
    MinstrelHt,
}

crate::words::words!(
    RateControl:
    "fixed" => RateControl::Fixed,
    "arf" => RateControl::Arf,
    "aarf" => RateControl::Aarf,
    "minstrel" => RateControl::Minstrel,
    "minstrel_ht" => RateControl::MinstrelHt,
);

// ---------------------------------------------------------------------------------------------
// ARF / AARF constants (ns-3 attribute defaults).

/// ns-3 `ArfWifiManager::SuccessThreshold`: consecutive ACKed attempts before a step up.
pub const ARF_SUCCESS_THRESHOLD: u32 = 10;
/// ns-3 `ArfWifiManager::TimerThreshold`: attempts since the last rate change before a step up.
pub const ARF_TIMER_THRESHOLD: u32 = 15;
/// ns-3 `AarfWifiManager::MinSuccessThreshold` (the starting and reset value).
pub const AARF_MIN_SUCCESS_THRESHOLD: u32 = 10;
/// ns-3 `AarfWifiManager::MinTimerThreshold` (the starting and reset value).
pub const AARF_MIN_TIMER_THRESHOLD: u32 = 15;
/// ns-3 `AarfWifiManager::MaxSuccessThreshold` (the paper caps at 50).
pub const AARF_MAX_SUCCESS_THRESHOLD: u32 = 60;
/// ns-3 `AarfWifiManager::SuccessK` and `TimerK`: factor applied after a failed probe.
pub const AARF_K: u32 = 2;

// ---------------------------------------------------------------------------------------------
// Minstrel constants (Linux rc80211_minstrel.c / .h, 4.x).

/// `mp->update_interval` = 100 ms (ns-3 `UpdateStatistics` = 0.1 s).
pub const MINSTREL_UPDATE_INTERVAL: Nanos = Nanos::from_ms(100);
/// `EWMA_LEVEL` / `EWMA_DIV` = 96/128: the old average keeps 75 % (ns-3 `EWMA` = 75).
pub const MINSTREL_EWMA_LEVEL: i64 = 96;
pub const MINSTREL_EWMA_DIV: i64 = 128;
/// `mp->lookaround_rate_mrr` = 10 % of frames are look-around samples (ns-3 `LookAroundRate`).
pub const MINSTREL_LOOKAROUND_PERCENT: u32 = 10;
/// `SAMPLE_COLUMNS`: columns of the random sample table (ns-3 `SampleColumn`).
pub const MINSTREL_SAMPLE_COLUMNS: usize = 10;
/// `mp->segment_size` = 6000 us: each retry-chain stage should fit in this much air time.
pub const MINSTREL_SEGMENT: Nanos = Nanos::from_ms(6);
/// Reference payload of the throughput estimate (Linux `perfect_tx_time` of 1200 B, ns-3
/// `PacketLength`). The caller's reference airtimes should be for a frame of about this size.
pub const MINSTREL_REF_PAYLOAD_BYTES: u64 = 1200;
/// Per-rate direct samples allowed per interval when the rate's probability is below 10 % or
/// above 95 % (`mr->sample_limit = 4`).
pub const MINSTREL_SAMPLE_LIMIT: u32 = 4;
/// A slower rate not tried for this many intervals is sampled directly, not deferred.
pub const MINSTREL_MAX_SAMPLE_SKIPPED: u32 = 20;
/// The look-around counters restart after this many frames (`total_packets >= 10000`).
pub const MINSTREL_COUNTER_RESET: u32 = 10_000;

/// Fixed-point probability: `PROB_ONE` is 100 %.
const PROB_SHIFT: u32 = 16;
const PROB_ONE: u32 = 1 << PROB_SHIFT;
const fn prob_pct(pct: u32) -> u32 {
    (pct << PROB_SHIFT) / 100
}
/// Below this the throughput estimate is 0 (`MINSTREL_FRAC(10, 100)`).
const PROB_MIN_TP: u32 = prob_pct(10);
/// The throughput estimate caps the probability here (`MINSTREL_FRAC(90, 100)`).
const PROB_CAP_TP: u32 = prob_pct(90);
/// "Robust" threshold of the max-probability choice and of the sample limit.
const PROB_ROBUST: u32 = prob_pct(95);

/// Contention parameters used only to size Minstrel's per-stage retry counts (the mean backoff
/// of retry k is `cw_k / 2` slots, CW doubling from `cw_min`), as Linux `minstrel_rate_init` and
/// ns-3 `CalculateTimeUnicastPacket` do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contention {
    pub slot: Nanos,
    pub cw_min: u32,
    pub cw_max: u32,
}

impl Contention {
    /// 802.11b DCF: 20 us slot, CW 31..1023 (ns-3 uses the PHY's slot and CW 31..1023 here; Linux
    /// uses a fixed 9 us slot and CW 15..1023).
    pub const DSSS: Contention = Contention { slot: dsss::SLOT, cw_min: 31, cw_max: 1023 };
}

/// Which algorithm a link runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateAlgo {
    /// Always this rate index.
    Fixed(u8),
    Arf,
    Aarf,
    Minstrel,
    /// HostAP's AP-mode rate control ([`HostAp`]); the caller reports each frame handed to the
    /// card with [`RateCtl::on_handed`].
    HostAp,
}

// ---------------------------------------------------------------------------------------------
// HostAP constants (hostap_ap.h).

/// `WLAN_RATE_UPDATE_COUNT`: "Try to increase TX rate after # successfully sent consecutive
/// packets" (counted as frames handed to the card since the last failed one).
pub const HOSTAP_RATE_UPDATE_COUNT: u32 = 50;
/// `WLAN_RATE_DECREASE_THRESHOLD`: "Decrease TX rate after # consecutive dropped packets" (frames
/// the firmware gave up on: a TxExc event).
pub const HOSTAP_RATE_DECREASE_THRESHOLD: u32 = 2;

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum RateCtlError {
    #[error("rate control: the rate table is empty; give the airtime of at least one rate")]
    NoRates,
    #[error("rate control: {0} rates given, at most 255 are supported (indices are u8)")]
    TooManyRates(usize),
    #[error("rate control: fixed rate index {index} is out of range, the table has {n} rates (0..{n})")]
    FixedOutOfRange { index: u8, n: usize },
}

/// The rate controller of one (transmitter, receiver) link.
#[derive(Clone, Debug)]
pub struct RateCtl {
    state: State,
}

#[derive(Clone, Debug)]
enum State {
    Fixed(u8),
    Arf(Arf),
    Minstrel(Box<Minstrel>),
    HostAp(HostAp),
}

impl RateCtl {
    /// `ref_airtime[i]`: airtime of one attempt of a ~1200-byte reference frame at rate `i`
    /// (DATA + SIFS + ACK; DIFS and the mean CWmin backoff may be included), rates ascending.
    /// `retry_limit`: attempts of one frame before the DCF drops it (Minstrel's `max_retry`: the
    /// per-stage cap and the lowest-rate stage). `rng` seeds Minstrel's sample table.
    pub fn new(
        algo: RateAlgo,
        ref_airtime: &[Nanos],
        retry_limit: u32,
        rng: Xoshiro256PlusPlus,
    ) -> Result<RateCtl, RateCtlError> {
        RateCtl::with_contention(algo, ref_airtime, retry_limit, rng, Contention::DSSS)
    }

    /// As [`RateCtl::new`], with the contention parameters of a non-DSSS PHY.
    pub fn with_contention(
        algo: RateAlgo,
        ref_airtime: &[Nanos],
        retry_limit: u32,
        rng: Xoshiro256PlusPlus,
        contention: Contention,
    ) -> Result<RateCtl, RateCtlError> {
        let n = ref_airtime.len();
        if n == 0 {
            return Err(RateCtlError::NoRates);
        }
        if n > u8::MAX as usize {
            return Err(RateCtlError::TooManyRates(n));
        }
        let top = (n - 1) as u8;
        let state = match algo {
            RateAlgo::Fixed(index) if index as usize >= n => {
                return Err(RateCtlError::FixedOutOfRange { index, n });
            }
            RateAlgo::Fixed(index) => State::Fixed(index),
            RateAlgo::Arf => State::Arf(Arf::new(top, false)),
            RateAlgo::Aarf => State::Arf(Arf::new(top, true)),
            RateAlgo::HostAp => State::HostAp(HostAp::new(top)),
            RateAlgo::Minstrel => State::Minstrel(Box::new(Minstrel::new(
                ref_airtime,
                retry_limit.clamp(1, u8::MAX as u32) as u8,
                rng,
                contention,
            ))),
        };
        Ok(RateCtl { state })
    }

    /// Rate index for attempt `attempt` (1-based) of the current frame. Call exactly once per
    /// attempt; attempt 1 starts a frame (Minstrel then builds the frame's retry chain).
    pub fn rate_for_attempt(&mut self, now: Nanos, attempt: u32) -> u8 {
        debug_assert!(attempt >= 1, "attempts are 1-based");
        match &mut self.state {
            State::Fixed(r) => *r,
            State::Arf(a) => a.rate,
            State::HostAp(h) => h.frame_rate(),
            State::Minstrel(m) => {
                if attempt == 1 {
                    m.begin_frame(now);
                }
                m.chain_rate(attempt)
            }
        }
    }

    /// Outcome of one attempt at `rate`: `acked` is true if its ACK arrived. A missed ACK, for a
    /// collision or a channel error alike, is a failure.
    pub fn on_attempt(&mut self, _now: Nanos, rate: u8, acked: bool) {
        match &mut self.state {
            State::Fixed(_) => {}
            State::Arf(a) => {
                debug_assert_eq!(rate, a.rate, "ARF reports must be for the rate it chose");
                if acked {
                    a.on_data_ok()
                } else {
                    a.on_data_failed()
                }
            }
            State::Minstrel(m) => m.on_attempt(rate, acked),
            State::HostAp(h) => h.last_rate = rate,
        }
    }

    /// A frame is handed to the card (HostAP: `hostap_handle_sta_tx`, before the frame waits in
    /// the card's transmit buffers); the other algorithms choose at the first attempt and ignore
    /// it.
    pub fn on_handed(&mut self) {
        if let State::HostAp(h) = &mut self.state {
            h.on_handed();
        }
    }

    /// The current frame is finished: delivered, or dropped at the retry limit.
    pub fn on_frame_end(&mut self, now: Nanos, delivered: bool) {
        // ARF/AARF: ns-3's ReportFinalDataFailed does nothing; the last attempt was reported.
        match &mut self.state {
            State::Minstrel(m) => m.end_frame(now),
            State::HostAp(h) => h.on_frame_end(delivered),
            State::Fixed(_) | State::Arf(_) => {}
        }
    }

    /// The controller's current best rate (ARF's rate, Minstrel's `max_tp[0]`), for reporting.
    pub fn current(&self) -> u8 {
        match &self.state {
            State::Fixed(r) => *r,
            State::Arf(a) => a.rate,
            State::HostAp(h) => h.rate,
            State::Minstrel(m) => m.max_tp[0],
        }
    }

    /// The current (or last) frame is a Minstrel look-around sample.
    #[cfg(test)]
    pub fn is_sampling(&self) -> bool {
        matches!(&self.state, State::Minstrel(m) if m.frame_sample != Sample::No)
    }
}

// ---------------------------------------------------------------------------------------------
// ARF and AARF (ns-3 ArfWifiManager / AarfWifiManager).

/// Every data attempt is reported on its own, first transmissions and retransmissions alike
/// (ns-3: "ARF handles each data transmission independently"): an ACK is a success, a missed ACK
/// a failure.
#[derive(Clone, Debug)]
struct Arf {
    adaptive: bool,
    top: u8,
    rate: u8,
    /// Consecutive successes.
    success: u32,
    /// Consecutive failures.
    failed: u32,
    /// Attempts since the last rate change (or the last reset by failures).
    timer: u32,
    /// The last step was up and no attempt has succeeded since: the next failure falls back.
    recovery: bool,
    success_threshold: u32,
    timer_threshold: u32,
}

impl Arf {
    fn new(top: u8, adaptive: bool) -> Arf {
        let (success_threshold, timer_threshold) = if adaptive {
            (AARF_MIN_SUCCESS_THRESHOLD, AARF_MIN_TIMER_THRESHOLD)
        } else {
            (ARF_SUCCESS_THRESHOLD, ARF_TIMER_THRESHOLD)
        };
        Arf {
            adaptive,
            top,
            rate: 0,
            success: 0,
            failed: 0,
            timer: 0,
            recovery: false,
            success_threshold,
            timer_threshold,
        }
    }

    fn on_data_ok(&mut self) {
        self.timer = self.timer.saturating_add(1);
        self.success = self.success.saturating_add(1);
        self.failed = 0;
        self.recovery = false;
        let due = self.success == self.success_threshold || self.timer == self.timer_threshold;
        if due && self.rate < self.top {
            self.rate += 1;
            self.timer = 0;
            self.success = 0;
            self.recovery = true;
        }
    }

    fn on_data_failed(&mut self) {
        self.timer = self.timer.saturating_add(1);
        self.failed = self.failed.saturating_add(1);
        self.success = 0;
        if self.recovery {
            // Only the first failure after a step up falls back; later failures before the next
            // success only restart the timer (ns-3: recovery spans retransmissions).
            if self.failed == 1 {
                if self.adaptive {
                    self.success_threshold = (self.success_threshold * AARF_K).min(AARF_MAX_SUCCESS_THRESHOLD);
                    // ns-3 bounds the timer below by MinSuccessThreshold and not above.
                    self.timer_threshold = self.timer_threshold.saturating_mul(AARF_K).max(AARF_MIN_SUCCESS_THRESHOLD);
                }
                self.rate = self.rate.saturating_sub(1);
            }
            self.timer = 0;
        } else {
            // Every second consecutive failure steps down.
            if self.failed.is_multiple_of(2) {
                if self.adaptive {
                    self.success_threshold = AARF_MIN_SUCCESS_THRESHOLD;
                    self.timer_threshold = AARF_MIN_TIMER_THRESHOLD;
                }
                self.rate = self.rate.saturating_sub(1);
            }
            if self.failed >= 2 {
                self.timer = 0;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HostAP (hostap_ap.c, AP mode with host-based TX rate control, its default there).

/// The station's `tx_rate_idx` and its two counters. A frame takes the current rate when it is
/// handed to the card (`ap_update_sta_tx_rate`, which also counts it as sent, clears the count of
/// consecutive failures and, after `WLAN_RATE_UPDATE_COUNT` frames since the last failure, steps
/// the rate up for the next frames); the firmware sends every attempt of the frame at that rate.
/// A frame the firmware gives up on (TxExc, `hostap_handle_sta_tx_exc`) clears the sent count and
/// counts a failure; at `WLAN_RATE_DECREASE_THRESHOLD` of them, if the frame went at or below the
/// current rate, the rate steps down. A new station starts at its highest rate
/// (`hostap_add_sta`). Frames between the hand-over and the air wait in the card in order, so
/// the rates of the frames handed and not yet done are a FIFO.
#[derive(Clone, Debug)]
struct HostAp {
    top: u8,
    rate: u8,
    since_last_failure: u32,
    consecutive_exc: u32,
    /// Rates of the frames handed to the card and not yet done, oldest first.
    handed: std::collections::VecDeque<u8>,
    /// The rate of the last attempt reported (the frame's, `meta->rate`).
    last_rate: u8,
}

impl HostAp {
    fn new(top: u8) -> HostAp {
        HostAp {
            top,
            rate: top,
            since_last_failure: 0,
            consecutive_exc: 0,
            handed: std::collections::VecDeque::with_capacity(8),
            last_rate: top,
        }
    }

    fn on_handed(&mut self) {
        self.handed.push_back(self.rate);
        self.since_last_failure += 1;
        self.consecutive_exc = 0;
        if self.since_last_failure >= HOSTAP_RATE_UPDATE_COUNT && self.rate < self.top {
            self.rate += 1;
            self.since_last_failure = 0;
        }
    }

    /// The rate of the oldest frame in the card (the one the MAC sends); a frame nobody
    /// reported handing (a caller without the hook) takes the current rate.
    fn frame_rate(&self) -> u8 {
        self.handed.front().copied().unwrap_or(self.rate)
    }

    fn on_frame_end(&mut self, delivered: bool) {
        let frame_rate = self.handed.pop_front().unwrap_or(self.last_rate);
        if delivered {
            return;
        }
        self.since_last_failure = 0;
        self.consecutive_exc += 1;
        if self.consecutive_exc >= HOSTAP_RATE_DECREASE_THRESHOLD && self.rate > 0 && frame_rate <= self.rate {
            self.rate -= 1;
            self.consecutive_exc = 0;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Minstrel (Linux rc80211_minstrel.c, 4.x).

#[derive(Clone, Debug)]
struct MinstrelRate {
    airtime: Nanos,
    /// Attempts that fit in `MINSTREL_SEGMENT` (at least 1, at most `max_retry`).
    retry_count: u8,
    /// Tries this rate gets in a chain stage.
    adjusted_retry_count: u8,
    /// Direct samples left this interval; `None` is unlimited.
    sample_limit: Option<u32>,
    /// Intervals in a row without an attempt.
    sample_skipped: u32,
    attempts: u32,
    success: u32,
    att_hist: u64,
    succ_hist: u64,
    prob_ewma: u32,
    /// `expected_tp()` as of the last statistics update.
    tp: u64,
}

impl MinstrelRate {
    /// Expected throughput in bit/s: min(p, 90 %) x 1200 B / airtime, 0 if p < 10 %.
    fn expected_tp(&self) -> u64 {
        if self.prob_ewma < PROB_MIN_TP {
            return 0;
        }
        let p = self.prob_ewma.min(PROB_CAP_TP) as u64;
        let bits_ns = MINSTREL_REF_PAYLOAD_BYTES * 8 * 1_000_000_000;
        ((p * bits_ns) >> PROB_SHIFT) / self.airtime.0.max(1)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sample {
    No,
    /// The sample rate is faster than `max_tp[0]`: it takes stage 1.
    Direct,
    /// The sample rate is slower: it takes stage 2, behind `max_tp[0]`.
    Deferred,
}

/// One chain stage: a rate and its number of tries.
type Stage = (u8, u8);

#[derive(Clone, Debug)]
struct Minstrel {
    rates: Vec<MinstrelRate>,
    /// Row-major `[row][column]`; each column is a random permutation of the rate indices.
    sample_table: Vec<u8>,
    sample_row: usize,
    sample_column: usize,
    max_tp: [u8; 2],
    max_prob: u8,
    max_retry: u8,
    total_packets: u32,
    sample_packets: u32,
    sample_deferred: u32,
    next_update: Option<Nanos>,
    chain: [Stage; 4],
    frame_sample: Sample,
}

impl Minstrel {
    fn new(ref_airtime: &[Nanos], max_retry: u8, mut rng: Xoshiro256PlusPlus, contention: Contention) -> Minstrel {
        let rates: Vec<MinstrelRate> = ref_airtime
            .iter()
            .map(|&airtime| {
                let tries = tries_within_segment(airtime, contention, max_retry);
                MinstrelRate {
                    airtime,
                    retry_count: tries,
                    adjusted_retry_count: tries,
                    sample_limit: None,
                    sample_skipped: 0,
                    attempts: 0,
                    success: 0,
                    att_hist: 0,
                    succ_hist: 0,
                    prob_ewma: 0,
                    tp: 0,
                }
            })
            .collect();
        let n = rates.len();
        let mut sample_table = vec![0u8; n * MINSTREL_SAMPLE_COLUMNS];
        for col in 0..MINSTREL_SAMPLE_COLUMNS {
            // Fisher-Yates over the column (Linux fills it by random offsets and linear probing).
            let mut perm: Vec<u8> = (0..n as u8).collect();
            for i in (1..n).rev() {
                perm.swap(i, rng.random_range(0..=i));
            }
            for (row, r) in perm.into_iter().enumerate() {
                sample_table[row * MINSTREL_SAMPLE_COLUMNS + col] = r;
            }
        }
        let mut m = Minstrel {
            rates,
            sample_table,
            sample_row: 0,
            sample_column: 0,
            max_tp: [0, 0],
            max_prob: 0,
            max_retry,
            total_packets: 0,
            sample_packets: 0,
            sample_deferred: 0,
            next_update: None,
            chain: [(0, 1); 4],
            frame_sample: Sample::No,
        };
        m.chain = m.normal_chain();
        m
    }

    fn stage(&self, rate: u8) -> Stage {
        (rate, self.rates[rate as usize].adjusted_retry_count)
    }

    /// `max_tp[0]`, `max_tp[1]`, `max_prob`, then the lowest rate for `max_retry` tries.
    fn normal_chain(&self) -> [Stage; 4] {
        [self.stage(self.max_tp[0]), self.stage(self.max_tp[1]), self.stage(self.max_prob), (0, self.max_retry)]
    }

    /// Linux `minstrel_get_rate`: decide whether this frame samples, and build its chain.
    fn begin_frame(&mut self, now: Nanos) {
        self.maybe_update_stats(now);
        self.total_packets += 1;
        self.frame_sample = Sample::No;
        self.chain = self.normal_chain();

        let n = self.rates.len() as i64;
        let planned = (self.total_packets * MINSTREL_LOOKAROUND_PERCENT / 100) as i64;
        let delta = planned - (self.sample_packets + self.sample_deferred / 2) as i64;
        if delta < 0 {
            return;
        }
        if self.total_packets >= MINSTREL_COUNTER_RESET {
            self.total_packets = 0;
            self.sample_packets = 0;
            self.sample_deferred = 0;
        } else if delta > 2 * n {
            // Forget a sampling backlog rather than burst samples when the link gets worse.
            self.sample_packets += (delta - 2 * n) as u32;
        }

        let ndx = self.next_sample();
        let sampled = &self.rates[ndx as usize];
        let best = &self.rates[self.max_tp[0] as usize];
        if sampled.airtime > best.airtime && sampled.sample_skipped < MINSTREL_MAX_SAMPLE_SKIPPED {
            self.chain[1] = self.stage(ndx);
            self.sample_deferred += 1;
            self.frame_sample = Sample::Deferred;
        } else {
            let rate = &mut self.rates[ndx as usize];
            match rate.sample_limit {
                Some(0) => return,
                Some(ref mut left) => *left -= 1,
                None => {}
            }
            self.sample_packets += 1;
            self.chain[1] = self.stage(self.max_tp[0]);
            self.chain[0] = self.stage(ndx);
            self.frame_sample = Sample::Direct;
        }
    }

    fn next_sample(&mut self) -> u8 {
        let r = self.sample_table[self.sample_row * MINSTREL_SAMPLE_COLUMNS + self.sample_column];
        self.sample_row += 1;
        if self.sample_row >= self.rates.len() {
            self.sample_row = 0;
            self.sample_column = (self.sample_column + 1) % MINSTREL_SAMPLE_COLUMNS;
        }
        r
    }

    fn chain_rate(&self, attempt: u32) -> u8 {
        let mut k = attempt;
        for &(rate, tries) in &self.chain[..3] {
            if k <= tries as u32 {
                return rate;
            }
            k -= tries as u32;
        }
        self.chain[3].0
    }

    /// Linux counts, per rate, every try and one success for the stage that was ACKed.
    fn on_attempt(&mut self, rate: u8, acked: bool) {
        let r = &mut self.rates[rate as usize];
        r.attempts += 1;
        r.success += acked as u32;
    }

    /// Linux `minstrel_tx_status`.
    fn end_frame(&mut self, now: Nanos) {
        if self.frame_sample == Sample::Deferred {
            self.sample_packets += 1;
        }
        self.sample_deferred = self.sample_deferred.saturating_sub(1);
        self.maybe_update_stats(now);
    }

    fn maybe_update_stats(&mut self, now: Nanos) {
        match self.next_update {
            None => self.next_update = Some(now + MINSTREL_UPDATE_INTERVAL),
            Some(t) if now >= t => {
                self.update_stats();
                self.next_update = Some(now + MINSTREL_UPDATE_INTERVAL);
            }
            Some(_) => {}
        }
    }

    /// Linux `minstrel_update_stats`.
    fn update_stats(&mut self) {
        for r in &mut self.rates {
            calc_rate_stats(r);
            if r.prob_ewma > PROB_ROBUST || r.prob_ewma < PROB_MIN_TP {
                // Sample and retry less where there is little to learn.
                r.adjusted_retry_count = (r.retry_count >> 1).min(2);
                r.sample_limit = Some(MINSTREL_SAMPLE_LIMIT);
            } else {
                r.adjusted_retry_count = r.retry_count;
                r.sample_limit = None;
            }
            if r.adjusted_retry_count == 0 {
                r.adjusted_retry_count = 2;
            }
            r.tp = r.expected_tp();
        }
        let n = self.rates.len();
        let tp = |i: usize| self.rates[i].tp;
        // Ties go to the lower index; a rate with no estimated throughput is never second.
        let best = (0..n).fold(0, |b, i| if tp(i) > tp(b) { i } else { b });
        let second = (0..n)
            .filter(|&i| i != best && tp(i) > 0)
            .fold(None, |s: Option<usize>, i| match s {
                Some(s) if tp(i) <= tp(s) => Some(s),
                _ => Some(i),
            })
            .unwrap_or(0);
        // max_prob: among rates >= 95 % the fastest, else the most reliable (later wins ties).
        let mut max_prob = 0;
        for i in 0..n {
            if self.rates[i].prob_ewma >= PROB_ROBUST {
                if tp(i) >= tp(max_prob) {
                    max_prob = i;
                }
            } else if self.rates[i].prob_ewma >= self.rates[max_prob].prob_ewma {
                max_prob = i;
            }
        }
        self.max_tp = [best as u8, second as u8];
        self.max_prob = max_prob as u8;
    }
}

/// Linux `minstrel_calc_rate_stats`: fold the interval into the EWMA and restart the counters.
fn calc_rate_stats(r: &mut MinstrelRate) {
    if r.attempts > 0 {
        r.sample_skipped = 0;
        let cur = ((r.success as u64) << PROB_SHIFT) / r.attempts as u64;
        let cur = cur.min(PROB_ONE as u64) as i64;
        r.prob_ewma = if r.att_hist == 0 {
            cur as u32
        } else {
            let old = r.prob_ewma as i64;
            (old + (MINSTREL_EWMA_DIV - MINSTREL_EWMA_LEVEL) * (cur - old) / MINSTREL_EWMA_DIV) as u32
        };
        r.att_hist += r.attempts as u64;
        r.succ_hist += r.success as u64;
    } else {
        r.sample_skipped = r.sample_skipped.saturating_add(1);
    }
    r.attempts = 0;
    r.success = 0;
}

/// Linux `minstrel_rate_init`: the most tries (at most `max_retry`) whose total time, with the
/// mean backoff of each retry, stays under `MINSTREL_SEGMENT`; at least 1.
fn tries_within_segment(airtime: Nanos, c: Contention, max_retry: u8) -> u8 {
    let mut total = airtime.0;
    let mut cw = c.cw_min as u64;
    let mut tries = 1u8;
    while tries < max_retry {
        total += airtime.0 + cw * c.slot.0 / 2;
        cw = (2 * cw + 1).min(c.cw_max as u64);
        if total >= MINSTREL_SEGMENT.0 {
            break;
        }
        tries += 1;
    }
    tries
}

#[cfg(test)]
mod tests;
