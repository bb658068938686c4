//! TOML scenario file -> [`Scenario`], reporting every problem of the file at once.
//!
//! The document is parsed into `toml`'s spanned tree ([`DeTable`]) and walked by hand: every key
//! is checked against the keys its section knows, every value is converted and range-checked,
//! and every failure becomes a [`ScenarioError`] carrying the line and column of the offending
//! value (of the key, for unknown keys; of the table header, for missing required keys). Nothing
//! stops at the first problem; the errors come back sorted by position.
//!
//! Conventions of the file format (see also `docs/` once written):
//! * Durations are strings with a unit (`"60s"`, `"200ms"`, `"0.1ms"`); a bare number is an error.
//! * `wired.rate` and `flow.rate` are `tc` rates: `"6mbit"` is 6 Mbit/s. In `tc`, `"6mbps"` is
//!   6 megaBYTES per second (48 Mbit/s); since 802.11 writes "Mbps" for megabits, a flow rate in a
//!   bytes-per-second unit is rejected rather than silently read eight times too high.
//! * Station and basic rates are 802.11 rates where `"11Mbps"` means 11 megabits per second.
//! * `cell.standard` decides which keys a file may use: the 802.11n keys of `[cell]`, `[ap]` and
//!   `[[station]]` (`parse/ht.rs`) are errors in an 802.11b cell, and the 802.11b-only ones
//!   (`preamble`, `cw_min`, `cw_max`, a station's `rate`) are errors in an 802.11n cell.
//! * `[[station]]` and `[[flow]]` entries are referred to as `station[i]` / `flow[i]` in error
//!   keys, with `i` counted from 0 in file order.
//! * `run.warmup` defaults to 1 s, or to 0 when `run.duration` is 1 s or less (a 1 s warm-up
//!   would leave nothing to measure).

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::{
    CellConfig, CollisionDefer, EifsRule, TcSource, Endpoint, FlowConfig, FlowRate, NodeConfig, Protocol, RunConfig,
    Scenario, Standard, StationConfig, WiredConfig, MAX_UDP_PAYLOAD, UDP_IP_OVERHEAD,
};
use crate::phy::dsss::{DsssRate, Preamble};
use crate::time::Nanos;
use crate::units;

mod ht;
mod radio;

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`parse_scenario`].
    pub file: String,
    /// 1-based line of the offending value, key or table header.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// Dotted path of the setting, e.g. `"flow[2].rate"`, `"run.duration"`; empty for TOML
    /// syntax errors.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// All problems of a scenario file, sorted by (line, column); never empty when returned by
/// [`parse_scenario`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

/// Parses and validates a scenario. `file` is only used to label errors.
///
/// Returns every error of the file (syntax errors excepted: a TOML syntax error stops parsing
/// and is reported alone).
pub fn parse_scenario(text: &str, file: &str) -> Result<Scenario, ScenarioErrors> {
    let mut ctx = Ctx::new(file, text);
    let root = match DeTable::parse(text) {
        Ok(root) => root,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let mut msg = format!("TOML syntax error: {}", e.message());
            // The parser does not name the duplicated key; quote it from the source.
            if e.message() == "duplicate key" {
                if let Some(k) = text
                    .get(span.clone())
                    .filter(|k| !k.is_empty() && k.len() <= 64)
                {
                    msg = format!(
                        "TOML syntax error: duplicate key `{k}` (each key and table may \
                         appear only once)"
                    );
                }
            }
            ctx.error(&span, "", msg);
            return Err(ScenarioErrors(ctx.errors));
        }
    };
    let mut scenario = walk(&mut ctx, root.get_ref());
    if ctx.errors.is_empty() {
        // The tc scripts are checked once the rest is valid (they need the devices and seed).
        let (errors, mut warnings) = super::tc_trees::check_all(&scenario);
        // Accepted but without effect: say so with the results.
        if scenario.ap_mac.airtime != super::AirtimeSched::Mac80211 {
            for (i, st) in scenario.stations.iter().enumerate() {
                if st.ht.is_some_and(|h| h.airtime_weight != 256) {
                    warnings.push(format!(
                        "{file}: station[{i}].airtime_weight: warning: only the mac80211 airtime scheduler \
                         ([ap] airtime = \"mac80211\") uses station weights; this run ignores it"
                    ));
                }
            }
        }
        scenario.warnings = warnings;
        if errors.is_empty() {
            return Ok(scenario);
        }
        let mut errors = errors;
        errors.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        Err(ScenarioErrors(errors))
    } else {
        ctx.errors.sort_by_key(|e| (e.line, e.column));
        Err(ScenarioErrors(ctx.errors))
    }
}

type Span = Range<usize>;
type Value<'i> = Spanned<DeValue<'i>>;

const TOP_KEYS: &[&str] = &["run", "cell", "wired", "ap", "server", "station", "flow", "monitor"];
const RUN_KEYS: &[&str] = &["duration", "warmup", "seed", "sample_interval"];
const CELL_KEYS: &[&str] = &[
    "standard",
    "band",
    "width",
    "guard_interval",
    "max_aggregate_time",
    "max_aggregate_mpdus",
    "mpdu_retry_limit",
    "preamble",
    "basic_rates",
    "beacons",
    "beacon_interval",
    "beacon_bytes",
    "retry_limit",
    "cw_min",
    "cw_max",
    "eifs",
    "collision_defer",
    "rate_control",
    "preamble_detection",
];
const WIRED_KEYS: &[&str] = &["rate", "delay"];
const NODE_KEYS: &[&str] = &["txqueuelen", "ip", "tc", "tc_file"];
/// `[ap]`: a node's keys and the AP's MAC queueing (802.11n cells, `ht::AP_MAC_KEYS`).
const AP_KEYS: &[&str] = &[
    "txqueuelen", "ip", "tc", "tc_file", "queueing", "mac_queue", "driver_queue_limit", "airtime",
    "airtime_rx", "aql", "fq_kernel",
];
const STATION_KEYS: &[&str] = &[
    "name", "rate", "txqueuelen", "ip", "tc", "tc_file", "rate_control", "snr", "position", "schedule",
    "schedule_mode", "snr_up_offset", "fading", "mcs", "airtime_weight",
];
const FLOW_KEYS: &[&str] = &[
    "name", "protocol", "src", "dst", "rate", "size", "start", "stop", "jitter", "sport", "dport",
    "tos", "dscp", "mark", "priority", "interval", "cc", "bytes", "sack",
];

/// Where each section's keys live, for "`seed` belongs in [run]" hints.
const SECTIONS: &[(&str, &[&str])] = &[
    ("[run]", RUN_KEYS),
    ("[cell]", CELL_KEYS),
    ("[wired]", WIRED_KEYS),
    ("[ap]", AP_KEYS),
    ("[[station]]", STATION_KEYS),
    ("[[flow]]", FLOW_KEYS),
    ("[monitor]", radio::MONITOR_KEYS),
];

const DEFAULT_DURATION: Nanos = Nanos::from_secs(10);
const DEFAULT_WARMUP: Nanos = Nanos::from_secs(1);
const DEFAULT_TXQUEUELEN: u32 = 1000;
const MAX_TXQUEUELEN: u64 = 1_000_000;

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
    errors: Vec<ScenarioError>,
}

