//! The joining layer: the clock, the event loop, dispatch by event family, and the few rules
//! that join the components (the transmit path of a node's stack, the arrival of a packet at
//! a node, topping up saturating sources).
//!
//! Components (`net`, `wifi`, `traffic`) own their state and are handed the shared context
//! ([`Ctx`]); they reach each other only through its outbox. Processing order, which the
//! results depend on and which is part of the contract:
//! 1. Events are popped in the engine's total order (`engine/queue.rs`).
//! 2. The handler of an event runs to its end; a packet a source sends goes through
//!    [`xmit`] at once: the qdisc's enqueue, then the device runs (its MAC or wire pulls from
//!    the qdisc), as `dev_queue_xmit` runs `qdisc_run` in Linux.
//! 3. Then the requests it filed are carried out in filing order, each to its end, with what
//!    they file in turn appended: a delivery hands the packet to the application or forwards
//!    it (through [`xmit`]); a top-up runs rounds of the device's saturating sources, and top-up
//!    requests filed during a round cause one more round (at most
//!    [`Traffic::MAX_REFILL_ROUNDS`]) instead of being carried out on their own.
//! 4. At the end of a busy period the deliveries of the exchange are carried out before the
//!    medium is released and the transmitters pull their next frames.

pub(crate) mod build;
pub(crate) mod calibrate;
pub(crate) mod external;
mod report;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use crate::ctx::{Ctx, Req};
use crate::engine::Event;
use crate::metrics::recorder::{BlockMeter, Recorder};
use crate::metrics::{Sample, SampleKind};
use crate::net::{DevId, Link, Net, Node, Wire};
use crate::packet::PacketId;
use crate::radio::Dir;
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::Traffic;
use crate::wifi::Wifi;

/// The AP's piconet (None: no `[[bluetooth]]` clients; one branch per Bluetooth device).
type Piconet = Option<Box<crate::bluetooth::Bluetooth>>;

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

pub struct Simulation {
    scn: Scenario,
    end: Nanos,
    cx: Ctx,
    net: Net,
    wifi: Wifi,
    /// The AP's piconet beside the cell, when the scenario has `[[bluetooth]]` clients.
    bt: Piconet,
    traffic: Traffic,
    rec: Recorder,
    wall: Duration,
    finished: bool,
    /// Queue lengths and delays over time, when asked for (`enable_queue_trace`).
    queue_trace: Option<Box<crate::metrics::queues::QueueTrace>>,
    /// Interface counters at each sample, when asked for (`enable_interface_counters`).
    iface_counters: bool,
    /// mac80211's statistics tables in the results, when asked for (`enable_mac_stats`).
    mac_stats: bool,
}

/// The transmit path of a node's stack: offer `pkt` to device `dev`'s qdisc and, if it took
/// it, run the device. Returns whether the qdisc took it. A device with an egress hook (an ifb
/// redirect, an IMQ rule) hands the packet to the virtual device instead, which sends it back
/// to `dev`'s qdisc later ([`run_dev`]).
#[inline(always)]
fn xmit(net: &mut Net, wifi: &mut Wifi, bt: &mut Piconet, cx: &mut Ctx, dev: DevId, pkt: PacketId) -> bool {
    let mut to = dev;
    if let Some(hook) = &net.devs[dev as usize].hook {
        let key = cx.keys[cx.pkts.get(pkt).flow as usize];
        if let Some(virt) = hook.target(&key, cx.pkts.get(pkt).ip_len) {
            cx.pkts.get_mut(pkt).iif = dev;
            to = virt;
        }
    }
    xmit_own(net, wifi, bt, cx, to, pkt)
}

