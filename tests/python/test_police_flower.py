# SPDX-License-Identifier: Apache-2.0
"""The police action and the flower classifier end to end: a run against the analytic policed
rate, export and import round trips (docs/tc-police.md, docs/tc-flower.md)."""

from __future__ import annotations

import pytest

from airsched import _core, behaviour, export, importer


def _police_case(tc: str) -> behaviour.Case:
    return behaviour.Case("t", tc, (("a", 5001, 6_000_000), ("b", 5002, 2_000_000)))


def test_a_policer_passes_its_rate_and_flower_picks_exactly_its_flow() -> None:
    # flow a (dport 5001) policed to 4 Mbit/s of frames; b untouched. Over the measured 3 s
    # (after 1 s warm-up, which the 20 KiB burst is spent in) a gets R * 1000/1042 of payload.
    want = 4.0 * 1000 / 1042
    for tc in (
        "tc qdisc add dev eth0 root handle 1: prio\n"
        "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff "
        "police rate 4mbit burst 20k drop flowid 1:1\n",
        "tc qdisc add dev eth0 root handle 1: prio\n"
        "tc filter add dev eth0 parent 1: protocol ip prio 1 flower ip_proto udp dst_port 5001 "
        "action police rate 4mbit burst 20k conform-exceed drop/ok classid 1:1\n",
    ):
        got = behaviour.run_airsched(_police_case(tc), 4.0)
        assert got["a"][0] == pytest.approx(want, rel=0.01), tc
        assert got["b"][0] == pytest.approx(2.0, rel=0.01), tc


def test_hfsc_and_ets_drop_what_their_filters_policer_shoots() -> None:
    # hfsc_classify and ets_classify return no class for TC_ACT_SHOT: the packet is dropped, so
    # flow a gets the policed rate under either root, as under prio above.
    want = 4.0 * 1000 / 1042
    police = ("tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff "
              "police rate 4mbit burst 20k drop flowid 1:{minor}\n")
    for tc in (
        "tc qdisc add dev eth0 root handle 1: hfsc default 20\n"
        "tc class add dev eth0 parent 1: classid 1:10 hfsc ls m2 50mbit\n"
        "tc class add dev eth0 parent 1: classid 1:20 hfsc ls m2 50mbit\n" + police.format(minor=10),
        "tc qdisc add dev eth0 root handle 1: ets bands 3 strict 3\n" + police.format(minor=1),
    ):
        got = behaviour.run_airsched(_police_case(tc), 4.0)
        assert got["a"][0] == pytest.approx(want, rel=0.01), tc
        assert got["b"][0] == pytest.approx(2.0, rel=0.01), tc


def test_continue_hands_the_exceeding_packets_to_the_next_filter() -> None:
    # The exceeding part of a goes on to prio 2, which sends it to band 3: nothing is lost.
    tc = ("tc qdisc add dev eth0 root handle 1: prio\n"
          "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff "
          "police rate 4mbit burst 20k continue flowid 1:1\n"
          "tc filter add dev eth0 parent 1: protocol ip prio 2 u32 match u32 0 0 flowid 1:3\n")
    got = behaviour.run_airsched(_police_case(tc), 3.0)
    assert got["a"][0] == pytest.approx(6.0, rel=0.01)


SCRIPT = """tc qdisc add dev eth0 root handle 1: htb default 1
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 1mbit burst 10k mtu 1500 conform-exceed drop/pipe flowid 1:1
tc filter add dev eth0 parent 1: protocol ip prio 2 flower ip_proto tcp src_ip 10.0.0.0/8 dst_port 1000-2000 ip_tos 0xb8/0xfc action police rate 2mbit burst 20k peakrate 4mbit mtu 1600 drop classid 1:1
tc filter add dev eth0 parent 1: protocol all prio 3 matchall action police rate 8mbit burst 100k overhead 14 linklayer atm reclassify classid 1:1
"""


def _filters(text: str) -> list[dict]:
    scn = "[run]\nduration = \"1s\"\n\n[server]\ntc = " + _core.toml_string(text) + "\n\n[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n"
    info = _core.export_info(scn, "t.toml", [])
    node = next(n for n in info["nodes"] if n["node"] == "server")
    return [f for t in node["trees"] for q in t["qdiscs"] for f in q["filters"]]


def test_export_writes_policers_and_flower_keys_that_build_the_same_filters() -> None:
    fl = _filters(SCRIPT)
    assert [f["police"] for f in fl] == [
        "0x1 rate 1Mbit burst 10Kb mtu 1500b action drop/pipe overhead 0b",
        "0x2 rate 2Mbit burst 20Kb mtu 1600b peakrate 4Mbit action drop overhead 0b",
        "0x3 rate 8Mbit burst 100Kb mtu 2Kb action reclassify overhead 14b linklayer atm",
    ]
    lines = [export.filter_command("eth0", f) for f in fl]
    assert "u32 match u32 0x00001389 0x0000ffff at 20 police rate 1000000bit burst 10240 mtu 1500 conform-exceed drop/pipe flowid 1:1" in lines[0]
    assert ("flower ip_proto tcp src_ip 10.0.0.0/8 dst_port 1000-2000 ip_tos 0xb8/0xfc action police rate 2000000bit "
            "burst 20480 mtu 1600 peakrate 4000000bit conform-exceed drop classid 1:1") in lines[1]
    # What export wrote builds the same filters (keys, policers, classes).
    again = _filters("\n".join(["tc qdisc add dev eth0 root handle 1: htb default 1",
                                "tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit"] + ["tc " + x for x in lines]) + "\n")
    assert [(f["kind"], f.get("keys"), f.get("flower"), f["police"], f["classid"]) for f in again] == \
        [(f["kind"], f.get("keys"), f.get("flower"), f["police"], f["classid"]) for f in fl]


def test_import_reads_policers_and_flower_from_tc_show() -> None:
    # As the Debian 6.1 kernel with iproute2 6.1 printed them in the QEMU guest.
    text = """filter parent 1: protocol ip pref 1 u32 chain 0
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800: ht divisor 1
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 flowid 1:1 not_in_hw
  match 00001389/0000ffff at 20
 police 0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop/pipe overhead 0b
\tref 1 bind 1
"""
    w: list[str] = []
    fl = importer.filters_from_text(text, w, "t", "1:")
    assert fl[0]["police"] == "rate 1Mbit burst 10Kb conform-exceed drop/pipe" and fl[0]["police_legacy"]
    js = [{"protocol": "ip", "pref": 2, "kind": "flower", "chain": 0},
          {"protocol": "ip", "pref": 2, "kind": "flower", "chain": 0,
           "options": {"handle": 1, "classid": "1:1", "keys": {"eth_type": "ipv4", "ip_proto": "tcp", "src_ip": "10.0.0.0/8",
                                                                "dst_port": {"start": 1000, "end": 2000}, "ip_tos": 184, "ip_tos_mask": "fc"},
                       "not_in_hw": True}}]
    fl = importer.filters_from_json(js, w, "t", "1:")
    assert export.flower_words(fl[0]["flower"]) == "ip_proto tcp src_ip 10.0.0.0/8 dst_port 1000-2000 ip_tos 0xb8/0xfc"
