# SPDX-License-Identifier: Apache-2.0
"""The answer of ``airsched advise``, written into its ``--out`` directory:

* ``answer.md``: the recommendation, why (which constraint or objective binds), its confidence
  intervals, what it does to each station compared with the AP's current configuration;
* ``candidates.csv`` (every configuration tried) and ``pareto.csv`` (the front), ``pareto.png``;
* ``stations.csv``: per station, the current configuration against the recommended one;
* ``apply.sh``: ``airsched export`` of the recommended configuration (apply / revert / check);
* ``report.html``: the report of the directory (``airsched report``) with this answer on top.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..scenario import load, toml_value
from ..stats import mean_ci
from .objectives import MAXIMISE, Problem
from .search import Advice, Evaluation, feasible, pareto

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Answer:
    lines: list[str]  # answer.md's text
    binding: str  # the constraint or objective that decides, in words
    files: dict[str, Path] = field(default_factory=dict)
    export_note: str = ""


def _ci(ev: Evaluation, metric: str) -> tuple[int, float, float]:
    n, mean, _std, half = mean_ci(ev.values.get(metric, []))
    return n, mean, half


def fmt(ev: Evaluation, metric: str) -> str:
    xs = ev.values.get(metric, [])
    lost = sum(1 for x in xs if math.isinf(x))
    if lost:
        return f"inf (no reply on {lost} of {len(xs)} seeds)"
    n, mean, half = _ci(ev, metric)
    if not math.isfinite(mean):
        return "n/a"
    return f"{mean:.4g} ± {half:.2g}" if math.isfinite(half) else f"{mean:.4g} (n={n})"


def settings_lines(ev: Evaluation) -> list[str]:
    return [f"{k}={toml_value(v, k)}" for k, v in ev.candidate.settings]


def why(problem: Problem, advice: Advice) -> tuple[str, list[str]]:
    """Which constraint (or objective) decides the recommendation, and the lines that say so."""
    win = advice.recommended
    assert win is not None
    lead = problem.objectives[0]
    lm = lead.metric.name
    lines: list[str] = []
    if not advice.feasible:
        worst = max(problem.constraints, key=lambda c: c.violation(win.mean(c.metric.name)))
        return worst.text, [f"No configuration tried meets every constraint; this one comes closest "
                            f"(`{worst.text}` is the furthest from being met: {fmt(win, worst.metric.name)})."]
    better = [e for e in advice.complete if lead.better(e.mean(lm), win.mean(lm)) and not feasible(problem, e)]
    binding = ""
    if better:
        best = max(better, key=lambda e: e.mean(lm) if lead.direction == MAXIMISE else -e.mean(lm))
        broken = [c for c in problem.constraints if not c.met(best.mean(c.metric.name))]
        binding = broken[0].text
        counts = {c.text: sum(1 for e in better if not c.met(e.mean(c.metric.name))) for c in problem.constraints}
        lines.append(f"The constraint that binds is `{binding}`: {len(better)} configuration(s) would do better on "
                     f"{lm}, the best of them `{best.candidate.name}` ({fmt(best, lm)}), but break "
                     + ", ".join(f"`{c.text}` ({fmt(best, c.metric.name)})" for c in broken) + ".")
        others = {k: v for k, v in counts.items() if v and k != binding}
        if others:
            lines.append("Other constraints that exclude better configurations: "
                         + ", ".join(f"`{k}` ({v})" for k, v in others.items()) + ".")
    else:
        binding = f"{lead.direction} {lm}"
        lines.append(f"No constraint binds: the recommendation is the best of every configuration tried on {lm} "
                     "(the objective decides)" + (", and meets " + ", ".join(f"`{c.text}`" for c in problem.constraints)
                                                  if problem.constraints else "") + ".")
    for c in problem.constraints:
        lines.append(f"- `{c.text}`: {fmt(win, c.metric.name)}")
    # Is the winner distinguishable from the runner-up?
    ok = sorted((e for e in advice.complete if feasible(problem, e) and e is not win),
                key=lambda e: -e.mean(lm) if lead.direction == MAXIMISE else e.mean(lm))
    if ok:
        ru = ok[0]
        _, m1, h1 = _ci(win, lm)
        _, m2, h2 = _ci(ru, lm)
        if all(math.isfinite(x) for x in (h1, h2)) and abs(m1 - m2) <= h1 + h2:
            lines.append(f"The runner-up `{ru.candidate.name}` ({fmt(ru, lm)}) is within the confidence intervals: "
                         f"the two are statistically tied on {lm}"
                         + (f"; the tie is broken by {', '.join(o.text for o in problem.objectives[1:])}"
                            if len(problem.objectives) > 1 else "") + "; between equal means the smaller change to the AP is named.")
        else:
            lines.append(f"The runner-up `{ru.candidate.name}` ({fmt(ru, lm)}) is outside the confidence intervals.")
    return binding, lines


def stations_comparison(advice: Advice) -> pd.DataFrame:
    """Per station: goodput, airtime share and the p99 RTT of pings to it, mean over seeds, for
    the AP's current configuration and the recommended one, and the change."""
    import pandas as pd

    from ..sweeps import read_run, run_path

    cur = advice.of(advice.setup.catalogue.current)
    win = advice.recommended
    rows = []

    def per_station(ev: Evaluation | None) -> pd.DataFrame | None:
        if ev is None:
            return None
        frames = []
        for rid in ev.run_ids:
            path = run_path(advice.setup.out, rid)
            if not path.exists():
                continue
            res = read_run(path)[0]
            st = res.stations[["name", "goodput_mbps", "airtime_share"]].copy()
            fl = res.flows
            p = fl[fl["protocol"] == "ping"].groupby("dst")["rtt_p99_ms"].max()
            st["ping_p99_ms"] = [float(p.get(n, math.nan)) for n in st["name"]]
            frames.append(st)
        return pd.concat(frames).groupby("name", sort=False).mean() if frames else None

    a, b = per_station(cur), per_station(win)
    if a is None or b is None:
        return pd.DataFrame()
    for name in a.index:
        row: dict[str, Any] = {"station": name}
        for q in ("goodput_mbps", "airtime_share", "ping_p99_ms"):
            x, y = float(a.loc[name, q]), float(b.loc[name, q]) if name in b.index else math.nan
            row[f"{q} current"] = x
            row[f"{q} recommended"] = y
            row[f"{q} change"] = y - x
        rows.append(row)
    return pd.DataFrame(rows)


