//! htb's iproute2 half, as `tc/q_htb.c` of iproute2 does it: the words of `tc qdisc add ... htb`
//! (`r2q`, `default`, `direct_qlen`, ...) and of `tc class add ... htb` (`rate`, `ceil`, bursts,
//! `quantum`, `prio`, the link-layer options) with tc's defaults and its tick conversions
//! (`tc_calc_xmittime`, `tc_calc_xmitsize`), producing what tc sends in `struct tc_htb_opt`;
//! then `build`, which applies the qdisc options and every class, graft and filter to the
//! algorithm's structures in `super` (`net/sched/sch_htb.c`: `htb_init`, `htb_change_class`).

use std::collections::VecDeque;

use super::wireless::Wireless;
use super::{Htb, Slot, MAXDEPTH, NUMPRIO, ROW_SLOTS};
use crate::qdisc::classify::sort_filters;
use crate::qdisc::common::{errors_since, filter_diag};
use crate::qdisc::{
    diag_error, diag_warning, opt_parser, BuildCx, ClassDecl, Handle, QdiscDecl, QdiscImpl, QdiscStats,
};
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::tc::opts::{format_rate_bytes, OptParser};

/// `get_hz()` of tc: the 4th word of /proc/net/psched, 10^9 on high-resolution-timer kernels.
const TC_HZ: u64 = 1_000_000_000;
/// tc's default `mtu` for HTB classes (used for the default burst and the legacy rate table).
const TC_DEFAULT_MTU: u32 = 1600;
/// psched ticks per second of tc's `tc_calc_xmittime` (10^6 us * 15.625 ticks/us).
const TICKS_PER_SEC: u128 = 15_625_000;

/// iproute2's `matches(arg, name)`: `arg` is a prefix of `name`.
fn matches(arg: &str, name: &str) -> bool {
    name.starts_with(arg)
}

/// A class's options after tc's defaults, as tc sends them in `struct tc_htb_opt`.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClassOpts {
    /// Bytes per second.
    pub(super) rate: u64,
    pub(super) ceil: u64,
    pub(super) buffer_ticks: u32,
    pub(super) cbuffer_ticks: u32,
    /// 0 = not given (the kernel derives it from rate / r2q).
    pub(super) quantum: u32,
    pub(super) prio: u32,
    pub(super) overhead: u16,
    pub(super) mpu: u16,
    pub(super) atm: bool,
}

/// `tc_calc_xmittime` of current iproute2: psched ticks to send `size` bytes at `rate` B/s,
/// rounded up.
fn xmittime_ticks(rate: u64, size: u64) -> u128 {
    (size as u128 * TICKS_PER_SEC).div_ceil(rate as u128)
}

/// `tc_calc_xmitsize`: bytes sent at `rate` B/s in `ticks` (truncated, as tc prints it).
pub(super) fn xmitsize(rate: u64, ticks: u32) -> u32 {
    (rate as u128 * ticks as u128 / TICKS_PER_SEC).min(u32::MAX as u128) as u32
}

/// A u32 option value with tc's range (`get_u32`, `get_u16`).
fn uint_opt(p: &mut OptParser<'_, '_>, k: Tok<'_>, max: u64) -> Option<u64> {
    p.uint(k, 0, max)
}

