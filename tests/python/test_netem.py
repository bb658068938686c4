# SPDX-License-Identifier: Apache-2.0
"""netem end to end: a run on the AP, and `airsched import` (iproute2 6.1's `tc -j qdisc show` objects and text
lines read back into tc commands that airsched builds into the same qdisc) (issue 23)."""

from __future__ import annotations

import json

import airsched
from airsched import _core
from airsched.importer import DeviceInput, import_devices

# As iproute2 6.1's netem_print_opt prints them: fractions for percentages, seconds for times,
# the rate in bytes per second.
NETEM_JSON = json.dumps([{"kind": "netem", "handle": "1:", "root": True, "refcnt": 2, "options": {
    "limit": 500, "delay": {"delay": 0.1, "jitter": 0.01, "correlation": 0.25},
    "loss-random": {"loss": 0.01, "correlation": 0}, "duplicate": {"duplicate": 0, "correlation": 0},
    "reorder": {"reorder": 0.25, "correlation": 0.5}, "rate": {"rate": 1250000, "packetoverhead": 20,
    "cellsize": 48, "celloverhead": 5}, "ecn": False, "gap": 3}}])
NETEM_SHOWN = ("qdisc netem 1: root refcnt 2 limit 500 delay 100ms  10ms 25% loss 1% reorder 25% 50% "
               "rate 10Mbit packetoverhead 20 cellsize 48 celloverhead 5 gap 3")
STATE_TEXT = ("qdisc netem 2: root refcnt 2 limit 1000 delay 20ms loss state p13 1% p31 30% p32 10% p23 5% p14 0.1% "
              "slot 800us 8.5ms packets 42 bytes 65536\n")
GE_TEXT = "qdisc netem 3: root refcnt 2 limit 1000 loss gemodel p 1% r 10% 1-h 70% 1-k 0.1% ecn \n"


def _shown(text: str) -> str:
    return _core.tc_check(text, "imported.tc", [("eth0", 1000)])["devices"][0]["qdisc_text"].strip()


def test_netem_json_imports_and_rebuilds_the_same_qdisc() -> None:
    r = import_devices([DeviceInput("eth0", NETEM_JSON, "", {})])
    assert _shown(r.text) == NETEM_SHOWN, r.text
    # tc prints no table name: the jitter comes back uniform, with a warning saying so.
    assert any("distribution" in w for w in r.warnings), r.warnings


def test_netem_text_imports_and_rebuilds_the_same_qdisc() -> None:
    for text in (STATE_TEXT, GE_TEXT, NETEM_SHOWN + "\n"):
        r = import_devices([DeviceInput("eth0", text, "", {})])
        assert _shown(r.text) == text.strip(), r.text


CELL = """
[run]
duration = "21s"
warmup = "1s"
seed = 3

[[station]]
name = "a"
rate = "11Mbps"

[[flow]]
name = "ping"
protocol = "ping"
src = "server"
dst = "a"
interval = "100ms"

[[flow]]
name = "cbr"
protocol = "udp"
src = "server"
dst = "a"
rate = "1mbit"

[ap]
tc = "tc qdisc add dev wlan0 root netem delay 40ms loss 10% duplicate 1%"
"""


def test_netem_on_the_ap_delays_and_loses_as_configured() -> None:
    r = airsched.run(text=CELL)
    flows = r.flows.set_index("name")
    # Every ping waits 40 ms in netem (in 64 ns ticks: 40 ms exactly) plus its time on the air
    # (an 11 Mbit/s exchange, under 2 ms here) and the reply's.
    assert 40.0 <= flows.loc["ping", "rtt_p50_ms"] < 43.0
    # 10 % random loss of the UDP flow: within 4 standard errors of the binomial.
    cbr = flows.loc["cbr"]
    n = cbr["sent_packets"]
    lost = cbr["drops_queue"] / n
    assert abs(lost - 0.1) < 4 * (0.09 / n) ** 0.5, lost
    assert any("duplicate accepted, not modelled" in w for w in r.warnings)
