//! Single-user 802.11ac/ax saturation throughput against ns-3 3.44: every case of
//! bench/ns3/su_saturation.csv (written by bench/ns3/run_ns3.sh, which builds the ns-3 program
//! bench/ns3/su_saturation.cc against the ns-3 wheel from PyPI) is simulated here with the same
//! link, and the goodputs must agree within 2 % (issue 24). `cargo test --release --test
//! vht_he_ns3 -- --nocapture` prints the table of docs/model-vht-he.md.

use crate::common;

use airsched_core::{parse_scenario, run_scenario};
use common::ns3::Link;

const CSV: &str = include_str!("../../../bench/ns3/su_saturation.csv");

/// One row of the ns-3 table.
struct Case {
    link: Link,
    phy_mbps: f64,
    ns3_mbps: f64,
}

fn cases() -> Vec<Case> {
    let mut lines = CSV.lines();
    assert_eq!(lines.next(), Some("standard,mcs,nss,width,gi_ns,window,phy_mbps,ns3_goodput_mbps"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Case { link: Link::parse(&f), phy_mbps: f[6].parse().unwrap(), ns3_mbps: f[7].parse().unwrap() }
        })
        .collect()
}

#[test]
fn single_user_saturation_matches_ns3_within_2_percent() {
    let mut worst = 0.0f64;
    let mut failed = Vec::new();
    println!("| standard | MCS | NSS | width | GI | window | PHY Mb/s | ns-3 Mb/s | airsched Mb/s | diff |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for c in cases() {
        let scn = parse_scenario(&c.link.scenario(c.phy_mbps, "", ""), "ns3-anchor.toml").unwrap();
        let sim = run_scenario(&scn).unwrap().flows[0].goodput_mbps;
        let diff = sim / c.ns3_mbps - 1.0;
        println!(
            "| 802.11{} | {} | {} | {} | {} ns | {} | {:.1} | {:.1} | {:.1} | {:+.2} % |",
            c.link.standard,
            c.link.mcs,
            c.link.nss,
            c.link.width,
            c.link.gi_ns,
            c.link.window,
            c.phy_mbps,
            c.ns3_mbps,
            sim,
            100.0 * diff
        );
        worst = worst.max(diff.abs());
        if diff.abs() > 0.02 {
            failed.push(format!(
                "802.11{} MCS {} {}x{} MHz: airsched {sim:.1}, ns-3 {:.1}",
                c.link.standard, c.link.mcs, c.link.nss, c.link.width, c.ns3_mbps
            ));
        }
    }
    println!("largest difference {:.2} %", 100.0 * worst);
    assert!(failed.is_empty(), "more than 2 % from ns-3 3.44: {failed:?}");
}
