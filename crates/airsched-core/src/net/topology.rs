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
}

impl Topology {
    /// The cell's topology for stations named `stations`. Devices are added node by node: the
    /// AP's `wlan0`, each station's `wlan0`, the AP's `eth0`, the server's `eth0`.
    pub fn new(stations: &[String]) -> Topology {
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
        let mut t = Topology { devs, sta_egress: Vec::new(), ap_to_stations: 0, ap_to_server: 0, server_egress: 0 };
        let find = |t: &Topology, node: Node, name: &str| t.find(node, name).expect("every node has its devices");
        t.sta_egress = (0..stations.len() as u32).map(|i| find(&t, Node::Station(i), "wlan0")).collect();
        t.ap_to_stations = find(&t, Node::Ap, "wlan0");
        t.ap_to_server = find(&t, Node::Ap, "eth0");
        t.server_egress = find(&t, Node::Server, "eth0");
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
            Node::Server => Acct::Wired,
        };
        self.devs.push(DevSpec { node_name: node_name.to_string(), node, name: intern(name), link: Link::Virtual, acct });
        (self.devs.len() - 1) as DevId
    }

    /// The device of `node` named `name`, by the node's name ("ap", "server", a station).
    pub fn find_by_name(&self, node_name: &str, name: &str) -> Option<DevId> {
        self.devs.iter().position(|d| d.node_name == node_name && d.name == name).map(|i| i as DevId)
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
            Node::Ap => match dst {
                Node::Server => self.ap_to_server,
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
}
