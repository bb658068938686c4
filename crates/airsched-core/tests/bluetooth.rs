//! The Bluetooth piconet and its coexistence with 802.11b, against hand-computed and published
//! values (docs/model-bluetooth.md; reference phy80211-bluetooth.md section 8,
//! next-capabilities.md sections 1 and 2).

use airsched_core::parse_scenario_with;
use airsched_core::{run_scenario, Nanos, Simulation};
use rand::{Rng, SeedableRng};

fn scenario(text: &str, sets: &[&str]) -> airsched_core::Scenario {
    parse_scenario_with(text, "test.toml", sets).unwrap_or_else(|e| panic!("{e}"))
}

/// A piconet of one slave with a saturating UDP download (`size` bytes of payload) and, when
/// `up`, a saturating upload too; an idle WLAN station on channel 6 without beacons.
fn piconet(types: &str, size: u32, up: bool, extra: &str) -> String {
    let mut s = format!(
        r#"
[run]
duration = "12s"
warmup = "2s"
seed = 3

[cell]
channel = 6
beacons = false

[[station]]
name = "wlan1"
rate = "11Mbps"

[[bluetooth]]
name = "bt1"
packet_types = {types}
{extra}

[[flow]]
name = "down"
src = "server"
dst = "bt1"
rate = "saturate"
size = {size}
"#
    );
    if up {
        s.push_str(&format!(
            "\n[[flow]]\nname = \"up\"\nsrc = \"bt1\"\ndst = \"server\"\nrate = \"saturate\"\nsize = {size}\n"
        ));
    }
    s
}

/// UDP goodput (kb/s of payload) of the flow named `name`.
fn goodput_kbps(r: &airsched_core::RunResults, name: &str) -> f64 {
    r.flows.iter().find(|f| f.name == name).unwrap().goodput_mbps * 1000.0
}

#[test]
fn full_dh1_dh3_dh5_packets_reach_the_asymmetric_maxima() {
    // PDU = IP + 3 (BNEP compressed) + 4 (L2CAP) = a whole number of full packets, each
    // answered by a NULL: goodput = max rate x UDP payload / PDU (hand-computed).
    for (types, size, pdu, max_bps) in [
        ("[\"DH1\"]", 1315u32, 1350.0, 172_800.0),
        ("[\"DH3\"]", 1246, 1281.0, 585_600.0),
        ("[\"DH5\"]", 1321, 1356.0, 723_200.0),
    ] {
        let r = run_scenario(&scenario(&piconet(types, size, false, ""), &[])).unwrap();
        let want = max_bps * size as f64 / pdu / 1000.0;
        let got = goodput_kbps(&r, "down");
        assert!((got / want - 1.0).abs() < 0.003, "{types}: {got} kb/s, computed {want}");
        let down = &r.bluetooth[0];
        assert!((down.l2cap_mbps / (max_bps / 1e6) - 1.0).abs() < 0.003, "{types}: {}", down.l2cap_mbps);
        assert_eq!((down.retransmissions, down.duplicates, down.hit_by_wlan), (0, 0, 0));
        // The slave answers every master packet with a NULL.
        assert!((r.bluetooth[1].empty_packets as i64 - down.data_packets as i64).abs() <= 1);
    }
}

#[test]
fn a_1500_byte_ip_packet_costs_4_dh5_and_1_dh3_over_a_bridged_nap() {
    // src-only BNEP header (9 B): PDU 1513 = 4 x 339 + 157 -> 4 DH5 + 1 DH3, 4 x 6 + 4 = 28
    // slots = 17.5 ms per packet: 1472 x 8 / 17.5 ms = 672.9 kb/s of UDP payload (IP: 685.7,
    // reference next-capabilities 1.3).
    let text = piconet("[\"DH1\", \"DH3\", \"DH5\"]", 1472, false, "") + "\n[piconet]\nbnep_header = \"src-only\"\n";
    let r = run_scenario(&scenario(&text, &[])).unwrap();
    let want = 1472.0 * 8.0 / 0.0175 / 1000.0;
    let got = goodput_kbps(&r, "down");
    assert!((got / want - 1.0).abs() < 0.003, "{got} kb/s, computed {want}");
    // 5 baseband packets per IP packet.
    let b = &r.bluetooth[0];
    assert_eq!(b.data_packets / 5, b.delivered, "{b:?}");
}

#[test]
fn dh5_both_ways_shares_the_slots_symmetrically() {
    // Symmetric DH5: 339 x 8 / (10 x 625 us) = 433.9 kb/s each way.
    let r = run_scenario(&scenario(&piconet("[\"DH5\"]", 1321, true, ""), &[])).unwrap();
    for b in &r.bluetooth {
        assert!((b.l2cap_mbps / 0.43392 - 1.0).abs() < 0.003, "{b:?}");
        assert!((b.slot_share - 0.5).abs() < 0.001);
    }
}

