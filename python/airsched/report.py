# SPDX-License-Identifier: Apache-2.0
"""One self-contained HTML page of a run or a sweep: the scenario and its provenance, the result
tables, and the figures a reader of the papers expects (goodput and airtime per station, latency
CDFs and over time, TCP congestion windows, A-MPDU sizes, tc statistics), each an embedded PNG.

    airsched report out/ -o report.html          # a directory `airsched run --out` wrote
    airsched report sweep-out/ -o report.html    # a directory `airsched sweep` wrote

No file is referenced: the page opens anywhere, mailed or archived.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from .result import OPTIONAL_TABLES, TABLES, Result

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


@dataclass
class RunData:
    """One run's results, with a label and where they came from."""

    label: str
    result: Result
    provenance: dict[str, Any] = field(default_factory=dict)
    #: The scenario file the run came from, shown with its overrides (None: not known).
    scenario: str | None = None


def load_run_dir(path: str | os.PathLike[str]) -> Result:
    """A directory ``airsched run --out`` wrote (``*.parquet`` and ``summary.json``) as a Result."""
    import pandas as pd

    d = Path(path)
    doc = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    tables = {}
    for name in TABLES:
        if name in OPTIONAL_TABLES and not (d / f"{name}.parquet").exists():
            tables[name] = {c: [] for c in TABLES[name]}  # written only when it has rows
            continue
        frame = pd.read_parquet(d / f"{name}.parquet")
        tables[name] = {c: frame[c].tolist() for c in frame.columns}
    summary = {k: (math.nan if v is None else v) for k, v in doc.items() if k not in (*TABLES, "tc", "warnings")}
    result = Result(summary, tables, doc.get("tc", ()), doc.get("warnings", ()))
    for name in ("queues", "flow_delays"):  # written by `airsched run --queues --out`
        if (d / f"{name}.parquet").is_file():
            setattr(result, name, pd.read_parquet(d / f"{name}.parquet"))
    return result


def is_sweep_dir(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "sweep.json").is_file()


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / "summary.json").is_file() and (Path(path) / "stations.parquet").is_file()


# ----- figures -----------------------------------------------------------------------------------


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(title: str, png: str, caption: str = "") -> str:
    """A figure with its caption: ``caption``, else its ``title`` (every figure has one)."""
    alt = html.escape(title)
    cap = f"<figcaption>{html.escape(caption or title[:1].upper() + title[1:])}.</figcaption>"
    return f'<figure class="plot"><img alt="{alt}" title="{alt}" src="data:image/png;base64,{png}">{cap}</figure>'


def _axes_from_zero(*axes: Any) -> None:
    """Goodputs, airtimes, queue lengths and delays are counts and durations: their axes start at
    zero, so that a flat line at 4 packets is not drawn across a 3.8-4.2 axis."""
    for ax in axes:
        if ax.has_data():
            ax.set_ylim(bottom=0)


def fig_stations(result: Result) -> str | None:
    """Goodput and airtime share per station, side by side."""
    from .plots import new_figure

    st = result.stations
    if not len(st):
        return None
    fig = new_figure(height=3.6)
    left, right = fig.subplots(1, 2)
    names = list(st["name"])
    left.bar(names, st["goodput_mbps"], color="tab:blue")
    left.set_ylabel("goodput, Mbit/s")
    left.set_title("goodput per station")
    right.bar(names, 100 * st["airtime_share"].fillna(0), color="tab:orange")
    right.set_ylabel("airtime, % of the run")
    right.set_title("airtime per station")
    _axes_from_zero(left, right)
    for ax in (left, right):
        ax.grid(axis="y", alpha=0.3)
        ax.tick_params(axis="x", rotation=20)
    return _figure("goodput and airtime per station", _png(fig))


