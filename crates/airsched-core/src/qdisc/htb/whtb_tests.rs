//! whtb (Garroppo et al.'s Wireless HTB): the stretched length charged to deficits and buckets,
//! its cap at the quantum, the §6.3 gate and its counter, the options. Expectations are exact
//! where the DRR order or the token arithmetic is computable, and within a tolerance for rates.

use super::tests::{assert_identities, class, htb, within, ClassLine};
use super::*;
use crate::qdisc::testutil::{
    ab_order, build, build_opts_ok, class as class_decl, errors, expect_built, handle, qdisc, run_link, warnings,
    Bench, LinkRun, Source,
};
use crate::qdisc::{Graft, REL_ONE};

const MBIT: u64 = 1_000_000;

/// Relative goodput 0.3, below a 50 % gate.
const REL_03: u32 = (REL_ONE as u64 * 3 / 10) as u32;

/// `tc qdisc add dev eth0 root handle 1: KIND QOPTS` on line 1, then one class line each (class
/// kind = the qdisc's).
fn build_kind(
    kind: &str,
    qopts: &str,
    classes: &[ClassLine],
    filters: Vec<Filter>,
) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    let mut d = qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: {kind} {qopts}"));
    d.classes = classes
        .iter()
        .enumerate()
        .map(|(i, &(p, c, o))| {
            class_decl(2 + i as u32, &format!("tc class add dev eth0 parent {p} classid {c} {kind} {o}"))
        })
        .collect();
    d.filters = filters;
    build(d)
}

fn ok(kind: &str, qopts: &str, classes: &[ClassLine], filters: Vec<Filter>) -> QdiscImpl {
    expect_built(build_kind(kind, qopts, classes, filters), kind)
}

/// u32 `match ip dst 192.168.1.(2+flow)/32` at the qdisc.
fn dst(flow: u32, to: &str) -> Filter {
    super::tests::dst("1:", flow, to)
}

fn two_leaves() -> Vec<Filter> {
    vec![dst(0, "1:10"), dst(1, "1:20")]
}

fn sat(flow: u32, bps: u64, ip_len: u32) -> Source {
    Source { flow, rate_bps: bps, ip_len, start: Nanos::ZERO, stop: Nanos::from_secs(1000) }
}

/// Run `q` with per-flow relative goodputs `chan`.
fn run_chan(q: &mut QdiscImpl, chan: &[u32], sources: &[Source], link: u64, secs: u64, from: u64) -> LinkRun {
    let mut b = Bench::new(chan.len());
    b.chan = chan.to_vec();
    run_link(q, &mut b, sources, link, Nanos::from_secs(secs), Nanos::from_secs(from))
}

/// Leaves always green (rate far above the link, 1 MB buckets): HTB is DRR (paper §3).
const DRR_LEAF: &str = "rate 100mbit ceil 100mbit burst 1mb cburst 1mb";

fn drr_leaves(qa: u32, qb: u32) -> [(&'static str, &'static str, String); 2] {
    [("1:", "1:10", format!("{DRR_LEAF} quantum {qa}")), ("1:", "1:20", format!("{DRR_LEAF} quantum {qb}"))]
}

fn ok_drr(qopts: &str, qa: u32, qb: u32) -> QdiscImpl {
    let l = drr_leaves(qa, qb);
    let leak = |s: &String| -> &'static str { Box::leak(s.clone().into_boxed_str()) };
    let classes: Vec<ClassLine> = l.iter().map(|(p, c, o)| (*p, *c, leak(o))).collect();
    ok("whtb", qopts, &classes, two_leaves())
}

/// `na` packets of flow 0 and `nb` of flow 1 (1514 bytes each) queued at t = 0.
fn fill(q: &mut QdiscImpl, b: &mut Bench, na: usize, nb: usize) {
    for (flow, n) in [(0, na), (1, nb)] {
        for _ in 0..n {
            let p = b.pkt(flow, 1500);
            assert_eq!(q.enqueue(p, &mut b.cx(), Nanos::ZERO), Enq::Queued);
        }
    }
}

// --- a perfect channel ----------------------------------------------------------------------

