//! cake: Common Applications Kept Enhanced (Linux 6.6 `net/sched/sch_cake.c`; iproute2 6.x
//! `tc/q_cake.c`; tc-cake(8)). One qdisc that shapes, isolates flows and hosts, and keeps
//! queues short:
//!
//! - a deficit-mode shaper (`bandwidth`): a global clock advanced by each packet's
//!   overhead-adjusted length at the rate, and a failsafe clock at 1.5 times that; a packet may
//!   leave when either clock is due, so there is no burst;
//! - up to 8 tins (`besteffort`, `diffserv3|4|8`, `precedence`) chosen from the DSCP (or
//!   `fwmark`, or `skb->priority` `handle:tin`), each with its own clock at its share of the
//!   rate: a tin under its share has priority, above it only spare capacity (shaped mode), or
//!   DRR between tins with fixed quanta (unlimited mode);
//! - per tin 1024 flow queues, 8-way set-associative, hashed by the isolation mode
//!   (`flowblind` ... `triple-isolate`); in the dual and triple modes a flow's DRR refill is
//!   divided by its host's bulk-flow count, so hosts, not flows, share the tin;
//! - DRR++ with new (sparse), old (bulk) and decaying lists;
//! - COBALT per flow ([`cobalt`]: CoDel with hysteresis, BLUE for unresponsive flows);
//! - on overflow of the memory limit, a drop from the head of the longest queue of all tins
//!   (a max-heap of backlogs, as the kernel keeps it), which also feeds BLUE;
//! - overhead compensation (`overhead`, `mpu`, `atm`, `ptm` and the keyword presets);
//! - the ACK filter (`ack-filter`, `ack-filter-aggressive`) over the TCP fields packets carry.
//!
//! Deviations (docs/qdisc-cake.md lists them with their reasons): the flow and host hashes
//! are SipHash-2-4 under a seeded key (the kernel's `skb_get_hash`/`flow_hash_from_keys` with
//! its boot secret); random numbers (DRR dithering, BLUE) come from the qdisc's seeded
//! stream; truesize is fq_codel's model; ECN marks and `wash` are counted/decided but not
//! written into packets (the TOS is a property of the flow here); `nat` changes nothing (no
//! NAT happens inside airsched, so the addresses cake sees are the hosts' own);
//! `autorate-ingress` is accepted and not modelled (the rate stays at `bandwidth`); no packet
//! is a GSO super-packet, so `split-gso` changes nothing; an overhead that would make a
//! length negative is clamped at 0 (the kernel's u32 wraps).

mod cobalt;
mod config;

use std::collections::VecDeque;

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use self::cobalt::{Cobalt, CobaltParams, Verdict};
pub use self::config::{CakeAckFilter, CakeAtm, CakeConfig, CakeDiffserv, CakeFlowMode};
use super::classify::{classify_at, sort_filters, Verdict as Classified};
use super::common::{errors_since, StashPeek};
use super::sfq::flow_hash::{flow_hash, SipKey};
use super::{
    opt_parser, truesize, BuildCx, Enq, Filter, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats,
    L2_HEADER_BYTES,
};
use crate::engine::{stream, StreamKind};
use crate::packet::{FlowKey, PacketId};
use crate::tc::lex::TcDiag;
use crate::tc::opts::{format_rate_bytes, format_size, format_time_us};
use crate::time::Nanos;

/// Queues per tin (`CAKE_QUEUES`), ways per set (`CAKE_SET_WAYS`), tins (`CAKE_MAX_TINS`).
const QUEUES: usize = 1024;
const SET_WAYS: usize = 8;
const MAX_TINS: usize = 8;
const HEAP: usize = MAX_TINS * QUEUES;
/// `sch->limit` set by `cake_init` (cake has no `limit` option).
const LIMIT_PACKETS: u32 = 10240;
/// No flow (an empty list).
const NIL: u16 = u16::MAX;
/// Tags the qdisc's random stream.
const CAKE_STREAM_TAG: u64 = 0x4341_4b45 << 24;

/// `quantum_div[i] = 65535 / i` (`quantum_div[0]` unused).
static QUANTUM_DIV: [u16; QUEUES + 1] = {
    let mut t = [0u16; QUEUES + 1];
    let mut i = 1;
    while i <= QUEUES {
        t[i] = (65535 / i) as u16;
        i += 1;
    }
    t
};

/// A flow's place in the DRR++ rotation (`CAKE_SET_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlowSet {
    None,
    Sparse,
    /// Empty, moved to the bulk rotation for its deficit, still counted as sparse.
    SparseWait,
    Bulk,
    Decaying,
}

/// The three lists of a tin (`new_flows`, `old_flows`, `decaying_flows`).
const NEW: usize = 0;
const OLD: usize = 1;
const DECAYING: usize = 2;
const NO_LIST: u8 = 3;

struct Flow {
    queue: VecDeque<PacketId>,
    deficit: i32,
    /// Packets this queue lost (AQM and overflow), for its class statistics.
    dropped: u32,
    cvars: Cobalt,
    set: FlowSet,
    srchost: u16,
    dsthost: u16,
    /// The flowchain: which list, and the neighbours in it.
    list: u8,
    prev: u16,
    next: u16,
}

#[derive(Clone, Copy, Default)]
struct Host {
    src_tag: u32,
    dst_tag: u32,
    src_bulk: u16,
    dst_bulk: u16,
}

/// Per-tin counters (`tc -s` rows).
#[derive(Clone, Copy, Default)]
struct TinStats {
    packets: u32,
    bytes: u64,
    dropped: u32,
    ecn_mark: u32,
    ack_drops: u32,
    way_directs: u32,
    way_hits: u32,
    way_misses: u32,
    way_collisions: u32,
    max_skblen: u32,
    avge_delay: u64,
    peak_delay: u64,
    base_delay: u64,
}

struct Tin {
    /// A fixed-size array: indexing it with `f % QUEUES` (an AND, the identity on the queue
    /// indices the lists hold) needs no bounds check on the dequeue path.
    flows: Box<[Flow; QUEUES]>,
    hosts: Vec<Host>,
    tags: Vec<u32>,
    backlogs: Box<[u32; QUEUES]>,
    overflow_idx: Vec<u16>,
    head: [u16; 3],
    tail: [u16; 3],
    rate_bps: u64,
    rate_ns: u64,
    rate_shft: u32,
    flow_quantum: u16,
    tin_quantum: u16,
    cparams: CobaltParams,
    tin_deficit: i32,
    time_next_packet: i64,
    tin_backlog: u32,
    sparse: u32,
    bulk: u32,
    decaying: u32,
    unresponsive: u32,
    st: TinStats,
}

