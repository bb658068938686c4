# SPDX-License-Identifier: Apache-2.0
"""The README's examples, run from an installed wheel in a directory outside the clone (issue
29): a wheel of this checkout is built once per session (or taken from ``AIRSCHED_WHEEL``),
installed with pip into a fresh virtual environment, and the README's command lines and Python
block run there from a temporary directory, with no repository to fall back on.

The fresh environment gets the wheel only; its dependencies (pandas, pyarrow, matplotlib, ...)
are those of the environment running the tests, made visible through a ``.pth`` file, so the
test needs no network and no time to install them. Commands that would run for minutes are
bounded (fewer seeds, a shorter ``--duration``), each bound written below beside the README line
it changes; every other line runs as the README prints it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: README line prefix -> (what of it is replaced, by what) to bound it in time; the rest of every
#: line runs as printed.
BOUNDS = {
    "airsched sweep sweeps/garroppo-1-4.toml": ("--seeds 1-10", "--seeds 1 --set run.duration=3s -j 2"),
    "airsched repro all": ("--out out/all", "--out out/all --duration 3"),
}


def _sh_blocks(text: str) -> list[list[str]]:
    return [block.strip("\n").splitlines() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def readme_commands() -> list[list[str]]:
    """The README's runnable ``airsched`` lines: the first example's (after its set-up), and
    the lines of the experiments and overrides blocks (the usage summary's placeholders are
    not runnable), without their ``# comments`` and ``[optional]`` parts, bounded by
    :data:`BOUNDS`."""
    blocks = _sh_blocks(README.read_text(encoding="utf-8"))
    first = next(line for line in blocks[0] if "airsched run" in line)
    lines = ["airsched " + first.split("/bin/airsched ", 1)[1]]
    for block in blocks[1:]:
        if any(re.search(r"\b[A-Z]{3,}\b", line.split("#")[0]) for line in block):
            continue  # a usage summary (SCENARIO, DIR, ...), not examples
        lines += [line for line in block if line.startswith("airsched ")]
    commands = []
    for line in lines:
        line = re.sub(r"\s+#.*$", "", line)
        line = re.sub(r"\s*\[--[^\]]*\]", "", line).strip()  # [--optional parts]
        for prefix, (part, bounded) in BOUNDS.items():
            if line.startswith(prefix):
                assert part in line, f"README line {line!r} no longer has {part!r}: update BOUNDS"
                line = line.replace(part, bounded)
        commands.append(shlex.split(line))
    return commands


def readme_python() -> str:
    return re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("AIRSCHED_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("wheel")
    # Cargo's `testing` profile, the test command's (README): this test checks what the wheel
    # holds (the extension, package data, entry points) and the README's commands from it, not
    # the optimiser. The release profile of the README's first command (`pip install .`)
    # compiles the same code under the same cfg (`testing` inherits it, Cargo.toml) with one
    # code-generation unit and thin LTO; clippy --release checks it. Building it here took 4-7
    # of the CI's minutes on two cores; under `testing` the wheel reuses the core `cargo test`
    # compiled. One compiler job: the other pytest worker's tests run beside it.
    env = dict(os.environ, MATURIN_PEP517_ARGS="--profile testing", CARGO_BUILD_JOBS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=1500, env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = out.glob("airsched-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(wheel, tmp_path_factory) -> dict:
    """A fresh venv with the wheel installed by pip; the environment to run it in."""
    env_dir = tmp_path_factory.mktemp("venv") / "v"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # The dependencies: this environment's site-packages (its .pth files, e.g. an editable
    # airsched, are not read from a path added this way).
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "airsched-test-deps.pth").write_text("\n".join(sorted(deps)) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AIRSCHED_SCENARIOS", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"
    env["MPLBACKEND"] = "Agg"
    return {"python": python, "bin": env_dir / "bin", "env": env}


def test_readme_commands_are_found():
    commands = readme_commands()
    assert ["airsched", "run", "scenarios/anomaly.toml"] in commands
    assert any(c[:2] == ["airsched", "sweep"] for c in commands) and any(c[:3] == ["airsched", "repro", "all"] for c in commands)
    assert len(commands) >= 8


def test_the_readme_runs_from_an_installed_wheel_outside_the_clone(installed, tmp_path):
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    where = subprocess.run([str(installed["python"]), "-c", "import airsched; print(airsched.__file__)"],
                           capture_output=True, text=True, cwd=cwd, env=installed["env"], check=True).stdout
    assert str(ROOT) not in where and str(installed["bin"].parent) in where, where
    for args in readme_commands():
        proc = subprocess.run([str(installed["bin"] / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd,
                              env=installed["env"], timeout=600)
        assert proc.returncode == 0, f"{shlex.join(args)}: {proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, shlex.join(args)
    assert (cwd / "report.html").stat().st_size > 10_000
    assert (cwd / "out" / "all" / "report.html").is_file()
    assert (cwd / "captures" / "air.pcap").is_file() and (cwd / "run.flent.gz").is_file()
    assert (cwd / "compare.png").is_file()
    # The Python block, in the same directory.
    proc = subprocess.run([str(installed["python"]), "-c", readme_python()], capture_output=True, text=True, cwd=cwd,
                          env=installed["env"], timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "goodput_mbps" in proc.stdout and (cwd / "out" / "stations.parquet").is_file()
    # The packaged corpus and examples.
    listing = subprocess.run([str(installed["bin"] / "airsched"), "examples"], capture_output=True, text=True, cwd=cwd,
                             env=installed["env"], check=True).stdout
    assert "kernel_corpus/01-htb-basic.tc" in listing and "sweeps/garroppo-1-4.toml" in listing
