//! netem: the network emulator (Linux 6.1 to 6.18 `net/sched/sch_netem.c`, iproute2 6.1
//! `tc/q_netem.c`). Each packet gets a time to send, `now + delay` drawn from
//! `tabledist(latency, jitter)` (uniform, or a distribution table; correlated draws), and waits
//! in a time-ordered queue (the kernel's `tfifo`: an in-order list plus a tree for packets that
//! overtake the list's tail) until that time. At enqueue a packet may be lost (random with
//! correlation, the 4-state Markov model of Salsano et al. `loss state`, or Gilbert-Elliott
//! `loss gemodel`), marked instead when `ecn` is on, corrupted, or reordered (sent at once, at
//! the head of the queue, with probability `reorder` outside the first `gap - 1` packets).
//! `rate` serialises packets after the last one queued (with per-packet overhead and cells),
//! and `slot` releases packets in bursts (min..max delay between slots, at most `packets`
//! packets and `bytes` bytes per slot).
//!
//! The kernel's integer steps are followed: probabilities are u32 fractions of `u32::MAX`, the
//! correlated generator is `get_crandom` (`(value * (2^32 - rho) + last * rho) >> 32`), the
//! delay and jitter go through tc's 64 ns psched ticks (`get_ticks`, `PSCHED_TICKS2NS`), the
//! table lookup is `tabledist` with `NETEM_DIST_SCALE` = 8192, and the rate's time is
//! `packet_time_ns`. The distribution tables are generated as iproute2 generates its `.dist`
//! files ([`dist`]).
//!
//! Deviations (docs/qdisc-netem.md): random numbers come from the run's seeded stream for this
//! qdisc (the kernel's `prandom_u32_state`, seeded at random or by `seed`, gives another
//! sequence); `duplicate` draws its decision but makes no copy (airsched's per-flow accounting
//! has no packets that no application sent) and `corrupt` counts the packets it would flip a bit
//! in but delivers them intact — both are warnings; `ecn` counts marks (as the kernel, in the
//! drop counter) but cannot write CE into the packet; a child qdisc under netem is refused;
//! option words must be written in full (tc also takes prefixes such as `lat`).

mod dist;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::{errors_since, StashPeek};
use super::{opt_parser, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::{fmt_g, format_rate_bytes, format_time_us, OptParser};
use crate::time::Nanos;
pub(super) use dist::{DistKind, DIST_SCALE};

/// Tags the random stream of a netem qdisc.
const NETEM_STREAM_TAG: u64 = 6 << 60;
/// tc's psched tick in microseconds (`tick_in_usec` with the kernel's 64 ns ticks).
const TICKS_PER_US: f64 = 15.625;

/// A probability as the kernel keeps it: a fraction of `u32::MAX`.
pub(super) type Prob = u32;

/// The loss model (`loss random | state | gemodel`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum LossModel {
    /// `CLG_RANDOM`: `loss` with `loss_corr` (0 = no loss).
    Random,
    /// `CLG_4_STATES` (`loss state p13 p31 p32 p23 p14`).
    FourState { p13: Prob, p31: Prob, p32: Prob, p23: Prob, p14: Prob },
    /// `CLG_GILB_ELL` (`loss gemodel p r 1-h 1-k`): the kernel's p, r, h, k1.
    GilbertElliott { p: Prob, r: Prob, h: Prob, k1: Prob },
}

/// `slot` (struct tc_netem_slot), times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Slot {
    pub min_delay: i64,
    pub max_delay: i64,
    pub dist_delay: i64,
    pub dist_jitter: i64,
    /// 0 as given means unlimited (the kernel stores `INT_MAX`).
    pub max_packets: i32,
    pub max_bytes: i32,
}

/// What the tc command configures (the kernel's `netem_sched_data` options).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NetemParams {
    pub limit: u32,
    /// psched ticks as tc sends them (`qopt.latency`, `qopt.jitter`).
    pub latency_ticks: u32,
    pub jitter_ticks: u32,
    pub delay_corr: Prob,
    pub loss: Prob,
    pub loss_corr: Prob,
    pub loss_model: LossModel,
    pub duplicate: Prob,
    pub dup_corr: Prob,
    pub reorder: Prob,
    pub reorder_corr: Prob,
    pub gap: u32,
    pub corrupt: Prob,
    pub corrupt_corr: Prob,
    /// Bytes per second (0 = no rate).
    pub rate: u64,
    pub packet_overhead: i32,
    pub cell_size: u32,
    pub cell_overhead: i32,
    pub slot: Option<Slot>,
    pub ecn: bool,
    pub dist: Option<DistKind>,
    pub slot_dist: Option<DistKind>,
    /// `seed`: the random stream is seeded from it instead of the run's seed.
    pub seed: Option<u64>,
}

