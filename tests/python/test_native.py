# SPDX-License-Identifier: Apache-2.0
"""The native module matches its type stub, and its errors reach users as airsched's own."""

from __future__ import annotations

import ast
from pathlib import Path

import airsched
from airsched import _core
from airsched.runner import run_overrides

from scenario_texts import CBR

STUB = Path(airsched.__file__).with_name("_core.pyi")


def stub_names() -> dict[str, list[str]]:
    """Top-level names of the stub, with the members each class declares."""
    out: dict[str, list[str]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = []
        elif isinstance(node, ast.ClassDef):
            out[node.name] = [
                n.name if isinstance(n, ast.FunctionDef) else n.target.id
                for n in node.body
                if isinstance(n, ast.FunctionDef)
                or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
            ]
    return out


def test_every_stubbed_name_exists():
    names = stub_names()
    assert {"version", "validate", "Simulation", "ScenarioError", "SimulationError"} <= set(names)
    for name, members in names.items():
        assert hasattr(_core, name), name
        obj = getattr(_core, name)
        for member in members:
            if member == "errors":  # an instance attribute, checked below
                continue
            assert hasattr(obj, member), f"{name}.{member}"


def test_native_scenario_error_carries_its_lines():
    try:
        _core.validate("[run]\nduraton = 1\n", "x.toml")
    except _core.ScenarioError as exc:
        assert isinstance(exc, ValueError)
        assert exc.errors == exc.args[0].splitlines()
        assert exc.errors[0].startswith("x.toml:2:")
    else:
        raise AssertionError("an unknown key was accepted")


def test_simulation_steps_and_finishes():
    sim = _core.Simulation(CBR, "<t>", overrides=run_overrides(None, "1500ms"))
    assert (sim.now_ns, sim.end_ns) == (0, 1_500_000_000)
    sim.advance(4_000_000)
    assert 0 < sim.now_ns <= 4_000_000
    assert sim.finish()["summary"]["sim_seconds"] == 1.5