impl Tin {
    fn new() -> Tin {
        Tin {
            flows: (0..QUEUES)
                .map(|_| Flow {
                    queue: VecDeque::new(),
                    deficit: 0,
                    dropped: 0,
                    cvars: Cobalt::new(),
                    set: FlowSet::None,
                    srchost: 0,
                    dsthost: 0,
                    list: NO_LIST,
                    prev: NIL,
                    next: NIL,
                })
                .collect::<Vec<Flow>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("QUEUES flows")),
            hosts: vec![Host::default(); QUEUES],
            tags: vec![0; QUEUES],
            backlogs: Box::new([0; QUEUES]),
            overflow_idx: vec![0; QUEUES],
            head: [NIL; 3],
            tail: [NIL; 3],
            rate_bps: 0,
            rate_ns: 0,
            rate_shft: 0,
            flow_quantum: 1514,
            tin_quantum: 0,
            cparams: CobaltParams::default(),
            tin_deficit: 0,
            time_next_packet: 0,
            tin_backlog: 0,
            sparse: 0,
            bulk: 0,
            decaying: 0,
            unresponsive: 0,
            st: TinStats::default(),
        }
    }

    /// `cake_set_rate`: time per byte at `rate` bytes/s, the flow quantum and COBALT's
    /// parameters (`mtu` = psched_mtu; target and rtt in ns).
    fn set_rate(&mut self, rate: u64, mtu: u32, target_ns: u64, rtt_ns: u64) {
        const MIN_RATE: u64 = 64;
        let (mut rate_ns, mut shft) = (0u64, 0u32);
        self.flow_quantum = 1514;
        if rate > 0 {
            self.flow_quantum = (rate >> 12).clamp(300, 1514) as u16;
            shft = 34;
            rate_ns = ((1_000_000_000u128 << shft) / rate.max(MIN_RATE) as u128) as u64;
            while rate_ns >> 34 != 0 {
                rate_ns >>= 1;
                shft -= 1;
            }
        }
        self.rate_bps = rate;
        self.rate_ns = rate_ns;
        self.rate_shft = shft;
        let byte_target_ns = (mtu as u64 * rate_ns) >> shft;
        let target = (byte_target_ns * 3 / 2).max(target_ns);
        self.cparams = CobaltParams {
            target,
            interval: (rtt_ns + target - target_ns).max(target * 2),
            mtu_time: byte_target_ns,
            p_inc: 1 << 24,
            p_dec: 1 << 20,
        };
    }

    /// Flow `f` of this tin (`f` < QUEUES: the modulo is the identity and spares the bounds
    /// check).
    #[inline]
    fn flow(&mut self, f: u16) -> &mut Flow {
        &mut self.flows[f as usize % QUEUES]
    }

    fn list_push_tail(&mut self, f: u16, l: usize) {
        let tail = self.tail[l];
        let fl = self.flow(f);
        fl.list = l as u8;
        fl.next = NIL;
        fl.prev = tail;
        if tail == NIL {
            self.head[l] = f;
        } else {
            self.flow(tail).next = f;
        }
        self.tail[l] = f;
    }

    fn list_del(&mut self, f: u16) {
        let (l, prev, next) = {
            let fl = self.flow(f);
            (fl.list, fl.prev, fl.next)
        };
        if l == NO_LIST {
            return;
        }
        let l = l as usize;
        if prev == NIL {
            self.head[l] = next;
        } else {
            self.flow(prev).next = next;
        }
        if next == NIL {
            self.tail[l] = prev;
        } else {
            self.flow(next).prev = prev;
        }
        let fl = self.flow(f);
        fl.list = NO_LIST;
        fl.prev = NIL;
        fl.next = NIL;
    }

    /// `list_move_tail`. A flow that is already the tail of `l` stays where it is (the refill
    /// of the only flow of the old list).
    fn list_move_tail(&mut self, f: u16, l: usize) {
        if self.tail[l] == f {
            return;
        }
        self.list_del(f);
        self.list_push_tail(f, l);
    }

    /// The 8-way set-associative lookup of `cake_hash` after the hashes are known: the queue
    /// of `flow_hash`, and its host entries when the mode shares by host.
    fn lookup(&mut self, flow_hash: u32, src_hash: u32, dst_hash: u32, mode: CakeFlowMode) -> usize {
        let mut reduced = flow_hash as usize % QUEUES;
        if self.tags[reduced] == flow_hash && self.flows[reduced].set != FlowSet::None {
            self.st.way_directs += 1;
            return reduced;
        }
        let inner = reduced % SET_WAYS;
        let outer = reduced - inner;
        let (mut alloc_src, mut alloc_dst) = (false, false);
        let mut k = inner;
        let mut found = false;
        for i in 0..SET_WAYS {
            if self.tags[outer + k] == flow_hash {
                if i > 0 {
                    self.st.way_hits += 1;
                }
                if self.flows[outer + k].set == FlowSet::None {
                    alloc_src = mode.dsrc();
                    alloc_dst = mode.ddst();
                }
                found = true;
                break;
            }
            k = (k + 1) % SET_WAYS;
        }
        if !found {
            for _ in 0..SET_WAYS {
                if self.flows[outer + k].set == FlowSet::None {
                    self.st.way_misses += 1;
                    found = true;
                    break;
                }
                k = (k + 1) % SET_WAYS;
            }
            if !found {
                // No empty way: accept the collision in the original queue, retag it.
                self.st.way_collisions += 1;
                if self.flows[outer + k].set == FlowSet::Bulk {
                    let (s, d) = (self.flows[reduced].srchost as usize, self.flows[reduced].dsthost as usize);
                    self.hosts[s].src_bulk = self.hosts[s].src_bulk.wrapping_sub(1);
                    self.hosts[d].dst_bulk = self.hosts[d].dst_bulk.wrapping_sub(1);
                }
            }
            alloc_src = mode.dsrc();
            alloc_dst = mode.ddst();
        }
        reduced = outer + k;
        self.tags[reduced] = flow_hash;
        let bulk = self.flows[reduced].set == FlowSet::Bulk;
        if alloc_src {
            let h = self.host_slot(src_hash, true);
            if bulk {
                self.hosts[h].src_bulk += 1;
            }
            self.flows[reduced].srchost = h as u16;
        }
        if alloc_dst {
            let h = self.host_slot(dst_hash, false);
            if bulk {
                self.hosts[h].dst_bulk += 1;
            }
            self.flows[reduced].dsthost = h as u16;
        }
        reduced
    }

    /// The host entry of `hash` (source or destination table): a way with its tag, else the
    /// first way without bulk flows (retagged), else the last way probed.
    fn host_slot(&mut self, hash: u32, src: bool) -> usize {
        let idx = hash as usize % QUEUES;
        let inner = idx % SET_WAYS;
        let outer = idx - inner;
        let tag = |h: &Host| if src { h.src_tag } else { h.dst_tag };
        let bulk = |h: &Host| if src { h.src_bulk } else { h.dst_bulk };
        let mut k = inner;
        for _ in 0..SET_WAYS {
            if tag(&self.hosts[outer + k]) == hash {
                return outer + k;
            }
            k = (k + 1) % SET_WAYS;
        }
        for _ in 0..SET_WAYS {
            if bulk(&self.hosts[outer + k]) == 0 {
                break;
            }
            k = (k + 1) % SET_WAYS;
        }
        let h = &mut self.hosts[outer + k];
        if src {
            h.src_tag = hash;
        } else {
            h.dst_tag = hash;
        }
        outer + k
    }

    /// A flow's DRR refill scaled by its hosts' bulk-flow counts (`quantum_div`), with the
    /// kernel's 16-bit random dithering `dither`.
    fn host_quantum(&self, f: usize, mode: CakeFlowMode, dither: u32) -> i32 {
        let fl = &self.flows[f];
        let mut load = 1u16;
        if mode.dsrc() {
            load = load.max(self.hosts[fl.srchost as usize].src_bulk);
        }
        if mode.ddst() {
            load = load.max(self.hosts[fl.dsthost as usize].dst_bulk);
        }
        let load = (load as usize).min(QUEUES);
        ((self.flow_quantum as u32 * QUANTUM_DIV[load] as u32 + dither) >> 16) as i32
    }

    /// A flow turns bulk: count it, and at its hosts in the modes that share by host.
    fn make_bulk(&mut self, f: usize, mode: CakeFlowMode) {
        self.sparse -= 1;
        self.bulk += 1;
        let (s, d) = (self.flows[f].srchost as usize, self.flows[f].dsthost as usize);
        if mode.dsrc() {
            self.hosts[s].src_bulk += 1;
        }
        if mode.ddst() {
            self.hosts[d].dst_bulk += 1;
        }
        self.flows[f].set = FlowSet::Bulk;
    }

    fn bulk_left(&mut self, f: usize, mode: CakeFlowMode) {
        self.bulk -= 1;
        let (s, d) = (self.flows[f].srchost as usize, self.flows[f].dsthost as usize);
        if mode.dsrc() {
            self.hosts[s].src_bulk = self.hosts[s].src_bulk.saturating_sub(1);
        }
        if mode.ddst() {
            self.hosts[d].dst_bulk = self.hosts[d].dst_bulk.saturating_sub(1);
        }
    }
}

