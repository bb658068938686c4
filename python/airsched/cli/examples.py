# SPDX-License-Identifier: Apache-2.0
"""``airsched examples``: the scenarios, sweeps and tc corpus shipped with airsched, listed or
copied into a directory (python/airsched/packaged.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import _cannot_write


def examples_command(
    copy: Annotated[
        Path | None,
        typer.Option(
            "--copy",
            metavar="DIR",
            help="Copy them into DIR (DIR/scenarios, DIR/sweeps, DIR/kernel_corpus); existing files are kept.",
        ),
    ] = None,
) -> None:
    """List the example files shipped with airsched, or copy them out with --copy DIR.
    `airsched run scenarios/anomaly.toml` (and `sweep sweeps/...`) finds the packaged file from
    any directory that has no file of that name."""
    from ..packaged import DIRS, files, package_dir
    from ..packaged import copy as copy_files

    if copy is not None:
        try:
            written = copy_files(copy)
        except OSError as exc:
            _cannot_write(copy, exc)
        print(f"{len(written)} files copied into {copy}")
        return
    for name, what in DIRS.items():
        root = package_dir(name)
        print(f"{name}/: {what}" + (f" (in {root})" if root else " (not in this package)"))
        for rel in files(name):
            print(f"  {name}/{rel.as_posix()}")
