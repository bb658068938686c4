//! The simulated world: one AP, its stations, a server behind the AP, and the packets between
//! them. Every model is a state machine handed `now`; this file owns the clock and routes events.
//!
//! Interfaces (each with a queueing discipline):
//!   0         the AP's wlan0 (downlink, frames to stations)
//!   1..=N     station i's wlan0 (uplink, frames to the AP)
//!   N+1       the AP's eth0 (towards the server)
//!   N+2       the server's eth0 (towards the AP)
//! WiFi nodes: 0 is the AP, i in 1..=N is station i-1.

use std::time::{Duration, Instant};

mod ht;

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::engine::{stream, Event, EventQueue, StreamKind};
use crate::mac::dcf::{Dcf, DcfParams};
use crate::mac::rate::{RateAlgo, RateCtl};
use crate::monitor::{Monitor, MonitorConfig};
use crate::phy::error::{ErrMode, ErrorModel};
use crate::radio::{Channel, Dir};
use crate::metrics::{mean_std, Counters, Sample, SampleKind};
use crate::packet::{Packet, PacketId, Packets};
use crate::phy::dsss::{self, DsssRate, Preamble};
use crate::packet::FlowKey;
use crate::qdisc::{Enq, QCtx, Qdisc, QdiscImpl};
use crate::results::{FlowResult, NodeResult, RunResults, StationResult, Summary, Conservation};
use crate::scenario::tc_trees;
use crate::tcp::sender::{AppLimit, TcpSender};
use crate::tcp::{Ack, Segment, TcpConfig, TcpReceiver};
use crate::scenario::{CollisionDefer, EifsRule, Endpoint, FlowRate, Protocol, RateControl, Scenario, UDP_IP_OVERHEAD};
use crate::time::Nanos;
use crate::traffic::{cbr_send_time, SATURATE_BACKLOG, SATURATE_BACKLOG_HT};

/// Bytes a packet occupies on the wire beyond its IP datagram: Ethernet header 14, FCS 4,
/// preamble and SFD 8, inter-frame gap 12.
pub const ETHERNET_WIRE_OVERHEAD: u32 = 38;

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    #[error("packet conservation violated for flow {flow}: sent {sent} != received {received} + dropped {dropped} + in flight {in_flight}")]
    Conservation { flow: String, sent: u64, received: u64, dropped: u64, in_flight: u64 },
    #[error("packet arena holds {live} packets but {located} were found in queues, MACs and links")]
    Leak { live: u64, located: u64 },
    #[error("the simulation has already finished")]
    Finished,
    #[error("a tc script does not build:\n{0}")]
    Tc(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Server,
    Ap,
    Station(u32),
}

#[derive(Clone, Copy, Debug)]
enum Link {
    /// Sends over the air; the WiFi node index.
    Wifi(u32),
    /// Serialises onto the wire and delivers to this node.
    Wire(Node),
}

struct Iface {
    qdisc: QdiscImpl,
    link: Link,
    /// Wired: a packet is being serialised.
    busy: bool,
    /// Saturating flows whose first hop this is.
    saturate_flows: Vec<u32>,
    /// Pending qdisc watchdog.
    wake_at: Option<Nanos>,
}

struct FlowState {
    /// Send-time jitter draws (CBR flows with a jitter).
    rng: Xoshiro256PlusPlus,
    jitter: Nanos,
    src: Node,
    dst: Node,
    first_hop: u32,
    saturate: bool,
    active: bool,
    stop: Nanos,
    /// Saturating: packets of this flow in the first-hop queue.
    outstanding: u32,
    /// Station the flow belongs to for per-station figures (src or dst), if any.
    stations: [Option<u32>; 2],
}

/// Transmission in the air in the current busy period.
#[derive(Clone, Copy)]
struct AirTx {
    node: u32,
    end: Nanos,
    rate: DsssRate,
}

/// What became of the busy period's single data frame (or why there was none alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Data decoded and its ACK decoded.
    Success,
    /// Data decoded (the receiver has it) but the ACK was lost: the sender retries.
    AckLost,
    /// The data frame was not decoded: no ACK.
    DataLost,
    /// Two or more frames overlapped (or a beacon alone: nothing to acknowledge).
    Collision,
}

/// The paper's calibration measurement (Garroppo et al. 4.2): goodput n L / tau over
/// consecutive blocks of n received packets of one flow, after the warm-up.
struct BlockMeter {
    flow: u32,
    n: u32,
    count: u32,
    bytes: u64,
    start: Option<Nanos>,
    goodputs: Vec<f64>,
}

impl BlockMeter {
    fn on_receive(&mut self, now: Nanos, payload: u32) {
        let Some(start) = self.start else {
            // The first packet opens the first block: tau is measured from its arrival.
            self.start = Some(now);
            return;
        };
        self.count += 1;
        self.bytes += payload as u64;
        if self.count == self.n {
            self.goodputs.push(self.bytes as f64 * 8.0 / (now - start).as_secs_f64());
            self.count = 0;
            self.bytes = 0;
            self.start = Some(now);
        }
    }
}

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

/// A TCP connection: both ends' state machines, and the one timer event armed for them.
struct TcpConn {
    sender: TcpSender,
    receiver: TcpReceiver,
    /// The instant of the armed `TcpTimer` (the earlier of the two ends' timers).
    armed: Option<Nanos>,
    gen: u64,
    /// In-order bytes the receiver has delivered to its application.
    delivered: u64,
    /// Retransmissions, fast recoveries and RTOs at the end of the warm-up (the results count
    /// the measured window only).
    at_warmup: [u64; 3],
}

impl TcpConn {
    /// Retransmissions, fast recoveries and RTOs so far.
    fn counts(&self) -> [u64; 3] {
        let s = self.sender.stats();
        [s.fast_retransmits + s.timeout_retransmits, s.fast_recoveries, s.rtos]
    }
}

/// One answered ping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PingSample {
    /// The ping (request) flow.
    pub flow: u32,
    pub seq: u64,
    /// When the reply arrived.
    pub time: Nanos,
    pub rtt: Nanos,
}

/// An SNR report the AP's channel monitor takes when the exchange ends.
#[derive(Clone, Copy)]
struct Report {
    station: u32,
    snr_cdb: i32,
}

pub struct Simulation {
    scn: Scenario,
    now: Nanos,
    end: Nanos,
    queue: EventQueue,
    pkts: Packets,
    /// Header fields of each flow's packets (classifiers, flow hashes).
    keys: Vec<FlowKey>,
    /// Packets dropped by a qdisc during the current operation (reused buffer).
    dropped: Vec<PacketId>,
    /// Per flow: relative goodput of its WiFi destination, as the channel monitor sees it
    /// (`QCtx::chan`).
    chan: Vec<u32>,
    ifaces: Vec<Iface>,
    dcf: Dcf,
    /// 802.11n cells: PHY settings and every node's driver queues (None: 802.11b).
    ht: Option<Box<ht::Ht>>,
    flows: Vec<FlowState>,
    preamble: Preamble,
    lowest_basic: DsssRate,
    /// ACK airtime and rate answering a data frame at each DSSS rate (index `DsssRate as usize`).
    ack_by_rate: [Nanos; 4],
    ack_rate: [DsssRate; 4],
    air: Vec<AirTx>,
    /// Outcome of the current busy period.
    outcome: Outcome,
    /// Per station: its radio channel (None: perfect, no frame errors).
    channels: Vec<Option<Channel>>,
    errors: ErrorModel,
    /// Per WiFi node: frame and ACK error draws.
    err_rng: Vec<Xoshiro256PlusPlus>,
    /// Rate controllers: `s` for the AP's link to station s, `n + s` for station s's own.
    rate_ctl: Vec<RateCtl>,
    /// The AP's channel monitor (when any station has radio conditions).
    monitor: Option<Monitor>,
    report: Option<Report>,
    /// Per station: the flows it is the destination of (their `chan` follows its estimate).
    flows_to: Vec<Vec<u32>>,
    meter: Option<BlockMeter>,
    /// Per TCP flow: the connection (sender at the source, receiver at the destination).
    tcp: Vec<Option<Box<TcpConn>>>,
    /// Per flow: its reply flow (pings), and for a reply flow the ping it answers.
    reply_of: Vec<Option<u32>>,
    ping_of: Vec<u32>,
    /// Round-trip times of the answered pings, in the measured window.
    pings: Vec<PingSample>,
    counters: Counters,
    at_warmup: Option<Counters>,
    delay_max_ns: Vec<u64>,
    samples: Vec<Sample>,
    last_sample_bytes: Vec<u64>,
    wall: Duration,
    finished: bool,
    /// A refill of saturating sources is in progress (see `refill_after_dequeue`).
    refilling: bool,
    refill_again: bool,
    refill_rotor: u32,
    /// Packets a saturating source keeps queued (`SATURATE_BACKLOG`, or `SATURATE_BACKLOG_HT`
    /// in an 802.11n cell, where they count until they leave the driver).
    saturate_backlog: u32,
}

