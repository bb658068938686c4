//! cbq: Floyd–Jacobson class-based queueing as Linux implemented it (`net/sched/sch_cbq.c`,
//! Alexey Kuznetsov) in its last version, Linux 6.2: the qdisc was removed in 6.3 (commit
//! 051d44209842). By then only the "classic" overlimit action was left (TCA_CBQ_OVL_STRATEGY and
//! TCA_CBQ_POLICE are rejected, the delay timer is gone), `prio` above 8 is rejected, and a filter
//! verdict of "drop" is not used as a class. tc's side (rate tables, maxidle/offtime formulas,
//! defaults) follows iproute2 just before "tc: remove support for CBQ" (2023), see `params`.
//!
//! The model: every class (the qdisc's own root "link" class included) has a queue (a pfifo unless
//! grafted) and an idle-time estimator, `avgidle`, updated after each transmission from the time
//! between packet ends on a link of rate `bandwidth` minus the time the packet takes at the
//! class's `rate` (EWMA with weight 2^-ewma, kept scaled by 2^ewma). A class is under limit while
//! its `undertime` is past; otherwise it may send by borrowing from the first under-limit class on
//! its `borrow` chain (its parent unless `bounded`), subject to the top-level cutoff; a class that
//! cannot borrow is penalised (`overactions`) and the watchdog is armed. Dequeue serves priorities
//! 0..7 in order and runs weighted round robin (deficit refilled by `quantum`) within one.
//! All times are the kernel's psched ticks (64 ns), derived from `now >> 6`.
//!
//! Deviations (see docs/qdisc-cbq.md): class "Sent" is counted when the packet leaves the class
//! (the kernel counts it one dequeue later, in `cbq_update`); an inner class's dropped/backlog
//! counters include the classes that share into it, so `offered = sent + dropped + qlen` holds at
//! every class; a child returning NET_XMIT_CN counts as queued; the qdisc line reports the real
//! backlog (the kernel's cbq never maintained its own byte backlog); classes are listed link
//! first, then in the order they were added (the kernel lists them in hash order).

mod config;
mod params;
mod report;
#[cfg(test)]
mod tests;

use params::RateTable;

use super::classify::{classify_at, sort_filters, Filter, Verdict};
use super::common::{errors_since, filter_diag, pending_wakeup};
use super::{diag_error, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag};
use crate::time::Nanos;

/// No class (end of an active list).
const NIL: usize = usize::MAX;
/// `TC_CBQ_MAXLEVEL`: the top-level cutoff when borrowing is unrestricted.
const MAXLEVEL: u8 = 8;
/// Priority bands 0..7 (`TC_CBQ_MAXPRIO` = 8 on the tc side, 1..8).
const NPRIO: usize = 8;
/// `PSCHED_PASTPERFECT`: "under limit".
const PASTPERFECT: i64 = 0;
/// `cbq_update`: an idle gap above 2^27 ticks (8.6 s) resets avgidle to maxidle.
const IDLE_HUGE: u64 = 128 * 1024 * 1024;
/// `TC_PRIO_MAX`: defmaps have 16 entries; `TC_PRIO_BESTEFFORT` is 0.
const TC_PRIO_MAX: usize = 15;
/// Initial `minidle` of a class (`-0x7FFFFFFF`).
const MINIDLE_DEFAULT: i64 = -0x7FFF_FFFF;

/// psched ticks (64 ns) of a simulated time.
#[inline]
fn ticks(t: Nanos) -> i64 {
    (t.0 >> 6) as i64
}

struct Class {
    classid: Handle,
    /// Tree parent (`tparent`); None for the link class.
    tparent: Option<usize>,
    /// Estimator parent: None if `isolated`.
    share: Option<usize>,
    /// Lender: None if `bounded` (and for the link class).
    borrow: Option<usize>,
    children: Vec<usize>,
    /// 0 for leaves, 1 + the highest child level otherwise.
    level: u8,
    /// Band 0..7 (tc prio - 1); `cpriority` is the band it is linked in (always equal since the
    /// lowprio strategy was removed).
    priority: u8,
    cpriority: u8,
    ewma_log: u32,
    /// Scaled by 2^ewma, like avgidle.
    maxidle: i64,
    offtime: i64,
    minidle: i64,
    avpkt: u32,
    rtab: RateTable,
    allot: i64,
    quantum: i64,
    weight: i64,
    split: Option<usize>,
    defmap: u32,
    /// Per skb->priority, the class a split node hands unclassified packets to.
    defaults: [Option<usize>; TC_PRIO_MAX + 1],
    /// Next class with backlog in the same band (circular list), NIL if not active.
    next_alive: usize,
    /// End of the last transmission (ticks).
    last: i64,
    undertime: i64,
    avgidle: i64,
    deficit: i64,
    delayed: bool,
    q: QdiscImpl,
    q_handle: Handle,
    /// Counters of this class's own queue.
    own: QdiscStats,
    overlimits: u64,
    borrows: u64,
    overactions: u64,
}

