//! 802.11n keys: the HT settings of `[cell]`, the AP's MAC queueing (`[ap]`) and a station's
//! MCS and airtime weight; and which keys each standard refuses.

use super::*;
use crate::mac::dcf::{BackoffCountdown, CwAtRetryLimit};
use crate::mac::edca::TxopTable;
use crate::mac::rate::RateControl;
use crate::phy::error_rate::OfdmRate;
use crate::phy::he::{self, HeGi, HeLtf, HeTxVector, PacketPadding};
use crate::phy::ht::{ChannelWidth, GuardInterval, HtMcs, HT_MF_PPDU_MAX_TIME, LINUX_MAX_AGGR_TIME};
use crate::phy::ofdm::{OfdmBand, MANDATORY_RATES};
use crate::phy::vht::{self, VhtTxVector, Width};
use crate::phy::TxVector;
use crate::wifi::ht::params::{
    AirtimeSched, ApMacConfig, DynamicAggregate, FqKernel, HtCellConfig, HtStationConfig, MacQueue, StationAggregation,
    WideCellConfig, ATH_MAX_QDEPTH, DYNAMIC_AGGREGATE_STATIONS,
};
use crate::wifi::ifs::CollisionIfs;

/// Why an 802.11n cell refuses `preamble`, `cw_min`/`cw_max` and a station's `rate`.
pub(super) const PREAMBLE_IN_HT: &str = "an 802.11n cell sends HT-mixed PPDUs (and its control frames with the OFDM \
     preamble); leave `preamble` out";
pub(super) const CW_IN_HT: &str = "in an 802.11n cell the contention windows come from the EDCA parameters of each \
     access category; leave `cw_min` and `cw_max` out";
pub(super) const DEFER_IN_HT: &str = "`eifs` and `collision_defer` choose between 802.11b conventions; an 802.11n \
     cell defers EIFS - DIFS + AIFS after an undecodable PPDU and the BlockAck timeout + AIFS after a collision \
     (docs/model-80211n-mac.md); leave the key out";
pub(super) const RATE_IN_HT: &str = "802.11n stations take `mcs` (0-15, e.g. mcs = 7), not `rate` (802.11ac stations \
     MCS 0-9, 802.11ax 0-11; a non-HT station, standard = \"802.11a\" or \"802.11g\", takes `rate`)";

const DEFAULT_MCS: u8 = 7;
/// The AP's spatial streams in an 802.11ac/ax cell unless `nss` says otherwise (a 2x2 AP).
const DEFAULT_NSS: u8 = 2;
const DEFAULT_AIRTIME_WEIGHT: u64 = 256;
/// 30 software retries + the first attempt (ath9k's ATH_MAX_SW_RETRIES).
const DEFAULT_MPDU_RETRY_LIMIT: u64 = 31;
const MAX_DRIVER_QUEUE_LIMIT: u64 = 100_000;

/// The AP's qdisc when `queueing = "fq_codel"`.
const FQ_CODEL_SCRIPT: &str = "tc qdisc add dev wlan0 root fq_codel\n";

/// Said after a station's rate-control error when the rate control is the cell's.
const INHERITED_RATE_CONTROL: &str =
    " (this is the cell's rate_control, which applies to every station that sets none; set rate_control = \"fixed\" on this station)";

/// The keys an 802.11n/ac/ax station has and a non-HT (802.11a/g) one does not.
const NOT_NON_HT: [&str; 3] = ["mcs", "nss", "width"];

