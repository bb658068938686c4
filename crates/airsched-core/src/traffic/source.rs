//! The applications at the ends of the flows: UDP sources (CBR with an optional send-time
//! jitter, saturating sources that keep their first hop topped up), ping responders, TCP
//! connections ([`super::tcp`]), and the receiving side that counts what arrives.
//!
//! A source hands each packet to its node's stack through `xmit(cx, device, packet)`, the
//! joining layer's transmit path (enqueue on the device's qdisc and run the device), which
//! answers whether the qdisc took it.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::conn::TcpConn;
use super::ping::PingSource;
use super::{cbr_send_time, SATURATE_BACKLOG};
use crate::ctx::Ctx;
use crate::engine::Event;
use crate::metrics::recorder::{PingSample, Recorder};
use crate::node::{DevId, Node};
use crate::packet::{Packet, PacketId};
use crate::time::Nanos;
use crate::traffic::flow::{FlowConfig, FlowRate, Protocol, UDP_IP_OVERHEAD};

pub struct FlowState {
    /// Send-time jitter draws (CBR flows with a jitter).
    pub rng: Xoshiro256PlusPlus,
    pub jitter: Nanos,
    pub src: Node,
    pub dst: Node,
    pub active: bool,
    pub stop: Nanos,
    /// Station the flow belongs to for per-station figures (src or dst), if any.
    pub stations: [Option<u32>; 2],
}

impl FlowState {
    /// Stations a flow's goodput counts for (its src and dst, each once).
    pub fn station_set(&self) -> impl Iterator<Item = u32> + '_ {
        let [a, b] = self.stations;
        a.into_iter().chain(b.filter(|&x| Some(x) != a))
    }
}

pub struct Traffic {
    pub cfg: Vec<FlowConfig>,
    pub flows: Vec<FlowState>,
    /// Per TCP flow: the connection (sender at the source, receiver at the destination).
    pub tcp: Vec<Option<Box<TcpConn>>>,
    /// Per flow: its reply flow (pings, TCP ACKs), and for a reply flow the flow it answers.
    pub reply_of: Vec<Option<u32>>,
    pub ping_of: Vec<u32>,
    /// Per ping flow: its echo source (sequence numbers, send times, the RTT of each reply).
    pub pings: Vec<Option<PingSource>>,
    /// Per device: the saturating flows whose first hop it is.
    pub saturating_at: Vec<Vec<u32>>,
    /// Per device: the TCP flows with TCP Small Queues whose first hop it is (woken when one
    /// of their packets leaves it, as Linux's TSQ tasklet does).
    pub tsq_at: Vec<Vec<u32>>,
    /// Packets a saturating source keeps queued (`SATURATE_BACKLOG`, or `SATURATE_BACKLOG_HT`
    /// in an 802.11n cell, where they count until they leave the driver).
    pub saturate_backlog: u32,
    refill_rotor: u32,
    pub end: Nanos,
    /// External packets (`Protocol::External`) that reached their destination: (the tag they
    /// were injected with, the arrival time), taken by the emulation (`sim/external.rs`).
    pub external_out: Vec<(u64, Nanos)>,
    /// TCP flows whose receiving application has data to read since the current event began
    /// (`flush_reads` runs the reads at its end).
    pub reads_due: Vec<u32>,
    /// Per CBR flow: the later flows that tick at the same instants (same start, stop, rate
    /// and size, no jitter), whose ticks ride on this flow's `FlowTick` ([`Self::tick_groups`]).
    pub tick_followers: Vec<Vec<u32>>,
    /// Per flow: it rides on another flow's ticks (schedules no `FlowTick` of its own).
    pub follows: Vec<bool>,
}

