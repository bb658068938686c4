//! Uplink OFDMA at an 802.11ax AP (`[ap] ofdma = "dl+ul"`, docs/model-ofdma.md): the AP's
//! multi-user scheduler solicits HE TB PPDUs with Basic Trigger frames, as ns-3 3.44's
//! `RrMultiUserScheduler` does with `EnableUlOfdma` (src/wifi/model/he/rr-multi-user-scheduler.cc,
//! `SelectTxFormat`, `TrySendingBasicTf`, `GetTxVectorForUlMu`, `UpdateCredits`) and its
//! frame exchange manager carries it out (src/wifi/model/he/he-frame-exchange-manager.cc):
//!
//! - The AP contends for the medium also without downlink frames: every `mu_access_interval`
//!   (ns-3's `AccessReqInterval`, restarted whenever the scheduler is granted access) it asks
//!   for it, if it is not already contending.
//! - When its access category wins, the scheduler alternates: after a DL MU PPDU, or with no
//!   downlink frame for an HE station, a Basic Trigger; otherwise a DL MU PPDU (ofdma.rs).
//! - The Basic Trigger solicits the stations in the order of their uplink credits whose last
//!   reported buffer status (the Queue Size of their QoS Data frames; 255, unknown, counts) is
//!   not zero, on equal RUs; its UL Length gives the HE TB PPDU the time the largest reported
//!   buffer needs on its RU (unknown: `UlPsduSize`, 500 B; 254, not limited: aPPDUMaxTime),
//!   rounded to whole symbols as clause 27's L-SIG length makes it (eq. 27-11).
//! - Trigger at the lowest basic rate (non-HT), SIFS, every solicited station's HE TB PPDU on
//!   its RU (an A-MPDU of what fits, or QoS Null frames when it has nothing), SIFS, the AP's
//!   Multi-STA BlockAck at the control response rate of the TB PPDUs' MCS (802.11ax-2021 9.3.1.8.7:
//!   an all-ack context of 2 octets per station whose MPDUs all arrived, else 4 octets and the
//!   bitmap; none for a station that answered with QoS Null frames, and no BlockAck at all when
//!   every answer was QoS Null: [`tb_ba_context`]).
//!
//! The stations' MAC is unchanged: their single-user aggregates are taken apart when they are
//! triggered (their MPDUs go back to the head of their TIDs), their backoff goes on, and what
//! the TB PPDU did not carry is built again afterwards. A station fills its TB PPDU when the
//! Trigger starts, or with `[ap] ul_tb_fill = "tb-start"` when its TB PPDU starts, SIFS after
//! the Trigger's end, as ns-3 does (`Ht::ul_tb_start`).
//!
//! With `[ap] ul_bsrp = true` (ns-3's `EnableBsrp`, `TrySendingBsrpTf`) the scheduler first polls
//! the stations with a BSRP Trigger (802.11ax-2021 9.3.1.22.5, 26.5.2): every station with an
//! uplink TID the AP knows answers SIFS later in an HE TB PPDU of QoS Null frames, one per such
//! TID, each carrying its Queue Size; nothing acknowledges them. The Basic Trigger that follows
//! is sized from those reports. With `[ap] mu_edca_timer` the AP advertises an MU EDCA Parameter
//! Set (9.4.2.251, 26.2.7): a station whose QoS Data in a TB PPDU the Multi-STA BlockAck
//! acknowledged contends for that access category with the MU EDCA AIFSN and CW bounds until the
//! timer ends, and with AIFSN 0 not at all (ns-3's `QosTxop::StartMuEdcaTimerNow`).
//!
//! Airtime: each station is charged, as received airtime at the AP's scheduler and in its own
//! counters, the TB PPDU's duration times its share of the allocated tones, the rule the
//! downlink uses. mac80211 computes no airtime for a frame received on an RU
//! (`ieee80211_calc_rx_airtime` in net/mac80211/airtime.c returns 0 with a warning for
//! `RATE_INFO_BW_HE_RU`); drivers of HE hardware (mt7915, mt7921) report per-station airtime
//! from hardware counters through `ieee80211_sta_register_airtime` instead.

use crate::ctx::Ctx;
use crate::mac::edca::MuEdcaParams;
use crate::mac80211::{Ac, StationId, TinId, NUM_TIDS};
use crate::packet::PacketId;
use crate::phy::dsss::Preamble;
use crate::phy::error_rate::ErrMode;
use crate::phy::he::{HeFormat, HeTxVector, RuSize};
use crate::phy::{ht, ofdm, TxRate, TxVector};
use crate::radio::Dir;
use crate::time::Nanos;
use crate::wifi::air::Outcome;
use crate::wifi::medium::{Medium, NO_STATION};

use super::driver::{contender, AckMap, Agg, Driver, MuPick, Source, HW_QUEUE_AGGS};
use super::ofdma::{credit, equal_rus, ru_mhz, TbFill, TimerTie, TriggerCapture};
use super::{link_limits, Ht};

/// ns-3's `UlPsduSize` default: the PSDU a station whose buffer status is unknown is given
/// room for.
pub const UL_PSDU_BYTES: u32 = 500;
/// aPPDUMaxTime: the longest HE TB PPDU (802.11ax-2021 Table 27-54).
pub const TB_PPDU_MAX: Nanos = Nanos::from_us(5484);
/// A buffer status the AP has not been told (the Queue Size subfield's "unspecified").
pub const BSR_UNKNOWN: u8 = 255;
/// The Queue Size for more than 64 768 octets (9.2.4.5.6).
pub const BSR_UNLIMITED: u8 = 254;
/// The frame the AP's access category holds while it contends only to send a Trigger (no
/// packet: nothing reads it).
pub const TRIGGER_PLACEHOLDER: PacketId = PacketId(u32::MAX - 2);

/// A Basic Trigger frame's length: MAC header 16 (frame control, duration, RA, TA), Common
/// Info 8, FCS 4, and per solicited station a User Info field of 5 octets and its Trigger
/// Dependent User Info of 1 (9.3.1.22).
pub const fn basic_trigger_bytes(users: u32) -> u32 {
    28 + 6 * users
}

/// A BSRP Trigger frame's length: a Basic one's without the Trigger Dependent User Info, which
/// the BSRP variant does not have (9.3.1.22.1): MAC header 16, Common Info 8, FCS 4, and 5
/// octets of User Info per solicited station (ns-3's `CtrlTriggerHeader::GetSerializedSize`).
pub const fn bsrp_trigger_bytes(users: u32) -> u32 {
    28 + 5 * users
}

/// A QoS Null frame: the QoS Data MAC header (26 octets, ToDS, no HT Control) and FCS 4.
pub const QOS_NULL_BYTES: u32 = 30;

/// The A-MPDU of `n` QoS Null frames (one per TID) a station answers a BSRP Trigger with: each
/// subframe a delimiter and the frame, padded to 4 octets but the last (ns-3's
/// `MultiUserScheduler::GetMaxSizeOfQosNullAmpdu`): 34 octets for one.
pub const fn qos_null_ampdu_bytes(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    (n - 1) * ht::ampdu_subframe_bytes(QOS_NULL_BYTES) + ht::MPDU_DELIMITER_BYTES + QOS_NULL_BYTES
}

/// A Multi-STA BlockAck's length: MAC header 16, BA Control 2, FCS 4, and per station an
/// all-ack context (AID TID Info, 2 octets) or a BlockAck context (AID TID Info 2, Starting
/// Sequence Control 2 and the bitmap) (9.3.1.8.7).
pub const fn multi_sta_ba_bytes(all_ack: u32, bitmaps: &[u32]) -> u32 {
    let mut b = 22 + 2 * all_ack;
    let mut i = 0;
    while i < bitmaps.len() {
        b += 4 + bitmaps[i];
        i += 1;
    }
    b
}

/// A station's context in the Multi-STA BlockAck that answers its HE TB PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BaContext {
    /// Every MPDU arrived: AID TID Info alone (2 octets).
    AllAck,
    /// Some MPDUs were lost: AID TID Info, Starting Sequence Control and the bitmap.
    Bitmap,
}

/// The context the AP gives a decoded TB PPDU, as ns-3 3.44's AP does
/// (`HeFrameExchangeManager::EndReceiveAmpdu`): all-ack when every MPDU arrived, a BlockAck
/// context otherwise, and none for QoS Null frames, which the station sends with No Ack
/// (`SendQosNullFramesInTbPpdu`: `WifiNoAck`; an A-MPDU with no Normal Ack TID earns no
/// context). ns-3's traces agree: a 16-station exchange with one QoS Null answer ends with a
/// 52-octet Multi-STA BlockAck, 22 + 15 x 2 (bench/ns3/ofdma_ul_trace.txt). None for a TB
/// PPDU the AP did not decode.
fn tb_ba_context(u: &UlUser) -> Option<BaContext> {
    let n = u.agg.mpdus.len();
    if !u.decoded || n == 0 {
        None
    } else if u.agg.ok.count() as usize == n {
        Some(BaContext::AllAck)
    } else {
        Some(BaContext::Bitmap)
    }
}

/// The duration at `ba_rate` of the longest Multi-STA BlockAck an exchange with `stations` can
/// need: a BlockAck context for each (its bitmap and Starting Sequence Control, the station's
/// BlockAck length in `ba_bytes` less the 24 octets of a BlockAck frame's own header, BA Control
/// and FCS), as a Trigger's Duration covers it. `scratch` is the caller's buffer.
fn longest_multi_sta_ba(
    band: ofdm::OfdmBand,
    ba_rate: crate::phy::error_rate::OfdmRate,
    ba_bytes: &[u32],
    stations: impl Iterator<Item = u32>,
    scratch: &mut Vec<u32>,
) -> Nanos {
    scratch.clear();
    scratch.extend(stations.map(|s| ba_bytes[s as usize] - 24));
    ofdm::txtime(band, ba_rate, multi_sta_ba_bytes(0, scratch))
}

/// The Queue Size a station reports for `bytes` buffered (ns-3's `QosTxop::GetQosQueueSize`:
/// units of 256 octets, rounded up, 254 above 64 768).
pub fn queue_size(bytes: u32) -> u8 {
    bytes.min(64_769).div_ceil(256) as u8
}

/// The HE TB PPDU duration that carries `psdu` bytes at `tx` on `band` (a station's PSDU when
/// the data field is sized for it).
fn tb_time(band: ofdm::OfdmBand, tx: HeTxVector, psdu: u32) -> Nanos {
    let b = if band.is_2_4ghz() { crate::phy::he::HeBand::Ghz24 } else { crate::phy::he::HeBand::Ghz5 };
    crate::phy::he::txtime(b, tx, psdu)
}

/// The UL Length a Trigger frame carries for an HE TB PPDU of at most `d`, and the duration it
/// gives (`HePhy::ConvertHeTbPpduDurationToLSigLength`, eq. 27-11 with m = 2): `d` is cut to
/// whole data symbols after the TB preamble of `tx`, then L_LENGTH = ceil((TXTIME - SE - 20) /
/// 4) x 3 - 3 - m.
pub fn ul_length(band: ofdm::OfdmBand, tx: HeTxVector, d: Nanos) -> (u32, Nanos) {
    let se = if band.is_2_4ghz() { 6_000 } else { 0 };
    let pre = HeTxVector { format: HeFormat::Tb, ..tx }.preamble(0).as_ns();
    let sym = tx.gi.symbol().as_ns();
    let n = (d.as_ns().saturating_sub(pre + se)) / sym;
    let valid = pre + n * sym + se;
    let length = (valid - 20_000 - se).div_ceil(4_000) * 3 - 3 - 2;
    (length as u32, Nanos(valid))
}

/// One solicited station of the uplink exchange on the air.
pub struct UlUser {
    pub agg: Agg,
    pub ru: RuSize,
    /// The AP decoded its TB PPDU (its Multi-STA BlockAck context is sent).
    pub decoded: bool,
    /// Its station decoded the Multi-STA BlockAck.
    pub acked: bool,
}

/// Counters of the uplink exchanges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UlStats {
    pub basic_triggers: u64,
    /// BSRP Triggers (`ul_bsrp`), the HE TB PPDUs of QoS Null frames that answered them, and
    /// the MU EDCA timers the stations started (`mu_edca_timer`).
    pub bsrp_triggers: u64,
    pub bsrp_answers: u64,
    pub mu_edca_starts: u64,
    /// HE TB PPDUs, those carrying only QoS Null frames, and the data MPDUs they carried.
    pub tb_ppdus: u64,
    pub qos_null_ppdus: u64,
    pub tb_mpdus: u64,
    pub multi_sta_bas: u64,
    /// `ul_trigger_capture = "ring"`: Triggers (Basic or BSRP) a station's PPDU overlapped that no
    /// station answered, and how many of them the next PPDU on the air came from one of those
    /// overlapping stations (ns-3 3.44's 4-station cell: 81-85 %).
    pub unanswered_overlapped: u64,
    pub next_by_collider: u64,
    /// Triggers (Basic, BSRP) that collided and reached no station, and those that collided
    /// but some solicited stations decoded and answered (`ul_trigger_capture = "ring"`).
    pub basic_reached_none: u64,
    pub basic_reached_part: u64,
    pub bsrp_reached_none: u64,
    pub bsrp_reached_part: u64,
    /// Of `bsrp_reached_part`, those whose answers a station's PPDU still on the air jammed at
    /// the AP ([`Ht::ul_capture`]).
    pub bsrp_jammed: u64,
    /// The first [`super::ofdma::RU_LOG_LEN`] Basic Triggers: start, and per solicited station
    /// (station, RU tones, MPDUs it sent).
    pub log: Vec<(Nanos, Vec<super::ofdma::MuLogUser>)>,
}