def fig_goodput_time(result: Result) -> str | None:
    from .plots import draw_samples, new_figure

    samples = result.samples
    if not len(samples[samples["kind"] == "station"]):
        return None
    fig = new_figure(height=3.6)
    ax = fig.subplots()
    draw_samples(ax, samples, "goodput")
    ax.set_xlabel("time, s")
    ax.set_title("goodput per station over time")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    _axes_from_zero(ax)
    return _figure("goodput over time", _png(fig))


def fig_latency(result: Result) -> str | None:
    """Ping round-trip times: their CDF per flow, and each reply against time."""
    from .plots import new_figure

    pings = result.pings
    if not len(pings):
        return None
    fig = new_figure(height=3.6)
    cdf, over = fig.subplots(1, 2)
    for flow, rows in pings.groupby("flow", sort=False):
        rtt = rows["rtt_ms"].sort_values().to_numpy()
        y = [(i + 1) / len(rtt) for i in range(len(rtt))]
        cdf.step(rtt, y, where="post", label=str(flow))
        over.plot(rows["time_s"], rows["rtt_ms"], ".", markersize=2, label=str(flow))
    cdf.set_xscale("log")
    cdf.set_xlabel("round-trip time, ms")
    cdf.set_ylabel("cumulative probability")
    cdf.set_title("latency CDF")
    over.set_xlabel("time, s")
    over.set_ylabel("round-trip time, ms")
    over.set_yscale("log")
    over.set_title("latency over time")
    for ax in (cdf, over):
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    return _figure("latency CDF and latency over time", _png(fig))


def fig_cwnd(result: Result) -> str | None:
    from .plots import new_figure

    s = result.samples
    s = s[(s["kind"] == "flow") & s["cwnd_bytes"].notna()]
    if not len(s):
        return None
    fig = new_figure(height=3.4)
    ax = fig.subplots()
    for name, rows in s.groupby("name", sort=False):
        ax.plot(rows["time_s"], rows["cwnd_bytes"] / 1000, label=str(name))
    ax.set_xlabel("time, s")
    ax.set_ylabel("cwnd, kB")
    ax.set_title("TCP congestion window")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    _axes_from_zero(ax)
    return _figure("TCP congestion window over time", _png(fig))


def fig_queue_delay(result: Result) -> str | None:
    """Mean queueing delay per flow (the run keeps means, not a time series of the queues)."""
    from .plots import new_figure

    fl = result.flows
    fl = fl[fl["queue_delay_mean_ms"].notna()]
    if not len(fl):
        return None
    fig = new_figure(height=3.2)
    ax = fig.subplots()
    ax.bar(list(fl["name"]), fl["queue_delay_mean_ms"], color="tab:purple")
    ax.set_ylabel("mean queueing delay, ms")
    ax.set_title("queueing delay per flow (qdisc and MAC queues)")
    _axes_from_zero(ax)
    ax.tick_params(axis="x", rotation=20)
    ax.grid(axis="y", alpha=0.3)
    return _figure("queueing delay per flow", _png(fig))


def fig_queues_over_time(result: Result) -> str | None:
    """Queue length per interface and queueing delay per flow over time (a run traced with
    ``--queues``); interfaces whose queue stayed empty and flows that received nothing are left
    out."""
    from .plots import new_figure

    q, d = result.queues, result.flow_delays
    if q is None or d is None:
        return None
    fig = new_figure(height=3.6)
    left, right = fig.subplots(1, 2)
    for (node, dev), rows in q.groupby(["node", "dev"], sort=False):
        if rows["qlen"].max() > 0:
            left.plot(rows["time_s"], rows["qlen"], label=f"{node} {dev}")
    left.set_xlabel("time, s")
    left.set_ylabel("packets queued")
    left.set_title("queue length (root qdisc; 802.11n: AP driver frames as 'mac')")
    for flow, rows in d.groupby("flow", sort=False):
        if rows["queue_delay_ms"].notna().any() and rows["queue_delay_ms"].max() > 0:
            right.plot(rows["time_s"], rows["queue_delay_ms"], label=str(flow))
    right.set_xlabel("time, s")
    right.set_ylabel("mean queueing delay, ms")
    right.set_title("queueing delay per flow, per interval")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="x-small")
    _axes_from_zero(left, right)
    return _figure("queue length and queueing delay over time", _png(fig))


