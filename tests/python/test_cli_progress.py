# SPDX-License-Identifier: Apache-2.0
"""The progress bar: drawn only once a run has lasted PROGRESS_DELAY_S, and only on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from airsched.cli import _progress


def terminal() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, width=80), buf


def test_short_runs_draw_nothing():
    console, buf = terminal()
    bar = _progress._LazyProgress(console)
    for step in range(1, 101):
        bar(step / 100)
    bar.close()
    assert buf.getvalue() == ""


def test_long_runs_draw_a_bar(monkeypatch):
    monkeypatch.setattr(_progress, "PROGRESS_DELAY_S", 0.0)
    console, buf = terminal()
    bar = _progress._LazyProgress(console)
    bar(0.42)
    bar.close()
    assert "simulating" in buf.getvalue()
    assert "42%" in buf.getvalue()


def test_no_bar_off_a_terminal_or_when_disabled(monkeypatch):
    monkeypatch.setattr(_progress, "PROGRESS_DELAY_S", 0.0)
    with _progress._progress_bar(enabled=True) as progress:  # pytest captures stderr: not a terminal
        assert progress is None
    with _progress._progress_bar(enabled=False) as progress:
        assert progress is None