/// The uplink side of the AP's multi-user scheduler.
pub struct Ul {
    /// ns-3's `m_staListUl`: (station, credits in µs), HE stations in association order, then
    /// sorted by decreasing credits after every Basic Trigger.
    pub list: Vec<(u32, f64)>,
    /// Per station and TID: the last Queue Size it reported ([`BSR_UNKNOWN`] before any).
    pub bsr: Vec<[u8; NUM_TIDS]>,
    /// `ul_bsr_lifetime`: a report older than this reads as unknown (ns-3's
    /// `ApWifiMac::BsrLifetime`); None: reports never expire. With it, when each was stored.
    bsr_lifetime: Option<Nanos>,
    bsr_at: Vec<[Nanos; NUM_TIDS]>,
    /// `mu_access_interval`, and when the AP next asks for the medium.
    pub interval: Nanos,
    pub req_at: Nanos,
    /// The last multi-user transmission was a DL MU PPDU (the next one triggers).
    pub last_dl: bool,
    /// A Basic Trigger is on the air (its exchange's stations in `users`, none if it collides).
    pub tf_on_air: bool,
    /// The exchange on the air: its stations, and the Trigger, TB PPDU and BlockAck durations.
    pub users: Vec<UlUser>,
    spare: Vec<Agg>,
    tf: Nanos,
    tb: Nanos,
    /// The end of the NAV the Basic Trigger on the air sets at every station (its Duration
    /// field; ZERO when no Trigger reached the stations): see [`Ht::ul_outcome`].
    nav_end: Nanos,
    /// `ul_trigger_capture = "ring"` with `ul_trigger_nav`: the stations that decoded a Basic
    /// Trigger no station could answer and set their NAV from it, and that NAV's end (ZERO:
    /// none); see [`Ht::ul_capture`].
    nav_decoders: Vec<u32>,
    decoders_nav_end: Nanos,
    /// The stations whose PPDUs overlapped the last unanswered Basic Trigger, until the next
    /// access (for [`UlStats::next_by_collider`]).
    last_colliders: Vec<u32>,
    /// Scratch for [`Ht::ul_ring_eifs`]: the overlapping stations and their PPDUs' ends.
    ring_scratch: Vec<(u32, Nanos)>,
    /// Scratch buffers of the per-Trigger path, kept so that no Trigger or exchange allocates:
    /// a Trigger's candidate stations (also those that decode a captured one), their TB PPDU
    /// vectors, the stations that pay credits, the stations whose PPDUs overlapped a Trigger,
    /// the Multi-STA BlockAck's bitmaps and its longest estimate, and the listed stations
    /// (for [`Ht::ul_rebuild`]). Each is taken, cleared, filled and put back.
    pick_scratch: Vec<u32>,
    vector_scratch: Vec<HeTxVector>,
    served_scratch: Vec<(u32, RuSize)>,
    collider_scratch: Vec<u32>,
    bitmap_scratch: Vec<u32>,
    est_scratch: Vec<u32>,
    list_scratch: Vec<u32>,
    /// `ul_bsrp`: poll with BSRP Triggers (ns-3's `EnableBsrp`).
    bsrp: bool,
    /// `ul_trigger_nav`: the stations' NAV from a Basic Trigger, no backoff at the request.
    trigger_nav: bool,
    /// `ul_trigger_capture`, and whether the exchange on the air is one a station's PPDU
    /// overlapped (that PPDU failed, the exchange went on).
    capture: TriggerCapture,
    /// The Trigger on the air: the stations it solicits and their RU (for `Ht::ul_capture`,
    /// and for `--pcap` when it collided).
    tf_picks: Vec<u32>,
    tf_ru: RuSize,
    pub(super) captured: bool,
    /// `ul_tb_fill`; with `TbFill::TbStart`, the solicited stations and their TB PPDU vectors
    /// while their fill waits for the TB PPDUs' start (`fill_at`, ZERO when none), the access
    /// category they fill from (the Trigger's Preferred AC) and the Trigger's start.
    tb_fill: TbFill,
    fill: Vec<(u32, HeTxVector)>,
    fill_at: Nanos,
    fill_ac: usize,
    tf_at: Nanos,
    /// `ul_timer_tie`, and when the last exchange the AP's access category held ended.
    timer_tie: TimerTie,
    ended_at: Nanos,
    /// The Trigger on the air sets CS Required (its UL Length above 76, ns-3's
    /// `MultiUserScheduler::CheckTriggerFrame`).
    cs_required: bool,
    /// The last Trigger the scheduler built was a BSRP one (ns-3's `m_trigger` type).
    last_bsrp: bool,
    /// The exchange on the air is a BSRP one (QoS Null answers, no acknowledgement).
    bsrp_on_air: bool,
    /// A captured BSRP Trigger's QoS Null answers end then, and a station's PPDU still on the
    /// air overlaps their data field at the AP, which decodes none of them (ZERO otherwise):
    /// see [`Ht::ul_capture`].
    bsrp_jammed_end: Nanos,
    /// The MU EDCA Parameter Set the AP advertises, and per station and access category when
    /// its timer started (None: not running).
    mu_edca: Option<MuEdcaParams>,
    mu_edca_start: Vec<[Option<Nanos>; crate::mac80211::NUM_ACS]>,
    pub stats: UlStats,
}

impl Ul {
    pub fn new(cfg: &super::ofdma::OfdmaConfig, n_stations: usize, he_stations: &[u32]) -> Ul {
        let interval = cfg.access_interval;
        Ul {
            bsrp: cfg.bsrp,
            trigger_nav: cfg.trigger_nav,
            capture: cfg.trigger_capture,
            tf_picks: Vec::new(),
            tf_ru: RuSize::Tones26,
            captured: false,
            tb_fill: cfg.tb_fill,
            fill: Vec::new(),
            fill_at: Nanos::ZERO,
            fill_ac: Ac::Be.index(),
            tf_at: Nanos::ZERO,
            timer_tie: cfg.timer_tie,
            ended_at: Nanos::ZERO,
            cs_required: true,
            last_bsrp: false,
            bsrp_on_air: false,
            bsrp_jammed_end: Nanos::ZERO,
            mu_edca: cfg.mu_edca,
            mu_edca_start: vec![[None; crate::mac80211::NUM_ACS]; if cfg.mu_edca.is_some() { n_stations } else { 0 }],
            list: he_stations.iter().map(|&s| (s, 0.0)).collect(),
            bsr: vec![[BSR_UNKNOWN; NUM_TIDS]; n_stations],
            bsr_lifetime: cfg.bsr_lifetime,
            bsr_at: vec![[Nanos::ZERO; NUM_TIDS]; if cfg.bsr_lifetime.is_some() { n_stations } else { 0 }],
            interval,
            req_at: interval,
            last_dl: false,
            tf_on_air: false,
            nav_end: Nanos::ZERO,
            nav_decoders: Vec::new(),
            decoders_nav_end: Nanos::ZERO,
            last_colliders: Vec::new(),
            ring_scratch: Vec::new(),
            pick_scratch: Vec::new(),
            vector_scratch: Vec::new(),
            served_scratch: Vec::new(),
            collider_scratch: Vec::new(),
            bitmap_scratch: Vec::new(),
            est_scratch: Vec::new(),
            list_scratch: Vec::new(),
            users: Vec::new(),
            spare: Vec::new(),
            tf: Nanos::ZERO,
            tb: Nanos::ZERO,
            stats: UlStats::default(),
        }
    }

    /// A Trigger (BSRP if `bsrp`, else Basic) of `tf` soliciting `picks` on RU `ru` for TB
    /// PPDUs of `tb` goes on the air at `ta` as contender `c`. If another node transmits in the same slot it
    /// collides and reaches no one (the stations keep their frames as they are): it is put on
    /// the air at once and its end returned. None when it is alone: the caller adds its users.
    #[allow(clippy::too_many_arguments)]
    fn trigger_on_air(
        &mut self,
        m: &mut Medium,
        c: u32,
        ta: Nanos,
        tf: Nanos,
        tb: Nanos,
        rate: crate::phy::error_rate::OfdmRate,
        bsrp: bool,
        picks: &[u32],
        ru: RuSize,
        cx: &mut Ctx,
    ) -> Option<Nanos> {
        self.last_dl = false;
        self.last_bsrp = bsrp;
        self.tf = tf;
        self.tb = tb;
        self.tf_on_air = true;
        self.tf_picks.clear();
        self.tf_picks.extend_from_slice(picks);
        self.tf_ru = ru;
        if m.dcf().transmitters().len() <= 1 {
            return None;
        }
        Some(m.put_mu_frame(cx, c, ta, tf, TxRate::Ofdm(rate), &[]))
    }

    /// `ApWifiMac::GetMaxBufferStatus`: the largest Queue Size station `s` reported over its
    /// TIDs, [`BSR_UNKNOWN`] if none.
    /// With `ul_bsr_lifetime`, a report older than the lifetime at `now` reads as unknown
    /// (`ApWifiMac::GetBufferStatus`).
    fn max_bsr(&self, s: u32, now: Nanos) -> u8 {
        let fresh = |t: usize| self.bsr_lifetime.is_none_or(|l| self.bsr_at[s as usize][t] + l >= now);
        let known = self.bsr[s as usize].iter().enumerate().filter(|&(t, &q)| q != BSR_UNKNOWN && fresh(t));
        known.map(|(_, &q)| q).max().unwrap_or(BSR_UNKNOWN)
    }

    /// Whether a Basic Trigger would solicit anyone (with `ul_bsrp`, a BSRP one).
    fn can_trigger(&self, now: Nanos) -> bool {
        if self.bsrp {
            return self.list.iter().any(|e| self.uplink_tids(e.0) > 0);
        }
        self.list.iter().any(|e| self.max_bsr(e.0, now) > 0)
    }

    /// The TIDs of station `s` the AP has heard a QoS Data or QoS Null frame of (those with a
    /// BlockAck agreement in ns-3, `CanSolicitStaInBsrpTf`): how many QoS Null frames it
    /// answers a BSRP Trigger with.
    fn uplink_tids(&self, s: u32) -> u32 {
        self.bsr[s as usize].iter().filter(|&&q| q != BSR_UNKNOWN).count() as u32
    }

    /// The AP stores station `s`'s Queue Size `q` for TID `tid` at `now`.
    fn store_bsr(&mut self, s: u32, tid: u8, q: u8, now: Nanos) {
        self.bsr[s as usize][tid as usize] = q;
        if self.bsr_lifetime.is_some() {
            self.bsr_at[s as usize][tid as usize] = now;
        }
    }

    #[inline]
    pub fn on_air(&self) -> bool {
        self.tf_on_air
    }

    /// Station `s`'s answer to a BSRP Trigger: an HE TB PPDU of `tb` at `v` carrying the
    /// `answer`-byte A-MPDU of QoS Null frames (no MPDU of its queue).
    fn qos_null_answer(&mut self, s: u32, v: HeTxVector, answer: u32, tb: Nanos) -> Agg {
        let mut agg = self.spare.pop().unwrap_or_default();
        agg.mpdus.clear();
        agg.station = s;
        agg.ok = AckMap::NONE;
        agg.tx = TxVector::He(v);
        agg.tin = TinId::new(StationId(0), 0);
        agg.psdu = answer;
        agg.txtime = tb;
        agg
    }
}

impl Ht {
    /// The bytes station `s` holds for `tin` (its driver's FIFO, held MPDUs and hardware queue,
    /// frames on the air included, as ns-3's MAC queue counts them), up to 64 769.
    fn station_bytes(&self, s: u32, tin: TinId, cx: &Ctx) -> u32 {
        let d = &self.drivers[s as usize + 1];
        let mut b = 0u32;
        let mut add = |p: PacketId| {
            if b <= 64_768 && p.0 < u32::MAX - 2 {
                b += ht::qos_data_mpdu_bytes(cx.pkts.get(p).ip_len);
            }
        };
        for m in &d.held[tin.index()] {
            add(m.pkt);
        }
        if let Source::Fifo { q, .. } = &d.src {
            for &p in &q[tin.index()] {
                add(p);
            }
        }
        for q in &d.hw {
            for k in 0..q.len {
                let a = &q.aggs[(q.head + k) % HW_QUEUE_AGGS];
                if a.tin == tin {
                    for m in &a.mpdus {
                        add(m.pkt);
                    }
                }
            }
        }
        b
    }

