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
//! signal-to-interference ratio is below its threshold ([`Sir`]).

use std::collections::VecDeque;

use crate::time::Nanos;

/// Bluetooth channels (Core spec, BR/EDR: 2402 + k MHz).
pub const BT_CHANNELS: u32 = 79;

/// Centre frequency (MHz) of 802.11b channel `c` (1..=14).
pub fn wlan_centre_mhz(c: u32) -> u32 {
    if c == 14 { 2484 } else { 2407 + 5 * c }
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

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The SIR refinement (section 8.3, 802.15.2 / UCBT): a hit corrupts the victim only if the
/// interferer's power at the victim's receiver is within the victim's threshold of the wanted
/// signal. Powers are received powers in centi-dBm at each receiver, derived from the radios'
/// positions and transmit powers by the two-slope path loss of 802.15.2 (free space to 8 m,
/// then 3.3 decades per decade).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SirThresholds {
    /// A Bluetooth receiver needs C/I >= 11 dB co-channel (UCBT `cochannel_collide`).
    pub bt_cdb: i32,
    /// An 802.11b receiver, per rate (1, 2, 5.5, 11 Mb/s): the DSSS processing gain (10.4 dB)
    /// lets it survive a Bluetooth interferer down to about -10 dB C/I at 1 and 2 Mb/s; CCK has
    /// less margin.
    pub wlan_cdb: [i32; 4],
}

/// 802.15.2 indoor path loss (dB): free space at 2.45 GHz (lambda = 0.1224 m) up to 8 m, then
/// 58.3 + 33 log10(d / 8) (UCBT `bt-lossmod.cc`, reference next-capabilities.md section 1.5).
pub fn path_loss_db(d_m: f64) -> f64 {
    let d = d_m.max(0.1);
    if d <= 8.0 {
        20.0 * (4.0 * std::f64::consts::PI * d / 0.1224).log10()
    } else {
        58.3 + 33.0 * (d / 8.0).log10()
    }
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

/// Received powers for the SIR refinement, in centi-dBm: `wlan_at_bt[w][b]` the power of WLAN
/// node w's transmissions at Bluetooth node b's receiver, `bt_at_wlan[b][w]` the reverse,
/// `bt_wanted[b]` the wanted signal at Bluetooth node b's receiver (its peer's power there),
/// `wlan_wanted[w]` the same for WLAN node w.
#[derive(Clone, Debug, PartialEq)]
pub struct SirModel {
    pub wlan_at_bt: Vec<Vec<i32>>,
    pub bt_at_wlan: Vec<Vec<i32>>,
    pub bt_wanted: Vec<i32>,
    pub wlan_wanted: Vec<i32>,
    pub thresholds: SirThresholds,
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

    /// Is a WLAN frame from node `from` to node `to` on the air over [start, end) (at DSSS rate
    /// index `rate`) corrupted by a Bluetooth packet?
    pub fn wlan_hit(&self, start: Nanos, end: Nanos, to: u32, rate: usize) -> bool {
        match &self.sir {
            None => self.bt.overlapping(start, end, true).next().is_some(),
            Some(s) => self
                .bt
                .overlapping(start, end, true)
                .any(|b| s.wlan_wanted[to as usize] - s.bt_at_wlan[b.from as usize][to as usize] < s.thresholds.wlan_cdb[rate]),
        }
    }

    /// Is a Bluetooth packet on channel `chan` over [start, end), received by Bluetooth node
    /// `to`, corrupted by a WLAN frame?
    pub fn bt_hit(&self, start: Nanos, end: Nanos, chan: u32, to: u32) -> bool {
        if !self.in_band(chan) {
            return false;
        }
        match &self.sir {
            None => self.wlan.overlapping(start, end, false).next().is_some(),
            Some(s) => self
                .wlan
                .overlapping(start, end, false)
                .any(|w| s.bt_wanted[to as usize] - s.wlan_at_bt[w.from as usize][to as usize] < s.thresholds.bt_cdb),
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

    #[test]
    fn path_loss_is_free_space_to_8_m_then_33_db_per_decade() {
        // 20 log10(4 pi 1 / 0.1224) = 40.2 dB at 1 m; 58.3 dB at 8 m on both slopes.
        assert!((path_loss_db(1.0) - 40.23).abs() < 0.01);
        assert!((path_loss_db(8.0) - 58.3).abs() < 0.05);
        assert!((path_loss_db(80.0) - 91.3).abs() < 1e-9);
    }
}
