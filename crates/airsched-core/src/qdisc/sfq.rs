//! sfq: Stochastic Fairness Queueing (Linux 6.18 `net/sched/sch_sfq.c`, the post-3.3 design).
//! Flows hash into `divisor` buckets that own slots (at most `flows`, `depth` packets each);
//! active slots are served round robin with a byte credit (`allot`, refilled by `quantum`);
//! an overflow drops from the longest slot; `perturb` rekeys the hash and rehashes the queued
//! packets in order. Since 6.13 (and in every stable kernel since 2025, commit e4650d7ae425)
//! allot counts bytes; older kernels counted units of 8 bytes.
//! Deviations: per-flow RED (`redflowlimit ...`) is not modelled (warned); the perturbation
//! timer fires exactly every `perturb` seconds from t = 0, applied at the qdisc's next
//! operation; the flow hash is SipHash-2-4 over the 5-tuple ([`flow_hash`]).

pub(crate) mod flow_hash;

use std::collections::VecDeque;

use rand_xoshiro::Xoshiro256PlusPlus;

use self::flow_hash::{flow_hash, SipKey};
use super::classify::sort_filters;
use super::common::{bucket_of, errors_since, filter_diag, StashPeek};
use super::{
    opt_parser, BuildCx, ClassReport, Enq, Filter, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats,
};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag};
use crate::tc::opts::format_size;
use crate::time::Nanos;

/// Packets per slot at most (`SFQ_MAX_DEPTH`); also the default limit.
const SFQ_MAX_DEPTH: u32 = 127;
const SFQ_DEFAULT_FLOWS: u32 = 128;
/// `SFQ_MAX_FLOWS`: slot indices below it, dep[] anchors from it on (as the kernel encodes).
const SFQ_MAX_FLOWS: u32 = 0x10000 - SFQ_MAX_DEPTH - 1;
const SFQ_DEFAULT_DIVISOR: u32 = 1024;
/// A bucket without a slot.
const EMPTY: u32 = u32::MAX;
/// The perturbation keys come from the qdisc's stream (`StreamKind::Qdisc`, its device and
/// handle), tagged as SFQ's.
const SFQ_STREAM_TAG: u64 = 1 << 60;
/// `INT_MAX / HZ` with HZ = 1000: the longest perturbation period the kernel accepts.
const MAX_PERTURB_SECS: u64 = i32::MAX as u64 / 1000;

/// One flow slot (`struct sfq_slot`).
struct Slot {
    queue: VecDeque<PacketId>,
    /// Packets queued (kept apart from `queue.len()` so the depth lists move as in the kernel).
    qlen: u32,
    /// Next slot in the round-robin ring.
    next: u32,
    /// Neighbours in the dep[qlen] list (slot indices, or SFQ_MAX_FLOWS + depth for anchors).
    dep_next: u32,
    dep_prev: u32,
    /// The bucket that owns this slot.
    bucket: u32,
    /// Byte credit for the current round.
    allot: i32,
    backlog: u32,
}

pub struct Sfq {
    handle: Handle,
    limit: u32,
    maxdepth: u32,
    maxflows: u32,
    divisor: u32,
    quantum: u32,
    perturb_secs: u64,
    headdrop: bool,
    /// Bucket -> slot.
    ht: Vec<u32>,
    slots: Vec<Slot>,
    /// Anchors of the lists of slots by queue length: (next, prev); dep[0] lists free slots.
    dep: Vec<(u32, u32)>,
    /// Length of the longest slot.
    cur_depth: u32,
    /// Last slot of the active ring; the one served next is `tail.next`.
    tail: Option<u32>,
    key: SipKey,
    rng: Xoshiro256PlusPlus,
    next_perturb: Nanos,
    filters: Vec<Filter>,
    stash: Option<PacketId>,
    stats: QdiscStats,
    /// Reused by the rehash.
    scratch: Vec<PacketId>,
}

struct SfqConfig {
    limit: u32,
    maxdepth: u32,
    maxflows: u32,
    divisor: u32,
    quantum: u32,
    perturb_secs: u64,
    headdrop: bool,
}

