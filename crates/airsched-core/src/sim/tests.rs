//! Named random streams: adding a device (here a station, with its WiFi device and its flow)
//! changes no other component's random draws.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Simulation;
use crate::radio::Dir;
use crate::scenario::parse_scenario;
use crate::time::Nanos;

fn scenario(standard: &str, with_x: bool) -> Simulation {
    let rate = if standard == "802.11n" { "mcs = 7" } else { "rate = \"11Mbps\"\nrate_control = \"arf\"" };
    let station = |name: &str| {
        format!("[[station]]\nname = \"{name}\"\n{rate}\nsnr = 20\nfading = {{ sigma = 3, coherence = \"50ms\" }}\n")
    };
    let mut text = format!("[run]\nduration = \"1s\"\nseed = 42\n[cell]\nstandard = \"{standard}\"\n");
    text += &station("a");
    if with_x {
        text += &station("x");
    }
    text += &station("b");
    for dst in ["a", "b"].iter().chain(with_x.then_some(&"x")) {
        text += &format!(
            "[[flow]]\nname = \"to-{dst}\"\nsrc = \"server\"\ndst = \"{dst}\"\nrate = \"1Mbit\"\njitter = \"1ms\"\n"
        );
    }
    let scn = parse_scenario(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(&scn).expect("builds")
}

fn draws(r: &Xoshiro256PlusPlus) -> Vec<u64> {
    let mut r = r.clone();
    (0..8).map(|_| r.random()).collect()
}

/// Everything random that belongs to station `name` or its flow, drawn ahead.
fn streams_of(sim: &mut Simulation, name: &str) -> Vec<Vec<u64>> {
    let s = sim.scn.stations.iter().position(|st| st.name == name).unwrap();
    let node = s + 1;
    let dcf = sim.wifi.medium.dcf();
    let per_node = dcf.contenders() / (sim.scn.stations.len() + 1);
    let mut out: Vec<Vec<u64>> = (0..per_node)
        .map(|ac| {
            let (backoff, cw, _, _) = dcf.contention(node * per_node + ac);
            vec![backoff as u64, cw as u64]
        })
        .collect();
    out.push(draws(sim.wifi.medium.radio().err_rng(node)));
    let radio = sim.wifi.medium.radio_mut();
    assert!(radio.has_channel(s), "b has a channel");
    out.push((0..20).map(|k| radio.snr_cdb(s, Nanos::from_ms(10 * k), Dir::Down).expect("a channel") as u64).collect());
    let f = sim.traffic.cfg.iter().position(|f| f.name == format!("to-{name}")).unwrap();
    out.push(draws(&sim.traffic.flows[f].rng));
    out
}

#[test]
fn adding_a_station_before_another_changes_none_of_its_draws() {
    for standard in ["802.11b", "802.11n"] {
        let mut without = scenario(standard, false);
        let mut with = scenario(standard, true);
        assert_eq!(streams_of(&mut without, "b"), streams_of(&mut with, "b"), "{standard}: b's streams moved");
        assert_eq!(streams_of(&mut without, "a"), streams_of(&mut with, "a"), "{standard}: a's streams moved");
        // The new station has streams of its own.
        assert_ne!(streams_of(&mut with, "x"), streams_of(&mut with, "b"), "{standard}: x shares b's streams");
    }
}

/// A cell behind a 1 Gbit/s wire with a 1 µs delay (a packet can arrive before the next one
/// is sent) whose server-side queue (`tc`) overflows: three CBR floods
/// in phase and one with jitter, and an upload that crosses the AP's eth0.
fn wired_burst(tc: &str) -> Simulation {
    let mut text = String::from(
        "[run]\nduration = \"0.3s\"\nwarmup = \"0.05s\"\nsample_interval = \"20ms\"\nseed = 3\n\
         [cell]\nstandard = \"802.11n\"\n[wired]\nrate = \"1Gbit\"\ndelay = \"1us\"\n",
    );
    text += &format!("[server]\ntxqueuelen = 20\ntc = \"{tc}\"\n");
    for s in ["a", "b", "c"] {
        text += &format!("[[station]]\nname = \"{s}\"\nmcs = 7\nsnr = 30\n");
        text += &format!("[[flow]]\nname = \"to-{s}\"\nsrc = \"server\"\ndst = \"{s}\"\nrate = \"400Mbit\"\n");
    }
    text += "[[flow]]\nname = \"jittered\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"10Mbit\"\njitter = \"0.2ms\"\n";
    text += "[[flow]]\nname = \"up\"\nsrc = \"b\"\ndst = \"server\"\nrate = \"5Mbit\"\n";
    let scn = parse_scenario(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scn).expect("builds");
    sim.enable_interface_counters();
    sim.enable_queue_trace();
    sim
}

/// Fixing a wire's departures ahead (`Wire::commit`) changes nothing that can be observed:
/// against the same run with a capture on (which serialises with one `WireTxDone` per
/// packet), the results, the event count, and every qdisc's counters after each slice of the
/// run are identical, for the tail-drop FIFOs (fixed) and pfifo_head_drop (never fixed).
#[test]
fn fixed_wire_departures_are_those_of_one_wire_tx_done_per_packet() {
    for tc in [
        "",
        "tc qdisc add dev eth0 root pfifo limit 8",
        "tc qdisc add dev eth0 root bfifo limit 9000",
        "tc qdisc add dev eth0 root pfifo_head_drop limit 8",
    ] {
        let mut fixed = wired_burst(tc);
        let mut stepped = wired_burst(tc);
        stepped.enable_pcap();
        let server = fixed.interface_names().iter().position(|(n, d)| n == "server" && *d == "eth0").expect("eth0");
        let mut most_fixed = 0;
        let mut t = Nanos::ZERO;
        while t < fixed.end() {
            t += Nanos(137_000);
            fixed.advance(t);
            stepped.advance(t);
            assert_eq!(fixed.events(), stepped.events(), "{tc}: events up to {t:?}");
            assert_eq!(fixed.tc_reports(), stepped.tc_reports(), "{tc}: qdiscs at {t:?}");
            most_fixed = most_fixed.max(fixed.net.devs[server].departures.len());
            assert!(stepped.net.devs.iter().all(|d| d.departures.is_empty()), "a capture fixes nothing");
        }
        let (a, b) = (fixed.finish().expect("conserved"), stepped.finish().expect("conserved"));
        // Compared as text: NaN fields (no RTT samples) are unequal to themselves.
        let show = |r: &crate::results::RunResults| format!("{:?}", r.without_wall_time());
        assert_eq!(show(&a), show(&b), "{tc}: results");
        assert!(a.flows.iter().any(|f| f.lost_packets > 0), "{tc}: the queues overflow");
        if tc.contains("head_drop") {
            assert_eq!(most_fixed, 0, "the server's pfifo_head_drop drops what it holds: never fixed");
        } else {
            assert!(most_fixed >= 2, "{tc}: the bursts queue behind the wire with fixed departures");
        }
    }
}

/// CBR flows with the same send times, with a ping (flow 1) at the same instants between the
/// first two when `ping` (so the second and third detach at the first tick).
fn in_phase(ping: bool, grouped: bool) -> Simulation {
    let mut text = String::from(
        "[run]\nduration = \"0.2s\"\nwarmup = \"0.02s\"\nsample_interval = \"20ms\"\nseed = 5\n[cell]\nstandard = \"802.11n\"\n",
    );
    for s in ["a", "b"] {
        text += &format!("[[station]]\nname = \"{s}\"\nmcs = 7\nsnr = 25\n");
    }
    // 1470 bytes (the default size) at 11.76 Mbit/s: one packet per millisecond, as the ping.
    let cbr = |name: &str, dst: &str| {
        format!("[[flow]]\nname = \"{name}\"\nsrc = \"server\"\ndst = \"{dst}\"\nrate = \"11.76Mbit\"\n")
    };
    text += &cbr("f0", "a");
    if ping {
        text += "[[flow]]\nname = \"p\"\nprotocol = \"ping\"\nsrc = \"server\"\ndst = \"b\"\ninterval = \"1ms\"\n";
    }
    text += &cbr("f2", "b");
    text += &cbr("f3", "a");
    text += "[[flow]]\nname = \"other\"\nsrc = \"server\"\ndst = \"b\"\nrate = \"3Mbit\"\n";
    text += "[[flow]]\nname = \"up\"\nsrc = \"a\"\ndst = \"server\"\nrate = \"11.76Mbit\"\n";
    let scn = parse_scenario(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::new(&scn).expect("builds");
    if !grouped {
        sim.traffic.tick_followers.iter_mut().for_each(Vec::clear);
        sim.traffic.follows.iter_mut().for_each(|f| *f = false);
    }
    sim
}

/// Flows ticking at the same instants ride on the first one's `FlowTick` with the results and
/// event count of one event each, and a follower whose tick another event precedes detaches.
#[test]
fn cbr_flows_in_phase_tick_together_with_the_results_of_one_event_each() {
    for ping in [false, true] {
        let mut grouped = in_phase(ping, true);
        let (f2, f3, up) = if ping { (2, 3, 5) } else { (1, 2, 4) };
        // The upload from a station too: its ticks are at the same instants.
        assert_eq!(grouped.traffic.tick_followers[0], vec![f2, f3, up], "the in-phase flows follow the first");
        assert!(grouped.traffic.tick_followers[1..].iter().all(Vec::is_empty), "the rest lead none");
        let a = grouped.finish().expect("conserved");
        let b = in_phase(ping, false).finish().expect("conserved");
        let show = |r: &crate::results::RunResults| format!("{:?}", r.without_wall_time());
        assert_eq!(show(&a), show(&b), "ping {ping}: results");
        assert_eq!(a.summary.events, b.summary.events);
        // With the ping between them at every instant, the followers detach at once.
        assert_eq!(grouped.traffic.follows[f2 as usize], !ping);
        assert_eq!(grouped.traffic.tick_followers[0].is_empty(), ping);
    }
}
