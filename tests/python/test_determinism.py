# SPDX-License-Identifier: Apache-2.0
"""Same scenario and seed give identical results; another seed gives other results."""

from __future__ import annotations

import json

import pytest


def without(result: dict, *keys: str) -> dict:
    return {k: v for k, v in result.items() if k not in keys}


@pytest.fixture(scope="module")
def uplink(cli_json, data):
    """Two saturated uplink stations contending for the air (seed 1 from the file)."""
    return cli_json(data / "uplink2.toml")


def test_same_seed_same_results(cli_json, data, uplink):
    again = cli_json(data / "uplink2.toml", "--seed", "1")
    # wall_seconds is the only figure that depends on the machine; the provenance records the
    # --seed given the second time, of the same scenario text.
    assert without(again, "wall_seconds", "provenance") == without(uplink, "wall_seconds", "provenance")
    assert again["provenance"]["scenario_sha256"] == uplink["provenance"]["scenario_sha256"]
    assert again["provenance"]["overrides"] == ["run.seed=1"] and uplink["provenance"]["overrides"] == []


def test_other_seed_other_results(cli_json, data, uplink):
    other = cli_json(data / "uplink2.toml", "--seed", "2")
    assert other["seed"] == 2
    # Contention is decided by random backoff, so the exact counts of a saturated cell move.
    assert without(other, "wall_seconds", "seed") != without(uplink, "wall_seconds", "seed")
    assert [s["tx_attempts"] for s in other["stations"]] != [s["tx_attempts"] for s in uplink["stations"]]


def test_api_matches_cli(uplink, data):
    import airsched
    from airsched.result import json_text

    result = airsched.run(data / "uplink2.toml")
    # The CLI prints to_json_dict() through json_text (times in seconds to the nanosecond).
    printed = json.loads(json_text(result.to_json_dict()))
    assert without(printed, "wall_seconds") == without(uplink, "wall_seconds")
