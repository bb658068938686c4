use super::*;
use crate::qdisc::testutil::{build, build_ok, qdisc, run_link, Bench, Source};

fn fqp(q: &QdiscImpl) -> &FqPie {
    match q {
        QdiscImpl::FqPie(f) => f,
        _ => panic!("not fq_pie"),
    }
}

fn flow_of(q: &QdiscImpl, b: &mut Bench, flows: u32) -> Vec<u32> {
    (0..flows)
        .map(|f| {
            let p = b.pkt(f, 100);
            let i = fqp(q).classify(&b.cx(), p, Nanos::ZERO).unwrap();
            b.pkts.free(p);
            i
        })
        .collect()
}

#[test]
fn defaults_print_as_tc_does() {
    let q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: fq_pie"));
    let r = &q.reports()[0];
    assert_eq!(
        r.options,
        "limit 10240p flows 1024 target 15ms tupdate 16ms alpha 2 beta 20 quantum 1514b memory_limit 32Mb ecn_prob 10"
    );
    assert_eq!(
        r.xstats_text,
        "  pkts_in 0 overlimit 0 overmemory 0 dropped 0 ecn_mark 0\n  new_flow_count 0 new_flows_len 0 old_flows_len 0 memory_used 0"
    );
    let (q, d) = build(qdisc(
        1,
        "tc qdisc add dev eth0 root handle 1: fq_pie limit 500 flows 64 target 5ms tupdate 8ms alpha 4 beta 30 quantum 3000 memory_limit 1mb ecn_prob 30 ecn bytemode dq_rate_estimator",
    ));
    assert_eq!(
        q.expect("valid").reports()[0].options,
        "limit 500p flows 64 target 5ms tupdate 8ms alpha 4 beta 30 quantum 3000b memory_limit 1Mb ecn_prob 30 ecn bytemode dq_rate_estimator"
    );
    assert_eq!(d.len(), 1, "ecn warns: {d:?}");
}

#[test]
fn option_errors_name_the_token() {
    let cases = [
        ("tc qdisc add dev eth0 root handle 1: fq_pie flows 70000", 51, "70000", "must range in [1..65536]"),
        ("tc qdisc add dev eth0 root handle 1: fq_pie quantum 2000000", 53, "2000000", "out of range"),
        ("tc qdisc add dev eth0 root handle 1: fq_pie ecn_prob 100", 54, "100", "out of range"),
        ("tc qdisc add dev eth0 root handle 1: fq_pie drop_batch 64", 45, "drop_batch", "unknown fq_pie option"),
        ("tc qdisc add dev eth0 root handle 1: fq_pie beta 40", 50, "40", "out of range"),
        ("tc qdisc add dev eth0 root handle 1: fq_pie memory_limit", 45, "memory_limit", "needs a value"),
    ];
    for (line, col, tok, msg) in cases {
        let (q, d) = build(qdisc(3, line));
        assert!(q.is_none(), "{line}");
        assert_eq!((d[0].line, d[0].col, d[0].token.as_str()), (3, col, tok), "{line}: {d:?}");
        assert!(d[0].message.contains(msg), "{line}: {}", d[0].message);
    }
    // A change (options of a later line) cannot set flows.
    let mut d = qdisc(2, "tc qdisc add dev eth0 root handle 1: fq_pie flows 64");
    d.opts.extend(crate::qdisc::testutil::words(4, "target 10ms"));
    d.opts.extend(crate::qdisc::testutil::words(5, "flows 64"));
    let (q, diags) = build(d);
    assert!(q.is_none());
    assert!(diags[0].message.contains("cannot be changed") && diags[0].line == 5, "{diags:?}");
}

