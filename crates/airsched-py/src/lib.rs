//! airsched._core: the thin PyO3 layer over airsched-core.
//!
//! Rust errors are mapped to Python exceptions in one place (`errors`); results cross as plain
//! column lists; the GIL is released while events are processed.

mod convert;
mod errors;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use airsched_core::scenario::parse_scenario;
use airsched_core::{Nanos, Simulation as CoreSimulation};

use errors::{scenario_error, sim_error, ScenarioError, SimulationError};

/// Check a scenario text without running it. Raises ScenarioError listing every problem;
/// otherwise returns what the core understood: station and flow names, the duration.
#[pyfunction]
fn validate<'py>(py: Python<'py>, text: &str, path: &str) -> PyResult<Bound<'py, PyDict>> {
    let scn = parse_scenario(text, path).map_err(scenario_error)?;
    let d = PyDict::new(py);
    d.set_item("stations", scn.stations.iter().map(|s| s.name.clone()).collect::<Vec<_>>())?;
    d.set_item("flows", scn.flows.iter().map(|f| f.name.clone()).collect::<Vec<_>>())?;
    d.set_item("duration_ns", scn.run.duration.as_ns())?;
    d.set_item("warmup_ns", scn.run.warmup.as_ns())?;
    Ok(d)
}

/// Parse and build a tc script on its own (`airsched tc check`): every device it names is
/// accepted, with txqueuelen 1000. Returns {"devices": [{"dev", "tree", "qdisc_text",
/// "class_text"}], "warnings": [...]}; raises ScenarioError with every error at its line and column.
#[pyfunction]
fn tc_check<'py>(py: Python<'py>, text: &str, path: &str) -> PyResult<Bound<'py, PyDict>> {
    use airsched_core::tc::{build_trees, class_show, parse_script, qdisc_show, tree_text, Command, DeviceSpec, Severity};
    let (script, mut diags) = parse_script(text);
    let mut names: Vec<String> = Vec::new();
    for c in &script.commands {
        let dev = match c {
            Command::Qdisc(q) => q.dev.text,
            Command::Class(k) => k.dev.text,
            Command::Filter(f) => f.dev.text,
        };
        if !dev.is_empty() && !names.iter().any(|n| n == dev) {
            names.push(dev.to_string());
        }
    }
    let specs: Vec<DeviceSpec> = names
        .iter()
        .enumerate()
        .map(|(i, n)| DeviceSpec { name: n.clone(), txqueuelen: 1000, seed: 1, stream: i as u64 })
        .collect();
    let built = if diags.iter().any(|d| d.severity == Severity::Error) { Vec::new() } else { build_trees(&script, &specs, &mut diags) };
    let loc = |d: &airsched_core::tc::TcDiag| {
        let tok = if d.token.is_empty() { String::new() } else { format!("at \"{}\": ", d.token) };
        format!("{path}:{}:{}: {tok}{}", d.line, d.col, d.message)
    };
    let errors: Vec<String> = diags.iter().filter(|d| d.severity == Severity::Error).map(loc).collect();
    if !errors.is_empty() {
        return Err(errors::scenario_error_lines(errors));
    }
    let out = PyDict::new(py);
    let warnings: Vec<String> = diags.iter().filter(|d| d.severity == Severity::Warning).map(|d| loc(d)).collect();
    out.set_item("warnings", warnings)?;
    let devs = pyo3::types::PyList::empty(py);
    for (dev, root) in &built {
        let reports = root.reports();
        let d = PyDict::new(py);
        d.set_item("dev", dev)?;
        d.set_item("tree", tree_text(dev, &reports))?;
        d.set_item("qdisc_text", qdisc_show(dev, &reports, false))?;
        d.set_item("class_text", class_show(dev, &reports, false))?;
        devs.append(d)?;
    }
    out.set_item("devices", devs)?;
    Ok(out)
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
    #[new]
    #[pyo3(signature = (text, path, seed=None, duration=None))]
    fn new(text: &str, path: &str, seed: Option<u64>, duration: Option<&str>) -> PyResult<Self> {
        let mut scn = parse_scenario(text, path).map_err(scenario_error)?;
        if let Some(s) = seed {
            scn.run.seed = s;
        }
        if let Some(d) = duration {
            let d = errors::parse_duration_override(d, &scn)?;
            scn.run.duration = d;
        }
        errors::check_after_overrides(&scn)?;
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
    m.add_function(wrap_pyfunction!(tc_check, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    Ok(())
}
