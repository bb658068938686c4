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
        rt, d = p[RadioTap], p[Dot11]
        # Frames start before the end; the ACK of a data frame that did may start after it (the
        # longest data frame here, 1102 bytes at 1 Mb/s, lasts 9 ms, then SIFS).
        assert last <= t <= (1.5 + 0.0095 if (d.type, d.subtype) == (1, 13) else 1.5)
        last = t
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


@pytest.fixture(scope="module")
def tcp_run(tmp_path_factory):
    """A TCP download (SACK on) to "a" through a short AP queue that drops, and a ping to "b",
    whole run measured (issue 29, item 7)."""
    out = tmp_path_factory.mktemp("pcap-tcp")
    overrides = {
        "run.warmup": "0s", "run.duration": "4s", "run.sample_interval": "500ms", "flow[download].sack": True,
        "ap.tc": "tc qdisc replace dev wlan0 root pfifo limit 6",
    }
    return airsched.run(ROOT / "scenarios" / "tcp-bufferbloat.toml", overrides=overrides, pcap=out), out


def _tcp_payload(p) -> int:
    from scapy.all import IP, TCP

    return p[IP].len - 4 * p[IP].ihl - 4 * p[TCP].dataofs


def _checksums_hold(p) -> bool:
    """The IPv4 header checksum, and the transport checksum over the header and a payload of
    zero bytes (the capture keeps headers only)."""
    from scapy.all import ICMP, IP, TCP, UDP
    from scapy.layers.inet import in4_chksum
    from scapy.utils import checksum

    ip = p[IP]
    if checksum(bytes(ip)[: 4 * ip.ihl]) != 0:
        return False
    l4 = ip.payload
    header = bytes(l4)
    if TCP in p:
        header = header[: 4 * p[TCP].dataofs]
        return in4_chksum(6, ip, header + bytes(ip.len - 4 * ip.ihl - len(header))) == 0
    if UDP in p:
        return in4_chksum(17, ip, header[:8] + bytes(ip.len - 28)) == 0
    if ICMP in p:
        return checksum(header[:8] + bytes(ip.len - 28)) == 0
    return False


def test_tcp_capture_has_real_sequence_numbers_flags_options_and_retransmissions(tcp_run) -> None:
    """Every TCP segment and ACK decodes as TCP with the ACK flag, timestamps and (ACKs) SACK
    blocks; the server's segments on the wire repeat a sequence number exactly as often as the run
    counts retransmissions; the last ACK acknowledges what the receiver got in order."""
    from scapy.all import IP, TCP

    r, out = tcp_run
    fl = r.flows.set_index("name")
    down = fl.loc["download"]
    segments = [p for p in frames(out / "wire-eth0.pcap") if TCP in p and p[IP].src == "10.0.0.1"]
    assert segments and all(_checksums_hold(p) for p in segments[:500])
    assert {str(p[TCP].flags) for p in segments} == {"A"}
    mss = {_tcp_payload(p) for p in segments}
    assert mss == {1448}, mss
    seen: set[int] = set()
    repeats = 0
    for p in segments:
        seq = p[TCP].seq
        assert (seq - 1) % 1448 == 0  # ISN 0: the first byte is sequence number 1
        repeats += seq in seen
        seen.add(seq)
        opts = dict(p[TCP].options)
        assert "Timestamp" in opts and opts["Timestamp"][0] <= 4000
    assert len(segments) in (down["sent_packets"], down["sent_packets"] - 1)
    assert down["tcp_retransmits"] > 3
    assert repeats == down["tcp_retransmits"]
    # The ACKs, up from "a" (its own capture): cumulative, with the window and SACK blocks.
    acks = [p for p in frames(out / "a-wlan0.pcap") if TCP in p and p[IP].src != "10.0.0.1"]
    assert acks and all(_checksums_hold(p) for p in acks[:500])
    assert {str(p[TCP].flags) for p in acks} == {"A"} and all(_tcp_payload(p) == 0 for p in acks)
    numbers = [p[TCP].ack for p in acks]
    delivered = round(down["goodput_mbps"] * 1e6 * 4 / 8)
    assert 0 <= delivered - (max(numbers) - 1) <= 3 * 1448
    sacks = [dict(p[TCP].options)["SAck"] for p in acks if "SAck" in dict(p[TCP].options)]
    assert sacks, "a lossy queue with SACK on gives SACK blocks"
    for p in acks:
        blocks = dict(p[TCP].options).get("SAck", ())
        assert all(start > p[TCP].ack and end > start for start, end in zip(blocks[::2], blocks[1::2]))
    assert all(p[TCP].window > 0 for p in acks)
    # Echoed timestamps: an ACK's TSecr is the TSval of a segment that was sent.
    tsvals = {dict(p[TCP].options)["Timestamp"][0] for p in segments}
    assert all(dict(p[TCP].options)["Timestamp"][1] in tsvals for p in acks)


