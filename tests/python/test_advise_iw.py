# SPDX-License-Identifier: Apache-2.0
"""`airsched import --cell`: iw station dump / info (iw 6.9 and 6.17 formats) to a scenario of the
cell, and back through the core and export (python/airsched/iw.py, tests/fixtures/iw)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from airsched import export
from airsched.importer import DeviceInput, import_devices
from airsched.iw import IwError, import_cell, parse_bitrate, parse_info, parse_station_dump
from airsched.scenario import ScenarioSource

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "iw"
HT = FIX / "ht-ap-iw6.9"
HE = FIX / "he-ap-iw6.17"
DSSS = FIX / "dsss-ap-iw6.9"


def test_bitrate_strings_of_iw() -> None:
    b = parse_bitrate("650.0 MBit/s VHT-MCS 7 80MHz short GI VHT-NSS 2", "x")
    assert (b.mbps, b.kind, b.mcs, b.nss, b.width_mhz, b.short_gi) == (650.0, "vht", 7, 2, 80, True)
    assert b.ht_mcs()[0] == 15
    b = parse_bitrate("1200.9 MBit/s 80MHz HE-MCS 11 HE-NSS 2 HE-GI 0 HE-DCM 0", "x")
    assert (b.kind, b.mcs, b.nss, b.width_mhz, b.short_gi) == ("he", 11, 2, 80, True)
    mcs, notes = b.ht_mcs()
    assert mcs == 15 and "HE-MCS 11" in notes[0]
    b = parse_bitrate("144.4 MBit/s MCS 15 short GI", "x")
    assert (b.kind, b.mcs, b.nss, b.ht_mcs()[0]) == ("ht", 15, 2, 15)
    assert parse_bitrate("300.0 MBit/s MCS 23 40MHz", "x").ht_mcs()[0] == 15  # 3 streams -> 2
    assert parse_bitrate("(unknown)", "x").mbps is None
    assert parse_bitrate("24.0 MBit/s", "x").ht_mcs()[0] == 3
    with pytest.raises(IwError, match=r"^f:3: tx bitrate: cannot read 'VHT-MC'"):
        parse_bitrate("650.0 MBit/s VHT-MC", "f:3: tx bitrate")


def test_station_dump_of_iw_6_9() -> None:
    sts = parse_station_dump((HT / "wlan0.station-dump.txt").read_text())
    assert [s.mac for s in sts] == [f"3c:22:fb:00:00:0{i}" for i in range(1, 5)]
    s = sts[0]
    assert (s.signal_dbm, s.signal_avg_dbm, s.tx_retries, s.tx_failed, s.tx_packets) == (-58, -59, 48211, 12, 1502251)
    assert (s.tx_duration_us, s.rx_duration_us, s.airtime_weight, s.connected_s) == (41234567, 2345678, 256, 200)
    assert s.tx_bitrate is not None and s.tx_bitrate.mcs == 15 and s.rx_bitrate is not None and s.rx_bitrate.mcs == 15
    assert s.flags["authorized"] == "yes" and s.other["beacon interval"] == "100"
    # iw prints expected throughput as thr/1000 "." thr%1000 unpadded: 80.39 is 80.039, 86.123 is 86.123.
    assert s.expected_mbps == 86.123 and sts[1].expected_mbps == 80.039
    assert sts[3].airtime_weight == 512


def test_iw_6_17_order_and_tables_read_the_same() -> None:
    """6.17 prints flags before statistics; a station's values do not depend on the order, and
    the -v MSDU table's rows are skipped."""
    text = (HT / "wlan0.station-dump.txt").read_text()
    blocks = text.split("Station ")[1:]
    flags = ("authorized", "authenticated", "associated", "preamble", "WMM", "MFP", "TDLS", "DTIM", "beacon interval",
             "short slot", "connected", "associated at", "current time")
    reordered = []
    for b in blocks:
        head, *lines = b.rstrip("\n").split("\n")
        first = [ln for ln in lines if ln.strip().startswith(flags)]
        rest = [ln for ln in lines if ln not in first]
        reordered.append("\n".join(["Station " + head, *first, *rest, "\tMSDU:", "\t\tTID\trx\ttx", "\t\t0\t1\t2"]))
    a = parse_station_dump(text)
    b = parse_station_dump("\n".join(reordered) + "\n")
    assert [(x.mac, x.signal_avg_dbm, x.tx_bitrate, x.tx_retries, x.flags, x.connected_s) for x in a] == \
        [(x.mac, x.signal_avg_dbm, x.tx_bitrate, x.tx_retries, x.flags, x.connected_s) for x in b]
    he = parse_station_dump((HE / "wlp1s0.station-dump.txt").read_text())
    assert [s.tx_bitrate.kind for s in he if s.tx_bitrate] == ["he", "vht", "legacy"]
    assert he[0].expected_mbps is None and he[2].signal_avg_dbm is None and he[2].signal_dbm == -65


