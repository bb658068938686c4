# SPDX-License-Identifier: Apache-2.0
"""Behaviour conformance: a tc tree on a real veth link against airsched's wired link.

Two network namespaces joined by a veth pair; the tree goes on the sender's egress; UDP senders
and a sink of our own (Python sockets, in the two namespaces) measure per-flow goodput (payload
bytes received between the warm-up and the end) and one-way delay of those packets (both ends
read the same clock). airsched runs the same tree on the server's
``eth0`` of a scenario with the same flows from the server to the AP over a 10 Gbit/s wired
link. ``airsched conformance behaviour`` prints the table (docs/kernel-conformance.md).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from . import _core
from .kernel import Netns

#: UDP payload per packet, bytes. On the wire: + 8 UDP + 20 IP + 14 Ethernet = 1042 (what the
#: qdisc accounts on veth, and on airsched's eth0).
PAYLOAD = 1000


@dataclass(frozen=True)
class Case:
    name: str
    #: the tree, on dev eth0
    tc: str
    #: (name, destination port, offered rate in bit/s of UDP payload)
    flows: tuple[tuple[str, int, int], ...]


CASES = (
    Case("tbf 10mbit", "tc qdisc add dev eth0 root handle 1: tbf rate 10mbit burst 10k latency 20ms\n",
         (("a", 5001, 6_000_000), ("b", 5002, 6_000_000))),
    Case("htb 10mbit, 3:1 rates", """tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 7500kbit ceil 10mbit
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 2500kbit ceil 10mbit
tc qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 50
tc qdisc add dev eth0 parent 1:20 handle 20: pfifo limit 50
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 1:10
""", (("a", 5001, 9_000_000), ("b", 5002, 9_000_000))),
    Case("htb 10mbit, ceil 4mbit", """tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 2mbit ceil 4mbit
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 2mbit ceil 10mbit
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 1:10
""", (("a", 5001, 8_000_000), ("b", 5002, 4_000_000))),
    Case("netem delay 20ms 5ms, loss 2%", "tc qdisc add dev eth0 root handle 1: netem delay 20ms 5ms loss 2% limit 10000\n",
         (("a", 5001, 4_000_000), ("b", 5002, 2_000_000))),
    Case("netem rate 5mbit", "tc qdisc add dev eth0 root handle 1: netem rate 5mbit limit 100\n",
         (("a", 5001, 8_000_000),)),
    Case("fq maxrate 3mbit", "tc qdisc add dev eth0 root handle 1: fq maxrate 3mbit\n",
         (("a", 5001, 5_000_000), ("b", 5002, 1_000_000))),
    # cake's deficit-mode shaper and DRR++ between two flows (one host pair here, so the host
    # modes cannot show): 10 Mbit/s of 1042-byte frames, an equal share each.
    Case("cake 10mbit flows", "tc qdisc add dev eth0 root handle 1: cake bandwidth 10mbit besteffort flows\n",
         (("a", 5001, 8_000_000), ("b", 5002, 4_000_000))),
    # cake's other isolation modes with one host pair: flowblind is one queue (the shares follow
    # the offered loads), triple-isolate (the default) is per-flow fair between the two flows
    Case("cake 10mbit flowblind", "tc qdisc add dev eth0 root handle 1: cake bandwidth 10mbit besteffort flowblind\n",
         (("a", 5001, 8_000_000), ("b", 5002, 4_000_000))),
    Case("cake 10mbit triple-isolate", "tc qdisc add dev eth0 root handle 1: cake bandwidth 10mbit besteffort\n",
         (("a", 5001, 8_000_000), ("b", 5002, 4_000_000))),
    # a policer on a filter (act_police): flow a is policed to 4 Mbit/s of frames, b passes
    Case("police 4mbit on prio", """tc qdisc add dev eth0 root handle 1: prio
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop flowid 1:1
""", (("a", 5001, 6_000_000), ("b", 5002, 2_000_000))),
    # fq_pie needs a bottleneck of its own to queue at: an htb class shapes, fq_pie is its leaf
    Case("htb 10mbit, fq_pie leaf", """tc qdisc add dev eth0 root handle 1: htb default 1
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc qdisc add dev eth0 parent 1:1 handle 10: fq_pie
""", (("a", 5001, 8_000_000), ("b", 5002, 4_000_000))),
    # hfsc as a shaper (ul on the parent): a link-sharing split 3:7 between two saturating flows,
    # the rt curve of the first (2 Mbit/s) below its share.
    Case("hfsc ls 3:7 under ul 10mbit", """tc qdisc add dev eth0 root handle 1: hfsc default 20
tc class add dev eth0 parent 1: classid 1:1 hfsc sc rate 10mbit ul rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 hfsc rt m2 2mbit ls m2 3mbit
tc class add dev eth0 parent 1:1 classid 1:20 hfsc ls m2 7mbit
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 1:10
""", (("a", 5001, 8_000_000), ("b", 5002, 8_000_000))),
    # hfsc's real-time criterion: a concave rt-only class gets all it offers (3 Mbit/s) however
    # much the other class sends; the other gets the rest of the ul.
    Case("hfsc rt curve under ul 10mbit", """tc qdisc add dev eth0 root handle 1: hfsc default 20
