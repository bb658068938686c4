//! 802.11n cells in the simulator: A-MPDU timing against reference 9.4, the four queueing
//! configurations of Høiland-Jørgensen et al., airtime fairness and AQL.

mod common;

use airsched_core::phy::ht::{ChannelWidth, GuardInterval, HtMcs};
use airsched_core::phy::ofdm::OfdmBand;
use airsched_core::scenario::{AirtimeSched, ApMacConfig, HtCellConfig, HtStationConfig, MacQueue, Standard};
use airsched_core::{parse_scenario, run_scenario, RunResults, Scenario};

/// Turn a parsed 802.11b scenario into an 802.11n one: station i at `mcs[i]`.
fn to_ht(mut scn: Scenario, mcs: &[u8], gi: GuardInterval, mac: ApMacConfig) -> Scenario {
    scn.cell.standard = Standard::Dot11n;
    scn.cell.ht = Some(HtCellConfig {
        band: OfdmBand::Ghz5,
        width: ChannelWidth::Mhz20,
        gi,
        basic_rates: airsched_core::phy::ofdm::MANDATORY_RATES.to_vec(),
        max_aggregate_time: airsched_core::phy::ht::LINUX_MAX_AGGR_TIME,
        max_aggregate_mpdus: 64,
        mpdu_retry_limit: 31,
    });
    for (st, &m) in scn.stations.iter_mut().zip(mcs) {
        st.ht = Some(HtStationConfig { mcs: HtMcs::new(m).unwrap(), airtime_weight: 256 });
    }
    scn.ap_mac = mac;
    scn
}

fn run_ht(text: &str, mcs: &[u8], gi: GuardInterval, mac: ApMacConfig) -> RunResults {
    let scn = parse_scenario(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&to_ht(scn, mcs, gi, mac)).expect("conservation holds")
}

fn fifo() -> ApMacConfig {
    ApMacConfig::default()
}

#[test]
fn single_station_mcs7_matches_reference_9_4() {
    // Reference 9.4, "<= 4 ms (ath9k-style cap)": 20 MPDUs of 1538 B, PPDU 3840 us, cycle
    // AIFS 43 + mean backoff 67.5 + PPDU + SIFS 16 + BA 32 us: 60.02 Mb/s of 1500-B datagrams.
    let text = r#"
[run]
duration = "20s"
warmup = "1s"
[cell]
beacons = false
[[station]]
name = "sta"
rate = "11Mbps"
[[flow]]
name = "down"
src = "server"
dst = "sta"
rate = "saturate"
size = 1472
"#;
    let r = run_ht(text, &[7], GuardInterval::Long, fifo());
    let cycle_us = 43.0 + 67.5 + 3840.0 + 16.0 + 32.0;
    let model = 20.0 * 1472.0 * 8.0 / cycle_us;
    let got = r.flows[0].goodput_mbps;
    println!("MCS 7 single station: {got:.3} Mb/s, model {model:.3}");
    assert!((got - model).abs() / model < 0.01, "{got} vs {model}");
}
