//! The 802.11b frame exchange under DCF: one data frame, SIFS, its ACK (IEEE 802.11-2016
//! 10.3.2.6), at the rate the link's rate controller picks per attempt, with the frame and ACK
//! errors of the station's channel (docs/model-80211b-dcf.md, docs/model-radio.md).
//!
//! A node's MAC holds one frame (its hardware queue of one): it pulls the next from the qdisc
//! whenever it holds none. The AP may have more below its qdisc ([`TxBuffers`], `[ap]
//! tx_buffers`): the driver's and card's transmit buffers, a FIFO the qdisc fills whenever one
//! is free and the MAC empties in order.

use crate::ctx::{Ctx, DropCause};
use crate::engine::{named, Event, StreamKind};
use crate::mac::rate::{RateAlgo, RateControl, RateCtl};
use crate::packet::PacketId;
use crate::phy::dsss::{self, DsssRate, Preamble};
use crate::phy::error_rate::ErrMode;
use crate::radio::Dir;
use crate::time::Nanos;
use std::collections::VecDeque;

use super::air::{AirTx, Outcome};
use super::medium::{link_name, DataPpdu, Medium};
use super::pcf::{CfParams, PcfTiming};
use crate::node::Node;
use crate::phy::TxRate;

/// `[ap] tx_buffers`: how many frames the 802.11b AP's driver and card hold below the qdisc,
/// the one on the air included (docs/model-80211b-dcf.md, *The AP's transmit buffers*).
///
/// 1 (the default) is a MAC holding one frame, pulled from the qdisc when it has sent the last:
/// the qdisc decides every frame at the moment the air is free. A Linux 2.4 software AP drove a
/// Prism2 card through the HostAP driver (hostap_hw.c, `prism2_transmit`), which copies each
/// frame the qdisc releases into one of the card's transmit buffers (FIDs) and stops the
/// netdev queue (`netif_stop_queue`) only when all are in use; the firmware sends them in
/// order and frees a FID when its frame is done (acknowledged or dropped at the retry limit).
/// HostAP allocates `PRISM2_TXFID_COUNT` = 8 of them (hostap_wlan.h; HostAP 0.1-0.4 for Linux
/// 2.4, and drivers/net/wireless/hostap in Linux 2.6.14 to 4.x): [`TxBuffers::HOSTAP`]. The
/// qdisc then decides each frame seven frames before it goes on the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxBuffers(pub u32);

impl TxBuffers {
    /// One frame, in the MAC (the model before this option).
    pub const ONE: TxBuffers = TxBuffers(1);
    /// HostAP's `PRISM2_TXFID_COUNT`.
    pub const HOSTAP: TxBuffers = TxBuffers(8);
    /// The most the parser accepts.
    pub const MAX: u32 = 256;
}

impl Default for TxBuffers {
    fn default() -> Self {
        TxBuffers::ONE
    }
}

/// `[ap] rate_control`: who picks the rate of the 802.11b AP's frames (docs/model-rate-control.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApRateControl {
    /// Each station's `rate_control` (or the cell's), run for the AP's link to it as for the
    /// station's own (the card's firmware; the model before this option).
    #[default]
    Firmware,
    /// The HostAP driver's host-based rate control, its default in AP mode (hostap_ap.c,
    /// `ap_update_sta_tx_rate`, `hostap_handle_sta_tx_exc`): one rate per frame, chosen when the
    /// frame is handed to the card; up one rate after 50 frames handed since the last failed
    /// one, down one after 2 frames the firmware gave up on. The stations keep theirs.
    HostAp,
}

crate::words::words!(
    ApRateControl:
    "firmware" => ApRateControl::Firmware,
    "hostap" => ApRateControl::HostAp,
);

/// The `[ap]` settings of an 802.11b AP's driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyAp {
    pub tx_buffers: TxBuffers,
    pub rate_control: ApRateControl,
}