def fig_ampdu(result: Result) -> str | None:
    from .plots import new_figure

    ag = result.aggregates
    if not len(ag):
        return None
    fig = new_figure(height=3.4)
    ax = fig.subplots()
    for (station, direction), rows in ag.groupby(["station", "direction"], sort=False):
        ax.plot(rows["mpdus"], 100 * rows["share"], marker="o", markersize=3, label=f"{station} {direction}")
    ax.set_xlabel("MPDUs per A-MPDU")
    ax.set_ylabel("share of PPDU attempts, %")
    ax.set_title("A-MPDU sizes")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return _figure("A-MPDU sizes", _png(fig))


# ----- tables ----------------------------------------------------------------------------------

STATION_COLUMNS = ("name", "rate_mbps", "goodput_mbps", "goodput_std_mbps", "airtime_share", "tx_frames", "retries", "drops", "queue_delay_mean_ms", "ampdu_mean_down")
FLOW_COLUMNS = ("name", "src", "dst", "protocol", "goodput_mbps", "sent_packets", "received_packets", "lost_packets", "delay_mean_ms", "queue_delay_mean_ms", "rtt_p50_ms", "rtt_p99_ms", "tcp_retransmits")


def _table(df: pd.DataFrame, cls: str, columns: Sequence[str] | None = None) -> str:
    if columns is not None:
        df = df[[c for c in columns if c in df.columns]]
    bools = [c for c in df.columns if df[c].dtype == bool]
    if bools:  # a reader's words, not Python's True/False
        df = df.assign(**{c: df[c].map({True: "yes", False: "no"}) for c in bools})
    table = df.to_html(index=False, classes=cls, border=0, na_rep="–", float_format=lambda x: f"{x:.4g}")
    return f'<div class="scroll">{table}</div>'


def _tc_table(result: Result) -> str:
    import pandas as pd

    rows = []
    for iface in result.tc:
        for q in iface.get("qdiscs", []):
            st = q.get("stats", {})
            rows.append(
                {
                    "node": iface.get("node"),
                    "dev": iface.get("dev"),
                    "qdisc": q.get("kind"),
                    "handle": q.get("handle"),
                    "parent": q.get("parent"),
                    **{k: st.get(k) for k in ("bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen")},
                }
            )
    if not rows:
        return "<p>No tc statistics in these results.</p>"
    out = _table(pd.DataFrame(rows), "tc")
    texts = [
        f"# {iface.get('node')} dev {iface.get('dev')}\n{iface.get('qdisc_text', '')}{iface.get('class_text', '')}"
        for iface in result.tc
        if iface.get("qdisc_text")
    ]
    if texts:
        out += "<details><summary>tc -s qdisc / class show</summary><pre>" + html.escape("\n".join(texts)) + "</pre></details>"
    return out


def _summary_table(result: Result) -> str:
    import pandas as pd

    s = result.summary
    rows = [(k, v) for k, v in s.items() if not isinstance(v, (dict, list))]
    rows += [(f"packets {k}", v) for k, v in s.get("conservation", {}).items()]
    return _table(pd.DataFrame(rows, columns=["quantity", "value"]), "summary")