const KNOWN: &[&str] = &[
    "limit",
    "perturb",
    "quantum",
    "divisor",
    "flows",
    "depth",
    "headdrop",
    "redflowlimit",
    "min",
    "max",
    "avpkt",
    "burst",
    "probability",
    "ecn",
    "harddrop",
];

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    // tc sends every field, 0 for those not given; the kernel keeps its value for a 0.
    let (mut limit, mut perturb, mut quantum, mut divisor, mut flows, mut depth) = (0, 0, 0, 0, 0, 0);
    let mut headdrop = false;
    let mut limit_at = None;
    let mut red_warned = false;
    let mut p = opt_parser(&d.opts, d.end, diags);
    while let Some(k) = p.next() {
        match k.text {
            "limit" => {
                let at = p.peek();
                if let Some(v) = p.uint(k, 0, u32::MAX as u64) {
                    if v < 2 {
                        p.error(at.unwrap_or(k), "sfq limit must be > 1 (tc rejects 0 and 1)");
                    }
                    limit = v as u32;
                    limit_at = at;
                }
            }
            "perturb" => perturb = p.uint(k, 0, MAX_PERTURB_SECS).unwrap_or(0),
            "quantum" => {
                let at = p.peek();
                if let Some(v) = p.size(k) {
                    if v > i32::MAX as u64 {
                        p.error(at.unwrap_or(k), format!("invalid quantum {v}: the kernel takes at most {}", i32::MAX));
                    }
                    quantum = v as u32;
                }
            }
            "divisor" => {
                let at = p.peek();
                if let Some(v) = p.uint(k, 0, u32::MAX as u64) {
                    if v != 0 && (!v.is_power_of_two() || v > 65536) {
                        p.error(at.unwrap_or(k), format!("divisor {v} must be a power of two up to 65536"));
                    }
                    divisor = v as u32;
                }
            }
            "flows" => flows = p.uint(k, 0, u32::MAX as u64).unwrap_or(0) as u32,
            "depth" => depth = p.uint(k, 0, u32::MAX as u64).unwrap_or(0) as u32,
            "headdrop" => headdrop = true,
            "redflowlimit" | "min" | "max" | "avpkt" | "burst" | "probability" | "ecn" | "harddrop" => {
                if !red_warned {
                    p.warn(k, "per-flow RED (redflowlimit, min, max, avpkt, burst, probability, ecn, harddrop) accepted but not modelled: sfq runs without it");
                    red_warned = true;
                }
                match k.text {
                    "redflowlimit" | "min" | "max" | "burst" => {
                        p.uint(k, 0, u32::MAX as u64);
                    }
                    "avpkt" => {
                        p.size(k);
                    }
                    "probability" => {
                        p.float(k, 0.0, 1.0);
                    }
                    _ => {}
                }
            }
            _ => {
                // tc stops at the first word it does not know; so does airsched.
                p.unknown(k, "sfq", KNOWN);
                break;
            }
        }
    }
    // sfq_change: flows and divisor first, then depth, then limit (which caps flows).
    let mut c = SfqConfig {
        limit: SFQ_MAX_DEPTH,
        maxdepth: SFQ_MAX_DEPTH,
        maxflows: SFQ_DEFAULT_FLOWS,
        divisor: SFQ_DEFAULT_DIVISOR,
        quantum: cx.mtu.clamp(256, 1 << 20),
        perturb_secs: perturb,
        headdrop,
    };
    if quantum > 0 {
        c.quantum = quantum;
    }
    if flows > 0 {
        c.maxflows = flows.min(SFQ_MAX_FLOWS);
    }
    if divisor > 0 {
        c.divisor = divisor;
        c.maxflows = c.maxflows.min(divisor);
    }
    if depth > 0 {
        c.maxdepth = depth.min(SFQ_MAX_DEPTH);
    }
    if limit > 0 {
        c.limit = limit.min(c.maxdepth * c.maxflows);
        c.maxflows = c.maxflows.min(c.limit);
    }
    if limit >= 2 && c.limit == 1 {
        let msg = format!("invalid limit: depth {} x flows {} caps it at 1", c.maxdepth, c.maxflows);
        match limit_at {
            Some(at) => p.error(at, msg),
            None => p.error_at_end(msg),
        }
    }
    let mut filters = d.filters;
    for f in &filters {
        if f.parent != d.handle {
            diags.push(filter_diag(
                f,
                Severity::Error,
                format!("sfq has no classes to attach filters to: use parent {}", d.handle),
            ));
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    sort_filters(&mut filters);
    let rng = stream(cx.seed, StreamKind::Qdisc, SFQ_STREAM_TAG ^ cx.stream);
    Some(QdiscImpl::Sfq(Sfq::new(d.handle, c, filters, rng)))
}

impl Sfq {
    fn new(handle: Handle, c: SfqConfig, filters: Vec<Filter>, mut rng: Xoshiro256PlusPlus) -> Sfq {
        let anchor = |depth: u32| SFQ_MAX_FLOWS + depth;
        let mut q = Sfq {
            handle,
            limit: c.limit,
            maxdepth: c.maxdepth,
            maxflows: c.maxflows,
            divisor: c.divisor,
            quantum: c.quantum,
            perturb_secs: c.perturb_secs,
            headdrop: c.headdrop,
            ht: vec![EMPTY; c.divisor as usize],
            slots: Vec::with_capacity(c.maxflows as usize),
            dep: (0..=SFQ_MAX_DEPTH).map(|d| (anchor(d), anchor(d))).collect(),
            cur_depth: 0,
            tail: None,
            key: SipKey::draw(&mut rng),
            rng,
            next_perturb: Nanos::from_secs(c.perturb_secs),
            filters,
            stash: None,
            stats: QdiscStats::default(),
            scratch: Vec::with_capacity(c.limit as usize + 1),
        };
        for i in 0..c.maxflows {
            q.slots.push(Slot {
                queue: VecDeque::new(),
                qlen: 0,
                next: i,
                dep_next: 0,
                dep_prev: 0,
                bucket: 0,
                allot: 0,
                backlog: 0,
            });
            q.link(i);
        }
        q
    }

    // --- dep[] lists: slots grouped by queue length, newest first (sfq_link/sfq_dec/sfq_inc).

    fn set_dep_next(&mut self, x: u32, v: u32) {
        match x.checked_sub(SFQ_MAX_FLOWS) {
            Some(d) => self.dep[d as usize].0 = v,
            None => self.slots[x as usize].dep_next = v,
        }
    }

    fn set_dep_prev(&mut self, x: u32, v: u32) {
        match x.checked_sub(SFQ_MAX_FLOWS) {
            Some(d) => self.dep[d as usize].1 = v,
            None => self.slots[x as usize].dep_prev = v,
        }
    }

    /// Put slot x at the head of dep[its qlen].
    fn link(&mut self, x: u32) {
        let d = self.slots[x as usize].qlen;
        let n = self.dep[d as usize].0;
        let s = &mut self.slots[x as usize];
        s.dep_next = n;
        s.dep_prev = SFQ_MAX_FLOWS + d;
        self.dep[d as usize].0 = x;
        self.set_dep_prev(n, x);
    }

    fn unlink(&mut self, x: u32) -> (u32, u32) {
        let (n, p) = (self.slots[x as usize].dep_next, self.slots[x as usize].dep_prev);
        self.set_dep_next(p, n);
        self.set_dep_prev(n, p);
        (n, p)
    }

    fn dec(&mut self, x: u32) {
        let (n, p) = self.unlink(x);
        let d = self.slots[x as usize].qlen;
        self.slots[x as usize].qlen = d - 1;
        if n == p && self.cur_depth == d {
            self.cur_depth -= 1;
        }
        self.link(x);
    }

    fn inc(&mut self, x: u32) {
        self.unlink(x);
        let d = self.slots[x as usize].qlen + 1;
        self.slots[x as usize].qlen = d;
        self.cur_depth = self.cur_depth.max(d);
        self.link(x);
    }

    /// A slot that just became non-empty joins the ring as its new tail (served last in the
    /// current round) with a full quantum.
    fn activate(&mut self, x: u32) {
        match self.tail {
            None => self.slots[x as usize].next = x,
            Some(t) => {
                self.slots[x as usize].next = self.slots[t as usize].next;
                self.slots[t as usize].next = x;
            }
        }
        self.tail = Some(x);
        self.slots[x as usize].allot = self.quantum as i32;
    }

    // --- classification

    fn hash(&self, cx: &QCtx<'_>, pkt: PacketId) -> u32 {
        flow_hash(cx.key(pkt), self.key) & (self.divisor - 1)
    }

    /// The bucket (0-based) of a packet, or None: dropped as unclassified.
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<u32> {
        bucket_of(self.handle, &self.filters, self.divisor, cx, pkt, now, || self.hash(cx, pkt))
    }

    /// The slot of `bucket`, taking a free one if it has none; None if every slot is in use.
    fn slot_for(&mut self, bucket: u32) -> Option<u32> {
        let x = self.ht[bucket as usize];
        if x != EMPTY {
            return Some(x);
        }
        let x = self.dep[0].0;
        if x >= SFQ_MAX_FLOWS {
            return None;
        }
        self.ht[bucket as usize] = x;
        let s = &mut self.slots[x as usize];
        s.bucket = bucket;
        s.backlog = 0;
        Some(x)
    }

    fn push(&mut self, x: u32, pkt: PacketId, cx: &QCtx<'_>) {
        let s = &mut self.slots[x as usize];
        s.queue.push_back(pkt);
        s.backlog += cx.len(pkt);
        self.inc(x);
        if self.slots[x as usize].qlen == 1 {
            self.activate(x);
        }
    }

    fn drop_queued(pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) {
        cx.unstamp(pkt, now);
        cx.drop(pkt);
    }

    /// `sfq_drop`: the queue is over its limit; drop from the longest slot (its tail, or head
    /// with headdrop). If every slot holds one packet, drop the one served next and free it.
    fn drop_longest(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let d = self.cur_depth;
        let x = if d > 1 {
            self.dep[d as usize].0
        } else if d == 1 {
            let t = self.tail.expect("a queued packet means an active ring");
            let x = self.slots[t as usize].next;
            if self.slots[x as usize].next == x {
                self.tail = None;
            } else {
                self.slots[t as usize].next = self.slots[x as usize].next;
            }
            self.ht[self.slots[x as usize].bucket as usize] = EMPTY;
            x
        } else {
            return None;
        };
        let s = &mut self.slots[x as usize];
        let pkt = if self.headdrop { s.queue.pop_front() } else { s.queue.pop_back() }.expect("slot of depth >= 1");
        s.backlog -= cx.len(pkt);
        self.dec(x);
        Self::drop_queued(pkt, cx, now);
        Some(pkt)
    }

    fn enqueue_inner(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let Some(bucket) = self.classify(cx, pkt, now) else {
            cx.drop(pkt);
            return Enq::Dropped;
        };
        let fresh = self.ht[bucket as usize] == EMPTY;
        let Some(x) = self.slot_for(bucket) else {
            cx.drop(pkt);
            return Enq::Dropped;
        };
        if !fresh && self.slots[x as usize].qlen >= self.maxdepth {
            if !self.headdrop {
                cx.drop(pkt);
                return Enq::Dropped;
            }
            // Per-flow head drop: the oldest packet of the flow makes room.
            let s = &mut self.slots[x as usize];
            let head = s.queue.pop_front().expect("a full slot");
            s.backlog = s.backlog - cx.len(head) + cx.len(pkt);
            s.queue.push_back(pkt);
            cx.stamp(pkt, now);
            Self::drop_queued(head, cx, now);
            return Enq::Congestion;
        }
        cx.stamp(pkt, now);
        self.push(x, pkt, cx);
        // The stash still counts in the qdisc's qlen, as in the kernel.
        if self.stats.qlen < self.limit as u64 {
            return Enq::Queued;
        }
        let before = self.slots[x as usize].qlen;
        let victim = self.drop_longest(cx, now);
        if victim == Some(pkt) {
            Enq::Dropped
        } else if self.slots[x as usize].qlen != before {
            Enq::Congestion
        } else {
            Enq::Queued
        }
    }

    /// `sfq_dequeue`: serve the ring; a slot whose credit is spent is skipped (becoming the
    /// tail) with its allot raised by a quantum.
    fn sfq_dequeue(&mut self, cx: &QCtx<'_>) -> Option<PacketId> {
        let mut t = self.tail?;
        let a = loop {
            let a = self.slots[t as usize].next;
            let s = &mut self.slots[a as usize];
            if s.allot > 0 {
                break a;
            }
            s.allot += self.quantum as i32;
            self.tail = Some(a);
            t = a;
        };
        let pkt = self.slots[a as usize].queue.pop_front().expect("active slots are non-empty");
        self.dec(a);
        let len = cx.len(pkt);
        let s = &mut self.slots[a as usize];
        s.backlog -= len;
        if s.qlen == 0 {
            let (bucket, next_a) = (s.bucket, s.next);
            self.ht[bucket as usize] = EMPTY;
            if next_a == a {
                self.tail = None;
            } else {
                self.slots[t as usize].next = next_a;
            }
        } else {
            s.allot -= len as i32;
        }
        Some(pkt)
    }

    /// Perturbations due by `now`: a new key each, and (without filters) the queued packets
    /// rehashed under it, slot by slot in order, so no flow is reordered (`sfq_rehash`).
    /// Packets the rehash drops leave the queue, accounted before the operation that ran it.
    fn perturb_until(&mut self, cx: &mut QCtx<'_>, now: Nanos) {
        if self.perturb_secs == 0 || now < self.next_perturb {
            return;
        }
        let mark = cx.mark();
        while now >= self.next_perturb {
            self.key = SipKey::draw(&mut self.rng);
            if self.filters.is_empty() && self.tail.is_some() {
                self.rehash(cx, now);
            }
            self.next_perturb += Nanos::from_secs(self.perturb_secs);
        }
        self.stats.after_dequeue(None, cx, mark);
    }

    fn rehash(&mut self, cx: &mut QCtx<'_>, now: Nanos) {
        let mut list = std::mem::take(&mut self.scratch);
        for i in 0..self.maxflows {
            if self.slots[i as usize].qlen == 0 {
                continue;
            }
            while let Some(p) = self.slots[i as usize].queue.pop_front() {
                self.dec(i);
                list.push(p);
            }
            let s = &mut self.slots[i as usize];
            s.backlog = 0;
            self.ht[s.bucket as usize] = EMPTY;
        }
        self.tail = None;
        for &p in &list {
            let bucket = self.hash(cx, p);
            match self.slot_for(bucket) {
                Some(x) if self.slots[x as usize].qlen < self.maxdepth => self.push(x, p, cx),
                _ => Self::drop_queued(p, cx, now),
            }
        }
        list.clear();
        self.scratch = list;
    }
}

impl StashPeek for Sfq {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, _now: Nanos) -> Option<PacketId> {
        self.sfq_dequeue(cx)
    }
}

