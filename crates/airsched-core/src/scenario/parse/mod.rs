//! TOML scenario file -> [`Scenario`], reporting every problem of the file at once.
//!
//! The document is parsed into `toml`'s spanned tree ([`DeTable`]) and walked by hand: every key
//! is checked against the keys its section knows, every value is converted and range-checked,
//! and every failure becomes a [`ScenarioError`] carrying the line and column of the offending
//! value (of the key, for unknown keys; of the table header, for missing required keys). Nothing
//! stops at the first problem; the errors come back sorted by position.
//!
//! One file per section: `run.rs`, `cell.rs` (802.11b PHY and DCF), `wired.rs`, `node.rs` (the
//! keys of `[ap]`, `[server]` and every station: txqueuelen, ip, tc), `station.rs`, `flow.rs`,
//! `radio.rs` (SNR, positions, fading, `[monitor]`), `ht.rs` (802.11n keys); `values.rs` holds the
//! value readers and the unknown-key check they all use.
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
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub use overrides::{toml_string, OVERRIDES_FILE};

use super::error::{ScenarioError, ScenarioErrors};
use super::{CellConfig, NodeConfig, RunConfig, Scenario, StationConfig, TcSource, WiredConfig};
use crate::phy::dsss::{DsssRate, Preamble};
use crate::phy::Standard;
use crate::time::Nanos;
use crate::traffic::flow::{Endpoint, FlowConfig, FlowRate, Protocol, MAX_UDP_PAYLOAD, UDP_IP_OVERHEAD};
use crate::units;
use crate::wifi::ifs::{CollisionDefer, EifsRule};
use crate::words::Words;

mod airtime;
mod amsdu;
mod bluetooth;
mod cell;
mod flow;
mod ht;
mod limits;
mod next_steps;
mod node;
mod ofdma;
mod overrides;
mod pcf;
mod radio;
mod run;
mod station;
mod values;
mod wired;

use cell::*;
use flow::*;
use limits::*;
use node::*;
use run::*;
use station::*;
use values::*;
use wired::*;

/// Parses and validates a scenario. `file` is only used to label errors.
///
/// Returns every error of the file (syntax errors excepted: a TOML syntax error stops parsing
/// and is reported alone).
pub fn parse_scenario(text: &str, file: &str) -> Result<Scenario, ScenarioErrors> {
    parse_scenario_with(text, file, &[] as &[&str])
}

/// [`parse_scenario`] with overrides: each `KEY=VALUE` (e.g. `cell.retry_limit=4`,
/// `station[sta2].rate=2Mbps`) replaces or adds one setting of the file before it is checked, so
/// an override is validated exactly as the same value in the file would be. Errors in an override
/// are reported in the file [`OVERRIDES_FILE`], on the line of its position in `overrides`
/// (1-based); see `overrides.rs` for the syntax.
pub fn parse_scenario_with<S: AsRef<str>>(text: &str, file: &str, overrides: &[S]) -> Result<Scenario, ScenarioErrors> {
    let mut rd = Reader::new(file, text, overrides);
    let mut root = match DeTable::parse(text) {
        Ok(root) => root.into_inner(),
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let mut msg = format!("TOML syntax error: {}", e.message());
            // The parser does not name the duplicated key; quote it from the source.
            if e.message() == "duplicate key" {
                if let Some(k) = text.get(span.clone()).filter(|k| !k.is_empty() && k.len() <= 64) {
                    msg = format!(
                        "TOML syntax error: duplicate key `{k}` (each key and table may \
                         appear only once)"
                    );
                }
            }
            rd.error(&span, "", msg);
            return Err(ScenarioErrors(rd.errors));
        }
    };
    overrides::apply_all(&mut rd, &mut root);
    let mut scenario = walk(&mut rd, &root);
    if rd.errors.is_empty() {
        // The tc scripts are checked once the rest is valid (they need the devices and seed).
        let (errors, mut warnings) = super::tc_trees::check_all(&scenario);
        // Accepted but without effect: say so with the results.
        if scenario.ap_mac.airtime != crate::wifi::ht::params::AirtimeSched::Mac80211 {
            for (i, st) in scenario.stations.iter().enumerate() {
                if st.ht.is_some_and(|h| h.airtime_weight != 256) {
                    warnings.push(format!(
                        "{file}: station[{i}].airtime_weight: warning: only the mac80211 airtime scheduler \
                         ([ap] airtime = \"mac80211\") uses station weights; this run ignores it"
                    ));
                }
            }
        }
        warnings.extend(bluetooth::sir_warnings(file, &root, &scenario));
        scenario.warnings = warnings;
        if errors.is_empty() {
            return Ok(scenario);
        }
        let mut errors = errors;
        errors.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        Err(ScenarioErrors(errors))
    } else {
        // The file's errors in order, then the overrides'.
        rd.errors.sort_by_key(|e| (e.file != file, e.line, e.column));
        Err(ScenarioErrors(rd.errors))
    }
}

