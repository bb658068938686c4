//! The `[ap]` keys of downlink OFDMA in an 802.11ax cell (`wifi::ht::ofdma`,
//! docs/model-ofdma.md): `ofdma`, `mu_scheduler`, `mu_stations`.

use super::*;
use crate::wifi::ht::ofdma::{MuScheduler, Ofdma, OfdmaConfig, MAX_MU_STATIONS, MU_STATIONS};
use crate::wifi::ht::params::NextSteps;

/// The `[ap]` keys this file reads (listed in `AP_KEYS`).
#[cfg(test)]
const OFDMA_AP_KEYS: &[&str] = &["ofdma", "mu_scheduler", "mu_stations"];

/// `[ap]`'s OFDMA keys; `get` reads a key of `tbl` (refusing it outside an 802.11n/ac/ax
/// cell), `standard` is the cell's, `next` the next-steps mechanisms already read (which
/// OFDMA is not modelled with).
pub(super) fn parse_ofdma<'t, 'i: 't>(
    rd: &mut Reader<'_>,
    tbl: &'t DeTable<'i>,
    get: impl Fn(&mut Reader<'_>, &str) -> Option<&'t Value<'i>>,
    standard: Option<Standard>,
    next: &NextSteps,
) -> OfdmaConfig {
    let mode = get(rd, "ofdma").and_then(|v| {
        let key = "ap.ofdma";
        let o = word::<Ofdma>(rd, v, key)?;
        if o == Ofdma::Off {
            return Some(o);
        }
        if standard != Some(Standard::Dot11ax) {
            rd.error(
                &v.span(),
                key,
                "OFDMA is 802.11ax's (HE MU PPDUs); set [cell] standard = \"802.11ax\" or leave `ofdma` out",
            );
            return None;
        }
        let clash = [
            ("aggregation", next.firmware.is_some()),
            ("vo_piggyback", next.vo_piggyback.is_some()),
            ("hw_queue_lead", next.hw_queue_lead.is_some()),
            ("retry_budget", next.retry_budget.is_some()),
            ("schedule_order", next.order != Default::default()),
            ("dynamic_aggregate_time", tbl.contains_key("dynamic_aggregate_time")),
        ];
        if let Some((k, _)) = clash.iter().find(|(_, on)| *on) {
            rd.error(
                &v.span(),
                key,
                format!("downlink OFDMA is not modelled together with ap.{k} (a single-user driver mechanism); leave one of them out"),
            );
            return None;
        }
        Some(o)
    });
    let on = mode == Some(Ofdma::Dl);
    let scheduler = get(rd, "mu_scheduler").and_then(|v| {
        let key = "ap.mu_scheduler";
        let s = word::<MuScheduler>(rd, v, key)?;
        if !on && mode.is_some() {
            rd.error(&v.span(), key, "applies only with ofdma = \"dl\"; set it or leave `mu_scheduler` out");
            return None;
        }
        Some(s)
    });
    let n_stations = get(rd, "mu_stations").and_then(|v| {
        let key = "ap.mu_stations";
        let n = integer(rd, v, key, 1, MAX_MU_STATIONS as u64)? as u32;
        if !tbl.contains_key("ofdma") || mode == Some(Ofdma::Off) {
            rd.error(
                &v.span(),
                key,
                "applies only with ofdma = \"dl\" (the most stations one MU PPDU serves); set it or leave `mu_stations` out",
            );
            return None;
        }
        Some(n)
    });
    OfdmaConfig {
        mode: mode.unwrap_or_default(),
        scheduler: scheduler.unwrap_or_default(),
        n_stations: n_stations.unwrap_or(MU_STATIONS),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_read_here_is_an_ap_key() {
        for k in super::OFDMA_AP_KEYS {
            assert!(super::AP_KEYS.contains(k), "{k} is missing from AP_KEYS");
        }
    }
}
