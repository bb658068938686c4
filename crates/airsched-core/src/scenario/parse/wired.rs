//! `[wired]`: the link between the AP and the server.

use super::*;

pub(super) fn parse_wired(ctx: &mut Ctx<'_>, t: Option<(&DeTable<'_>, Span)>) -> WiredConfig {
    let empty = DeTable::new();
    let (tbl, _) = t.unwrap_or((&empty, 0..0));
    check_keys(ctx, tbl, "wired", "[wired]", WIRED_KEYS);
    let rate = tbl.get("rate").and_then(|v| tc_rate(ctx, v, "wired.rate"));
    let delay = tbl
        .get("delay")
        .and_then(|v| time_value(ctx, v, "wired.delay", "0.1ms"));
    WiredConfig {
        rate_bps: rate.unwrap_or(100_000_000),
        delay: delay.unwrap_or(Nanos(100_000)),
    }
}
