//! A minimal model of a driver that aggregates in firmware (mt76, ath10k style; next-steps
//! §4.1 "Minimising hardware queue length", docs/next-steps-firmware.md): the host hands frames
//! from mac80211's TXQs to the firmware while the firmware holds less than a limit per access
//! category, and the firmware builds each A-MPDU from the frames it holds. The limit is a fixed
//! count of frames, as the drivers have, or a byte limit that adapts as Byte Queue Limits does
//! ([`Dql`], Linux 6.6 `lib/dynamic_queue_limits.c`).
//!
//! What the firmware does with its frames is not documented by any vendor; this model's firmware
//! serves its stations' TIDs in round robin, in the order the host first handed them frames,
//! one aggregate per turn, and retries failed MPDUs ahead of new ones.

use std::collections::VecDeque;

use super::params::{FirmwareLimit, FirmwareQueue};
use crate::mac80211::{TinId, NUM_ACS};
use crate::time::Nanos;

/// `DQL_MAX_OBJECT` (`UINT_MAX / 16`).
const DQL_MAX_OBJECT: u32 = u32::MAX / 16;
/// `DQL_MAX_LIMIT` (`(UINT_MAX / 2) - DQL_MAX_OBJECT`), dql_init's `max_limit`.
pub const DQL_MAX_LIMIT: u32 = u32::MAX / 2 - DQL_MAX_OBJECT;
/// `slack_hold_time`: BQL's `dql_init(&q->dql, HZ)`, one second.
pub const DQL_HOLD: Nanos = Nanos::from_secs(1);

/// Dynamic queue limits (Linux 6.6 `lib/dynamic_queue_limits.c`, `include/linux/dynamic_queue_limits.h`):
/// the limit grows by what was missing when the queue ran empty while over its limit (starved),
/// and shrinks by the least slack (the excess over twice what completed in one completion
/// interval) seen over `slack_hold_time` while the queue never ran dry. Counts are bytes here.
/// Deviations: time is `Nanos`, not jiffies; the 6.9 stall detector is not modelled; counters
/// wrap as the kernel's unsigned ints do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dql {
    pub num_queued: u32,
    pub adj_limit: u32,
    pub last_obj_cnt: u32,
    pub limit: u32,
    pub num_completed: u32,
    pub prev_ovlimit: u32,
    pub prev_num_queued: u32,
    pub prev_last_obj_cnt: u32,
    pub lowest_slack: u32,
    pub slack_start_time: Nanos,
    pub max_limit: u32,
    pub min_limit: u32,
    pub slack_hold_time: Nanos,
}

/// `POSDIFF(A, B)`: A - B if positive (as signed), else 0.
#[inline]
fn posdiff(a: u32, b: u32) -> u32 {
    if (a.wrapping_sub(b) as i32) > 0 {
        a.wrapping_sub(b)
    } else {
        0
    }
}

/// `AFTER_EQ(A, B)`.
#[inline]
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

impl Dql {
    /// `dql_init(dql, hold_time)` then `dql_reset`, at `now`.
    pub fn new(hold_time: Nanos, now: Nanos) -> Dql {
        Dql {
            num_queued: 0,
            adj_limit: 0,
            last_obj_cnt: 0,
            limit: 0,
            num_completed: 0,
            prev_ovlimit: 0,
            prev_num_queued: 0,
            prev_last_obj_cnt: 0,
            lowest_slack: u32::MAX,
            slack_start_time: now,
            max_limit: DQL_MAX_LIMIT,
            min_limit: 0,
            slack_hold_time: hold_time,
        }
    }

    /// `dql_queued`: `count` bytes were handed to the device.
    pub fn queued(&mut self, count: u32) {
        self.last_obj_cnt = count;
        self.num_queued = self.num_queued.wrapping_add(count);
    }

    /// `dql_avail`: what may still be queued; the queue is stopped while it is negative.
    pub fn avail(&self) -> i64 {
        self.adj_limit.wrapping_sub(self.num_queued) as i32 as i64
    }

    /// Bytes the device holds (queued, not completed).
    pub fn in_flight(&self) -> u32 {
        self.num_queued.wrapping_sub(self.num_completed)
    }

