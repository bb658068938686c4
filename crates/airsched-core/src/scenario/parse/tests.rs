//! Parser tests: the examples, every key, defaults and formatting.

use super::*;

pub(super) const EXAMPLE: &str = r#"[run]
duration = "60s"
warmup = "1s"
seed = 1
sample_interval = "200ms"
[cell]
standard = "802.11b"
preamble = "long"
basic_rates = ["1Mbps", "2Mbps"]
[[station]]
name = "sta1"
rate = "11Mbps"
[[flow]]
name = "down1"
protocol = "udp"
src = "server"
dst = "sta1"
rate = "6Mbit"
size = 1024
"#;

fn default_cell() -> CellConfig {
    CellConfig {
        standard: Standard::Dot11b,
        preamble: Preamble::Long,
        basic_rates: vec![DsssRate::R1, DsssRate::R2],
        beacons: true,
        beacon_interval: Nanos::from_us(102_400),
        beacon_bytes: 65,
        retry_limit: 7,
        cw_min: 31,
        cw_max: 1023,
        eifs: EifsRule::Estimated,
        collision_defer: CollisionDefer::Eifs,
        rate_control: crate::mac::rate::RateControl::Fixed,
        preamble_detection_cdb: None,
        ht: None,
        channel: 1,
        pcf: None,
    }
}

fn node(q: u32) -> NodeConfig {
    NodeConfig { txqueuelen: q, ip: None, tc: None, kernel: None }
}

#[test]
fn the_example_parses() {
    let s = parse_scenario(EXAMPLE, "example.toml").unwrap();
    let want = Scenario {
        run: RunConfig {
            duration: Nanos::from_secs(60),
            warmup: Nanos::from_secs(1),
            seed: 1,
            sample_interval: Nanos::from_ms(200),
        },
        cell: default_cell(),
        wired: WiredConfig { rate_bps: 100_000_000, delay: Nanos::from_us(100) },
        ap: node(1000),
        server: node(1000),
        monitor: crate::monitor::MonitorSpec::default(),
        ap_mac: crate::wifi::ht::params::ApMacConfig::default(),
        legacy_ap: crate::wifi::legacy::LegacyAp::default(),
        stations: vec![StationConfig {
            name: "sta1".into(),
            rate: DsssRate::R11,
            rate_control: crate::mac::rate::RateControl::Fixed,
            channel: None,
            node: node(1000),
            ht: None,
            mac: None,
            cf_pollable: true,
            location: None,
        }],
        flows: vec![FlowConfig {
            name: "down1".into(),
            protocol: Protocol::Udp,
            src: Endpoint::Server,
            dst: Endpoint::Station(0),
            rate: FlowRate::Cbr { bits_per_second: 6_000_000 },
            size: 1024,
            start: Nanos::ZERO,
            stop: None,
            jitter: Nanos::ZERO,
            sport: None,
            dport: 5001,
            tos: 0,
            mark: 0,
            priority: None,
            cc: crate::tcp::CcKind::Cubic,
            bytes: None,
            sack: true,
            tcp: Default::default(),
            reply_delay: Nanos::ZERO,
        }],
        warnings: vec![],
        bluetooth: vec![],
        piconet: crate::scenario::PiconetConfig::default(),
        tc_built: Default::default(),
    };
    assert_eq!(s, want);
}

#[test]
fn one_station_and_nothing_else_is_all_defaults() {
    let s = parse_scenario(ONE_STATION, "one.toml").unwrap();
    assert_eq!(
        s.run,
        RunConfig {
            duration: Nanos::from_secs(10),
            warmup: Nanos::from_secs(1),
            seed: 1,
            sample_interval: Nanos::from_ms(200),
        }
    );
    assert_eq!(s.cell, default_cell());
    assert_eq!(s.wired, WiredConfig { rate_bps: 100_000_000, delay: Nanos(100_000) });
    assert_eq!((s.ap, s.server), (node(1000), node(1000)));
    assert!(s.stations.len() == 1 && s.flows.is_empty());
}

/// The smallest valid scenario: one 802.11b station (802.11n takes its default MCS).
const ONE_STATION: &str = "[[station]]\nname = \"s\"\nrate = \"11Mbps\"\n";
const ONE_HT_STATION: &str = "[[station]]\nname = \"s\"\n";

#[test]
fn an_empty_or_comments_only_file_is_refused() {
    for text in ["", "# nothing\n\n   # at all\n"] {
        let e = parse_scenario(text, "empty.toml").unwrap_err();
        assert_eq!(e.0.len(), 1, "{e}");
        assert_eq!((e.0[0].line, e.0[0].column, e.0[0].key.as_str()), (1, 1, "station"));
        assert!(e.0[0].message.starts_with("the scenario is empty; add at least one [[station]]"), "{e}");
    }
    let e = parse_scenario("[run]\nduration = \"5s\"\n", "f").unwrap_err();
    assert!(e.0[0].message.starts_with("the cell has no stations"), "{e}");
}

