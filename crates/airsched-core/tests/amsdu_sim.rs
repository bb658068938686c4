//! A-MSDU inside A-MPDU at the AP (`[ap] amsdu = "mac80211"`, wifi/ht/amsdu.rs): single-station
//! saturation throughput against the analytic EDCA cycle computed by hand from the standard's
//! frame and PPDU arithmetic (docs/model-vht-he.md, "A-MSDU").

use crate::common;

use airsched_core::{parse_scenario, run_scenario, RunResults};
use common::saturation::{analytic, assert_close};

/// One station, downlink UDP saturating the AP, beacons off; `cell`, `ap` and `station` are
/// extra lines.
fn saturated(cell: &str, ap: &str, station: &str) -> RunResults {
    common::saturation::saturated_run(&format!("{cell}\nbeacons = false"), ap, station)
}

const VHT_CELL: &str = "standard = \"802.11ac\"\nwidth = 80\nnss = 2\nguard_interval = \"short\"";
const AMSDU: &str = "amsdu = \"mac80211\"";

#[test]
fn vht_amsdus_of_four_fill_the_64_mpdu_window() {
    // A subframe is 14 + 8 + 1500 = 1522 B, padded to 1524 but the last. mt7915's 4 fragments
    // (the kernel's test: 14 + 1500 + 26 + A-MSDU <= 11454 passes for all four): A-MSDU
    // 3 x 1524 + 1522 = 6094 B, MPDU 26 + 6094 + 4 = 6124 B. 64 MPDUs: 63 x (4 + 6124 -> 6128)
    // + 4 + 6124 = 392 192 B. VHT MCS 9, 2 SS, 80 MHz, short GI: N_DBPS 3120, so
    // ceil((16 + 3 137 536 + 12) / 3120) = 1006 symbols of 3.6 us, 4 x ceil(1006 x 3.6 / 4) =
    // 3624 us, + 44 us of preamble = 3668 us (under 4 ms). BlockAck 32 us: 256 MSDUs per
    // 3826.5 us cycle = 787.8 Mb/s (673.9 Mb/s without A-MSDU).
    let run = saturated(VHT_CELL, AMSDU, "mcs = 9\nnss = 2");
    assert_close(run.flows[0].goodput_mbps, analytic(256, 3668.0, 32.0), 0.02);
    let mean = run.stations[0].ampdu_mean_down;
    assert!(mean > 63.0 && mean <= 64.0, "mean A-MPDU {mean} MPDUs");
    // Off: every number as before (64 single-MSDU MPDUs in 960 us).
    let off = saturated(VHT_CELL, "amsdu = \"off\"", "mcs = 9\nnss = 2");
    assert_close(off.flows[0].goodput_mbps, analytic(64, 960.0, 32.0), 0.02);
}

#[test]
fn the_station_length_and_the_fragment_count_bound_the_amsdu() {
    // max_amsdu_len = 3895: the kernel's test for a second packet is 14 + 1500 + 34 + 1500 =
    // 3048 <= 3895, for a third 14 + 1500 + 26 + 3046 = 4586 > 3895: 2 MSDUs, MPDU 3076 B.
    // 64 MPDUs: 63 x 3080 + 4 + 3076 = 197 120 B -> ceil((16 + 1 576 960 + 12) / 3120) = 506
    // symbols -> 4 x ceil(506 x 3.6 / 4) = 1824 us + 44 = 1868 us: 128 MSDUs per 2026.5 us.
    let run = saturated(VHT_CELL, AMSDU, "mcs = 9\nnss = 2\nmax_amsdu_len = 3895");
    assert_close(run.flows[0].goodput_mbps, analytic(128, 1868.0, 32.0), 0.02);
    // max_tx_fragments = 2 gives the same MPDUs at 11454.
    let run2 = saturated(VHT_CELL, &format!("{AMSDU}\nmax_tx_fragments = 2"), "mcs = 9\nnss = 2");
    assert_close(run2.flows[0].goodput_mbps, analytic(128, 1868.0, 32.0), 0.02);
}

