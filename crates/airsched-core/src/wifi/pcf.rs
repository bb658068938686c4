//! 802.11 PCF, the point coordination function (IEEE 802.11-1999 clause 9.3, kept unchanged
//! through 802.11-2012 clause 9.4, deprecated since), as a sans-I/O model of its timing: which
//! beacons start a contention-free period (CFP), and what one CFP of polled exchanges costs
//! on the air. docs/model-pcf.md; reference next-capabilities.md section 4.
//!
//! The simulation drives it in an 802.11b cell with `[cell] pcf = true` (`wifi/cfp.rs`).
//!
//! The CFP, as modelled:
//! - It starts at a TBTT whose beacon is a DTIM with CFPCount 0 (every `cfp_period` DTIMs),
//!   after PIFS of idle medium; if the medium is busy at the TBTT the start waits for it and the
//!   CFP is foreshortened: it still ends by TBTT + CFPMaxDuration. Stations set their NAV to
//!   CFPMaxDuration at the nominal start (no DCF access during the CFP) and reset it at CF-End.
//! - After the beacon (with the CF Parameter Set element) and SIFS, the point coordinator (PC)
//!   polls the stations of its polling list in round robin, one polled exchange at a time,
//!   frames SIFS apart, round after round while time remains, continuing from where the
//!   previous CFP stopped; a whole round with no data either way ends the CFP early
//!   ([`PointCoordinator`]):
//!   - a frame waiting for the station goes as Data+CF-Poll; otherwise a CF-Poll (28 bytes);
//!   - the station answers with its own frame (Data, with CF-Ack when it received data) or,
//!     with nothing to send, a Null (CF-Ack) of 28 bytes;
//!   - the acknowledgment of what the station sent rides on the PC's next frame (CF-Ack
//!     piggybacked: Data+CF-Ack+CF-Poll, CF-Ack+CF-Poll, CF-End+CF-Ack), which costs no time.
//! - An exchange is started only if it and the CF-End fit before the CFP's end; then CF-End
//!   (20 bytes) ends the CFP and the contention period (DCF) follows.
//! - Downlink-only traffic is served by Data+CF-Poll (the station answers Null); uplink only
//!   when the station is polled; a station with both sends and receives in one exchange.
//! - Control frames (CF-Poll, Null, CF-End) go at the cell's basic rate `ctl_rate`; data at the
//!   link's rate. Frames are never lost here (a perfect channel): a poll without an answer
//!   (the PC resumes after PIFS) is [`poll_timeout`].

use crate::phy::dsss::{self, DsssRate, Preamble};
use crate::time::Nanos;

/// A data-type frame without a body (CF-Poll, CF-Ack, Null, CF-Ack+CF-Poll): 24 bytes of MAC
/// header and 4 of FCS.
pub const NULL_BYTES: u32 = 28;
/// CF-End and CF-End+CF-Ack, control frames: frame control, duration, RA, BSSID, FCS.
pub const CF_END_BYTES: u32 = 20;
/// The CF Parameter Set element a point coordinator's beacons carry (ID, length, CFPCount,
/// CFPPeriod, CFPMaxDuration, CFPDurRemaining).
pub const CF_PARAMETER_SET_BYTES: u32 = 8;
/// The largest MPDU (PSDU) 802.11b carries: 2304 bytes of body with header and FCS.
pub const MAX_MPDU_BYTES: u32 = 2346;
/// 1 TU = 1024 µs.
pub const TU: Nanos = Nanos::from_us(1024);

/// The CF Parameter Set of the beacons (element ID 4) and the beacon cadence around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfParams {
    /// Beacon interval.
    pub beacon_interval: Nanos,
    /// Beacons per DTIM (the TIM element's DTIM Period), >= 1.
    pub dtim_period: u32,
    /// CFPPeriod: DTIM intervals between CFP starts, >= 1.
    pub cfp_period: u32,
    /// CFPMaxDuration (a whole number of TU in the element).
    pub cfp_max_duration: Nanos,
}

