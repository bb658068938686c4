# SPDX-License-Identifier: Apache-2.0
"""``airsched run`` (simulate a scenario, print or write its results) and ``airsched validate``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..result import OPTIONAL_TABLES, Result, plural
from ..runner import run as run_scenario
from ..scenario import load
from ._app import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    _bad_input,
    _cannot_write,
    _check_writable,
    _reported_errors,
    _warn,
    _write_results,
)
from ._options import DURATION_FORMS, ScenarioArg, SetOption, _duration
from ._progress import _progress_bar
from ._tables import _print_report


def run_command(
    scenario: ScenarioArg,
    overrides: SetOption = None,
    seed: Annotated[int | None, typer.Option(help="Override the scenario's run.seed.")] = None,
    duration: Annotated[
        str | None, typer.Option(help=f"Override the scenario's run.duration: {DURATION_FORMS}.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Write stations/flows/samples/nodes .parquet and summary.json here."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the results as one JSON object on stdout, and nothing else.")
    ] = False,
    tc_stats: Annotated[
        bool,
        typer.Option(
            "--tc-stats",
            help="Also print every interface's queueing statistics as `tc -s qdisc show` and "
            "`tc -s class show` would (with --json they are always in the `tc` key).",
        ),
    ] = False,
    pcap: Annotated[
        Path | None,
        typer.Option(
            help="Write packet captures here: air.pcap (radiotap 802.11), NODE-wlan0.pcap per radio, "
            "wire-eth0.pcap (Ethernet), with the simulated timestamps.",
        ),
    ] = None,
    queues: Annotated[
        bool,
        typer.Option(
            "--queues",
            help="Also record every interface's queue length and every flow's queueing delay at each "
            "sample (with --out: queues.parquet, flow_delays.parquet; `airsched report` plots them).",
        ),
    ] = False,
    flent: Annotated[
        Path | None,
        typer.Option(help="Write the run as a flent data file (FILE.flent.gz, test tcp_download) that flent plots."),
    ] = None,
    mac_stats: Annotated[
        bool,
        typer.Option(
            "--mac-stats",
            help="Also report mac80211's per-station airtime and per-TID FQ statistics (802.11n, fq-mac): "
            "the mac80211_stations and mac80211_txqs tables, and their text as `iw dev wlan0 station dump` "
            "and debugfs stations/*/airtime and aqm print it.",
        ),
    ] = False,
) -> None:
    """Simulate SCENARIO and print per-station and per-flow results.

    Ctrl-C stops the run within a fraction of a second; with --out, what was measured up to
    then is written, marked partial (summary.json: "partial": true), and the exit status is 130."""
    if pcap is not None and pcap.exists() and not pcap.is_dir():
        _bad_input(f"--pcap: {pcap} is a file; give a directory for the capture files")
    if out is not None:
        # Before simulating: a run whose results cannot be written is a run lost.
        _check_writable(out)
    # Never a progress bar with --json (stdout is for the JSON alone) or when stderr is a log.
    try:
        with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=not json_output) as progress:
            try:
                result = run_scenario(
                    scenario,
                    seed=seed,
                    duration=_duration(duration),
                    overrides=overrides,
                    progress=progress,
                    partial_on_interrupt=out is not None,
                    pcap=pcap,
                    queues=queues,
                    mac_stats=mac_stats,
                )
            except OSError as exc:
                _cannot_write(pcap or Path("."), exc)
    except KeyboardInterrupt:
        print("interrupted: nothing written (with --out DIR, what was measured so far is kept)", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if flent is not None:
        from ..flent import flent_warnings, write_flent

        for warning in flent_warnings(result):
            _warn(f"--flent {flent}: {warning}")
        try:
            write_flent(result, flent, title=Path(scenario).stem)
        except OSError as exc:
            _cannot_write(flent, exc)
        print(f"wrote {flent}", file=sys.stderr)
    if result.pcaps:
        print(f"wrote {plural(len(result.pcaps), 'capture')} in {pcap}", file=sys.stderr)
    for warning in result.warnings:
        _warn(warning)
    if result.summary.get("partial"):
        _write_results(result, out)  # type: ignore[arg-type]  # partial only with --out
        print(
            f"interrupted: stopped at {result.summary['sim_seconds']:g} s of simulated time; "
            f"wrote what was measured to {out} (marked partial in summary.json)",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_INTERRUPTED)
    if out is not None:
        _write_results(result, out)
    report = result.to_json_dict()
    if json_output:
        from ..result import json_text

        sys.stdout.write(json_text(report))
    else:
        # The piconet's tables are printed (not in the JSON: summary.json keeps its keys).
        from rich.console import Console

        _print_report(Console(), dict(report, **{t: result.rows(t) for t in OPTIONAL_TABLES}))
        if tc_stats:
            _print_tc_stats(result)
        if mac_stats:
            _print_mac_stats(result)


def _print_tc_stats(result: Result) -> None:
    """Each interface's `tc -s qdisc show` and `tc -s class show` text, as a terminal shows it."""
    for iface in result.tc:
        print(f"\n# {iface['node']} dev {iface['dev']}")
        sys.stdout.write(iface.get("qdisc_text", ""))
        class_text = iface.get("class_text", "")
        if class_text:
            sys.stdout.write(class_text)


def _print_mac_stats(result: Result) -> None:
    """The station dump and debugfs files of the AP's mac80211, or why there are none."""
    from ..mac_stats import text

    shown = text(result.rows("mac80211_stations"), result.rows("mac80211_txqs"))
    if shown:
        print()
        sys.stdout.write(shown)
    else:
        _warn("--mac-stats: no mac80211 statistics (an 802.11n cell whose AP has mac_queue = \"fq-mac\")")


def validate_command(scenario: ScenarioArg, overrides: SetOption = None) -> None:
    """Check SCENARIO without running it (exit 0 if valid, 1 if not, 2 if it cannot be read or a
    --set is wrong)."""
    with _reported_errors(EXIT_BAD_INPUT):
        source = load(scenario)
    with _reported_errors(EXIT_INVALID, bad_set=EXIT_BAD_INPUT):
        info = source.validate(overrides)
    counts = f"{plural(info.stations, 'station')}, {plural(info.flows, 'flow')}"
    print(f"{scenario}: ok ({counts}, duration {info.duration})")
    for warning in info.warnings:
        _warn(warning)
    if info.standard != "802.11b":
        # The 802.11b summary stays one line; an 802.11n/ac/ax cell has more settings worth seeing.
        print(f"  cell: {info.describe_cell()}")
        ap = info.describe_ap()
        if ap:
            print(f"  ap: {ap}")
        for link in info.links:
            print(f"  {link.name}: {link.describe()}")
