# SPDX-License-Identifier: Apache-2.0
"""Figures of a run's samples, drawn with matplotlib's Agg renderer into PNG, PDF or SVG files
(the path's suffix picks the format).

Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``: no
global state is touched (a notebook's backend stays as it was) and no display is needed.
matplotlib is imported inside the functions, so ``import airsched`` and ``airsched --version``
do not pay for it.

    >>> r = airsched.run("scenarios/garroppo/walk-whtb.toml")
    >>> airsched.plots.plot_samples(r, "goodput.png")                # per-station goodput
    >>> airsched.plots.plot_samples(r, "snr.png", what="snr")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .result import Result

#: Figure size in inches and resolution: a PNG is (FIGSIZE[0] * DPI) x (height * DPI) pixels,
#: and says DPI in its pHYs chunk. PDF and SVG are vector images of the same size.
FIGSIZE = (9.0, 4.5)
DPI = 200

#: The formats :func:`save` writes, by the path's suffix.
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")

#: What :func:`plot_samples` can draw: sample column, axis label, rows it applies to.
WHAT: dict[str, tuple[str, str]] = {
    "goodput": ("goodput_mbps", "goodput, Mbit/s"),
    "estimate": ("estimate_mbps", "estimated goodput, Mbit/s"),
    "snr": ("snr_db", "SNR, dB"),
}
#: Sample rows: per station or per flow (estimate and SNR exist only for stations).
KINDS = ("station", "flow")

#: Fixed colours of the reproductions' stations (Garroppo's MS1 and MS2, Høiland-Jørgensen's
#: fast1, fast2, slow and pingonly), so that a station looks the same in every figure.
COLORS: dict[str, str] = {
    "ms1": "tab:blue",
    "ms2": "tab:orange",
    "fast1": "tab:blue",
    "fast2": "tab:cyan",
    "slow": "tab:orange",
    "pingonly": "tab:gray",
}


def new_figure(width: float = FIGSIZE[0], height: float = FIGSIZE[1]) -> Figure:
    """A figure of ``width`` x ``height`` inches at :data:`DPI`, with constrained layout, that
    renders with Agg."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def figure_format(path: str | os.PathLike[str]) -> str:
    """The format a figure path's suffix names: ``"png"``, ``"pdf"`` or ``"svg"`` (any case).
    Raises ValueError naming the allowed suffixes for anything else."""
    suffix = Path(path).suffix.lower().removeprefix(".")
    if suffix not in FORMATS:
        given = f"suffix .{suffix}" if suffix else "no suffix"
        allowed = ", ".join(f".{f}" for f in FORMATS)
        raise ValueError(f"{os.fspath(path)}: cannot write a figure with {given}; use {allowed}")
    return suffix