def test_ping_capture_has_echo_requests_and_replies(tcp_run) -> None:
    """Echo requests go down as ICMP type 8 and come back as type 0 with the same identifier and
    sequence number; every answered ping of the pings table has its reply in the capture."""
    from scapy.all import ICMP, IP

    r, out = tcp_run
    air = [p for p in frames(out / "air.pcap") if ICMP in p and not p["RadioTap"].Flags.badFCS]
    requests = [p for p in air if p[ICMP].type == 8]
    replies = [p for p in air if p[ICMP].type == 0]
    assert requests and replies and {p[ICMP].type for p in air} == {0, 8}
    assert all(p[IP].dst == p[IP].dst and p[ICMP].code == 0 for p in air)
    assert all(_checksums_hold(p) for p in air)
    ids = {p[ICMP].id for p in requests}
    assert len(ids) == 1 and {p[ICMP].id for p in replies} == ids
    asked = {p[ICMP].seq for p in requests}
    answered = {p[ICMP].seq for p in replies}
    assert answered <= asked
    pings = r.pings
    assert set(pings["seq"]) <= answered and len(pings) > 10
    fl = r.flows.set_index("name")
    assert len({p[ICMP].seq for p in frames(out / "wire-eth0.pcap") if ICMP in p and p[ICMP].type == 8}) in (
        fl.loc["ping", "sent_packets"], fl.loc["ping", "sent_packets"] - 1)


