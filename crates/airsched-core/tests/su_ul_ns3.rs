//! Single-user uplink contention (issue 24): n saturated 802.11ax stations sending A-MPDUs to
//! the AP, against Bianchi's saturation model of DCF and against ns-3 3.44.
//!
//! The cell is bench/ns3/ofdma_ul.cc's without the multi-user scheduler (`--su=1`): 80 MHz, HE
//! MCS 7, one stream, 1.6 us guard interval, AC_BE, A-MPDUs up to aPPDUMaxTime, 4, 9 and 18
//! stations each sending 1472-byte UDP datagrams, saturating (700/N Mb/s) or at half load
//! (120/N Mb/s). `bench/ns3/run_ofdma.sh su` wrote bench/ns3/su_ul.csv and
//! su_ul_contention.txt with ns-3 made like for like with airsched (docs/model-ofdma.md,
//! "Single-user uplink against Bianchi and ns-3"): single-user data at the configured 1.6 us
//! (ns-3 3.44 picks 3.2 us from the peer's HE Capabilities) and the A-MPDU sent again after a
//! missed BlockAck (ns-3's default sends a BlockAckReq first, whose BlockAck resets CW). The
//! stations' driver FIFO holds 500 frames (`driver_queue_limit`; ns-3's WifiMacQueue holds
//! 500), so their A-MPDUs reach aPPDUMaxTime (149 MPDUs) as ns-3's do.
//!
//! Channel access follows EDCA as ns-3 does (docs/model-ofdma.md, "Why the half-load delay was
//! too long"): `[cell] backoff_countdown = "slot-boundary"` (the contenders that do not
//! transmit also count the slot boundary at which another starts, IEEE 802.11-2020 10.23.2.5)
//! and `collision_ifs = "aifs"` (ns-3's bystanders detect no preamble under a collision and
//! defer AIFS, not EIFS), and the standard's CW rule at the retry limit,
//! `cw_at_retry_limit = "reset"` (IEEE 802.11-2020 10.23.2.2: the `retry_limit`-th failed A-MPDU
//! in a row resets CW to CWmin; ns-3 3.44 drops the A-MPDU and resets CW there) with
//! `retry_limit = 8`: ns-3's `FrameRetryLimit` of 7 counts retries, so its reset comes after
//! the 8th failed attempt (every one of the resets in its 18-station trace).
//!
//! Asserted: the saturated goodput and collision probability against Bianchi's fixed point
//! (computed here with the cell's parameters; bench/ns3/bianchi_ul.py prints the same), the
//! aggregate goodput at both loads against ns-3, and the half-load mean delay over stations and
//! run numbers against ns-3's over its run numbers (bench/ns3/ul_half_seeds.csv): a single
//! 2-s run cannot pin it, its stations' delays spread 3-10x. `cargo test --release --test
//! su_ul_ns3 -- --nocapture` prints the tables of docs/model-ofdma.md.

use crate::common;

use airsched_core::{parse_scenario, RunResults, Simulation};
use common::ns3::Case;

const CSV: &str = include_str!("../../../bench/ns3/su_ul.csv");
const CONTENTION: &str = include_str!("../../../bench/ns3/su_ul_contention.txt");
const SEEDS_CSV: &str = include_str!("../../../bench/ns3/ul_half_seeds.csv");
/// EDCA's countdown, ns-3's deferral after a collision and its CW reset at the retry limit,
/// after 8 failed attempts (the module documentation).
const LIKE_NS3: &str =
    "backoff_countdown = \"slot-boundary\"\ncollision_ifs = \"aifs\"\ncw_at_retry_limit = \"reset\"\nretry_limit = 8\n";
/// airsched's run numbers per half-load case (each run is about 0.1 s).
const RUNS: u64 = 12;

