//! Who is who in the network: nodes, device ids, what a device transmits on, and whom its drops
//! are counted against. Below every component (`ctx`, `net`, `wifi`, `traffic`), so each can
//! name the others' nodes and devices without depending on them.

/// A node of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Server,
    Ap,
    /// Station by its index in the scenario.
    Station(u32),
    /// Bluetooth slave (`[[bluetooth]]`) by its index in the scenario.
    BtSlave(u32),
}

/// Index of a device in the network's device table.
pub type DevId = u32;

/// What a device transmits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Over the air; the WiFi node index (0 is the AP, i + 1 station i).
    Wifi(u32),
    /// Serialises onto the wire and delivers to this node.
    Wire(Node),
    /// A Bluetooth ACL link to (`up` false: the AP's `bnepN`) or from (`up`: the slave's
    /// `bnep0`) Bluetooth slave `slave`.
    Bt { slave: u32, up: bool },
    /// A virtual device (ifb, imq: `tc/virt.rs`): what its qdisc releases goes on at once to
    /// the packet's own device (`Packet::iif`).
    Virtual,
}

/// The per-station accounting of packets a device drops: the station a packet at this device is
/// to or from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acct {
    /// The AP's WiFi device: the packet's destination station, if it has one.
    Downlink,
    /// A station's own device.
    Station(u32),
    /// A wired device: no station.
    Wired,
}
