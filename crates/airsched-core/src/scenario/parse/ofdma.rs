//! The `[ap]` keys of OFDMA in an 802.11ax cell (`wifi::ht::ofdma`, `wifi::ht::ofdma_ul`,
//! docs/model-ofdma.md): `ofdma`, `mu_scheduler`, `mu_stations`, `mu_access_interval`, `ul_bsrp`,
//! `ul_trigger_nav`, `ul_trigger_capture`, `ul_tb_fill`, `ul_timer_tie`, `mu_missed_ba`, `mu_edca_timer`, `mu_edca_aifsn`, `mu_edca_cw_min`, `mu_edca_cw_max`.

use super::*;
use crate::mac::edca::MuEdcaParams;
use crate::wifi::ht::ofdma::{
    MissedBa, MuScheduler, Ofdma, OfdmaConfig, TbFill, TimerTie, TriggerCapture, MAX_MU_STATIONS, MU_ACCESS_INTERVAL,
    MU_STATIONS,
};
use crate::wifi::ht::params::NextSteps;

/// The `[ap]` keys this file reads (listed in `AP_KEYS`).
#[cfg(test)]
const OFDMA_AP_KEYS: &[&str] = &[
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
];

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
                format!("OFDMA is not modelled together with ap.{k} (a single-user driver mechanism); leave one of them out"),
            );
            return None;
        }
        Some(o)
    });
    let on = matches!(mode, Some(Ofdma::Dl | Ofdma::DlUl));
    let scheduler = get(rd, "mu_scheduler").and_then(|v| {
        let key = "ap.mu_scheduler";
        let s = word::<MuScheduler>(rd, v, key)?;
        if !on && mode.is_some() {
            rd.error(
                &v.span(),
                key,
                "applies only with ofdma = \"dl\" or \"dl+ul\"; set it or leave `mu_scheduler` out",
            );
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
                "applies only with ofdma = \"dl\" or \"dl+ul\" (the most stations one MU PPDU serves); set it or leave `mu_stations` out",
            );
            return None;
        }
        Some(n)
    });
    let missed_ba = get(rd, "mu_missed_ba").and_then(|v| {
        let key = "ap.mu_missed_ba";
        let b = word::<MissedBa>(rd, v, key)?;
        if !on {
            rd.error(
                &v.span(),
                key,
                "applies only with ofdma = \"dl\" or \"dl+ul\" (the other users' MPDUs after a DL MU PPDU's BlockAck is missed); set it or leave `mu_missed_ba` out",
            );
            return None;
        }
        Some(b)
    });
    let access_interval = get(rd, "mu_access_interval").and_then(|v| {
        let key = "ap.mu_access_interval";
        let t = time_value(rd, v, key, "1ms")?;
        if mode != Some(Ofdma::DlUl) {
            rd.error(
                &v.span(),
                key,
                "applies only with ofdma = \"dl+ul\" (how often the AP asks for the medium to trigger); set it or leave `mu_access_interval` out",
            );
            return None;
        }
        up_to_a_second(rd, v, key, t, "AccessReqInterval; e.g. \"1ms\"")
    });
    // Keys of uplink OFDMA only: an error naming the key without `ofdma = "dl+ul"`.
    let ul_only = |rd: &mut Reader<'_>, v: &Value<'_>, key: &str, what: &str| {
        if mode == Some(Ofdma::DlUl) {
            return true;
        }
        let k = key.trim_start_matches("ap.");
        rd.error(&v.span(), key, format!("applies only with ofdma = \"dl+ul\" ({what}); set it or leave `{k}` out"));
        false
    };
    let bsrp = get(rd, "ul_bsrp").and_then(|v| {
        let key = "ap.ul_bsrp";
        let b = boolean(rd, v, key)?;
        ul_only(rd, v, key, "BSRP Triggers poll the stations' buffers before Basic ones").then_some(b)
    });
    let trigger_nav = get(rd, "ul_trigger_nav").and_then(|v| {
        let key = "ap.ul_trigger_nav";
        let b = boolean(rd, v, key)?;
        ul_only(rd, v, key, "the stations' NAV from a Basic Trigger").then_some(b)
    });
    let trigger_capture = get(rd, "ul_trigger_capture").and_then(|v| {
        let key = "ap.ul_trigger_capture";
        let c = word::<TriggerCapture>(rd, v, key)?;
        ul_only(rd, v, key, "the stations' capture of a Basic Trigger under another PPDU").then_some(c)
    });
    let tb_fill = get(rd, "ul_tb_fill").and_then(|v| {
        let key = "ap.ul_tb_fill";
        let f = word::<TbFill>(rd, v, key)?;
        ul_only(rd, v, key, "when a solicited station fills its HE TB PPDU").then_some(f)
    });
    let timer_tie = get(rd, "ul_timer_tie").and_then(|v| {
        let key = "ap.ul_timer_tie";
        let t = word::<TimerTie>(rd, v, key)?;
        ul_only(rd, v, key, "the scheduler's timer expiring as the AP's exchange ends").then_some(t)
    });
    let bsr_lifetime = get(rd, "ul_bsr_lifetime").and_then(|v| {
        let key = "ap.ul_bsr_lifetime";
        let t = time_value(rd, v, key, "20ms")?;
        let t = up_to_a_second(rd, v, key, t, "BsrLifetime, e.g. \"20ms\"")?;
        ul_only(rd, v, key, "how long the AP trusts a station's buffer status report").then_some(t)
    });
    let timer = get(rd, "mu_edca_timer").and_then(|v| {
        let key = "ap.mu_edca_timer";
        let t = time_value(rd, v, key, "16.384ms")?;
        ul_only(rd, v, key, "the MU EDCA Parameter Set stations use after an HE TB PPDU").then_some((t, v))
    });
    let mut mu_edca = timer.map(|(t, _)| MuEdcaParams::ns3_default(t));
    for (name, max) in [("mu_edca_aifsn", 15u64), ("mu_edca_cw_min", 32_767), ("mu_edca_cw_max", 32_767)] {
        let Some(v) = get(rd, name) else { continue };
        let key = format!("ap.{name}");
        let Some(x) = integer(rd, v, &key, 0, max) else { continue };
        let Some(p) = mu_edca.as_mut() else {
            if mode == Some(Ofdma::DlUl) {
                rd.error(&v.span(), &key, format!("needs ap.mu_edca_timer (the MU EDCA Parameter Set's timer, e.g. \"16.384ms\"); set it or leave `{name}` out"));
            } else {
                ul_only(rd, v, &key, "the MU EDCA Parameter Set stations use after an HE TB PPDU");
            }
            continue;
        };
        match name {
            "mu_edca_aifsn" => p.aifsn = x as u32,
            "mu_edca_cw_min" => p.cw_min = x as u32,
            _ => p.cw_max = x as u32,
        }
    }
    if let (Some(p), Some((_, v))) = (mu_edca, timer) {
        if let Some(why) = p.invalid() {
            rd.error(
                &v.span(),
                "ap.mu_edca_timer",
                format!("the MU EDCA Parameter Set (802.11ax-2021 9.4.2.251): {why}"),
            );
            mu_edca = None;
        }
    }
    OfdmaConfig {
        bsrp: bsrp.unwrap_or(false),
        trigger_nav: trigger_nav.unwrap_or(false),
        trigger_capture: trigger_capture.unwrap_or_default(),
        tb_fill: tb_fill.unwrap_or_default(),
        timer_tie: timer_tie.unwrap_or_default(),
        bsr_lifetime,
        mu_edca,
        missed_ba: missed_ba.unwrap_or_default(),
        mode: mode.unwrap_or_default(),
        scheduler: scheduler.unwrap_or_default(),
        n_stations: n_stations.unwrap_or(MU_STATIONS),
        access_interval: access_interval.unwrap_or(MU_ACCESS_INTERVAL),
    }
}