pub struct Legacy {
    pub preamble: Preamble,
    pub lowest_basic: DsssRate,
    /// ACK airtime and rate answering a data frame at each DSSS rate (index `DsssRate as usize`).
    pub ack_by_rate: [Nanos; 4],
    pub ack_rate: [DsssRate; 4],
    /// Rate controllers: `s` for the AP's link to station s, `n + s` for station s's own.
    pub rate_ctl: Vec<RateCtl>,
    pub n_stations: usize,
    /// The point coordinator of a cell with `pcf = true` (`super::cfp`).
    pub cfp: Option<Box<super::pcf::Cfp>>,
    /// The AP's frames in its driver and card behind the one in its MAC ([`TxBuffers`]), oldest
    /// first; at most `ap_buffered` of them (0: none, every frame comes from the qdisc).
    ap_buffers: VecDeque<PacketId>,
    ap_buffered: usize,
    /// The AP's rate control wants to hear of each frame handed to the card (HostAP).
    ap_hands: bool,
}

/// Airtime of one exchange of a 1200-byte reference frame at `rate` (rate control's yardstick,
/// as Minstrel's): DIFS, the mean CWmin backoff, the data PPDU, SIFS and the ACK.
pub fn reference_airtime(preamble: Preamble, rate: DsssRate, ack: Nanos) -> Nanos {
    let data = dsss::txtime(preamble, rate, 1200 + dsss::DATA_OVERHEAD_BYTES);
    dsss::DIFS + Nanos(dsss::SLOT.0 * 31 / 2) + data + dsss::SIFS + ack
}

/// One station's link as the 802.11b MAC builds it: the station's name (which keys the link's
/// random streams), its top rate and its rate control.
pub struct LegacyStation<'a> {
    pub name: &'a str,
    pub rate: DsssRate,
    pub rate_control: RateControl,
}

