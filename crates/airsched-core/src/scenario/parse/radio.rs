//! Radio keys: a station's SNR, position, schedule and fading; rate control; `[monitor]`.

use super::*;
use crate::mac::rate::RateControl;
use crate::monitor::CalibrationTable;
use crate::monitor::MonitorSpec;
use crate::radio::{ChannelSpec, Fading, Interpolation, Position};

pub(super) const MONITOR_KEYS: &[&str] = &["calibration", "alpha", "noise"];
const FADING_KEYS: &[&str] = &["sigma", "coherence"];
const POINT_KEYS: &[&str] = &["at", "snr", "position"];

/// SNRs are accepted between these (centi-dB).
const SNR_MIN_CDB: i32 = -5000;
const SNR_MAX_CDB: i32 = 10000;

fn position_names() -> String {
    Position::ALL.iter().map(|p| format!("{:?}", p.name())).collect::<Vec<_>>().join(", ")
}

/// A level in dB: a number (`12.5`) or a string with the unit (`"12.5dB"`), in centi-dB.
pub(super) fn db_value(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, min: i32, max: i32) -> Option<i32> {
    let db = match v.get_ref() {
        DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
        DeValue::String(s) => {
            let t = s.trim();
            let num = t.strip_suffix("dB").or_else(|| t.strip_suffix("db")).unwrap_or(t).trim();
            match num.parse::<f64>() {
                Ok(x) if x.is_finite() => Some(x),
                _ => {
                    rd.error(&v.span(), key, format!("{s:?} is not a level in dB; write e.g. \"12dB\" or 12"));
                    return None;
                }
            }
        }
        _ => {
            type_error(rd, v, key, "a level in dB, e.g. \"12dB\" or 12");
            return None;
        }
    };
    let db = db?;
    if !db.is_finite() {
        rd.error(&v.span(), key, format!("{db} is not a level in dB; write a finite number, e.g. \"12dB\" or 12"));
        return None;
    }
    let cdb = (db * 100.0).round();
    if cdb < min as f64 || cdb > max as f64 {
        rd.error(&v.span(), key, format!("{db} dB is out of range; expected {} to {} dB", min / 100, max / 100));
        return None;
    }
    Some(cdb as i32)
}

