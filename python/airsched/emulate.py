# SPDX-License-Identifier: Apache-2.0
"""Live emulation: real applications and the real Linux stacks through the simulated cell, in
real time (docs/emulation.md).

Each real node (the server and the stations chosen, all by default) gets a network namespace
named ``PREFIX + node`` holding a TUN device ``tun0`` with the node's IPv4 address and a default
route through it. The packets the real stacks write to the TUN devices are read here, injected
into the simulation at their node at their arrival time (``_core.Simulation.inject``), carried
through the simulated qdiscs, MAC, air and wire, and written out of the destination's TUN device
at their simulated delivery time. The simulated clock is paced to the monotonic wall clock:
the loop sleeps in ``select`` until the next simulated event or a readable TUN device (no busy
spin), and measures the lag of every delivered packet (wall time of its write minus its
simulated delivery time).

Namespaces and TUN devices are made with pyroute2 (netlink, setns) and python-pytun (the TUN
device), never by hand-written ioctls; nothing outside the namespaces is touched. A state file
``/run/airsched-emulate/PREFIX.json`` lists what a run created, so that a run after a crash
removes it first.
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core
from ._errors import native_errors
from .result import Result
from .scenario import Overrides, PathLike, load, override_lines

#: Default namespace prefix: the namespaces are ``air-server``, ``air-fast``, ...
DEFAULT_PREFIX = "air-"
#: External flows reserved per ordered pair of real nodes (each 5-tuple seen takes one).
DEFAULT_FLOWS_PER_PAIR = 8
#: The documented lag bound: a warning when the 99th percentile of the delivered packets'
#: lag exceeds it (docs/emulation.md, "Time").
LAG_BOUND_MS = 1.0
#: SCHED_FIFO priority of the pacing loop (``realtime``): above every normal task, below the
#: kernel's own real-time threads (50 for threaded IRQs).
RT_PRIORITY = 20
#: Where the runs' state files live (one per prefix).
STATE_DIR = Path("/run/airsched-emulate")
#: Name of an external flow not (yet) bound to a 5-tuple; such rows are left out of the tables.
UNBOUND = "unbound"
#: TUN device txqueuelen: larger than any burst the real stacks write between two reads, so the
#: driver's ring (tx_queue_len, 500 by default in drivers/net/tun.c) never drops.
TUN_TXQUEUELEN = 5000
#: Packets forgotten if not delivered after this long (dropped in the simulated cell).
_FORGET_NS = 20_000_000_000

_PROTO_NAMES = {1: "icmp", 6: "tcp", 17: "udp"}


class EmulationUnavailable(RuntimeError):
    """The machine cannot emulate: not root, no /dev/net/tun, or a package missing."""


def check_available() -> None:
    """Raise :class:`EmulationUnavailable` with one clear sentence unless this process can
    create namespaces and TUN devices (root, /dev/net/tun, pyroute2 and python-pytun)."""
    if os.geteuid() != 0:
        raise EmulationUnavailable(
            "airsched emulate needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces "
            "and TUN devices; run it as root (e.g. with sudo)"
        )
    if not os.path.exists("/dev/net/tun"):
        raise EmulationUnavailable(
            "/dev/net/tun does not exist: load the tun module (modprobe tun) or, in a container, pass the "
            "device in (--device /dev/net/tun)"
        )
    try:
        import pyroute2  # noqa: F401
        import pytun  # noqa: F401
    except ImportError as exc:
        raise EmulationUnavailable(
            f"live emulation needs the pyroute2 and python-pytun packages ({exc.name} is missing): "
            "pip install 'airsched[emulate]'"
        ) from None


@dataclass
class Lag:
    """The lag of delivered packets behind their simulated delivery time (ns)."""

    samples: list[int] = field(default_factory=list)
    #: Times the loop woke up for a timed event later than the bound.
    late_wakeups: int = 0

    def percentiles(self) -> dict[str, float]:
        """p50, p90, p99 and max in ms (None without samples), and the number of samples."""
        if not self.samples:
            return {"lag_p50_ms": None, "lag_p90_ms": None, "lag_p99_ms": None, "lag_max_ms": None, "lag_samples": 0}
        s = sorted(self.samples)

        def pct(q: float) -> float:
            return s[min(len(s) - 1, int(q * len(s)))] / 1e6

        return {
            "lag_p50_ms": pct(0.50),
            "lag_p90_ms": pct(0.90),
            "lag_p99_ms": pct(0.99),
            "lag_max_ms": s[-1] / 1e6,
            "lag_samples": len(s),
        }


@dataclass
class Node:
    name: str
    ip: str
    netns: str
    tun: Any = None

    @property
    def fd(self) -> int:
        return int(self.tun.fileno())


def _ip_int(ip: str) -> int:
    a, b, c, d = (int(x) for x in ip.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def _ip_str(x: int) -> str:
    return f"{x >> 24}.{(x >> 16) & 255}.{(x >> 8) & 255}.{x & 255}"


def parse_ipv4(pkt: bytes) -> tuple[int, int, int, int, int, int, int] | None:
    """(src, dst, proto, sport, dport, tos, payload bytes) of an IPv4 packet, None if it is not
    one. TCP payload is after the IP and TCP headers (options included), UDP and ICMP after 8
    bytes; ICMP echo's identifier stands for the source port. Later fragments carry no ports."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4:
        return None
    ihl = (pkt[0] & 15) * 4
    tos = pkt[1]
    total, frag = struct.unpack_from("!H2xH", pkt, 2)
    proto = pkt[9]
    src, dst = struct.unpack_from("!II", pkt, 12)
    total = min(total, len(pkt))
    sport = dport = 0
    payload = total - ihl
    first = frag & 0x1FFF == 0
    if proto in (6, 17) and first and len(pkt) >= ihl + 4:
        sport, dport = struct.unpack_from("!HH", pkt, ihl)
        if proto == 6 and len(pkt) >= ihl + 13:
            payload = total - ihl - (pkt[ihl + 12] >> 4) * 4
        else:
            payload = total - ihl - 8
    elif proto == 1 and first and len(pkt) >= ihl + 8:
        if pkt[ihl] in (0, 8):
            (sport,) = struct.unpack_from("!H", pkt, ihl + 4)
        payload = total - ihl - 8
    return src, dst, proto, sport, dport, tos, max(0, payload)