impl NetemParams {
    pub fn new() -> NetemParams {
        NetemParams {
            limit: 1000,
            latency_ticks: 0,
            jitter_ticks: 0,
            delay_corr: 0,
            loss: 0,
            loss_corr: 0,
            loss_model: LossModel::Random,
            duplicate: 0,
            dup_corr: 0,
            reorder: 0,
            reorder_corr: 0,
            gap: 0,
            corrupt: 0,
            corrupt_corr: 0,
            rate: 0,
            packet_overhead: 0,
            cell_size: 0,
            cell_overhead: 0,
            slot: None,
            ecn: false,
            dist: None,
            slot_dist: None,
            seed: None,
        }
    }

    /// `q->latency` (`PSCHED_TICKS2NS`).
    pub fn latency_ns(&self) -> i64 {
        (self.latency_ticks as i64) << 6
    }

    /// `q->jitter`.
    pub fn jitter_ns(&self) -> i64 {
        (self.jitter_ticks as i64) << 6
    }

    /// `packet_time_ns`: the serialisation time of `len` bytes at `rate`, with the per-packet
    /// overhead and whole cells of `cell_size + cell_overhead`.
    pub fn packet_time_ns(&self, len: u32) -> u64 {
        let mut len = (len as i64 + self.packet_overhead as i64).max(0) as u64;
        if self.cell_size > 0 {
            let cs = self.cell_size as u64;
            let cells = len.div_ceil(cs);
            len = (cells as i64 * (cs as i64 + self.cell_overhead as i64)).max(0) as u64;
        }
        ((len as u128 * 1_000_000_000) / self.rate as u128) as u64
    }
}

/// `struct crndstate`: the correlated generator's coefficient and last value.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Crnd {
    pub rho: u32,
    pub last: u32,
}

/// `get_crandom`: a uniform u32, correlated with the previous one by `rho`.
#[inline]
pub(super) fn crandom(state: &mut Crnd, rng: &mut Xoshiro256PlusPlus) -> u32 {
    let value = rng.next_u32() as u64;
    if state.rho == 0 {
        return value as u32;
    }
    let rho = state.rho as u64 + 1;
    let answer = ((value * ((1u64 << 32) - rho) + state.last as u64 * rho) >> 32) as u32;
    state.last = answer;
    answer
}

/// `tabledist`: `mu` plus a draw of spread `sigma` from the table (uniform on
/// [mu - sigma, mu + sigma) without one).
#[inline]
pub(super) fn tabledist(mu: i64, sigma: i64, state: &mut Crnd, rng: &mut Xoshiro256PlusPlus, table: &[i16]) -> i64 {
    if sigma == 0 {
        return mu;
    }
    let rnd = crandom(state, rng);
    if table.is_empty() {
        return ((rnd as u64 % (2 * sigma as u64)) as i64 + mu) - sigma;
    }
    let t = table[rnd as usize % table.len()] as i64;
    let mut x = (sigma % DIST_SCALE) * t;
    if x >= 0 {
        x += DIST_SCALE / 2;
    } else {
        x -= DIST_SCALE / 2;
    }
    x / DIST_SCALE + (sigma / DIST_SCALE) * t + mu
}

/// The 4-state model's states (`TX_IN_GAP_PERIOD` ... in sch_netem.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClgState {
    TxInGap,
    TxInBurst,
    LostInGap,
    LostInBurst,
    /// Gilbert-Elliott's good and bad states.
    Good,
    Bad,
}

/// A packet waiting in the time-ordered queue: sorted by time to send, then by arrival
/// (`tfifo_enqueue` puts a packet after those with the same time).
type Timed = Reverse<(u64, u64, PacketId)>;

/// netem's counters beyond `tc -s` (tc prints no xstats for netem): in the results' JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct NetemCounters {
    lost: u64,
    ecn_marked: u64,
    duplicates_not_made: u64,
    corrupted: u64,
    reordered: u64,
}

pub struct Netem {
    handle: Handle,
    params: NetemParams,
    /// The delay table and the slot table (empty: uniform).
    table: Vec<i16>,
    slot_table: Vec<i16>,
    rng: Xoshiro256PlusPlus,
    delay_cor: Crnd,
    loss_cor: Crnd,
    dup_cor: Crnd,
    reorder_cor: Crnd,
    corrupt_cor: Crnd,
    clg: ClgState,
    counter: u32,
    /// `sch->q`: reordered packets, sent before anything else, with their time to send.
    head: VecDeque<(u64, PacketId)>,
    /// The tfifo's in-order list (`t_head` .. `t_tail`).
    list: VecDeque<(u64, PacketId)>,
    /// The tfifo's tree: packets that arrived with a time before the list's tail.
    tree: BinaryHeap<Timed>,
    /// The latest time in `tree` (`skb_rb_last`), while it is not empty.
    tree_last: u64,
    arrivals: u64,
    /// `q->slot.slot_next` (None: no slots), packets and bytes left in the slot.
    slot_next: Option<u64>,
    slot_packets: i64,
    slot_bytes: i64,
    stash: Option<PacketId>,
    stats: QdiscStats,
    counters: NetemCounters,
}

