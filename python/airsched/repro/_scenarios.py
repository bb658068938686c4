# SPDX-License-Identifier: Apache-2.0
"""Finding the ``scenarios/`` directory the reproductions run, shared by them.

The repository's ``scenarios/`` ship inside the package (``airsched/scenarios``, package data of
the wheel; in a source checkout, ``python/airsched/scenarios`` is a symlink to them), so an
installed airsched needs no repository.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from .._errors import ScenarioError

#: Environment variable naming the scenarios/ directory to use instead of the package's.
SCENARIOS_ENV = "AIRSCHED_SCENARIOS"

#: The package that holds the scenarios as data, and their directory in it.
PACKAGE = "airsched"
PACKAGE_DIR = "scenarios"


def find_scenarios_dir(scenarios_dir: str | os.PathLike[str] | None, subdir: str, marker: str) -> Path:
    """The ``scenarios/`` directory holding ``subdir/marker`` (e.g. ``garroppo/share-1-4-drr.toml``).

    Looked for, in order: ``scenarios_dir`` if given (``--scenarios``), the environment
    variable ``AIRSCHED_SCENARIOS`` (either names a directory chosen on purpose, which wins),
    the scenarios shipped in the package (:func:`package_scenarios_dir`), then the directories
    above this package (a source checkout run without installing) and the current directory.
    Either ``scenarios/`` or ``scenarios/<subdir>`` itself may be given. Raises
    :class:`ScenarioError` saying what to pass when none is found.
    """
    given_dirs = (
        (scenarios_dir, "scenarios_dir / --scenarios"),
        (os.environ.get(SCENARIOS_ENV) or None, SCENARIOS_ENV),
    )
    for given, origin in given_dirs:
        if given is not None:
            found = _scenarios_root(Path(given), subdir, marker)
            if found is None:
                raise ScenarioError(
                    f"{os.fspath(given)}: not a scenarios directory with {subdir}/{marker} in it "
                    f"(given as {origin})"
                )
            return found
    packaged = package_scenarios_dir()
    candidates = ([packaged] if packaged is not None else []) + _repository_candidates()
    for candidate in candidates:
        found = _scenarios_root(candidate, subdir, marker)
        if found is not None:
            return found
    raise ScenarioError(
        f"cannot find the scenarios/ directory: the package has none with {subdir}/{marker} "
        f"(a wheel built without them?) and none was found above {Path(__file__).resolve().parent} "
        f"or in {Path.cwd()}; pass scenarios_dir=... (Python) or --scenarios DIR (command line), "
        f"or set {SCENARIOS_ENV}, to a scenarios/ directory"
    )


def display_path(path: str | os.PathLike[str]) -> str:
    """A scenario file as figure titles name it: from its scenarios directory on, e.g.
    ``scenarios/hoiland/udp.toml`` (not the site-packages path of an installed package)."""
    path = Path(path)
    for parent in path.parents:
        if parent.name == PACKAGE_DIR:
            return str(path.relative_to(parent.parent))
    return str(path)


def package_scenarios_dir() -> Path | None:
    """The scenarios shipped in the package (``airsched/scenarios``) as a directory on disk, or
    None where the package has none (or is not on a file system, e.g. in a zip)."""
    try:
        root: Any = _package_files() / PACKAGE_DIR
    except (ModuleNotFoundError, TypeError):
        return None
    if not isinstance(root, Path):
        root = Path(os.fspath(root)) if isinstance(root, os.PathLike) else None
    return root.resolve() if root is not None and root.is_dir() else None


def _package_files() -> Any:
    """The package's resources root (a Traversable, a Path for an installed package)."""
    return resources.files(PACKAGE)


def _repository_candidates() -> list[Path]:
    """Where a source checkout's scenarios/ may be: above this package, then the current
    directory."""
    here = Path(__file__).resolve()
    return [parent / "scenarios" for parent in here.parents] + [Path.cwd() / "scenarios"]


def _scenarios_root(path: Path, subdir: str, marker: str) -> Path | None:
    """``path`` as the scenarios/ directory if it (or its ``subdir``) holds ``marker``, else None."""
    if (path / subdir / marker).is_file():
        return path
    if path.name == subdir and (path / marker).is_file():
        return path.parent
    return None


def short_run_warmup(duration: str | None, warmup_s: float, sample_s: float = 1.0) -> dict[str, str]:
    """The warm-up override of a bounded run too short for a scenario's ``warmup_s`` warm-up plus
    two ``sample_s`` samples (the smoke runs of ``repro all --duration 3s``): a third of the run,
    so that its samples still give a standard deviation. ``{}`` for a long enough or unparsed
    ``duration`` (the papers' figures need the full runs anyway)."""
    import re

    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s)?\s*", duration or "")
    if m is None:
        return {}
    secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    return {"run.warmup": f"{secs / 3:g}s"} if secs < warmup_s + 2 * sample_s else {}
