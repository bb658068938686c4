# SPDX-License-Identifier: Apache-2.0
"""``airsched export`` (a node of a scenario as a script for a Linux box) and ``airsched import``
(a Linux box's tc trees as tc text for a scenario)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ..scenario import load
from ._app import EXIT_BAD_INPUT, EXIT_INVALID, _cannot_write, _reported_errors
from ._options import ScenarioArg, SetOption


def export_command(
    scenario: ScenarioArg,
    node: Annotated[str, typer.Option(help="The node to export: ap, server or a station's name.")] = "ap",
    out: Annotated[Path | None, typer.Option("--output", "-o", help="Write the script here (default: stdout).")] = None,
    form: Annotated[str, typer.Option(help="script (a POSIX shell apply script) or sqm (an OpenWrt /etc/config/sqm section).")] = "script",
    whtb_as_htb: Annotated[bool, typer.Option("--whtb-as-htb", help="Export whtb as htb (without gate/gate_skip): Linux has no whtb.")] = False,
    allow_cbq: Annotated[bool, typer.Option("--allow-cbq", help="Export cbq, for a kernel older than 6.3.")] = False,
    ath9k_as_mac80211: Annotated[bool, typer.Option("--ath9k-as-mac80211", help="Export airtime = \"ath9k\" as mac80211's airtime scheduler.")] = False,
    overrides: SetOption = None,
) -> None:
    """Write a shell script that applies a node of SCENARIO to a Linux box: each device's tc tree,
    txqueuelen and (AP of an 802.11n cell) the mac80211 airtime weights and AQL. The script's
    modes: apply (default), revert, check (dry run). See docs/export.md."""
    from ..export import ExportError, ExportOptions, export_script, sqm_config

    if form not in ("script", "sqm"):
        print(f"error: --form {form}: expected script or sqm", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    opts = ExportOptions(whtb_as_htb=whtb_as_htb, allow_cbq=allow_cbq, ath9k_as_mac80211=ath9k_as_mac80211)
    with _reported_errors(EXIT_BAD_INPUT, bad_set=EXIT_BAD_INPUT):
        source = load(scenario)
        warnings: list[str] = []
        try:
            text = (export_script(source, node, overrides, opts) if form == "script"
                    else sqm_config(source, node, overrides, warnings))
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID) from None
    for warning in warnings:
        print(f"warning: {source.path}: {warning}", file=sys.stderr)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text)
        if form == "script":
            out.chmod(0o755)
    except OSError as exc:
        print(f"error: {out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None


def import_command(
    devices: Annotated[list[str], typer.Argument(metavar="DEV...", help="Devices to read (e.g. wlan0 eth0).")],
    netns: Annotated[str | None, typer.Option(help="Read the devices of this network namespace (tc -n NS).")] = None,
    from_dir: Annotated[
        Path | None,
        typer.Option("--from", metavar="DIR", help="Read saved tc output instead of this machine: DIR/DEV.qdisc.json "
                     "(tc -r -j qdisc show dev DEV), DIR/DEV.class.txt (tc -d class show dev DEV), DIR/DEV.filter.PARENT.json "
                     "(tc -j filter show dev DEV parent PARENT, with ':' written as '_')."),
    ] = None,
    out: Annotated[Path | None, typer.Option("--output", "-o", help="Write the tc text here (default: stdout).")] = None,
    cell: Annotated[bool, typer.Option("--cell", help="Write a scenario of the whole cell of the wireless DEV: iw dev DEV "
                                       "info and station dump (with --from: DIR/DEV.iw-info.txt, DIR/DEV.station-dump.txt) "
                                       "and DEV's tc tree; see docs/advise.md.")] = False,
) -> None:
    """Write the tc text that rebuilds the devices' qdisc, class and filter trees, for a
    scenario's tc_file (see docs/export.md); with --cell, a scenario of the AP's cell."""
    from ..importer import ImportError_, import_devices, read_live, read_saved

    if cell:
        _import_cell(devices, from_dir, out)
        return
    try:
        inputs = read_live(devices, netns) if from_dir is None else read_saved(from_dir, devices)
        result = import_devices(inputs)
    except (ImportError_, OSError) as exc:
        _import_failed(exc)
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    _write_text(result.text, out)


def _import_failed(exc: Exception) -> NoReturn:
    """An import that cannot be done: its error, one line per line of the message, exit 2."""
    from .._errors import one_line

    for line in str(exc).splitlines():
        print(f"error: {one_line(line)}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT) from None


def _write_text(text: str, out: Path | None) -> None:
    """``text`` to stdout, or to ``out`` (one error line if it cannot be written)."""
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        _cannot_write(out, exc)


def _import_cell(devices: list[str], from_dir: Path | None, out: Path | None) -> None:
    from ..importer import ImportError_
    from ..iw import import_cell

    try:
        if len(devices) != 1:
            raise ImportError_(f"--cell reads one wireless device, got {len(devices)}: {' '.join(devices)}")
        made = import_cell(devices[0], None if from_dir is None else str(from_dir))
    except (ImportError_, OSError) as exc:
        _import_failed(exc)
    for g in made.guesses:
        print(f"note: {g}", file=sys.stderr)
    _write_text(made.text, out)
