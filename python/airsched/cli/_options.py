# SPDX-License-Identifier: Apache-2.0
"""Arguments and options that several commands share, and the one rule every --duration takes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

#: What every command's --duration takes (one rule for all, see :func:`_duration`).
DURATION_FORMS = 'seconds ("10", "2.5") or with a unit ("10s", "500ms")'


ScenarioArg = Annotated[
    str, typer.Argument(metavar="SCENARIO", help="Scenario file (TOML).", show_default=False)
]

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a setting of the scenario, as if the file said so (repeatable): "
        "--set cell.retry_limit=4 --set 'station[sta2].rate=2Mbps' --set flow[0].start=2s. "
        "Stations and flows by index from 0 or by name; VALUE is TOML, a bare word a string.",
        show_default=False,
    ),
]


ScenariosOption = Annotated[
    Path | None,
    typer.Option(
        "--scenarios",
        help="The repository's scenarios/ directory, if airsched cannot find it "
        "(also: the AIRSCHED_SCENARIOS environment variable).",
    ),
]


_BARE_SECONDS = re.compile(r"^\s*\d+(\.\d*)?\s*$")


def _duration(value: str | None) -> str | None:
    """A --duration as the scenario takes it: a bare number is seconds ("5" is "5s"); anything
    else passes unchanged, for the core to accept or to reject naming run.duration."""
    if value is not None and _BARE_SECONDS.match(value):
        return f"{value.strip()}s"
    return value


def _override_lines(overrides: list[str] | None) -> list[str]:
    from ..scenario import override_lines

    return override_lines(overrides or [])
