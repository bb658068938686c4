//! FQ-MAC: mac80211's intermediate TX queues (`include/net/fq.h`, `fq_impl.h`,
//! `net/mac80211/tx.c`). One pool of `flows_cnt` hashed flows per radio; a tin per
//! (station, TID) with new/old flow lists, a byte deficit per flow (DRR++ with quantum 300) and
//! CoDel at dequeue per flow (target 20 ms, interval 100 ms, ECN, mtu 0); a hash collision with
//! a flow owned by another tin goes to that tin's default flow; over the global packet or
//! memory limit packets leave from the head of the fattest flow of the whole radio.
//! Versions: [`FqParams::linux_4_11`] (one packet per overflow round from the backlog-sorted
//! list, per-station CoDel parameters) and [`FqParams::linux_6_18`] (batch drop from the
//! fattest flow found by scan, one CoDel parameter set since the 2025 revert).
//! Deviations: the flow hash is airsched's seeded SipHash of the 5-tuple; frame length is the IP
//! datagram plus a 26-byte QoS data header and 8-byte LLC/SNAP (no A-MSDU merging, no
//! encryption); truesize is `qdisc::truesize`; the management TXQ and `frags` are not modelled;
//! ECN marks are counted, not written; among default flows of equal backlog the 6.x scan order
//! is by tin index (the kernel's is most-recently-backlogged first).

#[cfg(test)]
use crate::engine::{stream, StreamKind};
use crate::packet::{FlowKey, PacketId};
use crate::qdisc::codel_aqm::{us_to_codel, CodelParams, CodelStats, CodelVars};
use crate::qdisc::flow_hash::{flow_hash, SipKey};
use crate::qdisc::{truesize, Enq, QCtx};
use crate::time::Nanos;

use super::{StationId, TinId, NUM_TIDS};

/// 802.11 QoS data header (26 bytes) plus the LLC/SNAP header (8) that replace the Ethernet
/// header before a frame is queued: `skb->len` in the TXQs is the IP datagram plus these.
pub const WIFI_HEADER_BYTES: u32 = 34;

/// `STA_SLOW_THRESHOLD`, kbit/s per associated station (per-station CoDel, 4.10 to 6.14).
pub const STA_SLOW_THRESHOLD_KBPS: u32 = 6000;

// The key of the flow hash comes from this stream (there is no StreamKind for mac80211; the
// offset keeps it apart from the qdiscs', which use 1 << 60 and 2 << 60).

const NIL: u32 = u32::MAX;

/// What leaves when the radio is over its packet or memory limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverflowDrop {
    /// Linux 4.9 to 5.12: flows kept sorted by byte backlog; one packet from the head of the
    /// first (fattest) flow per round.
    HeadOfFattest,
    /// Linux 5.13 and later: the fattest flow found by scanning all backlogged flows (then the
    /// tins' default flows); `min(32, qlen / 2)` packets, at least one, from its head.
    BatchFromFattest,
}

/// Which CoDel parameters a station's TXQs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodelPolicy {
    /// Linux 4.10 to 6.14 (`sta_update_codel_params`): a station whose expected throughput is
    /// below 6 Mbit/s times the number of associated stations uses target 50 ms, interval
    /// 300 ms and no ECN; others 20 ms / 100 ms / ECN.
    PerStation,
    /// Linux 6.15 and later (the 2025 revert, also in 6.12.y): every TXQ uses 20 ms / 100 ms /
    /// ECN.
    Uniform,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqParams {
    /// Hashed flows per radio (`fq_flows_cnt`, 4096).
    pub flows_cnt: u32,
    /// Packets queued in the whole radio (`fq.limit`, 8192).
    pub limit: u32,
    /// Bytes of skb truesize queued in the whole radio (`fq.memory_limit`).
    pub memory_limit: u32,
    /// DRR quantum in bytes (`fq.quantum`, 300).
    pub quantum: u32,
    pub overflow: OverflowDrop,
    pub codel: CodelPolicy,
}

impl FqParams {
    /// The queues the "Ending the Anomaly" / next-steps papers measured (Linux ≈4.11): one
    /// packet per overflow round, per-station CoDel parameters, memory limit 16 MiB.
    pub fn linux_4_11() -> FqParams {
        FqParams {
            flows_cnt: 4096,
            limit: 8192,
            memory_limit: 16 << 20,
            quantum: 300,
            overflow: OverflowDrop::HeadOfFattest,
            codel: CodelPolicy::PerStation,
        }
    }

