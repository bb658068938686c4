//! fq: the Fair Queue packet scheduler (Linux 6.1 `net/sched/sch_fq.c`, before the 6.7
//! priority bands; iproute2 6.1 `tc/q_fq.c`). Packets are kept per flow; flows with packets
//! are served round robin in two lists, new flows before old ones, each with a byte credit
//! (`quantum`, a new flow `initial_quantum`); a flow may be throttled until its next packet's
//! time (`maxrate`, or the socket's pacing rate) and waits in a time-ordered set meanwhile.
//! Packets of priority `TC_PRIO_CONTROL` (7) skip everything (the internal flow, `highprio`).
//!
//! What the simulator hands fq: packets that a node forwards (the AP's wlan0) carry no socket
//! and no departure time (EDT), as in Linux, where forwarded packets are orphaned and their
//! receive timestamp cleared. fq then keys them by `skb_get_hash & orphan_mask` (a SipHash of
//! the 5-tuple under a seeded key here, the kernel's per-boot jhash secret there) and paces
//! them only by `maxrate`. airsched's TCP model computes the pacing rate of
//! `tcp_update_pacing_rate` for TCP Small Queues (`tcp/sender.rs`) but gives packets no socket
//! and no EDT timestamp, so every packet is treated as orphaned: the pacing of local TCP
//! senders by fq is not modelled, `horizon` has no packet to act on (warned), and `pacing`
//! applies `maxrate` only.
//!
//! The kernel's steps are followed: the credit refill on a new flow after `refill_delay`
//! (jiffies of 4 ms, `CONFIG_HZ=250`), `low_rate_threshold`, the one-second clamp on a
//! packet's time (`pkts_too_long`), the drift correction (`len -= min(len/2, now -
//! time_next_packet)`), the unthrottle latency EWMA (the device wakes fq at the exact time
//! here, so it stays 0), `ce_threshold` (counted as `ce_mark`; CE is not written), and the
//! garbage collection of flows detached for 3 s once there are 2 × `buckets` flows.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use super::common::{errors_since, StashPeek};
use super::pie::JIFFY_US;
use super::sfq::flow_hash::{flow_hash, SipKey};
use super::{opt_parser, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::{format_rate_bytes, format_size, format_time_us, OptParser};
use crate::time::Nanos;

/// Tags the hash key's stream of an fq qdisc.
const FQ_STREAM_TAG: u64 = 7 << 60;
/// `TC_PRIO_CONTROL`.
const TC_PRIO_CONTROL: u32 = 7;
/// `FQ_GC_AGE` (3 s) and `FQ_GC_MAX` (8 flows per collection).
const GC_AGE_NS: u64 = 3_000_000_000;
const GC_MAX: usize = 8;
/// `~0U`: no maximum rate, no CE threshold.
const NONE_U32: u32 = u32::MAX;

/// The options (`fq_sched_data`'s configuration).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FqParams {
    pub limit: u32,
    pub flow_limit: u32,
    pub quantum: u32,
    pub initial_quantum: u32,
    /// Bytes per second (`~0U`: none).
    pub maxrate: u32,
    pub low_rate_threshold: u32,
    /// Jiffies.
    pub refill_delay: u32,
    pub orphan_mask: u32,
    pub buckets_log: u32,
    pub pacing: bool,
    /// Microseconds (`~0U`: none).
    pub ce_threshold: u32,
    /// Nanoseconds.
    pub timer_slack: u32,
    /// Microseconds.
    pub horizon_us: u32,
    pub horizon_drop: bool,
}

