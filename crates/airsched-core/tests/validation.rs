//! Whole-model validation against analytical results (Bianchi, JSAC 2000; Heusse et al., 2003):
//! Bianchi saturation throughput and the 802.11b performance anomaly.

use crate::common;

use common::*;

/// UDP payload of a 1500-byte IP datagram.
const UDP_1500: u32 = 1472;

fn scenario(stations: &[(&str, &str)], flows: &[(&str, &str)], extra_cell: &str, duration: &str) -> String {
    let mut s =
        format!("[run]\nduration = \"{duration}\"\nwarmup = \"1s\"\nseed = 7\n[cell]\nbeacons = false\n{extra_cell}\n");
    for (name, rate) in stations {
        s += &format!("[[station]]\nname = \"{name}\"\nrate = \"{rate}\"\n");
    }
    for (i, (src, dst)) in flows.iter().enumerate() {
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"saturate\"\nsize = {UDP_1500}\n"
        );
    }
    s
}

/// Goodput (UDP payload) back to IP-datagram throughput, the models' convention.
fn ip_mbps(goodput: f64) -> f64 {
    goodput * 1500.0 / UDP_1500 as f64
}

fn saturated_uplink(n: usize, rate: &str, extra_cell: &str, duration: &str) -> f64 {
    let names: Vec<String> = (0..n).map(|i| format!("sta{i}")).collect();
    let stations: Vec<(&str, &str)> = names.iter().map(|s| (s.as_str(), rate)).collect();
    let flows: Vec<(&str, &str)> = names.iter().map(|s| (s.as_str(), "server")).collect();
    ip_mbps(run(&scenario(&stations, &flows, extra_cell, duration)).summary.total_goodput_mbps)
}

#[test]
fn the_model_code_reproduces_the_reference_table() {
    // reference 9.1, "ns-3 variant" rows, unlimited retries.
    let table_11 = [6.193, 6.504, 6.383, 6.027, 5.578, 4.909];
    let table_1 = [0.912, 0.896, 0.842, 0.783, 0.719, 0.628];
    for (i, n) in [1, 2, 5, 10, 20, 50].into_iter().enumerate() {
        let m11 = bianchi_ns3(n, 11.0, 1500, None);
        let m1 = bianchi_ns3(n, 1.0, 1500, None);
        assert!((m11 / table_11[i] - 1.0).abs() < 0.001, "n={n}: model {m11} vs table {}", table_11[i]);
        assert!((m1 / table_1[i] - 1.0).abs() < 0.002, "n={n}: model {m1} vs table {}", table_1[i]);
    }
}

/// Bianchi with the simulator's own settings (retry limit 7 attempts, as dot11ShortRetryLimit):
/// aggregate throughput within 1.5 % of the model for n = 1 .. 50 at 11 and 1 Mb/s.
#[test]
fn bianchi_saturation_throughput_within_1_5_percent() {
    let mut worst: f64 = 0.0;
    for (rate, mbps, duration) in [("11Mbps", 11.0, "120s"), ("1Mbps", 1.0, "400s")] {
        for n in [1u32, 2, 5, 10, 20, 50] {
            let sim = saturated_uplink(n as usize, rate, "", duration);
            let model = bianchi_ns3(n, mbps, 1500, Some(7));
            let err = sim / model - 1.0;
            worst = worst.max(err.abs());
            eprintln!("bianchi {rate} n={n}: sim {sim:.4} model {model:.4} ({:+.2} %)", err * 100.0);
            assert!(
                err.abs() < 0.015,
                "{rate} n={n}: simulated {sim:.4} Mb/s, model {model:.4} ({:+.2} %)",
                err * 100.0
            );
        }
    }
    eprintln!("worst Bianchi deviation {:.2} %", worst * 100.0);
}