def icmp_echo(pkt: bytes) -> tuple[int, int, int, int, int] | None:
    """(type, src, dst, identifier, sequence) of an ICMP echo request (type 8) or reply (0),
    None for any other packet."""
    if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != 1:
        return None
    ihl = (pkt[0] & 15) * 4
    if len(pkt) < ihl + 8 or pkt[ihl] not in (0, 8):
        return None
    src, dst = struct.unpack_from("!II", pkt, 12)
    ident, seq = struct.unpack_from("!HH", pkt, ihl + 4)
    return pkt[ihl], src, dst, ident, seq


def turnaround_percentiles(samples: Sequence[int]) -> dict[str, float | int | None]:
    """p10, p50 and p90 (ms) of the real hosts' echo turnarounds, and their number."""
    if not samples:
        return {"echo_turnaround_p10_ms": None, "echo_turnaround_p50_ms": None,
                "echo_turnaround_p90_ms": None, "echo_turnaround_samples": 0}
    s = sorted(samples)

    def pct(q: float) -> float:
        return s[min(len(s) - 1, int(q * len(s)))] / 1e6

    return {"echo_turnaround_p10_ms": pct(0.10), "echo_turnaround_p50_ms": pct(0.50),
            "echo_turnaround_p90_ms": pct(0.90), "echo_turnaround_samples": len(s)}


