# SPDX-License-Identifier: Apache-2.0
"""Reading scenario files, the Python exception hierarchy, and duration formatting."""

from __future__ import annotations

import pickle

import pytest

import airsched
from airsched.scenario import format_ns, load


def test_load_reads_a_file_and_keeps_the_path_as_given(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[run]\n", encoding="utf-8")
    assert load(path) == load(str(path))
    assert load(path).text == "[run]\n" and load(path).path == str(path)
    assert load(text="[run]\n").path == "<string>"


def test_load_wants_exactly_one_source(tmp_path):
    with pytest.raises(TypeError):
        load()
    with pytest.raises(TypeError):
        load(tmp_path / "s.toml", text="")


def test_a_directory_is_not_a_scenario(tmp_path):
    with pytest.raises(airsched.ScenarioError) as info:
        load(tmp_path)
    assert info.value.errors == [f"{tmp_path}: is a directory, not a scenario file"]


def test_text_passed_as_a_path_gets_a_hint():
    with pytest.raises(airsched.ScenarioError, match=r"no such file \(scenario text goes in text="):
        load('[run]\nduration = "1s"\n')


def test_non_utf8_file_names_line_and_column(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[run]\nname = "caf\xe9"\n')
    with pytest.raises(airsched.ScenarioError) as info:
        load(path)
    assert info.value.errors == [f"{path}:2:12: file is not UTF-8 text (TOML must be)"]


def test_scenario_error_from_lines_and_from_text():
    exc = airsched.ScenarioError(["a:1:1: x: bad", "a:2:1: y: worse"])
    assert str(exc) == "a:1:1: x: bad\na:2:1: y: worse"
    assert airsched.ScenarioError(str(exc)).errors == exc.errors
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is airsched.ScenarioError and again.errors == exc.errors


def test_exception_hierarchy():
    assert issubclass(airsched.ScenarioError, airsched.AirschedError)
    assert issubclass(airsched.ScenarioError, ValueError)
    assert issubclass(airsched.SimulationError, airsched.AirschedError)
    assert issubclass(airsched.SimulationError, RuntimeError)
    assert not issubclass(airsched.ScenarioError, airsched._core.ScenarioError)


@pytest.mark.parametrize(
    "ns,text",
    [(0, "0s"), (60_000_000_000, "60s"), (1_500_000_000, "1500ms"), (250_000, "250us"), (1_001, "1001ns")],
)
def test_format_ns(ns, text):
    assert format_ns(ns) == text
