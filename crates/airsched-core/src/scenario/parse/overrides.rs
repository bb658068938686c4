//! Overrides: `KEY=VALUE` settings given beside the file (`airsched run --set`, `overrides=` in
//! Python, the `seed` and `duration` options), set in the parsed document before it is walked, so
//! that every check of the file applies to them unchanged and a bad value gets the file's message.
//!
//! * KEY is a dotted path of keys, `cell.retry_limit`, `run.duration`, `station[1].fading.sigma`.
//!   An entry of an array of tables (`[[station]]`, `[[flow]]`, a station's `schedule`) is chosen
//!   by index from 0, `station[1]`, or by its `name`, `station[sta2]` or `station.sta2` (a dotted
//!   name may itself contain dots: the longest name that matches wins). An entry as a whole can be
//!   replaced (`station[0]={name="a", rate="1Mbps"}`); new entries cannot be added.
//! * VALUE is a TOML value, `4`, `true`, `"2Mbps"`, `["1Mbps", "2Mbps"]`,
//!   `{sigma=2, coherence="1s"}`. Text that is not TOML and does not start with a quote or a
//!   bracket is a string: `2Mbps` is `"2Mbps"`, `60s` is `"60s"`.
//! * Overrides are applied in order; a later one of the same key wins. Setting one of a set of
//!   alternatives removes the others from its table (a station's `snr`, `position` and
//!   `schedule`, with the `schedule_mode` that goes with a schedule; a flow's `tos` and `dscp`; a
//!   node's `tc` and `tc_file`; the AP's `queueing` and its `mac_queue` and `airtime`), so that
//!   `station[ms2].snr=10` works whatever radio conditions the file gave MS2.
//!
//! Errors are positioned in the pseudo-file [`OVERRIDES_FILE`]: line N is the N-th override, the
//! column counts characters of its `KEY=VALUE` text. A relation between an overridden value and one
//! of the file that fails (a duration shorter than the file's warm-up) is reported at the override.

use std::borrow::Cow;

use super::*;

/// The file name errors in overrides carry.
pub const OVERRIDES_FILE: &str = "<command line>";

/// `s` as a TOML basic string (quoted and escaped), for building a `KEY=VALUE` override from a
/// string that must stay a string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Keys of which a table may hold only one: setting one by override removes the others.
/// (The AP's `queueing` stands for both `mac_queue` and `airtime`: setting it removes both,
/// setting either removes it.)
const ALTERNATIVES: &[&[&str]] = &[
    &["snr", "position", "schedule"],
    &["tos", "dscp"],
    &["tc", "tc_file"],
    &["queueing", "mac_queue"],
    &["queueing", "airtime"],
];

const EXAMPLES: &str = "e.g. cell.retry_limit=4, station[1].rate=2Mbps or flow[down1].start=2s";

/// One step of a key path, with its span in the span space.
#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    /// `name`: a key of a table (or, under an array, an entry's name or index).
    Key(&'a str, usize, usize),
    /// `[3]`: an array entry by index.
    Index(usize, usize, usize),
    /// `[sta2]`: an array entry by name.
    Name(&'a str, usize, usize),
}

impl Step<'_> {
    fn span(&self) -> Span {
        match *self {
            Step::Key(_, a, b) | Step::Index(_, a, b) | Step::Name(_, a, b) => a..b,
        }
    }
}

/// A failure to apply an override: where, and what is wrong.
struct Fail(Span, String);

