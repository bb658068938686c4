//! The run's report: packet conservation across every component, and the result tables.

use super::{SimError, Simulation};
use crate::engine::Event;
use crate::metrics::{mean_std, Counters, Sample, SampleKind};
use crate::net::Node;
use crate::packet::PacketId;
use crate::phy::dsss::DsssRate;
use crate::qdisc::Qdisc;
use crate::results::{Conservation, FlowResult, NodeResult, RunResults, StationResult, Summary};
use crate::time::Nanos;

/// Round-trip statistics of a ping flow, in ms (nearest-rank percentiles).
struct RttStats {
    mean: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    n: u64,
}

impl RttStats {
    fn of(rtts: impl Iterator<Item = Nanos>) -> RttStats {
        let mut v: Vec<u64> = rtts.map(|r| r.0).collect();
        if v.is_empty() {
            return RttStats { mean: f64::NAN, p50: f64::NAN, p90: f64::NAN, p99: f64::NAN, max: f64::NAN, n: 0 };
        }
        v.sort_unstable();
        let n = v.len();
        // Nearest rank: the smallest value with at least p % of the samples at or below it.
        let rank = |p: u64| v[((p as usize * n).div_ceil(100)).max(1) - 1] as f64 / 1e6;
        RttStats {
            mean: v.iter().map(|&x| x as f64).sum::<f64>() / n as f64 / 1e6,
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: v[n - 1] as f64 / 1e6,
            n: n as u64,
        }
    }
}

impl Simulation {
    /// offered = delivered + dropped + still inside the system, per flow, and every live packet
    /// is found in exactly one place.
    pub(super) fn check_conservation(&self) -> Result<Conservation, SimError> {
        let mut located = vec![0u64; self.traffic.flows.len()];
        let mut count = |pkt: PacketId| located[self.cx.pkts.get(pkt).flow as usize] += 1;
        for iface in &self.net.devs {
            iface.qdisc.for_each_queued(&mut count);
        }
        // A frame whose receiver already has a copy is the sender's only; it is not in flight.
        let mut senders_copies = 0u64;
        senders_copies += self.wifi.for_each_held(&mut count);
        if let Some(bt) = self.bt.as_deref() {
            bt.for_each_held(&mut count);
        }
        for ev in self.cx.out.queue().pending() {
            if let Event::WireDeliver { pkt, .. } = ev {
                count(pkt);
            }
        }
        // A packet whose departure from a wire's FIFO is fixed but lies after the end is in
        // the FIFO and has its delivery scheduled: one packet (`Wire::commit`).
        for iface in &self.net.devs {
            for &(_, pkt) in iface.departures.iter() {
                located[self.cx.pkts.get(pkt).flow as usize] -= 1;
            }
        }
        let total_located: u64 = located.iter().sum::<u64>() + senders_copies;
        if total_located != self.cx.pkts.live_count() as u64 {
            return Err(SimError::Leak { live: self.cx.pkts.live_count() as u64, located: total_located });
        }
        let mut c = Conservation::default();
        for (f, fc) in self.cx.counters.flows.iter().enumerate() {
            let dropped = fc.drops_queue + fc.drops_retry;
            if fc.sent_packets != fc.received_packets + dropped + located[f] {
                return Err(SimError::Conservation {
                    flow: self.scn.flows[f].name.clone(),
                    sent: fc.sent_packets,
                    received: fc.received_packets,
                    dropped,
                    in_flight: located[f],
                });
            }
            c.offered += fc.sent_packets;
            c.delivered += fc.received_packets;
            c.dropped_queue += fc.drops_queue;
            c.dropped_retry += fc.drops_retry;
            c.in_flight += located[f];
        }
        c.per_flow_in_flight = located;
        Ok(c)
    }