impl Class {
    fn new(classid: Handle, rtab: RateTable, q: QdiscImpl) -> Class {
        Class {
            classid,
            tparent: None,
            share: None,
            borrow: None,
            children: Vec::new(),
            level: 0,
            priority: 0,
            cpriority: 0,
            ewma_log: 0,
            maxidle: 0,
            offtime: 0,
            minidle: MINIDLE_DEFAULT,
            avpkt: 0,
            rtab,
            allot: 0,
            quantum: 0,
            weight: 0,
            split: None,
            defmap: 0,
            defaults: [None; TC_PRIO_MAX + 1],
            next_alive: NIL,
            last: 0,
            undertime: PASTPERFECT,
            avgidle: 0,
            deficit: 0,
            delayed: false,
            q,
            q_handle: Handle::UNSPEC,
            own: QdiscStats::default(),
            overlimits: 0,
            borrows: 0,
            overactions: 0,
        }
    }
}

pub struct Cbq {
    handle: Handle,
    /// `classes[0]` is the link class (class id = the qdisc handle).
    classes: Vec<Class>,
    /// (class id, index), sorted.
    by_id: Vec<(u32, usize)>,
    filters: Vec<Filter>,
    nclasses: [i64; NPRIO],
    /// Sum of the weights in each band (`unsigned int` in the kernel).
    quanta: [u32; NPRIO],
    activemask: u32,
    /// Tail of each band's circular list of active classes.
    active: [usize; NPRIO],
    /// The class that sent last, its lender and the length: the estimator update runs at the
    /// next dequeue (Linux has no end-of-transmission event).
    tx_class: Option<usize>,
    tx_borrowed: usize,
    tx_len: u32,
    /// Time of the last dequeue (ticks).
    now: i64,
    wd_expires: i64,
    toplevel: u8,
    watchdog: Option<Nanos>,
    /// A packet taken by `peek` (qdisc_peek_dequeued).
    stash: Option<PacketId>,
    stats: QdiscStats,
    /// `dev->mtu` (1500), bound of a sane quantum.
    dev_mtu: i64,
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let n0 = diags.len();
    let link = params::parse_qdisc(&d, diags)?;
    let mut q = Cbq::new(d.handle, link, cx);
    for c in &d.classes {
        if c.kind.text != "cbq" {
            diags.push(diag_error(
                c.kind,
                format!("class kind \"{}\" under a cbq qdisc; expected \"cbq\"", c.kind.text),
            ));
            continue;
        }
        if let Some(spec) = params::parse_class(c, diags) {
            q.add_class(c, spec, cx, diags);
        }
    }
    for g in d.grafts {
        match q.lookup(g.classid) {
            Some(i) => {
                q.classes[i].q_handle = g.qdisc.reports().first().map_or(Handle::UNSPEC, |r| r.handle);
                q.classes[i].q = g.qdisc;
            }
            None => diags
                .push(diag_error(g.at, format!("cbq {} has no class {} to attach a qdisc to", d.handle, g.classid))),
        }
    }
    let mut filters = d.filters;
    for f in &filters {
        if q.lookup(f.parent).is_none() {
            diags.push(filter_diag(
                f,
                Severity::Error,
                format!("filter parent {} is neither cbq {} nor one of its classes", f.parent, d.handle),
            ));
        } else if f.classid.major() != 0 && q.lookup(f.classid).is_none() {
            diags.push(filter_diag(
                f,
                Severity::Warning,
                format!("flowid {} names no class of cbq {}: matching packets fall back to the defmap (or the class the filter is attached to)", f.classid, d.handle),
            ));
        }
    }
    sort_filters(&mut filters);
    q.filters = filters;
    if errors_since(diags, n0) {
        return None;
    }
    Some(QdiscImpl::Cbq(Box::new(q)))
}

