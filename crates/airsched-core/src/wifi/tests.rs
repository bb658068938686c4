//! The frame exchanges on their own: a cell built from a scenario, driven call by call as the
//! joining layer would, with no event loop and no other component but a device's qdisc.

use super::*;
use crate::ctx::{FlowBook, Req};
use crate::engine::{Event, EventQueue};
use crate::net::{Net, Netdev};
use crate::node::Node;
use crate::packet::Packet;
use crate::phy::dsss::{self, DsssRate, Preamble};
use crate::scenario::{parse_scenario, Scenario};
use crate::traffic::Traffic;

struct Cell {
    scn: Scenario,
    net: Net,
    wifi: Wifi,
    cx: Ctx,
}

fn cell(text: &str) -> Cell {
    let scn = parse_scenario(text, "cell.toml").unwrap_or_else(|e| panic!("{e}"));
    let (scn, reply_of) = scn.with_reply_flows();
    let net = crate::sim::build::net::net(&scn).expect("builds");
    let (traffic, books): (Traffic, Vec<FlowBook>) = crate::sim::build::traffic::traffic(&scn, &net.topo, reply_of);
    let dst: Vec<Node> = traffic.flows.iter().map(|f| f.dst).collect();
    let wifi = crate::sim::build::wifi::wifi(
        &scn,
        &net.topo,
        &dst,
        &(0..scn.flows.len()).map(|i| scn.flow_key(i)).collect::<Vec<_>>(),
    );
    let cx = Ctx::new(
        (0..scn.flows.len()).map(|i| scn.flow_key(i)).collect(),
        books,
        crate::metrics::Counters::new(scn.flows.len(), scn.stations.len()),
        EventQueue::with_capacity(16),
    );
    Cell { scn, net, wifi, cx }
}

impl Cell {
    /// Queue `n` packets of flow `f` (IP length `ip_len`) at WiFi node `node`'s device and let
    /// the MAC pull. Returns the packets.
    fn offer(&mut self, node: u32, f: u32, n: usize, ip_len: u32) -> Vec<crate::packet::PacketId> {
        let dev = self.net.topo.wifi_dev(node);
        let ids: Vec<_> = (0..n)
            .map(|k| {
                let p =
                    self.cx.pkts.alloc(Packet { seq: k as u64, ..Packet::new(f, ip_len, ip_len - 28, self.cx.now) });
                assert!(self.net.devs[dev as usize].enqueue(dev, p, &mut self.cx));
                p
            })
            .collect();
        let d: &mut Netdev = &mut self.net.devs[dev as usize];
        assert!(self.wifi.pull(node, &mut self.cx, |cx| d.dequeue(dev, cx)), "an idle MAC looks at its queue");
        ids
    }

    /// Pop the next event, advancing the clock to it.
    fn next(&mut self) -> Event {
        let (t, ev) = self.cx.out.queue_mut().pop().expect("an event is scheduled");
        self.cx.now = t;
        ev
    }

    /// Run one busy period from its access event: on_access, on_tx_end if scheduled,
    /// on_exchange_end and end_busy. Returns the filed requests and the transmitters.
    fn busy_period(&mut self) -> (Vec<Req>, Vec<u32>) {
        let Event::Access { gen } = self.next() else { panic!("an access comes first") };
        self.wifi.on_access(gen, &mut self.cx);
        let mut ev = self.next();
        if ev == Event::TxEnd {
            self.wifi.on_tx_end(&mut self.cx);
            ev = self.next();
        }
        assert_eq!(ev, Event::ExchangeEnd);
        self.wifi.on_exchange_end(&mut self.cx);
        let mut reqs = Vec::new();
        while let Some(r) = self.cx.out.pop() {
            reqs.push(r);
        }
        let t = self.wifi.end_busy(&mut self.cx);
        let ts = t.clone();
        self.wifi.done(t);
        (reqs, ts)
    }
}

const B_ONE: &str = r#"
[run]
duration = "1s"
[cell]
beacons = false
[[station]]
name = "a"
rate = "11Mbps"
[[flow]]
name = "down"
src = "server"
dst = "a"
rate = "1Mbit"
size = 1024
"#;