    pub(super) fn results(&mut self, conservation: Conservation) -> RunResults {
        // The samples move into the results (a run is finished once): no second copy.
        let samples = std::mem::take(&mut self.rec.samples);
        let zero = Counters::new(self.traffic.flows.len(), self.scn.stations.len());
        let base = self.rec.at_warmup.as_ref().unwrap_or(&zero);
        let measured = self.end.saturating_sub(self.scn.run.warmup);
        let msecs = measured.as_secs_f64();
        let per_sec = |x: u64| if msecs > 0.0 { x as f64 / msecs } else { f64::NAN };
        // The airtime of a busy period still in progress counts up to the end of the run only.
        let mut at_end = self.cx.counters.clone();
        self.wifi.medium.unspend_after(self.end, &mut at_end);
        let c = &at_end;

        let sample_stats = |kind: SampleKind, index: u32| {
            mean_std(samples.iter().filter(|s| s.kind == kind && s.index == index).map(|s| s.goodput_bps / 1e6))
        };

        let mut flows = Vec::with_capacity(self.traffic.flows.len());
        for (f, cfg) in self.scn.flows.iter().enumerate() {
            let d = sub_flow(&c.flows[f], &base.flows[f]);
            let name = |n: Node| match n {
                Node::Server => "server".to_string(),
                Node::Ap => "ap".to_string(),
                Node::Station(i) => self.scn.stations[i as usize].name.clone(),
                Node::BtSlave(i) => self.scn.bluetooth[i as usize].name.clone(),
            };
            let rx = d.received_packets;
            let tcp = self.traffic.tcp[f].as_deref();
            let rtt = RttStats::of(self.rec.pings.iter().filter(|p| p.flow == f as u32).map(|p| p.rtt));
            flows.push(FlowResult {
                name: cfg.name.clone(),
                src: name(self.traffic.flows[f].src),
                dst: name(self.traffic.flows[f].dst),
                protocol: cfg.protocol.name().into(),
                goodput_mbps: per_sec(d.received_payload_bytes * 8) / 1e6,
                goodput_std_mbps: sample_stats(SampleKind::Flow, f as u32).1,
                sent_packets: d.sent_packets,
                received_packets: rx,
                lost_packets: d.drops_queue + d.drops_retry,
                drops_queue: d.drops_queue,
                drops_retry: d.drops_retry,
                refused_sends: d.refused_sends,
                in_flight: conservation.per_flow_in_flight[f],
                delay_mean_ms: if rx > 0 { d.delay_sum_ns as f64 / rx as f64 / 1e6 } else { f64::NAN },
                delay_max_ms: if rx > 0 { self.rec.delay_max_ns[f] as f64 / 1e6 } else { f64::NAN },
                queue_delay_mean_ms: if rx > 0 { d.queue_delay_sum_ns as f64 / rx as f64 / 1e6 } else { f64::NAN },
                rtt_mean_ms: rtt.mean,
                rtt_p50_ms: rtt.p50,
                rtt_p90_ms: rtt.p90,
                rtt_p99_ms: rtt.p99,
                rtt_max_ms: rtt.max,
                rtt_samples: rtt.n,
                tcp_retransmits: tcp.map_or(0, |c| c.counts()[0] - c.at_warmup[0]),
                tcp_fast_recoveries: tcp.map_or(0, |c| c.counts()[1] - c.at_warmup[1]),
                tcp_rtos: tcp.map_or(0, |c| c.counts()[2] - c.at_warmup[2]),
                tcp_cwnd_end: tcp.map_or(0, |c| c.sender.cwnd()),
                tcp_srtt_ms: tcp.and_then(|c| c.sender.rtt().srtt()).map_or(f64::NAN, |r| r.0 as f64 / 1e6),
                tcp_files_done: tcp.map_or(0, |c| c.files_done),
                tcp_file_time_s: tcp
                    .filter(|c| c.files_done > 0)
                    .map_or(f64::NAN, |c| c.file_time_sum.as_secs_f64() / c.files_done as f64),
            });
        }

        let station_air: u64 =
            (0..self.scn.stations.len()).map(|s| c.stations[s].airtime_ns - base.stations[s].airtime_ns).sum();
        let station_sample_mean = |s: usize, f: fn(&Sample) -> f64| {
            mean_std(samples.iter().filter(|x| x.kind == SampleKind::Station && x.index == s as u32).map(f)).0
        };
        let down_air_total: u64 =
            (0..self.scn.stations.len()).map(|s| c.stations[s].air_dir_ns[0] - base.stations[s].air_dir_ns[0]).sum();
        let mut stations = Vec::with_capacity(self.scn.stations.len());
        let mut rates = Vec::new();
        let mut aggregates = Vec::new();
        for (s, st) in self.scn.stations.iter().enumerate() {
            let d = sub_station(&c.stations[s], &base.stations[s]);
            let mut mean_rate = [f64::NAN; 2];
            for (dir, name) in [(0usize, "down"), (1, "up")] {
                let total: u64 = d.attempts_by_rate[dir].iter().sum();
                let mut weighted = 0.0;
                for (ri, r) in DsssRate::ALL.iter().enumerate() {
                    let k = d.attempts_by_rate[dir][ri];
                    weighted += k as f64 * r.mbps();
                    if k > 0 {
                        rates.push(crate::results::RateRow {
                            station: st.name.clone(),
                            direction: name,
                            rate_mbps: r.mbps(),
                            mcs: -1,
                            attempts: k,
                            acked: d.acked_by_rate[dir][ri],
                            share: k as f64 / total as f64,
                        });
                    }
                }
                if total > 0 {
                    mean_rate[dir] = weighted / total as f64;
                }
            }
            let (mut up, mut down, mut qd_sum, mut qd_n) = (0u64, 0u64, 0u128, 0u64);
            for (f, fs) in self.traffic.flows.iter().enumerate() {
                let fd = sub_flow(&c.flows[f], &base.flows[f]);
                if fs.src == Node::Station(s as u32) {
                    up += fd.received_payload_bytes;
                }
                if fs.dst == Node::Station(s as u32) {
                    down += fd.received_payload_bytes;
                }
                if fs.stations.contains(&Some(s as u32)) {
                    qd_sum += fd.queue_delay_sum_ns;
                    qd_n += fd.received_packets;
                }
            }
            let mut ampdu_mean = [f64::NAN; 2];
            if let Some(cell) = &self.scn.cell.ht {
                for (dir, name) in [(0, "down"), (1, "up")] {
                    let h = &d.ampdu_mpdus[dir];
                    let total: u64 = h.0.iter().sum();
                    let mpdus: u64 = h.0.iter().enumerate().map(|(k, &c)| k as u64 * c).sum();
                    if total > 0 {
                        ampdu_mean[dir] = mpdus as f64 / total as f64;
                    }
                    for (k, &count) in h.0.iter().enumerate().filter(|(_, c)| **c > 0) {
                        aggregates.push(crate::results::AggregateRow {
                            station: st.name.clone(),
                            direction: name,
                            mpdus: k as u32,
                            count,
                            share: count as f64 / total as f64,
                        });
                    }
                }
                // The MCS used per PPDU attempt: the rates table and the attempt-weighted mean.
                for (dir, name) in [(0, "down"), (1, "up")] {
                    let total: u64 = d.mcs_attempts[dir].iter().sum();
                    let mut weighted = 0.0;
                    for (m, &k) in d.mcs_attempts[dir].iter().enumerate().filter(|(_, k)| **k > 0) {
                        let mbps = match st.ht.and_then(|h| h.link) {
                            // A VHT/HE index, or an HT station with its own width.
                            Some(t) => t.with_mcs(m as u8).map_or(f64::NAN, |t| t.mbps()),
                            None => crate::phy::ht::HtMcs::ALL[m].mbps(cell.width, cell.gi),
                        };
                        weighted += mbps * k as f64;
                        rates.push(crate::results::RateRow {
                            station: st.name.clone(),
                            direction: name,
                            rate_mbps: mbps,
                            mcs: m as i32,
                            attempts: k,
                            acked: d.mcs_acked[dir][m],
                            share: k as f64 / total as f64,
                        });
                    }
                    mean_rate[dir] = if total > 0 { weighted / total as f64 } else { f64::NAN };
                }
            }
            // A station-to-itself flow is impossible, so up + down counts each flow once.
            stations.push(StationResult {
                name: st.name.clone(),
                rate_mbps: match (&self.scn.cell.ht, st.ht) {
                    (_, Some(h)) if h.link.is_some() => h.link.map_or(f64::NAN, |t| t.mbps()),
                    (Some(cell), Some(h)) => h.mcs.mbps(cell.width, cell.gi),
                    _ => st.rate.mbps(),
                },
                goodput_mbps: per_sec((up + down) * 8) / 1e6,
                goodput_std_mbps: sample_stats(SampleKind::Station, s as u32).1,
                goodput_up_mbps: per_sec(up * 8) / 1e6,
                goodput_down_mbps: per_sec(down * 8) / 1e6,
                airtime_s: d.airtime_ns as f64 * 1e-9,
                airtime_share: per_sec(d.airtime_ns) * 1e-9,
                tx_frames: d.tx_frames,
                tx_attempts: d.tx_attempts,
                retries: d.retries,
                collisions: d.collisions,
                drops: d.drops_queue + d.drops_retry,
                drops_queue: d.drops_queue,
                drops_retry: d.drops_retry,
                queue_delay_mean_ms: if qd_n > 0 { qd_sum as f64 / qd_n as f64 / 1e6 } else { f64::NAN },
                rate_control: st.rate_control.name().to_string(),
                mean_rate_down_mbps: mean_rate[0],
                mean_rate_up_mbps: mean_rate[1],
                data_errors: d.data_errors,
                ack_errors: d.ack_errors,
                occupancy: if station_air > 0 { d.airtime_ns as f64 / station_air as f64 } else { f64::NAN },
                snr_mean_db: station_sample_mean(s, |x| x.snr_db),
                estimate_mean_mbps: station_sample_mean(s, |x| x.estimate_bps / 1e6),
                rel_goodput_end: self
                    .wifi
                    .medium
                    .radio()
                    .monitor()
                    .map_or(f64::NAN, |m| m.rel(s) as f64 / crate::qdisc::REL_ONE as f64),
                airtime_down_s: d.air_dir_ns[0] as f64 * 1e-9,
                airtime_up_s: d.air_dir_ns[1] as f64 * 1e-9,
                airtime_down_share: if down_air_total > 0 {
                    d.air_dir_ns[0] as f64 / down_air_total as f64
                } else {
                    f64::NAN
                },
                ampdu_mean_down: ampdu_mean[0],
                ampdu_mean_up: ampdu_mean[1],
            });
        }

        let mut nodes = Vec::with_capacity(self.scn.stations.len() + 2);
        for n in 0..c.nodes.len() {
            let (cur, b) = (&c.nodes[n], &base.nodes[n]);
            let air = cur.airtime_ns - b.airtime_ns;
            nodes.push(NodeResult {
                name: if n == 0 { "ap".into() } else { self.scn.stations[n - 1].name.clone() },
                airtime_s: air as f64 * 1e-9,
                airtime_share: per_sec(air) * 1e-9,
                tx_attempts: cur.tx_attempts - b.tx_attempts,
                beacons: cur.beacons - b.beacons,
            });
        }

        let (bluetooth, coexistence) = self.bluetooth_rows(msecs);
        let (cfp, polls) = self.pcf_rows(c, base);
        let ofdma = self.ofdma_rows(c, base);

        let total_payload: u64 = (0..self.traffic.flows.len())
            .map(|f| c.flows[f].received_payload_bytes - base.flows[f].received_payload_bytes)
            .sum();
        let warnings = self.min_rate_warnings(&stations);
        let (mac_stations, mac_txqs) = if self.mac_stats { self.mac_stats_rows() } else { (Vec::new(), Vec::new()) };
        RunResults {
            summary: Summary {
                sim_seconds: self.end.as_secs_f64(),
                measured_seconds: msecs,
                wall_seconds: self.wall.as_secs_f64(),
                events: self.cx.out.queue().processed(),
                seed: self.scn.run.seed,
                total_goodput_mbps: per_sec(total_payload * 8) / 1e6,
                frames: c.frames - base.frames,
                medium_busy_share: per_sec(c.medium_busy_ns - base.medium_busy_ns) * 1e-9,
                conservation,
            },
            stations,
            flows,
            nodes,
            rates,
            aggregates,
            bluetooth,
            coexistence,
            cfp,
            polls,
            ofdma,
            mac_stations,
            mac_txqs,
            demotions: self.demotion_rows(),
            pings: self
                .rec
                .pings
                .iter()
                .map(|p| crate::results::PingRow {
                    flow: self.scn.flows[p.flow as usize].name.clone(),
                    seq: p.seq,
                    time_s: p.time.as_secs_f64(),
                    rtt_ms: p.rtt.0 as f64 / 1e6,
                })
                .collect(),
            samples,
            sample_interval: self.scn.run.sample_interval,
            interfaces: {
                let secs = self.scn.run.sample_interval.as_secs_f64();
                let names = self.interface_names();
                self.rec
                    .iface_samples
                    .iter()
                    .map(|s| crate::results::InterfaceRow {
                        time_s: s.time.as_secs_f64(),
                        node: names[s.dev as usize].0.clone(),
                        dev: names[s.dev as usize].1.to_string(),
                        bytes_per_second: s.bytes as f64 / secs,
                        packets_per_second: s.packets as f64 / secs,
                        drops: s.drops,
                    })
                    .collect()
            },
            tc: self.tc_reports(),
            warnings,
        }
    }
}

