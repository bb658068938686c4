//! The interface between the two media of a dual-radio cell: the 802.11b WLAN and the Bluetooth
//! piconet. Each medium records what it puts on the air and when ([`AirLog`]); a frame's fate
//! is decided at its end, when everything that overlapped it has started, by asking the other
//! medium's log whether something overlapped it in time and in frequency (reference
//! phy80211-bluetooth.md section 8.3, the time/frequency bookkeeping of UCBT's
//! `BTInterferQue`). Neither medium reaches into the other: both are handed this through
//! [`crate::ctx::Ctx::coex`], which is `None` (one branch per frame) in a cell without
//! Bluetooth.
//!
//! Frequency model: Bluetooth channel k (0..79) is centred on 2402 + k MHz; an 802.11b channel
//! c is centred on 2412 + 5 (c - 1) MHz (channel 14: 2484 MHz) and occupies 22 MHz. A hop lands
//! in the WLAN's band when its centre lies in [f_W - 11, f_W + 11) MHz: 22 of the 79 channels
//! (p_f = 22/79, section 8.2) for channels 2 to 12; at the Bluetooth band's edges channel 1
//! covers 21, channel 13 covers 20 and channel 14 covers 8 (2473 to 2480 MHz). Adjacent-channel
//! leakage is not modelled (first-order model of section 8.2).
//!
//! Capture: by default any overlap in time and frequency corrupts both (the colocated,
//! worst case of section 8.3). With `[piconet] sir = true` a hit corrupts a victim only if the
//! signal-to-interference ratio at its receiver is below its threshold ([`SirModel`]: received
//! powers from the radios' positions, transmit powers and the 802.15.2 path loss;
//! [`SirThresholds`]); the time/frequency bookkeeping is the same.

use std::collections::VecDeque;

use crate::time::Nanos;

/// Bluetooth channels (Core spec, BR/EDR: 2402 + k MHz).
pub const BT_CHANNELS: u32 = 79;

/// Centre frequency (MHz) of 802.11b channel `c` (1..=14).
pub fn wlan_centre_mhz(c: u32) -> u32 {
    if c == 14 {
        2484
    } else {
        2407 + 5 * c
    }
}

/// Whether Bluetooth channel `k` lies in the 22 MHz band of WLAN channel `c`.
pub fn in_wlan_band(k: u32, c: u32) -> bool {
    let f = 2402 + k as i64;
    let w = wlan_centre_mhz(c) as i64;
    f >= w - 11 && f < w + 11
}

/// How long an interval stays in a log after it ended: longer than any frame of either medium
/// (an 802.11b 2304-byte frame at 1 Mb/s lasts 18.8 ms), so a victim ending now still finds
/// every interval that overlapped it.
const HORIZON: Nanos = Nanos(40_000_000);

/// One transmission on the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnAir {
    pub start: Nanos,
    pub end: Nanos,
    /// Bluetooth: the channel it hops on; WLAN: unused (0).
    pub chan: u8,
    /// Whether it lies in the other medium's band (Bluetooth: its hop is in the WLAN channel).
    pub in_band: bool,
    /// Who sent it: WLAN node (0 the AP); Bluetooth: 0 the master, i + 1 slave i.
    pub from: u32,
}

/// What one medium has put on the air recently, in order of start. Intervals older than
/// [`HORIZON`] are forgotten; the buffer is reused (no allocation once warmed up).
#[derive(Clone, Debug, Default)]
pub struct AirLog {
    items: VecDeque<OnAir>,
}

impl AirLog {
    pub fn push(&mut self, a: OnAir) {
        while self.items.front().is_some_and(|f| f.end + HORIZON < a.start) {
            self.items.pop_front();
        }
        self.items.push_back(a);
    }

    /// Take back the last interval (a WLAN response that will not be sent).
    pub fn pop_last(&mut self) -> Option<OnAir> {
        self.items.pop_back()
    }

