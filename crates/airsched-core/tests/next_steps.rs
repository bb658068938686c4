//! The next-steps paper's proposals (§4) in the simulator: airtime policies (§4.2: group
//! weights, a guest cap, minimum rates; docs/airtime-policies.md) and dynamic aggregate sizing
//! (§4.1; docs/next-steps-latency.md), with the one-line errors of bad configs.

use airsched_core::{parse_scenario, run_scenario, RunResults};

/// An 802.11n cell under mac80211's scheduler, saturated UDP downloads to stations at the given
/// MCS, with `extra` appended (groups, station keys). `seed` varies the run.
fn cell(stations: &[(&str, u8, &str)], extra: &str, seed: u64, secs: u32) -> String {
    let mut s = format!(
        r#"
[run]
duration = "{}s"
warmup = "1s"
seed = {seed}
sample_interval = "1s"
[cell]
standard = "802.11n"
beacons = false
[wired]
rate = "1Gbit"
[ap]
mac_queue = "fq-mac"
airtime = "mac80211"
"#,
        secs + 1
    );
    for (name, mcs, keys) in stations {
        s += &format!("[[station]]\nname = \"{name}\"\nmcs = {mcs}\n{keys}\n");
    }
    for (name, _, _) in stations {
        s += &format!(
            "[[flow]]\nname = \"udp-{name}\"\nsrc = \"server\"\ndst = \"{name}\"\nrate = \"saturate\"\nsize = 1472\n"
        );
    }
    s + extra
}

