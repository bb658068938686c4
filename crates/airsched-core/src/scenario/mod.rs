//! The typed, validated description of one run.
//!
//! `parse.rs` turns a TOML scenario file into a [`Scenario`]; every value here has already been
//! checked (units, ranges, names), so the simulator never re-validates.

mod parse;

pub use parse::{parse_scenario, ScenarioError, ScenarioErrors};

use crate::phy::dsss::{DsssRate, Preamble};
use crate::time::Nanos;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub run: RunConfig,
    pub cell: CellConfig,
    pub wired: WiredConfig,
    pub ap: NodeConfig,
    pub server: NodeConfig,
    pub stations: Vec<StationConfig>,
    pub flows: Vec<FlowConfig>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// Simulated time, warm-up included.
    pub duration: Nanos,
    /// Left out of every statistic (counted from t = 0).
    pub warmup: Nanos,
    pub seed: u64,
    pub sample_interval: Nanos,
}

/// How long bystanders defer after a frame they could not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EifsRule {
    /// 802.11-2016 / ns-3: SIFS + EstimatedAckTxTime(PPDU that caused the EIFS) + DIFS.
    Estimated,
    /// 802.11-1999/2007: SIFS + ACK at 1 Mb/s long preamble + DIFS = 364 us.
    Legacy,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    /// Only "802.11b" for now.
    pub standard: Standard,
    pub preamble: Preamble,
    /// BSSBasicRateSet, sorted ascending, never empty.
    pub basic_rates: Vec<DsssRate>,
    pub beacons: bool,
    pub beacon_interval: Nanos,
    /// Beacon PSDU length in bytes (MAC header, body and FCS).
    pub beacon_bytes: u32,
    /// Transmission attempts of one frame before it is dropped (dot11ShortRetryLimit).
    pub retry_limit: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    pub eifs: EifsRule,
    pub collision_defer: CollisionDefer,
}

/// How the stations whose frames collided defer once the medium is idle again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollisionDefer {
    /// Everyone who heard the collision, the colliders included, treats it as a corrupted frame
    /// and defers EIFS from its end; a collider also never resumes before its ACKTimeout + DIFS.
    /// This is the convention of the analytical models and the Monte Carlo of reference 9.
    Eifs,
    /// Each collider waits ACKTimeout after its own frame, then DIFS once the medium is idle
    /// (ns-3's timing): with frames of unequal length, the shorter collider resumes first.
    AckTimeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Dot11b,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WiredConfig {
    pub rate_bps: u64,
    pub delay: Nanos,
}

/// Settings shared by every node with an egress interface.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    /// pfifo limit in packets of the node's egress interface (Linux txqueuelen).
    pub txqueuelen: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    pub name: String,
    /// Fixed data rate, used in both directions (frames to and from the station).
    pub rate: DsssRate,
    pub node: NodeConfig,
}

/// Where a flow starts or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Server,
    Ap,
    /// Index into `Scenario::stations`.
    Station(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Udp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRate {
    /// Constant bit rate counted in UDP payload bits per second, as `iperf -u -b` counts it.
    Cbr { bits_per_second: u64 },
    /// Always backlogged: the source keeps its first-hop queue non-empty.
    Saturate,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    pub name: String,
    pub protocol: Protocol,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub rate: FlowRate,
    /// UDP payload bytes per packet.
    pub size: u32,
    pub start: Nanos,
    /// `None`: runs to the end.
    pub stop: Option<Nanos>,
    /// CBR only: each packet leaves up to this much after its nominal time (uniform), as an
    /// application's timer jitter does; zero by default (exact CBR).
    pub jitter: Nanos,
}

/// Bytes a UDP packet of `payload` bytes occupies as an IP datagram (IPv4 20 + UDP 8).
pub const UDP_IP_OVERHEAD: u32 = 28;
/// Largest UDP payload that fits a 2304-byte MSDU (802.11 max MSDU) with IPv4 and UDP headers.
pub const MAX_UDP_PAYLOAD: u32 = 2304 - UDP_IP_OVERHEAD;