    /// Every interval overlapping [start, end) (half-open: touching is not overlapping) and
    /// in the other medium's band when `band_only`.
    pub fn overlapping(&self, start: Nanos, end: Nanos, band_only: bool) -> impl Iterator<Item = &OnAir> {
        self.items.iter().rev().filter(move |a| a.start < end && a.end > start && (!band_only || a.in_band))
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

/// The SIR refinement (reference phy80211-bluetooth.md 8.3 "PHY-level refinement",
/// next-capabilities.md 2.2 item 5): a hit in time and frequency corrupts the victim only if
/// the signal-to-interference ratio at its receiver, the wanted signal's received power over
/// the interferer's, is below the victim's threshold. A ratio at or above it survives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SirThresholds {
    /// A Bluetooth receiver needs C/I >= 11 dB co-channel (the Core spec's receiver
    /// requirement, as UCBT's `cochannel_collide` applies it). Applied to the WLAN frame's whole
    /// received power (see [`SirModel`]).
    pub bt_cdb: i32,
    /// An 802.11b receiver, per DSSS rate (1, 2, 5.5, 11 Mb/s): the SINR at which the cell's
    /// DSSS error model loses 10 % of 1536-byte PSDUs ([`SIR_PSDU_BYTES`]), the Bluetooth
    /// packet's power taken as noise over the 22 MHz channel as ns-3's `InterferenceHelper`
    /// takes any interferer's: -3.0, 1.6, 4.2, 7.2 dB (reference 6.6). The DSSS despreading
    /// gain is inside the model's Eb/N0 = SINR x 22 (1 Mb/s) or x 11 (2 Mb/s).
    pub wlan_cdb: [i32; 4],
}

/// Bluetooth co-channel C/I threshold, centi-dB (11 dB).
pub const BT_COCHANNEL_CDB: i32 = 1100;

/// The PSDU the WLAN thresholds are computed for: a 1500-byte IP packet (+ 36 bytes of LLC/SNAP,
/// MAC header and FCS), reference 6.6's length. Shorter frames survive more: an ACK's 14 bytes
/// reach PER 10 % 2.2 dB (1 Mb/s) to 2.7 dB (2, 5.5, 11 Mb/s) lower, so the model is that much
/// pessimistic for them.
pub const SIR_PSDU_BYTES: u32 = 1536;

/// The frame error rate that sets the WLAN thresholds. The DSSS curves are steep (reference
/// 6.6: PER goes from about 60 % to under 1 % within +-1 dB), so the choice of this point moves
/// a threshold by less than a dB (PER 50 % lies 0.8 to 0.9 dB lower).
pub const SIR_PER: f64 = 0.1;

impl SirThresholds {
    /// The thresholds for a cell whose DSSS frames use `preamble` (which moves them by less
    /// than 0.01 dB).
    pub fn new(preamble: crate::phy::dsss::Preamble) -> SirThresholds {
        use crate::phy::error_rate::{db_to_cdb, snr_for_per, ErrMode};
        let wlan_cdb = crate::phy::dsss::DsssRate::ALL
            .map(|r| db_to_cdb(snr_for_per(ErrMode::Dsss(r), preamble, SIR_PSDU_BYTES, SIR_PER)));
        SirThresholds { bt_cdb: BT_COCHANNEL_CDB, wlan_cdb }
    }
}

/// Two radios are never taken as closer than this (metres): 10 cm, the separation assumed for
/// the NAP's WLAN card and Bluetooth adapter in one box (the AP and the piconet's master both
/// sit at the origin), whose coupling is then the free-space loss at 10 cm, 20.2 dB.
pub const MIN_DISTANCE_M: f64 = 0.1;

/// 802.15.2 indoor path loss (dB): free space at 2.45 GHz (lambda = 0.1224 m) up to 8 m, then
/// 58.3 + 33 log10(d / 8) (UCBT `bt-lossmod.cc` `path_loss`, reference next-capabilities.md
/// sections 1.5 and 2.2). Distances below [`MIN_DISTANCE_M`] count as that.
pub fn path_loss_db(d_m: f64) -> f64 {
    let d = d_m.max(MIN_DISTANCE_M);
    if d <= 8.0 {
        20.0 * (4.0 * std::f64::consts::PI * d / 0.1224).log10()
    } else {
        58.3 + 33.0 * (d / 8.0).log10()
    }
}

/// Where the radios are and how loud they are: what [`SirModel::new`] is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// WLAN node w's position in metres (0 the AP, s + 1 station s).
    pub wlan: Vec<(f64, f64)>,
    /// Bluetooth node b's position (0 the master, i + 1 slave i).
    pub bt: Vec<(f64, f64)>,
    /// Transmit powers (dBm) of every WLAN radio and of every Bluetooth radio.
    pub wlan_power_dbm: f64,
    pub bt_power_dbm: f64,
}

