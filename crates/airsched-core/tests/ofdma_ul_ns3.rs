//! Uplink OFDMA against ns-3 3.44's round-robin multi-user scheduler (issue 24): every case of
//! bench/ns3/ofdma_ul.csv (written by `bench/ns3/run_ofdma.sh ul`, which builds
//! bench/ns3/ofdma_ul.cc against the ns-3 wheel from PyPI) is simulated with the same cell,
//! `[ap] ofdma = "dl+ul"`, `mu_access_interval = "1ms"`: every station sends saturating (700/N
//! Mb/s) or half-load (120/N Mb/s) UDP to the server behind the AP. ns-3 runs like for like
//! (single-user data at the configured 1.6 us guard interval, the A-MPDU sent again after a
//! missed BlockAck; docs/model-ofdma.md) and airsched's stations hold 500 frames in their driver
//! as ns-3's WifiMacQueue does (`driver_queue_limit`), so their single-user A-MPDUs reach
//! aPPDUMaxTime. The table (goodput, each station's mean delay to the end of the PPDU that
//! carried the packet) is printed; the aggregate goodput must agree within 5 % at both loads.
//! The cell is made like for like with ns-3 by the keys of tests/common/ns3.rs: the stations
//! form their A-MPDU when they win the medium (`NS3_STATION`), the cell counts its backoff,
//! defers after collisions and resets CW at the retry limit as ns-3 does (`NS3_CELL`;
//! tests/su_ul_ns3.rs), and the AP has ns-3's Trigger NAV, request and report lifetime
//! (`NS3_UL_AP`: ns-3's Trigger NAV, report lifetime, TB PPDU fill and timer tie) and its ring
//! geometry (`NS3_RING`: the capture of a Trigger, the NAV of the stations that decode one
//! nobody answers, the EIFS of those that detect a collider's preamble; tests/ofdma_ul18_ns3.rs).
//! The half-load delays agree within 5 % (or the runs' resolution): `ul_half_load_delay_over_runs`
//! prints the mean over stations and runs against ns-3's (bench/ns3/ul_half_seeds.csv) and
//! asserts the bounds that hold (docs/model-ofdma.md). The Basic Triggers' RU sizes, stations per
//! Trigger and MPDUs per full HE TB PPDU are checked against ns-3's
//! (bench/ns3/ofdma_ul_trace.txt), the saturated cell's answered Triggers against ns-3's runs
//! (bench/ns3/ul_sat18_triggers.txt), and what follows an unanswered overlapped Trigger against
//! ns-3's share.
//! `cargo test --release --test integration ofdma_ul_ns3:: -- --nocapture` prints the table of
//! docs/model-ofdma.md.

use crate::common;

use airsched_core::{parse_scenario, Simulation};
use common::ns3::Case;

const CSV: &str = include_str!("../../../bench/ns3/ofdma_ul.csv");
const TRACE: &str = include_str!("../../../bench/ns3/ofdma_ul_trace.txt");
const SEEDS_CSV: &str = include_str!("../../../bench/ns3/ul_half_seeds.csv");
const SAT18: &str = include_str!("../../../bench/ns3/ul_sat18_triggers.txt");
/// The stations, the cell and the AP made like for like with ns-3 (the module documentation).
use common::ns3::{NS3_CELL as LIKE_NS3, NS3_STATION as STATION};

fn cases() -> Vec<Case> {
    common::ns3::cases(CSV)
}

/// The ns-3 program's cell in airsched's keys: an 802.11ax AP, 80 MHz, one stream, 1.6 us GI
/// (2x HE-LTF), every station HE MCS 7 with one stream, BlockAck window 256, A-MPDUs up to
/// aPPDUMaxTime, beacons on, a perfect channel, 500 frames in each station's driver; the
/// stations' 1472-byte UDP flows start 0.1 ms
/// apart, as the ns-3 clients do, to a server behind a 10 Gbit/s link without delay (ns-3's
/// servers run on the AP).
fn scenario(n: u32, rate_mbps: f64) -> String {
    scenario_with(n, rate_mbps, STATION, LIKE_NS3, &like_ns3_ap(), 1)
}