pub struct Cake {
    handle: Handle,
    conf: CakeConfig,
    mtu: u32,
    tin_cnt: usize,
    tin_index: &'static [u8; 64],
    tin_order: &'static [u8],
    tins: Vec<Tin>,
    /// Max-heap of (tin << 10 | queue) by backlog, kept only for a while after an overflow.
    heap: Vec<u16>,
    overflow_timeout: u16,
    rate_ns: u64,
    rate_shft: u32,
    time_next_packet: i64,
    failsafe_next_packet: i64,
    cur_tin: usize,
    /// Packets held in the flow queues (the stash not included).
    qlen: u32,
    buffer_used: u32,
    buffer_max_used: u32,
    buffer_limit: u32,
    avg_netoff: u32,
    min_netlen: u32,
    max_netlen: u32,
    min_adjlen: u32,
    max_adjlen: u32,
    fwmark_shift: u32,
    filters: Vec<Filter>,
    hash_key: SipKey,
    /// Per flow index: its three hashes ([`Cake::hashes`]).
    hash_cache: Vec<[u32; 3]>,
    rng: Xoshiro256PlusPlus,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let conf = {
        let mut p = opt_parser(&d.opts, d.end, diags);
        config::parse(&mut p)
    };
    if errors_since(diags, from) {
        return None;
    }
    let first = d.opts.first().copied().unwrap_or(d.kind);
    if conf.autorate {
        diags.push(super::diag_warning(
            first,
            "cake: autorate-ingress is accepted but not modelled: the shaper keeps the bandwidth given (unlimited if none), and the capacity estimate stays 0",
        ));
    }
    if conf.nat {
        diags.push(super::diag_warning(
            first,
            "cake: nat changes nothing here: airsched does no NAT, so the addresses cake hashes are already the hosts' own (what the conntrack lookup would recover)",
        ));
    }
    if conf.wash {
        diags.push(super::diag_warning(
            first,
            "cake: wash picks the tin from the DSCP as the kernel does, but the DSCP is not cleared in the packets (it belongs to the flow here): later hops, such as the WiFi access category, still see it",
        ));
    }
    let mut filters = d.filters;
    sort_filters(&mut filters);
    let fwmark_shift = if conf.fwmark == 0 { 0 } else { conf.fwmark.trailing_zeros() };
    let mut q = Cake {
        handle: d.handle,
        mtu: cx.mtu,
        tin_cnt: 0,
        tin_index: &[0; 64],
        tin_order: &[],
        tins: (0..MAX_TINS).map(|_| Tin::new()).collect(),
        heap: (0..HEAP as u16).collect(),
        overflow_timeout: 0,
        rate_ns: 0,
        rate_shft: 0,
        time_next_packet: 0,
        failsafe_next_packet: 0,
        cur_tin: 0,
        qlen: 0,
        buffer_used: 0,
        buffer_max_used: 0,
        buffer_limit: 0,
        avg_netoff: 0,
        min_netlen: !0,
        max_netlen: 0,
        min_adjlen: !0,
        max_adjlen: 0,
        fwmark_shift,
        filters,
        hash_cache: Vec::new(),
        hash_key: SipKey::draw(&mut stream(cx.seed, StreamKind::Qdisc, CAKE_STREAM_TAG ^ cx.stream)),
        rng: stream(cx.seed, StreamKind::Qdisc, CAKE_STREAM_TAG ^ cx.stream.rotate_left(32) ^ d.handle.0 as u64 ^ 1),
        stash: None,
        stats: QdiscStats::default(),
        conf,
    };
    for (t, tin) in q.tins.iter_mut().enumerate() {
        for (j, o) in tin.overflow_idx.iter_mut().enumerate() {
            *o = (t * QUEUES + j) as u16;
        }
    }
    q.reconfigure();
    Some(QdiscImpl::Cake(Box::new(q)))
}

