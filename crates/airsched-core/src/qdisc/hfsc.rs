//! hfsc — Hierarchical Fair Service Curve, as `net/sched/sch_hfsc.c` of Linux 6.1–6.18 behaves
//! (read from 6.18; the paths airsched runs are the same in 6.1.0-56, which has the 2023
//! "upgrade rt to sc" fix), configured the way iproute2 6.1's `tc/q_hfsc.c` does it.
//!
//! What is the kernel's, exactly (see [`curve`] for the arithmetic):
//! - the class tree with a root class (`q->root`, class id `MAJOR:`) that holds the classes
//!   added with `parent MAJOR:`; levels (a leaf is 0, a parent one above its highest child);
//! - per class the real-time curve (`rt`: deadline and eligible curves, `cl_cumul`), the
//!   link-sharing curve (`ls`: virtual curve, `cl_total`, `cl_vt`, periods, `cl_cvtmin`,
//!   `cl_cvtoff`, `cl_vtadj`) and the upper limit (`ul`: `cl_myf`, fit time `cl_f`,
//!   `cl_cfmin`), each updated by `rtsc_min` when the class becomes backlogged (`init_ed`,
//!   `init_vf`) and at each dequeue (`update_ed`, `update_d`, `update_vf`);
//! - the eligible tree (ordered by eligible time, FIFO among equal ones) and per class the
//!   vt tree and cf tree of its active children (by virtual time, by fit time);
//! - `hfsc_dequeue`: the real-time criterion first (the eligible class with the smallest
//!   deadline), else the link-sharing criterion (from the root, the first child in vt order
//!   whose fit time has come, down to a leaf); the watchdog at the smallest eligible time or
//!   the root's `cl_cfmin` (`hfsc_schedule_watchdog`), `overlimits` counted when nothing may go;
//! - `hfsc_classify` (skb->priority naming a leaf, the root's filters, an inner class's filters
//!   when a filter names it, only downwards, then `MAJOR:default`, else the packet is dropped),
//!   `hfsc_qlen_notify` when an AQM child empties itself, the leaf's head peeked at the first
//!   enqueue of a real-time class;
//! - `hfsc_change_class`: a class under a parent with only `rt` forces the parent's curve to
//!   `sc` ("Forced curve change on parent 'rt' to 'sc'"); a leaf that gets a child keeps its
//!   qdisc, purged and unused (still shown by `tc qdisc show`).
//!
//! Time is the kernel's psched clock: `now >> 6` ticks of 64 ns. The trees are small sorted
//! `Vec`s of class indices (capacity reserved at build time: no allocation per packet); their
//! order is the kernel's rb-trees' in-order walk.
//!
//! Deviations (docs/qdisc-hfsc.md): the counters of inner classes and of the root class are their
//! leaves' sums (the kernel prints 0 for all but the xstats), so that offered = sent + dropped +
//! queued holds at every class; classes are listed by class id (the kernel walks its hash); a
//! child's `NET_XMIT_CN` counts as queued; rate estimators are not modelled.

use std::fmt::Write as _;

use super::classify::{classify_at, sort_filters, Filter, Verdict};
use super::common::{errors_since, filter_diag, pending_wakeup, StashPeek};
use super::{
    default_child, diag_error, diag_warning, BuildCx, ClassReport, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl,
    QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag};
use crate::tc::opts::{format_rate_bytes, format_time_us};
use crate::time::Nanos;

pub(super) mod curve;
#[cfg(test)]
mod tests;

use curve::{matches, parse_class, Isc, Rtsc, Sc};

const RSC: u8 = 1;
const FSC: u8 = 2;
const USC: u8 = 4;
/// The root class's index.
const ROOT: usize = 0;

