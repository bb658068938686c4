//! HTB tests (`net/sched/sch_htb.c` behaviour, `tc/q_htb.c` options): built through `build` from tc
//! command lines, driven on `run_link`.

use super::*;
use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
use crate::qdisc::testutil::{
    build, class as class_decl, errors, expect_built, handle, qdisc, run_link, Bench, LinkRun, Source,
};
use crate::qdisc::{Fifo, FifoKind, Graft};
use crate::tc::lex::Severity;

const MBIT: u64 = 1_000_000;

// --- building from tc-like text ----------------------------------------------------------

/// Column of the first option token of class `i` (line 2 + i) as `class_decl` lays it out:
/// `tc class add dev eth0 parent P classid C htb OPTS`.
fn class_opt_col(parent: &str, classid: &str) -> u32 {
    format!("tc class add dev eth0 parent {parent} classid {classid} htb ").len() as u32 + 1
}

/// Column of the qdisc options on line 1: `tc qdisc add dev eth0 root handle 1: htb OPTS`.
const QOPT_COL: u32 = "tc qdisc add dev eth0 root handle 1: htb ".len() as u32 + 1;

pub(super) type ClassLine = (&'static str, &'static str, &'static str);

fn build_htb(
    qopts: &str,
    classes: &[ClassLine],
    filters: Vec<Filter>,
    grafts: Vec<(&'static str, QdiscImpl)>,
) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    let mut d = qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: htb {qopts}"));
    d.classes = classes
        .iter()
        .enumerate()
        .map(|(i, &(p, c, o))| {
            class_decl(2 + i as u32, &format!("tc class add dev eth0 parent {p} classid {c} htb {o}"))
        })
        .collect();
    d.grafts = grafts
        .into_iter()
        .enumerate()
        .map(|(i, (c, q))| Graft { at: Tok { text: c, line: 50 + i as u32, col: 30 }, classid: handle(c), qdisc: q })
        .collect();
    d.filters = filters;
    build(d)
}

fn ok(r: (Option<QdiscImpl>, Vec<TcDiag>)) -> QdiscImpl {
    expect_built(r, "htb")
}

pub(super) fn htb(q: &QdiscImpl) -> &Htb {
    match q {
        QdiscImpl::Htb(h) => h,
        _ => panic!("not htb"),
    }
}

pub(super) fn class<'a>(q: &'a QdiscImpl, id: &str) -> &'a Class {
    let h = htb(q);
    &h.classes[h.find(handle(id).0).expect("class exists")]
}

/// u32 `match ip dst 192.168.1.(2+flow)/32` (the bench's destination of `flow`).
pub(super) fn dst(parent: &str, flow: u32, to: &str) -> Filter {
    Filter {
        parent: handle(parent),
        prio: 1,
        protocol: ETH_P_IP,
        kind: FilterKind::U32 { keys: vec![U32Key { off: 16, mask: 0xffff_ffff, val: 0xc0a8_0102 + flow }] },
        classid: handle(to),
        line: 40 + flow,
        police: None,
    }
}

fn matchall(parent: &str, to: &str) -> Filter {
    Filter {
        parent: handle(parent),
        prio: 100,
        protocol: ETH_P_IP,
        kind: FilterKind::MatchAll,
        classid: handle(to),
        line: 49,
        police: None,
    }
}

/// A saturating CBR source of 1514-byte frames.
fn sat(flow: u32, bps: u64) -> Source {
    Source { flow, rate_bps: bps, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(1000) }
}

pub(super) fn within(got: f64, want: f64, tol: f64, what: &str) {
    if std::env::var_os("HTB_SHOW").is_some() {
        eprintln!("{what}: got {got:.0} want {want:.0} ({:+.3}%)", (got - want) / want * 100.0);
    }
    let err = (got - want).abs() / want;
    assert!(err <= tol, "{what}: got {got:.0}, want {want:.0} (error {:.2}% > {:.1}%)", err * 100.0, tol * 100.0);
}

/// The identity at the qdisc, every class and every child qdisc, plus the tree sums.
pub(super) fn assert_identities(q: &QdiscImpl) {
    let reps = q.reports();
    let top = &reps[0];
    assert!(matches!(top.kind, "htb" | "whtb"), "{}", top.kind);
    assert!(top.stats.identity_holds(), "qdisc: {:?}", top.stats);
    for c in &top.classes {
        assert!(c.stats.identity_holds(), "class {}: {:?}", c.classid, c.stats);
    }
    for r in &reps[1..] {
        assert!(r.stats.identity_holds(), "child of {}: {:?}", r.parent, r.stats);
    }
    let h = htb(q);
    let mut held = 0;
    q.for_each_queued(&mut |_| held += 1);
    assert_eq!(held, top.stats.qlen, "for_each_queued sees every queued packet");
    // The qdisc's drops/queue are the direct queue's plus the leaves'.
    let leaves: Vec<_> = top.classes.iter().filter(|c| c.leaf.is_some()).collect();
    let leaf_drops: u64 = leaves.iter().map(|c| c.stats.drops).sum();
    let leaf_qlen: u64 = leaves.iter().map(|c| c.stats.qlen).sum();
    let leaf_sent: u64 = leaves.iter().map(|c| c.stats.sent_packets).sum();
    let stash = h.stash.is_some() as u64;
    assert_eq!(top.stats.qlen, leaf_qlen + h.direct.len() as u64 + stash);
    assert!(top.stats.drops >= leaf_drops);
    assert!(top.stats.sent_packets + stash >= leaf_sent);
    // Every inner class's sent count is its leaves' sum.
    for c in top.classes.iter().filter(|c| c.leaf.is_none()) {
        let i = h.find(c.classid.0).unwrap();
        let sum: u64 = top
            .classes
            .iter()
            .filter(|l| l.leaf.is_some() && h.is_under(h.find(l.classid.0).unwrap(), i))
            .map(|l| l.stats.sent_packets)
            .sum();
        assert_eq!(c.stats.sent_packets, sum, "inner class {} sent", c.classid);
    }
    // Qdisc overlimits are the classes' red transitions.
    let red: u64 = top.classes.iter().map(|c| c.stats.overlimits).sum();
    assert_eq!(top.stats.overlimits, red);
}

