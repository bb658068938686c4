//! Building the network of a scenario: every node's devices by name, with the qdisc trees of
//! the nodes' tc scripts, and the wire.

use crate::net::{netdev, Link, Net, Netdev, Node, Wire};
use crate::scenario::{tc_trees, Scenario};

/// The devices of every node of a scenario, by name, with the qdisc trees of the nodes' tc
/// scripts. Fails with the scripts' errors if one does not build.
pub(crate) fn net(scn: &Scenario) -> Result<Net, Vec<String>> {
    let is_ht = scn.cell.standard.is_ht_mac();
    let mut topo = scn.topology();
    let mut devs: Vec<Netdev> = topo
        .devs
        .iter()
        .map(|d| {
            let txqueuelen = match d.node {
                Node::Ap => scn.ap.txqueuelen,
                Node::Server => scn.server.txqueuelen,
                Node::Station(i) => scn.stations[i as usize].node.txqueuelen,
                Node::BtSlave(i) => scn.bluetooth[i as usize].node.txqueuelen,
            };
            let mut dev = Netdev::new(txqueuelen, d.link, d.acct);
            // In an 802.11n cell a frame leaves the first hop when it leaves the driver.
            dev.leaves_at_dequeue = !(is_ht && matches!(d.link, Link::Wifi(_)));
            dev
        })
        .collect();
    let nodes = tc_trees::nodes_with_scripts(scn, &topo);
    let built = tc_trees::trees_for_run(scn, &nodes)
        .map_err(|errors| errors.iter().map(|e| e.to_string()).collect::<Vec<_>>())?;
    for (node, (trees, virt)) in nodes.iter().zip(built) {
        for (index, root) in trees {
            devs[index as usize].qdisc = root;
        }
        let owner = topo.devs[node.devices[0].2 as usize].node;
        // Virtual devices come after every real one (tc/virt.rs), then the hooks that feed them.
        for (v, tree) in virt.devices {
            let id = topo.add_virtual(&node.node_name, owner, &v.name);
            let mut dev = Netdev::new(v.txqueuelen, Link::Virtual, topo.devs[id as usize].acct);
            if let Some(root) = tree {
                dev.qdisc = root;
            }
            devs.push(dev);
        }
        let find = |name: &str| topo.find(owner, name).expect("the build checked every device name");
        for h in virt.hooks {
            let d = &mut devs[find(&h.dev) as usize];
            d.policers = h.policers;
            if !h.ingress.is_empty() {
                d.ingress = Some(Box::new(netdev::Ingress { filters: h.ingress }));
            }
            if h.imq.is_some() || h.rules.iter().any(|r| r.to.is_some()) {
                let hook = netdev::Hook {
                    imq: h.imq.as_deref().map(find),
                    rules: h.rules.into_iter().map(|r| (r.filter, r.to.as_deref().map(find))).collect(),
                };
                d.hook = Some(Box::new(hook));
            }
        }
    }
    let ingress = devs.iter().any(|d| d.ingress.is_some());
    Ok(Net { topo, devs, wire: Wire { rate_bps: scn.wired.rate_bps, delay: scn.wired.delay }, ingress })
}
