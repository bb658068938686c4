"""Sweeps: the grid a sweep file makes, run identities, results equal to running each scenario
alone, resuming an interrupted sweep, the Dask executor, and the reproductions as sweep specs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import airsched
from airsched import sweeps
from airsched.repro import garroppo

ROOT = Path(__file__).resolve().parents[2]
ANOMALY = ROOT / "scenarios" / "anomaly.toml"


def write_sweep(tmp_path: Path, body: str, scenario: Path = ANOMALY) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(f'[sweep]\nscenario = "{scenario}"\n' + body, encoding="utf-8")
    return path


SMALL = """seeds = [1, 2]
[set]
"run.duration" = "2s"
[parameters]
"station[slow].rate" = ["1Mbps", "5.5Mbps"]
"cell.retry_limit" = {from = 4, to = 7, step = 3}
"""


def test_grid_is_the_product_of_parameters_and_seeds(tmp_path: Path) -> None:
    sw = sweeps.load_sweep(write_sweep(tmp_path, SMALL))
    runs = sw.runs()
    assert sw.columns == ["station[slow].rate", "cell.retry_limit", "seed"]
    assert len(runs) == 2 * 2 * 2
    assert [r.params["cell.retry_limit"] for r in runs[:4]] == [4, 4, 7, 7]
    assert len({r.run_id for r in runs}) == 8  # every grid point a different scenario
    assert runs[0].overrides == ('run.duration="2s"', 'station[slow].rate="1Mbps"', "cell.retry_limit=4", "run.seed=1")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"from": 0, "to": 1, "step": 0.25}, [0.0, 0.25, 0.5, 0.75, 1.0]),
        ({"from": 2, "to": 8, "step": 3}, [2, 5, 8]),
        ({"from": 0, "to": 1, "count": 3}, [0.0, 0.5, 1.0]),
        ({"from": 1, "to": 2, "step": 1, "unit": "Mbps"}, ["1Mbps", "2Mbps"]),
    ],
)
def test_ranges(spec: dict, expected: list) -> None:
    errors: list[str] = []
    assert sweeps._values(spec, errors.append) == expected
    assert errors == []


def test_identity_is_the_resolved_scenario(tmp_path: Path) -> None:
    """The same run reached two ways has one identity; another setting, another; moving the
    scenario and sweep to another directory keeps it."""
    a = sweeps.load_sweep(write_sweep(tmp_path, 'seeds = [1]\n[parameters]\n"cell.retry_limit" = [7, 4]\n')).runs()
    b = sweeps.load_sweep(write_sweep(tmp_path, "seeds = [1]\n[parameters]\n\"run.seed\" = [1]\n")).runs()
    assert a[0].run_id == b[0].run_id  # retry_limit 7 is the file's own setting
    assert a[1].run_id != a[0].run_id
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(ANOMALY, moved / "a.toml")
    c = sweeps.load_sweep(write_sweep(moved, 'seeds = [1]\n[parameters]\n"cell.retry_limit" = [7]\n', moved / "a.toml")).runs()
    assert c[0].run_id == a[0].run_id


def test_identity_changes_with_the_core_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A core rebuilt from changed code (same version) gives every run a new identity, so a
    sweep directory never reuses what the old code computed; the build is the file's hash."""
    spec = write_sweep(tmp_path, 'seeds = [1]\n[parameters]\n"cell.retry_limit" = [7]\n')
    before = sweeps.load_sweep(spec).runs()[0].run_id
    with open(airsched._core.__file__, "rb") as f:
        assert sweeps.core_build() == hashlib.sha256(f.read()).hexdigest()
    monkeypatch.setattr(sweeps, "core_build", lambda: "0" * 64)
    assert sweeps.load_sweep(spec).runs()[0].run_id != before


def test_bad_sweep_files_name_file_line_and_key(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, 'seeds = [1]\ncolour = "red"\n[parameters]\n"cell.retry_limit" = [4, 400]\n')
    with pytest.raises(airsched.ScenarioError) as exc:
        sweeps.load_sweep(path).runs()
    assert exc.value.errors == [f"{path}:4:1: sweep.colour: unknown key `colour` in [sweep]; expected name, scenario or seeds"]
    path = write_sweep(tmp_path, 'seeds = [1]\n[parameters]\n"cell.retry_limit" = [4, 400]\n')
    with pytest.raises(airsched.ScenarioError) as exc:
        sweeps.load_sweep(path).runs()
    assert exc.value.errors == [f"{path}:5:1: cell.retry_limit: must be between 1 and 255, got 400"]
    path = write_sweep(tmp_path, 'seeds = [1]\n[parameters]\n"cell.retry_limit" = {from = 4, to = 1, step = 1}\n')
    with pytest.raises(airsched.ScenarioError, match=r":5:1: cell.retry_limit: a range needs step > 0 and to >= from"):
        sweeps.load_sweep(path)