fn run(q: &mut QdiscImpl, flows: usize, sources: &[Source], link: u64, secs: u64, from: u64) -> (LinkRun, Bench) {
    let mut b = Bench::new(flows);
    let r = run_link(q, &mut b, sources, link, Nanos::from_secs(secs), Nanos::from_secs(from));
    (r, b)
}

// --- rates --------------------------------------------------------------------------------

#[test]
fn rate_guarantee_saturated_leaf_gets_its_rate() {
    let mut q = ok(build_htb(
        "default 10",
        &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 2mbit ceil 2mbit")],
        vec![],
        vec![],
    ));
    let (r, _) = run(&mut q, 1, &[sat(0, 5 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 2e6, 0.02, "leaf at rate 2mbit ceil 2mbit");
    assert_identities(&q);
}

#[test]
fn ceil_caps_a_lone_borrowing_leaf() {
    let mut q = ok(build_htb(
        "default 10",
        &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 1mbit ceil 3mbit")],
        vec![],
        vec![],
    ));
    let (r, _) = run(&mut q, 1, &[sat(0, 8 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 3e6, 0.02, "leaf at rate 1mbit ceil 3mbit alone");
    let leaf = class(&q, "1:10");
    assert!(leaf.borrows > 0, "it exceeds its rate by borrowing from 1:1");
    assert!(leaf.overlimits > 0, "hitting ceil turns it red");
    assert_identities(&q);
}

#[test]
fn excess_goes_to_the_lower_prio_first_up_to_its_ceil() {
    let filters = || vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")];
    // Parent 6mbit; both leaves rate 1mbit; prio 0 may take all the excess (ceil 6mbit).
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 6mbit"),
            ("1:1", "1:10", "rate 1mbit ceil 6mbit prio 0"),
            ("1:1", "1:20", "rate 1mbit ceil 6mbit prio 1"),
        ],
        filters(),
        vec![],
    ));
    let (r, _) = run(&mut q, 2, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 5e6, 0.02, "prio 0: rate + all 4 Mbit/s of excess");
    within(r.rate_bps(1, 3.0), 1e6, 0.03, "prio 1: its rate, no excess");
    assert_identities(&q);

    // Same, but prio 0 is capped at 3mbit: prio 1 gets the rest of the excess.
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 6mbit"),
            ("1:1", "1:10", "rate 1mbit ceil 3mbit prio 0"),
            ("1:1", "1:20", "rate 1mbit ceil 6mbit prio 1"),
        ],
        filters(),
        vec![],
    ));
    let (r, _) = run(&mut q, 2, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 3e6, 0.02, "prio 0 at its ceil");
    within(r.rate_bps(1, 3.0), 3e6, 0.03, "prio 1: rate + the excess prio 0 cannot take");
    assert_identities(&q);
}

#[test]
fn equal_prio_share_excess_by_quantum() {
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:10", "rate 1mbit ceil 10mbit quantum 1514"),
            ("1:1", "1:20", "rate 1mbit ceil 10mbit quantum 4542"),
        ],
        vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
        vec![],
    ));
    let (r, _) = run(&mut q, 2, &[sat(0, 20 * MBIT), sat(1, 20 * MBIT)], 100 * MBIT, 4, 1);
    let (a, b) = (r.rate_bps(0, 3.0), r.rate_bps(1, 3.0));
    within(a + b, 10e6, 0.02, "the parent's rate is used up");
    // Excess over the 1 Mbit/s guarantees splits 1:3 (2 and 6 Mbit/s).
    within((b - 1e6) / (a - 1e6), 3.0, 0.05, "excess ratio");
    within(a, 3e6, 0.05, "1:10 = 1 + 8/4");
    assert_identities(&q);
}