impl CfParams {
    /// The CFP repetition interval ("CFP rate"): CFPPeriod x DTIM period x beacon interval.
    pub fn repetition_interval(&self) -> Nanos {
        Nanos(self.beacon_interval.0 * self.dtim_period as u64 * self.cfp_period as u64)
    }

    /// (DTIM count, CFPCount) carried by beacon number `k` (0 is the first): beacon 0 is a DTIM
    /// starting a CFP. A CFP starts at the beacons where both are 0.
    pub fn counts(&self, k: u64) -> (u32, u32) {
        let dtim_count = (self.dtim_period as u64 - k % self.dtim_period as u64) % self.dtim_period as u64;
        // The next DTIM (this beacon if it is one) is DTIM number ceil(k / dtim_period).
        let next_dtim = k.div_ceil(self.dtim_period as u64);
        let cfp_count = (self.cfp_period as u64 - next_dtim % self.cfp_period as u64) % self.cfp_period as u64;
        (dtim_count as u32, cfp_count as u32)
    }

    /// Whether beacon `k` starts a CFP.
    pub fn starts_cfp(&self, k: u64) -> bool {
        k.is_multiple_of(self.dtim_period as u64 * self.cfp_period as u64)
    }

    /// The bounds 802.11 puts on CFPMaxDuration (9.3.3.2 / 11.x): at least a beacon, one
    /// maximum-size exchange (`max_exchange`) and a CF-End; at most the repetition interval
    /// minus one maximum-size DCF exchange (`max_dcf_exchange`), so the CP can carry one.
    pub fn check(
        &self,
        beacon: Nanos,
        max_exchange: Nanos,
        cf_end: Nanos,
        max_dcf_exchange: Nanos,
    ) -> Result<(), String> {
        if self.dtim_period == 0 || self.cfp_period == 0 {
            return Err("dtim_period and cfp_period must be at least 1".into());
        }
        let min = beacon + dsss::SIFS + max_exchange + cf_end;
        if self.cfp_max_duration < min {
            return Err(format!(
                "cfp_max_duration {} µs is shorter than a beacon, one maximum-size polled exchange and CF-End ({} µs)",
                self.cfp_max_duration.0 / 1000,
                min.0 / 1000
            ));
        }
        let interval = self.repetition_interval();
        if self.cfp_max_duration + max_dcf_exchange > interval {
            return Err(format!(
                "cfp_max_duration {} µs leaves less than one maximum-size DCF exchange ({} µs) of the {} µs CFP repetition interval to the contention period",
                self.cfp_max_duration.0 / 1000,
                max_dcf_exchange.0 / 1000,
                interval.0 / 1000
            ));
        }
        Ok(())
    }
}

/// The air times the PC's exchanges are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcfTiming {
    pub preamble: Preamble,
    /// The rate of CF-Poll, Null and CF-End (a basic rate).
    pub ctl_rate: DsssRate,
}

impl PcfTiming {
    /// CF-Poll, CF-Ack, Null, CF-Ack+CF-Poll.
    pub fn null(&self) -> Nanos {
        dsss::txtime(self.preamble, self.ctl_rate, NULL_BYTES)
    }

    pub fn cf_end(&self) -> Nanos {
        dsss::txtime(self.preamble, self.ctl_rate, CF_END_BYTES)
    }

    /// A data MPDU of `psdu` bytes (MAC header, LLC/SNAP, body, FCS) at `rate`.
    pub fn data(&self, rate: DsssRate, psdu: u32) -> Nanos {
        dsss::txtime(self.preamble, rate, psdu)
    }

    /// One polled exchange, from the PC's frame to SIFS after the station's answer: `down`
    /// and `up` are the PSDU bytes of the frames waiting each way (None: nothing), at `rate`.
    /// PC: Data+CF-Poll or CF-Poll; station: Data(+CF-Ack) or Null(+CF-Ack).
    pub fn exchange(&self, rate: DsssRate, down: Option<u32>, up: Option<u32>) -> Nanos {
        let pc = down.map_or(self.null(), |b| self.data(rate, b));
        let sta = up.map_or(self.null(), |b| self.data(rate, b));
        pc + dsss::SIFS + sta + dsss::SIFS
    }
}

