# SPDX-License-Identifier: Apache-2.0
"""``airsched repro ...``: the published experiments reproduced (docs/repro-*.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..result import plural
from ._app import EXIT_BAD_INPUT, _bad_input, _cannot_write, _check_option, _reported_errors, _warn, _write_results
from ._options import DURATION_FORMS, ScenariosOption, _duration
from ._progress import _progress_bar
from ._tables import _print_report, _print_tables

repro_app = typer.Typer(help="Reproduce published experiments (see docs/repro-*.md).", no_args_is_help=True)


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
        typer.Option(
            help="Write garroppo-<share>.csv and garroppo-<share>-claims.csv here (and with --plot, the figures)."
        ),
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
    from ..repro import garroppo

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
    from ..repro import garroppo
    from ..repro._scenarios import display_path

    _check_option("--scheduler", scheduler, garroppo.WALK_SCHEDULERS)
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        result = garroppo.run_walk(
            scheduler, seed=seed, duration=_duration(duration), progress=progress, scenarios_dir=scenarios
        )
        walk_file = garroppo.walk_file(scheduler, scenarios)
    for warning in result.warnings:
        _warn(warning)
    from rich.console import Console

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
    from ..repro import hoiland

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
    from ..repro import valenzuela

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
        typer.Option(
            help=f"Simulated time per run, the 5 s warm-up included: {DURATION_FORMS} (default: the paper's 800 s)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run.")] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write yip-kwok.csv, yip-kwok-series.csv and each run's tables (runs/<configuration>/) here."
        ),
    ] = None,
    plot: Annotated[
        bool,
        typer.Option(
            "--plot", help="Also write yip-kwok.png (Figs. 4-10: WLAN, Bluetooth, aggregate over time) into --out."
        ),
    ] = False,
    scenarios: ScenariosOption = None,
) -> None:
    """Yip & Kwok: the dual-radio NAP (802.11b AP + Bluetooth PAN master, one IMQ device over
    both) under FIFO, HTB+SFQ, PRIO+TBF and SFQ, each client downloading a file over FTP; prints
    the aggregate's peak and range of major fluctuation, the WLAN and Bluetooth shares, the
    ranking beside the paper's and its observations (see docs/repro-yip-kwok.md)."""
    from ..repro import yipkwok

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


@repro_app.command("next-steps")
def repro_next_steps_command(
    duration: Annotated[
        str | None,
        typer.Option(
            help=f"Simulated time per run, the warm-up included: {DURATION_FORMS} (default: each file's own)."
        ),
    ] = None,
    seeds: Annotated[str, typer.Option(help='Seeds of every variant, e.g. "1-10" or "1,2,5".')] = "1-10",
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Write next-steps-<proposal>.csv, the figure, the scenarios and the runs here."
        ),
    ] = Path("next-steps"),
    jobs: Annotated[int | None, typer.Option(help="Parallel runs (default: every core).")] = None,
    scenarios: ScenariosOption = None,
    ci_form: Annotated[
        bool, typer.Option("--ci-form", hidden=True, help="CI's bounded form: the newest variants on the testbed only.")
    ] = False,
) -> None:
    """Høiland-Jørgensen's next steps (§4): airtime policies (groups 1:2:1, a 20 % guest cap, a
    minimum rate), latency (dynamic aggregate sizing, retry budgets, the minimal hardware queue,
    a firmware queue under Byte Queue Limits) and QoS (VO in lower aggregates, admission control,
    station-first order) against their baselines, on the Høiland testbed and a denser 12-station
    cell, over seeds; prints one table per proposal with 95 % intervals and writes one CSV per
    proposal and the latency/throughput figure (see docs/next-steps.md)."""
    from ..repro import next_steps
    from ..sweeps import parse_seeds

    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        _bad_input(f"--seeds: {exc}")
    with _reported_errors(EXIT_BAD_INPUT):
        try:
            rep = next_steps.run(
                out,
                duration=_duration(duration),
                seeds=seed_list,
                jobs=jobs,
                scenarios_dir=scenarios,
                small_only=next_steps.SMALL_CELL_ONLY_IN_CI if ci_form else (),
            )
            paths = [*next_steps.write(rep), next_steps.plot(rep)]
        except OSError as exc:
            _cannot_write(out, exc)
    for warning in rep.warnings:
        _warn(warning)
    _print_tables(next_steps.tables(rep), gap=True)
    for path in paths:
        print(f"wrote {path}")


@repro_app.command("all")
def repro_all_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory of the tables, figures and report.html.")],
    duration: Annotated[
        str | None, typer.Option(help=f"Bound every run (default: each paper's own durations): {DURATION_FORMS}.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every run (without --seeds).")] = 1,
    seeds: Annotated[
        str | None, typer.Option(help="Seeds of the scoreboard, e.g. 1-10: every reproduction runs once per seed.", show_default=False)
    ] = None,
    scenarios: ScenariosOption = None,
) -> None:
    """Every reproduction (Garroppo et al. Tables 1 and 2, Figs. 6 to 9; Høiland-Jørgensen's
    testbed with UDP and TCP; Valenzuela et al.; Yip & Kwok) into --out, with one HTML report of
    them all, and the scoreboard per paper (cells within 10 % and 25 %, claims that hold in at
    least 8 of 10 seeds) over --seeds."""
    from ..repro import scoreboard
    from ..repro.all import run_all
    from ..sweeps import parse_seeds

    try:
        seed_list = None if seeds is None else parse_seeds(seeds)
    except ValueError as exc:
        _bad_input(f"--seeds: {exc}")
    with _reported_errors(EXIT_BAD_INPUT), _progress_bar(enabled=True) as progress:
        try:
            path = run_all(out, duration=_duration(duration), seed=seed, progress=progress, scenarios_dir=scenarios, seeds=seed_list)
        except OSError as exc:
            _cannot_write(out, exc)
    board = path.parent / "scoreboard.csv"
    if board.exists():
        import pandas as pd

        print("\n".join(scoreboard.lines(pd.read_csv(board))))
    print(f"wrote {path} (tables and figures in {out})")
