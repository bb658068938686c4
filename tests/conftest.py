# SPDX-License-Identifier: Apache-2.0
"""Fixtures shared by the Python test suite: scenario files, and the command line run as a user
runs it (a separate process, so exit codes, stdout and stderr are the real ones)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "python" / "data"

#: Test files that use the network namespaces, veth devices, tc or real time (live emulation,
#: kernel conformance): their names would collide and their timing would suffer if two of them
#: ran at once, so pytest-xdist gives them all to one worker.
SERIAL = {"test_behaviour.py", "test_emulate.py", "test_emulate_flent.py", "test_export.py", "test_kernel_conformance.py"}

#: Files run on the worker of :data:`SERIAL`, in the same scope (in collection order, so after
#: the emulation and behaviour files): test_installed.py builds a wheel (a Rust build), which
#: beside the real-time tests made the emulator late (a real ping 1.1-1.6 ms over its simulated
#: path, bound 1 ms, on a loaded machine); here it runs while the other worker takes the rest.
AFTER_SERIAL = {"test_installed.py"}

#: The longest scope, handed out first so that it does not start at the end of the run and
#: leave the other worker idle (xdist would start with the files that have the most tests).
FIRST = ("serial",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scheduler for ``-n``: whole files go to a worker (their module and session
    fixtures are built once), the files of :data:`SERIAL` and :data:`AFTER_SERIAL` go to one
    worker together, one after the other, and the longest scope (:data:`FIRST`) starts first.
    (xdist's ``--dist loadgroup`` would do the grouping with marks, but with pytest 9 it no
    longer can: it renames the items' ``_nodeid``, which pytest 9 no longer reads.)"""
    from collections import OrderedDict

    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(OrderedDict):
        """xdist's queue of scopes (it takes them from the front), with :data:`FIRST` moved there."""

        def __setitem__(self, scope: str, nodeids: Any) -> None:
            super().__setitem__(scope, nodeids)
            if Path(scope).name in FIRST:
                self.move_to_end(scope, last=False)

    class ByFile(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self.workqueue = LongestFirst()

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "serial" if Path(path).name in SERIAL | AFTER_SERIAL else path

    return ByFile(config, log)


@pytest.fixture(scope="session")
def data() -> Path:
    """The directory of scenario files the tests share (tests/python/data)."""
    return DATA


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[..., Path]:
    """Write TOML text to a file in a fresh directory and return its path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m airsched ARGS...`` and return the finished process (text output)."""
    workdir = tmp_path_factory.mktemp("cwd")

    def run(*args: Any, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
        return subprocess.run(
            [sys.executable, "-m", "airsched", *map(str, args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd or workdir,
            timeout=300,
        )

    return run


@pytest.fixture(scope="session")
def cli_json(cli: Callable[..., subprocess.CompletedProcess[str]]) -> Callable[..., dict[str, Any]]:
    """Run ``airsched run ... --json``, check it succeeded, and return the parsed JSON."""

    def run(*args: Any) -> dict[str, Any]:
        proc = cli("run", *args, "--json")
        assert proc.returncode == 0, proc.stderr
        # json.loads rejects trailing data: stdout must hold exactly one JSON document.
        return json.loads(proc.stdout)

    return run
