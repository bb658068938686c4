# SPDX-License-Identifier: Apache-2.0
"""The running kernel as the oracle of airsched's tc: every script of tests/python/kernel_corpus
is applied line by line with the real tc to veth devices in a network namespace, and airsched
must give the kernel's verdict on every line and, for scripts the kernel accepts whole, the
kernel's tree (tc qdisc/class show lines, leaf quanta from tc -d, filters from tc -j).

Needs root and ip netns (CI runs as root); skipped with the reason otherwise. Scripts using a
kind the running kernel lacks are skipped by name. docs/kernel-conformance.md has the table
and how to run the corpus in a QEMU guest with a distribution kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from airsched import kernel

CORPUS = sorted((Path(__file__).parent / "kernel_corpus").glob("*.tc"))
REASON = kernel.unavailable()

#: Scripts where airsched knowingly differs from the kernel (docs/kernel-conformance.md). Strict:
#: the test fails when one of them starts to agree, so this list stays true.
KNOWN: dict[str, str] = {}


def test_the_corpus_has_at_least_fifty_scripts_good_and_broken() -> None:
    assert len(CORPUS) >= 50
    broken = [p for p in CORPUS if "-bad-" in p.name]
    assert len(broken) >= 10


def test_splitting_joins_continuations_and_drops_comments() -> None:
    text = "# c\ntc qdisc add dev eth0 root \\\n  htb default 1  # tail\n\nclass add dev eth0 parent 1: classid 1:1 htb rate 1mbit\n"
    assert kernel.split_commands(text) == [
        (2, ["qdisc", "add", "dev", "eth0", "root", "htb", "default", "1"]),
        (5, ["class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb", "rate", "1mbit"]),
    ]


@pytest.fixture(scope="module")
def netns():
    if REASON:
        pytest.skip(f"kernel conformance: {REASON}")
    with kernel.Netns() as ns:
        ns.have = ns.kinds()
        yield ns


@pytest.mark.parametrize("script", CORPUS, ids=[p.stem for p in CORPUS])
def test_airsched_gives_the_kernels_verdict_and_tree(netns, script: Path) -> None:
    res = kernel.run_script(netns, script, netns.have)
    if res.skipped:
        pytest.skip(f"{script.name}: {res.skipped}")
    assert res.verdicts, "no commands run"
    if script.name in KNOWN:
        assert not res.agrees, f"{script.name} now agrees with the kernel: remove it from KNOWN"
        pytest.xfail(KNOWN[script.name])
    assert res.agrees, "\n".join([script.name] + res.differences() + res.airsched_errors)
    if "-bad-" in script.name:
        # A broken script is broken for both: the kernel refuses at least one line.
        assert not all(k for k, _ in res.verdicts.values())
    else:
        assert res.trees, "a good script's trees are compared"


def test_the_harness_sees_a_difference_when_airsched_is_wrong(netns) -> None:
    """The comparison is not vacuous: a tree airsched would build differently is reported."""
    netns.reset()
    netns.tc("qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "10")
    netns.tc("class", "add", "dev", "eth0", "parent", "1:", "classid", "1:10", "htb", "rate", "1mbit")
    k = kernel.kernel_tree(netns, "eth0")
    mine = kernel.airsched_trees("tc qdisc add dev eth0 root handle 1: htb default 10\n"
                                 "tc class add dev eth0 parent 1: classid 1:10 htb rate 2mbit\n", "x.tc", ["eth0"])["eth0"]
    assert k.show != mine.show
    assert k.quantum == {"1:10": 12500} and mine.quantum == {"1:10": 25000}
    netns.reset()


def test_without_root_or_netns_the_reason_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel.os, "geteuid", lambda: 1000)
    assert kernel.unavailable() == "needs root (ip netns add)"
    monkeypatch.setattr(kernel.os, "geteuid", lambda: 0)
    monkeypatch.setattr(kernel.shutil, "which", lambda tool: None if tool == "tc" else "/sbin/ip")
    assert kernel.unavailable() == "tc (iproute2) is not installed"


def test_old_tc_burst_rounding_is_iproute2_61s_arithmetic() -> None:
    # Values read on this machine's iproute2 6.1 (docs/kernel-conformance.md, 5.)
    assert kernel.iproute2_61_size(900_000 // 8, 1600) == 1599
    assert kernel.iproute2_61_size(1_000_000_000 // 8, 1600) == 1375
    assert kernel.iproute2_61_size(300_000_000 // 8, 15 * 1024) == 15300
    assert kernel.as_iproute2_61(["class htb 1:1 root rate 1Gbit ceil 1Gbit burst 1600b cburst 1600b"]) == [
        "class htb 1:1 root rate 1Gbit ceil 1Gbit burst 1375b cburst 1375b"
    ]


def test_iproute2_61_fw_options_are_read_as_an_object() -> None:
    # iproute2 6.1 prints cls_fw's options as text inside the braces (issue 23)
    text = '[{"protocol":"ip","pref":1,"kind":"fw","chain":0},{"protocol":"ip","pref":1,"kind":"fw","chain":0,' \
           '"options":{handle 0x6 classid 1:1 }}]'
    data = kernel.json.loads(kernel.repair_json(text))
    assert data[1]["options"] == {"handle": "0x6", "classid": "1:1"}
    good = '[{"kind":"u32","options":{"fh":"800:","flowid":"1:1"}}]'
    assert kernel.repair_json(good) == good
    # and with a legacy policer its fields follow the text (the Debian 6.1 guest, corpus 128)
    text = '[{"kind":"fw","options":{handle 0x6 classid 1:1 "kind":"police","index":1,' \
           '"control_action":{"type":"reclassify"},"overhead":0,"ref":1,"bind":1}}]'
    data = kernel.json.loads(kernel.repair_json(text))
    assert data[0]["options"]["classid"] == "1:1" and data[0]["options"]["control_action"] == {"type": "reclassify"}


def test_sizes_are_read_with_or_without_a_unit() -> None:
    # DRR prints its quantum with a unit (6056b), HTB without.
    assert [kernel.size_bytes(w) for w in ("6056b", "1514", "15Kb", "1Mb")] == [6056, 1514, 15360, 1 << 20]


def test_the_filter_probes_name_each_kind_once() -> None:
    # The probe is the whole tail after "prio 1": fw's handle goes before its kind, which an
    # earlier probe repeated ("fw handle 1 fw ..."), so fw and matchall were always refused.
    for kind, tail in kernel.PROBE_FILTERS.items():
        assert kernel.kinds_used(f"tc filter add dev eth0 parent 1: protocol ip prio 1 {tail}") == {kind}
        assert tail.split().count(kind) == (2 if kind == "u32" else 1), tail


def test_a_harness_failure_is_one_scripts_disagreement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class FakeNs:
        def reset(self) -> None:
            pass

    def boom(ns, path, have):
        raise ValueError("invalid literal for int() with base 10: '6056b'")

    monkeypatch.setattr(kernel, "run_script", boom)
    res = kernel.run_script_safely(FakeNs(), tmp_path / "64-drr.tc", set())  # type: ignore[arg-type]
    assert not res.agrees and res.differences() == ["harness error: ValueError: invalid literal for int() with base 10: '6056b'"]


def test_drr_quanta_are_compared_too() -> None:
    text = (CORPUS[0].parent / "64-drr.tc").read_text()
    mine = kernel.airsched_trees(text, "64-drr.tc", ["eth0", "wlan0"])["eth0"]
    assert mine.quantum == {"1:1": 6056, "1:2": 1514}
