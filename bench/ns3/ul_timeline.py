"""The uplink OFDMA half-load timeline, read the same way from ns-3 and from airsched (issue 24,
docs/model-ofdma.md "The buffer status, the Trigger's length and the collided Trigger").

ns-3: the output of

    bench/ns3/ofdma_ul --n=4 --rate=30.0000 --duration=3 --warmup=1 --ownGi=1 --explicitBar=0 \
        --seed=S --trace=100000 --traceSu=1 --traceBsr=1 > ns3.txt

airsched: the standard error of a throw-away build with bench/ns3/airsched_timeline.patch applied
(`git apply`; it prints the same `tf`, `tb`, `ba`, `su` and `bsr` lines when AIRSCHED_TIMELINE is
set), running the like-for-like cell of tests/ofdma_ul_ns3.rs:

    AIRSCHED_TIMELINE=1 target/release/examples/quick cell.toml 2> airsched.txt

    python3 bench/ns3/ul_timeline.py ns3.txt airsched.txt [--rate 30]

Prints, per file, over the measured window:
- Basic Triggers, the share answered (an HE TB PPDU followed), and the runs of unanswered
  (collided) Triggers before an answered one;
- the packets carried by HE TB PPDUs and by single-user PPDUs and their mean delay to the end of
  that PPDU, reconstructed from the timeline: every station's 1472-byte datagrams arrive at a
  constant rate from 0.1 s + 0.1 ms x its index, leave in order, a single-user PPDU that overlaps
  another PPDU or a Trigger carries nothing, and the packets a station had sent before the window
  are the count that makes its smallest backlog after a PPDU zero (on ns-3's run 1 this gives
  its own `delay_by_path` to 0.002 ms);
- the intervals between answered Triggers (share per 0.5-ms bin from 1 ms, and the mean residual
  wait E[I^2]/2E[I]) and the HE TB PPDU durations;
- after an unanswered Trigger that overlapped a station's PPDU: who sends next;
- with `bsr` lines: per solicited station, the Queue Size the AP stored (x 256) against the bytes
  the station held when the Trigger went out.
"""

import argparse
import bisect
import collections
import statistics

DATAGRAM_BITS = 1472 * 8
BLOCK_ACK_US = 16 + 40  # SIFS + the AP's BlockAck (56 octets at 24 Mb/s) after a single-user PPDU


def fields(line):
    return dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)


def load(path):
    ev = []  # (start, end, kind, station, mpdus, line)
    bsr = []
    rank_to_index = {}
    rate = None
    for line in open(path):
        kind = line.split(" ", 1)[0]
        if kind in ("tf", "tb", "ba", "su"):
            f = fields(line)
            t, d = float(f["t"]), float(f["dur"])
            sta = int(f["sta"]) if "sta" in f else -1
            ev.append((t, t + d, kind, sta, int(f.get("mpdus", 0)), line))
        elif kind == "bsr":
            bsr.append([tuple(int(x) for x in u.split(":")) for u in line.split()[3:]])
        elif line.startswith("sta="):
            f = dict(x.split("=") for x in line.split()[:2])
            rank_to_index[int(f["rank"])] = int(f["sta"])
        elif line.startswith("n="):
            rate = float(fields("x " + line)["rate"])
    ev.sort(key=lambda e: (e[0], e[2] != "tf"))
    return ev, bsr, rank_to_index, rate


def exchanges(ev):
    """Basic Triggers: [start, answered]."""
    out = []
    for t, _, kind, *_ in ev:
        if kind == "tf":
            out.append([t, False])
        elif kind == "tb" and out:
            out[-1][1] = True
    return out


def collided_su(ev):
    """Single-user PPDUs that overlap another single-user PPDU or a Trigger."""
    su = [e for e in ev if e[2] == "su"]
    tfs = [(e[0], e[1]) for e in ev if e[2] == "tf"]
    out = set()
    for i, (a, b, _, s, _, _) in enumerate(su):
        hit = (i > 0 and su[i - 1][1] > a) or (i + 1 < len(su) and su[i + 1][0] < b)
        j = bisect.bisect_left(tfs, (a - 200, 0))  # a Trigger lasts at most 200 us
        hit = hit or any(x < b and y > a for x, y in tfs[j : j + 3])
        if hit:
            out.add((a, s))
    return out


