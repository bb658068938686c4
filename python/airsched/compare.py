# SPDX-License-Identifier: Apache-2.0
"""Side-by-side comparison of runs: per station and per flow, each run's figures and their
differences from the first (the baseline).

Inputs are scenario files (run here, with the same overrides), directories ``airsched run
--out`` wrote, or one sweep directory (each configuration is one input, its figures the means
over seeds).

    airsched compare scenarios/hoiland/udp.toml scenarios/hoiland/tcp.toml -o compare.png
    airsched compare out/sweep
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The figures compared, per table.
STATION_QUANTITIES = ("goodput_mbps", "airtime_share", "retries", "drops", "queue_delay_mean_ms")
FLOW_QUANTITIES = ("goodput_mbps", "lost_packets", "delay_mean_ms", "rtt_p50_ms", "rtt_p99_ms")


@dataclass
class Input:
    """One side of the comparison: a label and its stations and flows tables."""

    label: str
    stations: pd.DataFrame
    flows: pd.DataFrame


def load_inputs(
    items: Sequence[str | os.PathLike[str]],
    overrides: Sequence[str] = (),
    seed: int | None = None,
    duration: str | None = None,
) -> list[Input]:
    """Each item as an :class:`Input`: a scenario file is run (with ``overrides``, ``seed``,
    ``duration``); a run directory is read; a sweep directory gives one input per configuration
    (means over its seeds). Labels are the file or directory names (made unique)."""
    from .report import is_run_dir, is_sweep_dir, load_run_dir
    from .runner import run

    inputs: list[Input] = []
    for item in items:
        path = Path(item)
        if path.is_dir() and is_sweep_dir(path):
            with _readable(path, "a sweep directory (sweep.json, runs/)"):
                inputs.extend(_checked(_sweep_inputs(path), path))
        elif path.is_dir() and is_run_dir(path):
            with _readable(path, "a run directory (summary.json, *.parquet)"):
                r = load_run_dir(path)
                inputs.extend(_checked([Input(path.name, r.stations, r.flows)], path))
        else:
            r = run(path, seed=seed, duration=duration, overrides=list(overrides))
            inputs.append(Input(path.stem, r.stations, r.flows))
    seen: dict[str, int] = {}
    for inp in inputs:
        n = seen.get(inp.label, 0)
        seen[inp.label] = n + 1
        if n:
            inp.label = f"{inp.label} ({n + 1})"
    return inputs


@contextmanager
def _readable(path: Path, what: str) -> Iterator[None]:
    """Turn whatever reading a damaged or foreign directory raises (a truncated Parquet file,
    JSON of another shape, a missing table) into one ScenarioError line naming it."""
    from ._errors import AirschedError, ScenarioError

    try:
        yield
    except ScenarioError:
        raise
    except (AirschedError, OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        detail = f"no {exc}" if isinstance(exc, KeyError) else (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ScenarioError(f"{path}: cannot read it as {what}: {detail[:200]}") from None
    except Exception as exc:  # pyarrow's errors that are not ValueErrors
        if type(exc).__module__.split(".")[0] != "pyarrow":
            raise
        raise ScenarioError(f"{path}: cannot read it as {what}: {str(exc).splitlines()[0][:200]}") from None


def _checked(inputs: list[Input], path: Path) -> list[Input]:
    """``inputs`` if each table has the ``name`` column compare matches rows by."""
    for inp in inputs:
        for table in ("stations", "flows"):
            df = getattr(inp, table)
            if df is not None and "name" not in df.columns:
                raise KeyError(f"'name' column in its {table} table")
    return inputs


def _sweep_inputs(path: Path) -> list[Input]:
    import json

    from .sweeps import RUN_ID, SEED, collect

    index = json.loads((path / "sweep.json").read_text(encoding="utf-8"))
    params = [c for c in index["columns"] if c != SEED]
    out = []
    for table in ("stations", "flows"):
        df = collect(path, table)
        if not len(df):
            continue
        numeric = [c for c in df.columns if c not in (*params, SEED, RUN_ID, "name") and df[c].dtype.kind in "fiu"]
        grouped = df.groupby([*params, "name"], sort=False, dropna=False)[numeric].mean().reset_index() if params else df.groupby("name", sort=False)[numeric].mean().reset_index()
        configs = grouped.groupby(params, sort=False) if params else [((), grouped)]
        for i, (key, rows) in enumerate(configs):
            key = key if isinstance(key, tuple) else (key,)
            label = ", ".join(f"{p}={v}" for p, v in zip(params, key)) or index["name"]
            rows = rows.drop(columns=params).reset_index(drop=True)
            if table == "stations":
                out.append(Input(label, rows, None))  # type: ignore[arg-type]
            else:
                match = next((o for o in out if o.label == label), None)
                if match is not None:
                    match.flows = rows
    return out


def compare(inputs: Sequence[Input], table: str = "stations", quantities: Sequence[str] | None = None) -> pd.DataFrame:
    """The tidy comparison of one table: a row per (name, quantity, input) with ``value``,
    ``diff`` (value minus the first input's) and ``rel_diff`` (diff over the first's value;
    NaN where that is zero or missing). Names missing from an input have NaN values."""
    import pandas as pd

    if len(inputs) < 2:
        raise ValueError("compare needs at least two inputs")
    quantities = list(quantities or (STATION_QUANTITIES if table == "stations" else FLOW_QUANTITIES))
    frames = [(i.label, getattr(i, table)) for i in inputs]
    frames = [(label, df) for label, df in frames if df is not None]
    names = list(dict.fromkeys(n for _, df in frames for n in df["name"]))
    rows = []
    base = frames[0][1].set_index("name")
    for label, df in frames:
        by = df.set_index("name")
        for name in names:
            for q in quantities:
                value = _get(by, name, q)
                ref = _get(base, name, q)
                diff = value - ref
                rel = diff / ref if ref and math.isfinite(ref) else math.nan
                rows.append({"name": name, "quantity": q, "input": label, "value": value, "diff": diff, "rel_diff": rel})
    return pd.DataFrame(rows)


def _get(df: pd.DataFrame, name: str, q: str) -> float:
    if name not in df.index or q not in df.columns:
        return math.nan
    v = df.loc[name, q]
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def format_table(cmp: pd.DataFrame, title: str) -> Any:
    """A rich Table: a row per name and quantity, a column per input, then the difference of
    each later input from the first (absolute, and in % where defined)."""
    from rich.table import Table
    from rich.text import Text

    labels = list(dict.fromkeys(cmp["input"]))
    # Text, not str: rich would read a sweep label's "station[ms2].position" as markup.
    table = Table(title=Text(title), title_justify="left")
    table.add_column("name")
    table.add_column("quantity")
    for label in labels:
        table.add_column(Text(label), justify="right")
    for label in labels[1:]:
        table.add_column(Text(f"Δ {label}"), justify="right")
    wide = cmp.set_index(["name", "quantity", "input"])
    for (name, q), _ in cmp.groupby(["name", "quantity"], sort=False):
        cells = [str(name), str(q)]
        cells += [_fmt(wide.loc[(name, q, label), "value"]) for label in labels]
        for label in labels[1:]:
            d, rel = wide.loc[(name, q, label), "diff"], wide.loc[(name, q, label), "rel_diff"]
            cells.append(_fmt(d, signed=True) + ("" if not math.isfinite(rel) else f" ({100 * rel:+.1f}%)"))
        table.add_row(*map(Text, cells))
    return table


def _fmt(v: float, signed: bool = False) -> str:
    if v is None or not math.isfinite(v):
        return "–"
    return f"{v:+.4g}" if signed else f"{v:.4g}"


def plot(stations: pd.DataFrame, flows: pd.DataFrame | None, path: str | os.PathLike[str]) -> Path:
    """Grouped bars: goodput per station (left) and per flow (right), one bar per input."""
    from .plots import new_figure, save

    panels = [("stations", stations)] + ([("flows", flows)] if flows is not None and len(flows) else [])
    fig = new_figure(height=4.0)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (what, cmp) in zip(axes, panels):
        rows = cmp[cmp["quantity"] == "goodput_mbps"]
        names = list(dict.fromkeys(rows["name"]))
        labels = list(dict.fromkeys(rows["input"]))
        width = 0.8 / len(labels)
        for k, label in enumerate(labels):
            by = rows[rows["input"] == label].set_index("name")["value"]
            ax.bar([i + (k - (len(labels) - 1) / 2) * width for i in range(len(names))], [by.get(n, math.nan) for n in names], width=width * 0.95, label=label)
        ax.set_xticks(range(len(names)), names, rotation=30, fontsize="small")
        ax.set_ylabel("goodput, Mbit/s")
        ax.set_title(f"goodput per {what[:-1]}")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize="x-small")
    return save(fig, path)