#[test]
fn each_flow_gets_its_share_and_its_own_pie() {
    // 10 Mbit/s link. Three unresponsive flows at 6 Mbit/s and a light one at 1 Mbit/s: DRR
    // gives the light flow all it sends and the others (10 - 1) / 3 = 3 Mbit/s each; each bulk
    // flow's own PIE holds its queue near target (15 ms) and drops half of what it sends.
    let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: fq_pie"));
    let mut b = Bench::new(4);
    let mut idx = flow_of(&q, &mut b, 4);
    idx.sort();
    idx.dedup();
    assert_eq!(idx.len(), 4, "distinct flow queues");
    let link = 10_000_000;
    let secs = 30;
    let srcs: Vec<Source> = (0..4)
        .map(|f| Source {
            flow: f,
            rate_bps: if f == 3 { 1_000_000 } else { 6_000_000 },
            ip_len: 1500,
            start: Nanos::from_us(f as u64 * 97),
            stop: Nanos::from_secs(secs),
        })
        .collect();
    let r = run_link(&mut q, &mut b, &srcs, link, Nanos::from_secs(secs), Nanos::from_secs(10));
    for f in 0..3 {
        let rate = r.rate_bps(f, (secs - 10) as f64);
        assert!((rate - 3e6).abs() < 0.02 * 3e6, "flow {f}: {rate}");
        let d = r.mean_delay(f).as_ns() as f64 / 1e6;
        assert!((10.0..25.0).contains(&d), "flow {f} mean sojourn {d:.2} ms");
        let p = fqp(&q).flow_prob(flow_of(&q, &mut b, 4)[f] as usize) as f64 / MAX_PROB as f64;
        assert!(p > 0.3, "flow {f}: p {p}");
    }
    assert_eq!(r.drops[3], 0, "the light flow loses nothing");
    assert!((r.rate_bps(3, (secs - 10) as f64) - 1e6).abs() < 0.02e6);
    let light = r.mean_delay(3).as_ns() as f64 / 1e6;
    assert!(light < 2.0, "light flow {light:.2} ms: it is served as a new flow");
    assert_eq!(fqp(&q).pstats.overlimit, 0);
    assert!(q.stats().identity_holds());
}

#[test]
fn the_limit_drops_the_arrival_and_memory_is_only_counted() {
    let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: fq_pie limit 10 memory_limit 4000"));
    let mut b = Bench::new(2);
    let mut res = vec![];
    for i in 0..12 {
        let p = b.pkt(i % 2, 1500);
        res.push(q.enqueue(p, &mut b.cx(), Nanos::from_ms(1)));
    }
    assert_eq!(res.iter().filter(|r| **r == Enq::Dropped).count(), 2);
    let f = fqp(&q);
    assert_eq!((f.pstats.overlimit, f.pstats.dropped, f.pstats.packets_in), (2, 2, 10));
    // 2304 bytes of truesize per frame: from the 3rd on, usage > 4000 + 2304 is counted.
    assert_eq!(f.overmemory, 7, "arrivals 4 to 10 (11 and 12 are refused at the limit first)");
    assert_eq!(f.memory_usage, 10 * 2304);
    assert!(q.stats().identity_holds());
}

#[test]
fn the_timer_updates_2048_flows_per_run() {
    let mut q = build_ok(qdisc(1, "tc qdisc add dev eth0 root handle 1: fq_pie flows 4096"));
    let mut b = Bench::new(1);
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::from_ms(511));
    let f = fqp(&q);
    assert_eq!((f.timer_next, f.cursor), (Nanos::from_ms(512), 0), "jiffies + HZ / 2 on the wheel: jiffy 128");
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::from_ms(512));
    let f = fqp(&q);
    assert_eq!((f.timer_next, f.cursor), (Nanos::from_ms(516), 2048), "half the flows, then one jiffy");
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::from_ms(516));
    let f = fqp(&q);
    assert_eq!((f.timer_next, f.cursor), (Nanos::from_ms(536), 0), "the rest, then tupdate + 1 jiffies");
    // Idle flows settle: after a second of nothing but the one backlogged flow, only it is
    // left to update.
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::from_ms(1600));
    assert_eq!(fqp(&q).unsettled, 1);
}
