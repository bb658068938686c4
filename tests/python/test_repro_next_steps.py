# SPDX-License-Identifier: Apache-2.0
"""`airsched repro next-steps`: every proposal against its baseline on both testbeds, in a bounded
form (4 s runs, seeds 1 and 2); AIRSCHED_SLOW=1 runs the files' own durations and 10 seeds."""

import math
import os

import pytest
from typer.testing import CliRunner

from airsched.cli import app
from airsched.repro import next_steps

SLOW = os.environ.get("AIRSCHED_SLOW") == "1"
DURATION = None if SLOW else next_steps.CI_DURATION
SEEDS = "1-10" if SLOW else "1,2"


def test_variants_add_only_their_keys():
    base = 'queueing = "fifo"\n[[station]]\nname = "slow"\nmcs = 15\n'
    assert 'mac_queue = "fq-mac"' in next_steps.variant_text(base, "hoiland", "baseline")
    assert 'min_rate = "3mbit"' in next_steps.variant_text(base, "hoiland", "min-rate")
    assert 'dynamic_aggregate_time = "1ms"' in next_steps.variant_text(base, "hoiland", "dynamic-aggregates-1ms")
    assert "airtime_cap" in next_steps.variant_text(base, "hoiland", "guest-cap-20")
    assert 'retry_budget = "4ms"' in next_steps.variant_text(base, "hoiland", "retry-budget-4ms")
    assert 'hw_queue_lead = "250us"' in next_steps.variant_text(base, "hoiland", "hw-queue-lead-250us")
    flood = next_steps.variant_text(base, "hoiland", "ef-flood")
    assert 'name = "ef-flood"' in flood and "admission_sojourn" not in flood
    assert 'admission_sojourn = "5ms"' in next_steps.variant_text(base, "hoiland", "ef-flood-admission-5ms")
    first = next_steps.variant_text(base, "hoiland", "ef-flood-station-first")
    assert 'schedule_order = "station-first"' in first and 'name = "ef-flood"' in first
    assert 'firmware_limit = "dql"' in next_steps.variant_text(base, "hoiland", "firmware-dql")
    fixed = next_steps.variant_text(base, "hoiland", "firmware-fixed-256")
    assert 'aggregation = "firmware"' in fixed and "firmware_limit" not in fixed
    assert "vo_piggyback = 1" in next_steps.variant_text(base, "hoiland", "vo-piggyback-1")
    ride = next_steps.variant_text(base, "hoiland", "ef-flood-vo-piggyback-1")
    assert "vo_piggyback = 1" in ride and 'name = "ef-flood"' in ride


@pytest.mark.slow
def test_next_steps_writes_one_csv_per_proposal_and_the_figure(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "repro",
            "next-steps",
            "--out",
            str(tmp_path),
            "--seeds",
            SEEDS,
            *(["--duration", DURATION] if DURATION else []),
            *([] if SLOW else ["--ci-form"]),
        ],
    )
    assert result.exit_code == 0, result.output
    import pandas as pd

    n_seeds = 10 if SLOW else 2

    def cells(v: str) -> int:
        return 1 if not SLOW and v in next_steps.SMALL_CELL_ONLY_IN_CI else 2

    for p in next_steps.PROPOSALS:
        df = pd.read_csv(tmp_path / f"next-steps-{p}.csv")
        assert set(df["testbed"]) == {"hoiland", "dense"}
        assert set(df["variant"]) == set(next_steps.PROPOSALS[p])
        assert len(df) == sum(cells(v) for v in next_steps.PROPOSALS[p]) * n_seeds
        assert df["throughput_mbps"].gt(0).all()
        summary = pd.read_csv(tmp_path / f"next-steps-{p}-summary.csv")
        assert {"mean", "ci_low", "ci_high"} <= set(summary.columns)
        assert f"next steps: {p}" in result.output
    assert (tmp_path / "next-steps-tradeoff.png").stat().st_size > 10_000
    pol = pd.read_csv(tmp_path / "next-steps-airtime-policies.csv")
    # The mechanisms act: 1:2:1 groups on the Høiland testbed give fast2 about twice fast1's air;
    # the guest cap holds the slow station to 20 %; the dense cell's VO probe stays fast.
    g = pol[(pol["testbed"] == "hoiland") & (pol["variant"] == "groups-1-2-1")]
    ratio = (g["airtime_share_fast2"] / g["airtime_share_fast1"]).mean()
    assert 1.7 < ratio < 2.3, ratio
    cap = pol[(pol["testbed"] == "hoiland") & (pol["variant"] == "guest-cap-20")]
    assert cap["airtime_share_slow"].max() < 0.30
    dense = pol[pol["testbed"] == "dense"]
    assert all(math.isfinite(x) and x < 20 for x in dense["vo_p50_ms"])
    # The firmware queue under BQL holds less than the fixed count: the testbed's pings wait less
    # and the airtime scheduler decides the order again; station first undoes the EF flood.
    fw = pd.read_csv(tmp_path / "next-steps-firmware.csv")
    fw = fw[fw["testbed"] == "hoiland"].groupby("variant").mean(numeric_only=True)
    assert fw.loc["firmware-dql", "ping_p50_ms"] < 0.7 * fw.loc["firmware-fixed-256", "ping_p50_ms"]
    assert fw.loc["firmware-dql", "jain"] > fw.loc["firmware-fixed-256", "jain"]
    qos = pd.read_csv(tmp_path / "next-steps-qos.csv")
    qos = qos[qos["testbed"] == "hoiland"].groupby("variant").mean(numeric_only=True)
    assert qos.loc["ef-flood-station-first", "jain"] > 0.95 > qos.loc["ef-flood", "jain"]
