use super::*;
use crate::qdisc::testutil::{build, build_ok, errors, qdisc, run_link, warnings, Bench, Source};

fn make(opts: &str) -> QdiscImpl {
    build_ok(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: fq {opts}")))
}

fn fq(q: &QdiscImpl) -> &Fq {
    match q {
        QdiscImpl::Fq(f) => f,
        _ => panic!("not fq"),
    }
}

fn cbr(flow: u32, mbit: u64, ip_len: u32, secs: u64) -> Source {
    Source { flow, rate_bps: mbit * 1_000_000, ip_len, start: Nanos::ZERO, stop: Nanos::from_secs(secs) }
}

#[test]
fn defaults_print_as_tc_does() {
    let q = make("");
    let r = &q.reports()[0];
    assert_eq!(
        r.options,
        "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 3028b initial_quantum 15140b \
         low_rate_threshold 550Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop"
    );
    assert_eq!(r.xstats_text, "  flows 0 (inactive 0 throttled 0)\n  gc 0 highprio 0 throttled 0");
    let q = make("limit 500 flow_limit 50 buckets 100 quantum 1514 initial_quantum 3000 maxrate 2mbit nopacing refill_delay 20ms orphan_mask 255 ce_threshold 4ms timer_slack 20us");
    assert_eq!(
        q.reports()[0].options,
        "limit 500p flow_limit 50p buckets 128 orphan_mask 255 nopacing quantum 1514b initial_quantum 3000b \
         maxrate 2Mbit low_rate_threshold 550Kbit refill_delay 20ms ce_threshold 4ms timer_slack 20us horizon 10s horizon_drop"
    );
}

#[test]
fn option_errors_and_warnings() {
    for (tail, tok, msg) in [
        ("fq quantum 0", "0", "invalid quantum"),
        ("fq quantum 2000000", "2000000", "invalid quantum"),
        ("fq maxrate 50%", "50%", "percent"),
        ("fq maxrate 100gbit", "100gbit", "32 bits"),
        ("fq buckets 1000000", "1000000", "buckets"),
        ("fq limit -1", "-1", "not an integer"),
        ("fq weights 1 2 3", "weights", "unknown fq option"),
    ] {
        let (q, d) = build(qdisc(4, &format!("tc qdisc add dev eth0 root {tail}")));
        assert!(q.is_none(), "{tail}");
        let e = &errors(&d)[0];
        assert_eq!((e.line, e.token.as_str()), (4, tok), "{tail}: {d:?}");
        assert!(e.message.contains(msg), "{tail}: {}", e.message);
    }
    // low_rate_threshold 0 (tc's get_rate takes it) turns the threshold off: not shown.
    let q = make("maxrate 400kbit low_rate_threshold 0");
    assert_eq!(
        q.reports()[0].options,
        "limit 10000p flow_limit 100p buckets 1024 orphan_mask 1023 quantum 3028b initial_quantum 15140b \
         maxrate 400Kbit refill_delay 40ms timer_slack 10us horizon 10s horizon_drop"
    );
    for opts in ["horizon 1s", "horizon_cap", "ce_threshold 1ms"] {
        let (q, d) = build(qdisc(1, &format!("tc qdisc add dev eth0 root fq {opts}")));
        assert!(q.is_some() && warnings(&d).len() == 1, "{opts}: {d:?}");
    }
}

#[test]
fn flows_share_the_link_by_bytes() {
    // Two saturating flows, 1500- and 500-byte datagrams, on 10 Mbit/s: equal byte shares
    // (DRR with a 3028-byte quantum).
    let mut q = make("");
    let mut b = Bench::new(2);
    let r = run_link(
        &mut q,
        &mut b,
        &[cbr(0, 8, 1500, 10), cbr(1, 8, 500, 10)],
        10_000_000,
        Nanos::from_secs(10),
        Nanos::from_secs(2),
    );
    let (a, c) = (r.rate_bps(0, 8.0), r.rate_bps(1, 8.0));
    assert!((a - 5e6).abs() < 0.02 * 5e6 && (c - 5e6).abs() < 0.02 * 5e6, "{a} {c}");
    assert!(q.stats().identity_holds());
    // Each flow holds at most flow_limit packets: the rest are dropped as flows_plimit.
    assert!(fq(&q).fstats.flows_plimit > 0);
    assert!(q.stats().backlog_bytes <= 100 * 1514 + 100 * 514);
}

#[test]
fn a_sparse_flow_is_served_before_a_backlogged_one() {
    // A backlogged flow and a 100 kbit/s flow: the sparse flow's packets wait at most one
    // packet time (they join new_flows).
    let mut q = make("");
    let mut b = Bench::new(2);
    let r = run_link(
        &mut q,
        &mut b,
        &[cbr(0, 20, 1500, 5), cbr(1, 0, 100, 5)].map(|mut s| {
            if s.flow == 1 {
                s.rate_bps = 100_000;
            }
            s
        }),
        10_000_000,
        Nanos::from_secs(5),
        Nanos::from_secs(1),
    );
    assert!(r.delay_max[1] <= Nanos::for_bits(1514 * 8, 10_000_000), "{:?}", r.delay_max[1]);
    assert!(r.mean_delay(0) > Nanos::from_ms(50));
}

#[test]
fn maxrate_paces_each_flow() {
    // maxrate 2mbit: each of two flows offered 6 Mbit/s gets 2 Mbit/s on a 100 Mbit/s link.
    let mut q = make("maxrate 2mbit");
    let mut b = Bench::new(2);
    let r = run_link(
        &mut q,
        &mut b,
        &[cbr(0, 6, 1500, 6), cbr(1, 6, 1500, 6)],
        100_000_000,
        Nanos::from_secs(6),
        Nanos::from_secs(1),
    );
    for f in 0..2 {
        let got = r.rate_bps(f, 5.0);
        assert!((got - 2e6).abs() < 0.02 * 2e6, "flow {f}: {got}");
    }
    assert!(fq(&q).fstats.throttled > 0);
    // Below low_rate_threshold (550 kbit/s) every packet is paced on its own length: 1514-byte
    // frames at 400 kbit/s leave exactly 30.28 ms apart.
    let mut q = make("maxrate 400kbit");
    let mut b = Bench::new(1);
    let r = run_link(&mut q, &mut b, &[cbr(0, 2, 1500, 2)], 100_000_000, Nanos::from_secs(2), Nanos::ZERO);
    let gaps: Vec<u64> = r.departures.windows(2).map(|w| (w[1].0 - w[0].0).as_ns()).collect();
    assert!(gaps[5..].iter().all(|&g| g == 30_280_000), "{:?}", &gaps[..8]);
}

#[test]
fn control_packets_skip_the_flows() {
    let mut q = make("");
    let mut b = Bench::new(2);
    b.keys[1].priority = TC_PRIO_CONTROL;
    for _ in 0..5 {
        let p = b.pkt(0, 1000);
        q.enqueue(p, &mut b.cx(), Nanos(1));
    }
    let p = b.pkt(1, 100);
    q.enqueue(p, &mut b.cx(), Nanos(1));
    let first = q.dequeue(&mut b.cx(), Nanos(2)).unwrap();
    assert_eq!(b.pkts.get(first).flow, 1);
    assert_eq!(fq(&q).fstats.highprio, 1);
    assert!(q.reports()[0].xstats_text.contains("highprio 1"));
}

#[test]
fn idle_flows_are_collected_after_three_seconds() {
    // buckets 2: collection starts at 2 << 1 = 4 flows when more than half are idle.
    let mut q = make("buckets 2");
    let mut b = Bench::new(12);
    for f in 0..8 {
        let p = b.pkt(f, 100);
        q.enqueue(p, &mut b.cx(), Nanos::from_ms(1));
    }
    while let Some(p) = q.dequeue(&mut b.cx(), Nanos::from_ms(2)) {
        b.pkts.free(p);
    }
    // Drain once more so every flow is seen empty and detached.
    assert!(q.dequeue(&mut b.cx(), Nanos::from_ms(3)).is_none());
    assert_eq!((fq(&q).nflows, fq(&q).inactive), (8, 8));
    for f in 8..12 {
        let p = b.pkt(f, 100);
        q.enqueue(p, &mut b.cx(), Nanos::from_secs(5));
    }
    assert!(fq(&q).fstats.gc_flows > 0, "{:?}", fq(&q).fstats);
    assert_eq!(fq(&q).nflows as u64 + fq(&q).fstats.gc_flows, 12);
}
