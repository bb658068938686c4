//! Building the piconet of a scenario: one link per `[[bluetooth]]` client, its devices from
//! the topology, the hop sequence, and the coexistence logs.

use crate::coex::Coex;
use crate::engine::{named, StreamKind};
use crate::net::{Node, Topology};
use crate::scenario::Scenario;

use super::{hop::Hopper, Bluetooth};

/// The piconet and the two media's coupling of a scenario with `[[bluetooth]]` clients.
pub fn piconet(scn: &Scenario, topo: &Topology) -> (Bluetooth, Coex) {
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
    let coex = Coex::new(channel, scn.stations.len());
    (Bluetooth::new(links, p.host.clone(), hop), coex)
}
