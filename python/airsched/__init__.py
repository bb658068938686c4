# SPDX-License-Identifier: Apache-2.0
"""airsched: a fast, deterministic simulator of a WiFi access point and its cell.

    >>> import airsched
    >>> result = airsched.run("scenarios/two-stations.toml", seed=1)
    >>> result.stations[["name", "goodput_mbps", "airtime_share"]]

``run`` returns a :class:`Result` (a summary dict and pandas DataFrames); ``validate`` checks a
scenario without running it. Bad input raises :class:`ScenarioError`, whose ``errors`` lists
every problem as ``FILE:LINE:COL: KEY: message``.
"""

import importlib
from typing import Any

# _startup: for the `airsched` command, Ctrl-C while importing is one line, not a traceback.
from . import _core, _startup  # noqa: F401
from ._errors import AirschedError, ScenarioError, SimulationError
from .result import Result
from .runner import run
from .scenario import ScenarioInfo, StationLink, load, validate

__version__: str = _core.version()


def __getattr__(name: str) -> Any:
    """``airsched.report`` and ``airsched.sweep``, imported on first use (PEP 562): a run
    (``airsched run``) needs neither, and the report module alone is a third of the package's
    import time."""
    if name == "report":
        return importlib.import_module(".report", __name__)
    if name == "sweep":
        return importlib.import_module(".sweeps", __name__).sweep
    raise AttributeError(f"module 'airsched' has no attribute {name!r}")


__all__ = [
    "AirschedError",
    "Result",
    "ScenarioError",
    "ScenarioInfo",
    "SimulationError",
    "StationLink",
    "__version__",
    "load",
    "run",
    "sweep",
    "validate",
]