def run_section(run: RunData, anchor: str = "run") -> str:
    r = run.result
    parts = [f'<section id="{anchor}"><h2>{html.escape(run.label)}</h2>']
    scenario = run.scenario or run.provenance.get("scenario")
    if scenario and Path(scenario).is_file():
        overrides = run.provenance.get("overrides") or []
        text = Path(scenario).read_text(encoding="utf-8", errors="replace")
        sets = "".join(f"<li><code>{html.escape(o)}</code></li>" for o in overrides)
        parts.append(
            f'<h3>scenario</h3><p><code>{html.escape(str(scenario))}</code>'
            + (f", with the overrides</p><ul>{sets}</ul>" if sets else "</p>")
            + f'<details><summary>scenario file</summary><pre class="scenario">{html.escape(text)}</pre></details>'
        )
    if run.provenance:
        prov = {k: v for k, v in run.provenance.items() if k not in ("params",)}
        parts.append("<details><summary>provenance</summary><pre>" + html.escape(json.dumps(prov, indent=1, default=str)) + "</pre></details>")
    parts.append('<h3>summary</h3>' + _summary_table(r))
    if r.warnings:
        parts.append("<h3>warnings</h3><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in r.warnings) + "</ul>")
    parts.append('<h3>stations</h3>' + _table(r.stations, "stations", STATION_COLUMNS))
    parts.append('<h3>flows</h3>' + _table(r.flows, "flows", FLOW_COLUMNS))
    # A cell with a Bluetooth piconet (docs/model-bluetooth.md): its links and the coupling.
    for name in ("bluetooth", "coexistence"):
        frame = getattr(r, name)
        if not frame.empty:
            parts.append(f"<h3>{name}</h3>" + _table(frame, name))
    figures = [f(r) for f in (fig_stations, fig_goodput_time, fig_latency, fig_cwnd, fig_queue_delay, fig_queues_over_time, fig_ampdu)]
    parts.append('<h3>figures</h3>' + "".join(f for f in figures if f))
    if r.queues is None:
        parts.append(
            '<p class="note">Queue length and delay over time: this run was not traced '
            "(<code>airsched run --queues</code>); the tables hold each flow's and station's mean "
            "queueing delay.</p>"
        )
    parts.append('<h3>tc statistics</h3>' + _tc_table(r))
    parts.append("</section>")
    return "".join(parts)


def sweep_section(out_dir: Path) -> tuple[str, list[RunData]]:
    """The sweep's statistics over seeds (tables and error bars) and its first run in detail."""
    from . import stats
    from .sweeps import RUN_ID, collect, read_run, run_path

    index = json.loads((out_dir / "sweep.json").read_text(encoding="utf-8"))
    df = collect(out_dir, "stations")
    params = [c for c in index["columns"] if c != "seed"]
    parts = [f'<section id="sweep"><h2>sweep {html.escape(index["name"])}</h2>']
    done = df[RUN_ID].nunique() if len(df) else 0
    parts.append(f"<p>{done} of {len({r[RUN_ID] for r in index['runs']})} runs completed; parameters: {html.escape(', '.join(params) or '(none)')}; seeds per configuration: {len({r['seed'] for r in index['runs']})}.</p>")
    runs: list[RunData] = []
    if len(df):
        by = [*params, "name"]
        summary = stats.summarize(df, by, ["goodput_mbps", "airtime_share"])
        wide = summary.copy()
        wide["mean ± CI"] = [stats.format_mean_ci(m, h, 4) for m, h in zip(wide["mean"], wide["ci_half"])]
        parts.append("<h3>stations: mean and 95 % Student-t CI over seeds</h3>")
        parts.append(_table(wide[[*by, "quantity", "n", "mean ± CI", "ci_low", "ci_high"]], "stats"))
        if summary["too_few"].any():
            parts.append(f'<p class="note">{stats.TOO_FEW} where n &lt; {stats.MIN_RUNS}.</p>')
        summary["configuration"] = [", ".join(str(r[c]) for c in params) or index["name"] for _, r in summary.iterrows()]
        for q, label in (("goodput_mbps", "goodput, Mbit/s"), ("airtime_share", "airtime share")):
            buf = io.BytesIO()
            stats.plot_errorbars(summary, q, "configuration", "name", buf, ylabel=label)
            parts.append(_figure(f"{q} per configuration with error bars", base64.b64encode(buf.getvalue()).decode("ascii")))
        first = index["runs"][0]
        if run_path(out_dir, first[RUN_ID]).exists():
            result, prov = read_run(run_path(out_dir, first[RUN_ID]))
            label = "first run: " + ", ".join(f"{k}={first[k]}" for k in index["columns"])
            runs.append(RunData(label, result, prov))
    parts.append("</section>")
    return "".join(parts), runs


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;padding:0 2vw;color:#222;max-width:1800px}
figcaption{color:#444;font-size:.9em;margin-top:.3em}
h1{font-size:1.6em}h2{border-bottom:2px solid #ccc;margin-top:2em}h3{margin-top:1.5em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{padding:.2em .6em;text-align:right}
th{background:#eee}tr:nth-child(even){background:#f8f8f8}td:first-child,th:first-child{text-align:left}
figure.plot{margin:1em 0}figure.plot img{max-width:100%;height:auto}pre{background:#f4f4f4;padding:.6em;overflow-x:auto;font-size:.8em}
.note{color:#666;font-size:.9em}.scroll{overflow-x:auto}
"""

# Marks the page once every figure has decoded (data-images, data-images-loaded on <body>), so a
# headless browser's DOM dump tells whether the embedded PNGs really render.
# It also records the layout a reader gets at the window's width: the viewport, the page's
# scroll width (wider: a horizontal scroll bar for the whole page) and figures without a caption.
_SCRIPT = """<script>window.addEventListener("load",function(){var im=document.images,ok=0;
for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0){ok++;}}
var b=document.body.dataset,f=document.querySelectorAll("figure"),bare=0;
for(var j=0;j<f.length;j++){if(!f[j].querySelector("figcaption")){bare++;}}
b.images=im.length;b.imagesLoaded=ok;b.viewport=window.innerWidth;
b.pageWidth=document.documentElement.scrollWidth;b.figures=f.length;b.uncaptioned=bare;});</script>"""


def _title(d: Path, kind: str, runs: list[RunData]) -> str:
    """The page's title from what it shows: the sweep's name, or the run's scenario and seed
    (the directory's name only when the run does not say)."""
    if kind == "sweep":
        try:
            name = json.loads((d / "sweep.json").read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError):
            name = None
        return f"sweep {name or d.resolve().name}: airsched report"
    prov = runs[0].result.summary.get("provenance") if runs else None
    prov = prov if isinstance(prov, dict) else {}
    scenario = runs[0].scenario if runs and runs[0].scenario else prov.get("scenario_path")
    if not scenario:
        return f"run {d.resolve().name}: airsched report"
    seed = prov.get("seed")
    return f"{Path(str(scenario)).stem}{'' if seed is None else f' (seed {seed})'}: airsched report"


def render(path: str | os.PathLike[str], title: str | None = None, scenario: str | os.PathLike[str] | None = None) -> str:
    """The HTML page of a run directory or a sweep directory; ``scenario``, the file a run
    directory came from, is shown in it."""
    d = Path(path)
    sections: list[str] = []
    runs: list[RunData] = []
    if is_sweep_dir(d):
        kind = "sweep"
        text, runs = sweep_section(d)
        sections.append(text)
    elif is_run_dir(d):
        kind = "run"
        runs = [RunData(f"run {d.name}", load_run_dir(d), scenario=None if scenario is None else os.fspath(scenario))]
    else:
        raise FileNotFoundError(f"{d}: neither a run directory (summary.json, stations.parquet) nor a sweep directory (sweep.json)")
    for i, run in enumerate(runs):
        sections.append(run_section(run, f"run{i}"))
    title = title or _title(d, kind, runs)
    prov = {
        "airsched": _core.version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "source": str(d.resolve()),
        "kind": kind,
        "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    head = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in prov.items())
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><section id=\"provenance\"><h2>provenance</h2><table class=\"provenance\">{head}</table></section>"
        + "".join(sections)
        + _SCRIPT
        + "</body></html>\n"
    )


def write_report(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    title: str | None = None,
    scenario: str | os.PathLike[str] | None = None,
) -> Path:
    """Render the report of ``path`` (a run or sweep directory) into the HTML file ``out``."""
    page = render(path, title, scenario)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