#[test]
fn every_key_can_be_set() {
    let text = r#"
[run]
duration = "2.5s"
warmup = "500ms"
seed = 18446744073709551615
sample_interval = "100ms"

[cell]
standard = "802.11b"
preamble = "short"
basic_rates = ["11Mbps", "1Mbps", "5.5Mbps"]
beacons = false
beacon_interval = "1024us"
beacon_bytes = 100
retry_limit = 4
cw_min = 15
cw_max = 255
eifs = "legacy"
collision_defer = "ack-timeout"

[wired]
rate = "1gbit"
delay = "2ms"

[ap]
txqueuelen = 50

[server]
txqueuelen = 1_000

[[station]]
name = "a.b-c_1"
rate = "1Mbps"
txqueuelen = 10

[[station]]
name = "sta2"
rate = "5.5Mbps"

[[flow]]
name = "up"
src = "a.b-c_1"
dst = "sta2"
rate = "saturate"
size = 2276
start = "0.5s"
stop = "2.5s"

[[flow]]
name = "ap-to-server"
src = "ap"
dst = "server"
rate = "12kbit"
"#;
    let s = parse_scenario(text, "all.toml").unwrap();
    assert_eq!(
        s.run,
        RunConfig {
            duration: Nanos::from_ms(2500),
            warmup: Nanos::from_ms(500),
            seed: u64::MAX,
            sample_interval: Nanos::from_ms(100),
        }
    );
    assert_eq!(
        s.cell,
        CellConfig {
            standard: Standard::Dot11b,
            preamble: Preamble::Short,
            basic_rates: vec![DsssRate::R1, DsssRate::R5_5, DsssRate::R11],
            beacons: false,
            beacon_interval: Nanos::from_us(1024),
            beacon_bytes: 100,
            retry_limit: 4,
            cw_min: 15,
            cw_max: 255,
            eifs: EifsRule::Legacy,
            collision_defer: CollisionDefer::AckTimeout,
            rate_control: crate::mac::rate::RateControl::Fixed,
            preamble_detection_cdb: None,
            ht: None,
            channel: 1,
            pcf: None,
        }
    );
    assert_eq!(s.wired, WiredConfig { rate_bps: 1_000_000_000, delay: Nanos::from_ms(2) });
    assert_eq!((s.ap.clone(), s.server.clone()), (node(50), node(1000)));
    assert_eq!(
        s.stations,
        vec![
            StationConfig {
                name: "a.b-c_1".into(),
                rate: DsssRate::R1,
                rate_control: crate::mac::rate::RateControl::Fixed,
                channel: None,
                node: node(10),
                ht: None,
                mac: None,
                cf_pollable: true,
                location: None
            },
            StationConfig {
                name: "sta2".into(),
                rate: DsssRate::R5_5,
                rate_control: crate::mac::rate::RateControl::Fixed,
                channel: None,
                node: node(1000),
                ht: None,
                mac: None,
                cf_pollable: true,
                location: None
            },
        ]
    );
    assert_eq!(
        s.flows,
        vec![
            FlowConfig {
                name: "up".into(),
                protocol: Protocol::Udp,
                src: Endpoint::Station(0),
                dst: Endpoint::Station(1),
                rate: FlowRate::Saturate,
                size: MAX_UDP_PAYLOAD,
                start: Nanos::from_ms(500),
                stop: Some(Nanos::from_ms(2500)),
                jitter: Nanos::ZERO,
                sport: None,
                dport: 5001,
                tos: 0,
                mark: 0,
                priority: None,
                cc: crate::tcp::CcKind::Cubic,
                bytes: None,
                sack: true,
                tcp: Default::default(),
                reply_delay: Nanos::ZERO,
            },
            FlowConfig {
                name: "ap-to-server".into(),
                protocol: Protocol::Udp,
                src: Endpoint::Ap,
                dst: Endpoint::Server,
                rate: FlowRate::Cbr { bits_per_second: 12_000 },
                size: 1470,
                start: Nanos::ZERO,
                stop: None,
                jitter: Nanos::ZERO,
                sport: None,
                dport: 5001,
                tos: 0,
                mark: 0,
                priority: None,
                cc: crate::tcp::CcKind::Cubic,
                bytes: None,
                sack: true,
                tcp: Default::default(),
                reply_delay: Nanos::ZERO,
            },
        ]
    );
}

/// A small 802.11n cell: two stations, a download each, one of them TCP.
pub(super) const HT_EXAMPLE: &str = r#"[run]
duration = "10s"
[cell]
standard = "802.11n"
[ap]
queueing = "airtime"
[[station]]
name = "fast"
mcs = 15
[[station]]
name = "slow"
mcs = 0
snr = 20
[[flow]]
name = "down-fast"
protocol = "tcp"
src = "server"
dst = "fast"
[[flow]]
name = "down-slow"
src = "server"
dst = "slow"
rate = "saturate"
"#;

fn mcs(i: u8) -> crate::phy::ht::HtMcs {
    crate::phy::ht::HtMcs::new(i).unwrap()
}

#[test]
fn an_80211n_scenario_parses_with_its_defaults() {
    use crate::phy::error_rate::OfdmRate;
    use crate::phy::ht::{ChannelWidth, GuardInterval};
    use crate::phy::ofdm::OfdmBand;
    use crate::wifi::ht::params::{AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue};
    let s = parse_scenario(HT_EXAMPLE, "ht.toml").unwrap();
    assert_eq!(
        s.cell,
        CellConfig {
            standard: Standard::Dot11n,
            ht: Some(HtCellConfig {
                band: OfdmBand::Ghz5,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long,
                basic_rates: vec![OfdmRate::R6, OfdmRate::R12, OfdmRate::R24],
                max_aggregate_time: Nanos::from_ms(4),
                max_aggregate_mpdus: 64,
                mpdu_retry_limit: 31,
                txop_limits: crate::mac::edca::TxopTable::Ieee2016,
                backoff_countdown: crate::mac::dcf::BackoffCountdown::SlotEnd,
                collision_ifs: crate::wifi::ifs::CollisionIfs::Eifs,
                cw_at_retry_limit: crate::mac::dcf::CwAtRetryLimit::Double,
                wide: None,
            }),
            ..default_cell()
        }
    );
    assert_eq!(
        s.ap_mac,
        ApMacConfig {
            queue: MacQueue::FqMac,
            airtime: AirtimeSched::Ath9k,
            airtime_rx: true,
            aql: false,
            fq_kernel: FqKernel::Linux4_11,
            policy: Default::default(),
            dynamic_aggregate: None,
            next: Default::default(),
            ofdma: Default::default(),
            amsdu: Default::default(),
        }
    );
    assert_eq!(s.ap.tc, None);
    let ht: Vec<_> = s.stations.iter().map(|st| st.ht).collect();
    assert_eq!(
        ht,
        vec![
            Some(HtStationConfig {
                mcs: mcs(15),
                airtime_weight: 256,
                min_rate_bps: 0,
                link: None,
                driver_queue_limit: 123,
                aggregation: Default::default()
            }),
            Some(HtStationConfig {
                mcs: mcs(0),
                airtime_weight: 256,
                min_rate_bps: 0,
                link: None,
                driver_queue_limit: 123,
                aggregation: Default::default()
            }),
        ]
    );
    // `rate` keeps its placeholder; the radio keys work as in 802.11b.
    assert_eq!(s.stations[0].rate, DsssRate::R11);
    assert_eq!(s.stations[0].rate_control, crate::mac::rate::RateControl::Fixed);
    assert!(s.stations[0].channel.is_none() && s.stations[1].channel.is_some());
    assert!(s.flows.iter().all(|f| f.sack));
    assert_eq!(s.flows[0].protocol, Protocol::Tcp);

    // A cell with nothing but the standard: every default, the AP a driver FIFO.
    let s = parse_scenario("[cell]\nstandard = \"802.11N\"\n[[station]]\nname = \"a\"\n", "f").unwrap();
    assert_eq!(s.ap_mac, ApMacConfig::default());
    assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: crate::wifi::ht::params::ATH_MAX_QDEPTH });
    assert_eq!(
        s.stations[0].ht,
        Some(HtStationConfig {
            mcs: mcs(7),
            airtime_weight: 256,
            min_rate_bps: 0,
            link: None,
            driver_queue_limit: 123,
            aggregation: Default::default()
        })
    );
    assert_eq!(s.cell.ht.unwrap().basic_rates, crate::phy::ofdm::MANDATORY_RATES.to_vec());
}

