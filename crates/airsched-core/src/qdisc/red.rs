//! red, Random Early Detection (Linux `net/sched/sch_red.c` and `include/net/red.h` as in 6.x
//! mainline, with the 5.12 parameter checks and the `nodrop` flag of 5.7; iproute2 `tc/q_red.c`
//! and `tc/tc_red.c` for the parameters tc derives and sends).
//!
//! At each arrival the average queue `qavg` (bytes, fixed point scaled by 2^Wlog) is updated from
//! the child's backlog: `qavg += backlog - qavg >> Wlog`, i.e. avg = (1-W) avg + W backlog with
//! W = 2^-Wlog; after an idle period (from the dequeue that found the queue empty to this
//! arrival) it decays instead, by the idle-time table `Stab` tc computes (`qavg >> Stab[i]`, or
//! a linear decay while the table says 0). Then, with avg below `min` nothing happens; between
//! `min` and `max` the packet is dropped with a probability that grows with avg and with the
//! number of packets since the last drop (`qcount`, Floyd and Jacobson's uniform spacing): a
//! drop happens when `(avg - min) * qcount >= qR`, qR uniform in [0, 2^32 / (max_P / (max -
//! min))), so the marking probability is max_P (avg - min) / (max - min); at or above `max`
//! every packet is dropped ("forced"). Packets that pass go to a bfifo child of `limit` bytes,
//! whose overflow is counted as `pdrop`. With `ecn`, ECN-capable packets are marked instead of
//! dropped (not with `harddrop` above max; `nodrop` also queues Not-ECT ones). `adaptive` runs
//! Floyd's Adaptive RED every 500 ms, moving max_P between 1 % and 50 % so that avg sits between
//! min + 0.4 (max - min) and min + 0.6 (max - min).
//!
//! Random draws come from a seeded stream (`StreamKind::Qdisc`, keyed by the device and the
//! qdisc's handle, tagged as RED's). The adaptive timer runs lazily: missed 500 ms ticks are applied in
//! order before each operation, which gives the same state as a real timer.
//!
//! Kernel behaviour reproduced as is: tc computes the idle table in 64-ns ticks, but kernels
//! since ≈3.x index it with microseconds (`ktime_us_delta`), so idle decay is about 15.6 times
//! slower than tc intended. Deviations: `probability 1` would overflow tc's 32-bit max_P (C
//! undefined behaviour); it is saturated to 2^32 - 1. `qevent` blocks are accepted and ignored.
//! A packet is ECN-capable when its flow's TOS byte has ECT(0), ECT(1) or CE set; airsched's
//! UDP flows normally have none, so `ecn` degrades to dropping them, as the kernel does for
//! Not-ECT packets.

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::common::{filter_diag, pending_wakeup};
use super::tbf::child_handle;
use super::{
    diag_error, BuildCx, ClassReport, Enq, Fifo, FifoKind, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport,
    QdiscStats,
};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::tc::opts::format_size;
use crate::time::Nanos;

/// Stream index tag for RED ("RED" in the high bits), XORed with the device stream and handle.
const RED_STREAM_TAG: u64 = 0x0052_4544 << 40;
/// RED_ONE_PERCENT = DIV_ROUND_CLOSEST(2^32, 100).
const ONE_PERCENT: u32 = 42_949_673;
const MAX_P_MIN: u32 = ONE_PERCENT;
const MAX_P_MAX: u32 = 50 * ONE_PERCENT;
/// The adaptive timer period (HZ/2).
const ADAPT_PERIOD: Nanos = Nanos::from_ms(500);

/// The parameters tc sends (`struct tc_red_qopt` + STAB + MAX_P + flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedParams {
    pub limit: u32,
    pub qth_min: u32,
    pub qth_max: u32,
    pub wlog: u8,
    pub plog: u8,
    pub scell_log: u8,
    pub stab: [u8; 256],
    /// Probability at max as a Q0.32 fraction (0: derived from Plog by the kernel).
    pub max_p: u32,
    pub ecn: bool,
    pub harddrop: bool,
    pub adaptive: bool,
    pub nodrop: bool,
}

/// `struct red_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedXstats {
    pub prob_drop: u64,
    pub prob_mark: u64,
    pub forced_drop: u64,
    pub forced_mark: u64,
    pub pdrop: u64,
    pub other: u64,
}

/// red_action's verdict: RED_DONT_MARK, RED_PROB_MARK, RED_HARD_MARK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Pass,
    Early,
    Forced,
}

pub struct Red {
    handle: Handle,
    p: RedParams,
    /// Scaled thresholds (<< Wlog), as red_parms keeps them.
    qth_min_s: u64,
    qth_max_s: u64,
    qth_delta: u32,
    target_min: u32,
    target_max: u32,
    /// max_P / qth_delta, at least 1 (the divisor of the random draw).
    max_p_delta: u32,
    scell_max: u64,
    // red_vars
    qavg: u64,
    qcount: i32,
    q_r: u32,
    qidlestart: Option<Nanos>,
    next_adapt: Nanos,
    rng: Xoshiro256PlusPlus,
    child: Box<QdiscImpl>,
    xs: RedXstats,
    stats: QdiscStats,
}