tc class add dev eth0 parent 1: classid 1:1 hfsc sc rate 10mbit ul rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 hfsc rt m1 8mbit d 5ms m2 4mbit
tc class add dev eth0 parent 1:1 classid 1:20 hfsc ls m2 10mbit
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 1:10
""", (("a", 5001, 3_000_000), ("b", 5002, 10_000_000))),
    # ets under tbf: quanta 3000 and 1500 bytes split the 10 Mbit/s 2:1.
    Case("ets quanta 2:1 under tbf 10mbit", """tc qdisc add dev eth0 root handle 1: tbf rate 10mbit burst 10k latency 50ms
tc qdisc add dev eth0 parent 1:1 handle 10: ets quanta 3000 1500
tc filter add dev eth0 parent 10: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 10:1
""", (("a", 5001, 8_000_000), ("b", 5002, 8_000_000))),
)


_RATE = re.compile(r"\b(\d+(?:\.\d+)?)(mbit|kbit)\b")


def scaled(case: Case, factor: float) -> Case:
    """The same tree and flows with every rate (tc's ``Nmbit``/``Nkbit`` and the flows' offered
    loads) times ``factor``. A QEMU guest under ``-icount shift=0`` (1 ns per instruction)
    sends about 1000 packets/s from a Python sender and sink on its one CPU; a factor of 0.4
    keeps the 10 Mbit/s trees below that, both sides running the same scaled tree."""
    if factor == 1.0:
        return case

    def one(m: re.Match[str]) -> str:
        kbit = float(m.group(1)) * (1000 if m.group(2) == "mbit" else 1) * factor
        return f"{round(kbit)}kbit"

    return Case(f"{case.name} (x{factor:g})", _RATE.sub(one, case.tc),
                tuple((n, port, round(r * factor)) for n, port, r in case.flows))


@dataclass
class FlowResult:
    case: str
    flow: str
    kernel_mbps: float
    airsched_mbps: float
    kernel_delay_ms: float
    airsched_delay_ms: float

    @property
    def deviation(self) -> float:
        return 100.0 * (self.airsched_mbps - self.kernel_mbps) / self.kernel_mbps if self.kernel_mbps else float("inf")


_SINK = r"""
import socket, struct, sys, time, json, select
ports = [int(p) for p in sys.argv[1].split(',')]
socks = []
for p in ports:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try: s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: past net.core.rmem_max
    except OSError: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(('10.99.0.2', p)); s.setblocking(False); socks.append((p, s))
print('ready', flush=True)
t_end, warm = (float(x) for x in sys.stdin.readline().split())
got = {p: 0 for p in ports}; delays = {p: [] for p in ports}
while time.time() < t_end + 0.2:
    r, _, _ = select.select([s for _, s in socks], [], [], 0.1)
    for p, s in socks:
        if s in r:
            while True:
                try: d = s.recv(65536)
                except BlockingIOError: break
                now = time.time(); sent = struct.unpack('!d', d[:8])[0]
                if warm <= now <= t_end:
                    got[p] += len(d); delays[p].append(now - sent)
print(json.dumps({'bytes': got, 'delays': delays}), flush=True)
"""

_SENDER = r"""
import socket, struct, sys, time
size = int(sys.argv[1])
flows = [tuple(int(x) for x in f.split(':')) for f in sys.argv[2].split(',')]
socks = []
for _ in flows:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try: s.setsockopt(socket.SOL_SOCKET, 32, 64 << 20)  # SO_SNDBUFFORCE: past net.core.wmem_max
    except OSError: s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.setblocking(False); socks.append(s)
print('ready', flush=True)
t0, t_end = (float(x) for x in sys.stdin.readline().split())
gap = [size * 8 / rate for _, rate in flows]
nxt = [t0 for _ in flows]
pad = bytes(size - 8)
while True:
    now = time.time()
    if now >= t_end: break
    i = min(range(len(flows)), key=lambda k: nxt[k])
    if nxt[i] > now: time.sleep(min(nxt[i] - now, 0.0005)); continue
    try: socks[i].sendto(struct.pack('!d', time.time()) + pad, ('10.99.0.2', flows[i][0]))
    except (BlockingIOError, OSError): pass
    nxt[i] += gap[i]