/// One class (`struct hfsc_class`); index 0 is the root class.
struct Class {
    classid: Handle,
    parent: Option<usize>,
    children: Vec<usize>,
    level: u32,
    flags: u8,
    rsc: Isc,
    fsc: Isc,
    usc: Isc,
    deadline: Rtsc,
    eligible: Rtsc,
    virt: Rtsc,
    ulimit: Rtsc,
    /// Bytes sent through the class (`cl_total`) and by the real-time criterion (`cl_cumul`).
    total: u64,
    cumul: u64,
    d: u64,
    e: u64,
    vt: u64,
    f: u64,
    myf: u64,
    cfmin: u64,
    cvtmin: u64,
    vtadj: u64,
    cvtoff: u64,
    vtperiod: u32,
    parentperiod: u32,
    nactive: u32,
    /// In the eligible tree (`!RB_EMPTY_NODE(&cl->el_node)`).
    in_el: bool,
    /// Active children by `vt`, and by `f`.
    vt_tree: Vec<usize>,
    cf_tree: Vec<usize>,
    /// The class's qdisc (a leaf's queue; an inner class keeps the one it had, purged).
    child: QdiscImpl,
    /// The grafted qdisc's handle (none for the default pfifo).
    leaf: Handle,
    /// Traffic through the child: offered, dropped, queued, and sent (the kernel's bstats).
    stats: QdiscStats,
}

impl Class {
    fn new(classid: Handle, parent: Option<usize>, child: QdiscImpl) -> Class {
        Class {
            classid,
            parent,
            children: Vec::new(),
            level: 0,
            flags: 0,
            rsc: Isc::default(),
            fsc: Isc::default(),
            usc: Isc::default(),
            deadline: Rtsc::default(),
            eligible: Rtsc::default(),
            virt: Rtsc::default(),
            ulimit: Rtsc::default(),
            total: 0,
            cumul: 0,
            d: 0,
            e: 0,
            vt: 0,
            f: 0,
            myf: 0,
            cfmin: 0,
            cvtmin: 0,
            vtadj: 0,
            cvtoff: 0,
            vtperiod: 0,
            parentperiod: 0,
            nactive: 0,
            in_el: false,
            vt_tree: Vec::new(),
            cf_tree: Vec::new(),
            child,
            leaf: Handle::UNSPEC,
            stats: QdiscStats::default(),
        }
    }

    /// `hfsc_change_rsc` (at time 0: scripts are applied before traffic).
    fn set_rsc(&mut self, sc: Sc) {
        self.rsc = Isc::new(sc);
        self.deadline = Rtsc::new(&self.rsc, 0, self.cumul);
        self.eligible = self.deadline;
        if self.rsc.convex() {
            self.eligible.dx = 0;
            self.eligible.dy = 0;
        }
        self.flags |= RSC;
    }

    /// `hfsc_change_fsc`.
    fn set_fsc(&mut self, sc: Sc) {
        self.fsc = Isc::new(sc);
        self.virt = Rtsc::new(&self.fsc, self.vt, self.total);
        self.flags |= FSC;
    }

    /// `hfsc_change_usc`.
    fn set_usc(&mut self, sc: Sc) {
        self.usc = Isc::new(sc);
        self.ulimit = Rtsc::new(&self.usc, 0, self.total);
        self.flags |= USC;
    }
}

pub struct Hfsc {
    handle: Handle,
    /// `default` as tc sent it (a minor, hex).
    defcls: u16,
    classes: Vec<Class>,
    /// (class id, index), sorted.
    by_id: Vec<(u32, usize)>,
    /// The eligible tree: backlogged real-time classes by `e`.
    eligible: Vec<usize>,
    filters: Vec<Filter>,
    stats: QdiscStats,
    stash: Option<PacketId>,
    /// The watchdog armed by the last dequeue that found nothing to send.
    watchdog: Option<Nanos>,
}

/// `psched_get_time()`: the clock in 64 ns ticks.
#[inline]
fn ticks(now: Nanos) -> u64 {
    now.0 >> 6
}

/// Insert `i` into `tree` ordered by `key`, after the entries with an equal key (the kernel's
/// rb-tree inserts an equal key to the right).
fn tree_insert(tree: &mut Vec<usize>, i: usize, key: impl Fn(usize) -> u64) {
    let k = key(i);
    let pos = tree.partition_point(|&j| key(j) <= k);
    tree.insert(pos, i);
}

fn tree_remove(tree: &mut Vec<usize>, i: usize) {
    if let Some(pos) = tree.iter().position(|&j| j == i) {
        tree.remove(pos);
    }
}

impl Hfsc {
    fn find(&self, classid: u32) -> Option<usize> {
        self.by_id.binary_search_by_key(&classid, |e| e.0).ok().map(|i| self.by_id[i].1)
    }

