# SPDX-License-Identifier: Apache-2.0
"""The scenarios ship inside the package, so that the reproductions work from an installed
wheel without the repository (issue 12, item 10). Building a wheel is too slow for the suite:
these tests check the build configuration and the lookup; docs/repro-*.md say how it was
checked by hand with a real install."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pytest

import airsched
from airsched import packaged, scenario, sweeps
from airsched.repro import _scenarios, garroppo, hoiland

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
#: The packaged directories (python/airsched/packaged.py) and the repository's directory of each.
PACKAGED = {"scenarios": SCENARIOS, "sweeps": REPO / "sweeps", "kernel_corpus": REPO / "tests" / "python" / "kernel_corpus"}


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _includes(config: dict, fmt: str) -> list[str]:
    """The [tool.maturin] include patterns that apply to ``fmt`` ("wheel" or "sdist")."""
    patterns = []
    for entry in config["tool"]["maturin"].get("include", []):
        if isinstance(entry, str):
            patterns.append(entry)
        else:
            formats = entry.get("format", ["sdist", "wheel"])
            if fmt in ([formats] if isinstance(formats, str) else formats):
                patterns.append(entry["path"])
    return patterns


@pytest.mark.parametrize("fmt", ["wheel", "sdist"])
def test_wheel_and_sdist_ship_every_scenario_file(fmt):
    """Resolve the include patterns as maturin (>= 1.12.1) does: against the project root,
    else against python-source, the wheel's path being the path below python-source (the
    sdist's, below the project root: a wheel built from the sdist finds them in the package)."""
    config = _pyproject()
    python_dir = REPO / config["tool"]["maturin"]["python-source"]
    targets = set()
    for pattern in _includes(config, fmt):
        matches = [Path(m) for m in glob.glob(str(REPO / pattern), recursive=True)]
        if not matches:
            matches = [Path(m) for m in glob.glob(str(python_dir / pattern), recursive=True)]
        for match in matches:
            if match.is_file():
                # Inside python-source: the wheel path is the path below it.
                assert python_dir in match.parents, f"{match} would land outside the package"
                targets.add(match.relative_to(python_dir).as_posix())
    shipped = set()
    for name, source in PACKAGED.items():
        files = {f"airsched/{name}/{p.relative_to(source).as_posix()}" for p in source.rglob("*") if p.is_file()}
        assert files, f"the repository has {name} files"
        shipped |= files
    assert targets == shipped


def test_package_scenarios_are_the_repositorys():
    for name, source in PACKAGED.items():
        link = REPO / "python" / "airsched" / name
        assert link.is_symlink() and link.resolve() == source.resolve()
    assert _scenarios.package_scenarios_dir() == SCENARIOS.resolve()


def test_build_requires_a_maturin_that_resolves_includes_in_python_source():
    requires = _pyproject()["build-system"]["requires"]
    (maturin,) = [r for r in requires if r.startswith("maturin")]
    low = re.search(r">=\s*([\d.]+)", maturin)
    assert low, maturin
    assert tuple(int(x) for x in low.group(1).split(".")) >= (1, 12, 1)


@pytest.fixture
def no_repository(monkeypatch, tmp_path):
    """As an installed package sees it: no repository above the package or in the current
    directory, no environment variable."""
    monkeypatch.delenv(_scenarios.SCENARIOS_ENV, raising=False)
    monkeypatch.setattr(_scenarios, "_repository_candidates", lambda: [])
    monkeypatch.chdir(tmp_path)


def _fake_package(root: Path) -> Path:
    """A package directory with the scenarios the reproductions look for."""
    for rel in ("garroppo/share-1-4-drr.toml", "hoiland/udp.toml"):
        target = root / "scenarios" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((SCENARIOS / rel).read_text(encoding="utf-8"), encoding="utf-8")
    return root


def test_repro_finds_the_packaged_scenarios_without_the_repository(no_repository, monkeypatch, tmp_path):
    package = _fake_package(tmp_path / "site-packages" / "airsched")
    monkeypatch.setattr(_scenarios, "_package_files", lambda: package)
    found = garroppo.find_scenarios_dir()
    assert found == (package / "scenarios").resolve()
    assert hoiland.find_scenarios_dir() == found
    assert garroppo.scenario_file("1:4", "drr").is_file()
    # The figures name the file from scenarios/ on, not by its site-packages path.
    assert _scenarios.display_path(hoiland.scenario_file("udp")) == "scenarios/hoiland/udp.toml"