/// Applies every override to `root`, reporting those that cannot be applied.
pub(super) fn apply_all<'a>(rd: &mut Reader<'a>, root: &mut DeTable<'a>) {
    for (base, text) in rd.overrides.clone() {
        let Some(eq) = text.find('=') else {
            let key = text.trim();
            rd.error(&(base..base + text.len()), key, format!("expected KEY=VALUE, {EXAMPLES}"));
            continue;
        };
        let key = text[..eq].trim();
        let result = key_path(text, base, eq).and_then(|steps| {
            let value = value(&text[eq + 1..], base + eq + 1)?;
            set_in(root, &steps, value, String::new())
        });
        if let Err(Fail(span, msg)) = result {
            rd.error(&span, key, msg);
        }
    }
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The steps of the key `text[..eq]` (offsets in the span space start at `base`).
fn key_path(text: &str, base: usize, eq: usize) -> Result<Vec<Step<'_>>, Fail> {
    let key = &text[..eq];
    let start = key.len() - key.trim_start().len();
    let end = key.trim_end().len();
    let at = |i: usize| base + i..base + i + 1;
    if start >= end {
        return Err(Fail(at(0), format!("no key before `=`; {EXAMPLES}")));
    }
    let bytes = key.as_bytes();
    let mut steps = Vec::new();
    let mut i = start;
    loop {
        // A key: letters, digits, '_' and '-'.
        let k = i;
        while i < end && is_key_char(bytes[i] as char) {
            i += 1;
        }
        if i == k {
            let what = if i < end {
                format!("unexpected `{}`", key[i..].chars().next().unwrap_or(' '))
            } else {
                "a key is missing".into()
            };
            return Err(Fail(at(i), format!("{what} in the key path; {EXAMPLES}")));
        }
        steps.push(Step::Key(&key[k..i], base + k, base + i));
        // Any number of selectors: [index] or [name].
        while i < end && bytes[i] == b'[' {
            let open = i;
            let close = key[open..end].find(']').map(|c| open + c);
            let Some(close) = close else {
                return Err(Fail(at(open), format!("`[` without `]` in the key path; {EXAMPLES}")));
            };
            let inner = &key[open + 1..close];
            let span = (base + open + 1, base + close.max(open + 1));
            if let Ok(n) = inner.parse::<usize>() {
                steps.push(Step::Index(n, span.0, span.1));
            } else if !inner.is_empty() && inner.chars().all(|c| is_key_char(c) || c == '.') {
                steps.push(Step::Name(inner, span.0, span.1));
            } else {
                return Err(Fail(
                    at(open),
                    format!("`[{inner}]` selects nothing: write an index from 0 or a name, e.g. station[1] or station[sta2]"),
                ));
            }
            i = close + 1;
        }
        if i == end {
            return Ok(steps);
        }
        if bytes[i] != b'.' {
            let c = key[i..].chars().next().unwrap_or(' ');
            return Err(Fail(at(i), format!("unexpected `{c}` in the key path; {EXAMPLES}")));
        }
        i += 1;
    }
}

/// The value `text` (starting at `base` in the span space): TOML, or a bare word as a string.
fn value(text: &str, base: usize) -> Result<Value<'_>, Fail> {
    let lead = text.len() - text.trim_start().len();
    let v = text.trim();
    let base = base + lead;
    if v.is_empty() {
        return Err(Fail(base..base, "no value after `=`; give a TOML value, e.g. 4, true, 2Mbps or \"2Mbps\"".into()));
    }
    match DeValue::parse(v) {
        Ok(parsed) => Ok(shifted(parsed, base)),
        Err(e) if v.starts_with(['"', '\'', '[', '{']) => {
            let span = e.span().map_or(base..base, |s| base + s.start..base + s.end);
            Err(Fail(span, format!("TOML syntax error in the value {v}: {}", e.message())))
        }
        // Not TOML and not meant to be: a string, as it would be quoted.
        Err(_) => Ok(Spanned::new(base..base + v.len(), DeValue::String(Cow::Borrowed(v)))),
    }
}

/// `v` with every span moved `by` bytes on.
fn shifted(v: Value<'_>, by: usize) -> Value<'_> {
    let span = v.span();
    let inner = match v.into_inner() {
        DeValue::Array(mut items) => {
            for item in items.iter_mut() {
                let old = std::mem::replace(item, Spanned::new(0..0, DeValue::Boolean(false)));
                *item = shifted(old, by);
            }
            DeValue::Array(items)
        }
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, v)| {
                    let ks = k.span();
                    (Spanned::new(ks.start + by..ks.end + by, k.into_inner()), shifted(v, by))
                })
                .collect(),
        ),
        other => other,
    };
    Spanned::new(span.start + by..span.end + by, inner)
}

/// Sets `value` at `steps` (which start with a key) below `table`; `path` is the table's own.
fn set_in<'a>(table: &mut DeTable<'a>, steps: &[Step<'a>], value: Value<'a>, path: String) -> Result<(), Fail> {
    let Some((&Step::Key(name, a, b), rest)) = steps.split_first() else {
        let span = steps.first().map_or(0..0, Step::span);
        return Err(Fail(span, format!("`{path}` is a table: select a key in it with a dot, not brackets")));
    };
    let here = join(&path, name);
    if rest.is_empty() {
        // The later of two overrides of a key wins; its key's position is the one reported.
        table.remove(name);
        for other in ALTERNATIVES.iter().filter(|g| g.contains(&name)).flat_map(|g| g.iter()) {
            if *other != name && table.remove(*other).is_some() && *other == "schedule" {
                table.remove("schedule_mode");
            }
        }
        table.insert(Spanned::new(a..b, Cow::Borrowed(name)), value);
        return Ok(());
    }
    if !table.contains_key(name) {
        if let Step::Index(..) | Step::Name(..) = rest[0] {
            return Err(Fail(a..b, format!("the scenario has no [[{name}]] to select from")));
        }
        // A table the file does not have yet ([run] in a file without one).
        table.insert(Spanned::new(a..b, Cow::Borrowed(name)), Spanned::new(a..b, DeValue::Table(DeTable::new())));
    }
    match table.get_mut(name) {
        Some(v) => set_below(v.get_mut(), rest, value, here),
        None => Err(Fail(a..b, format!("cannot set `{here}`"))),
    }
}

