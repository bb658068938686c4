# SPDX-License-Identifier: Apache-2.0
"""The typer app of ``airsched``, its exit codes, and the wrapper that turns errors into them.

Exit codes: 0 success; 1 ``validate`` found errors in the file, or results could not be written;
2 bad input (an invalid or missing scenario, a bad option or ``--set``); 3 an internal simulator
error (a bug); 130 interrupted (Ctrl-C). Errors go to stderr as ``error: FILE:LINE:COL: KEY:
message`` lines (``<command line>:N:COL`` for the N-th override), never as a Python traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from .. import __version__
from .._errors import ScenarioError, SimulationError, one_line
from ..result import Result
from ..scenario import COMMAND_LINE

EXIT_INVALID = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
#: Ctrl-C, as a shell reports SIGINT (128 + 2).
EXIT_INTERRUPTED = 130


app = typer.Typer(
    name="airsched",
    help="Fast, deterministic simulator of a WiFi access point and its cell.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


def _print_version(value: bool) -> None:
    if value:
        print(f"airsched {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Fast, deterministic simulator of a WiFi access point and its cell."""


def main() -> None:
    """Entry point of the ``airsched`` script and of ``python -m airsched``."""
    # Ctrl-C: exit status 130. The core simulates without the GIL in slices of bounded work and
    # looks at Python's signals between them, so it takes effect within a fraction of a second;
    # `run --out` then writes what was measured, marked partial.
    from .._startup import ready

    ready()
    app(prog_name="airsched")


@contextmanager
def _reported_errors(scenario_exit_code: int, bad_set: int | None = None) -> Iterator[None]:
    """Turn airsched's errors into stderr lines and an exit code (no traceback); ``bad_set`` is
    the exit code when an error is in a ``--set`` rather than in the file."""
    try:
        yield
    except ScenarioError as exc:
        for line in exc.errors:
            print(f"error: {one_line(line)}", file=sys.stderr)
        in_set = any(line.startswith(f"{COMMAND_LINE}:") for line in exc.errors)
        raise typer.Exit(bad_set if bad_set is not None and in_set else scenario_exit_code) from None
    except SimulationError as exc:
        print(f"error: internal simulator error: {exc}", file=sys.stderr)
        print(
            "error: this is a bug in airsched; please report it together with the scenario", file=sys.stderr
        )
        raise typer.Exit(EXIT_INTERNAL) from None


def _check_option(option: str, value: str, allowed: Any) -> None:
    """Exit 2 naming the option and its allowed values unless ``value`` is one of them."""
    choices = list(allowed)
    if value not in choices:
        _bad_input(f"{option}: must be one of {', '.join(choices)}, got {value!r}")


def _runs_options(executor: str, jobs: int | None, seeds: str | None) -> list[int] | None:
    """The checks every command that hands runs to the sweep engine makes of its --executor,
    --jobs and --seeds (``airsched sweep``, ``airsched advise``): exit 2 naming the option, and
    the parsed seeds (None: the file's or the default)."""
    from ..sweeps import parse_seeds

    _check_option("--executor", executor, ("local", "dask"))
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            _bad_input("--executor dask: needs Dask distributed (pip install 'airsched[cluster]')")
    if jobs is not None and jobs < 1:
        _bad_input(f"--jobs: must be at least 1, got {jobs}")
    try:
        return None if seeds is None else parse_seeds(seeds)
    except ValueError as exc:
        _bad_input(f"--seeds: {exc}")


def _bad_input(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT)


def _cannot_write(path: Path, exc: OSError) -> NoReturn:
    print(f"error: {exc.filename or path}: cannot write: {exc.strerror or exc}", file=sys.stderr)
    raise typer.Exit(EXIT_INVALID) from None


def _warn(message: str) -> None:
    """Print a warning as one ``warning: FILE:LINE:COL: KEY: message`` line on stderr. The
    core's warnings carry their own ``warning:`` after the location; it is said once."""
    text = one_line(message).strip()
    if text.startswith("warning:"):
        text = text.removeprefix("warning:").lstrip()
    else:
        text = text.replace(": warning: ", ": ", 1)
    print(f"warning: {text}", file=sys.stderr)


def _check_writable(out: Path) -> None:
    """Exit 1 with one line, before any simulation, unless ``out`` is (or can be made) a
    directory that files can be created in."""
    import tempfile

    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        where = exc.filename or out
        print(f"error: --out {out}: cannot write results in {where}: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None


def _write_results(result: Result, out: Path) -> None:
    try:
        result.write(out)
    except OSError as exc:
        where = exc.filename or out
        print(f"error: {where}: cannot write results: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