def test_he_capture_has_the_ofdma_exchanges_of_the_run(tmp_path: Path) -> None:
    """An 802.11ax cell with uplink OFDMA: the capture's HE MU MPDUs, BlockAckReqs, Basic
    Triggers, HE TB PPDUs (data and QoS Null) and Multi-STA BlockAcks are those the run's
    `ofdma` table counts (collided MU PPDUs and Triggers with a bad FCS), on the RUs it
    reports, at the times the standard gives."""
    path = ROOT / "scenarios" / "wifi6-ofdma-ul.toml"
    overrides = {"run.warmup": "0s", "run.duration": "0.4s", "run.sample_interval": "100ms"}
    r = airsched.run(path, overrides=overrides, pcap=tmp_path)
    pd.testing.assert_frame_equal(r.ofdma, airsched.run(path, overrides=overrides).ofdma)
    mac_of = {sta_mac(i): n for i, n in enumerate(r.stations["name"])}
    dl, nulls, ul = collections.Counter(), collections.Counter(), collections.Counter()
    mu_ppdus: dict[str, list[tuple[str, bool]]] = collections.defaultdict(list)
    ru_of: dict[str, set[int]] = collections.defaultdict(set)
    tones: dict[str, list[int]] = collections.defaultdict(list)
    su_collided: dict[str, set] = collections.defaultdict(set)
    bars, multi_sta, trigger_users, collided_triggers, gaps = 0, 0, 0, 0, []
    # Per answered Trigger: whether some station's answer carried data (not QoS Null alone).
    with_data: list[bool] = []
    last_trigger = None
    for p in frames(tmp_path / "air.pcap"):
        rt, d = p[RadioTap], p[Dot11]
        fmt = rt.he_data1 & 3 if rt.present.HE else None
        raw = bytes(d)
        if d.type == 2 and fmt in (0, None) and rt.Flags.badFCS:  # a collided single-user data PPDU
            name = mac_of[d.addr1 if ds(p) == "down" else d.addr2]
            su_collided[name].add(rt.A_MPDU_ref if rt.present.A_MPDU else ("lone", str(p.time)))
        if d.type == 2 and fmt == 2:  # a DL MPDU in an HE MU PPDU
            dl[mac_of[d.addr1]] += 1
            mu_ppdus[str(p.time)].append((d.addr1, not rt.Flags.badFCS))
            ru_of[str(p.time)].add(rt.he_data5 & 0x0F)
            if d.addr1 not in {a for a, _ in mu_ppdus[str(p.time)][:-1]}:
                tones[mac_of[d.addr1]].append({4: 26, 5: 52, 6: 106, 7: 242}[rt.he_data5 & 0x0F])
        elif d.type == 2 and fmt == 3:  # an HE TB PPDU
            (nulls if d.subtype == 12 else ul)[mac_of[d.addr2]] += 1
            if last_trigger is not None:
                gaps.append((float(p.time - last_trigger[0]), last_trigger[1]))
                last_trigger = None
                with_data.append(False)
            with_data[-1] |= d.subtype != 12
        elif d.type == 1 and d.subtype == 2:  # Trigger: 24 octets, then 6 per User Info
            n = (len(raw) - 24) // 6
            trigger_users += n
            collided_triggers += bool(rt.Flags.badFCS)
            last_trigger = None if rt.Flags.badFCS else (p.time, 28 + 6 * n)
        elif d.type == 1 and d.subtype == 8:
            bars += 1
        elif d.type == 1 and d.subtype == 9 and raw[16] == 11 << 1:
            multi_sta += 1
    o = r.ofdma.set_index("station")
    assert dict(dl) == {k: v for k, v in o["dl_mpdus"].items() if v}
    assert dict(nulls) == {k: v for k, v in o["ul_qos_null"].items() if v}
    assert dict(ul) == {k: v for k, v in o["ul_mpdus"].items() if v}
    assert trigger_users == o["ul_triggers"].sum() > o["ul_tb_ppdus"].sum() > 0 and collided_triggers > 0
    # 20 MHz: ns-3's equal RUs, 1 x 242, 2 x 106, 4 x 52 or 9 x 26 tones (radiotap's RU
    # allocation 7, 6, 5, 4), as the table's mean RU per station.
    for t, m in mu_ppdus.items():
        assert ru_of[t] == {{1: 7, 2: 6, 4: 5, 9: 4}[len({a for a, _ in m})]}, (t, m, ru_of[t])
    for name, row in o.iterrows():
        assert row["dl_ru_tones_mean"] == pytest.approx(sum(tones[name]) / len(tones[name])), name
    # One BlockAckReq per further user of each MU PPDU that did not collide (every MPDU of one
    # that collided has a bad FCS; none is lost to noise on this perfect channel).
    users = [{a for a, _ in m} for m in mu_ppdus.values()]
    assert sum(len(u) for u in users) == o["dl_mu_ppdus"].sum() and max(len(u) for u in users) <= 9
    sent = [m for m in mu_ppdus.values() if any(ok for _, ok in m)]
    assert all(all(ok for _, ok in m) for m in sent) and len(sent) < len(mu_ppdus)
    assert bars == sum(len({a for a, _ in m}) - 1 for m in sent)
    # A station's collisions: its single-user PPDUs (either way) that collided, and the AP's
    # collided MU PPDUs it was a user of; a collided Trigger is no station's frame.
    mu_collided = collections.Counter(mac_of[a] for m in mu_ppdus.values() if m not in sent for a in {a for a, _ in m})
    expected = {n: len(su_collided[n]) + mu_collided[n] for n in mac_of.values()}
    assert r.stations.set_index("name")["collisions"].to_dict() == expected
    assert sum(mu_collided.values()) > 0 and sum(len(v) for v in su_collided.values()) > 0
    # A Multi-STA BlockAck per Trigger that did not collide and drew some data: answers of QoS
    # Null frames alone, sent with No Ack, get none (ns-3 3.44's AP).
    assert multi_sta == sum(with_data) > 0 and len(with_data) == len(gaps)
    # The TB PPDUs start SIFS (16 us) after the Trigger at 6 Mb/s: 20 us of preamble and a
    # 4-us symbol per 24 bits of SERVICE (16), the frame and the tail (6) (IEEE 802.11-2020
    # 17.4.3).
    for gap, octets in gaps:
        assert abs(gap - (20 + 4 * -(-(16 + 8 * octets + 6) // 24) + 16) * 1e-6) < 1e-9, (gap, octets)
