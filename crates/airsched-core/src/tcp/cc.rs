//! Congestion avoidance and multiplicative decrease: NewReno (RFC 5681, Linux `tcp_reno_*` in
//! net/ipv4/tcp_cong.c) and CUBIC (RFC 9438, Linux net/ipv4/tcp_cubic.c), as an enum dispatched
//! by `match`. Slow start, fast recovery and the RTO live in the sender, shared by both.
//! Deviations from Linux CUBIC: floating-point W(t) with the RFC's C = 0.4 and β = 0.7 (Linux:
//! fixed point, 410/1024 and 717/1024); no HyStart (Linux enables it by default), so slow start
//! ends by loss; no idle-restart epoch shift (bulk senders are never idle).

use crate::time::Nanos;

/// Which algorithm a sender uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    NewReno,
    Cubic,
}

crate::words::words!(CcKind: "cubic" => CcKind::Cubic, "newreno" => CcKind::NewReno, "reno" => CcKind::NewReno);

/// RFC 9438 C (segments / s³).
pub const CUBIC_C: f64 = 0.4;
/// RFC 9438 β_cubic, as a fraction for the integer ssthresh: cwnd·7/10.
pub const CUBIC_BETA_NUM: u64 = 7;
pub const CUBIC_BETA_DEN: u64 = 10;
const CUBIC_BETA: f64 = CUBIC_BETA_NUM as f64 / CUBIC_BETA_DEN as f64;
/// RFC 9438 §4.3 α_cubic = 3(1 − β)/(1 + β): the Reno-friendly additive increase.
const CUBIC_ALPHA: f64 = 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);

/// Smallest ssthresh, segments (RFC 5681 (4); Linux returns at least 2).
const MIN_SSTHRESH_SEGMENTS: u64 = 2;

#[derive(Clone, Debug)]
pub enum CongestionControl {
    NewReno(NewReno),
    Cubic(Cubic),
}

impl CongestionControl {
    pub fn new(kind: CcKind) -> CongestionControl {
        match kind {
            CcKind::NewReno => CongestionControl::NewReno(NewReno::default()),
            CcKind::Cubic => CongestionControl::Cubic(Cubic::new()),
        }
    }

    /// Congestion avoidance for an ACK of `acked` new bytes while `cwnd ≥ ssthresh` and not in
    /// recovery; returns the new cwnd (bytes). `min_rtt` is the smallest RTT sample so far.
    pub fn cong_avoid(&mut self, now: Nanos, cwnd: u64, acked: u64, mss: u32, min_rtt: Option<Nanos>) -> u64 {
        match self {
            CongestionControl::NewReno(r) => r.cong_avoid(cwnd, acked, mss),
            CongestionControl::Cubic(c) => c.cong_avoid(now, cwnd, acked, mss, min_rtt),
        }
    }

    /// A congestion event (fast retransmit, or an RTO outside recovery): the new ssthresh.
    pub fn ssthresh(&mut self, cwnd: u64, mss: u32) -> u64 {
        match self {
            CongestionControl::NewReno(r) => r.ssthresh(cwnd, mss),
            CongestionControl::Cubic(c) => c.ssthresh(cwnd, mss),
        }
    }

    /// The retransmission timer expired (Linux `TCP_CA_Loss`), after `ssthresh` if that was
    /// recomputed.
    pub fn on_rto(&mut self) {
        match self {
            CongestionControl::NewReno(r) => r.ack_cnt = 0,
            CongestionControl::Cubic(c) => c.reset(),
        }
    }
}

/// Linux `tcp_reno_cong_avoid` / `tcp_cong_avoid_ai` in bytes: one MSS per cwnd of bytes
/// acknowledged (RFC 5681 (3), byte counting as in RFC 3465).
#[derive(Clone, Debug, Default)]
pub struct NewReno {
    /// Bytes acknowledged since the last increase (Linux `snd_cwnd_cnt`, in bytes).
    ack_cnt: u64,
}

impl NewReno {
    fn cong_avoid(&mut self, cwnd: u64, acked: u64, mss: u32) -> u64 {
        self.ack_cnt += acked;
        if self.ack_cnt >= cwnd {
            let inc = self.ack_cnt / cwnd;
            self.ack_cnt -= inc * cwnd;
            cwnd + inc * mss as u64
        } else {
            cwnd
        }
    }

    /// Linux `tcp_reno_ssthresh`: max(cwnd / 2, 2) in whole segments.
    fn ssthresh(&mut self, cwnd: u64, mss: u32) -> u64 {
        self.ack_cnt = 0;
        let segs = cwnd / mss as u64;
        (segs / 2).max(MIN_SSTHRESH_SEGMENTS) * mss as u64
    }
}