impl Cbq {
    fn lookup(&self, id: Handle) -> Option<usize> {
        self.by_id.binary_search_by_key(&id.0, |e| e.0).ok().map(|i| self.by_id[i].1)
    }

    // ----- classification and enqueue -----

    /// `cbq_classify`: skb->priority naming a class; else filters from the root down through
    /// inner classes (a result without major is a priority for the node's defmap); on failure the
    /// defmap of the node where it stopped (priority, then best effort), else that node itself.
    /// None: a filter's action dropped the packet (cbq_enqueue drops and counts it).
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<usize> {
        let key = cx.key(pkt);
        let prio = key.priority;
        if (prio ^ self.handle.0) >> 16 == 0 {
            if let Some(c) = self.lookup(Handle(prio)) {
                return Some(c);
            }
        }
        let ip_len = cx.pkts.get(pkt).ip_len;
        let mut head = 0;
        loop {
            let res = match classify_at(&self.filters, self.classes[head].classid, key, ip_len, now) {
                Verdict::Class(res) => res,
                Verdict::Shot => return None,
                Verdict::Miss => break,
            };
            let found = if res.major() != 0 {
                self.lookup(res)
            } else {
                let d = &self.classes[head].defaults;
                d[res.0 as usize & TC_PRIO_MAX].or(d[0])
            };
            let Some(cl) = found else { break };
            if self.classes[cl].level >= self.classes[head].level {
                break;
            }
            if self.classes[cl].level == 0 {
                return Some(cl);
            }
            head = cl;
        }
        if prio >> 16 == 0 {
            let d = &self.classes[head].defaults;
            if let Some(c) = d[prio as usize & TC_PRIO_MAX].or(d[0]) {
                return Some(c);
            }
        }
        Some(head)
    }

    /// `cbq_activate_class`: append to the tail of its band's circular list.
    fn activate(&mut self, cl: usize) {
        let prio = self.classes[cl].cpriority as usize;
        let tail = self.active[prio];
        self.active[prio] = cl;
        if tail != NIL {
            self.classes[cl].next_alive = self.classes[tail].next_alive;
            self.classes[tail].next_alive = cl;
        } else {
            self.classes[cl].next_alive = cl;
            self.activemask |= 1 << prio;
        }
    }

    /// `cbq_mark_toplevel`: lower the cutoff to the level of the first under-limit class on the
    /// new packet's borrow chain.
    fn mark_toplevel(&mut self, cl: usize, now: i64) {
        let toplevel = self.toplevel;
        if toplevel <= self.classes[cl].level {
            return;
        }
        let mut c = cl;
        loop {
            if self.classes[c].undertime < now {
                self.toplevel = self.classes[c].level;
                return;
            }
            match self.classes[c].borrow {
                Some(b) if toplevel > self.classes[b].level => c = b,
                _ => return,
            }
        }
    }

    // ----- the estimator -----

    /// `cbq_update`: account the last transmission in the sender and every class it shares into.
    fn update(&mut self) {
        let Some(this) = self.tx_class.take() else { return };
        let len = self.tx_len;
        let link_t = self.classes[0].rtab.l2t(len);
        // End of service, assuming the packet went out at the link rate when it was dequeued.
        let now = self.now + link_t;
        let mut cl = Some(this);
        while let Some(ci) = cl {
            let c = &mut self.classes[ci];
            let mut avgidle = c.avgidle;
            let idle = now - c.last;
            if idle as u64 > IDLE_HUGE {
                avgidle = c.maxidle;
            } else {
                // true_avgidle = (1-W) true_avgidle + W idle, kept scaled by 1/W.
                let idle = idle - c.rtab.l2t(len);
                avgidle += idle - (avgidle >> c.ewma_log);
            }
            if avgidle <= 0 {
                avgidle = avgidle.max(c.minidle);
                c.avgidle = avgidle;
                // Wait until (1-W) true_avgidle + W delay = 0, plus the time the packet owes at
                // the class rate beyond what the link already took.
                let wait = (-avgidle) - ((-avgidle) >> c.ewma_log);
                c.undertime = now + wait - link_t + c.rtab.l2t(len);
            } else {
                c.undertime = PASTPERFECT;
                c.avgidle = avgidle.min(c.maxidle);
            }
            if now - c.last > 0 {
                c.last = now;
            }
            cl = c.share;
        }
        self.update_toplevel(this, self.tx_borrowed);
    }