#[test]
fn drr_sends_first_then_checks_the_deficit() {
    // Two green leaves at level 0, quanta 1514 and 3028, 1514-byte packets: the kernel's
    // pattern is A B A B B A B B (B's first turn starts with a zero deficit).
    let mut q = ok(build_htb(
        "",
        &[("1:", "1:10", "rate 100mbit quantum 1514"), ("1:", "1:20", "rate 100mbit quantum 3028")],
        vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
        vec![],
    ));
    let mut b = Bench::new(2);
    for _ in 0..6 {
        for f in 0..2 {
            let p = b.pkt(f, 1500);
            assert_eq!(q.enqueue(p, &mut b.cx(), Nanos::ZERO), Enq::Queued);
        }
    }
    let mut order = vec![];
    for k in 0..9 {
        let p = q.dequeue(&mut b.cx(), Nanos::from_ms(2 * k)).expect("both classes stay green");
        order.push(b.pkts.get(p).flow);
    }
    assert_eq!(order, vec![0, 1, 0, 1, 1, 0, 1, 1, 0]);
    assert_eq!(class(&q, "1:10").lends + class(&q, "1:20").lends, 9, "all sent at level 0");
}

#[test]
fn valenzuela_two_stations_each_get_their_htb_rate() {
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:10", "rate 900kbit ceil 900kbit"),
            ("1:1", "1:20", "rate 2400kbit ceil 2400kbit"),
        ],
        vec![dst("1:", 0, "1:10"), dst("1:", 1, "1:20")],
        vec![],
    ));
    let (r, _) = run(&mut q, 2, &[sat(0, 3 * MBIT), sat(1, 3 * MBIT)], 11 * MBIT, 5, 1);
    within(r.rate_bps(0, 4.0), 900e3, 0.03, "station limited to 900kbit");
    within(r.rate_bps(1, 4.0), 2400e3, 0.03, "station limited to 2400kbit");
    assert_identities(&q);
}

#[test]
fn three_level_tree_shares_as_devera_describes() {
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:2", "rate 6mbit ceil 10mbit"),
            ("1:2", "1:21", "rate 2mbit ceil 10mbit"),
            ("1:2", "1:22", "rate 2mbit ceil 10mbit"),
            ("1:1", "1:3", "rate 4mbit ceil 10mbit"),
        ],
        vec![dst("1:", 0, "1:21"), dst("1:", 1, "1:22"), dst("1:", 2, "1:3")],
        vec![],
    ));
    assert_eq!(class(&q, "1:1").level, 7);
    assert_eq!(class(&q, "1:2").level, 6);
    for leaf in ["1:21", "1:22", "1:3"] {
        assert_eq!(class(&q, leaf).level, 0);
    }
    let (r, _) = run(&mut q, 3, &[sat(0, 10 * MBIT), sat(1, 10 * MBIT), sat(2, 10 * MBIT)], 100 * MBIT, 4, 1);
    // 1:2 lends its 2 spare Mbit/s to its two leaves; 1:3 keeps its 4.
    within(r.rate_bps(0, 3.0), 3e6, 0.03, "1:21");
    within(r.rate_bps(1, 3.0), 3e6, 0.03, "1:22");
    within(r.rate_bps(2, 3.0), 4e6, 0.03, "1:3");
    assert!(class(&q, "1:2").lends > 0 && class(&q, "1:21").borrows > 0);
    assert_identities(&q);
}

