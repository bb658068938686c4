//! 802.11n in the simulator: EDCA channel access, A-MPDU aggregation with BlockAck and
//! per-MPDU errors, and the queueing between a node's qdisc and the air (the driver's per-TID
//! FIFOs of ath9k before Linux 4.10, or mac80211's FQ-MAC intermediate queues), with the
//! station scheduler (round robin, the ath9k airtime scheduler of Linux 4.11, or mac80211's
//! airtime scheduler with AQL). See docs/model-80211n-mac.md.
//!
//! Each WiFi node has a [`Driver`]: per-tin queues (a tin is one peer station and TID), a
//! per-tin `held` queue for MPDUs to retransmit or that did not fit the last aggregate (ath9k's
//! `tid->retry_q`), and per access category a hardware queue of at most [`HW_QUEUE_AGGS`]
//! aggregates, the head of which contends for the medium through that AC's EDCA function (DCF
//! contender `node * 4 + ac`). The AP's tins are (station, TID); a station's are (AP, TID).

use std::collections::VecDeque;

use rand::Rng;

use super::{DropCause, Node, Outcome, Simulation};
use crate::mac::edca::{AccessCategory, EdcaParams, TxopTable};
use crate::mac80211::airtime::{AirtimeParams, AirtimeScheduler, AtfKind};
use crate::mac80211::aql::{tx_time_est, Aql, AqlParams};
use crate::mac80211::fq::{Fq, FqParams};
use crate::mac80211::{Ac, StationId, TinId, NUM_ACS, NUM_TIDS};
use crate::packet::PacketId;
use crate::phy::error::{ErrMode, OfdmRate};
use crate::phy::dsss::Preamble;
use crate::phy::ht::{self, AmpduLimits, HtTxVector};
use crate::phy::ofdm::{self, OfdmBand};
use crate::qdisc::QCtx;
use crate::radio::Dir;
use crate::scenario::{AirtimeSched, FqKernel, MacQueue, Scenario};
use crate::time::Nanos;

/// Aggregates the driver keeps queued to the hardware (ath9k `ATH_AGGR_MIN_QDEPTH`): the
/// scheduler builds while fewer are queued.
pub const HW_QUEUE_AGGS: usize = 2;

/// One MPDU of an aggregate, or waiting in a tin's held queue.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mpdu {
    pub pkt: PacketId,
    /// Transmission attempts so far.
    pub attempts: u16,
    /// The receiver has it (an earlier attempt's BlockAck was lost): the sender's copy only.
    pub delivered: bool,
    /// AQL estimate charged when it was dequeued (µs, `tx_time_est`), 0 without AQL.
    pub est_us: u32,
    /// 802.11 sequence number within its tin (the BlockAck session).
    pub sn: u32,
}

const RX_EMPTY: u32 = u32::MAX;
const RX_SKIP: u32 = u32::MAX - 1;

/// The receiver's reordering buffer of one BlockAck session (one sender tin): MPDUs are passed
/// up in sequence order; one that arrives early waits for the ones before it, and a sequence
/// number the sender gave up on (retry limit) is skipped, as a BlockAckReq would move the
/// window. Slot i holds sequence number `next + i`: a packet id, `RX_EMPTY` or `RX_SKIP`.
pub(super) struct Reorder {
    next: u32,
    buf: VecDeque<u32>,
}

/// One A-MPDU (or a single MPDU when it holds one) in the hardware queue.
pub(super) struct Agg {
    pub tin: TinId,
    /// The MCS it is sent at (rate control picks it when the aggregate is built), and its
    /// index in the link's Minstrel table.
    pub tx: HtTxVector,
    pub rate_idx: u8,
    /// The station it is to (AP) or from (station).
    pub station: u32,
    pub mpdus: Vec<Mpdu>,
    pub psdu: u32,
    pub txtime: Nanos,
    /// Bit i: MPDU i was decoded by the receiver in the current attempt.
    pub ok: u64,
}

impl Agg {
    fn new() -> Agg {
        Agg { tin: TinId(0), rate_idx: 0, tx: HtTxVector::new(crate::phy::ht::HtMcs::ALL[0], crate::phy::ht::ChannelWidth::Mhz20, crate::phy::ht::GuardInterval::Long), station: 0, mpdus: Vec::with_capacity(ht::AMPDU_MAX_MPDUS as usize), psdu: 0, txtime: Nanos::ZERO, ok: 0 }
    }
}

/// Where a driver's frames wait before the aggregate is built.
pub(super) enum Source {
    /// ath9k before 4.10: per-tin FIFOs; the qdisc is drained only while the driver holds
    /// fewer than `limit` frames.
    Fifo { q: Vec<VecDeque<PacketId>>, limit: u32 },
    /// mac80211 FQ-MAC.
    Fq(Box<Fq>),
}

pub(super) struct Driver {
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
pub(super) struct HwQueue {
    pub aggs: [Agg; HW_QUEUE_AGGS],
    pub head: usize,
    pub len: usize,
}

impl HwQueue {
    fn new() -> HwQueue {
        HwQueue { aggs: [Agg::new(), Agg::new()], head: 0, len: 0 }
    }

    pub fn head(&self) -> &Agg {
        &self.aggs[self.head]
    }

