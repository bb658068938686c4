# SPDX-License-Identifier: Apache-2.0
"""Sweeps: a grid of scenario settings times seeds, run on a local process pool or a Dask
cluster, one Parquet file per run named by the content hash of the resolved scenario.

A sweep file (TOML)::

    [sweep]
    name = "garroppo-1-4"
    scenario = "../garroppo/share-1-4-drr.toml"   # relative to the sweep file
    seeds = [1, 2, 3]                              # or {from = 1, count = 10}

    [set]                                          # applied to every run
    "run.duration" = "20s"

    [parameters]                                   # key paths, each a list or a range
    "station[ms2].position" = ["good", "medium", "bad"]
    "station[ms1].snr" = {from = 0, to = 20, step = 5}

    [variants.scheduler]                           # named bundles of settings; `scenario`
    cbq = {scenario = "../garroppo/share-1-4-cbq.toml"}   # picks the base file
    whtb = {scenario = "../garroppo/share-1-4-whtb.toml"}

The grid is the product of every variant and parameter, times the seeds. Each run's identity is
the SHA-256 of the resolved scenario (the core's fully checked scenario, every default filled in,
paths left out), airsched's version and the native core's build (the hash of its file, so a
rebuilt core with changed code never reuses old runs); its results go to ``DIR/runs/<id>.parquet``, written to a
temporary file and renamed, so a sweep interrupted at any moment resumes with every completed run
kept and none repeated. The same :func:`run_one` runs in the local pool and on Dask.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from ._errors import AirschedError, ScenarioError, native_errors
from .scenario import COMMAND_LINE, PathLike, override_lines, read_text, toml_value

if TYPE_CHECKING:
    import pandas as pd

    from .result import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Folded into every run identity: bump it when results of the same resolved scenario change
#: meaning (a new result column is fine; a changed model is not), so old runs are not reused.
SEMANTICS = 1
#: Where the runs of a sweep directory are.
RUNS_DIR = "runs"
#: Per-run Parquet metadata key holding the summary, tc statistics, warnings and provenance.
META_KEY = b"airsched"
#: The column every sweep table carries beside its parameters.
SEED = "seed"
RUN_ID = "run_id"
SCENARIO = "scenario"
_TMP = ".tmp-"
#: Bounds of a sweep (docs/limits.md), so that any sweep file that loads has a grid of bounded
#: size, made in bounded time and memory: values of one parameter (or variants of one axis),
#: seeds, and runs of the whole grid (points x seeds; each is a file in DIR/runs).
MAX_POINTS = 10_000
MAX_SEEDS = 10_000
MAX_RUNS = 100_000
#: The largest seed: run.seed is a TOML integer (a signed 64-bit one).
MAX_SEED = 2**63 - 1


# ----- the sweep file ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: a column name and, per point, its label and its settings
    (``{key path: Python value}``; the key ``scenario`` names a base file)."""

    name: str
    points: tuple[tuple[Any, Mapping[str, Any]], ...]
    line: int  # of the sweep file, for errors in its settings


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its parameter values (column → value), base scenario and overrides."""

    params: Mapping[str, Any]
    scenario: str
    overrides: tuple[str, ...]
    #: Sweep-file line of each override, for error messages.
    lines: tuple[int, ...]
    seed: int
    run_id: str = ""


@dataclass
class Sweep:
    """A parsed sweep file: the grid's axes, fixed settings and seeds."""

    path: str
    name: str
    scenario: str | None
    axes: list[Axis]
    fixed: list[tuple[str, Any, int]]
    seeds: list[int]
    seeds_line: int = 1
    extra: list[str] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        """The parameter columns of this sweep's tables, ``seed`` last."""
        return [a.name for a in self.axes] + [SEED]

    def runs(self) -> list[Run]:
        """Every run of the grid, in a fixed order (axes in file order, seeds innermost), each
        with its identity; raises :class:`ScenarioError` naming the sweep file's line for every
        setting the core rejects."""
        here = Path(self.path).parent
        errors: list[str] = []
        runs: list[Run] = []
        texts: dict[str, str | None] = {}
        for combo in itertools.product(*(a.points for a in self.axes)):
            for seed in self.seeds:
                scenario = self.scenario
                settings: list[tuple[str, Any, int]] = list(self.fixed)
                params: dict[str, Any] = {}
                for axis, (label, values) in zip(self.axes, combo):
                    params[axis.name] = label
                    for key, value in values.items():
                        if key == SCENARIO:
                            scenario = str(value)
                        else:
                            settings.append((key, value, axis.line))
                params[SEED] = seed
                if scenario is None:
                    errors.append(f"{self.path}:1:1: sweep.scenario: no base scenario (set sweep.scenario or a variant's scenario)")
                    return _raise(errors)
                base = os.path.normpath(here / scenario) if not os.path.isabs(scenario) else scenario
                lines = [f"{k}={toml_value(v, k)}" for k, v, _ in settings] + list(self.extra)
                lines.append(f"run.seed={seed}")
                where = [ln for _, _, ln in settings] + [0] * len(self.extra) + [self.seeds_line]
                runs.append(Run(params, base, tuple(lines), tuple(where), seed))
        out = []
        for run in runs:
            if run.scenario not in texts:
                try:
                    texts[run.scenario] = read_text(run.scenario)
                except ScenarioError as exc:
                    name = os.path.basename(run.scenario)
                    sweep_lines = Path(self.path).read_text(encoding="utf-8").splitlines()
                    line = next((i for i, text in enumerate(sweep_lines, 1) if name in text), 1)
                    msg = f"{self.path}:{line}:1: scenario: {exc.errors[0]}"
                    if msg not in errors:
                        errors.append(msg)
                    texts[run.scenario] = None
                    continue
            if texts[run.scenario] is None:
                continue
            try:
                run_id = run_identity(texts[run.scenario], run.scenario, run.overrides)
            except ScenarioError as exc:
                for line in exc.errors:
                    msg = _at_sweep_line(line, self.path, run.lines)
                    if msg not in errors:
                        errors.append(msg)
                continue
            out.append(Run(run.params, run.scenario, run.overrides, run.lines, run.seed, run_id))
        if errors:
            _raise(errors)
        return out