/// A poll the station does not answer: the PC resumes after PIFS.
#[cfg(test)]
pub fn poll_timeout(t: &PcfTiming) -> Nanos {
    t.null() + dsss::PIFS
}

/// What one polled exchange carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// Index into the polling list's stations.
    pub station: u32,
    pub start: Nanos,
    pub end: Nanos,
    /// PSDU bytes each way (None: a CF-Poll, or a Null answer).
    pub down: Option<u32>,
    pub up: Option<u32>,
}

/// The point coordinator's polling state across CFPs: the polling list and where round robin
/// resumes, and how many polls in a row carried nothing.
///
/// Policy (802.11-1999 9.3.4.1 leaves it to the implementation beyond "poll the list in
/// ascending AID order"): the PC polls the stations of its list in order, one polled exchange
/// at a time, and goes round again while time remains; it ends the CFP early, with CF-End,
/// once a whole round of polls carried no data either way (every station answered Null and
/// the PC had nothing for any of them). The next CFP resumes where this one stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointCoordinator {
    /// The polling list: stations that are CF-Pollable, in association (AID) order.
    pub list: Vec<u32>,
    next: usize,
    /// Polls in a row, in this CFP, that carried no data either way.
    idle_run: usize,
}

impl PointCoordinator {
    pub fn new(list: Vec<u32>) -> PointCoordinator {
        PointCoordinator { list, next: 0, idle_run: 0 }
    }

    /// A CFP begins: no poll of it has been idle yet.
    pub fn begin_cfp(&mut self) {
        self.idle_run = 0;
    }

    /// The station to poll next, or None when the list is empty or the last round of polls
    /// carried nothing (the CFP should end).
    pub fn peek(&self) -> Option<u32> {
        if self.list.is_empty() || self.idle_run >= self.list.len() {
            return None;
        }
        Some(self.list[self.next])
    }

    /// The station [`Self::peek`] named was polled; `carried` tells whether the exchange
    /// carried data either way (a poll left unanswered counts as carrying nothing).
    pub fn polled(&mut self, carried: bool) {
        self.next = (self.next + 1) % self.list.len();
        self.idle_run = if carried { 0 } else { self.idle_run + 1 };
    }

    /// Run one CFP starting (beacon on the air) at `start`, whose nominal start (the TBTT) was
    /// `tbtt`, on a perfect channel with backlogs that do not change during the CFP.
    /// `frames(station, down)` tells the PSDU bytes of the frame waiting for (down) or at (up)
    /// that station, None when there is none, without taking it: the caller sends what the
    /// returned exchanges list. Returns the exchanges and the instant the CF-End ends (the CP
    /// begins after it). This is the arithmetic the simulation's CFPs are checked against.
    #[allow(clippy::too_many_arguments)]
    pub fn run_cfp(
        &mut self,
        p: &CfParams,
        t: &PcfTiming,
        rate: DsssRate,
        beacon: Nanos,
        tbtt: Nanos,
        start: Nanos,
        mut frames: impl FnMut(u32, bool) -> Option<u32>,
        out: &mut Vec<Exchange>,
    ) -> Nanos {
        out.clear();
        self.begin_cfp();
        // Foreshortened if it starts late: it still ends by TBTT + CFPMaxDuration.
        let deadline = tbtt + p.cfp_max_duration;
        let cf_end = t.cf_end();
        let mut now = start + beacon + dsss::SIFS;
        while let Some(s) = self.peek() {
            let down = frames(s, true);
            let up = frames(s, false);
            let d = t.exchange(rate, down, up);
            // The exchange must end, with the CF-End after it, by the deadline; if not, the
            // CFP ends and round robin resumes with this station next time. (The PC knows the
            // answer's length here, as the simulation's PC does: see docs/model-pcf.md.)
            if now + d + cf_end > deadline {
                break;
            }
            out.push(Exchange { station: s, start: now, end: now + d, down, up });
            now += d;
            self.polled(down.is_some() || up.is_some());
        }
        now + cf_end
    }
}