    fn head_mut(&mut self) -> &mut Agg {
        &mut self.aggs[self.head]
    }
}

/// The DCF contender of a node's access category (four per node in an 802.11n cell).
#[inline]
pub(super) fn contender(node: u32, ac: usize) -> u32 {
    node * NUM_ACS as u32 + ac as u32
}

/// The node and access category of a contender.
#[inline]
pub(super) fn node_ac(c: u32) -> (u32, usize) {
    (c / NUM_ACS as u32, (c % NUM_ACS as u32) as usize)
}

impl Driver {
    fn has_frames(src: &Source, held: &[VecDeque<Mpdu>], tin: TinId) -> bool {
        !held[tin.index()].is_empty()
            || match src {
                Source::Fifo { q, .. } => !q[tin.index()].is_empty(),
                Source::Fq(fq) => fq.tin_has_queue(tin),
            }
    }

    /// The aggregate at the head of access category `ac`'s hardware queue.
    pub fn head(&self, ac: usize) -> &Agg {
        self.hw[ac].head()
    }
}

/// Minstrel (the legacy algorithm of `mac/rate.rs`) run over a station's HT MCS, as a
/// Minstrel-HT-like controller: one rate per A-MPDU, every MPDU's fate a sample.
pub(super) struct HtRateCtl {
    pub ctl: crate::mac::rate::RateCtl,
    /// Rate index -> MCS, ascending in rate.
    pub table: Vec<crate::phy::ht::HtMcs>,
}

/// Reference airtime per MPDU of a 1200-byte payload at `tx` in a 16-MPDU A-MPDU, with AIFS,
/// the mean backoff, SIFS and the BlockAck shared among them (Minstrel-HT's per-MPDU view of an
/// aggregate's cost).
fn ht_ref_airtime(band: OfdmBand, basic: &[OfdmRate], tx: HtTxVector) -> Nanos {
    const N: u32 = 16;
    let sub = ht::ampdu_subframe_bytes(ht::qos_data_mpdu_bytes(1200 + 28));
    let ppdu = ht::txtime(band, tx, N * sub);
    let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
    let fixed = be.aifs(band) + be.mean_backoff(band) + band.sifs() + ht::block_ack_time(band, basic, tx.mcs);
    Nanos((ppdu.0 + fixed.0) / N as u64)
}

/// The 802.11n cell: PHY settings, per-station transmit vectors and every node's driver.
pub(super) struct Ht {
    pub band: OfdmBand,
    pub basic: Vec<OfdmRate>,
    /// Per station: the HT transmit vector of its link at its top MCS (both directions).
    pub tx: Vec<HtTxVector>,
    /// Per link (`s`: the AP's to station s, `n + s`: station s's own): Minstrel over the
    /// station's MCS table, None for a fixed MCS.
    pub rc: Vec<Option<HtRateCtl>>,
    pub limits: AmpduLimits,
    pub mpdu_retry_limit: u32,
    /// EDCA parameters per mac80211 AC index (VO, VI, BE, BK).
    pub edca: [EdcaParams; 4],
    /// Per flow: its TID (`cfg80211_classify8021d`).
    pub flow_tid: Vec<u8>,
    /// Per WiFi node.
    pub drivers: Vec<Driver>,
    /// The lowest basic rate: beacons.
    pub beacon_rate: OfdmRate,
}

/// Airtime of one MPDU of `bytes` at `tx` as mac80211 estimates it for AQL: the data bits at
/// the PHY rate, plus the per-PPDU overhead (preamble, SIFS, BlockAck, AIFS, ~100 µs) shared by
/// the 16 MPDUs `ieee80211_calc_expected_tx_airtime` assumes an aggregate to hold.
fn est_airtime_us(tx: HtTxVector, bytes: u32) -> u32 {
    const PPDU_OVERHEAD_US: u64 = 100;
    const MPDUS_PER_AMPDU: u64 = 16;
    let data = (bytes as u64 + ht::MPDU_DELIMITER_BYTES as u64) * 8 * 1_000_000 / tx.bits_per_second();
    (data + PPDU_OVERHEAD_US / MPDUS_PER_AMPDU) as u32
}

impl Ht {
    pub fn new(scn: &Scenario, seed: u64) -> Ht {
        let cell = scn.cell.ht.as_ref().expect("an 802.11n cell has HT settings");
        let n = scn.stations.len();
        let tx: Vec<HtTxVector> = scn
            .stations
            .iter()
            .map(|st| HtTxVector::new(st.ht.expect("802.11n stations have HT settings").mcs, cell.width, cell.gi))
            .collect();
        let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
        let contention = crate::mac::rate::Contention { slot: cell.band.slot(), cw_min: be.cw_min, cw_max: be.cw_max };
        let mut rc = Vec::with_capacity(2 * n);
        for dir in 0..2u64 {
            for (i, st) in scn.stations.iter().enumerate() {
                if st.rate_control != crate::scenario::RateControl::Minstrel {
                    rc.push(None);
                    continue;
                }
                let top = tx[i];
                let mut table: Vec<ht::HtMcs> = ht::HtMcs::ALL.iter().copied().filter(|m| m.index() <= top.mcs.index()).collect();
                table.sort_by_key(|m| (m.bits_per_second(cell.width, cell.gi), m.n_ss()));
                let ref_air: Vec<Nanos> =
                    table.iter().map(|&m| ht_ref_airtime(cell.band, &cell.basic_rates, HtTxVector::new(m, cell.width, cell.gi))).collect();
                let node = if dir == 0 { 0 } else { i as u64 + 1 };
                let rng = crate::engine::stream(seed, crate::engine::StreamKind::RateControl, node * 65536 + i as u64);
                let ctl = crate::mac::rate::RateCtl::with_contention(
                    crate::mac::rate::RateAlgo::Minstrel,
                    &ref_air,
                    cell.mpdu_retry_limit,
                    rng,
                    contention,
                )
                .expect("1 to 16 MCS are a valid table");
                rc.push(Some(HtRateCtl { ctl, table }));
            }
        }
        let limits = AmpduLimits {
            max_mpdus: cell.max_aggregate_mpdus,
            ..AmpduLimits::HT.with_max_duration(cell.max_aggregate_time)
        };
        let edca = [AccessCategory::Vo, AccessCategory::Vi, AccessCategory::Be, AccessCategory::Bk]
            .map(|ac| EdcaParams::default_for(ac, TxopTable::Ieee2016));
        let flow_tid = (0..scn.flows.len())
            .map(|i| {
                let k = scn.flow_key(i);
                crate::mac::edca::classify8021d(k.tos, k.priority)
            })
            .collect();
        let mac = &scn.ap_mac;
        let mut drivers = Vec::with_capacity(n + 1);
        for node in 0..=n {
            let peers = if node == 0 { n } else { 1 };
            let tins = peers * NUM_TIDS;
            let (src, kind, params, aql_on) = if node == 0 {
                let src = match mac.queue {
                    MacQueue::DriverFifo { limit } => Source::Fifo { q: (0..tins).map(|_| VecDeque::with_capacity(64)).collect(), limit },
                    MacQueue::FqMac => {
                        let p = match mac.fq_kernel {
                            FqKernel::Linux4_11 => FqParams::linux_4_11(),
                            FqKernel::Linux6_18 => FqParams::linux_6_18().without_vht(),
                        };
                        let mut fq = Fq::new(p, peers, seed);
                        // Rate control reports each station's expected throughput; with a fixed
                        // MCS it is the MCS's rate (Minstrel-HT would report somewhat less).
                        for (s, t) in tx.iter().enumerate() {
                            let kbps = (t.bits_per_second() / 1000) as u32;
                            fq.set_expected_throughput(StationId(s as u16), kbps, n as u32);
                        }
                        Source::Fq(Box::new(fq))
                    }
                };
                let (kind, accounting) = match mac.airtime {
                    AirtimeSched::Off => (AtfKind::Ath9k, false),
                    AirtimeSched::Ath9k => (AtfKind::Ath9k, true),
                    AirtimeSched::Mac80211 => (AtfKind::Mac80211, true),
                };
                // Without the airtime scheduler (ath9k before 4.11) TIDs are served in plain
                // round robin: no accounting and no new-station list.
                let params = AirtimeParams {
                    use_tx: accounting,
                    use_rx: accounting && mac.airtime_rx,
                    new_queues: accounting,
                    ..AirtimeParams::default()
                };
                (src, kind, params, mac.aql)
            } else {
                let src = Source::Fifo { q: (0..tins).map(|_| VecDeque::with_capacity(16)).collect(), limit: crate::scenario::ATH_MAX_QDEPTH };
                let params = AirtimeParams { use_tx: false, use_rx: false, new_queues: false, ..AirtimeParams::default() };
                (src, AtfKind::Ath9k, params, false)
            };
            let mut sched = AirtimeScheduler::new(kind, params, peers);
            if node == 0 {
                for (s, st) in scn.stations.iter().enumerate() {
                    if let Some(h) = st.ht {
                        sched.set_weight(StationId(s as u16), h.airtime_weight);
                    }
                }
            }
            drivers.push(Driver {
                src,
                held: (0..tins).map(|_| VecDeque::with_capacity(ht::AMPDU_MAX_MPDUS as usize)).collect(),
                frames: 0,
                hw: [HwQueue::new(), HwQueue::new(), HwQueue::new(), HwQueue::new()],
                sched,
                aql: Aql::new(AqlParams { enabled: aql_on, ..AqlParams::default() }, peers),
                aql_on,
                next_sn: vec![0; tins],
                rx: (0..tins).map(|_| Reorder { next: 0, buf: VecDeque::with_capacity(2 * ht::AMPDU_MAX_MPDUS as usize) }).collect(),
            });
        }
        Ht {
            band: cell.band,
            basic: cell.basic_rates.clone(),
            tx,
            rc,
            limits,
            mpdu_retry_limit: cell.mpdu_retry_limit,
            edca,
            flow_tid,
            drivers,
            beacon_rate: cell.basic_rates[0],
        }
    }

