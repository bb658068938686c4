//! The network: nodes with named devices and the routes between them ([`topology`]), each
//! device's egress queueing ([`netdev`]), and the wired link ([`wire`]). The WiFi devices'
//! MAC is in `wifi/`; the Bluetooth devices' links (`crate::bluetooth`) are held here, beside
//! the wire, because a device's qdisc feeds them by a call (`run_dev`).

mod build;
pub mod netdev;
pub mod topology;
pub mod wire;

pub use netdev::Netdev;
pub use topology::{Acct, DevId, DevSpec, Link, Node, Topology};
pub use wire::{Wire, ETHERNET_WIRE_OVERHEAD};

/// Every device of the network, the topology that names and routes them, and the wire.
pub struct Net {
    pub topo: Topology,
    pub devs: Vec<Netdev>,
    pub wire: Wire,
    /// The AP's piconet, when the scenario has `[[bluetooth]]` clients.
    pub bt: Option<Box<crate::bluetooth::Bluetooth>>,
}
