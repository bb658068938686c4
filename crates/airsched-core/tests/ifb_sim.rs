//! One qdisc over several interfaces (docs/tc.md, "One qdisc over several interfaces"): an ifb
//! or imq device at the AP that its wlan0 and eth0 redirect to, in whole runs. The numbers are
//! checked against what the configuration implies (a shaper's rate, the kernel's priomap), not
//! against other runs of the simulator.

use airsched_core::InterfaceTc;
use airsched_core::{parse_scenario, run_scenario, RunResults};

fn trap_text() -> (String, String) {
    let path = format!("{}/../../scenarios/yip-kwok/imq-trap.toml", env!("CARGO_MANIFEST_DIR"));
    (std::fs::read_to_string(&path).expect("shipped"), path)
}

fn run(text: &str, path: &str) -> RunResults {
    let scn = parse_scenario(text, path).unwrap_or_else(|e| panic!("{e}"));
    let r = run_scenario(&scn).expect("conservation holds");
    for i in &r.tc {
        for q in &i.qdiscs {
            assert!(q.stats.identity_holds(), "{} {}: {:?}", i.dev, q.handle, q.stats);
        }
    }
    r
}

fn iface<'r>(r: &'r RunResults, dev: &str) -> &'r InterfaceTc {
    r.tc.iter()
        .find(|i| i.node == "ap" && i.dev == dev)
        .unwrap_or_else(|| panic!("no ap/{dev} in {:?}", r.tc.iter().map(|i| &i.dev).collect::<Vec<_>>()))
}

/// The shared shaper's class for wlan0 above what the radio carries (20 Mbit/s against about
/// 6 Mbit/s of 802.11b): the shaper holds nothing back and the backlog, and every drop, sit in
/// wlan0's own pfifo, out of the shaper's control. Below the radio's capacity (3 Mbit/s) the
/// backlog stays in ifb0 and the download gets exactly the class's rate.
#[test]
fn a_shared_shaper_above_the_radios_capacity_loses_control_to_the_devices_own_queue() {
    let (text, path) = trap_text();
    let above = run(&text, &path);
    let (ifb, wlan) = (&iface(&above, "ifb0").qdiscs[0].stats, &iface(&above, "wlan0").qdiscs[0].stats);
    // Two queues in series: every packet ifb0 released entered wlan0's qdisc (the kernel's
    // ifb_ri_tasklet -> dev_queue_xmit), and nothing else did.
    assert_eq!(ifb.sent_packets, wlan.offered_packets);
    assert_eq!(ifb.drops, 0, "the shaper never fills: {ifb:?}");
    assert!(ifb.qlen <= 1, "{ifb:?}");
    // wlan0's pfifo (txqueuelen 1000) holds the standing queue and drops the excess.
    assert!(wlan.qlen >= 990, "{wlan:?}");
    assert!(wlan.drops > 1000, "{wlan:?}");
    // The delay is the pfifo's: 1000 packets at ~1.9 ms each (802.11b, 11 Mb/s, 1476-byte IP).
    assert!(above.flows[0].delay_mean_ms > 1500.0, "{}", above.flows[0].delay_mean_ms);

    let below = text.replace("classid 1:2 htb rate 20mbit ceil 40mbit", "classid 1:2 htb rate 3mbit ceil 3mbit");
    let below = run(&below, &path);
    let (ifb, wlan) = (&iface(&below, "ifb0").qdiscs[0].stats, &iface(&below, "wlan0").qdiscs[0].stats);
    assert_eq!(ifb.sent_packets, wlan.offered_packets);
    assert!(ifb.drops > 1000 && ifb.qlen > 0, "the backlog is the shaper's: {ifb:?}");
    assert_eq!(wlan.drops, 0, "{wlan:?}");
    assert!(wlan.qlen <= 1, "{wlan:?}");
    // HTB counts IP + 14 bytes: 3 Mbit/s of 1490-byte packets carry 1448 bytes of UDP each.
    let expect = 3.0 * 1448.0 / 1490.0;
    let got = below.flows[0].goodput_mbps;
    assert!((got / expect - 1.0).abs() < 0.01, "goodput {got} vs {expect}");
}

/// An iptables IMQ rule on each device does what a matchall redirect on each device's clsact
/// egress hook does: every packet goes through the virtual device first.
#[test]
fn imq_rules_and_clsact_matchall_redirects_schedule_the_same_packets() {
    let (text, path) = trap_text();
    let ifb = run(&text, &path);
    let imq_script = "iptables -t mangle -A POSTROUTING -o wlan0 -j IMQ --todev 0\n\
                      iptables -t mangle -A POSTROUTING -o eth0 -j IMQ --todev 0\n\
                      ip link set imq0 up\n";
    let start = text.find("ip link add").unwrap();
    let end = text.find("tc qdisc add dev ifb0").unwrap();
    let imq_text = format!("{}{}{}", &text[..start], imq_script, &text[end..].replace("ifb0", "imq0"));
    let imq = run(&imq_text, &path);
    // Debug text: equal text is equal numbers, NaN included.
    assert_eq!(format!("{:?}", ifb.flows), format!("{:?}", imq.flows));
    assert_eq!(iface(&ifb, "wlan0").qdiscs, iface(&imq, "wlan0").qdiscs);
    assert_eq!(iface(&ifb, "ifb0").qdiscs[0].stats, iface(&imq, "imq0").qdiscs[0].stats);
}

