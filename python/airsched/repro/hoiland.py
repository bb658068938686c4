# SPDX-License-Identifier: Apache-2.0
"""Høiland-Jørgensen: the testbed figures of the blog post on the WiFi performance anomaly and
the ath9k airtime fairness scheduler, and of "Bufferbloat mitigation in the WiFi stack - status
and next steps".

The testbed: an 802.11n AP with two fast stations (``fast1``, ``fast2``, MCS 15), one slow
station (``slow``, MCS 0) and a fourth station (``pingonly``) that only receives pings; a server
one Gigabit hop behind the AP sends a bulk flow (a 200 Mbit/s UDP flood, or a TCP download) to
each of the three bulk stations and pings all four every 100 ms. The AP runs one of four
configurations: FIFO (pfifo_fast over ath9k's driver FIFO), FQ-CoDel (an fq_codel qdisc over the
same FIFO), FQ-MAC (mac80211's per-TID FQ-CoDel queues, TIDs round robin) and Airtime (FQ-MAC
with ath9k's airtime fairness scheduler). The scenario files are ``scenarios/hoiland/udp.toml``
and ``tcp.toml``, one per traffic type; each configuration is a set of overrides of the AP's
queueing (:data:`CONFIGURATION_OVERRIDES`). :func:`run_testbed` runs every combination and
:func:`format_tables` prints the papers' figures as tables, beside what the papers' text states
(:data:`PAPER`).

    >>> from airsched.repro import hoiland
    >>> rep = hoiland.run_testbed("udp", duration="10s")
    >>> for table in hoiland.format_tables(rep.summary, "udp"):
    ...     rich.print(table)
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..runner import run
from ._compare import greater
from ._scenarios import display_path as _display_path
from ._scenarios import find_scenarios_dir as _find_scenarios_dir

if TYPE_CHECKING:
    import pandas as pd
    from rich.table import Table

    from ..result import Result

#: The traffic types: a UDP flood or a TCP download to each bulk station.
TRAFFICS: tuple[str, ...] = ("udp", "tcp")
TRAFFIC_LABELS: dict[str, str] = {"udp": "UDP", "tcp": "TCP"}
#: The four configurations of the testbed, in the papers' order (the ``ap.queueing`` spelling).
CONFIGURATIONS: tuple[str, ...] = ("fifo", "fq_codel", "fq-mac", "airtime")
#: The overrides that put the AP of the testbed's scenario in each configuration. FIFO is the
#: qdisc Linux installs by default, pfifo_fast, over ath9k's driver FIFO.
CONFIGURATION_OVERRIDES: dict[str, dict[str, str]] = {
    "fifo": {"ap.queueing": "fifo", "ap.tc": "tc qdisc add dev wlan0 root pfifo_fast"},
    "fq_codel": {"ap.queueing": "fq_codel"},
    "fq-mac": {"ap.queueing": "fq-mac"},
    "airtime": {"ap.queueing": "airtime"},
}
CONFIGURATION_LABELS: dict[str, str] = {
    "fifo": "FIFO",
    "fq_codel": "FQ-CoDel",
    "fq-mac": "FQ-MAC",
    "airtime": "Airtime",
}
#: The stations as the scenarios name them: three receive a bulk flow, the fourth only pings.
BULK_STATIONS: tuple[str, ...] = ("fast1", "fast2", "slow")
FAST_STATIONS: tuple[str, ...] = ("fast1", "fast2")
SLOW_STATION = "slow"
PING_ONLY = "pingonly"
STATIONS: tuple[str, ...] = (*BULK_STATIONS, PING_ONLY)
#: The configurations the blog's Figures 6 and 7 compare for the ping-only station.
PINGONLY_CONFIGURATIONS: tuple[str, ...] = ("fq-mac", "airtime")

#: The columns of the summary (:func:`run_testbed`'s ``summary``, the CSV), in order.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "traffic",
    "configuration",
    "station",
    "airtime_share",
    "airtime_down_s",
    "goodput_mbps",
    "ping_p50_ms",
    "ping_p90_ms",
    "ping_mean_ms",
    "ping_sent",
    "ping_answered",
    "ampdu_mean_down",
    "ampdu_mean_up",
    "tcp_retransmits",
)
#: How the CSV writes floats: 10 significant digits, so that binary noise
#: (``3817.2000000000003``) does not reach the file.
CSV_FLOAT_FORMAT = "%.10g"
#: The columns of :func:`totals`: one row per traffic type and configuration.
TOTAL_COLUMNS: tuple[str, ...] = (
    "traffic",
    "configuration",
    "throughput_mbps",
    "ping_mean_ms",
    "ping_sent",
    "ping_answered",
    "airtime_max_min",
)
#: The columns of the pings table: one row per answered ping.
PING_COLUMNS: tuple[str, ...] = ("traffic", "configuration", "station", "seq", "time_s", "rtt_ms")


class Paper(NamedTuple):
    """What a paper's text states for one quantity: its wording, the number it amounts to (None
    for a comparison) and where it is said."""

    text: str
    value: float | None
    source: str


_BLOG = "blog"
_NEXT = "next steps"

#: The papers' published values, where their text states them (the figures show more; nothing is
#: read off a plot here). Key: (traffic, quantity, configuration, station), where station is
#: "all" for the configuration as a whole and "fast" for both fast stations. Quantities:
#: ``airtime_share``, ``throughput_mbps`` (sum of the bulk flows), ``ping_mean_ms`` (mean ping to
#: the bulk stations), ``ping_p50_ms`` (median per station), ``pingonly`` (the ping-only
#: station's latency) and ``ampdu_mean_down``. "blog" is Høiland-Jørgensen's blog post on the
#: performance anomaly and the ath9k airtime scheduler, whose "mainline" is FIFO and whose
#: "softq-fq_codel" ("FQ-CoDel'ed intermediate queues") is FQ-MAC; "next steps" is
#: "Bufferbloat mitigation in the WiFi stack - status and next steps", section 3.2.
PAPER: dict[tuple[str, str, str, str], Paper] = {
    # blog, Fig. 1: "On mainline kernels, the performance anomaly is clearly visible, with the
    # slow station using significantly more airtime than the two others combined."
    ("udp", "airtime_share", "fifo", "slow"): Paper("> fast1 + fast2", None, f"{_BLOG} Fig. 1"),
    # blog, Fig. 1: "Switching to the mac80211-based intermediate queues already improves things a lot"
    ("udp", "airtime_share", "fq-mac", "all"): Paper("improves a lot", None, f"{_BLOG} Fig. 1"),
    # blog, Fig. 1: "Adding the airtime fairness scheduler results in almost perfect airtime
    # fairness between the three stations"; next steps, Fig. 3 (UDP traffic): "When the airtime
    # scheduler is enabled, perfect fairness is achieved."
    ("udp", "airtime_share", "airtime", "all"): Paper("1/3 each", 1 / 3, f"{_BLOG} Fig. 1, {_NEXT} Fig. 3"),
    # blog, Fig. 2: "The mainline kernel only achieves a median throughput of 20 Mbps to all three
    # stations. Switching to FQ-CoDel'ed intermediate queues improves this to just shy of 70 Mbps,
    # while adding the airtime fairness scheduler further increases aggregate throughput to just
    # over 100 Mbps."
    ("udp", "throughput_mbps", "fifo", "all"): Paper("~20", 20.0, f"{_BLOG} Fig. 2"),
    ("udp", "throughput_mbps", "fq-mac", "all"): Paper("just < 70", 70.0, f"{_BLOG} Fig. 2"),
    ("udp", "throughput_mbps", "airtime", "all"): Paper("just > 100", 100.0, f"{_BLOG} Fig. 2"),
    # blog, Fig. 2: "At the same time, latency decreases from around 300 ms (with a lot of
    # variance), to around 10. Most of this is due to the FQ-CoDel'ed intermediate queues, but the
    # airtime fairness scheduler does give it a slight notch further downwards."
    ("udp", "ping_mean_ms", "fifo", "all"): Paper("~300", 300.0, f"{_BLOG} Fig. 2"),
    ("udp", "ping_mean_ms", "fq-mac", "all"): Paper("~10", 10.0, f"{_BLOG} Fig. 2"),
    ("udp", "ping_mean_ms", "airtime", "all"): Paper("~10, a notch lower", 10.0, f"{_BLOG} Fig. 2"),
    # next steps, Figs. 3/4: "for FQ-CoDel the slow station would occupy all the queue space in the
    # driver, preventing the fast station from achieving full aggregation"; the better
    # aggregation for the fast stations "was observed for UDP as well in the case of FQ-MAC".
    ("udp", "ampdu_mean_down", "fq_codel", "fast"): Paper("not full", None, f"{_NEXT} Fig. 4"),
    ("udp", "ampdu_mean_down", "fq-mac", "fast"): Paper("full", None, f"{_NEXT} Fig. 4"),
    # blog, Fig. 6 (UDP): "In the UDP case, the benefit actually seems to materialise as expected,
    # giving a nice benefit for the fourth station."
    ("udp", "pingonly", "airtime", PING_ONLY): Paper("< FQ-MAC", None, f"{_BLOG} Fig. 6"),
    # blog, Figs. 3/4: "Switching to the mac80211 intermediate queues gives about the same
    # improvement in throughput and even more improvement in latency for one-way TCP flows as for
    # UDP flows. The additional gain for the airtime fairness is not quite as big, but still
    # present." next steps, Fig. 4 (TCP download): "The total effect is a net increase in
    # throughput. The increase from the FIFO case to FQ-CoDel and FQ-MAC is due to better
    # aggregation for the fast stations."
    ("tcp", "throughput_mbps", "fq_codel", "all"): Paper("> FIFO", None, f"{_NEXT} Fig. 4"),
    ("tcp", "throughput_mbps", "fq-mac", "all"): Paper("> FIFO", None, f"{_BLOG} Fig. 3, {_NEXT} Fig. 4"),
    ("tcp", "throughput_mbps", "airtime", "all"): Paper("> FQ-MAC", None, f"{_BLOG} Fig. 3, {_NEXT} Fig. 4"),
    ("tcp", "ampdu_mean_down", "fq_codel", "fast"): Paper("> FIFO", None, f"{_NEXT} Fig. 4"),
    ("tcp", "ampdu_mean_down", "fq-mac", "fast"): Paper("> FIFO", None, f"{_NEXT} Fig. 4"),
    # next steps, Fig. 2 (ICMP ping with TCP download traffic): "the FIFO case shows several
    # hundred milliseconds of latency when the link is saturated by a TCP download."
    ("tcp", "ping_p50_ms", "fifo", "all"): Paper("several 100", None, f"{_NEXT} Fig. 2"),
    # "FQ-CoDel alleviates this somewhat, but the slow station still sees latencies of more than
    # 200 ms in the median, and the fast stations around 35 ms."
    ("tcp", "ping_p50_ms", "fq_codel", "slow"): Paper("> 200", 200.0, f"{_NEXT} Fig. 2"),
    ("tcp", "ping_p50_ms", "fq_codel", "fast"): Paper("~35", 35.0, f"{_NEXT} Fig. 2"),
    # "With FQ-MAC, this is reduced so that the slow station now has the same median latency as
    # the fast one does in the FQ-CoDel case, while the fast stations get their latency reduced
    # by another 45%." (35 ms less 45 % is about 19 ms.)
    ("tcp", "ping_p50_ms", "fq-mac", "slow"): Paper("~35", 35.0, f"{_NEXT} Fig. 2"),
    ("tcp", "ping_p50_ms", "fq-mac", "fast"): Paper("~19", 35.0 * 0.55, f"{_NEXT} Fig. 2"),
    # "The airtime scheduler doesn't improve further upon this (other than to alter the shape of
    # the distribution slightly for the slow station, but retaining the same median)"
    ("tcp", "ping_p50_ms", "airtime", "slow"): Paper("~35", 35.0, f"{_NEXT} Fig. 2"),
    ("tcp", "ping_p50_ms", "airtime", "fast"): Paper("~19", 35.0 * 0.55, f"{_NEXT} Fig. 2"),
    # blog, Fig. 7 (TCP upload, traffic going to the stations): "the airtime scheduler gives the
    # fourth station slightly higher latency compared to the softq-fq_codel patch set."
    ("tcp", "pingonly", "airtime", PING_ONLY): Paper("slightly > FQ-MAC", None, f"{_BLOG} Fig. 7"),
}


def paper(traffic: str, quantity: str, configuration: str, station: str = "all") -> Paper | None:
    """The papers' statement for one quantity, or None where their text gives none. A fast
    station's value is looked up under "fast" too."""
    _check_choice("traffic", traffic, TRAFFICS)
    _check_choice("configuration", configuration, CONFIGURATIONS)
    found = PAPER.get((traffic, quantity, configuration, station))
    if found is None and station in FAST_STATIONS:
        found = PAPER.get((traffic, quantity, configuration, "fast"))
    return found


