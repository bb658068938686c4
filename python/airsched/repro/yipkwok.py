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
from ._compare import greater, tied
from ._scenarios import display_path as _display_path
from ._scenarios import find_scenarios_dir as _find_scenarios_dir
from ._scenarios import short_run_warmup

if TYPE_CHECKING:
    import numpy as np
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
    """Whether the means order the configurations as the paper does: each configuration the
    paper ranks higher is ahead of each it ranks lower by more than a tie (a tie is not an
    ordering)."""
    order = [c for c in PAPER_RANKING if c in mean]
    return all(greater(mean[a], mean[b]) for i, a in enumerate(order) for b in order[i + 1 :])


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


#: The paper's "trend of the peak bandwidth" is read off its figures: here the peak
#: (:data:`PEAK_QUANTILE`) of each window of this many seconds, a window counted when it holds
#: at least half of that.
PEAK_WINDOW_S = 100.0
#: The cycles the paper sees "among all the results" in the WLAN (Section IV): every 5 s, and
#: "around 90 to 100 sec"; the lags (seconds of 1-s samples) searched for each.
CYCLES: dict[str, tuple[int, int]] = {"5 s": (4, 6), "90-100 s": (90, 100)}
#: A series has a clear cycle at a lag when its autocorrelation there exceeds this many times
#: 1/sqrt(n), the standard error of white noise's autocorrelation over n samples (3: a
#: one-sided false alarm rate of 0.13 % per lag).
CYCLE_SIGMAS = 3.0
#: Section IV: "the fluctuation could be as wide as from 100 KBytes/sec to 700 Kbytes/sec in
#: extreme cases": the lowest and highest 1-s sample of the aggregate over the four runs.
PAPER_EXTREMES: tuple[float, float] = (100.0, 700.0)