#[test]
fn ht_amsdus_stay_within_the_4095_byte_mpdu_of_a_blockack_session() {
    // HT MCS 7, 20 MHz, long GI (65 Mb/s, N_DBPS 260), station at 7935: Minstrel-HT's 4095
    // (IEEE80211_MAX_MPDU_LEN_HT_BA) caps the kernel's test at 2 MSDUs (4586 > 4095), MPDU
    // 3076 B. 4 ms: n MPDUs take 36 + 4 x ceil((16 + 8 x (3080 n - 4) + 6) / 260) us; n = 10:
    // 30 796 B -> 948 symbols -> 3828 us; n = 11 (33 876 B) would take 4208 us. BlockAck at
    // 24 Mb/s: 20 + 4 x ceil((16 + 256 + 6) / 96) = 32 us. 20 MSDUs per 3986.5 us = 59.1 Mb/s;
    // without A-MSDU 20 MPDUs of 1538 B (30 876 B, 3844 us): 20 per 4002.5 us = 58.8 Mb/s.
    let cell = "standard = \"802.11n\"";
    let run = saturated(cell, AMSDU, "mcs = 7");
    assert_close(run.flows[0].goodput_mbps, analytic(20, 3828.0, 32.0), 0.02);
    // The packet after the A-MPDU's last pair (it did not fit the 4 ms) is held and joins the
    // first MPDU of the next A-MPDU, so every MPDU is a pair: 10 per PPDU, 2 MSDUs each.
    let mean = run.stations[0].ampdu_mean_down;
    let per_mpdu = run.flows[0].received_packets as f64 / run.stations[0].tx_frames as f64;
    assert!((mean - 10.0).abs() < 0.01, "mean A-MPDU {mean} MPDUs");
    assert!((per_mpdu - 2.0).abs() < 0.01, "{per_mpdu} MSDUs per MPDU");
}

fn edca_minstrel(ap_extra: &str) -> RunResults {
    let path = format!("{}/../../scenarios/80211n-edca-minstrel.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen("airtime = \"mac80211\"\n", &format!("airtime = \"mac80211\"\n{ap_extra}\n"), 1);
    run_scenario(&parse_scenario(&text, &path).unwrap()).expect("packet conservation holds")
}

#[test]
fn tcp_over_lossy_links_with_retries_aql_and_minstrel_conserves_every_packet() {
    // Errors, retries, lost BlockAcks (the receiver's copies), retry drops, AQL and the airtime
    // scheduler, TCP data and ACKs, VO and BE: `run_scenario` checks that every packet is
    // somewhere exactly once, and the run is deterministic.
    let a = edca_minstrel(AMSDU);
    let b = edca_minstrel(AMSDU);
    assert_eq!(a.flows[0].goodput_mbps, b.flows[0].goodput_mbps);
    assert_eq!(a.stations[1].retries, b.stations[1].retries);
    for f in &a.flows[..2] {
        assert!(f.goodput_mbps > 1.0, "{} {}", f.name, f.goodput_mbps);
    }
    assert!(a.stations[1].retries > 0, "the far station's link loses MPDUs");
}

#[test]
fn one_error_loses_every_msdu_of_the_mpdu() {
    // At an SNR where 1538-byte MPDUs sometimes fail, the 3076-byte A-MSDU MPDUs (two packets)
    // fail more often: the error model sees the whole MPDU, and a failed MPDU's packets are
    // retried together.
    let fail = |ap: &str| {
        let r = saturated("standard = \"802.11n\"", ap, "mcs = 7\nsnr = 22");
        let s = &r.stations[0];
        s.retries as f64 / (s.tx_frames + s.retries + s.drops_retry) as f64
    };
    let (single, amsdu) = (fail(""), fail(AMSDU));
    // Twice the bytes: 1 - (1 - p)^2 for the pairs (most of each A-MPDU; the lone MPDUs that
    // fill its end fail as often as before).
    assert!(single > 0.3 && single < 0.7, "MPDU error rate {single}");
    assert!(amsdu > single + 0.1 && amsdu < 1.0 - (1.0 - single).powi(2) + 0.02, "{single} -> {amsdu}");
}

#[test]
fn a_non_ht_client_gets_no_amsdu() {
    // A-MSDU on at the AP of an 802.11ac cell with an 802.11a client at 54 Mb/s: its frames stay
    // one packet per MPDU (no HT capabilities), so the goodput is the lone-MPDU DCF cycle's:
    // AIFS 43 + backoff 67.5 + 252 (58 symbols) + SIFS 16 + ACK 28 us -> 28.97 Mb/s.
    let text =
        "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 3\n[cell]\nstandard = \"802.11ac\"\nbeacons = false\n\
                [wired]\nrate = \"10Gbit\"\n[ap]\nmac_queue = \"fq-mac\"\namsdu = \"mac80211\"\n\
                [[station]]\nname = \"a\"\nstandard = \"802.11a\"\nrate = \"54Mbps\"\n\
                [[flow]]\nname = \"down\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"saturate\"\nsize = 1472\n";
    let r = airsched_core::run_scenario(&airsched_core::parse_scenario(text, "a.toml").unwrap()).unwrap();
    let expect = 1472.0 * 8.0 / (43.0 + 67.5 + 252.0 + 16.0 + 28.0);
    let g = r.flows[0].goodput_mbps;
    assert!((g / expect - 1.0).abs() < 0.005, "{g} against {expect}");
}