impl<'a> Ctx<'a> {
    fn new(file: &'a str, text: &'a str) -> Ctx<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Ctx {
            file,
            text,
            line_starts,
            errors: Vec::new(),
        }
    }

    /// 1-based (line, column in characters) of a byte offset.
    fn position(&self, offset: usize) -> (u32, u32) {
        let mut o = offset.min(self.text.len());
        while !self.text.is_char_boundary(o) {
            o -= 1;
        }
        // Index of the last line starting at or before `o` (line_starts[0] == 0 <= o).
        let line = self.line_starts.partition_point(|&start| start <= o);
        let line_start = self.line_starts[line - 1];
        let column = self.text[line_start..o].chars().count() + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }

    fn error(&mut self, span: &Span, key: &str, message: impl Into<String>) {
        let (line, column) = self.position(span.start);
        self.errors.push(ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            key: key.to_string(),
            message: message.into(),
        });
    }

    fn line_of(&self, span: &Span) -> u32 {
        self.position(span.start).0
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Short description of a value for "found ..." in type errors.
fn describe(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => {
            let s: &str = s;
            if s.chars().count() > 40 {
                let cut: String = s.chars().take(40).collect();
                format!("string {cut:?}...")
            } else {
                format!("string {s:?}")
            }
        }
        DeValue::Integer(i) => format!("integer {i}"),
        DeValue::Float(f) => format!("float {f}"),
        DeValue::Boolean(b) => format!("boolean {b}"),
        DeValue::Datetime(d) => format!("datetime {d}"),
        DeValue::Array(a) if !a.is_empty() && a.iter().all(|e| e.get_ref().is_table()) => {
            "an array of tables".to_string()
        }
        DeValue::Array(_) => "an array".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), on
/// lower-cased characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
fn closest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    // Very long words cannot be typos of our short names; skip the quadratic work.
    if word.chars().count() > 64 {
        return None;
    }
    candidates
        .into_iter()
        .filter(|c| c.chars().count() <= 64)
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, c)| d <= (c.chars().count() / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

fn quoted_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reports every key of `tbl` not in `known`.
fn check_keys(ctx: &mut Ctx<'_>, tbl: &DeTable<'_>, path: &str, section: &str, known: &[&str]) {
    for (k, _) in tbl.iter() {
        let name: &str = k.get_ref();
        if known.contains(&name) {
            continue;
        }
        let mut msg = if path.is_empty() {
            format!("unknown top-level key `{name}`")
        } else {
            format!("unknown key `{name}` in {section}")
        };
        let home = SECTIONS
            .iter()
            .find(|(s, keys)| *s != section && keys.contains(&name))
            .map(|(s, _)| *s);
        if let Some(s) = closest(name, known.iter().copied()) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        } else if let Some(home) = home {
            msg.push_str(&format!("; `{name}` belongs in {home}"));
        } else if let Some((s, home)) = closest_elsewhere(name, section) {
            msg.push_str(&format!("; did you mean `{s}` (in {home})?"));
        } else {
            msg.push_str(&format!("; expected one of {}", quoted_list(known)));
        }
        ctx.error(&k.span(), &join(path, name), msg);
    }
}

/// The key of another section closest to `name`, with that section's header.
fn closest_elsewhere(name: &str, section: &str) -> Option<(&'static str, &'static str)> {
    SECTIONS
        .iter()
        .filter(|(s, _)| *s != section)
        .filter_map(|(s, keys)| {
            let k = closest(name, keys.iter().copied())?;
            Some((edit_distance(name, k), k, *s))
        })
        .min_by_key(|&(d, _, _)| d)
        .map(|(_, k, s)| (k, s))
}

/// Looks a key up; reports it missing (at the table header) when `required`.
fn lookup<'t, 'i>(
    ctx: &mut Ctx<'_>,
    tbl: &'t DeTable<'i>,
    tspan: &Span,
    path: &str,
    key: &str,
    required: Option<&str>,
) -> Option<&'t Value<'i>> {
    let v = tbl.get(key);
    if v.is_none() {
        if let Some(hint) = required {
            ctx.error(
                tspan,
                &join(path, key),
                format!("missing required key `{key}` ({hint})"),
            );
        }
    }
    v
}

fn type_error(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str, expected: &str) {
    let msg = format!("expected {expected}, found {}", describe(v.get_ref()));
    ctx.error(&v.span(), key, msg);
}

/// A string value, or a type error mentioning `expected`.
fn string<'v>(ctx: &mut Ctx<'_>, v: &'v Value<'_>, key: &str, expected: &str) -> Option<&'v str> {
    match v.get_ref() {
        DeValue::String(s) => Some(s),
        _ => {
            type_error(ctx, v, key, expected);
            None
        }
    }
}

/// A duration string; `example` is used in type errors when no better one can be derived.
fn time_value(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str, example: &str) -> Option<Nanos> {
    let DeValue::String(s) = v.get_ref() else {
        // Suggest the same number with a unit when a bare number was written.
        let ex = match v.get_ref() {
            DeValue::Integer(i) if !i.as_str().starts_with('-') && i.radix() == 10 => {
                format!("{}s", i.as_str().trim_start_matches('+'))
            }
            DeValue::Float(f) if f.as_str().bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
                format!("{}s", f.as_str())
            }
            _ => example.to_string(),
        };
        type_error(ctx, v, key, &format!("a string like {ex:?}"));
        return None;
    };
    match units::parse_time(s) {
        Ok(t) if t > Nanos::MAX_SCENARIO => {
            ctx.error(
                &v.span(),
                key,
                format!(
                    "{s:?} is too long; at most {} (one year)",
                    Nanos::MAX_SCENARIO
                ),
            );
            None
        }
        Ok(t) => Some(t),
        Err(e) => {
            ctx.error(&v.span(), key, e.to_string());
            None
        }
    }
}

/// A `tc` rate string in bit/s.
fn tc_rate(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str) -> Option<u64> {
    let s = string(ctx, v, key, "a string like \"100mbit\"")?;
    match units::parse_rate_bps(s) {
        Ok(r) => Some(r),
        Err(e) => {
            ctx.error(&v.span(), key, e.to_string());
            None
        }
    }
}

/// An integer in `min..=max`.
fn integer(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str, min: u64, max: u64) -> Option<u64> {
    let range = format!("between {min} and {max}");
    let i = match v.get_ref() {
        DeValue::Integer(i) => i,
        DeValue::String(s) if s.trim().parse::<i128>().is_ok() => {
            type_error(ctx, v, key, &format!("an integer {range} (without quotes)"));
            return None;
        }
        _ => {
            type_error(ctx, v, key, &format!("an integer {range}"));
            return None;
        }
    };
    match i128::from_str_radix(i.as_str(), i.radix()) {
        Ok(n) if n >= i128::from(min) && n <= i128::from(max) => Some(n as u64),
        _ => {
            ctx.error(&v.span(), key, format!("must be {range}, got {i}"));
            None
        }
    }
}

fn boolean(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str) -> Option<bool> {
    match v.get_ref() {
        DeValue::Boolean(b) => Some(*b),
        _ => {
            type_error(ctx, v, key, "a boolean (true or false)");
            None
        }
    }
}

/// One of a fixed set of strings (ASCII case ignored).
fn choice<T: Copy>(
    ctx: &mut Ctx<'_>,
    v: &Value<'_>,
    key: &str,
    options: &[(&str, T)],
) -> Option<T> {
    let names: Vec<String> = options.iter().map(|(n, _)| format!("{n:?}")).collect();
    let names = names.join(" or ");
    let s = string(ctx, v, key, &format!("a string, {names}"))?;
    if let Some((_, t)) = options
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s.trim()))
    {
        return Some(*t);
    }
    ctx.error(
        &v.span(),
        key,
        format!("unknown value {s:?}; expected {names}"),
    );
    None
}

/// Reports `v` unless it is a table; returns the table. `header` is e.g. `[run]`.
fn as_table<'t, 'i>(
    ctx: &mut Ctx<'_>,
    v: &'t Value<'i>,
    key: &str,
    header: &str,
) -> Option<&'t DeTable<'i>> {
    match v.get_ref() {
        DeValue::Table(t) => Some(t),
        DeValue::Array(_) => {
            type_error(
                ctx,
                v,
                key,
                &format!("a single table {header} (not [{header}])"),
            );
            None
        }
        _ => {
            type_error(ctx, v, key, &format!("a table {header}"));
            None
        }
    }
}