def _values(series: pd.DataFrame, configuration: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(time_s, kBps) of one configuration's series, in time order."""
    import numpy as np

    rows = series[(series["configuration"] == configuration) & (series["series"] == name)].sort_values("time_s")
    return rows["time_s"].to_numpy(dtype=float), np.asarray(rows["kBps"].to_numpy(dtype=float))


def window_peaks(t: np.ndarray, v: np.ndarray, window_s: float = PEAK_WINDOW_S) -> tuple[np.ndarray, np.ndarray]:
    """The peak (:data:`PEAK_QUANTILE`) of each consecutive ``window_s`` of samples that holds at
    least half a window: (window middles, peaks)."""
    import numpy as np

    if len(t) == 0:
        return np.zeros(0), np.zeros(0)
    k = np.floor((t - t[0]) / window_s).astype(int)
    mids, peaks = [], []
    for w in range(int(k.max()) + 1):
        sel = k == w
        if sel.sum() >= max(2, 0.5 * window_s):  # 1-s samples
            mids.append(float(t[sel].mean()))
            peaks.append(float(np.quantile(v[sel], PEAK_QUANTILE)))
    return np.asarray(mids), np.asarray(peaks)


def run_change(t: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """The least-squares line's change from the first to the last time (KB/s) and that
    change's standard error; NaN if fewer than three points."""
    import numpy as np

    if len(v) < 3 or np.ptp(t) <= 0:
        return float("nan"), float("nan")
    coef, cov = np.polyfit(t, v, 1, cov="unscaled")
    resid = v - np.polyval(coef, t)
    var = float((resid * resid).sum()) / (len(v) - 2)
    span = float(t[-1] - t[0])
    return float(coef[0] * span), float(np.sqrt(max(cov[0, 0] * var, 0.0)) * span)


def autocorrelation(v: np.ndarray, lag: int) -> float:
    """The sample autocorrelation of ``v`` (its linear trend removed) at ``lag`` samples."""
    import numpy as np

    if len(v) <= lag + 1:
        return float("nan")
    x = np.arange(len(v), dtype=float)
    d = v - np.polyval(np.polyfit(x, v, 1), x)
    den = float((d * d).sum())
    return float((d[:-lag] * d[lag:]).sum() / den) if den > 0 else 0.0


def cycle_strength(v: np.ndarray, lags: tuple[int, int]) -> tuple[float, float, float]:
    """A cycle whose period lies in ``lags`` (inclusive, samples): the largest autocorrelation
    there, the smallest at half those lags (where a cycle has its trough) and the threshold
    (:data:`CYCLE_SIGMAS` / sqrt(n)). :func:`clear_cycle` reads them."""
    import math

    peak = max((autocorrelation(v, lag) for lag in range(lags[0], lags[1] + 1)), default=float("nan"))
    half = range(max(1, math.ceil(lags[0] / 2)), max(1, lags[1] // 2) + 1)
    trough = min((autocorrelation(v, lag) for lag in half), default=float("nan"))
    return peak, trough, CYCLE_SIGMAS / math.sqrt(max(len(v), 1))


def clear_cycle(peak: float, trough: float, threshold: float) -> bool:
    """A clear cycle: the autocorrelation at the period above the threshold and above the one
    at half the period by the threshold too (a slowly wandering series, e.g. a shaped one, is
    correlated at every lag but has no trough at the half period)."""
    return bool(peak > threshold and peak - trough > threshold)


def _falling(change: tuple[float, float], level: float) -> bool:
    """A change over the run (and its standard error) is a fall when it is below minus a tie of
    ``level`` and below minus twice its standard error."""
    c, se = change
    return greater(level, level + c) and c < -2.0 * se


def _rising(change: tuple[float, float], level: float) -> bool:
    c, se = change
    return greater(level + c, level) and c > 2.0 * se


def _change_text(change: tuple[float, float]) -> str:
    return f"{change[0]:+.1f} ± {change[1]:.1f} KB/s over the run"


def observations(rep: Reproduction | pd.DataFrame, series: pd.DataFrame | None = None) -> list[Observation]:
    """Every statement of the paper's results (Sections IV and V; docs/repro-yip-kwok.md lists
    them with the paper's words) against the runs. ``rep`` is a Reproduction or its summary
    table (then ``series``, the 1-s samples, for the statements about time: trends, cycles,
    extremes; without it those are left out). Statements about configurations not run are left
    out. A difference within a tie (:func:`airsched.repro._compare.tied`) is never an ordering,
    a rise or a fall."""
    if isinstance(rep, Reproduction):
        summary, series = rep.summary, rep.series
    else:
        summary = rep
    ran = [c for c in CONFIGURATIONS if c in set(summary["configuration"])]
    L = CONFIGURATION_LABELS
    out: list[Observation] = []
    every = len(ran) == len(CONFIGURATIONS)

    # Section IV, before A: the cycles and the extremes.
    if series is not None and ran:
        for what, lags in CYCLES.items():
            found = {c: cycle_strength(_values(series, c, "wlan")[1], lags) for c in ran}
            th = next(iter(found.values()))[2]
            out.append(
                Observation(
                    f"the WLAN fluctuates with a cycle of {what} in every configuration (autocorrelation at lags {lags[0]}-{lags[1]} s above {CYCLE_SIGMAS:.0f}/sqrt(n), and above the half period's by as much)",
                    all(clear_cycle(*f) for f in found.values()),
                    ", ".join(f"{L[c]} {a:+.2f} (half {h:+.2f})" for c, (a, h, _) in found.items()) + f"; threshold {th:.2f}",
                )
            )
        bt = {(c, what): cycle_strength(_values(series, c, "bt")[1], lags) for c in ran for what, lags in CYCLES.items()}
        out.append(
            Observation(
                "Bluetooth fluctuates with no clear cycle (none at the WLAN's cycles)",
                not any(clear_cycle(*f) for f in bt.values()),
                ", ".join(f"{L[c]} {what} {a:+.2f} (half {h:+.2f})" for (c, what), (a, h, _) in bt.items()),
            )
        )
    # A. FIFO.
    if series is not None and "fifo" in ran:
        tw, pw = window_peaks(*_values(series, "fifo", "aggregate"))
        change = run_change(tw, pw)
        out.append(
            Observation(
                f"FIFO: the peak of the aggregate trends gradually downward (per-{PEAK_WINDOW_S:.0f}-s peaks' line falls by more than a tie and twice its standard error)",
                _falling(change, float(pw.mean()) if len(pw) else float("nan")),
                f"{_change_text(change)} (peaks {pw.min():.0f}-{pw.max():.0f})" if len(pw) else "no window",
            )
        )
        t, v = _values(series, "fifo", "wlan")
        change = run_change(t, v)
        out.append(
            Observation(
                "FIFO: the WLAN deteriorates gradually (its line falls by more than a tie and twice its standard error)",
                _falling(change, float(v.mean())),
                f"{_change_text(change)} (mean {v.mean():.0f})",
            )
        )
    # B. HTB+SFQ.
    if series is not None and "htb-sfq" in ran:
        tw, pw = window_peaks(*_values(series, "htb-sfq", "aggregate"))
        import numpy as np

        before = float(np.median(pw[:-1])) if len(pw) > 1 else float("nan")
        last = float(pw[-1]) if len(pw) else float("nan")
        out.append(
            Observation(
                f"HTB+SFQ: the peak rises above its steady level toward the end (last {PEAK_WINDOW_S:.0f}-s peak above the median of the earlier ones)",
                greater(last, before),
                f"last {last:.0f}, earlier median {before:.0f} KB/s",
            )
        )
    for c in ("htb-sfq", "prio-tbf"):
        if c in ran:
            low = _cell(summary, c, "wlan", "range_low_kBps")
            out.append(
                Observation(
                    f"{L[c]} keeps the WLAN above {WLAN_FLOOR_KBPS:.0f} KB/s",
                    low >= WLAN_FLOOR_KBPS,
                    f"WLAN {RANGE_QUANTILES[0]:.0%} quantile {low:.0f} KB/s",
                )
            )
    if ran:
        bt_mean = {c: _cell(summary, c, "bt", "mean_kBps") for c in ran}
        out.append(
            Observation(
                "Bluetooth is suppressed under interference (below what DH5 carries alone) in every configuration",
                all(v < 0.9 * BT_ALONE_KBPS for v in bt_mean.values()),
                ", ".join(f"{L[c]} {v:.1f}" for c, v in bt_mean.items()) + f" KB/s (alone: {BT_ALONE_KBPS:.1f})",
            )
        )
    # C. PRIO+TBF.
    width: dict[str, float] = {}
    for c in ran:
        high = _cell(summary, c, "aggregate", "range_high_kBps")
        width[c] = (high - _cell(summary, c, "aggregate", "range_low_kBps")) / max(high, 1e-9)
    if every:
        # The range of major fluctuation relative to its top: on the paper's own numbers PRIO+TBF
        # (400-660: 0.39) is the steadiest, ahead of HTB+SFQ (350-600: 0.42).
        out.append(
            Observation(
                "PRIO+TBF is the steadiest (narrowest range of major fluctuation of the aggregate, relative to its top, by more than a tie)",
                all(greater(width[c], width["prio-tbf"]) for c in ran if c != "prio-tbf"),
                ", ".join(f"{L[c]} {w:.2f}" for c, w in width.items()),
            )
        )
    if series is not None and every:
        spread = {}
        for c in ran:
            _, pw = window_peaks(*_values(series, c, "aggregate"))
            spread[c] = float((pw.max() - pw.min()) / pw.mean()) if len(pw) else float("nan")
        out.append(
            Observation(
                f"PRIO+TBF has the most steady peak (smallest spread of its per-{PEAK_WINDOW_S:.0f}-s peaks, relative to their mean, by more than a tie)",
                all(greater(spread[c], spread["prio-tbf"]) for c in ran if c != "prio-tbf"),
                ", ".join(f"{L[c]} {w:.3f}" for c, w in spread.items()),
            )
        )
        bt_change = {}
        for c in ran:
            t, v = _values(series, c, "bt")
            bt_change[c] = (run_change(t, v), float(v.mean()))
        out.append(
            Observation(
                "PRIO+TBF: Bluetooth rises over the run (its line rises by more than a tie and twice its standard error)",
                _rising(*bt_change["prio-tbf"]),
                f"{_change_text(bt_change['prio-tbf'][0])} (mean {bt_change['prio-tbf'][1]:.1f})",
            )
        )
        t, v = _values(series, "prio-tbf", "wlan")
        change = run_change(t, v)
        out.append(
            Observation(
                "PRIO+TBF: the WLAN does not deteriorate while Bluetooth rises (its line does not fall, as above)",
                not _falling(change, float(v.mean())),
                f"{_change_text(change)} (mean {v.mean():.0f})",
            )
        )
        others = [c for c in ran if c != "prio-tbf"]
        out.append(
            Observation(
                "no configuration but PRIO+TBF has Bluetooth rising",
                not any(_rising(*bt_change[c]) for c in others),
                ", ".join(f"{L[c]} {bt_change[c][0][0]:+.2f} ± {bt_change[c][0][1]:.2f}" for c in others) + " KB/s over the run",
            )
        )
    # D. SFQ.
    if every:
        mean = {c: _cell(summary, c, "aggregate", "mean_kBps") for c in ran}
        out.append(
            Observation(
                "SFQ performs much like FIFO (mean aggregate within 10 %)",
                abs(mean["sfq"] - mean["fifo"]) <= 0.1 * max(mean["fifo"], 1e-9),
                f"SFQ {mean['sfq']:.0f}, FIFO {mean['fifo']:.0f} KB/s",
            )
        )
        peak = {c: _cell(summary, c, "aggregate", "peak_kBps") for c in ran}
        out.append(
            Observation(
                "SFQ's peak is lower than FIFO's (by more than a tie)",
                greater(peak["fifo"], peak["sfq"]),
                f"SFQ {peak['sfq']:.0f}, FIFO {peak['fifo']:.0f} KB/s",
            )
        )
        out.append(
            Observation(
                "SFQ is steadier than FIFO (narrower range of major fluctuation relative to its top, by more than a tie)",
                greater(width["fifo"], width["sfq"]),
                f"SFQ {width['sfq']:.3f}, FIFO {width['fifo']:.3f}",
            )
        )
    if series is not None and "sfq" in ran:
        tw, pw = window_peaks(*_values(series, "sfq", "aggregate"))
        change = run_change(tw, pw)
        level = float(pw.mean()) if len(pw) else float("nan")
        out.append(
            Observation(
                "SFQ: no clear downward or upward trend of the peak (its per-100-s peaks' line neither falls nor rises, as above)",
                bool(len(pw)) and not _falling(change, level) and not _rising(change, level),
                f"{_change_text(change)} (peaks {pw.min():.0f}-{pw.max():.0f})" if len(pw) else "no window",
            )
        )
    # V. The ranking.
    if every:
        out.append(
            Observation(
                "ranking PRIO+TBF > HTB+SFQ > SFQ > FIFO (mean aggregate; a difference within 1 % is a tie, not an ordering)",
                ranking_agrees(mean),
                ranking_text(mean) + " KB/s",
            )
        )
        out.append(
            Observation(
                "a hierarchical approach is more efficient (HTB+SFQ and PRIO+TBF each above SFQ and FIFO by more than a tie)",
                all(greater(mean[h], mean[f]) for h in ("htb-sfq", "prio-tbf") for f in ("sfq", "fifo")),
                ", ".join(f"{L[c]} {mean[c]:.0f}" for c in ran) + " KB/s",
            )
        )
    return out


def paper_cells(rep: Reproduction | pd.DataFrame, series: pd.DataFrame | None = None) -> list[tuple[str, float, float]]:
    """The numbers the paper states, as (name, simulated, paper): each configuration's peak and
    range of major fluctuation of the aggregate (:data:`PAPER`) and, with the samples, the
    extremes over the four runs (:data:`PAPER_EXTREMES`)."""
    if isinstance(rep, Reproduction):
        summary, series = rep.summary, rep.series
    else:
        summary = rep
    agg = summary[summary["series"] == "aggregate"].set_index("configuration")
    cells = []
    for configuration, p in PAPER.items():
        if configuration not in agg.index:
            continue
        for what, column, ref in (("peak", "peak_kBps", p.peak), ("range low", "range_low_kBps", p.low), ("range high", "range_high_kBps", p.high)):
            if ref is not None:
                cells.append((f"{configuration} aggregate {what}", float(agg.loc[configuration, column]), ref))
    if series is not None and set(CONFIGURATIONS) <= set(agg.index):
        v = series[series["series"] == "aggregate"]["kBps"]
        cells.append(("extreme low of the aggregate (all configurations)", float(v.min()), PAPER_EXTREMES[0]))
        cells.append(("extreme high of the aggregate (all configurations)", float(v.max()), PAPER_EXTREMES[1]))
    return cells


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
            claim = "ranking (paper: " + " > ".join(CONFIGURATION_LABELS[c] for c in PAPER_RANKING) + "), a difference within 1 % is a tie, not an ordering"
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
