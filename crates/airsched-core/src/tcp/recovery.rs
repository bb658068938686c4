//! Loss recovery beside the sender's state machine, as Linux keeps it in
//! `net/ipv4/tcp_recovery.c` (RACK: `tcp_rack_advance`, `tcp_rack_detect_loss`,
//! `tcp_rack_mark_lost`, `tcp_rack_reo_timeout`, `tcp_rack_reo_wnd`), with the tail loss probe
//! of `net/ipv4/tcp_output.c` (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`) and
//! `tcp_input.c` (`tcp_process_tlp_ack`), and F-RTO of `tcp_input.c` (`tcp_process_loss`,
//! `tcp_try_undo_loss`), in the 4.9 and 6.1 variants `TcpConfig::rack`, `tlp` and `frto` select;
//! also the default model's RACK rule for retransmissions in recovery
//! (`detect_lost_retransmits`). Methods of [`TcpSender`], called from its ACK and timer
//! handlers in `super` (docs/model-tcp.md, "RACK, TLP and F-RTO").

use super::{CaState, LastSent, TcpSender, DUPTHRESH};
use crate::tcp::{LossEra, Segment, RTO_INITIAL, RTO_MIN};
use crate::time::Nanos;

impl TcpSender {
    // ----- TLP --------------------------------------------------------------------------------

    /// Linux `tcp_schedule_loss_probe` (6.1; 4.9 where it differs): with SACK, something
    /// outstanding and the state Open (4.9) or Open/CWR (6.1), the probe timer is armed at
    /// PTO from now, but no later than the RTO would fire.
    pub(super) fn schedule_tlp(&mut self, now: Nanos) {
        self.tlp_deadline = None;
        let Some(era) = self.tlp_mode else { return };
        let ok_state = match era {
            LossEra::Linux4_9 => self.state == CaState::Open,
            LossEra::Linux6_1 => matches!(self.state, CaState::Open | CaState::Cwr),
        };
        if self.sent.is_empty() || !ok_state || self.reo_deadline.is_some() {
            return;
        }
        let mut pto = self.pto();
        if let Some(d) = self.rto_deadline {
            if d > now {
                pto = pto.min(d - now);
            }
        }
        self.tlp_deadline = Some(now + pto);
    }

    /// The probe timeout. 6.1: 2 SRTT plus `TCP_RTO_MIN` (200 ms, the peer's delayed ACK)
    /// with one segment out, else plus `TCP_TIMEOUT_MIN` (2 ms); `TCP_TIMEOUT_INIT` (1 s)
    /// before an RTT sample. 4.9: 2 SRTT, at least 1.5 SRTT + `TCP_DELACK_MAX` (200 ms) with
    /// one segment out, at least 10 ms. (Linux rounds up to jiffies; the model does not.)
    pub fn pto(&self) -> Nanos {
        let one = self.sent.len() == 1;
        let Some(srtt) = self.rtt.srtt() else { return RTO_INITIAL };
        match self.tlp_mode {
            Some(LossEra::Linux4_9) => {
                let mut t = Nanos(2 * srtt.0);
                if one {
                    t = t.max(Nanos(srtt.0 + srtt.0 / 2) + Nanos::from_ms(200));
                }
                t.max(Nanos::from_ms(10))
            }
            _ => Nanos(2 * srtt.0) + if one { RTO_MIN } else { Nanos::from_ms(2) },
        }
    }

    /// The probe timer fired (Linux `tcp_send_loss_probe`): at most one probe outstanding;
    /// otherwise the next poll sends the probe.
    pub(super) fn on_tlp_timer(&mut self, now: Nanos) {
        self.tlp_deadline = None;
        if self.tlp_high_seq.is_some() || self.sent.is_empty() {
            self.rto_deadline = Some(now + self.rtt.current_rto());
            return;
        }
        self.tlp_due = true;
    }

