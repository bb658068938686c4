//! Building the world of a scenario: the topology and its devices with their tc trees, the
//! cell's medium and its one MAC, the traffic, and the first events.

use crate::ctx::{Ctx, FlowBook};
use crate::engine::{stream, Event, EventQueue, Outbox, StreamKind};
use crate::mac::dcf::{Dcf, DcfParams};
use crate::mac::rate::{RateAlgo, RateCtl};
use crate::metrics::recorder::Recorder;
use crate::metrics::Counters;
use crate::monitor::{Monitor, MonitorConfig};
use crate::net::{Link, Net, Netdev, Node, Topology, Wire};
use crate::packet::Packets;
use crate::phy::dsss::{self, DsssRate};
use crate::phy::error::ErrorModel;
use crate::radio::Channel;
use crate::scenario::{tc_trees, Endpoint, FlowRate, Protocol, RateControl, Scenario, Standard};
use crate::tcp::sender::AppLimit;
use crate::tcp::TcpConfig;
use crate::time::Nanos;
use crate::traffic::{FlowState, TcpConn, Traffic, SATURATE_BACKLOG, SATURATE_BACKLOG_HT};
use crate::wifi::ht::Ht;
use crate::wifi::legacy::{reference_airtime, Legacy};
use crate::wifi::{IfsRules, Mac, Medium, Outcome, Radio, Wifi};

use super::{SimError, Simulation};

impl Simulation {
    /// Build the world of a scenario. Fails only if a tc script does not build (a scenario from
    /// `parse_scenario` has had its scripts checked already).
    pub fn new(scn: &Scenario) -> Result<Simulation, SimError> {
        let (expanded, reply_of) = scn.with_reply_flows();
        let scn = &expanded;
        let n = scn.stations.len();
        let seed = scn.run.seed;
        let is_ht = scn.cell.standard == Standard::Dot11n;

        let net = build_net(scn, is_ht)?;
        let (traffic, books) = build_traffic(scn, &net, reply_of, is_ht);
        let wifi = build_wifi(scn, &net, &traffic, is_ht);

        let end = scn.run.duration;
        let mut queue = EventQueue::with_capacity(1024 + 4 * scn.flows.len());
        for (fi, f) in scn.flows.iter().enumerate() {
            if f.start <= end && f.rate != FlowRate::Reactive {
                queue.schedule(f.start, Event::FlowStart { flow: fi as u32 });
            }
        }
        if scn.cell.beacons {
            queue.schedule(Nanos::ZERO, Event::Beacon);
        }
        queue.schedule(scn.run.warmup, Event::WarmupEnd);
        let first_sample = scn.run.warmup + scn.run.sample_interval;
        if first_sample <= end {
            queue.schedule(first_sample, Event::Sample);
        }
        let n_samples = ((end.0 - scn.run.warmup.0) / scn.run.sample_interval.0) as usize;
        let mut cx = Ctx {
            now: Nanos::ZERO,
            pkts: Packets::with_capacity(4096),
            keys: (0..scn.flows.len()).map(|i| scn.flow_key(i)).collect(),
            chan: vec![crate::qdisc::REL_ONE; scn.flows.len()],
            dropped: Vec::with_capacity(64),
            counters: Counters::new(scn.flows.len(), n),
            flows: books,
            out: Outbox::new(queue),
        };
        for st in 0..n {
            wifi.m.radio.refresh_chan(st, &mut cx.chan);
        }
        let _ = seed;
        Ok(Simulation {
            scn: scn.clone(),
            end,
            cx,
            net,
            wifi,
            traffic,
            rec: Recorder::new(scn.flows.len(), n_samples.min(1 << 20) * (n + scn.flows.len())),
            wall: std::time::Duration::ZERO,
            finished: false,
        })
    }
}

/// The devices of every node, by name, with the qdisc trees of the nodes' tc scripts.
fn build_net(scn: &Scenario, is_ht: bool) -> Result<Net, SimError> {
    let names: Vec<String> = scn.stations.iter().map(|s| s.name.clone()).collect();
    let topo = Topology::new(&names);
    let mut devs: Vec<Netdev> = topo
        .devs
        .iter()
        .map(|d| {
            let txqueuelen = match d.node {
                Node::Ap => scn.ap.txqueuelen,
                Node::Server => scn.server.txqueuelen,
                Node::Station(i) => scn.stations[i as usize].node.txqueuelen,
            };
            let mut dev = Netdev::new(txqueuelen, d.link, d.acct);
            // In an 802.11n cell a frame leaves the first hop when it leaves the driver.
            dev.leaves_at_dequeue = !(is_ht && matches!(d.link, Link::Wifi(_)));
            dev
        })
        .collect();
    for node in tc_trees::nodes_with_scripts(scn) {
        let (trees, errors, _) = tc_trees::build_node(&node, scn.run.seed);
        if !errors.is_empty() {
            let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
            return Err(SimError::Tc(msgs.join("\n")));
        }
        for (index, root) in trees {
            devs[index].qdisc = root;
        }
    }
    Ok(Net { topo, devs, wire: Wire { rate_bps: scn.wired.rate_bps, delay: scn.wired.delay } })
}

fn node_of(e: Endpoint) -> Node {
    match e {
        Endpoint::Server => Node::Server,
        Endpoint::Ap => Node::Ap,
        Endpoint::Station(i) => Node::Station(i as u32),
    }
}

