//! The `police` action's options as iproute2 6.1 reads them (`tc/m_police.c`,
//! `act_parse_police`): after `police` (u32/fw's own attribute) or `action police` (on any
//! classifier). The words are read until one is not the policer's; the classifier reads on from
//! there (`flowid 1:1`). The model is [`crate::qdisc::police`]; docs/tc-police.md.

use super::lex::{err, matches, parse_c_u32, warn, Cursor, TcDiag, Tok};
use crate::qdisc::police::{xmittime_ticks, Control, LinkLayer, PoliceParams, RateCfg};
use crate::units::{parse_rate_bps, parse_size_bytes};

/// A size with tc's optional `/CELL` (the rate table's cell size: its log2 sets the default mtu).
fn size_and_cell(v: Tok<'_>, what: &str, diags: &mut Vec<TcDiag>) -> Option<(u64, Option<u32>)> {
    let (text, cell) = match v.text.split_once('/') {
        Some((s, c)) => (s, Some(c)),
        None => (v.text, None),
    };
    let size = match parse_size_bytes(text) {
        Ok(s) if s <= u32::MAX as u64 => s,
        Ok(_) => {
            err(diags, v, format!("invalid {what} \"{}\": tc stores it in 32 bits", v.text));
            return None;
        }
        Err(e) => {
            err(diags, v, format!("invalid {what} \"{}\": {e}", v.text));
            return None;
        }
    };
    let cell_log = match cell {
        None => None,
        Some(c) => match parse_c_u32(c) {
            // get_size_and_cell: the cell must be a power of two, at most 2^30 (tc: "Illegal").
            Some(n) if n.is_power_of_two() && n <= 1 << 30 => Some(n.trailing_zeros()),
            _ => {
                err(diags, v, format!("invalid cell size \"{c}\" in \"{}\": a power of two, like 8", v.text));
                return None;
            }
        },
    };
    Some((size, cell_log))
}

fn rate_bytes(v: Tok<'_>, what: &str, diags: &mut Vec<TcDiag>) -> Option<u64> {
    if v.text.ends_with('%') {
        err(
            diags,
            v,
            format!("invalid {what} \"{}\": a percentage needs a device speed; give a rate like 10mbit", v.text),
        );
        return None;
    }
    match parse_rate_bps(v.text) {
        Ok(bps) if bps >= 8 => Some(bps / 8),
        Ok(_) => {
            err(diags, v, format!("invalid {what} \"{}\": below 8bit, which tc stores as 0 bytes per second", v.text));
            None
        }
        Err(e) => {
            err(diags, v, format!("invalid {what} \"{}\": {e}", v.text));
            None
        }
    }
}

