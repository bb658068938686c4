//! 802.11n keys: the HT settings of `[cell]`, the AP's MAC queueing (`[ap]`) and a station's
//! MCS and airtime weight; and which keys each standard refuses.

use super::*;
use crate::mac::edca::TxopTable;
use crate::mac::rate::RateControl;
use crate::phy::error_rate::OfdmRate;
use crate::phy::ht::{ChannelWidth, GuardInterval, HtMcs, HT_MF_PPDU_MAX_TIME, LINUX_MAX_AGGR_TIME};
use crate::phy::ofdm::{OfdmBand, MANDATORY_RATES};
use crate::wifi::ht::params::{
    AirtimeSched, ApMacConfig, DynamicAggregate, FqKernel, HtCellConfig, HtStationConfig, MacQueue, ATH_MAX_QDEPTH,
    DYNAMIC_AGGREGATE_STATIONS,
};

/// Why an 802.11n cell refuses `preamble`, `cw_min`/`cw_max` and a station's `rate`.
pub(super) const PREAMBLE_IN_HT: &str = "an 802.11n cell sends HT-mixed PPDUs (and its control frames with the OFDM \
     preamble); leave `preamble` out";
pub(super) const CW_IN_HT: &str = "in an 802.11n cell the contention windows come from the EDCA parameters of each \
     access category; leave `cw_min` and `cw_max` out";
pub(super) const DEFER_IN_HT: &str = "`eifs` and `collision_defer` choose between 802.11b conventions; an 802.11n \
     cell defers EIFS - DIFS + AIFS after an undecodable PPDU and the BlockAck timeout + AIFS after a collision \
     (docs/model-80211n-mac.md); leave the key out";
pub(super) const RATE_IN_HT: &str = "802.11n stations take `mcs` (0-15, e.g. mcs = 7), not `rate`";

const DEFAULT_MCS: u8 = 7;
const DEFAULT_AIRTIME_WEIGHT: u64 = 256;
/// 30 software retries + the first attempt (ath9k's ATH_MAX_SW_RETRIES).
const DEFAULT_MPDU_RETRY_LIMIT: u64 = 31;
const MAX_DRIVER_QUEUE_LIMIT: u64 = 100_000;

/// The AP's qdisc when `queueing = "fq_codel"`.
const FQ_CODEL_SCRIPT: &str = "tc qdisc add dev wlan0 root fq_codel\n";

/// `tbl[key]` for a key that exists only in an 802.11n cell; in an 802.11b cell it is reported
/// and None.
pub(super) fn ht_only<'t, 'i>(
    rd: &mut Reader<'_>,
    tbl: &'t DeTable<'i>,
    path: &str,
    key: &str,
    standard: Option<Standard>,
) -> Option<&'t Value<'i>> {
    let v = tbl.get(key)?;
    if standard == Some(Standard::Dot11b) {
        rd.error(
            &v.span(),
            &join(path, key),
            format!("`{key}` is only in an 802.11n cell (set standard = \"802.11n\" in [cell]); this cell is 802.11b"),
        );
        return None;
    }
    Some(v)
}

/// `tbl[key]` for a key an 802.11n cell refuses; there it is reported with `why` (a sentence
/// that names the 802.11n cell and says what to do instead) and None.
pub(super) fn not_ht<'t, 'i>(
    rd: &mut Reader<'_>,
    tbl: &'t DeTable<'i>,
    path: &str,
    key: &str,
    standard: Option<Standard>,
    why: &str,
) -> Option<&'t Value<'i>> {
    let v = tbl.get(key)?;
    if standard == Some(Standard::Dot11n) {
        rd.error(&v.span(), &join(path, key), why);
        return None;
    }
    Some(v)
}

