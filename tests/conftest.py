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
