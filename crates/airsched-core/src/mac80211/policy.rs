//! Airtime policies beside mac80211's per-station deficits (next-steps paper §4.2, "Airtime
//! policies"; no kernel has them as of 6.18): stations in named **groups** with weights
//! (recursive groups allowed), a group **cap** (a hard share of the air, e.g. a guest network),
//! and a per-station **minimum rate**. The mac80211 scheduler ([`super::airtime`]) asks this
//! module, for each TXQ it visits, whether the TXQ's groups may send; the per-station deficit
//! then decides between the stations of a group, exactly as without groups.
//!
//! - **Groups** — deficit between groups as weighted virtual time: each group keeps, per AC,
//!   the airtime charged to it divided by its weight (`vt`). A TXQ may be served only if, at
//!   every level of its group path, its group's `vt` is not above the smallest `vt` among the
//!   sibling groups that have TXQs listed on the AC. A group that comes back after being idle
//!   may not bank credit: it is lifted to at most one quantum ([`LAG_US`]) behind the smallest
//!   active sibling. Under saturation the groups' airtime is therefore divided in proportion
//!   to their weights at each level, and inside a group by the stations' own deficits (their
//!   `airtime_weight`s). Stations in no group form one implicit top-level group of weight 1.
//! - **Cap** — a token bucket of airtime: the group earns `cap × elapsed` and pays each
//!   aggregate's airtime when it is built (the estimate) and the rest of the airtime of all
//!   tries at TX status; it may start an aggregate only with a non-negative balance, and the
//!   balance never exceeds zero (no burst). So in any interval of length T the group uses at
//!   most `cap × T` plus one aggregate (plus any hardware retries of that aggregate). It is a
//!   cap, not a weight: the air it refuses stays unused when no one else has frames.
//! - **Minimum rate** — a bit bucket per station: it earns `min_rate × elapsed` (bounded by
//!   [`MIN_RATE_BURST`] of it) and pays the payload of every MPDU its receiver acknowledged. A
//!   station whose bucket is positive (it is below its minimum) is served before the DRR walk,
//!   its airtime debt forgiven; weights do not stop it, a cap does.

use super::{Ac, StationId, TinId, NUM_ACS, NUM_TIDS};
use crate::time::Nanos;

/// How far (µs of airtime at the group's weight) a returning group may lag the smallest active
/// sibling: one 4 ms aggregate.
pub const LAG_US: u64 = 4_000;

/// The longest shortfall a minimum rate may make up for at once: 100 ms of its rate.
pub const MIN_RATE_BURST: Nanos = Nanos::from_ms(100);

/// Virtual-time units per µs at weight 1.
const VT_ONE: u64 = 1 << 16;

/// A group of stations (`[[airtime_group]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupParams {
    pub name: String,
    /// Relative weight among the group's siblings (≥ 1).
    pub weight: u32,
    /// Index of the parent group, None at the top level.
    pub parent: Option<u16>,
    /// Cap on the group's share of the air, parts per million (1..=1 000 000); None: no cap.
    pub cap_ppm: Option<u32>,
}

/// The AP's airtime policy: groups, each station's group and minimum rate. The parser
/// guarantees: weights ≥ 1, caps in (0, 100 %], parents exist and form no cycle, a group holds
/// either stations or groups, a station is in at most one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyParams {
    pub groups: Vec<GroupParams>,
    /// Per station: its group, None for none.
    pub station_group: Vec<Option<u16>>,
    /// Per station: the minimum downlink rate, bit/s (0: none).
    pub min_rate_bps: Vec<u64>,
}

impl PolicyParams {
    /// Whether the policy does anything.
    pub fn is_active(&self) -> bool {
        !self.groups.is_empty() || self.min_rate_bps.iter().any(|&r| r > 0)
    }
}

struct Group {
    weight: u64,
    /// Parent index, `NO_PARENT` at the top level.
    parent: u16,
    vt: [u64; NUM_ACS],
    /// TXQs of the group's stations (and its subgroups') on each AC's active list.
    active: [u32; NUM_ACS],
    /// Cap in ppm, 0: none; balance in ns × ppm (≤ 0), and when it was last brought up to date.
    cap_ppm: u64,
    balance: i64,
    last: Nanos,
}

const NO_PARENT: u16 = u16::MAX;

struct MinRate {
    bps: u64,
    /// Bits owed to the station × 10⁹ (positive: below its minimum).
    credit: i128,
    last: Nanos,
}