fn sub_flow(a: &crate::metrics::FlowCounters, b: &crate::metrics::FlowCounters) -> crate::metrics::FlowCounters {
    crate::metrics::FlowCounters {
        sent_packets: a.sent_packets - b.sent_packets,
        received_packets: a.received_packets - b.received_packets,
        received_payload_bytes: a.received_payload_bytes - b.received_payload_bytes,
        drops_queue: a.drops_queue - b.drops_queue,
        drops_retry: a.drops_retry - b.drops_retry,
        refused_sends: a.refused_sends - b.refused_sends,
        delay_sum_ns: a.delay_sum_ns - b.delay_sum_ns,
        queue_delay_sum_ns: a.queue_delay_sum_ns - b.queue_delay_sum_ns,
    }
}

fn sub_station(
    a: &crate::metrics::StationCounters,
    b: &crate::metrics::StationCounters,
) -> crate::metrics::StationCounters {
    crate::metrics::StationCounters {
        airtime_ns: a.airtime_ns - b.airtime_ns,
        tx_attempts: a.tx_attempts - b.tx_attempts,
        tx_frames: a.tx_frames - b.tx_frames,
        retries: a.retries - b.retries,
        collisions: a.collisions - b.collisions,
        drops_queue: a.drops_queue - b.drops_queue,
        drops_retry: a.drops_retry - b.drops_retry,
        data_errors: a.data_errors - b.data_errors,
        ack_errors: a.ack_errors - b.ack_errors,
        attempts_by_rate: std::array::from_fn(|d| {
            std::array::from_fn(|r| a.attempts_by_rate[d][r] - b.attempts_by_rate[d][r])
        }),
        acked_by_rate: std::array::from_fn(|d| std::array::from_fn(|r| a.acked_by_rate[d][r] - b.acked_by_rate[d][r])),
        air_dir_ns: std::array::from_fn(|d| a.air_dir_ns[d] - b.air_dir_ns[d]),
        ampdu_mpdus: std::array::from_fn(|d| {
            crate::metrics::AmpduHist(std::array::from_fn(|k| a.ampdu_mpdus[d][k] - b.ampdu_mpdus[d][k]))
        }),
        acked_mpdus: a.acked_mpdus - b.acked_mpdus,
        mcs_attempts: std::array::from_fn(|d| std::array::from_fn(|k| a.mcs_attempts[d][k] - b.mcs_attempts[d][k])),
        mcs_acked: std::array::from_fn(|d| std::array::from_fn(|k| a.mcs_acked[d][k] - b.mcs_acked[d][k])),
    }
}