    /// The AP received a QoS Data frame of `tin` from station `s` sent at `cx.now`: it stores
    /// the Queue Size the frame carried.
    pub(super) fn ul_report(&mut self, s: u32, tin: TinId, cx: &Ctx) {
        if self.ul.is_none() {
            return;
        }
        let q = queue_size(self.station_bytes(s, tin, cx));
        if let Some(ul) = self.ul.as_deref_mut() {
            ul.store_bsr(s, tin.tid(), q, cx.now);
        }
    }

    /// The first request for the medium (`AccessReqInterval` after the start), if uplink OFDMA
    /// is on.
    pub fn ul_first_request(&self) -> Option<Nanos> {
        self.ul.as_deref().map(|ul| ul.req_at)
    }

    /// `MultiUserScheduler::AccessReqTimeout`: the AP asks for the medium for its best-effort
    /// category unless that already contends or is on the air (and, unlike ns-3, only when a
    /// Trigger would solicit someone: an access with nothing to send is not modelled); the
    /// timer runs again.
    pub(super) fn ul_request(&mut self, m: &mut Medium, cx: &mut Ctx) {
        self.mu_edca_expire(m, cx);
        let Some(ul) = self.ul.as_deref_mut() else { return };
        if ul.req_at != cx.now {
            return;
        }
        ul.req_at = cx.now + ul.interval;
        cx.schedule(ul.req_at, crate::engine::Event::Cfp);
        if ul.timer_tie == TimerTie::TimerFirst && ul.ended_at == cx.now {
            // ns-3's timer, scheduled at the grant, runs before the exchange's end at the same
            // instant and finds the access category still granted: no request.
            return;
        }
        let can = ul.can_trigger(cx.now);
        let ac = Ac::Be.index();
        let c = contender(0, ac) as usize;
        if can && self.drivers[0].hw[ac].len == 0 && m.dcf().can_take_frame(c) {
            m.dcf_mut().load_frame(c, TRIGGER_PLACEHOLDER, 0);
            if ul.trigger_nav {
                // ns-3's `AccessReqTimeout` calls `RequestAccess`: no backoff for a counter at
                // 0 on a busy medium (that rule is for a frame's arrival).
                m.request_access_as_is(cx, c);
            } else {
                m.request_access(cx, c);
            }
        }
    }

    /// An exchange the AP's access category held (its own frame on the air, not a beacon) ends
    /// now (for `ul_timer_tie`).
    pub(super) fn ul_ap_exchange_ended(&mut self, now: Nanos) {
        if let Some(ul) = self.ul.as_deref_mut() {
            ul.ended_at = now;
        }
    }

    /// The scheduler was granted access at `ta`: `AccessReqInterval` runs from now.
    fn ul_restart_timer(&mut self, ta: Nanos, cx: &mut Ctx) {
        if let Some(ul) = self.ul.as_deref_mut() {
            ul.req_at = ta + ul.interval;
            cx.schedule(ul.req_at, crate::engine::Event::Cfp);
        }
    }

    /// The AP's access category `ac` won the medium at `ta` with uplink OFDMA on: a Basic
    /// Trigger if `SelectTxFormat` asks for one and someone can be solicited, else the
    /// downlink path.
    pub(super) fn mu_pick(&mut self, m: &mut Medium, ac: usize, ta: Nanos, cx: &mut Ctx) -> MuPick {
        // `mu_missed_ba = "in-flight-bar"`: a queued BlockAckReq goes first, and the scheduler
        // is not consulted (ns-3 3.44 `HeFrameExchangeManager::StartFrameExchange`).
        if self.mu.as_deref().is_some_and(|mu| mu.bar_pending()) {
            if let Some(end) = self.bar_access(m, ac, ta, cx) {
                return MuPick::On(end);
            }
        }
        if self.ul.is_none() {
            return match self.mu_access(m, ac, ta, cx) {
                Some(end) => MuPick::On(end),
                None => MuPick::Su,
            };
        }
        self.ul_restart_timer(ta, cx);
        let last_dl = self.ul.as_deref().is_some_and(|ul| ul.last_dl);
        let (bsrp, last_bsrp) = self.ul.as_deref().map_or((false, false), |ul| (ul.bsrp, ul.last_bsrp));
        // With BSRP a downlink frame waits also when it is still in FQ-MAC or held (ns-3's
        // `PeekNextMpdu` looks at the AC's whole queue): an access the scheduler requested
        // holds a placeholder, and the driver built no aggregate meanwhile.
        let has_dl = self.drivers[0].hw[ac].len > 0 || (bsrp && self.ap_has_frames(ac));
        if self.drivers[0].hw[ac].len > 0 {
            let head = self.drivers[0].head(ac).station;
            if !matches!(self.tx[head as usize], TxVector::He(_)) {
                return MuPick::Su;
            }
        }
        // `SelectTxFormat` with `EnableBsrp`: a BSRP Trigger after a DL MU PPDU or when no
        // downlink frame waits (every access starts a TXOP here: ns-3's `m_initialFrame`); a
        // Basic one after a BSRP Trigger; else a DL MU PPDU. Without it: a Basic Trigger after
        // a DL MU PPDU or without downlink frames.
        if bsrp && (last_dl || !has_dl) {
            if let Some(end) = self.bsrp_access(m, ac, ta, cx) {
                return MuPick::On(end);
            }
        } else if last_dl || !has_dl || (bsrp && last_bsrp) {
            if let Some(end) = self.ul_access(m, ac, ta, cx) {
                return MuPick::On(end);
            }
        }
        if !has_dl {
            return MuPick::Nothing;
        }
        match self.mu_access(m, ac, ta, cx) {
            Some(end) => {
                if let Some(ul) = self.ul.as_deref_mut() {
                    ul.last_dl = true;
                }
                MuPick::On(end)
            }
            None => MuPick::Su,
        }
    }

    /// The stations a Trigger solicits (`GetTxVectorForUlMu`): RUs for min(NStations, listed
    /// stations), candidates in credit order for which `wants` holds, then `FinalizeTxVector`
    /// sizes the RUs again for those found. Returns the RU, the stations and each one's TB PPDU
    /// vector (in `picks` and `vectors`, the caller's scratch buffers); None if no station
    /// qualifies or one has no vector on that RU.
    fn trigger_users(
        &self,
        wants: impl Fn(&Ul, u32) -> bool,
        picks: &mut Vec<u32>,
        vectors: &mut Vec<HeTxVector>,
    ) -> Option<RuSize> {
        let width = self.mu.as_deref().expect("OFDMA on").width;
        let n_stations = self.mu.as_deref().expect("OFDMA on").cfg.n_stations;
        let ul = self.ul.as_deref().expect("uplink OFDMA on");
        let (_, first_k) = equal_rus(width, n_stations.min(ul.list.len() as u32));
        picks.clear();
        picks.extend(ul.list.iter().map(|e| e.0).filter(|&s| wants(ul, s)).take(first_k as usize));
        if picks.is_empty() {
            return None;
        }
        let (ru, k) = equal_rus(width, picks.len() as u32);
        picks.truncate(k as usize);
        vectors.clear();
        vectors.extend(picks.iter().filter_map(|&s| tb_vector(self.tx[s as usize], ru)));
        (vectors.len() == picks.len()).then_some(ru)
    }

    /// Runs `f` with the uplink scheduler's scratch buffers for a Trigger's stations and their
    /// TB PPDU vectors (taken out of [`Ul`], so that `f` may borrow `self`), then puts them back.
    fn with_pick_scratch<R>(&mut self, f: impl FnOnce(&mut Self, &mut Vec<u32>, &mut Vec<HeTxVector>) -> R) -> R {
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let mut picks = std::mem::take(&mut ul.pick_scratch);
        let mut vectors = std::mem::take(&mut ul.vector_scratch);
        let r = f(self, &mut picks, &mut vectors);
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.pick_scratch = picks;
        ul.vector_scratch = vectors;
        r
    }

    /// `TrySendingBasicTf`: the Basic Trigger's stations, RUs and UL Length, each station's
    /// A-MPDU, the Trigger on the air. None if no station can be solicited.
    fn ul_access(&mut self, m: &mut Medium, ac: usize, ta: Nanos, cx: &mut Ctx) -> Option<Nanos> {
        self.with_pick_scratch(|ht, picks, vectors| ht.ul_access_with(m, ac, ta, picks, vectors, cx))
    }