/// CUBIC state (RFC 9438 names; Linux `struct bictcp` names in comments). Windows in segments.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// W_max (`last_max_cwnd`); 0 before the first congestion event and after an RTO.
    w_max: f64,
    /// K, seconds (`bic_K`).
    k: f64,
    /// The plateau W(K) (`bic_origin_point`).
    origin: f64,
    /// Start of the current congestion-avoidance epoch (`epoch_start`).
    epoch_start: Option<Nanos>,
    /// W_est, the Reno-friendly estimate (`tcp_cwnd`).
    w_est: f64,
    /// Bytes acknowledged since the last one-MSS increase (`snd_cwnd_cnt`).
    ack_cnt: u64,
    /// RFC 9438 §4.7; Linux `fast_convergence` = 1.
    pub fast_convergence: bool,
}

impl Cubic {
    pub fn new() -> Cubic {
        Cubic { w_max: 0.0, k: 0.0, origin: 0.0, epoch_start: None, w_est: 0.0, ack_cnt: 0, fast_convergence: true }
    }

    fn reset(&mut self) {
        // Linux bictcp_reset on TCP_CA_Loss (also RFC 9438 §4.8: K = 0 after a timeout).
        self.w_max = 0.0;
        self.k = 0.0;
        self.origin = 0.0;
        self.epoch_start = None;
        self.w_est = 0.0;
        self.ack_cnt = 0;
    }

    /// W_cubic(t) = C (t − K)³ + W_max of the current epoch, segments (t in seconds since
    /// the epoch began).
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        CUBIC_C * d * d * d + self.origin
    }

    /// K of the current epoch, seconds.
    #[cfg(test)]
    pub fn k(&self) -> f64 {
        self.k
    }

    #[cfg(test)]
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    fn cong_avoid(&mut self, now: Nanos, cwnd: u64, acked: u64, mss: u32, min_rtt: Option<Nanos>) -> u64 {
        let mssf = mss as f64;
        let cwnd_seg = cwnd as f64 / mssf;
        let epoch_start = match self.epoch_start {
            Some(t) => t,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = 0;
                self.w_est = cwnd_seg;
                if self.w_max <= cwnd_seg {
                    self.k = 0.0;
                    self.origin = cwnd_seg;
                } else {
                    self.k = libm::cbrt((self.w_max - cwnd_seg) / CUBIC_C);
                    self.origin = self.w_max;
                }
                now
            }
        };
        // RFC 9438 §4.2: aim at W_cubic one RTT ahead (Linux adds delay_min, the min RTT).
        let t = (now - epoch_start + min_rtt.unwrap_or(Nanos::ZERO)).as_secs_f64();
        let target = self.w_cubic(t).clamp(cwnd_seg, 1.5 * cwnd_seg);
        // §4.3 Reno-friendly region: W_est grows by α per window acknowledged (α = 1 once
        // W_est has reached W_max).
        let alpha = if self.w_est >= self.w_max { 1.0 } else { CUBIC_ALPHA };
        self.w_est += alpha * (acked as f64 / mssf) / cwnd_seg;
        let desired = target.max(self.w_est);
        // §4.4/4.5: cwnd grows by (desired − cwnd)/cwnd per segment acknowledged, applied in
        // whole MSS steps like Linux's `cnt`, and never past `desired` (a stretch ACK that
        // acknowledges many segments at once must not overshoot the curve).
        let cnt_segments = if desired > cwnd_seg { cwnd_seg / (desired - cwnd_seg) } else { 100.0 * cwnd_seg };
        let step = ((cnt_segments * mssf) as u64).max(1);
        self.ack_cnt += acked;
        if self.ack_cnt >= step {
            let inc = self.ack_cnt / step;
            self.ack_cnt -= inc * step;
            let room = (desired - cwnd_seg).ceil().max(1.0) as u64;
            cwnd + inc.min(room) * mss as u64
        } else {
            cwnd
        }
    }

    /// RFC 9438 §4.6/4.7 (Linux `bictcp_recalc_ssthresh`): remember W_max (reduced further
    /// by fast convergence when the window shrank since the last event), end the epoch,
    /// ssthresh = β·cwnd in whole segments.
    fn ssthresh(&mut self, cwnd: u64, mss: u32) -> u64 {
        let cwnd_seg = cwnd as f64 / mss as f64;
        self.epoch_start = None;
        self.w_max =
            if self.fast_convergence && cwnd_seg < self.w_max { cwnd_seg * (1.0 + CUBIC_BETA) / 2.0 } else { cwnd_seg };
        let segs = cwnd / mss as u64;
        (segs * CUBIC_BETA_NUM / CUBIC_BETA_DEN).max(MIN_SSTHRESH_SEGMENTS) * mss as u64
    }
}

