//! The one ICMP echo (ping) source, sans-I/O: one echo request every `interval`, the RTT of
//! each reply. The simulator's ping flows run it (`traffic/source.rs`), as does the TCP test
//! bench; the responder is trivial (`Traffic::receive` answers at once with a reply of the same
//! size). Without a deadline every reply counts, however late, as iputils ping reports it; with
//! one (`ping -W`), a reply later than the deadline counts as lost and only in `late`.

use std::collections::VecDeque;

use crate::time::Nanos;

/// IPv4 (20) + ICMP (8) header bytes.
pub const ICMP_IP_HEADER: u32 = 28;
/// iputils ping's default payload (`-s 56`), 84-byte datagrams.
#[cfg(test)]
pub const DEFAULT_PING_PAYLOAD: u32 = 56;
/// Default per-request deadline.
#[cfg(test)]
pub const DEFAULT_PING_TIMEOUT: Nanos = Nanos::from_secs(1);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingConfig {
    pub interval: Nanos,
    /// ICMP payload bytes (`ping -s`).
    pub payload: u32,
    /// Per-request deadline (`ping -W`); None: none.
    pub timeout: Option<Nanos>,
}

impl PingConfig {
    /// `ping -i INTERVAL -W 1`: the default payload and a 1 s deadline.
    #[cfg(test)]
    pub fn new(interval: Nanos) -> PingConfig {
        PingConfig { interval, payload: DEFAULT_PING_PAYLOAD, timeout: Some(DEFAULT_PING_TIMEOUT) }
    }

    /// `ping -i INTERVAL -s PAYLOAD`: no deadline, every reply counts.
    pub fn without_deadline(interval: Nanos, payload: u32) -> PingConfig {
        PingConfig { interval, payload, timeout: None }
    }
}

/// An echo request to send; the reply carries the same `seq` and `ip_len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EchoRequest {
    pub seq: u64,
    pub ip_len: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PingStats {
    pub sent: u64,
    pub received: u64,
    /// Requests whose reply did not come within the timeout (or not before `finish`).
    pub lost: u64,
    /// Replies that came after their request was counted lost.
    pub late: u64,
}

#[derive(Clone, Debug)]
pub struct PingSource {
    cfg: PingConfig,
    next_send: Nanos,
    next_seq: u64,
    /// Send time of each request from `base_seq` on, `None` once answered. Capacity
    /// timeout / interval + 2, reserved at creation.
    outstanding: VecDeque<Option<Nanos>>,
    base_seq: u64,
    stats: PingStats,
}

impl PingSource {
    /// First request at `start`.
    pub fn new(cfg: PingConfig, start: Nanos) -> PingSource {
        assert!(cfg.interval > Nanos::ZERO, "ping interval must be positive");
        let cap = cfg.timeout.map_or(16, |t| (t.0 / cfg.interval.0) as usize + 2);
        PingSource {
            cfg,
            next_send: start,
            next_seq: 0,
            outstanding: VecDeque::with_capacity(cap.min(1 << 16)),
            base_seq: 0,
            stats: PingStats::default(),
        }
    }

