//! pie: Proportional Integral controller Enhanced (RFC 8033) as Linux implements it (Linux 6.1
//! to 6.18 `net/sched/sch_pie.c` and `include/net/pie.h`, unchanged in substance since 5.7;
//! iproute2 6.x `tc/q_pie.c`). One FIFO; at enqueue a packet is dropped (or ECN-marked) with the
//! probability `prob`, which a timer recomputes every `tupdate` from the queueing delay.
//!
//! The kernel's arithmetic is followed to the bit: probabilities are u64 on the scale
//! `MAX_PROB = 2^56 - 1`, times are psched ticks of 64 ns, alpha and beta are sixteenths
//! (defaults 2 and 20: 0.125 and 1.25 Hz), and the auto-tuning, 2 % step cap, the kernel-only
//! +2 % above 250 ms, the 1/64 decay and the measurement-cycle restart are the kernel's
//! ([`PieVars::calculate_probability`]). The delay is the last dequeued packet's sojourn
//! (timestamps, the default since 5.7) or, with `dq_rate_estimator`, backlog / departure rate.
//! Derandomisation is always on, as in the kernel.
//!
//! The update timer is a `timer_list` on jiffies of 4 ms (`CONFIG_HZ=250`, Debian's) and fires
//! when the kernel's timer wheel fires it ([`wheel_expiry`]): the first time 128 jiffies (512 ms)
//! after the qdisc's creation (`jiffies + HZ / 2`, rounded up to the wheel's 8-jiffy level), then
//! every `tupdate + 1` jiffies (a timer armed for `jiffies + tupdate` fires a jiffy after that:
//! the default 16 ms `tupdate` runs every 20 ms, as a 6.1 guest's trace of `fq_pie_timer` shows).
//!
//! Deviations: the qdisc is created on a jiffy boundary (time 0 is jiffy 0), and the timer's
//! ticks are run when the qdisc is next touched (enqueue, dequeue, peek), in order, with the
//! state they would have seen —
//! the backlog and delay change only at those operations, so the probabilities are the ones
//! the timer computes, not an approximation. Random numbers come from a seeded stream (the
//! kernel's `get_random_bytes`). ECN marks are counted, not written into packets (as codel).

use std::collections::VecDeque;

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::codel::time_us;
use super::common::{errors_since, StashPeek};
use super::{opt_parser, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::tc::lex::TcDiag;
use crate::tc::opts::{fmt_g, format_time_us, OptParser};
use crate::time::Nanos;

/// `MAX_PROB`: probability 1.
pub(super) const MAX_PROB: u64 = u64::MAX >> 8;
/// `QUEUE_THRESHOLD`: bytes of backlog that start a departure-rate measurement cycle.
const QUEUE_THRESHOLD: u32 = 16384;
/// `PIE_SCALE`.
const PIE_SCALE: u32 = 8;
/// psched ticks per second (`NSEC_PER_SEC >> PSCHED_SHIFT`).
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> 6;
/// Jiffy length with `CONFIG_HZ=250` (Debian's kernels), in microseconds.
pub(super) const JIFFY_US: u32 = 4000;
/// Jiffies (`CONFIG_HZ=250`) of `HZ / 2`: `pie_init` and `fq_pie_init` arm the update timer
/// for `jiffies + HZ / 2`.
const HALF_SECOND_JIFFIES: u64 = 125;
/// Tags the random stream of a pie (or fq_pie) qdisc.
const PIE_STREAM_TAG: u64 = 5 << 60;

/// psched ticks (64 ns) of a time.
#[inline]
pub(super) fn ticks(t: Nanos) -> u64 {
    t.as_ns() >> 6
}

/// `usecs_to_jiffies`: rounded up.
pub(super) fn usecs_to_jiffies(us: u32) -> u32 {
    us.div_ceil(JIFFY_US)
}

/// Nanoseconds of a jiffy.
const JIFFY_NS: u64 = JIFFY_US as u64 * 1000;

/// The jiffy at which a `timer_list` armed for jiffy `expires` while the wheel's clock reads
/// `clk` fires: the bucket expiry of `calc_wheel_index` (Linux 4.8 to 6.18
/// `kernel/time/timer.c`). The wheel has 9 levels (`HZ > 100`) of 64 buckets, each level 8
/// times coarser than the one below; the level is the first whose range holds `expires - clk`,
/// and the expiry is rounded up to the level's next bucket (`calc_index`: `(expires >> shift) +
/// 1`, so that no timer fires early), which on level 0 is one jiffy late. An expiry in the past
/// fires at `clk`; one beyond the wheel's range at its capacity.
pub(super) fn wheel_expiry(expires: u64, clk: u64) -> u64 {
    const DEPTH: u32 = 9;
    let level_start = |n: u32| 63u64 << ((n - 1) * 3);
    let delta = expires.wrapping_sub(clk);
    if (delta as i64) < 0 {
        return clk;
    }
    let (expires, level) = match (1..DEPTH).find(|&n| delta < level_start(n)) {
        Some(n) => (expires, n - 1),
        None => {
            let cutoff = level_start(DEPTH);
            let capped = if delta >= cutoff { clk + cutoff - (1 << ((DEPTH - 1) * 3)) } else { expires };
            (capped, DEPTH - 1)
        }
    };
    let shift = 3 * level;
    ((expires >> shift) + 1) << shift
}

/// When a timer that fired at `at` (a jiffy boundary) and re-armed itself from its callback for
/// `jiffies + delay` fires next. `__run_timers` has already advanced the wheel's clock past the
/// jiffy being run, so the callback arms with `clk = jiffies + 1`; `delay` 0 (`fq_pie_timer`
/// between chunks of flows) fires on the next jiffy.
pub(super) fn rearmed(at: Nanos, delay: u32) -> Nanos {
    let now = at.as_ns() / JIFFY_NS;
    Nanos(wheel_expiry(now + delay as u64, now + 1) * JIFFY_NS)
}

/// When the update timer armed by `pie_init`/`fq_pie_init` at time 0 (jiffy 0) first fires.
pub(super) fn first_update() -> Nanos {
    Nanos(wheel_expiry(HALF_SECOND_JIFFIES, 0) * JIFFY_NS)
}

/// `struct pie_params`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct PieParams {
    /// psched ticks.
    pub target: u64,
    /// jiffies.
    pub tupdate: u32,
    pub limit: u32,
    pub alpha: u32,
    pub beta: u32,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
}

