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
import shlex
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


#: Seconds between the tree's creation and the first packet, on both sides. In the kernel the
#: qdisc exists from the ``tc`` command on, its timers running (pie's and fq_pie's probability
#: update fires about 512 ms after creation and every tupdate + 1 jiffies after); the traffic starts after both
#: Python ends are up. airsched's flows start ``LEAD`` after the tree too: with the flows at 0 s,
#: fq_pie's first update came 500 ms into the traffic and the backlogged flow's mean delay over
#: the window was 39 ms against the guest's 31 ms (docs/qdisc-fq_pie.md).
LEAD = 1.0


@dataclass(frozen=True)
class Case:
    name: str
    #: the tree, on dev eth0
    tc: str
    #: (name, destination port, offered rate in bit/s of UDP payload)
    flows: tuple[tuple[str, int, int], ...]
    #: per-host cases: the host of each flow (0, 1, ...), which is a receiver address (``"dst"``:
    #: airsched's flows go from the server to station ``sta{host+1}``, the tree on the server's
    #: eth0) or a sender address (``"src"``: from ``sta{host+1}`` to the server, the tree on the
    #: AP's eth0). Empty: one host pair (server to AP).
    hosts: tuple[int, ...] = ()
    direction: str = "dst"
    #: ``"ingress"``: the tree is the receiver's receive-path hook (``tc qdisc add dev eth0
    #: ingress`` or ``clsact``): in the kernel on the receiving namespace's veth, in airsched on
    #: the AP's eth0, where the server's packets arrive
    at: str = "egress"


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
    # pie (one queue, RFC 8033 as sch_pie.c) as the same leaf: both flows share its drops
    Case("htb 10mbit, pie leaf", """tc qdisc add dev eth0 root handle 1: htb default 1
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc qdisc add dev eth0 parent 1:1 handle 10: pie
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
    # the ingress policer (sch_ingress, act_police): flow a policed to 4 Mbit/s of IP datagrams
    # (the MAC header is pulled before the hook: 1028 bytes per packet), b passes
    Case("ingress police 4mbit (u32)", """tc qdisc add dev eth0 ingress
tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop flowid :1
""", (("a", 5001, 6_000_000), ("b", 5002, 2_000_000)), at="ingress"),
    # basic with an ematch tree on the clsact ingress hook, an action policer and no class id
    Case("clsact ingress, basic ematch police 3mbit", """tc qdisc add dev eth0 clsact
tc filter add dev eth0 ingress protocol ip prio 1 basic match 'cmp(u16 at 22 layer network eq 5001) and meta(pkt_len gt 500)' action police rate 3mbit burst 20k drop
""", (("a", 5001, 6_000_000), ("b", 5002, 2_000_000)), at="ingress"),
    # basic/ematch classification on egress: htb 3:1 with the class chosen by an ematch tree
    Case("htb 3:1, basic ematch classification", """tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 7500kbit ceil 10mbit
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 2500kbit ceil 10mbit
tc qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 50
tc qdisc add dev eth0 parent 1:20 handle 20: pfifo limit 50
tc filter add dev eth0 parent 1: protocol ip prio 1 basic match 'cmp(u16 at 2 layer transport eq 5001) and not meta(priority eq 7)' classid 1:10
""", (("a", 5001, 9_000_000), ("b", 5002, 9_000_000))),
    # cake's per-host fairness: hosts A and B with one flow each against host C with eight. By
    # hosts (dual-srchost, dual-dsthost) each host gets a third; by flows each flow a tenth, so
    # C's eight flows get all they offer and A and B share the rest. triple-isolate with one
    # sender and three receivers: the kernel's max of the source and destination host loads
    # (the one source host has ten bulk flows) makes it per flow here.
    *(Case(f"cake 10mbit {mode}, hosts 1+1+8 ({d})",
           f"tc qdisc add dev eth0 root handle 1: cake bandwidth 10mbit besteffort {mode}\n",
           (("a", 5001, 2_500_000), ("b", 5002, 2_500_000))
           + tuple((f"c{i}", 5010 + i, 1_000_000) for i in range(1, 9)),
           hosts=(0, 1) + (2,) * 8, direction=d)
      for mode, d in (("dual-srchost", "src"), ("dual-dsthost", "dst"), ("triple-isolate", "dst"),
                      ("flows", "dst"))),
)


def src_addr(case: Case, i: int) -> str:
    """The sender's address of flow ``i`` in the kernel run."""
    return f"10.99.0.{11 + case.hosts[i]}" if case.hosts and case.direction == "src" else "10.99.0.1"


def dst_addr(case: Case, i: int) -> str:
    """The receiver's address of flow ``i`` in the kernel run."""
    return f"10.99.0.{2 + case.hosts[i]}" if case.hosts and case.direction == "dst" else "10.99.0.2"


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
                tuple((n, port, round(r * factor)) for n, port, r in case.flows), case.hosts, case.direction,
                case.at)


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
binds = [(a, int(p)) for a, p in (x.split(':') for x in sys.argv[1].split(','))]
ports = [p for _, p in binds]
socks = []
for a, p in binds:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try: s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE: past net.core.rmem_max
    except OSError: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind((a, p)); s.setblocking(False); socks.append((p, s))
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
                    got[p] += len(d); delays[p].append((round(now - warm, 6), round(now - sent, 7)))
