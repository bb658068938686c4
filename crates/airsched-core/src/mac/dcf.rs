//! 802.11 DCF channel access (IEEE 802.11-2016 10.3), event-driven rather than slot-stepped.
//!
//! Semantics follow IEEE 802.11-2016 10.3 as ns-3-dev `src/wifi/model/channel-access-manager.cc`
//! implements it (validated there against Bianchi): after the medium turns idle a node waits its IFS (DIFS, EIFS after a frame it could
//! not decode, ACKTimeout + DIFS after its own failed frame), then counts its backoff down by one
//! per idle slot; a counter of k transmits k slots after the IFS ends. Counters freeze while the
//! medium is busy. A counter left at 0 with nothing to send stays 0, and a frame arriving then
//! while the medium has been idle for the IFS is sent at once (immediate access); a frame
//! arriving while the medium is busy with a 0 counter draws a new backoff (as ns-3 does).
//!
//! Instead of one event per slot, each idle period plans every node's transmission instant
//! `ifs_end + backoff * slot` and schedules one access event at the earliest; when the medium
//! turns busy the others' counters drop by the whole idle slots that elapsed. The two views are
//! equivalent because nothing but the counters changes during an idle period.
//!
//! Deviations (documented constants): the retry/drop decision of a collided frame is taken when
//! the medium turns idle rather than when its ACKTimeout expires (channel access still honours
//! the ACKTimeout); a beacon and AP data due in the same slot never collide internally, the beacon
//! goes first and the data keeps a zero counter.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[cfg(test)]
use crate::engine::{stream, StreamKind};
use crate::packet::PacketId;
use crate::time::Nanos;
use crate::words::words;

/// How a contender that does not transmit counts the slot in which another's transmission
/// starts (`[cell] backoff_countdown` in an 802.11n/ac/ax cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackoffCountdown {
    /// DCF (IEEE 802.11-2020 10.3.4.3): a counter drops at the end of each idle slot, so when
    /// another transmits `m` slots after the IFS the others have counted `m`. airsched's model
    /// so far, and every 802.11b cell's.
    SlotEnd,
    /// EDCA (IEEE 802.11-2020 10.23.2.5): at the AIFS slot boundary and each one after it,
    /// every EDCAF either transmits (counter 0) or decrements, so the contenders that do not
    /// transmit also count the boundary where another starts: `m + 1`. A counter left at 0
    /// transmits at the next AIFS boundary. ns-3 3.44 `ChannelAccessManager::UpdateBackoff`
    /// (the extra slot for a QosTxop).
    SlotBoundary,
}

words!(BackoffCountdown: "slot-end" => BackoffCountdown::SlotEnd, "slot-boundary" => BackoffCountdown::SlotBoundary);

/// What a contender's CW does when its aggregate exchanges fail `retry_limit` times in a row
/// (`[cell] cw_at_retry_limit` in an 802.11n/ac/ax cell). A lone frame (802.11b, and the
/// legacy path) is dropped at its retry limit and CW reset in either case ([`Dcf::on_failure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwAtRetryLimit {
    /// CW keeps doubling up to CWmax after every failed aggregate, however many in a row
    /// (airsched's model so far: the MPDUs carry their own retry limit, `mpdu_retry_limit`).
    Double,
    /// IEEE 802.11-2020 10.23.2.2: when the station retry counter of the access category
    /// (QSRC[AC], failed attempts since the last success) reaches the retry limit
    /// (dot11ShortRetryLimit, `[cell] retry_limit`, 7), CW is reset to CWmin instead of
    /// doubled. ns-3 3.44 does so when the A-MPDU's first MPDU reaches its retry limit
    /// (`HtFrameExchangeManager::MissedBlockAck` returns `resetCw`, and the PSDU is dropped);
    /// its `FrameRetryLimit` (7) counts retries, so there the reset comes after the 8th failed
    /// attempt (`retry_limit = 8` matches it).
    Reset,
}

words!(CwAtRetryLimit: "double" => CwAtRetryLimit::Double, "reset" => CwAtRetryLimit::Reset);

/// Timing and contention parameters of one cell.
#[derive(Clone, Copy, Debug)]
pub struct DcfParams {
    pub slot: Nanos,
    pub difs: Nanos,
    pub pifs: Nanos,
    pub ack_timeout: Nanos,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Attempts of one frame before it is dropped.
    pub retry_limit: u32,
    /// How the contenders that do not transmit count the slot where another starts.
    pub countdown: BackoffCountdown,
    /// What `retry_limit` failed aggregate exchanges in a row do to CW.
    pub cw_at_limit: CwAtRetryLimit,
}

impl DcfParams {
    /// 802.11b DSSS timing (slot 20 µs, SIFS 10 µs, DIFS 50 µs, PIFS 30 µs, ACKTimeout 222 µs)
    /// with these contention bounds and retry limit.
    pub fn dsss(cw_min: u32, cw_max: u32, retry_limit: u32) -> DcfParams {
        use crate::phy::dsss;
        DcfParams {
            slot: dsss::SLOT,
            difs: dsss::DIFS,
            pifs: dsss::PIFS,
            ack_timeout: dsss::ACK_TIMEOUT,
            cw_min,
            cw_max,
            retry_limit,
            countdown: BackoffCountdown::SlotEnd,
            cw_at_limit: CwAtRetryLimit::Double,
        }
    }
}

/// Channel-access state of one contender (the AP is node 0).
struct DcfNode {
    /// The frame the MAC holds (head of line), if any.
    frame: Option<PacketId>,
    /// Station index the held frame is to (AP) or from (station).
    frame_station: u32,
    /// Attempts made for the held frame.
    attempts: u32,
    /// The receiver already has the held frame (an attempt's ACK was lost): a retransmission
    /// that gets through is a duplicate the receiver discards.
    delivered: bool,
    cw: u32,
    /// This node's contention parameters: DIFS and the cell's CW bounds under DCF; under EDCA
    /// the AIFS and CW bounds of the access category of the frame it holds (`Dcf::set_edca`).
    aifs: Nanos,
    cw_min: u32,
    cw_max: u32,
    /// Backoff counter as it stands at `ifs_end`.
    backoff: u32,
    /// When this node's IFS after the last busy period ends.
    ifs_end: Nanos,
    /// The end of this node's NAV, set from a frame's Duration ([`Dcf::set_nav_from`],
    /// [`Dcf::set_nav_of`]): it outlasts the busy periods that end inside it (IEEE 802.11-2020
    /// 10.3.2.4, the NAV counts down apart from the physical carrier sense; ns-3 3.44
    /// `ChannelAccessManager::GetAccessGrantStart` counts the AIFS from the later of the last
    /// busy end and the NAV's end, which only a CF-End or an RTS's NAV reset shortens, neither
    /// of which these cells send).
    nav_end: Nanos,
    /// Planned transmission instant (valid while the medium is idle and `frame` is set).
    tx_at: Nanos,
    /// The node is part of the exchange in progress; its next frame waits for the exchange end.
    in_exchange: bool,
    /// MU EDCA with AIFSN 0: the backoff counter stays frozen until then (ZERO: never held).
    resume: Nanos,
    /// The station retry counter of an aggregate exchange (802.11-2020 10.23.2.2 QSRC[AC]):
    /// failed PPDUs since the last acknowledged one or the last reset at `retry_limit`.
    failures: u32,
    rng: Xoshiro256PlusPlus,
}