def test_sweep_runs_equal_each_scenario_run_alone(tmp_path: Path) -> None:
    """On the spawn pool of two workers, every run's tables equal those of airsched.run with the
    same overrides, and the tidy table has a column per parameter."""
    spec = write_sweep(tmp_path, SMALL)
    df = airsched.sweep(spec, tmp_path / "out", jobs=2)
    assert df.attrs["outcome"].done == 8 and not df.attrs["outcome"].failed
    assert list(df.columns[:4]) == ["station[slow].rate", "cell.retry_limit", "seed", "run_id"]
    assert len(df) == 8 * 2  # two stations per run
    for run in sweeps.load_sweep(spec).runs():
        alone = airsched.run(run.scenario, overrides=list(run.overrides)).stations
        mine = df[df["run_id"] == run.run_id].drop(columns=["station[slow].rate", "cell.retry_limit", "seed", "run_id"])
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), alone)
    # Every table of a run file reads back as the run's own Result.
    run = sweeps.load_sweep(spec).runs()[3]
    back, prov = sweeps.read_run(sweeps.run_path(tmp_path / "out", run.run_id))
    alone = airsched.run(run.scenario, overrides=list(run.overrides))
    for table in ("stations", "flows", "samples", "nodes", "rates", "pings", "aggregates"):
        pd.testing.assert_frame_equal(getattr(back, table), getattr(alone, table))
    assert prov["params"] == run.params and prov["overrides"] == list(run.overrides)
    assert back.summary["events"] == alone.summary["events"]


def test_an_interrupted_sweep_resumes_without_losing_or_repeating_a_run(tmp_path: Path) -> None:
    """The sweep is killed (SIGKILL, no chance to clean up) once half its runs are written; the
    resumed sweep keeps those files untouched, runs only the others, and the table has each
    run once."""
    spec = write_sweep(tmp_path, 'seeds = {from = 1, count = 8}\n[set]\n"run.duration" = "120s"\n')
    out = tmp_path / "out"
    runs_dir = out / sweeps.RUNS_DIR
    proc = subprocess.Popen(
        [sys.executable, "-m", "airsched", "sweep", str(spec), "-o", str(out), "-j", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(runs_dir.glob("*.parquet"))) < 4:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in runs_dir.glob("*.parquet")}
    assert 4 <= len(first) < 8, "the sweep was not interrupted half way"
    outcome = sweeps.execute(sweeps.load_sweep(spec), out, jobs=1)
    assert outcome.skipped == len(first)
    assert outcome.done == 8 - len(first)
    files = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in runs_dir.glob("*.parquet")}
    assert len(files) == 8 and all(files[name] == ino for name, ino in first.items())
    assert [p.name for p in runs_dir.iterdir() if not p.name.endswith(".parquet")] == []
    df = sweeps.collect(out, "runs")
    assert sorted(df["seed"]) == list(range(1, 9))
    # A third pass has nothing to do.
    again = sweeps.execute(sweeps.load_sweep(spec), out, jobs=1)
    assert (again.done, again.skipped) == (0, 8)