    fn in_el_or_vttree(&self, i: usize) -> bool {
        let c = &self.classes[i];
        (c.flags & FSC != 0 && c.nactive != 0) || (c.flags & RSC != 0 && c.in_el)
    }

    fn eltree_insert(&mut self, i: usize) {
        let mut t = std::mem::take(&mut self.eligible);
        tree_insert(&mut t, i, |j| self.classes[j].e);
        self.eligible = t;
        self.classes[i].in_el = true;
    }

    fn eltree_remove(&mut self, i: usize) {
        if self.classes[i].in_el {
            tree_remove(&mut self.eligible, i);
            self.classes[i].in_el = false;
        }
    }

    fn eltree_update(&mut self, i: usize) {
        self.eltree_remove(i);
        self.eltree_insert(i);
    }

    /// `eltree_get_mindl`: among the classes eligible at `cur`, the first with the smallest
    /// deadline.
    fn eltree_get_mindl(&self, cur: u64) -> Option<usize> {
        let mut best: Option<usize> = None;
        for &j in &self.eligible {
            let c = &self.classes[j];
            if c.e > cur {
                break;
            }
            if best.is_none_or(|b| c.d < self.classes[b].d) {
                best = Some(j);
            }
        }
        best
    }

    fn vttree_insert(&mut self, i: usize) {
        let p = self.classes[i].parent.expect("a class in a vt tree has a parent");
        let mut t = std::mem::take(&mut self.classes[p].vt_tree);
        tree_insert(&mut t, i, |j| self.classes[j].vt);
        self.classes[p].vt_tree = t;
    }

    fn vttree_remove(&mut self, i: usize) {
        let p = self.classes[i].parent.expect("a class in a vt tree has a parent");
        tree_remove(&mut self.classes[p].vt_tree, i);
    }

    fn vttree_update(&mut self, i: usize) {
        self.vttree_remove(i);
        self.vttree_insert(i);
    }

    fn cftree_insert(&mut self, i: usize) {
        let p = self.classes[i].parent.expect("a class in a cf tree has a parent");
        let mut t = std::mem::take(&mut self.classes[p].cf_tree);
        tree_insert(&mut t, i, |j| self.classes[j].f);
        self.classes[p].cf_tree = t;
    }

    fn cftree_remove(&mut self, i: usize) {
        let p = self.classes[i].parent.expect("a class in a cf tree has a parent");
        tree_remove(&mut self.classes[p].cf_tree, i);
    }

    fn cftree_update(&mut self, i: usize) {
        self.cftree_remove(i);
        self.cftree_insert(i);
    }

    /// `vttree_firstfit`: the first child of `i` in vt order whose fit time has come.
    fn vttree_firstfit(&self, i: usize, cur: u64) -> Option<usize> {
        self.classes[i].vt_tree.iter().copied().find(|&j| self.classes[j].f <= cur)
    }

    /// `vttree_get_minvt`: the leaf the link-sharing criterion serves, from the root down.
    fn vttree_get_minvt(&mut self, cur: u64) -> Option<usize> {
        if self.classes[ROOT].cfmin > cur {
            return None;
        }
        let mut cl = ROOT;
        while self.classes[cl].level > 0 {
            cl = self.vttree_firstfit(cl, cur)?;
            let vt = self.classes[cl].vt;
            let p = self.classes[cl].parent.expect("not the root");
            if self.classes[p].cvtmin < vt {
                self.classes[p].cvtmin = vt;
            }
        }
        Some(cl)
    }

    fn update_cfmin(&mut self, i: usize) {
        let first = self.classes[i].cf_tree.first().copied();
        self.classes[i].cfmin = first.map_or(0, |j| self.classes[j].f);
    }

    /// `init_ed`: the class becomes backlogged for real-time service.
    fn init_ed(&mut self, i: usize, next_len: u32, cur: u64) {
        let c = &mut self.classes[i];
        let rsc = c.rsc;
        c.deadline.min_with(&rsc, cur, c.cumul);
        c.eligible = c.deadline;
        if rsc.convex() {
            c.eligible.dx = 0;
            c.eligible.dy = 0;
        }
        c.e = c.eligible.y2x(c.cumul);
        c.d = c.deadline.y2x(c.cumul + next_len as u64);
        self.eltree_insert(i);
    }

