# SPDX-License-Identifier: Apache-2.0
"""The search: Optuna's TPE sampler (multi-objective, with constraints) proposes configurations of
the catalogue; each is run through the sweep engine (sweeps.execute: the local pool or Dask, one
Parquet file per run named by its identity, so a rerun or a refined search reuses every finished
run), first on one seed, then, if it could still win, on the others ("racing", as irace and
F-Race do: a configuration clearly worse on its first replicate is not replicated).

Why Optuna's TPE (Watanabe et al., "c-TPE", and Ozaki et al., "Multiobjective TPE", in Optuna
since 2.x/3.0): it handles categorical axes and constraints natively, is deterministic with a seed
when trials are told in order, and needs no population (NSGA-II's default population of 50 is
larger than most catalogues here). The search stops at the budget (runs, or wall-clock time),
when every configuration has been tried, or when the sampler proposes only configurations it has
already seen ten times in a row (converged).
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import ScenarioError
from ..iw import DEFAULT_AIRTIME_WEIGHT
from ..scenario import load, toml_value
from ..sweeps import Axis, Sweep, execute, run_identity, run_path, write_failures, write_index
from .catalogue import CURRENT, Candidate, Catalogue, build, builtin, explicit_queueing
from .objectives import MAXIMISE, Problem, check_names, run_metrics, with_mix

#: The axis column of an advise directory's sweep index.
CONFIGURATION = "configuration"
#: A configuration is replicated on every seed only if its first seed is within this fraction of
#: the incumbent on the leading objective and of every constraint's bound.
RACE_MARGIN = 0.1
#: The search has converged when the sampler proposes this many known configurations in a row.
CONVERGED_AFTER = 10

Progress = Callable[[int, int | None, str], None]  # (runs used, runs budget or None, best so far)


@dataclass
class Evaluation:
    candidate: Candidate
    order: int  # when it was first run
    seeds: list[int] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    complete: bool = False

    def mean(self, metric: str) -> float:
        """The mean over the seeds run; NaN if a seed did not measure it, infinite if one
        measured it as infinite (pings that never came back)."""
        xs = self.values.get(metric, [])
        if not xs or any(math.isnan(x) for x in xs):
            return math.nan
        if any(math.isinf(x) for x in xs):
            return max(xs) if all(x > 0 for x in xs if math.isinf(x)) else min(xs)
        return math.fsum(xs) / len(xs)


@dataclass
class Setup:
    """The cell under test: the base scenario every candidate starts from, and the catalogue."""

    problem: Problem
    scenario: str  # what the user gave
    base_path: Path  # OUT/cell.toml
    base_text: str
    fixed: list[str]  # overrides of every run (duration, warmup)
    standard: str
    stations: list[str]
    catalogue: Catalogue
    out: Path


@dataclass
class Advice:
    setup: Setup
    mode: str  # "search" or "grid"
    evaluations: list[Evaluation]
    runs_used: int = 0
    runs_cached: int = 0
    trials: int = 0
    stop_reason: str = ""
    wall_s: float = 0.0
    recommended: Evaluation | None = None
    feasible: bool = False

    @property
    def complete(self) -> list[Evaluation]:
        return [e for e in self.evaluations if e.complete]

    def of(self, cand: Candidate) -> Evaluation | None:
        return next((e for e in self.evaluations if e.candidate.key == cand.key), None)


def prepare(scenario: str | os.PathLike[str], problem: Problem, out: str | os.PathLike[str]) -> Setup:
    """Write ``OUT/cell.toml`` (the scenario with the traffic mix, its queueing preset written as
    keys, tc_file paths made absolute) and build the catalogue over it."""
    src = load(scenario)
    here = Path(os.fspath(scenario)).resolve().parent
    text = re.sub(r'(tc_file\s*=\s*")([^"]+)(")',
                  lambda m: m.group(1) + (m.group(2) if os.path.isabs(m.group(2)) else str(here / m.group(2))) + m.group(3),
                  src.text)
    text = explicit_queueing(text)
    info = src.validate()
    stations = [ln.name for ln in info.links] or list(_stations(src.text))
    try:
        text = with_mix(text, problem.mix, stations)
    except ValueError as exc:
        raise ScenarioError(f"{problem.source}: traffic.mix: {exc}") from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = out / "cell.toml"
    header = (f"# The cell under test of `airsched advise`, from {os.fspath(scenario)}"
              f" (traffic: {', '.join(problem.mix)}). Every run of OUT/runs starts from this file.\n")
    base_text = header + text
    if not base.exists() or base.read_text(encoding="utf-8") != base_text:
        base.write_text(base_text, encoding="utf-8")
    fixed = []
    if problem.duration:
        fixed.append(f"run.duration={toml_value(problem.duration)}")
    if problem.warmup:
        fixed.append(f"run.warmup={toml_value(problem.warmup)}")
    from .. import _core

    with_ov = _core.validate(base_text, str(base), fixed)
    check_names(problem.metrics, list(with_ov["stations"]), list(with_ov["flows"]), problem.source)
    standard = str(with_ov.get("standard", "802.11b"))

    def identity(settings: tuple[tuple[str, Any], ...]) -> str:
        lines = [f"{k}={toml_value(v, k)}" for k, v in settings] + fixed + [f"run.seed={problem.seeds[0]}"]
        return run_identity(base_text, str(base), lines)

    axes = problem.catalogue or builtin(standard)
    weighted = [ln.name for ln in info.links if ln.airtime_weight not in (None, DEFAULT_AIRTIME_WEIGHT)]
    if problem.catalogue is None and weighted:
        # The AP's stations carry airtime weights (e.g. imported from iw): try them all equal too.
        axes = {**axes, "weights": {"equal": {f"station[{n}].airtime_weight": DEFAULT_AIRTIME_WEIGHT for n in weighted}}}
    cat = build(axes, identity)
    return Setup(problem, os.fspath(scenario), base, base_text, fixed, standard, stations, cat, out)


def _stations(text: str) -> list[str]:
    return re.findall(r'^\s*name\s*=\s*"([^"]+)"', text, flags=re.M)


class _Runner:
    """Runs candidates on seeds through the sweep engine and keeps what they measured."""

    def __init__(self, setup: Setup, jobs: int | None, executor: str, address: Any) -> None:
        self.setup, self.jobs, self.executor, self.address = setup, jobs, executor, address
        self._own_client: Any = None
        if executor == "dask" and not hasattr(address, "map"):
            # One client for the whole search, not a cluster per batch of runs.
            try:
                from distributed import Client
            except ImportError:
                raise ScenarioError("the dask executor needs Dask distributed: pip install 'airsched[cluster]'") from None
            self._own_client = self.address = Client(address)
        self.evals: dict[str, Evaluation] = {}
        self.order: list[Evaluation] = []
        self.runs_used = 0
        self.runs_cached = 0
        self.failures: list[dict[str, Any]] = []

    def sweep_of(self, cands: Sequence[Candidate], seeds: Sequence[int]) -> Sweep:
        s = self.setup
        axis = Axis(CONFIGURATION, tuple((c.name, dict(c.settings)) for c in cands), 0)
        return Sweep(str(s.base_path), "advise", str(s.base_path), [axis], [], list(seeds), 1, list(s.fixed))

    def run(self, cands: Sequence[Candidate], seeds: Sequence[int], progress: Any = None) -> None:
        if not cands or not seeds:
            return
        sw = self.sweep_of(cands, seeds)
        runs = sw.runs()
        self.runs_used += len(runs)
        self.runs_cached += sum(1 for r in runs if run_path(self.setup.out, r.run_id).exists())
        outcome = execute(sw, self.setup.out, jobs=self.jobs, executor=self.executor, address=self.address, progress=progress)
        failed = {f["run_id"]: f["error"] for f in outcome.failed}
        self.failures += outcome.failed
        by_name = {c.name: c for c in cands}
        metrics = self.setup.problem.metrics
        for r in runs:
            cand = by_name[r.params[CONFIGURATION]]
            ev = self.evals.get(cand.key)
            if ev is None:
                ev = self.evals[cand.key] = Evaluation(cand, len(self.order))
                self.order.append(ev)
            if r.seed in ev.seeds:
                continue
            ev.seeds.append(r.seed)
            ev.run_ids.append(r.run_id)
            if r.run_id in failed:
                vals = {m.name: math.nan for m in metrics}
                ev.errors.append(failed[r.run_id])
            else:
                vals = run_metrics(*_rows(run_path(self.setup.out, r.run_id)), metrics)
            for k, v in vals.items():
                ev.values.setdefault(k, []).append(v)
            ev.complete = len(ev.seeds) == len(self.setup.problem.seeds)

    def finish(self, advice: Advice) -> None:
        """The advise directory as a sweep directory: the index of every run, for collect and report."""
        s = self.setup
        runs = []
        for ev in self.order:
            sw = self.sweep_of([ev.candidate], ev.seeds)
            runs += sw.runs()
        write_index(self.sweep_of([e.candidate for e in self.order], s.problem.seeds), runs, s.out)
        write_failures(s.out, self.failures)
        advice.evaluations = list(self.order)
        advice.runs_used, advice.runs_cached = self.runs_used, self.runs_cached
        advice.recommended, advice.feasible = recommend(s.problem, advice.complete)
        if self._own_client is not None:
            self._own_client.close()


def _rows(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stations and flows tables of a run file, as rows (only those two columns are read)."""
    import pyarrow.parquet as pq

    row = pq.read_table(path, columns=["stations", "flows"]).to_pylist()[0]
    return row["stations"], row["flows"]