impl Cake {
    /// `cake_reconfigure`: tins from the diffserv mode, the global rate, the memory limit.
    fn reconfigure(&mut self) {
        let layout = self.conf.diffserv.layout();
        self.tin_cnt = layout.count;
        self.tin_index = layout.index;
        self.tin_order = layout.order;
        let (target, rtt) = (self.conf.target_us as u64 * 1000, self.conf.interval_us as u64 * 1000);
        for (i, (rate, quantum)) in self.conf.diffserv.tin_rates(self.conf.rate_bps).into_iter().enumerate() {
            self.tins[i].set_rate(rate, self.mtu, target, rtt);
            self.tins[i].tin_quantum = quantum;
        }
        let mtu_time = self.tins[0].cparams.mtu_time;
        for t in &mut self.tins[self.tin_cnt..] {
            t.cparams.mtu_time = mtu_time;
        }
        self.rate_ns = self.tins[0].rate_ns;
        self.rate_shft = self.tins[0].rate_shft;
        let limit = if self.conf.memlimit > 0 {
            self.conf.memlimit as u64
        } else if self.conf.rate_bps > 0 {
            ((self.conf.rate_bps as u128 * self.conf.interval_us as u128 / 250_000) as u64).max(4 << 20)
        } else {
            u32::MAX as u64
        };
        let cap = (LIMIT_PACKETS as u64 * self.mtu as u64).max(self.conf.memlimit as u64);
        self.buffer_limit = limit.min(cap).min(u32::MAX as u64) as u32;
    }

    fn ingress(&self) -> bool {
        self.conf.ingress
    }

    /// The overhead-adjusted length of a packet of qdisc length `len` (`cake_calc_overhead`
    /// without its statistics).
    #[inline]
    fn adjusted_len(&self, len: u32) -> u32 {
        let mut l = len as i64;
        if self.conf.overhead_flag {
            l -= L2_HEADER_BYTES as i64;
        }
        l = (l + self.conf.overhead as i64).max(0).max(self.conf.mpu as i64);
        match self.conf.atm {
            CakeAtm::Atm => l = (l + 47) / 48 * 53,
            CakeAtm::Ptm => l += (l + 63) / 64,
            CakeAtm::None => {}
        }
        l as u32
    }

    /// `cake_overhead` at enqueue: the adjusted length, with the size statistics.
    fn overhead(&mut self, len: u32) -> u32 {
        self.avg_netoff = ewma(self.avg_netoff as u64, (L2_HEADER_BYTES as u64) << 16, 8) as u32;
        self.min_netlen = self.min_netlen.min(len);
        self.max_netlen = self.max_netlen.max(len);
        let adj = self.adjusted_len(len);
        self.min_adjlen = self.min_adjlen.min(adj);
        self.max_adjlen = self.max_adjlen.max(adj);
        adj
    }

    /// `cake_select_tin`: besteffort; else the fwmark, then `skb->priority` `handle:n`, as
    /// tins in display order; else the DSCP table.
    fn select_tin(&self, key: &FlowKey) -> usize {
        if self.conf.diffserv == CakeDiffserv::Besteffort {
            return 0;
        }
        let mark = ((key.mark & self.conf.fwmark) >> self.fwmark_shift) as usize;
        if mark > 0 && mark <= self.tin_cnt {
            return self.tin_order[mark - 1] as usize;
        }
        let prio = Handle(key.priority);
        let minor = prio.minor() as usize;
        if self.handle != Handle::UNSPEC && prio.qdisc() == self.handle && minor > 0 && minor <= self.tin_cnt {
            return self.tin_order[minor - 1] as usize;
        }
        let tin = self.tin_index[(key.tos >> 2) as usize] as usize;
        if tin >= self.tin_cnt {
            0
        } else {
            tin
        }
    }

    /// The 5-tuple, source-host and destination-host hashes of flow `flow` (airsched's flow
    /// index; its key never changes), computed once and kept: a flow hash is never 0, so 0
    /// marks an entry not yet computed. The table grows only when a new flow index appears.
    #[inline]
    fn hashes(&mut self, flow: u32, key: &FlowKey) -> [u32; 3] {
        let i = flow as usize;
        if i >= self.hash_cache.len() {
            self.hash_cache.resize(i + 1, [0; 3]);
        }
        if self.hash_cache[i][0] == 0 {
            let host = |addr: u32| FlowKey {
                src_ip: addr,
                dst_ip: 0,
                sport: 0,
                dport: 0,
                proto: 0,
                tos: 0,
                mark: 0,
                priority: 0,
            };
            self.hash_cache[i] = [
                flow_hash(key, self.hash_key),
                flow_hash(&host(key.src_ip), self.hash_key),
                flow_hash(&host(key.dst_ip), self.hash_key),
            ];
        }
        self.hash_cache[i]
    }

    /// `cake_hash`: the queue (in tin `tin`) of a packet of flow `flow`, with overrides from a
    /// filter.
    fn hash(&mut self, tin: usize, flow_idx: u32, key: &FlowKey, flow_override: u16, host_override: u16) -> usize {
        let mode = self.conf.flow_mode;
        if mode == CakeFlowMode::Flowblind {
            return 0;
        }
        let bits = mode.bits();
        let mut flow = 0u32;
        let (mut src, mut dst) = (0u32, 0u32);
        let [h5, hs, hd] = self.hashes(flow_idx, key);
        if host_override == 0 && bits & 3 != 0 {
            dst = hd;
            src = hs;
        }
        if flow_override > 0 {
            flow = flow_override as u32 - 1;
        } else if bits & 4 != 0 {
            flow = h5;
        }
        if host_override > 0 {
            src = host_override as u32 - 1;
            dst = src;
        }
        if bits & 4 == 0 {
            if bits & 1 != 0 {
                flow ^= src;
            }
            if bits & 2 != 0 {
                flow ^= dst;
            }
        }
        self.tins[tin].lookup(flow, src, dst, mode)
    }