    fn update_ed(&mut self, i: usize, next_len: u32) {
        let c = &mut self.classes[i];
        c.e = c.eligible.y2x(c.cumul);
        c.d = c.deadline.y2x(c.cumul + next_len as u64);
        self.eltree_update(i);
    }

    fn update_d(&mut self, i: usize, next_len: u32) {
        let c = &mut self.classes[i];
        c.d = c.deadline.y2x(c.cumul + next_len as u64);
    }

    /// `init_vf`: the class (and the ancestors it makes active) join their parents' vt and cf
    /// trees.
    fn init_vf(&mut self, leaf: usize, cur_now: u64) {
        let mut cur_time = 0u64;
        let mut go_active = true;
        let mut cl = leaf;
        while let Some(p) = self.classes[cl].parent {
            if go_active {
                let was = self.classes[cl].nactive;
                self.classes[cl].nactive += 1;
                go_active = was == 0;
            }
            if go_active {
                let max_cl = self.classes[p].vt_tree.last().copied();
                if let Some(m) = max_cl {
                    // vt: the average of the smallest and largest vt among the active
                    // siblings; not decreased within the same parent period.
                    let mut vt = self.classes[m].vt;
                    if self.classes[p].cvtmin != 0 {
                        vt = (self.classes[p].cvtmin + vt) / 2;
                    }
                    let (pp, pvt) = (self.classes[p].vtperiod, self.classes[cl].parentperiod);
                    if pp != pvt || vt > self.classes[cl].vt {
                        self.classes[cl].vt = vt;
                    }
                } else {
                    // The first child of a new parent backlog period.
                    self.classes[cl].vt = self.classes[p].cvtoff;
                    self.classes[p].cvtmin = 0;
                }
                let c = &mut self.classes[cl];
                let fsc = c.fsc;
                c.virt.min_with(&fsc, c.vt, c.total);
                c.vtadj = 0;
                c.vtperiod = c.vtperiod.wrapping_add(1);
                let (ppd, pna) = (self.classes[p].vtperiod, self.classes[p].nactive);
                let c = &mut self.classes[cl];
                c.parentperiod = ppd;
                if pna == 0 {
                    c.parentperiod = c.parentperiod.wrapping_add(1);
                }
                self.classes[cl].f = 0;
                self.vttree_insert(cl);
                self.cftree_insert(cl);
                if self.classes[cl].flags & USC != 0 {
                    if cur_time == 0 {
                        cur_time = cur_now;
                    }
                    let c = &mut self.classes[cl];
                    let usc = c.usc;
                    c.ulimit.min_with(&usc, cur_time, c.total);
                    c.myf = c.ulimit.y2x(c.total);
                }
            }
            let f = self.classes[cl].myf.max(self.classes[cl].cfmin);
            if f != self.classes[cl].f {
                self.classes[cl].f = f;
                self.cftree_update(cl);
            }
            self.update_cfmin(p);
            cl = p;
        }
    }

    /// `update_vf`: `len` bytes were sent from leaf `leaf` (0: only take it off the trees if it
    /// is empty, as `hfsc_qlen_notify` does).
    fn update_vf(&mut self, leaf: usize, len: u32) {
        let c = &self.classes[leaf];
        let mut go_passive = c.child.stats().qlen == 0 && c.flags & FSC != 0 && c.nactive != 0;
        let mut cl = leaf;
        while let Some(p) = self.classes[cl].parent {
            let c = &mut self.classes[cl];
            c.total += len as u64;
            if c.flags & FSC == 0 || c.nactive == 0 {
                cl = p;
                continue;
            }
            if go_passive {
                c.nactive -= 1;
                go_passive = c.nactive == 0;
            }
            c.vt = c.virt.y2x(c.total).wrapping_add(c.vtadj);
            // A vt below the parent's cvtmin means the class was skipped for not fitting:
            // catch up.
            let pcvtmin = self.classes[p].cvtmin;
            let c = &mut self.classes[cl];
            if c.vt < pcvtmin {
                c.vtadj += pcvtmin - c.vt;
                c.vt = pcvtmin;
            }
            if go_passive {
                let vt = c.vt;
                let pc = &mut self.classes[p];
                if vt > pc.cvtoff {
                    pc.cvtoff = vt;
                }
                self.vttree_remove(cl);
                self.cftree_remove(cl);
                self.update_cfmin(p);
                cl = p;
                continue;
            }
            self.vttree_update(cl);
            let c = &mut self.classes[cl];
            if c.flags & USC != 0 {
                c.myf = c.ulimit.y2x(c.total);
            }
            let f = c.myf.max(c.cfmin);
            if f != c.f {
                c.f = f;
                self.cftree_update(cl);
                self.update_cfmin(p);
            }
            cl = p;
        }
    }