/// `rate_control` of the cell or a station: an 802.11n link takes "fixed" (the station's `mcs`),
/// "minstrel" (Minstrel over MCS 0 to `mcs`, one rate per A-MPDU) or "minstrel_ht" (Minstrel-HT
/// with ath9k's hardware retry chain); an 802.11b link does not take "minstrel_ht".
pub(super) fn rate_control(
    rd: &mut Reader<'_>,
    v: &Value<'_>,
    key: &str,
    standard: Option<Standard>,
) -> Option<RateControl> {
    let rc = radio::rate_control(rd, v, key)?;
    if !matches!(rc, RateControl::Fixed | RateControl::Minstrel | RateControl::MinstrelHt)
        && standard == Some(Standard::Dot11n)
    {
        rd.error(
            &v.span(),
            key,
            format!(
                "{:?} is an 802.11b rate control; an 802.11n link takes \"fixed\" (always its `mcs`), \"minstrel\" \
                 (Minstrel over MCS 0 to `mcs`) or \"minstrel_ht\" (Minstrel-HT with ath9k's retry chain)",
                rc.name()
            ),
        );
        return None;
    }
    if rc == RateControl::MinstrelHt && standard == Some(Standard::Dot11b) {
        rd.error(
            &v.span(),
            key,
            "\"minstrel_ht\" is an 802.11n rate control (set `[cell] standard = \"802.11n\"`); an 802.11b link takes \
             \"fixed\", \"arf\", \"aarf\" or \"minstrel\"",
        );
        return None;
    }
    Some(rc)
}

/// The 802.11n settings of `[cell]` (`standard = "802.11n"`); None in an 802.11b cell, where
/// each of the keys is reported.
pub(super) fn parse_ht_cell(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    standard: Option<Standard>,
) -> Option<HtCellConfig> {
    let get = |rd: &mut Reader<'_>, key: &str| ht_only(rd, tbl, "cell", key, standard);
    let band = get(rd, "band").and_then(|v| band(rd, v));
    let width = get(rd, "width").and_then(|v| width(rd, v));
    let gi = get(rd, "guard_interval").and_then(|v| word::<GuardInterval>(rd, v, "cell.guard_interval"));
    // The basic rates are DSSS rates in an 802.11b cell, unknown ones with an invalid standard.
    let basic_rates = match standard {
        Some(Standard::Dot11n) => tbl.get("basic_rates").and_then(|v| ofdm_basic_rates(rd, v)),
        _ => None,
    };
    let max_aggregate_time = get(rd, "max_aggregate_time").and_then(|v| {
        let key = "cell.max_aggregate_time";
        let t = time_value(rd, v, key, "4ms")?;
        if t == Nanos::ZERO || t > HT_MF_PPDU_MAX_TIME {
            rd.error(
                &v.span(),
                key,
                format!(
                    "must be greater than zero and at most {HT_MF_PPDU_MAX_TIME} (the longest HT-mixed PPDU), got {t}; \
                     Linux drivers use \"4ms\""
                ),
            );
            return None;
        }
        Some(t)
    });
    let max_aggregate_mpdus = get(rd, "max_aggregate_mpdus")
        .and_then(|v| integer(rd, v, "cell.max_aggregate_mpdus", 1, u64::from(crate::phy::ht::AMPDU_MAX_MPDUS)));
    let mpdu_retry_limit = get(rd, "mpdu_retry_limit").and_then(|v| integer(rd, v, "cell.mpdu_retry_limit", 1, 255));
    let txop_limits = get(rd, "txop_limits").and_then(|v| word::<TxopTable>(rd, v, "cell.txop_limits"));
    if standard == Some(Standard::Dot11b) {
        return None;
    }
    Some(HtCellConfig {
        band: band.unwrap_or(OfdmBand::Ghz5),
        width: width.unwrap_or(ChannelWidth::Mhz20),
        gi: gi.unwrap_or(GuardInterval::Long),
        basic_rates: basic_rates.unwrap_or_else(|| MANDATORY_RATES.to_vec()),
        max_aggregate_time: max_aggregate_time.unwrap_or(LINUX_MAX_AGGR_TIME),
        max_aggregate_mpdus: max_aggregate_mpdus.map_or(crate::phy::ht::AMPDU_MAX_MPDUS, |n| n as u32),
        mpdu_retry_limit: mpdu_retry_limit.unwrap_or(DEFAULT_MPDU_RETRY_LIMIT) as u32,
        txop_limits: txop_limits.unwrap_or(TxopTable::Ieee2016),
    })
}