impl DcfNode {
    fn draw_backoff(&mut self) {
        self.backoff = self.rng.random_range(0..=self.cw);
    }

    /// After a failed attempt: CW = 2 (CW + 1) - 1, at most CWmax.
    fn double_cw(&mut self) {
        self.cw = (2 * (self.cw + 1) - 1).min(self.cw_max);
    }
}

/// The DCF's view of the channel: busy or idle, the planned access (its generation and
/// instant), who transmits in the current busy period, the beacon, and the NAV.
struct ChannelState {
    busy: bool,
    /// Generation of the planned access event; older events are stale.
    gen: u64,
    /// Instant of the planned access event (`Nanos(u64::MAX)` when none).
    next_access: Nanos,
    /// Nodes transmitting in the current busy period (reused buffer).
    transmitters: Vec<u32>,
    /// A beacon is part of the current busy period.
    beacon_in_air: bool,
    beacon_pending: bool,
    beacon_tx_at: Nanos,
    /// PCF: every node's NAV is set until this instant (a contention-free period); ZERO when
    /// no NAV is set. A node counts its backoff from the later of its IFS end and the NAV's
    /// end plus its AIFS (`Dcf::count_from`).
    nav_end: Nanos,
    /// Some node has been held by MU EDCA ([`Dcf::hold`]) in this run: only then does
    /// `Dcf::count_from` read the nodes' `resume` (a cell without MU EDCA pays nothing for it).
    held: bool,
}

/// The cell's channel-access manager (as ns-3's `ChannelAccessManager`): the MACs request
/// access for a frame ([`Dcf::load_frame`], [`Dcf::frame_arrived`]), are told who transmits
/// ([`Dcf::begin_access`], [`Dcf::transmitters`]), and notify the attempt's fate
/// ([`Dcf::on_success`], [`Dcf::on_failure`], [`Dcf::on_ppdu_end`]), the IFS after the busy
/// period ([`Dcf::set_ifs_after`]) and its end ([`Dcf::end_busy`]); its state is its own.
pub struct Dcf {
    params: DcfParams,
    nodes: Vec<DcfNode>,
    channel: ChannelState,
    /// The latest of the nodes' NAV ends: a busy period that ends after it needs no NAV look-up
    /// ([`Dcf::set_all_ifs_after`]).
    nav_latest: Nanos,
}

const NO_ACCESS: Nanos = Nanos(u64::MAX);

impl Dcf {
    /// `n_nodes` contenders with streams keyed by their index (tests and tools; the simulator
    /// keys each contender's stream by its device's name, [`Dcf::with_streams`]).
    #[cfg(test)]
    pub fn new(n_nodes: usize, params: DcfParams, seed: u64) -> Self {
        Self::with_streams(params, (0..n_nodes).map(|i| stream(seed, StreamKind::Backoff, i as u64)).collect())
    }

    /// One contender per backoff stream (the AP's first). Every contender starts with a drawn
    /// backoff and the medium idle since t = 0, as if each had just finished a transmission:
    /// saturated stations starting together do not all collide in the first slot.
    pub fn with_streams(params: DcfParams, rngs: Vec<Xoshiro256PlusPlus>) -> Self {
        let n_nodes = rngs.len();
        let nodes = rngs
            .into_iter()
            .map(|rng| {
                let mut n = DcfNode {
                    frame: None,
                    frame_station: 0,
                    attempts: 0,
                    delivered: false,
                    cw: params.cw_min,
                    aifs: params.difs,
                    cw_min: params.cw_min,
                    cw_max: params.cw_max,
                    backoff: 0,
                    ifs_end: params.difs,
                    nav_end: Nanos::ZERO,
                    tx_at: NO_ACCESS,
                    in_exchange: false,
                    resume: Nanos::ZERO,
                    failures: 0,
                    rng,
                };
                n.draw_backoff();
                n
            })
            .collect();
        Dcf {
            params,
            nodes,
            channel: ChannelState {
                busy: false,
                gen: 0,
                next_access: NO_ACCESS,
                transmitters: Vec::with_capacity(n_nodes + 1),
                beacon_in_air: false,
                beacon_pending: false,
                beacon_tx_at: NO_ACCESS,
                nav_end: Nanos::ZERO,
                held: false,
            },
            nav_latest: Nanos::ZERO,
        }
    }

    /// Where node `n`'s backoff counter stands as `backoff`: its IFS end, or, under a NAV
    /// (PCF), the NAV's end plus its AIFS if that is later; under MU EDCA's hold (`held`), not
    /// before the node's `resume`.
    #[inline]
    fn count_from(nav_end: Nanos, held: bool, node: &DcfNode) -> Nanos {
        let from = if nav_end == Nanos::ZERO { node.ifs_end } else { node.ifs_end.max(nav_end + node.aifs) };
        if held {
            from.max(node.resume)
        } else {
            from
        }
    }

    /// Planned instant of a node's transmission while the medium is idle.
    #[inline]
    fn plan(&self, n: usize, now: Nanos) -> Nanos {
        let node = &self.nodes[n];
        let t = Self::count_from(self.channel.nav_end, self.channel.held, node)
            + Nanos(self.params.slot.0 * node.backoff as u64);
        if t < now {
            now
        } else {
            t
        }
    }

    /// PCF: at a TBTT that starts a contention-free period every node sets its NAV until
    /// `until` (TBTT + CFPMaxDuration; IEEE 802.11-1999 9.3.2.2). An idle medium: each
    /// counter keeps the whole slots it has counted down by `now`, and every planned access
    /// is withdrawn and planned again after the NAV; returns the access to schedule, if any
    /// (a beacon already due keeps its PIFS plan). A busy medium has the counters frozen
    /// already; its end plans with the NAV.
    pub fn set_nav(&mut self, now: Nanos, until: Nanos) -> Option<(Nanos, u64)> {
        let slot = self.params.slot.0;
        let was = self.channel.nav_end;
        let held = self.channel.held;
        self.channel.nav_end = until;
        if self.channel.busy {
            return None;
        }
        for node in self.nodes.iter_mut() {
            let from = Self::count_from(was, held, node);
            if now > from && !node.in_exchange {
                let elapsed = ((now.0 - from.0) / slot).min(node.backoff as u64);
                node.backoff -= elapsed as u32;
                node.ifs_end = from + Nanos(elapsed * slot);
            }
        }
        self.plan_again(now)
    }

