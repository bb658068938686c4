//! Airtime fairness between stations: which tin (station TXQ) the driver serves next, per AC,
//! charged with the airtime each station used. Two kernel generations, chosen by [`AtfKind`]:
//! - [`AtfKind::Ath9k`]: the ath9k in-driver scheduler (commit 63fefa050477, Linux 4.11 to
//!   5.0; Algorithm 3 of the next-steps paper): per station and AC a deficit in µs, new and
//!   old lists of TIDs, quantum 300 µs added when a TID at the head has spent its deficit; a
//!   TID keeps the head (one aggregate per call) while its deficit is positive.
//! - [`AtfKind::Mac80211`]: mac80211's scheduler after Fietkau's 2022 rework (Linux ≈6.0 to
//!   6.18): one active list per AC, deficit refilled by the station's weight (default 256),
//!   decisions on `deficit − AQL pending`, round markers, returned TXQs at the head, charging
//!   only for stations active in the last 100 ms.
//!
//! Deviations: time is `Nanos` (the kernel's jiffies make "100 ms" a multiple of 1/HZ); the
//! push-pull API (`ieee80211_txq_may_transmit`), the TXQ_DIRTY/STOP flags, channel contexts
//! and non-station (vif) TXQs are not modelled; ath9k's rotation without airtime accounting
//! happens when `next_tin` returns instead of after the aggregate is built.

use std::collections::VecDeque;

use super::aql::Aql;
use super::policy::{Policy, PolicyParams};
use super::{Ac, StationId, TinId, NUM_ACS, NUM_TIDS};
use crate::time::Nanos;

/// ath9k's `ATH_AIRTIME_QUANTUM`, µs. The macro's use is in xmit.c; its value is the one the
/// reference gives (§10.2, not seen in source).
pub const ATH_AIRTIME_QUANTUM_US: u32 = 300;

/// `IEEE80211_DEFAULT_AIRTIME_WEIGHT`, µs per refill.
pub const DEFAULT_AIRTIME_WEIGHT: u32 = 256;

/// `AIRTIME_ACTIVE_DURATION` (HZ / 10): a station counts as active this long after it last
/// had frames queued.
pub const AIRTIME_ACTIVE_DURATION: Nanos = Nanos::from_ms(100);

/// Which scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtfKind {
    /// ath9k, Linux 4.11 to 5.0.
    Ath9k,
    /// mac80211, Linux ≈6.0 and later.
    Mac80211,
}

/// The `airtime_flags` debugfs knobs (all on by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AirtimeParams {
    /// `AIRTIME_USE_TX`: charge TX airtime.
    pub use_tx: bool,
    /// `AIRTIME_USE_RX`: charge airtime of frames received from the station.
    pub use_rx: bool,
    /// ath9k `AIRTIME_USE_NEW_QUEUES`: the sparse-station new list.
    pub new_queues: bool,
    /// ath9k quantum, µs.
    pub quantum_us: u32,
}

impl Default for AirtimeParams {
    fn default() -> AirtimeParams {
        AirtimeParams { use_tx: true, use_rx: true, new_queues: true, quantum_us: ATH_AIRTIME_QUANTUM_US }
    }
}

impl AirtimeParams {
    /// `AIRTIME_ACTIVE`: with neither TX nor RX charged the schedulers fall back to round robin.
    fn accounting(&self) -> bool {
        self.use_tx || self.use_rx
    }
}

/// One station's airtime state (debugfs `stations/<sta>/airtime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StationAirtime {
    /// Deficit per AC, µs.
    pub deficit_us: [i32; NUM_ACS],
    /// Totals reported, µs (always counted, whatever the flags).
    pub tx_airtime_us: [u64; NUM_ACS],
    pub rx_airtime_us: [u64; NUM_ACS],
    /// mac80211 `airtime_weight` (ath9k: unused).
    pub weight: u32,
    /// mac80211 `last_active` per AC: when a TXQ of this AC was last scheduled with frames.
    pub last_active: [Option<Nanos>; NUM_ACS],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listed {
    No,
    New,
    Old,
}

/// Per AC lists of tins, with the tins' membership. Only heads are removed; capacity is
/// reserved up front so that no operation allocates.
struct AcLists {
    new: [VecDeque<TinId>; NUM_ACS],
    old: [VecDeque<TinId>; NUM_ACS],
    listed: Vec<Listed>,
}