fn walk(ctx: &mut Ctx<'_>, root: &DeTable<'_>) -> Scenario {
    check_keys(ctx, root, "", "", TOP_KEYS);

    let run_v = root.get("run");
    let run_t = run_v.and_then(|v| as_table(ctx, v, "run", "[run]").map(|t| (t, v.span())));
    let run = parse_run(ctx, run_t);

    let cell_v = root.get("cell");
    let cell_t = cell_v.and_then(|v| as_table(ctx, v, "cell", "[cell]").map(|t| (t, v.span())));
    let (cell, standard) = parse_cell(ctx, cell_t);

    let wired_v = root.get("wired");
    let wired_t = wired_v.and_then(|v| as_table(ctx, v, "wired", "[wired]").map(|t| (t, v.span())));
    let wired = parse_wired(ctx, wired_t);

    let (mut ap, ap_t) = node_section(ctx, root, "ap", AP_KEYS);
    let ap_mac = ht::parse_ap_mac(ctx, ap_t, standard, &mut ap);
    let (server, _) = node_section(ctx, root, "server", NODE_KEYS);

    let (stations, names) = parse_stations(ctx, root.get("station"), cell.rate_control, standard);
    let flows = parse_flows(ctx, root.get("flow"), &names, run.1);
    let monitor = radio::parse_monitor(ctx, root.get("monitor"));

    Scenario {
        run: run.0,
        cell,
        wired,
        ap,
        server,
        stations,
        flows,
        ap_mac,
        monitor,
        warnings: Vec::new(),
    }
}

/// `[ap]` or `[server]`: the node's settings and its table (None when absent or not a table).
fn node_section<'t, 'i>(
    ctx: &mut Ctx<'_>,
    root: &'t DeTable<'i>,
    name: &str,
    known: &[&str],
) -> (NodeConfig, Option<(&'t DeTable<'i>, Span)>) {
    let header = format!("[{name}]");
    if let Some(v) = root.get(name) {
        if let Some(t) = as_table(ctx, v, name, &header) {
            check_keys(ctx, t, name, &header, known);
            return (parse_node(ctx, t, name), Some((t, v.span())));
        }
    }
    let node = NodeConfig {
        txqueuelen: DEFAULT_TXQUEUELEN,
        ip: None,
        tc: None,
    };
    (node, None)
}

/// Returns the run settings and the validated duration (None when `run.duration` is invalid,
/// so that checks against it are skipped rather than cascading).
fn parse_run(ctx: &mut Ctx<'_>, t: Option<(&DeTable<'_>, Span)>) -> (RunConfig, Option<Nanos>) {
    let empty = DeTable::new();
    let (tbl, _span) = t.unwrap_or((&empty, 0..0));
    check_keys(ctx, tbl, "run", "[run]", RUN_KEYS);

    let duration = match tbl.get("duration") {
        None => Some(DEFAULT_DURATION),
        Some(v) => time_value(ctx, v, "run.duration", "60s").and_then(|d| {
            if d == Nanos::ZERO {
                ctx.error(
                    &v.span(),
                    "run.duration",
                    "must be greater than zero, e.g. \"60s\"",
                );
                None
            } else {
                Some(d)
            }
        }),
    };

    let warmup = match tbl.get("warmup") {
        None => Some(match duration {
            Some(d) if d <= DEFAULT_WARMUP => Nanos::ZERO,
            _ => DEFAULT_WARMUP,
        }),
        Some(v) => time_value(ctx, v, "run.warmup", "1s").and_then(|w| match duration {
            Some(d) if w >= d => {
                ctx.error(
                    &v.span(),
                    "run.warmup",
                    format!(
                        "warmup ({w}) must be shorter than run.duration ({d}{})",
                        if tbl.get("duration").is_none() {
                            ", the default"
                        } else {
                            ""
                        }
                    ),
                );
                None
            }
            _ => Some(w),
        }),
    };

    let seed = tbl
        .get("seed")
        .map_or(Some(1), |v| integer(ctx, v, "run.seed", 0, u64::MAX));

    let sample_interval = match tbl.get("sample_interval") {
        None => Some(Nanos::from_ms(200)),
        Some(v) => time_value(ctx, v, "run.sample_interval", "200ms").and_then(|s| {
            if s == Nanos::ZERO {
                ctx.error(
                    &v.span(),
                    "run.sample_interval",
                    "must be greater than zero",
                );
                None
            } else if duration.is_some_and(|d| s > d) {
                ctx.error(
                    &v.span(),
                    "run.sample_interval",
                    format!(
                        "sample_interval ({s}) must not exceed run.duration ({})",
                        duration.unwrap_or_default()
                    ),
                );
                None
            } else {
                Some(s)
            }
        }),
    };

    let cfg = RunConfig {
        duration: duration.unwrap_or(DEFAULT_DURATION),
        warmup: warmup.unwrap_or(Nanos::ZERO),
        seed: seed.unwrap_or(1),
        sample_interval: sample_interval.unwrap_or(Nanos::from_ms(200)),
    };
    (cfg, duration)
}

const UNSUPPORTED_STANDARDS: &[&str] = &[
    "802.11", "802.11a", "802.11g", "802.11ac", "802.11ax", "802.11be", "802.11p",
];

/// The cell's settings and its standard; the standard is None when `cell.standard` is invalid
/// (reported), and the keys that depend on it are then parsed without checking that they fit.
fn parse_cell(ctx: &mut Ctx<'_>, t: Option<(&DeTable<'_>, Span)>) -> (CellConfig, Option<Standard>) {
    let empty = DeTable::new();
    let (tbl, tspan) = t.unwrap_or((&empty, 0..0));
    check_keys(ctx, tbl, "cell", "[cell]", CELL_KEYS);

    let standard = match tbl.get("standard") {
        None => Some(Standard::Dot11b),
        Some(v) => string(ctx, v, "cell.standard", "a string, \"802.11b\" or \"802.11n\"").and_then(|s| {
            let s = s.trim();
            if s.eq_ignore_ascii_case("802.11b") {
                return Some(Standard::Dot11b);
            }
            if s.eq_ignore_ascii_case("802.11n") {
                return Some(Standard::Dot11n);
            }
            let msg = if UNSUPPORTED_STANDARDS
                .iter()
                .any(|u| u.eq_ignore_ascii_case(s))
            {
                format!("{s:?} is not supported yet; only \"802.11b\" or \"802.11n\"")
            } else {
                format!("unknown standard {s:?}; \"802.11b\" and \"802.11n\" are supported")
            };
            ctx.error(&v.span(), "cell.standard", msg);
            None
        }),
    };
    let is_n = standard == Some(Standard::Dot11n);

    let preamble = ht::not_ht(ctx, tbl, "cell", "preamble", standard, ht::PREAMBLE_IN_HT).and_then(|v| {
        choice(
            ctx,
            v,
            "cell.preamble",
            &[("long", Preamble::Long), ("short", Preamble::Short)],
        )
    });

    let basic_rates = match standard {
        Some(Standard::Dot11b) => tbl.get("basic_rates").and_then(|v| basic_rates(ctx, v)),
        _ => None,
    };
    // Parsed (or, in an 802.11b cell, reported) whatever the standard; kept in an 802.11n cell.
    let ht = ht::parse_ht_cell(ctx, tbl, standard).filter(|_| is_n);

    let beacons = tbl
        .get("beacons")
        .and_then(|v| boolean(ctx, v, "cell.beacons"));

    let beacon_interval = tbl.get("beacon_interval").and_then(|v| {
        time_value(ctx, v, "cell.beacon_interval", "102.4ms").and_then(|d| {
            if d == Nanos::ZERO {
                ctx.error(
                    &v.span(),
                    "cell.beacon_interval",
                    "must be greater than zero",
                );
                None
            } else {
                Some(d)
            }
        })
    });

    let beacon_bytes = tbl
        .get("beacon_bytes")
        .and_then(|v| integer(ctx, v, "cell.beacon_bytes", 24, 2346).map(|n| n as u32));
    let retry_limit = tbl
        .get("retry_limit")
        .and_then(|v| integer(ctx, v, "cell.retry_limit", 1, 255));

    let cw = |ctx: &mut Ctx<'_>, key: &str| -> Option<(u32, Span)> {
        let v = ht::not_ht(ctx, tbl, "cell", key, standard, ht::CW_IN_HT)?;
        let path = join("cell", key);
        let n = integer(ctx, v, &path, 1, 32767)?;
        if !(n + 1).is_power_of_two() {
            ctx.error(
                &v.span(),
                &path,
                format!(
                    "must be one less than a power of two (1, 3, 7, 15, 31, 63, ..., 1023, ..., \
                     32767), got {n}"
                ),
            );
            return None;
        }
        Some((n as u32, v.span()))
    };
    let cw_min = cw(ctx, "cw_min");
    let cw_max = cw(ctx, "cw_max");
    let cw_min_given = tbl.contains_key("cw_min") && !is_n;
    let cw_max_given = tbl.contains_key("cw_max") && !is_n;
    let cw_min_val = cw_min.as_ref().map_or(31, |c| c.0);
    let cw_max_val = cw_max.as_ref().map_or(1023, |c| c.0);
    let cw_ok = (cw_min.is_some() || !cw_min_given) && (cw_max.is_some() || !cw_max_given);
    if cw_ok && cw_min_val > cw_max_val {
        let (span, key) = match (&cw_max, &cw_min) {
            (Some((_, s)), _) => (s.clone(), "cell.cw_max"),
            (None, Some((_, s))) => (s.clone(), "cell.cw_min"),
            (None, None) => (tspan.clone(), "cell.cw_min"),
        };
        ctx.error(
            &span,
            key,
            format!("cw_min ({cw_min_val}) must not exceed cw_max ({cw_max_val})"),
        );
    }

    let eifs = ht::not_ht(ctx, tbl, "cell", "eifs", standard, ht::DEFER_IN_HT).and_then(|v| {
        choice(
            ctx,
            v,
            "cell.eifs",
            &[
                ("estimated", EifsRule::Estimated),
                ("legacy", EifsRule::Legacy),
            ],
        )
    });

    let collision_defer = ht::not_ht(ctx, tbl, "cell", "collision_defer", standard, ht::DEFER_IN_HT).and_then(|v| {
        choice(
            ctx,
            v,
            "cell.collision_defer",
            &[
                ("eifs", CollisionDefer::Eifs),
                ("ack-timeout", CollisionDefer::AckTimeout),
            ],
        )
    });

    let rate_control = tbl
        .get("rate_control")
        .and_then(|v| ht::rate_control(ctx, v, "cell.rate_control", standard));
    let preamble_detection_cdb =
        tbl.get("preamble_detection").and_then(|v| radio::db_value(ctx, v, "cell.preamble_detection", -3000, 5000));

    let cell = CellConfig {
        standard: standard.unwrap_or(Standard::Dot11b),
        preamble: preamble.unwrap_or(Preamble::Long),
        basic_rates: basic_rates.unwrap_or_else(|| vec![DsssRate::R1, DsssRate::R2]),
        beacons: beacons.unwrap_or(true),
        beacon_interval: beacon_interval.unwrap_or(Nanos::from_us(102_400)),
        beacon_bytes: beacon_bytes.unwrap_or(65),
        retry_limit: retry_limit.map_or(7, |n| n as u32),
        cw_min: cw_min_val,
        cw_max: cw_max_val,
        eifs: eifs.unwrap_or(EifsRule::Estimated),
        collision_defer: collision_defer.unwrap_or(CollisionDefer::Eifs),
        rate_control: rate_control.unwrap_or(super::RateControl::Fixed),
        preamble_detection_cdb,
        ht,
    };
    (cell, standard)
}

