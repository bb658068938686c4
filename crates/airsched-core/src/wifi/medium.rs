//! The one wireless medium every MAC of the cell shares: channel access, the frames in the
//! air during the current busy period and what became of them ([`super::air`]), the IFS rules,
//! and the radio side of reception (each station's channel, the error model, the
//! per-transmitter error draws, and the SNR reports the AP's channel monitor takes).
//!
//! Its state is its own: the MACs go through methods that say what they do (put a frame on
//! the air, request channel access, end the busy period), and reach channel access through
//! [`Medium::dcf`] / [`Medium::dcf_mut`] (the DCF's own narrow interface) and reception
//! through [`Medium::radio_mut`].

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ctx::Ctx;
use crate::engine::Event;
use crate::mac::dcf::Dcf;
use crate::monitor::Monitor;
use crate::node::{Acct, DevId};
use crate::phy::dsss::Preamble;
use crate::phy::error_rate::{ErrMode, ErrorModel};
use crate::radio::{Channel, Dir};
use crate::time::Nanos;

use super::air::{AirTx, Outcome};
use super::ifs::IfsRules;
use crate::phy::TxRate;

/// An SNR report the AP's channel monitor takes when the exchange ends.
#[derive(Clone, Copy, Debug)]
pub struct Report {
    pub station: u32,
    pub snr_cdb: i32,
}

/// Index of the link WiFi node `node` sends on to or from station `s` in a table of per-link
/// state (rate controllers): the AP's link to station s is `s`, station s's own `n + s`.
#[inline]
pub fn link_index(node: u32, s: u32, n_stations: usize) -> usize {
    if node == 0 {
        s as usize
    } else {
        n_stations + s as usize
    }
}

/// The name of the link between the AP and a station, which keys its rate controller's
/// random stream: "ap->STA" down, "STA->ap" up.
pub fn link_name(station: &str, down: bool) -> String {
    if down {
        format!("ap->{station}")
    } else {
        format!("{station}->ap")
    }
}

/// Radio conditions and reception.
pub struct Radio {
    /// Per station: its radio channel (None: perfect, no frame errors).
    channels: Vec<Option<Channel>>,
    errors: ErrorModel,
    /// Per WiFi node: frame and ACK error draws.
    err_rng: Vec<Xoshiro256PlusPlus>,
    /// The AP's channel monitor (when any station has radio conditions).
    monitor: Option<Monitor>,
    /// The SNR report the monitor takes when the exchange ends.
    report: Option<Report>,
    /// Per station: the flows it is the destination of (their `chan` follows its estimate).
    flows_to: Vec<Vec<u32>>,
}

impl Radio {
    /// Per station its channel (None: perfect), the error model, per WiFi node its error
    /// stream, the AP's channel monitor if any, and per station the flows it receives.
    pub fn new(
        channels: Vec<Option<Channel>>,
        errors: ErrorModel,
        err_rng: Vec<Xoshiro256PlusPlus>,
        monitor: Option<Monitor>,
        flows_to: Vec<Vec<u32>>,
    ) -> Radio {
        Radio { channels, errors, err_rng, monitor, report: None, flows_to }
    }

    /// Station `s` has radio conditions (otherwise its channel is perfect: no frame errors).
    #[inline]
    pub fn has_channel(&self, s: usize) -> bool {
        self.channels[s].is_some()
    }

    /// The SNR (cdB) of station `s`'s channel at `t` in direction `dir`; None for a perfect
    /// channel. Its fading advances by time steps, one draw each, whoever asks.
    #[inline]
    pub fn snr_cdb(&mut self, s: usize, t: Nanos, dir: Dir) -> Option<i32> {
        self.channels[s].as_mut().map(|c| c.snr_cdb(t, dir))
    }

    /// Does the receiver decode a frame of `bytes` sent by WiFi node `node` in `mode` at
    /// `snr_cdb`? One uniform from the sender's error stream against the model's success
    /// probability.
    #[inline]
    pub fn decodes(&mut self, node: usize, mode: ErrMode, preamble: Preamble, snr_cdb: i32, bytes: u32) -> bool {
        let p = self.errors.success(mode, preamble, snr_cdb, bytes);
        self.err_rng[node].random::<f64>() < p
    }

    /// The AP's channel monitor takes this SNR of station `station` when the exchange ends
    /// (the last one queued wins).
    #[inline]
    pub fn queue_report(&mut self, station: u32, snr_cdb: i32) {
        self.report = Some(Report { station, snr_cdb });
    }

