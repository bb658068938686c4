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
//!
//! This file is the algorithm (`sch_htb.c`); tc's side (`tc/q_htb.c`: the option words, tc's
//! defaults and tick conversions, and `build`, which applies them here) is in [`params`].

use std::collections::VecDeque;
use std::fmt::Write as _;

use super::classify::{classify_at, Filter, Verdict};
use super::common::{pending_wakeup, StashPeek};
use super::{
    default_child, diag_warning, BuildCx, ClassReport, Enq, Handle, QCtx, Qdisc, QdiscImpl, QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::{format_rate_bytes, format_size};
use crate::time::Nanos;

mod params;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod whtb_tests;
mod wireless;

pub(super) use params::build;
use params::{xmitsize, ClassOpts};
use wireless::Wireless;

/// `TC_HTB_MAXDEPTH`: levels 0..7.
const MAXDEPTH: usize = 8;
/// `TC_HTB_NUMPRIO`: prios 0..7.
const NUMPRIO: usize = 8;
const NSEC_PER_SEC: i64 = 1_000_000_000;
/// `cl->mbuffer`: cap on the elapsed time credited at once, and floor of the buckets.
const MBUFFER: i64 = 60 * NSEC_PER_SEC;
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
    /// A filter's action dropped the packet (htb_classify returns NULL: dropped and counted).
    Shot,
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

/// `PSCHED_NS2TICKS` clamped to `int`, as `htb_dump_class_stats` reports tokens.
fn ns_to_ticks_i32(ns: i64) -> i32 {
    (ns >> 6).clamp(i32::MIN as i64, i32::MAX as i64) as i32
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
    fn classify(&self, pkt: PacketId, cx: &QCtx<'_>, now: Nanos) -> Target {
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
            let res = match classify_at(&self.filters, at, key, ip_len, now) {
                Verdict::Class(res) => res,
                Verdict::Shot => return Target::Shot,
                Verdict::Miss => break,
            };
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
        let res = match self.classify(pkt, cx, now) {
            Target::Shot => {
                cx.drop(pkt);
                Enq::Dropped
            }
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
                if let Some(t) = c.child.as_ref().and_then(|q| pending_wakeup(q, now)) {
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