/// `dev`'s own qdisc and driver, without its egress hook (`skb->tc_skip_classify` on the way
/// back from an ifb: the filters still classify, their actions are skipped once).
///
/// A packet that the device's empty root FIFO would pass on at once goes straight to the
/// device when it takes one now (Linux's `TCQ_F_CAN_BYPASS`; [`crate::net::Netdev::bypass`]
/// keeps the FIFO's counters as its enqueue and dequeue would); otherwise it is queued, which
/// is what the enqueue before the device ran would have left (the device, finding no room,
/// looked at nothing of the qdisc). Results are identical either way.
#[inline(always)]
fn xmit_own(net: &mut Net, wifi: &mut Wifi, bt: &mut Piconet, cx: &mut Ctx, dev: DevId, pkt: PacketId) -> bool {
    let d = &mut net.devs[dev as usize];
    if let Link::Wire(to) = d.link {
        // A wire busy serialising: the packet's departure from the FIFO may be fixed now
        // (`Wire::commit`), without a `WireTxDone` to take it out.
        if !d.departures.is_empty() {
            net.wire.catch_up(dev, to, d, cx, None);
        }
        if let Some(at) = Wire::departure_of(dev, d, pkt, cx) {
            if !d.enqueue(dev, pkt, cx) {
                return false;
            }
            net.wire.commit(dev, d, pkt, at, cx);
            return true;
        }
    }
    if matches!(d.link, Link::Wifi(_) | Link::Wire(_)) && d.can_bypass(pkt, cx) {
        let mut offered = Some(pkt);
        run_dev_offered(net, wifi, bt, cx, dev, &mut offered);
        if offered.is_none() {
            return true;
        }
        return net.devs[dev as usize].enqueue(dev, pkt, cx);
    }
    let ok = net.devs[dev as usize].enqueue(dev, pkt, cx);
    if ok {
        run_dev(net, wifi, bt, cx, dev);
    }
    ok
}

/// [`xmit_own`] for a packet a virtual device sends back (out of line: the two call each other).
#[inline(never)]
fn xmit_own_back(net: &mut Net, wifi: &mut Wifi, bt: &mut Piconet, cx: &mut Ctx, dev: DevId, pkt: PacketId) -> bool {
    xmit_own(net, wifi, bt, cx, dev, pkt)
}

/// Device `dev` sends what it can: a WiFi MAC pulls frames while it has room, an idle wire
/// takes the next packet.
#[inline]
fn run_dev(net: &mut Net, wifi: &mut Wifi, bt: &mut Piconet, cx: &mut Ctx, dev: DevId) {
    run_dev_offered(net, wifi, bt, cx, dev, &mut None);
}

/// [`run_dev`], with a packet `offered` to a WiFi or wired device ahead of its empty root FIFO
/// (see [`xmit_own`]): taken first if the device takes a packet (`offered` is then empty).
#[inline]
fn run_dev_offered(
    net: &mut Net,
    wifi: &mut Wifi,
    bt: &mut Piconet,
    cx: &mut Ctx,
    dev: DevId,
    offered: &mut Option<PacketId>,
) {
    let d = &mut net.devs[dev as usize];
    let looked = match d.link {
        Link::Wifi(node) => {
            // A packet offered past the qdisc (an empty FIFO, `Netdev::can_bypass`) leaves it
            // empty, and the driver's admission queues nothing there: the dequeues after it
            // would find nothing and change nothing.
            let bypassing = offered.is_some();
            if let (Some(p), crate::wifi::Mac::Ht(h)) = (*offered, &mut wifi.mac) {
                if h.pull_offered(&mut wifi.medium, node, cx, p, |cx| d.bypass(dev, p, cx)) {
                    *offered = None;
                }
                if d.sourced {
                    cx.out.push(Req::Refill { dev });
                }
                return;
            }
            wifi.pull(node, cx, |cx| match offered.take() {
                Some(p) => {
                    d.bypass(dev, p, cx);
                    Some(p)
                }
                None if bypassing => None,
                None => d.dequeue(dev, cx),
            })
        }
        Link::Wire(to) => net.wire.kick(dev, to, d, cx, offered),
        Link::Bt { slave, up } => match bt.as_deref_mut() {
            Some(bt) => bt.pull(slave as usize, up, cx, |cx| d.dequeue(dev, cx)),
            None => false,
        },
        Link::Virtual => {
            // ifb_ri_tasklet (drivers/net/ifb.c, Linux 6.6) / imq's nf_reinject: every packet
            // the virtual device's qdisc releases goes back at once to its own device's egress
            // (dev_queue_xmit), whose qdisc holds it next: two queues in series. The tasklet's
            // CPU time is zero here.
            while let Some(p) = net.devs[dev as usize].dequeue(dev, cx) {
                let iif = cx.pkts.get(p).iif;
                xmit_own_back(net, wifi, bt, cx, iif, p);
            }
            return;
        }
    };
    if looked && d.sourced {
        cx.out.push(Req::Refill { dev });
    }
}

