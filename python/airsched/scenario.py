# SPDX-License-Identifier: Apache-2.0
"""Loading and checking scenario files.

A scenario is TOML text plus the name its errors should carry (the file's path as the user gave
it, or ``<string>`` for text handed over directly). The native core does all parsing and
validation; this module only reads files and reports on what the core accepted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import _core
from ._errors import ScenarioError, native_errors

#: The name errors carry for a scenario given as text rather than as a file.
TEXT_PATH = "<string>"

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class ScenarioSource:
    """A scenario's TOML text and the path its error messages name."""

    text: str
    path: str

    def validate(self) -> ScenarioInfo:
        """Check the scenario without running it; raises :class:`ScenarioError` listing every
        problem."""
        with native_errors():
            # The core owns parsing, defaults and units; it reports what it understood.
            info = _core.validate(self.text, self.path)
        return ScenarioInfo(self.path, len(info["stations"]), len(info["flows"]), int(info["duration_ns"]))


@dataclass(frozen=True)
class ScenarioInfo:
    """What ``validate`` reports about a scenario the core accepted."""

    path: str
    stations: int
    flows: int
    duration_ns: int

    @property
    def duration(self) -> str:
        """The simulated duration in the largest exact unit, e.g. ``"60s"`` or ``"250ms"``."""
        return format_ns(self.duration_ns)


def load(scenario: PathLike | None = None, *, text: str | None = None) -> ScenarioSource:
    """Read a scenario file, or wrap scenario text; exactly one of the two must be given.

    A file that cannot be read raises :class:`ScenarioError` naming the path.
    """
    if (scenario is None) == (text is None):
        raise TypeError("give either a scenario path or text=..., not both and not neither")
    if text is not None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        return ScenarioSource(text, TEXT_PATH)
    assert scenario is not None
    path = os.fspath(scenario)
    if not isinstance(path, str):
        raise TypeError(f"scenario must be a str or os.PathLike[str] path, not {type(path).__name__}")
    return ScenarioSource(read_text(path), path)


def read_text(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        hint = " (scenario text goes in text=..., not in the path)" if "\n" in path else ""
        raise ScenarioError(f"{path}: no such file{hint}") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: is a directory, not a scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ScenarioError(f"{path}:{line}:{col}: file is not UTF-8 text (TOML must be)") from None


def validate(scenario: PathLike | None = None, *, text: str | None = None) -> ScenarioInfo:
    """Check a scenario without running it; raises :class:`ScenarioError` listing every problem."""
    return load(scenario, text=text).validate()


_UNITS = ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"))


def format_ns(ns: int) -> str:
    """A duration in the largest unit that states it exactly, as the core writes durations."""
    for scale, unit in _UNITS:
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"