def paper_text(traffic: str, quantity: str, configuration: str) -> str:
    """Every statement of the papers about one quantity of one configuration, as one cell:
    e.g. ``"slow > 200, fast ~35"``; ``""`` if there is none."""
    parts = []
    for (t, q, c, station), value in PAPER.items():
        if (t, q, c) == (traffic, quantity, configuration):
            parts.append(value.text if station in ("all", PING_ONLY) else f"{station} {value.text}")
    return ", ".join(parts)


# ----- scenario files ------------------------------------------------------------------------


def find_scenarios_dir(scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    """The repository's ``scenarios/`` directory (the one holding ``hoiland/``); see
    :func:`airsched.repro.garroppo.find_scenarios_dir` for where it is looked for."""
    return _find_scenarios_dir(scenarios_dir, "hoiland", "udp.toml")


def scenario_file(traffic: str, *, scenarios_dir: str | os.PathLike[str] | None = None) -> Path:
    """The testbed's scenario for one traffic type, e.g. ``scenarios/hoiland/udp.toml``."""
    _check_choice("traffic", traffic, TRAFFICS)
    return find_scenarios_dir(scenarios_dir) / "hoiland" / f"{traffic}.toml"


def configuration_overrides(configuration: str) -> dict[str, str]:
    """The overrides of one configuration (a copy of :data:`CONFIGURATION_OVERRIDES`' entry)."""
    _check_choice("configuration", configuration, CONFIGURATIONS)
    return dict(CONFIGURATION_OVERRIDES[configuration])


def traffics(traffic: str) -> tuple[str, ...]:
    """The traffic types of a ``--traffic`` choice: ``"udp"``, ``"tcp"`` or ``"both"``."""
    _check_choice("traffic", traffic, (*TRAFFICS, "both"))
    return TRAFFICS if traffic == "both" else (traffic,)


_SECONDS = re.compile(r"^\s*\d+(\.\d*)?\s*$")


def normalize_duration(duration: str | float | None) -> str | None:
    """A run length as the simulator takes it: a number (or a string of one) is seconds,
    ``"10s"`` and ``"500ms"`` pass unchanged."""
    if duration is None:
        return None
    if isinstance(duration, bool):
        raise TypeError("duration must be seconds or a str with a unit, not bool")
    if isinstance(duration, (int, float)):
        return f"{duration}s"
    if isinstance(duration, str) and _SECONDS.match(duration):
        return f"{duration.strip()}s"
    return duration


# ----- running the testbed -------------------------------------------------------------------


@dataclass
class Reproduction:
    """The runs of :func:`run_testbed`: the summary rows, every answered ping, and each run's
    :class:`~airsched.Result` keyed by (traffic, configuration)."""

    summary: pd.DataFrame
    pings: pd.DataFrame
    results: dict[tuple[str, str], Result] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: The scenario file of each traffic type run, as the figures' titles name it
    #: (``scenarios/hoiland/udp.toml``).
    scenarios: dict[str, str] = field(default_factory=dict)
    #: The seed every run used (the scenarios' own where ``run_testbed`` was given None).
    seed: int | None = None

    @property
    def traffics(self) -> list[str]:
        return [t for t in TRAFFICS if t in set(self.summary["traffic"])]

    def totals(self) -> pd.DataFrame:
        return totals(self.summary)


def run_testbed(
    traffic: str = "both",
    duration: str | float | None = None,
    seed: int | None = 1,
    progress: Callable[[float], None] | None = None,
    *,
    configurations: Iterable[str] = CONFIGURATIONS,
    scenarios_dir: str | os.PathLike[str] | None = None,
) -> Reproduction:
    """Run every configuration's scenario for ``traffic`` (``"udp"``, ``"tcp"`` or ``"both"``).

    ``duration`` (seconds, or e.g. ``"10s"``) is the simulated time of each run, the scenarios'
    2 s warm-up included (default: their 32 s, 30 s measured); ``seed`` overrides theirs
    (``None`` keeps it). ``progress`` is called with the finished fraction of all the runs.
    Returns a :class:`Reproduction`: ``summary`` has one row per traffic type, configuration and
    station (:data:`SUMMARY_COLUMNS`), ``pings`` one per answered ping (:data:`PING_COLUMNS`).
    """
    import pandas as pd

    kinds = traffics(traffic)
    configurations = [_check_choice("configuration", c, CONFIGURATIONS) for c in configurations]
    if not configurations:
        raise ValueError("run_testbed needs at least one configuration")
    duration = normalize_duration(duration)
    runs = [(t, c) for t in kinds for c in configurations]
    rows: list[dict[str, Any]] = []
    pings: list[pd.DataFrame] = []
    results: dict[tuple[str, str], Result] = {}
    warnings: list[str] = []
    scenarios: dict[str, str] = {}
    for done, (t, c) in enumerate(runs):
        path = scenario_file(t, scenarios_dir=scenarios_dir)
        scenarios[t] = _display_path(path)
        sub = None if progress is None else _sub_progress(progress, done, len(runs))
        result = run(path, seed=seed, duration=duration, progress=sub, overrides=configuration_overrides(c))
        results[(t, c)] = result
        warnings.extend(w for w in result.warnings if w not in warnings)
        rows.extend(summary_rows(result, t, c))
        pings.append(ping_rows(result, t, c))
    summary = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    all_pings = pd.concat(pings, ignore_index=True) if pings else pd.DataFrame(columns=list(PING_COLUMNS))
    seeds = {int(r.summary["seed"]) for r in results.values()}
    run_seed = seeds.pop() if len(seeds) == 1 else seed
    return Reproduction(summary, all_pings, results, warnings, scenarios=scenarios, seed=run_seed)


def _sub_progress(progress: Callable[[float], None], done: int, total: int) -> Callable[[float], None]:
    def report(fraction: float) -> None:
        progress((done + fraction) / total)

    return report


def _bulk_flow(traffic: str, station: str) -> str:
    return f"{traffic}-{station}"


def _ping_flow(station: str) -> str:
    return f"ping-{station}"


def summary_rows(result: Result, traffic: str, configuration: str) -> list[dict[str, Any]]:
    """The summary rows (:data:`SUMMARY_COLUMNS`) of one run, one per station."""
    stations = result.stations.set_index("name")
    flows = result.flows.set_index("name")
    where = f"the {traffic}-{configuration} scenario"
    missing = [s for s in STATIONS if s not in stations.index]
    missing += [f for s in BULK_STATIONS if (f := _bulk_flow(traffic, s)) not in flows.index]
    missing += [f for s in STATIONS if (f := _ping_flow(s)) not in flows.index]
    if missing:
        raise ValueError(f"{where} has no station or flow {', '.join(missing)}")
    rows = []
    for station in STATIONS:
        st = stations.loc[station]
        ping = flows.loc[_ping_flow(station)]
        bulk = flows.loc[_bulk_flow(traffic, station)] if station in BULK_STATIONS else None
        rows.append(
            {
                "traffic": traffic,
                "configuration": configuration,
                "station": station,
                "airtime_share": float(st["airtime_down_share"]),
                "airtime_down_s": float(st["airtime_down_s"]),
                "goodput_mbps": math.nan if bulk is None else float(bulk["goodput_mbps"]),
                "ping_p50_ms": float(ping["rtt_p50_ms"]),
                "ping_p90_ms": float(ping["rtt_p90_ms"]),
                "ping_mean_ms": float(ping["rtt_mean_ms"]),
                "ping_sent": int(ping["sent_packets"]),
                "ping_answered": int(ping["rtt_samples"]),
                "ampdu_mean_down": float(st["ampdu_mean_down"]),
                "ampdu_mean_up": float(st["ampdu_mean_up"]),
                "tcp_retransmits": 0 if bulk is None else int(bulk["tcp_retransmits"]),
            }
        )
    return rows


def ping_rows(result: Result, traffic: str, configuration: str) -> pd.DataFrame:
    """Every answered ping of one run (:data:`PING_COLUMNS`), with the station it went to."""
    import pandas as pd

    by_flow = {_ping_flow(s): s for s in STATIONS}
    p = result.pings
    p = p[p["flow"].isin(list(by_flow))]
    return pd.DataFrame(
        {
            "traffic": traffic,
            "configuration": configuration,
            "station": p["flow"].map(by_flow).astype(str).to_numpy(),
            "seq": p["seq"].to_numpy(),
            "time_s": p["time_s"].to_numpy(),
            "rtt_ms": p["rtt_ms"].to_numpy(),
        },
        columns=list(PING_COLUMNS),
    )


def totals(summary: pd.DataFrame) -> pd.DataFrame:
    """Per traffic type and configuration (:data:`TOTAL_COLUMNS`): the bulk flows' summed
    goodput, the mean RTT of every answered ping to the three bulk stations (NaN if none came
    back), the pings sent and answered, and the largest over the smallest bulk station's airtime
    share."""
    import pandas as pd

    rows = []
    for (traffic, configuration), group in summary.groupby(["traffic", "configuration"], sort=False):
        bulk = group[group["station"].isin(BULK_STATIONS)]
        answered = int(bulk["ping_answered"].sum())
        weighted = (bulk["ping_mean_ms"] * bulk["ping_answered"])[bulk["ping_answered"] > 0].sum()
        shares = bulk["airtime_share"]
        rows.append(
            {
                "traffic": traffic,
                "configuration": configuration,
                "throughput_mbps": float(bulk["goodput_mbps"].sum()),
                "ping_mean_ms": float(weighted / answered) if answered else math.nan,
                "ping_sent": int(bulk["ping_sent"].sum()),
                "ping_answered": answered,
                "airtime_max_min": float(shares.max() / shares.min()) if shares.min() > 0 else math.inf,
            }
        )
    return pd.DataFrame(rows, columns=list(TOTAL_COLUMNS))


# ----- the papers' statements as checks ----------------------------------------------------------

class Claim(NamedTuple):
    """One statement of the papers (a :data:`PAPER` entry that is not a number to compare, or a
    bound), checked on one run: the key, the words, the numbers and whether it holds."""

    traffic: str
    quantity: str
    configuration: str
    station: str
    claim: str
    holds: bool
    measured: str


def check_claims(summary: pd.DataFrame) -> list[Claim]:
    """Every statement of :data:`PAPER` that is an ordering or a bound, checked on ``summary``
    (:data:`SUMMARY_COLUMNS`, one seed): the anomaly's airtime under FIFO, FQ-MAC's improvement,
    aggregation, the ping-only station, TCP's throughput ordering and latency bounds. Statements
    about a traffic type or configuration not in ``summary`` are left out. "Several hundred ms"
    is read as at least 200 ms at every station; "improves things a lot" as the slow station's
    airtime share falling by at least a quarter from FIFO; "full aggregation" as the fast
    stations' mean A-MPDU at least 0.9 of the largest any configuration reached for them, "not
    full" below 0.5 of it; "slightly higher" as higher by more than a tie and less than 1.5x."""
    tot = totals(summary).set_index(["traffic", "configuration"])
    cell = summary.set_index(["traffic", "configuration", "station"])

    def has(traffic: str, *configurations: str) -> bool:
        return all((traffic, c) in tot.index for c in configurations)

    def v(traffic: str, configuration: str, station: str, column: str) -> float:
        return float(cell.loc[(traffic, configuration, station), column])

    def fast(traffic: str, configuration: str, column: str) -> float:
        return sum(v(traffic, configuration, s, column) for s in FAST_STATIONS) / len(FAST_STATIONS)

    out: list[Claim] = []

    def add(key: tuple[str, str, str, str], holds: bool, measured: str) -> None:
        out.append(Claim(*key, PAPER[key].text, bool(holds), measured))

    t = "udp"
    if has(t, "fifo"):
        slow, f1, f2 = (v(t, "fifo", s, "airtime_share") for s in ("slow", "fast1", "fast2"))
        add((t, "airtime_share", "fifo", "slow"), greater(slow, f1 + f2), f"slow {slow:.3f}, fast1 + fast2 {f1 + f2:.3f}")
    if has(t, "fifo", "fq-mac"):
        a, b = v(t, "fifo", "slow", "airtime_share"), v(t, "fq-mac", "slow", "airtime_share")
        add((t, "airtime_share", "fq-mac", "all"), b <= 0.75 * a, f"slow station's share {a:.3f} (FIFO) -> {b:.3f} (FQ-MAC)")
    if has(t, "fq_codel", "fq-mac"):
        full = max(fast(t, c, "ampdu_mean_down") for c in CONFIGURATIONS if has(t, c))
        codel, fqmac = fast(t, "fq_codel", "ampdu_mean_down"), fast(t, "fq-mac", "ampdu_mean_down")
        add((t, "ampdu_mean_down", "fq_codel", "fast"), codel < 0.5 * full, f"fast stations {codel:.1f} MPDUs, largest {full:.1f}")
        add((t, "ampdu_mean_down", "fq-mac", "fast"), fqmac >= 0.9 * full, f"fast stations {fqmac:.1f} MPDUs, largest {full:.1f}")
    if has(t, "fq-mac", "airtime"):
        a, b = v(t, "fq-mac", PING_ONLY, "ping_p50_ms"), v(t, "airtime", PING_ONLY, "ping_p50_ms")
        add((t, "pingonly", "airtime", PING_ONLY), greater(a, b), f"ping-only p50 {b:.1f} ms (Airtime) against {a:.1f} (FQ-MAC)")
        a, b = float(tot.loc[(t, "fq-mac"), "ping_mean_ms"]), float(tot.loc[(t, "airtime"), "ping_mean_ms"])
        add((t, "ping_mean_ms", "airtime", "all"), greater(a, b), f"mean ping {b:.1f} ms (Airtime) against {a:.1f} (FQ-MAC): a notch lower")
    t = "tcp"
    for c, than in (("fq_codel", "fifo"), ("fq-mac", "fifo"), ("airtime", "fq-mac")):
        if has(t, c, than):
            a, b = float(tot.loc[(t, c), "throughput_mbps"]), float(tot.loc[(t, than), "throughput_mbps"])
            add((t, "throughput_mbps", c, "all"), greater(a, b), f"{a:.1f} against {b:.1f} Mb/s")
    for c in ("fq_codel", "fq-mac"):
        if has(t, c, "fifo"):
            a, b = fast(t, c, "ampdu_mean_down"), fast(t, "fifo", "ampdu_mean_down")
            add((t, "ampdu_mean_down", c, "fast"), greater(a, b), f"fast stations {a:.1f} against {b:.1f} MPDUs (FIFO)")
    if has(t, "fifo"):
        p50 = {s: v(t, "fifo", s, "ping_p50_ms") for s in STATIONS}
        add((t, "ping_p50_ms", "fifo", "all"), min(p50.values()) >= 200.0, ", ".join(f"{s} {x:.0f}" for s, x in p50.items()) + " ms")
    if has(t, "fq_codel"):
        x = v(t, "fq_codel", "slow", "ping_p50_ms")
        add((t, "ping_p50_ms", "fq_codel", "slow"), x > 200.0, f"slow station p50 {x:.0f} ms")
    if has(t, "fq-mac", "airtime"):
        a, b = v(t, "fq-mac", PING_ONLY, "ping_p50_ms"), v(t, "airtime", PING_ONLY, "ping_p50_ms")
        add((t, "pingonly", "airtime", PING_ONLY), greater(b, a) and b < 1.5 * a, f"ping-only p50 {b:.1f} ms (Airtime) against {a:.1f} (FQ-MAC)")
    return out


def paper_cells(summary: pd.DataFrame) -> list[tuple[str, float, float]]:
    """The cells where the papers' text gives a number to compare (a :data:`PAPER` entry with a
    value whose words are not a bound), as (cell, simulated, paper): UDP throughput and mean
    ping per configuration, the airtime scheduler's shares, the TCP medians per station."""
    tot = totals(summary).set_index(["traffic", "configuration"])
    cell = summary.set_index(["traffic", "configuration", "station"])
    out = []
    for (traffic, quantity, configuration, station), p in PAPER.items():
        if p.value is None or p.text.startswith((">", "<")) or (traffic, configuration) not in tot.index:
            continue
        if station == "all" and quantity in ("throughput_mbps", "ping_mean_ms"):
            out.append((f"{traffic} {configuration} {quantity}", float(tot.loc[(traffic, configuration), quantity]), p.value))
            continue
        stations = BULK_STATIONS if station == "all" else FAST_STATIONS if station == "fast" else (station,)
        for s in stations:
            out.append((f"{traffic} {configuration} {s} {quantity}", float(cell.loc[(traffic, configuration, s), quantity]), p.value))
    return out


# ----- the tables ------------------------------------------------------------------------------

#: The printed tables, in order: the key of each and what it shows.
TABLE_TITLES: dict[str, str] = {
    "airtime": "share of the AP's TX airtime per station, %",
    "throughput": "aggregate bulk throughput and mean ping to the bulk stations",
    "latency": "ping RTT per station, p50 / p90 ms",
    "pingonly": "ping RTT of the ping-only station, ms",
    "ampdu": "mean A-MPDU size to each station, MPDUs per PPDU",
}
#: The papers' figure (or text) each table stands for, per traffic type.
TABLE_FIGURES: dict[tuple[str, str], str] = {
    ("airtime", "udp"): "blog Fig. 1, next steps Fig. 3",
    ("airtime", "tcp"): "shown for UDP only",
    ("throughput", "udp"): "blog Fig. 2",
    ("throughput", "tcp"): "blog Fig. 3, next steps Fig. 4",
    ("latency", "udp"): "as next steps Fig. 2, which is TCP",
    ("latency", "tcp"): "next steps Fig. 2",
    ("pingonly", "udp"): "blog Fig. 6",
    ("pingonly", "tcp"): "blog Fig. 7",
    ("ampdu", "udp"): "next steps 3.2",
    ("ampdu", "tcp"): "next steps 3.2",
}


def table_title(key: str, traffic: str) -> str:
    """The title of one printed table, e.g. ``"UDP: share of the AP's TX airtime per station, %
    (blog Fig. 1, next steps Fig. 3)"``."""
    return f"{TRAFFIC_LABELS[traffic]}: {TABLE_TITLES[key]} ({TABLE_FIGURES[(key, traffic)]})"


def format_tables(summary: pd.DataFrame, traffic: str) -> list[Table]:
    """The papers' figures for one traffic type as rich Tables (see :data:`TABLE_TITLES`): our
    numbers, and beside them what the papers' text states (:data:`PAPER`). Cells the summary does
    not hold (or NaN: e.g. no ping answered) show "–"."""
    _check_choice("traffic", traffic, TRAFFICS)
    rows = summary[summary["traffic"] == traffic]
    if rows.empty:
        raise ValueError(f"the summary holds no {traffic} rows")
    cells = {(r.configuration, r.station): r for r in rows.itertuples(index=False)}
    configurations = [c for c in CONFIGURATIONS if c in set(rows["configuration"])]
    total = totals(rows).set_index("configuration")

    def value(configuration: str, station: str, column: str) -> float:
        r = cells.get((configuration, station))
        return math.nan if r is None else float(getattr(r, column))

    tables = []
    # (a) airtime shares
    table = _table(table_title("airtime", traffic))
    table.add_column("configuration", no_wrap=True)
    for station in BULK_STATIONS:
        table.add_column(station, justify="right", no_wrap=True)
    table.add_column("max/min", justify="right", no_wrap=True)
    table.add_column("paper", overflow="fold")
    for c in configurations:
        shares = [_fmt(100 * value(c, s, "airtime_share"), 1) for s in BULK_STATIONS]
        table.add_row(
            CONFIGURATION_LABELS[c], *shares, _fmt(total.loc[c, "airtime_max_min"], 2), paper_text(traffic, "airtime_share", c)
        )
    tables.append(table)
    # (b) aggregate throughput and mean ping
    table = _table(table_title("throughput", traffic))
    table.add_column("configuration", no_wrap=True)
    table.add_column("throughput\nMb/s", justify="right", no_wrap=True)
    table.add_column("paper\nMb/s", overflow="fold")
    table.add_column("mean ping\nms", justify="right", no_wrap=True)
    table.add_column("paper\nms", overflow="fold")
    table.add_column("pings\nanswered", justify="right", no_wrap=True)
    for c in configurations:
        t = total.loc[c]
        table.add_row(
            CONFIGURATION_LABELS[c],
            _fmt(t["throughput_mbps"], 1),
            paper_text(traffic, "throughput_mbps", c),
            _fmt(t["ping_mean_ms"], 1),
            paper_text(traffic, "ping_mean_ms", c),
            f"{int(t['ping_answered'])}/{int(t['ping_sent'])}",
        )
    tables.append(table)
    # (c) ping p50 / p90 per station
    table = _table(table_title("latency", traffic))
    table.add_column("configuration", no_wrap=True)
    for station in STATIONS:
        table.add_column(station, justify="right", no_wrap=True)
    table.add_column("paper p50", overflow="fold")
    for c in configurations:
        latencies = [
            f"{_fmt(value(c, s, 'ping_p50_ms'), 1)} / {_fmt(value(c, s, 'ping_p90_ms'), 1)}" for s in STATIONS
        ]
        table.add_row(CONFIGURATION_LABELS[c], *latencies, paper_text(traffic, "ping_p50_ms", c))
    tables.append(table)
    # (d) the ping-only station, FQ-MAC against Airtime
    table = _table(table_title("pingonly", traffic))
    table.add_column("configuration", no_wrap=True)
    for header in ("p50", "p90", "mean"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("answered", justify="right", no_wrap=True)
    table.add_column("paper", overflow="fold")
    for c in [c for c in PINGONLY_CONFIGURATIONS if c in configurations]:
        r = cells.get((c, PING_ONLY))
        answered = "–" if r is None else f"{r.ping_answered}/{r.ping_sent}"
        table.add_row(
            CONFIGURATION_LABELS[c],
            _fmt(value(c, PING_ONLY, "ping_p50_ms"), 1),
            _fmt(value(c, PING_ONLY, "ping_p90_ms"), 1),
            _fmt(value(c, PING_ONLY, "ping_mean_ms"), 1),
            answered,
            paper_text(traffic, "pingonly", c),
        )
    tables.append(table)
    # (e) mean A-MPDU size
    table = _table(table_title("ampdu", traffic))
    table.add_column("configuration", no_wrap=True)
    for station in BULK_STATIONS:
        table.add_column(station, justify="right", no_wrap=True)
    table.add_column("paper", overflow="fold")
    for c in configurations:
        sizes = [_fmt(value(c, s, "ampdu_mean_down"), 1) for s in BULK_STATIONS]
        table.add_row(CONFIGURATION_LABELS[c], *sizes, paper_text(traffic, "ampdu_mean_down", c))
    tables.append(table)
    return tables


def _table(title: str) -> Table:
    from rich import box
    from rich.table import Table

    # At least as wide as its title (up to 100 columns), so that the title stays one line.
    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        min_width=min(len(title), 100),
    )


def _fmt(value: float, decimals: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{decimals}f}"


# ----- figures ---------------------------------------------------------------------------------

#: Colours of the configurations in the figures.
CONFIGURATION_COLORS: dict[str, str] = {
    "fifo": "tab:red",
    "fq_codel": "tab:purple",
    "fq-mac": "tab:blue",
    "airtime": "tab:green",
}


def plot_airtime(
    summary: pd.DataFrame,
    traffic: str,
    path: str | os.PathLike[str],
    *,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Blog Fig. 1 / next steps Fig. 3: per configuration, a bar per bulk station of its share of
    the AP's TX airtime. Writes a PNG (or PDF, SVG: by the suffix) and returns its path; the
    title names the ``scenario`` and ``seed`` where given."""
    from ..plots import COLORS, new_figure, save, with_run

    rows = _rows_of(summary, traffic)
    configurations = [c for c in CONFIGURATIONS if c in set(rows["configuration"])]
    share = rows.set_index(["configuration", "station"])["airtime_share"]
    fig = new_figure()
    ax = fig.subplots()
    width = 0.8 / len(BULK_STATIONS)
    for k, station in enumerate(BULK_STATIONS):
        offset = (k - (len(BULK_STATIONS) - 1) / 2) * width
        heights = [100 * float(share.get((c, station), math.nan)) for c in configurations]
        ax.bar([i + offset for i in range(len(configurations))], heights, width=width, color=COLORS[station], label=station)
    ax.axhline(100 / 3, color="0.4", linestyle=":", linewidth=1, label="1/3 (fair)")
    ax.set_xticks(range(len(configurations)), [CONFIGURATION_LABELS[c] for c in configurations])
    ax.set_ylabel("share of the AP's TX airtime, %")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(with_run(f"{TRAFFIC_LABELS[traffic]}: per-station TX airtime", scenario, seed))
    return save(fig, path)


def plot_throughput(
    summary: pd.DataFrame,
    traffic: str,
    path: str | os.PathLike[str],
    *,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Blog Figs. 2-4: per configuration, the aggregate bulk throughput (bars, with the papers'
    stated value as a marker where the text gives one) and the mean ping to the bulk stations
    (points, right axis, log scale). Writes a PNG (or PDF, SVG) and returns its path."""
    from ..plots import figure_legend, new_figure, save, with_run

    total = totals(_rows_of(summary, traffic)).set_index("configuration")
    configurations = [c for c in CONFIGURATIONS if c in total.index]
    x = list(range(len(configurations)))
    fig = new_figure()
    ax = fig.subplots()
    ax.bar(
        x,
        [total.loc[c, "throughput_mbps"] for c in configurations],
        width=0.5,
        color=[CONFIGURATION_COLORS[c] for c in configurations],
        alpha=0.8,
        label="throughput (sim)",
    )
    marked = [(i, p.value) for i, c in enumerate(configurations) if (p := paper(traffic, "throughput_mbps", c)) and p.value]
    if marked:
        ax.plot([i for i, _ in marked], [v for _, v in marked], "k_", markersize=28, mew=2, label="throughput (paper)")
    ax.set_ylabel("aggregate throughput, Mbit/s")
    ax.set_ylim(bottom=0)
    ax.set_xticks(x, [CONFIGURATION_LABELS[c] for c in configurations])
    ax.grid(axis="y", alpha=0.3)
    twin = ax.twinx()
    pings = [total.loc[c, "ping_mean_ms"] for c in configurations]
    twin.plot(x, pings, "o", color="black", label="mean ping (sim)")
    marked = [(i, p.value) for i, c in enumerate(configurations) if (p := paper(traffic, "ping_mean_ms", c)) and p.value]
    if marked:
        twin.plot([i for i, _ in marked], [v for _, v in marked], "x", color="0.4", markersize=9, label="mean ping (paper)")
    finite = [v for v in pings if math.isfinite(v)] + [v for _, v in marked]
    if finite:
        twin.set_yscale("log")
        twin.set_ylim(min(finite) / 2, max(finite) * 2)
        _plain_log_labels(twin.yaxis, min(finite) / 2, max(finite) * 2)
    twin.set_ylabel("mean ping to the bulk stations, ms")
    figure_legend(fig, loc="outside lower center", ncols=4, fontsize="small")
    ax.set_title(with_run(f"{TRAFFIC_LABELS[traffic]}: aggregate throughput and mean ping", scenario, seed))
    return save(fig, path)


def plot_ping_cdf(
    pings: pd.DataFrame,
    traffic: str,
    path: str | os.PathLike[str],
    *,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Next steps Fig. 2: per configuration (one panel each), the CDF of the ping RTT to each
    station, log time axis. One legend names every station, those no ping came back from in
    any panel as such. Writes a PNG (or PDF, SVG) and returns its path."""
    from ..plots import COLORS, figure_legend, new_figure, save, with_run

    rows = pings[pings["traffic"] == traffic]
    fig = new_figure(height=6.0)
    grid = fig.subplots(2, 2, sharex=True, sharey=True, squeeze=False)
    answered: set[str] = set()
    for ax, configuration in zip(grid.flat, CONFIGURATIONS):
        here = rows[rows["configuration"] == configuration]
        drawn = 0
        for station in STATIONS:
            if _draw_cdf(ax, here[here["station"] == station]["rtt_ms"], color=COLORS[station], label=station):
                answered.add(station)
                drawn += 1
        if drawn == 0:
            ax.text(0.5, 0.5, "no ping answered", transform=ax.transAxes, ha="center", va="center", color="0.4")
        ax.set_title(CONFIGURATION_LABELS[configuration])
        ax.grid(alpha=0.3)
    _cdf_axes(grid[:, 0], grid[-1, :], rows["rtt_ms"])
    labels = _label_absent(grid.flat[0], [s for s in STATIONS if s not in answered], COLORS, "no ping answered")
    order = [s for s in STATIONS if s in answered] + labels
    figure_legend(fig, order, loc="outside lower center", ncols=len(STATIONS), fontsize="small")
    fig.suptitle(with_run(f"{TRAFFIC_LABELS[traffic]}: CDF of the ping RTT per station", scenario, seed))
    return save(fig, path)


def plot_pingonly_cdf(
    pings: pd.DataFrame,
    traffic: str,
    path: str | os.PathLike[str],
    *,
    scenario: str | os.PathLike[str] | None = None,
    seed: int | None = None,
) -> Path:
    """Blog Figs. 6 (UDP) and 7 (TCP): the CDF of the ping RTT to the ping-only station under
    FQ-MAC and under the airtime scheduler. Writes a PNG (or PDF, SVG) and returns its path."""
    from ..plots import new_figure, save, with_run

    rows = pings[(pings["traffic"] == traffic) & (pings["station"] == PING_ONLY)]
    fig = new_figure()
    ax = fig.subplots()
    absent = []
    for configuration in PINGONLY_CONFIGURATIONS:
        rtt = rows[rows["configuration"] == configuration]["rtt_ms"]
        label = CONFIGURATION_LABELS[configuration]
        if not _draw_cdf(ax, rtt, color=CONFIGURATION_COLORS[configuration], label=label):
            absent.append(configuration)
    ax.grid(alpha=0.3)
    _cdf_axes([ax], [ax], rows["rtt_ms"])
    if len(absent) == len(PINGONLY_CONFIGURATIONS):
        ax.text(0.5, 0.5, "no ping answered", transform=ax.transAxes, ha="center", va="center", color="0.4")
    colors = {CONFIGURATION_LABELS[c]: CONFIGURATION_COLORS[c] for c in absent}
    _label_absent(ax, list(colors), colors, "no ping answered")
    ax.legend(fontsize="small", loc="lower right")
    ax.set_title(with_run(f"{TRAFFIC_LABELS[traffic]}: CDF of the ping RTT to the ping-only station", scenario, seed))
    return save(fig, path)


def _label_absent(ax: Any, names: list[str], colors: dict[str, str], why: str) -> list[str]:
    """An empty, labelled series on ``ax`` for each of ``names`` (nothing to draw for it), so
    that the legend still names it and says why; returns the labels."""
    labels = []
    for name in names:
        label = f"{name} ({why})"
        ax.plot([], [], color=colors.get(name, "0.5"), label=label)
        labels.append(label)
    return labels


def _draw_cdf(ax: Any, rtt: pd.Series, **style: Any) -> int:
    values = sorted(float(v) for v in rtt)
    if not values:
        return 0
    n = len(values)
    ax.step(values, [(i + 1) / n for i in range(n)], where="post", **style)
    return 1


def _cdf_axes(left: Iterable[Any], bottom: Iterable[Any], rtt: pd.Series) -> None:
    for ax in left:
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1.02)
    for ax in bottom:
        ax.set_xlabel("ping RTT, ms")
        if len(rtt) and float(rtt.min()) > 0:
            ax.set_xscale("log")
            _plain_log_labels(ax.xaxis, float(rtt.min()), float(rtt.max()))


def _plain_log_labels(axis: Any, low: float, high: float) -> None:
    """Tick labels of a log axis as plain numbers (20, not 2 x 10^1); the 2, 3, ... ticks are
    labelled too where the data span less than two decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from ..plots import plain_number

    plain = FuncFormatter(lambda v, _: plain_number(v))
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain if math.log10(high / low) < 2 else NullFormatter())


def plot_all(
    rep: Reproduction | tuple[pd.DataFrame, pd.DataFrame],
    out_dir: str | os.PathLike[str],
    *,
    suffix: str = ".png",
) -> list[Path]:
    """Every figure of every traffic type run, as ``hoiland-<traffic>-{airtime,throughput,
    ping-cdf,pingonly-cdf}.png`` (or ``suffix`` ``".pdf"``, ``".svg"``) in ``out_dir``; returns
    their paths. ``rep`` is a :class:`Reproduction` (the titles then name each scenario file
    and the seed) or (summary, pings)."""
    summary, pings = (rep.summary, rep.pings) if isinstance(rep, Reproduction) else rep
    scenarios = rep.scenarios if isinstance(rep, Reproduction) else {}
    seed = rep.seed if isinstance(rep, Reproduction) else None
    out = Path(out_dir)
    paths = []
    for traffic in [t for t in TRAFFICS if t in set(summary["traffic"])]:
        stem = out / f"hoiland-{traffic}"
        run = {"scenario": scenarios.get(traffic), "seed": seed}
        paths.append(plot_airtime(summary, traffic, f"{stem}-airtime{suffix}", **run))
        paths.append(plot_throughput(summary, traffic, f"{stem}-throughput{suffix}", **run))
        paths.append(plot_ping_cdf(pings, traffic, f"{stem}-ping-cdf{suffix}", **run))
        paths.append(plot_pingonly_cdf(pings, traffic, f"{stem}-pingonly-cdf{suffix}", **run))
    return paths


def write(rep: Reproduction, out_dir: str | os.PathLike[str], *, runs: bool = True) -> list[Path]:
    """Write ``hoiland.csv`` (the summary rows) into ``out_dir`` and, with ``runs``, each run's
    tables (as ``airsched run --out`` does) into ``runs/<traffic>-<configuration>/``; returns
    the CSV's path and the run directories."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / "hoiland.csv"
    rep.summary.to_csv(csv, index=False, float_format=CSV_FLOAT_FORMAT)
    paths = [csv]
    if runs:
        for (traffic, configuration), result in rep.results.items():
            paths.append(result.write(out / "runs" / f"{traffic}-{configuration}"))
    return paths


def _rows_of(summary: pd.DataFrame, traffic: str) -> pd.DataFrame:
    _check_choice("traffic", traffic, TRAFFICS)
    rows = summary[summary["traffic"] == traffic]
    if rows.empty:
        raise ValueError(f"the summary holds no {traffic} rows")
    return rows


def _check_choice(option: str, value: str, allowed: Iterable[str]) -> str:
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"{option}: must be one of {', '.join(allowed)}, got {value!r}")
    return value