    /// The AP's channel monitor, when any station has radio conditions.
    #[inline]
    pub fn monitor(&self) -> Option<&Monitor> {
        self.monitor.as_ref()
    }

    /// Test support: WiFi node `node`'s error stream.
    #[cfg(test)]
    pub(crate) fn err_rng(&self, node: usize) -> &Xoshiro256PlusPlus {
        &self.err_rng[node]
    }

    /// The exchange's SNR report, if any, reaches the AP's channel monitor.
    pub fn deliver_report(&mut self, cx: &mut Ctx) {
        if let Some(r) = self.report.take() {
            if let Some(m) = self.monitor.as_mut() {
                m.report(r.station as usize, r.snr_cdb);
                self.refresh_chan(r.station as usize, &mut cx.chan);
            }
        }
    }

    /// Hand the monitor's estimate for station `s` to the qdiscs (`QCtx::chan`).
    pub fn refresh_chan(&self, s: usize, chan: &mut [u32]) {
        let Some(m) = &self.monitor else { return };
        let rel = m.rel(s);
        for &f in &self.flows_to[s] {
            chan[f as usize] = rel;
        }
    }
}

/// The shared medium: channel access, the frames of the busy period, reception. Built by
/// [`Medium::new`]; the MACs reach its state only through its methods.
pub struct Medium {
    dcf: Dcf,
    air: Vec<AirTx>,
    /// Outcome of the current busy period.
    outcome: Outcome,
    radio: Radio,
    ifs: IfsRules,
    beacon_bytes: u32,
    /// Per WiFi node: its WiFi device, and how the device's drops are accounted (both from
    /// the topology).
    devs: Vec<(DevId, Acct)>,
    /// The airtime charged for the frames of the current busy period, each with its interval,
    /// and the busy period's own interval: airtime is counted whole when an exchange starts, so
    /// at a window's edge (the warm-up's end, the run's end) the part beyond the edge is taken
    /// back ([`Medium::unspend_after`]). Cleared with `air`.
    charges: Vec<Charge>,
    busy_span: (Nanos, Nanos),
    /// Bluetooth beside the cell: the lone frame's receiver decoded it and its ACK is on the
    /// air, whose fate is known at its end (`Legacy::coex_ack_end`).
    ack_pending: bool,
    /// The contenders of the receiver of the data PPDU that has just ended, and until when
    /// (the start of its response, SIFS later) they sense the medium idle: a frame given to
    /// one of them then takes no backoff ([`Dcf::frame_arrived`]).
    receiver_idle: (std::ops::Range<usize>, Nanos),
}

/// A data PPDU going on the air ([`Medium::put_frame`]).
#[derive(Clone, Copy, Debug)]
pub struct DataPpdu {
    /// The contender that sends it (`AirTx::node`): the WiFi node under DCF, node × 4 + AC
    /// under EDCA.
    pub contender: u32,
    /// The WiFi node that sends it (0 the AP).
    pub node: u32,
    /// The station it is to (from the AP) or from.
    pub station: usize,
    pub start: Nanos,
    pub airtime: Nanos,
    pub rate: TxRate,
}

/// Airtime charged to a node (and, for a data frame or its response, to a station and a
/// direction) for one frame on the air from `start` to `end`.
#[derive(Clone, Copy, Debug)]
pub struct Charge {
    pub node: u32,
    /// `NO_STATION` for a beacon.
    pub station: u32,
    pub dir: u8,
    pub start: Nanos,
    pub end: Nanos,
}

pub const NO_STATION: u32 = u32::MAX;

impl Medium {
    /// A medium idle since t = 0 with this channel access, radio, IFS rules, beacon size (the
    /// beacon's PSDU bytes) and, per WiFi node (the AP first), its device and how its drops
    /// are accounted.
    pub fn new(dcf: Dcf, radio: Radio, ifs: IfsRules, beacon_bytes: u32, devs: Vec<(DevId, Acct)>) -> Medium {
        let n = devs.len().saturating_sub(1);
        Medium {
            dcf,
            air: Vec::with_capacity(n + 2),
            outcome: Outcome::Collision,
            radio,
            ifs,
            beacon_bytes,
            devs,
            charges: Vec::with_capacity(2 * n + 4),
            busy_span: (Nanos::ZERO, Nanos::ZERO),
            ack_pending: false,
            receiver_idle: (0..0, Nanos::ZERO),
        }
    }