def _raise(errors: list[str]) -> Any:
    raise ScenarioError(errors)


_OVERRIDE_ERROR = re.compile(rf"^{re.escape(COMMAND_LINE)}:(\d+):\d+: ")


def _at_sweep_line(message: str, sweep_path: str, lines: Sequence[int]) -> str:
    """A core error in the N-th override, re-pointed at the sweep file line that set it (an
    override given on the command line keeps the core's ``<command line>`` position)."""
    m = _OVERRIDE_ERROR.match(message)
    if not m:
        return message
    n = int(m.group(1))
    line = lines[n - 1] if 0 < n <= len(lines) else 0
    return f"{sweep_path}:{line}:1: {message[m.end():]}" if line else message


@functools.cache
def core_build() -> str:
    """The SHA-256 (hex) of the native core's file as loaded: two builds of the same version
    whose code differs (a developer's edit, a fix between releases) differ here, so a sweep
    directory never reuses a run the model as it is now would compute differently. Read once
    per process (about 15 MB, some tens of milliseconds)."""
    digest = hashlib.sha256()
    with open(_core.__file__, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_identity(text: str, path: str, overrides: Sequence[str]) -> str:
    """The SHA-256 (hex) of the resolved scenario, airsched's version and semantics, and the
    native core's build (:func:`core_build`)."""
    with native_errors():
        resolved = _core.resolved_scenario(text, path, list(overrides))
    blob = json.dumps(
        {"airsched": _core.version(), "core": core_build(), "semantics": SEMANTICS, "scenario": resolved}, sort_keys=True
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def parse_seeds(text: str) -> list[int]:
    """``"1-10"`` (a range, both ends included), ``"1,2,5"`` or ``"7"`` as a list of seeds;
    raises ValueError saying what is wrong."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", part)
        if m and int(m.group(1)) <= int(m.group(2)):
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi - lo + 1 + len(seeds) > MAX_SEEDS or hi > MAX_SEED:
                raise ValueError(f"{text!r}: at most {MAX_SEEDS} seeds, each at most {MAX_SEED}")
            seeds.extend(range(lo, hi + 1))
        elif part.isascii() and part.isdigit() and int(part) <= MAX_SEED and len(seeds) < MAX_SEEDS:
            seeds.append(int(part))
        else:
            raise ValueError(f"{text!r}: expected seeds as 1-10, 1,2,5 or 7 (integers 0 to {MAX_SEED}, at most {MAX_SEEDS})")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"{text!r}: a seed is listed twice")
    return seeds


def load_sweep(path: PathLike, overrides: Iterable[str] = (), seeds: Sequence[int] | None = None) -> Sweep:
    """Read a sweep file. ``overrides`` (``KEY=VALUE``, as ``--set`` takes them) are applied to
    every run after the file's settings; ``seeds`` replaces the file's seeds. Raises :class:`ScenarioError` as ``FILE:LINE:COL: KEY:
    message`` for anything wrong."""
    from .packaged import resolve

    path = resolve(path)
    text = read_text(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{m.group(1)}:{m.group(2)}" if m else "1:1"
        raise ScenarioError(f"{path}:{where}: {str(exc).split(' (at line')[0]}") from None
    errors: list[str] = []

    def err(key: str, msg: str) -> None:
        errors.append(f"{path}:{_line_of(text, key)}:1: {key}: {msg}")

    for top in doc:
        if top not in ("sweep", "set", "parameters", "variants"):
            err(top, f"unknown table [{top}]; expected [sweep], [set], [parameters] or [variants]")
    head = doc.get("sweep", {})
    if not isinstance(head, dict):
        err("sweep", "must be a table")
        head = {}
    for key in head:
        if key not in ("name", "scenario", "seeds"):
            err(f"sweep.{key}", f"unknown key `{key}` in [sweep]; expected name, scenario or seeds")
    name = head.get("name", Path(path).stem)
    scenario = head.get("scenario")
    if scenario is not None and not isinstance(scenario, str):
        err("sweep.scenario", f"must be a file name (a string), got {scenario!r}")
        scenario = None
    if seeds is None:
        seeds = _seeds(head.get("seeds", [1]), lambda msg: err("sweep.seeds", msg))
    fixed = [(k, v, _line_of(text, k)) for k, v in _dict(doc.get("set", {}), "set", err).items()]
    for key, value, _ in fixed:
        _distinct([value], lambda msg, key=key: err(key, msg))
    axes: list[Axis] = []
    for vname, table in _dict(doc.get("variants", {}), "variants", err).items():
        if vname in (SEED, RUN_ID):
            err(f"variants.{vname}", f"`{vname}` is a column of every sweep; name the variant otherwise")
        table = _dict(table, f"variants.{vname}", err)
        points = []
        for label, settings in table.items():
            if not isinstance(settings, dict) or not settings:
                err(f"variants.{vname}.{label}", 'must be a table of settings, e.g. {"ap.queueing" = "airtime"}')
                continue
            for key, value in settings.items():
                _distinct([value], lambda msg, where=f"variants.{vname}.{label}", key=key: err(where, f"{key}: {msg}"))
            points.append((label, settings))
        if not points:
            err(f"variants.{vname}", "has no variants")
            continue
        if len(points) > MAX_POINTS:
            err(f"variants.{vname}", f"at most {MAX_POINTS} variants, got {len(points)}")
            continue
        axes.append(Axis(vname, tuple(points), _line_of(text, f"variants.{vname}")))
    for key, spec in _dict(doc.get("parameters", {}), "parameters", err).items():
        values = _values(spec, lambda msg, key=key: err(key, msg))
        if values:
            axes.append(Axis(key, tuple((v, {key: v}) for v in values), _line_of(text, key)))
    if scenario is None and not any(SCENARIO in s for a in axes for _, s in a.points):
        err("sweep.scenario", 'missing: name the base scenario file, e.g. scenario = "../anomaly.toml"')
    if errors:
        _raise(errors)
    grid = math.prod(len(a.points) for a in axes) * max(len(seeds or ()), 1)
    if grid > MAX_RUNS:
        widest = max(axes, key=lambda a: len(a.points)) if axes else None
        shape = " x ".join(f"{len(a.points)} {a.name}" for a in axes) + f" x {len(seeds or ())} seeds"
        line = widest.line if widest else _line_of(text, "seeds")
        _raise([f"{path}:{line}:1: {widest.name if widest else 'sweep.seeds'}: the grid has {grid} runs ({shape}); "
                f"a sweep has at most {MAX_RUNS}"])
    names = [a.name for a in axes]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        _raise([f"{path}:{_line_of(text, dup[0])}:1: {dup[0]}: set twice (as a parameter and a variant)"])
    if seeds is not None:
        seeds = list(seeds)
    return Sweep(path, str(name), scenario, axes, fixed, seeds, _line_of(text, "seeds"), list(overrides))


def _dict(value: Any, key: str, err: Callable[[str, str], None]) -> dict[str, Any]:
    if not isinstance(value, dict):
        err(key, "must be a table")
        return {}
    return value


def _seeds(spec: Any, err: Callable[[str], None]) -> list[int]:
    if isinstance(spec, int) and not isinstance(spec, bool):
        return [spec]
    if isinstance(spec, dict):
        unknown = set(spec) - {"from", "count"}
        start, count = spec.get("from", 1), spec.get("count")
        if (unknown or not _is_int(count) or not _is_int(start) or count < 1 or start < 0):
            err("expected a list of seeds, or {from = 1, count = 10} (count at least 1)")
            return []
        if count > MAX_SEEDS or start + count - 1 > MAX_SEED:
            err(f"at most {MAX_SEEDS} seeds, each at most {MAX_SEED}; got from = {start}, count = {count}")
            return []
        return list(range(start, start + count))
    if isinstance(spec, list) and spec and all(_is_int(s) and 0 <= s <= MAX_SEED for s in spec):
        if len(spec) > MAX_SEEDS:
            err(f"at most {MAX_SEEDS} seeds, got {len(spec)}")
            return []
        if len(set(spec)) != len(spec):
            err("a seed is listed twice")
            return []
        return list(spec)
    err(f"expected a list of seeds (integers 0 to {MAX_SEED}), or {{from = 1, count = 10}}, got {_short(spec)}")
    return []


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters for an error line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _values(spec: Any, err: Callable[[str], None]) -> list[Any]:
    """A parameter's values: a list, or a range table ``{from, to, step}`` or ``{from, to,
    count}`` (``to`` included), optionally with ``unit = "Mbps"`` appended to each value."""
    if isinstance(spec, list):
        if not spec:
            err("has no values")
        elif len(spec) > MAX_POINTS:
            err(f"at most {MAX_POINTS} values, got {len(spec)}")
            return []
        return _distinct(spec, err)
    if not isinstance(spec, dict):
        err(f"expected a list of values or a range {{from = 0, to = 10, step = 2}}, got {_short(spec)}")
        return []
    unknown = sorted(set(spec) - {"from", "to", "step", "count", "unit"})
    if unknown and not set(spec) & {"from", "to", "step", "count"}:
        err('a key path with dots must be quoted, e.g. "cell.retry_limit" = [4, 7] (unquoted, TOML reads it as tables)')
        return []
    if unknown:
        err(f"unknown range key `{unknown[0]}`; a range has from, to, and step or count (and unit)")
        return []
    lo, hi, step, count, unit = (spec.get(k) for k in ("from", "to", "step", "count", "unit"))
    nums = [x for x in (lo, hi, step) if x is not None]
    if lo is None or hi is None or (step is None) == (count is None) or not all(_is_number(x) for x in nums):
        err("a range needs numbers from and to, and either step or count")
        return []
    if not all(math.isfinite(x) for x in nums):
        err(f"a range needs finite numbers, got from={lo}, to={hi}" + ("" if step is None else f", step={step}"))
        return []
    if step is not None:
        if step <= 0 or hi < lo:
            err(f"a range needs step > 0 and to >= from, got from={lo}, to={hi}, step={step}")
            return []
        points = (hi - lo) / step
        if not math.isfinite(points) or points + 1 > MAX_POINTS:
            err(f"a range has at most {MAX_POINTS} values; from={lo} to={hi} by step={step} has more")
            return []
        n = int(math.floor(points + 1e-9)) + 1
        values = [lo + i * step for i in range(n)]
    else:
        if not _is_int(count) or count < 1 or (count == 1 and lo != hi):
            err("count must be an integer >= 1 (2 or more when from != to)")
            return []
        if count > MAX_POINTS or not math.isfinite(hi - lo):
            err(f"a range has at most {MAX_POINTS} values of finite span, got from={lo}, to={hi}, count={count}")
            return []
        values = [lo + (hi - lo) * (i / (count - 1)) for i in range(count)] if count > 1 else [lo]
    if all(isinstance(x, int) for x in nums) and all(float(v).is_integer() for v in values):
        values = [int(v) for v in values]
    else:
        values = [round(float(v), 9) for v in values]
    if unit is not None:
        if not isinstance(unit, str):
            err(f"unit must be a string such as \"Mbps\", got {unit!r}")
            return []
        values = [f"{v:g}{unit}" for v in values]
    return _distinct(values, err)


def _distinct(values: list[Any], err: Callable[[str], None]) -> list[Any]:
    """``values`` if each is a value a scenario can hold and none is there twice (a repeated
    grid point would run the same configuration again and count it as independent); else []
    after saying which."""
    seen = set()
    for v in values:
        try:
            key = toml_value(v)
        except TypeError as exc:
            err(str(exc).removeprefix("value: "))
            return []
        if key in seen:
            err(f"the value {key} is listed twice (a grid point runs once; add seeds for repetitions)")
            return []
        seen.add(key)
    return values


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _line_of(text: str, key: str) -> int:
    """The line of the sweep file that sets ``key`` (a dotted key, a quoted key path or a
    table header), or 1 if it cannot be told."""
    last = key.split(".")[-1] if not key.startswith(("station", "flow")) and "[" not in key else key
    candidates = [f'"{key}"', f"'{key}'", f"[{key}]", f"[{key}", key]
    if last != key:
        candidates.append(last)
    lines = text.splitlines()
    for cand in candidates:
        for i, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith(cand) and (cand.startswith("[") or stripped[len(cand):].lstrip().startswith(("=", "."))):
                return i
    return 1


# ----- running ---------------------------------------------------------------------------------


def run_path(out_dir: PathLike, run_id: str) -> Path:
    return Path(out_dir) / RUNS_DIR / f"{run_id}.parquet"


def task_of(run: Run, out_dir: PathLike) -> dict[str, Any]:
    """What a worker needs to do one run: plain values only (picklable under spawn, on Dask)."""
    return {
        "run_id": run.run_id,
        "scenario": run.scenario,
        "overrides": list(run.overrides),
        "params": dict(run.params),
        "out": os.fspath(run_path(out_dir, run.run_id)),
    }


def run_one(task: Mapping[str, Any]) -> dict[str, Any]:
    """Simulate one run and write its Parquet file atomically; never raises. Returns
    ``{"run_id", "status": "done" | "exists" | "failed", "error", "wall_s"}``."""
    from .runner import run

    out = Path(task["out"])
    status = {"run_id": task["run_id"], "status": "done", "error": None, "wall_s": 0.0}
    if out.exists():  # a duplicate on a cluster, or a run another worker finished
        status["status"] = "exists"
        return status
    started = time.perf_counter()
    try:
        result = run(task["scenario"], overrides=task["overrides"])
        write_run(result, out, provenance=provenance(task))
    except AirschedError as exc:
        status.update(status="failed", error="; ".join(getattr(exc, "errors", None) or [str(exc)]))
    except Exception as exc:  # noqa: BLE001 - a worker reports, the sweep goes on
        status.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    status["wall_s"] = time.perf_counter() - started
    return status


def provenance(task: Mapping[str, Any]) -> dict[str, Any]:
    import platform

    return {
        "run_id": task["run_id"],
        "params": dict(task["params"]),
        "scenario": task["scenario"],
        "overrides": list(task["overrides"]),
        "airsched_version": _core.version(),
        "semantics": SEMANTICS,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "command": command_line(task["scenario"], task["overrides"]),
    }


def command_line(scenario: str, overrides: Sequence[str]) -> str:
    """The ``airsched run`` command that reproduces one run alone."""
    import shlex

    return " ".join(["airsched", "run", shlex.quote(scenario), *(f"--set {shlex.quote(o)}" for o in overrides)])


def write_run(result: Result, path: PathLike, provenance: Mapping[str, Any] | None = None) -> Path:
    """One run as one Parquet file: one row, one column per result table (a list of rows),
    the summary, tc statistics, warnings and provenance in the file's metadata. Written to a
    temporary name in the same directory and renamed, so the file is there whole or not at all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .result import TABLES

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {}
    for table in TABLES:
        frame = pa.Table.from_pandas(getattr(result, table), preserve_index=False)
        rows = pa.StructArray.from_arrays(
            [c.combine_chunks() for c in frame.columns], fields=list(frame.schema)
        ) if frame.num_columns else pa.array([{}] * frame.num_rows)
        columns[table] = pa.ListArray.from_arrays(pa.array([0, len(rows)], pa.int32()), rows)
    meta = {
        "summary": result.summary,
        "tc": result.tc,
        "warnings": result.warnings,
        "provenance": dict(provenance or {}),
    }
    blob = json.dumps(meta, allow_nan=True, sort_keys=True, default=str).encode("utf-8")
    table = pa.table(columns).replace_schema_metadata({META_KEY: blob})
    tmp = path.with_name(f"{_TMP}{path.name}.{os.getpid()}")  # never *.parquet: not a run
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def read_run(path: PathLike) -> tuple[Result, dict[str, Any]]:
    """A run file written by :func:`write_run`: its :class:`Result` and its provenance."""
    import pyarrow.parquet as pq

    from .result import TABLES, Result

    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[META_KEY])
    tables = {}
    for name in TABLES:
        rows = table.column(name).combine_chunks().flatten()
        tables[name] = {f.name: rows.field(i).to_pylist() for i, f in enumerate(rows.type)}
    return Result(meta["summary"], tables, meta.get("tc", ()), meta.get("warnings", ())), meta["provenance"]