#[test]
fn with_a_perfect_channel_whtb_dequeues_exactly_as_htb() {
    // Borrowing, two prios, a root-level leaf, three packet sizes, flows starting and stopping.
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 10mbit"),
        ("1:1", "1:10", "rate 2mbit ceil 6mbit prio 0 quantum 3000"),
        ("1:1", "1:20", "rate 3mbit ceil 10mbit prio 1"),
        ("1:1", "1:30", "rate 1mbit ceil 10mbit prio 1 quantum 1514"),
        ("1:", "1:40", "rate 500kbit ceil 2mbit"),
    ];
    let filters = || vec![dst(0, "1:10"), dst(1, "1:20"), dst(2, "1:30"), dst(3, "1:40")];
    let mut burst = sat(2, 3 * MBIT, 200);
    burst.start = Nanos::from_ms(500);
    burst.stop = Nanos::from_ms(2500);
    let sources = [sat(0, 4 * MBIT, 1500), sat(1, 6 * MBIT, 600), burst, sat(3, 3 * MBIT, 1000)];
    let chan = [REL_ONE; 4];
    let mut plain = ok("htb", "", classes, filters());
    let want = run_chan(&mut plain, &chan, &sources, 12 * MBIT, 4, 0);
    assert!(want.departures.len() > 5000, "a long run: {}", want.departures.len());
    for qopts in ["", "gate 50% gate_skip 2"] {
        let mut w = ok("whtb", qopts, classes, filters());
        let got = run_chan(&mut w, &chan, &sources, 12 * MBIT, 4, 0);
        assert_eq!(got.departures.len(), want.departures.len(), "whtb {qopts}");
        for (i, (g, e)) in got.departures.iter().zip(&want.departures).enumerate() {
            assert_eq!(g, e, "whtb {qopts}: departure {i} differs");
        }
        assert_eq!(got.drops, want.drops);
        let (rw, rp) = (w.reports(), plain.reports());
        assert_eq!(rw[0].stats, rp[0].stats);
        for (cw, cp) in rw[0].classes.iter().zip(&rp[0].classes) {
            assert_eq!(cw.stats, cp.stats, "class {}", cw.classid);
            assert_eq!(cw.xstats[..5], cp.xstats[..5], "class {}: lended, borrowed, giants, tokens", cw.classid);
            assert_eq!(cw.kind, "whtb");
            // Nothing stretched: charged = sent.
            assert!(cw.xstats.contains(&("charged_bytes".to_string(), cw.stats.sent_bytes as i64)), "{:?}", cw.xstats);
        }
        assert!(rw[0].classes.iter().all(|c| c.xstats.contains(&("gated".to_string(), 0))));
    }
    // The comparison is not vacuous: a worse channel towards flow 1 changes the schedule.
    let mut w = ok("whtb", "", classes, filters());
    let got = run_chan(&mut w, &[REL_ONE, REL_ONE / 2, REL_ONE, REL_ONE], &sources, 12 * MBIT, 4, 0);
    assert_ne!(got.departures, want.departures);
}

// --- the stretched length -------------------------------------------------------------------

#[test]
fn stretched_length_is_len_over_rel_capped_at_the_quantum_never_below_len() {
    assert_eq!(wireless::stretched(1514, REL_ONE, 20_000), 1514);
    assert_eq!(wireless::stretched(1514, 2 * REL_ONE, 20_000), 1514, "never shorter than len");
    assert_eq!(wireless::stretched(1514, REL_ONE / 4, 20_000), 6056);
    assert_eq!(wireless::stretched(1514, REL_ONE / 2, 20_000), 3028);
    assert_eq!(wireless::stretched(1514, REL_03, 20_000), 1514 * 65536 / REL_03); // 5046
    assert_eq!(wireless::stretched(1514, REL_ONE / 4, 3000), 3000, "capped at the quantum");
    assert_eq!(wireless::stretched(1514, 1, 200_000), 200_000);
    assert_eq!(wireless::stretched(1514, 0, 200_000), 200_000, "rel 0 is taken as 1/65536");
    assert_eq!(wireless::stretched(1514, REL_ONE / 2, 1000), 1514, "a quantum below len does not shorten it");
}

