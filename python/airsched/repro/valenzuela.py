# SPDX-License-Identifier: Apache-2.0
"""Valenzuela et al., "A Hierarchical Token Bucket Algorithm to Enhance QoS in IEEE 802.11":
Tables I-IV (two stations uploading to a server behind an 802.11b AP, UDP and TCP, with and
without HTB at the stations) beside the paper's numbers.

Each row of a table is one scenario under ``scenarios/valenzuela/``; :func:`run_tables` runs
them and returns one row per (table, row, station) with the simulated mean and standard
deviation of the 1-s throughput samples, the paper's, and their ratio. :func:`sigma_claims`
checks the paper's claim that HTB reduces the standard deviation, for UDP as for TCP, and
:func:`statement_claims` every other statement of its section IV (:data:`STATEMENTS`, with the
paper's words), on the simulation and on the paper's own tables.

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
    "sigma_kbps", "paper_sigma_kbps", "sigma_ratio", "airtime_per_attempt_us",
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
        stations = res.stations.set_index("name")
        for k, (sta, flow) in enumerate(zip(STATIONS, FLOWS, strict=True)):
            attempts = int(stations.loc[sta, "tx_attempts"])
            air = float(stations.loc[sta, "airtime_up_s"]) * 1e6 / attempts if attempts else float("nan")
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
                    "airtime_per_attempt_us": air,
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


#: Section IV's statements other than "HTB reduces the standard deviation" (:func:`sigma_claims`),
#: in the paper's words, with how each is read. "Figure 6" (11 + 2 Mb/s, no HTB, traffic not
#: named) is read as Table IV's TCP row, whose total (1724 kbit/s) is the figure's "1.7Mbps".
STATEMENTS: tuple[tuple[str, str, str], ...] = (
    ("degraded", "the throughput of all hosts with higher rates are degraded below the level of the lower rate hosts",
     "11 + 2 Mb/s without HTB (Tables III, IV): the 11 Mb/s station's mean below the 2 Mb/s one's by more than 1 %"),
    ("total 1.7", "instead of reaching the throughput of 5Mbps, it falls to a total throughput of 1.7Mbps approximately",
     "Table IV without HTB: the two stations' total within 10 % of 1700 kbit/s"),
    ("tcp less", "TCP has less available bandwidth than UDP traffic",
     "without HTB, the total of Table II (TCP) below Table I's (UDP), and Table IV's below Table III's, by more than 1 %"),
    ("similar", "the average throughput results are very similar to the experiment without HTB",
     "11 + 11 Mb/s (Tables I, II): each station's mean with HTB within 10 % of its mean without"),
    ("1:1", "throughput is shared in a linear way with 1:1 ratio and, consequently, STA1 and STA2 are obtaining the same throughput",
     "11 + 11 Mb/s (Tables I, II), every row: the stations' means within 5 % of each other"),
    ("five times", "When STA2 transmits UDP traffic at 2 Mbps, it uses five longer time than STA1",
     "Table III without HTB: STA2's airtime per transmission attempt 4 to 6 times STA1's (no published number: not checked on the paper)"),
    ("four times", "if HTB constricts STA2, available bandwidth to share is almost four times larger the bandwidth HTB has constricted",
     "Table III, HTB 900/1300 to 2400/900: STA1's gain at least 3.5 times STA2's loss"),
    ("50 % gain", "when HTB limit of STA2 is reduced from 1300 Kbps to 900 Kbps, STA1 HTB limit is upgraded from 900 Kbps to 2400Kbps, so a 50 % gain on available throughput follows",
     "Table III: the total with HTB 2400/900 at least 1.45 times the total with 900/1300"),
    ("53 % gain", "In TCP traffic the gain is almost 53 %",
     "Table IV: the total with HTB 1900/700 at least 1.48 times the total with 500/1200"),
)

#: A difference within 1 % is a tie, never an ordering.
TIE = 0.01


def statement_claims(df: pd.DataFrame) -> pd.DataFrame:
    """Each of :data:`STATEMENTS`, checked on the simulated means of ``df`` (a table of
    :func:`run_tables`) and on the paper's own: one row per statement with the simulated and
    the paper's quantity and whether each holds (``paper_holds`` is None where the paper
    publishes no number for it). Statements whose tables are not in ``df`` are left out."""
    import pandas as pd

    def key(r: Row) -> tuple[str, str]:
        return r.table, "-" if r.htb is None else f"{r.htb[0]}/{r.htb[1]}"

    sim = {(r.table, r.htb, r.station): r for r in df.itertuples()}
    have = set(df["table"])
    out = []
    for name, words, reading in STATEMENTS:
        for source in ("sim", "paper"):
            def mean(table: str, htb: str, k: int, source: str = source) -> float:
                if source == "paper":
                    row = next(r for r in ROWS if key(r) == (table, htb))
                    return float(row.mean[k])
                return float(sim[(table, htb, STATIONS[k])].mean_kbps)

            def total(table: str, htb: str, mean=mean) -> float:
                return mean(table, htb, 0) + mean(table, htb, 1)

            value, holds = _check(name, mean, total, sim, have, source)
            if value is None:
                break
            if source == "sim":
                row = {"claim": name, "text": words, "reading": reading, "simulated": value, "holds": holds}
            else:
                row.update(paper=value, paper_holds=holds)
        else:
            out.append(row)
    return pd.DataFrame(out, columns=["claim", "text", "reading", "simulated", "holds", "paper", "paper_holds"])


def _check(name: str, mean, total, sim, have: set[str], source: str) -> tuple[str | None, bool | None]:
    """One statement on one source: the quantity as text and whether it holds; (None, None)
    when its tables were not run."""
    def need(*tables: str) -> bool:
        return set(tables) <= have

    if name == "degraded" and need("III", "IV"):
        pairs = [(mean(t, "-", 0), mean(t, "-", 1)) for t in ("III", "IV")]
        return ", ".join(f"{a:.0f} / {b:.0f}" for a, b in pairs), all(a < (1 - TIE) * b for a, b in pairs)
    if name == "total 1.7" and need("IV"):
        t = total("IV", "-")
        return f"{t:.0f} kbit/s", abs(t - 1700) <= 170
    if name == "tcp less" and need("I", "II", "III", "IV"):
        pairs = [(total("II", "-"), total("I", "-")), (total("IV", "-"), total("III", "-"))]
        return ", ".join(f"{a:.0f} < {b:.0f}" for a, b in pairs), all(a < (1 - TIE) * b for a, b in pairs)
    if name == "similar" and need("I", "II"):
        ratios = [mean(t, h, k) / mean(t, "-", k) for t, h in (("I", "3000/3000"), ("II", "2400/2400")) for k in (0, 1)]
        return ", ".join(f"{x:.3f}" for x in ratios), all(abs(x - 1) <= 0.10 for x in ratios)
    if name == "1:1" and need("I", "II"):
        rows = [("I", "-"), ("I", "3000/3000"), ("II", "-"), ("II", "2400/2400")]
        ratios = [mean(t, h, 0) / mean(t, h, 1) for t, h in rows]
        return ", ".join(f"{x:.3f}" for x in ratios), all(abs(x - 1) <= 0.05 for x in ratios)
    if name == "five times" and need("III"):
        if source == "paper":
            return "-", None
        a, b = (float(sim[("III", "-", s)].airtime_per_attempt_us) for s in STATIONS)
        return f"{b / a:.2f}", 4 <= b / a <= 6
    if name == "four times" and need("III"):
        gain = mean("III", "2400/900", 0) - mean("III", "900/1300", 0)
        loss = mean("III", "900/1300", 1) - mean("III", "2400/900", 1)
        return f"{gain:.0f} / {loss:.0f}", loss > 0 and gain >= 3.5 * loss
    if name == "50 % gain" and need("III"):
        g = total("III", "2400/900") / total("III", "900/1300")
        return f"x{g:.3f}", g >= 1.45
    if name == "53 % gain" and need("IV"):
        g = total("IV", "1900/700") / total("IV", "500/1200")
        return f"x{g:.3f}", g >= 1.48
    return None, None


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
    statements = statement_claims(df)
    if not statements.empty:
        t = Table(title="Section IV's other statements (docs/repro-valenzuela.md)")
        for col in ("statement", "reading", "simulated", "holds", "paper", "holds on the paper"):
            t.add_column(col)
        for _, r in statements.iterrows():
            paper = "-" if r["paper_holds"] is None else ("yes" if r["paper_holds"] else "no")
            t.add_row(f"\"{r['text']}\"", r["reading"], r["simulated"], "yes" if r["holds"] else "NO", r["paper"], paper)
        tables.append(t)
    return tables