impl Simulation {
    /// The Bluetooth tables over the measured window: per slave and direction, and the WLAN's
    /// frames next to the piconet per station and direction.
    /// The OFDMA table (empty without `[ap] ofdma`): each station's part of the multi-user
    /// exchanges over the measured window (`c` the counters at the end, `base` at the warm-up's
    /// end, or zero).
    fn ofdma_rows(&self, c: &Counters, base: &Counters) -> Vec<crate::results::OfdmaRow> {
        let zero = crate::metrics::OfdmaStationCounters::default();
        let mean = |tones: u64, n: u64| if n > 0 { tones as f64 / n as f64 } else { f64::NAN };
        c.ofdma
            .stations
            .iter()
            .zip(&self.scn.stations)
            .enumerate()
            .map(|(s, (x, st))| {
                let y = base.ofdma.stations.get(s).copied().unwrap_or(zero);
                let (dl, ul) = (x.dl_ppdus - y.dl_ppdus, x.ul_tb_ppdus - y.ul_tb_ppdus);
                crate::results::OfdmaRow {
                    station: st.name.clone(),
                    dl_mu_ppdus: dl,
                    dl_mpdus: x.dl_mpdus - y.dl_mpdus,
                    dl_ru_tones_mean: mean(x.dl_tones - y.dl_tones, dl),
                    ul_triggers: x.ul_triggers - y.ul_triggers,
                    ul_tb_ppdus: ul,
                    ul_qos_null: x.ul_qos_null - y.ul_qos_null,
                    ul_lost: x.ul_lost - y.ul_lost,
                    ul_mpdus: x.ul_mpdus - y.ul_mpdus,
                    ul_ru_tones_mean: mean(x.ul_tones - y.ul_tones, ul),
                }
            })
            .collect()
    }

