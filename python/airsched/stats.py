# SPDX-License-Identifier: Apache-2.0
"""Statistics across seeds: the mean of each quantity over a sweep's replicates, with a
Student-t confidence interval.

Each seed is one independent replicate of the same configuration, so for n runs with mean m and
sample standard deviation s, the interval is m ± t(1 - (1 - c) / 2, n - 1) · s / √n. With fewer
than two runs there is no interval: ``ci_half`` is NaN and ``too_few`` is True, and every table
and plot says so rather than drawing a zero-width bar.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The columns :func:`summarize` adds after the grouping columns and ``quantity``.
STAT_COLUMNS = ("n", "mean", "std", "ci_half", "ci_low", "ci_high", "too_few")
#: Fewest runs that give a confidence interval.
MIN_RUNS = 2
TOO_FEW = f"fewer than {MIN_RUNS} runs: no confidence interval"


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> tuple[int, float, float, float]:
    """``(n, mean, std, half_width)`` of the finite ``values``; std and half width are NaN when
    n < 2."""
    from scipy import stats

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n < MIN_RUNS:
        return n, mean, math.nan, math.nan
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    t = float(stats.t.ppf(0.5 + confidence / 2, n - 1))
    return n, mean, std, t * std / math.sqrt(n)


def summarize(
    df: pd.DataFrame,
    by: Sequence[str],
    values: Sequence[str],
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per group of ``by`` and quantity of ``values``: the grouping columns,
    ``quantity``, then n, mean, std, ci_half, ci_low, ci_high and too_few (n < 2). Groups keep
    the order in which they first appear."""
    import pandas as pd

    missing = [c for c in [*by, *values] if c not in df.columns]
    if missing:
        raise ValueError(f"no column(s) {', '.join(missing)} in the table (columns: {', '.join(map(str, df.columns))})")
    rows: list[dict[str, Any]] = []
    groups = df.groupby(list(by), sort=False, dropna=False) if by else [((), df)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        for quantity in values:
            n, mean, std, half = mean_ci(group[quantity], confidence)
            rows.append(
                {
                    **dict(zip(by, key)),
                    "quantity": quantity,
                    "n": n,
                    "mean": mean,
                    "std": std,
                    "ci_half": half,
                    "ci_low": mean - half,
                    "ci_high": mean + half,
                    "too_few": n < MIN_RUNS,
                }
            )
    out = pd.DataFrame(rows, columns=[*by, "quantity", *STAT_COLUMNS])
    out.attrs["confidence"] = confidence
    return out


def format_mean_ci(mean: float, half: float, decimals: int = 3) -> str:
    """``"1.234 ± 0.056"``; ``"1.234 (n<2)"`` without an interval."""
    if mean is None or not math.isfinite(mean):
        return "–"
    if half is None or not math.isfinite(half):
        return f"{mean:.{decimals}f} (n<{MIN_RUNS})"
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def stats_table(summary: pd.DataFrame, by: Sequence[str], title: str) -> Any:
    """A rich Table of :func:`summarize`'s output: a row per group, a column per quantity
    holding ``mean ± half-width (n)``."""
    from rich.table import Table
    from rich.text import Text

    conf = summary.attrs.get("confidence", 0.95)
    # Text, not str: rich would read "station[ms1].rate" as markup and print "station.rate".
    table = Table(title=Text(f"{title} (mean ± {conf:.0%} Student-t CI over seeds)"), title_justify="left")
    quantities = list(dict.fromkeys(summary["quantity"]))
    for col in by:
        table.add_column(Text(str(col)))
    for q in quantities:
        table.add_column(Text(str(q)), justify="right")
    table.add_column("runs", justify="right")
    few = False
    wide = summary.set_index([*by, "quantity"]) if by else summary.set_index("quantity")
    keys = list(dict.fromkeys(tuple(r) for r in summary[list(by)].itertuples(index=False))) if by else [()]
    for key in keys:
        cells = [Text(str(k)) for k in key]
        n = 0
        for q in quantities:
            row = wide.loc[(*key, q)] if by else wide.loc[q]
            cells.append(Text(format_mean_ci(row["mean"], row["ci_half"])))
            n = int(row["n"])
            few = few or bool(row["too_few"])
        cells.append(Text(str(n)))
        table.add_row(*cells)
    if few:
        table.caption = f"n<{MIN_RUNS}: {TOO_FEW}; add seeds to the sweep"
    return table


def plot_errorbars(
    summary: pd.DataFrame,
    quantity: str,
    x: str,
    hue: str | None,
    path: Any,
    *,
    ylabel: str | None = None,
    title: str | None = None,
) -> Any:
    """A PNG of ``quantity``'s mean against ``x`` (categorical), one series per ``hue`` value,
    with the confidence interval as error bars (none where n < 2; the legend says so)."""
    from .plots import new_figure, save

    rows = summary[summary["quantity"] == quantity]
    xs = list(dict.fromkeys(rows[x]))
    hues = list(dict.fromkeys(rows[hue])) if hue else [None]
    from .plots import FIGSIZE

    # Many or long configuration labels: a wider figure and labels slanted from their tick, so
    # that no two overlap (constrained layout makes room for them below the axes).
    longest = max((len(str(v)) for v in xs), default=0)
    crowded = len(xs) * max(longest, 4) > 60
    fig = new_figure(width=max(FIGSIZE[0], min(0.45 * len(xs) + 2, 24)) if crowded else FIGSIZE[0],
                     height=FIGSIZE[1] + (min(longest, 40) * 0.06 if crowded else 0))
    ax = fig.subplots()
    width = 0.8 / max(len(hues), 1)
    few = False
    for k, h in enumerate(hues):
        sub = rows if h is None else rows[rows[hue] == h]
        by_x = {v: r for v, r in zip(sub[x], sub.itertuples(index=False))}
        pos = [i + (k - (len(hues) - 1) / 2) * width for i in range(len(xs))]
        means = [by_x[v].mean if v in by_x else math.nan for v in xs]
        errs = [by_x[v].ci_half if v in by_x and math.isfinite(by_x[v].ci_half) else 0.0 for v in xs]
        few = few or any(by_x[v].too_few for v in xs if v in by_x)
        ax.bar(pos, means, width=width * 0.9, yerr=errs, capsize=3, label=str(h) if h is not None else quantity)
    if crowded:
        ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=45, ha="right", rotation_mode="anchor",
                      fontsize="small")
    else:
        ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=20)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or quantity)
    ax.grid(axis="y", alpha=0.3)
    if hue:
        ax.legend(title=hue, fontsize="small")
    conf = summary.attrs.get("confidence", 0.95)
    note = f"; n<{MIN_RUNS}: no error bar" if few else ""
    ax.set_title(title or f"{quantity}: mean and {conf:.0%} CI over seeds{note}", fontsize="medium")
    if hasattr(path, "write"):  # a file object (the report embeds the PNG)
        fig.savefig(path, format="png")
        return path
    return save(fig, path)