/// An ns-3 scheduler time `t` read at `key`: greater than zero and at most a second, else an
/// error naming `ns3` (the ns-3 attribute and an example value).
fn up_to_a_second(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, t: Nanos, ns3: &str) -> Option<Nanos> {
    if t == Nanos::ZERO || t > Nanos::from_ms(1000) {
        rd.error(&v.span(), key, format!("must be greater than zero and at most 1s, got {t} (ns-3's {ns3})"));
        return None;
    }
    Some(t)
}

/// Uplink OFDMA needs a guard interval an HE TB PPDU can use (1.6 or 3.2 us, 802.11ax-2021
/// 27.3.11.10): an error at `ap.ofdma` otherwise.
pub(super) fn check_ul_guard_interval(rd: &mut Reader<'_>, ap: Option<&DeTable<'_>>, cell: &CellConfig, ofdma: Ofdma) {
    if ofdma != Ofdma::DlUl {
        return;
    }
    let Some(w) = cell.ht.as_ref().and_then(|h| h.wide.as_ref()) else { return };
    if w.he_gi == crate::phy::he::HeGi::Us0_8 {
        if let Some(v) = ap.and_then(|t| t.get("ofdma")) {
            rd.error(
                &v.span(),
                "ap.ofdma",
                "uplink OFDMA needs [cell] guard_interval = \"1.6us\" or \"3.2us\" (HE TB PPDUs have no 0.8 us guard interval)",
            );
        }
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