    /// The medium idle at `now`: every planned access is withdrawn (a new generation) and
    /// planned again; returns the access to schedule, if any.
    fn plan_again(&mut self, now: Nanos) -> Option<(Nanos, u64)> {
        self.channel.gen += 1;
        self.channel.next_access = NO_ACCESS;
        for node in self.nodes.iter_mut() {
            node.tx_at = NO_ACCESS;
        }
        let best = self.plan_all(now);
        if best == NO_ACCESS {
            None
        } else {
            self.propose(best)
        }
    }

    /// Plan, as of `now` with the medium idle, the transmission of every node holding a frame
    /// (outside an exchange) and the beacon if one is due; returns the earliest (`NO_ACCESS`
    /// when nothing is to be sent).
    fn plan_all(&mut self, now: Nanos) -> Nanos {
        let mut best = NO_ACCESS;
        for n in 0..self.nodes.len() {
            if self.nodes[n].frame.is_some() && !self.nodes[n].in_exchange {
                let t = self.plan(n, now);
                self.nodes[n].tx_at = t;
                best = best.min(t);
            }
        }
        if self.channel.beacon_pending {
            let t = self.beacon_plan(now);
            self.channel.beacon_tx_at = t;
            best = best.min(t);
        }
        best
    }

    /// PCF: the CF-End reset every NAV (or the CFP is over).
    pub fn clear_nav(&mut self) {
        self.channel.nav_end = Nanos::ZERO;
    }

    /// If `t` is earlier than the planned access, plan a new access there and return its
    /// (time, generation) for the caller to schedule.
    #[inline]
    fn propose(&mut self, t: Nanos) -> Option<(Nanos, u64)> {
        if t < self.channel.next_access {
            self.channel.gen += 1;
            self.channel.next_access = t;
            Some((t, self.channel.gen))
        } else {
            None
        }
    }

    /// Node `n` has just been given a frame (`frame` already set by the caller).
    /// `senses_idle`: during a busy period, node `n` itself senses the medium idle (it has just
    /// received the PPDU that ended and answers it SIFS later; a frame addressed to it does not
    /// set its NAV), so the frame takes no backoff (IEEE 802.11-2016 10.3.4.2 and 10.22.2.2 a:
    /// the backoff is invoked only when the medium is busy at the frame's arrival).
    pub fn frame_arrived(&mut self, n: usize, now: Nanos, senses_idle: bool) -> Option<(Nanos, u64)> {
        if self.channel.busy && self.nodes[n].backoff == 0 && !senses_idle {
            self.nodes[n].draw_backoff();
        }
        self.access_requested(n, now)
    }

    /// Node `n` (holding a frame) requests access with its counter as it stands, no backoff
    /// invoked: an idle medium plans its access now, a busy one at its end. ns-3 3.44's
    /// `ChannelAccessManager::RequestAccess` called directly (the multi-user scheduler's
    /// `AccessReqTimeout`), without `NeedBackoffUponAccess`: IEEE 802.11-2020 10.23.2.2 a)
    /// invokes the backoff for a frame's arrival (an MA-UNITDATA.request), not for this.
    pub fn access_requested(&mut self, n: usize, now: Nanos) -> Option<(Nanos, u64)> {
        if self.channel.busy {
            return None;
        }
        let t = self.plan(n, now);
        self.nodes[n].tx_at = t;
        self.propose(t)
    }

    /// A beacon becomes due: it waits PIFS after the AP's last busy period, no backoff.
    pub fn beacon_due(&mut self, now: Nanos) -> Option<(Nanos, u64)> {
        self.channel.beacon_pending = true;
        if self.channel.busy {
            return None;
        }
        let t = self.beacon_plan(now);
        self.channel.beacon_tx_at = t;
        self.propose(t)
    }

    #[inline]
    fn beacon_plan(&self, now: Nanos) -> Nanos {
        let p = &self.params;
        let t = self.nodes[0].ifs_end - self.nodes[0].aifs + p.pifs;
        if t < now {
            now
        } else {
            t
        }
    }

