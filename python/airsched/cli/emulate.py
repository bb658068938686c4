# SPDX-License-Identifier: Apache-2.0
"""``airsched emulate``: run a scenario live, with real hosts in network namespaces whose packets
cross the simulated cell in real time (docs/emulation.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..result import OPTIONAL_TABLES
from ._app import EXIT_BAD_INPUT, EXIT_INTERRUPTED, _bad_input, _check_writable, _reported_errors, _warn, _write_results
from ._options import DURATION_FORMS, ScenarioArg, SetOption, _duration
from ._tables import _print_report


def emulate_command(
    scenario: ScenarioArg,
    overrides: SetOption = None,
    duration: Annotated[
        str | None, typer.Option(help=f"How long to run, in wall-clock time (run.duration): {DURATION_FORMS}.")
    ] = None,
    real: Annotated[
        list[str] | None,
        typer.Option(help="A station with a real host (repeat the option); all stations by default. The server is always real."),
    ] = None,
    prefix: Annotated[
        str, typer.Option(help="Namespace names are PREFIX + node name (air-server, air-fast, ...).")
    ] = "air-",
    flows_per_pair: Annotated[
        int, typer.Option(help="Real 5-tuples counted per ordered pair of real nodes (more are dropped and counted).")
    ] = 8,
    only_real: Annotated[
        bool, typer.Option("--only-real", help="Leave the scenario's [[flow]]s out: the cell carries the real traffic alone.")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Write the result tables and summary.json here.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the results as one JSON object on stdout.")] = False,
    pcap: Annotated[
        Path | None, typer.Option(help="Write packet captures of the emulated air and wire here, as `run --pcap`.")
    ] = None,
) -> None:
    """Run SCENARIO live: the server and the real stations get network namespaces (PREFIX+node)
    with a TUN device carrying the node's address; the packets real programs send there cross the
    simulated cell in real time. Needs root and /dev/net/tun.

    Example: `airsched emulate scenarios/anomaly.toml --duration 20s &` then
    `ip netns exec air-fast iperf3 -c 10.0.0.1 -t 10` (an `iperf3 -s` running in air-server)."""
    from ..emulate import EmulationUnavailable, emulate

    if flows_per_pair < 1:
        _bad_input("--flows-per-pair: must be at least 1")
    if out is not None:
        _check_writable(out)

    def ready(nodes: list) -> None:
        names = ", ".join(f"{n.netns} ({n.ip})" for n in nodes)
        print(f"emulating: namespaces {names}; Ctrl-C ends the run", file=sys.stderr, flush=True)

    try:
        with _reported_errors(EXIT_BAD_INPUT):
            result = emulate(
                scenario,
                duration=_duration(duration),
                real=real,
                simulated_flows=not only_real,
                prefix=prefix,
                flows_per_pair=flows_per_pair,
                overrides=overrides,
                pcap=pcap,
                on_ready=ready,
                warn=_warn,
            )
    except EmulationUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    s = result.summary
    if s["lag_samples"]:
        print(
            f"lag behind the wall clock: p50 {s['lag_p50_ms']:.3f} ms, p90 {s['lag_p90_ms']:.3f} ms, "
            f"p99 {s['lag_p99_ms']:.3f} ms, max {s['lag_max_ms']:.3f} ms over {s['lag_samples']} packets",
            file=sys.stderr,
        )
    else:
        print("no real packet was delivered (no lag measured)", file=sys.stderr)
    if out is not None:
        _write_results(result, out)
    report = result.to_json_dict()
    if json_output:
        sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    else:
        from rich.console import Console

        _print_report(Console(), dict(report, **{t: result.rows(t) for t in OPTIONAL_TABLES}))
    if s.get("partial"):
        raise typer.Exit(EXIT_INTERRUPTED)
