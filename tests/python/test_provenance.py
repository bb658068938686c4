# SPDX-License-Identifier: Apache-2.0
"""airsched.provenance: a run traced to its input (issue 12, item 9)."""

from __future__ import annotations

import hashlib
import json
import math
import platform
from pathlib import Path

import pytest

import airsched
from airsched import _core
from airsched.provenance import KEYS, json_safe, provenance

from scenario_texts import CBR

REPO = Path(__file__).resolve().parents[2]


def test_provenance_names_the_scenario_its_hash_text_overrides_seed_and_version(data):
    path = data / "cbr.toml"
    source = airsched.load(path)
    p = provenance(source.path, source.text, ["cell.retry_limit=4", "flow[0].size=500"], seed=9)
    assert tuple(p) == KEYS
    assert p["scenario_path"] == str(path)
    assert p["scenario_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert p["scenario_text"] == path.read_text(encoding="utf-8")
    assert p["overrides"] == ["cell.retry_limit=4", "flow[0].size=500"]
    assert p["seed"] == 9
    assert p["airsched_version"] == airsched.__version__
    assert p["python_version"] == platform.python_version()
    assert p["platform"] == platform.platform()


def test_provenance_resolves_every_default_as_the_core_understood_it(data):
    text = CBR
    p = provenance("cbr.toml", text, {"cell.retry_limit": 4}, seed=None)
    resolved = p["resolved"]
    # Exactly what the core's validate reports, overrides applied.
    assert resolved == json_safe(_core.validate(text, "cbr.toml", ["cell.retry_limit=4"]))
    assert resolved["cell"]["retry_limit"] == 4
    # Defaults the file never states are filled in.
    assert "retry_limit" not in text and "cw_min" not in text and "preamble" not in text
    assert resolved["cell"]["cw_min"] > 0 and resolved["cell"]["preamble"] in ("long", "short")
    assert resolved["duration_ns"] == 5_000_000_000 and resolved["warmup_ns"] == 1_000_000_000
    assert resolved["station_links"][0]["rate_mbps"] == 11.0
    # A mapping of overrides is recorded as the KEY=VALUE lines the core applied.
    assert p["overrides"] == ["cell.retry_limit=4"]
    assert p["seed"] is None


def test_provenance_of_an_80211n_scenario_is_json_safe():
    path = REPO / "scenarios" / "hoiland" / "udp.toml"
    source = airsched.load(path)
    p = provenance(source.path, source.text, None, seed=1)
    text = json.dumps(p, allow_nan=False)  # raises on NaN, infinities and unknown types
    back = json.loads(text)
    assert back == p
    assert back["resolved"]["ap_mac"]["mac_queue"] in ("fifo", "fq-mac")
    assert [link["name"] for link in back["resolved"]["station_links"]] == back["resolved"]["stations"]


def test_provenance_takes_what_validate_returned_instead_of_validating_again():
    resolved = {"rates": (1.0, math.nan, math.inf), "path": Path("a/b"), "nested": {1: {2, 1}}}
    p = provenance(None, "not even TOML [", [], seed=3, resolved=resolved)
    assert p["resolved"] == {"rates": [1.0, None, None], "path": "a/b", "nested": {"1": [1, 2]}}
    assert p["scenario_path"] is None
    assert p["scenario_sha256"] == hashlib.sha256(b"not even TOML [").hexdigest()


def test_provenance_of_an_invalid_scenario_is_a_scenario_error():
    with pytest.raises(airsched.ScenarioError, match=r"bad\.toml:\d+:\d+"):
        provenance("bad.toml", '[run]\nduration = "5 fortnights"\n', None, seed=1)


def test_provenance_rejects_a_seed_that_is_not_an_int():
    with pytest.raises(TypeError, match="seed"):
        provenance("<string>", CBR, None, seed="1")  # type: ignore[arg-type]
