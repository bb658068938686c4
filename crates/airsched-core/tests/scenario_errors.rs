//! One test per kind of scenario-file error: each checks the exact position, the key and a
//! fragment of the message, so that error reporting stays precise.

use airsched_core::Endpoint;
use airsched_core::{parse_scenario, ScenarioError};

const EXAMPLE: &str = include_str!("fixtures/example.toml");

/// All errors of `text` (which must not parse).
fn errors(text: &str) -> Vec<ScenarioError> {
    match parse_scenario(text, "test.toml") {
        Ok(s) => panic!("expected errors, but it parsed: {s:#?}"),
        Err(e) => e.0,
    }
}

#[track_caller]
fn check(e: &ScenarioError, line: u32, column: u32, key: &str, fragment: &str) {
    assert_eq!((e.line, e.column, e.key.as_str()), (line, column, key), "wrong position or key in: {e}");
    assert!(e.message.contains(fragment), "{:?} not found in: {e}", fragment);
    assert_eq!(e.file, "test.toml");
}

/// `text` has exactly one error, as described.
#[track_caller]
fn one(text: &str, line: u32, column: u32, key: &str, fragment: &str) {
    let errs = errors(text);
    assert_eq!(errs.len(), 1, "expected one error, got: {errs:#?}");
    check(&errs[0], line, column, key, fragment);
}

/// The example with `line` (1-based) replaced by `new` ("" deletes the line's content).
fn example_with(line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = EXAMPLE.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

/// The example with `extra` appended.
fn example_plus(extra: &str) -> String {
    format!("{EXAMPLE}{extra}")
}

#[test]
fn the_example_fixture_parses() {
    let s = parse_scenario(EXAMPLE, "example.toml").unwrap();
    assert_eq!(s.stations.len(), 1);
    assert_eq!(s.flows[0].dst, Endpoint::Station(0));
}

#[test]
fn syntax_error_is_one_error_with_its_position() {
    // Line 2: the string is never closed.
    let errs = errors("[run]\nduration = \"60s\nseed = 1\n");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].line, 2);
    assert_eq!(errs[0].key, "");
    assert!(errs[0].message.contains("TOML syntax error"), "{}", errs[0]);
    // A missing `=` is reported at its column.
    one("[run]\nseed 1\n", 2, 6, "", "TOML syntax error");
    // Display leaves out the empty key.
    let e = &errors("[run\n")[0];
    assert!(e.to_string().starts_with("test.toml:1:5: TOML syntax error"), "{e}");
}

#[test]
fn unknown_key_suggests_the_closest_one() {
    one(&example_with(2, "durration = \"60s\""), 2, 1, "run.durration", "did you mean `duration`?");
    one(&example_plus("[[stations]]\nname = \"x\"\n"), 20, 3, "stations", "did you mean `station`?");
    // A key of another section says where it belongs.
    one(&example_plus("seed = 2\n"), 20, 1, "flow[0].seed", "`seed` belongs in [run]");
}

#[test]
fn wrong_type_says_what_was_expected() {
    one(&example_with(2, "duration = 60"), 2, 12, "run.duration", "expected a string like \"60s\", found integer 60");
    one(
        &example_with(19, "size = \"1024\""),
        19,
        8,
        "flow[0].size",
        "expected an integer between 1 and 2276 (without quotes), found string \"1024\"",
    );
}

#[test]
fn bad_unit_lists_the_valid_units() {
    let errs = errors(&example_with(18, "rate = \"6Mbt\""));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    check(&errs[0], 18, 8, "flow[0].rate", "\"6Mbt\" is not a rate: unknown unit \"Mbt\"");
    assert!(errs[0].message.contains("kbit, mbit"), "{}", errs[0]);
    one(&example_with(5, "sample_interval = \"200 mS x\""), 5, 19, "run.sample_interval", "unknown unit");
    // A bare number is ambiguous in a duration string.
    one(&example_with(5, "sample_interval = \"200\""), 5, 19, "run.sample_interval", "\"10s\" or \"200ms\"");
}

#[test]
fn negative_duration_is_rejected() {
    one(&example_with(3, "warmup = \"-1s\""), 3, 10, "run.warmup", "durations must be positive or zero");
}

#[test]
fn warmup_must_be_shorter_than_duration() {
    one(
        &example_with(3, "warmup = \"60s\""),
        3,
        10,
        "run.warmup",
        "warmup (60s) must be shorter than run.duration (60s)",
    );
}

