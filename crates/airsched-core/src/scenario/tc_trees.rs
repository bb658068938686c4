//! The tc scripts of a scenario: parsed, checked and built into one qdisc tree per configured
//! device, with every tc diagnostic mapped to the scenario file's line and column.

use super::{Scenario, ScenarioError, TcSource};
use crate::net::{DevId, Topology};
use crate::qdisc::QdiscImpl;
use crate::tc::{parse_script, DeviceSpec, Severity, TcDiag};

/// A node's tc script with the node's devices as the topology has them: each device's name,
/// txqueuelen, id in the device table, and the random-stream key of its qdiscs, derived from
/// its "node/dev" name (`engine::rng`), so that adding a station leaves every other device's
/// qdisc draws as they were.
pub struct NodeScript<'s> {
    pub source: &'s TcSource,
    pub devices: Vec<(&'static str, u32, DevId, u64)>,
    /// The node's name ("ap", "server", a station's), which keys its virtual devices' streams.
    pub node_name: String,
}

fn key(node: &str, dev: &str) -> u64 {
    crate::engine::rng::name_key(&format!("{node}/{dev}"))
}

/// Every node that has a tc script, with its devices from the scenario's topology, in the
/// order their diagnostics are reported: the AP, the Bluetooth clients, the stations, the
/// server.
pub fn nodes_with_scripts<'s>(scn: &'s Scenario, topo: &Topology) -> Vec<NodeScript<'s>> {
    let nodes = std::iter::once(("ap", &scn.ap))
        .chain(scn.bluetooth.iter().map(|b| (b.name.as_str(), &b.node)))
        .chain(scn.stations.iter().map(|s| (s.name.as_str(), &s.node)))
        .chain(std::iter::once(("server", &scn.server)));
    nodes
        .filter_map(|(name, node)| {
            let source = node.tc.as_ref()?;
            let devices =
                topo.devices_of(name).map(|(id, d)| (d.name, node.txqueuelen, id, key(name, d.name))).collect();
            Some(NodeScript { source, devices, node_name: name.to_string() })
        })
        .collect()
}

/// Built trees, as (device id, root qdisc).
pub type Trees = Vec<(DevId, QdiscImpl)>;

/// A node's virtual devices (tc/virt.rs): each with its built tree (None: its default root,
/// a pfifo of its txqueuelen), and the real devices' egress hooks.
#[derive(Default)]
pub struct Virtual {
    pub devices: Vec<(crate::tc::VirtualDev, Option<QdiscImpl>)>,
    pub hooks: Vec<crate::tc::DevHook>,
}

/// Parse and build one node's script: the trees of its devices, its virtual devices and egress
/// hooks. Errors and warnings are mapped to the scenario's file, line and column.
pub fn build_script(node: &NodeScript<'_>, seed: u64) -> (Trees, Virtual, Vec<ScenarioError>, Vec<String>) {
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
    for node in nodes_with_scripts(scn, &scn.topology()) {
        let (_, _, e, w) = build_script(&node, scn.run.seed);
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
