//! htb — Hierarchical Token Bucket, as `net/sched/sch_htb.c` of mainline Linux 6.12 behaves
//! (software path; offload is not modelled), configured the way iproute2's `tc/q_htb.c` does it.
//!
//! What is the kernel's, exactly:
//! - levels (leaves 0, an inner class one below its parent, root classes 7; at most 8 levels);
//! - the three modes (red `CANT_SEND`, yellow `MAY_BORROW`, green `CAN_SEND`) computed from
//!   `tokens`/`ctokens` in nanoseconds, no hysteresis (`htb_hysteresis=0`), `mbuffer` 60 s;
//! - the activation structure: per level and prio a *row* of green classes, per inner class and
//!   prio a *feed* of yellow children, each ordered by class id with a DRR pointer and the
//!   `last_ptr_id` recovery, `activate_prios`/`deactivate_prios` as the kernel links them;
//! - `htb_lookup_leaf` (pointer descent, rewinding a feed advances the pointer above it),
//!   `htb_dequeue_tree` ("send first, then check" deficit per level), `htb_dequeue` (direct
//!   queue first, levels 0..7, prios ascending, events per level, watchdog at the nearest event
//!   or at most 5 s), `htb_charge_class` (lends/borrows, the token clamps), `htb_do_events`
//!   (the per-level wait queue ordered by event time, FIFO among equal times);
//! - `htb_classify` (skb->priority shortcut, filters at the qdisc and at inner classes,
//!   `major:default`, the direct queue) and `psched_l2t_ns` with the kernel's mult/shift
//!   (`psched_ratecfg_precompute`), overhead, mpu and ATM cell tax.
//!
//! Data structures: the kernel keeps rows, feeds and wait queues in rb-trees. Here each is a
//! small sorted `Vec` of class indices (capacity reserved at build time, so the per-packet path
//! does not allocate) and a DRR pointer that names the class it points at; "next node" is the
//! next class id in the vector. Searching them is O(classes), which is fine for the handful of
//! classes a cell has, and the order of service is the kernel's because the orderings are.
//!
//! Deviations (also in docs/qdisc-htb.md): `htb_do_events` is not time-boxed to 2 jiffies (there
//! is no CPU time in the simulation); DRR deficits are 64-bit (the kernel's `int` would wrap after
//! millions of packets when quantum < packet size); the report of an inner class sums its
//! leaves' drops and backlog (the kernel prints 0) so that offered = sent + dropped + queued
//! holds at every class; a leaf's "dropped" includes drops its child makes at dequeue (CoDel).
//!
//! The same code is `whtb`, Garroppo et al.'s channel-aware Wireless HTB, when `Htb::wireless` is
//! set: see [`wireless`] (the stretched length and the gate) and docs/qdisc-whtb.md.

use std::collections::VecDeque;
use std::fmt::Write as _;

use super::classify::{classify, sort_filters, Filter};
use super::common::{errors_since, filter_diag, StashPeek};
use super::{
    default_child, diag_error, diag_warning, opt_parser, BuildCx, ClassReport, Enq, Handle, QCtx, Qdisc, QdiscDecl,
    QdiscImpl, QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::tc::opts::{format_rate_bytes, format_size, OptParser};
use crate::time::Nanos;

#[cfg(test)]
mod whtb_tests;
mod wireless;

use wireless::Wireless;

/// `TC_HTB_MAXDEPTH`: levels 0..7.
const MAXDEPTH: usize = 8;
/// `TC_HTB_NUMPRIO`: prios 0..7.
const NUMPRIO: usize = 8;
const NSEC_PER_SEC: i64 = 1_000_000_000;
/// `cl->mbuffer`: cap on the elapsed time credited at once, and floor of the buckets.
const MBUFFER: i64 = 60 * NSEC_PER_SEC;
/// `get_hz()` of tc: the 4th word of /proc/net/psched, 10^9 on high-resolution-timer kernels.
const TC_HZ: u64 = 1_000_000_000;
/// tc's default `mtu` for HTB classes (used for the default burst and the legacy rate table).
const TC_DEFAULT_MTU: u32 = 1600;
/// psched ticks per second of tc's `tc_calc_xmittime` (10^6 us * 15.625 ticks/us).
const TICKS_PER_SEC: u128 = 15_625_000;
/// Slots 0..64 are the rows (level * 8 + prio); class `i`'s feeds follow at 64 + 8 i + prio.
const ROW_SLOTS: usize = MAXDEPTH * NUMPRIO;

/// `enum htb_cmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Red: over ceil, may neither send nor borrow.
    CantSend,
    /// Yellow: over rate, under ceil: may borrow from an ancestor.
    MayBorrow,
    /// Green: under rate, sends on its own.
    CanSend,
}

/// `struct psched_ratecfg` and `psched_l2t_ns`.
#[derive(Clone, Copy, Debug)]
struct RateCfg {
    bytes_ps: u64,
    mult: u32,
    shift: u8,
    overhead: u16,
    mpu: u16,
    atm: bool,
}

impl RateCfg {
    /// `psched_ratecfg_precompute`: the largest `mult` below 2^32 with bit 31 set (or until the
    /// factor would overflow), so that `time = len * mult >> shift`.
    fn new(bytes_ps: u64, overhead: u16, mpu: u16, atm: bool) -> RateCfg {
        let (mut mult, mut shift) = (1u32, 0u8);
        let mut factor: u64 = NSEC_PER_SEC as u64;
        // A zero rate keeps mult 1, shift 0, as in the kernel.
        while let Some(q) = factor.checked_div(bytes_ps) {
            mult = q as u32; // the kernel assigns the u64 quotient to a u32
            if mult & (1 << 31) != 0 || factor & (1 << 63) != 0 {
                break;
            }
            factor <<= 1;
            shift += 1;
        }
        RateCfg { bytes_ps, mult, shift, overhead, mpu, atm }
    }

    /// Nanoseconds to send `len` bytes at this rate (`psched_l2t_ns`).
    #[inline]
    fn l2t(&self, len: u32) -> i64 {
        let mut len = len + self.overhead as u32;
        if len < self.mpu as u32 {
            len = self.mpu as u32;
        }
        if self.atm {
            len = len.div_ceil(48) * 53;
        }
        ((len as u64 * self.mult as u64) >> self.shift) as i64
    }
}

/// A row or a feed: classes ordered by class id, the DRR pointer, and the class id to recover
/// the pointer from when the class it pointed at left (`struct htb_prio`).
#[derive(Clone, Debug, Default)]
struct Slot {
    list: Vec<u32>,
    ptr: Option<u32>,
    last_ptr_id: u32,
}

/// One class (`struct htb_class`).
struct Class {
    classid: Handle,
    parent: Option<usize>,
    level: usize,
    children: u32,
    rate: RateCfg,
    ceil: RateCfg,
    /// Bucket depths in ns (`PSCHED_TICKS2NS` of what tc sent).
    buffer: i64,
    cbuffer: i64,
    /// What tc sent, in psched ticks (for printing burst/cburst as tc does).
    buffer_ticks: u32,
    cbuffer_ticks: u32,
    prio: u32,
    quantum: i64,
    tokens: i64,
    ctokens: i64,
    t_c: i64,
    mode: Mode,
    prio_activity: u8,
    /// Time of the pending mode change while in the wait queue (not green).
    pq_key: i64,
    /// Leaf: one DRR deficit per level it may be served at.
    deficit: [i64; MAXDEPTH],
    /// Leaf: the child qdisc. `None` for inner classes (the kernel destroys the queue).
    child: Option<QdiscImpl>,
    /// Leaf: counters of the traffic through the child (bytes/packets sent = the kernel's bstats).
    leaf_stats: QdiscStats,
    /// Inner: bytes/packets charged through it (`bstats_update` in `htb_charge_class`).
    bytes: u64,
    packets: u64,
    overlimits: u64,
    lends: u32,
    borrows: u32,
    /// Bytes charged to the buckets (and, for a leaf, to its deficits): the real lengths for
    /// htb, the stretched ones for whtb.
    charged: u64,
    /// whtb, leaf: per level, set while a DRR turn is under way (a packet was sent and the
    /// deficit has not expired); the gate only guards the first packet of a turn.
    turn_open: u8,
    /// whtb, leaf: opportunities missed in a row because of the gate.
    gate_skips: u32,
    /// whtb, leaf: every opportunity missed because of the gate, and the turns taken because
    /// `gate_skip` expired while the channel was still below the gate.
    gated: u64,
    forced: u64,
}

/// Where `htb_classify` sends a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Direct,
    Leaf(usize),
}

pub struct Htb {
    handle: Handle,
    classes: Vec<Class>,
    /// (class id, index), sorted, for `htb_find`.
    by_id: Vec<(u32, usize)>,
    /// Rows, then every class's feeds (see [`ROW_SLOTS`]).
    slots: Vec<Slot>,
    /// Per level: non-green classes ordered by `pq_key` (FIFO among equal keys).
    wait_pq: [Vec<u32>; MAXDEPTH],
    row_mask: [u8; MAXDEPTH],
    near_ev_cache: [i64; MAXDEPTH],
    /// `q->now`: the time of the dequeue in progress (ns).
    now: i64,
    /// `default` as tc sent it (only its minor selects the class).
    defcls: u32,
    r2q: u32,
    direct_qlen: u32,
    direct: VecDeque<PacketId>,
    direct_pkts: u32,
    filters: Vec<Filter>,
    stats: QdiscStats,
    /// `qdisc_peek_dequeued`'s one-packet stash.
    stash: Option<PacketId>,
    /// The watchdog time armed by the last dequeue that found nothing to send.
    watchdog: Option<Nanos>,
    /// `qdisc_warn_nonwc` fired (a leaf child returned nothing while backlogged).
    warned_nonwc: bool,
    /// `Some` for whtb: the channel-aware options.
    wireless: Option<Wireless>,
    /// whtb: leaves skipped by the gate in the dequeue in progress (to undo the skips when every
    /// leaf of a row turns out to be gated). Capacity reserved at build time.
    gate_skipped: Vec<u32>,
}

// ---------------------------------------------------------------------------------------------
// Option parsing (tc/q_htb.c)

/// iproute2's `matches(arg, name)`: `arg` is a prefix of `name`.
fn matches(arg: &str, name: &str) -> bool {
    name.starts_with(arg)
}