impl AcLists {
    fn new(n_tins: usize) -> AcLists {
        let q = || std::array::from_fn(|_| VecDeque::with_capacity(n_tins));
        AcLists { new: q(), old: q(), listed: vec![Listed::No; n_tins] }
    }

    fn push(&mut self, tin: TinId, to: Listed, at_head: bool) {
        let ac = tin.ac().index();
        let list = if to == Listed::New { &mut self.new[ac] } else { &mut self.old[ac] };
        if at_head {
            list.push_front(tin);
        } else {
            list.push_back(tin);
        }
        self.listed[tin.index()] = to;
    }

    /// Remove the head of `from` (new or old list of `ac`).
    fn pop(&mut self, ac: usize, from: Listed) -> TinId {
        let list = if from == Listed::New { &mut self.new[ac] } else { &mut self.old[ac] };
        let t = list.pop_front().expect("pop from an empty list");
        self.listed[t.index()] = Listed::No;
        t
    }

    fn head(&self, ac: usize) -> Option<(Listed, TinId)> {
        match self.new[ac].front() {
            Some(&t) => Some((Listed::New, t)),
            None => self.old[ac].front().map(|&t| (Listed::Old, t)),
        }
    }
}

/// The airtime scheduler of one radio.
pub struct AirtimeScheduler {
    kind: AtfKind,
    params: AirtimeParams,
    stations: Vec<StationAirtime>,
    /// ath9k: `acq_new`/`acq_old`; mac80211: `active_txqs` (the `old` lists; `new` unused).
    lists: AcLists,
    /// mac80211 `schedule_round[ac]` (0: the PHY-wide AQL check failed, schedule nothing).
    round: [u32; NUM_ACS],
    /// mac80211 `txqi->schedule_round`.
    tin_round: Vec<u32>,
    /// Airtime groups, caps and minimum rates (mac80211 only; None: the kernel's scheduler).
    policy: Option<Box<Policy>>,
    /// The time of the last `schedule_start` (the policy's clock).
    now: Nanos,
}

impl AirtimeScheduler {
    pub fn new(kind: AtfKind, params: AirtimeParams, n_stations: usize) -> AirtimeScheduler {
        let n_tins = n_stations * NUM_TIDS;
        // ath9k starts each deficit at one quantum (`ath_tx_node_init`), mac80211 at the
        // weight (`sta_info_alloc`).
        let start = match kind {
            AtfKind::Ath9k => params.quantum_us as i32,
            AtfKind::Mac80211 => DEFAULT_AIRTIME_WEIGHT as i32,
        };
        let sta = StationAirtime {
            deficit_us: [start; NUM_ACS],
            tx_airtime_us: [0; NUM_ACS],
            rx_airtime_us: [0; NUM_ACS],
            weight: DEFAULT_AIRTIME_WEIGHT,
            last_active: [None; NUM_ACS],
        };
        AirtimeScheduler {
            kind,
            params,
            stations: vec![sta; n_stations],
            lists: AcLists::new(n_tins),
            round: [0; NUM_ACS],
            tin_round: vec![0; n_tins],
            policy: None,
            now: Nanos::ZERO,
        }
    }

    /// Give the mac80211 scheduler an airtime policy (groups, caps, minimum rates; see
    /// `policy.rs`). An inactive policy is not installed.
    pub fn set_policy(&mut self, p: &PolicyParams) {
        assert_eq!(self.kind, AtfKind::Mac80211, "airtime policies extend the mac80211 scheduler");
        if p.is_active() {
            self.policy = Some(Box::new(Policy::new(p, self.stations.len())));
        }
    }

    #[cfg(test)]
    pub fn kind(&self) -> AtfKind {
        self.kind
    }

    /// One station's airtime state (debugfs `stations/<sta>/airtime`).
    pub fn station(&self, sta: StationId) -> &StationAirtime {
        &self.stations[sta.0 as usize]
    }

    /// `iw … station set <MAC> airtime_weight <w>` (mac80211; must be > 0).
    pub fn set_weight(&mut self, sta: StationId, weight: u32) {
        assert!(weight > 0, "airtime weight must be positive (nl80211 rejects 0)");
        self.stations[sta.0 as usize].weight = weight;
    }