/// The AP's like-for-like keys: ns-3's uplink rules and its ring geometry's capture.
fn like_ns3_ap() -> String {
    format!("{}{}", common::ns3::NS3_UL_AP, common::ns3::NS3_RING)
}

/// The cell with `station` lines in every station, `cell` lines in `[cell]`, `ap` lines (beyond
/// uplink OFDMA's) in `[ap]`, run number `seed`.
fn scenario_with(n: u32, rate_mbps: f64, station: &str, cell: &str, ap: &str, seed: u64) -> String {
    let ap = format!("ofdma = \"dl+ul\"\nmu_stations = {}\nmu_access_interval = \"1ms\"\n{ap}", n.min(74));
    common::ns3::cell(n, rate_mbps, "1.6us", &ap, station, true)
        .replacen("[cell]\n", &format!("[cell]\n{cell}"), 1)
        .replacen("seed = 1\n", &format!("seed = {seed}\n"), 1)
}

/// The mean over stations of each run's delays, over run numbers 1..=12.
fn mean_delays(n: u32, station: &str, cell: &str, ap: &str) -> Vec<f64> {
    (1..=12)
        .map(|seed| {
            let text = scenario_with(n, 120.0 / n as f64, station, cell, ap, seed);
            let r = Simulation::new(&parse_scenario(&text, "ofdma-ul-ns3.toml").unwrap()).unwrap().finish().unwrap();
            r.flows.iter().map(|f| f.delay_mean_ms).sum::<f64>() / n as f64
        })
        .collect()
}

/// Half load: the mean delay over stations and runs against ns-3's over its runs, with every
/// like-for-like key (tests/common/ns3.rs): within 5 % or twice the standard error of the
/// difference with 4, 9 and 18 stations (+4.1 %, -2.6 %, -4.9 % against ns-3's 5, 5 and 7 runs;
/// docs/model-ofdma.md), and every case closer than airsched's defaults (driver-built
/// aggregates, DCF's countdown, EIFS, CW doubling at the retry limit, no Trigger NAV, report
/// lifetime, exchange timing or ring: +48 to +250 %).
#[test]
fn ul_half_load_delay_over_runs() {
    let mut failed = Vec::new();
    println!("| stations | ns-3 runs | ns-3 mean delay ms | airsched (12 runs) | diff | airsched defaults | diff |");
    println!("|---|---|---|---|---|---|---|");
    for n in [4u32, 9, 18] {
        let ns3 = common::ns3::seed_delays(SEEDS_CSV, "ofdma", n);
        let (m_n, se_n) = common::ns3::mean_se(&common::ns3::run_means(&ns3));
        let (m_a, se_a) = common::ns3::mean_se(&mean_delays(n, STATION, LIKE_NS3, &like_ns3_ap()));
        let (m_d, _) = common::ns3::mean_se(&mean_delays(n, "driver_queue_limit = 500\n", "", ""));
        let (diff, diff_d) = (m_a / m_n - 1.0, m_d / m_n - 1.0);
        let bound = common::ns3::bound((m_a, se_a), (m_n, se_n));
        if diff.abs() > bound || diff.abs() >= diff_d.abs() {
            failed.push(format!("{n} stations: {m_a:.2} ms (defaults {m_d:.2}) against ns-3's {m_n:.2}"));
        }
        println!(
            "| {n} | {} | {m_n:.2} ± {se_n:.2} | {m_a:.2} ± {se_a:.2} | {:+.1} % (bound {:.1} %) | {m_d:.2} | {:+.0} % |",
            ns3.len(),
            100.0 * diff,
            100.0 * bound,
            100.0 * diff_d
        );
    }
    assert!(failed.is_empty(), "{failed:?}");
}

