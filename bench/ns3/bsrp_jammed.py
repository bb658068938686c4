#!/usr/bin/env python3
"""The BSRP Triggers a station's PPDU overlaps, from the timeline of ofdma_mixed.cc with
ofdma_mixed_timeline.patch (--tl=1; docs/model-ofdma.md, "The BSRP answers under a station's
PPDU"). Per run: the BSRP Triggers after warm-up; those that a station's single-user PPDU started
with, split by when that PPDU ends against the QoS Null answers (SIFS after the Trigger, data field
after the 48-us HE TB preamble): before the answers' data or over it; per class how many stations
answered and the AP's CW at its next frame (15: the exchange succeeded, 31: it failed,
`TransmissionFailed`); and for the answers with a non-zero Queue Size, whether the AP's stored
report at its next Trigger equals it (stations with no report in between).

    python3 bench/ns3/bsrp_jammed.py run1.txt run2.txt ...
"""
import collections
import sys


def kv(line):
    return dict(t.split("=", 1) for t in line.split() if "=" in t)


def run(path):
    ev = []
    for line in open(path):
        w = line.split()
        if not w or w[0] not in ("AP", "STA"):
            continue
        d = kv(line)
        if float(d["t"]) >= 1e6:
            ev.append((float(d["t"]), w, d))
    ev.sort(key=lambda e: e[0])
    classes = collections.Counter()
    stored = collections.Counter()
    for i, (t, w, d) in enumerate(ev):
        if not (w[0] == "AP" and w[4] == "bsrp"):
            continue
        tf = float(d["dur"])
        col = [e for e in ev[max(0, i - 5) : i + 8] if e[1][0] == "STA" and e[2]["tb"] == "0" and abs(e[0] - t) < 1]
        ans = [e for e in ev[i + 1 : i + 10] if e[1][0] == "STA" and e[2]["tb"] == "1" and 0 < e[0] - t < tf + 30]
        if not col:
            kind = "alone"
        else:
            end = max(c[0] + float(c[2]["dur"]) for c in col)
            kind = "overlap_before_data" if end <= t + tf + 16 + 48 else "overlap_over_data"
        nxt_ap = next((e for e in ev[i + 1 :] if e[1][0] == "AP"), None)
        cw = int(nxt_ap[2]["cw"]) if nxt_ap else -1
        classes[(kind, len(ans), cw)] += 1
        reported = set()
        for e in ev[i + 1 :]:
            if e[1][0] == "STA" and e[2]["tb"] == "0" and int(e[2]["qs"]) >= 0:
                reported.add(int(e[2]["sta"]))
            if e[1][0] == "AP" and e[1][4] in ("basic", "bsrp"):
                st = {int(u.split(":")[0]): int(u.split(":")[1]) for u in e[1][6:]}
                for a in ans:
                    s, q = int(a[2]["sta"]), int(a[2]["qs"])
                    if s in st and s not in reported and q > 0:
                        stored[(kind, st[s] == q)] += 1
                break
    return classes, stored


if __name__ == "__main__":
    total = collections.Counter()
    for p in sys.argv[1:]:
        c, s = run(p)
        total.update(c)
        bsrp = sum(c.values())
        jam = sum(v for (k, n, _), v in c.items() if k == "overlap_over_data" and n > 0)
        ok = sum(v for (k, n, _), v in c.items() if k == "overlap_before_data" and n > 0)
        print(f"{p}: BSRP {bsrp} answered_over_data {jam} answered_before_data {ok} stored {dict(s)}")
    for k, v in sorted(total.items()):
        print("class (overlap, answers, AP CW next)", k, v)
