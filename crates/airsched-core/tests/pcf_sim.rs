//! PCF in the simulation (docs/model-pcf.md): contention-free periods against the frame-timing
//! arithmetic of reference next-capabilities.md section 4.3 (802.11b, long preamble, control
//! frames at 2 Mb/s, data at 11 Mb/s) and against `wifi::pcf`'s timing model.

use airsched_core::parse_scenario_with;
use airsched_core::{run_scenario, Nanos, RunResults};
use airsched_core::{CfParams, PcfTiming, PointCoordinator};
use airsched_core::{DsssRate, Preamble};

fn scenario(text: &str, sets: &[&str]) -> airsched_core::Scenario {
    parse_scenario_with(text, "test.toml", sets).unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str, sets: &[&str]) -> RunResults {
    run_scenario(&scenario(text, sets)).expect("packet conservation holds")
}

/// Two 11 Mb/s stations, PCF with CFPs of at most 50 TU every beacon (100 TU); UDP of
/// 1472-byte payloads (1500-byte IP packets, 1536-byte MPDUs). Flows are added per test.
const CELL: &str = r#"
[run]
duration = "5s"
warmup = "1s"
seed = 5

[cell]
pcf = true
cfp_max_duration = 50

[[station]]
name = "sta1"
rate = "11Mbps"

[[station]]
name = "sta2"
rate = "11Mbps"
"#;

fn flow(name: &str, src: &str, dst: &str, rate: &str) -> String {
    format!("\n[[flow]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"{rate}\"\nsize = 1472\n")
}

// Reference 4.3, hand-computed (µs): the beacon (65 + 8 bytes of CF Parameter Set at 1 Mb/s)
// 192 + 584; CF-Poll / Null 28 bytes at 2 Mb/s 192 + 112; a 1536-byte MPDU at 11 Mb/s
// 192 + ceil(12288 / 11); CF-End 20 bytes at 2 Mb/s 192 + 80; SIFS 10.
const BEACON: u64 = 776;
const POLL: u64 = 304;
const DATA: u64 = 1310;
const CF_END: u64 = 272;
const SIFS: u64 = 10;

/// A CFP on a perfect channel lasts its beacon, SIFS, one exchange per poll (the PC's frame,
/// SIFS, the answer, SIFS: a CF-Poll or Data+CF-Poll, a Null or Data), and the CF-End.
fn expected_cfp_us(polls: u64, data_frames: u64) -> u64 {
    BEACON + SIFS + polls * (POLL + SIFS + POLL + SIFS) + data_frames * (DATA - POLL) + CF_END
}

fn check_durations(r: &RunResults) {
    assert!(r.cfp.len() >= 35, "about 39 CFPs in 4 s: {}", r.cfp.len());
    for c in r.cfp.iter().filter(|c| c.ended != "run") {
        let want = expected_cfp_us(c.polls, c.data_down + c.data_up);
        assert_eq!((c.duration_ms * 1000.0).round() as u64, want, "{c:?}");
        // It starts at its TBTT, or after the busy period in progress then (at most one DCF
        // exchange: DIFS + 31 slots + 1310 + SIFS + 248, plus PIFS).
        let late_us = (c.start_s - c.tbtt_s) * 1e6;
        assert!((-1e-3..=50.0 + 620.0 + 1310.0 + 10.0 + 248.0 + 30.0).contains(&late_us), "{c:?}");
        // And it ends by TBTT + CFPMaxDuration (50 TU).
        assert!(c.start_s + c.duration_ms / 1e3 <= c.tbtt_s + 0.0512 + 1e-9, "{c:?}");
    }
}

