# SPDX-License-Identifier: Apache-2.0
"""The progress bars drawn on stderr: a run's (after PROGRESS_DELAY_S, on a terminal only) and a
sweep's."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich loads only where a bar may be drawn: `run --json` never imports it
    from rich.console import Console
    from rich.progress import Progress

#: The progress bar appears only for runs that take longer than this (wall-clock seconds).
PROGRESS_DELAY_S = 1.0


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A progress callback drawing on stderr, or None where no bar should be drawn."""
    if not enabled:
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    progress = _LazyProgress(console)
    try:
        yield progress
    finally:
        progress.close()


class _LazyProgress:
    """A progress callback that shows a transient rich bar once the run has taken
    ``PROGRESS_DELAY_S``; short runs print nothing at all."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._started = time.monotonic()
        self._bar: Progress | None = None
        self._task: Any = None

    def __call__(self, fraction: float) -> None:
        if self._bar is None:
            if time.monotonic() - self._started < PROGRESS_DELAY_S or fraction >= 1.0:
                return
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TaskProgressColumn(),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("simulating", total=1.0)
        self._bar.update(self._task, completed=fraction)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


@contextmanager
def _sweep_progress() -> Iterator[Callable[[int, int, int, int], None] | None]:
    """A progress hook drawing runs done, failed and time left on stderr (a terminal only)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bar = Progress(
        TextColumn("sweep"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} runs"),
        TextColumn("{task.fields[failed]} failed"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("sweep", total=None, failed=0)
    bar.start()

    def hook(finished: int, failed: int, skipped: int, total: int) -> None:
        # Runs found done already are not counted in the time left: the bar covers this session.
        bar.update(task, total=total - skipped, completed=finished, failed=failed)

    try:
        yield hook
    finally:
        bar.stop()