fn run(n: u32, rate_mbps: f64) -> (Vec<f64>, Vec<f64>, Simulation) {
    let scn = parse_scenario(&scenario(n, rate_mbps), "ofdma-ul-ns3.toml").unwrap();
    let mut sim = Simulation::new(&scn).unwrap();
    let r = sim.finish().unwrap();
    let goodput = r.flows.iter().map(|f| f.goodput_mbps).collect();
    let delay = r.flows.iter().map(|f| f.delay_mean_ms).collect();
    (goodput, delay, sim)
}

#[test]
fn ul_ofdma_against_ns3_table() {
    let mut failed = Vec::new();
    println!("| stations | load | offered Mb/s per station | ns-3 Mb/s | airsched Mb/s | diff | ns-3 delay to PPDU end, ms (min-max over stations) | airsched delay ms | largest per-station delay diff |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for c in cases() {
        let (goodput, delay, sim) = run(c.n, c.rate_mbps);
        let (ns3_total, total): (f64, f64) = (c.goodput.iter().sum(), goodput.iter().sum());
        let diff = total / ns3_total - 1.0;
        if diff.abs() > 0.05 {
            failed.push(format!("{} stations {}: goodput {total:.1} against {ns3_total:.1}", c.n, c.load));
        }
        let range = |v: &[f64]| {
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(0.0, f64::max);
            format!("{lo:.2}-{hi:.2}")
        };
        let worst = c.delay_ms.iter().zip(&delay).map(|(a, b)| (b / a - 1.0).abs()).fold(0.0, f64::max);
        let st = sim.ul_ofdma_stats().expect("uplink OFDMA on");
        println!(
            "| {} | {} | {:.2} | {ns3_total:.1} | {total:.1} | {:+.2} % | {} | {} | {:.1} % | ({} Basic Triggers, {} TB PPDUs, {} of them QoS Null, {} MPDUs)",
            c.n,
            c.load,
            c.rate_mbps,
            100.0 * diff,
            range(&c.delay_ms),
            range(&delay),
            100.0 * worst,
            st.basic_triggers,
            st.tb_ppdus,
            st.qos_null_ppdus,
            st.tb_mpdus,
        );
    }
    assert!(failed.is_empty(), "more than 5 % from ns-3 3.44: {failed:?}");
}

/// Diagnostic (ignored): the same cells single-user (`ofdma` off) and with OFDMA, goodput only.
#[test]
#[ignore]
fn probe() {
    if let Ok(v) = std::env::var("PROBE_DELAYS") {
        let n: u32 = v.parse().unwrap();
        let c = cases().into_iter().find(|c| c.n == n && c.load == "half").unwrap();
        let (_, delay, _) = run(n, c.rate_mbps);
        let s0 = scenario(n, c.rate_mbps)
            .replace("ofdma = \"dl+ul\"\n", "")
            .replace(&format!("mu_stations = {}\n", n.min(74)), "")
            .replace("mu_access_interval = \"1ms\"\n", "")
            .replace(&like_ns3_ap(), "");
        let scn = parse_scenario(&s0, "p.toml").unwrap();
        let mut sim = Simulation::new(&scn).unwrap();
        let r = sim.finish().unwrap();
        let su: Vec<f64> = r.flows.iter().map(|f| f.delay_mean_ms).collect();
        println!("SU mean delay {:.2}", su.iter().sum::<f64>() / su.len() as f64);
        println!("OFDMA mean delay {:.2}", delay.iter().sum::<f64>() / delay.len() as f64);
        for (i, (a, b)) in c.delay_ms.iter().zip(&delay).enumerate() {
            println!("sta {i}: ns-3 {a:.2} airsched {b:.2}");
        }
        return;
    }
    for (n, rate) in [(4u32, 175.0), (18, 38.8889), (9, 77.7778)] {
        for on in [false, true] {
            let mut s = scenario(n, rate);
            if !on {
                s = s
                    .replace("ofdma = \"dl+ul\"\n", "")
                    .replace(&format!("mu_stations = {}\n", n.min(74)), "")
                    .replace("mu_access_interval = \"1ms\"\n", "")
                    .replace(&like_ns3_ap(), "");
            }
            let scn = parse_scenario(&s, "p.toml").unwrap();
            let mut sim = Simulation::new(&scn).unwrap();
            let r = sim.finish().unwrap();
            let total: f64 = r.flows.iter().map(|f| f.goodput_mbps).sum();
            println!(
                "n={n} ofdma={on} goodput={total:.1} ul={:?}",
                sim.ul_ofdma_stats().map(|u| (
                    u.basic_triggers,
                    u.tb_ppdus,
                    u.qos_null_ppdus,
                    u.tb_mpdus,
                    u.multi_sta_bas
                ))
            );
            if let Some(u) = sim.ul_ofdma_stats() {
                for (t, e) in u.log.iter().filter(|(t, _)| t.0 > 1_000_000_000).take(8) {
                    println!("  {t:?} {e:?}");
                }
            }
        }
    }
}