def candidates_table(advice: Advice) -> pd.DataFrame:
    import pandas as pd

    p = advice.setup.problem
    front = {id(e) for e in pareto(p, advice.complete)}
    rows = []
    for ev in advice.evaluations:
        row: dict[str, Any] = {"configuration": ev.candidate.name,
                               "settings": "; ".join(settings_lines(ev)) or "(none: the AP as it is)",
                               "seeds": len(ev.seeds), "complete": ev.complete}
        for m in p.metrics:
            _n, mean, half = _ci(ev, m.name)
            row[m.name] = mean
            row[f"{m.name} ci_half"] = half
        row["feasible"] = ev.complete and feasible(p, ev)
        row["pareto"] = id(ev) in front
        row["recommended"] = ev is advice.recommended
        row["current"] = ev.candidate.is_current
        rows.append(row)
    return pd.DataFrame(rows)


def plot_front(advice: Advice, path: Path) -> Path:
    from .. import plots

    p = advice.setup.problem
    axes = p.front
    fig = plots.new_figure(8.0, 5.0)
    ax = fig.add_subplot(1, 1, 1)
    evs = advice.complete
    front = pareto(p, evs)
    (mx, _dx) = axes[0]
    my = axes[1][0] if len(axes) > 1 else None

    def xy(e: Evaluation) -> tuple[float, float, float, float]:
        _, x, hx = _ci(e, mx.name)
        if my is None:
            return x, hx, float(evs.index(e)), 0.0
        _, y, hy = _ci(e, my.name)
        return x, hx, y, hy

    for e in evs:
        x, hx, y, hy = xy(e)
        ok = feasible(p, e)
        ax.errorbar([x], [y], xerr=[0 if not math.isfinite(hx) else hx], yerr=[0 if not math.isfinite(hy) else hy],
                    fmt="o", color="#1f77b4" if ok else "#bbbbbb", ms=4, lw=0.8, zorder=2)
    fr = sorted((xy(e) for e in front), key=lambda t: t[0])
    if fr:
        ax.plot([t[0] for t in fr], [t[2] for t in fr], "-", color="#ff7f0e", lw=1, zorder=1, label="Pareto front")
    cur = advice.of(advice.setup.catalogue.current)
    if cur is not None and cur.complete:
        x, _, y, _ = xy(cur)
        ax.plot([x], [y], "s", mfc="none", mec="k", ms=10, label="current configuration", zorder=3)
    if advice.recommended is not None:
        x, _, y, _ = xy(advice.recommended)
        ax.plot([x], [y], "*", color="#d62728", ms=16, label=f"recommended: {advice.recommended.candidate.name}", zorder=4)
    for c in p.constraints:
        if c.metric == mx:
            ax.axvline(c.bound, ls="--", color="#888", lw=0.8)
        elif my is not None and c.metric == my:
            ax.axhline(c.bound, ls="--", color="#888", lw=0.8)
    ax.set_xlabel(f"{mx.name} ({'higher' if axes[0][1] == MAXIMISE else 'lower'} is better)")
    ax.set_ylabel(f"{my.name} ({'higher' if axes[1][1] == MAXIMISE else 'lower'} is better)" if my else "configuration (order tried)")
    ax.set_title(f"airsched advise: {p.describe()}\nmeans over {len(p.seeds)} seeds, 95 % CI bars; grey: breaks a constraint",
                 fontsize=9)
    ax.legend(fontsize=7, loc="best")
    return plots.save(fig, path)