    /// Give every contender (node, AC) its access category's EDCA parameters.
    pub fn init_edca(&self, dcf: &mut crate::mac::dcf::Dcf) {
        for c in 0..dcf.nodes.len() {
            let (_, ac) = node_ac(c as u32);
            let e = self.edca[ac];
            dcf.set_edca(c, e.aifs(self.band), e.cw_min, e.cw_max);
        }
    }

    /// The tin of a frame at WiFi node `node` for/from `station` with `tid`.
    #[inline]
    fn tin(node: u32, station: u32, tid: u8) -> TinId {
        let peer = if node == 0 { station } else { 0 };
        TinId::new(StationId(peer as u16), tid)
    }

    /// DCF timing parameters of the cell; the AC_BE EDCA parameters are the defaults, and
    /// `init_edca` gives every contender its own AC's.
    pub fn dcf_params(scn: &Scenario) -> crate::mac::dcf::DcfParams {
        let cell = scn.cell.ht.as_ref().expect("802.11n");
        let band = cell.band;
        let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
        crate::mac::dcf::DcfParams {
            slot: band.slot(),
            sifs: band.sifs(),
            difs: be.aifs(band),
            pifs: band.pifs(),
            ack_timeout: band.ack_timeout(),
            cw_min: be.cw_min,
            cw_max: be.cw_max,
            retry_limit: scn.cell.retry_limit,
        }
    }
}

impl Simulation {
    /// 802.11n: move what the qdisc releases into the driver, then build aggregates while the
    /// hardware queue has room.
    pub(super) fn ht_pull(&mut self, node: u32) {
        loop {
            let d = &self.ht.as_ref().expect("802.11n").drivers[node as usize];
            if let Source::Fifo { limit, .. } = d.src {
                if d.frames >= limit {
                    break;
                }
            }
            let Some(pkt) = self.dequeue(node) else { break };
            self.ht_admit(node, pkt);
        }
        self.ht_schedule(node);
        self.refill_after_dequeue(node);
    }