#[test]
fn a_quarter_goodput_charges_four_times_the_deficit_and_the_tokens() {
    // Leaf rate 4mbit (buffer 3.2 ms), ceil 8mbit (cbuffer 1600 B at 1 MB/s = 1.6 ms), under a
    // root class of 8mbit (buffer 1.6 ms). One 1514-byte frame at t = 0 towards a destination
    // with rel = 1/4 is charged as 6056 bytes: 12.112 ms at 4mbit, 6.056 ms at 8mbit.
    let classes: &[ClassLine] = &[("1:", "1:1", "rate 8mbit"), ("1:1", "1:10", "rate 4mbit ceil 8mbit quantum 20000")];
    for (kind, rel, charged) in [("whtb", REL_ONE / 4, 6056i64), ("htb", REL_ONE / 4, 1514), ("whtb", REL_ONE, 1514)] {
        let mut q = ok(kind, "default 10", classes, vec![]);
        let mut b = Bench::new(1);
        b.chan[0] = rel;
        let p = b.pkt(0, 1500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), Some(p));
        let (leaf, root) = (class(&q, "1:10"), class(&q, "1:1"));
        let what = format!("{kind} rel {rel}");
        assert_eq!(leaf.deficit[0], 20_000 - charged, "{what}: deficit");
        assert_eq!(leaf.tokens, 3_200_000 - charged * 2000, "{what}: leaf tokens at 4mbit (2000 ns/B)");
        assert_eq!(leaf.ctokens, 1_600_000 - charged * 1000, "{what}: leaf ctokens at 8mbit");
        assert_eq!(root.tokens, 1_600_000 - charged * 1000, "{what}: the ancestor pays the stretched length too");
        assert_eq!(root.ctokens, 1_600_000 - charged * 1000, "{what}");
        assert_eq!((leaf.charged, root.charged), (charged as u64, charged as u64), "{what}: charged xstat");
        // Sent counts the real length.
        assert_eq!((leaf.leaf_stats.sent_bytes, root.bytes, q.stats().sent_bytes), (1514, 1514, 1514), "{what}");
    }
}

#[test]
fn a_shaped_leaf_sends_rate_times_rel_of_real_bytes() {
    // Two leaves rate = ceil = 2mbit on a 100 Mbit/s link, both saturated; rel 1/4 towards
    // flow 1. Leaf 2's stretched bytes per second equal its rate: it delivers 0.5 Mbit/s.
    let classes: &[ClassLine] = &[("1:", "1:10", "rate 2mbit ceil 2mbit"), ("1:", "1:20", "rate 2mbit ceil 2mbit")];
    let mut q = ok("whtb", "", classes, two_leaves());
    let r =
        run_chan(&mut q, &[REL_ONE, REL_ONE / 4], &[sat(0, 5 * MBIT, 1500), sat(1, 5 * MBIT, 1500)], 100 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 2e6, 0.02, "perfect channel: its rate");
    within(r.rate_bps(1, 3.0), 0.5e6, 0.02, "rel 1/4: a quarter of its rate");
    // Quantum 25000 > 6056: nothing capped, every byte charged 4 times.
    let l2 = class(&q, "1:20");
    assert_eq!(l2.charged, 4 * l2.leaf_stats.sent_bytes);
    let l1 = class(&q, "1:10");
    assert_eq!(l1.charged, l1.leaf_stats.sent_bytes);
    assert_identities(&q);
}

#[test]
fn drr_turns_follow_the_stretched_lengths() {
    // Paper §3: green leaves, the link the bottleneck: HTB is DRR. Quanta 6056; flow 1 at
    // rel 1/4 is charged 6056 per frame: one frame per turn against four of flow 0 (the first
    // turn of each starts with a zero deficit: send first, then check).
    let mut q = ok_drr("", 6056, 6056);
    let mut b = Bench::new(2);
    b.chan[1] = REL_ONE / 4;
    fill(&mut q, &mut b, 30, 10);
    assert_eq!(ab_order(&mut q, &mut b, 26), format!("AB{}AAAA", "AAAAB".repeat(4)));

    // Saturated on a 10 Mbit/s link: real bytes 4 : 1, stretched bytes 1 : 1.
    let mut q = ok_drr("", 6056, 6056);
    let r =
        run_chan(&mut q, &[REL_ONE, REL_ONE / 4], &[sat(0, 20 * MBIT, 1500), sat(1, 20 * MBIT, 1500)], 10 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0) / r.rate_bps(1, 3.0), 4.0, 0.01, "real bytes ratio");
    within(r.rate_bps(0, 3.0) + r.rate_bps(1, 3.0), 10e6, 0.01, "the link is used");
    let (a, b2) = (class(&q, "1:10").charged as f64, class(&q, "1:20").charged as f64);
    within(b2, a, 0.01, "stretched bytes are shared equally");
    assert_identities(&q);
}