fn position(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<i32> {
    if matches!(v.get_ref(), DeValue::Array(_)) {
        // A Bluetooth client's `position` is a point; a station's names its radio conditions.
        rd.error(&v.span(), key, format!("a station's position names its radio conditions, one of {}; where it is (metres from the AP, for [piconet] sir) is location = [x, y]", position_names()));
        return None;
    }
    let s = string(rd, v, key, &format!("a string, one of {}", position_names()))?;
    match Position::from_name(s) {
        Some(p) => Some(p.snr_cdb()),
        None => {
            rd.error(&v.span(), key, format!("unknown position {s:?}; expected one of {}", position_names()));
            None
        }
    }
}

pub(super) fn rate_control(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<RateControl> {
    word::<RateControl>(rd, v, key)
}

/// The station's channel, or None for a perfect channel (no radio keys).
pub(super) fn channel(rd: &mut Reader<'_>, tbl: &DeTable<'_>, path: &str) -> Option<ChannelSpec> {
    let snr_v = tbl.get("snr");
    let pos_v = tbl.get("position");
    let sched_v = tbl.get("schedule");
    let given: Vec<(&str, &Value<'_>)> = [("snr", snr_v), ("position", pos_v), ("schedule", sched_v)]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect();
    if given.len() > 1 {
        let (k, v) = given[1];
        rd.error(
            &v.span(),
            &join(path, k),
            format!("give one of `snr`, `position` or `schedule`, not both `{}` and `{k}`", given[0].0),
        );
        return None;
    }
    let others = ["schedule_mode", "snr_up_offset", "fading"];
    if given.is_empty() {
        for k in others {
            if let Some(v) = tbl.get(k) {
                rd.error(
                    &v.span(),
                    &join(path, k),
                    "needs the station's radio conditions: add `snr`, `position` or `schedule`",
                );
            }
        }
        return None;
    }
    let mut ok = true;
    let mut points = Vec::new();
    if let Some(v) = snr_v {
        match db_value(rd, v, &join(path, "snr"), SNR_MIN_CDB, SNR_MAX_CDB) {
            Some(c) => points.push((Nanos::ZERO, c)),
            None => ok = false,
        }
    }
    if let Some(v) = pos_v {
        match position(rd, v, &join(path, "position")) {
            Some(c) => points.push((Nanos::ZERO, c)),
            None => ok = false,
        }
    }
    if let Some(v) = sched_v {
        match schedule(rd, v, &join(path, "schedule")) {
            Some(p) => points = p,
            None => ok = false,
        }
    } else if let Some(v) = tbl.get("schedule_mode") {
        rd.error(&v.span(), &join(path, "schedule_mode"), "only applies to a `schedule`");
        ok = false;
    }
    let interpolation = match tbl.get("schedule_mode") {
        Some(v) => word::<Interpolation>(rd, v, &join(path, "schedule_mode")).unwrap_or(Interpolation::Step),
        None => Interpolation::Step,
    };
    let up_offset_cdb = match tbl.get("snr_up_offset") {
        Some(v) => db_value(rd, v, &join(path, "snr_up_offset"), -5000, 5000).unwrap_or_else(|| {
            ok = false;
            0
        }),
        None => 0,
    };
    let fading = match tbl.get("fading") {
        Some(v) => {
            let f = fading(rd, v, &join(path, "fading"));
            ok &= f.is_some();
            f
        }
        None => None,
    };
    ok.then_some(ChannelSpec { points, interpolation, up_offset_cdb, fading })
}

fn schedule(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<Vec<(Nanos, i32)>> {
    let example = "[{ at = \"0s\", position = \"good\" }, { at = \"20s\", snr = \"3dB\" }]";
    let DeValue::Array(items) = v.get_ref() else {
        type_error(rd, v, key, &format!("an array of points like {example}"));
        return None;
    };
    if items.is_empty() {
        rd.error(&v.span(), key, format!("must list at least one point, e.g. {example}"));
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let k = format!("{key}[{i}]");
        let DeValue::Table(t) = item.get_ref() else {
            type_error(rd, item, &k, "a table like { at = \"10s\", position = \"bad\" }");
            ok = false;
            continue;
        };
        check_keys(rd, t, &k, "a schedule point", POINT_KEYS);
        let at = lookup(rd, t, &item.span(), &k, "at", Some("when the station is there, e.g. at = \"10s\""))
            .and_then(|v| time_value(rd, v, &join(&k, "at"), "10s"));
        let level = match (t.get("snr"), t.get("position")) {
            (Some(s), None) => db_value(rd, s, &join(&k, "snr"), SNR_MIN_CDB, SNR_MAX_CDB),
            (None, Some(p)) => position(rd, p, &join(&k, "position")),
            (Some(_), Some(p)) => {
                rd.error(&p.span(), &join(&k, "position"), "give `snr` or `position`, not both");
                None
            }
            (None, None) => {
                rd.error(&item.span(), &k, format!("missing `snr` or `position` (one of {})", position_names()));
                None
            }
        };
        match (at, level) {
            (Some(at), Some(level)) => {
                if let Some(&(prev, _)) = out.last() {
                    if at <= prev {
                        rd.error(
                            &item.span(),
                            &join(&k, "at"),
                            format!("{at} is not after the previous point's {prev}; list points in time order"),
                        );
                        ok = false;
                        continue;
                    }
                } else if at != Nanos::ZERO {
                    rd.error(
                        &item.span(),
                        &join(&k, "at"),
                        format!("the first point must be at \"0s\" (found {at}): where is the station at the start?"),
                    );
                    ok = false;
                    continue;
                }
                out.push((at, level));
            }
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

fn fading(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<Fading> {
    let DeValue::Table(t) = v.get_ref() else {
        type_error(rd, v, key, "a table like { sigma = \"2dB\", coherence = \"200ms\" }");
        return None;
    };
    check_keys(rd, t, key, "fading", FADING_KEYS);
    let sigma = lookup(rd, t, &v.span(), key, "sigma", Some("the spread in dB, e.g. sigma = \"2dB\""))
        .and_then(|s| db_value(rd, s, &join(key, "sigma"), 0, 3000));
    let coherence =
        lookup(rd, t, &v.span(), key, "coherence", Some("the correlation time, e.g. coherence = \"200ms\"")).and_then(
            |c| {
                let d = time_value(rd, c, &join(key, "coherence"), "200ms")?;
                if d < Nanos::from_us(100) {
                    rd.error(
                        &c.span(),
                        &join(key, "coherence"),
                        format!("{d} is too short; at least 100us (one frame)"),
                    );
                    return None;
                }
                Some(d)
            },
        );
    Some(Fading { sigma_cdb: sigma? as u32, coherence: coherence? })
}

pub(super) fn parse_monitor(rd: &mut Reader<'_>, v: Option<&Value<'_>>) -> MonitorSpec {
    let mut m = MonitorSpec::default();
    let Some(v) = v else { return m };
    let Some(t) = as_table(rd, v, "monitor", "[monitor]") else { return m };
    check_keys(rd, t, "monitor", "[monitor]", MONITOR_KEYS);
    if let Some(a) = t.get("alpha") {
        let x = match a.get_ref() {
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
            _ => None,
        };
        match x {
            Some(x) if x > 0.0 && x <= 1.0 => m.alpha = x,
            Some(x) => rd.error(
                &a.span(),
                "monitor.alpha",
                format!("{x} is out of range; the new sample's weight is in (0, 1], the paper's 0.25"),
            ),
            None => type_error(rd, a, "monitor.alpha", "a number in (0, 1], e.g. 0.25"),
        }
    }
    if let Some(n) = t.get("noise") {
        if let Some(c) = db_value(rd, n, "monitor.noise", 0, 2000) {
            m.noise_cdb = c as u32;
        }
    }
    if let Some(c) = t.get("calibration") {
        if let Some(name) = string(rd, c, "monitor.calibration", "a path like \"calibration.toml\"") {
            let hint = "; `airsched calibrate` writes one";
            if let Some((file, text)) = read_relative(rd, c, "monitor.calibration", name, "calibration table", hint) {
                match CalibrationTable::from_toml(&text) {
                    Ok(table) => m.calibration = Some((file, table)),
                    Err(e) => rd.error(&c.span(), "monitor.calibration", format!("{file}: {e}")),
                }
            }
        }
    }
    m
}