    /// `cake_advance_shaper`: charge `len` (adjusted) to tin `tin` and the global clocks; a
    /// dropped packet (ingress mode) is not charged to the failsafe clock.
    fn advance_shaper(&mut self, tin: usize, len: u32, now: i64, drop: bool) -> u32 {
        if self.rate_ns > 0 {
            let b = &mut self.tins[tin];
            let tin_dur = ((len as u64 * b.rate_ns) >> b.rate_shft) as i64;
            let global_dur = ((len as u64 * self.rate_ns) >> self.rate_shft) as i64;
            let failsafe_dur = global_dur + (global_dur >> 1);
            if b.time_next_packet < now {
                b.time_next_packet += tin_dur;
            } else if b.time_next_packet < now + tin_dur {
                b.time_next_packet = now + tin_dur;
            }
            self.time_next_packet += global_dur;
            if !drop {
                self.failsafe_next_packet += failsafe_dur;
            }
        }
        len
    }

    #[inline]
    fn heap_backlog(&self, i: usize) -> u32 {
        let e = self.heap[i] as usize;
        self.tins[e / QUEUES].backlogs[e % QUEUES]
    }

    fn heap_swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        for k in [i, j] {
            let e = self.heap[k] as usize;
            self.tins[e / QUEUES].overflow_idx[e % QUEUES] = k as u16;
        }
    }

    /// `cake_heapify`: sift entry `i` down.
    fn heapify(&mut self, mut i: usize) {
        let mut mb = self.heap_backlog(i);
        let mut m = i;
        loop {
            let l = 2 * m + 1;
            let r = l + 1;
            if l < HEAP {
                let lb = self.heap_backlog(l);
                if lb > mb {
                    m = l;
                    mb = lb;
                }
            }
            if r < HEAP {
                let rb = self.heap_backlog(r);
                if rb > mb {
                    m = r;
                    mb = rb;
                }
            }
            if m != i {
                self.heap_swap(i, m);
                i = m;
            } else {
                break;
            }
        }
    }

    /// `cake_heapify_up`: sift entry `i` up.
    fn heapify_up(&mut self, mut i: usize) {
        while i > 0 && i < HEAP {
            let p = (i - 1) >> 1;
            if self.heap_backlog(i) > self.heap_backlog(p) {
                self.heap_swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    /// `cake_drop`: drop from the head of the longest queue of all tins. Returns the (tin,
    /// queue) it dropped from and whether it dropped anything.
    fn drop_longest(&mut self, cx: &mut QCtx<'_>, now: i64) -> Option<(usize, usize, PacketId)> {
        if self.overflow_timeout == 0 {
            for i in (0..HEAP / 2).rev() {
                self.heapify(i);
            }
        }
        self.overflow_timeout = 65535;
        let e = self.heap[0] as usize;
        let (tin, idx) = (e / QUEUES, e % QUEUES);
        let Some(p) = self.tins[tin].flows[idx].queue.pop_front() else {
            // The heap has gone wrong: rebuild it next time.
            self.overflow_timeout = 0;
            return None;
        };
        let len = cx.len(p);
        let b = &mut self.tins[tin];
        if b.flows[idx].cvars.queue_full(&b.cparams, now) {
            b.unresponsive += 1;
        }
        b.backlogs[idx] -= len;
        b.tin_backlog -= len;
        b.st.dropped += 1;
        b.flows[idx].dropped += 1;
        self.buffer_used -= truesize(len);
        self.qlen -= 1;
        if self.ingress() {
            let adj = self.adjusted_len(len);
            self.advance_shaper(tin, adj, now, true);
        }
        cx.drop(p);
        self.heapify(0);
        Some((tin, idx, p))
    }

    fn enqueue_inner(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let t = now.as_ns() as i64;
        let key = *cx.key(pkt);
        let len = cx.len(pkt);
        // cake_classify: a filter's class id overrides the flow (minor) and host (major) hash.
        let (mut flow_ov, mut host_ov) = (0u16, 0u16);
        if !self.filters.is_empty() {
            let v = classify_at(&self.filters, self.handle, &key, cx.pkts.get(pkt).ip_len, now);
            if v == Classified::Shot {
                // cake_classify returns 0: cake_enqueue drops the packet (qdisc_qstats_drop).
                cx.drop(pkt);
                return Enq::Dropped;
            }
            if let Some(c) = v.class() {
                if c.minor() as usize <= QUEUES {
                    flow_ov = c.minor();
                }
                if c.major() as usize <= QUEUES {
                    host_ov = c.major();
                }
            }
        }
        let tin = self.select_tin(&key);
        let idx = self.hash(tin, cx.pkts.get(pkt).flow, &key, flow_ov, host_ov);
        // Make sure the shaper's state is not stale.
        if self.tins[tin].tin_backlog == 0 {
            let b = &mut self.tins[tin];
            if b.time_next_packet < t {
                b.time_next_packet = t;
            }
            if self.qlen == 0 && self.stash.is_none() {
                if self.time_next_packet < t {
                    self.failsafe_next_packet = t;
                    self.time_next_packet = t;
                } else if self.time_next_packet > t && self.failsafe_next_packet > t {
                    self.stats.overlimits += 1;
                }
            }
        }
        let b = &mut self.tins[tin];
        b.st.max_skblen = b.st.max_skblen.max(len);
        self.overhead(len);
        cx.stamp(pkt, now);
        self.tins[tin].flows[idx].queue.push_back(pkt);
        let mut held = len;
        let acked = if self.conf.ack_filter != CakeAckFilter::None {
            ack_filter(&mut self.tins[tin].flows[idx].queue, cx, self.conf.ack_filter == CakeAckFilter::Aggressive)
        } else {
            None
        };
        if let Some(a) = acked {
            let alen = cx.len(a);
            self.tins[tin].st.ack_drops += 1;
            self.tins[tin].st.bytes += alen as u64;
            held -= alen;
            self.buffer_used = self.buffer_used + truesize(len) - truesize(alen);
            if self.ingress() {
                let adj = self.adjusted_len(alen);
                self.advance_shaper(tin, adj, t, true);
            }
            cx.drop(a);
        } else {
            self.qlen += 1;
            self.buffer_used += truesize(len);
        }
        let b = &mut self.tins[tin];
        b.st.packets += 1;
        b.st.bytes += held as u64;
        b.backlogs[idx] += held;
        b.tin_backlog += held;
        if self.overflow_timeout > 0 {
            let h = self.tins[tin].overflow_idx[idx] as usize;
            self.heapify_up(h);
        }
        // The flowchain.
        let mode = self.conf.flow_mode;
        let b = &mut self.tins[tin];
        match b.flows[idx].set {
            FlowSet::None | FlowSet::Decaying => {
                if b.flows[idx].set == FlowSet::None {
                    b.list_push_tail(idx as u16, NEW);
                } else {
                    b.decaying -= 1;
                    b.list_move_tail(idx as u16, NEW);
                }
                b.flows[idx].set = FlowSet::Sparse;
                b.sparse += 1;
                b.flows[idx].deficit = b.host_quantum(idx, mode, 0);
            }
            FlowSet::SparseWait => b.make_bulk(idx, mode),
            FlowSet::Sparse | FlowSet::Bulk => {}
        }
        self.buffer_max_used = self.buffer_max_used.max(self.buffer_used);
        let mut res = Enq::Queued;
        while self.buffer_used > self.buffer_limit {
            match self.drop_longest(cx, t) {
                Some((_, _, p)) if p == pkt => res = Enq::Dropped,
                Some(_) if res == Enq::Queued => res = Enq::Congestion,
                Some(_) => {}
                None if self.overflow_timeout == 0 && self.qlen > 0 => continue,
                None => break,
            }
        }
        if acked.is_some() && res == Enq::Queued {
            res = Enq::Congestion;
        }
        res
    }

    /// `cake_dequeue_one`: the head of the current flow, with the backlog bookkeeping.
    fn dequeue_one(&mut self, tin: usize, f: usize, cx: &QCtx<'_>) -> Option<PacketId> {
        let f = f % QUEUES;
        let p = self.tins[tin].flows[f].queue.pop_front()?;
        let len = cx.len(p);
        let b = &mut self.tins[tin];
        b.backlogs[f] -= len;
        b.tin_backlog -= len;
        self.buffer_used -= truesize(len);
        self.qlen -= 1;
        if self.overflow_timeout > 0 {
            let h = self.tins[tin].overflow_idx[f] as usize;
            self.heapify(h);
        }
        Some(p)
    }

    /// `cake_dequeue`.
    fn cake_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let t = now.as_ns() as i64;
        let mode = self.conf.flow_mode;
        let mut first_flow = true;
        'begin: loop {
            if self.qlen == 0 {
                return None;
            }
            // The global hard shaper.
            if self.time_next_packet > t && self.failsafe_next_packet > t {
                self.stats.overlimits += 1;
                return None;
            }
            // Choose a tin.
            if self.rate_ns == 0 {
                // Unlimited: DRR between tins.
                let (mut wrapped, mut empty) = (false, true);
                loop {
                    let b = &mut self.tins[self.cur_tin];
                    if b.tin_deficit >= 0 && b.sparse + b.bulk > 0 {
                        break;
                    }
                    if b.tin_deficit <= 0 {
                        b.tin_deficit += b.tin_quantum as i32;
                    }
                    if b.sparse + b.bulk > 0 {
                        empty = false;
                    }
                    self.cur_tin += 1;
                    if self.cur_tin >= self.tin_cnt {
                        self.cur_tin = 0;
                        if wrapped {
                            if empty {
                                return None;
                            }
                        } else {
                            wrapped = true;
                        }
                    }
                }
            } else {
                // Shaped: the highest tin whose clock is due, else the earliest.
                let mut best_time = i64::MAX;
                let mut best_tin = 0;
                for (i, b) in self.tins[..self.tin_cnt].iter().enumerate() {
                    if b.sparse + b.bulk > 0 {
                        let ttp = b.time_next_packet - t;
                        if ttp <= 0 || ttp <= best_time {
                            best_time = ttp;
                            best_tin = i;
                        }
                    }
                }
                self.cur_tin = best_tin;
                let b = &self.tins[best_tin];
                if b.sparse + b.bulk == 0 {
                    return None;
                }
            }
            let tin = self.cur_tin;
            // Serve the tin (the kernel's `retry`).
            'retry: loop {
                let b = &mut self.tins[tin];
                let list = if first_flow && b.head[DECAYING] != NIL {
                    DECAYING
                } else if b.head[NEW] != NIL {
                    NEW
                } else if b.head[OLD] != NIL {
                    OLD
                } else if b.head[DECAYING] != NIL {
                    DECAYING
                } else {
                    continue 'begin;
                };
                // (a queue index: the modulo, an AND, tells the compiler so)
                let f = b.head[list] as usize % QUEUES;
                first_flow = false;
                // Flow isolation (DRR++), host-scaled.
                if b.flows[f].deficit <= 0 {
                    if b.flows[f].set == FlowSet::Sparse {
                        if b.flows[f].queue.is_empty() {
                            b.flows[f].set = FlowSet::SparseWait;
                        } else {
                            b.make_bulk(f, mode);
                        }
                    }
                    let dither = self.rng.next_u32() & 0xffff;
                    let b = &mut self.tins[tin];
                    let q = b.host_quantum(f, mode, dither);
                    b.flows[f].deficit += q;
                    b.list_move_tail(f as u16, OLD);
                    continue 'retry;
                }
                // Retrieve a packet through the AQM.
                let p = loop {
                    let Some(p) = self.dequeue_one(tin, f, cx) else {
                        // This queue was actually empty.
                        let b = &mut self.tins[tin];
                        let cp = b.cparams;
                        if b.flows[f].cvars.queue_empty(&cp, t) {
                            b.unresponsive -= 1;
                        }
                        let set = b.flows[f].set;
                        if b.flows[f].cvars.active(t) {
                            // Keep it in the flowchain until its state has decayed to rest.
                            b.list_move_tail(f as u16, DECAYING);
                            match set {
                                FlowSet::Bulk => {
                                    b.bulk_left(f, mode);
                                    b.decaying += 1;
                                }
                                FlowSet::Sparse | FlowSet::SparseWait => {
                                    b.sparse -= 1;
                                    b.decaying += 1;
                                }
                                FlowSet::Decaying | FlowSet::None => {}
                            }
                            b.flows[f].set = FlowSet::Decaying;
                        } else {
                            b.list_del(f as u16);
                            match set {
                                FlowSet::Sparse | FlowSet::SparseWait => b.sparse -= 1,
                                FlowSet::Bulk => b.bulk_left(f, mode),
                                FlowSet::Decaying | FlowSet::None => b.decaying = b.decaying.saturating_sub(1),
                            }
                            b.flows[f].set = FlowSet::None;
                        }
                        continue 'begin;
                    };
                    let bulk = if self.ingress() { self.tins[tin].bulk } else { 0 };
                    let ect = cx.key(p).tos & 3 != 0;
                    let enq = cx.enqueued_at(p).as_ns() as i64;
                    let rng = &mut self.rng;
                    let b = &mut self.tins[tin];
                    let cp = b.cparams;
                    let verdict = b.flows[f].cvars.should_drop(&cp, t, enq, bulk, ect, || rng.next_u32());
                    // The last packet of a queue may be marked, never dropped.
                    if verdict == Verdict::Keep || b.flows[f].queue.is_empty() {
                        break p;
                    }
                    if self.ingress() {
                        let adj = self.adjusted_len(cx.len(p));
                        let len = self.advance_shaper(tin, adj, t, true) as i32;
                        let b = &mut self.tins[tin];
                        b.flows[f].deficit -= len;
                        b.tin_deficit -= len;
                    }
                    self.tins[tin].st.dropped += 1;
                    self.tins[tin].flows[f].dropped += 1;
                    cx.drop(p);
                    if self.ingress() {
                        continue 'retry;
                    }
                };
                let b = &mut self.tins[tin];
                if b.flows[f].cvars.ecn_marked {
                    b.st.ecn_mark += 1;
                }
                // Delay statistics.
                let delay = (t - cx.enqueued_at(p).as_ns() as i64).max(0) as u64;
                let st = &mut b.st;
                st.avge_delay = ewma(st.avge_delay, delay, 8);
                st.peak_delay = ewma(st.peak_delay, delay, if delay > st.peak_delay { 2 } else { 8 });
                st.base_delay = ewma(st.base_delay, delay, if delay < st.base_delay { 2 } else { 8 });
                let adj = self.adjusted_len(cx.len(p));
                let len = self.advance_shaper(tin, adj, t, false) as i32;
                let b = &mut self.tins[tin];
                b.flows[f].deficit -= len;
                b.tin_deficit -= len;
                self.overflow_timeout = self.overflow_timeout.saturating_sub(1);
                return Some(p);
            }
        }
    }

    /// `cake_walk`: every queue on a flowchain (a tin's new, old or decaying list) is a class
    /// `MAJOR:(tin · 1024 + queue + 1)`, tins in display order, with the queue's packets, bytes
    /// and drops (`cake_dump_class_stats`).
    fn flow_classes(&self) -> Vec<super::ClassReport> {
        let mut out = vec![];
        for (i, &ti) in self.tin_order.iter().enumerate() {
            let b = &self.tins[ti as usize];
            for (j, f) in b.flows.iter().enumerate() {
                if f.list == NO_LIST {
                    continue;
                }
                out.push(super::ClassReport {
                    kind: "cake",
                    classid: Handle::new(self.handle.major(), (i * QUEUES + j + 1) as u16),
                    parent: self.handle,
                    leaf: None,
                    options: String::new(),
                    stats: QdiscStats {
                        qlen: f.queue.len() as u64,
                        backlog_bytes: b.backlogs[j] as u64,
                        drops: f.dropped as u64,
                        ..QdiscStats::default()
                    },
                    xstats: vec![],
                    xstats_text: String::new(),
                });
            }
        }
        out
    }

    fn tin_stats_text(&self) -> String {
        let n = self.tin_cnt;
        let mut s = String::new();
        match n {
            3 => s += "                   Bulk  Best Effort        Voice\n",
            4 => s += "                   Bulk  Best Effort        Video        Voice\n",
            _ => {
                s += "          ";
                for i in 0..n {
                    s += &format!("        Tin {i}");
                }
                s.push('\n');
            }
        }
        let tins: Vec<&Tin> = self.tin_order.iter().map(|&i| &self.tins[i as usize]).collect();
        let mut row = |name: &str, f: &dyn Fn(&Tin) -> String| {
            s += name;
            for t in &tins {
                s += &format!(" {:>12}", f(t));
            }
            s.push('\n');
        };
        let us = |ns: u64| format_time_us(ns / 1000);
        row("  thresh  ", &|t| format_rate_bytes(t.rate_bps));
        row("  target  ", &|t| us(t.cparams.target));
        row("  interval", &|t| us(t.cparams.interval));
        row("  pk_delay", &|t| us(t.st.peak_delay));
        row("  av_delay", &|t| us(t.st.avge_delay));
        row("  sp_delay", &|t| us(t.st.base_delay));
        row("  backlog ", &|t| format_size(t.tin_backlog as u64));
        row("  pkts    ", &|t| t.st.packets.to_string());
        row("  bytes   ", &|t| t.st.bytes.to_string());
        row("  way_inds", &|t| t.st.way_hits.to_string());
        row("  way_miss", &|t| t.st.way_misses.to_string());
        row("  way_cols", &|t| t.st.way_collisions.to_string());
        row("  drops   ", &|t| t.st.dropped.to_string());
        row("  marks   ", &|t| t.st.ecn_mark.to_string());
        row("  ack_drop", &|t| t.st.ack_drops.to_string());
        row("  sp_flows", &|t| (t.sparse + t.decaying).to_string());
        row("  bk_flows", &|t| t.bulk.to_string());
        row("  un_flows", &|t| t.unresponsive.to_string());
        row("  max_len ", &|t| t.st.max_skblen.to_string());
        row("  quantum ", &|t| t.flow_quantum.to_string());
        s.pop();
        s
    }
}

