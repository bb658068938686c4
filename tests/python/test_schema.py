# SPDX-License-Identifier: Apache-2.0
"""One result schema: the native tables carry exactly the columns the core's schema declares,
with values of the declared types; the Python package's column lists and docs/results.md come
from that schema."""

from __future__ import annotations

import inspect
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

import airsched
from airsched import Result, _core, load, result
from airsched.runner import run_overrides

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "results.md"
PY_TYPES = {"str": str, "float": float, "int": int}


def native(scenario: str, duration: str, mac_stats: bool = False, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    source = load(ROOT / scenario)
    sim = _core.Simulation(source.text, source.path, overrides=[*extra, *run_overrides(None, duration)])
    sim.enable_interface_counters()  # as airsched.run does
    if mac_stats:
        sim.enable_mac_stats()  # as airsched run --mac-stats does
    sim.advance(sim.end_ns)
    return sim.finish()


@pytest.fixture(scope="module")
def raws() -> list[dict[str, Any]]:
    # 802.11b with radio conditions and the channel monitor; 802.11n with TCP and pings;
    # Bluetooth; PCF; mac80211's statistics and admission control; 802.11ax with uplink OFDMA:
    # between them every table has rows.
    return [
        native("scenarios/garroppo/share-1-4-whtb.toml", "3s"),
        native("scenarios/80211n-edca-minstrel.toml", "3s", mac_stats=True, extra=('ap.admission_sojourn="5ms"',)),
        native("scenarios/yip-kwok/coexistence.toml", "3s"),
        native("scenarios/pcf-anomaly.toml", "3s"),
        native("scenarios/wifi6-ofdma-ul.toml", "1s"),
    ]


def check_value(where: str, kind: str, value: Any) -> None:
    assert type(value) is PY_TYPES[kind], f"{where}: {value!r} is not {kind}"


def plain(table, name, column):
    """A native column as Python values: the tables that grow with the run (samples, pings)
    come as typed buffers, read as result.py reads them."""
    from airsched.result import _column

    values = _column(table, name, column)
    return values.tolist() if hasattr(values, "tolist") else values


def test_growing_tables_cross_as_typed_buffers(raws):
    # About 8 bytes a value instead of a Python object per cell (issue 12: memory).
    for raw in raws:
        for table in ("samples", "pings"):
            for name, kind, _unit, _doc in _core.schema()[table]:
                tag = raw[table][name][0]
                assert tag == {"float": "f8", "int": "i8", "str": "dict"}[kind], (table, name, tag)


def test_native_tables_have_the_schema_columns_and_types(raws):
    schema = _core.schema()
    tables = [t for t in schema if t not in ("summary", "conservation")]
    rows = dict.fromkeys(tables, 0)
    for raw in raws:
        assert set(raw) == {*tables, "summary", "warnings", "tc"}
        for table in tables:
            columns = raw[table]
            assert list(columns) == [c[0] for c in schema[table]], table
            for name, kind, _unit, _doc in schema[table]:
                for value in plain(table, name, columns[name]):
                    check_value(f"{table}.{name}", kind, value)
            rows[table] += len(plain(table, schema[table][0][0], columns[schema[table][0][0]]))
        summary, conservation = raw["summary"], raw["summary"]["conservation"]
        assert list(summary) == [c[0] for c in schema["summary"]] + ["conservation"]
        assert list(conservation) == [c[0] for c in schema["conservation"]]
        for record, values in (("summary", summary), ("conservation", conservation)):
            for name, kind, _unit, _doc in schema[record]:
                check_value(f"{record}.{name}", kind, values[name])
    assert all(rows.values()), f"tables without rows: {[t for t, n in rows.items() if not n]}"


def test_schema_entries_are_well_formed():
    for table, columns in _core.schema().items():
        names = [c[0] for c in columns]
        assert len(names) == len(set(names)), table
        for name, kind, unit, doc in columns:
            assert kind in PY_TYPES and isinstance(unit, str), (table, name)
            assert doc and doc == doc.strip() and "\n" not in doc, (table, name)


def test_python_column_lists_are_the_schema():
    schema = _core.schema()
    assert result.SCHEMA == schema
    expected = {t: {c[0]: c[1] for c in cols} for t, cols in schema.items()}
    assert result.STATION_COLUMNS == expected["stations"]
    assert result.FLOW_COLUMNS == expected["flows"]
    assert result.SAMPLE_COLUMNS == expected["samples"]
    assert result.NODE_COLUMNS == expected["nodes"]
    assert result.RATE_COLUMNS == expected["rates"]
    assert result.PING_COLUMNS == expected["pings"]
    assert result.AGGREGATE_COLUMNS == expected["aggregates"]
    assert result.TABLES == {t: c for t, c in expected.items() if t not in ("summary", "conservation")}
    assert result.SUMMARY_KEYS == (*expected["summary"], "conservation")
    # Every table is a DataFrame attribute of Result (write() saves each of them).
    for table in result.TABLES:
        assert isinstance(inspect.getattr_static(Result, table), cached_property), table


def test_frames_have_the_schema_columns_and_dtypes():
    r = airsched.run(ROOT / "scenarios/80211n-edca-minstrel.toml", duration="3s")
    dtypes = {"str": "string", "float": "float64", "int": "int64"}
    for table, columns in result.TABLES.items():
        frame = getattr(r, table)
        assert list(frame.columns) == list(columns), table
        assert [str(frame[c].dtype) for c in columns] == [dtypes[k] for k in columns.values()], table


def schema_markdown() -> str:
    """docs/results.md, from the schema."""
    out = [
        "# Result columns",
        "",
        "Every column of every result table, as the core declares it (`result_table!` in",
        "`crates/airsched-core/src/results.rs`): the binding converts the rows by this schema, the",
        "Python package (`airsched.result.SCHEMA`, `_core.schema()`) takes its column lists from it,",
        "and this page is generated from it by `tests/python/test_schema.py`",
        "(`AIRSCHED_BLESS=1` rewrites it). Do not edit it by hand: edit the doc comments.",
        "",
        "`Result.stations`, `.flows`, `.samples`, `.interfaces`, `.nodes`, `.rates`, `.pings` and `.aggregates` are",
        "pandas DataFrames with these columns in this order (and the Parquet files `airsched run",
        "--out` writes); `Result.summary` is a dict with the summary entries and `conservation`, a",
        "dict of whole-run packet counts. `airsched run --json` prints the summary and the rows of",
        "stations, flows, nodes, rates and aggregates. NaN marks a figure that does not apply",
        "(JSON: `null`).",
    ]
    for table, columns in result.SCHEMA.items():
        out += ["", f"## {table}", "", "| column | type | unit | description |", "|---|---|---|---|"]
        out += [f"| `{name}` | {kind} | {unit} | {doc} |" for name, kind, unit, doc in columns]
    return "\n".join(out) + "\n"


def test_docs_list_exactly_the_schema_columns():
    text = schema_markdown()
    if os.environ.get("AIRSCHED_BLESS"):
        DOC.write_text(text, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == text, "docs/results.md is stale: AIRSCHED_BLESS=1 rewrites it"
