//! A-MSDU inside A-MPDU against ns-3 3.44 (issue 24): every case of bench/ns3/amsdu.csv (written
//! by `bench/ns3/run_ns3.sh amsdu`, which runs bench/ns3/su_saturation.cc with ns-3's
//! `BE_MaxAmsduSize` on the AP and the station) is simulated here with the same link and
//! `[ap] amsdu = "mac80211"`. ns-3 bounds an A-MSDU by bytes, mac80211 by `max_tx_fragments`
//! and the station's maximum length; each row's settings make both build the same A-MSDUs,
//! which the test checks from ns-3's trace (MSDUs per MPDU, MPDUs per PPDU). The goodputs
//! must agree within 2 %, and so must the gain of A-MSDU over the same link without it.
//! `cargo test --release --test integration amsdu_ns3:: -- --nocapture` prints the table of
//! docs/model-vht-he.md ("A-MSDU inside A-MPDU").

use crate::common;

use std::sync::OnceLock;

use airsched_core::{parse_scenario, run_scenario};
use common::ns3::Link;

const CSV: &str = include_str!("../../../bench/ns3/amsdu.csv");

/// One row of the ns-3 table.
struct Case {
    link: Link,
    /// `[ap] max_tx_fragments`; 0: A-MSDU off.
    fragments: u32,
    /// The station's `max_amsdu_len` (its VHT maximum MPDU length).
    max_len: u32,
    /// ns-3's `BE_MaxAmsduSize` at the AP and at the station (0: off).
    ns3_ap: u32,
    ns3_sta: u32,
    phy_mbps: f64,
    ns3_mbps: f64,
    ns3_mpdus_per_ppdu: f64,
    ns3_msdus_per_mpdu: f64,
    ns3_max_msdus: u32,
}

fn cases() -> Vec<Case> {
    let mut lines = CSV.lines();
    assert_eq!(
        lines.next(),
        Some(
            "standard,mcs,nss,width,gi_ns,window,max_tx_fragments,max_amsdu_len,ns3_ap_amsdu,ns3_sta_amsdu,\
             phy_mbps,ns3_goodput_mbps,ns3_mpdus_per_ppdu,ns3_msdus_per_mpdu,ns3_max_msdus,ns3_ppdu_us"
        )
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Case {
                link: Link::parse(&f),
                fragments: f[6].parse().unwrap(),
                max_len: f[7].parse().unwrap(),
                ns3_ap: f[8].parse().unwrap(),
                ns3_sta: f[9].parse().unwrap(),
                phy_mbps: f[10].parse().unwrap(),
                ns3_mbps: f[11].parse().unwrap(),
                ns3_mpdus_per_ppdu: f[12].parse().unwrap(),
                ns3_msdus_per_mpdu: f[13].parse().unwrap(),
                ns3_max_msdus: f[14].parse().unwrap(),
            }
        })
        .collect()
}

/// A subframe of a 1500-byte datagram: 14-byte subframe header, 8-byte LLC/SNAP, the datagram
/// (802.11-2020 9.3.2.2.2), padded to 4 bytes unless it is the last.
const SUBFRAME: u32 = 14 + 8 + 1500;

/// The A-MSDU of `n` such subframes.
fn amsdu_bytes(n: u32) -> u32 {
    (n - 1) * SUBFRAME.next_multiple_of(4) + SUBFRAME
}

/// MSDUs per A-MSDU as Linux 6.1 `ieee80211_amsdu_aggregate` builds them from 1500-byte
/// datagrams: a packet joins while `skb->len + head->len <= max_amsdu_len` (14 + 1500 for the
/// 802.3 frame; the head without FCS: 34 + 1500 for a lone frame, 26 + A-MSDU after) and the
/// fragments stay within `max_tx_fragments`.
fn kernel_msdus(fragments: u32, max_len: u32) -> u32 {
    let mut n = 1;
    while n < fragments {
        let head = if n == 1 { 34 + 1500 } else { 26 + amsdu_bytes(n) };
        if 14 + 1500 + head > max_len {
            break;
        }
        n += 1;
    }
    n
}