/// ns-3's saturated Basic Triggers (after warm-up): airsched's solicit as many stations on the
/// same RU size (4 x 242, 8 x 106, 16 x 52 tones), and a full HE TB PPDU (aPPDUMaxTime) carries
/// as many MPDUs on each RU size (35, 15, 7) as ns-3's most filled ones.
#[test]
fn basic_triggers_are_ns3s() {
    /// A saturated case of the trace: its station count, per Trigger (stations, RU MHz), and
    /// the most MPDUs in a TB PPDU.
    type Traced = (u32, Vec<(usize, u32)>, u32);
    let mut saturated = false;
    let mut ns3: Vec<Traced> = Vec::new();
    for l in TRACE.lines() {
        if let Some(h) = l.strip_prefix("# n=") {
            let n: u32 = h.split(' ').next().unwrap().parse().unwrap();
            saturated = h.contains("saturated");
            if saturated {
                ns3.push((n, Vec::new(), 0));
            }
            continue;
        }
        if !saturated {
            continue;
        }
        let c = ns3.last_mut().unwrap();
        if let Some(users) = l.strip_prefix("tf ").and_then(|x| x.split(" users ").nth(1)) {
            let u: Vec<u32> = users.split(' ').map(|x| x.split(':').nth(1).unwrap().parse().unwrap()).collect();
            assert!(u.iter().all(|&w| w == u[0]));
            c.1.push((u.len(), u[0]));
        } else if let Some(m) = l.split(" mpdus=").nth(1) {
            c.2 = c.2.max(m.split(' ').next().unwrap().parse().unwrap());
        }
    }
    assert_eq!(ns3.len(), 3);
    let mhz_of = |tones: u32| match tones {
        26 => 2,
        52 => 4,
        106 => 8,
        242 => 20,
        484 => 40,
        _ => 80,
    };
    for (n, triggers, most) in ns3 {
        let c = cases().into_iter().find(|c| c.n == n && c.load == "saturated").unwrap();
        let (_, _, sim) = run(n, c.rate_mbps);
        let st = sim.ul_ofdma_stats().unwrap();
        let ours: Vec<_> = st.log.iter().filter(|(t, _)| t.0 >= 1_000_000_000).take(triggers.len()).collect();
        assert!(!ours.is_empty(), "{n} stations: no Basic Trigger after warm-up");
        for ((users, mhz), (_, u)) in triggers.iter().zip(&ours) {
            assert_eq!(*users, u.len(), "{n} stations: stations per Basic Trigger");
            assert!(u.iter().all(|x| mhz_of(x.1) == *mhz), "{n} stations: RU size {mhz} MHz against {u:?}");
        }
        let ours_most = ours.iter().flat_map(|(_, u)| u.iter().map(|x| x.2)).max().unwrap();
        assert_eq!(ours_most, most, "{n} stations: MPDUs in a full HE TB PPDU");
    }
}

