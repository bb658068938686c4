//! Queueing disciplines: one trait, one file per discipline, dispatched by `match` over
//! [`QdiscImpl`] (no trait objects in the per-packet path).
//!
//! The contract follows the kernel's `Qdisc_ops` (net/sched, Linux 6.x): enqueue, dequeue and
//! peek with the current time, plus the watchdog time a shaper arms when it holds packets it may
//! not send yet. Packets a discipline drops, at enqueue or at dequeue (AQM), are pushed to
//! [`QCtx::dropped`]; the simulator accounts for them (per flow, per cause) and frees them.
//!
//! Statistics follow `tc -s`: a parent's counters include what its children did (drops at any
//! depth, like `qdisc_tree_reduce_backlog`), so `offered = sent + dropped + qlen` holds at
//! every node of a tree ([`QdiscStats::identity_holds`]).

mod cake;
mod cbq;
pub mod classify;
mod codel;
mod common;
mod drr;
pub mod ematch;
mod ets;
mod fifo;
mod fq;
mod fq_codel;
mod fq_pie;
mod hfsc;
mod htb;
pub mod kinds;
mod netem;
mod pfifo_fast;
mod pie;
pub mod police;
mod prio;
mod rate;
mod red;
mod sfq;
mod tbf;

/// Handles are words of the tc language; every discipline names its classes with them.
pub use crate::tc::lex::Handle;
pub use classify::Filter;
/// Shared with the mac80211 queues (`crate::mac80211`): the CoDel state machine, the keyed flow
/// hash and the skb truesize model.
pub(crate) use codel::aqm as codel_aqm;
pub use fifo::{Fifo, FifoKind};
pub(crate) use fq_codel::truesize;
pub(crate) use sfq::flow_hash;

use crate::packet::{FlowKey, PacketId, Packets};
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::OptParser;
use crate::time::Nanos;

/// Ethernet header the kernel counts in `qdisc_pkt_len` (WiFi netdevs are Ethernet-like).
pub const L2_HEADER_BYTES: u32 = 14;

/// Linux DEFAULT_TX_QUEUE_LEN.
pub const DEFAULT_TXQUEUELEN: u32 = 1000;

/// `psched_mtu(dev)` of an Ethernet-like device: MTU 1500 + 14-byte header.
pub const PSCHED_MTU: u32 = 1514;

/// What a discipline works with besides its own state: the packet arena, the flows' header
/// fields, and the list where it reports the packets it drops.
pub struct QCtx<'a> {
    pub pkts: &'a mut Packets,
    pub keys: &'a [FlowKey],
    /// Packets dropped during the current operation (by this discipline or its children).
    pub dropped: &'a mut Vec<PacketId>,
    /// Per flow: the relative goodput towards the flow's WiFi destination as the AP's channel
    /// monitor estimates it now, in units of 1/[`REL_ONE`] (`REL_ONE` = the best channel). Flows
    /// not sent over the air, and every flow when no monitor runs, have `REL_ONE`. Only
    /// channel-aware disciplines (`whtb`) read it.
    pub chan: &'a [u32],
}

/// Fixed-point one of [`QCtx::chan`]: relative goodput 1.0.
pub const REL_ONE: u32 = 1 << 16;

impl QCtx<'_> {
    /// `qdisc_pkt_len`: the IP datagram plus the 14-byte Ethernet header.
    #[inline]
    pub fn len(&self, pkt: PacketId) -> u32 {
        self.pkts.get(pkt).ip_len + L2_HEADER_BYTES
    }

    /// Relative goodput towards `pkt`'s destination, in 1/[`REL_ONE`] (see [`QCtx::chan`]).
    #[inline]
    pub fn rel_goodput(&self, pkt: PacketId) -> u32 {
        self.chan.get(self.pkts.get(pkt).flow as usize).copied().unwrap_or(REL_ONE)
    }

    #[inline]
    pub fn key(&self, pkt: PacketId) -> &FlowKey {
        &self.keys[self.pkts.get(pkt).flow as usize]
    }

    /// Drop a packet: the caller must no longer hold it.
    #[inline]
    pub fn drop(&mut self, pkt: PacketId) {
        self.dropped.push(pkt);
    }

    /// A packet enters a queue that stores it (a leaf FIFO): stamp its enqueue time.
    #[inline]
    pub fn stamp(&mut self, pkt: PacketId, now: Nanos) {
        self.pkts.get_mut(pkt).enqueued = now;
    }

    /// When `pkt` entered the queue that stores it.
    #[inline]
    pub fn enqueued_at(&self, pkt: PacketId) -> Nanos {
        self.pkts.get(pkt).enqueued
    }

    /// A packet leaves the queue that stored it: add its sojourn to its queueing delay.
    #[inline]
    pub fn unstamp(&mut self, pkt: PacketId, now: Nanos) {
        let p = self.pkts.get_mut(pkt);
        p.queue_delay += now.saturating_sub(p.enqueued);
    }

    /// Position in `dropped` before a child operation (see [`QdiscStats::after_enqueue`]).
    #[inline]
    pub fn mark(&self) -> usize {
        self.dropped.len()
    }
}