/// `fls`: 1-based index of the most significant set bit, 0 for 0.
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

impl Red {
    /// A RED created at time 0 (idle since then), with its default bfifo child of `limit` bytes.
    pub fn new(p: RedParams, handle: Handle, seed: u64, stream_index: u64) -> Red {
        // red_set_parms
        let mut delta = p.qth_max as i64 - p.qth_min as i64;
        if delta <= 0 {
            delta = 1;
        }
        let delta = delta as u32;
        let max_p = if p.max_p == 0 {
            let maxp = if p.plog < 32 { u32::MAX >> p.plog } else { u32::MAX };
            maxp.wrapping_mul(delta)
        } else {
            p.max_p
        };
        let d5 = delta / 5;
        let child =
            QdiscImpl::Fifo(Fifo::new(FifoKind::Bfifo, p.limit as u64, Handle::UNSPEC, Handle::new(handle.major(), 1)));
        let index = RED_STREAM_TAG ^ stream_index.rotate_left(32) ^ handle.0 as u64;
        let mut red = Red {
            handle,
            qth_min_s: (p.qth_min as u64) << p.wlog,
            qth_max_s: (p.qth_max as u64) << p.wlog,
            qth_delta: delta,
            target_min: p.qth_min + 2 * d5,
            target_max: p.qth_min + 3 * d5,
            max_p_delta: (max_p / delta).max(1),
            scell_max: 255u64 << p.scell_log,
            qavg: 0,
            qcount: -1,
            q_r: 0,
            qidlestart: Some(Nanos::ZERO),
            next_adapt: ADAPT_PERIOD,
            rng: stream(seed, StreamKind::Qdisc, index),
            child: Box::new(child),
            xs: RedXstats::default(),
            stats: QdiscStats::default(),
            p,
        };
        red.p.max_p = max_p;
        red
    }

    #[cfg(test)]
    pub fn params(&self) -> &RedParams {
        &self.p
    }

    #[cfg(test)]
    pub fn xstats(&self) -> RedXstats {
        self.xs
    }

    /// The average queue in bytes (qavg without its fixed-point scale).
    #[cfg(test)]
    pub fn avg_bytes(&self) -> f64 {
        self.qavg as f64 / (1u64 << self.p.wlog) as f64
    }

    /// The current probability at max, as a fraction (moves under `adaptive`).
    #[cfg(test)]
    pub fn max_p(&self) -> f64 {
        self.p.max_p as f64 / 4_294_967_296.0
    }

    /// red_calc_qavg_from_idle_time.
    fn qavg_from_idle(&self, start: Nanos, now: Nanos) -> u64 {
        let us_idle = (now.saturating_sub(start).0 / 1000).min(self.scell_max);
        let shift = self.p.stab[((us_idle >> self.p.scell_log) & 255) as usize];
        if shift != 0 {
            self.qavg >> shift
        } else {
            let dec = self.qavg.wrapping_mul(us_idle) >> self.p.scell_log;
            if dec < self.qavg >> 1 {
                self.qavg - dec
            } else {
                self.qavg >> 1
            }
        }
    }

    /// red_action.
    fn action(&mut self, qavg: u64) -> Action {
        if qavg < self.qth_min_s {
            self.qcount = -1;
            Action::Pass
        } else if qavg >= self.qth_max_s {
            self.qcount = -1;
            Action::Forced
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                let lhs = ((qavg - self.qth_min_s) >> self.p.wlog).wrapping_mul(self.qcount as u64);
                if lhs >= self.q_r as u64 {
                    self.qcount = 0;
                    self.q_r = self.random();
                    return Action::Early;
                }
            } else {
                self.q_r = self.random();
            }
            Action::Pass
        }
    }

    /// red_random: uniform in [0, 2^32 / max_p_delta).
    fn random(&mut self) -> u32 {
        self.rng.next_u32() / self.max_p_delta
    }

    /// Apply the adaptive timer ticks due by `now` (red_adaptative_algo every 500 ms).
    fn catch_up(&mut self, now: Nanos) {
        if !self.p.adaptive {
            return;
        }
        while self.next_adapt <= now {
            let at = self.next_adapt;
            let mut qavg = self.qavg;
            if let Some(start) = self.qidlestart {
                qavg = self.qavg_from_idle(start, at);
            }
            let avg = qavg >> self.p.wlog;
            if avg > self.target_max as u64 && self.p.max_p <= MAX_P_MAX {
                self.p.max_p += MAX_P_MIN.min(self.p.max_p / 4);
            } else if avg < self.target_min as u64 && self.p.max_p >= MAX_P_MIN {
                self.p.max_p = (self.p.max_p / 10) * 9;
            }
            // DIV_ROUND_CLOSEST
            let d = self.qth_delta;
            self.max_p_delta = ((self.p.max_p + d / 2) / d).max(1);
            self.next_adapt = at + ADAPT_PERIOD;
        }
    }

    /// INET_ECN_set_ce succeeds for ECT(0), ECT(1) and CE.
    fn ecn_capable(cx: &QCtx<'_>, pkt: PacketId) -> bool {
        cx.key(pkt).tos & 3 != 0
    }
}

