//! The schema matches its structs: every field of a row struct is a column, once, in order, with
//! the type its Rust type implies, and each column's cell is that field's value. Checked against
//! the rows of real runs through their `Debug` text, which the macro does not generate.

use super::*;
use crate::{parse_scenario, RunResults, Simulation};

/// Field names and value texts of a struct's `{:#?}` output (top level only).
fn debug_fields(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines().skip(1) {
        // Top-level fields are indented by exactly four spaces; nested values deeper.
        if let Some(rest) = line.strip_prefix("    ").filter(|r| !r.starts_with(' ')) {
            if let Some((name, value)) = rest.split_once(": ") {
                out.push((name.to_string(), value.trim_end_matches(',').to_string()));
            }
        }
    }
    out
}

/// The `Debug` text of a cell's value, to compare with the field's.
fn cell_text(cell: Cell<'_>) -> String {
    match cell {
        Cell::Str(s) => format!("{s:?}"),
        Cell::Float(x) => format!("{x:?}"),
        Cell::Int(i) => format!("{i:?}"),
        Cell::UInt(u) => format!("{u:?}"),
    }
}

fn cell_type(cell: Cell<'_>) -> ColumnType {
    match cell {
        Cell::Str(_) => ColumnType::Str,
        Cell::Float(_) => ColumnType::Float,
        Cell::Int(_) | Cell::UInt(_) => ColumnType::Int,
    }
}

/// Every row's `Debug` fields, minus `extra` trailing non-column fields, are the table's
/// columns in order, and each cell prints as its field does.
fn check_rows<T: Table + std::fmt::Debug>(rows: &[T], extra: &[&str]) {
    assert!(!rows.is_empty(), "{}: no rows to check", T::NAME);
    for row in rows {
        let fields = debug_fields(&format!("{row:#?}"));
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        let columns: Vec<&str> = T::COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names[..columns.len()], columns[..], "{}: columns and fields differ", T::NAME);
        assert_eq!(names[columns.len()..], extra[..], "{}: fields that are not columns", T::NAME);
        for (i, col) in T::COLUMNS.iter().enumerate() {
            let cell = row.cell(i);
            assert_eq!(cell_type(cell), col.ty, "{}.{}", T::NAME, col.name);
            assert_eq!(cell_text(cell), fields[i].1, "{}.{}: the cell is not the field", T::NAME, col.name);
        }
    }
}

/// A shipped scenario, shortened, and the scenario the simulation ran (with the flows it adds:
/// TCP ACKs, ping replies), which sample indices refer to.
fn run(file: &str, duration_s: u64) -> (RunResults, crate::Scenario) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/").to_string() + file;
    let text = std::fs::read_to_string(&path).unwrap();
    let mut scn = parse_scenario(&text, &path).unwrap();
    scn.run.duration = Nanos::from_secs(duration_s);
    let mut sim = Simulation::new(&scn).unwrap();
    let results = sim.finish().unwrap();
    (results, sim.scenario().clone())
}

#[test]
fn every_field_is_a_column_with_its_value_and_type() {
    // 802.11b with a saturated uplink (rates with mcs -1), and 802.11n with TCP and pings
    // (aggregates, MCS rates, ping rows).
    let (b, _) = run("anomaly.toml", 3);
    let (n, _) = run("80211n-edca-minstrel.toml", 4);
    for r in [&b, &n] {
        check_rows(&r.stations, &[]);
        check_rows(&r.flows, &[]);
        check_rows(&r.nodes, &[]);
        check_rows(&r.rates, &[]);
        check_rows(std::slice::from_ref(&r.summary), &["conservation"]);
        check_rows(std::slice::from_ref(&r.summary.conservation), &["per_flow_in_flight"]);
    }
    check_rows(&n.pings, &[]);
    check_rows(&n.aggregates, &[]);
    assert!(b.rates.iter().all(|r| r.cell(3) == Cell::Int(-1)), "802.11b rates have mcs -1");
}