def test_iw_info() -> None:
    i = parse_info((HT / "wlan0.iw-info.txt").read_text())
    assert (i.name, i.addr, i.ssid, i.type, i.channel, i.freq_mhz, i.width_mhz, i.band, i.txpower_dbm) == \
        ("wlan0", "02:11:22:33:44:55", "airsched-lab", "AP", 36, 5180, 20, "5GHz", 20.0)
    i = parse_info((DSSS / "wlan0.iw-info.txt").read_text())
    assert (i.width, i.band) == ("20 MHz (no HT)", "2.4GHz")
    with pytest.raises(IwError, match=r"^i:3: channel: expected `channel 36"):
        parse_info("Interface wlan0\n\tifindex 5\n\tchannel 36 (5180 MH\n", "i")


def test_imported_cell_round_trips_through_the_core_and_export() -> None:
    """The scenario's stations are the dump's (MAC, MCS, SNR from signal avg, weight), and the AP
    tree the core builds and export writes is the one tc printed."""
    cell = import_cell("wlan0", str(HT), duration="3s")
    src = ScenarioSource(cell.text, "cell.toml")
    info = src.validate()
    dump = parse_station_dump((HT / "wlan0.station-dump.txt").read_text())
    assert [(ln.name, ln.mcs, ln.rate_control, ln.airtime_weight) for ln in info.links] == \
        [(f"sta{i}", s.tx_bitrate.mcs, "fixed", s.airtime_weight) for i, s in enumerate(dump, 1)]
    assert info.ap_mac is not None and info.ap_mac.get("airtime") == "mac80211"
    for i, s in enumerate(dump, 1):
        assert f'name = "sta{i}"\nmac = "{s.mac}"' in cell.text
        assert f"snr = {s.signal_avg_dbm + 94}  #" in cell.text
    plan = export.plan_node(src, "ap")
    tc = import_devices([DeviceInput("wlan0", (HT / "wlan0.qdisc.json").read_text(), (HT / "wlan0.class.txt").read_text())])
    assert ["tc " + ln for ln in plan.devices[0].batch] == tc.text.splitlines()
    assert plan.weights == [("3c:22:fb:00:00:04", 512)]
    # Every guess is stated at its line.
    assert cell.guesses and all(f"guess: {g}" in cell.text for g in cell.guesses)


