# SPDX-License-Identifier: Apache-2.0
"""The Python exception hierarchy, and the one place native errors are mapped into it.

Every call into ``airsched._core`` that can fail goes through :func:`native_errors`, so a user
only ever sees ``airsched.ScenarioError`` / ``airsched.SimulationError``, never the private
native classes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from . import _core


class AirschedError(Exception):
    """Base class of every error airsched raises on purpose."""


class ScenarioError(AirschedError, ValueError):
    """The scenario (file, text or a command-line override) is invalid or unreadable.

    ``errors`` holds one line per problem, each ``FILE:LINE:COL: KEY: message`` (line and column
    are left out where there is none, e.g. for a file that does not exist); a message that came
    over several lines is made one (see :func:`one_line`). ``str(exc)`` is those lines joined by
    newlines.
    """

    errors: list[str]

    def __init__(self, errors: str | Sequence[str]) -> None:
        lines = errors.splitlines() if isinstance(errors, str) else [one_line(str(e)) for e in errors]
        self.errors = lines
        # args[0] is the whole message, so pickling and str() round-trip the lines.
        super().__init__("\n".join(lines))


# A source excerpt in a parser's message: "  |", "1 | x = [", "  |     ^".
_EXCERPT = re.compile(r"^\s*\d*\s*\|")


def one_line(message: str) -> str:
    """``message`` as one line: the lines of a message that spans several (a TOML parser's
    error, an example in the text) joined by "; ", without blank lines and without the excerpt
    of the source a parser draws under its message (the location is in the message)."""
    if "\n" not in message and "\r" not in message:
        return message
    parts = [part.strip() for part in message.splitlines()]
    return "; ".join(part for part in parts if part and not _EXCERPT.match(part))


class SimulationError(AirschedError, RuntimeError):
    """An internal invariant of the simulator was violated (a bug in airsched, never bad input)."""


@contextmanager
def native_errors() -> Iterator[None]:
    """Re-raise the native module's exceptions as this package's own."""
    try:
        yield
    except _core.ScenarioError as exc:
        lines = getattr(exc, "errors", None) or str(exc).splitlines()
        # The native exception carries nothing the new one lacks: hide it from tracebacks.
        raise ScenarioError(lines) from None
    except _core.SimulationError as exc:
        raise SimulationError(str(exc)) from exc


def line_col(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column of byte ``offset`` of ``data`` (where a file stops being
    UTF-8 text, for its error line)."""
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1