#[test]
fn unknown_station_in_flow_src() {
    let mut text = example_with(16, "src = \"sta2\"");
    text = text.replace("dst = \"sta1\"", "dst = \"server\"");
    one(&text, 16, 7, "flow[0].src", "unknown endpoint \"sta2\"");
    let e = &errors(&text)[0];
    assert!(e.message.contains("did you mean \"sta1\"?"), "{e}");
    assert!(e.message.contains("(stations: \"sta1\")"), "{e}");
}

#[test]
fn unknown_station_in_flow_dst() {
    one(&example_with(17, "dst = \"station1\""), 17, 7, "flow[0].dst", "expected \"server\", \"ap\" or a station name");
}

#[test]
fn duplicate_station_name() {
    let errs = errors(&example_plus("[[station]]\nname = \"sta1\"\nrate = \"1Mbps\"\n"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    check(&errs[0], 21, 8, "station[1].name", "duplicate station name \"sta1\" (already used on line 11)");
}

#[test]
fn duplicate_flow_name() {
    one(
        &example_plus("[[flow]]\nname = \"down1\"\nsrc = \"sta1\"\ndst = \"server\"\nrate = \"saturate\"\n"),
        21,
        8,
        "flow[1].name",
        "duplicate flow name \"down1\" (already used on line 14)",
    );
}

#[test]
fn src_must_differ_from_dst() {
    one(&example_with(17, "dst = \"server\""), 17, 7, "flow[0].dst", "must differ from src");
}

#[test]
fn unsupported_standard() {
    one(
        &example_with(7, "standard = \"802.11g\""),
        7,
        12,
        "cell.standard",
        "\"802.11g\" is not supported yet as a cell; only \"802.11b\"",
    );
}

/// A non-HT (802.11a/g) station of an 802.11n/ac/ax cell: `rest` are its lines from line 5 on.
fn non_ht(band: &str, rest: &str) -> String {
    format!("[cell]\nstandard = \"802.11n\"\nband = \"{band}\"\n[[station]]\nname = \"old\"\n{rest}")
}

#[test]
fn non_ht_stations_say_what_they_take() {
    // The PHY of the other band.
    one(
        &non_ht("5GHz", "standard = \"802.11g\"\n"),
        6,
        12,
        "station[0].standard",
        "this cell is at 5 GHz: use \"802.11a\"",
    );
    one(&non_ht("2.4GHz", "standard = \"802.11a\"\n"), 6, 12, "station[0].standard", "use \"802.11g\"");
    // HT keys, a DSSS rate, a rate control other than fixed.
    one(&non_ht("5GHz", "standard = \"802.11a\"\nmcs = 3\n"), 7, 7, "station[0].mcs", "has no `mcs`");
    one(
        &non_ht("5GHz", "standard = \"802.11a\"\nrate = \"11Mbps\"\n"),
        7,
        8,
        "station[0].rate",
        "6, 9, 12, 18, 24, 36, 48 or 54 Mbps",
    );
    one(
        &non_ht("5GHz", "standard = \"802.11a\"\nrate_control = \"minstrel_ht\"\n"),
        7,
        16,
        "station[0].rate_control",
        "takes rate_control = \"fixed\"",
    );
    // The cell's rate control applies to the station: the error names the station's table.
    let text = "[cell]\nstandard = \"802.11n\"\nrate_control = \"minstrel_ht\"\n[[station]]\nname = \"old\"\nstandard = \"802.11a\"\n";
    one(text, 4, 1, "station[0].rate_control", "this is the cell's rate_control");
    // An 802.11b station still cannot join; the message names the non-HT standards.
    one(&non_ht("2.4GHz", "standard = \"802.11b\"\n"), 6, 12, "station[0].standard", "\"802.11g\" (2.4 GHz)");
}

#[test]
fn a_wide_station_that_inherits_a_rate_control_it_cannot_run_is_an_error_not_a_panic() {
    let text = "[cell]\nstandard = \"802.11ax\"\nrate_control = \"minstrel_ht\"\n[[station]]\nname = \"a\"\n";
    one(text, 4, 1, "station[0].rate_control", "HE drivers (mt76, ath11k, iwlwifi) run rate control in firmware");
    let text = "[cell]\nstandard = \"802.11ac\"\nrate_control = \"minstrel\"\n[[station]]\nname = \"a\"\n";
    one(text, 4, 1, "station[0].rate_control", "an 802.11ac link takes rate_control");
}

#[test]
fn bad_basic_rate() {
    one(
        &example_with(9, "basic_rates = [\"1Mbps\", \"54Mbps\"]"),
        9,
        25,
        "cell.basic_rates[1]",
        "expected one of \"1Mbps\", \"2Mbps\", \"5.5Mbps\" or \"11Mbps\"",
    );
}

#[test]
fn missing_required_key_points_at_the_table_header() {
    // Station rate removed: reported at `[[station]]` on line 10.
    one(&example_with(12, ""), 10, 1, "station[0].rate", "missing required key `rate`");
}

#[test]
fn stop_after_duration() {
    one(
        &example_plus("stop = \"61s\"\n"),
        20,
        8,
        "flow[0].stop",
        "stop (61s) is after the end of the run (run.duration = 60s)",
    );
}

#[test]
fn three_errors_are_all_reported_in_line_order() {
    let text = include_str!("fixtures/three_errors.toml");
    let errs = errors(text);
    assert_eq!(errs.len(), 3, "{errs:#?}");
    check(&errs[0], 13, 7, "flow[0].dst", "unknown endpoint \"sta9\"");
    check(&errs[1], 15, 8, "flow[0].stop", "stop (90s) is after the end of the run");
    check(&errs[2], 19, 1, "cell.basic_rate", "did you mean `basic_rates`?");
    // Display: one line per error.
    let shown = parse_scenario(text, "three.toml").unwrap_err().to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("three.toml:13:7: flow[0].dst: unknown endpoint"), "{shown}");
    assert!(lines[2].starts_with("three.toml:19:1: cell.basic_rate: unknown key"), "{shown}");
}

#[test]
fn flow_rate_in_bytes_per_second_is_rejected() {
    // In tc units "6Mbps" is 6 megabytes/s; 802.11 users mean megabits. Refuse to guess.
    one(&example_with(18, "rate = \"6Mbps\""), 18, 8, "flow[0].rate", "bytes per second");
}

#[test]
fn jitter_must_be_shorter_than_the_packet_interval() {
    // 1024 bytes at 6 Mbit/s leave every 1.365 ms.
    one(&example_plus("jitter = \"2ms\"\n"), 20, 10, "flow[0].jitter", "shorter than the packet interval");
    let ok = parse_scenario(&example_plus("jitter = \"1ms\"\n"), "test.toml").unwrap();
    assert_eq!(ok.flows[0].jitter, airsched_core::Nanos::from_ms(1));
}

#[test]
fn node_addresses_and_flow_header_fields() {
    let text = example_plus("sport = 12345\ndport = 5201\ndscp = 46\nmark = 6\n[ap]\nip = \"192.168.7.1\"\n");
    let s = parse_scenario(&text, "test.toml").unwrap();
    let k = s.flow_key(0);
    assert_eq!((k.sport, k.dport, k.tos, k.mark), (12345, 5201, 46 << 2, 6));
    // EF (TOS 0xB8) maps to priority 4 as rt_tos2priority does.
    assert_eq!(k.priority, 4);
    assert_eq!(k.src_ip, 0x0a00_0001, "server default");
    assert_eq!(k.dst_ip, 0xc0a8_0102, "first station default");
    assert_eq!(s.ap.ip, Some(0xc0a8_0701));
    one(&example_plus("[ap]\nip = \"192.168.300.1\"\n"), 21, 6, "ap.ip", "not an IPv4 address");
    one(&example_plus("tos = 16\ndscp = 4\n"), 21, 8, "flow[0].dscp", "either `tos`");
    one(&example_plus("dport = 70000\n"), 20, 9, "flow[0].dport", "between 1 and 65535");
}

#[test]
fn tc_script_sources() {
    one(
        &example_plus("[server]\ntc = \"qdisc add dev eth0 root pfifo\"\ntc_file = \"x.tc\"\n"),
        22,
        11,
        "server.tc_file",
        "not both",
    );
    let errs = errors(&example_plus("[server]\ntc_file = \"does-not-exist.tc\"\n"));
    assert_eq!(errs.len(), 1);
    check(&errs[0], 21, 11, "server.tc_file", "cannot read tc script");
}

/// A named file is read with a bound: a device, a directory, a file over 16 MiB or one that is
/// not UTF-8 is one error at the key, never an unbounded read (`/dev/zero` used to fill memory).
#[test]
fn tc_file_reads_are_bounded() {
    let at = |name: &str, fragment: &str| {
        let errs = errors(&example_plus(&format!("[server]\ntc_file = \"{name}\"\n")));
        assert_eq!(errs.len(), 1, "{errs:?}");
        check(&errs[0], 21, 11, "server.tc_file", fragment);
    };
    at("/dev/zero", "not a regular file");
    at("/", "not a regular file");
    let dir = std::env::temp_dir().join(format!("airsched-bounded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.tc");
    std::fs::File::create(&big).unwrap().set_len((16 << 20) + 1).unwrap();
    at(big.to_str().unwrap(), "larger than 16 MiB");
    let binary = dir.join("binary.tc");
    std::fs::write(&binary, [0x71, 0xff, 0xfe, 0x0a]).unwrap();
    at(binary.to_str().unwrap(), "not UTF-8");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------------------------------------------
// 802.11n cells

/// An 802.11n cell: `[cell]` on line 1, `standard = "802.11n"` on line 2, then `rest` from line 3.
/// An 802.11n cell with `rest` from line 3 on, and one station after it (a cell needs one).
fn ht(rest: &str) -> String {
    format!("[cell]\nstandard = \"802.11n\"\n{rest}[[station]]\nname = \"zz\"\n")
}

#[test]
fn standard_names_the_supported_ones() {
    let all = "\"802.11b\" or \"802.11n\" or \"802.11ac\" or \"802.11ax\"";
    one(&example_with(7, "standard = \"802.11be\""), 7, 12, "cell.standard", &format!("not supported yet; only {all}"));
    one(&example_with(7, "standard = \"11z\""), 7, 12, "cell.standard", &format!("{all} are supported"));
    one(&example_with(7, "standard = 11"), 7, 12, "cell.standard", &format!("expected a string, {all}"));
}

#[test]
fn ht_cell_keys_in_an_80211b_cell() {
    for (line, col) in [
        ("band = \"5GHz\"", 8),
        ("width = 40", 9),
        ("guard_interval = \"short\"", 18),
        ("max_aggregate_time = \"4ms\"", 22),
        ("max_aggregate_mpdus = 64", 23),
        ("mpdu_retry_limit = 31", 20),
        ("txop_limits = \"802.11-2020\"", 15),
    ] {
        let key = line.split(' ').next().unwrap();
        // Line 10 of the example is `[[station]]`: the key lands at the end of [cell].
        let text = example_with(9, &format!("basic_rates = [\"1Mbps\"]\n{line}"));
        one(&text, 10, col, &format!("cell.{key}"), "only in an 802.11n cell (set standard = \"802.11n\"");
    }
}

#[test]
fn txop_limits_name_an_edition() {
    one(
        &ht("txop_limits = \"802.11ac\"\n"),
        3,
        15,
        "cell.txop_limits",
        "unknown value \"802.11ac\"; expected \"802.11-2016\" or \"802.11-2020\"",
    );
}

#[test]
fn dsss_keys_in_an_80211n_cell() {
    one(&ht("preamble = \"short\"\n"), 3, 12, "cell.preamble", "HT-mixed");
    one(&ht("cw_min = 15\n"), 3, 10, "cell.cw_min", "EDCA parameters of each access category");
    one(&ht("cw_max = 1023\n"), 3, 10, "cell.cw_max", "EDCA parameters");
    // `retry_limit` (a lone frame's) stays.
    assert_eq!(parse_scenario(&ht("retry_limit = 3\n"), "test.toml").unwrap().cell.retry_limit, 3);
}

#[test]
fn dcf_deferral_conventions_in_an_80211n_cell() {
    one(&ht("eifs = \"legacy\"\n"), 3, 8, "cell.eifs", "choose between 802.11b conventions");
    one(&ht("collision_defer = \"eifs\"\n"), 3, 19, "cell.collision_defer", "leave the key out");
}

#[test]
fn rate_control_in_an_80211n_cell_is_fixed_or_minstrel() {
    one(&ht("rate_control = \"arf\"\n"), 3, 16, "cell.rate_control", "an 802.11n link takes \"fixed\"");
    one(
        &ht("[[station]]\nname = \"a\"\nrate_control = \"aarf\"\n"),
        5,
        16,
        "station[0].rate_control",
        "is an 802.11b rate control",
    );
    let s = parse_scenario(&ht("rate_control = \"minstrel\"\n"), "test.toml").unwrap();
    assert_eq!(s.cell.rate_control, airsched_core::RateControl::Minstrel);
}

#[test]
fn minstrel_ht_is_for_80211n_links_only() {
    let s = parse_scenario(&ht("rate_control = \"minstrel_ht\"\n"), "test.toml").unwrap();
    assert_eq!(s.cell.rate_control, airsched_core::RateControl::MinstrelHt);
    one(
        &example_with(12, "rate = \"11Mbps\"\nrate_control = \"minstrel_ht\""),
        13,
        16,
        "station[0].rate_control",
        "\"minstrel_ht\" is an 802.11n rate control",
    );
}

#[test]
fn bad_band() {
    one(&ht("band = \"6GHz\"\n"), 3, 8, "cell.band", "6 GHz is 802.11ax (HE) only");
    one(&ht("band = 2.4\n"), 3, 8, "cell.band", "(with quotes), found float 2.4");
}

#[test]
fn bad_width() {
    one(&ht("width = 80\n"), 3, 9, "cell.width", "80 MHz needs 802.11ac or 802.11ax");
    one(&ht("width = \"40MHz\"\n"), 3, 9, "cell.width", "20 or 40 (MHz, an integer without quotes or unit)");
}

#[test]
fn bad_guard_interval() {
    one(&ht("guard_interval = \"400ns\"\n"), 3, 18, "cell.guard_interval", "expected \"long\" or \"short\"");
}

#[test]
fn ht_basic_rates_are_ofdm_rates() {
    one(
        &ht("basic_rates = [\"6Mbps\", \"11Mbps\"]\n"),
        3,
        25,
        "cell.basic_rates[1]",
        "\"11Mbps\" is an 802.11b (DSSS) rate, but this cell is 802.11n",
    );
    let e = &errors(&ht("basic_rates = [\"6Mbps\", \"11Mbps\"]\n"))[0];
    assert!(e.message.contains("\"6Mbps\", \"9Mbps\", \"12Mbps\""), "{e}");
    one(
        &ht("basic_rates = [\"7Mbps\"]\n"),
        3,
        16,
        "cell.basic_rates[0]",
        "\"7Mbps\" is not an OFDM rate: expected one of \"6Mbps\"",
    );
    one(
        &ht("basic_rates = [\"6\", \"6Mbps\"]\n"),
        3,
        21,
        "cell.basic_rates[1]",
        "duplicate rate 6Mbps (already listed as cell.basic_rates[0])",
    );
    one(&ht("basic_rates = []\n"), 3, 15, "cell.basic_rates", "[\"6Mbps\", \"12Mbps\", \"24Mbps\"]");
}

#[test]
fn max_aggregate_time_is_bounded_by_the_ppdu_limit() {
    one(
        &ht("max_aggregate_time = \"6ms\"\n"),
        3,
        22,
        "cell.max_aggregate_time",
        "at most 5484us (the longest HT-mixed PPDU), got 6ms",
    );
    one(&ht("max_aggregate_time = \"0ms\"\n"), 3, 22, "cell.max_aggregate_time", "must be greater than zero");
    one(&ht("max_aggregate_time = 4\n"), 3, 22, "cell.max_aggregate_time", "a string like \"4s\"");
}

#[test]
fn max_aggregate_mpdus_and_mpdu_retry_limit_ranges() {
    one(&ht("max_aggregate_mpdus = 65\n"), 3, 23, "cell.max_aggregate_mpdus", "must be 1 to 64, got 65");
    one(&ht("mpdu_retry_limit = 0\n"), 3, 20, "cell.mpdu_retry_limit", "between 1 and 255, got 0");
}

#[test]
fn ap_mac_keys_in_an_80211b_cell() {
    for (line, col) in [
        ("queueing = \"airtime\"", 12),
        ("mac_queue = \"fq-mac\"", 13),
        ("driver_queue_limit = 10", 22),
        ("airtime = \"ath9k\"", 11),
        ("airtime_rx = false", 14),
        ("aql = false", 7),
        ("fq_kernel = \"4.11\"", 13),
    ] {
        let key = line.split(' ').next().unwrap();
        one(&example_plus(&format!("[ap]\n{line}\n")), 21, col, &format!("ap.{key}"), "only in an 802.11n cell");
    }
    // The server has no such keys.
    one(&example_plus("[server]\naql = true\n"), 21, 1, "server.aql", "`aql` belongs in [ap]");
}

#[test]
fn station_uplink_driver_keys() {
    one(
        &ht("[[station]]\nname = \"a\"\naggregation = \"eager\"\n"),
        5,
        15,
        "station[0].aggregation",
        "expected \"driver\" or \"at-access\"",
    );
    one(
        &ht("[[station]]\nname = \"a\"\ndriver_queue_limit = 0\n"),
        5,
        22,
        "station[0].driver_queue_limit",
        "between 1 and 100000, got 0",
    );
    let errs = errors(&example_plus("[[station]]\nname = \"b\"\nrate = \"1Mbps\"\naggregation = \"at-access\"\n"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].key, "station[1].aggregation");
    assert!(errs[0].message.contains("only in an 802.11n cell"), "{errs:#?}");
}

#[test]
fn bad_mac_queue() {
    one(&ht("[ap]\nmac_queue = \"codel\"\n"), 4, 13, "ap.mac_queue", "expected \"fifo\" or \"fq-mac\"");
}

#[test]
fn driver_queue_limit_only_with_the_driver_fifo() {
    one(
        &ht("[ap]\nmac_queue = \"fq-mac\"\ndriver_queue_limit = 100\n"),
        5,
        22,
        "ap.driver_queue_limit",
        "applies only to mac_queue = \"fifo\"",
    );
    one(
        &ht("[ap]\nqueueing = \"airtime\"\ndriver_queue_limit = 100\n"),
        5,
        22,
        "ap.driver_queue_limit",
        "FQ-MAC has no driver FIFO",
    );
    one(&ht("[ap]\ndriver_queue_limit = 0\n"), 4, 22, "ap.driver_queue_limit", "between 1 and 100000, got 0");
}

#[test]
fn airtime_scheduler_needs_fq_mac() {
    one(
        &ht("[ap]\nairtime = \"ath9k\"\n"),
        4,
        11,
        "ap.airtime",
        "mac_queue = \"fifo\" (the default) does not have; set mac_queue = \"fq-mac\"",
    );
    one(&ht("[ap]\nmac_queue = \"fifo\"\nairtime = \"mac80211\"\n"), 5, 11, "ap.airtime", "set mac_queue = \"fq-mac\"");
    one(&ht("[ap]\nairtime = \"on\"\n"), 4, 11, "ap.airtime", "expected \"off\" or \"ath9k\" or \"mac80211\"");
}

#[test]
fn aql_needs_the_mac80211_scheduler() {
    one(
        &ht("[ap]\nmac_queue = \"fq-mac\"\nairtime = \"ath9k\"\naql = true\n"),
        6,
        7,
        "ap.aql",
        "AQL (Airtime Queue Limits) is part of mac80211's airtime scheduler in this model; set airtime = \"mac80211\"",
    );
    one(&ht("[ap]\naql = true\n"), 4, 7, "ap.aql", "part of mac80211's airtime scheduler");
    one(
        &ht("[ap]\nqueueing = \"airtime\"\naql = true\n"),
        5,
        7,
        "ap.aql",
        "(with mac_queue = \"fq-mac\") instead of `queueing`",
    );
    // Off is always fine.
    assert!(parse_scenario(&ht("[ap]\naql = false\n"), "test.toml").is_ok());
}

#[test]
fn fq_kernel_only_with_fq_mac() {
    one(&ht("[ap]\nfq_kernel = \"6.18\"\n"), 4, 13, "ap.fq_kernel", "applies only with mac_queue = \"fq-mac\"");
    one(
        &ht("[ap]\nmac_queue = \"fq-mac\"\nfq_kernel = 6.18\n"),
        5,
        13,
        "ap.fq_kernel",
        "expected a string, \"4.11\" or \"6.18\", found float 6.18",
    );
}

#[test]
fn queueing_preset_conflicts_with_explicit_keys() {
    let errs = errors(&ht("[ap]\nqueueing = \"fq-mac\"\nmac_queue = \"fq-mac\"\nairtime = \"ath9k\"\n"));
    assert_eq!(errs.len(), 2, "{errs:#?}");
    check(&errs[0], 5, 13, "ap.mac_queue", "`queueing` (line 4) already sets mac_queue and airtime");
    check(&errs[1], 6, 11, "ap.airtime", "not both `queueing` and `airtime`");
    one(
        &ht("[ap]\nqueueing = \"codel\"\n"),
        4,
        12,
        "ap.queueing",
        "expected \"fifo\" or \"fq_codel\" or \"fq-mac\" or \"airtime\"",
    );
}

#[test]
fn queueing_fq_codel_with_an_ap_script() {
    one(
        &ht("[ap]\ntc = \"tc qdisc add dev wlan0 root pfifo\"\nqueueing = \"fq_codel\"\n"),
        5,
        12,
        "ap.queueing",
        "queueing = \"fq_codel\" sets the qdisc; remove ap.tc or choose mac_queue",
    );
    // Another preset leaves the script alone.
    let s = parse_scenario(&ht("[ap]\ntc = \"tc qdisc add dev wlan0 root pfifo\"\nqueueing = \"fifo\"\n"), "test.toml")
        .unwrap();
    assert!(s.ap.tc.unwrap().text.contains("pfifo"));
}

#[test]
fn station_rate_in_an_80211n_cell() {
    one(&ht("[[station]]\nname = \"a\"\nrate = \"11Mbps\"\n"), 5, 8, "station[0].rate", "802.11n stations take `mcs`");
}

#[test]
fn station_ht_keys_in_an_80211b_cell() {
    // `mcs` instead of `rate`: the missing `rate` is not reported on top.
    one(&example_with(12, "mcs = 7"), 12, 7, "station[0].mcs", "only in an 802.11n cell");
    let errs = errors(&example_plus("[[station]]\nname = \"b\"\nrate = \"1Mbps\"\nairtime_weight = 512\n"));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    check(&errs[0], 23, 18, "station[1].airtime_weight", "only in an 802.11n cell (set standard = \"802.11n\"");
}

#[test]
fn bad_mcs_and_airtime_weight() {
    one(
        &ht("[[station]]\nname = \"a\"\nmcs = 16\n"),
        5,
        7,
        "station[0].mcs",
        "MCS 16 does not exist here: an 802.11n station takes MCS 0-15",
    );
    one(
        &ht("[[station]]\nname = \"a\"\nmcs = \"MCS7\"\n"),
        5,
        7,
        "station[0].mcs",
        "expected an integer between 0 and 15",
    );
    one(
        &ht("[[station]]\nname = \"a\"\nairtime_weight = 0\n"),
        5,
        18,
        "station[0].airtime_weight",
        "between 1 and 65535, got 0",
    );
}

#[test]
fn sack_is_for_tcp_flows() {
    one(&example_plus("sack = false\n"), 20, 8, "flow[0].sack", "`sack` is for TCP flows (protocol = \"tcp\")");
    let tcp = example_with(15, "protocol = \"tcp\"").replace("rate = \"6Mbit\"\n", "");
    one(&format!("{tcp}sack = 1\n"), 19, 8, "flow[0].sack", "expected a boolean (true or false), found integer 1");
    let s = parse_scenario(&format!("{tcp}sack = false\n"), "test.toml").unwrap();
    assert!(!s.flows[0].sack);
}

/// The example's `[cell]` with the PCF lines `pcf` (from line 10 on).
fn with_pcf(lines: &str) -> String {
    example_with(9, &format!("basic_rates = [\"1Mbps\", \"2Mbps\"]\n{lines}"))
}

#[test]
fn pcf_cfp_max_duration_within_802_11_bounds() {
    // Two maximum-size MPDUs at 11 Mb/s, a beacon and CF-End do not fit in 2 TU.
    one(
        &with_pcf("pcf = true\ncfp_max_duration = 2"),
        11,
        20,
        "cell.cfp_max_duration",
        "shorter than a beacon, one maximum-size polled exchange and CF-End",
    );
    // A CFP as long as the beacon interval leaves no room for a DCF exchange.
    one(&with_pcf("pcf = true\ncfp_max_duration = 100"), 11, 20, "cell.cfp_max_duration", "to the contention period");
    one(
        &with_pcf("pcf = true\ncfp_max_duration = \"50ms\""),
        11,
        20,
        "cell.cfp_max_duration",
        "not a whole number of TU",
    );
    one(
        &with_pcf("pcf = true\ncfp_max_duration = true"),
        11,
        20,
        "cell.cfp_max_duration",
        "an integer number of TU like 50",
    );
    one(&with_pcf("pcf = true"), 10, 7, "cell.cfp_max_duration", "needs the longest contention-free period");
    // In TU or as a duration that is a whole number of them.
    let s = airsched_core::parse_scenario(
        &with_pcf("pcf = true\ncfp_max_duration = \"51.2ms\"\ndtim_period = 2\ncfp_period = 3"),
        "t.toml",
    )
    .unwrap();
    let p = s.cell.pcf.unwrap();
    assert_eq!((p.cfp_max_duration, p.dtim_period, p.cfp_period), (airsched_core::Nanos::from_us(51_200), 2, 3));
    assert!(s.stations[0].cf_pollable, "on the polling list by default");
}

#[test]
fn pcf_keys_need_pcf_and_an_802_11b_cell_with_beacons() {
    one(&with_pcf("dtim_period = 2"), 10, 15, "cell.dtim_period", "set pcf = true");
    one(
        &example_with(12, "rate = \"11Mbps\"\ncf_pollable = false"),
        13,
        15,
        "station[0].cf_pollable",
        "set pcf = true in [cell]",
    );
    one(&with_pcf("pcf = true\ncfp_max_duration = 50\nbeacons = false"), 10, 7, "cell.pcf", "set beacons = true");
    one(
        &with_pcf("pcf = true\ncfp_max_duration = 50\ndtim_period = 0"),
        12,
        15,
        "cell.dtim_period",
        "between 1 and 255",
    );
    let nobody = with_pcf("pcf = true\ncfp_max_duration = 50")
        .replace("rate = \"11Mbps\"", "rate = \"11Mbps\"\ncf_pollable = false");
    one(&nobody, 10, 7, "cell.pcf", "no station is cf_pollable");
    let n = "[cell]\nstandard = \"802.11n\"\npcf = true\ncfp_max_duration = 50\n[[station]]\nname = \"s\"\nmcs = 7\n";
    one(n, 3, 7, "cell.pcf", "802.11b cells only");
}

#[test]
fn ap_tx_buffers_is_a_count_of_an_80211b_aps_frames() {
    let buffers = |n: &str| example_plus(&format!("[ap]\ntx_buffers = {n}\n"));
    let s = parse_scenario(&buffers("8"), "test.toml").unwrap();
    assert_eq!(s.legacy_ap.tx_buffers, airsched_core::TxBuffers::HOSTAP);
    assert_eq!(parse_scenario(EXAMPLE, "test.toml").unwrap().legacy_ap.tx_buffers, airsched_core::TxBuffers::ONE);
    one(&buffers("0"), 21, 14, "ap.tx_buffers", "between 1 and 256");
    one(&buffers("\"8\""), 21, 14, "ap.tx_buffers", "without quotes");
    // A point coordinator polls with the MAC's one frame.
    let pcf = format!("{}[ap]\ntx_buffers = 8\n", with_pcf("pcf = true\ncfp_max_duration = 50"));
    one(&pcf, 23, 14, "ap.tx_buffers", "point coordinator");
    let pcf = format!("{}[ap]\nrate_control = \"hostap\"\n", with_pcf("pcf = true\ncfp_max_duration = 50"));
    one(&pcf, 23, 16, "ap.rate_control", "point coordinator");
    one(&example_plus("[ap]\nrate_control = \"arf\"\n"), 21, 16, "ap.rate_control", "hostap");
    let s = parse_scenario(&example_plus("[ap]\nrate_control = \"hostap\"\n"), "test.toml").unwrap();
    assert_eq!(s.legacy_ap.rate_control, airsched_core::ApRateControl::HostAp);
    // An 802.11n AP has its own driver queues.
    let ht = EXAMPLE
        .replace(
            "standard = \"802.11b\"\npreamble = \"long\"\nbasic_rates = [\"1Mbps\", \"2Mbps\"]\n",
            "standard = \"802.11n\"\n",
        )
        .replace("rate = \"11Mbps\"\n", "")
        + "[ap]\ntx_buffers = 8\n";
    let errs = errors(&ht);
    assert!(errs.iter().any(|e| e.key == "ap.tx_buffers" && e.message.contains("driver_queue_limit")), "{errs:#?}");
}
