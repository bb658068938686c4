# SPDX-License-Identifier: Apache-2.0
"""What a results directory shows: ``airsched plot`` (figures) and ``airsched report`` (one HTML
page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import _bad_input, _cannot_write, _check_option


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
    from ..plots import KINDS, WHAT, figure_format, plot_interfaces, plot_samples

    _check_option("--kind", kind, (*KINDS, "interface"))
    interface = kind == "interface"
    if not interface:
        _check_option("--what", what, WHAT)
    if output is not None:
        try:
            figure_format(output)
        except ValueError as exc:
            _bad_input(f"--output: {exc}")
    path = results / ("interfaces.parquet" if interface else "samples.parquet")
    if not results.is_dir():
        _bad_input(f"{results}: no such directory (write one with `airsched run SCENARIO --out {results}`)")
    if not path.is_file():
        _bad_input(f"{path}: no such file (write it with `airsched run SCENARIO --out {results}`)")
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a damaged file
        _bad_input(f"{path}: cannot read the {'interface samples' if interface else 'samples'}: {exc}")
    target = output if output is not None else results / f"{'interfaces' if interface else what}.png"
    scenario, seed = _run_of(results)
    try:
        if interface:
            written = plot_interfaces(frame, target, node=node, scenario=scenario, seed=seed)
        else:
            written = plot_samples(frame, target, what, kind=kind, scenario=scenario, seed=seed)
    except ValueError as exc:
        _bad_input(f"{path}: {exc}")
    except OSError as exc:
        _cannot_write(target, exc)
    print(f"wrote {written}")


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
    from ..report import is_run_dir, is_sweep_dir, write_report

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
