# SPDX-License-Identifier: Apache-2.0
"""Valenzuela et al., "A Hierarchical Token Bucket Algorithm to Enhance QoS in IEEE 802.11":
Tables I-IV (two stations uploading to a server behind an 802.11b AP, UDP and TCP, with and
without HTB at the stations) beside the paper's numbers.

Each row of a table is one scenario under ``scenarios/valenzuela/``; :func:`run_tables` runs
them and returns one row per (table, row, station) with the simulated mean and standard
deviation of the 1-s throughput samples, the paper's, and their ratio. :func:`sigma_claims`
checks the paper's claim that HTB reduces the standard deviation, for UDP as for TCP.

    >>> from airsched.repro import valenzuela
    >>> df = valenzuela.run_tables(duration="20s")
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ..runner import run
from ._scenarios import find_scenarios_dir as _find_scenarios_dir
from ._scenarios import short_run_warmup

#: The warm-up of the valenzuela/*.toml files, seconds.
WARMUP_S = 2.0

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table


class Row(NamedTuple):
    """One row of a paper's table: its scenario, HTB limits and the published values (kbit/s)."""

    table: str
    traffic: str
    scenario: str
    htb: tuple[int, int] | None
    mean: tuple[float, float]
    sigma: tuple[float, float]


#: The paper's Tables I-IV (kbit/s): average throughput and standard deviation per station.
ROWS: tuple[Row, ...] = (
    Row("I", "udp", "table1-without-htb", None, (3018, 3046), (156, 163)),
    Row("I", "udp", "table1-htb-3000-3000", (3000, 3000), (3003, 3000), (16, 13)),
    Row("II", "tcp", "table2-without-htb", None, (2546, 2449), (204, 198)),
    Row("II", "tcp", "table2-htb-2400-2400", (2400, 2400), (2388, 2397), (50, 35)),
    Row("III", "udp", "table3-without-htb", None, (965, 1303), (164, 62)),
    Row("III", "udp", "table3-htb-900-1300", (900, 1300), (900, 1301), (42, 27)),
    Row("III", "udp", "table3-htb-2400-900", (2400, 900), (2404, 901), (56, 11)),
    Row("IV", "tcp", "table4-without-htb", None, (491, 1233), (201, 103)),
    Row("IV", "tcp", "table4-htb-500-1200", (500, 1200), (477, 1107), (59, 57)),
    Row("IV", "tcp", "table4-htb-1900-700", (1900, 700), (1873, 719), (56, 19)),
)
TABLES: tuple[str, ...] = ("I", "II", "III", "IV")
STATIONS: tuple[str, ...] = ("sta1", "sta2")
FLOWS: tuple[str, ...] = ("up1", "up2")
COLUMNS: tuple[str, ...] = (
    "table", "traffic", "htb", "station", "mean_kbps", "paper_mean_kbps", "mean_ratio",
    "sigma_kbps", "paper_sigma_kbps", "sigma_ratio",
)


def run_tables(
    tables: tuple[str, ...] = TABLES,
    duration: str | None = None,
    seed: int | None = 1,
    progress: Callable[[float], None] | None = None,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Run every row of ``tables``; one result row per station (see :data:`COLUMNS`)."""
    import pandas as pd

    base = _find_scenarios_dir(scenarios_dir, "valenzuela", "table2-without-htb.toml") / "valenzuela"
    rows = [r for r in ROWS if r.table in tables]
    out = []
    for i, r in enumerate(rows):

        def sub(f: float, i: int = i) -> None:
            if progress is not None:
                progress((i + f) / len(rows))

        res = run(base / f"{r.scenario}.toml", seed=seed, duration=duration, overrides=short_run_warmup(duration, WARMUP_S) or None, progress=sub)
        flows = res.flows.set_index("name")
        for k, (sta, flow) in enumerate(zip(STATIONS, FLOWS, strict=True)):
            mean = float(flows.loc[flow, "goodput_mbps"]) * 1000
            sigma = float(flows.loc[flow, "goodput_std_mbps"]) * 1000
            out.append(
                {
                    "table": r.table,
                    "traffic": r.traffic,
                    "htb": "-" if r.htb is None else f"{r.htb[0]}/{r.htb[1]}",
                    "station": sta,
                    "mean_kbps": mean,
                    "paper_mean_kbps": float(r.mean[k]),
                    "mean_ratio": mean / r.mean[k],
                    "sigma_kbps": sigma,
                    "paper_sigma_kbps": float(r.sigma[k]),
                    "sigma_ratio": sigma / r.sigma[k],
                }
            )
    return pd.DataFrame(out, columns=list(COLUMNS))



def sigma_claims(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's claim "HTB reduces the standard deviation", per table and station: the
    largest sigma with HTB against the sigma without it (paper and simulation)."""
    import pandas as pd

    out = []
    for table, g in df.groupby("table", sort=False):
        for sta, s in g.groupby("station", sort=False):
            without = s[s["htb"] == "-"]
            with_htb = s[s["htb"] != "-"]
            if without.empty or with_htb.empty:
                continue
            sim_wo, sim_w = float(without["sigma_kbps"].iloc[0]), float(with_htb["sigma_kbps"].max())
            pap_wo, pap_w = float(without["paper_sigma_kbps"].iloc[0]), float(with_htb["paper_sigma_kbps"].max())
            out.append(
                {
                    "table": table,
                    "traffic": str(s["traffic"].iloc[0]),
                    "station": sta,
                    "sigma_without_kbps": sim_wo,
                    "sigma_with_max_kbps": sim_w,
                    "holds": sim_w < sim_wo,
                    "paper_holds": pap_w < pap_wo,
                }
            )
    return pd.DataFrame(out)


def format_tables(df: pd.DataFrame) -> list[Table]:
    """One rich table per paper table: simulated beside published, with the ratios."""
    from rich.table import Table

    tables = []
    for table, g in df.groupby("table", sort=False):
        traffic = str(g["traffic"].iloc[0]).upper()
        t = Table(title=f"Valenzuela et al., Table {table} ({traffic}): throughput and sigma of 1-s samples, kbit/s")
        for col in ("HTB limits", "station", "mean", "paper", "ratio", "sigma", "paper", "ratio"):
            t.add_column(col, justify="right")
        for _, r in g.iterrows():
            t.add_row(
                r["htb"], r["station"], f"{r['mean_kbps']:.0f}", f"{r['paper_mean_kbps']:.0f}",
                f"{r['mean_ratio']:.2f}", f"{r['sigma_kbps']:.0f}", f"{r['paper_sigma_kbps']:.0f}",
                f"{r['sigma_ratio']:.2f}",
            )
        tables.append(t)
    claims = sigma_claims(df)
    if not claims.empty:
        t = Table(title="HTB reduces the standard deviation (largest sigma with HTB < sigma without)")
        for col in ("table", "traffic", "station", "sigma without", "max sigma with", "holds", "paper"):
            t.add_column(col, justify="right")
        for _, r in claims.iterrows():
            t.add_row(
                r["table"], r["traffic"], r["station"], f"{r['sigma_without_kbps']:.0f}",
                f"{r['sigma_with_max_kbps']:.0f}", "yes" if r["holds"] else "NO", "yes" if r["paper_holds"] else "no",
            )
        tables.append(t)
    return tables