    /// `cbq_update_toplevel`: if the sender still has backlog, raise/regenerate the cutoff from
    /// its lender chain.
    fn update_toplevel(&mut self, cl: usize, borrowed: usize) {
        if self.toplevel < self.classes[borrowed].level || self.classes[cl].own.qlen <= 1 {
            return;
        }
        let mut b = Some(borrowed);
        while let Some(bi) = b {
            if self.classes[bi].undertime == PASTPERFECT {
                self.toplevel = self.classes[bi].level;
                return;
            }
            b = self.classes[bi].borrow;
        }
    }

    /// `cbq_under_limit`: the class itself if under limit, else the first under-limit lender
    /// within the cutoff; None (and the overlimit action if the chain ended) otherwise.
    fn under_limit(&mut self, this: usize) -> Option<usize> {
        let now = self.now;
        let c = &mut self.classes[this];
        if c.tparent.is_none() || c.undertime == PASTPERFECT || now >= c.undertime {
            c.delayed = false;
            return Some(this);
        }
        let mut cl = this;
        loop {
            let Some(b) = self.classes[cl].borrow else {
                self.classes[this].overlimits += 1;
                self.overlimit(this);
                return None;
            };
            cl = b;
            if self.classes[cl].level > self.toplevel {
                return None;
            }
            let c = &self.classes[cl];
            if c.undertime == PASTPERFECT || now >= c.undertime {
                break;
            }
        }
        self.classes[cl].delayed = false;
        Some(cl)
    }

    /// `cbq_overlimit` (the classic action): sleep until undertime + offtime, minus the part of
    /// the negative avgidle that is forgiven; arm the watchdog, no later than the earliest
    /// undertime on the borrow chain when the cutoff is maximal.
    fn overlimit(&mut self, cl: usize) {
        let now = self.now;
        let c = &mut self.classes[cl];
        let mut delay = c.undertime - now;
        if !c.delayed {
            delay += c.offtime;
            if c.avgidle < 0 {
                delay -= (-c.avgidle) - ((-c.avgidle) >> c.ewma_log);
            }
            c.avgidle = c.avgidle.max(c.minidle);
            delay = delay.max(1);
            c.undertime = now + delay;
            c.overactions += 1;
            c.delayed = true;
        }
        if self.wd_expires == 0 || self.wd_expires > delay {
            self.wd_expires = delay;
        }
        if self.toplevel == MAXLEVEL {
            let mut base = self.wd_expires;
            let mut b = self.classes[cl].borrow;
            while let Some(bi) = b {
                let d = self.classes[bi].undertime - now;
                if d < base {
                    base = d.max(1);
                }
                b = self.classes[bi].borrow;
            }
            self.wd_expires = base;
        }
    }

    // ----- dequeue -----

    /// `cbq_dequeue_prio`: weighted round robin over the band's active classes.
    fn dequeue_prio(&mut self, prio: usize, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mut cl_tail = self.active[prio];
        let mut cl_prev = cl_tail;
        let mut cl = self.classes[cl_prev].next_alive;
        loop {
            let mut deficit = false;
            loop {
                let mut skip = false;
                let mut borrow = cl;
                if self.classes[cl].own.qlen > 0 {
                    match self.under_limit(cl) {
                        Some(b) => borrow = b,
                        None => skip = true,
                    }
                }
                if !skip && self.classes[cl].deficit <= 0 {
                    // Allotment of this round used up: refill and pass the turn.
                    deficit = true;
                    self.classes[cl].deficit += self.classes[cl].quantum;
                } else if !skip {
                    let mark = cx.mark();
                    let out = self.classes[cl].q.dequeue(cx, now);
                    self.classes[cl].own.after_dequeue(out, cx, mark);
                    match out {
                        Some(p) => {
                            self.sent(prio, cl, borrow, cx.len(p));
                            return Some(p);
                        }
                        // Possible with a shaping child (tbf) or an AQM that dropped everything.
                        None => skip = true,
                    }
                }
                if skip && (self.classes[cl].own.qlen == 0 || prio != self.classes[cl].cpriority as usize) {
                    // Empty (or penalised into another band): unlink it.
                    self.classes[cl_prev].next_alive = self.classes[cl].next_alive;
                    self.classes[cl].next_alive = NIL;
                    if cl == cl_tail {
                        cl_tail = cl_prev;
                        if cl == cl_tail {
                            self.active[prio] = NIL;
                            self.activemask &= !(1 << prio);
                            if self.classes[cl].own.qlen > 0 {
                                self.activate(cl);
                            }
                            return None;
                        }
                        self.active[prio] = cl_tail;
                    }
                    if self.classes[cl].own.qlen > 0 {
                        self.activate(cl);
                    }
                    cl = cl_prev;
                }
                cl_prev = cl;
                cl = self.classes[cl].next_alive;
                if cl_prev == cl_tail {
                    break;
                }
            }
            if !deficit {
                break;
            }
        }
        self.active[prio] = cl_prev;
        None
    }

