//! The traffic sources on their own: a scenario's flows built into a `Traffic`, driven call by
//! call with a recording transmit path instead of a network.

use std::cell::{Cell, RefCell};

use super::*;
use crate::ctx::{Ctx, FlowBook};
use crate::engine::{Event, EventQueue};
use crate::metrics::recorder::Recorder;
use crate::net::{DevId, Node, Topology};
use crate::packet::PacketId;
use crate::scenario::parse_scenario;
use crate::time::Nanos;

fn build(text: &str) -> (Traffic, Ctx, Topology) {
    let scn = parse_scenario(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let (scn, reply_of) = scn.with_reply_flows();
    let names: Vec<String> = scn.stations.iter().map(|s| s.name.clone()).collect();
    let topo = Topology::new(&names);
    let (traffic, books): (Traffic, Vec<FlowBook>) = crate::sim::build::traffic::traffic(&scn, &topo, reply_of);
    let cx = Ctx::new(
        (0..scn.flows.len()).map(|i| scn.flow_key(i)).collect(),
        books,
        crate::metrics::Counters::new(scn.flows.len(), scn.stations.len()),
        EventQueue::with_capacity(16),
    );
    (traffic, cx, topo)
}

const FLOWS: &str = r#"
[run]
duration = "10s"
[[station]]
name = "a"
rate = "11Mbps"
[[flow]]
name = "cbr"
src = "server"
dst = "a"
rate = "6Mbit"
size = 1024
start = "5ms"
[[flow]]
name = "sat"
src = "a"
dst = "server"
rate = "saturate"
size = 1472
[[flow]]
name = "ping"
protocol = "ping"
src = "server"
dst = "a"
interval = "100ms"
"#;

#[test]
fn a_cbr_source_sends_on_the_exact_integer_grid_until_its_stop() {
    let (mut t, mut cx, topo) = build(FLOWS);
    let sent: RefCell<Vec<(DevId, PacketId)>> = RefCell::new(Vec::new());
    let mut tx = |_: &mut Ctx, dev: DevId, p: PacketId| {
        sent.borrow_mut().push((dev, p));
        true
    };
    cx.now = Nanos::from_ms(5);
    t.on_flow_start(0, &mut cx, &mut tx);
    assert_eq!(
        cx.out.queue_mut().pop(),
        Some((Nanos::from_ms(5) + Nanos(1_365_333), Event::FlowTick { flow: 0, k: 1 }))
    );
    cx.now = Nanos::from_ms(5) + Nanos(1_365_333);
    t.on_flow_tick(0, 1, &mut cx, &mut tx);
    // 8192 bits at 6 Mbit/s: packet 2 at exactly 2 x 1 365 333.33 ns, rounded down once.
    assert_eq!(
        cx.out.queue_mut().pop(),
        Some((Nanos::from_ms(5) + Nanos(2_730_666), Event::FlowTick { flow: 0, k: 2 }))
    );
    assert_eq!(sent.borrow().len(), 2);
    assert!(sent.borrow().iter().all(|&(d, _)| d == topo.find_by_name("server", "eth0").unwrap()));
    let p = *cx.pkts.get(sent.borrow()[1].1);
    assert_eq!((p.flow, p.seq, p.payload, p.ip_len), (0, 1, 1024, 1052));
    assert_eq!(cx.counters.flows[0].sent_packets, 2);
    // Past its stop a source falls silent.
    t.flows[0].stop = Nanos::from_ms(7);
    cx.now = Nanos::from_ms(8);
    t.on_flow_tick(0, 2, &mut cx, &mut tx);
    assert!(!t.flows[0].active);
    assert_eq!(cx.counters.flows[0].sent_packets, 2);
    assert!(cx.out.queue_mut().pop().is_none());
}

#[test]
fn a_saturating_source_keeps_its_backlog_and_stops_at_a_full_queue() {
    let (mut t, mut cx, topo) = build(FLOWS);
    let a = topo.find_by_name("a", "wlan0").unwrap();
    assert_eq!(t.saturating_at[a as usize], vec![1]);
    let sent = Cell::new(0);
    let mut accept = |_: &mut Ctx, dev: DevId, _: PacketId| {
        assert_eq!(dev, a);
        sent.set(sent.get() + 1);
        true
    };
    t.on_flow_start(1, &mut cx, &mut accept);
    assert_eq!((sent.get(), cx.flows[1].outstanding), (SATURATE_BACKLOG, SATURATE_BACKLOG));
    // Two packets leave the first hop: one round tops it up with two.
    cx.flows[1].outstanding -= 2;
    assert!(t.refill_round(a, &mut cx, &mut accept));
    assert_eq!((sent.get(), cx.flows[1].outstanding), (SATURATE_BACKLOG + 2, SATURATE_BACKLOG));
    // A queue that refuses: the source takes its packet back and waits for the next dequeue.
    cx.flows[1].outstanding -= 1;
    let mut refuse = |_: &mut Ctx, _: DevId, _: PacketId| false;
    t.refill_round(a, &mut cx, &mut refuse);
    assert_eq!(cx.flows[1].outstanding, SATURATE_BACKLOG - 1);
    // A device no source sends on has nothing to top up.
    assert!(!t.refill_round(topo.find_by_name("ap", "eth0").unwrap(), &mut cx, &mut accept));
}

#[test]
fn a_ping_is_answered_at_once_on_its_reply_flow_and_its_rtt_recorded() {
    let (mut t, mut cx, topo) = build(FLOWS);
    let reply = t.reply_of[2].expect("a ping has a reply flow");
    let mut rec = Recorder::new(t.flows.len(), 0);
    rec.at_warmup = Some(cx.counters.clone());
    let out = RefCell::new(Vec::new());
    let mut tx = |_: &mut Ctx, dev: DevId, p: PacketId| {
        out.borrow_mut().push((dev, p));
        true
    };
    // The ping sends its requests 0, 1, 2 at 0, 100 and 200 ms; request 1 is answered.
    t.on_flow_start(2, &mut cx, &mut tx);
    for k in 1..3u64 {
        cx.now = Nanos::from_ms(100 * k);
        t.on_flow_tick(2, k, &mut cx, &mut tx);
    }
    let req = out.borrow()[1].1;
    assert_eq!(out.borrow()[1].0, topo.find_by_name("server", "eth0").unwrap());
    out.borrow_mut().clear();
    cx.now = Nanos::from_ms(203);
    t.receive(req, &mut cx, &mut rec, &mut tx);
    assert_eq!(out.borrow().len(), 1);
    let (dev, rp) = out.borrow()[0];
    assert_eq!(dev, topo.find_by_name("a", "wlan0").unwrap(), "the reply leaves from the station");
    let r = *cx.pkts.get(rp);
    assert_eq!((r.flow, r.seq, r.echo, r.ip_len), (reply, 1, Nanos::from_ms(100), 84));
    assert_eq!(cx.counters.flows[2].received_packets, 1);
    // The reply reaches the server 2 ms later: a 105 ms round trip.
    cx.now = Nanos::from_ms(205);
    t.receive(rp, &mut cx, &mut rec, &mut tx);
    assert_eq!(rec.pings.len(), 1);
    assert_eq!((rec.pings[0].flow, rec.pings[0].seq, rec.pings[0].rtt), (2, 1, Nanos::from_ms(105)));
    let stats = t.pings[2].as_ref().unwrap().stats();
    assert_eq!((stats.sent, stats.received, stats.lost), (3, 1, 0), "no deadline: nothing is lost yet");
    assert_eq!(t.flows[2].dst, Node::Station(0));
}

#[test]
fn a_ping_with_a_reply_delay_is_answered_that_much_later() {
    let text = FLOWS.replace("interval = \"100ms\"", "interval = \"100ms\"\nreply_delay = \"90us\"");
    let (mut t, mut cx, topo) = build(&text);
    let reply = t.reply_of[2].expect("a ping has a reply flow");
    let mut rec = Recorder::new(t.flows.len(), 0);
    let out = RefCell::new(Vec::new());
    let mut tx = |_: &mut Ctx, dev: DevId, p: PacketId| {
        out.borrow_mut().push((dev, p));
        true
    };
    t.on_flow_start(2, &mut cx, &mut tx);
    let req = out.borrow()[0].1;
    out.borrow_mut().clear();
    while cx.out.queue_mut().pop().is_some() {}
    cx.now = Nanos::from_ms(3);
    t.receive(req, &mut cx, &mut rec, &mut tx);
    assert!(out.borrow().is_empty(), "the responder has not answered yet");
    let (when, ev) = cx.out.queue_mut().pop().expect("the reply is scheduled");
    assert_eq!(when, Nanos::from_ms(3) + Nanos::from_us(90));
    assert!(matches!(ev, Event::FlowTick { flow, k: 0 } if flow == reply));
    cx.now = when;
    t.on_flow_tick(reply, 0, &mut cx, &mut tx);
    let (dev, rp) = out.borrow()[0];
    assert_eq!(dev, topo.find_by_name("a", "wlan0").unwrap(), "the reply leaves from the station");
    let r = *cx.pkts.get(rp);
    assert_eq!((r.flow, r.seq, r.ip_len, r.created), (reply, 0, 84, when));
    assert!(cx.out.queue_mut().pop().is_none(), "a reply schedules no further tick");
}