impl Qdisc for Sfq {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        self.perturb_until(cx, now);
        let mark = cx.mark();
        let res = self.enqueue_inner(pkt, cx, now);
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.perturb_until(cx, now);
        self.dequeue_stashed(cx, now)
    }

    /// `qdisc_peek_dequeued`: dequeue into a stash the next dequeue returns.
    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if self.stash.is_none() {
            self.perturb_until(cx, now);
        }
        self.peek_stashed(cx, now)
    }

    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> {
        None
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().for_each(|&p| f(p));
        self.slots.iter().flat_map(|s| s.queue.iter()).for_each(|&p| f(p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let mut options =
            format!("limit {}p quantum {} depth {} ", self.limit, format_size(self.quantum as u64), self.maxdepth);
        if self.headdrop {
            options += "headdrop ";
        }
        options += &format!("divisor {}", self.divisor);
        if self.perturb_secs > 0 {
            options += &format!(" perturb {}sec", self.perturb_secs);
        }
        // `tc -s class show`: one class per bucket holding a slot, with its queue and allot.
        let classes = (0..self.divisor)
            .filter(|&b| self.ht[b as usize] != EMPTY)
            .map(|b| {
                let s = &self.slots[self.ht[b as usize] as usize];
                let stats = QdiscStats {
                    offered_packets: s.qlen as u64,
                    qlen: s.qlen as u64,
                    backlog_bytes: s.backlog as u64,
                    ..Default::default()
                };
                ClassReport {
                    kind: "sfq",
                    classid: Handle(self.handle.0 | ((b + 1) & 0xffff)),
                    parent: self.handle,
                    leaf: None,
                    options: String::new(),
                    stats,
                    xstats: vec![("allot".into(), s.allot as i64)],
                    xstats_text: format!("  allot {}", s.allot),
                }
            })
            .collect();
        out.push(QdiscReport {
            kind: "sfq",
            handle: self.handle,
            parent,
            options,
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
    use crate::qdisc::testutil::{ab_order, build, build_ok, jain, qdisc, run_link, Bench, Source};

    fn sfq(q: &QdiscImpl) -> &Sfq {
        match q {
            QdiscImpl::Sfq(s) => s,
            _ => panic!("not sfq"),
        }
    }

    /// The bucket of each flow of a bench under the qdisc's current key.
    fn buckets(q: &QdiscImpl, b: &mut Bench, flows: u32) -> Vec<u32> {
        (0..flows)
            .map(|f| {
                let p = b.pkt(f, 100);
                let bucket = sfq(q).hash(&b.cx(), p);
                b.pkts.free(p);
                bucket
            })
            .collect()
    }

    fn distinct(v: &[u32]) -> bool {
        let mut s = v.to_vec();
        s.sort();
        s.dedup();
        s.len() == v.len()
    }

    #[test]
    fn equal_saturated_flows_share_equally() {
        // 4 flows each offered at the full 10 Mbit/s (4x overload), 1514-byte frames; default
        // sfq. With distinct buckets each gets a quarter: Jain index >= 0.99.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq"));
        let mut b = Bench::new(4);
        assert!(distinct(&buckets(&q, &mut b, 4)), "the test needs 4 distinct buckets");
        let link = 10_000_000;
        let srcs: Vec<_> = (0..4)
            .map(|f| Source { flow: f, rate_bps: link, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(3) })
            .collect();
        let r = run_link(&mut q, &mut b, &srcs, link, Nanos::from_secs(3), Nanos::from_secs(1));
        let shares: Vec<f64> = (0..4).map(|f| r.rate_bps(f, 2.0)).collect();
        assert!(jain(&shares) >= 0.99, "{shares:?}");
        assert!(shares.iter().all(|&s| (s - 2.5e6).abs() < 0.05 * 2.5e6), "{shares:?}");
        assert!(q.stats().identity_holds(), "{:?}", q.stats());
    }

    #[test]
    fn allot_counts_bytes_per_round() {
        // Reference 14.8 in bytes: quantum 1514; flow A sends 1514-byte frames, flow B
        // 1000-byte ones. Per round A sends one frame; B's credit goes 1514 -> 514 -> -486
        // (two frames), then -486+1514 = 1028 -> 28 -> -972 (two), then 542 -> -458 (one),
        // then 1056 -> 56 -> -944 (two), ... equal bytes in the long run.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq"));
        let mut b = Bench::new(2);
        assert!(distinct(&buckets(&q, &mut b, 2)));
        for _ in 0..20 {
            let a = b.pkt(0, 1500);
            q.enqueue(a, &mut b.cx(), Nanos(0));
            let bb = b.pkt(1, 986);
            q.enqueue(bb, &mut b.cx(), Nanos(0));
        }
        assert_eq!(ab_order(&mut q, &mut b, 13), "ABBABBABABBAB");
        // The class of B's bucket reports its remaining credit in bytes.
        let r = q.reports();
        let allots: Vec<i64> = r[0].classes.iter().map(|c| c.xstats[0].1).collect();
        assert_eq!(allots.iter().filter(|&&a| a == -430).count(), 1, "{allots:?}");
    }

    #[test]
    fn overflow_drops_from_the_longest_flow() {
        let mut b = Bench::new(4);
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq limit 10"));
        assert!(distinct(&buckets(&q, &mut b, 4)));
        let enq = |q: &mut QdiscImpl, b: &mut Bench, f: u32| {
            let p = b.pkt(f, 986);
            (p, q.enqueue(p, &mut b.cx(), Nanos(0)))
        };
        let a: Vec<_> = (0..7).map(|_| enq(&mut q, &mut b, 0).0).collect();
        for _ in 0..3 {
            enq(&mut q, &mut b, 1);
        }
        // The 11th packet (flow B) overflows: A, the longest flow, loses its tail.
        let (_, res) = enq(&mut q, &mut b, 1);
        assert_eq!((res, b.dropped.clone()), (Enq::Queued, vec![a[6]]));
        // A and B both hold 6 now (A linked at depth 6 last): a new A packet makes A the
        // longest (7) and it is the arriving packet itself that goes.
        let (p, res) = enq(&mut q, &mut b, 0);
        assert_eq!((res, b.dropped.last().copied()), (Enq::Dropped, Some(p)));
        let s = q.stats();
        assert_eq!((s.offered_packets, s.qlen, s.drops), (12, 10, 2));
        assert!(s.identity_holds());

        // headdrop: the longest flow loses its oldest packet instead; CN to the arriving flow.
        let mut b = Bench::new(4);
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq limit 4 headdrop"));
        let a: Vec<_> = (0..3).map(|_| enq(&mut q, &mut b, 0).0).collect();
        enq(&mut q, &mut b, 1);
        let (_, res) = enq(&mut q, &mut b, 0);
        assert_eq!((res, b.dropped.clone()), (Enq::Congestion, vec![a[0]]));

        // Every slot holding one packet (defaults: limit 127, 128 slots; 128 flows put in
        // buckets 0..127 by priority 1:1..1:80): the slot served next, the first flow's, loses
        // its packet and its bucket.
        let mut b = Bench::new(128);
        for (i, k) in b.keys.iter_mut().enumerate() {
            k.priority = 0x0001_0000 | (i as u32 + 1);
        }
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq"));
        let first = enq(&mut q, &mut b, 0).0;
        for f in 1..127 {
            enq(&mut q, &mut b, f);
        }
        assert!(b.dropped.is_empty());
        let (_, res) = enq(&mut q, &mut b, 127);
        assert_eq!((res, b.dropped.clone()), (Enq::Queued, vec![first]));
        let classes = &q.reports()[0].classes;
        assert_eq!((classes.len(), classes[0].classid), (127, Handle::new(1, 2)), "the victim's bucket is freed");

        // depth: a flow's packets beyond depth are tail-dropped.
        let mut b = Bench::new(1);
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq depth 2"));
        let res: Vec<_> = (0..3).map(|_| enq(&mut q, &mut b, 0).1).collect();
        assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Dropped]);
    }

    #[test]
    fn perturbation_rehashes_without_reordering() {
        // perturb 1: the key changes every second and the queued packets move to their new
        // buckets in order. 8 flows offered 8 frames/ms, 6 served per ms: always backlogged,
        // with overflow drops. Every flow's departures must keep their sending order.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq perturb 1"));
        let mut b = Bench::new(8);
        let before = buckets(&q, &mut b, 8);
        let key0 = sfq(&q).key;
        // The buckets holding packets, as `tc class show` lists them.
        let held = |q: &QdiscImpl| -> Vec<Handle> { q.reports()[0].classes.iter().map(|c| c.classid).collect() };
        let mut seq = 0u64;
        let mut last = [None::<Nanos>; 8];
        let mut moved_while_queued = false;
        for ms in 0..3_500u64 {
            let now = Nanos::from_ms(ms);
            let held_before = held(&q);
            for f in 0..8 {
                let p = b.pkt(f, 500);
                b.pkts.get_mut(p).created = Nanos(seq);
                seq += 1;
                q.enqueue(p, &mut b.cx(), now);
            }
            let held_after = held(&q);
            // Once every flow is backlogged (after a few ms), the buckets in use change only
            // when a perturbation rehashes them.
            if ms >= 100 && held_after != held_before {
                assert_eq!(ms % 1000, 0, "buckets change only at perturbations");
                moved_while_queued = true;
            }
            for _ in 0..6 {
                let p = q.dequeue(&mut b.cx(), now + Nanos::from_us(500)).expect("backlogged");
                let pk = *b.pkts.get(p);
                assert!(last[pk.flow as usize] < Some(pk.created), "flow {} reordered", pk.flow);
                last[pk.flow as usize] = Some(pk.created);
                b.pkts.free(p);
            }
            for d in b.dropped.drain(..) {
                b.pkts.free(d);
            }
        }
        assert_ne!(sfq(&q).key, key0);
        assert_ne!(buckets(&q, &mut b, 8), before, "the mapping changed");
        assert!(moved_while_queued, "queued packets were rehashed into new buckets");
        assert!(last.iter().all(|l| l.is_some()), "every flow was served");
        assert!(q.stats().identity_holds());
    }

    #[test]
    fn priority_and_filters_choose_the_bucket() {
        let mut b = Bench::new(3);
        b.keys[0].priority = 0x0001_0005; // 1:5 -> bucket 4 (class 1:5)
        let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq");
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq"));
        let p = b.pkt(0, 100);
        q.enqueue(p, &mut b.cx(), Nanos(0));
        assert_eq!(q.reports()[0].classes[0].classid, Handle::new(1, 5));
        // Filters: dport 5001 and source port 40001 -> 1:7; flow 2 (port 40002) matches
        // nothing and is dropped; a flowid beyond the divisor drops too.
        let dport = U32Key::from_field(20, 2, 40001, 0xffff);
        d.filters = vec![
            Filter {
                parent: Handle::new(1, 0),
                prio: 1,
                protocol: ETH_P_IP,
                kind: FilterKind::U32 { keys: vec![dport] },
                classid: Handle::new(1, 7),
                line: 2,
                police: None,
            },
            Filter {
                parent: Handle::new(1, 0),
                prio: 2,
                protocol: ETH_P_IP,
                kind: FilterKind::Fw { handle: 9, mask: 0xffff_ffff },
                classid: Handle::new(1, 0x401),
                line: 3,
                police: None,
            },
        ];
        b.keys[2].mark = 9;
        let mut q = build_ok(d);
        let ps: Vec<_> = (0..3).map(|f| b.pkt(f, 100)).collect();
        let res: Vec<_> = ps.iter().map(|&p| q.enqueue(p, &mut b.cx(), Nanos(0))).collect();
        assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Dropped], "flow 0 by priority, 1 by u32, 2 out of range");
        let classes: Vec<Handle> = q.reports()[0].classes.iter().map(|c| c.classid).collect();
        assert_eq!(classes, vec![Handle::new(1, 5), Handle::new(1, 7)]);
        let s = q.stats();
        assert_eq!((s.drops, s.qlen), (1, 2));
    }

    #[test]
    fn options_and_report() {
        let q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq"));
        assert_eq!(q.reports()[0].options, "limit 127p quantum 1514b depth 127 divisor 1024");
        let s = sfq(&q);
        assert_eq!((s.maxflows, s.slots.len()), (128, 128));
        let q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq limit 3000 perturb 10 headdrop quantum 3000 divisor 256 flows 64 depth 20"));
        // limit is capped to depth x flows = 1280.
        assert_eq!(q.reports()[0].options, "limit 1280p quantum 3000b depth 20 headdrop divisor 256 perturb 10sec");
        // limit lowers flows.
        let q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq limit 16"));
        assert_eq!(sfq(&q).maxflows, 16);
        let (q, d) = build(qdisc(
            1,
            "tc qdisc add dev eth0 root handle 1: sfq redflowlimit 100000 min 8000 max 60000 probability 0.2 ecn",
        ));
        assert!(q.is_some());
        assert_eq!((d.len(), d[0].severity, d[0].col, d[0].token.as_str()), (1, Severity::Warning, 42, "redflowlimit"));
    }

    #[test]
    fn option_errors_name_the_token() {
        let cases = [
            ("tc qdisc add dev eth0 root handle 1: sfq divisor 1000", 50, "1000", "power of two"),
            ("tc qdisc add dev eth0 root handle 1: sfq limit 1", 48, "1", "must be > 1"),
            ("tc qdisc add dev eth0 root handle 1: sfq perturb -1", 50, "-1", "not an integer"),
            ("tc qdisc add dev eth0 root handle 1: sfq flows 1 depth 1 limit 2", 64, "2", "invalid limit"),
            ("tc qdisc add dev eth0 root handle 1: sfq quanta 1514", 42, "quanta", "unknown sfq option"),
            ("tc qdisc add dev eth0 root handle 1: sfq quantum", 42, "quantum", "needs a value"),
        ];
        for (line, col, tok, msg) in cases {
            let (q, d) = build(qdisc(7, line));
            assert!(q.is_none(), "{line}");
            assert_eq!((d[0].line, d[0].col, d[0].token.as_str()), (7, col, tok), "{line}: {d:?}");
            assert!(d[0].message.contains(msg), "{line}: {}", d[0].message);
        }
        // A filter on a class of sfq (which has none to attach to) is rejected at its line.
        let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: sfq");
        d.filters = vec![Filter {
            parent: Handle::new(1, 1),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::MatchAll,
            classid: Handle::new(1, 1),
            line: 4,
            police: None,
        }];
        let (q, diags) = build(d);
        assert!(q.is_none());
        assert_eq!(diags[0].line, 4);
    }
}