/// The random stream of the netem qdisc `handle` on the device of `cx` (or from `seed`).
fn netem_rng(cx: &BuildCx, handle: Handle, seed: Option<u64>) -> Xoshiro256PlusPlus {
    match seed {
        Some(s) => stream(s, StreamKind::Qdisc, NETEM_STREAM_TAG),
        None => stream(cx.seed, StreamKind::Qdisc, NETEM_STREAM_TAG ^ cx.stream.rotate_left(32) ^ handle.0 as u64),
    }
}

// ---------------------------------------------------------------------------------------------
// Options

const KNOWN: &[&str] = &[
    "limit",
    "delay",
    "latency",
    "distribution",
    "loss",
    "drop",
    "duplicate",
    "corrupt",
    "reorder",
    "gap",
    "rate",
    "slot",
    "ecn",
    "seed",
];

/// The warnings of options accepted but not modelled as the kernel does.
const DUPLICATE_WARNING: &str = "duplicate accepted, not modelled: the decisions are drawn and counted \
     (duplicates_not_made), but no copy is made (airsched's flow accounting has no packets an application did not send)";
const CORRUPT_WARNING: &str = "corrupt accepted, not modelled: the packets the kernel would flip a bit in are \
     counted (corrupted) and delivered intact (a receiver would discard most as checksum failures)";
const ECN_WARNING: &str = "ecn accepted; a lost packet whose TOS carries ECT bits is kept and counted as a mark \
     (and, as the kernel does, as a drop in tc -s); CE is not written into the packet";
const SEED_WARNING: &str = "seed accepted: it seeds airsched's random stream for this qdisc (reproducible, but not \
     the kernel's prandom sequence for that seed)";

/// Whether the next word starts with a digit (`NEXT_IS_NUMBER`).
fn next_is_number(p: &OptParser<'_, '_>) -> bool {
    p.peek().is_some_and(|t| t.text.starts_with(|c: char| c.is_ascii_digit()))
}

/// `NEXT_IS_SIGNED_NUMBER`.
fn next_is_signed_number(p: &OptParser<'_, '_>) -> bool {
    p.peek().is_some_and(|t| t.text.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
}

/// A percentage as tc's `parse_percent` reads it (`1%`, `0.5`, both in percent), 0 to 100,
/// as the kernel's u32 fraction (`rint(p * UINT32_MAX)`).
fn percent(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<Prob> {
    percent_frac(p, key).map(prob_of)
}

/// [`percent`] as the fraction tc computes before scaling it.
fn percent_frac(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<f64> {
    let v = p.value(key, "a percentage like 1% or 0.5")?;
    let num = v.text.strip_suffix('%').unwrap_or(v.text);
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=100.0).contains(&x) => Some(x / 100.0),
        _ => {
            p.error(v, format!("\"{}\" is not a percentage from 0 to 100 (like 1% or 0.5)", v.text));
            None
        }
    }
}

/// `set_percent`: a fraction as the kernel's u32.
pub(super) fn prob_of(frac: f64) -> Prob {
    (frac * u32::MAX as f64).round_ties_even() as u32
}

/// A time as `get_ticks` reads it: whole microseconds (`get_time` truncates), as 64 ns ticks
/// in 32 bits.
fn ticks(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let t = p.time(key)?;
    let us = t.as_ns() / 1000;
    let ticks = (us as f64 * TICKS_PER_US) as u64;
    match u32::try_from(ticks) {
        Ok(t) if us <= u32::MAX as u64 => Some(t),
        _ => {
            p.error(
                at.unwrap_or(key),
                format!("Illegal {us} time (too large): tc sends 64 ns ticks in 32 bits (at most 274s)"),
            );
            None
        }
    }
}

/// A time for `slot` (`get_time64`), in nanoseconds.
fn time64(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<i64> {
    p.time(key).map(|t| t.as_ns().min(i64::MAX as u64) as i64)
}

/// A signed 32-bit integer (`get_s32`, base 0).
fn s32(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<i32> {
    let v = p.value(key, "an integer")?;
    let (neg, digits) = match v.text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v.text),
    };
    let parsed = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => digits.parse::<i64>().ok(),
    };
    match parsed.map(|n| if neg { -n } else { n }).and_then(|n| i32::try_from(n).ok()) {
        Some(n) => Some(n),
        None => {
            p.error(v, format!("\"{}\" is not a 32-bit integer", v.text));
            None
        }
    }
}

