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


def tcp_uploads(seconds: int, scenario: Path = ANOMALY, omit: int = 2) -> dict:
    """Real iperf3 TCP uploads from every station (port 5201 + i) during an emulation of
    ``scenario``'s cell without its flows; and ``airsched run`` of the scenario for as long.
    Returns {station: {"iperf3_mbps", "emulate_mbps", "model_mbps"}}."""
    duration = seconds + 3
    reports: dict[str, dict] = {}
    stations: list[str] = []

    def ready(nodes):
        def go():
            servers = []
            for i, n in enumerate(nodes[1:]):
                servers.append(_netns(nodes[0].netns, "iperf3", "-s", "-1", "-p", str(5201 + i),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.5)
            clients = {}
            for i, n in enumerate(nodes[1:]):
                stations.append(n.name)
                clients[n.name] = _netns(n.netns, "iperf3", "-c", nodes[0].ip, "-p", str(5201 + i), "-t",
                                         str(seconds), "-O", str(omit), "-J",
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for name, c in clients.items():
                out, _ = c.communicate(timeout=seconds + 30)
                try:
                    reports[name] = json.loads(out)
                except ValueError:
                    reports[name] = {"error": out[-500:]}
            for s in servers:
                s.wait(timeout=10)

        threading.Thread(target=go, daemon=True).start()

    res = emulate(scenario, duration=f"{duration}s", simulated_flows=False, on_ready=ready,
                  overrides=[f'run.warmup="{omit + 1}s"'])
    model = run(scenario, duration=f"{duration}s", overrides=[f'run.warmup="{omit + 1}s"'])
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
        real = flows[(flows["src"] == name) & flows["name"].str.startswith("tcp ")]
        emu = float(real["goodput_mbps"].max()) if len(real) else float("nan")
        mdl = float(model.flows.set_index("name").loc[f"{name}-up", "goodput_mbps"])
        if "error" in rep:
            out.setdefault("errors", {})[name] = rep["error"]
        out[name] = {"iperf3_mbps": iperf, "emulate_mbps": emu, "model_mbps": mdl,
                     "retransmits": rep.get("end", {}).get("sum_sent", {}).get("retransmits")}
    return out


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "tcp":
        print(json.dumps(tcp_uploads(int(sys.argv[2]) if len(sys.argv) > 2 else 20), indent=1))
