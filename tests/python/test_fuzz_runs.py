# SPDX-License-Identifier: Apache-2.0
"""Fuzzing the whole way from a scenario to its results (issue 12): every scenario that
validates must also *run* to its end, in bounded time, memory and events per simulated second,
and every one that does not gets one-line errors naming file:line:column and key.

Scenarios are drawn from a grammar of the keys that set rates, intervals, sizes, counts and
addresses, with values at and beyond every bound (``1ns``, ``4294967296Mbit``, ``nan``, duplicate
addresses, tc trees with extreme rates and limits). Each accepted case runs in a worker process
with an address-space limit (``MEMORY_LIMIT``) and a wall-clock limit (``CASE_SECONDS``); a panic,
a traceback, a hang or a run of more than ``EVENTS_PER_FLOW_SECOND`` events per simulated second
per flow fails the test.

``AIRSCHED_FUZZ_CASES`` sets the number of cases (default 3000 here, a bounded form for CI; the
long mode is e.g. ``AIRSCHED_FUZZ_CASES=40000``), ``AIRSCHED_FUZZ_SEED`` the seed of the draw.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import re
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import airsched

CASES = int(os.environ.get("AIRSCHED_FUZZ_CASES", "3000"))
SEED = int(os.environ.get("AIRSCHED_FUZZ_SEED", "12"))
#: Per accepted case: wall-clock seconds, and the worker's address-space limit.
CASE_SECONDS = 20.0
MEMORY_LIMIT = 3 << 30
#: The event budget of a run: per simulated second, per flow (plus one for beacons and samples).
EVENTS_PER_FLOW_SECOND = 4_000_000
#: Runs longer than this are only validated (the point is the bounds, not long runs).
RUN_AT_MOST_S = 2.0

ERROR_LINE = re.compile(r"^(<string>|<command line>):\d+:\d+: [^\n]*$")

#: Each list: values in bounds first, then the wild ones (at and beyond the bounds); a draw
#: takes a wild one with probability WILD, so most scenarios validate and run.
WILD = 0.12
DURATIONS = (["300ms", "1s", "1500ms", "2s"], ["100ms", "1ns", "0s", "1h", "400d", "10min", "-1s", "1.5"])
INTERVALS = (["1ms", "10ms", "50ms", "200ms"], ["1ns", "1us", "999us", "1s", "5s", "0s"])
RATES = (["saturate", "1kbit", "64kbit", "6mbit", "54mbit", "1.5mbit"],
         ["1bit", "1gbit", "10gbit", "10001mbit", "4294967296Mbit", "99999tbit", "0bit", "3mbps"])
SIZES = ([64, 500, 1470], [1, 2276, 2277, 100000, 0, -5])
SNRS = (["0", "12.5", "30", "\"5dB\"", "\"good\"", "\"very-bad\""], ["nan", "inf", "-inf", "-1000", "-20", "1000"])
WIRED_RATES = (["10mbit", "100mbit", "1kbit"], ["1bit", "999bit", "10gbit", "99999tbit"])
DELAYS = (["0s", "100us", "50ms"], ["1ns", "1s", "2s", "1h"])
BEACONS = (["1024us", "102.4ms", "1s"], ["1ns", "1ms", "67108ms", "67109ms"])
IPS = (["192.168.1.20", "192.168.1.21", "192.168.1.22", "10.0.0.9"], ["192.168.1.1", "192.168.1.2", "192.168.1.3", "10.0.0.1"])
TC_RATES = (["1mbit", "100mbit", "5mbit"], ["1bit", "8bit", "1kbit", "10gbit", "99999tbit"])
LIMITS = (["10", "100", "1000"], ["0", "1", "100000", "4294967295"])


def pick(r: random.Random, values: tuple[list, list]):  # noqa: ANN201
    sane, wild = values
    return r.choice(wild) if r.random() < WILD else r.choice(sane)


def tc_script(r: random.Random, dev: str) -> str:
    rate, ceil = pick(r, TC_RATES), pick(r, TC_RATES)
    limit = pick(r, LIMITS)
    return r.choice(
        [
            f"tc qdisc add dev {dev} root pfifo limit {limit}",
            f"tc qdisc add dev {dev} root bfifo limit {limit}",
            f"tc qdisc add dev {dev} root tbf rate {rate} burst {r.choice(['1', '1600', '10kb', '1mb'])} limit {limit}",
            f"tc qdisc add dev {dev} root handle 1: htb default 10\n"
            f"tc class add dev {dev} parent 1: classid 1:10 htb rate {rate} ceil {ceil}\n"
            f"tc qdisc add dev {dev} parent 1:10 sfq perturb {r.choice(['0', '1', '10'])}",
            f"tc qdisc add dev {dev} root sfq limit {limit}",
            f"tc qdisc add dev {dev} root fq_codel limit {limit} target {r.choice(['1us', '5ms', '1s'])}",
            f"tc qdisc add dev {dev} root handle 1: prio\ntc qdisc add dev {dev} parent 1:1 tbf rate {rate} burst 10k latency 50ms",
            f"tc qdisc add dev {dev} root red limit 100000 min 10000 max 30000 avpkt 1000 burst 20 bandwidth {rate}",
            f"tc qdisc add dev {dev} root handle 1: drr\ntc class add dev {dev} parent 1: classid 1:1 drr quantum {r.choice(['1', '1500', '65535'])}",
        ]
    )


def scenario(r: random.Random) -> str:
    """One scenario text from the grammar."""
    lines: list[str] = []
    ht = r.random() < 0.3
    duration = pick(r, DURATIONS)
    lines += ["[run]", f'duration = "{duration}"']
    if r.random() < 0.6:
        lines.append(f'sample_interval = "{pick(r, INTERVALS)}"')
    if r.random() < 0.3:
        lines.append(f'warmup = "{r.choice(["0s", "100ms", "1s"])}"')
    lines.append(f"seed = {r.randrange(1000)}")
    lines += ["[cell]", f'standard = "{"802.11n" if ht else "802.11b"}"']
    if r.random() < 0.3:
        lines.append(f'beacon_interval = "{pick(r, BEACONS)}"')
    if r.random() < 0.3:
        lines += ["[wired]", f'rate = "{pick(r, WIRED_RATES)}"', f'delay = "{pick(r, DELAYS)}"']
    if r.random() < 0.3:
        lines += ["[ap]", f'ip = "{pick(r, IPS)}"']
        if r.random() < 0.5:
            lines.append(f'tc = """{tc_script(r, "wlan0")}"""')
    n_stations = r.choice([0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    for i in range(n_stations):
        lines += ["[[station]]", f'name = "s{i}"']
        lines.append(f"mcs = {r.choice([0, 7, 15])}" if ht else f'rate = "{r.choice(["1Mbps", "2Mbps", "5.5Mbps", "11Mbps"])}"')
        if r.random() < 0.4:
            lines.append(f"snr = {pick(r, SNRS)}")
        if r.random() < 0.3:
            lines.append(f'ip = "{pick(r, IPS)}"')
        if r.random() < 0.2:
            lines.append(f'tc = """{tc_script(r, "wlan0")}"""')
    nodes = ["server", "ap"] + [f"s{i}" for i in range(n_stations)]
    for j in range(r.choice([0, 1, 2, 3])):
        protocol = r.choice(["udp", "udp", "udp", "tcp", "ping"])
        src, dst = r.choice(nodes), r.choice(nodes)
        lines += ["[[flow]]", f'name = "f{j}"', f'src = "{src}"', f'dst = "{dst}"', f'protocol = "{protocol}"']
        if protocol == "udp":
            lines.append(f'rate = "{pick(r, RATES)}"')
        if protocol == "ping":
            lines.append(f'interval = "{pick(r, INTERVALS)}"')
        if protocol != "ping" and r.random() < 0.4:
            lines.append(f"size = {pick(r, SIZES)}")
        if r.random() < 0.2:
            lines.append(f'start = "{r.choice(["0s", "100ms", "1s", "1h"] if r.random() < WILD else ["0s", "100ms"])}"')
    return "\n".join(lines) + "\n"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(text: str) -> tuple[str, str]:
    """In a worker: ("invalid", "") after a clean ScenarioError, ("ran", detail) after a run to
    its end within the event budget, or ("bad", why)."""
    try:
        info = airsched.validate(text=text)
    except airsched.ScenarioError as exc:
        bad = [line for line in exc.errors if not ERROR_LINE.match(line)]
        return ("bad", f"error lines not of the form file:line:col: {bad}") if bad or not exc.errors else ("invalid", "")
    except Exception as exc:  # noqa: BLE001 - anything else is the defect looked for
        return "bad", f"validate raised {type(exc).__name__}: {exc}"
    try:
        airsched.run(text=text, duration="1ms")  # a duration override is checked too
    except airsched.ScenarioError:
        pass
    except Exception as exc:  # noqa: BLE001
        return "bad", f"run with a duration override raised {type(exc).__name__}: {exc}"
    if info.duration_ns > RUN_AT_MOST_S * 1e9:
        return "valid-long", ""
    try:
        result = airsched.run(text=text)
    except airsched.ScenarioError as exc:
        return "bad", f"validate accepted, run refused: {exc.errors}"
    except Exception as exc:  # noqa: BLE001
        return "bad", f"run raised {type(exc).__name__}: {exc}"
    s = result.summary
    budget = EVENTS_PER_FLOW_SECOND * max(s["sim_seconds"], 1e-3) * (1 + info.flows)
    if s["events"] > budget:
        return "bad", f"{s['events']:,} events in {s['sim_seconds']} s with {info.flows} flows (budget {budget:,.0f})"
    return "ran", ""


def test_every_accepted_scenario_runs_to_its_end_in_bounded_time_memory_and_events() -> None:
    r = random.Random(SEED)
    texts = [scenario(r) for _ in range(CASES)]
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    ctx = mp.get_context("spawn")
    with ctx.Pool(processes=2, initializer=_limit_memory, maxtasksperchild=200) as pool:
        pending = [(text, pool.apply_async(run_case, (text,))) for text in texts]
        for text, job in pending:
            try:
                kind, detail = job.get(timeout=CASE_SECONDS + 60)
            except mp.TimeoutError:
                kind, detail = "bad", f"no answer within {CASE_SECONDS + 60} s (a hang?)"
            outcomes[kind] += 1
            if kind == "bad":
                failures.append(f"{detail}\n--- scenario ---\n{text}")
                if len(failures) >= 5:
                    break
    print(f"fuzz: {CASES} cases, seed {SEED}: {dict(outcomes)}")
    assert not failures, "\n\n".join(failures)
    # The draw must exercise both sides: accepted runs and refusals.
    assert outcomes["ran"] > CASES // 20 and outcomes["invalid"] > CASES // 4, dict(outcomes)


CLI_ARGS = [
    ["run", "{s}"],
    ["run", "{s}", "--duration", "1ns"],
    ["run", "{s}", "--duration", "5"],
    ["run", "{s}", "--seed", "-1"],
    ["run", "{s}", "--set", "run.sample_interval=\"1ns\""],
    ["run", "{s}", "--set", "flow[0].rate=\"4294967296Mbit\""],
    ["run", "{s}", "--set", "wired.rate=\"99999tbit\""],
    ["run", "{s}", "--set", "cell.beacon_interval=\"1ns\""],
    ["run", "{s}", "--set", "station[0].snr=nan"],
    ["run", "{s}", "--set", "station[9].rate=1"],
    ["run", "{s}", "--out", "/proc/airsched-cannot-write"],
    ["validate", "{s}", "--set", "="],
    ["validate", "/nonexistent.toml"],
    ["tc", "check", "/nonexistent.tc"],
    ["plot", "/nonexistent-dir"],
    ["repro", "hoiland", "--traffic", "x"],
]


@pytest.mark.parametrize("args", CLI_ARGS, ids=lambda a: " ".join(a[:1] + a[2:])[:50])
def test_the_cli_never_prints_a_traceback_or_panics(args: list[str], tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-m", "airsched", *(a.replace("{s}", str(root / "scenarios" / "two-stations-cbr.toml")) for a in args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "panicked" not in out and "RUST_BACKTRACE" not in out, out
    assert proc.returncode in (0, 1, 2), (proc.returncode, out)
    for line in proc.stderr.splitlines():
        assert line.startswith(("error: ", "warning: ", "Usage:", " ", "Try ", "╭", "│", "╰")) or not line.strip(), line