    /// The request due at `now`, if any (at most one per call; call again while it
    /// returns `Some`).
    pub fn next_send(&mut self, now: Nanos) -> Option<EchoRequest> {
        self.expire(now);
        if now < self.next_send {
            return None;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.next_send += self.cfg.interval;
        self.outstanding.push_back(Some(now));
        self.stats.sent += 1;
        Some(EchoRequest { seq, ip_len: self.cfg.payload + ICMP_IP_HEADER })
    }

    /// An echo reply arrived: its RTT, or `None` if it was already counted lost (or unknown).
    pub fn on_reply(&mut self, now: Nanos, seq: u64) -> Option<Nanos> {
        self.expire(now);
        let slot = seq.checked_sub(self.base_seq).and_then(|i| self.outstanding.get_mut(i as usize));
        match slot {
            Some(s @ Some(_)) => {
                let sent = s.take().unwrap_or(now);
                self.stats.received += 1;
                Some(now - sent)
            }
            _ => {
                if seq < self.next_seq {
                    self.stats.late += 1;
                }
                None
            }
        }
    }

    /// Next time the source needs a call: the next request, or the oldest deadline.
    #[cfg(test)]
    pub fn next_timer(&self) -> Option<Nanos> {
        let deadline = self.cfg.timeout.and_then(|to| self.outstanding.iter().flatten().next().map(|&t| t + to));
        Some(deadline.map_or(self.next_send, |d| d.min(self.next_send)))
    }

    /// Count requests whose deadline has passed as lost, and forget the answered ones at the
    /// front.
    pub fn expire(&mut self, now: Nanos) {
        while let Some(&front) = self.outstanding.front() {
            match (front, self.cfg.timeout) {
                (Some(sent), Some(to)) if sent + to <= now => self.stats.lost += 1,
                (Some(_), _) => break,
                (None, _) => {}
            }
            self.outstanding.pop_front();
            self.base_seq += 1;
        }
    }

    /// End of the run: requests still unanswered count as lost.
    #[cfg(test)]
    pub fn finish(&mut self) {
        self.stats.lost += self.outstanding.iter().flatten().count() as u64;
        self.base_seq += self.outstanding.len() as u64;
        self.outstanding.clear();
    }

    #[cfg(test)]
    pub fn stats(&self) -> &PingStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_at_the_interval_and_measures_rtt() {
        let mut p = PingSource::new(PingConfig::new(Nanos::from_ms(100)), Nanos::from_ms(10));
        assert_eq!(p.next_send(Nanos::ZERO), None);
        assert_eq!(p.next_timer(), Some(Nanos::from_ms(10)));
        let r = p.next_send(Nanos::from_ms(10)).unwrap();
        assert_eq!(r, EchoRequest { seq: 0, ip_len: 84 });
        assert_eq!(p.next_send(Nanos::from_ms(10)), None, "one per interval");
        assert_eq!(p.on_reply(Nanos::from_ms(35), 0), Some(Nanos::from_ms(25)));
        assert_eq!(p.on_reply(Nanos::from_ms(36), 0), None, "a duplicate reply has no RTT");
        assert_eq!(p.next_send(Nanos::from_ms(110)).map(|r| r.seq), Some(1));
        assert_eq!(p.stats().received, 1);
    }

    #[test]
    fn unanswered_requests_are_lost_after_the_timeout() {
        let mut p = PingSource::new(PingConfig::new(Nanos::from_ms(200)), Nanos::ZERO);
        let mut t = Nanos::ZERO;
        for _ in 0..10 {
            p.next_send(t);
            t += Nanos::from_ms(200);
        }
        // Replies to 0..=3 never come; 4 comes late at 1.9 s (sent 0.8 s, deadline 1.8 s);
        // 5 in time.
        assert_eq!(p.on_reply(Nanos::from_ms(1900), 4), None);
        assert_eq!(p.on_reply(Nanos::from_ms(1950), 5), Some(Nanos::from_ms(950)));
        assert_eq!(p.stats().lost, 5, "0..=4 expired by 1.9 s");
        assert_eq!(p.stats().late, 1);
        p.finish();
        assert_eq!(p.stats().lost, 9, "6..=9 unanswered at the end");
        assert_eq!(p.stats().sent, 10);
        assert_eq!(p.stats().received, 1);
    }

    #[test]
    fn without_a_deadline_a_late_reply_counts_and_memory_stays_bounded() {
        let mut p = PingSource::new(PingConfig::without_deadline(Nanos::from_ms(100), 56), Nanos::ZERO);
        let mut t = Nanos::ZERO;
        for _ in 0..50 {
            let r = p.next_send(t).unwrap();
            // Each reply two seconds late.
            assert_eq!(p.on_reply(t + Nanos::from_secs(2), r.seq), Some(Nanos::from_secs(2)));
            t += Nanos::from_ms(100);
        }
        assert_eq!((p.stats().received, p.stats().lost, p.stats().late), (50, 0, 0));
        assert!(p.outstanding.len() <= 1, "answered requests are forgotten");
        assert_eq!(p.next_timer(), Some(t), "only the next request is due");
    }
}
