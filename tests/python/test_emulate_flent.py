# SPDX-License-Identifier: Apache-2.0
"""flent through the live emulation (docs/emulation.md, "flent"), as root: `flent tcp_nup` and
`flent rrul` from a real station's namespace to netperf's netserver in the server's, through the
emulated Høiland testbed cell; their data files load in flent, and what flent measured is what
the emulation delivered. Skipped, saying why, without root, /dev/net/tun, flent or netperf."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from airsched import emulate as E

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from emulate_flent import run_flent, why_not  # noqa: E402


def _why() -> str | None:
    try:
        E.check_available()
    except E.EmulationUnavailable as exc:
        return str(exc)
    return why_not()


WHY = _why()
live = pytest.mark.skipif(WHY is not None, reason=f"flent through the emulation: {WHY}")


@live
def test_flent_tcp_nup_measures_what_the_emulation_delivered(tmp_path: Path) -> None:
    r = run_flent("tcp_nup", 5, tmp_path, delay=1)
    from flent import resultset

    data = resultset.load(r["file"])
    assert data.meta("NAME") == "tcp_nup"
    assert {"TCP upload::1", "TCP upload::2", "TCP upload sum", "Ping (ms) ICMP"} <= set(data.series_names)
    # What flent saw (its sum series integrated over its 0.2-s steps: netperf's interim
    # reports) against the bits the emulation carried for the two data connections. netperf
    # counts what it wrote into its sockets, so flent may see up to both streams' send buffers
    # (tcp_wmem's maximum each) more than the cell carried by the end of a 5-s test; below, the
    # edges of the interim reports: within 10 % (runs gave +0.2, -4, +6 and, once, +15 %).
    wmem_max = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    flent_up, carried = r["flent_mbit"]["TCP upload sum"], r["emulate_up_mbit"]
    assert 0.9 * carried <= flent_up <= 1.1 * carried + 2 * wmem_max * 8 / 1e6, r
    assert r["emulate_up_mbit"] > 25, "the cell carried the uploads"
    assert 0 < r["flent"]["Ping (ms) ICMP"] < 2000


@live
def test_flent_rrul_runs_its_eight_streams_and_pings_through_the_cell(tmp_path: Path) -> None:
    r = run_flent("rrul", 5, tmp_path, delay=1)
    means = r["flent"]
    for way in ("upload", "download"):
        for mark in ("BE", "BK", "CS5", "EF"):
            assert means[f"TCP {way} {mark}"] > 0, (way, mark, means)
    for ping in ("Ping (ms) ICMP", "Ping (ms) UDP BE", "Ping (ms) UDP BK", "Ping (ms) UDP EF"):
        assert 0 < means[ping] < 5000 and not math.isnan(means[ping]), (ping, means)
    vol = r["flent_mbit"]
    # As for tcp_nup: up to the four upload streams' send buffers above what the cell carried.
    wmem_max = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    carried = r["emulate_up_mbit"]
    assert 0.9 * carried <= vol["TCP upload sum"] <= 1.1 * carried + 4 * wmem_max * 8 / 1e6, r
    # The downloads are a few Mb/s here (the AP's queue to this station is shared with the
    # simulated TCP download to it): a few interim reports more or less move them by more.
    assert vol["TCP download sum"] == pytest.approx(r["emulate_down_mbit"], rel=0.25), r