def flow_name(src: int, dst: int, proto: int, sport: int, dport: int) -> str:
    """A real flow's name in the result tables: ``tcp 192.168.1.2:40000>10.0.0.1:5201``."""
    p = _PROTO_NAMES.get(proto, f"ip{proto}")
    if proto in (6, 17):
        return f"{p} {_ip_str(src)}:{sport}>{_ip_str(dst)}:{dport}"
    if proto == 1:
        return f"{p} {_ip_str(src)}>{_ip_str(dst)} id {sport}"
    return f"{p} {_ip_str(src)}>{_ip_str(dst)}"


# ----- namespaces, TUN devices, state ---------------------------------------------------------


def _state_file(prefix: str) -> Path:
    return STATE_DIR / f"{prefix or 'noprefix'}.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(prefix: str, warn: Callable[[str], None] | None = None) -> list[str]:
    """Remove the namespaces a previous run with ``prefix`` left behind (its process is gone).
    Raises :class:`EmulationUnavailable` if that run is still alive. Returns what was removed."""
    from pyroute2 import netns

    state = _state_file(prefix)
    if not state.exists():
        return []
    try:
        info = json.loads(state.read_text())
    except (OSError, ValueError):
        info = {"pid": 0, "netns": []}
    pid = int(info.get("pid", 0))
    if pid and pid != os.getpid() and _alive(pid):
        raise EmulationUnavailable(
            f"another airsched emulate (pid {pid}) runs with namespace prefix {prefix!r}; stop it or choose --prefix"
        )
    removed = []
    existing = set(netns.listnetns())
    for name in info.get("netns", []):
        if name in existing:
            netns.remove(name)
            removed.append(name)
    state.unlink(missing_ok=True)
    if removed and warn is not None:
        warn(f"removed {len(removed)} namespaces a crashed run left behind: {', '.join(removed)}")
    return removed


