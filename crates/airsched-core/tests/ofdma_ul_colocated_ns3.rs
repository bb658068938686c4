//! The capture-free reference (issue 24; docs/model-ofdma.md, "A capture-free reference: the
//! stations at one point"): the half-load uplink of bench/ns3/ofdma_ul.cc, single-user
//! (`--su=1`) and OFDMA (`RrMultiUserScheduler`, NStations = n, AccessReqInterval 1 ms), with
//! every station at one point 1 m from the AP (`--colocated=1`). ns-3's anchor cell otherwise
//! puts the stations on a 1-m circle, where a station that does not transmit receives the AP's
//! Trigger 4.5-9 dB above a colliding station's PPDU and decodes it (capture); at one point every
//! received power is the same, no preamble is detected under an overlap
//! (ThresholdPreambleDetectionModel, 4 dB; no frame capture model), and ns-3's medium is
//! airsched's: every overlap is lost at every receiver. What is left to compare is the MAC and
//! the scheduler alone.
//!
//! airsched's side is the like-for-like cell of the other uplink tests: stations
//! `aggregation = "at-access"`, `driver_queue_limit = 500`; `[cell] backoff_countdown =
//! "slot-boundary"`, `collision_ifs = "aifs"`, `cw_at_retry_limit = "reset"` with `retry_limit =
//! 8` (`NS3_CELL`); with OFDMA `[ap]
//! ul_trigger_nav = true`, `ul_bsr_lifetime = "20ms"` (tests/ofdma_ul18_ns3.rs),
//! `ul_tb_fill = "tb-start"`, `ul_timer_tie = "timer-first"` (`NS3_UL_AP`), and NOT
//! `ul_trigger_capture` (this medium has no capture). "Defaults" is the same cell with none of
//! those keys but the 500-frame driver queue (ns-3's WifiMacQueue size).
//!
//! Asserted, per case met: the mean delay over stations and airsched's run numbers 1-12 against
//! ns-3's over its runs (bench/ns3/ul_half_colocated.csv, `bench/ns3/run_ofdma.sh colocated`)
//! within max(5 %, twice the standard error of the difference), and the defaults outside that
//! bound. The cases not met are printed, not asserted (`MET` lists the met ones: a case that
//! leaves the bound, or one that enters it, fails the test until `MET` says so).
//! `cargo test --profile testing --test integration ofdma_ul_colocated_ns3:: -- --nocapture` prints the table.

use crate::common;

use airsched_core::{parse_scenario, Simulation};

const CSV: &str = include_str!("../../../bench/ns3/ul_half_colocated.csv");
/// The like-for-like keys (tests/common/ns3.rs) but the ring capture: this medium has none.
use common::ns3::{NS3_CELL as CELL, NS3_STATION as STATION, NS3_UL_AP as AP};
const DEFAULT_STATION: &str = "driver_queue_limit = 500\n";
/// airsched's run numbers per case.
const RUNS: u64 = 12;
/// ns-3 runs (mode, stations, run number) left out: with every station at one point the
/// association frames collide without capture too, and in this one 10 stations associated only
/// after the measurement began (28 associations for 18 stations, the last at 1.77 s; 102.4 of
/// the 120 Mb/s offered delivered; bench/ns3/ul_colocated_assoc.txt). Every other run delivered
/// 98-100 % of the offered load but one, the 18-station OFDMA run 10 (95 %: one station at 3.2
/// Mb/s and 152 ms with all 18 associated by 0.63 s), which is kept.
const LEFT_OUT: &[(&str, u32, u32)] = &[("su", 18, 6)];
/// The cases (mode, stations) within the bound, asserted; the others are printed.
const MET: &[(&str, u32)] = &[("su", 4), ("su", 9), ("su", 18), ("ofdma", 4), ("ofdma", 9), ("ofdma", 18)];

/// The ns-3 cell in airsched's keys: `mode` "su" or "ofdma", like for like or the defaults.
fn scenario(mode: &str, n: u32, seed: u64, like: bool) -> String {
    let mut ap = String::new();
    if mode == "ofdma" {
        ap = format!("ofdma = \"dl+ul\"\nmu_stations = {}\nmu_access_interval = \"1ms\"\n", n.min(74));
        if like {
            ap += AP;
        }
    }
    let station = if like { STATION } else { DEFAULT_STATION };
    let cell = if like { CELL } else { "" };
    common::ns3::cell(n, 120.0 / n as f64, "1.6us", &ap, station, true)
        .replacen("[cell]\n", &format!("[cell]\n{cell}"), 1)
        .replacen("seed = 1\n", &format!("seed = {seed}\n"), 1)
}