    /// The probe: a new segment if the application has one and the receive window allows
    /// (regardless of cwnd: `tcp_write_xmit` with push_one = 2), else the last segment sent
    /// again. Then `tlp_high_seq` = `snd_nxt` and the RTO restarts from now.
    pub(super) fn loss_probe(&mut self, now: Nanos) -> Option<Segment> {
        let seg = if let Some(seg) = self.new_segment_inner(now, true) {
            self.tlp_retrans = false;
            seg
        } else {
            let i = self.sent.len().checked_sub(1)?;
            let start = self.record_start(i);
            let r = &mut self.sent[i];
            if r.sacked || r.lost {
                // A SACKed tail needs no probe; a lost one is RACK's (the model keeps
                // "only lost segments are resent" for its retransmission queue).
                self.rto_deadline = Some(now + self.rtt.current_rto());
                return None;
            }
            r.retransmitted = true;
            r.sent = now;
            let len = r.end - start;
            self.last = LastSent::ProbeRtx(len);
            self.tlp_retrans = true;
            // Linux counts it in total_retrans (`__tcp_retransmit_skb`).
            self.stats.fast_retransmits += 1;
            Segment { seq: start, len: len as u32, tsval: now, retransmission: true }
        };
        self.tlp_high_seq = Some(self.snd_max);
        self.stats.tlp_probes += 1;
        self.rto_deadline = Some(now + self.rtt.current_rto());
        Some(seg)
    }