def save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` at its own size in the format the suffix of ``path`` names (PNG at
    :data:`DPI`, or vector PDF or SVG; see :func:`figure_format`); parent directories are
    created. Returns the path."""
    path = Path(path)
    fmt = figure_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # metadata: no creation date, so that the same figure gives the same file.
    metadata = {"CreationDate": None} if fmt == "pdf" else {"Date": None} if fmt == "svg" else None
    fig.savefig(path, format=fmt, dpi=DPI, metadata=metadata)
    return path


def run_label(scenario: str | os.PathLike[str] | None, seed: int | None) -> str:
    """Which run a figure shows, for its title: ``"scenarios/anomaly.toml, seed 1"`` (either
    part left out when unknown)."""
    parts = []
    if scenario is not None:
        parts.append(os.fspath(scenario))
    if seed is not None:
        parts.append(f"seed {seed}")
    return ", ".join(parts)


def with_run(title: str, scenario: str | os.PathLike[str] | None = None, seed: int | None = None) -> str:
    """``title`` followed by the run it shows on a second line, where that is known."""
    label = run_label(scenario, seed)
    return f"{title}\n{label}" if label else title


def figure_legend(fig: Figure, order: Iterable[str] | None = None, **kwargs: Any) -> Any:
    """One legend for the whole figure with every labelled series of every axes (twins
    included), each label once, in ``order`` first (labels it lacks after, in drawing order).
    Returns the legend, or None if nothing is labelled."""
    seen: dict[str, Any] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    if not seen:
        return None
    first = [label for label in (order or ()) if label in seen]
    labels = first + [label for label in seen if label not in first]
    return fig.legend([seen[label] for label in labels], labels, **kwargs)


def plain_number(value: float) -> str:
    """A tick label as a plain number: ``1``, ``20``, ``0.5``, ``1000`` (never ``10^3``)."""
    import numpy as np

    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    return np.format_float_positional(float(f"{value:.6g}"), trim="-")


def plain_log_ticks(axis: Any) -> None:
    """Label a log axis with plain numbers (1, 10, 100, not 10^0): the decades always, and the
    2, 3, ..., 9 ticks too where the axis spans less than two decades."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = sorted(abs(v) for v in axis.get_view_interval())
    plain = FuncFormatter(lambda v, _pos: plain_number(v))
    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(plain)
    narrow = low > 0 and math.log10(high / low) < 2
    axis.set_minor_formatter(plain if narrow else NullFormatter())


def samples_frame(source: Result | pd.DataFrame) -> pd.DataFrame:
    """The samples table of a :class:`~airsched.Result`, or the DataFrame itself (e.g. a
    ``samples.parquet`` read back)."""
    samples = getattr(source, "samples", source)
    missing = [c for c in ("time_s", "kind", "name") if c not in samples.columns]
    if missing:
        raise ValueError(f"not a samples table: it lacks the column(s) {', '.join(missing)}")
    return samples


def draw_samples(
    ax: Axes,
    source: Result | pd.DataFrame,
    what: str = "goodput",
    *,
    kind: str = "station",
    names: Iterable[str] | None = None,
    label: str | Callable[[str], str] = "{name}",
    **style: Any,
) -> int:
    """Draw one line per station (or flow) of ``what`` against time on ``ax``; return how many
    lines were drawn. ``names`` picks and orders the stations/flows (default: all, in order of
    appearance); rows where the value is NaN (no radio conditions, no monitor) are left out.
    ``label`` is the legend label, ``{name}`` standing for the station or flow (or a function
    of the name); ``style`` goes to ``ax.plot``."""
    column, axis_label = _what(what)
    if kind not in KINDS:
        raise ValueError(f"kind: must be one of {', '.join(KINDS)}, got {kind!r}")
    samples = samples_frame(source)
    if column not in samples.columns:
        raise ValueError(f"the samples have no {column} column")
    rows = samples[(samples["kind"] == kind) & samples[column].notna()]
    order = list(dict.fromkeys(rows["name"])) if names is None else list(names)
    drawn = 0
    for name in order:
        series = rows[rows["name"] == name].sort_values("time_s")
        if series.empty:
            continue
        line_style = dict(style)
        if "color" not in line_style and name in COLORS:
            line_style["color"] = COLORS[name]
        text = label(name) if callable(label) else label.format(name=name)
        ax.plot(series["time_s"], series[column], label=text, **line_style)
        drawn += 1
    ax.set_ylabel(axis_label)
    return drawn


def plot_samples(
    source: Result | pd.DataFrame,
    path: str | os.PathLike[str],
    what: str = "goodput",
    *,
    kind: str = "station",
    names: Iterable[str] | None = None,
    title: str | None = None,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Plot ``what`` ("goodput", "estimate" or "snr") of every station (or, with
    ``kind="flow"``, every flow's goodput) against time into ``path`` (PNG, PDF or SVG by its
    suffix); return the path.

    ``source`` is a :class:`~airsched.Result` or a samples DataFrame (``samples.parquet``).
    The title says what is drawn and, where given (a Result gives its seed), the ``scenario``
    and ``seed`` of the run. Raises ValueError when there is nothing to draw (e.g. SNR of a run
    without radio conditions) or the suffix names no format :func:`save` writes.
    """
    _what(what)
    figure_format(path)
    if seed is None and hasattr(source, "summary"):
        seed = source.summary.get("seed")
    if what != "goodput" and kind != "station":
        raise ValueError(f"what={what!r} exists only for stations (kind='station')")
    fig = new_figure()
    ax = fig.subplots()
    if draw_samples(ax, source, what, kind=kind, names=names) == 0:
        raise ValueError(f"no {kind} samples of {what} to plot (is that quantity modelled in this run?)")
    ax.set_xlabel("time, s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(with_run(title or f"{what} per {kind}", scenario, seed))
    return save(fig, path)


def _what(what: str) -> tuple[str, str]:
    try:
        return WHAT[what]
    except KeyError:
        raise ValueError(f"what: must be one of {', '.join(WHAT)}, got {what!r}") from None


#: Virtual devices (ifb, imq) carry the packets of the real ones again: drawn, not added to the
#: aggregate.
VIRTUAL_PREFIXES = ("ifb", "imq")


def plot_interfaces(
    source: Result | pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    node: str = "ap",
    title: str | None = None,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Plot the bytes per second out of each interface of ``node`` against time, as Yip and
    Kwok's xnetload did (KBytes/s, 1 KB = 1000 bytes), with the aggregate of its real
    interfaces (virtual ones, ``ifb*``/``imq*``, are drawn dashed and left out of the sum: their
    line is the aggregate of the devices bound to them). ``source`` is a Result or the
    ``interfaces.parquet`` DataFrame. Raises ValueError when the node sent nothing."""
    figure_format(path)
    if seed is None and hasattr(source, "summary"):
        seed = source.summary.get("seed")
    frame = source.interfaces if hasattr(source, "interfaces") else source
    rows = frame[frame["node"] == node]
    if rows.empty:
        nodes = ", ".join(sorted(set(frame["node"]))) or "none"
        raise ValueError(f"no interface samples of node {node!r} (nodes: {nodes})")
    fig = new_figure()
    ax = fig.subplots()
    total = None
    drawn = 0
    for dev in dict.fromkeys(rows["dev"]):
        d = rows[rows["dev"] == dev].sort_values("time_s")
        if float(d["bytes_per_second"].sum()) == 0.0:
            continue
        virtual = str(dev).startswith(VIRTUAL_PREFIXES)
        ax.plot(d["time_s"], d["bytes_per_second"] / 1000.0, label=str(dev), linestyle="--" if virtual else "-", linewidth=1.2)
        drawn += 1
        if not virtual:
            series = d.set_index("time_s")["bytes_per_second"]
            total = series if total is None else total.add(series, fill_value=0.0)
    if drawn == 0:
        raise ValueError(f"node {node!r} sent nothing on any interface")
    if total is not None:
        ax.plot(total.index, total.values / 1000.0, label="aggregate", color="black", linewidth=1.8)
    ax.set_xlabel("time, s")
    ax.set_ylabel("bytes out, KB/s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(with_run(title or f"bytes out of each interface of {node}", scenario, seed))
    return save(fig, path)
