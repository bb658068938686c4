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
