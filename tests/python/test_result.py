# SPDX-License-Identifier: Apache-2.0
"""Result built from hand-written columns: JSON conversion, types, and the core-contract checks."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from airsched import Result, SimulationError
from airsched.result import TABLES

SUMMARY = {
    "sim_seconds": 2.0,
    "measured_seconds": 1.0,
    "wall_seconds": 0.01,
    "events": 10,
    "seed": 1,
    "total_goodput_mbps": 0.0,
    "frames": 0,
    "medium_busy_share": 0.0,
    "sample_interval_s": 0.1,
    "conservation": {"offered": 1, "delivered": 0, "dropped_queue": 0, "dropped_retry": 0, "in_flight": 1},
}
SAMPLE_VALUE = {"str": "x", "float": math.nan, "int": 0}


def tables(rows: int = 1, **extra_columns):
    out = {
        name: {col: [SAMPLE_VALUE[kind]] * rows for col, kind in schema.items()}
        for name, schema in TABLES.items()
    }
    for table, columns in extra_columns.items():
        out[table].update(columns)
    return out


def test_nan_becomes_null_in_json():
    result = Result(SUMMARY | {"total_goodput_mbps": math.inf}, tables())
    doc = result.to_json_dict()
    assert doc["stations"][0]["goodput_mbps"] is None
    assert doc["flows"][0]["delay_mean_ms"] is None
    assert doc["total_goodput_mbps"] is None
    assert doc["conservation"]["in_flight"] == 1
    json.dumps(doc, allow_nan=False)  # raises on any NaN or infinity left behind


def test_json_rows_follow_the_documented_column_order():
    doc = Result(SUMMARY, tables()).to_json_dict()
    assert list(doc["stations"][0]) == list(TABLES["stations"])
    assert list(doc["flows"][0]) == list(TABLES["flows"])
    assert "samples" not in doc


def test_empty_tables_keep_their_columns_and_types():
    result = Result(SUMMARY, tables(rows=0))
    assert list(result.flows.columns) == list(TABLES["flows"])
    assert len(result.flows) == 0
    assert result.flows["sent_packets"].dtype == "int64"
    assert result.flows["name"].dtype == "string"
    assert result.to_json_dict()["flows"] == []


def test_columns_the_core_adds_later_pass_through():
    result = Result(SUMMARY, tables(stations={"snr_db": [12.5]}))
    assert list(result.stations.columns)[-1] == "snr_db"
    assert result.stations["snr_db"].tolist() == [12.5]
    assert result.to_json_dict()["stations"][0]["snr_db"] == 12.5


def test_missing_column_is_an_internal_error():
    broken = tables()
    del broken["flows"]["in_flight"]
    with pytest.raises(SimulationError, match="in_flight"):
        Result(SUMMARY, broken)


def test_unequal_columns_are_an_internal_error():
    with pytest.raises(SimulationError, match="unequal"):
        Result(SUMMARY, tables(nodes={"beacons": [1, 2]}))


def test_write_round_trips_through_parquet(tmp_path):
    result = Result(SUMMARY, tables(rows=2))
    out = result.write(tmp_path / "a" / "b")
    for name in TABLES:
        back = pd.read_parquet(out / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, getattr(result, name))
    assert json.loads((out / "summary.json").read_text()) == result.to_json_dict()


def test_missing_summary_entry_is_an_internal_error():
    summary = {k: v for k, v in SUMMARY.items() if k != "conservation"}
    with pytest.raises(SimulationError, match="conservation"):
        Result(summary, tables())


def test_ping_flows_report_round_trips_and_a_pings_table(tmp_path):
    """A ping flow gets a `.reply` flow, RTT percentiles, and one row per answered ping."""
    import airsched

    text = (
        '[run]\nduration = "11s"\n[cell]\nbeacons = false\n[[station]]\nname = "b"\nrate = "11Mbps"\n'
        '[[flow]]\nname = "p"\nprotocol = "ping"\nsrc = "server"\ndst = "b"\ninterval = "100ms"\n'
    )
    r = airsched.run(text=text)
    flows = r.flows.set_index("name")
    assert list(flows.index) == ["p", "p.reply"]
    assert flows.loc["p", "protocol"] == "ping" and flows.loc["p.reply", "protocol"] == "ping-reply"
    assert flows.loc["p", "rtt_samples"] == len(r.pings) == 100
    assert r.pings["rtt_ms"].between(1.08, 1.71).all()
    assert flows.loc["p", "rtt_p50_ms"] == sorted(r.pings["rtt_ms"])[49]
    assert flows.loc["p.reply", "rtt_samples"] == 0
    out = r.write(tmp_path / "out")
    import pandas as pd

    assert len(pd.read_parquet(out / "pings.parquet")) == 100


def test_parquet_pandas_metadata_is_what_pyarrow_writes_for_the_frame():
    # --out writes Parquet without importing pandas; the metadata must be pyarrow's own, so that
    # pandas reads the dtypes back.
    import pyarrow as pa

    from airsched.result import _DTYPES, _pandas_metadata

    kinds = [("s", "str"), ("f", "float"), ("i", "int")]
    frame = pd.DataFrame({n: pd.Series([], dtype=_DTYPES[k]) for n, k in kinds})
    want = json.loads(pa.Schema.from_pandas(frame, preserve_index=False).metadata[b"pandas"])
    got = json.loads(_pandas_metadata(kinds)[b"pandas"])
    assert got == want
