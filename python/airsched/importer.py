# SPDX-License-Identifier: Apache-2.0
"""``airsched import``: a running Linux box's tc configuration as a scenario's tc text.

Input per device, as iproute2 prints it (iproute2 6.1 is what this follows; see docs/export.md):

* ``tc -j qdisc show dev DEV`` (JSON; ``-s`` statistics are ignored), or its text form;
* ``tc class show dev DEV`` (text: iproute2 6.1 prints classes as text even with ``-j``; a JSON
  array, as a later tc may print, is read by field name on a best-effort basis, not checked
  against such a tc; ``-d`` adds ``quantum``, which is imported);
* ``tc -j filter show dev DEV parent X`` for the root qdisc and each class (JSON, or the text).

Output: ``tc qdisc|class|filter add`` lines that build the same tree (handles, parents, options,
filter priorities and u32 keys as the kernel holds them). What airsched does not model (an
``ingress``/``clsact`` qdisc and its filters, a kind airsched lacks) is left out with a
``# not imported: ...`` comment and a warning, never silently.

This module is called ``importer`` because ``import`` is a Python keyword.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import AirschedError, line_col

#: Qdisc kinds that are a device's default, not configuration (nothing to import).
DEFAULT_KINDS = {"noqueue", "mq", "noop"}
#: Qdisc kinds airsched does not model at all (egress only).
INGRESS_KINDS = {"ingress", "clsact"}


class ImportError_(AirschedError, ValueError):
    """The input cannot be read as tc output; the message names the device, input and line."""


@dataclass
class DeviceInput:
    """What tc printed for one device."""

    dev: str
    qdisc: str
    classes: str = ""
    #: parent (``1:``, ``1:10``) -> ``tc [-j] filter show dev DEV parent X`` output.
    filters: dict[str, str] = field(default_factory=dict)


@dataclass
class Imported:
    text: str
    warnings: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON objects as tc -j prints them: u32's repeated "match" keys are kept, as a list."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k == "match":
            out.setdefault("match", []).append(v)
        else:
            out[k] = v
    return out


#: An ``"options":{...}`` block of words, not JSON: iproute2 6.1 prints hfsc's options (and fw's)
#: with fprintf inside tc -j's braces (``"options":{default 10 }``).
_RAW_OPTIONS = re.compile(r'"options":\s*\{([^{}"]*[^{}"\s][^{}"]*)\}')


def _raw_options_json(m: re.Match[str]) -> str:
    """Such a block as an object: ``words`` (the words in order, what hfsc's import reads) and the
    words paired as keys and values (what fw's needs)."""
    words = m.group(1).split()
    pairs = "".join(f",{json.dumps(k)}:{json.dumps(v)}" for k, v in zip(words[::2], words[1::2], strict=False))
    return '"options":{"words":' + json.dumps(words) + pairs + "}"


#: cls_basic's ematch tree, which iproute2 6.1 prints with fprintf in the middle of tc -j's
#: output (``"flowid":"1:10"\n  cmp(u8 at 1 layer 1 eq 17)\n}``, as the Debian 6.1 guest showed):
#: the text from a value's closing quote to the next ``}`` or ``,"``.
_EMATCH_RAW = re.compile(r'"(\n  [^{}"]*?)(?=\}|,")')


def repair_ematch_json(text: str) -> str:
    """basic's printed ematch text inside ``tc -j`` output as an ``"ematch"`` string field."""
    return _EMATCH_RAW.sub(lambda m: '","ematch":' + json.dumps(m.group(1)), text)


def ematch_text(printed: str) -> str:
    """An ematch tree as printed (any layout), one space between words."""
    return " ".join(printed.split())


def ematch_words(printed: str) -> str:
    """tc words for an ematch tree as ``tc filter show`` prints it (docs/tc-basic.md): the text
    reads back as it is, except em_u32's ``u32(00110000/00ff0000 at 8)``, which becomes
    ``u32(u32 0x00110000 0x00ff0000 at 8)``."""
    return re.sub(r"u32\(([0-9a-f]{8})/([0-9a-f]{8}) at ", r"u32(u32 0x\1 0x\2 at ", ematch_text(printed))


def _json(text: str, where: str) -> list[dict[str, Any]] | None:
    """``text`` as tc -j's JSON array of objects, or None if it is not JSON (tc's text form).
    Anything that starts as JSON but is not an array of objects is an :class:`ImportError_`."""
    s = text.strip()
    if not s.startswith(("[", "{")):
        return None
    s = _RAW_OPTIONS.sub(_raw_options_json, repair_ematch_json(s))
    try:
        data = json.loads(s, object_pairs_hook=_pairs)
    except json.JSONDecodeError as exc:
        raise ImportError_(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise ImportError_(f"{where}: not valid JSON: nested too deeply") from None
    if not isinstance(data, list):
        raise ImportError_(f"{where}: expected a JSON array, as tc -j prints, got a JSON {_json_type(data)}")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise ImportError_(f"{where}: entry {i}: expected a JSON object, as tc -j prints, got a JSON {_json_type(item)}")
    return data


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _field(rec: dict[str, Any], key: str, where: str, i: int, kind: type | tuple[type, ...] = str) -> Any:
    """``rec[key]``, which must be there and of type ``kind``; else an :class:`ImportError_`
    naming the entry."""
    if key not in rec:
        raise ImportError_(f"{where}: entry {i}: no \"{key}\" field (tc -j prints one in each entry)")
    v = rec[key]
    if not isinstance(v, kind) or isinstance(v, bool):
        raise ImportError_(f"{where}: entry {i}: \"{key}\" is a JSON {_json_type(v)}, not what tc -j prints there")
    return v


def _check_qdisc_json(data: list[dict[str, Any]], where: str) -> None:
    for i, q in enumerate(data):
        _field(q, "kind", where, i)
        _field(q, "handle", where, i)
        if "parent" in q:
            _field(q, "parent", where, i)
        if q.get("options") is not None:
            _field(q, "options", where, i, dict)


def _check_filter_json(data: list[dict[str, Any]], where: str) -> None:
    for i, f in enumerate(data):
        if f.get("options") is None:
            continue
        _field(f, "options", where, i, dict)
        _field(f, "kind", where, i)
        _field(f, "pref", where, i, int)
        if "parent" in f:
            _field(f, "parent", where, i)


def _num(v: Any) -> int:
    return int(v, 0) if isinstance(v, str) else int(v)


def _hexnum(v: Any) -> str:
    """A handle-like value as tc reads it back (``0x10`` stays hexadecimal)."""
    return v if isinstance(v, str) else hex(int(v))


def _rate_bits(bytes_per_s: int) -> str:
    return f"{bytes_per_s * 8}bit"


def qdisc_options_from_json(kind: str, o: dict[str, Any]) -> str | None:
    """The tc option words that rebuild a qdisc from its ``tc -j qdisc show`` options (iproute2
    6.1's print_opt functions name the fields); None if the kind is not one airsched models."""
    if kind == "cake":
        return _cake_words_from_json(o)
    if kind == "hfsc":
        return qdisc_options_from_words(kind, list(o.get("words", [])))
    if kind == "ets":
        # q_ets.c: bands, strict (when not 0), the sharing bands' quanta, the 16-entry priomap.
        ew = ["bands", str(o["bands"])] + (["strict", str(o["strict"])] if o.get("strict") else [])
        ew += ["quanta"] + [str(q) for q in o["quanta"]] if o.get("quanta") else []
        return " ".join(ew + ["priomap"] + [str(p) for p in o.get("priomap", [])])
    w: list[str] = []
    if kind == "htb":
        w += ["r2q", str(o["r2q"])] if "r2q" in o else []
        w += ["default", _hexnum(o.get("default", "0"))]
        if "direct_qlen" in o:
            w += ["direct_qlen", str(o["direct_qlen"])]
    elif kind in ("pfifo", "bfifo", "pfifo_head_drop"):
        if "limit" in o:
            w += ["limit", str(o["limit"])]
    elif kind == "pfifo_fast":
        pass  # no options: bands and priomap are fixed
    elif kind == "tbf":
        w += ["rate", _rate_bits(_num(o["rate"])), "burst", str(_num(o["burst"]))]
        if "peakrate" in o:
            w += ["peakrate", _rate_bits(_num(o["peakrate"]))]
            if "mtu" in o:
                w += ["mtu", str(_num(o["mtu"]))]
        if "limit" in o:
            w += ["limit", str(_num(o["limit"]))]
        elif "lat" in o:
            w += ["latency", f"{_num(o['lat'])}us"]
    elif kind == "prio":
        w += ["bands", str(o.get("bands", 3))]
        if "priomap" in o:
            w += ["priomap"] + [str(x) for x in o["priomap"]]
    elif kind == "sfq":
        for k in ("limit", "quantum", "depth", "divisor"):
            if k in o:
                w += [k, str(o[k])]
        if o.get("perturb"):
            w += ["perturb", f"{_num(o['perturb'])}"]
    elif kind in ("fq_codel", "codel"):
        for k in ("limit", "flows", "quantum"):
            if k in o:
                w += [k, str(o[k])]
        for k in ("target", "interval"):
            if k in o:
                w += [k, f"{_num(o[k])}us"]
        if "ecn" in o:
            w += ["ecn" if o["ecn"] else "noecn"]
    elif kind == "drr":
        pass
    elif kind in ("pie", "fq_pie"):
        # q_pie.c / q_fq_pie.c print target and tupdate in microseconds, sizes in bytes, the
        # flags only when set.
        for k in ("limit", "flows"):
            if k in o:
                w += [k, str(_num(o[k]))]
        for k in ("target", "tupdate"):
            if k in o:
                w += [k, f"{_num(o[k])}us"]
        for k in ("alpha", "beta", "quantum", "memory_limit", "ecn_prob"):
            if k in o:
                w += [k, str(_num(o[k]))]
        w += [k for k in ("ecn", "bytemode", "dq_rate_estimator") if o.get(k)]
    elif kind == "netem":
        w += _netem_from_json(o)
    elif kind == "fq":
        # iproute2 6.1 fq_print_opt: sizes in bytes, rates in bytes per second, refill_delay,
        # ce_threshold and horizon in microseconds, timer_slack in nanoseconds.
        for k in ("limit", "flow_limit", "buckets", "orphan_mask", "quantum", "initial_quantum"):
            if k in o:
                w += [k, str(_num(o[k]))]
        if o.get("pacing") is False:
            w += ["nopacing"]
        for k in ("maxrate", "low_rate_threshold"):
            if k in o:
                w += [k, _rate_bits(_num(o[k]))]
        for k in ("refill_delay", "ce_threshold", "horizon"):
            if k in o:
                w += [k, f"{_num(o[k])}us"]
        if "timer_slack" in o:
            w += ["timer_slack", f"{_num(o['timer_slack'])}ns"]
        if "horizon_drop" in o:
            w += ["horizon_drop" if o["horizon_drop"] else "horizon_cap"]
    else:
        return None
    return " ".join(w)


def _pct(frac: Any) -> str:
    """A fraction as iproute2's netem JSON prints it (0.01), as tc reads it back (``1%``)."""
    return f"{float(frac) * 100:.10g}%"


def _secs(v: Any) -> str:
    """Seconds (netem's JSON times) as tc reads them back, in whole nanoseconds."""
    return f"{round(float(v) * 1e9)}ns"


def _netem_from_json(o: dict[str, Any]) -> list[str]:
    """iproute2 6.1 netem_print_opt's JSON: objects per option, fractions for percentages,
    seconds for times, the rate in bytes per second. The distribution table's name is not in
    the kernel's dump (tc -j cannot say which table a qdisc has)."""
    w = ["limit", str(_num(o["limit"]))] if "limit" in o else []
    d = o.get("delay") or {}
    if d.get("delay"):
        w += ["delay", f"{round(float(d['delay']) * 1e6)}us"]
        if d.get("jitter"):
            w += [f"{round(float(d['jitter']) * 1e6)}us"]
            if d.get("correlation"):
                w += [_pct(d["correlation"])]
    lr = o.get("loss-random") or {}
    if lr.get("loss"):
        w += ["loss", "random", _pct(lr["loss"])] + ([_pct(lr["correlation"])] if lr.get("correlation") else [])
    ls = o.get("loss-state")
    if ls:
        w += ["loss", "state"] + [_pct(ls[k]) for k in ("p13", "p31", "p32", "p23", "p14")]
    ge = o.get("loss-gemodel")
    if ge:
        w += ["loss", "gemodel"] + [_pct(ge[k]) for k in ("p", "r", "1-h", "1-k")]
    for key in ("duplicate", "reorder", "corrupt"):
        x = o.get(key) or {}
        if x.get(key):
            w += [key, _pct(x[key])] + ([_pct(x["correlation"])] if x.get("correlation") else [])
    r = o.get("rate") or {}
    if r.get("rate"):
        w += ["rate", _rate_bits(_num(r["rate"]))]
        po, cs, co = (int(r.get(k, 0) or 0) for k in ("packetoverhead", "cellsize", "celloverhead"))
        if po or cs or co:
            w += [str(po)] + ([str(cs)] if cs or co else []) + ([str(co)] if co else [])
    sl = o.get("slot")
    if sl:
        if "distribution" in sl:
            w += ["slot", "distribution", "normal", _secs(sl["distribution"]), _secs(sl["jitter"])]
        else:
            w += ["slot", _secs(sl["min-delay"]), _secs(sl["max-delay"])]
        for k in ("packets", "bytes"):
            if sl.get(k):
                w += [k, str(_num(sl[k]))]
    if o.get("ecn"):
        w += ["ecn"]
    if o.get("gap"):
        w += ["gap", str(_num(o["gap"]))]
    return w


def netem_import_notes(opts: str) -> list[str]:
    """What tc's netem output cannot say, and what the import assumed instead."""
    w = opts.split()
    notes = []
    if "delay" in w and w[w.index("delay") + 2:][:1] and w[w.index("delay") + 2][:1].isdigit():
        notes.append("tc does not print netem's delay distribution table: imported as uniform jitter (tc's "
                     "default); add `distribution normal|pareto|paretonormal` if the qdisc had one")
    if "slot" in w and w[w.index("slot") + 1:][:1] == ["distribution"]:
        notes.append("tc does not print the slot distribution's table: imported as `normal`")
    return notes


#: The valued option words of fq as tc prints them.
_FQ_KEYS = ("limit", "flow_limit", "buckets", "orphan_mask", "quantum", "initial_quantum", "maxrate",
            "low_rate_threshold", "refill_delay", "ce_threshold", "timer_slack", "horizon")


def _tc_size_bytes(word: str) -> int:
    """A size as tc's sprint_size prints it (``3028b``, ``15Kb``, ``1Mb``) in bytes."""
    from .kernel import size_bytes  # kernel imports this module

    return size_bytes(word)


#: The labels netem's show text puts before values that tc reads by position.
_NETEM_LABELS = {"p13", "p31", "p32", "p23", "p14", "p", "r", "1-h", "1-k", "packetoverhead", "cellsize",
                 "celloverhead"}


_SHOW_LINE = re.compile(r"^(qdisc|class)\s+(\S+)\s+(\S+)\s+(root|parent\s+\S+)?\s*(.*)$")


def qdiscs_from_text(text: str) -> list[dict[str, Any]]:
    """``tc qdisc show`` text lines as records like the JSON's, with the option words kept."""
    out = []
    for line in text.splitlines():
        m = _SHOW_LINE.match(line.strip())
        if not m or m.group(1) != "qdisc":
            continue
        kind, handle, place, rest = m.group(2), m.group(3), m.group(4) or "", m.group(5)
        rec: dict[str, Any] = {"kind": kind, "handle": handle, "words": rest.split()}
        if place.startswith("parent"):
            rec["parent"] = place.split()[1]
        else:
            rec["root"] = True
        out.append(rec)
    return out


def qdisc_options_from_words(kind: str, words: list[str]) -> str | None:
    """The options of a ``tc qdisc show`` text line (without -d)."""
    w = [x for x in words]
    if w[:1] == ["refcnt"]:
        w = w[2:]
    if kind == "cake":
        return _cake_words_from_text(w)
    if kind in ("hfsc", "ets"):
        # q_hfsc.c prints `default 20` (hex, as tc reads it); q_ets.c its words as tc reads them.
        return " ".join(w)
    if kind == "htb":
        keep = []
        i = 0
        while i < len(w):
            if w[i] in ("r2q", "default", "direct_qlen") and i + 1 < len(w):
                keep += [w[i], w[i + 1]]
            i += 2 if w[i] in ("r2q", "default", "direct_qlen", "direct_packets_stat", "ver") else 1
        return " ".join(keep)
    if kind in ("pfifo", "bfifo", "pfifo_head_drop"):
        if w[:1] == ["limit"]:
            return "limit " + w[1].rstrip("p")
        return ""
    if kind == "pfifo_fast":
        return ""
    if kind == "tbf":
        d = dict(zip(w[::2], w[1::2]))
        parts = ["rate", d["rate"], "burst", d["burst"].split("/")[0]]
        if "peakrate" in d:
            parts += ["peakrate", d["peakrate"]]
            if "mtu" in d:
                parts += ["mtu", d["mtu"].split("/")[0]]
        if "limit" in d:
            parts += ["limit", d["limit"]]
        elif "lat" in d:
            parts += ["latency", d["lat"]]
        return " ".join(parts)
    if kind == "fq":
        out, i = [], 0
        while i < len(w):
            if w[i] in _FQ_KEYS and i + 1 < len(w):
                v = w[i + 1]
                if w[i] in ("limit", "flow_limit"):
                    v = v.rstrip("p")
                elif w[i] in ("quantum", "initial_quantum"):
                    v = str(_tc_size_bytes(v))
                out += [w[i], v]
                i += 2
            else:
                out += [w[i]] if w[i] in ("nopacing", "horizon_drop", "horizon_cap") else []
                i += 1
        return " ".join(out)
    if kind == "netem":
        # q_netem.c prints what tc reads back, but for the labels of values read by position.
        out = [x for x in w if x not in _NETEM_LABELS]
        if "slot" in out and out[out.index("slot") + 1:][:1] == ["distribution"]:
            out.insert(out.index("slot") + 2, "normal")
        return " ".join(out)
    if kind in ("fq_codel", "codel"):
        # q_fq_codel.c / q_codel.c print `limit 10240p flows 1024 quantum 1514 target 5ms
        # interval 100ms memory_limit 32Mb ecn drop_batch 64`: tc reads each back but the limit's p.
        out, i = [], 0
        while i < len(w):
            if w[i] in _CODEL_KEYS and i + 1 < len(w):
                out += [w[i], w[i + 1].rstrip("p") if w[i] == "limit" else w[i + 1]]
                i += 2
            else:
                out += [w[i]] if w[i] in ("ecn", "noecn") else []
                i += 1
        if kind == "fq_codel" and "ecn" not in w:
            out.append("noecn")  # fq_codel's default is ecn; tc prints only "ecn"
        return " ".join(out)
    if kind == "sfq":
        # q_sfq.c: `limit 127p quantum 1514b depth 127 divisor 1024 [perturb 10sec]`.
        d = dict(zip(w[::2], w[1::2]))
        out = []
        for k in ("limit", "quantum", "depth", "divisor", "perturb"):
            if k in d:
                out += [k, d[k].rstrip("p") if k == "limit" else d[k].removesuffix("sec") if k == "perturb" else d[k]]
        return " ".join(out)
    if kind == "prio":
        # q_prio.c: `bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`, as tc reads it.
        return " ".join(x for x in w if x != "multiqueue" and not x.startswith("multiqueue"))
    if kind == "drr":
        return ""
    if kind in ("pie", "fq_pie"):
        out, i = [], 0
        while i < len(w):
            if w[i] in _PIE_KEYS and i + 1 < len(w):
                out += [w[i], w[i + 1].rstrip("p") if w[i] == "limit" else w[i + 1]]
                i += 2
            else:
                out += [w[i]] if w[i] in ("ecn", "bytemode", "dq_rate_estimator") else []
                i += 1
        return " ".join(out)
    return None


#: The valued option words of fq_codel and codel as tc prints them.
_CODEL_KEYS = ("limit", "flows", "quantum", "target", "interval", "memory_limit", "drop_batch", "ce_threshold",
               "ce_threshold_selector")

#: The valued option words of pie and fq_pie as tc prints them (tc reads them back as written).
_PIE_KEYS = ("limit", "flows", "target", "tupdate", "alpha", "beta", "quantum", "memory_limit", "ecn_prob")

_CLASS_KEYS = ("prio", "quantum", "rate", "ceil", "burst", "cburst")


def classes_from_text(text: str) -> list[dict[str, Any]]:
    """``tc [-d] class show`` lines of htb (and whtb) classes."""
    out = []
    for line in text.splitlines():
        m = _SHOW_LINE.match(line.strip())
        if not m or m.group(1) != "class":
            continue
        kind, classid, place, rest = m.group(2), m.group(3), m.group(4) or "", m.group(5)
        words = rest.split()
        opts: dict[str, str] = {}
        i = 0
        while i < len(words):
            k = words[i]
            if k in _CLASS_KEYS and i + 1 < len(words):
                opts[k] = words[i + 1].split("/")[0]
                i += 2
            elif k in ("leaf", "level", "mpu", "linklayer", "overhead"):
                i += 2
            else:
                i += 1
        rec = {"kind": kind, "classid": classid, "opts": opts}
        rec["words"] = words[2:] if words[:1] == ["leaf"] else words
        rec["parent"] = place.split()[1] if place.startswith("parent") else None
        out.append(rec)
    return out


def classes_from_json(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for c in data:
        o = c.get("options", c)
        opts = {}
        for k in _CLASS_KEYS:
            if k in o:
                v = o[k]
                opts[k] = _rate_bits(int(v)) if k in ("rate", "ceil") and not isinstance(v, str) else str(v)
        out.append({"kind": c["class"] if "class" in c else c.get("kind"), "classid": c["handle"], "parent": c.get("parent"), "opts": opts,
                    "words": list(o.get("words", [])) if isinstance(o, dict) else []})
    return out


def _u32_keys_json(o: dict[str, Any]) -> list[tuple[int, int, int]]:
    m = o.get("match")
    if m is None:
        return []
    ms = m if isinstance(m, list) else [m]
    return [(int(x["value"], 16), int(x["mask"], 16), int(x["off"])) for x in ms]


def filters_from_json(data: list[dict[str, Any]], warnings: list[str], where: str,
                      parent: str | None = None) -> list[dict[str, Any]]:
    """Filters of ``tc -j filter show``; ``parent`` is the one the command named (tc then leaves it
    out of each entry)."""
    out = []
    for f in data:
        o = f.get("options")
        if o is None:
            continue  # the chain/priority header lines
        kind = f.get("kind")
        rec = {"parent": f.get("parent", parent), "protocol": f.get("protocol", "all"), "pref": int(f["pref"]), "kind": kind}
        if kind == "u32":
            if "flowid" not in o and "classid" not in o:
                continue  # a hash table's own entry (fh 800: ht divisor 1)
            rec["keys"] = _u32_keys_json(o)
            rec["classid"] = o.get("flowid", o.get("classid"))
            rec["order"] = o.get("order")
            rec["fh"] = o.get("fh")
        elif kind == "fw":
            rec["handle"] = o.get("handle", f.get("handle"))
            rec["classid"] = o.get("classid", o.get("flowid"))
        elif kind == "matchall":
            rec["classid"] = o.get("flowid", o.get("classid"))
        elif kind == "flower":
            rec["classid"] = o.get("classid", o.get("flowid"))
            rec["flower"] = o.get("keys", {})
        elif kind == "basic":
            rec["classid"] = o.get("flowid", o.get("classid"))
            rec["ematch"] = ematch_text(o.get("ematch", ""))
        else:
            warnings.append(f"{where}: filter kind {kind} (pref {rec['pref']}) is not modelled by airsched: not imported")
            continue
        if "police" in json.dumps(o):
            warnings.append(f"{where}: the {kind} filter of pref {rec['pref']} has a policer, whose rate, burst and mtu "
                            "iproute2 6.1's tc -j does not print: imported without it; import the tc filter show text instead")
        out.append(rec)
    return out


#: A policer in ``tc filter show`` text, legacy (`` police 0x1 rate ...``) or as an action.
_POLICE_TEXT = re.compile(r"^(action order \d+:\s+)?police 0x[0-9a-f]+ (.*)$")


def police_words(printed: str) -> str:
    """tc words for a policer as ``print_police`` showed it (docs/tc-police.md): ``rate 1Mbit
    burst 10Kb mtu 2Kb action drop/pipe overhead 0b`` -> ``rate 1Mbit burst 10Kb conform-exceed
    drop/pipe``. ``mtu 2Kb`` is left out: it is how the kernel's default mtu (2040 bytes)
    prints."""
    w = printed.split()
    out = []
    for k, v in zip(w[::2], w[1::2], strict=False):
        if k in ("rate", "burst", "peakrate", "linklayer"):
            out += [k, v]
        elif k == "mtu" and v != "2Kb":
            out += [k, v]
        elif k == "overhead" and v.rstrip("b") != "0":
            out += [k, v.rstrip("b")]
        elif k == "action":
            out += ["conform-exceed", v]
    return " ".join(out)


#: A line of a basic filter's ematch tree in ``tc filter show`` text.
_EMATCH_LINE = re.compile(r"^(NOT |AND |OR |\(|\)|cmp\(|u32\(|meta\(|nbyte\(|text\()")

_FILTER_TEXT = re.compile(r"^filter\s+(?:parent\s+(\S+)\s+)?protocol\s+(\S+)\s+pref\s+(\d+)\s+(\S+)(.*)$")


def filters_from_text(text: str, warnings: list[str], where: str, parent_default: str | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for line in text.splitlines():
        s = line.strip()
        m = _FILTER_TEXT.match(s)
        if m:
            cur = None
            parent, proto, pref, kind, rest = m.groups()
            parent = parent or parent_default
            words = rest.split()
            rec: dict[str, Any] = {"parent": parent, "protocol": proto, "pref": int(pref), "kind": kind}
            cid = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("*flowid", "flowid", "classid")), None)
            if kind == "u32":
                if cid is None:
                    continue
                rec["fh"] = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "fh"), None)
                rec["keys"] = []
                rec["classid"] = cid
                cur = rec
            elif kind == "fw":
                h = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "handle"), None)
                rec["handle"], rec["classid"] = h, cid
                cur = rec
            elif kind == "matchall":
                rec["classid"] = cid
                cur = rec
            elif kind == "basic":
                if "handle" not in words:
                    continue  # the priority's own header line
                rec["classid"] = cid
                rec["ematch"] = ""
                cur = rec
            else:
                warnings.append(f"{where}: filter kind {kind} (pref {pref}) is not modelled by airsched: not imported")
                continue
            out.append(rec)
        elif cur is not None and cur["kind"] == "basic" and not cur.get("police") and _EMATCH_LINE.match(s):
            cur["ematch"] = ematch_text(cur["ematch"] + " " + s)
        elif (pm := _POLICE_TEXT.match(s)) and cur is not None:
            cur["police"] = police_words(pm.group(2))
            cur["police_legacy"] = pm.group(1) is None
        elif s.startswith("match ") and cur is not None:
            mm = re.match(r"match\s+([0-9a-fA-F]+)/([0-9a-fA-F]+)\s+at\s+(-?\d+)", s)
            if mm:
                cur["keys"].append((int(mm.group(1), 16), int(mm.group(2), 16), int(mm.group(3))))
    return out


