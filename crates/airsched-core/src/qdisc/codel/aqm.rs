//! The CoDel state machine shared by the codel and fq_codel qdiscs (Linux `include/net/codel.h`
//! and `codel_impl.h`, as in 6.18): its 1024-ns clock in 32 bits with wrap-around compares,
//! 1/sqrt(count) kept as a 16-bit fixed-point number refined by one Newton step per drop, and
//! the control law `t + interval * rec_inv_sqrt`.
//!
//! Packets are never ECN-marked in place (airsched has no per-packet ECN field): a packet
//! counts as ECN-capable when its flow's TOS byte carries ECT(0), ECT(1) or CE, as
//! `INET_ECN_set_ce` decides; such a packet is "marked" (counted, delivered) instead of
//! dropped. airsched's UDP flows are Not-ECT unless their TOS sets those bits.

use crate::packet::PacketId;
use crate::qdisc::QCtx;
use crate::time::Nanos;

/// CoDel time: nanoseconds >> 10 (1.024 us), 32 bits (`codel_time_t`).
pub(crate) type CodelTime = u32;

const CODEL_SHIFT: u32 = 10;

/// `CODEL_DISABLED_THRESHOLD` (INT_MAX): ce_threshold off.
pub(in crate::qdisc) const CE_THRESHOLD_DISABLED: CodelTime = i32::MAX as u32;

/// `REC_INV_SQRT_SHIFT`: rec_inv_sqrt holds the top 16 bits of a Q0.32 number.
const REC_INV_SQRT_SHIFT: u32 = 16;

#[inline]
pub(in crate::qdisc) fn codel_time(t: Nanos) -> CodelTime {
    (t.as_ns() >> CODEL_SHIFT) as u32
}

/// Microseconds (as tc sends them) to CoDel time, as the kernel converts netlink values.
pub(crate) fn us_to_codel(us: u32) -> CodelTime {
    ((us as u64 * 1000) >> CODEL_SHIFT) as u32
}

/// `codel_time_to_us`: what the kernel reports back to tc.
pub(in crate::qdisc) fn codel_to_us(t: CodelTime) -> u32 {
    (((t as u64) << CODEL_SHIFT) / 1000) as u32
}

/// `codel_time_after(a, b)`: a is later than b, modulo 2^32.
#[inline]
fn after(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[inline]
fn after_eq(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodelParams {
    pub target: CodelTime,
    pub ce_threshold: CodelTime,
    pub interval: CodelTime,
    /// Do not drop while the backlog left behind is at most this many bytes (psched_mtu).
    pub mtu: u32,
    pub ecn: bool,
    /// `ce_threshold_selector`/`mask`: ce_threshold applies only where (TOS & mask) == selector
    /// (mask 0: to every packet).
    pub ce_selector: u8,
    pub ce_mask: u8,
}

impl CodelParams {
    /// `codel_params_init`: target 5 ms, interval 100 ms, ce_threshold off, ecn off.
    pub(crate) fn new(mtu: u32) -> CodelParams {
        CodelParams {
            target: us_to_codel(5_000),
            ce_threshold: CE_THRESHOLD_DISABLED,
            interval: us_to_codel(100_000),
            mtu,
            ecn: false,
            ce_selector: 0,
            ce_mask: 0,
        }
    }
}

/// Per-queue CoDel variables (`struct codel_vars`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// count when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/sqrt(count), Q0.16.
    pub rec_inv_sqrt: u16,
    /// When the sojourn went (or will have gone) above target for a whole interval; 0 = not.
    pub first_above_time: CodelTime,
    /// When to drop next (dropping) or when the last drop was.
    pub drop_next: CodelTime,
    /// Sojourn time of the last packet examined.
    pub ldelay: CodelTime,
}

/// Counters shared by the queues of one qdisc (`struct codel_stats`, minus the scratch
/// drop_count/drop_len that airsched's stats propagation replaces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodelStats {
    pub maxpacket: u32,
    pub ecn_mark: u32,
    pub ce_mark: u32,
}

/// `INET_ECN_set_ce` on the packet's IPv4 header: succeeds for ECT(0), ECT(1) and CE.
#[inline]
fn ecn_capable(cx: &QCtx<'_>, pkt: PacketId) -> bool {
    cx.key(pkt).tos & 0x3 != 0
}

/// The result of asking a queue for its head packet: the packet and the bytes left behind in
/// the backlog CoDel compares with `mtu` (the whole qdisc's backlog, as the kernel passes it;
/// mac80211 passes the flow's own).
pub(crate) type Popped = Option<(PacketId, u64)>;

