# SPDX-License-Identifier: Apache-2.0
"""The configurations ``airsched advise`` chooses among: axes of options (a sweep's
``[variants]``: each option a bundle of ``--set`` settings), their product the grid.

Every axis has an option ``current`` with no settings: the AP as the scenario describes it, so the
all-``current`` point is the AP's present configuration, the baseline of every answer. A point the
core rejects (e.g. an airtime scheduler over the driver FIFO) is left out with its reason; points
that resolve to the same scenario are one candidate (the run identity of docs/workflow.md).

The built-in catalogues (Linux's names; see docs/advise.md for why each option is there):

* 802.11b cells (the qdisc is the only queue the AP's host controls): the root qdisc of the AP's
  wlan0 (pfifo, pfifo_fast, sfq, fq_codel, codel with the kernel's defaults) and the AP's
  txqueuelen (10, 50, 100, 1000: the depth of pfifo and pfifo_fast).
* 802.11n cells: the AP's MAC queueing (``mac``: the driver FIFO of ath9k before Linux 4.10,
  mac80211's FQ-MAC round robin, FQ-MAC with ath9k's airtime scheduler of 4.11, with mac80211's
  of 6.x), the root qdisc over it (``qdisc``: pfifo 1000, pfifo 100, fq_codel, sfq), and AQL
  (``aql``: off; on is the 6.x scheduler's default).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import ScenarioError

CURRENT = "current"


def _root(qdisc: str) -> dict[str, Any]:
    return {"ap.tc": f"tc qdisc add dev wlan0 root {qdisc}"}


QDISCS_DCF: dict[str, dict[str, Any]] = {
    CURRENT: {},
    "pfifo": _root("pfifo"),
    "pfifo_fast": _root("pfifo_fast"),
    "sfq": _root("sfq"),
    "fq_codel": _root("fq_codel"),
    "codel": _root("codel"),
}
#: The AP's txqueuelen: the limit of pfifo and pfifo_fast without their own, and of the
#: default qdisc (Linux's default 1000).
TXQUEUELEN: dict[str, dict[str, Any]] = {CURRENT: {}, **{str(n): {"ap.txqueuelen": n} for n in (10, 50, 100, 1000)}}
MAC_HT: dict[str, dict[str, Any]] = {
    CURRENT: {},
    "fifo": {"ap.mac_queue": "fifo", "ap.airtime": "off"},
    "fq-mac": {"ap.mac_queue": "fq-mac", "ap.airtime": "off"},
    "ath9k-airtime": {"ap.mac_queue": "fq-mac", "ap.airtime": "ath9k"},
    "mac80211-airtime": {"ap.mac_queue": "fq-mac", "ap.airtime": "mac80211"},
}
QDISCS_HT: dict[str, dict[str, Any]] = {
    CURRENT: {},
    "pfifo-1000": _root("pfifo limit 1000"),
    "pfifo-100": _root("pfifo limit 100"),
    "fq_codel": _root("fq_codel"),
    "sfq": _root("sfq"),
}
AQL_HT: dict[str, dict[str, Any]] = {CURRENT: {}, "off": {"ap.aql": False}}


def builtin(standard: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The built-in catalogue of a cell of ``standard``."""
    if standard == "802.11n":
        return {"mac": MAC_HT, "qdisc": QDISCS_HT, "aql": AQL_HT}
    return {"qdisc": QDISCS_DCF, "txqueuelen": TXQUEUELEN}


@dataclass(frozen=True)
class Candidate:
    """One configuration: its option per axis and the settings they add up to."""

    labels: tuple[tuple[str, str], ...]
    settings: tuple[tuple[str, Any], ...]
    key: str = ""  # the run identity of its first seed: equal keys, the same configuration

    @property
    def name(self) -> str:
        return ", ".join(f"{a}={lab}" for a, lab in self.labels if lab != CURRENT) or "current (the AP as it is)"

    @property
    def is_current(self) -> bool:
        return not self.settings


@dataclass
class Catalogue:
    axes: dict[str, dict[str, dict[str, Any]]]
    candidates: list[Candidate] = field(default_factory=list)
    #: every valid point's labels -> its candidate (points resolving alike share one)
    by_labels: dict[tuple[tuple[str, str], ...], Candidate] = field(default_factory=dict)
    #: points the core rejects -> the core's first error
    invalid: dict[tuple[tuple[str, str], ...], str] = field(default_factory=dict)

    @property
    def current(self) -> Candidate:
        return self.by_labels[tuple((a, CURRENT) for a in self.axes)]


_AP_QUEUEING = re.compile(r'^(\s*)queueing\s*=\s*"([^"]+)"(.*)$')


def explicit_queueing(text: str) -> str:
    """``[ap] queueing = PRESET`` (Høiland-Jørgensen et al.'s four configurations) written as the
    keys it stands for (``mac_queue``, ``airtime``, and fq_codel's root qdisc), so that a
    catalogue can set those keys; the resolved scenario is the same (tested)."""
    out, section = [], ""
    has_tc = False
    lines = text.splitlines()
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            section = s
        if section == "[ap]" and re.match(r"^\s*(tc|tc_file)\s*=", line):
            has_tc = True
    for line in lines:
        s = line.strip()
        if s.startswith("["):
            section = s
        m = _AP_QUEUEING.match(line) if section == "[ap]" else None
        if not m:
            out.append(line)
            continue
        ind, preset = m.group(1), m.group(2).replace("_", "-").lower()
        repl = {"fifo": ('"fifo"', '"off"'), "fq-codel": ('"fifo"', '"off"'), "fq-mac": ('"fq-mac"', '"off"'),
                "airtime": ('"fq-mac"', '"ath9k"')}.get(preset)
        if repl is None:
            out.append(line)  # the core reports it
            continue
        out.append(f"{ind}# queueing = \"{m.group(2)}\", as the keys it stands for (airsched advise):")
        out.append(f"{ind}mac_queue = {repl[0]}")
        out.append(f"{ind}airtime = {repl[1]}")
        if preset == "fq-codel" and not has_tc:
            out.append(f'{ind}tc = "tc qdisc add dev wlan0 root fq_codel"')
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def build(axes: Mapping[str, Mapping[str, Mapping[str, Any]]], identity: Any) -> Catalogue:
    """Every point of the axes' product, checked and deduplicated: ``identity(settings)`` returns
    the run identity of the base scenario with those settings (raising ScenarioError if the core
    rejects them)."""
    axes = {a: {CURRENT: {}, **dict(opts)} for a, opts in axes.items()}
    cat = Catalogue(axes)
    by_key: dict[str, Candidate] = {}
    for combo in itertools.product(*[list(opts.items()) for opts in axes.values()]):
        labels = tuple((a, lab) for a, (lab, _) in zip(axes, combo))
        settings: dict[str, Any] = {}
        for _lab, s in combo:
            settings.update(s)
        try:
            key = identity(tuple(settings.items()))
        except ScenarioError as exc:
            cat.invalid[labels] = exc.errors[0] if exc.errors else str(exc)
            continue
        if key not in by_key:
            by_key[key] = Candidate(labels, tuple(settings.items()), key)
            cat.candidates.append(by_key[key])
        cat.by_labels[labels] = by_key[key]
    if tuple((a, CURRENT) for a in axes) not in cat.by_labels:
        raise ScenarioError(f"the scenario itself does not load: {cat.invalid.get(tuple((a, CURRENT) for a in axes))}")
    return cat