def write_answer(advice: Advice) -> Answer:
    """Every file of the answer into the advise directory."""
    from .. import report
    from ..export import ExportError, ExportOptions, export_script

    s = advice.setup
    p = s.problem
    out = s.out
    files: dict[str, Path] = {}
    win = advice.recommended
    cur = advice.of(s.catalogue.current)
    lines = [f"# airsched advise: {p.describe()}", ""]
    lines.append(f"Cell: {s.scenario} ({s.standard}, {len(s.stations)} stations; traffic: {', '.join(p.mix)}); "
                 f"{len(p.seeds)} seeds per configuration ({', '.join(map(str, p.seeds))}).")
    lines.append(f"Search: {advice.mode}; {len(advice.evaluations)} of {len(s.catalogue.candidates)} configurations tried "
                 f"({len(advice.complete)} on every seed), {advice.runs_used} runs ({advice.runs_cached} from the run cache); "
                 f"stopped: {advice.stop_reason}; optimiser seed {p.seed}.")
    lines.append("")
    binding = ""
    if win is None:
        lines.append("No configuration was run on every seed: raise the budget.")
    else:
        lines.append(f"## Recommendation: {win.candidate.name}")
        lines.append("")
        lines.append("Settings: " + (", ".join(f"`{x}`" for x in settings_lines(win)) or "none (keep the AP as it is)"))
        lines.append("")
        for o in p.objectives:
            line = f"- {o.text}: {fmt(win, o.metric.name)}"
            if cur is not None and cur.complete:
                line += f" (current configuration: {fmt(cur, o.metric.name)})"
            lines.append(line)
        lines.append("")
        binding, wl = why(p, advice)
        lines += wl
        lines.append("")
        st = stations_comparison(advice)
        if len(st):
            files["stations.csv"] = out / "stations.csv"
            st.to_csv(files["stations.csv"], index=False)
            lines.append("## Each station: current configuration -> recommended (means over seeds)")
            lines.append("")
            lines.append("| station | goodput Mbit/s | airtime share | ping p99 ms |")
            lines.append("|---|---|---|---|")
            for _, r in st.iterrows():
                cells = []
                for q in ("goodput_mbps", "airtime_share", "ping_p99_ms"):
                    a, b = r[f"{q} current"], r[f"{q} recommended"]
                    cells.append("n/a" if not math.isfinite(a) else f"{a:.3g} -> {b:.3g}")
                lines.append(f"| {r['station']} | " + " | ".join(cells) + " |")
            lines.append("")
    cand = candidates_table(advice)
    files["candidates.csv"] = out / "candidates.csv"
    cand.to_csv(files["candidates.csv"], index=False)
    files["pareto.csv"] = out / "pareto.csv"
    cand[cand["pareto"]].to_csv(files["pareto.csv"], index=False)
    lines.append(f"## Pareto front ({', '.join(m.name for m, _ in p.front)})")
    lines.append("")
    cols = [m.name for m, _ in p.front]
    lines.append("| configuration | " + " | ".join(cols) + " | meets constraints |")
    lines.append("|---|" + "---|" * (len(cols) + 1))
    for e in pareto(p, advice.complete):
        lines.append(f"| {e.candidate.name}{' (recommended)' if e is win else ''} | "
                     + " | ".join(fmt(e, c) for c in cols) + f" | {'yes' if feasible(p, e) else 'no'} |")
    lines.append("")
    if advice.complete:
        files["pareto.png"] = plot_front(advice, out / "pareto.png")
    export_note = ""
    if win is not None:
        opts = ExportOptions(whtb_as_htb=True, ath9k_as_mac80211=True)
        try:
            script = export_script(load(s.base_path), "ap", s.fixed + settings_lines(win), opts)
            files["apply.sh"] = out / "apply.sh"
            files["apply.sh"].write_text(script)
            files["apply.sh"].chmod(0o755)
            export_note = "`apply.sh` applies it to the AP (`sh apply.sh apply`, `revert`, `check`; docs/export.md)."
            if any(v == "ath9k" for _, v in win.candidate.settings):
                export_note += (" ath9k's airtime scheduler existed in Linux 4.11 to 5.0 only: the script sets mac80211's, "
                                "its successor (--ath9k-as-mac80211).")
        except ExportError as exc:
            export_note = f"Not exported: {exc}"
        lines.append("## Apply it")
        lines.append("")
        lines.append(export_note)
        lines.append("")
    files["answer.md"] = out / "answer.md"
    files["answer.md"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    files["answer.json"] = out / "answer.json"
    files["answer.json"].write_text(json.dumps({
        "problem": p.describe(), "mode": advice.mode, "recommended": win.candidate.name if win else None,
        "settings": settings_lines(win) if win else [], "feasible": advice.feasible, "binding": binding,
        "runs": advice.runs_used, "runs_cached": advice.runs_cached, "configurations_tried": len(advice.evaluations),
        "configurations": len(s.catalogue.candidates), "seeds": p.seeds, "optimiser_seed": p.seed,
        "stop": advice.stop_reason,
    }, indent=1) + "\n", encoding="utf-8")
    page = report.render(out, title=f"airsched advise: {p.describe()}")
    files["report.html"] = out / "report.html"
    files["report.html"].write_text(_with_answer(page, lines, files.get("pareto.png")), encoding="utf-8")
    return Answer(lines, binding, files, export_note)


def _with_answer(page: str, lines: list[str], figure: Path | None) -> str:
    """The report page with the answer as its first section."""
    import base64

    body = []
    for ln in lines:
        if ln.startswith("#"):
            level = min(len(ln) - len(ln.lstrip("#")) + 1, 4)
            body.append(f"<h{level}>{html.escape(ln.lstrip('#').strip())}</h{level}>")
        elif ln.startswith("|"):
            if set(ln.replace("|", "").strip()) <= {"-"}:
                continue
            cells = [c.strip() for c in ln.strip("|").split("|")]
            body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
        elif ln:
            body.append(f"<p>{html.escape(ln)}</p>")
    text = "".join(body)
    # Consecutive rows into tables.
    text = text.replace("</p><tr>", "</p><table class=\"advise\"><tr>").replace("</tr><p>", "</tr></table><p>")
    text = text.replace("</tr><h", "</tr></table><h")
    if text.endswith("</tr>"):
        text += "</table>"
    text = text.replace("</h3><tr>", "</h3><table class=\"advise\"><tr>").replace("</h4><tr>", "</h4><table class=\"advise\"><tr>")
    if figure is not None and figure.exists():
        png = base64.b64encode(figure.read_bytes()).decode("ascii")
        text += f'<figure class="plot"><img alt="Pareto front" src="data:image/png;base64,{png}"><figcaption>Pareto front</figcaption></figure>'
    section = f'<section id="advise">{text}</section>'
    marker = '<section id="sweep">'
    if marker in page:
        return page.replace(marker, section + marker, 1)
    return page.replace("<script>", section + "<script>", 1)