/// An interface's counters as its root qdisc has them (`tc -s` "Sent ... bytes ... pkt
/// (dropped ...)": what it handed to the driver, IP + 14 bytes a packet, and its drops).
fn iface_counts(d: &crate::net::Netdev) -> [u64; 3] {
    let s = crate::qdisc::Qdisc::stats(&d.qdisc);
    [s.sent_bytes, s.sent_packets, s.drops]
}

/// Run `$body` with `$tx`, the transmit path handed to the traffic sources (`xmit` over the
/// simulation's network and cell), and `$cx`, the context, borrowed from `$sim`.
macro_rules! with_xmit {
    ($sim:ident, |$tx:ident, $cx:ident| $body:expr) => {{
        let (net, wifi, bt, $cx) = (&mut $sim.net, &mut $sim.wifi, &mut $sim.bt, &mut $sim.cx);
        let mut $tx = |cx: &mut Ctx, dev: DevId, pkt: PacketId| xmit(net, wifi, bt, cx, dev, pkt);
        $body
    }};
}

impl Simulation {
    pub fn now(&self) -> Nanos {
        self.cx.now
    }

    /// Measure flow `flow` as the calibration procedure does: after the warm-up, the goodput
    /// n L / tau of every block of `n` received packets, tau running from the packet that ends
    /// the previous block (or the first packet) to the one that ends this block.
    pub fn meter_blocks(&mut self, flow: usize, n: u32) {
        self.rec.meter = Some(BlockMeter::new(flow as u32, n));
    }

    /// The block goodputs measured so far (bit/s of UDP payload), see [`Self::meter_blocks`].
    pub fn block_goodputs(&self) -> &[f64] {
        self.rec.meter.as_ref().map_or(&[], |m| &m.goodputs)
    }

    pub fn end(&self) -> Nanos {
        self.end
    }

    pub fn events(&self) -> u64 {
        self.cx.out.queue().processed()
    }

    /// Process every event with time <= min(until, end).
    pub fn advance(&mut self, until: Nanos) {
        self.advance_at_most(until, u64::MAX);
    }

    /// Like [`Self::advance`], but stop after `max_events` events (a popped tick whose
    /// in-phase followers run with it counts them after it: the slice may run over by them),
    /// so that a caller can look up between slices of bounded work (for Ctrl-C, or progress);
    /// the events processed are the same as in one call. Returns whether min(until, end) was reached.
    pub fn advance_at_most(&mut self, until: Nanos, max_events: u64) -> bool {
        let started = Instant::now();
        let limit = until.min(self.end);
        let mut budget = max_events;
        let mut reached = true;
        loop {
            if budget == 0 {
                reached = self.cx.out.queue().peek_time().is_none_or(|t| t > limit);
                break;
            }
            let Some((t, ev)) = self.cx.out.queue_mut().pop_until(limit) else { break };
            budget -= 1;
            self.cx.now = t;
            self.handle(ev);
            self.after_event();
            if let Event::FlowTick { flow, k } = ev {
                if !self.traffic.tick_followers[flow as usize].is_empty() {
                    self.run_followers(flow, k);
                }
            }
        }
        if reached && limit > self.cx.now {
            self.cx.now = limit;
        }
        // The wires' fixed departures that the events processed so far include.
        self.catch_up_wires(reached.then_some(limit));
        self.wall += started.elapsed();
        reached
    }

    /// What follows every event (steps 3 and 4 of the processing order): the requests it
    /// filed, then the reads of the receiving applications it delivered to (traffic/tcp.rs).
    #[inline(always)]
    fn after_event(&mut self) {
        if self.cx.out.has_requests() {
            self.drain();
        }
        if !self.traffic.reads_due.is_empty() {
            with_xmit!(self, |tx, cx| self.traffic.flush_reads(cx, &mut tx));
            self.drain();
        }
    }