#[test]
fn drr_at_the_root_rotates_across_inner_classes() {
    // Both leaves borrow most of what they send from 1:1 (level 7), through the feeds of
    // two inner classes. Rotation at 1:1 depends on a wrapped lower feed advancing the
    // pointer above it (htb_lookup_leaf): they share the 8 Mbit/s excess equally.
    let mut q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 10mbit"),
            ("1:1", "1:2", "rate 1mbit ceil 10mbit"),
            ("1:1", "1:3", "rate 1mbit ceil 10mbit"),
            ("1:2", "1:21", "rate 500kbit ceil 10mbit quantum 1514"),
            ("1:3", "1:31", "rate 500kbit ceil 10mbit quantum 1514"),
        ],
        vec![dst("1:", 0, "1:21"), dst("1:", 1, "1:31")],
        vec![],
    ));
    let (r, _) = run(&mut q, 2, &[sat(0, 20 * MBIT), sat(1, 20 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 5e6, 0.02, "1:21");
    within(r.rate_bps(1, 3.0), 5e6, 0.02, "1:31");
    assert!(class(&q, "1:1").lends > class(&q, "1:2").lends, "most is lent by the root");
    assert_identities(&q);
}

#[test]
fn burst_after_idle_is_sent_at_ceil() {
    // A root-level leaf cannot borrow: after idle it sends its 30k burst at ceil (4 Mbit/s),
    // then its rate (1 Mbit/s). While tokens last, each 1514 B costs 12.112 ms of tokens and
    // 3.028 ms pass: the burst covers 30720 * 4/3 = 40960 bytes sent at ceil.
    let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 1mbit ceil 4mbit burst 30k")], vec![], vec![]));
    let mut src = sat(0, 8 * MBIT);
    src.start = Nanos::from_secs(1);
    let (r, _) = run(&mut q, 1, &[src], 100 * MBIT, 4, 2);
    let d = &r.departures;
    let gaps: Vec<u64> = d.windows(2).map(|w| (w[1].0 - w[0].0).0).collect();
    // Packets sent before the first gap longer than the ceil spacing: the burst.
    let burst_pkts = 1 + gaps.iter().take_while(|&&g| g < 4_000_000).count() as u64;
    let burst_bytes = burst_pkts * 1514;
    assert!(burst_bytes.abs_diff(40_960) <= 1514, "burst sent at ceil: {burst_bytes} bytes ({burst_pkts} packets)");
    // The source offers a frame every 1.514 ms and the 1600-byte ceil bucket absorbs the
    // first; from the fourth frame on they leave exactly every 3.028 ms (ceil), then every
    // 12.112 ms (rate).
    assert_eq!(&gaps[..3], &[1_514_000, 1_514_000, 2_856_000]);
    let at_ceil = &gaps[3..burst_pkts as usize - 1];
    assert!(at_ceil.len() >= 20 && at_ceil.iter().all(|&g| g == 3_028_000), "{at_ceil:?}");
    assert!(gaps[burst_pkts as usize..burst_pkts as usize + 20].iter().all(|&g| g == 12_112_000));
    within(r.rate_bps(0, 2.0), 1e6, 0.02, "after the burst: the rate");
    // Sent in the first second of activity: rate * 1 s + burst, within two packets.
    let first_s: u64 = d.iter().filter(|x| x.0 < Nanos::from_secs(2)).map(|x| x.2 as u64).sum();
    assert!((first_s as i64 - (125_000 + 30_720)).abs() <= 2 * 1514, "first second: {first_s} bytes");
}

// --- classification -----------------------------------------------------------------------

fn queued_in(q: &QdiscImpl, id: &str) -> u64 {
    class(q, id).leaf_stats.qlen
}

#[test]
fn default_class_takes_unclassified_traffic() {
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 10mbit"),
        ("1:1", "1:10", "rate 1mbit ceil 1mbit"),
        ("1:1", "1:20", "rate 2mbit ceil 2mbit"),
    ];
    let mut q = ok(build_htb("default 20", classes, vec![dst("1:", 0, "1:10")], vec![]));
    let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 5 * MBIT)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 1e6, 0.02, "filtered to 1:10");
    within(r.rate_bps(1, 3.0), 2e6, 0.02, "unclassified to default 1:20 (minor read as hex)");
    assert_eq!(htb(&q).direct_pkts, 0);
    assert!(q.reports()[0].options.starts_with("r2q 10 default 0x20 direct_packets_stat 0"));
    assert_identities(&q);

    // A default that is not a leaf (missing, or the inner 1:1) means the direct queue.
    for def in ["default 30", "default 1"] {
        let mut q = ok(build_htb(def, classes, vec![dst("1:", 0, "1:10")], vec![]));
        let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 5 * MBIT)], 100 * MBIT, 4, 1);
        within(r.rate_bps(1, 3.0), 5e6, 0.02, "direct traffic is not shaped");
        assert_eq!(htb(&q).direct_pkts as u64, r.departures.iter().filter(|d| d.1 == 1).count() as u64);
        assert_identities(&q);
    }
}

#[test]
fn unclassified_without_default_goes_to_the_direct_queue_first_and_unshaped() {
    let mut q = ok(build_htb("", &[("1:", "1:10", "rate 1mbit")], vec![dst("1:", 0, "1:10")], vec![]));
    let (r, _) = run(&mut q, 2, &[sat(0, 5 * MBIT), sat(1, 3 * MBIT)], 10 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 1e6, 0.02, "shaped class");
    within(r.rate_bps(1, 3.0), 3e6, 0.01, "unclassified: all it offers");
    let sent_direct = r.departures.iter().filter(|d| d.1 == 1).count() as u32;
    assert_eq!(htb(&q).direct_pkts, sent_direct, "direct_packets_stat");
    assert_identities(&q);

    // Served before a green class, and limited by direct_qlen.
    let mut q = ok(build_htb("direct_qlen 3", &[("1:", "1:10", "rate 100mbit")], vec![dst("1:", 0, "1:10")], vec![]));
    let mut b = Bench::new(2);
    let shaped = b.pkt(0, 1500);
    assert_eq!(q.enqueue(shaped, &mut b.cx(), Nanos::ZERO), Enq::Queued);
    let res: Vec<Enq> = (0..5)
        .map(|_| {
            let p = b.pkt(1, 1500);
            q.enqueue(p, &mut b.cx(), Nanos::ZERO)
        })
        .collect();
    assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Queued, Enq::Dropped, Enq::Dropped]);
    let flows: Vec<u32> = (0..4)
        .map(|_| {
            let p = q.dequeue(&mut b.cx(), Nanos::ZERO).unwrap();
            b.pkts.get(p).flow
        })
        .collect();
    assert_eq!(flows, vec![1, 1, 1, 0], "direct queue first");
    let s = q.stats();
    assert_eq!((s.offered_packets, s.sent_packets, s.drops, s.qlen), (6, 4, 2, 0));
    assert_eq!(htb(&q).direct_pkts, 3);
    assert!(q.reports()[0].options.ends_with("direct_packets_stat 3 direct_qlen 3"));
}

