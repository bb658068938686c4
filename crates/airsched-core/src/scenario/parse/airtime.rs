//! `[[airtime_group]]`: airtime groups (weights, parents, caps) for the mac80211 scheduler
//! (`mac80211/policy.rs`, docs/airtime-policies.md), and the checks of a station's `min_rate`
//! that need the cell.

use super::*;
use crate::mac80211::policy::{GroupParams, PolicyParams};
use crate::phy::ht::HtTxVector;
use crate::wifi::ht::params::AirtimeSched;

pub(super) const AIRTIME_GROUP_KEYS: &[&str] = &["name", "weight", "parent", "stations", "airtime_cap"];

/// The largest group weight.
const MAX_GROUP_WEIGHT: u64 = 1000;

/// `airtime_cap = "20%"`: a percentage above 0 and at most 100, in parts per million.
fn cap_ppm(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<u32> {
    let expected = "a percentage above 0% and at most 100%, e.g. \"20%\"";
    let s = string(rd, v, key, &format!("a string, {expected}"))?;
    let num = s.trim().strip_suffix('%').map(str::trim).and_then(|n| n.parse::<f64>().ok());
    match num {
        Some(p) if p > 0.0 && p <= 100.0 => Some(((p * 10_000.0).round() as u32).max(1)),
        Some(p) => {
            rd.error(&v.span(), key, format!("must be above 0% and at most 100% of the air, got {p}%"));
            None
        }
        None => {
            rd.error(&v.span(), key, format!("expected {expected}, got {s:?}"));
            None
        }
    }
}

/// The `[[airtime_group]]` tables: every group's name, weight, parent and cap, and each
/// station's group. `stations` maps station names to indices; `airtime` is the AP's scheduler
/// (None when its value was invalid).
pub(super) fn parse_airtime_groups(
    rd: &mut Reader<'_>,
    v: Option<&Value<'_>>,
    stations: &HashMap<String, usize>,
    n_stations: usize,
    standard: Option<Standard>,
    airtime: AirtimeSched,
) -> PolicyParams {
    let tables = array_of_tables(rd, v, "airtime_group");
    if tables.is_empty() {
        return PolicyParams::default();
    }
    let mut out = PolicyParams { station_group: vec![None; n_stations], ..PolicyParams::default() };
    if let Some((_, _, span)) = tables.first() {
        if standard == Some(Standard::Dot11b) {
            rd.error(span, "airtime_group[0]", "airtime groups are only in an 802.11n cell (standard = \"802.11n\")");
            return PolicyParams::default();
        }
        if airtime != AirtimeSched::Mac80211 {
            rd.error(
                span,
                "airtime_group[0]",
                "airtime groups extend mac80211's airtime scheduler; set [ap] airtime = \"mac80211\" (with \
                 mac_queue = \"fq-mac\")",
            );
            return PolicyParams::default();
        }
    }
    // First pass: names (a parent may be declared after its child).
    let mut names: HashMap<String, (usize, Span)> = HashMap::new();
    let mut name_of: Vec<Option<String>> = Vec::new();
    for (i, tbl, tspan) in &tables {
        let path = format!("airtime_group[{i}]");
        check_keys(rd, tbl, &path, "[[airtime_group]]", AIRTIME_GROUP_KEYS);
        let name = lookup(rd, tbl, tspan, &path, "name", Some("a unique name, e.g. name = \"guests\"")).and_then(|v| {
            let key = join(&path, "name");
            let s = string(rd, v, &key, "a string like \"guests\"")?;
            if s.is_empty() || !s.chars().all(station::valid_name_char) {
                rd.error(&v.span(), &key, format!("group name {s:?} must be ASCII letters, digits, '_', '.' or '-'"));
                return None;
            }
            if let Some((_, first)) = names.get(s) {
                let line = rd.line_of(first);
                rd.error(&v.span(), &key, format!("duplicate group name {s:?} (already used on line {line})"));
                return None;
            }
            names.insert(s.to_string(), (name_of.len(), v.span()));
            Some(s.to_string())
        });
        name_of.push(name);
    }
    // Second pass: weights, caps, parents, members.
    let mut member_of: Vec<Option<(String, Span)>> = vec![None; n_stations];
    let mut has_stations = vec![false; tables.len()];
    let mut parent_span: Vec<Option<Span>> = vec![None; tables.len()];
    for (g, (i, tbl, _)) in tables.iter().enumerate() {
        let path = format!("airtime_group[{i}]");
        let weight = tbl.get("weight").and_then(|v| integer(rd, v, &join(&path, "weight"), 1, MAX_GROUP_WEIGHT));
        let cap = tbl.get("airtime_cap").and_then(|v| cap_ppm(rd, v, &join(&path, "airtime_cap")));
        let parent = tbl.get("parent").and_then(|v| {
            let key = join(&path, "parent");
            let s = string(rd, v, &key, "the name of another [[airtime_group]], e.g. \"home\"")?;
            parent_span[g] = Some(v.span());
            match names.get(s) {
                Some(&(p, _)) if p == g => {
                    rd.error(&v.span(), &key, format!("group {s:?} cannot be its own parent"));
                    None
                }
                Some(&(p, _)) => Some(p as u16),
                None => {
                    let hint = closest(s, names.keys().map(String::as_str))
                        .map(|c| format!(" (did you mean {c:?}?)"))
                        .unwrap_or_default();
                    rd.error(&v.span(), &key, format!("no [[airtime_group]] is named {s:?}{hint}"));
                    None
                }
            }
        });
        if let Some(v) = tbl.get("stations") {
            let key = join(&path, "stations");
            match v.get_ref() {
                DeValue::Array(items) => {
                    for item in items.iter() {
                        let Some(s) = string(rd, item, &key, "station names, e.g. [\"sta1\", \"sta2\"]") else {
                            continue;
                        };
                        let Some(&st) = stations.get(s) else {
                            let hint = closest(s, stations.keys().map(String::as_str))
                                .map(|c| format!(" (did you mean {c:?}?)"))
                                .unwrap_or_default();
                            rd.error(&item.span(), &key, format!("no [[station]] is named {s:?}{hint}"));
                            continue;
                        };
                        if let Some((other, first)) = &member_of[st] {
                            let line = rd.line_of(first);
                            rd.error(
                                &item.span(),
                                &key,
                                format!(
                                    "station {s:?} is already in group {other:?} (line {line}); a station belongs to \
                                     at most one group"
                                ),
                            );
                            continue;
                        }
                        member_of[st] = Some((name_of[g].clone().unwrap_or_default(), item.span()));
                        out.station_group[st] = Some(g as u16);
                        has_stations[g] = true;
                    }
                }
                _ => type_error(rd, v, &key, "an array of station names, e.g. [\"sta1\", \"sta2\"]"),
            }
        }
        out.groups.push(GroupParams {
            name: name_of[g].clone().unwrap_or_default(),
            weight: weight.unwrap_or(1) as u32,
            parent,
            cap_ppm: cap,
        });
    }
    // Cycles, and groups holding both stations and groups.
    for g in 0..out.groups.len() {
        let mut seen = vec![g];
        let mut cur = out.groups[g].parent;
        while let Some(p) = cur {
            let p = p as usize;
            if p == g && seen.iter().all(|&k| k >= g) {
                // Reported once, from the cycle's first group in the file.
                let chain: Vec<&str> =
                    seen.iter().chain(std::iter::once(&g)).map(|&k| out.groups[k].name.as_str()).collect();
                let span = parent_span[g].clone().expect("a parent was given");
                rd.error(
                    &span,
                    &format!("airtime_group[{}].parent", tables[g].0),
                    format!("groups form a cycle: {}; the parents must lead to a top-level group", chain.join(" -> ")),
                );
                break;
            }
            if p == g || seen.contains(&p) {
                break; // a cycle further up, reported from one of its own groups
            }
            seen.push(p);
            cur = out.groups[p].parent;
        }
        if let (Some(p), Some(span)) = (out.groups[g].parent, parent_span[g].clone()) {
            if has_stations[p as usize] {
                rd.error(
                    &span,
                    &format!("airtime_group[{}].parent", tables[g].0),
                    format!(
                        "group {:?} has stations; a group holds either stations or groups, not both",
                        out.groups[p as usize].name
                    ),
                );
            }
        }
    }
    out
}

/// A station's `min_rate` must be below the PHY rate of its MCS (goodput never reaches it);
/// it needs the mac80211 scheduler.
pub(super) fn check_min_rates(rd: &mut Reader<'_>, root: &DeTable<'_>, scn: &Scenario) {
    let (Some(cell), Some(DeValue::Array(items))) = (scn.cell.ht.as_ref(), root.get("station").map(|v| v.get_ref()))
    else {
        return;
    };
    for (i, (st, item)) in scn.stations.iter().zip(items.iter()).enumerate() {
        let (Some(h), DeValue::Table(tbl)) = (st.ht, item.get_ref()) else { continue };
        let Some(v) = tbl.get("min_rate") else { continue };
        let key = format!("station[{i}].min_rate");
        if scn.ap_mac.airtime != AirtimeSched::Mac80211 {
            rd.error(
                &v.span(),
                &key,
                "a minimum rate is a policy of mac80211's airtime scheduler; set [ap] airtime = \"mac80211\" (with \
                 mac_queue = \"fq-mac\")",
            );
            continue;
        }
        let phy = HtTxVector::new(h.mcs, cell.width, cell.gi).bits_per_second();
        if h.min_rate_bps >= phy {
            rd.error(
                &v.span(),
                &key,
                format!(
                    "{} Mb/s is not below the station's PHY rate ({} Mb/s at MCS {}); no schedule can reach it",
                    h.min_rate_bps as f64 / 1e6,
                    phy as f64 / 1e6,
                    h.mcs.index()
                ),
            );
        }
    }
}