#[test]
fn every_80211n_key_can_be_set() {
    use crate::phy::error_rate::OfdmRate;
    use crate::phy::ht::{ChannelWidth, GuardInterval};
    use crate::phy::ofdm::OfdmBand;
    use crate::wifi::ht::params::{AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue};
    let text = r#"
[cell]
standard = "802.11n"
band = "2.4 ghz"
width = 40
guard_interval = "short"
basic_rates = ["24Mbps", "6", "54Mbit"]
max_aggregate_time = "5484us"
max_aggregate_mpdus = 32
mpdu_retry_limit = 10
txop_limits = "802.11-2020"
backoff_countdown = "slot-boundary"
collision_ifs = "aifs"
cw_at_retry_limit = "reset"
retry_limit = 4
beacons = false
rate_control = "fixed"

[ap]
mac_queue = "fq-mac"
airtime = "mac80211"
airtime_rx = false
aql = false
fq_kernel = "4.11"

[[station]]
name = "a"
mcs = 3
airtime_weight = 512
driver_queue_limit = 600
rate_control = "fixed"
position = "good"

[[flow]]
name = "up"
protocol = "tcp"
src = "a"
dst = "server"
sack = false
"#;
    let s = parse_scenario(text, "all-ht.toml").unwrap();
    assert_eq!(
        s.cell.ht,
        Some(HtCellConfig {
            band: OfdmBand::Ghz24ShortSlot,
            width: ChannelWidth::Mhz40,
            gi: GuardInterval::Short,
            basic_rates: vec![OfdmRate::R6, OfdmRate::R24, OfdmRate::R54],
            max_aggregate_time: crate::phy::ht::HT_MF_PPDU_MAX_TIME,
            max_aggregate_mpdus: 32,
            mpdu_retry_limit: 10,
            txop_limits: crate::mac::edca::TxopTable::Ieee2020,
            backoff_countdown: crate::mac::dcf::BackoffCountdown::SlotBoundary,
            collision_ifs: crate::wifi::ifs::CollisionIfs::Aifs,
            cw_at_retry_limit: crate::mac::dcf::CwAtRetryLimit::Reset,
            wide: None,
        })
    );
    assert_eq!((s.cell.retry_limit, s.cell.beacons), (4, false));
    assert_eq!(
        s.ap_mac,
        ApMacConfig {
            queue: MacQueue::FqMac,
            airtime: AirtimeSched::Mac80211,
            airtime_rx: false,
            aql: false,
            fq_kernel: FqKernel::Linux4_11,
            policy: Default::default(),
            dynamic_aggregate: None,
            next: Default::default(),
            ofdma: Default::default(),
            amsdu: Default::default(),
        }
    );
    assert_eq!(
        s.stations[0].ht,
        Some(HtStationConfig {
            mcs: mcs(3),
            airtime_weight: 512,
            min_rate_bps: 0,
            link: None,
            driver_queue_limit: 600,
            aggregation: Default::default()
        })
    );
    assert!(!s.flows[0].sack);
    let e =
        parse_scenario("[cell]\nstandard = \"802.11n\"\n[[station]]\nname = \"a\"\ndriver_queue_limit = 0\n", "q.toml")
            .unwrap_err();
    assert_eq!(e.0.len(), 1, "{e:?}");
    assert_eq!(e.0[0].key, "station[0].driver_queue_limit", "{e:?}");
    let text = "[cell]\nstandard = \"802.11n\"\n[[station]]\nname = \"a\"\naggregation = \"at-access\"\n";
    assert_eq!(
        parse_scenario(text, "a.toml").unwrap().stations[0].ht.map(|h| h.aggregation),
        Some(crate::wifi::ht::params::StationAggregation::AtAccess)
    );
    let e = parse_scenario(&text.replace("at-access", "later"), "a.toml").unwrap_err();
    assert_eq!((e.0.len(), e.0[0].key.as_str()), (1, "station[0].aggregation"), "{e:?}");
    let (line, key, msg) = one_error("[cell]\nstandard = \"802.11ax\"\ncw_at_retry_limit = \"halve\"\n");
    assert_eq!((line, key.as_str()), (3, "cell.cw_at_retry_limit"));
    assert!(msg.contains("\"double\"") && msg.contains("\"reset\""), "{msg}");

    // The mac80211 scheduler brings AQL and the 6.18 FQ-MAC policy by default.
    let s = parse_scenario(
        &format!(
            "[cell]\nstandard = \"802.11n\"\n[ap]\nmac_queue = \"fq_mac\"\nairtime = \"mac80211\"\n{ONE_HT_STATION}"
        ),
        "f",
    )
    .unwrap();
    assert_eq!((s.ap_mac.aql, s.ap_mac.fq_kernel), (true, FqKernel::Linux6_18));
    // A driver FIFO with its own limit; band and width spelled briefly.
    let s = parse_scenario(
        &format!("[cell]\nstandard = \"802.11n\"\nband = \"5\"\n[ap]\ndriver_queue_limit = 1000\nmac_queue = \"fifo\"\n{ONE_HT_STATION}"),
        "f",
    )
    .unwrap();
    assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: 1000 });
    assert_eq!(s.cell.ht.unwrap().band, OfdmBand::Ghz5);
}