impl PieParams {
    /// `pie_params_init`.
    pub fn new() -> PieParams {
        PieParams {
            target: ticks(Nanos::from_ms(15)),
            tupdate: usecs_to_jiffies(15_000),
            limit: 1000,
            alpha: 2,
            beta: 20,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }

    /// `target` as the kernel dumps it: whole microseconds of the tick count.
    pub fn target_us(&self) -> u64 {
        ((self.target << 6) & 0xffff_ffff) / 1000
    }
}

/// `struct pie_vars` (times in psched ticks; `None` for the kernel's invalid markers).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct PieVars {
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    pub dq_tstamp: Option<u64>,
    pub prob: u64,
    pub accu_prob: u64,
    pub dq_count: Option<u64>,
    pub avg_dq_rate: u32,
    pub backlog_old: u32,
}

/// `struct pie_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct PieStats {
    pub packets_in: u32,
    pub dropped: u32,
    pub overlimit: u32,
    pub ecn_mark: u32,
    pub maxq: u32,
}

impl PieVars {
    /// `pie_vars_init` on fresh variables.
    pub fn new() -> PieVars {
        let mut v = PieVars::default();
        v.init();
        v
    }

    /// `pie_vars_init`: a new measurement cycle (probability and delays are kept).
    pub fn init(&mut self) {
        self.burst_time = ticks(Nanos::from_ms(150));
        self.dq_tstamp = None;
        self.accu_prob = 0;
        self.dq_count = None;
        self.avg_dq_rate = 0;
    }

