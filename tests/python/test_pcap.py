"""`--pcap`: the captures of the air and the wire, read back with scapy's dissectors, hold the
frames the run counted: attempts per rate or MCS, retries, errors, ACKs, beacons, A-MPDU sizes,
addresses and simulated timestamps; and a run with captures gives the results of one without."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import airsched

scapy = pytest.importorskip("scapy.all", reason="scapy is not installed (it is in airsched's test extra)")
from scapy.all import Dot11, Ether, PcapReader, RadioTap  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
AP = "02:00:00:00:01:00"


def sta_mac(i: int) -> str:
    return f"02:00:00:00:01:{i + 1:02x}"


_READ: dict[Path, list] = {}


def frames(path: Path) -> list:
    """Every frame of a capture, dissected by scapy (read once per file: scapy is slow)."""
    if path not in _READ:
        with PcapReader(str(path)) as reader:
            _READ[path] = list(reader)
    return _READ[path]


def ds(pkt) -> str:
    fc = pkt[Dot11].FCfield
    return "down" if fc.from_DS else "up"


@pytest.fixture(scope="module")
def dsss(tmp_path_factory):
    """Garroppo's 802.11b testbed, MS2 in a bad position (ARF, frame errors, retries), whole run measured."""
    out = tmp_path_factory.mktemp("pcap-b")
    overrides = {"station[ms2].position": "bad", "run.warmup": "0s", "run.duration": "1.5s", "run.sample_interval": "500ms"}
    path = ROOT / "scenarios" / "garroppo" / "share-1-4-drr.toml"
    return airsched.run(path, overrides=overrides, pcap=out), airsched.run(path, overrides=overrides), out


def test_results_are_the_same_with_captures(dsss) -> None:
    with_pcap, without, _ = dsss
    for table in ("stations", "flows", "rates", "samples", "nodes"):
        pd.testing.assert_frame_equal(getattr(with_pcap, table), getattr(without, table))
    assert with_pcap.summary["events"] == without.summary["events"]


def test_air_capture_holds_the_counted_frames(dsss) -> None:
    r, _, out = dsss
    assert sorted(p.name for p in r.pcaps) == ["air.pcap", "ap-wlan0.pcap", "ms1-wlan0.pcap", "ms2-wlan0.pcap", "wire-eth0.pcap"]
    air = frames(out / "air.pcap")
    names = list(r.stations["name"])
    mac_of = {sta_mac(i): n for i, n in enumerate(names)}
    data = collections.Counter()
    retries = collections.Counter()
    bad = collections.Counter()
    acks = collections.Counter()
    bad_acks = collections.Counter()
    beacons = 0
    last = 0.0
    for p in air:
        t = float(p.time)
        assert last <= t <= 1.5
        last = t
        rt, d = p[RadioTap], p[Dot11]
        assert rt.ChannelFrequency == 2412 and rt.dBm_AntNoise == -94
        fcs_bad = bool(rt.Flags.badFCS)
        if d.type == 0 and d.subtype == 8:
            beacons += 1
            assert d.addr1 == "ff:ff:ff:ff:ff:ff" and d.addr2 == AP
        elif d.type == 2:
            direction = ds(p)
            sta = d.addr1 if direction == "down" else d.addr2
            assert (d.addr2 if direction == "down" else d.addr1) == AP
            name = mac_of[sta]
            data[(name, direction, float(rt.Rate))] += 1  # scapy shows Mb/s (the field is in 500 kb/s)
            retries[name] += bool(d.FCfield.retry)
            bad[name] += fcs_bad
            # The IP header inside: the flow's addresses.
            assert p.wirelen - rt.len == p["IP"].len + 36  # MAC header, LLC/SNAP, FCS
        elif d.type == 1 and d.subtype == 13:
            peer = d.addr1 if d.addr1 != AP else None
            acks[mac_of[peer] if peer else "to-ap"] += 1
            bad_acks["all"] += fcs_bad
    rates = r.rates
    expected = {(row.station, row.direction, row.rate_mbps): row.attempts for row in rates.itertuples() if row.attempts}
    assert dict(data) == expected
    st = r.stations.set_index("name")
    for name in names:
        assert bad[name] == st.loc[name, "data_errors"] + st.loc[name, "collisions"]
        # A retry is counted when a failure is not final; the retried attempt may fall after the end.
        assert 0 <= st.loc[name, "retries"] - retries[name] <= 2
    assert retries["ms2"] > 10
    assert beacons == int(r.nodes.set_index("name").loc["ap", "beacons"])
    # Every decoded data frame is answered; here all data goes down, so ACKs go to the AP.
    decoded = sum(st.loc[n, "tx_attempts"] - st.loc[n, "data_errors"] - st.loc[n, "collisions"] for n in names)
    assert sum(acks.values()) == decoded
    assert bad_acks["all"] == st["ack_errors"].sum()


