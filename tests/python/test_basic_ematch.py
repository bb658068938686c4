# SPDX-License-Identifier: Apache-2.0
"""The basic classifier with ematch trees end to end: a run that classifies by the tree (and
polices a flow to the analytic rate), export and import round trips of the printed tree, and
import of what the Debian 6.1 guest's tc printed (docs/tc-basic.md)."""

from __future__ import annotations

import pytest

from airsched import _core, behaviour, export, importer


def _case(tc: str) -> behaviour.Case:
    return behaviour.Case("t", tc, (("a", 5001, 6_000_000), ("b", 5002, 2_000_000)))


def test_the_tree_picks_exactly_its_flow_and_its_policer_passes_the_rate() -> None:
    # cmp on the UDP destination port (transport layer) and a u32 ematch on the protocol byte:
    # flow a (dport 5001) is policed to 4 Mbit/s of frames, so it gets R * 1000/1042 of payload
    # over the measured window; b (dport 5002) is not matched and keeps its 2 Mbit/s.
    want = 4.0 * 1000 / 1042
    tc = ("tc qdisc add dev eth0 root handle 1: prio\n"
          "tc filter add dev eth0 parent 1: protocol ip prio 1 basic match "
          "'u32(u8 17 0xff at 9) and cmp(u16 at 2 layer transport eq 5001)' "
          "action police rate 4mbit burst 20k conform-exceed drop/ok classid 1:1\n")
    got = behaviour.run_airsched(_case(tc), 4.0)
    assert got["a"][0] == pytest.approx(want, rel=0.01)
    assert got["b"][0] == pytest.approx(2.0, rel=0.01)
    # not: the same tree inverted polices b instead (down to its 2 Mbit/s offered, i.e. nothing
    # lost, while a passes whole).
    inv = tc.replace("'u32(u8 17 0xff at 9) and cmp(", "'not (u32(u8 17 0xff at 9) and cmp(").replace("5001)'", "5001))'")
    inv = inv.replace("rate 4mbit", "rate 1mbit")
    got = behaviour.run_airsched(_case(inv), 4.0)
    assert got["a"][0] == pytest.approx(6.0, rel=0.01)
    assert got["b"][0] == pytest.approx(1.0 * 1000 / 1042, rel=0.01)


SCRIPT = """tc qdisc add dev eth0 root handle 1: htb default 1
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1: classid 1:2 htb rate 10mbit
tc filter add dev eth0 parent 1: protocol ip prio 1 basic match 'not u32(u16 0x1f90 0xffff at nexthdr+2) or (meta(nf_mark gt 24) and not cmp(u16 at 2 layer transport eq 80))' flowid 1:2
tc filter add dev eth0 parent 1: protocol ip prio 2 basic match 'cmp(u32 at 12 layer 2 trans gt 0x80000000) and meta(nf_mark shift 2 mask 0xff0 lt 100)' classid 1:1 action police rate 1mbit burst 10k conform-exceed drop/pipe
tc filter add dev eth0 parent 1: protocol ip prio 3 basic classid 1:2 police rate 2mbit burst 20k drop
"""


def _filters(text: str) -> list[dict]:
    scn = "[run]\nduration = \"1s\"\n\n[server]\ntc = " + _core.toml_string(text) + "\n\n[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n"
    info = _core.export_info(scn, "t.toml", [])
    node = next(n for n in info["nodes"] if n["node"] == "server")
    return [f for t in node["trees"] for q in t["qdiscs"] for f in q["filters"]]


def test_export_writes_the_printed_tree_back_as_words_that_build_the_same_filters() -> None:
    fl = _filters(SCRIPT)
    assert fl[0]["ematch"] == ("\n  NOT u32(00001f90/0000ffff at nexthdr+0)\n  OR (\n    meta(nf_mark gt 24)\n"
                               "    AND NOT cmp(u16 at 2 layer 2 eq 80)\n  ) ")
    assert fl[2]["ematch"] == "" and fl[2]["police_legacy"]
    lines = [export.filter_command("eth0", f) for f in fl]
    assert ("basic match 'NOT u32(u32 0x00001f90 0x0000ffff at nexthdr+0) OR ( meta(nf_mark gt 24) AND NOT "
            "cmp(u16 at 2 layer 2 eq 80) )' classid 1:2") in lines[0]
    assert "layer 2 trans gt -2147483648) AND meta(nf_mark shift 2 mask 0x00000ff0 lt 100)' action police" in lines[1]
    assert lines[2].endswith("basic police rate 2000000bit burst 20480 conform-exceed drop classid 1:2")
    head = SCRIPT.splitlines()[:3]
    again = _filters("\n".join(head + ["tc " + x for x in lines]) + "\n")
    key = [(f["kind"], f["ematch"], f["police"], f["classid"], f["prio"]) for f in fl]
    assert [(f["kind"], f["ematch"], f["police"], f["classid"], f["prio"]) for f in again] == key