impl Legacy {
    /// The 802.11b MAC of a cell with `preamble`, the BSSBasicRateSet `basic_rates` (sorted,
    /// never empty), the retry limit, its `stations` (one rate controller per link and
    /// direction) and, in a point-coordinated cell, the CF Parameter Set with each station's
    /// CF-Pollable flag.
    pub fn new(
        preamble: Preamble,
        basic_rates: &[DsssRate],
        retry_limit: u32,
        stations: &[LegacyStation<'_>],
        seed: u64,
        pcf: Option<(CfParams, Vec<bool>)>,
        ap: LegacyAp,
    ) -> Legacy {
        let ack_rate = DsssRate::ALL.map(|r| dsss::control_response_rate(basic_rates, r));
        let ack_by_rate = DsssRate::ALL.map(|r| dsss::ack_time(preamble, basic_rates, r));
        let n = stations.len();
        let mut rate_ctl = Vec::with_capacity(2 * n);
        for dir in 0..2u64 {
            for st in stations {
                let top = st.rate as usize;
                let algo = match st.rate_control {
                    _ if dir == 0 && ap.rate_control == ApRateControl::HostAp => RateAlgo::HostAp,
                    RateControl::Fixed => RateAlgo::Fixed(top as u8),
                    RateControl::Arf => RateAlgo::Arf,
                    RateControl::Aarf => RateAlgo::Aarf,
                    RateControl::Minstrel => RateAlgo::Minstrel,
                    // The parser refuses it outside an 802.11n cell.
                    RateControl::MinstrelHt => RateAlgo::Fixed(top as u8),
                };
                let ref_air: Vec<Nanos> = DsssRate::ALL[..=top]
                    .iter()
                    .map(|&r| reference_airtime(preamble, r, ack_by_rate[r as usize]))
                    .collect();
                let rng = named(seed, StreamKind::RateControl, &link_name(st.name, dir == 0), 0);
                let ctl = RateCtl::new(algo, &ref_air, retry_limit, rng)
                    .expect("1 to 4 rates and a fixed index among them are always valid");
                rate_ctl.push(ctl);
            }
        }
        let cfp = pcf.map(|(params, pollable)| {
            // CF-Poll, Null and CF-End at the highest basic rate (reference section 4.3: 2 Mb/s
            // with the default basic rates 1 and 2 Mb/s).
            let timing = PcfTiming { preamble, ctl_rate: *basic_rates.last().expect("never empty") };
            Box::new(super::pcf::Cfp::new(params, timing, pollable))
        });
        let ap_buffered = ap.tx_buffers.0.saturating_sub(1) as usize;
        Legacy {
            preamble,
            lowest_basic: basic_rates[0],
            ack_by_rate,
            ack_rate,
            rate_ctl,
            n_stations: n,
            cfp,
            ap_buffers: VecDeque::with_capacity(ap_buffered),
            ap_buffered,
            ap_hands: ap.rate_control == ApRateControl::HostAp,
        }
    }

    /// Index into `rate_ctl` of the link node `node` is sending on to/from station `s`.
    #[inline]
    fn link(&self, node: u32, s: u32) -> usize {
        super::medium::link_index(node, s, self.n_stations)
    }

    /// Give WiFi node `node` its next frame if its MAC is free, and fill the AP's transmit
    /// buffers ([`TxBuffers`]) from its qdisc. Returns whether it looked at its queue (the
    /// device's sources may then top it up).
    pub fn pull(
        &mut self,
        m: &mut Medium,
        node: u32,
        cx: &mut Ctx,
        mut dequeue: impl FnMut(&mut Ctx) -> Option<PacketId>,
    ) -> bool {
        let n = node as usize;
        let buffered = node == 0 && self.ap_buffered > 0;
        let mut looked = false;
        if m.dcf().can_take_frame(n) {
            // The card sends its buffers in order: the oldest first, the qdisc's next only
            // when none waits.
            let head = if buffered { self.ap_buffers.pop_front() } else { None };
            let next = match head {
                Some(p) => Some(p),
                None => {
                    looked = true;
                    let p = dequeue(cx);
                    if node == 0 && self.ap_hands {
                        if let Some(p) = p {
                            self.handed(m, cx, p);
                        }
                    }
                    p
                }
            };
            if let Some(pkt) = next {
                let f = cx.pkts.get(pkt).flow as usize;
                let station = cx.station_of(m.acct(node), f).expect("wifi frames have a station");
                m.dcf_mut().load_frame(n, pkt, station);
                m.request_access(cx, n);
            } else {
                return true;
            }
        }
        if buffered {
            // hostap's prism2_transmit: the netdev queue runs while a buffer is free.
            while self.ap_buffers.len() < self.ap_buffered {
                looked = true;
                match dequeue(cx) {
                    Some(p) => {
                        if self.ap_hands {
                            self.handed(m, cx, p);
                        }
                        self.ap_buffers.push_back(p);
                    }
                    None => break,
                }
            }
        }
        looked
    }

    /// The AP's driver hands `pkt` to its card: its link's rate control hears of it
    /// (`RateCtl::on_handed`, HostAP's choice of the frame's rate).
    #[inline]
    fn handed(&mut self, m: &Medium, cx: &Ctx, pkt: PacketId) {
        let f = cx.pkts.get(pkt).flow as usize;
        let s = cx.station_of(m.acct(0), f).expect("wifi frames have a station");
        let link = self.link(0, s);
        self.rate_ctl[link].on_handed();
    }

    /// The medium turns busy: the beacon and every transmitter's data frame go on the air.
    pub fn on_access(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let ta = cx.now;
        if m.dcf().beacon_in_air() && self.cfp.as_deref().is_some_and(|c| c.armed()) {
            // Every node's NAV has been set since the TBTT: the beacon is alone on the air.
            debug_assert!(m.dcf().transmitters().is_empty(), "a DCF frame under the NAV");
            return self.cfp_begin(m, cx, ta);
        }
        let mut busy_end = ta;
        if m.dcf().beacon_in_air() {
            let rate = self.lowest_basic;
            let d = dsss::txtime(self.preamble, rate, m.beacon_bytes());
            busy_end = m.put_beacon(cx, ta, d, TxRate::Dsss(rate));
        }
        for i in 0..m.dcf().transmitters().len() {
            let node = m.dcf().transmitters()[i];
            let n = node as usize;
            let s = m.dcf().frame_station(n);
            let link = self.link(node, s);
            let attempt = m.dcf_mut().start_attempt(n);
            let pkt = m.dcf().frame(n).expect("transmitter holds a frame");
            let ri = self.rate_ctl[link].rate_for_attempt(ta, attempt) as usize;
            let rate = DsssRate::ALL[ri];
            let psdu = cx.pkts.get(pkt).ip_len + dsss::DATA_OVERHEAD_BYTES;
            let d = dsss::txtime(self.preamble, rate, psdu);
            cx.counters.stations[s as usize].attempts_by_rate[(node != 0) as usize][ri] += 1;
            let f = DataPpdu {
                contender: node,
                node,
                station: s as usize,
                start: ta,
                airtime: d,
                rate: TxRate::Dsss(rate),
            };
            busy_end = busy_end.max(m.put_frame(cx, f));
        }
        let outcome = if m.collided() { Outcome::Collision } else { self.draw_outcome(m, cx, ta) };
        m.set_outcome(outcome);
        match outcome {
            Outcome::Success | Outcome::AckLost => {
                let a = m.air()[0];
                let s = m.dcf().frame_station(a.node as usize) as usize;
                let ack = self.ack_by_rate[dsss_rate(a) as usize];
                busy_end = m.respond(cx, a.node, s, busy_end, dsss::SIFS, ack);
            }
            Outcome::DataLost => {
                let s = m.dcf().frame_station(m.air()[0].node as usize) as usize;
                cx.counters.stations[s].data_errors += 1;
            }
            Outcome::Collision if m.air().len() > 1 => m.count_collisions(cx, 0),
            Outcome::Collision => {}
        }
        if cx.tap.is_some() {
            self.tap_exchange(m, cx, ta);
        }
        if let Some(c) = cx.coex.as_deref_mut() {
            // Bluetooth beside the cell: the frames go into the WLAN's air log; a decoded lone
            // frame's fate waits for its end (`coex_data_end`).
            for ch in m.charges() {
                c.wlan.push(crate::coex::OnAir { start: ch.start, end: ch.end, chan: 0, in_band: true, from: ch.node });
            }
            if matches!(m.outcome(), Outcome::Success | Outcome::AckLost) {
                m.busy_deferred(cx, ta, busy_end);
                return;
            }
        }
        m.busy_until(cx, ta, busy_end);
    }

    /// Bluetooth beside the cell, the end of a data frame its receiver would decode: was a
    /// Bluetooth packet in its band on the air meanwhile (`crate::coex`)? Then the frame is
    /// lost, its ACK is not sent and the busy period ends now (returns true). Otherwise the
    /// exchange ends after the ACK, whose own fate is known at its end.
    fn coex_data_end(&mut self, m: &mut Medium, cx: &mut Ctx) -> bool {
        let a = m.air()[0];
        let s = m.dcf().frame_station(a.node as usize) as usize;
        let dir = (a.node != 0) as usize;
        let to = if a.node == 0 { s as u32 + 1 } else { 0 };
        let c = cx.coex.as_deref_mut().expect("called with Bluetooth beside");
        c.counters.wlan_data_checked[s][dir] += 1;
        if c.wlan_hit(m.busy_start(), cx.now, a.node, to, dsss_rate(a) as usize) {
            c.counters.wlan_data_hit[s][dir] += 1;
            c.wlan.pop_last();
            let sc = &mut cx.counters.stations[s];
            if m.outcome() == Outcome::AckLost {
                sc.ack_errors -= 1;
            }
            sc.data_errors += 1;
            m.set_outcome(Outcome::DataLost);
            m.cut_response(cx);
            return true;
        }
        cx.schedule(m.busy_end(), Event::ExchangeEnd);
        m.set_ack_pending(m.outcome() == Outcome::Success);
        false
    }

    /// Bluetooth beside the cell, the end of an ACK the WLAN alone would have let through:
    /// if a Bluetooth packet in its band overlapped it, the ACK is lost (the sender retries;
    /// the receiver already has the frame), else the sender is done with its frame.
    pub fn coex_ack_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        m.set_ack_pending(false);
        let a = m.air()[0];
        let node = a.node as usize;
        let s = m.dcf().frame_station(node) as usize;
        let dir = (a.node != 0) as usize;
        let ack = *m.charges().last().expect("the ACK's charge");
        let c = cx.coex.as_deref_mut().expect("called with Bluetooth beside");
        c.counters.wlan_ack_checked[s][dir] += 1;
        let acker = if a.node == 0 { s as u32 + 1 } else { 0 };
        if c.wlan_hit(ack.start, ack.end, acker, a.node, self.ack_rate[dsss_rate(a) as usize] as usize) {
            c.counters.wlan_ack_hit[s][dir] += 1;
            cx.counters.stations[s].ack_errors += 1;
            m.set_outcome(Outcome::AckLost);
            return;
        }
        let pkt = m.dcf().frame(node).expect("the sender holds its frame until the ACK");
        m.dcf_mut().on_success(node);
        cx.pkts.free(pkt);
    }

