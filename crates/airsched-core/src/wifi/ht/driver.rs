//! The 802.11n driver of one node: per-tin queues (a tin is one peer station and TID) fed by
//! the qdisc (ath9k's driver FIFOs before Linux 4.10, or mac80211's FQ-MAC), per-tin held
//! queues for MPDUs to retransmit (ath9k's `tid->retry_q`), the receiver's reordering buffer
//! of each BlockAck session, and per access category a hardware queue of at most
//! [`HW_QUEUE_AGGS`] aggregates whose head contends through that AC's EDCA function.

use std::collections::VecDeque;

use crate::mac::minstrel_ht::RateChain;
use crate::mac80211::airtime::AirtimeScheduler;
use crate::mac80211::aql::Aql;
use crate::mac80211::fq::Fq;
use crate::mac80211::{TinId, NUM_ACS};
use crate::packet::PacketId;
use crate::phy::ht::{self, HtTxVector};
use crate::phy::TxVector;
use crate::time::Nanos;

/// Aggregates the driver keeps queued to the hardware (ath9k `ATH_AGGR_MIN_QDEPTH`): the
/// scheduler builds while fewer are queued.
pub const HW_QUEUE_AGGS: usize = 2;

/// One MPDU of an aggregate, or waiting in a tin's held queue.
#[derive(Clone, Copy, Debug)]
pub struct Mpdu {
    pub pkt: PacketId,
    /// Transmission attempts so far.
    pub attempts: u16,
    /// The receiver has it (an earlier attempt's BlockAck was lost): the sender's copy only.
    pub delivered: bool,
    /// AQL estimate charged when it was dequeued (µs, `tx_time_est`), 0 without AQL.
    pub est_us: u32,
    /// 802.11 sequence number within its tin (the BlockAck session).
    pub sn: u32,
    /// The AP's retry budget (`[ap] retry_budget`): air its tries have taken, plus its FQ-MAC
    /// sojourn when that counts (µs); 0 when off.
    pub spent_us: u32,
}

/// [`HwQueue::due`] when the head is not on the air.
pub const NOT_DUE: Nanos = Nanos(u64::MAX);

pub const RX_EMPTY: u32 = u32::MAX;
pub const RX_SKIP: u32 = u32::MAX - 1;

/// The receiver's reordering buffer of one BlockAck session (one sender tin): MPDUs are passed
/// up in sequence order; one that arrives early waits for the ones before it, and a sequence
/// number the sender gave up on (retry limit) is skipped, as a BlockAckReq would move the
/// window. Slot i holds sequence number `next + i`: a packet id, `RX_EMPTY` or `RX_SKIP`.
pub struct Reorder {
    pub next: u32,
    pub buf: VecDeque<u32>,
}

/// One A-MPDU (or a single MPDU when it holds one) in the hardware queue.
pub struct Agg {
    pub tin: TinId,
    /// The transmit vector it is sent with (rate control picks the MCS when the aggregate is
    /// built), and the MCS's index in the link's Minstrel table.
    pub tx: TxVector,
    pub rate_idx: u8,
    /// The station it is to (AP) or from (station).
    pub station: u32,
    pub mpdus: Vec<Mpdu>,
    pub psdu: u32,
    pub txtime: Nanos,
    /// Bit i: MPDU i was decoded by the receiver in the current attempt.
    pub ok: AckMap,
    /// Minstrel-HT links: the multi-rate retry chain the hardware walks through before the TX
    /// status (`len == 0`: no hardware retries, every attempt ends in a TX status).
    pub chain: RateChain,
    /// Hardware tries so far of this aggregate (through `chain`).
    pub tries: u8,
    /// Airtime (µs) of the earlier hardware tries, charged with the last one at TX status.
    pub air_us: u32,
    /// Airtime (µs) of its first try, paid to the airtime policy's caps when it was built.
    pub built_us: u32,
    /// `[ap] vo_piggyback`: its first `vo_head` MPDUs are the station's VO frames (TID
    /// `vo_tid`), sent at the head of this lower-priority aggregate; 0 otherwise.
    pub vo_head: u8,
    pub vo_tid: u8,
}

impl Default for Agg {
    fn default() -> Self {
        Self::new()
    }
}

impl Agg {
    pub fn new() -> Agg {
        Agg {
            tin: TinId(0),
            rate_idx: 0,
            tx: TxVector::Ht(HtTxVector::new(
                crate::phy::ht::HtMcs::ALL[0],
                crate::phy::ht::ChannelWidth::Mhz20,
                crate::phy::ht::GuardInterval::Long,
            )),
            station: 0,
            mpdus: Vec::with_capacity(ht::AMPDU_MAX_MPDUS as usize),
            psdu: 0,
            txtime: Nanos::ZERO,
            ok: AckMap::NONE,
            chain: RateChain::default(),
            tries: 0,
            air_us: 0,
            built_us: 0,
            vo_head: 0,
            vo_tid: 0,
        }
    }

    /// The tin MPDU `i` belongs to: the aggregate's, or the VO tin for the piggybacked head.
    #[inline]
    pub fn tin_of(&self, i: usize) -> TinId {
        if i < self.vo_head as usize {
            TinId::new(self.tin.station(), self.vo_tid)
        } else {
            self.tin
        }
    }
}

