//! fq_pie: flow queueing with a PIE controller per flow (Linux 5.6 to 6.18
//! `net/sched/sch_fq_pie.c` over `include/net/pie.h`; iproute2 6.x `tc/q_fq_pie.c`).
//! Packets hash into `flows` queues served by DRR++ with new and old lists (fq_codel's
//! structure, a `quantum` of bytes per turn); each flow has its own PIE variables
//! ([`PieVars`]), which decide drops at enqueue from the flow's own backlog and delay; over
//! `limit` packets the arriving packet is dropped. Memory above `memory_limit` is only counted
//! (`overmemory`), never dropped for. One timer updates up to 2048 flows' probabilities per
//! run: every `tupdate` when there are at most 2048 flows, else in chunks one jiffy apart.
//!
//! Deviations: as pie's (docs/qdisc-pie.md: the timer's updates run at the next operation, in
//! order, with the state they would have seen; HZ=250; seeded random numbers; ECN marks
//! counted, not written); the flow hash is SipHash-2-4 over the 5-tuple under a seeded key
//! (the kernel's `skb_get_hash`); truesize is fq_codel's model; flows that are empty with no
//! probability and no delay are skipped by the timer (an update leaves them unchanged).

use std::collections::VecDeque;

use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::{bucket_of, errors_since};
use super::pie::{
    first_update, parse_shared, pie_rng, rearmed, shared_options, PieParams, PieStats, PieVars, MAX_PROB,
};
use super::sfq::flow_hash::{flow_hash, SipKey};
use super::{opt_parser, truesize, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::TcDiag;
use crate::tc::opts::format_size;
use crate::time::Nanos;

use super::common::StashPeek;

/// The quantum's netlink range (`fq_pie_q_range`).
const QUANTUM_MAX: u64 = 1 << 20;
/// Flows one timer run updates (`max_cnt`).
const FLOWS_PER_RUN: u32 = 2048;
/// Tags the hash key of an fq_pie qdisc.
const FQ_PIE_STREAM_TAG: u64 = 6 << 60;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Flow {
    queue: VecDeque<PacketId>,
    vars: PieVars,
    deficit: i32,
    backlog: u32,
    list: List,
    /// Empty with no probability and no delay, and updated once so: further updates leave it
    /// as it is, so the timer skips it until a packet arrives.
    settled: bool,
}

pub struct FqPie {
    handle: Handle,
    mtu: u32,
    params: PieParams,
    flows_cnt: u32,
    quantum: u32,
    memory_limit: u32,
    ecn_prob: u32,
    flows: Vec<Flow>,
    unsettled: u32,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    new_flow_count: u32,
    memory_usage: u32,
    overmemory: u32,
    pstats: PieStats,
    hash_key: SipKey,
    rng: Xoshiro256PlusPlus,
    /// When the timer runs next, and the flow it starts from.
    timer_next: Nanos,
    cursor: u32,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

const KNOWN: &[&str] = &[
    "limit",
    "flows",
    "target",
    "tupdate",
    "alpha",
    "beta",
    "quantum",
    "memory_limit",
    "ecn_prob",
    "ecn",
    "noecn",
    "bytemode",
    "nobytemode",
    "dq_rate_estimator",
    "no_dq_rate_estimator",
];

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut params = PieParams::new();
    params.limit = 10 * 1024;
    let (mut flows, mut quantum, mut memory_limit, mut ecn_prob) = (1024u32, cx.mtu, 32u32 << 20, 10u32);
    // `tc qdisc change` appends its options to the add's: flows on a later line than the
    // first option's is a change of flows. (Not caught: an add without options whose first
    // change sets flows.)
    let first_line = d.opts.first().map_or(0, |t| t.line);
    let mut p = opt_parser(&d.opts, d.end, diags);
    while let Some(k) = p.next() {
        let at = p.peek().unwrap_or(k);
        match k.text {
            "flows" => match p.uint(k, 0, u32::MAX as u64) {
                Some(_) if k.line != first_line => {
                    p.error(k, "Number of flows cannot be changed (the kernel refuses it on an existing fq_pie)")
                }
                Some(v) if v > 65536 => p.error(at, format!("flows {v}: Number of flows must range in [1..65536]")),
                Some(v) if v > 0 => flows = v as u32,
                _ => {}
            },
            "quantum" => match p.size(k) {
                Some(v) if v > QUANTUM_MAX => p.error(at, format!("quantum {v} is out of range: 1 to {QUANTUM_MAX}")),
                Some(v) if v > 0 => quantum = v as u32,
                _ => {}
            },
            "memory_limit" => match p.size(k) {
                Some(v) if v > u32::MAX as u64 => p.error(at, "memory_limit out of range: tc sends 32 bits"),
                Some(v) if v > 0 => memory_limit = v as u32,
                _ => {}
            },
            "ecn_prob" => {
                if let Some(v) = p.uint(k, 0, 99).filter(|&v| v > 0) {
                    ecn_prob = v as u32;
                }
            }
            _ => {
                if !parse_shared(&mut p, k, &mut params) {
                    // tc stops at the first word it does not know; so does airsched.
                    p.unknown(k, "fq_pie", KNOWN);
                    break;
                }
            }
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    let key = SipKey::draw(&mut stream(cx.seed, StreamKind::Qdisc, FQ_PIE_STREAM_TAG ^ cx.stream));
    let n = flows as usize;
    Some(QdiscImpl::FqPie(Box::new(FqPie {
        handle: d.handle,
        mtu: cx.mtu,
        params,
        flows_cnt: flows,
        quantum,
        memory_limit,
        ecn_prob,
        flows: (0..n)
            .map(|_| Flow {
                queue: VecDeque::new(),
                vars: PieVars::new(),
                deficit: 0,
                backlog: 0,
                list: List::None,
                settled: false,
            })
            .collect(),
        unsettled: flows,
        new_flows: VecDeque::with_capacity(n),
        old_flows: VecDeque::with_capacity(n),
        new_flow_count: 0,
        memory_usage: 0,
        overmemory: 0,
        pstats: PieStats::default(),
        hash_key: key,
        rng: pie_rng(cx, d.handle, FQ_PIE_STREAM_TAG),
        timer_next: first_update(),
        cursor: 0,
        stash: None,
        stats: QdiscStats::default(),
    })))
}

impl FqPie {
    /// `fq_pie_classify` without filters (fq_pie has no class operations, so no filter can be
    /// attached to it): a skb priority `handle:m` picks flow m - 1, else the hash.
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<u32> {
        let hash = || ((flow_hash(cx.key(pkt), self.hash_key) as u64 * self.flows_cnt as u64) >> 32) as u32;
        bucket_of(self.handle, &[], self.flows_cnt, cx, pkt, now, hash)
    }

    fn unsettle(&mut self, f: usize) {
        if self.flows[f].settled {
            self.flows[f].settled = false;
            self.unsettled += 1;
        }
    }

    /// `fq_pie_timer` runs due by `now`: each updates up to 2048 flows from the cursor with
    /// their own backlog; the timer re-arms itself `tupdate` jiffies on once every flow was
    /// updated, else for the current jiffy (which fires on the next one).
    fn run_timer(&mut self, now: Nanos) {
        let tupdate = self.params.tupdate;
        while self.timer_next <= now {
            if self.unsettled == 0 && self.cursor == 0 {
                // Every flow is at a fixed point: the remaining runs change nothing.
                while self.timer_next <= now {
                    self.timer_next = rearmed(self.timer_next, tupdate);
                }
                break;
            }
            let end = (self.cursor + FLOWS_PER_RUN).min(self.flows_cnt);
            for f in &mut self.flows[self.cursor as usize..end as usize] {
                if f.settled {
                    continue;
                }
                let rest = f.vars.at_rest(f.backlog as u64);
                f.vars.calculate_probability(&self.params, f.backlog as u64);
                if rest {
                    f.settled = true;
                    self.unsettled -= 1;
                }
            }
            self.cursor = end;
            let delay = if self.cursor >= self.flows_cnt {
                self.cursor = 0;
                tupdate
            } else {
                0
            };
            self.timer_next = rearmed(self.timer_next, delay);
        }
    }

    fn enqueue_inner(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let Some(idx) = self.classify(cx, pkt, now) else {
            cx.drop(pkt);
            return Enq::Dropped;
        };
        let i = idx as usize;
        let len = cx.len(pkt);
        let ts = truesize(len);
        if self.stats.qlen >= self.params.limit as u64 {
            self.pstats.overlimit += 1;
            return self.drop_arrival(i, pkt, cx);
        }
        if self.memory_usage > self.memory_limit.saturating_add(ts) {
            self.overmemory += 1;
        }
        let flow = &mut self.flows[i];
        let keep = if !flow.vars.drop_early(&self.params, flow.backlog as u64, len, self.mtu, &mut self.rng) {
            true
        } else if self.params.ecn
            && flow.vars.prob <= (MAX_PROB / 100) * self.ecn_prob as u64
            && cx.key(pkt).tos & 3 != 0
        {
            self.pstats.ecn_mark += 1;
            true
        } else {
            false
        };
        if !keep {
            return self.drop_arrival(i, pkt, cx);
        }
        self.pstats.packets_in += 1;
        self.memory_usage += ts;
        cx.stamp(pkt, now);
        self.unsettle(i);
        let flow = &mut self.flows[i];
        if flow.list == List::None {
            flow.list = List::New;
            flow.deficit = self.quantum as i32;
            self.new_flows.push_back(idx);
            self.new_flow_count += 1;
        }
        flow.queue.push_back(pkt);
        flow.backlog += len;
        Enq::Queued
    }

    fn drop_arrival(&mut self, i: usize, pkt: PacketId, cx: &mut QCtx<'_>) -> Enq {
        self.pstats.dropped += 1;
        self.flows[i].vars.accu_prob = 0;
        cx.drop(pkt);
        Enq::Dropped
    }

    fn pop_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// `fq_pie_qdisc_dequeue`: new flows first, then old ones, each while its deficit lasts.
    fn fq_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        loop {
            let (from_new, f) = match self.new_flows.front() {
                Some(&f) => (true, f),
                None => (false, *self.old_flows.front()?),
            };
            let flow = &mut self.flows[f as usize];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum as i32;
                flow.list = List::Old;
                self.pop_head(from_new);
                self.old_flows.push_back(f);
                continue;
            }
            let Some(p) = flow.queue.pop_front() else {
                // Empty: a new flow passes through the old list first (no starvation).
                self.pop_head(from_new);
                if from_new && !self.old_flows.is_empty() {
                    self.flows[f as usize].list = List::Old;
                    self.old_flows.push_back(f);
                } else {
                    self.flows[f as usize].list = List::None;
                }
                continue;
            };
            let len = cx.len(p);
            flow.deficit -= len as i32;
            flow.backlog -= len;
            self.memory_usage -= truesize(len);
            flow.vars.process_dequeue(&self.params, len, cx.enqueued_at(p), now, flow.backlog as u64);
            return Some(p);
        }
    }

    fn options(&self) -> String {
        let p = &self.params;
        let mut o = shared_options(p);
        o = o.replacen(&format!("limit {}p ", p.limit), &format!("limit {}p flows {} ", p.limit, self.flows_cnt), 1);
        o += &format!(
            " quantum {} memory_limit {} ecn_prob {}",
            format_size(self.quantum as u64),
            format_size(self.memory_limit as u64),
            self.ecn_prob
        );
        for (on, word) in [(p.ecn, " ecn"), (p.bytemode, " bytemode"), (p.dq_rate_estimator, " dq_rate_estimator")] {
            if on {
                o += word;
            }
        }
        o
    }

    #[cfg(test)]
    fn flow_prob(&self, f: usize) -> u64 {
        self.flows[f].vars.prob
    }
}

impl StashPeek for FqPie {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.fq_dequeue(cx, now)
    }
}

