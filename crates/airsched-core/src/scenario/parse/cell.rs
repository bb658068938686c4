//! `[cell]`: the standard and the 802.11b cell's PHY and DCF settings (the 802.11n ones are in
//! `ht.rs`).

use super::*;

/// The standards a cell can be (`Standard`'s words less the station-only 802.11a/g).
const CELL_STANDARDS: &str = "\"802.11b\" or \"802.11n\" or \"802.11ac\" or \"802.11ax\"";

pub(super) const UNSUPPORTED_STANDARDS: &[&str] = &["802.11", "802.11a", "802.11g", "802.11be", "802.11p"];

/// The cell's settings and its standard; the standard is None when `cell.standard` is invalid
/// (reported), and the keys that depend on it are then parsed without checking that they fit.
pub(super) fn parse_cell(rd: &mut Reader<'_>, t: Option<(&DeTable<'_>, Span)>) -> (CellConfig, Option<Standard>) {
    let empty = DeTable::new();
    let (tbl, tspan) = t.unwrap_or((&empty, 0..0));
    check_keys(rd, tbl, "cell", "[cell]", CELL_KEYS);

    let standard = match tbl.get("standard") {
        None => Some(Standard::Dot11b),
        Some(v) => string(rd, v, "cell.standard", &format!("a string, {CELL_STANDARDS}")).and_then(|s| {
            if let Some(st) = Standard::from_word(s).filter(|st| !st.is_non_ht_ofdm()) {
                return Some(st);
            }
            let s = s.trim();
            let msg = if Standard::from_word(s).is_some_and(Standard::is_non_ht_ofdm) {
                format!(
                    "{s:?} is not supported yet as a cell; only {CELL_STANDARDS} (an 802.11a/g client joins an \
                     802.11n/ac/ax cell with standard = {s:?} in its [[station]])"
                )
            } else if UNSUPPORTED_STANDARDS.iter().any(|u| u.eq_ignore_ascii_case(s)) {
                format!("{s:?} is not supported yet; only {CELL_STANDARDS}")
            } else {
                format!("unknown standard {s:?}; {CELL_STANDARDS} are supported")
            };
            rd.error(&v.span(), "cell.standard", msg);
            None
        }),
    };
    let is_n = standard.is_some_and(Standard::is_ht_mac);

    let preamble = ht::not_ht(rd, tbl, "cell", "preamble", standard, ht::PREAMBLE_IN_HT)
        .and_then(|v| word::<Preamble>(rd, v, "cell.preamble"));

    let basic_rates = match standard {
        Some(Standard::Dot11b) => tbl.get("basic_rates").and_then(|v| basic_rates(rd, v)),
        _ => None,
    };
    // Parsed (or, in an 802.11b cell, reported) whatever the standard; kept in an 802.11n cell.
    let ht = ht::parse_ht_cell(rd, tbl, standard).filter(|_| is_n);

    let beacons = tbl.get("beacons").and_then(|v| boolean(rd, v, "cell.beacons"));

    let beacon_interval = tbl.get("beacon_interval").and_then(|v| {
        time_value(rd, v, "cell.beacon_interval", "102.4ms").and_then(|d| {
            let max = Nanos(TU.0 * MAX_BEACON_TU);
            if d < TU || d > max {
                rd.error(
                    &v.span(),
                    "cell.beacon_interval",
                    format!("{d} is out of range; the beacon interval is 1 to {MAX_BEACON_TU} time units of 1024us ({TU} to {max}), usually 100 TU (\"102.4ms\")"),
                );
                None
            } else {
                Some(d)
            }
        })
    });

    let beacon_bytes =
        tbl.get("beacon_bytes").and_then(|v| integer(rd, v, "cell.beacon_bytes", 24, 2346).map(|n| n as u32));
    let channel = tbl.get("channel").and_then(|v| integer(rd, v, "cell.channel", 1, 14));
    let retry_limit = tbl.get("retry_limit").and_then(|v| integer(rd, v, "cell.retry_limit", 1, 255));

    let cw = |rd: &mut Reader<'_>, key: &str| -> Option<(u32, Span)> {
        let v = ht::not_ht(rd, tbl, "cell", key, standard, ht::CW_IN_HT)?;
        let path = join("cell", key);
        let n = integer(rd, v, &path, 1, 32767)?;
        if !(n + 1).is_power_of_two() {
            rd.error(
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
    let cw_min = cw(rd, "cw_min");
    let cw_max = cw(rd, "cw_max");
    let cw_min_given = tbl.contains_key("cw_min") && !is_n;
    let cw_max_given = tbl.contains_key("cw_max") && !is_n;
    let cw_min_val = cw_min.as_ref().map_or(31, |c| c.0);
    let cw_max_val = cw_max.as_ref().map_or(1023, |c| c.0);
    let cw_ok = (cw_min.is_some() || !cw_min_given) && (cw_max.is_some() || !cw_max_given);
    if cw_ok && cw_min_val > cw_max_val {
        let (span, key) = match (&cw_max, &cw_min) {
            // Only cw_min overridden: the override is what broke the order.
            (Some((_, max)), Some((_, min))) if rd.is_override(min) && !rd.is_override(max) => {
                (min.clone(), "cell.cw_min")
            }
            (Some((_, s)), _) => (s.clone(), "cell.cw_max"),
            (None, Some((_, s))) => (s.clone(), "cell.cw_min"),
            (None, None) => (tspan.clone(), "cell.cw_min"),
        };
        rd.error(&span, key, format!("cw_min ({cw_min_val}) must not exceed cw_max ({cw_max_val})"));
    }

    let eifs = ht::not_ht(rd, tbl, "cell", "eifs", standard, ht::DEFER_IN_HT)
        .and_then(|v| word::<EifsRule>(rd, v, "cell.eifs"));

    let collision_defer = ht::not_ht(rd, tbl, "cell", "collision_defer", standard, ht::DEFER_IN_HT)
        .and_then(|v| word::<CollisionDefer>(rd, v, "cell.collision_defer"));

    let rate_control = tbl.get("rate_control").and_then(|v| ht::rate_control(rd, v, "cell.rate_control", standard));
    let preamble_detection_cdb =
        tbl.get("preamble_detection").and_then(|v| radio::db_value(rd, v, "cell.preamble_detection", -3000, 5000));

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
        rate_control: rate_control.unwrap_or(crate::mac::rate::RateControl::Fixed),
        preamble_detection_cdb,
        ht,
        channel: channel.map_or(1, |c| c as u32),
        pcf: None,
    };
    let pcf = pcf::parse_pcf(rd, tbl, standard, cell.beacons, cell.beacon_interval);
    let cell = CellConfig { pcf, ..cell };
    (cell, standard)
}

pub(super) fn basic_rates(rd: &mut Reader<'_>, v: &Value<'_>) -> Option<Vec<DsssRate>> {
    rate_list(
        rd,
        v,
        "[\"1Mbps\", \"2Mbps\"]",
        |s| units::parse_phy_rate(s).map_err(|e| e.to_string()),
        |r| r.label().to_string(),
    )
}

/// `cell.basic_rates`: a non-empty array of distinct rates, returned sorted. `parse` reads one
/// rate (or says why not), `label` names one in the duplicate error; `example` is an array.
pub(super) fn rate_list<T: Copy + Ord>(
    rd: &mut Reader<'_>,
    v: &Value<'_>,
    example: &str,
    parse: impl Fn(&str) -> Result<T, String>,
    label: impl Fn(T) -> String,
) -> Option<Vec<T>> {
    const KEY: &str = "cell.basic_rates";
    let DeValue::Array(items) = v.get_ref() else {
        type_error(rd, v, KEY, &format!("an array of rates like {example}"));
        return None;
    };
    if items.is_empty() {
        rd.error(&v.span(), KEY, format!("must not be empty; give at least one rate, e.g. {example}"));
        return None;
    }
    // Each accepted rate with its index in the array.
    let mut rates: Vec<(T, usize)> = Vec::new();
    let mut ok = true;
    let first_example = example.trim_start_matches('[').split(',').next().unwrap_or(example).trim_end_matches(']');
    for (i, item) in items.iter().enumerate() {
        let key = format!("{KEY}[{i}]");
        let Some(s) = string(rd, item, &key, &format!("a string like {first_example}")) else {
            ok = false;
            continue;
        };
        match parse(s) {
            Ok(r) => {
                if let Some(j) = rates.iter().position(|(x, _)| *x == r) {
                    let first = rates[j].1;
                    rd.error(
                        &item.span(),
                        &key,
                        format!("duplicate rate {} (already listed as {KEY}[{first}])", label(r)),
                    );
                    ok = false;
                } else {
                    rates.push((r, i));
                }
            }
            Err(e) => {
                rd.error(&item.span(), &key, e);
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
