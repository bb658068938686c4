# SPDX-License-Identifier: Apache-2.0
"""Where a run's results come from: the scenario (its path, text and hash), the overrides, the
seed, the airsched version and the platform, and what the core understood of the scenario (every
setting it resolved, defaults included). ``summary.json`` and ``airsched run --json`` carry it
under ``provenance``, so that a result can be traced to, and re-run from, its input.

    >>> from airsched import load
    >>> from airsched.provenance import provenance
    >>> src = load("scenarios/anomaly.toml")
    >>> p = provenance(src.path, src.text, ["cell.retry_limit=4"], seed=1)
    >>> p["scenario_sha256"], p["resolved"]["cell"]["retry_limit"]
"""

from __future__ import annotations

import hashlib
import math
import os
import platform
from collections.abc import Mapping
from typing import Any

from . import _core
from ._errors import native_errors
from .scenario import Overrides, override_lines

#: The keys of :func:`provenance`'s dict, in order.
KEYS: tuple[str, ...] = (
    "scenario_path",
    "scenario_sha256",
    "scenario_text",
    "overrides",
    "seed",
    "airsched_version",
    "python_version",
    "python_implementation",
    "platform",
    "resolved",
)


def provenance(
    source_path: str | os.PathLike[str] | None,
    text: str,
    overrides: Overrides | None = None,
    seed: int | None = None,
    resolved: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance of one run, as a JSON-safe dict (:data:`KEYS`):

    ``scenario_path`` the path as given (``"<string>"`` for scenario text, None if unknown);
    ``scenario_sha256`` the SHA-256 of ``text`` in UTF-8 (for a file, of its bytes);
    ``scenario_text`` the text itself; ``overrides`` the ``KEY=VALUE`` lines applied, in order,
    as the core took them (``--set`` and its Python forms alike); ``seed`` the run's seed (the
    scenario's own where no override gave one: pass the result's ``summary["seed"]``);
    ``airsched_version``; ``python_version``, ``python_implementation`` and ``platform``; and
    ``resolved``, what the core understood of the scenario with the overrides applied, as
    ``_core.validate`` returns it (stations, flows, duration and warm-up, the cell's settings,
    each station's link, the AP's MAC queueing; every default filled in). ``resolved`` is
    computed when not given; a scenario the core rejects raises
    :class:`~airsched.ScenarioError`.
    """
    from . import __version__

    lines = override_lines(overrides)
    path = None if source_path is None else os.fspath(source_path)
    if resolved is None:
        with native_errors():
            resolved = _core.validate(text, path if path is not None else "<string>", lines)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an int or None, not {type(seed).__name__}")
    return {
        "scenario_path": path,
        "scenario_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "scenario_text": text,
        "overrides": list(lines),
        "seed": seed,
        "airsched_version": __version__,
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "resolved": json_safe(resolved),
    }


def json_safe(value: Any) -> Any:
    """``value`` with only what JSON holds: dicts with str keys, lists, str, int, finite float,
    bool and None. Tuples and sets become lists, NaN and infinities None (as in the results'
    JSON), paths and other objects their str."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_safe(v) for v in value), key=repr)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # numpy scalars and the like
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return json_safe(item())
        except (TypeError, ValueError):
            pass
    return str(value)


__all__ = ["KEYS", "json_safe", "provenance"]
