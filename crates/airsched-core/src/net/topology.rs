//! Nodes, their named devices, and the routes between them.
//!
//! The cell has a server, an AP and N stations. Every node has named devices: the server's
//! `eth0`, the AP's `wlan0` (to the stations) and `eth0` (to the server), each station's `wlan0`.
//! Devices are created by name and found by name; their index ([`DevId`]) is an implementation
//! detail of the tables that hold them, in creation order (the order `tc -s` reports them).
//! Routes are built once, by name, when the topology is built.

pub use crate::node::{Acct, DevId, Link, Node};

/// One device as the topology knows it.
#[derive(Clone, Debug)]
pub struct DevSpec {
    /// The node's name: "server", "ap" or the station's name.
    pub node_name: String,
    pub node: Node,
    /// The device name: "wlan0" or "eth0".
    pub name: &'static str,
    pub link: Link,
    pub acct: Acct,
}

/// The devices of every node and the routes between nodes.
#[derive(Clone, Debug)]
pub struct Topology {
    pub devs: Vec<DevSpec>,
    /// Egress device of each station (index: station).
    sta_egress: Vec<DevId>,
    ap_to_stations: DevId,
    ap_to_server: DevId,
    server_egress: DevId,
    /// The AP's `bnepN` of each Bluetooth slave, and each slave's own `bnep0`.
    ap_to_bt: Vec<DevId>,
    bt_egress: Vec<DevId>,
}

/// The AP's Bluetooth netdevs, one per slave (BlueZ's NAP gives each PANU session its own
/// `bnepN`, bridged or routed); a piconet has at most 7 active slaves.
pub const BNEP_NAMES: [&str; 7] = ["bnep0", "bnep1", "bnep2", "bnep3", "bnep4", "bnep5", "bnep6"];

impl Topology {
    /// The cell's topology for stations named `stations`. Devices are added node by node: the
    /// AP's `wlan0`, each station's `wlan0`, the AP's `eth0`, the server's `eth0`.
    #[cfg(test)]
    pub fn new(stations: &[String]) -> Topology {
        Topology::with_bluetooth(stations, &[])
    }

    /// The cell's topology with Bluetooth slaves named `slaves`: after the devices of
    /// [`Topology::new`] (whose ids they leave as they were), the AP's `bnep0`..`bnepK-1`, then
    /// each slave's `bnep0`.
    pub fn with_bluetooth(stations: &[String], slaves: &[String]) -> Topology {
        let mut devs = Vec::with_capacity(stations.len() + 3);
        let mut add = |node_name: &str, node: Node, name: &'static str, link: Link, acct: Acct| {
            devs.push(DevSpec { node_name: node_name.to_string(), node, name, link, acct });
        };
        add("ap", Node::Ap, "wlan0", Link::Wifi(0), Acct::Downlink);
        for (i, s) in stations.iter().enumerate() {
            add(s, Node::Station(i as u32), "wlan0", Link::Wifi(i as u32 + 1), Acct::Station(i as u32));
        }
        add("ap", Node::Ap, "eth0", Link::Wire(Node::Server), Acct::Wired);
        add("server", Node::Server, "eth0", Link::Wire(Node::Ap), Acct::Wired);
        for (i, bnep) in BNEP_NAMES.iter().enumerate().take(slaves.len()) {
            add("ap", Node::Ap, bnep, Link::Bt { slave: i as u32, up: false }, Acct::Wired);
        }
        for (i, s) in slaves.iter().enumerate() {
            add(s, Node::BtSlave(i as u32), "bnep0", Link::Bt { slave: i as u32, up: true }, Acct::Wired);
        }
        let mut t = Topology {
            devs,
            sta_egress: Vec::new(),
            ap_to_stations: 0,
            ap_to_server: 0,
            server_egress: 0,
            ap_to_bt: Vec::new(),
            bt_egress: Vec::new(),
        };
        let find = |t: &Topology, node: Node, name: &str| t.find(node, name).expect("every node has its devices");
        t.sta_egress = (0..stations.len() as u32).map(|i| find(&t, Node::Station(i), "wlan0")).collect();
        t.ap_to_stations = find(&t, Node::Ap, "wlan0");
        t.ap_to_server = find(&t, Node::Ap, "eth0");
        t.server_egress = find(&t, Node::Server, "eth0");
        t.ap_to_bt = (0..slaves.len()).map(|i| find(&t, Node::Ap, BNEP_NAMES[i])).collect();
        t.bt_egress = (0..slaves.len() as u32).map(|i| find(&t, Node::BtSlave(i), "bnep0")).collect();
        t
    }

    /// The device `name` of `node`.
    pub fn find(&self, node: Node, name: &str) -> Option<DevId> {
        self.devs.iter().position(|d| d.node == node && d.name == name).map(|i| i as DevId)
    }

    /// Add a virtual device (ifb, imq) to `node`, after every other device (so the indices of
    /// the real ones stay as they were). Its drops are counted as the node's real devices'.
    pub fn add_virtual(&mut self, node_name: &str, node: Node, name: &str) -> DevId {
        let acct = match node {
            Node::Ap => Acct::Downlink,
            Node::Station(i) => Acct::Station(i),
            Node::Server | Node::BtSlave(_) => Acct::Wired,
        };
        self.devs.push(DevSpec {
            node_name: node_name.to_string(),
            node,
            name: intern(name),
            link: Link::Virtual,
            acct,
        });
        (self.devs.len() - 1) as DevId
    }

    /// The device of `node` named `name`, by the node's name ("ap", "server", a station).
    #[cfg(test)]
    pub fn find_by_name(&self, node_name: &str, name: &str) -> Option<DevId> {
        self.devs.iter().position(|d| d.node_name == node_name && d.name == name).map(|i| i as DevId)
    }

    /// The devices of the node named `node_name`, in the table's order, with their ids.
    pub fn devices_of<'a>(&'a self, node_name: &'a str) -> impl Iterator<Item = (DevId, &'a DevSpec)> + 'a {
        self.devs.iter().enumerate().filter(move |(_, d)| d.node_name == node_name).map(|(i, d)| (i as DevId, d))
    }

    /// "node/dev", e.g. "ap/wlan0": the device's stable name.
    pub fn dev_name(&self, dev: DevId) -> String {
        let d = &self.devs[dev as usize];
        format!("{}/{}", d.node_name, d.name)
    }

    /// The egress device at node `at` for a packet going to `dst`.
    #[inline]
    pub fn route(&self, at: Node, dst: Node) -> DevId {
        match at {
            Node::Server => self.server_egress,
            Node::Station(i) => self.sta_egress[i as usize],
            Node::BtSlave(i) => self.bt_egress[i as usize],
            Node::Ap => match dst {
                Node::Server => self.ap_to_server,
                Node::BtSlave(i) => self.ap_to_bt[i as usize],
                _ => self.ap_to_stations,
            },
        }
    }

    /// The WiFi device of WiFi node `node` (0 the AP, i + 1 station i).
    #[inline]
    pub fn wifi_dev(&self, node: u32) -> DevId {
        if node == 0 {
            self.ap_to_stations
        } else {
            self.sta_egress[node as usize - 1]
        }
    }
}