impl Qdisc for FqPie {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        self.run_timer(now);
        let mark = cx.mark();
        let res = self.enqueue_inner(pkt, cx, now);
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.run_timer(now);
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.run_timer(now);
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
        self.flows.iter().flat_map(|fl| fl.queue.iter()).for_each(|&p| f(p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let s = &self.pstats;
        let text = format!(
            "  pkts_in {} overlimit {} overmemory {} dropped {} ecn_mark {}\n  new_flow_count {} new_flows_len {} old_flows_len {} memory_used {}",
            s.packets_in,
            s.overlimit,
            self.overmemory,
            s.dropped,
            s.ecn_mark,
            self.new_flow_count,
            self.new_flows.len(),
            self.old_flows.len(),
            self.memory_usage
        );
        let xstats = [
            ("pkts_in", s.packets_in),
            ("overlimit", s.overlimit),
            ("overmemory", self.overmemory),
            ("dropped", s.dropped),
            ("ecn_mark", s.ecn_mark),
            ("new_flow_count", self.new_flow_count),
            ("new_flows_len", self.new_flows.len() as u32),
            ("old_flows_len", self.old_flows.len() as u32),
            ("memory_used", self.memory_usage),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v as i64))
        .collect();
        out.push(QdiscReport {
            kind: "fq_pie",
            handle: self.handle,
            parent,
            options: self.options(),
            stats: self.stats,
            xstats,
            xstats_text: text,
            classes: vec![],
        });
    }
}

#[cfg(test)]
mod tests;