fn parse_class_opts(c: &ClassDecl<'_>, diags: &mut Vec<TcDiag>) -> Option<ClassOpts> {
    const KNOWN: &[&str] = &[
        "rate",
        "ceil",
        "burst",
        "buffer",
        "maxburst",
        "cburst",
        "cbuffer",
        "cmaxburst",
        "prio",
        "quantum",
        "mtu",
        "mpu",
        "overhead",
        "linklayer",
    ];
    let from = diags.len();
    let mut p = opt_parser(&c.opts, c.end, diags);
    let (mut rate, mut ceil) = (0u64, 0u64);
    let (mut buffer, mut cbuffer) = (0u64, 0u64);
    let mut mtu = TC_DEFAULT_MTU as u64;
    let mut o = ClassOpts {
        rate: 0,
        ceil: 0,
        buffer_ticks: 0,
        cbuffer_ticks: 0,
        quantum: 0,
        prio: 0,
        overhead: 0,
        mpu: 0,
        atm: false,
    };
    let mut rate_tok = None;
    let mut ceil_tok = None;
    while let Some(k) = p.next() {
        let t = k.text;
        if matches(t, "prio") {
            if let Some(v) = uint_opt(&mut p, k, u32::MAX as u64) {
                o.prio = v as u32;
                if v >= NUMPRIO as u64 {
                    p.warn(k, format!("prio {v} is above 7; the kernel uses 7"));
                }
            }
        } else if matches(t, "mtu") {
            if let Some(v) = uint_opt(&mut p, k, u32::MAX as u64) {
                mtu = v;
            }
        } else if matches(t, "mpu") {
            if let Some(v) = uint_opt(&mut p, k, u16::MAX as u64) {
                o.mpu = v as u16;
            }
        } else if matches(t, "overhead") {
            if let Some(v) = uint_opt(&mut p, k, u16::MAX as u64) {
                o.overhead = v as u16;
            }
        } else if matches(t, "linklayer") {
            if let Some(v) = p.value(k, "ethernet, atm or adsl") {
                match v.text.to_ascii_lowercase().as_str() {
                    "ethernet" => o.atm = false,
                    "atm" | "adsl" => o.atm = true,
                    _ => p.error(v, format!("unknown linklayer \"{}\"; expected ethernet, atm or adsl", v.text)),
                }
            }
        } else if matches(t, "quantum") {
            if let Some(v) = uint_opt(&mut p, k, i32::MAX as u64) {
                o.quantum = v as u32;
            }
        } else if matches(t, "burst") || t == "buffer" || t == "maxburst" {
            if let Some(v) = p.size(k) {
                if v > u32::MAX as u64 {
                    p.error(k, format!("burst of {v} bytes is too large (tc takes at most {} bytes)", u32::MAX));
                } else {
                    buffer = v;
                }
            }
        } else if matches(t, "cburst") || t == "cbuffer" || t == "cmaxburst" {
            if let Some(v) = p.size(k) {
                if v > u32::MAX as u64 {
                    p.error(k, format!("cburst of {v} bytes is too large (tc takes at most {} bytes)", u32::MAX));
                } else {
                    cbuffer = v;
                }
            }
        } else if t == "ceil" || t == "rate" {
            let is_rate = t == "rate";
            if (is_rate && rate_tok.is_some()) || (!is_rate && ceil_tok.is_some()) {
                p.error(k, format!("Double \"{t}\" spec"));
                let _ = p.next();
                continue;
            }
            if let Some(bits) = p.rate(k) {
                let bytes = bits / 8; // tc's get_rate64: bit/s -> bytes/s
                if bytes == 0 {
                    p.error(k, format!("{t} of {bits} bit/s is 0 bytes/s; the kernel requires a non-zero {t}"));
                } else if is_rate {
                    rate = bytes;
                    rate_tok = Some(k);
                } else {
                    ceil = bytes;
                    ceil_tok = Some(k);
                }
            } else if is_rate {
                rate_tok = Some(k); // reported already; do not also say it is missing
            } else {
                ceil_tok = Some(k);
            }
        } else {
            // The class kind names tc's parser: `htb` or `whtb`, the same options.
            p.unknown(k, &format!("{} class", c.kind.text), KNOWN);
        }
    }
    if rate_tok.is_none() {
        p.error_at_end("\"rate\" is required.");
    }
    if errors_since(diags, from) || rate == 0 {
        return None;
    }
    if ceil == 0 {
        ceil = rate;
    }
    // tc: "compute minimal allowed burst from rate; mtu is added here to make sure that buffer
    // is larger than mtu": rate / hz + mtu, hz = 10^9 on hrtimer kernels.
    if buffer == 0 {
        buffer = (rate / TC_HZ + mtu) & u32::MAX as u64;
    }
    if cbuffer == 0 {
        cbuffer = (ceil / TC_HZ + mtu) & u32::MAX as u64;
    }
    let bt = xmittime_ticks(rate, buffer);
    let cbt = xmittime_ticks(ceil, cbuffer);
    for (ticks, what, r) in [(bt, "burst", rate), (cbt, "cburst", ceil)] {
        if ticks > u32::MAX as u128 {
            diags.push(diag_error(
                c.at,
                format!(
                    "{what} lasts {ticks} psched ticks at {}, more than tc can send (2^32 - 1)",
                    format_rate_bytes(r)
                ),
            ));
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    o.rate = rate;
    o.ceil = ceil;
    o.buffer_ticks = bt as u32;
    o.cbuffer_ticks = cbt as u32;
    Some(o)
}

pub(in crate::qdisc) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut r2q: u64 = 10;
    let mut defcls: u64 = 0;
    let mut direct_qlen: u64 = cx.txqueuelen as u64;
    let kind = d.kind.text;
    let mut wireless = (kind == "whtb").then(Wireless::default);
    {
        let mut p = opt_parser(&d.opts, d.end, diags);
        let mut gate_skip_tok = None;
        while let Some(k) = p.next() {
            let t = k.text;
            // whtb's own options are whole words ("gate" is a prefix of "gate_skip").
            if let Some(w) = wireless.as_mut() {
                if w.parse_option(&mut p, k) {
                    if t == "gate_skip" {
                        gate_skip_tok = Some(k);
                    }
                    continue;
                }
            }
            // The order of tc's tests, which accept unambiguous-enough prefixes ("d" = default).
            if matches(t, "r2q") {
                if let Some(v) = uint_opt(&mut p, k, u32::MAX as u64) {
                    if v == 0 {
                        p.warn(k, "r2q 0: the kernel uses 1");
                    }
                    r2q = v.max(1);
                }
            } else if matches(t, "default") {
                if let Some(v) = p.hex(k, u32::MAX as u64) {
                    defcls = v;
                }
            } else if matches(t, "debug") {
                if p.value(k, "a string of up to 16 digits 0-3").is_some() {
                    p.warn(k, "accepted but not modelled: debug flags (the kernel ignores them too)");
                }
            } else if matches(t, "direct_qlen") {
                if let Some(v) = uint_opt(&mut p, k, u32::MAX as u64) {
                    direct_qlen = v;
                }
            } else if matches(t, "offload") {
                p.warn(k, "accepted but not modelled: hardware offload (the software HTB is simulated)");
            } else if wireless.is_some() {
                p.unknown(k, kind, &["default", "r2q", "direct_qlen", "debug", "offload", "gate", "gate_skip"]);
            } else {
                p.unknown(k, kind, &["default", "r2q", "direct_qlen", "debug", "offload"]);
            }
        }
        if let (Some(w), Some(k)) = (wireless, gate_skip_tok) {
            if !w.gate_on() {
                p.warn(k, "gate_skip has no effect without a gate above 0% (the gate is off)");
            }
        }
    }

    let mut h = Htb {
        handle: d.handle,
        classes: Vec::with_capacity(d.classes.len()),
        by_id: Vec::with_capacity(d.classes.len()),
        slots: Vec::new(),
        wait_pq: Default::default(),
        row_mask: [0; MAXDEPTH],
        near_ev_cache: [0; MAXDEPTH],
        now: 0,
        defcls: defcls as u32,
        r2q: r2q as u32,
        direct_qlen: direct_qlen as u32,
        direct: VecDeque::with_capacity((direct_qlen as usize).min(1 << 16)),
        direct_pkts: 0,
        filters: Vec::new(),
        stats: QdiscStats::default(),
        stash: None,
        watchdog: None,
        warned_nonwc: false,
        wireless,
        gate_skipped: Vec::new(),
    };

    for c in &d.classes {
        // Minor 0 is a class too (htb_change_class refuses only a class id of 0): it gets the
        // qdisc's own id, and with `default 0` the unclassified packets (htb_classify finds
        // `major:0`).
        if c.classid.major() != d.handle.major() {
            diags.push(diag_error(
                c.at,
                format!(
                    "class id {} does not belong to htb {}: it needs major {:x}",
                    c.classid,
                    d.handle,
                    d.handle.major()
                ),
            ));
            continue;
        }
        let Some(o) = parse_class_opts(c, diags) else { continue };
        if let Some(i) = h.find(c.classid.0) {
            // `tc class change`: new parameters, tokens and mode kept (htb_change_class).
            h.set_params(i, &o, c.at, diags);
            continue;
        }
        let parent = if c.parent == Handle::ROOT || c.parent == d.handle {
            // `parent major:` is htb_find(major:0): the class with the qdisc's own id when
            // there is one (above), else none (a top-level class).
            if c.parent == d.handle && c.classid != d.handle {
                h.find(d.handle.0)
            } else {
                None
            }
        } else if c.parent.major() != d.handle.major() {
            diags.push(diag_error(c.at, format!("parent {} is not a class of htb {}", c.parent, d.handle)));
            continue;
        } else {
            match h.find(c.parent.0) {
                Some(p) => Some(p),
                None => {
                    diags.push(diag_warning(
                        c.at,
                        format!(
                            "parent class {} does not exist; the kernel makes {} a root class",
                            c.parent, c.classid
                        ),
                    ));
                    None
                }
            }
        };
        if let Some(p) = parent {
            if let Some(g) = h.classes[p].parent {
                if h.classes[g].level < 2 {
                    diags.push(diag_error(
                        c.at,
                        format!(
                            "tree is too deep: {} would be below level 0 (htb allows 8 levels of classes)",
                            c.classid
                        ),
                    ));
                    continue;
                }
            }
        }
        h.add_class(c.classid, parent, &o, c.at, cx, diags);
    }

    for g in d.grafts {
        match h.find(g.classid.0) {
            None => diags.push(diag_error(g.at, format!("htb {} has no class {}", d.handle, g.classid))),
            Some(i) if h.classes[i].level > 0 => diags.push(diag_error(
                g.at,
                format!("{} is an inner class: htb attaches qdiscs only to leaf classes", g.classid),
            )),
            Some(i) => h.classes[i].child = Some(g.qdisc),
        }
    }

    for f in d.filters {
        if f.parent != d.handle {
            match h.find(f.parent.0) {
                None => {
                    diags.push(filter_diag(&f, Severity::Error, format!("filter parent {} is not a class of htb {}", f.parent, d.handle)));
                    continue;
                }
                Some(i) if h.classes[i].level == 0 => diags.push(filter_diag(
                    &f,
                    Severity::Warning,
                    format!(
                        "filter attached to leaf class {}: htb only runs filters of the qdisc and of inner classes, so it is never consulted",
                        f.parent
                    ),
                )),
                Some(_) => {}
            }
        }
        h.filters.push(f);
    }
    sort_filters(&mut h.filters);

    if errors_since(diags, from) {
        return None;
    }
    let n = h.classes.len();
    h.slots =
        (0..ROW_SLOTS + NUMPRIO * n).map(|_| Slot { list: Vec::with_capacity(n), ptr: None, last_ptr_id: 0 }).collect();
    for w in h.wait_pq.iter_mut() {
        w.reserve(n);
    }
    h.gate_skipped.reserve(n);
    Some(QdiscImpl::Htb(Box::new(h)))
}
