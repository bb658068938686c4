# SPDX-License-Identifier: Apache-2.0
"""Figures of a run's samples, drawn with matplotlib's Agg renderer into PNG files.

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

#: Figure size in inches and resolution: a PNG is (FIGSIZE[0] * DPI) x (height * DPI) pixels.
FIGSIZE = (9.0, 4.5)
DPI = 100

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


def save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` as a PNG at its own size (parent directories are created); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=DPI)
    return path


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
) -> Path:
    """Plot ``what`` ("goodput", "estimate" or "snr") of every station (or, with
    ``kind="flow"``, every flow's goodput) against time into a PNG at ``path``; return the path.

    ``source`` is a :class:`~airsched.Result` or a samples DataFrame (``samples.parquet``).
    Raises ValueError when there is nothing to draw (e.g. SNR of a run without radio conditions).
    """
    _what(what)
    if what != "goodput" and kind != "station":
        raise ValueError(f"what={what!r} exists only for stations (kind='station')")
    fig = new_figure()
    ax = fig.subplots()
    if draw_samples(ax, source, what, kind=kind, names=names) == 0:
        raise ValueError(f"no {kind} samples of {what} to plot (is that quantity modelled in this run?)")
    ax.set_xlabel("time, s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title or f"{what} per {kind}")
    return save(fig, path)


def _what(what: str) -> tuple[str, str]:
    try:
        return WHAT[what]
    except KeyError:
        raise ValueError(f"what: must be one of {', '.join(WHAT)}, got {what!r}") from None