    /// Hand the busy period's frames to the capture (`--pcap`): the beacon, every data frame
    /// (with a bad FCS unless its receiver decoded it), and the ACK of a decoded lone frame.
    /// Reading a channel's SNR here draws nothing the run would not (its fading advances by
    /// time steps, one draw each, whoever asks).
    #[cold]
    fn tap_exchange(&self, m: &mut Medium, cx: &mut Ctx, ta: Nanos) {
        use crate::pcap::{Kind, Phy};
        let Some(tap) = cx.tap.as_deref_mut() else { return };
        let decoded = matches!(m.outcome(), Outcome::Success | Outcome::AckLost);
        let skip = m.tap_beacon(tap, ta);
        for i in skip..m.air().len() {
            let a = m.air()[i];
            let (node, s) = (a.node as usize, m.dcf().frame_station(a.node as usize));
            let attempts = m.dcf().attempts(node);
            let pkt = *cx.pkts.get(m.dcf().frame(node).expect("transmitter holds a frame"));
            let (to, dir, back) = if a.node == 0 { (s + 1, Dir::Down, Dir::Up) } else { (0, Dir::Up, Dir::Down) };
            let snr = m.radio_mut().snr_cdb(s as usize, ta, dir);
            let seq = tap.next_seq(a.node, attempts == 1);
            let key = cx.keys[pkt.flow as usize];
            let data = Kind::Data { from: a.node, to, retry: attempts > 1, tid: None, seq, key, pkt };
            let len = pkt.ip_len + dsss::DATA_OVERHEAD_BYTES;
            tap.air_frame(data, Phy { start: ta, rate: a.rate, len, fcs_ok: decoded, snr_cdb: snr, ampdu: None });
            if decoded {
                let start = a.end + dsss::SIFS;
                let rate = TxRate::Dsss(self.ack_rate[dsss_rate(a) as usize]);
                let outcome = m.outcome();
                let snr = m.radio_mut().snr_cdb(s as usize, start, back);
                let fcs_ok = outcome == Outcome::Success;
                let ack = Phy { start, rate, len: dsss::ACK_BYTES, fcs_ok, snr_cdb: snr, ampdu: None };
                tap.air_frame(Kind::Ack { from: to, to: a.node, block: false }, ack);
            }
        }
    }

