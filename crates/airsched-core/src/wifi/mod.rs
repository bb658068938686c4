//! The WiFi side of the cell: one shared medium ([`medium`]) with its channel access (DCF, and
//! EDCA as four DCF contenders per node), the interframe-space rules in one place ([`ifs`]),
//! and one MAC for the whole cell, chosen when the cell is built: the 802.11b DATA + ACK
//! exchange ([`legacy`]) or the 802.11n A-MPDU + BlockAck exchange with its driver queues
//! ([`ht`]).
//!
//! The simulator drives a busy period in this order: [`Wifi::on_access`] (the medium turns busy;
//! frames go on the air, their fates are drawn), [`Wifi::on_tx_end`] (the receiver gets a
//! decoded frame), [`Wifi::on_exchange_end`] (IFS, TX status, retries and drops), the
//! deliveries these filed, then [`Wifi::end_busy`] (the next access is planned) and a pull by
//! every transmitter.

pub mod air;
pub mod cfp;
pub mod ht;
pub mod ifs;
pub mod legacy;
pub mod medium;
pub mod pcf;

use crate::ctx::Ctx;
use crate::packet::PacketId;
use crate::phy::TxRate;

pub use ifs::IfsRules;
pub use medium::{Medium, Radio};

/// The MAC of every node of the cell.
pub enum Mac {
    Legacy(Box<legacy::Legacy>),
    Ht(Box<ht::Ht>),
}

pub struct Wifi {
    pub medium: Medium,
    pub mac: Mac,
}

impl Wifi {
    /// Let WiFi node `node` take frames from its qdisc (`dequeue`) while its MAC has room.
    /// Returns whether it looked at the queue (its sources may then top it up).
    #[inline]
    pub fn pull(&mut self, node: u32, cx: &mut Ctx, dequeue: impl FnMut(&mut Ctx) -> Option<PacketId>) -> bool {
        match &mut self.mac {
            Mac::Legacy(l) => l.pull(&mut self.medium, node, cx, dequeue),
            Mac::Ht(h) => h.pull(&mut self.medium, node, cx, dequeue),
        }
    }

    /// A planned channel access fires (stale ones, superseded by a later plan, are ignored).
    pub fn on_access(&mut self, gen: u64, cx: &mut Ctx) {
        if !self.medium.begin_access(cx.now, gen) {
            return;
        }
        match &mut self.mac {
            Mac::Legacy(l) => l.on_access(&mut self.medium, cx),
            Mac::Ht(h) => h.on_access(&mut self.medium, cx),
        }
    }

    /// `Event::Cfp`: in an 802.11b cell with PCF, the point coordinator's next step in a
    /// contention-free period; in an 802.11n cell, the AP driver's timer (an airtime cap
    /// waiting for its balance, `Ht::on_timer`).
    pub fn on_cfp(&mut self, cx: &mut Ctx) {
        match &mut self.mac {
            Mac::Legacy(l) => l.on_cfp(&mut self.medium, cx),
            Mac::Ht(h) => h.on_timer(&mut self.medium, cx),
        }
    }

    /// The end of a decoded data PPDU.
    pub fn on_tx_end(&mut self, cx: &mut Ctx) {
        if !self.in_cfp() {
            if let Some((_, receiver)) = self.lone_frame() {
                self.medium.receiver_senses_idle(receiver, cx.now);
            }
        }
        match &mut self.mac {
            Mac::Legacy(l) => l.on_tx_end(&mut self.medium, cx),
            Mac::Ht(h) => h.on_tx_end(&mut self.medium, cx),
        }
    }

    /// PCF: a contention-free period is under way.
    #[inline]
    fn in_cfp(&self) -> bool {
        matches!(&self.mac, Mac::Legacy(l) if l.cfp.as_deref().is_some_and(|c| c.active()))
    }

    /// The lone frame on the air (no collision, no beacon): its (Block)Ack's rate and its
    /// receiver's contenders.
    #[inline]
    fn lone_frame(&self) -> Option<(TxRate, std::ops::Range<usize>)> {
        self.medium.lone_frame().map(|a| match &self.mac {
            Mac::Legacy(l) => l.lone_frame(&self.medium, a),
            Mac::Ht(h) => h.lone_frame(a),
        })
    }

