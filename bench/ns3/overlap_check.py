"""Which overlapping PPDUs survived in an ns-3 uplink timeline (docs/model-ofdma.md, "A capture-free
reference: the stations at one point").

Reads the output of

    bench/ns3/ofdma_ul ... --trace=100000 --traceSu=1 --traceAck=1 [--colocated=1] [--su=1]

and prints, for the measured interval: the Basic Triggers a station's single-user PPDU overlapped
and how many of them were answered (an HE TB PPDU SIFS after the Trigger's end), the Triggers
nothing overlapped and how many of those were answered, and the single-user PPDUs that overlapped
any other PPDU (a station's, a Trigger, a response) with how many the AP acknowledged (an Ack or
BlockAck SIFS after the PPDU's end). On the 1-m circle some collided Triggers are answered
(stations capture them); with --colocated=1 none is, and no overlapped single-user PPDU is
acknowledged in either geometry.

    python3 bench/ns3/overlap_check.py TRACE...
"""

import bisect
import sys

SIFS_US = 16.0


def load(p):
    ev = []
    for line in open(p):
        w = line.split()
        if not w or w[0] not in ("tf", "tb", "ba", "su", "ack"):
            continue
        kv = dict(x.split("=", 1) for x in w[1:] if "=" in x)
        ev.append((w[0], float(kv["t"]), float(kv["dur"]), kv.get("sta"), kv.get("type")))
    return ev


for p in sys.argv[1:]:
    ev = load(p)
    sta_tx = [e for e in ev if e[0] in ("su", "tb")]
    su = [e for e in ev if e[0] == "su"]
    tfs = [e for e in ev if e[0] == "tf" and e[4] == "basic"]
    acks = sorted(e[1] for e in ev if e[0] == "ack")
    tbs = [e for e in ev if e[0] == "tb"]

    def overl(a, b):
        return a[1] < b[1] + b[2] and b[1] < a[1] + a[2]

    # Triggers overlapped by a station's single-user PPDU.
    coll_tf = ans = 0
    tb_after = 0
    clean_tf = clean_ans = 0
    for tf in tfs:
        hit = any(overl(tf, s) for s in su if abs(s[1] - tf[1]) < 6000)
        end = tf[1] + tf[2]
        answers = [b for b in tbs if end + SIFS_US - 1 <= b[1] <= end + SIFS_US + 1]
        if hit:
            coll_tf += 1
            ans += bool(answers)
            tb_after += len(answers)
        else:
            clean_tf += 1
            clean_ans += bool(answers)
    # Single-user PPDUs overlapping any other PPDU (station's or AP's Trigger).
    others = sorted(sta_tx + [e for e in ev if e[0] in ("tf", "ba", "ack")], key=lambda e: e[1])
    starts = [e[1] for e in others]
    ov = ov_ack = clean = clean_ack = 0
    for s in su:
        i = bisect.bisect_left(starts, s[1] - 6000)
        hit = False
        while i < len(others) and others[i][1] < s[1] + s[2]:
            o = others[i]
            if o is not s and overl(s, o):
                hit = True
                break
            i += 1
        end = s[1] + s[2]
        j = bisect.bisect_left(acks, end + SIFS_US - 1)
        acked = j < len(acks) and acks[j] <= end + SIFS_US + 1
        if hit:
            ov += 1
            ov_ack += acked
        else:
            clean += 1
            clean_ack += acked
    print(
        f"{p}: basic Triggers {len(tfs)}: overlapped by a station PPDU {coll_tf}, answered {ans} "
        f"({tb_after} HE TB PPDUs); not overlapped {clean_tf}, answered {clean_ans}. "
        f"Single-user PPDUs {len(su)}: overlapped {ov}, acknowledged {ov_ack}; "
        f"not overlapped {clean}, acknowledged {clean_ack}"
    )