# What `tc filter show` and `tc -j filter show` printed in the Debian 6.1 guest (iproute2 6.1).
GUEST_TEXT = """filter parent 1: protocol ip pref 2 basic chain 0 
filter parent 1: protocol ip pref 2 basic chain 0 handle 0x1 flowid 1:20 
  NOT u32(00001f90/0000ffff at nexthdr+0)
  OR (
    meta(nf_mark gt 24)
    AND NOT cmp(u16 at 2 layer 2 eq 80)
  ) 
filter parent 1: protocol ip pref 3 basic chain 0 
filter parent 1: protocol ip pref 3 basic chain 0 handle 0x1 flowid 1:20 
  meta(protocol eq 8)
  AND u32(00110000/00ff0000 at 8)

\taction order 1:  police 0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop/pipe overhead 0b 
\tref 1 bind 1 

filter parent 1: protocol ip pref 5 basic chain 0 
filter parent 1: protocol ip pref 5 basic chain 0 handle 0x1 flowid 1:10 
 police 0x2 rate 2Mbit burst 20Kb mtu 2Kb action reclassify overhead 0b 
\tref 1 bind 1 

"""

GUEST_JSON = ('[{"protocol":"ip","pref":1,"kind":"basic","chain":0},{"protocol":"ip","pref":1,"kind":"basic","chain":0,'
              '"options":{"handle":"1","flowid":"1:10"\n  cmp(u8 at 1 layer 1 mask 0xfc eq 184)\n  AND meta(priority eq 6)\n}},'
              '{"protocol":"ip","pref":3,"kind":"basic","chain":0},{"protocol":"ip","pref":3,"kind":"basic","chain":0,'
              '"options":{"handle":"1","flowid":"1:20"\n  meta(protocol eq 8)\n  AND u32(00110000/00ff0000 at 8)\n,"actions":'
              '[{"order":1,"kind":"police","index":1,"control_action":{"type":"drop"},"control_action":{"type":"pipe"},'
              '"overhead":0,"ref":1,"bind":1}]}},{"protocol":"ip","pref":39,"kind":"basic","chain":0},{"protocol":"ip","pref":39,'
              '"kind":"basic","chain":0,"options":{"handle":"1","flowid":"1:10"\n  (\n    (\n      meta(priority eq 7)\n    )   ) }}]')


def test_import_reads_basic_from_the_guests_text_and_json() -> None:
    w: list[str] = []
    fl = importer.filters_from_text(GUEST_TEXT, w, "t", "1:")
    assert [(f["pref"], f["classid"], f["ematch"], f.get("police")) for f in fl] == [
        (2, "1:20", "NOT u32(00001f90/0000ffff at nexthdr+0) OR ( meta(nf_mark gt 24) AND NOT cmp(u16 at 2 layer 2 eq 80) )", None),
        (3, "1:20", "meta(protocol eq 8) AND u32(00110000/00ff0000 at 8)", "rate 1Mbit burst 10Kb conform-exceed drop/pipe"),
        (5, "1:10", "", "rate 2Mbit burst 20Kb conform-exceed reclassify"),
    ]
    assert not fl[1]["police_legacy"] and fl[2]["police_legacy"]
    fl = importer.filters_from_json(importer._json(GUEST_JSON, "t") or [], w, "t", "1:")
    assert [(f["pref"], f["ematch"]) for f in fl] == [
        (1, "cmp(u8 at 1 layer 1 mask 0xfc eq 184) AND meta(priority eq 6)"),
        (3, "meta(protocol eq 8) AND u32(00110000/00ff0000 at 8)"),
        (39, "( ( meta(priority eq 7) ) )"),
    ]
    # The imported words build the tree the guest printed.
    script = ("tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit\n"
              + "".join(f"tc filter add dev eth0 parent 1: protocol ip prio {f['pref']} basic match "
                        f"'{importer.ematch_words(f['ematch'])}' classid 1:10\n" for f in fl))
    assert [importer.ematch_text(f["ematch"]) for f in _filters(script)] == [f["ematch"] for f in fl]


