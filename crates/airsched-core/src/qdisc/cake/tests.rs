use super::*;
use crate::qdisc::testutil::{build, build_err, build_ok, qdisc, run_link, warnings, Bench, LinkRun, Source};

fn cake(q: &QdiscImpl) -> &Cake {
    match q {
        QdiscImpl::Cake(c) => c,
        _ => panic!("not cake"),
    }
}

fn add(opts: &str) -> QdiscImpl {
    build_ok(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: cake {opts}")))
}

fn cbr(flow: u32, mbit: u64, secs: u64) -> Source {
    Source { flow, rate_bps: mbit * 1_000_000, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(secs) }
}

/// Run sources through `q` on a 1 Gbit/s link (so only cake's shaper limits) for `secs`,
/// measuring from second 1.
fn shaped(q: &mut QdiscImpl, b: &mut Bench, sources: &[Source], secs: u64) -> LinkRun {
    let r = run_link(q, b, sources, 1_000_000_000, Nanos::from_secs(secs), Nanos::from_secs(1));
    assert!(q.stats().identity_holds(), "{:?}", q.stats());
    r
}

fn mbit(r: &LinkRun, f: usize, secs: f64) -> f64 {
    r.rate_bps(f, secs) / 1e6
}

#[test]
fn defaults_print_as_tc_does() {
    let q = add("");
    assert_eq!(
        q.reports()[0].options,
        "bandwidth unlimited diffserv3 triple-isolate nonat nowash no-ack-filter split-gso rtt 100ms raw overhead 0"
    );
    let (q, d) = build(qdisc(1, "tc qdisc add dev eth0 root handle 1: cake bandwidth 20Mbit ethernet"));
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(
        q.unwrap().reports()[0].options,
        "bandwidth 20Mbit diffserv3 triple-isolate nonat nowash no-ack-filter split-gso rtt 100ms noatm overhead 38 mpu 84"
    );
}

#[test]
fn options_round_trip_through_their_printed_form() {
    for opts in [
        "bandwidth 5Mbit besteffort flows nonat nowash no-ack-filter split-gso rtt 100ms raw overhead 0",
        "bandwidth 100Mbit diffserv4 dual-dsthost nonat nowash ingress ack-filter no-split-gso rtt 30ms ptm overhead 30 memlimit 32Mb",
        "bandwidth 900Kbit diffserv8 dual-srchost nonat nowash ack-filter-aggressive split-gso rtt 1s atm overhead 40",
        "unlimited precedence hosts nonat nowash no-ack-filter split-gso rtt 100us noatm overhead -4 mpu 64 fwmark 0xf0",
        "unlimited diffserv3 srchost nonat nowash no-ack-filter split-gso rtt 999s raw overhead 0",
    ] {
        // tc prints "bandwidth unlimited" but reads only "unlimited".
        let printed = add(opts).reports()[0].options.replace("bandwidth unlimited", "unlimited");
        let again = add(&printed).reports()[0].options.replace("bandwidth unlimited", "unlimited");
        assert_eq!(printed, again, "{opts}");
    }
    assert_eq!(
        add("diffserv dsthost docsis rtt 10ms").reports()[0].options,
        "bandwidth unlimited diffserv4 dsthost nonat nowash no-ack-filter split-gso rtt 10ms noatm overhead 18 mpu 64"
    );
    // Overhead keywords add up within a command; conservative assigns.
    assert!(add("pppoe-ptm ether-vlan").reports()[0].options.ends_with("ptm overhead 34"));
    assert!(add("ethernet conservative").reports()[0].options.ends_with("atm overhead 48 mpu 84"));
    // raw clears the overhead flag: tc shows raw and no noatm.
    assert!(add("overhead 20 raw").reports()[0].options.ends_with("raw overhead 0"));
    // Presets set rtt and target (target = rtt/20 for an explicit rtt).
    // interplanetary is 1000 s, printed with %g's three digits.
    assert!(add("interplanetary").reports()[0].options.contains(" rtt 1e+03s "));
    let c = add("satellite");
    assert_eq!((cake(&c).conf.interval_us, cake(&c).conf.target_us), (1_000_000, 50_000));
    let c = add("rtt 40ms");
    assert_eq!((cake(&c).conf.interval_us, cake(&c).conf.target_us), (40_000, 2000));
}

#[test]
fn a_change_keeps_what_it_does_not_name() {
    let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: cake bandwidth 10Mbit diffserv4 ethernet");
    let more = qdisc(2, "tc qdisc change dev eth0 root handle 1: cake overhead 20 diffserv3 flows");
    d.opts.extend(more.opts);
    let q = build_ok(d);
    // diffserv3 is tc's 0, which it does not send: the qdisc stays diffserv4.
    assert_eq!(
        q.reports()[0].options,
        "bandwidth 10Mbit diffserv4 flows nonat nowash no-ack-filter split-gso rtt 100ms noatm overhead 20 mpu 84"
    );
}

#[test]
fn bad_options_are_one_error_at_the_token() {
    let cases = [
        ("overhead 300", "300", "valid range is -64 to 256"),
        ("mpu -1", "-1", "valid range is 0 to 256"),
        ("bandwidth fast", "fast", ""),
        ("rtt soon", "soon", ""),
        ("diffserv5", "diffserv5", "unknown cake option"),
        ("lan metro", "metro", "duplicate"),
        ("memlimit", "memlimit", "needs a value"),
        ("fwmark 0x1ffffffff", "0x1ffffffff", "out of range"),
    ];
    for (opts, tok, msg) in cases {
        let e = build_err("cake", opts);
        assert_eq!(e.len(), 1, "{opts}: {e:?}");
        assert_eq!(e[0].token, tok, "{opts}: {e:?}");
        assert!(e[0].message.contains(msg), "{opts}: {}", e[0].message);
    }
}

#[test]
fn options_accepted_but_not_modelled_warn() {
    for (opts, word) in [("autorate-ingress", "autorate"), ("nat", "nat"), ("wash", "wash")] {
        let (q, d) = build(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: cake {opts}")));
        assert!(q.is_some());
        let w = warnings(&d);
        assert_eq!(w.len(), 1, "{opts}: {d:?}");
        assert!(w[0].message.contains(word), "{}", w[0].message);
    }
}

#[test]
fn tin_parameters_follow_cake_set_rate() {
    // 20 Mbit diffserv4 with psched_mtu 1514: thresholds 20, 1.25, 10, 5 Mbit; quanta
    // 610/300/305/300; Bulk's mtu_time 9.69 ms gives target 14.53 ms and interval 109.5 ms.
    let q = add("bandwidth 20Mbit diffserv4");
    let c = cake(&q);
    let rates: Vec<u64> = c.tins[..4].iter().map(|t| t.rate_bps * 8).collect();
    assert_eq!(rates, [20_000_000, 1_250_000, 10_000_000, 5_000_000]);
    let quanta: Vec<u16> = c.tins[..4].iter().map(|t| t.flow_quantum).collect();
    assert_eq!(quanta, [610, 300, 305, 300]);
    let bulk = c.tins[1].cparams;
    assert!((bulk.mtu_time as f64 - 1514.0 / 156_250.0 * 1e9).abs() < 1e3, "{bulk:?}");
    assert!((bulk.target as f64 - 14.534e6).abs() < 2e3, "{bulk:?}");
    assert!((bulk.interval as f64 - 109.534e6).abs() < 2e3, "{bulk:?}");
    assert_eq!(c.tins[0].cparams.target, 5_000_000);
    // Memory limit: 4 MiB at 20 Mbit; 10240 x 1514 unlimited; 5 MB at 100 Mbit.
    assert_eq!(c.buffer_limit, 4 << 20);
    assert_eq!(cake(&add("")).buffer_limit, 15_503_360);
    assert_eq!(cake(&add("bandwidth 100mbit")).buffer_limit, 5_000_000);
    // diffserv8: rates and quanta step by 7/8.
    let q = add("bandwidth 8Mbit diffserv8");
    let c = cake(&q);
    assert_eq!(c.tins[1].rate_bps, 875_000);
    assert_eq!(c.tins[..8].iter().map(|t| t.tin_quantum).collect::<Vec<_>>(), [256, 224, 196, 171, 149, 130, 113, 98]);
}

#[test]
fn overhead_compensation_matches_the_worked_lengths() {
    // 1500-byte IP packets (1514 on the wire here): ethernet 1538, docsis 1518, pppoe-ptm
    // 1530 + 24 = 1554, bridged-ptm 1546, conservative 1548 -> 33 cells = 1749.
    for (opts, adj) in [
        ("ethernet", 1538),
        ("docsis", 1518),
        ("pppoe-ptm", 1554),
        ("bridged-ptm", 1546),
        ("conservative", 1749),
        ("", 1514),
    ] {
        assert_eq!(cake(&add(opts)).adjusted_len(1514), adj, "{opts}");
    }
    // A 52-byte ACK (66 with its header): ethernet max(90, 84) = 90; pppoe-llcsnap 92 -> 106.
    assert_eq!(cake(&add("ethernet")).adjusted_len(66), 90);
    assert_eq!(cake(&add("pppoe-llcsnap")).adjusted_len(66), 106);
    assert_eq!(cake(&add("ethernet")).adjusted_len(40), 84);
}

#[test]
fn the_shaper_holds_the_rate_with_and_without_overhead() {
    for (opts, wire_len) in [("bandwidth 10Mbit besteffort", 1514.0), ("bandwidth 10Mbit besteffort ethernet", 1538.0)]
    {
        let mut q = add(opts);
        let mut b = Bench::new(1);
        let r = shaped(&mut q, &mut b, &[cbr(0, 20, 6)], 6);
        // Charged bytes per second equal the rate; the qdisc length is 1514 of each.
        let expect = 10.0 * 1514.0 / wire_len;
        let got = mbit(&r, 0, 5.0);
        assert!((got - expect).abs() / expect < 0.005, "{opts}: {got} vs {expect}");
    }
}

#[test]
fn unresponsive_overload_is_held_by_cobalt() {
    let mut q = add("bandwidth 10Mbit besteffort");
    let mut b = Bench::new(1);
    let r = run_link(&mut q, &mut b, &[cbr(0, 15, 40)], 1_000_000_000, Nanos::from_secs(40), Nanos::from_secs(20));
    // 150 % offered: a third must go; goodput stays at the rate.
    let got = mbit(&r, 0, 20.0);
    assert!((got - 10.0).abs() < 0.1, "{got}");
    let st = q.stats();
    let frac = st.drops as f64 / st.offered_packets as f64;
    assert!((frac - 1.0 / 3.0).abs() < 0.02, "{frac}");
    let c = cake(&q);
    // COBALT, not the memory limit, dropped them (the buffer stays far below 15 MB).
    assert!(c.buffer_max_used < 4 << 20, "{}", c.buffer_max_used);
    assert_eq!(c.tins[0].st.dropped as u64, st.drops);
    // Once the drop rate has converged (measured from 20 s: CoDel's count must reach
    // ~(interval / 3 packet times)^2, which takes ~2 interval sqrt(count) = several seconds),
    // the sojourn sits at the 5 ms target, not at the seconds a FIFO would build.
    let d = r.mean_delay(0).as_secs_f64();
    assert!(d < 0.010, "mean delay {d}");
}

/// Two hosts: host A (10.0.0.1) with one flow, host B (10.0.0.2) with eight, to one server.
fn two_hosts(dst_same: bool) -> Bench {
    let mut b = Bench::new(9);
    for (i, k) in b.keys.iter_mut().enumerate() {
        k.src_ip = if i == 0 { 0x0a00_0001 } else { 0x0a00_0002 };
        if dst_same {
            k.dst_ip = 0xc0a8_0102;
        }
    }
    b
}

#[test]
fn dual_srchost_and_triple_isolate_share_by_host() {
    for (mode, dst_same) in
        [("dual-srchost", true), ("triple-isolate", false), ("flows", true), ("triple-isolate", true)]
    {
        let mut q = add(&format!("bandwidth 10Mbit besteffort {mode}"));
        let mut b = two_hosts(dst_same);
        let src: Vec<Source> = (0..9).map(|f| cbr(f, 5, 8)).collect();
        let r = shaped(&mut q, &mut b, &src, 8);
        let a = mbit(&r, 0, 7.0);
        let bsum: f64 = (1..9).map(|f| mbit(&r, f, 7.0)).sum();
        if mode == "flows" || (mode == "triple-isolate" && dst_same) {
            // Per-flow fairness: A gets a ninth. In triple-isolate the nine flows to one
            // server make that server's destination load 9, which divides every flow's
            // quantum alike (the kernel's max of both host loads).
            assert!((a - 10.0 / 9.0).abs() < 0.05 * 10.0 / 9.0, "{mode}: A {a}");
        } else {
            // Per-host fairness: A gets half, B's eight flows share the other half.
            assert!((a - 5.0).abs() < 0.1, "{mode}: A {a} B {bsum}");
            assert!((bsum - 5.0).abs() < 0.1, "{mode}: A {a} B {bsum}");
            for f in 1..9 {
                let x = mbit(&r, f, 7.0);
                assert!((x - 0.625).abs() < 0.05, "{mode}: flow {f} {x}");
            }
        }
    }
    // dual-dsthost shares by destination: swap roles (one server per host, one client).
    let mut q = add("bandwidth 10Mbit besteffort dual-dsthost");
    let mut b = Bench::new(9);
    for (i, k) in b.keys.iter_mut().enumerate() {
        k.dst_ip = if i == 0 { 0xc0a8_0102 } else { 0xc0a8_0103 };
    }
    let src: Vec<Source> = (0..9).map(|f| cbr(f, 5, 8)).collect();
    let r = shaped(&mut q, &mut b, &src, 8);
    assert!((mbit(&r, 0, 7.0) - 5.0).abs() < 0.1);
}

fn tos(b: &mut Bench, f: usize, t: u8) {
    b.keys[f].tos = t;
}

#[test]
fn tins_give_priority_below_their_share_and_only_spare_capacity_above() {
    // diffserv4, 10 Mbit: Voice (EF) share 2.5 Mbit, Bulk (CS1) 625 kbit.
    let mut q = add("bandwidth 10Mbit diffserv4");
    let mut b = Bench::new(3);
    tos(&mut b, 0, 0xb8);
    tos(&mut b, 2, 0x20);
    let r = shaped(&mut q, &mut b, &[cbr(0, 1, 6), cbr(1, 20, 6), cbr(2, 20, 6)], 6);
    // Voice under its share: all of it, with little delay.
    assert!((mbit(&r, 0, 5.0) - 1.0).abs() < 0.02, "{}", mbit(&r, 0, 5.0));
    assert!(r.mean_delay(0) < Nanos::from_ms(3), "{:?}", r.mean_delay(0));
    // Bulk saturated: its share; best effort the rest.
    assert!((mbit(&r, 2, 5.0) - 0.625).abs() < 0.03, "{}", mbit(&r, 2, 5.0));
    assert!((mbit(&r, 1, 5.0) - (10.0 - 1.0 - 0.625)).abs() < 0.1, "{}", mbit(&r, 1, 5.0));
    // Voice flooding: held at its share, best effort gets the rest.
    let mut q = add("bandwidth 10Mbit diffserv4");
    let mut b = Bench::new(2);
    tos(&mut b, 0, 0xb8);
    let r = shaped(&mut q, &mut b, &[cbr(0, 20, 6), cbr(1, 20, 6)], 6);
    assert!((mbit(&r, 0, 5.0) - 2.5).abs() < 0.05, "{}", mbit(&r, 0, 5.0));
    assert!((mbit(&r, 1, 5.0) - 7.5).abs() < 0.05, "{}", mbit(&r, 1, 5.0));
    // Alone, a tin may use the whole rate.
    let mut q = add("bandwidth 10Mbit diffserv4");
    let mut b = Bench::new(1);
    tos(&mut b, 0, 0x20);
    let r = shaped(&mut q, &mut b, &[cbr(0, 20, 6)], 6);
    assert!((mbit(&r, 0, 5.0) - 10.0).abs() < 0.1, "{}", mbit(&r, 0, 5.0));
}

#[test]
fn unlimited_mode_shares_tins_by_their_quanta() {
    // diffserv3 unlimited on a 10 Mbit/s link: Best Effort 1024 and Voice 256 -> 80 / 20 %.
    let mut q = add("diffserv3");
    let mut b = Bench::new(2);
    tos(&mut b, 1, 0xb8);
    let r =
        run_link(&mut q, &mut b, &[cbr(0, 20, 6), cbr(1, 20, 6)], 10_000_000, Nanos::from_secs(6), Nanos::from_secs(1));
    let (be, vo) = (mbit(&r, 0, 5.0), mbit(&r, 1, 5.0));
    assert!((be / (be + vo) - 0.8).abs() < 0.01, "{be} {vo}");
}

#[test]
fn dscp_fwmark_and_priority_pick_the_tin() {
    let q = add("diffserv4 fwmark 0xf0");
    let c = cake(&q);
    let key = |tos: u8, mark: u32, priority: u32| FlowKey {
        src_ip: 1,
        dst_ip: 2,
        sport: 3,
        dport: 4,
        proto: 17,
        tos,
        mark,
        priority,
    };
    // DSCP: CS1 and LE bulk (1), AF41 video (2), EF voice (3), CS0 and CS5... best effort or voice.
    assert_eq!(c.select_tin(&key(0x20, 0, 0)), 1);
    assert_eq!(c.select_tin(&key(0x04, 0, 0)), 1);
    assert_eq!(c.select_tin(&key(0x88, 0, 0)), 2);
    assert_eq!(c.select_tin(&key(0xb8, 0, 0)), 3);
    assert_eq!(c.select_tin(&key(0x00, 0, 0)), 0);
    // fwmark (mask 0xf0, shift 4): mark 0x10 is the first tin in display order, Bulk.
    assert_eq!(c.select_tin(&key(0xb8, 0x10, 0)), 1);
    assert_eq!(c.select_tin(&key(0xb8, 0x40, 0)), 3);
    assert_eq!(c.select_tin(&key(0xb8, 0x50, 0)), 3, "mark 5 > 4 tins: DSCP decides");
    // skb->priority 1:3 -> third tin in display order (Video).
    assert_eq!(c.select_tin(&key(0x00, 0, 0x0001_0003)), 2);
    assert_eq!(c.select_tin(&key(0x00, 0, 0x0002_0003)), 0, "another qdisc's handle");
    // diffserv3: CS5 stays best effort, VA voice.
    let c3 = add("");
    assert_eq!(cake(&c3).select_tin(&key(0xa0, 0, 0)), 0);
    assert_eq!(cake(&c3).select_tin(&key(0xb0, 0, 0)), 2);
}

#[test]
fn flows_get_their_own_ways_until_a_set_is_full() {
    let mut q = add("flows besteffort");
    let mut b = Bench::new(200);
    let mut seen = std::collections::BTreeSet::new();
    for f in 0..200u32 {
        let p = b.pkt(f, 100);
        q.enqueue(p, &mut b.cx(), Nanos(1));
    }
    let c = cake(&q);
    for fl in 0..QUEUES {
        if !c.tins[0].flows[fl].queue.is_empty() {
            seen.insert(fl);
        }
    }
    let st = c.tins[0].st;
    // 200 flows in 128 sets of 8: every flow has a queue of its own unless a set overflowed.
    assert_eq!(seen.len() as u32 + st.way_collisions, 200);
    assert_eq!(st.way_misses + st.way_collisions, 200);
    assert_eq!(st.way_collisions, 0, "200 flows should fit 128 sets of 8");
    // A second packet of each flow finds its queue: directly when the flow sits in the way
    // its hash names, else by the set scan (way_inds).
    let in_own_way = (0..200u32)
        .filter(|&f| seen.contains(&(flow_hash(&b.keys[f as usize], cake(&q).hash_key) as usize % QUEUES)))
        .count() as u32;
    for f in 0..200u32 {
        let p = b.pkt(f, 100);
        q.enqueue(p, &mut b.cx(), Nanos(2));
    }
    let st = cake(&q).tins[0].st;
    assert_eq!(st.way_directs + st.way_hits, 200);
    assert!(st.way_hits > 0 && st.way_directs >= in_own_way - st.way_hits, "{} {}", st.way_directs, st.way_hits);
}

#[test]
fn overflow_drops_from_the_longest_queue() {
    // A memory limit of 64 KB: the fat flow loses packets, the thin one never.
    let mut q = add("bandwidth 10Mbit besteffort memlimit 64k flows");
    let mut b = Bench::new(2);
    let r = shaped(&mut q, &mut b, &[cbr(0, 50, 4), cbr(1, 1, 4)], 4);
    assert!(r.drops[0] > 1000, "{:?}", r.drops);
    assert_eq!(r.drops[1], 0);
    let c = cake(&q);
    assert!(c.buffer_max_used <= 64 * 1024 + 2304);
    // Overflow feeds BLUE: the flood flow is unresponsive.
    assert!(c.tins[0].flows.iter().any(|f| f.cvars.p_drop > 0));
}

#[test]
fn the_ack_filter_drops_acks_made_redundant() {
    for (opts, drops_after) in
        [("ack-filter", [0, 0, 1, 2]), ("ack-filter-aggressive", [0, 1, 2, 3]), ("", [0, 0, 0, 0])]
    {
        let mut q = add(&format!("besteffort flows {opts}"));
        let mut b = Bench::new(1);
        b.keys[0].proto = 6;
        for (i, want) in drops_after.iter().enumerate() {
            let p = b.pkt(0, 52);
            {
                let pk = b.pkts.get_mut(p);
                pk.payload = 0;
                pk.ack = 1000 * (i as u64 + 1);
            }
            q.enqueue(p, &mut b.cx(), Nanos(1 + i as u64));
            assert_eq!(cake(&q).tins[0].st.ack_drops, *want, "{opts} after {}", i + 1);
        }
        assert!(q.stats().identity_holds());
        // The newest ACK always stays.
        let mut last = 0;
        while let Some(p) = q.dequeue(&mut b.cx(), Nanos(10)) {
            last = b.pkts.get(p).ack;
        }
        assert_eq!(last, 4000);
    }
    // A data segment is never filtered, and an ACK whose SACK the newer one does not cover
    // stays.
    let mut q = add("besteffort flows ack-filter-aggressive");
    let mut b = Bench::new(1);
    b.keys[0].proto = 6;
    let p = b.pkt(0, 52);
    {
        let pk = b.pkts.get_mut(p);
        pk.payload = 0;
        pk.ack = 1000;
        pk.sack = [500, 700, 0, 0, 0, 0];
    }
    q.enqueue(p, &mut b.cx(), Nanos(1));
    let p = b.pkt(0, 52);
    {
        let pk = b.pkts.get_mut(p);
        pk.payload = 0;
        pk.ack = 1100;
    }
    q.enqueue(p, &mut b.cx(), Nanos(2));
    assert_eq!(cake(&q).tins[0].st.ack_drops, 0);
}

#[test]
fn a_filter_overrides_the_flow_queue() {
    use crate::qdisc::classify::{FilterKind, ETH_P_ALL};
    let f = Filter {
        parent: Handle::new(1, 0),
        prio: 1,
        protocol: ETH_P_ALL,
        kind: FilterKind::MatchAll,
        classid: Handle::new(0, 7),
        line: 2,
        police: None,
    };
    let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: cake besteffort flows");
    d.filters = vec![f];
    let mut q = build_ok(d);
    let mut b = Bench::new(3);
    for fl in 0..3 {
        let p = b.pkt(fl, 100);
        q.enqueue(p, &mut b.cx(), Nanos(1));
    }
    // Every packet went to queue 6 (minor 7 - 1).
    assert_eq!(cake(&q).tins[0].flows[6].queue.len(), 3);
}

#[test]
fn statistics_print_as_tc_s_does() {
    let mut q = add("bandwidth 20Mbit");
    let mut b = Bench::new(1);
    let _ = shaped(&mut q, &mut b, &[cbr(0, 1, 2)], 2);
    let r = &q.reports()[0];
    let lines: Vec<&str> = r.xstats_text.lines().collect();
    assert_eq!(lines[0], " memory used: 2304b of 4Mb");
    assert_eq!(lines[1], " capacity estimate: 0bit");
    assert_eq!(lines[2], " min/max network layer size:         1514 /    1514");
    assert_eq!(lines[3], " min/max overhead-adjusted size:     1514 /    1514");
    // The header-offset EWMA (1/256 per packet, from 0) after n packets, rounded as tc shows it.
    let mut avg = 0u64;
    for _ in 0..q.stats().offered_packets {
        avg = ewma(avg, 14 << 16, 8);
    }
    assert_eq!(lines[4], format!(" average network hdr offset: {:>12}", (avg + 0x8000) >> 16));
    assert_eq!(lines[5], "");
    assert_eq!(lines[6], "                   Bulk  Best Effort        Voice");
    assert_eq!(lines[7], "  thresh       1250Kbit       20Mbit        5Mbit");
    assert_eq!(lines[8], "  target         14.5ms          5ms          5ms");
    assert_eq!(lines[9], "  interval        110ms        100ms        100ms");
    assert!(lines[13].starts_with("  backlog "));
    assert_eq!(lines[14], format!("  pkts    {:>13}{:>13}{:>13}", 0, q.stats().offered_packets, 0));
    assert_eq!(*lines.last().unwrap(), "  quantum           300          610          300");
    assert_eq!(lines.len(), 27);
    let x: std::collections::HashMap<_, _> = r.xstats.iter().cloned().collect();
    assert_eq!(x["tins.1.threshold_rate"], 2_500_000);
    assert_eq!(x["tins.0.flow_quantum"], 300);
    assert_eq!(x["memory_limit"], 4 << 20);
}

#[test]
fn active_queues_are_listed_as_classes_as_cake_walk_does() {
    // diffserv3 display order Bulk, Best Effort, Voice: a best-effort packet in queue q is class
    // 1:(1024 + q + 1), as the kernel showed `class cake 1:4fe parent 1:` for queue 253.
    let mut q = add("flows");
    assert!(q.reports()[0].classes.is_empty());
    let mut b = Bench::new(1);
    let p = b.pkt(0, 100);
    q.enqueue(p, &mut b.cx(), Nanos(1));
    let r = q.reports();
    assert_eq!(r[0].classes.len(), 1);
    let c = &r[0].classes[0];
    let queue = cake(&q).tins[0].flows.iter().position(|f| !f.queue.is_empty()).unwrap();
    assert_eq!(c.classid, Handle::new(1, (1024 + queue + 1) as u16));
    assert_eq!((c.parent, c.stats.qlen, c.stats.backlog_bytes), (Handle::new(1, 0), 1, 114));
    assert_eq!(
        crate::tc::show::class_show("eth0", &r, false),
        format!("class cake 1:{:x} parent 1: \n", 1024 + queue + 1)
    );
    // Sent and empty, the queue stays on the decaying list while its COBALT state is active
    // (drop_next doubles as an activity timeout, one interval): still a class, with no packet.
    // A dequeue of an empty cake returns at once, so only later traffic ages it off the list.
    q.dequeue(&mut b.cx(), Nanos(2));
    q.dequeue(&mut b.cx(), Nanos(3));
    let r = q.reports();
    assert_eq!((r[0].classes.len(), r[0].classes[0].stats.qlen), (1, 0));
}