fn basic_rates(ctx: &mut Ctx<'_>, v: &Value<'_>) -> Option<Vec<DsssRate>> {
    rate_list(ctx, v, "[\"1Mbps\", \"2Mbps\"]", |s| units::parse_phy_rate(s).map_err(|e| e.to_string()), |r| r.label().to_string())
}

/// `cell.basic_rates`: a non-empty array of distinct rates, returned sorted. `parse` reads one
/// rate (or says why not), `label` names one in the duplicate error; `example` is an array.
fn rate_list<T: Copy + Ord>(
    ctx: &mut Ctx<'_>,
    v: &Value<'_>,
    example: &str,
    parse: impl Fn(&str) -> Result<T, String>,
    label: impl Fn(T) -> String,
) -> Option<Vec<T>> {
    const KEY: &str = "cell.basic_rates";
    let DeValue::Array(items) = v.get_ref() else {
        type_error(ctx, v, KEY, &format!("an array of rates like {example}"));
        return None;
    };
    if items.is_empty() {
        ctx.error(
            &v.span(),
            KEY,
            format!("must not be empty; give at least one rate, e.g. {example}"),
        );
        return None;
    }
    // Each accepted rate with its index in the array.
    let mut rates: Vec<(T, usize)> = Vec::new();
    let mut ok = true;
    let first_example = example.trim_start_matches('[').split(',').next().unwrap_or(example).trim_end_matches(']');
    for (i, item) in items.iter().enumerate() {
        let key = format!("{KEY}[{i}]");
        let Some(s) = string(ctx, item, &key, &format!("a string like {first_example}")) else {
            ok = false;
            continue;
        };
        match parse(s) {
            Ok(r) => {
                if let Some(j) = rates.iter().position(|(x, _)| *x == r) {
                    let first = rates[j].1;
                    ctx.error(
                        &item.span(),
                        &key,
                        format!(
                            "duplicate rate {} (already listed as {KEY}[{first}])",
                            label(r)
                        ),
                    );
                    ok = false;
                } else {
                    rates.push((r, i));
                }
            }
            Err(e) => {
                ctx.error(&item.span(), &key, e);
                ok = false;
            }
        }
    }
    if !ok {
        return None;
    }
    let mut rates: Vec<T> = rates.into_iter().map(|(r, _)| r).collect();
    rates.sort();
    Some(rates)
}

fn parse_wired(ctx: &mut Ctx<'_>, t: Option<(&DeTable<'_>, Span)>) -> WiredConfig {
    let empty = DeTable::new();
    let (tbl, _) = t.unwrap_or((&empty, 0..0));
    check_keys(ctx, tbl, "wired", "[wired]", WIRED_KEYS);
    let rate = tbl.get("rate").and_then(|v| tc_rate(ctx, v, "wired.rate"));
    let delay = tbl
        .get("delay")
        .and_then(|v| time_value(ctx, v, "wired.delay", "0.1ms"));
    WiredConfig {
        rate_bps: rate.unwrap_or(100_000_000),
        delay: delay.unwrap_or(Nanos(100_000)),
    }
}

fn parse_node(ctx: &mut Ctx<'_>, tbl: &DeTable<'_>, path: &str) -> NodeConfig {
    let key = join(path, "txqueuelen");
    let q = tbl
        .get("txqueuelen")
        .and_then(|v| integer(ctx, v, &key, 1, MAX_TXQUEUELEN));
    let ip = tbl.get("ip").and_then(|v| {
        let key = join(path, "ip");
        let s = string(ctx, v, &key, "an IPv4 address like \"192.168.1.20\"")?;
        let ip = super::parse_ipv4(s);
        if ip.is_none() {
            ctx.error(&v.span(), &key, format!("{s:?} is not an IPv4 address; expected four numbers 0-255 like \"192.168.1.20\""));
        }
        ip
    });
    let tc = parse_tc_source(ctx, tbl, path);
    NodeConfig {
        txqueuelen: q.map_or(DEFAULT_TXQUEUELEN, |n| n as u32),
        ip,
        tc,
    }
}

/// `tc = """..."""` (inline) or `tc_file = "path"` (relative to the scenario file).
fn parse_tc_source(ctx: &mut Ctx<'_>, tbl: &DeTable<'_>, path: &str) -> Option<TcSource> {
    let inline = tbl.get("tc");
    let file = tbl.get("tc_file");
    if let (Some(_), Some(f)) = (inline, file) {
        ctx.error(&f.span(), &join(path, "tc_file"), "give either `tc` (the script inline) or `tc_file` (a file), not both");
        return None;
    }
    if let Some(v) = inline {
        let key = join(path, "tc");
        let text = string(ctx, v, &key, "a tc script as a string, e.g. tc = \"\"\"\ntc qdisc add dev wlan0 root pfifo limit 100\n\"\"\"")?;
        // Where the script's first line sits in the file: after the opening quotes, or on the
        // next line when a multi-line string starts with a newline (TOML trims it).
        let span = v.span();
        let raw = &ctx.text[span.clone()];
        let (line, col) = ctx.position(span.start);
        let (line_offset, first_line_col_offset) = if raw.starts_with("\"\"\"") || raw.starts_with("\'\'\'") {
            let after = &raw[3..];
            if after.starts_with('\n') || after.starts_with("\r\n") {
                (line, 0)
            } else {
                (line - 1, col - 1 + 3)
            }
        } else {
            (line - 1, col - 1 + 1)
        };
        return Some(TcSource {
            text: text.to_string(),
            file: ctx.file.to_string(),
            key,
            line_offset,
            first_line_col_offset,
        });
    }
    if let Some(v) = file {
        let key = join(path, "tc_file");
        let name = string(ctx, v, &key, "a path like \"shaping.tc\"")?;
        let (file, text) = read_relative(ctx, v, &key, name, "tc script", "")?;
        return Some(TcSource { text, file, key, line_offset: 0, first_line_col_offset: 0 });
    }
    None
}

