//! COBALT, cake's per-flow AQM: CoDel's drop scheduling with hysteresis (the count decays one
//! step per elapsed schedule point instead of resetting) plus BLUE for unresponsive flows
//! (Linux 6.6 `net/sched/sch_cake.c`: `cobalt_newton_step`, `cobalt_invsqrt`,
//! `cobalt_control`, `cobalt_queue_full`, `cobalt_queue_empty`, `cobalt_should_drop`).
//!
//! Times are signed nanoseconds, as the kernel's ktime, so that `now - drop_next` may be
//! negative.

/// 1/sqrt(count) for counts below this come from a table (`REC_INV_SQRT_CACHE`).
const REC_INV_SQRT_CACHE: usize = 16;

/// The table `cobalt_cache_init` fills: four Newton steps per count from the previous value.
const fn inv_sqrt_cache() -> [u32; REC_INV_SQRT_CACHE] {
    let mut cache = [0u32; REC_INV_SQRT_CACHE];
    let mut v = Cobalt::new();
    v.rec_inv_sqrt = !0;
    cache[0] = v.rec_inv_sqrt;
    let mut count = 1;
    while count < REC_INV_SQRT_CACHE {
        v.count = count as u32;
        let mut i = 0;
        while i < 4 {
            v.newton_step();
            i += 1;
        }
        cache[count] = v.rec_inv_sqrt;
        count += 1;
    }
    cache
}

static INV_SQRT: [u32; REC_INV_SQRT_CACHE] = inv_sqrt_cache();

/// A tin's COBALT parameters (`struct cobalt_params`), set by `cake_set_rate`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CobaltParams {
    pub interval: u64,
    pub target: u64,
    pub mtu_time: u64,
    /// BLUE's increment and decrement on the 2^32 scale (1/256 and 1/4096).
    pub p_inc: u32,
    pub p_dec: u32,
}

/// What `cobalt_should_drop` decided about the packet at the head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Keep,
    /// CoDel's scheduled drop, or a CE mark when the packet is ECN-capable (then it is kept).
    Congested,
    /// BLUE's random drop (never a mark).
    Flood,
}

/// A flow's COBALT state (`struct cobalt_vars`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cobalt {
    pub count: u32,
    pub rec_inv_sqrt: u32,
    pub drop_next: i64,
    pub blue_timer: i64,
    pub p_drop: u32,
    pub dropping: bool,
    pub ecn_marked: bool,
}

impl Cobalt {
    pub const fn new() -> Cobalt {
        Cobalt { count: 0, rec_inv_sqrt: 0, drop_next: 0, blue_timer: 0, p_drop: 0, dropping: false, ecn_marked: false }
    }

    /// One Newton step of 1/sqrt(count) in Q0.32 (`cobalt_newton_step`).
    const fn newton_step(&mut self) {
        let invsqrt = self.rec_inv_sqrt as u64;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let mut val = (3u64 << 32).wrapping_sub((self.count as u64).wrapping_mul(invsqrt2));
        val >>= 2; // avoid overflow in the following multiply
        val = (val.wrapping_mul(invsqrt)) >> (32 - 2 + 1);
        self.rec_inv_sqrt = val as u32;
    }

    fn invsqrt(&mut self) {
        if (self.count as usize) < REC_INV_SQRT_CACHE {
            self.rec_inv_sqrt = INV_SQRT[self.count as usize];
        } else {
            self.newton_step();
        }
    }

    /// `cobalt_control`: `t + interval / sqrt(count)`.
    #[inline]
    fn control(t: i64, interval: u64, rec_inv_sqrt: u32) -> i64 {
        t + ((interval * rec_inv_sqrt as u64) >> 32) as i64
    }