/// The policy's state in the scheduler.
pub struct Policy {
    groups: Vec<Group>,
    /// Per station: its leaf group (the implicit group for ungrouped stations when there are
    /// groups), `NO_PARENT` when there are no groups.
    sta_group: Vec<u16>,
    min_rate: Vec<Option<MinRate>>,
    /// Stations with a minimum rate, in index order.
    min_rate_stations: Vec<StationId>,
    /// Whether some group has a cap.
    capped: bool,
    /// Per TXQ: counted as backlogged in its groups' `active`.
    counted: Vec<bool>,
}

impl Policy {
    pub fn new(p: &PolicyParams, n_stations: usize) -> Policy {
        let mut groups: Vec<Group> = p
            .groups
            .iter()
            .map(|g| Group {
                weight: g.weight.max(1) as u64,
                parent: g.parent.unwrap_or(NO_PARENT),
                vt: [0; NUM_ACS],
                active: [0; NUM_ACS],
                cap_ppm: g.cap_ppm.unwrap_or(0) as u64,
                balance: 0,
                last: Nanos::ZERO,
            })
            .collect();
        let mut sta_group = vec![NO_PARENT; n_stations];
        if !groups.is_empty() {
            let implicit = groups.len() as u16;
            let mut used = false;
            for (s, g) in sta_group.iter_mut().enumerate() {
                match p.station_group.get(s).copied().flatten() {
                    Some(i) => *g = i,
                    None => {
                        *g = implicit;
                        used = true;
                    }
                }
            }
            if used {
                groups.push(Group {
                    weight: 1,
                    parent: NO_PARENT,
                    vt: [0; NUM_ACS],
                    active: [0; NUM_ACS],
                    cap_ppm: 0,
                    balance: 0,
                    last: Nanos::ZERO,
                });
            }
        }
        let min_rate: Vec<Option<MinRate>> = (0..n_stations)
            .map(|s| {
                let bps = p.min_rate_bps.get(s).copied().unwrap_or(0);
                (bps > 0).then_some(MinRate { bps, credit: 0, last: Nanos::ZERO })
            })
            .collect();
        let min_rate_stations =
            (0..n_stations).filter(|&s| min_rate[s].is_some()).map(|s| StationId(s as u16)).collect();
        let capped = groups.iter().any(|g| g.cap_ppm > 0);
        Policy { groups, sta_group, min_rate, min_rate_stations, capped, counted: vec![false; n_stations * NUM_TIDS] }
    }

    /// TXQ `tin` is backlogged (`true`: it joined the active list) or no longer (`false`: it was
    /// handed back without being listed again). A TXQ out for service stays counted, so a
    /// group does not look idle while its only TXQ builds an aggregate. A group that becomes
    /// backlogged again starts no further behind its busiest active sibling than one quantum
    /// ([`LAG_US`]): idle time earns no credit.
    pub fn backlogged(&mut self, tin: TinId, on: bool) {
        let k = tin.index();
        if self.counted[k] == on {
            return;
        }
        self.counted[k] = on;
        let i = tin.ac().index();
        let mut g = self.sta_group[tin.station().0 as usize];
        while g != NO_PARENT {
            let parent = self.groups[g as usize].parent;
            if on {
                if self.groups[g as usize].active[i] == 0 {
                    let m = (0..self.groups.len())
                        .filter(|&o| o != g as usize && self.groups[o].parent == parent && self.groups[o].active[i] > 0)
                        .map(|o| self.groups[o].vt[i])
                        .min();
                    let gr = &mut self.groups[g as usize];
                    if let Some(m) = m {
                        let lag = LAG_US * VT_ONE / gr.weight;
                        gr.vt[i] = gr.vt[i].max(m.saturating_sub(lag));
                    }
                }
                self.groups[g as usize].active[i] += 1;
            } else {
                self.groups[g as usize].active[i] -= 1;
            }
            g = parent;
        }
    }

    /// Bring a cap's balance up to `now` (it earns `cap × elapsed`, never above zero).
    fn refill(g: &mut Group, now: Nanos) {
        if g.cap_ppm > 0 && now > g.last {
            let earned = (now.0 - g.last.0).saturating_mul(g.cap_ppm);
            g.balance = g.balance.saturating_add(earned.min(i64::MAX as u64) as i64).min(0);
        }
        g.last = g.last.max(now);
    }

    /// Whether `g`'s cap keeps it from sending at `now` (its balance, brought up to date, is
    /// negative).
    fn cap_blocks(g: &Group, now: Nanos) -> bool {
        if g.cap_ppm == 0 {
            return false;
        }
        let earned = now.0.saturating_sub(g.last.0).saturating_mul(g.cap_ppm);
        g.balance.saturating_add(earned.min(i64::MAX as u64) as i64) < 0
    }