    /// A lone data frame on the air: does its receiver decode it, and its sender the ACK? Draws
    /// one uniform for the data and, when it gets through, one for the ACK, from the sender's
    /// stream; a station without radio conditions has a perfect channel (no draw). Queues the
    /// SNR report the AP's monitor takes of a frame it decodes from the station.
    fn draw_outcome(&mut self, m: &mut Medium, cx: &Ctx, ta: Nanos) -> Outcome {
        let a = m.air()[0];
        let (rate, node) = (dsss_rate(a), a.node as usize);
        let s = m.dcf().frame_station(node);
        let pkt = m.dcf().frame(node).expect("transmitter holds a frame");
        let r = m.radio_mut();
        if !r.has_channel(s as usize) {
            return Outcome::Success;
        }
        let (data_dir, ack_dir) = if a.node == 0 { (Dir::Down, Dir::Up) } else { (Dir::Up, Dir::Down) };
        let psdu = cx.pkts.get(pkt).ip_len + dsss::DATA_OVERHEAD_BYTES;
        let snr = r.snr_cdb(s as usize, ta, data_dir).expect("a channel");
        if !r.decodes(node, ErrMode::Dsss(rate), self.preamble, snr, psdu) {
            return Outcome::DataLost;
        }
        if data_dir == Dir::Up {
            r.queue_report(s, snr);
        }
        let ack_snr = r.snr_cdb(s as usize, a.end + dsss::SIFS, ack_dir).expect("a channel");
        let ack_rate = self.ack_rate[rate as usize];
        if !r.decodes(node, ErrMode::Dsss(ack_rate), self.preamble, ack_snr, dsss::ACK_BYTES) {
            return Outcome::AckLost;
        }
        if ack_dir == Dir::Up {
            r.queue_report(s, ack_snr);
        }
        Outcome::Success
    }