/// `band = "5GHz"` or `"2.4GHz"` (case and spaces ignored, the unit optional). An 802.11n-only
/// BSS at 2.4 GHz uses the short slot.
fn band(rd: &mut Reader<'_>, v: &Value<'_>) -> Option<OfdmBand> {
    const KEY: &str = "cell.band";
    let expected = "\"5GHz\" or \"2.4GHz\"";
    let s = match v.get_ref() {
        DeValue::String(s) => s,
        DeValue::Integer(_) | DeValue::Float(_) => {
            type_error(rd, v, KEY, &format!("a string, {expected} (with quotes)"));
            return None;
        }
        _ => {
            type_error(rd, v, KEY, &format!("a string, {expected}"));
            return None;
        }
    };
    let norm: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
    match norm.strip_suffix("ghz").unwrap_or(&norm) {
        "5" => Some(OfdmBand::Ghz5),
        "2.4" => Some(OfdmBand::Ghz24ShortSlot),
        _ => {
            rd.error(&v.span(), KEY, format!("unknown band {s:?}; expected {expected}"));
            None
        }
    }
}

/// `width = 20` or `40` (MHz).
fn width(rd: &mut Reader<'_>, v: &Value<'_>) -> Option<ChannelWidth> {
    const KEY: &str = "cell.width";
    let DeValue::Integer(i) = v.get_ref() else {
        type_error(rd, v, KEY, "20 or 40 (MHz, an integer without quotes or unit)");
        return None;
    };
    match i128::from_str_radix(i.as_str(), i.radix()) {
        Ok(20) => Some(ChannelWidth::Mhz20),
        Ok(40) => Some(ChannelWidth::Mhz40),
        _ => {
            rd.error(&v.span(), KEY, format!("must be 20 or 40 (MHz), got {i}"));
            None
        }
    }
}

/// The basic rates of an 802.11n cell: OFDM rates; a DSSS rate is refused with the reason.
fn ofdm_basic_rates(rd: &mut Reader<'_>, v: &Value<'_>) -> Option<Vec<OfdmRate>> {
    let parse = |s: &str| {
        units::parse_ofdm_rate(s).map_err(|e| match units::parse_phy_rate(s) {
            Ok(_) => format!(
                "{s:?} is an 802.11b (DSSS) rate, but this cell is 802.11n: its basic rates are OFDM rates, \
                 {} (default [\"6Mbps\", \"12Mbps\", \"24Mbps\"])",
                ofdm_rate_names()
            ),
            Err(_) => e.to_string(),
        })
    };
    rate_list(rd, v, "[\"6Mbps\", \"12Mbps\", \"24Mbps\"]", parse, |r| format!("{}Mbps", r.mbps()))
}

fn ofdm_rate_names() -> String {
    let names: Vec<String> = OfdmRate::ALL.iter().map(|r| format!("\"{}Mbps\"", r.mbps())).collect();
    names.join(", ")
}

/// A station's `mcs`, `airtime_weight` and `min_rate`: Some in an 802.11n cell (defaults MCS 7, weight 256),
/// None in an 802.11b cell (where the keys are reported) or when the standard is invalid.
pub(super) fn station_ht(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    path: &str,
    standard: Option<Standard>,
) -> Option<HtStationConfig> {
    let mcs = ht_only(rd, tbl, path, "mcs", standard)
        .and_then(|v| integer(rd, v, &join(path, "mcs"), 0, u64::from(HtMcs::MAX)))
        .and_then(|n| HtMcs::new(n as u8));
    let weight = ht_only(rd, tbl, path, "airtime_weight", standard)
        .and_then(|v| integer(rd, v, &join(path, "airtime_weight"), 1, 65535));
    let min_rate = ht_only(rd, tbl, path, "min_rate", standard).and_then(|v| {
        let key = join(path, "min_rate");
        let r = tc_rate(rd, v, &key)?;
        if r == 0 {
            rd.error(&v.span(), &key, "must be above zero, e.g. \"2mbit\" (leave it out for no minimum)");
            return None;
        }
        Some(r)
    });
    (standard == Some(Standard::Dot11n)).then(|| HtStationConfig {
        mcs: mcs.unwrap_or(HtMcs::new(DEFAULT_MCS).expect("MCS 7 exists")),
        airtime_weight: weight.unwrap_or(DEFAULT_AIRTIME_WEIGHT) as u32,
        min_rate_bps: min_rate.unwrap_or(0),
    })
}

/// The four configurations of Høiland-Jørgensen et al. (`[ap] queueing`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Preset {
    /// Driver FIFO, no airtime fairness (pfifo qdisc).
    Fifo,
    /// Driver FIFO under an fq_codel root qdisc on the AP's wlan0.
    FqCodel,
    /// mac80211's intermediate queues, round robin.
    FqMac,
    /// FQ-MAC with ath9k's airtime scheduler.
    Airtime,
}

