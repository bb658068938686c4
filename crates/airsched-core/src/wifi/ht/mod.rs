//! 802.11n in the simulator: EDCA channel access, A-MPDU aggregation with BlockAck and
//! per-MPDU errors, and the queueing between a node's qdisc and the air (the driver's per-TID
//! FIFOs of ath9k before Linux 4.10, or mac80211's FQ-MAC intermediate queues), with the
//! station scheduler (round robin, the ath9k airtime scheduler of Linux 4.11, or mac80211's
//! airtime scheduler with AQL). See docs/model-80211n-mac.md.
//!
//! This file holds the cell's HT settings and the transmit path down to the hardware queue
//! (pull from the qdisc, admit to FIFO or FQ-MAC, schedule, build aggregates); `driver.rs`
//! the per-node queues; `exchange.rs` the A-MPDU + BlockAck exchange on the medium. Each node's
//! access categories are DCF contenders `node * 4 + ac`. The AP's tins are (station, TID); a
//! station's are (AP, TID).

mod airtime_est;
pub mod amsdu;
pub mod driver;
mod exchange;
pub mod firmware;
pub mod ofdma;
pub mod ofdma_ul;
pub mod params;

use std::collections::VecDeque;

use crate::ctx::Ctx;
use crate::engine::{named, StreamKind};
use crate::mac::edca::{AccessCategory, EdcaParams, TxopTable};
use crate::mac::minstrel_ht::{self, MinstrelHt};
use crate::mac::rate::RateControl;
use crate::mac80211::airtime::{AirtimeParams, AirtimeScheduler, AtfKind};
use crate::mac80211::aql::{tx_time_est, Aql, AqlParams};
use crate::mac80211::fq::{Fq, FqParams};
use crate::mac80211::{Ac, StationId, TinId, NUM_TIDS};
use crate::packet::{FlowKey, PacketId};
use crate::phy::error_rate::OfdmRate;
use crate::phy::ht::{self, AmpduLimits, HtTxVector};
use crate::phy::ofdm::OfdmBand;
use crate::phy::{he, vht, TxVector};
use crate::time::Nanos;
use firmware::Firmware;
use params::{AirtimeSched, ApMacConfig, FqKernel, HtCellConfig, HtStationConfig, MacQueue, ScheduleOrder};

use super::medium::Medium;
use driver::Reorder;
pub use driver::{contender, node_ac, Driver, HwQueue, Mpdu, Source, HW_QUEUE_AGGS, NOT_DUE};

/// Minstrel (the legacy algorithm of `mac/rate.rs`) run over a station's HT MCS, as a
/// Minstrel-HT-like controller: one rate per A-MPDU, every MPDU's fate a sample.
pub struct HtRateCtl {
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
pub struct Ht {
    /// Per station: it forms its uplink A-MPDU when it wins the medium
    /// (`StationAggregation::AtAccess`, exchange.rs `rebuild_at_access`).
    pub(super) at_access: Vec<bool>,
    pub band: OfdmBand,
    pub basic: Vec<OfdmRate>,
    /// Per station: the transmit vector of its link at its top MCS (both directions): HT, or
    /// in an 802.11ac/ax cell VHT/HE for the stations of that standard.
    pub tx: Vec<TxVector>,
    /// Per station: the length of the compressed BlockAck answering its A-MPDUs (32 B with a
    /// 64-bit bitmap; 56 B with the 256-bit bitmap of an HE agreement wider than 64).
    pub ba_bytes: Vec<u32>,
    /// Per link (`s`: the AP's to station s, `n + s`: station s's own): Minstrel over the
    /// station's MCS table, None for a fixed MCS.
    pub rc: Vec<Option<HtRateCtl>>,
    /// Per link: Minstrel-HT (Linux 4.11) with ath9k's hardware retry chain, None otherwise.
    pub mrr: Vec<Option<Box<MinstrelHt>>>,
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
    pub n_stations: usize,
    /// The AP's scheduler has an airtime policy (groups, caps, minimum rates).
    pub policy_on: bool,
    /// Dynamic aggregate sizing at the AP (`[ap] dynamic_aggregate_time`).
    pub dynamic_aggregate: Option<params::DynamicAggregate>,
    /// The AP driver's timer (a capped group waits for its balance), armed as `Event::Cfp`,
    /// which an 802.11n cell does not otherwise use.
    pub wake_at: Option<Nanos>,
    /// The AP's next-steps mechanisms (`[ap] retry_budget`, ...), off by default.
    pub next: params::NextSteps,
    /// What they did, for `Simulation::next_steps_stats`.
    pub next_stats: NextStepsStats,
    /// Soft admission control, per flow: demoted until then (zero: not demoted), and how many
    /// times and packets (empty when off).
    pub demoted_until: Vec<Nanos>,
    pub demotions: Vec<(u32, u64)>,
    /// The AP's firmware when its driver aggregates in firmware (`[ap] aggregation`).
    pub fw: Option<Box<Firmware>>,
    /// Downlink OFDMA at the AP (`[ap] ofdma = "dl"`, ofdma.rs); None when off.
    pub mu: Option<Box<ofdma::Mu>>,
    /// Uplink OFDMA at the AP (`[ap] ofdma = "dl+ul"`, ofdma_ul.rs); None otherwise.
    pub ul: Option<Box<ofdma_ul::Ul>>,
    /// A-MSDU inside A-MPDU at the AP (`[ap] amsdu`, amsdu.rs); None when off.
    pub amsdu: Option<Box<amsdu::Amsdu>>,
}

/// Counters of the AP's next-steps mechanisms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NextStepsStats {
    /// MPDUs the retry budget dropped (counted in `drops_retry` too).
    pub budget_drops: u64,
    /// The most any MPDU had spent (µs, tries + counted sojourn) at a TX status after it had
    /// been retried at least once: with the budget on, at most the budget.
    pub budget_worst_retried_us: u32,
    /// The minimal hardware queue: aggregates built behind one on the air.
    pub lead_builds: u64,
    /// The longest any of them was built before the expected end of the one ahead (ns): at
    /// most the lead time.
    pub lead_worst_early_ns: u64,
    /// Firmware aggregation: the most frames and bytes the firmware held in one access
    /// category, and the largest byte limit DQL set.
    pub fw_max_frames: u32,
    pub fw_max_bytes: u32,
    pub dql_max_limit: u32,
    /// VO MPDUs sent at the head of a lower-priority aggregate, and the fewest VO frames the
    /// station's VO TXQ held when that was decided (at least `vo_piggyback`).
    pub vo_piggybacked: u64,
    pub vo_piggyback_min_queued: u32,
    /// Station-first order: aggregates built for a station's lower TID while it had frames of
    /// a higher TID it could not send (that AC's hardware queue full).
    pub station_first_inversions: u64,
}