"""


def run_kernel(case: Case, seconds: float, warmup: float = 1.0) -> dict[str, tuple[float, float]]:
    """Goodput (Mbit/s of UDP payload) and mean one-way delay (ms) per flow on a real veth link."""
    with Netns(()) as tx, Netns(()) as rx:
        tx.ip("link", "add", "name", "eth0", "type", "veth", "peer", "name", "eth0p", "netns", rx.name)
        tx.ip("addr", "add", "10.99.0.1/24", "dev", "eth0")
        rx.ip("addr", "add", "10.99.0.2/24", "dev", "eth0p")
        tx.ip("link", "set", "eth0", "up")
        rx.ip("link", "set", "eth0p", "up")
        tx.ip("link", "set", "lo", "up")
        # static neighbour: no ARP exchange inside the measurement
        mac = json.loads(rx.ip("-j", "link", "show", "eth0p"))[0]["address"]
        tx.ip("neigh", "add", "10.99.0.2", "lladdr", mac, "dev", "eth0", "nud", "permanent")
        for line in case.tc.splitlines():
            words = line.split()[1:]
            p = tx.tc(*words)
            if p.returncode != 0:
                raise RuntimeError(f"{case.name}: tc {' '.join(words)}: {p.stderr.strip()}")
        # Both ends start first and say "ready"; only then is the clock read and the window
        # handed to them. Reading it before (as this harness once did) put the whole window
        # inside the two Pythons' start-up when that is slow (seconds under QEMU's software
        # emulation), so the sender found the window over and sent nothing: 0 Mbit/s.
        ports = ",".join(str(f[1]) for f in case.flows)
        flows = ",".join(f"{f[1]}:{f[2]}" for f in case.flows)
        # One socket per flow, non-blocking, with buffers forced past net.core.wmem_max/rmem_max
        # (212992 bytes by default, as in the guest): with one shared blocking socket, a flow
        # whose class queue held ~200 packets filled the send buffer and blocked the sender,
        # starving the other flow (htb ceil: 0.7 of 1.6 Mbit/s) and delaying its packets, and
        # the qdisc never saw the load airsched's generator offers. Now the qdisc limits.
        # -S: no site-packages, only the standard library (a fast start over 9p in the guest)
        sink = subprocess.Popen(["ip", "netns", "exec", rx.name, sys.executable, "-S", "-c", _SINK, ports],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        sender = subprocess.Popen(["ip", "netns", "exec", tx.name, sys.executable, "-S", "-c", _SENDER,
                                   str(PAYLOAD), flows], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        assert sink.stdin and sink.stdout and sender.stdin and sender.stdout
        for proc in (sink, sender):
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"{case.name}: the UDP {'sink' if proc is sink else 'sender'} did not start")
        t0 = time.time() + 0.2
        t_end = t0 + seconds
        sink.stdin.write(f"{t_end} {t0 + warmup}\n")
        sink.stdin.flush()
        sender.stdin.write(f"{t0} {t_end}\n")
        sender.stdin.flush()
        _, err = sender.communicate()
        if sender.returncode != 0:
            raise RuntimeError(err)
        out = json.loads(sink.stdout.readline())
        sink.wait()
    res = {}
    for name, port, _ in case.flows:
        b = out["bytes"][str(port)]
        d = out["delays"][str(port)]
        res[name] = (b * 8 / (seconds - warmup) / 1e6, 1000 * statistics.fmean(d) if d else float("nan"))
    return res


def scenario_text(case: Case, seconds: float, warmup: float = 1.0) -> str:
    flows = "".join(
        f'\n[[flow]]\nname = "{n}"\nsrc = "server"\ndst = "ap"\nrate = "{r}bit"\nsize = {PAYLOAD}\ndport = {port}\n'
        for n, port, r in case.flows)
    return (f'[run]\nduration = "{seconds}s"\nwarmup = "{warmup}s"\n\n[wired]\nrate = "10Gbit"\ndelay = "0ms"\n\n'
            f'[[station]]\nname = "sta1"\nrate = "11Mbps"\n\n[server]\ntc = {_core.toml_string(case.tc)}\n{flows}')


def run_airsched(case: Case, seconds: float, warmup: float = 1.0) -> dict[str, tuple[float, float]]:
    from .runner import run

    r = run(text=scenario_text(case, seconds, warmup))
    flows = r.flows
    out = {}
    for _, row in flows.iterrows():
        out[row["name"]] = (float(row["goodput_mbps"]), float(row["delay_mean_ms"]))
    return out


def compare(cases: tuple[Case, ...] = CASES, seconds: float = 5.0) -> list[FlowResult]:
    rows = []
    for case in cases:
        k = run_kernel(case, seconds)
        a = run_airsched(case, seconds)
        for name, _, _ in case.flows:
            rows.append(FlowResult(case.name, name, k[name][0], a[name][0], k[name][1], a[name][1]))
    return rows


def table(rows: list[FlowResult]) -> str:
    out = ["| tree | flow | kernel Mbit/s | airsched Mbit/s | deviation | kernel delay ms | airsched delay ms |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.case} | {r.flow} | {r.kernel_mbps:.3f} | {r.airsched_mbps:.3f} | {r.deviation:+.2f} % | "
                   f"{r.kernel_delay_ms:.2f} | {r.airsched_delay_ms:.2f} |")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    secs = float(os.environ.get("SECONDS_PER_CASE", "5"))
    print(table(compare(seconds=secs)))