#[test]
fn each_queueing_preset() {
    use crate::wifi::ht::params::{AirtimeSched, FqKernel, MacQueue};
    let fifo = MacQueue::DriverFifo { limit: crate::wifi::ht::params::ATH_MAX_QDEPTH };
    for (preset, queue, airtime, script) in [
        ("fifo", fifo, AirtimeSched::Off, false),
        ("fq_codel", fifo, AirtimeSched::Off, true),
        ("fq-codel", fifo, AirtimeSched::Off, true),
        ("fq-mac", MacQueue::FqMac, AirtimeSched::Off, false),
        ("airtime", MacQueue::FqMac, AirtimeSched::Ath9k, false),
    ] {
        let text = format!(
            "[cell]\nstandard = \"802.11n\"\n[ap]\ntxqueuelen = 100\nqueueing = \"{preset}\"\n{ONE_HT_STATION}"
        );
        let s = parse_scenario(&text, "p.toml").unwrap_or_else(|e| panic!("{preset}: {e}"));
        assert_eq!((s.ap_mac.queue, s.ap_mac.airtime), (queue, airtime), "{preset}");
        assert_eq!((s.ap_mac.aql, s.ap_mac.fq_kernel, s.ap_mac.airtime_rx), (false, FqKernel::Linux4_11, true));
        assert_eq!(s.ap.txqueuelen, 100);
        if script {
            // The root fq_codel on wlan0, as if the AP's tc script said so; it builds.
            let tc = s.ap.tc.as_ref().expect("fq_codel script");
            assert_eq!(tc.text, "tc qdisc add dev wlan0 root fq_codel\n");
            assert_eq!(
                (tc.file.as_str(), tc.key.as_str(), tc.line_offset, tc.first_line_col_offset),
                ("p.toml", "ap.queueing", 4, 11)
            );
            let nodes = crate::scenario::tc_trees::nodes_with_scripts(&s, &s.topology());
            let (trees, _, errors, warnings) = crate::scenario::tc_trees::build_script(&nodes[0], 1);
            assert!(errors.is_empty() && warnings.is_empty(), "{errors:?} {warnings:?}");
            assert_eq!(trees.len(), 1);
        } else {
            assert_eq!(s.ap.tc, None, "{preset}");
        }
    }
    // The presets leave the other AP keys free.
    let s = parse_scenario(
        &format!(
            "[cell]\nstandard = \"802.11n\"\n[ap]\nqueueing = \"fifo\"\ndriver_queue_limit = 50\n{ONE_HT_STATION}"
        ),
        "f",
    )
    .unwrap();
    assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: 50 });
    let s = parse_scenario(
        &format!("[cell]\nstandard = \"802.11n\"\n[ap]\nqueueing = \"fq-mac\"\nfq_kernel = \"6.18\"\nairtime_rx = false\n{ONE_HT_STATION}"),
        "f",
    )
    .unwrap();
    assert_eq!((s.ap_mac.fq_kernel, s.ap_mac.airtime_rx), (FqKernel::Linux6_18, false));
}

#[test]
fn an_invalid_standard_does_not_cascade() {
    // The standard is wrong: the keys of either standard are taken without further errors.
    let text = "[cell]\nstandard = \"802.11x\"\nband = \"5GHz\"\npreamble = \"long\"\n\
                [ap]\nqueueing = \"airtime\"\n[[station]]\nname = \"a\"\nmcs = 3\n";
    let e = parse_scenario(text, "f").unwrap_err();
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(e.0[0].key, "cell.standard");
    // A bad value is still reported.
    let e = parse_scenario(&text.replace("mcs = 3", "mcs = 16"), "f").unwrap_err();
    assert_eq!(e.0.len(), 2, "{e}");
    assert_eq!(e.0[1].key, "station[0].mcs");
}

#[test]
fn warmup_default_drops_to_zero_for_short_runs() {
    let s = parse_scenario(&format!("[run]\nduration = \"1s\"\n{ONE_STATION}"), "f").unwrap();
    assert_eq!(s.run.warmup, Nanos::ZERO);
    let s = parse_scenario(&format!("[run]\nduration = \"1002ms\"\nsample_interval = \"1ms\"\n{ONE_STATION}"), "f")
        .unwrap();
    assert_eq!(s.run.warmup, Nanos::from_secs(1));
}

#[test]
fn inline_tables_and_dotted_keys_work_too() {
    let text = "run.duration = \"5s\"\n\
                station = [{ name = \"s\", rate = \"2Mbps\" }]\n\
                flow = [{ name = \"f\", src = \"s\", dst = \"server\", rate = \"1mbit\" }]\n";
    let s = parse_scenario(text, "f").unwrap();
    assert_eq!(s.run.duration, Nanos::from_secs(5));
    assert_eq!(s.stations[0].rate, DsssRate::R2);
    assert_eq!(s.flows[0].src, Endpoint::Station(0));
}

#[test]
fn integers_in_other_radixes_and_with_underscores() {
    let text = format!("[run]\nseed = 0x10\n[ap]\ntxqueuelen = 1_0_0\n[cell]\nretry_limit = 0o7\n{ONE_STATION}");
    let s = parse_scenario(&text, "f").unwrap();
    assert_eq!((s.run.seed, s.ap.txqueuelen, s.cell.retry_limit), (16, 100, 7));
}

#[test]
fn display_formats() {
    let e =
        ScenarioError { file: "a.toml".into(), line: 3, column: 12, key: "run.duration".into(), message: "bad".into() };
    assert_eq!(e.to_string(), "a.toml:3:12: run.duration: bad");
    let s = ScenarioError { key: String::new(), ..e.clone() };
    assert_eq!(s.to_string(), "a.toml:3:12: bad");
    assert_eq!(ScenarioErrors(vec![e, s]).to_string(), "a.toml:3:12: run.duration: bad\na.toml:3:12: bad");
}