#[test]
fn a_lone_80211b_frame_is_data_sifs_ack_then_difs_and_its_packet_is_delivered() {
    let mut c = cell(B_ONE);
    let p = c.offer(0, 0, 1, 1052)[0];
    let Event::Access { gen } = c.next() else { panic!() };
    let ta = c.cx.now;
    c.wifi.on_access(gen, &mut c.cx);
    let data = dsss::txtime(Preamble::Long, DsssRate::R11, 1052 + dsss::DATA_OVERHEAD_BYTES);
    let ack = dsss::ack_time(Preamble::Long, &c.scn.cell.basic_rates, DsssRate::R11);
    assert_eq!(c.next(), Event::TxEnd);
    assert_eq!(c.cx.now, ta + data);
    c.wifi.on_tx_end(&mut c.cx);
    assert_eq!(c.cx.out.pop(), Some(Req::Deliver { at: Node::Station(0), pkt: p }));
    assert_eq!(c.next(), Event::ExchangeEnd);
    let te = c.cx.now;
    assert_eq!(te, ta + data + dsss::SIFS + ack);
    c.wifi.on_exchange_end(&mut c.cx);
    let ts = c.wifi.end_busy(&mut c.cx);
    assert_eq!(ts, vec![0]);
    let dcf = c.wifi.medium.dcf();
    assert!((0..dcf.contenders()).all(|n| dcf.ifs_end(n) == te + dsss::DIFS));
    let s = &c.cx.counters.stations[0];
    assert_eq!((s.tx_attempts, s.tx_frames, s.retries, s.collisions), (1, 1, 0, 0));
    assert_eq!(s.airtime_ns, (data + ack).0);
    assert_eq!(c.cx.counters.medium_busy_ns, (te - ta).0);
    assert_eq!(c.wifi.medium.dcf().frame(0), None, "the MAC is free for the next frame");
}

#[test]
fn two_80211b_frames_in_one_slot_collide_retry_after_eifs_and_drop_at_the_retry_limit() {
    let text = r#"
[run]
duration = "1s"
[cell]
beacons = false
retry_limit = 2
[[station]]
name = "a"
rate = "11Mbps"
[[station]]
name = "b"
rate = "11Mbps"
[[flow]]
name = "up-a"
src = "a"
dst = "server"
rate = "1Mbit"
[[flow]]
name = "up-b"
src = "b"
dst = "server"
rate = "1Mbit"
"#;
    let mut c = cell(text);
    for n in [1, 2] {
        c.wifi.medium.dcf_mut().set_backoff(n, 0);
    }
    c.offer(1, 0, 1, 1500);
    c.offer(2, 1, 1, 1500);
    let (reqs, ts) = c.busy_period();
    assert!(reqs.is_empty(), "nothing is delivered from a collision");
    assert_eq!(ts, vec![1, 2]);
    for s in 0..2 {
        let sc = &c.cx.counters.stations[s];
        assert_eq!((sc.collisions, sc.retries, sc.drops_retry), (1, 1, 0));
    }
    // Both colliders wait out their ACKTimeout: at least the EIFS of the collision.
    let te = c.cx.now;
    let eifs = dsss::SIFS + dsss::estimated_ack_time(Preamble::Long, DsssRate::R11) + dsss::DIFS;
    let dcf = c.wifi.medium.dcf();
    assert!(dcf.ifs_end(1) >= te + eifs);
    assert_eq!(dcf.ifs_end(0), te + eifs, "the AP heard a collision: EIFS");
    // Make them meet again: the second failure reaches the retry limit of 2 attempts.
    let (first, second) = (dcf.ifs_end(1), dcf.ifs_end(2));
    assert_eq!(first, second);
    let gen = c.wifi.medium.dcf_mut().force_access(&[1, 2], first);
    c.cx.out.queue_mut().pop();
    c.cx.out.schedule(first, Event::Access { gen });
    let (_, ts) = c.busy_period();
    assert_eq!(ts, vec![1, 2]);
    for s in 0..2 {
        let sc = &c.cx.counters.stations[s];
        assert_eq!((sc.collisions, sc.retries, sc.drops_retry), (2, 1, 1));
        assert_eq!(c.cx.counters.flows[s].drops_retry, 1);
    }
    assert_eq!(c.cx.pkts.live_count(), 0, "dropped frames are freed");
}

