# SPDX-License-Identifier: Apache-2.0
"""Yip & Kwok: the dual-radio network access point (NAP) of "A Performance Study of Packet
Scheduling Algorithms for Coordinating Colocated Bluetooth and IEEE 802.11b in a Linux Machine".

The testbed: one Linux 2.4 box is the NAP, with an 802.11b interface in AP mode (``wlan0``) and a
Bluetooth PAN master (``bnep0``, DH5); one client on each radio downloads a 600 MB file from it
over FTP for 700-800 s. An IMQ device (``imq0``) binds wlan0 and bnep0 so that one discipline
schedules the traffic of both; the paper compares four: FIFO, HTB+SFQ, PRIO+TBF and SFQ, and
measures the bytes per second out of each interface with xnetload. Its metric is the aggregate
bandwidth (imq0): the trend of its peak and its range of major fluctuation; its ranking is
PRIO+TBF > HTB+SFQ > SFQ > FIFO.

The scenario files are ``scenarios/yip-kwok/nap-<configuration>.toml``. :func:`run_testbed` runs
the four; :func:`format_tables` prints the peak, the range of major fluctuation, the mean and the
ranking beside the paper's and :func:`observations` checks the paper's statements.

    >>> from airsched.repro import yipkwok
    >>> rep = yipkwok.run_testbed(duration="100s")
    >>> for table in yipkwok.format_tables(rep):
    ...     rich.print(table)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..runner import run
from ._compare import tied
from ._scenarios import display_path as _display_path
from ._scenarios import find_scenarios_dir as _find_scenarios_dir
from ._scenarios import short_run_warmup

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

    from ..result import Result

#: The four configurations at imq0, in the paper's order of presentation.
CONFIGURATIONS: tuple[str, ...] = ("fifo", "htb-sfq", "prio-tbf", "sfq")
CONFIGURATION_LABELS: dict[str, str] = {
    "fifo": "FIFO",
    "htb-sfq": "HTB+SFQ",
    "prio-tbf": "PRIO+TBF",
    "sfq": "SFQ",
}
#: The paper's ranking (Section V), best first.
PAPER_RANKING: tuple[str, ...] = ("prio-tbf", "htb-sfq", "sfq", "fifo")
#: The interfaces of the NAP the paper measured, and what each series is called here.
SERIES: dict[str, str] = {"wlan0": "wlan", "bnep0": "bt", "imq0": "aggregate"}
#: The warm-up of the nap-*.toml files, seconds.
WARMUP_S = 5.0
#: The paper's "KBytes/sec": 1000 bytes (its DH5 723 kbit/s is "about 90.375 KBytes/sec").
KB = 1000.0
#: The quantiles of the 1-s samples that stand for the paper's readings of its plots: the peak
#: (the top of the thick band, not a single spike) and the range of major fluctuation.
PEAK_QUANTILE = 0.95
RANGE_QUANTILES = (0.10, 0.90)
#: The WLAN floor the paper reports under HTB+SFQ and PRIO+TBF (Figs. 7 and 9), KB/s.
WLAN_FLOOR_KBPS = 400.0
#: What the Bluetooth link carries alone, DH5 one way, 1448-byte TCP segments (docs/model-bluetooth.md:
#: 4 DH5 + 1 DH3 per 1500-byte packet with BNEP's 3-byte header), as KB/s of bnep0 output.
BT_ALONE_KBPS = 723.2 / 8.0

#: The columns of the summary (one row per configuration and series).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "configuration",
    "series",
    "mean_kBps",
    "std_kBps",
    "peak_kBps",
    "range_low_kBps",
    "range_high_kBps",
    "trend_kBps_per_100s",
)
CSV_FLOAT_FORMAT = "%.10g"


class Paper(NamedTuple):
    """What the paper's text says of one configuration's aggregate: its peak, its range of
    major fluctuation (KB/s; None where the text gives no number) and the wording."""

    peak: float | None
    low: float | None
    high: float | None
    text: str


#: Section IV, per configuration, the aggregate (imq0) as the text reads it off Figs. 4, 6, 8, 10.
PAPER: dict[str, Paper] = {
    "fifo": Paper(None, 300.0, 600.0, "peak with a gradual downward trend; major range 300-600 (Fig. 4)"),
    "htb-sfq": Paper(600.0, 350.0, 600.0, "peak steady ~600, rising above it at the end; 350-600 (Fig. 6)"),
    "prio-tbf": Paper(660.0, 400.0, 660.0, "peak stable at 660, the steadiest; 400-660 (Fig. 8)"),
    "sfq": Paper(560.0, 300.0, 600.0, "peak ~560, no clear trend; 300-600 (Fig. 10)"),
}


@dataclass
class Reproduction:
    """The four runs: ``series`` (configuration, series, time_s, kBps: one row per 1-s sample),
    ``summary`` (:data:`SUMMARY_COLUMNS`), the runs' results and the scenario files."""

    series: pd.DataFrame
    summary: pd.DataFrame
    results: dict[str, Result] = field(default_factory=dict)
    scenarios: dict[str, str] = field(default_factory=dict)
    seed: int = 1
    warnings: list[str] = field(default_factory=list)

    def means(self) -> dict[str, float]:
        """Each configuration's mean aggregate bandwidth, KB/s (the paper's metric)."""
        agg = self.summary[self.summary["series"] == "aggregate"]
        return dict(zip(agg["configuration"], agg["mean_kBps"].astype(float), strict=True))


