//! airsched-core: a deterministic discrete-event simulator of an 802.11 access point, its
//! stations and a server behind it, with Linux queueing disciplines on every egress interface.
//!
//! Layers (see docs/architecture.md): `time` and `engine` (clock, event order, random streams,
//! the outbox), `packet` (arena), `ctx` (what every component is handed), `qdisc` and `tc`
//! (Linux traffic control), `phy` and `mac` (802.11 algorithms), `net` (topology, devices, the
//! wire), `wifi` (the medium and the cell's MAC), `traffic` (applications and TCP glue),
//! `metrics` and `results`, `scenario` (validated input), `sim` (the joining layer).
//!
//! # Public API
//!
//! Every module is private. The public API is exactly what the crate's users name: the Python
//! binding (crates/airsched-py), the integration tests (tests/) and the example (examples/).
//! It is re-exported flat at the crate root, below, grouped by topic, so that the internal
//! module layout can change without changing what users write, and so that the compiler reports
//! anything nothing uses as dead code. Items reachable from these (fields, method results) are
//! public in their modules but need no name here unless a user writes it. The DSSS timing helpers
//! carry a `dsss_` prefix, since the OFDM and HT PHYs have functions of the same names.

mod bluetooth;
mod coex;
mod ctx;
mod engine;
mod mac;
mod mac80211;
mod metrics;
mod monitor;
mod net;
mod node;
mod packet;
mod pcap;
mod phy;
mod qdisc;
mod radio;
mod results;
mod scenario;
mod sim;
mod tc;
mod tcp;
mod time;
mod traffic;
mod units;
mod wifi;
mod words;

// Scenarios: parse, check, run.
pub use scenario::{
    parse_scenario, parse_scenario_with, toml_string, NodeConfig, Scenario, ScenarioError, ScenarioErrors,
    OVERRIDES_FILE,
};
pub use sim::external::{ExternalError, ExternalFlow};
pub use sim::{SimError, Simulation};
pub use time::Nanos;
pub use traffic::flow::{Endpoint, MAX_UDP_PAYLOAD};
pub use units::parse_time;
pub use wifi::ht::ofdma::{MuScheduler, Ofdma, OfdmaConfig, OfdmaStats, RU_LOG_LEN};
pub use wifi::ht::ofdma_ul::UlStats;
pub use wifi::ht::NextStepsStats;

// Results and their schema.
pub use metrics::queues::QueueTrace;
pub use metrics::SampleKind;
pub use pcap::{LINKTYPE_ETHERNET, LINKTYPE_RADIOTAP};
pub use results::{
    schema, AggregateRow, BtLinkRow, Cell, CfpRow, CoexRow, ColumnType, Conservation, DemotionRow, FlowResult,
    InterfaceRow, InterfaceTc, MacStationRow, MacTxqRow, NodeResult, OfdmaRow, PingRow, PollRow, RateRow, RunResults,
    SampleRow, StationResult, Summary, Table, SAMPLE_INTERVAL_COLUMN,
};

// Traffic control: tc scripts, qdisc trees and their reports, classifiers.
pub use packet::{tos_to_priority, FlowKey};
pub use qdisc::classify::{classify, Filter, FilterKind, U32Key, ETH_P_ALL, ETH_P_IP};
pub use qdisc::ematch::text as ematch_text;
pub use qdisc::{ClassReport, Handle, Qdisc, QdiscReport, QdiscStats};
pub use tc::{
    build_trees, check_script_on, class_show, declared_trees, parse_script, qdisc_show, tree_text, Command,
    DeclaredQdisc, DeviceSpec, Op, Severity, TcDiag,
};

// PHY and MAC models.
pub use mac::dcf::{BackoffCountdown, CwAtRetryLimit};
pub use mac::edca::TxopTable;
pub use mac::rate::RateControl;
pub use phy::dsss::{
    ack_time as dsss_ack_time, control_response_rate as dsss_control_response_rate, txtime as dsss_txtime, DsssRate,
    Preamble, ACK_BYTES as DSSS_ACK_BYTES,
};
pub use phy::error_rate::{snr_for_per, ErrMode, ErrorModel, OfdmRate};
pub use phy::ht::{ChannelWidth, GuardInterval, HtMcs, LINUX_MAX_AGGR_TIME};
pub use phy::ofdm::{OfdmBand, MANDATORY_RATES};
pub use phy::Standard;
pub use wifi::ht::params::{
    AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue, StationAggregation,
};
pub use wifi::ifs::CollisionIfs;
pub use wifi::legacy::{ApRateControl, LegacyAp, TxBuffers};
pub use wifi::pcf::{CfParams, PcfTiming, PointCoordinator};

// Radio conditions, coexistence and the channel monitor's calibration.
pub use coex::path_loss_db;
pub use monitor::builtin_calibration;
pub use radio::Position;
pub use sim::calibrate::{calibrate, measure_point, CalibrationSpec};

/// Parse, build and run a scenario to the end.
pub fn run_scenario(scn: &Scenario) -> Result<RunResults, SimError> {
    Simulation::new(scn)?.finish()
}
