//! Building the piconet of a scenario: one link per `[[bluetooth]]` client, its devices from
//! the topology, the hop sequence, and the coexistence logs (with the SIR refinement's received
//! powers when `[piconet] sir = true`).

use crate::coex::{Coex, Geometry, SirModel, SirThresholds};
use crate::engine::{named, StreamKind};
use crate::net::{Node, Topology};
use crate::scenario::Scenario;

use crate::bluetooth::{hop::Hopper, Bluetooth};

/// The piconet and the two media's coupling of a scenario with `[[bluetooth]]` clients.
pub(crate) fn piconet(scn: &Scenario, topo: &Topology) -> (Bluetooth, Coex) {
    let p = &scn.piconet;
    let links = scn
        .bluetooth
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let down = topo.route(Node::Ap, Node::BtSlave(i as u32));
            let up = topo.route(Node::BtSlave(i as u32), Node::Ap);
            let rng = named(scn.run.seed, StreamKind::BtError, &b.name, 0);
            Bluetooth::link(b.name.clone(), down, up, b.packet_types.clone(), b.packet_error_rate, rng, p.host.acl_pkts)
        })
        .collect();
    let channel = scn.cell.channel;
    let hop = Hopper::new(scn.run.seed, |k| p.afh && crate::coex::in_wlan_band(k, channel));
    let mut coex = Coex::new(channel, scn.stations.len());
    if p.sir {
        coex.sir = Some(Box::new(SirModel::new(&geometry(scn), SirThresholds::new(scn.cell.preamble))));
    }
    (Bluetooth::new(links, p.host.clone(), hop), coex)
}

/// The radios of the SIR refinement: the AP and the piconet's master (the NAP's two radios in
/// one box) at the origin, each station at its `location`, each slave at its `position` (the
/// parser requires both with `sir`; a missing one would count as colocated with the AP).
pub(crate) fn geometry(scn: &Scenario) -> Geometry {
    let origin = (0.0, 0.0);
    Geometry {
        wlan: std::iter::once(origin).chain(scn.stations.iter().map(|s| s.location.unwrap_or(origin))).collect(),
        bt: std::iter::once(origin).chain(scn.bluetooth.iter().map(|b| b.position.unwrap_or(origin))).collect(),
        wlan_power_dbm: scn.piconet.wlan_power_dbm,
        bt_power_dbm: scn.piconet.bt_power_dbm,
    }
}
