//! The one place where Rust errors become Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use airsched_core::SimError;
use airsched_core::{ScenarioError as CoreError, ScenarioErrors};

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario file (or override) is invalid; .errors lists every problem as FILE:LINE:COL: KEY: message."
);
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
