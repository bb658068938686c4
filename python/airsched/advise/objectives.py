# SPDX-License-Identifier: Apache-2.0
"""What the user wants of the cell: objectives, constraints, the traffic to test, and the
metrics they are stated in.

An objectives file (TOML; every table optional, the command line may give the same)::

    [objective]
    maximise = "total_goodput_mbps"             # or minimise = ...; a list for several, the first leads
    constraints = ["ping_p99_ms < 20", "jain_airtime > 0.9", "goodput_mbps[sta3] >= 2"]

    [traffic]
    mix = ["bulk", "ping"]                      # per station; "voip:sta3" for one station,
                                                # "scenario" keeps the scenario's own flows

    [search]
    seeds = 3                                   # or a list [1, 2, 3]
    duration = "10s"
    warmup = "2s"
    budget = 40                                 # runs (or "5m": wall-clock time)
    seed = 1                                    # the optimiser's seed

    [catalogue.qdisc]                           # the axes searched, as a sweep's [variants]
    current = {}
    fq_codel = {"ap.tc" = "tc qdisc add dev wlan0 root fq_codel"}

Metrics are computed per run from the result tables and averaged over seeds. Names, and what
they are (``*`` = the stations that carry a bulk, UDP or web flow, ping-only ones left out):

* ``total_goodput_mbps``: the stations' goodput summed (up and down);
* ``min_goodput_mbps``: the smallest goodput among ``*``;
* ``jain_goodput``, ``jain_airtime``: Jain's fairness index, (Σx)² / (n Σx²), of ``*``'s goodput or
  airtime (Høiland-Jørgensen et al. use it on airtime);
* ``ping_p50_ms``, ``ping_p99_ms``: the largest median / 99th-percentile RTT among the ping flows;
* per station or flow, with its name in brackets: ``goodput_mbps[NAME]``, ``airtime_share[NAME]``
  (stations), ``ping_p99_ms[NAME]`` (the ping flow to that station, or a ping flow by name),
  ``delay_ms[FLOW]`` (mean one-way delay), ``delay_max_ms[FLOW]``, ``loss[FLOW]`` (lost / sent).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._errors import ScenarioError

if TYPE_CHECKING:
    from ..result import Result

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAXIMISE, MINIMISE = "maximise", "minimise"
#: Metrics without a name in brackets, with the direction a user most likely wants.
CELL_METRICS: dict[str, str] = {
    "total_goodput_mbps": MAXIMISE,
    "min_goodput_mbps": MAXIMISE,
    "jain_goodput": MAXIMISE,
    "jain_airtime": MAXIMISE,
    "ping_p50_ms": MINIMISE,
    "ping_p99_ms": MINIMISE,
}
#: Metrics of one station or flow: ``NAME[STATION_OR_FLOW]``.
NAMED_METRICS: dict[str, str] = {
    "goodput_mbps": MAXIMISE,
    "airtime_share": MAXIMISE,
    "ping_p99_ms": MINIMISE,
    "delay_ms": MINIMISE,
    "delay_max_ms": MINIMISE,
    "loss": MINIMISE,
}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}
_METRIC = re.compile(r"^([a-z_0-9]+)(?:\[([^\]]+)\])?$")
_CONSTRAINT = re.compile(r"^\s*([a-z_0-9]+(?:\[[^\]]+\])?)\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d*)?(?:[eE]-?\d+)?)\s*$")

#: Traffic mix kinds: what each adds per station.
MIX_KINDS = {
    "bulk": "a TCP CUBIC download from the server (until the end of the run)",
    "bulk-up": "a TCP CUBIC upload to the server",
    "udp": "a saturating UDP download (1472-byte datagrams), the anomaly papers' traffic",
    "ping": "a ping from the server every 100 ms",
    "voip": "a VoIP-like UDP download: 172-byte datagrams (G.711 20 ms + RTP) every 20 ms, DSCP EF",
    "web": "a web-like TCP download: a 200 kB page fetched again each time it completes",
}
#: Keep the scenario's own flows.
MIX_SCENARIO = "scenario"


@dataclass(frozen=True)
class Metric:
    name: str  # as the user wrote it: "ping_p99_ms" or "goodput_mbps[sta3]"
    base: str
    arg: str | None = None

    @classmethod
    def parse(cls, text: str) -> Metric:
        m = _METRIC.match(text.strip())
        if not m:
            raise ValueError(f"{text!r} is not a metric name; expected one of {', '.join(CELL_METRICS)}, "
                             f"or NAME[station or flow] with NAME one of {', '.join(NAMED_METRICS)}")
        base, arg = m.group(1), m.group(2)
        if arg is None and base not in CELL_METRICS:
            raise ValueError(f"unknown metric {base!r}; expected one of {', '.join(CELL_METRICS)}"
                             + (f" (or {base}[NAME] for one station or flow)" if base in NAMED_METRICS else ""))
        if arg is not None and base not in NAMED_METRICS:
            raise ValueError(f"{base}[...]: expected one of {', '.join(n + '[NAME]' for n in NAMED_METRICS)}")
        return cls(text.strip().replace(" ", ""), base, arg)

    @property
    def unit(self) -> str:
        return "Mbit/s" if self.base.endswith("mbps") else "ms" if self.base.endswith("_ms") else ""


@dataclass(frozen=True)
class Objective:
    metric: Metric
    direction: str  # MAXIMISE or MINIMISE

    @property
    def text(self) -> str:
        return f"{self.direction} {self.metric.name}"

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == MAXIMISE else a < b


@dataclass(frozen=True)
class Constraint:
    metric: Metric
    op: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        m = _CONSTRAINT.match(text)
        if not m:
            raise ValueError(f"{text!r}: expected METRIC OP NUMBER, e.g. \"ping_p99_ms < 20\" (OP one of <, <=, >, >=)")
        return cls(Metric.parse(m.group(1)), m.group(2), float(m.group(3)))

    @property
    def text(self) -> str:
        return f"{self.metric.name} {self.op} {self.bound:g}"

    @property
    def direction(self) -> str:
        """Which way is safer: an upper bound wants the metric small."""
        return MINIMISE if self.op.startswith("<") else MAXIMISE

    def met(self, value: float) -> bool:
        return math.isfinite(value) and _OPS[self.op](value, self.bound)

    def violation(self, value: float) -> float:
        """How far outside the bound, relative to it (0 when met; 1e9 when unmeasured)."""
        if not math.isfinite(value):
            return 1e9
        if self.met(value):
            return 0.0
        scale = abs(self.bound) or 1.0
        return abs(value - self.bound) / scale + 1e-9


@dataclass
class Problem:
    """Objectives, constraints, the traffic mix and the search's settings."""

    objectives: list[Objective]
    constraints: list[Constraint] = field(default_factory=list)
    mix: list[str] = field(default_factory=lambda: [MIX_SCENARIO])
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3])
    duration: str | None = None
    warmup: str | None = None
    budget_runs: int | None = None
    budget_seconds: float | None = None
    seed: int = 1
    #: axis -> {label: {key path: value}}, as a sweep's [variants]; None: the built-in catalogue.
    catalogue: dict[str, dict[str, dict[str, Any]]] | None = None
    source: str = "<command line>"

    @property
    def metrics(self) -> list[Metric]:
        """Every metric the answer shows: the objectives', then the constraints', each once."""
        out: list[Metric] = []
        for m in [o.metric for o in self.objectives] + [c.metric for c in self.constraints]:
            if m not in out:
                out.append(m)
        return out

    @property
    def front(self) -> list[tuple[Metric, str]]:
        """The Pareto front's axes: each objective and each constrained metric, with its direction."""
        out: list[tuple[Metric, str]] = [(o.metric, o.direction) for o in self.objectives]
        for c in self.constraints:
            if c.metric not in [m for m, _ in out]:
                out.append((c.metric, c.direction))
        return out

    def describe(self) -> str:
        lead = "; ".join(o.text for o in self.objectives)
        cons = ", ".join(c.text for c in self.constraints)
        return lead + (f" subject to {cons}" if cons else "")