    /// The PCF tables (empty outside a PCF cell): the CFPs that began in the measured window,
    /// and each station's polls over it (`c` the counters at the end, `base` at the warm-up's
    /// end, or zero).
    fn pcf_rows(&self, c: &Counters, base: &Counters) -> (Vec<crate::results::CfpRow>, Vec<crate::results::PollRow>) {
        use crate::results::{CfpRow, PollRow};
        let crate::wifi::Mac::Legacy(l) = &self.wifi.mac else { return (Vec::new(), Vec::new()) };
        let Some(pc) = l.cfp.as_deref() else { return (Vec::new(), Vec::new()) };
        let warmup = self.scn.run.warmup;
        let cfp = pc
            .records
            .iter()
            .filter(|r| r.start >= warmup && r.start < self.end)
            .map(|r| {
                let done = r.end != Nanos::ZERO && r.end <= self.end;
                let end = if done { r.end } else { self.end };
                CfpRow {
                    tbtt_s: r.tbtt.as_secs_f64(),
                    start_s: r.start.as_secs_f64(),
                    duration_ms: (end - r.start).0 as f64 / 1e6,
                    polls: r.polls,
                    data_down: r.data_down,
                    data_up: r.data_up,
                    beacons: r.beacons,
                    ended: if !done {
                        "run"
                    } else if r.idle {
                        "idle"
                    } else {
                        "full"
                    }
                    .to_string(),
                }
            })
            .collect();
        let zero = crate::metrics::PcfStationCounters::default();
        let polls = self
            .scn
            .stations
            .iter()
            .enumerate()
            .map(|(s, st)| {
                let x = c.pcf.stations[s];
                let y = base.pcf.stations.get(s).copied().unwrap_or(zero);
                PollRow {
                    station: st.name.clone(),
                    cf_pollable: st.cf_pollable as u64,
                    polls: x.polls - y.polls,
                    data_down: x.data_down - y.data_down,
                    data_up: x.data_up - y.data_up,
                    nulls: x.nulls - y.nulls,
                    unanswered: x.unanswered - y.unanswered,
                }
            })
            .collect();
        (cfp, polls)
    }

