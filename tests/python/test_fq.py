# SPDX-License-Identifier: Apache-2.0
"""fq end to end: a run with fq on the AP, and `airsched import` of iproute2 6.1's `tc -j qdisc show` objects
and text lines of an fq, read back into tc commands that airsched builds into the same qdisc (issue 23)."""

from __future__ import annotations

import json

import airsched
from airsched import _core
from airsched.importer import DeviceInput, import_devices

FQ_SHOWN = ("qdisc fq 1: root refcnt 2 limit 500p flow_limit 50p buckets 128 orphan_mask 255 nopacing quantum 1514b "
            "initial_quantum 15Kb maxrate 2Mbit low_rate_threshold 550Kbit refill_delay 20ms ce_threshold 4ms "
            "timer_slack 20us horizon 10s horizon_cap")
# As iproute2 6.1's fq_print_opt prints them in JSON: bytes, bytes per second, microseconds
# (timer_slack in nanoseconds).
FQ_JSON = json.dumps([{"kind": "fq", "handle": "1:", "root": True, "refcnt": 2, "options": {
    "limit": 500, "flow_limit": 50, "buckets": 128, "orphan_mask": 255, "pacing": False, "quantum": 1514,
    "initial_quantum": 15360, "maxrate": 250000, "low_rate_threshold": 68750, "refill_delay": 20000,
    "ce_threshold": 4000, "timer_slack": 20000, "horizon": 10000000, "horizon_drop": False}}])


def _shown(text: str) -> str:
    return _core.tc_check(text, "imported.tc", [("eth0", 1000)])["devices"][0]["qdisc_text"].strip()


def test_fq_json_and_text_import_and_rebuild_the_same_qdisc() -> None:
    for given in (FQ_JSON, FQ_SHOWN + "\n"):
        r = import_devices([DeviceInput("eth0", given, "", {})])
        assert _shown(r.text) == FQ_SHOWN, r.text


CELL = """
[run]
duration = "11s"
warmup = "1s"
seed = 2

[[station]]
name = "a"
rate = "11Mbps"

[[flow]]
name = "bulk"
protocol = "udp"
src = "server"
dst = "a"
rate = "8mbit"

[[flow]]
name = "light"
protocol = "udp"
src = "server"
dst = "a"
rate = "200kbit"
size = 200

[ap]
tc = "tc qdisc add dev wlan0 root fq maxrate 3mbit"
"""


def test_fq_on_the_ap_caps_each_flow_and_serves_the_light_one_first() -> None:
    flows = airsched.run(text=CELL).flows.set_index("name")
    # maxrate 3mbit (frames of 1514 bytes: 3 Mbit/s of frames, a little less of payload).
    assert 2.7 < flows.loc["bulk", "goodput_mbps"] < 3.0
    # The light flow is below the cap and joins the new-flows list: all of it arrives, quickly.
    assert flows.loc["light", "drops_queue"] == 0
    assert flows.loc["light", "queue_delay_mean_ms"] < 2.0