impl FqParams {
    /// `fq_init` with a psched_mtu of `mtu`.
    pub fn new(mtu: u32) -> FqParams {
        FqParams {
            limit: 10000,
            flow_limit: 100,
            quantum: 2 * mtu,
            initial_quantum: 10 * mtu,
            maxrate: NONE_U32,
            low_rate_threshold: 550_000 / 8,
            refill_delay: 40_000 / JIFFY_US,
            orphan_mask: 1024 - 1,
            buckets_log: 10,
            pacing: true,
            ce_threshold: NONE_U32,
            timer_slack: 10_000,
            horizon_us: 10_000_000,
            horizon_drop: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not in a list (`fq_flow_set_detached`): `age` is when it left.
    Detached,
    Listed,
    Throttled,
}

struct Flow {
    queue: VecDeque<PacketId>,
    credit: i64,
    time_next_packet: u64,
    state: State,
    /// Jiffies when it was detached.
    age: u64,
    /// The orphan key (`hash & orphan_mask`) and its tree (`hash_ptr`), for gc.
    key: u32,
    tree: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FqStats {
    gc_flows: u64,
    highprio: u64,
    throttled: u64,
    flows_plimit: u64,
    pkts_too_long: u64,
    ce_mark: u64,
}

pub struct Fq {
    handle: Handle,
    params: FqParams,
    hash_key: SipKey,
    flows: Vec<Flow>,
    /// Free slots of `flows` (collected flows).
    free: Vec<usize>,
    by_key: HashMap<u32, usize>,
    internal: VecDeque<PacketId>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    /// Throttled flows by time of their next packet (ties in arrival order).
    delayed: BinaryHeap<Reverse<(u64, u64, usize)>>,
    delayed_seq: u64,
    time_next_delayed_flow: u64,
    unthrottle_latency_ns: u64,
    /// Allocated flows and the detached ones among them (`q->flows`, `q->inactive_flows`).
    nflows: u32,
    inactive: u32,
    throttled_flows: u32,
    fstats: FqStats,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

const KNOWN: &[&str] = &[
    "limit",
    "flow_limit",
    "quantum",
    "initial_quantum",
    "maxrate",
    "buckets",
    "pacing",
    "nopacing",
    "refill_delay",
    "low_rate_threshold",
    "orphan_mask",
    "timer_slack",
    "ce_threshold",
    "horizon",
    "horizon_drop",
    "horizon_cap",
];

const HORIZON_WARNING: &str = "accepted, no effect here: the horizon applies to packets with a departure time \
     (EDT) from their socket, and airsched's packets carry none (fq treats them as forwarded)";
const CE_WARNING: &str = "ce_threshold accepted; packets that waited longer are counted (ce_mark), CE is not \
     written into them";

/// `get_unsigned` (base 0) into 32 bits.
fn u32_opt(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    p.uint(k, 0, u32::MAX as u64).map(|v| v as u32)
}

/// A rate into the kernel's 32-bit bytes per second (`get_rate`).
fn rate_u32(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    if p.peek().is_some_and(|t| t.text.contains('%')) {
        let v = p.next().unwrap_or(k);
        p.error(v, "a rate in percent of the device's speed is not supported: give the rate (like 10mbit)");
        return None;
    }
    let at = p.peek();
    // tc's get_rate takes 0 (low_rate_threshold 0 turns the threshold off); airsched's rate
    // parser refuses a zero rate elsewhere.
    if let Some(t) =
        at.filter(|t| t.text.starts_with('0') && !t.text[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        if crate::units::parse_rate_bps(&format!("1{}", &t.text[1..])).is_ok() {
            p.next();
            return Some(0);
        }
    }
    let bytes = p.rate(k)? / 8;
    match u32::try_from(bytes) {
        Ok(b) => Some(b),
        Err(_) => {
            p.error(at.unwrap_or(k), "rate too large: tc sends it in 32 bits of bytes per second (34 Gbit/s at most)");
            None
        }
    }
}

/// A time in whole microseconds in 32 bits (`get_time`).
fn time_us32(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let t = p.time(k)?;
    match u32::try_from(t.as_ns() / 1000) {
        Ok(us) => Some(us),
        Err(_) => {
            p.error(at.unwrap_or(k), "time out of range: tc sends microseconds in 32 bits (at most 4294s)");
            None
        }
    }
}

fn parse(p: &mut OptParser<'_, '_>, params: &mut FqParams) {
    while let Some(k) = p.next() {
        match k.text {
            "limit" => params.limit = u32_opt(p, k).unwrap_or(params.limit),
            "flow_limit" => params.flow_limit = u32_opt(p, k).unwrap_or(params.flow_limit),
            "buckets" => {
                let at = p.peek();
                if let Some(b) = u32_opt(p, k).filter(|&b| b > 0) {
                    // tc sends ilog2 rounded up; the kernel takes 1 to 18.
                    let log = 32 - (b - 1).leading_zeros();
                    if (1..=18).contains(&log) {
                        params.buckets_log = log;
                    } else {
                        p.error(at.unwrap_or(k), format!("{b} buckets: the kernel takes 2 to 262144 (a power of two)"));
                    }
                }
            }
            "maxrate" => params.maxrate = rate_u32(p, k).unwrap_or(params.maxrate),
            "low_rate_threshold" => params.low_rate_threshold = rate_u32(p, k).unwrap_or(params.low_rate_threshold),
            "quantum" => {
                let at = p.peek();
                if let Some(q) = u32_opt(p, k) {
                    if q > 0 && q <= 1 << 20 {
                        params.quantum = q;
                    } else {
                        p.error(at.unwrap_or(k), "invalid quantum: the kernel takes 1 to 1048576 bytes");
                    }
                }
            }
            "initial_quantum" => params.initial_quantum = u32_opt(p, k).unwrap_or(params.initial_quantum),
            "orphan_mask" => params.orphan_mask = u32_opt(p, k).unwrap_or(params.orphan_mask),
            "refill_delay" => {
                if let Some(us) = time_us32(p, k) {
                    params.refill_delay = us.div_ceil(JIFFY_US);
                }
            }
            "ce_threshold" => {
                if let Some(us) = time_us32(p, k) {
                    params.ce_threshold = us;
                    p.warn(k, CE_WARNING);
                }
            }
            "timer_slack" => {
                if let Some(t) = p.time(k) {
                    params.timer_slack = t.as_ns().min(u32::MAX as u64) as u32;
                }
            }
            "horizon" => {
                if let Some(us) = time_us32(p, k) {
                    params.horizon_us = us;
                    p.warn(k, format!("horizon {HORIZON_WARNING}"));
                }
            }
            "horizon_drop" => params.horizon_drop = true,
            "horizon_cap" => {
                params.horizon_drop = false;
                p.warn(k, format!("horizon_cap {HORIZON_WARNING}"));
            }
            "pacing" => params.pacing = true,
            "nopacing" => params.pacing = false,
            _ => {
                p.unknown(k, "fq", KNOWN);
                break;
            }
        }
    }
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut params = FqParams::new(cx.mtu);
    let mut p = opt_parser(&d.opts, d.end, diags);
    parse(&mut p, &mut params);
    if errors_since(diags, from) {
        return None;
    }
    let key = SipKey::draw(&mut stream(cx.seed, StreamKind::Qdisc, FQ_STREAM_TAG ^ cx.stream ^ d.handle.0 as u64));
    Some(QdiscImpl::Fq(Box::new(Fq::new(d.handle, params, key))))
}

/// `hash_ptr(sk, log)` of the orphan pseudo-socket `(hash << 1) | 1` (`hash_64`).
fn tree_of(key: u32, log: u32) -> u32 {
    let sk = ((key as u64) << 1) | 1;
    (sk.wrapping_mul(0x61c8_8646_80b5_83eb) >> (64 - log)) as u32
}

/// Jiffies (4 ms) at `now`.
fn jiffies(now: u64) -> u64 {
    now / (JIFFY_US as u64 * 1000)
}

impl Fq {
    fn new(handle: Handle, params: FqParams, hash_key: SipKey) -> Fq {
        Fq {
            handle,
            hash_key,
            flows: Vec::with_capacity(64),
            free: vec![],
            by_key: HashMap::with_capacity(64),
            internal: VecDeque::new(),
            new_flows: VecDeque::with_capacity(64),
            old_flows: VecDeque::with_capacity(64),
            delayed: BinaryHeap::with_capacity(64),
            delayed_seq: 0,
            time_next_delayed_flow: u64::MAX,
            unthrottle_latency_ns: 0,
            nflows: 0,
            inactive: 0,
            throttled_flows: 0,
            fstats: FqStats::default(),
            stash: None,
            stats: QdiscStats::default(),
            params,
        }
    }

    /// `fq_gc`: free up to 8 flows of `tree` detached for more than 3 s.
    fn gc(&mut self, tree: u32, now: u64) {
        let limit = jiffies(now).saturating_sub(GC_AGE_NS / (JIFFY_US as u64 * 1000));
        let mut n = 0;
        for i in 0..self.flows.len() {
            if n == GC_MAX {
                break;
            }
            let f = &self.flows[i];
            if f.tree == tree && f.state == State::Detached && f.age < limit && self.by_key.get(&f.key) == Some(&i) {
                self.by_key.remove(&f.key);
                self.free.push(i);
                n += 1;
            }
        }
        self.nflows -= n as u32;
        self.inactive -= n as u32;
        self.fstats.gc_flows += n as u64;
    }

    /// `fq_classify` for an orphaned packet: its flow, created if new.
    fn classify(&mut self, key: u32, now: u64) -> usize {
        let log = self.params.buckets_log;
        let tree = tree_of(key, log);
        if self.nflows >= (2u32 << log) && self.inactive > self.nflows / 2 {
            self.gc(tree, now);
        }
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        let f = Flow {
            queue: VecDeque::new(),
            credit: self.params.initial_quantum as i64,
            time_next_packet: 0,
            state: State::Detached,
            age: jiffies(now) | 1,
            key,
            tree,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.flows[i] = f;
                i
            }
            None => {
                self.flows.push(f);
                self.flows.len() - 1
            }
        };
        self.by_key.insert(key, i);
        self.nflows += 1;
        self.inactive += 1;
        i
    }

    /// `fq_check_throttled`.
    fn check_throttled(&mut self, now: u64) {
        if self.time_next_delayed_flow > now {
            return;
        }
        let sample = now - self.time_next_delayed_flow;
        self.unthrottle_latency_ns -= self.unthrottle_latency_ns >> 3;
        self.unthrottle_latency_ns += sample >> 3;
        self.time_next_delayed_flow = u64::MAX;
        while let Some(&Reverse((t, _, i))) = self.delayed.peek() {
            if t > now {
                self.time_next_delayed_flow = t;
                break;
            }
            self.delayed.pop();
            self.throttled_flows -= 1;
            self.flows[i].state = State::Listed;
            self.old_flows.push_back(i);
        }
    }

    /// Take the first flow off the new (or old) list.
    fn pop_head(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    fn set_throttled(&mut self, i: usize) {
        let t = self.flows[i].time_next_packet;
        self.delayed_seq += 1;
        self.delayed.push(Reverse((t, self.delayed_seq, i)));
        self.flows[i].state = State::Throttled;
        self.throttled_flows += 1;
        self.fstats.throttled += 1;
        self.time_next_delayed_flow = self.time_next_delayed_flow.min(t);
    }
}

impl StashPeek for Fq {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    /// `fq_dequeue`.
    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if let Some(p) = self.internal.pop_front() {
            return Some(p);
        }
        let now = now.as_ns();
        self.check_throttled(now);
        let (i, pkt) = loop {
            let new = !self.new_flows.is_empty();
            let i = if new { *self.new_flows.front()? } else { *self.old_flows.front()? };
            if self.flows[i].credit <= 0 {
                self.flows[i].credit += self.params.quantum as i64;
                self.pop_head(new);
                self.old_flows.push_back(i);
                continue;
            }
            match self.flows[i].queue.front() {
                Some(&p) => {
                    // A forwarded packet's time to send is its arrival.
                    let time_next = cx.enqueued_at(p).as_ns().max(self.flows[i].time_next_packet);
                    if now < time_next {
                        self.pop_head(new);
                        self.flows[i].time_next_packet = time_next;
                        self.set_throttled(i);
                        continue;
                    }
                    if self.params.ce_threshold != NONE_U32
                        && (now as i64 - time_next as i64 - self.params.ce_threshold as i64 * 1000) > 0
                    {
                        self.fstats.ce_mark += 1;
                    }
                    self.flows[i].queue.pop_front();
                    break (i, p);
                }
                None => {
                    self.pop_head(new);
                    // A pass through old_flows first, against starvation.
                    if new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(i);
                    } else {
                        let f = &mut self.flows[i];
                        f.state = State::Detached;
                        f.age = jiffies(now) | 1;
                        self.inactive += 1;
                    }
                }
            }
        };
        let p = &self.params;
        let f = &mut self.flows[i];
        let mut plen = cx.len(pkt) as u64;
        f.credit -= plen as i64;
        if !p.pacing {
            return Some(pkt);
        }
        let rate = p.maxrate as u64;
        if rate <= p.low_rate_threshold as u64 {
            f.credit = 0;
        } else {
            plen = plen.max(p.quantum as u64);
            if f.credit > 0 {
                return Some(pkt);
            }
        }
        if p.maxrate != NONE_U32 {
            // A rate of 0 leaves the length in nanoseconds as it is (then clamped to 1 s).
            let mut len = plen * 1_000_000_000;
            len = len.checked_div(rate).unwrap_or(len);
            if len > 1_000_000_000 {
                len = 1_000_000_000;
                self.fstats.pkts_too_long += 1;
            }
            if f.time_next_packet > 0 {
                len -= (len / 2).min(now.saturating_sub(f.time_next_packet));
            }
            f.time_next_packet = now + len;
        }
        Some(pkt)
    }
}

impl Qdisc for Fq {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = if self.stats.qlen >= self.params.limit as u64 {
            cx.drop(pkt);
            Enq::Dropped
        } else if cx.key(pkt).priority & 15 == TC_PRIO_CONTROL {
            cx.stamp(pkt, now);
            self.internal.push_back(pkt);
            self.fstats.highprio += 1;
            Enq::Queued
        } else {
            let key = flow_hash(cx.key(pkt), self.hash_key) & self.params.orphan_mask;
            let i = self.classify(key, now.as_ns());
            let f = &mut self.flows[i];
            if f.queue.len() as u32 >= self.params.flow_limit {
                self.fstats.flows_plimit += 1;
                cx.drop(pkt);
                Enq::Dropped
            } else {
                if f.state == State::Detached {
                    f.state = State::Listed;
                    self.new_flows.push_back(i);
                    if jiffies(now.as_ns()) > f.age + self.params.refill_delay as u64 {
                        f.credit = f.credit.max(self.params.quantum as i64);
                    }
                    self.inactive -= 1;
                }
                cx.stamp(pkt, now);
                f.queue.push_back(pkt);
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

    /// The watchdog: when the first throttled flow may send (lists empty otherwise).
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.stats.qlen == 0 {
            return None;
        }
        if self.stash.is_some() || !self.internal.is_empty() || !self.new_flows.is_empty() || !self.old_flows.is_empty()
        {
            return Some(now);
        }
        (self.time_next_delayed_flow != u64::MAX).then_some(Nanos(self.time_next_delayed_flow))
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().chain(self.internal.iter()).for_each(|&p| f(p));
        for (i, fl) in self.flows.iter().enumerate() {
            if self.by_key.get(&fl.key) == Some(&i) {
                fl.queue.iter().for_each(|&p| f(p));
            }
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let s = &self.fstats;
        let mut text =
            format!("  flows {} (inactive {} throttled {})", self.nflows, self.inactive, self.throttled_flows);
        text += &format!("\n  gc {} highprio {} throttled {}", s.gc_flows, s.highprio, s.throttled);
        if self.unthrottle_latency_ns > 0 {
            text += &format!(" latency {}", super::netem::format_time_ns(self.unthrottle_latency_ns as i64));
        }
        if s.ce_mark > 0 {
            text += &format!(" ce_mark {}", s.ce_mark);
        }
        if s.flows_plimit > 0 {
            text += &format!(" flows_plimit {}", s.flows_plimit);
        }
        if s.pkts_too_long > 0 {
            text += &format!("\n  pkts_too_long {} alloc_errors 0", s.pkts_too_long);
        }
        let xstats = [
            ("flows", self.nflows as u64),
            ("inactive", self.inactive as u64),
            ("throttled_flows", self.throttled_flows as u64),
            ("gc", s.gc_flows),
            ("highprio", s.highprio),
            ("throttled", s.throttled),
            ("latency", self.unthrottle_latency_ns),
            ("ce_mark", s.ce_mark),
            ("flows_plimit", s.flows_plimit),
            ("pkts_too_long", s.pkts_too_long),
        ]
        .iter()
        .map(|&(n, v)| (n.to_string(), v as i64))
        .collect();
        out.push(QdiscReport {
            kind: "fq",
            handle: self.handle,
            parent,
            options: options_text(&self.params),
            stats: self.stats,
            xstats,
            xstats_text: text,
            classes: vec![],
        });
    }
}

/// `fq_print_opt` of iproute2 6.1 (every value is dumped by the kernel, so every word shows).
fn options_text(p: &FqParams) -> String {
    let mut s = format!(
        "limit {}p flow_limit {}p buckets {} orphan_mask {}",
        p.limit,
        p.flow_limit,
        1u32 << p.buckets_log,
        p.orphan_mask
    );
    if !p.pacing {
        s += " nopacing";
    }
    s += &format!(
        " quantum {} initial_quantum {}",
        format_size(p.quantum as u64),
        format_size(p.initial_quantum as u64)
    );
    if p.maxrate != NONE_U32 {
        s += &format!(" maxrate {}", format_rate_bytes(p.maxrate as u64));
    }
    if p.low_rate_threshold != 0 {
        s += &format!(" low_rate_threshold {}", format_rate_bytes(p.low_rate_threshold as u64));
    }
    s += &format!(" refill_delay {}", format_time_us(p.refill_delay as u64 * JIFFY_US as u64));
    if p.ce_threshold != NONE_U32 {
        s += &format!(" ce_threshold {}", format_time_us(p.ce_threshold as u64));
    }
    s += &format!(" timer_slack {}", super::netem::format_time_ns(p.timer_slack as i64));
    s += &format!(" horizon {}", format_time_us(p.horizon_us as u64));
    s += if p.horizon_drop { " horizon_drop" } else { " horizon_cap" };
    s
}

#[cfg(test)]
mod tests;
