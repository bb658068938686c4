//! The one wireless medium every MAC of the cell shares: channel access, the frames in the
//! air during the current busy period and what became of them ([`super::air`]), the IFS rules,
//! and the radio side of reception (each
//! station's channel, the error model, the per-transmitter error draws, and the SNR reports
//! the AP's channel monitor takes).

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ctx::Ctx;
use crate::mac::dcf::Dcf;
use crate::monitor::Monitor;
use crate::net::{Acct, DevId};
use crate::phy::error_rate::ErrorModel;
use crate::radio::Channel;
use crate::time::Nanos;

use super::air::{AirTx, Outcome, TxRate};
use super::ifs::IfsRules;

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
    pub channels: Vec<Option<Channel>>,
    pub errors: ErrorModel,
    /// Per WiFi node: frame and ACK error draws.
    pub err_rng: Vec<Xoshiro256PlusPlus>,
    /// The AP's channel monitor (when any station has radio conditions).
    pub monitor: Option<Monitor>,
    pub report: Option<Report>,
    /// Per station: the flows it is the destination of (their `chan` follows its estimate).
    pub flows_to: Vec<Vec<u32>>,
}

impl Radio {
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

/// The shared medium: channel access, the frames of the busy period, reception.
pub struct Medium {
    pub dcf: Dcf,
    pub air: Vec<AirTx>,
    /// Outcome of the current busy period.
    pub outcome: Outcome,
    pub radio: Radio,
    pub ifs: IfsRules,
    pub beacon_bytes: u32,
    /// Per WiFi node: its WiFi device, and how the device's drops are accounted (both from
    /// the topology).
    pub devs: Vec<(DevId, Acct)>,
    /// The airtime charged for the frames of the current busy period, each with its interval,
    /// and the busy period's own interval: airtime is counted whole when an exchange starts, so
    /// at a window's edge (the warm-up's end, the run's end) the part beyond the edge is taken
    /// back ([`Medium::unspend_after`]). Cleared with `air`.
    pub charges: Vec<Charge>,
    pub busy_span: (Nanos, Nanos),
    /// Bluetooth beside the cell: the lone frame's receiver decoded it and its ACK is on the
    /// air, whose fate is known at its end (`Legacy::coex_ack_end`).
    pub ack_pending: bool,
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
        cx.schedule(busy_end, crate::engine::Event::ExchangeEnd);
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
        cx.schedule(cx.now, crate::engine::Event::ExchangeEnd);
    }

    /// For a capture (`--pcap`): the beacon at the head of the busy period starting at `ta`,
    /// if there is one (its FCS good only when nothing else was on the air). Returns how many
    /// entries of `air` it took (0 or 1), for the MAC to skip before its own frames.
    #[cold]
    pub fn tap_beacon(&self, tap: &mut crate::pcap::Tap, ta: Nanos) -> usize {
        use crate::pcap::{Kind, Phy};
        if !self.dcf.medium.beacon_in_air {
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

    /// A data PPDU of contender `contender` (WiFi node `node`) to or from station `s` goes on
    /// the air at `ta` for `d`: its airtime and attempt are counted; returns its end.
    #[allow(clippy::too_many_arguments)]
    pub fn put_frame(
        &mut self,
        cx: &mut Ctx,
        contender: u32,
        node: u32,
        s: usize,
        ta: Nanos,
        d: Nanos,
        rate: TxRate,
    ) -> Nanos {
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
        cx.schedule(data_end, crate::engine::Event::TxEnd);
        data_end + sifs + resp
    }

    /// Count a collision against the station of every data frame in the air (not the beacon).
    pub fn count_collisions(&self, cx: &mut Ctx) {
        let beacon = self.dcf.medium.beacon_in_air;
        for (i, a) in self.air.iter().enumerate() {
            if i > 0 || !beacon {
                let s = self.dcf.nodes[a.node as usize].frame_station as usize;
                cx.counters.stations[s].collisions += 1;
            }
        }
    }
}
