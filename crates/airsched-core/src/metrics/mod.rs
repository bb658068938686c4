//! Counters, the warm-up snapshot, and the per-interval samples.
//!
//! Every counter is cumulative from t = 0. At the end of the warm-up the whole set is copied;
//! reported figures are `final - snapshot`, so the per-event path never tests "are we measuring?".

pub mod queues;
pub mod recorder;

use crate::time::Nanos;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub sent_packets: u64,
    pub received_packets: u64,
    pub received_payload_bytes: u64,
    pub drops_queue: u64,
    pub drops_retry: u64,
    /// Sends of a saturating source its own host's qdisc refused (ENOBUFS): never sent.
    pub refused_sends: u64,
    /// Sum of one-way delays (application send to application receive) of received packets.
    pub delay_sum_ns: u128,
    /// Sum of time spent in queueing disciplines by received packets.
    pub queue_delay_sum_ns: u128,
}

/// Everything that happened to frames to or from one station.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationCounters {
    /// Air time of every attempt of a data frame to or from the station and of its ACKs.
    pub airtime_ns: u64,
    pub tx_attempts: u64,
    /// Data frames delivered (acknowledged), both directions.
    pub tx_frames: u64,
    pub retries: u64,
    pub collisions: u64,
    pub drops_queue: u64,
    pub drops_retry: u64,
    /// Lone data frames the receiver did not decode (channel errors, not collisions).
    pub data_errors: u64,
    /// Data frames decoded whose ACK the sender did not decode.
    pub ack_errors: u64,
    /// Attempts and acknowledged attempts per direction (0 down, 1 up) and DSSS rate index.
    pub attempts_by_rate: [[u64; 4]; 2],
    pub acked_by_rate: [[u64; 4]; 2],
    /// Air time per direction (0 down: the AP's PPDUs to the station and the station's
    /// (Block)Acks; 1 up), every attempt.
    pub air_dir_ns: [u64; 2],
    /// 802.11n/ac/ax: PPDU attempts per direction by the number of MPDUs they carried (index
    /// 1-256: an 802.11ax BlockAck window holds 256).
    pub ampdu_mpdus: [AmpduHist; 2],
    /// 802.11n: MPDUs acknowledged by a BlockAck (or ACK), both directions.
    pub acked_mpdus: u64,
    /// 802.11n: PPDU attempts per direction and MCS, and those answered by a (Block)Ack.
    pub mcs_attempts: [[u64; 16]; 2],
    pub mcs_acked: [[u64; 16]; 2],
}

/// Counts of aggregates by their number of MPDUs (index 0 unused, 1..=256, the largest
/// BlockAck window: IEEE80211_MAX_AMPDU_BUF_HE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmpduHist(pub [u64; AMPDU_HIST_LEN]);

/// Entries of [`AmpduHist`]: 0 (unused) to 256 MPDUs.
pub const AMPDU_HIST_LEN: usize = 257;

impl Default for AmpduHist {
    fn default() -> Self {
        AmpduHist([0; AMPDU_HIST_LEN])
    }
}

impl std::ops::Index<usize> for AmpduHist {
    type Output = u64;
    fn index(&self, i: usize) -> &u64 {
        &self.0[i]
    }
}

impl std::ops::IndexMut<usize> for AmpduHist {
    fn index_mut(&mut self, i: usize) -> &mut u64 {
        &mut self.0[i]
    }
}

/// What one transmitter (AP or station) did on the air, whoever the frames were for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounters {
    pub airtime_ns: u64,
    pub tx_attempts: u64,
    pub beacons: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub flows: Vec<FlowCounters>,
    pub stations: Vec<StationCounters>,
    /// WiFi nodes: index 0 is the AP, 1.. the stations.
    pub nodes: Vec<NodeCounters>,
    /// MAC transmission attempts of any frame (data, beacons), all nodes.
    pub frames: u64,
    /// Time the medium was busy (frames, the SIFS before an ACK, ACKs), collisions counted once.
    pub medium_busy_ns: u64,
    /// PCF (a point-coordinated cell; zeros and no stations otherwise).
    pub pcf: PcfCounters,
    /// OFDMA (an 802.11ax cell with `[ap] ofdma`; no stations otherwise).
    pub ofdma: OfdmaCounters,
}

