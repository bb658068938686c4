//! codel: one FIFO managed by CoDel (Linux 6.18 `net/sched/sch_codel.c` over
//! `include/net/codel_impl.h`). Tail drop at `limit` packets; at dequeue the CoDel state machine
//! ([`aqm`]) drops from the head once the sojourn time has stayed above `target` for an
//! `interval`, then at intervals shrinking as interval/sqrt(count).
//! Deviations: ECN marks are counted, not written into packets (see [`aqm`]); `peek` dequeues
//! into a one-packet stash, as the kernel's `codel_peek` does.

pub(crate) mod aqm;

use std::collections::VecDeque;

use self::aqm::{codel_time, codel_to_us, us_to_codel, CodelParams, CodelStats, CodelVars, CE_THRESHOLD_DISABLED};
use super::common::{errors_since, StashPeek};
use super::{opt_parser, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::packet::PacketId;
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::{format_time_us, OptParser};
use crate::time::Nanos;

/// `DEFAULT_CODEL_LIMIT`, packets.
const DEFAULT_LIMIT: u32 = 1000;

pub struct Codel {
    handle: Handle,
    limit: u32,
    params: CodelParams,
    vars: CodelVars,
    cstats: CodelStats,
    drop_overlimit: u32,
    queue: VecDeque<PacketId>,
    /// Bytes in `queue` (the stash excluded): what CoDel compares with `mtu`.
    backlog: u64,
    /// A packet `peek` took out of the queue; the next dequeue hands it out.
    stash: Option<PacketId>,
    stats: QdiscStats,
    /// Time of the last operation, for the relative `drop_next` tc reports.
    last_now: Nanos,
}

/// A tc time option as the kernel receives it: whole microseconds in 32 bits. `None` (with an
/// error at the value) if it does not fit.
pub(super) fn time_us(p: &mut OptParser<'_, '_>, key: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let t = p.time(key)?;
    match u32::try_from(t.as_ns() / 1000) {
        Ok(us) => Some(us),
        Err(_) => {
            p.error(at.unwrap_or(key), "time out of range: tc sends microseconds in 32 bits (at most 4294s)");
            None
        }
    }
}

/// The warning for options whose effect needs ECN-capable packets.
pub(super) const ECN_NOTE: &str = "accepted; CoDel marks instead of dropping only packets whose TOS carries ECT or CE bits: \
     airsched's UDP flows are Not-ECT unless their tos sets those bits, so they are dropped; marks are counted, not written into packets";

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut params = CodelParams::new(cx.mtu.clamp(256, 1 << 20));
    let mut limit = DEFAULT_LIMIT;
    let mut p = opt_parser(&d.opts, d.end, diags);
    while let Some(k) = p.next() {
        match k.text {
            // tc sends limit, target and interval only when non-zero: 0 keeps the default.
            "limit" => {
                if let Some(v) = p.uint(k, 0, u32::MAX as u64).filter(|&v| v > 0) {
                    limit = v as u32;
                }
            }
            "target" => {
                if let Some(us) = time_us(&mut p, k).filter(|&us| us > 0) {
                    params.target = us_to_codel(us);
                }
            }
            "interval" => {
                if let Some(us) = time_us(&mut p, k).filter(|&us| us > 0) {
                    params.interval = us_to_codel(us);
                }
            }
            "ce_threshold" => {
                if let Some(us) = time_us(&mut p, k) {
                    params.ce_threshold = us_to_codel(us);
                    p.warn(k, format!("ce_threshold {ECN_NOTE}"));
                }
            }
            "ecn" => {
                params.ecn = true;
                p.warn(k, format!("ecn {ECN_NOTE}"));
            }
            "noecn" => params.ecn = false,
            _ => {
                // tc stops at the first word it does not know; so does airsched.
                p.unknown(k, "codel", &["limit", "target", "interval", "ecn", "noecn", "ce_threshold"]);
                break;
            }
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    Some(QdiscImpl::Codel(Codel::new(d.handle, limit, params)))
}

impl Codel {
    fn new(handle: Handle, limit: u32, params: CodelParams) -> Codel {
        Codel {
            handle,
            limit,
            params,
            vars: CodelVars::default(),
            cstats: CodelStats::default(),
            drop_overlimit: 0,
            queue: VecDeque::with_capacity(limit.min(1 << 16) as usize),
            backlog: 0,
            stash: None,
            stats: QdiscStats::default(),
            last_now: Nanos::ZERO,
        }
    }
}

impl StashPeek for Codel {
    const LEAF: bool = true;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    /// CoDel over the FIFO: the next packet to deliver, after any drops it decides.
    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let Codel { queue, backlog, params, vars, cstats, .. } = self;
        vars.dequeue(params, cstats, cx, now, |cx| {
            let p = queue.pop_front()?;
            *backlog -= cx.len(p) as u64;
            Some((p, *backlog))
        })
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        self.last_now = now;
        let mark = cx.mark();
        // The stash still counts in the qdisc's qlen, as in the kernel.
        let res = if self.stats.qlen < self.limit as u64 {
            cx.stamp(pkt, now);
            self.queue.push_back(pkt);
            self.backlog += cx.len(pkt) as u64;
            Enq::Queued
        } else {
            self.drop_overlimit += 1;
            cx.drop(pkt);
            Enq::Dropped
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.last_now = now;
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.last_now = now;
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
        let mut options = format!("limit {}p target {} ", self.limit, format_time_us(codel_to_us(p.target).into()));
        if p.ce_threshold != CE_THRESHOLD_DISABLED {
            options += &format!("ce_threshold {} ", format_time_us(codel_to_us(p.ce_threshold).into()));
        }
        options += &format!("interval {}", format_time_us(codel_to_us(p.interval).into()));
        if p.ecn {
            options += " ecn";
        }
        let v = &self.vars;
        let drop_next = drop_next_us(v, self.last_now);
        let mut text = format!(
            "  count {} lastcount {} ldelay {}{} drop_next {}\n  maxpacket {} ecn_mark {} drop_overlimit {}",
            v.count,
            v.lastcount,
            format_time_us(codel_to_us(v.ldelay).into()),
            if v.dropping { " dropping" } else { "" },
            signed_tc_time(drop_next),
            self.cstats.maxpacket,
            self.cstats.ecn_mark,
            self.drop_overlimit,
        );
        if self.cstats.ce_mark > 0 {
            text += &format!(" ce_mark {}", self.cstats.ce_mark);
        }
        let xstats = vec![
            ("count".into(), v.count as i64),
            ("lastcount".into(), v.lastcount as i64),
            ("ldelay".into(), codel_to_us(v.ldelay) as i64),
            ("dropping".into(), v.dropping as i64),
            ("drop_next".into(), drop_next),
            ("maxpacket".into(), self.cstats.maxpacket as i64),
            ("ecn_mark".into(), self.cstats.ecn_mark as i64),
            ("drop_overlimit".into(), self.drop_overlimit as i64),
            ("ce_mark".into(), self.cstats.ce_mark as i64),
        ];
        out.push(QdiscReport {
            kind: "codel",
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

/// `drop_next` as the kernel reports it: microseconds from now (negative if overdue), 0 when
/// not dropping.
pub(super) fn drop_next_us(v: &CodelVars, now: Nanos) -> i64 {
    if !v.dropping {
        return 0;
    }
    let delta = v.drop_next.wrapping_sub(codel_time(now)) as i32;
    if delta >= 0 {
        codel_to_us(delta as u32) as i64
    } else {
        -(codel_to_us(delta.unsigned_abs()) as i64)
    }
}

/// tc's `drop_next -5ms` form.
pub(super) fn signed_tc_time(us: i64) -> String {
    if us < 0 {
        format!("-{}", format_time_us(u64::from(us.unsigned_abs() as u32)))
    } else {
        format_time_us(u64::from(us as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{build, build_ok, overload, qdisc, Bench};
    use crate::tc::lex::Severity;

    fn codel(q: &QdiscImpl) -> &Codel {
        match q {
            QdiscImpl::Codel(c) => c,
            _ => panic!("not codel"),
        }
    }

    const MBIT: u64 = 1_000_000;

    #[test]
    fn codel_holds_a_mild_overload_near_target() {
        // 4 Mbit/s link, 1514-byte frames (3.03 ms each), one unresponsive flow offered 5 %
        // above the link: 16.5 excess frames/s, a drop every ~60 ms, which the control law
        // reaches at count ~3 within the first dropping interval. CoDel drops only once the
        // head's sojourn has stayed above target, so the standing queue settles with the head
        // just above target and at most one more frame behind it: the mean sojourn lies
        // between target and target + 1.5 frame times (5 to 9.5 ms). Measured from 1 s (after
        // the first interval): 8.0 ms.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel"));
        let r = overload(&mut q, 4 * MBIT, 105, 10, 1);
        let mean = r.mean_delay(0).as_ns() as f64 / 1e6;
        assert!((5.0..9.5).contains(&mean), "mean sojourn {mean:.2} ms");
        assert!(r.rate_bps(0, 9.0) > 0.99 * 4e6, "the link stays busy");
        // pfifo (limit 1000) under the same load keeps growing by 16.5 frames/s (50 ms/s):
        // 450 ms after 9 s.
        let mut fifo = QdiscImpl::default_root(1000);
        let f = overload(&mut fifo, 4 * MBIT, 105, 10, 1);
        assert!(f.mean_delay(0) > Nanos::from_ms(200), "{}", f.mean_delay(0));
        assert!(f.delay_max[0] > Nanos::from_ms(400), "{}", f.delay_max[0]);
    }

    #[test]
    fn codel_cannot_hold_target_against_a_2x_unresponsive_flood() {
        // Offered 2x the link, CoDel must drop 330 frames/s, i.e. interval/sqrt(count) =
        // 1/330 s: count ~ (0.1 * 330)^2 = 1089, reached after ~6.6 s of dropping (count grows
        // as 25 t^2). The queue built meanwhile is drained by the overshooting rate, CoDel
        // leaves the dropping state, re-enters with count = count - lastcount (small after a
        // quick exit/re-entry) and ramps again: a ~10 s sawtooth whose mean is hundreds of ms
        // (Linux CoDel is designed for responsive flows; this is the known limitation that
        // fq_codel's flow isolation and cake's BLUE address). It still stays far below pfifo.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel"));
        let r = overload(&mut q, 4 * MBIT, 200, 60, 10);
        let mean = r.mean_delay(0).as_ns() as f64 / 1e6;
        assert!((300.0..1000.0).contains(&mean), "mean sojourn {mean:.0} ms");
        assert!(r.delay_max[0] < Nanos::from_ms(1_200), "{}", r.delay_max[0]);
        assert!(codel(&q).drop_overlimit < 100, "CoDel, not the limit, does the dropping");
        let mut fifo = QdiscImpl::default_root(1000);
        let f = overload(&mut fifo, 4 * MBIT, 200, 60, 10);
        assert!(f.mean_delay(0).as_ns() as f64 / 1e6 > 4.0 * mean, "{}", f.mean_delay(0));
    }

    /// A queue fed at twice the link rate, drained by dequeues at the link rate, watching each
    /// drop: (time of the dequeue that dropped, drop_next scheduled after it, count).
    fn watch_drops(q: &mut QdiscImpl, b: &mut Bench, pkts: usize) -> Vec<(Nanos, u32, u32)> {
        let tx = Nanos::for_bits(1514 * 8, 4 * MBIT); // 3.028 ms per frame
        let mut now = Nanos::ZERO;
        let mut out = vec![];
        for _ in 0..pkts {
            for k in 0..2 {
                let p = b.pkt(0, 1500);
                q.enqueue(p, &mut b.cx(), now + Nanos(k * tx.as_ns() / 2));
            }
            now += tx;
            if let Some(p) = q.dequeue(&mut b.cx(), now) {
                b.pkts.free(p);
            }
            let c = codel(q);
            if !b.dropped.is_empty() {
                out.push((now, c.vars.drop_next, c.vars.count));
            }
            for p in b.dropped.drain(..) {
                b.pkts.free(p);
            }
        }
        out
    }

    #[test]
    fn drop_spacing_is_interval_over_sqrt_count_in_fixed_point() {
        // Reference section 14.9, with the kernel's arithmetic. limit 100000 so that only
        // CoDel drops. Sojourns pass 5 ms at the 3rd dequeue; the first drop comes at the first
        // dequeue more than 100 ms later, then drop_next advances from its previous value by
        // interval*rec_inv_sqrt: 97 654, 48 829, 54 931, 47 635, 43 116 units of 1.024 us
        // (99.998, 50.001, 56.249, 48.778, 44.151 ms; see aqm::tests for the derivation).
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel limit 100000"));
        let drops = watch_drops(&mut q, &mut Bench::new(1), 200);
        assert!(drops.len() >= 6, "{drops:?}");
        let (t0, first_next, count) = drops[0];
        assert_eq!(count, 1);
        // Above target from the 3rd dequeue (t = 9.08 ms): dropping from just after 109 ms.
        assert!(t0 > Nanos::from_ms(109) && t0 < Nanos::from_ms(113), "{t0}");
        assert_eq!(first_next.wrapping_sub(codel_time(t0)), 97_654);
        let gaps: Vec<u32> = drops.windows(2).map(|w| w[1].1.wrapping_sub(w[0].1)).collect();
        assert_eq!(&gaps[..4], &[48_829, 54_931, 47_635, 43_116]);
        for (i, w) in drops.windows(2).enumerate() {
            assert_eq!(w[1].2, i as u32 + 2, "count grows by one per drop");
            // Each drop happens at the first dequeue at or after its drop_next (one frame).
            let due = Nanos((w[0].1 as u64) << 10);
            assert!(w[1].0 >= due && w[1].0 < due + Nanos::from_us(3_100), "{} vs {due}", w[1].0);
        }
    }

    #[test]
    fn reentering_soon_resumes_from_the_previous_drop_rate() {
        // Overload until count is well above 2, idle until the queue drains (leaving the
        // dropping state), then overload again within 16 intervals: count restarts at
        // count - lastcount instead of 1.
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel limit 100000"));
        let mut b = Bench::new(1);
        watch_drops(&mut q, &mut b, 400);
        let (count, lastcount) = (codel(&q).vars.count, codel(&q).vars.lastcount);
        assert!(count > 5 && lastcount == 1, "{count} {lastcount}");
        // Drain: dequeue everything quickly (sojourns then fall below target).
        let mut now = Nanos::from_secs(2);
        while let Some(p) = q.dequeue(&mut b.cx(), now) {
            b.pkts.free(p);
            now += Nanos::from_us(10);
        }
        for p in b.dropped.drain(..) {
            b.pkts.free(p);
        }
        assert!(!codel(&q).vars.dropping);
        let count_before = codel(&q).vars.count;
        let lastcount_before = codel(&q).vars.lastcount;
        // Build a standing queue again: 40 frames at once, dequeued slowly.
        let mut t = now;
        for _ in 0..40 {
            let p = b.pkt(0, 1500);
            q.enqueue(p, &mut b.cx(), t);
        }
        while !codel(&q).vars.dropping {
            t += Nanos::from_ms(3);
            let p = q.dequeue(&mut b.cx(), t).expect("still backlogged");
            b.pkts.free(p);
        }
        assert_eq!(codel(&q).vars.count, count_before - lastcount_before);
        assert_eq!(codel(&q).vars.lastcount, count_before - lastcount_before);
    }

    #[test]
    fn peek_stashes_the_packet_dequeue_returns() {
        let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel limit 3"));
        let mut b = Bench::new(1);
        let ids: Vec<_> = (0..4).map(|_| b.pkt(0, 986)).collect();
        let res: Vec<_> = ids.iter().map(|&p| q.enqueue(p, &mut b.cx(), Nanos(0))).collect();
        assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Queued, Enq::Dropped]);
        assert_eq!(q.peek(&mut b.cx(), Nanos(10)), Some(ids[0]));
        // The stash still counts toward the limit.
        let extra = b.pkt(0, 986);
        assert_eq!(q.enqueue(extra, &mut b.cx(), Nanos(20)), Enq::Dropped);
        let mut seen = vec![];
        q.for_each_queued(&mut |p| seen.push(p));
        assert_eq!(seen, ids[..3].to_vec());
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(30)), Some(ids[0]));
        assert_eq!(b.pkts.get(ids[0]).queue_delay, Nanos(30), "sojourn runs until it leaves the stash");
        let s = q.stats();
        assert_eq!((s.offered_packets, s.sent_packets, s.drops, s.qlen, s.backlog_bytes), (5, 1, 2, 2, 2000));
        assert_eq!(codel(&q).drop_overlimit, 2);
    }

    #[test]
    fn options_defaults_and_report() {
        let q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: codel"));
        let r = q.reports();
        assert_eq!(r[0].options, "limit 1000p target 5ms interval 100ms");
        assert_eq!(
            r[0].xstats_text,
            "  count 0 lastcount 0 ldelay 0us drop_next 0us\n  maxpacket 0 ecn_mark 0 drop_overlimit 0"
        );
        let c = codel(&q);
        assert_eq!((c.params.target, c.params.interval, c.params.mtu, c.params.ecn), (4_882, 97_656, 1514, false));
        let (q, diags) = build(qdisc(
            1,
            "tc qdisc add dev eth0 root handle 1: codel limit 200 target 2ms interval 50ms ce_threshold 1ms ecn",
        ));
        let r = q.expect("valid").reports();
        assert_eq!(r[0].options, "limit 200p target 2ms ce_threshold 999us interval 50ms ecn");
        // ecn and ce_threshold are accepted with a warning each, at their tokens.
        let warned: Vec<_> = diags.iter().map(|d| (d.severity, d.col, d.token.as_str())).collect();
        assert_eq!(warned, vec![(Severity::Warning, 79, "ce_threshold"), (Severity::Warning, 96, "ecn")]);
    }

    #[test]
    fn option_errors_name_the_token() {
        let (q, d) = build(qdisc(2, "tc qdisc add dev eth0 root handle 1: codel limit 10 bogus 3"));
        assert!(q.is_none());
        assert_eq!((d[0].line, d[0].col, d[0].token.as_str()), (2, 53, "bogus"));
        assert!(
            d[0].message.contains("unknown codel option") && d[0].message.contains("ce_threshold"),
            "{}",
            d[0].message
        );
        let (q, d) = build(qdisc(3, "tc qdisc add dev eth0 root handle 1: codel target 5parsecs"));
        assert!(q.is_none());
        assert_eq!((d[0].line, d[0].col, d[0].token.as_str()), (3, 51, "5parsecs"));
        let (q, d) = build(qdisc(4, "tc qdisc add dev eth0 root handle 1: codel interval"));
        assert!(q.is_none());
        assert_eq!((d[0].col, d[0].token.as_str()), (44, "interval"));
        assert!(d[0].message.contains("needs a value"));
        let (q, d) = build(qdisc(5, "tc qdisc add dev eth0 root handle 1: codel target 5000s"));
        assert!(q.is_none());
        assert_eq!((d[0].col, d[0].token.as_str()), (51, "5000s"));
        assert!(d[0].message.contains("out of range"), "{}", d[0].message);
    }
}