/// A class's options after tc's defaults, as tc sends them in `struct tc_htb_opt`.
#[derive(Clone, Copy, Debug)]
struct ClassOpts {
    /// Bytes per second.
    rate: u64,
    ceil: u64,
    buffer_ticks: u32,
    cbuffer_ticks: u32,
    /// 0 = not given (the kernel derives it from rate / r2q).
    quantum: u32,
    prio: u32,
    overhead: u16,
    mpu: u16,
    atm: bool,
}

/// `tc_calc_xmittime` of current iproute2: psched ticks to send `size` bytes at `rate` B/s,
/// rounded up.
fn xmittime_ticks(rate: u64, size: u64) -> u128 {
    (size as u128 * TICKS_PER_SEC).div_ceil(rate as u128)
}

/// `tc_calc_xmitsize`: bytes sent at `rate` B/s in `ticks` (truncated, as tc prints it).
fn xmitsize(rate: u64, ticks: u32) -> u32 {
    (rate as u128 * ticks as u128 / TICKS_PER_SEC).min(u32::MAX as u128) as u32
}

/// A u32 option value with tc's range (`get_u32`, `get_u16`).
fn uint_opt(p: &mut OptParser<'_, '_>, k: Tok<'_>, max: u64) -> Option<u64> {
    p.uint(k, 0, max)
}