    /// Bookkeeping of a packet handed out by class `cl`, lent by `borrow`.
    fn sent(&mut self, prio: usize, cl: usize, borrow: usize, len: u32) {
        self.classes[cl].deficit -= i64::from(len);
        self.tx_class = Some(cl);
        self.tx_borrowed = borrow;
        self.tx_len = len;
        if borrow != cl {
            self.classes[borrow].borrows += 1;
            self.classes[cl].borrows += 1;
        }
        if self.classes[cl].deficit <= 0 {
            // Round over for this class: the next one starts its turn with a fresh quantum.
            self.active[prio] = cl;
            let next = self.classes[cl].next_alive;
            self.classes[next].deficit += self.classes[next].quantum;
        }
    }

    fn dequeue_1(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mut mask = self.activemask & 0xff;
        while mask != 0 {
            let prio = mask.trailing_zeros() as usize;
            mask &= !(1 << prio);
            if let Some(p) = self.dequeue_prio(prio, cx, now) {
                return Some(p);
            }
        }
        None
    }

    /// `cbq_dequeue`: update the estimators for the previous packet, then try the bands; if
    /// nothing can go, reset the cutoff and the link's undertime and try once more; if still
    /// nothing, count an overlimit and arm the watchdog.
    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        self.watchdog = None;
        if self.tx_class.is_some() {
            self.update();
        }
        self.now = ticks(now);
        let out = loop {
            self.wd_expires = 0;
            if let Some(p) = self.dequeue_1(cx, now) {
                break Some(p);
            }
            if self.toplevel == MAXLEVEL && self.classes[0].undertime == PASTPERFECT {
                break None;
            }
            self.toplevel = MAXLEVEL;
            self.classes[0].undertime = PASTPERFECT;
        };
        self.stats.after_dequeue(out, cx, mark);
        if out.is_none() && self.stats.qlen > 0 {
            self.stats.overlimits += 1;
            if self.wd_expires != 0 {
                self.watchdog = Some(Nanos(((self.now + self.wd_expires) as u64) << 6));
            }
        }
        out
    }
}

impl Qdisc for Cbq {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let Some(cl) = self.classify(cx, pkt, now) else {
            cx.drop(pkt);
            self.stats.after_enqueue(pkt, Enq::Dropped, cx, mark);
            return Enq::Dropped;
        };
        let res = self.classes[cl].q.enqueue(pkt, cx, now);
        self.classes[cl].own.after_enqueue(pkt, res, cx, mark);
        self.stats.after_enqueue(pkt, res, cx, mark);
        self.mark_toplevel(cl, ticks(now));
        if res != Enq::Dropped && self.classes[cl].next_alive == NIL {
            self.activate(cl);
        }
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if let Some(p) = self.stash.take() {
            let mark = cx.mark();
            self.stats.after_dequeue(Some(p), cx, mark);
            return Some(p);
        }
        self.dequeue_inner(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if self.stash.is_none() {
            let p = self.dequeue_inner(cx, now)?;
            // Held here until dequeued: still queued as far as the counters go.
            let len = u64::from(cx.len(p));
            self.stats.sent_packets -= 1;
            self.stats.sent_bytes -= len;
            self.stats.qlen += 1;
            self.stats.backlog_bytes += len;
            self.stash = Some(p);
        }
        self.stash
    }

    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        // The watchdog, or a shaping child that will release a packet.
        self.classes
            .iter()
            .filter(|c| c.own.qlen > 0)
            .filter_map(|c| pending_wakeup(&c.q, now))
            .chain(self.watchdog)
            .min()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        if let Some(p) = self.stash {
            f(p);
        }
        for c in &self.classes {
            c.q.for_each_queued(f);
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        self.push_reports(parent, out);
    }
}