/// A distribution name and its table; tc reads `NAME.dist` from its library directory.
fn distribution(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<DistKind> {
    let v = p.value(key, "a distribution: normal, pareto or paretonormal")?;
    let d = DistKind::from_word(v.text);
    if d.is_none() {
        p.error(
            v,
            format!(
                "No distribution data for {}: airsched generates {} (as iproute2's maketable does); other tables are files in tc's library directory",
                v.text,
                DistKind::WORDS.join(", ")
            ),
        );
    }
    d
}

/// Parse netem's options as iproute2 6.1's `netem_parse_opt` does, then its final checks.
fn parse(p: &mut OptParser<'_, '_>, kind: Tok<'_>) -> NetemParams {
    let mut q = NetemParams::new();
    let mut loss_given = false;
    let mut dist_at = None;
    while let Some(k) = p.next() {
        match k.text {
            "limit" => {
                if let Some(v) = p.size(k) {
                    match u32::try_from(v) {
                        Ok(v) => q.limit = v,
                        Err(_) => p.error(k, "limit does not fit in 32 bits"),
                    }
                }
            }
            "delay" | "latency" => {
                if let Some(t) = ticks(p, k) {
                    q.latency_ticks = t;
                }
                if next_is_number(p) {
                    if let Some(t) = ticks(p, k) {
                        q.jitter_ticks = t;
                    }
                    if next_is_number(p) {
                        q.delay_corr = percent(p, k).unwrap_or(0);
                    }
                }
            }
            "loss" | "drop" => {
                if q.loss > 0 || loss_given {
                    p.error(k, "duplicate loss argument");
                    break;
                }
                loss_given = true;
                let Some(m) = p.peek() else {
                    p.error_at_end(format!("{} needs a model: random PERCENT, state P13 ..., gemodel P ...", k.text));
                    break;
                };
                if m.text.starts_with(|c: char| c.is_ascii_digit()) {
                    // The old syntax: `loss 1%` is `loss random 1%`.
                    q.loss = percent(p, k).unwrap_or(0);
                    if next_is_number(p) {
                        q.loss_corr = percent(p, k).unwrap_or(0);
                    }
                    continue;
                }
                p.next();
                match m.text {
                    "random" => {
                        q.loss = percent(p, m).unwrap_or(0);
                        if next_is_number(p) {
                            q.loss_corr = percent(p, m).unwrap_or(0);
                        }
                    }
                    "state" => {
                        let Some(p13) = percent_frac(p, m) else { break };
                        // tc's defaults: p31 = 1 - p13, p32 = 0, p23 = 1, p14 = 0.
                        let mut v = [prob_of(p13), prob_of(1.0 - p13), 0, prob_of(1.0), 0];
                        for slot in v.iter_mut().skip(1) {
                            if !next_is_number(p) {
                                break;
                            }
                            *slot = percent(p, m).unwrap_or(0);
                        }
                        q.loss_model = LossModel::FourState { p13: v[0], p31: v[1], p32: v[2], p23: v[3], p14: v[4] };
                    }
                    "gemodel" => {
                        let Some(pf) = percent_frac(p, m) else { break };
                        let pp = prob_of(pf);
                        let mut r = prob_of(1.0 - pf);
                        let (mut h, mut k1) = (0, 0);
                        if next_is_number(p) {
                            r = percent(p, m).unwrap_or(0);
                            if next_is_number(p) {
                                // tc's option is 1-h; the kernel takes h.
                                h = u32::MAX - percent(p, m).unwrap_or(0);
                                if next_is_number(p) {
                                    k1 = percent(p, m).unwrap_or(0);
                                }
                            }
                        }
                        q.loss_model = LossModel::GilbertElliott { p: pp, r, h, k1 };
                    }
                    _ => {
                        p.error(m, format!("Unknown loss parameter: {}; expected random, state or gemodel", m.text));
                        break;
                    }
                }
            }
            "seed" => {
                if let Some(s) = p.uint(k, 0, u64::MAX) {
                    q.seed = Some(s);
                    p.warn(k, SEED_WARNING);
                }
            }
            "ecn" => q.ecn = true,
            "reorder" => {
                q.reorder = percent(p, k).unwrap_or(0);
                if next_is_number(p) {
                    q.reorder_corr = percent(p, k).unwrap_or(0);
                }
            }
            "corrupt" => {
                q.corrupt = percent(p, k).unwrap_or(0);
                if next_is_number(p) {
                    q.corrupt_corr = percent(p, k).unwrap_or(0);
                }
                if q.corrupt > 0 {
                    p.warn(k, CORRUPT_WARNING);
                }
            }
            "gap" => {
                if let Some(g) = p.uint(k, 0, u32::MAX as u64) {
                    q.gap = g as u32;
                }
            }
            "duplicate" => {
                q.duplicate = percent(p, k).unwrap_or(0);
                if next_is_number(p) {
                    q.dup_corr = percent(p, k).unwrap_or(0);
                }
                if q.duplicate > 0 {
                    p.warn(k, DUPLICATE_WARNING);
                }
            }
            "distribution" => {
                dist_at = Some(k);
                q.dist = distribution(p, k);
            }
            "rate" => {
                if p.peek().is_some_and(|t| t.text.contains('%')) {
                    let v = p.next().unwrap_or(k);
                    p.error(v, "a rate in percent of the device's speed is not supported: give the rate (like 10mbit)");
                    break;
                }
                if let Some(bits) = p.rate(k) {
                    q.rate = bits / 8;
                }
                if next_is_signed_number(p) {
                    q.packet_overhead = s32(p, k).unwrap_or(0);
                }
                if next_is_number(p) {
                    q.cell_size = p.uint(k, 0, u32::MAX as u64).unwrap_or(0) as u32;
                }
                if next_is_signed_number(p) {
                    q.cell_overhead = s32(p, k).unwrap_or(0);
                }
            }
            "slot" => {
                let mut s =
                    Slot { min_delay: 0, max_delay: 0, dist_delay: 0, dist_jitter: 0, max_packets: 0, max_bytes: 0 };
                if next_is_number(p) {
                    s.min_delay = time64(p, k).unwrap_or(0);
                    s.max_delay = s.min_delay;
                    if next_is_number(p) {
                        let at = p.peek();
                        s.max_delay = time64(p, k).unwrap_or(0);
                        if s.max_delay < s.min_delay {
                            p.error(at.unwrap_or(k), "Illegal \"slot max_delay\": below the slot's min_delay");
                        }
                    }
                } else {
                    match p.next() {
                        Some(w) if w.text == "distribution" => {
                            q.slot_dist = distribution(p, w);
                            s.dist_delay = time64(p, w).unwrap_or(0);
                            let at = p.peek();
                            s.dist_jitter = time64(p, w).unwrap_or(0);
                            if s.dist_jitter <= 0 && !p.has_errors() {
                                p.error(at.unwrap_or(w), "Non-positive jitter");
                            }
                        }
                        Some(w) => {
                            p.error(w, format!("Unknown slot parameter: {}; expected a delay or distribution", w.text));
                            break;
                        }
                        None => {
                            p.error_at_end("slot needs MIN_DELAY [MAX_DELAY] or distribution NAME DELAY JITTER");
                            break;
                        }
                    }
                }
                if p.peek().is_some_and(|t| t.text == "packets") {
                    let w = p.next().unwrap_or(k);
                    s.max_packets = s32(p, w).unwrap_or(0);
                }
                if p.peek().is_some_and(|t| t.text == "bytes") {
                    let w = p.next().unwrap_or(k);
                    s.max_bytes = p.size(w).map_or(0, |b| b.min(u32::MAX as u64) as u32 as i32);
                }
                if s.max_packets < 0 || s.max_bytes < 0 {
                    p.error(k, "negative slot limit");
                }
                q.slot = Some(s);
            }
            _ => {
                p.unknown(k, "netem", KNOWN);
                break;
            }
        }
    }
    if p.has_errors() {
        return q;
    }
    // The checks netem_parse_opt makes after reading every option.
    if q.reorder > 0 {
        if q.latency_ticks == 0 {
            p.error(kind, "reordering not possible without specifying some delay");
        }
        if q.gap == 0 {
            q.gap = 1;
        }
    } else if q.gap > 0 {
        p.error(kind, "gap specified without reorder probability");
    }
    if q.ecn && q.loss == 0 && q.loss_model == LossModel::Random {
        p.error(kind, "ecn requested without loss model");
    }
    if q.ecn && !p.has_errors() {
        p.warn(kind, ECN_WARNING);
    }
    if let Some(at) = dist_at {
        if q.latency_ticks == 0 || q.jitter_ticks == 0 {
            p.error(at, "distribution specified but no latency and jitter values");
        }
    }
    q
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut p = opt_parser(&d.opts, d.end, diags);
    let params = parse(&mut p, d.kind);
    if errors_since(diags, from) {
        return None;
    }
    let rng = netem_rng(cx, d.handle, params.seed);
    Some(QdiscImpl::Netem(Box::new(Netem::new(d.handle, params, rng))))
}

// ---------------------------------------------------------------------------------------------
// The discipline

impl Netem {
    pub(super) fn new(handle: Handle, params: NetemParams, mut rng: Xoshiro256PlusPlus) -> Netem {
        // get_correlation / get_reorder / get_corrupt: `init_crandom` starts `last` at a random
        // value when tc sent the attribute (iproute2 sends the correlations only when given).
        let mut cor = |rho: u32, sent: bool| Crnd { rho, last: if sent { rng.next_u32() } else { 0 } };
        let p = &params;
        let corr_sent = p.delay_corr | p.loss_corr | p.dup_corr | p.reorder_corr | p.corrupt_corr != 0;
        let delay_cor = cor(p.delay_corr, corr_sent);
        let loss_cor = cor(p.loss_corr, corr_sent);
        let dup_cor = cor(p.dup_corr, corr_sent);
        let reorder_cor = cor(p.reorder_corr, p.reorder > 0);
        let corrupt_cor = cor(p.corrupt_corr, p.corrupt > 0);
        let clg = match p.loss_model {
            LossModel::GilbertElliott { .. } => ClgState::Good,
            _ => ClgState::TxInGap,
        };
        let slot = p.slot.map(|s| Slot {
            max_packets: if s.max_packets == 0 { i32::MAX } else { s.max_packets },
            max_bytes: if s.max_bytes == 0 { i32::MAX } else { s.max_bytes },
            ..s
        });
        let cap = params.limit.min(1 << 14) as usize;
        Netem {
            handle,
            table: params.dist.map_or(vec![], |d| d.table()),
            slot_table: params.slot_dist.map_or(vec![], |d| d.table()),
            rng,
            delay_cor,
            loss_cor,
            dup_cor,
            reorder_cor,
            corrupt_cor,
            clg,
            counter: 0,
            head: VecDeque::new(),
            list: VecDeque::with_capacity(cap),
            tree: BinaryHeap::with_capacity(cap),
            tree_last: 0,
            arrivals: 0,
            // get_slot: a slot opens at creation (time 0) when one is configured.
            slot_next: slot.filter(|s| s.min_delay | s.max_delay | s.dist_jitter != 0).map(|_| 0),
            slot_packets: slot.map_or(0, |s| s.max_packets as i64),
            slot_bytes: slot.map_or(0, |s| s.max_bytes as i64),
            stash: None,
            stats: QdiscStats::default(),
            counters: NetemCounters::default(),
            params: NetemParams { slot, ..params },
        }
    }

    /// `loss_event`.
    fn loss_event(&mut self) -> bool {
        let rng = &mut self.rng;
        match self.params.loss_model {
            LossModel::Random => {
                let loss = self.params.loss;
                loss > 0 && loss >= crandom(&mut self.loss_cor, rng)
            }
            LossModel::FourState { p13, p31, p32, p23, p14 } => {
                // a1 = p13, a2 = p31, a3 = p32, a4 = p14, a5 = p23 (loss_4state, Linux 6.6+).
                let rnd = rng.next_u32();
                let (next, lost) = match self.clg {
                    ClgState::TxInGap => {
                        if rnd < p14 {
                            (ClgState::LostInGap, true)
                        } else if rnd < p13.wrapping_add(p14) {
                            (ClgState::LostInBurst, true)
                        } else {
                            (ClgState::TxInGap, false)
                        }
                    }
                    ClgState::TxInBurst => {
                        if rnd < p23 {
                            (ClgState::LostInBurst, true)
                        } else {
                            (ClgState::TxInBurst, false)
                        }
                    }
                    ClgState::LostInBurst => {
                        if rnd < p32 {
                            (ClgState::TxInBurst, false)
                        } else if rnd < p31.wrapping_add(p32) {
                            (ClgState::TxInGap, false)
                        } else {
                            (ClgState::LostInBurst, true)
                        }
                    }
                    ClgState::LostInGap | ClgState::Good | ClgState::Bad => (ClgState::TxInGap, false),
                };
                self.clg = next;
                lost
            }
            LossModel::GilbertElliott { p, r, h, k1 } => match self.clg {
                ClgState::Bad => {
                    if rng.next_u32() < r {
                        self.clg = ClgState::Good;
                    }
                    rng.next_u32() > h
                }
                _ => {
                    if rng.next_u32() < p {
                        self.clg = ClgState::Bad;
                    }
                    rng.next_u32() < k1
                }
            },
        }
    }

    /// The latest time to send among the queued packets (`last` of netem_enqueue's rate step).
    fn last_time(&self) -> Option<u64> {
        let mut last = self.head.back().map(|&(t, _)| t);
        if !self.tree.is_empty() {
            last = Some(last.map_or(self.tree_last, |l| l.max(self.tree_last)));
        }
        if let Some(&(t, _)) = self.list.back() {
            last = Some(last.map_or(t, |l| l.max(t)));
        }
        last
    }

    /// `tfifo_enqueue`.
    fn tfifo_enqueue(&mut self, t: u64, pkt: PacketId) {
        if self.list.back().is_none_or(|&(tail, _)| t >= tail) {
            self.list.push_back((t, pkt));
        } else {
            self.arrivals += 1;
            self.tree_last = if self.tree.is_empty() { t } else { self.tree_last.max(t) };
            self.tree.push(Reverse((t, self.arrivals, pkt)));
        }
    }

    /// `netem_peek`: the earlier of the tree's first and the list's head (the list's on a tie).
    fn tfifo_peek(&self) -> Option<(u64, bool)> {
        let tree = self.tree.peek().map(|Reverse((t, _, _))| *t);
        let list = self.list.front().map(|&(t, _)| t);
        match (tree, list) {
            (Some(a), Some(b)) => Some(if a < b { (a, true) } else { (b, false) }),
            (Some(a), None) => Some((a, true)),
            (None, Some(b)) => Some((b, false)),
            (None, None) => None,
        }
    }

    /// `get_slot_next`.
    fn slot_next_after(&mut self, now: u64) {
        let Some(s) = self.params.slot else { return };
        let delay = if self.slot_table.is_empty() {
            s.min_delay + (((s.max_delay - s.min_delay) as u128 * self.rng.next_u32() as u128) >> 32) as i64
        } else {
            let mut none = Crnd::default();
            tabledist(s.dist_delay, s.dist_jitter.min(i32::MAX as i64), &mut none, &mut self.rng, &self.slot_table)
        };
        self.slot_next = Some((now as i64 + delay).max(0) as u64);
        self.slot_packets = s.max_packets as i64;
        self.slot_bytes = s.max_bytes as i64;
    }

    #[cfg(test)]
    pub(super) fn params(&self) -> &NetemParams {
        &self.params
    }
}

impl StashPeek for Netem {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    /// `netem_dequeue` without a child qdisc.
    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if let Some((_, p)) = self.head.pop_front() {
            return Some(p);
        }
        let (t, from_tree) = self.tfifo_peek()?;
        let now = now.as_ns();
        if self.slot_next.is_some_and(|s| s < t) {
            self.slot_next_after(now);
        }
        if t > now || self.slot_next.is_some_and(|s| s > now) {
            return None;
        }
        let pkt = if from_tree {
            let Reverse((_, _, p)) = self.tree.pop().expect("peeked");
            p
        } else {
            self.list.pop_front().expect("peeked").1
        };
        if self.slot_next.is_some() {
            self.slot_packets -= 1;
            self.slot_bytes -= cx.len(pkt) as i64;
            if self.slot_packets <= 0 || self.slot_bytes <= 0 {
                self.slot_next_after(now);
            }
        }
        Some(pkt)
    }
}