// The point coordinator in the event loop: the state the CFP exchanges (`super::cfp`) run on.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// No CFP in progress.
    Idle,
    /// The PC sends its next frame now.
    Next,
    /// The PC's frame ends now.
    PcEnd,
    /// The polled station has taken its next frame, if the CF-Ack just released its last;
    /// it answers SIFS after the PC's frame.
    Answer,
    /// The station's answer ends now.
    AnswerEnd,
    /// The CF-End ends now.
    CfEnd,
}

/// The exchange in progress.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    /// The station polled, or the receiver of Data when it is not CF-Pollable.
    pub(super) station: u32,
    pub(super) polled: bool,
    /// The PC's frame carries the AP's head-of-line frame.
    pub(super) down: bool,
    pub(super) pc_rate: DsssRate,
    pub(super) pc_bytes: u32,
    pub(super) pc_start: Nanos,
    /// The station whose CF-Ack rides on the PC's frame, and the rate of the data it acks.
    pub(super) acks: Option<(u32, DsssRate)>,
    /// The station's answer carries its head-of-line frame.
    pub(super) up: bool,
    pub(super) answer_rate: DsssRate,
    pub(super) answer_bytes: u32,
    pub(super) answer_start: Nanos,
}

pub(super) const NO_STEP: Step = Step {
    station: 0,
    polled: false,
    down: false,
    pc_rate: DsssRate::R1,
    pc_bytes: 0,
    pc_start: Nanos::ZERO,
    acks: None,
    up: false,
    answer_rate: DsssRate::R1,
    answer_bytes: 0,
    answer_start: Nanos::ZERO,
};

/// One contention-free period, as the results' `cfp` table has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CfpRecord {
    pub tbtt: Nanos,
    /// Its beacon's start.
    pub start: Nanos,
    /// The end of its CF-End (ZERO while it runs).
    pub end: Nanos,
    pub polls: u64,
    pub data_down: u64,
    pub data_up: u64,
    /// Beacons of TBTTs inside it.
    pub beacons: u64,
    /// Ended because a round of polls carried nothing (else: the next exchange did not fit).
    pub idle: bool,
}

/// The point coordinator of an 802.11b cell with `pcf = true`.
pub struct Cfp {
    pub params: CfParams,
    pub timing: PcfTiming,
    pub pc: PointCoordinator,
    /// Per station: on the polling list.
    pub pollable: Vec<bool>,
    /// TBTTs so far.
    pub(super) tbtts: u64,
    /// The TBTT of a CFP whose beacon waits for the medium.
    pub(super) armed: Option<Nanos>,
    pub(super) phase: Phase,
    pub(super) deadline: Nanos,
    /// The station the PC owes a CF-Ack (its data was decoded), with its data's rate.
    pub(super) owed: Option<(u32, DsssRate)>,
    /// A TBTT fell inside the CFP: its beacon goes next.
    pub(super) beacon_due: bool,
    pub(super) step: Step,
    /// Every CFP so far, the one in progress last.
    pub records: Vec<CfpRecord>,
}

impl Cfp {
    pub fn new(params: CfParams, timing: PcfTiming, pollable: Vec<bool>) -> Cfp {
        let list = pollable.iter().enumerate().filter(|(_, &p)| p).map(|(s, _)| s as u32).collect();
        Cfp {
            params,
            timing,
            pc: PointCoordinator::new(list),
            pollable,
            tbtts: 0,
            armed: None,
            phase: Phase::Idle,
            deadline: Nanos::ZERO,
            owed: None,
            beacon_due: false,
            step: NO_STEP,
            records: Vec::new(),
        }
    }

    /// A CFP is in progress (from its beacon to the end of the busy period after CF-End).
    #[inline]
    pub fn active(&self) -> bool {
        self.phase != Phase::Idle
    }

    /// The record of the CFP in progress.
    #[inline]
    pub(super) fn record(&mut self) -> &mut CfpRecord {
        self.records.last_mut().expect("a CFP in progress has its record")
    }

