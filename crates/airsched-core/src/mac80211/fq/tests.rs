use proptest::prelude::*;

use super::*;
use crate::qdisc::testutil::Bench;

const STA0_BE: TinId = TinId(0);
const STA1_BE: TinId = TinId(NUM_TIDS as u32);

/// IP length giving a frame of `frame` bytes in the TXQs.
fn ip(frame: u32) -> u32 {
    frame - WIFI_HEADER_BYTES
}

fn fq_with(params: FqParams, stations: usize) -> Fq {
    Fq::new(params, stations, 7)
}

/// A bench with `n` flows whose hashed flow indices all differ under `fq`.
fn bench_distinct(fq: &Fq, n: usize) -> Bench {
    let mut b = Bench::new(n);
    let idx: Vec<u32> = (0..n as u32)
        .map(|f| {
            let p = b.pkt(f, 100);
            let i = fq.flow_index(&b.cx(), p);
            b.pkts.free(p);
            i
        })
        .collect();
    let mut sorted = idx.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), n, "test flows must not collide: {idx:?}");
    b
}

fn enq(fq: &mut Fq, b: &mut Bench, tin: TinId, flow: u32, frame: u32, now: Nanos) -> (PacketId, Enq) {
    let p = b.pkt(flow, ip(frame));
    let r = fq.enqueue(tin, p, &mut b.cx(), now);
    (p, r)
}

