# SPDX-License-Identifier: Apache-2.0
"""Every reproduction in one command (``airsched repro all``), into one directory and one HTML
report: Garroppo et al.'s Tables 1 and 2 with Figures 6 to 9, and Høiland-Jørgensen's testbed
with UDP and TCP. Each part runs exactly as its own command does (``repro garroppo``,
``repro garroppo-walk``, ``repro hoiland``), so its numbers are theirs.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from . import _scenarios, garroppo, hoiland, scoreboard, valenzuela, yipkwok

#: The parts, in the report's order, and their weight in the progress bar (runs).
PARTS = (
    ("garroppo-1-4", 25),
    ("garroppo-1-1", 25),
    *((f"garroppo-walk-{s}", 1) for s in garroppo.WALK_SCHEDULERS),
    ("hoiland", 8),
    ("valenzuela", 10),
    ("yip-kwok", 4),
)
#: Runs of one Garroppo table: every scheduler at every position.
_TABLE_RUNS = len(garroppo.SCHEDULERS) * len(garroppo.POSITIONS)


def run_all(
    out_dir: str | os.PathLike[str],
    duration: str | None = None,
    seed: int | None = 1,
    progress: Callable[[float], None] | None = None,
    scenarios_dir: str | os.PathLike[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> Path:
    """Run every reproduction into ``out_dir`` (tables as CSV, figures as PNG, each Høiland run's
    tables) and write ``out_dir/report.html``; returns the report's path. ``duration`` bounds
    every run (e.g. ``"10s"``; the Høiland runs need more than their 2 s warm-up).

    ``seeds`` (default: ``[seed]``) are the seeds of the scoreboard
    (:mod:`airsched.repro.scoreboard`): every reproduction runs once per seed, the tables and
    figures show the first, and ``scoreboard.csv``, ``scoreboard-cells.csv`` and
    ``scoreboard-claims.csv`` hold the per-paper score, every cell of every seed and every claim's
    seeds."""
    from ..report import _CSS, _SCRIPT, _table

    seeds = [seed if seed is not None else 1] if not seeds else list(dict.fromkeys(seeds))
    seed = seeds[0]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    total = sum(w for _, w in PARTS) * len(seeds)
    done = 0
    garroppo_tables: list[pd.DataFrame] = []

    def sub(weight: int) -> Callable[[float], None] | None:
        if progress is None:
            return None
        start = done

        def report(fraction: float) -> None:
            progress((start + weight * fraction) / total)

        return report

    sections: list[str] = []
    warnings: list[str] = []
    #: The scoreboard: (anchor, reproduction, claims that hold, claims checked).
    score: list[tuple[str, str, int, int]] = []
    for share in garroppo.SHARES:
        stem = f"garroppo-{garroppo.SHARES[share]}"
        df = garroppo.run_table(share, duration=duration, seed=seed, progress=sub(_TABLE_RUNS), scenarios_dir=scenarios_dir)
        done += _TABLE_RUNS
        warnings += [w for w in df.attrs.get("warnings", []) if w not in warnings]
        df.to_csv(out / f"{stem}.csv", index=False)
        garroppo_tables.append(df)
        claims = garroppo.check_claims(df)
        garroppo.write_claims_csv(claims, out / f"{stem}-claims.csv")
        figs = [garroppo.plot_occupancy(df, out / f"{stem}-occupancy.png"), garroppo.plot_goodput(df, out / f"{stem}-goodput.png")]
        table = "Table 1" if share == "1:4" else "Table 2"
        score.append((stem, f"Garroppo et al., {table} (share {share}): section 6's claims", int(claims["holds"].sum()), len(claims)))
        sections.append(
            _section(stem, f"Garroppo et al., {table} (share {share}): goodput, simulated and paper",
                     _table(df, "repro") + _table(claims.drop(columns="text"), "claims"), figs)
        )
    for scheduler in garroppo.WALK_SCHEDULERS:
        result = garroppo.run_walk(scheduler, seed=seed, duration=duration, progress=sub(1), scenarios_dir=scenarios_dir)
        done += 1
        fig = garroppo.plot_walk(result, out / f"garroppo-walk-{scheduler}.png", title=f"{garroppo.SCHEDULER_LABELS[scheduler]}: MS2 walks out of range and back")
        figure = {"drr": "Fig. 8", "whtb": "Fig. 9"}.get(scheduler, "Fig. 9 with the section 6.3 gate")
        sections.append(
            _section(f"garroppo-walk-{scheduler}", f"Garroppo et al., {figure}: {garroppo.SCHEDULER_LABELS[scheduler]} while MS2 walks",
                     _table(result.stations, "stations", ("name", "goodput_mbps", "airtime_share", "occupancy", "snr_mean_db")), [fig])
        )
    rep = hoiland.run_testbed("both", duration=duration, seed=seed, progress=sub(8), scenarios_dir=scenarios_dir)
    done += 8
    warnings += [w for w in rep.warnings if w not in warnings]
    h_claims = hoiland.check_claims(rep.summary)
    score.append(("hoiland", "Høiland-Jørgensen: the orderings and bounds of the blog and next steps",
                  sum(c.holds for c in h_claims), len(h_claims)))
    hoiland.write(rep, out / "hoiland")
    figs = hoiland.plot_all(rep, out / "hoiland")
    sections.append(
        _section("hoiland", "Høiland-Jørgensen's testbed: per-station airtime and throughput, ping latency",
                 _table(rep.totals(), "repro-totals") + _table(rep.summary, "repro")
                 + _table(pd.DataFrame([c._asdict() for c in h_claims]), "repro-claims"), figs)
    )
    val = valenzuela.run_tables(duration=duration, seed=seed, progress=sub(10), scenarios_dir=scenarios_dir)
    done += 10
    val.to_csv(out / "valenzuela.csv", index=False)
    sigma = valenzuela.sigma_claims(val)
    statements = valenzuela.statement_claims(val)
    score.append(("valenzuela", "Valenzuela et al., Tables I-IV: the standard deviations' ordering and section IV's statements",
                  int(sigma["holds"].sum()) + int(statements["holds"].sum()), len(sigma) + len(statements)))
    sections.append(
        _section("valenzuela", "Valenzuela et al., Tables I-IV: throughput and standard deviation, simulated and paper",
                 _table(val, "repro") + _table(sigma, "repro-claims") + _table(statements.assign(paper_holds=statements["paper_holds"].apply(
                     lambda h: "not published" if h is None else ("yes" if h else "no"))), "repro-claims"), [])
    )
    yk = yipkwok.run_testbed(duration=duration, seed=seed, progress=sub(4), scenarios_dir=scenarios_dir)
    done += 4
    warnings += [w for w in yk.warnings if w not in warnings]
    yipkwok.write(yk, out / "yip-kwok", runs=False)
    checks = pd.DataFrame([o._asdict() for o in yipkwok.observations(yk)])
    score.append(("yip-kwok", "Yip & Kwok: the statements of sections IV and V", int(checks["holds"].sum()), len(checks)))
    sections.append(
        _section("yip-kwok", "Yip & Kwok's dual-radio NAP: bytes out of wlan0, bnep0 and imq0 under four disciplines",
                 _table(yk.summary, "repro") + _table(checks, "repro-claims"), [yipkwok.plot(yk, out / "yip-kwok" / "yip-kwok.png")])
    )
    cells, claims = scoreboard.seed_tables(seed, garroppo_tables, rep.summary, val, yk.summary, yk.series)
    all_cells, all_claims = [cells], [claims]
    for other in seeds[1:]:
        c, k = scoreboard.run_seed(other, duration=duration, progress=sub(sum(w for _, w in PARTS)), scenarios_dir=scenarios_dir)
        done += sum(w for _, w in PARTS)
        all_cells.append(c)
        all_claims.append(k)
    cells, claims = pd.concat(all_cells, ignore_index=True), pd.concat(all_claims, ignore_index=True)
    board = scoreboard.score(cells, claims)
    board.to_csv(out / "scoreboard.csv", index=False, float_format="%.6g")
    cells.to_csv(out / "scoreboard-cells.csv", index=False, float_format="%.10g")
    scoreboard.claim_rates(claims).to_csv(out / "scoreboard-claims.csv", index=False)
    if progress is not None:
        progress(1.0)
    note = "".join(f"<li>{html.escape(w)}</li>" for w in warnings)
    bound = f"every run bounded to {html.escape(duration)}" if duration else "the papers' durations"
    page = (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>airsched: every reproduction</title>"
        f"<style>{_CSS}</style></head><body><h1>airsched: every reproduction</h1>"
        + _scoreboard(score, board, seeds)
        + f"<p>Tables and figures: seed {seed}; {bound}. Details: docs/repro-garroppo.md, docs/repro-hoiland.md, docs/repro-valenzuela.md, docs/repro-yip-kwok.md.</p>"
        + (f"<h2>warnings</h2><ul>{note}</ul>" if note else "")
        + "".join(sections) + _SCRIPT + "</body></html>\n"
    )
    # Scenario files by their path from scenarios/ on, not the site-packages path of an install.
    root = _scenarios.find_scenarios_dir(scenarios_dir, "garroppo", "share-1-4-drr.toml")
    page = page.replace(html.escape(str(root)) + "/", "scenarios/").replace(str(root) + "/", "scenarios/")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    return path


def _scoreboard(score: list[tuple[str, str, int, int]], board: pd.DataFrame, seeds: list[int]) -> str:
    """The first thing on the page: per paper, the cells within 10 % and 25 % and the claims
    that hold over ``seeds``; then per reproduction, how many of its claims hold at the first."""
    per_paper = "".join(
        f"<tr><td>{html.escape(scoreboard.PAPERS[r.paper])}</td><td>{r.seeds}</td>"
        f"<td>{r.within_10} of {r.cells}</td><td>{r.within_25} of {r.cells}</td>"
        f"<td>{r.median_error:.1%} ± {r.median_error_ci:.1%}</td>"
        f"<td>{r.claims_hold} of {r.claims}</td><td>{r.claims_mean_per_seed:.1f} ± {r.claims_ci:.1f}</td></tr>"
        for r in board.itertuples()
    )
    over = (f"<table class=\"scoreboard\" id=\"papers\"><tr><th>paper</th><th>seeds</th><th>cells within 10 %</th>"
            "<th>cells within 25 %</th><th>median |error| (95 % CI)</th>"
            f"<th>claims holding in ≥ {scoreboard.HOLD_FRACTION:.0%} of the seeds</th><th>claims held per seed (95 % CI)</th></tr>{per_paper}</table>"
            f"<p class=\"note\">Seeds {html.escape(', '.join(map(str, seeds)))}; cells compare the mean over the seeds with "
            "the paper's number; scoreboard.csv, scoreboard-cells.csv and scoreboard-claims.csv hold the details.</p>")
    rows = "".join(
        f'<tr><td><a href="#{a}">{html.escape(what)}</a></td><td>{held} of {total}</td>'
        f'<td>{"all hold" if held == total else f"{total - held} do not hold"}</td></tr>'
        for a, what, held, total in score
    )
    return ('<section id="scoreboard"><h2>scoreboard</h2>' + over + f'<h3>seed {seeds[0]}</h3><table class="scoreboard"><tr><th>reproduction</th>'
            f"<th>claims that hold</th><th>verdict</th></tr>{rows}</table>"
            '<p class="note">Garroppo et al.\'s walks (Figs. 8 and 9) are compared by their tables and figures '
            "below.</p></section>")


def _section(anchor: str, title: str, body: str, figures: list[Path]) -> str:
    imgs = "".join(
        f'<figure class="plot"><img alt="{html.escape(p.stem)}" src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode("ascii")}">'
        f"<figcaption>{html.escape(p.stem.replace('-', ' '))}.</figcaption></figure>"
        for p in figures
    )
    return f'<section id="{anchor}"><h2>{html.escape(title)}</h2>{body}{imgs}</section>'

