//! Building the traffic of a scenario.

use super::source::{FlowState, Traffic};
use super::conn::TcpConn;
use super::ping::{PingConfig, PingSource};
use super::{SATURATE_BACKLOG, SATURATE_BACKLOG_HT};
use crate::ctx::FlowBook;
use crate::engine::{named, StreamKind};
use crate::net::{Node, Topology};
use crate::scenario::{Endpoint, FlowRate, Protocol, Scenario, Standard};
use crate::tcp::sender::AppLimit;
use crate::tcp::TcpConfig;
use crate::time::Nanos;

fn node_of(e: Endpoint) -> Node {
    match e {
        Endpoint::Server => Node::Server,
        Endpoint::Ap => Node::Ap,
        Endpoint::Station(i) => Node::Station(i as u32),
        Endpoint::Bt(i) => Node::BtSlave(i as u32),
    }
}

/// The flows' sources, TCP connections and per-flow ledger entries.
impl Traffic {
    /// The applications of a scenario's flows (reply flows included: `reply_of` from
    /// `Scenario::with_reply_flows`), and each flow's ledger entry.
    pub fn from_scenario(scn: &Scenario, topo: &Topology, reply_of: Vec<Option<u32>>) -> (Traffic, Vec<FlowBook>) {
    let is_ht = scn.cell.standard == Standard::Dot11n;
    let mut flows = Vec::with_capacity(scn.flows.len());
    let mut books = Vec::with_capacity(scn.flows.len());
    let mut saturating_at = vec![Vec::new(); topo.devs.len()];
    for (fi, f) in scn.flows.iter().enumerate() {
        let (src, dst) = (node_of(f.src), node_of(f.dst));
        let first_hop = topo.route(src, dst);
        let saturate = Traffic::is_saturating(f);
        if saturate {
            saturating_at[first_hop as usize].push(fi as u32);
        }
        let st = |nd: Node| match nd {
            Node::Station(i) => Some(i),
            _ => None,
        };
        flows.push(FlowState {
            rng: named(scn.run.seed, StreamKind::Traffic, &f.name, 0),
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
    // Ping flows run the one ping source, as iputils ping without -W: every reply counts.
    let pings = scn
        .flows
        .iter()
        .map(|f| match (f.protocol, f.rate) {
            (Protocol::Ping, FlowRate::Periodic { interval }) => {
                Some(PingSource::new(PingConfig::without_deadline(interval, f.size), f.start))
            }
            _ => None,
        })
        .collect();
    let backlog = if is_ht { SATURATE_BACKLOG_HT } else { SATURATE_BACKLOG };
    let traffic = Traffic::new(scn.flows.clone(), flows, tcp, pings, reply_of, saturating_at, backlog, scn.run.duration);
    (traffic, books)
    }
}