/// Uplink only: every poll carries a 1500-byte packet (1634 µs, reference 4.3's poll cycle);
/// each CFP holds as many as fit before its end: the same count and end as the timing model's
/// `PointCoordinator::run_cfp` for that TBTT and start.
#[test]
fn saturated_uplink_cfps_hold_the_exchanges_the_timing_model_fits() {
    let text = format!("{CELL}{}", flow("up", "sta1", "server", "saturate"));
    let r = run(&text, &[]);
    check_durations(&r);
    let timing = PcfTiming { preamble: Preamble::Long, ctl_rate: DsssRate::R2 };
    let params = CfParams {
        beacon_interval: Nanos::from_us(102_400),
        dtim_period: 1,
        cfp_period: 1,
        cfp_max_duration: Nanos::from_us(50 * 1024),
    };
    let mut pc = PointCoordinator::new(vec![0, 1]);
    let mut out = Vec::new();
    let mut late = 0;
    for c in r.cfp.iter().filter(|c| c.ended != "run") {
        let tbtt = Nanos((c.tbtt_s * 1e9).round() as u64);
        let start = Nanos((c.start_s * 1e9).round() as u64);
        late += (start > tbtt) as u32;
        let end = pc.run_cfp(
            &params,
            &timing,
            DsssRate::R11,
            Nanos::from_us(BEACON),
            tbtt,
            start,
            |s, down| (s == 0 && !down).then_some(1536),
            &mut out,
        );
        assert_eq!(c.polls, out.len() as u64, "{c:?}");
        assert_eq!(c.data_up, out.iter().filter(|x| x.up.is_some()).count() as u64, "{c:?}");
        assert_eq!(c.ended, "full");
        assert_eq!(((end - start).0 as f64 / 1e3).round(), (c.duration_ms * 1000.0).round(), "{c:?}");
    }
    // From the TBTT, sta1's 1634 µs and sta2's 628 µs in turn: 786 + 22 x 1634 + 22 x 628
    // + 272 = 50822 <= 51200 (a 23rd of sta1 would end at 52456).
    assert!(r.cfp.iter().any(|c| c.polls == 44 && c.data_up == 22 && (c.duration_ms - 50.822).abs() < 1e-9));
    // The station contends in the contention periods, where a CFP's TBTT often finds its
    // DCF exchange on the air: those CFPs are foreshortened.
    assert!(late > 0, "some CFPs start late");
    let p = &r.polls[0];
    assert_eq!((p.polls, p.nulls, p.unanswered), (p.data_up, 0, 0));
    let p2 = &r.polls[1];
    assert_eq!((p2.nulls, p2.data_up), (p2.polls, 0));
    // The rest of the station's frames went by DCF in the contention period.
    let frames = r.stations[0].tx_frames;
    assert!(frames > p.data_up + 1000, "{frames} frames, {} in CFPs", p.data_up);
}

/// Downlink only, to two stations: the AP's head-of-line frame goes as Data+CF-Poll when its
/// station's turn comes; the other station is polled with a CF-Poll and answers Null.
#[test]
fn downlink_goes_as_data_plus_cf_poll_and_idle_stations_answer_null() {
    let text =
        format!("{CELL}{}{}", flow("d1", "server", "sta1", "saturate"), flow("d2", "server", "sta2", "saturate"));
    let r = run(&text, &[]);
    check_durations(&r);
    let (p1, p2) = (&r.polls[0], &r.polls[1]);
    assert!(p1.data_down > 300 && p2.data_down > 300, "{p1:?} {p2:?}");
    // The AP holds one frame: when the polled station is not the one it is for, that poll
    // carries nothing down (a CF-Poll and a Null, 628 µs), so only some polls carry data.
    assert!(p1.data_down + p2.data_down < p1.polls + p2.polls);
    assert_eq!(p1.data_up + p2.data_up, 0);
    // Every poll is answered with a Null: nothing goes up.
    assert_eq!(p1.nulls, p1.polls);
    assert_eq!(p2.nulls, p2.polls);
    assert!(r.cfp.iter().all(|c| c.ended != "idle"), "the AP always has a frame waiting");
}

/// Traffic both ways with one station: Data+CF-Poll answered by Data+CF-Ack (2640 µs).
#[test]
fn a_station_with_traffic_both_ways_sends_and_receives_in_one_exchange() {
    let text =
        format!("{CELL}{}{}", flow("d1", "server", "sta1", "saturate"), flow("u1", "sta1", "server", "saturate"));
    let r = run(&text, &[]);
    check_durations(&r);
    let p2 = &r.polls[1];
    assert_eq!((p2.nulls, p2.data_down, p2.data_up), (p2.polls, 0, 0));
    // Started at its TBTT: sta1's 2640 µs and sta2's Null (628) in turn, 15 pairs (786 +
    // 15 x 3268 = 49806); then a 16th of sta1 would end past 51200 - 272, a Null of sta2
    // fits (50706): 30 or 31 polls, depending on who is polled first.
    let at_tbtt: Vec<_> = r.cfp.iter().filter(|c| c.ended == "full" && c.start_s == c.tbtt_s).collect();
    assert!(!at_tbtt.is_empty());
    for c in at_tbtt {
        assert_eq!((c.data_down, c.data_up), (15, 15), "{c:?}");
        assert!(c.polls == 30 || c.polls == 31, "{c:?}");
    }
}

/// Light traffic: the PC ends a CFP early, after a whole round of polls with nothing.
#[test]
fn a_round_without_traffic_ends_the_cfp_early() {
    let text = format!("{CELL}{}", flow("u1", "sta1", "server", "200kbit"));
    let r = run(&text, &[]);
    check_durations(&r);
    assert!(r.cfp.iter().filter(|c| c.ended == "idle").count() > 30);
    // Two stations, nothing waiting: 786 + 2 x 628 + 272 = 2314 µs.
    assert!(r.cfp.iter().any(|c| c.polls == 2 && c.data_up == 0 && (c.duration_ms - 2.314).abs() < 1e-9));
}

