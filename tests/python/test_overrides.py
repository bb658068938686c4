# SPDX-License-Identifier: Apache-2.0
"""Overrides: ``airsched run/validate --set KEY=VALUE`` and ``overrides=`` in the Python API. The
core applies and checks them (crates/airsched-core/tests/overrides.rs covers every error kind);
these tests check the way there: Python values written as TOML, the list form, the command line,
exit codes and the one-line errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import airsched
from airsched.scenario import override_lines, toml_value

from scenario_texts import DOWNLINK2, mutate


def test_an_override_is_the_file_edited():
    edited = mutate(mutate(DOWNLINK2, 'name = "sta2"\nrate = "11Mbps"', 'name = "sta2"\nrate = "1Mbps"'), "seed = 7", "seed = 3")
    by_file = airsched.run(text=edited)
    by_dict = airsched.run(text=DOWNLINK2, overrides={"station[sta2].rate": "1Mbps", "run.seed": 3})
    by_list = airsched.run(text=DOWNLINK2, overrides=["station.1.rate=1Mbps", "run.seed=3"])
    base = airsched.run(text=DOWNLINK2)
    for result in (by_dict, by_list):
        pd.testing.assert_frame_equal(result.stations, by_file.stations)
        pd.testing.assert_frame_equal(result.samples, by_file.samples)
    # The slow station drags the fast one down: the override did change the run.
    fast = lambda r: float(r.stations.set_index("name").loc["sta1", "goodput_mbps"])  # noqa: E731
    assert fast(by_dict) < 0.5 * fast(base)


def test_python_values_are_written_as_toml():
    assert toml_value(True) == "true" and toml_value(4) == "4" and toml_value(2.5) == "2.5"
    assert toml_value("2Mbps") == '"2Mbps"' and toml_value('a "b"\n') == '"a \\"b\\"\\n"'
    assert toml_value(["1Mbps", "2Mbps"]) == '["1Mbps", "2Mbps"]'
    assert toml_value({"sigma": 2, "coherence": "1s", "odd key": 1}) == '{sigma = 2, coherence = "1s", "odd key" = 1}'
    assert toml_value(math.inf) == "inf" and toml_value(-math.inf) == "-inf" and toml_value(math.nan) == "nan"
    assert override_lines({"cell.retry_limit": 4}) == ["cell.retry_limit=4"]
    assert override_lines(("a=1", "b=2")) == ["a=1", "b=2"] and override_lines(None) == []
    with pytest.raises(TypeError, match="not a single str"):
        override_lines("cell.retry_limit=4")
    with pytest.raises(TypeError, match=r"cell\.x: cannot write a object"):
        override_lines({"cell.x": object()})
    with pytest.raises(TypeError, match="keys must be str"):
        override_lines({1: 2})


def test_a_dict_value_keeps_its_python_type():
    # The string "4" is not the integer 4: the file's message for a quoted number.
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.validate(text=DOWNLINK2, overrides={"cell.retry_limit": "4"})
    assert info.value.errors == [
        '<command line>:1:18: cell.retry_limit: expected an integer between 1 and 255 (without quotes), found string "4"'
    ]
    info = airsched.validate(text=DOWNLINK2, overrides={"run.duration": "2s", "station[0].fading": {"sigma": 2, "coherence": "1s"}, "station[0].snr": 12.5})
    assert info.duration == "2s"


def test_errors_name_the_override_and_the_bad_value():
    with pytest.raises(airsched.ScenarioError) as info:
        airsched.run(text=DOWNLINK2, overrides=["cell.retry_limit=400", "station[5].rate=2Mbps"], seed=-1)
    assert info.value.errors == [
        "<command line>:1:18: cell.retry_limit: must be between 1 and 255, got 400",
        "<command line>:2:9: station[5].rate: no station[5]: the scenario has 2 [[station]] entries, "
        "station[0] to station[1] (indexes count from 0)",
        "<command line>:3:10: run.seed: must be between 0 and 18446744073709551615, got -1",
    ]


def test_seed_and_duration_are_overrides_applied_last():
    result = airsched.run(text=DOWNLINK2, overrides={"run.seed": 1, "run.duration": "1s"}, seed=11, duration="2s")
    assert (result.summary["seed"], result.summary["sim_seconds"]) == (11, 2.0)
    with pytest.raises(TypeError, match="seed must be an int"):
        airsched.run(text=DOWNLINK2, seed=True)
    with pytest.raises(TypeError, match="duration must be a str"):
        airsched.run(text=DOWNLINK2, duration=3)  # type: ignore[arg-type]


# ----- the command line ------------------------------------------------------------------------


def test_run_with_set(cli_json, data):
    path = data / "downlink2.toml"
    base = cli_json(path)
    changed = cli_json(path, "--set", "station[sta2].rate=1Mbps", "--set", "run.duration=2s")
    assert changed["sim_seconds"] == 2.0 and base["sim_seconds"] == 3.0
    rates = {s["name"]: s["rate_mbps"] for s in changed["stations"]}
    assert rates == {"sta1": 11.0, "sta2": 1.0}


@pytest.mark.parametrize(
    "setting, line",
    [
        ("cell.retry_limit=400", "<command line>:1:18: cell.retry_limit: must be between 1 and 255, got 400"),
        ("station[sta9].rate=2Mbps", '<command line>:1:9: station[sta9].rate: no [[station]] named "sta9"; did you mean "sta1"?'),
        ("cell.retry_limt=4", "<command line>:1:6: cell.retry_limt: unknown key `retry_limt` in [cell]; did you mean `retry_limit`?"),
        ("cell.retry_limit", "<command line>:1:1: cell.retry_limit: expected KEY=VALUE"),
    ],
)
def test_a_bad_set_is_one_line_and_exit_2(cli, data, setting, line):
    for command in ("run", "validate"):
        proc = cli(command, data / "downlink2.toml", "--set", setting)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        errors = proc.stderr.splitlines()
        assert len(errors) == 1 and errors[0].startswith(f"error: {line}"), proc.stderr


def test_validate_with_set(cli, data, write_scenario):
    proc = cli("validate", data / "downlink2.toml", "--set", "run.duration=90s")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{data / 'downlink2.toml'}: ok (2 stations, 2 flows, duration 90s)\n"
    # An error in the file itself is still exit 1, with or without a --set.
    bad = write_scenario(mutate(DOWNLINK2, "seed = 7", "seed = -7"))
    proc = cli("validate", bad, "--set", "run.duration=2s")
    assert proc.returncode == 1 and "run.seed" in proc.stderr
