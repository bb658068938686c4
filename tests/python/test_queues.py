"""`--queues`: queue length per interface and queueing delay per flow over time, read from the
run without changing it, and agreeing with the run's own totals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import airsched
from airsched import report

ROOT = Path(__file__).resolve().parents[2]
BUFFERBLOAT = ROOT / "scenarios" / "tcp-bufferbloat.toml"


@pytest.fixture(scope="module")
def traced():
    overrides = {"run.warmup": "0s"}
    return airsched.run(BUFFERBLOAT, duration="4s", overrides=overrides, queues=True), airsched.run(BUFFERBLOAT, duration="4s", overrides=overrides)


def test_results_are_the_same_with_the_trace(traced) -> None:
    with_trace, without = traced
    for table in ("stations", "flows", "samples", "pings"):
        pd.testing.assert_frame_equal(getattr(with_trace, table), getattr(without, table))
    assert without.queues is None and without.flow_delays is None


def test_trace_has_every_interface_and_flow_at_every_sample(traced) -> None:
    r, _ = traced
    times = sorted(set(r.samples["time_s"]))
    q, d = r.queues, r.flow_delays
    assert sorted(set(q["time_s"])) == times and sorted(set(d["time_s"])) == times
    ifaces = {(i["node"], i["dev"]) for i in r.tc}
    assert set(zip(q["node"], q["dev"])) == ifaces
    assert len(q) == len(times) * len(ifaces) and len(d) == len(times) * len(r.flows)
    # The bottleneck is the AP's radio: its queue builds, the server's stays short.
    ap = q[(q["node"] == "ap") & (q["dev"] == "wlan0")]["qlen"]
    assert ap.max() > 20


def test_per_interval_delays_add_up_to_the_flow_totals(traced) -> None:
    r, _ = traced
    d = r.flow_delays
    flows = r.flows.set_index("name")
    for name, rows in d.groupby("flow"):
        received = rows["received"].sum()
        # Samples tile the run from 0 (no warm-up) to its end: every received packet is in one.
        assert received == flows.loc[name, "received_packets"]
        if received:
            got = rows["queue_delay_ms"].fillna(0).mul(rows["received"]).sum() / received
            assert got == pytest.approx(flows.loc[name, "queue_delay_mean_ms"], rel=1e-9)


def test_cli_writes_the_trace_and_the_report_plots_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "airsched", "run", str(BUFFERBLOAT), "--duration", "3s", "--queues", "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (out / "queues.parquet").is_file() and (out / "flow_delays.parquet").is_file()
    page = report.render(out)
    assert 'alt="queue length and queueing delay over time"' in page
    assert "was not traced" not in page