#[test]
fn edit_distance_and_suggestions() {
    assert_eq!(edit_distance("station", "stations"), 1);
    assert_eq!(edit_distance("duraiton", "duration"), 1);
    assert_eq!(edit_distance("Duration", "duration"), 0);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(closest("stations", TOP_KEYS.iter().copied()), Some("station"));
    assert_eq!(closest("flows", TOP_KEYS.iter().copied()), Some("flow"));
    assert_eq!(closest("xyz", TOP_KEYS.iter().copied()), None);
    assert_eq!(closest("sampel_interval", RUN_KEYS.iter().copied()), Some("sample_interval"));
}

#[test]
fn columns_count_characters_not_bytes() {
    let text = "[run]\n# é\nduration = \"é\"\n";
    let e = parse_scenario(text, "f").unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].column), (3, 12));
    let text = "[run]\nx = \"é\" ; y = \"é\"\n";
    let e = parse_scenario(text, "f").unwrap_err();
    assert_eq!(e.0.len(), 1);
    assert_eq!(e.0[0].key, "");
    assert_eq!(e.0[0].line, 2);
}

#[test]
fn kernel_eras_and_tcp_overrides() {
    use crate::tcp::KernelEra;
    let text = r#"
[server]
kernel = "2.4"

[[station]]
name = "a"
rate = "11Mbps"
kernel = "6.1"

[[flow]]
name = "up"
protocol = "tcp"
src = "a"
dst = "server"
bytes = "600MB"
repeat = true
rmem = [4096, 87380, 174760]
wmem = [4096, 16384, 131072]
adv_win_scale = 2
autotune = false
tsq = 0
initial_cwnd = 2
kernel = "4.9"
"#;
    let s = parse_scenario(text, "eras.toml").unwrap();
    assert_eq!((s.server.kernel, s.stations[0].node.kernel), (Some(KernelEra::Linux2_4), Some(KernelEra::Linux6_1)));
    let o = s.flows[0].tcp;
    assert_eq!(
        (o.kernel, o.rmem, o.wmem),
        (Some(KernelEra::Linux4_9), Some([4096, 87380, 174760]), Some([4096, 16384, 131072]))
    );
    assert_eq!(
        (o.adv_win_scale, o.autotune, o.tsq, o.initial_cwnd, o.repeat),
        (Some(2), Some(false), Some(0), Some(2), true)
    );
    // tc units: MB = 1024 · 1024 bytes.
    assert_eq!(s.flows[0].bytes, Some(600 * 1024 * 1024));
    // The flow's settings over 4.9's: the window of 2.4's buffer, no TSQ.
    let cfg = crate::sim::build::traffic::tcp_config(&s.flows[0], o.kernel.unwrap());
    assert_eq!((cfg.rcv_wnd, cfg.tsq, cfg.initial_cwnd_segments), (65535, None, 2));

    let bad = text
        .replace("kernel = \"4.9\"", "kernel = \"3.0\"")
        .replace("rmem = [4096, 87380, 174760]", "rmem = [4096, 87380]");
    let err = parse_scenario(&bad, "eras.toml").unwrap_err().to_string();
    assert!(err.contains("flow[0].kernel") && err.contains("\"2.4\""), "{err}");
    assert!(err.contains("flow[0].rmem") && err.contains("three byte counts"), "{err}");
    let bad = text.replace("bytes = \"600MB\"\n", "");
    let err = parse_scenario(&bad, "eras.toml").unwrap_err().to_string();
    assert!(err.contains("flow[0].repeat") && err.contains("bytes"), "{err}");
}

#[test]
fn rack_tlp_frto_keys() {
    use crate::tcp::{KernelEra, LossEra};
    let text = r#"
[[station]]
name = "a"
rate = "11Mbps"

[[flow]]
name = "up"
protocol = "tcp"
src = "a"
dst = "server"
kernel = "6.1"
rack = false
tlp = false
frto = false

[[flow]]
name = "down"
protocol = "tcp"
src = "server"
dst = "a"
kernel = "2.4"
rack = true
"#;
    let s = parse_scenario(text, "loss.toml").unwrap();
    let (a, b) = (s.flows[0].tcp, s.flows[1].tcp);
    assert_eq!((a.rack, a.tlp, a.frto, b.rack, b.tlp), (Some(false), Some(false), Some(false), Some(true), None));
    let cfg = crate::sim::build::traffic::tcp_config(&s.flows[0], a.kernel.unwrap());
    assert_eq!((cfg.rack, cfg.tlp, cfg.frto), (None, None, false));
    // The era's defaults: 6.1 all on, 4.9 its own versions, 2.4 none (here RACK asked: 6.1's).
    let c61 = KernelEra::Linux6_1.config(crate::tcp::CcKind::Cubic);
    assert_eq!((c61.rack, c61.tlp, c61.frto), (Some(LossEra::Linux6_1), Some(LossEra::Linux6_1), true));
    let c49 = KernelEra::Linux4_9.config(crate::tcp::CcKind::Cubic);
    assert_eq!((c49.rack, c49.tlp, c49.frto), (Some(LossEra::Linux4_9), Some(LossEra::Linux4_9), true));
    let cfg = crate::sim::build::traffic::tcp_config(&s.flows[1], b.kernel.unwrap());
    assert_eq!((cfg.rack, cfg.tlp, cfg.frto), (Some(LossEra::Linux6_1), None, false));

    let bad = text.replace("rack = false", "rack = \"yes\"").replace("rack = true", "rack = true\nsack = false");
    let err = parse_scenario(&bad, "loss.toml").unwrap_err().to_string();
    assert!(err.contains("flow[0].rack") && err.contains("boolean"), "{err}");
    assert!(err.contains("flow[1].rack") && err.contains("needs SACK"), "{err}");
    let bad = text
        .replace("protocol = \"tcp\"\nsrc = \"a\"", "protocol = \"udp\"\nrate = \"1Mbps\"\nsrc = \"a\"")
        .replace("kernel = \"6.1\"\n", "");
    let err = parse_scenario(&bad, "loss.toml").unwrap_err().to_string();
    assert!(err.contains("flow[0].rack") && err.contains("TCP flows"), "{err}");
}

