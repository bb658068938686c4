# SPDX-License-Identifier: Apache-2.0
"""airsched: a fast, deterministic simulator of a WiFi access point and its cell.

    >>> import airsched
    >>> result = airsched.run("scenarios/two-stations.toml", seed=1)
    >>> result.stations[["name", "goodput_mbps", "airtime_share"]]

``run`` returns a :class:`Result` (a summary dict and pandas DataFrames); ``validate`` checks a
scenario without running it. Bad input raises :class:`ScenarioError`, whose ``errors`` lists
every problem as ``FILE:LINE:COL: KEY: message``.
"""

# _startup: for the `airsched` command, Ctrl-C while importing is one line, not a traceback.
from . import _core, _startup  # noqa: F401
from . import report as report  # airsched.report after `import airsched` alone
from ._errors import AirschedError, ScenarioError, SimulationError
from .result import Result
from .runner import run
from .scenario import ScenarioInfo, StationLink, load, validate
from .sweeps import sweep

__version__: str = _core.version()

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