/// Outcome of an enqueue (`NET_XMIT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enq {
    /// Queued (NET_XMIT_SUCCESS).
    Queued,
    /// Queued, but the discipline dropped other packets to make room (NET_XMIT_CN).
    Congestion,
    /// The offered packet was dropped; it is in `QCtx::dropped` (NET_XMIT_DROP).
    Dropped,
}

/// Counters as `tc -s qdisc show` prints them, plus the offered count for the identities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    /// Packets handed to enqueue.
    pub offered_packets: u64,
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub drops: u64,
    pub overlimits: u64,
    pub requeues: u64,
    pub backlog_bytes: u64,
    pub qlen: u64,
}

impl QdiscStats {
    /// offered = sent + dropped + still queued; holds after every operation.
    pub fn identity_holds(&self) -> bool {
        self.offered_packets == self.sent_packets + self.drops + self.qlen
    }

    /// Account an enqueue into a child (or into this discipline's own storage): `mark` is
    /// `cx.mark()` taken before the call. Every packet dropped since counts as a drop; those
    /// other than the offered one had been queued and leave the backlog.
    pub fn after_enqueue(&mut self, pkt: PacketId, res: Enq, cx: &QCtx<'_>, mark: usize) {
        self.offered_packets += 1;
        for &d in &cx.dropped[mark..] {
            self.drops += 1;
            if d != pkt {
                self.qlen -= 1;
                self.backlog_bytes -= cx.len(d) as u64;
            }
        }
        if res != Enq::Dropped {
            self.qlen += 1;
            self.backlog_bytes += cx.len(pkt) as u64;
        }
    }

    /// Account a dequeue from a child (or own storage): packets dropped during it (AQM) had
    /// been queued; the packet handed out, if any, counts as sent.
    pub fn after_dequeue(&mut self, out: Option<PacketId>, cx: &QCtx<'_>, mark: usize) {
        for &d in &cx.dropped[mark..] {
            self.drops += 1;
            self.qlen -= 1;
            self.backlog_bytes -= cx.len(d) as u64;
        }
        if let Some(p) = out {
            let len = cx.len(p) as u64;
            self.qlen -= 1;
            self.backlog_bytes -= len;
            self.sent_packets += 1;
            self.sent_bytes += len;
        }
    }
}

/// One qdisc of a tree as `tc -s qdisc show` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscReport {
    pub kind: &'static str,
    pub handle: Handle,
    /// `Handle::ROOT` for the root, else the class it is attached to.
    pub parent: Handle,
    /// The options as `tc qdisc show` prints them after the handle, e.g. `limit 1000p`.
    pub options: String,
    pub stats: QdiscStats,
    /// Discipline-specific counters (`tc -s` xstats), as name/value pairs for JSON.
    pub xstats: Vec<(String, i64)>,
    /// The xstats lines as `tc -s` prints them (may be empty).
    pub xstats_text: String,
    pub classes: Vec<ClassReport>,
}

/// One class as `tc -s class show` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassReport {
    pub kind: &'static str,
    pub classid: Handle,
    /// The parent class, or the qdisc handle for a top class (`Handle::ROOT` for HTB/CBQ roots
    /// as tc prints "root").
    pub parent: Handle,
    /// The qdisc attached to the class, if it is a leaf with a child.
    pub leaf: Option<Handle>,
    pub options: String,
    pub stats: QdiscStats,
    pub xstats: Vec<(String, i64)>,
    pub xstats_text: String,
}