/// Dequeue until empty, naming each packet by (flow, n-th packet of that flow, 1-based).
fn drain_names(fq: &mut Fq, b: &mut Bench, tin: TinId, ids: &[(PacketId, &'static str)]) -> Vec<&'static str> {
    let mut out = vec![];
    while let Some(p) = fq.dequeue(tin, &mut b.cx(), Nanos::from_us(10)) {
        out.push(ids.iter().find(|(q, _)| *q == p).expect("known packet").1);
    }
    out
}

#[test]
fn new_flows_are_served_first_then_drr_over_old_flows_by_bytes() {
    // Quantum 300. A: four 300-byte frames; B: two 150-byte frames. A spends its first
    // quantum on A1 and moves to the old list; B (still new) sends B1 and B2 on its quantum;
    // then A and B alternate by deficit: B is empty when its turn comes and leaves.
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 2);
    let mut ids = vec![];
    for name in ["A1", "A2", "A3", "A4"] {
        ids.push((enq(&mut fq, &mut b, STA0_BE, 0, 300, Nanos::ZERO).0, name));
    }
    for name in ["B1", "B2"] {
        ids.push((enq(&mut fq, &mut b, STA0_BE, 1, 150, Nanos::ZERO).0, name));
    }
    assert_eq!(drain_names(&mut fq, &mut b, STA0_BE, &ids), ["A1", "B1", "B2", "A2", "A3", "A4"]);
    let s = fq.tin_stats(STA0_BE);
    assert_eq!((s.flows, s.tx_packets, s.tx_bytes, s.backlog_packets, s.backlog_bytes), (2, 6, 1500, 0, 0));
    assert!(fq.stats().conserved() && fq.stats().backlog == 0 && fq.stats().memory_usage == 0);
}

#[test]
fn an_emptied_new_flow_is_parked_on_the_old_list() {
    // A: 100-byte frames, backlogged; C: one 100-byte frame arrives while A is old. C is served
    // at once (sparse-flow boost); when C empties with A on the old list it is parked behind A
    // (not removed), so C2, arriving right after, waits for A's deficit to run out instead of
    // being new again.
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 2);
    let mut ids = vec![];
    for name in ["A1", "A2", "A3", "A4", "A5", "A6", "A7"] {
        ids.push((enq(&mut fq, &mut b, STA0_BE, 0, 100, Nanos::ZERO).0, name));
    }
    let mut got = vec![];
    let next = |fq: &mut Fq, b: &mut Bench, ids: &[(PacketId, &'static str)]| {
        let p = fq.dequeue(STA0_BE, &mut b.cx(), Nanos::from_us(1)).expect("backlogged");
        ids.iter().find(|(q, _)| *q == p).unwrap().1
    };
    for _ in 0..4 {
        got.push(next(&mut fq, &mut b, &ids));
    }
    ids.push((enq(&mut fq, &mut b, STA0_BE, 1, 100, Nanos::ZERO).0, "C1"));
    got.push(next(&mut fq, &mut b, &ids));
    got.push(next(&mut fq, &mut b, &ids));
    ids.push((enq(&mut fq, &mut b, STA0_BE, 1, 100, Nanos::ZERO).0, "C2"));
    got.push(next(&mut fq, &mut b, &ids));
    got.push(next(&mut fq, &mut b, &ids));
    assert_eq!(got, ["A1", "A2", "A3", "A4", "C1", "A5", "A6", "C2"]);
    // C took ownership of its flow once: parking kept it.
    assert_eq!(fq.tin_stats(STA0_BE).flows, 2);
}

#[test]
fn a_collision_with_another_tins_flow_goes_to_the_default_flow() {
    // One hashed flow: every packet maps to it. Station 0 owns it first; station 1's packets
    // collide and go to station 1's default flow; station 0's second flow shares the hashed
    // flow (same tin: no collision, FIFO order).
    let mut fq = fq_with(FqParams { flows_cnt: 1, ..FqParams::linux_6_18() }, 2);
    let mut b = Bench::new(3);
    let (a1, _) = enq(&mut fq, &mut b, STA0_BE, 0, 300, Nanos::ZERO);
    let (c1, _) = enq(&mut fq, &mut b, STA1_BE, 1, 300, Nanos::ZERO);
    let (a2, _) = enq(&mut fq, &mut b, STA0_BE, 2, 300, Nanos::ZERO);
    let (c2, _) = enq(&mut fq, &mut b, STA1_BE, 1, 300, Nanos::ZERO);
    assert_eq!((fq.tin_stats(STA1_BE).collisions, fq.tin_stats(STA0_BE).collisions, fq.stats().collisions), (2, 0, 2));
    assert_eq!((fq.tin_stats(STA0_BE).flows, fq.tin_stats(STA1_BE).flows), (1, 1));
    let now = Nanos::from_us(5);
    assert_eq!(fq.dequeue(STA1_BE, &mut b.cx(), now), Some(c1));
    assert_eq!(fq.dequeue(STA1_BE, &mut b.cx(), now), Some(c2));
    assert_eq!(fq.dequeue(STA0_BE, &mut b.cx(), now), Some(a1));
    assert_eq!(fq.dequeue(STA0_BE, &mut b.cx(), now), Some(a2));
    assert_eq!(fq.dequeue(STA0_BE, &mut b.cx(), now), None);
    // Station 0's flow left its lists: station 1 now takes the hashed flow without collision.
    enq(&mut fq, &mut b, STA1_BE, 1, 300, now);
    assert_eq!(fq.tin_stats(STA1_BE).collisions, 2);
    assert_eq!(fq.tin_stats(STA1_BE).flows, 2);
}

/// Station 0 flow X: 6 packets; station 1 flow Y: 4 packets; limit 10. The 11th packet (Y)
/// overflows the radio.
fn overflow_setup(params: FqParams) -> (Fq, Bench, Vec<PacketId>, PacketId, Enq) {
    let mut fq = fq_with(FqParams { limit: 10, ..params }, 2);
    let mut b = bench_distinct(&fq, 2);
    let xs: Vec<PacketId> = (0..6).map(|_| enq(&mut fq, &mut b, STA0_BE, 0, 1000, Nanos::ZERO).0).collect();
    for _ in 0..4 {
        enq(&mut fq, &mut b, STA1_BE, 1, 1000, Nanos::ZERO);
    }
    assert!(b.dropped.is_empty());
    let (y, res) = enq(&mut fq, &mut b, STA1_BE, 1, 1000, Nanos::from_ms(1));
    (fq, b, xs, y, res)
}

#[test]
fn over_the_global_limit_the_fattest_flow_loses_its_head_4_11() {
    let (fq, b, xs, _, res) = overflow_setup(FqParams::linux_4_11());
    // 4.x: exactly one packet, the head of the fattest flow (X, of the other station).
    assert_eq!(b.dropped, vec![xs[0]]);
    assert_eq!(res, Enq::Queued);
    assert_eq!(b.pkts.get(xs[0]).queue_delay, Nanos::from_ms(1), "dropped packets are unstamped");
    let (s0, s1) = (fq.tin_stats(STA0_BE), fq.tin_stats(STA1_BE));
    assert_eq!(
        (s0.overlimit, s0.overlimit_drops, s0.backlog_packets, s1.overlimit, s1.backlog_packets),
        (1, 1, 5, 0, 5)
    );
    assert_eq!((fq.stats().overlimit, fq.stats().backlog), (1, 10));
    assert!(fq.stats().conserved());
}

#[test]
fn over_the_global_limit_the_fattest_flow_loses_half_its_packets_6_18() {
    let (fq, b, xs, _, res) = overflow_setup(FqParams::linux_6_18());
    // 5.13+: min(32, 6 / 2) = 3 packets from X's head in one round.
    assert_eq!(b.dropped, xs[..3].to_vec());
    assert_eq!(res, Enq::Queued);
    let s0 = fq.tin_stats(STA0_BE);
    assert_eq!((s0.overlimit, s0.overlimit_drops, s0.backlog_packets), (1, 3, 3));
    assert_eq!((fq.stats().overlimit, fq.stats().overlimit_drops, fq.stats().backlog), (1, 3, 8));
}

#[test]
fn the_arriving_packets_own_flow_can_be_the_victim() {
    // Limit 3, one flow: the 4th packet overflows and the head (the 1st) goes: Congestion. With
    // a single-packet flow that is also the fattest, the arriving packet itself is dropped.
    let mut fq = fq_with(FqParams { limit: 3, ..FqParams::linux_4_11() }, 1);
    let mut b = bench_distinct(&fq, 2);
    let first = enq(&mut fq, &mut b, STA0_BE, 0, 1000, Nanos::ZERO).0;
    for _ in 0..2 {
        enq(&mut fq, &mut b, STA0_BE, 0, 1000, Nanos::ZERO);
    }
    assert_eq!(enq(&mut fq, &mut b, STA0_BE, 0, 1000, Nanos::ZERO).1, Enq::Congestion);
    assert_eq!(b.dropped, vec![first]);
    let mut fq = fq_with(FqParams { limit: 1, ..FqParams::linux_4_11() }, 1);
    enq(&mut fq, &mut b, STA0_BE, 0, 100, Nanos::ZERO);
    let (p, res) = enq(&mut fq, &mut b, STA0_BE, 1, 1000, Nanos::ZERO);
    assert_eq!((res, *b.dropped.last().unwrap()), (Enq::Dropped, p));
}

#[test]
fn equal_backlogs_tie_as_each_version_orders_them() {
    // X and Y of one station both hold 3 equal packets, Y grew last. 4.x's sorted list puts
    // the most recently grown flow first: Y loses. The 6.x scan keeps the first by index.
    for (params, want_y) in [(FqParams::linux_4_11(), true), (FqParams::linux_6_18(), false)] {
        let mut fq = fq_with(FqParams { limit: 6, ..params }, 1);
        let mut b = bench_distinct(&fq, 3);
        let mut heads = [None, None];
        for f in [0u32, 1] {
            for k in 0..3 {
                let p = enq(&mut fq, &mut b, STA0_BE, f, 500, Nanos::ZERO).0;
                if k == 0 {
                    heads[f as usize] = Some(p);
                }
            }
        }
        enq(&mut fq, &mut b, STA0_BE, 2, 100, Nanos::ZERO);
        let p0 = b.pkt(0, 1);
        let p1 = b.pkt(1, 1);
        let lower_is_y = fq.flow_index(&b.cx(), p1) < fq.flow_index(&b.cx(), p0);
        let victim_is_y = b.dropped[0] == heads[1].unwrap();
        assert_eq!(victim_is_y, if want_y { true } else { lower_is_y }, "{params:?}");
    }
}

#[test]
fn the_memory_limit_drops_too_and_counts_overmemory() {
    // truesize of a 1534-byte frame: 2048 + 256 = 2304. A limit of 3 frames' truesize: the 4th
    // packet overflows memory (not the packet limit).
    assert_eq!(truesize(1534), 2304);
    let mut fq = fq_with(FqParams { memory_limit: 3 * 2304, ..FqParams::linux_4_11() }, 1);
    let mut b = bench_distinct(&fq, 1);
    let first = enq(&mut fq, &mut b, STA0_BE, 0, 1534, Nanos::ZERO).0;
    for _ in 0..3 {
        enq(&mut fq, &mut b, STA0_BE, 0, 1534, Nanos::ZERO);
    }
    assert_eq!(b.dropped, vec![first]);
    let s = fq.stats();
    assert_eq!((s.overlimit, s.overmemory, s.memory_usage, s.backlog), (1, 1, 3 * 2304, 3));
}

/// One flow: `n` packets at time 0, then one dequeue every `gap` from `start`. Returns the
/// times of the dequeues that dropped.
fn standing_queue(fq: &mut Fq, b: &mut Bench, tos: u8, n: usize, start: Nanos, gap: Nanos) -> Vec<Nanos> {
    b.keys[0].tos = tos;
    for _ in 0..n {
        enq(fq, b, STA0_BE, 0, 1500, Nanos::ZERO);
    }
    let mut drops_at = vec![];
    let mut now = start;
    loop {
        let before = b.dropped.len();
        let Some(p) = fq.dequeue(STA0_BE, &mut b.cx(), now) else { break };
        b.pkts.free(p);
        if b.dropped.len() > before {
            drops_at.push(now);
        }
        now += gap;
    }
    drops_at
}

#[test]
fn codel_drops_at_dequeue_once_sojourn_stays_above_20ms_for_100ms() {
    // Sojourns start at 30 ms (> 20 ms target) and grow. In CoDel time (ns >> 10) the first
    // dequeue arms first_above_time = 29 296 + 97 656 units (129.999 ms): the first drop is at
    // the 130 ms dequeue; drop_next is then 97 654 units later (229.998 ms: the 230 ms
    // dequeue), then 48 829 units (the kernel's first Newton step lands on 1/sqrt(2) ~ 0.5):
    // the 280 ms dequeue.
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 1);
    let drops = standing_queue(&mut fq, &mut b, 0, 300, Nanos::from_ms(30), Nanos::from_ms(1));
    assert_eq!(drops[..3], [Nanos::from_ms(130), Nanos::from_ms(230), Nanos::from_ms(280)]);
    let s = fq.tin_stats(STA0_BE);
    assert_eq!(s.drops as usize, b.dropped.len());
    assert_eq!((s.ecn_marks, s.backlog_packets), (0, 0));
    assert_eq!(s.tx_packets + s.drops, 300);
    assert!(fq.stats().conserved());
}

#[test]
fn codel_marks_ecn_capable_packets_instead() {
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 1);
    let drops = standing_queue(&mut fq, &mut b, 0x02, 300, Nanos::from_ms(30), Nanos::from_ms(1));
    assert!(drops.is_empty());
    let s = fq.tin_stats(STA0_BE);
    assert!(s.ecn_marks >= 2 && s.drops == 0, "{s:?}");
    assert_eq!(s.tx_packets, 300);
}

