# SPDX-License-Identifier: Apache-2.0
"""``airsched tc ...``: tc scripts checked without running a scenario."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ..scenario import load
from ._app import EXIT_BAD_INPUT, EXIT_INVALID, _reported_errors, _warn
from ._options import SetOption, _override_lines

tc_app = typer.Typer(help="Work with tc scripts without running a scenario.", no_args_is_help=True)


@tc_app.command("check")
def tc_check_command(
    script: Annotated[str, typer.Argument(metavar="FILE", help="A tc script (tc command lines or a tc -b batch file).")],
    scenario: Annotated[
        str | None,
        typer.Option("--scenario", metavar="SCENARIO", help="Check FILE for a node of this scenario: only its devices exist."),
    ] = None,
    node: Annotated[str, typer.Option(help="The scenario's node: ap, server or a station's name.")] = "ap",
    overrides: SetOption = None,
) -> None:
    """Parse and validate FILE as airsched would, and print the tree it builds per device
    (exit 0 if valid, 1 if not, 2 if it cannot be read). With --scenario, FILE may name only
    the devices of the scenario's --node (the AP: wlan0 and eth0), with that node's txqueuelen."""
    from .. import _core
    from .._errors import native_errors
    from ..scenario import read_text

    with _reported_errors(EXIT_BAD_INPUT):
        text = read_text(script)
    devices = None
    if scenario is not None:
        with _reported_errors(EXIT_BAD_INPUT), native_errors():
            info = _core.export_info(load(scenario).text, scenario, _override_lines(overrides))
        nodes = {n["node"]: n for n in info["nodes"]}
        if node not in nodes:
            print(f"error: {scenario}: --node {node}: no such node; this scenario has {', '.join(nodes)}", file=sys.stderr)
            raise typer.Exit(EXIT_BAD_INPUT)
        devices = [(d, int(nodes[node]["txqueuelen"])) for d in nodes[node]["devices"]]
    with _reported_errors(EXIT_INVALID), native_errors():
        checked = _core.tc_check(text, script, devices)
    for warning in checked["warnings"]:
        _warn(warning)
    commands = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not commands:
        print(f"{script}: no tc commands: every device keeps its default qdisc")
        return
    for dev in checked["devices"]:
        sys.stdout.write(dev["tree"])
    for line in checked.get("redirects", []):
        sys.stdout.write(f"redirect {line}\n")