fn cases() -> Vec<Case> {
    let mut out = common::ns3::cases(CSV);
    // "# n=N load=L" then "contention ... p_collision=P ...".
    let mut at = None;
    for l in CONTENTION.lines() {
        if let Some(h) = l.strip_prefix("# n=") {
            let (n, load) = h.split_once(" load=").unwrap();
            at = out.iter().position(|c| c.n.to_string() == n && c.load == load);
        } else if let Some(p) = l.split(" p_collision=").nth(1) {
            out[at.unwrap()].p_collision = p.split(' ').next().unwrap().parse().unwrap();
        }
    }
    out
}

/// The ns-3 program's cell in airsched's keys (as tests/ofdma_ul_ns3.rs, without OFDMA), each
/// station's driver FIFO at 500 frames; `cell` extra lines of `[cell]`, `seed` the run number.
fn scenario(n: u32, rate_mbps: f64, queue_limit: u32, aggregation: &str, cell: &str, seed: u64) -> String {
    let station = format!("driver_queue_limit = {queue_limit}\naggregation = \"{aggregation}\"\n");
    common::ns3::cell(n, rate_mbps, "1.6us", "", &station, true)
        .replacen("[cell]\n", &format!("[cell]\n{cell}"), 1)
        .replacen("seed = 1\n", &format!("seed = {seed}\n"), 1)
}

fn run_with(n: u32, rate_mbps: f64, queue_limit: u32, aggregation: &str, cell: &str, seed: u64) -> RunResults {
    let text = scenario(n, rate_mbps, queue_limit, aggregation, cell, seed);
    let scn = parse_scenario(&text, "su-ul-ns3.toml").unwrap();
    Simulation::new(&scn).unwrap().finish().unwrap()
}

/// The like-for-like cell, run number 1.
fn run(n: u32, rate_mbps: f64, queue_limit: u32, aggregation: &str) -> RunResults {
    run_with(n, rate_mbps, queue_limit, aggregation, LIKE_NS3, 1)
}

/// The mean delay over stations of each of `RUNS` runs, and every station's delay.
fn delays_over_runs(n: u32, rate_mbps: f64, cell: &str) -> (Vec<f64>, Vec<f64>) {
    let (mut means, mut all) = (Vec::new(), Vec::new());
    for seed in 1..=RUNS {
        let r = run_with(n, rate_mbps, 500, "at-access", cell, seed);
        let d: Vec<f64> = r.flows.iter().map(|f| f.delay_mean_ms).collect();
        means.push(d.iter().sum::<f64>() / d.len() as f64);
        all.extend(d);
    }
    (means, all)
}

/// min / median / max of `v`.
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// Collisions per PPDU attempt, and the mean MPDUs per attempt, over the stations.
fn contention(r: &RunResults) -> (f64, f64) {
    let attempts: u64 = r.stations.iter().map(|s| s.tx_attempts).sum();
    let collisions: u64 = r.stations.iter().map(|s| s.collisions).sum();
    let up = r.aggregates.iter().filter(|a| a.direction == "up");
    let (count, mpdus) = up.fold((0u64, 0u64), |(c, m), a| (c + a.count, m + a.count * a.mpdus as u64));
    (collisions as f64 / attempts as f64, mpdus as f64 / count as f64)
}