def ranking_text(mean: dict[str, float]) -> str:
    """The configurations best first, ``>`` between them or ``=`` where tied:
    ``"PRIO+TBF 515 > HTB+SFQ 452 > FIFO 425 = SFQ 425"``."""
    order = sorted(mean, key=lambda c: (-mean[c], CONFIGURATIONS.index(c)))
    text = ""
    for k, c in enumerate(order):
        if k:
            text += " = " if tied(mean[order[k - 1]], mean[c]) else " > "
        text += f"{CONFIGURATION_LABELS[c]} {mean[c]:.0f}"
    return text


def ranking_agrees(mean: dict[str, float]) -> bool:
    """Whether the means order the configurations as the paper does, ties allowed: no
    configuration ranked lower by the paper is ahead of one it ranks higher by more than a tie."""
    order = [c for c in PAPER_RANKING if c in mean]
    return all(mean[a] >= mean[b] or tied(mean[a], mean[b]) for i, a in enumerate(order) for b in order[i + 1 :])


def find_scenarios_dir(scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    return _find_scenarios_dir(scenarios_dir, "yip-kwok", "nap-fifo.toml")


def scenario_file(configuration: str, *, scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    if configuration not in CONFIGURATIONS:
        raise ValueError(f"configuration {configuration!r}: expected one of {', '.join(CONFIGURATIONS)}")
    return find_scenarios_dir(scenarios_dir) / "yip-kwok" / f"nap-{configuration}.toml"


def run_testbed(
    *,
    duration: str | None = None,
    seed: int = 1,
    configurations: tuple[str, ...] = CONFIGURATIONS,
    progress: Callable[[float], None] | None = None,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Run the NAP under each configuration (``duration`` overrides the files' 800 s, the 5 s
    warm-up included) and summarise the bytes per second out of wlan0, bnep0 and imq0."""
    import pandas as pd

    frames = []
    results: dict[str, Result] = {}
    scenarios: dict[str, str] = {}
    warnings: list[str] = []
    for k, configuration in enumerate(configurations):
        path = scenario_file(configuration, scenarios_dir=scenarios_dir)
        overrides = {"run.duration": duration} if duration is not None else {}
        overrides.update(short_run_warmup(duration, WARMUP_S))
        sub = None
        if progress is not None:
            n = len(configurations)

            def sub(fraction: float, k: int = k, n: int = n) -> None:
                progress((k + fraction) / n)

        result = run(path, seed=seed, overrides=overrides, progress=sub)
        results[configuration] = result
        scenarios[configuration] = _display_path(path)
        warnings += [f"{configuration}: {w}" for w in result.warnings]
        frames.append(_series_of(result, configuration))
    series = pd.concat(frames, ignore_index=True)
    return Reproduction(series, summarise(series), results, scenarios, seed, warnings)


def _series_of(result: Result, configuration: str) -> pd.DataFrame:
    """The NAP's three interfaces as (configuration, series, time_s, kBps) rows."""
    frame = result.interfaces
    rows = frame[(frame["node"] == "ap") & frame["dev"].isin(list(SERIES))].copy()
    rows["series"] = rows["dev"].map(SERIES)
    rows["kBps"] = rows["bytes_per_second"] / KB
    rows["configuration"] = configuration
    return rows[["configuration", "series", "time_s", "kBps"]].reset_index(drop=True)


def summarise(series: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration and series: mean, standard deviation, peak, range of major
    fluctuation (:data:`PEAK_QUANTILE`, :data:`RANGE_QUANTILES`) and the trend (least-squares
    slope, KB/s per 100 s)."""
    import numpy as np
    import pandas as pd

    rows = []
    for (configuration, name), group in series.groupby(["configuration", "series"], sort=False):
        v = group["kBps"].to_numpy(dtype=float)
        t = group["time_s"].to_numpy(dtype=float)
        slope = float(np.polyfit(t, v, 1)[0]) * 100.0 if len(v) >= 2 and np.ptp(t) > 0 else float("nan")
        rows.append(
            {
                "configuration": configuration,
                "series": name,
                "mean_kBps": float(v.mean()),
                "std_kBps": float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
                "peak_kBps": float(np.quantile(v, PEAK_QUANTILE)),
                "range_low_kBps": float(np.quantile(v, RANGE_QUANTILES[0])),
                "range_high_kBps": float(np.quantile(v, RANGE_QUANTILES[1])),
                "trend_kBps_per_100s": slope,
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


class Observation(NamedTuple):
    """One of the paper's statements, checked: its text, whether it holds here, and the numbers."""

    claim: str
    holds: bool
    measured: str


def _cell(summary: pd.DataFrame, configuration: str, name: str, column: str) -> float:
    rows = summary[(summary["configuration"] == configuration) & (summary["series"] == name)]
    return float(rows[column].iloc[0]) if len(rows) else float("nan")


def observations(rep: Reproduction | pd.DataFrame) -> list[Observation]:
    """The paper's statements (Sections IV and V) against the runs. ``rep`` is a Reproduction or
    its summary table; statements about configurations not run are left out."""
    summary = rep.summary if isinstance(rep, Reproduction) else rep
    ran = [c for c in CONFIGURATIONS if c in set(summary["configuration"])]
    out: list[Observation] = []
    for c in ("htb-sfq", "prio-tbf"):
        if c in ran:
            low = _cell(summary, c, "wlan", "range_low_kBps")
            out.append(
                Observation(
                    f"{CONFIGURATION_LABELS[c]} keeps the WLAN above {WLAN_FLOOR_KBPS:.0f} KB/s",
                    low >= WLAN_FLOOR_KBPS,
                    f"WLAN {RANGE_QUANTILES[0]:.0%} quantile {low:.0f} KB/s",
                )
            )
    if ran:
        bt = {c: _cell(summary, c, "bt", "mean_kBps") for c in ran}
        out.append(
            Observation(
                "Bluetooth is suppressed under interference (below what DH5 carries alone) in every configuration",
                all(v < 0.9 * BT_ALONE_KBPS for v in bt.values()),
                ", ".join(f"{CONFIGURATION_LABELS[c]} {v:.1f}" for c, v in bt.items())
                + f" KB/s (alone: {BT_ALONE_KBPS:.1f})",
            )
        )
    if len(ran) == len(CONFIGURATIONS):
        # The range of major fluctuation relative to its top: on the paper's own numbers PRIO+TBF
        # (400-660: 0.39) is the steadiest, ahead of HTB+SFQ (350-600: 0.42).
        width = {}
        for c in ran:
            high = _cell(summary, c, "aggregate", "range_high_kBps")
            width[c] = (high - _cell(summary, c, "aggregate", "range_low_kBps")) / max(high, 1e-9)
        steadiest = min(width, key=width.__getitem__)
        out.append(
            Observation(
                "PRIO+TBF is the steadiest (narrowest range of major fluctuation of the aggregate, relative to its top)",
                steadiest == "prio-tbf",
                ", ".join(f"{CONFIGURATION_LABELS[c]} {w:.2f}" for c, w in width.items()),
            )
        )
        mean = {c: _cell(summary, c, "aggregate", "mean_kBps") for c in ran}
        out.append(
            Observation(
                "ranking PRIO+TBF > HTB+SFQ > SFQ > FIFO (mean aggregate; within 1 % is a tie)",
                ranking_agrees(mean),
                ranking_text(mean) + " KB/s",
            )
        )
        out.append(
            Observation(
                "SFQ performs much like FIFO (mean aggregate within 10 %)",
                abs(mean["sfq"] - mean["fifo"]) <= 0.1 * max(mean["fifo"], 1e-9),
                f"SFQ {mean['sfq']:.0f}, FIFO {mean['fifo']:.0f} KB/s",
            )
        )
    return out


def format_tables(rep: Reproduction) -> list[Table]:
    """The summary as the paper reads its figures (aggregate beside the paper's text, WLAN and
    Bluetooth), then the ranking and the observations."""
    from rich.table import Table

    agg = Table(title="Yip & Kwok: aggregate (imq0) bytes out of the NAP, KB/s (1-s samples)")
    for col in ("configuration", "mean", "std", "peak", "major range", "trend /100 s", "paper"):
        agg.add_column(col, justify="left" if col in ("configuration", "paper") else "right")
    per = Table(title="Yip & Kwok: WLAN (wlan0) and Bluetooth (bnep0), KB/s")
    for col in ("configuration", "WLAN mean", "WLAN range", "BT mean", "BT range"):
        per.add_column(col, justify="left" if col == "configuration" else "right")
    s = rep.summary
    for c in [c for c in CONFIGURATIONS if c in set(s["configuration"])]:

        def g(name: str, column: str, c: str = c) -> float:
            return _cell(s, c, name, column)

        agg.add_row(
            CONFIGURATION_LABELS[c],
            f"{g('aggregate', 'mean_kBps'):.0f}",
            f"{g('aggregate', 'std_kBps'):.0f}",
            f"{g('aggregate', 'peak_kBps'):.0f}",
            f"{g('aggregate', 'range_low_kBps'):.0f}-{g('aggregate', 'range_high_kBps'):.0f}",
            f"{g('aggregate', 'trend_kBps_per_100s'):+.1f}",
            PAPER[c].text,
        )
        per.add_row(
            CONFIGURATION_LABELS[c],
            f"{g('wlan', 'mean_kBps'):.0f}",
            f"{g('wlan', 'range_low_kBps'):.0f}-{g('wlan', 'range_high_kBps'):.0f}",
            f"{g('bt', 'mean_kBps'):.1f}",
            f"{g('bt', 'range_low_kBps'):.1f}-{g('bt', 'range_high_kBps'):.1f}",
        )
    checks = Table(title="The paper's observations")
    for col in ("statement", "holds", "measured"):
        checks.add_column(col)
    for o in observations(rep):
        claim = o.claim
        if claim.startswith("ranking"):
            claim = "ranking (paper: " + " > ".join(CONFIGURATION_LABELS[c] for c in PAPER_RANKING) + "), ties within 1 %"
        checks.add_row(claim, "yes" if o.holds else "no", o.measured)
    return [agg, per, checks]


def write(rep: Reproduction, out_dir: str | os.PathLike[str], *, runs: bool = True) -> list[Path]:
    """Write ``yip-kwok.csv`` (the summary), ``yip-kwok-series.csv`` (every 1-s sample) and, with
    ``runs``, each run's tables into ``runs/<configuration>/``; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = out / "yip-kwok.csv"
    rep.summary.to_csv(summary, index=False, float_format=CSV_FLOAT_FORMAT)
    series = out / "yip-kwok-series.csv"
    rep.series.to_csv(series, index=False, float_format=CSV_FLOAT_FORMAT)
    paths = [summary, series]
    if runs:
        for configuration, result in rep.results.items():
            paths.append(result.write(out / "runs" / configuration))
    return paths


def plot(rep: Reproduction, path: str | os.PathLike[str]) -> Path:
    """Figures 4-10 in one: for each configuration, the WLAN, Bluetooth and aggregate bytes per
    second over time (KB/s), with the paper's range of major fluctuation shaded."""
    from .. import plots

    plots.figure_format(path)
    configurations = [c for c in CONFIGURATIONS if c in set(rep.series["configuration"])]
    fig = plots.new_figure(11.0, 2.4 * len(configurations) + 0.8)
    axes = fig.subplots(len(configurations), 1, sharex=True, squeeze=False)[:, 0]
    styles = {"aggregate": ("black", 1.4), "wlan": ("tab:blue", 1.0), "bt": ("tab:orange", 1.0)}
    labels = {"aggregate": "aggregate (imq0)", "wlan": "WLAN (wlan0)", "bt": "Bluetooth (bnep0)"}
    for ax, c in zip(axes, configurations, strict=True):
        rows = rep.series[rep.series["configuration"] == c]
        for name in ("aggregate", "wlan", "bt"):
            d = rows[rows["series"] == name].sort_values("time_s")
            color, width = styles[name]
            ax.plot(d["time_s"], d["kBps"], color=color, linewidth=width, label=labels[name])
        paper = PAPER[c]
        if paper.low is not None and paper.high is not None:
            ax.axhspan(paper.low, paper.high, color="tab:green", alpha=0.12, label="paper: major range")
        ax.set_ylabel("KB/s")
        ax.set_title(CONFIGURATION_LABELS[c], fontsize="medium", loc="left")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time, s")
    plots.figure_legend(fig, loc="outside lower center", ncols=4)
    fig.suptitle(plots.with_run("Yip & Kwok NAP: bytes out of each interface", "scenarios/yip-kwok/nap-*.toml", rep.seed))
    return plots.save(fig, path)