/// One flow, a packet enqueued every ms for `n` ms and each dequeued exactly `sojourn_ms`
/// later. Returns the number of CoDel drops.
fn constant_sojourn(fq: &mut Fq, b: &mut Bench, sojourn_ms: u64, n: u64) -> usize {
    for t in 0..n + sojourn_ms {
        let now = Nanos::from_ms(t);
        if t < n {
            enq(fq, b, STA0_BE, 0, 1500, now);
        }
        if t >= sojourn_ms {
            if let Some(p) = fq.dequeue(STA0_BE, &mut b.cx(), now) {
                b.pkts.free(p);
            }
        }
    }
    b.dropped.len()
}

#[test]
fn codel_holds_fire_below_the_20ms_target_and_drops_above_it() {
    // A standing sojourn of 19 ms for 300 ms never drops (target 20 ms, not fq_codel's 5 ms);
    // 21 ms does, once it has lasted an interval.
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 1);
    assert_eq!(constant_sojourn(&mut fq, &mut b, 19, 300), 0);
    let mut fq = fq_with(FqParams::linux_6_18(), 1);
    let mut b = bench_distinct(&fq, 1);
    assert!(constant_sojourn(&mut fq, &mut b, 21, 300) > 0);
    assert!(fq.stats().conserved());
}

