# SPDX-License-Identifier: Apache-2.0
"""Peak memory (maximum resident set size) of a long run of every shipped scenario.

    python bench/peak_memory.py [--duration 1h] [--airsched .venv/bin/airsched] [--out-too]

Runs ``airsched run SCENARIO --set run.duration=DURATION`` for each scenario under
``scenarios/`` as a child process and reads the child's peak RSS from the kernel's rusage
(``wait4``), so the figure covers Python, the native core and everything they allocate. With
``--out-too`` each scenario runs a second time with ``--out`` (Parquet tables and summary
written), the heavier case. Prints a Markdown table for bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def peak_rss(cmd: list[str]) -> tuple[int, float, float]:
    """(exit status, peak RSS in MB, wall seconds) of ``cmd`` run to its end."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(f"  {' '.join(cmd)}: exit {code}: {stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return code, usage.ru_maxrss / 1024, wall  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", default="3600s")
    parser.add_argument("--airsched", default=str(ROOT / ".venv" / "bin" / "airsched"))
    parser.add_argument("--out-too", action="store_true", help="also run each with --out (tables written)")
    parser.add_argument("scenarios", nargs="*", help="scenario files (default: every shipped one)")
    args = parser.parse_args()
    files = [Path(s) for s in args.scenarios] or sorted((ROOT / "scenarios").rglob("*.toml"))
    header = "| scenario | wall s | peak MB | peak MB with --out |" if args.out_too else "| scenario | wall s | peak MB |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for path in files:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        base = [args.airsched, "run", str(path), "--set", f"run.duration={args.duration!r}".replace("'", '"')]
        code, mb, wall = peak_rss(base)
        cells = [str(rel), f"{wall:.1f}" if code == 0 else f"exit {code}", f"{mb:.0f}"]
        if args.out_too:
            with tempfile.TemporaryDirectory() as tmp:
                code2, mb2, _ = peak_rss([*base, "--out", tmp])
            cells.append(f"{mb2:.0f}" if code2 == 0 else f"exit {code2}")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
