# SPDX-License-Identifier: Apache-2.0
"""The running Linux kernel as the oracle of airsched's tc (docs/kernel-conformance.md).

A tc script is applied line by line with the real ``tc`` to veth devices in a network namespace
made for it (veth, since kernels like this machine's have no dummy driver); each line's verdict
(accepted or refused) and, for a script every line of which is accepted, the tree the kernel
holds — ``tc qdisc show``, ``tc -d class show`` (quantum, burst, cburst) and ``tc -j filter show``
per parent — are compared with what airsched says of the same script. Needs root and
``ip netns``; :func:`unavailable` says why not.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core
from .importer import _pairs, classes_from_text, ematch_text, repair_ematch_json

#: Qdisc kinds a script may use; probed once per namespace. ingress/clsact are not tc trees airsched
#: builds; the rest are airsched's kinds.
PROBE_KINDS = {
    "pfifo": "", "bfifo": "", "pfifo_head_drop": "", "pfifo_fast": "", "prio": "", "sfq": "", "drr": "",
    "htb": "", "tbf": "rate 1mbit burst 10k latency 50ms", "cbq": "bandwidth 10mbit avpkt 1000",
    "red": "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit", "codel": "", "fq_codel": "",
    "pie": "", "fq_pie": "", "netem": "", "fq": "",
    "cake": "",
    "hfsc": "",
    "ets": "bands 2",
}
#: Filter kinds airsched models: the tail of a `tc filter add` (kind included: fw's handle comes
#: before it) probed on an htb root.
PROBE_FILTERS = {"u32": "u32 match u32 0 0 flowid 1:1", "fw": "handle 1 fw classid 1:1", "matchall": "matchall classid 1:1",
                 "flower": "flower ip_proto udp classid 1:1", "basic": "basic match meta(priority eq 0) classid 1:1"}
#: Actions airsched models on filters, probed the same way (act_police is a module of its own).
PROBE_ACTIONS = {"police": "u32 match u32 0 0 action police rate 1mbit burst 10k drop flowid 1:1"}


def unavailable() -> str | None:
    """Why namespaces with veth devices cannot be used here, or None if they can."""
    if os.geteuid() != 0:
        return "needs root (ip netns add)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"{tool} (iproute2) is not installed"
    name = f"airsched-probe-{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return f"ip netns add failed: {p.stderr.strip()}"
    try:
        p = subprocess.run(["ip", "-n", name, "link", "add", "name", "p0", "type", "veth", "peer", "name", "p1"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return f"cannot create a veth pair: {p.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


class Netns:
    """A network namespace with one veth pair per device name (the device and ``<dev>p``), up."""

    _count = 0

    def __init__(self, devices: Sequence[str] = ("eth0", "wlan0")) -> None:
        Netns._count += 1
        self.name = f"airsched-{os.getpid()}-{Netns._count}"
        self.devices = list(devices)

    def __enter__(self) -> Netns:
        self.ip("netns", "add", self.name, ns=False)
        try:
            for dev in self.devices:
                self.ip("link", "add", "name", dev, "type", "veth", "peer", "name", f"{dev}p"[:15])
                self.ip("link", "set", dev, "up")
                self.ip("link", "set", f"{dev}p"[:15], "up")
        except Exception:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)

    def ip(self, *args: str, ns: bool = True) -> str:
        cmd = ["ip"] + (["-n", self.name] if ns else []) + list(args)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{shlex.join(cmd)}: {p.stderr.strip()}")
        return p.stdout

    def tc(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tc", "-n", self.name] + list(args), capture_output=True, text=True)

    def sh(self, script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a shell script inside the namespace."""
        return subprocess.run(["ip", "netns", "exec", self.name, "sh", "-c", script, "sh"] + list(args),
                              capture_output=True, text=True, env={**os.environ, **(env or {})})

    def reset(self) -> None:
        for dev in self.devices:
            self.tc("qdisc", "del", "dev", dev, "root")
            # The receive-path hook (ingress or clsact at ffff:), which a root delete leaves.
            self.tc("qdisc", "del", "dev", dev, "handle", "ffff:", "ingress")
            self.tc("qdisc", "del", "dev", dev, "clsact")

    def kinds(self) -> set[str]:
        """The qdisc and filter kinds this kernel builds (no module loading is assumed)."""
        dev = self.devices[0]
        have = set()
        for kind, opts in PROBE_KINDS.items():
            self.reset()
            if self.tc("qdisc", "add", "dev", dev, "root", "handle", "1:", kind, *opts.split()).returncode == 0:
                have.add(kind)
        for kind, opts in PROBE_FILTERS.items():
            self.reset()
            self.tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb")
            if self.tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", *opts.split()).returncode == 0:
                have.add(kind)
        for kind, opts in PROBE_ACTIONS.items():
            self.reset()
            self.tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb")
            if self.tc("filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", *opts.split()).returncode == 0:
                have.add(kind)
        self.reset()
        return have