    /// `hfsc_qlen_notify`: the class's qdisc emptied itself (an AQM dropped its last packets).
    fn qlen_notify(&mut self, i: usize) {
        if self.classes[i].nactive != 0 {
            self.update_vf(i, 0);
        }
        if self.classes[i].flags & RSC != 0 {
            self.eltree_remove(i);
        }
    }

    /// Peek the class's qdisc (its drops accounted); the length of its head, 0 if none.
    fn peek_len(&mut self, i: usize, cx: &mut QCtx<'_>, now: Nanos) -> u32 {
        let mark = cx.mark();
        let c = &mut self.classes[i];
        let p = c.child.peek(cx, now);
        c.stats.after_dequeue(None, cx, mark);
        let len = p.map_or(0, |p| cx.len(p));
        if mark != cx.mark() && self.classes[i].child.stats().qlen == 0 {
            self.qlen_notify(i);
        }
        len
    }

    /// `hfsc_schedule_watchdog`.
    fn schedule_watchdog(&mut self) {
        let mut next = self.eligible.first().map_or(0, |&i| self.classes[i].e);
        let cfmin = self.classes[ROOT].cfmin;
        if cfmin != 0 && (next == 0 || next > cfmin) {
            next = cfmin;
        }
        self.watchdog = (next != 0).then(|| Nanos(next.wrapping_shl(6)));
    }

    /// `hfsc_classify`. None: no leaf (the packet is dropped), or a filter's action shot it.
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<usize> {
        let key = cx.key(pkt);
        let prio = key.priority;
        if prio >> 16 == self.handle.0 >> 16 {
            if let Some(c) = self.find(prio) {
                if self.classes[c].level == 0 {
                    return Some(c);
                }
            }
        }
        let ip_len = cx.pkts.get(pkt).ip_len;
        let mut head = ROOT;
        let mut at = self.handle;
        // Each step descends at least one level; bound it anyway.
        for _ in 0..=self.classes.len() {
            let res = match classify_at(&self.filters, at, key, ip_len, now) {
                Verdict::Class(res) => res,
                Verdict::Shot => return None,
                Verdict::Miss => break,
            };
            let Some(c) = self.find(res.0) else { break };
            if self.classes[c].level >= self.classes[head].level {
                break; // a filter may only point downwards
            }
            if self.classes[c].level == 0 {
                return Some(c);
            }
            head = c;
            at = self.classes[c].classid;
        }
        let def = (self.handle.0 & 0xFFFF_0000) | self.defcls as u32;
        self.find(def).filter(|&c| self.classes[c].level == 0)
    }

