//! TCP sender: slow start and congestion avoidance (RFC 5681; the increase itself in
//! [`super::cc`]), loss recovery, limited transmit (RFC 3042), the retransmission timer (RFC
//! 6298, [`super::rtt`]) and cwnd = 1 MSS after an RTO (Linux `tcp_enter_loss`).
//!
//! Loss recovery has two forms. With SACK (the default, as Linux negotiates it), a scoreboard
//! as Linux 6.12 keeps it (net/ipv4/tcp_input.c `tcp_sacktag_write_queue`, `tcp_mark_head_lost`,
//! `tcp_cwnd_reduction`, tcp_output.c `tcp_xmit_retransmit_queue`) with RFC 6675's loss rule:
//! SACKed segments are never resent; an un-SACKed segment is lost once DupThresh = 3 segments
//! above it are SACKed; `pipe` = segments outstanding − SACKed − lost + retransmissions in
//! flight. Recovery starts when the first segment is lost (3 segments SACKed), takes ssthresh
//! from the congestion control, reduces cwnd towards it by PRR (RFC 6937) and sends lost
//! segments first, then new data, while pipe < cwnd; it ends when `recover` is acknowledged,
//! with cwnd = ssthresh. In recovery, RACK's rule (RFC 8985) finds lost retransmissions: one is
//! lost once a segment sent after it has been delivered. An RTO marks every un-SACKed segment
//! lost and keeps the SACK marks (Linux `tcp_timeout_mark_lost`); the lost segments are resent
//! in order as cwnd allows, in slow start.
//! Without SACK: fast retransmit on the third duplicate ACK with NewReno fast recovery and
//! partial ACKs (RFC 6582), and go-back-N after an RTO.
//!
//! Where the RFCs allow a choice it follows Linux 6.x: ssthresh is computed from cwnd, not
//! FlightSize; recovery ends with cwnd = ssthresh; an RTO inside a recovery episode keeps
//! ssthresh. Not Linux: an ACK counts at most 2 MSS towards window growth (RFC 3465 L = 2;
//! Linux counts every delivered segment, which with SACK rarely differs, but without SACK the
//! stretch ACK that ends a loss repair would open the window by tens of segments at once),
//! and without SACK partial ACKs rearm the timer only the first time (RFC 6582's "Impatient"
//! variant; Linux rearms on every ACK but repairs all holes in about one RTT thanks to SACK).
//! RTT samples as Linux `tcp_ack_update_rtt`: from the oldest newly acknowledged segment if
//! none of them was retransmitted (Karn) or SACKed before, else (SACK) from the oldest newly
//! SACKed never-retransmitted segment, else, if new data was acknowledged, from the timestamp
//! echo.
//! Deviations: losses of first transmissions are found by the DupThresh rule, not by RACK's
//! time rule (Linux's default since 4.18), and there is no tail loss probe, so a loss with
//! fewer than 3 segments after it, or a lost retransmission outside recovery, waits for the
//! RTO; without SACK no PRR (cwnd is inflated as RFC 6582 says); no Nagle, no pacing, no
//! F-RTO or undo of spurious retransmissions. Those are the defaults; with `TcpConfig::rack`,
//! `tlp`, `frto` (the 4.9 and 6.1 eras) the sender runs RACK (RFC 8985; Linux 4.9 beside
//! DupThresh, 6.1 instead of it, with the reordering timer), the tail loss probe and F-RTO
//! (RFC 5682) with its undo, as net/ipv4/tcp_recovery.c, tcp_output.c and tcp_input.c of
//! those versions (docs/model-tcp.md, "RACK, TLP and F-RTO").
//!
//! This file keeps the state machine (windows, recovery states, ACK and timer handling); the
//! SACK scoreboard is in `sack` (tcp/sack.rs), RACK, TLP and F-RTO in `recovery`
//! (tcp/recovery.rs, after Linux's net/ipv4/tcp_recovery.c). Both hold `impl TcpSender` blocks,
//! so the per-event path calls plain methods, as before the split.

use std::collections::VecDeque;

use super::cc::CongestionControl;
use super::rtt::RttEstimator;
use super::{Ack, LossEra, SackBlocks, Segment, TcpConfig};
use crate::time::Nanos;

// Files beside this one (tcp/), but child modules of the sender: they see its private fields
// and helpers, which stay private to the sender.
#[path = "recovery.rs"]
mod recovery;
#[path = "sack.rs"]
mod sack;

/// How much the application writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppLimit {
    /// A bulk transfer of this many bytes.
    Bytes(u64),
    /// Always more to send (a transfer of a given duration: call [`TcpSender::close`] or
    /// simply stop the run).
    Unlimited,
}

/// RFC 3465 L: the most one ACK may count towards window growth, in MSS.
pub const ABC_LIMIT_SEGMENTS: u64 = 2;

/// Ordinary duplicate ACKs that trigger fast retransmit (RFC 5681 `DupThresh`, Linux
/// `tcp_reordering` default).
pub const DUPTHRESH: u32 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Segments handed out by `poll_transmit`, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes handed out, retransmissions included.
    pub bytes_sent: u64,
    /// Retransmissions of fast retransmit and of partial ACKs in fast recovery (and loss
    /// probes that resend a segment).
    pub fast_retransmits: u64,
    /// Go-back-N retransmissions after an RTO.
    pub timeout_retransmits: u64,
    /// Fast-recovery episodes entered.
    pub fast_recoveries: u64,
    /// Retransmission-timer expiries.
    pub rtos: u64,
    pub dupacks: u64,
    /// Bytes cumulatively acknowledged (= `snd_una`).
    pub bytes_acked: u64,
    pub rtt_samples: u64,
    /// Segments newly SACKed (SACK only).
    pub sacked_segments: u64,
    /// Retransmissions found lost by the RACK rule and sent again (SACK only).
    pub lost_retransmits: u64,
    /// Segments the host's own qdisc refused (taken back, sent again later).
    pub local_drops: u64,
    /// CWR episodes entered on local congestion.
    pub cwr_episodes: u64,
    /// Tail loss probes sent (Linux `TCPLossProbes`).
    pub tlp_probes: u64,
    /// Losses repaired by a probe: an ACK beyond `tlp_high_seq` (Linux `TCPLossProbeRecovery`).
    pub tlp_recoveries: u64,
    /// Segments first marked lost by RACK's time rule (not counting lost retransmissions).
    pub rack_marked: u64,
    /// Expiries of RACK's reordering timer.
    pub reo_timeouts: u64,
    /// RTOs found spurious by F-RTO and undone (Linux `TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
}

/// What an ACK did, for the simulator's metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub newly_acked: u64,
    /// An RTT sample, if the ACK acknowledged new data.
    pub rtt_sample: Option<Nanos>,
}

/// Linux `tcp_ca_state`, reduced to what the model needs (Disorder is Open with SACKed or
/// duplicate-acknowledged data; no CWR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// Congestion window reduction (Linux `TCP_CA_CWR`): entered on local congestion (the
    /// host's qdisc refused or dropped a segment, `tcp_enter_cwr`); cwnd falls to ssthresh by
    /// PRR until everything sent before it is acknowledged.
    Cwr,
    /// Fast recovery (RFC 6582, or RFC 6675 with SACK) until `recover` is acknowledged.
    Recovery,
    /// After an RTO, until everything sent before it is acknowledged.
    Loss,
}