def test_dask_executor_gives_the_local_results(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="Dask distributed is not installed (pip install 'airsched[cluster]')")
    spec = write_sweep(tmp_path, SMALL)
    local = airsched.sweep(spec, tmp_path / "local", jobs=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            remote = airsched.sweep(spec, tmp_path / "dask", executor="dask", address=client)
    assert remote.attrs["outcome"].done == 8
    pd.testing.assert_frame_equal(local, remote)
    assert sorted(os.listdir(tmp_path / "local" / "runs")) == sorted(os.listdir(tmp_path / "dask" / "runs"))


def test_garroppo_sweep_spec_gives_the_repro_numbers(tmp_path: Path) -> None:
    """sweeps/garroppo-1-4.toml runs what `airsched repro garroppo` runs: the same goodputs."""
    table = garroppo.run_table("1:4", duration="3s", positions=["good", "bad"], schedulers=["htb", "whtb"])
    df = airsched.sweep(ROOT / "sweeps" / "garroppo-1-4.toml", tmp_path / "g", overrides=["run.duration=3s"], jobs=1)
    df = df.set_index(["scheduler", "station[ms2].position", "name"])
    for row in table.itertuples(index=False):
        assert df.loc[(row.scheduler, row.position, row.station), "goodput_down_mbps"] * 1000 == row.goodput_kbps


def test_shipped_sweep_specs_expand(tmp_path: Path) -> None:
    sizes = {p.name: len(sweeps.load_sweep(p).runs()) for p in sorted((ROOT / "sweeps").glob("*.toml"))}
    assert sizes == {"calibrate.toml": 57, "garroppo-1-1.toml": 20, "garroppo-1-4.toml": 20, "hoiland.toml": 8}


def test_cli_sweep_prints_means_with_intervals(tmp_path: Path) -> None:
    spec = write_sweep(tmp_path, SMALL)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "airsched", "sweep", str(spec), "-o", str(out), "-j", "1", "--plot"]
    cmd += ["--set", "station[fast].rate=2Mbps"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "8 run(s) done now, 0 already done, 0 failed, of 8" in proc.stderr
    stats = pd.read_csv(out / "stations-stats.csv")
    df = sweeps.collect(out)
    assert (df[df["name"] == "fast"]["rate_mbps"] == 2.0).all()
    one = df[(df["station[slow].rate"] == "1Mbps") & (df["cell.retry_limit"] == 4) & (df["name"] == "slow")]
    row = stats[(stats["station[slow].rate"] == "1Mbps") & (stats["cell.retry_limit"] == 4) & (stats["name"] == "slow") & (stats["quantity"] == "goodput_mbps")]
    assert row["mean"].item() == pytest.approx(one["goodput_mbps"].mean())
    assert f"{row['mean'].item():.3f} ± {row['ci_half'].item():.3f}" in proc.stdout
    assert (out / "goodput.png").stat().st_size > 1000
    again = subprocess.run(cmd + ["--seeds", "1"], capture_output=True, text=True)
    assert "0 run(s) done now, 4 already done" in again.stderr
    assert "no confidence interval" in again.stdout
    bad = subprocess.run(cmd[:-2] + ["--seeds", "x"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --seeds:")
    json.loads((out / "sweep.json").read_text())


def test_calibrate_sweep_runs_the_calibration_points() -> None:
    """sweeps/calibrate.toml's runs are `airsched calibrate`'s: the station's mean goodput is
    the block-averaged goodput of the calibration table within 1 %."""
    from airsched import _core

    table = _core.calibrate(0.0, 10.0, 10.0, 1024, 100, "arf", "3s", 1)
    points = dict(re.findall(r"snr_db = ([-\d.]+)\ngoodput_bps = ([\d.]+)", table))
    runs = {r.params["station[b].snr"]: r for r in sweeps.load_sweep(ROOT / "sweeps" / "calibrate.toml", ["run.duration=3s"]).runs()}
    for snr in (0.0, 10.0):
        run = runs[snr]
        goodput = airsched.run(run.scenario, overrides=list(run.overrides)).stations["goodput_mbps"].item() * 1e6
        assert goodput == pytest.approx(float(points[f"{snr:.2f}"]), rel=0.01)


def test_a_missing_base_scenario_is_named_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep]\nseeds = [1]\n[variants.v]\na = {scenario = "gone.toml"}\n')
    with pytest.raises(airsched.ScenarioError) as exc:
        sweeps.load_sweep(path).runs()
    assert exc.value.errors == [f"{path}:4:1: scenario: {tmp_path / 'gone.toml'}: no such file"]


def test_a_failed_run_is_reported_and_retried_on_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fails is listed in failures.json with its command; the others complete, and
    the next pass runs only the failed one."""
    import airsched.runner

    spec = write_sweep(tmp_path, 'seeds = [1, 2, 3]\n[set]\n"run.duration" = "2s"\n')
    real = airsched.runner.run

    def flaky(path, overrides=(), **kw):
        if "run.seed=2" in overrides:
            raise airsched.SimulationError("injected failure")
        return real(path, overrides=overrides, **kw)

    monkeypatch.setattr(airsched.runner, "run", flaky)
    out = tmp_path / "out"
    outcome = sweeps.execute(sweeps.load_sweep(spec), out, jobs=1)
    assert (outcome.done, len(outcome.failed)) == (2, 1)
    failed = json.loads((out / "failures.json").read_text())
    assert failed[0]["params"]["seed"] == 2 and failed[0]["error"] == "injected failure"
    assert failed[0]["command"].startswith("airsched run ") and "--set run.seed=2" in failed[0]["command"]
    monkeypatch.setattr(airsched.runner, "run", real)
    again = sweeps.execute(sweeps.load_sweep(spec), out, jobs=1)
    assert (again.done, again.skipped, again.failed) == (1, 2, [])
    assert not (out / "failures.json").exists()


def test_ctrl_c_stops_the_pool_and_leaves_only_whole_runs(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) stops the sweep and its
    spawned workers with status 130; what is left is whole run files only, and the next pass
    runs the rest."""
    spec = write_sweep(tmp_path, 'seeds = {from = 1, count = 8}\n[set]\n"run.duration" = "1800s"\n')
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "airsched", "sweep", str(spec), "-o", str(out), "-j", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not ignored, as in a terminal
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / sweeps.RUNS_DIR).glob("*.parquet"))) < 2:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    left = list((out / sweeps.RUNS_DIR).iterdir())
    assert all(p.suffix == ".parquet" for p in left) and 2 <= len(left) < 8
    outcome = sweeps.execute(sweeps.load_sweep(spec), out, jobs=1)
    assert (outcome.skipped, outcome.done) == (len(left), 8 - len(left))