type Span = Range<usize>;
type Value<'i> = Spanned<DeValue<'i>>;

const TOP_KEYS: &[&str] =
    &["run", "cell", "wired", "ap", "server", "station", "flow", "monitor", "bluetooth", "piconet", "airtime_group"];
const RUN_KEYS: &[&str] = &["duration", "warmup", "seed", "sample_interval"];
const CELL_KEYS: &[&str] = &[
    "standard",
    "band",
    "width",
    "guard_interval",
    "nss",
    "ltf",
    "packet_padding",
    "max_aggregate_time",
    "max_aggregate_mpdus",
    "mpdu_retry_limit",
    "txop_limits",
    "backoff_countdown",
    "collision_ifs",
    "cw_at_retry_limit",
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
    "channel",
    "pcf",
    "dtim_period",
    "cfp_period",
    "cfp_max_duration",
];
const WIRED_KEYS: &[&str] = &["rate", "delay"];
const NODE_KEYS: &[&str] = &["txqueuelen", "ip", "tc", "tc_file", "kernel"];
/// `[ap]`: a node's keys, the AP's MAC queueing (802.11n cells) and its transmit buffers
/// (802.11b cells).
const AP_KEYS: &[&str] = &[
    "txqueuelen",
    "ip",
    "tc",
    "tc_file",
    "queueing",
    "mac_queue",
    "driver_queue_limit",
    "airtime",
    "airtime_rx",
    "aql",
    "fq_kernel",
    "dynamic_aggregate_time",
    "dynamic_aggregate_stations",
    "kernel",
    // next_steps.rs (NEXT_STEPS_AP_KEYS)
    "retry_budget",
    "retry_budget_sojourn",
    "hw_queue_lead",
    "admission_sojourn",
    "aggregation",
    "firmware_limit",
    "firmware_frames",
    "vo_piggyback",
    "schedule_order",
    // 802.11b (node.rs)
    "tx_buffers",
    "rate_control",
    // ofdma.rs (OFDMA_AP_KEYS)
    "ofdma",
    "mu_scheduler",
    "mu_stations",
    "mu_access_interval",
    "ul_bsrp",
    "ul_trigger_nav",
    "ul_trigger_capture",
    "ul_tb_fill",
    "ul_timer_tie",
    "ul_bsr_lifetime",
    "mu_missed_ba",
    "mu_edca_timer",
    "mu_edca_aifsn",
    "mu_edca_cw_min",
    "mu_edca_cw_max",
    // amsdu.rs (AMSDU_AP_KEYS)
    "amsdu",
    "max_tx_fragments",
];
const STATION_KEYS: &[&str] = &[
    "name",
    "rate",
    "txqueuelen",
    "ip",
    "tc",
    "tc_file",
    "rate_control",
    "snr",
    "position",
    "schedule",
    "schedule_mode",
    "snr_up_offset",
    "fading",
    "mcs",
    "nss",
    "width",
    "standard",
    "airtime_weight",
    "min_rate",
    "mac",
    "kernel",
    "location",
    "cf_pollable",
    "max_amsdu_len",
    "driver_queue_limit",
    "aggregation",
];
/// `[[flow]]`'s keys: the ones every flow takes, then TCP's (listed once, in
/// `with_tcp_flow_keys!`).
macro_rules! with_tcp_flow_keys {
    ($($k:literal),* $(,)?) => {
        &[
            $($k,)* "cc", "bytes", "sack", "kernel", "initial_cwnd", "rmem", "wmem", "adv_win_scale", "autotune",
            "tsq", "repeat", "rack", "tlp", "frto",
        ]
    };
}
#[rustfmt::skip] // one line per dozen keys (rustfmt would give each its own line)
const FLOW_KEYS: &[&str] = with_tcp_flow_keys!(
    "name", "protocol", "src", "dst", "rate", "size", "start", "stop", "jitter", "sport", "dport", "tos", "dscp",
    "mark", "priority", "interval", "reply_delay",
);
/// The keys only a TCP flow takes.
const TCP_FLOW_KEYS: &[&str] = with_tcp_flow_keys!();