/// The running sizes of an aggregate being built: padded subframes so far, the PSDU with the
/// last MPDU unpadded, and the MPDUs.
struct Fill {
    padded: u32,
    psdu: u32,
    count: u32,
}

/// Airtime of one MPDU of `bytes` at `tx` as mac80211 estimates it for AQL. 802.11n: the data
/// bits at the PHY rate, plus the per-PPDU overhead (preamble, SIFS, BlockAck, AIFS, ~100 µs)
/// shared by the 16 MPDUs an aggregate is taken to hold (this model's simplification of
/// `ieee80211_calc_expected_tx_airtime`, kept so 802.11n results stay). VHT and HE: the
/// kernel's own formula (`airtime_est.rs`), aggregated on every AC but VO.
fn est_airtime_us(tx: TxVector, bytes: u32, ac: Ac) -> u32 {
    if let TxVector::Ht(tx) = tx {
        const PPDU_OVERHEAD_US: u64 = 100;
        const MPDUS_PER_AMPDU: u64 = 16;
        let data = (bytes as u64 + ht::MPDU_DELIMITER_BYTES as u64) * 8 * 1_000_000 / tx.bits_per_second();
        return (data + PPDU_OVERHEAD_US / MPDUS_PER_AMPDU) as u32;
    }
    // mac80211 holds the frame without its FCS.
    let len = bytes - ht::FCS_BYTES;
    airtime_est::expected_tx_airtime_us(tx, len, ac != Ac::Vo).expect("a VHT, HE or non-HT vector")
}

/// The A-MPDU limits of a link at `tx` within the cell's `limits`: the standard's largest
/// A-MPDU (HT 65 535 B, VHT 2^20 - 1, HE 2^23 - 1) and BlockAck window (64; 256 for HE). A
/// non-HT (802.11a/g) link has no BlockAck agreement and no A-MPDU: one MPDU per PPDU.
fn link_limits(limits: AmpduLimits, tx: TxVector) -> AmpduLimits {
    let (bytes, window) = match tx {
        TxVector::Ht(_) => (ht::AMPDU_MAX_BYTES, ht::AMPDU_MAX_MPDUS),
        TxVector::Vht(_) => (vht::AMPDU_MAX_BYTES, ht::AMPDU_MAX_MPDUS),
        TxVector::He(_) => (he::AMPDU_MAX_BYTES, he::BA_WINDOW_MAX),
        TxVector::NonHt(_) => (ht::AMPDU_MAX_BYTES, 1),
    };
    AmpduLimits { max_bytes: bytes, max_mpdus: limits.max_mpdus.min(window), ..limits }
}

/// One station's link as the 802.11n MAC builds it: the station's name (which keys the link's
/// random streams), its settings and its rate control.
pub struct HtStation<'a> {
    pub name: &'a str,
    pub ht: HtStationConfig,
    pub rate_control: RateControl,
}

