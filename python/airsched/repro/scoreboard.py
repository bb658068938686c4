# SPDX-License-Identifier: Apache-2.0
"""The scoreboard of every reproduction over several seeds (``airsched repro all --seeds``).

Per paper, two kinds of comparison:

* **cells**: a number the paper prints (a table cell) or states in its text ("just shy of 70
  Mbps") against the simulated value. A cell is within 10 % (25 %) when the mean over the seeds
  is within 10 % (25 %) of the paper's number; the relative errors of each seed give the cell's
  95 % interval. Garroppo et al.'s Tables 1 and 2 (the paper's four schedulers, cells where the
  paper prints 0 left out: no relative error exists), Valenzuela et al.'s Tables I-IV (means and
  standard deviations), Høiland-Jørgensen's numbers (:func:`airsched.repro.hoiland.paper_cells`)
  and Yip & Kwok's peaks, ranges and extremes of the aggregate (:func:`airsched.repro.yipkwok.paper_cells`).
* **claims**: each statement of the paper's results checked as its reproduction's checker does
  (Garroppo's section 6, Valenzuela's standard-deviation ordering, Høiland's orderings and
  bounds, Yip & Kwok's statements), once per seed. A claim holds when it holds in at least 8 of
  10 seeds (:data:`HOLD_FRACTION` of them), so a tie or a coin flip does not count.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from . import garroppo, hoiland, valenzuela, yipkwok

#: The papers, in the scoreboard's order, with their labels.
PAPERS: dict[str, str] = {
    "garroppo": "Garroppo et al. (Tables 1, 2; section 6)",
    "hoiland": "Høiland-Jørgensen et al. (blog Figs. 1-7; next steps 3.2)",
    "valenzuela": "Valenzuela et al. (Tables I-IV)",
    "yip-kwok": "Yip & Kwok (sections IV, V)",
}
#: A claim holds when it holds in at least this fraction of the seeds (8 of 10).
HOLD_FRACTION = 0.8
#: The two bands of the cells' relative error.
BANDS = (0.10, 0.25)
#: Columns of the per-seed tables and of the scoreboard.
CELL_COLUMNS = ("paper", "cell", "seed", "simulated", "reference")
CLAIM_COLUMNS = ("paper", "claim", "seed", "holds")
SCORE_COLUMNS = (
    "paper", "seeds", "cells", "within_10", "within_25", "median_error", "median_error_ci",
    "claims", "claims_hold", "claims_mean_per_seed", "claims_ci",
)


def seed_tables(
    seed: int,
    garroppo_tables: Sequence[pd.DataFrame],
    hoiland_summary: pd.DataFrame,
    valenzuela_table: pd.DataFrame,
    yipkwok_summary: pd.DataFrame,
    yipkwok_series: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cells and claims of one seed's runs of every reproduction (:data:`CELL_COLUMNS`,
    :data:`CLAIM_COLUMNS`); Yip & Kwok's statements about time (trends, cycles, extremes) need
    its 1-s samples, ``yipkwok_series``."""
    cells: list[tuple[Any, ...]] = []
    claims: list[tuple[Any, ...]] = []
    for df in garroppo_tables:
        for r in df[df["scheduler"].isin(garroppo.SCHEDULERS)].itertuples():
            if r.paper_kbps:
                cells.append(("garroppo", f"share {r.share} MS2 {r.position} {r.scheduler} {r.station}", seed, r.goodput_kbps, float(r.paper_kbps)))
        for r in garroppo.check_claims(df).itertuples():
            claims.append(("garroppo", f"share {r.share}: {r.claim} [{r.scheduler}]", seed, bool(r.holds)))
    for name, sim, ref in hoiland.paper_cells(hoiland_summary):
        cells.append(("hoiland", name, seed, sim, ref))
    for c in hoiland.check_claims(hoiland_summary):
        claims.append(("hoiland", f"{c.traffic} {c.configuration} {c.quantity} {c.station}: {c.claim}", seed, c.holds))
    for r in valenzuela_table.itertuples():
        row = f"table {r.table} {r.traffic} HTB {r.htb} {r.station}"
        cells.append(("valenzuela", f"{row} mean", seed, r.mean_kbps, r.paper_mean_kbps))
        cells.append(("valenzuela", f"{row} sigma", seed, r.sigma_kbps, r.paper_sigma_kbps))
    for r in valenzuela.sigma_claims(valenzuela_table).itertuples():
        claims.append(("valenzuela", f"table {r.table} {r.station}: HTB reduces the standard deviation", seed, bool(r.holds)))
    for r in valenzuela.statement_claims(valenzuela_table).itertuples():
        claims.append(("valenzuela", f"{r.claim}: {r.text}", seed, bool(r.holds)))
    for name, sim, ref in yipkwok.paper_cells(yipkwok_summary, yipkwok_series):
        cells.append(("yip-kwok", name, seed, sim, ref))
    for o in yipkwok.observations(yipkwok_summary, yipkwok_series):
        claims.append(("yip-kwok", o.claim, seed, bool(o.holds)))
    return pd.DataFrame(cells, columns=list(CELL_COLUMNS)), pd.DataFrame(claims, columns=list(CLAIM_COLUMNS))


