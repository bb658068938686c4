//! Single-user 802.11ac/ax saturation throughput against ns-3 3.44: every case of
//! bench/ns3/su_saturation.csv (written by bench/ns3/run_ns3.sh, which builds the ns-3 program
//! bench/ns3/su_saturation.cc against the ns-3 wheel from PyPI) is simulated here with the same
//! link, and the goodputs must agree within 2 % (issue 24). `cargo test --release --test
//! vht_he_ns3 -- --nocapture` prints the table of docs/model-vht-he.md.

use airsched_core::{parse_scenario, run_scenario};

const CSV: &str = include_str!("../../../bench/ns3/su_saturation.csv");

/// One row of the ns-3 table.
struct Case {
    standard: String,
    mcs: u32,
    nss: u32,
    width: u32,
    gi_ns: u32,
    window: u32,
    phy_mbps: f64,
    ns3_mbps: f64,
}

fn cases() -> Vec<Case> {
    let mut lines = CSV.lines();
    assert_eq!(lines.next(), Some("standard,mcs,nss,width,gi_ns,window,phy_mbps,ns3_goodput_mbps"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Case {
                standard: f[0].to_string(),
                mcs: f[1].parse().unwrap(),
                nss: f[2].parse().unwrap(),
                width: f[3].parse().unwrap(),
                gi_ns: f[4].parse().unwrap(),
                window: f[5].parse().unwrap(),
                phy_mbps: f[6].parse().unwrap(),
                ns3_mbps: f[7].parse().unwrap(),
            }
        })
        .collect()
}

/// The ns-3 program's cell in airsched's keys: one AP and one station, beacons on (ns-3's AP
/// sends them every 102.4 ms too), 1472-byte UDP payloads offered at 1.25 times the PHY rate
/// (the AP's queue never empties; ns-3 offers twice the rate, which changes nothing but the
/// number of drops), FQ-MAC so that no driver FIFO limits the aggregates, and A-MPDUs up to
/// aPPDUMaxTime (5.484 ms) rather than Linux's 4 ms, as ns-3 has no such cap.
fn scenario(c: &Case) -> String {
    let (standard, gi, ltf) = match (c.standard.as_str(), c.gi_ns) {
        ("ac", 400) => ("802.11ac", "short", ""),
        ("ac", _) => ("802.11ac", "long", ""),
        ("ax", 800) => ("802.11ax", "0.8us", ""),
        ("ax", 1600) => ("802.11ax", "1.6us", ""),
        _ => ("802.11ax", "3.2us", "ltf = \"4x\"\n"),
    };
    format!(
        "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 3\n\
         [cell]\nstandard = \"{standard}\"\nwidth = {w}\nnss = {n}\nguard_interval = \"{gi}\"\n{ltf}\
         max_aggregate_mpdus = {win}\nmax_aggregate_time = \"5484us\"\n\
         [wired]\nrate = \"10Gbit\"\n[ap]\nmac_queue = \"fq-mac\"\n\
         [[station]]\nname = \"a\"\nmcs = {m}\nnss = {n}\n\
         [[flow]]\nname = \"down\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"{r:.0}Mbit\"\nsize = 1472\n",
        w = c.width,
        n = c.nss,
        win = c.window,
        m = c.mcs,
        r = 1.25 * c.phy_mbps,
    )
}

#[test]
fn single_user_saturation_matches_ns3_within_2_percent() {
    let mut worst = 0.0f64;
    let mut failed = Vec::new();
    println!("| standard | MCS | NSS | width | GI | window | PHY Mb/s | ns-3 Mb/s | airsched Mb/s | diff |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for c in cases() {
        let scn = parse_scenario(&scenario(&c), "ns3-anchor.toml").unwrap();
        let sim = run_scenario(&scn).unwrap().flows[0].goodput_mbps;
        let diff = sim / c.ns3_mbps - 1.0;
        println!(
            "| 802.11{} | {} | {} | {} | {} ns | {} | {:.1} | {:.1} | {:.1} | {:+.2} % |",
            c.standard,
            c.mcs,
            c.nss,
            c.width,
            c.gi_ns,
            c.window,
            c.phy_mbps,
            c.ns3_mbps,
            sim,
            100.0 * diff
        );
        worst = worst.max(diff.abs());
        if diff.abs() > 0.02 {
            failed.push(format!(
                "802.11{} MCS {} {}x{} MHz: airsched {sim:.1}, ns-3 {:.1}",
                c.standard, c.mcs, c.nss, c.width, c.ns3_mbps
            ));
        }
    }
    println!("largest difference {:.2} %", 100.0 * worst);
    assert!(failed.is_empty(), "more than 2 % from ns-3 3.44: {failed:?}");
}
