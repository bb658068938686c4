//! One test per kind of scenario-file error: each checks the exact position, the key and a
//! fragment of the message, so that error reporting stays precise.

use airsched_core::scenario::{parse_scenario, Endpoint, ScenarioError};

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
    assert_eq!(
        (e.line, e.column, e.key.as_str()),
        (line, column, key),
        "wrong position or key in: {e}"
    );
    assert!(
        e.message.contains(fragment),
        "{:?} not found in: {e}",
        fragment
    );
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
    assert!(
        e.to_string()
            .starts_with("test.toml:1:5: TOML syntax error"),
        "{e}"
    );
}

#[test]
fn unknown_key_suggests_the_closest_one() {
    one(
        &example_with(2, "durration = \"60s\""),
        2,
        1,
        "run.durration",
        "did you mean `duration`?",
    );
    one(
        &example_plus("[[stations]]\nname = \"x\"\n"),
        20,
        3,
        "stations",
        "did you mean `station`?",
    );
    // A key of another section says where it belongs.
    one(
        &example_plus("seed = 2\n"),
        20,
        1,
        "flow[0].seed",
        "`seed` belongs in [run]",
    );
}

#[test]
fn wrong_type_says_what_was_expected() {
    one(
        &example_with(2, "duration = 60"),
        2,
        12,
        "run.duration",
        "expected a string like \"60s\", found integer 60",
    );
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
    check(
        &errs[0],
        18,
        8,
        "flow[0].rate",
        "\"6Mbt\" is not a rate: unknown unit \"Mbt\"",
    );
    assert!(errs[0].message.contains("kbit, mbit"), "{}", errs[0]);
    one(
        &example_with(5, "sample_interval = \"200 mS x\""),
        5,
        19,
        "run.sample_interval",
        "unknown unit",
    );
    // A bare number is ambiguous in a duration string.
    one(
        &example_with(5, "sample_interval = \"200\""),
        5,
        19,
        "run.sample_interval",
        "\"10s\" or \"200ms\"",
    );
}

#[test]
fn negative_duration_is_rejected() {
    one(
        &example_with(3, "warmup = \"-1s\""),
        3,
        10,
        "run.warmup",
        "durations must be positive or zero",
    );
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
    one(
        &example_with(17, "dst = \"station1\""),
        17,
        7,
        "flow[0].dst",
        "expected \"server\", \"ap\" or a station name",
    );
}

#[test]
fn duplicate_station_name() {
    let errs = errors(&example_plus(
        "[[station]]\nname = \"sta1\"\nrate = \"1Mbps\"\n",
    ));
    assert_eq!(errs.len(), 1, "{errs:#?}");
    check(
        &errs[0],
        21,
        8,
        "station[1].name",
        "duplicate station name \"sta1\" (already used on line 11)",
    );
}

#[test]
fn duplicate_flow_name() {
    one(
        &example_plus(
            "[[flow]]\nname = \"down1\"\nsrc = \"sta1\"\ndst = \"server\"\nrate = \"saturate\"\n",
        ),
        21,
        8,
        "flow[1].name",
        "duplicate flow name \"down1\" (already used on line 14)",
    );
}

#[test]
fn src_must_differ_from_dst() {
    one(
        &example_with(17, "dst = \"server\""),
        17,
        7,
        "flow[0].dst",
        "must differ from src",
    );
}

#[test]
fn unsupported_standard() {
    one(
        &example_with(7, "standard = \"802.11g\""),
        7,
        12,
        "cell.standard",
        "\"802.11g\" is not supported yet; only \"802.11b\"",
    );
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
    one(
        &example_with(12, ""),
        10,
        1,
        "station[0].rate",
        "missing required key `rate`",
    );
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
    check(
        &errs[1],
        15,
        8,
        "flow[0].stop",
        "stop (90s) is after the end of the run",
    );
    check(
        &errs[2],
        19,
        1,
        "cell.basic_rate",
        "did you mean `basic_rates`?",
    );
    // Display: one line per error.
    let shown = parse_scenario(text, "three.toml").unwrap_err().to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[0].starts_with("three.toml:13:7: flow[0].dst: unknown endpoint"),
        "{shown}"
    );
    assert!(
        lines[2].starts_with("three.toml:19:1: cell.basic_rate: unknown key"),
        "{shown}"
    );
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
