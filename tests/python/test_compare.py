"""`airsched compare`: per-station and per-flow figures side by side, with differences."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import airsched
from airsched import compare

ROOT = Path(__file__).resolve().parents[2]
ANOMALY = ROOT / "scenarios" / "anomaly.toml"


def test_two_run_directories(tmp_path: Path) -> None:
    a = airsched.run(ANOMALY, duration="3s", seed=1)
    b = airsched.run(ANOMALY, duration="3s", seed=2)
    a.write(tmp_path / "a")
    b.write(tmp_path / "b")
    cmp = compare.compare(compare.load_inputs([tmp_path / "a", tmp_path / "b"]), "stations")
    row = cmp[(cmp["name"] == "fast") & (cmp["quantity"] == "goodput_mbps") & (cmp["input"] == "b")].iloc[0]
    ga = a.stations.set_index("name").loc["fast", "goodput_mbps"]
    gb = b.stations.set_index("name").loc["fast", "goodput_mbps"]
    assert row["value"] == gb and row["diff"] == pytest.approx(gb - ga) and row["rel_diff"] == pytest.approx((gb - ga) / ga)
    proc = subprocess.run(
        [sys.executable, "-m", "airsched", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "c.png"), "--csv", str(tmp_path / "c.csv")],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{gb - ga:+.4g} ({100 * (gb - ga) / ga:+.1f}%)" in proc.stdout
    assert "flows (Δ from a)" in proc.stdout
    assert (tmp_path / "c.png").stat().st_size > 5000
    csv = pd.read_csv(tmp_path / "c.csv")
    assert set(csv["table"]) == {"stations", "flows"} and set(csv["input"]) == {"a", "b"}


def test_scenario_files_are_run_with_the_same_overrides(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "airsched", "compare", str(ANOMALY), str(ROOT / "scenarios" / "anomaly-downlink.toml"), "--duration", "2s", "--set", "cell.retry_limit=4"],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    down = airsched.run(ROOT / "scenarios" / "anomaly-downlink.toml", duration="2s", overrides={"cell.retry_limit": 4})
    assert f"{down.stations.set_index('name').loc['slow', 'goodput_mbps']:.4g}" in proc.stdout
    one = subprocess.run([sys.executable, "-m", "airsched", "compare", str(ANOMALY), "--duration", "2s"], capture_output=True, text=True)
    assert one.returncode == 2 and "at least two inputs" in one.stderr


def test_sweep_directory_compares_configurations(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(f'[sweep]\nscenario = "{ANOMALY}"\nseeds = [1, 2]\n[set]\n"run.duration" = "2s"\n[parameters]\n"cell.retry_limit" = [2, 7]\n')
    df = airsched.sweep(spec, tmp_path / "out", jobs=1)
    inputs = compare.load_inputs([tmp_path / "out"])
    assert [i.label for i in inputs] == ["cell.retry_limit=2", "cell.retry_limit=7"]
    mean = df[(df["cell.retry_limit"] == 7) & (df["name"] == "slow")]["goodput_mbps"].mean()
    assert inputs[1].stations.set_index("name").loc["slow", "goodput_mbps"] == pytest.approx(mean)
    assert inputs[1].flows is not None and "goodput_mbps" in inputs[1].flows