    /// End of a decoded data PPDU: the receiver has the frame. A retransmission of a frame the
    /// receiver already has (its ACK was lost) is discarded there as a duplicate.
    pub fn on_tx_end(&mut self, m: &mut Medium, cx: &mut Ctx) {
        if cx.coex.is_some() && self.coex_data_end(m, cx) {
            return;
        }
        // Next to Bluetooth the ACK's fate is known at its end: until then the sender keeps
        // its frame as if the ACK were lost (`coex_ack_end` settles it).
        let acked = m.outcome() == Outcome::Success && !m.ack_pending();
        let node = m.air()[0].node as usize;
        let pkt = m.dcf().frame(node).expect("decoded transmitter holds its frame");
        let station = m.dcf().frame_station(node);
        let to = if node == 0 { Node::Station(station) } else { Node::Ap };
        let duplicate = m.dcf().delivered(node);
        if acked {
            m.dcf_mut().on_success(node);
        }
        if duplicate {
            if acked {
                cx.pkts.free(pkt);
            }
            return;
        }
        cx.counters.stations[station as usize].tx_frames += 1;
        if acked {
            cx.deliver(to, pkt);
        } else {
            // ACK lost: the receiver passes a copy up; the sender keeps the frame to retry.
            let copy = *cx.pkts.get(pkt);
            let c = cx.pkts.alloc(copy);
            m.dcf_mut().mark_delivered(node);
            cx.deliver(to, c);
        }
    }

    /// A lone frame's ACK rate and its receiver's contender (for the IFS rules).
    pub fn lone_frame(&self, m: &Medium, a: AirTx) -> (TxRate, std::ops::Range<usize>) {
        let s = m.dcf().frame_station(a.node as usize) as usize;
        let receiver = if a.node == 0 { s + 1 } else { 0 };
        (TxRate::Dsss(self.ack_rate[dsss_rate(a) as usize]), receiver..receiver + 1)
    }

    /// TX status at the end of the busy period: rate control learns every attempt's fate, and
    /// failed transmitters retry or drop.
    pub fn complete(&mut self, m: &mut Medium, cx: &mut Ctx) {
        let te = cx.now;
        let acked = m.outcome() == Outcome::Success;
        for i in 0..m.air().len() {
            let a = m.air()[i];
            if i == 0 && m.dcf().beacon_in_air() {
                continue;
            }
            let rate = dsss_rate(a);
            let node = a.node as usize;
            let station = m.dcf().frame_station(node);
            let link = self.link(a.node, station);
            let ctl = &mut self.rate_ctl[link];
            ctl.on_attempt(te, rate as u8, acked);
            if acked {
                cx.counters.stations[station as usize].acked_by_rate[(node != 0) as usize][rate as usize] += 1;
                ctl.on_frame_end(te, true);
                continue;
            }
            let delivered = m.dcf().delivered(node);
            match m.dcf_mut().on_failure(node) {
                Some(pkt) => {
                    self.rate_ctl[link].on_frame_end(te, false);
                    if delivered {
                        // The receiver has it; only the sender gives up.
                        cx.pkts.free(pkt);
                    } else {
                        cx.drop_packet(pkt, m.acct(a.node), DropCause::Retry);
                    }
                }
                None => cx.counters.stations[station as usize].retries += 1,
            }
        }
    }

    /// The frames the MACs hold, for the conservation check: `count` for each one in flight;
    /// returns how many are senders' copies of frames the receiver already has.
    pub fn for_each_held(&self, m: &Medium, mut count: impl FnMut(PacketId)) -> u64 {
        self.ap_buffers.iter().for_each(|&p| count(p));
        m.dcf().for_each_held(count)
    }

    /// The frames waiting in the AP's transmit buffers behind its MAC's ([`TxBuffers`]).
    #[cfg(test)]
    pub fn ap_buffered(&self) -> usize {
        self.ap_buffers.len()
    }
}

#[inline]
fn dsss_rate(a: AirTx) -> DsssRate {
    match a.rate {
        TxRate::Dsss(r) => r,
        other => unreachable!("an 802.11b frame at {other:?}"),
    }
}