#[test]
fn lost_packets_are_retransmitted_until_acknowledged_and_duplicates_filtered() {
    // Each packet is lost with p = 0.2 (both directions). A DH5 segment advances only when the
    // master's packet and the slave's NULL (its ARQN) both get through: (1 - p)^2 = 0.64 of
    // the loss-free rate. A lost NULL makes the master resend a segment the slave has: a
    // duplicate, which SEQN filters (nothing is delivered twice: conservation holds).
    let text = piconet("[\"DH5\"]", 1321, false, "packet_error_rate = 0.2");
    let r = run_scenario(&scenario(&text, &["run.duration=42s"])).unwrap();
    let want = 704.5 * 0.64;
    let got = goodput_kbps(&r, "down");
    assert!((got / want - 1.0).abs() < 0.02, "{got} kb/s, expected {want}");
    let down = &r.bluetooth[0];
    let up = &r.bluetooth[1];
    // Retransmissions: every cycle whose master packet or NULL was lost, 1 - 0.64 = 0.36 of
    // the master's packets.
    let share = down.retransmissions as f64 / (down.data_packets + down.retransmissions) as f64;
    assert!((share - 0.36).abs() < 0.01, "{share}");
    // Duplicates: master packet received, its NULL lost, next copy received: p (1 - p) of the
    // slave's receptions lead to one.
    // A NULL lost (its ARQN lost) makes the master resend a segment the slave has: the next
    // copy that reaches the slave is exactly one duplicate (a NULL is only sent, and so only
    // lost, when the master's packet got through). One may straddle the warm-up's end.
    assert!(down.duplicates > 1000 && (down.duplicates as i64 - up.lost_errors as i64).abs() <= 1, "{down:?} {up:?}");
}

#[test]
fn the_qdisc_sees_backpressure_only_once_the_bnep_queue_and_socket_buffer_fill() {
    // A 1 Mb/s CBR download over a 704.5 kb/s link: below the qdisc wait at most
    // floor(sndbuf / PDU) + 1 PDUs in L2CAP and 20 frames in BNEP's write queue; the rest
    // queues in the qdisc (pfifo of 1000).
    let text = piconet("[\"DH5\"]", 1321, false, "").replace("rate = \"saturate\"", "rate = \"1mbit\"")
        + "\n[piconet]\nl2cap_sndbuf = 20000\n";
    let scn = scenario(&text, &["run.duration=6s"]);
    let mut sim = Simulation::new(&scn).unwrap();
    sim.advance(Nanos::from_ms(150));
    // 150 ms at 1 Mb/s: 14 packets offered, 10 gone down: the qdisc is still empty.
    let qlen = |sim: &Simulation| {
        sim.tc_reports().iter().find(|t| t.node == "ap" && t.dev == "bnep0").unwrap().qdiscs[0].stats.qlen
    };
    assert_eq!(qlen(&sim), 0);
    sim.advance(Nanos::from_secs(6));
    let r = sim.finish().unwrap();
    let in_flight = r.summary.conservation.in_flight;
    let below = in_flight - qlen_at_end(&r);
    // 20000 / 1356: 14 PDUs (+1 past the limit) in L2CAP and the controller, 0 to 20 in
    // BNEP's write queue (stopped at 20, woken once kbnepd has emptied it); the excess of
    // 1 Mb/s over 704.5 kb/s (about 1.6 s worth, 150 packets) waits in the qdisc.
    assert!((14..=36).contains(&below), "{below} packets below the qdisc");
    assert!(qlen_at_end(&r) > 100, "{}", qlen_at_end(&r));
}

fn qlen_at_end(r: &airsched_core::RunResults) -> u64 {
    r.tc.iter().find(|t| t.node == "ap" && t.dev == "bnep0").unwrap().qdiscs[0].stats.qlen
}

/// Probability that a WLAN frame of `t_w` at a uniformly random phase overlaps an in-band
/// Bluetooth packet of the simulated piconet: `n` frames, each ending at a random instant and
/// spaced so that no two see the same Bluetooth packets (independent samples).
fn hit_probability(text: &str, t_w: Nanos, n: usize, seed: u64) -> f64 {
    let scn = scenario(text, &["run.duration=1000s"]);
    let mut sim = Simulation::new(&scn).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut now = Nanos::from_secs(3);
    let mut hits = 0;
    for _ in 0..n {
        now = now + t_w + Nanos(rng.random_range(3_000_000..4_000_000));
        sim.advance(now);
        if sim.coex().unwrap().wlan_hit(now - t_w, now, 0, 1, 3) {
            hits += 1;
        }
    }
    hits as f64 / n as f64
}