    /// The busy period ends: every contender's interframe space (`IfsRules::after_busy`, for
    /// both MACs), the monitor's report, every transmitter's TX status.
    pub fn on_exchange_end(&mut self, cx: &mut Ctx) {
        if self.in_cfp() {
            if let Mac::Legacy(l) = &mut self.mac {
                return l.cfp_finish(&mut self.medium, cx);
            }
        }
        if self.medium.ack_pending() {
            if let Mac::Legacy(l) = &mut self.mac {
                l.coex_ack_end(&mut self.medium, cx);
            }
        }
        let lone = self.lone_frame();
        let m = &mut self.medium;
        let (response, receiver) = lone.map_or((None, 0..0), |(r, rx)| (Some(r), rx));
        m.after_busy(response, receiver, cx.now);
        m.radio_mut().deliver_report(cx);
        match &mut self.mac {
            Mac::Legacy(l) => l.complete(m, cx),
            Mac::Ht(h) => h.complete(m, cx),
        }
    }

    /// The medium is idle again: plan the next access. Returns the transmitters of the period
    /// that ended (a reused buffer: hand it back with [`Wifi::done`]); each pulls its next
    /// frame.
    pub fn end_busy(&mut self, cx: &mut Ctx) -> Vec<u32> {
        self.medium.end_busy(cx)
    }

    /// The WiFi node a transmitter (contender) belongs to.
    #[inline]
    pub fn node_of(&self, contender: u32) -> u32 {
        match self.mac {
            Mac::Legacy(_) => contender,
            Mac::Ht(_) => ht::node_ac(contender).0,
        }
    }

    /// The busy period is over.
    pub fn done(&mut self, transmitters: Vec<u32>) {
        self.medium.done(transmitters);
    }

    /// A target beacon transmission time: the AP's beacon waits PIFS, no backoff. In a PCF
    /// cell the TBTT may start a contention-free period, or fall inside one.
    pub fn on_beacon(&mut self, cx: &mut Ctx) {
        if let Mac::Legacy(l) = &mut self.mac {
            if l.cfp.is_some() && l.cfp_tbtt(&mut self.medium, cx) {
                return;
            }
        }
        self.medium.beacon_due(cx);
    }

    /// Every packet the MACs and drivers hold, for the conservation check: `count` for each one
    /// in flight; returns how many are senders' copies of frames the receiver already has.
    pub fn for_each_held(&self, count: impl FnMut(PacketId)) -> u64 {
        match &self.mac {
            Mac::Legacy(l) => l.for_each_held(&self.medium, count),
            Mac::Ht(h) => h.for_each_held(count),
        }
    }

    /// 802.11n: airtime (µs) the AP's AQL counts as queued and not completed, and the frames
    /// its driver holds; (0, 0) in an 802.11b cell.
    pub fn mac_pending(&self) -> (u32, u32) {
        match &self.mac {
            Mac::Legacy(_) => (0, 0),
            Mac::Ht(h) => (h.drivers[0].aql.total_pending(), h.drivers[0].frames),
        }
    }

    /// 802.11n with FQ-MAC at the AP: the AP's driver (its scheduler, FQ-MAC and AQL state),
    /// for the statistics views; None otherwise.
    pub fn ap_mac80211(&self) -> Option<&ht::Driver> {
        match &self.mac {
            Mac::Ht(h) if matches!(h.drivers[0].src, ht::Source::Fq(_)) => Some(&h.drivers[0]),
            _ => None,
        }
    }

    /// The 802.11n MAC; None in an 802.11b cell.
    pub fn ht(&self) -> Option<&ht::Ht> {
        match &self.mac {
            Mac::Ht(h) => Some(h),
            Mac::Legacy(_) => None,
        }
    }

    /// 802.11n: what the AP's next-steps mechanisms did; None in an 802.11b cell.
    pub fn ofdma_stats(&self) -> Option<ht::ofdma::OfdmaStats> {
        match &self.mac {
            Mac::Ht(h) => h.ofdma_stats().cloned(),
            _ => None,
        }
    }

    pub fn next_steps_stats(&self) -> Option<ht::NextStepsStats> {
        match &self.mac {
            Mac::Legacy(_) => None,
            Mac::Ht(h) => Some(h.next_steps_stats()),
        }
    }
}

#[cfg(test)]
mod tests;