def delay_by_path(ev, coll, rank_to_index, rate_mbps):
    period = DATAGRAM_BITS / rate_mbps  # us
    per = collections.defaultdict(list)
    for a, b, kind, s, m, _ in ev:
        if kind == "tb" or (kind == "su" and (a, s) not in coll):
            per[s].append((b, m, kind))
    res = collections.defaultdict(lambda: [0, 0.0])
    for s, ppdus in per.items():
        t0 = 1e5 + rank_to_index.get(s, s) * 100

        def arrived(t, t0=t0):
            return int((t - t0) // period) + 1

        sent = 0
        before = None
        for end, m, _ in ppdus:
            sent += m
            backlog = arrived(end) - sent
            before = backlog if before is None else min(before, backlog)
        sent = 0
        for end, m, kind in ppdus:
            for j in range(m):
                res[kind][0] += 1
                res[kind][1] += end - (t0 + (before + sent + j) * period)
            sent += m
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rate", type=float, help="offered Mb/s per station (ns-3's output names it)")
    args = ap.parse_args()
    for path in args.files:
        ev, bsr, ranks, rate = load(path)
        rate = rate or args.rate
        ex = exchanges(ev)
        answered = [t for t, a in ex if a]
        runs = collections.Counter()
        run = 0
        for _, a in ex:
            if a:
                runs[min(run, 3)] += 1
                run = 0
            else:
                run += 1
        n_runs = sum(runs.values())
        print(f"== {path}")
        print(
            f"Basic Triggers {len(ex)}, answered {len(answered)} ({len(answered) / len(ex):.0%}); "
            "unanswered ones before an answered one: "
            + ", ".join(f"{k}{'+' if k == 3 else ''}: {v / n_runs:.1%}" for k, v in sorted(runs.items()))
        )
        coll = collided_su(ev)
        if rate:
            res = delay_by_path(ev, coll, ranks, rate)
            total = sum(v[0] for v in res.values())
            print(
                "delay to PPDU end, ms: "
                + ", ".join(f"{k} {v[0]} packets {v[1] / v[0] / 1e3:.3f}" for k, v in sorted(res.items()))
                + f", all {sum(v[1] for v in res.values()) / total / 1e3:.3f}"
            )
        gaps = [b - a for a, b in zip(answered, answered[1:])]
        bins = collections.Counter(min(int(g // 500) * 0.5, 5.0) for g in gaps)
        print(
            f"answered-Trigger intervals: mean {statistics.mean(gaps):.0f} us, residual "
            f"{sum(g * g for g in gaps) / 2 / sum(gaps):.0f} us; ms bins "
            + " ".join(f"{k:.1f}:{v / len(gaps):.2f}" for k, v in sorted(bins.items()))
        )
        tbs = []
        last = None
        for e in ev:
            if e[2] == "tf":
                last = e
            elif e[2] == "tb" and last is not None:
                tbs.append(e[1] - e[0])
                last = None
        edges = [500, 1000, 1500, 2000, 3000, float("inf")]
        tb_bins = collections.Counter(next(x for x in edges if d < x) for d in tbs)
        print(
            f"HE TB PPDUs {len(tbs)}, mean {statistics.mean(tbs):.0f} us; below "
            + " ".join(f"{x:g}:{tb_bins[x] / len(tbs):.2f}" for x in edges)
        )
        after = collections.Counter()
        for i, e in enumerate(ev):
            if e[2] != "tf" or any(x[2] == "tb" for x in ev[i + 1 : i + 3]):
                continue
            with_su = {x[3] for x in ev[i + 1 : i + 8] if x[2] == "su" and abs(x[0] - e[0]) < 0.5}
            if not with_su:
                continue
            nxt = next((x for x in ev[i + 1 :] if x[0] > e[0] + 0.5), None)
            if nxt is None:
                continue
            after["a Trigger" if nxt[2] == "tf" else ("the colliding station" if nxt[3] in with_su else "another station")] += 1
        n_after = sum(after.values())
        print(
            f"after {n_after} unanswered Triggers that overlapped a station PPDU, the next PPDU is from: "
            + ", ".join(f"{k} {v / n_after:.0%}" for k, v in after.most_common())
        )
        if bsr:
            users = [u for b in bsr for u in b if u[1] != 255]
            stored = statistics.mean(u[1] * 256 for u in users)
            held = statistics.mean(u[2] for u in users)
            maxes = [max(u[1] for u in b if u[1] != 255) * 256 for b in bsr if any(u[1] != 255 for u in b)]
            print(
                f"buffer status at {len(bsr)} Basic Triggers: stored {stored:.0f} B, held {held:.0f} B "
                f"(stored - held {stored - held:+.0f} B), largest stored per Trigger {statistics.mean(maxes):.0f} B, "
                f"stations holding nothing {sum(1 for u in users if u[2] == 0) / len(users):.0%}"
            )


if __name__ == "__main__":
    main()