def _parent_key(h: str) -> tuple[int, int]:
    major, _, minor = h.partition(":")
    return (int(major or "0", 16), int(minor or "0", 16))


def import_devices(devices: Sequence[DeviceInput], check: bool = True) -> Imported:
    """The tc text that rebuilds every device's tree. Input that is not tc's output (JSON of
    another shape, text with no qdisc line, a field of the wrong type) raises
    :class:`ImportError_` naming the device and input; with ``check``, so does a line of the
    result that airsched's tc parser refuses (``rate nanbit``, ``limit -3``), quoting it."""
    try:
        imported = _import_devices(devices)
    except ImportError_:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        # A field the checks above do not cover holds what tc never prints there.
        what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        devs = ", ".join(d.dev for d in devices)
        raise ImportError_(f"dev {devs}: input that is not tc's output ({what})") from None
    if check and imported.text.strip():
        _check_text(imported.text, devices)
    return imported


def _check_text(text: str, devices: Sequence[DeviceInput]) -> None:
    """Refuse imported tc text that airsched's own tc parser refuses: one line per problem,
    naming the device's input and quoting the imported line."""
    from . import _core

    try:
        _core.tc_check(text, "<imported>", [(d.dev, 1000) for d in devices])
    except _core.ScenarioError as exc:
        lines = text.splitlines()
        problems = []
        for err in getattr(exc, "errors", None) or str(exc).splitlines():
            m = re.match(r"<imported>:(\d+):\d+: (.*)$", err.strip())
            if m is None:
                problems.append(err.strip())
                continue
            line = lines[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(lines) else ""
            dev = line.split(" dev ", 1)[1].split()[0] if " dev " in line else "?"
            problems.append(f"dev {dev}: the input gives `{line}`, which is not valid tc: {m.group(2)}")
        raise ImportError_("\n".join(problems or [str(exc)])) from None


def _import_devices(devices: Sequence[DeviceInput]) -> Imported:
    lines: list[str] = []
    warnings: list[str] = []
    for d in devices:
        where = f"dev {d.dev}"
        data = _json(d.qdisc, f"{where} qdisc")
        if data is not None:
            _check_qdisc_json(data, f"{where} qdisc")
        recs = data if data is not None else qdiscs_from_text(d.qdisc)
        if not recs and d.qdisc.strip():
            first = d.qdisc.strip().splitlines()[0][:40]
            raise ImportError_(
                f"{where} qdisc:1:1: neither tc -j JSON nor tc qdisc show text (no line starts with \"qdisc\"; "
                f"the first is {first!r})"
            )
        qlines: list[tuple[str, str]] = []  # (handle, line)
        handles: set[str] = set()
        for q in recs:
            kind, handle = q["kind"], q["handle"]
            if kind in DEFAULT_KINDS and handle in ("0:", "0"):
                continue
            if kind in INGRESS_KINDS:
                lines.append(f"# not imported: {kind} qdisc on {d.dev} (airsched models egress only)")
                warnings.append(f"{where}: {kind} qdisc not imported: airsched models egress only")
                continue
            if "options" in q:
                opts = qdisc_options_from_json(kind, q.get("options") or {})
            else:
                opts = qdisc_options_from_words(kind, q.get("words", []))
            if opts is None:
                lines.append(f"# not imported: {kind} qdisc {handle} on {d.dev} (a kind airsched does not model)")
                warnings.append(f"{where}: qdisc {handle} is {kind}, which airsched does not model: not imported")
                continue
            if q.get("parent", "").startswith("ffff:"):
                continue
            if kind == "netem":
                warnings += [f"{where}: qdisc {handle}: {n}" for n in netem_import_notes(opts)]
            place = "root" if q.get("root") else f"parent {q['parent']}"
            handles.add(handle)
            qlines.append((handle, f"tc qdisc add dev {d.dev} {place} handle {handle} {kind} {opts}".rstrip()))
        # classes: a qdisc must exist before its classes, a class before the qdisc under it.
        cdata = _json(d.classes, f"{where} class") if d.classes else None
        if cdata is not None:
            for i, c in enumerate(cdata):
                _field(c, "handle", f"{where} class", i)
        classes = classes_from_json(cdata) if cdata is not None else classes_from_text(d.classes)
        if not classes and d.classes.strip() and cdata is None and not re.search(r"^\s*class\s", d.classes, re.M):
            raise ImportError_(f"{where} class:1:1: neither tc -j JSON nor tc class show text (no line starts with \"class\")")
        # hfsc's root class (`class hfsc 1: root`) comes with its qdisc; ets's bands too, with
        # their quanta in the qdisc's options.
        bands = {c["classid"] for c in classes if c["kind"] == "ets"}
        classes = [c for c in classes if c["kind"] in ("htb", "whtb", "drr", "cbq", "hfsc") and c["classid"].split(":")[0] + ":" in handles
                   and not c["classid"].endswith(":")]
        byid = {c["classid"]: c for c in classes}

        def depth(c: dict[str, Any]) -> int:
            n, p = 0, c["parent"]
            while p in byid and n < 16:
                n, p = n + 1, byid[p]["parent"]
            return n

        classes.sort(key=lambda c: (depth(c), _parent_key(c["classid"])))
        emitted: list[str] = []
        pending = list(qlines)
        # The root qdisc first, then classes by depth, each qdisc once its parent class exists.
        made: set[str] = set(bands)

        def flush_qdiscs() -> None:
            nonlocal pending
            rest = []
            for h, line in pending:
                m = re.search(r" parent (\S+) ", line)
                if m is None or m.group(1) in made:
                    emitted.append(line)
                    made.add(h)
                else:
                    rest.append((h, line))
            pending = rest

        flush_qdiscs()
        for c in classes:
            o = c["opts"]
            words = [f"{k} {o[k]}" for k in ("rate", "ceil", "burst", "cburst", "prio", "quantum") if k in o]
            if c["kind"] == "drr":
                words = [f"quantum {o['quantum']}"] if "quantum" in o else []
            elif c["kind"] == "hfsc":
                words = c.get("words") or []
            parent = c["parent"] or c["classid"].split(":")[0] + ":"
            emitted.append(f"tc class add dev {d.dev} parent {parent} classid {c['classid']} {c['kind']} {' '.join(words)}".rstrip())
            made.add(c["classid"])
            flush_qdiscs()
        for h, line in pending:
            emitted.append(line)
            warnings.append(f"{where}: qdisc {h} hangs from a class that was not imported")
        # filters, in priority order per parent. The kernel's u32 dump of one parent also shows
        # the nodes of the other u32 tables of the same qdisc and priority (one tc_u_common per
        # qdisc), so a node (by its fh) is imported once, under the first parent that lists it,
        # and an ambiguous priority is a warning.
        seen_fh: set[str] = set()
        prio_parents: dict[tuple[str, int], set[str]] = {}
        for parent in sorted(d.filters, key=_parent_key):
            fw = f"{where} filter parent {parent}"
            fdata = _json(d.filters[parent], fw)
            if fdata is not None:
                _check_filter_json(fdata, fw)
            elif d.filters[parent].strip() and not re.search(r"^\s*filter\s", d.filters[parent], re.M):
                raise ImportError_(f"{fw}:1:1: neither tc -j JSON nor tc filter show text (no line starts with \"filter\")")
            fl = (filters_from_json(fdata, warnings, fw, parent) if fdata is not None
                  else filters_from_text(d.filters[parent], warnings, fw, parent))
            fl.sort(key=lambda f: (f["pref"], f.get("order") or 0))
            for f in fl:
                if f["kind"] == "u32":
                    prio_parents.setdefault((parent.split(":")[0], f["pref"]), set()).add(parent)
                    if f.get("fh") in seen_fh:
                        continue
                    if f.get("fh"):
                        seen_fh.add(f["fh"])
                head = f"tc filter add dev {d.dev} parent {f['parent']} protocol {f['protocol']} prio {f['pref']}"
                pol = ""
                if f.get("police"):
                    legacy = f.get("police_legacy") and f["kind"] in ("u32", "fw", "basic")
                    pol = (" police " if legacy else " action police ") + f["police"]
                if f["kind"] == "u32":
                    keys = f["keys"] or [(0, 0, 0)]
                    m = " ".join(f"match u32 0x{v:08x} 0x{mk:08x} at {off}" for v, mk, off in keys)
                    emitted.append(f"{head} u32 {m}{pol} flowid {f['classid']}")
                elif f["kind"] == "fw":
                    emitted.append(f"{head} handle {f['handle']} fw{pol} classid {f['classid']}")
                elif f["kind"] == "flower":
                    from .export import flower_words

                    emitted.append(f"{head} flower {flower_words(f['flower'])}{pol} classid {f['classid']}")
                elif f["kind"] == "basic":
                    match = f" match '{ematch_words(f['ematch'])}'" if f.get("ematch") else ""
                    cls = f" classid {f['classid']}" if f.get("classid") else ""
                    emitted.append(f"{head} basic{match}{pol}{cls}")
                else:
                    emitted.append(f"{head} matchall{pol} classid {f['classid']}")
        for (major, pref), parents in sorted(prio_parents.items()):
            if len(parents) > 1:
                warnings.append(
                    f"{where}: u32 filters of priority {pref} are listed under {', '.join(sorted(parents, key=_parent_key))}: "
                    "the kernel's dump does not say which parent each hangs from; each is imported under the first"
                )
        lines += emitted
    return Imported("\n".join(lines) + ("\n" if lines else ""), warnings)


#: The largest saved tc output read (a box's tc -j of thousands of classes is a few MB).
MAX_INPUT_BYTES = 16 << 20


def read_saved(directory: str | os.PathLike[str], devs: Iterable[str]) -> list[DeviceInput]:
    """Each device's saved tc output in ``directory`` (``import --from DIR``): ``DEV.qdisc.json``
    (``tc -r -j qdisc show dev DEV``, required), ``DEV.class.txt`` (``tc -d class show dev DEV``)
    and ``DEV.filter.PARENT.json`` (``tc -j filter show dev DEV parent PARENT``, ``:`` as
    ``_``). A file that is missing, not a file, larger than :data:`MAX_INPUT_BYTES` or not UTF-8
    text raises :class:`ImportError_` naming it."""
    root = Path(directory)
    if not root.is_dir():
        raise ImportError_(f"--from {root}: no such directory")
    out = []
    for dev in devs:
        qpath = root / f"{dev}.qdisc.json"
        if not qpath.exists():
            raise ImportError_(f"{qpath}: no such file (save it with `tc -r -j qdisc show dev {dev} > {qpath.name}`)")
        q = _read_input(qpath)
        if not q.strip():
            raise ImportError_(f"{qpath}: empty (save it with `tc -r -j qdisc show dev {dev} > {qpath.name}`)")
        cpath = root / f"{dev}.class.txt"
        c = _read_input(cpath) if cpath.exists() else ""
        filters = {}
        for fp in sorted(root.glob(f"{glob.escape(dev)}.filter.*.json")):
            parent = fp.name[len(dev) + len(".filter."):-len(".json")].replace("_", ":")
            filters[parent] = _read_input(fp)
        out.append(DeviceInput(dev, q, c, filters))
    return out


def _read_input(path: Path, what: str = "tc") -> str:
    """The text of a saved ``what`` output (tc, or iw for ``import --cell``): bounded, UTF-8, no NUL."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_INPUT_BYTES + 1)
    except IsADirectoryError:
        raise ImportError_(f"{path}: is a directory, not {what} output") from None
    except OSError as exc:
        raise ImportError_(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise ImportError_(f"{path}: larger than {MAX_INPUT_BYTES >> 20} MiB: not {what} output")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = line_col(data, exc.start)
        raise ImportError_(f"{path}:{line}:{col}: not UTF-8 text: {what} prints text" + (" or JSON" if what == "tc" else "")) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ImportError_(f"{path}:{line}: a NUL byte: a binary file, not {what} output")
    return text


def read_live(devs: Iterable[str], netns: str | None = None, tc: str = "tc") -> list[DeviceInput]:
    """Run tc on this machine (in network namespace ``netns``) and collect each device's output."""
    base = [tc] + (["-n", netns] if netns else [])

    def run(*args: str) -> str:
        p = subprocess.run(base + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise ImportError_(f"{shlex.join(base + list(args))}: {p.stderr.strip() or 'failed'}")
        return p.stdout

    out = []
    for dev in devs:
        q = run("-r", "-j", "qdisc", "show", "dev", dev)  # -raw: tbf's limit as the kernel holds it
        c = run("-d", "class", "show", "dev", dev)
        parents: list[str] = []
        for rec in _json(q, dev) or []:
            if rec.get("kind") in DEFAULT_KINDS | INGRESS_KINDS:
                continue
            parents.append(rec["handle"])
        parents += [r["classid"] for r in classes_from_text(c)]
        filters = {p: run("-j", "filter", "show", "dev", dev, "parent", p) for p in parents}
        out.append(DeviceInput(dev, q, c, filters))
    return out


def _cake_words_from_json(o: dict[str, Any]) -> str:
    """cake's options from ``tc -j`` (iproute2 ``cake_print_opt``): ``bandwidth`` is bytes/s or
    "unlimited", ``rtt`` microseconds, the flags booleans, ``ack-filter`` enabled/aggressive/
    disabled; ``raw`` true means no overhead keyword was given."""
    w: list[str] = []
    bw = o.get("bandwidth")
    if bw == "unlimited" or bw is None:
        w.append("unlimited")
    else:
        w += ["bandwidth", _rate_bits(_num(bw))]
    if o.get("autorate") == "autorate-ingress":
        w.append("autorate-ingress")
    for k in ("diffserv", "flowmode"):
        if isinstance(o.get(k), str) and o[k] != "unknown":
            w.append(o[k])
    for k, on, off in (("nat", "nat", "nonat"), ("wash", "wash", "nowash"), ("split_gso", "split-gso", "no-split-gso")):
        if k in o:
            w.append(on if o[k] else off)
    if o.get("ingress"):
        w.append("ingress")
    w.append({"enabled": "ack-filter", "aggressive": "ack-filter-aggressive"}.get(o.get("ack-filter", ""), "no-ack-filter"))
    if "rtt" in o:
        w += ["rtt", f"{_num(o['rtt'])}us"]
    if o.get("raw"):
        w.append("raw")
    else:
        w += [o.get("atm", "noatm"), "overhead", str(_num(o.get("overhead", 0)))]
    if o.get("mpu"):
        w += ["mpu", str(_num(o["mpu"]))]
    if o.get("memlimit"):
        w += ["memlimit", str(_num(o["memlimit"]))]
    if o.get("fwmark"):
        w += ["fwmark", str(_num(o["fwmark"]))]
    return " ".join(w)


def _cake_words_from_text(w: list[str]) -> str:
    """cake's ``tc qdisc show`` words, which tc reads back as printed except two forms tc prints
    and does not read: ``bandwidth unlimited`` (tc reads ``unlimited``) and an rtt in %g's
    exponent form (``1e+03s``), written back in microseconds. After ``raw`` the overhead is 0 and
    is left out so that no overhead keyword is sent (tc's ``raw``)."""
    out: list[str] = []
    i = 0
    raw = "raw" in w
    while i < len(w):
        x = w[i]
        nxt = w[i + 1] if i + 1 < len(w) else None
        if x == "bandwidth" and nxt == "unlimited":
            out.append("unlimited")
            i += 2
        elif x == "rtt" and nxt is not None and "e" in nxt.lower().rstrip("s"):
            m = re.fullmatch(r"([0-9.e+-]+)(s|ms|us)", nxt)
            scale = {"s": 1e6, "ms": 1e3, "us": 1.0}
            out += ["rtt", f"{round(float(m.group(1)) * scale[m.group(2)])}us" if m else nxt]
            i += 2
        elif x == "overhead" and raw:
            i += 2
        else:
            out.append(x)
            i += 1
    return " ".join(out)
