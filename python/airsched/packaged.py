# SPDX-License-Identifier: Apache-2.0
"""The example files shipped inside the package: the scenarios, the sweeps and the kernel
conformance corpus, reachable from an installed airsched with no repository (issue 29, item 1).

In the wheel they are package data (``airsched/scenarios``, ``airsched/sweeps``,
``airsched/kernel_corpus``); in a source checkout those are symlinks to ``scenarios/``,
``sweeps/`` and ``tests/python/kernel_corpus``. The sweeps name their scenarios as
``../scenarios/...``, which holds in both layouts.

A relative path that starts with ``scenarios/`` or ``sweeps/`` and does not exist from the
current directory names the packaged file of that name (:func:`resolve`), so the README's
examples (``airsched run scenarios/anomaly.toml``) work from any directory; a file of that name
in the current directory always wins. ``airsched examples`` lists them and copies them out.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

#: The packaged directories: what each holds, in ``airsched examples``'s words.
DIRS = {
    "scenarios": "scenario files (airsched run, validate, compare)",
    "sweeps": "sweep files (airsched sweep)",
    "kernel_corpus": "tc scripts of the kernel conformance corpus (airsched conformance kernel)",
}
#: The packaged directories a relative path may name by its first component.
PATH_PREFIXES = ("scenarios", "sweeps")


def package_dir(name: str) -> Path | None:
    """The packaged directory ``name`` (one of :data:`DIRS`) on disk, or None where the package
    has none (a wheel built without it, or a package not on a file system)."""
    try:
        root = resources.files("airsched") / name
    except (ModuleNotFoundError, TypeError):
        return None
    if not isinstance(root, os.PathLike):
        return None
    path = Path(os.fspath(root))
    return path.resolve() if path.is_dir() else None


def resolve(path: str | os.PathLike[str]) -> str:
    """``path`` as given if it exists (or is absolute, or names no packaged directory), else the
    packaged file it names: ``scenarios/anomaly.toml`` from a directory without one is the
    package's ``airsched/scenarios/anomaly.toml``."""
    text = os.fspath(path)
    p = Path(text)
    if p.is_absolute() or p.exists() or not p.parts or p.parts[0] not in PATH_PREFIXES:
        return text
    root = package_dir(p.parts[0])
    if root is None:
        return text
    candidate = root.joinpath(*p.parts[1:])
    return str(candidate) if candidate.is_file() else text


def files(name: str) -> list[Path]:
    """Every file of the packaged directory ``name``, sorted, relative to it."""
    root = package_dir(name)
    if root is None:
        return []
    return sorted(f.relative_to(root) for f in root.rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def copy(dest: str | os.PathLike[str], names: tuple[str, ...] = tuple(DIRS)) -> list[Path]:
    """Copy the packaged directories ``names`` into ``dest`` (made if missing), keeping their
    layout (the sweeps' ``../scenarios/`` paths hold in the copy); an existing file is never
    overwritten. Returns the files written."""
    out = Path(dest)
    written = []
    for name in names:
        root = package_dir(name)
        if root is None:
            continue
        for rel in files(name):
            target = out / name / rel
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, target)
            written.append(target)
    return written
