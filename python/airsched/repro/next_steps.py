# SPDX-License-Identifier: Apache-2.0
"""``airsched repro next-steps``: the next-steps paper's proposals (Høiland-Jørgensen, NetDev 2.2,
§4) against their baseline, on the Høiland testbed and on a denser 12-station cell, over seeds
through the sweep engine (docs/next-steps.md).

Each proposal is a list of variants of the AP's configuration (the first is the baseline: FQ-MAC
under mac80211's airtime scheduler with AQL); each variant is written as a scenario file into
``DIR/scenarios/`` and run for every seed by :func:`airsched.sweeps.execute`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._scenarios import find_scenarios_dir

#: The testbeds: name -> scenario file under scenarios/.
TESTBEDS = {"hoiland": "hoiland/udp.toml", "dense": "next-steps/dense.toml"}

#: Bulk stations' groups and the policy variants' TOML per testbed.
_POLICY = {
    "hoiland": {
        "groups-1-2-1": '[[airtime_group]]\nname = "a"\nweight = 1\nstations = ["fast1"]\n'
        '[[airtime_group]]\nname = "b"\nweight = 2\nstations = ["fast2"]\n'
        '[[airtime_group]]\nname = "c"\nweight = 1\nstations = ["slow", "pingonly"]\n',
        "guest-cap-20": '[[airtime_group]]\nname = "guests"\nstations = ["slow"]\nairtime_cap = "20%"\n',
        "min-rate": ("slow", "3mbit"),
    },
    "dense": {
        "groups-1-2-1": '[[airtime_group]]\nname = "a"\nweight = 1\nstations = ["f1", "f2", "f3"]\n'
        '[[airtime_group]]\nname = "b"\nweight = 2\nstations = ["f4", "f5", "f6", "v1", "s1"]\n'
        '[[airtime_group]]\nname = "c"\nweight = 1\nstations = ["s2", "s3", "s4", "g1"]\n',
        "guest-cap-20": '[[airtime_group]]\nname = "guests"\nstations = ["g1", "s3"]\nairtime_cap = "20%"\n',
        "min-rate": ("s2", "1mbit"),
    },
}

#: Proposal -> its variants (the first is the baseline).
PROPOSALS: dict[str, list[str]] = {
    "airtime-policies": ["baseline", "groups-1-2-1", "guest-cap-20", "min-rate"],
    "latency": [
        "baseline",
        "dynamic-aggregates-1ms",
        "retry-budget-4ms",
        "retry-budget-8ms-sojourn",
        "hw-queue-lead-250us",
    ],
    "firmware": ["firmware-fixed-256", "firmware-dql", "baseline"],
    "qos": [
        "baseline",
        "vo-piggyback-1",
        "ef-flood",
        "ef-flood-admission-5ms",
        "ef-flood-station-first",
        "ef-flood-vo-piggyback-1",
    ],
}

#: The variants CI's bounded form (``--ci-form``) runs on the Høiland testbed only, to keep it short.
SMALL_CELL_ONLY_IN_CI = frozenset(
    {"firmware-fixed-256", "firmware-dql", "vo-piggyback-1", "ef-flood-station-first", "ef-flood-vo-piggyback-1"}
)

#: The QoS variants' misbehaving flow: 100 Mbit/s of UDP marked EF (VO) to a fast station.
_EF_FLOOD_TO = {"hoiland": "fast1", "dense": "f1"}

#: Variants that add ``[ap]`` keys to the baseline (docs/next-steps-latency.md).
_AP_VARIANTS = {
    "dynamic-aggregates-1ms": 'dynamic_aggregate_time = "1ms"',
    "retry-budget-4ms": 'retry_budget = "4ms"',
    "retry-budget-8ms-sojourn": 'retry_budget = "8ms"\nretry_budget_sojourn = true',
    "hw-queue-lead-250us": 'hw_queue_lead = "250us"',
    "firmware-fixed-256": 'aggregation = "firmware"\nfirmware_frames = 256',
    "firmware-dql": 'aggregation = "firmware"\nfirmware_frames = 256\nfirmware_limit = "dql"',
    "vo-piggyback-1": "vo_piggyback = 1",
}

#: The ``ef-flood`` variants' ``[ap]`` keys.
_EF_FLOOD_AP = {
    "ef-flood-admission-5ms": 'admission_sojourn = "5ms"',
    "ef-flood-station-first": 'schedule_order = "station-first"',
    "ef-flood-vo-piggyback-1": "vo_piggyback = 1",
}

#: Columns of the tables, in order, with their headings (the runs column counts the last one's
#: values, so it is one every run has).
METRICS = {
    "vo_p50_ms": "VO p50, ms",
    "vo_p99_ms": "VO p99, ms",
    "ping_p50_ms": "ping p50, ms",
    "ping_p99_ms": "ping p99, ms",
    "jain": "Jain (airtime)",
    "share_min": "airtime share min",
    "share_max": "airtime share max",
    "retry_drops": "retry drops",
    "throughput_mbps": "throughput, Mb/s",
}

#: The bounded form CI runs.
CI_DURATION = "4s"
CI_SEEDS = (1, 2)


def variant_text(base: str, testbed: str, variant: str) -> str:
    """The scenario of ``variant`` on ``testbed`` (``base``: the testbed file's text): the
    Høiland file's queueing becomes FQ-MAC + mac80211 + AQL, then the variant's keys."""
    text = base.replace('queueing = "fifo"', 'mac_queue = "fq-mac"\nairtime = "mac80211"')
    if variant == "baseline":
        return text
    if variant.startswith("ef-flood"):
        dst = _EF_FLOOD_TO[testbed]
        text += (
            f'\n[[flow]]\nname = "ef-flood"\nsrc = "server"\ndst = "{dst}"\nrate = "100Mbit"\n'
            "size = 1472\ndscp = 46\n"
        )
        if variant in _EF_FLOOD_AP:
            text = text.replace('airtime = "mac80211"', f'airtime = "mac80211"\n{_EF_FLOOD_AP[variant]}', 1)
        return text
    if variant in _AP_VARIANTS:
        return text.replace('airtime = "mac80211"', f'airtime = "mac80211"\n{_AP_VARIANTS[variant]}', 1)
    spec = _POLICY[testbed][variant]
    if isinstance(spec, tuple):
        station, rate = spec
        marker = f'name = "{station}"\n'
        return text.replace(marker, f'{marker}min_rate = "{rate}"\n', 1)
    return text + "\n" + spec


@dataclass
class Report:
    """What :func:`run` measured: one row per testbed, proposal, variant and seed."""

    rows: Any  # pandas.DataFrame
    shares: Any  # per station airtime share rows
    out: Path
    warnings: list[str] = field(default_factory=list)


def _jain(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x == x]
    if not xs or sum(xs) == 0:
        return math.nan
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def _pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, NaN without values."""
    xs = sorted(values)
    if not xs:
        return math.nan
    return xs[max(0, math.ceil(q / 100 * len(xs)) - 1)]


def run(
    out: str | os.PathLike[str],
    *,
    duration: str | None = None,
    seeds: Sequence[int] = tuple(range(1, 11)),
    testbeds: Sequence[str] = tuple(TESTBEDS),
    jobs: int | None = None,
    scenarios_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
    small_only: Collection[str] = (),
) -> Report:
    """Write every variant's scenario into ``out/scenarios``, run them for ``seeds`` through the
    sweep engine (runs kept in ``out/runs``, reused when present) and measure each run. The
    variants in ``small_only`` run on the first testbed only."""
    import pandas as pd

    from ..sweeps import SCENARIO, Axis, Sweep, collect, execute

    out = Path(out)
    sdir = find_scenarios_dir(scenarios_dir, "next-steps", "dense.toml")
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    variants = list(dict.fromkeys(v for vs in PROPOSALS.values() for v in vs))
    points = []
    for tb in testbeds:
        base = (sdir / TESTBEDS[tb]).read_text(encoding="utf-8")
        for v in variants:
            if v in small_only and tb != testbeds[0]:
                continue
            path = out / "scenarios" / f"{tb}-{v}.toml"
            path.write_text(variant_text(base, tb, v), encoding="utf-8")
            settings: dict[str, Any] = {SCENARIO: str(path.resolve())}
            if duration is not None:
                settings["run.duration"] = duration
            points.append((f"{tb}/{v}", settings))
    sweep = Sweep(
        path=str(out / "next-steps.sweep"),
        name="next-steps",
        scenario=None,
        axes=[Axis("case", tuple(points), 1)],
        fixed=[],
        seeds=list(seeds),
    )
    outcome = execute(sweep, out, jobs=jobs, progress=progress)
    warnings = [f"run {f['params']} failed: {f.get('error', '')}" for f in outcome.failed]
    stations = collect(out, "stations")
    flows = collect(out, "flows")
    pings = collect(out, "pings")
    rows, shares = [], []
    for (case, seed), st in stations.groupby(["case", "seed"], sort=False):
        tb, v = case.split("/")
        fl = flows[(flows["case"] == case) & (flows["seed"] == seed)]
        pg = pings[(pings["case"] == case) & (pings["seed"] == seed)]
        bulk = fl[(fl["protocol"] != "ping") & ~fl["name"].str.contains(r"\.") & ~fl["name"].str.startswith("voip")]
        down_dst = set(bulk[bulk["src"] == "server"]["dst"])
        vo = pg[pg["flow"].str.startswith("vo-ping")]["rtt_ms"].tolist()
        other = pg[~pg["flow"].str.startswith("vo-ping")]["rtt_ms"].tolist()
        bulk_shares = st[st["name"].isin(down_dst)]["airtime_down_share"].tolist()
        row = {
            "testbed": tb,
            "variant": v,
            "seed": int(seed),
            "throughput_mbps": float(bulk["goodput_mbps"].sum()),
            "jain": _jain(bulk_shares),
            "share_min": min(bulk_shares, default=math.nan),
            "share_max": max(bulk_shares, default=math.nan),
            "retry_drops": float(st["drops_retry"].sum()),
            "ping_p50_ms": _pct(other, 50),
            "ping_p99_ms": _pct(other, 99),
            "vo_p50_ms": _pct(vo, 50),
            "vo_p99_ms": _pct(vo, 99),
        }
        rows.append(row)
        for _, s in st.iterrows():
            shares.append(
                {
                    "testbed": tb,
                    "variant": v,
                    "seed": int(seed),
                    "station": s["name"],
                    "airtime_share": s["airtime_down_share"],
                    "goodput_down_mbps": s["goodput_down_mbps"],
                }
            )
    return Report(pd.DataFrame(rows), pd.DataFrame(shares), out, warnings)


def summary(rep: Report, proposal: str) -> Any:
    """Mean and 95 % Student-t interval of every metric per testbed and variant of ``proposal``."""
    from ..stats import summarize

    df = rep.rows[rep.rows["variant"].isin(PROPOSALS[proposal])]
    return summarize(df, ["testbed", "variant"], list(METRICS))


def tables(rep: Report) -> list[Any]:
    """One rich table per proposal."""
    from ..stats import stats_table

    return [stats_table(summary(rep, p), ["testbed", "variant"], f"next steps: {p}") for p in PROPOSALS]


def write(rep: Report) -> list[Path]:
    """``next-steps-<proposal>.csv`` (one row per testbed, variant and seed, with each station's
    airtime share and downlink goodput as columns) and the summaries beside them."""
    paths = []
    wide = rep.shares.pivot_table(
        index=["testbed", "variant", "seed"], columns="station", values=["airtime_share", "goodput_down_mbps"]
    )
    wide.columns = [f"{a}_{s}" for a, s in wide.columns]
    merged = rep.rows.merge(wide.reset_index(), on=["testbed", "variant", "seed"], how="left")
    for p, vs in PROPOSALS.items():
        path = rep.out / f"next-steps-{p}.csv"
        merged[merged["variant"].isin(vs)].to_csv(path, index=False, float_format="%.10g")
        paths.append(path)
        spath = rep.out / f"next-steps-{p}-summary.csv"
        summary(rep, p).to_csv(spath, index=False, float_format="%.10g")
        paths.append(spath)
    return paths


def plot(rep: Report) -> Path:
    """The latency/throughput trade-off: per testbed, every variant's mean throughput against its
    mean ping p99, with 95 % intervals on both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..stats import mean_ci

    testbeds = list(dict.fromkeys(rep.rows["testbed"]))
    fig, axes = plt.subplots(1, len(testbeds), figsize=(6 * len(testbeds), 4.5), squeeze=False)
    # One colour and marker per variant (more variants than one colour cycle holds).
    variants = list(dict.fromkeys(rep.rows["variant"]))
    colours = plt.get_cmap("tab20").colors
    markers = "os^vDP*X<>ph"
    for ax, tb in zip(axes[0], testbeds):
        for v, g in rep.rows[rep.rows["testbed"] == tb].groupby("variant", sort=False):
            _, x, _, xh = mean_ci(g["throughput_mbps"])
            _, y, _, yh = mean_ci(g["ping_p99_ms"])
            k = variants.index(v)
            ax.errorbar(
                x,
                y,
                xerr=0 if xh != xh else xh,
                yerr=0 if yh != yh else yh,
                fmt=markers[k % len(markers)],
                color=colours[k % len(colours)],
                capsize=3,
                label=v,
            )
        ax.set_xlabel("throughput of the bulk flows, Mb/s")
        ax.set_ylabel("ping RTT p99, ms")
        ax.set_title(f"{tb}: latency against throughput ({rep.rows['seed'].nunique()} seeds)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = rep.out / "next-steps-tradeoff.png"
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path