/// `cake_ewma`: `avg + (sample - avg) / 2^shift` in the kernel's integer form.
#[inline]
fn ewma(avg: u64, sample: u64, shift: u32) -> u64 {
    avg - (avg >> shift) + (sample >> shift)
}

/// `cake_ack_filter` over the TCP fields airsched's packets carry: when the packet just
/// queued at the tail of `queue` is a pure ACK, find an older pure ACK of the same
/// connection that it makes redundant (its cumulative ACK is not after the tail's, and the
/// tail's SACK blocks cover its own, with a strictly larger ACK when they are equal), and
/// remove it from the queue. Conservative mode drops the first eligible ACK only when two
/// were found; aggressive mode also drops a single one directly before the tail.
fn ack_filter(queue: &mut VecDeque<PacketId>, cx: &QCtx<'_>, aggressive: bool) -> Option<PacketId> {
    let &tail = queue.back()?;
    let tk = *cx.key(tail);
    let tp = cx.pkts.get(tail);
    if tk.proto != 6 || tp.payload != 0 || tp.ack == 0 {
        return None;
    }
    let tail_sack = sack_ranges(tp.ack, &tp.sack);
    let n = queue.len() - 1;
    let mut elig: Option<usize> = None;
    let mut found = 0;
    for (i, &c) in queue.iter().enumerate().take(n) {
        let ck = cx.key(c);
        if ck.proto != 6
            || ck.src_ip != tk.src_ip
            || ck.dst_ip != tk.dst_ip
            || ck.sport != tk.sport
            || ck.dport != tk.dport
        {
            continue;
        }
        let cp = cx.pkts.get(c);
        if cp.payload != 0 || cp.ack == 0 || cp.ack > tp.ack {
            continue;
        }
        let cmp = sack_compare(&sack_ranges(cp.ack, &cp.sack), &tail_sack);
        if cmp < 0 || (cp.ack == tp.ack && cmp == 0) {
            continue;
        }
        if elig.is_none() {
            elig = Some(i);
        }
        found += 1;
        if found > 1 {
            break;
        }
    }
    let i = elig?;
    if found > 1 || (aggressive && i + 1 == n) {
        queue.remove(i)
    } else {
        None
    }
}