/// `tc_red_eval_ewma`: the smallest Wlog whose burst allowance covers `burst` packets.
pub fn eval_ewma(qmin: u32, burst: u32, avpkt: u32) -> Result<u8, String> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return Err(format!(
            "RED: burst {burst} is too small for min {qmin} and avpkt {avpkt} (tc: \"Try burst {}\"); \
             failed to calculate the EWMA constant",
            1 + qmin / avpkt
        ));
    }
    let mut w = 0.5f64;
    for wlog in 1..32u8 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return Ok(wlog);
        }
        w /= 2.0;
    }
    Err("RED: failed to calculate the EWMA constant (burst too large)".into())
}

/// `tc_red_eval_P`: Plog with max_P = (max - min) / 2^Plog.
pub fn eval_p(qmin: u32, qmax: u32, prob: f64) -> Option<u8> {
    let i = qmax as i64 - qmin as i64;
    if i == 0 {
        return Some(0);
    }
    if i < 0 {
        return None;
    }
    let mut prob = prob / i as f64;
    for i in 0..32u8 {
        if prob > 1.0 {
            return Some(i);
        }
        prob *= 2.0;
    }
    None
}

/// `tc_red_eval_idle_damping`: Scell_log and the table of shifts by idle time.
pub fn eval_idle_damping(wlog: u8, avpkt: u32, bytes_per_sec: u64) -> Option<(u8, [u8; 256])> {
    let xmit_time = (1e6 * (avpkt as f64 / bytes_per_sec as f64) * (1000.0 / 64.0)).ceil().min(u32::MAX as f64);
    let lw = -(1.0 - 1.0 / (1u64 << wlog) as f64).ln() / xmit_time;
    let maxtime = 31.0 / lw;
    let clog = (0..32u8).find(|&c| maxtime / ((1u64 << c) as f64) < 512.0)?;
    let mut sbuf = [0u8; 256];
    for (i, s) in sbuf.iter_mut().enumerate().take(255).skip(1) {
        let v = (i as f64 * (1u64 << clog) as f64) * lw;
        *s = if v > 31.0 { 31 } else { v as u8 };
    }
    sbuf[255] = 31;
    Some((clog, sbuf))
}