/// Without a retry limit the simulator meets the reference table itself (the "ns-3 variant"
/// column, computed with unlimited retries) within 1.5 %.
#[test]
fn bianchi_unlimited_retries_match_the_reference_table() {
    let table = [(5u32, 6.383), (20, 5.578), (50, 4.909)];
    for (n, reference) in table {
        let sim = saturated_uplink(n as usize, "11Mbps", "retry_limit = 255", "120s");
        let err = sim / reference - 1.0;
        assert!(err.abs() < 0.015, "n={n}: simulated {sim:.4}, table {reference} ({:+.2} %)", err * 100.0);
    }
}

/// Uplink anomaly: one 11 Mb/s and one slow station, both saturated. Both get the same
/// throughput, within 3 % of the Heusse closed form, and the slow one holds most of the air.
#[test]
fn performance_anomaly_uplink() {
    for (slow, mbps) in [("1Mbps", 1.0), ("2Mbps", 2.0), ("5.5Mbps", 5.5)] {
        let r = run(&scenario(
            &[("fast", "11Mbps"), ("slow", slow)],
            &[("fast", "server"), ("slow", "server")],
            "",
            "200s",
        ));
        let x = heusse_per_host(&[11.0, mbps], 1500);
        let alone = bianchi_ns3(1, 11.0, 1500, None);
        for s in &r.stations {
            let got = ip_mbps(s.goodput_mbps);
            eprintln!(
                "anomaly up 11+{slow}: {} {got:.4} vs Heusse {x:.4} ({:+.2} %), airtime {:.3}",
                s.name,
                (got / x - 1.0) * 100.0,
                s.airtime_share
            );
            assert!((got / x - 1.0).abs() < 0.03, "11+{slow}: {} gets {got:.4}, Heusse {x:.4}", s.name);
        }
        let (f, sl) = (&r.stations[0], &r.stations[1]);
        assert!(
            (f.goodput_mbps / sl.goodput_mbps - 1.0).abs() < 0.03,
            "equal shares: {} vs {}",
            f.goodput_mbps,
            sl.goodput_mbps
        );
        // Airtime: the slow station's frames take longer in proportion to their duration.
        let expect_slow_share = txtime_us(mbps, 1536) / (txtime_us(mbps, 1536) + txtime_us(11.0, 1536));
        let measured_slow_share = sl.airtime_share / (sl.airtime_share + f.airtime_share);
        assert!(measured_slow_share > 0.5, "the slow station holds most of the air");
        assert!(
            (measured_slow_share - expect_slow_share).abs() < 0.05,
            "slow share of the stations' air {measured_slow_share:.3}, expected about {expect_slow_share:.3}"
        );
        // The fast station gets a small fraction of what it would get alone.
        assert!(ip_mbps(f.goodput_mbps) < 0.5 * alone);
    }
}

/// Downlink anomaly through a FIFO at the AP: one transmitter serving both stations in turn, so
/// each gets L / sum(T_i) (reference 9.3, round robin).
#[test]
fn performance_anomaly_downlink_fifo() {
    for (slow, mbps) in [("1Mbps", 1.0), ("2Mbps", 2.0), ("5.5Mbps", 5.5)] {
        let r = run(&scenario(
            &[("fast", "11Mbps"), ("slow", slow)],
            &[("server", "fast"), ("server", "slow")],
            "",
            "200s",
        ));
        let x = round_robin_per_station(&[11.0, mbps], 1500);
        for s in &r.stations {
            let got = ip_mbps(s.goodput_mbps);
            eprintln!(
                "anomaly down 11+{slow}: {} {got:.4} vs RR {x:.4} ({:+.2} %), airtime {:.3}",
                s.name,
                (got / x - 1.0) * 100.0,
                s.airtime_share
            );
            assert!((got / x - 1.0).abs() < 0.03, "11+{slow}: {} gets {got:.4}, expected {x:.4}", s.name);
        }
        assert!(r.stations[1].airtime_share > r.stations[0].airtime_share);
        // The AP's queue overflows: the drops are counted as queue drops, and nothing vanishes.
        let c = &r.summary.conservation;
        assert!(c.dropped_queue > 0);
        assert_eq!(c.offered, c.delivered + c.dropped_queue + c.dropped_retry + c.in_flight);
    }
}