#[test]
fn a_slow_station_uses_50ms_300ms_until_the_revert() {
    // 4.11 per-station parameters: 1 Mbit/s expected with 2 associated stations (< 12 Mbit/s)
    // is slow: target 50 ms. Sojourns pass 50 ms at the 50 ms dequeue, which arms
    // first_above_time 300 ms later (349.999 ms); the first dequeue after it is at 351 ms
    // (rather than 130 ms). With Uniform (6.18) the call is
    // ignored.
    let mut fq = fq_with(FqParams::linux_4_11(), 2);
    fq.set_expected_throughput(StationId(0), 1_000, 2);
    assert!(fq.station_is_slow(StationId(0)) && !fq.station_is_slow(StationId(1)));
    let mut b = bench_distinct(&fq, 1);
    let drops = standing_queue(&mut fq, &mut b, 0, 400, Nanos::from_ms(30), Nanos::from_ms(1));
    assert_eq!(drops[0], Nanos::from_ms(351));
    fq.set_expected_throughput(StationId(0), 12_000, 2);
    assert!(!fq.station_is_slow(StationId(0)), "6000 kbit/s x 2 stations is not below");
    fq.set_expected_throughput(StationId(0), 0, 2);
    assert!(!fq.station_is_slow(StationId(0)), "unknown throughput keeps the defaults");
    let mut fq = fq_with(FqParams::linux_6_18(), 2);
    fq.set_expected_throughput(StationId(0), 1_000, 2);
    assert!(!fq.station_is_slow(StationId(0)));
}