const KNOWN: &[&str] = &[
    "limit",
    "min",
    "max",
    "avpkt",
    "burst",
    "probability",
    "bandwidth",
    "ecn",
    "harddrop",
    "nodrop",
    "adaptive",
    "qevent",
];

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let mut p = super::opt_parser(&d.opts, d.end, diags);
    let (mut limit, mut qmin, mut qmax, mut avpkt) = (0u64, 0u64, 0u64, 0u64);
    let mut burst = 0u64;
    let mut probability = 0.02f64;
    let mut rate_bytes: Option<u64> = None;
    let (mut ecn, mut harddrop, mut adaptive, mut nodrop) = (None::<Tok<'_>>, false, false, None::<Tok<'_>>);
    let mut at: [Option<Tok<'_>>; 6] = [None; 6]; // limit min max burst probability bandwidth
    while let Some(k) = p.next() {
        let vt = p.peek();
        match k.text {
            "limit" | "min" | "max" | "avpkt" => {
                if let Some(v) = p.size(k) {
                    if v > u32::MAX as u64 {
                        p.error(vt.unwrap(), format!("{} must be below 4 GiB (tc stores 32 bits)", k.text));
                        continue;
                    }
                    match k.text {
                        "limit" => (limit, at[0]) = (v, vt),
                        "min" => (qmin, at[1]) = (v, vt),
                        "max" => (qmax, at[2]) = (v, vt),
                        _ => avpkt = v,
                    }
                }
            }
            "burst" => {
                if let Some(v) = p.uint(k, 0, u32::MAX as u64) {
                    (burst, at[3]) = (v, vt);
                }
            }
            "probability" => {
                if let Some(v) = p.float(k, 0.0, 1.0) {
                    (probability, at[4]) = (v, vt);
                }
            }
            "bandwidth" => {
                if let Some(bps) = p.rate(k) {
                    if bps < 8 {
                        p.error(vt.unwrap(), "below 8bit: tc stores the bandwidth in bytes per second");
                    } else {
                        (rate_bytes, at[5]) = (Some(bps / 8), vt);
                    }
                }
            }
            "ecn" => ecn = Some(k),
            "harddrop" => harddrop = true,
            "nodrop" => nodrop = Some(k),
            "adaptive" | "adaptative" => adaptive = true,
            "qevent" => {
                // qevent early_drop|mark block IDX
                let name = p.value(k, "early_drop or mark");
                if let Some(n) = name {
                    if n.text != "early_drop" && n.text != "mark" {
                        p.error(n, format!("unknown RED qevent \"{}\"; expected early_drop or mark", n.text));
                        break;
                    }
                    match p.value(n, "block IDX") {
                        Some(b) if b.text == "block" => {
                            let idx = p.uint(b, 1, u32::MAX as u64);
                            if idx.is_some() {
                                p.warn(
                                    k,
                                    "qevent blocks (filters run on early drops or marks) are accepted but not modelled",
                                );
                            }
                        }
                        Some(b) => p.error(b, "expected \"block IDX\""),
                        None => {}
                    }
                }
            }
            _ => {
                p.unknown(k, "red", KNOWN);
                break;
            }
        }
    }
    if p.has_errors() {
        return None;
    }
    if limit == 0 || avpkt == 0 {
        p.error_at_end("RED: Required parameter (limit, avpkt) is missing");
        return None;
    }
    let (limit, mut qmin, mut qmax, avpkt) = (limit as u32, qmin as u32, qmax as u32, avpkt as u32);
    // Sally Floyd's recommendations, as tc applies them.
    if qmax == 0 {
        qmax = if qmin != 0 { qmin.wrapping_mul(3) } else { limit / 4 };
    }
    if qmin == 0 {
        qmin = qmax / 3;
    }
    let mut burst = burst as u32;
    if burst == 0 {
        burst = (2 * qmin as u64 + qmax as u64).checked_div(3 * avpkt as u64).unwrap_or(0) as u32;
    }
    let rate = match rate_bytes {
        Some(r) => r,
        None => {
            diags_warn(&mut p, d.kind, "RED: set bandwidth to 10Mbit (tc's default for the idle-time decay table)");
            1_250_000
        }
    };
    let wlog = match eval_ewma(qmin, burst, avpkt) {
        Ok(w) => w,
        Err(m) => {
            err_at(&mut p, at[3], m);
            return None;
        }
    };
    if wlog >= 10 {
        warn_at(&mut p, at[3], d.kind, format!("RED: WARNING. Burst {burst} seems to be too large (Wlog {wlog})"));
    }
    let Some(plog) = eval_p(qmin, qmax, probability) else {
        err_at(
            &mut p,
            at[4].or(at[2]),
            format!("RED: failed to calculate probability (min {qmin}, max {qmax}, probability {probability})"),
        );
        return None;
    };
    let Some((scell_log, stab)) = eval_idle_damping(wlog, avpkt, rate) else {
        err_at(&mut p, at[5], "RED: failed to calculate idle damping table".to_string());
        return None;
    };
    // Kernel: red_check_params and red_validate_flags.
    if fls(qmin) + wlog as u32 >= 32 {
        err_at(&mut p, at[1], format!("min {qmin} with Wlog {wlog} overflows the kernel's 32-bit average (EINVAL)"));
    }
    if fls(qmax) + wlog as u32 >= 32 {
        err_at(&mut p, at[2], format!("max {qmax} with Wlog {wlog} overflows the kernel's 32-bit average (EINVAL)"));
    }
    if qmax < qmin {
        err_at(&mut p, at[2].or(at[1]), format!("max {qmax} is below min {qmin}: the kernel refuses it (EINVAL)"));
    }
    if let (Some(t), None) = (nodrop, ecn) {
        p.error(t, "nodrop mode is only meaningful with ECN (the kernel refuses it: EINVAL)");
    }
    if let Some(t) = ecn {
        p.warn(
            t,
            "ecn marks only ECN-capable packets (TOS ECT/CE bits); airsched's UDP flows are Not-ECT unless their \
             TOS byte sets those bits, so RED drops them where it would mark",
        );
    }
    if p.has_errors() {
        return None;
    }
    let mut ok = true;
    for c in &d.classes {
        diags.push(diag_error(c.at, "red has a single class M:1, created with the qdisc; classes cannot be added"));
        ok = false;
    }
    for f in &d.filters {
        diags.push(filter_diag(
            f,
            Severity::Error,
            format!("red does not classify: no filter can be attached to {}", f.parent),
        ));
        ok = false;
    }
    if !ok {
        return None;
    }
    let max_p = (probability * 4_294_967_296.0).min(u32::MAX as f64) as u32;
    let params = RedParams {
        limit,
        qth_min: qmin,
        qth_max: qmax,
        wlog,
        plog,
        scell_log,
        stab,
        max_p,
        ecn: ecn.is_some(),
        harddrop,
        adaptive,
        nodrop: nodrop.is_some(),
    };
    Some(QdiscImpl::Red(Red::new(params, d.handle, cx.seed, cx.stream)))
}

fn err_at(p: &mut crate::tc::opts::OptParser<'_, '_>, at: Option<Tok<'_>>, msg: String) {
    match at {
        Some(t) => p.error(t, msg),
        None => p.error_at_end(msg),
    }
}

fn warn_at(p: &mut crate::tc::opts::OptParser<'_, '_>, at: Option<Tok<'_>>, kind: Tok<'_>, msg: String) {
    p.warn(at.unwrap_or(kind), msg);
}