    /// The scenario's warnings, and one per station whose `min_rate` (an airtime policy of
    /// mac80211's scheduler) its measured downlink goodput fell short of by more than 1 %.
    /// mac80211's statistics as the kernel keeps them at the end of the run (whole run): per
    /// station its airtime (`iw station dump`, debugfs `airtime`), per station and TID its FQ-MAC
    /// counters (debugfs `aqm`). Empty without FQ-MAC at the AP.
    fn mac_stats_rows(&self) -> (Vec<crate::results::MacStationRow>, Vec<crate::results::MacTxqRow>) {
        use crate::mac80211::{Ac, StationId, TinId, NUM_TIDS};
        let Some(d) = self.wifi.ap_mac80211() else { return (Vec::new(), Vec::new()) };
        let crate::wifi::ht::Source::Fq(fq) = &d.src else { return (Vec::new(), Vec::new()) };
        let mut stations = Vec::with_capacity(self.scn.stations.len());
        let mut txqs = Vec::new();
        for (i, st) in self.scn.stations.iter().enumerate() {
            let sta = StationId(i as u16);
            let a = d.sched.station(sta);
            let mac = st.mac.unwrap_or_else(|| crate::pcap::wifi_mac(i as u32 + 1));
            let mac = mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
            stations.push(crate::results::MacStationRow {
                station: st.name.clone(),
                mac,
                tx_airtime_us: a.tx_airtime_us.iter().sum(),
                rx_airtime_us: a.rx_airtime_us.iter().sum(),
                airtime_weight: a.weight,
                deficit_vo_us: a.deficit_us[Ac::Vo.index()],
                deficit_vi_us: a.deficit_us[Ac::Vi.index()],
                deficit_be_us: a.deficit_us[Ac::Be.index()],
                deficit_bk_us: a.deficit_us[Ac::Bk.index()],
                aql_pending_us: Ac::ALL.iter().map(|&ac| d.aql.pending(sta, ac)).sum(),
            });
            for tid in 0..NUM_TIDS as u8 {
                let tin = TinId::new(sta, tid);
                let t = fq.tin_stats(tin);
                txqs.push(crate::results::MacTxqRow {
                    station: st.name.clone(),
                    tid: tid as u32,
                    ac: tin.ac().index() as u32,
                    backlog_bytes: t.backlog_bytes,
                    backlog_packets: t.backlog_packets,
                    flows: t.flows,
                    drops: t.drops,
                    marks: t.ecn_marks,
                    overlimit: t.overlimit,
                    collisions: t.collisions,
                    tx_bytes: t.tx_bytes,
                    tx_packets: t.tx_packets,
                });
            }
        }
        (stations, txqs)
    }