impl Default for Cubic {
    fn default() -> Cubic {
        Cubic::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const M: u64 = MSS as u64;

    /// Drive congestion avoidance with an ideal ACK clock: every RTT, one ACK of one MSS per
    /// segment of the window at the RTT's start, evenly spaced. Returns cwnd (segments) at
    /// each probe time.
    fn ack_clock(cc: &mut CongestionControl, mut cwnd: u64, rtt: Nanos, until: Nanos, probes: &[Nanos]) -> Vec<f64> {
        let mut out = vec![0.0; probes.len()];
        let mut now = Nanos::ZERO;
        while now < until {
            let n = cwnd / M;
            for i in 0..n {
                let t = now + Nanos(rtt.0 * i / n);
                for (p, o) in probes.iter().zip(out.iter_mut()) {
                    if *p <= t && *o == 0.0 {
                        *o = cwnd as f64 / M as f64;
                    }
                }
                cwnd = cc.cong_avoid(t, cwnd, M, MSS, Some(rtt));
            }
            now += rtt;
        }
        out
    }

    #[test]
    fn cubic_window_follows_w_of_t_within_one_percent() {
        let mut cc = CongestionControl::new(CcKind::Cubic);
        // A loss at 1000 segments: W_max = 1000, cwnd = ssthresh = 700, K = ∛(300 / 0.4).
        let ssthresh = cc.ssthresh(1000 * M, MSS);
        assert_eq!(ssthresh, 700 * M);
        let k = libm::cbrt(300.0 / 0.4); // 9.0856 s
        let probes = [
            Nanos::from_secs(2),
            Nanos::from_secs(5),
            Nanos((k * 1e9) as u64),
            Nanos::from_secs(13),
            Nanos::from_secs(15),
        ];
        let got = ack_clock(&mut cc, ssthresh, Nanos::from_ms(100), Nanos::from_secs(16), &probes);
        let CongestionControl::Cubic(c) = &cc else { unreachable!() };
        assert!((c.k() - k).abs() < 1e-9, "K = {} want {k}", c.k());
        for (p, g) in probes.iter().zip(&got) {
            let t = p.as_secs_f64();
            let want = CUBIC_C * (t - k).powi(3) + 1000.0;
            let err = (g - want).abs() / want;
            eprintln!("CUBIC t = {t:.3} s: cwnd {g} segments, W(t) = {want:.1}, error {:.3} %", err * 100.0);
            assert!(err < 0.01, "t = {t:.3} s: cwnd {g} segments, W(t) = {want:.1} (error {:.2} %)", err * 100.0);
        }
    }

    #[test]
    fn cubic_reduces_by_beta_with_fast_convergence() {
        let mut cc = CongestionControl::new(CcKind::Cubic);
        assert_eq!(cc.ssthresh(100 * M, MSS), 70 * M, "ssthresh = 0.7 cwnd");
        let CongestionControl::Cubic(c) = &cc else { unreachable!() };
        assert_eq!(c.w_max(), 100.0);
        // A second loss below W_max: W_max = 80 · (1 + 0.7) / 2 = 68.
        assert_eq!(cc.ssthresh(80 * M, MSS), 56 * M);
        let CongestionControl::Cubic(c) = &cc else { unreachable!() };
        assert!((c.w_max() - 68.0).abs() < 1e-9, "fast convergence W_max = {}", c.w_max());
        assert_eq!(cc.ssthresh(2 * M, MSS), 2 * M, "never below 2 segments");
    }

    #[test]
    fn cubic_reno_friendly_region_grows_like_aimd_at_short_rtt() {
        // W_max 100 segments, cwnd 70, RTT 10 ms: K = ∛75 = 4.2 s and W_cubic(0.5 s) = 79.4,
        // while W_est adds α = 0.53 segments per RTT: 70 + 50·0.53 = 96.5 after 50 RTTs.
        let mut cc = CongestionControl::new(CcKind::Cubic);
        let cwnd = cc.ssthresh(100 * M, MSS);
        let got = ack_clock(&mut cc, cwnd, Nanos::from_ms(10), Nanos::from_ms(600), &[Nanos::from_ms(500)])[0];
        let reno_friendly = 70.0 + 50.0 * CUBIC_ALPHA;
        assert!((got - reno_friendly).abs() <= 0.05 * 50.0 * CUBIC_ALPHA + 1.0, "cwnd {got}, W_est {reno_friendly:.1}");
    }

    #[test]
    fn newreno_adds_one_segment_per_window_and_halves() {
        let mut cc = CongestionControl::new(CcKind::NewReno);
        let mut cwnd = 20 * M;
        for _ in 0..20 {
            cwnd = cc.cong_avoid(Nanos::ZERO, cwnd, M, MSS, None);
        }
        assert_eq!(cwnd, 21 * M, "one window of ACKs adds one MSS");
        for _ in 0..10 {
            cwnd = cc.cong_avoid(Nanos::ZERO, cwnd, M, MSS, None);
        }
        assert_eq!(cwnd, 21 * M);
        assert_eq!(cc.ssthresh(21 * M, MSS), 10 * M, "max(cwnd/2, 2) in whole segments");
        assert_eq!(cc.ssthresh(3 * M, MSS), 2 * M);
    }
}
