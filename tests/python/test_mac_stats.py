# SPDX-License-Identifier: Apache-2.0
"""`airsched run --mac-stats`: mac80211's statistics tables and their iw/debugfs text (next-steps
§4.4, docs/next-steps-statistics.md)."""

from __future__ import annotations

from airsched import mac_stats
from airsched.iw import parse_station_dump
from airsched.runner import run

CELL = """
[run]
duration = "2s"
warmup = "0s"
seed = 2
[cell]
standard = "802.11n"
beacons = false
[ap]
mac_queue = "fq-mac"
airtime = "mac80211"
[[station]]
name = "a"
mcs = 7
airtime_weight = 512
[[station]]
name = "b"
mcs = 2
[[flow]]
name = "down-a"
src = "server"
dst = "a"
rate = "saturate"
[[flow]]
name = "up-b"
src = "b"
dst = "server"
rate = "5Mbit"
"""


def test_tables_and_text_agree_with_the_run():
    r = run(text=CELL, mac_stats=True)
    stations = r.rows("mac80211_stations")
    txqs = r.rows("mac80211_txqs")
    assert [s["station"] for s in stations] == ["a", "b"]
    assert len(txqs) == 16
    a, b = stations
    assert a["airtime_weight"] == 512 and b["airtime_weight"] == 256
    assert a["tx_airtime_us"] > 0 and a["rx_airtime_us"] == 0
    # b only sends: the AP received its PPDUs (rx airtime) and sent it nothing but responses.
    assert b["rx_airtime_us"] > 0 and b["tx_airtime_us"] == 0
    text = mac_stats.text(stations, txqs)
    # The station dump parses back with airsched's own iw importer (iw 6.9's format). The
    # importer also needs a signal and a tx bitrate line, which the simulated dump does not print
    # (only the airtime lines): given here.
    dump = text.split("# cat ")[0].split("\n", 1)[1]
    dump = dump.replace(" (on wlan0)\n", " (on wlan0)\n\tsignal:  \t-50 dBm\n\ttx bitrate:\t65.0 MBit/s MCS 7\n")
    parsed = parse_station_dump(dump)
    assert [(p.mac, p.tx_duration_us, p.rx_duration_us, p.airtime_weight) for p in parsed] == [
        (s["mac"], s["tx_airtime_us"], s["rx_airtime_us"], s["airtime_weight"]) for s in stations
    ]
    airtime = mac_stats.debugfs_airtime(a).splitlines()
    assert airtime[0] == f"RX: {a['rx_airtime_us']} us" and airtime[2] == "Weight: 512"
    assert airtime[3].startswith("Deficit: VO: ") and airtime[3].endswith(" us")
    aqm = mac_stats.debugfs_aqm(txqs, "a").splitlines()
    assert aqm[0] == mac_stats.AQM_HEADING and len(aqm) == 9
    tid0 = aqm[1].split()
    row = next(t for t in txqs if t["station"] == "a" and t["tid"] == 0)
    assert tid0[:3] == ["0", "2", str(row["backlog_bytes"])]
    assert aqm[1].endswith(" 0x2(RUN AMPDU)") and aqm[2].endswith(" 0x0(RUN)")
    assert int(tid0[9]) == row["tx_bytes"] and int(tid0[10]) == row["tx_packets"] > 0


def test_not_asked_or_not_fq_mac_gives_no_rows():
    assert run(text=CELL).rows("mac80211_stations") == []
    fifo = CELL.replace('mac_queue = "fq-mac"\nairtime = "mac80211"\n', "")
    r = run(text=fifo, mac_stats=True)
    assert r.rows("mac80211_stations") == [] and r.rows("mac80211_txqs") == []
    assert mac_stats.text([], []) == ""


def test_cli_prints_the_text(tmp_path):
    from typer.testing import CliRunner

    from airsched.cli import app

    path = tmp_path / "cell.toml"
    path.write_text(CELL, encoding="utf-8")
    out = CliRunner().invoke(app, ["run", str(path), "--mac-stats"])
    assert out.exit_code == 0, out.output
    assert "# iw dev wlan0 station dump" in out.output
    assert "\tairtime weight: 512" in out.output
    assert "/stations/02:00:00:00:01:01/aqm" in out.output
