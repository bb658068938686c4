//! airsched._core: the thin PyO3 layer over airsched-core.
//!
//! Rust errors are mapped to Python exceptions in one place (`errors`); results cross as plain
//! column lists; the GIL is released while events are processed.

mod convert;
mod errors;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use airsched_core::{parse_scenario_with, toml_string};
use airsched_core::{Nanos, Simulation as CoreSimulation};

use errors::{scenario_error, sim_error, ScenarioError, SimulationError};

/// Check a scenario text, with its `KEY=VALUE` overrides, without running it. Raises
/// ScenarioError listing every problem; otherwise returns what the core understood: station and
/// flow names, the duration, the standard and cell settings, each station's link and (802.11n)
/// the AP's MAC queueing.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new()))]
fn validate<'py>(py: Python<'py>, text: &str, path: &str, overrides: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
    convert::scenario_to_py(py, &scn)
}

/// Parse and build a tc script on its own (`airsched tc check`): every device it names is
/// accepted, with txqueuelen 1000. Returns {"devices": [{"dev", "tree", "qdisc_text",
/// "class_text"}], "warnings": [...], "redirects": [...]}; raises ScenarioError with every error at its line and column.
///
/// `devices`, a list of (name, txqueuelen), limits the script to one node's devices (`airsched
/// tc check --scenario S --node N`): naming another is an error, as in a scenario.
#[pyfunction]
#[pyo3(signature = (text, path, devices=None))]
fn tc_check<'py>(
    py: Python<'py>,
    text: &str,
    path: &str,
    devices: Option<Vec<(String, u32)>>,
) -> PyResult<Bound<'py, PyDict>> {
    let checked =
        airsched_core::check_script_on(text, path, devices.as_deref()).map_err(errors::scenario_error_lines)?;
    let out = PyDict::new(py);
    out.set_item("warnings", checked.warnings)?;
    out.set_item("redirects", checked.redirects)?;
    let devs = pyo3::types::PyList::empty(py);
    for dev in checked.devices {
        let d = PyDict::new(py);
        d.set_item("dev", dev.dev)?;
        d.set_item("tree", dev.tree)?;
        d.set_item("qdisc_text", dev.qdisc_text)?;
        d.set_item("class_text", dev.class_text)?;
        d.set_item("quanta", dev.quanta)?;
        devs.append(d)?;
    }
    out.set_item("devices", devs)?;
    Ok(out)
}