    /// `dql_completed`: the device finished `count` bytes at `now`.
    pub fn completed(&mut self, count: u32, now: Nanos) {
        let num_queued = self.num_queued;
        debug_assert!(count <= num_queued.wrapping_sub(self.num_completed), "more completed than queued");
        let completed = self.num_completed.wrapping_add(count);
        let mut limit = self.limit;
        let mut ovlimit = posdiff(num_queued.wrapping_sub(self.num_completed), limit);
        let inprogress = num_queued.wrapping_sub(completed);
        let prev_inprogress = self.prev_num_queued.wrapping_sub(self.num_completed);
        let all_prev_completed = after_eq(completed, self.prev_num_queued);

        if (ovlimit != 0 && inprogress == 0) || (self.prev_ovlimit != 0 && all_prev_completed) {
            // Starved: over the limit and now empty, or the last interval was over the limit
            // and all of it completed. Grow by what was missing.
            limit = limit.wrapping_add(posdiff(completed, self.prev_num_queued).wrapping_add(self.prev_ovlimit));
            self.slack_start_time = now;
            self.lowest_slack = u32::MAX;
        } else if inprogress != 0 && prev_inprogress != 0 && !all_prev_completed {
            // Busy the whole interval: the slack is what was queued beyond twice what completed.
            let slack = posdiff(
                limit.wrapping_add(self.prev_ovlimit),
                2u32.wrapping_mul(completed.wrapping_sub(self.num_completed)),
            );
            let slack_last_objs =
                if self.prev_ovlimit != 0 { posdiff(self.prev_last_obj_cnt, self.prev_ovlimit) } else { 0 };
            let slack = slack.max(slack_last_objs);
            self.lowest_slack = self.lowest_slack.min(slack);
            if now > self.slack_start_time + self.slack_hold_time {
                limit = posdiff(limit, self.lowest_slack);
                self.slack_start_time = now;
                self.lowest_slack = u32::MAX;
            }
        }
        limit = limit.clamp(self.min_limit, self.max_limit);
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }
        self.adj_limit = limit.wrapping_add(completed);
        self.prev_ovlimit = ovlimit;
        self.prev_last_obj_cnt = self.last_obj_cnt;
        self.num_completed = completed;
        self.prev_num_queued = num_queued;
    }
}

/// The AP's firmware: per access category the frames handed to it, their bytes (the DQL's
/// count), and the TIDs it serves in turn.
pub struct Firmware {
    pub cfg: FirmwareQueue,
    /// Per AC: frames the firmware holds (handed, not yet completed).
    pub frames: [u32; NUM_ACS],
    /// Per AC: Byte Queue Limits (used with `FirmwareLimit::Dql`).
    pub dql: [Dql; NUM_ACS],
    /// Per AC: the TIDs with frames in the firmware, in service order.
    pub order: [VecDeque<TinId>; NUM_ACS],
    /// Per tin: on its AC's `order`.
    pub listed: Vec<bool>,
    /// Per AC: bytes and frames that left the firmware since the last completion report.
    pub done_bytes: [u32; NUM_ACS],
    pub done_frames: [u32; NUM_ACS],
    /// Statistics: the most frames and bytes the firmware held per AC, and the DQL limit's
    /// largest value.
    pub max_frames: u32,
    pub max_bytes: u32,
    pub max_limit_seen: u32,
}

impl Firmware {
    pub fn new(cfg: FirmwareQueue, n_tins: usize) -> Firmware {
        Firmware {
            cfg,
            frames: [0; NUM_ACS],
            dql: [Dql::new(DQL_HOLD, Nanos::ZERO); NUM_ACS],
            order: std::array::from_fn(|_| VecDeque::with_capacity(n_tins)),
            listed: vec![false; n_tins],
            done_bytes: [0; NUM_ACS],
            done_frames: [0; NUM_ACS],
            max_frames: 0,
            max_bytes: 0,
            max_limit_seen: 0,
        }
    }

    /// Whether the host may hand AC `ac` another frame (the netdev queue is not stopped): below
    /// the frame count, and with DQL while `dql_avail` is not negative.
    pub fn may_queue(&self, ac: usize) -> bool {
        self.frames[ac] < self.cfg.frames && (self.cfg.limit == FirmwareLimit::Fixed || self.dql[ac].avail() >= 0)
    }