def _write_state(prefix: str, created: list[str]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    _state_file(prefix).write_text(json.dumps({"pid": os.getpid(), "netns": created}))


def _make_node(node: Node, created: list[str], prefix: str) -> None:
    """The node's namespace, its TUN device opened inside it, address, MTU, routes."""
    from pyroute2 import IPRoute, netns
    from pytun import IFF_NO_PI, IFF_TUN, TunTapDevice

    netns.create(node.netns)
    created.append(node.netns)
    _write_state(prefix, created)
    netns.pushns(node.netns)
    try:
        # Opened while the process is in the namespace, the device and the netlink socket are
        # created there; the TUN fd keeps reading and writing the device after popns
        # (drivers/net/tun.c binds the file to the device, not to the opener's namespace).
        node.tun = TunTapDevice(name="tun0", flags=IFF_TUN | IFF_NO_PI)
        # No IPv6 (router solicitations would only be noise on the emulated air).
        for path in ("/proc/sys/net/ipv6/conf/all/disable_ipv6", "/proc/sys/net/ipv6/conf/default/disable_ipv6"):
            try:
                Path(path).write_text("1")
            except OSError:
                pass
        with IPRoute() as ns:
            lo = ns.link_lookup(ifname="lo")[0]
            ns.link("set", index=lo, state="up")
            idx = ns.link_lookup(ifname="tun0")[0]
            ns.link("set", index=idx, mtu=1500, txqlen=TUN_TXQUEUELEN, state="up")
            ns.addr("add", index=idx, address=node.ip, prefixlen=32)
            ns.route("add", dst="0.0.0.0/0", oif=idx)
    finally:
        netns.popns()
    os.set_blocking(node.fd, False)


def teardown(nodes: Sequence[Node], prefix: str) -> None:
    """Close the TUN devices and remove the namespaces (their devices go with them)."""
    from pyroute2 import netns

    for n in nodes:
        if n.tun is not None:
            try:
                n.tun.close()
            except OSError:
                pass
            n.tun = None
    existing = set(netns.listnetns())
    for n in nodes:
        if n.netns in existing:
            try:
                netns.remove(n.netns)
            except OSError:
                pass
    _state_file(prefix).unlink(missing_ok=True)


@contextmanager
def namespaces(nodes: Sequence[Node], prefix: str, warn: Callable[[str], None] | None = None) -> Iterator[None]:
    """Set up every node's namespace and TUN device; remove them all on the way out, whatever
    ends the run (normal end, Ctrl-C, SIGTERM, an error)."""
    from pyroute2 import netns

    clean_stale(prefix, warn)
    clash = sorted(set(netns.listnetns()) & {n.netns for n in nodes})
    if clash:
        raise EmulationUnavailable(
            f"network namespace {clash[0]} exists and is not airsched's; remove it (ip netns del {clash[0]}) "
            "or choose another --prefix"
        )
    created: list[str] = []
    old_term = signal.getsignal(signal.SIGTERM)
    try:
        for n in nodes:
            _make_node(n, created, prefix)
        signal.signal(signal.SIGTERM, _raise_interrupt)
        yield
    finally:
        teardown(nodes, prefix)
        signal.signal(signal.SIGTERM, old_term)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# ----- the pacing loop -----------------------------------------------------------------------


@dataclass
class Emulator:
    """The simulation, the real nodes and the 5-tuple -> external flow table."""

    sim: Any
    nodes: list[Node]
    #: Per ordered pair of node addresses: the free external flows.
    free: dict[tuple[int, int], list[int]]
    flows: dict[tuple[int, int, int, int, int], int] = field(default_factory=dict)
    lag: Lag = field(default_factory=Lag)
    ignored: int = 0
    unrouted: int = 0
    injected: int = 0
    delivered: int = 0
    _pending: dict[int, tuple[int, bytes, int]] = field(default_factory=dict)
    _tag: int = 0
    #: Echo requests written to a real host: (its address, the sender's, id, seq) -> the
    #: simulated delivery time; and each host's turnaround (its reply's injection time minus
    #: that), ns: what a simulated ping's `reply_delay` stands for.
    _echoes: dict[tuple[int, int, int, int], int] = field(default_factory=dict)
    turnarounds: list[int] = field(default_factory=list)

    def flow_of(self, hdr: tuple[int, int, int, int, int, int, int]) -> int | None:
        src, dst, proto, sport, dport, tos, _ = hdr
        key = (src, dst, proto, sport, dport)
        f = self.flows.get(key)
        if f is None:
            pool = self.free.get((src, dst))
            if not pool:
                return None
            f = pool.pop(0)
            self.sim.bind_external(f, src, dst, sport, dport, proto, tos, flow_name(src, dst, proto, sport, dport))
            self.flows[key] = f
        return f

    def receive(self, pkt: bytes, by_ip: dict[int, Node]) -> None:
        """A packet a real stack wrote: inject it now, keeping its bytes until delivery."""
        hdr = parse_ipv4(pkt)
        if hdr is None:
            self.ignored += 1
            return
        dst = by_ip.get(hdr[1])
        f = self.flow_of(hdr) if dst is not None else None
        if f is None:
            self.unrouted += 1
            return
        self._tag += 1
        if hdr[2] == 1 and (e := icmp_echo(pkt)) is not None and e[0] == 0:
            sent = self._echoes.pop((e[1], e[2], e[3], e[4]), None)
            if sent is not None:
                self.turnarounds.append(self.sim.now_ns - sent)
        self._pending[self._tag] = (dst.fd, pkt, self.sim.now_ns)
        self.sim.inject(f, len(pkt), hdr[6], self._tag)
        self.injected += 1

    def flush(self, clock: Callable[[], int]) -> None:
        """Write out every packet delivered so far, measuring its lag."""
        for tag, at in self.sim.take_delivered():
            entry = self._pending.pop(tag, None)
            if entry is None:
                continue
            fd, pkt, _ = entry
            if pkt[9] == 1 and (e := icmp_echo(pkt)) is not None and e[0] == 8:
                if len(self._echoes) > 4096:
                    self._echoes.clear()
                self._echoes[(e[2], e[1], e[3], e[4])] = at
            try:
                os.write(fd, pkt)
            except BlockingIOError:
                pass
            self.lag.samples.append(clock() - at)
            self.delivered += 1

    def forget_old(self, now: int) -> None:
        """Drop the bytes of packets the simulated cell dropped (never delivered)."""
        old = [t for t, (_, _, t_in) in self._pending.items() if now - t_in > _FORGET_NS]
        for t in old:
            del self._pending[t]

    def run(self, stop: Callable[[], bool] | None = None) -> None:
        """Pace the simulation to the monotonic clock until its end (or ``stop()``)."""
        sim = self.sim
        by_ip = {_ip_int(n.ip): n for n in self.nodes}
        by_fd = {n.fd: n for n in self.nodes}
        fds = list(by_fd)
        epoch = time.monotonic_ns() - sim.now_ns

        def clock() -> int:
            return time.monotonic_ns() - epoch

        end = sim.end_ns
        bound_ns = int(LAG_BOUND_MS * 1e6)
        next_forget = 1_000_000_000
        while True:
            now = clock()
            if now >= end or (stop is not None and stop()):
                break
            sim.advance(now)
            self.flush(clock)
            if now >= next_forget:
                self.forget_old(now)
                next_forget = now + 1_000_000_000
            nxt = sim.next_event_ns
            wake = end if nxt is None else min(nxt, end)
            timeout = max(0, wake - clock()) / 1e9
            # select() sleeps with microsecond resolution (epoll and poll round up to ms).
            readable, _, _ = select.select(fds, [], [], timeout)
            if not readable:
                if clock() - wake > bound_ns:
                    self.lag.late_wakeups += 1
                continue
            for fd in readable:
                for _ in range(64):
                    try:
                        pkt = os.read(fd, 65536)
                    except BlockingIOError:
                        break
                    sim.advance(clock())
                    self.receive(pkt, by_ip)
            self.flush(clock)


def _pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for a in names for b in names if a != b]