#[test]
fn a_tiny_goodput_is_charged_exactly_the_quantum() {
    // rel = 1/65536 (and 0, clamped): 1514 * 65536 bytes capped at quantum 3000. Both leaves
    // then send one frame per turn: the DRR bound of paper §6.3.
    for rel in [1, 0] {
        let mut q = ok_drr("", 1514, 3000);
        let mut b = Bench::new(2);
        b.chan[1] = rel;
        fill(&mut q, &mut b, 10, 10);
        assert_eq!(ab_order(&mut q, &mut b, 12), "ABABABABABAB", "rel {rel}");
        let rep = q.reports();
        let c20 = rep[0].classes.iter().find(|c| c.classid == handle("1:20")).unwrap();
        assert_eq!(c20.stats.sent_bytes, 6 * 1514);
        assert!(c20.xstats.contains(&("charged_bytes".to_string(), 6 * 3000)), "{:?}", c20.xstats);
        assert!(c20.xstats_text.ends_with("\n charged: 18000 bytes gated: 0 forced: 0"), "{}", c20.xstats_text);
        assert_eq!(class(&q, "1:20").deficit[0], 0, "each frame costs the whole quantum: 0 - 3000 + 3000");
    }
}

// --- the gate (paper §6.3) ------------------------------------------------------------------

#[test]
fn a_gated_leaf_takes_one_turn_in_gate_skip_plus_one_opportunities() {
    // Quanta 1514: one frame per turn. Flow 1 at rel 0.3 < 50 %: after each of flow 0's turns
    // the pointer offers flow 1 an opportunity; it misses 3 in a row, takes the 4th. So flow 0
    // gets 4 turns per turn of flow 1: AAAAB (the first A before flow 1's first opportunity).
    let mut q = ok_drr("gate 50% gate_skip 3", 1514, 1514);
    let mut b = Bench::new(2);
    b.chan[1] = REL_03;
    fill(&mut q, &mut b, 60, 20);
    assert_eq!(ab_order(&mut q, &mut b, 50), "AAAAB".repeat(10));
    let (a, l2) = (class(&q, "1:10"), class(&q, "1:20"));
    assert_eq!((l2.forced, l2.gated), (10, 30), "10 turns taken on expiry, 3 skips before each");
    assert_eq!((a.forced, a.gated), (0, 0));
    assert_identities(&q);

    // A channel above the gate: plain alternation.
    let mut q = ok_drr("gate 25% gate_skip 3", 1514, 1514);
    let mut b = Bench::new(2);
    b.chan[1] = REL_03;
    fill(&mut q, &mut b, 10, 10);
    assert_eq!(ab_order(&mut q, &mut b, 10), "ABABABABAB");

    // gate_skip 0: the gated leaf waits until the other leaf's queue is empty.
    let mut q = ok_drr("gate 50% gate_skip 0", 1514, 1514);
    let mut b = Bench::new(2);
    b.chan[1] = REL_03;
    fill(&mut q, &mut b, 5, 5);
    assert_eq!(ab_order(&mut q, &mut b, 10), "AAAAABBBBB");
    let l2 = class(&q, "1:20");
    assert_eq!((l2.forced, l2.gated), (0, 4), "4 opportunities missed while flow 0 was backlogged");
}

#[test]
fn the_gate_guards_only_the_first_frame_of_a_turn() {
    // Quantum 6056 for flow 1, rel 0.3: each frame is charged 5046. Its deficit at the start of
    // its turns is 0, 1010, 2020, 3030, 4040, 5050: the first five turns are one frame, the
    // sixth two (5050 - 5046 = 4 >= 0). With gate_skip 1 flow 1 misses one opportunity before
    // each turn; the second frame of the sixth turn is sent without asking the gate again,
    // although the channel is still below it.
    let mut q = ok_drr("gate 50% gate_skip 1", 1514, 6056);
    let mut b = Bench::new(2);
    b.chan[1] = REL_03;
    fill(&mut q, &mut b, 20, 20);
    assert_eq!(ab_order(&mut q, &mut b, 20), format!("{}AABBA", "AAB".repeat(5)));
    let l2 = class(&q, "1:20");
    assert_eq!((l2.forced, l2.gated), (6, 6), "one skip and one forced start per turn");
}