impl Ht {
    /// The 802.11n MAC of a cell with `cell`'s settings, the AP's MAC queueing `mac`, its
    /// `stations` and the header fields of its flows (`flow_keys`, which give each flow its
    /// TID); `ap_dev` names the AP's WiFi device (FQ-MAC's stream).
    pub fn new(
        cell: &HtCellConfig,
        mac: &ApMacConfig,
        stations: &[HtStation<'_>],
        flow_keys: &[FlowKey],
        seed: u64,
        ap_dev: &str,
    ) -> Ht {
        let n = stations.len();
        let tx: Vec<TxVector> = stations
            .iter()
            .map(|st| st.ht.link.unwrap_or(TxVector::Ht(HtTxVector::new(st.ht.mcs, cell.width, cell.gi))))
            .collect();
        let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
        let contention = crate::mac::rate::Contention { slot: cell.band.slot(), cw_min: be.cw_min, cw_max: be.cw_max };
        let mut rc = Vec::with_capacity(2 * n);
        let mut mrr = Vec::with_capacity(2 * n);
        for dir in 0..2u64 {
            for (i, st) in stations.iter().enumerate() {
                mrr.push((st.rate_control == RateControl::MinstrelHt).then(|| {
                    let mut rng = named(seed, StreamKind::RateControl, &super::medium::link_name(st.name, dir == 0), 0);
                    Box::new(MinstrelHt::new(minstrel_ht::groups_for(tx[i]), Nanos::ZERO, &mut rng))
                }));
                if st.rate_control != RateControl::Minstrel {
                    rc.push(None);
                    continue;
                }
                let top = tx[i].ht();
                let mut table: Vec<ht::HtMcs> =
                    ht::HtMcs::ALL.iter().copied().filter(|m| m.index() <= top.mcs.index()).collect();
                table.sort_by_key(|m| (m.bits_per_second(top.width, top.gi), m.n_ss()));
                let ref_air: Vec<Nanos> = table
                    .iter()
                    .map(|&m| ht_ref_airtime(cell.band, &cell.basic_rates, HtTxVector::new(m, top.width, top.gi)))
                    .collect();
                let rng = named(seed, StreamKind::RateControl, &super::medium::link_name(st.name, dir == 0), 0);
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
            .map(|ac| EdcaParams::default_for(ac, cell.txop_limits));
        let flow_tid = flow_keys.iter().map(|k| crate::mac::edca::classify8021d(k.tos, k.priority)).collect();
        let mut drivers = Vec::with_capacity(n + 1);
        let mut policy_on = false;
        for node in 0..=n {
            let peers = if node == 0 { n } else { 1 };
            let tins = peers * NUM_TIDS;
            let (src, kind, params, aql_on) = if node == 0 {
                let src = match mac.queue {
                    MacQueue::DriverFifo { limit } => {
                        Source::Fifo { q: (0..tins).map(|_| VecDeque::with_capacity(64)).collect(), limit }
                    }
                    MacQueue::FqMac => {
                        let p = match mac.fq_kernel {
                            FqKernel::Linux4_11 => FqParams::linux_4_11(),
                            // mac80211 gives a radio with a VHT (or HE) band 16 MiB.
                            FqKernel::Linux6_18 if cell.wide.is_some() => FqParams::linux_6_18(),
                            FqKernel::Linux6_18 => FqParams::linux_6_18().without_vht(),
                        };
                        let mut fq = Fq::with_hash_stream(p, peers, &mut named(seed, StreamKind::FqMac, ap_dev, 0));
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
                let limit = stations[node - 1].ht.driver_queue_limit;
                let src = Source::Fifo { q: (0..tins).map(|_| VecDeque::with_capacity(16)).collect(), limit };
                let params =
                    AirtimeParams { use_tx: false, use_rx: false, new_queues: false, ..AirtimeParams::default() };
                (src, AtfKind::Ath9k, params, false)
            };
            let mut sched = AirtimeScheduler::new(kind, params, peers);
            if node == 0 {
                for (s, st) in stations.iter().enumerate() {
                    sched.set_weight(StationId(s as u16), st.ht.airtime_weight);
                }
                if kind == AtfKind::Mac80211 {
                    let policy = crate::mac80211::policy::PolicyParams {
                        min_rate_bps: stations.iter().map(|st| st.ht.min_rate_bps).collect(),
                        ..mac.policy.clone()
                    };
                    sched.set_policy(&policy);
                    policy_on = policy.is_active();
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
                rx: (0..tins)
                    .map(|_| Reorder { next: 0, buf: VecDeque::with_capacity(2 * ht::AMPDU_MAX_MPDUS as usize) })
                    .collect(),
            });
        }
        let ba_bytes = tx
            .iter()
            .map(|t| {
                if link_limits(limits, *t).max_mpdus > ht::AMPDU_MAX_MPDUS {
                    crate::phy::ofdm::BLOCK_ACK_256_BYTES
                } else {
                    crate::phy::ofdm::BLOCK_ACK_BYTES
                }
            })
            .collect();
        // Downlink OFDMA: the MU scheduler lists the cell's HE stations in station order (as
        // they associate).
        let mu = match (mac.ofdma.mode, cell.wide) {
            (ofdma::Ofdma::Dl | ofdma::Ofdma::DlUl, Some(w)) => {
                let he: Vec<u32> = (0..n as u32).filter(|&s| matches!(tx[s as usize], TxVector::He(_))).collect();
                Some(Box::new(ofdma::Mu::new(mac.ofdma, w.width, he)))
            }
            _ => None,
        };
        let ul = mu.as_deref().filter(|_| mac.ofdma.mode == ofdma::Ofdma::DlUl).map(|mu| {
            let he: Vec<u32> = mu.stations().collect();
            Box::new(ofdma_ul::Ul::new(&mac.ofdma, n, &he))
        });
        let amsdu = amsdu::Amsdu::new(&mac.amsdu, &tx);
        Ht {
            at_access: stations.iter().map(|s| s.ht.aggregation == params::StationAggregation::AtAccess).collect(),
            band: cell.band,
            basic: cell.basic_rates.clone(),
            tx,
            ba_bytes,
            rc,
            mrr,
            limits,
            mpdu_retry_limit: cell.mpdu_retry_limit,
            edca,
            flow_tid,
            drivers,
            beacon_rate: cell.basic_rates[0],
            n_stations: n,
            policy_on,
            wake_at: None,
            dynamic_aggregate: mac.dynamic_aggregate,
            next: mac.next,
            next_stats: NextStepsStats::default(),
            demoted_until: if mac.next.admission_sojourn.is_some() {
                vec![Nanos::ZERO; flow_keys.len()]
            } else {
                Vec::new()
            },
            demotions: if mac.next.admission_sojourn.is_some() { vec![(0, 0); flow_keys.len()] } else { Vec::new() },
            fw: mac.next.firmware.map(|c| Box::new(Firmware::new(c, n * NUM_TIDS))),
            mu,
            ul,
            amsdu,
        }
    }

    /// The next-steps counters, the firmware's included.
    pub fn next_steps_stats(&self) -> NextStepsStats {
        let mut s = self.next_stats;
        if let Some(fw) = self.fw.as_deref() {
            s.fw_max_frames = fw.max_frames;
            s.fw_max_bytes = fw.max_bytes;
            s.dql_max_limit = fw.max_limit_seen;
        }
        s
    }

    /// Give every contender (node, AC) its access category's EDCA parameters.
    pub fn init_edca(&self, dcf: &mut crate::mac::dcf::Dcf) {
        for c in 0..dcf.contenders() {
            let (_, ac) = node_ac(c as u32);
            let e = self.edca[ac];
            dcf.set_edca(c, e.aifs(self.band), e.cw_min, e.cw_max);
        }
    }

    /// The tin of a frame at WiFi node `node` for/from `station` with `tid`.
    #[inline]
    pub fn tin(node: u32, station: u32, tid: u8) -> TinId {
        let peer = if node == 0 { station } else { 0 };
        TinId::new(StationId(peer as u16), tid)
    }

    /// DCF timing parameters of the cell; the AC_BE EDCA parameters are the defaults, and
    /// `init_edca` gives every contender its own AC's.
    pub fn dcf_params(cell: &HtCellConfig, retry_limit: u32) -> crate::mac::dcf::DcfParams {
        let band = cell.band;
        let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
        crate::mac::dcf::DcfParams {
            slot: band.slot(),
            difs: be.aifs(band),
            pifs: band.pifs(),
            ack_timeout: band.ack_timeout(),
            cw_min: be.cw_min,
            cw_max: be.cw_max,
            retry_limit,
            countdown: cell.backoff_countdown,
            cw_at_limit: cell.cw_at_retry_limit,
        }
    }
}

impl Ht {
    /// 802.11n: move what the qdisc releases into the driver, then build aggregates while the
    /// hardware queue has room.
    pub fn pull(
        &mut self,
        m: &mut Medium,
        node: u32,
        cx: &mut Ctx,
        mut dequeue: impl FnMut(&mut Ctx) -> Option<PacketId>,
    ) -> bool {
        loop {
            let d = &self.drivers[node as usize];
            if let Source::Fifo { limit, .. } = d.src {
                if d.frames >= limit {
                    break;
                }
            }
            let Some(pkt) = dequeue(cx) else { break };
            self.admit(m, node, pkt, cx);
        }
        self.schedule(m, node, cx);
        true
    }

    /// [`Self::pull`] with `pkt` offered ahead of the qdisc, which is empty and hands out
    /// nothing more (its bypass, `Netdev::can_bypass`): the driver takes `pkt` (`take` runs
    /// the qdisc's bookkeeping of its pass) unless its FIFO is full, then builds aggregates
    /// while the hardware queue has room, as the pull's loop would. Returns whether it took
    /// `pkt`.
    #[inline]
    pub fn pull_offered(
        &mut self,
        m: &mut Medium,
        node: u32,
        cx: &mut Ctx,
        pkt: PacketId,
        take: impl FnOnce(&mut Ctx),
    ) -> bool {
        let d = &self.drivers[node as usize];
        let room = match d.src {
            Source::Fifo { limit, .. } => d.frames < limit,
            Source::Fq(_) => true,
        };
        if room {
            take(cx);
            self.admit(m, node, pkt, cx);
        }
        self.schedule(m, node, cx);
        room
    }

    /// A packet from the qdisc enters the driver (FIFO or FQ-MAC) of `node`.
    fn admit(&mut self, m: &Medium, node: u32, pkt: PacketId, cx: &mut Ctx) {
        let f = cx.pkts.get(pkt).flow as usize;
        let station = cx.station_of(m.acct(node), f).expect("wifi frames have a station");
        let now = cx.now;
        let ht = &mut *self;
        let mut tid = ht.flow_tid[f];
        if node == 0 && !ht.demoted_until.is_empty() && ht.demoted_until[f] > now {
            // Soft admission control: a demoted flow's frames go to best effort.
            tid = 0;
            ht.demotions[f].1 += 1;
        }
        let tin = Ht::tin(node, station, tid);
        let d = &mut ht.drivers[node as usize];
        match &mut d.src {
            Source::Fifo { q, .. } => {
                q[tin.index()].push_back(pkt);
                d.frames += 1;
            }
            Source::Fq(fq) => {
                cx.dropped.clear();
                let mut cx = cx.qctx();
                fq.enqueue(tin, pkt, &mut cx, now);
            }
        }
        let st =
            if node == 0 && ht.next.order == ScheduleOrder::StationFirst { TinId::new(tin.station(), 0) } else { tin };
        let d = &mut ht.drivers[node as usize];
        d.sched.wake(st, now, &d.aql);
        cx.account_dropped(m.dev(node), m.acct(node), None);
    }

    /// The scheduler picks tins and the driver builds one aggregate per pick while the
    /// hardware queue holds fewer than two.
    #[inline(always)]
    fn schedule(&mut self, m: &mut Medium, node: u32, cx: &mut Ctx) {
        // The pass would build nothing and change nothing (the usual case after each packet
        // the qdisc hands a driver whose hardware queue is full): return at once. Not for the
        // AP's own orders (firmware, station first), the minimal hardware queue (whose loop
        // counts its lead builds) or an airtime policy (whose wake-up the pass re-arms).
        let plain = node != 0
            || (self.fw.is_none()
                && self.next.order == ScheduleOrder::Priority
                && self.next.hw_queue_lead.is_none()
                && !self.policy_on);
        if plain && Self::nothing_to_build(&self.drivers[node as usize]) {
            return;
        }
        self.schedule_pass(m, node, cx);
    }

    /// [`Self::schedule`]'s pass.
    #[inline(never)]
    fn schedule_pass(&mut self, m: &mut Medium, node: u32, cx: &mut Ctx) {
        let n = node as usize;
        let own_order = node == 0 && (self.fw.is_some() || self.next.order == ScheduleOrder::StationFirst);
        if own_order {
            self.schedule_next_steps(m, cx);
        }
        for ac in Ac::ALL {
            if own_order {
                break;
            }
            loop {
                let d = &mut self.drivers[n];
                let q = &d.hw[ac.index()];
                if q.len >= HW_QUEUE_AGGS {
                    break;
                }
                // The minimal hardware queue: a second aggregate only within the lead time of
                // the expected end of the one on the air.
                if let (0, 1, Some(lead)) = (node, q.len, self.next.hw_queue_lead) {
                    if q.due == NOT_DUE || q.due > cx.now + lead {
                        break;
                    }
                    let early = q.due.saturating_sub(cx.now).0;
                    self.next_stats.lead_builds += 1;
                    self.next_stats.lead_worst_early_ns = self.next_stats.lead_worst_early_ns.max(early);
                }
                let d = &mut self.drivers[n];
                let Driver { src, held, sched, aql, .. } = d;
                if sched.nothing_listed(ac) {
                    break;
                }
                sched.schedule_start(ac, aql, cx.now);
                let Some(tin) = sched.next_tin(ac, aql, |t| Driver::has_frames(src, held, t)) else { break };
                self.build(m, node, tin, cx);
                let now = cx.now;
                let d = &mut self.drivers[n];
                let has = Driver::has_frames(&d.src, &d.held, tin);
                d.sched.return_tin(tin, has, now, &d.aql);
            }
        }
        if node == 0 && self.policy_on {
            if let Some(t) = self.drivers[0].sched.cap_wake(cx.now) {
                self.arm_wake(t, cx);
            }
        }
        if node == 0 && self.next.hw_queue_lead.is_some() {
            self.arm_lead_wake(cx);
        }
    }

    /// Whether every access category of driver `d` has its hardware queue full or (ath9k's
    /// scheduler) no tin listed: a scheduling pass would then build nothing and change nothing.
    #[inline(always)]
    fn nothing_to_build(d: &Driver) -> bool {
        Ac::ALL.into_iter().all(|ac| d.hw[ac.index()].len >= HW_QUEUE_AGGS || d.sched.nothing_listed(ac))
    }

    /// The AP's scheduling with a firmware that aggregates, or in station-first order.
    #[cold]
    fn schedule_next_steps(&mut self, m: &mut Medium, cx: &mut Ctx) {
        if self.next.order == ScheduleOrder::StationFirst {
            self.schedule_station_first(m, cx);
            return;
        }
        for ac in Ac::ALL {
            self.fill_firmware(m, ac, cx);
            self.firmware_build(m, ac, cx);
        }
    }

    /// The host hands the firmware frames of AC `ac` while it takes them (below its frame
    /// count, and with DQL while `dql_avail` is not negative): the scheduler picks a TXQ and
    /// the driver moves up to one aggregate's worth of its frames (checking AQL before each), as
    /// mt76's `mt76_txq_send_burst` moves a burst per TXQ.
    fn fill_firmware(&mut self, m: &Medium, ac: Ac, cx: &mut Ctx) {
        let burst = self.limits.max_mpdus;
        loop {
            if !self.fw.as_deref().is_some_and(|f| f.may_queue(ac.index())) {
                break;
            }
            let d = &mut self.drivers[0];
            let Driver { src, sched, aql, .. } = d;
            sched.schedule_start(ac, aql, cx.now);
            let Some(tin) = sched.next_tin(ac, aql, |t| Driver::src_has(src, t)) else { break };
            let mut handed = 0;
            while handed < burst && self.fw.as_deref().is_some_and(|f| f.may_queue(ac.index())) {
                let d = &self.drivers[0];
                if d.aql_on && !d.aql.can_queue(tin.station(), ac) {
                    break;
                }
                let Some(mp) = self.take_new(m, 0, tin, cx) else { break };
                let bytes = ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len);
                let fw = self.fw.as_deref_mut().expect("a firmware");
                fw.handed(ac.index(), tin, bytes);
                self.drivers[0].held[tin.index()].push_back(mp);
                handed += 1;
            }
            let now = cx.now;
            let d = &mut self.drivers[0];
            let has = Driver::src_has(&d.src, tin);
            d.sched.return_tin(tin, has, now, &d.aql);
            if handed == 0 && has {
                break;
            }
        }
    }

    /// The firmware builds aggregates of AC `ac` from the frames it holds while its hardware
    /// queue has room: its TIDs in turn, one aggregate each.
    fn firmware_build(&mut self, m: &mut Medium, ac: Ac, cx: &mut Ctx) {
        let i = ac.index();
        while self.drivers[0].hw[i].len < HW_QUEUE_AGGS {
            let fw = self.fw.as_deref_mut().expect("a firmware");
            let Some(tin) = fw.order[i].pop_front() else { break };
            if self.drivers[0].held[tin.index()].is_empty() {
                fw.listed[tin.index()] = false;
                continue;
            }
            self.build(m, 0, tin, cx);
            let fw = self.fw.as_deref_mut().expect("a firmware");
            if self.drivers[0].held[tin.index()].is_empty() {
                fw.listed[tin.index()] = false;
            } else {
                fw.order[i].push_back(tin);
            }
        }
    }

    /// Station first, then TID (next-steps §4.3): one airtime deficit per station over all its
    /// access categories (the scheduler's AC_BE list holds one entry per station, its TID 0
    /// TXQ standing for the station), and for the station picked, an aggregate of its
    /// highest-priority TID with frames whose AC's hardware queue has room. Rounds repeat while
    /// they build something and a hardware queue has room.
    fn schedule_station_first(&mut self, m: &mut Medium, cx: &mut Ctx) {
        loop {
            let mut built = false;
            let d = &mut self.drivers[0];
            d.sched.schedule_start(Ac::Be, &d.aql, cx.now);
            loop {
                let d = &mut self.drivers[0];
                if d.hw.iter().all(|q| q.len >= HW_QUEUE_AGGS) {
                    return;
                }
                let Driver { src, held, sched, aql, hw, .. } = d;
                let Some(rep) = sched.next_tin(Ac::Be, aql, |t| Ht::sendable_tin(src, held, hw, t.station()).is_some())
                else {
                    break;
                };
                let sta = rep.station();
                if let Some(tin) = Ht::sendable_tin(src, held, hw, sta) {
                    // A higher TID with frames whose AC is full: fairness first sends lower.
                    let top = (0..NUM_TIDS as u8)
                        .map(|t| TinId::new(sta, t))
                        .filter(|&t| Driver::has_frames(src, held, t))
                        .max_by_key(|t| (std::cmp::Reverse(t.ac().index()), t.tid()));
                    if top.is_some_and(|t| t.ac() != tin.ac()) {
                        self.next_stats.station_first_inversions += 1;
                    }
                    self.build(m, 0, tin, cx);
                    built = true;
                }
                let now = cx.now;
                let d = &mut self.drivers[0];
                let has = (0..NUM_TIDS as u8).any(|t| Driver::has_frames(&d.src, &d.held, TinId::new(sta, t)));
                d.sched.return_tin(rep, has, now, &d.aql);
            }
            if !built {
                return;
            }
        }
    }

    /// The station's highest-priority TID with frames whose AC's hardware queue has room (VO,
    /// VI, BE, BK; within an AC the higher TID).
    fn sendable_tin(
        src: &Source,
        held: &[VecDeque<Mpdu>],
        hw: &[HwQueue; crate::mac80211::NUM_ACS],
        sta: StationId,
    ) -> Option<TinId> {
        Ac::ALL.into_iter().filter(|ac| hw[ac.index()].len < HW_QUEUE_AGGS).find_map(|ac| {
            (0..NUM_TIDS as u8)
                .rev()
                .map(|t| TinId::new(sta, t))
                .find(|&t| t.ac() == ac && Driver::has_frames(src, held, t))
        })
    }

    /// The scheduler's entry for `tin`: the station's TID 0 TXQ in station-first order.
    #[inline]
    fn sched_tin(&self, tin: TinId) -> TinId {
        match self.next.order {
            ScheduleOrder::Priority => tin,
            ScheduleOrder::StationFirst => TinId::new(tin.station(), 0),
        }
    }

    /// The minimal hardware queue: wake the AP's scheduler the lead time before the expected
    /// end of each AC's aggregate on the air that has none queued behind it.
    #[cold]
    pub(super) fn arm_lead_wake(&mut self, cx: &mut Ctx) {
        let Some(lead) = self.next.hw_queue_lead else { return };
        let hw = &self.drivers[0].hw;
        if let Some(t) = hw.iter().filter(|q| q.len == 1 && q.due != NOT_DUE).map(|q| q.due.saturating_sub(lead)).min()
        {
            self.arm_wake(t, cx);
        }
    }

    /// Wake the AP's scheduler at `t` (a capped group back at zero balance, the lead time of
    /// the minimal hardware queue): the earliest armed wins, and `schedule` arms the next from
    /// the state it leaves.
    #[cold]
    fn arm_wake(&mut self, t: Nanos, cx: &mut Ctx) {
        let t = t.max(cx.now + Nanos(1));
        if self.wake_at.is_none_or(|w| w <= cx.now || t < w) {
            self.wake_at = Some(t);
            cx.schedule(t, crate::engine::Event::Cfp);
        }
    }

    /// The AP driver's timer fires: schedule again if it is the armed one.
    pub fn on_timer(&mut self, m: &mut Medium, cx: &mut Ctx) {
        if self.ul.is_some() {
            // Uplink OFDMA: the stations' deferred TB PPDUs (`ul_tb_fill`) and the scheduler's
            // request for the medium (ofdma_ul.rs).
            self.ul_tb_start(m, cx);
            self.ul_request(m, cx);
        }
        if self.wake_at == Some(cx.now) {
            self.wake_at = None;
            self.schedule(m, 0, cx);
        }
    }

    /// The next MPDU of `tin`: a held one first, else a new frame from the FIFO or FQ-MAC
    /// (a firmware builds only from what the host handed it: its held queues).
    fn take(&mut self, m: &Medium, node: u32, tin: TinId, cx: &mut Ctx) -> Option<Mpdu> {
        if let Some(held) = self.drivers[node as usize].held[tin.index()].pop_front() {
            return Some(held);
        }
        if node == 0 && self.fw.is_some() {
            return None;
        }
        self.take_new(m, node, tin, cx)
    }

    /// A new frame of `tin` from the FIFO or FQ-MAC, as an MPDU.
    #[inline(always)]
    fn take_new(&mut self, m: &Medium, node: u32, tin: TinId, cx: &mut Ctx) -> Option<Mpdu> {
        let now = cx.now;
        let ht = &mut *self;
        let d = &mut ht.drivers[node as usize];
        let pkt = match &mut d.src {
            Source::Fifo { q, .. } => q[tin.index()].pop_front(),
            Source::Fq(fq) => {
                cx.dropped.clear();
                let mut cx = cx.qctx();
                let p = fq.dequeue(tin, &mut cx, now);
                if p.is_some() {
                    d.frames += 1;
                }
                p
            }
        };
        if let (0, Some(p), Some(limit)) = (node, pkt, ht.next.admission_sojourn) {
            let ac = tin.ac();
            if matches!(ac, Ac::Vo | Ac::Vi) {
                // Soft admission control: a frame that waited longer than the limit in a VO or
                // VI TXQ demotes its flow (Cake's tins demote by sojourn, as the paper asks).
                let pk = cx.pkts.get(p);
                let f = pk.flow as usize;
                if now.saturating_sub(pk.enqueued) > limit && ht.demoted_until[f] <= now {
                    ht.demoted_until[f] = now + params::ADMISSION_HOLD;
                    ht.demotions[f].0 += 1;
                }
            }
        }
        let d = &mut ht.drivers[node as usize];
        let est_us = match pkt {
            Some(p) if d.aql_on || matches!(d.src, Source::Fq(_)) => {
                let station = if node == 0 { tin.station().0 as usize } else { node as usize - 1 };
                let bytes = ht::qos_data_mpdu_bytes(cx.pkts.get(p).ip_len);
                let est = tx_time_est(est_airtime_us(ht.tx[station], bytes, tin.ac()));
                d.aql.on_queued(tin.station(), tin.ac(), est);
                est
            }
            _ => 0,
        };
        if !cx.dropped.is_empty() {
            cx.account_dropped(m.dev(node), m.acct(node), None);
        }
        let ht_budget_sojourn = node == 0 && self.next.retry_budget.is_some_and(|b| b.sojourn);
        let d = &mut self.drivers[node as usize];
        pkt.map(|pkt| {
            let sn = d.next_sn[tin.index()];
            d.next_sn[tin.index()] = sn.wrapping_add(1);
            // The retry budget counts CoDel's sojourn (enqueue to dequeue) when asked to.
            let spent_us = match ht_budget_sojourn {
                true => (now.saturating_sub(cx.pkts.get(pkt).enqueued).0 / 1000).min(u32::MAX as u64) as u32,
                false => 0,
            };
            Mpdu { pkt, attempts: 0, delivered: false, est_us, sn, spent_us }
        })
    }

    /// Build one aggregate for `tin` into the hardware queue of `node`, as large as the limits
    /// allow (64 MPDUs, 65 535 B, the aggregate duration cap; with AQL, until the station's
    /// limit is reached). An MPDU that does not fit goes back to the head of the tin.
    fn build(&mut self, m: &mut Medium, node: u32, tin: TinId, cx: &mut Ctx) {
        let n = node as usize;
        let station = if node == 0 { tin.station().0 as u32 } else { node - 1 };
        let (tx, band, limits) = {
            let ht = &*self;
            let mut limits = ht.limits;
            // An AC with a TXOP limit (VI 3.008 ms, VO 1.504 ms) keeps its PPDUs within it.
            let txop = ht.edca[tin.ac().index()].txop_limit;
            if txop > Nanos::ZERO {
                limits.max_duration = limits.max_duration.min(txop);
            }
            // Dynamic aggregate sizing: shorter aggregates while many stations wait.
            if let (0, Some(dynamic)) = (node, ht.dynamic_aggregate) {
                if ht.backlogged_stations() > dynamic.stations {
                    limits.max_duration = limits.max_duration.min(dynamic.time);
                }
            }
            let tx = ht.tx[station as usize];
            (tx, ht.band, link_limits(limits, tx))
        };
        let now = cx.now;
        let link = super::medium::link_index(node, station, self.n_stations);
        let (tx, rate_idx) = match self.rc[link].as_mut() {
            Some(r) => {
                let i = r.ctl.rate_for_attempt(now, 1);
                let h = tx.ht();
                (TxVector::Ht(HtTxVector::new(r.table[i as usize], h.width, h.gi)), i)
            }
            None => (tx, 0),
        };
        // Minstrel-HT: the chain of the A-MPDU. ath9k (`ath_lookup_rate`) sizes the aggregate
        // for 4 ms at the slowest rate of the chain, and sends a sampling frame alone.
        let (chain, tx, tx_limit, limits) = match self.mrr[link].as_mut() {
            Some(r) => {
                let chain = r.get_rates();
                let at = |i: u8| minstrel_ht::vector_at(tx, i);
                let slowest = chain
                    .series()
                    .iter()
                    .map(|s| at(s.rate))
                    .min_by_key(|t| t.bits_per_second())
                    .expect("a chain has a rate");
                let limits = if chain.probe { AmpduLimits { max_mpdus: 1, ..limits } } else { limits };
                (chain, at(chain.s[0].rate), slowest, limits)
            }
            None => (minstrel_ht::RateChain::default(), tx, tx, limits),
        };
        let ac = tin.ac().index();
        let slot = {
            let d = &mut self.drivers[n];
            let q = &mut d.hw[ac];
            let slot = (q.head + q.len) % HW_QUEUE_AGGS;
            let agg = &mut q.aggs[slot];
            agg.mpdus.clear();
            agg.tin = tin;
            agg.station = station;
            agg.ok = driver::AckMap::NONE;
            agg.tx = tx;
            agg.rate_idx = rate_idx;
            agg.chain = chain;
            agg.tries = 0;
            agg.air_us = 0;
            agg.vo_head = 0;
            slot
        };
        let mut f = Fill { padded: 0, psdu: 0, count: 0 };
        // VO at the head of a lower-priority aggregate: the station's VO frames first while
        // they are at least `vo_piggyback` (they wait: VO's hardware queue or AQL is full).
        let vo = match (node, self.next.vo_piggyback) {
            (0, Some(min)) if tin.ac() != Ac::Vo => self.vo_to_piggyback(tin.station(), min),
            _ => None,
        };
        // One pass per source (the VO TXQ first when it rides), so `fill` is inlined once.
        for (from, is_vo) in [(vo, true), (Some(tin), false)] {
            let Some(from) = from else { continue };
            let full = self.fill(m, node, from, tin, slot, limits, tx_limit, &mut f, cx);
            if is_vo {
                let agg = &mut self.drivers[n].hw[ac].aggs[slot];
                agg.vo_head = f.count as u8;
                agg.vo_tid = from.tid();
                self.next_stats.vo_piggybacked += f.count as u64;
            }
            if full {
                break;
            }
        }
        let (mut psdu, mut count) = (f.psdu, f.count);
        // The tin may have nothing to send: mac80211's scheduler keeps a TXQ listed until it is
        // returned empty (`ieee80211_next_txq` does not look), and FQ-MAC's overflow drop (the
        // fattest flow of any tin) can empty a listed tin, as `ieee80211_tx_dequeue` then
        // returns NULL to the driver.
        if count == 0 {
            return;
        }
        if node == 0 && self.next.retry_budget.is_some() {
            psdu = self.trim_to_budget(m, ac, slot, tx, psdu, cx);
            count = self.drivers[n].hw[ac].aggs[slot].mpdus.len() as u32;
            if count == 0 {
                return;
            }
        }
        let d = &mut self.drivers[n];
        // A lone MPDU goes without the A-MPDU delimiter and is answered by a normal ACK.
        if count == 1 {
            psdu -= ht::MPDU_DELIMITER_BYTES;
        }
        let agg = &mut d.hw[ac].aggs[slot];
        agg.psdu = psdu;
        agg.txtime = tx.txtime(band, psdu);
        if node == 0 && self.policy_on {
            // A cap pays for the PPDU and its (Block)Ack exchange: the air the group holds.
            let resp = tx.response_time(band, &self.basic, count == 1, self.ba_bytes[station as usize]);
            let us = ((agg.txtime + band.sifs() + resp).0 / 1000) as u32;
            agg.built_us = us;
            d.sched.on_built(tin, us, now);
        }
        d.hw[ac].len += 1;
        if d.hw[ac].len == 1 {
            self.head_to_mac(m, node, ac, cx);
        }
    }

    /// Take MPDUs of `from` into the aggregate in slot `slot` of `agg`'s AC (the aggregate's
    /// tin, whose AQL budget bounds it) while they fit the limits. Returns true when the
    /// aggregate is full (an MPDU did not fit, the MPDU count, or AQL), false when `from` ran out.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fill(
        &mut self,
        m: &Medium,
        node: u32,
        from: TinId,
        agg: TinId,
        slot: usize,
        limits: AmpduLimits,
        tx_limit: TxVector,
        f: &mut Fill,
        cx: &mut Ctx,
    ) -> bool {
        let (n, ac, band) = (node as usize, agg.ac().index(), self.band);
        while f.count < limits.max_mpdus {
            let Some(mut mp) = self.take(m, node, from, cx) else { return false };
            let mpdu = match (node, self.amsdu.is_some()) {
                (0, true) => self.amsdu_grow(m, from, &mut mp, f, limits, tx_limit, cx),
                _ => ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len),
            };
            let with = f.padded + ht::MPDU_DELIMITER_BYTES + mpdu;
            let fits = f.count == 0
                || (with <= limits.max_bytes
                    && tx_limit.txtime(band, with) - band.signal_extension() <= limits.max_duration);
            let d = &mut self.drivers[n];
            if !fits {
                d.held[from.index()].push_front(mp);
                return true;
            }
            d.hw[ac].aggs[slot].mpdus.push(mp);
            f.padded += ht::ampdu_subframe_bytes(mpdu);
            f.psdu = with;
            f.count += 1;
            if d.aql_on && !d.aql.can_queue(agg.station(), agg.ac()) {
                return true;
            }
        }
        true
    }

    /// The time-based retry limit, as the AP builds an aggregate for `tin` in slot `slot` of
    /// AC `ac`'s hardware queue, sent at `tx`, of `psdu` bytes (delimiter included): a retried
    /// MPDU whose air so far plus this PPDU would pass its budget is given up instead of sent.
    /// The aggregate only shrinks, so the others still fit. Returns the new PSDU bytes.
    #[allow(clippy::too_many_arguments)]
    fn trim_to_budget(&mut self, m: &Medium, ac: usize, slot: usize, tx: TxVector, mut psdu: u32, cx: &mut Ctx) -> u32 {
        let Some(budget) = self.next.retry_budget else { return psdu };
        let band = self.band;
        loop {
            let mpdus = &self.drivers[0].hw[ac].aggs[slot].mpdus;
            let lone = if mpdus.len() == 1 { ht::MPDU_DELIMITER_BYTES } else { 0 };
            let air_us = (tx.txtime(band, psdu - lone).0 / 1000) as u32;
            let over =
                mpdus.iter().position(|mp| mp.attempts > 0 && mp.spent_us.saturating_add(air_us) > budget.budget_us);
            let Some(i) = over else { return psdu };
            let agg = &mut self.drivers[0].hw[ac].aggs[slot];
            let mp_tin = agg.tin_of(i);
            if i < agg.vo_head as usize {
                agg.vo_head -= 1;
            }
            let mp = agg.mpdus.remove(i);
            if !mp.delivered {
                self.next_stats.budget_drops += 1;
            }
            self.give_up(m, 0, mp_tin, mp, cx);
            let mpdus = &self.drivers[0].hw[ac].aggs[slot].mpdus;
            let Some((last, rest)) = mpdus.split_last() else { return 0 };
            let bytes = |mp: &Mpdu| self.mpdu_bytes(mp, cx);
            psdu = rest.iter().map(|mp| ht::ampdu_subframe_bytes(bytes(mp))).sum::<u32>()
                + ht::MPDU_DELIMITER_BYTES
                + bytes(last);
        }
    }

    /// `[ap] vo_piggyback`: the VO tin of `sta` whose frames go at the head of its next
    /// lower-priority aggregate, if its VO TXQ (FQ-MAC or FIFO, plus frames held for retry)
    /// holds at least `min` frames (the queue-occupancy condition: they are waiting).
    #[cold]
    fn vo_to_piggyback(&mut self, sta: StationId, min: u32) -> Option<TinId> {
        let d = &self.drivers[0];
        let (tin, queued) = [7u8, 6]
            .into_iter()
            .map(|t| TinId::new(sta, t))
            .map(|t| (t, Driver::src_len(&d.src, t) + d.held[t.index()].len() as u32))
            .find(|&(_, q)| q > 0)?;
        if queued < min {
            return None;
        }
        let s = &mut self.next_stats;
        s.vo_piggyback_min_queued = if s.vo_piggybacked == 0 { queued } else { s.vo_piggyback_min_queued.min(queued) };
        Some(tin)
    }

    /// Stations with frames at the AP (in its FIFOs or FQ-MAC, held for retry, or in the
    /// hardware queue).
    fn backlogged_stations(&self) -> u32 {
        let d = &self.drivers[0];
        let in_hw = |s: usize| {
            d.hw.iter().any(|q| (0..q.len).any(|k| q.aggs[(q.head + k) % HW_QUEUE_AGGS].station as usize == s))
        };
        (0..self.n_stations)
            .filter(|&s| {
                in_hw(s)
                    || (0..NUM_TIDS as u8)
                        .any(|t| Driver::has_frames(&d.src, &d.held, TinId::new(StationId(s as u16), t)))
            })
            .count() as u32
    }

    /// The head of the hardware queue becomes the frame the node contends with, with the EDCA
    /// parameters of its AC.
    pub fn load_head(&self, m: &mut Medium, node: u32, ac: usize) {
        let c = contender(node, ac) as usize;
        let agg = self.drivers[node as usize].head(ac);
        let (first, station) = (agg.mpdus[0].pkt, agg.station);
        m.dcf_mut().load_frame(c, first, station);
    }

    /// An aggregate entered an empty hardware queue: it contends from now.
    fn head_to_mac(&self, m: &mut Medium, node: u32, ac: usize, cx: &mut Ctx) {
        self.load_head(m, node, ac);
        m.request_access(cx, contender(node, ac) as usize);
    }
}
