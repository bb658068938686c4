//! airsched._core: the thin PyO3 layer over airsched-core.
//!
//! Rust errors are mapped to Python exceptions in one place (`errors`); results cross as plain
//! column lists; the GIL is released while events are processed.

mod convert;
mod errors;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use airsched_core::scenario::{parse_scenario_with, toml_string};
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
/// "class_text"}], "warnings": [...]}; raises ScenarioError with every error at its line and column.
#[pyfunction]
fn tc_check<'py>(py: Python<'py>, text: &str, path: &str) -> PyResult<Bound<'py, PyDict>> {
    let checked = airsched_core::tc::check_script(text, path).map_err(errors::scenario_error_lines)?;
    let out = PyDict::new(py);
    out.set_item("warnings", checked.warnings)?;
    let devs = pyo3::types::PyList::empty(py);
    for dev in checked.devices {
        let d = PyDict::new(py);
        d.set_item("dev", dev.dev)?;
        d.set_item("tree", dev.tree)?;
        d.set_item("qdisc_text", dev.qdisc_text)?;
        d.set_item("class_text", dev.class_text)?;
        devs.append(d)?;
    }
    out.set_item("devices", devs)?;
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
    use airsched_core::calibrate::{calibrate as run, CalibrationSpec};
    use airsched_core::scenario::RateControl;
    let bad = |key: &str, msg: String| errors::option_error(key, msg);
    let rc = RateControl::ALL
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(rate_control))
        .map(|(_, r)| *r)
        .ok_or_else(|| bad("--rate-control", format!("unknown rate control {rate_control:?}; expected fixed, arf, aarf or minstrel")))?;
    let cdb = |x: f64| (x * 100.0).round() as i32;
    for (k, v) in [("--snr-from", snr_from_db), ("--snr-to", snr_to_db)] {
        if !v.is_finite() || !(-50.0..=100.0).contains(&v) {
            return Err(bad(k, format!("{v} dB is out of range; expected -50 to 100 dB")));
        }
    }
    if !(step_db.is_finite() && step_db >= 0.01) {
        return Err(bad("--step", format!("{step_db} dB: the step must be at least 0.01 dB")));
    }
    if !(1..=1_000_000).contains(&payload) || payload > airsched_core::scenario::MAX_UDP_PAYLOAD {
        return Err(bad("--payload", format!("{payload} bytes: expected 1 to {}", airsched_core::scenario::MAX_UDP_PAYLOAD)));
    }
    if block == 0 {
        return Err(bad("--block", "a block holds at least one packet".into()));
    }
    let d = airsched_core::units::parse_time(duration).map_err(|e| bad("--duration", e.to_string()))?;
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

/// A scenario being simulated. Advance it in steps (for progress reporting), then finish().
#[pyclass(module = "airsched._core")]
struct Simulation {
    inner: CoreSimulation,
}

#[pymethods]
impl Simulation {
    /// `overrides` are `KEY=VALUE` settings applied over the file (see the core's
    /// `parse_scenario_with`); `seed` and `duration` are the overrides `run.seed` and
    /// `run.duration`, applied after them.
    #[new]
    #[pyo3(signature = (text, path, seed=None, duration=None, overrides=Vec::new()))]
    fn new(text: &str, path: &str, seed: Option<u64>, duration: Option<&str>, overrides: Vec<String>) -> PyResult<Self> {
        let mut overrides = overrides;
        if let Some(s) = seed {
            overrides.push(format!("run.seed={s}"));
        }
        if let Some(d) = duration {
            overrides.push(format!("run.duration={}", toml_string(d)));
        }
        let scn = parse_scenario_with(text, path, &overrides).map_err(scenario_error)?;
        let inner = CoreSimulation::new(&scn).map_err(sim_error)?;
        Ok(Simulation { inner })
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

    /// Process every event up to `until_ns` (capped at the end of the run), without the GIL.
    fn advance(&mut self, py: Python<'_>, until_ns: u64) {
        let inner = &mut self.inner;
        py.detach(|| inner.advance(Nanos(until_ns)));
    }

    /// Capture the air and the wire from now on (`airsched run --pcap`).
    fn enable_pcap(&mut self) {
        self.inner.enable_pcap();
    }

    /// The captures so far, and stop capturing: a list of (name, linktype, pcap file bytes,
    /// frames), the channel's ("air") first, then each radio's (its node's name), then the
    /// wire's ("wire").
    fn take_pcaps<'py>(&mut self, py: Python<'py>) -> Vec<(String, u32, Bound<'py, pyo3::types::PyBytes>, u64)> {
        use airsched_core::pcap::{LINKTYPE_ETHERNET, LINKTYPE_RADIOTAP};
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

    /// The queue trace so far, and stop tracing: {"queues": {time_s, node, dev, qlen,
    /// backlog_bytes}, "delays": {time_s, flow, received, queue_delay_ms, delay_ms}} as column
    /// lists (the AP's 802.11n MAC queue is node "ap", dev "mac"); None if not enabled.
    fn take_queue_trace<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        use airsched_core::metrics::queues::QueueTrace;
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
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(py_toml_string, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(tc_check, m)?)?;
    m.add_function(wrap_pyfunction!(convert::result_schema, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}
