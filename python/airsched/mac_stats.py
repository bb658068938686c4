# SPDX-License-Identifier: Apache-2.0
"""mac80211's statistics of a run as the Linux tools print them (next-steps paper §4.4):
``iw dev wlan0 station dump`` (the airtime lines, iw 6.9 ``station.c``) and debugfs
``stations/<mac>/airtime`` and ``stations/<mac>/aqm`` (Linux 6.18 ``net/mac80211/debugfs_sta.c``),
from the ``mac80211_stations`` and ``mac80211_txqs`` tables of a run made with ``--mac-stats``
(``runner.run(..., mac_stats=True)``). See docs/next-steps-statistics.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Rows = Sequence[Mapping[str, Any]]

#: debugfs ``stations/*/aqm`` column heading (6.x: without the CoDel target line older kernels
#: printed first).
AQM_HEADING = (
    "tid ac backlog-bytes backlog-packets new-flows drops marks overlimit collisions tx-bytes tx-packets flags"
)
#: The TXQ flags column: running, and ``IEEE80211_TXQ_AMPDU`` (bit 1) once a BlockAck session
#: exists (airsched: the TID has sent a frame); the STOP, NO-AMSDU and DIRTY flags are not modelled.
AQM_FLAGS_SESSION = "0x2(RUN AMPDU)"
AQM_FLAGS_IDLE = "0x0(RUN)"


def station_dump(stations: Rows, dev: str = "wlan0") -> str:
    """``iw dev DEV station dump``: one block per station with the lines airsched models (tx and
    rx duration, airtime weight), in iw's order and format."""
    out = []
    for s in stations:
        out.append(f"Station {s['mac']} (on {dev})")
        out.append(f"\ttx duration:\t{s['tx_airtime_us']} us")
        out.append(f"\trx duration:\t{s['rx_airtime_us']} us")
        out.append(f"\tairtime weight: {s['airtime_weight']}")
    return "\n".join(out) + ("\n" if out else "")


def debugfs_airtime(station: Mapping[str, Any]) -> str:
    """debugfs ``stations/<mac>/airtime`` of one station."""
    return (
        f"RX: {station['rx_airtime_us']} us\nTX: {station['tx_airtime_us']} us\n"
        f"Weight: {station['airtime_weight']}\n"
        f"Deficit: VO: {station['deficit_vo_us']} us VI: {station['deficit_vi_us']} us "
        f"BE: {station['deficit_be_us']} us BK: {station['deficit_bk_us']} us\n"
    )


def debugfs_aqm(txqs: Rows, station: str) -> str:
    """debugfs ``stations/<mac>/aqm`` of the station named ``station``: one line per TID."""
    lines = [AQM_HEADING]
    for t in txqs:
        if t["station"] != station:
            continue
        fields = (
            "tid ac backlog_bytes backlog_packets flows drops marks overlimit collisions tx_bytes tx_packets"
        ).split()
        flags = AQM_FLAGS_SESSION if t["tx_packets"] else AQM_FLAGS_IDLE
        lines.append(" ".join(str(t[f]) for f in fields) + " " + flags)
    return "\n".join(lines) + "\n"


def text(stations: Rows, txqs: Rows, phy: str = "phy0", dev: str = "wlan0") -> str:
    """Everything: the station dump, then each station's debugfs ``airtime`` and ``aqm`` files,
    each under a ``# command`` line."""
    if not stations:
        return ""
    parts = [f"# iw dev {dev} station dump\n" + station_dump(stations, dev)]
    base = f"/sys/kernel/debug/ieee80211/{phy}/netdev:{dev}/stations"
    for s in stations:
        parts.append(f"# cat {base}/{s['mac']}/airtime\n" + debugfs_airtime(s))
        parts.append(f"# cat {base}/{s['mac']}/aqm\n" + debugfs_aqm(txqs, s["station"]))
    return "\n".join(parts)