#[test]
fn skb_priority_selects_a_class_directly() {
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 10mbit"),
        ("1:1", "1:10", "rate 1mbit"),
        ("1:1", "1:20", "rate 1mbit"),
        ("1:1", "1:30", "rate 1mbit"),
    ];
    let mut q = ok(build_htb("", classes, vec![matchall("1:", "1:10"), matchall("1:1", "1:30")], vec![]));
    let mut b = Bench::new(4);
    b.keys[1].priority = 0x1_0020; // leaf 1:20: bypasses the filters
    b.keys[2].priority = 0x1_0000; // the qdisc itself: direct queue
    b.keys[3].priority = 0x1_0001; // inner 1:1: its filters (matchall -> 1:30)
    for f in 0..4 {
        let p = b.pkt(f, 500);
        assert_eq!(q.enqueue(p, &mut b.cx(), Nanos::ZERO), Enq::Queued);
    }
    assert_eq!(queued_in(&q, "1:10"), 1, "priority 0: the qdisc's filters");
    assert_eq!(queued_in(&q, "1:20"), 1);
    assert_eq!(queued_in(&q, "1:30"), 1);
    assert_eq!(htb(&q).direct.len(), 1);
    assert_eq!(htb(&q).direct_pkts, 1);
}

#[test]
fn filter_at_an_inner_class_descends_to_a_leaf() {
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 10mbit"),
        ("1:1", "1:2", "rate 5mbit"),
        ("1:2", "1:21", "rate 1mbit"),
        ("1:2", "1:22", "rate 1mbit"),
        ("1:1", "1:10", "rate 1mbit"),
    ];
    let filters = vec![
        dst("1:", 0, "1:2"), // to an inner class: continue with 1:2's filters
        dst("1:2", 0, "1:22"),
        dst("1:", 1, "1:1"),  // inner class without filters: default
        dst("1:", 2, "1:99"), // no such class: default
    ];
    let (q, diags) = build_htb("default 10", classes, filters, vec![]);
    let mut q = ok((q, diags));
    let mut b = Bench::new(3);
    for f in 0..3 {
        let p = b.pkt(f, 500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    }
    assert_eq!(queued_in(&q, "1:22"), 1);
    assert_eq!(queued_in(&q, "1:21"), 0);
    assert_eq!(queued_in(&q, "1:10"), 2);
}

#[test]
fn filters_on_leaves_and_unknown_parents_are_reported() {
    let classes: &[ClassLine] = &[("1:", "1:10", "rate 1mbit")];
    let (q, d) = build_htb("", classes, vec![dst("1:10", 0, "1:10")], vec![]);
    assert!(q.is_some());
    assert!(d.iter().any(|x| x.severity == Severity::Warning && x.message.contains("never consulted")), "{d:?}");
    let (q, d) = build_htb("", classes, vec![dst("1:7", 0, "1:10")], vec![]);
    assert!(q.is_none());
    assert!(d.iter().any(|x| x.severity == Severity::Error && x.line == 40 && x.message.contains("1:7")), "{d:?}");
}

// --- accounting ---------------------------------------------------------------------------

#[test]
fn stats_identity_holds_at_every_class_and_the_qdisc() {
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 8mbit"),
        ("1:1", "1:10", "rate 1mbit ceil 2mbit"),
        ("1:1", "1:20", "rate 2mbit ceil 8mbit"),
        ("1:", "1:30", "rate 500kbit"),
    ];
    let small = QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, 5, Handle::new(0x10, 0), Handle::new(1, 0x10)));
    let mut q = ok(build_htb(
        "default 20 direct_qlen 2",
        classes,
        vec![dst("1:", 0, "1:10"), dst("1:", 3, "1:30")],
        vec![("1:10", small)],
    ));
    let mut b = Bench::new(4);
    b.keys[2].priority = 0x1_0000; // direct
                                   // The direct flow overloads the link for 200 ms (direct_qlen 2 drops), the pfifo of 5 on
                                   // 1:10 overflows; queues still hold packets when the run stops.
    let mut direct = sat(2, 12 * MBIT);
    direct.stop = Nanos::from_ms(200);
    let sources = [sat(0, 5 * MBIT), sat(1, 9 * MBIT), direct, sat(3, MBIT)];
    let r = run_link(&mut q, &mut b, &sources, 10 * MBIT, Nanos::from_ms(700), Nanos::ZERO);
    assert!(r.drops[0] > 0 && r.drops[2] > 0, "drops: {:?}", r.drops);
    assert!(q.stats().qlen > 0);
    assert_eq!(q.stats().drops, r.drops.iter().sum::<u64>());
    assert_identities(&q);
    // Drain it.
    let mut t = Nanos::from_ms(700);
    while q.stats().qlen > 0 {
        if let Some(p) = q.dequeue(&mut b.cx(), t) {
            b.pkts.free(p);
        }
        t += Nanos::from_us(500);
        assert!(t < Nanos::from_secs(60));
    }
    assert_identities(&q);
    let reps = q.reports();
    assert_eq!(reps.len(), 1 + 3, "htb and the three leaves' children");
    assert_eq!(reps[1].parent, handle("1:10"));
    assert_eq!(reps[1].handle, Handle::new(0x10, 0));
    assert_eq!(reps[0].classes.iter().find(|c| c.classid == handle("1:10")).unwrap().leaf, Some(Handle::new(0x10, 0)));
    assert_eq!(reps[0].classes[0].parent, Handle::ROOT, "1:1 is a root class");
    assert!(q.stats().drops > 0 && q.stats().overlimits > 0);
}