fn parse_class_opts(c: &super::ClassDecl<'_>, diags: &mut Vec<TcDiag>) -> Option<ClassOpts> {
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

/// `PSCHED_NS2TICKS` clamped to `int`, as `htb_dump_class_stats` reports tokens.
fn ns_to_ticks_i32(ns: i64) -> i32 {
    (ns >> 6).clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

// ---------------------------------------------------------------------------------------------
// Build

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
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
        if c.classid.major() != d.handle.major() || c.classid.minor() == 0 {
            diags.push(diag_error(
                c.at,
                format!(
                    "class id {} does not belong to htb {}: it needs major {:x} and a non-zero minor",
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
            None
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

impl Htb {
    /// The kind tc shows: `whtb` for the channel-aware variant.
    fn kind(&self) -> &'static str {
        if self.wireless.is_some() {
            "whtb"
        } else {
            "htb"
        }
    }

    /// `htb_find`.
    fn find(&self, classid: u32) -> Option<usize> {
        self.by_id.binary_search_by_key(&classid, |e| e.0).ok().map(|i| self.by_id[i].1)
    }

    /// A new class (the `!cl` branch of `htb_change_class`): a green leaf with full buckets and a
    /// default pfifo; a leaf parent becomes an inner class.
    fn add_class(
        &mut self,
        classid: Handle,
        parent: Option<usize>,
        o: &ClassOpts,
        at: Tok<'_>,
        cx: &BuildCx,
        diags: &mut Vec<TcDiag>,
    ) {
        if let Some(p) = parent {
            if self.classes[p].level == 0 {
                // Turn the parent into an inner node: its queue is purged and destroyed.
                let gp_level = self.classes[p].parent.map_or(MAXDEPTH, |g| self.classes[g].level);
                let pc = &mut self.classes[p];
                pc.child = None;
                pc.level = gp_level - 1;
                pc.mode = Mode::CanSend;
            }
            self.classes[p].children += 1;
        }
        let idx = self.classes.len();
        self.classes.push(Class {
            classid,
            parent,
            level: 0,
            children: 0,
            rate: RateCfg::new(o.rate, o.overhead, o.mpu, o.atm),
            ceil: RateCfg::new(o.ceil, o.overhead, o.mpu, o.atm),
            buffer: 0,
            cbuffer: 0,
            buffer_ticks: 0,
            cbuffer_ticks: 0,
            prio: 0,
            quantum: 0,
            tokens: (o.buffer_ticks as i64) << 6,
            ctokens: (o.cbuffer_ticks as i64) << 6,
            t_c: 0,
            mode: Mode::CanSend,
            prio_activity: 0,
            pq_key: 0,
            deficit: [0; MAXDEPTH],
            child: Some(default_child(cx, classid)),
            leaf_stats: QdiscStats::default(),
            bytes: 0,
            packets: 0,
            overlimits: 0,
            lends: 0,
            borrows: 0,
            charged: 0,
            turn_open: 0,
            gate_skips: 0,
            gated: 0,
            forced: 0,
        });
        let pos = self.by_id.partition_point(|e| e.0 < classid.0);
        self.by_id.insert(pos, (classid.0, idx));
        self.set_params(idx, o, at, diags);
    }

    /// The parameter part of `htb_change_class`: rate tables, quantum (leaves), prio, buffers.
    fn set_params(&mut self, i: usize, o: &ClassOpts, at: Tok<'_>, diags: &mut Vec<TcDiag>) {
        let r2q = self.r2q as u64;
        let c = &mut self.classes[i];
        c.rate = RateCfg::new(o.rate, o.overhead, o.mpu, o.atm);
        c.ceil = RateCfg::new(o.ceil, o.overhead, o.mpu, o.atm);
        if c.level == 0 {
            let derived = (c.rate.bytes_ps / r2q).min(i32::MAX as u64);
            let mut q = derived;
            let mut warn = None;
            if o.quantum == 0 && q < 1000 {
                warn = Some("small");
                q = 1000;
            }
            if o.quantum == 0 && q > 200_000 {
                warn = Some("big");
                q = 200_000;
            }
            if o.quantum != 0 {
                q = o.quantum as u64;
            }
            c.quantum = q as i64;
            c.prio = o.prio.min(NUMPRIO as u32 - 1);
            if let Some(w) = warn {
                diags.push(diag_warning(
                    at,
                    format!(
                        "quantum of class {:X} is {w}. Consider r2q change. (rate {} / r2q {} = {derived} bytes, used {q}; set quantum explicitly to avoid this)",
                        c.classid.0,
                        format_rate_bytes(c.rate.bytes_ps),
                        r2q
                    ),
                ));
            }
        }
        c.buffer_ticks = o.buffer_ticks;
        c.cbuffer_ticks = o.cbuffer_ticks;
        c.buffer = (o.buffer_ticks as i64) << 6;
        c.cbuffer = (o.cbuffer_ticks as i64) << 6;
    }

    // -----------------------------------------------------------------------------------------
    // Sorted-vector stand-ins for the kernel's rb-trees

    #[inline]
    fn row_slot(level: usize, prio: usize) -> usize {
        level * NUMPRIO + prio
    }

    #[inline]
    fn feed_slot(cl: usize, prio: usize) -> usize {
        ROW_SLOTS + cl * NUMPRIO + prio
    }

    #[inline]
    fn cid(&self, cl: u32) -> u32 {
        self.classes[cl as usize].classid.0
    }

    /// `htb_add_to_id_tree`.
    fn id_insert(&mut self, s: usize, cl: usize) {
        let classes = &self.classes;
        let id = classes[cl].classid.0;
        let list = &mut self.slots[s].list;
        debug_assert!(!list.contains(&(cl as u32)), "class linked twice");
        let pos = list.partition_point(|&c| classes[c as usize].classid.0 < id);
        list.insert(pos, cl as u32);
    }

    /// `htb_safe_rb_erase` on an id tree.
    fn id_remove(&mut self, s: usize, cl: usize) {
        let list = &mut self.slots[s].list;
        if let Some(pos) = list.iter().position(|&c| c == cl as u32) {
            list.remove(pos);
        } else {
            debug_assert!(false, "class not linked");
        }
    }

    /// `rb_next`: the class after `cur` in slot `s`.
    fn id_next(&self, s: usize, cur: Option<u32>) -> Option<u32> {
        let cur = cur?;
        let list = &self.slots[s].list;
        let pos = list.iter().position(|&c| c == cur)?;
        list.get(pos + 1).copied()
    }

    /// `htb_next_rb_node` on a slot's pointer.
    fn advance(&mut self, s: usize) {
        let next = self.id_next(s, self.slots[s].ptr);
        self.slots[s].ptr = next;
    }

    /// `htb_id_find_next_upper`: the first class with id >= `id`.
    fn id_find_next_upper(&self, s: usize, id: u32) -> Option<u32> {
        self.slots[s].list.iter().copied().find(|&c| self.cid(c) >= id)
    }

    // -----------------------------------------------------------------------------------------
    // Activation (htb_activate_prios & co.)

    /// `htb_add_class_to_row`.
    fn add_class_to_row(&mut self, cl: usize, mask: u8) {
        let level = self.classes[cl].level;
        self.row_mask[level] |= mask;
        let mut m = mask;
        while m != 0 {
            let prio = m.trailing_zeros() as usize;
            m &= !(1 << prio);
            self.id_insert(Self::row_slot(level, prio), cl);
        }
    }

    /// `htb_remove_class_from_row`.
    fn remove_class_from_row(&mut self, cl: usize, mask: u8) {
        let level = self.classes[cl].level;
        let mut emptied = 0u8;
        let mut m = mask;
        while m != 0 {
            let prio = m.trailing_zeros() as usize;
            m &= !(1 << prio);
            let s = Self::row_slot(level, prio);
            if self.slots[s].ptr == Some(cl as u32) {
                self.advance(s);
            }
            self.id_remove(s, cl);
            if self.slots[s].list.is_empty() {
                emptied |= 1 << prio;
            }
        }
        self.row_mask[level] &= !emptied;
    }

    /// `htb_activate_prios`: link `cl` (in its new mode) into its parent's feeds while it is
    /// yellow, and the first green class of the chain into its row.
    fn activate_prios(&mut self, cl: usize) {
        let mut cl = cl;
        let mut mask = self.classes[cl].prio_activity;
        while self.classes[cl].mode == Mode::MayBorrow && mask != 0 {
            let Some(p) = self.classes[cl].parent else { break };
            let mut m = mask;
            while m != 0 {
                let prio = m.trailing_zeros() as usize;
                m &= !(1 << prio);
                let s = Self::feed_slot(p, prio);
                if !self.slots[s].list.is_empty() {
                    // The parent is already linked for this prio.
                    mask &= !(1 << prio);
                }
                self.id_insert(s, cl);
            }
            self.classes[p].prio_activity |= mask;
            cl = p;
        }
        if self.classes[cl].mode == Mode::CanSend && mask != 0 {
            self.add_class_to_row(cl, mask);
        }
    }

    /// `htb_deactivate_prios` (`cl.mode` must still be the old mode).
    fn deactivate_prios(&mut self, cl: usize) {
        let mut cl = cl;
        let mut mask = self.classes[cl].prio_activity;
        while self.classes[cl].mode == Mode::MayBorrow && mask != 0 {
            let Some(p) = self.classes[cl].parent else { break };
            let m0 = mask;
            mask = 0;
            let mut m = m0;
            while m != 0 {
                let prio = m.trailing_zeros() as usize;
                m &= !(1 << prio);
                let s = Self::feed_slot(p, prio);
                if self.slots[s].ptr == Some(cl as u32) {
                    // Forget the pointer but remember the class id to resume from.
                    self.slots[s].last_ptr_id = self.classes[cl].classid.0;
                    self.slots[s].ptr = None;
                }
                self.id_remove(s, cl);
                if self.slots[s].list.is_empty() {
                    mask |= 1 << prio;
                }
            }
            self.classes[p].prio_activity &= !mask;
            cl = p;
        }
        if self.classes[cl].mode == Mode::CanSend && mask != 0 {
            self.remove_class_from_row(cl, mask);
        }
    }

    /// `htb_activate`: a leaf got backlog.
    fn activate(&mut self, cl: usize) {
        if self.classes[cl].prio_activity == 0 {
            self.classes[cl].prio_activity = 1 << self.classes[cl].prio;
            self.activate_prios(cl);
        }
    }

    /// `htb_deactivate`: a leaf's queue became empty.
    fn deactivate(&mut self, cl: usize) {
        if self.classes[cl].prio_activity == 0 {
            return;
        }
        self.deactivate_prios(cl);
        let c = &mut self.classes[cl];
        c.prio_activity = 0;
        c.turn_open = 0; // a leaf that comes back with new packets starts a new turn (whtb gate)
    }

    /// `htb_class_mode` without hysteresis: the mode at `t_c + diff`, and the time until it can
    /// change if it is not green.
    fn class_mode(&self, cl: usize, diff: i64) -> (Mode, i64) {
        let c = &self.classes[cl];
        let toks = c.ctokens + diff;
        if toks < 0 {
            return (Mode::CantSend, -toks);
        }
        let toks = c.tokens + diff;
        if toks >= 0 {
            return (Mode::CanSend, diff);
        }
        (Mode::MayBorrow, -toks)
    }

    /// `htb_change_class_mode`: returns the wait time computed by `htb_class_mode`.
    fn change_class_mode(&mut self, cl: usize, diff: i64) -> i64 {
        let (new_mode, wait) = self.class_mode(cl, diff);
        let old = self.classes[cl].mode;
        if new_mode == old {
            return wait;
        }
        if new_mode == Mode::CantSend {
            self.classes[cl].overlimits += 1;
            self.stats.overlimits += 1;
        }
        if self.classes[cl].prio_activity != 0 {
            if old != Mode::CantSend {
                self.deactivate_prios(cl);
            }
            self.classes[cl].mode = new_mode;
            if new_mode != Mode::CantSend {
                self.activate_prios(cl);
            }
        } else {
            self.classes[cl].mode = new_mode;
        }
        wait
    }

    /// `htb_add_to_wait_tree`.
    fn add_to_wait_tree(&mut self, cl: usize, delay: i64) {
        let level = self.classes[cl].level;
        let mut key = self.now + delay;
        if key == self.now {
            key += 1;
        }
        self.classes[cl].pq_key = key;
        if self.near_ev_cache[level] > key {
            self.near_ev_cache[level] = key;
        }
        let classes = &self.classes;
        let pq = &mut self.wait_pq[level];
        // Equal keys go after the ones already there (rb insert goes right on >=).
        let pos = pq.partition_point(|&c| classes[c as usize].pq_key <= key);
        pq.insert(pos, cl as u32);
    }

    fn remove_from_wait_tree(&mut self, cl: usize) {
        let level = self.classes[cl].level;
        let pq = &mut self.wait_pq[level];
        if let Some(pos) = pq.iter().position(|&c| c == cl as u32) {
            pq.remove(pos);
        } else {
            debug_assert!(false, "class not in the wait queue");
        }
    }

    /// `htb_do_events`: apply the mode changes due at this level; the next event time, or 0.
    fn do_events(&mut self, level: usize) -> i64 {
        loop {
            let Some(&first) = self.wait_pq[level].first() else { return 0 };
            let cl = first as usize;
            if self.classes[cl].pq_key > self.now {
                return self.classes[cl].pq_key;
            }
            self.wait_pq[level].remove(0);
            let diff = (self.now - self.classes[cl].t_c).min(MBUFFER);
            let wait = self.change_class_mode(cl, diff);
            if self.classes[cl].mode != Mode::CanSend {
                self.add_to_wait_tree(cl, wait);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Dequeue

    /// `htb_lookup_leaf`: follow the DRR pointers from a row down to a leaf.
    fn lookup_leaf(&mut self, row: usize, prio: usize) -> Option<usize> {
        let mut stack = [0usize; MAXDEPTH];
        let mut sp = 0usize;
        stack[0] = row;
        if self.slots[row].list.is_empty() {
            return None;
        }
        for _ in 0..65535 {
            let s = stack[sp];
            if self.slots[s].ptr.is_none() && self.slots[s].last_ptr_id != 0 {
                // The pointer was invalidated but the id is valid: recover it or the next one.
                let id = self.slots[s].last_ptr_id;
                self.slots[s].ptr = self.id_find_next_upper(s, id);
            }
            self.slots[s].last_ptr_id = 0;
            match self.slots[s].ptr {
                None => {
                    // At the right end: rewind, and advance the pointer one level up.
                    self.slots[s].ptr = self.slots[s].list.first().copied();
                    self.slots[s].ptr?; // an empty feed under a linked class: cannot happen
                    if sp > 0 {
                        sp -= 1;
                        let up = stack[sp];
                        self.slots[up].ptr?;
                        self.advance(up);
                    }
                }
                Some(c) => {
                    let c = c as usize;
                    if self.classes[c].level == 0 {
                        return Some(c);
                    }
                    sp += 1;
                    if sp >= MAXDEPTH {
                        return None;
                    }
                    stack[sp] = Self::feed_slot(c, prio);
                }
            }
        }
        None
    }

    /// The pointer a leaf served at `level` advances (`htb_next_rb_node` in `htb_dequeue_tree`).
    fn advance_leaf_ptr(&mut self, cl: usize, level: usize, prio: usize) {
        let s = if level > 0 {
            match self.classes[cl].parent {
                Some(p) => Self::feed_slot(p, prio),
                None => return,
            }
        } else {
            Self::row_slot(0, prio)
        };
        self.advance(s);
    }

    /// Dequeue from a leaf's child, keeping the class counters.
    fn child_dequeue(&mut self, cl: usize, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let c = &mut self.classes[cl];
        let mark = cx.mark();
        let out = c.child.as_mut().expect("a leaf has a child qdisc").dequeue(cx, now);
        c.leaf_stats.after_dequeue(out, cx, mark);
        out
    }

    /// `htb_dequeue_tree`: DRR among the leaves reachable from row[level][prio]. For whtb, a
    /// leaf the gate holds back misses its turn like a leaf that is not ready, unless every
    /// backlogged leaf of the row is held back: then the gate is lifted for this dequeue.
    fn dequeue_tree(&mut self, prio: usize, level: usize, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let row = Self::row_slot(level, prio);
        let mut start = self.lookup_leaf(row, prio);
        let mut cl = start;
        let mut gating = self.wireless.is_some_and(|w| w.gate_on());
        self.gate_skipped.clear();
        let (c, pkt) = loop {
            let c = cl?;
            if self.classes[c].leaf_stats.qlen == 0 {
                // Empty leaf still linked (its child dropped everything): unlink and skip.
                self.deactivate(c);
                if self.row_mask[level] & (1 << prio) == 0 {
                    return None;
                }
                let next = self.lookup_leaf(row, prio);
                if cl == start {
                    start = next;
                }
                cl = next;
                continue;
            }
            if gating {
                if self.gate_skipped.contains(&(c as u32)) {
                    // Back at a leaf already skipped: every backlogged leaf is gated.
                    self.unskip_gated();
                    gating = false;
                } else if self.gate_holds(c, level, cx, now) {
                    self.skip_gated(c, level, prio);
                    cl = self.lookup_leaf(row, prio);
                    continue;
                }
            }
            if let Some(p) = self.child_dequeue(c, cx, now) {
                break (c, p);
            }
            if self.classes[c].leaf_stats.qlen == 0 {
                // The child dropped its last packets at dequeue (qlen_notify): unlink and skip.
                self.deactivate(c);
                if self.row_mask[level] & (1 << prio) == 0 {
                    return None;
                }
                let next = self.lookup_leaf(row, prio);
                if cl == start {
                    start = next;
                }
                cl = next;
                continue;
            }
            // A non-work-conserving child (qdisc_warn_nonwc): try the next leaf.
            self.warned_nonwc = true;
            self.advance_leaf_ptr(c, level, prio);
            cl = self.lookup_leaf(row, prio);
            if cl == start {
                if gating && !self.gate_skipped.is_empty() {
                    // The leaves passed over were gated: serve them as if there were no gate.
                    self.unskip_gated();
                    gating = false;
                    continue;
                }
                return None;
            }
        };
        let len = cx.len(pkt);
        // whtb: the stretched length, from the channel towards this packet's destination now.
        let charged = match self.wireless {
            Some(_) => wireless::stretched(len, cx.rel_goodput(pkt), self.classes[c].quantum),
            None => len,
        };
        let class = &mut self.classes[c];
        class.gate_skips = 0;
        class.deficit[level] -= charged as i64;
        if class.deficit[level] < 0 {
            class.deficit[level] += class.quantum;
            class.turn_open &= !(1 << level);
            self.advance_leaf_ptr(c, level, prio);
        } else {
            class.turn_open |= 1 << level;
        }
        if self.classes[c].leaf_stats.qlen == 0 {
            self.deactivate(c);
        }
        self.charge_class(c, level, len, charged);
        Some(pkt)
    }

    /// `htb_charge_class`: charge a packet of `bytes` sent by leaf `cl` through `level` to the
    /// leaf and every ancestor. The buckets pay for `charged` bytes (whtb's stretched length;
    /// `bytes` for htb); the byte counters count `bytes`.
    fn charge_class(&mut self, cl: usize, level: usize, bytes: u32, charged: u32) {
        let mut next = Some(cl);
        while let Some(i) = next {
            let now = self.now;
            let c = &mut self.classes[i];
            let diff = (now - c.t_c).min(MBUFFER);
            if c.level >= level {
                if c.level == level {
                    c.lends = c.lends.wrapping_add(1);
                }
                // htb_accnt_tokens
                let mut toks = (c.tokens + diff).min(c.buffer) - c.rate.l2t(charged);
                if toks <= -MBUFFER {
                    toks = 1 - MBUFFER;
                }
                c.tokens = toks;
            } else {
                c.borrows = c.borrows.wrapping_add(1);
                c.tokens += diff; // t_c moves: bring the tokens forward
            }
            // htb_accnt_ctokens
            let mut ctoks = (c.ctokens + diff).min(c.cbuffer) - c.ceil.l2t(charged);
            if ctoks <= -MBUFFER {
                ctoks = 1 - MBUFFER;
            }
            c.ctokens = ctoks;
            c.t_c = now;
            c.charged += charged as u64;

            let old = c.mode;
            let wait = self.change_class_mode(i, 0);
            let new = self.classes[i].mode;
            if old != new {
                if old != Mode::CanSend {
                    self.remove_from_wait_tree(i);
                }
                if new != Mode::CanSend {
                    self.add_to_wait_tree(i, wait);
                }
            }
            let c = &mut self.classes[i];
            if c.level > 0 {
                c.bytes += bytes as u64;
                c.packets += 1;
            }
            next = c.parent;
        }
    }

    /// `htb_dequeue` without the peek stash and the qdisc counters.
    fn htb_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        // Direct packets first, unshaped.
        if let Some(p) = self.direct.pop_front() {
            cx.unstamp(p, now);
            self.watchdog = None;
            return Some(p);
        }
        if self.stats.qlen == 0 {
            self.watchdog = None;
            return None;
        }
        self.now = now.0 as i64;
        let mut next_event = self.now + 5 * NSEC_PER_SEC;
        for level in 0..MAXDEPTH {
            let mut event = self.near_ev_cache[level];
            if self.now >= event {
                event = self.do_events(level);
                if event == 0 {
                    event = self.now + NSEC_PER_SEC;
                }
                self.near_ev_cache[level] = event;
            }
            next_event = next_event.min(event);
            let mut m = self.row_mask[level];
            while m != 0 {
                let prio = m.trailing_zeros() as usize;
                m &= !(1 << prio);
                if let Some(p) = self.dequeue_tree(prio, level, cx, now) {
                    self.watchdog = None;
                    return Some(p);
                }
            }
        }
        // qdisc_watchdog_schedule_ns(next_event), or an immediate reschedule if it is not later.
        self.watchdog = Some(Nanos(next_event.max(self.now) as u64));
        None
    }

    /// `htb_classify`.
    fn classify(&self, pkt: PacketId, cx: &QCtx<'_>) -> Target {
        let key = cx.key(pkt);
        let ip_len = cx.pkts.get(pkt).ip_len;
        let priority = key.priority;
        if priority == self.handle.0 {
            return Target::Direct; // X:0 selected
        }
        let mut at = self.handle;
        if let Some(c) = self.find(priority) {
            if self.classes[c].level == 0 {
                return Target::Leaf(c);
            }
            at = self.classes[c].classid; // start with the inner class's filters
        }
        // Each step descends to a deeper inner class unless filters form a loop; bound it.
        for _ in 0..=self.classes.len() {
            let Some(res) = classify(&self.filters, at, key, ip_len) else { break };
            if res == self.handle {
                return Target::Direct;
            }
            let Some(c) = self.find(res.0) else { break }; // invalid class id
            if self.classes[c].level == 0 {
                return Target::Leaf(c);
            }
            at = self.classes[c].classid;
        }
        let def = (self.handle.0 & 0xFFFF_0000) | (self.defcls & 0xFFFF);
        match self.find(def) {
            Some(c) if self.classes[c].level == 0 => Target::Leaf(c),
            _ => Target::Direct,
        }
    }

    /// The class options as `tc class show` prints them (without `-d`).
    /// Each leaf class's quantum in bytes (given, or computed from r2q), as `tc -d class
    /// show` prints it, in class-id order; for comparing with the kernel.
    pub fn leaf_quanta(&self) -> Vec<(Handle, i64)> {
        let mut q: Vec<(Handle, i64)> =
            self.classes.iter().filter(|c| c.level == 0).map(|c| (c.classid, c.quantum)).collect();
        q.sort_by_key(|(h, _)| h.0);
        q
    }

    fn class_options(&self, c: &Class) -> String {
        let mut s = String::new();
        if c.level == 0 {
            let _ = write!(s, "prio {} ", c.prio);
        }
        let _ = write!(s, "rate {} ", format_rate_bytes(c.rate.bytes_ps));
        if c.rate.overhead != 0 {
            let _ = write!(s, "overhead {} ", c.rate.overhead);
        }
        let _ = write!(s, "ceil {} ", format_rate_bytes(c.ceil.bytes_ps));
        if c.rate.atm {
            s.push_str("linklayer atm ");
        }
        let _ = write!(
            s,
            "burst {} cburst {}",
            format_size(u64::from(xmitsize(c.rate.bytes_ps, c.buffer_ticks))),
            format_size(u64::from(xmitsize(c.ceil.bytes_ps, c.cbuffer_ticks)))
        );
        s
    }

    /// Is `anc` an ancestor of (or equal to) `cl`?
    fn is_under(&self, cl: usize, anc: usize) -> bool {
        let mut c = Some(cl);
        while let Some(i) = c {
            if i == anc {
                return true;
            }
            c = self.classes[i].parent;
        }
        false
    }

    /// A class's counters: a leaf's are its child's traffic; an inner class's sent counters are
    /// the kernel's, and its offered/drops/backlog are its leaves' sums (see the module notes).
    fn class_stats(&self, i: usize) -> QdiscStats {
        let c = &self.classes[i];
        if c.level == 0 {
            let mut s = c.leaf_stats;
            s.overlimits = c.overlimits;
            return s;
        }
        let mut s =
            QdiscStats { sent_bytes: c.bytes, sent_packets: c.packets, overlimits: c.overlimits, ..Default::default() };
        let mut leaf_sent = 0;
        for (j, l) in self.classes.iter().enumerate() {
            if l.level == 0 && self.is_under(j, i) {
                s.offered_packets += l.leaf_stats.offered_packets;
                s.drops += l.leaf_stats.drops;
                s.qlen += l.leaf_stats.qlen;
                s.backlog_bytes += l.leaf_stats.backlog_bytes;
                leaf_sent += l.leaf_stats.sent_packets;
            }
        }
        // Leaves that were inner-converted never sent; the charged count equals the leaves' sum.
        debug_assert_eq!(leaf_sent, c.packets);
        s
    }
}

/// `qdisc_peek_dequeued`: HTB dequeues (and charges) the packet and keeps it for the next
/// dequeue.
impl StashPeek for Htb {
    /// Leaves' children stamp; HTB unstamps only its direct queue, in `htb_dequeue`.
    const LEAF: bool = false;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.htb_dequeue(cx, now)
    }
}

impl Qdisc for Htb {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = match self.classify(pkt, cx) {
            Target::Direct => {
                if self.direct.len() < self.direct_qlen as usize {
                    cx.stamp(pkt, now);
                    self.direct.push_back(pkt);
                    self.direct_pkts = self.direct_pkts.wrapping_add(1);
                    Enq::Queued
                } else {
                    cx.drop(pkt);
                    Enq::Dropped
                }
            }
            Target::Leaf(i) => {
                let c = &mut self.classes[i];
                let cmark = cx.mark();
                let r = c.child.as_mut().expect("a leaf has a child qdisc").enqueue(pkt, cx, now);
                c.leaf_stats.after_enqueue(pkt, r, cx, cmark);
                if r != Enq::Dropped && c.leaf_stats.qlen > 0 {
                    self.activate(i);
                }
                r
            }
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.peek_stashed(cx, now)
    }

    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.stats.qlen == 0 {
            return None;
        }
        if self.stash.is_some() || !self.direct.is_empty() {
            return Some(now);
        }
        // HTB's own watchdog, or a shaping child's (its watchdog reschedules the root).
        let mut w = self.watchdog;
        for c in &self.classes {
            if c.leaf_stats.qlen > 0 {
                if let Some(t) = c.child.as_ref().and_then(|q| q.next_wakeup(now)) {
                    w = Some(w.map_or(t, |x| x.min(t)));
                }
            }
        }
        Some(w.unwrap_or(now))
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        if let Some(p) = self.stash {
            f(p);
        }
        self.direct.iter().for_each(|&p| f(p));
        for c in &self.classes {
            if let Some(q) = &c.child {
                q.for_each_queued(f);
            }
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_by_key(|&i| self.classes[i].classid.0);
        let mut classes = Vec::with_capacity(order.len());
        let mut children = Vec::new();
        for &i in &order {
            let c = &self.classes[i];
            let leaf = c.child.as_ref().map(|q| {
                let at = children.len();
                q.report(c.classid, &mut children);
                children[at].handle
            });
            let tokens = ns_to_ticks_i32(c.tokens);
            let ctokens = ns_to_ticks_i32(c.ctokens);
            let mut xstats: Vec<(String, i64)> = vec![
                ("lended".into(), c.lends as i64),
                ("borrowed".into(), c.borrows as i64),
                ("giants".into(), 0),
                ("tokens".into(), tokens as i64),
                ("ctokens".into(), ctokens as i64),
            ];
            let mut xstats_text =
                format!(" lended: {} borrowed: {} giants: 0\n tokens: {tokens} ctokens: {ctokens}", c.lends, c.borrows);
            if self.wireless.is_some() {
                xstats.push(("charged_bytes".into(), c.charged as i64));
                xstats.push(("gated".into(), c.gated as i64));
                xstats.push(("forced".into(), c.forced as i64));
                let _ = write!(xstats_text, "\n charged: {} bytes gated: {} forced: {}", c.charged, c.gated, c.forced);
            }
            classes.push(ClassReport {
                kind: self.kind(),
                classid: c.classid,
                parent: c.parent.map_or(Handle::ROOT, |p| self.classes[p].classid),
                leaf,
                options: self.class_options(c),
                stats: self.class_stats(i),
                xstats,
                xstats_text,
            });
        }
        let default = if self.defcls == 0 { "0".to_string() } else { format!("{:#x}", self.defcls) };
        out.push(QdiscReport {
            kind: self.kind(),
            handle: self.handle,
            parent,
            options: format!(
                "r2q {} default {default} direct_packets_stat {} direct_qlen {}{}",
                self.r2q,
                self.direct_pkts,
                self.direct_qlen,
                self.wireless.map(|w| w.options_text()).unwrap_or_default()
            ),
            stats: self.stats,
            xstats: vec![("direct_packets_stat".into(), self.direct_pkts as i64)],
            xstats_text: String::new(),
            classes,
        });
        out.extend(children);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
    use crate::qdisc::testutil::{
        build, class as class_decl, errors, expect_built, handle, qdisc, run_link, Bench, LinkRun, Source,
    };
    use crate::qdisc::{Fifo, FifoKind, Graft};

    const MBIT: u64 = 1_000_000;

    // --- building from tc-like text ----------------------------------------------------------

    /// Column of the first option token of class `i` (line 2 + i) as `class_decl` lays it out:
    /// `tc class add dev eth0 parent P classid C htb OPTS`.
    fn class_opt_col(parent: &str, classid: &str) -> u32 {
        format!("tc class add dev eth0 parent {parent} classid {classid} htb ").len() as u32 + 1
    }

    /// Column of the qdisc options on line 1: `tc qdisc add dev eth0 root handle 1: htb OPTS`.
    const QOPT_COL: u32 = "tc qdisc add dev eth0 root handle 1: htb ".len() as u32 + 1;

    pub(super) type ClassLine = (&'static str, &'static str, &'static str);

    fn build_htb(
        qopts: &str,
        classes: &[ClassLine],
        filters: Vec<Filter>,
        grafts: Vec<(&'static str, QdiscImpl)>,
    ) -> (Option<QdiscImpl>, Vec<TcDiag>) {
        let mut d = qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: htb {qopts}"));
        d.classes = classes
            .iter()
            .enumerate()
            .map(|(i, &(p, c, o))| {
                class_decl(2 + i as u32, &format!("tc class add dev eth0 parent {p} classid {c} htb {o}"))
            })
            .collect();
        d.grafts = grafts
            .into_iter()
            .enumerate()
            .map(|(i, (c, q))| Graft {
                at: Tok { text: c, line: 50 + i as u32, col: 30 },
                classid: handle(c),
                qdisc: q,
            })
            .collect();
        d.filters = filters;
        build(d)
    }

    fn ok(r: (Option<QdiscImpl>, Vec<TcDiag>)) -> QdiscImpl {
        expect_built(r, "htb")
    }

    pub(super) fn htb(q: &QdiscImpl) -> &Htb {
        match q {
            QdiscImpl::Htb(h) => h,
            _ => panic!("not htb"),
        }
    }

    pub(super) fn class<'a>(q: &'a QdiscImpl, id: &str) -> &'a Class {
        let h = htb(q);
        &h.classes[h.find(handle(id).0).expect("class exists")]
    }

    /// u32 `match ip dst 192.168.1.(2+flow)/32` (the bench's destination of `flow`).
    pub(super) fn dst(parent: &str, flow: u32, to: &str) -> Filter {
        Filter {
            parent: handle(parent),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys: vec![U32Key { off: 16, mask: 0xffff_ffff, val: 0xc0a8_0102 + flow }] },
            classid: handle(to),
            line: 40 + flow,
        }
    }

    fn matchall(parent: &str, to: &str) -> Filter {
        Filter {
            parent: handle(parent),
            prio: 100,
            protocol: ETH_P_IP,
            kind: FilterKind::MatchAll,
            classid: handle(to),
            line: 49,
        }
    }

    /// A saturating CBR source of 1514-byte frames.
    fn sat(flow: u32, bps: u64) -> Source {
        Source { flow, rate_bps: bps, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(1000) }
    }

    pub(super) fn within(got: f64, want: f64, tol: f64, what: &str) {
        if std::env::var_os("HTB_SHOW").is_some() {
            eprintln!("{what}: got {got:.0} want {want:.0} ({:+.3}%)", (got - want) / want * 100.0);
        }
        let err = (got - want).abs() / want;
        assert!(err <= tol, "{what}: got {got:.0}, want {want:.0} (error {:.2}% > {:.1}%)", err * 100.0, tol * 100.0);
    }

    /// The identity at the qdisc, every class and every child qdisc, plus the tree sums.
    pub(super) fn assert_identities(q: &QdiscImpl) {
        let reps = q.reports();
        let top = &reps[0];
        assert!(matches!(top.kind, "htb" | "whtb"), "{}", top.kind);
        assert!(top.stats.identity_holds(), "qdisc: {:?}", top.stats);
        for c in &top.classes {
            assert!(c.stats.identity_holds(), "class {}: {:?}", c.classid, c.stats);
        }
        for r in &reps[1..] {
            assert!(r.stats.identity_holds(), "child of {}: {:?}", r.parent, r.stats);
        }
        let h = htb(q);
        let mut held = 0;
        q.for_each_queued(&mut |_| held += 1);
        assert_eq!(held, top.stats.qlen, "for_each_queued sees every queued packet");
        // The qdisc's drops/queue are the direct queue's plus the leaves'.
        let leaves: Vec<_> = top.classes.iter().filter(|c| c.leaf.is_some()).collect();
        let leaf_drops: u64 = leaves.iter().map(|c| c.stats.drops).sum();
        let leaf_qlen: u64 = leaves.iter().map(|c| c.stats.qlen).sum();
        let leaf_sent: u64 = leaves.iter().map(|c| c.stats.sent_packets).sum();
        let stash = h.stash.is_some() as u64;
        assert_eq!(top.stats.qlen, leaf_qlen + h.direct.len() as u64 + stash);
        assert!(top.stats.drops >= leaf_drops);
        assert!(top.stats.sent_packets + stash >= leaf_sent);
        // Every inner class's sent count is its leaves' sum.
        for c in top.classes.iter().filter(|c| c.leaf.is_none()) {
            let i = h.find(c.classid.0).unwrap();
            let sum: u64 = top
                .classes
                .iter()
                .filter(|l| l.leaf.is_some() && h.is_under(h.find(l.classid.0).unwrap(), i))
                .map(|l| l.stats.sent_packets)
                .sum();
            assert_eq!(c.stats.sent_packets, sum, "inner class {} sent", c.classid);
        }
        // Qdisc overlimits are the classes' red transitions.
        let red: u64 = top.classes.iter().map(|c| c.stats.overlimits).sum();
        assert_eq!(top.stats.overlimits, red);
    }

    fn run(q: &mut QdiscImpl, flows: usize, sources: &[Source], link: u64, secs: u64, from: u64) -> (LinkRun, Bench) {
        let mut b = Bench::new(flows);
        let r = run_link(q, &mut b, sources, link, Nanos::from_secs(secs), Nanos::from_secs(from));
        (r, b)
    }

    // --- rates --------------------------------------------------------------------------------

    #[test]
    fn rate_guarantee_saturated_leaf_gets_its_rate() {
        let mut q = ok(build_htb(
            "default 10",
            &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 2mbit ceil 2mbit")],
            vec![],
            vec![],
        ));
        let (r, _) = run(&mut q, 1, &[sat(0, 5 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 2e6, 0.02, "leaf at rate 2mbit ceil 2mbit");
        assert_identities(&q);
    }

    #[test]
    fn ceil_caps_a_lone_borrowing_leaf() {
        let mut q = ok(build_htb(
            "default 10",
            &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 1mbit ceil 3mbit")],
            vec![],
            vec![],
        ));
        let (r, _) = run(&mut q, 1, &[sat(0, 8 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 3e6, 0.02, "leaf at rate 1mbit ceil 3mbit alone");
        let leaf = class(&q, "1:10");
        assert!(leaf.borrows > 0, "it exceeds its rate by borrowing from 1:1");
        assert!(leaf.overlimits > 0, "hitting ceil turns it red");
        assert_identities(&q);
    }

    #[test]
    fn excess_goes_to_the_lower_prio_first_up_to_its_ceil() {
        let filters = || vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")];
        // Parent 6mbit; both leaves rate 1mbit; prio 0 may take all the excess (ceil 6mbit).
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 6mbit"),
                ("1:1", "1:10", "rate 1mbit ceil 6mbit prio 0"),
                ("1:1", "1:20", "rate 1mbit ceil 6mbit prio 1"),
            ],
            filters(),
            vec![],
        ));
        let (r, _) = run(&mut q, 2, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 5e6, 0.02, "prio 0: rate + all 4 Mbit/s of excess");
        within(r.rate_bps(1, 3.0), 1e6, 0.03, "prio 1: its rate, no excess");
        assert_identities(&q);

        // Same, but prio 0 is capped at 3mbit: prio 1 gets the rest of the excess.
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 6mbit"),
                ("1:1", "1:10", "rate 1mbit ceil 3mbit prio 0"),
                ("1:1", "1:20", "rate 1mbit ceil 6mbit prio 1"),
            ],
            filters(),
            vec![],
        ));
        let (r, _) = run(&mut q, 2, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 3e6, 0.02, "prio 0 at its ceil");
        within(r.rate_bps(1, 3.0), 3e6, 0.03, "prio 1: rate + the excess prio 0 cannot take");
        assert_identities(&q);
    }

    #[test]
    fn equal_prio_share_excess_by_quantum() {
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 10mbit"),
                ("1:1", "1:10", "rate 1mbit ceil 10mbit quantum 1514"),
                ("1:1", "1:20", "rate 1mbit ceil 10mbit quantum 4542"),
            ],
            vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
            vec![],
        ));
        let (r, _) = run(&mut q, 2, &[sat(0, 20 * MBIT), sat(1, 20 * MBIT)], 100 * MBIT, 4, 1);
        let (a, b) = (r.rate_bps(0, 3.0), r.rate_bps(1, 3.0));
        within(a + b, 10e6, 0.02, "the parent's rate is used up");
        // Excess over the 1 Mbit/s guarantees splits 1:3 (2 and 6 Mbit/s).
        within((b - 1e6) / (a - 1e6), 3.0, 0.05, "excess ratio");
        within(a, 3e6, 0.05, "1:10 = 1 + 8/4");
        assert_identities(&q);
    }

    #[test]
    fn drr_sends_first_then_checks_the_deficit() {
        // Two green leaves at level 0, quanta 1514 and 3028, 1514-byte packets: the kernel's
        // pattern is A B A B B A B B (B's first turn starts with a zero deficit).
        let mut q = ok(build_htb(
            "",
            &[("1:", "1:10", "rate 100mbit quantum 1514"), ("1:", "1:20", "rate 100mbit quantum 3028")],
            vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
            vec![],
        ));
        let mut b = Bench::new(2);
        for _ in 0..6 {
            for f in 0..2 {
                let p = b.pkt(f, 1500);
                assert_eq!(q.enqueue(p, &mut b.cx(), Nanos::ZERO), Enq::Queued);
            }
        }
        let mut order = vec![];
        for k in 0..9 {
            let p = q.dequeue(&mut b.cx(), Nanos::from_ms(2 * k)).expect("both classes stay green");
            order.push(b.pkts.get(p).flow);
        }
        assert_eq!(order, vec![0, 1, 0, 1, 1, 0, 1, 1, 0]);
        assert_eq!(class(&q, "1:10").lends + class(&q, "1:20").lends, 9, "all sent at level 0");
    }

    #[test]
    fn valenzuela_two_stations_each_get_their_htb_rate() {
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 10mbit"),
                ("1:1", "1:10", "rate 900kbit ceil 900kbit"),
                ("1:1", "1:20", "rate 2400kbit ceil 2400kbit"),
            ],
            vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
            vec![],
        ));
        let (r, _) = run(&mut q, 2, &[sat(0, 3 * MBIT), sat(1, 3 * MBIT)], 11 * MBIT, 5, 1);
        within(r.rate_bps(0, 4.0), 900e3, 0.03, "station limited to 900kbit");
        within(r.rate_bps(1, 4.0), 2400e3, 0.03, "station limited to 2400kbit");
        assert_identities(&q);
    }

    #[test]
    fn three_level_tree_shares_as_devera_describes() {
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 10mbit"),
                ("1:1", "1:2", "rate 6mbit ceil 10mbit"),
                ("1:2", "1:21", "rate 2mbit ceil 10mbit"),
                ("1:2", "1:22", "rate 2mbit ceil 10mbit"),
                ("1:1", "1:3", "rate 4mbit ceil 10mbit"),
            ],
            vec![dst("1:", 0, "1:21"), dst("1:", 1, "1:22"), dst("1:", 2, "1:3")],
            vec![],
        ));
        assert_eq!(class(&q, "1:1").level, 7);
        assert_eq!(class(&q, "1:2").level, 6);
        for leaf in ["1:21", "1:22", "1:3"] {
            assert_eq!(class(&q, leaf).level, 0);
        }
        let (r, _) = run(&mut q, 3, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT), sat(2, 10 * MBIT)], 100 * MBIT, 4, 1);
        // 1:2 lends its 2 spare Mbit/s to its two leaves; 1:3 keeps its 4.
        within(r.rate_bps(0, 3.0), 3e6, 0.03, "1:21");
        within(r.rate_bps(1, 3.0), 3e6, 0.03, "1:22");
        within(r.rate_bps(2, 3.0), 4e6, 0.03, "1:3");
        assert!(class(&q, "1:2").lends > 0 && class(&q, "1:21").borrows > 0);
        assert_identities(&q);
    }

    #[test]
    fn drr_at_the_root_rotates_across_inner_classes() {
        // Both leaves borrow most of what they send from 1:1 (level 7), through the feeds of
        // two inner classes. Rotation at 1:1 depends on a wrapped lower feed advancing the
        // pointer above it (htb_lookup_leaf): they share the 8 Mbit/s excess equally.
        let mut q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 10mbit"),
                ("1:1", "1:2", "rate 1mbit ceil 10mbit"),
                ("1:1", "1:3", "rate 1mbit ceil 10mbit"),
                ("1:2", "1:21", "rate 500kbit ceil 10mbit quantum 1514"),
                ("1:3", "1:31", "rate 500kbit ceil 10mbit quantum 1514"),
            ],
            vec![dst("1:", 0, "1:21"), dst("1:", 1, "1:31")],
            vec![],
        ));
        let (r, _) = run(&mut q, 2, &[sat(0, 20 * MBIT), sat(1, 20 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 5e6, 0.02, "1:21");
        within(r.rate_bps(1, 3.0), 5e6, 0.02, "1:31");
        assert!(class(&q, "1:1").lends > class(&q, "1:2").lends, "most is lent by the root");
        assert_identities(&q);
    }

    #[test]
    fn burst_after_idle_is_sent_at_ceil() {
        // A root-level leaf cannot borrow: after idle it sends its 30k burst at ceil (4 Mbit/s),
        // then its rate (1 Mbit/s). While tokens last, each 1514 B costs 12.112 ms of tokens and
        // 3.028 ms pass: the burst covers 30720 * 4/3 = 40960 bytes sent at ceil.
        let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 1mbit ceil 4mbit burst 30k")], vec![], vec![]));
        let mut src = sat(0, 8 * MBIT);
        src.start = Nanos::from_secs(1);
        let (r, _) = run(&mut q, 1, &[src], 100 * MBIT, 4, 2);
        let d = &r.departures;
        let gaps: Vec<u64> = d.windows(2).map(|w| (w[1].0 - w[0].0).0).collect();
        // Packets sent before the first gap longer than the ceil spacing: the burst.
        let burst_pkts = 1 + gaps.iter().take_while(|&&g| g < 4_000_000).count() as u64;
        let burst_bytes = burst_pkts * 1514;
        assert!(burst_bytes.abs_diff(40_960) <= 1514, "burst sent at ceil: {burst_bytes} bytes ({burst_pkts} packets)");
        // The source offers a frame every 1.514 ms and the 1600-byte ceil bucket absorbs the
        // first; from the fourth frame on they leave exactly every 3.028 ms (ceil), then every
        // 12.112 ms (rate).
        assert_eq!(&gaps[..3], &[1_514_000, 1_514_000, 2_856_000]);
        let at_ceil = &gaps[3..burst_pkts as usize - 1];
        assert!(at_ceil.len() >= 20 && at_ceil.iter().all(|&g| g == 3_028_000), "{at_ceil:?}");
        assert!(gaps[burst_pkts as usize..burst_pkts as usize + 20].iter().all(|&g| g == 12_112_000));
        within(r.rate_bps(0, 2.0), 1e6, 0.02, "after the burst: the rate");
        // Sent in the first second of activity: rate * 1 s + burst, within two packets.
        let first_s: u64 = d.iter().filter(|x| x.0 < Nanos::from_secs(2)).map(|x| x.2 as u64).sum();
        assert!((first_s as i64 - (125_000 + 30_720)).abs() <= 2 * 1514, "first second: {first_s} bytes");
    }

    // --- classification -----------------------------------------------------------------------

    fn queued_in(q: &QdiscImpl, id: &str) -> u64 {
        class(q, id).leaf_stats.qlen
    }

    #[test]
    fn default_class_takes_unclassified_traffic() {
        let classes: &[ClassLine] = &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:10", "rate 1mbit ceil 1mbit"),
            ("1:1", "1:20", "rate 2mbit ceil 2mbit"),
        ];
        let mut q = ok(build_htb("default 20", classes, vec![dst("1:", 0, "1:10")], vec![]));
        let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 5 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 1e6, 0.02, "filtered to 1:10");
        within(r.rate_bps(1, 3.0), 2e6, 0.02, "unclassified to default 1:20 (minor read as hex)");
        assert_eq!(htb(&q).direct_pkts, 0);
        assert!(q.reports()[0].options.starts_with("r2q 10 default 0x20 direct_packets_stat 0"));
        assert_identities(&q);

        // A default that is not a leaf (missing, or the inner 1:1) means the direct queue.
        for def in ["default 30", "default 1"] {
            let mut q = ok(build_htb(def, classes, vec![dst("1:", 0, "1:10")], vec![]));
            let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 5 * MBIT)], 100 * MBIT, 4, 1);
            within(r.rate_bps(1, 3.0), 5e6, 0.02, "direct traffic is not shaped");
            assert_eq!(htb(&q).direct_pkts as u64, r.departures.iter().filter(|d| d.1 == 1).count() as u64);
            assert_identities(&q);
        }
    }

    #[test]
    fn unclassified_without_default_goes_to_the_direct_queue_first_and_unshaped() {
        let mut q = ok(build_htb("", &[("1:", "1:10", "rate 1mbit")], vec![dst("1:", 0, "1:10")], vec![]));
        let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 3 * MBIT)], 10 * MBIT, 4, 1);
        within(r.rate_bps(0, 3.0), 1e6, 0.02, "shaped class");
        within(r.rate_bps(1, 3.0), 3e6, 0.01, "unclassified: all it offers");
        let sent_direct = r.departures.iter().filter(|d| d.1 == 1).count() as u32;
        assert_eq!(htb(&q).direct_pkts, sent_direct, "direct_packets_stat");
        assert_identities(&q);

        // Served before a green class, and limited by direct_qlen.
        let mut q =
            ok(build_htb("direct_qlen 3", &[("1:", "1:10", "rate 100mbit")], vec![dst("1:", 0, "1:10")], vec![]));
        let mut b = Bench::new(2);
        let shaped = b.pkt(0, 1500);
        assert_eq!(q.enqueue(shaped, &mut b.cx(), Nanos::ZERO), Enq::Queued);
        let res: Vec<Enq> = (0..5)
            .map(|_| {
                let p = b.pkt(1, 1500);
                q.enqueue(p, &mut b.cx(), Nanos::ZERO)
            })
            .collect();
        assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Queued, Enq::Dropped, Enq::Dropped]);
        let flows: Vec<u32> = (0..4)
            .map(|_| {
                let p = q.dequeue(&mut b.cx(), Nanos::ZERO).unwrap();
                b.pkts.get(p).flow
            })
            .collect();
        assert_eq!(flows, vec![1, 1, 1, 0], "direct queue first");
        let s = q.stats();
        assert_eq!((s.offered_packets, s.sent_packets, s.drops, s.qlen), (6, 4, 2, 0));
        assert_eq!(htb(&q).direct_pkts, 3);
        assert!(q.reports()[0].options.ends_with("direct_packets_stat 3 direct_qlen 3"));
    }

    #[test]
    fn skb_priority_selects_a_class_directly() {
        let classes: &[ClassLine] = &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:10", "rate 1mbit"),
            ("1:1", "1:20", "rate 1mbit"),
            ("1:1", "1:30", "rate 1mbit"),
        ];
        let mut q = ok(build_htb("", classes, vec![matchall("1:", "1:10"), matchall("1:1", "1:30")], vec![]));
        let mut b = Bench::new(4);
        b.keys[1].priority = 0x1_0020; // leaf 1:20: bypasses the filters
        b.keys[2].priority = 0x1_0000; // the qdisc itself: direct queue
        b.keys[3].priority = 0x1_0001; // inner 1:1: its filters (matchall -> 1:30)
        for f in 0..4 {
            let p = b.pkt(f, 500);
            assert_eq!(q.enqueue(p, &mut b.cx(), Nanos::ZERO), Enq::Queued);
        }
        assert_eq!(queued_in(&q, "1:10"), 1, "priority 0: the qdisc's filters");
        assert_eq!(queued_in(&q, "1:20"), 1);
        assert_eq!(queued_in(&q, "1:30"), 1);
        assert_eq!(htb(&q).direct.len(), 1);
        assert_eq!(htb(&q).direct_pkts, 1);
    }

    #[test]
    fn filter_at_an_inner_class_descends_to_a_leaf() {
        let classes: &[ClassLine] = &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:2", "rate 5mbit"),
            ("1:2", "1:21", "rate 1mbit"),
            ("1:2", "1:22", "rate 1mbit"),
            ("1:1", "1:10", "rate 1mbit"),
        ];
        let filters = vec![
            dst("1:", 0, "1:2"), // to an inner class: continue with 1:2's filters
            dst("1:2", 0, "1:22"),
            dst("1:", 1, "1:1"),  // inner class without filters: default
            dst("1:", 2, "1:99"), // no such class: default
        ];
        let (q, diags) = build_htb("default 10", classes, filters, vec![]);
        let mut q = ok((q, diags));
        let mut b = Bench::new(3);
        for f in 0..3 {
            let p = b.pkt(f, 500);
            q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        }
        assert_eq!(queued_in(&q, "1:22"), 1);
        assert_eq!(queued_in(&q, "1:21"), 0);
        assert_eq!(queued_in(&q, "1:10"), 2);
    }

    #[test]
    fn filters_on_leaves_and_unknown_parents_are_reported() {
        let classes: &[ClassLine] = &[("1:", "1:10", "rate 1mbit")];
        let (q, d) = build_htb("", classes, vec![dst("1:10", 0, "1:10")], vec![]);
        assert!(q.is_some());
        assert!(d.iter().any(|x| x.severity == Severity::Warning && x.message.contains("never consulted")), "{d:?}");
        let (q, d) = build_htb("", classes, vec![dst("1:7", 0, "1:10")], vec![]);
        assert!(q.is_none());
        assert!(d.iter().any(|x| x.severity == Severity::Error && x.line == 40 && x.message.contains("1:7")), "{d:?}");
    }

    // --- accounting ---------------------------------------------------------------------------

    #[test]
    fn stats_identity_holds_at_every_class_and_the_qdisc() {
        let classes: &[ClassLine] = &[
            ("1:", "1:1", "rate 8mbit"),
            ("1:1", "1:10", "rate 1mbit ceil 2mbit"),
            ("1:1", "1:20", "rate 2mbit ceil 8mbit"),
            ("1:", "1:30", "rate 500kbit"),
        ];
        let small = QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, 5, Handle::new(0x10, 0), Handle::new(1, 0x10)));
        let mut q = ok(build_htb(
            "default 20 direct_qlen 2",
            classes,
            vec![dst("1:", 0, "1:10"), dst("1:", 3, "1:30")],
            vec![("1:10", small)],
        ));
        let mut b = Bench::new(4);
        b.keys[2].priority = 0x1_0000; // direct
                                       // The direct flow overloads the link for 200 ms (direct_qlen 2 drops), the pfifo of 5 on
                                       // 1:10 overflows; queues still hold packets when the run stops.
        let mut direct = sat(2, 12 * MBIT);
        direct.stop = Nanos::from_ms(200);
        let sources = [sat(0, 5 * MBIT), sat(1, 9 * MBIT), direct, sat(3, MBIT)];
        let r = run_link(&mut q, &mut b, &sources, 10 * MBIT, Nanos::from_ms(700), Nanos::ZERO);
        assert!(r.drops[0] > 0 && r.drops[2] > 0, "drops: {:?}", r.drops);
        assert!(q.stats().qlen > 0);
        assert_eq!(q.stats().drops, r.drops.iter().sum::<u64>());
        assert_identities(&q);
        // Drain it.
        let mut t = Nanos::from_ms(700);
        while q.stats().qlen > 0 {
            if let Some(p) = q.dequeue(&mut b.cx(), t) {
                b.pkts.free(p);
            }
            t += Nanos::from_us(500);
            assert!(t < Nanos::from_secs(60));
        }
        assert_identities(&q);
        let reps = q.reports();
        assert_eq!(reps.len(), 1 + 3, "htb and the three leaves' children");
        assert_eq!(reps[1].parent, handle("1:10"));
        assert_eq!(reps[1].handle, Handle::new(0x10, 0));
        assert_eq!(
            reps[0].classes.iter().find(|c| c.classid == handle("1:10")).unwrap().leaf,
            Some(Handle::new(0x10, 0))
        );
        assert_eq!(reps[0].classes[0].parent, Handle::ROOT, "1:1 is a root class");
        assert!(q.stats().drops > 0 && q.stats().overlimits > 0);
    }

    #[test]
    fn tokens_and_options_are_reported_as_tc_prints_them() {
        // §14.5: rate 4mbit, default burst 1600 B -> 50 000 ticks = 3.2 ms.
        let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 4mbit")], vec![], vec![]));
        assert_eq!(class(&q, "1:10").buffer, 3_200_000);
        let rep = q.reports();
        let c = &rep[0].classes[0];
        assert_eq!(c.options, "prio 0 rate 4Mbit ceil 4Mbit burst 1600b cburst 1600b");
        assert_eq!(c.xstats_text, " lended: 0 borrowed: 0 giants: 0\n tokens: 50000 ctokens: 50000");
        assert_eq!(rep[0].options, "r2q 10 default 0x10 direct_packets_stat 0 direct_qlen 1000");
        // One 1514-byte frame at t = 0: 3 028 000 ns of tokens (§14.2); 172 000 ns left = 2687 ticks.
        let mut b = Bench::new(1);
        let p = b.pkt(0, 1500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), Some(p));
        assert_eq!(class(&q, "1:10").tokens, 172_000);
        let c = &q.reports()[0].classes[0];
        assert_eq!(c.xstats_text, " lended: 1 borrowed: 0 giants: 0\n tokens: 2687 ctokens: 2687");
        assert!(c.xstats.contains(&("tokens".to_string(), 2687)));

        // Printing of other rates and sizes.
        let q = ok(build_htb(
            "",
            &[
                ("1:", "1:1", "rate 1500kbit ceil 2400kbit burst 15k cburst 1mb"),
                ("1:1", "1:10", "rate 900kbit prio 3 overhead 24"),
            ],
            vec![],
            vec![],
        ));
        let rep = q.reports();
        assert_eq!(rep[0].classes[0].options, "rate 1500Kbit ceil 2400Kbit burst 15Kb cburst 1Mb");
        assert_eq!(rep[0].classes[1].options, "prio 3 rate 900Kbit overhead 24 ceil 900Kbit burst 1600b cburst 1600b");
        assert_eq!(rep[0].options, "r2q 10 default 0 direct_packets_stat 0 direct_qlen 1000");
    }

    #[test]
    fn charge_class_borrowing_matches_the_worked_example() {
        // §14.6: leaf L (rate 1mbit ceil 4mbit) under root R (rate = ceil = 4mbit). Sending a
        // 1514-byte frame every 4 ms (3 Mbit/s) makes L yellow while R stays green; a packet
        // served through R: L.borrows++, L.tokens only advanced, L.ctokens -= l2t(4mbit);
        // R.lends++, R.tokens and R.ctokens -= l2t(4mbit) = 3 028 000 ns.
        let mut q = ok(build_htb(
            "default 10",
            &[("1:", "1:1", "rate 4mbit"), ("1:1", "1:10", "rate 1mbit ceil 4mbit")],
            vec![],
            vec![],
        ));
        let mut b = Bench::new(1);
        for _ in 0..20 {
            let p = b.pkt(0, 1500);
            q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        }
        let mut checked = 0;
        for k in 0..20u64 {
            let now = Nanos::from_ms(4 * k);
            let h = htb(&q);
            let (li, ri) = (h.find(0x1_0010).unwrap(), h.find(0x1_0001).unwrap());
            let (l0, r0) = (snapshot(&h.classes[li]), snapshot(&h.classes[ri]));
            assert!(q.dequeue(&mut b.cx(), now).is_some(), "R stays green");
            let h = htb(&q);
            let (l, r) = (&h.classes[li], &h.classes[ri]);
            let t = now.0 as i64;
            if l.borrows > l0.borrows {
                assert_eq!(l.lends, l0.lends);
                assert_eq!(l.tokens, l0.tokens + (t - l0.t_c), "no rate charge for the borrower");
                assert_eq!(l.ctokens, (l0.ctokens + t - l0.t_c).min(l.cbuffer) - 3_028_000);
                assert_eq!(r.lends, r0.lends + 1);
                assert_eq!(r.tokens, (r0.tokens + t - r0.t_c).min(r.buffer) - 3_028_000);
                assert_eq!(r.ctokens, (r0.ctokens + t - r0.t_c).min(r.cbuffer) - 3_028_000);
                checked += 1;
            } else {
                // Served at level 0 by its own rate: charged 12 112 000 ns at 1mbit.
                assert_eq!(l.lends, l0.lends + 1);
                assert_eq!(l.tokens, (l0.tokens + t - l0.t_c).min(l.buffer) - 12_112_000);
                assert_eq!(r.lends, r0.lends, "R is not the lender at level 0");
                assert_eq!(r.tokens, (r0.tokens + t - r0.t_c).min(r.buffer) - 3_028_000, "R still pays its rate");
            }
            assert_eq!(l.t_c, t);
        }
        assert!(checked >= 8, "most packets were borrowed: {checked}");
        assert_eq!(class(&q, "1:1").packets, 20);
    }

    struct Snap {
        tokens: i64,
        ctokens: i64,
        t_c: i64,
        lends: u32,
        borrows: u32,
    }

    fn snapshot(c: &Class) -> Snap {
        Snap { tokens: c.tokens, ctokens: c.ctokens, t_c: c.t_c, lends: c.lends, borrows: c.borrows }
    }

    #[test]
    fn watchdog_is_armed_at_the_mode_change() {
        // rate = ceil = 1mbit, burst 1600 B = 12.8 ms; each frame costs 12.112 ms: two go at
        // t = 0, the class is then red for 11.424 ms.
        let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 1mbit")], vec![], vec![]));
        let mut b = Bench::new(1);
        for _ in 0..3 {
            let p = b.pkt(0, 1500);
            q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        }
        assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
        assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
        assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), None);
        assert_eq!(q.next_wakeup(Nanos::ZERO), Some(Nanos(11_424_000)));
        assert_eq!(class(&q, "1:10").overlimits, 1, "one red transition");
        assert_eq!(q.stats().overlimits, 1);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(11_423_999)), None);
        assert!(q.dequeue(&mut b.cx(), Nanos(11_424_000)).is_some());
        assert_eq!(q.next_wakeup(Nanos(11_424_000)), None, "empty");
    }

    #[test]
    fn peek_stashes_the_packet_dequeue_returns() {
        let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 10mbit")], vec![], vec![]));
        let mut b = Bench::new(1);
        let ids: Vec<_> = (0..3).map(|_| b.pkt(0, 1000)).collect();
        for &p in &ids {
            q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        }
        assert_eq!(q.peek(&mut b.cx(), Nanos::ZERO), Some(ids[0]));
        assert_eq!(q.peek(&mut b.cx(), Nanos::ZERO), Some(ids[0]));
        assert_eq!(q.stats().qlen, 3);
        assert_identities(&q);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(5)), Some(ids[0]));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(5)), Some(ids[1]));
        assert_eq!((q.stats().sent_packets, q.stats().qlen), (2, 1));
        assert_identities(&q);
    }

    // --- options ------------------------------------------------------------------------------

    #[test]
    fn option_errors_name_the_token_and_position() {
        // Missing rate: at the end of the class line.
        let o = "ceil 2mbit";
        let (q, d) = build_htb("", &[("1:", "1:10", o)], vec![], vec![]);
        assert!(q.is_none());
        let e = errors(&d);
        assert_eq!(e.len(), 1, "{d:?}");
        assert_eq!((e[0].line, e[0].col, e[0].token.as_str()), (2, class_opt_col("1:", "1:10") + o.len() as u32, ""));
        assert!(e[0].message.contains("\"rate\" is required"));

        // Unknown class option.
        let (q, d) = build_htb("", &[("1:", "1:10", "rate 1mbit bogus 3")], vec![], vec![]);
        assert!(q.is_none());
        let e = errors(&d);
        assert_eq!((e[0].line, e[0].col, e[0].token.as_str()), (2, class_opt_col("1:", "1:10") + 11, "bogus"));
        assert!(
            e[0].message.contains("unknown htb class option \"bogus\"") && e[0].message.contains("cburst"),
            "{}",
            e[0]
        );

        // Bad value.
        let (q, d) = build_htb("", &[("1:", "1:10", "rate 1mbyte")], vec![], vec![]);
        assert!(q.is_none());
        let e = errors(&d);
        assert_eq!((e[0].col, e[0].token.as_str()), (class_opt_col("1:", "1:10") + 5, "1mbyte"));
        // Missing value.
        let (_, d) = build_htb("", &[("1:", "1:10", "rate")], vec![], vec![]);
        assert!(errors(&d)[0].message.contains("needs a value"));
        // Double rate.
        let (_, d) = build_htb("", &[("1:", "1:10", "rate 1mbit rate 2mbit")], vec![], vec![]);
        assert_eq!(errors(&d)[0].col, class_opt_col("1:", "1:10") + 11);
        assert!(errors(&d)[0].message.contains("Double \"rate\" spec"));

        // Qdisc options: unknown, bad hex, and tc's prefix matching ("d" = default).
        let (q, d) = build_htb("default 10 wibble", &[], vec![], vec![]);
        assert!(q.is_none());
        assert_eq!((errors(&d)[0].line, errors(&d)[0].col), (1, QOPT_COL + 11));
        assert!(errors(&d)[0].message.contains("expected one of: default, r2q, direct_qlen"));
        let (q, d) = build_htb("default zz", &[], vec![], vec![]);
        assert!(q.is_none());
        assert_eq!((errors(&d)[0].col, errors(&d)[0].token.as_str()), (QOPT_COL + 8, "zz"));
        let q = ok(build_htb("d 1a r2q 0 direct_qlen 7", &[], vec![], vec![]));
        assert_eq!((htb(&q).defcls, htb(&q).r2q, htb(&q).direct_qlen), (0x1a, 1, 7));

        // Not modelled options are warnings.
        let (q, d) = build_htb("offload", &[], vec![], vec![]);
        assert!(q.is_some());
        assert!(d[0].severity == Severity::Warning && d[0].message.contains("not modelled"));

        // Class ids of another qdisc.
        let (q, d) = build_htb("", &[("1:", "2:10", "rate 1mbit")], vec![], vec![]);
        assert!(q.is_none());
        assert_eq!(errors(&d)[0].token, "2:10");
    }

    #[test]
    fn quantum_defaults_and_warnings_follow_r2q() {
        // §14.4, r2q 10.
        let (q, d) = build_htb(
            "",
            &[
                ("1:", "1:10", "rate 4mbit"),
                ("1:", "1:20", "rate 64kbit"),
                ("1:", "1:30", "rate 100mbit"),
                ("1:", "1:40", "rate 100mbit quantum 1514"),
                ("1:", "1:50", "rate 1mbit prio 9"),
            ],
            vec![],
            vec![],
        );
        let q = q.unwrap();
        assert_eq!(class(&q, "1:10").quantum, 50_000);
        assert_eq!(class(&q, "1:20").quantum, 1000);
        assert_eq!(class(&q, "1:30").quantum, 200_000);
        assert_eq!(class(&q, "1:40").quantum, 1514);
        assert_eq!(class(&q, "1:50").prio, 7, "prio clamped to 7");
        let w: Vec<&TcDiag> = d.iter().filter(|x| x.severity == Severity::Warning).collect();
        assert_eq!(w.len(), 3, "{d:?}");
        assert!(w[0].message.starts_with("quantum of class 10020 is small. Consider r2q change.") && w[0].line == 3);
        assert!(w[1].message.starts_with("quantum of class 10030 is big. Consider r2q change.") && w[1].line == 4);
        assert!(w[2].message.contains("prio 9") && w[2].line == 6);
        // r2q 100: 100mbit -> 125 000 bytes, no warning.
        let (q, d) = build_htb("r2q 100", &[("1:", "1:10", "rate 100mbit")], vec![], vec![]);
        assert_eq!(class(&q.unwrap(), "1:10").quantum, 125_000);
        assert!(d.is_empty());
    }

    #[test]
    fn tree_depth_is_limited_to_eight_levels() {
        let chain: Vec<ClassLine> = vec![
            ("1:", "1:1", "rate 1mbit"),
            ("1:1", "1:2", "rate 1mbit"),
            ("1:2", "1:3", "rate 1mbit"),
            ("1:3", "1:4", "rate 1mbit"),
            ("1:4", "1:5", "rate 1mbit"),
            ("1:5", "1:6", "rate 1mbit"),
            ("1:6", "1:7", "rate 1mbit"),
            ("1:7", "1:8", "rate 1mbit"),
        ];
        let q = ok(build_htb("", &chain, vec![], vec![]));
        for (i, id) in ["1:1", "1:2", "1:3", "1:4", "1:5", "1:6", "1:7", "1:8"].iter().enumerate() {
            assert_eq!(class(&q, id).level, if i == 7 { 0 } else { 7 - i }, "{id}");
        }
        let mut deep = chain.clone();
        deep.push(("1:8", "1:9", "rate 1mbit"));
        let (q, d) = build_htb("", &deep, vec![], vec![]);
        assert!(q.is_none());
        let e = errors(&d);
        assert_eq!((e[0].line, e[0].token.as_str()), (10, "1:9"));
        assert!(e[0].message.contains("tree is too deep"));
    }

    #[test]
    fn grafts_replace_leaf_queues_only() {
        let classes: &[ClassLine] = &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 1mbit")];
        let fifo = || QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, 5, Handle::new(0x20, 0), Handle::new(1, 1)));
        let (q, d) = build_htb("", classes, vec![], vec![("1:1", fifo())]);
        assert!(q.is_none());
        assert_eq!((errors(&d)[0].line, errors(&d)[0].token.as_str()), (50, "1:1"));
        assert!(errors(&d)[0].message.contains("inner class"));
        let (q, d) = build_htb("", classes, vec![], vec![("1:77", fifo())]);
        assert!(q.is_none());
        assert!(errors(&d)[0].message.contains("no class 1:77"));
        let q = ok(build_htb("", classes, vec![], vec![("1:10", fifo())]));
        assert_eq!(q.reports()[1].options, "limit 5p");
        assert!(class(&q, "1:1").child.is_none(), "inner classes have no queue");
    }

    #[test]
    fn l2t_uses_the_kernels_mult_and_shift() {
        let r = RateCfg::new(500_000, 0, 0, false);
        assert_eq!((r.mult, r.shift), (4_194_304_000, 21));
        assert_eq!(r.l2t(1514), 3_028_000);
        // 900kbit = 112 500 B/s: within 1 ns of the exact 13 457 777.8 ns, never above it.
        let r = RateCfg::new(112_500, 0, 0, false);
        let t = r.l2t(1514);
        assert!((13_457_776..=13_457_777).contains(&t), "{t}");
        // overhead, mpu and the ATM cell tax.
        assert_eq!(RateCfg::new(500_000, 10, 0, false).l2t(1514), 3_048_000);
        assert_eq!(RateCfg::new(500_000, 0, 100, false).l2t(60), 200_000);
        assert_eq!(RateCfg::new(500_000, 0, 0, true).l2t(100), 3 * 53 * 2000);
    }
}