/// What `airsched export` needs of a scenario (checked as a run checks it): per node its name,
/// devices with txqueuelen, its tc script and the tree the script leaves on each device
/// (`tc::declared_trees`: qdiscs in tree order with handles, parents, option words, classes and
/// filters as the kernel holds them); per station its MAC address and airtime weight; the AP's
/// MAC queueing.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new()))]
fn export_info<'py>(py: Python<'py>, text: &str, path: &str, overrides: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    use airsched_core::FilterKind;
    use airsched_core::NodeConfig;
    use pyo3::types::PyList;
    let scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
    let out = PyDict::new(py);
    let nodes = PyList::empty(py);
    // Each node's devices as the run's device table has them (the AP: wlan0, eth0, a bnepN
    // per Bluetooth client).
    let topo = scn.topology();
    let mut all: Vec<(&str, &NodeConfig)> = vec![("ap", &scn.ap)];
    all.extend(scn.stations.iter().map(|st| (st.name.as_str(), &st.node)));
    all.extend(scn.bluetooth.iter().map(|b| (b.name.as_str(), &b.node)));
    all.push(("server", &scn.server));
    for (name, node) in all {
        let devs: Vec<&str> = topo.devices_of(name).map(|(_, d)| d.name).collect();
        let d = PyDict::new(py);
        d.set_item("node", name)?;
        d.set_item("txqueuelen", node.txqueuelen)?;
        d.set_item("devices", devs.clone())?;
        let trees = PyList::empty(py);
        if let Some(src) = &node.tc {
            d.set_item("tc_text", &src.text)?;
            d.set_item("tc_file", &src.file)?;
            let (script, mut diags) = airsched_core::parse_script(&src.text);
            let specs: Vec<airsched_core::DeviceSpec> = devs
                .iter()
                .map(|n| airsched_core::DeviceSpec {
                    name: n.to_string(),
                    txqueuelen: node.txqueuelen,
                    seed: 1,
                    stream: 0,
                })
                .collect();
            for (dev, qs) in airsched_core::declared_trees(&script, &specs, &mut diags) {
                let t = PyDict::new(py);
                t.set_item("dev", dev)?;
                let ql = PyList::empty(py);
                for q in qs {
                    let qd = PyDict::new(py);
                    qd.set_item("kind", &q.kind)?;
                    qd.set_item("handle", q.handle.to_string())?;
                    qd.set_item("parent", q.parent.to_string())?;
                    qd.set_item("options", &q.options)?;
                    let cl = PyList::empty(py);
                    for c in &q.classes {
                        let cd = PyDict::new(py);
                        cd.set_item("classid", c.classid.to_string())?;
                        cd.set_item("parent", c.parent.to_string())?;
                        cd.set_item("kind", &c.kind)?;
                        cd.set_item("options", &c.options)?;
                        cl.append(cd)?;
                    }
                    qd.set_item("classes", cl)?;
                    let fl = PyList::empty(py);
                    for f in &q.filters {
                        let fd = PyDict::new(py);
                        fd.set_item("parent", f.parent.to_string())?;
                        fd.set_item("prio", f.prio)?;
                        fd.set_item("protocol", f.protocol)?;
                        fd.set_item("classid", f.classid.to_string())?;
                        match &f.kind {
                            FilterKind::U32 { keys } => {
                                fd.set_item("kind", "u32")?;
                                let ks: Vec<(u32, u32, u32)> = keys.iter().map(|k| (k.val, k.mask, k.off)).collect();
                                fd.set_item("keys", ks)?;
                            }
                            FilterKind::Fw { handle, mask } => {
                                fd.set_item("kind", "fw")?;
                                fd.set_item("mark", *handle)?;
                                fd.set_item("mask", *mask)?;
                            }
                            FilterKind::MatchAll => fd.set_item("kind", "matchall")?,
                            FilterKind::Flower(k) => {
                                fd.set_item("kind", "flower")?;
                                let kd = PyDict::new(py);
                                if let Some(p) = k.ip_proto {
                                    kd.set_item("ip_proto", p)?;
                                }
                                for (name, a) in [("src_ip", k.src_ip), ("dst_ip", k.dst_ip)] {
                                    if let Some((addr, len)) = a {
                                        kd.set_item(name, (addr, len))?;
                                    }
                                }
                                for (name, r) in [("src_port", k.src_port), ("dst_port", k.dst_port)] {
                                    if let Some((lo, hi)) = r {
                                        kd.set_item(name, (lo, hi))?;
                                    }
                                }
                                if let Some((v, m)) = k.ip_tos {
                                    kd.set_item("ip_tos", (v, m))?;
                                }
                                fd.set_item("flower", kd)?;
                            }
                            FilterKind::Basic(t) => {
                                fd.set_item("kind", "basic")?;
                                // print_ematch's text, as `tc filter show` prints it.
                                fd.set_item("ematch", airsched_core::ematch_text(t))?;
                            }
                        }
                        // The policer as `tc filter show` prints it after "police ".
                        fd.set_item("police", f.police.as_ref().map(|p| p.options_text()))?;
                        fd.set_item("police_words", f.police.as_ref().map(|p| p.tc_words()))?;
                        fd.set_item("police_legacy", f.police.as_ref().is_some_and(|p| p.params.legacy))?;
                        fl.append(fd)?;
                    }
                    qd.set_item("filters", fl)?;
                    ql.append(qd)?;
                }
                t.set_item("qdiscs", ql)?;
                trees.append(t)?;
            }
        }
        d.set_item("trees", trees)?;
        nodes.append(d)?;
    }
    out.set_item("nodes", nodes)?;
    let sts = PyList::empty(py);
    for st in &scn.stations {
        let d = PyDict::new(py);
        d.set_item("name", &st.name)?;
        d.set_item("mac", st.mac.map(|m| m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")))?;
        d.set_item("airtime_weight", st.ht.map(|h| h.airtime_weight))?;
        sts.append(d)?;
    }
    out.set_item("stations", sts)?;
    out.set_item("standard", format!("{:?}", scn.cell.standard))?;
    out.set_item("pcf", scn.cell.pcf.is_some())?;
    out.set_item("airtime", scn.ap_mac.airtime.name())?;
    out.set_item("aql", scn.ap_mac.aql)?;
    out.set_item("airtime_rx", scn.ap_mac.airtime_rx)?;
    out.set_item("fq_kernel", scn.ap_mac.fq_kernel.name())?;
    out.set_item("mac_queue", scn.ap_mac.queue.name())?;
    out.set_item("simulator_only", scn.ap_mac.simulator_only())?;
    Ok(out)
}

/// Run the WChMon calibration procedure (Garroppo et al. 4.2) and return the table file's text.
/// `progress(done, total)` is called after each SNR point (with the GIL).
#[pyfunction]
#[pyo3(signature = (snr_from_db, snr_to_db, step_db, payload, block, rate_control, duration, seed, progress=None))]
#[allow(clippy::too_many_arguments)]
fn calibrate(
    py: Python<'_>,
    snr_from_db: f64,
    snr_to_db: f64,
    step_db: f64,
    payload: u32,
    block: u32,
    rate_control: &str,
    duration: &str,
    seed: u64,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    use airsched_core::RateControl;
    use airsched_core::{calibrate as run, CalibrationSpec};
    let bad = |key: &str, msg: String| errors::option_error(key, msg);
    // The calibration measures a legacy link: Minstrel-HT (802.11n) is not one of its choices.
    let rc = rate_control.parse::<RateControl>().ok().filter(|r| *r != RateControl::MinstrelHt).ok_or_else(|| {
        bad("--rate-control", format!("unknown rate control {rate_control:?}; expected fixed, arf, aarf or minstrel"))
    })?;
    let cdb = |x: f64| (x * 100.0).round() as i32;
    for (k, v) in [("--snr-from", snr_from_db), ("--snr-to", snr_to_db)] {
        if !v.is_finite() || !(-50.0..=100.0).contains(&v) {
            return Err(bad(k, format!("{v} dB is out of range; expected -50 to 100 dB")));
        }
    }
    if !(step_db.is_finite() && step_db >= 0.01) {
        return Err(bad("--step", format!("{step_db} dB: the step must be at least 0.01 dB")));
    }
    if !(1..=1_000_000).contains(&payload) || payload > airsched_core::MAX_UDP_PAYLOAD {
        return Err(bad("--payload", format!("{payload} bytes: expected 1 to {}", airsched_core::MAX_UDP_PAYLOAD)));
    }
    if block == 0 {
        return Err(bad("--block", "a block holds at least one packet".into()));
    }
    let d = airsched_core::parse_time(duration).map_err(|e| bad("--duration", e.to_string()))?;
    if d <= Nanos::from_secs(1) || d > Nanos::from_secs(3600) {
        return Err(bad("--duration", format!("{duration:?}: expected more than 1s (the warm-up) and at most 1h")));
    }
    let spec = CalibrationSpec {
        snr_from_cdb: cdb(snr_from_db),
        snr_to_cdb: cdb(snr_to_db),
        step_cdb: cdb(step_db),
        payload,
        block,
        rate_control: rc,
        duration: d,
        seed,
        ..CalibrationSpec::default()
    };
    let table = run(&spec, |done, total| {
        if let Some(cb) = &progress {
            let _ = cb.call1((done, total));
        }
    })
    .map_err(|e| bad("--snr-from", e))?;
    let _ = py;
    Ok(table.to_toml())
}

/// `text` as a TOML basic string (quoted and escaped), for a `KEY=VALUE` override whose value
/// must stay that string.
#[pyfunction(name = "toml_string")]
fn py_toml_string(text: &str) -> String {
    toml_string(text)
}

/// The resolved scenario (file plus overrides, every default filled in, every unit converted) as
/// stable text, for content-addressing a sweep's runs: two inputs that simulate the same thing
/// give the same text. Where the file and the tc scripts came from (paths, line offsets) is left
/// out, so a sweep moved to another directory keeps its run identities.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new()))]
fn resolved_scenario(text: &str, path: &str, overrides: Vec<String>) -> PyResult<String> {
    let mut scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
    let nodes = [&mut scn.ap, &mut scn.server].into_iter().chain(scn.stations.iter_mut().map(|s| &mut s.node));
    for node in nodes {
        if let Some(tc) = node.tc.as_mut() {
            tc.file.clear();
            tc.line_offset = 0;
            tc.first_line_col_offset = 0;
        }
    }
    if let Some((file, _)) = scn.monitor.calibration.as_mut() {
        file.clear();
    }
    Ok(format!("{scn:?}"))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Events per slice of `Simulation.advance` between two looks at Python's signals: about 10 to
/// 50 ms of work at the core's 5 to 20 M events/s.
const SLICE_EVENTS: u64 = 200_000;

/// A scenario being simulated. Advance it in steps (for progress reporting), then finish().
#[pyclass(module = "airsched._core")]
struct Simulation {
    inner: CoreSimulation,
    /// The scenario as parsed (with the overrides), for `resolved`: one parse per run.
    scn: airsched_core::Scenario,
}

#[pymethods]
impl Simulation {
    /// `overrides` are `KEY=VALUE` settings applied over the file (see the core's
    /// `parse_scenario_with`); Python's `airsched.runner.run_overrides` makes the lines of a
    /// seed and a duration.
    #[new]
    #[pyo3(signature = (text, path, overrides=Vec::new()))]
    fn new(text: &str, path: &str, overrides: Vec<String>) -> PyResult<Self> {
        let scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
        let inner = CoreSimulation::new(&scn).map_err(sim_error)?;
        Ok(Simulation { inner, scn })
    }

    /// What the core understood of the scenario, as `validate` returns it (the provenance's
    /// `resolved`), from the parse this simulation was built from.
    fn resolved<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        convert::scenario_to_py(py, &self.scn)
    }

    /// A simulation with external flows for the live emulation (`airsched.emulate`): the
    /// scenario's flows, then one flow per `(name, src, dst)` of `external` (node names: a
    /// station's, "server" or "ap"), whose packets come from outside (`inject`). Without
    /// `simulated_flows` the scenario's own flows are left out (a cell with real traffic only).
    #[staticmethod]
    #[pyo3(signature = (text, path, overrides, external, simulated_flows=true))]
    fn with_external(
        text: &str,
        path: &str,
        overrides: Vec<String>,
        external: Vec<(String, String, String)>,
        simulated_flows: bool,
    ) -> PyResult<Self> {
        use airsched_core::{Endpoint, ExternalFlow};
        let mut scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
        if !simulated_flows {
            scn.flows.clear();
        }
        let endpoint = |n: &str| match n {
            "server" => Ok(Endpoint::Server),
            "ap" => Ok(Endpoint::Ap),
            _ => scn.stations.iter().position(|s| s.name == n).map(Endpoint::Station).ok_or_else(|| {
                errors::option_error(
                    "--real",
                    format!("no station {n:?} in the scenario; expected a station's name, server or ap"),
                )
            }),
        };
        let ext = external
            .iter()
            .map(|(name, s, d)| Ok(ExternalFlow { name: name.clone(), src: endpoint(s)?, dst: endpoint(d)? }))
            .collect::<PyResult<Vec<_>>>()?;
        let inner = CoreSimulation::with_external_flows(&scn, &ext).map_err(sim_error)?;
        Ok(Simulation { inner, scn })
    }

    /// Index of the first external flow (None without them).
    #[getter]
    fn first_external_flow(&self) -> Option<u32> {
        self.inner.first_external_flow()
    }

    /// The IPv4 address of each node, as the scenario gives or defaults them: [(name, "a.b.c.d")],
    /// the server, the AP, then the stations in order.
    fn node_addresses(&self) -> Vec<(String, String)> {
        use airsched_core::Endpoint;
        let scn = self.inner.scenario();
        let ip = |e| std::net::Ipv4Addr::from(scn.ip_of(e)).to_string();
        let mut out = vec![("server".to_string(), ip(Endpoint::Server)), ("ap".to_string(), ip(Endpoint::Ap))];
        out.extend(scn.stations.iter().enumerate().map(|(i, s)| (s.name.clone(), ip(Endpoint::Station(i)))));
        out
    }

    /// Give external flow `flow` a real packet's header fields (addresses and ports as
    /// integers in host order) and its name in the results.
    #[allow(clippy::too_many_arguments)]
    fn bind_external(
        &mut self,
        flow: u32,
        src_ip: u32,
        dst_ip: u32,
        sport: u16,
        dport: u16,
        proto: u8,
        tos: u8,
        name: &str,
    ) -> PyResult<()> {
        let key = airsched_core::FlowKey {
            src_ip,
            dst_ip,
            sport,
            dport,
            proto,
            tos,
            mark: 0,
            priority: airsched_core::tos_to_priority(tos),
        };
        self.inner.bind_external(flow, key, name).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// Inject an external packet of `ip_len` bytes (`payload` counted as goodput) at its flow's
    /// first hop at the current simulated time; returns whether the first qdisc took it.
    fn inject(&mut self, flow: u32, ip_len: u32, payload: u32, tag: u64) -> PyResult<bool> {
        self.inner
            .inject(flow, ip_len, payload, tag)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// The external packets delivered since the last call: [(tag, arrival time in ns)].
    fn take_delivered(&mut self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.inner.take_delivered(&mut out);
        out.into_iter().map(|(t, at)| (t, at.as_ns())).collect()
    }

    /// The time of the next event (ns), None when none is left before the end.
    #[getter]
    fn next_event_ns(&self) -> Option<u64> {
        self.inner.next_event_time().map(|t| t.as_ns())
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now().as_ns()
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.inner.end().as_ns()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.inner.events()
    }

    /// Process every event up to `until_ns` (capped at the end of the run), without the GIL, in
    /// slices of at most `SLICE_EVENTS` events; between two slices Python's signal handlers run,
    /// so Ctrl-C raises KeyboardInterrupt here within a few tens of milliseconds whatever the
    /// scenario (the run can then be ended with `finish_now`).
    fn advance(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<()> {
        loop {
            let inner = &mut self.inner;
            let reached = py.detach(|| inner.advance_at_most(Nanos(until_ns), SLICE_EVENTS));
            py.check_signals()?;
            if reached {
                return Ok(());
            }
        }
    }

    /// Capture the air and the wire from now on (`airsched run --pcap`).
    fn enable_pcap(&mut self) {
        self.inner.enable_pcap();
    }

    /// The captures so far, and stop capturing: a list of (name, linktype, pcap file bytes,
    /// frames), the channel's ("air") first, then each radio's (its node's name), then the
    /// wire's ("wire").
    fn take_pcaps<'py>(&mut self, py: Python<'py>) -> Vec<(String, u32, Bound<'py, pyo3::types::PyBytes>, u64)> {
        use airsched_core::{LINKTYPE_ETHERNET, LINKTYPE_RADIOTAP};
        let caps = self.inner.take_pcaps();
        let n = caps.len();
        caps.into_iter()
            .enumerate()
            .map(|(i, c)| {
                let link = if i + 1 == n { LINKTYPE_ETHERNET } else { LINKTYPE_RADIOTAP };
                (c.name, link, pyo3::types::PyBytes::new(py, &c.bytes), c.frames)
            })
            .collect()
    }

    /// Record queue lengths and delays at every sample from now on (`airsched run --queues`).
    fn enable_queue_trace(&mut self) {
        self.inner.enable_queue_trace();
    }

    /// Report mac80211's per-station airtime and per-TID FQ statistics at the end (the results'
    /// mac80211_stations and mac80211_txqs tables; `airsched run --mac-stats`).
    fn enable_mac_stats(&mut self) {
        self.inner.enable_mac_stats();
    }

    /// Record the bytes, packets and drops out of every interface at each sample (the results'
    /// interfaces table); the runner always asks for it.
    fn enable_interface_counters(&mut self) {
        self.inner.enable_interface_counters();
    }

    /// The queue trace so far, and stop tracing: {"queues": {time_s, node, dev, qlen,
    /// backlog_bytes}, "delays": {time_s, flow, received, queue_delay_ms, delay_ms}} as column
    /// lists (the AP's 802.11n MAC queue is node "ap", dev "mac"); None if not enabled.
    fn take_queue_trace<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        use airsched_core::QueueTrace;
        let Some(t) = self.inner.take_queue_trace() else { return Ok(None) };
        let names = self.inner.interface_names();
        let flows: Vec<String> = self.inner.scenario().flows.iter().map(|f| f.name.clone()).collect();
        let q = PyDict::new(py);
        let name = |i: u32| if i == QueueTrace::MAC { ("ap".to_string(), "mac") } else { names[i as usize].clone() };
        q.set_item("time_s", t.queues.iter().map(|s| s.time.as_secs_f64()).collect::<Vec<_>>())?;
        q.set_item("node", t.queues.iter().map(|s| name(s.iface).0).collect::<Vec<_>>())?;
        q.set_item("dev", t.queues.iter().map(|s| name(s.iface).1).collect::<Vec<_>>())?;
        q.set_item("qlen", t.queues.iter().map(|s| s.qlen).collect::<Vec<_>>())?;
        q.set_item("backlog_bytes", t.queues.iter().map(|s| s.backlog_bytes).collect::<Vec<_>>())?;
        let d = PyDict::new(py);
        let flow_name = |f: u32| flows.get(f as usize).cloned().unwrap_or_else(|| format!("flow{f}"));
        d.set_item("time_s", t.delays.iter().map(|s| s.time.as_secs_f64()).collect::<Vec<_>>())?;
        d.set_item("flow", t.delays.iter().map(|s| flow_name(s.flow)).collect::<Vec<_>>())?;
        d.set_item("received", t.delays.iter().map(|s| s.received).collect::<Vec<_>>())?;
        d.set_item("queue_delay_ms", t.delays.iter().map(|s| s.queue_delay_ms).collect::<Vec<_>>())?;
        d.set_item("delay_ms", t.delays.iter().map(|s| s.delay_ms).collect::<Vec<_>>())?;
        let out = PyDict::new(py);
        out.set_item("queues", q)?;
        out.set_item("delays", d)?;
        Ok(Some(out))
    }

    /// Run to the end and return the results as a dict of tables (column lists).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = &mut self.inner;
        let res = py.detach(|| inner.finish()).map_err(sim_error)?;
        convert::results_to_py(py, &res, self.inner.scenario())
    }

    /// End the run at the current simulated time (after an interrupt) and return the results of
    /// what was simulated, as `finish` does; `summary.sim_seconds` says where it stopped.
    fn finish_now<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let inner = &mut self.inner;
        let res = py.detach(|| inner.finish_now()).map_err(sim_error)?;
        convert::results_to_py(py, &res, self.inner.scenario())
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(py_toml_string, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(tc_check, m)?)?;
    m.add_function(wrap_pyfunction!(export_info, m)?)?;
    m.add_function(wrap_pyfunction!(convert::result_schema, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}