/// Read the file `name`, a path relative to the scenario file. Returns its displayed path and
/// text, or reports at `v` that the `what` cannot be read (`hint` is appended to the message).
fn read_relative(ctx: &mut Ctx<'_>, v: &Value<'_>, key: &str, name: &str, what: &str, hint: &str) -> Option<(String, String)> {
    let base = std::path::Path::new(ctx.file).parent().unwrap_or(std::path::Path::new(""));
    let full = base.join(name);
    match std::fs::read_to_string(&full) {
        Ok(text) => Some((full.display().to_string(), text)),
        Err(e) => {
            ctx.error(&v.span(), key, format!("cannot read {what} {}: {e} (paths are relative to the scenario file{hint})", full.display()));
            None
        }
    }
}

/// The elements of `[[name]]`, each with its span; reports non-table elements.
fn array_of_tables<'t, 'i>(
    ctx: &mut Ctx<'_>,
    v: Option<&'t Value<'i>>,
    name: &str,
) -> Vec<(usize, &'t DeTable<'i>, Span)> {
    let Some(v) = v else {
        return Vec::new();
    };
    let DeValue::Array(items) = v.get_ref() else {
        type_error(
            ctx,
            v,
            name,
            &format!("an array of tables (write [[{name}]] with double brackets)"),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.get_ref() {
            DeValue::Table(t) => out.push((i, t, item.span())),
            _ => type_error(
                ctx,
                item,
                &format!("{name}[{i}]"),
                &format!("a table [[{name}]]"),
            ),
        }
    }
    out
}

fn valid_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// The stations, and a map from every station name written (valid or not, first occurrence)
/// to its index, so that flows referring to a broken station do not add a second error.
fn parse_stations(
    ctx: &mut Ctx<'_>,
    v: Option<&Value<'_>>,
    default_rc: super::RateControl,
    standard: Option<Standard>,
) -> (Vec<StationConfig>, HashMap<String, usize>) {
    let mut stations = Vec::new();
    let mut names: HashMap<String, (usize, Span)> = HashMap::new();
    for (i, tbl, tspan) in array_of_tables(ctx, v, "station") {
        let path = format!("station[{i}]");
        check_keys(ctx, tbl, &path, "[[station]]", STATION_KEYS);
        let index = stations.len();

        let name_v = lookup(
            ctx,
            tbl,
            &tspan,
            &path,
            "name",
            Some("a unique name, e.g. name = \"sta1\""),
        );
        let name = name_v.and_then(|v| {
            let key = join(&path, "name");
            let s = string(ctx, v, &key, "a string like \"sta1\"")?;
            let mut ok = true;
            if s.is_empty() {
                ctx.error(&v.span(), &key, "must not be empty, e.g. \"sta1\"");
                ok = false;
            } else if !s.chars().all(valid_name_char) {
                ctx.error(
                    &v.span(),
                    &key,
                    format!(
                        "station name {s:?} may only contain ASCII letters, digits, '_', '.' \
                         and '-'"
                    ),
                );
                ok = false;
            } else if s.eq_ignore_ascii_case("server") || s.eq_ignore_ascii_case("ap") {
                let owner = if s.eq_ignore_ascii_case("ap") {
                    "access point"
                } else {
                    "wired server"
                };
                ctx.error(
                    &v.span(),
                    &key,
                    format!("{s:?} is reserved for the {owner}; choose another station name"),
                );
                return None;
            }
            if let Some((_, first)) = names.get(s) {
                let line = ctx.line_of(first);
                ctx.error(
                    &v.span(),
                    &key,
                    format!("duplicate station name {s:?} (already used on line {line})"),
                );
                return None;
            }
            names.insert(s.to_string(), (index, v.span()));
            ok.then(|| s.to_string())
        });

        let rate_control = tbl
            .get("rate_control")
            .and_then(|v| ht::rate_control(ctx, v, &join(&path, "rate_control"), standard))
            .unwrap_or(default_rc);
        // `mcs` in an 802.11b cell is reported as such; a missing `rate` would only repeat it.
        let rate_required = (rate_control == super::RateControl::Fixed
            && standard == Some(Standard::Dot11b)
            && !tbl.contains_key("mcs"))
        .then_some("the station's 802.11b rate, e.g. rate = \"11Mbps\"");
        let rate_v = if standard == Some(Standard::Dot11n) {
            ht::not_ht(ctx, tbl, &path, "rate", standard, ht::RATE_IN_HT)
        } else {
            lookup(ctx, tbl, &tspan, &path, "rate", rate_required)
        };
        let rate = rate_v.and_then(|v| {
            let key = join(&path, "rate");
            let ex = "a string like \"11Mbps\"";
            let s = string(ctx, v, &key, ex)?;
            match units::parse_phy_rate(s) {
                Ok(r) => Some(r),
                Err(e) => {
                    ctx.error(&v.span(), &key, e.to_string());
                    None
                }
            }
        });
        let ht = ht::station_ht(ctx, tbl, &path, standard);
        let channel = radio::channel(ctx, tbl, &path);
        let node = parse_node(ctx, tbl, &path);
        stations.push(StationConfig {
            name: name.unwrap_or_default(),
            // 802.11n: a placeholder, the link's rate is `ht.mcs`.
            rate: rate.unwrap_or(DsssRate::R11),
            rate_control,
            channel,
            node,
            ht,
        });
    }
    let names = names.into_iter().map(|(k, (i, _))| (k, i)).collect();
    (stations, names)
}

fn endpoint(
    ctx: &mut Ctx<'_>,
    v: &Value<'_>,
    key: &str,
    stations: &HashMap<String, usize>,
) -> Option<Endpoint> {
    let s = string(
        ctx,
        v,
        key,
        "a string, \"server\", \"ap\" or a station name",
    )?;
    match s {
        "server" => return Some(Endpoint::Server),
        "ap" => return Some(Endpoint::Ap),
        _ => {}
    }
    if let Some(&i) = stations.get(s) {
        return Some(Endpoint::Station(i));
    }
    let mut known: Vec<&str> = stations.keys().map(String::as_str).collect();
    known.sort_by_key(|k| stations[*k]);
    let mut msg = format!("unknown endpoint {s:?}; expected \"server\", \"ap\" or a station name");
    let candidates = known.iter().copied().chain(["server", "ap"]);
    if let Some(c) = closest(s, candidates) {
        msg.push_str(&format!("; did you mean {c:?}?"));
    }
    if known.is_empty() {
        msg.push_str(" (no [[station]] is defined)");
    } else {
        let shown: Vec<String> = known.iter().take(10).map(|k| format!("{k:?}")).collect();
        let more = if known.len() > 10 { ", ..." } else { "" };
        msg.push_str(&format!(" (stations: {}{more})", shown.join(", ")));
    }
    ctx.error(&v.span(), key, msg);
    None
}

fn parse_flows(
    ctx: &mut Ctx<'_>,
    v: Option<&Value<'_>>,
    stations: &HashMap<String, usize>,
    run_duration: Option<Nanos>,
) -> Vec<FlowConfig> {
    let mut flows = Vec::new();
    let mut names: HashMap<String, Span> = HashMap::new();
    for (i, tbl, tspan) in array_of_tables(ctx, v, "flow") {
        let path = format!("flow[{i}]");
        let k = |key: &str| join(&path, key);
        check_keys(ctx, tbl, &path, "[[flow]]", FLOW_KEYS);

        let name = lookup(
            ctx,
            tbl,
            &tspan,
            &path,
            "name",
            Some("a unique name, e.g. name = \"down1\""),
        )
        .and_then(|v| {
            let key = k("name");
            let s = string(ctx, v, &key, "a string like \"down1\"")?;
            if s.trim().is_empty() {
                ctx.error(&v.span(), &key, "must not be empty, e.g. \"down1\"");
                return None;
            }
            if let Some(first) = names.get(s) {
                let line = ctx.line_of(first);
                ctx.error(
                    &v.span(),
                    &key,
                    format!("duplicate flow name {s:?} (already used on line {line})"),
                );
                return None;
            }
            names.insert(s.to_string(), v.span());
            Some(s.to_string())
        });

        let mut protocol = Protocol::Udp;
        if let Some(v) = tbl.get("protocol") {
            let key = k("protocol");
            if let Some(s) = string(ctx, v, &key, "a string, \"udp\", \"tcp\" or \"ping\"") {
                if s.eq_ignore_ascii_case("ping") {
                    protocol = Protocol::Ping;
                } else if s.eq_ignore_ascii_case("tcp") {
                    protocol = Protocol::Tcp;
                } else if !s.eq_ignore_ascii_case("udp") {
                    ctx.error(&v.span(), &key, format!("unknown protocol {s:?}; \"udp\", \"tcp\" or \"ping\""));
                }
            }
        }
        let is_ping = protocol == Protocol::Ping;
        let is_tcp = protocol == Protocol::Tcp;
        if is_tcp {
            for key in ["rate", "jitter", "interval"] {
                if let Some(v) = tbl.get(key) {
                    ctx.error(&v.span(), &k(key), format!("a TCP flow sends as fast as its congestion window allows; leave `{key}` out (give `bytes` for a transfer of fixed size)"));
                }
            }
        } else {
            for key in ["cc", "bytes", "sack"] {
                if let Some(v) = tbl.get(key) {
                    ctx.error(&v.span(), &k(key), format!("`{key}` is for TCP flows (protocol = \"tcp\")"));
                }
            }
        }
        let cc = tbl.get("cc").and_then(|v| {
            choice(ctx, v, &k("cc"), &[("cubic", crate::tcp::CcKind::Cubic), ("newreno", crate::tcp::CcKind::NewReno), ("reno", crate::tcp::CcKind::NewReno)])
        });
        let sack = tbl.get("sack").filter(|_| is_tcp).and_then(|v| boolean(ctx, v, &k("sack")));
        let bytes = tbl.get("bytes").and_then(|v| {
            let key = k("bytes");
            let s = string(ctx, v, &key, "a size like \"10MB\" or \"500kb\"")?;
            match units::parse_size_bytes(s) {
                Ok(0) => {
                    ctx.error(&v.span(), &key, "a transfer needs at least one byte");
                    None
                }
                Ok(b) => Some(b),
                Err(e) => {
                    ctx.error(&v.span(), &key, e.to_string());
                    None
                }
            }
        });

        let src_v = lookup(
            ctx,
            tbl,
            &tspan,
            &path,
            "src",
            Some("\"server\", \"ap\" or a station name"),
        );
        let src = src_v.and_then(|v| endpoint(ctx, v, &k("src"), stations));
        let dst_v = lookup(
            ctx,
            tbl,
            &tspan,
            &path,
            "dst",
            Some("\"server\", \"ap\" or a station name"),
        );
        let dst = dst_v.and_then(|v| endpoint(ctx, v, &k("dst"), stations));
        if let (Some(s), Some(d), Some(dv)) = (src, dst, dst_v) {
            if s == d {
                ctx.error(
                    &dv.span(),
                    &k("dst"),
                    "must differ from src (a flow needs two different endpoints)",
                );
            }
        }

        if is_ping {
            for key in ["rate", "jitter"] {
                if let Some(v) = tbl.get(key) {
                    ctx.error(&v.span(), &k(key), "a ping flow sends one echo request per `interval`; leave `rate` and `jitter` out");
                }
            }
        } else if let (false, Some(v)) = (is_tcp, tbl.get("interval")) {
            ctx.error(&v.span(), &k("interval"), "`interval` is for ping flows (protocol = \"ping\"); a UDP flow has a `rate`");
        }
        let interval = if is_ping {
            match tbl.get("interval") {
                Some(v) => time_value(ctx, v, &k("interval"), "200ms").and_then(|t| {
                    if t < Nanos::from_us(100) {
                        ctx.error(&v.span(), &k("interval"), format!("{t} is too short; at least 100us"));
                        None
                    } else {
                        Some(t)
                    }
                }),
                None => Some(Nanos::from_secs(1)),
            }
        } else {
            None
        };
        let rate = if is_ping {
            interval.map(|interval| FlowRate::Periodic { interval })
        } else if is_tcp {
            Some(FlowRate::Window)
        } else {
            lookup(
            ctx,
            tbl,
            &tspan,
            &path,
            "rate",
            Some("a tc rate like \"6mbit\", or \"saturate\""),
        )
        .and_then(|v| {
            let key = k("rate");
            let s = string(ctx, v, &key, "a string like \"6mbit\" or \"saturate\"")?;
            if s.trim().eq_ignore_ascii_case("saturate") {
                return Some(FlowRate::Saturate);
            }
            match units::parse_rate_bps(s) {
                Ok(_) if counts_bytes(s) => {
                    ctx.error(
                        &v.span(),
                        &key,
                        format!(
                            "\"{s}\" is in bytes per second in tc units (\"mbps\" = megabytes/s); \
                             write the rate in bits, like \"6mbit\", so that it cannot be misread"
                        ),
                    );
                    None
                }
                Ok(b) => Some(FlowRate::Cbr { bits_per_second: b }),
                Err(e) => {
                    ctx.error(
                        &v.span(),
                        &key,
                        format!("{e}; or \"saturate\" for an always-backlogged source"),
                    );
                    None
                }
            }
        })
        };

        // TCP: the MSS; it must leave room for 52 bytes of IP and TCP headers (with timestamps).
        let size_max = if is_tcp { u64::from(MAX_UDP_PAYLOAD + UDP_IP_OVERHEAD - crate::tcp::TCP_IP_HEADER) } else { u64::from(MAX_UDP_PAYLOAD) };
        let size = tbl
            .get("size")
            .and_then(|v| integer(ctx, v, &k("size"), if is_tcp { 88 } else { 1 }, size_max));

        let start_v = tbl.get("start");
        let start = start_v.map_or(Some(Nanos::ZERO), |v| time_value(ctx, v, &k("start"), "0s"));
        if let (Some(st), Some(d), Some(v)) = (start, run_duration, start_v) {
            if st >= d {
                ctx.error(
                    &v.span(),
                    &k("start"),
                    format!(
                        "start ({st}) must be before the end of the run (run.duration = {d}); \
                         the flow would never send"
                    ),
                );
            }
        }
        let stop_v = tbl.get("stop");
        let stop = stop_v.and_then(|v| {
            let t = time_value(ctx, v, &k("stop"), "30s")?;
            if let Some(st) = start {
                if t <= st {
                    let msg = format!("stop ({t}) must be after start ({st})");
                    ctx.error(&v.span(), &k("stop"), msg);
                    return None;
                }
            }
            if let Some(d) = run_duration {
                if t > d {
                    ctx.error(
                        &v.span(),
                        &k("stop"),
                        format!(
                            "stop ({t}) is after the end of the run (run.duration = {d}); \
                             leave stop out to run to the end"
                        ),
                    );
                    return None;
                }
            }
            Some(t)
        });

        // Jitter: only for CBR, and shorter than the packet interval so packets stay in order.
        let jitter = tbl.get("jitter").and_then(|v| {
            let j = time_value(ctx, v, &k("jitter"), "50us")?;
            match (rate, size) {
                (Some(FlowRate::Saturate), _) if j > Nanos::ZERO => {
                    ctx.error(&v.span(), &k("jitter"), "jitter applies to CBR flows only; a saturating source has no send times to jitter".to_string());
                    None
                }
                (Some(FlowRate::Cbr { bits_per_second }), sz) => {
                    let bits = sz.unwrap_or(1470) as u128 * 8;
                    let period = Nanos((bits * 1_000_000_000u128 / bits_per_second as u128).min(u64::MAX as u128) as u64);
                    if j >= period {
                        ctx.error(
                            &v.span(),
                            &k("jitter"),
                            format!("jitter ({j}) must be shorter than the packet interval ({period}) so that packets stay in order"),
                        );
                        None
                    } else {
                        Some(j)
                    }
                }
                _ => Some(j),
            }
        });

        let port = |ctx: &mut Ctx<'_>, name: &str| {
            tbl.get(name).and_then(|v| integer(ctx, v, &k(name), 1, 65535)).map(|n| n as u16)
        };
        let sport = port(ctx, "sport");
        let dport = port(ctx, "dport");
        let tos_v = tbl.get("tos");
        let dscp_v = tbl.get("dscp");
        let tos = match (tos_v, dscp_v) {
            (Some(_), Some(d)) => {
                ctx.error(&d.span(), &k("dscp"), "give either `tos` (the whole byte) or `dscp` (its upper six bits), not both");
                None
            }
            (Some(v), None) => integer(ctx, v, &k("tos"), 0, 255).map(|n| n as u8),
            (None, Some(v)) => integer(ctx, v, &k("dscp"), 0, 63).map(|n| (n as u8) << 2),
            (None, None) => None,
        };
        let mark = tbl.get("mark").and_then(|v| integer(ctx, v, &k("mark"), 0, u32::MAX as u64)).map(|n| n as u32);
        let priority = tbl.get("priority").and_then(|v| integer(ctx, v, &k("priority"), 0, u32::MAX as u64)).map(|n| n as u32);

        flows.push(FlowConfig {
            name: name.unwrap_or_default(),
            protocol,
            src: src.unwrap_or(Endpoint::Server),
            dst: dst.unwrap_or(Endpoint::Ap),
            rate: rate.unwrap_or(FlowRate::Saturate),
            size: size.map_or(if is_ping { 56 } else if is_tcp { crate::tcp::DEFAULT_MSS } else { 1470 }, |n| n as u32),
            start: start.unwrap_or(Nanos::ZERO),
            stop,
            jitter: jitter.unwrap_or(Nanos::ZERO),
            sport,
            dport: dport.unwrap_or(5001),
            tos: tos.unwrap_or(0),
            mark: mark.unwrap_or(0),
            priority,
            cc: cc.unwrap_or(crate::tcp::CcKind::Cubic),
            sack: sack.unwrap_or(true),
            bytes,
        });
    }
    flows
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EXAMPLE: &str = r#"[run]
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
            rate_control: crate::scenario::RateControl::Fixed,
            preamble_detection_cdb: None,
            ht: None,
        }
    }

    fn node(q: u32) -> NodeConfig {
        NodeConfig { txqueuelen: q, ip: None, tc: None }
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
            wired: WiredConfig {
                rate_bps: 100_000_000,
                delay: Nanos::from_us(100),
            },
            ap: node(1000),
            server: node(1000),
            monitor: crate::scenario::MonitorSpec::default(),
            ap_mac: crate::scenario::ApMacConfig::default(),
            stations: vec![StationConfig {
                name: "sta1".into(),
                rate: DsssRate::R11,
                rate_control: crate::scenario::RateControl::Fixed,
                channel: None,
                node: node(1000),
                ht: None,
            }],
            flows: vec![FlowConfig {
                name: "down1".into(),
                protocol: Protocol::Udp,
                src: Endpoint::Server,
                dst: Endpoint::Station(0),
                rate: FlowRate::Cbr {
                    bits_per_second: 6_000_000,
                },
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
            }],
            warnings: vec![],
        };
        assert_eq!(s, want);
    }

    #[test]
    fn an_empty_file_is_all_defaults() {
        let s = parse_scenario("", "empty.toml").unwrap();
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
        assert_eq!(
            s.wired,
            WiredConfig {
                rate_bps: 100_000_000,
                delay: Nanos(100_000)
            }
        );
        assert_eq!((s.ap, s.server), (node(1000), node(1000)));
        assert!(s.stations.is_empty() && s.flows.is_empty());
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
                rate_control: crate::scenario::RateControl::Fixed,
                preamble_detection_cdb: None,
                ht: None,
            }
        );
        assert_eq!(
            s.wired,
            WiredConfig {
                rate_bps: 1_000_000_000,
                delay: Nanos::from_ms(2)
            }
        );
        assert_eq!((s.ap.clone(), s.server.clone()), (node(50), node(1000)));
        assert_eq!(
            s.stations,
            vec![
                StationConfig {
                    name: "a.b-c_1".into(),
                    rate: DsssRate::R1,
                    rate_control: crate::scenario::RateControl::Fixed,
                    channel: None,
                    node: node(10),
                    ht: None
                },
                StationConfig {
                    name: "sta2".into(),
                    rate: DsssRate::R5_5,
                    rate_control: crate::scenario::RateControl::Fixed,
                    channel: None,
                    node: node(1000),
                    ht: None
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
                },
                FlowConfig {
                    name: "ap-to-server".into(),
                    protocol: Protocol::Udp,
                    src: Endpoint::Ap,
                    dst: Endpoint::Server,
                    rate: FlowRate::Cbr {
                        bits_per_second: 12_000
                    },
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
                },
            ]
        );
    }

    /// A small 802.11n cell: two stations, a download each, one of them TCP.
    const HT_EXAMPLE: &str = r#"[run]
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
        use crate::phy::error::OfdmRate;
        use crate::phy::ht::{ChannelWidth, GuardInterval};
        use crate::phy::ofdm::OfdmBand;
        use crate::scenario::{AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue};
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
            }
        );
        assert_eq!(s.ap.tc, None);
        let ht: Vec<_> = s.stations.iter().map(|st| st.ht).collect();
        assert_eq!(
            ht,
            vec![
                Some(HtStationConfig { mcs: mcs(15), airtime_weight: 256 }),
                Some(HtStationConfig { mcs: mcs(0), airtime_weight: 256 }),
            ]
        );
        // `rate` keeps its placeholder; the radio keys work as in 802.11b.
        assert_eq!(s.stations[0].rate, DsssRate::R11);
        assert_eq!(s.stations[0].rate_control, crate::scenario::RateControl::Fixed);
        assert!(s.stations[0].channel.is_none() && s.stations[1].channel.is_some());
        assert!(s.flows.iter().all(|f| f.sack));
        assert_eq!(s.flows[0].protocol, Protocol::Tcp);

        // A cell with nothing but the standard: every default, the AP a driver FIFO.
        let s = parse_scenario("[cell]\nstandard = \"802.11N\"\n[[station]]\nname = \"a\"\n", "f").unwrap();
        assert_eq!(s.ap_mac, ApMacConfig::default());
        assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: crate::scenario::ATH_MAX_QDEPTH });
        assert_eq!(s.stations[0].ht, Some(HtStationConfig { mcs: mcs(7), airtime_weight: 256 }));
        assert_eq!(s.cell.ht.unwrap().basic_rates, crate::phy::ofdm::MANDATORY_RATES.to_vec());
    }

    #[test]
    fn every_80211n_key_can_be_set() {
        use crate::phy::error::OfdmRate;
        use crate::phy::ht::{ChannelWidth, GuardInterval};
        use crate::phy::ofdm::OfdmBand;
        use crate::scenario::{AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue};
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
            }
        );
        assert_eq!(s.stations[0].ht, Some(HtStationConfig { mcs: mcs(3), airtime_weight: 512 }));
        assert!(!s.flows[0].sack);

        // The mac80211 scheduler brings AQL and the 6.18 FQ-MAC policy by default.
        let s = parse_scenario(
            "[cell]\nstandard = \"802.11n\"\n[ap]\nmac_queue = \"fq_mac\"\nairtime = \"mac80211\"\n",
            "f",
        )
        .unwrap();
        assert_eq!((s.ap_mac.aql, s.ap_mac.fq_kernel), (true, FqKernel::Linux6_18));
        // A driver FIFO with its own limit; band and width spelled briefly.
        let s = parse_scenario(
            "[cell]\nstandard = \"802.11n\"\nband = \"5\"\n[ap]\ndriver_queue_limit = 1000\nmac_queue = \"fifo\"\n",
            "f",
        )
        .unwrap();
        assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: 1000 });
        assert_eq!(s.cell.ht.unwrap().band, OfdmBand::Ghz5);
    }

    #[test]
    fn each_queueing_preset() {
        use crate::scenario::{AirtimeSched, FqKernel, MacQueue};
        let fifo = MacQueue::DriverFifo { limit: crate::scenario::ATH_MAX_QDEPTH };
        for (preset, queue, airtime, script) in [
            ("fifo", fifo, AirtimeSched::Off, false),
            ("fq_codel", fifo, AirtimeSched::Off, true),
            ("fq-codel", fifo, AirtimeSched::Off, true),
            ("fq-mac", MacQueue::FqMac, AirtimeSched::Off, false),
            ("airtime", MacQueue::FqMac, AirtimeSched::Ath9k, false),
        ] {
            let text = format!("[cell]\nstandard = \"802.11n\"\n[ap]\ntxqueuelen = 100\nqueueing = \"{preset}\"\n");
            let s = parse_scenario(&text, "p.toml").unwrap_or_else(|e| panic!("{preset}: {e}"));
            assert_eq!((s.ap_mac.queue, s.ap_mac.airtime), (queue, airtime), "{preset}");
            assert_eq!((s.ap_mac.aql, s.ap_mac.fq_kernel, s.ap_mac.airtime_rx), (false, FqKernel::Linux4_11, true));
            assert_eq!(s.ap.txqueuelen, 100);
            if script {
                // The root fq_codel on wlan0, as if the AP's tc script said so; it builds.
                let tc = s.ap.tc.as_ref().expect("fq_codel script");
                assert_eq!(tc.text, "tc qdisc add dev wlan0 root fq_codel\n");
                assert_eq!((tc.file.as_str(), tc.key.as_str(), tc.line_offset, tc.first_line_col_offset), ("p.toml", "ap.queueing", 4, 11));
                let nodes = crate::scenario::tc_trees::nodes_with_scripts(&s);
                let (trees, errors, warnings) = crate::scenario::tc_trees::build_node(&nodes[0], 1);
                assert!(errors.is_empty() && warnings.is_empty(), "{errors:?} {warnings:?}");
                assert_eq!(trees.len(), 1);
            } else {
                assert_eq!(s.ap.tc, None, "{preset}");
            }
        }
        // The presets leave the other AP keys free.
        let s = parse_scenario(
            "[cell]\nstandard = \"802.11n\"\n[ap]\nqueueing = \"fifo\"\ndriver_queue_limit = 50\n",
            "f",
        )
        .unwrap();
        assert_eq!(s.ap_mac.queue, MacQueue::DriverFifo { limit: 50 });
        let s = parse_scenario(
            "[cell]\nstandard = \"802.11n\"\n[ap]\nqueueing = \"fq-mac\"\nfq_kernel = \"6.18\"\nairtime_rx = false\n",
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
        let s = parse_scenario("[run]\nduration = \"1s\"\n", "f").unwrap();
        assert_eq!(s.run.warmup, Nanos::ZERO);
        let s = parse_scenario("[run]\nduration = \"1001ms\"\n", "f").unwrap();
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
        let text = "[run]\nseed = 0x10\n[ap]\ntxqueuelen = 1_0_0\n[cell]\nretry_limit = 0o7\n";
        let s = parse_scenario(text, "f").unwrap();
        assert_eq!(
            (s.run.seed, s.ap.txqueuelen, s.cell.retry_limit),
            (16, 100, 7)
        );
    }

    #[test]
    fn display_formats() {
        let e = ScenarioError {
            file: "a.toml".into(),
            line: 3,
            column: 12,
            key: "run.duration".into(),
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "a.toml:3:12: run.duration: bad");
        let s = ScenarioError {
            key: String::new(),
            ..e.clone()
        };
        assert_eq!(s.to_string(), "a.toml:3:12: bad");
        assert_eq!(
            ScenarioErrors(vec![e, s]).to_string(),
            "a.toml:3:12: run.duration: bad\na.toml:3:12: bad"
        );
    }

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("station", "stations"), 1);
        assert_eq!(edit_distance("duraiton", "duration"), 1);
        assert_eq!(edit_distance("Duration", "duration"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(
            closest("stations", TOP_KEYS.iter().copied()),
            Some("station")
        );
        assert_eq!(closest("flows", TOP_KEYS.iter().copied()), Some("flow"));
        assert_eq!(closest("xyz", TOP_KEYS.iter().copied()), None);
        assert_eq!(
            closest("sampel_interval", RUN_KEYS.iter().copied()),
            Some("sample_interval")
        );
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

    /// Applies edits (position, operation, character) to `base`, at char boundaries.
    fn mutate(base: &str, edits: &[(usize, u8, char)]) -> String {
        let mut s = base.to_string();
        for &(pos, op, c) in edits {
            let mut p = if s.is_empty() { 0 } else { pos % (s.len() + 1) };
            while !s.is_char_boundary(p) {
                p -= 1;
            }
            match op % 3 {
                0 => s.insert(p, c),
                1 if p < s.len() => {
                    s.remove(p);
                }
                _ if p < s.len() => {
                    s.remove(p);
                    s.insert(p, c);
                }
                _ => s.push(c),
            }
        }
        s
    }

    fn check_errors(text: &str) {
        if let Err(errs) = parse_scenario(text, "fuzz.toml") {
            assert!(!errs.0.is_empty());
            let lines = text.split('\n').count() as u32;
            let mut prev = (0, 0);
            for e in &errs.0 {
                assert!(e.line >= 1 && e.line <= lines, "{e} in {text:?}");
                assert!(e.column >= 1, "{e}");
                assert!((e.line, e.column) >= prev, "unsorted: {errs}");
                prev = (e.line, e.column);
                let _ = e.to_string();
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_strings_never_panic(s in any::<String>()) {
            check_errors(&s);
        }

        #[test]
        fn toml_like_strings_never_panic(s in "[\\[\\]a-z_=\"' .,{}0-9\\n#-]{0,200}") {
            check_errors(&s);
        }

        #[test]
        fn mutations_of_the_example_never_panic(
            edits in prop::collection::vec(
                (any::<usize>(), any::<u8>(), prop::sample::select(vec![
                    '[', ']', '"', '\'', '=', '\n', ' ', ',', '.', '-', '0', '1', '9', 'x', 's',
                    'm', '{', '}', '#', 'é', '\\', 't',
                ])),
                1..8,
            )
        ) {
            check_errors(&mutate(EXAMPLE, &edits));
        }

        #[test]
        fn mutations_of_the_80211n_example_never_panic(
            edits in prop::collection::vec(
                (any::<usize>(), any::<u8>(), prop::sample::select(vec![
                    '[', ']', '"', '=', '\n', ' ', '.', '-', '_', '0', '1', '4', 'n', 'b', 'f', 'x',
                ])),
                1..8,
            )
        ) {
            check_errors(&mutate(HT_EXAMPLE, &edits));
        }

        #[test]
        fn every_value_can_be_replaced(
            line in 0usize..19,
            value in prop::sample::select(vec![
                "1", "-1", "0", "1.5", "true", "\"\"", "\"x\"", "[]", "{}", "[1, \"a\"]",
                "1979-05-27", "\"-1s\"", "\"0s\"", "\"saturate\"", "\"server\"", "\"ap\"",
                "99999999999999999999", "\"5.5Mbps\"", "{ a = 1 }", "[[1]]", "inf", "nan",
            ]),
        ) {
            let text: String = EXAMPLE
                .lines()
                .enumerate()
                .map(|(i, l)| match l.split_once(" = ") {
                    Some((k, _)) if i == line => format!("{k} = {value}\n"),
                    _ => format!("{l}\n"),
                })
                .collect();
            check_errors(&text);
        }
    }
}

/// A tc rate whose unit counts bytes per second (bps, kbps, mbps, ... and the IEC forms).
fn counts_bytes(rate: &str) -> bool {
    let r = rate.trim().to_ascii_lowercase();
    r.ends_with("bps")
}