const TWO_CLIENTS: &str = r#"
[run]
duration = "3s"
warmup = "1s"
seed = 3

[[station]]
name = "client1"
rate = "11Mbps"
ip = "192.168.1.2"

[[station]]
name = "client2"
rate = "11Mbps"
ip = "192.168.1.3"

[[flow]]
name = "to1"
src = "server"
dst = "client1"
rate = "1mbit"
size = 1000

[[flow]]
name = "to2"
src = "server"
dst = "client2"
rate = "1mbit"
size = 1000

[ap]
tc = """
ip link add ifb0 type ifb
tc qdisc add dev wlan0 root handle 1: prio
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 192.168.1.3/32 flowid 1:3
tc filter add dev wlan0 parent 1: prio 2 matchall action mirred egress redirect dev ifb0
tc qdisc add dev ifb0 root handle 2: pfifo limit 50
"""
"#;

/// The root-qdisc form (reference 3.3 (a)): the prio's filters run in priority order and the
/// first match decides. client2's packets match the u32 filter first (band 3, no redirect);
/// client1's reach the matchall, go through ifb0 and come back into the prio, whose filters
/// classify again with their actions skipped (tc_skip_classify): matchall's class id is 0,
/// so prio_classify falls back to priomap[0] = band 2 (class 1:2).
#[test]
fn a_redirect_in_the_root_qdisc_comes_back_classified_by_the_same_filters() {
    let r = run(TWO_CLIENTS, "two.toml");
    let ifb = &iface(&r, "ifb0").qdiscs[0].stats;
    let prio = &iface(&r, "wlan0").qdiscs[0];
    let class = |minor: u16| prio.classes.iter().find(|c| c.classid.minor() == minor).expect("band").stats;
    // Both flows send the same rate from the same instant: ifb0 got client1's, band 3 client2's.
    assert!(ifb.offered_packets > 200, "{ifb:?}");
    assert!(ifb.offered_packets.abs_diff(class(3).offered_packets) <= 1, "{ifb:?} {:?}", class(3));
    assert_eq!(class(1).offered_packets, 0);
    assert_eq!(class(2).offered_packets, ifb.sent_packets);
    // The stolen packets are not counted at the prio: it saw each packet once.
    assert_eq!(prio.stats.offered_packets, ifb.sent_packets + class(3).offered_packets);
}

/// The interface counters (the paper's xnetload) of the shaped case: ifb0's HTB class of
/// 3 Mbit/s sends 375 000 bytes (IP + 14, what HTB and the counters count) a second, within
/// a packet of 1490 bytes per 1-s interval, and wlan0, in series behind it, the same; eth0
/// sends nothing (no traffic to the server); the drops are ifb0's.
#[test]
fn interface_counters_show_the_shapers_rate_out_of_ifb0_and_wlan0() {
    let (text, path) = trap_text();
    let text = text.replace("classid 1:2 htb rate 20mbit ceil 40mbit", "classid 1:2 htb rate 3mbit ceil 3mbit");
    let scn = parse_scenario(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = airsched_core::Simulation::new(&scn).expect("builds");
    sim.enable_interface_counters();
    let r = sim.finish().expect("conservation holds");
    // 10 s, warm-up 1 s, samples every second: 9 intervals of each of the 5 devices.
    assert_eq!(r.interfaces.len(), 9 * 5);
    let of = |dev: &str| r.interfaces.iter().filter(|row| row.node == "ap" && row.dev == dev).collect::<Vec<_>>();
    for (ifb, wlan) in of("ifb0").iter().zip(of("wlan0")).skip(1) {
        assert!((ifb.bytes_per_second - 375_000.0).abs() <= 1490.0, "{ifb:?}");
        assert!((wlan.bytes_per_second - 375_000.0).abs() <= 2.0 * 1490.0, "{wlan:?}");
        assert!(ifb.drops > 0 && wlan.drops == 0, "{ifb:?} {wlan:?}");
        assert!((ifb.packets_per_second * 1490.0 - ifb.bytes_per_second).abs() < 1e-6);
    }
    assert!(of("eth0").iter().all(|row| row.bytes_per_second == 0.0));
    // Without asking, the table stays empty and every other result is the same.
    let plain = airsched_core::run_scenario(&scn).expect("runs");
    assert!(plain.interfaces.is_empty());
    assert_eq!(format!("{:?}", plain.flows), format!("{:?}", r.flows));
}