/// Bianchi's model (IEEE JSAC 18(3), 2000) with AIFS for DIFS and a retry limit of 7 attempts:
/// the collision probability p and the saturation goodput (Mb/s) of `n` stations sending
/// `mpdus` 1538-byte MPDUs per A-MPDU. Stage i draws from CW_i + 1 = min(16 * 2^i, 1024)
/// slots; tau = sum p^i / sum p^i (W_i + 1) / 2 and p = 1 - (1 - tau)^(n - 1). A success costs
/// PPDU + SIFS + BlockAck (32 us) + AIFS (43 us), a collision PPDU + EIFS (SIFS + 44 us + AIFS),
/// an idle slot 9 us; the HE SU PPDU at HE MCS 7, 80 MHz, 1.6 us GI: 44 us of preamble and
/// 14.4-us symbols of 4900 bits.
fn bianchi(n: u32, mpdus: u32) -> (f64, f64) {
    let w = |i: i32| (16.0 * 2f64.powi(i)).min(1024.0);
    let tau_of = |p: f64| {
        let (a, b) = (0..7).fold((0.0, 0.0), |(a, b), i| (a + p.powi(i), b + p.powi(i) * (w(i) + 1.0) / 2.0));
        a / b
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..200 {
        let p = (lo + hi) / 2.0;
        if 1.0 - (1.0 - tau_of(p)).powi(n as i32 - 1) > p {
            lo = p;
        } else {
            hi = p;
        }
    }
    let p = (lo + hi) / 2.0;
    let tau = tau_of(p);
    let bits = (16 + 8 * (mpdus as u64 * 1544 - 2) + 6) as f64;
    let ppdu = 44.0 + (bits / 4900.0).ceil() * 14.4;
    let (p_idle, p_succ) = ((1.0 - tau).powi(n as i32), n as f64 * tau * (1.0 - tau).powi(n as i32 - 1));
    let p_coll = 1.0 - p_idle - p_succ;
    let slot = p_idle * 9.0 + p_succ * (ppdu + 16.0 + 32.0 + 43.0) + p_coll * (ppdu + 16.0 + 44.0 + 43.0);
    (p, p_succ * mpdus as f64 * 1472.0 * 8.0 / slot)
}

#[test]
fn su_uplink_against_bianchi_and_ns3() {
    let mut failed = Vec::new();
    println!("| stations | load | ns-3 Mb/s | airsched Mb/s | diff | Bianchi Mb/s | airsched vs Bianchi | collision probability ns-3 / airsched / Bianchi | MPDUs per attempt | ns-3 delay to PPDU end, ms | airsched | largest per-station delay diff |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in cases() {
        let r = run(c.n, c.rate_mbps, 500, "at-access");
        let total: f64 = r.flows.iter().map(|f| f.goodput_mbps).sum();
        let ns3_total: f64 = c.goodput.iter().sum();
        let diff = total / ns3_total - 1.0;
        let (p, mpdus) = contention(&r);
        let saturated = c.load == "saturated";
        let (bp, bgood) = bianchi(c.n, 149);
        let delay: Vec<f64> = r.flows.iter().map(|f| f.delay_mean_ms).collect();
        let worst = c.delay_ms.iter().zip(&delay).map(|(a, b)| (b / a - 1.0).abs()).fold(0.0, f64::max);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        if diff.abs() > 0.05 {
            failed.push(format!("{} stations {}: goodput {total:.1} against ns-3's {ns3_total:.1}", c.n, c.load));
        }
        if saturated {
            // Bianchi models DCF: its countdown (airsched's default) against the fixed point,
            // EDCA's (the like-for-like cell) against ns-3.
            let dcf = run_with(c.n, c.rate_mbps, 500, "at-access", "", 1);
            let dcf_total: f64 = dcf.flows.iter().map(|f| f.goodput_mbps).sum();
            let (dcf_p, _) = contention(&dcf);
            if (dcf_total / bgood - 1.0).abs() > 0.03 {
                failed.push(format!("{} stations: goodput {dcf_total:.1} against Bianchi's {bgood:.1}", c.n));
            }
            if (dcf_p - bp).abs() > 0.03 || (p - c.p_collision).abs() > 0.03 {
                failed.push(format!(
                    "{} stations: collision probability {dcf_p:.3} against Bianchi's {bp:.3}, {p:.3} against ns-3's {:.3}",
                    c.n, c.p_collision
                ));
            }
            println!("(DCF countdown and EIFS: {dcf_total:.1} Mb/s, collision probability {dcf_p:.3})");
            assert!((mpdus - 149.0).abs() < 0.5, "{} stations: {mpdus:.1} MPDUs per A-MPDU, not 149", c.n);
        } else {
            // Not within 5 % (docs/model-ofdma.md): printed. Forming the A-MPDU at access
            // brings the mean delay closer to ns-3's than the driver's prebuilt aggregates do.
            let driver = run(c.n, c.rate_mbps, 500, "driver");
            let driver_delay = mean(&driver.flows.iter().map(|f| f.delay_mean_ms).collect::<Vec<_>>());
            if (mean(&delay) - mean(&c.delay_ms)).abs() >= (driver_delay - mean(&c.delay_ms)).abs() {
                failed.push(format!(
                    "{} stations half load: at-access delay {:.2} ms is no closer to ns-3's {:.2} than the driver's {driver_delay:.2}",
                    c.n,
                    mean(&delay),
                    mean(&c.delay_ms)
                ));
            }
            println!("(driver-built aggregates: mean delay {driver_delay:.2} ms)");
        }
        println!(
            "| {} | {} | {ns3_total:.1} | {total:.1} | {:+.2} % | {} | {} | {:.3} / {p:.3} / {} | {mpdus:.1} | {:.2} | {:.2} | {:.1} % |",
            c.n,
            c.load,
            100.0 * diff,
            if saturated { format!("{bgood:.1}") } else { "-".into() },
            if saturated { format!("{:+.2} %", 100.0 * (total / bgood - 1.0)) } else { "-".into() },
            c.p_collision,
            if saturated { format!("{bp:.3}") } else { "-".into() },
            mean(&c.delay_ms),
            mean(&delay),
            100.0 * worst,
        );
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// The half-load mean delay (to the end of the PPDU that carried each packet) over stations and
/// run numbers, against ns-3's over its run numbers (bench/ns3/ul_half_seeds.csv): with 4 and 9
/// stations within 5 %, or within twice the standard error of the difference where the runs
/// cannot resolve 5 %; the cell with DCF's countdown, EIFS after collisions and CW doubling
/// past the retry limit (airsched's defaults) is outside that bound, so the check tells the
/// two apart. With 18 stations the CW reset at the retry limit (`cw_at_retry_limit = "reset"`)
/// is what brings the delay within the bound (before it: +24 %, docs/model-ofdma.md).
#[test]
fn su_half_load_delay_over_runs_against_ns3() {
    let mut failed = Vec::new();
    println!("| stations | ns-3 runs | ns-3 mean delay ms | airsched ({RUNS} runs) | diff | bound | with DCF countdown and EIFS | per-station min / median / max, ns-3 | airsched |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in [4u32, 9, 18] {
        let rate = 120.0 / n as f64;
        let ns3 = common::ns3::seed_delays(SEEDS_CSV, "su", n);
        let ns3_all: Vec<f64> = ns3.concat();
        let (m_n, se_n) = common::ns3::mean_se(&common::ns3::run_means(&ns3));
        let (means, all) = delays_over_runs(n, rate, LIKE_NS3);
        let (m_a, se_a) = common::ns3::mean_se(&means);
        let (old, _) = delays_over_runs(n, rate, "");
        let (m_o, _) = common::ns3::mean_se(&old);
        let bound = common::ns3::bound((m_a, se_a), (m_n, se_n));
        let (diff, diff_old) = (m_a / m_n - 1.0, m_o / m_n - 1.0);
        if diff.abs() > bound {
            failed.push(format!("{n} stations: {m_a:.2} ms against ns-3's {m_n:.2} (bound {:.1} %)", 100.0 * bound));
        }
        if diff_old.abs() <= bound {
            failed.push(format!("{n} stations: DCF's countdown gives {m_o:.2} ms, within the bound too"));
        }
        let (a, b, c) = spread(&ns3_all);
        let (x, y, z) = spread(&all);
        println!(
            "| {n} | {} | {m_n:.2} ± {se_n:.2} | {m_a:.2} ± {se_a:.2} | {:+.1} % | {:.1} % | {m_o:.2} ({:+.0} %) | {a:.1} / {b:.1} / {c:.1} | {x:.1} / {y:.1} / {z:.1} |",
            ns3.len(),
            100.0 * diff,
            100.0 * bound,
            100.0 * diff_old,
        );
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// The two keys are 802.11n/ac/ax keys; a bad word or an 802.11b cell is a one-line error.
#[test]
fn the_like_for_like_keys_are_one_line_errors_when_bad() {
    let err = |text: &str| match parse_scenario(text, "t.toml") {
        Ok(_) => panic!("parsed: {text}"),
        Err(e) => e.0.into_iter().map(|e| format!("{}: {}", e.key, e.message)).collect::<Vec<_>>(),
    };
    let e = err("[cell]\nstandard = \"802.11ax\"\nbackoff_countdown = \"slot\"\n");
    assert!(e.len() == 1 && e[0].starts_with("cell.backoff_countdown: ") && e[0].contains("slot-boundary"), "{e:?}");
    let e = err("[cell]\nstandard = \"802.11ax\"\ncollision_ifs = \"difs\"\n");
    assert!(e.len() == 1 && e[0].starts_with("cell.collision_ifs: ") && e[0].contains("aifs"), "{e:?}");
    let e = err("[cell]\nstandard = \"802.11b\"\ncollision_ifs = \"aifs\"\n");
    assert!(e.len() == 1 && e[0].starts_with("cell.collision_ifs: ") && e[0].contains("802.11n"), "{e:?}");
}

/// The default station (ath9k's 123-frame driver FIFO) sends smaller A-MPDUs: its two
/// hardware-queue aggregates share the FIFO (k and 123 - k MPDUs, 61.5 on average), which is
/// part of why the earlier comparison (stations at the default) was off; the goodput then
/// follows Bianchi's model at that size only roughly (the collided PPDU is the longer of two).
#[test]
fn the_default_station_fifo_halves_the_uplink_aggregates() {
    let r = run(4, 175.0, 123, "driver");
    let (p, mpdus) = contention(&r);
    assert!((mpdus - 61.5).abs() < 1.0, "{mpdus:.1} MPDUs per A-MPDU");
    let (bp, _) = bianchi(4, 61);
    assert!((p - bp).abs() < 0.03, "collision probability {p:.3} against Bianchi's {bp:.3}");
    for a in r.aggregates.iter().filter(|a| a.direction == "up") {
        assert!(a.mpdus < 123, "an aggregate of {} MPDUs", a.mpdus);
    }
}

/// Bianchi's fixed point as bench/ns3/bianchi_ul.py prints it (GI 1.6 us, 149 MPDUs).
#[test]
fn bianchi_reference_values() {
    let want = [(1, 0.0, 312.4), (4, 0.232, 274.7), (9, 0.372, 247.0), (18, 0.480, 223.0)];
    for (n, p, s) in want {
        let (bp, bs) = bianchi(n, 149);
        assert!((bp - p).abs() < 0.0005 && (bs - s).abs() < 0.05, "n={n}: p {bp:.4}, {bs:.2} Mb/s");
    }
}

/// Diagnostic (ignored): the uplink aggregate sizes and delays of one half-load cell.
#[test]
#[ignore]
fn probe_half_load() {
    let n: u32 = std::env::var("PROBE_N").map_or(4, |v| v.parse().unwrap());
    let load: f64 = std::env::var("PROBE_LOAD").map_or(120.0, |v| v.parse().unwrap());
    let agg = std::env::var("AGG").unwrap_or("at-access".into());
    let r = run(n, load / n as f64, 500, &agg);
    let mut h: Vec<(u32, u64)> = Vec::new();
    for a in r.aggregates.iter().filter(|a| a.direction == "up") {
        match h.iter_mut().find(|x| x.0 == a.mpdus) {
            Some(x) => x.1 += a.count,
            None => h.push((a.mpdus, a.count)),
        }
    }
    h.sort();
    println!("aggregates {h:?}");
    for f in &r.flows {
        println!("{} {:.2} Mb/s delay {:.2} ms", f.name, f.goodput_mbps, f.delay_mean_ms);
    }
    for s in &r.stations {
        println!("{} queue delay {:.2} ms", s.name, s.queue_delay_mean_ms);
    }
}