#[test]
fn sample_rows_convert_their_sample() {
    let (r, scn) = run("80211n-edca-minstrel.toml", 3);
    let col = |name: &str| SampleRow::COLUMNS.iter().position(|c| c.name == name).unwrap();
    assert_eq!(
        SampleRow::COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>(),
        ["time_s", "kind", "name", "goodput_mbps", "snr_db", "estimate_mbps", "cwnd_bytes"]
    );
    let mut kinds = [0, 0];
    let stations: Vec<&str> = scn.stations.iter().map(|s| s.name.as_str()).collect();
    let flows: Vec<&str> = scn.flows.iter().map(|f| f.name.as_str()).collect();
    for s in &r.samples {
        let name = match s.kind {
            SampleKind::Station => &scn.stations[s.index as usize].name,
            SampleKind::Flow => &scn.flows[s.index as usize].name,
        };
        let row = SampleRow::new(s, &stations, &flows);
        assert_eq!(row.cell(col("time_s")), Cell::Float(s.time.as_secs_f64()));
        let kind = if s.kind == SampleKind::Station { "station" } else { "flow" };
        kinds[usize::from(s.kind == SampleKind::Flow)] += 1;
        assert_eq!(row.cell(col("kind")), Cell::Str(kind));
        assert_eq!(row.cell(col("name")), Cell::Str(name));
        assert_eq!(cell_text(row.cell(col("goodput_mbps"))), format!("{:?}", s.goodput_bps / 1e6));
        assert_eq!(cell_text(row.cell(col("snr_db"))), format!("{:?}", s.snr_db));
        assert_eq!(cell_text(row.cell(col("estimate_mbps"))), format!("{:?}", s.estimate_bps / 1e6));
        assert_eq!(cell_text(row.cell(col("cwnd_bytes"))), format!("{:?}", s.cwnd_bytes));
        for (i, c) in SampleRow::COLUMNS.iter().enumerate() {
            assert_eq!(cell_type(row.cell(i)), c.ty, "samples.{}", c.name);
        }
    }
    assert!(kinds[0] > 0 && kinds[1] > 0, "samples of both kinds: {kinds:?}");
    assert!(r.samples.iter().any(|s| !s.cwnd_bytes.is_nan()), "a TCP flow's cwnd is sampled");
}

#[test]
fn schema_names_types_units_and_docs() {
    let schema = schema();
    let tables: Vec<&str> = schema.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        tables,
        [
            "stations",
            "flows",
            "samples",
            "interfaces",
            "nodes",
            "rates",
            "pings",
            "aggregates",
            "bluetooth",
            "coexistence",
            "cfp",
            "polls",
            "ofdma",
            "mac80211_stations",
            "mac80211_txqs",
            "demotions",
            "summary",
            "conservation"
        ]
    );
    let units = ["", "s", "ms", "us", "Mb/s", "dB", "B", "B/s", "1/s"];
    for (table, columns) in &schema {
        for (i, c) in columns.iter().enumerate() {
            let at = format!("{table}.{}", c.name);
            assert!(!columns[..i].iter().any(|d| d.name == c.name), "{at} appears twice");
            assert!(c.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'), "{at}");
            assert!(units.contains(&c.unit), "{at}: unit {:?}", c.unit);
            let doc = c.doc();
            assert!(doc.len() > 8 && !doc.contains('\n') && !doc.contains("  "), "{at}: doc {doc:?}");
            // A unit in the name is the column's unit.
            for (suffix, unit) in [("_mbps", "Mb/s"), ("_ms", "ms"), ("_s", "s"), ("_db", "dB"), ("_seconds", "s")] {
                if c.name.ends_with(suffix) {
                    assert_eq!(c.unit, unit, "{at}");
                }
            }
        }
    }
    let summary = &schema.iter().find(|(t, _)| *t == "summary").expect("summary").1;
    assert_eq!(summary.last(), Some(&SAMPLE_INTERVAL_COLUMN));
    assert_eq!(summary.len(), Summary::COLUMNS.len() + 1);
    // Types follow the Rust types: text, counters, the signed MCS, and figures.
    let ty = |t: &[Column], n: &str| t.iter().find(|c| c.name == n).unwrap().ty;
    assert_eq!(ty(StationResult::COLUMNS, "name"), ColumnType::Str);
    assert_eq!(ty(StationResult::COLUMNS, "tx_frames"), ColumnType::Int);
    assert_eq!(ty(StationResult::COLUMNS, "goodput_mbps"), ColumnType::Float);
    assert_eq!(ty(RateRow::COLUMNS, "direction"), ColumnType::Str);
    assert_eq!(ty(RateRow::COLUMNS, "mcs"), ColumnType::Int);
    assert_eq!(ty(AggregateRow::COLUMNS, "mpdus"), ColumnType::Int);
    assert_eq!(ty(SampleRow::COLUMNS, "kind"), ColumnType::Str);
    assert_eq!(ty(Summary::COLUMNS, "seed"), ColumnType::Int);
    assert_eq!(StationResult::COLUMNS[0].doc(), "The station's name.");
    assert_eq!(ty(FlowResult::COLUMNS, "tcp_cwnd_end"), ColumnType::Int);
    assert_eq!(FlowResult::COLUMNS.iter().find(|c| c.name == "tcp_cwnd_end").unwrap().unit, "B");
}

#[test]
#[should_panic(expected = "nodes has 5 columns, not 6")]
fn a_column_past_the_last_panics() {
    let row = NodeResult { name: "ap".into(), airtime_s: 0.0, airtime_share: 0.0, tx_attempts: 0, beacons: 0 };
    row.cell(5);
}