    /// `pie_drop_early`: whether the packet of `len` bytes arriving on `backlog` bytes is
    /// dropped (or marked). `rng` is drawn only when the decision is random.
    pub fn drop_early(
        &mut self,
        p: &PieParams,
        backlog: u64,
        len: u32,
        mtu: u32,
        rng: &mut Xoshiro256PlusPlus,
    ) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < p.target / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * mtu as u64 {
            return false;
        }
        let local_prob =
            if p.bytemode && len <= mtu { (len as u64).wrapping_mul(self.prob / mtu as u64) } else { self.prob };
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.wrapping_add(local_prob);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (rng.next_u64() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue`: a packet of `len` bytes, enqueued at `enqueued`, leaves at `now`
    /// with `backlog` bytes left behind.
    pub fn process_dequeue(&mut self, p: &PieParams, len: u32, enqueued: Nanos, now: Nanos, backlog: u64) {
        let now = ticks(now);
        let dtime;
        if !p.dq_rate_estimator {
            self.qdelay = now.wrapping_sub(ticks(enqueued));
            let d = self.dq_tstamp.map_or(0, |t| now.wrapping_sub(t));
            self.dq_tstamp = Some(now);
            if backlog == 0 {
                self.qdelay = 0;
            }
            if d == 0 {
                return;
            }
            dtime = d;
        } else {
            if backlog >= QUEUE_THRESHOLD as u64 && self.dq_count.is_none() {
                self.dq_tstamp = Some(now);
                self.dq_count = Some(0);
            }
            let Some(count) = self.dq_count else { return };
            let count = count + len as u64;
            self.dq_count = Some(count);
            if count < QUEUE_THRESHOLD as u64 {
                return;
            }
            let d = now.wrapping_sub(self.dq_tstamp.unwrap_or(now));
            if d == 0 {
                return;
            }
            // u32 in the kernel.
            let rate = ((count << PIE_SCALE) as u32) as u64 / d;
            let rate = rate as u32;
            self.avg_dq_rate =
                if self.avg_dq_rate == 0 { rate } else { (self.avg_dq_rate - (self.avg_dq_rate >> 3)) + (rate >> 3) };
            if backlog < QUEUE_THRESHOLD as u64 {
                self.dq_count = None;
            } else {
                self.dq_count = Some(0);
                self.dq_tstamp = Some(now);
            }
            dtime = d;
        }
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// `pie_calculate_probability` with the qdisc's `backlog` bytes (the timer's work).
    pub fn calculate_probability(&mut self, p: &PieParams, backlog: u64) {
        let backlog = backlog as u32;
        let (qdelay, qdelay_old);
        if p.dq_rate_estimator {
            qdelay_old = self.qdelay;
            self.qdelay_old = self.qdelay;
            qdelay = if self.avg_dq_rate > 0 { ((backlog as u64) << PIE_SCALE) / self.avg_dq_rate as u64 } else { 0 };
        } else {
            qdelay = self.qdelay;
            qdelay_old = self.qdelay_old;
        }
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (p.alpha as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (p.beta as u64 * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power: u64 = 100;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // u64 products taken as s64, as in the kernel.
        let mut delta: i64 = (alpha.wrapping_mul(qdelay.wrapping_sub(p.target))) as i64;
        delta = delta.wrapping_add((beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old))) as i64);
        let oldprob = self.prob;
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > ticks(Nanos::from_ms(250)) {
            delta = delta.wrapping_add((MAX_PROB / 50) as i64);
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        self.backlog_old = backlog;
        if self.qdelay < p.target / 2
            && self.qdelay_old < p.target / 2
            && self.prob == 0
            && (!p.dq_rate_estimator || self.avg_dq_rate > 0)
        {
            self.init();
        }
        if !p.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }

    /// Nothing a further update could change: an empty, idle queue with no probability.
    pub fn at_rest(&self, backlog: u64) -> bool {
        backlog == 0 && self.prob == 0 && self.qdelay == 0 && self.qdelay_old == 0
    }
}

/// The update timer: when it next fires.
#[derive(Clone, Copy, Debug)]
pub(super) struct UpdateTimer {
    pub next: Nanos,
}

impl UpdateTimer {
    pub fn new() -> UpdateTimer {
        UpdateTimer { next: first_update() }
    }

    /// Run every update due at or before `now` through `update` (which returns true when the
    /// state it updated was at rest, so that the remaining ticks change nothing and are
    /// skipped); after each the timer re-arms itself `tupdate` jiffies on (`pie_timer`).
    pub fn catch_up(&mut self, now: Nanos, tupdate: u32, mut update: impl FnMut() -> bool) {
        while self.next <= now {
            let rest = update();
            self.next = rearmed(self.next, tupdate);
            if rest {
                while self.next <= now {
                    self.next = rearmed(self.next, tupdate);
                }
            }
        }
    }
}

/// The random stream of the pie qdisc `handle` on the device of `cx`.
pub(super) fn pie_rng(cx: &BuildCx, handle: Handle, tag: u64) -> Xoshiro256PlusPlus {
    stream(cx.seed, StreamKind::Qdisc, PIE_STREAM_TAG ^ tag ^ cx.stream.rotate_left(32) ^ handle.0 as u64)
}

/// The options pie and fq_pie share, parsed as tc does (`get_unsigned` base 0, `get_time`;
/// tc sends limit, target, tupdate, alpha and beta only when non-zero, so 0 keeps the default).
/// Returns false if `k` is not one of them.
pub(super) fn parse_shared(p: &mut OptParser<'_, '_>, k: crate::tc::lex::Tok<'_>, params: &mut PieParams) -> bool {
    match k.text {
        "limit" => {
            if let Some(v) = p.uint(k, 0, u32::MAX as u64).filter(|&v| v > 0) {
                params.limit = v as u32;
            }
        }
        "target" => {
            if let Some(us) = time_us(p, k).filter(|&us| us > 0) {
                params.target = ticks(Nanos::from_us(us as u64));
            }
        }
        "tupdate" => {
            if let Some(us) = time_us(p, k).filter(|&us| us > 0) {
                params.tupdate = usecs_to_jiffies(us);
            }
        }
        "alpha" => {
            if let Some(v) = p.uint(k, 0, 32).filter(|&v| v > 0) {
                params.alpha = v as u32;
            }
        }
        "beta" => {
            if let Some(v) = p.uint(k, 0, 32).filter(|&v| v > 0) {
                params.beta = v as u32;
            }
        }
        "ecn" => {
            params.ecn = true;
            p.warn(k, ECN_WARNING);
        }
        "noecn" => params.ecn = false,
        "bytemode" => params.bytemode = true,
        "nobytemode" => params.bytemode = false,
        "dq_rate_estimator" => params.dq_rate_estimator = true,
        "no_dq_rate_estimator" => params.dq_rate_estimator = false,
        _ => return false,
    }
    true
}

/// The warning for `ecn`.
pub(super) const ECN_WARNING: &str = "ecn accepted; PIE marks instead of dropping only packets whose TOS carries ECT or \
     CE bits (airsched's UDP flows are Not-ECT unless their tos sets them); marks are counted, not written into packets";

/// The option words pie and fq_pie share, in tc's print order: `limit`, `target`, `tupdate`,
/// `alpha`, `beta`.
pub(super) fn shared_options(p: &PieParams) -> String {
    format!(
        "limit {}p target {} tupdate {} alpha {} beta {}",
        p.limit,
        format_time_us(p.target_us()),
        format_time_us(p.tupdate as u64 * JIFFY_US as u64),
        p.alpha,
        p.beta
    )
}

/// `%lg` of a probability on the `MAX_PROB` scale, as tc prints `prob` (the kernel sends
/// `prob << 8`, tc divides by `UINT64_MAX`).
pub(super) fn prob_text(prob: u64) -> String {
    fmt_g((prob << 8) as f64 / u64::MAX as f64, 6)
}

/// A probability in parts per 10^9, for the integer JSON statistics.
pub(super) fn prob_ppb(prob: u64) -> i64 {
    ((prob as u128 * 1_000_000_000) / MAX_PROB as u128) as i64
}

const KNOWN: &[&str] = &[
    "limit",
    "target",
    "tupdate",
    "alpha",
    "beta",
    "ecn",
    "noecn",
    "bytemode",
    "nobytemode",
    "dq_rate_estimator",
    "no_dq_rate_estimator",
];

pub struct Pie {
    handle: Handle,
    mtu: u32,
    params: PieParams,
    vars: PieVars,
    pstats: PieStats,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    queue: VecDeque<PacketId>,
    /// Bytes in `queue` (the stash excluded).
    backlog: u64,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut params = PieParams::new();
    let mut p = opt_parser(&d.opts, d.end, diags);
    while let Some(k) = p.next() {
        if !parse_shared(&mut p, k, &mut params) {
            // tc stops at the first word it does not know ("What is ...?"); so does airsched.
            p.unknown(k, "pie", KNOWN);
            break;
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    Some(QdiscImpl::Pie(Pie::new(d.handle, params, cx.mtu, pie_rng(cx, d.handle, 0))))
}

impl Pie {
    fn new(handle: Handle, params: PieParams, mtu: u32, rng: Xoshiro256PlusPlus) -> Pie {
        Pie {
            handle,
            mtu,
            params,
            vars: PieVars::new(),
            pstats: PieStats::default(),
            timer: UpdateTimer::new(),
            rng,
            queue: VecDeque::with_capacity(params.limit.min(1 << 16) as usize),
            backlog: 0,
            stash: None,
            stats: QdiscStats::default(),
        }
    }

    /// Run the probability updates due by `now`. The timer sees the qdisc's backlog (the
    /// stash included, as `sch->qstats.backlog`).
    fn run_timer(&mut self, now: Nanos) {
        let Pie { timer, vars, params, stats, .. } = self;
        let backlog = stats.backlog_bytes;
        timer.catch_up(now, params.tupdate, || {
            // At rest before an update: after it the state is a fixed point (the update may
            // still restart the measurement cycle once, so the test comes first).
            let rest = vars.at_rest(backlog);
            vars.calculate_probability(params, backlog);
            rest
        });
    }

    #[cfg(test)]
    pub(super) fn prob(&self) -> u64 {
        self.vars.prob
    }
}

impl StashPeek for Pie {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let pkt = self.queue.pop_front()?;
        let len = cx.len(pkt);
        self.backlog -= len as u64;
        // sch->qstats.backlog after the head left (the stash, if any, is empty here).
        self.vars.process_dequeue(&self.params, len, cx.enqueued_at(pkt), now, self.backlog);
        Some(pkt)
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        self.run_timer(now);
        let mark = cx.mark();
        let len = cx.len(pkt);
        let res = if self.stats.qlen >= self.params.limit as u64 {
            self.pstats.overlimit += 1;
            None
        } else if !self.vars.drop_early(&self.params, self.stats.backlog_bytes, len, self.mtu, &mut self.rng) {
            Some(())
        } else if self.params.ecn && self.vars.prob <= MAX_PROB / 10 && cx.key(pkt).tos & 3 != 0 {
            self.pstats.ecn_mark += 1;
            Some(())
        } else {
            None
        };
        let res = match res {
            Some(()) => {
                self.pstats.packets_in += 1;
                self.pstats.maxq = self.pstats.maxq.max(self.stats.qlen as u32);
                cx.stamp(pkt, now);
                self.queue.push_back(pkt);
                self.backlog += len as u64;
                Enq::Queued
            }
            None => {
                self.pstats.dropped += 1;
                self.vars.accu_prob = 0;
                cx.drop(pkt);
                Enq::Dropped
            }
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.run_timer(now);
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.run_timer(now);
        self.peek_stashed(cx, now)
    }

    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> {
        None
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().chain(self.queue.iter()).for_each(|&p| f(p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let p = &self.params;
        let mut options = shared_options(p);
        for (on, word) in [(p.ecn, " ecn"), (p.bytemode, " bytemode"), (p.dq_rate_estimator, " dq_rate_estimator")] {
            if on {
                options += word;
            }
        }
        let v = &self.vars;
        let s = &self.pstats;
        let delay_us = ((v.qdelay << 6) as u32 / 1000) as u64;
        let avg_dq_rate = ((v.avg_dq_rate as u64 * PSCHED_TICKS_PER_SEC) >> PIE_SCALE) as u32;
        let mut text = format!("  prob {} delay {}", prob_text(v.prob), format_time_us(delay_us));
        if p.dq_rate_estimator {
            text += &format!(" avg_dq_rate {avg_dq_rate}");
        }
        text += &format!(
            "\n  pkts_in {} overlimit {} dropped {} maxq {} ecn_mark {}",
            s.packets_in, s.overlimit, s.dropped, s.maxq, s.ecn_mark
        );
        let mut xstats = vec![("prob_ppb".into(), prob_ppb(v.prob)), ("delay".into(), delay_us as i64)];
        if p.dq_rate_estimator {
            xstats.push(("avg_dq_rate".into(), avg_dq_rate as i64));
        }
        for (name, v) in [
            ("pkts_in", s.packets_in),
            ("overlimit", s.overlimit),
            ("dropped", s.dropped),
            ("maxq", s.maxq),
            ("ecn_mark", s.ecn_mark),
        ] {
            xstats.push((name.into(), v as i64));
        }
        out.push(QdiscReport {
            kind: "pie",
            handle: self.handle,
            parent,
            options,
            stats: self.stats,
            xstats,
            xstats_text: text,
            classes: vec![],
        });
    }
}

#[cfg(test)]
mod tests;