    /// The host handed a frame of `bytes` (`netdev_tx_sent_queue`) for `tin`.
    pub fn handed(&mut self, ac: usize, tin: TinId, bytes: u32) {
        self.frames[ac] += 1;
        self.dql[ac].queued(bytes);
        self.max_frames = self.max_frames.max(self.frames[ac]);
        self.max_bytes = self.max_bytes.max(self.dql[ac].in_flight());
        if !self.listed[tin.index()] {
            self.listed[tin.index()] = true;
            self.order[ac].push_back(tin);
        }
    }

    /// A frame of `bytes` left the firmware (acknowledged or given up).
    pub fn left(&mut self, ac: usize, bytes: u32) {
        self.frames[ac] -= 1;
        self.done_bytes[ac] += bytes;
        self.done_frames[ac] += 1;
    }

    /// The TX status interrupt (`netdev_tx_completed_queue`): what left since the last.
    pub fn report(&mut self, ac: usize, now: Nanos) {
        if self.done_frames[ac] == 0 {
            return;
        }
        let bytes = std::mem::take(&mut self.done_bytes[ac]);
        self.done_frames[ac] = 0;
        self.dql[ac].completed(bytes, now);
        self.max_limit_seen = self.max_limit_seen.max(self.dql[ac].limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that completes `per_interval` bytes every interval while the host keeps it fed
    /// (queues 1500-byte frames while `dql_avail >= 0`): the limit settles between one and two
    /// intervals' worth, far below a fixed queue, and the device never starves once settled.
    #[test]
    fn the_limit_settles_near_what_completes_per_interval() {
        const FRAME: u32 = 1500;
        let per_interval = 20 * FRAME;
        let mut d = Dql::new(DQL_HOLD, Nanos::ZERO);
        let mut starved_late = 0;
        for k in 1..=10_000u64 {
            while d.avail() >= 0 {
                d.queued(FRAME);
            }
            let now = Nanos::from_us(500 * k);
            let done = d.in_flight().min(per_interval);
            if k > 6000 && d.in_flight() < per_interval {
                starved_late += 1;
            }
            d.completed(done, now);
        }
        assert_eq!(starved_late, 0, "the device ran short of frames after the limit settled");
        assert!(d.limit >= per_interval, "limit {} below one interval's {per_interval}", d.limit);
        assert!(d.limit <= 2 * per_interval + FRAME, "limit {} above two intervals' worth", d.limit);
    }

    /// Starvation grows the limit by exactly what was missing plus the previous overshoot.
    #[test]
    fn starvation_grows_the_limit_by_the_shortfall() {
        let mut d = Dql::new(DQL_HOLD, Nanos::ZERO);
        assert_eq!(d.avail(), 0);
        d.queued(1000);
        assert!(d.avail() < 0, "one frame over the zero limit stops the queue");
        // Completed with nothing left in progress while over the limit: starved.
        d.completed(1000, Nanos::from_ms(1));
        // posdiff(completed 1000, prev_num_queued 0) + prev_ovlimit 0.
        assert_eq!(d.limit, 1000);
        assert_eq!(d.avail(), 1000);
        d.queued(1500);
        d.completed(1500, Nanos::from_ms(2));
        // Over the limit by 500 and empty again: grows by 2500 - 1000.
        assert_eq!(d.limit, 2500);
    }

    /// With slack held over more than `slack_hold_time`, the limit shrinks by the lowest slack.
    #[test]
    fn slack_shrinks_the_limit_after_the_hold_time() {
        let mut d = Dql::new(DQL_HOLD, Nanos::ZERO);
        d.limit = 100_000;
        d.adj_limit = 100_000;
        // Keep 100 kB queued and complete 10 kB per interval: slack 100k - 2*10k = 80k.
        let mut now = Nanos::ZERO;
        d.queued(100_000);
        for _ in 0..5 {
            now += Nanos::from_ms(100);
            d.completed(10_000, now);
            d.queued(10_000);
        }
        assert_eq!(d.limit, 100_000, "no shrink within the hold time");
        now += Nanos::from_secs(1);
        d.completed(10_000, now);
        assert_eq!(d.limit, 20_000, "shrunk by the lowest slack, 80 kB");
    }
}