/// MSDUs per A-MSDU as ns-3 3.44 (`MsduAggregator`) builds them: subframes while the A-MSDU
/// stays within the AP's `BE_MaxAmsduSize` and the station's advertised VHT maximum MPDU
/// length less 56 (3895 for a `BE_MaxAmsduSize` up to 3839, 7991 up to 7935, else 11454).
fn ns3_msdus(ap: u32, sta: u32) -> u32 {
    let advertised = match sta {
        0..=3839 => 3895,
        3840..=7935 => 7991,
        _ => 11454,
    };
    let limit = ap.min(advertised - 56);
    (1..).take_while(|&n| amsdu_bytes(n) <= limit).last().unwrap()
}

/// airsched's run of a case: goodput, MPDUs per PPDU, MSDUs per MPDU.
struct Sim {
    goodput: f64,
    mpdus_per_ppdu: f64,
    msdus_per_mpdu: f64,
}

fn simulate(c: &Case) -> Sim {
    let (ap, station) = match c.fragments {
        0 => (String::new(), String::new()),
        k => (format!("amsdu = \"mac80211\"\nmax_tx_fragments = {k}\n"), format!("max_amsdu_len = {}\n", c.max_len)),
    };
    let scn = parse_scenario(&c.link.scenario(c.phy_mbps, &ap, &station), "amsdu-anchor.toml").unwrap();
    let r = run_scenario(&scn).unwrap();
    Sim {
        goodput: r.flows[0].goodput_mbps,
        mpdus_per_ppdu: r.stations[0].ampdu_mean_down,
        msdus_per_mpdu: r.flows[0].received_packets as f64 / r.stations[0].tx_frames as f64,
    }
}

/// Every case with airsched's run, simulated once for the tests of this file.
fn runs() -> &'static [(Case, Sim)] {
    static RUNS: OnceLock<Vec<(Case, Sim)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let cases = cases();
        let (first, second) = cases.split_at(cases.len() / 2);
        let sims: Vec<Sim> = std::thread::scope(|s| {
            let a = s.spawn(|| first.iter().map(simulate).collect::<Vec<_>>());
            let mut b: Vec<Sim> = second.iter().map(simulate).collect();
            let mut all = a.join().unwrap();
            all.append(&mut b);
            all
        });
        cases.into_iter().zip(sims).collect()
    })
}

fn label(c: &Case) -> String {
    let amsdu = match c.fragments {
        0 => "off".to_string(),
        k => format!("{k} fragments, {} B", c.max_len),
    };
    format!(
        "802.11{} MCS {} {}x{} MHz, window {}, A-MSDU {amsdu}",
        c.link.standard, c.link.mcs, c.link.nss, c.link.width, c.link.window
    )
}

#[test]
fn both_simulators_build_the_same_amsdus() {
    // The ns-3 settings of each row give the A-MSDU size mac80211 builds (by ns-3's rule and
    // the kernel's, from the standard's subframe arithmetic), and ns-3's trace shows it: its
    // largest A-MSDU has that size wherever a PPDU holds more than one MPDU (at 6.5 and 8.6
    // Mb/s, aPPDUMaxTime holds one MPDU of 2 or 3 MSDUs).
    for c in cases().iter().filter(|c| c.fragments > 0) {
        let kernel = kernel_msdus(c.fragments, c.max_len);
        assert_eq!(ns3_msdus(c.ns3_ap, c.ns3_sta), kernel, "{}: the ns-3 settings build other A-MSDUs", label(c));
        assert!(c.ns3_max_msdus <= kernel, "{}: ns-3's largest A-MSDU", label(c));
        if c.ns3_mpdus_per_ppdu > 1.5 {
            assert_eq!(c.ns3_max_msdus, kernel, "{}: ns-3's largest A-MSDU", label(c));
        }
    }
    // The rows cover A-MSDUs of 2, 4, 5 and 7 MSDUs, bounded by the fragments (4) and by the
    // station's length (3895: 2, 7991: 5, 11454: 7).
    assert_eq!(kernel_msdus(4, 11454), 4);
    assert_eq!(kernel_msdus(4, 3895), 2);
    assert_eq!(kernel_msdus(8, 7991), 5);
    assert_eq!(kernel_msdus(16, 11454), 7);
}