    /// `cobalt_queue_full`: an overflow drop hit this flow. True if BLUE's probability just
    /// left zero (the flow becomes "unresponsive").
    pub fn queue_full(&mut self, p: &CobaltParams, now: i64) -> bool {
        let mut up = false;
        if now - self.blue_timer > p.target as i64 {
            up = self.p_drop == 0;
            self.p_drop = self.p_drop.wrapping_add(p.p_inc);
            if self.p_drop < p.p_inc {
                self.p_drop = !0;
            }
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// `cobalt_queue_empty`: the flow was found empty at dequeue. True if BLUE's probability
    /// just returned to zero.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: i64) -> bool {
        let mut down = false;
        if self.p_drop != 0 && now - self.blue_timer > p.target as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
            down = self.p_drop == 0;
        }
        self.dropping = false;
        if self.count != 0 && now - self.drop_next >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = Cobalt::control(self.drop_next, p.interval, self.rec_inv_sqrt);
        }
        down
    }

    /// `cobalt_should_drop` for the packet at the head, of sojourn `now - enqueued`.
    /// `bulk_flows` is the tin's bulk count in ingress mode, else 0. `ect` says whether the
    /// packet is ECN-capable (then a congestion verdict is a CE mark). `rand` is a uniform u32
    /// (drawn only when BLUE is active).
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: i64,
        enqueued: i64,
        bulk_flows: u32,
        ect: bool,
        rand: impl FnOnce() -> u32,
    ) -> Verdict {
        let mut verdict = Verdict::Keep;
        let mut schedule = now - self.drop_next;
        let sojourn = (now - enqueued) as u64;
        let over_target =
            sojourn > p.target && sojourn > p.mtu_time * bulk_flows as u64 * 2 && sojourn > p.mtu_time * 4;
        let mut next_due = self.count != 0 && schedule >= 0;
        self.ecn_marked = false;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = Cobalt::control(now, p.interval, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        if next_due && self.dropping {
            // Use an ECN mark if possible, otherwise drop.
            self.ecn_marked = ect;
            if !ect {
                verdict = Verdict::Congested;
            }
            self.count = self.count.wrapping_add(1);
            if self.count == 0 {
                self.count -= 1;
            }
            self.invsqrt();
            self.drop_next = Cobalt::control(self.drop_next, p.interval, self.rec_inv_sqrt);
            schedule = now - self.drop_next;
        } else {
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = Cobalt::control(self.drop_next, p.interval, self.rec_inv_sqrt);
                schedule = now - self.drop_next;
                next_due = self.count != 0 && schedule >= 0;
            }
        }
        // Simple BLUE; the lack of ECN is deliberate.
        if self.p_drop != 0 && verdict == Verdict::Keep && rand() < self.p_drop {
            verdict = Verdict::Flood;
        }
        // drop_next doubles as an activity timeout.
        if self.count == 0 {
            self.drop_next = now + p.interval as i64;
        } else if schedule > 0 && verdict == Verdict::Keep {
            self.drop_next = now;
        }
        verdict
    }

    /// Whether the state is still active when the flow is empty (it then stays on the
    /// decaying list).
    pub fn active(&self, now: i64) -> bool {
        self.p_drop != 0 || self.count != 0 || now < self.drop_next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_square_roots_match_the_analytic_values() {
        for (n, &v) in INV_SQRT.iter().enumerate().skip(1) {
            let exact = (1.0 / (n as f64).sqrt()) * 4294967296.0;
            // Four Newton steps from the previous count's value: within 0.1 % (count 2 is the
            // worst, 5.6e-4 low, as in the kernel's table).
            assert!((v as f64 - exact).abs() / exact < 1e-3, "count {n}: {v} vs {exact}");
        }
        // Beyond the cache, Newton steps from the previous count's value.
        let mut c = Cobalt { count: 15, rec_inv_sqrt: INV_SQRT[15], ..Cobalt::new() };
        for n in 16..200u32 {
            c.count = n;
            c.invsqrt();
            let exact = 4294967296.0 / (n as f64).sqrt();
            // One Newton step per count, as the kernel takes: within 0.2 %.
            assert!((c.rec_inv_sqrt as f64 - exact).abs() / exact < 2e-3, "count {n}: {} vs {exact}", c.rec_inv_sqrt);
        }
    }

    #[test]
    fn blue_rises_by_a_256th_per_target_and_decays_by_a_4096th() {
        let p = CobaltParams { interval: 100_000_000, target: 5_000_000, mtu_time: 0, p_inc: 1 << 24, p_dec: 1 << 20 };
        let mut c = Cobalt::new();
        assert!(c.queue_full(&p, 10_000_000));
        assert_eq!(c.p_drop, 1 << 24);
        // Within target of the last change: no second increment.
        assert!(!c.queue_full(&p, 12_000_000));
        assert_eq!(c.p_drop, 1 << 24);
        c.queue_full(&p, 20_000_000);
        assert_eq!(c.p_drop, 2 << 24);
        // Sixteen decrements of 1/4096 undo one increment of 1/256.
        let mut t = 20_000_000;
        let mut downs = 0;
        while c.p_drop > 0 {
            t += 6_000_000;
            if c.queue_empty(&p, t) {
                downs += 1;
            }
        }
        assert_eq!(downs, 1);
        assert_eq!((t - 20_000_000) / 6_000_000, 32);
    }

    #[test]
    fn codel_schedule_speeds_up_with_the_square_root_of_the_count() {
        let p = CobaltParams {
            interval: 100_000_000,
            target: 5_000_000,
            mtu_time: 1_000_000,
            p_inc: 1 << 24,
            p_dec: 1 << 20,
        };
        let mut c = Cobalt::new();
        // Sojourn 50 ms from t = 0: dropping starts. A fresh flow's 1/sqrt(count) is 0 (the
        // kernel zeroes cobalt_vars), so its first drop is due at once.
        let mut drops = vec![];
        let mut now = 0i64;
        while now < 1_000_000_000 {
            if c.should_drop(&p, now, now - 50_000_000, 0, false, || 0) == Verdict::Congested {
                drops.push(now);
            }
            now += 100_000;
        }
        assert_eq!(drops[0], 100_000);
        assert!((drops[1] - drops[0] - 70_710_678).abs() < 200_000, "{drops:?}");
        // Gaps shrink as interval/sqrt(count).
        for w in drops.windows(3).take(6) {
            assert!(w[2] - w[1] <= w[1] - w[0], "{drops:?}");
        }
        let g = (drops[4] - drops[3]) as f64;
        assert!((g - 100e6 / 5f64.sqrt()).abs() < 0.2e6, "{g}");
    }
}