/// The flows' sources, TCP connections and per-flow ledger entries.
fn build_traffic(scn: &Scenario, net: &Net, reply_of: Vec<Option<u32>>, is_ht: bool) -> (Traffic, Vec<FlowBook>) {
    let mut flows = Vec::with_capacity(scn.flows.len());
    let mut books = Vec::with_capacity(scn.flows.len());
    let mut saturating_at = vec![Vec::new(); net.devs.len()];
    for (fi, f) in scn.flows.iter().enumerate() {
        let (src, dst) = (node_of(f.src), node_of(f.dst));
        let first_hop = net.topo.route(src, dst);
        let saturate = Traffic::is_saturating(f);
        if saturate {
            saturating_at[first_hop as usize].push(fi as u32);
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
            active: false,
            stop: f.stop.unwrap_or(Nanos(u64::MAX)),
            stations: [st(src), st(dst)],
        });
        books.push(FlowBook { first_hop, saturate, outstanding: 0, dst_station: st(dst) });
    }
    let tcp = scn
        .flows
        .iter()
        .map(|f| {
            (f.protocol == Protocol::Tcp).then(|| {
                let mut cfg = TcpConfig::new(f.cc);
                cfg.mss = f.size;
                cfg.sack = f.sack;
                let app = f.bytes.map_or(AppLimit::Unlimited, AppLimit::Bytes);
                Box::new(TcpConn::new(&cfg, app))
            })
        })
        .collect();
    let backlog = if is_ht { SATURATE_BACKLOG_HT } else { SATURATE_BACKLOG };
    let traffic = Traffic::new(scn.flows.clone(), flows, tcp, reply_of, saturating_at, backlog, scn.run.duration);
    (traffic, books)
}

/// The medium (channel access, radio, IFS rules) and the cell's MAC.
fn build_wifi(scn: &Scenario, net: &Net, traffic: &Traffic, is_ht: bool) -> Wifi {
    let n = scn.stations.len();
    let cell = &scn.cell;
    let seed = scn.run.seed;
    let params = if is_ht {
        Ht::dcf_params(scn)
    } else {
        DcfParams {
            slot: dsss::SLOT,
            sifs: dsss::SIFS,
            difs: dsss::DIFS,
            pifs: dsss::PIFS,
            ack_timeout: dsss::ACK_TIMEOUT,
            cw_min: cell.cw_min,
            cw_max: cell.cw_max,
            retry_limit: cell.retry_limit,
        }
    };
    let channels: Vec<Option<Channel>> =
        scn.stations.iter().enumerate().map(|(i, st)| st.channel.clone().map(|c| Channel::new(c, seed, i as u32))).collect();
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
        Monitor::new(cfg, &initial, seed)
    });
    let mut flows_to = vec![Vec::new(); n];
    for (fi, f) in traffic.flows.iter().enumerate() {
        if let Node::Station(s) = f.dst {
            flows_to[s as usize].push(fi as u32);
        }
    }
    let radio = Radio {
        channels,
        errors: ErrorModel::new(cell.preamble_detection_cdb),
        err_rng: (0..=n).map(|i| stream(seed, StreamKind::FrameError, i as u64)).collect(),
        monitor,
        report: None,
        flows_to,
    };
    // 802.11n: one EDCA function per node and access category (`ht::contender`).
    let contenders = if is_ht { (n + 1) * crate::mac80211::NUM_ACS } else { n + 1 };
    let ifs = if is_ht {
        IfsRules::Ht { sifs: scn.cell.ht.as_ref().expect("802.11n").band.sifs() }
    } else {
        IfsRules::Dsss { preamble: cell.preamble, eifs: cell.eifs, defer: cell.collision_defer }
    };
    let mut m = Medium {
        dcf: Dcf::new(contenders, params, seed),
        air: Vec::with_capacity(n + 2),
        outcome: Outcome::Collision,
        radio,
        ifs,
        beacon_bytes: cell.beacon_bytes,
        devs: (0..=n as u32).map(|node| net.topo.wifi_dev(node)).collect(),
    };
    let mac = if is_ht {
        let ht = Ht::new(scn, seed);
        ht.init_edca(&mut m.dcf);
        Mac::Ht(Box::new(ht))
    } else {
        Mac::Legacy(Box::new(build_legacy(scn)))
    };
    Wifi { m, mac }
}

/// The 802.11b MAC: preamble, ACK rates, and one rate controller per link and direction.
fn build_legacy(scn: &Scenario) -> Legacy {
    let cell = &scn.cell;
    let preamble = cell.preamble;
    let ack_rate = DsssRate::ALL.map(|r| dsss::control_response_rate(&cell.basic_rates, r));
    let ack_by_rate = DsssRate::ALL.map(|r| dsss::ack_time(preamble, &cell.basic_rates, r));
    let n = scn.stations.len();
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
            let ref_air: Vec<Nanos> =
                DsssRate::ALL[..=top].iter().map(|&r| reference_airtime(preamble, r, ack_by_rate[r as usize])).collect();
            let node = if dir == 0 { 0 } else { i as u64 + 1 };
            let rng = stream(scn.run.seed, StreamKind::RateControl, node * 65536 + i as u64);
            let ctl = RateCtl::new(algo, &ref_air, cell.retry_limit, rng).expect("1 to 4 rates and a fixed index among them are always valid");
            rate_ctl.push(ctl);
        }
    }
    Legacy { preamble, lowest_basic: cell.basic_rates[0], ack_by_rate, ack_rate, rate_ctl, n_stations: n }
}
