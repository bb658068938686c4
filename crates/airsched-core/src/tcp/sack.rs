//! The SACK scoreboard (RFC 2018, RFC 6675's loss rule) as Linux 6.12 keeps it on the sender's
//! records: `pipe` (`tcp_packets_in_flight`), tagging SACK blocks with the last ACK's blocks as
//! a cache (`tcp_sacktag_write_queue`, `recv_sack_cache`), the DupThresh loss marking
//! (`tcp_mark_head_lost`), the choice of what to resend next (`tcp_xmit_retransmit_queue` of
//! net/ipv4/tcp_output.c) and the marks of an RTO (`tcp_timeout_mark_lost`); from
//! net/ipv4/tcp_input.c. Methods of [`TcpSender`], called from its state machine in `super`.

#[cfg(test)]
use super::SentRecord;
use super::{CaState, LastSent, TcpSender, DUPTHRESH};
use crate::tcp::{SackBlocks, Segment, MAX_SACK_BLOCKS};
use crate::time::Nanos;

impl TcpSender {
    /// `pipe` (RFC 6675 SetPipe, Linux `tcp_packets_in_flight`) in segments: outstanding
    /// segments neither SACKed nor lost, plus retransmissions in flight. Without SACK nothing
    /// is ever SACKed or marked lost: the outstanding segments.
    pub fn pipe(&self) -> u64 {
        self.sent.len() as u64 - self.sacked_out as u64 - self.lost_out as u64 + self.retrans_out as u64
    }

    /// Number of records that end at or below `seq` (segments lie on an MSS grid from
    /// `snd_una`; the last one may be short and ends at `snd_max`).
    pub(super) fn records_below(&self, seq: u64) -> usize {
        let n = (seq.max(self.snd_una) - self.snd_una).div_ceil(self.mss as u64) as usize;
        n.min(self.sent.len())
    }

    /// First byte of record `i`.
    pub(super) fn record_start(&self, i: usize) -> u64 {
        if i == 0 {
            self.snd_una
        } else {
            self.sent[i - 1].end
        }
    }

    /// With SACK: the forced first retransmission of a recovery, then lost segments in order,
    /// then new data, each while pipe < cwnd (Linux `tcp_xmit_retransmit_queue`, then
    /// `tcp_write_xmit`).
    pub(super) fn next_segment_sack(&mut self, now: Nanos) -> Option<Segment> {
        if self.retransmit_pending {
            // RFC 6675 (4.3): the first lost segment goes regardless of pipe.
            self.retransmit_pending = false;
            if let Some(i) = self.next_lost() {
                self.last = LastSent::Sack { i, forced: true };
                return Some(self.retransmit_record(now, i));
            }
        }
        if self.frto_new_only {
            return self.new_segment(now);
        }
        if let Some(i) = self.next_lost() {
            let len = self.sent[i].end - self.record_start(i);
            if self.pipe() * self.mss as u64 + len > self.cwnd {
                return None;
            }
            self.last = LastSent::Sack { i, forced: false };
            return Some(self.retransmit_record(now, i));
        }
        self.new_segment(now)
    }

    /// The lowest lost segment with no retransmission in flight. Lost segments are always a
    /// prefix of the un-SACKed ones, so the scan stops at the first un-SACKed segment that is
    /// neither being retransmitted nor lost.
    pub(super) fn next_lost(&mut self) -> Option<usize> {
        let mut i = self.records_below(self.rxt_upto);
        while i < self.sent.len() {
            let r = self.sent[i];
            if r.sacked || r.rexmit_in_flight {
                i += 1;
                continue;
            }
            self.rxt_upto = self.record_start(i);
            return r.lost.then_some(i);
        }
        self.rxt_upto = self.snd_max;
        None
    }

    pub(super) fn retransmit_record(&mut self, now: Nanos, i: usize) -> Segment {
        let seq = self.record_start(i);
        let r = &mut self.sent[i];
        debug_assert!(r.lost && !r.sacked && !r.rexmit_in_flight);
        r.retransmitted = true;
        r.rexmit_in_flight = true;
        r.sent = now;
        let end = r.end;
        if self.retrans_out == 0 {
            self.rexmit_low = now;
        }
        self.retrans_out += 1;
        self.rxt_upto = end;
        if self.state == CaState::Loss {
            self.stats.timeout_retransmits += 1;
        } else {
            self.stats.fast_retransmits += 1;
        }
        if i == 0 {
            // Linux tcp_xmit_retransmit_queue rearms the timer when it resends the head.
            self.rto_deadline = Some(now + self.rtt.current_rto());
        }
        Segment { seq, len: (end - seq) as u32, tsval: now, retransmission: true }
    }

