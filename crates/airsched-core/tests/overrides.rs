//! Overrides (`KEY=VALUE` beside a scenario file): each kind of key path, value and error, with
//! its exact position in `<command line>`, and that an override changes what is simulated exactly
//! as the same edit of the file does.

use airsched_core::DsssRate;
use airsched_core::Endpoint;
use airsched_core::{parse_scenario, parse_scenario_with, toml_string, Scenario, ScenarioError, OVERRIDES_FILE};
use airsched_core::{run_scenario, Nanos};

const EXAMPLE: &str = include_str!("fixtures/example.toml");

/// Two stations and two flows, with names to select them by.
const TWO: &str = r#"[run]
duration = "3s"
warmup = "1s"
[[station]]
name = "sta1"
rate = "11Mbps"
[[station]]
name = "sta.2"
rate = "11Mbps"
position = "good"
[[flow]]
name = "down1"
src = "server"
dst = "sta1"
rate = "saturate"
[[flow]]
name = "down2"
src = "server"
dst = "sta.2"
rate = "saturate"
stop = "2s"
"#;

fn with(text: &str, overrides: &[&str]) -> Scenario {
    parse_scenario_with(text, "test.toml", overrides).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(text: &str, overrides: &[&str]) -> Vec<ScenarioError> {
    match parse_scenario_with(text, "test.toml", overrides) {
        Ok(_) => panic!("{overrides:?} were accepted"),
        Err(e) => e.0,
    }
}

/// `overrides` give exactly one error, at (file, line, column), with this key and message part.
#[track_caller]
fn one(text: &str, overrides: &[&str], at: (&str, u32, u32), key: &str, fragment: &str) {
    let errs = errors(text, overrides);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = &errs[0];
    assert_eq!((e.file.as_str(), e.line, e.column, e.key.as_str()), (at.0, at.1, at.2, key), "{e}");
    assert!(e.message.contains(fragment), "{fragment:?} not in: {e}");
}

const CL: &str = OVERRIDES_FILE;

#[test]
fn values_of_every_type_and_bare_words() {
    let s = with(
        EXAMPLE,
        &[
            "cell.retry_limit=4",
            "cell.beacons=false",
            "cell.basic_rates=[\"1Mbps\", \"5.5Mbps\"]",
            "station[0].rate=2Mbps",
            "run.duration = \"30s\"",
            "run.seed=0x10",
            "station[0].fading={sigma=2, coherence=\"1s\"}",
            "station[0].snr=12.5",
        ],
    );
    assert_eq!((s.cell.retry_limit, s.cell.beacons), (4, false));
    assert_eq!(s.cell.basic_rates, vec![DsssRate::R1, DsssRate::R5_5]);
    assert_eq!(s.stations[0].rate, DsssRate::R2);
    assert_eq!((s.run.duration, s.run.seed), (Nanos::from_secs(30), 16));
    assert!(s.stations[0].channel.is_some());
    // Quoted or bare, a string is a string; a later override of a key wins.
    let quoted = with(EXAMPLE, &["station[0].rate=\"5.5Mbps\""]);
    let bare = with(EXAMPLE, &["station[0].rate=1Mbps", "station[0].rate=5.5Mbps"]);
    assert_eq!(quoted, bare);
    assert_eq!(bare.stations[0].rate, DsssRate::R5_5);
}

#[test]
fn an_override_is_the_same_as_editing_the_file() {
    let edited =
        EXAMPLE.replace("rate = \"11Mbps\"", "rate = \"2Mbps\"\ntxqueuelen = 20").replace("seed = 1", "seed = 7");
    let by_file = parse_scenario(&edited, "test.toml").unwrap();
    let by_override = with(EXAMPLE, &["station[0].rate=2Mbps", "station.sta1.txqueuelen=20", "run.seed=7"]);
    assert_eq!(by_file, by_override);
    // A section the file does not have is created.
    let s = with(EXAMPLE, &["wired.delay=2ms", "ap.txqueuelen=10"]);
    assert_eq!((s.wired.delay, s.ap.txqueuelen), (Nanos::from_ms(2), 10));
}

#[test]
fn stations_and_flows_by_index_and_by_name() {
    let by_index = with(TWO, &["station[1].rate=1Mbps", "flow[1].rate=1mbit"]);
    let by_brackets = with(TWO, &["station[sta.2].rate=1Mbps", "flow[down2].rate=1mbit"]);
    // A dotted name may contain dots: the longest name that matches is taken.
    let by_dots = with(TWO, &["station.sta.2.rate=1Mbps", "flow.down2.rate=1mbit"]);
    let by_number = with(TWO, &["station.1.rate=1Mbps", "flow.1.rate=1mbit"]);
    assert_eq!(by_index.stations[1].rate, DsssRate::R1);
    assert_eq!(by_index.stations[0].rate, DsssRate::R11);
    for s in [&by_brackets, &by_dots, &by_number] {
        assert_eq!(s, &by_index);
    }
    // A whole entry replaced; the flow that named it follows the new name.
    let s = with(TWO, &["station[1]={name=\"sta3\", rate=\"2Mbps\"}", "flow[down2].dst=sta3"]);
    assert_eq!((s.stations[1].name.as_str(), s.stations[1].rate), ("sta3", DsssRate::R2));
    assert_eq!(s.flows[1].dst, Endpoint::Station(1));
    // Inside an entry: an array element, a sub-table key.
    let s = with(
        EXAMPLE,
        &[
            "cell.basic_rates[1]=11Mbps",
            "station[0].snr=12",
            "station[0].fading={sigma=2, coherence=\"1s\"}",
            "station[0].fading.sigma=3",
        ],
    );
    assert_eq!(s.cell.basic_rates, vec![DsssRate::R1, DsssRate::R11]);
    let again = with(
        EXAMPLE,
        &[
            "cell.basic_rates=[\"1Mbps\", \"11Mbps\"]",
            "station[0].snr=12",
            "station[0].fading={sigma=3, coherence=\"1s\"}",
        ],
    );
    assert_eq!(s, again);
}

#[test]
fn an_override_changes_the_result() {
    let base = run_scenario(&with(TWO, &[])).unwrap();
    let slow = run_scenario(&with(TWO, &["station[sta.2].rate=1Mbps"])).unwrap();
    let edited = TWO.replacen("rate = \"11Mbps\"\nposition", "rate = \"1Mbps\"\nposition", 1);
    let by_file = run_scenario(&parse_scenario(&edited, "test.toml").unwrap()).unwrap();
    // The performance anomaly: a 1 Mb/s station slows the 11 Mb/s one down too.
    assert!(
        slow.stations[0].goodput_mbps < 0.5 * base.stations[0].goodput_mbps,
        "{} vs {}",
        slow.stations[0].goodput_mbps,
        base.stations[0].goodput_mbps
    );
    // Debug text, since NaN (a mean of nothing) is not equal to itself.
    assert_eq!(format!("{:?}", slow.without_wall_time()), format!("{:?}", by_file.without_wall_time()));
}

#[test]
fn a_bad_value_gets_the_files_message_at_the_override() {
    one(EXAMPLE, &["cell.retry_limit=400"], (CL, 1, 18), "cell.retry_limit", "must be between 1 and 255, got 400");
    one(EXAMPLE, &["run.seed=-1"], (CL, 1, 10), "run.seed", "must be between 0 and 18446744073709551615, got -1");
    one(EXAMPLE, &["cell.beacons=true", "station[0].rate=3Mbps"], (CL, 2, 17), "station[0].rate", "3Mbps");
    one(EXAMPLE, &["cell.retry_limit=\"4\""], (CL, 1, 18), "cell.retry_limit", "(without quotes)");
    one(EXAMPLE, &["run.duration=5 fortnights"], (CL, 1, 14), "run.duration", "fortnights");
    one(
        EXAMPLE,
        &["cell.preamble=medium"],
        (CL, 1, 15),
        "cell.preamble",
        "unknown value \"medium\"; expected \"long\" or \"short\"",
    );
    // The same as in the file: the file's message.
    let in_file = parse_scenario(&EXAMPLE.replace("seed = 1", "seed = -1"), "test.toml").unwrap_err();
    let by_override = errors(EXAMPLE, &["run.seed=-1"]);
    assert_eq!(in_file.0[0].message, by_override[0].message);
    // Errors of the file and of the overrides together: the file's first.
    let errs = errors(&EXAMPLE.replace("size = 1024", "size = 0"), &["cell.retry_limit=0"]);
    assert_eq!(errs.iter().map(|e| e.file.as_str()).collect::<Vec<_>>(), ["test.toml", CL]);
}

#[test]
fn unknown_keys_are_the_files_unknown_keys() {
    one(
        EXAMPLE,
        &["cell.retry_limt=4"],
        (CL, 1, 6),
        "cell.retry_limt",
        "unknown key `retry_limt` in [cell]; did you mean `retry_limit`?",
    );
    one(EXAMPLE, &["cel.retry_limit=4"], (CL, 1, 1), "cel", "unknown top-level key `cel`; did you mean `cell`?");
    one(EXAMPLE, &["station[0].sed=3"], (CL, 1, 12), "station[0].sed", "unknown key `sed`");
    one(EXAMPLE, &["run.seed.x=1"], (CL, 1, 10), "run.seed.x", "`run.seed` is integer 1, not a table");
}

#[test]
fn selecting_a_missing_entry() {
    one(
        TWO,
        &["station[2].rate=1Mbps"],
        (CL, 1, 9),
        "station[2].rate",
        "no station[2]: the scenario has 2 [[station]] entries, station[0] to station[1]",
    );
    one(
        TWO,
        &["station[sta3].rate=1Mbps"],
        (CL, 1, 9),
        "station[sta3].rate",
        "no [[station]] named \"sta3\"; did you mean \"sta1\"?",
    );
    one(TWO, &["flow.down3.rate=1mbit"], (CL, 1, 6), "flow.down3.rate", "flow names: \"down1\", \"down2\"");
    one(
        "",
        &["station[0].rate=1Mbps"],
        (CL, 1, 1),
        "station[0].rate",
        "the scenario has no [[station]] to select from",
    );
    one(TWO, &["run[0].seed=1"], (CL, 1, 5), "run[0].seed", "`run` is a table");
}

#[test]
fn malformed_overrides() {
    one(EXAMPLE, &["cell.retry_limit"], (CL, 1, 1), "cell.retry_limit", "expected KEY=VALUE");
    one(EXAMPLE, &["cell.retry_limit="], (CL, 1, 18), "cell.retry_limit", "no value after `=`");
    one(EXAMPLE, &["=4"], (CL, 1, 1), "", "no key before `=`");
    one(EXAMPLE, &["cell..retry_limit=4"], (CL, 1, 6), "cell..retry_limit", "in the key path");
    one(EXAMPLE, &["station[0.rate=1Mbps"], (CL, 1, 8), "station[0.rate", "`[` without `]`");
    one(EXAMPLE, &["station[].rate=1Mbps"], (CL, 1, 8), "station[].rate", "selects nothing");
    one(
        EXAMPLE,
        &["cell.basic_rates=[\"1Mbps\""],
        (CL, 1, 26),
        "cell.basic_rates",
        "TOML syntax error in the value [\"1Mbps\": unclosed array",
    );
    one(EXAMPLE, &["station[0].fading={sigma=2"], (CL, 1, 27), "station[0].fading", "unclosed inline table");
}

#[test]
fn a_duration_override_against_the_files_times_is_reported_at_the_override() {
    // The file's warm-up is 1 s: the override is what broke the relation.
    one(
        &TWO.replace("stop = \"2s\"\n", ""),
        &["run.duration=1s"],
        (CL, 1, 14),
        "run.duration",
        "duration 1s must be longer than the warm-up 1s of the scenario",
    );
    one(
        TWO,
        &["run.duration=1500ms"],
        (CL, 1, 14),
        "run.duration",
        "duration 1500ms ends before flow down2 stops at 2s",
    );
    one(
        &TWO.replace("stop = \"2s\"", "start = \"2s\""),
        &["run.duration=1500ms"],
        (CL, 1, 14),
        "run.duration",
        "duration 1500ms ends before flow down2 starts at 2s",
    );
    one(
        &TWO.replace("warmup = \"1s\"", "warmup = \"0s\"\nsample_interval = \"1s\"").replace("stop = \"2s\"\n", ""),
        &["run.duration=500ms"],
        (CL, 1, 14),
        "run.duration",
        "holds fewer than two sample intervals of 1s",
    );
    // The same for the contention window: the overridden bound is the one named.
    let cw = EXAMPLE.replace("preamble = \"long\"", "cw_min = 15\ncw_max = 63");
    one(&cw, &["cell.cw_min=127"], (CL, 1, 13), "cell.cw_min", "cw_min (127) must not exceed cw_max (63)");
    one(&cw, &["cell.cw_max=7"], (CL, 1, 13), "cell.cw_max", "cw_min (15) must not exceed cw_max (7)");
    // Both overridden: the file's own message, at the later key.
    one(
        TWO,
        &["run.warmup=3s", "run.duration=2500ms"],
        (CL, 1, 12),
        "run.warmup",
        "warmup (3s) must be shorter than run.duration (2500ms)",
    );
    // Without a warm-up in the file, a short run gets no warm-up, as the file would.
    let s = with(&EXAMPLE.replace("warmup = \"1s\"\n", ""), &["run.duration=1s"]);
    assert_eq!((s.run.duration, s.run.warmup), (Nanos::from_secs(1), Nanos::ZERO));
}

#[test]
fn a_string_built_for_an_override_stays_that_string() {
    for name in ["60s", "a \"quoted\" \\ word", "tab\there", "new\nline", "é ü", "x\u{7f}\u{1}", "[not an array]"] {
        let ov = format!("flow[0].name={}", toml_string(name));
        assert_eq!(with(EXAMPLE, &[ov.as_str()]).flows[0].name, name);
    }
    assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

#[test]
fn overrides_never_panic() {
    let keys = [
        "",
        "station",
        "station[0]",
        "station[9]",
        "station.sta1",
        "flow[down1]",
        "cell",
        "run.seed",
        "a.b.c",
        "station[sta1].fading",
        "[",
        "]",
        ".",
        "station[0][0]",
        "cell.basic_rates[0]",
        "cell.basic_rates[5]",
    ];
    let values = [
        "",
        "1",
        "-1",
        "x",
        "\"x\"",
        "[",
        "{",
        "{}",
        "[]",
        "[1, \"a\"]",
        "{a=1}",
        "é",
        "true",
        "1979-05-27",
        "\"unterminated",
        "[[1]]",
        "nan",
    ];
    for k in keys {
        for v in values {
            for ov in [format!("{k}={v}"), format!("{k}.x={v}"), k.to_string(), format!(" {k} = {v} ")] {
                if let Err(e) = parse_scenario_with(TWO, "f.toml", &[ov.as_str()]) {
                    for err in &e.0 {
                        assert!(err.line >= 1 && err.column >= 1, "{err}");
                        let _ = err.to_string();
                    }
                }
            }
        }
    }
}

#[test]
fn an_alternative_replaces_the_files_alternatives() {
    let walking = "[[station]]\nname = \"s\"\nrate = \"1Mbps\"\nschedule = [{ at = \"0s\", snr = 20 }, { at = \"5s\", snr = 0 }]\nschedule_mode = \"linear\"\n\
                   [[flow]]\nname = \"f\"\nsrc = \"server\"\ndst = \"s\"\nrate = \"1mbit\"\ntos = 16\n";
    let s = with(walking, &["station[s].position=good", "flow[f].dscp=46"]);
    let by_file = parse_scenario(
        "[[station]]\nname = \"s\"\nrate = \"1Mbps\"\nposition = \"good\"\n[[flow]]\nname = \"f\"\nsrc = \"server\"\ndst = \"s\"\nrate = \"1mbit\"\ndscp = 46\n",
        "test.toml",
    )
    .unwrap();
    assert_eq!(s, by_file);
    assert_eq!(s.flows[0].tos, 46 << 2);
    // Two overrides of alternatives: the later wins.
    assert_eq!(with(walking, &["station[s].snr=5", "station[s].position=good"]).stations, by_file.stations);
    // The AP's queueing: one key for the papers' configurations, or its two parts.
    let ht = "[cell]\nstandard = \"802.11n\"\n[ap]\nqueueing = \"airtime\"\n[[station]]\nname = \"s\"\nmcs = 7\n";
    let parts = with(ht, &["ap.mac_queue=fq-mac", "ap.airtime=mac80211"]);
    let by_parts = parse_scenario(
        &ht.replace("queueing = \"airtime\"", "mac_queue = \"fq-mac\"\nairtime = \"mac80211\""),
        "test.toml",
    )
    .unwrap();
    assert_eq!(parts.ap_mac, by_parts.ap_mac);
    assert_eq!(
        with(
            &ht.replace("queueing = \"airtime\"", "mac_queue = \"fq-mac\"\nairtime = \"mac80211\""),
            &["ap.queueing=airtime"]
        )
        .ap_mac,
        with(ht, &[]).ap_mac
    );
}

#[test]
fn a_tc_script_by_override_reports_its_errors_at_the_override() {
    let e = errors(EXAMPLE, &["cell.beacons=true", "ap.tc=tc qdisc add dev wlan0 root pfifo limit lots"]);
    assert_eq!(e.len(), 1, "{e:#?}");
    let (file, line, column) = (e[0].file.as_str(), e[0].line, e[0].column);
    // Column 47 of the override is the word `lots`.
    assert_eq!((file, line, column), (CL, 2, 47), "{}", e[0]);
    let quoted = errors(EXAMPLE, &["ap.tc=\"tc qdisc add dev wlan0 root pfifo limit lots\""]);
    assert_eq!((quoted[0].line, quoted[0].column), (1, 48), "{}", quoted[0]);
    // A script that builds: the AP's qdisc is what the override says.
    let s = with(EXAMPLE, &["ap.tc=tc qdisc add dev wlan0 root pfifo limit 5"]);
    assert_eq!(s.ap.tc.as_ref().map(|t| (t.file.as_str(), t.key.as_str())), Some((CL, "ap.tc")));
}