    /// The ticks of the flows that follow `leader` (same send times, `Traffic::tick_groups`),
    /// right after its tick `k`: each is the `FlowTick` the queue would pop next (same time,
    /// same class, the next flow), handled as that event with what follows it. A follower
    /// whose tick another pending event precedes (one scheduled at this instant before it in
    /// the order) is detached with those after it: their tick `k` goes into the queue, and
    /// from then on they schedule their own.
    fn run_followers(&mut self, leader: u32, k: u64) {
        let now = self.cx.now;
        let mut i = 0;
        while let Some(&g) = self.traffic.tick_followers[leader as usize].get(i) {
            let ev = Event::FlowTick { flow: g, k };
            if !self.cx.out.queue().would_be_next(now, &ev) {
                for g in self.traffic.tick_followers[leader as usize].split_off(i) {
                    self.traffic.detach(leader, g);
                    self.cx.schedule(now, Event::FlowTick { flow: g, k });
                }
                return;
            }
            self.cx.out.queue_mut().handle_unqueued(now, &ev);
            with_xmit!(self, |tx, cx| self.traffic.on_flow_tick(g, k, cx, &mut tx));
            self.after_event();
            i += 1;
        }
    }

    /// Stop the run where it stands (after an interrupt) and gather the results of what was
    /// simulated so far: the run's end becomes the current time, so the measured window and every
    /// rate cover [warm-up, now]. Packet conservation is checked as at a normal end.
    pub fn finish_now(&mut self) -> Result<crate::results::RunResults, SimError> {
        if self.finished {
            return Err(SimError::Finished);
        }
        self.end = self.cx.now.min(self.end);
        self.finish()
    }

