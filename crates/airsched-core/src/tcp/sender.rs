//! TCP sender: slow start and congestion avoidance (RFC 5681; the increase itself in
//! [`super::cc`]), fast retransmit on the third duplicate ACK with NewReno fast recovery and
//! partial ACKs (RFC 6582), limited transmit (RFC 3042), the retransmission timer (RFC 6298,
//! [`super::rtt`]) with go-back-N after an RTO and cwnd = 1 MSS (Linux `tcp_enter_loss`).
//! Where the RFCs allow a choice it follows Linux 6.x: ssthresh is computed from cwnd, not
//! FlightSize; recovery ends with cwnd = ssthresh; an RTO inside a recovery episode keeps
//! ssthresh. Not Linux: an ACK counts at most 2 MSS towards window growth (RFC 3465 L = 2;
//! Linux counts every delivered segment, which with SACK rarely differs, but without SACK the
//! stretch ACK that ends a loss repair would open the window by tens of segments at once),
//! and partial ACKs rearm the timer only the first time (RFC 6582's "Impatient" variant;
//! Linux rearms on every ACK but repairs all holes in about one RTT thanks to SACK). RTT samples as Linux `tcp_ack_update_rtt`: from the oldest newly acknowledged
//! segment if none of them was retransmitted (Karn), else from the timestamp echo.
//! Deviations: no SACK, no PRR (Linux reduces cwnd by PRR, RFC 6937, rather than inflating
//! it), no Nagle, no pacing, no F-RTO or undo of spurious retransmissions.

use std::collections::VecDeque;

use super::cc::CongestionControl;
use super::rtt::RttEstimator;
use super::{Ack, Segment, TcpConfig};
use crate::time::Nanos;

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
    /// Retransmissions of fast retransmit and of partial ACKs in fast recovery.
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
}

/// What an ACK did, for the simulator's metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub newly_acked: u64,
    /// An RTT sample, if the ACK acknowledged new data.
    pub rtt_sample: Option<Nanos>,
}

/// Linux `tcp_ca_state`, reduced to what NewReno without SACK needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    Open,
    /// Fast recovery (RFC 6582) until `recover` is acknowledged.
    Recovery,
    /// After an RTO, until everything sent before it is acknowledged.
    Loss,
}

