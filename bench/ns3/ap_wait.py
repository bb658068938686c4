"""The AP's access after its AccessReqInterval timer, from a timeline (issue 24, docs/model-ofdma.md
"Where the OFDMA half-load delay goes").

ns-3: the output of `bench/ns3/ofdma_ul ... --trace=100000 --traceSu=1` (lines `tf`, `tb`, `ba`);
a Basic Trigger's start is the AP's access grant, the exchange ends with the Multi-STA BlockAck
(an unanswered Trigger: its end plus 45 us, about TbPpduTimeout). airsched: lines `GRANT <ns>`
(the scheduler's grant, `ul_restart_timer`) and `XEND <ns>` (end of the busy period of a Basic
Trigger exchange, `ul_complete`) printed by a throw-away build (not in the code).
The timer restarts at each grant (ns-3 `DelayAccessReqUponAccess`); for each exchange inside
[1 s, 3 s] this prints the exchange's length, the gap from its end to the timer's first expiry
after it, and the wait from that expiry to the next grant.

    python3 bench/ns3/ap_wait.py ns3_trace.txt airsched_trace.txt  (files named *ns3* are ns-3's)
"""

import statistics
import sys

TB_TIMEOUT_US = 16 + 9 + 20  # SIFS + slot + PHY-RXSTART delay: an unanswered Trigger's end


def fields(line):
    f = dict(x.split("=") for x in line.split()[1:3])
    return float(f["t"]), float(f["dur"])


def ns3_exchanges(path):
    ev = []
    for line in open(path):
        if line.startswith("tf ") and "type=basic" in line:
            t, d = fields(line)
            ev.append([t, t + d + TB_TIMEOUT_US])
        elif line.startswith("tb ") and ev:
            t, d = fields(line)
            ev[-1][1] = max(ev[-1][1], t + d + TB_TIMEOUT_US)
        elif line.startswith("ba ") and ev:
            t, d = fields(line)
            ev[-1][1] = t + d
    return ev


def airsched_exchanges(path):
    ev = []
    for line in open(path):
        p = line.split()
        if p and p[0] == "GRANT":
            ev.append([int(p[1]) / 1e3, None])
        elif p and p[0] == "XEND" and ev:
            ev[-1][1] = int(p[1]) / 1e3
    return [e for e in ev if e[1] is not None]


def report(ev, name, interval=1000.0):
    gap, wait, length = [], [], []
    for (g, end), (g2, _) in zip(ev, ev[1:]):
        if g < 1e6 or g2 > 3e6:
            continue
        k = 1
        while g + k * interval <= end:
            k += 1
        expiry = g + k * interval
        gap.append(expiry - end)
        wait.append(g2 - expiry)
        length.append(end - g)
    n = len(wait)
    bins = [0, 50, 200, 500, 1000, float("inf")]
    shares = [sum(bins[i] < w <= bins[i + 1] or (i == 0 and w <= 0) for w in wait) / n for i in range(5)]
    print(
        f"{name}: {n} exchanges, grant to end {statistics.mean(length):.0f} us, end to first expiry "
        f"{statistics.mean(gap):.0f} us, expiry to next grant {statistics.mean(wait):.0f} us; wait "
        "<=50/50-200/200-500/500-1000/>1000 us: " + " ".join(f"{100 * s:.0f}%" for s in shares)
    )


for p in sys.argv[1:]:
    report(ns3_exchanges(p) if "ns3" in p else airsched_exchanges(p), p)