    /// The CFP's beacon is due: the next beacon access begins a CFP.
    #[inline]
    pub fn armed(&self) -> bool {
        self.armed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> PcfTiming {
        PcfTiming { preamble: Preamble::Long, ctl_rate: DsssRate::R2 }
    }

    /// Reference section 4.3, 802.11b, long preamble, control frames at 2 Mb/s, data at 11:
    /// CF-Poll/Null 28 B = 192 + 112 = 304 µs; CF-End 20 B = 192 + 80 = 272 µs; a 1536-byte
    /// data MPDU = 192 + ceil(12288 / 11) = 192 + 1118 = 1310 µs (the reference's 1309 rounds
    /// down; 802.11b's TXTIME rounds up).
    #[test]
    fn frame_and_exchange_durations_are_the_hand_computed_ones() {
        let t = timing();
        assert_eq!(t.null(), Nanos::from_us(304));
        assert_eq!(t.cf_end(), Nanos::from_us(272));
        assert_eq!(t.data(DsssRate::R11, 1536), Nanos::from_us(1310));
        // Uplink poll cycle: CF-Poll + SIFS + Data(+CF-Ack) + SIFS = 304 + 10 + 1310 + 10.
        assert_eq!(t.exchange(DsssRate::R11, None, Some(1536)), Nanos::from_us(1634));
        // Downlink: Data+CF-Poll + SIFS + Null + SIFS.
        assert_eq!(t.exchange(DsssRate::R11, Some(1536), None), Nanos::from_us(1634));
        // Both ways: 1310 + 10 + 1310 + 10.
        assert_eq!(t.exchange(DsssRate::R11, Some(1536), Some(1536)), Nanos::from_us(2640));
        // Idle station: poll + Null = 628 µs; no answer: poll + PIFS = 334 µs.
        assert_eq!(t.exchange(DsssRate::R11, None, None), Nanos::from_us(628));
        assert_eq!(poll_timeout(&t), Nanos::from_us(334));
        // IP goodput of back-to-back uplink polls of 1500-byte IP packets: 12000 bits / 1634 µs.
        let mbps: f64 = 1500.0 * 8.0 / 1634.0;
        assert!((mbps - 7.344).abs() < 0.001, "{mbps}");
    }

    #[test]
    fn cfps_start_every_cfp_period_dtims() {
        let p = CfParams {
            beacon_interval: Nanos::from_us(102_400),
            dtim_period: 2,
            cfp_period: 3,
            cfp_max_duration: Nanos::from_us(1024 * 50),
        };
        assert_eq!(p.repetition_interval(), Nanos::from_us(614_400));
        let starts: Vec<u64> = (0..13).filter(|&k| p.starts_cfp(k)).collect();
        assert_eq!(starts, [0, 6, 12]);
        assert_eq!(p.counts(0), (0, 0));
        assert_eq!(p.counts(1).0, 1);
        assert_eq!(p.counts(2), (0, 2));
        assert_eq!(p.counts(4), (0, 1));
        assert_eq!(p.counts(6), (0, 0));
    }

    #[test]
    fn cfp_max_duration_must_leave_room_for_the_cfp_and_the_cp() {
        let t = timing();
        let beacon = dsss::txtime(Preamble::Long, DsssRate::R1, 73);
        let max_x = t.exchange(DsssRate::R11, Some(2346), Some(2346));
        let dcf = Nanos::from_us(50 + 620) + t.data(DsssRate::R11, 2346) + dsss::SIFS + Nanos::from_us(248);
        let ok = CfParams {
            beacon_interval: Nanos::from_us(102_400),
            dtim_period: 1,
            cfp_period: 1,
            cfp_max_duration: Nanos::from_us(1024 * 50),
        };
        assert_eq!(ok.check(beacon, max_x, t.cf_end(), dcf), Ok(()));
        let short = CfParams { cfp_max_duration: Nanos::from_us(1024 * 2), ..ok };
        assert!(short.check(beacon, max_x, t.cf_end(), dcf).unwrap_err().contains("shorter than a beacon"));
        let long = CfParams { cfp_max_duration: Nanos::from_us(1024 * 100), ..ok };
        assert!(long.check(beacon, max_x, t.cf_end(), dcf).unwrap_err().contains("contention period"));
    }

    /// Saturated uplink stations polled in a CFP of 20 TU (20480 µs) after a 776 µs beacon:
    /// exchanges of 1634 µs start SIFS after the beacon; k fit while 786 + 1634 k + 272 <=
    /// 20480, so k = 11 (786 + 17974 + 272 = 19032; a 12th would end at 20666). Four stations
    /// are polled round and round (0 1 2 3 0 1 2 3 0 1 2), and the next CFP resumes with 3.
    #[test]
    fn a_cfp_polls_round_robin_while_time_remains_and_fits_its_exchanges_before_cf_end() {
        let t = timing();
        let p = CfParams {
            beacon_interval: Nanos::from_us(102_400),
            dtim_period: 1,
            cfp_period: 1,
            cfp_max_duration: Nanos::from_us(1024 * 20),
        };
        let beacon = Nanos::from_us(776);
        let mut pc = PointCoordinator::new(vec![0, 1, 2, 3]);
        let mut out = Vec::new();
        let end = pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::ZERO,
            |_, down| (!down).then_some(1536),
            &mut out,
        );
        assert_eq!(out.len(), 11);
        assert_eq!(out[0].start, Nanos::from_us(786));
        assert_eq!(out[10].end, Nanos::from_us(786 + 11 * 1634));
        assert_eq!(end, Nanos::from_us(786 + 11 * 1634 + 272));
        let order: Vec<u32> = out.iter().map(|x| x.station).collect();
        assert_eq!(order, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2]);
        pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::ZERO,
            |_, down| (!down).then_some(1536),
            &mut out,
        );
        assert_eq!(out[0].station, 3);
        // Only station 1 has traffic: rounds go on while it sends, and the CFP ends after
        // a whole round (4 polls) with nothing: here it fits 0 1 2 3 0 1 2 3 ... 11 polls of
        // which the three of station 1 carried 1536 bytes.
        let mut pc = PointCoordinator::new(vec![0, 1, 2, 3]);
        let mut left = 2;
        let end = pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::ZERO,
            |s, down| {
                (s == 1 && !down && left > 0).then(|| {
                    left -= 1;
                    1536
                })
            },
            &mut out,
        );
        // Station 1 carries data twice (polls 2 and 6 of 0 1 2 3 0 1 ...); the `frames` callback
        // is asked twice per poll (down, then up), so `left` runs out at the second data poll.
        // After poll 6 (index 5), four idle polls (2 3 0 1) end the CFP: 10 polls in all.
        assert_eq!(out.len(), 10);
        let carried: Vec<bool> = out.iter().map(|x| x.up.is_some()).collect();
        assert_eq!(carried.iter().filter(|&&c| c).count(), 2);
        assert_eq!(end, Nanos::from_us(786 + 2 * 1634 + 8 * 628 + 272));
        // Twenty stations: only 11 fit (see above); the next CFP resumes with the 12th.
        let mut pc = PointCoordinator::new((0..20).collect());
        let end = pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::ZERO,
            |_, down| (!down).then_some(1536),
            &mut out,
        );
        assert_eq!(out.len(), 11);
        assert_eq!(end, Nanos::from_us(786 + 11 * 1634 + 272));
        pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::ZERO,
            |_, down| (!down).then_some(1536),
            &mut out,
        );
        assert_eq!(out[0].station, 11);
        // Foreshortened: starting 5000 µs late, it still ends by TBTT + 20 TU: (20480 - 5786 -
        // 272) / 1634 = 8.8, so 8 exchanges.
        let mut pc = PointCoordinator::new((0..20).collect());
        pc.run_cfp(
            &p,
            &t,
            DsssRate::R11,
            beacon,
            Nanos::ZERO,
            Nanos::from_us(5000),
            |_, down| (!down).then_some(1536),
            &mut out,
        );
        assert_eq!(out.len(), 8);
        // Idle stations answer Null: 628 µs each; one idle round ends the CFP.
        let mut pc = PointCoordinator::new(vec![0, 1]);
        let end = pc.run_cfp(&p, &t, DsssRate::R11, beacon, Nanos::ZERO, Nanos::ZERO, |_, _| None, &mut out);
        assert_eq!(end, Nanos::from_us(786 + 2 * 628 + 272));
    }
}