const N_ONE: &str = r#"
[run]
duration = "1s"
[cell]
standard = "802.11n"
beacons = false
[ap]
mac_queue = "fifo"
[[station]]
name = "a"
mcs = 7
[[flow]]
name = "down"
src = "server"
dst = "a"
rate = "10Mbit"
size = 1472
"#;

#[test]
fn an_80211n_aggregate_carries_every_queued_mpdu_in_one_ppdu_and_delivers_them_in_order() {
    let mut c = cell(N_ONE);
    let ids = c.offer(0, 0, 10, 1500);
    let (reqs, ts) = c.busy_period();
    let delivered: Vec<_> = reqs
        .iter()
        .map(|r| match *r {
            Req::Deliver { at, pkt } => {
                assert_eq!(at, Node::Station(0));
                pkt
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(delivered, ids, "every MPDU, in sequence order");
    assert_eq!(ts.len(), 1);
    let s = &c.cx.counters.stations[0];
    assert_eq!((s.tx_attempts, s.acked_mpdus, s.retries), (1, 10, 0));
    assert_eq!(s.ampdu_mpdus[0][10], 1, "one PPDU of 10 MPDUs");
    assert_eq!(c.wifi.mac_pending().1, 0, "the driver holds nothing once they are acknowledged");
}

#[test]
fn an_80211n_node_contends_per_access_category_and_the_ac_keeps_its_edca_parameters() {
    let c = cell(N_ONE);
    let dcf = c.wifi.medium.dcf();
    assert_eq!(dcf.contenders(), 2 * crate::mac80211::NUM_ACS, "four EDCA functions per node");
    // mac80211 AC order VO, VI, BE, BK: VO has the smallest CWmin and AIFS.
    let (_, _, vo_cw_min, vo_aifs) = dcf.contention(0);
    let (_, _, be_cw_min, be_aifs) = dcf.contention(2);
    let (_, _, _, bk_aifs) = dcf.contention(3);
    assert!(vo_cw_min < be_cw_min && vo_aifs < be_aifs && be_aifs < bk_aifs);
}

/// `[ap] tx_buffers = 3` on B_ONE: the AP's driver and card hold three frames below the qdisc.
fn b_one_buffered(n: u32) -> String {
    B_ONE.replace("[cell]", &format!("[ap]\ntx_buffers = {n}\n[cell]"))
}

fn ap_qlen(c: &Cell) -> u64 {
    let dev = c.net.topo.wifi_dev(0);
    crate::qdisc::Qdisc::stats(&c.net.devs[dev as usize].qdisc).qlen
}

#[test]
fn the_aps_tx_buffers_take_frames_from_the_qdisc_while_one_is_free_and_send_them_in_order() {
    // One frame (the default): the qdisc keeps all but the MAC's frame.
    let mut one = cell(B_ONE);
    one.offer(0, 0, 5, 1052);
    assert_eq!(ap_qlen(&one), 4);
    // Three buffers: the MAC's frame and two behind it leave the qdisc at once.
    let mut c = cell(&b_one_buffered(3));
    let p = c.offer(0, 0, 5, 1052);
    assert_eq!(ap_qlen(&c), 2);
    let Mac::Legacy(l) = &c.wifi.mac else { panic!("802.11b") };
    assert_eq!(l.ap_buffered(), 2);
    assert_eq!(c.wifi.medium.dcf().frame(0), Some(p[0]));
    let mut held = Vec::new();
    assert_eq!(c.wifi.for_each_held(|q| held.push(q)), 0);
    held.sort();
    assert_eq!(held, p[..3].to_vec(), "the conservation check sees the buffered frames");
    // Each exchange delivers the oldest frame; the freed buffer takes the qdisc's next.
    for k in 0..5 {
        let (reqs, ts) = c.busy_period();
        assert!(reqs.contains(&Req::Deliver { at: Node::Station(0), pkt: p[k] }), "frame {k} in order");
        assert_eq!(ts, vec![0]);
        let dev = c.net.topo.wifi_dev(0);
        let d: &mut Netdev = &mut c.net.devs[dev as usize];
        c.wifi.pull(0, &mut c.cx, |cx| d.dequeue(dev, cx));
        assert_eq!(c.wifi.medium.dcf().frame(0), p.get(k + 1).copied());
        assert_eq!(ap_qlen(&c), 1u64.saturating_sub(k as u64));
    }
}