/// The gain of an A-MSDU row over the same link without A-MSDU: (ns-3, airsched); None for a
/// row without A-MSDU.
fn gain(all: &[(Case, Sim)], c: &Case, s: &Sim) -> Option<(f64, f64)> {
    if c.fragments == 0 {
        return None;
    }
    let l = &c.link;
    let same = |o: &Link| {
        (&o.standard, o.mcs, o.nss, o.width, o.gi_ns, o.window)
            == (&l.standard, l.mcs, l.nss, l.width, l.gi_ns, l.window)
    };
    let (off, off_sim) = all.iter().find(|(o, _)| o.fragments == 0 && same(&o.link)).expect("an off row per link");
    Some((c.ns3_mbps / off.ns3_mbps - 1.0, s.goodput / off_sim.goodput - 1.0))
}

#[test]
fn amsdu_saturation_matches_ns3_within_2_percent() {
    let all = runs();
    let mut failed = Vec::new();
    let mut worst = 0.0f64;
    println!(
        "| link | window | A-MSDU: fragments, station | ns-3 BE_MaxAmsduSize AP, station | MPDUs x MSDUs per PPDU, ns-3 / airsched | ns-3 Mb/s | airsched Mb/s | diff | gain ns-3 / airsched |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (c, s) in all {
        let diff = s.goodput / c.ns3_mbps - 1.0;
        let gi = if c.link.standard == "ac" {
            format!("{} ns GI", c.link.gi_ns)
        } else {
            format!("{:.1} us GI", c.link.gi_ns as f64 / 1e3)
        };
        let (amsdu, ns3) = match c.fragments {
            0 => ("off".to_string(), "off".to_string()),
            k => (format!("{k}, {} B", c.max_len), format!("{}, {}", c.ns3_ap, c.ns3_sta)),
        };
        let gains = match gain(all, c, s) {
            Some((n, a)) => format!("{:+.1} % / {:+.1} %", 100.0 * n, 100.0 * a),
            None => String::new(),
        };
        println!(
            "| {} MCS {}, {} x {} MHz, {gi} | {} | {amsdu} | {ns3} | {:.1} x {:.2} / {:.1} x {:.2} | {:.1} | {:.1} | {:+.2} % | {gains} |",
            if c.link.standard == "ac" { "VHT" } else { "HE" },
            c.link.mcs,
            c.link.nss,
            c.link.width,
            c.link.window,
            c.ns3_mpdus_per_ppdu,
            c.ns3_msdus_per_mpdu,
            s.mpdus_per_ppdu,
            s.msdus_per_mpdu,
            c.ns3_mbps,
            s.goodput,
            100.0 * diff
        );
        worst = worst.max(diff.abs());
        if diff.abs() > 0.02 {
            failed.push(format!("{}: airsched {:.1} Mb/s, ns-3 {:.1}", label(c), s.goodput, c.ns3_mbps));
        }
        // The same aggregates: MPDUs per PPDU within 0.1 and MSDUs per PPDU within 0.25 (one
        // MSDU more or less in a PPDU that aPPDUMaxTime limits fails).
        if (s.mpdus_per_ppdu - c.ns3_mpdus_per_ppdu).abs() > 0.1
            || (s.mpdus_per_ppdu * s.msdus_per_mpdu - c.ns3_mpdus_per_ppdu * c.ns3_msdus_per_mpdu).abs() > 0.25
        {
            failed.push(format!(
                "{}: airsched {:.2} MPDUs x {:.2} MSDUs, ns-3 {:.2} x {:.2}",
                label(c),
                s.mpdus_per_ppdu,
                s.msdus_per_mpdu,
                c.ns3_mpdus_per_ppdu,
                c.ns3_msdus_per_mpdu
            ));
        }
    }
    println!("largest difference {:.2} %", 100.0 * worst);
    assert!(failed.is_empty(), "A-MSDU against ns-3 3.44: {failed:#?}");
}

#[test]
fn the_amsdu_gain_matches_ns3() {
    // The gain of each A-MSDU row over the same link without A-MSDU, in both simulators: within
    // 1.5 points of the goodput without A-MSDU (the goodputs' own 2 % would allow 4).
    let all = runs();
    let mut failed = Vec::new();
    let mut checked = 0;
    for (c, s) in all {
        let Some((ns3_gain, gain)) = gain(all, c, s) else { continue };
        if (gain - ns3_gain).abs() > 0.015 {
            failed.push(format!("{}: gain airsched {:+.1} %, ns-3 {:+.1} %", label(c), 100.0 * gain, 100.0 * ns3_gain));
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} A-MSDU rows");
    assert!(failed.is_empty(), "A-MSDU gain against ns-3 3.44: {failed:#?}");
}
