"""Instruction counts of the benchmark scenarios under callgrind (load-independent), per event
and per delivered packet, as the tables of bench/README.md give them.

Usage: python bench/callgrind_table.py [--quick target/release/examples/quick] [--only S1,H-UDP-ATF]

Build the example first with the default release profile (`cargo build --release --example
quick`): the instruction counts depend on the profile. Each scenario runs once under
`valgrind --tool=callgrind` (whole process, parsing included); the table gives the
instructions, the events processed, the packets delivered (the flows' `rx`), and the
instructions per event and per delivered packet.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import OVERRIDES, SCENARIOS  # noqa: E402

#: The 60-station 802.11n cell with FQ-MAC and the airtime scheduler, and the 20-station cell
#: with cake on the AP's wlan0 (60 s simulated each).
EXTRA = {
    "CELL-60": (HERE / "cell-60-stations.toml").read_text(),
    "CAKE-20": (HERE / "cell-20-cake.toml").read_text(),
}


def with_overrides(name: str, text: str) -> str:
    """The scenario text with its benchmark overrides written in (the quick example takes no
    overrides): only `ap.queueing`, which the Høiland files set in their [ap] table."""
    for key, value in OVERRIDES.get(name, {}).items():
        assert key == "ap.queueing", key
        text = re.sub(r'(?m)^queueing = ".*"$', f'queueing = "{value}"', text, count=1)
    return text


def measure(quick: str, name: str, text: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        scn = Path(tmp) / f"{name}.toml"
        scn.write_text(with_overrides(name, text))
        out = Path(tmp) / "callgrind.out"
        env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", quick, str(scn)],
            capture_output=True, text=True, env=env, check=True,
        )
    instructions = int(re.search(r"Collected : (\d+)", proc.stderr).group(1))
    events = int(re.search(r"events (\d+)", proc.stdout).group(1))
    delivered = sum(int(m) for m in re.findall(r" rx (\d+) ", proc.stdout))
    return {"instructions": instructions, "events": events, "delivered": delivered}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", default=str(HERE.parent / "target" / "release" / "examples" / "quick"))
    ap.add_argument("--only", default="", help="comma-separated scenario ids")
    args = ap.parse_args()
    scenarios = {**SCENARIOS, **EXTRA}
    names = [n for n in args.only.split(",") if n] or list(scenarios)
    print(f"{'scenario':10} {'instructions':>14} {'events':>10} {'delivered':>10} {'instr/event':>12} {'instr/pkt':>10}")
    for name in names:
        r = measure(args.quick, name, scenarios[name])
        print(
            f"{name:10} {r['instructions']:14d} {r['events']:10d} {r['delivered']:10d} "
            f"{r['instructions'] / r['events']:12.0f} {r['instructions'] / max(r['delivered'], 1):10.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