/// An 802.11ac/ax cell with one station; `cell` and `station` are extra lines.
fn wide_cell(standard: &str, cell: &str, station: &str) -> String {
    format!("[cell]\nstandard = \"{standard}\"\n{cell}\n[[station]]\nname = \"a\"\n{station}\n")
}

/// The one error of `text`: its line and key.
fn one_error(text: &str) -> (u32, String, String) {
    let e = parse_scenario(text, "w.toml").unwrap_err();
    assert_eq!(e.0.len(), 1, "{e}");
    let e = &e.0[0];
    assert_eq!(e.file, "w.toml");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    (e.line, e.key.clone(), e.message.clone())
}

#[test]
fn vht_and_he_cells_parse_with_their_defaults() {
    use crate::phy::he::{HeGi, HeLtf, PacketPadding};
    use crate::phy::ht::{ChannelWidth, GuardInterval};
    use crate::phy::vht::{VhtTxVector, Width};
    use crate::phy::TxVector;
    let s = parse_scenario(&wide_cell("802.11ac", "", "mcs = 9"), "f").unwrap();
    let ht = s.cell.ht.unwrap();
    let w = ht.wide.unwrap();
    assert_eq!((w.standard, w.width, w.nss, w.vht_gi), (Standard::Dot11ac, Width::Mhz80, 2, GuardInterval::Long));
    // 802.11n stations of the cell use 40 MHz.
    assert_eq!(ht.width, ChannelWidth::Mhz40);
    let link = s.stations[0].ht.unwrap().link.unwrap();
    assert_eq!(link, TxVector::Vht(VhtTxVector::new(9, 2, Width::Mhz80, GuardInterval::Long).unwrap()));
    assert_eq!(ht.max_aggregate_mpdus, 64);

    let text = wide_cell(
        "802.11ax",
        "band = \"6GHz\"\nwidth = 160\nnss = 4\nguard_interval = \"3.2us\"\nltf = \"4x\"\npacket_padding = \"16us\"",
        "mcs = 11\nnss = 3",
    );
    let s = parse_scenario(&text, "f").unwrap();
    let ht = s.cell.ht.unwrap();
    let w = ht.wide.unwrap();
    assert!(w.six_ghz);
    assert_eq!((w.he_gi, w.ltf, w.padding, ht.max_aggregate_mpdus), (HeGi::Us3_2, HeLtf::X4, PacketPadding::Us16, 256));
    let Some(TxVector::He(t)) = s.stations[0].ht.unwrap().link else { panic!("an HE link") };
    assert_eq!((t.mcs, t.nss, t.ru, t.gi, t.ltf), (11, 3, crate::phy::he::RuSize::Tones2x996, HeGi::Us3_2, HeLtf::X4));
    // A legacy station in an HE cell keeps an HT link; one narrower than the cell gets its own.
    let s = parse_scenario(&wide_cell("802.11ax", "", "standard = \"802.11n\"\nmcs = 15\nwidth = 20"), "f").unwrap();
    let Some(TxVector::Ht(t)) = s.stations[0].ht.unwrap().link else { panic!("an HT link") };
    assert_eq!((t.mcs.index(), t.width), (15, ChannelWidth::Mhz20));
}

#[test]
fn bad_vht_and_he_combinations_are_one_line_errors() {
    // MCS 10 in VHT.
    let (line, key, msg) = one_error(&wide_cell("802.11ac", "", "mcs = 10"));
    assert_eq!((line, key.as_str()), (6, "station[0].mcs"));
    assert!(msg.contains("0-9"), "{msg}");
    // MCS 9 at 20 MHz with one stream (802.11-2020 21.5).
    let (line, key, msg) = one_error(&wide_cell("802.11ac", "width = 20", "mcs = 9\nnss = 1"));
    assert_eq!((line, key.as_str()), (6, "station[0].mcs"));
    assert!(msg.contains("20 MHz"), "{msg}");
    // 160 MHz on 2.4 GHz.
    let (line, key, msg) = one_error(&wide_cell("802.11ax", "band = \"2.4GHz\"\nwidth = 160", ""));
    assert_eq!((line, key.as_str()), (4, "cell.width"));
    assert!(msg.contains("2.4 GHz"), "{msg}");
    // VHT is 5 GHz only; 6 GHz is HE only.
    assert_eq!(one_error(&wide_cell("802.11ac", "band = \"2.4GHz\"", "")).1, "cell.band");
    assert_eq!(one_error(&wide_cell("802.11n", "band = \"6GHz\"", "")).1, "cell.band");
    // Five spatial streams.
    let (line, key, msg) = one_error(&wide_cell("802.11ax", "nss = 5", ""));
    assert_eq!((line, key.as_str()), (3, "cell.nss"));
    assert!(msg.contains("at most 4"), "{msg}");
    assert_eq!(one_error(&wide_cell("802.11ax", "nss = 2", "nss = 3")).1, "station[0].nss");
    // HE on a legacy station: an HE standard in a VHT cell, an HE MCS on an 802.11n station.
    let (_, key, msg) = one_error(&wide_cell("802.11ac", "", "standard = \"802.11ax\""));
    assert_eq!(key, "station[0].standard");
    assert!(msg.contains("802.11ac"), "{msg}");
    // (MCS 11 on an 802.11n station is HT MCS 11, two streams of 16-QAM 1/2: valid.)
    let (_, key, msg) = one_error(&wide_cell("802.11ax", "", "standard = \"802.11n\"\nmcs = 16"));
    assert_eq!(key, "station[0].mcs");
    assert!(msg.contains("0-15"), "{msg}");
    let (_, key, _) = one_error(&wide_cell("802.11ax", "", "standard = \"802.11n\"\nnss = 2"));
    assert_eq!(key, "station[0].nss");
    let (_, key, _) = one_error(&wide_cell("802.11n", "", "standard = \"802.11ax\""));
    assert_eq!(key, "station[0].standard");
    // HE keys in a VHT cell, a bad LTF/GI pair, a 1024 window.
    assert_eq!(one_error(&wide_cell("802.11ac", "ltf = \"2x\"", "")).1, "cell.ltf");
    assert_eq!(one_error(&wide_cell("802.11ax", "ltf = \"1x\"\nguard_interval = \"3.2us\"", "")).1, "cell.ltf");
    let (_, key, msg) = one_error(&wide_cell("802.11ax", "max_aggregate_mpdus = 1024", ""));
    assert_eq!(key, "cell.max_aggregate_mpdus");
    assert!(msg.contains("802.11be"), "{msg}");
    // A VHT link takes a fixed rate or Minstrel-HT (its VHT groups); an HE link a fixed rate.
    assert_eq!(one_error(&wide_cell("802.11ac", "", "rate_control = \"minstrel\"")).1, "station[0].rate_control");
    let (_, key, msg) = one_error(&wide_cell("802.11ax", "", "rate_control = \"minstrel_ht\""));
    assert_eq!(key, "station[0].rate_control");
    assert!(msg.contains("firmware"), "{msg}");
    let s = parse_scenario(&wide_cell("802.11ac", "", "rate_control = \"minstrel_ht\""), "f").unwrap();
    assert_eq!(s.stations[0].rate_control, crate::mac::rate::RateControl::MinstrelHt);
    // An 80 MHz 802.11n cell.
    assert_eq!(one_error(&wide_cell("802.11n", "width = 80", "")).1, "cell.width");
}

