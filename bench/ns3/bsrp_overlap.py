#!/usr/bin/env python3
"""Reads an `ofdma_mixed --traceCol=1 --trace=1000000` output (bench/ns3/README.md) and counts,
for the BSRP Triggers a station's PPDU overlapped, how many were answered (HE TB PPDUs sent)
and how many of the answers the AP's PHY passed up, by when the overlapping PPDU ended: by the
time the answers were due (the Trigger's end plus SIFS), before their data field (48 us later),
or over it. Clean: BSRP Triggers no station PPDU overlapped.

    python3 bench/ns3/bsrp_overlap.py OUTPUT
"""
import collections
import sys


def main(path):
    stats = collections.Counter()
    cur = None

    def flush():
        if cur is None:
            return
        if not cur["cols"]:
            stats["clean"] += 1
            stats["clean, AP received an answer"] += cur["rx"] > 0
            return
        due = cur["t"] + cur["dur"] + 16
        late = max(start + dur for start, dur in cur["cols"])
        cat = "ended by due" if late <= due else ("ended before data" if late <= due + 48 else "over data")
        stats[(cat, "triggers")] += 1
        stats[(cat, "answered")] += cur["tbs"] > 0
        stats[(cat, "answers sent")] += cur["tbs"]
        stats[(cat, "answers the AP passed up")] += cur["rx"]

    for line in open(path):
        if line.startswith("tf "):
            flush()
            d = dict(x.split("=") for x in line.split()[1:7] if "=" in x)
            cur = dict(t=float(d["t"]), dur=float(d["dur"]), cols=[], tbs=0, rx=0) if d["type"] == "bsrp" else None
        elif line.startswith(("dlmu ", "ba ")):
            flush()
            cur = None
        elif cur is not None and line.startswith("col ") and "ap=bsrp" in line:
            d = dict(x.split("=") for x in line.split()[1:])
            cur["cols"].append((float(d["t"]) + float(d["off"]), float(d["dur"])))
        elif cur is not None and line.startswith("tb "):
            cur["tbs"] += 1
        elif cur is not None and line.startswith("rxq ") and "null=1" in line:
            cur["rx"] += 1
    flush()
    for k in sorted(stats, key=str):
        print(k, stats[k])


if __name__ == "__main__":
    main(sys.argv[1])