def split_commands(text: str) -> list[tuple[int, list[str]]]:
    """A script's commands as (first line, words without a leading ``tc``), as tc -b would see
    them: comments dropped, backslash continuations joined."""
    out: list[tuple[int, list[str]]] = []
    buf, start = "", 0
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        if not buf:
            start = i
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        words = shlex.split(buf)
        buf = ""
        if not words:
            continue
        if words[0] == "tc":
            words = words[1:]
        out.append((start, words))
    return out


_SKIP_ARGS = {"dev", "parent", "handle", "classid", "estimator"}
_SKIP_FILTER_ARGS = _SKIP_ARGS | {"protocol", "proto", "prio", "pref", "chain"}


def kinds_used(text: str) -> set[str]:
    """The qdisc, class and filter kinds a script names (the word after the common arguments),
    for skipping scripts whose kinds the running kernel lacks."""
    used = set()
    for _, w in split_commands(text):
        if len(w) < 3 or w[0] not in ("qdisc", "class", "filter") or w[1] in ("del", "delete", "show"):
            continue
        if w[0] == "filter" and "police" in w:
            used.add("police")
        i = 2
        skip = _SKIP_FILTER_ARGS if w[0] == "filter" else _SKIP_ARGS
        while i < len(w):
            if w[i] in skip:
                i += 3 if w[i] == "estimator" else 2
            elif w[i] in ("root", "ingress", "egress", "clsact"):
                # (a clsact hook is, like the ingress qdisc, part of every kernel with sch_ingress)
                i += 1
            else:
                used.add(w[i])
                break
    return used


def normalise(lines: Iterable[str]) -> list[str]:
    """Show lines without what depends on the running system (refcnt, direct_packets_stat),
    the device's default noqueue, and with automatic handles (8000: and up) renumbered in
    numeric order (the kernel's counter is global since boot; airsched's starts at 8001: per
    script, docs/tc.md), sorted."""
    out = []
    for line in lines:
        line = re.sub(r" refcnt \d+", "", line)
        line = re.sub(r" direct_packets_stat \d+", "", line)
        line = line.rstrip()
        if line and not line.startswith("qdisc noqueue 0:"):
            out.append(line)
    auto = sorted({int(h, 16) for line in out for h in re.findall(r"\b(8[0-9a-f]{3}):", line)})
    names = {f"{h:x}": f"auto{i + 1}" for i, h in enumerate(auto)}
    out = [re.sub(r"\b(8[0-9a-f]{3}):", lambda m: names[m.group(1)] + ":", line) for line in out]
    return sorted(out)


def iproute2_61_size(rate: int, size: int) -> int:
    """What iproute2 before "tc: Fix rounding in tc_calc_xmittime and tc_calc_xmitsize" (2025;
    6.1 here) makes of a burst of ``size`` bytes at ``rate`` bytes/s, with this machine's psched
    clock (tick_in_usec 15.625): it truncates to whole microseconds and whole ticks twice each
    way. airsched follows the fixed tc (round up once), so a class's burst can print 1 byte (and
    at high rates more) larger than this tc makes it."""
    tick_in_usec = 15.625
    us = int(1_000_000 * size / rate)
    ticks = int(us * tick_in_usec)
    back = int(ticks / tick_in_usec)
    return int(rate * back / 1_000_000)


_RATE = {"bit": 1, "kbit": 1000, "mbit": 1000**2, "gbit": 1000**3, "tbit": 1000**4}
_SIZE = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}


def _rate_bytes(word: str) -> int:
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", word)
    assert m, word
    return int(float(m.group(1)) * _RATE[m.group(2).lower()] / 8)


def _size_bytes(word: str) -> int:
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]+)", word)
    assert m, word
    return round(float(m.group(1)) * _SIZE[m.group(2).lower()])