#[test]
fn when_every_leaf_is_gated_the_gate_is_lifted() {
    // Both destinations below the gate, no counter expiry: without the lift nothing would ever
    // be sent. Plain DRR instead, and the skips are undone (nobody else was served).
    let mut q = ok_drr("gate 50% gate_skip 0", 1514, 1514);
    let mut b = Bench::new(2);
    b.chan = vec![REL_03, REL_03];
    fill(&mut q, &mut b, 10, 10);
    assert_eq!(ab_order(&mut q, &mut b, 20), "ABABABABABABABABABAB");
    for id in ["1:10", "1:20"] {
        assert_eq!((class(&q, id).gated, class(&q, id).gate_skips), (0, 0), "{id}");
    }
    // Saturated: the link stays busy, shared equally.
    let mut q = ok_drr("gate 50% gate_skip 0", 1514, 1514);
    let r = run_chan(&mut q, &[REL_03, REL_03], &[sat(0, 20 * MBIT, 1500), sat(1, 20 * MBIT, 1500)], 10 * MBIT, 3, 1);
    within(r.rate_bps(0, 2.0), 5e6, 0.01, "flow 0");
    within(r.rate_bps(1, 2.0), 5e6, 0.01, "flow 1");
    assert_identities(&q);
}

#[test]
fn a_gated_leaf_uses_what_a_red_leaf_leaves_and_arms_no_early_timer() {
    // Flow 0's leaf is shaped to 1mbit (15k buckets: it stays green over several frames);
    // flow 1's (rel 0.3, gate never expires) is gated while flow 0's leaf is green and served
    // alone while it is red: the link is not left idle.
    let classes: &[ClassLine] = &[
        ("1:", "1:10", "rate 1mbit ceil 1mbit burst 15k cburst 15k quantum 1514"),
        ("1:", "1:20", "rate 100mbit ceil 100mbit burst 1mb cburst 1mb quantum 1514"),
    ];
    let mut q = ok("whtb", "gate 50% gate_skip 0", classes, two_leaves());
    let r = run_chan(&mut q, &[REL_ONE, REL_03], &[sat(0, 20 * MBIT, 1500), sat(1, 20 * MBIT, 1500)], 10 * MBIT, 4, 1);
    within(r.rate_bps(0, 3.0), 1e6, 0.02, "the shaped leaf keeps its rate");
    within(r.rate_bps(1, 3.0), 9e6, 0.02, "the gated leaf gets the rest of the link");
    // Gated during flow 0's initial burst (about ten frames), never once flow 0 is at its rate
    // (it is green for one frame at a time, and served before flow 1's next opportunity).
    let g = class(&q, "1:20").gated;
    assert!((5..=20).contains(&g), "gated {g}");
    assert_identities(&q);

    // A lone gated leaf, rate 1mbit: served (the gate is lifted); its frame at rel 0.3 is
    // charged 5046 bytes = 40.368 ms at 1mbit against a 12.8 ms bucket, so the class is red
    // until exactly 27.568 ms, and that is the watchdog (not now).
    let mut q = ok("whtb", "default 10 gate 50% gate_skip 0", &[("1:", "1:10", "rate 1mbit")], vec![]);
    let mut b = Bench::new(1);
    b.chan[0] = REL_03;
    for _ in 0..2 {
        let p = b.pkt(0, 1500);
        q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    }
    assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
    assert_eq!(q.dequeue(&mut b.cx(), Nanos::ZERO), None);
    assert_eq!(q.next_wakeup(Nanos::ZERO), Some(Nanos(27_568_000)));
    assert_eq!(q.dequeue(&mut b.cx(), Nanos(27_567_999)), None);
    assert!(q.dequeue(&mut b.cx(), Nanos(27_568_000)).is_some());
    assert_eq!(class(&q, "1:10").gated, 0);
}