    /// Whether `tin` is on a scheduling list.
    #[inline]
    pub fn is_listed(&self, tin: TinId) -> bool {
        self.lists.listed[tin.index()] != Listed::No
    }

    /// Whether a scheduling pass on `ac` ([`Self::schedule_start`], then [`Self::next_tin`])
    /// would find nothing and change nothing: an ath9k scheduler with no tin listed on `ac`.
    /// (mac80211's round advances on every pass, so it never answers yes.)
    #[inline]
    pub fn nothing_listed(&self, ac: Ac) -> bool {
        self.kind == AtfKind::Ath9k && self.active_count(ac) == 0
    }

    /// Tins on the AC's lists (mac80211: the length of `active_txqs[ac]`).
    pub fn active_count(&self, ac: Ac) -> usize {
        self.lists.new[ac.index()].len() + self.lists.old[ac.index()].len()
    }

    /// `ieee80211_sta_deficit`: the deficit less the AQL pending airtime.
    fn sta_deficit(&self, sta: StationId, ac: Ac, aql: &Aql) -> i64 {
        self.stations[sta.0 as usize].deficit_us[ac.index()] as i64 - aql.pending(sta, ac) as i64
    }

    /// Frames were queued to `tin` (after `Fq::enqueue`): ath9k `ath_tx_queue_tid`, mac80211
    /// `ieee80211_schedule_txq`.
    #[inline]
    pub fn wake(&mut self, tin: TinId, now: Nanos, aql: &Aql) {
        match self.kind {
            AtfKind::Ath9k if self.is_listed(tin) => {}
            AtfKind::Ath9k => self.ath9k_queue_tid(tin),
            AtfKind::Mac80211 => self.schedule_txq(tin, true, now, aql),
        }
    }

    /// `__ath_tx_queue_tid`: a TID not yet listed joins the new list if the sparse-station
    /// boost is on and its station still has deficit, else the old list.
    fn ath9k_queue_tid(&mut self, tin: TinId) {
        if self.is_listed(tin) {
            return;
        }
        let positive = self.stations[tin.station().0 as usize].deficit_us[tin.ac().index()] > 0;
        let to = if self.params.new_queues && positive { Listed::New } else { Listed::Old };
        self.lists.push(tin, to, false);
    }

    /// `__ieee80211_schedule_txq` (also `ieee80211_return_txq`): put an unlisted TXQ on the
    /// active list if it has frames (`has_queue`), or if its station is in debt and was active
    /// within 100 ms (so that it pays the debt off before it leaves). With frames it goes to
    /// the head (ATF on), where `next_txq` only moves it back once its deficit is negative.
    fn schedule_txq(&mut self, tin: TinId, has_queue: bool, now: Nanos, aql: &Aql) {
        if self.is_listed(tin) {
            return;
        }
        let (sta, ac) = (tin.station(), tin.ac());
        let keep_active = self.sta_deficit(sta, ac, aql) < 0
            && self.stations[sta.0 as usize].last_active[ac.index()]
                .is_some_and(|t| now.saturating_sub(t) <= AIRTIME_ACTIVE_DURATION);
        if !(has_queue || keep_active) {
            return;
        }
        let at_head = has_queue && self.params.accounting();
        self.lists.push(tin, Listed::Old, at_head);
        if let Some(p) = self.policy.as_deref_mut() {
            if p.has_groups() {
                p.backlogged(tin, true);
            }
        }
        if has_queue {
            self.stations[sta.0 as usize].last_active[ac.index()] = Some(now);
        }
    }

    /// `ieee80211_txq_schedule_start` (mac80211) at `now`: open a scheduling round for `ac` if the
    /// PHY-wide AQL limit allows, else close it (`next_tin` returns nothing). ath9k: no-op.
    pub fn schedule_start(&mut self, ac: Ac, aql: &Aql, now: Nanos) {
        self.now = now;
        if self.kind == AtfKind::Ath9k {
            return;
        }
        let i = ac.index();
        if aql.ac_can_schedule(ac, self.active_count(ac)) {
            self.round[i] = self.round[i].wrapping_add(1).max(1);
        } else {
            self.round[i] = 0;
        }
    }