#[test]
fn wlan_frames_are_hit_by_dh1_dh3_dh5_traffic_as_the_reference_table_says() {
    // Reference phy80211-bluetooth.md 8.3: ACK 248 us, 1500 B at 11, 5.5, 2, 1 Mb/s.
    let t_w = [248u64, 1310, 2427, 6336, 12480];
    let table: [(&str, u32, bool, [f64; 5]); 4] = [
        ("[\"DH1\"]", 1315, true, [0.274, 0.578, 0.764, 0.970, 0.999]),
        ("[\"DH3\"]", 1246, false, [0.250, 0.419, 0.572, 0.844, 0.969]),
        ("[\"DH5\"]", 1321, false, [0.259, 0.372, 0.475, 0.734, 0.910]),
        ("[\"DH5\"]", 1321, true, [0.278, 0.346, 0.418, 0.617, 0.798]),
    ];
    let n = 6000;
    for (row, (types, size, both, want)) in table.iter().enumerate() {
        let text = piconet(types, *size, *both, "");
        for (k, &us) in t_w.iter().enumerate() {
            let got = hit_probability(&text, Nanos(us * 1000), n, (row * 10 + k) as u64);
            // 4.5 standard errors of the estimate, plus the table's rounding.
            let tol = 4.5 * (want[k] * (1.0 - want[k]) / n as f64).sqrt() + 0.0005 + 1e-3;
            assert!(
                (got - want[k]).abs() < tol,
                "{types} both={both} T_W={us} us: {got:.3}, table {} (tolerance {tol:.3})",
                want[k]
            );
        }
    }
}

#[test]
fn the_wlan_loses_frames_to_the_piconet_through_its_retries_and_afh_avoids_it() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/yip-kwok/coexistence.toml"))
            .unwrap();
    let r = run_scenario(&scenario(&text, &["run.duration=12s"])).unwrap();
    let c = r.coexistence.iter().find(|c| c.direction == "down").unwrap();
    let st = &r.stations[0];
    // Every data frame the piconet hit is a WLAN data error, retried by the MAC.
    assert!(c.data_hit_by_bt > 0 && st.retries >= c.data_hit_by_bt, "{c:?} {st:?}");
    let p = c.data_hit_by_bt as f64 / c.data_frames as f64;
    // A 1310 us frame beside DH5 + NULL traffic: 0.372 for a random phase (the MAC's timing is
    // not quite random: a loose bound).
    assert!((0.25..0.45).contains(&p), "{p}");
    assert!(r.bluetooth[0].hit_by_wlan > 0 && r.bluetooth[0].retransmissions > 0);
    let afh = run_scenario(&scenario(&text, &["run.duration=12s", "piconet.afh=true"])).unwrap();
    let c = afh.coexistence.iter().find(|c| c.direction == "down").unwrap();
    assert_eq!(
        (c.data_hit_by_bt, c.acks_hit_by_bt, afh.bluetooth[0].hit_by_wlan, afh.bluetooth[1].hit_by_wlan),
        (0, 0, 0, 0)
    );
    assert!(afh.flows[0].goodput_mbps > r.flows[0].goodput_mbps * 1.2);
}

#[test]
fn bad_bluetooth_input_is_reported_with_its_line_and_key() {
    let base = piconet("[\"DH5\"]", 1321, false, "");
    let err = |text: &str| parse_scenario_with(text, "t.toml", &[] as &[&str]).unwrap_err().to_string();
    let e = err(&base.replace("[\"DH5\"]", "[\"DH7\"]"));
    assert!(e.contains("bluetooth[0].packet_types") && e.contains("unknown packet type \"DH7\""), "{e}");
    let mut eight = base.clone();
    for i in 2..=8 {
        eight.push_str(&format!("\n[[bluetooth]]\nname = \"bt{i}\"\n"));
    }
    let e = err(&eight);
    assert!(e.contains("an 8th Bluetooth slave") && e.contains("at most 7"), "{e}");
    let e = err(&(base.clone() + "\n[[bluetooth]]\nname = \"bt1\"\n"));
    assert!(e.contains("duplicate Bluetooth client name \"bt1\""), "{e}");
    let e = err(&(base.clone() + "\n[[bluetooth]]\nname = \"wlan1\"\n"));
    assert!(e.contains("already a [[station]]"), "{e}");
    let e = err(&(base.clone() + "\n[piconet]\nbnep_header = \"tiny\"\n"));
    assert!(e.contains("t.toml:") && e.contains("piconet.bnep_header"), "{e}");
    let e = err(&(base + "\n[piconet]\nt_poll = 41\n"));
    assert!(e.contains("t.toml:") && e.contains("piconet.t_poll") && e.contains("even number of slots"), "{e}");
}