def _fmt_size(n: int) -> str:
    """tc's sprint_size."""
    if n >= 1024 * 1024 and abs(1024 * 1024 * round(n / (1024 * 1024)) - n) < 1024:
        return f"{round(n / (1024 * 1024))}Mb"
    if n >= 1024 and abs(1024 * round(n / 1024) - n) < 16:
        return f"{round(n / 1024)}Kb"
    return f"{n}b"


def adjust_for_old_tc(k: Tree, mine: Tree) -> bool:
    """When the running tc is older than the rounding fix and the kernel's show lines are
    airsched's with bursts as that tc computes them, take those (and say so: True)."""
    if tc_version() < ROUNDING_FIX and k.show != mine.show and k.show == as_iproute2_61(mine.show):
        mine.show = list(k.show)
        return True
    return False


def tc_version() -> tuple[int, int]:
    """The iproute2 version of the tc on the PATH, e.g. (6, 1)."""
    out = subprocess.run(["tc", "-V"], capture_output=True, text=True).stdout
    m = re.search(r"iproute2-(?:ss)?v?(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


#: The first iproute2 with "tc: Fix rounding in tc_calc_xmittime and tc_calc_xmitsize" (posted
#: February 2025; 6.14 is the release after it, not checked against a 6.14 tc).
ROUNDING_FIX = (6, 14)


def as_iproute2_61(lines: Sequence[str]) -> list[str]:
    """airsched's htb class lines with burst and cburst as iproute2 6.1 would have made them from
    the same sizes (see :func:`iproute2_61_size`)."""
    out = []
    for line in lines:
        if line.startswith("class htb ") or line.startswith("class whtb "):
            w = line.split()
            d = {w[i]: i for i in range(len(w) - 1)}
            for key, rkey in (("burst", "rate"), ("cburst", "ceil")):
                if key in d and rkey in d:
                    rate = _rate_bytes(w[d[rkey] + 1])
                    w[d[key] + 1] = _fmt_size(iproute2_61_size(rate, _size_bytes(w[d[key] + 1])))
            line = " ".join(w)
        out.append(line)
    return sorted(out)


@dataclass
class Tree:
    """A device's tree in comparable form."""

    #: ``tc qdisc show`` and ``tc class show`` lines, normalised and sorted.
    show: list[str] = field(default_factory=list)
    #: classid -> quantum (``tc -d class show``; airsched: the same computation, from its report).
    quantum: dict[str, int] = field(default_factory=dict)
    #: (prio, protocol, kind, classid, keys) of every filter, and
    filters: list[tuple[Any, ...]] = field(default_factory=list)
    #: (parent, prio, protocol, kind) of every classifier instance. Two lists, because the
    #: kernel's u32 dump of one parent shows the nodes of every u32 table of the same qdisc and
    #: priority (the tables share one tc_u_common per qdisc): which parent a node hangs from is
    #: not in the dump, only which priorities each parent has.
    protos: list[tuple[Any, ...]] = field(default_factory=list)
    #: every policer as ``tc filter show`` prints it after ``police 0xINDEX`` (rate, burst, mtu,
    #: peakrate, actions, overhead, linklayer), without the index, once per distinct text
    police: list[str] = field(default_factory=list)


def size_bytes(word: str) -> int:
    """A size as tc prints it (``6056b``, ``15Kb``, ``1Mb``) or a bare number, in bytes: DRR
    prints its quantum with a unit, HTB without."""
    if re.fullmatch(r"[0-9]+", word):
        return int(word)
    return _size_bytes(word)


def repair_json(text: str) -> str:
    """iproute2 6.1's ``tc -j filter show`` prints fw's options as text inside the braces
    (``"options":{handle 0x6 classid 1:1 }``, and before a legacy policer's fields
    ``"options":{handle 0x6 classid 1:1 "kind":"police",...}``), and ``tc -j qdisc show`` hfsc's
    (``"options":{default 10 }``), which is not JSON: the words become key/value pairs of the
    object. Well-formed output is returned unchanged."""

    def fix(m: re.Match[str]) -> str:
        words = m.group(1).split()
        pairs = [f"{json.dumps(k)}:{json.dumps(v)}" for k, v in zip(words[::2], words[1::2], strict=False)]
        # With a legacy policer the JSON fields of the police follow the text:
        # ``"options":{handle 0x6 classid 1:1 "kind":"police",...}`` (seen in the guest).
        return '"options":{' + ",".join(pairs) + ("," if m.group(2) == '"' else "") + m.group(2)

    return re.sub(r'"options":\{([^{}"]*[^{}"\s][^{}"]*)(\}|")', fix, repair_ematch_json(text))


def kernel_tree(ns: Netns, dev: str) -> Tree:
    q = ns.tc("qdisc", "show", "dev", dev, "invisible").stdout
    c = ns.tc("class", "show", "dev", dev).stdout
    # The ingress/clsact hook is compared through its filters (below), not as a tree line.
    hook = re.search(r"^qdisc (ingress|clsact) ffff:", q, re.M) is not None
    q = "\n".join(line for line in q.splitlines() if not re.match(r"qdisc (ingress|clsact) ffff:", line))
    t = Tree(show=normalise((q + "\n" + c).splitlines()))
    for cl in classes_from_text(ns.tc("-d", "class", "show", "dev", dev).stdout):
        if "quantum" in cl["opts"]:
            t.quantum[cl["classid"]] = size_bytes(cl["opts"]["quantum"])
    # iproute2 6.1 prints hfsc's options inside tc -j's braces as words, as it does fw's.
    parents = [json.loads(repair_json(ns.tc("-j", "qdisc", "show", "dev", dev).stdout or "[]"))]
    handles = [r["handle"] for r in parents[0] if r.get("kind") not in ("noqueue", "ingress", "clsact")]
    handles += [cl["classid"] for cl in classes_from_text(c)]
    if hook:
        handles.append("ffff:")
    seen: set[tuple[str, str]] = set()
    protos = set()
    police: set[str] = set()
    # hfsc's root class has the qdisc's own handle (`class hfsc 1: root`): ask each parent once.
    for h in dict.fromkeys(handles):
        where = ["ingress"] if h == "ffff:" else ["parent", h]
        police.update(m.group(1).strip() for m in _POLICE.finditer(ns.tc("filter", "show", "dev", dev, *where).stdout))
        out = ns.tc("-j", "filter", "show", "dev", dev, *where).stdout.strip()
        if not out:
            continue
        for f in json.loads(repair_json(out), object_pairs_hook=_pairs):
            o = f.get("options")
            kind = f.get("kind")
            if o is None:
                protos.add((f.get("parent", h), int(f["pref"]), f["protocol"], kind))
                continue
            if kind in ("fw", "matchall"):
                protos.add((f.get("parent", h), int(f["pref"]), f["protocol"], kind))
                t.filters.append((int(f["pref"]), f["protocol"], kind, o.get("classid", o.get("flowid")) or "", ()))
                continue
            if kind == "basic":
                protos.add((f.get("parent", h), int(f["pref"]), f["protocol"], kind))
                t.filters.append((int(f["pref"]), f["protocol"], kind, o.get("flowid", o.get("classid")) or "",
                                  (("ematch", ematch_text(o.get("ematch", ""))),)))
                continue
            if kind == "flower":
                protos.add((f.get("parent", h), int(f["pref"]), f["protocol"], kind))
                t.filters.append((int(f["pref"]), f["protocol"], kind, o.get("classid", o.get("flowid")) or "",
                                  flower_keys(o.get("keys", {}))))
                continue
            # u32: the nodes (a hash table's own entry has neither a flowid nor matches); a node
            # with a policer or an action needs no flowid (class "": none)
            # (the same node shows under its qdisc's and its classes' parents, so it is counted
            # once a device; the ingress hook's nodes are another table, whose handles repeat
            # the egress ones: 800::800)
            node = ("ffff:" if h == "ffff:" else "", o["fh"])
            if kind != "u32" or ("flowid" not in o and "match" not in o) or node in seen:
                continue
            seen.add(node)
            keys = tuple(sorted((int(m["value"], 16), int(m["mask"], 16), int(m["off"])) for m in o.get("match", [])))
            t.filters.append((int(f["pref"]), f["protocol"], "u32", o.get("flowid", ""), keys))
    t.protos = sorted(protos)
    t.filters.sort()
    t.police = sorted(police)
    return t


_IP_PROTO = {"tcp": 6, "udp": 17, "sctp": 132, "icmp": 1, "icmpv6": 58}


def _ipv4(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return a << 24 | b << 16 | c << 8 | d


def flower_keys(keys: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """flower's keys in one comparable form, from the kernel's ``tc -j`` (``"src_ip":
    "10.0.0.0/8"``, ``"dst_port": 80`` or ``{"start": 1000, "end": 2000}``, ``"ip_tos": 184,
    "ip_tos_mask": "fc"``, as iproute2 6.1 prints them in the guest) or from airsched (numbers and pairs): ip_proto a number, addresses (value,
    prefix length), ports (min, max), tos (value, mask)."""
    out: dict[str, Any] = {}
    for k, v in keys.items():
        if k == "ip_proto":
            out[k] = v if isinstance(v, int) else _IP_PROTO[v] if v in _IP_PROTO else int(str(v), 16)
        elif k in ("src_ip", "dst_ip"):
            if isinstance(v, (list, tuple)):
                out[k] = (int(v[0]), int(v[1]))
            else:
                addr, _, plen = str(v).partition("/")
                out[k] = (_ipv4(addr), int(plen) if plen else 32)
        elif k in ("src_port", "dst_port"):
            if isinstance(v, dict):
                out[k] = (int(v["start"]), int(v["end"]))
            elif isinstance(v, (list, tuple)):
                out[k] = (int(v[0]), int(v[1]))
            elif isinstance(v, str) and "-" in v:
                lo, hi = v.split("-")
                out[k] = (int(lo), int(hi))
            else:
                out[k] = (int(v), int(v))
        elif k == "ip_tos":
            # airsched: (value, mask); iproute2 6.1's tc -j: "ip_tos": 184 with "ip_tos_mask": "fc"
            if isinstance(v, (list, tuple)):
                out[k] = (int(v[0]), int(v[1]))
            else:
                out[k] = (int(v), int(str(keys.get("ip_tos_mask", "ff")), 16))
        elif k == "ip_tos_mask":
            continue
        elif k != "eth_type":
            out[k] = v
    return tuple(sorted(out.items()))


#: A policer in ``tc filter show`` text: ``police 0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop overhead 0b``
_POLICE = re.compile(r"police 0x[0-9a-f]+ ([^\n]*)")


_PROTO = {0x0800: "ip", 0x0003: "all"}


def _scenario_with(text: str) -> str:
    # A cell needs a station (an empty one is refused); the tree is the AP's.
    return "[run]\nduration = \"1s\"\n\n[ap]\ntc = " + _core.toml_string(text) + "\n\n[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n"


def airsched_trees(text: str, path: str, devices: Sequence[str], txqueuelen: int = 1000) -> dict[str, Tree]:
    """What airsched builds from the script on each device (the script must have no errors)."""
    checked = _core.tc_check(text, path, [(d, txqueuelen) for d in devices])
    out = {d: Tree() for d in devices}
    for d in checked["devices"]:
        out[d["dev"]].show = normalise((d["qdisc_text"] + d["class_text"]).splitlines())
        out[d["dev"]].quantum = {c: int(q) for c, q in d.get("quanta", [])}
        # Other classes that print a quantum (drr), as the kernel side reads them.
        for cl in classes_from_text(d["class_text"]):
            if "quantum" in cl["opts"] and cl["classid"] not in out[d["dev"]].quantum:
                out[d["dev"]].quantum[cl["classid"]] = size_bytes(cl["opts"]["quantum"])
    if set(devices) <= {"wlan0", "eth0"}:
        info = _core.export_info(_scenario_with(text), path, [])
        ap = next(n for n in info["nodes"] if n["node"] == "ap")
        for t in ap["trees"]:
            fl = []
            protos = set()
            police = set()
            for q in t["qdiscs"]:
                for f in q["filters"]:
                    proto = _PROTO.get(int(f["protocol"]), f"0x{int(f['protocol']):04x}")
                    keys = tuple(sorted(tuple(k) for k in f.get("keys", []))) if f["kind"] == "u32" else ()
                    if f["kind"] == "flower":
                        keys = flower_keys(f["flower"])
                    if f["kind"] == "basic":
                        keys = (("ematch", ematch_text(f["ematch"])),)
                    # The kernel shows the ingress hook's filters under ffff:.
                    parent = "ffff:" if f["parent"] == "ffff:fff2" else f["parent"]
                    # no class id (a filter with only a policer or a redirect): the kernel prints none
                    cid = "" if f["classid"] in ("0:", "0:0") else f["classid"]
                    fl.append((int(f["prio"]), proto, f["kind"], cid, keys))
                    protos.add((parent, int(f["prio"]), proto, f["kind"]))
                    if f.get("police"):
                        police.add(f["police"].split(" ", 1)[1].strip())
            out[t["dev"]].filters = sorted(fl)
            out[t["dev"]].protos = sorted(protos)
            out[t["dev"]].police = sorted(police)
    return out


def airsched_rejects(text: str, path: str, devices: Sequence[str]) -> tuple[set[int], list[str]]:
    """The script lines airsched refuses (errors), and its error lines."""
    try:
        _core.tc_check(text, path, [(d, 1000) for d in devices])
    except _core.ScenarioError as exc:
        errors = getattr(exc, "errors", None) or str(exc).splitlines()
        lines = set()
        for e in errors:
            m = re.match(rf"{re.escape(path)}:(\d+):", e)
            if m:
                lines.add(int(m.group(1)))
        return lines, list(errors)
    return set(), []


@dataclass
class ScriptResult:
    name: str
    skipped: str | None = None
    #: command line -> (kernel accepted, airsched accepted)
    verdicts: dict[int, tuple[bool, bool]] = field(default_factory=dict)
    kernel_errors: dict[int, str] = field(default_factory=dict)
    airsched_errors: list[str] = field(default_factory=list)
    #: device -> (kernel tree, airsched tree), for scripts both accept whole
    trees: dict[str, tuple[Tree, Tree]] = field(default_factory=dict)
    #: the trees agree once airsched's htb bursts are computed as the running (older) tc does
    old_tc_rounding: bool = False
    #: the harness itself failed on this script (an output it could not read): a disagreement
    #: with the reason, and the run goes on with the next script
    error: str | None = None

    @property
    def verdicts_agree(self) -> bool:
        return all(k == a for k, a in self.verdicts.values())

    @property
    def trees_agree(self) -> bool:
        return all(k == a for k, a in self.trees.values())

    @property
    def agrees(self) -> bool:
        return self.skipped is None and self.error is None and self.verdicts_agree and self.trees_agree

    def differences(self) -> list[str]:
        out = [f"harness error: {self.error}"] if self.error else []
        for line, (k, a) in sorted(self.verdicts.items()):
            if k != a:
                out.append(f"line {line}: kernel {'accepts' if k else 'refuses'} ({self.kernel_errors.get(line, '')}), "
                           f"airsched {'accepts' if a else 'refuses'}")
        for dev, (k, a) in self.trees.items():
            for what in ("show", "quantum", "filters", "protos", "police"):
                kv, av = getattr(k, what), getattr(a, what)
                if kv != av:
                    out.append(f"{dev} {what}: kernel {kv!r} != airsched {av!r}")
        return out


def run_script(ns: Netns, path: Path, have: set[str]) -> ScriptResult:
    text = path.read_text()
    res = ScriptResult(path.name)
    lacking = sorted(k for k in kinds_used(text) if k not in have and (k in PROBE_KINDS or k in PROBE_FILTERS or k in PROBE_ACTIONS))
    if lacking:
        res.skipped = f"this kernel lacks {', '.join(lacking)}"
        return res
    ns.reset()
    for dev in ns.devices:
        ns.tc("filter", "del", "dev", dev)
    rejected, errors = airsched_rejects(text, path.name, ns.devices)
    res.airsched_errors = errors
    for line, words in split_commands(text):
        p = ns.tc(*words)
        res.verdicts[line] = (p.returncode == 0, line not in rejected)
        if p.returncode != 0:
            res.kernel_errors[line] = (p.stderr.strip().splitlines() or [""])[-1]
    if not rejected and all(k for k, _ in res.verdicts.values()):
        mine = airsched_trees(text, path.name, ns.devices)
        for dev in ns.devices:
            k = kernel_tree(ns, dev)
            res.old_tc_rounding |= adjust_for_old_tc(k, mine[dev])
            res.trees[dev] = (k, mine[dev])
    ns.reset()
    return res


def run_script_safely(ns: Netns, path: Path, have: set[str]) -> ScriptResult:
    """:func:`run_script`, with a failure of the harness on one script (an output it cannot
    parse) reported as that script's disagreement instead of ending the run."""
    try:
        return run_script(ns, path, have)
    except Exception as exc:  # noqa: BLE001 - any failure is reported in the table
        ns.reset()
        return ScriptResult(path.name, error=f"{type(exc).__name__}: {exc}")


def run_corpus(paths: Sequence[Path]) -> tuple[list[ScriptResult], set[str]]:
    with Netns() as ns:
        have = ns.kinds()
        return [run_script_safely(ns, p, have) for p in paths], have