def feasible(problem: Problem, ev: Evaluation) -> bool:
    return all(c.met(ev.mean(c.metric.name)) for c in problem.constraints)


def violation(problem: Problem, ev: Evaluation) -> float:
    return sum(c.violation(ev.mean(c.metric.name)) for c in problem.constraints)


def _lex(problem: Problem, ev: Evaluation) -> tuple[float, ...]:
    """Smaller is better: each objective's mean, signed so (NaN last)."""
    out = []
    for o in problem.objectives:
        v = ev.mean(o.metric.name)
        out.append(math.inf if not math.isfinite(v) else (-v if o.direction == MAXIMISE else v))
    return tuple(out)


def recommend(problem: Problem, evals: Sequence[Evaluation]) -> tuple[Evaluation | None, bool]:
    """The best evaluation: among those meeting every constraint (on the mean over seeds), the
    best on the first objective, ties broken by the next ones, then by the smallest change to the
    AP (fewest settings), then by name, so that the order tried does not matter; if none meets
    them, the one closest to meeting them."""
    if not evals:
        return None, False
    ok = [e for e in evals if feasible(problem, e)]

    def simplest(e: Evaluation) -> tuple[int, str]:
        return len(e.candidate.settings), e.candidate.name

    if ok:
        return min(ok, key=lambda e: (_lex(problem, e), simplest(e))), True
    return min(evals, key=lambda e: (violation(problem, e), _lex(problem, e), simplest(e))), False