    /// The tin to serve next on `ac`, or `None`.
    ///
    /// ath9k (`ath_txq_schedule`): the caller builds one aggregate from it and calls again
    /// while its hardware queue has room; `has_queue` tells whether a tin has frames (empty
    /// tins leave the lists here). The tin stays at the head while its deficit is positive.
    ///
    /// mac80211 (`ieee80211_next_txq`): the tin is taken off the list; the caller dequeues
    /// from it (checking [`Aql::can_queue`] before each frame) and hands it back with
    /// [`AirtimeScheduler::return_tin`]. At most once per tin per round.
    pub fn next_tin(&mut self, ac: Ac, aql: &Aql, has_queue: impl FnMut(TinId) -> bool) -> Option<TinId> {
        match self.kind {
            AtfKind::Ath9k => self.ath9k_next(ac, has_queue),
            AtfKind::Mac80211 => self.mac80211_next(ac, aql, has_queue),
        }
    }

    fn ath9k_next(&mut self, ac: Ac, mut has_queue: impl FnMut(TinId) -> bool) -> Option<TinId> {
        let i = ac.index();
        let accounting = self.params.accounting();
        loop {
            let (from, tin) = self.lists.head(i)?;
            let deficit = &mut self.stations[tin.station().0 as usize].deficit_us[i];
            if accounting && *deficit <= 0 {
                // Deficit spent: one quantum more, and to the back of the old list.
                *deficit += self.params.quantum_us as i32;
                self.lists.pop(i, from);
                self.lists.push(tin, Listed::Old, false);
                continue;
            }
            if !has_queue(tin) {
                self.lists.pop(i, from);
                if from == Listed::New && !self.lists.old[i].is_empty() {
                    self.lists.push(tin, Listed::Old, false);
                }
                continue;
            }
            if !accounting {
                // Plain round robin between TIDs.
                self.lists.pop(i, from);
                self.lists.push(tin, Listed::Old, false);
            }
            return Some(tin);
        }
    }