/// One MSS-sized piece of the sequence space between `snd_una` and `snd_max`.
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    end: u64,
    sent: Nanos,
    retransmitted: bool,
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
    /// window once and is then reused.
    sent: VecDeque<SentRecord>,
    stats: TcpSenderStats,
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
            stats: TcpSenderStats::default(),
        }
    }

    /// The next segment to put on the wire now, if the windows allow one: a pending fast
    /// retransmission first, then go-back-N retransmissions, then new data. Call until `None`
    /// after every `on_ack`/`on_timer` (and at start).
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        let seg = if self.retransmit_pending && self.snd_una < self.snd_max {
            // Fast retransmit / partial ACK: sent regardless of cwnd (RFC 5681 3.2 step 4).
            self.retransmit_pending = false;
            self.stats.fast_retransmits += 1;
            self.retransmission_at(now, self.snd_una)
        } else if self.snd_nxt < self.snd_max {
            let len = self.seg_len(self.snd_nxt);
            if self.snd_nxt - self.snd_una + len as u64 > self.cwnd {
                return None;
            }
            self.stats.timeout_retransmits += 1;
            let seg = self.retransmission_at(now, self.snd_nxt);
            self.snd_nxt += len as u64;
            seg
        } else {
            self.new_segment(now)?
        };
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        // RFC 6298 5.1: start the timer when sending data if it is not running.
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.current_rto());
        }
        Some(seg)
    }

    fn new_segment(&mut self, now: Nanos) -> Option<Segment> {
        if self.snd_max >= self.app_end {
            return None;
        }
        let len = (self.app_end - self.snd_max).min(self.mss as u64);
        // RFC 3042 limited transmit: the first two dupACKs each let one more segment out.
        let limited = if self.state == CaState::Open { self.dupacks.min(2) as u64 * self.mss as u64 } else { 0 };
        if self.snd_max - self.snd_una + len > self.cwnd + limited || self.snd_max + len > self.snd_una + self.rwnd {
            return None;
        }
        let seg = Segment { seq: self.snd_max, len: len as u32, tsval: now, retransmission: false };
        self.snd_max += len;
        self.snd_nxt = self.snd_max;
        self.sent.push_back(SentRecord { end: self.snd_max, sent: now, retransmitted: false });
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

    /// An ACK arrived.
    pub fn on_ack(&mut self, now: Nanos, ack: Ack) -> AckOutcome {
        let mut out = AckOutcome::default();
        if ack.ack > self.snd_max {
            // Acknowledges data never sent: ignored (Linux drops such ACKs).
            return out;
        }
        if ack.ack > self.snd_una {
            out = self.on_new_ack(now, ack);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una && ack.rwnd == self.rwnd {
            self.on_dupack();
        }
        self.rwnd = ack.rwnd;
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
            CaState::Open => self.raise_cwnd(now, newly, prior_in_flight),
        }
        if self.snd_una == self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.rto_deadline = Some(now + self.rtt.current_rto());
        }
        AckOutcome { newly_acked: newly, rtt_sample }
    }

    /// Drop the records `ack` covers; the RTT sample from the oldest of them, unless any was
    /// retransmitted (Karn; Linux `tcp_clean_rtx_queue`).
    fn take_acked_records(&mut self, now: Nanos, ack: u64) -> Option<Nanos> {
        let mut first_sent = None;
        let mut retransmitted = false;
        while let Some(r) = self.sent.front() {
            if r.end > ack {
                break;
            }
            first_sent.get_or_insert(r.sent);
            retransmitted |= r.retransmitted;
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
            CaState::Open if self.dupacks == DUPTHRESH && self.recover.is_none_or(|r| self.snd_una >= r) => {
                self.enter_recovery()
            }
            _ => {}
        }
    }

    fn enter_recovery(&mut self) {
        self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
        self.recover = Some(self.snd_max);
        self.state = CaState::Recovery;
        self.partial_ack_seen = false;
        self.retransmit_pending = true;
        self.cwnd = self.ssthresh + DUPTHRESH as u64 * self.mss as u64;
        self.stats.fast_recoveries += 1;
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
        self.rto_deadline
    }

    /// Call at (or after) `next_timer`; an early call does nothing.
    pub fn on_timer(&mut self, now: Nanos) {
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
            self.ssthresh = self.cc.ssthresh(self.cwnd, self.mss);
        }
        self.cc.on_rto();
        self.cwnd = self.mss as u64;
        self.state = CaState::Loss;
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.retransmit_pending = false;
        self.rto_since_progress = true;
        // Go-back-N: everything outstanding is resent; none of it may give an RTT sample.
        self.snd_nxt = self.snd_una;
        for r in self.sent.iter_mut() {
            r.retransmitted = true;
        }
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.current_rto());
    }

    /// The application writes nothing more: the transfer ends with what has been sent.
    pub fn close(&mut self) {
        self.app_end = self.app_end.min(self.snd_max);
    }

    /// Everything the application wrote has been acknowledged (never for `Unlimited`).
    pub fn is_done(&self) -> bool {
        self.app_end != u64::MAX && self.snd_una >= self.app_end
    }

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }
    /// Slow-start threshold, bytes (`u64::MAX` until the first congestion event).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    pub fn state(&self) -> CaState {
        self.state
    }
    /// Bytes sent and not yet acknowledged.
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn cc(&self) -> &CongestionControl {
        &self.cc
    }
    pub fn mss(&self) -> u32 {
        self.mss
    }
    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{CcKind, DEFAULT_RCV_WND, RTO_INITIAL};

    const M: u64 = 1448;

    fn ack(n: u64) -> Ack {
        Ack { ack: n, rwnd: DEFAULT_RCV_WND, tsecr: Nanos::ZERO }
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
            s.on_ack(Nanos::from_ms(1), Ack { ack: 0, rwnd: DEFAULT_RCV_WND - w, tsecr: Nanos::ZERO });
        }
        assert_eq!(s.stats().dupacks, 0);
        assert_eq!(s.state(), CaState::Open);
    }

    #[test]
    fn rwnd_limits_what_is_in_flight() {
        let mut cfg = TcpConfig::new(CcKind::NewReno);
        cfg.rcv_wnd = 3 * M;
        let mut s = TcpSender::new(&cfg, AppLimit::Unlimited);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 3);
        s.on_ack(Nanos::from_ms(1), Ack { ack: M, rwnd: 3 * M, tsecr: Nanos::ZERO });
        assert_eq!(drain(&mut s, Nanos::from_ms(1)).len(), 1);
        assert_eq!(s.cwnd(), 10 * M, "not cwnd-limited: cwnd does not grow");
    }
}
