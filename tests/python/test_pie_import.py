# SPDX-License-Identifier: Apache-2.0
"""pie and fq_pie through `airsched import`: iproute2 6.1's `tc -j qdisc show` and text lines of a pie read
back into tc commands that airsched builds into the same qdisc (issue 23)."""

from __future__ import annotations

import json

from airsched import _core
from airsched.importer import DeviceInput, import_devices

# As iproute2 6.1's q_pie.c prints them (print_uint for target/tupdate in us; flags only if set).
PIE_JSON = json.dumps([{"kind": "pie", "handle": "1:", "root": True, "refcnt": 2, "options": {
    "limit": 300, "target": 20000, "tupdate": 32000, "alpha": 4, "beta": 16, "ecn": True, "bytemode": True}}])
PIE_TEXT = "qdisc pie 1: root refcnt 2 limit 300p target 20ms tupdate 32ms alpha 4 beta 16 ecn bytemode dq_rate_estimator\n"


def _shown(text: str) -> str:
    return _core.tc_check(text, "imported.tc", [("eth0", 1000)])["devices"][0]["qdisc_text"].strip()


def test_pie_json_imports_and_rebuilds_the_same_qdisc() -> None:
    r = import_devices([DeviceInput("eth0", PIE_JSON, "", {})])
    assert r.text.splitlines() == [
        "tc qdisc add dev eth0 root handle 1: pie limit 300 target 20000us tupdate 32000us alpha 4 beta 16 ecn bytemode"
    ]
    assert _shown(r.text) == "qdisc pie 1: root refcnt 2 limit 300p target 20ms tupdate 32ms alpha 4 beta 16 ecn bytemode"


def test_pie_text_imports_and_rebuilds_the_same_qdisc() -> None:
    r = import_devices([DeviceInput("eth0", PIE_TEXT, "", {})])
    assert r.text.splitlines() == [
        "tc qdisc add dev eth0 root handle 1: pie limit 300 target 20ms tupdate 32ms alpha 4 beta 16 ecn bytemode dq_rate_estimator"
    ]
    assert _shown(r.text) == PIE_TEXT.strip()


FQ_PIE_JSON = json.dumps([{"kind": "fq_pie", "handle": "1:", "root": True, "refcnt": 2, "options": {
    "limit": 500, "flows": 64, "target": 5000, "tupdate": 8000, "alpha": 4, "beta": 30, "quantum": 3000,
    "memory_limit": 1048576, "ecn_prob": 30, "bytemode": True}}])
FQ_PIE_TEXT = ("qdisc fq_pie 1: root refcnt 2 limit 500p flows 64 target 5ms tupdate 8ms alpha 4 beta 30 quantum 3000b "
               "memory_limit 1Mb ecn_prob 30 bytemode\n")


def test_fq_pie_json_and_text_import_and_rebuild_the_same_qdisc() -> None:
    for given in (FQ_PIE_JSON, FQ_PIE_TEXT):
        r = import_devices([DeviceInput("eth0", given, "", {})])
        assert _shown(r.text) == FQ_PIE_TEXT.strip(), r.text
