# SPDX-License-Identifier: Apache-2.0
"""The Yip & Kwok reproduction (airsched.repro.yipkwok) and `airsched repro yip-kwok`.

The runs are bounded to 60 s of simulated time (AIRSCHED_SLOW=1: the paper's 800 s). The
summary and the observations are checked against hand-made series, the runs against what the
set-up implies: the imq0 line is the sum of wlan0 and bnep0, Bluetooth never exceeds what DH5
carries alone, and a shaper at imq0 holds Bluetooth to its class's rate."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pandas as pd
import pytest

from airsched import plots
from airsched.repro import yipkwok

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
DURATION = None if os.environ.get("AIRSCHED_SLOW") == "1" else "60s"


@pytest.fixture(scope="module")
def rep() -> yipkwok.Reproduction:
    return yipkwok.run_testbed(duration=DURATION)


def test_summary_of_hand_made_series() -> None:
    # 11 one-second samples 0..100 KB/s: mean 50, quantiles by linear interpolation.
    series = pd.DataFrame(
        {
            "configuration": ["fifo"] * 11,
            "series": ["aggregate"] * 11,
            "time_s": [float(t) for t in range(1, 12)],
            "kBps": [10.0 * i for i in range(11)],
        }
    )
    row = yipkwok.summarise(series).iloc[0]
    assert row["mean_kBps"] == pytest.approx(50.0)
    assert row["peak_kBps"] == pytest.approx(95.0)
    assert row["range_low_kBps"] == pytest.approx(10.0)
    assert row["range_high_kBps"] == pytest.approx(90.0)
    # 10 KB/s per second is 1000 KB/s per 100 s.
    assert row["trend_kBps_per_100s"] == pytest.approx(1000.0)


def _summary(values: dict[tuple[str, str], tuple[float, float, float]]) -> pd.DataFrame:
    rows = []
    for (c, s), (mean, low, high) in values.items():
        rows.append(
            {
                "configuration": c,
                "series": s,
                "mean_kBps": mean,
                "std_kBps": 1.0,
                "peak_kBps": high,
                "range_low_kBps": low,
                "range_high_kBps": high,
                "trend_kBps_per_100s": 0.0,
            }
        )
    return pd.DataFrame(rows)


def test_observations_on_a_table_that_matches_the_paper_and_one_that_does_not() -> None:
    paper_like = {
        ("fifo", "aggregate"): (450, 300, 620),  # the paper's SFQ peaks lower than FIFO and is steadier
        ("htb-sfq", "aggregate"): (500, 350, 600),
        ("prio-tbf", "aggregate"): (550, 400, 660),
        ("sfq", "aggregate"): (460, 300, 600),
        ("htb-sfq", "wlan"): (480, 420, 560),
        ("prio-tbf", "wlan"): (500, 410, 600),
        ("fifo", "bt"): (20, 10, 30),
        ("htb-sfq", "bt"): (20, 10, 30),
        ("prio-tbf", "bt"): (30, 10, 40),
        ("sfq", "bt"): (20, 10, 30),
    }
    checks = {o.claim.split(" (")[0]: o.holds for o in yipkwok.observations(_summary(paper_like))}
    assert all(checks.values()), checks
    reversed_ = dict(paper_like)
    reversed_[("fifo", "aggregate")] = (600, 300, 700)  # FIFO best, and widest
    reversed_[("htb-sfq", "wlan")] = (390, 350, 500)  # WLAN dips below 400 KB/s
    reversed_[("sfq", "bt")] = (85, 80, 90)  # Bluetooth at what DH5 carries alone
    got = {o.claim: o.holds for o in yipkwok.observations(_summary(reversed_))}
    failed = {claim for claim, holds in got.items() if not holds}
    assert any(c.startswith("HTB+SFQ keeps the WLAN") for c in failed)
    assert any(c.startswith("Bluetooth is suppressed") for c in failed)
    assert any(c.startswith("ranking") for c in failed)
    assert any(c.startswith("SFQ performs much like FIFO") for c in failed)
    assert not any(c.startswith("PRIO+TBF keeps the WLAN") for c in failed)


@pytest.mark.slow
def test_the_aggregate_is_the_sum_of_the_two_radios(rep: yipkwok.Reproduction) -> None:
    # imq0 releases every packet to wlan0 or bnep0 at once: per run, its bytes equal theirs
    # (each device counts the packet again, the paper's reason to read imq0 as the aggregate).
    mean = rep.summary.set_index(["configuration", "series"])["mean_kBps"]
    for c in yipkwok.CONFIGURATIONS:
        assert mean[(c, "aggregate")] == pytest.approx(mean[(c, "wlan")] + mean[(c, "bt")], rel=0.02)
        assert mean[(c, "wlan")] > 100.0


@pytest.mark.slow
def test_bluetooth_never_exceeds_dh5_and_the_shapers_hold_it(rep: yipkwok.Reproduction) -> None:
    mean = rep.summary.set_index(["configuration", "series"])["mean_kBps"]
    for c in yipkwok.CONFIGURATIONS:
        assert 0.0 < mean[(c, "bt")] <= yipkwok.BT_ALONE_KBPS * 1.02
    # PRIO+TBF's Bluetooth band is a 400 kbit/s TBF (50 KB/s of IP; bnep0 counts 14 bytes more
    # per packet): Bluetooth may not exceed it.
    assert mean[("prio-tbf", "bt")] <= 400e3 / 8 / yipkwok.KB * (1514 / 1500) * 1.03


@pytest.mark.slow
def test_command_prints_the_tables_and_writes_the_files(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from airsched.cli import app

    out = tmp_path / "yk"
    result = CliRunner().invoke(app, ["repro", "yip-kwok", "--duration", "20s", "--out", str(out), "--plot"])
    assert result.exit_code == 0, result.output
    for word in ("PRIO+TBF", "HTB+SFQ", "major range", "ranking", "Bluetooth is suppressed"):
        assert word in result.output
    summary = pd.read_csv(out / "yip-kwok.csv")
    assert set(summary["configuration"]) == set(yipkwok.CONFIGURATIONS)
    assert set(summary["series"]) == {"wlan", "bt", "aggregate"}
    series = pd.read_csv(out / "yip-kwok-series.csv")
    assert len(series) == 4 * 3 * 15  # 15 one-second samples after the 5 s warm-up
    png = (out / "yip-kwok.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (round(11.0 * plots.DPI), round((2.4 * 4 + 0.8) * plots.DPI))
    assert (out / "runs" / "prio-tbf" / "interfaces.parquet").exists()


def test_a_tie_is_not_an_ordering_in_the_ranking() -> None:
    mean = {"fifo": 425.0, "sfq": 440.0, "htb-sfq": 452.0, "prio-tbf": 515.0}
    assert yipkwok.ranking_agrees(mean)
    # SFQ and FIFO within 1 %: a tie, which is not the paper's SFQ > FIFO.
    tie = {**mean, "sfq": 425.1}
    assert yipkwok.ranking_text(tie) == "PRIO+TBF 515 > HTB+SFQ 452 > SFQ 425 = FIFO 425"
    assert not yipkwok.ranking_agrees(tie)
    # FIFO ahead of SFQ by 2 %: against the paper's order.
    assert not yipkwok.ranking_agrees({**mean, "fifo": 449.0})


def _series(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    frames = [
        pd.DataFrame({"configuration": c, "series": s, "time_s": [6.0 + k for k in range(len(v))], "kBps": v})
        for (c, s), v in values.items()
    ]
    return pd.concat(frames, ignore_index=True)


def _time_claims(values: dict[tuple[str, str], list[float]]) -> dict[str, bool]:
    series = _series(values)
    summary = yipkwok.summarise(series)
    return {o.claim.split(" (")[0]: o.holds for o in yipkwok.observations(summary, series)}


def test_the_statements_about_time_on_series_made_to_satisfy_them_and_on_flat_ones() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    n = 795
    t = np.arange(n, dtype=float)
    cycles = 40.0 * np.sin(2 * np.pi * t / 5.0) + 40.0 * np.sin(2 * np.pi * t / 95.0)
    made: dict[tuple[str, str], list[float]] = {}
    for c in yipkwok.CONFIGURATIONS:
        wlan = 450.0 + cycles + rng.normal(0.0, 10.0, n)
        bt = 30.0 + rng.normal(0.0, 3.0, n)
        if c == "fifo":
            wlan = wlan - 100.0 * t / n  # the WLAN, and with it the peak, declines
        if c == "htb-sfq":
            wlan = wlan + np.where(t > 700, 120.0, 0.0)  # the peak rises at the end
        if c == "prio-tbf":
            bt = bt + 15.0 * t / n  # Bluetooth rises, the WLAN does not fall
        made[(c, "wlan")] = list(wlan)
        made[(c, "bt")] = list(bt)
        made[(c, "aggregate")] = list(wlan + bt)
    got = _time_claims(made)
    for claim in (
        "the WLAN fluctuates with a cycle of 5 s in every configuration",
        "the WLAN fluctuates with a cycle of 90-100 s in every configuration",
        "Bluetooth fluctuates with no clear cycle",
        "FIFO: the peak of the aggregate trends gradually downward",
        "FIFO: the WLAN deteriorates gradually",
        "HTB+SFQ: the peak rises above its steady level toward the end",
        "PRIO+TBF: Bluetooth rises over the run",
        "PRIO+TBF: the WLAN does not deteriorate while Bluetooth rises",
        "no configuration but PRIO+TBF has Bluetooth rising",
        "SFQ: no clear downward or upward trend of the peak",
    ):
        assert got[claim], claim
    # White noise around flat levels, and a Bluetooth line that wanders slowly (as a shaped one
    # does): no cycle, no trend, nothing rising at the end. A slow wander is correlated at every
    # lag but is not a cycle.
    flat: dict[tuple[str, str], list[float]] = {}
    walk = 30.0 + np.cumsum(rng.normal(0.0, 0.2, n))
    for c in yipkwok.CONFIGURATIONS:
        wlan = 450.0 + rng.normal(0.0, 10.0, n)
        flat[(c, "wlan")] = list(wlan)
        flat[(c, "bt")] = list(walk)
        flat[(c, "aggregate")] = list(wlan + 30.0)
    got = _time_claims(flat)
    assert yipkwok.autocorrelation(walk, 5) > 0.5
    for claim in (
        "the WLAN fluctuates with a cycle of 5 s in every configuration",
        "the WLAN fluctuates with a cycle of 90-100 s in every configuration",
        "FIFO: the peak of the aggregate trends gradually downward",
        "FIFO: the WLAN deteriorates gradually",
        "HTB+SFQ: the peak rises above its steady level toward the end",
        "PRIO+TBF: Bluetooth rises over the run",
    ):
        assert not got[claim], claim
    assert got["Bluetooth fluctuates with no clear cycle"]
    assert got["SFQ: no clear downward or upward trend of the peak"]


def test_paper_cells_hold_the_peaks_ranges_and_extremes() -> None:
    values = {(c, "aggregate"): [100.0 + k for k in range(200)] for c in yipkwok.CONFIGURATIONS}
    values[("prio-tbf", "aggregate")][17] = 725.0
    series = _series(values)
    cells = {name: (sim, ref) for name, sim, ref in yipkwok.paper_cells(yipkwok.summarise(series), series)}
    assert cells["extreme low of the aggregate (all configurations)"] == (100.0, 100.0)
    assert cells["extreme high of the aggregate (all configurations)"] == (725.0, 700.0)
    assert cells["prio-tbf aggregate peak"][1] == 660.0
    assert "fifo aggregate peak" not in cells  # the paper gives FIFO's peak no number
    # 11 peaks and ranges, 2 extremes; without the samples, no extremes.
    assert len(cells) == 13
    assert len(yipkwok.paper_cells(yipkwok.summarise(series))) == 11


def test_the_papers_own_numbers_pass_its_steadiness_and_ranking_statements() -> None:
    # The paper's ranges (Section IV) as a summary, means at the middle of each range.
    values = {}
    for c, p in yipkwok.PAPER.items():
        values[(c, "aggregate")] = ((p.low + p.high) / 2 + (10 if c == "sfq" else 0), p.low, p.high)
    got = {o.claim.split(" (")[0]: o.holds for o in yipkwok.observations(_summary(values))}
    assert got["PRIO+TBF is the steadiest"]
    assert got["ranking PRIO+TBF > HTB+SFQ > SFQ > FIFO"]
