//! TCP receiver: cumulative ACKs, an out-of-order queue of byte ranges, and Linux's ACK policy
//! (`__tcp_ack_snd_check` in net/ipv4/tcp_input.c): ACK at once when more than one full-sized
//! segment is unacknowledged, when a segment arrives out of order or fills a hole, and for
//! duplicate data; otherwise arm the delayed-ACK timer (40 ms, `TCP_DELACK_MIN`).
//! Timestamps (RFC 7323 §4.3, Linux `tcp_replace_ts_recent`): TS.Recent takes the TSval of a
//! segment that starts at or below the last ACK sent, so a delayed ACK echoes its first
//! segment and the segment that fills a hole echoes itself.
//! SACK (RFC 2018 §4, Linux `tcp_sack_new_ofo_skb`, `tcp_sack_remove`): while data is held out
//! of order every ACK carries up to 3 blocks: first the range holding the segment that
//! triggered the ACK (unless it advanced the cumulative ACK), then the most recently reported
//! others; the receiver remembers the 4 most recent ranges (Linux `TCP_NUM_SACKS`), and when
//! fewer than 3 of them remain, fills the option with other held ranges, lowest first.
//! The application's reads (with a receive-buffer model, i.e. a kernel era): in-order data waits
//! in the receive queue until the application reads it (`read_now`; the simulator reads at the
//! end of the event that delivered the data, so all MPDUs of an A-MPDU, which mac80211 hands up
//! in one NAPI poll, are one read; `next_timer` / `on_timer` offer the read at the instant the
//! data arrived to a caller that runs packet events before timers). Linux 6.1 `__tcp_ack_snd_check` then ACKs at arrival
//! only when more than one MSS is unacknowledged *and* the window, less the unread data, still
//! reaches the right edge last offered (`__tcp_select_window(sk) >= tp->rcv_wnd`; the
//! `sk_rcvlowat` clause needs everything read, which never holds at arrival); otherwise
//! the read ACKs (`tcp_cleanup_rbuf`, net/ipv4/tcp.c): when more than one MSS is unacknowledged,
//! when it emptied the queue after a segment shorter than the MSS (`ICSK_ACK_PUSHED`, set by
//! `tcp_measure_rcv_mss`), or when the window it frees is at least twice the one left. So a
//! burst of N segments at one instant is ACKed once, after the read, not every 2 segments.
//! Without a receive-buffer model the application reads at arrival, as before.
//! Deviations: no D-SACK (RFC 2883) for duplicate segments, no quick-ACK mode at connection
//! start (Linux ACKs the first segments at once), `ato` fixed at its minimum, `rcv_mss` fixed
//! at the MSS (Linux's `last_seg_size` re-estimation for repeated short segments is not
//! modelled), no `rcv_ssthresh` (the window at arrival is the buffer's, so unread data always
//! pulls it below the last offer, as in Linux once `rcv_ssthresh` has grown to the free space),
//! the application's wake-up takes no time, and without a receive-buffer model the application
//! reads in-order data at once, so the advertised window is the whole receive buffer.

use super::{Ack, SackBlocks, Segment, TcpConfig, MAX_SACK_BLOCKS};
use crate::time::Nanos;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    pub segments: u64,
    /// Segments wholly below `rcv_nxt` (already received).
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    /// Segments (or parts) beyond the advertised window, discarded.
    pub beyond_window: u64,
    pub acks_sent: u64,
    pub delayed_acks: u64,
    /// ACKs sent by the application's read (`tcp_cleanup_rbuf`).
    pub read_acks: u64,
}