    /// Today's queues (Linux 6.18): batch drop from the fattest flow, uniform CoDel.
    pub fn linux_6_18() -> FqParams {
        FqParams { overflow: OverflowDrop::BatchFromFattest, codel: CodelPolicy::Uniform, ..FqParams::linux_4_11() }
    }

    /// The memory limit mac80211 sets when no band of the radio supports VHT (4 MiB instead of
    /// 16; added ≈4.19, version approximate): what an 802.11n radio gets.
    pub fn without_vht(self) -> FqParams {
        FqParams { memory_limit: 4 << 20, ..self }
    }
}

/// `local->cparams`: target 20 ms, interval 100 ms, ECN on, ce_threshold off, mtu 0 (so CoDel
/// never drops a flow's last packet).
fn wifi_codel_params() -> CodelParams {
    let mut p = CodelParams::new(0);
    p.target = us_to_codel(20_000);
    p.interval = us_to_codel(100_000);
    p.ecn = true;
    p
}

/// The parameters of a slow station (4.10 to 6.14): 50 ms, 300 ms, no ECN.
fn slow_station_codel_params() -> CodelParams {
    let mut p = wifi_codel_params();
    p.target = us_to_codel(50_000);
    p.interval = us_to_codel(300_000);
    p.ecn = false;
    p
}

/// Counters of one tin, as debugfs `stations/<sta>/aqm` and nl80211 TXQ stats show them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TinStats {
    pub backlog_bytes: u64,
    pub backlog_packets: u32,
    /// Flows this tin took ownership of (`tin->flows`, debugfs column "new-flows").
    pub flows: u32,
    /// Packets CoDel dropped (`cstats.drop_count`, column "drops").
    pub drops: u32,
    /// Packets CoDel marked instead of dropping (column "marks").
    pub ecn_marks: u32,
    /// Overflow rounds that took packets from one of this tin's flows (`tin->overlimit`).
    pub overlimit: u32,
    /// Packets those rounds dropped (airsched's addition: the kernel counts rounds only).
    pub overlimit_drops: u32,
    /// Packets that collided with another tin's flow and went to the default flow.
    pub collisions: u32,
    pub tx_bytes: u64,
    pub tx_packets: u32,
}

/// Radio-wide counters (debugfs `phyX/aqm`), plus airsched's conservation counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqStats {
    /// Packets queued in all tins (`fq_backlog`).
    pub backlog: u32,
    pub memory_usage: u32,
    /// Overflow rounds (`fq_overlimit`).
    pub overlimit: u32,
    /// Rounds caused by the memory limit (`fq_overmemory`).
    pub overmemory: u32,
    pub collisions: u32,
    /// Packets offered to [`Fq::enqueue`].
    pub enqueued: u64,
    /// Packets [`Fq::dequeue`] handed out.
    pub dequeued: u64,
    /// Packets dropped by the overflow rounds.
    pub overlimit_drops: u64,
    /// Packets dropped by CoDel.
    pub codel_drops: u64,
}