print(json.dumps({'bytes': got, 'delays': delays}), flush=True)
"""

_SENDER = r"""
import socket, struct, sys, time
size = int(sys.argv[1])
flows = [(src, dst, int(port), int(rate)) for src, dst, port, rate in (f.split(':') for f in sys.argv[2].split(','))]
socks = []
for src, _, _, _ in flows:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    try: s.setsockopt(socket.SOL_SOCKET, 32, 64 << 20)  # SO_SNDBUFFORCE: past net.core.wmem_max
    except OSError: s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.setblocking(False); socks.append(s)
print('ready', flush=True)
t0, t_end = (float(x) for x in sys.stdin.readline().split())
gap = [size * 8 / f[3] for f in flows]
nxt = [t0 for _ in flows]
pad = bytes(size - 8)
late = 0.0
while True:
    now = time.time()
    if now >= t_end: break
    i = min(range(len(flows)), key=lambda k: nxt[k])
    if nxt[i] > now: time.sleep(min(nxt[i] - now, 0.0005)); continue
    late = max(late, now - nxt[i])
    try: socks[i].sendto(struct.pack('!d', time.time()) + pad, (flows[i][1], flows[i][2]))
    except (BlockingIOError, OSError): pass
    nxt[i] += gap[i]
print(f'late {late}', flush=True)
"""


def run_kernel(case: Case, seconds: float, warmup: float = 1.0,
               raw: dict[str, object] | None = None) -> dict[str, tuple[float, float]]:
    """Goodput (Mbit/s of UDP payload) and mean one-way delay (ms) per flow on a real veth link.
    ``raw``, if given, receives each flow's packets (``packets``: flow name to a list of
    (receive time from the end of the warm-up, one-way delay), seconds) and the tree's
    ``tc -s qdisc show`` and ``tc -s class show`` text (``tc``), for a closer look."""
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
        # per-host cases: more addresses on one side (and their neighbour entries)
        for a in sorted({src_addr(case, i) for i in range(len(case.flows))} - {"10.99.0.1"}):
            tx.ip("addr", "add", f"{a}/24", "dev", "eth0")
        for a in sorted({dst_addr(case, i) for i in range(len(case.flows))} - {"10.99.0.2"}):
            rx.ip("addr", "add", f"{a}/24", "dev", "eth0p")
            tx.ip("neigh", "add", a, "lladdr", mac, "dev", "eth0", "nud", "permanent")
        for line in case.tc.splitlines():
            words = shlex.split(line)[1:]
            if case.at == "ingress":  # the receiver's device
                words = ["eth0p" if w == "eth0" else w for w in words]
            p = (rx if case.at == "ingress" else tx).tc(*words)
            if p.returncode != 0:
                raise RuntimeError(f"{case.name}: tc {' '.join(words)}: {p.stderr.strip()}")
        tree_made = time.time()
        # Both ends start first and say "ready"; only then is the clock read and the window
        # handed to them. Reading it before (as this harness once did) put the whole window
        # inside the two Pythons' start-up when that is slow (seconds under QEMU's software
        # emulation), so the sender found the window over and sent nothing: 0 Mbit/s.
        ports = ",".join(f"{dst_addr(case, i)}:{f[1]}" for i, f in enumerate(case.flows))
        flows = ",".join(f"{src_addr(case, i)}:{dst_addr(case, i)}:{f[1]}:{f[2]}" for i, f in enumerate(case.flows))
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
        # the traffic starts at least LEAD after the tree was made (airsched's flows start LEAD
        # after it too)
        t0 = max(time.time() + 0.2, tree_made + LEAD)
        t_end = t0 + seconds
        sink.stdin.write(f"{t_end} {t0 + warmup}\n")
        sink.stdin.flush()
        sender.stdin.write(f"{t0} {t_end}\n")
        sender.stdin.flush()
        sent, err = sender.communicate()
        if sender.returncode != 0:
            raise RuntimeError(err)
        out = json.loads(sink.stdout.readline())
        sink.wait()
        if raw is not None:
            ns, dev = (rx, "eth0p") if case.at == "ingress" else (tx, "eth0")
            raw["tc"] = "".join(ns.tc("-s", what, "show", "dev", dev).stdout for what in ("qdisc", "class"))
            if case.at == "ingress":
                raw["tc"] += ns.tc("-s", "filter", "show", "dev", dev, "ingress").stdout
            raw["packets"] = {name: out["delays"][str(port)] for name, port, _ in case.flows}
            # How far behind its schedule the sender fell at worst (s): on a loaded host (no
            # exact clock outside the guest) a stalled sender bursts, and a class whose flow
            # paused lends its share to the others, so the kernel's split is not the offered
            # load's.
            raw["sender_late_s"] = float(sent.split()[-1])
    res = {}
    for name, port, _ in case.flows:
        b = out["bytes"][str(port)]
        d = out["delays"][str(port)]
        res[name] = (b * 8 / (seconds - warmup) / 1e6, 1000 * statistics.fmean(x for _, x in d) if d else float("nan"))
    return res


def scenario_text(case: Case, seconds: float, warmup: float = 1.0) -> str:
    """airsched's side: the tree on the server's eth0 (per-host ``src`` cases: the AP's eth0),
    the flows starting ``LEAD`` after it and measured from ``warmup`` after their start. The
    per-host cases run over an 802.11ac cell of 866.7 Mb/s stations so that the radio, which
    the kernel's veth does not have, takes well under a millisecond."""
    flows = ""
    for i, (n, port, r) in enumerate(case.flows):
        src, dst = "server", "ap"
        if case.hosts:
            sta = f"sta{case.hosts[i] + 1}"
            src, dst = ("server", sta) if case.direction == "dst" else (sta, "server")
        flows += (f'\n[[flow]]\nname = "{n}"\nsrc = "{src}"\ndst = "{dst}"\nrate = "{r}bit"\nsize = {PAYLOAD}\n'
                  f'dport = {port}\nstart = "{LEAD}s"\n')
    run = f'[run]\nduration = "{LEAD + seconds:g}s"\nwarmup = "{LEAD + warmup:g}s"\n\n[wired]\nrate = "10Gbit"\ndelay = "0ms"\n\n'
    tree = _core.toml_string(case.tc)
    if not case.hosts:
        node = "[ap]" if case.at == "ingress" else "[server]"
        return run + f'[[station]]\nname = "sta1"\nrate = "11Mbps"\n\n{node}\ntc = {tree}\n{flows}'
    cell = '[cell]\nstandard = "802.11ac"\nband = "5GHz"\nwidth = 80\nnss = 2\nguard_interval = "short"\n\n'
    stations = "".join(f'[[station]]\nname = "sta{h + 1}"\nmcs = 9\nnss = 2\n\n' for h in sorted(set(case.hosts)))
    node = "[server]" if case.direction == "dst" else "[ap]"
    return run + cell + stations + f"{node}\ntc = {tree}\n{flows}"


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