#[test]
fn ofdma_keys_parse_and_bad_ones_are_one_line_errors() {
    use crate::wifi::ht::ofdma::{Ofdma, OfdmaConfig};
    let ap = |keys: &str| {
        format!("[cell]\nstandard = \"802.11ax\"\n[ap]\nmac_queue = \"fq-mac\"\n{keys}\n[[station]]\nname = \"a\"\n")
    };
    let s = parse_scenario(&ap("ofdma = \"dl\"\nmu_scheduler = \"rr\"\nmu_stations = 9"), "w.toml").unwrap();
    assert_eq!(s.ap_mac.ofdma, OfdmaConfig { mode: Ofdma::Dl, n_stations: 9, ..OfdmaConfig::default() });
    // Off by default, 4 stations as ns-3's NStations.
    let s = parse_scenario(&ap(""), "w.toml").unwrap();
    assert_eq!(s.ap_mac.ofdma, OfdmaConfig::default());
    assert_eq!(parse_scenario(&ap("ofdma = \"dl\""), "w.toml").unwrap().ap_mac.ofdma.n_stations, 4);
    // OFDMA outside 802.11ax.
    let t = "[cell]\nstandard = \"802.11ac\"\n[ap]\nofdma = \"dl\"\n[[station]]\nname = \"a\"\n";
    let (line, key, msg) = one_error(t);
    assert_eq!((line, key.as_str()), (4, "ap.ofdma"));
    assert!(msg.contains("802.11ax"), "{msg}");
    // A word that is not one, too many stations, mu_stations without OFDMA.
    let (_, key, msg) = one_error(&ap("ofdma = \"ul\""));
    assert_eq!(key, "ap.ofdma");
    assert!(msg.contains("\"off\" or \"dl\""), "{msg}");
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nmu_stations = 75")).1, "ap.mu_stations");
    assert_eq!(one_error(&ap("mu_stations = 8")).1, "ap.mu_stations");
    // Single-user driver mechanisms are not modelled with it.
    let (_, key, msg) = one_error(&ap("aggregation = \"firmware\"\nofdma = \"dl\""));
    assert_eq!(key, "ap.ofdma");
    assert!(msg.contains("aggregation"), "{msg}");
}