fn diags_warn(p: &mut crate::tc::opts::OptParser<'_, '_>, kind: Tok<'_>, msg: &str) {
    p.warn(kind, msg);
}

impl Qdisc for Red {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        self.catch_up(now);
        let mark = cx.mark();
        let backlog = self.child.stats().backlog_bytes;
        self.qavg = match self.qidlestart {
            Some(start) => self.qavg_from_idle(start, now),
            None => self.qavg.wrapping_add(backlog).wrapping_sub(self.qavg >> self.p.wlog),
        };
        self.qidlestart = None;
        let drop = match self.action(self.qavg) {
            Action::Pass => false,
            Action::Early => {
                self.stats.overlimits += 1;
                if !self.p.ecn {
                    self.xs.prob_drop += 1;
                    true
                } else if Red::ecn_capable(cx, pkt) {
                    self.xs.prob_mark += 1;
                    false
                } else if !self.p.nodrop {
                    self.xs.prob_drop += 1;
                    true
                } else {
                    false
                }
            }
            Action::Forced => {
                self.stats.overlimits += 1;
                if self.p.harddrop || !self.p.ecn {
                    self.xs.forced_drop += 1;
                    true
                } else if Red::ecn_capable(cx, pkt) {
                    self.xs.forced_mark += 1;
                    false
                } else if !self.p.nodrop {
                    self.xs.forced_drop += 1;
                    true
                } else {
                    false
                }
            }
        };
        let res = if drop {
            cx.drop(pkt);
            Enq::Dropped
        } else {
            let r = self.child.enqueue(pkt, cx, now);
            if r == Enq::Dropped {
                self.xs.pdrop += 1;
            }
            r
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.catch_up(now);
        let mark = cx.mark();
        let out = self.child.dequeue(cx, now);
        if out.is_none() && self.qidlestart.is_none() {
            self.qidlestart = Some(now);
        }
        self.stats.after_dequeue(out, cx, mark);
        out
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        let out = self.child.peek(cx, now);
        self.stats.after_dequeue(None, cx, mark);
        out
    }

    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        pending_wakeup(&self.child, now)
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.child.for_each_queued(f);
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let mut options = format!(
            "limit {} min {} max {}",
            format_size(self.p.limit as u64),
            format_size(self.p.qth_min as u64),
            format_size(self.p.qth_max as u64)
        );
        for (on, name) in [
            (self.p.ecn, "ecn"),
            (self.p.harddrop, "harddrop"),
            (self.p.adaptive, "adaptive"),
            (self.p.nodrop, "nodrop"),
        ] {
            if on {
                options += " ";
                options += name;
            }
        }
        let x = self.xs;
        let early = x.prob_drop + x.forced_drop;
        let marked = x.prob_mark + x.forced_mark;
        let classid = Handle::new(self.handle.major(), 1);
        let leaf = child_handle(&self.child);
        out.push(QdiscReport {
            kind: "red",
            handle: self.handle,
            parent,
            options,
            stats: self.stats,
            xstats: vec![
                ("marked".into(), marked as i64),
                ("early".into(), early as i64),
                ("pdrop".into(), x.pdrop as i64),
                ("other".into(), x.other as i64),
                ("prob_drop".into(), x.prob_drop as i64),
                ("prob_mark".into(), x.prob_mark as i64),
                ("forced_drop".into(), x.forced_drop as i64),
                ("forced_mark".into(), x.forced_mark as i64),
            ],
            xstats_text: format!("marked {marked} early {early} pdrop {} other {}", x.pdrop, x.other),
            classes: vec![ClassReport {
                kind: "red",
                classid,
                parent: self.handle,
                leaf: (leaf != Handle::UNSPEC).then_some(leaf),
                options: String::new(),
                stats: self.child.stats(),
                xstats: vec![],
                xstats_text: String::new(),
            }],
        });
        self.child.report(classid, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{build_err, build_full, build_opts_ok, run_link, warnings, word_col, Bench, Source};

    /// The tc-red(8) example, with probability 0.1 to make the early-drop region busy.
    const OPTS: &str = "limit 1000000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.1 bandwidth 10mbit";

    fn red(q: &mut QdiscImpl) -> &mut Red {
        match q {
            QdiscImpl::Red(r) => r,
            _ => panic!("not red"),
        }
    }

    /// Keep the child's backlog at `pkts` packets of 1000 B: each queued arrival is followed by a
    /// dequeue (so the queue never idles), dropped ones are not. Returns the arrivals dropped
    /// early (probabilistic) and forced during the last `n - warmup` of `n` arrivals.
    fn hold(q: &mut Red, b: &mut Bench, pkts: u64, n: u64, warmup: u64) -> (u64, u64, u64) {
        let mut t = Nanos::from_ms(1);
        while q.child.stats().qlen < pkts {
            let id = b.pkt(0, 986);
            q.enqueue(id, &mut b.cx(), t);
            t += Nanos(1000);
        }
        let (mut x0, mut measured) = (q.xstats(), 0);
        for i in 0..n {
            if i == warmup {
                x0 = q.xstats();
            }
            let id = b.pkt(0, 986);
            if q.enqueue(id, &mut b.cx(), t) != Enq::Dropped {
                let out = q.dequeue(&mut b.cx(), t).expect("backlogged");
                b.pkts.free(out);
            }
            for d in b.dropped.drain(..) {
                b.pkts.free(d);
            }
            if i >= warmup {
                measured += 1;
            }
            t += Nanos(1000);
            assert_eq!(q.child.stats().backlog_bytes, pkts * 1000);
        }
        let x = q.xstats();
        (x.prob_drop - x0.prob_drop, x.forced_drop - x0.forced_drop, measured)
    }

    #[test]
    fn tc_derives_wlog_plog_and_the_idle_table() {
        let mut q = build_opts_ok(
            "red",
            Handle::new(1, 0),
            "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit",
        );
        let r = red(&mut q);
        let p = r.params().clone();
        // burst 55: smallest W = 2^-Wlog with 56 - 30 <= (1 - (1-W)^55) / W is 1/32.
        assert_eq!(p.wlog, 5);
        // probability 0.02 (default) over 60000 B: 2^22 is the first power making it exceed 1.
        assert_eq!(p.plog, 22);
        assert_eq!(p.max_p, (0.02f64 * 4_294_967_296.0) as u32);
        // avpkt 1000 at 10 Mbit/s: 12500 ticks; Scell_log 15; shifts by idle cell.
        assert_eq!(p.scell_log, 15);
        assert_eq!((p.stab[0], p.stab[12], p.stab[13], p.stab[30], p.stab[254], p.stab[255]), (0, 0, 1, 2, 21, 31));
        assert_eq!(eval_ewma(30000, 100, 1000), Ok(8));
        assert!(eval_ewma(30000, 20, 1000).unwrap_err().contains("Try burst 31"));
        let reps = q.reports();
        assert_eq!(reps[0].options, "limit 400000b min 30000b max 90000b");
        assert_eq!(
            (reps[1].kind, reps[1].parent, reps[1].options.as_str()),
            ("bfifo", Handle::new(1, 1), "limit 400000b")
        );
        // tc's defaults: max = limit/4, min = max/3, burst = (2 min + max) / (3 avpkt).
        let mut q = build_opts_ok("red", Handle::new(1, 0), "limit 120k avpkt 1000 bandwidth 1mbit");
        let p = red(&mut q).params().clone();
        assert_eq!((p.qth_max, p.qth_min), (30720, 10240));
        assert_eq!(p.wlog, eval_ewma(10240, (2 * 10240 + 30720) / 3000, 1000).unwrap());
    }

    #[test]
    fn average_follows_the_ewma_with_the_weight_from_burst() {
        for (burst, wlog) in [(55u32, 5u8), (100, 8)] {
            let opts = format!("limit 1000000 min 30000 max 90000 avpkt 1000 burst {burst} bandwidth 10mbit");
            let mut q = build_opts_ok("red", Handle::new(1, 0), &opts);
            let r = red(&mut q);
            assert_eq!(r.params().wlog, wlog);
            let w = 1.0 / (1u64 << wlog) as f64;
            let mut b = Bench::new(1);
            let mut avg = 0.0f64;
            // 50 arrivals keep avg below min (30000) for both weights.
            for i in 0..50u64 {
                let backlog = r.child.stats().backlog_bytes as f64;
                let id = b.pkt(0, 986);
                assert_eq!(r.enqueue(id, &mut b.cx(), Nanos::from_us(10 + i)), Enq::Queued);
                if i > 0 {
                    // The first arrival ends the idle period since creation: avg stays 0.
                    avg += w * (backlog - avg);
                }
                assert!((r.avg_bytes() - avg).abs() <= 1.0, "burst {burst}, arrival {i}: {} vs {avg}", r.avg_bytes());
            }
            assert_eq!(r.xstats(), RedXstats::default(), "avg stays below min: no drops");
        }
    }

    #[test]
    fn below_min_nothing_is_dropped() {
        let mut q = build_opts_ok("red", Handle::new(1, 0), OPTS);
        let mut b = Bench::new(1);
        let (early, forced, n) = hold(red(&mut q), &mut b, 29, 50_000, 1000);
        assert_eq!((early, forced), (0, 0), "{n} arrivals with avg 29000 < min 30000");
        assert!((red(&mut q).avg_bytes() - 29_000.0).abs() < 1.0);
        assert_eq!(q.stats().drops, 0);
        assert_eq!(q.stats().overlimits, 0);
    }

    #[test]
    fn above_max_everything_is_dropped_as_forced() {
        let mut q = build_opts_ok("red", Handle::new(1, 0), OPTS);
        let mut b = Bench::new(1);
        let (early, forced, n) = hold(red(&mut q), &mut b, 100, 10_000, 2000);
        assert!(red(&mut q).avg_bytes() >= 90_000.0);
        assert_eq!((early, forced), (0, n), "every arrival with avg >= max is a forced drop");
        let r = q.reports();
        assert!(r[0].xstats_text.starts_with("marked 0 early "), "{}", r[0].xstats_text);
        assert!(q.stats().identity_holds());
    }

    #[test]
    fn early_drop_rate_grows_with_the_average_as_red_prescribes() {
        let mut rates = vec![];
        for pkts in [45u64, 60, 75] {
            let mut q = build_opts_ok("red", Handle::new(1, 0), OPTS);
            let mut b = Bench::new(1);
            let r = red(&mut q);
            let (early, forced, n) = hold(r, &mut b, pkts, 200_000, 5_000);
            assert_eq!(forced, 0);
            assert!((r.avg_bytes() - pkts as f64 * 1000.0).abs() < 1.0);
            // pb = max_P (avg - min) / (max - min) with the kernel's integer max_P / delta;
            // drops are spaced uniformly over 1..1/pb, so the rate is 2 pb / (1 + pb).
            let pb = r.max_p_delta as f64 * (pkts as f64 * 1000.0 - 30_000.0) / 4_294_967_296.0;
            let want = 2.0 * pb / (1.0 + pb);
            let got = early as f64 / n as f64;
            assert!((got - want).abs() / want < 0.03, "backlog {pkts} pkts: early-drop rate {got}, RED gives {want}");
            rates.push(got);
        }
        assert!(rates[0] < rates[1] && rates[1] < rates[2], "{rates:?}");
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut q = build_opts_ok("red", Handle::new(1, 0), OPTS);
        let r = red(&mut q);
        let mut b = Bench::new(1);
        // Build an average, then drain the queue; the failing dequeue starts the idle period.
        for i in 0..40 {
            let id = b.pkt(0, 986);
            r.enqueue(id, &mut b.cx(), Nanos::from_us(i));
        }
        while r.dequeue(&mut b.cx(), Nanos::from_ms(1)).is_some() {}
        assert_eq!(r.qidlestart, Some(Nanos::from_ms(1)));
        let q0 = r.qavg;
        // 10 ms idle: the table says 0, so the linear part applies: qavg - qavg * 10000 / 2^15.
        assert_eq!(r.qavg_from_idle(Nanos::from_ms(1), Nanos::from_ms(11)), q0 - ((q0 * 10_000) >> 15));
        // 1 s idle: cell 1e6 >> 15 = 30, shift 2 (kernel indexes microseconds).
        assert_eq!(r.qavg_from_idle(Nanos::from_ms(1), Nanos::from_ms(1001)), q0 >> 2);
        // Beyond 255 cells (8.36 s) the last entry, 31, empties it.
        assert_eq!(r.qavg_from_idle(Nanos::from_ms(1), Nanos::from_secs(60)), q0 >> 31);
        // The next arrival uses the decayed average and ends the idle period.
        let id = b.pkt(0, 986);
        r.enqueue(id, &mut b.cx(), Nanos::from_ms(1001));
        assert_eq!(r.qavg, q0 >> 2);
        assert_eq!(r.qidlestart, None);
    }

    #[test]
    fn adaptive_raises_max_p_while_the_average_stays_high() {
        let mut q = build_opts_ok(
            "red",
            Handle::new(1, 0),
            "limit 1000000 min 30000 max 90000 avpkt 1000 burst 55 probability 0.02 bandwidth 10mbit adaptive",
        );
        let r = red(&mut q);
        let mut b = Bench::new(1);
        // Hold avg at 80000 B (above target_max = 30000 + 3 * 12000 = 66000) for 2.2 s.
        let (_, _, _) = hold(r, &mut b, 80, 2_200_000, 0);
        // Four ticks (0.5, 1, 1.5, 2 s): 0.02 -> +0.005 -> +0.00625 -> +0.0078125 -> +0.009765625.
        let want = [0.02f64, 0.025, 0.03125, 0.0390625, 0.048828125][4];
        assert!((r.max_p() - want).abs() < 1e-6, "max_P {}", r.max_p());
        assert_eq!(r.params().max_p, {
            let mut m = (0.02f64 * 4_294_967_296.0) as u32;
            for _ in 0..4 {
                m += MAX_P_MIN.min(m / 4);
            }
            m
        });
        // Then idle from 2.3 s: at each tick from 2.5 s on, the decayed avg is below target_min
        // (54000) and max_P shrinks to 9/10: six ticks by 5 s.
        let before = r.params().max_p;
        while let Some(p) = r.dequeue(&mut b.cx(), Nanos::from_ms(2300)) {
            b.pkts.free(p);
        }
        assert_eq!(r.qidlestart, Some(Nanos::from_ms(2300)));
        r.catch_up(Nanos::from_secs(5));
        let mut want = before;
        for _ in 0..6 {
            want = (want / 10) * 9;
        }
        assert_eq!(r.params().max_p, want);
    }

    #[test]
    fn on_a_link_red_drops_early_then_forced_and_keeps_the_identity() {
        let mut q = build_opts_ok(
            "red",
            Handle::new(1, 0),
            "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit",
        );
        let mut b = Bench::new(2);
        let src =
            |flow| Source { flow, rate_bps: 6_000_000, ip_len: 986, start: Nanos::ZERO, stop: Nanos::from_secs(5) };
        let r = run_link(&mut q, &mut b, &[src(0), src(1)], 10_000_000, Nanos::from_secs(5), Nanos::from_secs(1));
        let x = red(&mut q).xstats();
        assert!(x.prob_drop > 0 && x.forced_drop > 0, "{x:?}");
        assert_eq!(x.pdrop, 0, "the bfifo limit is never reached");
        // Unresponsive 12 Mbit/s into 10: RED ends up holding avg near max; delays stay near
        // max / rate = 72 ms, far below the 400 kB limit's 320 ms.
        let d = r.mean_delay(0);
        assert!(d > Nanos::from_ms(50) && d < Nanos::from_ms(80), "mean delay {d}");
        let total = r.rate_bps(0, 4.0) + r.rate_bps(1, 4.0);
        assert!((total - 10e6).abs() / 10e6 < 0.01, "{total}");
        let s = q.stats();
        assert!(s.identity_holds());
        assert_eq!(s.drops, x.prob_drop + x.forced_drop);
        assert_eq!(s.overlimits, x.prob_drop + x.forced_drop);
    }

    #[test]
    fn ecn_marks_only_ecn_capable_packets() {
        let (q, diags) =
            build_full("red", Handle::new(1, 0), &format!("{OPTS} ecn"), vec![], vec![], &BuildCx::for_tests());
        assert!(warnings(&diags).iter().any(|w| w.token == "ecn" && w.message.contains("Not-ECT")));
        let mut q = q.unwrap();
        let mut b = Bench::new(1);
        b.keys[0].tos = 0x02; // ECT(0)
        let (early, forced, _) = hold(red(&mut q), &mut b, 100, 3000, 1000);
        assert_eq!((early, forced), (0, 0));
        assert!(red(&mut q).xstats().forced_mark >= 2000, "marked instead of dropped");
        // Not-ECT traffic is dropped as without ecn.
        let mut q = build_opts_ok("red", Handle::new(1, 0), &format!("{OPTS} ecn"));
        let mut b = Bench::new(1);
        let (_, forced, n) = hold(red(&mut q), &mut b, 100, 3000, 1000);
        assert_eq!(forced, n);
        // ecn harddrop: forced drops even for ECT packets.
        let mut q = build_opts_ok("red", Handle::new(1, 0), &format!("{OPTS} ecn harddrop"));
        let mut b = Bench::new(1);
        b.keys[0].tos = 0x01;
        let (_, forced, n) = hold(red(&mut q), &mut b, 100, 3000, 1000);
        assert_eq!(forced, n);
        assert_eq!(q.reports()[0].options, "limit 1000000b min 30000b max 90000b ecn harddrop");
    }

    #[test]
    fn option_errors_carry_positions() {
        let e = build_err("red", "min 30000 max 90000 avpkt 1000");
        assert!(e[0].message.contains("Required parameter (limit, avpkt)"));
        assert_eq!(e[0].token, "");

        let o = "limit 400k min 30000 max 90000 avpkt 1000 burst 20";
        let e = build_err("red", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("20", word_col("red", o, 9)));
        assert!(e[0].message.contains("Try burst 31"), "{}", e[0]);

        let o = "limit 400k min 90000 max 30000 avpkt 1000 burst 100";
        let e = build_err("red", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("30000", word_col("red", o, 5)));

        let o = "limit 400k avpkt 1000 probability 1.5";
        let e = build_err("red", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("1.5", word_col("red", o, 5)));

        let o = "limit 400k avpkt 1000 nodrop";
        let e = build_err("red", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("nodrop", word_col("red", o, 4)));
        assert!(e[0].message.contains("only meaningful with ECN"));

        let o = "limit 400k avpkt 1000 rate 1mbit";
        let e = build_err("red", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("rate", word_col("red", o, 4)));
        assert!(e[0].message.contains("expected one of: limit, min"), "{}", e[0]);

        // No bandwidth: tc's 10 Mbit/s default, said as a warning at the kind.
        let (q, diags) =
            build_full("red", Handle::new(1, 0), "limit 400k avpkt 1000", vec![], vec![], &BuildCx::for_tests());
        assert!(q.is_some());
        let w = warnings(&diags);
        assert!(w.iter().any(|w| w.token == "red" && w.message.contains("10Mbit")), "{w:?}");
    }

    #[test]
    fn random_draws_are_seeded() {
        let run = |seed| {
            let mut cx = BuildCx::for_tests();
            cx.seed = seed;
            let (q, _) = build_full("red", Handle::new(1, 0), OPTS, vec![], vec![], &cx);
            let mut q = q.unwrap();
            let mut b = Bench::new(1);
            hold(red(&mut q), &mut b, 60, 20_000, 0).0
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }
}
