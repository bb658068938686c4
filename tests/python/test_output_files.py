# SPDX-License-Identifier: Apache-2.0
"""`airsched run --out DIR`: Parquet tables and summary.json that pandas reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from airsched.result import OPTIONAL_TABLES

TABLES = ("stations", "flows", "samples", "interfaces", "nodes", "rates", "pings", "aggregates", "bluetooth", "coexistence", "cfp", "polls")


@pytest.fixture(scope="module")
def written(cli, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("results") / "nested" / "out"  # parents do not exist yet
    proc = cli("run", data / "uplink2.toml", "--json", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_writes_every_table_and_the_summary(written):
    out, _ = written
    # The tables of a piconet or a PCF only where the cell has one (issue 29: they were written
    # empty for a plain cell, without a word).
    expected = [f"{t}.parquet" for t in TABLES if t not in OPTIONAL_TABLES] + ["summary.json"]
    assert sorted(p.name for p in out.iterdir()) == sorted(expected)


def test_a_piconet_and_a_pcf_write_their_tables_and_read_back(tmp_path):
    import airsched
    from airsched.report import load_run_dir

    root = Path(__file__).resolve().parents[2]
    pcf = airsched.run(root / "scenarios" / "pcf-anomaly.toml", duration="3s")
    pcf.write(tmp_path / "pcf")
    assert {"polls.parquet", "cfp.parquet"} <= {p.name for p in (tmp_path / "pcf").iterdir()}
    assert not (tmp_path / "pcf" / "bluetooth.parquet").exists()
    back = load_run_dir(tmp_path / "pcf")
    assert len(back.cfp) == len(pcf.cfp) > 0 and len(back.bluetooth) == 0
    assert list(back.bluetooth.columns) == list(pcf.bluetooth.columns)


def test_summary_json_is_what_was_printed(written):
    out, printed = written
    assert json.loads((out / "summary.json").read_text()) == printed


def test_parquet_tables_hold_the_same_numbers(written):
    out, printed = written
    stations = pd.read_parquet(out / "stations.parquet")
    flows = pd.read_parquet(out / "flows.parquet")
    assert list(stations["name"]) == [s["name"] for s in printed["stations"]]
    assert list(stations["goodput_mbps"]) == [s["goodput_mbps"] for s in printed["stations"]]
    assert list(stations["retries"]) == [s["retries"] for s in printed["stations"]]
    assert list(flows["sent_packets"]) == [f["sent_packets"] for f in printed["flows"]]
    assert list(flows["received_packets"]) == [f["received_packets"] for f in printed["flows"]]
    assert stations["tx_frames"].dtype == "int64"
    assert stations["airtime_share"].dtype == "float64"
    nodes = pd.read_parquet(out / "nodes.parquet")
    assert list(nodes["name"]) == ["ap", "fast", "slow"]


def test_samples_cover_the_measured_time(written):
    out, printed = written
    samples = pd.read_parquet(out / "samples.parquet")
    assert len(samples) > 0
    assert set(samples["kind"]) == {"station", "flow"}
    warmup = printed["sim_seconds"] - printed["measured_seconds"]
    assert (samples["time_s"] > warmup).all()
    assert (samples["time_s"] <= printed["sim_seconds"] + 1e-9).all()
    names = {s["name"] for s in printed["stations"]} | {f["name"] for f in printed["flows"]}
    assert set(samples["name"]) == names
    assert (samples["goodput_mbps"] >= 0).all()


def test_unwritable_out_dir_is_reported(cli, data, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a directory")
    proc = cli("run", data / "cbr.toml", "--duration", "2s", "--json", "--out", blocker)
    assert proc.returncode == 1
    assert proc.stdout == ""  # no JSON for results that were not saved
    # Checked before the simulation, so that no run is lost to an unwritable directory.
    assert proc.stderr.startswith(f"error: --out {blocker}: cannot write results in ")
    assert "Traceback" not in proc.stderr


def test_aggregates_round_trip_through_out(cli, tmp_path):
    """An 802.11n run's A-MPDU size distribution and per-direction airtime columns reach
    aggregates.parquet, stations.parquet and the JSON summary unchanged."""
    import airsched

    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "hoiland" / "udp.toml"
    out = tmp_path / "out"
    proc = cli("run", scenario, "--set", "ap.queueing=airtime", "--duration", "3s", "--json", "--out", out)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    aggregates = pd.read_parquet(out / "aggregates.parquet")
    assert list(aggregates.columns) == ["station", "direction", "mpdus", "count", "share"]
    assert aggregates["mpdus"].dtype == "int64" and aggregates["count"].dtype == "int64"
    assert len(aggregates) > 0 and set(aggregates["direction"]) <= {"down", "up"}
    assert aggregates["mpdus"].between(1, 64).all()
    shares = aggregates.groupby(["station", "direction"])["share"].sum()
    assert ((shares - 1).abs() < 1e-9).all()
    assert [r["count"] for r in printed["aggregates"]] == list(aggregates["count"])
    # The same numbers as the Python API's, and the mean size the stations table gives.
    result = airsched.run(scenario, duration="3s", overrides={"ap.queueing": "airtime"})
    pd.testing.assert_frame_equal(aggregates, result.aggregates)
    stations = pd.read_parquet(out / "stations.parquet").set_index("name")
    for column in ("airtime_down_s", "airtime_up_s", "airtime_down_share", "ampdu_mean_down", "ampdu_mean_up"):
        assert stations[column].dtype == "float64", column
    down = aggregates[(aggregates["station"] == "fast1") & (aggregates["direction"] == "down")]
    mean = (down["mpdus"] * down["count"]).sum() / down["count"].sum()
    assert mean == pytest.approx(stations.loc["fast1", "ampdu_mean_down"])
    assert stations["airtime_down_share"].sum() == pytest.approx(1.0)


def test_an_80211b_run_has_an_empty_aggregates_table(written):
    out, printed = written
    aggregates = pd.read_parquet(out / "aggregates.parquet")
    assert len(aggregates) == 0 and list(aggregates.columns) == ["station", "direction", "mpdus", "count", "share"]
    assert printed["aggregates"] == []