impl CodelVars {
    /// One Newton-Raphson step towards 1/sqrt(count): r' = r (3 - count r^2) / 2, computed in
    /// Q0.32 with the kernel's shifts (`codel_Newton_step`), stored back in 16 bits.
    pub(in crate::qdisc) fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2; // keeps the next product within 64 bits
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `codel_control_law`: t + interval / sqrt(count), as interval * rec_inv_sqrt (Q0.32)
    /// with `reciprocal_scale`.
    pub(in crate::qdisc) fn control_law(&self, t: CodelTime, interval: CodelTime) -> CodelTime {
        let scale = ((self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u64;
        t.wrapping_add(((interval as u64 * scale) >> 32) as u32)
    }

    /// `codel_should_drop`, right after `popped` left the queue.
    fn should_drop(
        &mut self,
        popped: Popped,
        cx: &QCtx<'_>,
        p: &CodelParams,
        stats: &mut CodelStats,
        now: CodelTime,
    ) -> bool {
        let Some((pkt, backlog)) = popped else {
            self.first_above_time = 0;
            return false;
        };
        self.ldelay = now.wrapping_sub(codel_time(cx.enqueued_at(pkt)));
        stats.maxpacket = stats.maxpacket.max(cx.len(pkt));
        if after(p.target, self.ldelay) || backlog <= p.mtu as u64 {
            // Below target (or nearly empty): must stay above for a whole interval again.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now.wrapping_add(p.interval);
            false
        } else {
            after(now, self.first_above_time)
        }
    }

    /// `codel_dequeue`: take packets from the head with `pop` until one may be delivered,
    /// dropping (with `cx.drop`, after `cx.unstamp`) those the control law condemns.
    pub(crate) fn dequeue<'c>(
        &mut self,
        p: &CodelParams,
        stats: &mut CodelStats,
        cx: &mut QCtx<'c>,
        now_ns: Nanos,
        mut pop: impl FnMut(&mut QCtx<'c>) -> Popped,
    ) -> Option<PacketId> {
        let mut popped = pop(cx);
        if popped.is_none() {
            self.dropping = false;
            return None;
        }
        let now = codel_time(now_ns);
        let drop = self.should_drop(popped, cx, p, stats, now);
        let drop_pkt = |cx: &mut QCtx<'c>, pkt: PacketId| {
            cx.unstamp(pkt, now_ns);
            cx.drop(pkt);
        };
        if self.dropping {
            if !drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            } else {
                // Drop (or mark) every packet whose time has come; a large backlog can make
                // several due at once.
                while self.dropping && after_eq(now, self.drop_next) {
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    let (pkt, _) = popped.expect("dropping state implies a packet");
                    if p.ecn && ecn_capable(cx, pkt) {
                        stats.ecn_mark += 1;
                        self.drop_next = self.control_law(self.drop_next, p.interval);
                        break;
                    }
                    drop_pkt(cx, pkt);
                    popped = pop(cx);
                    if self.should_drop(popped, cx, p, stats, now) {
                        self.drop_next = self.control_law(self.drop_next, p.interval);
                    } else {
                        self.dropping = false;
                    }
                }
            }
        } else if drop {
            let (pkt, _) = popped.expect("should_drop is false without a packet");
            if p.ecn && ecn_capable(cx, pkt) {
                stats.ecn_mark += 1;
            } else {
                drop_pkt(cx, pkt);
                popped = pop(cx);
                self.should_drop(popped, cx, p, stats, now);
            }
            self.dropping = true;
            // Re-entering soon after leaving: resume near the drop rate that controlled the
            // queue last time rather than from scratch.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1 && after(16u32.wrapping_mul(p.interval), now.wrapping_sub(self.drop_next)) {
                self.count = delta;
                self.newton_step();
            } else {
                self.count = 1;
                self.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
            }
            self.lastcount = self.count;
            self.drop_next = self.control_law(now, p.interval);
        }
        let (pkt, _) = popped?;
        if after(self.ldelay, p.ce_threshold)
            && (p.ce_mask == 0 || cx.key(pkt).tos & p.ce_mask == p.ce_selector)
            && ecn_capable(cx, pkt)
        {
            stats.ce_mark += 1;
        }
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gaps between successive drop_next values from entering the dropping state, in CoDel
    /// time units, for interval 100 ms (97 656 units).
    fn gaps(n: usize) -> Vec<u32> {
        let interval = us_to_codel(100_000);
        let mut v = CodelVars { count: 1, rec_inv_sqrt: 0xffff, ..Default::default() };
        let mut t = v.control_law(0, interval);
        let mut out = vec![t];
        for _ in 1..n {
            v.count += 1;
            v.newton_step();
            let next = v.control_law(t, interval);
            out.push(next - t);
            t = next;
        }
        out
    }

    #[test]
    fn control_law_spacing_matches_the_kernel_fixed_point() {
        // Hand-computed with the kernel's arithmetic (Q0.32 Newton step from rec_inv_sqrt
        // 0xffff, one step per drop): rec_inv_sqrt goes 0xffff, 0x8001, 0x9000, 0x7ce0,
        // 0x7107, ... The first gap is interval * (1 - 2^-16); the step from 1.0 at count 2
        // lands on exactly 0.5 (not 0.707), so the second gap is 50 ms, and the sequence then
        // converges on interval/sqrt(count): 56.2 (57.7), 48.8 (50.0), 44.2 (44.7) ms, ...
        assert_eq!(us_to_codel(100_000), 97_656);
        assert_eq!(gaps(6), vec![97_654, 48_829, 54_931, 47_635, 43_116, 39_459]);
        // By count 100 the approximation is within 1 % of 100 ms / sqrt(count).
        let g = gaps(100);
        let exact = 97_656.0 / 100f64.sqrt();
        assert!((g[99] as f64 - exact).abs() / exact < 0.01, "{} vs {exact}", g[99]);
    }

    #[test]
    fn time_conversions_round_like_the_kernel() {
        assert_eq!(us_to_codel(5_000), 4_882);
        assert_eq!(codel_to_us(4_882), 4_999);
        assert!(after(1, u32::MAX), "wrap-around compare");
        assert!(!after(CE_THRESHOLD_DISABLED.wrapping_add(1_000), CE_THRESHOLD_DISABLED.wrapping_add(2_000)));
        assert!(!after(5_000, CE_THRESHOLD_DISABLED), "small sojourns never pass a disabled threshold");
    }
}