    /// [`Self::ul_access`] with the scratch buffers for the stations and their vectors.
    fn ul_access_with(
        &mut self,
        m: &mut Medium,
        ac: usize,
        ta: Nanos,
        picks: &mut Vec<u32>,
        vectors: &mut Vec<HeTxVector>,
        cx: &mut Ctx,
    ) -> Option<Nanos> {
        let band = self.band;
        let ru = self.trigger_users(|ul, s| ul.max_bsr(s, ta) > 0, picks, vectors)?;
        let (picks, vectors) = (&*picks, &*vectors);
        let ul = self.ul.as_deref().expect("uplink OFDMA on");
        let max_buffer = picks
            .iter()
            .map(|&s| match ul.max_bsr(s, ta) {
                BSR_UNKNOWN => UL_PSDU_BYTES,
                BSR_UNLIMITED => u32::MAX,
                q => q as u32 * 256,
            })
            .max()
            .unwrap_or(0);
        // The TB PPDU: the time the largest reported buffer needs on the slowest RU, at most
        // aPPDUMaxTime (and what a TXOP limit leaves after the Trigger and the BlockAck).
        let mut max_d = TB_PPDU_MAX;
        let txop = self.edca[ac].txop_limit;
        let rate = self.beacon_rate;
        let tf = ofdm::txtime(band, rate, basic_trigger_bytes(picks.len() as u32));
        let ba_rate = ofdm::control_response_rate(&self.basic, vectors[0].non_ht_reference_rate());
        if txop > Nanos::ZERO {
            let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
            let ba = longest_multi_sta_ba(band, ba_rate, &self.ba_bytes, picks.iter().copied(), &mut ul.bitmap_scratch);
            max_d = max_d.min(txop.saturating_sub(tf + band.sifs() + band.sifs() + ba));
        }
        let need = vectors.iter().map(|&v| tb_time(band, v, max_buffer.min(1 << 24))).max().unwrap_or(Nanos::ZERO);
        let d = if need < max_d { need } else { max_d };
        let (length, tb) = ul_length(band, vectors[0], d);
        // Credits: every listed station gains the TB PPDU's duration over their number, the
        // solicited pay it times their share of the tones.
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.served_scratch.clear();
        ul.served_scratch.extend(picks.iter().map(|&s| (s, ru)));
        credit(&mut ul.list, &ul.served_scratch, tb);
        ul.cs_required = cs_required(length);
        ul.stats.basic_triggers += 1;
        for &s in picks {
            cx.counters.ofdma.stations[s as usize].ul_triggers += 1;
        }
        let c = contender(0, ac);
        if let Some(end) = ul.trigger_on_air(m, c, ta, tf, tb, rate, false, picks, ru, cx) {
            return Some(end);
        }
        if ul.tb_fill == TbFill::TbStart {
            // The stations fill their TB PPDUs when these start (`Ht::ul_tb_start`).
            ul.fill.clear();
            ul.fill.extend(picks.iter().copied().zip(vectors.iter().copied()));
            ul.fill_ac = ac;
            return Some(m.put_mu_frame(cx, c, ta, tf, TxRate::Ofdm(rate), &[]));
        }
        // Each station fills its TB PPDU from its own queue (its aggregates of this category
        // are taken apart first).
        let acc = Ac::ALL[ac];
        let mut users = std::mem::take(&mut ul.users);
        for (&s, &v) in picks.iter().zip(vectors) {
            let node = s + 1;
            self.unbuild_node(node, ac);
            let agg = self.ul_fill(m, s, acc, v, tb, cx);
            users.push(UlUser { agg, ru, decoded: false, acked: false });
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.users = users;
        Some(m.put_mu_frame(cx, c, ta, tf, TxRate::Ofdm(rate), &[]))
    }

    /// `ul_trigger_capture = "ring"`: the Trigger (Basic or BSRP) on the air at `ta` collided
    /// with stations' PPDUs (the AP's only frame on the air). The solicited stations that decode
    /// it anyway ([`ring_decodes`]) answer it, if it sets CS Required ([`cs_required`]) only
    /// when every overlapping PPDU has ended by the time their HE TB PPDUs are due (the
    /// Trigger's end plus SIFS): they fill their TB PPDUs (a BSRP Trigger's: QoS Null frames)
    /// and the exchange goes on as if alone, while the overlapping PPDUs fail (no BlockAck: the
    /// AP was transmitting). ns-3 3.44 answers both Trigger types the same way:
    /// `HeFrameExchangeManager::ReceiveMpdu` schedules `ReceiveBasicTrigger` or
    /// `SendQosNullFramesInTbPpdu` a SIFS after the Trigger, and each first checks
    /// `UlMuCsMediumIdle`, which passes when CS is not required. The AP decodes a BSRP
    /// Trigger's answers if the overlapping PPDUs have ended by the answers' data field (after
    /// their HE TB preamble); a PPDU still on the air then covers every RU, and the AP decodes
    /// none of them: it stores none of their Queue Sizes, the exchange fails (its CW doubles)
    /// and it defers EIFS from the answers' end (ns-3 3.44: the PSDUs fail in
    /// `PhyEntity::EndReceivePayload`, `HeFrameExchangeManager::TbPpduTimeout` finds every
    /// station missing and calls `TransmissionFailed`, `ChannelAccessManager::NotifyRxEndErrorNow`
    /// sets the EIFS; measured in ns-3's 4-station mixed cell, docs/model-ofdma.md, "The BSRP
    /// answers under a station's PPDU"). The busy period lasts to the later end. Returns
    /// whether some station answers; false leaves the collision as it was.
    pub(super) fn ul_capture(&mut self, m: &mut Medium, ta: Nanos, cx: &mut Ctx) -> bool {
        let Some(ul) = self.ul.as_deref_mut() else { return false };
        let mut colliders = std::mem::take(&mut ul.collider_scratch);
        let captured = self.with_pick_scratch(|ht, picks, _| ht.ul_capture_with(m, ta, &mut colliders, picks, cx));
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.collider_scratch = colliders;
        captured
    }

    /// [`Self::ul_capture`] with scratch buffers for the overlapping stations and for the
    /// solicited stations that decode the Trigger.
    fn ul_capture_with(
        &mut self,
        m: &mut Medium,
        ta: Nanos,
        colliders: &mut Vec<u32>,
        picks: &mut Vec<u32>,
        cx: &mut Ctx,
    ) -> bool {
        let sifs = self.band.sifs();
        let n = self.n_stations;
        let Some(ul) = self.ul.as_deref_mut() else { return false };
        if ul.capture == TriggerCapture::None || m.dcf().beacon_in_air() {
            return false;
        }
        let due = ta + ul.tf + sifs;
        colliders.clear();
        let mut alone = true;
        let mut overlap_end = Nanos::ZERO;
        for a in m.air() {
            let (node, _) = super::driver::node_ac(a.node);
            if node == 0 {
                alone &= a.end == ta + ul.tf;
            } else {
                colliders.push(node - 1);
                overlap_end = overlap_end.max(a.end);
            }
        }
        // Without CS Required (a short UL Length) a station answers whatever it senses.
        alone &= overlap_end <= due || !ul.cs_required;
        picks.clear();
        if alone {
            picks.extend(ul.tf_picks.iter().copied().filter(|&s| ring_decodes(n, s, colliders)));
        }
        let (colliders, picks) = (&*colliders, &*picks);
        if picks.is_empty() {
            ul.stats.unanswered_overlapped += 1;
            ul.last_colliders.clone_from(colliders);
            if ul.trigger_nav {
                // No station answers (a solicited one that decoded it finds the medium busy: CS
                // Required), but every station that decoded it sets its NAV from its Duration,
                // the TB PPDU and the longest Multi-STA BlockAck, as after an answered one (IEEE
                // 802.11-2020 10.3.2.4: a group-addressed frame; ns-3 3.44
                // `HeFrameExchangeManager::UpdateNav`, called from `ReceiveMpdu` for every
                // frame with a Duration before the Trigger is handled). Only the overlapping
                // stations, those that did not decode it and the AP contend until it ends.
                ul.nav_decoders.clear();
                ul.nav_decoders.extend((0..n as u32).filter(|&s| ring_decodes(n, s, colliders)));
                let Some(v) = ul.tf_picks.first().and_then(|&s| tb_vector(self.tx[s as usize], ul.tf_ru)) else {
                    return false;
                };
                let ba_rate = ofdm::control_response_rate(&self.basic, v.non_ht_reference_rate());
                let ba = longest_multi_sta_ba(
                    self.band,
                    ba_rate,
                    &self.ba_bytes,
                    ul.tf_picks.iter().copied(),
                    &mut ul.est_scratch,
                );
                ul.decoders_nav_end = due + ul.tb + sifs + ba;
            }
            return false;
        }
        let ru = ul.tf_ru;
        let tb = ul.tb;
        let ac = Ac::Be.index();
        let bsrp = ul.bsrp_on_air;
        // A BSRP Trigger's answer: the QoS Null A-MPDU its UL Length was sized for.
        let answer = if bsrp {
            qos_null_ampdu_bytes(ul.tf_picks.iter().map(|&s| ul.uplink_tids(s)).max().unwrap_or(1))
        } else {
            0
        };
        if bsrp {
            // The answers' data field starts after the HE TB preamble: a station's PPDU still
            // on the air then jams every RU at the AP.
            let data_at = tb_vector(self.tx[picks[0] as usize], ru)
                .map(|v| due + HeTxVector { format: HeFormat::Tb, ..v }.preamble(0))
                .unwrap_or(due);
            ul.bsrp_jammed_end = if overlap_end > data_at { due + tb } else { Nanos::ZERO };
            ul.stats.bsrp_jammed += u64::from(overlap_end > data_at);
        }
        let mut users = std::mem::take(&mut ul.users);
        // A BSRP Trigger's QoS Null answers are not deferred (`Ht::ul_defer`).
        let deferred = ul.tb_fill == TbFill::TbStart && !bsrp;
        ul.fill.clear();
        ul.fill_ac = ac;
        for &s in picks {
            let Some(v) = tb_vector(self.tx[s as usize], ru) else { continue };
            let agg = if bsrp {
                self.ul.as_deref_mut().expect("uplink OFDMA on").qos_null_answer(s, v, answer, tb)
            } else if deferred {
                self.ul.as_deref_mut().expect("uplink OFDMA on").fill.push((s, v));
                continue;
            } else {
                self.unbuild_node(s + 1, ac);
                self.ul_fill(m, s, Ac::Be, v, tb, cx)
            };
            users.push(UlUser { agg, ru, decoded: false, acked: false });
        }
        for &s in colliders {
            cx.counters.stations[s as usize].collisions += 1;
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.users = users;
        ul.captured = !ul.users.is_empty() || !ul.fill.is_empty();
        if ul.captured {
            *(if bsrp { &mut ul.stats.bsrp_reached_part } else { &mut ul.stats.basic_reached_part }) += 1;
        }
        ul.captured
    }

    /// `ul_tb_fill = "tb-start"`: the Basic Trigger that started at `ta` reached its stations
    /// (alone or captured), whose fill waits for their TB PPDUs' start SIFS after its end. The
    /// medium is busy until those end at least; [`Self::ul_tb_start`] runs then (the AP's timer
    /// event) and decides the rest. Returns false (nothing done) without a pending fill.
    pub(super) fn ul_defer(&mut self, m: &mut Medium, ta: Nanos, cx: &mut Ctx) -> bool {
        let sifs = self.band.sifs();
        let Some(ul) = self.ul.as_deref_mut() else { return false };
        if ul.fill.is_empty() || ul.bsrp_on_air {
            return false;
        }
        let t1 = ta + ul.tf + sifs;
        ul.tf_at = ta;
        ul.fill_at = t1;
        cx.schedule(t1, crate::engine::Event::Cfp);
        m.set_outcome(Outcome::Success);
        m.busy_deferred(cx, ta, t1 + ul.tb);
        true
    }

    /// The AP's timer event at the start of the TB PPDUs of a deferred Basic Trigger
    /// ([`Self::ul_defer`]): each solicited station takes apart its single-user aggregates and
    /// fills its TB PPDU from what it holds now (ns-3 3.44: `ReceiveBasicTrigger`, SIFS after
    /// the Trigger), then the exchange goes on as [`Self::ul_outcome`] decides and the busy
    /// period ends after the Multi-STA BlockAck.
    pub(super) fn ul_tb_start(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let Some(ul) = self.ul.as_deref_mut() else { return };
        if ul.fill_at != cx.now || ul.fill_at == Nanos::ZERO {
            return;
        }
        ul.fill_at = Nanos::ZERO;
        let (ta, ru, tb) = (ul.tf_at, ul.tf_ru, ul.tb);
        let fill = std::mem::take(&mut ul.fill);
        let mut users = std::mem::take(&mut ul.users);
        let ac = ul.fill_ac;
        for &(s, v) in &fill {
            self.unbuild_node(s + 1, ac);
            let agg = self.ul_fill(m, s, Ac::ALL[ac], v, tb, cx);
            users.push(UlUser { agg, ru, decoded: false, acked: false });
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.users = users;
        ul.fill = fill;
        ul.fill.clear();
        let (outcome, end) = self.ul_outcome(m, ta, cx);
        if cx.tap.is_some() {
            self.tap_ul(m, cx, ta, false);
        }
        m.set_outcome(outcome);
        m.busy_to(cx, end);
        cx.schedule(end, crate::engine::Event::ExchangeEnd);
    }

    /// `ul_trigger_capture = "ring"`: the first access after an unanswered Basic Trigger that
    /// stations' PPDUs overlapped counts whether one of those stations transmits in it
    /// ([`UlStats::next_by_collider`]).
    pub(super) fn ul_note_access(&mut self, m: &Medium) {
        let Some(ul) = self.ul.as_deref_mut() else { return };
        if ul.last_colliders.is_empty() {
            return;
        }
        let colliders = &ul.last_colliders;
        if m.dcf().transmitters().iter().any(|&c| {
            let (node, _) = super::driver::node_ac(c);
            node != 0 && colliders.contains(&(node - 1))
        }) {
            ul.stats.next_by_collider += 1;
        }
        ul.last_colliders.clear();
    }

    /// `ul_trigger_capture = "ring"`: a busy period in which stations' PPDUs overlapped (one
    /// another's, or the AP's Basic Trigger) ended in a collision at `te`. A station that did
    /// not transmit and that detects the preamble of one of those PPDUs ([`ring_detects`]: 4 dB
    /// above the others on the ring) cannot decode its payload (MCS 7 under that interference;
    /// ns-3 3.44 `PhyEntity` ends the reception with `SwitchFromRxEndError`), so it defers EIFS
    /// from that PPDU's end, SIFS plus a 6 Mb/s Ack (44 us) more than AIFS (IEEE 802.11-2020
    /// 10.3.2.3.7; ns-3 `ChannelAccessManager::GetAccessGrantStart`, `GetEifsNoDifs`). The AP
    /// is equidistant from all stations, detects no preamble under two of them and defers AIFS
    /// as [`crate::wifi::ifs::CollisionIfs::Aifs`] has every node do; so do the stations that
    /// detect none, and those that decoded the AP's Trigger (its NAV, above). Under a DL MU
    /// PPDU or a beacon nothing changes.
    pub(super) fn ul_ring_eifs(&mut self, m: &mut Medium, te: Nanos) {
        let n = self.n_stations;
        let extra = m.ifs().eifs_extra(TxRate::Ofdm(crate::phy::error_rate::OfdmRate::R6));
        let Some(ul) = self.ul.as_deref_mut() else { return };
        if ul.capture != TriggerCapture::Ring || m.outcome() != Outcome::Collision || m.dcf().beacon_in_air() {
            return;
        }
        let trigger = ul.tf_on_air && !ul.last_bsrp;
        let mut colliders = std::mem::take(&mut ul.ring_scratch);
        colliders.clear();
        let mut ap = false;
        for a in m.air() {
            let (node, _) = super::driver::node_ac(a.node);
            if node == 0 {
                ap = true;
            } else {
                colliders.push((node - 1, a.end));
            }
        }
        if !colliders.is_empty() && (!ap || trigger) {
            for k in 0..n as u32 {
                if colliders.iter().any(|c| c.0 == k) || (ap && ring_decodes_of(n, k, &colliders)) {
                    continue;
                }
                if let Some(end) = ring_detects(n, k, &colliders, ap) {
                    for a in 0..crate::mac80211::NUM_ACS {
                        m.dcf_mut().defer_after(contender(k + 1, a) as usize, (end + extra).max(te));
                    }
                }
            }
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.ring_scratch = colliders;
    }

    /// Station `s`'s HE TB PPDU of duration `tb` at `v`: MPDUs of its TIDs of `acc` (highest
    /// first) while they fit the data field, the BlockAck window and the A-MPDU length; none
    /// (QoS Null frames) if it has nothing.
    fn ul_fill(&mut self, m: &Medium, s: u32, acc: Ac, v: HeTxVector, tb: Nanos, cx: &mut Ctx) -> Agg {
        let node = s + 1;
        let band = self.band;
        let limits = link_limits(self.limits, TxVector::He(v));
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let mut agg = ul.spare.pop().unwrap_or_default();
        agg.mpdus.clear();
        agg.station = s;
        agg.ok = AckMap::NONE;
        agg.tx = TxVector::He(v);
        agg.rate_idx = 0;
        agg.tries = 0;
        agg.air_us = 0;
        agg.built_us = 0;
        agg.vo_head = 0;
        agg.txtime = tb;
        let d = &self.drivers[node as usize];
        let tid = (0..NUM_TIDS as u8)
            .rev()
            .map(|t| TinId::new(StationId(0), t))
            .find(|&t| t.ac() == acc && Driver::has_frames(&d.src, &d.held, t));
        agg.tin = tid.unwrap_or(TinId::new(StationId(0), 0));
        let report_tin = agg.tin;
        let bytes_before = self.station_bytes(s, report_tin, cx);
        let (mut padded, mut psdu) = (0u32, 0u32);
        if let Some(tin) = tid {
            while (agg.mpdus.len() as u32) < limits.max_mpdus {
                let Some(mp) = self.take(m, node, tin, cx) else { break };
                let mpdu = ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len);
                let with = padded + ht::MPDU_DELIMITER_BYTES + mpdu;
                if with > limits.max_bytes || tb_time(band, v, with) > tb {
                    self.drivers[node as usize].held[tin.index()].push_front(mp);
                    break;
                }
                agg.mpdus.push(mp);
                padded += ht::ampdu_subframe_bytes(mpdu);
                psdu = with;
            }
        }
        agg.psdu = psdu;
        // The Queue Size its frames (or QoS Null frames) carry: what it held when sending.
        let q = queue_size(bytes_before);
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.store_bsr(s, report_tin.tid(), q, cx.now);
        agg
    }

    /// The uplink exchange after a Trigger that reached the stations: the TB PPDUs SIFS later
    /// (their MPDUs' fates drawn per station), the Multi-STA BlockAck SIFS after them. Returns
    /// the outcome and the end of the exchange.
    pub(super) fn ul_outcome(&mut self, m: &mut Medium, ta: Nanos, cx: &mut Ctx) -> (Outcome, Nanos) {
        if self.ul.as_deref().is_some_and(|ul| ul.bsrp_on_air) {
            return self.bsrp_outcome(m, ta, cx);
        }
        let (band, sifs) = (self.band, self.band.sifs());
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let mut users = std::mem::take(&mut ul.users);
        let mut bitmaps = std::mem::take(&mut ul.bitmap_scratch);
        bitmaps.clear();
        let (tf, tb) = (ul.tf, ul.tb);
        let t1 = ta + tf + sifs;
        let total_mhz: u32 = users.iter().map(|u| ru_mhz(u.ru)).sum();
        let (mut all_ack, mut any_decoded) = (0u32, false);
        let ba_rate = users
            .first()
            .map(|u| ofdm::control_response_rate(&self.basic, u.agg.tx.non_ht_reference_rate()))
            .unwrap_or(self.beacon_rate);
        for u in users.iter_mut() {
            let s = u.agg.station;
            let share = Nanos(tb.0 * ru_mhz(u.ru) as u64 / total_mhz as u64);
            // Each station's TB PPDU: its airtime is its share of the tones.
            m.put_control(cx, s + 1, s, 1, t1, share);
            u.decoded = self.ul_draw(m, u, t1, cx);
            if !u.decoded {
                continue;
            }
            any_decoded = true;
            match tb_ba_context(u) {
                Some(BaContext::AllAck) => all_ack += 1,
                Some(BaContext::Bitmap) => bitmaps.push(self.ba_bytes[s as usize] - 24),
                None => {}
            }
        }
        let data_end = t1 + tb;
        // The Trigger's Duration covers the TB PPDU and a Multi-STA BlockAck with a BlockAck
        // context (a bitmap) for every solicited station, the longest it can be (ns-3 3.44
        // `WifiDefaultAckManager::GetAckInfoIfBasicTf`); every station that decodes the
        // Trigger (a group address, not its own) sets its NAV to it (IEEE 802.11-2020
        // 10.3.2.4) and counts no backoff before it ends, even when the BlockAck sent is
        // shorter (all-ack contexts).
        let nav_end = if self.ul.as_deref().is_some_and(|ul| ul.trigger_nav) {
            // (A captured Trigger's Duration was set for every station it solicited.)
            let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
            let ba = if ul.captured {
                longest_multi_sta_ba(band, ba_rate, &self.ba_bytes, ul.tf_picks.iter().copied(), &mut ul.est_scratch)
            } else {
                let stations = users.iter().map(|u| u.agg.station);
                longest_multi_sta_ba(band, ba_rate, &self.ba_bytes, stations, &mut ul.est_scratch)
            };
            data_end + sifs + ba
        } else {
            Nanos::ZERO
        };
        let any = all_ack > 0 || !bitmaps.is_empty();
        let mut end = data_end;
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.stats.tb_ppdus += users.len() as u64;
        ul.stats.qos_null_ppdus += users.iter().filter(|u| u.agg.mpdus.is_empty()).count() as u64;
        ul.stats.tb_mpdus += users.iter().map(|u| u.agg.mpdus.len() as u64).sum::<u64>();
        for u in &users {
            let oc = &mut cx.counters.ofdma.stations[u.agg.station as usize];
            oc.ul_tb_ppdus += 1;
            oc.ul_qos_null += u.agg.mpdus.is_empty() as u64;
            oc.ul_lost += !u.decoded as u64;
            oc.ul_mpdus += u.agg.mpdus.len() as u64;
            oc.ul_tones += u.ru.tones() as u64;
        }
        if ul.stats.log.len() < super::ofdma::RU_LOG_LEN {
            let entry = users.iter().map(|u| (u.agg.station, u.ru.tones(), u.agg.mpdus.len() as u32)).collect();
            ul.stats.log.push((ta, entry));
        }
        if any {
            ul.stats.multi_sta_bas += 1;
            let ba_bytes = multi_sta_ba_bytes(all_ack, &bitmaps);
            let ba = ofdm::txtime(band, ba_rate, ba_bytes);
            end = m.put_control(cx, 0, NO_STATION, 0, data_end + sifs, ba);
            for u in users.iter_mut().filter(|u| u.decoded && !u.agg.mpdus.is_empty()) {
                u.acked = self.ul_ba_decoded(m, u.agg.station, data_end + sifs, ba_rate, ba_bytes);
            }
            cx.schedule(data_end, crate::engine::Event::TxEnd);
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.users = users;
        ul.bitmap_scratch = bitmaps;
        ul.nav_end = nav_end;
        // Answers of QoS Null frames alone end the exchange without a BlockAck, successfully
        // (ns-3: `ResetCw`, `TransmissionSucceeded`, "all of the stations that replied with a
        // TB PPDU sent QoS Null frames").
        (if any_decoded { Outcome::Success } else { Outcome::DataLost }, end)
    }

    /// Which MPDUs of station `u`'s TB PPDU the AP decodes (its SNR on the RU as the station's
    /// uplink SNR); a perfect channel draws nothing.
    fn ul_draw(&mut self, m: &mut Medium, u: &mut UlUser, start: Nanos, cx: &Ctx) -> bool {
        let s = u.agg.station as usize;
        let n = u.agg.mpdus.len();
        let r = m.radio_mut();
        if !r.has_channel(s) {
            u.agg.ok = AckMap::first(n);
            return true;
        }
        let mode = crate::phy::vht::error_mode(u.agg.tx.mcs_index());
        let snr = r.snr_cdb(s, start, Dir::Up).expect("a channel")
            - super::exchange::STREAM_SPLIT_CDB[u.agg.tx.nss() as usize];
        u.agg.ok = AckMap::NONE;
        for (i, mp) in u.agg.mpdus.iter().enumerate() {
            let bytes = ht::qos_data_mpdu_bytes(cx.pkts.get(mp.pkt).ip_len);
            if r.decodes(s + 1, mode, Preamble::Long, snr, bytes) {
                u.agg.ok.set(i);
            }
        }
        r.queue_report(s as u32, snr);
        n == 0 || !u.agg.ok.is_empty()
    }

    /// Whether station `s` decodes the Multi-STA BlockAck sent from `start`.
    fn ul_ba_decoded(
        &mut self,
        m: &mut Medium,
        s: u32,
        start: Nanos,
        rate: crate::phy::error_rate::OfdmRate,
        bytes: u32,
    ) -> bool {
        let r = m.radio_mut();
        if !r.has_channel(s as usize) {
            return true;
        }
        let snr = r.snr_cdb(s as usize, start, Dir::Down).expect("a channel");
        r.decodes(0, ErrMode::nist(rate), Preamble::Long, snr, bytes)
    }

    /// End of the TB PPDUs: the AP passes up what it decoded (each station's MPDUs through
    /// its reordering buffer), as `on_tx_end` does for one PPDU.
    pub(super) fn ul_tx_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let mut users = std::mem::take(&mut ul.users);
        for u in users.iter_mut() {
            let node = u.agg.station + 1;
            self.deliver_decoded(m, node, &mut u.agg, u.acked, cx);
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.users = users;
    }

    /// TX status of the uplink exchange at the end of the busy period: each station's
    /// acknowledged MPDUs leave it, the others wait at the head of their TID (or are dropped at
    /// the retry limit); the AP's scheduler is charged each station's share as received
    /// airtime; every station's driver builds again what is left.
    pub(super) fn ul_complete(&mut self, m: &mut Medium, ac: usize, collided: bool, cx: &mut Ctx) {
        let now = cx.now;
        let limit = self.mpdu_retry_limit;
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let tb = ul.tb;
        let mut users = std::mem::take(&mut ul.users);
        let total_mhz: u32 = users.iter().map(|u| ru_mhz(u.ru)).sum::<u32>().max(1);
        let mut any_acked = false;
        for u in users.iter_mut() {
            let (s, tin) = (u.agg.station, u.agg.tin);
            let node = s + 1;
            let acked = u.acked && !collided;
            any_acked |= acked || (u.decoded && !collided);
            if u.decoded && !collided && !u.agg.mpdus.is_empty() {
                let share_us = (tb.0 * ru_mhz(u.ru) as u64 / total_mhz as u64 / 1000) as u32;
                let ap_tin = self.sched_tin(TinId::new(StationId(s as u16), tin.tid()));
                self.drivers[0].sched.report_airtime(ap_tin, 0, share_us, now);
            }
            if acked {
                cx.counters.stations[s as usize].mcs_acked[1][u.agg.tx.mcs_index() as usize] += 1;
                if !u.agg.ok.is_empty() {
                    // The station's QoS Data were acknowledged: its MU EDCA timer starts.
                    self.mu_edca_begin(m, s, tin.ac().index(), cx);
                }
            }
            for i in (0..u.agg.mpdus.len()).rev() {
                let mut mp = u.agg.mpdus[i];
                if collided {
                    // The Trigger collided: the station never sent its TB PPDU.
                    self.drivers[node as usize].held[tin.index()].push_front(mp);
                    continue;
                }
                mp.attempts += 1;
                let ok = acked && u.agg.ok.has(i);
                if ok {
                    self.drivers[node as usize].frames -= 1;
                    cx.counters.stations[s as usize].acked_mpdus += 1;
                    if mp.pkt.0 != u32::MAX {
                        cx.left_first_hop(m.dev(node), mp.pkt);
                        cx.pkts.free(mp.pkt);
                    }
                } else if mp.attempts as u32 >= limit {
                    self.give_up(m, node, tin, mp, cx);
                } else {
                    cx.counters.stations[s as usize].retries += 1;
                    self.drivers[node as usize].held[tin.index()].push_front(mp);
                }
            }
            u.agg.mpdus.clear();
            u.acked = false;
            u.decoded = false;
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.spare.extend(users.drain(..).map(|u| u.agg));
        ul.users = users;
        ul.tf_on_air = false;
        let bsrp = std::mem::take(&mut ul.bsrp_on_air);
        if collided {
            *(if bsrp { &mut ul.stats.bsrp_reached_none } else { &mut ul.stats.basic_reached_none }) += 1;
        }
        let nav_end = std::mem::take(&mut ul.nav_end);
        if nav_end > now {
            // The stations' NAV from the Trigger outlasts the exchange (a shorter BlockAck).
            m.dcf_mut().set_nav_from(contender(1, 0) as usize, nav_end);
        }
        let decoders_nav_end = std::mem::take(&mut ul.decoders_nav_end);
        if collided && decoders_nav_end > now {
            // Their NAV outlasts the busy periods that end inside it (`Dcf::set_nav_of`): in ns-3
            // 3.44's 18-station half-load cell none of the stations that decoded an unanswered
            // Basic Trigger sent before it ended (docs/model-ofdma.md, "The NAV that outlasts a
            // busy period").
            for &s in &ul.nav_decoders {
                for a in 0..crate::mac80211::NUM_ACS {
                    m.dcf_mut().set_nav_of(contender(s + 1, a) as usize, decoders_nav_end);
                }
            }
        }
        let jammed_end = std::mem::take(&mut self.ul.as_deref_mut().expect("uplink OFDMA on").bsrp_jammed_end);
        m.dcf_mut().on_ppdu_end(contender(0, ac) as usize, any_acked);
        if jammed_end > Nanos::ZERO {
            // The AP's reception of the jammed BSRP answers ended in error: it defers EIFS from
            // their end, SIFS plus a 6 Mb/s Ack more than AIFS, and AIFS from the busy period's
            // end, whichever is later (IEEE 802.11-2020 10.3.2.3.7; ns-3 3.44
            // `ChannelAccessManager::NotifyRxEndErrorNow`, `GetAccessGrantStart`). (The failed
            // exchange's rule for a lone frame, its sender's AIFS after its ACKTimeout, would let
            // it count its backoff under the overlapping PPDU.)
            let extra = m.ifs().eifs_extra(TxRate::Ofdm(crate::phy::error_rate::OfdmRate::R6));
            m.dcf_mut().set_ifs_after(contender(0, ac) as usize, now.max(jammed_end + extra));
        }
        if self.drivers[0].hw[ac].len > 0 {
            // A downlink aggregate waited while the AP triggered: it contends next.
            self.load_head(m, 0, ac);
        }
        if !bsrp {
            // (A BSRP Trigger took no station's frames.)
            self.ul_rebuild(m, ac, cx);
        }
    }

    /// After an uplink exchange: every HE station whose hardware queue of `ac` is empty builds
    /// again from what it holds, and one with nothing stops contending for `ac`.
    fn ul_rebuild(&mut self, m: &mut Medium, ac: usize, cx: &mut Ctx) {
        let Some(ul) = self.ul.as_deref_mut() else { return };
        let mut list = std::mem::take(&mut ul.list_scratch);
        list.clear();
        list.extend(ul.list.iter().map(|e| e.0));
        for &s in &list {
            let node = s + 1;
            if self.drivers[node as usize].hw[ac].len > 0 {
                continue;
            }
            let c = contender(node, ac) as usize;
            if m.dcf().frame(c).is_some() && !m.dcf().in_exchange(c) {
                m.dcf_mut().unload_frame(c);
            }
            let acc = Ac::ALL[ac];
            let d = &mut self.drivers[node as usize];
            for t in 0..NUM_TIDS as u8 {
                let tin = TinId::new(StationId(0), t);
                if tin.ac() == acc && Driver::has_frames(&d.src, &d.held, tin) {
                    d.sched.wake(tin, cx.now, &d.aql);
                }
            }
            self.schedule(m, node, cx);
            // The station's driver refills from its qdisc, as after its own exchange.
            cx.out.push(crate::ctx::Req::Wake { dev: m.dev(node) });
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.list_scratch = list;
    }

    /// Take apart the aggregates queued for `ac` at WiFi node `node`: their MPDUs go back to
    /// the head of their TIDs in order, as if never built (they were not on the air).
    pub(super) fn unbuild_node(&mut self, node: u32, ac: usize) {
        let d = &mut self.drivers[node as usize];
        let q = &mut d.hw[ac];
        for k in (0..q.len).rev() {
            let slot = (q.head + k) % HW_QUEUE_AGGS;
            let agg = &mut q.aggs[slot];
            for i in (0..agg.mpdus.len()).rev() {
                let t = agg.tin_of(i);
                d.held[t.index()].push_front(agg.mpdus[i]);
            }
            agg.mpdus.clear();
        }
        q.len = 0;
        q.due = super::driver::NOT_DUE;
    }

    /// The uplink exchange's Multi-STA BlockAck rate and the AP's contenders (the medium's view
    /// of its last frame, for the interframe spaces).
    pub(super) fn ul_lone_frame(&self) -> (TxRate, std::ops::Range<usize>) {
        let ul = self.ul.as_deref().expect("uplink OFDMA on");
        let rate = ul
            .users
            .first()
            .map(|u| ofdm::control_response_rate(&self.basic, u.agg.tx.non_ht_reference_rate()))
            .unwrap_or(self.beacon_rate);
        let r0 = contender(0, 0) as usize;
        (TxRate::Ofdm(rate), r0..r0 + crate::mac80211::NUM_ACS)
    }

    /// Whether an uplink exchange is on the air.
    #[inline]
    pub(super) fn ul_on_air(&self) -> bool {
        self.ul.as_deref().is_some_and(|ul| ul.on_air())
    }

    /// Hand a Basic Trigger exchange to the capture (`--pcap`), after [`Self::ul_outcome`]: the beacon, the Trigger naming its stations, SIFS later each
    /// station's HE TB PPDU on its RU (its MPDUs, or a QoS Null frame with its Queue Size; a bad
    /// FCS unless the AP decoded it), and the Multi-STA BlockAck SIFS after them when the AP
    /// decoded any. Reads what the exchange decided, drawing nothing.
    /// With `collided`, the Trigger collided with another node's frame (captured by
    /// `tap_exchange`): the Trigger alone, with a bad FCS.
    #[cold]
    pub(super) fn tap_ul(&self, m: &mut Medium, cx: &mut Ctx, ta: Nanos, collided: bool) {
        use crate::pcap::{Kind, Phy};
        let Some(tap) = cx.tap.as_deref_mut() else { return };
        let Some(ul) = self.ul.as_deref() else { return };
        let sifs = self.band.sifs();
        m.tap_beacon(tap, ta);
        let stations: Vec<u32> = if collided {
            ul.tf_picks.iter().map(|&s| s + 1).collect()
        } else {
            ul.users.iter().map(|u| u.agg.station + 1).collect()
        };
        let bsrp = ul.bsrp_on_air;
        let n = stations.len() as u32;
        let len = if bsrp { bsrp_trigger_bytes(n) } else { basic_trigger_bytes(n) };
        let rate = TxRate::Ofdm(self.beacon_rate);
        let phy = Phy { start: ta, rate, len, fcs_ok: !collided, snr_cdb: None, ampdu: None };
        tap.air_frame(Kind::Trigger { users: &stations, bsrp }, phy);
        if collided {
            return;
        }
        let t1 = ta + ul.tf + sifs;
        let (mut all_ack, mut bitmaps, mut contexts) = (0u32, Vec::new(), Vec::new());
        for u in &ul.users {
            let s = u.agg.station;
            let snr = m.radio_mut().snr_cdb(s as usize, t1, Dir::Up);
            let n = u.agg.mpdus.len();
            if n == 0 {
                let queue_size = ul.bsr[s as usize][u.agg.tin.tid() as usize];
                let kind = Kind::QosNull { from: s + 1, tid: u.agg.tin.tid(), queue_size };
                let phy =
                    Phy { start: t1, rate: u.agg.tx.rate(), len: 30, fcs_ok: u.decoded, snr_cdb: snr, ampdu: None };
                tap.air_frame(kind, phy);
            }
            super::ofdma::tap_mpdus(tap, &cx.pkts, &cx.keys, &u.agg, (s + 1, 0), t1, snr, |k| {
                u.decoded && u.agg.ok.has(k)
            });
            if !u.decoded {
                continue;
            }
            // The contexts as `ul_outcome` counts them.
            let ctx = tb_ba_context(u);
            match ctx {
                Some(BaContext::AllAck) => all_ack += 1,
                Some(BaContext::Bitmap) => bitmaps.push(self.ba_bytes[s as usize] - 24),
                None => continue,
            }
            contexts.push((s + 1, ctx == Some(BaContext::AllAck)));
        }
        if contexts.is_empty() || bsrp {
            // (Nothing acknowledges the answers to a BSRP Trigger.)
            return;
        }
        let ba_rate = ul
            .users
            .first()
            .map(|u| ofdm::control_response_rate(&self.basic, u.agg.tx.non_ht_reference_rate()))
            .unwrap_or(self.beacon_rate);
        let start = t1 + ul.tb + sifs;
        let len = multi_sta_ba_bytes(all_ack, &bitmaps);
        let phy = Phy { start, rate: TxRate::Ofdm(ba_rate), len, fcs_ok: true, snr_cdb: None, ampdu: None };
        tap.air_frame(Kind::MultiStaBa { users: &contexts }, phy);
    }

    /// The uplink exchanges' counters (None when off).
    pub fn ul_ofdma_stats(&self) -> Option<&UlStats> {
        self.ul.as_deref().map(|ul| &ul.stats)
    }
}

impl Ht {
    /// Whether the AP holds a frame of access category `ac` for an HE station anywhere (its
    /// FQ-MAC or FIFO, held MPDUs or hardware queue).
    fn ap_has_frames(&self, ac: usize) -> bool {
        let d = &self.drivers[0];
        let Some(mu) = self.mu.as_deref() else { return false };
        let acc = Ac::ALL[ac];
        d.hw[ac].len > 0
            || mu.stations().any(|s| {
                (0..NUM_TIDS as u8)
                    .map(|t| TinId::new(StationId(s as u16), t))
                    .any(|t| t.ac() == acc && Driver::has_frames(&d.src, &d.held, t))
            })
    }

    /// `TrySendingBsrpTf`: the BSRP Trigger's stations (those with an uplink TID the AP knows,
    /// in credit order, on equal RUs as for a Basic Trigger), the UL Length that fits the
    /// largest answer (a QoS Null per known TID), the Trigger on the air. No credits are paid
    /// (ns-3 updates them for Basic Triggers only). None if no station can be solicited or a
    /// TXOP limit leaves no room for the answers.
    fn bsrp_access(&mut self, m: &mut Medium, ac: usize, ta: Nanos, cx: &mut Ctx) -> Option<Nanos> {
        self.with_pick_scratch(|ht, picks, vectors| ht.bsrp_access_with(m, ac, ta, picks, vectors, cx))
    }

    /// [`Self::bsrp_access`] with the scratch buffers for the stations and their vectors.
    fn bsrp_access_with(
        &mut self,
        m: &mut Medium,
        ac: usize,
        ta: Nanos,
        picks: &mut Vec<u32>,
        vectors: &mut Vec<HeTxVector>,
        cx: &mut Ctx,
    ) -> Option<Nanos> {
        let band = self.band;
        let ru = self.trigger_users(|ul, s| ul.uplink_tids(s) > 0, picks, vectors)?;
        let (picks, vectors) = (&*picks, &*vectors);
        let ul = self.ul.as_deref().expect("uplink OFDMA on");
        let answer = qos_null_ampdu_bytes(picks.iter().map(|&s| ul.uplink_tids(s)).max().unwrap_or(1));
        let need = vectors.iter().map(|&v| tb_time(band, v, answer)).max().unwrap_or(Nanos::ZERO);
        let (length, tb) = ul_length(band, vectors[0], need);
        let rate = self.beacon_rate;
        let tf = ofdm::txtime(band, rate, bsrp_trigger_bytes(picks.len() as u32));
        let txop = self.edca[ac].txop_limit;
        if txop > Nanos::ZERO && tf + band.sifs() + tb > txop {
            return None;
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.bsrp_on_air = true;
        ul.cs_required = cs_required(length);
        ul.stats.bsrp_triggers += 1;
        let c = contender(0, ac);
        if let Some(end) = ul.trigger_on_air(m, c, ta, tf, tb, rate, true, picks, ru, cx) {
            return Some(end);
        }
        let mut users = std::mem::take(&mut ul.users);
        for (&s, &v) in picks.iter().zip(vectors) {
            let agg = ul.qos_null_answer(s, v, answer, tb);
            users.push(UlUser { agg, ru, decoded: false, acked: false });
        }
        ul.users = users;
        Some(m.put_mu_frame(cx, c, ta, tf, TxRate::Ofdm(rate), &[]))
    }

    /// The BSRP exchange after a Trigger that reached the stations: SIFS later every solicited
    /// station's HE TB PPDU of QoS Null frames (its share of the tones as its airtime), each
    /// frame with the Queue Size of its TID, which the AP stores if it decodes them; no
    /// acknowledgement follows (ns-3's `WAIT_QOS_NULL_AFTER_BSRP_TF`). Returns the outcome and
    /// the exchange's end, the TB PPDUs' end.
    fn bsrp_outcome(&mut self, m: &mut Medium, ta: Nanos, cx: &mut Ctx) -> (Outcome, Nanos) {
        let sifs = self.band.sifs();
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        let mut users = std::mem::take(&mut ul.users);
        let (tf, tb) = (ul.tf, ul.tb);
        let jammed = ul.bsrp_jammed_end > Nanos::ZERO;
        let t1 = ta + tf + sifs;
        let total_mhz: u32 = users.iter().map(|u| ru_mhz(u.ru)).sum();
        let mut any = false;
        for u in users.iter_mut() {
            let s = u.agg.station;
            let share = Nanos(tb.0 * ru_mhz(u.ru) as u64 / total_mhz as u64);
            m.put_control(cx, s + 1, s, 1, t1, share);
            if jammed {
                // A station's PPDU overlaps the answers' data at the AP (`Ht::ul_capture`).
                u.decoded = false;
                continue;
            }
            u.decoded = self.ul_draw(m, u, t1, cx);
            if !u.decoded {
                continue;
            }
            any = true;
            for t in 0..NUM_TIDS as u8 {
                let known = self.ul.as_deref().is_some_and(|ul| ul.bsr[s as usize][t as usize] != BSR_UNKNOWN);
                if known {
                    let q = queue_size(self.station_bytes(s, TinId::new(StationId(0), t), cx));
                    self.ul.as_deref_mut().expect("uplink OFDMA on").store_bsr(s, t, q, cx.now);
                }
            }
        }
        let ul = self.ul.as_deref_mut().expect("uplink OFDMA on");
        ul.stats.bsrp_answers += users.iter().filter(|u| u.decoded).count() as u64;
        ul.users = users;
        (if any { Outcome::Success } else { Outcome::DataLost }, t1 + tb)
    }

    /// Station `s`'s QoS Data of access category `ac` sent in a TB PPDU were acknowledged at
    /// `now`: with an MU EDCA Parameter Set advertised its timer for `ac` (re)starts; AIFSN 0
    /// holds its backoff until the timer ends, otherwise it contends with the MU EDCA AIFS and
    /// CW bounds (802.11ax-2021 26.2.7; ns-3's `StartMuEdcaTimerNow`). Runs while the medium is
    /// busy (the exchange's end).
    fn mu_edca_begin(&mut self, m: &mut Medium, s: u32, ac: usize, cx: &mut Ctx) {
        let now = cx.now;
        let Some(ul) = self.ul.as_deref_mut() else { return };
        let Some(p) = ul.mu_edca else { return };
        ul.mu_edca_start[s as usize][ac] = Some(now);
        ul.stats.mu_edca_starts += 1;
        let c = contender(s + 1, ac) as usize;
        if p.disables_edca() {
            m.dcf_mut().hold(c, now + p.timer);
        } else {
            let aifs = self.band.ifs(p.aifsn);
            m.dcf_mut().set_edca(c, aifs, p.cw_min, p.cw_max);
            cx.schedule(now + p.timer, crate::engine::Event::Cfp);
        }
    }

    /// The AP's timer event: every station whose MU EDCA timer ended by now contends with its
    /// access category's EDCA parameters again (a held counter needs nothing: the hold ends by
    /// itself). The next expiry is on the event queue already (armed when the timer started).
    fn mu_edca_expire(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let (edca, band) = (self.edca, self.band);
        let Some(ul) = self.ul.as_deref_mut() else { return };
        let Some(p) = ul.mu_edca else { return };
        for (s, starts) in ul.mu_edca_start.iter_mut().enumerate() {
            for (ac, (slot, e)) in starts.iter_mut().zip(edca).enumerate() {
                let Some(start) = *slot else { continue };
                if p.running(start, cx.now) {
                    continue;
                }
                *slot = None;
                if p.disables_edca() {
                    continue;
                }
                let c = contender(s as u32 + 1, ac) as usize;
                if let Some((t, gen)) = m.dcf_mut().set_edca_now(c, cx.now, e.aifs(band), e.cw_min, e.cw_max) {
                    cx.schedule(t, crate::engine::Event::Access { gen });
                }
            }
        }
    }
}

/// `ul_trigger_capture = "ring"`: whether station `s` of `n` decodes the AP's Trigger while
/// `colliders` transmit. The stations sit evenly on a unit circle around the AP (station i at
/// angle 2 pi i / n, ns-3's bench/ns3/ofdma_cell.h), every node sends at the same power and
/// the loss is ns-3's log-distance model ([`ring_power`]), so with the AP at distance 1 the
/// signal-to-interference ratio is 1 / sum over colliders of their powers; it decodes at 4 dB
/// or more (ns-3's `ThresholdPreambleDetectionModel`). A collider decodes nothing.
pub fn ring_decodes(n: usize, s: u32, colliders: &[u32]) -> bool {
    !colliders.contains(&s) && ring_sir_db(n, s, colliders.iter().copied()) >= CAPTURE_DB
}

/// The AP's signal over the colliders' at station `s` of `n` on the ring, in dB
/// ([`ring_decodes`]); `s` not a collider.
fn ring_sir_db(n: usize, s: u32, colliders: impl IntoIterator<Item = u32>) -> f64 {
    let interference: f64 = colliders.into_iter().map(|j| ring_power(n, s, j)).sum();
    -10.0 * interference.log10()
}

/// [`ring_decodes`] with the overlapping stations' PPDU ends beside them.
fn ring_decodes_of(n: usize, s: u32, colliders: &[(u32, Nanos)]) -> bool {
    !colliders.iter().any(|c| c.0 == s) && ring_sir_db(n, s, colliders.iter().map(|c| c.0)) >= CAPTURE_DB
}

/// `ul_trigger_capture = "ring"`: whether station `s` of `n`, not transmitting, detects the
/// preamble of one of the overlapping stations' PPDUs `colliders` (station, end) and, if so,
/// that PPDU's end: its power at `s` is at least 4 dB above the sum of the others' and, with
/// `ap`, the AP's (at distance 1), on the ring of [`ring_decodes`] (ns-3's
/// `ThresholdPreambleDetectionModel`; without a frame capture model the PHY keeps the PPDU it
/// locked on).
pub fn ring_detects(n: usize, s: u32, colliders: &[(u32, Nanos)], ap: bool) -> Option<Nanos> {
    colliders.iter().find_map(|&(i, end)| {
        let others = colliders.iter().filter(|c| c.0 != i).map(|c| ring_power(n, s, c.0)).sum::<f64>();
        let interference = others + if ap { 1.0 } else { 0.0 };
        (interference > 0.0 && 10.0 * (ring_power(n, s, i) / interference).log10() >= CAPTURE_DB).then_some(end)
    })
}

/// The power station `s` of `n` receives from station `j` on the ring, relative to the AP's
/// (distance 1): the distance is 2 sin(pi |s - j| / n) and the loss ns-3 3.44's
/// `LogDistancePropagationLossModel::DoCalcRxPower` (src/propagation/model/
/// propagation-loss-model.cc) with the anchor cells' defaults (exponent 3, reference distance
/// 1 m, reference loss 46.6777 dB): the reference loss at the reference distance or closer,
/// beyond it 30 log10(d) dB more. So d^-3, but 1 (the AP's) for a neighbour 1 m away or
/// closer (from 7 stations on, 2 sin(pi / n) < 1).
fn ring_power(n: usize, s: u32, j: u32) -> f64 {
    let d = 2.0 * (std::f64::consts::PI * (s as f64 - j as f64).abs() / n as f64).sin();
    d.max(RING_REFERENCE_M).powi(-3)
}

/// ns-3's `LogDistancePropagationLossModel` reference distance (attribute `ReferenceDistance`,
/// default 1 m, the radius of the ring): below it the loss stays the reference loss.
const RING_REFERENCE_M: f64 = 1.0;

/// The signal-to-interference ratio at which a station decodes a Trigger under another PPDU
/// (ns-3's `ThresholdPreambleDetectionModel` threshold, 4 dB).
const CAPTURE_DB: f64 = 4.0;

/// Whether a Trigger with UL Length `length` sets CS Required: ns-3 3.44 sets it unless the UL
/// Length is 76 or less (`MultiUserScheduler::CheckTriggerFrame`, after 802.11ax-2021
/// 26.5.2.5), and a station then answers only if the medium is idle on its RU's 20 MHz
/// channels in the SIFS before its HE TB PPDU (`HeFrameExchangeManager::UlMuCsMediumIdle`).
/// BSRP Triggers' answers (UL Length 28 or 40 here) never set it.
const fn cs_required(length: u32) -> bool {
    length > 76
}

/// A station's HE TB transmit vector on RU `ru`, from its link's HE SU vector (MCS 10 and 11
/// only on RUs of 242 tones or more).
fn tb_vector(link: TxVector, ru: RuSize) -> Option<HeTxVector> {
    match link {
        TxVector::He(t) => {
            let mcs = if crate::phy::he::mcs_allowed(t.mcs, t.nss, ru) { t.mcs } else { t.mcs.min(9) };
            Some(HeTxVector { format: HeFormat::Tb, ru, mcs, ..t })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::he::{HeGi, HeLtf, PacketPadding};
    use crate::phy::vht::Width;

    fn tb(ru: RuSize) -> HeTxVector {
        let su = HeTxVector::su(7, 1, Width::Mhz80, HeGi::Us1_6, HeLtf::X2, PacketPadding::Us0).unwrap();
        tb_vector(TxVector::He(su), ru).unwrap()
    }

    /// `ul_trigger_capture = "ring"` by hand: on the unit circle the AP is 1 away and station
    /// j is 2 sin(pi |i - j| / n) from station i, so the Trigger clears 4 dB over one collider
    /// from 1.36 (85.6 degrees) on: with 18 stations those 5-9 places away (9 of the 17 others,
    /// ns-3's trace answers a Trigger under one short PPDU with 8.1 TB PPDUs of 16 solicited),
    /// with 9 stations 3-4 places (4 of 8), with 4 stations all three (1.41: 4.5 dB). Two
    /// colliders add their powers. A collider 1 m away or closer is heard as strongly as the
    /// AP (ns-3's log-distance loss holds below 1 m, [`ring_power`]): 0 dB, no Trigger
    /// decoded (it was not either with d^-3 at every distance, which gave less still).
    #[test]
    fn ring_capture_by_hand() {
        let decoders = |n: usize, cols: &[u32]| (0..n as u32).filter(|&s| ring_decodes(n, s, cols)).collect::<Vec<_>>();
        assert_eq!(decoders(18, &[0]), (5..=13).collect::<Vec<_>>());
        assert_eq!(decoders(9, &[0]), [3, 4, 5, 6]);
        assert_eq!(decoders(4, &[0]), [1, 2, 3]);
        // Station 9 of 18 with colliders 0 and 4 (distances 2 and 1.53): 1 / (1/8 + 1/3.6) is
        // 3.96 dB, just short of 4; with 0 and 3 (2 and 1.73) 5.2 dB.
        assert!(!ring_decodes(18, 9, &[0, 4]));
        assert!(ring_decodes(18, 9, &[0, 3]));
        // Neighbours 0.35, 0.68 and 1 m away: the AP's power, 0 dB.
        for j in [1, 2, 3] {
            assert!(ring_sir_db(18, 0, [j]).abs() < 1e-9, "{j}");
        }
        assert!(ring_sir_db(9, 0, [1]).abs() < 1e-9);
    }

    /// `ul_trigger_capture = "ring"`, the bystanders of a collision by hand (18 stations, powers
    /// relative to the AP's: station j at distance d is max(d, 1)^-3, ns-3's log-distance loss,
    /// [`ring_power`]). Stations 0 and 9 (opposite): station 1 hears 0 at 0.35 (1, as the AP)
    /// and 9 at 1.97 (0.13), 8.8 dB, and detects 0; station 2 hears 0 at 0.68 (1) and 9 at 1.88
    /// (0.15), 8.2 dB; station 3 hears 0 at 1 and 9 at 1.73, 7.2 dB; station 4 (1.29 and 1.53)
    /// only 2.3 dB, nor do 5, 13 and 14 near the bisector. Under the AP's Trigger and station
    /// 0 nobody detects station 0's preamble: it is never above the AP's power (before the
    /// clamp, d^-3 at every distance, stations 1, 2, 16 and 17 did: 0.35 and 0.68 m, 13.8 and
    /// 4.9 dB); 5-13 decode the Trigger. Neighbours 0 and 1 collide: stations 2, 3, 16 and 17
    /// hear both at 1 or less, 0 dB, and detect neither (before: all four). With 9 stations
    /// neither under a Trigger (before: 1 and 8). The PPDU detected ends as given.
    #[test]
    fn ring_preamble_detection_by_hand() {
        let end = |s: u32| Nanos::from_us(1000 + s as u64);
        let opposite = [(0, end(0)), (9, end(9))];
        let detect = |n: usize, cols: &[(u32, Nanos)], ap: bool| {
            (0..n as u32)
                .filter(|&s| !cols.iter().any(|c| c.0 == s) && ring_detects(n, s, cols, ap).is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(detect(18, &opposite, false), [1, 2, 3, 6, 7, 8, 10, 11, 12, 15, 16, 17]);
        assert_eq!(ring_detects(18, 1, &opposite, false), Some(end(0)));
        assert_eq!(ring_detects(18, 10, &opposite, false), Some(end(9)));
        let under_trigger = [(0, end(0))];
        assert_eq!(detect(18, &under_trigger, true), Vec::<u32>::new());
        assert_eq!(detect(9, &under_trigger, true), Vec::<u32>::new());
        assert_eq!(detect(18, &[(0, end(0)), (1, end(1))], false), Vec::<u32>::new());
        // A neighbour within 1 m still stands out over a far collider: 9 stations, 0 and 4,
        // station 1 hears 0 at 0.68 (1) and 4 at 1.73 (0.19), 7.2 dB.
        assert_eq!(detect(9, &[(0, end(0)), (4, end(4))], false), [1, 3, 5, 8]);
        assert!((5..=13).all(|s| ring_decodes_of(18, s, &under_trigger)));
        assert!([3, 4, 14, 15].iter().all(|&s| !ring_decodes_of(18, s, &under_trigger)));
        // With 4 stations, 0 and 2 opposite: 1 and 3 are equidistant (1.41) and detect neither.
        assert_eq!(detect(4, &[(0, end(0)), (2, end(2))], false), Vec::<u32>::new());
    }

    /// CS Required as ns-3 3.44 sets it (`MultiUserScheduler::CheckTriggerFrame`): not for a
    /// UL Length of 76 or less, so never for the BSRP answers (UL Length 28 with 242- and
    /// 106-tone RUs, 40 with 52-tone RUs, `bsrp_exchange_by_hand`), always for a TB PPDU of
    /// aPPDUMaxTime (UL Length 4090).
    #[test]
    fn cs_required_only_above_ul_length_76() {
        let band = ofdm::OfdmBand::Ghz5;
        for ru in [RuSize::Tones242, RuSize::Tones106, RuSize::Tones52] {
            let v = tb(ru);
            let (answer, _) = ul_length(band, v, tb_time(band, v, qos_null_ampdu_bytes(1)));
            assert!(!cs_required(answer), "{ru:?}: UL Length {answer}");
            assert!(cs_required(ul_length(band, v, TB_PPDU_MAX).0));
        }
        assert!(!cs_required(76) && cs_required(77));
    }

    /// Why `ul_trigger_capture = "ring"` leaves a DL MU PPDU that a station's PPDU overlaps lost
    /// at every user, as ns-3 3.44 does in the anchor cells (its DL MU PPDUs reached 0 or all
    /// of their users, bench/ns3/ofdma_mixed_summary.txt): on the ring the AP's signal stands at
    /// most 9.03 dB above a collider's (the opposite station, 2 m away), and a user decodes
    /// the PPDU only after HE-SIG-B, sent at VHT MCS min(5, the lowest user MCS) (ns-3's
    /// `HePhy::GetSigBMode`; a failed HE-SIG-B drops the PPDU, `VhtPhy::EndReceiveSig`). One
    /// HE-SIG-B symbol at MCS 3 or more fails at that SIR (airsched's NIST error model); at MCS
    /// 2 or less it would pass, so a cell whose lowest user MCS is 2 or less
    /// would need per-user reception, which is not modelled (docs/model-ofdma.md).
    #[test]
    fn a_dl_mu_ppdu_under_a_station_ppdu_reaches_no_user_on_the_ring() {
        use crate::phy::error_rate::chunk_success_rate;
        let mut best = f64::MIN;
        for n in [4usize, 9, 18] {
            for j in 0..n as u32 {
                for s in (0..n as u32).filter(|&s| s != j) {
                    best = best.max(ring_sir_db(n, s, [j]));
                }
            }
        }
        assert!((best - 30.0 * 2f64.log10()).abs() < 1e-9, "{best}");
        let snr = 10f64.powf(best / 10.0);
        // Data bits of one HE-SIG-B symbol (VHT MCS 0-5 on 20 MHz).
        const N_DBPS: [u64; 6] = [26, 52, 78, 104, 156, 208];
        for mcs in 0..=5u8 {
            let p = chunk_success_rate(crate::phy::vht::error_mode(mcs), snr, N_DBPS[mcs as usize]);
            assert_eq!(p > 0.5, mcs <= 2, "VHT MCS {mcs}: {p}");
            if mcs >= 3 {
                assert!(p < 1e-3, "VHT MCS {mcs}: {p}");
            }
        }
    }

    /// `ul_bsr_lifetime`: a report reads as stored until the lifetime has passed (ns-3's
    /// `timestamp + BsrLifetime < now` expires it), then as unknown; without it, forever.
    #[test]
    fn a_buffer_report_expires_after_its_lifetime() {
        let cfg = |life| super::super::ofdma::OfdmaConfig { bsr_lifetime: life, ..Default::default() };
        let mut ul = Ul::new(&cfg(Some(Nanos::from_ms(20))), 2, &[1]);
        ul.store_bsr(1, 0, 0, Nanos::from_ms(5));
        ul.store_bsr(1, 3, 0, Nanos::from_ms(1));
        assert_eq!(ul.max_bsr(1, Nanos::from_ms(21)), 0, "TID 0 still fresh");
        assert_eq!(ul.max_bsr(1, Nanos::from_ms(25)), 0, "at exactly the lifetime");
        assert_eq!(ul.max_bsr(1, Nanos::from_us(25_001)), BSR_UNKNOWN);
        assert!(ul.can_trigger(Nanos::from_us(25_001)) && !ul.can_trigger(Nanos::from_ms(24)));
        let mut ul = Ul::new(&cfg(None), 2, &[0, 1]);
        ul.store_bsr(1, 0, 0, Nanos::from_ms(5));
        assert_eq!(ul.max_bsr(1, Nanos::from_ms(5000)), 0);
    }

    /// The saturated exchange of ns-3's 4-station trace (bench/ns3/ofdma_ul_trace.txt) by hand.
    #[test]
    fn saturated_exchange_by_hand() {
        let band = ofdm::OfdmBand::Ghz5;
        // Basic Trigger for 4 stations: 28 + 4 x 6 = 52 B at 6 Mb/s:
        // 20 + 4 x ceil((16 + 416 + 6) / 24) = 96 us.
        assert_eq!(basic_trigger_bytes(4), 52);
        assert_eq!(ofdm::txtime(band, crate::phy::error_rate::OfdmRate::R6, 52), Nanos::from_us(96));
        // aPPDUMaxTime cut to whole symbols: TB preamble 20 + RL-SIG 4 + SIG-A 8 + HE-STF 8 +
        // one 2x HE-LTF (6.4 + 1.6) = 48 us; floor((5484 - 48) / 14.4) = 377 symbols:
        // 5476.8 us; L_LENGTH = ceil((5476.8 - 20) / 4) x 3 - 5 = 4090.
        let v = tb(RuSize::Tones242);
        assert_eq!(ul_length(band, v, TB_PPDU_MAX), (4090, Nanos(5_476_800)));
        // 242-tone RU at MCS 7: N_DBPS 1170; 377 symbols carry 35 MPDUs of 1538 B
        // (35 x 1544 - 2 = 54 038 B; a 36th needs 378 symbols).
        assert!(tb_time(band, v, 54_038) <= Nanos(5_476_800));
        assert!(tb_time(band, v, 54_038 + 1544) > Nanos(5_476_800));
        // Multi-STA BlockAck, all four all-ack: 22 + 4 x 2 = 30 B at 24 Mb/s: 32 us.
        assert_eq!(multi_sta_ba_bytes(4, &[]), 30);
        assert_eq!(ofdm::txtime(band, crate::phy::error_rate::OfdmRate::R24, 30), Nanos::from_us(32));
        // Two stations all-ack and two that lost MPDUs, with a 256-bit BlockAck context each:
        // 22 + 2 x 2 + 2 x 36 = 98 B.
        assert_eq!(multi_sta_ba_bytes(2, &[32, 32]), 98);
    }

    #[test]
    fn qos_null_answers_earn_no_blockack_context() {
        use crate::wifi::ht::driver::{Agg, Mpdu};
        let user = |mpdus: usize, ok: usize, decoded: bool| {
            let mut agg = Agg::new();
            let m =
                Mpdu { pkt: crate::packet::PacketId(0), attempts: 0, delivered: false, est_us: 0, sn: 0, spent_us: 0 };
            agg.mpdus = vec![m; mpdus];
            for i in 0..ok {
                agg.ok.set(i);
            }
            UlUser { agg, ru: RuSize::Tones52, decoded, acked: false }
        };
        assert_eq!(tb_ba_context(&user(3, 3, true)), Some(BaContext::AllAck));
        assert_eq!(tb_ba_context(&user(3, 2, true)), Some(BaContext::Bitmap));
        assert_eq!(tb_ba_context(&user(0, 0, true)), None);
        assert_eq!(tb_ba_context(&user(3, 3, false)), None);
        // ns-3's 18-station half-load exchange with one QoS Null answer of 16: 52 octets
        // (bench/ns3/ofdma_ul_trace.txt), 40 us at 24 Mb/s; a BlockAck context for it would
        // have made it 88 octets and 52 us.
        let band = ofdm::OfdmBand::Ghz5;
        assert_eq!(multi_sta_ba_bytes(15, &[]), 52);
        assert_eq!(ofdm::txtime(band, crate::phy::error_rate::OfdmRate::R24, 52), Nanos::from_us(40));
    }

    #[test]
    fn queue_size_follows_ns3() {
        assert_eq!(queue_size(0), 0);
        assert_eq!(queue_size(1538), 7);
        assert_eq!(queue_size(64_768), 253);
        assert_eq!(queue_size(64_769), 254);
        assert_eq!(queue_size(1_000_000), 254);
    }

    #[test]
    fn ul_length_round_trips() {
        // L_LENGTH gives back the duration (eq. 27-11: (L + 3 + 2) / 3 x 4 + 20, cut to whole
        // symbols).
        let band = ofdm::OfdmBand::Ghz5;
        for ru in [RuSize::Tones52, RuSize::Tones106, RuSize::Tones242] {
            let v = tb(ru);
            for psdu in [500, 1542, 20_000, 60_000] {
                let (l, d) = ul_length(band, v, tb_time(band, v, psdu));
                let back = Nanos(((l as u64 + 5).div_ceil(3)) * 4_000 + 20_000);
                assert_eq!(ul_length(band, v, back).1, d, "{ru:?} {psdu}");
            }
        }
    }

    /// The BSRP exchange of ns-3's mixed 4- and 9-station traces (bench/ns3/ofdma_mixed_trace.txt)
    /// and the 18-station one by hand.
    #[test]
    fn bsrp_exchange_by_hand() {
        use crate::phy::error_rate::OfdmRate;
        let band = ofdm::OfdmBand::Ghz5;
        // BSRP Trigger for 4 stations: 28 + 4 x 5 = 48 B at 6 Mb/s:
        // 20 + 4 x ceil((16 + 384 + 6) / 24) = 20 + 4 x 17 = 88 us (ns-3: size=48 dur=88.0).
        assert_eq!(bsrp_trigger_bytes(4), 48);
        assert_eq!(ofdm::txtime(band, OfdmRate::R6, 48), Nanos::from_us(88));
        // 8 stations: 68 B, 20 + 4 x ceil(566 / 24) = 116 us (ns-3: size=68 dur=116.0);
        // 16: 108 B, 20 + 4 x ceil(886 / 24) = 168 us.
        assert_eq!(ofdm::txtime(band, OfdmRate::R6, bsrp_trigger_bytes(8)), Nanos::from_us(116));
        assert_eq!(ofdm::txtime(band, OfdmRate::R6, bsrp_trigger_bytes(16)), Nanos::from_us(168));
        // One QoS Null: delimiter 4 + 30 = 34 B; two: 36 + 34 = 70 B.
        assert_eq!(qos_null_ampdu_bytes(1), 34);
        assert_eq!(qos_null_ampdu_bytes(2), 70);
        // The answer on a 242-tone RU at MCS 7 (N_DBPS 1170): 34 x 8 + 16 = 288 bits, one
        // 14.4-us symbol after the 48-us TB preamble: 62.4 us, L_LENGTH ceil(42.4 / 4) x 3 - 5
        // = 28 (ns-3: ul_length=28, TB PPDU dur=62.4). On a 106-tone RU (N_DBPS 510): one
        // symbol too, the same UL Length (ns-3's 9-station trace).
        let v = tb(RuSize::Tones242);
        assert_eq!(ul_length(band, v, tb_time(band, v, 34)), (28, Nanos(62_400)));
        let v106 = tb(RuSize::Tones106);
        assert_eq!(ul_length(band, v106, tb_time(band, v106, 34)), (28, Nanos(62_400)));
        // 52-tone RU (N_DBPS 240): two symbols, 76.8 us.
        let v52 = tb(RuSize::Tones52);
        assert_eq!(ul_length(band, v52, tb_time(band, v52, 34)).1, Nanos(76_800));
        // The whole exchange, 4 stations: Trigger, SIFS, QoS Null TB PPDUs, no response:
        // 88 + 16 + 62.4 = 166.4 us.
        assert_eq!(Nanos::from_us(88) + band.sifs() + Nanos(62_400), Nanos(166_400));
    }
}