    /// A packet from the qdisc enters the driver (FIFO or FQ-MAC) of `node`.
    fn ht_admit(&mut self, node: u32, pkt: PacketId) {
        let f = self.pkts.get(pkt).flow as usize;
        let station = self.station_of_iface_packet(node, f).expect("wifi frames have a station");
        let now = self.now;
        let ht = self.ht.as_mut().expect("802.11n");
        let tin = Ht::tin(node, station, ht.flow_tid[f]);
        let d = &mut ht.drivers[node as usize];
        match &mut d.src {
            Source::Fifo { q, .. } => {
                q[tin.index()].push_back(pkt);
                d.frames += 1;
            }
            Source::Fq(fq) => {
                self.dropped.clear();
                let mut cx = QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan };
                fq.enqueue(tin, pkt, &mut cx, now);
            }
        }
        d.sched.wake(tin, now, &d.aql);
        self.account_driver_drops(node);
    }

    /// Packets FQ-MAC dropped (overflow or CoDel) during the last operation. They left the
    /// qdisc without leaving the first hop, so every one of them leaves it now: the qdisc
    /// accounting with no offered packet to spare.
    fn account_driver_drops(&mut self, node: u32) {
        self.account_qdisc_drops(node, None);
    }

    /// The scheduler picks tins and the driver builds one aggregate per pick while the
    /// hardware queue holds fewer than two.
    fn ht_schedule(&mut self, node: u32) {
        let n = node as usize;
        for ac in Ac::ALL {
            loop {
                let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
                if d.hw[ac.index()].len >= HW_QUEUE_AGGS {
                    break;
                }
                let Driver { src, held, sched, aql, .. } = d;
                sched.schedule_start(ac, aql);
                let Some(tin) = sched.next_tin(ac, aql, |t| Driver::has_frames(src, held, t)) else { break };
                self.ht_build(node, tin);
                let now = self.now;
                let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
                let has = Driver::has_frames(&d.src, &d.held, tin);
                d.sched.return_tin(tin, has, now, &d.aql);
            }
        }
    }