fn run(text: &str) -> RunResults {
    let scn = parse_scenario(text, "policy.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scn).expect("conservation holds")
}

fn share(r: &RunResults, names: &[&str]) -> f64 {
    r.stations.iter().filter(|s| names.contains(&s.name.as_str())).map(|s| s.airtime_down_share).sum()
}

#[test]
fn group_weights_1_2_1_divide_the_air_25_50_25() {
    // Groups of unequal sizes and rates: a lone fast station, two stations (fast and slow), and
    // a lone slow one. Without groups the four stations would get a quarter each.
    let groups = r#"
[[airtime_group]]
name = "a"
weight = 1
stations = ["a1"]
[[airtime_group]]
name = "b"
weight = 2
stations = ["b1", "b2"]
[[airtime_group]]
name = "c"
weight = 1
stations = ["c1"]
"#;
    for seed in [1, 2, 3] {
        let r = run(&cell(&[("a1", 7, ""), ("b1", 3, ""), ("b2", 7, ""), ("c1", 1, "")], groups, seed, 6));
        let got = [share(&r, &["a1"]), share(&r, &["b1", "b2"]), share(&r, &["c1"])];
        println!("seed {seed}: shares {got:?}");
        for (g, want) in got.iter().zip([0.25, 0.5, 0.25]) {
            assert!((g / want - 1.0).abs() < 0.03, "seed {seed}: shares {got:?}, want 25/50/25 %");
        }
        // Inside group b the two stations split the group's air equally (their deficits).
        let (b1, b2) = (share(&r, &["b1"]), share(&r, &["b2"]));
        assert!((b1 / b2 - 1.0).abs() < 0.05, "b1 {b1} b2 {b2}");
    }
}

#[test]
fn recursive_groups_divide_their_parents_share() {
    // home (3) holds kids (1) and adults (2); guests (1) beside home: 75 % to home, split 1:2.
    let groups = r#"
[[airtime_group]]
name = "home"
weight = 3
[[airtime_group]]
name = "kids"
parent = "home"
weight = 1
stations = ["k"]
[[airtime_group]]
name = "adults"
parent = "home"
weight = 2
stations = ["p"]
[[airtime_group]]
name = "guests"
weight = 1
stations = ["g"]
"#;
    let r = run(&cell(&[("k", 7, ""), ("p", 2, ""), ("g", 5, "")], groups, 4, 6));
    let got = [share(&r, &["k"]), share(&r, &["p"]), share(&r, &["g"])];
    println!("shares {got:?}");
    for (g, want) in got.iter().zip([0.25, 0.5, 0.25]) {
        assert!((g / want - 1.0).abs() < 0.03, "shares {got:?}, want 25/50/25 %");
    }
}

#[test]
fn a_guest_cap_of_20_percent_holds() {
    // Two guests at a fast and a slow rate, capped at 20 % of the air; one home station. Without
    // the cap the guests would take 2/3 of the AP's airtime. (The per-second bound is checked
    // exactly on the scheduler in mac80211/airtime/tests.rs.)
    let groups = r#"
[[airtime_group]]
name = "guests"
stations = ["g1", "g2"]
airtime_cap = "20%"
"#;
    for seed in [1, 2] {
        let r = run(&cell(&[("home", 7, ""), ("g1", 7, ""), ("g2", 1, "")], groups, seed, 8));
        let t = r.summary.measured_seconds;
        let used: f64 =
            r.stations.iter().filter(|s| s.name.starts_with('g')).map(|s| s.airtime_down_s).sum::<f64>() / t;
        // One aggregate (4 ms A-MPDU + its BlockAck) may straddle each end of the window.
        let bound = 0.20 + 2.0 * 0.0041 / t;
        println!("seed {seed}: guests used {used:.5} of the air (bound {bound:.5})");
        assert!(used <= bound, "seed {seed}: guests used {used}");
        assert!(used > 0.19, "the cap should be used up: {used}");
        // The home station takes the rest: the cap does not idle the air while others wait.
        let busy = r.summary.medium_busy_share;
        println!("seed {seed}: medium busy {busy:.4}");
        assert!(busy > 0.95, "seed {seed}: the air should stay busy, {busy}");
    }
}

#[test]
fn a_guest_cap_leaves_the_air_idle_when_only_guests_send() {
    // A cap is not a weight: alone on the air the capped station still gets 20 %.
    let groups = "[[airtime_group]]\nname = \"guests\"\nstations = [\"g\"]\nairtime_cap = \"20%\"\n";
    let r = run(&cell(&[("g", 7, "")], groups, 1, 4));
    let busy = r.summary.medium_busy_share;
    println!("medium busy {busy:.4}");
    assert!(busy > 0.18 && busy < 0.205, "a 20 % cap alone on the air: busy {busy}");
}

#[test]
fn a_minimum_rate_is_met_when_feasible_and_reported_when_not() {
    // Three stations, one slow (MCS 0, 6.5 Mb/s): its fair third of the air gives ~1.7 Mb/s.
    let fair = run(&cell(&[("f1", 7, ""), ("f2", 7, ""), ("slow", 0, "")], "", 1, 5));
    let fair_slow = fair.flows.iter().find(|f| f.name == "udp-slow").unwrap().goodput_mbps;
    println!("fair: slow gets {fair_slow:.3} Mb/s");
    assert!(fair_slow < 2.5);
    // A feasible minimum of 3 Mb/s is met (within 2 %) and nothing is reported.
    let r = run(&cell(&[("f1", 7, ""), ("f2", 7, ""), ("slow", 0, "min_rate = \"3mbit\"")], "", 1, 5));
    let slow = r.flows.iter().find(|f| f.name == "udp-slow").unwrap().goodput_mbps;
    let fast = r.flows.iter().find(|f| f.name == "udp-f1").unwrap().goodput_mbps;
    println!("min 3 Mb/s: slow {slow:.3}, fast {fast:.3}, warnings {:?}", r.warnings);
    assert!(slow >= 3.0 * 0.98, "slow got {slow}");
    assert!(r.warnings.iter().all(|w| !w.contains("min_rate")), "{:?}", r.warnings);
    // 6.4 Mb/s is below the PHY rate (6.5) but beyond any goodput at MCS 0: reported.
    let r = run(&cell(&[("f1", 7, ""), ("f2", 7, ""), ("slow", 0, "min_rate = \"6.4mbit\"")], "", 1, 5));
    println!("min 6.4 Mb/s: warnings {:?}", r.warnings);
    assert!(r.warnings.iter().any(|w| w.contains("station[2].min_rate") && w.contains("not met")), "{:?}", r.warnings);
}

fn errors(text: &str) -> String {
    match parse_scenario(text, "bad.toml") {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_policies_are_one_line_errors_naming_file_line_and_key() {
    let two = [("s1", 7, ""), ("s2", 7, "")];
    let cases: &[(&str, &str)] = &[
        ("[[airtime_group]]\nname = \"a\"\nweight = 0\nstations = [\"s1\"]\n", "airtime_group[0].weight: must be between 1"),
        ("[[airtime_group]]\nname = \"a\"\nairtime_cap = \"120%\"\n", "airtime_group[0].airtime_cap: must be above 0% and at most 100%"),
        (
            "[[airtime_group]]\nname = \"a\"\nstations = [\"s1\"]\n[[airtime_group]]\nname = \"b\"\nstations = [\"s1\"]\n",
            "airtime_group[1].stations: station \"s1\" is already in group \"a\"",
        ),
        (
            "[[airtime_group]]\nname = \"a\"\nparent = \"b\"\n[[airtime_group]]\nname = \"b\"\nparent = \"a\"\n",
            "airtime_group[0].parent: groups form a cycle: a -> b -> a",
        ),
    ];
    for (extra, want) in cases {
        let e = errors(&cell(&two, extra, 1, 2));
        println!("{e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
        assert!(e.contains(want), "want {want:?} in:\n{e}");
        let line = e.lines().find(|l| l.contains(want)).unwrap();
        assert!(line.starts_with("bad.toml:"), "{line}");
    }
    // A minimum rate at or above the PHY rate (MCS 0: 6.5 Mb/s).
    let e = errors(&cell(&[("s1", 0, "min_rate = \"7mbit\"")], "", 1, 2));
    println!("{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("station[0].min_rate: 7 Mb/s is not below the station's PHY rate (6.5 Mb/s"), "{e}");
    // Groups without the mac80211 scheduler.
    let text = cell(&two, "[[airtime_group]]\nname = \"a\"\nstations = [\"s1\"]\n", 1, 2)
        .replace("airtime = \"mac80211\"", "airtime = \"ath9k\"");
    let e = errors(&text);
    assert!(e.contains("airtime_group[0]: airtime groups extend mac80211's airtime scheduler"), "{e}");
}

#[test]
fn policies_are_deterministic() {
    let groups = "[[airtime_group]]\nname = \"g\"\nstations = [\"b\"]\nairtime_cap = \"30%\"\n";
    let text = cell(&[("a", 7, "min_rate = \"2mbit\""), ("b", 2, "")], groups, 9, 2);
    let (x, y) = (run(&text), run(&text));
    assert_eq!(format!("{:?}", x.stations), format!("{:?}", y.stations));
}

/// The largest A-MPDU (MPDUs) sent to `station`.
fn largest_aggregate(r: &RunResults, station: &str) -> u32 {
    r.aggregates.iter().filter(|a| a.station == station && a.direction == "down").map(|a| a.mpdus).max().unwrap()
}

#[test]
fn a_1ms_dynamic_aggregate_cap_is_never_exceeded_when_more_than_k_stations_wait() {
    // Stations at MCS 7, 4 and 15; saturated. The static cap `max_aggregate_time = "1ms"` (its
    // MPDU counts validated against the standard's TXTIME in ht_sim.rs) gives the largest
    // aggregate that fits 1 ms at each rate; the dynamic cap must never build a larger one.
    let stations = [("a", 7, ""), ("b", 4, ""), ("c", 15, "")];
    let base = cell(&stations, "", 1, 3);
    let fixed = run(&base.replace("beacons = false", "beacons = false\nmax_aggregate_time = \"1ms\""));
    let dynamic =
        run(&base.replace("airtime = \"mac80211\"", "airtime = \"mac80211\"\ndynamic_aggregate_time = \"1ms\""));
    let full = run(&base);
    for (name, _, _) in stations {
        let (f, d, u) =
            (largest_aggregate(&fixed, name), largest_aggregate(&dynamic, name), largest_aggregate(&full, name));
        println!("{name}: 1 ms static {f}, dynamic {d}, uncapped {u} MPDUs");
        assert!(d <= f, "{name}: dynamic aggregates of {d} MPDUs exceed 1 ms ({f})");
        assert!(u > f, "{name}: the uncapped run should build longer aggregates");
    }
    // Shorter aggregates cost throughput (the trade-off the paper names).
    let tput = |r: &RunResults| r.flows.iter().map(|f| f.goodput_mbps).sum::<f64>();
    assert!(tput(&dynamic) < tput(&full), "{} vs {}", tput(&dynamic), tput(&full));
    // With K = 3 (more than three stations must wait) three stations keep full aggregates.
    let k3 = run(&base.replace(
        "airtime = \"mac80211\"",
        "airtime = \"mac80211\"\ndynamic_aggregate_time = \"1ms\"\ndynamic_aggregate_stations = 3",
    ));
    for (name, _, _) in stations {
        assert_eq!(largest_aggregate(&k3, name), largest_aggregate(&full, name), "{name}");
    }
}

// ---- Time-based retry limit (§4.1): docs/next-steps-latency.md ----

/// Two lossy stations (MCS 7 at 22 dB, MCS 2 at 9.5 dB), saturated downloads; `ap` is appended to
/// the `[ap]` table.
fn lossy_cell(ap: &str, seed: u64) -> String {
    cell(&[("fast", 7, "snr = 22"), ("slow", 2, "snr = 9.5")], "", seed, 3)
        .replace("airtime = \"mac80211\"", &format!("airtime = \"mac80211\"\n{ap}"))
}

fn run_with_stats(text: &str) -> (RunResults, airsched_core::NextStepsStats) {
    let scn = parse_scenario(text, "budget.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = airsched_core::Simulation::new(&scn).expect("builds");
    let r = sim.finish().expect("conservation holds");
    (r, sim.next_steps_stats().expect("an 802.11n cell"))
}

#[test]
fn a_time_based_retry_limit_never_lets_a_frame_exceed_its_budget() {
    let (base, base_stats) = run_with_stats(&lossy_cell("", 1));
    let retries: u64 = base.stations.iter().map(|s| s.retries).sum();
    for s in &base.stations {
        println!(
            "{}: goodput {:.1} retries {} tx_frames {} drops_retry {} data_errors {}",
            s.name, s.goodput_mbps, s.retries, s.tx_frames, s.drops_retry, s.data_errors
        );
    }
    println!(
        "no budget: retries {retries}, retry drops {}, worst retried {} us",
        base.summary.conservation.dropped_retry, base_stats.budget_worst_retried_us
    );
    assert!(retries > 1000, "the links must be lossy for the test to mean anything");
    for (budget_ms, sojourn) in [(2u32, false), (5, false), (5, true), (12, true)] {
        for seed in [1, 2, 3] {
            let ap = format!("retry_budget = \"{budget_ms}ms\"\nretry_budget_sojourn = {sojourn}");
            let (r, st) = run_with_stats(&lossy_cell(&ap, seed));
            println!(
                "budget {budget_ms} ms sojourn {sojourn} seed {seed}: budget drops {}, worst retried {} us, retry drops {}",
                st.budget_drops, st.budget_worst_retried_us, r.summary.conservation.dropped_retry
            );
            assert!(
                st.budget_worst_retried_us <= budget_ms * 1000,
                "a retried frame spent {} us",
                st.budget_worst_retried_us
            );
            assert!(st.budget_drops > 0, "a budget this short must give frames up");
            assert!(r.summary.conservation.dropped_retry >= st.budget_drops);
        }
    }
    // Without the budget retried frames take far longer than these budgets (the test would
    // catch a budget that did nothing).
    assert!(base_stats.budget_worst_retried_us == 0, "the statistic is kept only with a budget");
}

#[test]
fn a_retry_budget_that_never_binds_changes_nothing() {
    let (base, _) = run_with_stats(&lossy_cell("", 4));
    let (wide, st) = run_with_stats(&lossy_cell("retry_budget = \"1s\"", 4));
    assert_eq!(st.budget_drops, 0);
    assert!(st.budget_worst_retried_us > 0);
    assert_eq!(format!("{:?}", base.without_wall_time()), format!("{:?}", wide.without_wall_time()));
}

#[test]
fn a_retry_budget_gives_up_sooner_at_a_low_rate() {
    // The per-rate limit of Nomoto et al. (the paper's [4]): the same budget allows fewer
    // tries of a slow station's (longer) PPDUs, so its share of retry drops per retry is higher.
    let (r, _) = run_with_stats(&lossy_cell("retry_budget = \"6ms\"", 5));
    let per = |name: &str| {
        let s = r.stations.iter().find(|s| s.name == name).unwrap();
        s.drops_retry as f64 / (s.retries + s.drops_retry).max(1) as f64
    };
    println!("drops per failed try: fast {:.3}, slow {:.3}", per("fast"), per("slow"));
    assert!(per("slow") > per("fast"));
}

#[test]
fn bad_retry_budgets_are_one_line_errors() {
    let cases: &[(&str, &str)] = &[
        ("retry_budget = \"0ms\"", "ap.retry_budget: must be at least 1us and at most 1s"),
        ("retry_budget = 5", "ap.retry_budget"),
        ("retry_budget_sojourn = true", "ap.retry_budget_sojourn: applies only with retry_budget"),
    ];
    for (ap, want) in cases {
        let e = errors(&lossy_cell(ap, 1));
        println!("{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("bad.toml:") && e.contains(want), "want {want:?}: {e}");
    }
    let fifo = lossy_cell("", 1).replace(
        "mac_queue = \"fq-mac\"\nairtime = \"mac80211\"\n",
        "retry_budget = \"4ms\"\nretry_budget_sojourn = true\n",
    );
    let e = errors(&fifo);
    assert!(e.contains("ap.retry_budget_sojourn: counts the sojourn time CoDel records in FQ-MAC"), "{e}");
}

// ---- Minimal hardware queue (§4.1): docs/next-steps-latency.md ----

/// The Høiland testbed (`traffic`: "udp" or "tcp") under FQ-MAC + mac80211 + AQL, `ap` keys
/// added, `secs` long.
fn hoiland(traffic: &str, ap: &str, seed: u64, secs: u32) -> String {
    let path = format!("{}/../../scenarios/hoiland/{traffic}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).expect("the Høiland scenario");
    let text = text.replace("queueing = \"fifo\"", &format!("mac_queue = \"fq-mac\"\nairtime = \"mac80211\"\n{ap}"));
    let text = regex_free_set(&text, "duration", &format!("\"{secs}s\""));
    regex_free_set(&text, "seed", &seed.to_string())
}

/// `key = value` in place of the line that sets `key` (the first, in `[run]`).
fn regex_free_set(text: &str, key: &str, value: &str) -> String {
    let mut done = false;
    text.lines()
        .map(|l| {
            if !done && l.starts_with(&format!("{key} =")) {
                done = true;
                format!("{key} = {value}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn median_rtt(r: &RunResults, flow: &str) -> f64 {
    let mut v: Vec<f64> = r.pings.iter().filter(|p| p.flow == flow).map(|p| p.rtt_ms).collect();
    assert!(!v.is_empty(), "no pings of {flow}");
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn a_minimal_hardware_queue_builds_within_its_lead_time_and_cuts_latency() {
    for seed in [1, 2] {
        let base = run(&hoiland("udp", "", seed, 5));
        for lead_us in [0u64, 250, 1000] {
            let (r, st) = run_with_stats(&hoiland("udp", &format!("hw_queue_lead = \"{lead_us}us\""), seed, 5));
            let (b, l) = (median_rtt(&base, "ping-pingonly"), median_rtt(&r, "ping-pingonly"));
            let tput = |r: &RunResults| r.flows.iter().map(|f| f.goodput_mbps).sum::<f64>();
            println!(
                "seed {seed} lead {lead_us} us: {} aggregates built behind one on the air, at most {} ns early; \
                 ping p50 {b:.2} -> {l:.2} ms, goodput {:.1} -> {:.1} Mb/s",
                st.lead_builds,
                st.lead_worst_early_ns,
                tput(&base),
                tput(&r)
            );
            // Never built earlier than the lead time before the aggregate ahead ends.
            assert!(st.lead_worst_early_ns <= lead_us * 1000);
            if lead_us > 0 {
                assert!(st.lead_builds > 100, "the second aggregate is built within the lead");
            }
            // One aggregate less ahead of a new frame: the idle station's pings wait less.
            assert!(l < 0.8 * b, "ping p50 {l} vs {b} ms");
            // The UDP floods keep the air busy: throughput within 1 %.
            assert!((tput(&r) / tput(&base) - 1.0).abs() < 0.01);
        }
    }
    let e = errors(&hoiland("udp", "hw_queue_lead = \"20ms\"", 1, 5));
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("ap.hw_queue_lead: must be at most 10ms"), "{e}");
}

// ---- Statistics (§4.4): docs/next-steps-statistics.md ----

#[test]
fn mac80211_statistics_add_up_to_what_the_run_measured() {
    // Warm-up 0 s: the kernel's counters cover the whole run, as the measured window then does.
    let text =
        cell(&[("a", 7, "airtime_weight = 512"), ("b", 2, "")], "", 3, 3).replace("warmup = \"1s\"", "warmup = \"0s\"");
    let scn = parse_scenario(&text, "stats.toml").unwrap_or_else(|e| panic!("{e}"));
    let plain = airsched_core::Simulation::new(&scn).expect("builds").finish().expect("runs");
    assert!(plain.mac_stations.is_empty() && plain.mac_txqs.is_empty(), "only when asked");
    let mut sim = airsched_core::Simulation::new(&scn).expect("builds");
    sim.enable_mac_stats();
    let r = sim.finish().expect("runs");
    // Asking changes no other number.
    let strip = |r: &RunResults| {
        let mut r = r.without_wall_time();
        r.mac_stations.clear();
        r.mac_txqs.clear();
        format!("{r:?}")
    };
    assert_eq!(strip(&plain), strip(&r));
    assert_eq!(r.mac_stations.len(), 2);
    assert_eq!(r.mac_txqs.len(), 2 * 8, "every TID of every station, as debugfs lists them");
    for (s, st) in r.mac_stations.iter().zip(&r.stations) {
        println!("{s:?}");
        assert_eq!(s.station, st.name);
        // TX airtime: the PPDUs of every try to the station; the run's downlink airtime adds
        // the stations' BlockAcks, so it is a little larger.
        let down_us = st.airtime_down_s * 1e6;
        let tx = s.tx_airtime_us as f64;
        assert!(tx <= down_us && tx > 0.9 * down_us, "{}: tx {tx} us, downlink air {down_us} us", s.station);
        assert_eq!(s.rx_airtime_us, 0, "no uplink data");
        assert!(s.mac.starts_with("02:00:00:00:"), "{}", s.mac);
    }
    assert_eq!(r.mac_stations[0].airtime_weight, 512);
    assert_eq!(r.mac_stations[1].airtime_weight, 256);
    for (s, f) in r.stations.iter().zip(&r.flows) {
        // TID 0 (best effort) carried the station's flow: what left FQ-MAC is what arrived plus
        // what the driver still holds or gave up at the retry limit.
        let t = r.mac_txqs.iter().find(|t| t.station == s.name && t.tid == 0).unwrap();
        println!("{t:?}");
        assert_eq!(t.ac, 2, "TID 0 is AC_BE (mac80211 index 2)");
        let rx = f.received_packets;
        assert!(
            t.tx_packets as u64 >= rx && (t.tx_packets as u64) <= rx + 300,
            "{} left FQ-MAC, {rx} arrived",
            t.tx_packets
        );
        assert!(t.backlog_packets > 0, "saturated");
        assert!(t.tx_bytes >= t.tx_packets as u64 * 1500);
        let others = r.mac_txqs.iter().filter(|x| x.station == s.name && x.tid != 0);
        assert!(others.into_iter().all(|x| x.tx_packets == 0 && x.backlog_packets == 0));
    }
}

// ---- QoS (§4.3): soft admission control, docs/next-steps-qos.md ----

/// A VO flood (UDP 100 Mbit/s, more than the link carries marked EF) to "v", a VoIP-like EF flow to "p" (64 kbit/s, 160 B
/// every 20 ms) and a best-effort download to "b".
fn qos_cell(ap: &str, seed: u64) -> String {
    let mut s = cell(&[("v", 7, ""), ("p", 7, ""), ("b", 7, "")], "", seed, 4)
        .replace("airtime = \"mac80211\"", &format!("airtime = \"mac80211\"\n{ap}"));
    // cell() gave every station a saturated best-effort flow; keep b's, make v's an EF flood
    // and p's a small EF flow.
    s = s.replace(
        "name = \"udp-v\"\nsrc = \"server\"\ndst = \"v\"\nrate = \"saturate\"\nsize = 1472\n",
        "name = \"udp-v\"\nsrc = \"server\"\ndst = \"v\"\nrate = \"100Mbit\"\nsize = 1472\ndscp = 46\n",
    );
    s.replace(
        "name = \"udp-p\"\nsrc = \"server\"\ndst = \"p\"\nrate = \"saturate\"\nsize = 1472\n",
        "name = \"udp-p\"\nsrc = \"server\"\ndst = \"p\"\nrate = \"64kbit\"\nsize = 160\ndscp = 46\n",
    )
}

#[test]
fn soft_admission_control_demotes_the_flow_that_builds_a_vo_queue_and_only_it() {
    for seed in [1, 2] {
        let base = run(&qos_cell("", seed));
        assert!(base.demotions.is_empty(), "no table when off");
        let r = run(&qos_cell("admission_sojourn = \"5ms\"", seed));
        let row = |name: &str| r.demotions.iter().find(|d| d.flow == name).unwrap().clone();
        let (flood, voip, be) = (row("udp-v"), row("udp-p"), row("udp-b"));
        println!("seed {seed}: {flood:?} {voip:?} {be:?}");
        assert_eq!((flood.tid, voip.tid, be.tid), (6, 6, 0));
        assert!(flood.demotions >= 1 && flood.demoted_packets > 1000, "the flood builds a VO queue");
        assert_eq!((voip.demotions, voip.demoted_packets), (0, 0), "the small EF flow is never demoted");
        assert_eq!((be.demotions, be.demoted_packets), (0, 0));
        let good = |r: &RunResults, f: &str| r.flows.iter().find(|x| x.name == f).unwrap().clone();
        let (b0, b1) = (good(&base, "udp-b").goodput_mbps, good(&r, "udp-b").goodput_mbps);
        let (d0, d1) = (good(&base, "udp-p").delay_mean_ms, good(&r, "udp-p").delay_mean_ms);
        println!("seed {seed}: best effort {b0:.1} -> {b1:.1} Mb/s; VoIP delay {d0:.2} -> {d1:.2} ms");
        // Demoted, the flood no longer takes VO's EDCA priority over the best-effort station.
        assert!(b1 > 1.1 * b0, "best effort {b0} -> {b1}");
    }
    let e = errors(&qos_cell("admission_sojourn = \"0ms\"", 1));
    assert!(e.contains("ap.admission_sojourn: must be greater than zero"), "{e}");
    let fifo =
        qos_cell("", 1).replace("mac_queue = \"fq-mac\"\nairtime = \"mac80211\"\n", "admission_sojourn = \"5ms\"\n");
    let e = errors(&fifo);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("ap.admission_sojourn: measures the sojourn of frames in mac80211's VO and VI TXQs"), "{e}");
}

// ---- Firmware aggregation with Byte Queue Limits (§4.1): docs/next-steps-firmware.md ----

fn mean_rtt(r: &RunResults, flow: &str) -> f64 {
    let v: Vec<f64> = r.pings.iter().filter(|p| p.flow == flow).map(|p| p.rtt_ms).collect();
    assert!(!v.is_empty(), "no pings of {flow}");
    v.iter().sum::<f64>() / v.len() as f64
}

fn goodput(r: &RunResults) -> f64 {
    r.flows.iter().filter(|f| f.protocol != "ping").map(|f| f.goodput_mbps).sum()
}

/// The largest MPDU of these runs (a 1500-byte IP packet in a QoS data frame).
const MAX_MPDU: u32 = 1538;

#[test]
fn a_firmware_queue_under_dql_holds_what_completes_not_a_fixed_count() {
    for (aql, seed) in [("aql = false", 1u64), ("aql = false", 2), ("", 3)] {
        let fixed = format!("{aql}\naggregation = \"firmware\"\nfirmware_frames = 256");
        let (rf, sf) = run_with_stats(&hoiland("tcp", &fixed, seed, 6));
        let (rd, sd) = run_with_stats(&hoiland("tcp", &format!("{fixed}\nfirmware_limit = \"dql\""), seed, 6));
        println!(
            "[{aql}] seed {seed}: fixed: max {} frames {} B, {:.1} Mb/s, ping fast1 {:.1} pingonly {:.1} ms | dql: max {} \
             frames {} B (limit up to {} B), {:.1} Mb/s, ping fast1 {:.1} pingonly {:.1} ms",
            sf.fw_max_frames,
            sf.fw_max_bytes,
            goodput(&rf),
            mean_rtt(&rf, "ping-fast1"),
            mean_rtt(&rf, "ping-pingonly"),
            sd.fw_max_frames,
            sd.fw_max_bytes,
            sd.dql_max_limit,
            goodput(&rd),
            mean_rtt(&rd, "ping-fast1"),
            mean_rtt(&rd, "ping-pingonly"),
        );
        // The fixed count binds (three TCP downloads fill it) and is never exceeded.
        assert_eq!(sf.fw_max_frames, 256);
        assert_eq!(sf.dql_max_limit, 0, "no DQL with a fixed count");
        // BQL stops the queue once it is over its limit: at most one frame beyond it.
        assert!(sd.dql_max_limit > 0);
        assert!(
            sd.fw_max_bytes <= sd.dql_max_limit + MAX_MPDU,
            "{} B held, limit {}",
            sd.fw_max_bytes,
            sd.dql_max_limit
        );
        // The limit settles near what the air completes between TX statuses (a few
        // aggregates), far below the fixed count's bytes.
        assert!(sd.fw_max_bytes * 3 < sf.fw_max_bytes, "{} vs {} B", sd.fw_max_bytes, sf.fw_max_bytes);
        // Less in the firmware: an idle station's pings wait less behind the bulk stations'
        // frames, and the host's airtime scheduler (not the firmware's round robin) decides
        // more of the order, so throughput does not suffer.
        assert!(mean_rtt(&rd, "ping-pingonly") < 0.85 * mean_rtt(&rf, "ping-pingonly"));
        assert!(goodput(&rd) > 0.97 * goodput(&rf), "{} vs {}", goodput(&rd), goodput(&rf));
    }
}

#[test]
fn bad_firmware_and_qos_keys_are_one_line_errors() {
    let cases: &[(&str, &str)] = &[
        ("aggregation = \"hardware\"", "ap.aggregation: unknown value"),
        ("firmware_limit = \"dql\"", "ap.firmware_limit: applies only with aggregation = \"firmware\""),
        ("aggregation = \"firmware\"\nfirmware_frames = 0", "ap.firmware_frames: must be between 1 and 65536"),
        ("aggregation = \"firmware\"\nhw_queue_lead = \"250us\"", "ap.hw_queue_lead: defers a driver's own aggregate"),
        ("aggregation = \"firmware\"\nvo_piggyback = 2", "ap.vo_piggyback: is a software-aggregating driver's choice"),
        ("vo_piggyback = 0", "ap.vo_piggyback: must be between 1 and 64"),
        ("schedule_order = \"fairness\"", "ap.schedule_order: unknown value"),
    ];
    for (ap, want) in cases {
        let e = errors(&lossy_cell(ap, 1));
        println!("{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("bad.toml:") && e.contains(want), "want {want:?}: {e}");
    }
    let ath9k =
        lossy_cell("schedule_order = \"station-first\"", 1).replace("airtime = \"mac80211\"", "airtime = \"ath9k\"");
    let e = errors(&ath9k);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("ap.schedule_order: \"station-first\" picks stations by mac80211's airtime deficits"), "{e}");
    let fifo =
        lossy_cell("", 1).replace("mac_queue = \"fq-mac\"\nairtime = \"mac80211\"\n", "aggregation = \"firmware\"\n");
    let e = errors(&fifo);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("ap.aggregation: a firmware-aggregating driver is fed from mac80211's TXQs"), "{e}");
}

// ---- VO at the head of lower-priority aggregates, station-first order (§4.3) ----

/// Every station with a saturated best-effort download and a VoIP-like EF flow (160 B every
/// 20 ms), plus an EF flood to "v" when `flood`.
fn vo_cell(ap: &str, flood: bool, seed: u64) -> String {
    let names = ["a", "b", "c", "v"];
    let mut s = cell(&[("a", 7, ""), ("b", 4, ""), ("c", 2, ""), ("v", 7, "")], "", seed, 4)
        .replace("airtime = \"mac80211\"", &format!("airtime = \"mac80211\"\n{ap}"));
    for n in names {
        s += &format!(
            "[[flow]]\nname = \"voip-{n}\"\nsrc = \"server\"\ndst = \"{n}\"\nrate = \"64kbit\"\nsize = 160\ndscp = 46\n"
        );
    }
    if flood {
        s += "[[flow]]\nname = \"ef-flood\"\nsrc = \"server\"\ndst = \"v\"\nrate = \"100Mbit\"\nsize = 1472\ndscp = 46\n";
    }
    s
}

fn flow_delay(r: &RunResults, name: &str) -> f64 {
    r.flows.iter().find(|f| f.name == name).unwrap().delay_mean_ms
}

/// The worst mean delay of the VoIP flows.
fn worst_voip(r: &RunResults) -> f64 {
    r.flows.iter().filter(|f| f.name.starts_with("voip")).map(|f| f.delay_mean_ms).fold(0.0, f64::max)
}

#[test]
fn vo_frames_ride_lower_aggregates_only_when_their_queue_holds_enough() {
    for (flood, seed) in [(false, 1u64), (false, 2), (true, 1)] {
        let (base, _) = run_with_stats(&vo_cell("", flood, seed));
        for n in [1u32, 4] {
            let (r, st) = run_with_stats(&vo_cell(&format!("vo_piggyback = {n}"), flood, seed));
            println!(
                "flood {flood} seed {seed} N {n}: piggybacked {} (min queued {}), goodput {:.1} -> {:.1}, voip-a delay \
                 {:.2} -> {:.2} ms, voip-v {:.2} -> {:.2} ms, worst voip {:.2} -> {:.2} ms",
                st.vo_piggybacked,
                st.vo_piggyback_min_queued,
                goodput(&base),
                goodput(&r),
                flow_delay(&base, "voip-a"),
                flow_delay(&r, "voip-a"),
                flow_delay(&base, "voip-v"),
                flow_delay(&r, "voip-v"),
                worst_voip(&base),
                worst_voip(&r),
            );
            // The occupancy condition: a VO TXQ rides only while it holds at least N frames.
            if st.vo_piggybacked > 0 {
                assert!(st.vo_piggyback_min_queued >= n, "rode with {} queued", st.vo_piggyback_min_queued);
            }
            if n == 1 {
                // Under the PHY-wide AQL limit VO frames do wait, and then ride.
                assert!(st.vo_piggybacked > 50, "VO frames must ride with N = 1");
            }
            if !flood && n == 4 {
                // VoIP-like flows never have four frames waiting: nothing changes at all.
                assert_eq!(st.vo_piggybacked, 0);
                assert_eq!(format!("{:?}", base.without_wall_time()), format!("{:?}", r.without_wall_time()));
            }
            if flood && n == 1 {
                // Under a VO flood the PHY-wide AQL limit holds every VoIP frame back, and with
                // N = 1 they ride best-effort aggregates, which contend with AC_BE's parameters
                // against the flood's VO queue: a slow station's VO session then waits seconds
                // in its receiver's reordering buffer (the paper's contention caveat).
                assert!(worst_voip(&r) > 10.0 * worst_voip(&base), "{} vs {}", worst_voip(&r), worst_voip(&base));
            }
        }
    }
}

#[test]
fn station_first_order_gives_a_vo_station_its_fair_share_and_no_more() {
    for seed in [1u64, 2] {
        let (base, _) = run_with_stats(&vo_cell("", true, seed));
        let (r, st) = run_with_stats(&vo_cell("schedule_order = \"station-first\"", true, seed));
        let shares = |r: &RunResults| ["a", "b", "c", "v"].map(|n| share(r, &[n]));
        println!(
            "seed {seed}: priority shares {:.3?} goodput {:.1} voip-a {:.2} ms | station-first {:.3?} goodput {:.1} \
             voip-a {:.2} ms, inversions {}",
            shares(&base),
            goodput(&base),
            flow_delay(&base, "voip-a"),
            shares(&r),
            goodput(&r),
            flow_delay(&r, "voip-a"),
            st.station_first_inversions
        );
        // Strict priority: the VO flood's station takes (nearly) all the AP's air, its VO
        // deficit being separate from the others' best-effort ones.
        assert!(shares(&base)[3] > 0.9);
        // Station first: one deficit per station, so four equal shares within 3 %.
        for s in shares(&r) {
            assert!((s / 0.25 - 1.0).abs() < 0.03, "{:?}", shares(&r));
        }
        // The other stations' VoIP still goes first among their own frames.
        assert!(flow_delay(&r, "voip-a") < 30.0);
    }
}