def emulate(
    scenario: PathLike | None = None,
    *,
    text: str | None = None,
    duration: str | None = None,
    simulated_flows: bool = True,
    realtime: bool = True,
    real: Sequence[str] | None = None,
    prefix: str = DEFAULT_PREFIX,
    flows_per_pair: int = DEFAULT_FLOWS_PER_PAIR,
    overrides: Overrides | None = None,
    pcap: str | os.PathLike[str] | None = None,
    on_ready: Callable[[list[Node]], None] | None = None,
    warn: Callable[[str], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> Result:
    """Run ``scenario`` live for ``duration`` of wall time with real nodes (the server and the
    stations named in ``real``, all by default) and return its :class:`Result`: the simulated
    flows as ``airsched run`` reports them, and each real 5-tuple seen as a flow named
    :func:`flow_name`; ``summary`` adds ``lag_p50_ms``... ``lag_max_ms``, ``lag_samples``,
    ``late_wakeups``, ``loop_cpu_share`` (CPU time of the loop over its wall time; the
    simulation included), ``real_packets_injected``/``_delivered``/``_unrouted``/``_ignored``.

    ``on_ready(nodes)`` is called once the namespaces are up (start the real applications
    there). Ctrl-C or SIGTERM ends the run early, with results of what ran (``partial``).
    With ``realtime`` (the default) the pacing loop runs under SCHED_FIFO (priority
    :data:`RT_PRIORITY`) so that a busy machine does not delay its wake-ups; it sleeps whenever
    nothing is due, so it never takes a core from the real applications when idle.
    Without ``simulated_flows`` the scenario's own ``[[flow]]``s are left out: the cell carries
    the real traffic alone. Raises :class:`EmulationUnavailable` without root, /dev/net/tun or
    the packages."""
    check_available()
    source = load(scenario, text=text)
    lines = override_lines(overrides)
    if duration is not None:
        lines.append(f"run.duration={_core.toml_string(duration)}")
    with native_errors():
        probe = _core.Simulation(source.text, source.path, overrides=lines)
        addresses = dict(probe.node_addresses())
        stations = [n for n in addresses if n not in ("server", "ap")]
        chosen = list(stations if real is None else real)
        for name in chosen:
            if name not in stations:
                raise EmulationUnavailable(
                    f"--real {name}: no station {name!r} in {source.path}; expected one of {', '.join(stations)}"
                )
        names = ["server", *chosen]
        pairs = _pairs(names)
        external = [(f"{UNBOUND}-{a}-{b}-{i}", a, b) for a, b in pairs for i in range(flows_per_pair)]
        sim = _core.Simulation.with_external(source.text, source.path, lines, external, simulated_flows)
        sim.enable_interface_counters()
        if pcap is not None:
            sim.enable_pcap()
    first = sim.first_external_flow
    free: dict[tuple[int, int], list[int]] = {}
    for k, (a, b) in enumerate(pairs):
        base = first + k * flows_per_pair
        free[(_ip_int(addresses[a]), _ip_int(addresses[b]))] = list(range(base, base + flows_per_pair))
    nodes = [Node(n, addresses[n], f"{prefix}{n}") for n in names]
    emu = Emulator(sim, nodes, free)
    partial = False
    with namespaces(nodes, prefix, warn):
        if on_ready is not None:
            on_ready(nodes)
        import gc

        gc.disable()
        old_policy = _realtime(warn) if realtime else None
        cpu0, wall0 = time.process_time(), time.monotonic()
        try:
            emu.run(stop)
        except KeyboardInterrupt:
            partial = True
        finally:
            loop_cpu, loop_wall = time.process_time() - cpu0, time.monotonic() - wall0
            gc.enable()
            if old_policy is not None:
                os.sched_setscheduler(0, *old_policy)
    with native_errors():
        # The loop stops at the first wake-up at or after the end: the events left before the
        # end are run (a normal end), or the run ends where it stands (interrupted).
        raw = sim.finish_now() if partial else sim.finish()
    raw["summary"]["partial"] = partial
    _drop_unbound(raw)
    raw["summary"].update(emu.lag.percentiles())
    raw["summary"].update(turnaround_percentiles(emu.turnarounds))
    raw["summary"].update(
        late_wakeups=emu.lag.late_wakeups,
        loop_cpu_share=loop_cpu / loop_wall if loop_wall > 0 else 0.0,
        real_packets_injected=emu.injected,
        real_packets_delivered=emu.delivered,
        real_packets_unrouted=emu.unrouted,
        real_packets_ignored=emu.ignored,
    )
    result = Result.from_native(raw)
    if pcap is not None:
        from .runner import write_pcaps

        result.pcaps = write_pcaps(sim.take_pcaps(), pcap)
    p99 = raw["summary"]["lag_p99_ms"]
    if warn is not None and p99 is not None and p99 > LAG_BOUND_MS:
        warn(
            f"the simulation lagged the wall clock: p99 {p99:.3f} ms > {LAG_BOUND_MS} ms; timings of the real "
            "flows are distorted (docs/emulation.md, Limits)"
        )
    return result


def _realtime(warn: Callable[[str], None] | None) -> tuple[int, Any] | None:
    """Put this process under SCHED_FIFO (not its children: SCHED_RESET_ON_FORK); returns the
    policy to restore (None if refused)."""
    old = (os.sched_getscheduler(0), os.sched_getparam(0))
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(RT_PRIORITY))
    except OSError as exc:
        if warn is not None:
            warn(f"could not run the pacing loop under SCHED_FIFO ({exc.strerror}); lag may be larger")
        return None
    return old


def _drop_unbound(raw: dict[str, Any]) -> None:
    """Leave the external flows no real packet used out of the flows and samples tables."""
    for table in ("flows", "samples"):
        rows = raw.get(table)
        if not rows or "name" not in rows:
            continue
        keep = [i for i, name in enumerate(rows["name"]) if not str(name).startswith(UNBOUND)]
        for col, values in rows.items():
            if isinstance(values, list):
                rows[col] = [values[i] for i in keep]
