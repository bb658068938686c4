//! The value readers every section uses (strings, durations, rates, integers, choices, tables)
//! and the unknown-key check with its "did you mean" suggestions.

use super::*;

/// Short description of a value for "found ..." in type errors.
pub(super) fn describe(v: &DeValue<'_>) -> String {
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
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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
            let mut best = (d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1).min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = best;
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub(super) fn closest<'c>(word: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
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

pub(super) fn quoted_list(items: &[&str]) -> String {
    items.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

/// Reports every key of `tbl` not in `known`.
pub(super) fn check_keys(rd: &mut Reader<'_>, tbl: &DeTable<'_>, path: &str, section: &str, known: &[&str]) {
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
        let home = SECTIONS.iter().find(|(s, keys)| *s != section && keys.contains(&name)).map(|(s, _)| *s);
        if let Some(s) = closest(name, known.iter().copied()) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        } else if let Some(home) = home {
            msg.push_str(&format!("; `{name}` belongs in {home}"));
        } else if let Some((s, home)) = closest_elsewhere(name, section) {
            msg.push_str(&format!("; did you mean `{s}` (in {home})?"));
        } else {
            msg.push_str(&format!("; expected one of {}", quoted_list(known)));
        }
        rd.error(&k.span(), &join(path, name), msg);
    }
}

/// The key of another section closest to `name`, with that section's header.
pub(super) fn closest_elsewhere(name: &str, section: &str) -> Option<(&'static str, &'static str)> {
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
pub(super) fn lookup<'t, 'i>(
    rd: &mut Reader<'_>,
    tbl: &'t DeTable<'i>,
    tspan: &Span,
    path: &str,
    key: &str,
    required: Option<&str>,
) -> Option<&'t Value<'i>> {
    let v = tbl.get(key);
    if v.is_none() {
        if let Some(hint) = required {
            rd.error(tspan, &join(path, key), format!("missing required key `{key}` ({hint})"));
        }
    }
    v
}

pub(super) fn type_error(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, expected: &str) {
    let msg = format!("expected {expected}, found {}", describe(v.get_ref()));
    rd.error(&v.span(), key, msg);
}

/// A string value, or a type error mentioning `expected`.
pub(super) fn string<'v>(rd: &mut Reader<'_>, v: &'v Value<'_>, key: &str, expected: &str) -> Option<&'v str> {
    match v.get_ref() {
        DeValue::String(s) => Some(s),
        _ => {
            type_error(rd, v, key, expected);
            None
        }
    }
}

/// A duration string; `example` is used in type errors when no better one can be derived.
pub(super) fn time_value(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, example: &str) -> Option<Nanos> {
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
        type_error(rd, v, key, &format!("a string like {ex:?}"));
        return None;
    };
    match units::parse_time(s) {
        Ok(t) if t > Nanos::MAX_SCENARIO => {
            rd.error(&v.span(), key, format!("{s:?} is too long; at most {} (one year)", Nanos::MAX_SCENARIO));
            None
        }
        Ok(t) => Some(t),
        Err(e) => {
            rd.error(&v.span(), key, e.to_string());
            None
        }
    }
}