#[test]
fn tokens_and_options_are_reported_as_tc_prints_them() {
    // §14.5: rate 4mbit, default burst 1600 B -> 50 000 ticks = 3.2 ms.
    let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 4mbit")], vec![], vec![]));
    assert_eq!(class(&q, "1:10").buffer, 3_200_000);
    let rep = q.reports();
    let c = &rep[0].classes[0];
    assert_eq!(c.options, "prio 0 rate 4Mbit ceil 4Mbit burst 1600b cburst 1600b");
    assert_eq!(c.xstats_text, " lended: 0 borrowed: 0 giants: 0\n tokens: 50000 ctokens: 50000");
    assert_eq!(rep[0].options, "r2q 10 default 0x10 direct_packets_stat 0 direct_qlen 1000");
    // One 1514-byte frame at t = 0: 3 028 000 ns of tokens (§14.2); 172 000 ns left = 2687 ticks.
    let mut b = Bench::new(1);
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), Some(p));
    assert_eq!(class(&q, "1:10").tokens, 172_000);
    let c = &q.reports()[0].classes[0];
    assert_eq!(c.xstats_text, " lended: 1 borrowed: 0 giants: 0\n tokens: 2687 ctokens: 2687");
    assert!(c.xstats.contains(&("tokens".to_string(), 2687)));

    // Printing of other rates and sizes.
    let q = ok(build_htb(
        "",
        &[
            ("1:", "1:1", "rate 1500kbit ceil 2400kbit burst 15k cburst 1mb"),
            ("1:1", "1:10", "rate 900kbit prio 3 overhead 24"),
        ],
        vec![],
        vec![],
    ));
    let rep = q.reports();
    assert_eq!(rep[0].classes[0].options, "rate 1500Kbit ceil 2400Kbit burst 15Kb cburst 1Mb");
    assert_eq!(rep[0].classes[1].options, "prio 3 rate 900Kbit overhead 24 ceil 900Kbit burst 1600b cburst 1600b");
    assert_eq!(rep[0].options, "r2q 10 default 0 direct_packets_stat 0 direct_qlen 1000");
}

#[test]
fn charge_class_borrowing_matches_the_worked_example() {
    // §14.6: leaf L (rate 1mbit ceil 4mbit) under root R (rate = ceil = 4mbit). Sending a
    // 1514-byte frame every 4 ms (3 Mbit/s) makes L yellow while R stays green; a packet
    // served through R: L.borrows++, L.tokens only advanced, L.ctokens -= l2t(4mbit);
    // R.lends++, R.tokens and R.ctokens -= l2t(4mbit) = 3 028 000 ns.
    let mut q = ok(build_htb(
        "default 10",
        &[("1:", "1:1", "rate 4mbit"), ("1:1", "1:10", "rate 1mbit ceil 4mbit")],
        vec![],
        vec![],
    ));
    let mut b = Bench::new(1);
    for _ in 0..20 {
        let p = b.pkt(0, 1500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    }
    let mut checked = 0;
    for k in 0..20u64 {
        let now = Nanos::from_ms(4 * k);
        let h = htb(&q);
        let (li, ri) = (h.find(0x1_0010).unwrap(), h.find(0x1_0001).unwrap());
        let (l0, r0) = (snapshot(&h.classes[li]), snapshot(&h.classes[ri]));
        assert!(q.dequeue(&mut b.cx(), now).is_some(), "R stays green");
        let h = htb(&q);
        let (l, r) = (&h.classes[li], &h.classes[ri]);
        let t = now.0 as i64;
        if l.borrows > l0.borrows {
            assert_eq!(l.lends, l0.lends);
            assert_eq!(l.tokens, l0.tokens + (t - l0.t_c), "no rate charge for the borrower");
            assert_eq!(l.ctokens, (l0.ctokens + t - l0.t_c).min(l.cbuffer) - 3_028_000);
            assert_eq!(r.lends, r0.lends + 1);
            assert_eq!(r.tokens, (r0.tokens + t - r0.t_c).min(r.buffer) - 3_028_000);
            assert_eq!(r.ctokens, (r0.ctokens + t - r0.t_c).min(r.cbuffer) - 3_028_000);
            checked += 1;
        } else {
            // Served at level 0 by its own rate: charged 12 112 000 ns at 1mbit.
            assert_eq!(l.lends, l0.lends + 1);
            assert_eq!(l.tokens, (l0.tokens + t - l0.t_c).min(l.buffer) - 12_112_000);
            assert_eq!(r.lends, r0.lends, "R is not the lender at level 0");
            assert_eq!(r.tokens, (r0.tokens + t - r0.t_c).min(r.buffer) - 3_028_000, "R still pays its rate");
        }
        assert_eq!(l.t_c, t);
    }
    assert!(checked >= 8, "most packets were borrowed: {checked}");
    assert_eq!(class(&q, "1:1").packets, 20);
}

struct Snap {
    tokens: i64,
    ctokens: i64,
    t_c: i64,
    lends: u32,
    borrows: u32,
}

fn snapshot(c: &Class) -> Snap {
    Snap { tokens: c.tokens, ctokens: c.ctokens, t_c: c.t_c, lends: c.lends, borrows: c.borrows }
}

#[test]
fn watchdog_is_armed_at_the_mode_change() {
    // rate = ceil = 1mbit, burst 1600 B = 12.8 ms; each frame costs 12.112 ms: two go at
    // t = 0, the class is then red for 11.424 ms.
    let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 1mbit")], vec![], vec![]));
    let mut b = Bench::new(1);
    for _ in 0..3 {
        let p = b.pkt(0, 1500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    }
    assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
    assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
    assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), None);
    assert_eq!(q.next_wakeup(Nanos::ZERO), Some(Nanos(11_424_000)));
    assert_eq!(class(&q, "1:10").overlimits, 1, "one red transition");
    assert_eq!(q.stats().overlimits, 1);
    assert_eq!(q.dequeue(&mut b.cx(), Nanos(11_423_999)), None);
    assert!(q.dequeue(&mut b.cx(), Nanos(11_424_000)).is_some());
    assert_eq!(q.next_wakeup(Nanos(11_424_000)), None, "empty");
}