/// A station that is not CF-Pollable gets its downlink as Data + ACK in the CFP, is never
/// polled, and sends only in the contention period.
#[test]
fn a_station_off_the_polling_list_is_sent_data_but_never_polled() {
    let text = format!("{CELL}{}{}", flow("d2", "server", "sta2", "saturate"), flow("u2", "sta2", "server", "1mbit"));
    let r = run(&text, &["station[1].cf_pollable=false"]);
    let p2 = &r.polls[1];
    assert_eq!(p2.cf_pollable, 0);
    assert_eq!((p2.polls, p2.data_up, p2.nulls), (0, 0, 0));
    assert!(p2.data_down > 500, "{p2:?}");
    let u2 = r.flows.iter().find(|f| f.name == "u2").unwrap();
    assert!(
        (u2.goodput_mbps - 1.0 * 1472.0 / 1500.0).abs() < 0.05,
        "its uplink still goes by DCF: {}",
        u2.goodput_mbps
    );
    // Data (1310) + SIFS + ACK at 2 Mb/s (248) + SIFS per frame; sta1 has nothing: one Null
    // round (628) ends nothing while the AP still has frames for sta2.
    for c in r.cfp.iter().filter(|c| c.ended == "full" && c.start_s == c.tbtt_s) {
        let want = BEACON + SIFS + c.data_down * (DATA + SIFS + 248 + SIFS) + c.polls * 628 + CF_END;
        assert_eq!((c.duration_ms * 1000.0).round() as u64, want, "{c:?}");
    }
}

/// A CFP longer than the beacon interval (DTIM every 2 beacons, a CFP every DTIM): the TBTT
/// inside it gets its beacon from the PC, and DCF still runs in between.
#[test]
fn a_cfp_spanning_a_tbtt_carries_that_beacon() {
    let text = format!("{CELL}{}", flow("up", "sta1", "server", "saturate"));
    let r = run(&text, &["cell.dtim_period=2", "cell.cfp_max_duration=150"]);
    assert!(r.cfp.len() >= 15);
    for c in r.cfp.iter().filter(|c| c.ended == "full") {
        assert_eq!(c.beacons, 1, "{c:?}");
        assert_eq!(
            (c.duration_ms * 1000.0).round() as u64,
            expected_cfp_us(c.polls, c.data_up) + BEACON + SIFS,
            "{c:?}"
        );
        // Every other TBTT starts one: 204.8 ms apart.
    }
    let starts: Vec<f64> = r.cfp.iter().map(|c| c.tbtt_s).collect();
    assert!(starts.windows(2).all(|w| ((w[1] - w[0]) - 0.2048).abs() < 1e-9), "{starts:?}");
}

/// On a lossy channel polls go unanswered, answers are lost, CF-Acks are missed and frames
/// are retried; every packet is still accounted for (the run checks conservation), and the
/// same seed gives the same run.
#[test]
fn losses_in_cfps_retry_and_conserve_packets_deterministically() {
    let text =
        format!("{CELL}{}{}", flow("d1", "server", "sta1", "saturate"), flow("u1", "sta1", "server", "saturate"));
    let sets = ["station[0].snr=\"6dB\""];
    let a = run(&text, &sets);
    let b = run(&text, &sets);
    assert_eq!(format!("{:?}", a.without_wall_time()), format!("{:?}", b.without_wall_time()));
    let p = &a.polls[0];
    assert!(p.unanswered > 20, "{p:?}");
    assert!(a.stations[0].retries > 50, "{:?}", a.stations[0]);
    let clean = run(&text, &[]);
    assert!(a.flows[0].goodput_mbps < clean.flows[0].goodput_mbps);
}

/// scenarios/pcf-anomaly.toml: the anomaly under PCF. Polls are frame-fair: over the CFPs
/// each station sends one frame per round, so their frame counts match and the slow station
/// holds most of the air; both get about the same UDP goodput, as under DCF.
#[test]
fn the_anomaly_persists_under_pcf() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/pcf-anomaly.toml")).unwrap();
    let r = run(&text, &["run.duration=\"5s\""]);
    let (f, s) = (&r.polls[0], &r.polls[1]);
    assert!(f.data_up.abs_diff(s.data_up) <= r.cfp.len() as u64, "one frame each per round: {f:?} {s:?}");
    let (gf, gs) = (r.flows[0].goodput_mbps, r.flows[1].goodput_mbps);
    assert!((gf / gs - 1.0).abs() < 0.1, "fast {gf} slow {gs}");
    assert!(r.stations[1].airtime_s > 5.0 * r.stations[0].airtime_s);
    // A round of the CFP: 1634 µs for the fast station, 192 + ceil(12288 / 1) + 10 + 304 +
    // 10 = 12804 µs for the slow one (CF-Poll at 2 Mb/s, data at 1 Mb/s).
    for c in r.cfp.iter().filter(|c| c.start_s == c.tbtt_s && c.ended == "full") {
        let rounds = c.data_up / 2;
        let d_us = (c.duration_ms * 1000.0).round() as u64;
        let base = BEACON + SIFS + CF_END;
        assert!(d_us >= base + rounds * (1634 + 12804) && d_us <= base + (rounds + 1) * (1634 + 12804), "{c:?}");
    }
}