/// The saturated 18-station cell: the Basic Triggers answered (a TB PPDU followed) after the
/// warm-up, mean over run numbers 1-40, against ns-3's over its runs
/// (bench/ns3/ul_sat18_triggers.txt, `bench/ns3/sat_triggers.py`): within 5 % or twice the
/// standard error of the difference. The AP's Triggers go through only when it wins the medium
/// from 18 saturated stations, so this is the AP's access against theirs: the ring's rules for
/// an overlapped Trigger and a collision (`ul_trigger_capture = "ring"`: the decoders' NAV, the
/// bystanders' EIFS; docs/model-ofdma.md, "The saturated AP") are what brings it there. The
/// cell without the ring (every station loses every overlapped frame and defers AIFS) is
/// asserted outside the bound.
#[test]
fn saturated_answered_triggers_against_ns3() {
    let ns3: Vec<f64> =
        SAT18.lines().filter(|l| !l.starts_with('#')).map(|l| l.split(' ').nth(2).unwrap().parse().unwrap()).collect();
    assert!(ns3.len() >= 9, "ns-3 runs in ul_sat18_triggers.txt");
    let c = cases().into_iter().find(|c| c.n == 18 && c.load == "saturated").unwrap();
    let answered = |ap: &str| -> Vec<f64> {
        (1..=40)
            .map(|seed| {
                let text = scenario_with(18, c.rate_mbps, STATION, LIKE_NS3, ap, seed);
                let mut sim = Simulation::new(&parse_scenario(&text, "ofdma-ul-ns3.toml").unwrap()).unwrap();
                sim.finish().unwrap();
                let st = sim.ul_ofdma_stats().unwrap();
                st.log.iter().filter(|(t, _)| t.0 >= 1_000_000_000).count() as f64
            })
            .collect()
    };
    let (m_n, se_n) = common::ns3::mean_se(&ns3);
    let (m_a, se_a) = common::ns3::mean_se(&answered(&like_ns3_ap()));
    let (m_r, _) = common::ns3::mean_se(&answered(common::ns3::NS3_UL_AP));
    let bound = common::ns3::bound((m_a, se_a), (m_n, se_n));
    let (diff, diff_r) = (m_a / m_n - 1.0, m_r / m_n - 1.0);
    println!(
        "18 stations saturated, answered Basic Triggers after warm-up per run: ns-3 {m_n:.1} ± {se_n:.1} ({} runs), airsched {m_a:.1} ± {se_a:.1} ({:+.1} %, bound {:.1} %), without the ring {m_r:.1} ({:+.1} %)",
        ns3.len(),
        100.0 * diff,
        100.0 * bound,
        100.0 * diff_r
    );
    assert!(diff.abs() <= bound, "{m_a:.1} answered Triggers against ns-3's {m_n:.1}");
    assert!(diff_r.abs() > bound, "without the ring {m_r:.1} is within the bound too");
}