/// A non-HT (802.11a/g) station of an 802.11n/ac/ax cell: its OFDM `rate` (default 54 Mb/s) at
/// fixed rate, its airtime weight and minimum rate as any station's. `mcs`, `nss` and `width`
/// are refused; so is a rate control other than "fixed" (Linux runs plain Minstrel on such a
/// link, which this model does not have).
fn non_ht_station(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    tspan: &Span,
    path: &str,
    cell: Option<&HtCellConfig>,
    rate_control: RateControl,
) -> Option<HtStationConfig> {
    for key in NOT_NON_HT {
        if let Some(v) = tbl.get(key) {
            rd.error(
                &v.span(),
                &join(path, key),
                format!("a non-HT (802.11a/g) station has no `{key}`: it sends one 20 MHz stream at `rate`, one of 6, 9, 12, 18, 24, 36, 48 or 54 Mbps"),
            );
        }
    }
    if rate_control != RateControl::Fixed {
        let (span, inherited) = match tbl.get("rate_control") {
            Some(v) => (v.span(), ""),
            None => (tspan.clone(), INHERITED_RATE_CONTROL),
        };
        rd.error(
            &span,
            &join(path, "rate_control"),
            format!(
                "a non-HT (802.11a/g) station takes rate_control = \"fixed\" (its `rate`): Linux runs plain Minstrel on \
                 such a link, which this model does not have{inherited}"
            ),
        );
    }
    let rate = tbl.get("rate").and_then(|v| {
        let key = join(path, "rate");
        let s = string(rd, v, &key, "a string like \"54Mbps\"")?;
        match crate::units::parse_ofdm_rate(s) {
            Ok(r) => Some(r),
            Err(e) => {
                rd.error(
                    &v.span(),
                    &key,
                    format!("{e}; a non-HT OFDM station sends at 6, 9, 12, 18, 24, 36, 48 or 54 Mbps"),
                );
                None
            }
        }
    });
    let weight = tbl.get("airtime_weight").and_then(|v| integer(rd, v, &join(path, "airtime_weight"), 1, 65535));
    let min_rate = tbl.get("min_rate").and_then(|v| min_rate(rd, v, &join(path, "min_rate")));
    let queue_limit = station_queue_limit(rd, tbl.get("driver_queue_limit"), path);
    if let Some(v) = tbl.get("aggregation") {
        rd.error(
            &v.span(),
            &join(path, "aggregation"),
            "a non-HT (802.11a/g) station sends no A-MPDU; leave `aggregation` out",
        );
    }
    cell?;
    Some(HtStationConfig {
        mcs: HtMcs::new(DEFAULT_MCS).expect("checked range"),
        airtime_weight: weight.unwrap_or(DEFAULT_AIRTIME_WEIGHT) as u32,
        min_rate_bps: min_rate.unwrap_or(0),
        link: Some(TxVector::NonHt(rate.unwrap_or(OfdmRate::R54))),
        driver_queue_limit: queue_limit.unwrap_or(ATH_MAX_QDEPTH),
        aggregation: Default::default(),
    })
}

/// A station's `driver_queue_limit`: frames per access category, 1 to 100 000.
fn station_queue_limit(rd: &mut Reader<'_>, v: Option<&Value<'_>>, path: &str) -> Option<u32> {
    integer(rd, v?, &join(path, "driver_queue_limit"), 1, MAX_DRIVER_QUEUE_LIMIT).map(|n| n as u32)
}

