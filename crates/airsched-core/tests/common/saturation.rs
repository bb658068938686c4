//! One station saturated by the AP (802.11n/ac/ax) against the analytic EDCA cycle of the
//! standard's PPDU arithmetic: the run and the cycle, shared by the VHT/HE and A-MSDU tests.

use airsched_core::{parse_scenario, run_scenario, RunResults};

/// One station, downlink UDP saturating the AP with 1472-byte payloads (1500-byte datagrams,
/// 1538-byte MPDUs), FQ-MAC so that the driver FIFO does not limit the aggregates; `cell`, `ap`
/// and `station` are extra lines of their tables.
pub fn saturated_run(cell: &str, ap: &str, station: &str) -> RunResults {
    let text = format!(
        "[run]\nduration = \"3s\"\nwarmup = \"1s\"\nseed = 3\n[cell]\n{cell}\n[wired]\nrate = \"10Gbit\"\n\
         [ap]\nmac_queue = \"fq-mac\"\n{ap}\n[[station]]\nname = \"a\"\n{station}\n\
         [[flow]]\nname = \"down\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"saturate\"\nsize = 1472\n"
    );
    let scn = parse_scenario(&text, "sat.toml").unwrap();
    run_scenario(&scn).unwrap()
}

/// Goodput (Mb/s) of back-to-back A-MPDUs carrying `msdus` 1472-byte payloads in a PPDU of
/// `ppdu_us`, each after AIFS(BE) 43 us and the mean backoff 7.5 x 9 us, answered SIFS (16 us)
/// later by a BlockAck of `ba_us`.
pub fn analytic(msdus: u32, ppdu_us: f64, ba_us: f64) -> f64 {
    let cycle = 43.0 + 67.5 + ppdu_us + 16.0 + ba_us;
    msdus as f64 * 1472.0 * 8.0 / cycle
}

pub fn assert_close(sim: f64, expect: f64, tol: f64) {
    assert!((sim / expect - 1.0).abs() <= tol, "simulated {sim:.2} Mb/s, analytic {expect:.2} Mb/s");
}