def pareto(problem: Problem, evals: Sequence[Evaluation]) -> list[Evaluation]:
    """The evaluations no other beats on every axis of the front (objectives and constrained
    metrics) and strictly on one; ties on every axis all stay."""
    axes = problem.front

    def vec(e: Evaluation) -> list[float]:
        return [(-e.mean(m.name) if d == MAXIMISE else e.mean(m.name)) for m, d in axes]

    vs = {id(e): vec(e) for e in evals}
    good = [e for e in evals if not any(math.isnan(x) for x in vs[id(e)])]
    front = []
    for e in good:
        a = vs[id(e)]
        if not any(all(x <= y for x, y in zip(vs[id(o)], a)) and any(x < y for x, y in zip(vs[id(o)], a)) for o in good):
            front.append(e)
    return front


def _promising(problem: Problem, ev: Evaluation, incumbent: Evaluation | None) -> bool:
    """Whether a configuration run on one seed could still beat the incumbent: closer to meeting
    the constraints than an incumbent that breaks them, or, against one that meets them, within
    RACE_MARGIN of every bound and of the incumbent's leading objective."""
    if incumbent is None:
        return True
    if not feasible(problem, incumbent):
        return violation(problem, ev) < violation(problem, incumbent) * (1 + RACE_MARGIN)
    for c in problem.constraints:
        if c.violation(ev.mean(c.metric.name)) > RACE_MARGIN:
            return False
    o = problem.objectives[0]
    v, best = ev.mean(o.metric.name), incumbent.mean(o.metric.name)
    if not math.isfinite(best):
        return math.isfinite(v)
    if not math.isfinite(v):
        return False
    tol = RACE_MARGIN * max(abs(best), 1e-9)
    return v >= best - tol if o.direction == MAXIMISE else v <= best + tol


def best_text(problem: Problem, ev: Evaluation | None) -> str:
    if ev is None:
        return "best: -"
    o = problem.objectives[0]
    return f"best {o.metric.name} {ev.mean(o.metric.name):.4g} ({ev.candidate.name})"


