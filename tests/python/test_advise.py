# SPDX-License-Identifier: Apache-2.0
"""`airsched advise` (python/airsched/advise/): objectives, metrics, the catalogue, the search
against the exhaustive grid on three cells, agreement with the papers, reproducibility, the
answer's files and the command line. Short runs and 6 seeds keep it to seconds per cell; the
full comparison (more seeds, optimiser seeds) is in docs/advise.md."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airsched._errors import ScenarioError
from airsched.advise import grid, load_problem, prepare, search
from airsched.advise.catalogue import CURRENT, build, explicit_queueing
from airsched.advise.objectives import Constraint, Metric, run_metrics, with_mix
from airsched.scenario import read_text
from airsched.sweeps import run_identity

ROOT = Path(__file__).resolve().parents[2]
SC = ROOT / "scenarios"
#: Bounded in CI; AIRSCHED_SLOW=1 runs the comparison of docs/advise.md (10 seeds of 10 s runs).
SLOW = os.environ.get("AIRSCHED_SLOW") == "1"
SEEDS = list(range(1, 11 if SLOW else 7))
DURATION = "10s" if SLOW else "4s"

# ----- objectives and metrics --------------------------------------------------------------------


def test_objectives_file_and_its_errors(tmp_path: Path) -> None:
    f = tmp_path / "obj.toml"
    f.write_text('[objective]\nmaximise = "total_goodput_mbps"\nconstraints = ["ping_p99_ms < 20", "jain_airtime >= 0.9",'
                 ' "goodput_mbps[slow] > 0.2"]\n[traffic]\nmix = ["udp", "ping:slow"]\n[search]\nseeds = 4\nbudget = "2m"\nseed = 7\n')
    p = load_problem(f)
    assert [o.text for o in p.objectives] == ["maximise total_goodput_mbps"]
    assert [c.text for c in p.constraints] == ["ping_p99_ms < 20", "jain_airtime >= 0.9", "goodput_mbps[slow] > 0.2"]
    assert (p.mix, p.seeds, p.budget_runs, p.budget_seconds, p.seed) == (["udp", "ping:slow"], [1, 2, 3, 4], None, 120.0, 7)
    # The command line replaces the file's objective and constraints.
    q = load_problem(f, minimise=["ping_p99_ms"], constraints=["total_goodput_mbps > 1"], budget="40")
    assert [o.text for o in q.objectives] == ["minimise ping_p99_ms"] and q.budget_runs == 40
    f.write_text('[objective]\nmaximise = "goodput"\nconstraints = ["ping_p99_ms << 20"]\n[search]\nbudget = "lots"\n')
    with pytest.raises(ScenarioError) as exc:
        load_problem(f)
    errs = exc.value.errors
    assert errs[0].startswith(f"{f}:2:1: objective.maximise: unknown metric 'goodput'")
    assert errs[1].startswith(f"{f}:3:1: objective.constraints: 'ping_p99_ms << 20': expected METRIC OP NUMBER")
    assert errs[2].startswith(f"{f}:5:1: search.budget: expected a number of runs")
    with pytest.raises(ScenarioError, match="no objective"):
        load_problem(None)


def test_metrics_of_one_run() -> None:
    st = [{"name": "a", "goodput_mbps": 3.0, "airtime_share": 0.2}, {"name": "b", "goodput_mbps": 1.0, "airtime_share": 0.6},
          {"name": "p", "goodput_mbps": 0.01, "airtime_share": 0.001}]
    fl = [{"name": "bulk-a", "protocol": "tcp", "src": "server", "dst": "a"},
          {"name": "bulk-b", "protocol": "udp", "src": "server", "dst": "b", "lost_packets": 5, "sent_packets": 100,
           "delay_mean_ms": 12.5, "delay_max_ms": 40.0},
          {"name": "bulk-a.ack", "protocol": "tcp", "src": "a", "dst": "server"},
          {"name": "ping-p", "protocol": "ping", "src": "server", "dst": "p", "rtt_p50_ms": 3.0, "rtt_p99_ms": 9.0,
           "rtt_samples": 50, "sent_packets": 50},
          {"name": "ping-b", "protocol": "ping", "src": "server", "dst": "b", "rtt_p50_ms": None, "rtt_p99_ms": None,
           "rtt_samples": 0, "sent_packets": 50}]
    names = ["total_goodput_mbps", "min_goodput_mbps", "jain_goodput", "jain_airtime", "ping_p99_ms", "ping_p99_ms[p]",
             "goodput_mbps[b]", "loss[bulk-b]", "delay_ms[bulk-b]", "delay_max_ms[bulk-b]"]
    v = run_metrics(st, fl, [Metric.parse(n) for n in names])
    assert v["total_goodput_mbps"] == pytest.approx(4.01)
    assert v["min_goodput_mbps"] == 1.0  # the ping-only station is not a bulk station
    assert v["jain_goodput"] == pytest.approx(16 / (2 * 10))  # (3+1)^2 / (2 (9+1))
    assert v["jain_airtime"] == pytest.approx(0.64 / (2 * 0.4))
    assert v["ping_p99_ms"] == math.inf  # requests sent, none answered: worse than any answer
    assert v["ping_p99_ms[p]"] == 9.0 and v["goodput_mbps[b]"] == 1.0
    assert (v["loss[bulk-b]"], v["delay_ms[bulk-b]"], v["delay_max_ms[bulk-b]"]) == (0.05, 12.5, 40.0)
    c = Constraint.parse("ping_p99_ms <= 20")
    assert c.met(20.0) and not c.met(math.inf) and c.violation(30.0) == pytest.approx(0.5, abs=1e-6)


def test_explicit_queueing_resolves_to_the_same_scenario() -> None:
    """The four presets written as mac_queue/airtime (and fq_codel's qdisc) are the same scenario
    to the core: the same run identity; for fq_codel the resolved scenario differs only in where
    the qdisc line came from (ap.queueing or ap.tc), and the results are equal."""
    import airsched

    text = read_text(str(SC / "hoiland" / "tcp.toml"))
    path = str(SC / "hoiland" / "tcp.toml")
    for preset in ("fifo", "fq-mac", "airtime"):
        t = text.replace('queueing = "fifo"', f'queueing = "{preset}"')
        assert run_identity(explicit_queueing(t), path, []) == run_identity(t, path, []), preset
        assert "queueing =" not in explicit_queueing(t).split("[ap]")[1].split("[[station]]")[0].replace("# queueing", "")
    t = text.replace('queueing = "fifo"', 'queueing = "fq_codel"')
    ov = ["run.duration=3s", "run.warmup=1s"]
    a, b = airsched.run(text=t, overrides=ov), airsched.run(text=explicit_queueing(t), overrides=ov)
    assert a.stations.equals(b.stations) and a.flows.equals(b.flows)


def test_catalogue_drops_invalid_points_and_merges_equal_ones() -> None:
    text = explicit_queueing(read_text(str(SC / "hoiland" / "tcp.toml")))
    path = str(SC / "hoiland" / "tcp.toml")
    axes = {"mac": {"fifo": {"ap.mac_queue": "fifo", "ap.airtime": "off"},
                    "fifo-ath9k": {"ap.mac_queue": "fifo", "ap.airtime": "ath9k"},
                    "airtime": {"ap.mac_queue": "fq-mac", "ap.airtime": "ath9k"}},
            "aql": {"off": {"ap.aql": False}}}
    cat = build(axes, lambda s: run_identity(text, path, [f"{k}={json.dumps(v)}" for k, v in s]))
    # fifo-ath9k is refused by the core (an airtime scheduler needs FQ-MAC); "fifo" is what the
    # scenario already runs and aql=off is its default: those points are the current one.
    assert all(dict(lab)["mac"] == "fifo-ath9k" for lab in cat.invalid) and len(cat.invalid) == 2
    assert cat.by_labels[(("mac", "fifo"), ("aql", CURRENT))] is cat.current
    assert cat.by_labels[(("mac", CURRENT), ("aql", "off"))] is cat.current
    assert [c.name for c in cat.candidates] == ["current (the AP as it is)", "mac=airtime"]


def test_traffic_mix_replaces_the_flows() -> None:
    text = read_text(str(SC / "anomaly.toml"))
    t = with_mix(text, ["udp", "ping:slow"], ["fast", "slow"])
    assert "fast-up" not in t and t.count("[[flow]]") == 3 and 'name = "ping-slow"' in t and "[[station]]" in t
    with pytest.raises(ValueError, match="no station 'nobody'"):
        with_mix(text, ["voip:nobody"], ["fast", "slow"])


# ----- the search against the grid on the three cells ------------------------------------------

CELLS = {
    # Latency first on the 802.11b anomaly cell (saturating downloads to both stations, pings).
    "anomaly": (SC / "anomaly.toml", dict(minimise=["ping_p99_ms"], constraints=["total_goodput_mbps > 1.0"], mix=["udp", "ping"])),
    # Fairness first on the Hoiland-Jorgensen et al. testbed (TCP downloads, pings).
    "hoiland": (SC / "hoiland" / "tcp.toml", dict(maximise=["jain_airtime"])),
    # Goodput subject to latency on the 12-station mixed cell.
    "mixed-12": (SC / "mixed-12.toml", dict(maximise=["total_goodput_mbps"],
                                            constraints=["ping_p99_ms < 100", "delay_ms[voip-voip3] < 20"])),
}


@pytest.fixture(scope="module", params=list(CELLS))
def cell(request, tmp_path_factory):
    scenario, kw = CELLS[request.param]
    problem = load_problem(None, seeds=SEEDS, duration=DURATION, **kw)
    problem.warmup = "2s" if SLOW else "1s"
    out = tmp_path_factory.mktemp(request.param)
    setup = prepare(scenario, problem, out)
    return request.param, setup, grid(setup, jobs=2)  # the grid on a pool of 2 (CI's cores)


def test_search_matches_the_grid_with_a_quarter_of_its_runs(cell) -> None:
    name, setup, g = cell
    lead = setup.problem.objectives[0]
    best = g.recommended
    assert best is not None and g.feasible and g.runs_used == len(setup.catalogue.candidates) * len(SEEDS)
    setup.problem.budget_runs = g.runs_used // 4
    a = search(setup)
    assert a.runs_used <= g.runs_used // 4
    assert a.recommended is not None and a.feasible
    # Judged on the grid's own runs of the configuration the search chose (the same seeds).
    chosen = g.of(a.recommended.candidate)
    assert chosen is not None
    from airsched.stats import mean_ci

    _n, m_best, _s, half = mean_ci(best.values[lead.metric.name])
    _n, m, _s, half_chosen = mean_ci(chosen.values[lead.metric.name])
    # At least as good: equal, better, or statistically tied (the difference within either's
    # 95 % interval: in mixed-12, FQ-MAC 44.5 +- 2.8 and the airtime schedulers 41.3 +- 5.5
    # Mbit/s since issue 25's TCP receiver).
    tied = abs(m - m_best) <= max(half, half_chosen)
    assert not lead.better(m_best, m) or tied, (name, a.recommended.candidate.name, m, m_best, half, half_chosen)
    # The search's verdict on its choice is the grid's (the same runs, from the cache).
    assert a.recommended.values == chosen.values
    assert a.runs_cached == a.runs_used


def test_recommendations_agree_with_the_papers(cell) -> None:
    name, setup, g = cell
    rec = dict(g.recommended.candidate.labels)
    if name == "hoiland":
        # Fairness first: the airtime scheduler (Hoiland-Jorgensen et al., "Ending the Anomaly").
        assert rec["mac"] in ("ath9k-airtime", "mac80211-airtime"), rec
    elif name == "anomaly":
        # Latency first: not a deep FIFO (the current 1000-packet pfifo, or any FIFO of 100+).
        deep = rec["qdisc"] in (CURRENT, "pfifo", "pfifo_fast") and rec["txqueuelen"] in (CURRENT, "100", "1000")
        assert not deep, rec
        cur = g.of(setup.catalogue.current)
        assert cur is not None and cur.mean("ping_p99_ms") > 10 * g.recommended.mean("ping_p99_ms")
    else:
        # Goodput first: an airtime scheduler, or a configuration statistically tied with the
        # best of them. Since issue 25's TCP receiver (one ACK per A-MPDU), FQ-MAC and the
        # airtime schedulers are tied on mixed-12's total goodput in the test's 6 x 4 s runs
        # (44.5 +- 2.8 against 41.3 +- 5.5 Mbit/s).
        if rec["mac"] not in ("ath9k-airtime", "mac80211-airtime"):
            lead = setup.problem.objectives[0].metric.name
            from airsched.stats import mean_ci

            airtime = [e for e in g.evaluations if dict(e.candidate.labels).get("mac") in ("ath9k-airtime", "mac80211-airtime")
                       and e.values.get(lead)]
            assert airtime, rec
            _n, m_rec, _s, h_rec = mean_ci(g.recommended.values[lead])
            _n, m_air, _s, h_air = max((mean_ci(e.values[lead]) for e in airtime), key=lambda t: t[1])
            assert abs(m_rec - m_air) <= max(h_rec, h_air), (rec, m_rec, h_rec, m_air, h_air)


def test_same_objective_seed_and_budget_give_the_same_recommendation(tmp_path: Path) -> None:
    scenario, kw = CELLS["hoiland"]
    picks = []
    for i in range(2):
        problem = load_problem(None, seeds=[1, 2, 3], duration="3s", budget="12", seed=5, **kw)
        problem.warmup = "1s"
        a = search(prepare(scenario, problem, tmp_path / f"fresh{i}"))  # from nothing each time
        picks.append((a.recommended.candidate.name, [e.candidate.name for e in a.evaluations], a.runs_used))
        assert a.runs_cached == 0
    assert picks[0] == picks[1]


# ----- the answer and the command line ----------------------------------------------------------


def test_advise_command_writes_the_answer(tmp_path: Path) -> None:
    out = tmp_path / "adv"
    cmd = [sys.executable, "-m", "airsched", "advise", str(SC / "anomaly.toml"), "--out", str(out), "--minimise", "ping_p99_ms",
           "-c", "total_goodput_mbps > 1.0", "--mix", "udp,ping", "--seeds", "1-3", "--duration", "3s", "--budget", "12"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for f in ("answer.md", "answer.json", "candidates.csv", "pareto.csv", "pareto.png", "stations.csv", "apply.sh", "report.html",
              "cell.toml", "sweep.json"):
        assert (out / f).exists(), f
    ans = json.loads((out / "answer.json").read_text())
    assert ans["runs"] <= 12 and ans["runs_cached"] == 0 and ans["feasible"]
    rec = ans["recommended"]
    assert "## Recommendation: " + rec in p.stdout and "| fast |" in p.stdout and "| slow |" in p.stdout
    script = (out / "apply.sh").read_text()
    assert subprocess.run(["sh", "-n", str(out / "apply.sh")]).returncode == 0
    for s in ans["settings"]:
        if s.startswith("ap.tc="):
            assert json.loads(s.split("=", 1)[1]).removeprefix("tc ") in script
    page = (out / "report.html").read_text()
    assert page.index('<section id="advise">') < page.index('<section id="sweep">') and "Pareto front" in page
    # A rerun reuses every run: the same answer from the cache.
    p2 = subprocess.run(cmd, capture_output=True, text=True)
    assert p2.returncode == 0, p2.stderr
    ans2 = json.loads((out / "answer.json").read_text())
    assert ans2["recommended"] == rec and ans2["runs_cached"] == ans2["runs"] == ans["runs"]
    # Bad input: one line naming what is wrong, exit 2.
    p3 = subprocess.run([*cmd[:7], "--maximise", "goodput_mbps[nobody]"], capture_output=True, text=True)
    assert p3.returncode == 2 and p3.stderr.count("\n") == 1 and "no station named 'nobody'" in p3.stderr


def test_racing_rule() -> None:
    """A configuration run on one seed is replicated only if it could still win: closer to the
    bounds than an incumbent that breaks them; within 10 % of a feasible incumbent's lead."""
    from airsched.advise.catalogue import Candidate
    from airsched.advise.search import Evaluation, _promising

    p = load_problem(None, maximise=["total_goodput_mbps"], constraints=["ping_p99_ms < 100"])

    def ev(goodput: float, p99: float) -> Evaluation:
        return Evaluation(Candidate((("x", str(goodput)),), ()), 0, [1], ["r"],
                          {"total_goodput_mbps": [goodput], "ping_p99_ms": [p99]})

    bad_incumbent = ev(30, 500)  # breaks the bound by 400 %
    assert _promising(p, ev(10, 300), bad_incumbent) and not _promising(p, ev(50, 600), bad_incumbent)
    good = ev(30, 50)
    assert _promising(p, ev(28, 105), good)  # 7 % below, 5 % over the bound: might still win
    assert not _promising(p, ev(26, 50), good) and not _promising(p, ev(40, 120), good)
    assert _promising(p, ev(1, math.inf), None)  # nothing to beat yet


def test_advise_an_imported_cell_end_to_end(tmp_path: Path) -> None:
    """From the iw fixture of a live AP to an exported recommendation."""
    from airsched.advise.answer import write_answer
    from airsched.iw import import_cell

    cell = tmp_path / "cell.toml"
    cell.write_text(import_cell("wlan0", str(ROOT / "tests" / "fixtures" / "iw" / "ht-ap-iw6.9")).text)
    problem = load_problem(None, maximise=["jain_airtime"], mix=["bulk", "ping"], seeds=[1, 2], duration="3s", budget="10")
    problem.warmup = "1s"
    setup = prepare(cell, problem, tmp_path / "adv")
    assert "weights" in setup.catalogue.axes  # sta4 has weight 512: equal weights are tried too
    a = search(setup)
    assert a.runs_used <= 10 and a.recommended is not None
    ans = write_answer(a)
    text = "\n".join(ans.lines)
    assert all(f"| sta{i} |" in text for i in range(1, 5))
    script = ans.files["apply.sh"].read_text()
    settings = dict(a.recommended.candidate.settings)
    if "ap.tc" in settings:  # the recommended root qdisc is what the script puts on wlan0
        assert settings["ap.tc"].split(" root ")[1] in script.split("batch_wlan0()")[1].split("}")[0]
    if dict(a.recommended.candidate.labels).get("weights", CURRENT) == CURRENT:  # sta4's weight kept
        assert "3c:22:fb:00:00:04" in script and "512" in script


@pytest.mark.parametrize("command", ["sweep", "advise"])
@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--jobs", "0"], "error: --jobs: must be at least 1, got 0\n"),
        (["--seeds", "3-1"], "error: --seeds: "),
        (["--executor", "ray"], "error: --executor: must be one of local, dask, got 'ray'\n"),
        (["--executor", "dask"], "error: --executor dask: needs Dask distributed (pip install 'airsched[cluster]')\n"),
    ],
)
def test_sweep_and_advise_check_their_run_options_alike(command, options, line, tmp_path: Path, monkeypatch) -> None:
    """Both commands hand runs to the sweep engine and refuse the same bad --jobs, --seeds and
    --executor with the same line, before anything runs (Dask made absent for the last case)."""
    from typer.testing import CliRunner

    from airsched import cli

    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` raises ImportError
    spec = ROOT / "sweeps" / "garroppo-1-1.toml" if command == "sweep" else SC / "anomaly.toml"
    args = [command, str(spec), "--out", str(tmp_path / "o"), *options]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(line) and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "o").exists()