impl Traffic {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: Vec<FlowConfig>,
        flows: Vec<FlowState>,
        tcp: Vec<Option<Box<TcpConn>>>,
        pings: Vec<Option<PingSource>>,
        reply_of: Vec<Option<u32>>,
        saturating_at: Vec<Vec<u32>>,
        saturate_backlog: u32,
        end: Nanos,
    ) -> Traffic {
        let mut ping_of: Vec<u32> = (0..cfg.len() as u32).collect();
        for (i, r) in reply_of.iter().enumerate() {
            if let Some(r) = r {
                ping_of[*r as usize] = i as u32;
            }
        }
        let tsq_at = vec![Vec::new(); saturating_at.len()];
        let (tick_followers, follows) = Self::tick_groups(&cfg, &pings);
        Traffic {
            cfg,
            flows,
            tcp,
            reply_of,
            ping_of,
            pings,
            saturating_at,
            tsq_at,
            saturate_backlog,
            refill_rotor: 0,
            end,
            external_out: Vec::new(),
            reads_due: Vec::with_capacity(16),
            tick_followers,
            follows,
        }
    }

    /// UDP CBR flows without jitter whose send times are the same function (same start, stop,
    /// rate and size) tick at the same instants, one after another in flow order (the queue's
    /// order among their `FlowTick`s): the first such flow leads and the others follow, their
    /// ticks handled right after its own by the simulator (`sim::Simulation::run_followers`)
    /// instead of each going through the event queue.
    fn tick_groups(cfg: &[FlowConfig], pings: &[Option<PingSource>]) -> (Vec<Vec<u32>>, Vec<bool>) {
        let mut followers = vec![Vec::new(); cfg.len()];
        let mut follows = vec![false; cfg.len()];
        let plain = |f: usize| {
            cfg[f].protocol == Protocol::Udp
                && pings[f].is_none()
                && cfg[f].jitter == Nanos::ZERO
                && matches!(cfg[f].rate, FlowRate::Cbr { .. })
        };
        for f in 0..cfg.len() {
            if follows[f] || !plain(f) {
                continue;
            }
            let same =
                |a: &FlowConfig, b: &FlowConfig| (a.start, a.stop, a.rate, a.size) == (b.start, b.stop, b.rate, b.size);
            for g in f + 1..cfg.len() {
                if !follows[g] && plain(g) && same(&cfg[f], &cfg[g]) {
                    follows[g] = true;
                    followers[f].push(g as u32);
                }
            }
        }
        (followers, follows)
    }

    /// Flow `g` stops following: its ticks from `k` on are its own events (the queue held an
    /// event that comes between its leader's tick and its own).
    pub fn detach(&mut self, leader: u32, g: u32) {
        self.follows[g as usize] = false;
        self.tick_followers[leader as usize].retain(|&x| x != g);
    }

    pub fn on_flow_start<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, f: u32, cx: &mut Ctx, xmit: &mut X) {
        let fs = &mut self.flows[f as usize];
        if cx.now >= fs.stop {
            return;
        }
        fs.active = true;
        if let Some(conn) = self.tcp[f as usize].as_mut() {
            conn.file_started = cx.now;
            let stop = fs.stop;
            if stop < self.end {
                // The application closes at `stop`: the timer path checks it.
                cx.schedule(stop, Event::TcpTimer { flow: f, gen: u64::MAX });
            }
            self.tcp_push(f, cx, xmit);
        } else if cx.flows[f as usize].saturate {
            self.refill(f, cx, xmit);
        } else {
            self.on_flow_tick(f, 0, cx, xmit);
        }
    }

    pub fn on_flow_tick<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        f: u32,
        k: u64,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        if self.cfg[f as usize].protocol == Protocol::PingReply {
            // A responder with a turnaround (`reply_delay`) answers request `k` now.
            let request = self.ping_of[f as usize];
            let payload = self.cfg[request as usize].size;
            self.send_reply(
                f,
                k,
                payload + super::ping::ICMP_IP_HEADER,
                payload,
                cx.now - self.cfg[request as usize].reply_delay,
                cx,
                xmit,
            );
            return;
        }
        if cx.now >= self.flows[f as usize].stop {
            self.flows[f as usize].active = false;
            return;
        }
        match self.pings[f as usize].as_mut() {
            Some(ping) => {
                if let Some(req) = ping.next_send(cx.now) {
                    self.emit_seq(f, req.seq, cx, xmit);
                }
            }
            None => {
                self.emit(f, cx, xmit);
            }
        }
        if self.follows[f as usize] {
            // The leader's next tick is this flow's too.
            return;
        }
        if let Some(nominal) = cbr_send_time(&self.cfg[f as usize], k + 1) {
            let fs = &mut self.flows[f as usize];
            let t =
                if fs.jitter > Nanos::ZERO { nominal + Nanos(fs.rng.random_range(0..=fs.jitter.0)) } else { nominal };
            if t <= self.end && t < self.flows[f as usize].stop {
                cx.schedule(t, Event::FlowTick { flow: f, k: k + 1 });
            }
        }
    }

    /// A source sends one packet. Returns whether its first hop queued it.
    fn emit<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, f: u32, cx: &mut Ctx, xmit: &mut X) -> bool {
        let seq = cx.counters.flows[f as usize].sent_packets;
        self.emit_seq(f, seq, cx, xmit)
    }

    /// Send one packet with sequence number `seq`.
    fn emit_seq<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        f: u32,
        seq: u64,
        cx: &mut Ctx,
        xmit: &mut X,
    ) -> bool {
        let payload = self.cfg[f as usize].size;
        let id = cx.pkts.alloc(Packet { seq, ..Packet::new(f, payload + UDP_IP_OVERHEAD, payload, cx.now) });
        cx.counters.flows[f as usize].sent_packets += 1;
        let hop = cx.flows[f as usize].first_hop;
        xmit(cx, hop, id)
    }

    /// Keep a saturating flow's first-hop queue topped up.
    /// Returns false when the device refused a send.
    fn refill<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, f: u32, cx: &mut Ctx, xmit: &mut X) -> bool {
        // At most `saturate_backlog` packets per call: a queue that makes room by dropping
        // older packets of the same flow (head drop, fq_codel overflow) must not make this loop
        // forever.
        for _ in 0..self.saturate_backlog {
            let fs = &self.flows[f as usize];
            if !fs.active || cx.flows[f as usize].outstanding >= self.saturate_backlog || cx.now >= fs.stop {
                return true;
            }
            cx.flows[f as usize].outstanding += 1;
            if !self.emit(f, cx, xmit) {
                // The qdisc refused the send (a full queue: ENOBUFS, see Ctx::refused_send):
                // try again at its next dequeue.
                cx.flows[f as usize].outstanding -= 1;
                return false;
            }
        }
        true
    }

    /// One round of top-ups for the saturating sources whose first hop is `dev`, starting at
    /// a rotating flow so that on a small shared queue no source always takes the freed
    /// places first. Returns false when no source sends on `dev`.
    pub fn refill_round<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        dev: DevId,
        cx: &mut Ctx,
        xmit: &mut X,
    ) -> bool {
        // TCP Small Queues: throttled sockets whose packets left this device send again.
        for j in 0..self.tsq_at[dev as usize].len() {
            let f = self.tsq_at[dev as usize][j];
            if let Some(conn) = self.tcp[f as usize].as_mut() {
                if conn.throttled {
                    conn.throttled = false;
                    self.tcp_push(f, cx, xmit);
                }
            }
        }
        let n_sat = self.saturating_at[dev as usize].len();
        if n_sat == 0 {
            return !self.tsq_at[dev as usize].is_empty();
        }
        let start = self.refill_rotor as usize % n_sat;
        self.refill_rotor = self.refill_rotor.wrapping_add(1);
        for j in 0..n_sat {
            let f = self.saturating_at[dev as usize][(start + j) % n_sat];
            // A refused send ends the round: the queue has no room now, and every blocked
            // source is served at a later dequeue (the rotating start gives each its turn), so
            // hundreds of sources on one full queue cost one refusal per dequeue, not hundreds.
            if !self.refill(f, cx, xmit) {
                break;
            }
        }
        true
    }

    /// The most rounds one top-up request may take (a device that keeps asking, a shaper or
    /// a head-drop queue, is served again at its next dequeue).
    pub const MAX_REFILL_ROUNDS: u32 = SATURATE_BACKLOG;

    /// A packet reaches its destination: count it, and let the application answer.
    pub fn receive<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        pkt: PacketId,
        cx: &mut Ctx,
        rec: &mut Recorder,
        xmit: &mut X,
    ) {
        let p = *cx.pkts.get(pkt);
        let now = cx.now;
        if let Some(m) = rec.meter.as_mut() {
            if m.flow == p.flow && rec.at_warmup.is_some() {
                m.on_receive(now, p.payload);
            }
        }
        let c = &mut cx.counters.flows[p.flow as usize];
        c.received_packets += 1;
        c.received_payload_bytes += p.payload as u64;
        let delay = (now - p.created).0;
        c.delay_sum_ns += delay as u128;
        c.queue_delay_sum_ns += p.queue_delay.0 as u128;
        if rec.measuring() {
            let m = &mut rec.delay_max_ns[p.flow as usize];
            *m = (*m).max(delay);
        }
        match self.cfg[p.flow as usize].protocol {
            Protocol::Ping => self.answer_ping(&p, cx, xmit),
            Protocol::Tcp => self.tcp_segment_arrived(&p, cx, xmit),
            Protocol::TcpAck => self.tcp_ack_arrived(&p, cx, xmit),
            Protocol::External => self.external_out.push((p.seq, now)),
            Protocol::PingReply => {
                let request = self.ping_of[p.flow as usize];
                let rtt = self.pings[request as usize].as_mut().and_then(|s| s.on_reply(now, p.seq));
                if let (Some(rtt), true) = (rtt, rec.measuring()) {
                    rec.pings.push(PingSample { flow: request, seq: p.seq, time: now, rtt });
                }
            }
            _ => {}
        }
        cx.pkts.free(pkt);
    }

    /// The destination of an echo request answers it on the ping's reply flow: at once, or
    /// after the flow's `reply_delay` (a `FlowTick` of the reply flow, `k` = the request's
    /// sequence number).
    fn answer_ping<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(&mut self, req: &Packet, cx: &mut Ctx, xmit: &mut X) {
        let Some(r) = self.reply_of[req.flow as usize] else { return };
        let delay = self.cfg[req.flow as usize].reply_delay;
        if delay > Nanos::ZERO {
            let t = cx.now + delay;
            if t <= self.end {
                cx.schedule(t, Event::FlowTick { flow: r, k: req.seq });
            }
            return;
        }
        self.send_reply(r, req.seq, req.ip_len, req.payload, req.created, cx, xmit);
    }

    /// Send echo reply `seq` on reply flow `r`; `echo`: what the reply carries back (the
    /// request's creation time, or its arrival when the responder waited).
    #[allow(clippy::too_many_arguments)]
    fn send_reply<X: FnMut(&mut Ctx, DevId, PacketId) -> bool>(
        &mut self,
        r: u32,
        seq: u64,
        ip_len: u32,
        payload: u32,
        echo: Nanos,
        cx: &mut Ctx,
        xmit: &mut X,
    ) {
        let id = cx.pkts.alloc(Packet { seq, echo, ..Packet::new(r, ip_len, payload, cx.now) });
        cx.counters.flows[r as usize].sent_packets += 1;
        let hop = cx.flows[r as usize].first_hop;
        xmit(cx, hop, id);
    }

    /// Whether flow `f` is a saturating source (its rate).
    pub fn is_saturating(cfg: &FlowConfig) -> bool {
        matches!(cfg.rate, FlowRate::Saturate)
    }
}