/// Where each section's keys live, for "`seed` belongs in [run]" hints.
const SECTIONS: &[(&str, &[&str])] = &[
    ("[run]", RUN_KEYS),
    ("[cell]", CELL_KEYS),
    ("[wired]", WIRED_KEYS),
    ("[ap]", AP_KEYS),
    ("[[station]]", STATION_KEYS),
    ("[[flow]]", FLOW_KEYS),
    ("[monitor]", radio::MONITOR_KEYS),
    ("[[bluetooth]]", bluetooth::BLUETOOTH_KEYS),
    ("[piconet]", bluetooth::PICONET_KEYS),
    ("[[airtime_group]]", airtime::AIRTIME_GROUP_KEYS),
];

const DEFAULT_DURATION: Nanos = Nanos::from_secs(10);
const DEFAULT_WARMUP: Nanos = Nanos::from_secs(1);
const DEFAULT_TXQUEUELEN: u32 = 1000;
const MAX_TXQUEUELEN: u64 = 1_000_000;

/// The reader of one scenario: its file and text, the overrides, and the errors found so far.
/// Spans index one space of byte offsets: the file's text, then each override's `KEY=VALUE` text
/// (one byte apart), so that a value taken from an override carries its own position.
struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
    /// Each override's text and the offset its first byte has in the span space.
    overrides: Vec<(usize, &'a str)>,
    errors: Vec<ScenarioError>,
}

impl<'a> Reader<'a> {
    fn new<S: AsRef<str>>(file: &'a str, text: &'a str, overrides: &'a [S]) -> Reader<'a> {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let mut base = text.len() + 1;
        let overrides = overrides
            .iter()
            .map(|o| {
                let o = o.as_ref();
                let start = base;
                base += o.len() + 1;
                (start, o)
            })
            .collect();
        Reader { file, text, line_starts, overrides, errors: Vec::new() }
    }

    /// The override a span offset falls in: its index and its text's start and text.
    fn override_at(&self, offset: usize) -> Option<(usize, usize, &'a str)> {
        if offset <= self.text.len() {
            return None;
        }
        let i = self.overrides.partition_point(|&(start, _)| start <= offset).checked_sub(1)?;
        let (start, text) = self.overrides[i];
        Some((i, start, text))
    }

    /// Whether a span lies in an override rather than in the file.
    fn is_override(&self, span: &Span) -> bool {
        self.override_at(span.start).is_some()
    }

    /// The text a span covers, in the file or in an override ("" if it is not a char range).
    fn source(&self, span: &Span) -> &'a str {
        let (base, text) = match self.override_at(span.start) {
            Some((_, start, text)) => (start, text),
            None => (0, self.text),
        };
        text.get(span.start - base..span.end.saturating_sub(base).min(text.len())).unwrap_or("")
    }

