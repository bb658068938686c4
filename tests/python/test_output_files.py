# SPDX-License-Identifier: Apache-2.0
"""`airsched run --out DIR`: Parquet tables and summary.json that pandas reads back."""

from __future__ import annotations

import json

import pandas as pd
import pytest

TABLES = ("stations", "flows", "samples", "nodes", "rates", "pings")


@pytest.fixture(scope="module")
def written(cli, data, tmp_path_factory):
    out = tmp_path_factory.mktemp("results") / "nested" / "out"  # parents do not exist yet
    proc = cli("run", data / "uplink2.toml", "--json", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_writes_every_table_and_the_summary(written):
    out, _ = written
    expected = [f"{t}.parquet" for t in TABLES] + ["summary.json"]
    assert sorted(p.name for p in out.iterdir()) == sorted(expected)


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
    assert proc.stderr.startswith(f"error: {blocker}: cannot write results: ")
    assert "Traceback" not in proc.stderr
