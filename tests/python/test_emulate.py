# SPDX-License-Identifier: Apache-2.0
"""Live emulation (docs/emulation.md): header parsing, the lag statistics and the clear error
without privileges run everywhere; the runs with real stacks (namespaces, TUN devices, iperf3,
ping) need root, /dev/net/tun and iperf3, and are skipped saying which is missing. CI runs them
as root in a short form (a few seconds of traffic each); bench/emulate_validate.py has the long
forms whose numbers docs/emulation.md reports."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from airsched import emulate as E
from airsched.cli import app

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))


def _ipv4(proto: int, payload: bytes, src: str = "192.168.1.2", dst: str = "10.0.0.1", tos: int = 0) -> bytes:
    s = bytes(int(x) for x in src.split("."))
    d = bytes(int(x) for x in dst.split("."))
    total = 20 + len(payload)
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, total, 1, 0, 64, proto, 0, s, d) + payload


def test_tcp_header_gives_ports_and_payload_after_options():
    # A TCP header with 12 bytes of options (data offset 8 words = 32 bytes), 1448 bytes of data.
    tcp = struct.pack("!HHIIBBHHH", 43210, 5201, 1, 0, 8 << 4, 0x10, 65535, 0, 0) + b"\0" * 12 + b"x" * 1448
    pkt = _ipv4(6, tcp, tos=0xB8)
    src, dst, proto, sport, dport, tos, payload = E.parse_ipv4(pkt)
    assert (E._ip_str(src), E._ip_str(dst), proto, sport, dport, tos) == ("192.168.1.2", "10.0.0.1", 6, 43210, 5201, 0xB8)
    assert payload == 1448
    assert E.flow_name(src, dst, proto, sport, dport) == "tcp 192.168.1.2:43210>10.0.0.1:5201"


def test_udp_icmp_and_non_ipv4_packets():
    udp = _ipv4(17, struct.pack("!HHHH", 5000, 5001, 108, 0) + b"y" * 100)
    assert E.parse_ipv4(udp)[3:5] == (5000, 5001) and E.parse_ipv4(udp)[6] == 100
    echo = _ipv4(1, struct.pack("!BBHHH", 8, 0, 0, 4242, 1) + b"z" * 56)
    src, dst, proto, sport, dport, _, payload = E.parse_ipv4(echo)
    assert (proto, sport, dport, payload) == (1, 4242, 0, 56)
    assert E.flow_name(src, dst, proto, sport, dport) == "icmp 192.168.1.2>10.0.0.1 id 4242"
    assert E.parse_ipv4(b"\x60" + b"\0" * 39) is None  # IPv6
    assert E.parse_ipv4(b"\x45\0") is None  # truncated


def test_echo_turnaround_of_a_real_host():
    """The emulator times a real host's answer to an echo request: from the request's
    simulated delivery to the reply's injection (what a simulated ping's reply_delay is)."""

    class Sim:
        now_ns = 0

        def __init__(self):
            self.delivered = []

        def take_delivered(self):
            d, self.delivered = self.delivered, []
            return d

        def inject(self, *a):
            pass

        def bind_external(self, *a):
            pass

    request = _ipv4(1, struct.pack("!BBHHH", 8, 0, 0, 4242, 7) + b"z" * 56)
    reply = _ipv4(1, struct.pack("!BBHHH", 0, 0, 0, 4242, 7) + b"z" * 56, src="10.0.0.1", dst="192.168.1.2")
    other = _ipv4(1, struct.pack("!BBHHH", 0, 0, 0, 4242, 8) + b"z" * 56, src="10.0.0.1", dst="192.168.1.2")
    assert E.icmp_echo(request)[0] == 8 and E.icmp_echo(reply)[3:] == (4242, 7)
    assert E.icmp_echo(_ipv4(17, b"\0" * 8)) is None
    sim = Sim()
    nodes = [E.Node("server", "10.0.0.1", "x"), E.Node("fast", "192.168.1.2", "y")]
    for n, fd in zip(nodes, (100, 101)):
        n.tun = type("T", (), {"fileno": lambda self, fd=fd: fd})()
    by_ip = {E._ip_int(n.ip): n for n in nodes}
    a, b = E._ip_int("192.168.1.2"), E._ip_int("10.0.0.1")
    emu = E.Emulator(sim=sim, nodes=nodes, free={(a, b): [1], (b, a): [2]})
    emu.receive(request, by_ip)
    sim.delivered = [(1, 3_000_000)]  # delivered to the server at 3 ms
    written = []
    orig = E.os.write
    E.os.write = lambda fd, pkt: written.append(fd)
    try:
        emu.flush(lambda: 3_050_000)
    finally:
        E.os.write = orig
    assert written == [100]
    sim.now_ns = 3_088_000
    emu.receive(other, by_ip)  # another sequence number: not this request's reply
    emu.receive(reply, by_ip)
    assert emu.turnarounds == [88_000]
    t = E.turnaround_percentiles(emu.turnarounds)
    assert t["echo_turnaround_p50_ms"] == pytest.approx(0.088) and t["echo_turnaround_samples"] == 1
    assert E.turnaround_percentiles([])["echo_turnaround_samples"] == 0


def test_unbound_external_flows_are_left_out_of_flows_and_samples():
    raw = {
        "flows": {"name": ["unbound-0-1-0", "tcp a>b", "slow-up"], "goodput_mbps": [0.0, 5.0, 1.0]},
        "samples": {"name": ["unbound-0-1-0", "tcp a>b", "fast"], "kind": ["flow", "flow", "station"],
                    "time_s": [1.0, 1.0, 1.0]},
    }
    E._drop_unbound(raw)
    assert raw["flows"]["name"] == ["tcp a>b", "slow-up"] and raw["flows"]["goodput_mbps"] == [5.0, 1.0]
    assert raw["samples"]["name"] == ["tcp a>b", "fast"] and raw["samples"]["kind"] == ["flow", "station"]


def test_lag_percentiles():
    lag = E.Lag(samples=[i * 1000 for i in range(1, 101)])  # 1..100 us
    p = lag.percentiles()
    assert p["lag_p50_ms"] == pytest.approx(0.051)
    assert p["lag_p99_ms"] == pytest.approx(0.100)
    assert p["lag_max_ms"] == pytest.approx(0.100)
    assert p["lag_samples"] == 100
    assert E.Lag().percentiles()["lag_samples"] == 0


def test_without_root_one_clear_error(monkeypatch, capsys):
    from typer.testing import CliRunner

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(E.EmulationUnavailable, match="needs root"):
        E.check_available()
    res = CliRunner().invoke(app, ["emulate", str(ROOT / "scenarios" / "emulate-anomaly.toml"), "--duration", "1s"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: airsched emulate needs root"), res.output


def test_without_dev_net_tun_one_clear_error(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda p: False if p == "/dev/net/tun" else real_exists(p))
    with pytest.raises(E.EmulationUnavailable, match="/dev/net/tun does not exist"):
        E.check_available()


def _why_not_live() -> str | None:
    try:
        E.check_available()
    except E.EmulationUnavailable as exc:
        return str(exc)
    for tool in ("ip", "iperf3", "ping"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (CI installs iperf3 and iputils-ping from Debian)"
    return None


WHY = _why_not_live()
live = pytest.mark.skipif(WHY is not None, reason=f"live emulation: {WHY}")
PREFIX = "airtest-"


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [ln.split()[0] for ln in out.splitlines() if ln.strip()]


@live
def test_real_tcp_uploads_match_the_tcp_model():
    """Real iperf3 CUBIC uploads from the 11 and 1 Mb/s stations of the 802.11b anomaly cell,
    against `airsched run` with the TCP model (Linux 6.1's CUBIC) over the same window. The long
    form (bench/emulate_validate.py tcp 20) is within 4 %; this short one allows 20 %."""
    from emulate_validate import tcp_uploads

    r = tcp_uploads(6, omit=1, drain=8)
    for st in ("fast", "slow"):
        emu, model = r[st]["emulate_mbps"], r[st]["model_mbps"]
        # The short form checks the mechanism and the level; the validation is the long form's
        # (bench/emulate_validate.py tcp 20, docs/emulation.md). On an idle 2-core machine the
        # 6-s form gave the fast station 8-13 % below the model (the window holds the end of the
        # real CUBIC's slow start, HyStart included, which the model has not), so 20 % here.
        assert emu == pytest.approx(model, rel=0.20), (st, r[st])
        # iperf3's receiver counts the same bytes the emulation delivered to it, over its own
        # window: iperf3 starts about 0.5 s in, as the process spawns, so on a 5-s window the
        # edges differ by up to a few hundred ms of a CUBIC ramp (7 % seen once on an idle
        # 2-core machine; the 20-s long form agrees within 1 %).
        assert r[st]["iperf3_mbps"] == pytest.approx(emu, rel=0.10), (st, r[st])
    assert r["lag"]["lag_samples"] > 500
    # This run's namespaces (another run on the machine may use other names with the prefix).
    mine = {E.DEFAULT_PREFIX + n for n in ("server", "fast", "slow")}
    assert not [n for n in _namespaces() if n in mine], "namespaces removed at the end"


@live
def test_real_ping_rtt_is_the_simulated_path_delay():
    """A real ping in a mixed run (a simulated saturating upload in the same cell): the RTT the
    real ping measures is the delay its packets took through the simulated cell plus the
    emulator's lag and the real server's reply time (well under a millisecond)."""
    import re
    import threading
    import time

    out: dict[str, str] = {}
    threads: list[threading.Thread] = []

    def ready(nodes):
        fast = next(n for n in nodes if n.name == "fast")

        def go():
            time.sleep(1.0)
            p = subprocess.run(
                ["ip", "netns", "exec", fast.netns, "ping", "-n", "-i", "0.05", "-w", "4", "10.0.0.1"],
                capture_output=True,
                text=True,
            )
            out["ping"] = p.stdout

        threads.append(threading.Thread(target=go, daemon=True))
        threads[0].start()

    res = E.emulate(
        ROOT / "scenarios" / "emulate-ping.toml",
        duration="6s",
        prefix=PREFIX,
        on_ready=ready,
        overrides=['flow[ping].stop="1ms"', 'run.warmup="0s"'],
    )
    threads[0].join(timeout=10)
    rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out.get("ping", ""))]
    assert len(rtts) > 20, out
    flows = res.flows.set_index("name")
    icmp = flows[flows.index.str.startswith("icmp ")]
    assert len(icmp) == 2, "request and reply counted as two flows by their 5-tuple"
    path_ms = float((icmp["delay_mean_ms"] * 1).sum())  # request + reply one-way delays
    mean_rtt = sum(rtts) / len(rtts)
    assert 0 <= mean_rtt - path_ms < 1.0, (mean_rtt, path_ms)
    # The simulated flow of the mixed run ran as in `airsched run`.
    assert flows.loc["slow-up", "goodput_mbps"] > 0.7
    assert not [n for n in _namespaces() if n.startswith(PREFIX)]


@live
def test_real_ping_under_load_matches_the_simulated_ping_with_the_hosts_turnaround():
    """A real ping from the fast station while the slow one saturates the 802.11b cell, against
    the simulated ping of the same scenario given the real server's measured turnaround
    (`reply_delay`). The long form (bench/emulate_validate.py ping 40, docs/emulation.md) is
    within 3 % in median and p90; this 12-s form (about 220 real pings, whose median alone moves
    by about 7 %) allows 25 %. The model without the turnaround is the discriminating check: its
    median is 1.2 to 2 times the real one depending on the machine's load (three runs on a
    loaded machine: 29.7 against 20.5-24.3 ms, 65.5 against 50.9-55.3 ms), too close to the 25 % bound to
    test against it, so the test asks that the real pings lie nearer the model with the
    turnaround than the model without it, at both quantiles (their distances were 0.1-3.1 against
    5.4-9.2 ms at the median, 1.4-2.8 against 10-14.6 ms at p90)."""
    from emulate_validate import pings, quantile

    r = pings(12)
    real, sim, bare = r["real_ms"], r["simulated_ms"], r["simulated_no_turnaround_ms"]
    assert len(real) > 150, r["lag"]
    assert 10 <= r["reply_delay_us"] <= 1000, r["lag"]
    for q in (0.5, 0.9):
        assert quantile(real, q) == pytest.approx(quantile(sim, q), rel=0.25), (q, quantile(real, q), quantile(sim, q))
    # The ideal responder's reply waits behind the ACK: the real pings are nearer the model that
    # has the real server's turnaround.
    for q in (0.5, 0.9):
        r_, s_, b_ = quantile(real, q), quantile(sim, q), quantile(bare, q)
        assert abs(r_ - s_) < abs(r_ - b_), (q, r_, s_, b_)


@live
def test_stale_state_of_a_crashed_run_is_removed():
    from pyroute2 import netns

    name = f"{PREFIX}server"
    netns.create(name)
    E.STATE_DIR.mkdir(parents=True, exist_ok=True)
    # A pid that cannot be alive (above pid_max's largest value).
    E._state_file(PREFIX).write_text(f'{{"pid": {2**22 + 1}, "netns": ["{name}"]}}')
    removed = E.clean_stale(PREFIX)
    assert removed == [name]
    assert name not in _namespaces()
    assert not E._state_file(PREFIX).exists()


@live
def test_a_foreign_namespace_of_the_same_name_is_not_touched():
    from pyroute2 import netns

    name = f"{PREFIX}server"
    netns.create(name)
    try:
        with pytest.raises(E.EmulationUnavailable, match="is not airsched's"):
            E.emulate(ROOT / "scenarios" / "emulate-anomaly.toml", duration="3s", prefix=PREFIX)
        assert name in _namespaces()
    finally:
        netns.remove(name)