/// Sets `value` at `steps` below the value `v` found at `path`.
fn set_below<'a>(v: &mut DeValue<'a>, steps: &[Step<'a>], value: Value<'a>, path: String) -> Result<(), Fail> {
    match v {
        DeValue::Table(t) => set_in(t, steps, value, path),
        DeValue::Array(items) => {
            let (i, used) = select(items, steps, &path)?;
            let rest = &steps[used..];
            let entry = format!("{path}[{i}]");
            let Some(item) = items.get_mut(i) else {
                return Err(Fail(steps[0].span(), format!("no {entry}")));
            };
            if rest.is_empty() {
                *item = value;
                return Ok(());
            }
            match rest[0] {
                Step::Key(..) => set_below(item.get_mut(), rest, value, entry),
                step => Err(Fail(
                    step.span(),
                    format!("`{entry}` is an entry, not an array: select a key in it with a dot"),
                )),
            }
        }
        other => {
            let next = steps.first().map_or(0..0, Step::span);
            Err(Fail(next, format!("`{path}` is {}, not a table, so it has no keys to set", describe(other))))
        }
    }
}

/// Which entry of the array at `path` the first step(s) select, and how many steps that takes.
fn select(items: &[Value<'_>], steps: &[Step<'_>], path: &str) -> Result<(usize, usize), Fail> {
    let section = path.rsplit('.').next().unwrap_or(path);
    let Some(&first) = steps.first() else {
        return Err(Fail(0..0, format!("`{path}` needs an entry: {path}[INDEX] or {path}[NAME]")));
    };
    let names: Vec<Option<&str>> = items
        .iter()
        .map(|it| it.get_ref().as_table().and_then(|t| t.get("name")).and_then(|n| n.get_ref().as_str()))
        .collect();
    let (index, used) = match first {
        Step::Index(n, ..) => (Some(n), 1),
        Step::Key(k, ..) if k.bytes().all(|b| b.is_ascii_digit()) => (k.parse::<usize>().ok(), 1),
        Step::Name(name, ..) => (names.iter().position(|n| *n == Some(name)), 1),
        Step::Key(..) => {
            // `station.a.b.rate`: the longest run of dotted keys that names an entry.
            let keys: Vec<&str> =
                steps.iter().map_while(|s| if let Step::Key(k, ..) = s { Some(*k) } else { None }).collect();
            (1..=keys.len())
                .rev()
                .find_map(|n| {
                    let joined = keys[..n].join(".");
                    names.iter().position(|x| *x == Some(joined.as_str())).map(|i| (i, n))
                })
                .map_or((None, 1), |(i, n)| (Some(i), n))
        }
    };
    match index {
        Some(i) if i < items.len() => Ok((i, used)),
        Some(i) => {
            let have = match items.len() {
                0 => format!("the scenario has no [[{section}]]"),
                1 => format!("the scenario has one [[{section}]], {path}[0]"),
                n => format!("the scenario has {n} [[{section}]] entries, {path}[0] to {path}[{}]", n - 1),
            };
            Err(Fail(first.span(), format!("no {path}[{i}]: {have} (indexes count from 0)")))
        }
        None => {
            let wanted = match first {
                Step::Key(k, ..) | Step::Name(k, ..) => k,
                Step::Index(..) => "",
            };
            let known: Vec<&str> = names.iter().flatten().copied().collect();
            let mut msg = format!("no [[{section}]] named {wanted:?}");
            if let Some(c) = closest(wanted, known.iter().copied()) {
                msg.push_str(&format!("; did you mean {c:?}?"));
            }
            if known.is_empty() {
                msg.push_str(&format!(" (the scenario has no named [[{section}]])"));
            } else {
                let shown: Vec<String> = known.iter().take(10).map(|k| format!("{k:?}")).collect();
                let more = if known.len() > 10 { ", ..." } else { "" };
                msg.push_str(&format!(" ({section} names: {}{more}; or select by index, {path}[0])", shown.join(", ")));
            }
            Err(Fail(first.span(), msg))
        }
    }
}