    fn mac80211_next(&mut self, ac: Ac, aql: &Aql, has_queue: impl FnMut(TinId) -> bool) -> Option<TinId> {
        let i = ac.index();
        if self.round[i] == 0 {
            return None;
        }
        if self.policy.is_some() {
            if let Some(t) = self.min_rate_next(ac, aql, has_queue) {
                return Some(t);
            }
        }
        let mut head: Option<TinId> = None;
        let mut found_eligible = false;
        loop {
            let tin = *self.lists.old[i].front()?;
            if head == Some(tin) {
                // Once around the list: stop unless some TXQ passed the AQL check.
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            head.get_or_insert(tin);
            let sta = tin.station();
            let mut eligible = aql.can_queue(sta, ac);
            if eligible {
                if let Some(p) = self.policy.as_deref_mut() {
                    // Groups and caps: a TXQ whose group may not send is passed over like
                    // one over its AQL limit (and does not keep the walk going).
                    eligible = p.may_send(sta, ac, self.now);
                }
            }
            found_eligible |= eligible;
            if self.sta_deficit(sta, ac, aql) < 0 {
                let s = &mut self.stations[sta.0 as usize];
                s.deficit_us[i] += s.weight as i32;
                eligible = false;
            }
            if !eligible {
                self.lists.pop(i, Listed::Old);
                self.lists.push(tin, Listed::Old, false);
                continue;
            }
            if self.tin_round[tin.index()] == self.round[i] {
                return None;
            }
            self.lists.pop(i, Listed::Old);
            self.tin_round[tin.index()] = self.round[i];
            return Some(tin);
        }
    }

    /// Minimum rates: the first station (in index order) below its minimum with a TXQ on
    /// `ac`'s list that has frames and that AQL and this round allow is served ahead of the DRR walk, its airtime
    /// debt forgiven.
    fn min_rate_next(&mut self, ac: Ac, aql: &Aql, mut has_queue: impl FnMut(TinId) -> bool) -> Option<TinId> {
        let i = ac.index();
        let now = self.now;
        let p = self.policy.as_deref_mut()?;
        for k in 0..p.min_rate_stations().len() {
            let sta = p.min_rate_stations()[k];
            if !aql.can_queue(sta, ac) || !p.below_min_rate(sta, now) {
                continue;
            }
            let list = &self.lists.old[i];
            let Some(pos) = list
                .iter()
                .position(|&t| t.station() == sta && self.tin_round[t.index()] != self.round[i] && has_queue(t))
            else {
                continue;
            };
            let tin = self.lists.old[i].remove(pos).expect("a listed TXQ");
            self.lists.listed[tin.index()] = Listed::No;
            self.tin_round[tin.index()] = self.round[i];
            let d = &mut self.stations[sta.0 as usize].deficit_us[i];
            *d = (*d).max(0);
            return Some(tin);
        }
        None
    }

    /// mac80211 `ieee80211_return_txq`: hand back the tin `next_tin` gave, with whether it
    /// still has frames. ath9k: no-op (the tin never left its list).
    pub fn return_tin(&mut self, tin: TinId, has_queue: bool, now: Nanos, aql: &Aql) {
        if self.kind == AtfKind::Mac80211 {
            self.schedule_txq(tin, has_queue, now, aql);
            if !self.is_listed(tin) {
                if let Some(p) = self.policy.as_deref_mut() {
                    if p.has_groups() {
                        p.backlogged(tin, false);
                    }
                }
            }
        }
    }

    /// `ieee80211_sta_register_airtime` / ath9k's TX-status and RX accounting: `tx_us` of
    /// transmissions to (all attempts) and `rx_us` of frames from the station, for the AC of
    /// `tin`. Call at TX completion (and at RX). The totals always grow; the deficit is charged
    /// per the flags, in mac80211 only if the station was active within 100 ms; an ath9k TID
    /// left in debt is put back on the old list so that rotation repays it.
    pub fn report_airtime(&mut self, tin: TinId, tx_us: u32, rx_us: u32, now: Nanos) {
        let (sta, i) = (tin.station().0 as usize, tin.ac().index());
        let charge = if self.params.use_tx { tx_us } else { 0 } + if self.params.use_rx { rx_us } else { 0 };
        let s = &mut self.stations[sta];
        s.tx_airtime_us[i] += tx_us as u64;
        s.rx_airtime_us[i] += rx_us as u64;
        match self.kind {
            AtfKind::Ath9k => {
                if self.params.accounting() {
                    s.deficit_us[i] = s.deficit_us[i].saturating_sub(charge as i32);
                    if s.deficit_us[i] <= 0 {
                        self.ath9k_queue_tid(tin);
                    }
                }
            }
            AtfKind::Mac80211 => {
                let active = s.last_active[i].is_some_and(|t| now.saturating_sub(t) <= AIRTIME_ACTIVE_DURATION);
                if active {
                    s.deficit_us[i] = s.deficit_us[i].saturating_sub(charge as i32);
                }
            }
        }
    }

    /// TX status of an aggregate to `tin` whose estimate `built_us` was paid to the policy's
    /// caps when it was built ([`AirtimeScheduler::on_built`]): the groups' shares are charged
    /// the `air_us` of all its tries, the caps that plus `exchange_us` (SIFS and the responses)
    /// less what they paid. No-op without a policy.
    pub fn report_policy_airtime(&mut self, tin: TinId, air_us: u32, exchange_us: u32, built_us: u32, now: Nanos) {
        if let Some(p) = self.policy.as_deref_mut() {
            p.on_airtime(tin.station(), tin.ac(), air_us, air_us + exchange_us, built_us, now);
        }
    }

    /// An aggregate of `est_us` was built for `tin`: its capped groups pay for it now.
    pub fn on_built(&mut self, tin: TinId, est_us: u32, now: Nanos) {
        if let Some(p) = self.policy.as_deref_mut() {
            p.on_built(tin.station(), est_us, now);
        }
    }

    /// `bytes` of payload to `tin`'s station were acknowledged (minimum rates).
    pub fn on_delivered(&mut self, tin: TinId, bytes: u32, now: Nanos) {
        if let Some(p) = self.policy.as_deref_mut() {
            p.on_delivered(tin.station(), bytes, now);
        }
    }

    /// When a capped group with TXQs listed will next be allowed to send, if one is waiting for
    /// its balance at `now` (the driver arms a timer for it: a cap may leave the air idle).
    pub fn cap_wake(&self, now: Nanos) -> Option<Nanos> {
        self.policy.as_deref().and_then(|p| p.cap_wake(now))
    }
}

#[cfg(test)]
mod tests;
