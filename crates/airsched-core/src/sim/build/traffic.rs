//! Building the traffic of a scenario: each flow's source (CBR, saturating, ping, a TCP
//! connection's two ends with their kernel era's settings), and its ledger entry.

use crate::ctx::FlowBook;
use crate::engine::{named, StreamKind};
use crate::net::{Node, Topology};
use crate::scenario::Scenario;
use crate::tcp::sender::AppLimit;
use crate::tcp::{KernelEra, TcpConfig};
use crate::time::Nanos;
use crate::traffic::conn::TcpConn;
use crate::traffic::flow::{Endpoint, FlowConfig, FlowRate, Protocol};
use crate::traffic::ping::{PingConfig, PingSource};
use crate::traffic::source::{FlowState, Traffic};
use crate::traffic::{SATURATE_BACKLOG, SATURATE_BACKLOG_HT};

/// The kernel era scenarios run when neither the flow nor the node names one: Linux 6.1, the
/// TCP a host of today runs (CUBIC, RACK-TLP, TSQ, the 6.1 buffer autotuning; docs/model-tcp.md). Until issue 27 the default was no era at all (a fixed 6 MiB window, no
/// send buffer, local drops counted as losses, no TSQ), a TCP no Linux host runs; the papers'
/// scenarios pin their testbeds' eras ("2.4" for Valenzuela and Yip & Kwok, "4.9" for
/// Høiland-Jørgensen). The era-less model (`TcpConfig::new`) stays for the TCP unit tests only.
pub const DEFAULT_KERNEL_ERA: KernelEra = KernelEra::Linux6_1;

/// The era of a TCP flow's end at `at`: the flow's `kernel`, else the node's, else the default.
pub fn tcp_era(scn: &Scenario, f: &FlowConfig, at: Endpoint) -> KernelEra {
    let node = match at {
        Endpoint::Server => scn.server.kernel,
        Endpoint::Ap => scn.ap.kernel,
        Endpoint::Station(i) => scn.stations[i].node.kernel,
        Endpoint::Bt(i) => scn.bluetooth[i].node.kernel,
    };
    f.tcp.kernel.or(node).unwrap_or(DEFAULT_KERNEL_ERA)
}

/// One end's TCP settings: the era's, then the flow's overrides.
pub fn tcp_config(f: &FlowConfig, era: KernelEra) -> TcpConfig {
    let o = &f.tcp;
    let cc = if o.cc_given { f.cc } else { era.default_cc() };
    let mut cfg = era.config(cc);
    let base = KernelEra::Linux6_1.config(cc);
    cfg.mss = f.size;
    cfg.sack = f.sack;
    if let Some(n) = o.initial_cwnd {
        cfg.initial_cwnd_segments = n;
    }
    if o.rmem.is_some() || o.adv_win_scale.is_some() || o.autotune.is_some() {
        let mut r = cfg.rcvbuf.or(base.rcvbuf).expect("6.1 has a receive buffer");
        r.rmem = o.rmem.unwrap_or(r.rmem);
        r.adv_win_scale = o.adv_win_scale.unwrap_or(r.adv_win_scale);
        r.autotune = o.autotune.unwrap_or(r.autotune);
        cfg.rcvbuf = Some(r);
        cfg.rcv_wnd = crate::tcp::win_from_space(r.rmem[1], r.adv_win_scale);
    }
    if let Some(w) = o.wmem {
        cfg.sndbuf = Some(crate::tcp::SndBuf { wmem: w });
    }
    match o.tsq {
        Some(0) => cfg.tsq = None,
        Some(n) => {
            cfg.tsq = Some(crate::tcp::Tsq { limit_output_bytes: n, ..cfg.tsq.or(base.tsq).expect("6.1 has TSQ") })
        }
        None => {}
    }
    // RACK / TLP / F-RTO: `false` switches one off; `true` keeps the era's, or takes 6.1's.
    let six = crate::tcp::LossEra::Linux6_1;
    match o.rack {
        Some(false) => cfg.rack = None,
        Some(true) => cfg.rack = cfg.rack.or(Some(six)),
        None => {}
    }
    match o.tlp {
        Some(false) => cfg.tlp = None,
        Some(true) => cfg.tlp = cfg.tlp.or(Some(six)),
        None => {}
    }
    cfg.frto = o.frto.unwrap_or(cfg.frto);
    cfg
}

fn node_of(e: Endpoint) -> Node {
    match e {
        Endpoint::Server => Node::Server,
        Endpoint::Ap => Node::Ap,
        Endpoint::Station(i) => Node::Station(i as u32),
        Endpoint::Bt(i) => Node::BtSlave(i as u32),
    }
}

/// The applications of a scenario's flows (reply flows included: `reply_of` from
/// `Scenario::with_reply_flows`), and each flow's ledger entry.
pub(crate) fn traffic(scn: &Scenario, topo: &Topology, reply_of: Vec<Option<u32>>) -> (Traffic, Vec<FlowBook>) {
    let is_ht = scn.cell.standard.is_ht_mac();
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
        // Every TCP source has a kernel era (the default's when none is named), so Linux's
        // local-congestion path.
        let tcp_local = f.protocol == Protocol::Tcp;
        books.push(FlowBook { first_hop, saturate, outstanding: 0, dst_station: st(dst), tcp_local, queued: 0 });
    }
    let tcp = scn
        .flows
        .iter()
        .map(|f| {
            (f.protocol == Protocol::Tcp).then(|| {
                let scfg = tcp_config(f, tcp_era(scn, f, f.src));
                let rcfg = tcp_config(f, tcp_era(scn, f, f.dst));
                let app = f.bytes.map_or(AppLimit::Unlimited, AppLimit::Bytes);
                let mut conn = TcpConn::with_ends(&scfg, &rcfg, app);
                conn.repeat = f.tcp.repeat;
                let hop = topo.route(node_of(f.src), node_of(f.dst));
                let wifi = matches!(topo.devs[hop as usize].link, crate::net::Link::Wifi(_));
                conn.tsq = scfg.tsq.map(|t| {
                    (
                        t.limit_output_bytes,
                        if wifi { t.wifi_pacing_shift.unwrap_or(t.pacing_shift) } else { t.pacing_shift },
                    )
                });
                Box::new(conn)
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
    let mut traffic =
        Traffic::new(scn.flows.clone(), flows, tcp, pings, reply_of, saturating_at, backlog, scn.run.duration);
    for (fi, conn) in traffic.tcp.iter().enumerate() {
        if conn.as_ref().is_some_and(|c| c.tsq.is_some()) {
            traffic.tsq_at[books[fi].first_hop as usize].push(fi as u32);
        }
    }
    (traffic, books)
}