    /// Mark the SACK blocks' segments; returns the send time of the oldest newly SACKed
    /// segment never retransmitted (an RTT sample). Parts of a block inside one of the last
    /// ACK's blocks were marked then and are skipped.
    pub(super) fn tag_sacks(&mut self, now: Nanos, blocks: &SackBlocks) -> Option<Nanos> {
        let nc = self.sack_cache.len();
        let mut cached = [(0u64, 0u64); MAX_SACK_BLOCKS];
        cached[..nc].copy_from_slice(self.sack_cache.as_slice());
        cached[..nc].sort_unstable();
        let mut applied = SackBlocks::NONE;
        let mut oldest = None;
        for &(s, e) in blocks.as_slice() {
            // Blocks at or below snd_una (D-SACK, never sent here) or beyond snd_max: ignored.
            let s = s.max(self.snd_una);
            if e > self.snd_max || s >= e {
                continue;
            }
            applied.push(s, e);
            let mut cur = s;
            for &(cs, ce) in &cached[..nc] {
                if ce <= cur || cs >= e {
                    continue;
                }
                if cs > cur {
                    self.tag_range(now, cur, cs, &mut oldest);
                }
                cur = cur.max(ce);
            }
            if cur < e {
                self.tag_range(now, cur, e, &mut oldest);
            }
        }
        self.sack_cache = applied;
        oldest
    }

    /// Mark SACKed every segment wholly inside `[s, e)`.
    pub(super) fn tag_range(&mut self, now: Nanos, s: u64, e: u64, oldest: &mut Option<Nanos>) {
        let mut i = self.records_below(s);
        let mut start = self.record_start(i);
        while i < self.sent.len() && self.sent[i].end <= e {
            let r = &mut self.sent[i];
            if start >= s && !r.sacked {
                r.sacked = true;
                self.sacked_out += 1;
                self.delivered_now += 1;
                self.stats.sacked_segments += 1;
                if r.lost {
                    r.lost = false;
                    self.lost_out -= 1;
                }
                if r.rexmit_in_flight {
                    r.rexmit_in_flight = false;
                    self.retrans_out -= 1;
                }
                let (sent, retransmitted, end) = (r.sent, r.retransmitted, r.end);
                if !retransmitted {
                    *oldest = Some(oldest.map_or(sent, |t: Nanos| t.min(sent)));
                }
                self.high_sacked = self.high_sacked.max(end);
                if !retransmitted && self.recover.is_some_and(|h| end <= h) {
                    self.orig_sack_acked = true;
                }
                self.rack_advance(now, sent, end, retransmitted);
            }
            start = self.sent[i].end;
            i += 1;
        }
    }

    /// RFC 6675 IsLost as Linux `tcp_mark_head_lost` applies it: every un-SACKed segment with
    /// DupThresh SACKed segments above it is lost. Marks only grow, from `lost_upto`. Returns
    /// how many were newly marked.
    pub(super) fn mark_lost(&mut self) -> u32 {
        if self.sacked_out < DUPTHRESH {
            return 0;
        }
        let lo = self.records_below(self.lost_upto);
        let mut i = self.records_below(self.high_sacked);
        let mut found = 0;
        while i > lo && found < DUPTHRESH {
            i -= 1;
            found += self.sent[i].sacked as u32;
        }
        if found < DUPTHRESH {
            return 0;
        }
        // `i` is the DupThresh-th highest SACKed segment.
        let mut marked = 0;
        for r in self.sent.range_mut(lo..i) {
            if !r.sacked && !r.lost {
                r.lost = true;
                marked += 1;
            }
        }
        self.lost_out += marked;
        self.lost_upto = self.record_start(i);
        marked
    }

    /// RTO with SACK (Linux `tcp_timeout_mark_lost`): every un-SACKed segment is lost, no
    /// retransmission is in flight any more; the SACK marks stay.
    pub(super) fn rto_mark_lost(&mut self) {
        let mut lost = 0;
        for r in self.sent.iter_mut() {
            r.rexmit_in_flight = false;
            r.lost = !r.sacked;
            lost += r.lost as u32;
        }
        self.lost_out = lost;
        self.retrans_out = 0;
        self.lost_upto = self.snd_max;
        self.rxt_upto = self.snd_una;
    }

    /// Recount the scoreboard and check its invariants (tests).
    #[cfg(test)]
    pub(crate) fn check_scoreboard(&self) {
        let count = |f: fn(&SentRecord) -> bool| self.sent.iter().filter(|r| f(r)).count() as u32;
        assert_eq!(self.sacked_out, count(|r| r.sacked));
        assert_eq!(self.lost_out, count(|r| r.lost));
        assert_eq!(self.retrans_out, count(|r| r.rexmit_in_flight));
        assert!(self.sent.iter().all(|r| !(r.sacked && (r.lost || r.rexmit_in_flight))));
        assert!(self.sent.iter().all(|r| !r.rexmit_in_flight || r.lost), "only lost segments are resent");
        // Lost segments are a prefix of the un-SACKed ones.
        let mut seen_unlost = false;
        for r in self.sent.iter().filter(|r| !r.sacked) {
            assert!(!(seen_unlost && r.lost), "a lost segment above an un-SACKed one not lost");
            seen_unlost |= !r.lost;
        }
        assert!(self.sacked_out + self.lost_out <= self.sent.len() as u32 + self.retrans_out);
        if !self.sack {
            assert_eq!((self.sacked_out, self.lost_out, self.retrans_out), (0, 0, 0));
        }
    }
}