/// Ranges the receiver remembers as recently reported (Linux `TCP_NUM_SACKS`).
const RECENT_SACKS: usize = 4;

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    mss: u32,
    rcv_wnd: u64,
    delack_timeout: Nanos,
    /// Next byte expected = bytes delivered in order to the application.
    rcv_nxt: u64,
    /// `rcv_nxt` in the last ACK sent (Linux `rcv_wup`).
    last_ack_sent: u64,
    /// Out-of-order data as disjoint, sorted, non-adjacent `[start, end)` ranges above
    /// `rcv_nxt`. Reused; it allocates only when it holds more holes than ever before (at most
    /// one per two MSS of the window).
    ooo: Vec<(u64, u64)>,
    /// Put SACK blocks on ACKs.
    sack: bool,
    /// The most recently reported out-of-order ranges, most recent first (each one of `ooo`'s
    /// ranges); `recent[..n_recent]` are valid.
    recent: [(u64, u64); RECENT_SACKS],
    n_recent: usize,
    delack_deadline: Option<Nanos>,
    /// RFC 7323 TS.Recent.
    ts_recent: Nanos,
    /// The receive buffer (None: the window is `rcv_wnd`, fixed) and its state.
    buf: Option<RcvState>,
    /// The window the last ACK offered (Linux `rcv_wnd`, from `rcv_wup` = `last_ack_sent`):
    /// the right edge is never pulled back.
    adv_wnd: u64,
    /// Bytes the application has read (Linux `copied_seq`); `rcv_nxt` with no receive-buffer
    /// model (it reads at arrival).
    copied: u64,
    /// The application's next read (at the instant data arrived), if due.
    read_at: Option<Nanos>,
    /// A segment shorter than the MSS arrived since the last ACK (Linux `ICSK_ACK_PUSHED`).
    pushed: bool,
    stats: TcpReceiverStats,
}

/// The receive buffer as Linux 6.1 keeps it: `sk_rcvbuf`, `window_clamp`, the receiver's RTT
/// estimate (`rcv_rtt_est`) and the autotuning measurement (`rcvq_space`).
#[derive(Clone, Copy, Debug)]
struct RcvState {
    cfg: super::RcvBuf,
    /// `sk_rcvbuf`, bytes of truesize.
    rcvbuf: u64,
    /// `window_clamp`: the largest window offered.
    clamp: u64,
    /// `rcvq_space.space`, `.seq`, `.time`.
    space: u64,
    space_seq: u64,
    space_time: Nanos,
    /// `rcv_rtt_est`: the smallest time to receive one window (Linux `tcp_rcv_rtt_measure`,
    /// `win_dep` = 1), and the measurement under way: its end sequence and start.
    rtt: Option<Nanos>,
    rtt_seq: u64,
    rtt_time: Option<Nanos>,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> TcpReceiver {
        TcpReceiver {
            mss: cfg.mss,
            rcv_wnd: cfg.rcv_wnd,
            delack_timeout: cfg.delack_timeout,
            rcv_nxt: 0,
            last_ack_sent: 0,
            ooo: Vec::with_capacity(64),
            sack: cfg.sack,
            recent: [(0, 0); RECENT_SACKS],
            n_recent: 0,
            delack_deadline: None,
            ts_recent: Nanos::ZERO,
            buf: cfg.rcvbuf.map(|b| {
                let clamp = super::win_from_space(b.rmem[1], b.adv_win_scale);
                RcvState {
                    cfg: b,
                    rcvbuf: b.rmem[1],
                    clamp,
                    // Linux 6.1 tcp_init_buffer_space: min(rcv_wnd, TCP_INIT_CWND · advmss).
                    space: clamp.min(super::INITIAL_CWND_SEGMENTS as u64 * cfg.mss as u64),
                    space_seq: 0,
                    space_time: Nanos::ZERO,
                    rtt: None,
                    rtt_seq: 0,
                    rtt_time: None,
                }
            }),
            adv_wnd: cfg.rcv_wnd,
            copied: 0,
            read_at: None,
            pushed: false,
            stats: TcpReceiverStats::default(),
        }
    }

    /// Whether the application reads at the end of the instant (a receive-buffer model) rather
    /// than at arrival.
    #[inline]
    fn reads_later(&self) -> bool {
        self.buf.is_some()
    }

    /// The window offered now: with a receive buffer, Linux `tcp_select_window` without
    /// `rcv_ssthresh`: `tcp_win_from_space` of the buffer less what out-of-order data occupies
    /// (its truesize), at most `window_clamp`; otherwise the configured `rcv_wnd`.
    pub fn window(&self) -> u64 {
        let Some(b) = &self.buf else { return self.rcv_wnd };
        let held = self.ooo_bytes() + (self.rcv_nxt - self.copied);
        let held = held + held.div_ceil(self.mss as u64) * super::SKB_TRUESIZE_OVERHEAD;
        super::win_from_space(b.rcvbuf.saturating_sub(held), b.cfg.adv_win_scale).min(b.clamp)
    }