impl Qdisc for Netem {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let p = &self.params;
        if p.duplicate > 0 && p.duplicate >= crandom(&mut self.dup_cor, &mut self.rng) {
            self.counters.duplicates_not_made += 1;
        }
        let mut keep = true;
        if self.loss_event() {
            if self.params.ecn && cx.key(pkt).tos & 3 != 0 {
                self.counters.ecn_marked += 1;
            } else {
                keep = false;
            }
        }
        let p = &self.params;
        let res = if !keep {
            self.counters.lost += 1;
            cx.drop(pkt);
            Enq::Dropped
        } else {
            if p.corrupt > 0 && p.corrupt >= crandom(&mut self.corrupt_cor, &mut self.rng) {
                self.counters.corrupted += 1;
            }
            if self.stats.qlen >= self.params.limit as u64 {
                cx.drop(pkt);
                Enq::Dropped
            } else {
                cx.stamp(pkt, now);
                let p = &self.params;
                let now_ns = now.as_ns();
                if p.gap == 0 || self.counter < p.gap - 1 || p.reorder < crandom(&mut self.reorder_cor, &mut self.rng) {
                    let mut delay = tabledist(
                        self.params.latency_ns(),
                        self.params.jitter_ns().min(i32::MAX as i64),
                        &mut self.delay_cor,
                        &mut self.rng,
                        &self.table,
                    );
                    let mut from = now_ns as i64;
                    if self.params.rate > 0 {
                        if let Some(last) = self.last_time() {
                            delay -= last as i64 - from;
                            delay = delay.max(0);
                            from = last as i64;
                        }
                        delay += self.params.packet_time_ns(cx.len(pkt)) as i64;
                    }
                    self.counter = self.counter.wrapping_add(1);
                    self.tfifo_enqueue((from + delay).max(0) as u64, pkt);
                } else {
                    self.counter = 0;
                    self.counters.reordered += 1;
                    self.stats.requeues += 1;
                    self.head.push_front((now_ns, pkt));
                }
                Enq::Queued
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

    /// The watchdog: the head's time to send, or the next slot if that is later.
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.stash.is_some() || !self.head.is_empty() {
            return Some(now);
        }
        let (t, _) = self.tfifo_peek()?;
        Some(Nanos(t.max(self.slot_next.unwrap_or(0))))
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().for_each(|&p| f(p));
        self.head.iter().chain(self.list.iter()).for_each(|&(_, p)| f(p));
        self.tree.iter().for_each(|Reverse((_, _, p))| f(*p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let mut stats = self.stats;
        // qdisc_qstats_drop for a mark: the kernel counts it as a drop of a packet it keeps.
        stats.drops += self.counters.ecn_marked;
        let c = &self.counters;
        let xstats = [
            ("lost", c.lost),
            ("ecn_marked", c.ecn_marked),
            ("reordered", c.reordered),
            ("corrupted", c.corrupted),
            ("duplicates_not_made", c.duplicates_not_made),
        ]
        .iter()
        .map(|&(n, v)| (n.to_string(), v as i64))
        .collect();
        out.push(QdiscReport {
            kind: "netem",
            handle: self.handle,
            parent,
            options: options_text(&self.params),
            stats,
            xstats,
            xstats_text: String::new(),
            classes: vec![],
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Printing (iproute2 6.1 netem_print_opt)

/// `%g%%` of a kernel probability, as tc prints percentages.
fn pct(v: Prob) -> String {
    format!("{}%", fmt_g(100.0 * v as f64 / u32::MAX as f64, 6))
}

/// `sprint_ticks`: the ticks back in whole microseconds (`tc_core_tick2time` truncates).
fn ticks_text(ticks: u32) -> String {
    format_time_us((ticks as f64 / TICKS_PER_US) as u64)
}

/// `sprint_time64`: a time in nanoseconds with `%.3g` and a unit.
pub(super) fn format_time_ns(ns: i64) -> String {
    let t = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{}s", fmt_g(t / 1e9, 3))
    } else if ns >= 1_000_000 {
        format!("{}ms", fmt_g(t / 1e6, 3))
    } else if ns >= 1000 {
        format!("{}us", fmt_g(t / 1e3, 3))
    } else {
        format!("{ns}ns")
    }
}

/// The options as `tc qdisc show` prints them.
pub(super) fn options_text(p: &NetemParams) -> String {
    let mut s = format!("limit {}", p.limit);
    if p.latency_ticks > 0 {
        s += &format!(" delay {}", ticks_text(p.latency_ticks));
        if p.jitter_ticks > 0 {
            s += &format!("  {}", ticks_text(p.jitter_ticks));
            if p.delay_corr > 0 {
                s += &format!(" {}", pct(p.delay_corr));
            }
        }
    }
    if p.loss > 0 {
        s += &format!(" loss {}", pct(p.loss));
        if p.loss_corr > 0 {
            s += &format!(" {}", pct(p.loss_corr));
        }
    }
    match p.loss_model {
        LossModel::Random => {}
        LossModel::FourState { p13, p31, p32, p23, p14 } => {
            s += &format!(
                " loss state p13 {} p31 {} p32 {} p23 {} p14 {}",
                pct(p13),
                pct(p31),
                pct(p32),
                pct(p23),
                pct(p14)
            );
        }
        LossModel::GilbertElliott { p, r, h, k1 } => {
            s += &format!(" loss gemodel p {} r {} 1-h {} 1-k {}", pct(p), pct(r), pct(u32::MAX - h), pct(k1));
        }
    }
    if p.duplicate > 0 {
        s += &format!(" duplicate {}", pct(p.duplicate));
        if p.dup_corr > 0 {
            s += &format!(" {}", pct(p.dup_corr));
        }
    }
    if p.reorder > 0 {
        s += &format!(" reorder {}", pct(p.reorder));
        if p.reorder_corr > 0 {
            s += &format!(" {}", pct(p.reorder_corr));
        }
    }
    if p.corrupt > 0 {
        s += &format!(" corrupt {}", pct(p.corrupt));
        if p.corrupt_corr > 0 {
            s += &format!(" {}", pct(p.corrupt_corr));
        }
    }
    if p.rate > 0 {
        s += &format!(" rate {}", format_rate_bytes(p.rate));
        if p.packet_overhead != 0 {
            s += &format!(" packetoverhead {}", p.packet_overhead);
        }
        if p.cell_size != 0 {
            s += &format!(" cellsize {}", p.cell_size);
        }
        if p.cell_overhead != 0 {
            s += &format!(" celloverhead {}", p.cell_overhead);
        }
    }
    if let Some(sl) = p.slot.filter(|s| s.min_delay | s.max_delay | s.dist_jitter != 0) {
        if sl.dist_jitter > 0 {
            s += &format!(" slot distribution {} {}", format_time_ns(sl.dist_delay), format_time_ns(sl.dist_jitter));
        } else {
            s += &format!(" slot {} {}", format_time_ns(sl.min_delay), format_time_ns(sl.max_delay));
        }
        let packets = if sl.max_packets == i32::MAX { 0 } else { sl.max_packets };
        let bytes = if sl.max_bytes == i32::MAX { 0 } else { sl.max_bytes };
        if packets != 0 {
            s += &format!(" packets {packets}");
        }
        if bytes != 0 {
            s += &format!(" bytes {bytes}");
        }
    }
    if p.ecn {
        s += " ecn ";
    }
    if p.gap > 0 {
        s += &format!(" gap {}", p.gap);
    }
    s
}