#[test]
fn bsrp_and_mu_edca_keys_parse_and_bad_ones_are_one_line_errors() {
    use crate::mac::edca::MuEdcaParams;
    let ap = |keys: &str| {
        format!(
            "[cell]\nstandard = \"802.11ax\"\nguard_interval = \"1.6us\"\n[ap]\n{keys}\n[[station]]\nname = \"a\"\n"
        )
    };
    let s = parse_scenario(&ap("ofdma = \"dl+ul\"\nul_bsrp = true"), "w.toml").unwrap();
    assert!(s.ap_mac.ofdma.bsrp);
    assert_eq!(s.ap_mac.ofdma.mu_edca, None);
    // Off by default.
    let s = parse_scenario(&ap("ofdma = \"dl+ul\""), "w.toml").unwrap();
    assert!(!s.ap_mac.ofdma.bsrp);
    assert!(!s.ap_mac.ofdma.trigger_nav);
    let s = parse_scenario(&ap("ofdma = \"dl+ul\"\nul_trigger_nav = true"), "w.toml").unwrap();
    assert!(s.ap_mac.ofdma.trigger_nav);
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nul_trigger_nav = true")).1, "ap.ul_trigger_nav");
    assert_eq!(one_error(&ap("ofdma = \"dl+ul\"\nul_trigger_nav = 1")).1, "ap.ul_trigger_nav");
    // The Trigger's capture on the ring and the reports' lifetime (off by default).
    assert_eq!(s.ap_mac.ofdma.trigger_capture, crate::wifi::ht::ofdma::TriggerCapture::None);
    assert_eq!(s.ap_mac.ofdma.bsr_lifetime, None);
    let s =
        parse_scenario(&ap("ofdma = \"dl+ul\"\nul_trigger_capture = \"ring\"\nul_bsr_lifetime = \"20ms\""), "w.toml")
            .unwrap();
    assert_eq!(s.ap_mac.ofdma.trigger_capture, crate::wifi::ht::ofdma::TriggerCapture::Ring);
    assert_eq!(s.ap_mac.ofdma.bsr_lifetime, Some(Nanos::from_ms(20)));
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nul_trigger_capture = \"ring\"")).1, "ap.ul_trigger_capture");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nul_trigger_capture = \"disc\""));
    assert!(key == "ap.ul_trigger_capture" && msg.contains("\"ring\""), "{msg}");
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nul_bsr_lifetime = \"20ms\"")).1, "ap.ul_bsr_lifetime");
    assert_eq!(one_error(&ap("ofdma = \"dl+ul\"\nul_bsr_lifetime = \"0ms\"")).1, "ap.ul_bsr_lifetime");
    assert_eq!(one_error(&ap("ofdma = \"dl+ul\"\nul_bsr_lifetime = 20")).1, "ap.ul_bsr_lifetime");
    // When a station fills its TB PPDU and the timer's tie with the AP's exchange end
    // (ns-3's rules opt in; every earlier number by default).
    use crate::wifi::ht::ofdma::{TbFill, TimerTie};
    assert_eq!((s.ap_mac.ofdma.tb_fill, s.ap_mac.ofdma.timer_tie), (TbFill::TriggerStart, TimerTie::ExchangeFirst));
    let s =
        parse_scenario(&ap("ofdma = \"dl+ul\"\nul_tb_fill = \"tb-start\"\nul_timer_tie = \"timer-first\""), "w.toml")
            .unwrap();
    assert_eq!((s.ap_mac.ofdma.tb_fill, s.ap_mac.ofdma.timer_tie), (TbFill::TbStart, TimerTie::TimerFirst));
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nul_tb_fill = \"tb-start\"")).1, "ap.ul_tb_fill");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nul_tb_fill = \"late\""));
    assert!(key == "ap.ul_tb_fill" && msg.contains("\"tb-start\""), "{msg}");
    assert_eq!(one_error(&ap("ofdma = \"dl\"\nul_timer_tie = \"timer-first\"")).1, "ap.ul_timer_tie");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nul_timer_tie = true"));
    assert!(key == "ap.ul_timer_tie" && msg.contains("\"timer-first\""), "{msg}");
    // The other users' MPDUs after a missed first BlockAck (ns-3's in flight, opt in).
    use crate::wifi::ht::ofdma::MissedBa;
    assert_eq!(s.ap_mac.ofdma.missed_ba, MissedBa::Requeue);
    for mode in ["dl", "dl+ul"] {
        let s = parse_scenario(&ap(&format!("ofdma = \"{mode}\"\nmu_missed_ba = \"in-flight\"")), "w.toml").unwrap();
        assert_eq!(s.ap_mac.ofdma.missed_ba, MissedBa::InFlight);
        let s =
            parse_scenario(&ap(&format!("ofdma = \"{mode}\"\nmu_missed_ba = \"in-flight-bar\"")), "w.toml").unwrap();
        assert_eq!(s.ap_mac.ofdma.missed_ba, MissedBa::InFlightBar);
    }
    assert_eq!(one_error(&ap("ofdma = \"off\"\nmu_missed_ba = \"in-flight\"")).1, "ap.mu_missed_ba");
    assert_eq!(one_error(&ap("ofdma = \"off\"\nmu_missed_ba = \"in-flight-bar\"")).1, "ap.mu_missed_ba");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl\"\nmu_missed_ba = \"bar\""));
    assert!(key == "ap.mu_missed_ba" && msg.contains("\"in-flight\"") && msg.contains("\"in-flight-bar\""), "{msg}");
    let s = parse_scenario(
        &ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"2088.96ms\"\nmu_edca_aifsn = 8\nmu_edca_cw_min = 511\nmu_edca_cw_max = 1023"),
        "w.toml",
    )
    .unwrap();
    let p = MuEdcaParams { aifsn: 8, cw_min: 511, cw_max: 1023, timer: Nanos::from_us(2_088_960) };
    assert_eq!(s.ap_mac.ofdma.mu_edca, Some(p));
    // The timer alone: ns-3's HeConfiguration defaults (AIFSN 0, CW 15..1023).
    let s = parse_scenario(&ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"8.192ms\""), "w.toml").unwrap();
    assert_eq!(s.ap_mac.ofdma.mu_edca, Some(MuEdcaParams::ns3_default(Nanos::from_us(8192))));
    // Without uplink OFDMA, without the timer, values the element cannot carry.
    let (line, key, msg) = one_error(&ap("ofdma = \"dl\"\nul_bsrp = true"));
    assert_eq!((line, key.as_str()), (6, "ap.ul_bsrp"));
    assert!(msg.contains("dl+ul"), "{msg}");
    assert_eq!(one_error(&ap("ul_bsrp = 1")).1, "ap.ul_bsrp");
    assert_eq!(one_error(&ap("mu_edca_timer = \"8.192ms\"")).1, "ap.mu_edca_timer");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nmu_edca_aifsn = 8"));
    assert_eq!(key, "ap.mu_edca_aifsn");
    assert!(msg.contains("mu_edca_timer"), "{msg}");
    let (line, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"10ms\""));
    assert_eq!((line, key.as_str()), (6, "ap.mu_edca_timer"));
    assert!(msg.contains("8 TU"), "{msg}");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"8.192ms\"\nmu_edca_aifsn = 1"));
    assert_eq!(key, "ap.mu_edca_timer");
    assert!(msg.contains("AIFSN"), "{msg}");
    let (_, key, msg) = one_error(&ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"8.192ms\"\nmu_edca_cw_min = 100"));
    assert_eq!(key, "ap.mu_edca_timer");
    assert!(msg.contains("CWmin"), "{msg}");
    assert_eq!(
        one_error(&ap("ofdma = \"dl+ul\"\nmu_edca_timer = \"8.192ms\"\nmu_edca_cw_max = 40000")).1,
        "ap.mu_edca_cw_max"
    );
}

#[test]
fn a_ping_takes_a_reply_delay_and_other_flows_refuse_it() {
    let flow = |proto: &str, extra: &str| {
        format!(
            "[[station]]\nname = \"a\"\nrate = \"11Mbps\"\n[[flow]]\nname = \"p\"\nprotocol = \"{proto}\"\nsrc = \"a\"\ndst = \"server\"\n{extra}\n"
        )
    };
    let s = parse_scenario(&flow("ping", "reply_delay = \"88us\""), "f").unwrap();
    assert_eq!(s.flows[0].reply_delay, Nanos::from_us(88));
    assert_eq!(parse_scenario(&flow("ping", ""), "f").unwrap().flows[0].reply_delay, Nanos::ZERO);
    let (line, key, msg) = one_error(&flow("udp", "rate = \"1mbit\"\nreply_delay = \"88us\""));
    assert_eq!((line, key.as_str()), (10, "flow[0].reply_delay"));
    assert!(msg.contains("ping flows"), "{msg}");
    let (_, key, msg) = one_error(&flow("ping", "reply_delay = \"2s\""));
    assert_eq!(key, "flow[0].reply_delay");
    assert!(msg.contains("at most 1s"), "{msg}");
}
