# SPDX-License-Identifier: Apache-2.0
"""Golden results as Python sees them: shipped scenarios through ``airsched.run``, compared with
committed JSON exactly (every float bit for bit, ints stay ints, keys in order).

Each golden holds ``Result.to_json_dict()`` without ``wall_seconds`` and ``provenance``, plus the tables that JSON
leaves out (``samples``, ``pings``) as column lists. It covers the whole way from the core's
rows through the binding's conversion to the Python tables, so a refactor of that path keeps them
identical. A change of numbers that is intended is its own commit, re-blessed with
``AIRSCHED_BLESS=1 pytest tests/python/test_golden_json.py`` and saying why.

Python's ``json`` writes a float as the shortest text that reads back to the same float, so a
round trip is exact; NaN and infinities (possible only in the column lists) are written as the
strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

import airsched

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

#: Scenario files (relative to the repository root, with ``?KEY=VALUE&...`` overrides) and what
#: each one covers.
GOLDEN = {
    "scenarios/anomaly.toml": "802.11b DCF, the performance anomaly, saturated uplink",
    "scenarios/yip-kwok/htb-sfq.toml": "tc tree: htb with sfq leaves and u32 filters",
    "scenarios/garroppo/share-1-4-whtb.toml": "WHTB, the channel monitor, radio positions, ARF",
    "scenarios/tcp-bufferbloat.toml": "TCP CUBIC and NewReno with pings on 802.11b",
    "scenarios/hoiland/tcp.toml?ap.queueing=fq-mac": "802.11n, FQ-MAC, TCP downloads and pings",
    "scenarios/80211n-edca-minstrel.toml": "802.11n EDCA, Minstrel over MCS, EF pings",
}
#: Tables ``to_json_dict`` leaves out; the golden holds them as column lists.
EXTRA_TABLES = ("samples", "pings")


def split(scenario: str) -> tuple[str, dict[str, str]]:
    """A GOLDEN key's file and overrides."""
    path, _, sets = scenario.partition("?")
    return path, dict(kv.split("=", 1) for kv in sets.split("&") if kv)


def golden_path(scenario: str) -> Path:
    """``scenarios/a/b.toml?k=v`` is golden ``a--b-v.json``."""
    path, overrides = split(scenario)
    name = "-".join([path.removeprefix("scenarios/").removesuffix(".toml").replace("/", "--"), *overrides.values()])
    return GOLDEN_DIR / f"{name}.json"


def _finite_or_text(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def document(result: airsched.Result) -> dict[str, Any]:
    """What a golden holds of one result."""
    doc = result.to_json_dict()
    del doc["wall_seconds"]
    # Provenance names this machine's Python and platform; tests/python/test_provenance.py and
    # test_hardening.py check it.
    del doc["provenance"]
    for table in EXTRA_TABLES:
        assert table not in doc, f"to_json_dict now has {table!r}: drop it from EXTRA_TABLES"
        frame = getattr(result, table)
        doc[table] = {col: [_finite_or_text(v) for v in frame[col].tolist()] for col in frame.columns}
    return doc


def differences(want: Any, got: Any, path: str = "$", out: list[str] | None = None) -> list[str]:
    """Every place (up to 20) where ``got`` is not exactly ``want``: type, value, keys or their
    order, list length."""
    out = [] if out is None else out
    if len(out) >= 20:
        return out
    if type(want) is not type(got):
        out.append(f"{path}: {type(got).__name__} {got!r}, golden {type(want).__name__} {want!r}")
    elif isinstance(want, dict):
        if list(want) != list(got):
            out.append(f"{path}: keys {list(got)}, golden {list(want)}")
        for key in want:
            if key in got:
                differences(want[key], got[key], f"{path}.{key}", out)
    elif isinstance(want, list):
        if len(want) != len(got):
            out.append(f"{path}: {len(got)} items, golden {len(want)}")
        for i, (w, g) in enumerate(zip(want, got)):
            differences(w, g, f"{path}[{i}]", out)
    elif want != got:  # floats included: equal text in the file means equal bits
        out.append(f"{path}: {got!r}, golden {want!r}")
    return out


@pytest.mark.parametrize("scenario", list(GOLDEN))
def test_result_matches_its_golden_json(scenario: str) -> None:
    path, overrides = split(scenario)
    got = document(airsched.run(ROOT / path, overrides=overrides))
    path = golden_path(scenario)
    if os.environ.get("AIRSCHED_BLESS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path} is missing: bless with AIRSCHED_BLESS=1")
    want = json.loads(path.read_text(encoding="utf-8"))
    diff = differences(want, got)
    assert not diff, f"{scenario} differs from {path.name}:\n" + "\n".join(diff)


def test_goldens_cover_what_they_claim() -> None:
    # The set exercises both standards, a tc tree, TCP and pings; every golden file belongs to a
    # scenario in the list (no stale files).
    docs = {s: json.loads(golden_path(s).read_text(encoding="utf-8")) for s in GOLDEN}
    assert {p.name for p in GOLDEN_DIR.glob("*.json")} == {golden_path(s).name for s in GOLDEN}
    assert any(d["aggregates"] for d in docs.values()) and any(not d["aggregates"] for d in docs.values())
    assert any(len(iface["qdiscs"]) > 1 for d in docs.values() for iface in d["tc"])
    assert any(flow["protocol"] == "tcp" for d in docs.values() for flow in d["flows"])
    assert any(d["pings"]["rtt_ms"] for d in docs.values())
    assert all(d["samples"]["time_s"] for d in docs.values())


def test_comparison_is_exact() -> None:
    # The comparison sees a one-ulp change, an int turned float, and a reordered key.
    want = {"a": 0.1, "b": 3, "c": [1.5]}
    assert differences(want, {"a": 0.1, "b": 3, "c": [1.5]}) == []
    assert differences(want, {"a": math.nextafter(0.1, 1.0), "b": 3, "c": [1.5]})
    assert differences(want, {"a": 0.1, "b": 3.0, "c": [1.5]})
    assert differences(want, {"b": 3, "a": 0.1, "c": [1.5]})
    assert differences(want, {"a": 0.1, "b": 3, "c": [1.5, 2.0]})