impl Simulation {
    /// Build the world of a scenario. Fails only if a tc script does not build (a scenario from
    /// `parse_scenario` has had its scripts checked already).
    pub fn new(scn: &Scenario) -> Result<Simulation, SimError> {
        let (expanded, reply_of) = scn.with_reply_flows();
        let scn = &expanded;
        let n = scn.stations.len();
        let cell = &scn.cell;
        let is_ht = cell.standard == crate::scenario::Standard::Dot11n;
        let params = if is_ht { ht::Ht::dcf_params(scn) } else { DcfParams {
            slot: dsss::SLOT,
            sifs: dsss::SIFS,
            difs: dsss::DIFS,
            pifs: dsss::PIFS,
            ack_timeout: dsss::ACK_TIMEOUT,
            cw_min: cell.cw_min,
            cw_max: cell.cw_max,
            retry_limit: cell.retry_limit,
        } };
        let mut ifaces = Vec::with_capacity(n + 3);
        ifaces.push(Iface::new(scn.ap.txqueuelen, Link::Wifi(0)));
        for (i, st) in scn.stations.iter().enumerate() {
            ifaces.push(Iface::new(st.node.txqueuelen, Link::Wifi(i as u32 + 1)));
        }
        ifaces.push(Iface::new(scn.ap.txqueuelen, Link::Wire(Node::Server)));
        ifaces.push(Iface::new(scn.server.txqueuelen, Link::Wire(Node::Ap)));
        for node in tc_trees::nodes_with_scripts(scn) {
            let (trees, errors, _) = tc_trees::build_node(&node, scn.run.seed);
            if !errors.is_empty() {
                let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                return Err(SimError::Tc(msgs.join("\n")));
            }
            for (index, root) in trees {
                ifaces[index].qdisc = root;
            }
        }

        let node_of = |e: Endpoint| match e {
            Endpoint::Server => Node::Server,
            Endpoint::Ap => Node::Ap,
            Endpoint::Station(i) => Node::Station(i as u32),
        };
        let mut flows = Vec::with_capacity(scn.flows.len());
        for (fi, f) in scn.flows.iter().enumerate() {
            let (src, dst) = (node_of(f.src), node_of(f.dst));
            let first_hop = route(n, src, dst);
            let saturate = matches!(f.rate, FlowRate::Saturate);
            if saturate {
                ifaces[first_hop as usize].saturate_flows.push(fi as u32);
            }
            let st = |nd: Node| match nd {
                Node::Station(i) => Some(i),
                _ => None,
            };
            flows.push(FlowState {
                rng: stream(scn.run.seed, StreamKind::Traffic, fi as u64),
                jitter: f.jitter,
                src,
                dst,
                first_hop,
                saturate,
                active: false,
                stop: f.stop.unwrap_or(Nanos(u64::MAX)),
                outstanding: 0,
                stations: [st(src), st(dst)],
            });
        }

        let preamble = cell.preamble;
        let ack_rate = DsssRate::ALL.map(|r| dsss::control_response_rate(&cell.basic_rates, r));
        let ack_by_rate = DsssRate::ALL.map(|r| dsss::ack_time(preamble, &cell.basic_rates, r));
        let channels: Vec<Option<Channel>> = scn
            .stations
            .iter()
            .enumerate()
            .map(|(i, st)| st.channel.clone().map(|c| Channel::new(c, scn.run.seed, i as u32)))
            .collect();
        let mut rate_ctl = Vec::with_capacity(2 * n);
        for dir in 0..2u64 {
            for (i, st) in scn.stations.iter().enumerate() {
                let top = st.rate as usize;
                let algo = match st.rate_control {
                    RateControl::Fixed => RateAlgo::Fixed(top as u8),
                    RateControl::Arf => RateAlgo::Arf,
                    RateControl::Aarf => RateAlgo::Aarf,
                    RateControl::Minstrel => RateAlgo::Minstrel,
                };
                let ref_air: Vec<Nanos> = DsssRate::ALL[..=top]
                    .iter()
                    .map(|&r| reference_airtime(preamble, r, ack_by_rate[r as usize]))
                    .collect();
                let node = if dir == 0 { 0 } else { i as u64 + 1 };
                let rng = stream(scn.run.seed, StreamKind::RateControl, node * 65536 + i as u64);
                let ctl = RateCtl::new(algo, &ref_air, cell.retry_limit, rng)
                    .expect("1 to 4 rates and a fixed index among them are always valid");
                rate_ctl.push(ctl);
            }
        }
        let monitor = channels.iter().any(Option::is_some).then(|| {
            let table = match &scn.monitor.calibration {
                Some((_, t)) => t.clone(),
                None => crate::monitor::builtin_calibration(),
            };
            let initial: Vec<i32> = scn
                .stations
                .iter()
                .map(|st| match &st.channel {
                    Some(c) => c.mean_cdb(Nanos::ZERO) + c.up_offset_cdb,
                    None => i32::MAX / 2,
                })
                .collect();
            let cfg = MonitorConfig { table, alpha: scn.monitor.alpha, noise_cdb: scn.monitor.noise_cdb };
            Monitor::new(cfg, &initial, scn.run.seed)
        });
        let mut flows_to = vec![Vec::new(); n];
        for (fi, f) in flows.iter().enumerate() {
            if let Node::Station(s) = f.dst {
                flows_to[s as usize].push(fi as u32);
            }
        }
        let end = scn.run.duration;
        let mut queue = EventQueue::with_capacity(1024 + 4 * scn.flows.len());
        for (fi, f) in scn.flows.iter().enumerate() {
            if f.start <= end && f.rate != FlowRate::Reactive {
                queue.schedule(f.start, Event::FlowStart { flow: fi as u32 });
            }
        }
        if cell.beacons {
            queue.schedule(Nanos::ZERO, Event::Beacon);
        }
        queue.schedule(scn.run.warmup, Event::WarmupEnd);
        let first_sample = scn.run.warmup + scn.run.sample_interval;
        if first_sample <= end {
            queue.schedule(first_sample, Event::Sample);
        }
        let n_samples = ((end.0 - scn.run.warmup.0) / scn.run.sample_interval.0) as usize;
        let mut sim = Simulation {
            now: Nanos::ZERO,
            end,
            queue,
            pkts: Packets::with_capacity(4096),
            keys: (0..scn.flows.len()).map(|i| scn.flow_key(i)).collect(),
            dropped: Vec::with_capacity(64),
            chan: vec![crate::qdisc::REL_ONE; scn.flows.len()],
            ifaces,
            // 802.11n: one EDCA function per node and access category (`ht::contender`).
            dcf: Dcf::new(if is_ht { (n + 1) * crate::mac80211::NUM_ACS } else { n + 1 }, params, scn.run.seed),
            ht: is_ht.then(|| Box::new(ht::Ht::new(scn, scn.run.seed))),
            flows,
            preamble,
            lowest_basic: cell.basic_rates[0],
            ack_by_rate,
            ack_rate,
            air: Vec::with_capacity(n + 2),
            outcome: Outcome::Collision,
            channels,
            errors: ErrorModel::new(cell.preamble_detection_cdb),
            err_rng: (0..=n).map(|i| stream(scn.run.seed, StreamKind::FrameError, i as u64)).collect(),
            rate_ctl,
            monitor,
            report: None,
            flows_to,
            meter: None,
            ping_of: {
                let mut p: Vec<u32> = (0..scn.flows.len() as u32).collect();
                for (i, r) in reply_of.iter().enumerate() {
                    if let Some(r) = r {
                        p[*r as usize] = i as u32;
                    }
                }
                p
            },
            tcp: scn
                .flows
                .iter()
                .map(|f| {
                    (f.protocol == Protocol::Tcp).then(|| {
                        let mut cfg = TcpConfig::new(f.cc);
                        cfg.mss = f.size;
                        cfg.sack = f.sack;
                        let app = f.bytes.map_or(AppLimit::Unlimited, AppLimit::Bytes);
                        Box::new(TcpConn {
                            sender: TcpSender::new(&cfg, app),
                            receiver: TcpReceiver::new(&cfg),
                            armed: None,
                            gen: 0,
                            delivered: 0,
                            at_warmup: [0; 3],
                        })
                    })
                })
                .collect(),
            reply_of,
            pings: Vec::new(),
            counters: Counters::new(scn.flows.len(), n),
            at_warmup: None,
            delay_max_ns: vec![0; scn.flows.len()],
            samples: Vec::with_capacity(n_samples.min(1 << 20) * (n + scn.flows.len())),
            last_sample_bytes: vec![0; scn.flows.len()],
            wall: Duration::ZERO,
            finished: false,
            refilling: false,
            refill_again: false,
            refill_rotor: 0,
            saturate_backlog: if is_ht { SATURATE_BACKLOG_HT } else { SATURATE_BACKLOG },
            scn: scn.clone(),
        };
        for st in 0..n {
            sim.refresh_chan(st);
        }
        if let Some(ht) = &sim.ht {
            ht.init_edca(&mut sim.dcf);
        }
        Ok(sim)
    }

    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Measure flow `flow` as the calibration procedure does: after the warm-up, the goodput
    /// n L / tau of every block of `n` received packets, tau running from the packet that ends
    /// the previous block (or the first packet) to the one that ends this block.
    pub fn meter_blocks(&mut self, flow: usize, n: u32) {
        self.meter = Some(BlockMeter { flow: flow as u32, n: n.max(1), count: 0, bytes: 0, start: None, goodputs: Vec::new() });
    }