/// The mean delay over the stations of each of airsched's runs.
fn mean_delays(mode: &str, n: u32, like: bool) -> Vec<f64> {
    (1..=RUNS)
        .map(|seed| {
            let text = scenario(mode, n, seed, like);
            let r =
                Simulation::new(&parse_scenario(&text, "ofdma-ul-colocated.toml").unwrap()).unwrap().finish().unwrap();
            r.flows.iter().map(|f| f.delay_mean_ms).sum::<f64>() / n as f64
        })
        .collect()
}

/// ns-3's mean delay over the stations of each run of the case but those in `LEFT_OUT`, and a
/// note naming the runs left out.
fn ns3_means(mode: &str, n: u32) -> (Vec<f64>, String) {
    let (mut means, mut out) = (Vec::new(), Vec::new());
    for (seed, _, delay) in common::ns3::seed_runs(CSV, mode, n) {
        if LEFT_OUT.contains(&(mode, n, seed)) {
            out.push(seed.to_string());
        } else {
            means.push(delay.iter().sum::<f64>() / delay.len() as f64);
        }
    }
    let note = if out.is_empty() { String::new() } else { format!(" (run {} left out)", out.join(", ")) };
    (means, note)
}

/// One case compared: its table row, whether airsched is within the bound, and whether the
/// defaults are outside it.
fn compare(mode: &str, n: u32) -> (String, bool, bool) {
    let (means, left_out) = ns3_means(mode, n);
    assert!(means.len() >= 2, "{mode} {n}: {} ns-3 runs in ul_half_colocated.csv", means.len());
    let (m_n, se_n) = common::ns3::mean_se(&means);
    let (m_a, se_a) = common::ns3::mean_se(&mean_delays(mode, n, true));
    let (m_d, _) = common::ns3::mean_se(&mean_delays(mode, n, false));
    let bound = common::ns3::bound((m_a, se_a), (m_n, se_n));
    let (diff, diff_d) = (m_a / m_n - 1.0, m_d / m_n - 1.0);
    let (met, apart) = (diff.abs() <= bound, diff_d.abs() > bound);
    let row = format!(
        "| {mode} | {n} | {}{left_out} | {m_n:.2} ± {se_n:.2} | {m_a:.2} ± {se_a:.2} | {:+.1} % | {:.1} % | {} | {m_d:.2} ({:+.0} %) |",
        means.len(),
        100.0 * diff,
        100.0 * bound,
        if met { "met" } else { "NOT met" },
        100.0 * diff_d
    );
    (row, met, apart)
}

