# SPDX-License-Identifier: Apache-2.0
"""Live emulation against the simulation (docs/emulation.md, "Validation"), as root.

    python bench/emulate_validate.py tcp  [SECONDS]   real iperf3 uploads vs airsched run (TCP model)
    python bench/emulate_validate.py ping [SECONDS]   real ping under load vs the simulated ping
    python bench/emulate_validate.py lag RATE_MBIT [SECONDS] [SCENARIO]
                                                       lag percentiles with real UDP at RATE

tests/python/test_emulate.py runs the short forms; the numbers in docs/emulation.md and
bench/README.md come from the long ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from airsched.emulate import emulate
from airsched.runner import run

ROOT = Path(__file__).resolve().parent.parent
ANOMALY = ROOT / "scenarios" / "emulate-anomaly.toml"


def _netns(ns: str, *cmd: str, **kw):
    return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], **kw)


def tcp_uploads(
    seconds: int,
    scenario: Path = ANOMALY,
    omit: int = 2,
    cc: str = "cubic",
    drain: int = 15,
    download: bool = False,
    overrides: list[str] | None = None,
) -> dict:
    """Real iperf3 TCP uploads from every station (port 5201 + i) during an emulation of
    ``scenario``'s cell without its flows; and ``airsched run`` of the scenario for as long.
    Returns {station: {"iperf3_mbps", "emulate_mbps", "model_mbps"}}. The real senders use
    ``cc`` (iperf3 -C; the host's default may be another, e.g. BBR). ``download``: the server
    sends (iperf3 -R), to the stations that have a TCP flow in the scenario."""
    # iperf3 starts about 0.5 s into the run and, after its `seconds`, exchanges its results
    # over a control connection that waits behind the cell's queues (seconds at 1 Mb/s): the
    # emulation outlasts it. Goodputs are compared over one window, [omit + 1, seconds + 1] s:
    # the model's measured window, the emulation's flow samples in it, iperf3's own after -O.
    duration = seconds + drain
    t0, t1 = omit + 1, seconds + 1
    reports: dict[str, dict] = {}
    stations: list[str] = []
    worker: list[threading.Thread] = []

    def ready(nodes):
        def go():
            servers = []
            for i, n in enumerate(nodes[1:]):
                servers.append(_netns(nodes[0].netns, "iperf3", "-s", "-1", "-p", str(5201 + i),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.5)
            clients = {}
            for i, n in enumerate(nodes[1:]):
                if n.name not in tcp_stations:
                    continue
                stations.append(n.name)
                clients[n.name] = _netns(n.netns, "iperf3", "-c", nodes[0].ip, "-p", str(5201 + i), "-t",
                                         str(seconds), "-O", str(omit), "-J", "-C", cc, *(["-R"] if download else []),
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for name, c in clients.items():
                out, _ = c.communicate(timeout=seconds + 30)
                try:
                    reports[name] = json.loads(out)
                except ValueError:
                    reports[name] = {"error": out[-500:]}
            for s in servers:
                s.wait(timeout=10)

        worker.append(threading.Thread(target=go, daemon=True))
        worker[0].start()

    extra = list(overrides or [])
    model = run(scenario, duration=f"{t1}s", overrides=[*extra, f'run.warmup="{t0}s"'])
    mf = model.flows[model.flows["protocol"] == "tcp"]
    by_station = {(r.dst if download else r.src): r.goodput_mbps for r in mf.itertuples()}
    tcp_stations = set(by_station)
    res = emulate(scenario, duration=f"{duration}s", simulated_flows=False, on_ready=ready,
                  overrides=[*extra, f'run.warmup="{t0}s"'])
    if worker:
        worker[0].join(timeout=30)
    out = {"lag": {k: v for k, v in res.summary.items() if k.startswith("lag") or k == "late_wakeups"}}
    cols = ["name", "goodput_mbps", "sent_packets", "received_packets", "drops_queue", "drops_retry", "delay_mean_ms"]
    out["emulate_flows"] = res.flows[cols].to_dict("records")
    out["model_flows"] = model.flows[cols + ["tcp_retransmits", "tcp_srtt_ms"]].to_dict("records")
    out["emulate_stations"] = res.stations.to_dict("records")
    out["model_stations"] = model.stations.to_dict("records")
    flows = res.flows
    for name in stations:
        rep = reports.get(name, {})
        iperf = rep.get("end", {}).get("sum_received", {}).get("bits_per_second", float("nan")) / 1e6
        real = flows[(flows["dst" if download else "src"] == name) & flows["name"].str.startswith("tcp ")]
        data = real.sort_values("goodput_mbps")["name"].iloc[-1] if len(real) else None
        smp = res.samples
        sel = smp[(smp["kind"] == "flow") & (smp["name"] == data) & (smp["time_s"] > t0 + 1e-9) & (smp["time_s"] <= t1 + 1e-9)]
        emu = float(sel["goodput_mbps"].mean()) if len(sel) else float("nan")
        mdl = float(by_station[name])
        if "error" in rep:
            out.setdefault("errors", {})[name] = rep["error"]
        out[name] = {"iperf3_mbps": iperf, "emulate_mbps": emu, "model_mbps": mdl,
                     "retransmits": rep.get("end", {}).get("sum_sent", {}).get("retransmits")}
    return out


def _main() -> None:
    what = sys.argv[1]
    if what == "tcp-hoiland":
        secs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
        queueing = sys.argv[3] if len(sys.argv) > 3 else "airtime"
        # The TCP model with Linux 6.1's CUBIC and socket defaults at both ends of each flow.
        era = [f'flow[{f}].kernel="6.1"' for f in ("tcp-fast1", "tcp-fast2", "tcp-slow")]
        print(json.dumps(tcp_uploads(secs, scenario=ROOT / "scenarios" / "hoiland" / "tcp.toml", download=True,
                                     overrides=[f'ap.queueing="{queueing}"', *era]), indent=1))
    elif what == "tcp":
        secs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
        print(json.dumps(tcp_uploads(secs, cc=sys.argv[3] if len(sys.argv) > 3 else "cubic"), indent=1))


PING = ROOT / "scenarios" / "emulate-ping.toml"
#: Seeds the simulated ping's distribution is pooled over.
SEEDS = 5


def pings(seconds: int, scenario: Path = PING) -> dict:
    """A real ping from the fast station every 50 ms in a mixed run (the scenario's simulated
    bulk upload runs too; its simulated ping is stopped before it sends, since two pings queued
    at one station delay each other), against the simulated ping of ``airsched run`` of the
    same scenario: with the responder's turnaround the emulation measured for the real server
    (``flow[ping].reply_delay`` = the median of ``echo_turnaround``), and with none (the
    scenario's default). Returns the RTT lists (ms, pings answered after the warm-up)."""
    import re

    real: list[float] = []
    worker: list[threading.Thread] = []

    def ready(nodes):
        fast = next(n for n in nodes if n.name == "fast")

        def go():
            time.sleep(1.0)  # the warm-up
            p = _netns(fast.netns, "ping", "-n", "-i", "0.05", "-w", str(seconds), "10.0.0.1",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out, _ = p.communicate(timeout=seconds + 30)
            real.extend(float(m) for m in re.findall(r"time=([0-9.]+) ms", out))

        worker.append(threading.Thread(target=go, daemon=True))
        worker[0].start()

    res = emulate(scenario, duration=f"{seconds + 3}s", on_ready=ready, overrides=['flow[ping].stop="1ms"'])
    if worker:
        worker[0].join(timeout=30)
    turnaround_us = round(res.summary["echo_turnaround_p50_ms"] * 1000)

    def simulated(overrides: list[str]) -> list[float]:
        # The model's RTT distribution, pooled over SEEDS runs: the median of one run's
        # 800 pings moves by +-7 % from seed to seed (13.6 to 15.7 ms with the turnaround).
        rtts: list[float] = []
        for seed in range(1, SEEDS + 1):
            sim = run(scenario, duration=f"{seconds + 1}s", overrides=[*overrides, f"run.seed={seed}"]).pings
            rtts.extend(float(x) for x in sim[sim["flow"] == "ping"]["rtt_ms"])
        return rtts

    return {"real_ms": real, "simulated_ms": simulated([f'flow[ping].reply_delay="{turnaround_us}us"']),
            "simulated_no_turnaround_ms": simulated([]), "reply_delay_us": turnaround_us,
            "lag": {k: v for k, v in res.summary.items() if k.startswith(("lag", "echo_"))}}


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def _ping_main(seconds: int) -> None:
    r = pings(seconds)
    print("reply_delay", r["reply_delay_us"], "us (the real server's measured turnaround, median)")
    for k in ("real_ms", "simulated_ms", "simulated_no_turnaround_ms"):
        xs = r[k]
        print(k, len(xs), "median", round(quantile(xs, 0.5), 3), "p90", round(quantile(xs, 0.9), 3))
    print(r["lag"])



FAST_N = ROOT / "scenarios" / "emulate-80211n.toml"


def lag_at(rate_mbit: float, seconds: int, scenario: Path = FAST_N) -> dict:
    """Real UDP at ``rate_mbit`` (iperf3 -u, 1448-byte datagrams) from the server to the
    station through ``scenario``; returns the lag percentiles, the packets the emulator moved
    and the goodput iperf3's receiver saw."""
    worker: list[threading.Thread] = []
    rep: dict = {}

    def ready(nodes):
        srv, sta = nodes[0], nodes[1]

        def go():
            s = _netns(sta.netns, "iperf3", "-s", "-1", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            c = _netns(srv.netns, "iperf3", "-c", sta.ip, "-u", "-b", f"{rate_mbit}M", "-l", "1448", "-t",
                       str(seconds), "-J", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out, _ = c.communicate(timeout=seconds + 30)
            try:
                rep.update(json.loads(out))
            except ValueError:
                rep["error"] = out[-300:]
            s.wait(timeout=5)
            # Datagrams the receiving host's UDP socket had no room for (Udp: RcvbufErrors).
            snmp = subprocess.run(["ip", "netns", "exec", sta.netns, "cat", "/proc/net/snmp"],
                                  capture_output=True, text=True).stdout.splitlines()
            udp = [ln.split()[1:] for ln in snmp if ln.startswith("Udp:")]
            if len(udp) == 2:
                rep["udp"] = dict(zip(udp[0], udp[1]))

        worker.append(threading.Thread(target=go, daemon=True))
        worker[0].start()

    res = emulate(scenario, duration=f"{seconds + 4}s", on_ready=ready)
    if worker:
        worker[0].join(timeout=30)
    s = res.summary
    recv = rep.get("end", {}).get("sum", {}).get("bits_per_second", float("nan"))
    return {"rate_mbit": rate_mbit, **{k: s[k] for k in s if k.startswith(("lag", "real_", "loop_"))},
            "late_wakeups": s["late_wakeups"], "iperf3_mbps": recv / 1e6,
            "lost_percent": rep.get("end", {}).get("sum", {}).get("lost_percent"),
            "receiver_rcvbuf_errors": rep.get("udp", {}).get("RcvbufErrors")}


if __name__ == "__main__":
    if sys.argv[1] == "lag":
        print(json.dumps(lag_at(float(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 10)))
    elif sys.argv[1] == "ping":
        _ping_main(int(sys.argv[2]) if len(sys.argv) > 2 else 20)
    else:
        _main()
