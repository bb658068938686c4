//! `[run]`: duration, warm-up, seed and sample interval.

use super::*;

/// The run's validated duration, as the flows' checks need it.
#[derive(Clone, Debug)]
pub(super) struct RunDuration {
    pub(super) value: Nanos,
    /// Where an override set it (None: the file, or the default): relations it breaks with the
    /// file's values are reported there, since the override is what changed.
    pub(super) by_override: Option<Span>,
}

const DEFAULT_SAMPLE_INTERVAL: Nanos = Nanos::from_ms(200);

/// Returns the run settings and the validated duration (None when `run.duration` is invalid,
/// so that checks against it are skipped rather than cascading).
pub(super) fn parse_run(rd: &mut Reader<'_>, t: Option<(&DeTable<'_>, Span)>) -> (RunConfig, Option<RunDuration>) {
    let empty = DeTable::new();
    let (tbl, _span) = t.unwrap_or((&empty, 0..0));
    check_keys(rd, tbl, "run", "[run]", RUN_KEYS);
    // The duration's override, and a test of whether another key is the file's.
    let by_override = tbl.get("duration").map(|v| v.span()).filter(|s| rd.is_override(s));
    let from_file = |rd: &Reader<'_>, v: &Value<'_>| !rd.is_override(&v.span());

    let duration = match tbl.get("duration") {
        None => Some(DEFAULT_DURATION),
        Some(v) => time_value(rd, v, "run.duration", "60s").and_then(|d| {
            if d == Nanos::ZERO {
                rd.error(&v.span(), "run.duration", "must be greater than zero, e.g. \"60s\"");
                None
            } else {
                Some(d)
            }
        }),
    };

    let warmup = match tbl.get("warmup") {
        None => Some(match duration {
            Some(d) if d <= DEFAULT_WARMUP => Nanos::ZERO,
            _ => DEFAULT_WARMUP,
        }),
        Some(v) => time_value(rd, v, "run.warmup", "1s").and_then(|w| match duration {
            Some(d) if w >= d && by_override.is_some() && from_file(rd, v) => {
                let span = by_override.clone().unwrap_or_default();
                rd.error(
                    &span,
                    "run.duration",
                    format!("duration {d} must be longer than the warm-up {w} of the scenario"),
                );
                None
            }
            Some(d) if w >= d => {
                rd.error(
                    &v.span(),
                    "run.warmup",
                    format!(
                        "warmup ({w}) must be shorter than run.duration ({d}{})",
                        if tbl.get("duration").is_none() { ", the default" } else { "" }
                    ),
                );
                None
            }
            _ => Some(w),
        }),
    };

    let seed = tbl.get("seed").map_or(Some(1), |v| integer(rd, v, "run.seed", 0, u64::MAX));

    let sample_v = tbl.get("sample_interval");
    let sample_interval = match sample_v {
        None => Some(DEFAULT_SAMPLE_INTERVAL),
        Some(v) => time_value(rd, v, "run.sample_interval", "200ms").and_then(|s| {
            if s < MIN_SAMPLE_INTERVAL {
                rd.error(&v.span(), "run.sample_interval", format!("{s} is too short; at least {MIN_SAMPLE_INTERVAL}"));
                None
            } else {
                Some(s)
            }
        }),
    };
    // At least two samples in the measured window, so that every standard deviation is defined.
    if let (Some(d), Some(w), Some(s)) = (duration, warmup, sample_interval) {
        let window = Nanos(d.0 - w.0.min(d.0));
        if s.0.saturating_mul(2) > window.0 {
            let sample_from_file = sample_v.is_some_and(|v| from_file(rd, v));
            let whose = if sample_v.is_none() { " (the default)" } else { "" };
            let most = Nanos(window.0 / 2);
            let fix = if most >= MIN_SAMPLE_INTERVAL {
                format!("use a run.sample_interval of at most {most} or a longer run.duration")
            } else {
                format!("use a run.duration of at least {}", w + Nanos(2 * MIN_SAMPLE_INTERVAL.0))
            };
            let msg = format!(
                "the measured window ({window}: run.duration {d} minus run.warmup {w}) holds fewer than two sample \
                 intervals of {s}{whose}, so no standard deviation could be computed; {fix}"
            );
            match (&by_override, sample_v) {
                // An override of the duration made the file's (or the default) interval too long.
                (Some(span), _) if sample_v.is_none() || sample_from_file => rd.error(span, "run.duration", msg),
                (_, Some(v)) => rd.error(&v.span(), "run.sample_interval", msg),
                (_, None) => {
                    let span = tbl.get("duration").map_or(0..0, |v| v.span());
                    rd.error(&span, "run.duration", msg)
                }
            }
        }
    }

    let cfg = RunConfig {
        duration: duration.unwrap_or(DEFAULT_DURATION),
        warmup: warmup.unwrap_or(Nanos::ZERO),
        seed: seed.unwrap_or(1),
        sample_interval: sample_interval.unwrap_or(DEFAULT_SAMPLE_INTERVAL),
    };
    (cfg, duration.map(|value| RunDuration { value, by_override }))
}
