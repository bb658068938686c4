"""Speed benchmark of the foundation scenarios (S1, S2, S4 with N = 5, 20, 50).

Usage: python bench/run_bench.py [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def s1(slow_rate: str = "11Mbps") -> str:
    return f"""
[run]
duration = "60s"
warmup = "0s"
[[station]]
name = "sta1"
rate = "11Mbps"
[[station]]
name = "sta2"
rate = "{slow_rate}"
[[flow]]
name = "down1"
src = "server"
dst = "sta1"
rate = "6Mbit"
size = 1024
[[flow]]
name = "down2"
src = "server"
dst = "sta2"
rate = "6Mbit"
size = 1024
"""


def s4(n: int) -> str:
    text = '[run]\nduration = "60s"\nwarmup = "0s"\n'
    for i in range(n):
        text += f'[[station]]\nname = "sta{i + 1}"\nrate = "11Mbps"\n'
    for i in range(n):
        text += (
            f'[[flow]]\nname = "up{i + 1}"\nsrc = "sta{i + 1}"\ndst = "server"\n'
            'rate = "saturate"\nsize = 1472\n'
        )
    return text


def hoiland(traffic: str) -> str:
    """The testbed scenario of Høiland-Jørgensen et al. (802.11n, 30 s measured) for ``traffic``;
    the benchmark runs it under the airtime scheduler (:data:`OVERRIDES`)."""
    return (Path(__file__).resolve().parent.parent / "scenarios" / "hoiland" / f"{traffic}.toml").read_text()


SCENARIOS = {
    "S1": s1(),
    "S2": s1("2Mbps"),
    "S4-N5": s4(5),
    "S4-N20": s4(20),
    "S4-N50": s4(50),
    # 802.11n, mac80211 queues and the airtime scheduler: 3 x 200 Mbit/s UDP floods into FQ-MAC
    # (1.6 M packets offered, 1.4 M dropped by FQ-MAC) and three TCP downloads.
    "H-UDP-ATF": hoiland("udp"),
    "H-TCP-ATF": hoiland("tcp"),
}
#: Overrides a benchmark scenario runs under.
OVERRIDES = {"H-UDP-ATF": {"ap.queueing": "airtime"}, "H-TCP-ATF": {"ap.queueing": "airtime"}}


def main() -> int:
    import airsched  # here, so that callgrind_table.py can read SCENARIOS without the package

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for name, text in SCENARIOS.items():
        best = None
        for _ in range(args.repeat):
            r = airsched.run(text=text, overrides=OVERRIDES.get(name))
            s = r.summary
            if best is None or s["wall_seconds"] < best["wall_seconds"]:
                best = s
        wall = best["wall_seconds"]
        rows.append(
            {
                "scenario": name,
                "sim_seconds": best["sim_seconds"],
                "wall_seconds": wall,
                "events": best["events"],
                "frames": best["frames"],
                "sim_seconds_per_wall_second": best["sim_seconds"] / wall,
                "frames_per_wall_second": best["frames"] / wall,
                "events_per_wall_second": best["events"] / wall,
            }
        )
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        print(f"{'scenario':8} {'wall s':>8} {'sim s/wall s':>13} {'frames/wall s':>14} {'events/wall s':>14}")
        for r in rows:
            print(
                f"{r['scenario']:8} {r['wall_seconds']:8.4f} {r['sim_seconds_per_wall_second']:13.0f} "
                f"{r['frames_per_wall_second']:14.0f} {r['events_per_wall_second']:14.0f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
