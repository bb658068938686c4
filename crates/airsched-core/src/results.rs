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