@dataclass
class SweepOutcome:
    """What :func:`execute` did: runs done now, found done already, and failed (with errors)."""

    total: int
    done: int = 0
    skipped: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0


ProgressHook = Callable[[int, int, int, int], None]  # (finished, failed, skipped, total)


def execute(
    sweep: Sweep,
    out_dir: PathLike,
    *,
    jobs: int | None = None,
    executor: str = "local",
    address: str | Any | None = None,
    force: bool = False,
    progress: ProgressHook | None = None,
) -> SweepOutcome:
    """Run every run of ``sweep`` whose file ``DIR/runs/<id>.parquet`` is missing (all of
    them with ``force``). ``executor`` is ``"local"`` (a process pool of ``jobs`` workers,
    default all usable cores; ``jobs=1`` runs in this process) or ``"dask"`` (``address``: a
    scheduler address, a ``distributed.Client``, or None for a local Dask cluster)."""
    started = time.perf_counter()
    out = Path(out_dir)
    runs = sweep.runs()
    (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    for stale in (out / RUNS_DIR).glob(f"{_TMP}*"):  # left by a killed worker
        stale.unlink(missing_ok=True)
    write_index(sweep, runs, out)
    unique: dict[str, Run] = {}
    for r in runs:
        unique.setdefault(r.run_id, r)
    outcome = SweepOutcome(total=len(unique))
    pending = []
    for r in unique.values():
        path = run_path(out, r.run_id)
        if path.exists() and not force:
            outcome.skipped += 1
        else:
            if force:
                path.unlink(missing_ok=True)
            pending.append(task_of(r, out))

    def report(status: dict[str, Any]) -> None:
        if status["status"] == "failed":
            task = by_id[status["run_id"]]
            outcome.failed.append({**status, "params": task["params"], "command": command_line(task["scenario"], task["overrides"])})
        else:
            outcome.done += 1
        if progress is not None:
            progress(outcome.done + len(outcome.failed), len(outcome.failed), outcome.skipped, outcome.total)

    by_id = {t["run_id"]: t for t in pending}
    if progress is not None:
        progress(0, 0, outcome.skipped, outcome.total)
    if executor == "local":
        _run_local(pending, jobs, report)
    elif executor == "dask":
        _run_dask(pending, address, report)
    else:
        raise ValueError(f"executor must be 'local' or 'dask', got {executor!r}")
    write_failures(out, outcome.failed)
    outcome.wall_s = time.perf_counter() - started
    return outcome


def default_jobs() -> int:
    """The usable cores of this machine."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _run_local(tasks: list[dict[str, Any]], jobs: int | None, report: Callable[[dict[str, Any]], None]) -> None:
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            report(run_one(task))
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn: never fork a process that may hold the native core's state or threads. Each worker
    # watches its parent and exits when it is gone (SIGKILL leaves it no chance to stop them).
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(tasks)),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )
    try:
        # Keep at most two tasks per worker queued, so Ctrl-C loses little queued work.
        queue = list(reversed(tasks))
        running = set()
        while queue or running:
            while queue and len(running) < 2 * jobs:
                running.add(pool.submit(run_one, queue.pop()))
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                report(fut.result())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


#: How often a pool worker looks whether its parent is still there, seconds.
PARENT_POLL_S = 0.5


def _watch_parent(parent: int) -> None:
    """In a pool worker: a daemon thread that ends the process once ``parent`` (the sweep) is
    no longer its parent, i.e. the sweep died without shutting the pool down (SIGKILL, OOM
    killer); otherwise the worker would wait for tasks forever."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="airsched-parent-watch", daemon=True).start()


def _run_dask(tasks: list[dict[str, Any]], address: Any, report: Callable[[dict[str, Any]], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise AirschedError(
            "the dask executor needs Dask distributed: pip install 'airsched[cluster]'"
        ) from None
    own = not hasattr(address, "map")
    client = Client(address) if own else address
    try:
        # The key is the run identity: Dask runs a run once even if it is submitted twice.
        futures = client.map(run_one, tasks, key=[f"airsched-run-{t['run_id']}" for t in tasks], pure=False)
        for fut in as_completed(futures):
            report(fut.result())
    finally:
        if own:
            client.close()


def write_index(sweep: Sweep, runs: list[Run], out: Path) -> Path:
    """``DIR/sweep.json``: the sweep's name, columns and every run's parameters and identity."""
    index = {
        "name": sweep.name,
        "sweep_file": os.path.abspath(sweep.path),
        "columns": sweep.columns,
        "runs": [{**r.params, RUN_ID: r.run_id} for r in runs],
    }
    path = out / "sweep.json"
    tmp = path.with_name(f"{_TMP}{os.getpid()}-sweep.json")
    tmp.write_text(json.dumps(index, indent=1, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_failures(out: Path, failed: list[dict[str, Any]]) -> Path | None:
    """``DIR/failures.json``: each failed run's parameters, error and the command that reproduces
    it; removed when no run failed."""
    path = out / "failures.json"
    if not failed:
        path.unlink(missing_ok=True)
        return None
    path.write_text(json.dumps(failed, indent=1, default=str) + "\n", encoding="utf-8")
    return path


# ----- collecting --------------------------------------------------------------------------------


def collect(out_dir: PathLike, table: str = "stations") -> pd.DataFrame:
    """One tidy DataFrame of a sweep directory: ``table`` (stations, flows, samples, pings,
    nodes, rates, aggregates, or ``runs``: one row per run with the summary's scalars) of every
    completed run, with a column per parameter, ``seed`` and ``run_id`` in front. Runs of the
    index whose file is missing (failed, or not run yet) have no rows."""
    import pandas as pd

    from .result import TABLES

    out = Path(out_dir)
    index = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    columns = list(index["columns"])
    if table != "runs" and table not in TABLES:
        raise ValueError(f"table must be 'runs' or one of {', '.join(TABLES)}, got {table!r}")
    frames = []
    cache: dict[str, Any] = {}
    for row in index["runs"]:
        path = run_path(out, row[RUN_ID])
        if not path.exists():
            continue
        if row[RUN_ID] not in cache:
            cache[row[RUN_ID]] = read_run(path)[0]
        result = cache[row[RUN_ID]]
        if table == "runs":
            scalars = {k: v for k, v in result.summary.items() if not isinstance(v, (dict, list))}
            frame = pd.DataFrame([scalars])
        else:
            frame = getattr(result, table).copy()
        for col in reversed([*columns, RUN_ID]):
            frame.insert(0, col, [row[col]] * len(frame)) if col not in frame else None
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*columns, RUN_ID])
    df = pd.concat(frames, ignore_index=True)
    df.attrs["parameters"] = [c for c in columns if c != SEED]
    df.attrs["sweep"] = index["name"]
    return df


def sweep(
    spec: PathLike,
    out: PathLike,
    *,
    table: str = "stations",
    jobs: int | None = None,
    executor: str = "local",
    address: Any = None,
    overrides: Iterable[str] | Mapping[str, Any] | None = None,
    seeds: Sequence[int] | None = None,
    force: bool = False,
    progress: ProgressHook | None = None,
) -> pd.DataFrame:
    """Run the sweep file ``spec`` into the directory ``out`` (resuming what is there) and
    return ``table`` of every run as one tidy DataFrame, a column per parameter (see
    :func:`collect`). ``df.attrs["outcome"]`` is the :class:`SweepOutcome` (runs done, skipped,
    failed). ``overrides`` apply to every run; ``seeds`` replaces the file's seeds."""
    sw = load_sweep(spec, override_lines(overrides), seeds)
    outcome = execute(sw, out, jobs=jobs, executor=executor, address=address, force=force, progress=progress)
    df = collect(out, table)
    df.attrs["outcome"] = outcome
    return df