    /// Whether every capped group on `sta`'s path has a non-negative balance at `now`.
    fn caps_allow(&mut self, sta: StationId, now: Nanos) -> bool {
        if !self.capped {
            return true;
        }
        let mut g = self.sta_group[sta.0 as usize];
        let mut ok = true;
        while g != NO_PARENT {
            let gr = &mut self.groups[g as usize];
            Self::refill(gr, now);
            ok &= gr.cap_ppm == 0 || gr.balance >= 0;
            g = gr.parent;
        }
        ok
    }

    /// Whether a TXQ of `sta` on `ac` may be served at `now`: its caps allow it, and at every
    /// level no backlogged sibling group that its cap lets send has a smaller virtual time.
    pub fn may_send(&mut self, sta: StationId, ac: Ac, now: Nanos) -> bool {
        if !self.caps_allow(sta, now) {
            return false;
        }
        let i = ac.index();
        let mut g = self.sta_group[sta.0 as usize];
        while g != NO_PARENT {
            let gr = &self.groups[g as usize];
            let (parent, vt) = (gr.parent, gr.vt[i]);
            // A sibling waiting for its cap's balance does not hold the others back.
            let behind = self.groups.iter().enumerate().any(|(o, x)| {
                o != g as usize && x.parent == parent && x.active[i] > 0 && x.vt[i] < vt && !Self::cap_blocks(x, now)
            });
            if behind {
                return false;
            }
            g = parent;
        }
        true
    }

    /// An aggregate of `est_us` was built for `sta`: its capped groups pay the estimate now.
    pub fn on_built(&mut self, sta: StationId, est_us: u32, now: Nanos) {
        if self.capped {
            self.charge_caps(sta, est_us as i64, now);
        }
    }

    fn charge_caps(&mut self, sta: StationId, us: i64, now: Nanos) {
        let mut g = self.sta_group[sta.0 as usize];
        while g != NO_PARENT {
            let gr = &mut self.groups[g as usize];
            if gr.cap_ppm > 0 {
                Self::refill(gr, now);
                gr.balance = gr.balance.saturating_sub(us.saturating_mul(1000 * 1_000_000));
            }
            g = gr.parent;
        }
    }

    /// TX status on `ac`: `air_us` of all tries of an aggregate (the groups' shares), `held_us`
    /// the air it held with its responses (the caps, which paid `built_us` when it was built).
    pub fn on_airtime(&mut self, sta: StationId, ac: Ac, air_us: u32, held_us: u32, built_us: u32, now: Nanos) {
        let i = ac.index();
        let mut g = self.sta_group[sta.0 as usize];
        while g != NO_PARENT {
            let gr = &mut self.groups[g as usize];
            gr.vt[i] = gr.vt[i].saturating_add(air_us as u64 * VT_ONE / gr.weight);
            g = gr.parent;
        }
        if self.capped && held_us > built_us {
            self.charge_caps(sta, (held_us - built_us) as i64, now);
        }
    }

    /// Bring a minimum rate's bucket up to `now`.
    fn accrue(m: &mut MinRate, now: Nanos) {
        if now > m.last {
            let burst = m.bps as i128 * MIN_RATE_BURST.0 as i128;
            m.credit = (m.credit + m.bps as i128 * (now.0 - m.last.0) as i128).min(burst);
            m.last = now;
        }
    }

    /// `payload` bytes to `sta` were acknowledged.
    pub fn on_delivered(&mut self, sta: StationId, bytes: u32, now: Nanos) {
        if let Some(m) = self.min_rate[sta.0 as usize].as_mut() {
            Self::accrue(m, now);
            m.credit -= bytes as i128 * 8 * 1_000_000_000;
        }
    }

    /// Stations with a minimum rate.
    pub fn min_rate_stations(&self) -> &[StationId] {
        &self.min_rate_stations
    }

    /// Whether `sta` is below its minimum rate at `now` (and its caps let it send).
    pub fn below_min_rate(&mut self, sta: StationId, now: Nanos) -> bool {
        let Some(m) = self.min_rate[sta.0 as usize].as_mut() else { return false };
        Self::accrue(m, now);
        m.credit > 0 && self.caps_allow(sta, now)
    }

    /// When the first capped group that has TXQs listed and is blocked at `now` (its balance
    /// brought up to `now` is negative) is back at zero; always after `now`.
    pub fn cap_wake(&self, now: Nanos) -> Option<Nanos> {
        if !self.capped {
            return None;
        }
        self.groups
            .iter()
            .filter(|g| Self::cap_blocks(g, now) && g.active.iter().any(|&a| a > 0))
            .map(|g| g.last + Nanos(((-g.balance) as u64).div_ceil(g.cap_ppm)))
            .min()
    }

    /// Whether the policy keeps groups (and so needs [`Policy::backlogged`] calls).
    pub fn has_groups(&self) -> bool {
        !self.groups.is_empty()
    }
}