/// A device name as `&'static str`: the real devices' names are literals; a virtual device's
/// name comes from a script and is kept once per distinct name for the life of the process.
fn intern(name: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<Vec<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(|| Mutex::new(Vec::new())).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(n);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_found_by_name_and_routes_follow_them() {
        let t = Topology::new(&["a".into(), "b".into()]);
        let names: Vec<String> = t.devs.iter().map(|d| format!("{}/{}", d.node_name, d.name)).collect();
        assert_eq!(names, ["ap/wlan0", "a/wlan0", "b/wlan0", "ap/eth0", "server/eth0"]);
        let b = t.find_by_name("b", "wlan0").unwrap();
        assert_eq!(t.route(Node::Station(1), Node::Server), b);
        assert_eq!(t.route(Node::Server, Node::Station(0)), t.find_by_name("server", "eth0").unwrap());
        assert_eq!(t.route(Node::Ap, Node::Server), t.find_by_name("ap", "eth0").unwrap());
        assert_eq!(t.route(Node::Ap, Node::Station(1)), t.find_by_name("ap", "wlan0").unwrap());
        assert_eq!(t.wifi_dev(2), b);
        assert_eq!(t.devs[b as usize].link, Link::Wifi(2));
        assert_eq!(t.find_by_name("b", "eth0"), None);
    }

    #[test]
    fn bluetooth_slaves_are_reached_through_the_aps_bnep_devices() {
        let t = Topology::with_bluetooth(&["a".into()], &["p1".into(), "p2".into()]);
        let names: Vec<String> = t.devs.iter().map(|d| format!("{}/{}", d.node_name, d.name)).collect();
        assert_eq!(
            names,
            ["ap/wlan0", "a/wlan0", "ap/eth0", "server/eth0", "ap/bnep0", "ap/bnep1", "p1/bnep0", "p2/bnep0"]
        );
        let ap_bnep1 = t.find_by_name("ap", "bnep1").unwrap();
        assert_eq!(t.route(Node::Ap, Node::BtSlave(1)), ap_bnep1);
        assert_eq!(t.devs[ap_bnep1 as usize].link, Link::Bt { slave: 1, up: false });
        assert_eq!(t.route(Node::BtSlave(0), Node::Server), t.find_by_name("p1", "bnep0").unwrap());
        assert_eq!(t.route(Node::BtSlave(0), Node::Station(0)), t.find_by_name("p1", "bnep0").unwrap());
        assert_eq!(t.route(Node::Ap, Node::Station(0)), t.find_by_name("ap", "wlan0").unwrap());
        assert_eq!(t.route(Node::Server, Node::BtSlave(0)), t.find_by_name("server", "eth0").unwrap());
    }
}