    /// The soft admission control's demotions per flow through the AP; empty when it is off.
    fn demotion_rows(&self) -> Vec<crate::results::DemotionRow> {
        let Some(h) = self.wifi.ht() else { return Vec::new() };
        h.demotions
            .iter()
            .zip(&self.scn.flows)
            .enumerate()
            .map(|(f, (&(demotions, demoted_packets), cfg))| crate::results::DemotionRow {
                flow: cfg.name.clone(),
                tid: h.flow_tid[f] as u32,
                demotions,
                demoted_packets,
            })
            .collect()
    }

    fn min_rate_warnings(&self, stations: &[crate::results::StationResult]) -> Vec<String> {
        let mut out = self.scn.warnings.clone();
        for (i, (st, r)) in self.scn.stations.iter().zip(stations).enumerate() {
            let Some(min) = st.ht.map(|h| h.min_rate_bps).filter(|&m| m > 0) else { continue };
            let min_mbps = min as f64 / 1e6;
            if r.goodput_down_mbps < 0.99 * min_mbps {
                out.push(format!(
                    "station[{i}].min_rate: warning: not met: {} received {:.3} Mb/s of its {min_mbps} Mb/s minimum \
                     (not feasible on its link beside the others, or it had less to receive)",
                    st.name, r.goodput_down_mbps
                ));
            }
        }
        out
    }

