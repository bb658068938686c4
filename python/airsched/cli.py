# SPDX-License-Identifier: Apache-2.0
"""The ``airsched`` command line.

Exit codes: 0 success; 1 ``validate`` found errors in the file, or results could not be written;
2 bad input (an invalid or missing scenario, a bad option or ``--set``); 3 an internal simulator
error (a bug); 130 interrupted (Ctrl-C). Errors go to stderr as ``error: FILE:LINE:COL: KEY:
message`` lines (``<command line>:N:COL`` for the N-th override), never as a Python traceback.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from . import __version__
from ._errors import ScenarioError, SimulationError, one_line
from .result import Result, plural
from .runner import run as run_scenario
from .scenario import COMMAND_LINE, load

EXIT_INVALID = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
#: Ctrl-C, as a shell reports SIGINT (128 + 2).
EXIT_INTERRUPTED = 130

#: The progress bar appears only for runs that take longer than this (wall-clock seconds).
PROGRESS_DELAY_S = 1.0

#: What every command's --duration takes (one rule for all, see :func:`_duration`).
DURATION_FORMS = 'seconds ("10", "2.5") or with a unit ("10s", "500ms")'

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


@app.command("run")
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
                )
            except OSError as exc:
                _cannot_write(pcap or Path("."), exc)
    except KeyboardInterrupt:
        print("interrupted: nothing written (with --out DIR, what was measured so far is kept)", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if flent is not None:
        from .flent import write_flent

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
        sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    else:
        # The piconet's tables are printed (not in the JSON: summary.json keeps its keys).
        _print_report(Console(), dict(report, **{t: result.rows(t) for t in OPTIONAL_TABLES}))
        if tc_stats:
            _print_tc_stats(result)


def _print_tc_stats(result: Result) -> None:
    """Each interface's `tc -s qdisc show` and `tc -s class show` text, as a terminal shows it."""
    for iface in result.tc:
        print(f"\n# {iface['node']} dev {iface['dev']}")
        sys.stdout.write(iface.get("qdisc_text", ""))
        class_text = iface.get("class_text", "")
        if class_text:
            sys.stdout.write(class_text)


tc_app = typer.Typer(help="Work with tc scripts without running a scenario.", no_args_is_help=True)
app.add_typer(tc_app, name="tc")


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
    from .scenario import read_text
    from . import _core
    from ._errors import native_errors

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
    for dev in checked["devices"]:
        sys.stdout.write(dev["tree"])
    for line in checked.get("redirects", []):
        sys.stdout.write(f"redirect {line}\n")


def _override_lines(overrides: list[str] | None) -> list[str]:
    from .scenario import override_lines

    return override_lines(overrides or [])


@app.command("export")
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
    from .export import ExportError, ExportOptions, export_script, sqm_config

    if form not in ("script", "sqm"):
        print(f"error: --form {form}: expected script or sqm", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    opts = ExportOptions(whtb_as_htb=whtb_as_htb, allow_cbq=allow_cbq, ath9k_as_mac80211=ath9k_as_mac80211)
    with _reported_errors(EXIT_BAD_INPUT, bad_set=EXIT_BAD_INPUT):
        source = load(scenario)
        try:
            text = (export_script(source, node, overrides, opts) if form == "script"
                    else sqm_config(source, node, overrides))
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID) from None
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