    /// An access event fires at `ta`. Returns false if it is stale. Otherwise the medium turns
    /// busy, [`Dcf::transmitters`] lists the nodes that transmit (the beacon, if any, is flagged
    /// by [`Dcf::beacon_in_air`] and the AP is then not listed), and every other node's counter
    /// is frozen.
    pub fn begin_access(&mut self, ta: Nanos, gen: u64) -> bool {
        if gen != self.channel.gen || self.channel.busy {
            return false;
        }
        let slot = self.params.slot.0;
        // EDCA: the others also count the boundary at which the transmission starts.
        let boundary = (self.params.countdown == BackoffCountdown::SlotBoundary) as u64;
        self.channel.busy = true;
        self.channel.next_access = NO_ACCESS;
        self.channel.transmitters.clear();
        self.channel.beacon_in_air = self.channel.beacon_pending && self.channel.beacon_tx_at == ta;
        if self.channel.beacon_in_air {
            self.channel.beacon_pending = false;
            self.channel.beacon_tx_at = NO_ACCESS;
        }
        let nav_end = self.channel.nav_end;
        let held = self.channel.held;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            let sends = node.frame.is_some()
                && !node.in_exchange
                && node.tx_at == ta
                && !(i == 0 && self.channel.beacon_in_air);
            let from = Self::count_from(nav_end, held, node);
            if sends {
                self.channel.transmitters.push(i as u32);
                node.in_exchange = true;
            } else if ta > from || (boundary == 1 && ta == from) {
                let elapsed = (ta.0 - from.0) / slot + boundary;
                node.backoff = node.backoff.saturating_sub(elapsed.min(u32::MAX as u64) as u32);
            }
            node.tx_at = NO_ACCESS;
        }
        debug_assert!(
            self.channel.beacon_in_air || !self.channel.transmitters.is_empty(),
            "an access event with no transmitter"
        );
        true
    }

    /// The transmitter `n` succeeded: reset CW, draw the post-backoff, release the frame.
    /// The node stays in the exchange (no new frame) until [`Dcf::end_busy`].
    pub fn on_success(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.cw = node.cw_min;
        node.attempts = 0;
        node.delivered = false;
        node.frame = None;
        node.draw_backoff();
    }

    /// The transmitter `n` failed. Returns the frame if it reached the retry limit and is
    /// dropped; otherwise doubles CW (up to CWmax) and keeps the frame for a retry.
    pub fn on_failure(&mut self, n: usize) -> Option<PacketId> {
        let p = self.params;
        let node = &mut self.nodes[n];
        let dropped = if node.attempts >= p.retry_limit {
            node.cw = node.cw_min;
            node.attempts = 0;
            node.delivered = false;
            node.frame.take()
        } else {
            node.double_cw();
            None
        };
        node.draw_backoff();
        dropped
    }

    /// The busy period ends at `te`. `ifs_end_of(n)` must already be stored by the caller
    /// through [`Dcf::set_ifs_end`]; this plans every node's next transmission and returns the
    /// access event to schedule, if any node has something to send.
    pub fn end_busy(&mut self, te: Nanos) -> Option<(Nanos, u64)> {
        self.channel.busy = false;
        self.channel.beacon_in_air = false;
        for &n in &self.channel.transmitters {
            self.nodes[n as usize].in_exchange = false;
        }
        let best = self.plan_all(te);
        if best == NO_ACCESS {
            None
        } else {
            self.propose(best)
        }
    }

    /// An aggregate exchange of node `n` ended (802.11n): a BlockAck resets CW, its absence
    /// doubles it (up to the AC's CWmax), or with [`CwAtRetryLimit::Reset`] resets it when this
    /// is the `retry_limit`-th failure in a row; either way the PPDU leaves the node, whose subframes
    /// the caller has already completed or queued for retry, and a new backoff is drawn.
    pub fn on_ppdu_end(&mut self, n: usize, acknowledged: bool) {
        let p = self.params;
        let node = &mut self.nodes[n];
        if acknowledged {
            node.cw = node.cw_min;
            node.failures = 0;
        } else {
            node.failures += 1;
            if p.cw_at_limit == CwAtRetryLimit::Reset && node.failures >= p.retry_limit {
                node.cw = node.cw_min;
                node.failures = 0;
            } else {
                node.double_cw();
            }
        }
        node.attempts = 0;
        node.delivered = false;
        node.frame = None;
        node.draw_backoff();
    }

    /// Contender `n`'s CW returns to CWmin and its run of failures ends, without ending its
    /// exchange (a BlockAck received within a TXOP that a later failure ends: ns-3 3.44
    /// `HtFrameExchangeManager::ReceiveMpdu` calls `ResetCw`, then `TransmissionFailed` doubles
    /// it).
    pub fn reset_cw(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.cw = node.cw_min;
        node.failures = 0;
    }

    /// EDCA internal collision: contender `n` (an access category of a node whose higher
    /// category transmits in the same slot) doubles its CW and draws a new backoff as after a
    /// failed attempt, keeps its frame, and leaves the exchange at once.
    pub fn internal_collision(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.double_cw();
        node.in_exchange = false;
        node.draw_backoff();
    }

    /// EDCA: node `n` contends with these AIFS and CW bounds from now on (the AC of its next
    /// frame). A CW outside the new bounds is clamped.
    pub fn set_edca(&mut self, n: usize, aifs: Nanos, cw_min: u32, cw_max: u32) {
        let node = &mut self.nodes[n];
        if node.aifs == aifs && node.cw_min == cw_min && node.cw_max == cw_max {
            return;
        }
        // Keep the IFS end consistent with the new AIFS (it was computed with the old one).
        node.ifs_end = node.ifs_end - node.aifs + aifs;
        node.aifs = aifs;
        node.cw_min = cw_min;
        node.cw_max = cw_max;
        node.cw = node.cw.clamp(cw_min, cw_max);
        if node.backoff > node.cw {
            node.draw_backoff();
        }
    }

    /// MU EDCA with AIFSN 0 (802.11ax-2021 26.2.7): node `n` does not count its backoff down
    /// before `until`; its counter stays as it is and resumes then (ns-3 3.44's
    /// `ChannelAccessManager::DisableEdcaFor`). Called while the medium is busy (the exchange
    /// whose acknowledgement started the MU EDCA timer), so the next plan sees it.
    pub fn hold(&mut self, n: usize, until: Nanos) {
        debug_assert!(self.channel.busy, "held during a busy period");
        self.nodes[n].resume = until;
        self.channel.held = true;
    }

    /// [`Dcf::set_edca`] at `now`, medium busy or idle: an idle medium's planned accesses are
    /// withdrawn and planned again with the new parameters (ns-3 reads a QosTxop's AIFSN and CW
    /// bounds whenever it computes a backoff's end); returns the access to schedule, if any.
    pub fn set_edca_now(
        &mut self,
        n: usize,
        now: Nanos,
        aifs: Nanos,
        cw_min: u32,
        cw_max: u32,
    ) -> Option<(Nanos, u64)> {
        self.set_edca(n, aifs, cw_min, cw_max);
        if self.channel.busy {
            return None;
        }
        self.plan_again(now)
    }

    /// Node `n`'s IFS after the busy period ends at `t`.
    #[inline]
    #[cfg(test)]
    pub fn set_ifs_end(&mut self, n: usize, t: Nanos) {
        self.nodes[n].ifs_end = t;
    }

    /// Node `n`'s IFS ends its own AIFS after `t` (DIFS under DCF, the AIFS of its access
    /// category under EDCA), or after its NAV's end if that is later.
    #[inline]
    pub fn set_ifs_after(&mut self, n: usize, t: Nanos) {
        let node = &mut self.nodes[n];
        node.ifs_end = t.max(node.nav_end) + node.aifs;
    }

    /// Every node's IFS ends its own AIFS after `t`, or after its NAV's end if that is later.
    pub fn set_all_ifs_after(&mut self, t: Nanos) {
        if t >= self.nav_latest {
            for node in self.nodes.iter_mut() {
                node.ifs_end = t + node.aifs;
            }
        } else {
            for node in self.nodes.iter_mut() {
                node.ifs_end = t.max(node.nav_end) + node.aifs;
            }
        }
    }

    /// Every contender from index `first` on has set its NAV until `until` from a frame's
    /// Duration field (IEEE 802.11-2020 10.3.2.4), at the end of the busy period that carried
    /// it: its IFS ends no earlier than its AIFS after `until`.
    pub fn set_nav_from(&mut self, first: usize, until: Nanos) {
        for n in first..self.nodes.len() {
            self.set_nav_of(n, until);
        }
    }

    /// Contender `n` alone has set its NAV until `until` ([`Dcf::set_nav_from`] for one).
    pub fn set_nav_of(&mut self, n: usize, until: Nanos) {
        let node = &mut self.nodes[n];
        node.ifs_end = node.ifs_end.max(until + node.aifs);
        node.nav_end = node.nav_end.max(until);
        self.nav_latest = self.nav_latest.max(until);
    }

    /// Contender `n` alone defers until its AIFS after `t`, if that is later than its IFS end:
    /// a NAV only it set (a frame only some contenders decoded, IEEE 802.11-2020 10.3.2.4) or
    /// an EIFS only it takes (a PPDU whose preamble it detected and whose payload it lost,
    /// 10.3.2.3.7). Called at the end of the busy period, after [`Dcf::set_all_ifs_after`].
    pub fn defer_after(&mut self, n: usize, t: Nanos) {
        let node = &mut self.nodes[n];
        node.ifs_end = node.ifs_end.max(t + node.aifs);
    }

    /// The cell's timing and contention parameters.
    #[inline]
    pub fn params(&self) -> &DcfParams {
        &self.params
    }

    /// How many contenders there are (WiFi nodes under DCF; node × access category under EDCA).
    #[inline]
    pub fn contenders(&self) -> usize {
        self.nodes.len()
    }

    /// A beacon is on the air in the current busy period (first among its frames).
    #[inline]
    pub fn beacon_in_air(&self) -> bool {
        self.channel.beacon_in_air
    }

    /// The contenders transmitting in the current busy period (not the beacon), in contender
    /// order.
    #[inline]
    pub fn transmitters(&self) -> &[u32] {
        &self.channel.transmitters
    }

    /// Lend the transmitters of the busy period that ended (the buffer is reused: hand it back
    /// with [`Dcf::return_transmitters`]).
    #[inline]
    pub fn take_transmitters(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.channel.transmitters)
    }

    /// The buffer [`Dcf::take_transmitters`] lent.
    #[inline]
    pub fn return_transmitters(&mut self, transmitters: Vec<u32>) {
        self.channel.transmitters = transmitters;
    }

    /// EDCA internal collisions among the transmitters (in contender order, so that the access
    /// categories of one node are adjacent, the highest first): of several contenders for which
    /// `same_node` holds, the first transmits and the others leave the busy period as after
    /// [`Dcf::internal_collision`].
    pub fn resolve_internal_collisions(&mut self, same_node: impl Fn(u32, u32) -> bool) {
        if self.channel.transmitters.len() < 2 {
            return;
        }
        let mut i = 1;
        while i < self.channel.transmitters.len() {
            let t = &self.channel.transmitters;
            if same_node(t[i], t[i - 1]) {
                let loser = self.channel.transmitters.remove(i) as usize;
                self.internal_collision(loser);
            } else {
                i += 1;
            }
        }
    }

    /// Node `n`'s MAC can take a new frame: it holds none and is not in the exchange on the air.
    #[inline]
    pub fn can_take_frame(&self, n: usize) -> bool {
        self.nodes[n].frame.is_none() && !self.nodes[n].in_exchange
    }

    /// Node `n` takes `pkt`, to or from station `station`, as its head-of-line frame, not yet
    /// attempted. It contends for it from [`Dcf::frame_arrived`] (or the next
    /// [`Dcf::end_busy`]).
    #[inline]
    pub fn load_frame(&mut self, n: usize, pkt: PacketId, station: u32) {
        let node = &mut self.nodes[n];
        node.frame = Some(pkt);
        node.frame_station = station;
        node.attempts = 0;
        node.delivered = false;
    }

    /// Node `n` gives up its frame without a transmission (uplink OFDMA sent its MPDUs in a
    /// TB PPDU): it stops contending, its backoff counter stays.
    #[inline]
    pub fn unload_frame(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        node.frame = None;
        node.attempts = 0;
        node.delivered = false;
        node.tx_at = NO_ACCESS;
    }

    /// Node `n` is in the exchange on the air.
    #[inline]
    pub fn in_exchange(&self, n: usize) -> bool {
        self.nodes[n].in_exchange
    }

    /// The frame node `n` holds, if any.
    #[inline]
    pub fn frame(&self, n: usize) -> Option<PacketId> {
        self.nodes[n].frame
    }

    /// The station node `n`'s frame is to (from the AP) or from (a station).
    #[inline]
    pub fn frame_station(&self, n: usize) -> u32 {
        self.nodes[n].frame_station
    }

    /// Attempts made so far for node `n`'s frame.
    #[inline]
    pub fn attempts(&self, n: usize) -> u32 {
        self.nodes[n].attempts
    }

    /// Node `n` sends its frame once more; returns the attempt's number (1 for the first).
    #[inline]
    pub fn start_attempt(&mut self, n: usize) -> u32 {
        let node = &mut self.nodes[n];
        node.attempts += 1;
        node.attempts
    }

    /// The receiver already has node `n`'s frame (an earlier attempt's ACK was lost).
    #[inline]
    pub fn delivered(&self, n: usize) -> bool {
        self.nodes[n].delivered
    }

    /// The receiver has node `n`'s frame now; the sender keeps it until it is acknowledged.
    #[inline]
    pub fn mark_delivered(&mut self, n: usize) {
        self.nodes[n].delivered = true;
    }

    /// Node `n`'s frame has had its last attempt (the retry limit).
    #[inline]
    pub fn at_retry_limit(&self, n: usize) -> bool {
        self.nodes[n].attempts >= self.params.retry_limit
    }

    /// PCF: node `n`'s frame leaves the MAC (acknowledged, or dropped at the retry limit) in a
    /// contention-free period: CW resets but no backoff is drawn (the DCF backoff procedure is
    /// not invoked in a CFP). Returns the frame and whether the receiver had it already.
    pub fn release_in_cfp(&mut self, n: usize) -> (PacketId, bool) {
        let node = &mut self.nodes[n];
        let pkt = node.frame.take().expect("the sender holds its frame");
        let delivered = node.delivered;
        node.attempts = 0;
        node.delivered = false;
        node.cw = node.cw_min;
        (pkt, delivered)
    }

    /// The frames the contenders hold, for the conservation check: `count` for each one in
    /// flight; returns how many are senders' copies of frames the receiver already has.
    pub fn for_each_held(&self, mut count: impl FnMut(PacketId)) -> u64 {
        let mut copies = 0;
        for node in &self.nodes {
            match node.frame {
                Some(_) if node.delivered => copies += 1,
                Some(p) => count(p),
                None => {}
            }
        }
        copies
    }

    /// Test support: node `n`'s IFS end.
    #[cfg(test)]
    pub(crate) fn ifs_end(&self, n: usize) -> Nanos {
        self.nodes[n].ifs_end
    }

    /// Test support: node `n`'s backoff counter, CW, CWmin and AIFS.
    #[cfg(test)]
    pub(crate) fn contention(&self, n: usize) -> (u32, u32, u32, Nanos) {
        let node = &self.nodes[n];
        (node.backoff, node.cw, node.cw_min, node.aifs)
    }

    /// Test support: set node `n`'s backoff counter.
    #[cfg(test)]
    pub(crate) fn set_backoff(&mut self, n: usize, backoff: u32) {
        self.nodes[n].backoff = backoff;
    }

    /// Test support: plan an access of `nodes` (each with a zero counter) at `t`, superseding
    /// the planned one; returns the generation of the access event to schedule.
    #[cfg(test)]
    pub(crate) fn force_access(&mut self, nodes: &[usize], t: Nanos) -> u64 {
        for &n in nodes {
            self.nodes[n].backoff = 0;
            self.nodes[n].tx_at = t;
        }
        self.channel.next_access = t;
        self.channel.gen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DcfParams {
        DcfParams::dsss(31, 1023, 7)
    }

    #[test]
    fn counter_k_transmits_k_slots_after_difs_and_others_freeze() {
        let mut d = Dcf::new(3, params(), 1);
        d.nodes[1].backoff = 3;
        d.nodes[2].backoff = 5;
        d.nodes[1].frame = Some(PacketId(0));
        d.nodes[2].frame = Some(PacketId(1));
        let (t1, _) = d.frame_arrived(1, Nanos(0), false).unwrap();
        assert_eq!(t1, Nanos::from_us(50 + 3 * 20));
        let (t, gen) = d.frame_arrived(2, Nanos(0), false).map_or((t1, d.channel.gen), |x| x);
        assert_eq!(t, t1, "the later node does not move the planned access");
        assert!(d.begin_access(t1, gen));
        assert_eq!(d.channel.transmitters, vec![1]);
        assert_eq!(d.nodes[2].backoff, 2, "5 - 3 elapsed idle slots, frozen >= 1");
    }

    /// EDCA's countdown (`backoff_countdown = "slot-boundary"`): the counter that does not
    /// transmit also counts the boundary at which another starts, one slot more than DCF's;
    /// a counter equal to the winner's still collides, and one a slot above it is left at 0
    /// and goes at the next AIFS boundary.
    #[test]
    fn at_slot_boundaries_the_others_count_the_slot_where_a_transmission_starts() {
        let p = DcfParams { countdown: BackoffCountdown::SlotBoundary, ..params() };
        let mut d = Dcf::new(4, p, 1);
        for (n, k) in [(1, 3), (2, 5), (3, 4)] {
            d.nodes[n].backoff = k;
            d.nodes[n].frame = Some(PacketId(n as u32));
        }
        let mut planned = None;
        for n in 1..4 {
            planned = d.frame_arrived(n, Nanos(0), false).or(planned);
        }
        let (t, gen) = planned.unwrap();
        assert_eq!(t, Nanos::from_us(50 + 3 * 20));
        assert!(d.begin_access(t, gen));
        assert_eq!(d.channel.transmitters, vec![1]);
        assert_eq!((d.nodes[2].backoff, d.nodes[3].backoff), (1, 0), "5 - 4 and 4 - 4: the start's boundary counts");
        // A winner at the IFS boundary itself (k = 0): the others count that boundary too.
        let mut d = Dcf::new(3, p, 1);
        d.nodes[1].backoff = 0;
        d.nodes[2].backoff = 2;
        d.nodes[1].frame = Some(PacketId(1));
        let (t, gen) = d.frame_arrived(1, Nanos(0), false).unwrap();
        assert_eq!(t, Nanos::from_us(50));
        assert!(d.begin_access(t, gen));
        assert_eq!(d.nodes[2].backoff, 1);
    }

    #[test]
    fn equal_counters_collide_and_cw_doubles_to_cwmax() {
        let mut d = Dcf::new(3, params(), 7);
        for n in [1, 2] {
            d.nodes[n].backoff = 4;
            d.nodes[n].frame = Some(PacketId(n as u32));
        }
        d.frame_arrived(1, Nanos(0), false);
        d.frame_arrived(2, Nanos(0), false);
        let (ta, gen) = (d.channel.next_access, d.channel.gen);
        assert!(d.begin_access(ta, gen));
        assert_eq!(d.channel.transmitters, vec![1, 2]);
        let mut cws = vec![];
        for _ in 0..6 {
            d.nodes[1].attempts += 1;
            assert_eq!(d.on_failure(1), None);
            cws.push(d.nodes[1].cw);
        }
        assert_eq!(cws, vec![63, 127, 255, 511, 1023, 1023]);
        d.nodes[1].attempts += 1;
        assert_eq!(d.on_failure(1), Some(PacketId(1)), "7th failed attempt drops the frame");
        assert_eq!(d.nodes[1].cw, 31, "CW resets after a drop");
        assert!(d.nodes[1].backoff <= 31);
    }

    #[test]
    fn immediate_access_after_an_idle_difs_and_stale_events_are_ignored() {
        let mut d = Dcf::new(2, params(), 3);
        d.nodes[1].backoff = 0;
        d.nodes[1].frame = Some(PacketId(0));
        let now = Nanos::from_ms(10);
        let (t, gen) = d.frame_arrived(1, now, false).unwrap();
        assert_eq!(t, now, "idle for longer than DIFS with a zero counter: send at once");
        assert!(!d.begin_access(t, gen - 1), "stale generation");
        assert!(d.begin_access(t, gen));
        assert!(!d.begin_access(t, gen), "already busy");
    }

    #[test]
    fn a_request_as_is_draws_nothing_and_a_nav_defers_the_others() {
        let p = params();
        let mut d = Dcf::new(3, p, 5);
        let te = Nanos::from_ms(1);
        // Busy medium, counters at 0: the request keeps the counter (a frame's arrival draws).
        d.channel.busy = true;
        for n in [0, 1] {
            d.nodes[n].backoff = 0;
            d.nodes[n].frame = Some(PacketId(n as u32));
        }
        assert_eq!(d.access_requested(0, te - Nanos(1)), None);
        assert_eq!(d.nodes[0].backoff, 0, "no backoff invoked at the request");
        // Nodes 1 and 2 set a NAV 50 us past the busy end; node 0 (the NAV's sender) does not.
        d.set_all_ifs_after(te);
        d.set_nav_from(1, te + Nanos::from_us(50));
        assert_eq!(d.nodes[0].ifs_end, te + p.difs);
        assert_eq!(d.nodes[1].ifs_end, te + Nanos::from_us(50) + p.difs);
        assert_eq!(d.nodes[2].ifs_end, te + Nanos::from_us(50) + p.difs);
        // An earlier NAV does not shorten an IFS.
        d.set_nav_from(1, te - Nanos::from_us(50));
        assert_eq!(d.nodes[1].ifs_end, te + Nanos::from_us(50) + p.difs);
        // One contender alone defers (a NAV or an EIFS the others did not take), never earlier.
        d.defer_after(2, te + Nanos::from_us(60));
        assert_eq!(d.nodes[1].ifs_end, te + Nanos::from_us(50) + p.difs);
        assert_eq!(d.nodes[2].ifs_end, te + Nanos::from_us(60) + p.difs);
        d.defer_after(2, te);
        assert_eq!(d.nodes[2].ifs_end, te + Nanos::from_us(60) + p.difs);
        let (t, _) = d.end_busy(te).unwrap();
        assert_eq!(t, te + p.difs, "the request wins at the busy end plus its IFS");
    }

    #[test]
    fn a_nav_outlasts_the_busy_periods_that_end_inside_it() {
        let p = params();
        let mut d = Dcf::new(3, p, 5);
        let te = Nanos::from_ms(1);
        let nav = te + Nanos::from_us(500);
        d.set_all_ifs_after(te);
        d.set_nav_of(2, nav);
        assert_eq!(d.nodes[2].ifs_end, nav + p.difs);
        // Another PPDU ends inside the NAV: node 2 still waits for the NAV's end, the others
        // count from the busy end.
        let t2 = te + Nanos::from_us(200);
        d.set_all_ifs_after(t2);
        assert_eq!(d.nodes[2].ifs_end, nav + p.difs);
        assert_eq!(d.nodes[1].ifs_end, t2 + p.difs);
        d.set_ifs_after(2, t2);
        assert_eq!(d.nodes[2].ifs_end, nav + p.difs);
        // A NAV for every contender from index 1 on (a frame all of them decoded).
        let nav2 = t2 + Nanos::from_us(100);
        d.set_nav_from(1, nav2);
        d.set_all_ifs_after(t2 + Nanos::from_us(50));
        assert_eq!(d.nodes[0].ifs_end, t2 + Nanos::from_us(50) + p.difs);
        assert_eq!(d.nodes[1].ifs_end, nav2 + p.difs);
        assert_eq!(d.nodes[2].ifs_end, nav + p.difs, "the later NAV holds");
        // A busy period that ends after every NAV: AIFS from its end.
        let t3 = nav + Nanos::from_us(100);
        d.set_all_ifs_after(t3);
        assert!((0..3).all(|n| d.nodes[n].ifs_end == t3 + p.difs));
    }

    #[test]
    fn busy_arrival_with_zero_counter_draws_a_backoff() {
        // Find a seed whose first redraw is non-zero, then check it is used.
        let mut d = Dcf::new(2, params(), 11);
        d.channel.busy = true;
        d.nodes[1].backoff = 0;
        d.nodes[1].frame = Some(PacketId(0));
        assert_eq!(d.frame_arrived(1, Nanos(5), false), None);
        let b = d.nodes[1].backoff;
        d.set_ifs_end(1, Nanos::from_us(1000));
        d.set_ifs_end(0, Nanos::from_us(1000));
        let (t, _) = d.end_busy(Nanos::from_us(950)).unwrap();
        assert_eq!(t, Nanos::from_us(1000 + 20 * b as u64));
    }

    #[test]
    fn the_receiver_of_the_ppdu_that_ended_takes_no_backoff() {
        // 10.3.4.2 / 10.22.2.2 a): the backoff is invoked only if the medium is busy as the
        // node itself senses it; the receiver of the PPDU that just ended senses it idle, so a
        // frame queued then (a reply) goes out one IFS after its own ACK, with no slot counted.
        let mut d = Dcf::new(2, params(), 11);
        d.channel.busy = true;
        d.nodes[1].backoff = 0;
        d.nodes[1].frame = Some(PacketId(0));
        assert_eq!(d.frame_arrived(1, Nanos(5), true), None, "still busy: no access event yet");
        assert_eq!(d.nodes[1].backoff, 0, "no backoff drawn");
        d.set_ifs_end(1, Nanos::from_us(1000));
        d.set_ifs_end(0, Nanos::from_us(1000));
        let (t, _) = d.end_busy(Nanos::from_us(950)).unwrap();
        assert_eq!(t, Nanos::from_us(1000), "sent when its IFS ends");
        // A counter still running (a post-backoff) keeps running: nothing is redrawn.
        let mut d = Dcf::new(2, params(), 11);
        d.channel.busy = true;
        d.nodes[1].backoff = 3;
        d.nodes[1].frame = Some(PacketId(0));
        d.frame_arrived(1, Nanos(5), true);
        assert_eq!(d.nodes[1].backoff, 3);
    }

    #[test]
    fn edca_parameters_per_node_and_the_ppdu_end_rule() {
        // AC_BE at 5 GHz: AIFS 43 us, CW 15..1023; AC_VO: AIFS 34 us, CW 3..7.
        let mut d = Dcf::new(2, params(), 5);
        d.set_edca(1, Nanos::from_us(43), 15, 1023);
        d.set_ifs_end(1, Nanos::from_us(1043));
        d.set_edca(1, Nanos::from_us(34), 3, 7);
        assert_eq!(d.nodes[1].ifs_end, Nanos::from_us(1034), "the IFS end follows the new AIFS");
        assert!(d.nodes[1].cw >= 3 && d.nodes[1].cw <= 7 && d.nodes[1].backoff <= 7);
        d.nodes[1].frame = Some(PacketId(0));
        let mut cws = vec![];
        for _ in 0..3 {
            d.on_ppdu_end(1, false);
            cws.push(d.nodes[1].cw);
            assert_eq!(d.nodes[1].frame, None, "the aggregate leaves the MAC either way");
            assert!(d.nodes[1].backoff <= d.nodes[1].cw);
        }
        assert_eq!(cws, vec![7, 7, 7], "no BlockAck doubles CW up to the AC's CWmax");
        d.on_ppdu_end(1, true);
        assert_eq!(d.nodes[1].cw, 3, "a BlockAck resets CW to the AC's CWmin");
        // The beacon waits PIFS after the AP's last busy period whatever the AP's AIFS.
        d.set_edca(0, Nanos::from_us(43), 15, 1023);
        d.set_ifs_end(0, Nanos::from_us(2043));
        let (t, _) = d.beacon_due(Nanos::from_us(2000)).unwrap();
        assert_eq!(t, Nanos::from_us(2000 + 30), "PIFS (SIFS 10 + slot 20 in this 802.11b table)");
    }

    /// `cw_at_retry_limit`: AC_BE (CW 15..1023) with the retry limit 7. Doubling, the 7th
    /// failed aggregate in a row leaves CW at 1023 and the 8th too; with "reset" (IEEE
    /// 802.11-2020 10.23.2.2) the 7th resets it to 15 and the count starts again, and a
    /// BlockAck in between restarts the count.
    #[test]
    fn the_retry_limit_resets_cw_only_when_the_cell_says_so() {
        let run = |rule: CwAtRetryLimit, acked_at: Option<usize>| {
            let mut d = Dcf::new(2, DcfParams { cw_at_limit: rule, ..params() }, 5);
            d.set_edca(1, Nanos::from_us(43), 15, 1023);
            d.nodes[1].cw = 15;
            (0..9)
                .map(|i| {
                    d.on_ppdu_end(1, acked_at == Some(i));
                    d.nodes[1].cw
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(CwAtRetryLimit::Double, None), [31, 63, 127, 255, 511, 1023, 1023, 1023, 1023]);
        assert_eq!(run(CwAtRetryLimit::Reset, None), [31, 63, 127, 255, 511, 1023, 15, 31, 63]);
        assert_eq!(run(CwAtRetryLimit::Reset, Some(2)), [31, 63, 15, 31, 63, 127, 255, 511, 1023]);
    }

    /// PCF's NAV (IEEE 802.11-1999 9.3.2.2): set at a TBTT, it withdraws the planned access;
    /// each counter keeps the idle slots it had counted down and resumes DIFS after the NAV.
    #[test]
    fn a_nav_holds_every_node_until_its_end_and_keeps_the_slots_counted() {
        let mut d = Dcf::new(2, params(), 3);
        d.nodes[1].backoff = 10;
        d.nodes[1].frame = Some(PacketId(0));
        let (t, _) = d.frame_arrived(1, Nanos(0), false).unwrap();
        assert_eq!(t, Nanos::from_us(50 + 10 * 20));
        // At 130 µs, 4 idle slots after DIFS have passed: 6 remain, counted after the NAV.
        let (t, gen) = d.set_nav(Nanos::from_us(130), Nanos::from_us(10_000)).unwrap();
        assert_eq!(d.nodes[1].backoff, 6);
        assert_eq!(t, Nanos::from_us(10_000 + 50 + 6 * 20));
        assert_eq!(d.nodes[1].tx_at, t);
        // The old plan is stale.
        assert!(!d.begin_access(Nanos::from_us(250), gen - 1));
        // A frame arriving under the NAV waits for it too.
        d.nodes[0].frame = Some(PacketId(1));
        d.nodes[0].backoff = 0;
        let (t0, _) = d.frame_arrived(0, Nanos::from_us(500), false).unwrap();
        assert_eq!(t0, Nanos::from_us(10_050), "DIFS after the NAV, with a zero counter");
        // Cleared (CF-End), the counters run from the IFS again.
        d.clear_nav();
        assert_eq!(d.plan(1, Nanos::from_us(600)), Nanos::from_us(130 + 6 * 20).max(Nanos::from_us(600)));
    }

    /// MU EDCA with AIFSN 0 (802.11ax-2021 26.2.7, ns-3's `DisableEdcaFor`): a held node's
    /// counter counts no slot before the timer ends, even while others transmit, and resumes
    /// from where it stood; a node whose MU EDCA parameters end while the medium is idle is
    /// planned again at once with its own AIFS.
    #[test]
    fn mu_edca_hold_freezes_the_counter_until_the_timer_ends() {
        // 802.11b table of these tests: slot 20 us.
        let mut d = Dcf::new(3, params(), 9);
        d.channel.busy = true;
        d.nodes[1].backoff = 4;
        d.nodes[1].frame = Some(PacketId(0));
        d.nodes[2].backoff = 2;
        d.nodes[2].frame = Some(PacketId(1));
        d.hold(1, Nanos::from_us(9000));
        for n in 0..3 {
            d.set_ifs_end(n, Nanos::from_us(1050));
        }
        let (t, gen) = d.end_busy(Nanos::from_us(1000)).unwrap();
        assert_eq!(t, Nanos::from_us(1050 + 2 * 20), "node 2 first");
        assert!(d.begin_access(t, gen));
        assert_eq!(d.transmitters(), &[2]);
        assert_eq!(d.nodes[1].backoff, 4, "no slot counted while held");
        d.on_ppdu_end(2, true);
        for n in 0..3 {
            d.set_ifs_end(n, Nanos::from_us(3050));
        }
        d.nodes[2].frame = None;
        let (t, _) = d.end_busy(Nanos::from_us(3000)).unwrap();
        assert_eq!(t, Nanos::from_us(9000 + 4 * 20), "resumes at the timer's end with its 4 slots");
        // Unheld (the timer ran out before this busy period): AIFS, then its slots.
        let mut d = Dcf::new(2, params(), 9);
        d.channel.busy = true;
        d.nodes[1].backoff = 4;
        d.nodes[1].frame = Some(PacketId(0));
        d.hold(1, Nanos::from_us(900));
        d.set_ifs_end(1, Nanos::from_us(1050));
        d.set_ifs_end(0, Nanos::from_us(1050));
        let (t, _) = d.end_busy(Nanos::from_us(1000)).unwrap();
        assert_eq!(t, Nanos::from_us(1050 + 4 * 20));
        // MU EDCA AIFSN 8 ends while idle: the plan follows the normal AIFS (50 us) again.
        let mut d = Dcf::new(2, params(), 9);
        d.set_edca(1, Nanos::from_us(10 + 8 * 20), 511, 1023);
        d.channel.busy = true;
        d.nodes[1].backoff = 4;
        d.nodes[1].frame = Some(PacketId(0));
        d.set_ifs_after(1, Nanos::from_us(1000));
        d.set_ifs_after(0, Nanos::from_us(1000));
        let (t, _) = d.end_busy(Nanos::from_us(1000)).unwrap();
        assert_eq!(t, Nanos::from_us(1000 + 170 + 4 * 20));
        let (t2, _) = d.set_edca_now(1, Nanos::from_us(1100), Nanos::from_us(50), 31, 1023).unwrap();
        assert_eq!(t2, Nanos::from_us(1000 + 50 + 4 * 20));
        assert_eq!(d.contention(1).1, 511, "CW stays until its next reset");
        d.on_ppdu_end(1, true);
        assert_eq!(d.contention(1).1, 31, "then the normal CWmin");
    }
}