    /// The next MPDU of `tin`: a held one first, else a new frame from the FIFO or FQ-MAC.
    fn ht_take(&mut self, node: u32, tin: TinId) -> Option<Mpdu> {
        let now = self.now;
        let ht = self.ht.as_mut().expect("802.11n");
        let d = &mut ht.drivers[node as usize];
        if let Some(m) = d.held[tin.index()].pop_front() {
            return Some(m);
        }
        let pkt = match &mut d.src {
            Source::Fifo { q, .. } => q[tin.index()].pop_front(),
            Source::Fq(fq) => {
                self.dropped.clear();
                let mut cx = QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan };
                let p = fq.dequeue(tin, &mut cx, now);
                if p.is_some() {
                    d.frames += 1;
                }
                p
            }
        };
        let est_us = match pkt {
            Some(p) if d.aql_on || matches!(d.src, Source::Fq(_)) => {
                let station = if node == 0 { tin.station().0 as usize } else { node as usize - 1 };
                let bytes = ht::qos_data_mpdu_bytes(self.pkts.get(p).ip_len);
                let est = tx_time_est(est_airtime_us(ht.tx[station], bytes));
                d.aql.on_queued(tin.station(), tin.ac(), est);
                est
            }
            _ => 0,
        };
        if !self.dropped.is_empty() {
            self.account_driver_drops(node);
        }
        let d = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize];
        pkt.map(|pkt| {
            let sn = d.next_sn[tin.index()];
            d.next_sn[tin.index()] = sn.wrapping_add(1);
            Mpdu { pkt, attempts: 0, delivered: false, est_us, sn }
        })
    }

    /// Build one aggregate for `tin` into the hardware queue of `node`, as large as the limits
    /// allow (64 MPDUs, 65 535 B, the aggregate duration cap; with AQL, until the station's
    /// limit is reached). An MPDU that does not fit goes back to the head of the tin.
    fn ht_build(&mut self, node: u32, tin: TinId) {
        let n = node as usize;
        let station = if node == 0 { tin.station().0 as u32 } else { node - 1 };
        let (tx, band, limits) = {
            let ht = self.ht.as_ref().expect("802.11n");
            let mut limits = ht.limits;
            // An AC with a TXOP limit (VI 3.008 ms, VO 1.504 ms) keeps its PPDUs within it.
            let txop = ht.edca[tin.ac().index()].txop_limit;
            if txop > Nanos::ZERO {
                limits.max_duration = limits.max_duration.min(txop);
            }
            (ht.tx[station as usize], ht.band, limits)
        };
        let now = self.now;
        let n_st = self.scn.stations.len();
        let link = if node == 0 { station as usize } else { n_st + station as usize };
        let (tx, rate_idx) = match self.ht.as_mut().expect("802.11n").rc[link].as_mut() {
            Some(r) => {
                let i = r.ctl.rate_for_attempt(now, 1);
                (HtTxVector::new(r.table[i as usize], tx.width, tx.gi), i)
            }
            None => (tx, 0),
        };
        let ac = tin.ac().index();
        let slot = {
            let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
            let q = &mut d.hw[ac];
            let slot = (q.head + q.len) % HW_QUEUE_AGGS;
            let agg = &mut q.aggs[slot];
            agg.mpdus.clear();
            agg.tin = tin;
            agg.station = station;
            agg.ok = 0;
            agg.tx = tx;
            agg.rate_idx = rate_idx;
            slot
        };
        let mut padded = 0u32;
        let mut psdu = 0u32;
        let mut count = 0u32;
        while count < limits.max_mpdus {
            let Some(m) = self.ht_take(node, tin) else { break };
            let mpdu = ht::qos_data_mpdu_bytes(self.pkts.get(m.pkt).ip_len);
            let with = padded + ht::MPDU_DELIMITER_BYTES + mpdu;
            let fits = count == 0
                || (with <= limits.max_bytes && ht::txtime(band, tx, with) - band.signal_extension() <= limits.max_duration);
            let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
            if !fits {
                d.held[tin.index()].push_front(m);
                break;
            }
            d.hw[ac].aggs[slot].mpdus.push(m);
            padded += ht::ampdu_subframe_bytes(mpdu);
            psdu = with;
            count += 1;
            if d.aql_on && !d.aql.can_queue(tin.station(), tin.ac()) {
                break;
            }
        }
        let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
        debug_assert!(count > 0, "the scheduler picked a tin without frames");
        if count == 0 {
            return;
        }
        // A lone MPDU goes without the A-MPDU delimiter and is answered by a normal ACK.
        if count == 1 {
            psdu -= ht::MPDU_DELIMITER_BYTES;
        }
        let agg = &mut d.hw[ac].aggs[slot];
        agg.psdu = psdu;
        agg.txtime = ht::txtime(band, tx, psdu);
        d.hw[ac].len += 1;
        if d.hw[ac].len == 1 {
            self.ht_head_to_mac(node, ac);
        }
    }

    /// The head of the hardware queue becomes the frame the node contends with, with the EDCA
    /// parameters of its AC.
    fn ht_load_head(&mut self, node: u32, ac: usize) {
        let c = contender(node, ac) as usize;
        let agg = self.ht.as_ref().expect("802.11n").drivers[node as usize].head(ac);
        let (first, station) = (agg.mpdus[0].pkt, agg.station);
        let dn = &mut self.dcf.nodes[c];
        dn.frame = Some(first);
        dn.frame_station = station;
        dn.attempts = 0;
        dn.delivered = false;
    }

    /// An aggregate entered an empty hardware queue: it contends from now.
    fn ht_head_to_mac(&mut self, node: u32, ac: usize) {
        self.ht_load_head(node, ac);
        if let Some((t, gen)) = self.dcf.frame_arrived(contender(node, ac) as usize, self.now) {
            self.queue.schedule(t, super::Event::Access { gen });
        }
    }

    pub(super) fn ht_on_access(&mut self, gen: u64) {
        let ta = self.now;
        if !self.dcf.begin_access(ta, gen) {
            return;
        }
        self.resolve_internal_collisions();
        self.air.clear();
        let mut busy_end = ta;
        let band = self.ht.as_ref().expect("802.11n").band;
        if self.dcf.medium.beacon_in_air {
            let rate = self.ht.as_ref().expect("802.11n").beacon_rate;
            let d = ofdm::txtime(band, rate, self.scn.cell.beacon_bytes);
            let nc = &mut self.counters.nodes[0];
            nc.airtime_ns += d.0;
            nc.tx_attempts += 1;
            nc.beacons += 1;
            self.counters.frames += 1;
            self.air.push(super::AirTx { node: 0, end: ta + d, rate: crate::phy::dsss::DsssRate::R1 });
            busy_end = ta + d;
        }
        for i in 0..self.dcf.medium.transmitters.len() {
            let c = self.dcf.medium.transmitters[i];
            let (node, ac) = node_ac(c);
            self.dcf.nodes[c as usize].attempts += 1;
            let d = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize];
            let agg = d.hw[ac].head_mut();
            let (s, t, n_mpdus, mcs) = (agg.station as usize, agg.txtime, agg.mpdus.len(), agg.tx.mcs.index() as usize);
            for m in agg.mpdus.iter_mut() {
                m.attempts += 1;
            }
            let nc = &mut self.counters.nodes[node as usize];
            nc.airtime_ns += t.0;
            nc.tx_attempts += 1;
            let sc = &mut self.counters.stations[s];
            let dir = (node != 0) as usize;
            sc.airtime_ns += t.0;
            sc.air_dir_ns[dir] += t.0;
            sc.tx_attempts += 1;
            sc.ampdu_mpdus[dir][n_mpdus.min(64)] += 1;
            sc.mcs_attempts[dir][mcs] += 1;
            self.counters.frames += 1;
            // `AirTx::node` holds the contender in an 802.11n cell.
            self.air.push(super::AirTx { node: c, end: ta + t, rate: crate::phy::dsss::DsssRate::R1 });
            busy_end = busy_end.max(ta + t);
        }
        self.outcome = if self.air.len() > 1 || self.dcf.medium.beacon_in_air {
            Outcome::Collision
        } else {
            self.ht_draw_outcome(ta)
        };
        match self.outcome {
            Outcome::Success | Outcome::AckLost => {
                let (node, ac) = node_ac(self.air[0].node);
                let ht = self.ht.as_ref().expect("802.11n");
                let agg = ht.drivers[node as usize].head(ac);
                let s = agg.station as usize;
                let resp = if agg.mpdus.len() == 1 {
                    ht::ack_time(ht.band, &ht.basic, agg.tx.mcs)
                } else {
                    ht::block_ack_time(ht.band, &ht.basic, agg.tx.mcs)
                };
                let acker = if node == 0 { s + 1 } else { 0 };
                self.counters.nodes[acker].airtime_ns += resp.0;
                self.counters.stations[s].airtime_ns += resp.0;
                self.counters.stations[s].air_dir_ns[(node != 0) as usize] += resp.0;
                if self.outcome == Outcome::AckLost {
                    self.counters.stations[s].ack_errors += 1;
                }
                self.queue.schedule(busy_end, super::Event::TxEnd);
                busy_end = busy_end + band.sifs() + resp;
            }
            Outcome::DataLost => {
                let (node, ac) = node_ac(self.air[0].node);
                let s = self.ht.as_ref().expect("802.11n").drivers[node as usize].head(ac).station as usize;
                self.counters.stations[s].data_errors += 1;
            }
            Outcome::Collision => {
                let beacon = self.dcf.medium.beacon_in_air;
                for a in &self.air {
                    if a.node != 0 || !beacon {
                        let s = self.dcf.nodes[a.node as usize].frame_station as usize;
                        self.counters.stations[s].collisions += 1;
                    }
                }
            }
        }
        self.counters.medium_busy_ns += (busy_end - ta).0;
        self.queue.schedule(busy_end, super::Event::ExchangeEnd);
    }

    /// EDCA internal collisions: when several access categories of one node end their backoff
    /// in the same slot, the highest one transmits and the others behave as after a failed
    /// attempt (CW doubled, a new backoff) without going on the air; their aggregates stay.
    fn resolve_internal_collisions(&mut self) {
        if self.dcf.medium.transmitters.len() < 2 {
            return;
        }
        // Transmitters are in contender order: a node's ACs are adjacent, VO (0) first.
        let mut i = 1;
        while i < self.dcf.medium.transmitters.len() {
            let t = &self.dcf.medium.transmitters;
            if node_ac(t[i]).0 == node_ac(t[i - 1]).0 {
                let loser = self.dcf.medium.transmitters.remove(i) as usize;
                self.dcf.internal_collision(loser);
            } else {
                i += 1;
            }
        }
    }

    /// A lone A-MPDU on the air: which MPDUs does the receiver decode, and does the sender
    /// decode the BlockAck? One uniform per MPDU and one for the response, from the sender's
    /// stream; a perfect channel draws nothing. The preamble and HT-SIG are taken to succeed
    /// whenever an MPDU does (their error rate at BPSK ½ is far below the data's).
    fn ht_draw_outcome(&mut self, ta: Nanos) -> Outcome {
        let (node, ac) = node_ac(self.air[0].node);
        let node = node as usize;
        let ht = self.ht.as_mut().expect("802.11n");
        let agg = ht.drivers[node].hw[ac].head_mut();
        let s = agg.station as usize;
        let Some(ch) = self.channels[s].as_mut() else {
            agg.ok = if agg.mpdus.len() >= 64 { u64::MAX } else { (1u64 << agg.mpdus.len()) - 1 };
            return Outcome::Success;
        };
        let (data_dir, ack_dir) = if node == 0 { (Dir::Down, Dir::Up) } else { (Dir::Up, Dir::Down) };
        let tx = agg.tx;
        let mode = ErrMode::nist(tx.mcs.non_ht_reference_rate());
        // Two spatial streams share the transmit power: each sees 3 dB less SNR.
        let snr = ch.snr_cdb(ta, data_dir) - if tx.mcs.n_ss() == 2 { 300 } else { 0 };
        let rng = &mut self.err_rng[node];
        agg.ok = 0;
        for (i, m) in agg.mpdus.iter().enumerate() {
            let bytes = ht::qos_data_mpdu_bytes(self.pkts.get(m.pkt).ip_len);
            let p = self.errors.success(mode, Preamble::Long, snr, bytes);
            if rng.random::<f64>() < p {
                agg.ok |= 1 << i;
            }
        }
        if agg.ok == 0 {
            return Outcome::DataLost;
        }
        if data_dir == Dir::Up {
            self.report = Some(super::Report { station: s as u32, snr_cdb: snr });
        }
        let resp_rate = ht::control_response_rate(&ht.basic, tx.mcs);
        let resp_bytes = if agg.mpdus.len() == 1 { ofdm::ACK_BYTES } else { ofdm::BLOCK_ACK_BYTES };
        let ack_snr = ch.snr_cdb(ta + agg.txtime + ht.band.sifs(), ack_dir);
        let p_ack = self.errors.success(ErrMode::nist(resp_rate), Preamble::Long, ack_snr, resp_bytes);
        if rng.random::<f64>() >= p_ack {
            return Outcome::AckLost;
        }
        if ack_dir == Dir::Up {
            self.report = Some(super::Report { station: s as u32, snr_cdb: ack_snr });
        }
        Outcome::Success
    }

    /// End of a decoded A-MPDU: the receiver passes up every MPDU it decoded that it did not
    /// have. With the BlockAck lost the sender keeps them and the receiver gets copies.
    /// Delivery is in the order of the aggregate; there is no reordering buffer.
    pub(super) fn ht_on_tx_end(&mut self) {
        let (node, ac) = node_ac(self.air[0].node);
        let acked = self.outcome == Outcome::Success;
        let n_mpdus = self.ht.as_ref().expect("802.11n").drivers[node as usize].head(ac).mpdus.len();
        for i in 0..n_mpdus {
            let d = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize];
            let agg = d.hw[ac].head_mut();
            if agg.ok & (1 << i) == 0 || agg.mpdus[i].delivered {
                continue;
            }
            let station = agg.station;
            let (tin, sn) = (agg.tin, agg.mpdus[i].sn);
            let pkt = agg.mpdus[i].pkt;
            self.counters.stations[station as usize].tx_frames += 1;
            let deliver = if acked {
                // Ownership passes to the receiver; the slot is released at the exchange end.
                self.left_first_hop(node, pkt);
                let d = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize];
                let agg = d.hw[ac].head_mut();
                agg.mpdus[i].delivered = true;
                agg.mpdus[i].pkt = PacketId(u32::MAX);
                pkt
            } else {
                agg.mpdus[i].delivered = true;
                let copy = *self.pkts.get(pkt);
                self.pkts.alloc(copy)
            };
            self.ht_rx(node, tin, sn, deliver.0);
        }
    }

    /// The receiver of `node`'s tin `tin` gets sequence number `sn` (`what`: a packet id, or
    /// `RX_SKIP` when the sender gave it up): pass up everything now in order.
    fn ht_rx(&mut self, node: u32, tin: TinId, sn: u32, what: u32) {
        let to = if node == 0 { Node::Station(tin.station().0 as u32) } else { Node::Ap };
        let r = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize].rx[tin.index()];
        let ahead = sn.wrapping_sub(r.next);
        if ahead >= u32::MAX / 2 {
            // Older than the window: a duplicate.
            if what != RX_SKIP {
                self.pkts.free(PacketId(what));
            }
            return;
        }
        let idx = ahead as usize;
        while r.buf.len() <= idx {
            r.buf.push_back(RX_EMPTY);
        }
        r.buf[idx] = what;
        loop {
            let r = &mut self.ht.as_mut().expect("802.11n").drivers[node as usize].rx[tin.index()];
            let Some(&x) = r.buf.front() else { break };
            if x == RX_EMPTY {
                break;
            }
            r.buf.pop_front();
            r.next = r.next.wrapping_add(1);
            if x != RX_SKIP {
                self.arrive(to, PacketId(x));
            }
        }
    }

    pub(super) fn ht_on_exchange_end(&mut self) {
        let te = self.now;
        let (band, sifs) = {
            let ht = self.ht.as_ref().expect("802.11n");
            (ht.band, ht.band.sifs())
        };
        let ack_timeout = band.ack_timeout();
        // EIFS after an undecodable HT PPDU: SIFS + the estimated ACK time + AIFS.
        let eifs_extra = |mcs: ht::HtMcs| sifs + ht::estimated_ack_time(mcs);
        let collided = self.air.len() > 1;
        let slowest_mcs = |sim: &Self| {
            let ht = sim.ht.as_ref().expect("802.11n");
            sim.air
                .iter()
                .enumerate()
                .filter(|(i, _)| !(*i == 0 && sim.dcf.medium.beacon_in_air))
                .map(|(_, a)| {
                    let (node, ac) = node_ac(a.node);
                    ht.drivers[node as usize].head(ac).tx.mcs
                })
                .min()
        };
        let bystander_extra = if collided { slowest_mcs(self).map(eifs_extra).unwrap_or(Nanos::ZERO) } else { Nanos::ZERO };
        for n in 0..self.dcf.nodes.len() {
            let aifs = self.dcf.nodes[n].aifs;
            self.dcf.set_ifs_end(n, te + bystander_extra + aifs);
        }
        match self.outcome {
            Outcome::Collision => {
                for (i, a) in self.air.iter().enumerate() {
                    let is_beacon = i == 0 && self.dcf.medium.beacon_in_air;
                    let own = if is_beacon { a.end } else { a.end + ack_timeout };
                    let aifs = self.dcf.nodes[a.node as usize].aifs;
                    let t = (own.max(te) + aifs).max(te + bystander_extra + aifs);
                    self.dcf.set_ifs_end(a.node as usize, t);
                }
            }
            Outcome::DataLost => {
                let a = self.air[0];
                let (node, ac) = node_ac(a.node);
                let ht = self.ht.as_ref().expect("802.11n");
                let s = ht.drivers[node as usize].head(ac).station;
                let mcs = ht.drivers[node as usize].head(ac).tx.mcs;
                // Every access category of the receiver saw a frame it could not decode.
                let receiver = if node == 0 { s + 1 } else { 0 };
                for rac in 0..NUM_ACS {
                    let r = contender(receiver, rac) as usize;
                    let r_aifs = self.dcf.nodes[r].aifs;
                    self.dcf.set_ifs_end(r, te + eifs_extra(mcs) + r_aifs);
                }
                let aifs = self.dcf.nodes[a.node as usize].aifs;
                self.dcf.set_ifs_end(a.node as usize, a.end + ack_timeout + aifs);
            }
            Outcome::AckLost => {
                // The sender could not decode the (Block)Ack, sent at a legacy OFDM rate.
                let a = self.air[0];
                let (node, ac) = node_ac(a.node);
                let ht = self.ht.as_ref().expect("802.11n");
                let mcs = ht.drivers[node as usize].head(ac).tx.mcs;
                let resp = ht::control_response_rate(&ht.basic, mcs);
                let aifs = self.dcf.nodes[a.node as usize].aifs;
                self.dcf.set_ifs_end(a.node as usize, te + sifs + ofdm::estimated_ack_time(resp) + aifs);
            }
            Outcome::Success => {}
        }
        self.deliver_report();
        let acked = self.outcome == Outcome::Success;
        for i in 0..self.air.len() {
            let a = self.air[i];
            if i == 0 && self.dcf.medium.beacon_in_air {
                continue;
            }
            let decoded = matches!(self.outcome, Outcome::Success | Outcome::AckLost);
            self.ht_complete_head(a.node, acked, decoded);
        }
        if let Some((t, gen)) = self.dcf.end_busy(te) {
            self.queue.schedule(t, super::Event::Access { gen });
        }
        let transmitters = std::mem::take(&mut self.dcf.medium.transmitters);
        for &c in &transmitters {
            self.ht_pull(node_ac(c).0);
        }
        self.dcf.medium.transmitters = transmitters;
        self.air.clear();
        self.outcome = Outcome::Collision;
    }

    /// TX status of the head aggregate of `node`: acknowledged MPDUs leave, the others are
    /// retried from the head of their tin or dropped at the retry limit; airtime is reported
    /// to the scheduler and AQL; the next aggregate in the hardware queue takes the MAC.
    fn ht_complete_head(&mut self, c: u32, acked: bool, decoded: bool) {
        let (node, ac) = node_ac(c);
        let n = node as usize;
        let now = self.now;
        let limit = self.ht.as_ref().expect("802.11n").mpdu_retry_limit;
        let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
        let head = d.hw[ac].head;
        let (tin, station, txtime) = (d.hw[ac].aggs[head].tin, d.hw[ac].aggs[head].station, d.hw[ac].aggs[head].txtime);
        let tx_us = (txtime.0 / 1000) as u32;
        d.sched.report_airtime(tin, tx_us, 0, now);
        if node != 0 && decoded {
            // The AP received this PPDU from the station: RX airtime of the station's TXQ.
            let ap = &mut self.ht.as_mut().expect("802.11n").drivers[0];
            let ap_tin = TinId::new(StationId(station as u16), tin.tid());
            ap.sched.report_airtime(ap_tin, 0, tx_us, now);
        }
        let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
        let agg_ok = d.hw[ac].aggs[head].ok;
        let n_mpdus = d.hw[ac].aggs[head].mpdus.len();
        let (rate_idx, mcs) = (d.hw[ac].aggs[head].rate_idx, d.hw[ac].aggs[head].tx.mcs.index() as usize);
        if acked {
            self.counters.stations[station as usize].mcs_acked[(node != 0) as usize][mcs] += 1;
        }
        // Rate control learns the fate of every MPDU of the attempt.
        let n_st = self.scn.stations.len();
        let link = if node == 0 { station as usize } else { n_st + station as usize };
        if let Some(r) = self.ht.as_mut().expect("802.11n").rc[link].as_mut() {
            for i in 0..n_mpdus {
                r.ctl.on_attempt(now, rate_idx, acked && agg_ok & (1 << i) != 0);
            }
            r.ctl.on_frame_end(now, acked);
        }
        // Failed MPDUs go back to the head of the tin in their original order.
        for i in (0..n_mpdus).rev() {
            let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
            let m = d.hw[ac].aggs[head].mpdus[i];
            let ok = acked && agg_ok & (1 << i) != 0;
            if ok || (m.attempts as u32) >= limit {
                d.frames -= 1;
                if m.est_us > 0 {
                    d.aql.on_completed(tin.station(), tin.ac(), m.est_us);
                }
                if ok {
                    self.counters.stations[station as usize].acked_mpdus += 1;
                    if m.pkt.0 != u32::MAX {
                        // The receiver had it already (an earlier BlockAck was lost).
                        self.left_first_hop(node, m.pkt);
                        self.pkts.free(m.pkt);
                    }
                } else if m.delivered {
                    self.left_first_hop(node, m.pkt);
                    self.pkts.free(m.pkt);
                } else {
                    self.left_first_hop(node, m.pkt);
                    self.drop_packet(m.pkt, node, DropCause::Retry);
                    self.ht_rx(node, tin, m.sn, RX_SKIP);
                }
            } else {
                self.counters.stations[station as usize].retries += 1;
                d.held[tin.index()].push_front(m);
            }
        }
        let d = &mut self.ht.as_mut().expect("802.11n").drivers[n];
        d.hw[ac].aggs[head].mpdus.clear();
        d.hw[ac].head = (head + 1) % HW_QUEUE_AGGS;
        d.hw[ac].len -= 1;
        if Driver::has_frames(&d.src, &d.held, tin) {
            d.sched.wake(tin, now, &d.aql);
        }
        self.dcf.on_ppdu_end(c as usize, acked);
        if self.ht.as_ref().expect("802.11n").drivers[n].hw[ac].len > 0 {
            // Planned by `end_busy` like any node holding a frame.
            self.ht_load_head(node, ac);
        }
    }

    /// Packets held by the 802.11n drivers, for the conservation check: `count` for each one
    /// in flight; returns how many are senders' copies of frames already delivered.
    pub(super) fn ht_for_each_held(&self, mut count: impl FnMut(PacketId)) -> u64 {
        let Some(ht) = self.ht.as_ref() else { return 0 };
        let mut copies = 0;
        let mut mpdu = |m: &Mpdu, count: &mut dyn FnMut(PacketId)| {
            if m.pkt.0 == u32::MAX {
                return;
            }
            if m.delivered {
                copies += 1;
            } else {
                count(m.pkt);
            }
        };
        for d in &ht.drivers {
            match &d.src {
                Source::Fifo { q, .. } => q.iter().flatten().for_each(|&p| count(p)),
                Source::Fq(fq) => fq.for_each_queued(&mut count),
            }
            for h in &d.held {
                for m in h {
                    mpdu(m, &mut count);
                }
            }
            for q in &d.hw {
                for k in 0..q.len {
                    for m in &q.aggs[(q.head + k) % HW_QUEUE_AGGS].mpdus {
                        mpdu(m, &mut count);
                    }
                }
            }
            for r in &d.rx {
                r.buf.iter().filter(|&&x| x != RX_EMPTY && x != RX_SKIP).for_each(|&x| count(PacketId(x)));
            }
        }
        copies
    }
}