/// What every queueing discipline implements.
pub trait Qdisc {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq;
    /// Hand the next packet to the device, if the discipline allows one now.
    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId>;
    /// The packet `dequeue` would return next, without handing it out. Disciplines that drop at
    /// dequeue may dequeue into a stash here (the kernel's `qdisc_peek_dequeued`).
    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId>;
    /// For shapers holding packets they may not send yet: when to try again.
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos>;
    fn stats(&self) -> QdiscStats;
    /// Every queued packet (end-of-run accounting), children included.
    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId));
    /// Append this qdisc's report (then its children's) in `tc qdisc show` order.
    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>);
}

/// A class declared with `tc class add|change` for the qdisc being built.
pub struct ClassDecl<'a> {
    /// The `classid` token (for errors) and its value.
    pub at: Tok<'a>,
    pub classid: Handle,
    /// The parent class, or the qdisc handle for a top-level class.
    pub parent: Handle,
    /// The kind keyword as written (`htb`, `cbq`, `drr`; `htb` or `whtb` for a whtb qdisc).
    pub kind: Tok<'a>,
    /// The class options (after the kind keyword).
    pub opts: Vec<Tok<'a>>,
    /// Line and column just past the last token, for "missing" errors.
    pub end: (u32, u32),
}

/// A qdisc attached to one of this qdisc's classes (`tc qdisc add parent 1:10 ...`).
pub struct Graft<'a> {
    pub at: Tok<'a>,
    pub classid: Handle,
    pub qdisc: QdiscImpl,
}

/// Everything the tc script says about one qdisc, ready to build.
pub struct QdiscDecl<'a> {
    /// The kind keyword token (`htb`).
    pub kind: Tok<'a>,
    pub handle: Handle,
    pub parent: Handle,
    pub opts: Vec<Tok<'a>>,
    pub end: (u32, u32),
    pub classes: Vec<ClassDecl<'a>>,
    pub grafts: Vec<Graft<'a>>,
    /// Filters whose parent is this qdisc or one of its classes, in script order.
    pub filters: Vec<Filter>,
}

/// Facts about the device a tree is built for.
#[derive(Clone, Debug)]
pub struct BuildCx {
    pub dev: String,
    pub txqueuelen: u32,
    /// `psched_mtu(dev)`, 1514.
    pub mtu: u32,
    /// Seed and stream index for disciplines that draw random numbers (SFQ perturbation, RED).
    pub seed: u64,
    pub stream: u64,
}

impl BuildCx {
    #[cfg(test)]
    pub fn for_tests() -> BuildCx {
        BuildCx { dev: "eth0".into(), txqueuelen: DEFAULT_TXQUEUELEN, mtu: PSCHED_MTU, seed: 1, stream: 0 }
    }
}

/// Build one qdisc from its declaration: parse its options, build its classes, attach its
/// grafted children and filters. Errors and warnings go to `diags`; `None` if it cannot be built.
pub fn build_qdisc(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let kind = d.kind.text;
    let row = kinds::qdisc_kind(kind);
    // An unknown kind counts as classless here: its classes are reported before its name.
    if !row.is_some_and(|r| r.classful) {
        let mut ok = true;
        for c in &d.classes {
            diags.push(diag_error(c.at, format!("{kind} is classless: it has no class {}", c.classid)));
            ok = false;
        }
        for g in &d.grafts {
            diags.push(diag_error(g.at, format!("{kind} is classless: nothing can be attached to {}", g.classid)));
            ok = false;
        }
        if !ok {
            return None;
        }
    }
    match row {
        Some(r) => (r.build)(d, cx, diags),
        None => {
            diags
                .push(diag_error(d.kind, format!("unknown qdisc \"{kind}\"; airsched knows: {}", kinds::kind_names())));
            None
        }
    }
}

/// An error diagnostic at a token.
pub fn diag_error(at: Tok<'_>, message: impl Into<String>) -> TcDiag {
    TcDiag::at(crate::tc::lex::Severity::Error, at, message)
}

/// A warning diagnostic at a token.
pub fn diag_warning(at: Tok<'_>, message: impl Into<String>) -> TcDiag {
    TcDiag::at(crate::tc::lex::Severity::Warning, at, message)
}