#[derive(Clone, Debug)]
enum Op {
    Enq { tin: u8, flow: u8, frame: u16 },
    Deq { tin: u8 },
    Wait { ms: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, 0u8..5, 60u16..1600).prop_map(|(tin, flow, frame)| Op::Enq { tin, flow, frame }),
        3 => (0u8..6).prop_map(|tin| Op::Deq { tin }),
        1 => (0u8..60).prop_map(|ms| Op::Wait { ms }),
    ]
}

proptest! {
    #[test]
    fn packets_are_conserved(ops in prop::collection::vec(op(), 1..400), batch in any::<bool>(), flows in 1u32..8) {
        // 3 stations x 2 TIDs in use, few hashed flows (collisions), a small limit (overflow),
        // waits long enough for CoDel.
        let base = if batch { FqParams::linux_6_18() } else { FqParams::linux_4_11() };
        let mut fq = fq_with(FqParams { flows_cnt: flows, limit: 24, memory_limit: 40_000, ..base }, 3);
        let mut b = Bench::new(5);
        let tins = [0, 1, 8, 9, 16, 17].map(TinId);
        let mut now = Nanos::ZERO;
        let mut out = 0u64;
        for op in ops {
            match op {
                Op::Enq { tin, flow, frame } => {
                    let p = b.pkt(flow as u32, frame as u32);
                    fq.enqueue(tins[tin as usize], p, &mut b.cx(), now);
                }
                Op::Deq { tin } => {
                    if let Some(p) = fq.dequeue(tins[tin as usize], &mut b.cx(), now) {
                        b.pkts.free(p);
                        out += 1;
                    }
                }
                Op::Wait { ms } => now += Nanos::from_ms(ms as u64),
            }
            let s = fq.stats();
            prop_assert!(s.conserved(), "{s:?}");
            prop_assert_eq!(s.dequeued, out);
            prop_assert_eq!(s.overlimit_drops + s.codel_drops, b.dropped.len() as u64);
            prop_assert!(s.backlog <= 24 && s.memory_usage <= 40_000);
            let tin_backlog: u32 = tins.iter().map(|&t| fq.tin_stats(t).backlog_packets).sum();
            prop_assert_eq!(tin_backlog, s.backlog);
        }
        // Everything still queued comes out.
        for &t in &tins {
            while let Some(p) = fq.dequeue(t, &mut b.cx(), now) {
                b.pkts.free(p);
            }
            prop_assert!(!fq.tin_has_queue(t));
        }
        let s = fq.stats();
        prop_assert!(s.conserved() && s.backlog == 0 && s.memory_usage == 0, "{s:?}");
        for p in b.dropped.drain(..) {
            b.pkts.free(p);
        }
        prop_assert_eq!(b.pkts.live_count(), 0);
    }
}
