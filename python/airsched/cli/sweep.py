# SPDX-License-Identifier: Apache-2.0
"""``airsched sweep``: a grid of settings times seeds, run in parallel and summed up over seeds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..result import plural
from ._app import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    _cannot_write,
    _reported_errors,
    _runs_options,
)
from ._options import SetOption
from ._progress import _sweep_progress
from ._tables import _fmt_seconds, _print_tables


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
    from .. import stats
    from ..sweeps import collect, execute, load_sweep

    seed_list = _runs_options(executor, jobs, seeds)
    with _reported_errors(EXIT_BAD_INPUT):
        sw = load_sweep(spec, overrides or [], seed_list)
        runs = sw.runs()
    print(f"{sw.name}: {plural(len(runs), 'run')} ({len(sw.seeds)} seeds) into {out}", file=sys.stderr)
    try:
        with _sweep_progress() as progress:
            try:
                outcome = execute(sw, out, jobs=jobs, executor=executor, address=scheduler, force=force, progress=progress)
            except OSError as exc:
                _cannot_write(out, exc)
    except KeyboardInterrupt:
        from ..sweeps import RUNS_DIR, run_path

        done = sum(run_path(out, r.run_id).exists() for r in runs)
        print(f"interrupted: {done} of {len(runs)} runs are in {out / RUNS_DIR}; the same command resumes the sweep "
              "where it stopped", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
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
        _print_tables([stats.stats_table(summary, by, f"{sw.name}: stations")])
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