/// After a Basic Trigger that a station's PPDU overlapped and no station answered, the next
/// PPDU on the air is that station's in 81-85 % of cases in ns-3 3.44's 4-station half-load
/// cell (runs 1-3, docs/model-ofdma.md, "The buffer status, the Trigger's length and the
/// collided Trigger"): the stations that decoded the Trigger set their NAV from it and only the
/// colliding station (and the AP) contend. Asserted over run numbers 1-3 with every like-for-like
/// key: 75-92 %; without `ul_trigger_nav` (no NAV from a Trigger) another station sends next
/// almost always (under 20 %).
#[test]
fn after_an_unanswered_overlapped_trigger_its_collider_sends_next() {
    let c = cases().into_iter().find(|c| c.n == 4 && c.load == "half").unwrap();
    let share = |ap: &str| {
        let (mut next, mut all) = (0, 0);
        for seed in 1..=3 {
            let text = scenario_with(4, c.rate_mbps, STATION, LIKE_NS3, ap, seed);
            let mut sim = Simulation::new(&parse_scenario(&text, "ofdma-ul-ns3.toml").unwrap()).unwrap();
            sim.finish().unwrap();
            let st = sim.ul_ofdma_stats().unwrap();
            (next, all) = (next + st.next_by_collider, all + st.unanswered_overlapped);
        }
        assert!(all > 100, "{all} unanswered overlapped Triggers");
        next as f64 / all as f64
    };
    let with = share(&like_ns3_ap());
    let without = share(&like_ns3_ap().replace("ul_trigger_nav = true\n", ""));
    println!("4 stations half load: the colliding station sends next after {:.0} % of unanswered overlapped Triggers (without ul_trigger_nav {:.0} %; ns-3 81-85 %)", 100.0 * with, 100.0 * without);
    assert!((0.75..=0.92).contains(&with), "{with:.2}");
    assert!(without < 0.2, "{without:.2}");
}

/// Bad combinations are one-line errors naming the key.
#[test]
fn ul_ofdma_errors() {
    let cell = "[cell]\nstandard = \"802.11ax\"\nwidth = 80\nguard_interval = \"0.8us\"\n";
    let err = |text: &str| match parse_scenario(text, "t.toml") {
        Ok(_) => panic!("parsed: {text}"),
        Err(e) => e.0.into_iter().map(|e| format!("{}: {}", e.key, e.message)).collect::<Vec<_>>(),
    };
    let e = err(&format!("{cell}[ap]\nofdma = \"dl+ul\"\n[[station]]\nname = \"a\"\n"));
    assert!(e.len() == 1 && e[0].starts_with("ap.ofdma: uplink OFDMA needs"), "{e:?}");
    let e = err("[cell]\nstandard = \"802.11n\"\n[ap]\nofdma = \"dl+ul\"\n[[station]]\nname = \"a\"\n");
    assert!(e.len() == 1 && e[0].starts_with("ap.ofdma: OFDMA is 802.11ax's"), "{e:?}");
    let e = err(&format!("{}[ap]\nofdma = \"dl\"\nmu_access_interval = \"2ms\"\n", cell.replace("0.8us", "1.6us")));
    assert!(e.len() == 1 && e[0].starts_with("ap.mu_access_interval: applies only with ofdma = \"dl+ul\""), "{e:?}");
}

/// scenarios/wifi6-ofdma-ul.toml parses and runs: Basic Triggers solicit up to 9 stations on
/// equal RUs (9 x 26 tones when nine have data) and every upload is delivered.
#[test]
fn the_shipped_ul_scenario_runs() {
    let text = include_str!("../../../scenarios/wifi6-ofdma-ul.toml");
    let scn = parse_scenario(text, "wifi6-ofdma-ul.toml").unwrap();
    let mut sim = Simulation::new(&scn).unwrap();
    let r = sim.finish().unwrap();
    let st = sim.ul_ofdma_stats().unwrap();
    assert!(st.basic_triggers > 0 && st.log.iter().all(|(_, u)| u.len() <= 9 && u.iter().all(|x| x.1 == u[0].1)));
    // Nine stations share 9 x 26 tones; fewer get larger RUs (`FinalizeTxVector`).
    assert!(st.log.iter().any(|(_, u)| u.len() == 9 && u[0].1 == 26));
    let up: f64 = r.flows.iter().filter(|f| f.name.starts_with('u')).map(|f| f.goodput_mbps).sum();
    // 20 uploads of 500 kbit/s, all delivered (within the last second's queue).
    assert!((up - 10.0).abs() < 0.2, "uploads {up:.2} Mb/s");
    println!("uploads {up:.2} Mb/s, {} Basic Triggers, {} TB PPDUs", st.basic_triggers, st.tb_ppdus);
}