    fn bluetooth_rows(&self, msecs: f64) -> (Vec<crate::results::BtLinkRow>, Vec<crate::results::CoexRow>) {
        use crate::results::{BtLinkRow, CoexRow};
        let (Some(bt), Some(coex)) = (self.bt.as_deref(), self.cx.coex.as_deref()) else {
            return (Vec::new(), Vec::new());
        };
        let dirs = ["down", "up"];
        let slots = (msecs / crate::bluetooth::SLOT.as_secs_f64()).max(1.0);
        let mut links = Vec::new();
        for (i, l) in bt.links.iter().enumerate() {
            let types: Vec<&str> = l.types.iter().map(|t| t.name()).collect();
            for (d, dir) in dirs.iter().enumerate() {
                let cur = l.stats[d];
                let b = bt.at_warmup.as_ref().map_or(Default::default(), |w| w.0[i][d]);
                links.push(BtLinkRow {
                    name: l.name.clone(),
                    direction: (*dir).into(),
                    packet_types: types.join(" "),
                    l2cap_mbps: (cur.bytes_acked - b.bytes_acked) as f64 * 8.0 / msecs / 1e6,
                    data_packets: cur.data_packets - b.data_packets,
                    retransmissions: cur.retransmissions - b.retransmissions,
                    empty_packets: cur.empty_packets - b.empty_packets,
                    slot_share: (cur.slots - b.slots) as f64 / slots,
                    airtime_s: (cur.airtime_ns - b.airtime_ns) as f64 * 1e-9,
                    hit_by_wlan: cur.hit_by_wlan - b.hit_by_wlan,
                    lost_errors: cur.lost_errors - b.lost_errors,
                    duplicates: cur.duplicates - b.duplicates,
                    delivered: cur.delivered - b.delivered,
                });
            }
        }
        let zero = crate::coex::CoexCounters {
            wlan_data_hit: vec![[0; 2]; self.scn.stations.len()],
            wlan_ack_hit: vec![[0; 2]; self.scn.stations.len()],
            wlan_data_checked: vec![[0; 2]; self.scn.stations.len()],
            wlan_ack_checked: vec![[0; 2]; self.scn.stations.len()],
        };
        let base = bt.at_warmup.as_ref().map_or(&zero, |w| &w.1);
        let c = &coex.counters;
        let mut rows = Vec::new();
        for (s, st) in self.scn.stations.iter().enumerate() {
            for (d, dir) in dirs.iter().enumerate() {
                rows.push(CoexRow {
                    station: st.name.clone(),
                    direction: (*dir).into(),
                    data_frames: c.wlan_data_checked[s][d] - base.wlan_data_checked[s][d],
                    data_hit_by_bt: c.wlan_data_hit[s][d] - base.wlan_data_hit[s][d],
                    acks: c.wlan_ack_checked[s][d] - base.wlan_ack_checked[s][d],
                    acks_hit_by_bt: c.wlan_ack_hit[s][d] - base.wlan_ack_hit[s][d],
                });
            }
        }
        (links, rows)
    }
}
