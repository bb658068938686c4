# SPDX-License-Identifier: Apache-2.0
"""``airsched compare``: runs side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import EXIT_BAD_INPUT, _bad_input, _cannot_write, _reported_errors
from ._options import DURATION_FORMS, SetOption, _duration
from ._tables import _print_tables


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
    duration: Annotated[str | None, typer.Option(help=f"Override run.duration of every scenario file: {DURATION_FORMS}.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also plot the goodputs side by side into this figure (.png, .pdf or .svg).")] = None,
    csv: Annotated[Path | None, typer.Option(help="Write the tidy comparison (stations and flows) as CSV here.")] = None,
) -> None:
    """Compare runs side by side: per station and per flow, each input's figures and their
    differences from the first."""
    from .. import compare as cmp
    from ..plots import figure_format

    if output is not None:
        try:
            figure_format(output)
        except ValueError as exc:
            _bad_input(f"--output: {exc}")
    with _reported_errors(EXIT_BAD_INPUT):
        loaded = cmp.load_inputs(inputs, overrides or [], seed, _duration(duration))
    if len(loaded) < 2:
        _bad_input(f"compare: needs at least two inputs (a sweep directory gives one per configuration), got {len(loaded)}")
    stations = cmp.compare(loaded, "stations")
    tables = [cmp.format_table(stations, f"stations (Δ from {loaded[0].label})")]
    flows = cmp.compare(loaded, "flows") if all(i.flows is not None for i in loaded) else None
    if flows is not None:
        tables.append(cmp.format_table(flows, f"flows (Δ from {loaded[0].label})"))
    # Never cut: piped, the tables take their natural width; on a narrow terminal cells fold.
    _print_tables(tables)
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