    /// Linux 6.1 `tcp_process_tlp_ack` without D-SACK: an ACK beyond `tlp_high_seq` after a
    /// probe that resent data means the probe repaired a loss: cwnd is reduced once
    /// (`tcp_init_cwnd_reduction`, `tcp_end_cwnd_reduction`: cwnd = ssthresh) and the state
    /// stays Open; after a probe of new data, or a pure duplicate ACK, the probe is forgotten.
    pub(super) fn process_tlp_ack(&mut self, ack: u64, newly: u64, dup: bool) {
        let Some(high) = self.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            self.tlp_high_seq = None;
        } else if ack > high {
            self.tlp_high_seq = None;
            if matches!(self.state, CaState::Open | CaState::Cwr) {
                self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
                self.cwnd = self.ssthresh;
                self.state = CaState::Open;
            }
            self.stats.tlp_recoveries += 1;
        } else if newly == 0 && dup {
            self.tlp_high_seq = None;
        }
    }

    /// Linux `tcp_set_xmit_timer` after an ACK of new data: the loss probe if one may be
    /// scheduled (not while RACK's reordering timer runs), else the RTO timer as set above.
    pub(super) fn after_ack_timers(&mut self, now: Nanos, newly: u64) {
        if self.tlp_mode.is_none() {
            return;
        }
        if newly > 0 || !matches!(self.state, CaState::Open | CaState::Cwr) {
            self.schedule_tlp(now);
        }
    }

    // ----- F-RTO ------------------------------------------------------------------------------

    /// F-RTO (RFC 5682 §3.1 SACK-enhanced, as Linux 6.1 `tcp_process_loss` with `tcp_frto` =
    /// 2), on an ACK in Loss. Returns true when the RTO was found spurious and undone.
    /// - Step 3b: the ACK (S)ACKed never-retransmitted data sent before the RTO (`recover`):
    ///   spurious; undo (`tcp_try_undo_loss`).
    /// - Step 3a: new data has been sent since the RTO (`snd_max` beyond `recover`) and this
    ///   ACK SACKed something or was a duplicate: the loss was real, F-RTO ends.
    /// - Step 2b: the first ACK that advances `snd_una` (not to `recover`): `recover` moves to
    ///   `snd_max` and the polls after it send new data only, if the application and the
    ///   receive window have some; otherwise F-RTO ends.
    pub(super) fn frto_step(&mut self, newly: u64, sacked_or_dup: bool) -> bool {
        let recover = self.recover.unwrap_or(0);
        if self.orig_sack_acked {
            self.undo_loss();
            return true;
        }
        if self.snd_max > recover {
            if sacked_or_dup {
                self.frto = false;
            }
        } else if newly > 0 && self.snd_una < recover {
            self.recover = Some(self.snd_max);
            if self.snd_max < self.app_end && self.snd_max < self.snd_una + self.rwnd {
                self.frto_new_only = true;
            } else {
                self.frto = false;
            }
        }
        false
    }

    /// Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction(sk, true)`: cwnd =
    /// max(cwnd, prior_cwnd) (`tcp_reno_undo_cwnd`, which CUBIC uses too), ssthresh back if it
    /// was higher, every loss mark cleared, Open.
    pub(super) fn undo_loss(&mut self) {
        if self.undo_ssthresh != 0 {
            self.cwnd = self.cwnd.max(self.undo_cwnd);
            self.ssthresh = self.ssthresh.max(self.undo_ssthresh);
        }
        for r in self.sent.iter_mut() {
            r.lost = false;
            r.rexmit_in_flight = false;
        }
        self.lost_out = 0;
        self.retrans_out = 0;
        self.lost_upto = self.snd_una;
        self.rxt_upto = self.snd_max;
        self.undo_ssthresh = 0;
        self.frto = false;
        self.frto_new_only = false;
        self.state = CaState::Open;
        self.rto_since_progress = false;
        self.rack_advanced = true;
        self.stats.spurious_rtos += 1;
    }

    // ----- RACK -------------------------------------------------------------------------------

    /// A segment sent at `sent` was delivered (SACKed or cumulatively acknowledged, not SACKed
    /// before): Linux `tcp_rack_advance`, in recovery only. There every retransmitted segment
    /// was marked lost by the DupThresh rule, which is exact when nothing reorders, so its
    /// delivery is the retransmission's. (After an RTO the original of a retransmitted
    /// segment may still be queued: Linux then guesses from the minimum RTT; the model does
    /// not use RACK in that state.)
    pub(super) fn rack_advance(&mut self, now: Nanos, sent: Nanos, end: u64, retransmitted: bool) {
        let rtt = now - sent;
        let ambiguous = retransmitted && self.rtt.min_rtt().is_some_and(|m| rtt < m);
        match self.rack_mode {
            None => {
                if self.state != CaState::Recovery || ambiguous {
                    return;
                }
                self.rack_rtt = rtt;
                self.rack_xmit = self.rack_xmit.max(sent);
            }
            // Linux 4.9 tcp_rack_advance: only a later send time counts.
            Some(LossEra::Linux4_9) => {
                if sent <= self.rack_xmit && self.rack_xmit != Nanos::ZERO || ambiguous {
                    return;
                }
                self.rack_rtt = rtt;
                self.rack_xmit = sent;
                self.rack_end = end;
                self.rack_advanced = true;
            }
            // Linux 6.1 tcp_rack_advance: rtt from every unambiguous delivery; the most
            // recently sent (ties by end_seq, tcp_skb_sent_after) is remembered.
            Some(LossEra::Linux6_1) => {
                if ambiguous {
                    return;
                }
                self.rack_advanced = true;
                self.rack_rtt = rtt;
                if sent > self.rack_xmit || (sent == self.rack_xmit && end > self.rack_end) {
                    self.rack_xmit = sent;
                    self.rack_end = end;
                }
            }
        }
    }

    /// Whether a segment sent at `sent` ending at `end` was sent before RACK's most recently
    /// delivered one (6.1 `tcp_skb_sent_after` with ties by end_seq; 4.9 strictly earlier).
    pub(super) fn rack_sent_before(&self, sent: Nanos, end: u64) -> bool {
        match self.rack_mode {
            Some(LossEra::Linux4_9) => sent < self.rack_xmit,
            _ => self.rack_xmit > sent || (self.rack_xmit == sent && self.rack_end > end),
        }
    }

    /// RACK's reordering window (Linux 6.1 `tcp_rack_reo_wnd`; no reordering is ever seen in
    /// the model, no D-SACK, so `reo_wnd_steps` stays 1): 0 in Recovery/Loss or once
    /// DupThresh segments are SACKed, else min(min_rtt / 4, SRTT). 4.9: 1 ms on send times.
    pub fn rack_reo_wnd(&self) -> Nanos {
        if self.rack_mode == Some(LossEra::Linux4_9) {
            return Nanos::from_ms(1);
        }
        if matches!(self.state, CaState::Recovery | CaState::Loss) || self.sacked_out >= DUPTHRESH {
            return Nanos::ZERO;
        }
        let m = self.rtt.min_rtt().map_or(Nanos::ZERO, |m| Nanos(m.0 / 4));
        self.rtt.srtt().map_or(m, |s| m.min(s))
    }

    /// How long segment `sent` may still wait before RACK calls it lost (≤ 0: lost now).
    /// 6.1 `tcp_rack_skb_timeout`: rack.rtt + reo_wnd − (now − sent). 4.9: lost at once if
    /// sent more than reo_wnd before rack.xmit_time, never by waiting.
    pub(super) fn rack_remaining(&self, now: Nanos, sent: Nanos, reo: Nanos) -> i64 {
        match self.rack_mode {
            Some(LossEra::Linux4_9) => {
                if self.rack_xmit.0 - sent.0 > reo.0 {
                    0
                } else {
                    i64::MIN
                }
            }
            _ => (self.rack_rtt.0 + reo.0) as i64 - (now.0 - sent.0) as i64,
        }
    }

    /// RACK (Linux 6.1 `tcp_rack_detect_loss`, 4.9 `tcp_rack_mark_lost`): every segment sent
    /// before the most recently delivered one, not SACKed and not already lost-and-waiting,
    /// is lost once RTT + reo_wnd has passed since it was sent; a lost retransmission becomes
    /// due again. Returns how many were newly marked and the longest wait of the others
    /// (the reordering timer's, 0: none). First transmissions are scanned in sequence order
    /// from the lost hint (their send times grow with it); retransmissions in flight all.
    pub(super) fn rack_detect_loss(&mut self, now: Nanos) -> (u32, i64) {
        let reo = self.rack_reo_wnd();
        let mut wait = 0i64;
        let mut marked = 0u32;
        // Retransmissions in flight (lost, with a retransmission outstanding).
        if self.retrans_out > 0 {
            let mut start = self.snd_una;
            let mut low = Nanos(u64::MAX);
            for i in 0..self.sent.len() {
                let r = self.sent[i];
                let r_start = start;
                start = r.end;
                if !r.rexmit_in_flight {
                    continue;
                }
                if !self.rack_sent_before(r.sent, r.end) {
                    low = low.min(r.sent);
                    continue;
                }
                let rem = self.rack_remaining(now, r.sent, reo);
                if rem <= 0 && rem != i64::MIN {
                    self.sent[i].rexmit_in_flight = false;
                    self.retrans_out -= 1;
                    self.rxt_upto = self.rxt_upto.min(r_start);
                    self.stats.lost_retransmits += 1;
                    marked += 1;
                } else {
                    wait = wait.max(rem);
                    low = low.min(r.sent);
                }
            }
            self.rexmit_low = low;
        }
        // First transmissions above the lost prefix.
        let mut orig_wait = false;
        let mut i = self.records_below(self.lost_upto);
        while i < self.sent.len() {
            let r = self.sent[i];
            if r.sacked || r.lost || r.retransmitted {
                i += 1;
                continue;
            }
            if !self.rack_sent_before(r.sent, r.end) {
                break;
            }
            let rem = self.rack_remaining(now, r.sent, reo);
            if rem <= 0 && rem != i64::MIN && !orig_wait {
                self.sent[i].lost = true;
                self.lost_out += 1;
                self.lost_upto = r.end;
                self.stats.rack_marked += 1;
                marked += 1;
            } else if rem != i64::MIN {
                // Later ones were sent later still: keep the prefix, find the longest wait.
                orig_wait = true;
                wait = wait.max(rem.max(1));
            } else {
                break;
            }
            i += 1;
        }
        (marked, wait)
    }

    /// RACK on an ACK (Linux `tcp_rack_mark_lost`): only after a new delivery; a wait arms
    /// the reordering timer at it + `TCP_TIMEOUT_MIN` (2 ms).
    pub(super) fn rack_mark_lost(&mut self, now: Nanos) -> u32 {
        if !self.rack_advanced {
            return 0;
        }
        self.rack_advanced = false;
        let (marked, wait) = self.rack_detect_loss(now);
        if self.rack_mode == Some(LossEra::Linux6_1) {
            self.reo_deadline = (wait > 0).then(|| now + Nanos(wait as u64) + Nanos::from_ms(2));
        }
        marked
    }

    /// RACK's reordering timer fired (Linux 6.1 `tcp_rack_reo_timeout`): mark what is lost
    /// now; from Open or CWR that starts a recovery (PRR counts the losses as delivered: the
    /// first retransmission goes).
    pub(super) fn on_reo_timer(&mut self, now: Nanos) {
        self.reo_deadline = None;
        self.stats.reo_timeouts += 1;
        let (marked, _) = self.rack_detect_loss(now);
        if marked > 0 && matches!(self.state, CaState::Open | CaState::Cwr) {
            self.enter_recovery_sack();
            self.delivered_now = 1;
            self.prr_cwnd(false);
        }
        self.schedule_tlp(now);
    }

    /// RACK (RFC 8985 §6.2, Linux `tcp_rack_detect_loss`) for retransmissions: one is lost
    /// again once a segment sent after it has been delivered and an RTT has passed since it was
    /// sent (the reordering window is zero in recovery, as in Linux when no reordering has
    /// been seen). It becomes eligible for another retransmission. Checked on ACKs in recovery
    /// only (Linux also arms a reordering timer, and applies RACK in every state).
    pub(super) fn detect_lost_retransmits(&mut self, now: Nanos) {
        if self.retrans_out == 0 || self.rack_xmit <= self.rexmit_low {
            return;
        }
        let mut low = Nanos(u64::MAX);
        let mut start = self.snd_una;
        for i in 0..self.sent.len() {
            let r = &mut self.sent[i];
            let r_start = start;
            start = r.end;
            if !r.rexmit_in_flight {
                continue;
            }
            if r.sent < self.rack_xmit && now >= r.sent + self.rack_rtt {
                r.rexmit_in_flight = false;
                self.retrans_out -= 1;
                self.rxt_upto = self.rxt_upto.min(r_start);
                self.stats.lost_retransmits += 1;
            } else {
                low = low.min(r.sent);
            }
        }
        self.rexmit_low = low;
    }
}