def parse_budget(text: str | int) -> tuple[int | None, float | None]:
    """``200`` (runs) or ``"90s"``/``"5m"``/``"1h"`` (wall-clock time)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 1:
            raise ValueError(f"expected at least 1 run, got {text}")
        return text, None
    s = str(text).strip()
    if s.isdigit():
        return parse_budget(int(s))
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|m|min|h)", s)
    if not m:
        raise ValueError(f"expected a number of runs (200) or a time (90s, 5m, 1h), got {text!r}")
    secs = float(m.group(1)) * {"s": 1, "m": 60, "min": 60, "h": 3600}[m.group(2)]
    return None, secs


def parse_mix(items: Sequence[str]) -> list[str]:
    out = []
    for item in items:
        kind = item.split(":", 1)[0].strip()
        if kind != MIX_SCENARIO and kind not in MIX_KINDS:
            raise ValueError(f"traffic mix {item!r}: expected {MIX_SCENARIO!r} or one of {', '.join(MIX_KINDS)}, "
                             "optionally :STATION+STATION")
        out.append(item.strip())
    if MIX_SCENARIO in out and len(out) > 1:
        raise ValueError(f"traffic mix: {MIX_SCENARIO!r} keeps the scenario's flows and cannot be combined with others")
    return out


def load_problem(path: str | os.PathLike[str] | None, *, maximise: Sequence[str] = (), minimise: Sequence[str] = (),
                 constraints: Sequence[str] = (), mix: Sequence[str] = (), seeds: Sequence[int] | None = None,
                 duration: str | None = None, budget: str | None = None, seed: int | None = None) -> Problem:
    """The problem of an objectives file (if any) with the command line's settings on top (a
    command-line objective or constraint list replaces the file's). Errors are one
    :class:`ScenarioError` line per problem, naming the file and line."""
    doc: dict[str, Any] = {}
    text = ""
    where = "<command line>"
    if path is not None:
        where = os.fspath(path)
        try:
            text = open(where, encoding="utf-8").read()
            doc = tomllib.loads(text)
        except OSError as exc:
            raise ScenarioError(f"{where}: cannot read: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
            raise ScenarioError(f"{where}:{m.group(1) if m else 1}:{m.group(2) if m else 1}: "
                                f"{str(exc).split(' (at line')[0]}") from None
    errors: list[str] = []

    def line_of(key: str) -> int:
        for i, ln in enumerate(text.splitlines(), 1):
            s = ln.strip()
            if s.startswith((key, f'"{key}"', f"[{key}")):
                return i
        return 1

    def err(key: str, msg: str) -> None:
        errors.append(f"{where}:{line_of(key.split('.')[-1]) if path else 1}:1: {key}: {msg}")

    for top in doc:
        if top not in ("objective", "traffic", "search", "catalogue"):
            err(top, f"unknown table [{top}]; expected [objective], [traffic], [search] or [catalogue]")
    obj = doc.get("objective", {})
    for k in obj:
        if k not in ("maximise", "minimise", "maximize", "minimize", "constraints"):
            err(f"objective.{k}", "unknown key; expected maximise, minimise or constraints")
    objectives: list[Objective] = []

    def add(names: Any, direction: str, key: str) -> None:
        for n in [names] if isinstance(names, str) else list(names):
            try:
                objectives.append(Objective(Metric.parse(str(n)), direction))
            except ValueError as exc:
                err(key, str(exc))

    if maximise or minimise:
        add(maximise, MAXIMISE, "--maximise")
        add(minimise, MINIMISE, "--minimise")
    else:
        for key, direction in (("maximise", MAXIMISE), ("maximize", MAXIMISE), ("minimise", MINIMISE), ("minimize", MINIMISE)):
            if key in obj:
                add(obj[key], direction, f"objective.{key}")
    cons: list[Constraint] = []
    for c in (list(constraints) if constraints else list(obj.get("constraints", []))):
        try:
            cons.append(Constraint.parse(str(c)))
        except ValueError as exc:
            err("objective.constraints" if not constraints else "--constraint", str(exc))
    if not objectives and not errors:
        err("objective", "no objective: give maximise = \"METRIC\" or minimise = \"METRIC\" (or --maximise/--minimise), "
            f"e.g. maximise = \"total_goodput_mbps\"; metrics: {', '.join(CELL_METRICS)}")
    traffic = doc.get("traffic", {})
    try:
        mix_list = parse_mix(list(mix) if mix else ([traffic["mix"]] if isinstance(traffic.get("mix"), str) else traffic.get("mix", [MIX_SCENARIO])))
    except ValueError as exc:
        err("traffic.mix", str(exc))
        mix_list = [MIX_SCENARIO]
    search = doc.get("search", {})
    for k in search:
        if k not in ("seeds", "duration", "warmup", "budget", "seed"):
            err(f"search.{k}", "unknown key; expected seeds, duration, warmup, budget or seed")
    seed_list: list[int] = [1, 2, 3]
    if seeds is not None:
        seed_list = list(seeds)
    elif "seeds" in search:
        s = search["seeds"]
        if isinstance(s, int) and not isinstance(s, bool) and s >= 1:
            seed_list = list(range(1, s + 1))
        elif isinstance(s, list) and s and all(isinstance(x, int) and x >= 0 for x in s) and len(set(s)) == len(s):
            seed_list = list(s)
        else:
            err("search.seeds", f"expected a count (3) or a list of distinct seeds ([1, 2, 3]), got {s!r}")
    runs_budget, secs_budget = None, None
    b = budget if budget is not None else search.get("budget")
    if b is not None:
        try:
            runs_budget, secs_budget = parse_budget(b)
        except ValueError as exc:
            err("--budget" if budget is not None else "search.budget", str(exc))
    catalogue = None
    if "catalogue" in doc:
        catalogue = {}
        for axis, table in doc["catalogue"].items():
            if not isinstance(table, dict) or not table or not all(isinstance(v, dict) for v in table.values()):
                err(f"catalogue.{axis}", 'expected a table of options, each a table of settings, e.g. fq_codel = {"ap.tc" = "..."}')
                continue
            catalogue[axis] = table
    if errors:
        raise ScenarioError(errors)
    return Problem(objectives, cons, mix_list, seed_list, duration or search.get("duration"), search.get("warmup"),
                   runs_budget, secs_budget, seed if seed is not None else int(search.get("seed", 1)), catalogue, where)


# ----- metrics of one run ------------------------------------------------------------------------


def _jain(xs: Sequence[float]) -> float:
    xs = [x for x in xs if math.isfinite(x)]
    s2 = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * s2) if xs and s2 > 0 else math.nan


_DERIVED = (".ack", ".reply")
Rows = list[dict[str, Any]]


def active_stations(stations: Rows, flows: Rows) -> list[str]:
    """Stations that carry a flow other than ping (in the stations table's order)."""
    names = set()
    for f in flows:
        if f["protocol"] == "ping" or str(f["name"]).endswith(_DERIVED):
            continue
        names.update({f["src"], f["dst"]})
    return [s["name"] for s in stations if s["name"] in names]


def _f(x: Any) -> float:
    return math.nan if x is None else float(x)


def _rtt(ping: dict[str, Any], col: str) -> float:
    """A ping flow's RTT percentile; infinite when it sent requests and no reply came back in
    the measured window (a queue so deep or a link so bad that the probe is lost, the worst case,
    not an unknown)."""
    v = _f(ping[col])
    if not math.isfinite(v) and (ping.get("rtt_samples") or 0) == 0 and (ping.get("sent_packets") or 0) > 0:
        return math.inf
    return v


def run_metrics(stations: Rows, flows: Rows, metrics: Sequence[Metric]) -> dict[str, float]:
    """Each metric's value in one run, from its stations and flows tables as rows (NaN where it
    is not measured, e.g. no ping flow)."""
    st = {s["name"]: s for s in stations}
    fl = {f["name"]: f for f in flows}
    pings = [f for f in flows if f["protocol"] == "ping"]
    act = [st[n] for n in (active_stations(stations, flows) or list(st))]
    out: dict[str, float] = {}
    for m in metrics:
        v = math.nan
        if m.base == "total_goodput_mbps":
            v = math.fsum(_f(s["goodput_mbps"]) for s in stations)
        elif m.base == "min_goodput_mbps":
            v = min((_f(s["goodput_mbps"]) for s in act), default=math.nan)
        elif m.base == "jain_goodput":
            v = _jain([_f(s["goodput_mbps"]) for s in act])
        elif m.base == "jain_airtime":
            v = _jain([_f(s["airtime_share"]) for s in act])
        elif m.base in ("ping_p50_ms", "ping_p99_ms") and m.arg is None:
            col = "rtt_p50_ms" if m.base == "ping_p50_ms" else "rtt_p99_ms"
            vals = [_rtt(f, col) for f in pings]
            v = max(vals) if vals else math.nan
        elif m.base in ("goodput_mbps", "airtime_share"):
            v = _f(st[m.arg][m.base]) if m.arg in st else math.nan
        elif m.base == "ping_p99_ms":
            to = [f for f in pings if f["name"] == m.arg] or [f for f in pings if f["dst"] == m.arg]
            vals = [_rtt(f, "rtt_p99_ms") for f in to]
            v = max(vals) if vals else math.nan
        elif m.base in ("delay_ms", "delay_max_ms", "loss") and m.arg in fl:
            f = fl[m.arg]
            if m.base == "loss":
                v = _f(f["lost_packets"]) / _f(f["sent_packets"]) if f["sent_packets"] else math.nan
            else:
                v = _f(f["delay_mean_ms" if m.base == "delay_ms" else "delay_max_ms"])
        out[m.name] = v
    return out


def result_metrics(result: Result, metrics: Sequence[Metric]) -> dict[str, float]:
    """:func:`run_metrics` of a :class:`~airsched.result.Result`."""
    return run_metrics(result.stations.to_dict("records"), result.flows.to_dict("records"), metrics)


def check_names(metrics: Sequence[Metric], stations: Sequence[str], flows: Sequence[str], where: str) -> None:
    """Every bracketed name is a station or flow of the cell under test."""
    errors = []
    for m in metrics:
        if m.arg is None:
            continue
        known = stations if m.base in ("goodput_mbps", "airtime_share") else [*flows, *stations] if m.base == "ping_p99_ms" else flows
        if m.arg not in known:
            errors.append(f"{where}: {m.name}: no {'station' if m.base in ('goodput_mbps', 'airtime_share') else 'flow'} "
                          f"named {m.arg!r} in the cell under test (have: {', '.join(known) or 'none'})")
    if errors:
        raise ScenarioError(errors)


def mix_flows(mix: Sequence[str], stations: Sequence[str]) -> str:
    """The ``[[flow]]`` tables of a traffic mix for the named stations."""
    out: list[str] = []
    for item in mix:
        kind, _, who = item.partition(":")
        targets = [s.strip() for s in who.split("+")] if who else list(stations)
        for s in targets:
            if s not in stations:
                raise ValueError(f"traffic mix {item!r}: no station {s!r} (have: {', '.join(stations)})")
            name = f"{kind}-{s}"
            lines = ["[[flow]]", f'name = "{name}"']
            if kind == "bulk":
                lines += ['protocol = "tcp"', 'src = "server"', f'dst = "{s}"']
            elif kind == "bulk-up":
                lines += ['protocol = "tcp"', f'src = "{s}"', 'dst = "server"']
            elif kind == "udp":
                lines += ['protocol = "udp"', 'src = "server"', f'dst = "{s}"', 'rate = "saturate"', "size = 1472"]
            elif kind == "ping":
                lines += ['protocol = "ping"', 'src = "server"', f'dst = "{s}"', 'interval = "100ms"', "size = 56"]
            elif kind == "voip":
                # 172 bytes every 20 ms: 68.8 kbit/s of UDP payload.
                lines += ['protocol = "udp"', 'src = "server"', f'dst = "{s}"', 'rate = "68.8kbit"', "size = 172", "dscp = 46"]
            elif kind == "web":
                lines += ['protocol = "tcp"', 'src = "server"', f'dst = "{s}"', 'bytes = "200kB"', "repeat = true"]
            out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


_HEADER = re.compile(r"^\s*\[")


def without_flows(text: str) -> str:
    """Scenario text with its ``[[flow]]`` tables removed (everything else, comments too, kept)."""
    out, skipping = [], False
    for line in text.splitlines():
        if _HEADER.match(line):
            skipping = line.strip().startswith("[[flow]]")
        if not skipping:
            out.append(line)
    return "\n".join(out).rstrip() + "\n"


def with_mix(text: str, mix: Sequence[str], stations: Sequence[str]) -> str:
    """The scenario with the mix's flows instead of its own (unchanged for ``"scenario"``)."""
    if list(mix) == [MIX_SCENARIO]:
        return text
    return without_flows(text) + "\n# The traffic mix under test (airsched advise): " + ", ".join(mix) + "\n" + mix_flows(mix, stations)


def summary_of(values: Mapping[str, list[float]]) -> dict[str, tuple[int, float, float]]:
    """Per metric, ``(n, mean, 95 % CI half width)`` over the seeds' values."""
    from ..stats import mean_ci

    out = {}
    for k, vs in values.items():
        n, mean, _std, half = mean_ci(vs)
        out[k] = (n, mean, half)
    return out
