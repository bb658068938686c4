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

/// Check every script of a scenario by building it; returns the errors and the warnings. When
/// every script built, the scenario keeps the trees for the run ([`Built::take`]): they are
/// built once.
pub fn check_all(scn: &Scenario) -> (Vec<ScenarioError>, Vec<String>) {
    let nodes = nodes_with_scripts(scn, &scn.topology());
    let (built, errors, warnings) = build_all(&nodes, scn.run.seed);
    if errors.is_empty() {
        scn.tc_built.keep(inputs(&nodes, scn.run.seed), built);
    }
    (errors, warnings)
}

/// The trees of `nodes` (one entry per node, in order) for a run of `scn`: those its check
/// kept, or, for a scenario changed in code since, built now. Fails with the scripts' errors.
pub fn trees_for_run(scn: &Scenario, nodes: &[NodeScript<'_>]) -> Result<Vec<(Trees, Virtual)>, Vec<ScenarioError>> {
    if let Some(built) = scn.tc_built.take(nodes, scn.run.seed) {
        return Ok(built);
    }
    let (built, errors, _) = build_all(nodes, scn.run.seed);
    if errors.is_empty() {
        Ok(built)
    } else {
        Err(errors)
    }
}

/// Build every node's script: the trees per node, and every node's errors and warnings.
fn build_all(nodes: &[NodeScript<'_>], seed: u64) -> (Vec<(Trees, Virtual)>, Vec<ScenarioError>, Vec<String>) {
    let mut built = Vec::with_capacity(nodes.len());
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for node in nodes {
        let (trees, virt, e, w) = build_script(node, seed);
        errors.extend(e);
        warnings.extend(w);
        built.push((trees, virt));
    }
    (built, errors, warnings)
}

/// What a node's trees are built from: its name, script, devices and the run's seed.
#[derive(Clone, Debug, PartialEq)]
struct Input {
    node: String,
    text: String,
    devices: Vec<(&'static str, u32, DevId, u64)>,
    seed: u64,
}

impl Input {
    /// Whether `node`, with `seed`, is what these trees were built from.
    fn matches(&self, node: &NodeScript<'_>, seed: u64) -> bool {
        self.node == node.node_name
            && self.text == node.source.text
            && self.devices == node.devices
            && self.seed == seed
    }
}

fn inputs(nodes: &[NodeScript<'_>], seed: u64) -> Vec<Input> {
    nodes
        .iter()
        .map(|n| Input { node: n.node_name.clone(), text: n.source.text.clone(), devices: n.devices.clone(), seed })
        .collect()
}

type Kept = (Vec<Input>, Vec<(Trees, Virtual)>);

/// The trees a scenario's check built, kept for the run that follows, so that a scenario's
/// scripts are built once. Not part of what the scenario says: equal whatever it holds, and
/// shared by a scenario's clones (the first run takes the trees; another builds its own).
#[derive(Clone, Default)]
pub struct Built(std::sync::Arc<std::sync::Mutex<Option<Kept>>>);

impl Built {
    fn keep(&self, inputs: Vec<Input>, trees: Vec<(Trees, Virtual)>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((inputs, trees));
    }

    /// The trees of `nodes` (one entry per node, in order), if they were kept from exactly
    /// these scripts, devices and seed; None (build them) otherwise, e.g. after the scenario
    /// was changed in code.
    fn take(&self, nodes: &[NodeScript<'_>], seed: u64) -> Option<Vec<(Trees, Virtual)>> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match kept.take() {
            Some((inputs, trees))
                if inputs.len() == nodes.len() && inputs.iter().zip(nodes).all(|(i, n)| i.matches(n, seed)) =>
            {
                Some(trees)
            }
            _ => None,
        }
    }
}

impl PartialEq for Built {
    fn eq(&self, _: &Built) -> bool {
        true
    }
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Built")
    }
}

fn map_diag(src: &TcSource, d: &TcDiag) -> ScenarioError {
    let line = src.line_offset + d.line;
    let column = if d.line == 1 { src.first_line_col_offset + d.col } else { d.col };
    let message = if d.token.is_empty() { d.message.clone() } else { format!("at \"{}\": {}", d.token, d.message) };
    ScenarioError { file: src.file.clone(), line, column, key: src.key.clone(), message }
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse_scenario;
    use crate::sim::Simulation;

    const TEXT: &str = "[run]\nduration = \"2s\"\nwarmup = \"1s\"\n[ap]\ntc = \"tc qdisc add dev wlan0 root sfq perturb 1\"\n\
                        [[station]]\nname = \"a\"\nrate = \"11Mbps\"\n[[flow]]\nname = \"d\"\nsrc = \"server\"\ndst = \"a\"\n\
                        rate = \"saturate\"\n";

    #[test]
    fn the_check_keeps_its_trees_for_one_run_and_a_changed_scenario_builds_its_own() {
        let scn = parse_scenario(TEXT, "t.toml").unwrap();
        let nodes = super::nodes_with_scripts(&scn, &scn.topology());
        // The check kept the AP's trees; the run takes them, so none are left after it.
        let twin = scn.clone();
        let a = Simulation::new(&scn).unwrap().finish().unwrap();
        assert!(scn.tc_built.take(&nodes, scn.run.seed).is_none(), "the run took the kept trees");
        // A clone shares what was kept (now nothing): its run builds its own, to the same result.
        let b = Simulation::new(&twin).unwrap().finish().unwrap();
        assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));

        // Kept trees are only taken for the very scripts, devices and seed they came from.
        let scn = parse_scenario(TEXT, "t.toml").unwrap();
        let mut changed = scn.clone();
        changed.run.seed = 2;
        let nodes = super::nodes_with_scripts(&changed, &changed.topology());
        assert!(changed.tc_built.take(&nodes, changed.run.seed).is_none());
        let scn = parse_scenario(TEXT, "t.toml").unwrap();
        let mut changed = scn.clone();
        changed.ap.tc.as_mut().unwrap().text = "tc qdisc add dev wlan0 root pfifo limit 5".into();
        let r = Simulation::new(&changed).unwrap().finish().unwrap();
        let pfifo = parse_scenario(&TEXT.replace("sfq perturb 1", "pfifo limit 5"), "t.toml").unwrap();
        let want = Simulation::new(&pfifo).unwrap().finish().unwrap();
        assert_eq!(
            format!("{:?}", r.flows),
            format!("{:?}", want.flows),
            "a changed script is built, not the kept one"
        );
        assert_ne!(format!("{:?}", r.flows), format!("{:?}", a.flows));
    }
}