def test_radio_captures_and_signal(dsss) -> None:
    r, _, out = dsss
    ms2 = frames(out / "ms2-wlan0.pcap")
    to_ms2 = [p for p in ms2 if p[Dot11].type == 2]
    assert to_ms2 and all(p[Dot11].addr1 == sta_mac(1) for p in to_ms2)
    # The signal over the noise floor is the link's SNR: the station's mean within a dB.
    snr = sum(p[RadioTap].dBm_AntSignal - p[RadioTap].dBm_AntNoise for p in to_ms2) / len(to_ms2)
    assert snr == pytest.approx(float(r.stations.set_index("name").loc["ms2", "snr_mean_db"]), abs=1.0)
    ms1_macs = {p[Dot11].addr1 for p in frames(out / "ms1-wlan0.pcap") if p[Dot11].type == 2}
    assert ms1_macs == {sta_mac(0)}


def test_wire_capture_is_ethernet_from_the_server(dsss) -> None:
    r, _, out = dsss
    wire = frames(out / "wire-eth0.pcap")
    from_server = [p for p in wire if p[Ether].src == "02:00:00:00:00:fe"]
    assert from_server and all(p[Ether].dst == "02:00:00:00:00:01" for p in from_server)
    fl = r.flows.set_index("name")
    sent = fl[fl["src"] == "server"]["sent_packets"].sum()
    # Every packet the server sent went on the wire, but one sent in the run's last instant.
    assert sent - 1 <= len(from_server) <= sent
    assert {p["IP"].src for p in from_server} == {"10.0.0.1"}
    assert all(p.wirelen == p["IP"].len + 18 for p in from_server)


def test_ht_capture_has_the_ampdus_and_mcs_of_the_run(tmp_path: Path) -> None:
    r = airsched.run(
        ROOT / "scenarios" / "hoiland" / "udp.toml",
        overrides={"run.warmup": "0s", "run.duration": "0.3s", "run.sample_interval": "100ms", "ap.queueing": "airtime"},
        pcap=tmp_path,
    )
    names = list(r.stations["name"])
    mac_of = {sta_mac(i): n for i, n in enumerate(names)}
    sizes: dict[tuple[str, str, int], int] = collections.Counter()
    ppdus: dict[tuple[str, str, int], int] = collections.Counter()
    open_ref: dict[int, int] = collections.Counter()
    where: dict[int, tuple[str, str]] = {}
    for p in frames(tmp_path / "air.pcap"):
        rt, d = p[RadioTap], p[Dot11]
        if d.type != 2:
            continue
        direction = ds(p)
        name = mac_of[d.addr1 if direction == "down" else d.addr2]
        if "A_MPDU" in str(rt.present):
            open_ref[rt.A_MPDU_ref] += 1
            where[rt.A_MPDU_ref] = (name, direction)
            if rt.A_MPDU_flags.LastSubframe:
                ppdus[(name, direction, rt.MCS_index)] += 1
        else:
            sizes[(name, direction, 1)] += 1
            ppdus[(name, direction, rt.MCS_index)] += 1
    for ref, n in open_ref.items():
        sizes[(*where[ref], n)] += 1
    expected = {(a.station, a.direction, a.mpdus): a.count for a in r.aggregates.itertuples() if a.count}
    assert dict(sizes) == expected
    assert max(n for (_, _, n) in sizes) > 10
    rates = {(x.station, x.direction, x.mcs): x.attempts for x in r.rates.itertuples() if x.attempts}
    assert dict(ppdus) == rates


def test_cli_pcap_option(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "airsched", "run", str(ROOT / "scenarios" / "anomaly.toml"), "--duration", "2s", "--pcap", str(tmp_path / "cap")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "wrote 5 captures in" in proc.stderr
    assert (tmp_path / "cap" / "air.pcap").stat().st_size > 10_000
    (tmp_path / "f").write_text("x")
    bad = subprocess.run(
        [sys.executable, "-m", "airsched", "run", str(ROOT / "scenarios" / "anomaly.toml"), "--pcap", str(tmp_path / "f")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--pcap:" in bad.stderr