#[test]
fn the_gate_works_through_the_feeds_of_borrowing_leaves() {
    // Both leaves borrow from 1:1 (level 7, through its feed) and send their own 1mbit at level
    // 0. At level 0 flow 1's leaf is green until served and flow 0's turns red after each frame,
    // so flow 1 keeps its rate. Of the 8 Mbit/s excess shared in the feed, flow 1 gets at most
    // one turn in gate_skip + 2 = 5 (fewer: each level-0 frame restarts its count of missed
    // opportunities; measured 1.0 of 8).
    let classes: &[ClassLine] = &[
        ("1:", "1:1", "rate 10mbit"),
        ("1:1", "1:10", "rate 1mbit ceil 10mbit quantum 1514"),
        ("1:1", "1:20", "rate 1mbit ceil 10mbit quantum 1514"),
    ];
    let mut q = ok("whtb", "gate 50% gate_skip 3", classes, two_leaves());
    let r = run_chan(&mut q, &[REL_ONE, REL_03], &[sat(0, 20 * MBIT, 1500), sat(1, 20 * MBIT, 1500)], 100 * MBIT, 4, 1);
    let (a, b2) = (r.rate_bps(0, 3.0), r.rate_bps(1, 3.0));
    within(a + b2, 10e6, 0.02, "the parent's rate is used");
    assert!((0.98e6..=1.02 * (1e6 + 8e6 / 5.0)).contains(&b2), "gated flow 1: {b2:.0}");
    let l2 = class(&q, "1:20");
    assert!(l2.gated > 0 && l2.forced > 0, "gated {} forced {}", l2.gated, l2.forced);
    assert_identities(&q);
}

#[test]
fn gate_peeks_through_a_dropping_child_and_the_identities_hold() {
    // A CoDel child on the gated leaf drops at peek time; those drops are the leaf's.
    let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: whtb gate 50% gate_skip 2");
    d.classes = vec![
        class_decl(2, "tc class add dev eth0 parent 1: classid 1:10 whtb rate 6mbit ceil 6mbit quantum 1514"),
        class_decl(3, "tc class add dev eth0 parent 1: classid 1:20 whtb rate 6mbit ceil 6mbit quantum 1514"),
    ];
    let codel = build_opts_ok("codel", Handle::new(0x20, 0), "limit 200 target 1ms interval 10ms");
    d.grafts = vec![Graft { at: Tok { text: "1:20", line: 4, col: 30 }, classid: handle("1:20"), qdisc: codel }];
    d.filters = two_leaves();
    let mut q = expect_built(build(d), "whtb with codel");
    let mut b = Bench::new(2);
    b.chan[1] = REL_03;
    let r = run_link(
        &mut q,
        &mut b,
        &[sat(0, 8 * MBIT, 1500), sat(1, 8 * MBIT, 1500)],
        10 * MBIT,
        Nanos::from_secs(2),
        Nanos::ZERO,
    );
    assert!(r.drops[1] > 0, "codel dropped: {:?}", r.drops);
    assert_eq!(q.stats().drops, r.drops.iter().sum::<u64>());
    assert!(class(&q, "1:20").gated > 0);
    assert_identities(&q);
}

// --- options and reports --------------------------------------------------------------------

/// Column of the qdisc options on line 1: `tc qdisc add dev eth0 root handle 1: whtb OPTS`.
const QOPT_COL: u32 = "tc qdisc add dev eth0 root handle 1: whtb ".len() as u32 + 1;