def run_seed(
    seed: int,
    duration: str | None = None,
    progress: Callable[[float], None] | None = None,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run every reproduction once with ``seed`` (as ``repro all`` does) and return its cells and
    claims (:func:`seed_tables`)."""
    parts = 2 * len(garroppo.SCHEDULERS) * len(garroppo.POSITIONS) + 8 + 10 + 4
    done = 0

    def sub(weight: int) -> Callable[[float], None] | None:
        if progress is None:
            return None
        start = done
        return lambda f: progress((start + weight * f) / parts)

    tables = []
    for share in garroppo.SHARES:
        n = len(garroppo.SCHEDULERS) * len(garroppo.POSITIONS)
        tables.append(garroppo.run_table(share, duration=duration, seed=seed, progress=sub(n), scenarios_dir=scenarios_dir))
        done += n
    rep = hoiland.run_testbed("both", duration=duration, seed=seed, progress=sub(8), scenarios_dir=scenarios_dir)
    done += 8
    val = valenzuela.run_tables(duration=duration, seed=seed, progress=sub(10), scenarios_dir=scenarios_dir)
    done += 10
    yk = yipkwok.run_testbed(duration=duration, seed=seed, progress=sub(4), scenarios_dir=scenarios_dir)
    return seed_tables(seed, tables, rep.summary, val, yk.summary, yk.series)


def _mean_ci(values: Iterable[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95 % t-interval (0 for one value)."""
    from ..stats import mean_ci

    _, m, _, half = mean_ci(values)
    return float(m), float(half) if math.isfinite(half) else 0.0


def score(cells: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """One row per paper (:data:`SCORE_COLUMNS`): how many cells are within 10 % and 25 % of
    the paper (on the mean over the seeds), the median relative error of the cells with the 95 %
    interval of the per-seed medians, and how many claims hold in at least
    :data:`HOLD_FRACTION` of the seeds, with the mean number held per seed and its interval."""
    rows = []
    for paper in PAPERS:
        c = cells[cells["paper"] == paper]
        k = claims[claims["paper"] == paper]
        seeds = sorted(set(c["seed"]) | set(k["seed"]))
        if not seeds:
            continue
        mean = c.groupby("cell", sort=False).agg(simulated=("simulated", "mean"), reference=("reference", "first"))
        err = (mean["simulated"] - mean["reference"]).abs() / mean["reference"].abs()
        per_seed = [float(((g["simulated"] - g["reference"]).abs() / g["reference"].abs()).median()) for _, g in c.groupby("seed")]
        med, med_ci = _mean_ci(per_seed) if per_seed else (math.nan, 0.0)
        rate = k.groupby("claim", sort=False)["holds"].mean()
        held_per_seed = [int(g["holds"].sum()) for _, g in k.groupby("seed")]
        held_mean, held_ci = _mean_ci(held_per_seed) if held_per_seed else (math.nan, 0.0)
        rows.append({
            "paper": paper,
            "seeds": len(seeds),
            "cells": len(mean),
            "within_10": int((err <= BANDS[0]).sum()),
            "within_25": int((err <= BANDS[1]).sum()),
            "median_error": med,
            "median_error_ci": med_ci,
            "claims": len(rate),
            "claims_hold": int((rate >= HOLD_FRACTION - 1e-9).sum()),
            "claims_mean_per_seed": held_mean,
            "claims_ci": held_ci,
        })
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))


def claim_rates(claims: pd.DataFrame) -> pd.DataFrame:
    """Per paper and claim: in how many seeds it holds, of how many, and the verdict."""
    g = claims.groupby(["paper", "claim"], sort=False)["holds"]
    out = pd.DataFrame({"held": g.sum().astype(int), "seeds": g.size()}).reset_index()
    out["holds"] = out["held"] >= HOLD_FRACTION * out["seeds"] - 1e-9
    return out


def lines(board: pd.DataFrame) -> list[str]:
    """The scoreboard as text lines, one per paper (what ``repro all`` prints)."""
    out = ["scoreboard: cells within 10 % / 25 % of the paper (seed means), median |error| (95 % CI over seeds),",
           f"claims holding in >= {HOLD_FRACTION:.0%} of the seeds (mean held per seed, 95 % CI)"]
    for r in board.itertuples():
        out.append(
            f"  {PAPERS[r.paper]}: {r.seeds} seeds; cells {r.within_10}/{r.cells} within 10 %, {r.within_25}/{r.cells} within 25 %, "
            f"median error {r.median_error:.1%} ± {r.median_error_ci:.1%}; claims {r.claims_hold}/{r.claims} hold "
            f"({r.claims_mean_per_seed:.1f} ± {r.claims_ci:.1f} per seed)"
        )
    return out


__all__ = ["PAPERS", "HOLD_FRACTION", "claim_rates", "lines", "run_seed", "score", "seed_tables"]