/// Parse a policer from the word after `police` (`key` is that word). `None` after an error.
pub fn parse_police<'a>(
    c: &mut Cursor<'_, 'a>,
    key: Tok<'a>,
    legacy: bool,
    diags: &mut Vec<TcDiag>,
) -> Option<PoliceParams> {
    let before = diags.iter().filter(|d| d.severity == super::lex::Severity::Error).count();
    let mut rate: Option<(u64, Tok<'a>)> = None;
    let mut peak: Option<(u64, Tok<'a>)> = None;
    let mut burst: Option<(u64, Option<u32>, Tok<'a>)> = None;
    let mut mtu: Option<(u64, Option<u32>, Tok<'a>)> = None;
    let mut mpu: Option<u64> = None;
    let mut overhead: u16 = 0;
    let mut linklayer = LinkLayer::Ethernet;
    let mut exceed = Control::Reclassify;
    let mut conform = None;
    let mut index = 0u32;
    let mut words = 0;
    let dup = |diags: &mut Vec<TcDiag>, t: Tok<'_>, what: &str| {
        err(diags, t, format!("duplicate \"{what}\": tc takes it once per police (\"{what}\" given twice)"));
    };
    while let Some(t) = c.peek() {
        let w = t.text;
        if matches(w, "index") {
            c.next();
            let v = c.value(t, "an action index", diags)?;
            match v.text.parse::<u32>() {
                Ok(n) => index = n,
                Err(_) => {
                    err(diags, v, format!("invalid police index \"{}\"; expected a decimal number", v.text));
                    return None;
                }
            }
        } else if matches(w, "burst") || w == "buffer" || w == "maxburst" {
            c.next();
            let v = c.value(t, "a size like 10k", diags)?;
            if burst.is_some() {
                dup(diags, t, "buffer/burst");
                return None;
            }
            let (s, cell) = size_and_cell(v, "burst", diags)?;
            burst = Some((s, cell, v));
        } else if w == "mtu" || w == "minburst" {
            c.next();
            let v = c.value(t, "a size like 1514", diags)?;
            if mtu.is_some() {
                dup(diags, t, "mtu/minburst");
                return None;
            }
            let (s, cell) = size_and_cell(v, "mtu", diags)?;
            mtu = Some((s, cell, v));
        } else if w == "mpu" {
            c.next();
            let v = c.value(t, "a size like 64", diags)?;
            match parse_size_bytes(v.text) {
                Ok(s) if s <= u16::MAX as u64 => mpu = Some(s),
                _ => {
                    err(diags, v, format!("invalid mpu \"{}\"; expected a size up to 65535 bytes", v.text));
                    return None;
                }
            }
        } else if w == "rate" {
            c.next();
            let v = c.value(t, "a rate like 1mbit", diags)?;
            if rate.is_some() {
                dup(diags, t, "rate");
                return None;
            }
            rate = Some((rate_bytes(v, "rate", diags)?, v));
        } else if matches(w, "peakrate") {
            c.next();
            let v = c.value(t, "a rate like 2mbit", diags)?;
            if peak.is_some() {
                dup(diags, t, "peakrate");
                return None;
            }
            peak = Some((rate_bytes(v, "peakrate", diags)?, v));
        } else if w == "avrate" {
            err(
                diags,
                t,
                "police avrate (EWMA policing on the action's rate estimator) is not modelled; use rate and burst",
            );
            return None;
        } else if matches(w, "pkts_rate") || matches(w, "pkts_burst") {
            err(diags, t, format!("police {w} (a packets-per-second policer) is not modelled; use rate and burst"));
            return None;
        } else if w == "conform-exceed" {
            c.next();
            let v = c.value(t, "EXCEED[/CONFORM], like drop/ok", diags)?;
            let (a, b) = match v.text.split_once('/') {
                Some((a, b)) => (a, Some(b)),
                None => (v.text, None),
            };
            exceed = control(a, v, diags)?;
            if let Some(b) = b {
                conform = Some(control(b, v, diags)?);
            }
        } else if matches(w, "overhead") {
            c.next();
            let v = c.value(t, "bytes per packet, like 14", diags)?;
            match v.text.parse::<u16>() {
                Ok(n) => overhead = n,
                Err(_) => {
                    err(
                        diags,
                        v,
                        format!("invalid overhead \"{}\"; expected a number of bytes from 0 to 65535", v.text),
                    );
                    return None;
                }
            }
        } else if matches(w, "linklayer") {
            c.next();
            let v = c.value(t, "ethernet, atm or adsl", diags)?;
            linklayer = match v.text {
                "ethernet" => LinkLayer::Ethernet,
                "atm" | "adsl" => LinkLayer::Atm,
                other => {
                    err(diags, v, format!("invalid linklayer \"{other}\"; expected ethernet, atm or adsl"));
                    return None;
                }
            };
        } else if w == "goto" || w == "jump" || w == "trap" {
            err(
                diags,
                t,
                format!(
                    "\"{w}\" (filter chains and jumps) is not modelled; use drop, continue, reclassify, pipe or ok"
                ),
            );
            return None;
        } else if let Some(ctl) = Control::from_word(w) {
            c.next();
            exceed = ctl;
        } else if w == "help" {
            c.next();
            warn(diags, t, "\"help\" prints usage; ignored");
        } else {
            break;
        }
        words += 1;
    }
    if words == 0 {
        err(diags, key, "police needs its options, like: police rate 1mbit burst 10k drop");
        return None;
    }
    if index != 0 && rate.is_none() && mtu.is_none() {
        err(
            diags,
            key,
            "police index N alone binds an existing action by its index, which is not modelled; give rate and burst",
        );
        return None;
    }
    if rate.is_none() && mtu.is_none() {
        err(diags, key, "'rate' or 'avrate' or 'mtu' or 'pkts_rate' MUST be specified (tc)");
        return None;
    }
    let end = c.peek().unwrap_or(key);
    if rate.is_some() && burst.is_none() {
        err(
            diags,
            rate.map_or(end, |r| r.1),
            "police rate needs a burst: 'burst' requires 'rate' (tc), like rate 1mbit burst 10k",
        );
        return None;
    }
    if let Some((_, pt)) = peak {
        if rate.is_none() {
            err(diags, pt, "'peakrate' requires 'rate' (tc)");
            return None;
        }
        if mtu.is_none() {
            err(diags, pt, "'mtu' is required, if 'peakrate' is requested (tc)");
            return None;
        }
    }
    if diags.iter().filter(|d| d.severity == super::lex::Severity::Error).count() > before {
        return None;
    }
    if index != 0 {
        warn(diags, key, format!("police index {index}: each filter's policer is its own here; a policer shared by index between filters is not modelled"));
    }
    let mpu = mpu.unwrap_or(0) as u16;
    let cfg = |bytes: u64| RateCfg { bytes_per_sec: bytes, overhead, mpu, linklayer };
    // tc_calc_rtable: mtu 0 is 2047, and the cell_log (if none given) the least with mtu >> it
    // <= 255; the kernel's default mtu is then 255 << cell_log (2040 bytes).
    let given_mtu = mtu.map_or(0, |m| m.0 as u32);
    let mtu_bytes = match (given_mtu, rate) {
        (0, Some(_)) => {
            let cell_log = burst.and_then(|b| b.1).unwrap_or_else(|| {
                let mut cl = 0;
                while (2047u32 >> cl) > 255 {
                    cl += 1;
                }
                cl
            });
            255u32 << cell_log
        }
        (0, None) => u32::MAX,
        (m, _) => m,
    };
    let burst_ticks = match (rate, burst) {
        (Some((r, _)), Some((b, _, _))) => xmittime_ticks(r, b),
        _ => 0,
    };
    Some(PoliceParams {
        rate: rate.map(|r| cfg(r.0)),
        peak: peak.map(|p| cfg(p.0)),
        burst_ticks,
        burst: burst.map_or(0, |b| b.0 as u32),
        given_mtu,
        mtu: mtu_bytes,
        exceed,
        conform,
        index,
        legacy,
    })
}

fn control(w: &str, at: Tok<'_>, diags: &mut Vec<TcDiag>) -> Option<Control> {
    if w == "goto" || w == "jump" || w == "trap" {
        err(
            diags,
            at,
            format!("\"{w}\" (filter chains and jumps) is not modelled; use drop, continue, reclassify, pipe or ok"),
        );
        return None;
    }
    let c = Control::from_word(w);
    if c.is_none() {
        err(
            diags,
            at,
            format!(
                "invalid police action \"{w}\" in \"{}\"; expected drop, continue, reclassify, pipe or ok",
                at.text
            ),
        );
    }
    c
}