def grid(setup: Setup, *, jobs: int | None = 1, executor: str = "local", address: Any = None,
         progress: Progress | None = None) -> Advice:
    """Every candidate of the catalogue on every seed: the exhaustive answer the search is
    measured against."""
    started = time.perf_counter()
    r = _Runner(setup, jobs, executor, address)
    hook = None
    if progress is not None:
        def hook(finished: int, _failed: int, skipped: int, total: int) -> None:
            progress(finished + skipped, total, "")
    # One batch: the pool (or Dask) gets every run at once.
    r.run(setup.catalogue.candidates, setup.problem.seeds, hook)
    adv = Advice(setup, "grid", [], trials=len(setup.catalogue.candidates), stop_reason="every configuration on every seed")
    r.finish(adv)
    adv.wall_s = time.perf_counter() - started
    return adv


def search(setup: Setup, *, jobs: int | None = 1, executor: str = "local", address: Any = None,
           progress: Progress | None = None) -> Advice:
    """The optimiser's search within the problem's budget (runs or time; without either, a
    quarter of the grid's runs)."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = time.perf_counter()
    p, cat = setup.problem, setup.catalogue
    nseeds = len(p.seeds)
    budget = p.budget_runs
    if budget is None and p.budget_seconds is None:
        budget = max(nseeds + 1, len(cat.candidates) * nseeds // 4)
    r = _Runner(setup, jobs, executor, address)
    front = p.front
    directions = ["maximize" if d == MAXIMISE else "minimize" for _, d in front]
    worst = [(-1e12 if d == MAXIMISE else 1e12) for _, d in front]
    n_startup = min(10, max(3, len(cat.candidates) // 4))
    sampler = optuna.samplers.TPESampler(seed=p.seed, n_startup_trials=n_startup, multivariate=True)
    study = optuna.create_study(directions=directions, sampler=sampler)
    study.enqueue_trial({a: CURRENT for a in cat.axes})  # the AP as it is: the baseline, first
    choices = {a: list(opts) for a, opts in cat.axes.items()}
    repeats, trials = 0, 0
    stop = ""

    def tell(trial: Any, ev: Evaluation | None) -> None:
        if ev is None:
            study.tell(trial, state=TrialState.FAIL)
            return
        for c in p.constraints:  # feasible when every value is <= 0
            trial.set_constraint(c.text, c.violation(ev.mean(c.metric.name)))
        vals = [ev.mean(m.name) for m, _ in front]
        study.tell(trial, [v if math.isfinite(v) else w for v, w in zip(vals, worst)])

    while True:
        if budget is not None and r.runs_used >= budget:
            stop = f"budget of {budget} runs used"
            break
        if p.budget_seconds is not None and time.perf_counter() - started >= p.budget_seconds:
            stop = f"time budget of {p.budget_seconds:g} s used"
            break
        if len(r.evals) == len(cat.candidates):
            stop = "every configuration tried"
            break
        if repeats >= CONVERGED_AFTER:
            stop = f"converged: the sampler proposed only known configurations {CONVERGED_AFTER} times in a row"
            break
        trial = study.ask()
        trials += 1
        labels = tuple((a, trial.suggest_categorical(a, choices[a])) for a in cat.axes)
        cand = cat.by_labels.get(labels)
        if cand is None:  # a point the core rejects
            repeats += 1
            tell(trial, None)
            continue
        ev = r.evals.get(cand.key)
        if ev is not None:
            repeats += 1
            tell(trial, ev)
            continue
        repeats = 0
        r.run([cand], p.seeds[:1])
        ev = r.evals[cand.key]
        incumbent = recommend(p, [e for e in r.order if e.complete])[0]
        rest = p.seeds[1:]
        if rest and _promising(p, ev, incumbent):
            if budget is not None and r.runs_used + len(rest) > budget:
                tell(trial, ev)
                stop = f"budget of {budget} runs used (the last configuration tried on one seed only)"
                break
            r.run([cand], rest)
        tell(trial, ev)
        if progress:
            progress(r.runs_used, budget, best_text(p, recommend(p, [e for e in r.order if e.complete])[0]))
    adv = Advice(setup, "search", [], trials=trials, stop_reason=stop)
    r.finish(adv)
    adv.wall_s = time.perf_counter() - started
    return adv