/// RACK, TLP and F-RTO (hand-computed values).
#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::tcp::{CcKind, KernelEra, SackBlocks, DEFAULT_RCV_WND};

    const M: u64 = 1448;

    fn ms(n: u64) -> Nanos {
        Nanos::from_ms(n)
    }

    fn drain(s: &mut TcpSender, now: Nanos) -> Vec<(u64, bool)> {
        std::iter::from_fn(|| s.poll_transmit(now)).map(|g| (g.seq / M, g.retransmission)).collect()
    }

    fn sack(n: u64, blocks: &[(u64, u64)]) -> Ack {
        let b: Vec<(u64, u64)> = blocks.iter().map(|&(a, e)| (a * M, e * M)).collect();
        Ack { sack: SackBlocks::from_slice(&b), ..Ack::new(n * M, DEFAULT_RCV_WND, Nanos::ZERO) }
    }

    /// 6.1 loss detection without TLP: ten segments at t = 0, segment 0 acknowledged at 20 ms
    /// (SRTT = min RTT = 20 ms, cwnd 11), segments 10 and 11 go out then.
    fn rack_sender(cc: CcKind, tlp: bool) -> TcpSender {
        let mut cfg = KernelEra::Linux6_1.config(cc);
        cfg.sndbuf = None;
        if !tlp {
            cfg.tlp = None;
        }
        let mut s = TcpSender::new(&cfg, AppLimit::Unlimited);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
        s.on_ack(ms(20), sack(1, &[]));
        assert_eq!(drain(&mut s, ms(20)), [(10, false), (11, false)]);
        assert_eq!((s.rtt().srtt(), s.rtt().min_rtt()), (Some(ms(20)), Some(ms(20))));
        s
    }

    #[test]
    fn rack_reorder_timer_marks_the_hole_at_rtt_plus_reo_wnd() {
        let mut s = rack_sender(CcKind::NewReno, false);
        // Segment 2 (sent at 0) SACKed at 21 ms: RACK rtt 21 ms, reo_wnd = min RTT / 4 = 5 ms
        // (one SACKed segment, Open). Segment 1, sent at 0 before it, waits 21 + 5 − 21 = 5 ms:
        // not lost yet; the reordering timer at 21 + 5 + 2 (TCP_TIMEOUT_MIN) = 28 ms.
        s.on_ack(ms(21), sack(1, &[(2, 3)]));
        assert_eq!(s.rack_reo_wnd(), ms(5));
        assert_eq!((s.state(), s.stats().rack_marked), (CaState::Open, 0));
        assert_eq!(s.next_timer(), Some(ms(28)));
        // Segment 2 let one new segment out (pipe 10 < cwnd 11): segment 12.
        assert_eq!(drain(&mut s, ms(21)), [(12, false)]);
        s.on_timer(ms(27));
        assert_eq!((s.state(), s.stats().rack_marked), (CaState::Open, 0), "an early call does nothing");
        s.on_timer(ms(28));
        // Only segment 1 is lost (3..9 were sent at 0 too, but end after segment 2: not before
        // it). Recovery (ssthresh 11 / 2), the retransmission of 1 goes first.
        assert_eq!((s.state(), s.stats().rack_marked, s.stats().reo_timeouts), (CaState::Recovery, 1, 1));
        assert_eq!(s.ssthresh() / M, 5);
        assert_eq!(drain(&mut s, ms(28))[0], (1, true));
        s.check_scoreboard();
    }

    #[test]
    fn rack_marks_every_older_segment_when_a_later_one_is_delivered() {
        let mut s = rack_sender(CcKind::NewReno, false);
        s.on_ack(ms(21), sack(1, &[(2, 3)]));
        drain(&mut s, ms(21));
        // Segment 3 (sent at 0) SACKed at 25 ms: rtt 25, segment 1 waits 25 + 5 − 25 = 5 ms.
        s.on_ack(ms(25), sack(1, &[(2, 4)]));
        assert_eq!((s.state(), s.stats().rack_marked), (CaState::Open, 0));
        drain(&mut s, ms(25));
        // Segment 10 (sent at 20 ms) SACKed at 30 ms: rtt 10 ms, three SACKed: reo_wnd 0.
        // Everything sent before it and not SACKed is lost: 1 and 4..9 (30 − 0 > 10 ms);
        // 11 and 12 were sent at 20/21 ms, after it by end_seq or time: not lost.
        s.on_ack(ms(30), sack(1, &[(10, 11), (2, 4)]));
        assert_eq!(s.state(), CaState::Recovery);
        assert_eq!(s.stats().rack_marked, 7);
        assert_eq!(drain(&mut s, ms(30))[0], (1, true));
        s.check_scoreboard();
    }

    #[test]
    fn tlp_probe_timeout_and_one_probe() {
        // 2+ segments out, SRTT 20 ms: 6.1 PTO = 2 · 20 + 2 = 42 ms, armed when segments 10
        // and 11 went out at 20 ms: 62 ms (the RTO is at 20 + 200 ms).
        let s = rack_sender(CcKind::Cubic, true);
        assert_eq!(s.pto(), ms(42));
        assert_eq!(s.next_timer(), Some(ms(62)));
        let mut c49 = KernelEra::Linux4_9.config(CcKind::Cubic);
        c49.sndbuf = None;
        let mut s49 = TcpSender::new(&c49, AppLimit::Bytes(10 * M));
        drain(&mut s49, Nanos::ZERO);
        s49.on_ack(ms(20), sack(1, &[]));
        assert_eq!(s49.pto(), ms(40), "4.9: max(2 SRTT, 10 ms)");
        s49.on_ack(ms(20), sack(9, &[]));
        assert_eq!(s49.pto(), ms(230), "4.9, one segment: 1.5 · 20 + 200 ms");

        // One segment out: 6.1 PTO = 2 · 20 + 200 = 240 ms, capped by the RTO (200 ms from
        // the ACK at 20 ms): the probe at 220 ms.
        let mut cfg = KernelEra::Linux6_1.config(CcKind::Cubic);
        cfg.sndbuf = None;
        let mut s = TcpSender::new(&cfg, AppLimit::Bytes(10 * M));
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
        s.on_ack(ms(20), sack(9, &[]));
        assert_eq!(s.pto(), ms(240));
        assert_eq!(s.next_timer(), Some(ms(220)));
        s.on_timer(ms(220));
        // No new data: the last segment is resent; the RTO restarts from now.
        assert_eq!(drain(&mut s, ms(220)), [(9, true)]);
        assert_eq!((s.stats().tlp_probes, s.stats().rtos), (1, 0));
        assert_eq!(s.next_timer(), Some(ms(420)));
        // Its ACK ends the transfer; had it been lost, the RTO (not a second probe) is next.
        let mut t = s.clone();
        t.on_timer(ms(420));
        assert_eq!((t.stats().tlp_probes, t.stats().rtos), (1, 1));
        s.on_ack(ms(240), sack(10, &[]));
        assert!(s.is_done());
        assert_eq!(s.next_timer(), None);
    }

    /// Ten segments at 0, two acknowledged at 20 ms (cwnd 12, segments 10..13 out), the RTO at
    /// 220 ms (NewReno: ssthresh 6, cwnd 1) resends segment 2; its ACK at 230 ms advances
    /// `snd_una` to 3: F-RTO sends new data only (14 and 15 with cwnd 2).
    fn after_rto_and_first_ack() -> TcpSender {
        let mut cfg = KernelEra::Linux6_1.config(CcKind::NewReno);
        cfg.sndbuf = None;
        cfg.tlp = None;
        let mut s = TcpSender::new(&cfg, AppLimit::Unlimited);
        drain(&mut s, Nanos::ZERO);
        s.on_ack(ms(20), sack(2, &[]));
        assert_eq!(drain(&mut s, ms(20)).len(), 4);
        assert_eq!(s.next_timer(), Some(ms(220)));
        s.on_timer(ms(220));
        assert_eq!((s.state(), s.cwnd() / M, s.ssthresh() / M), (CaState::Loss, 1, 6));
        assert_eq!(drain(&mut s, ms(220)), [(2, true)]);
        s.on_ack(ms(230), sack(3, &[]));
        assert_eq!(drain(&mut s, ms(230)), [(14, false), (15, false)]);
        assert_eq!(s.state(), CaState::Loss);
        s
    }

    #[test]
    fn frto_undoes_a_spurious_rto() {
        let mut s = after_rto_and_first_ack();
        // The next ACK covers segments 3 and 4, never retransmitted: the RTO was spurious.
        // Undo: cwnd = max(2, prior 12), ssthresh = max(6, prior ∞) = ∞, Open, no loss marks.
        s.on_ack(ms(240), sack(5, &[]));
        assert_eq!((s.state(), s.cwnd() / M, s.ssthresh()), (CaState::Open, 12, u64::MAX));
        assert_eq!(s.stats().spurious_rtos, 1);
        s.check_scoreboard();
        // No retransmission follows: new data (5..15 outstanding = 11, cwnd 12: one).
        assert_eq!(drain(&mut s, ms(240)), [(16, false)]);
    }

    #[test]
    fn frto_keeps_loss_recovery_when_the_loss_was_real() {
        let mut s = after_rto_and_first_ack();
        // A duplicate ACK SACKing the new segment 14: the loss was real (step 3a). Still Loss
        // with ssthresh 6; the lost segments are resent in order.
        s.on_ack(ms(240), sack(3, &[(14, 15)]));
        assert_eq!((s.state(), s.ssthresh() / M, s.stats().spurious_rtos), (CaState::Loss, 6, 0));
        assert_eq!(drain(&mut s, ms(240))[0], (3, true));
        s.check_scoreboard();
    }
}
