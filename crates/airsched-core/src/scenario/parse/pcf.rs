//! `[cell]`'s point coordination keys (`pcf`, `dtim_period`, `cfp_period`,
//! `cfp_max_duration`) and `[[station]] cf_pollable` (docs/model-pcf.md).

use super::*;
use crate::phy::dsss;
use crate::wifi::pcf::{CfParams, PcfTiming, CF_PARAMETER_SET_BYTES, MAX_MPDU_BYTES, TU};

const PCF_ONLY: &[&str] = &["dtim_period", "cfp_period", "cfp_max_duration"];

/// The CF Parameter Set of a cell with `pcf = true`; None (and errors) otherwise.
pub(super) fn parse_pcf(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    standard: Option<Standard>,
    beacons: bool,
    beacon_interval: Nanos,
) -> Option<CfParams> {
    let on = tbl.get("pcf").and_then(|v| boolean(rd, v, "cell.pcf")).unwrap_or(false);
    if !on {
        for key in PCF_ONLY {
            if let Some(v) = tbl.get(*key) {
                rd.error(
                    &v.span(),
                    &join("cell", key),
                    "only a point-coordinated cell uses it: set pcf = true in [cell], or remove it",
                );
            }
        }
        return None;
    }
    let pcf_span = tbl.get("pcf").map(|v| v.span()).unwrap_or(0..0);
    if standard.is_some_and(Standard::is_ht_mac) {
        rd.error(
            &pcf_span,
            "cell.pcf",
            "PCF is modelled in 802.11b cells only (802.11n's HCCA is not modelled); use standard = \"802.11b\" or remove pcf",
        );
        return None;
    }
    if !beacons {
        rd.error(
            &pcf_span,
            "cell.pcf",
            "a point coordinator announces its contention-free periods in beacons: set beacons = true (the default)",
        );
        return None;
    }
    let dtim_period =
        tbl.get("dtim_period").and_then(|v| integer(rd, v, "cell.dtim_period", 1, 255)).unwrap_or(1) as u32;
    let cfp_period = tbl.get("cfp_period").and_then(|v| integer(rd, v, "cell.cfp_period", 1, 255)).unwrap_or(1) as u32;
    let Some(v) = tbl.get("cfp_max_duration") else {
        rd.error(
            &pcf_span,
            "cell.cfp_max_duration",
            "a point-coordinated cell needs the longest contention-free period, in TU of 1024us, e.g. cfp_max_duration = 50 (or \"51.2ms\")",
        );
        return None;
    };
    let d = cfp_max_duration(rd, v)?;
    Some(CfParams { beacon_interval, dtim_period, cfp_period, cfp_max_duration: d })
}

/// `cfp_max_duration`: an integer number of TU, or a duration that is a whole number of TU
/// (the CF Parameter Set carries it in TU).
fn cfp_max_duration(rd: &mut Reader<'_>, v: &Value<'_>) -> Option<Nanos> {
    const KEY: &str = "cell.cfp_max_duration";
    match v.get_ref() {
        DeValue::Integer(_) => integer(rd, v, KEY, 1, 65_535).map(|n| Nanos(TU.0 * n)),
        DeValue::String(_) => {
            let d = time_value(rd, v, KEY, "51.2ms")?;
            if d.0 % TU.0 != 0 || d.0 == 0 || d.0 / TU.0 > 65_535 {
                rd.error(
                    &v.span(),
                    KEY,
                    format!("{d} is not a whole number of TU (1024us) between 1 and 65535; e.g. 50 (TU) or \"51.2ms\""),
                );
                return None;
            }
            Some(d)
        }
        _ => {
            type_error(rd, v, KEY, "an integer number of TU like 50, or a duration like \"51.2ms\"");
            None
        }
    }
}

/// Checks that need the stations: `cf_pollable` only in a PCF cell, and CFPMaxDuration
/// within 802.11's bounds (IEEE 802.11-1999 9.3.1, as `CfParams::check` puts them): at least
/// the beacon, two maximum-size MPDUs (2346 bytes) at the slowest rate of a station on the
/// polling list (its `rate`, the top rate of an adaptive link), their SIFS and a CF-End; at
/// most the CFP repetition interval less one maximum-size DCF exchange (DIFS, the MPDU at
/// that rate, SIFS, ACK; RTS/CTS is not modelled) for the contention period.
pub(super) fn check_pcf(
    rd: &mut Reader<'_>,
    tbl: Option<&DeTable<'_>>,
    cell: &CellConfig,
    stations: &[StationConfig],
    station_v: Option<&Value<'_>>,
    duration: Nanos,
) {
    let Some(pcf) = cell.pcf else {
        // parse_stations has reported the array's shape; only its tables are looked at here.
        if let Some(DeValue::Array(items)) = station_v.map(|v| v.get_ref()) {
            for (i, item) in items.iter().enumerate() {
                if let DeValue::Table(t) = item.get_ref() {
                    if let Some(v) = t.get("cf_pollable") {
                        rd.error(
                            &v.span(),
                            &format!("station[{i}].cf_pollable"),
                            "only a point-coordinated cell has a polling list: set pcf = true in [cell], or remove it",
                        );
                    }
                }
            }
        }
        return;
    };
    let Some(tbl) = tbl else { return };
    let span = tbl.get("cfp_max_duration").map(|v| v.span()).unwrap_or(0..0);
    let Some(slowest) = stations.iter().filter(|s| s.cf_pollable).map(|s| s.rate).min() else {
        if !stations.is_empty() {
            let pspan = tbl.get("pcf").map(|v| v.span()).unwrap_or(0..0);
            rd.error(&pspan, "cell.pcf", "no station is cf_pollable: the point coordinator would have no one to poll and no CFP would start; leave at least one station on the polling list, or remove pcf");
        }
        return;
    };
    let preamble = cell.preamble;
    let timing = PcfTiming { preamble, ctl_rate: *cell.basic_rates.last().expect("never empty") };
    let beacon = dsss::txtime(preamble, cell.basic_rates[0], cell.beacon_bytes + CF_PARAMETER_SET_BYTES);
    let data = timing.data(slowest, MAX_MPDU_BYTES);
    let two_mpdus = data + dsss::SIFS + data + dsss::SIFS;
    let dcf = dsss::DIFS + data + dsss::SIFS + dsss::ack_time(preamble, &cell.basic_rates, slowest);
    let params = CfParams {
        beacon_interval: cell.beacon_interval,
        dtim_period: pcf.dtim_period,
        cfp_period: pcf.cfp_period,
        cfp_max_duration: pcf.cfp_max_duration,
    };
    if let Err(e) = params.check(beacon, two_mpdus, timing.cf_end(), dcf) {
        rd.error(
            &span,
            "cell.cfp_max_duration",
            format!("{e} (at {}, the slowest polled station's rate)", slowest.label()),
        );
    }
    // The results' `cfp` table has a row per CFP: bounded as the samples table is.
    let cfps = duration.0 / params.repetition_interval().0.max(1);
    if cfps > super::limits::MAX_SAMPLE_ROWS {
        let pspan = tbl.get("pcf").map(|v| v.span()).unwrap_or(0..0);
        rd.error(
            &pspan,
            "cell.pcf",
            format!("{cfps} contention-free periods in the run are more than the cfp table holds (at most {}): a shorter run, or a longer beacon_interval, dtim_period or cfp_period", super::limits::MAX_SAMPLE_ROWS),
        );
    }
}