#[test]
fn peek_stashes_the_packet_dequeue_returns() {
    let mut q = ok(build_htb("default 10", &[("1:", "1:10", "rate 10mbit")], vec![], vec![]));
    let mut b = Bench::new(1);
    let ids: Vec<_> = (0..3).map(|_| b.pkt(0, 1000)).collect();
    for &p in &ids {
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    }
    assert_eq!(q.peek(&mut b.cx(), Nanos::ZERO), Some(ids[0]));
    assert_eq!(q.peek(&mut b.cx(), Nanos::ZERO), Some(ids[0]));
    assert_eq!(q.stats().qlen, 3);
    assert_identities(&q);
    assert_eq!(q.dequeue(&mut b.cx(), Nanos(5)), Some(ids[0]));
    assert_eq!(q.dequeue(&mut b.cx(), Nanos(5)), Some(ids[1]));
    assert_eq!((q.stats().sent_packets, q.stats().qlen), (2, 1));
    assert_identities(&q);
}

// --- options ------------------------------------------------------------------------------

#[test]
fn option_errors_name_the_token_and_position() {
    // Missing rate: at the end of the class line.
    let o = "ceil 2mbit";
    let (q, d) = build_htb("", &[("1:", "1:10", o)], vec![], vec![]);
    assert!(q.is_none());
    let e = errors(&d);
    assert_eq!(e.len(), 1, "{d:?}");
    assert_eq!((e[0].line, e[0].col, e[0].token.as_str()), (2, class_opt_col("1:", "1:10") + o.len() as u32, ""));
    assert!(e[0].message.contains("\"rate\" is required"));

    // Unknown class option.
    let (q, d) = build_htb("", &[("1:", "1:10", "rate 1mbit bogus 3")], vec![], vec![]);
    assert!(q.is_none());
    let e = errors(&d);
    assert_eq!((e[0].line, e[0].col, e[0].token.as_str()), (2, class_opt_col("1:", "1:10") + 11, "bogus"));
    assert!(e[0].message.contains("unknown htb class option \"bogus\"") && e[0].message.contains("cburst"), "{}", e[0]);

    // Bad value.
    let (q, d) = build_htb("", &[("1:", "1:10", "rate 1mbyte")], vec![], vec![]);
    assert!(q.is_none());
    let e = errors(&d);
    assert_eq!((e[0].col, e[0].token.as_str()), (class_opt_col("1:", "1:10") + 5, "1mbyte"));
    // Missing value.
    let (_, d) = build_htb("", &[("1:", "1:10", "rate")], vec![], vec![]);
    assert!(errors(&d)[0].message.contains("needs a value"));
    // Double rate.
    let (_, d) = build_htb("", &[("1:", "1:10", "rate 1mbit rate 2mbit")], vec![], vec![]);
    assert_eq!(errors(&d)[0].col, class_opt_col("1:", "1:10") + 11);
    assert!(errors(&d)[0].message.contains("Double \"rate\" spec"));

    // Qdisc options: unknown, bad hex, and tc's prefix matching ("d" = default).
    let (q, d) = build_htb("default 10 wibble", &[], vec![], vec![]);
    assert!(q.is_none());
    assert_eq!((errors(&d)[0].line, errors(&d)[0].col), (1, QOPT_COL + 11));
    assert!(errors(&d)[0].message.contains("expected one of: default, r2q, direct_qlen"));
    let (q, d) = build_htb("default zz", &[], vec![], vec![]);
    assert!(q.is_none());
    assert_eq!((errors(&d)[0].col, errors(&d)[0].token.as_str()), (QOPT_COL + 8, "zz"));
    let q = ok(build_htb("d 1a r2q 0 direct_qlen 7", &[], vec![], vec![]));
    assert_eq!((htb(&q).defcls, htb(&q).r2q, htb(&q).direct_qlen), (0x1a, 1, 7));

    // Not modelled options are warnings.
    let (q, d) = build_htb("offload", &[], vec![], vec![]);
    assert!(q.is_some());
    assert!(d[0].severity == Severity::Warning && d[0].message.contains("not modelled"));

    // Class ids of another qdisc.
    let (q, d) = build_htb("", &[("1:", "2:10", "rate 1mbit")], vec![], vec![]);
    assert!(q.is_none());
    assert_eq!(errors(&d)[0].token, "2:10");
}

