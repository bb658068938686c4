# SPDX-License-Identifier: Apache-2.0
"""The full comparison of docs/advise.md: on the three cells of tests/python/test_advise.py, the
exhaustive grid against the search with a quarter of the grid's runs, for several optimiser
seeds. Not a test (pytest does not collect it); run it from the repository's root:

    python tests/python/advise_vs_grid.py SEEDS DURATION OPTIMISER_SEEDS [OUT]
    python tests/python/advise_vs_grid.py 10 10s 10 /tmp/advise-full

It prints one JSON line per cell and writes OUT/result-SEEDS-DURATION.json with every
configuration's means and intervals.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    from test_advise import CELLS

    from airsched.advise import grid, load_problem, prepare, search
    from airsched.stats import mean_ci

    seeds, duration, nopt = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    out_dir = sys.argv[4] if len(sys.argv) > 4 else "advise-full"
    res = {}
    for name, (scenario, kw) in CELLS.items():
        p = load_problem(None, seeds=list(range(1, seeds + 1)), duration=duration, **kw)
        p.warmup = "2s"
        s = prepare(scenario, p, f"{out_dir}/{name}-{seeds}-{duration}")
        t = time.time()
        g = grid(s, jobs=2)
        grid_s = time.time() - t
        lead = p.objectives[0]
        ln = lead.metric.name
        best = g.recommended
        _n, mb, _s, hb = mean_ci(best.values[ln])
        table = []
        for e in sorted(g.complete, key=lambda e: (-e.mean(ln) if lead.direction == "maximise" else e.mean(ln))):
            table.append({"configuration": e.candidate.name, **{m.name: mean_ci(e.values[m.name])[1::2] for m in p.metrics}})
        out = {"configurations": len(s.catalogue.candidates), "grid_runs": g.runs_used, "grid_s": grid_s,
               "best": best.candidate.name, "best_mean": mb, "best_half": hb, "search": [], "table": table}
        for seed in range(1, nopt + 1):
            p.seed, p.budget_runs = seed, g.runs_used // 4
            a = search(s)
            m = g.of(a.recommended.candidate).mean(ln)
            ok = (not lead.better(mb, m)) or abs(m - mb) <= hb
            out["search"].append({"seed": seed, "runs": a.runs_used, "tried": len(a.evaluations),
                                  "recommended": a.recommended.candidate.name, "mean": m, "as_good": ok})
        res[name] = out
        print(name, json.dumps({k: v for k, v in out.items() if k != "table"}, default=str), flush=True)
    with open(f"{out_dir}/result-{seeds}-{duration}.json", "w") as f:
        json.dump(res, f, indent=1, default=str)


if __name__ == "__main__":  # the local pool spawns workers: they must not run this again
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    main()
