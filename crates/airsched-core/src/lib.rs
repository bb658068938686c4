//! airsched-core: a deterministic discrete-event simulator of an 802.11 access point, its
//! stations and a server behind it, with Linux queueing disciplines on every egress interface.
//!
//! Layers (see docs/architecture.md): `time` and `engine` (clock, event order, random streams,
//! the outbox), `packet` (arena), `ctx` (what every component is handed), `qdisc` and `tc`
//! (Linux traffic control), `phy` and `mac` (802.11 algorithms), `net` (topology, devices, the
//! wire), `wifi` (the medium and the cell's MAC), `traffic` (applications and TCP glue),
//! `metrics` and `results`, `scenario` (validated input), `sim` (the joining layer).

pub mod bluetooth;
pub mod calibrate;
pub mod coex;
pub mod ctx;
pub mod engine;
pub mod mac;
pub mod mac80211;
pub mod metrics;
pub mod monitor;
pub mod net;
pub mod node;
pub mod packet;
pub mod pcap;
pub mod phy;
pub mod qdisc;
pub mod radio;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod tc;
pub mod tcp;
pub mod time;
pub mod traffic;
pub mod units;
pub mod wifi;
pub mod words;

pub use results::RunResults;
pub use scenario::{parse_scenario, Scenario};
pub use sim::{SimError, Simulation};
pub use time::Nanos;

/// Parse, build and run a scenario to the end.
pub fn run_scenario(scn: &Scenario) -> Result<RunResults, SimError> {
    Simulation::new(scn)?.finish()
}