fn check(cases: &[(&str, u32)]) {
    println!("| mode | stations | ns-3 runs | ns-3 colocated mean delay ms | airsched ({RUNS} runs) | diff | bound | within | airsched defaults |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut failed = Vec::new();
    for &(mode, n) in cases {
        let (row, met, apart) = compare(mode, n);
        println!("{row}");
        let listed = MET.contains(&(mode, n));
        if met != listed {
            failed.push(format!("{mode} {n}: within the bound {met}, MET says {listed}: {row}"));
        }
        if listed && !apart {
            failed.push(format!("{mode} {n}: the defaults are within the bound too: {row}"));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// 4, 9 and 18 stations, single-user and OFDMA (about 3 s in the testing profile).
#[test]
fn colocated_half_load_delay_against_ns3() {
    check(&[("su", 4), ("su", 9), ("su", 18), ("ofdma", 4), ("ofdma", 9), ("ofdma", 18)]);
}

/// ns-3's timeline of the 4-station OFDMA case, runs 1-3 (bench/ns3/ul_colocated_fill.txt):
/// `seed,basic_tfs,two_station_tfs,tb_ppdus,qos_null_tb_ppdus,...`.
const FILL: &str = include_str!("../../../bench/ns3/ul_colocated_fill.txt");

/// When a solicited station fills its HE TB PPDU (`ul_tb_fill`; docs/model-ofdma.md, "The
/// 4-station gap: when the TB PPDU is filled"): ns-3 3.44 builds it SIFS after the Trigger,
/// so a station whose queue was empty when the Trigger started but that received a frame while
/// the Trigger was on the air sends it rather than QoS Null frames (whose Queue Size 0 keeps it
/// out of the next Trigger). 4 stations at one point, runs 1-3: ns-3 answered with QoS Null
/// frames in 1.5 % of its HE TB PPDUs; the like-for-like cell must be within 40 % of that
/// share, and the same cell filling at the Trigger's start (airsched's default) is more than
/// 2.5 times it (measured 1.6 % and 6.1 %).
#[test]
fn qos_null_tb_ppdus_follow_ns3_when_filled_at_the_tb_start() {
    let (mut ns3_null, mut ns3_tb) = (0u64, 0u64);
    for l in FILL.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<u64> = l.split(',').take(5).map(|x| x.parse().unwrap()).collect();
        ns3_tb += f[3];
        ns3_null += f[4];
    }
    let ns3 = ns3_null as f64 / ns3_tb as f64;
    let share = |tb_fill: bool| -> f64 {
        let (mut null, mut tb) = (0u64, 0u64);
        for seed in 1..=3 {
            let text: String = scenario("ofdma", 4, seed, true)
                .lines()
                .filter(|l| tb_fill || !l.starts_with("ul_tb_fill"))
                .map(|l| format!("{l}\n"))
                .collect();
            let r =
                Simulation::new(&parse_scenario(&text, "ofdma-ul-colocated.toml").unwrap()).unwrap().finish().unwrap();
            // The measured window's counts (seconds 1-3, as ns-3's).
            null += r.ofdma.iter().map(|o| o.ul_qos_null).sum::<u64>();
            tb += r.ofdma.iter().map(|o| o.ul_tb_ppdus).sum::<u64>();
        }
        null as f64 / tb as f64
    };
    let (like, at_trigger) = (share(true), share(false));
    println!(
        "QoS Null HE TB PPDUs: ns-3 {:.2} % ({ns3_null} of {ns3_tb}), filled at the TB PPDU's start {:.2} %, at the Trigger's start {:.2} %",
        100.0 * ns3,
        100.0 * like,
        100.0 * at_trigger
    );
    assert!((like / ns3 - 1.0).abs() <= 0.4, "filled at the TB start: {like:.4} against ns-3's {ns3:.4}");
    assert!(at_trigger > 2.5 * ns3, "filled at the Trigger's start: {at_trigger:.4} against ns-3's {ns3:.4}");
}

/// The scheduler's `AccessReqInterval` timer against the end of the AP's exchange
/// (`ul_timer_tie`; docs/model-ofdma.md, "The 4-station gap: when the TB PPDU is filled"): in
/// ns-3 3.44 the timer restarted at the grant runs before the exchange's end when both fall at
/// the same instant (an exchange of exactly 1 ms: TB PPDUs of UL Length 610, one of the
/// commonest), finds the access category granted and asks nothing, so the next Trigger comes
/// a millisecond later. 4 stations at one point, runs 1-3, seconds 1-3: of the intervals between
/// consecutive answered Basic Triggers ns-3 has 7.4 % below 1.5 ms; the like-for-like cell must
/// be within 40 % of that share, and the same cell with the exchange ending first (airsched's
/// default) is more than 2.5 times it (measured 7.3 % and 33 %).
#[test]
fn short_trigger_intervals_follow_ns3_with_the_timer_first() {
    let (mut ns3_short, mut ns3_all) = (0u64, 0u64);
    for l in FILL.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        ns3_all += f[9].parse::<u64>().unwrap();
        ns3_short += f[10].parse::<u64>().unwrap();
    }
    let ns3 = ns3_short as f64 / ns3_all as f64;
    let share = |tie: bool| -> f64 {
        let (mut short, mut all) = (0u64, 0u64);
        for seed in 1..=3 {
            let text: String = scenario("ofdma", 4, seed, true)
                .lines()
                .filter(|l| tie || !l.starts_with("ul_timer_tie"))
                .map(|l| format!("{l}\n"))
                .collect();
            let mut sim = Simulation::new(&parse_scenario(&text, "ofdma-ul-colocated.toml").unwrap()).unwrap();
            sim.finish().unwrap();
            // The Basic Triggers that reached the stations (each answered: a perfect channel),
            // from the measured window's start.
            let log = &sim.ul_ofdma_stats().expect("uplink OFDMA on").log;
            assert!(log.len() < 4096, "the Trigger log is full");
            let starts: Vec<u64> = log.iter().map(|e| e.0 .0).filter(|&t| t >= 1_000_000_000).collect();
            all += starts.len().saturating_sub(1) as u64;
            short += starts.windows(2).filter(|w| w[1] - w[0] < 1_500_000).count() as u64;
        }
        short as f64 / all as f64
    };
    let (like, exchange_first) = (share(true), share(false));
    println!(
        "answered-Trigger intervals below 1.5 ms: ns-3 {:.1} % ({ns3_short} of {ns3_all}), timer first {:.1} %, exchange first {:.1} %",
        100.0 * ns3,
        100.0 * like,
        100.0 * exchange_first
    );
    assert!((like / ns3 - 1.0).abs() <= 0.4, "timer first: {like:.4} against ns-3's {ns3:.4}");
    assert!(exchange_first > 2.5 * ns3, "exchange first: {exchange_first:.4} against ns-3's {ns3:.4}");
}

/// Diagnostic (ignored): per OFDMA case, the mean over runs of what the uplink carried, ns-3's
/// (bench/ns3/ul_half_colocated_summary.txt) beside airsched's like-for-like cell (the `ofdma`
/// and `stations` tables): Basic Triggers and those answered (ns-3: Multi-STA BlockAcks), HE TB
/// PPDUs and their data MPDUs, and single-user data PPDU attempts (airsched: the stations'
/// `tx_attempts`, which count no TB PPDU; solicitations: stations named in Basic Triggers).
#[test]
#[ignore]
fn probe_counts() {
    const SUMMARY: &str = include_str!("../../../bench/ns3/ul_half_colocated_summary.txt");
    for n in [4u32, 9, 18] {
        // "# mode=ofdma n=N seed=S" then "n=N ... basic_tfs=.. tb_ppdus=.. tb_mpdus=.. su_ppdus=.. multi_sta_bas=..".
        let mut sums = [0.0f64; 5];
        let mut runs = 0;
        let mut on = false;
        for l in SUMMARY.lines() {
            if let Some(h) = l.strip_prefix("# ") {
                on = h.starts_with(&format!("mode=ofdma n={n} "));
            } else if on && l.starts_with("n=") {
                let get = |k: &str| -> f64 {
                    l.split(' ').find_map(|w| w.strip_prefix(&format!("{k}="))).unwrap().parse().unwrap()
                };
                for (s, k) in sums.iter_mut().zip(["basic_tfs", "multi_sta_bas", "tb_ppdus", "tb_mpdus", "su_ppdus"]) {
                    *s += get(k);
                }
                runs += 1;
            }
        }
        let ns3: Vec<f64> = sums.iter().map(|s| s / runs.max(1) as f64).collect();
        let mut a = [0.0f64; 4];
        for seed in 1..=RUNS {
            let text = scenario("ofdma", n, seed, true);
            let r =
                Simulation::new(&parse_scenario(&text, "ofdma-ul-colocated.toml").unwrap()).unwrap().finish().unwrap();
            a[0] += r.ofdma.iter().map(|o| o.ul_triggers).sum::<u64>() as f64;
            a[1] += r.ofdma.iter().map(|o| o.ul_tb_ppdus).sum::<u64>() as f64;
            a[2] += r.ofdma.iter().map(|o| o.ul_mpdus).sum::<u64>() as f64;
            a[3] += r.stations.iter().map(|s| s.tx_attempts).sum::<u64>() as f64;
        }
        let a: Vec<f64> = a.iter().map(|s| s / RUNS as f64).collect();
        println!(
            "n={n}: ns-3 ({runs} runs) Triggers {:.0}, answered {:.0}, TB PPDUs {:.0}, TB MPDUs {:.0}, SU PPDUs {:.0}; \
             airsched solicitations {:.0}, TB PPDUs {:.0}, TB MPDUs {:.0}, SU attempts {:.0}",
            ns3[0], ns3[1], ns3[2], ns3[3], ns3[4], a[0], a[1], a[2], a[3]
        );
    }
}

/// Diagnostic (ignored): each like-for-like key left out of the OFDMA cell in turn, and
/// `ul_trigger_capture = "ring"` added (the circle's capture, which this medium does not have),
/// mean delay over runs 1-12 beside ns-3's colocated mean.
#[test]
#[ignore]
fn probe_each_key() {
    let run = |n: u32, drop: &str, add: &str| -> f64 {
        let means: Vec<f64> = (1..=RUNS)
            .map(|seed| {
                let text: String = scenario("ofdma", n, seed, true)
                    .lines()
                    .filter(|l| drop.is_empty() || !l.starts_with(drop))
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
                    .replacen("[ap]\n", &format!("[ap]\n{add}"), 1);
                let r = Simulation::new(&parse_scenario(&text, "ofdma-ul-colocated.toml").unwrap())
                    .unwrap()
                    .finish()
                    .unwrap();
                r.flows.iter().map(|f| f.delay_mean_ms).sum::<f64>() / n as f64
            })
            .collect();
        common::ns3::mean_se(&means).0
    };
    for n in [4u32, 9, 18] {
        let ns3 = ns3_means("ofdma", n).0;
        let mut line = format!("n={n}: ns-3 {:.2}, all {:.2}", common::ns3::mean_se(&ns3).0, run(n, "", ""));
        for key in [
            "aggregation",
            "backoff_countdown",
            "collision_ifs",
            "cw_at_retry_limit",
            "ul_trigger_nav",
            "ul_bsr_lifetime",
            "ul_tb_fill",
            "ul_timer_tie",
        ] {
            line += &format!(", without {key} {:.2}", run(n, key, ""));
        }
        line += &format!(", with ul_trigger_capture {:.2}", run(n, "", "ul_trigger_capture = \"ring\"\n"));
        println!("{line}");
    }
}
