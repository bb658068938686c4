# SPDX-License-Identifier: Apache-2.0
"""Running a scenario: the native simulation, advanced in slices so that progress can be shown
and Ctrl-C is honoured between slices (the core releases the GIL while it simulates)."""

from __future__ import annotations

import operator
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _core
from ._errors import native_errors
from .provenance import provenance
from .result import Result
from .scenario import Overrides, PathLike, ScenarioSource, load, override_lines, toml_string

#: The run is advanced in this many equal slices of simulated time.
PROGRESS_STEPS = 100


def run(
    scenario: PathLike | None = None,
    *,
    text: str | None = None,
    seed: int | None = None,
    duration: str | None = None,
    overrides: Overrides | None = None,
    progress: Callable[[float], None] | None = None,
    partial_on_interrupt: bool = False,
    pcap: str | os.PathLike[str] | None = None,
    queues: bool = False,
    mac_stats: bool = False,
) -> Result:
    """Simulate a scenario file (or ``text=``, TOML) and return its :class:`Result`.

    ``overrides`` replace or add settings of the scenario before it is checked, as if the file
    said so: ``{"cell.retry_limit": 4, "station[sta2].rate": "2Mbps"}`` (Python values), or
    ``["cell.retry_limit=4", "station[1].rate=2Mbps"]`` (TOML values, as ``--set`` takes them).
    ``seed`` and ``duration`` (e.g. ``"30s"``) are the overrides ``run.seed`` and
    ``run.duration``, applied after them. ``progress``, if given, is called with the finished
    fraction of simulated time (0 < f <= 1, increasing, the last call with 1.0). Raises
    :class:`ScenarioError` for invalid input; errors in overrides name ``<command line>``, line N
    being the N-th override. ``pcap``, a directory, receives packet captures of the run with
    the simulated timestamps (see :func:`write_pcaps`); the results are the same without it.
    ``queues`` also records every interface's queue length and every flow's queueing delay at
    each sample (``result.queues``, ``result.flow_delays``), again without changing the results.
    ``mac_stats`` adds mac80211's per-station airtime and per-TID FQ statistics (the
    ``mac80211_stations`` and ``mac80211_txqs`` tables; 802.11n with FQ-MAC at the AP).

    Ctrl-C (KeyboardInterrupt) takes effect within a few tens of milliseconds of wall time. It
    propagates, unless ``partial_on_interrupt``: then the run ends where it stands and the
    result of what was simulated is returned, with ``summary["partial"]`` true and
    ``summary["sim_seconds"]`` the simulated time reached.
    """
    source = load(scenario, text=text)
    lines = override_lines(overrides) + run_overrides(seed, duration)
    with native_errors():
        sim = _core.Simulation(source.text, source.path, overrides=lines)
        sim.enable_interface_counters()  # the interfaces table (xnetload); results unchanged
        if pcap is not None:
            sim.enable_pcap()
        if queues:
            sim.enable_queue_trace()
        if mac_stats:
            sim.enable_mac_stats()
        try:
            _advance(sim, progress)
        except KeyboardInterrupt:
            if not partial_on_interrupt:
                raise
            raw = sim.finish_now()
            raw["summary"]["partial"] = True
        else:
            raw = sim.finish()
            raw["summary"]["partial"] = False
    result = _with_provenance(Result.from_native(raw), source, lines, sim.resolved())
    if queues:
        import pandas as pd

        trace = sim.take_queue_trace()
        result.queues = pd.DataFrame(trace["queues"]).astype({"node": "string", "dev": "string"})
        result.flow_delays = pd.DataFrame(trace["delays"]).astype({"flow": "string"})
    if pcap is not None:
        result.pcaps = write_pcaps(sim.take_pcaps(), pcap)
    return result


def _with_provenance(
    result: Result, source: ScenarioSource, lines: list[str], resolved: dict[str, Any]
) -> Result:
    """``result`` with ``summary["provenance"]``: scenario path, text and hash, overrides, seed,
    versions and every resolved setting (see :mod:`airsched.provenance`), ``resolved`` from the
    simulation's own parse (the scenario is parsed and checked once per run)."""
    result.summary["provenance"] = provenance(
        source.path, source.text, lines, seed=int(result.summary["seed"]), resolved=resolved
    )
    return result


def write_pcaps(captures: list[tuple[str, int, bytes, int]], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write the core's captures into ``out_dir``: ``air.pcap`` (the channel as a monitor-mode
    sniffer hears it, radiotap + 802.11), ``NODE-wlan0.pcap`` per radio (what it sent and what
    was addressed to it; ``ap-wlan0.pcap`` the AP's) and ``wire-eth0.pcap`` (Ethernet, both
    directions of the wired link). Returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (name, _linktype, data, _frames) in enumerate(captures):
        if i == 0:
            file = "air.pcap"
        elif i == len(captures) - 1:
            file = "wire-eth0.pcap"
        else:
            file = f"{name}-wlan0.pcap"
        path = out / file
        path.write_bytes(data)
        paths.append(path)
    return paths


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


def run_overrides(seed: int | None, duration: str | None) -> list[str]:
    """The overrides of ``run.seed`` and ``run.duration`` (the core checks their values)."""
    lines = []
    if seed is not None:
        if isinstance(seed, bool):
            raise TypeError("seed must be an int, not bool")
        lines.append(f"run.seed={operator.index(seed)}")
    if duration is not None:
        if not isinstance(duration, str):
            raise TypeError(f'duration must be a str with a unit, e.g. "30s", not {type(duration).__name__}')
        lines.append(f"run.duration={toml_string(duration)}")
    return lines
