#!/usr/bin/env python3
"""Basic Triggers of saturated uplink runs (issue 24, docs/model-ofdma.md "The saturated AP").

    python3 bench/ns3/sat_triggers.py SEED=TRACE ...

Each TRACE is the output of `bench/ns3/ofdma_ul --n=18 --rate=38.8889 --duration=3 --warmup=1
--ownGi=1 --explicitBar=0 --trace=100000 --traceSu=1 --seed=SEED` (every Trigger, HE TB PPDU,
Multi-STA BlockAck, single-user station PPDU and, with --traceSu, the AP's CW changes after the
warm-up). Prints per run: the Basic Triggers, those answered (a Multi-STA BlockAck followed), the
AP's CW at each Trigger, and then over all runs how often the AP's Trigger is the next busy
period after a station's lone PPDU (S), a collision of stations (Sc), an answered (T+) or an
unanswered (T-) Trigger, and how many of those Triggers were answered.
"""
import collections
import re
import sys


def events(path):
    ev, cw, cws = [], 15, collections.Counter()
    for line in open(path):
        m = re.search(r"t=([\d.]+)", line)
        if not m:
            continue
        t = float(m.group(1))
        if line.startswith("apcw "):
            cw = int(re.search(r"cw=(\d+)", line).group(1))
        elif line.startswith("tf ") and "type=basic" in line:
            ev.append((t, "tf"))
            cws[cw] += 1
        elif line.startswith("ba "):
            ev.append((t, "ba"))
        elif line.startswith("su "):
            if float(re.search(r"dur=([\d.]+)", line).group(1)) >= 100:  # not a response
                ev.append((t, "su"))
    return sorted(ev), cws


def busy_periods(ev):
    out = []  # [start, kind, frames]
    for t, k in ev:
        if k == "ba":
            if out and out[-1][1] == "T":
                out[-1][1] = "T+"
            continue
        if out and abs(t - out[-1][0]) < 1.0:
            out[-1][1] = "T" if k == "tf" else out[-1][1]
            out[-1][2] += 1
            continue
        out.append([t, "T" if k == "tf" else "S", 1])
    return ["T-" if k == "T" else ("Sc" if k == "S" and n > 1 else k) for _, k, n in out]


trans = collections.Counter()
print("# seed basic_triggers answered ap_cw_at_trigger")
for arg in sys.argv[1:]:
    seed, path = arg.split("=", 1)
    ev, cws = events(path)
    seq = busy_periods(ev)
    print(seed, seq.count("T+") + seq.count("T-"), seq.count("T+"), ",".join(f"{c}:{n}" for c, n in sorted(cws.items())))
    trans.update(zip(seq, seq[1:]))
for a in ["S", "Sc", "T+", "T-"]:
    tot = sum(v for (x, _), v in trans.items() if x == a)
    tp, tm = trans[(a, "T+")], trans[(a, "T-")]
    print(f"# after {a}: {tot} busy periods, the AP's Trigger next {tp + tm} ({(tp + tm) / max(tot, 1):.3f}), answered {tp}")