/// A packet's SACK blocks as absolute byte ranges (offsets from its ACK; `(0, 0)` ends them).
fn sack_ranges(ack: u64, sack: &[u32; 6]) -> [(u64, u64); 3] {
    let mut r = [(0, 0); 3];
    for (i, c) in sack.chunks_exact(2).enumerate() {
        if c[0] == 0 && c[1] == 0 {
            break;
        }
        r[i] = (ack + c[0] as u64, ack + c[1] as u64);
    }
    r
}

/// `cake_tcph_sack_compare`: -1 if `a` SACKs a range `b` does not cover, else 1 if `b` SACKs
/// more bytes, else 0.
fn sack_compare(a: &[(u64, u64); 3], b: &[(u64, u64); 3]) -> i32 {
    let blocks = |x: &[(u64, u64); 3]| x.iter().filter(|r| r.1 > r.0).copied().collect::<Vec<_>>();
    let (a, b) = (blocks(a), blocks(b));
    let bytes_b: u64 = b.iter().map(|r| r.1 - r.0).sum();
    let mut bytes_a = 0;
    for ra in &a {
        if !b.iter().any(|rb| rb.0 <= ra.0 && ra.1 <= rb.1) {
            return -1;
        }
        bytes_a += ra.1 - ra.0;
    }
    i32::from(bytes_b > bytes_a)
}