#[test]
fn a_bluetooth_client_needs_an_address_of_its_own() {
    // docs/limits.md: one node per IPv4 address, Bluetooth clients included (issue 29, item 8).
    let base = piconet("[\"DH5\"]", 1321, false, "");
    let err = |text: &str| parse_scenario_with(text, "t.toml", &[] as &[&str]).unwrap_err().to_string();
    let e = err(&base.replace("packet_types", "ip = \"10.0.0.1\"\npacket_types"));
    let line = base
        .replace("packet_types", "ip = \"10.0.0.1\"\npacket_types")
        .lines()
        .position(|l| l.starts_with("ip ="))
        .unwrap()
        + 1;
    assert!(
        e.starts_with(&format!("t.toml:{line}:6: bluetooth[0].ip: 10.0.0.1 is also the address of the server")),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // Two clients, the second given the first's default address.
    let e = err(&(base.clone() + "\n[[bluetooth]]\nname = \"bt2\"\nip = \"192.168.100.2\"\n"));
    assert!(e.contains("bluetooth[1].ip: 192.168.100.2 is also the address of Bluetooth client \"bt1\""), "{e}");
    // A station given a client's default address: reported at the station's `ip`.
    let e = err(&base.replace("rate = \"11Mbps\"", "rate = \"11Mbps\"\nip = \"192.168.100.2\""));
    assert!(e.contains("station[0].ip: 192.168.100.2 is also the address of"), "{e}");
    // Distinct addresses are fine.
    scenario(&base.replace("packet_types", "ip = \"192.168.100.9\"\npacket_types"), &[]);
}

#[test]
fn an_unknown_flow_endpoint_lists_the_bluetooth_clients_too() {
    let text = piconet("[\"DH5\"]", 1321, false, "") + "\n[[bluetooth]]\nname = \"headset\"\n";
    let err = |text: &str| parse_scenario_with(text, "t.toml", &[] as &[&str]).unwrap_err().to_string();
    let e = err(&text.replace("dst = \"bt1\"", "dst = \"bt2\""));
    assert!(e.contains("flow[0].dst: unknown endpoint \"bt2\"; expected \"server\", \"ap\", a station name or a Bluetooth client's name"), "{e}");
    assert!(
        e.contains("did you mean \"bt1\"?")
            && e.contains("(stations: \"wlan1\"; Bluetooth clients: \"bt1\", \"headset\")"),
        "{e}"
    );
    // A Bluetooth client's name is an endpoint like a station's.
    assert!(parse_scenario_with(&text.replace("dst = \"bt1\"", "dst = \"headset\""), "t.toml", &[] as &[&str]).is_ok());
}

#[test]
fn packets_larger_than_the_bnep_devices_mtu_are_refused_at_their_size() {
    // bnep0's MTU is Ethernet's 1500 (ether_setup); IP fragmentation is not modelled.
    let err = |text: &str| parse_scenario_with(text, "t.toml", &[] as &[&str]).unwrap_err().to_string();
    let udp = piconet("[\"DH5\"]", 1473, false, "");
    let e = err(&udp);
    assert!(e.contains("t.toml:25:8: flow[0].size: a UDP payload of 1473 bytes makes 1501-byte IP packets, more than the 1500-byte MTU"), "{e}");
    assert!(e.contains("at most 1472"), "{e}");
    assert!(parse_scenario_with(&piconet("[\"DH5\"]", 1472, true, ""), "t.toml", &[] as &[&str]).is_ok());
    // Upstream too, and TCP (MSS + 52) and ping (payload + 28).
    let up = piconet("[\"DH5\"]", 1472, false, "")
        .replace("src = \"server\"\ndst = \"bt1\"", "src = \"bt1\"\ndst = \"server\"")
        .replace("size = 1472", "size = 2000");
    assert!(err(&up).contains("flow[0].size: a UDP payload of 2000 bytes"), "{}", err(&up));
    let tcp = piconet("[\"DH5\"]", 1449, false, "").replace("rate = \"saturate\"\n", "protocol = \"tcp\"\n");
    let e = err(&tcp);
    assert!(e.contains("an MSS of 1449 bytes makes 1501-byte IP packets") && e.contains("at most 1448"), "{e}");
    let ping = piconet("[\"DH5\"]", 1473, false, "")
        .replace("rate = \"saturate\"\n", "protocol = \"ping\"\ninterval = \"1s\"\n");
    assert!(err(&ping).contains("an ICMP payload of 1473 bytes"), "{}", err(&ping));
    // A WLAN station's flow may still use the 802.11 MSDU's 2304 bytes.
    let wlan = piconet("[\"DH5\"]", 1472, false, "")
        + "\n[[flow]]\nname = \"w\"\nsrc = \"server\"\ndst = \"wlan1\"\nrate = \"saturate\"\nsize = 2276\n";
    assert!(parse_scenario_with(&wlan, "t.toml", &[] as &[&str]).is_ok());
}
