# SPDX-License-Identifier: Apache-2.0
"""``airsched advise``: the configuration to run on an AP for the user's objectives (docs/advise.md)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from ._app import EXIT_BAD_INPUT, _cannot_write, _reported_errors, _runs_options
from ._options import ScenarioArg, _duration


@contextmanager
def _advise_progress(label: str) -> Iterator[Callable[[int, int | None, str], None] | None]:
    """A bar of runs used against the budget, with the best so far (a terminal only)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bar = Progress(TextColumn(label), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                   TextColumn("{task.fields[best]}"), TimeElapsedColumn(), console=console, transient=True)
    task = bar.add_task(label, total=None, best="")
    bar.start()

    def hook(used: int, budget: int | None, best: str) -> None:
        bar.update(task, completed=used, total=budget, best=best)

    try:
        yield hook
    finally:
        bar.stop()


def advise_command(
    scenario: ScenarioArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the answer and its runs (reused: finished runs are kept).")],
    objectives: Annotated[Path | None, typer.Option("--objectives", "-f", help="Objectives file (TOML; docs/advise.md).")] = None,
    maximise: Annotated[list[str] | None, typer.Option("--maximise", metavar="METRIC", help="Maximise this metric (repeatable; the first leads).")] = None,
    minimise: Annotated[list[str] | None, typer.Option("--minimise", metavar="METRIC", help="Minimise this metric (repeatable).")] = None,
    constraint: Annotated[list[str] | None, typer.Option("--constraint", "-c", metavar="'METRIC OP N'", help="A constraint, e.g. 'ping_p99_ms < 20' (repeatable).")] = None,
    mix: Annotated[str | None, typer.Option(help="Traffic to test, comma-separated: bulk, bulk-up, udp, ping, voip, web (KIND:STA+STA for some stations), or scenario.")] = None,
    seeds: Annotated[str | None, typer.Option(help="Seeds per configuration: 1-3, 1,2,5.", show_default=False)] = None,
    duration: Annotated[str | None, typer.Option(help="Simulated time of each run (e.g. 10s).", show_default=False)] = None,
    budget: Annotated[str | None, typer.Option(help="Runs (200) or time (5m); default a quarter of the grid's runs.", show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(help="The optimiser's seed (same seed, objective and budget: same answer).", show_default=False)] = None,
    exhaustive: Annotated[bool, typer.Option("--grid", help="Run every configuration on every seed instead of searching.")] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes per batch of runs (1: in this process).")] = 1,
    executor: Annotated[str, typer.Option(help="Where runs go: local or dask.")] = "local",
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address; without it, a local Dask cluster.")] = None,
) -> None:
    """Recommend the AP configuration that best meets the objectives on SCENARIO's cell (a
    scenario, or `airsched import --cell` of a live AP): search the catalogue with Optuna, each
    configuration over several seeds, and write the Pareto front, the recommendation and why,
    per-station changes, the winner's apply/revert script and an HTML report into --out."""
    from ..advise import grid, load_problem, prepare, search
    from ..advise.answer import write_answer

    seed_list = _runs_options(executor, jobs, seeds)
    with _reported_errors(EXIT_BAD_INPUT):
        problem = load_problem(objectives, maximise=maximise or (), minimise=minimise or (), constraints=constraint or (),
                               mix=[m for m in (mix or "").split(",") if m.strip()], seeds=seed_list,
                               duration=_duration(duration), budget=budget, seed=seed)
        try:
            setup = prepare(scenario, problem, out)
        except OSError as exc:
            _cannot_write(out, exc)
    cat = setup.catalogue
    print(f"advise: {problem.describe()}; {len(cat.candidates)} configurations "
          f"({len(cat.invalid)} points of the catalogue left out as invalid) x {len(problem.seeds)} seeds", file=sys.stderr)
    with _advise_progress("grid" if exhaustive else "search") as progress, _reported_errors(EXIT_BAD_INPUT):
        try:
            advice = (grid if exhaustive else search)(setup, jobs=jobs, executor=executor, address=scheduler, progress=progress)
            answer = write_answer(advice)
        except OSError as exc:
            _cannot_write(out, exc)
    print("\n".join(answer.lines))
    print(f"wrote {', '.join(str(p) for p in answer.files.values())}", file=sys.stderr)
