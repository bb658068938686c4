# SPDX-License-Identifier: Apache-2.0
"""Garroppo et al., "The Wireless Hierarchical Token Bucket": Tables 1 and 2, Figures 6 to 9.

The paper's testbed: an AP sends two 6.144 Mbit/s CBR UDP flows, one to MS1 (always in the
"good" position) and one to MS2, which is placed in five positions from "good" to
"out-of-range"; the AP's scheduler (CBQ, HTB, DRR or WHTB) reserves 4:1 (Table 1) or 1:1
(Table 2) of the cell's ~5 Mbit/s to the two stations. The scenario files are
``scenarios/garroppo/share-1-4-{cbq,htb,drr,whtb}.toml`` and ``share-1-1-*.toml``;
:func:`run_table` runs each of them with MS2 moved to each position (the override
``station[ms2].position``) and sets the simulated goodput beside the paper's.
``walk-{drr,whtb}.toml`` walk MS2 from good to out-of-range and back (Figures 8 and 9,
:func:`run_walk`, :func:`plot_walk`).

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
SCHEDULERS: tuple[str, ...] = ("cbq", "htb", "drr", "whtb")
SCHEDULER_LABELS: dict[str, str] = {"cbq": "CBQ", "htb": "HTB", "drr": "DRR", "whtb": "WHTB"}
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
WALK_SCHEDULERS: tuple[str, ...] = ("drr", "whtb")

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
    """One cell of the paper's Table 1 (share "1:4") or Table 2 ("1:1"), in kbit/s."""
    _check_choice("share", share, SHARES)
    _check_choice("position", position, POSITIONS)
    _check_choice("station", station, STATIONS)
    _check_choice("scheduler", scheduler, SCHEDULERS)
    return _PAPER[share][position][STATIONS.index(station)][SCHEDULERS.index(scheduler)]


def paper_table(share: str | None = None) -> pd.DataFrame:
    """The paper's Table 1 and 2 (or one of them) as a tidy DataFrame: share, position,
    scheduler, station, paper_kbps; 40 rows per table."""
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
        for sched in SCHEDULERS
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
    """The walking scenario of Figures 8 (``drr``) and 9 (``whtb``)."""
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
    column per scheduler holding "simulated (paper)" goodput in kbit/s, and MS2's share of the
    radio resources under DRR and WHTB (the paper's Figs. 6 and 7) on MS2's rows.
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
    # 84 columns wide; on a narrower terminal the goodput cells fold at the space, keeping
    # the position and MS columns whole.
    table.add_column("MS2 position", no_wrap=True, min_width=12)
    table.add_column("MS", justify="right", no_wrap=True, min_width=2)
    for scheduler in SCHEDULERS:
        table.add_column(f"{SCHEDULER_LABELS[scheduler]}\nsim (paper)", justify="right")
    table.add_column("MS2 occ.\nDRR/WHTB", justify="right", no_wrap=True, min_width=8)
    for position in positions:
        for k, station in enumerate(STATIONS):
            row = [POSITION_LABELS[position] if k == 0 else "", station[-1]]
            for scheduler in SCHEDULERS:
                r = cells.get((position, station, scheduler))
                row.append("–" if r is None else f"{r.goodput_kbps:.0f} ({r.paper_kbps})")
            if station == MOVING_STATION:
                occ = [cells.get((position, station, s)) for s in ("drr", "whtb")]
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
    (share of the stations' airtime) used for MS1 and for MS2, stacked, under DRR and WHTB side
    by side. Writes a PNG (or PDF, SVG: by the suffix) to ``path`` and returns it; the title
    names the scenarios and seed of :func:`run_table`'s rows."""
    from ..plots import COLORS, figure_legend, new_figure, save, with_run

    share = _single_share(df)
    schedulers = [s for s in ("drr", "whtb") if s in set(df["scheduler"])]
    if not schedulers:
        raise ValueError("plot_occupancy needs rows of DRR or WHTB")
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
    """Simulated against the paper's goodput per MS2 position, one panel per scheduler: bars
    of MS1 and MS2 simulated (solid) and paper (hatched). Writes a PNG (or PDF, SVG) and
    returns its path."""
    from ..plots import COLORS, figure_legend, new_figure, save, with_run

    share = _single_share(df)
    schedulers = [s for s in SCHEDULERS if s in set(df["scheduler"])]
    fig = new_figure(height=6.0)
    grid = fig.subplots(2, 2, sharex=True, sharey=True, squeeze=False)
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
    for ax in axes[len(schedulers) :]:
        ax.set_visible(False)
    for ax in grid[:, 0]:
        ax.set_ylabel("goodput, kbit/s")
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
