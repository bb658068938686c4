# SPDX-License-Identifier: Apache-2.0
"""Finding the repository's ``scenarios/`` directory, shared by the reproductions."""

from __future__ import annotations

import os
from pathlib import Path

from .._errors import ScenarioError

#: Environment variable naming the scenarios/ directory when the package cannot find it.
SCENARIOS_ENV = "AIRSCHED_SCENARIOS"


def find_scenarios_dir(scenarios_dir: str | os.PathLike[str] | None, subdir: str, marker: str) -> Path:
    """The ``scenarios/`` directory holding ``subdir/marker`` (e.g. ``garroppo/share-1-4-drr.toml``).

    Looked for, in order: ``scenarios_dir`` if given, the environment variable
    ``AIRSCHED_SCENARIOS``, then the directories above this package (an editable install or a
    source checkout) and the current directory. Either ``scenarios/`` or ``scenarios/<subdir>``
    itself may be given. Raises :class:`ScenarioError` saying what to pass when none is found.
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
    here = Path(__file__).resolve()
    candidates = [parent / "scenarios" for parent in here.parents] + [Path.cwd() / "scenarios"]
    for candidate in candidates:
        found = _scenarios_root(candidate, subdir, marker)
        if found is not None:
            return found
    raise ScenarioError(
        "cannot find the scenarios/ directory of the airsched repository (looked above "
        f"{here.parent} and in {Path.cwd()}); pass scenarios_dir=... (Python) or --scenarios DIR "
        f"(command line), or set {SCENARIOS_ENV}, to the repository's scenarios/ directory"
    )


def _scenarios_root(path: Path, subdir: str, marker: str) -> Path | None:
    """``path`` as the scenarios/ directory if it (or its ``subdir``) holds ``marker``, else None."""
    if (path / subdir / marker).is_file():
        return path
    if path.name == subdir and (path / marker).is_file():
        return path.parent
    return None