/// Which MPDUs of an aggregate the receiver decoded: a BlockAck bitmap of up to 256 entries
/// (an HE agreement's window; 64 for HT and VHT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckMap([u64; 4]);

impl AckMap {
    pub const NONE: AckMap = AckMap([0; 4]);

    /// The first `n` MPDUs.
    pub fn first(n: usize) -> AckMap {
        if n < 64 {
            return AckMap([(1u64 << n) - 1, 0, 0, 0]);
        }
        let mut m = [0u64; 4];
        for (w, word) in m.iter_mut().enumerate() {
            let bits = n.saturating_sub(64 * w).min(64);
            *word = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        }
        AckMap(m)
    }

    #[inline]
    pub fn set(&mut self, i: usize) {
        self.0[(i / 64) & 3] |= 1 << (i % 64);
    }

    #[inline]
    pub fn has(&self, i: usize) -> bool {
        self.0[(i / 64) & 3] & (1 << (i % 64)) != 0
    }

    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
}

/// Where a driver's frames wait before the aggregate is built.
pub enum Source {
    /// ath9k before 4.10: per-tin FIFOs; the qdisc is drained only while the driver holds
    /// fewer than `limit` frames.
    Fifo { q: Vec<VecDeque<PacketId>>, limit: u32 },
    /// mac80211 FQ-MAC.
    Fq(Box<Fq>),
}

pub struct Driver {
    pub src: Source,
    /// Per tin: MPDUs to send before anything new (retries, and the frame that did not fit).
    pub held: Vec<VecDeque<Mpdu>>,
    /// Frames the driver holds: its FIFOs, held queues and hardware queue.
    pub frames: u32,
    /// One hardware queue per access category (mac80211 AC index: VO, VI, BE, BK), each with
    /// its own EDCA function (contender `node * 4 + ac` of the DCF).
    pub hw: [HwQueue; NUM_ACS],
    pub sched: AirtimeScheduler,
    pub aql: Aql,
    /// AQL limits checked (the mac80211 scheduler); accounting runs regardless.
    pub aql_on: bool,
    /// Per tin: the next sequence number to assign.
    pub next_sn: Vec<u32>,
    /// Per tin: the receiver's reordering buffer for this tin's frames.
    pub rx: Vec<Reorder>,
}

/// A hardware queue: at most [`HW_QUEUE_AGGS`] aggregates, the head contending.
pub struct HwQueue {
    pub aggs: [Agg; HW_QUEUE_AGGS],
    pub head: usize,
    pub len: usize,
    /// `[ap] hw_queue_lead`: when the head's exchange (PPDU, SIFS, (Block)Ack) is expected to
    /// end, while it is on the air; `NOT_DUE` otherwise (and always without the lead).
    pub due: Nanos,
}

impl Default for HwQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl HwQueue {
    pub fn new() -> HwQueue {
        HwQueue { aggs: [Agg::new(), Agg::new()], head: 0, len: 0, due: NOT_DUE }
    }

    pub fn head(&self) -> &Agg {
        &self.aggs[self.head]
    }

    pub fn head_mut(&mut self) -> &mut Agg {
        &mut self.aggs[self.head]
    }
}

/// The DCF contender of a node's access category (four per node in an 802.11n cell).
#[inline]
pub fn contender(node: u32, ac: usize) -> u32 {
    node * NUM_ACS as u32 + ac as u32
}

/// The node and access category of a contender.
#[inline]
pub fn node_ac(c: u32) -> (u32, usize) {
    (c / NUM_ACS as u32, (c % NUM_ACS as u32) as usize)
}

impl Driver {
    pub fn has_frames(src: &Source, held: &[VecDeque<Mpdu>], tin: TinId) -> bool {
        !held[tin.index()].is_empty() || Driver::src_has(src, tin)
    }

    /// Frames of `tin` in the FIFO or FQ-MAC (not yet taken by the driver).
    #[inline]
    pub fn src_has(src: &Source, tin: TinId) -> bool {
        match src {
            Source::Fifo { q, .. } => !q[tin.index()].is_empty(),
            Source::Fq(fq) => fq.tin_has_queue(tin),
        }
    }

    /// Packets of `tin` in the FIFO or FQ-MAC.
    pub fn src_len(src: &Source, tin: TinId) -> u32 {
        match src {
            Source::Fifo { q, .. } => q[tin.index()].len() as u32,
            Source::Fq(fq) => fq.tin_stats(tin).backlog_packets,
        }
    }

    /// The aggregate at the head of access category `ac`'s hardware queue.
    pub fn head(&self, ac: usize) -> &Agg {
        self.hw[ac].head()
    }
}

/// What the AP's multi-user scheduler does with an access it won (`[ap] ofdma`, ofdma.rs and
/// ofdma_ul.rs).
pub enum MuPick {
    /// A multi-user exchange is on the air until then.
    On(Nanos),
    /// Send the head aggregate single-user.
    Su,
    /// Nothing to send (a Trigger found no station to solicit and no frame waits).
    Nothing,
}