#[test]
fn gate_options_are_parsed_and_errors_name_the_token() {
    let err = |qopts: &str| {
        let (q, d) = build_kind("whtb", qopts, &[], vec![]);
        assert!(q.is_none(), "{qopts} should not build");
        errors(&d)[0].clone()
    };
    let e = err("gate 150%");
    assert_eq!((e.line, e.col, e.token.as_str()), (1, QOPT_COL + 5, "150%"));
    assert!(e.message.contains("gate 150% is out of range: expected a percentage from 0 to 100"), "{e}");
    let e = err("gate -5");
    assert_eq!(e.token, "-5");
    assert!(e.message.contains("out of range"), "{e}");
    let e = err("gate half");
    assert_eq!(e.token, "half");
    assert!(e.message.contains("\"half\" is not a percentage"), "{e}");
    let e = err("gate");
    assert_eq!((e.col, e.token.as_str()), (QOPT_COL, "gate"));
    assert!(e.message.contains("needs a value"), "{e}");
    let e = err("gate 50% gate_skip -1");
    assert_eq!((e.col, e.token.as_str()), (QOPT_COL + 19, "-1"));
    assert!(e.message.contains("\"-1\" is not an integer"), "{e}");
    let e = err("default 10 wibble");
    assert!(e.message.contains("unknown whtb option \"wibble\"") && e.message.contains("gate, gate_skip"), "{e}");
    // Whole words: "g" and "gate_s" are not whtb's.
    assert_eq!(err("gate_s 3").token, "gate_s");
    // htb has no gate.
    let (q, d) = build_kind("htb", "gate 50%", &[], vec![]);
    assert!(q.is_none());
    assert!(errors(&d)[0].message.contains("unknown htb option \"gate\""), "{d:?}");
    // Class options are htb's; the message names the class kind.
    let (q, d) = build_kind("whtb", "", &[("1:", "1:10", "rate 1mbit gate 50%")], vec![]);
    assert!(q.is_none());
    assert!(errors(&d)[0].message.contains("unknown whtb class option \"gate\""), "{d:?}");

    // gate_skip without a gate: a warning.
    let (q, d) = build_kind("whtb", "gate_skip 4", &[], vec![]);
    assert!(q.is_some());
    let w = warnings(&d);
    assert_eq!((w.len(), w[0].token.as_str()), (1, "gate_skip"));
    assert!(w[0].message.contains("no effect"), "{}", w[0]);

    // Values and printing: "50" is 50 %, the threshold rounds up to a whole 1/65536.
    for (qopts, thr, skip, shown) in [
        ("default 10 gate 50", 32768, 8, " gate 50% gate_skip 8"),
        ("gate 12.5% gate_skip 0", 8192, 0, " gate 12.5% gate_skip 0"),
        ("gate 0.001%", 1, 8, " gate 0.001% gate_skip 8"),
        ("gate 100%", REL_ONE, 8, " gate 100% gate_skip 8"),
        ("", 0, 8, ""),
        ("gate 0% gate_skip 3", 0, 3, ""),
    ] {
        let q = ok("whtb", qopts, &[], vec![]);
        let w = htb(&q).wireless.expect("whtb");
        assert_eq!(
            (w.gate, w.gate_on(), w.gate_skip, w.options_text().as_str()),
            (thr, thr > 0, skip, shown),
            "{qopts}"
        );
        assert!(q.reports()[0].options.ends_with(&format!("direct_qlen 1000{shown}")), "{}", q.reports()[0].options);
    }
}

#[test]
fn reports_show_kind_whtb_and_the_charged_bytes() {
    let mut q = ok(
        "whtb",
        "default 10 gate 50% gate_skip 4",
        &[("1:", "1:1", "rate 8mbit"), ("1:1", "1:10", "rate 4mbit ceil 8mbit")],
        vec![],
    );
    let mut b = Bench::new(1);
    b.chan[0] = REL_ONE / 2;
    let p = b.pkt(0, 1500);
    q.enqueue(p, &mut b.cx(), Nanos::ZERO);
    assert!(q.dequeue(&mut b.cx(), Nanos::ZERO).is_some());
    let rep = q.reports();
    assert_eq!(rep[0].kind, "whtb");
    assert_eq!(rep[0].options, "r2q 10 default 0x10 direct_packets_stat 0 direct_qlen 1000 gate 50% gate_skip 4");
    for c in &rep[0].classes {
        assert_eq!(c.kind, "whtb");
        assert_eq!(c.stats.sent_bytes, 1514, "Sent is the real length");
        assert!(c.xstats_text.ends_with("\n charged: 3028 bytes gated: 0 forced: 0"), "{}", c.xstats_text);
        assert!(c.xstats.contains(&("charged_bytes".to_string(), 3028)));
    }
    let text = crate::tc::class_show("wlan0", &rep, true);
    assert!(text.contains("class whtb 1:10 parent 1:1 prio 0 rate 4Mbit ceil 8Mbit"), "{text}");
    assert!(text.contains(" charged: 3028 bytes gated: 0 forced: 0\n"), "{text}");
    // htb prints no such line.
    let q = ok("htb", "", &[("1:", "1:10", "rate 1mbit")], vec![]);
    assert!(!q.reports()[0].classes[0].xstats_text.contains("charged"));
    assert_eq!(q.reports()[0].classes[0].xstats.len(), 5);
}