fn received_cdbm(power_dbm: f64, a: (f64, f64), b: (f64, f64)) -> i32 {
    let d = (a.0 - b.0).hypot(a.1 - b.1);
    crate::phy::error_rate::db_to_cdb(power_dbm - path_loss_db(d))
}

/// Counters of the coupling, per WLAN station and direction (0 down, 1 up).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoexCounters {
    /// Data frames the WLAN receiver lost to a Bluetooth packet.
    pub wlan_data_hit: Vec<[u64; 2]>,
    /// Acknowledgements lost to a Bluetooth packet (index: the data frame's direction).
    pub wlan_ack_hit: Vec<[u64; 2]>,
    /// Data frames checked (lone frames the WLAN receiver would otherwise have decoded).
    pub wlan_data_checked: Vec<[u64; 2]>,
    /// ACKs checked.
    pub wlan_ack_checked: Vec<[u64; 2]>,
}

/// Both media's logs and the cell's frequencies: what `Ctx::coex` holds in a cell with
/// Bluetooth.
#[derive(Clone, Debug)]
pub struct Coex {
    pub wlan: AirLog,
    pub bt: AirLog,
    /// The WLAN's 802.11b channel (1..=14).
    pub wlan_channel: u32,
    pub counters: CoexCounters,
    /// SIR refinement: received powers (centi-dBm) of the wanted and interfering signals are
    /// looked up per pair; None: any overlap is a loss.
    pub sir: Option<Box<SirModel>>,
}

/// Received powers for the SIR refinement, in centi-dBm, from a [`Geometry`]:
/// `wlan_at_bt[w][b]` is WLAN node w's power at Bluetooth node b's receiver, `bt_at_wlan[b][w]`
/// the reverse; the wanted signals are those of the links: `wlan_link[s]` = [the AP's power at
/// station s, station s's power at the AP], `bt_link[i]` = [the master's power at slave i,
/// slave i's at the master]. Each interferer is tested alone: the piconet's packets never
/// overlap each other (TDD), and two WLAN frames overlap only in a collision.
#[derive(Clone, Debug, PartialEq)]
pub struct SirModel {
    pub wlan_at_bt: Vec<Vec<i32>>,
    pub bt_at_wlan: Vec<Vec<i32>>,
    pub wlan_link: Vec<[i32; 2]>,
    pub bt_link: Vec<[i32; 2]>,
    pub thresholds: SirThresholds,
}

impl SirModel {
    pub fn new(g: &Geometry, thresholds: SirThresholds) -> SirModel {
        let (pw, pb) = (g.wlan_power_dbm, g.bt_power_dbm);
        let ap = g.wlan.first().copied().unwrap_or_default();
        let master = g.bt.first().copied().unwrap_or_default();
        SirModel {
            wlan_at_bt: g.wlan.iter().map(|&w| g.bt.iter().map(|&b| received_cdbm(pw, w, b)).collect()).collect(),
            bt_at_wlan: g.bt.iter().map(|&b| g.wlan.iter().map(|&w| received_cdbm(pb, b, w)).collect()).collect(),
            wlan_link: g.wlan.iter().skip(1).map(|&s| [received_cdbm(pw, ap, s), received_cdbm(pw, s, ap)]).collect(),
            bt_link: g
                .bt
                .iter()
                .skip(1)
                .map(|&s| [received_cdbm(pb, master, s), received_cdbm(pb, s, master)])
                .collect(),
            thresholds,
        }
    }

