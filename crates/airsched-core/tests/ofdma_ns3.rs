//! Downlink OFDMA against ns-3 3.44's round-robin multi-user scheduler (issue 24): every case
//! of bench/ns3/ofdma_dl.csv (written by bench/ns3/run_ofdma.sh, which builds
//! bench/ns3/ofdma_dl.cc against the ns-3 wheel from PyPI) is simulated with the same cell,
//! `[ap] ofdma = "dl"`, `mu_scheduler = "rr"`; the aggregate goodput must agree within 5 %,
//! and at half load each station's mean one-way delay to the end of the PPDU that carried the
//! packet too. The RU sizes and users per MU PPDU are checked against ns-3's printed MU PPDUs
//! (bench/ns3/ofdma_dl_ppdus.txt).
//! `cargo test --release --test integration ofdma_ns3:: -- --nocapture` prints the table of
//! docs/model-ofdma.md.

use crate::common;

use airsched_core::{parse_scenario, Simulation};
use common::ns3::Case;

const CSV: &str = include_str!("../../../bench/ns3/ofdma_dl.csv");
const PPDUS: &str = include_str!("../../../bench/ns3/ofdma_dl_ppdus.txt");

fn cases() -> Vec<Case> {
    common::ns3::cases(CSV)
}

/// The ns-3 program's cell in airsched's keys: an 802.11ax AP, 80 MHz, one stream, 0.8 us GI,
/// every station HE MCS 7 with one stream, BlockAck window 256, A-MPDUs up to aPPDUMaxTime,
/// beacons on, a perfect channel; FQ-MAC (per-station queues, as ns-3's scheduler peeks each
/// station's frames); the 1472-byte UDP flows start 0.1 ms apart, as the ns-3 clients do, from
/// a server behind a 10 Gbit/s link without delay (ns-3's clients run on the AP).
fn scenario(n: u32, rate_mbps: f64, ofdma: bool) -> String {
    let ap = if ofdma {
        format!("ofdma = \"dl\"\nmu_scheduler = \"rr\"\nmu_stations = {}\n", n.min(74))
    } else {
        String::new()
    };
    common::ns3::cell(n, rate_mbps, "0.8us", &ap, "", false)
}

fn run(n: u32, rate_mbps: f64) -> (Vec<f64>, Vec<f64>, Simulation) {
    let scn = parse_scenario(&scenario(n, rate_mbps, true), "ofdma-ns3.toml").unwrap();
    let mut sim = Simulation::new(&scn).unwrap();
    let r = sim.finish().unwrap();
    let goodput = r.flows.iter().map(|f| f.goodput_mbps).collect();
    let delay = r.flows.iter().map(|f| f.delay_mean_ms).collect();
    (goodput, delay, sim)
}

#[test]
fn dl_ofdma_matches_ns3_within_5_percent() {
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
        // Stations are matched by association order (ns-3's AIDs), which is the scheduler's
        // initial order in both simulators.
        let worst = c.delay_ms.iter().zip(&delay).map(|(a, b)| (b / a - 1.0).abs()).fold(0.0, f64::max);
        if c.load == "half" && worst > 0.05 {
            failed.push(format!("{} stations half load: a station's mean delay {:.1} % from ns-3", c.n, 100.0 * worst));
        }
        let stats = sim.ofdma_stats().expect("OFDMA on");
        println!(
            "| {} | {} | {:.2} | {ns3_total:.1} | {total:.1} | {:+.2} % | {} | {} | {:.1} % | ({} MU PPDUs, {:.1} users each)",
            c.n,
            c.load,
            c.rate_mbps,
            100.0 * diff,
            range(&c.delay_ms),
            range(&delay),
            100.0 * worst,
            stats.mu_ppdus,
            stats.mu_users as f64 / stats.mu_ppdus as f64,
        );
    }
    assert!(failed.is_empty(), "more than 5 % from ns-3 3.44: {failed:?}");
}

/// ns-3's saturated MU PPDUs (after warm-up): airsched's have as many users on the same RU
/// size (4 x 242, 8 x 106, 16 x 52 tones) with as many MPDUs each; which stations are left
/// out is printed for both.
#[test]
fn ru_allocation_sequence_is_ns3s() {
    // Per case: its station count (0 for the half-load cases) and its PPDUs' users.
    type Ppdu = Vec<(u32, u32, u32)>;
    let mut blocks: Vec<(u32, Vec<Ppdu>)> = Vec::new();
    for l in PPDUS.lines() {
        if let Some(h) = l.strip_prefix("# n=") {
            let n: u32 = h.split(' ').next().unwrap().parse().unwrap();
            blocks.push((n, Vec::new()));
            if !h.contains("saturated") {
                blocks.pop();
                blocks.push((0, Vec::new()));
            }
            continue;
        }
        let users = l.split(" users ").nth(1).unwrap();
        let u: Vec<(u32, u32, u32)> = users
            .split(' ')
            .map(|x| {
                let v: Vec<u32> = x.split(':').map(|y| y.parse().unwrap()).collect();
                (v[0], v[1], v[2])
            })
            .collect();
        blocks.last_mut().unwrap().1.push(u);
    }
    let mhz_of = |tones: u32| match tones {
        26 => 2,
        52 => 4,
        106 => 8,
        242 => 20,
        484 => 40,
        _ => 80,
    };
    for (n, ns3) in blocks.into_iter().filter(|b| b.0 > 0) {
        let c = cases().into_iter().find(|c| c.n == n && c.load == "saturated").unwrap();
        let (_, _, sim) = run(n, c.rate_mbps);
        let stats = sim.ofdma_stats().unwrap();
        let ours: Vec<&Vec<(u32, u32, u32)>> =
            stats.log.iter().filter(|(t, _)| t.0 >= 1_000_000_000).map(|(_, u)| u).take(ns3.len()).collect();
        for (a, b) in ns3.iter().zip(&ours) {
            assert_eq!(a.len(), b.len(), "{n} stations: users per MU PPDU");
            assert!(a.iter().zip(b.iter()).all(|(x, y)| x.1 == mhz_of(y.1)), "{n} stations: RU sizes {a:?} / {b:?}");
            // MPDUs per user: aPPDUMaxTime fills each RU alike (ns-3 may have one MPDU
            // fewer for a station whose queue was short at that moment).
            let most = |v: Vec<u32>| v.into_iter().max().unwrap();
            assert_eq!(
                most(a.iter().map(|x| x.2).collect()),
                most(b.iter().map(|y| y.2).collect()),
                "{n} stations: MPDUs per user"
            );
        }
        // Who is left out, PPDU after PPDU. Stations whose credits are equal in exact
        // arithmetic are ordered by floating-point rounding and by the run's history (ns-3's
        // PPDUs are 0.8 us longer per HE-LTF), so the two orders differ; both are printed
        // (docs/model-ofdma.md).
        let left_out = |seq: Vec<Vec<u32>>| {
            seq.iter().map(|p| (0..n).filter(|s| !p.contains(s)).collect::<Vec<u32>>()).collect::<Vec<_>>()
        };
        let a = left_out(ns3.iter().map(|p| p.iter().map(|x| x.0).collect()).collect());
        let b = left_out(ours.iter().map(|p| p.iter().map(|y| y.0).collect()).collect());
        println!("{n} stations, left out: ns-3 {a:?}\n{n} stations, left out: airsched {b:?}");
    }
}