    /// `hfsc_dequeue` without the peek stash and the qdisc counters.
    fn hfsc_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        if self.stats.qlen == 0 {
            self.watchdog = None;
            return None;
        }
        let cur = ticks(now);
        let (i, realtime) = match self.eltree_get_mindl(cur) {
            Some(i) => (i, true),
            None => match self.vttree_get_minvt(cur) {
                Some(i) => (i, false),
                None => {
                    self.stats.overlimits += 1;
                    self.schedule_watchdog();
                    return None;
                }
            },
        };
        self.watchdog = None;
        let mark = cx.mark();
        let c = &mut self.classes[i];
        let p = c.child.dequeue(cx, now);
        c.stats.after_dequeue(p, cx, mark);
        let Some(p) = p else {
            // A non-work-conserving child (its own watchdog reschedules the root), or an AQM
            // child that dropped its last packets.
            if self.classes[i].child.stats().qlen == 0 {
                self.qlen_notify(i);
            }
            return None;
        };
        let len = cx.len(p);
        self.update_vf(i, len);
        if realtime {
            self.classes[i].cumul += len as u64;
        }
        if self.classes[i].flags & RSC != 0 {
            if self.classes[i].child.stats().qlen != 0 {
                let next_len = self.peek_len(i, cx, now);
                if self.classes[i].child.stats().qlen != 0 {
                    if realtime {
                        self.update_ed(i, next_len);
                    } else {
                        self.update_d(i, next_len);
                    }
                }
            } else {
                self.eltree_remove(i);
            }
        }
        Some(p)
    }

    /// Counters of class `i`: a leaf's are its queue's; an inner class's (and the root's) the
    /// sums of its leaves (see the module notes).
    fn class_stats(&self, i: usize) -> QdiscStats {
        let c = &self.classes[i];
        if c.level == 0 {
            return c.stats;
        }
        let mut s = QdiscStats::default();
        let mut stack = c.children.clone();
        while let Some(j) = stack.pop() {
            let k = &self.classes[j];
            if k.level == 0 {
                s.offered_packets += k.stats.offered_packets;
                s.sent_bytes += k.stats.sent_bytes;
                s.sent_packets += k.stats.sent_packets;
                s.drops += k.stats.drops;
                s.qlen += k.stats.qlen;
                s.backlog_bytes += k.stats.backlog_bytes;
            } else {
                stack.extend_from_slice(&k.children);
            }
        }
        s
    }

    /// A class's curves as `hfsc_print_class_opt` prints them.
    fn class_options(&self, c: &Class) -> String {
        fn sc(out: &mut String, name: &str, s: Sc) {
            let _ = write!(
                out,
                "{name} m1 {} d {} m2 {} ",
                format_rate_bytes(s.m1 as u64),
                format_time_us(s.d as u64),
                format_rate_bytes(s.m2 as u64)
            );
        }
        let mut out = String::new();
        let rsc = (c.flags & RSC != 0).then(|| c.rsc.dump());
        let fsc = (c.flags & FSC != 0).then(|| c.fsc.dump());
        match (rsc, fsc) {
            (Some(r), Some(f)) if r == f => sc(&mut out, "sc", r),
            _ => {
                if let Some(r) = rsc {
                    sc(&mut out, "rt", r);
                }
                if let Some(f) = fsc {
                    sc(&mut out, "ls", f);
                }
            }
        }
        if c.flags & USC != 0 {
            sc(&mut out, "ul", c.usc.dump());
        }
        out.trim_end().to_string()
    }

    /// `hfsc_adjust_levels` from `i` up.
    fn adjust_levels(&mut self, mut i: usize) {
        loop {
            let level = self.classes[i].children.iter().map(|&k| self.classes[k].level + 1).max().unwrap_or(0);
            self.classes[i].level = level;
            match self.classes[i].parent {
                Some(p) => i = p,
                None => break,
            }
        }
    }
}

impl StashPeek for Hfsc {
    /// The classes' qdiscs stamp; HFSC only passes packets on.
    const LEAF: bool = false;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.hfsc_dequeue(cx, now)
    }
}

