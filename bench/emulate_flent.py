# SPDX-License-Identifier: Apache-2.0
"""flent through the live emulation (docs/emulation.md, "flent"), as root.

    python bench/emulate_flent.py rrul    [SECONDS] [--plot FILE]   4+4 TCP streams and pings
    python bench/emulate_flent.py tcp_nup [SECONDS] [--plot FILE]   2 TCP uploads and a ping

flent runs in the namespace of the Høiland testbed's first fast station, netperf's `netserver`
in the server's, and the emulated cell (scenarios/hoiland/tcp.toml with the airtime scheduler,
its simulated TCP downloads to the three stations running beside the real traffic) carries
everything between them. netperf is in Debian's non-free component (CI adds it, .ci/run); flent
comes from PyPI with the test extra. The result is flent's own data file (loadable by `flent -i`
and its GUI) and, with --plot, flent's plot of it. tests/python/test_emulate_flent.py runs the
short forms.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from airsched.emulate import emulate

ROOT = Path(__file__).resolve().parent.parent
HOILAND_TCP = ROOT / "scenarios" / "hoiland" / "tcp.toml"
#: netperf's control port: its connections carry no measured data.
NETPERF_PORT = 12865
#: flent's default delay before its streams start and after they end (`-l` excludes it).
FLENT_DELAY_S = 5


def flent_command() -> str | None:
    """flent's entry point: the one beside this Python (the venv's), else the PATH's."""
    here = Path(sys.executable).parent / "flent"
    return str(here) if here.exists() else shutil.which("flent")


def why_not() -> str | None:
    """Why the flent runs cannot happen on this machine (None when they can)."""
    if flent_command() is None:
        return "flent is not installed (pip install -e '.[test]')"
    if shutil.which("netserver") is None or shutil.which("netperf") is None:
        return "netperf is not installed (Debian non-free: .ci/run adds it as root)"
    return None


def run_flent(test: str, seconds: int, out_dir: Path, scenario: Path = HOILAND_TCP,
              station: str = "fast1", queueing: str = "airtime", delay: int = FLENT_DELAY_S) -> dict:
    """One flent ``test`` of ``seconds`` (its `-l`) from ``station`` to the server through an
    emulation of ``scenario``. Returns the data file, flent's series means, the emulation's
    delivered rate of the real TCP data streams over the streams' time, and its lag summary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    flent = flent_command()
    assert flent is not None, why_not()
    total = seconds + 2 * delay
    done: dict[str, object] = {}
    server_ip = ""

    def ready(nodes):
        nonlocal server_ip
        srv = nodes[0]
        server_ip = srv.ip
        sta = next(n for n in nodes if n.name == station)

        def go():
            server = subprocess.Popen(["ip", "netns", "exec", srv.netns, "netserver", "-D", "-4"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(0.5)
                params = ["--test-parameter", "upload_streams=2"] if test == "tcp_nup" else []
                p = subprocess.run(
                    ["ip", "netns", "exec", sta.netns, flent, test, "-H", srv.ip, "-l", str(seconds), "-d", str(delay),
                     "-D", str(out_dir), "-t", f"airsched emulation, {scenario.stem}, {queueing}", *params],
                    capture_output=True, text=True, env={**os.environ, "HOME": str(out_dir)},
                )
                done["rc"], done["log"] = p.returncode, p.stdout[-2000:] + p.stderr[-2000:]
            finally:
                server.terminate()
                server.wait(timeout=5)

        t = threading.Thread(target=go, daemon=True)
        done["thread"] = t
        t.start()

    res = emulate(scenario, duration=f"{total + 4}s", prefix="air-flent-", on_ready=ready, flows_per_pair=32,
                  overrides=[f'ap.queueing="{queueing}"', 'run.warmup="0s"'])
    thread = done.get("thread")
    if isinstance(thread, threading.Thread):
        thread.join(timeout=30)
    files = sorted(out_dir.glob(f"{test}-*.flent.gz"), key=lambda p: p.stat().st_mtime)
    if done.get("rc") != 0 or not files:
        raise RuntimeError(f"flent {test} failed (rc {done.get('rc')}): {done.get('log')}")
    from flent import resultset

    data = resultset.load(str(files[-1]))
    step = float(data.meta("STEP_SIZE"))
    means, volumes = {}, {}
    for name in data.series_names:
        values = [v for v in data.series(name) if v is not None]
        means[name] = sum(values) / len(values) if values else float("nan")
        volumes[name] = sum(values) * step  # Mbit, for the throughput series
    window_s = float(res.summary["measured_seconds"])
    up = down = 0.0
    for _, f in res.flows.iterrows():
        name = str(f["name"])
        if not name.startswith("tcp ") or f":{NETPERF_PORT}" in name:
            continue
        mbit = float(f["goodput_mbps"]) * window_s  # what the cell delivered, Mbit
        if name.split(" ")[1].startswith(f"{server_ip}:"):
            down += mbit
        else:
            up += mbit
    return {
        "file": str(files[-1]),
        "flent": means,
        # flent's volume of a throughput series: its samples times the step (netperf's interim
        # reports integrated), against the bytes the emulation delivered for the data
        # connections (netperf's control connections left out), both in Mbit.
        "flent_mbit": volumes,
        "emulate_up_mbit": up,
        "emulate_down_mbit": down,
        "lag": {k: v for k, v in res.summary.items() if str(k).startswith("lag_")},
    }


def plot(data_file: str, out: Path, plot_name: str) -> None:
    """flent's own plot ``plot_name`` of ``data_file`` into ``out`` (PNG)."""
    flent = flent_command()
    assert flent is not None
    subprocess.run([flent, "-i", data_file, "-p", plot_name, "-o", str(out)], check=True,
                   capture_output=True, text=True)


def _main() -> None:
    test = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 30
    r = run_flent(test, seconds, Path("/tmp/airsched-flent"))
    print(json.dumps(r, indent=1))
    if "--plot" in sys.argv:
        plot(r["file"], Path(sys.argv[sys.argv.index("--plot") + 1]), "all_scaled" if test == "rrul" else "totals")


if __name__ == "__main__":
    _main()
