//! The tc scripts of a scenario: parsed, checked and built into one qdisc tree per configured
//! device, with every tc diagnostic mapped to the scenario file's line and column.

use super::{Scenario, ScenarioError, TcSource};
use crate::qdisc::QdiscImpl;
use crate::tc::{parse_script, DeviceSpec, Severity, TcDiag};

/// Which node an interface belongs to, its device name, its index in the simulator's
/// interface table (0 AP wlan0, 1..=N station wlan0, N+1 AP eth0, N+2 server eth0), and the
/// random-stream key of its qdiscs, derived from its "node/dev" name (`engine::rng`), so that
/// adding a station leaves every other device's qdisc draws as they were.
pub struct NodeDevices<'s> {
    pub source: &'s TcSource,
    pub devices: Vec<(&'static str, u32, usize, u64)>,
    /// The node's name ("ap", "server", a station's), which keys its virtual devices' streams.
    pub node_name: String,
}

fn key(node: &str, dev: &str) -> u64 {
    crate::engine::rng::name_key(&format!("{node}/{dev}"))
}

/// Every node that has a tc script, with its devices.
pub fn nodes_with_scripts(scn: &Scenario) -> Vec<NodeDevices<'_>> {
    let n = scn.stations.len();
    let k = scn.bluetooth.len();
    let mut out = Vec::new();
    if let Some(src) = &scn.ap.tc {
        let mut devices = vec![
            ("wlan0", scn.ap.txqueuelen, 0, key("ap", "wlan0")),
            ("eth0", scn.ap.txqueuelen, n + 1, key("ap", "eth0")),
        ];
        // The AP's `bnepN` of each Bluetooth slave (after the server's eth0).
        for (i, name) in crate::net::topology::BNEP_NAMES.iter().enumerate().take(k) {
            devices.push((name, scn.ap.txqueuelen, n + 3 + i, key("ap", name)));
        }
        out.push(NodeDevices { source: src, devices, node_name: "ap".into() });
    }
    for (i, b) in scn.bluetooth.iter().enumerate() {
        if let Some(src) = &b.node.tc {
            out.push(NodeDevices {
                source: src,
                devices: vec![("bnep0", b.node.txqueuelen, n + 3 + k + i, key(&b.name, "bnep0"))],
                node_name: b.name.clone(),
            });
        }
    }
    for (i, st) in scn.stations.iter().enumerate() {
        if let Some(src) = &st.node.tc {
            out.push(NodeDevices {
                source: src,
                devices: vec![("wlan0", st.node.txqueuelen, i + 1, key(&st.name, "wlan0"))],
                node_name: st.name.clone(),
            });
        }
    }
    if let Some(src) = &scn.server.tc {
        out.push(NodeDevices {
            source: src,
            devices: vec![("eth0", scn.server.txqueuelen, n + 2, key("server", "eth0"))],
            node_name: "server".into(),
        });
    }
    out
}

/// Built trees, as (interface index, root qdisc).
pub type Trees = Vec<(usize, QdiscImpl)>;

/// Parse and build one node's script. Errors and warnings are mapped to the scenario's file,
/// line and column.
pub fn build_node(node: &NodeDevices<'_>, seed: u64) -> (Trees, Vec<ScenarioError>, Vec<String>) {
    let (trees, _, errors, warnings) = build_node_with_virtual(node, seed);
    (trees, errors, warnings)
}

/// A node's virtual devices (tc/virt.rs): each with its built tree (None: its default root,
/// a pfifo of its txqueuelen), and the real devices' egress hooks.
#[derive(Default)]
pub struct Virtual {
    pub devices: Vec<(crate::tc::VirtualDev, Option<QdiscImpl>)>,
    pub hooks: Vec<crate::tc::DevHook>,
}

/// [`build_node`] with the node's virtual devices and egress hooks.
pub fn build_node_with_virtual(node: &NodeDevices<'_>, seed: u64) -> (Trees, Virtual, Vec<ScenarioError>, Vec<String>) {
    let src = node.source;
    let (script, mut diags) = parse_script(&src.text);
    let mut specs: Vec<DeviceSpec> = node
        .devices
        .iter()
        .map(|&(name, txqueuelen, _, stream)| DeviceSpec { name: name.to_string(), txqueuelen, seed, stream })
        .collect();
    let virt = crate::tc::virtual_devices(&script);
    for v in &virt {
        if !specs.iter().any(|s| s.name == v.name) {
            specs.push(DeviceSpec {
                name: v.name.clone(),
                txqueuelen: v.txqueuelen,
                seed,
                stream: key(&node.node_name, &v.name),
            });
        }
    }
    let (mut built, hooks) =
        crate::tc::check::build_reporting_all(&src.text, &script, &specs, Some(node.devices.len()), &mut diags);
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for d in &diags {
        let e = map_diag(src, d);
        match d.severity {
            Severity::Error => errors.push(e),
            Severity::Warning => {
                warnings.push(format!("{}:{}:{}: {}: warning: {}", e.file, e.line, e.column, e.key, e.message))
            }
        }
    }
    if !errors.is_empty() {
        return (Vec::new(), Virtual::default(), errors, warnings);
    }
    let devices = virt
        .into_iter()
        .filter(|v| !node.devices.iter().any(|d| d.0 == v.name))
        .map(|v| {
            let tree = built.iter().position(|(d, _)| *d == v.name).map(|i| built.remove(i).1);
            (v, tree)
        })
        .collect();
    let trees =
        built.into_iter().filter_map(|(dev, q)| node.devices.iter().find(|d| d.0 == dev).map(|d| (d.2, q))).collect();
    (trees, Virtual { devices, hooks }, errors, warnings)
}

/// Check every script of a scenario; returns the errors and the warnings.
pub fn check_all(scn: &Scenario) -> (Vec<ScenarioError>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for node in nodes_with_scripts(scn) {
        let (_, e, w) = build_node(&node, scn.run.seed);
        errors.extend(e);
        warnings.extend(w);
    }
    (errors, warnings)
}

fn map_diag(src: &TcSource, d: &TcDiag) -> ScenarioError {
    let line = src.line_offset + d.line;
    let column = if d.line == 1 { src.first_line_col_offset + d.col } else { d.col };
    let message = if d.token.is_empty() { d.message.clone() } else { format!("at \"{}\": {}", d.token, d.message) };
    ScenarioError { file: src.file.clone(), line, column, key: src.key.clone(), message }
}