impl FqStats {
    /// Packets in = out + dropped + still queued.
    #[cfg(test)]
    pub fn conserved(&self) -> bool {
        self.enqueued == self.dequeued + self.overlimit_drops + self.codel_drops + self.backlog as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// `struct fq_flow`: a FIFO of packets threaded through `Fq::next_pkt`.
#[derive(Clone, Copy, Debug)]
struct Flow {
    head: u32,
    tail: u32,
    packets: u32,
    /// Bytes queued.
    backlog: u32,
    deficit: i32,
    /// Owning tin index, NIL when on no list.
    tin: u32,
    list: List,
    /// Next flow on the tin list this flow is on.
    next: u32,
    /// Index in `Fq::backlogged`, NIL when the backlog is zero.
    bl_pos: u32,
    /// Position among flows of equal backlog in the 4.x backlog-sorted list: a flow that grew
    /// goes before its equals (larger positive), one that shrank after them (negative,
    /// decreasing). Unused by the 6.x scan.
    order: i64,
}

const EMPTY_FLOW: Flow = Flow {
    head: NIL,
    tail: NIL,
    packets: 0,
    backlog: 0,
    deficit: 0,
    tin: NIL,
    list: List::None,
    next: NIL,
    bl_pos: NIL,
    order: 0,
};

/// A singly linked list of flows (new_flows or old_flows of a tin): only its head is ever
/// removed, flows are only appended.
#[derive(Clone, Copy, Debug)]
struct FlowList {
    head: u32,
    tail: u32,
}

const EMPTY_LIST: FlowList = FlowList { head: NIL, tail: NIL };

impl FlowList {
    fn push_back(&mut self, flows: &mut [Flow], f: u32) {
        flows[f as usize].next = NIL;
        if self.tail == NIL {
            self.head = f;
        } else {
            flows[self.tail as usize].next = f;
        }
        self.tail = f;
    }

    fn pop_front(&mut self, flows: &[Flow]) -> u32 {
        let f = self.head;
        debug_assert!(f != NIL, "pop from an empty flow list");
        self.head = flows[f as usize].next;
        if self.head == NIL {
            self.tail = NIL;
        }
        f
    }
}

struct Tin {
    new_flows: FlowList,
    old_flows: FlowList,
    stats: TinStats,
    cstats: CodelStats,
}

/// The FQ-MAC queues of one radio.
pub struct Fq {
    params: FqParams,
    hash_key: SipKey,
    /// Hashed flows `0..flows_cnt`, then one default (collision) flow per tin.
    flows: Vec<Flow>,
    /// CoDel state per flow (`local->cvars[]`, and each tin's `def_cvars`).
    cvars: Vec<CodelVars>,
    tins: Vec<Tin>,
    /// CoDel parameters per station (`sta->cparams`).
    sta_cparams: Vec<CodelParams>,
    /// Next packet of the same flow, indexed by `PacketId`; grows with the packet arena only.
    next_pkt: Vec<u32>,
    /// Flows with a non-zero backlog (the 6.x bitmap and tin_backlog list; the 4.x sorted
    /// list), in no particular order.
    backlogged: Vec<u32>,
    order_clock: i64,
    stats: FqStats,
    /// Per simulated flow: the header fields last hashed and the hashed flow they map to. A
    /// flow's fields are fixed (an external flow's are bound once), so the hash is computed
    /// once per flow rather than once per packet; the fields are compared to be sure.
    index_of_flow: Vec<Option<(FlowKey, u32)>>,
}

impl Fq {
    /// Queues for `n_stations` stations (`NUM_TIDS` tins each); the flow hash key is drawn
    /// from `seed` (tests and tools; the simulator keys the stream by the device's name,
    /// [`Fq::with_hash_stream`]).
    #[cfg(test)]
    pub fn new(params: FqParams, n_stations: usize, seed: u64) -> Fq {
        Self::with_hash_stream(params, n_stations, &mut stream(seed, StreamKind::FqMac, 0))
    }

    /// As [`Fq::new`], drawing the flow hash key from `rng`.
    pub fn with_hash_stream(params: FqParams, n_stations: usize, rng: &mut rand_xoshiro::Xoshiro256PlusPlus) -> Fq {
        let n_tins = n_stations * NUM_TIDS;
        let n_flows = params.flows_cnt.max(1) as usize + n_tins;
        let hash_key = SipKey::draw(rng);
        Fq {
            params: FqParams { flows_cnt: params.flows_cnt.max(1), ..params },
            hash_key,
            flows: vec![EMPTY_FLOW; n_flows],
            cvars: vec![CodelVars::default(); n_flows],
            tins: (0..n_tins)
                .map(|_| Tin {
                    new_flows: EMPTY_LIST,
                    old_flows: EMPTY_LIST,
                    stats: TinStats::default(),
                    cstats: CodelStats::default(),
                })
                .collect(),
            sta_cparams: vec![wifi_codel_params(); n_stations],
            next_pkt: Vec::with_capacity(4096),
            backlogged: Vec::with_capacity(n_flows),
            order_clock: 0,
            stats: FqStats::default(),
            index_of_flow: Vec::new(),
        }
    }

    #[cfg(test)]
    pub fn stats(&self) -> FqStats {
        self.stats
    }

    /// One tin's counters (debugfs `stations/<sta>/aqm`).
    pub fn tin_stats(&self, tin: TinId) -> TinStats {
        self.tins[tin.index()].stats
    }

    /// Every queued packet, flow by flow (for the simulator's conservation check).
    pub fn for_each_queued(&self, mut f: impl FnMut(PacketId)) {
        for fl in &self.flows {
            let mut p = fl.head;
            while p != NIL {
                f(PacketId(p));
                p = self.next_pkt[p as usize];
            }
        }
    }

    /// `txq_has_queue`: the tin holds packets.
    pub fn tin_has_queue(&self, tin: TinId) -> bool {
        self.tins[tin.index()].stats.backlog_packets > 0
    }

    /// The frame length the queues account for a packet: IP datagram + 802.11 headers.
    #[inline]
    pub fn frame_len(cx: &QCtx<'_>, pkt: PacketId) -> u32 {
        cx.pkts.get(pkt).ip_len + WIFI_HEADER_BYTES
    }

    /// `reciprocal_scale(hash, flows_cnt)`: the hashed flow a packet maps to.
    pub fn flow_index(&self, cx: &QCtx<'_>, pkt: PacketId) -> u32 {
        ((flow_hash(cx.key(pkt), self.hash_key) as u64 * self.params.flows_cnt as u64) >> 32) as u32
    }

    /// [`Fq::flow_index`], remembered per simulated flow.
    #[inline]
    fn cached_flow_index(&mut self, cx: &QCtx<'_>, pkt: PacketId) -> u32 {
        let f = cx.pkts.get(pkt).flow as usize;
        let key = cx.key(pkt);
        if let Some(Some((k, idx))) = self.index_of_flow.get(f) {
            if k == key {
                return *idx;
            }
        }
        let idx = self.flow_index(cx, pkt);
        if self.index_of_flow.len() <= f {
            self.index_of_flow.resize(f + 1, None);
        }
        self.index_of_flow[f] = Some((*key, idx));
        idx
    }

    fn default_flow(&self, tin: u32) -> u32 {
        self.params.flows_cnt + tin
    }

    /// `ieee80211_sta_set_expected_throughput` → `sta_update_codel_params`: with
    /// [`CodelPolicy::PerStation`], a station whose expected throughput (kbit/s, 0 = unknown)
    /// is below 6000 × `num_sta` (associated stations) gets the slow-station parameters. Call it
    /// whenever rate control updates the station's expected throughput.
    pub fn set_expected_throughput(&mut self, sta: StationId, thr_kbps: u32, num_sta: u32) {
        if self.params.codel == CodelPolicy::Uniform {
            return;
        }
        let slow = thr_kbps != 0 && (thr_kbps as u64) < STA_SLOW_THRESHOLD_KBPS as u64 * num_sta as u64;
        self.sta_cparams[sta.0 as usize] = if slow { slow_station_codel_params() } else { wifi_codel_params() };
    }

    /// Whether the station currently uses the slow-station CoDel parameters.
    #[cfg(test)]
    pub fn station_is_slow(&self, sta: StationId) -> bool {
        self.sta_cparams[sta.0 as usize] != wifi_codel_params()
    }

    fn set_backlogged(&mut self, f: u32, on: bool) {
        let pos = self.flows[f as usize].bl_pos;
        if on && pos == NIL {
            self.flows[f as usize].bl_pos = self.backlogged.len() as u32;
            self.backlogged.push(f);
        } else if !on && pos != NIL {
            self.backlogged.swap_remove(pos as usize);
            if let Some(&moved) = self.backlogged.get(pos as usize) {
                self.flows[moved as usize].bl_pos = pos;
            }
            self.flows[f as usize].bl_pos = NIL;
        }
    }

    /// Keep the 4.x tie order after flow `f` grew (`grew`) or shrank.
    fn reorder(&mut self, f: u32, grew: bool) {
        self.order_clock += 1;
        self.flows[f as usize].order = if grew { self.order_clock } else { -self.order_clock };
    }

    /// `fq_find_fattest_flow` (6.x: first largest by index, hashed flows before default flows)
    /// or the head of the 4.x backlog-sorted list (largest; among equals the order kept by
    /// [`Fq::reorder`]).
    fn fattest(&self) -> Option<u32> {
        let better = |a: &Flow, ai: u32, b: &Flow, bi: u32| match a.backlog.cmp(&b.backlog) {
            std::cmp::Ordering::Equal => match self.params.overflow {
                OverflowDrop::BatchFromFattest => ai < bi,
                OverflowDrop::HeadOfFattest => a.order > b.order,
            },
            o => o.is_gt(),
        };
        let mut best: Option<u32> = None;
        for &f in &self.backlogged {
            let fl = &self.flows[f as usize];
            let take = match best {
                None => true,
                Some(b) => better(fl, f, &self.flows[b as usize], b),
            };
            if take {
                best = Some(f);
            }
        }
        best
    }

    /// Take the head packet of flow `f` off its queue and out of every counter.
    fn unlink_head(&mut self, f: u32, cx: &QCtx<'_>) -> Option<PacketId> {
        let fl = &mut self.flows[f as usize];
        if fl.head == NIL {
            return None;
        }
        let p = PacketId(fl.head);
        fl.head = self.next_pkt[p.0 as usize];
        if fl.head == NIL {
            fl.tail = NIL;
        }
        let len = Self::frame_len(cx, p);
        fl.packets -= 1;
        fl.backlog -= len;
        let t = &mut self.tins[fl.tin as usize].stats;
        t.backlog_bytes -= len as u64;
        t.backlog_packets -= 1;
        self.stats.backlog -= 1;
        self.stats.memory_usage -= truesize(len);
        Some(p)
    }

    /// `fq_flow_drop` (or one `fq_flow_dequeue` in 4.x): drop from the head of `f`.
    fn drop_from(&mut self, f: u32, cx: &mut QCtx<'_>, now: Nanos) -> u32 {
        let n = match self.params.overflow {
            OverflowDrop::HeadOfFattest => 1,
            OverflowDrop::BatchFromFattest => (self.flows[f as usize].packets / 2).clamp(1, 32),
        };
        for _ in 0..n {
            let p = self.unlink_head(f, cx).expect("the fattest flow has packets");
            cx.unstamp(p, now);
            cx.drop(p);
        }
        if self.flows[f as usize].backlog == 0 {
            self.set_backlogged(f, false);
        }
        self.reorder(f, false);
        n
    }

    /// Algorithm 1 (`ieee80211_txq_enqueue` → `fq_tin_enqueue`): queue `pkt` for `tin`, then
    /// drop from the fattest flow while the radio is over its limits. Dropped packets (possibly
    /// `pkt` itself) are in `cx.dropped`. Returns `Dropped` if `pkt` was dropped, `Congestion`
    /// if packets of its own flow were, else `Queued`.
    pub fn enqueue(&mut self, tin: TinId, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let t = tin.0;
        cx.stamp(pkt, now);
        let len = Self::frame_len(cx, pkt);
        let mut f = self.cached_flow_index(cx, pkt);
        let owner = self.flows[f as usize].tin;
        if owner != NIL && owner != t {
            // Hash collision with another station/TID: this tin's default (overflow) flow.
            f = self.default_flow(t);
            self.tins[t as usize].stats.collisions += 1;
            self.stats.collisions += 1;
        }
        let p = pkt.0 as usize;
        if self.next_pkt.len() <= p {
            self.next_pkt.resize((p + 1).max(2 * self.next_pkt.len()), NIL);
        }
        self.next_pkt[p] = NIL;
        // `reorder(f, true)`: the flow grew.
        self.order_clock += 1;
        let fl = &mut self.flows[f as usize];
        let new_in_tin = fl.tin == NIL;
        let newly_backlogged = fl.backlog == 0;
        let tail = fl.tail;
        fl.tin = t;
        fl.backlog += len;
        fl.packets += 1;
        fl.tail = pkt.0;
        if tail == NIL {
            fl.head = pkt.0;
        }
        fl.order = self.order_clock;
        // A flow that becomes active is new: served ahead of the old flows for one quantum.
        let activated = fl.list == List::None;
        if activated {
            fl.deficit = self.params.quantum as i32;
            fl.list = List::New;
        }
        if tail != NIL {
            self.next_pkt[tail as usize] = pkt.0;
        }
        if newly_backlogged {
            self.set_backlogged(f, true);
        }
        let Fq { tins, flows, stats, .. } = self;
        let tn = &mut tins[t as usize];
        if new_in_tin {
            tn.stats.flows += 1;
        }
        tn.stats.backlog_bytes += len as u64;
        tn.stats.backlog_packets += 1;
        if activated {
            tn.new_flows.push_back(flows, f);
        }
        stats.backlog += 1;
        stats.enqueued += 1;
        stats.memory_usage += truesize(len);
        if stats.backlog <= self.params.limit && stats.memory_usage <= self.params.memory_limit {
            // Within both limits: the overflow loop drops nothing.
            return Enq::Queued;
        }
        self.enforce_limits(f, pkt, cx, now)
    }

    /// The overflow loop of `fq_tin_enqueue`.
    fn enforce_limits(&mut self, f: u32, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let mut hit_own_flow = false;
        let mut oom = self.stats.memory_usage > self.params.memory_limit;
        while self.stats.backlog > self.params.limit || oom {
            let Some(victim) = self.fattest() else { break };
            let n = self.drop_from(victim, cx, now);
            hit_own_flow |= victim == f;
            let owner = self.flows[victim as usize].tin as usize;
            let ts = &mut self.tins[owner].stats;
            ts.overlimit += 1;
            ts.overlimit_drops += n;
            self.stats.overlimit += 1;
            self.stats.overlimit_drops += n as u64;
            if oom {
                self.stats.overmemory += 1;
                oom = self.stats.memory_usage > self.params.memory_limit;
            }
        }
        if cx.dropped[mark..].contains(&pkt) {
            Enq::Dropped
        } else if hit_own_flow {
            Enq::Congestion
        } else {
            Enq::Queued
        }
    }

    /// CoDel on flow `f` of tin `t`: its next deliverable packet after the drops CoDel decides.
    fn codel_dequeue(&mut self, f: u32, t: u32, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let sta = t as usize / NUM_TIDS;
        let params = match self.params.codel {
            CodelPolicy::PerStation => self.sta_cparams[sta],
            CodelPolicy::Uniform => wifi_codel_params(),
        };
        let mark = cx.mark();
        let mut vars = self.cvars[f as usize];
        let mut cstats = self.tins[t as usize].cstats;
        let marks_before = cstats.ecn_mark;
        // CoDel compares the flow's own backlog (after removal) with mtu 0.
        let out = vars.dequeue(&params, &mut cstats, cx, now, |cx| {
            let p = self.unlink_head(f, cx)?;
            Some((p, self.flows[f as usize].backlog as u64))
        });
        self.cvars[f as usize] = vars;
        let dropped = (cx.dropped.len() - mark) as u32;
        let ts = &mut self.tins[t as usize];
        ts.cstats = cstats;
        ts.stats.drops += dropped;
        ts.stats.ecn_marks += cstats.ecn_mark - marks_before;
        self.stats.codel_drops += dropped as u64;
        if self.flows[f as usize].backlog == 0 {
            self.set_backlogged(f, false);
        }
        if dropped > 0 || out.is_some() {
            self.reorder(f, false);
        }
        out
    }

    /// Algorithm 2 (`fq_tin_dequeue` with CoDel): the next packet of `tin`, new flows first,
    /// each flow while its deficit lasts. Packets CoDel drops are in `cx.dropped`.
    pub fn dequeue(&mut self, tin: TinId, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let t = tin.0;
        loop {
            let tn = &self.tins[t as usize];
            let (from_new, f) = if tn.new_flows.head != NIL {
                (true, tn.new_flows.head)
            } else if tn.old_flows.head != NIL {
                (false, tn.old_flows.head)
            } else {
                return None;
            };
            if self.flows[f as usize].deficit <= 0 {
                // Quantum spent: another one, and to the back of the old flows.
                self.flows[f as usize].deficit += self.params.quantum as i32;
                self.move_head_to_old(t, from_new);
                continue;
            }
            match self.codel_dequeue(f, t, cx, now) {
                Some(p) => {
                    let len = Self::frame_len(cx, p);
                    self.flows[f as usize].deficit -= len as i32;
                    let ts = &mut self.tins[t as usize].stats;
                    ts.tx_bytes += len as u64;
                    ts.tx_packets += 1;
                    self.stats.dequeued += 1;
                    cx.unstamp(p, now);
                    return Some(p);
                }
                None if from_new && self.tins[t as usize].old_flows.head != NIL => {
                    // An emptied new flow passes through the old list before it may be new
                    // again, so that it cannot starve the old flows.
                    self.move_head_to_old(t, true);
                }
                None => {
                    let Fq { tins, flows, .. } = self;
                    let tn = &mut tins[t as usize];
                    let list = if from_new { &mut tn.new_flows } else { &mut tn.old_flows };
                    list.pop_front(flows);
                    flows[f as usize].list = List::None;
                    flows[f as usize].tin = NIL;
                }
            }
        }
    }

    fn move_head_to_old(&mut self, t: u32, from_new: bool) {
        let Fq { tins, flows, .. } = self;
        let tn = &mut tins[t as usize];
        let f = if from_new { tn.new_flows.pop_front(flows) } else { tn.old_flows.pop_front(flows) };
        flows[f as usize].list = List::Old;
        tn.old_flows.push_back(flows, f);
    }
}

#[cfg(test)]
mod tests;