    /// `sk_rcvbuf` (None without a receive-buffer model).
    #[cfg(test)]
    pub fn rcvbuf(&self) -> Option<u64> {
        self.buf.map(|b| b.rcvbuf)
    }

    /// The receiver's RTT estimate (`rcv_rtt_est`), once measured.
    #[cfg(test)]
    pub fn rcv_rtt(&self) -> Option<Nanos> {
        self.buf.and_then(|b| b.rtt)
    }

    /// In-order data advanced `rcv_nxt`: Linux `tcp_rcv_rtt_measure` (in
    /// `tcp_event_data_recv`; without timestamps: the time to receive one window, the one
    /// last offered, `tp->rcv_wnd`; the smallest kept).
    fn rtt_measure(&mut self, now: Nanos) {
        let window = self.adv_wnd;
        let rcv_nxt = self.rcv_nxt;
        let Some(b) = self.buf.as_mut() else { return };
        match b.rtt_time {
            Some(t) if rcv_nxt >= b.rtt_seq => {
                let m = (now - t).max(Nanos(1));
                b.rtt = Some(b.rtt.map_or(m, |r| r.min(m)));
                b.rtt_seq = rcv_nxt + window;
                b.rtt_time = Some(now);
            }
            Some(_) => {}
            None => {
                b.rtt_seq = rcv_nxt + window;
                b.rtt_time = Some(now);
                b.space_time = now;
            }
        }
    }

    /// The application read up to `copied`: Linux `tcp_rcv_space_adjust` (called from
    /// `tcp_recvmsg`; Linux 6.1: once per receiver RTT, if more was read than in the last, the
    /// buffer grows to hold 2 · copied + 16 MSS plus twice the growth, in `rcvmem` per MSS, up
    /// to `tcp_rmem[2]`).
    fn space_adjust(&mut self, now: Nanos) {
        let mss = self.mss as u64;
        let copied_seq = self.copied;
        let Some(b) = self.buf.as_mut() else { return };
        let Some(rtt) = b.rtt else { return };
        if now - b.space_time < rtt {
            return;
        }
        let copied = copied_seq - b.space_seq;
        if copied > b.space {
            if b.cfg.autotune {
                let mut rcvwin = 2 * copied + 16 * mss;
                let grow = rcvwin * (copied - b.space) / b.space;
                rcvwin += 2 * grow;
                let mut rcvmem = super::skb_truesize(mss);
                while super::win_from_space(rcvmem, b.cfg.adv_win_scale) < mss {
                    rcvmem += 128;
                }
                let rcvbuf = (rcvwin / mss * rcvmem).min(b.cfg.rmem[2]);
                if rcvbuf > b.rcvbuf {
                    b.rcvbuf = rcvbuf;
                    b.clamp = super::win_from_space(rcvbuf, b.cfg.adv_win_scale);
                }
            }
            b.space = copied;
        }
        b.space_seq = copied_seq;
        b.space_time = now;
    }

