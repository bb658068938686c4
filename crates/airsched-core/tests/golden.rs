//! Golden snapshots: the full result of shipped scenarios, every number of every station, flow,
//! node, rate, aggregate, ping, sample and tc counter (wall time excluded), compared bit for bit
//! with the committed text in `tests/golden/`. A refactor keeps them identical; a change of
//! numbers that is intended is its own commit, re-blessed with
//! `AIRSCHED_BLESS=1 cargo test --release --test integration golden::` and saying why.
//!
//! The text is the `Debug` form of `RunResults`: Rust prints every `f64` as the shortest
//! decimal that reads back to the same bits, so equal text means equal numbers.

use std::path::{Path, PathBuf};

use airsched_core::parse_scenario_with;
use airsched_core::run_scenario;

/// Scenario files (relative to the repository root, with `?KEY=VALUE&...` overrides) and what
/// each one covers.
pub const GOLDEN: &[(&str, &str)] = &[
    ("scenarios/anomaly.toml", "802.11b DCF, the performance anomaly, saturated uplink"),
    ("scenarios/pcf-anomaly.toml", "802.11b PCF: contention-free periods, polls, NAV, DCF in the CP"),
    ("scenarios/two-stations-cbr.toml", "802.11b CBR downlink, default pfifo"),
    ("scenarios/yip-kwok/htb-sfq.toml", "tc tree: htb with sfq leaves and u32 filters"),
    ("scenarios/yip-kwok/prio-tbf.toml", "tc tree: prio with a tbf (watchdog wake-ups)"),
    ("scenarios/valenzuela/table3-htb-2400-900.toml", "htb shaping on the wired side"),
    ("scenarios/garroppo/share-1-4-cbq.toml", "cbq, radio positions, ARF, retry limit 4"),
    ("scenarios/garroppo/walk-whtb.toml", "WHTB with the channel monitor, a walking station, fading"),
    ("scenarios/ping-bufferbloat.toml", "ping under load on 802.11b"),
    ("scenarios/tcp-bufferbloat.toml", "TCP CUBIC and NewReno on 802.11b"),
    ("scenarios/hoiland/udp.toml?ap.queueing=airtime", "802.11n, FQ-MAC and the airtime scheduler, UDP floods"),
    ("scenarios/hoiland/tcp.toml?ap.queueing=fq-mac", "802.11n, FQ-MAC, TCP downloads and pings"),
    (
        "scenarios/hoiland/tcp.toml?ap.queueing=fifo&ap.tc=tc qdisc add dev wlan0 root pfifo_fast",
        "802.11n, the ath9k driver FIFO under pfifo_fast, TCP",
    ),
    ("scenarios/80211n-edca-minstrel.toml", "802.11n EDCA, Minstrel over MCS, EF pings"),
    (
        "scenarios/yip-kwok/nap-fifo.toml?run.duration=30s",
        "Bluetooth NAP: the piconet, bnep, IMQ over wlan0 and bnep0, coexistence, Linux 2.4 TCP",
    ),
    ("scenarios/yip-kwok/nap-sir.toml?run.duration=20s", "Bluetooth coexistence with the SIR refinement"),
    ("scenarios/yip-kwok/ifb-htb-sfq.toml?run.duration=10s", "an ifb device: ingress redirect, htb + sfq"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A GOLDEN entry's file and its overrides (`KEY=VALUE` lines).
fn split(scenario: &str) -> (&str, Vec<&str>) {
    let (path, sets) = scenario.split_once('?').unwrap_or((scenario, ""));
    (path, sets.split('&').filter(|s| !s.is_empty()).collect())
}

/// `scenarios/a/b.toml?k=v` is golden `a--b-v.txt` (the first override's value names it).
fn golden_path(scenario: &str) -> PathBuf {
    let (path, sets) = split(scenario);
    let mut name = path.trim_start_matches("scenarios/").trim_end_matches(".toml").replace('/', "--");
    if let Some(first) = sets.first() {
        name = format!("{name}-{}", first.split_once('=').map_or(*first, |(_, v)| v));
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.txt"))
}

/// The snapshot text of one scenario's run.
pub fn snapshot(scenario: &str) -> String {
    let (file, sets) = split(scenario);
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let scn = parse_scenario_with(&text, file, &sets).unwrap_or_else(|e| panic!("{e}"));
    let res = run_scenario(&scn).unwrap_or_else(|e| panic!("{scenario}: {e}"));
    format!("{:#?}\n", res.without_wall_time())
}

#[test]
fn shipped_scenarios_match_their_golden_snapshots() {
    let bless = std::env::var_os("AIRSCHED_BLESS").is_some();
    let mut differ = Vec::new();
    for (scenario, _what) in GOLDEN {
        let got = snapshot(scenario);
        let gp = golden_path(scenario);
        if bless {
            std::fs::write(&gp, &got).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&gp)
            .unwrap_or_else(|e| panic!("{}: {e} (bless with AIRSCHED_BLESS=1)", gp.display()));
        if got != want {
            let line = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
            let show = |s: &str| s.lines().skip(line.saturating_sub(3)).take(7).collect::<Vec<_>>().join("\n");
            differ.push(format!(
                "{scenario}: first difference at line {}\n--- golden\n{}\n+++ now\n{}",
                line + 1,
                show(&want),
                show(&got)
            ));
        }
    }
    assert!(differ.is_empty(), "results differ from the golden snapshots:\n{}", differ.join("\n\n"));
}

#[test]
fn golden_snapshots_are_deterministic_and_cover_both_standards() {
    // The snapshot of a run is the same when taken twice, and the set covers 802.11b and 802.11n.
    assert_eq!(snapshot(GOLDEN[1].0), snapshot(GOLDEN[1].0));
    let texts: Vec<String> =
        GOLDEN.iter().map(|(s, _)| std::fs::read_to_string(root().join(split(s).0)).unwrap()).collect();
    assert!(texts.iter().any(|t| t.contains("802.11n")));
    assert!(texts.iter().any(|t| !t.contains("802.11n")));
}