impl Qdisc for Hfsc {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = match self.classify(cx, pkt, now) {
            None => {
                cx.drop(pkt);
                Enq::Dropped
            }
            Some(i) => {
                let len = cx.len(pkt);
                let c = &mut self.classes[i];
                let first = c.child.stats().qlen == 0;
                let cmark = cx.mark();
                let r = c.child.enqueue(pkt, cx, now);
                c.stats.after_enqueue(pkt, r, cx, cmark);
                if r != Enq::Dropped && first && !self.in_el_or_vttree(i) {
                    let flags = self.classes[i].flags;
                    if flags & RSC != 0 {
                        self.init_ed(i, len, ticks(now));
                    }
                    if flags & FSC != 0 {
                        self.init_vf(i, ticks(now));
                    }
                    // Isolate the head, so that a head drop before the first dequeue cannot
                    // invalidate the deadline.
                    if flags & RSC != 0 {
                        self.peek_len(i, cx, now);
                    }
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
        if self.stash.is_some() {
            return Some(now);
        }
        // HFSC's own watchdog, or a non-work-conserving leaf's (it reschedules the root).
        let mut w = self.watchdog.filter(|&t| t > now);
        for c in &self.classes {
            if c.level == 0 && c.stats.qlen > 0 {
                if let Some(t) = pending_wakeup(&c.child, now) {
                    w = Some(w.map_or(t, |x| x.min(t)));
                }
            }
        }
        w
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        if let Some(p) = self.stash {
            f(p);
        }
        for c in &self.classes {
            c.child.for_each_queued(f);
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_by_key(|&i| self.classes[i].classid.0);
        let mut classes = Vec::with_capacity(order.len());
        let mut children = Vec::new();
        for &i in &order {
            let c = &self.classes[i];
            c.child.report(c.classid, &mut children);
            let mut xstats_text = format!(" period {} ", c.vtperiod);
            if c.total != 0 {
                let _ = write!(xstats_text, "work {} bytes ", c.total);
            }
            if c.cumul != 0 {
                let _ = write!(xstats_text, "rtwork {} bytes ", c.cumul);
            }
            let _ = write!(xstats_text, "level {} ", c.level);
            classes.push(ClassReport {
                kind: "hfsc",
                classid: c.classid,
                parent: c.parent.map_or(Handle::ROOT, |p| self.classes[p].classid),
                leaf: (c.level == 0 && c.leaf != Handle::UNSPEC).then_some(c.leaf),
                options: self.class_options(c),
                stats: self.class_stats(i),
                xstats: vec![
                    ("period".into(), c.vtperiod as i64),
                    ("work".into(), c.total as i64),
                    ("rtwork".into(), c.cumul as i64),
                    ("level".into(), c.level as i64),
                ],
                xstats_text,
            });
        }
        out.push(QdiscReport {
            kind: "hfsc",
            handle: self.handle,
            parent,
            options: if self.defcls != 0 { format!("default {:x}", self.defcls) } else { String::new() },
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes,
        });
        out.extend(children);
    }
}

/// `hfsc_parse_opt`: `default CLASSID` (a hex minor); `None` after an error.
fn parse_qdisc_opts(d: &QdiscDecl<'_>, diags: &mut Vec<TcDiag>) -> Option<u16> {
    let mut defcls: u16 = 0;
    let mut i = 0;
    while let Some(&k) = d.opts.get(i) {
        if matches(k.text, "default") {
            let Some(&v) = d.opts.get(i + 1) else {
                diags.push(TcDiag::at_pos(
                    Severity::Error,
                    d.end,
                    "default needs a class minor (hex), e.g. default 20 (tc: Command line is incomplete)",
                ));
                return None;
            };
            if defcls != 0 {
                diags.push(diag_error(k, "default is given twice (tc: HFSC: Double \"default\")"));
                return None;
            }
            let h = v.text.strip_prefix("0x").or_else(|| v.text.strip_prefix("0X")).unwrap_or(v.text);
            match u16::from_str_radix(h, 16) {
                Ok(x) => defcls = x,
                Err(_) => {
                    diags.push(diag_error(
                        v,
                        format!(
                            "\"{}\" is not a class minor: a hex number up to ffff (tc: HFSC: Illegal \"default\")",
                            v.text
                        ),
                    ));
                    return None;
                }
            }
            i += 2;
        } else {
            let msg = if matches(k.text, "help") {
                "help: hfsc takes [ default CLASSID ]".to_string()
            } else {
                format!("unknown hfsc option \"{}\"; expected default (tc: HFSC: What is \"{}\" ?)", k.text, k.text)
            };
            diags.push(diag_error(k, msg));
            return None;
        }
    }
    Some(defcls)
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let defcls = parse_qdisc_opts(&d, diags)?;
    let n = d.classes.len() + 1;
    let mut h = Hfsc {
        handle: d.handle,
        defcls,
        classes: Vec::with_capacity(n),
        by_id: Vec::with_capacity(n),
        eligible: Vec::with_capacity(n),
        filters: Vec::new(),
        stats: QdiscStats::default(),
        stash: None,
        watchdog: None,
    };
    // hfsc_init_qdisc: the root class, with a default pfifo of its own.
    h.classes.push(Class::new(d.handle, None, default_child(cx, d.handle)));
    h.by_id.push((d.handle.0, ROOT));
    for c in &d.classes {
        if c.classid.major() != d.handle.major() || c.classid.minor() == 0 {
            diags.push(diag_error(
                c.at,
                format!(
                    "class id {} does not belong to hfsc {}: it needs major {:x} and a non-zero minor",
                    c.classid,
                    d.handle,
                    d.handle.major()
                ),
            ));
            continue;
        }
        let Some(cc) = parse_class(&c.opts, c.end, diags) else { continue };
        if let Some(i) = h.find(c.classid.0) {
            // `tc class change` of a class declared again: the curves given replace theirs.
            let cl = &mut h.classes[i];
            if let Some(s) = cc.rsc {
                cl.set_rsc(s);
            }
            if let Some(s) = cc.fsc {
                cl.set_fsc(s);
            }
            if let Some(s) = cc.usc {
                cl.set_usc(s);
            }
            continue;
        }
        let parent = if c.parent == Handle::ROOT || c.parent == d.handle {
            ROOT
        } else {
            match h.find(c.parent.0) {
                Some(p) => p,
                None => {
                    diags.push(diag_error(
                        c.at,
                        format!("parent class {} does not exist (the kernel: No such file or directory)", c.parent),
                    ));
                    continue;
                }
            }
        };
        if cc.rsc.is_none() && cc.fsc.is_none() {
            diags.push(diag_error(
                c.at,
                "a new hfsc class needs an rt or ls curve (the kernel: Invalid argument)".to_string(),
            ));
            continue;
        }
        let idx = h.classes.len();
        let mut cl = Class::new(c.classid, Some(parent), default_child(cx, c.classid));
        if let Some(s) = cc.rsc {
            cl.set_rsc(s);
        }
        if let Some(s) = cc.fsc {
            cl.set_fsc(s);
        }
        if let Some(s) = cc.usc {
            cl.set_usc(s);
        }
        h.classes.push(cl);
        if parent != ROOT && h.classes[parent].flags & FSC == 0 {
            // hfsc_upgrade_rt (Linux 6.6, in 6.1 stable since 6.1.54).
            diags.push(diag_warning(
                c.at,
                format!(
                    "class {} has only an rt curve and now has a child: the kernel turns it into sc (Forced curve change on parent 'rt' to 'sc')",
                    h.classes[parent].classid
                ),
            ));
            let pc = &mut h.classes[parent];
            pc.fsc = pc.rsc;
            pc.virt = Rtsc::new(&pc.fsc, pc.vt, pc.total);
            pc.flags |= FSC;
        }
        h.classes[parent].children.push(idx);
        let pos = h.by_id.partition_point(|e| e.0 < c.classid.0);
        h.by_id.insert(pos, (c.classid.0, idx));
        h.adjust_levels(parent);
    }
    for g in d.grafts {
        match h.find(g.classid.0) {
            None => diags.push(diag_error(g.at, format!("hfsc {} has no class {}", d.handle, g.classid))),
            Some(i) => {
                if h.classes[i].level > 0 {
                    // Grafted while it was a leaf (a graft onto an inner class is refused
                    // before it reaches here): purged and kept, as hfsc_change_class does.
                    diags.push(diag_warning(
                        g.at,
                        format!(
                            "{} is an inner class: hfsc purged its qdisc when it got a child and never uses it",
                            g.classid
                        ),
                    ));
                }
                h.classes[i].leaf = g.qdisc.reports()[0].handle;
                h.classes[i].child = g.qdisc;
            }
        }
    }
    for c in h.classes.iter().skip(1) {
        if c.level > 0 && c.flags & RSC != 0 {
            if let Some(decl) = d.classes.iter().find(|x| x.classid == c.classid) {
                diags.push(diag_warning(
                    decl.at,
                    format!(
                        "the rt curve of inner class {} is never used: the real-time criterion serves leaf classes only",
                        c.classid
                    ),
                ));
            }
        }
    }
    for f in d.filters {
        if f.parent != d.handle {
            match h.find(f.parent.0) {
                None => {
                    diags.push(filter_diag(
                        &f,
                        Severity::Error,
                        format!("filter parent {} is not a class of hfsc {}", f.parent, d.handle),
                    ));
                    continue;
                }
                Some(i) if h.classes[i].level == 0 => diags.push(filter_diag(
                    &f,
                    Severity::Warning,
                    format!(
                        "filter attached to leaf class {}: hfsc only runs the filters of the qdisc and of inner classes",
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
    for i in 0..h.classes.len() {
        let k = h.classes[i].children.len();
        h.classes[i].vt_tree.reserve(k);
        h.classes[i].cf_tree.reserve(k);
    }
    Some(QdiscImpl::Hfsc(Box::new(h)))
}