    /// The wanted signal of a WLAN frame from node `from` to node `to` at its receiver (None:
    /// not a link of the cell, which only has AP-station links).
    pub fn wlan_wanted(&self, from: u32, to: u32) -> Option<i32> {
        match (from, to) {
            (0, s) if s > 0 => self.wlan_link.get(s as usize - 1).map(|l| l[0]),
            (s, 0) if s > 0 => self.wlan_link.get(s as usize - 1).map(|l| l[1]),
            _ => None,
        }
    }

    /// The same for a Bluetooth packet (master 0, slave i is i + 1).
    pub fn bt_wanted(&self, from: u32, to: u32) -> Option<i32> {
        match (from, to) {
            (0, s) if s > 0 => self.bt_link.get(s as usize - 1).map(|l| l[0]),
            (s, 0) if s > 0 => self.bt_link.get(s as usize - 1).map(|l| l[1]),
            _ => None,
        }
    }

    /// Whether Bluetooth node `b`'s packet corrupts a WLAN frame of wanted power `wanted` at
    /// WLAN node `to`, at DSSS rate index `rate`. An index the model does not know is a hit
    /// (the worst case; the simulation never asks one).
    #[inline]
    fn wlan_corrupted(&self, wanted: i32, b: u32, to: u32, rate: usize) -> bool {
        let (Some(i), Some(&thr)) =
            (self.bt_at_wlan.get(b as usize).and_then(|r| r.get(to as usize)), self.thresholds.wlan_cdb.get(rate))
        else {
            return true;
        };
        wanted - i < thr
    }

    #[inline]
    fn bt_corrupted(&self, wanted: i32, w: u32, to: u32) -> bool {
        let Some(i) = self.wlan_at_bt.get(w as usize).and_then(|r| r.get(to as usize)) else { return true };
        wanted - i < self.thresholds.bt_cdb
    }
}

impl Coex {
    pub fn new(wlan_channel: u32, stations: usize) -> Coex {
        Coex {
            wlan: AirLog::default(),
            bt: AirLog::default(),
            wlan_channel,
            counters: CoexCounters {
                wlan_data_hit: vec![[0; 2]; stations],
                wlan_ack_hit: vec![[0; 2]; stations],
                wlan_data_checked: vec![[0; 2]; stations],
                wlan_ack_checked: vec![[0; 2]; stations],
            },
            sir: None,
        }
    }

    /// Whether Bluetooth channel `k` is in the WLAN's band.
    #[inline]
    pub fn in_band(&self, k: u32) -> bool {
        in_wlan_band(k, self.wlan_channel)
    }

    /// Is a WLAN frame from WLAN node `from` to node `to` (0 the AP, s + 1 station s), on the
    /// air over [start, end) at DSSS rate index `rate`, corrupted by a Bluetooth packet? Without
    /// the SIR refinement any overlapping packet in the WLAN's band is; with it, one whose
    /// power at `to` is within the rate's threshold of `from`'s signal there.
    pub fn wlan_hit(&self, start: Nanos, end: Nanos, from: u32, to: u32, rate: usize) -> bool {
        let Some(s) = self.sir.as_deref() else { return self.wlan_hit_any(start, end) };
        let Some(wanted) = s.wlan_wanted(from, to) else { return self.wlan_hit_any(start, end) };
        self.bt.overlapping(start, end, true).any(|b| s.wlan_corrupted(wanted, b.from, to, rate))
    }

    /// Any Bluetooth packet in the WLAN's band overlapping [start, end).
    fn wlan_hit_any(&self, start: Nanos, end: Nanos) -> bool {
        self.bt.overlapping(start, end, true).next().is_some()
    }