/// Each station's part in the multi-user exchanges of an 802.11ax cell with `[ap] ofdma`
/// (`wifi::ht::ofdma`, `wifi::ht::ofdma_ul`); the PPDUs themselves are counted by the AP's
/// scheduler (`OfdmaStats`, `UlStats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OfdmaCounters {
    /// Per station (empty without OFDMA).
    pub stations: Vec<OfdmaStationCounters>,
}

/// One station's part of the DL MU PPDUs and the Basic Trigger exchanges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OfdmaStationCounters {
    /// DL MU PPDUs it was a user of, the MPDUs they carried for it (attempts), and the tones
    /// of its RUs summed over them.
    pub dl_ppdus: u64,
    pub dl_mpdus: u64,
    pub dl_tones: u64,
    /// Basic Triggers that solicited it (one that collided included).
    pub ul_triggers: u64,
    /// HE TB PPDUs it sent, those with QoS Null frames only, those the AP did not decode, the
    /// data MPDUs they carried (attempts), and the tones of its RUs summed over them.
    pub ul_tb_ppdus: u64,
    pub ul_qos_null: u64,
    pub ul_lost: u64,
    pub ul_mpdus: u64,
    pub ul_tones: u64,
}

/// Each station's part in the contention-free periods of a point-coordinated cell
/// (`wifi::cfp`); the periods themselves are recorded by the point coordinator
/// (`Cfp::records`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcfCounters {
    /// Per station (empty outside a PCF cell).
    pub stations: Vec<PcfStationCounters>,
}

/// One station's part of the CFPs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcfStationCounters {
    /// CF-Polls and Data+CF-Polls the PC sent it.
    pub polls: u64,
    /// Data frames the PC sent it (Data+CF-Poll, or Data when it is not CF-Pollable).
    pub data_down: u64,
    /// Data frames it sent when polled.
    pub data_up: u64,
    /// Null answers (nothing to send).
    pub nulls: u64,
    /// Polls it did not decode (no answer; the PC went on after PIFS).
    pub unanswered: u64,
}

impl Counters {
    pub fn new(flows: usize, stations: usize) -> Self {
        Counters {
            flows: vec![FlowCounters::default(); flows],
            stations: vec![StationCounters::default(); stations],
            nodes: vec![NodeCounters::default(); stations + 1],
            frames: 0,
            medium_busy_ns: 0,
            pcf: PcfCounters::default(),
            ofdma: OfdmaCounters::default(),
        }
    }
}

/// One goodput sample of a flow or a station.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// End of the interval.
    pub time: Nanos,
    pub kind: SampleKind,
    /// Index of the flow or station.
    pub index: u32,
    pub goodput_bps: f64,
    /// Station rows with radio conditions: the downlink SNR at the sample instant (fading
    /// included), dB; NaN otherwise.
    pub snr_db: f64,
    /// Station rows when the AP's channel monitor runs: its goodput estimate towards the
    /// station at the sample instant; NaN otherwise.
    pub estimate_bps: f64,
    /// TCP flow rows: the sender's congestion window at the sample instant, bytes; NaN otherwise.
    pub cwnd_bytes: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    Station,
    Flow,
}

/// Mean and sample standard deviation (n - 1 in the denominator, as pandas computes it).
/// NaN standard deviation with fewer than two values.
pub fn mean_std(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut n, mut mean, mut m2) = (0u64, 0.0f64, 0.0f64);
    for x in values {
        // Welford's update, stable for long runs.
        n += 1;
        let d = x - mean;
        mean += d / n as f64;
        m2 += d * (x - mean);
    }
    match n {
        0 => (f64::NAN, f64::NAN),
        1 => (mean, f64::NAN),
        _ => (mean, (m2 / (n - 1) as f64).sqrt()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_std() {
        let (m, s) = mean_std([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert!((m - 5.0).abs() < 1e-12);
        // Sample std of this set is sqrt(32/7).
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let (m1, s1) = mean_std([3.0].into_iter());
        assert_eq!(m1, 3.0);
        assert!(s1.is_nan());
    }
}