/// One MSS-sized piece of the sequence space between `snd_una` and `snd_max`, with its SACK
/// scoreboard marks (Linux `TCPCB_EVER_RETRANS`, `TCPCB_SACKED_ACKED`, `TCPCB_LOST`,
/// `TCPCB_SACKED_RETRANS`; the last three stay false without SACK).
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    end: u64,
    sent: Nanos,
    /// Ever retransmitted (Karn: no RTT sample from its ACK).
    retransmitted: bool,
    /// The receiver holds it out of order.
    sacked: bool,
    /// Presumed lost: DupThresh SACKed segments above it, or un-SACKed at an RTO.
    lost: bool,
    /// A retransmission of it is in flight (it counts in `pipe` again).
    rexmit_in_flight: bool,
}

impl SentRecord {
    fn new(end: u64, sent: Nanos) -> SentRecord {
        SentRecord { end, sent, retransmitted: false, sacked: false, lost: false, rexmit_in_flight: false }
    }
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    mss: u32,
    cc: CongestionControl,
    rtt: RttEstimator,
    /// Bytes the application has written (`u64::MAX`: unlimited).
    app_end: u64,
    snd_una: u64,
    /// Next byte to send; below `snd_max` only during go-back-N after an RTO.
    snd_nxt: u64,
    /// Highest byte sent + 1.
    snd_max: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Peer's advertised window, bytes.
    rwnd: u64,
    dupacks: u32,
    state: CaState,
    /// RFC 6582 `recover`: `snd_max` when the last recovery or RTO began (exclusive).
    recover: Option<u64>,
    /// A partial ACK has been seen in this recovery (the timer is reset only on the first).
    partial_ack_seen: bool,
    /// Retransmit the segment at `snd_una` at the next `poll_transmit`.
    retransmit_pending: bool,
    /// An RTO fired and no ACK has advanced `snd_una` since (Linux `icsk_retransmits` > 0).
    rto_since_progress: bool,
    rto_deadline: Option<Nanos>,
    /// One record per segment in `[snd_una, snd_max)`, oldest first; grows to the largest
    /// window once and is then reused. With SACK it is the scoreboard.
    sent: VecDeque<SentRecord>,
    /// SACK on: RFC 6675-style recovery; off: NewReno.
    sack: bool,
    /// Scoreboard counts in segments (Linux `sacked_out`, `lost_out`, `retrans_out`).
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Every un-SACKed segment that ends at or below this is marked lost (Linux
    /// `lost_skb_hint`): the next loss marking starts here.
    lost_upto: u64,
    /// No segment that ends at or below this needs a retransmission now (Linux
    /// `retransmit_skb_hint`).
    rxt_upto: u64,
    /// End of the highest SACKed segment.
    high_sacked: u64,
    /// The last ACK's SACK blocks, already applied: parts of new blocks inside them are skipped
    /// (Linux `recv_sack_cache`).
    sack_cache: SackBlocks,
    /// RACK (RFC 8985) state, used for retransmissions only: the latest send time of a
    /// delivered segment and the RTT measured on the last delivery (Linux `rack.mstamp`,
    /// `rack.rtt_us`).
    rack_xmit: Nanos,
    rack_rtt: Nanos,
    /// No retransmission in flight was sent before this (a hint to skip the scan).
    rexmit_low: Nanos,
    /// PRR (RFC 6937, Linux `tcp_cwnd_reduction`) in segments: delivered and sent since
    /// recovery began, and cwnd when it began (Linux `prior_cwnd`, RFC 6937 RecoverFS).
    prr_delivered: u64,
    prr_out: u64,
    prior_cwnd: u64,
    /// Segments delivered (newly cumulatively acknowledged and not SACKed before, or newly
    /// SACKed) by the ACK being processed.
    delivered_now: u64,
    /// The send buffer (`tcp_wmem`) and `sk_sndbuf` now; None: no limit.
    sndbuf: Option<super::SndBuf>,
    sk_sndbuf: u64,
    /// What the last `poll_transmit` handed out, so that a local drop can take it back.
    last: LastSent,
    /// `high_seq` of a CWR episode: CWR ends once `snd_una` is beyond it.
    cwr_high: u64,
    /// RACK / TLP / F-RTO as configured (None / false: the model before kernel eras).
    rack_mode: Option<LossEra>,
    tlp_mode: Option<LossEra>,
    frto_enabled: bool,
    /// End of the most recently sent delivered segment (Linux `rack.end_seq`), and whether
    /// RACK has a new delivery to examine (`rack.advanced`).
    rack_end: u64,
    rack_advanced: bool,
    /// RACK's reordering timer (Linux `ICSK_TIME_REO_TIMEOUT`).
    reo_deadline: Option<Nanos>,
    /// The loss-probe timer (`ICSK_TIME_LOSS_PROBE`), a probe due at the next poll, and
    /// `tlp_high_seq` / `tlp_retrans` of the probe outstanding.
    tlp_deadline: Option<Nanos>,
    tlp_due: bool,
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// F-RTO under way in this Loss episode (Linux `tp->frto`); the next polls send only new
    /// data (`REXMIT_NEW`).
    frto: bool,
    frto_new_only: bool,
    /// cwnd and ssthresh to restore on an undo (Linux `prior_cwnd`, `prior_ssthresh`; 0: none).
    undo_cwnd: u64,
    undo_ssthresh: u64,
    /// The ACK being processed (S)ACKed never-retransmitted data below `recover` (Linux
    /// `FLAG_ORIG_SACK_ACKED`).
    orig_sack_acked: bool,
    stats: TcpSenderStats,
}

/// What the last segment handed out was (for [`TcpSender::on_local_drop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LastSent {
    None,
    New,
    /// Without SACK: the fast retransmission (or a partial ACK's).
    FastRtx,
    /// Without SACK: a go-back-N retransmission after an RTO.
    GoBackN,
    /// With SACK: the retransmission of record `i`; whether it was the forced first one.
    Sack {
        i: usize,
        forced: bool,
    },
    /// A loss probe that resent the last segment (of this length).
    ProbeRtx(u64),
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, app: AppLimit) -> TcpSender {
        TcpSender {
            mss: cfg.mss,
            cc: CongestionControl::new(cfg.cc),
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            app_end: match app {
                AppLimit::Bytes(n) => n,
                AppLimit::Unlimited => u64::MAX,
            },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.initial_cwnd_segments as u64 * cfg.mss as u64,
            ssthresh: u64::MAX,
            // Until the first ACK: the peer's buffer as configured (no handshake carries it).
            rwnd: cfg.rcv_wnd,
            dupacks: 0,
            state: CaState::Open,
            recover: None,
            partial_ack_seen: false,
            retransmit_pending: false,
            rto_since_progress: false,
            rto_deadline: None,
            sent: VecDeque::with_capacity(64),
            sack: cfg.sack,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_upto: 0,
            rxt_upto: 0,
            high_sacked: 0,
            sack_cache: SackBlocks::NONE,
            rack_xmit: Nanos::ZERO,
            rack_rtt: Nanos::ZERO,
            rexmit_low: Nanos::ZERO,
            prr_delivered: 0,
            prr_out: 0,
            prior_cwnd: 0,
            delivered_now: 0,
            sndbuf: cfg.sndbuf,
            sk_sndbuf: 0,
            last: LastSent::None,
            cwr_high: 0,
            rack_mode: if cfg.sack { cfg.rack } else { None },
            tlp_mode: if cfg.sack { cfg.tlp } else { None },
            frto_enabled: cfg.sack && cfg.frto,
            rack_end: 0,
            rack_advanced: false,
            reo_deadline: None,
            tlp_deadline: None,
            tlp_due: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            frto: false,
            frto_new_only: false,
            undo_cwnd: 0,
            undo_ssthresh: 0,
            orig_sack_acked: false,
            stats: TcpSenderStats::default(),
        }
        .with_sndbuf()
    }

    /// Linux 6.1 `tcp_init_buffer_space` → `tcp_sndbuf_expand`: the send buffer starts at
    /// max(`tcp_wmem[1]`, room for twice the initial window).
    fn with_sndbuf(mut self) -> TcpSender {
        if let Some(b) = self.sndbuf {
            self.sk_sndbuf = b.wmem[1];
            self.expand_sndbuf();
        }
        self
    }

    /// Linux 6.1 `tcp_sndbuf_expand`: `sk_sndbuf` grows (never shrinks) to
    /// 2 · max(cwnd, TCP_INIT_CWND, reordering + 1) · per_mss, at most `tcp_wmem[2]`, where
    /// per_mss = roundup_pow_of_two(mss + MAX_TCP_HEADER + skb_shared_info) + sk_buff.
    fn expand_sndbuf(&mut self) {
        let Some(b) = self.sndbuf else { return };
        let per_mss = (self.mss as u64 + 320 + 320).next_power_of_two() + 256;
        let segs = (self.cwnd / self.mss as u64).max(super::INITIAL_CWND_SEGMENTS as u64).max(DUPTHRESH as u64 + 1);
        let want = (2 * segs * per_mss).min(b.wmem[2]);
        self.sk_sndbuf = self.sk_sndbuf.max(want);
    }

    /// `sk_sndbuf` now (0 without a send-buffer model).
    #[cfg(test)]
    pub fn sndbuf(&self) -> u64 {
        self.sk_sndbuf
    }

    /// TCP Small Queues (Linux 6.1 `tcp_small_queue_check`): the most bytes (truesize) of
    /// this socket that may sit in the qdisc and device before it stops sending:
    /// min(`limit_output_bytes`, max(2 · truesize of a full segment, pacing rate >> shift)),
    /// with the pacing rate of `tcp_update_pacing_rate`: mss · max(cwnd, packets out) / SRTT,
    /// times 2 in slow start (cwnd < ssthresh / 2) and 1.2 otherwise. Before the first RTT
    /// sample Linux's rate is unbounded: the limit is `limit_output_bytes`.
    pub fn tsq_limit(&self, limit_output_bytes: u64, pacing_shift: u8) -> u64 {
        let Some(srtt) = self.rtt.srtt() else { return limit_output_bytes };
        let segs = (self.cwnd / self.mss as u64).max(self.sent.len() as u64);
        let ratio = if self.cwnd < self.ssthresh / 2 { 200 } else { 120 };
        // Bytes per second, as Linux computes it (integer, microseconds).
        let srtt_us = (srtt.0 / 1000).max(1);
        let rate = self.mss as u64 * ratio / 100 * segs * 1_000_000 / srtt_us;
        let two = 2 * super::skb_truesize(self.mss as u64);
        two.max(rate >> pacing_shift).min(limit_output_bytes)
    }

    /// Whether anything is outstanding (Linux `tcp_rtx_queue_empty` negated): TSQ never holds
    /// back the first segment of an idle socket.
    pub fn has_outstanding(&self) -> bool {
        self.snd_max > self.snd_una
    }

    /// The next segment to put on the wire now, if the windows allow one: a pending fast
    /// retransmission first, then go-back-N retransmissions (with SACK: lost segments), then
    /// new data. Call until `None` after every `on_ack`/`on_timer` (and at start).
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        let seg = if self.tlp_due {
            self.tlp_due = false;
            let seg = self.loss_probe(now)?;
            self.stats.segments_sent += 1;
            self.stats.bytes_sent += seg.len as u64;
            return Some(seg);
        } else if self.sack {
            let seg = self.next_segment_sack(now)?;
            if matches!(self.state, CaState::Recovery | CaState::Cwr) {
                self.prr_out += 1;
            }
            seg
        } else if self.retransmit_pending && self.snd_una < self.snd_max {
            // Fast retransmit / partial ACK: sent regardless of cwnd (RFC 5681 3.2 step 4).
            self.retransmit_pending = false;
            self.stats.fast_retransmits += 1;
            self.last = LastSent::FastRtx;
            self.retransmission_at(now, self.snd_una)
        } else if self.snd_nxt < self.snd_max {
            let len = self.seg_len(self.snd_nxt);
            if self.snd_nxt - self.snd_una + len as u64 > self.cwnd {
                return None;
            }
            self.stats.timeout_retransmits += 1;
            let seg = self.retransmission_at(now, self.snd_nxt);
            self.snd_nxt += len as u64;
            self.last = LastSent::GoBackN;
            seg
        } else {
            let seg = self.new_segment(now)?;
            if self.state == CaState::Cwr {
                self.prr_out += 1;
            }
            seg
        };
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        // RFC 6298 5.1: start the timer when sending data if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.current_rto());
        }
        if self.tlp_mode.is_some() && !seg.retransmission {
            // Linux tcp_write_xmit: one loss probe per tail, rescheduled after new data.
            self.schedule_tlp(now);
        }
        Some(seg)
    }

    fn new_segment(&mut self, now: Nanos) -> Option<Segment> {
        self.new_segment_inner(now, false)
    }

    fn new_segment_inner(&mut self, now: Nanos, probe: bool) -> Option<Segment> {
        if self.snd_max >= self.app_end {
            return None;
        }
        let len = (self.app_end - self.snd_max).min(self.mss as u64);
        let cwnd_full = if probe {
            false
        } else if self.sack {
            // Linux tcp_cwnd_test: segments in pipe against cwnd. Each SACKed segment makes
            // room for one more, which includes RFC 3042 limited transmit.
            self.pipe() * self.mss as u64 + len > self.cwnd
        } else {
            // RFC 3042 limited transmit: the first two dupACKs each let one more segment out.
            let limited = if self.state == CaState::Open { self.dupacks.min(2) as u64 * self.mss as u64 } else { 0 };
            self.snd_max - self.snd_una + len > self.cwnd + limited
        };
        if cwnd_full || self.snd_max + len > self.snd_una + self.rwnd {
            return None;
        }
        // The send buffer holds every segment not yet acknowledged; a bulk application keeps
        // it full, so a new segment goes only if its truesize still fits (Linux
        // `sk_stream_memory_free`: the application cannot write more).
        if self.sndbuf.is_some() && (self.sent.len() as u64 + 1) * super::skb_truesize(self.mss as u64) > self.sk_sndbuf
        {
            return None;
        }
        let seg = Segment { seq: self.snd_max, len: len as u32, tsval: now, retransmission: false };
        self.snd_max += len;
        self.snd_nxt = self.snd_max;
        self.sent.push_back(SentRecord::new(self.snd_max, now));
        self.last = LastSent::New;
        Some(seg)
    }

    /// Length of the segment starting at `seq` (segments lie on an MSS grid from 0).
    fn seg_len(&self, seq: u64) -> u32 {
        (self.snd_max - seq).min(self.mss as u64) as u32
    }

    fn retransmission_at(&mut self, now: Nanos, seq: u64) -> Segment {
        debug_assert_eq!((seq - self.snd_una) % self.mss as u64, 0, "segments stay on the MSS grid");
        let i = ((seq - self.snd_una) / self.mss as u64) as usize;
        if let Some(r) = self.sent.get_mut(i) {
            r.retransmitted = true;
        }
        Segment { seq, len: self.seg_len(seq), tsval: now, retransmission: true }
    }

    /// The segment the last `poll_transmit` returned never left the host: its qdisc refused
    /// it (Linux: `__tcp_transmit_skb` gets NET_XMIT_DROP from `dev_queue_xmit`, enters CWR,
    /// and `tcp_write_xmit` stops with the segment still unsent). The sender takes the segment
    /// back (new data is unsent again, a retransmission is due again) and enters CWR. The
    /// caller stops polling; the next ACK, or the timer, sends again.
    pub fn on_local_drop(&mut self, now: Nanos) {
        let len;
        let counted_prr =
            matches!(self.state, CaState::Recovery | CaState::Cwr) && (self.sack || self.last == LastSent::New);
        match std::mem::replace(&mut self.last, LastSent::None) {
            LastSent::None => return,
            LastSent::New => {
                self.sent.pop_back().expect("the segment just sent has its record");
                let start = self.record_start(self.sent.len());
                len = self.snd_max - start;
                self.snd_max = start;
                self.snd_nxt = self.snd_nxt.min(start);
            }
            LastSent::FastRtx => {
                len = self.seg_len(self.snd_una) as u64;
                self.retransmit_pending = true;
                self.stats.fast_retransmits -= 1;
            }
            LastSent::GoBackN => {
                let start = self.snd_una + (self.snd_nxt - self.snd_una - 1) / self.mss as u64 * self.mss as u64;
                len = self.snd_nxt - start;
                self.snd_nxt = start;
                self.stats.timeout_retransmits -= 1;
            }
            LastSent::Sack { i, forced } => {
                let start = self.record_start(i);
                let r = &mut self.sent[i];
                debug_assert!(r.rexmit_in_flight);
                r.rexmit_in_flight = false;
                len = r.end - start;
                self.retrans_out -= 1;
                self.rxt_upto = self.rxt_upto.min(start);
                if self.state == CaState::Loss {
                    self.stats.timeout_retransmits -= 1;
                } else {
                    self.stats.fast_retransmits -= 1;
                }
                self.retransmit_pending |= forced;
            }
            LastSent::ProbeRtx(l) => {
                len = l;
                self.tlp_high_seq = None;
                self.stats.tlp_probes -= 1;
                self.stats.fast_retransmits -= 1;
            }
        }
        if counted_prr {
            self.prr_out = self.prr_out.saturating_sub(1);
        }
        self.stats.segments_sent -= 1;
        self.stats.bytes_sent -= len;
        self.stats.local_drops += 1;
        self.on_local_congestion(now);
    }

    /// Local congestion (Linux 6.1 `tcp_enter_cwr`, called from `__tcp_transmit_skb` on
    /// NET_XMIT_DROP and NET_XMIT_CN): from Open, ssthresh from the congestion control,
    /// PRR starts (`tcp_init_cwnd_reduction`) and the state is CWR until everything sent so far
    /// is acknowledged; in CWR, Recovery or Loss nothing changes.
    pub fn on_local_congestion(&mut self, _now: Nanos) {
        if self.state != CaState::Open {
            return;
        }
        self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
        self.cwr_high = self.snd_max;
        self.prior_cwnd = (self.cwnd / self.mss as u64).max(1);
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.state = CaState::Cwr;
        self.stats.cwr_episodes += 1;
        self.tlp_high_seq = None;
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, now: Nanos, ack: Ack) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack.ack > self.snd_max {
            // Acknowledges data never sent: ignored (Linux drops such ACKs).
            return out;
        }
        if self.sack {
            out = self.on_ack_sack(now, ack);
        } else if ack.ack > self.snd_una {
            out = self.on_new_ack(now, ack);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una && ack.rwnd == self.rwnd {
            self.on_dupack();
        }
        self.rwnd = ack.rwnd;
        // Linux tcp_new_space → tcp_should_expand_sndbuf: the buffer grows while the sender is
        // cwnd-limited... and not while the flight fills cwnd.
        if out.newly_acked > 0 && self.sndbuf.is_some() && self.pipe() * (self.mss as u64) < self.cwnd {
            self.expand_sndbuf();
        }
        out
    }

    fn on_new_ack(&mut self, now: Nanos, a: Ack) -> AckOutcome {
        let ack = a.ack;
        let prior_in_flight = self.snd_nxt - self.snd_una;
        let newly = ack - self.snd_una;
        let rtt_sample = self.take_acked_records(now, ack).or(Some(now.saturating_sub(a.tsecr)));
        if let Some(r) = rtt_sample {
            self.rtt.on_sample(r);
            self.stats.rtt_samples += 1;
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.stats.bytes_acked = ack;
        self.dupacks = 0;
        self.rto_since_progress = false;
        let mut restart_timer = true;
        match self.state {
            CaState::Recovery if ack >= self.recover.unwrap_or(0) => {
                // Full ACK: leave recovery with cwnd = ssthresh (RFC 6582 3.2 step 3 option
                // 2; Linux tcp_end_cwnd_reduction).
                self.cwnd = self.ssthresh;
                self.state = CaState::Open;
            }
            CaState::Recovery => {
                // Partial ACK: retransmit the next hole, deflate by what was acknowledged and
                // add back one MSS if at least one was (step 5).
                self.retransmit_pending = true;
                self.cwnd = self.cwnd.saturating_sub(newly);
                if newly >= self.mss as u64 {
                    self.cwnd += self.mss as u64;
                }
                self.cwnd = self.cwnd.max(self.mss as u64);
                restart_timer = !self.partial_ack_seen;
                self.partial_ack_seen = true;
            }
            CaState::Loss => {
                if ack >= self.recover.unwrap_or(0) {
                    self.state = CaState::Open;
                }
                self.raise_cwnd(now, newly, prior_in_flight);
            }
            CaState::Cwr if ack > self.cwr_high => {
                // Linux tcp_end_cwnd_reduction.
                self.cwnd = self.ssthresh;
                self.state = CaState::Open;
            }
            CaState::Cwr => {
                self.delivered_now = newly.div_ceil(self.mss as u64);
                self.prr_cwnd(true);
            }
            CaState::Open => self.raise_cwnd(now, newly, prior_in_flight),
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.rto_deadline = Some(now + self.rtt.current_rto());
        }
        AckOutcome { newly_acked: newly, rtt_sample }
    }

    /// Drop the records `ack` covers; the RTT sample from the oldest of them not SACKed before,
    /// unless any was retransmitted (Karn; Linux `tcp_clean_rtx_queue`).
    fn take_acked_records(&mut self, now: Nanos, ack: u64) -> Option<Nanos> {
        let mut first_sent = None;
        let mut retransmitted = false;
        while let Some(&r) = self.sent.front() {
            if r.end > ack {
                break;
            }
            if !r.sacked {
                first_sent.get_or_insert(r.sent);
                if self.sack {
                    self.delivered_now += 1;
                    self.rack_advance(now, r.sent, r.end, r.retransmitted);
                }
                if !r.retransmitted && self.recover.is_some_and(|h| r.end <= h) {
                    self.orig_sack_acked = true;
                }
            }
            retransmitted |= r.retransmitted;
            self.sacked_out -= r.sacked as u32;
            self.lost_out -= r.lost as u32;
            self.retrans_out -= r.rexmit_in_flight as u32;
            self.sent.pop_front();
        }
        match first_sent {
            Some(t) if !retransmitted => Some(now - t),
            _ => None,
        }
    }

    fn on_dupack(&mut self) {
        self.dupacks += 1;
        self.stats.dupacks += 1;
        match self.state {
            // Each further dupACK means a segment left the network (step 4: inflate).
            CaState::Recovery => self.cwnd += self.mss as u64,
            // RFC 6582 3.2 step 2: only if the ACK covers more than `recover`.
            CaState::Open | CaState::Cwr
                if self.dupacks == DUPTHRESH && self.recover.is_none_or(|r| self.snd_una >= r) =>
            {
                self.enter_recovery()
            }
            _ => {}
        }
    }

    fn enter_recovery(&mut self) {
        // Linux tcp_enter_recovery: a CWR episode already set ssthresh.
        if self.state != CaState::Cwr {
            self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
        }
        self.recover = Some(self.snd_max);
        self.state = CaState::Recovery;
        self.partial_ack_seen = false;
        self.retransmit_pending = true;
        self.cwnd = self.ssthresh + DUPTHRESH as u64 * self.mss as u64;
        self.stats.fast_recoveries += 1;
    }

    /// An ACK with SACK on: cumulative part, scoreboard update, RTT sample, recovery.
    fn on_ack_sack(&mut self, now: Nanos, a: Ack) -> AckOutcome {
        let prior_in_flight = self.snd_nxt - self.snd_una;
        self.delivered_now = 0;
        self.orig_sack_acked = false;
        self.frto_new_only = false;
        let mut dup = false;
        let newly = a.ack.saturating_sub(self.snd_una);
        let mut rtt_sample = None;
        if newly > 0 {
            rtt_sample = self.take_acked_records(now, a.ack);
            self.snd_una = a.ack;
            self.snd_nxt = self.snd_nxt.max(a.ack);
            self.stats.bytes_acked = a.ack;
            self.dupacks = 0;
            self.rto_since_progress = false;
        } else if a.ack == self.snd_una && self.snd_max > self.snd_una && a.rwnd == self.rwnd {
            self.dupacks += 1;
            self.stats.dupacks += 1;
            dup = true;
        }
        let sacked_before = self.stats.sacked_segments;
        let sack_sent = self.tag_sacks(now, &a.sack);
        let newly_sacked = self.stats.sacked_segments > sacked_before;
        // Linux tcp_ack_update_rtt: the cumulative sample, else the SACK one, else the echo.
        let rtt_sample = rtt_sample.or(sack_sent.map(|t| now - t)).or((newly > 0).then(|| now.saturating_sub(a.tsecr)));
        if let Some(r) = rtt_sample {
            self.rtt.on_sample(r);
            self.stats.rtt_samples += 1;
        }
        if self.tlp_mode.is_some() {
            self.process_tlp_ack(a.ack, newly, dup && !newly_sacked);
        }
        if self.state == CaState::Loss && self.frto && self.frto_step(newly, newly_sacked || dup) {
            // A spurious RTO undone: back in Open with the window before it.
            self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rtt.current_rto());
            self.schedule_tlp(now);
            return AckOutcome { newly_acked: newly, rtt_sample };
        }
        if newly > 0 {
            match self.state {
                CaState::Recovery if a.ack >= self.recover.unwrap_or(0) => {
                    // Leave recovery with cwnd = ssthresh (Linux tcp_end_cwnd_reduction).
                    self.cwnd = self.ssthresh;
                    self.state = CaState::Open;
                }
                // Partial ACK: PRR sets cwnd below; the scoreboard says what to send.
                CaState::Recovery => {}
                CaState::Loss => {
                    if a.ack >= self.recover.unwrap_or(0) {
                        self.state = CaState::Open;
                    }
                    self.raise_cwnd(now, newly, prior_in_flight);
                }
                CaState::Cwr if a.ack > self.cwr_high => {
                    // Linux tcp_end_cwnd_reduction.
                    self.cwnd = self.ssthresh;
                    self.state = CaState::Open;
                }
                // PRR below.
                CaState::Cwr => {}
                CaState::Open => self.raise_cwnd(now, newly, prior_in_flight),
            }
            // Linux rearms the timer on every ACK of new data.
            self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rtt.current_rto());
        }
        let Some(era) = self.rack_mode else {
            // Linux tcp_time_to_recover without RACK: DupThresh segments SACKed, i.e. the first
            // un-SACKed segment is lost by RFC 6675 IsLost.
            if matches!(self.state, CaState::Open | CaState::Cwr) && self.sacked_out >= DUPTHRESH {
                self.enter_recovery_sack();
            }
            if self.state == CaState::Recovery {
                let newly_lost = self.mark_lost();
                self.detect_lost_retransmits(now);
                self.prr_cwnd(newly > 0 && newly_lost == 0);
            } else if self.state == CaState::Cwr {
                self.prr_cwnd(newly > 0);
            }
            self.after_ack_timers(now, newly);
            return AckOutcome { newly_acked: newly, rtt_sample };
        };
        let mut newly_lost = 0;
        match era {
            // Linux 6.1 tcp_identify_packet_loss: RACK in every state; tcp_time_to_recover:
            // recovery once something is lost (no DupThresh rule).
            LossEra::Linux6_1 => {
                newly_lost = self.rack_mark_lost(now);
                if matches!(self.state, CaState::Open | CaState::Cwr) && self.lost_out > 0 {
                    self.enter_recovery_sack();
                }
            }
            // Linux 4.9: DupThresh as before, RACK beside it in Recovery and Loss.
            LossEra::Linux4_9 => {
                if matches!(self.state, CaState::Open | CaState::Cwr)
                    && (self.sacked_out >= DUPTHRESH || self.lost_out > 0)
                {
                    self.enter_recovery_sack();
                }
                if self.state == CaState::Recovery {
                    newly_lost = self.mark_lost();
                }
                if matches!(self.state, CaState::Recovery | CaState::Loss) {
                    newly_lost += self.rack_mark_lost(now);
                }
            }
        }
        if self.state == CaState::Recovery {
            self.prr_cwnd(newly > 0 && newly_lost == 0);
        } else if self.state == CaState::Cwr {
            self.prr_cwnd(newly > 0);
        }
        self.after_ack_timers(now, newly);
        AckOutcome { newly_acked: newly, rtt_sample }
    }

    fn enter_recovery_sack(&mut self) {
        // Linux tcp_enter_recovery: a CWR episode under way keeps its ssthresh and PRR counts.
        if self.state != CaState::Cwr {
            self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
            // Linux tcp_init_cwnd_reduction; PRR sets cwnd on this same ACK.
            self.prior_cwnd = (self.cwnd / self.mss as u64).max(1);
            self.prr_delivered = 0;
            self.prr_out = 0;
        }
        self.recover = Some(self.snd_max);
        self.state = CaState::Recovery;
        self.retransmit_pending = true;
        self.stats.fast_recoveries += 1;
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
    }

    /// PRR (RFC 6937 as Linux `tcp_cwnd_reduction` does it), on every ACK in recovery that
    /// delivered something: while pipe is above ssthresh, send ssthresh/prior_cwnd segments per
    /// segment delivered (proportional rate reduction); at or below it, catch up towards
    /// ssthresh by at most what was delivered, + 1 if the ACK advanced snd_una and found no new
    /// loss (slow-start reduction bound). cwnd = pipe + what may be sent now; the first
    /// retransmission always goes.
    fn prr_cwnd(&mut self, una_advanced_no_loss: bool) {
        let delivered = self.delivered_now;
        if delivered == 0 {
            return;
        }
        self.prr_delivered += delivered;
        let ssthresh = self.ssthresh / self.mss as u64;
        let pipe = self.pipe();
        let mut sndcnt = if pipe > ssthresh {
            (ssthresh * self.prr_delivered).div_ceil(self.prior_cwnd).saturating_sub(self.prr_out)
        } else {
            let limit = (self.prr_delivered.saturating_sub(self.prr_out)).max(delivered) + una_advanced_no_loss as u64;
            limit.min(ssthresh - pipe)
        };
        if self.prr_out == 0 {
            // The fast retransmission goes out in any case.
            sndcnt = sndcnt.max(1);
        }
        self.cwnd = (pipe + sndcnt) * self.mss as u64;
    }

    /// Slow start then congestion avoidance, only while the sender is cwnd-limited (Linux
    /// `tcp_is_cwnd_limited`: in slow start cwnd < 2 × flight, else flight filled cwnd).
    fn raise_cwnd(&mut self, now: Nanos, acked: u64, prior_in_flight: u64) {
        let mut acked = acked.min(ABC_LIMIT_SEGMENTS * self.mss as u64);
        let limited = if self.cwnd < self.ssthresh {
            self.cwnd < 2 * prior_in_flight
        } else {
            prior_in_flight + self.mss as u64 > self.cwnd
        };
        if !limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            let new = (self.cwnd + acked).min(self.ssthresh);
            acked -= new - self.cwnd;
            self.cwnd = new;
            if acked == 0 {
                return;
            }
        }
        self.cwnd = self.cc.cong_avoid(now, self.cwnd, acked, self.mss, self.rtt.min_rtt());
    }

    /// When the retransmission timer fires, if armed.
    pub fn next_timer(&self) -> Option<Nanos> {
        let t = self.rto_deadline;
        let t = match (t, self.tlp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (t, self.reo_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Call at (or after) `next_timer`; an early call does nothing.
    pub fn on_timer(&mut self, now: Nanos) {
        if self.reo_deadline.is_some_and(|d| now >= d) {
            self.on_reo_timer(now);
        }
        if self.tlp_deadline.is_some_and(|d| now >= d) {
            self.on_tlp_timer(now);
            return;
        }
        match self.rto_deadline {
            Some(d) if now >= d => {}
            _ => return,
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.stats.rtos += 1;
        // Linux tcp_enter_loss: a new ssthresh unless this RTO continues a recovery episode
        // or an earlier RTO with no progress since.
        let in_episode = self.state != CaState::Open && self.recover.is_some_and(|r| self.snd_una < r);
        if !in_episode || (self.state == CaState::Loss && !self.rto_since_progress) {
            if self.frto_enabled {
                // Linux tcp_enter_loss: prior_ssthresh = tcp_current_ssthresh, prior_cwnd.
                let segs = self.cwnd / self.mss as u64;
                self.undo_ssthresh = if matches!(self.state, CaState::Cwr | CaState::Recovery) {
                    self.ssthresh
                } else {
                    self.ssthresh.max(((segs >> 1) + (segs >> 2)) * self.mss as u64)
                };
                self.undo_cwnd = self.cwnd;
            }
            self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
        }
        // F-RTO (Linux tcp_enter_loss): from Open/Disorder/CWR, or a repeated timeout.
        self.frto =
            self.frto_enabled && (matches!(self.state, CaState::Open | CaState::Cwr) || self.rto_since_progress);
        self.frto_new_only = false;
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.tlp_due = false;
        self.reo_deadline = None;
        self.cc.on_rto();
        self.cwnd = self.mss as u64;
        self.state = CaState::Loss;
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.retransmit_pending = false;
        self.rto_since_progress = true;
        if self.sack {
            // Lost segments are resent in order as cwnd allows, SACKed ones not at all.
            self.rto_mark_lost();
        } else {
            // Go-back-N: everything outstanding is resent; none of it may give an RTT sample.
            self.snd_nxt = self.snd_una;
            for r in self.sent.iter_mut() {
                r.retransmitted = true;
            }
        }
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.current_rto());
    }

    /// The application writes `n` more bytes (a bulk transfer of a known size).
    pub fn write_more(&mut self, n: u64) {
        if self.app_end != u64::MAX {
            self.app_end += n;
        }
    }

    /// The application writes nothing more: the transfer ends with what has been sent.
    pub fn close(&mut self) {
        self.app_end = self.app_end.min(self.snd_max);
    }

    /// Everything the application wrote has been acknowledged (never for `Unlimited`).
    #[cfg(test)]
    pub fn is_done(&self) -> bool {
        self.app_end != u64::MAX && self.snd_una >= self.app_end
    }

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold, bytes (`u64::MAX` until the first congestion event).
    #[cfg(test)]
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    #[cfg(test)]
    pub fn state(&self) -> CaState {
        self.state
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    #[cfg(test)]
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{CcKind, SackBlocks, DEFAULT_RCV_WND, RTO_INITIAL};

    const M: u64 = 1448;

    fn ack(n: u64) -> Ack {
        Ack::new(n, DEFAULT_RCV_WND, Nanos::ZERO)
    }

    fn drain(s: &mut TcpSender, now: Nanos) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    #[test]
    fn initial_window_is_ten_segments_and_slow_start_doubles() {
        let mut s = TcpSender::new(&TcpConfig::new(CcKind::NewReno), AppLimit::Unlimited);
        let t0 = Nanos::ZERO;
        let first = drain(&mut s, t0);
        assert_eq!(first.len(), 10);
        assert_eq!(first[9], Segment { seq: 9 * M, len: M as u32, tsval: t0, retransmission: false });
        assert_eq!(s.next_timer(), Some(RTO_INITIAL), "RTO armed with the initial 1 s");
        // Five delayed ACKs of two segments each: +2 MSS each, 20 segments out.
        let t1 = Nanos::from_ms(20);
        let mut sent = 0;
        for i in 1..=5 {
            let o = s.on_ack(t1, ack(2 * i * M));
            assert_eq!(o.newly_acked, 2 * M);
            sent += drain(&mut s, t1).len();
        }
        assert_eq!(s.cwnd(), 20 * M);
        assert_eq!(sent, 20);
        assert_eq!(s.rtt().srtt(), Some(Nanos::from_ms(20)));
    }

    #[test]
    fn bulk_tail_is_a_short_segment_and_done_after_its_ack() {
        let mut s = TcpSender::new(&TcpConfig::new(CcKind::Cubic), AppLimit::Bytes(2 * M + 5));
        let segs = drain(&mut s, Nanos::ZERO);
        assert_eq!(segs.len(), 3);
        assert_eq!(segs[2].len, 5);
        assert!(!s.is_done());
        s.on_ack(Nanos::from_ms(1), ack(2 * M + 5));
        assert!(s.is_done());
        assert_eq!(s.next_timer(), None, "nothing outstanding, timer stopped");
    }

    #[test]
    fn window_update_is_not_a_dupack() {
        let mut s = TcpSender::new(&TcpConfig::new(CcKind::NewReno), AppLimit::Unlimited);
        drain(&mut s, Nanos::ZERO);
        for w in 1..=4 {
            s.on_ack(Nanos::from_ms(1), Ack::new(0, DEFAULT_RCV_WND - w, Nanos::ZERO));
        }
        assert_eq!(s.stats().dupacks, 0);
        assert_eq!(s.state(), CaState::Open);
    }

    fn sack_ack(n: u64, blocks: &[(u64, u64)]) -> Ack {
        Ack { sack: SackBlocks::from_slice(blocks), ..ack(n) }
    }

    /// Segments `a..b` as a SACK block.
    fn segs(a: u64, b: u64) -> (u64, u64) {
        (a * M, b * M)
    }

    fn seqs(out: &[Segment]) -> Vec<(u64, bool)> {
        out.iter().map(|g| (g.seq / M, g.retransmission)).collect()
    }

    #[test]
    fn sack_scoreboard_pipe_and_prr_step_by_step() {
        // Segments 1 and 2 of the first window are lost; 3.. arrive and are SACKed one by one.
        let mut s = TcpSender::new(&TcpConfig::new(CcKind::NewReno), AppLimit::Unlimited);
        let t = Nanos::from_ms(20);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
        // Segment 0 acknowledged: slow start, cwnd 11, segments 10 and 11 go out.
        s.on_ack(t, ack(M));
        assert_eq!(seqs(&drain(&mut s, t)), [(10, false), (11, false)]);
        assert_eq!((s.pipe(), s.cwnd() / M), (11, 11));
        // Two SACKed segments: each lets one new segment out (limited transmit), still Open.
        for (k, new) in [(4, 12), (5, 13)] {
            s.on_ack(t, sack_ack(M, &[segs(3, k)]));
            assert_eq!(seqs(&drain(&mut s, t)), [(new, false)]);
            assert_eq!((s.pipe(), s.state()), (11, CaState::Open));
            s.check_scoreboard();
        }
        // The third: segments 1 and 2 have 3 SACKed segments above them and are lost; recovery
        // with ssthresh = 11 / 2 = 5; pipe = 13 outstanding - 3 SACKed - 2 lost = 8. PRR
        // allows ceil(5 · 1 / 11) = 1 segment: the retransmission of 1.
        s.on_ack(t, sack_ack(M, &[segs(3, 6)]));
        assert_eq!((s.state(), s.ssthresh() / M, s.pipe()), (CaState::Recovery, 5, 8));
        assert_eq!(seqs(&drain(&mut s, t)), [(1, true)]);
        assert_eq!(s.pipe(), 9, "the retransmission is in flight");
        s.check_scoreboard();
        // 4th SACKed segment: 2 delivered, ceil(5 · 2 / 11) = 1 = what was sent: nothing.
        s.on_ack(t, sack_ack(M, &[segs(3, 7)]));
        assert_eq!((s.pipe(), drain(&mut s, t).len()), (8, 0));
        // 5th: ceil(15 / 11) = 2, one more: the retransmission of 2.
        s.on_ack(t, sack_ack(M, &[segs(3, 8)]));
        assert_eq!(seqs(&drain(&mut s, t)), [(2, true)]);
        assert_eq!(s.pipe(), 8);
        // Segment 1's retransmission arrives: partial ACK; pipe = 12 - 5 - 1 + 1 = 7, and PRR
        // (4 delivered: ceil(20 / 11) = 2 = sent) lets nothing out.
        s.on_ack(t, sack_ack(2 * M, &[segs(3, 8)]));
        assert_eq!((s.pipe(), s.state(), drain(&mut s, t).len()), (7, CaState::Recovery, 0));
        s.check_scoreboard();
        // Everything up to the recovery point (14 segments) acknowledged: Open, cwnd = ssthresh.
        s.on_ack(t, ack(14 * M));
        assert_eq!((s.state(), s.cwnd() / M, s.pipe()), (CaState::Open, 5, 0));
        let st = s.stats();
        assert_eq!((st.fast_recoveries, st.fast_retransmits, st.sacked_segments, st.rtos), (1, 2, 5, 0));
        s.check_scoreboard();
    }

    #[test]
    fn rwnd_limits_what_is_in_flight() {
        let mut cfg = TcpConfig::new(CcKind::NewReno);
        cfg.rcv_wnd = 3 * M;
        let mut s = TcpSender::new(&cfg, AppLimit::Unlimited);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 3);
        s.on_ack(Nanos::from_ms(1), Ack::new(M, 3 * M, Nanos::ZERO));
        assert_eq!(drain(&mut s, Nanos::from_ms(1)).len(), 1);
        assert_eq!(s.cwnd(), 10 * M, "not cwnd-limited: cwnd does not grow");
    }
}

/// Kernel eras: socket buffers, local congestion, TCP Small Queues (hand-computed values).
#[cfg(test)]
mod era_tests {
    use super::*;
    use crate::tcp::{CcKind, KernelEra, TcpReceiver};

    const M: u64 = 1448;

    fn drain(s: &mut TcpSender, now: Nanos) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn seg(k: u64, t: Nanos) -> Segment {
        Segment { seq: k * M, len: M as u32, tsval: t, retransmission: false }
    }

    #[test]
    fn linux_2_4_receive_buffer_offers_65535_and_limits_the_flight() {
        let cfg = KernelEra::Linux2_4.config(CcKind::NewReno);
        // tcp_rmem[1] = 87380, tcp_adv_win_scale = 2: 87380 − 87380/4 = 65535.
        let r = TcpReceiver::new(&cfg);
        assert_eq!(r.window(), 65535);
        assert_eq!(cfg.initial_cwnd_segments, 2);
        let mut big = cfg;
        big.initial_cwnd_segments = 100;
        let mut s = TcpSender::new(&big, AppLimit::Unlimited);
        // ⌊65535 / 1448⌋ = 45 segments, whatever cwnd allows.
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 45);
    }

    #[test]
    fn send_buffer_limits_what_the_application_can_write() {
        let mut cfg = TcpConfig::new(CcKind::NewReno);
        cfg.sndbuf = Some(crate::tcp::SndBuf { wmem: [4096, 16384, 16384] });
        let mut s = TcpSender::new(&cfg, AppLimit::Unlimited);
        // sk_sndbuf = min(2 · 10 · 4352, 16384) = 16384; a segment costs 1448 + 896 = 2344
        // bytes of truesize: ⌊16384 / 2344⌋ = 6 segments though cwnd allows 10.
        assert_eq!(s.sndbuf(), 16384);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 6);
        // Without the limit the tcp_wmem[2] of 6.1 (4 MiB): 2 · 10 · 4352 = 87040.
        let s = TcpSender::new(&KernelEra::Linux6_1.config(CcKind::Cubic), AppLimit::Unlimited);
        assert_eq!(s.sndbuf(), 87040);
    }

    #[test]
    fn autotuning_grows_the_buffer_after_one_receiver_rtt() {
        let mut r = TcpReceiver::new(&KernelEra::Linux6_1.config(CcKind::Cubic));
        // 6.1: sk_rcvbuf 131072, window 131072 − 65536 = 65536, rcvq_space 10 · 1448.
        assert_eq!((r.rcvbuf(), r.window()), (Some(131072), 65536));
        // One segment per millisecond, in order. The receiver's RTT is the time to receive
        // one window: from the first segment (t = 0, window edge 1448 + 65536) to rcv_nxt ≥
        // 66984, the 47th segment (t = 46 ms).
        // The application reads each segment at the instant it arrives (the receiver's timer).
        let arrive = |r: &mut TcpReceiver, k: u64| {
            let t = Nanos::from_ms(k);
            r.on_segment(t, seg(k, t));
            assert_eq!(r.next_timer(), Some(t), "the read is due at once");
            r.on_timer(t);
        };
        for k in 0..46 {
            arrive(&mut r, k);
            assert_eq!(r.rcvbuf(), Some(131072));
        }
        arrive(&mut r, 46);
        assert_eq!(r.rcv_rtt(), Some(Nanos::from_ms(46)));
        // copied = 47 · 1448 = 68056 > 14480: rcvwin = 2 · 68056 + 16 · 1448 = 159280, grow =
        // 159280 · (68056 − 14480) / 14480 = 589336, rcvwin = 1337952; rcvmem = 2344 + 5 · 128 =
        // 2984 (the first with a window of at least one MSS); rcvbuf = ⌊1337952 / 1448⌋ · 2984 =
        // 2757216 < tcp_rmem[2]; the window is half of it.
        assert_eq!(r.rcvbuf(), Some(2757216));
        assert_eq!(r.window(), 1378608);
    }

    fn local_drop_enters_cwr(cc: CcKind, ssthresh_segments: u64) {
        let mut s = TcpSender::new(&TcpConfig::new(cc), AppLimit::Unlimited);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
        // Five ACKs of two segments: slow start to cwnd 20, 20 segments out.
        let t = Nanos::from_ms(20);
        let mut out = 0;
        for i in 1..=5 {
            s.on_ack(t, Ack::new(2 * i * M, crate::tcp::DEFAULT_RCV_WND, Nanos::ZERO));
            out += drain(&mut s, t).len();
        }
        assert_eq!((s.cwnd() / M, out), (20, 20));
        // The ACK of two more lets two segments out; the host's qdisc refuses the second.
        let t2 = Nanos::from_ms(21);
        s.on_ack(t2, Ack::new(12 * M, crate::tcp::DEFAULT_RCV_WND, Nanos::ZERO));
        let cwnd_before = s.cwnd() / M;
        assert_eq!(cwnd_before, 22);
        let a = s.poll_transmit(t2).unwrap();
        let b = s.poll_transmit(t2).unwrap();
        assert_eq!((a.seq / M, b.seq / M), (30, 31));
        s.on_local_drop(t2);
        // tcp_enter_cwr: ssthresh from cwnd 22 (NewReno 11, CUBIC ⌊0.7 · 22⌋ = 15), the
        // refused segment is unsent again.
        assert_eq!((s.state(), s.ssthresh() / M), (CaState::Cwr, ssthresh_segments));
        assert_eq!((s.snd_max() / M, s.stats().local_drops, s.stats().segments_sent), (31, 1, 31));
        // Segment 31 goes again once PRR allows: every ACK delivers and cwnd follows pipe.
        let mut t3 = Nanos::from_ms(30);
        let mut sent = vec![];
        for k in 13..=31u64 {
            s.on_ack(t3, Ack::new(k * M, crate::tcp::DEFAULT_RCV_WND, Nanos::ZERO));
            sent.extend(drain(&mut s, t3).into_iter().map(|g| g.seq / M));
            t3 += Nanos::from_ms(1);
            assert_eq!(s.state(), CaState::Cwr, "in CWR until beyond high_seq = 31 segments");
        }
        assert_eq!(sent[0], 31, "the refused segment is the first sent again");
        let top = s.snd_max();
        s.on_ack(t3, Ack::new(top, crate::tcp::DEFAULT_RCV_WND, Nanos::ZERO));
        // tcp_end_cwnd_reduction: cwnd = ssthresh.
        assert_eq!((s.state(), s.cwnd() / M), (CaState::Open, ssthresh_segments));
        assert_eq!(s.stats().cwr_episodes, 1);
        s.check_scoreboard();
    }

    #[test]
    fn a_local_drop_enters_cwr_newreno() {
        local_drop_enters_cwr(CcKind::NewReno, 11);
    }

    #[test]
    fn a_local_drop_enters_cwr_cubic() {
        local_drop_enters_cwr(CcKind::Cubic, 15);
    }

    #[test]
    fn tsq_limit_from_the_pacing_rate() {
        let mut s = TcpSender::new(&TcpConfig::new(CcKind::Cubic), AppLimit::Unlimited);
        assert_eq!(s.tsq_limit(1 << 20, 10), 1 << 20, "no SRTT yet: tcp_limit_output_bytes");
        drain(&mut s, Nanos::ZERO);
        let t = Nanos::from_ms(20);
        for i in 1..=5 {
            s.on_ack(t, Ack::new(2 * i * M, crate::tcp::DEFAULT_RCV_WND, t - Nanos::from_ms(20)));
            drain(&mut s, t);
        }
        assert_eq!(s.rtt().srtt(), Some(Nanos::from_ms(20)));
        // Slow start: rate = 1448 · 2 · 20 segments / 20 ms = 2 896 000 B/s. Shift 10:
        // 2828 < 2 · 2344 = 4688; mac80211's 7: 22625; capped by the sysctl.
        assert_eq!(s.tsq_limit(1 << 20, 10), 4688);
        assert_eq!(s.tsq_limit(1 << 20, 7), 22625);
        assert_eq!(s.tsq_limit(10000, 7), 10000);
    }
}
