# SPDX-License-Identifier: Apache-2.0
"""``airsched export``: a scenario's node as a POSIX shell script that applies it to a Linux box.

The script holds, per device of the node, the qdisc/class/filter tree airsched simulated, as one
``tc -batch`` text of ``add`` commands (the tree the scenario's script *leaves*, from the core's
``tc::declared_trees``: every handle, automatic ones included, and every filter priority are
pinned, so the kernel builds the same tree), the device's txqueuelen, and for the AP of an
802.11n cell the mac80211 knobs airsched models (station airtime weights through ``iw``, the
airtime scheduler's flags and AQL through debugfs).

Modes of the generated script: ``apply`` (default), ``revert``, ``check`` (dry run: what it would
do and what the running system has, and whether the live tree is airsched's). It is idempotent:
``apply`` deletes the device's root qdisc and adds the whole tree again in one batch, and keeps
the values ``revert`` restores in ``$AIRSCHED_STATE_DIR/DEV.state`` (first apply only).

What Linux has no counterpart for is an error (:class:`ExportError`) naming the fallback flag:
``whtb`` (``whtb_as_htb``: the same tree as htb, without ``gate``/``gate_skip``), ``cbq``
(removed in Linux 6.3; ``allow_cbq`` for older kernels), the ath9k airtime scheduler of Linux
4.11-5.0 (``ath9k_as_mac80211``). See docs/export.md.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import __version__, _core
from ._errors import AirschedError, native_errors
from .scenario import ScenarioSource, override_lines

#: mac80211's default station airtime weight (IEEE80211_DEFAULT_AIRTIME_WEIGHT, cfg80211.h).
DEFAULT_AIRTIME_WEIGHT = 256

#: EtherType numbers tc names (``ll_proto_n2a``), for the protocols airsched keeps.
PROTOCOL_NAMES = {0x0800: "ip", 0x0003: "all", 0x86DD: "ipv6", 0x0806: "arp", 0x8100: "802.1q"}


class ExportError(AirschedError, ValueError):
    """The scenario has something the target Linux has no counterpart for (or export lacks an
    input it needs, such as a station's MAC address); the message names what to do."""


@dataclass
class ExportOptions:
    """Named fallbacks for what Linux lacks; each is off by default (the export then fails)."""

    whtb_as_htb: bool = False
    allow_cbq: bool = False
    ath9k_as_mac80211: bool = False


@dataclass
class DevicePlan:
    dev: str
    txqueuelen: int
    batch: list[str] = field(default_factory=list)
    #: (kind, options) of the first qdisc of each kind in the tree, for the preflight probe.
    kinds: list[tuple[str, str]] = field(default_factory=list)
    #: ``tc qdisc show`` + ``tc class show`` lines airsched prints for the tree (normalised).
    expected: list[str] = field(default_factory=list)


@dataclass
class NodePlan:
    node: str
    devices: list[DevicePlan]
    notes: list[str]
    #: (MAC, weight) of the stations of the AP's wlan0.
    weights: list[tuple[str, int]]
    #: debugfs file name under /sys/kernel/debug/ieee80211/PHY/ -> value (AP wlan0 only).
    debugfs: dict[str, str]
    tc_text: str | None


def protocol_word(proto: int) -> str:
    return PROTOCOL_NAMES.get(proto, f"0x{proto:04x}")


def flower_words(keys: dict[str, Any]) -> str:
    """flower's keys (airsched's numbers and pairs, or the kernel's tc -j forms) as tc words."""
    from .kernel import flower_keys

    words = []
    for k, v in flower_keys(keys):
        if k == "ip_proto":
            words += [k, {6: "tcp", 17: "udp", 132: "sctp", 1: "icmp"}.get(v, f"{v:x}")]
        elif k in ("src_ip", "dst_ip"):
            addr = ".".join(str(v[0] >> s & 255) for s in (24, 16, 8, 0))
            words += [k, f"{addr}/{v[1]}"]
        elif k in ("src_port", "dst_port"):
            words += [k, str(v[0]) if v[0] == v[1] else f"{v[0]}-{v[1]}"]
        elif k == "ip_tos":
            words += [k, f"0x{v[0]:x}/0x{v[1]:x}"]
    # tc wants ip_proto before the ports
    order = ["ip_proto", "src_ip", "dst_ip", "src_port", "dst_port", "ip_tos"]
    pairs = sorted(zip(words[::2], words[1::2], strict=True), key=lambda p: order.index(p[0]))
    return " ".join(f"{k} {v}" for k, v in pairs)


def filter_command(dev: str, f: dict[str, Any]) -> str:
    """One declared filter as a ``tc -batch`` line that makes the kernel hold the same filter."""
    # The ingress hook's filters (TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)) go to its ffff:.
    parent = "ffff:" if f["parent"] == "ffff:fff2" else f["parent"]
    head = f"filter add dev {dev} parent {parent} protocol {protocol_word(int(f['protocol']))} prio {f['prio']}"
    kind = f["kind"]
    # The policer (docs/tc-police.md), in the form it was given: u32/fw's own `police`
    # attribute or `action police`; its words carry exact bytes and bits.
    police = ""
    if f.get("police_words"):
        police = (" police " if f.get("police_legacy") and kind in ("u32", "fw", "basic") else " action police ") + f["police_words"]
    if kind == "u32":
        keys = f["keys"] or [(0, 0, 0)]
        matches = " ".join(f"match u32 0x{v:08x} 0x{m:08x} at {off}" for v, m, off in keys)
        return f"{head} u32 {matches}{police} flowid {f['classid']}"
    if kind == "fw":
        mask = int(f["mask"])
        handle = f"0x{int(f['mark']):x}" + ("" if mask == 0xFFFFFFFF else f"/0x{mask:x}")
        return f"{head} handle {handle} fw{police} classid {f['classid']}"
    if kind == "matchall":
        return f"{head} matchall{police} classid {f['classid']}"
    if kind == "flower":
        return f"{head} flower {flower_words(f['flower'])}{police} classid {f['classid']}"
    if kind == "basic":
        from .importer import ematch_words

        match = f" match '{ematch_words(f['ematch'])}'" if f.get("ematch") else ""
        cls = f" classid {f['classid']}" if f["classid"] not in ("0:", "0:0", ":") else ""
        return f"{head} basic{match}{police}{cls}"
    raise ExportError(f"filter kind {kind!r} cannot be exported")


_WHTB_ONLY = re.compile(r"(?:^|\s)(gate|gate_skip)\s+\S+")


def device_batch(dev: str, qdiscs: Sequence[dict[str, Any]], opts: ExportOptions, where: str) -> DevicePlan:
    """The ``tc -batch`` lines that build one device's declared tree from nothing."""
    plan = DevicePlan(dev=dev, txqueuelen=0)
    seen: set[str] = set()
    # Each qdisc right after the class it hangs from, before that class's own child classes: a
    # class that got children after a qdisc was attached to it (hfsc keeps that qdisc, corpus
    # 116) would otherwise get the qdisc as a graft onto an inner class, which the kernel refuses.
    under: dict[str, list[dict[str, Any]]] = {}
    for q in qdiscs:
        under.setdefault(q["parent"], []).append(q)
    ordered: list[dict[str, Any]] = []

    def place(q: dict[str, Any]) -> None:
        ordered.append(q)
        for c in q["classes"]:
            ordered.append({"class": c})
            for child in under.pop(c["classid"], []):
                place(child)

    for q in under.pop("root", []):
        place(q)
    ordered += [q for rest in under.values() for q in rest]
    for item in ordered:
        if "class" in item:
            c = item["class"]
            ckind = "htb" if c["kind"] == "whtb" else c["kind"]
            if ckind == "ets":
                # ets's bands come with the qdisc: a class line changes a band's quantum.
                if c["options"]:
                    plan.batch.append(f"class change dev {dev} classid {c['classid']} ets {c['options']}")
                continue
            plan.batch.append(f"class add dev {dev} parent {c['parent']} classid {c['classid']} {ckind} {c['options']}".rstrip())
            continue
        q = item
        kind, options = q["kind"], q["options"]
        if kind == "whtb":
            if not opts.whtb_as_htb:
                raise ExportError(
                    f"{where}: dev {dev}: qdisc {q['handle']} is whtb, which Linux does not have "
                    "(Garroppo et al.'s channel-aware HTB); export it as htb without gate/gate_skip "
                    "with --whtb-as-htb, or use htb in the scenario"
                )
            kind = "htb"
            options = _WHTB_ONLY.sub("", options).strip()
        if kind == "cbq" and not opts.allow_cbq:
            raise ExportError(
                f"{where}: dev {dev}: qdisc {q['handle']} is cbq, which Linux removed in 6.3 "
                "(\"Specified qdisc kind is unknown\"); use htb, or pass --allow-cbq for a kernel older than 6.3"
            )
        if kind in ("ingress", "clsact"):
            # The receive-path hook (docs/tc-police.md, "The ingress policer"): no tree.
            plan.batch.append(f"qdisc add dev {dev} handle ffff: ingress" if kind == "ingress" else f"qdisc add dev {dev} clsact")
            continue
        place = "root" if q["parent"] == "root" else f"parent {q['parent']}"
        plan.batch.append(f"qdisc add dev {dev} {place} handle {q['handle']} {kind} {options}".rstrip())
        if kind not in seen:
            seen.add(kind)
            plan.kinds.append((kind, options))
    # Filters after every class and qdisc (a flowid may name a class of a deeper qdisc), in the
    # order they run: priorities are pinned, so the kernel runs them in the same order.
    for q in qdiscs:
        for f in q["filters"]:
            plan.batch.append(filter_command(dev, f))
    return plan


def normalise_show(text: str) -> list[str]:
    """``tc qdisc show`` / ``tc class show`` lines without what depends on the running system
    (``refcnt``, ``direct_packets_stat``) and trailing spaces; the generated script does the same
    with sed."""
    out = []
    for line in text.splitlines():
        line = re.sub(r" refcnt \d+", "", line)
        line = re.sub(r" direct_packets_stat \d+", "", line)
        line = line.rstrip()
        if line:
            out.append(line)
    return out


def plan_node(source: ScenarioSource, node: str, overrides: Iterable[str] | None = None,
              opts: ExportOptions | None = None) -> NodePlan:
    """Everything the script for ``node`` (``ap``, ``server`` or a station's name) applies."""
    opts = opts or ExportOptions()
    lines = override_lines(overrides)
    with native_errors():
        info = _core.export_info(source.text, source.path, lines)
    nodes = {n["node"]: n for n in info["nodes"]}
    if node not in nodes:
        raise ExportError(f"{source.path}: no node {node!r}; this scenario has {', '.join(nodes)}")
    n = nodes[node]
    where = n.get("tc_file") or source.path
    notes: list[str] = []
    trees = {t["dev"]: t["qdiscs"] for t in n["trees"]}
    devices = []
    expected: dict[str, list[str]] = {}
    if n.get("tc_text") is not None:
        text = n["tc_text"]
        if opts.whtb_as_htb:
            # what the script builds: htb in place of whtb, without whtb's own options
            text = _WHTB_ONLY.sub("", re.sub(r"\bwhtb\b", "htb", text))
        with native_errors():
            checked = _core.tc_check(text, where, [(d, n["txqueuelen"]) for d in n["devices"]])
        if checked.get("redirects") or any(d["dev"] not in n["devices"] for d in checked["devices"]):
            # ifb/imq devices (docs/tc.md): the apply script would have to create them and
            # their hooks, and revert remove them; not written yet, so refuse rather than
            # write a script that silently leaves them out.
            raise ExportError(
                f"{where}: node {node}'s script uses ifb/imq devices ({'; '.join(checked.get('redirects', []))}); "
                "airsched export does not write ip link, clsact and mirred lines yet"
            )
        for d in checked["devices"]:
            expected[d["dev"]] = sorted(normalise_show(d["qdisc_text"] + d["class_text"]))
    for dev in n["devices"]:
        plan = device_batch(dev, trees.get(dev, []), opts, where) if dev in trees else DevicePlan(dev, 0)
        plan.txqueuelen = int(n["txqueuelen"])
        plan.expected = expected.get(dev, [])
        if dev not in trees:
            notes.append(
                f"{dev}: the scenario has no tree for it; airsched simulated a pfifo of txqueuelen "
                f"({plan.txqueuelen}) packets; the script leaves the device's own default qdisc"
            )
        if any(k == "cbq" for k, _ in plan.kinds):
            notes.append(f"{dev}: cbq exists only in kernels older than 6.3 (--allow-cbq)")
        devices.append(plan)
    if node == "ap" and info.get("pcf"):
        notes.append(
            "the scenario's AP is a point coordinator (cell.pcf); Linux (mac80211, hostapd) has no "
            "point coordinator, so the real AP runs DCF only and its numbers will differ"
        )
    if node == "ap":
        for key, why in info.get("simulator_only", []):
            notes.append(
                f"{key} has no kernel setting: {why}; the script sets nothing for it and the real AP's "
                "numbers will differ"
            )
    weights: list[tuple[str, int]] = []
    debugfs: dict[str, str] = {}
    if node == "ap" and info["standard"] == "Dot11n":
        airtime = info["airtime"]
        if airtime == "ath9k":
            if not opts.ath9k_as_mac80211:
                raise ExportError(
                    f"{source.path}: ap.airtime = \"ath9k\": ath9k's own airtime scheduler exists only in "
                    "Linux 4.11 to 5.0; current kernels schedule airtime in mac80211 "
                    "(--ath9k-as-mac80211 exports mac80211's scheduler instead)"
                )
            notes.append("ap.airtime = \"ath9k\" exported as mac80211's airtime scheduler (--ath9k-as-mac80211)")
            airtime = "mac80211"
        if info["mac_queue"] == "fifo":
            notes.append(
                "ap.mac_queue = \"fifo\" (ath9k's driver FIFO before Linux 4.10) has no setting in current "
                "kernels, which always queue in mac80211's intermediate queues; nothing is set for it"
            )
        if info["mac_queue"] == "fq-mac" and info.get("fq_kernel") == "4.11":
            notes.append(
                "ap.fq_kernel = \"4.11\": FQ-MAC's overflow policy and CoDel parameters of Linux 4.11 have no "
                "setting in current kernels, which run 6.x's; nothing is set for it"
            )
        if airtime == "mac80211":
            # mac80211 debugfs airtime_flags: AIRTIME_USE_TX = 1, AIRTIME_USE_RX = 2.
            debugfs["airtime_flags"] = "3" if info.get("airtime_rx", True) else "1"
            # AQL's limits: airsched uses the kernel's defaults (5000/12000 us per AC), so only
            # aql_enable is written.
            debugfs["aql_enable"] = "1" if info["aql"] else "0"
            for st in info["stations"]:
                w = st["airtime_weight"]
                if w is None or w == DEFAULT_AIRTIME_WEIGHT:
                    continue
                if not st["mac"]:
                    raise ExportError(
                        f"{source.path}: station[{st['name']}].airtime_weight = {w}: a weight is set per MAC "
                        f"address; add mac = \"02:00:00:00:00:01\" (the station's address) to station {st['name']}"
                    )
                weights.append((st["mac"], int(w)))
        else:
            debugfs["airtime_flags"] = "0"
            notes.append("ap.airtime = \"off\": mac80211's airtime accounting is turned off (airtime_flags 0)")
    return NodePlan(node, devices, notes, weights, debugfs, n.get("tc_text"))


def scenario_hash(source: ScenarioSource, overrides: Iterable[str] | None) -> str:
    h = hashlib.sha256(source.text.encode())
    for line in override_lines(overrides):
        h.update(b"\0" + line.encode())
    return h.hexdigest()


def _comment(text: str) -> list[str]:
    return [("# " + line).rstrip() for line in text.splitlines()]


def _printing_function(name: str, lines: list[str]) -> list[str]:
    """A shell function ``name`` that prints ``lines`` (a quoted here-document: nothing in them
    is expanded), or does nothing when there are none."""
    if not lines:
        return [f"{name}() {{", "    :", "}"]
    return [f"{name}() {{", "    cat <<'AIRSCHED_EOF'", *lines, "AIRSCHED_EOF", "}"]


def render_script(source: ScenarioSource, plan: NodePlan, overrides: Iterable[str] | None = None) -> str:
    """The POSIX shell script for one node's plan."""
    ov = override_lines(overrides)
    out: list[str] = [
        "#!/bin/sh",
        f"# Generated by airsched {__version__} (airsched export) for node {plan.node} of {source.path}",
        f"# scenario sha256 {scenario_hash(source, overrides)}" + (f" with --set {' '.join(ov)}" if ov else ""),
        "# Target: Linux with iproute2 tc (checked against Linux 6.18 and iproute2 6.1; see docs/export.md),",
        "# iw for airtime weights, debugfs for mac80211's airtime flags and AQL.",
        "#",
        "# Usage: sh apply.sh [apply|revert|check] [--skip-wifi]",
        "#   apply   build every device's tree (deleting what is there first), set txqueuelen and the",
        "#           mac80211 knobs; safe to run again. Remembers what it changed in $AIRSCHED_STATE_DIR.",
        "#   revert  delete the root qdiscs (the kernel's default comes back), restore txqueuelen,",
        "#           station weights (256) and the debugfs values.",
        "#   check   dry run: print what apply would do, what the running system has, and whether the",
        "#           live tree is airsched's.",
        "#   --skip-wifi  leave airtime weights and debugfs alone (a device that is not mac80211).",
    ]
    for note in plan.notes:
        out.append(f"# note: {note}")
    if plan.tc_text is not None:
        out.append("#")
        out.append("# The scenario's tc script, as written:")
        out += _comment(plan.tc_text)
    devs = " ".join(d.dev for d in plan.devices)
    out += [
        "",
        "set -eu",
        'TC="${TC:-tc}"',
        'IP="${IP:-ip}"',
        'IW="${IW:-iw}"',
        'STATE_DIR="${AIRSCHED_STATE_DIR:-/var/run/airsched}"',
        'MODE="apply"',
        "SKIP_WIFI=0",
        'for arg in "$@"; do',
        '    case "$arg" in',
        "        apply|revert|check) MODE=\"$arg\" ;;",
        "        --skip-wifi) SKIP_WIFI=1 ;;",
        '        *) echo "usage: $0 [apply|revert|check] [--skip-wifi]" >&2; exit 2 ;;',
        "    esac",
        "done",
        f'DEVICES="{devs}"',
        "",
        'say() { echo "airsched: $*" >&2; }',
        'die() { echo "airsched: error: $*" >&2; exit 1; }',
        "",
        "# What airsched simulated, per device: the tc batch and the tc show lines.",
    ]
    for d in plan.devices:
        fn = _fn(d.dev)
        out += _printing_function(f"batch_{fn}", d.batch)
        out += _printing_function(f"expected_{fn}", d.expected)
        out.append(f"txqueuelen_{fn}() {{ echo {d.txqueuelen}; }}")
        kinds = " ".join(shlex.quote(f"{k} {o}".strip()) for k, o in d.kinds)
        kinds = kinds or "''"
        out.append(f"kinds_{fn}() {{ for k in {kinds}; do [ -n \"$k\" ] && echo \"$k\"; done; true; }}")
    weights = " ".join(f"{mac}={w}" for mac, w in plan.weights)
    debugfs = " ".join(f"{k}={v}" for k, v in plan.debugfs.items())
    wifi_dev = "wlan0" if plan.node == "ap" and (plan.weights or plan.debugfs) else ""
    out += [
        f'WEIGHTS="{weights}"',
        f'DEBUGFS="{debugfs}"',
        f'WIFI_DEV="{wifi_dev}"',
        "",
        _BODY,
    ]
    return "\n".join(out) + "\n"


def _fn(dev: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", dev)


# The script's logic; the data above it differs per scenario. POSIX sh (dash, busybox ash).
_BODY = r"""fn() { echo "$1" | sed 's/[^A-Za-z0-9_]/_/g'; }
# tc show lines as airsched prints them: with the default qdiscs under classes (invisible),
# without what depends on the running system, sorted.
live_show() {
    { "$TC" qdisc show dev "$1" invisible; "$TC" class show dev "$1"; } 2>/dev/null |
        sed -e 's/ refcnt [0-9]*//' -e 's/ direct_packets_stat [0-9]*//' -e 's/[[:space:]]*$//' -e '/^$/d' \
            -e '/^qdisc noqueue 0: /d' | LC_ALL=C sort
}
# The same without burst and cburst values: iproute2 before 6.14 rounds bursts down (by a byte
# or more), so a tree can be airsched's but for them.
no_bursts() { sed -e 's/ burst [^ ]*/ burst -/' -e 's/ cburst [^ ]*/ cburst -/'; }
verdict() {
    live=$(live_show "$1"); want=$(expected_$2)
    if [ "$live" = "$want" ]; then
        echo "it is airsched's"
    elif [ "$(echo "$live" | no_bursts)" = "$(echo "$want" | no_bursts)" ]; then
        echo "it is airsched's but for burst/cburst, which this tc rounds differently (iproute2 before 6.14)"
    else
        echo "differs"
    fi
}
phy_of() { cat "/sys/class/net/$1/phy80211/name" 2>/dev/null || true; }

preflight() {
    command -v "$TC" >/dev/null 2>&1 || die "tc (iproute2) not found"
    command -v "$IP" >/dev/null 2>&1 || die "ip (iproute2) not found"
    for dev in $DEVICES; do
        "$IP" link show dev "$dev" >/dev/null 2>&1 || die "device $dev does not exist on this system"
    done
    # Each qdisc kind must exist in the running kernel: try it on a throwaway veth pair.
    probe="airschedp$$"
    if "$IP" link add "$probe" type veth peer name "${probe}b" >/dev/null 2>&1; then
        for dev in $DEVICES; do
            f=$(fn "$dev")
            kinds_$f | while IFS= read -r k; do
                # shellcheck disable=SC2086
                if ! "$TC" qdisc add dev "$probe" root $k >/dev/null 2>&1; then
                    "$IP" link del "$probe" >/dev/null 2>&1 || true
                    die "this kernel cannot build qdisc '$k' (missing module or kind); nothing was changed"
                fi
                "$TC" qdisc del dev "$probe" root >/dev/null 2>&1 || true
            done || { "$IP" link del "$probe" >/dev/null 2>&1 || true; exit 1; }
        done
        "$IP" link del "$probe" >/dev/null 2>&1 || true
    else
        say "note: cannot create a veth pair to probe the qdisc kinds; they are checked when applied"
    fi
    if [ -n "$WIFI_DEV" ] && [ "$SKIP_WIFI" = 0 ]; then
        [ -z "$WEIGHTS" ] || command -v "$IW" >/dev/null 2>&1 || die "iw not found (needed for airtime weights; --skip-wifi to leave them)"
        [ -n "$(phy_of "$WIFI_DEV")" ] || die "$WIFI_DEV is not a mac80211 device (--skip-wifi to leave the wifi settings alone)"
    fi
}

apply_wifi() {
    [ -n "$WIFI_DEV" ] || return 0
    if [ "$SKIP_WIFI" = 1 ]; then say "wifi settings skipped (--skip-wifi)"; return 0; fi
    phy=$(phy_of "$WIFI_DEV")
    for kv in $DEBUGFS; do
        k=${kv%%=*}; v=${kv#*=}; f="/sys/kernel/debug/ieee80211/$phy/$k"
        if [ -w "$f" ]; then
            grep -q "^OLD_DEBUGFS_$k=" "$STATE_DIR/$WIFI_DEV.wifi" 2>/dev/null ||
                echo "OLD_DEBUGFS_$k=$(head -n1 "$f" | tr -cd '0-9')" >>"$STATE_DIR/$WIFI_DEV.wifi"
            echo "$v" >"$f"
        else
            say "note: $f is not writable (no debugfs, or the driver lacks it): $k stays as the kernel has it"
        fi
    done
    for kv in $WEIGHTS; do
        mac=${kv%%=*}; w=${kv#*=}
        "$IW" dev "$WIFI_DEV" station set "$mac" airtime_weight "$w" ||
            say "warning: could not set the airtime weight of $mac (not associated, or no AIRTIME_FAIRNESS in iw list)"
    done
}

revert_wifi() {
    [ -n "$WIFI_DEV" ] || return 0
    [ "$SKIP_WIFI" = 0 ] || return 0
    phy=$(phy_of "$WIFI_DEV")
    if [ -f "$STATE_DIR/$WIFI_DEV.wifi" ]; then
        while IFS='=' read -r k v; do
            k=${k#OLD_DEBUGFS_}; f="/sys/kernel/debug/ieee80211/$phy/$k"
            [ -w "$f" ] && echo "$v" >"$f"
        done <"$STATE_DIR/$WIFI_DEV.wifi"
        rm -f "$STATE_DIR/$WIFI_DEV.wifi"
    fi
    for kv in $WEIGHTS; do
        "$IW" dev "$WIFI_DEV" station set "${kv%%=*}" airtime_weight 256 || true
    done
}

do_apply() {
    preflight
    mkdir -p "$STATE_DIR"
    for dev in $DEVICES; do
        f=$(fn "$dev")
        state="$STATE_DIR/$dev.state"
        if [ ! -f "$state" ]; then
            echo "OLD_TXQUEUELEN=$(cat "/sys/class/net/$dev/tx_queue_len")" >"$state"
        fi
        "$IP" link set dev "$dev" txqueuelen "$(txqueuelen_$f)"
        if [ -n "$(batch_$f)" ]; then
            "$TC" qdisc del dev "$dev" root >/dev/null 2>&1 || true
            if ! batch_$f | "$TC" -batch -; then
                "$TC" qdisc del dev "$dev" root >/dev/null 2>&1 || true
                die "tc refused the tree of $dev (it is back to the kernel's default qdisc)"
            fi
        fi
        v=$(verdict "$dev" "$f")
        if [ "$v" = "differs" ]; then
            say "warning: $dev: the live tree differs from airsched's:"
            live_show "$dev" | sed 's/^/  live:     /' >&2
            expected_$f | sed 's/^/  airsched: /' >&2
        else
            say "$dev: tree applied; $v"
        fi
    done
    apply_wifi
}

do_revert() {
    for dev in $DEVICES; do
        state="$STATE_DIR/$dev.state"
        f=$(fn "$dev")
        if [ -n "$(batch_$f)" ]; then
            "$TC" qdisc del dev "$dev" root >/dev/null 2>&1 || true
        fi
        if [ -f "$state" ]; then
            old=$(sed -n 's/^OLD_TXQUEUELEN=//p' "$state")
            [ -z "$old" ] || "$IP" link set dev "$dev" txqueuelen "$old"
            rm -f "$state"
        fi
        say "$dev: reverted"
    done
    revert_wifi
}

do_check() {
    for dev in $DEVICES; do
        f=$(fn "$dev")
        echo "== $dev"
        echo "would set txqueuelen $(txqueuelen_$f) (now: $(cat "/sys/class/net/$dev/tx_queue_len" 2>/dev/null || echo 'no such device'))"
        if [ -n "$(batch_$f)" ]; then
            echo "would run: $TC qdisc del dev $dev root; $TC -batch - <<EOF"
            batch_$f
            echo "EOF"
        fi
        echo "the running system has:"
        live_show "$dev" | sed 's/^/  /'
        if [ -n "$(expected_$f)" ]; then
            v=$(verdict "$dev" "$f")
            if [ "$v" = "differs" ]; then
                echo "the live tree is not airsched's, which is:"
                expected_$f | sed 's/^/  /'
            else
                echo "the live tree: $v"
            fi
        fi
    done
    if [ -n "$WIFI_DEV" ]; then
        echo "== $WIFI_DEV (mac80211)"
        for kv in $DEBUGFS; do echo "would write ${kv#*=} to /sys/kernel/debug/ieee80211/PHY/${kv%%=*}"; done
        for kv in $WEIGHTS; do echo "would run: $IW dev $WIFI_DEV station set ${kv%%=*} airtime_weight ${kv#*=}"; done
        if [ -n "$WEIGHTS" ] && command -v "$IW" >/dev/null 2>&1; then
            echo "the stations' weights now:"
            "$IW" dev "$WIFI_DEV" station dump 2>/dev/null | grep -E '^Station|airtime weight' | sed 's/^/  /' || true
        fi
    fi
}

case "$MODE" in
    apply) do_apply ;;
    revert) do_revert ;;
    check) do_check ;;
esac
"""


def export_script(source: ScenarioSource, node: str = "ap", overrides: Iterable[str] | None = None,
                  opts: ExportOptions | None = None) -> str:
    """The apply script of ``node`` (see the module documentation)."""
    plan = plan_node(source, node, overrides, opts)
    return render_script(source, plan, overrides)


def sqm_config(source: ScenarioSource, node: str = "ap", overrides: Iterable[str] | None = None,
               warnings: list[str] | None = None) -> str:
    """The OpenWrt ``/etc/config/sqm`` section for a node whose tree fits sqm-scripts' model, which
    is one shaper at the root of a device: a root ``tbf`` (with no leaf or an fq_codel leaf) or a
    root ``htb`` with one class whose leaf is fq_codel (``simplest_tbf.qos`` / ``simplest.qos``).
    A root ``cake`` alone on a device is ``piece_of_cake.qos`` (besteffort) or ``layer_cake.qos``,
    with cake's words sqm-scripts does not write itself in ``eqdisc_opts``.
    Anything else is an ExportError that says so. What sqm-scripts does differently from the
    tree (simplest_tbf.qos always puts fq_codel under the tbf and computes the tbf's burst and
    latency itself) is appended to ``warnings`` and written as comments in the section."""
    plan_node(source, node, overrides)  # the same refusals as the apply script (whtb, cbq, ...)
    lines = override_lines(overrides)
    with native_errors():
        info = _core.export_info(source.text, source.path, lines)
    n = next(x for x in info["nodes"] if x["node"] == node)
    sections = []
    for t in n["trees"]:
        qs = t["qdiscs"]
        root = qs[0]
        rate = None
        script = None
        notes = []
        cake_lines: list[str] = []
        if root["kind"] == "tbf" and (len(qs) == 1 or (len(qs) == 2 and qs[1]["kind"] == "fq_codel")):
            rate = _option(root["options"], "rate")
            script = "simplest_tbf.qos"
            if len(qs) == 1:
                notes.append("sqm-scripts' simplest_tbf.qos puts an fq_codel leaf under the tbf; this tree's tbf has none")
            kept = [f"{k} {_option(root['options'], k)}" for k in ("burst", "latency", "limit", "peakrate", "mtu")
                    if _option(root["options"], k) is not None]
            if kept:
                notes.append(f"simplest_tbf.qos sets the tbf's burst and latency itself: this tree's {', '.join(kept)} "
                             "are not carried")
        elif (root["kind"] == "htb" and len(root["classes"]) == 1 and len(qs) <= 2
              and all(q["kind"] == "fq_codel" for q in qs[1:])):
            rate = _option(root["classes"][0]["options"], "rate")
            script = "simplest.qos"
        elif root["kind"] == "cake" and len(qs) == 1:
            rate, script, cake_lines = _sqm_cake(root["options"], notes)
        if rate is None or script is None:
            raise ExportError(
                f"{source.path}: node {node} dev {t['dev']}: the tree ({', '.join(q['kind'] for q in qs)}) does not fit "
                "sqm-scripts' one-shaper model (a root tbf, a root htb with one class and an fq_codel leaf, or a root cake "
                "with a bandwidth); "
                "use the apply script instead"
            )
        kbit = _rate_kbit(rate)
        qdisc_lines = ["\toption qdisc 'fq_codel'", f"\toption script '{script}'", "\toption linklayer 'none'"]
        if root["kind"] == "cake":
            qdisc_lines = ["\toption qdisc 'cake'", f"\toption script '{script}'", *cake_lines]
        for note in notes:
            if warnings is not None:
                warnings.append(f"node {node} dev {t['dev']}: {note}")
        sections.append(
            "\n".join([
                *(f"# {note}" for note in notes),
                f"config queue '{_fn(t['dev'])}'",
                "\toption enabled '1'",
                f"\toption interface '{t['dev']}'",
                "\toption download '0'",
                f"\toption upload '{kbit}'",
                *qdisc_lines,
            ])
        )
    if not sections:
        raise ExportError(f"{source.path}: node {node} has no tc tree to express as sqm")
    return "\n\n".join(sections) + "\n"


def _sqm_cake(options: str, notes: list[str]) -> tuple[str | None, str, list[str]]:
    """A root cake as sqm-scripts writes one: the rate (None if unlimited, which sqm's upload
    cannot say), the script (piece_of_cake.qos appends ``besteffort`` itself; layer_cake.qos
    keeps defaults.sh's diffserv3), and the section's link-layer and advanced-option lines.
    sqm-scripts' cake link-layer adaptation writes ``overhead N`` (and ``mpu N``) and ``atm`` for
    an ATM link; cake's words beyond those and the defaults go to ``eqdisc_opts``."""
    # The script's words as the kernel keeps them: cake's own `tc qdisc show` line (keywords such
    # as `ethernet` or `docsis` resolved into overhead, mpu and framing).
    shown = _core.tc_check(f"tc qdisc add dev eth0 root cake {options}", "sqm.tc", [("eth0", 1000)])
    line = shown["devices"][0]["qdisc_text"].splitlines()[0]
    options = line.split(" refcnt 2 ", 1)[1]
    w = options.split()
    rate = _option(options, "bandwidth")
    if rate == "unlimited":
        rate = None
    script = "piece_of_cake.qos" if "besteffort" in w else "layer_cake.qos"
    lines: list[str] = []
    if "raw" in w:
        lines.append("\toption linklayer 'none'")
    else:
        lines += ["\toption linklayer 'atm'" if "atm" in w else "\toption linklayer 'ethernet'",
                  f"\toption overhead '{_option(options, 'overhead') or 0}'", "\toption linklayer_advanced '1'",
                  "\toption linklayer_adaptation_mechanism 'cake'"]
        if _option(options, "mpu"):
            lines.append(f"\toption tcMPU '{_option(options, 'mpu')}'")
        if "ptm" in w:
            notes.append("sqm-scripts' cake link-layer adaptation has no PTM framing: the 64b/65b overhead is not carried")
    extra: list[str] = []
    defaults = {"bandwidth", "unlimited", "besteffort", "diffserv3", "triple-isolate", "nonat", "nowash", "no-ack-filter",
                "split-gso", "raw", "noatm", "atm", "ptm"}
    valued = {"bandwidth", "overhead", "mpu"}
    i = 0
    while i < len(w):
        x = w[i]
        if x in valued:
            i += 2
            continue
        if x == "rtt":
            if w[i + 1] != "100ms":
                extra += ["rtt", w[i + 1]]
            i += 2
            continue
        if x in ("memlimit", "fwmark"):
            extra += w[i:i + 2]
            i += 2
            continue
        if x not in defaults:
            extra.append(x)
        i += 1
    if extra:
        lines += ["\toption qdisc_advanced '1'", f"\toption eqdisc_opts '{' '.join(extra)}'"]
    return rate, script, lines


def _option(words: str, key: str) -> str | None:
    w = words.split()
    for i, x in enumerate(w[:-1]):
        if x == key:
            return w[i + 1]
    return None


_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "kibit": 1024, "mibit": 1024**2,
               "gibit": 1024**3, "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}


def _rate_kbit(rate: str) -> int:
    m = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", rate)
    if not m:
        raise ExportError(f"cannot read rate {rate!r}")
    unit = m.group(2).lower() or "bit"
    if unit not in _RATE_UNITS:
        raise ExportError(f"cannot read rate {rate!r}")
    return round(float(m.group(1)) * _RATE_UNITS[unit] / 1000)
