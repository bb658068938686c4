//! What a run reports: plain rows that cross into Python as columns.

use crate::metrics::Sample;
use crate::time::Nanos;

/// Whole-run packet accounting (warm-up included): offered = delivered + dropped + in flight.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conservation {
    pub offered: u64,
    pub delivered: u64,
    pub dropped_queue: u64,
    pub dropped_retry: u64,
    pub in_flight: u64,
    pub per_flow_in_flight: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub sim_seconds: f64,
    pub measured_seconds: f64,
    /// Wall time spent processing events (set-up and result gathering excluded).
    pub wall_seconds: f64,
    pub events: u64,
    pub seed: u64,
    pub total_goodput_mbps: f64,
    /// MAC transmission attempts (data and beacons) in the measured window.
    pub frames: u64,
    /// Share of the measured time the medium was busy (channel utilisation).
    pub medium_busy_share: f64,
    pub conservation: Conservation,
}

/// Per station, over the measured window (after warm-up).
#[derive(Clone, Debug, PartialEq)]
pub struct StationResult {
    pub name: String,
    pub rate_mbps: f64,
    pub goodput_mbps: f64,
    pub goodput_std_mbps: f64,
    pub goodput_up_mbps: f64,
    pub goodput_down_mbps: f64,
    pub airtime_s: f64,
    pub airtime_share: f64,
    pub tx_frames: u64,
    pub tx_attempts: u64,
    pub retries: u64,
    pub collisions: u64,
    pub drops: u64,
    pub drops_queue: u64,
    pub drops_retry: u64,
    pub queue_delay_mean_ms: f64,
    /// "fixed", "arf", "aarf" or "minstrel".
    pub rate_control: String,
    /// Attempt-weighted mean PHY rate of the frames to (down) and from (up) the station; NaN
    /// when there were none.
    pub mean_rate_down_mbps: f64,
    pub mean_rate_up_mbps: f64,
    /// Lone data frames not decoded by their receiver, and decoded frames whose ACK was lost.
    pub data_errors: u64,
    pub ack_errors: u64,
    /// Radio resource occupancy (Garroppo et al., Figs. 6 and 7): this station's share of the
    /// airtime spent on all stations' frames, retries and ACKs included. Sums to 1 over the
    /// stations that used the air.
    pub occupancy: f64,
    /// Mean downlink SNR over the sample instants (dB); NaN without radio conditions.
    pub snr_mean_db: f64,
    /// The AP's channel monitor: mean goodput estimate over the sample instants and relative
    /// goodput at the end; NaN when no monitor runs.
    pub estimate_mean_mbps: f64,
    pub rel_goodput_end: f64,
    /// Air time of the frames to the station (the AP's PPDUs, every attempt, and the
    /// station's ACKs/BlockAcks) and from it (its PPDUs and the AP's responses).
    pub airtime_down_s: f64,
    pub airtime_up_s: f64,
    /// The station's share of the AP's transmit airtime to all stations (Høiland-Jørgensen et
    /// al., Fig. 1/3): down airtime over the sum of all stations' down airtime.
    pub airtime_down_share: f64,
    /// 802.11n: mean MPDUs per PPDU attempt to and from the station (NaN: none, or 802.11b).
    pub ampdu_mean_down: f64,
    pub ampdu_mean_up: f64,
}

/// How many PPDU attempts to or from a station carried a given number of MPDUs (802.11n).
#[derive(Clone, Debug, PartialEq)]
pub struct AggregateRow {
    pub station: String,
    /// "down" or "up".
    pub direction: &'static str,
    pub mpdus: u32,
    pub count: u64,
    /// Share of the direction's PPDU attempts.
    pub share: f64,
}

/// Attempts at one PHY rate on one direction of one station's link.
#[derive(Clone, Debug, PartialEq)]
pub struct RateRow {
    pub station: String,
    /// "down" (AP to station) or "up".
    pub direction: &'static str,
    pub rate_mbps: f64,
    /// 802.11n: the HT MCS (MCS 1 and MCS 8 share a rate); -1 for an 802.11b rate.
    pub mcs: i32,
    pub attempts: u64,
    /// Attempts acknowledged.
    pub acked: u64,
    /// Share of the direction's attempts at this rate.
    pub share: f64,
}

/// Per flow, over the measured window; `in_flight` is at the end of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub protocol: String,
    pub goodput_mbps: f64,
    pub goodput_std_mbps: f64,
    pub sent_packets: u64,
    pub received_packets: u64,
    pub lost_packets: u64,
    pub drops_queue: u64,
    pub drops_retry: u64,
    pub in_flight: u64,
    pub delay_mean_ms: f64,
    pub delay_max_ms: f64,
    pub queue_delay_mean_ms: f64,
    /// Ping flows: round-trip times of the replies received in the measured window (mean,
    /// nearest-rank percentiles, max) and how many; NaN and 0 for other flows.
    pub rtt_mean_ms: f64,
    pub rtt_p50_ms: f64,
    pub rtt_p90_ms: f64,
    pub rtt_p99_ms: f64,
    pub rtt_max_ms: f64,
    pub rtt_samples: u64,
    /// TCP flows, in the measured window (after the warm-up): segments retransmitted (fast
    /// retransmit and recovery, and after timeouts), fast-recovery episodes, retransmission
    /// timeouts; at the end: the congestion window (bytes) and the sender's smoothed RTT (ms);
    /// 0 / NaN for other flows.
    pub tcp_retransmits: u64,
    pub tcp_fast_recoveries: u64,
    pub tcp_rtos: u64,
    pub tcp_cwnd_end: u64,
    pub tcp_srtt_ms: f64,
}

/// One answered ping, for latency CDFs.
#[derive(Clone, Debug, PartialEq)]
pub struct PingRow {
    pub flow: String,
    pub seq: u64,
    /// When the reply arrived, seconds from the start.
    pub time_s: f64,
    pub rtt_ms: f64,
}

/// Per transmitter (AP first, then stations), over the measured window.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeResult {
    pub name: String,
    pub airtime_s: f64,
    pub airtime_share: f64,
    pub tx_attempts: u64,
    pub beacons: u64,
}

/// The queueing tree of one interface at the end of the run, as `tc -s qdisc show` and
/// `tc -s class show` would report it.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceTc {
    /// "ap", "server" or a station name.
    pub node: String,
    /// "wlan0" or "eth0".
    pub dev: String,
    pub qdiscs: Vec<crate::qdisc::QdiscReport>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunResults {
    pub summary: Summary,
    pub stations: Vec<StationResult>,
    pub flows: Vec<FlowResult>,
    pub nodes: Vec<NodeResult>,
    /// Per station, direction and rate with at least one attempt.
    pub rates: Vec<RateRow>,
    /// Every answered ping in the measured window.
    pub pings: Vec<PingRow>,
    /// 802.11n aggregate size distribution (empty in 802.11b cells).
    pub aggregates: Vec<AggregateRow>,
    pub samples: Vec<Sample>,
    pub sample_interval: Nanos,
    /// Every interface's qdisc tree with its statistics.
    pub tc: Vec<InterfaceTc>,
    /// tc options accepted but not modelled, and other things to check before trusting the
    /// numbers.
    pub warnings: Vec<String>,
}

impl RunResults {
    /// Everything but wall time, for determinism checks.
    pub fn without_wall_time(&self) -> RunResults {
        let mut r = self.clone();
        r.summary.wall_seconds = 0.0;
        r
    }
}