    /// Is a Bluetooth packet on channel `chan` over [start, end), from Bluetooth node `from` to
    /// node `to` (0 the master, i + 1 slave i), corrupted by a WLAN frame?
    pub fn bt_hit(&self, start: Nanos, end: Nanos, chan: u32, from: u32, to: u32) -> bool {
        if !self.in_band(chan) {
            return false;
        }
        let mut over = self.wlan.overlapping(start, end, false);
        match self.sir.as_deref().map(|s| (s, s.bt_wanted(from, to))) {
            Some((s, Some(wanted))) => over.any(|w| s.bt_corrupted(wanted, w.from, to)),
            _ => over.next().is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_22_mhz_channel_covers_22_of_79_hops_except_at_the_band_edges() {
        let count = |c| (0..BT_CHANNELS).filter(|&k| in_wlan_band(k, c)).count();
        for c in 2..=12 {
            assert_eq!(count(c), 22, "channel {c}");
        }
        // The band's edges: channel 1 from 2401 MHz, 13 to 2483 MHz, 14 (2473 to 2495 MHz).
        assert_eq!(count(1), 21);
        assert_eq!(count(13), 20);
        assert_eq!(count(14), 8);
        // Channel 6 (2437 MHz): 2426..=2447 MHz, k = 24..=45.
        assert!(!in_wlan_band(23, 6) && in_wlan_band(24, 6) && in_wlan_band(45, 6) && !in_wlan_band(46, 6));
    }

    #[test]
    fn overlap_is_half_open_and_the_log_forgets_old_intervals() {
        let mut log = AirLog::default();
        let a = |s: u64, e: u64, in_band| OnAir { start: Nanos(s), end: Nanos(e), chan: 0, in_band, from: 0 };
        log.push(a(0, 100, true));
        log.push(a(200, 300, false));
        assert_eq!(log.overlapping(Nanos(100), Nanos(200), false).count(), 0);
        assert_eq!(log.overlapping(Nanos(99), Nanos(201), false).count(), 2);
        assert_eq!(log.overlapping(Nanos(99), Nanos(201), true).count(), 1);
        log.push(a(HORIZON.0 + 250, HORIZON.0 + 500, true));
        assert_eq!(log.len(), 2, "the first interval ended more than the horizon ago");
    }

    /// The AP (and the master) at the origin, a station 10 m east, a slave 2 m west; WLAN
    /// radios at 15 dBm, Bluetooth at 0 dBm.
    fn nap() -> Geometry {
        Geometry {
            wlan: vec![(0.0, 0.0), (10.0, 0.0)],
            bt: vec![(0.0, 0.0), (-2.0, 0.0)],
            wlan_power_dbm: 15.0,
            bt_power_dbm: 0.0,
        }
    }

    #[test]
    fn received_powers_follow_the_two_slope_path_loss() {
        let t = SirThresholds { bt_cdb: 1100, wlan_cdb: [-302, 163, 415, 716] };
        let m = SirModel::new(&nap(), t);
        // By hand: PL(10 m) = 58.3 + 33 log10(10 / 8) = 61.498 dB; PL(2 m) = 20 log10(4 pi 2 /
        // 0.1224) = 46.249 dB; PL(12 m) = 58.3 + 33 log10(1.5) = 64.111 dB; the AP and the
        // master, both at the origin, are 10 cm apart: PL = 20.229 dB. Rounded to 0.01 dB.
        assert_eq!(m.wlan_link, vec![[1500 - 6150, 1500 - 6150]]);
        assert_eq!(m.bt_link, vec![[-4625, -4625]]);
        // bt_at_wlan[b][w]: the master at the AP and at the station; the slave at both.
        assert_eq!(m.bt_at_wlan, vec![vec![-2023, -6150], vec![-4625, -6411]]);
        // wlan_at_bt[w][b]: the AP at the master (15 - 20.229) and at the slave (15 - 46.249).
        assert_eq!(m.wlan_at_bt, vec![vec![1500 - 2023, 1500 - 4625], vec![1500 - 6150, 1500 - 6411]]);
        assert_eq!(
            (m.wlan_wanted(0, 1), m.wlan_wanted(1, 0), m.wlan_wanted(1, 1), m.wlan_wanted(0, 2)),
            (Some(-4650), Some(-4650), None, None)
        );
        assert_eq!((m.bt_wanted(0, 1), m.bt_wanted(1, 0), m.bt_wanted(0, 0)), (Some(-4625), Some(-4625), None));
    }

    #[test]
    fn wlan_thresholds_are_the_error_models_10_percent_points_of_reference_6_6() {
        let t = SirThresholds::new(crate::phy::dsss::Preamble::Long);
        assert_eq!(t.bt_cdb, 1100);
        // Reference 6.6: -3.0, 1.6, 4.2, 7.2 dB for a 1536-byte PSDU at PER 10 %.
        for (got, want) in t.wlan_cdb.iter().zip([-300, 160, 420, 720]) {
            assert!((got - want).abs() <= 15, "{:?}", t.wlan_cdb);
        }
        let short = SirThresholds::new(crate::phy::dsss::Preamble::Short);
        assert!(
            t.wlan_cdb.iter().zip(short.wlan_cdb).all(|(a, b)| (a - b).abs() <= 1),
            "{:?} {:?}",
            t.wlan_cdb,
            short.wlan_cdb
        );
    }

    /// A coexistence with the SIR model `m` and one Bluetooth packet of node `from` over
    /// [1000, 2000) ns in the WLAN's band (channel 6).
    fn with_bt(m: SirModel, from: u32) -> Coex {
        let mut c = Coex::new(6, m.wlan_link.len());
        c.sir = Some(Box::new(m));
        c.bt.push(OnAir { start: Nanos(1000), end: Nanos(2000), chan: 30, in_band: true, from });
        c
    }

    #[test]
    fn a_wlan_frame_is_lost_only_below_its_rates_threshold() {
        let t = SirThresholds { bt_cdb: 1100, wlan_cdb: [-302, 163, 415, 716] };
        // The station's downlink: wanted -46.50 dBm; the slave at 12 m: -64.11 dBm (SIR 17.61
        // dB, every rate survives); the master at 10 m: -61.50 dBm (SIR 15.00 dB).
        for from in [0, 1] {
            let c = with_bt(SirModel::new(&nap(), t), from);
            assert!((0..4).all(|r| !c.wlan_hit(Nanos(0), Nanos(1500), 0, 1, r)), "from {from}");
        }
        // The AP's uplink reception: the master at 10 cm (-20.23 dBm, SIR -26.27 dB) corrupts
        // every rate; the slave at 2 m (-46.25 dBm, SIR -0.25 dB) corrupts 2, 5.5 and 11 Mb/s
        // frames, not 1 Mb/s ones (threshold -3.02 dB).
        let c = with_bt(SirModel::new(&nap(), t), 0);
        assert!((0..4).all(|r| c.wlan_hit(Nanos(0), Nanos(1500), 1, 0, r)));
        let c = with_bt(SirModel::new(&nap(), t), 1);
        assert_eq!(
            (0..4).map(|r| c.wlan_hit(Nanos(0), Nanos(1500), 1, 0, r)).collect::<Vec<_>>(),
            [false, true, true, true]
        );
        // Not overlapping in time, or out of band: no hit whatever the SIR.
        assert!(!c.wlan_hit(Nanos(2000), Nanos(3000), 1, 0, 3));
        let mut out = Coex::new(6, 1);
        out.sir = c.sir.clone();
        out.bt.push(OnAir { start: Nanos(1000), end: Nanos(2000), chan: 70, in_band: false, from: 0 });
        assert!(!out.wlan_hit(Nanos(0), Nanos(1500), 1, 0, 3));
        // Exactly at the threshold the frame survives, 0.01 dB below it is lost.
        let mut m = SirModel::new(&nap(), t);
        m.bt_at_wlan[1][0] = m.wlan_link[0][1] - 716;
        assert!(!with_bt(m.clone(), 1).wlan_hit(Nanos(0), Nanos(1500), 1, 0, 3));
        m.bt_at_wlan[1][0] += 1;
        assert!(with_bt(m, 1).wlan_hit(Nanos(0), Nanos(1500), 1, 0, 3));
    }

    #[test]
    fn a_frame_to_the_ap_is_judged_by_its_senders_signal() {
        let t = SirThresholds { bt_cdb: 1100, wlan_cdb: [-302, 163, 415, 716] };
        // Two stations: 1 m and 30 m from the AP, the slave 3 m from the AP.
        let g = Geometry {
            wlan: vec![(0.0, 0.0), (1.0, 0.0), (30.0, 0.0)],
            bt: vec![(0.0, 0.0), (0.0, 3.0)],
            wlan_power_dbm: 15.0,
            bt_power_dbm: 0.0,
        };
        let c = with_bt(SirModel::new(&g, t), 1);
        // The slave at the AP: 0 - 49.77 dBm. Station 1's signal there: 15 - 40.23 (SIR 24.5
        // dB); station 2's: 15 - 77.24 (SIR -12.5 dB).
        assert!(!c.wlan_hit(Nanos(500), Nanos(1500), 1, 0, 3));
        assert!(c.wlan_hit(Nanos(600), Nanos(1600), 2, 0, 3));
        // A frame to a station comes from the AP (1 m away: -25.23 dBm) against the slave 3.16
        // m from the station (-50.23 dBm): SIR 25.0 dB.
        assert!(!c.wlan_hit(Nanos(0), Nanos(1500), 0, 1, 3));
    }

    #[test]
    fn a_bluetooth_packet_is_lost_below_11_db_of_its_links_signal() {
        let t = SirThresholds { bt_cdb: 1100, wlan_cdb: [-302, 163, 415, 716] };
        let mut c = Coex::new(6, 1);
        c.sir = Some(Box::new(SirModel::new(&nap(), t)));
        let wlan = |from| OnAir { start: Nanos(1000), end: Nanos(2000), chan: 0, in_band: true, from };
        c.wlan.push(wlan(1));
        // The station's frame (15 dBm, 12 m from the slave: -49.11 dBm) against the master's
        // packet at the slave (-46.25 dBm): C/I 2.86 dB < 11, lost; at the master it is 10 m
        // away (-46.50 dBm) against the slave's -46.25 dBm: C/I 0.25 dB, lost.
        assert!(c.bt_hit(Nanos(0), Nanos(1500), 30, 0, 1) && c.bt_hit(Nanos(0), Nanos(1500), 30, 1, 0));
        // A hop outside the WLAN's band is never hit.
        assert!(!c.bt_hit(Nanos(0), Nanos(1500), 70, 0, 1));
        // A weak WLAN: 15 dBm -> -20 dBm moves every WLAN power down 35 dB: C/I 37.86 and 35.25
        // dB, both survive.
        let weak = Geometry { wlan_power_dbm: -20.0, ..nap() };
        c.sir = Some(Box::new(SirModel::new(&weak, t)));
        assert!(!c.bt_hit(Nanos(0), Nanos(1500), 30, 0, 1) && !c.bt_hit(Nanos(0), Nanos(1500), 30, 1, 0));
        // The AP's own frames at the master 10 cm away (-20 - 20.23 = -40.23 dBm) against the
        // slave's -46.25 dBm: C/I -6.02 dB, lost even so.
        c.wlan.push(wlan(0));
        assert!(c.bt_hit(Nanos(0), Nanos(1500), 30, 1, 0));
    }

    #[test]
    fn path_loss_is_free_space_to_8_m_then_33_db_per_decade() {
        // 20 log10(4 pi 1 / 0.1224) = 40.2 dB at 1 m; 58.3 dB at 8 m on both slopes.
        assert!((path_loss_db(1.0) - 40.23).abs() < 0.01);
        assert!((path_loss_db(8.0) - 58.3).abs() < 0.05);
        assert!((path_loss_db(80.0) - 91.3).abs() < 1e-9);
        // Closer than 10 cm counts as 10 cm: 20 log10(4 pi 0.1 / 0.1224) = 20.23 dB.
        assert_eq!(path_loss_db(0.0), path_loss_db(0.1));
        assert!((path_loss_db(0.1) - 20.23).abs() < 0.01);
    }
}