def test_packaged_scenarios_come_before_the_repository(monkeypatch, tmp_path):
    monkeypatch.delenv(_scenarios.SCENARIOS_ENV, raising=False)
    package = _fake_package(tmp_path / "pkg")
    monkeypatch.setattr(_scenarios, "_package_files", lambda: package)
    assert garroppo.find_scenarios_dir() == (package / "scenarios").resolve()


def test_scenarios_option_and_environment_come_before_the_package(monkeypatch, tmp_path):
    package = _fake_package(tmp_path / "pkg")
    monkeypatch.setattr(_scenarios, "_package_files", lambda: package)
    mine = _fake_package(tmp_path / "mine") / "scenarios"
    assert garroppo.find_scenarios_dir(mine) == mine
    monkeypatch.setenv(_scenarios.SCENARIOS_ENV, str(mine))
    assert garroppo.find_scenarios_dir() == mine


def test_no_packaged_scenarios_and_no_repository_is_one_clear_error(no_repository, monkeypatch, tmp_path):
    monkeypatch.setattr(_scenarios, "_package_files", lambda: tmp_path / "empty-package")
    assert _scenarios.package_scenarios_dir() is None
    with pytest.raises(airsched.ScenarioError) as exc:
        garroppo.find_scenarios_dir()
    (line,) = exc.value.errors
    assert "--scenarios" in line and _scenarios.SCENARIOS_ENV in line and "garroppo/share-1-4-drr.toml" in line


def test_the_installed_package_finds_its_scenarios(no_repository):
    """The real package's data (in a checkout, the symlink to scenarios/) is found with no
    repository to fall back on."""
    assert garroppo.find_scenarios_dir() == SCENARIOS.resolve()
    assert os.path.isfile(hoiland.scenario_file("tcp"))


def test_readme_paths_name_the_packaged_files_from_any_directory(monkeypatch, tmp_path):
    """Issue 29, item 1: `airsched run scenarios/anomaly.toml` from a directory without a
    scenarios/ (an installed package) runs the packaged scenario; sweeps too; a file of that name
    in the current directory wins; the kernel corpus is found in the package."""
    monkeypatch.chdir(tmp_path)
    source = scenario.load("scenarios/anomaly.toml")
    assert Path(source.path).resolve() == (SCENARIOS / "anomaly.toml").resolve()
    sweep = sweeps.load_sweep("sweeps/garroppo-1-4.toml")
    assert len(sweep.runs()) == 20 and all(Path(r.scenario).is_file() for r in sweep.runs())
    with pytest.raises(airsched.ScenarioError, match="airsched examples"):
        scenario.load("scenarios/missing.toml")
    mine = tmp_path / "scenarios" / "anomaly.toml"
    mine.parent.mkdir()
    mine.write_text("[run]\nduration = \"3s\"\n", encoding="utf-8")
    assert scenario.load("scenarios/anomaly.toml").path == "scenarios/anomaly.toml"
    assert (packaged.package_dir("kernel_corpus") / "01-htb-basic.tc").is_file()


def test_examples_command_lists_and_copies(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    listing = subprocess.run([sys.executable, "-m", "airsched", "examples"], capture_output=True, text=True,
                             cwd=tmp_path, env=env, timeout=60)
    assert listing.returncode == 0, listing.stderr
    assert "scenarios/anomaly.toml" in listing.stdout and "sweeps/garroppo-1-4.toml" in listing.stdout
    assert "kernel_corpus/01-htb-basic.tc" in listing.stdout
    copied = subprocess.run([sys.executable, "-m", "airsched", "examples", "--copy", "ex"], capture_output=True,
                            text=True, cwd=tmp_path, env=env, timeout=60)
    assert copied.returncode == 0, copied.stderr
    assert (tmp_path / "ex" / "scenarios" / "garroppo" / "share-1-4-drr.toml").is_file()
    # The copied sweep finds its scenarios through ../scenarios in the copy.
    sweep = sweeps.load_sweep(tmp_path / "ex" / "sweeps" / "garroppo-1-4.toml")
    assert all(str(tmp_path / "ex" / "scenarios") in r.scenario for r in sweep.runs())