    /// A data segment arrived; returns the ACK to send now, if any.
    pub fn on_segment(&mut self, now: Nanos, seg: Segment) -> Option<Ack> {
        self.stats.segments += 1;
        if seg.seq <= self.last_ack_sent && seg.tsval >= self.ts_recent {
            self.ts_recent = seg.tsval;
        }
        let right_edge = self.last_ack_sent.max(self.rcv_nxt) + self.adv_wnd;
        let end = seg.end().min(right_edge);
        if end < seg.end() {
            self.stats.beyond_window += 1;
        }
        if end <= self.rcv_nxt {
            // Old data: the sender missed our ACK; Linux answers at once (tcp_send_dupack).
            self.stats.duplicate_segments += 1;
            return Some(self.send_ack());
        }
        if seg.seq >= end {
            // Wholly beyond the window: discarded, answered at once (tcp_sequence fails).
            return Some(self.send_ack());
        }
        if seg.seq > self.rcv_nxt {
            self.stats.out_of_order_segments += 1;
            let range = self.insert_ooo(seg.seq, end);
            self.note_recent(range);
            return Some(self.send_ack());
        }
        let had_ooo = !self.ooo.is_empty();
        self.rcv_nxt = end;
        self.drain_ooo();
        self.rtt_measure(now);
        // RFC 5681 4.2 and Linux: ACK at once when a hole was (being) filled; otherwise when
        // more than one full-sized segment is unacknowledged (and, while the application has
        // not read it, the window still reaches the right edge last offered).
        let unacked = self.rcv_nxt - self.last_ack_sent > self.mss as u64;
        if self.reads_later() {
            // tcp_measure_rcv_mss: a segment shorter than rcv_mss sets ICSK_ACK_PUSHED.
            self.pushed |= seg.len < self.mss;
            self.read_at.get_or_insert(now);
            if had_ooo || (unacked && self.window() >= self.adv_wnd) {
                return Some(self.send_ack());
            }
        } else {
            self.copied = self.rcv_nxt;
            if had_ooo || unacked {
                return Some(self.send_ack());
            }
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delack_timeout);
        }
        None
    }

    /// The application reads what is in order (Linux `tcp_recvmsg`: `tcp_rcv_space_adjust`,
    /// then `tcp_cleanup_rbuf`); returns the ACK the read sends, if any.
    fn read(&mut self, now: Nanos) -> Option<Ack> {
        self.read_at = None;
        let copied = self.rcv_nxt - self.copied;
        self.copied = self.rcv_nxt;
        self.space_adjust(now);
        let mss = self.mss as u64;
        // An ACK is scheduled (`inet_csk_ack_scheduled`) while the delayed-ACK timer runs.
        if self.delack_deadline.is_some()
            && (self.rcv_nxt - self.last_ack_sent > mss || (copied > 0 && self.pushed && self.ooo.is_empty()))
        {
            self.stats.read_acks += 1;
            return Some(self.send_ack());
        }
        if copied > 0 {
            // A window update when the read at least doubles the window left
            // (`tcp_receive_window`), checked only when that is at most half the clamp.
            let left = (self.last_ack_sent + self.adv_wnd).saturating_sub(self.rcv_nxt);
            let clamp = self.buf.map_or(u64::MAX, |b| b.clamp);
            if 2 * left <= clamp {
                let w = self.window();
                if w > 0 && w >= 2 * left {
                    self.stats.read_acks += 1;
                    return Some(self.send_ack());
                }
            }
        }
        None
    }

    /// Whether the application has a read to do (data arrived since its last read).
    pub fn read_pending(&self) -> bool {
        self.read_at.is_some()
    }

    /// The delayed-ACK timer alone (the simulator runs the reads itself, `read_now`).
    pub fn delack_timer(&self) -> Option<Nanos> {
        self.delack_deadline
    }

    /// The application's read, if one is pending; returns the ACK it sends, if any.
    pub fn read_now(&mut self, now: Nanos) -> Option<Ack> {
        if self.read_at.is_some() {
            self.read(now)
        } else {
            None
        }
    }

    /// The receiver's next timer: the application's read, or the delayed ACK.
    #[cfg(test)]
    pub fn next_timer(&self) -> Option<Nanos> {
        match (self.read_at, self.delack_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Call at (or after) `next_timer`; returns the ACK the read or the delayed-ACK timer sends.
    pub fn on_timer(&mut self, now: Nanos) -> Option<Ack> {
        if self.read_at.is_some_and(|t| now >= t) {
            if let Some(a) = self.read(now) {
                return Some(a);
            }
        }
        match self.delack_deadline {
            Some(d) if now >= d => {
                self.stats.delayed_acks += 1;
                Some(self.send_ack())
            }
            _ => None,
        }
    }

    /// Bytes delivered in order (the next byte expected).
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt
    }

    /// Bytes held out of order.
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|(s, e)| e - s).sum()
    }

    #[cfg(test)]
    pub fn stats(&self) -> &TcpReceiverStats {
        &self.stats
    }

    fn send_ack(&mut self) -> Ack {
        self.stats.acks_sent += 1;
        self.delack_deadline = None;
        self.pushed = false;
        // Linux never shrinks the window it offered: the right edge stays where it was.
        let edge = self.last_ack_sent + self.adv_wnd;
        self.adv_wnd = self.window().max(edge.saturating_sub(self.rcv_nxt));
        self.last_ack_sent = self.rcv_nxt;
        Ack { ack: self.rcv_nxt, rwnd: self.adv_wnd, tsecr: self.ts_recent, sack: self.sack_blocks() }
    }

    /// The SACK blocks for an ACK sent now: the recent ranges in order, then, if room is left,
    /// other held ranges from the lowest.
    fn sack_blocks(&self) -> SackBlocks {
        let mut b = SackBlocks::NONE;
        if !self.sack {
            return b;
        }
        for &(s, e) in &self.recent[..self.n_recent.min(MAX_SACK_BLOCKS)] {
            b.push(s, e);
        }
        for &(s, e) in &self.ooo {
            if b.len() == MAX_SACK_BLOCKS {
                break;
            }
            if !self.recent[..self.n_recent].contains(&(s, e)) {
                b.push(s, e);
            }
        }
        b
    }

    /// `range` (one of `ooo`'s, just grown by a segment) becomes the most recent block; the
    /// recent ranges it absorbed are forgotten, and the oldest falls off when the list is full.
    fn note_recent(&mut self, range: (u64, u64)) {
        let mut n = 0;
        for i in 0..self.n_recent {
            let (s, e) = self.recent[i];
            if e < range.0 || s > range.1 {
                self.recent[n] = (s, e);
                n += 1;
            }
        }
        let n = n.min(RECENT_SACKS - 1);
        self.recent.copy_within(0..n, 1);
        self.recent[0] = range;
        self.n_recent = n + 1;
    }

    /// Forget recent ranges that the cumulative ACK has reached.
    fn prune_recent(&mut self) {
        let mut n = 0;
        for i in 0..self.n_recent {
            if self.recent[i].0 > self.rcv_nxt {
                self.recent[n] = self.recent[i];
                n += 1;
            }
        }
        self.n_recent = n;
    }

    /// Add `[start, end)` to the out-of-order ranges; returns the (merged) range holding it.
    fn insert_ooo(&mut self, start: u64, end: u64) -> (u64, u64) {
        // First range that ends at or after `start` (could merge or lies after).
        let i = self.ooo.partition_point(|&(_, e)| e < start);
        if i == self.ooo.len() || self.ooo[i].0 > end {
            self.ooo.insert(i, (start, end));
            return (start, end);
        }
        // Overlaps or touches ranges i..j: merge them into one.
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo[i] = (s, e);
        self.ooo.drain(i + 1..j);
        (s, e)
    }

    /// Move ranges that `rcv_nxt` has reached into the in-order data.
    fn drain_ooo(&mut self) {
        let mut n = 0;
        for &(s, e) in &self.ooo {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            n += 1;
        }
        self.ooo.drain(..n);
        self.prune_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{CcKind, DELACK_TIMEOUT};

    const M: u64 = 1448;

    fn seg(i: u64) -> Segment {
        Segment { seq: i * M, len: M as u32, tsval: Nanos(i), retransmission: false }
    }

    fn rx() -> TcpReceiver {
        TcpReceiver::new(&TcpConfig::new(CcKind::NewReno))
    }

    #[test]
    fn acks_every_second_full_segment() {
        let mut r = rx();
        let t = Nanos::from_ms(1);
        assert_eq!(r.on_segment(t, seg(0)), None, "first segment waits");
        assert_eq!(r.next_timer(), Some(t + DELACK_TIMEOUT));
        let a = r.on_segment(t, seg(1)).expect("second full segment is ACKed at once");
        assert_eq!(a.ack, 2 * M);
        assert_eq!(a.tsecr, Nanos(0), "the ACK echoes the first segment it covers");
        assert_eq!(r.next_timer(), None, "the ACK cancels the delayed-ACK timer");
        assert_eq!(r.on_segment(t, seg(2)), None);
        assert_eq!(r.on_segment(t, seg(3)).map(|a| (a.ack, a.tsecr)), Some((4 * M, Nanos(2))));
        assert_eq!(r.stats().acks_sent, 2);
    }

    #[test]
    fn lone_segment_is_acked_after_40ms() {
        let mut r = rx();
        let t0 = Nanos::from_ms(5);
        assert_eq!(r.on_segment(t0, seg(0)), None);
        assert_eq!(r.on_timer(t0 + Nanos::from_ms(39)), None, "not before 40 ms");
        let a = r.on_timer(t0 + Nanos::from_ms(40)).expect("delayed ACK at 40 ms");
        assert_eq!(a, Ack::new(M, crate::tcp::DEFAULT_RCV_WND, Nanos(0)));
        assert_eq!(r.next_timer(), None);
        assert_eq!(r.stats().delayed_acks, 1);
        // A short (tail) segment also waits for the timer.
        let short = Segment { seq: M, len: 100, tsval: Nanos(1), retransmission: false };
        assert_eq!(r.on_segment(t0 + Nanos::from_ms(50), short), None);
        assert_eq!(r.on_timer(t0 + Nanos::from_ms(90)).map(|a| a.ack), Some(M + 100));
    }

    #[test]
    fn out_of_order_gets_immediate_dupacks_and_the_hole_fill_acks_everything() {
        let mut r = rx();
        let t = Nanos::ZERO;
        assert_eq!(r.on_segment(t, seg(0)), None);
        // Segment 1 lost; 2, 3, 5 arrive; each is answered at once with ack = 1·M.
        for i in [2, 3, 5] {
            assert_eq!(r.on_segment(t, seg(i)).map(|a| a.ack), Some(M), "dupack for segment {i}");
        }
        assert_eq!(r.ooo_bytes(), 3 * M);
        assert_eq!(r.ooo, vec![(2 * M, 4 * M), (5 * M, 6 * M)]);
        // The retransmission fills the first hole: ACK up to 4 at once, echoing the
        // retransmission's timestamp (out-of-order segments do not update TS.Recent).
        assert_eq!(r.on_segment(t, seg(1)).map(|a| (a.ack, a.tsecr)), Some((4 * M, Nanos(1))));
        // Segment 4 fills the last hole: the ACK covers 5 too.
        assert_eq!(r.on_segment(t, seg(4)).map(|a| (a.ack, a.tsecr)), Some((6 * M, Nanos(4))));
        assert_eq!(r.ooo_bytes(), 0);
        // Old data is answered at once.
        assert_eq!(r.on_segment(t, seg(2)).map(|a| a.ack), Some(6 * M));
        assert_eq!(r.stats().duplicate_segments, 1);
        assert_eq!(r.bytes_received(), 6 * M);
    }

    #[test]
    fn ooo_ranges_merge() {
        let mut r = rx();
        for (s, e) in [(10, 20), (30, 40), (50, 60), (20, 30), (5, 8), (55, 70), (8, 10)] {
            r.insert_ooo(s, e);
        }
        assert_eq!(r.ooo, vec![(5, 40), (50, 70)]);
        r.insert_ooo(0, 100);
        assert_eq!(r.ooo, vec![(0, 100)]);
    }

    /// The segment numbers of an ACK's SACK blocks, and its IP length.
    fn blocks(a: Option<Ack>) -> (u64, Vec<(u64, u64)>, u32) {
        let a = a.expect("an ACK at once");
        (a.ack / M, a.sack.as_slice().iter().map(|&(s, e)| (s / M, e / M)).collect(), a.ip_len())
    }

    #[test]
    fn sack_blocks_put_the_latest_range_first_then_the_recently_reported() {
        let mut r = rx();
        let t = Nanos::ZERO;
        assert_eq!(r.on_segment(t, seg(0)), None);
        // 1, 3, 5, 7 lost. Each out-of-order segment: its range first, then the others most
        // recent first; at most 3 blocks (4 + 8 · n option bytes on the 52-byte ACK).
        assert_eq!(blocks(r.on_segment(t, seg(2))), (1, vec![(2, 3)], 64));
        assert_eq!(blocks(r.on_segment(t, seg(4))), (1, vec![(4, 5), (2, 3)], 72));
        assert_eq!(blocks(r.on_segment(t, seg(6))), (1, vec![(6, 7), (4, 5), (2, 3)], 80));
        assert_eq!(blocks(r.on_segment(t, seg(8))), (1, vec![(8, 9), (6, 7), (4, 5)], 80));
        // 3 joins 2 and 4: the merged range comes first, the ranges it absorbed are gone.
        assert_eq!(blocks(r.on_segment(t, seg(3))), (1, vec![(2, 5), (8, 9), (6, 7)], 80));
        // 1 fills the first hole: the cumulative ACK moves, its range leaves the list.
        assert_eq!(blocks(r.on_segment(t, seg(1))), (5, vec![(8, 9), (6, 7)], 72));
        // A duplicate below rcv_nxt gets no D-SACK block.
        assert_eq!(blocks(r.on_segment(t, seg(4))), (5, vec![(8, 9), (6, 7)], 72));
        assert_eq!(blocks(r.on_segment(t, seg(5))), (7, vec![(8, 9)], 64));
        // The last hole: nothing out of order, no SACK option.
        assert_eq!(blocks(r.on_segment(t, seg(7))), (9, vec![], 52));
    }

    #[test]
    fn sack_blocks_fill_up_with_older_ranges_when_the_recent_ones_are_acknowledged() {
        let mut r = rx();
        let t = Nanos::ZERO;
        r.on_segment(t, seg(0));
        // Ranges arrive at 10, 12, then 2, 4, 6, 8: the 4 most recent are remembered (8, 6, 4, 2).
        for i in [10, 12, 2, 4, 6] {
            r.on_segment(t, seg(i));
        }
        assert_eq!(blocks(r.on_segment(t, seg(8))), (1, vec![(8, 9), (6, 7), (4, 5)], 80));
        assert_eq!(blocks(r.on_segment(t, seg(1))), (3, vec![(8, 9), (6, 7), (4, 5)], 80));
        // Two recent ranges left: the third block is the lowest range not among them.
        assert_eq!(blocks(r.on_segment(t, seg(3))), (5, vec![(8, 9), (6, 7), (10, 11)], 80));
        assert_eq!(blocks(r.on_segment(t, seg(5))), (7, vec![(8, 9), (10, 11), (12, 13)], 80));
    }

    #[test]
    fn without_sack_acks_carry_no_blocks() {
        let mut cfg = TcpConfig::new(CcKind::NewReno);
        cfg.sack = false;
        let mut r = TcpReceiver::new(&cfg);
        r.on_segment(Nanos::ZERO, seg(0));
        assert_eq!(blocks(r.on_segment(Nanos::ZERO, seg(2))), (1, vec![], 52));
    }

    #[test]
    fn sack_blocks_travel_as_offsets_from_the_ack() {
        let b = SackBlocks::from_slice(&[(5000, 6448), (10_000, 20_000), (3000, 4000)]);
        let o = b.to_offsets(2000);
        assert_eq!(o, [3000, 4448, 8000, 18_000, 1000, 2000]);
        assert_eq!(SackBlocks::from_offsets(2000, &o), b);
        assert_eq!(SackBlocks::from_offsets(7, &SackBlocks::NONE.to_offsets(7)), SackBlocks::NONE);
        let one = SackBlocks::from_slice(&[(9, 10)]);
        assert_eq!(SackBlocks::from_offsets(8, &one.to_offsets(8)), one);
    }

    /// A Linux 6.1 receiver (receive-buffer model: the application reads at the end of the
    /// instant).
    fn rx61() -> TcpReceiver {
        TcpReceiver::new(&crate::tcp::KernelEra::Linux6_1.config(CcKind::Cubic))
    }

    #[test]
    fn a_burst_at_one_instant_is_acked_once_after_the_read() {
        let mut r = rx61();
        let t = Nanos::from_ms(3);
        // 10 segments at one instant (an A-MPDU): unread data pulls the window below the
        // 65536 bytes last offered, so __tcp_ack_snd_check sends nothing at arrival.
        for i in 0..10 {
            assert_eq!(r.on_segment(t, seg(i)), None, "segment {i} waits for the read");
        }
        assert_eq!(r.next_timer(), Some(t), "the application reads at once");
        assert!(r.window() < 65536);
        let a = r.on_timer(t).expect("tcp_cleanup_rbuf: more than one MSS unacknowledged");
        assert_eq!((a.ack, a.tsecr, a.rwnd), (10 * M, Nanos(0), 65536));
        assert_eq!(r.next_timer(), None, "the ACK cancels the delayed-ACK timer");
        assert_eq!((r.stats().acks_sent, r.stats().read_acks), (1, 1));
        // The same burst to a receiver without a receive-buffer model: 5 ACKs at arrival.
        let mut old = rx();
        let n = (0..10).filter_map(|i| old.on_segment(t, seg(i))).count();
        assert_eq!(n, 5);
    }

    #[test]
    fn spaced_segments_are_acked_every_second_one_at_the_read() {
        let mut r = rx61();
        for i in 0..6 {
            let t = Nanos::from_ms(i);
            assert_eq!(r.on_segment(t, seg(i)), None);
            let a = r.on_timer(t);
            if i % 2 == 0 {
                assert_eq!(a, None, "one MSS unacknowledged after segment {i}: the timer waits");
                assert_eq!(r.next_timer(), Some(t + DELACK_TIMEOUT));
            } else {
                assert_eq!(a.map(|a| a.ack), Some((i + 1) * M), "segment {i}: ACK at the read");
            }
        }
    }

    #[test]
    fn a_short_segment_is_acked_when_the_read_empties_the_queue() {
        let mut r = rx61();
        let t = Nanos::from_ms(1);
        let short = Segment { seq: 0, len: 100, tsval: Nanos(7), retransmission: false };
        assert_eq!(r.on_segment(t, short), None);
        // ICSK_ACK_PUSHED: the read of a segment shorter than the MSS ACKs at once, not
        // after the 40 ms of the delayed-ACK timer.
        assert_eq!(r.on_timer(t).map(|a| a.ack), Some(100));
        // A full segment alone waits for the timer.
        let t2 = Nanos::from_ms(2);
        let full = Segment { seq: 100, len: M as u32, tsval: Nanos(8), retransmission: false };
        assert_eq!(r.on_segment(t2, full), None);
        assert_eq!(r.on_timer(t2), None);
        assert_eq!(r.on_timer(t2 + DELACK_TIMEOUT).map(|a| a.ack), Some(100 + M));
    }

    #[test]
    fn the_read_sends_a_window_update_when_it_doubles_the_window() {
        let mut r = rx61();
        let t = Nanos::from_ms(1);
        // 35 segments arrive out of order after a hole (each answered at once), then the
        // hole: everything is in order but unread; the ACK offers what is left of the
        // 131072-byte buffer.
        for i in 1..36 {
            assert!(r.on_segment(t, seg(i)).is_some());
        }
        let a = r.on_segment(t, seg(0)).expect("the hole fill is ACKed at once");
        assert_eq!(a.ack, 36 * M);
        let left = a.rwnd;
        assert!(2 * left <= 65536, "less than half the clamp is left: {left}");
        // The read frees the buffer: the window is 65536 again, at least twice what was left.
        let u = r.on_timer(t).expect("window update");
        assert_eq!((u.ack, u.rwnd), (36 * M, 65536));
        assert_eq!(r.stats().read_acks, 1);
    }

    #[test]
    fn data_beyond_the_window_is_discarded() {
        let mut cfg = TcpConfig::new(CcKind::NewReno);
        cfg.rcv_wnd = 2 * M;
        let mut r = TcpReceiver::new(&cfg);
        r.on_segment(Nanos::ZERO, seg(1));
        assert_eq!(r.on_segment(Nanos::ZERO, seg(2)).map(|a| a.ack), Some(0), "out of window, dupack");
        assert_eq!(r.stats().beyond_window, 1);
        assert_eq!(r.on_segment(Nanos::ZERO, seg(0)).map(|a| a.ack), Some(2 * M));
    }
}