/// An option parser over a declaration's option tokens.
pub fn opt_parser<'a, 'd>(opts: &'a [Tok<'a>], end: (u32, u32), diags: &'d mut Vec<TcDiag>) -> OptParser<'a, 'd> {
    OptParser::new(opts, end, diags)
}

/// The default child of a class: `pfifo` with the device's txqueuelen (what the kernel grafts
/// on a new HTB/DRR/PRIO/CBQ class).
pub fn default_child(cx: &BuildCx, parent: Handle) -> QdiscImpl {
    QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, cx.txqueuelen as u64, Handle::UNSPEC, parent))
}

/// The disciplines airsched implements, dispatched by match. The large ones are boxed; the
/// rest stay inline, as one indirection per packet costs more than the size a tree is built with.
#[allow(clippy::large_enum_variant)]
pub enum QdiscImpl {
    Fifo(Fifo),
    PfifoFast(pfifo_fast::PfifoFast),
    Prio(prio::Prio),
    Tbf(tbf::Tbf),
    Sfq(sfq::Sfq),
    Drr(drr::Drr),
    /// htb, and whtb (the same discipline with its channel-aware options set).
    Htb(Box<htb::Htb>),
    Cbq(Box<cbq::Cbq>),
    Red(red::Red),
    Codel(codel::Codel),
    FqCodel(Box<fq_codel::FqCodel>),
    Pie(pie::Pie),
    FqPie(Box<fq_pie::FqPie>),
    Netem(Box<netem::Netem>),
    Fq(Box<fq::Fq>),
    Cake(Box<cake::Cake>),
    Hfsc(Box<hfsc::Hfsc>),
    Ets(Box<ets::Ets>),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            QdiscImpl::Fifo($q) => $e,
            QdiscImpl::PfifoFast($q) => $e,
            QdiscImpl::Prio($q) => $e,
            QdiscImpl::Tbf($q) => $e,
            QdiscImpl::Sfq($q) => $e,
            QdiscImpl::Drr($q) => $e,
            QdiscImpl::Htb($q) => $e,
            QdiscImpl::Cbq($q) => $e,
            QdiscImpl::Red($q) => $e,
            QdiscImpl::Codel($q) => $e,
            QdiscImpl::FqCodel($q) => $e,
            QdiscImpl::Pie($q) => $e,
            QdiscImpl::FqPie($q) => $e,
            QdiscImpl::Netem($q) => $e,
            QdiscImpl::Fq($q) => $e,
            QdiscImpl::Cake($q) => $e,
            QdiscImpl::Hfsc($q) => $e,
            QdiscImpl::Ets($q) => $e,
        }
    };
}

impl QdiscImpl {
    /// The root qdisc of an interface without a tc script: pfifo with the txqueuelen.
    pub fn default_root(txqueuelen: u32) -> QdiscImpl {
        QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, txqueuelen as u64, Handle::UNSPEC, Handle::ROOT))
    }

    /// Whether a dequeue that finds this qdisc empty changes nothing in it (the FIFOs; a
    /// CoDel leaves its dropping state, an HTB its watchdog, a DRR its round): a device may
    /// then skip such a dequeue (`net/wire.rs`).
    #[inline]
    pub fn idle_dequeue_is_noop(&self) -> bool {
        matches!(self, QdiscImpl::Fifo(_) | QdiscImpl::PfifoFast(_))
    }

    /// Every qdisc of the tree, root first, as `tc -s qdisc show` lists them.
    pub fn reports(&self) -> Vec<QdiscReport> {
        let mut out = Vec::new();
        self.report(Handle::ROOT, &mut out);
        out
    }
}

impl Qdisc for QdiscImpl {
    #[inline]
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        dispatch!(self, q => q.enqueue(pkt, cx, now))
    }
    #[inline]
    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        dispatch!(self, q => q.dequeue(cx, now))
    }
    #[inline]
    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        dispatch!(self, q => q.peek(cx, now))
    }
    #[inline]
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        dispatch!(self, q => q.next_wakeup(now))
    }
    #[inline]
    fn stats(&self) -> QdiscStats {
        dispatch!(self, q => q.stats())
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        dispatch!(self, q => q.for_each_queued(f))
    }
    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        dispatch!(self, q => q.report(parent, out))
    }
}

#[cfg(test)]
pub mod testutil;
