# SPDX-License-Identifier: Apache-2.0
"""Garroppo et al., "The Wireless Hierarchical Token Bucket": Tables 1 and 2, Figures 6 to 9.

The paper's testbed: an AP sends two 6.144 Mbit/s CBR UDP flows, one to MS1 (always in the
"good" position) and one to MS2, which is placed in five positions from "good" to
"out-of-range"; the AP's scheduler (CBQ, HTB, DRR or WHTB) reserves 4:1 (Table 1) or 1:1
(Table 2) of the cell's ~5 Mbit/s to the two stations. The scenario files are
``scenarios/garroppo/share-1-4-{cbq,htb,drr,whtb,whtb-gate}.toml`` and ``share-1-1-*.toml``
(``whtb-gate``: WHTB with the gate the paper proposes in its section 6.3, a column the paper
does not have);
:func:`run_table` runs each of them with MS2 moved to each position (the override
``station[ms2].position``) and sets the simulated goodput beside the paper's.
``walk-{drr,whtb,whtb-gate}.toml`` walk MS2 from good to out-of-range and back (Figures 8 and 9,
:func:`run_walk`, :func:`plot_walk`). :func:`check_claims` states the qualitative claims of the
paper's section 6 as checks on :func:`run_table`'s rows (and on the paper's own tables).

    >>> from airsched.repro import garroppo
    >>> df = garroppo.run_table("1:4", duration="20s")
    >>> rich.print(garroppo.format_table(df))
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..runner import run
from ._scenarios import SCENARIOS_ENV as _SCENARIOS_ENV
from ._scenarios import display_path as _display_path
from ._scenarios import find_scenarios_dir as _find_scenarios_dir

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

    from ..result import Result

#: The bandwidth shares MS2:MS1 of the paper's two tables, and the file-name form of each.
SHARES: dict[str, str] = {"1:4": "1-4", "1:1": "1-1"}
#: The schedulers of the paper's tables, in its column order.
PAPER_SCHEDULERS: tuple[str, ...] = ("cbq", "htb", "drr", "whtb")
#: The schedulers of the reproduction: the paper's, then WHTB with the section 6.3 gate
#: (``whtb gate 10% gate_skip 8``), which the paper proposed but did not measure.
SCHEDULERS: tuple[str, ...] = (*PAPER_SCHEDULERS, "whtb-gate")
SCHEDULER_LABELS: dict[str, str] = {"cbq": "CBQ", "htb": "HTB", "drr": "DRR", "whtb": "WHTB", "whtb-gate": "WHTB+gate"}
#: The paper column each scheduler is compared with: the paper measured no gate, so WHTB+gate
#: stands beside the paper's WHTB (the numbers the gate was proposed to improve).
PAPER_COLUMN: dict[str, str] = {**{s: s for s in PAPER_SCHEDULERS}, "whtb-gate": "whtb"}
#: The schedulers whose radio resource occupancy the paper plots (Figures 6 and 7), and the gate.
OCCUPANCY_SCHEDULERS: tuple[str, ...] = ("drr", "whtb", "whtb-gate")
#: MS2's positions (scenario spelling), from the best channel to none, as in the paper's rows.
POSITIONS: tuple[str, ...] = ("good", "medium", "bad", "very-bad", "out-of-range")
POSITION_LABELS: dict[str, str] = {
    "good": "Good",
    "medium": "Medium",
    "bad": "Bad",
    "very-bad": "Very Bad",
    "out-of-range": "Out-of-Range",
}
#: The stations as the scenarios name them; MS2 is the one that moves.
STATIONS: tuple[str, ...] = ("ms1", "ms2")
MOVING_STATION = "ms2"
#: The schedulers of the walking scenario (Figures 8 and 9).
WALK_SCHEDULERS: tuple[str, ...] = ("drr", "whtb", "whtb-gate")

#: Environment variable naming the scenarios/ directory when the package cannot find it.
SCENARIOS_ENV = _SCENARIOS_ENV

# The paper's Tables 1 and 2: mean received goodput in kbit/s, per MS2 position, then
# (MS1 row, MS2 row), each with the columns CBQ, HTB, DRR, WHTB.
_PAPER: dict[str, dict[str, tuple[tuple[int, int, int, int], tuple[int, int, int, int]]]] = {
    "1:4": {
        "good": ((4037, 4061, 4054, 3937), (1017, 1011, 1025, 991)),
        "medium": ((3404, 3966, 3276, 3344), (859, 609, 828, 788)),
        "bad": ((2621, 3544, 2161, 3960), (662, 503, 546, 469)),
        "very-bad": ((1996, 2105, 1449, 3401), (497, 255, 342, 160)),
        "out-of-range": ((692, 1205, 680, 3226), (0, 0, 0, 0)),
    },
    "1:1": {
        "good": ((2545, 2534, 2546, 2511), (2545, 2512, 2543, 2514)),
        "medium": ((2000, 1925, 2038, 2061), (2000, 1855, 2037, 2028)),
        "bad": ((1462, 1492, 1471, 2107), (1460, 1153, 1469, 956)),
        "very-bad": ((714, 778, 573, 1825), (676, 369, 562, 313)),
        "out-of-range": ((198, 199, 201, 1878), (0, 0, 0, 0)),
    },
}

#: Height in inches of :func:`plot_goodput`'s figure (three rows of panels).
GOODPUT_FIG_HEIGHT = 8.0

#: How the CSV writes floats: 10 significant digits, so that binary noise
#: (``958.4639999999999``) does not reach the file.
CSV_FLOAT_FORMAT = "%.10g"

#: The columns of :func:`run_table`'s DataFrame, in order.
TABLE_COLUMNS: tuple[str, ...] = (
    "share",
    "position",
    "scheduler",
    "station",
    "goodput_kbps",
    "paper_kbps",
    "occupancy",
    "mean_rate_down_mbps",
    "retries",
    "drops_retry",
    "snr_mean_db",
)


def paper_kbps(share: str, position: str, station: str, scheduler: str) -> int:
    """One cell of the paper's Table 1 (share "1:4") or Table 2 ("1:1"), in kbit/s. For
    ``whtb-gate``, which the paper did not measure, its WHTB cell (see :data:`PAPER_COLUMN`)."""
    _check_choice("share", share, SHARES)
    _check_choice("position", position, POSITIONS)
    _check_choice("station", station, STATIONS)
    _check_choice("scheduler", scheduler, SCHEDULERS)
    column = PAPER_SCHEDULERS.index(PAPER_COLUMN[scheduler])
    return _PAPER[share][position][STATIONS.index(station)][column]


def paper_table(share: str | None = None) -> pd.DataFrame:
    """The paper's Table 1 and 2 (or one of them) as a tidy DataFrame: share, position,
    scheduler, station, paper_kbps; 40 rows per table (the paper's four schedulers only)."""
    import pandas as pd

    shares = list(SHARES) if share is None else [_check_choice("share", share, SHARES)]
    rows = [
        {
            "share": sh,
            "position": pos,
            "scheduler": sched,
            "station": st,
            "paper_kbps": paper_kbps(sh, pos, st, sched),
        }
        for sh in shares
        for pos in POSITIONS
        for st in STATIONS
        for sched in PAPER_SCHEDULERS
    ]
    return pd.DataFrame(rows)


# ----- scenario files ------------------------------------------------------------------------


def find_scenarios_dir(scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    """The repository's ``scenarios/`` directory (the one holding ``garroppo/``).

    Looked for, in order: ``scenarios_dir`` if given, the environment variable
    ``AIRSCHED_SCENARIOS``, then the directories above this package (an editable install or a
    source checkout) and the current directory. Either ``scenarios/`` or ``scenarios/garroppo``
    itself may be given. Raises :class:`ScenarioError` saying what to pass when none is found.
    """
    return _find_scenarios_dir(scenarios_dir, "garroppo", "share-1-4-drr.toml")


def scenario_file(share: str, scheduler: str, scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    """The scenario file of one scheduler at one share, e.g. ``scenarios/garroppo/share-1-4-whtb.toml``."""
    _check_choice("share", share, SHARES)
    _check_choice("scheduler", scheduler, SCHEDULERS)
    return find_scenarios_dir(scenarios_dir) / "garroppo" / f"share-{SHARES[share]}-{scheduler}.toml"


def walk_file(scheduler: str, scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    """The walking scenario of Figures 8 (``drr``) and 9 (``whtb``; ``whtb-gate`` with the gate)."""
    _check_choice("scheduler", scheduler, WALK_SCHEDULERS)
    return find_scenarios_dir(scenarios_dir) / "garroppo" / f"walk-{scheduler}.toml"


def position_override(position: str, station: str = MOVING_STATION) -> dict[str, str]:
    """The override that puts ``station`` at ``position`` (one of :data:`POSITIONS`)."""
    _check_choice("position", position, POSITIONS)
    return {f"station[{station}].position": position}


# ----- the tables ------------------------------------------------------------------------------


def run_table(
    share: str = "1:4",
    duration: str | None = None,
    seed: int | None = 1,
    progress: Callable[[float], None] | None = None,
    *,
    positions: Iterable[str] = POSITIONS,
    schedulers: Iterable[str] = SCHEDULERS,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Reproduce Table 1 (``share="1:4"``) or Table 2 (``"1:1"``): run every scheduler's
    scenario with MS2 at every position and return one row per (position, scheduler, station).

    Columns (see :data:`TABLE_COLUMNS`): ``goodput_kbps`` is the station's received downlink
    goodput in kbit/s and ``paper_kbps`` the paper's figure for the same cell; ``occupancy`` is
    the station's share of the airtime spent on the stations' frames, retries and ACKs included
    (the paper's "radio resources", Figs. 6 and 7);
    ``mean_rate_down_mbps`` the mean PHY rate of the AP's attempts to it; ``retries`` and
    ``drops_retry`` the AP's retransmissions to it and frames dropped at the retry limit;
    ``snr_mean_db`` its mean downlink SNR.

    ``duration`` (e.g. ``"20s"``) and ``seed`` override the scenarios' (``seed=None`` keeps
    theirs). ``progress`` is called with the finished fraction of the whole table. Warnings of
    the runs are in ``df.attrs["warnings"]``; the scenario files in ``df.attrs["scenarios"]``
    and the seed the runs used in ``df.attrs["seed"]`` (for the figures' titles).
    """
    import pandas as pd

    _check_choice("share", share, SHARES)
    positions = [_check_choice("position", p, POSITIONS) for p in positions]
    schedulers = [_check_choice("scheduler", s, SCHEDULERS) for s in schedulers]
    if not positions or not schedulers:
        raise ValueError("run_table needs at least one position and one scheduler")
    total = len(positions) * len(schedulers)
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    scenarios: list[str] = []
    seeds: set[int] = set()
    done = 0
    for scheduler in schedulers:
        path = scenario_file(share, scheduler, scenarios_dir)
        scenarios.append(_display_path(path))
        for position in positions:
            sub = None if progress is None else _sub_progress(progress, done, total)
            result = run(path, seed=seed, duration=duration, overrides=position_override(position), progress=sub)
            seeds.add(int(result.summary["seed"]))
            warnings.extend(w for w in result.warnings if w not in warnings)
            rows.extend(_rows(result, share, position, scheduler))
            done += 1
    df = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    # The paper's row order: position, then station, then its scheduler columns.
    rank = {**{p: i for i, p in enumerate(POSITIONS)}, **{s: i for i, s in enumerate(SCHEDULERS)}}
    df = df.sort_values(
        ["position", "station", "scheduler"],
        key=lambda col: col if col.name == "station" else col.map(rank),
        kind="stable",
    ).reset_index(drop=True)
    df.attrs["warnings"] = warnings
    df.attrs["scenarios"] = scenarios
    df.attrs["seed"] = seeds.pop() if len(seeds) == 1 else seed
    return df


def write_csv(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write :func:`run_table`'s rows as CSV (floats to 10 significant digits); return the path."""
    df.to_csv(path, index=False, float_format=CSV_FLOAT_FORMAT)
    return Path(path)


def table_run_label(df: pd.DataFrame) -> tuple[str | None, int | None]:
    """The scenario files (as one glob, e.g. ``scenarios/garroppo/share-1-4-*.toml``) and seed
    of :func:`run_table`'s rows, from ``df.attrs``; (None, None) where they are not known."""
    files = [Path(f) for f in df.attrs.get("scenarios", ())]
    seed = df.attrs.get("seed")
    if not files:
        return None, seed
    if len(files) == 1:
        return str(files[0]), seed
    stem = os.path.commonprefix([f.name for f in files])
    parent = files[0].parent
    if stem and all(f.parent == parent for f in files):
        return str(parent / f"{stem}*.toml"), seed
    return ", ".join(str(f) for f in files), seed


def _sub_progress(progress: Callable[[float], None], done: int, total: int) -> Callable[[float], None]:
    def report(fraction: float) -> None:
        progress((done + fraction) / total)

    return report


def _rows(result: Result, share: str, position: str, scheduler: str) -> list[dict[str, Any]]:
    stations = result.stations.set_index("name")
    missing = [s for s in STATIONS if s not in stations.index]
    if missing:
        raise ValueError(f"the scenario of {scheduler} at share {share} has no station {', '.join(missing)}")
    rows = []
    for station in STATIONS:
        st = stations.loc[station]
        rows.append(
            {
                "share": share,
                "position": position,
                "scheduler": scheduler,
                "station": station,
                "goodput_kbps": float(st["goodput_down_mbps"]) * 1000.0,
                "paper_kbps": paper_kbps(share, position, station, scheduler),
                "occupancy": float(st["occupancy"]),
                "mean_rate_down_mbps": float(st["mean_rate_down_mbps"]),
                "retries": int(st["retries"]),
                "drops_retry": int(st["drops_retry"]),
                "snr_mean_db": float(st["snr_mean_db"]),
            }
        )
    return rows


def format_table(df: pd.DataFrame) -> Table:
    """A rich Table shaped like the paper's Tables 1 and 2: a row per MS2 position and MS, a
    column per scheduler holding "simulated (paper)" goodput in kbit/s (WHTB+gate beside the
    paper's WHTB), and MS2's share of the radio resources under DRR, WHTB and WHTB+gate (the
    paper's Figs. 6 and 7) on MS2's rows.
    Cells the DataFrame does not hold show "–"."""
    from rich import box
    from rich.table import Table

    share = _single_share(df)
    cells = {(r.position, r.station, r.scheduler): r for r in df.itertuples(index=False)}
    positions = [p for p in POSITIONS if p in set(df["position"])]
    table = Table(
        title=f"Garroppo et al., share {share}: mean received goodput, kbit/s, simulated (paper)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    # 103 columns wide; on a narrower terminal the goodput cells fold at the space, keeping
    # the position and MS columns whole.
    table.add_column("MS2 position", no_wrap=True, min_width=12)
    table.add_column("MS", justify="right", no_wrap=True, min_width=2)
    for scheduler in SCHEDULERS:
        table.add_column(f"{SCHEDULER_LABELS[scheduler]}\nsim (paper)", justify="right")
    table.add_column("MS2 occ. DRR/\nWHTB/+gate", justify="right", no_wrap=True, min_width=10)
    for position in positions:
        for k, station in enumerate(STATIONS):
            row = [POSITION_LABELS[position] if k == 0 else "", station[-1]]
            for scheduler in SCHEDULERS:
                r = cells.get((position, station, scheduler))
                row.append("–" if r is None else f"{r.goodput_kbps:.0f} ({r.paper_kbps})")
            if station == MOVING_STATION:
                occ = [cells.get((position, station, s)) for s in OCCUPANCY_SCHEDULERS]
                row.append("/".join("–" if r is None else f"{100 * r.occupancy:.0f}" for r in occ) + "%")
            else:
                row.append("")
            table.add_row(*row, end_section=k == len(STATIONS) - 1)
    return table


def _single_share(df: pd.DataFrame) -> str:
    shares = sorted(set(df["share"]))
    if len(shares) != 1:
        raise ValueError(f"expected the rows of one share, got shares {shares}")
    return str(shares[0])


# ----- figures ---------------------------------------------------------------------------------


def plot_occupancy(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """The paper's Figures 6 (share 1:4) and 7 (1:1): per MS2 position, the radio resources
    (share of the stations' airtime) used for MS1 and for MS2, stacked, under DRR, WHTB and
    WHTB+gate side by side. Writes a PNG (or PDF, SVG: by the suffix) to ``path`` and returns it; the title
    names the scenarios and seed of :func:`run_table`'s rows."""
    from ..plots import COLORS, figure_legend, new_figure, save, with_run

    share = _single_share(df)
    schedulers = [s for s in OCCUPANCY_SCHEDULERS if s in set(df["scheduler"])]
    if not schedulers:
        raise ValueError("plot_occupancy needs rows of DRR, WHTB or WHTB+gate")
    fig = new_figure()
    axes = fig.subplots(1, len(schedulers), sharey=True, squeeze=False)[0]
    for ax, scheduler in zip(axes, schedulers):
        rows = df[df["scheduler"] == scheduler]
        positions = [p for p in POSITIONS if p in set(rows["position"])]
        x = list(range(len(positions)))
        bottom = [0.0] * len(positions)
        for station in STATIONS:
            occ = rows[rows["station"] == station].set_index("position")["occupancy"]
            heights = [100 * float(occ.get(p, float("nan"))) for p in positions]
            ax.bar(x, heights, bottom=bottom, color=COLORS[station], label=station.upper(), width=0.6)
            bottom = [b + (h if h == h else 0.0) for b, h in zip(bottom, heights)]
        ax.set_xticks(x, [POSITION_LABELS[p] for p in positions], rotation=20)
        ax.set_title(SCHEDULER_LABELS[scheduler])
        ax.set_ylim(0, 105)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("radio resources used, %")
    figure_legend(fig, loc="outside lower center", ncols=len(STATIONS))
    title = f"Radio resource occupancy per MS2 position, share {share}"
    fig.suptitle(with_run(title, *table_run_label(df)))
    return save(fig, path)


def plot_goodput(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Simulated against the paper's goodput per MS2 position, one panel per scheduler (three
    rows of two, the legend in the sixth place): bars of MS1 and MS2 simulated (solid) and
    paper (hatched; WHTB+gate against the paper's WHTB). Writes a PNG (or PDF, SVG) of
    ``FIGSIZE[0]`` x :data:`GOODPUT_FIG_HEIGHT` inches and returns its path."""
    from ..plots import COLORS, figure_legend, new_figure, save, with_run

    share = _single_share(df)
    schedulers = [s for s in SCHEDULERS if s in set(df["scheduler"])]
    fig = new_figure(height=GOODPUT_FIG_HEIGHT)
    grid = fig.subplots(3, 2, sharex=True, sharey=True, squeeze=False)
    axes = list(grid.flat)
    width = 0.2
    for ax, scheduler in zip(axes, schedulers):
        rows = df[df["scheduler"] == scheduler]
        positions = [p for p in POSITIONS if p in set(rows["position"])]
        for k, station in enumerate(STATIONS):
            by_pos = rows[rows["station"] == station].set_index("position")
            for j, (column, hatch, alpha, what) in enumerate(
                (("goodput_kbps", None, 1.0, "sim"), ("paper_kbps", "//", 0.45, "paper"))
            ):
                offset = (2 * k + j - 1.5) * width
                values = [float(by_pos[column].get(p, float("nan"))) for p in positions]
                ax.bar(
                    [i + offset for i in range(len(positions))],
                    values,
                    width=width,
                    color=COLORS[station],
                    alpha=alpha,
                    hatch=hatch,
                    edgecolor=COLORS[station],
                    label=f"{station.upper()} {what}",
                )
        ax.set_xticks(range(len(positions)), [POSITION_LABELS[p] for p in positions], rotation=20)
        ax.set_title(SCHEDULER_LABELS[scheduler])
        ax.grid(axis="y", alpha=0.3)
    for ax in grid[:, 0]:
        ax.set_ylabel("goodput, kbit/s")
    spare = axes[len(schedulers) :]
    if spare:
        # The legend in the first empty place (the sixth with every scheduler).
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in spare:
            ax.set_axis_off()
        spare[0].legend(handles, labels, loc="center", ncols=2, fontsize="small")
        # The panel above an empty place carries the position labels.
        for k in range(len(schedulers), len(axes)):
            if k >= 2:
                axes[k - 2].tick_params(axis="x", labelbottom=True)
    else:
        figure_legend(fig, loc="outside lower center", ncols=2 * len(STATIONS), fontsize="small")
    title = f"Mean received goodput, simulated and paper, share {share}"
    fig.suptitle(with_run(title, *table_run_label(df)))
    return save(fig, path)


def run_walk(
    scheduler: str = "whtb",
    seed: int | None = 1,
    duration: str | None = None,
    progress: Callable[[float], None] | None = None,
    *,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> Result:
    """Run the walking scenario of Figures 8 (``drr``) and 9 (``whtb``): MS2 stays good for
    20 s, walks to out-of-range by 60 s, stays there until 80 s and walks back by 120 s."""
    return run(walk_file(scheduler, scenarios_dir), seed=seed, duration=duration, progress=progress)


def plot_walk(
    result: Result,
    path: str | os.PathLike[str],
    title: str | None = None,
    *,
    scenario: str | os.PathLike[str] | None = None,
) -> Path:
    """Figures 8 and 9: per station, the measured goodput (top) and the AP channel monitor's
    estimated goodput (bottom) against time, with MS2's SNR on a secondary axis of both.
    Writes a PNG (or PDF, SVG: by the suffix) and returns its path; the title names
    ``scenario`` (where given) and the run's seed."""
    from ..plots import draw_samples, new_figure, save, with_run

    samples = result.samples
    fig = new_figure(height=6.0)
    top, bottom = fig.subplots(2, 1, sharex=True)
    draw_samples(top, samples, "goodput", names=STATIONS, label=str.upper)
    draw_samples(bottom, samples, "estimate", names=STATIONS, label=str.upper)
    top.set_ylim(bottom=0)
    bottom.set_ylim(bottom=0)
    top.set_title("measured goodput")
    bottom.set_title("estimated goodput (channel monitor)")
    bottom.set_xlabel("time, s")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        twin = ax.twinx()
        draw_samples(twin, samples, "snr", names=[MOVING_STATION], color="0.45", linestyle=":", label="MS2 SNR")
        handles, labels = ax.get_legend_handles_labels()
        extra_h, extra_l = twin.get_legend_handles_labels()
        ax.legend(handles + extra_h, labels + extra_l, loc="lower left", fontsize="small")
    title = title or "MS1 and MS2 goodput while MS2 walks out of range and back"
    fig.suptitle(with_run(title, scenario, result.summary.get("seed")))
    return save(fig, path)


def _check_choice(option: str, value: str, allowed: Iterable[str]) -> str:
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"{option}: must be one of {', '.join(allowed)}, got {value!r}")
    return value


# ----- section 6's qualitative claims ----------------------------------------------------------
#
# Each claim of the paper's section 6 that its tables or Figures 6 and 7 can decide is stated as
# a check: the paper's words, the quantity compared and its bound, and per scheduler whether it
# holds with the numbers. The same check runs on the paper's own tables (its occupancy by its
# own indirect method, section 5: MS1's share is its goodput over the cell's saturation goodput
# with both stations Good, the rest is MS2's), so a bound that the paper's numbers do not meet
# shows as such. Claims about "the WHTB" are checked on WHTB and WHTB+gate (the paper side of
# WHTB+gate is the paper's WHTB). Bounds on loose words ("4 Mbps", "about 3.5 Mbps") are stated
# in ``quantity``; docs/repro-garroppo.md explains every claim that fails.

#: The columns of :func:`check_claims`'s DataFrame, in order.
CLAIM_COLUMNS: tuple[str, ...] = (
    "share", "claim", "scheduler", "quantity", "simulated", "holds", "paper", "paper_holds", "text",
)
_CLASSIC: tuple[str, ...] = ("cbq", "htb", "drr")
_WHTBS: tuple[str, ...] = ("whtb", "whtb-gate")
_DEGRADED: tuple[str, ...] = ("bad", "very-bad", "out-of-range")


class _Cells:
    """Goodput (kbit/s) and occupancy (0-1) by (position, scheduler, station); KeyError where
    the table has no such row."""

    def __init__(self, df: pd.DataFrame, goodput: str = "goodput_kbps") -> None:
        self._g = {(r["position"], r["scheduler"], r["station"]): float(r[goodput]) for _, r in df.iterrows()}
        self._o = {(r["position"], r["scheduler"], r["station"]): float(r["occupancy"]) for _, r in df.iterrows()}

    def g(self, position: str, scheduler: str, station: str = "ms1") -> float:
        return self._g[(position, scheduler, station)]

    def occ(self, position: str, scheduler: str, station: str = "ms2") -> float:
        return self._o[(position, scheduler, station)]


_Check = Callable[[_Cells, str], tuple[str, bool]]


def _near(value: float, target: float, rel: float) -> bool:
    return abs(value / target - 1.0) <= rel


def _kb(values: Iterable[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)


def _pc(values: Iterable[float]) -> str:
    return "/".join(f"{100 * v:.0f}" for v in values) + " %"


def _good_4_and_1(c: _Cells, s: str) -> tuple[str, bool]:
    ms1, ms2 = c.g("good", s, "ms1"), c.g("good", s, "ms2")
    return f"MS1/MS2 {ms1:.0f}/{ms2:.0f}", _near(ms1, 4000, 0.05) and _near(ms2, 1000, 0.05)


def _medium_htb_4(c: _Cells, s: str) -> tuple[str, bool]:
    ms1 = c.g("medium", s)
    return f"MS1 {ms1:.0f}", _near(ms1, 4000, 0.05)


def _medium_both_fall_4_to_1(c: _Cells, s: str) -> tuple[str, bool]:
    g1, g2 = c.g("good", s, "ms1"), c.g("good", s, "ms2")
    m1, m2 = c.g("medium", s, "ms1"), c.g("medium", s, "ms2")
    ratio = m1 / m2 if m2 > 0 else float("inf")
    holds = m1 < 0.95 * g1 and m2 < 0.95 * g2 and _near(ratio, 4.0, 0.10)
    return f"MS1 {g1:.0f}->{m1:.0f}, MS2 {g2:.0f}->{m2:.0f}, ratio {ratio:.2f}", holds


def _classic_miss_reservation(c: _Cells, s: str) -> tuple[str, bool]:
    ms1 = [c.g(p, s) for p in _DEGRADED]
    return f"MS1 {_kb(ms1)}", max(ms1) < 3800


def _whtb_beats_the_others(c: _Cells, s: str) -> tuple[str, bool]:
    mine = [c.g(p, s) for p in _DEGRADED]
    best = [max(c.g(p, o) for o in _CLASSIC) for p in _DEGRADED]
    return f"MS1 {_kb(mine)} vs best other {_kb(best)}", all(m > b for m, b in zip(mine, best))


def _cbq_drr_alike_and_severe(c: _Cells, s: str) -> tuple[str, bool]:
    other = "drr" if s == "cbq" else "cbq"
    ratios = [c.g(p, s) / c.g(p, other) for p in _DEGRADED]
    left = c.g("out-of-range", s) / c.g("good", s)
    holds = all(1 / 1.4 <= r <= 1.4 for r in ratios) and left < 0.25
    return f"{SCHEDULER_LABELS[s]}/{SCHEDULER_LABELS[other]} MS1 {'/'.join(f'{r:.2f}' for r in ratios)}; OOR/Good {left:.2f}", holds


def _htb_above_cbq_and_drr(c: _Cells, s: str) -> tuple[str, bool]:
    mine = [c.g(p, s) for p in _DEGRADED]
    best = [max(c.g(p, "cbq"), c.g(p, "drr")) for p in _DEGRADED]
    return f"MS1 {_kb(mine)} vs CBQ/DRR best {_kb(best)}", all(m >= b for m, b in zip(mine, best))


def _whtb_over_3200(c: _Cells, s: str) -> tuple[str, bool]:
    ms1 = [c.g(p, s) for p in POSITIONS]
    return f"MS1 min {min(ms1):.0f} ({POSITION_LABELS[POSITIONS[ms1.index(min(ms1))]]})", min(ms1) >= 3200


def _aggregate(c: _Cells, s: str) -> tuple[str, bool]:
    total = lambda p: c.g(p, s, "ms1") + c.g(p, s, "ms2")  # noqa: E731
    if s in _CLASSIC:
        oor = total("out-of-range")
        return f"MS1+MS2 OOR {oor:.0f}", oor < 1000
    vb, oor = total("very-bad"), total("out-of-range")
    return f"MS1+MS2 VB/OOR {vb:.0f}/{oor:.0f}", _near(vb, 3500, 0.15) and _near(oor, 3500, 0.15)


def _occupancy_follows_goodput_at_good(c: _Cells, s: str) -> tuple[str, bool]:
    occ = c.occ("good", s)
    return f"MS2 {100 * occ:.0f} %", abs(occ - 0.20) <= 0.03


def _occupancy_grows(c: _Cells, s: str) -> tuple[str, bool]:
    occ = [c.occ(p, s) for p in POSITIONS]
    return f"MS2 {_pc(occ)}", all(b > a for a, b in zip(occ, occ[1:]))


def _whtb_occupancy_35(c: _Cells, s: str) -> tuple[str, bool]:
    occ = [c.occ(p, s) for p in POSITIONS]
    return f"MS2 max {100 * max(occ):.0f} %", max(occ) <= 0.35


def _ratio_kept(c: _Cells, s: str) -> tuple[str, bool]:
    positions = POSITIONS[:-1]
    ratios = [c.g(p, s, "ms1") / c.g(p, s, "ms2") for p in positions]
    return f"MS1/MS2 {'/'.join(f'{r:.2f}' for r in ratios)}", all(_near(r, 1.0, 0.10) for r in ratios)


def _ms1_degrades(c: _Cells, s: str) -> tuple[str, bool]:
    ms1 = [c.g(p, s) for p in POSITIONS]
    return f"MS1 {_kb(ms1)}", all(b < a for a, b in zip(ms1, ms1[1:]))


def _reduction(c: _Cells, s: str) -> tuple[str, bool]:
    good = c.g("good", s)
    if s in _CLASSIC:
        cut = 1 - c.g("out-of-range", s) / good
        return f"OOR reduction {100 * cut:.0f} %", cut > 0.90
    cut = max(1 - c.g(p, s) / good for p in POSITIONS)
    return f"max reduction {100 * cut:.0f} %", cut <= 0.30


def _drr_monopolized(c: _Cells, s: str) -> tuple[str, bool]:
    occ = [c.occ(p, s, "ms1") for p in _DEGRADED]
    return f"MS1 {_pc(occ)}", max(occ) <= 0.30


def _whtb_60_40(c: _Cells, s: str) -> tuple[str, bool]:
    occ = [c.occ(p, s) for p in POSITIONS[1:]]
    return f"MS2 max {100 * max(occ):.0f} %", max(occ) <= 0.60


#: (share, claim id, the paper's words, quantity and bound, schedulers, check).
CLAIMS: tuple[tuple[str, str, str, str, tuple[str, ...], _Check], ...] = (
    ("1:4", "6.1-good",
     "Good - All the schedulers behave correctly; ... each scheduler manages to assign 4 Mbps to MS1 and 1 Mbps to MS2",
     "Good: MS1 and MS2 goodput within 5 % of 4000 and 1000 kbit/s", SCHEDULERS, _good_4_and_1),
    ("1:4", "6.1-medium-htb",
     "Medium - The plain HTB (with the default cburst value) still manages to deliver 4 Mbps to MS1",
     "Medium: MS1 goodput within 5 % of 4000 kbit/s", ("htb",), _medium_htb_4),
    ("1:4", "6.1-medium-others",
     "the others, including the WHTB, decrease the delivered goodput towards both MS1 and MS2, strictly adhering to the 4 to 1 bandwidth share",
     "Medium: MS1 and MS2 each more than 5 % below Good, MS1/MS2 within 10 % of 4", ("cbq", "drr", *_WHTBS),
     _medium_both_fall_4_to_1),
    ("1:4", "6.1-classic-fail",
     "the three classical schedulers fail to fulfill the bandwidth reservation associated to MS1 when MS2 starts to experiment bad channel conditions",
     "Bad/Very Bad/Out-of-Range: MS1 goodput below 3800 kbit/s (95 % of 4 Mbit/s)", _CLASSIC, _classic_miss_reservation),
    ("1:4", "6.1-whtb-best",
     "Bad, Very Bad, Out-of-Range - The WHTB scheduler outperforms the other three in all these working conditions",
     "Bad/Very Bad/Out-of-Range: MS1 goodput above CBQ's, HTB's and DRR's", _WHTBS, _whtb_beats_the_others),
    ("1:4", "6.1-cbq-drr",
     "The CBQ and DRR schedulers behave almost the same, the MS2 position severely influencing the goodput towards MS1",
     "Bad/Very Bad/Out-of-Range: CBQ and DRR MS1 within a factor 1.4 (the paper's own widest gap, Very Bad); Out-of-Range MS1 below 25 % of Good",
     ("cbq", "drr"), _cbq_drr_alike_and_severe),
    ("1:4", "6.1-htb-slightly-better",
     "the HTB performs only slightly better than these two",
     "Bad/Very Bad/Out-of-Range: HTB MS1 at least CBQ's and DRR's ('slightly' not checked)", ("htb",), _htb_above_cbq_and_drr),
    ("1:4", "6.1-whtb-3.2",
     "the WHTB keeps the goodput delivered to MS1 always over 3.2 Mbps, irrespective of the position of MS2",
     "every position: MS1 goodput at least 3200 kbit/s", _WHTBS, _whtb_over_3200),
    ("1:4", "6.1-aggregate",
     "the three reference schedulers severely degrade the aggregate goodput of the cell to values well below 1 Mbps, whereas WHTB keeps its value to about 3.5 Mbps",
     "classical: MS1+MS2 below 1000 kbit/s Out-of-Range (Very Bad is 1.8-2.5 Mbit/s in the paper's own table); WHTB: within 15 % of 3500 Very Bad and Out-of-Range",
     (*_CLASSIC, *_WHTBS), _aggregate),
    ("1:4", "6.1-fig6-good",
     "when both MS1 and MS2 experiment a Good radio channel quality, the used resources share is equal to the received goodput share (80% and 20% in the particular case)",
     "Good: MS2 occupancy within 3 points of 20 %", ("drr", *_WHTBS), _occupancy_follows_goodput_at_good),
    ("1:4", "6.1-fig6-drr",
     "with the DRR an increasing amount of resources is occupied by the transmission towards MS2 ... Analogous results have been measured for HTB and CBQ",
     "MS2 occupancy rising at every step Good to Out-of-Range", _CLASSIC, _occupancy_grows),
    ("1:4", "6.1-fig6-whtb-35",
     "The WHTB ... limiting the resources occupied by the transmission towards MS2, which do not exceed 35% in the worst condition",
     "every position: MS2 occupancy at most 35 %", _WHTBS, _whtb_occupancy_35),
    ("1:1", "6.2-ratio",
     "the CBQ, DRR and HTB operate to try and maintain the imposed ratio between the two assigned bandwidth",
     "Good to Very Bad: MS1/MS2 within 10 % of 1", _CLASSIC, _ratio_kept),
    ("1:1", "6.2-ms1-degrades",
     "Consequently, the goodput received by MS1 degrades as long as MS2 suffers an increasing number of losses and retransmissions",
     "MS1 goodput falling at every step Good to Out-of-Range", _CLASSIC, _ms1_degrades),
    ("1:1", "6.2-reduction",
     "the WHTB reduces the influence of MS2 position on the goodput received by MS1, limiting the goodput reduction to about 25% versus the over 90% of the other schedulers",
     "MS1 below its Good goodput: WHTB at most 30 % in every position; the others more than 90 % Out-of-Range",
     (*_CLASSIC, *_WHTBS), _reduction),
    ("1:1", "6.2-fig7-drr",
     "The latter [DRR] allows the transmission towards MS2 to monopolize the use of the radio resources; indeed, the AP uses only 4 to 30% of the available bandwidth to transmit packets to MS1",
     "Bad/Very Bad/Out-of-Range: MS1 occupancy at most 30 %", ("drr",), _drr_monopolized),
    ("1:1", "6.2-fig7-whtb",
     "The WHTB scheduler allows ... to limit the unfairness between the resources used by each class, with a maximum unevenness of 60% to 40%, regardless of the position of MS2 among the Medium, Bad, Very Bad or Out-of-Range conditions",
     "Medium to Out-of-Range: MS2 occupancy at most 60 %", _WHTBS, _whtb_60_40),
)


def paper_summary(share: str) -> pd.DataFrame:
    """The paper's Table 1 or 2 as :func:`run_table`-like rows (every scheduler of
    :data:`SCHEDULERS`, WHTB+gate as the paper's WHTB): ``goodput_kbps`` is the paper's value and
    ``occupancy`` the paper's own indirect estimate (section 5): MS1's goodput over the
    scheduler's saturation goodput with both stations Good (MS1 + MS2 there), MS2 the rest."""
    import pandas as pd

    _check_choice("share", share, SHARES)
    rows = []
    for scheduler in SCHEDULERS:
        saturation = sum(paper_kbps(share, "good", st, scheduler) for st in STATIONS)
        for position in POSITIONS:
            ms1 = paper_kbps(share, position, "ms1", scheduler) / saturation
            for station in STATIONS:
                kbps = paper_kbps(share, position, station, scheduler)
                occ = ms1 if station == "ms1" else 1.0 - ms1
                rows.append({"share": share, "position": position, "scheduler": scheduler, "station": station,
                             "goodput_kbps": float(kbps), "paper_kbps": kbps, "occupancy": occ})
    return pd.DataFrame(rows)


def check_claims(df: pd.DataFrame, share: str | None = None) -> pd.DataFrame:
    """Check section 6's claims (:data:`CLAIMS`) of ``df``'s share on ``df``'s rows (columns
    share, position, scheduler, station, goodput_kbps, occupancy, as :func:`run_table` returns)
    and on the paper's own tables (:func:`paper_summary`). One row per claim and scheduler (see
    :data:`CLAIM_COLUMNS`): ``simulated`` and ``paper`` the numbers compared, ``holds`` and
    ``paper_holds`` whether the claim's bound is met. Claims that need a row ``df`` lacks (a
    subset table) are left out."""
    import pandas as pd

    share = _single_share(df) if share is None else _check_choice("share", share, SHARES)
    sim, paper = _Cells(df), _Cells(paper_summary(share))
    schedulers = set(df["scheduler"])
    rows = []
    for claim_share, claim, text, quantity, about, check in CLAIMS:
        if claim_share != share:
            continue
        for scheduler in about:
            if scheduler not in schedulers:
                continue
            try:
                value, holds = check(sim, scheduler)
            except KeyError:
                continue
            paper_value, paper_holds = check(paper, scheduler)
            rows.append({"share": share, "claim": claim, "scheduler": scheduler, "quantity": quantity,
                         "simulated": value, "holds": bool(holds), "paper": paper_value,
                         "paper_holds": bool(paper_holds), "text": text})
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def format_claims(claims: pd.DataFrame) -> Table:
    """A rich Table of :func:`check_claims`'s rows: claim and its bound, scheduler, the numbers
    simulated and in the paper, and whether each holds."""
    from rich import box
    from rich.table import Table

    shares = sorted(set(claims["share"]))
    table = Table(
        title=f"Garroppo et al. section 6, claims as checks{', share ' + shares[0] if len(shares) == 1 else ''}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("claim: quantity and bound", max_width=42)
    table.add_column("sched.", no_wrap=True)
    table.add_column("simulated", max_width=26)
    table.add_column("sim", no_wrap=True)
    table.add_column("paper", max_width=26)
    table.add_column("paper", no_wrap=True)
    verdict = {True: "holds", False: "FAILS"}
    for claim, rows in claims.groupby("claim", sort=False):
        for k, r in enumerate(rows.itertuples(index=False)):
            first = f"{claim}: {r.quantity}" if k == 0 else ""
            table.add_row(first, SCHEDULER_LABELS[r.scheduler], r.simulated, verdict[bool(r.holds)], r.paper,
                          verdict[bool(r.paper_holds)], end_section=k == len(rows) - 1)
    return table


def write_claims_csv(claims: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write :func:`check_claims`'s rows as CSV; return the path."""
    claims.to_csv(path, index=False)
    return Path(path)