    /// The cell's IFS conventions (its EIFS, [`IfsRules::eifs_extra`]).
    #[inline]
    pub fn ifs(&self) -> &IfsRules {
        &self.ifs
    }

    /// Channel access (the DCF, or EDCA's contenders).
    #[inline]
    pub fn dcf(&self) -> &Dcf {
        &self.dcf
    }

    /// Channel access, to notify it.
    #[inline]
    pub fn dcf_mut(&mut self) -> &mut Dcf {
        &mut self.dcf
    }

    /// Reception: channels, error draws, the AP's channel monitor.
    #[inline]
    pub fn radio(&self) -> &Radio {
        &self.radio
    }

    /// Reception, to draw frame fates and queue the monitor's report.
    #[inline]
    pub fn radio_mut(&mut self) -> &mut Radio {
        &mut self.radio
    }

    /// The frames on the air in the current busy period (the beacon first, if any).
    #[inline]
    pub fn air(&self) -> &[AirTx] {
        &self.air
    }

    /// What became of the busy period's frames.
    #[inline]
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The MAC has settled (or revised) the busy period's outcome.
    #[inline]
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.outcome = outcome;
    }

    /// More than one frame is on the air, or a beacon with anything: nothing is decoded.
    #[inline]
    pub fn collided(&self) -> bool {
        self.air.len() > 1 || self.dcf.beacon_in_air()
    }

    /// The busy period's frame when it was alone on the air and not a beacon.
    #[inline]
    pub fn lone_frame(&self) -> Option<AirTx> {
        match self.air.first() {
            Some(&a) if self.air.len() == 1 && !self.dcf.beacon_in_air() => Some(a),
            _ => None,
        }
    }

    /// The beacon's PSDU bytes.
    #[inline]
    pub fn beacon_bytes(&self) -> u32 {
        self.beacon_bytes
    }

    /// The start of the current busy period.
    #[inline]
    pub fn busy_start(&self) -> Nanos {
        self.busy_span.0
    }

    /// The end of the current busy period, as accounted so far.
    #[inline]
    pub fn busy_end(&self) -> Nanos {
        self.busy_span.1
    }

    /// The airtime charged for the frames of the current busy period, in the order they went
    /// on the air.
    #[inline]
    pub fn charges(&self) -> &[Charge] {
        &self.charges
    }

    /// Bluetooth beside the cell: a lone frame's ACK is on the air, its fate known at its end.
    #[inline]
    pub fn ack_pending(&self) -> bool {
        self.ack_pending
    }

    /// Bluetooth beside the cell: a lone frame's ACK is (or no longer is) on the air with its
    /// fate open.
    #[inline]
    pub fn set_ack_pending(&mut self, pending: bool) {
        self.ack_pending = pending;
    }

    /// A planned channel access fires at `now`: false if it is stale (superseded by a later
    /// plan). Otherwise the medium turns busy with no frame on the air yet.
    #[inline]
    pub fn begin_access(&mut self, now: Nanos, gen: u64) -> bool {
        if !self.dcf.begin_access(now, gen) {
            return false;
        }
        self.air.clear();
        self.charges.clear();
        true
    }

    /// Contender `n` has just been given a frame ([`Dcf::load_frame`]): it requests channel
    /// access, and the access event is scheduled if it is the earliest.
    #[inline]
    pub fn request_access(&mut self, cx: &mut Ctx, n: usize) {
        let senses_idle = self.receiver_idle.0.contains(&n) && cx.now < self.receiver_idle.1;
        if let Some((t, gen)) = self.dcf.frame_arrived(n, cx.now, senses_idle) {
            cx.schedule(t, Event::Access { gen });
        }
    }

    /// Contender `n` (holding a frame) requests access with its backoff counter as it stands
    /// ([`Dcf::access_requested`]: the uplink scheduler's request, no frame arrived).
    pub fn request_access_as_is(&mut self, cx: &mut Ctx, n: usize) {
        if let Some((t, gen)) = self.dcf.access_requested(n, cx.now) {
            cx.schedule(t, Event::Access { gen });
        }
    }

    /// A data PPDU addressed to `receiver` (its contenders) has just ended at `now`: until its
    /// response starts SIFS later, the receiver senses the medium idle (IEEE 802.11-2016
    /// 10.3.4.2, 10.22.2.2; a frame addressed to a station does not set its NAV, 10.3.2.4).
    #[inline]
    pub fn receiver_senses_idle(&mut self, receiver: std::ops::Range<usize>, now: Nanos) {
        let p = self.dcf.params();
        self.receiver_idle = (receiver, now + (p.pifs - p.slot));
    }

    /// A beacon becomes due (a TBTT): it requests access PIFS after the AP's last busy period.
    pub fn beacon_due(&mut self, cx: &mut Ctx) {
        if let Some((t, gen)) = self.dcf.beacon_due(cx.now) {
            cx.schedule(t, Event::Access { gen });
        }
    }

    /// PCF: every node's NAV is set until `until` ([`Dcf::set_nav`]); an access planned again
    /// after it is scheduled.
    pub fn set_nav(&mut self, cx: &mut Ctx, until: Nanos) {
        if let Some((t, gen)) = self.dcf.set_nav(cx.now, until) {
            cx.schedule(t, Event::Access { gen });
        }
    }

    /// Every contender's IFS after the busy period that ends at `te` (the IFS rules), given the
    /// rate of a lone frame's (Block)Ack and the contenders of its receiver.
    pub fn after_busy(&mut self, response: Option<TxRate>, receiver: std::ops::Range<usize>, te: Nanos) {
        self.ifs.after_busy(&mut self.dcf, &self.air, self.outcome, response, receiver, te);
    }

    /// The medium is idle again at `cx.now`: the next access is planned and scheduled. Returns
    /// the transmitters of the period that ended (a reused buffer: hand it back with
    /// [`Medium::done`]).
    pub fn end_busy(&mut self, cx: &mut Ctx) -> Vec<u32> {
        if let Some((t, gen)) = self.dcf.end_busy(cx.now) {
            cx.schedule(t, Event::Access { gen });
        }
        self.dcf.take_transmitters()
    }

    /// The busy period is over: its frames, charges and outcome are forgotten.
    pub fn done(&mut self, transmitters: Vec<u32>) {
        self.dcf.return_transmitters(transmitters);
        self.air.clear();
        self.charges.clear();
        self.busy_span = (Nanos::ZERO, Nanos::ZERO);
        self.outcome = Outcome::Collision;
    }

    /// PCF: the busy period of a contention-free period begins at `ta`; [`Medium::busy_to`]
    /// accounts it frame by frame.
    #[inline]
    pub fn open_busy(&mut self, ta: Nanos) {
        self.busy_span = (ta, ta);
    }

    /// PCF: the busy period is accounted up to `t` (the medium's busy time and its span, for
    /// the measured window's edges).
    #[inline]
    pub fn busy_to(&mut self, cx: &mut Ctx, t: Nanos) {
        if t > self.busy_span.1 {
            cx.counters.medium_busy_ns += (t - self.busy_span.1).0;
            self.busy_span.1 = t;
        }
    }

    /// The WiFi device of node `node`.
    #[inline]
    pub fn dev(&self, node: u32) -> DevId {
        self.devs[node as usize].0
    }

    /// How drops at node `node`'s device are accounted (the AP's to the destination station).
    #[inline]
    pub fn acct(&self, node: u32) -> Acct {
        self.devs[node as usize].1
    }

    /// Take back, from `c`, the airtime of the current busy period that lies after `t`: the
    /// counters then hold exactly the airtime on the air up to `t` (for each frame, and the
    /// medium's busy time). Applied to the warm-up snapshot and to the run's end.
    pub fn unspend_after(&self, t: Nanos, c: &mut crate::metrics::Counters) {
        let after = |start: Nanos, end: Nanos| end.0.saturating_sub(start.0.max(t.0));
        for ch in &self.charges {
            let ns = after(ch.start, ch.end);
            if ns == 0 {
                continue;
            }
            c.nodes[ch.node as usize].airtime_ns -= ns;
            if ch.station != NO_STATION {
                let sc = &mut c.stations[ch.station as usize];
                sc.airtime_ns -= ns;
                sc.air_dir_ns[ch.dir as usize] -= ns;
            }
        }
        c.medium_busy_ns -= after(self.busy_span.0, self.busy_span.1);
    }

    /// The busy period that started at `ta` lasts until `busy_end`: count the medium's busy
    /// time, remember the span (for the window's edges, see [`Medium::unspend_after`]) and
    /// schedule its end. Both MACs end their exchange-building here.
    pub fn busy_until(&mut self, cx: &mut Ctx, ta: Nanos, busy_end: Nanos) {
        cx.counters.medium_busy_ns += (busy_end - ta).0;
        self.busy_span = (ta, busy_end);
        cx.schedule(busy_end, Event::ExchangeEnd);
    }

    /// [`Medium::busy_until`] for an exchange whose end waits on the fate of its data frame
    /// next to Bluetooth (`Legacy::coex_data_end` schedules it).
    pub fn busy_deferred(&mut self, cx: &mut Ctx, ta: Nanos, busy_end: Nanos) {
        cx.counters.medium_busy_ns += (busy_end - ta).0;
        self.busy_span = (ta, busy_end);
    }

    /// The planned response (the last charge) will not be sent: the data frame it answers was
    /// lost. Its airtime is taken back and the busy period ends now.
    pub fn cut_response(&mut self, cx: &mut Ctx) {
        let r = self.charges.pop().expect("a response was planned");
        let ns = (r.end - r.start).0;
        let c = &mut cx.counters;
        c.nodes[r.node as usize].airtime_ns -= ns;
        let sc = &mut c.stations[r.station as usize];
        sc.airtime_ns -= ns;
        sc.air_dir_ns[r.dir as usize] -= ns;
        c.medium_busy_ns -= (self.busy_span.1 - cx.now).0;
        self.busy_span.1 = cx.now;
        cx.schedule(cx.now, Event::ExchangeEnd);
    }

    /// For a capture (`--pcap`): the beacon at the head of the busy period starting at `ta`,
    /// if there is one (its FCS good only when nothing else was on the air). Returns how many
    /// entries of `air` it took (0 or 1), for the MAC to skip before its own frames.
    #[cold]
    pub fn tap_beacon(&self, tap: &mut crate::pcap::Tap, ta: Nanos) -> usize {
        use crate::pcap::{Kind, Phy};
        if !self.dcf.beacon_in_air() {
            return 0;
        }
        let phy = Phy {
            start: ta,
            rate: self.air[0].rate,
            len: self.beacon_bytes,
            fcs_ok: self.air.len() == 1,
            snr_cdb: None,
            ampdu: None,
        };
        tap.air_frame(Kind::Beacon, phy);
        1
    }

    /// Count a beacon at the head of the busy period starting at `ta`; returns its end.
    pub fn put_beacon(&mut self, cx: &mut Ctx, ta: Nanos, d: Nanos, rate: TxRate) -> Nanos {
        self.charges.push(Charge { node: 0, station: NO_STATION, dir: 0, start: ta, end: ta + d });
        let nc = &mut cx.counters.nodes[0];
        nc.airtime_ns += d.0;
        nc.tx_attempts += 1;
        nc.beacons += 1;
        cx.counters.frames += 1;
        self.air.push(AirTx { node: 0, end: ta + d, rate });
        ta + d
    }

    /// A data PPDU goes on the air: its airtime and attempt are counted (to its node and its
    /// station); returns its end.
    pub fn put_frame(&mut self, cx: &mut Ctx, f: DataPpdu) -> Nanos {
        let DataPpdu { contender, node, station: s, start: ta, airtime: d, rate } = f;
        self.charges.push(Charge { node, station: s as u32, dir: (node != 0) as u8, start: ta, end: ta + d });
        let c = &mut cx.counters;
        let nc = &mut c.nodes[node as usize];
        nc.airtime_ns += d.0;
        nc.tx_attempts += 1;
        let sc = &mut c.stations[s];
        sc.airtime_ns += d.0;
        sc.air_dir_ns[(node != 0) as usize] += d.0;
        sc.tx_attempts += 1;
        c.frames += 1;
        self.air.push(AirTx { node: contender, end: ta + d, rate });
        ta + d
    }

    /// An HE MU PPDU of the AP (downlink OFDMA, `wifi/ht/ofdma.rs`) of contender `contender`
    /// goes on the air from `ta` for `d`: one frame on the medium; its airtime is counted to the
    /// AP and, per user, `shares` (station, ns) to the stations, with an attempt each. Returns
    /// its end.
    pub fn put_mu_frame(
        &mut self,
        cx: &mut Ctx,
        contender: u32,
        ta: Nanos,
        d: Nanos,
        rate: TxRate,
        shares: &[(u32, Nanos)],
    ) -> Nanos {
        let c = &mut cx.counters;
        c.nodes[0].airtime_ns += d.0;
        c.nodes[0].tx_attempts += 1;
        c.frames += 1;
        let mut left = d;
        for (i, &(s, share)) in shares.iter().enumerate() {
            // The last user takes the rounding remainder: the shares sum to the PPDU.
            let share = if i + 1 == shares.len() { left } else { share };
            left = left - share;
            self.charges.push(Charge { node: 0, station: s, dir: 0, start: ta, end: ta + share });
            let sc = &mut c.stations[s as usize];
            sc.airtime_ns += share.0;
            sc.air_dir_ns[0] += share.0;
            sc.tx_attempts += 1;
        }
        self.air.push(AirTx { node: contender, end: ta + d, rate });
        ta + d
    }

    /// Station `s` answers a DL MU PPDU (or a BlockAckReq after it) with a (Block)Ack of
    /// airtime `resp` from `start`: its airtime is counted (a lost one too: `acked` false);
    /// returns its end.
    pub fn mu_response(&mut self, cx: &mut Ctx, s: usize, start: Nanos, resp: Nanos, acked: bool) -> Nanos {
        self.charges.push(Charge { node: s as u32 + 1, station: s as u32, dir: 0, start, end: start + resp });
        let c = &mut cx.counters;
        c.nodes[s + 1].airtime_ns += resp.0;
        c.stations[s].airtime_ns += resp.0;
        c.stations[s].air_dir_ns[0] += resp.0;
        if !acked {
            c.stations[s].ack_errors += 1;
        }
        start + resp
    }

    /// A frame of the point coordinator's exchanges that is not data (CF-Poll, Null, CF-End,
    /// an ACK in a contention-free period), sent by WiFi node `node` for station `station`
    /// (`NO_STATION`: for no one) from `start` for `d`: its airtime is counted, and the node's
    /// attempt; a station's data attempts are not. Returns its end.
    pub fn put_control(&mut self, cx: &mut Ctx, node: u32, station: u32, dir: u8, start: Nanos, d: Nanos) -> Nanos {
        self.charges.push(Charge { node, station, dir, start, end: start + d });
        let c = &mut cx.counters;
        c.nodes[node as usize].airtime_ns += d.0;
        c.nodes[node as usize].tx_attempts += 1;
        if station != NO_STATION {
            let sc = &mut c.stations[station as usize];
            sc.airtime_ns += d.0;
            sc.air_dir_ns[dir as usize] += d.0;
        }
        c.frames += 1;
        start + d
    }

    /// The receiver of a decoded lone frame (of WiFi node `node`, to or from station `s`) that
    /// ended at `data_end` answers SIFS later with a (Block)Ack of airtime `resp`, sent by the
    /// station for downlink and by the AP for uplink: its airtime is counted (a lost one too),
    /// the end of the data PPDU is scheduled (`TxEnd`); returns the end of the response.
    pub fn respond(&mut self, cx: &mut Ctx, node: u32, s: usize, data_end: Nanos, sifs: Nanos, resp: Nanos) -> Nanos {
        let acker = if node == 0 { s + 1 } else { 0 };
        let start = data_end + sifs;
        self.charges.push(Charge {
            node: acker as u32,
            station: s as u32,
            dir: (node != 0) as u8,
            start,
            end: start + resp,
        });
        let c = &mut cx.counters;
        c.nodes[acker].airtime_ns += resp.0;
        c.stations[s].airtime_ns += resp.0;
        c.stations[s].air_dir_ns[(node != 0) as usize] += resp.0;
        if self.outcome == Outcome::AckLost {
            c.stations[s].ack_errors += 1;
        }
        cx.schedule(data_end, Event::TxEnd);
        data_end + sifs + resp
    }

    /// Count a collision against the station of every data frame in the air (not the beacon),
    /// but for contenders below `skip_below` (an 802.11ax AP's access categories when its frame
    /// is an MU PPDU or a Trigger, whose users the caller charges; 0 otherwise).
    pub fn count_collisions(&self, cx: &mut Ctx, skip_below: u32) {
        let beacon = self.dcf.beacon_in_air();
        for (i, a) in self.air.iter().enumerate() {
            if (i > 0 || !beacon) && a.node >= skip_below {
                let s = self.dcf.frame_station(a.node as usize) as usize;
                cx.counters.stations[s].collisions += 1;
            }
        }
    }
}
