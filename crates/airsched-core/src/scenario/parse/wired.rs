//! `[wired]`: the link between the AP and the server.

use super::*;

pub(super) fn parse_wired(rd: &mut Reader<'_>, t: Option<(&DeTable<'_>, Span)>) -> WiredConfig {
    let empty = DeTable::new();
    let (tbl, _) = t.unwrap_or((&empty, 0..0));
    check_keys(rd, tbl, "wired", "[wired]", WIRED_KEYS);
    let rate = tbl.get("rate").and_then(|v| {
        let bps = tc_rate(rd, v, "wired.rate")?;
        rate_in_bounds(rd, v, "wired.rate", bps, MIN_WIRED_BPS, MAX_LINK_BPS)
    });
    let delay = tbl.get("delay").and_then(|v| {
        let d = time_value(rd, v, "wired.delay", "0.1ms")?;
        if d > MAX_WIRED_DELAY {
            rd.error(
                &v.span(),
                "wired.delay",
                format!("{d} is too long; at most {MAX_WIRED_DELAY} (a geostationary satellite hop is 250ms)"),
            );
            return None;
        }
        Some(d)
    });
    WiredConfig { rate_bps: rate.unwrap_or(100_000_000), delay: delay.unwrap_or(Nanos(100_000)) }
}