const PRESETS: &[(&str, Preset)] =
    &[("fifo", Preset::Fifo), ("fq_codel", Preset::FqCodel), ("fq-mac", Preset::FqMac), ("airtime", Preset::Airtime)];
const MAC_QUEUES: &[(&str, bool)] = &[("fifo", false), ("fq-mac", true)];

/// Like [`choice`], with `_` and `-` interchangeable (`"fq_mac"` for `"fq-mac"`).
fn choice_dash<T: Copy>(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, options: &[(&str, T)]) -> Option<T> {
    if let DeValue::String(s) = v.get_ref() {
        let norm = |x: &str| x.trim().replace('_', "-").to_ascii_lowercase();
        if let Some((_, t)) = options.iter().find(|(n, _)| norm(n) == norm(s)) {
            return Some(*t);
        }
    }
    choice(rd, v, key, options)
}

/// The AP's MAC queueing (`[ap]` of an 802.11n cell). `queueing = "fq_codel"` also gives the AP
/// its tc script (a root fq_codel on wlan0).
pub(super) fn parse_ap_mac(
    rd: &mut Reader<'_>,
    t: Option<(&DeTable<'_>, Span)>,
    standard: Option<Standard>,
    ap: &mut NodeConfig,
) -> ApMacConfig {
    let Some((tbl, _)) = t else { return ApMacConfig::default() };
    let get = |rd: &mut Reader<'_>, key: &str| ht_only(rd, tbl, "ap", key, standard);
    let preset_v = get(rd, "queueing");
    let queue_v = get(rd, "mac_queue");
    let airtime_v = get(rd, "airtime");

    // Whether the queue is FQ-MAC, and the scheduler; None when unknown (an invalid value,
    // already reported): the checks that depend on them are then skipped.
    let (fq, airtime): (Option<bool>, Option<AirtimeSched>) = match preset_v {
        Some(pv) => {
            let line = rd.line_of(&pv.span());
            for (k, v) in [("mac_queue", queue_v), ("airtime", airtime_v)] {
                if let Some(v) = v {
                    rd.error(
                        &v.span(),
                        &join("ap", k),
                        format!(
                            "`queueing` (line {line}) already sets mac_queue and airtime; give either `queueing` \
                             or `mac_queue` and `airtime`, not both `queueing` and `{k}`"
                        ),
                    );
                }
            }
            match choice_dash(rd, pv, "ap.queueing", PRESETS) {
                Some(p) => {
                    if p == Preset::FqCodel {
                        fq_codel_script(rd, tbl, pv, ap);
                    }
                    let fq = matches!(p, Preset::FqMac | Preset::Airtime);
                    let at = if p == Preset::Airtime { AirtimeSched::Ath9k } else { AirtimeSched::Off };
                    (Some(fq), Some(at))
                }
                None => (None, None),
            }
        }
        None => {
            let fq = match queue_v {
                Some(v) => choice_dash(rd, v, "ap.mac_queue", MAC_QUEUES),
                None => Some(false),
            };
            let at = match airtime_v {
                Some(v) => word::<AirtimeSched>(rd, v, "ap.airtime"),
                None => Some(AirtimeSched::Off),
            };
            if let (Some(false), Some(a), Some(v)) = (fq, at, airtime_v) {
                if a != AirtimeSched::Off {
                    let name = a.name();
                    let given = if queue_v.is_some() { "" } else { " (the default)" };
                    rd.error(
                        &v.span(),
                        "ap.airtime",
                        format!(
                            "the {name} airtime scheduler picks among mac80211's per-station queues, which \
                             mac_queue = \"fifo\"{given} does not have; set mac_queue = \"fq-mac\""
                        ),
                    );
                }
            }
            (fq, at)
        }
    };

    let limit = get(rd, "driver_queue_limit").and_then(|v| {
        if fq == Some(true) {
            rd.error(
                &v.span(),
                "ap.driver_queue_limit",
                "applies only to mac_queue = \"fifo\" (the driver's per-AC frame limit); FQ-MAC has no driver FIFO",
            );
            return None;
        }
        integer(rd, v, "ap.driver_queue_limit", 1, MAX_DRIVER_QUEUE_LIMIT).map(|n| n as u32)
    });
    let airtime_rx = get(rd, "airtime_rx").and_then(|v| boolean(rd, v, "ap.airtime_rx"));
    let aql = get(rd, "aql").and_then(|v| {
        let b = boolean(rd, v, "ap.aql")?;
        if b && airtime.is_some_and(|a| a != AirtimeSched::Mac80211) {
            let instead = if preset_v.is_some() { " instead of `queueing`" } else { "" };
            rd.error(
                &v.span(),
                "ap.aql",
                format!(
                    "AQL (Airtime Queue Limits) is part of mac80211's airtime scheduler in this model; set \
                     airtime = \"mac80211\" (with mac_queue = \"fq-mac\"){instead} or leave `aql` out"
                ),
            );
            return None;
        }
        Some(b)
    });
    let fq_kernel = get(rd, "fq_kernel").and_then(|v| {
        if fq == Some(false) {
            rd.error(
                &v.span(),
                "ap.fq_kernel",
                "applies only with mac_queue = \"fq-mac\" (it chooses the FQ-MAC overflow and CoDel policy)",
            );
            return None;
        }
        word::<FqKernel>(rd, v, "ap.fq_kernel")
    });

    let dyn_time = get(rd, "dynamic_aggregate_time").and_then(|v| {
        let key = "ap.dynamic_aggregate_time";
        let t = time_value(rd, v, key, "1ms")?;
        if t == Nanos::ZERO || t > HT_MF_PPDU_MAX_TIME {
            rd.error(
                &v.span(),
                key,
                format!("must be greater than zero and at most {HT_MF_PPDU_MAX_TIME} (the longest HT-mixed PPDU), got {t}; the paper suggests \"1ms\""),
            );
            return None;
        }
        Some(t)
    });
    let dyn_stations = get(rd, "dynamic_aggregate_stations").and_then(|v| {
        if !tbl.contains_key("dynamic_aggregate_time") {
            rd.error(
                &v.span(),
                "ap.dynamic_aggregate_stations",
                "applies only with dynamic_aggregate_time (the cap, e.g. \"1ms\"); give both or neither",
            );
            return None;
        }
        integer(rd, v, "ap.dynamic_aggregate_stations", 0, 10_000).map(|n| n as u32)
    });

    let airtime = airtime.unwrap_or(AirtimeSched::Off);
    let mac80211 = airtime == AirtimeSched::Mac80211;
    ApMacConfig {
        queue: if fq == Some(true) {
            MacQueue::FqMac
        } else {
            MacQueue::DriverFifo { limit: limit.unwrap_or(ATH_MAX_QDEPTH) }
        },
        airtime,
        airtime_rx: airtime_rx.unwrap_or(true),
        aql: aql.unwrap_or(mac80211),
        fq_kernel: fq_kernel.unwrap_or(if mac80211 { FqKernel::Linux6_18 } else { FqKernel::Linux4_11 }),
        policy: Default::default(),
        dynamic_aggregate: dyn_time
            .map(|time| DynamicAggregate { time, stations: dyn_stations.unwrap_or(DYNAMIC_AGGREGATE_STATIONS) }),
        next: super::next_steps::parse_next_steps(rd, tbl, get, fq),
    }
}

/// `queueing = "fq_codel"`: the AP's wlan0 gets a root fq_codel, unless `[ap]` has its own
/// script (reported). The script's errors, if any, would point at the `queueing` value.
fn fq_codel_script(rd: &mut Reader<'_>, tbl: &DeTable<'_>, pv: &Value<'_>, ap: &mut NodeConfig) {
    if let Some(k) = ["tc", "tc_file"].into_iter().find(|k| tbl.contains_key(*k)) {
        rd.error(
            &pv.span(),
            "ap.queueing",
            format!(
                "queueing = \"fq_codel\" sets the qdisc; remove ap.{k} or choose mac_queue (mac_queue = \"fifo\" \
                 and your script)"
            ),
        );
        return;
    }
    let (file, line, col) = rd.locate(pv.span().start);
    ap.tc = Some(TcSource {
        text: FQ_CODEL_SCRIPT.to_string(),
        file: file.to_string(),
        key: "ap.queueing".to_string(),
        line_offset: line - 1,
        first_line_col_offset: col - 1,
    });
}