impl StashPeek for Cake {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.cake_dequeue(cx, now)
    }
}

impl Qdisc for Cake {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = self.enqueue_inner(pkt, cx, now);
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.peek_stashed(cx, now)
    }

    /// The shaper's watchdog: while packets wait and both clocks are in the future.
    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.qlen == 0 {
            return None;
        }
        let t = now.as_ns() as i64;
        let next = self.time_next_packet.min(self.failsafe_next_packet);
        (next > t).then_some(Nanos(next as u64))
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().for_each(|&p| f(p));
        for t in &self.tins {
            t.flows.iter().flat_map(|fl| fl.queue.iter()).for_each(|&p| f(p));
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let netoff = (self.avg_netoff + 0x8000) >> 16;
        let text = format!(
            " memory used: {} of {}\n capacity estimate: {}\n min/max network layer size: {:>12} /{:>8}\n min/max overhead-adjusted size: {:>8} /{:>8}\n average network hdr offset: {:>12}\n\n{}",
            format_size(self.buffer_max_used as u64),
            format_size(self.buffer_limit as u64),
            format_rate_bytes(0),
            self.min_netlen,
            self.max_netlen,
            self.min_adjlen,
            self.max_adjlen,
            netoff,
            self.tin_stats_text()
        );
        let mut xstats: Vec<(String, i64)> = vec![
            ("memory_used".into(), self.buffer_max_used as i64),
            ("memory_limit".into(), self.buffer_limit as i64),
            ("capacity_estimate".into(), 0),
            ("min_network_size".into(), self.min_netlen as i64),
            ("max_network_size".into(), self.max_netlen as i64),
            ("min_adj_size".into(), self.min_adjlen as i64),
            ("max_adj_size".into(), self.max_adjlen as i64),
            ("avg_hdr_offset".into(), netoff as i64),
        ];
        for (i, &ti) in self.tin_order.iter().enumerate() {
            let t = &self.tins[ti as usize];
            let rows: [(&str, i64); 20] = [
                ("threshold_rate", t.rate_bps as i64),
                ("sent_bytes", t.st.bytes as i64),
                ("backlog_bytes", t.tin_backlog as i64),
                ("target_us", (t.cparams.target / 1000) as i64),
                ("interval_us", (t.cparams.interval / 1000) as i64),
                ("peak_delay_us", (t.st.peak_delay / 1000) as i64),
                ("avg_delay_us", (t.st.avge_delay / 1000) as i64),
                ("base_delay_us", (t.st.base_delay / 1000) as i64),
                ("sent_packets", t.st.packets as i64),
                ("way_indirect_hits", t.st.way_hits as i64),
                ("way_misses", t.st.way_misses as i64),
                ("way_collisions", t.st.way_collisions as i64),
                ("drops", t.st.dropped as i64),
                ("ecn_mark", t.st.ecn_mark as i64),
                ("ack_drops", t.st.ack_drops as i64),
                ("sparse_flows", (t.sparse + t.decaying) as i64),
                ("bulk_flows", t.bulk as i64),
                ("unresponsive_flows", t.unresponsive as i64),
                ("max_pkt_len", t.st.max_skblen as i64),
                ("flow_quantum", t.flow_quantum as i64),
            ];
            xstats.extend(rows.iter().map(|(k, v)| (format!("tins.{i}.{k}"), *v)));
        }
        out.push(QdiscReport {
            kind: "cake",
            handle: self.handle,
            parent,
            options: self.conf.options(),
            stats: self.stats,
            xstats,
            xstats_text: text,
            classes: self.flow_classes(),
        });
    }
}

#[cfg(test)]
mod tests;