@app.command("import")
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
) -> None:
    """Write the tc text that rebuilds the devices' qdisc, class and filter trees, for a
    scenario's tc_file (see docs/export.md)."""
    from .importer import DeviceInput, ImportError_, import_devices, read_live

    try:
        if from_dir is None:
            inputs = read_live(devices, netns)
        else:
            inputs = []
            for dev in devices:
                q = (from_dir / f"{dev}.qdisc.json").read_text()
                cpath = from_dir / f"{dev}.class.txt"
                c = cpath.read_text() if cpath.exists() else ""
                filters = {}
                for fp in sorted(from_dir.glob(f"{dev}.filter.*.json")):
                    parent = fp.name[len(dev) + len(".filter."):-len(".json")].replace("_", ":")
                    filters[parent] = fp.read_text()
                inputs.append(DeviceInput(dev, q, c, filters))
        result = import_devices(inputs)
    except (ImportError_, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    for w in result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if out is None:
        sys.stdout.write(result.text)
    else:
        out.write_text(result.text)


conformance_app = typer.Typer(
    help="Check airsched's tc against the running Linux kernel (root; see docs/kernel-conformance.md).",
    no_args_is_help=True,
)
app.add_typer(conformance_app, name="conformance")


@conformance_app.command("kernel")
def conformance_kernel_command(
    scripts: Annotated[
        list[Path] | None,
        typer.Argument(metavar="[SCRIPT...]", help="tc scripts (default: the test corpus, tests/python/kernel_corpus)."),
    ] = None,
) -> None:
    """Apply each tc script line by line to veth devices in a new network namespace and compare
    the kernel's verdict per line and its trees with airsched's; print a markdown table. Exit 1
    if any script disagrees."""
    from . import kernel

    reason = kernel.unavailable()
    if reason:
        print(f"error: cannot run against the kernel: {reason}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    paths = scripts or sorted((Path(__file__).resolve().parents[2] / "tests" / "python" / "kernel_corpus").glob("*.tc"))
    if not paths:
        print("error: no scripts given and no corpus found", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    results, have = kernel.run_corpus(paths)
    print(f"kernel {os.uname().release}, iproute2 {'.'.join(map(str, kernel.tc_version()))}; kinds: {', '.join(sorted(have))}")
    print()
    print("| script | verdict | lines | trees | note |")
    print("|---|---|---|---|---|")
    bad = 0
    for r in results:
        if r.skipped:
            print(f"| {r.name} | skipped | | | {r.skipped} |")
            continue
        bad += not r.agrees
        note = "; ".join(r.differences()) or ("htb bursts as iproute2 < 6.14 rounds them" if r.old_tc_rounding else "")
        lines = sum(k == a for k, a in r.verdicts.values())
        trees = "same" if r.trees and r.trees_agree else ("differ" if r.trees else "-")
        print(f"| {r.name} | {'agrees' if r.agrees else 'DISAGREES'} | {lines}/{len(r.verdicts)} | {trees} | {note.replace('|', '/')} |")
    ran = sum(1 for r in results if not r.skipped)
    print()
    print(f"{ran - bad} of {ran} scripts agree ({len(results) - ran} skipped: kinds this kernel lacks)")
    if bad:
        raise typer.Exit(EXIT_INVALID)


@conformance_app.command("behaviour")
def conformance_behaviour_command(
    seconds: Annotated[float, typer.Option(help="Seconds per tree (1 s of it warm-up).")] = 5.0,
) -> None:
    """Shape a veth link between two namespaces with each tree of airsched.behaviour.CASES, send
    UDP flows through it, and print per-flow goodput and one-way delay against airsched's wired
    link with the same tree (markdown)."""
    from . import behaviour, kernel

    reason = kernel.unavailable()
    if reason:
        print(f"error: cannot run against the kernel: {reason}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    if seconds < 2:
        print("error: --seconds: at least 2 (1 s is warm-up)", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    print(behaviour.table(behaviour.compare(seconds=seconds)))


@app.command("calibrate")
def calibrate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Write the calibration table (TOML) here.")],
    snr_from: Annotated[float, typer.Option(help="Lowest SNR in dB.")] = -8.0,
    snr_to: Annotated[float, typer.Option(help="Highest SNR in dB.")] = 20.0,
    step: Annotated[float, typer.Option(help="SNR step in dB.")] = 0.5,
    payload: Annotated[int, typer.Option(help="UDP payload bytes per packet (the paper: 1024).")] = 1024,
    block: Annotated[int, typer.Option(help="Packets per measurement block, n (the paper: 100).")] = 100,
    rate_control: Annotated[str, typer.Option(help="Rate control of the link: fixed, arf, aarf, minstrel.")] = "arf",
    duration: Annotated[
        str, typer.Option(help=f"Simulated time per SNR point, 1 s warm-up included: {DURATION_FORMS}.")
    ] = "11s",
    seed: Annotated[int, typer.Option(help="Seed of every point's run.")] = 1,
) -> None:
    """Calibrate the AP's Wireless Channel Monitor as Garroppo et al. do (section 4.2): a
    saturated UDP flow over a link at each SNR, goodput n L / tau over blocks of n packets.
    The table is what `[monitor] calibration = "FILE"` reads."""
    from . import _core
    from ._errors import native_errors

    with _reported_errors(EXIT_BAD_INPUT), native_errors(), _progress_bar(enabled=True) as progress:
        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(done / total)

        text = _core.calibrate(snr_from, snr_to, step, payload, block, rate_control, _duration(duration), seed, report)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"error: {exc.filename or out}: cannot write the table: {exc.strerror or exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    points = text.count("[[point]]")
    print(f"wrote {out} ({points} SNR points)")


@app.command("plot")
def plot_command(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS_DIR", help="A directory `airsched run --out` wrote (samples.parquet).", show_default=False
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Figure file to write, its format by the suffix: .png, .pdf or .svg (default: RESULTS_DIR/WHAT.png).",
        ),
    ] = None,
    what: Annotated[str, typer.Option(help="What to draw: goodput, estimate (channel monitor) or snr.")] = "goodput",
    kind: Annotated[
        str,
        typer.Option(help="Rows to draw: station or flow (flows have goodput only), or interface (bytes/s out of each interface of --node, with the aggregate; interfaces.parquet)."),
    ] = "station",
    node: Annotated[str, typer.Option(help="--kind interface: the node whose interfaces to draw.")] = "ap",
) -> None:
    """Plot the per-station (or per-flow) samples of a run against time into a PNG, PDF or SVG;
    or, with --kind interface, the bytes per second out of each interface of a node (xnetload)."""
    from .plots import KINDS, WHAT, figure_format, plot_samples

    _check_option("--kind", kind, (*KINDS, "interface"))
    if kind == "interface":
        _plot_interfaces(results, output, node)
        return
    _check_option("--what", what, WHAT)
    if output is not None:
        try:
            figure_format(output)
        except ValueError as exc:
            _bad_input(f"--output: {exc}")
    samples_path = results / "samples.parquet"
    if not results.is_dir():
        _bad_input(f"{results}: no such directory (write one with `airsched run SCENARIO --out {results}`)")
    if not samples_path.is_file():
        _bad_input(f"{samples_path}: no such file (write it with `airsched run SCENARIO --out {results}`)")
    import pandas as pd

    try:
        samples = pd.read_parquet(samples_path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        _bad_input(f"{samples_path}: cannot read the samples: {exc}")
    target = output if output is not None else results / f"{what}.png"
    scenario, seed = _run_of(results)
    try:
        written = plot_samples(samples, target, what, kind=kind, scenario=scenario, seed=seed)
    except ValueError as exc:
        _bad_input(f"{samples_path}: {exc}")
    except OSError as exc:
        _cannot_write(target, exc)
    print(f"wrote {written}")


def _plot_interfaces(results: Path, output: Path | None, node: str) -> None:
    """`airsched plot RESULTS --kind interface`."""
    from .plots import figure_format, plot_interfaces

    if output is not None:
        try:
            figure_format(output)
        except ValueError as exc:
            _bad_input(f"--output: {exc}")
    path = results / "interfaces.parquet"
    if not results.is_dir():
        _bad_input(f"{results}: no such directory (write one with `airsched run SCENARIO --out {results}`)")
    if not path.is_file():
        _bad_input(f"{path}: no such file (write it with `airsched run SCENARIO --out {results}`)")
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        _bad_input(f"{path}: cannot read the interface samples: {exc}")
    target = output if output is not None else results / "interfaces.png"
    scenario, seed = _run_of(results)
    try:
        written = plot_interfaces(frame, target, node=node, scenario=scenario, seed=seed)
    except ValueError as exc:
        _bad_input(f"{path}: {exc}")
    except OSError as exc:
        _cannot_write(target, exc)
    print(f"wrote {written}")


repro_app = typer.Typer(help="Reproduce published experiments (see docs/repro-*.md).", no_args_is_help=True)
app.add_typer(repro_app, name="repro")

ScenariosOption = Annotated[
    Path | None,
    typer.Option(
        "--scenarios",
        help="The repository's scenarios/ directory, if airsched cannot find it "
        "(also: the AIRSCHED_SCENARIOS environment variable).",
    ),
]


@repro_app.command("garroppo")
def repro_garroppo_command(
    share: Annotated[str, typer.Option(help="Bandwidth share MS2:MS1: 1:4 (Table 1) or 1:1 (Table 2).")] = "1:4",
    duration: Annotated[
        str | None,
        typer.Option(help=f"Simulated time per run: {DURATION_FORMS} (default: the paper's 81.92 s + 1 s warm-up)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(help="Write garroppo-<share>.csv and garroppo-<share>-claims.csv here (and with --plot, the figures)."),
    ] = None,
    plot: Annotated[
        bool, typer.Option("--plot", help="Also write the occupancy (Figs. 6/7) and goodput figures into --out.")
    ] = False,
    scenarios: ScenariosOption = None,
) -> None:
    """Garroppo et al., Table 1 (--share 1:4) or Table 2 (--share 1:1).

    Runs every scheduler (CBQ, HTB, DRR, WHTB, and WHTB with the section 6.3 gate) with MS2 in each
    of the five positions and prints the simulated goodput beside the paper's, MS2's radio
    occupancy under DRR, WHTB and WHTB+gate, then section 6's claims checked per scheduler."""
    from .repro import garroppo

    _check_option("--share", share, garroppo.SHARES)
    if plot and out is None:
        _bad_input("--plot: needs --out DIR to write the figures into")
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        df = garroppo.run_table(
            share, duration=_duration(duration), seed=seed, progress=progress, scenarios_dir=scenarios
        )
    for warning in df.attrs.get("warnings", []):
        _warn(warning)
    claims = garroppo.check_claims(df)
    _print_tables([garroppo.format_table(df), garroppo.format_claims(claims)])
    if out is not None:
        stem = f"garroppo-{garroppo.SHARES[share]}"
        paths = [out / f"{stem}.csv", out / f"{stem}-claims.csv"]
        try:
            out.mkdir(parents=True, exist_ok=True)
            garroppo.write_csv(df, paths[0])
            garroppo.write_claims_csv(claims, paths[1])
            if plot:
                paths.append(garroppo.plot_occupancy(df, out / f"{stem}-occupancy.png"))
                paths.append(garroppo.plot_goodput(df, out / f"{stem}-goodput.png"))
        except OSError as exc:
            _cannot_write(out, exc)
        for path in paths:
            print(f"wrote {path}")


@repro_app.command("garroppo-walk")
def repro_garroppo_walk_command(
    scheduler: Annotated[str, typer.Option(help="The AP's scheduler: whtb (Fig. 9) or drr (Fig. 8).")] = "whtb",
    duration: Annotated[str | None, typer.Option(help=f"Override the walk's 141 s: {DURATION_FORMS}.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the run.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write the figure (garroppo-walk-<scheduler>.png) and the run's tables (samples.parquet...) here."
        ),
    ] = None,
    scenarios: ScenariosOption = None,
) -> None:
    """Garroppo et al., Figs. 8 (--scheduler drr) and 9 (whtb): MS2 walks out of range and back.

    MS1 stays good; the figure shows each station's goodput, the AP channel monitor's estimated
    goodput and MS2's SNR over time."""
    from .repro import garroppo
    from .repro._scenarios import display_path

    _check_option("--scheduler", scheduler, garroppo.WALK_SCHEDULERS)
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        result = garroppo.run_walk(
            scheduler, seed=seed, duration=_duration(duration), progress=progress, scenarios_dir=scenarios
        )
        walk_file = garroppo.walk_file(scheduler, scenarios)
    for warning in result.warnings:
        _warn(warning)
    _print_report(Console(), result.to_json_dict())
    if out is not None:
        _write_results(result, out)
        figure = out / f"garroppo-walk-{scheduler}.png"
        try:
            title = f"{garroppo.SCHEDULER_LABELS[scheduler]}: MS2 walks out of range and back"
            garroppo.plot_walk(result, figure, title=title, scenario=display_path(walk_file))
        except OSError as exc:
            _cannot_write(figure, exc)
        print(f"wrote {figure} and the run's tables in {out}")


@repro_app.command("hoiland")
def repro_hoiland_command(
    traffic: Annotated[str, typer.Option(help="Bulk traffic to the stations: udp, tcp or both.")] = "both",
    duration: Annotated[
        str | None,
        typer.Option(
            help=f"Simulated time per run, the 2 s warm-up included: {DURATION_FORMS} "
            "(default: the papers' 30 s + 2 s warm-up)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(help="Write hoiland.csv and each run's tables (runs/<traffic>-<configuration>/) here."),
    ] = None,
    plot: Annotated[
        bool, typer.Option("--plot", help="Also write the figures (hoiland-<traffic>-*.png) into --out.")
    ] = False,
    scenarios: ScenariosOption = None,
) -> None:
    """Høiland-Jørgensen: the testbed of the airtime fairness blog post and of "Bufferbloat
    mitigation in the WiFi stack - status and next steps".

    Runs FIFO, FQ-CoDel, FQ-MAC and Airtime with two fast stations, a slow one and a ping-only
    one, and prints per-station airtime, aggregate throughput, ping latency and A-MPDU sizes
    beside what the papers state (see docs/repro-hoiland.md)."""
    from .repro import hoiland

    _check_option("--traffic", traffic, (*hoiland.TRAFFICS, "both"))
    if plot and out is None:
        _bad_input("--plot: needs --out DIR to write the figures into")
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        rep = hoiland.run_testbed(
            traffic, duration=_duration(duration), seed=seed, progress=progress, scenarios_dir=scenarios
        )
    for warning in rep.warnings:
        _warn(warning)
    _print_tables([table for kind in rep.traffics for table in hoiland.format_tables(rep.summary, kind)], gap=True)
    if out is not None:
        try:
            paths = hoiland.write(rep, out)
            if plot:
                paths += hoiland.plot_all(rep, out)
        except OSError as exc:
            _cannot_write(out, exc)
        runs = [p for p in paths if p.is_dir()]
        for path in paths:
            if not path.is_dir():
                print(f"wrote {path}")
        if runs:
            print(f"wrote the tables of {plural(len(runs), 'run')} in {out / 'runs'}")


@repro_app.command("valenzuela")
def repro_valenzuela_command(
    duration: Annotated[
        str | None,
        typer.Option(help=f"Simulated time per run, the 2 s warm-up included: {DURATION_FORMS} (default: 60 s)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Write valenzuela.csv here.")] = None,
    scenarios: ScenariosOption = None,
) -> None:
    """Valenzuela et al.: Tables I-IV (UDP and TCP uploads from two 802.11b stations, with and
    without HTB at the stations) beside the paper's, and whether HTB reduces the standard
    deviation (see docs/repro-valenzuela.md)."""
    from .repro import valenzuela

    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        df = valenzuela.run_tables(duration=_duration(duration), seed=seed, progress=progress, scenarios_dir=scenarios)
    _print_tables(valenzuela.format_tables(df), gap=True)
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            df.to_csv(out / "valenzuela.csv", index=False, float_format="%.10g")
        except OSError as exc:
            _cannot_write(out, exc)
        print(f"wrote {out / 'valenzuela.csv'}")


@repro_app.command("yip-kwok")
def repro_yip_kwok_command(
    duration: Annotated[
        str | None,
        typer.Option(help=f"Simulated time per run, the 5 s warm-up included: {DURATION_FORMS} (default: the paper's 800 s)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(help="Write yip-kwok.csv, yip-kwok-series.csv and each run's tables (runs/<configuration>/) here."),
    ] = None,
    plot: Annotated[
        bool, typer.Option("--plot", help="Also write yip-kwok.png (Figs. 4-10: WLAN, Bluetooth, aggregate over time) into --out.")
    ] = False,
    scenarios: ScenariosOption = None,
) -> None:
    """Yip & Kwok: the dual-radio NAP (802.11b AP + Bluetooth PAN master, one IMQ device over
    both) under FIFO, HTB+SFQ, PRIO+TBF and SFQ, each client downloading a file over FTP; prints
    the aggregate's peak and range of major fluctuation, the WLAN and Bluetooth shares, the
    ranking beside the paper's and its observations (see docs/repro-yip-kwok.md)."""
    from .repro import yipkwok

    if plot and out is None:
        _bad_input("--plot: needs --out DIR to write the figure into")
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        rep = yipkwok.run_testbed(duration=_duration(duration), seed=seed, progress=progress, scenarios_dir=scenarios)
    for warning in rep.warnings:
        _warn(warning)
    _print_tables(yipkwok.format_tables(rep), gap=True)
    if out is not None:
        try:
            paths = yipkwok.write(rep, out)
            if plot:
                paths.append(yipkwok.plot(rep, out / "yip-kwok.png"))
        except OSError as exc:
            _cannot_write(out, exc)
        for path in paths:
            if not path.is_dir():
                print(f"wrote {path}")
        print(f"wrote the tables of {len(rep.results)} runs in {out / 'runs'}")


@app.command("sweep")
def sweep_command(
    spec: Annotated[str, typer.Argument(metavar="SWEEP", help="Sweep file (TOML).", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the sweep's runs (resumed if it exists).")],
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Worker processes of the local pool (default: all usable cores).")
    ] = None,
    executor: Annotated[str, typer.Option(help="Where runs go: local (process pool) or dask.")] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option(help="Dask scheduler address (tcp://host:8786); without it, a local Dask cluster."),
    ] = None,
    overrides: SetOption = None,
    seeds: Annotated[
        str | None, typer.Option(help="Replace the file's seeds: 1-10, 1,2,5 or 7.", show_default=False)
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Run every run again, even those already done.")] = False,
    plot: Annotated[bool, typer.Option("--plot", help="Also write goodput.png (means with error bars) into --out.")] = False,
) -> None:
    """Run every run of SWEEP (a grid of settings times seeds) into --out, one Parquet file per
    run; runs already there are kept, so an interrupted sweep resumes where it stopped. Prints
    each station's goodput and airtime share as means with confidence intervals over seeds."""
    from . import stats
    from .sweeps import collect, execute, load_sweep

    _check_option("--executor", executor, ("local", "dask"))
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            _bad_input("--executor dask: needs Dask distributed (pip install 'airsched[cluster]')")
    if jobs is not None and jobs < 1:
        _bad_input(f"--jobs: must be at least 1, got {jobs}")
    from .sweeps import parse_seeds

    try:
        seed_list = None if seeds is None else parse_seeds(seeds)
    except ValueError as exc:
        _bad_input(f"--seeds: {exc}")
    with _reported_errors(EXIT_BAD_INPUT):
        sw = load_sweep(spec, overrides or [], seed_list)
        runs = sw.runs()
    print(f"{sw.name}: {plural(len(runs), 'run')} ({len(sw.seeds)} seeds) into {out}", file=sys.stderr)
    with _sweep_progress() as progress:
        try:
            outcome = execute(sw, out, jobs=jobs, executor=executor, address=scheduler, force=force, progress=progress)
        except OSError as exc:
            _cannot_write(out, exc)
    print(
        f"{outcome.done} run(s) done now, {outcome.skipped} already done, {len(outcome.failed)} failed, "
        f"of {outcome.total} · wall {_fmt_seconds(outcome.wall_s)}",
        file=sys.stderr,
    )
    for failure in outcome.failed:
        print(f"error: run {failure['run_id'][:12]} {failure['params']}: {failure['error']}", file=sys.stderr)
        print(f"  reproduce: {failure['command']}", file=sys.stderr)
    df = collect(out, "stations")
    if len(df):
        by = [c for c in sw.columns if c != "seed"] + ["name"]
        summary = stats.summarize(df, by, ["goodput_mbps", "airtime_share"])
        Console().print(stats.stats_table(summary, by, f"{sw.name}: stations"))
        try:
            summary.to_csv(out / "stations-stats.csv", index=False)
            if plot:
                summary = summary.copy()
                summary["configuration"] = [
                    ", ".join(str(r[c]) for c in by[:-1]) or sw.name for _, r in summary.iterrows()
                ]
                path = stats.plot_errorbars(
                    summary, "goodput_mbps", "configuration", "name", out / "goodput.png", ylabel="goodput, Mbit/s"
                )
                print(f"wrote {path}")
        except OSError as exc:
            _cannot_write(out, exc)
    if outcome.failed:
        print(f"error: {plural(len(outcome.failed), 'run')} failed; listed in {out / 'failures.json'}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)


@contextmanager
def _sweep_progress() -> Iterator[Callable[[int, int, int, int], None] | None]:
    """A progress hook drawing runs done, failed and time left on stderr (a terminal only)."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bar = Progress(
        TextColumn("sweep"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} runs"),
        TextColumn("{task.fields[failed]} failed"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("sweep", total=None, failed=0)
    bar.start()

    def hook(finished: int, failed: int, skipped: int, total: int) -> None:
        # Runs found done already are not counted in the time left: the bar covers this session.
        bar.update(task, total=total - skipped, completed=finished, failed=failed)

    try:
        yield hook
    finally:
        bar.stop()


@app.command("report")
def report_command(
    source: Annotated[
        Path,
        typer.Argument(metavar="DIR", help="A directory `airsched run --out` or `airsched sweep` wrote.", show_default=False),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path("report.html"),
    title: Annotated[str | None, typer.Option(help="Title of the page (default: from DIR).")] = None,
    scenario: Annotated[
        Path | None, typer.Option(help="The scenario file a run directory came from, to show in the report.")
    ] = None,
) -> None:
    """Write one self-contained HTML page of a run or a sweep: scenario summary and provenance,
    tables, statistics over seeds, and the figures (embedded PNG)."""
    from .report import is_run_dir, is_sweep_dir, write_report

    if not (is_run_dir(source) or is_sweep_dir(source)):
        _bad_input(
            f"{source}: not a results directory (write one with `airsched run SCENARIO --out {source}` "
            f"or `airsched sweep SWEEP --out {source}`)"
        )
    try:
        written = write_report(source, output, title, scenario)
    except OSError as exc:
        _cannot_write(output, exc)
    print(f"wrote {written}")


@app.command("compare")
def compare_command(
    inputs: Annotated[
        list[str],
        typer.Argument(
            metavar="INPUT...",
            help="Scenario files (run here), `airsched run --out` directories, or one `airsched sweep` directory.",
            show_default=False,
        ),
    ],
    overrides: SetOption = None,
    seed: Annotated[int | None, typer.Option(help="Override run.seed of every scenario file.")] = None,
    duration: Annotated[str | None, typer.Option(help='Override run.duration of every scenario file, e.g. "30s".')] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also plot the goodputs side by side into this PNG.")] = None,
    csv: Annotated[Path | None, typer.Option(help="Write the tidy comparison (stations and flows) as CSV here.")] = None,
) -> None:
    """Compare runs side by side: per station and per flow, each input's figures and their
    differences from the first."""
    from . import compare as cmp

    with _reported_errors(EXIT_BAD_INPUT):
        loaded = cmp.load_inputs(inputs, overrides or [], seed, duration)
    if len(loaded) < 2:
        _bad_input(f"compare: needs at least two inputs (a sweep directory gives one per configuration), got {len(loaded)}")
    console = Console()
    stations = cmp.compare(loaded, "stations")
    console.print(cmp.format_table(stations, f"stations (Δ from {loaded[0].label})"))
    flows = cmp.compare(loaded, "flows") if all(i.flows is not None for i in loaded) else None
    if flows is not None:
        console.print(cmp.format_table(flows, f"flows (Δ from {loaded[0].label})"))
    try:
        if csv is not None:
            import pandas as pd

            parts = [stations.assign(table="stations")] + ([flows.assign(table="flows")] if flows is not None else [])
            csv.parent.mkdir(parents=True, exist_ok=True)
            pd.concat(parts).to_csv(csv, index=False)
            print(f"wrote {csv}")
        if output is not None:
            print(f"wrote {cmp.plot(stations, flows, output)}")
    except OSError as exc:
        _cannot_write(output or csv or Path("."), exc)


@repro_app.command("all")
def repro_all_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the tables, figures and report.html.")],
    duration: Annotated[
        str | None, typer.Option(help='Bound every run, e.g. "10s" (default: each paper\'s own durations).')
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    scenarios: ScenariosOption = None,
) -> None:
    """Every reproduction (Garroppo et al. Tables 1 and 2, Figs. 6 to 9; Høiland-Jørgensen's
    testbed with UDP and TCP) into --out, with one HTML report of them all."""
    from .repro.all import run_all

    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        try:
            path = run_all(out, duration=duration, seed=seed, progress=progress, scenarios_dir=scenarios)
        except OSError as exc:
            _cannot_write(out, exc)
    print(f"wrote {path} (tables and figures in {out})")


def _check_option(option: str, value: str, allowed: Any) -> None:
    """Exit 2 naming the option and its allowed values unless ``value`` is one of them."""
    choices = list(allowed)
    if value not in choices:
        _bad_input(f"{option}: must be one of {', '.join(choices)}, got {value!r}")


def _bad_input(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT)


def _cannot_write(path: Path, exc: OSError) -> NoReturn:
    print(f"error: {exc.filename or path}: cannot write: {exc.strerror or exc}", file=sys.stderr)
    raise typer.Exit(EXIT_INVALID) from None


_BARE_SECONDS = re.compile(r"^\s*\d+(\.\d*)?\s*$")


def _duration(value: str | None) -> str | None:
    """A --duration as the scenario takes it: a bare number is seconds ("5" is "5s"); anything
    else passes unchanged, for the core to accept or to reject naming run.duration."""
    if value is not None and _BARE_SECONDS.match(value):
        return f"{value.strip()}s"
    return value


def _warn(message: str) -> None:
    """Print a warning as one ``warning: FILE:LINE:COL: KEY: message`` line on stderr. The
    core's warnings carry their own ``warning:`` after the location; it is said once."""
    text = one_line(message).strip()
    if text.startswith("warning:"):
        text = text.removeprefix("warning:").lstrip()
    else:
        text = text.replace(": warning: ", ": ", 1)
    print(f"warning: {text}", file=sys.stderr)


#: Width of the console that measures a table's natural width (wider than any table).
_MEASURE_WIDTH = 100_000


def _wide_enough(console: Console, renderables: list[RenderableType]) -> Console:
    """``console``, widened so that no table cell is cut with an ellipsis. Written to a file or
    a pipe, tables get their natural width (nothing wraps); on a terminal, cells fold (wrap
    onto more lines) rather than being cut, and a table whose narrowest form is wider than the
    terminal is printed at that width (the terminal wraps its lines)."""
    from rich.table import Table

    for renderable in renderables:
        if isinstance(renderable, Table):
            for column in renderable.columns:
                column.overflow = "fold"
    probe = Console(width=_MEASURE_WIDTH, color_system=None, force_terminal=False, file=io.StringIO())
    sizes = [Measurement.get(probe, probe.options, r) for r in renderables]
    needed = max((m.minimum if console.is_terminal else m.maximum for m in sizes), default=0)
    if needed > console.width:
        console.width = needed
    return console


def _print_tables(tables: list[RenderableType], gap: bool = False) -> None:
    """Print rich tables on stdout without cutting any cell (see :func:`_wide_enough`); with
    ``gap``, an empty line after each."""
    console = _wide_enough(Console(), tables)
    for table in tables:
        console.print(table)
        if gap:
            console.print()


def _run_of(results: Path) -> tuple[str | None, int | None]:
    """The scenario and seed of the run whose tables are in ``results`` (from its summary.json;
    None for what it does not say)."""
    try:
        summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(summary, dict):
        return None, None
    provenance = summary.get("provenance") if isinstance(summary.get("provenance"), dict) else {}
    seed = summary.get("seed", provenance.get("seed"))
    scenario = provenance.get("scenario_path")
    return (str(scenario) if scenario is not None else None), (seed if isinstance(seed, int) else None)


@app.command("validate")
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
    if info.standard == "802.11n":
        # The 802.11b summary stays one line; an 802.11n cell has more settings worth seeing.
        print(f"  cell: {info.describe_cell()}")
        ap = info.describe_ap()
        if ap:
            print(f"  ap: {ap}")
        for link in info.links:
            print(f"  {link.name}: {link.describe()}")


def main() -> None:
    """Entry point of the ``airsched`` script and of ``python -m airsched``."""
    # Ctrl-C: exit status 130. The core simulates without the GIL in slices of bounded work and
    # looks at Python's signals between them, so it takes effect within a fraction of a second;
    # `run --out` then writes what was measured, marked partial.
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


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A progress callback drawing on stderr, or None where no bar should be drawn."""
    console = Console(stderr=True)
    if not (enabled and console.is_terminal):
        yield None
        return
    progress = _LazyProgress(console)
    try:
        yield progress
    finally:
        progress.close()


class _LazyProgress:
    """A progress callback that shows a transient rich bar once the run has taken
    ``PROGRESS_DELAY_S``; short runs print nothing at all."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._started = time.monotonic()
        self._bar: Progress | None = None
        self._task: Any = None

    def __call__(self, fraction: float) -> None:
        if self._bar is None:
            if time.monotonic() - self._started < PROGRESS_DELAY_S or fraction >= 1.0:
                return
            self._bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TaskProgressColumn(),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("simulating", total=1.0)
        self._bar.update(self._task, completed=fraction)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


#: Tables only some cells fill (Bluetooth; PCF: the stations' polls under a summary of the
#: CFPs), printed after the flows when they have rows.
OPTIONAL_TABLES = ("bluetooth", "coexistence", "polls", "cfp")


def _print_report(console: Console, report: dict[str, Any]) -> None:
    """The tables and summary lines of a run, from its JSON form (plain values, NaN as None),
    with the ``bluetooth`` and ``coexistence`` rows when ``report`` has them and they are not
    empty."""
    tables = [_stations_table(report["stations"]), _flows_table(report["flows"])]
    if report.get("bluetooth"):
        tables.append(_bluetooth_table(report["bluetooth"]))
    if report.get("coexistence"):
        tables.append(_coexistence_table(report["coexistence"]))
    if report.get("polls"):
        tables.append(_polls_table(report["polls"], report.get("cfp") or [], report["measured_seconds"]))
    console = _wide_enough(console, tables)
    for table in tables:
        console.print(table)
    wall, events = report["wall_seconds"], report["events"]
    seed = report.get("seed", (report.get("provenance") or {}).get("seed"))
    seed_text = "" if seed is None else f" · seed {seed}"
    rate = f" ({_fmt(events / wall / 1e6, 2)} M events/s)" if wall else ""
    c = report["conservation"]
    lines = (
        f"total goodput {_fmt(report['total_goodput_mbps'], 3)} Mb/s · "
        f"simulated {report['sim_seconds']:g} s (measured {report['measured_seconds']:g} s){seed_text} · "
        f"wall {_fmt_seconds(wall)} · {events:,} events{rate}",
        f"packets: {c['offered']:,} offered, {c['delivered']:,} delivered, "
        f"{c['dropped_queue']:,} dropped in queues, {c['dropped_retry']:,} dropped after retries, "
        f"{c['in_flight']:,} in flight at the end",
    )
    for line in lines:
        # soft_wrap: a summary line stays one line (a terminal wraps it; a pipe gets it whole).
        console.print(line, highlight=False, soft_wrap=True)


def _stations_table(stations: list[dict[str, Any]]) -> Table:
    table = Table(title="stations", title_justify="left")
    headers = ["station", "rate Mb/s", "goodput Mb/s", "std Mb/s", "airtime %", "frames", "retries", "drops"]
    # 802.11n: mean MPDUs per A-MPDU to the station.
    ampdu = any(st.get("ampdu_mean_down") is not None for st in stations)
    if ampdu:
        headers.append("A-MPDU")
    for header in headers:
        table.add_column(header, justify="left" if header == "station" else "right")
    for st in stations:
        share = st["airtime_share"]
        cells = [
            Text(st["name"]),
            _fmt(st["rate_mbps"], 1),
            _fmt(st["goodput_mbps"], 3),
            _fmt(st["goodput_std_mbps"], 3),
            _fmt(None if share is None else 100 * share, 1),
            f"{st['tx_frames']:,}",
            f"{st['retries']:,}",
            f"{st['drops']:,}",
        ]
        if ampdu:
            cells.append(_fmt(st.get("ampdu_mean_down"), 1))
        table.add_row(*cells)
    return table


def _flows_table(flows: list[dict[str, Any]]) -> Table:
    table = Table(title="flows", title_justify="left")
    pings = any(fl.get("rtt_samples") for fl in flows)
    headers = ["flow", "path", "goodput Mb/s", "sent", "received", "lost", "delay ms"]
    if pings:
        headers += ["rtt p50 ms", "rtt p99 ms"]
    for header in headers:
        table.add_column(header, justify="left" if header in ("flow", "path") else "right")
    for fl in flows:
        cells = [
            Text(fl["name"]),
            Text(f"{fl['src']}→{fl['dst']}"),
            _fmt(fl["goodput_mbps"], 3),
            f"{fl['sent_packets']:,}",
            f"{fl['received_packets']:,}",
            f"{fl['lost_packets']:,}",
            _fmt(fl["delay_mean_ms"], 2),
        ]
        if pings:
            cells += [_fmt(fl.get("rtt_p50_ms"), 2), _fmt(fl.get("rtt_p99_ms"), 2)]
        table.add_row(*cells)
    return table


def _bluetooth_table(rows: list[dict[str, Any]]) -> Table:
    """Per slave and direction ("down": the AP's bnepN to the slave): docs/model-bluetooth.md."""
    table = Table(title="bluetooth", title_justify="left")
    headers = ["slave", "dir", "types", "L2CAP Mb/s", "data pkts", "retrans", "POLL/NULL", "slots %", "hit by WLAN", "lost", "dups", "delivered"]
    for header in headers:
        table.add_column(header, justify="left" if header in ("slave", "dir", "types") else "right")
    for b in rows:
        share = b["slot_share"]
        table.add_row(
            Text(b["name"]),
            b["direction"],
            Text(b["packet_types"]),
            _fmt(b["l2cap_mbps"], 3),
            f"{b['data_packets']:,}",
            f"{b['retransmissions']:,}",
            f"{b['empty_packets']:,}",
            _fmt(None if share is None else 100 * share, 1),
            f"{b['hit_by_wlan']:,}",
            f"{b['lost_errors']:,}",
            f"{b['duplicates']:,}",
            f"{b['delivered']:,}",
        )
    return table


def _polls_table(rows: list[dict[str, Any]], cfps: list[dict[str, Any]], measured_s: float) -> Table:
    """PCF: each station's polls, under a title summing up the CFPs (docs/model-pcf.md)."""
    total_ms = sum(c["duration_ms"] for c in cfps)
    mean = _fmt(total_ms / len(cfps) if cfps else None, 2)
    share = _fmt(100 * total_ms / 1e3 / measured_s if measured_s else None, 1)
    late = sum(1 for c in cfps if c["start_s"] > c["tbtt_s"])
    idle = sum(1 for c in cfps if c["ended"] == "idle")
    caption = f"{len(cfps):,} CFPs, mean {mean} ms, {share} % of the time, {late:,} foreshortened, {idle:,} ended idle"
    table = Table(title="pcf", title_justify="left", caption=caption, caption_justify="left")
    for header in ["station", "pollable", "polls", "data down", "data up", "Null", "unanswered"]:
        table.add_column(header, justify="left" if header == "station" else "right")
    for p in rows:
        table.add_row(
            Text(p["station"]),
            "yes" if p["cf_pollable"] else "no",
            f"{p['polls']:,}",
            f"{p['data_down']:,}",
            f"{p['data_up']:,}",
            f"{p['nulls']:,}",
            f"{p['unanswered']:,}",
        )
    return table


def _coexistence_table(rows: list[dict[str, Any]]) -> Table:
    """Per WLAN station and direction: frames checked against the piconet and those it hit."""
    table = Table(title="coexistence", title_justify="left")
    for header in ["station", "dir", "data frames", "hit by BT", "hit %", "ACKs", "ACKs hit", "ACK hit %"]:
        table.add_column(header, justify="left" if header in ("station", "dir") else "right")

    def share(hit: int, of: int) -> str:
        return _fmt(100 * hit / of if of else None, 1)

    for c in rows:
        table.add_row(
            Text(c["station"]),
            c["direction"],
            f"{c['data_frames']:,}",
            f"{c['data_hit_by_bt']:,}",
            share(c["data_hit_by_bt"], c["data_frames"]),
            f"{c['acks']:,}",
            f"{c['acks_hit_by_bt']:,}",
            share(c["acks_hit_by_bt"], c["acks"]),
        )
    return table


def _fmt_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:.1f} ms"


def _fmt(value: float | None, decimals: int) -> str:
    """A float with fixed decimals; "–" where it is undefined (None, from NaN)."""
    return "–" if value is None else f"{value:,.{decimals}f}"