    /// The block goodputs measured so far (bit/s of UDP payload), see [`Self::meter_blocks`].
    pub fn block_goodputs(&self) -> &[f64] {
        self.meter.as_ref().map_or(&[], |m| &m.goodputs)
    }
    pub fn end(&self) -> Nanos {
        self.end
    }
    pub fn events(&self) -> u64 {
        self.queue.processed()
    }

    /// Process every event with time <= min(until, end).
    pub fn advance(&mut self, until: Nanos) {
        let started = Instant::now();
        let limit = until.min(self.end);
        while let Some(t) = self.queue.peek_time() {
            if t > limit {
                break;
            }
            let (t, ev) = self.queue.pop().expect("peeked");
            self.now = t;
            self.handle(ev);
        }
        if limit > self.now {
            self.now = limit;
        }
        self.wall += started.elapsed();
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Access { gen } => self.on_access(gen),
            Event::TxEnd => self.on_tx_end(),
            Event::ExchangeEnd => self.on_exchange_end(),
            Event::WireTxDone { iface } => {
                self.ifaces[iface as usize].busy = false;
                self.wire_kick(iface);
            }
            Event::WireDeliver { iface, pkt } => {
                if let Link::Wire(to) = self.ifaces[iface as usize].link {
                    self.arrive(to, pkt);
                }
            }
            Event::QdiscWake { iface } => self.on_qdisc_wake(iface),
            Event::FlowStart { flow } => self.on_flow_start(flow),
            Event::FlowTick { flow, k } => self.on_flow_tick(flow, k),
            Event::TcpTimer { flow, gen } => self.on_tcp_timer(flow, gen),
            Event::Beacon => {
                if let Some((t, gen)) = self.dcf.beacon_due(self.now) {
                    self.queue.schedule(t, Event::Access { gen });
                }
                let next = self.now + self.scn.cell.beacon_interval;
                if next <= self.end {
                    self.queue.schedule(next, Event::Beacon);
                }
            }
            Event::WarmupEnd => {
                self.at_warmup = Some(self.counters.clone());
                for conn in self.tcp.iter_mut().flatten() {
                    conn.at_warmup = conn.counts();
                }
                // The first sample covers (warm-up, warm-up + interval] only.
                for (f, c) in self.counters.flows.iter().enumerate() {
                    self.last_sample_bytes[f] = c.received_payload_bytes;
                }
            }
            Event::Sample => self.on_sample(),
        }
    }

    // ----- traffic -------------------------------------------------------------------------

    fn on_flow_start(&mut self, f: u32) {
        let fs = &mut self.flows[f as usize];
        if self.now >= fs.stop {
            return;
        }
        fs.active = true;
        if self.tcp[f as usize].is_some() {
            let stop = fs.stop;
            if stop < self.end {
                // The application closes at `stop`: the timer path checks it.
                self.queue.schedule(stop, Event::TcpTimer { flow: f, gen: u64::MAX });
            }
            self.tcp_push(f);
        } else if fs.saturate {
            self.refill(f);
        } else {
            self.on_flow_tick(f, 0);
        }
    }

    fn on_flow_tick(&mut self, f: u32, k: u64) {
        if self.now >= self.flows[f as usize].stop {
            self.flows[f as usize].active = false;
            return;
        }
        self.emit(f);
        if let Some(nominal) = cbr_send_time(&self.scn.flows[f as usize], k + 1) {
            let fs = &mut self.flows[f as usize];
            let t = if fs.jitter > Nanos::ZERO {
                nominal + Nanos(fs.rng.random_range(0..=fs.jitter.0))
            } else {
                nominal
            };
            if t <= self.end && t < self.flows[f as usize].stop {
                self.queue.schedule(t, Event::FlowTick { flow: f, k: k + 1 });
            }
        }
    }

    /// A source sends one packet. Returns whether its first hop queued it.
    fn emit(&mut self, f: u32) -> bool {
        let payload = self.scn.flows[f as usize].size;
        let id = self.pkts.alloc(Packet {
            seq: self.counters.flows[f as usize].sent_packets,
            ..Packet::new(f, payload + UDP_IP_OVERHEAD, payload, self.now)
        });
        self.counters.flows[f as usize].sent_packets += 1;
        let hop = self.flows[f as usize].first_hop;
        self.enqueue(hop, id)
    }

    /// Keep a saturating flow's first-hop queue topped up.
    fn refill(&mut self, f: u32) {
        // At most SATURATE_BACKLOG packets per call: a queue that makes room by dropping older
        // packets of the same flow (head drop, fq_codel overflow) must not make this loop forever.
        for _ in 0..self.saturate_backlog {
            let fs = &self.flows[f as usize];
            if !fs.active || fs.outstanding >= self.saturate_backlog || self.now >= fs.stop {
                return;
            }
            self.flows[f as usize].outstanding += 1;
            if !self.emit(f) {
                // The queue is full (other traffic): try again at its next dequeue.
                self.flows[f as usize].outstanding -= 1;
                return;
            }
        }
    }

    // ----- queues and routing --------------------------------------------------------------

    /// Offer a packet to an interface's qdisc and wake the interface. Returns whether it was
    /// queued (false: dropped, already accounted and freed).
    fn enqueue(&mut self, iface: u32, pkt: PacketId) -> bool {
        self.dropped.clear();
        let mut cx = QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan };
        let res = self.ifaces[iface as usize].qdisc.enqueue(pkt, &mut cx, self.now);
        self.account_qdisc_drops(iface, Some(pkt));
        if res != Enq::Dropped {
            // Something new to send: wake the device (a refused packet changes nothing).
            match self.ifaces[iface as usize].link {
                Link::Wifi(node) => self.mac_pull(node),
                Link::Wire(_) => self.wire_kick(iface),
            }
        }
        res != Enq::Dropped
    }

    /// Take the next packet from a qdisc, with the bookkeeping every dequeue needs. When the
    /// qdisc holds packets but may not send yet (a shaper), its watchdog is armed.
    fn dequeue(&mut self, iface: u32) -> Option<PacketId> {
        self.dropped.clear();
        let mut cx = QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan };
        let out = self.ifaces[iface as usize].qdisc.dequeue(&mut cx, self.now);
        self.account_qdisc_drops(iface, None);
        match out {
            // In an 802.11n cell a frame leaves the first hop when it leaves the driver.
            Some(_) if self.ht.is_some() && matches!(self.ifaces[iface as usize].link, Link::Wifi(_)) => {}
            Some(pkt) => self.left_first_hop(iface, pkt),
            None => self.arm_watchdog(iface),
        }
        out
    }

    /// Packets a qdisc dropped during the last operation: accounted per flow and station, and
    /// freed. `offered` is the packet that operation offered (it was never queued).
    fn account_qdisc_drops(&mut self, iface: u32, offered: Option<PacketId>) {
        for i in 0..self.dropped.len() {
            let d = self.dropped[i];
            if Some(d) != offered {
                self.left_first_hop(iface, d);
            }
            self.drop_packet(d, iface, DropCause::Queue);
        }
        self.dropped.clear();
    }

    fn arm_watchdog(&mut self, iface: u32) {
        let q = &self.ifaces[iface as usize].qdisc;
        if q.stats().qlen == 0 {
            return;
        }
        if let Some(t) = q.next_wakeup(self.now) {
            // Never in the past or at this very instant: the device tried now.
            let t = t.max(self.now + Nanos(1));
            let w = &mut self.ifaces[iface as usize].wake_at;
            if w.is_none_or(|cur| t < cur) {
                *w = Some(t);
                self.queue.schedule(t, Event::QdiscWake { iface });
            }
        }
    }

    fn on_qdisc_wake(&mut self, iface: u32) {
        if self.ifaces[iface as usize].wake_at != Some(self.now) {
            return; // superseded by an earlier watchdog
        }
        self.ifaces[iface as usize].wake_at = None;
        match self.ifaces[iface as usize].link {
            Link::Wifi(node) => self.mac_pull(node),
            Link::Wire(_) => self.wire_kick(iface),
        }
    }

    /// After the device took a packet (and marked itself busy), saturating sources whose first
    /// hop this is top their queue up again.
    fn refill_after_dequeue(&mut self, iface: u32) {
        let n_sat = self.ifaces[iface as usize].saturate_flows.len();
        if n_sat == 0 {
            return;
        }
        // Not re-entrant: a refill's enqueue pulls the device, whose dequeue asks for another
        // refill of the same interface; the outermost call loops instead of recursing (a full
        // shaper queue would otherwise recurse once per flow per level, exponentially).
        if self.refilling {
            self.refill_again = true;
            return;
        }
        self.refilling = true;
        for _round in 0..SATURATE_BACKLOG {
            self.refill_again = false;
            // Start at a rotating flow, so that on a small shared queue no saturating flow
            // always takes the freed places first.
            let start = self.refill_rotor as usize % n_sat;
            self.refill_rotor = self.refill_rotor.wrapping_add(1);
            for j in 0..n_sat {
                let f = self.ifaces[iface as usize].saturate_flows[(start + j) % n_sat];
                self.refill(f);
            }
            if !self.refill_again {
                break;
            }
        }
        self.refilling = false;
    }

    #[inline]
    fn left_first_hop(&mut self, iface: u32, pkt: PacketId) {
        let f = self.pkts.get(pkt).flow as usize;
        let fs = &mut self.flows[f];
        if fs.saturate && fs.first_hop == iface {
            fs.outstanding -= 1;
        }
    }

    /// A packet reaches node `at`: hand it to the application or forward it.
    fn arrive(&mut self, at: Node, pkt: PacketId) {
        let f = self.pkts.get(pkt).flow as usize;
        if self.flows[f].dst == at {
            self.receive(pkt);
        } else {
            let hop = route(self.scn.stations.len(), at, self.flows[f].dst);
            self.enqueue(hop, pkt);
        }
    }

    fn receive(&mut self, pkt: PacketId) {
        let p = *self.pkts.get(pkt);
        if let Some(m) = self.meter.as_mut() {
            if m.flow == p.flow && self.at_warmup.is_some() {
                m.on_receive(self.now, p.payload);
            }
        }
        let c = &mut self.counters.flows[p.flow as usize];
        c.received_packets += 1;
        c.received_payload_bytes += p.payload as u64;
        let delay = (self.now - p.created).0;
        c.delay_sum_ns += delay as u128;
        c.queue_delay_sum_ns += p.queue_delay.0 as u128;
        if self.at_warmup.is_some() {
            let m = &mut self.delay_max_ns[p.flow as usize];
            *m = (*m).max(delay);
        }
        match self.scn.flows[p.flow as usize].protocol {
            Protocol::Ping => self.answer_ping(&p),
            Protocol::Tcp => self.tcp_segment_arrived(&p),
            Protocol::TcpAck => self.tcp_ack_arrived(&p),
            Protocol::PingReply if self.at_warmup.is_some() => {
                let request = self.ping_of[p.flow as usize];
                self.pings.push(PingSample { flow: request, seq: p.seq, time: self.now, rtt: self.now - p.echo });
            }
            _ => {}
        }
        self.pkts.free(pkt);
    }

    // ----- TCP --------------------------------------------------------------------------------

    /// Hand the sender's segments to its first-hop queue while its windows allow.
    fn tcp_push(&mut self, f: u32) {
        loop {
            let now = self.now;
            let Some(conn) = self.tcp[f as usize].as_mut() else { return };
            let Some(seg) = conn.sender.poll_transmit(now) else { break };
            let id = self.pkts.alloc(Packet {
                seq: seg.seq,
                // The TCP timestamp option: TSval on a segment, TSecr on an ACK.
                echo: seg.tsval,
                ..Packet::new(f, seg.ip_len(), seg.len, now)
            });
            self.counters.flows[f as usize].sent_packets += 1;
            let hop = self.flows[f as usize].first_hop;
            // A segment the first hop refuses is lost like any other: dupACKs or the RTO tell.
            self.enqueue(hop, id);
        }
        self.tcp_arm(f);
    }

    /// Arm the connection's timer event at the earlier of the sender's and receiver's timers.
    fn tcp_arm(&mut self, f: u32) {
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        let next = match (conn.sender.next_timer(), conn.receiver.next_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if next != conn.armed {
            conn.armed = next;
            conn.gen += 1;
            if let Some(t) = next {
                if t <= self.end {
                    self.queue.schedule(t.max(self.now), Event::TcpTimer { flow: f, gen: conn.gen });
                }
            }
        }
    }

    fn on_tcp_timer(&mut self, f: u32, gen: u64) {
        let now = self.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        if gen == u64::MAX {
            // The application stops sending at the flow's `stop`.
            conn.sender.close();
            self.flows[f as usize].active = false;
            return;
        }
        if gen != conn.gen {
            return;
        }
        conn.armed = None;
        if conn.receiver.next_timer().is_some_and(|t| t <= now) {
            if let Some(ack) = conn.receiver.on_timer(now) {
                self.tcp_send_ack(f, ack);
            }
        }
        let conn = self.tcp[f as usize].as_mut().expect("still there");
        if conn.sender.next_timer().is_some_and(|t| t <= now) {
            conn.sender.on_timer(now);
        }
        self.tcp_push(f);
    }

    /// A data segment reaches the receiver: count what it delivers in order, maybe ACK.
    fn tcp_segment_arrived(&mut self, p: &Packet) {
        let f = p.flow;
        let now = self.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        let seg = Segment { seq: p.seq, len: p.payload, tsval: p.echo, retransmission: false };
        let ack = conn.receiver.on_segment(now, seg);
        let delivered = conn.receiver.bytes_received();
        let new = delivered - conn.delivered;
        conn.delivered = delivered;
        // Goodput counts bytes delivered in order, not segment payloads (a retransmitted
        // duplicate delivers nothing; a segment filling a hole delivers what it releases).
        let c = &mut self.counters.flows[f as usize];
        c.received_payload_bytes = c.received_payload_bytes - p.payload as u64 + new;
        if let Some(ack) = ack {
            self.tcp_send_ack(f, ack);
        }
        self.tcp_arm(f);
    }

    fn tcp_send_ack(&mut self, f: u32, ack: Ack) {
        let Some(r) = self.reply_of[f as usize] else { return };
        let id = self.pkts.alloc(Packet {
            echo: ack.tsecr,
            ack: ack.ack,
            wnd: ack.rwnd,
            sack: ack.sack.to_offsets(ack.ack),
            // The SACK option lengthens the ACK (and its airtime).
            ..Packet::new(r, ack.ip_len(), 0, self.now)
        });
        self.counters.flows[r as usize].sent_packets += 1;
        let hop = self.flows[r as usize].first_hop;
        self.enqueue(hop, id);
    }

    /// An ACK reaches the sender.
    fn tcp_ack_arrived(&mut self, p: &Packet) {
        let f = self.ping_of[p.flow as usize];
        let now = self.now;
        let Some(conn) = self.tcp[f as usize].as_mut() else { return };
        conn.sender.on_ack(now, Ack { ack: p.ack, rwnd: p.wnd, tsecr: p.echo, sack: crate::tcp::SackBlocks::from_offsets(p.ack, &p.sack) });
        self.tcp_push(f);
    }

    /// The destination of an echo request answers it on the ping's reply flow.
    fn answer_ping(&mut self, req: &Packet) {
        let Some(r) = self.reply_of[req.flow as usize] else { return };
        let id = self.pkts.alloc(Packet { seq: req.seq, echo: req.created, ..Packet::new(r, req.ip_len, req.payload, self.now) });
        self.counters.flows[r as usize].sent_packets += 1;
        let hop = self.flows[r as usize].first_hop;
        self.enqueue(hop, id);
    }

    fn drop_packet(&mut self, pkt: PacketId, iface: u32, cause: DropCause) {
        let f = self.pkts.get(pkt).flow as usize;
        let station = self.station_of_iface_packet(iface, f);
        let fc = &mut self.counters.flows[f];
        match cause {
            DropCause::Queue => fc.drops_queue += 1,
            DropCause::Retry => fc.drops_retry += 1,
        }
        if let Some(s) = station {
            let sc = &mut self.counters.stations[s as usize];
            match cause {
                DropCause::Queue => sc.drops_queue += 1,
                DropCause::Retry => sc.drops_retry += 1,
            }
        }
        self.pkts.free(pkt);
    }

    /// The station a packet at a WiFi interface is to or from.
    fn station_of_iface_packet(&self, iface: u32, flow: usize) -> Option<u32> {
        match self.ifaces[iface as usize].link {
            Link::Wifi(0) => match self.flows[flow].dst {
                Node::Station(s) => Some(s),
                _ => None,
            },
            Link::Wifi(node) => Some(node - 1),
            Link::Wire(_) => None,
        }
    }

    fn wire_kick(&mut self, iface: u32) {
        if self.ifaces[iface as usize].busy {
            return;
        }
        let Some(pkt) = self.dequeue(iface) else {
            self.refill_after_dequeue(iface);
            return;
        };
        let bits = (self.pkts.get(pkt).ip_len + ETHERNET_WIRE_OVERHEAD) as u64 * 8;
        let tx = Nanos::for_bits(bits, self.scn.wired.rate_bps);
        self.ifaces[iface as usize].busy = true;
        self.queue.schedule(self.now + tx, Event::WireTxDone { iface });
        self.queue.schedule(self.now + tx + self.scn.wired.delay, Event::WireDeliver { iface, pkt });
        self.refill_after_dequeue(iface);
    }

    // ----- WiFi ----------------------------------------------------------------------------

    /// Give WiFi node `node` its next frame if its MAC is free.
    fn mac_pull(&mut self, node: u32) {
        if self.ht.is_some() {
            return self.ht_pull(node);
        }
        let n = node as usize;
        if self.dcf.nodes[n].frame.is_some() || self.dcf.nodes[n].in_exchange {
            return;
        }
        let Some(pkt) = self.dequeue(node) else {
            self.refill_after_dequeue(node);
            return;
        };
        let f = self.pkts.get(pkt).flow as usize;
        let station = self.station_of_iface_packet(node, f).expect("wifi frames have a station");
        let dn = &mut self.dcf.nodes[n];
        dn.frame = Some(pkt);
        dn.frame_station = station;
        dn.attempts = 0;
        dn.delivered = false;
        if let Some((t, gen)) = self.dcf.frame_arrived(n, self.now) {
            self.queue.schedule(t, Event::Access { gen });
        }
        self.refill_after_dequeue(node);
    }

    /// Index into `rate_ctl` of the link node `node` is sending on to/from station `s`.
    #[inline]
    fn link(&self, node: u32, s: u32) -> usize {
        if node == 0 { s as usize } else { self.scn.stations.len() + s as usize }
    }

    fn on_access(&mut self, gen: u64) {
        if self.ht.is_some() {
            return self.ht_on_access(gen);
        }
        let ta = self.now;
        if !self.dcf.begin_access(ta, gen) {
            return;
        }
        self.air.clear();
        let mut busy_end = ta;
        if self.dcf.medium.beacon_in_air {
            let rate = self.lowest_basic;
            let d = dsss::txtime(self.preamble, rate, self.scn.cell.beacon_bytes);
            let nc = &mut self.counters.nodes[0];
            nc.airtime_ns += d.0;
            nc.tx_attempts += 1;
            nc.beacons += 1;
            self.counters.frames += 1;
            self.air.push(AirTx { node: 0, end: ta + d, rate });
            busy_end = ta + d;
        }
        for i in 0..self.dcf.medium.transmitters.len() {
            let node = self.dcf.medium.transmitters[i];
            let s = self.dcf.nodes[node as usize].frame_station;
            let link = self.link(node, s);
            let dn = &mut self.dcf.nodes[node as usize];
            dn.attempts += 1;
            let attempt = dn.attempts;
            let pkt = dn.frame.expect("transmitter holds a frame");
            let ri = self.rate_ctl[link].rate_for_attempt(ta, attempt) as usize;
            let rate = DsssRate::ALL[ri];
            let psdu = self.pkts.get(pkt).ip_len + dsss::DATA_OVERHEAD_BYTES;
            let d = dsss::txtime(self.preamble, rate, psdu);
            let nc = &mut self.counters.nodes[node as usize];
            nc.airtime_ns += d.0;
            nc.tx_attempts += 1;
            let sc = &mut self.counters.stations[s as usize];
            sc.airtime_ns += d.0;
            sc.air_dir_ns[(node != 0) as usize] += d.0;
            sc.tx_attempts += 1;
            sc.attempts_by_rate[(node != 0) as usize][ri] += 1;
            self.counters.frames += 1;
            self.air.push(AirTx { node, end: ta + d, rate });
            busy_end = busy_end.max(ta + d);
        }
        self.outcome = if self.air.len() > 1 || self.dcf.medium.beacon_in_air {
            Outcome::Collision
        } else {
            self.draw_outcome(ta)
        };
        match self.outcome {
            Outcome::Success | Outcome::AckLost => {
                let a = self.air[0];
                let s = self.dcf.nodes[a.node as usize].frame_station as usize;
                let ack = self.ack_by_rate[a.rate as usize];
                // The ACK is sent by the receiver: the AP for uplink, the station for downlink.
                let acker = if a.node == 0 { s + 1 } else { 0 };
                self.counters.nodes[acker].airtime_ns += ack.0;
                self.counters.stations[s].airtime_ns += ack.0;
                self.counters.stations[s].air_dir_ns[(a.node != 0) as usize] += ack.0;
                if self.outcome == Outcome::AckLost {
                    self.counters.stations[s].ack_errors += 1;
                }
                self.queue.schedule(busy_end, Event::TxEnd);
                busy_end = busy_end + dsss::SIFS + ack;
            }
            Outcome::DataLost => {
                let s = self.dcf.nodes[self.air[0].node as usize].frame_station as usize;
                self.counters.stations[s].data_errors += 1;
            }
            Outcome::Collision if self.air.len() > 1 => {
                for a in &self.air {
                    if a.node != 0 || !self.dcf.medium.beacon_in_air {
                        let s = self.dcf.nodes[a.node as usize].frame_station as usize;
                        self.counters.stations[s].collisions += 1;
                    }
                }
            }
            Outcome::Collision => {}
        }
        self.counters.medium_busy_ns += (busy_end - ta).0;
        self.queue.schedule(busy_end, Event::ExchangeEnd);
    }

    /// A lone data frame on the air: does its receiver decode it, and its sender the ACK? Draws
    /// one uniform for the data and, when it gets through, one for the ACK, from the sender's
    /// stream; a station without radio conditions has a perfect channel (no draw). Queues the
    /// SNR report the AP's monitor takes of a frame it decodes from the station.
    fn draw_outcome(&mut self, ta: Nanos) -> Outcome {
        let a = self.air[0];
        let s = self.dcf.nodes[a.node as usize].frame_station;
        let Some(ch) = self.channels[s as usize].as_mut() else {
            return Outcome::Success;
        };
        let (data_dir, ack_dir) = if a.node == 0 { (Dir::Down, Dir::Up) } else { (Dir::Up, Dir::Down) };
        let pkt = self.dcf.nodes[a.node as usize].frame.expect("transmitter holds a frame");
        let psdu = self.pkts.get(pkt).ip_len + dsss::DATA_OVERHEAD_BYTES;
        let snr = ch.snr_cdb(ta, data_dir);
        let p = self.errors.success(ErrMode::Dsss(a.rate), self.preamble, snr, psdu);
        let rng = &mut self.err_rng[a.node as usize];
        if rng.random::<f64>() >= p {
            return Outcome::DataLost;
        }
        if data_dir == Dir::Up {
            self.report = Some(Report { station: s, snr_cdb: snr });
        }
        let ack_snr = ch.snr_cdb(a.end + dsss::SIFS, ack_dir);
        let ack_rate = self.ack_rate[a.rate as usize];
        let p_ack = self.errors.success(ErrMode::Dsss(ack_rate), self.preamble, ack_snr, dsss::ACK_BYTES);
        if rng.random::<f64>() >= p_ack {
            return Outcome::AckLost;
        }
        if ack_dir == Dir::Up {
            self.report = Some(Report { station: s, snr_cdb: ack_snr });
        }
        Outcome::Success
    }

    /// End of a decoded data PPDU: the receiver has the frame. A retransmission of a frame the
    /// receiver already has (its ACK was lost) is discarded there as a duplicate.
    fn on_tx_end(&mut self) {
        if self.ht.is_some() {
            return self.ht_on_tx_end();
        }
        let node = self.air[0].node as usize;
        let pkt = self.dcf.nodes[node].frame.expect("decoded transmitter holds its frame");
        let station = self.dcf.nodes[node].frame_station;
        let to = if node == 0 { Node::Station(station) } else { Node::Ap };
        let duplicate = self.dcf.nodes[node].delivered;
        if self.outcome == Outcome::Success {
            self.dcf.on_success(node);
        }
        if duplicate {
            if self.outcome == Outcome::Success {
                self.pkts.free(pkt);
            }
            return;
        }
        self.counters.stations[station as usize].tx_frames += 1;
        if self.outcome == Outcome::Success {
            self.arrive(to, pkt);
        } else {
            // ACK lost: the receiver passes a copy up; the sender keeps the frame to retry.
            let copy = *self.pkts.get(pkt);
            let c = self.pkts.alloc(copy);
            self.dcf.nodes[node].delivered = true;
            self.arrive(to, c);
        }
    }

    fn on_exchange_end(&mut self) {
        if self.ht.is_some() {
            return self.ht_on_exchange_end();
        }
        let te = self.now;
        let p = self.dcf.params;
        let eifs = |sim: &Self, rate: DsssRate| match sim.scn.cell.eifs {
            EifsRule::Estimated => p.sifs + dsss::estimated_ack_time(sim.preamble, rate) + p.difs,
            EifsRule::Legacy => dsss::EIFS_LEGACY,
        };
        // Interframe space each node observes from here.
        let bystander_ifs = if self.air.len() > 1 {
            let last = self.air.iter().max_by_key(|a| (a.end, a.rate)).expect("air not empty");
            eifs(self, last.rate)
        } else {
            p.difs
        };
        for n in 0..self.dcf.nodes.len() {
            self.dcf.set_ifs_end(n, te + bystander_ifs);
        }
        match self.outcome {
            Outcome::Collision => {
                for (i, a) in self.air.iter().enumerate() {
                    // Colliders wait for their ACKTimeout (a beacon expects no ACK), then DIFS,
                    // counted from the end of their own frame or of the busy period, the later.
                    let is_beacon = i == 0 && self.dcf.medium.beacon_in_air;
                    let own = if is_beacon { a.end } else { a.end + p.ack_timeout };
                    let after_ack_timeout = own.max(te) + p.difs;
                    let t = match self.scn.cell.collision_defer {
                        CollisionDefer::AckTimeout => after_ack_timeout,
                        CollisionDefer::Eifs => after_ack_timeout.max(te + bystander_ifs),
                    };
                    self.dcf.set_ifs_end(a.node as usize, t);
                }
            }
            Outcome::DataLost => {
                // The receiver saw a frame it could not decode (EIFS); the sender waits for its
                // ACKTimeout, then DIFS. Other nodes are assumed to have decoded it (DIFS).
                let a = self.air[0];
                let s = self.dcf.nodes[a.node as usize].frame_station;
                let receiver = if a.node == 0 { s as usize + 1 } else { 0 };
                let e = eifs(self, a.rate);
                self.dcf.set_ifs_end(receiver, te + e);
                self.dcf.set_ifs_end(a.node as usize, a.end + p.ack_timeout + p.difs);
            }
            Outcome::AckLost => {
                // The sender could not decode the ACK: EIFS after it.
                let a = self.air[0];
                let e = eifs(self, self.ack_rate[a.rate as usize]);
                self.dcf.set_ifs_end(a.node as usize, te + e);
            }
            Outcome::Success => {}
        }
        self.deliver_report();
        // Rate control learns every attempt's fate; failed transmitters retry or drop.
        let acked = self.outcome == Outcome::Success;
        for i in 0..self.air.len() {
            let a = self.air[i];
            if i == 0 && self.dcf.medium.beacon_in_air {
                continue;
            }
            let node = a.node as usize;
            let station = self.dcf.nodes[node].frame_station;
            let link = self.link(a.node, station);
            let ctl = &mut self.rate_ctl[link];
            ctl.on_attempt(te, a.rate as u8, acked);
            if acked {
                self.counters.stations[station as usize].acked_by_rate[(node != 0) as usize][a.rate as usize] += 1;
                ctl.on_frame_end(te, true);
                continue;
            }
            let delivered = self.dcf.nodes[node].delivered;
            match self.dcf.on_failure(node) {
                Some(pkt) => {
                    self.rate_ctl[link].on_frame_end(te, false);
                    if delivered {
                        // The receiver has it; only the sender gives up.
                        self.pkts.free(pkt);
                    } else {
                        self.drop_packet(pkt, a.node, DropCause::Retry);
                    }
                }
                None => self.counters.stations[station as usize].retries += 1,
            }
        }
        if let Some((t, gen)) = self.dcf.end_busy(te) {
            self.queue.schedule(t, Event::Access { gen });
        }
        let transmitters = std::mem::take(&mut self.dcf.medium.transmitters);
        // Nodes whose frame is done pull the next one (their access is planned on arrival).
        for &node in &transmitters {
            self.mac_pull(node);
        }
        self.dcf.medium.transmitters = transmitters;
        self.air.clear();
        self.outcome = Outcome::Collision;
    }

    /// The exchange's SNR report, if any, reaches the AP's channel monitor.
    fn deliver_report(&mut self) {
        if let Some(r) = self.report.take() {
            if let Some(m) = self.monitor.as_mut() {
                m.report(r.station as usize, r.snr_cdb);
                self.refresh_chan(r.station as usize);
            }
        }
    }

    /// Hand the monitor's estimate for station `s` to the qdiscs (`QCtx::chan`).
    fn refresh_chan(&mut self, s: usize) {
        let Some(m) = &self.monitor else { return };
        let rel = m.rel(s);
        for &f in &self.flows_to[s] {
            self.chan[f as usize] = rel;
        }
    }

    // ----- measurement ---------------------------------------------------------------------

    fn on_sample(&mut self) {
        let interval = self.scn.run.sample_interval;
        let secs = interval.as_secs_f64();
        let n_st = self.scn.stations.len();
        let first = self.samples.len();
        for s in 0..n_st {
            let snr_db = match self.channels[s].as_mut() {
                Some(ch) => ch.snr_cdb(self.now, Dir::Down) as f64 / 100.0,
                None => f64::NAN,
            };
            let estimate_bps = self.monitor.as_ref().map_or(f64::NAN, |m| m.estimate_bps(s));
            self.samples.push(Sample {
                time: self.now,
                kind: SampleKind::Station,
                index: s as u32,
                goodput_bps: 0.0,
                snr_db,
                estimate_bps,
                cwnd_bytes: f64::NAN,
            });
        }
        for f in 0..self.flows.len() {
            let bytes = self.counters.flows[f].received_payload_bytes;
            let delta = bytes - self.last_sample_bytes[f];
            self.last_sample_bytes[f] = bytes;
            let bps = delta as f64 * 8.0 / secs;
            self.samples.push(Sample {
                time: self.now,
                kind: SampleKind::Flow,
                index: f as u32,
                goodput_bps: bps,
                snr_db: f64::NAN,
                estimate_bps: f64::NAN,
                cwnd_bytes: self.tcp[f].as_ref().map_or(f64::NAN, |c| c.sender.cwnd() as f64),
            });
            for st in flow_station_set(&self.flows[f]) {
                self.samples[first + st as usize].goodput_bps += bps;
            }
        }
        let next = self.now + interval;
        if next <= self.end {
            self.queue.schedule(next, Event::Sample);
        }
    }

    /// Run to the end and gather the results. Checks packet conservation.
    pub fn finish(&mut self) -> Result<RunResults, SimError> {
        if self.finished {
            return Err(SimError::Finished);
        }
        self.advance(self.end);
        self.finished = true;
        let conservation = self.check_conservation()?;
        Ok(self.results(conservation))
    }

    /// offered = delivered + dropped + still inside the system, per flow, and every live packet
    /// is found in exactly one place.
    fn check_conservation(&self) -> Result<Conservation, SimError> {
        let mut located = vec![0u64; self.flows.len()];
        let mut count = |pkt: PacketId| located[self.pkts.get(pkt).flow as usize] += 1;
        for iface in &self.ifaces {
            iface.qdisc.for_each_queued(&mut count);
        }
        // A frame whose receiver already has a copy is the sender's only; it is not in flight.
        let mut senders_copies = 0u64;
        if self.ht.is_some() {
            senders_copies += self.ht_for_each_held(&mut count);
        }
        for node in self.dcf.nodes.iter().filter(|_| self.ht.is_none()) {
            match node.frame {
                Some(_) if node.delivered => senders_copies += 1,
                Some(p) => count(p),
                None => {}
            }
        }
        for ev in self.queue.pending() {
            if let Event::WireDeliver { pkt, .. } = *ev {
                count(pkt);
            }
        }
        let total_located: u64 = located.iter().sum::<u64>() + senders_copies;
        if total_located != self.pkts.live_count() as u64 {
            return Err(SimError::Leak { live: self.pkts.live_count() as u64, located: total_located });
        }
        let mut c = Conservation::default();
        for (f, fc) in self.counters.flows.iter().enumerate() {
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

    fn results(&self, conservation: Conservation) -> RunResults {
        let zero = Counters::new(self.flows.len(), self.scn.stations.len());
        let base = self.at_warmup.as_ref().unwrap_or(&zero);
        let measured = self.end.saturating_sub(self.scn.run.warmup);
        let msecs = measured.as_secs_f64();
        let per_sec = |x: u64| if msecs > 0.0 { x as f64 / msecs } else { f64::NAN };
        let c = &self.counters;

        let sample_stats = |kind: SampleKind, index: u32| {
            mean_std(
                self.samples
                    .iter()
                    .filter(|s| s.kind == kind && s.index == index)
                    .map(|s| s.goodput_bps / 1e6),
            )
        };

        let mut flows = Vec::with_capacity(self.flows.len());
        for (f, cfg) in self.scn.flows.iter().enumerate() {
            let d = sub_flow(&c.flows[f], &base.flows[f]);
            let name = |n: Node| match n {
                Node::Server => "server".to_string(),
                Node::Ap => "ap".to_string(),
                Node::Station(i) => self.scn.stations[i as usize].name.clone(),
            };
            let rx = d.received_packets;
            let tcp = self.tcp[f].as_deref();
            let rtt = RttStats::of(self.pings.iter().filter(|p| p.flow == f as u32).map(|p| p.rtt));
            flows.push(FlowResult {
                name: cfg.name.clone(),
                src: name(self.flows[f].src),
                dst: name(self.flows[f].dst),
                protocol: cfg.protocol.name().into(),
                goodput_mbps: per_sec(d.received_payload_bytes * 8) / 1e6,
                goodput_std_mbps: sample_stats(SampleKind::Flow, f as u32).1,
                sent_packets: d.sent_packets,
                received_packets: rx,
                lost_packets: d.drops_queue + d.drops_retry,
                drops_queue: d.drops_queue,
                drops_retry: d.drops_retry,
                in_flight: conservation.per_flow_in_flight[f],
                delay_mean_ms: if rx > 0 { d.delay_sum_ns as f64 / rx as f64 / 1e6 } else { f64::NAN },
                delay_max_ms: if rx > 0 { self.delay_max_ns[f] as f64 / 1e6 } else { f64::NAN },
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
            });
        }

        let station_air: u64 = (0..self.scn.stations.len())
            .map(|s| c.stations[s].airtime_ns - base.stations[s].airtime_ns)
            .sum();
        let station_sample_mean = |s: usize, f: fn(&Sample) -> f64| {
            mean_std(self.samples.iter().filter(|x| x.kind == SampleKind::Station && x.index == s as u32).map(f)).0
        };
        let down_air_total: u64 = (0..self.scn.stations.len())
            .map(|s| c.stations[s].air_dir_ns[0] - base.stations[s].air_dir_ns[0])
            .sum();
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
            for (f, fs) in self.flows.iter().enumerate() {
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
                        let mbps = crate::phy::ht::HtMcs::ALL[m].mbps(cell.width, cell.gi);
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
                rel_goodput_end: self.monitor.as_ref().map_or(f64::NAN, |m| m.rel(s) as f64 / crate::qdisc::REL_ONE as f64),
                airtime_down_s: d.air_dir_ns[0] as f64 * 1e-9,
                airtime_up_s: d.air_dir_ns[1] as f64 * 1e-9,
                airtime_down_share: if down_air_total > 0 { d.air_dir_ns[0] as f64 / down_air_total as f64 } else { f64::NAN },
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

        let total_payload: u64 = (0..self.flows.len())
            .map(|f| c.flows[f].received_payload_bytes - base.flows[f].received_payload_bytes)
            .sum();
        RunResults {
            summary: Summary {
                sim_seconds: self.end.as_secs_f64(),
                measured_seconds: msecs,
                wall_seconds: self.wall.as_secs_f64(),
                events: self.queue.processed(),
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
            pings: self
                .pings
                .iter()
                .map(|p| crate::results::PingRow {
                    flow: self.scn.flows[p.flow as usize].name.clone(),
                    seq: p.seq,
                    time_s: p.time.as_secs_f64(),
                    rtt_ms: p.rtt.0 as f64 / 1e6,
                })
                .collect(),
            samples: self.samples.clone(),
            sample_interval: self.scn.run.sample_interval,
            tc: self.tc_reports(),
            warnings: self.scn.warnings.clone(),
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scn
    }

    /// (node, device) of every interface, in interface order.
    pub fn interface_names(&self) -> Vec<(String, &'static str)> {
        let n = self.scn.stations.len();
        (0..n + 3)
            .map(|i| match i {
                0 => ("ap".to_string(), "wlan0"),
                i if i <= n => (self.scn.stations[i - 1].name.clone(), "wlan0"),
                i if i == n + 1 => ("ap".to_string(), "eth0"),
                _ => ("server".to_string(), "eth0"),
            })
            .collect()
    }

    /// Every interface's qdisc tree with its current statistics.
    /// 802.11n: airtime (µs) the AP's AQL counts as queued to the hardware and not yet
    /// completed, and the frames its driver holds; (0, 0) in an 802.11b cell. A diagnostic: both
    /// return to zero once every queue has drained.
    pub fn mac_pending(&self) -> (u32, u32) {
        self.ht.as_ref().map_or((0, 0), |h| (h.drivers[0].aql.total_pending(), h.drivers[0].frames))
    }

    pub fn tc_reports(&self) -> Vec<crate::results::InterfaceTc> {
        self.interface_names()
            .into_iter()
            .zip(&self.ifaces)
            .map(|((node, dev), iface)| crate::results::InterfaceTc {
                node,
                dev: dev.to_string(),
                qdiscs: iface.qdisc.reports(),
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DropCause {
    Queue,
    Retry,
}

impl Iface {
    fn new(limit: u32, link: Link) -> Iface {
        Iface { qdisc: QdiscImpl::default_root(limit), link, busy: false, saturate_flows: Vec::new(), wake_at: None }
    }
}

/// Egress interface at node `at` for a packet going to `dst` (n = number of stations).
fn route(n: usize, at: Node, dst: Node) -> u32 {
    match at {
        Node::Server => n as u32 + 2,
        Node::Station(i) => i + 1,
        Node::Ap => match dst {
            Node::Server => n as u32 + 1,
            _ => 0,
        },
    }
}

/// Stations a flow's goodput counts for (its src and dst, each once).
fn flow_station_set(fs: &FlowState) -> impl Iterator<Item = u32> + '_ {
    let [a, b] = fs.stations;
    a.into_iter().chain(b.filter(|&x| Some(x) != a))
}

fn sub_flow(a: &crate::metrics::FlowCounters, b: &crate::metrics::FlowCounters) -> crate::metrics::FlowCounters {
    crate::metrics::FlowCounters {
        sent_packets: a.sent_packets - b.sent_packets,
        received_packets: a.received_packets - b.received_packets,
        received_payload_bytes: a.received_payload_bytes - b.received_payload_bytes,
        drops_queue: a.drops_queue - b.drops_queue,
        drops_retry: a.drops_retry - b.drops_retry,
        delay_sum_ns: a.delay_sum_ns - b.delay_sum_ns,
        queue_delay_sum_ns: a.queue_delay_sum_ns - b.queue_delay_sum_ns,
    }
}

fn sub_station(a: &crate::metrics::StationCounters, b: &crate::metrics::StationCounters) -> crate::metrics::StationCounters {
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
        attempts_by_rate: std::array::from_fn(|d| std::array::from_fn(|r| a.attempts_by_rate[d][r] - b.attempts_by_rate[d][r])),
        acked_by_rate: std::array::from_fn(|d| std::array::from_fn(|r| a.acked_by_rate[d][r] - b.acked_by_rate[d][r])),
        air_dir_ns: std::array::from_fn(|d| a.air_dir_ns[d] - b.air_dir_ns[d]),
        ampdu_mpdus: std::array::from_fn(|d| crate::metrics::AmpduHist(std::array::from_fn(|k| a.ampdu_mpdus[d][k] - b.ampdu_mpdus[d][k]))),
        acked_mpdus: a.acked_mpdus - b.acked_mpdus,
        mcs_attempts: std::array::from_fn(|d| std::array::from_fn(|k| a.mcs_attempts[d][k] - b.mcs_attempts[d][k])),
        mcs_acked: std::array::from_fn(|d| std::array::from_fn(|k| a.mcs_acked[d][k] - b.mcs_acked[d][k])),
    }
}

/// Airtime of one exchange of a 1200-byte reference frame at `rate` (rate control's yardstick,
/// as Minstrel's): DIFS, the mean CWmin backoff, the data PPDU, SIFS and the ACK.
fn reference_airtime(preamble: Preamble, rate: DsssRate, ack: Nanos) -> Nanos {
    let data = dsss::txtime(preamble, rate, 1200 + dsss::DATA_OVERHEAD_BYTES);
    dsss::DIFS + Nanos(dsss::SLOT.0 * 31 / 2) + data + dsss::SIFS + ack
}