def test_imported_cells_run() -> None:
    """Each fixture's cell is a scenario the simulator runs, its stations at the rates iw saw."""
    import airsched

    for dev, d, std in (("wlan0", HT, "802.11n"), ("wlp1s0", HE, "802.11ax"), ("wlan0", DSSS, "802.11b")):
        cell = import_cell(dev, str(d), duration="1s")
        assert f'standard = "{std}"' in cell.text
        r = airsched.run(text=cell.text, overrides=["run.warmup=0.2s"])
        assert len(r.stations) == len(cell.stations)
    r = airsched.run(text=import_cell("wlan0", str(DSSS), duration="1s").text, overrides=["run.warmup=0.2s"])
    assert list(r.stations.rate_mbps) == [11.0, 1.0]
    # The WiFi 6 AP's cell is an 802.11ax cell at its width, each station at the standard, MCS,
    # streams and width iw saw: HE MCS 11 x 2 at 80 MHz, VHT MCS 2 x 1 at 80 MHz.
    he = import_cell("wlp1s0", str(HE), duration="3s")
    info = ScenarioSource(he.text, "he.toml").validate()
    assert info.standard == "802.11ax" and info.cell["width_mhz"] == 80
    assert [(ln.mcs, ln.nss) for ln in info.links[:2]] == [(11, 2), (2, 1)]
    assert 'standard = "802.11ac"  # tx bitrate 97.5 MBit/s VHT-MCS 2' in he.text
    assert 'guard_interval = "0.8us"  # HE-GI 0' in he.text
    # The 5 GHz cell's client at a legacy 24 Mb/s (no MCS) is imported as an 802.11a station.
    cell = import_cell("wlp1s0", str(HE), duration="1s")
    legacy = next(name for name, st in cell.stations if st.tx_bitrate.kind == "legacy")
    block = cell.text[cell.text.index(f'name = "{legacy}"'):].split("\n\n")[0]
    assert 'standard = "802.11a"' in block and 'rate = "24Mbps"' in block
    r = airsched.run(text=cell.text, overrides=["run.warmup=0.2s"])
    assert r.stations.set_index("name").loc[legacy, "rate_mbps"] == 24.0


@pytest.mark.parametrize("cut, line, what", [
    (lambda t: t[: t.index("VHT-MCS 2") + 5], 55, "cannot read 'VHT-M'"),  # cut inside a bitrate
    (lambda t: t[: t.index("\tsignal:  \t-79")], 52, "ends without a `signal:` or `tx bitrate:` line"),  # block cut short
    (lambda t: t.replace("\tsignal avg:\t-80 [-82, -83] dBm", "\tsignal avg:\tstrong"), 54, "signal avg: expected"),
    (lambda t: t.replace("\ttx retries:\t9000", "\ttx retr"), 51, "expected a tab-indented `label: value`"),
    (lambda t: "garbage\n" + t, 1, "expected `Station <mac> (on <interface>)`"),
])
def test_malformed_or_truncated_dump_names_the_line(cut, line: int, what: str) -> None:
    text = cut((HE / "wlp1s0.station-dump.txt").read_text())
    with pytest.raises(IwError) as exc:
        parse_station_dump(text, "dump.txt")
    msg = str(exc.value)
    assert msg.startswith(f"dump.txt:{line}: ") and what in msg and "\n" not in msg


def test_cli_import_cell(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "airsched", "import", "wlan0", "--cell", "--from"]
    p = subprocess.run([*cmd, str(HT), "-o", str(tmp_path / "cell.toml")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "cell.toml").read_text() == import_cell("wlan0", str(HT)).text
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "wlan0.iw-info.txt").write_text((HT / "wlan0.iw-info.txt").read_text())
    dump = (HT / "wlan0.station-dump.txt").read_text()
    (bad / "wlan0.station-dump.txt").write_text(dump[: dump.index("\tsignal:  \t-86")])
    p = subprocess.run([*cmd, str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "wlan0.station-dump.txt:75: station 3c:22:fb:00:00:03 (line 67)" in p.stderr


def test_cli_import_cell_reads_saved_files_as_the_tc_import_does(tmp_path: Path) -> None:
    """--cell --from reads through the importer's bounded readers: a binary dump is one line
    naming it, an unwritable -o is one line too (no traceback)."""
    cmd = [sys.executable, "-m", "airsched", "import", "wlan0", "--cell", "--from"]
    bad = tmp_path / "bin"
    bad.mkdir()
    (bad / "wlan0.iw-info.txt").write_text((HT / "wlan0.iw-info.txt").read_text())
    (bad / "wlan0.station-dump.txt").write_bytes(b"Station 3c:22:fb:00:00:01\n\x00\x01")
    p = subprocess.run([*cmd, str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"error: {bad / 'wlan0.station-dump.txt'}:2: a NUL byte: a binary file, not iw output\n"
    p = subprocess.run([*cmd, str(HT), "-o", str(tmp_path / "no" / "cell.toml")], capture_output=True, text=True)
    assert p.returncode != 0
    assert p.stderr.splitlines()[-1].startswith(f"error: {tmp_path / 'no' / 'cell.toml'}: cannot write")
    assert "Traceback" not in p.stderr
