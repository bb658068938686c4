# SPDX-License-Identifier: Apache-2.0
"""Running a scenario: the native simulation, advanced in slices so that progress can be shown
and Ctrl-C is honoured between slices (the core releases the GIL while it simulates)."""

from __future__ import annotations

import operator
from collections.abc import Callable

from . import _core
from ._errors import ScenarioError, native_errors
from .result import Result
from .scenario import PathLike, load

#: The run is advanced in this many equal slices of simulated time.
PROGRESS_STEPS = 100

#: Where errors in arguments given outside the scenario file point, as the core names them.
COMMAND_LINE = "<command line>"

_U64_MAX = 2**64 - 1


def run(
    scenario: PathLike | None = None,
    *,
    text: str | None = None,
    seed: int | None = None,
    duration: str | None = None,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """Simulate a scenario file (or ``text=``, TOML) and return its :class:`Result`.

    ``seed`` and ``duration`` (e.g. ``"30s"``) override the scenario's ``[run]`` values.
    ``progress``, if given, is called with the finished fraction of simulated time (0 < f <= 1,
    increasing, the last call with 1.0). Raises :class:`ScenarioError` for invalid input.
    """
    source = load(scenario, text=text)
    seed = _checked_seed(seed)
    if duration is not None and not isinstance(duration, str):
        raise TypeError(f'duration must be a str with a unit, e.g. "30s", not {type(duration).__name__}')
    with native_errors():
        sim = _core.Simulation(source.text, source.path, seed=seed, duration=duration)
        _advance(sim, progress)
        raw = sim.finish()
    return Result.from_native(raw)


def _advance(sim: _core.Simulation, progress: Callable[[float], None] | None) -> None:
    start, end = sim.now_ns, sim.end_ns
    span = end - start
    if span <= 0:
        if progress is not None:
            progress(1.0)
        return
    for step in range(1, PROGRESS_STEPS + 1):
        # Integer arithmetic: the slices tile [start, end] exactly, the last one ends at `end`.
        sim.advance(start + span * step // PROGRESS_STEPS)
        if progress is not None:
            progress(step / PROGRESS_STEPS)


def _checked_seed(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool):
        raise TypeError("seed must be an int, not bool")
    seed = operator.index(seed)
    if not 0 <= seed <= _U64_MAX:
        raise ScenarioError(f"{COMMAND_LINE}:1:1: run.seed: must be between 0 and {_U64_MAX}, got {seed}")
    return seed