    #[inline(always)]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Access { gen } => self.wifi.on_access(gen, &mut self.cx),
            Event::Cfp => self.wifi.on_cfp(&mut self.cx),
            Event::TxEnd => self.wifi.on_tx_end(&mut self.cx),
            Event::ExchangeEnd => self.on_exchange_end(),
            Event::WireTxDone { iface } => {
                self.net.devs[iface as usize].busy = false;
                run_dev(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, iface);
            }
            Event::WireDeliver { iface, pkt } => {
                let d = &mut self.net.devs[iface as usize];
                if let Link::Wire(to) = d.link {
                    // The packet left the FIFO before it was serialised (its stamps).
                    if !d.departures.is_empty() {
                        self.net.wire.catch_up(iface, to, d, &mut self.cx, None);
                    }
                    self.arrive(to, pkt);
                }
            }
            Event::QdiscWake { iface } => {
                if self.net.devs[iface as usize].on_wake(self.cx.now) {
                    run_dev(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, iface);
                }
            }
            Event::FlowStart { flow } => with_xmit!(self, |tx, cx| self.traffic.on_flow_start(flow, cx, &mut tx)),
            Event::FlowTick { flow, k } => with_xmit!(self, |tx, cx| self.traffic.on_flow_tick(flow, k, cx, &mut tx)),
            Event::TcpTimer { flow, gen } => {
                with_xmit!(self, |tx, cx| self.traffic.on_tcp_timer(flow, gen, cx, &mut tx))
            }
            Event::Beacon => {
                self.wifi.on_beacon(&mut self.cx);
                let next = self.cx.now + self.scn.cell.beacon_interval;
                if next <= self.end {
                    self.cx.schedule(next, Event::Beacon);
                }
            }
            Event::WarmupEnd => {
                self.catch_up_wires(None);
                // The part of a busy period in progress that lies after the warm-up belongs
                // to the measured window.
                let mut base = self.cx.counters.clone();
                self.wifi.medium.unspend_after(self.cx.now, &mut base);
                self.rec.at_warmup = Some(base);
                for conn in self.traffic.tcp.iter_mut().flatten() {
                    conn.at_warmup = conn.counts();
                }
                // The first sample covers (warm-up, warm-up + interval] only.
                for (f, c) in self.cx.counters.flows.iter().enumerate() {
                    self.rec.last_sample_bytes[f] = c.received_payload_bytes;
                }
                if let (Some(bt), Some(coex)) = (self.bt.as_deref_mut(), self.cx.coex.as_deref()) {
                    bt.snapshot(&coex.counters);
                }
                if self.iface_counters {
                    self.rec.iface_last = self.net.devs.iter().map(iface_counts).collect();
                }
            }
            Event::Sample => self.on_sample(),
            Event::BtMasterTx | Event::BtMasterEnd | Event::BtSlaveEnd => {
                let bt = self.bt.as_deref_mut().expect("Bluetooth events come from a piconet");
                match ev {
                    Event::BtMasterTx => bt.on_master_tx(&mut self.cx),
                    Event::BtMasterEnd => bt.on_master_end(&mut self.cx),
                    _ => bt.on_slave_end(&mut self.cx),
                }
            }
        }
    }

    /// Every wired device's fixed departures that are due (`Wire::catch_up`): before the
    /// event being handled, or (`upto`) at or before that time.
    fn catch_up_wires(&mut self, upto: Option<Nanos>) {
        for (i, d) in self.net.devs.iter_mut().enumerate() {
            if let (Link::Wire(to), false) = (d.link, d.departures.is_empty()) {
                self.net.wire.catch_up(i as DevId, to, d, &mut self.cx, upto);
            }
        }
    }

    /// The end of a busy period (step 4 of the processing order).
    fn on_exchange_end(&mut self) {
        self.wifi.on_exchange_end(&mut self.cx);
        self.drain();
        let transmitters = self.wifi.end_busy(&mut self.cx);
        for &c in &transmitters {
            let dev = self.net.topo.wifi_dev(self.wifi.node_of(c));
            run_dev(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, dev);
        }
        self.wifi.done(transmitters);
    }

    /// Carry out the filed requests (step 3 of the processing order).
    fn drain(&mut self) {
        while let Some(req) = self.cx.out.pop() {
            match req {
                Req::Deliver { at, pkt } => self.arrive(at, pkt),
                Req::Refill { dev } => self.refill(dev),
                Req::Wake { dev } => run_dev(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, dev),
            }
        }
    }

    /// A packet reaches node `at`: hand it to the application or forward it.
    #[inline(always)]
    fn arrive(&mut self, at: Node, pkt: PacketId) {
        if self.net.ingress && !self.ingress_admits(at, pkt) {
            return;
        }
        let f = self.cx.pkts.get(pkt).flow as usize;
        let dst = self.traffic.flows[f].dst;
        if dst == at {
            with_xmit!(self, |tx, cx| self.traffic.receive(pkt, cx, &mut self.rec, &mut tx));
        } else {
            let hop = self.net.topo.route(at, dst);
            xmit(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, hop, pkt);
        }
    }

    /// The ingress hook of the device `pkt` arrives on at node `at` (the node's device towards
    /// the flow's source): false if its policer dropped the packet (counted as the flow's queue
    /// drop, and the station's when a station sent it, and freed).
    fn ingress_admits(&mut self, at: Node, pkt: PacketId) -> bool {
        let p = self.cx.pkts.get(pkt);
        let (f, ip_len) = (p.flow as usize, p.ip_len);
        let src = self.traffic.flows[f].src;
        let dev = self.net.topo.route(at, src);
        let Some(hook) = self.net.devs[dev as usize].ingress.as_deref() else { return true };
        if hook.admits(&self.cx.keys[f], ip_len, self.cx.now) {
            return true;
        }
        let acct = match src {
            Node::Station(s) => crate::net::Acct::Station(s),
            _ => self.net.devs[dev as usize].acct,
        };
        self.cx.drop_packet(pkt, acct, crate::ctx::DropCause::Queue);
        false
    }

    /// Top up the saturating sources of device `dev`.
    fn refill(&mut self, dev: DevId) {
        for _round in 0..Traffic::MAX_REFILL_ROUNDS {
            let before = self.cx.out.len();
            if !with_xmit!(self, |tx, cx| self.traffic.refill_round(dev, cx, &mut tx)) {
                return;
            }
            // A round files only top-up requests (of devices with sources; nothing it does
            // delivers a packet), which are withdrawn: any asks for another round.
            debug_assert!(self.cx.out.filed_since(before).all(|r| matches!(*r, Req::Refill { .. })));
            let again = self.cx.out.len() > before;
            self.cx.out.truncate(before);
            if !again {
                break;
            }
        }
    }

    // ----- measurement ---------------------------------------------------------------------

    fn on_sample(&mut self) {
        self.catch_up_wires(None);
        let interval = self.scn.run.sample_interval;
        let secs = interval.as_secs_f64();
        let now = self.cx.now;
        let first = self.rec.samples.len();
        let radio = self.wifi.medium.radio_mut();
        for s in 0..self.scn.stations.len() {
            let snr_db = radio.snr_cdb(s, now, Dir::Down).map_or(f64::NAN, |snr| snr as f64 / 100.0);
            let estimate_bps = radio.monitor().map_or(f64::NAN, |m| m.estimate_bps(s));
            self.rec.samples.push(Sample {
                time: now,
                kind: SampleKind::Station,
                index: s as u32,
                goodput_bps: 0.0,
                snr_db,
                estimate_bps,
                cwnd_bytes: f64::NAN,
            });
        }
        for f in 0..self.traffic.flows.len() {
            let bytes = self.cx.counters.flows[f].received_payload_bytes;
            let delta = bytes - self.rec.last_sample_bytes[f];
            self.rec.last_sample_bytes[f] = bytes;
            let bps = delta as f64 * 8.0 / secs;
            self.rec.samples.push(Sample {
                time: now,
                kind: SampleKind::Flow,
                index: f as u32,
                goodput_bps: bps,
                snr_db: f64::NAN,
                estimate_bps: f64::NAN,
                cwnd_bytes: self.traffic.tcp[f].as_ref().map_or(f64::NAN, |c| c.sender.cwnd() as f64),
            });
            for st in self.traffic.flows[f].station_set() {
                self.rec.samples[first + st as usize].goodput_bps += bps;
            }
        }
        // Every interface's bytes, packets and drops out in the interval (xnetload).
        if self.iface_counters {
            self.rec.iface_last.resize(self.net.devs.len(), [0; 3]);
            for (i, d) in self.net.devs.iter().enumerate() {
                let now3 = iface_counts(d);
                let last = std::mem::replace(&mut self.rec.iface_last[i], now3);
                self.rec.iface_samples.push(crate::metrics::recorder::IfaceSample {
                    time: now,
                    dev: i as u32,
                    bytes: now3[0] - last[0],
                    packets: now3[1] - last[1],
                    drops: now3[2] - last[2],
                });
            }
        }
        if let Some(t) = self.queue_trace.as_deref_mut() {
            let qdiscs = self.net.devs.iter().enumerate().map(|(i, d)| {
                let s = crate::qdisc::Qdisc::stats(&d.qdisc);
                (i as u32, s.qlen, s.backlog_bytes)
            });
            let mac = matches!(self.wifi.mac, crate::wifi::Mac::Ht(_)).then(|| {
                let (_, frames) = self.wifi.mac_pending();
                (crate::metrics::queues::QueueTrace::MAC, frames as u64, 0)
            });
            t.sample(now, qdiscs.chain(mac), &self.cx.counters.flows);
        }
        let next = now + interval;
        if next <= self.end {
            self.cx.schedule(next, Event::Sample);
        }
    }

    /// Run to the end and gather the results. Checks packet conservation.
    pub fn finish(&mut self) -> Result<crate::results::RunResults, SimError> {
        if self.finished {
            return Err(SimError::Finished);
        }
        self.advance(self.end);
        self.finished = true;
        let conservation = self.check_conservation()?;
        Ok(self.results(conservation))
    }

    /// The two media's air logs and the coexistence counters (a cell with Bluetooth).
    pub fn coex(&self) -> Option<&crate::coex::Coex> {
        self.cx.coex.as_deref()
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scn
    }

    /// Capture the air and the wire from now on (`crate::pcap`): the channel, each radio (the
    /// AP's named "ap", each station's by its name) and the wired link. Results are the same
    /// with or without it.
    pub fn enable_pcap(&mut self) {
        use crate::phy::ht::{ChannelWidth, GuardInterval};
        use crate::phy::ofdm::OfdmBand;
        let cell = &self.scn.cell;
        let (width, gi, band_5ghz) = match &cell.ht {
            Some(h) => (h.width, h.gi, h.band == OfdmBand::Ghz5),
            None => (ChannelWidth::Mhz20, GuardInterval::Long, false),
        };
        // Channel 36 at 5 GHz, channel 1 at 2.4 GHz.
        let freq_mhz = if band_5ghz { 5180 } else { 2412 };
        let phy = crate::pcap::CellPhy { preamble: cell.preamble, width, gi, freq_mhz, band_5ghz };
        let radios: Vec<String> =
            std::iter::once("ap".to_string()).chain(self.scn.stations.iter().map(|s| s.name.clone())).collect();
        use crate::pcap::Transport;
        use crate::traffic::flow::Protocol;
        // An echo's identifier is its ping flow's index (the reply's, the request's).
        let transports = (self.scn.flows.iter().enumerate())
            .map(|(i, f)| match f.protocol {
                Protocol::Udp => Transport::Udp,
                Protocol::Tcp => Transport::TcpSegment,
                Protocol::TcpAck => Transport::TcpAck,
                Protocol::Ping => Transport::EchoRequest { id: i as u16 },
                Protocol::PingReply => Transport::EchoReply { id: self.traffic.ping_of[i] as u16 },
                Protocol::External => Transport::Opaque,
            })
            .collect();
        self.cx.tap = Some(Box::new(crate::pcap::Tap::new(phy, &radios, transports)));
    }

    /// Record every interface's queue (qlen, backlog) and every flow's mean queueing and one-way
    /// delay at each sample from now on (`crate::metrics::queues`). Results are the same.
    pub fn enable_queue_trace(&mut self) {
        self.queue_trace = Some(Box::new(crate::metrics::queues::QueueTrace::new(&self.cx.counters.flows)));
    }

    /// Report mac80211's per-station airtime and per-TID FQ statistics at the end (the
    /// results' `mac80211_stations` and `mac80211_txqs` tables, `airsched run --mac-stats`): an
    /// 802.11n cell whose AP queues in FQ-MAC; off by default, and the other results are the
    /// same either way.
    pub fn enable_mac_stats(&mut self) {
        self.mac_stats = true;
    }

    /// Record what every interface sends out (bytes, packets, drops) in each sample interval
    /// of the measured window: the results' `interfaces` table (`airsched run` always asks;
    /// off by default, so a run's results are those it had without it). Call before the run
    /// reaches its warm-up's end; results are otherwise the same.
    pub fn enable_interface_counters(&mut self) {
        self.iface_counters = true;
    }

    /// The queue trace so far (and stop tracing).
    pub fn take_queue_trace(&mut self) -> Option<crate::metrics::queues::QueueTrace> {
        self.queue_trace.take().map(|t| *t)
    }

    /// The captures so far (and stop capturing): the channel's, each radio's, the wire's.
    pub fn take_pcaps(&mut self) -> Vec<crate::pcap::Capture> {
        self.cx.tap.take().map(|t| t.into_captures()).unwrap_or_default()
    }

    /// (node, device) of every interface, in interface order.
    pub fn interface_names(&self) -> Vec<(String, &'static str)> {
        self.net.topo.devs.iter().map(|d| (d.node_name.clone(), d.name)).collect()
    }

    /// 802.11n: airtime (µs) the AP's AQL counts as queued to the hardware and not yet
    /// completed, and the frames its driver holds; (0, 0) in an 802.11b cell. A diagnostic: both
    /// return to zero once every queue has drained.
    pub fn mac_pending(&self) -> (u32, u32) {
        self.wifi.mac_pending()
    }

    /// 802.11n: what the AP's next-steps mechanisms (`[ap] retry_budget`, ...) did so far;
    /// None in an 802.11b cell.
    /// Downlink OFDMA's counters and the first MU PPDUs' users and RUs (None unless the AP
    /// runs `ofdma = "dl"`).
    pub fn ofdma_stats(&self) -> Option<crate::wifi::ht::ofdma::OfdmaStats> {
        self.wifi.ofdma_stats()
    }

    /// Uplink OFDMA's counters and the first Basic Triggers' stations, RUs and MPDUs (None
    /// unless the AP runs `ofdma = "dl+ul"`).
    pub fn ul_ofdma_stats(&self) -> Option<crate::wifi::ht::ofdma_ul::UlStats> {
        self.wifi.ht().and_then(|h| h.ul_ofdma_stats()).cloned()
    }

    pub fn next_steps_stats(&self) -> Option<crate::wifi::ht::NextStepsStats> {
        self.wifi.next_steps_stats()
    }

    /// Every interface's qdisc tree with its current statistics.
    pub fn tc_reports(&self) -> Vec<crate::results::InterfaceTc> {
        self.interface_names()
            .into_iter()
            .zip(&self.net.devs)
            .map(|((node, dev), d)| crate::results::InterfaceTc {
                node,
                dev: dev.to_string(),
                qdiscs: d.qdisc.reports(),
                policers: d.policers.iter().map(|p| p.report()).collect(),
            })
            .collect()
    }
}
