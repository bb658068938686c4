//! The network: nodes with named devices and the routes between them ([`topology`]), each
//! device's egress queueing ([`netdev`]), and the wired link ([`wire`]). The WiFi devices'
//! MAC is in `wifi/`, the Bluetooth devices' piconet in `bluetooth/`; both sit beside the
//! network in the simulation (`sim/`), whose `run_dev` hands each device's qdisc to its link.

pub mod netdev;
pub mod topology;
pub mod wire;

pub use netdev::Netdev;
pub use topology::{Acct, DevId, Link, Node, Topology};
pub use wire::Wire;

/// Every device of the network, the topology that names and routes them, and the wire.
pub struct Net {
    pub topo: Topology,
    pub devs: Vec<Netdev>,
    pub wire: Wire,
    /// Some device has an ingress hook (false: arrivals skip the look-up).
    pub ingress: bool,
}
