//! The one place where Rust errors become Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use airsched_core::scenario::{ScenarioError as CoreError, ScenarioErrors};
use airsched_core::units::parse_time;
use airsched_core::{Nanos, Scenario, SimError};

create_exception!(_core, ScenarioError, PyValueError, "A scenario file (or override) is invalid; .errors lists every problem as FILE:LINE:COL: KEY: message.");
create_exception!(_core, SimulationError, PyRuntimeError, "An internal invariant of the simulator was violated.");

/// ScenarioError whose message is every error, one per line, and whose `.errors` is the list.
pub fn scenario_error(errs: ScenarioErrors) -> PyErr {
    let lines: Vec<String> = errs.0.iter().map(|e| e.to_string()).collect();
    let err = ScenarioError::new_err(lines.join("\n"));
    Python::attach(|py| {
        if let Ok(list) = PyList::new(py, &lines) {
            let _ = err.value(py).setattr("errors", list);
        }
    });
    err
}

/// ScenarioError from already formatted lines.
pub fn scenario_error_lines(lines: Vec<String>) -> PyErr {
    let err = ScenarioError::new_err(lines.join("\n"));
    Python::attach(|py| {
        if let Ok(list) = PyList::new(py, &lines) {
            let _ = err.value(py).setattr("errors", list);
        }
    });
    err
}

pub fn sim_error(e: SimError) -> PyErr {
    SimulationError::new_err(e.to_string())
}

/// ScenarioError for a bad command-line option of a tool (`airsched calibrate --step ...`).
pub fn option_error(option: &str, message: String) -> PyErr {
    scenario_error(ScenarioErrors(vec![CoreError {
        file: "<command line>".into(),
        line: 1,
        column: 1,
        key: option.into(),
        message,
    }]))
}

fn override_error(message: String) -> PyErr {
    scenario_error(ScenarioErrors(vec![CoreError {
        file: "<command line>".into(),
        line: 1,
        column: 1,
        key: "run.duration".into(),
        message,
    }]))
}

/// A `--duration` given on the command line.
pub fn parse_duration_override(text: &str, _scn: &Scenario) -> PyResult<Nanos> {
    let d = parse_time(text).map_err(|e| override_error(e.to_string()))?;
    if d == Nanos::ZERO || d > Nanos::MAX_SCENARIO {
        return Err(override_error(format!(
            "duration must be greater than 0 and at most one year, got \"{text}\""
        )));
    }
    Ok(d)
}

/// Relations between run keys that an override can break.
pub fn check_after_overrides(scn: &Scenario) -> PyResult<()> {
    let r = &scn.run;
    if r.warmup >= r.duration {
        return Err(override_error(format!(
            "duration {} must be longer than the warm-up {} of the scenario",
            r.duration, r.warmup
        )));
    }
    if r.sample_interval > r.duration {
        return Err(override_error(format!(
            "duration {} is shorter than the sample interval {}",
            r.duration, r.sample_interval
        )));
    }
    for f in &scn.flows {
        if let Some(stop) = f.stop {
            if stop > r.duration {
                return Err(override_error(format!(
                    "duration {} ends before flow {} stops at {}",
                    r.duration, f.name, stop
                )));
            }
        }
    }
    Ok(())
}
