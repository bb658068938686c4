# SPDX-License-Identifier: Apache-2.0
"""cake through the Python front end (issue 23): `airsched import` reads iproute2's `tc -j` and text
lines of a cake back into tc commands that rebuild the same qdisc, and `airsched export --form sqm`
writes a root cake as sqm-scripts' piece_of_cake.qos or layer_cake.qos."""

from __future__ import annotations

import json

from airsched import _core
from airsched.export import sqm_config
from airsched.importer import DeviceInput, import_devices
from airsched.scenario import load


def _shown(text: str) -> str:
    return _core.tc_check(text, "imported.tc", [("eth0", 1000)])["devices"][0]["qdisc_text"].strip()


# As iproute2 6.1's q_cake.c prints them (cake_print_opt: bandwidth in bytes/s, rtt in us).
CAKE_JSON = json.dumps([{"kind": "cake", "handle": "1:", "root": True, "refcnt": 2, "options": {
    "bandwidth": 2500000, "diffserv": "diffserv4", "flowmode": "dual-srchost", "nat": False, "wash": False,
    "ingress": False, "ack-filter": "aggressive", "split_gso": True, "rtt": 30000, "raw": False, "atm": "ptm",
    "overhead": 34, "mpu": 64}}])
CAKE_TEXT = ("qdisc cake 1: root refcnt 2 bandwidth 20Mbit diffserv4 dual-srchost nonat nowash ack-filter-aggressive "
             "split-gso rtt 30ms ptm overhead 34 mpu 64\n")


def test_cake_json_and_text_import_and_rebuild_the_same_qdisc() -> None:
    for given in (CAKE_JSON, CAKE_TEXT):
        r = import_devices([DeviceInput("eth0", given, "", {})])
        assert _shown(r.text) == CAKE_TEXT.strip(), r.text


def test_cake_defaults_import_from_the_forms_tc_cannot_read_back() -> None:
    # tc prints "bandwidth unlimited" and "rtt 1e+03s" but reads neither.
    text = ("qdisc cake 8001: root refcnt 2 bandwidth unlimited diffserv3 triple-isolate nonat nowash no-ack-filter "
            "split-gso rtt 1e+03s raw overhead 0\n")
    r = import_devices([DeviceInput("eth0", text, "", {})])
    assert "unlimited" in r.text and "rtt 1000000000us" in r.text
    assert _shown(r.text).split(" ", 3)[3] == text.strip().split(" ", 3)[3]
    js = json.dumps([{"kind": "cake", "handle": "8001:", "root": True, "refcnt": 2, "options": {
        "bandwidth": "unlimited", "diffserv": "diffserv3", "flowmode": "triple-isolate", "nat": False, "wash": False,
        "ingress": False, "ack-filter": "disabled", "split_gso": True, "rtt": 100000, "raw": True, "overhead": 0}}])
    r = import_devices([DeviceInput("eth0", js, "", {})])
    assert _shown(r.text).endswith("bandwidth unlimited diffserv3 triple-isolate nonat nowash no-ack-filter split-gso "
                                   "rtt 100ms raw overhead 0")


SCENARIO = """
[run]
duration = "1s"
[[station]]
name = "sta1"
rate = "11Mbps"
ip = "192.168.1.2"
[ap]
tc = "tc qdisc add dev eth0 root cake bandwidth 20mbit {opts}"
"""


def test_sqm_form_writes_piece_of_cake_and_layer_cake() -> None:
    def sqm(opts: str) -> str:
        return sqm_config(load(text=SCENARIO.format(opts=opts)))

    poc = sqm("besteffort ethernet nat dual-srchost")
    assert "option script 'piece_of_cake.qos'" in poc and "option qdisc 'cake'" in poc
    assert "option upload '20000'" in poc
    assert "option linklayer 'ethernet'" in poc and "option overhead '38'" in poc and "option tcMPU '84'" in poc
    assert "option eqdisc_opts 'dual-srchost nat'" in poc
    lc = sqm("diffserv4 rtt 50ms")
    assert "option script 'layer_cake.qos'" in lc and "option linklayer 'none'" in lc
    assert "option eqdisc_opts 'diffserv4 rtt 50ms'" in lc
    plain = sqm("")
    assert "option script 'layer_cake.qos'" in plain and "eqdisc_opts" not in plain