/// `min_rate`: a tc rate above zero.
fn min_rate(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<u64> {
    let r = tc_rate(rd, v, key)?;
    if r == 0 {
        rd.error(&v.span(), key, "must be above zero, e.g. \"2mbit\" (leave it out for no minimum)");
        return None;
    }
    Some(r)
}

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
    if standard.is_some_and(Standard::is_ht_mac) {
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
        && standard.is_some_and(Standard::is_ht_mac)
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
    let wide_std = standard.filter(|s| matches!(s, Standard::Dot11ac | Standard::Dot11ax));
    let is_ax = standard == Some(Standard::Dot11ax);
    let band_v = get(rd, "band");
    let band = band_v.and_then(|v| band(rd, v, standard));
    let width_v = get(rd, "width");
    let width = width_v.and_then(|v| width(rd, v, standard));
    if let (Some(w), Some((b, _)), Some(v)) = (width, band, width_v) {
        if b.is_2_4ghz() && w > Width::Mhz40 {
            rd.error(
                &v.span(),
                "cell.width",
                format!(
                    "{} MHz channels do not exist at 2.4 GHz (at most 40 MHz there); use 20 or 40, or band = \"5GHz\"",
                    w.mhz()
                ),
            );
        }
    }
    let gi_v = get(rd, "guard_interval");
    let (gi, he_gi) = match gi_v {
        Some(v) if is_ax => (None, word::<HeGi>(rd, v, "cell.guard_interval")),
        Some(v) => (word::<GuardInterval>(rd, v, "cell.guard_interval"), None),
        None => (None, None),
    };
    let wide_only = |rd: &mut Reader<'_>, key: &str, why: &str| -> Option<&Value<'_>> {
        let v = tbl.get(key)?;
        if wide_std.is_none() && standard.is_some() {
            rd.error(&v.span(), &join("cell", key), why);
            return None;
        }
        Some(v)
    };
    let nss = wide_only(rd, "nss", "`nss` (the AP's spatial streams) is an 802.11ac/ax key; in an 802.11n cell the streams are in each station's `mcs` (8-15: two streams)")
        .and_then(|v| streams(rd, v, "cell.nss"));
    let ax_only = |rd: &mut Reader<'_>, key: &str| -> Option<&Value<'_>> {
        let v = tbl.get(key)?;
        if !is_ax && standard.is_some() {
            rd.error(
                &v.span(),
                &join("cell", key),
                format!("`{key}` is an 802.11ax (HE) key; this cell is {}", standard.map_or("", Standard::name)),
            );
            return None;
        }
        Some(v)
    };
    let ltf_v = ax_only(rd, "ltf");
    let ltf = ltf_v.and_then(|v| word::<HeLtf>(rd, v, "cell.ltf"));
    let padding = ax_only(rd, "packet_padding").and_then(|v| word::<PacketPadding>(rd, v, "cell.packet_padding"));
    if is_ax {
        let (l, g) = (ltf.unwrap_or(HeLtf::X2), he_gi.unwrap_or(HeGi::Us0_8));
        if !he::ltf_gi_allowed(he::HeFormat::Su, l, g) {
            let span = ltf_v.or(gi_v).map_or(0..0, |v| v.span());
            rd.error(
                &span,
                if ltf_v.is_some() { "cell.ltf" } else { "cell.guard_interval" },
                format!(
                    "an HE SU PPDU cannot combine a {} HE-LTF with a {} guard interval (802.11ax-2021 27.3.11.10); \
                     allowed: 1x with 0.8us, 2x with 0.8us or 1.6us, 4x with 0.8us or 3.2us",
                    l.name(),
                    g.name()
                ),
            );
        }
    }
    // The basic rates are DSSS rates in an 802.11b cell, unknown ones with an invalid standard.
    let basic_rates = match standard {
        Some(s) if s.is_ht_mac() => tbl.get("basic_rates").and_then(|v| ofdm_basic_rates(rd, v)),
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
    let max_mpdus = if is_ax { he::BA_WINDOW_MAX } else { crate::phy::ht::AMPDU_MAX_MPDUS };
    let max_aggregate_mpdus = get(rd, "max_aggregate_mpdus").and_then(|v| {
        let key = "cell.max_aggregate_mpdus";
        if let DeValue::Integer(i) = v.get_ref() {
            let n = i128::from_str_radix(i.as_str(), i.radix()).unwrap_or(0);
            if n > i128::from(max_mpdus) && n <= 1024 {
                let why = if is_ax {
                    "a BlockAck window above 256 (512, 1024) is 802.11be (EHT); 802.11ax agreements hold at most 256"
                        .to_string()
                } else {
                    format!(
                        "802.11n and 802.11ac BlockAck agreements hold at most 64 MPDUs ({} cells go to 256)",
                        Standard::Dot11ax.name()
                    )
                };
                rd.error(&v.span(), key, format!("must be 1 to {max_mpdus}, got {n}: {why}"));
                return None;
            }
        }
        integer(rd, v, key, 1, u64::from(max_mpdus))
    });
    let mpdu_retry_limit = get(rd, "mpdu_retry_limit").and_then(|v| integer(rd, v, "cell.mpdu_retry_limit", 1, 255));
    let txop_limits = get(rd, "txop_limits").and_then(|v| word::<TxopTable>(rd, v, "cell.txop_limits"));
    let backoff_countdown =
        get(rd, "backoff_countdown").and_then(|v| word::<BackoffCountdown>(rd, v, "cell.backoff_countdown"));
    let collision_ifs = get(rd, "collision_ifs").and_then(|v| word::<CollisionIfs>(rd, v, "cell.collision_ifs"));
    let cw_at_retry_limit =
        get(rd, "cw_at_retry_limit").and_then(|v| word::<CwAtRetryLimit>(rd, v, "cell.cw_at_retry_limit"));
    if standard == Some(Standard::Dot11b) {
        return None;
    }
    let default_width =
        if wide_std.is_some() && !band.is_some_and(|(b, _)| b.is_2_4ghz()) { Width::Mhz80 } else { Width::Mhz20 };
    let width = width.unwrap_or(default_width);
    let wide = wide_std.map(|standard| WideCellConfig {
        standard,
        width,
        nss: nss.unwrap_or(DEFAULT_NSS),
        vht_gi: gi.unwrap_or(GuardInterval::Long),
        he_gi: he_gi.unwrap_or(HeGi::Us0_8),
        ltf: ltf.unwrap_or(HeLtf::X2),
        padding: padding.unwrap_or(PacketPadding::Us0),
        six_ghz: band.is_some_and(|(_, six)| six),
    });
    Some(HtCellConfig {
        band: band.map_or(OfdmBand::Ghz5, |(b, _)| b),
        // 802.11n stations of a wider VHT/HE cell use 40 MHz.
        width: if width >= Width::Mhz40 { ChannelWidth::Mhz40 } else { ChannelWidth::Mhz20 },
        gi: gi.unwrap_or(GuardInterval::Long),
        basic_rates: basic_rates.unwrap_or_else(|| MANDATORY_RATES.to_vec()),
        max_aggregate_time: max_aggregate_time.unwrap_or(LINUX_MAX_AGGR_TIME),
        max_aggregate_mpdus: max_aggregate_mpdus
            .map_or(if is_ax { he::BA_WINDOW_MAX } else { crate::phy::ht::AMPDU_MAX_MPDUS }, |n| n as u32),
        mpdu_retry_limit: mpdu_retry_limit.unwrap_or(DEFAULT_MPDU_RETRY_LIMIT) as u32,
        txop_limits: txop_limits.unwrap_or(TxopTable::Ieee2016),
        backoff_countdown: backoff_countdown.unwrap_or(BackoffCountdown::SlotEnd),
        collision_ifs: collision_ifs.unwrap_or(CollisionIfs::Eifs),
        cw_at_retry_limit: cw_at_retry_limit.unwrap_or(CwAtRetryLimit::Double),
        wide,
    })
}

/// The AP's spatial streams (cell) or a station's: 1 to 4.
fn streams(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<u8> {
    if let DeValue::Integer(i) = v.get_ref() {
        let n = i128::from_str_radix(i.as_str(), i.radix()).unwrap_or(0);
        if (5..=8).contains(&n) {
            rd.error(
                &v.span(),
                key,
                format!(
                    "{n} spatial streams are not modelled: 802.11ac/ax define up to 8, but the model (and nearly \
                     every AP and client) has at most 4; use 1 to 4"
                ),
            );
            return None;
        }
    }
    integer(rd, v, key, 1, u64::from(vht::MAX_NSS)).map(|n| n as u8)
}

/// `band = "5GHz"`, `"2.4GHz"` or (802.11ax) `"6GHz"` (case and spaces ignored, the unit
/// optional), and whether it is 6 GHz. An 802.11n-only BSS at 2.4 GHz uses the short slot;
/// 802.11ac is 5 GHz only.
fn band(rd: &mut Reader<'_>, v: &Value<'_>, standard: Option<Standard>) -> Option<(OfdmBand, bool)> {
    const KEY: &str = "cell.band";
    let expected = match standard {
        Some(Standard::Dot11ax) => "\"5GHz\", \"6GHz\" or \"2.4GHz\"",
        Some(Standard::Dot11ac) => "\"5GHz\"",
        _ => "\"5GHz\" or \"2.4GHz\"",
    };
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
    let b = match norm.strip_suffix("ghz").unwrap_or(&norm) {
        "5" => (OfdmBand::Ghz5, false),
        "2.4" => (OfdmBand::Ghz24ShortSlot, false),
        "6" => (OfdmBand::Ghz5, true),
        _ => {
            rd.error(&v.span(), KEY, format!("unknown band {s:?}; expected {expected}"));
            return None;
        }
    };
    let why = match (standard, b) {
        (Some(Standard::Dot11ac), (OfdmBand::Ghz5, false)) | (Some(Standard::Dot11ax), _) => None,
        (Some(Standard::Dot11ac), _) => Some("802.11ac (VHT) operates only at 5 GHz"),
        (_, (_, true)) => Some("6 GHz is 802.11ax (HE) only; set standard = \"802.11ax\""),
        _ => None,
    };
    if let Some(why) = why {
        rd.error(&v.span(), KEY, format!("{s:?}: {why}; expected {expected}"));
        return None;
    }
    Some(b)
}

/// `width` in MHz: 20 or 40 (802.11n), 20, 40, 80 or 160 (802.11ac/ax).
fn width(rd: &mut Reader<'_>, v: &Value<'_>, standard: Option<Standard>) -> Option<Width> {
    const KEY: &str = "cell.width";
    let wide = matches!(standard, Some(Standard::Dot11ac | Standard::Dot11ax));
    let expected = if wide { "20, 40, 80 or 160" } else { "20 or 40" };
    let DeValue::Integer(i) = v.get_ref() else {
        type_error(rd, v, KEY, &format!("{expected} (MHz, an integer without quotes or unit)"));
        return None;
    };
    let w =
        i128::from_str_radix(i.as_str(), i.radix()).ok().and_then(|n| u32::try_from(n).ok()).and_then(Width::from_mhz);
    match w {
        Some(w) if wide || w <= Width::Mhz40 => Some(w),
        Some(w) => {
            rd.error(
                &v.span(),
                KEY,
                format!(
                    "{} MHz needs 802.11ac or 802.11ax (standard = \"802.11ac\"); an 802.11n cell is 20 or 40 MHz",
                    w.mhz()
                ),
            );
            None
        }
        None => {
            rd.error(&v.span(), KEY, format!("must be {expected} (MHz), got {i}"));
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

/// A station's `standard`, `mcs`, `nss`, `width`, `airtime_weight` and `min_rate`: Some in an
/// 802.11n/ac/ax cell (defaults: the cell's standard, MCS 7, the cell's streams and width,
/// weight 256), None in an 802.11b cell (where the keys are reported) or when the standard is
/// invalid. `cell` is the cell's HT settings, when they parsed.
pub(super) fn station_ht(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    tspan: &Span,
    path: &str,
    standard: Option<Standard>,
    cell: Option<&HtCellConfig>,
    rate_control: RateControl,
) -> Option<HtStationConfig> {
    let wide_cell = cell.and_then(|c| c.wide);
    // The station's own standard: at most the cell's.
    let own_v = ht_only(rd, tbl, path, "standard", standard);
    let own = own_v.and_then(|v| {
        let key = join(path, "standard");
        let s = word::<Standard>(rd, v, &key)?;
        let cell_std = standard?;
        let rank = |s: Standard| match s {
            Standard::Dot11b | Standard::Dot11a | Standard::Dot11g => 0,
            Standard::Dot11n => 1,
            Standard::Dot11ac => 2,
            Standard::Dot11ax => 3,
        };
        if s == Standard::Dot11b {
            rd.error(&v.span(), &key, format!("an 802.11b station cannot join this {} cell's EDCA/A-MPDU MAC in this model; use \"802.11g\" (2.4 GHz) or \"802.11a\" (5 GHz) for a non-HT station, \"802.11n\" for an HT one", cell_std.name()));
            return None;
        }
        if s.is_non_ht_ofdm() {
            let band = cell.map_or(OfdmBand::Ghz5, |c| c.band);
            let right = if band.is_2_4ghz() { Standard::Dot11g } else { Standard::Dot11a };
            if s != right {
                let (here, other) = if band.is_2_4ghz() { ("2.4 GHz", "5 GHz") } else { ("5 GHz", "2.4 GHz") };
                rd.error(&v.span(), &key, format!("{} is the {other} non-HT PHY; this cell is at {here}: use {:?}", s.name(), right.name()));
                return None;
            }
            return Some(s);
        }
        if rank(s) > rank(cell_std) {
            rd.error(
                &v.span(),
                &key,
                format!("the cell is {}: its AP cannot send {} PPDUs to a {} station; use {:?} or lower", cell_std.name(), s.name(), s.name(), cell_std.name()),
            );
            return None;
        }
        Some(s)
    });
    let own = own.or(standard);
    if own.is_some_and(Standard::is_non_ht_ofdm) {
        return non_ht_station(rd, tbl, tspan, path, cell, rate_control);
    }
    let (max_mcs, what) = match own {
        Some(Standard::Dot11ac) => (vht::MAX_MCS, "an 802.11ac (VHT) station takes MCS 0-9 (10 and 11 are 802.11ax's 1024-QAM)"),
        Some(Standard::Dot11ax) => (he::MAX_MCS, "an 802.11ax (HE) station takes MCS 0-11"),
        _ => (HtMcs::MAX, "an 802.11n station takes MCS 0-15 (8-15: two streams; 802.11ac/ax MCS need standard = \"802.11ac\" or \"802.11ax\")"),
    };
    let mcs_v = ht_only(rd, tbl, path, "mcs", standard);
    let mcs = mcs_v.and_then(|v| {
        let key = join(path, "mcs");
        if let DeValue::Integer(i) = v.get_ref() {
            let n = i128::from_str_radix(i.as_str(), i.radix()).unwrap_or(-1);
            if n > i128::from(max_mcs) && n <= 31 {
                rd.error(&v.span(), &key, format!("MCS {n} does not exist here: {what}"));
                return None;
            }
        }
        integer(rd, v, &key, 0, u64::from(max_mcs)).map(|n| n as u8)
    });
    let is_wide_sta = matches!(own, Some(Standard::Dot11ac | Standard::Dot11ax));
    let nss_v = ht_only(rd, tbl, path, "nss", standard);
    let nss = nss_v.and_then(|v| {
        let key = join(path, "nss");
        if !is_wide_sta {
            rd.error(
                &v.span(),
                &key,
                "an 802.11n station's spatial streams are in its `mcs` (0-7: one, 8-15: two); leave `nss` out",
            );
            return None;
        }
        let n = streams(rd, v, &key)?;
        if let Some(w) = wide_cell {
            if n > w.nss {
                rd.error(
                    &v.span(),
                    &key,
                    format!("the AP has {} spatial stream(s) (cell.nss); a link has at most as many", w.nss),
                );
                return None;
            }
        }
        Some(n)
    });
    let width_v = ht_only(rd, tbl, path, "width", standard);
    let width = width_v.and_then(|v| {
        let key = join(path, "width");
        let w = match v.get_ref() {
            DeValue::Integer(i) => i128::from_str_radix(i.as_str(), i.radix())
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .and_then(Width::from_mhz),
            _ => None,
        };
        let Some(w) = w else {
            rd.error(&v.span(), &key, "must be 20, 40, 80 or 160 (MHz, an integer), at most the cell's width");
            return None;
        };
        let cell_w = wide_cell.map_or(
            match cell.map(|c| c.width) {
                Some(ChannelWidth::Mhz40) => Width::Mhz40,
                _ => Width::Mhz20,
            },
            |c| c.width,
        );
        let sta_max = if is_wide_sta { Width::Mhz160 } else { Width::Mhz40 };
        if w > cell_w.min(sta_max) {
            let why = if w > cell_w {
                format!("the cell is {} MHz", cell_w.mhz())
            } else {
                "an 802.11n station uses at most 40 MHz".to_string()
            };
            rd.error(&v.span(), &key, format!("{} MHz is too wide: {why}", w.mhz()));
            return None;
        }
        Some(w)
    });
    let weight = ht_only(rd, tbl, path, "airtime_weight", standard)
        .and_then(|v| integer(rd, v, &join(path, "airtime_weight"), 1, 65535));
    let min_rate = ht_only(rd, tbl, path, "min_rate", standard).and_then(|v| min_rate(rd, v, &join(path, "min_rate")));
    let queue_v = ht_only(rd, tbl, path, "driver_queue_limit", standard);
    let queue_limit = station_queue_limit(rd, queue_v, path);
    let aggregation = ht_only(rd, tbl, path, "aggregation", standard)
        .and_then(|v| word::<StationAggregation>(rd, v, &join(path, "aggregation")));
    let vht_minstrel = own == Some(Standard::Dot11ac) && rate_control == RateControl::MinstrelHt;
    if is_wide_sta && rate_control != RateControl::Fixed && !vht_minstrel {
        // Set on the station, or the cell's, which applies to every station that sets none.
        let (span, inherited) = match tbl.get("rate_control") {
            Some(v) => (v.span(), ""),
            None => (tspan.clone(), INHERITED_RATE_CONTROL),
        };
        {
            let msg = if own == Some(Standard::Dot11ac) {
                "an 802.11ac link takes rate_control = \"fixed\" (the station's mcs and nss) or \"minstrel_ht\" \
                 (Minstrel-HT on its VHT groups, up to its mcs and nss)"
            } else {
                "an 802.11ax link takes rate_control = \"fixed\" (the station's mcs and nss): HE drivers (mt76, \
                 ath11k, iwlwifi) run rate control in firmware (docs/model-vht-he.md)"
            };
            rd.error(&span, &join(path, "rate_control"), format!("{msg}{inherited}"));
        }
    }
    if !standard.is_some_and(Standard::is_ht_mac) {
        return None;
    }
    let mcs_n = mcs.unwrap_or(DEFAULT_MCS);
    // A VHT/HE station's transmit vector; an excluded combination is reported on `mcs`.
    let wide = match (own, wide_cell) {
        (Some(s @ (Standard::Dot11ac | Standard::Dot11ax)), Some(c)) => {
            let nss = nss.unwrap_or(c.nss);
            let w = width.unwrap_or(c.width);
            let tx = if s == Standard::Dot11ac {
                VhtTxVector::new(mcs_n, nss, w, c.vht_gi).map(TxVector::Vht)
            } else {
                HeTxVector::su(mcs_n, nss, w, c.he_gi, c.ltf, c.padding).map(TxVector::He)
            };
            // (An HE vector fails only on a HE-LTF/GI pair, which `[cell]` reported.)
            if tx.is_none() && s == Standard::Dot11ac {
                let span = mcs_v.or(nss_v).or(width_v).map_or(0..0, |v| v.span());
                rd.error(
                    &span,
                    &join(path, "mcs"),
                    format!(
                        "VHT MCS {mcs_n} is not defined at {} MHz with {nss} spatial stream(s) (802.11-2020 21.5: \
                         MCS 9 at 20 MHz needs 3 streams; MCS 6 at 80 MHz and MCS 9 at 160 MHz exclude 3); choose \
                         another mcs, nss or width",
                        w.mhz()
                    ),
                );
            }
            tx
        }
        // An 802.11n station narrower than the cell's HT width.
        _ => width.zip(cell).and_then(|(w, c)| {
            let hw = if w >= Width::Mhz40 { ChannelWidth::Mhz40 } else { ChannelWidth::Mhz20 };
            let m = HtMcs::new(mcs_n)?;
            (hw != c.width).then_some(TxVector::Ht(crate::phy::ht::HtTxVector::new(m, hw, c.gi)))
        }),
    };
    let ht_mcs = if is_wide_sta { DEFAULT_MCS } else { mcs_n };
    Some(HtStationConfig {
        mcs: HtMcs::new(ht_mcs).expect("checked range"),
        airtime_weight: weight.unwrap_or(DEFAULT_AIRTIME_WEIGHT) as u32,
        min_rate_bps: min_rate.unwrap_or(0),
        link: wide,
        driver_queue_limit: queue_limit.unwrap_or(ATH_MAX_QDEPTH),
        aggregation: aggregation.unwrap_or_default(),
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
    let next = super::next_steps::parse_next_steps(rd, tbl, get, fq, mac80211);
    let ofdma = super::ofdma::parse_ofdma(rd, tbl, get, standard, &next);
    let amsdu = super::amsdu::parse_amsdu(rd, get, fq, &next, &ofdma);
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
        ofdma,
        amsdu,
        next,
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