INGRESS = """tc qdisc add dev eth0 handle ffff: ingress
tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop flowid 1:1
tc filter add dev eth0 parent ffff: protocol ip prio 3 basic match 'meta(priority eq 0)' action police rate 2mbit burst 10k conform-exceed drop/ok
"""


def _qdiscs(text: str) -> list[dict]:
    scn = "[run]\nduration = \"1s\"\n\n[server]\ntc = " + _core.toml_string(text) + "\n\n[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n"
    info = _core.export_info(scn, "t.toml", [])
    node = next(n for n in info["nodes"] if n["node"] == "server")
    return [q for t in node["trees"] for q in t["qdiscs"]]


def test_the_ingress_hook_exports_and_builds_again() -> None:
    qs = _qdiscs(INGRESS)
    assert [(q["kind"], q["handle"], q["parent"]) for q in qs] == [("ingress", "ffff:", "ffff:fff1")]
    plan = export.device_batch("eth0", qs, export.ExportOptions(), "t")
    assert plan.batch[0] == "qdisc add dev eth0 handle ffff: ingress"
    assert plan.kinds == []  # nothing to probe as a root qdisc
    assert all(" parent ffff: " in line for line in plan.batch[1:])
    again = _qdiscs("".join(f"tc {line}\n" for line in plan.batch))
    pick = [(f["kind"], f["prio"], f["police"], f.get("ematch")) for q in qs for f in q["filters"]]
    assert [(f["kind"], f["prio"], f["police"], f.get("ematch")) for q in again for f in q["filters"]] == pick
    # A run with the hook on the AP's eth0 and traffic from the server: each policer passes its
    # rate of IP datagrams (the MAC header is pulled on ingress), R * 1000/1028 of goodput; b
    # (priority 0, 2 Mbit/s of payload) meets the basic filter's 2 Mbit/s policer.
    case = _case("")
    text = behaviour.scenario_text(case, 4.0).replace("[server]\ntc = \"\"", "[ap]\ntc = " + _core.toml_string(INGRESS))
    from airsched.runner import run

    flows = {row["name"]: row["goodput_mbps"] for _, row in run(text=text).flows.iterrows()}
    assert flows["a"] == pytest.approx(4.0 * 1000 / 1028, rel=0.01)
    assert flows["b"] == pytest.approx(2.0 * 1000 / 1028, rel=0.01)


def test_a_runs_json_results_carry_the_policers_counters() -> None:
    from airsched.runner import run

    tc = ("tc qdisc add dev eth0 root handle 1: prio\n"
          "tc filter add dev eth0 parent 1: protocol ip prio 1 basic match 'cmp(u16 at 2 layer transport eq 5001)' "
          "action police rate 4mbit burst 20k conform-exceed drop/ok classid 1:1\n")
    res = run(text=behaviour.scenario_text(_case(tc), 4.0))
    js = res.to_json_dict()["tc"]
    eth = next(i for i in js if i["node"] == "server" and i["dev"] == "eth0")
    [p] = eth["policers"]
    assert (p["parent"], p["prio"], p["kind"], p["index"]) == ("1:", 1, "basic", 1)
    assert p["police"] == "0x1 rate 4Mbit burst 20Kb mtu 2Kb action drop overhead 0b"
    # Egress: every packet of flow a, 1042 bytes at the qdisc; what exceeded was dropped.
    assert p["bytes"] == p["packets"] * 1042 and p["drops"] == p["overlimits"] > 0
    assert f"Sent {p['bytes']} bytes {p['packets']} pkt (dropped {p['drops']}, overlimits {p['overlimits']} requeues 0)" in p["text"]
    # Interfaces without a policer have no such key (the JSON of other runs is unchanged).
    assert all("policers" not in i for i in js if i is not eth)