#[test]
fn quantum_defaults_and_warnings_follow_r2q() {
    // §14.4, r2q 10.
    let (q, d) = build_htb(
        "",
        &[
            ("1:", "1:10", "rate 4mbit"),
            ("1:", "1:20", "rate 64kbit"),
            ("1:", "1:30", "rate 100mbit"),
            ("1:", "1:40", "rate 100mbit quantum 1514"),
            ("1:", "1:50", "rate 1mbit prio 9"),
        ],
        vec![],
        vec![],
    );
    let q = q.unwrap();
    assert_eq!(class(&q, "1:10").quantum, 50_000);
    assert_eq!(class(&q, "1:20").quantum, 1000);
    assert_eq!(class(&q, "1:30").quantum, 200_000);
    assert_eq!(class(&q, "1:40").quantum, 1514);
    assert_eq!(class(&q, "1:50").prio, 7, "prio clamped to 7");
    let w: Vec<&TcDiag> = d.iter().filter(|x| x.severity == Severity::Warning).collect();
    assert_eq!(w.len(), 3, "{d:?}");
    assert!(w[0].message.starts_with("quantum of class 10020 is small. Consider r2q change.") && w[0].line == 3);
    assert!(w[1].message.starts_with("quantum of class 10030 is big. Consider r2q change.") && w[1].line == 4);
    assert!(w[2].message.contains("prio 9") && w[2].line == 6);
    // r2q 100: 100mbit -> 125 000 bytes, no warning.
    let (q, d) = build_htb("r2q 100", &[("1:", "1:10", "rate 100mbit")], vec![], vec![]);
    assert_eq!(class(&q.unwrap(), "1:10").quantum, 125_000);
    assert!(d.is_empty());
}

#[test]
fn tree_depth_is_limited_to_eight_levels() {
    let chain: Vec<ClassLine> = vec![
        ("1:", "1:1", "rate 1mbit"),
        ("1:1", "1:2", "rate 1mbit"),
        ("1:2", "1:3", "rate 1mbit"),
        ("1:3", "1:4", "rate 1mbit"),
        ("1:4", "1:5", "rate 1mbit"),
        ("1:5", "1:6", "rate 1mbit"),
        ("1:6", "1:7", "rate 1mbit"),
        ("1:7", "1:8", "rate 1mbit"),
    ];
    let q = ok(build_htb("", &chain, vec![], vec![]));
    for (i, id) in ["1:1", "1:2", "1:3", "1:4", "1:5", "1:6", "1:7", "1:8"].iter().enumerate() {
        assert_eq!(class(&q, id).level, if i == 7 { 0 } else { 7 - i }, "{id}");
    }
    let mut deep = chain.clone();
    deep.push(("1:8", "1:9", "rate 1mbit"));
    let (q, d) = build_htb("", &deep, vec![], vec![]);
    assert!(q.is_none());
    let e = errors(&d);
    assert_eq!((e[0].line, e[0].token.as_str()), (10, "1:9"));
    assert!(e[0].message.contains("tree is too deep"));
}

#[test]
fn grafts_replace_leaf_queues_only() {
    let classes: &[ClassLine] = &[("1:", "1:1", "rate 10mbit"), ("1:1", "1:10", "rate 1mbit")];
    let fifo = || QdiscImpl::Fifo(Fifo::new(FifoKind::Pfifo, 5, Handle::new(0x20, 0), Handle::new(1, 1)));
    let (q, d) = build_htb("", classes, vec![], vec![("1:1", fifo())]);
    assert!(q.is_none());
    assert_eq!((errors(&d)[0].line, errors(&d)[0].token.as_str()), (50, "1:1"));
    assert!(errors(&d)[0].message.contains("inner class"));
    let (q, d) = build_htb("", classes, vec![], vec![("1:77", fifo())]);
    assert!(q.is_none());
    assert!(errors(&d)[0].message.contains("no class 1:77"));
    let q = ok(build_htb("", classes, vec![], vec![("1:10", fifo())]));
    assert_eq!(q.reports()[1].options, "limit 5p");
    assert!(class(&q, "1:1").child.is_none(), "inner classes have no queue");
}

#[test]
fn l2t_uses_the_kernels_mult_and_shift() {
    let r = RateCfg::new(500_000, 0, 0, false);
    assert_eq!((r.mult, r.shift), (4_194_304_000, 21));
    assert_eq!(r.l2t(1514), 3_028_000);
    // 900kbit = 112 500 B/s: within 1 ns of the exact 13 457 777.8 ns, never above it.
    let r = RateCfg::new(112_500, 0, 0, false);
    let t = r.l2t(1514);
    assert!((13_457_776..=13_457_777).contains(&t), "{t}");
    // overhead, mpu and the ATM cell tax.
    assert_eq!(RateCfg::new(500_000, 10, 0, false).l2t(1514), 3_048_000);
    assert_eq!(RateCfg::new(500_000, 0, 100, false).l2t(60), 200_000);
    assert_eq!(RateCfg::new(500_000, 0, 0, true).l2t(100), 3 * 53 * 2000);
}