/// A `tc` rate string in bit/s.
pub(super) fn tc_rate(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<u64> {
    let s = string(rd, v, key, "a string like \"100mbit\"")?;
    match units::parse_rate_bps(s) {
        Ok(r) => Some(r),
        Err(e) => {
            rd.error(&v.span(), key, e.to_string());
            None
        }
    }
}

/// An integer in `min..=max`.
pub(super) fn integer(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, min: u64, max: u64) -> Option<u64> {
    let range = format!("between {min} and {max}");
    let i = match v.get_ref() {
        DeValue::Integer(i) => i,
        DeValue::String(s) if s.trim().parse::<i128>().is_ok() => {
            type_error(rd, v, key, &format!("an integer {range} (without quotes)"));
            return None;
        }
        _ => {
            type_error(rd, v, key, &format!("an integer {range}"));
            return None;
        }
    };
    match i128::from_str_radix(i.as_str(), i.radix()) {
        Ok(n) if n >= i128::from(min) && n <= i128::from(max) => Some(n as u64),
        _ => {
            rd.error(&v.span(), key, format!("must be {range}, got {i}"));
            None
        }
    }
}

pub(super) fn boolean(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<bool> {
    match v.get_ref() {
        DeValue::Boolean(b) => Some(*b),
        _ => {
            type_error(rd, v, key, "a boolean (true or false)");
            None
        }
    }
}

/// One of a fixed set of strings (ASCII case ignored).
pub(super) fn choice<T: Copy>(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, options: &[(&str, T)]) -> Option<T> {
    let names: Vec<String> = options.iter().map(|(n, _)| format!("{n:?}")).collect();
    let names = names.join(" or ");
    let s = string(rd, v, key, &format!("a string, {names}"))?;
    if let Some((_, t)) = options.iter().find(|(n, _)| n.eq_ignore_ascii_case(s.trim())) {
        return Some(*t);
    }
    rd.error(&v.span(), key, format!("unknown value {s:?}; expected {names}"));
    None
}

/// One of an option's words ([`Words`], declared beside the option's enum in its model).
pub(super) fn word<T: Words>(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<T> {
    choice(rd, v, key, T::WORDS)
}

/// Reports `v` unless it is a table; returns the table. `header` is e.g. `[run]`.
pub(super) fn as_table<'t, 'i>(
    rd: &mut Reader<'_>,
    v: &'t Value<'i>,
    key: &str,
    header: &str,
) -> Option<&'t DeTable<'i>> {
    match v.get_ref() {
        DeValue::Table(t) => Some(t),
        DeValue::Array(_) => {
            type_error(rd, v, key, &format!("a single table {header} (not [{header}])"));
            None
        }
        _ => {
            type_error(rd, v, key, &format!("a table {header}"));
            None
        }
    }
}

/// Read the file `name`, a path relative to the scenario file. Returns its displayed path and
/// text, or reports at `v` that the `what` cannot be read (`hint` is appended to the message).
pub(super) fn read_relative(
    rd: &mut Reader<'_>,
    v: &Value<'_>,
    key: &str,
    name: &str,
    what: &str,
    hint: &str,
) -> Option<(String, String)> {
    let base = std::path::Path::new(rd.file).parent().unwrap_or(std::path::Path::new(""));
    let full = base.join(name);
    match read_bounded(&full) {
        Ok(text) => Some((full.display().to_string(), text)),
        Err(e) => {
            rd.error(
                &v.span(),
                key,
                format!("cannot read {what} {}: {e} (paths are relative to the scenario file{hint})", full.display()),
            );
            None
        }
    }
}

/// The largest file a scenario may name (a tc script, a calibration table): 16 MiB, the bound
/// the Python front end puts on the scenario itself (`airsched.scenario.MAX_FILE_BYTES`).
const MAX_REFERENCED_FILE_BYTES: u64 = 16 << 20;

/// Reads a UTF-8 regular file of at most [`MAX_REFERENCED_FILE_BYTES`]: a device such as
/// `/dev/zero`, a FIFO or a directory is refused before it is read, and a file that grows past
/// the bound while being read is cut at one byte over it and refused, so memory stays bounded.
fn read_bounded(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let mut data = Vec::new();
    file.take(MAX_REFERENCED_FILE_BYTES + 1).read_to_end(&mut data).map_err(|e| e.to_string())?;
    if data.len() as u64 > MAX_REFERENCED_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_REFERENCED_FILE_BYTES >> 20));
    }
    String::from_utf8(data).map_err(|_| "not UTF-8 text".into())
}

/// The elements of `[[name]]`, each with its span; reports non-table elements.
pub(super) fn array_of_tables<'t, 'i>(
    rd: &mut Reader<'_>,
    v: Option<&'t Value<'i>>,
    name: &str,
) -> Vec<(usize, &'t DeTable<'i>, Span)> {
    let Some(v) = v else {
        return Vec::new();
    };
    let DeValue::Array(items) = v.get_ref() else {
        type_error(rd, v, name, &format!("an array of tables (write [[{name}]] with double brackets)"));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.get_ref() {
            DeValue::Table(t) => out.push((i, t, item.span())),
            _ => type_error(rd, item, &format!("{name}[{i}]"), &format!("a table [[{name}]]")),
        }
    }
    out
}