    /// The file (the scenario's, or [`OVERRIDES_FILE`]) and the 1-based line and column in
    /// characters of a span offset; an override's line is its 1-based position in the list.
    fn locate(&self, offset: usize) -> (&'a str, u32, u32) {
        match self.override_at(offset) {
            Some((i, start, text)) => {
                let mut o = (offset - start).min(text.len());
                while !text.is_char_boundary(o) {
                    o -= 1;
                }
                let column = text[..o].chars().count() + 1;
                (OVERRIDES_FILE, u32::try_from(i + 1).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
            }
            None => {
                let (line, column) = self.position(offset);
                (self.file, line, column)
            }
        }
    }

    /// 1-based (line, column in characters) of a byte offset of the file.
    fn position(&self, offset: usize) -> (u32, u32) {
        let mut o = offset.min(self.text.len());
        while !self.text.is_char_boundary(o) {
            o -= 1;
        }
        // Index of the last line starting at or before `o` (line_starts[0] == 0 <= o).
        let line = self.line_starts.partition_point(|&start| start <= o);
        let line_start = self.line_starts[line - 1];
        let column = self.text[line_start..o].chars().count() + 1;
        (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(column).unwrap_or(u32::MAX))
    }

    fn error(&mut self, span: &Span, key: &str, message: impl Into<String>) {
        let (file, line, column) = self.locate(span.start);
        self.errors.push(ScenarioError {
            file: file.to_string(),
            line,
            column,
            key: key.to_string(),
            message: message.into(),
        });
    }

    /// "12" for line 12 of the file, "2 of <command line>" for the second override.
    fn line_of(&self, span: &Span) -> String {
        match self.locate(span.start) {
            (file, line, _) if file == OVERRIDES_FILE => format!("{line} of {OVERRIDES_FILE}"),
            (_, line, _) => line.to_string(),
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(rd: &mut Reader<'_>, root: &DeTable<'_>) -> Scenario {
    check_keys(rd, root, "", "", TOP_KEYS);

    let run_v = root.get("run");
    let run_t = run_v.and_then(|v| as_table(rd, v, "run", "[run]").map(|t| (t, v.span())));
    let run = parse_run(rd, run_t);

    let cell_v = root.get("cell");
    let cell_t = cell_v.and_then(|v| as_table(rd, v, "cell", "[cell]").map(|t| (t, v.span())));
    let (cell, standard) = parse_cell(rd, cell_t.clone());

    let wired_v = root.get("wired");
    let wired_t = wired_v.and_then(|v| as_table(rd, v, "wired", "[wired]").map(|t| (t, v.span())));
    let wired = parse_wired(rd, wired_t);

    let (mut ap, ap_t) = node_section(rd, root, "ap", AP_KEYS);
    let legacy_ap = node::parse_legacy_ap(rd, ap_t.as_ref().map(|(t, _)| *t), standard, cell.pcf.is_some());
    let ap_tbl = ap_t.as_ref().map(|(t, _)| *t);
    let ap_mac = ht::parse_ap_mac(rd, ap_t, standard, &mut ap);
    ofdma::check_ul_guard_interval(rd, ap_tbl, &cell, ap_mac.ofdma.mode);
    let (server, _) = node_section(rd, root, "server", NODE_KEYS);

    let (stations, names) = parse_stations(rd, root.get("station"), &cell, standard);
    let mut ap_mac = ap_mac;
    ap_mac.policy =
        airtime::parse_airtime_groups(rd, root.get("airtime_group"), &names, stations.len(), standard, ap_mac.airtime);
    ap_mac.amsdu.station_max_len = amsdu::station_lengths(rd, root, &stations);
    pcf::check_pcf(rd, cell_t.map(|(t, _)| t), &cell, &stations, root.get("station"), run.0.duration);
    let (bluetooth, bt_names) = bluetooth::parse_bluetooth(rd, root.get("bluetooth"), &names, standard);
    let piconet = bluetooth::parse_piconet(rd, root.get("piconet"));
    let flows = parse_flows(rd, root.get("flow"), &names, &bt_names, run.1.as_ref());
    let monitor = radio::parse_monitor(rd, root.get("monitor"));

    let scn = Scenario {
        run: run.0,
        cell,
        wired,
        ap,
        server,
        stations,
        flows,
        ap_mac,
        legacy_ap,
        monitor,
        warnings: Vec::new(),
        bluetooth,
        piconet,
        tc_built: Default::default(),
    };
    airtime::check_min_rates(rd, root, &scn);
    if rd.errors.is_empty() {
        check_scenario(rd, root, &scn);
        bluetooth::check_sir(rd, root, &scn);
    }
    scn
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod tests;
