use super::*;
use crate::qdisc::testutil::{build, build_ok, errors, qdisc, run_link, warnings, Bench, Source};

fn netem(q: &QdiscImpl) -> &Netem {
    match q {
        QdiscImpl::Netem(n) => n,
        _ => panic!("not netem"),
    }
}

fn make(opts: &str) -> QdiscImpl {
    build_ok(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: netem {opts}")))
}

/// Offer `n` packets of 1000 bytes (qdisc length 1014), one every `gap`, and dequeue each as
/// soon as netem allows (an infinitely fast link). Returns each delivered packet's sequence
/// number and delay (time out - time in), and the number lost.
fn pass(q: &mut QdiscImpl, n: usize, gap: Nanos) -> (Vec<(u64, i64)>, usize) {
    let mut b = Bench::new(1);
    let mut out = vec![];
    let mut sent = vec![Nanos::ZERO; n];
    let mut now = Nanos::ZERO;
    let mut lost = 0;
    let mut i = 0;
    let drain = |q: &mut QdiscImpl, b: &mut Bench, until: Nanos, out: &mut Vec<(u64, i64)>, sent: &[Nanos]| loop {
        let t = match q.next_wakeup(until) {
            Some(t) if t <= until => t,
            _ => break,
        };
        match q.dequeue(&mut b.cx(), t) {
            Some(p) => {
                let pk = *b.pkts.get(p);
                out.push((pk.seq, t.as_ns() as i64 - sent[pk.seq as usize].as_ns() as i64));
                b.pkts.free(p);
            }
            None => break,
        }
    };
    while i < n {
        let id = b.pkt(0, 1000);
        b.pkts.get_mut(id).seq = i as u64;
        sent[i] = now;
        if q.enqueue(id, &mut b.cx(), now) == Enq::Dropped {
            lost += 1;
        }
        for d in b.dropped.drain(..) {
            b.pkts.free(d);
        }
        i += 1;
        drain(q, &mut b, now, &mut out, &sent);
        now += gap;
        drain(q, &mut b, now - Nanos(1), &mut out, &sent);
    }
    drain(q, &mut b, Nanos(u64::MAX / 2), &mut out, &sent);
    assert!(q.stats().identity_holds(), "{:?}", q.stats());
    assert_eq!(q.stats().qlen, 0);
    (out, lost)
}

fn mean_sd(xs: impl Iterator<Item = f64> + Clone) -> (f64, f64, usize) {
    let n = xs.clone().count();
    let m = xs.clone().sum::<f64>() / n as f64;
    let v = xs.map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
    (m, v.sqrt(), n)
}

/// Every expected line below is what `tc qdisc show` printed for the same options on Debian's
/// Linux 6.1.0-56 with iproute2 6.1 (the QEMU guest of docs/kernel-conformance.md).
#[test]
fn defaults_and_options_print_as_tc_does() {
    let q = make("");
    assert_eq!(q.reports()[0].options, "limit 1000");
    assert_eq!(
        crate::tc::qdisc_show("eth0", &q.reports(), true),
        "qdisc netem 1: root refcnt 2 limit 1000\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n"
    );
    let cases = [
        ("delay 100ms", "limit 1000 delay 100ms"),
        ("delay 100ms 10ms", "limit 1000 delay 100ms  10ms"),
        ("delay 100ms 10ms 25%", "limit 1000 delay 100ms  10ms 25%"),
        ("delay 100ms 10ms distribution normal", "limit 1000 delay 100ms  10ms"),
        ("limit 50 latency 1.5ms loss 1%", "limit 50 delay 1.5ms loss 1%"),
        ("loss random 0.3% 25", "limit 1000 loss 0.3% 25%"),
        ("loss state 1%", "limit 1000 loss state p13 1% p31 99% p32 0% p23 100% p14 0%"),
        ("loss state 1% 30% 10% 5% 0.1%", "limit 1000 loss state p13 1% p31 30% p32 10% p23 5% p14 0.1%"),
        ("loss gemodel 1%", "limit 1000 loss gemodel p 1% r 99% 1-h 100% 1-k 0%"),
        ("loss gemodel 1% 10% 70% 0.1%", "limit 1000 loss gemodel p 1% r 10% 1-h 70% 1-k 0.1%"),
        ("delay 10ms reorder 25% 50%", "limit 1000 delay 10ms reorder 25% 50% gap 1"),
        ("delay 10ms reorder 25% gap 5", "limit 1000 delay 10ms reorder 25% gap 5"),
        ("rate 1mbit", "limit 1000 rate 1Mbit"),
        ("rate 10mbit 20 48 5", "limit 1000 rate 10Mbit packetoverhead 20 cellsize 48 celloverhead 5"),
        ("rate 10mbit -4", "limit 1000 rate 10Mbit packetoverhead -4"),
        ("slot 800us 8.5ms packets 42 bytes 64k", "limit 1000 slot 800us 8.5ms packets 42 bytes 65536"),
        ("slot 2ms", "limit 1000 slot 2ms 2ms"),
        ("slot distribution pareto 1ms 500us", "limit 1000 slot distribution 1ms 500us"),
        ("loss 5% ecn", "limit 1000 loss 5% ecn "),
        ("delay 1ms reorder 10% gap 3 loss 1% ecn", "limit 1000 delay 1ms loss 1% reorder 10% ecn  gap 3"),
        ("delay 10ms duplicate 1% corrupt 0.1%", "limit 1000 delay 10ms duplicate 1% corrupt 0.1%"),
        // The tick rounding and %g printing, as Linux 6.1 with iproute2 6.1 showed them.
        ("delay 1us", "limit 1000 delay 0us"),
        ("delay 1500us 333us", "limit 1000 delay 1.5ms  332us"),
        ("delay 10ms 5ms distribution paretonormal", "limit 1000 delay 10ms  5ms"),
        ("rate 100gbit", "limit 1000 rate 100Gbit"),
        ("delay 10ms reorder 10%", "limit 1000 delay 10ms reorder 10% gap 1"),
        ("loss 0.001%", "limit 1000 loss 0.00100001%"),
        ("delay 1ms duplicate 5% 10% corrupt 1% 20%", "limit 1000 delay 1ms duplicate 5% 10% corrupt 1% 20%"),
    ];
    for (opts, shown) in cases {
        let (q, d) = build(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: netem {opts}")));
        let q = q.unwrap_or_else(|| panic!("{opts}: {d:?}"));
        assert_eq!(q.reports()[0].options, shown, "{opts}");
        assert!(errors(&d).is_empty(), "{opts}: {d:?}");
    }
}

#[test]
fn unmodelled_options_warn() {
    for (opts, word) in [
        ("delay 1ms duplicate 1%", "duplicate"),
        ("corrupt 0.1%", "corrupt"),
        ("loss 1% ecn", "ecn"),
        ("seed 42", "seed"),
    ] {
        let (q, d) = build(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: netem {opts}")));
        assert!(q.is_some(), "{opts}");
        let w = warnings(&d);
        assert_eq!(w.len(), 1, "{opts}: {d:?}");
        assert!(w[0].message.starts_with(word), "{opts}: {}", w[0].message);
    }
    let (_, d) = build(qdisc(1, "tc qdisc add dev eth0 root handle 1: netem delay 10ms loss 1% rate 1mbit"));
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn option_errors_name_the_token() {
    let cases = [
        ("netem delay", "delay", "needs a value"),
        ("netem delay soon", "soon", ""),
        ("netem loss 120%", "120%", "not a percentage"),
        ("netem loss sometimes 5%", "sometimes", "Unknown loss parameter"),
        ("netem loss 1% loss 2%", "loss", "duplicate loss argument"),
        ("netem jitter 5ms", "jitter", "unknown netem option"),
        ("netem delay 10ms 5ms distribution uniform", "uniform", "No distribution data for uniform"),
        ("netem distribution normal delay 10ms", "distribution", "no latency and jitter"),
        ("netem reorder 10%", "netem", "reordering not possible without specifying some delay"),
        ("netem delay 10ms gap 5", "netem", "gap specified without reorder probability"),
        ("netem ecn", "netem", "ecn requested without loss model"),
        ("netem slot 5ms 2ms", "2ms", "below the slot's min_delay"),
        ("netem slot often", "often", "Unknown slot parameter"),
        ("netem rate 50%", "50%", "percent of the device's speed"),
        ("netem rate 1mbit 20 forty", "forty", "unknown netem option"),
        ("netem delay 300s", "300s", "too large"),
        ("netem limit many", "many", ""),
    ];
    for (tail, tok, msg) in cases {
        let line = format!("tc qdisc add dev eth0 root handle 1: {tail}");
        let (q, d) = build(qdisc(7, &line));
        assert!(q.is_none(), "{line}");
        let e = &errors(&d)[0];
        let col = line.find(&format!(" {tok}")).map(|c| c as u32 + 2);
        assert_eq!((e.line, e.token.as_str()), (7, tok), "{line}: {d:?}");
        // The error points at the token (its first occurrence after a space).
        if tok != "loss" {
            assert_eq!(Some(e.col), col, "{line}: {d:?}");
        }
        assert!(e.message.contains(msg), "{line}: {}", e.message);
    }
}

#[test]
fn delay_is_the_kernels_tick_rounded_latency() {
    // 1.5 ms = 23437.5 ticks: tc sends 23437, the kernel waits 23437 * 64 ns.
    let mut q = make("delay 1500us");
    assert_eq!(netem(&q).params().latency_ns(), 23437 * 64);
    let (out, lost) = pass(&mut q, 100, Nanos::from_ms(1));
    assert_eq!(lost, 0);
    assert!(out.iter().all(|&(_, d)| d == 23437 * 64), "{:?}", &out[..3]);
    // In order: a constant delay never reorders.
    assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn uniform_jitter_has_the_uniform_mean_and_spread() {
    // delay 50ms 10ms: uniform on [40, 60) ms: mean 50 ms (less half a ns), sd 10/sqrt(3) ms.
    let mut q = make("delay 50ms 10ms");
    let (out, _) = pass(&mut q, 20_000, Nanos::from_ms(1));
    let (m, sd, n) = mean_sd(out.iter().map(|&(_, d)| d as f64 / 1e6));
    let sd_want = 10.0 / 3f64.sqrt();
    let se = sd_want / (n as f64).sqrt();
    assert!((m - 50.0).abs() < 4.0 * se, "mean {m} ms (se {se})");
    assert!((sd - sd_want).abs() < 0.02 * sd_want, "sd {sd} vs {sd_want}");
    assert!(out.iter().all(|&(_, d)| (40_000_000..60_000_000).contains(&d)));
    // Jitter larger than the spacing reorders packets, as the kernel's tfifo does.
    assert!(out.windows(2).any(|w| w[0].0 > w[1].0));
}

#[test]
fn table_jitter_follows_the_distribution() {
    // Normal: mean 100 ms, sd 10 ms.
    let mut q = make("delay 100ms 10ms distribution normal");
    let (out, _) = pass(&mut q, 20_000, Nanos::from_ms(1));
    let (m, sd, n) = mean_sd(out.iter().map(|&(_, d)| d as f64 / 1e6));
    assert!((m - 100.0).abs() < 4.0 * 10.0 / (n as f64).sqrt(), "normal mean {m}");
    assert!((sd - 10.0).abs() < 0.2, "normal sd {sd}");
    // The fraction within one sigma: 68.27 %.
    let within = out.iter().filter(|&&(_, d)| (d - 100_000_000).abs() <= 10_000_000).count() as f64 / n as f64;
    assert!((within - 0.6827).abs() < 0.015, "within 1 sd: {within}");
    // Pareto (a = 3, as iproute2's table): the median is mu + sigma (2^(1/3) - 1.5) 4/3 and the
    // 90th percentile mu + sigma (10^(1/3) - 1.5) 4/3.
    let mut q = make("delay 100ms 30ms distribution pareto");
    let (out, _) = pass(&mut q, 20_000, Nanos::from_ms(1));
    let mut ds: Vec<f64> = out.iter().map(|&(_, d)| d as f64 / 1e6).collect();
    ds.sort_by(f64::total_cmp);
    let q_at = |f: f64| ds[(f * ds.len() as f64) as usize];
    let analytic = |f: f64| 100.0 + 30.0 * ((1.0 / (1.0 - f)).powf(1.0 / 3.0) - 1.5) * 4.0 / 3.0;
    for f in [0.5, 0.9] {
        // Sampling error of a quantile: a 1 % step of the CDF.
        let (lo, hi) = (analytic(f - 0.01), analytic(f + 0.01));
        assert!((lo..hi).contains(&q_at(f)), "pareto q{f}: {} not in [{lo}, {hi})", q_at(f));
    }
    assert!(ds[0] >= 100.0 - 30.0 * 2.0 / 3.0 - 0.01, "pareto minimum mu - 2/3 sigma: {}", ds[0]);
}

#[test]
fn correlation_is_the_kernels_get_crandom() {
    // get_crandom with rho = 90 %: successive values move a tenth as far as independent ones
    // (mean |X - Y| of independent uniforms is 1/3 of the range).
    let mut rng = stream(1, StreamKind::Qdisc, 0);
    let mut c = Crnd { rho: prob_of(0.9), last: 0 };
    let xs: Vec<f64> = (0..20_000).map(|_| crandom(&mut c, &mut rng) as f64 / u32::MAX as f64).collect();
    let step = xs.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>() / (xs.len() - 1) as f64;
    assert!(step < 0.2 / 3.0, "mean step {step}");
    // As in the kernel, the delay takes the correlated value modulo 2 * jitter (or the table's
    // 4096 entries), which keeps nothing of the correlation: the delays' steps are those of
    // independent draws (a property of sch_netem.c, reproduced; docs/qdisc-netem.md).
    let mut q = make("delay 50ms 10ms 90%");
    let (mut out, _) = pass(&mut q, 5_000, Nanos::from_ms(20));
    out.sort();
    let steps: f64 = out.windows(2).map(|w| (w[1].1 - w[0].1).abs() as f64).sum::<f64>() / (out.len() - 1) as f64;
    assert!((steps - 20e6 / 3.0).abs() < 0.05 * 20e6 / 3.0, "mean step {steps} ns");
}

#[test]
fn random_loss_is_within_sampling_error() {
    for (pct, p) in [("1%", 0.01), ("10%", 0.1), ("50", 0.5)] {
        let mut q = make(&format!("loss {pct}"));
        let n = 40_000;
        let (out, lost) = pass(&mut q, n, Nanos::from_us(100));
        let rate = lost as f64 / n as f64;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((rate - p).abs() < 4.0 * se, "loss {pct}: {rate} (se {se})");
        assert_eq!(out.len() + lost, n);
        assert_eq!(q.stats().drops, lost as u64);
    }
}

/// Stationary distribution of a Markov chain (rows: from; columns: to) by power iteration.
fn stationary(m: &[[f64; 4]; 4]) -> [f64; 4] {
    let mut pi = [0.25; 4];
    for _ in 0..100_000 {
        let mut next = [0.0; 4];
        for (i, row) in m.iter().enumerate() {
            for (j, &p) in row.iter().enumerate() {
                next[j] += pi[i] * p;
            }
        }
        pi = next;
    }
    pi
}

#[test]
fn four_state_loss_matches_the_markov_chains_stationary_rate() {
    // States 1 TX in gap, 2 TX in burst, 3 lost in burst, 4 lost in gap (sch_netem.c).
    let (p13, p31, p32, p23, p14) = (0.02, 0.3, 0.4, 0.05, 0.01);
    let m = [
        [1.0 - p13 - p14, 0.0, p13, p14],
        [0.0, 1.0 - p23, p23, 0.0],
        [p31, p32, 1.0 - p31 - p32, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    let pi = stationary(&m);
    let want = pi[2] + pi[3];
    let mut q = make("loss state 2% 30% 40% 5% 1%");
    let n = 100_000;
    let (_, lost) = pass(&mut q, n, Nanos::from_us(50));
    let rate = lost as f64 / n as f64;
    // Losses come in bursts (mean length 1/(p31+p32) = 1.43 in state 3): the sampling error
    // is larger than a Bernoulli's; 6 sigma of the Bernoulli stays well inside.
    let se = (want * (1.0 - want) / n as f64).sqrt();
    assert!((rate - want).abs() < 6.0 * se, "4-state loss {rate} vs {want} (se {se})");
}

#[test]
fn gilbert_elliott_loss_matches_its_stationary_rate() {
    // p = 5 %, r = 20 %, 1-h = 80 % (loss in bad), 1-k = 1 % (loss in good).
    let (p, r, loss_bad, loss_good) = (0.05, 0.2, 0.8, 0.01);
    let pi_bad = p / (p + r);
    let want = pi_bad * loss_bad + (1.0 - pi_bad) * loss_good;
    let mut q = make("loss gemodel 5% 20% 80% 1%");
    let n = 200_000;
    let (_, lost) = pass(&mut q, n, Nanos::from_us(50));
    let rate = lost as f64 / n as f64;
    // The state persists (lag-1 correlation 1 - p - r = 0.75): the variance of the mean is
    // (1 + 0.75) / (1 - 0.75) = 7 times a Bernoulli's.
    let se = (want * (1.0 - want) / n as f64 * 7.0).sqrt();
    assert!((rate - want).abs() < 4.0 * se, "GE loss {rate} vs {want} (se {se})");
    // Losses cluster: the chance that a loss follows a loss is far above the loss rate.
    let mut q = make("loss gemodel 5% 20% 80% 1%");
    let mut b = Bench::new(1);
    let mut prev = false;
    let (mut pairs, mut losses) = (0, 0);
    for i in 0..n {
        let id = b.pkt(0, 1000);
        let lost = q.enqueue(id, &mut b.cx(), Nanos(i as u64)) == Enq::Dropped;
        if lost && prev {
            pairs += 1;
        }
        losses += lost as u32;
        prev = lost;
        for d in b.dropped.drain(..) {
            b.pkts.free(d);
        }
        while let Some(p) = q.dequeue(&mut b.cx(), Nanos(i as u64)) {
            b.pkts.free(p);
        }
    }
    let cond = pairs as f64 / losses as f64;
    assert!(cond > 2.0 * want, "P(loss | loss) {cond} vs {want}");
}

#[test]
fn rate_serialises_packets_at_the_analytic_time() {
    // 1 Mbit/s, 1014-byte packets offered every 1 ms (8x the rate): departures are exactly
    // 1014 * 8 us apart.
    let mut q = make("rate 1mbit");
    let (out, lost) = pass(&mut q, 50, Nanos::from_ms(1));
    assert_eq!(lost, 0);
    let departures: Vec<i64> = out.iter().map(|&(s, d)| s as i64 * 1_000_000 + d).collect();
    assert!(departures.windows(2).all(|w| w[1] - w[0] == 8_112_000), "{:?}", &departures[..4]);
    assert_eq!(departures[0], 8_112_000, "the first packet waits its own serialisation time");
    // ATM-like cells: 1014 + 10 = 1024 bytes = 22 cells of 48 (21.33 rounded up), each 53
    // bytes on the wire: 1166 bytes at 1 Mbit/s.
    let mut q = make("rate 1mbit 10 48 5");
    let (out, _) = pass(&mut q, 20, Nanos::from_ms(1));
    let departures: Vec<i64> = out.iter().map(|&(s, d)| s as i64 * 1_000_000 + d).collect();
    assert!(departures.windows(2).all(|w| w[1] - w[0] == 1166 * 8000), "{:?}", &departures[..3]);
    // Delay and rate: the delay counts from the last packet's time (the kernel's "time bonus").
    let mut q = make("delay 20ms rate 1mbit");
    let (out, _) = pass(&mut q, 30, Nanos::from_ms(1));
    let departures: Vec<i64> = out.iter().map(|&(s, d)| s as i64 * 1_000_000 + d).collect();
    assert_eq!(departures[0], 20_000_000 + 8_112_000);
    assert!(departures.windows(2).all(|w| w[1] - w[0] == 8_112_000), "{:?}", &departures[..3]);
}

#[test]
fn rate_limits_a_link_to_its_throughput() {
    // Through the bench link (100 Mbit/s), netem at 5 Mbit/s offered 8 Mbit/s: 5 Mbit/s out.
    let mut q = make("rate 5mbit limit 100");
    let mut b = Bench::new(1);
    let src = Source { flow: 0, rate_bps: 8_000_000, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(4) };
    let r = run_link(&mut q, &mut b, &[src], 100_000_000, Nanos::from_secs(4), Nanos::from_secs(1));
    let got = r.rate_bps(0, 3.0);
    assert!((got - 5e6).abs() < 0.01 * 5e6, "{got}");
    assert!(q.stats().drops > 0 && q.stats().identity_holds());
}

#[test]
fn reorder_sends_a_share_at_once() {
    // reorder 25% with delay 10 ms: a quarter of the packets leave at once (requeues counts
    // them); with gap 5 the first four of every run of five are delayed.
    let mut q = make("delay 10ms reorder 25%");
    let n = 20_000;
    let (out, _) = pass(&mut q, n, Nanos::from_ms(1));
    let at_once = out.iter().filter(|&&(_, d)| d == 0).count();
    let se = (0.25 * 0.75 / n as f64).sqrt();
    assert!((at_once as f64 / n as f64 - 0.25).abs() < 4.0 * se, "{at_once}");
    assert_eq!(q.stats().requeues, at_once as u64);
    let mut q = make("delay 10ms reorder 100% gap 5");
    let (out, _) = pass(&mut q, 100, Nanos::from_ms(1));
    let mut immediate: Vec<u64> = out.iter().filter(|&&(_, d)| d == 0).map(|&(s, _)| s).collect();
    immediate.sort();
    assert_eq!(immediate[..4], [4, 9, 14, 19], "every fifth packet overtakes");
}

#[test]
fn slots_release_bursts() {
    // slot 10ms 10ms packets 3: at most 3 packets per 10 ms slot.
    let mut q = make("slot 10ms packets 3");
    let (out, _) = pass(&mut q, 60, Nanos::from_ms(1));
    let mut per_slot = std::collections::BTreeMap::new();
    for &(s, d) in &out {
        *per_slot.entry((s as i64 * 1_000_000 + d) / 10_000_000).or_insert(0) += 1;
    }
    assert!(per_slot.values().all(|&c| c <= 3), "{per_slot:?}");
    assert!(per_slot.values().filter(|&&c| c == 3).count() >= 15, "{per_slot:?}");
}

#[test]
fn limit_drops_and_the_same_seed_repeats() {
    let mut q = make("delay 1s limit 10");
    let mut b = Bench::new(1);
    for _ in 0..15 {
        let id = b.pkt(0, 100);
        q.enqueue(id, &mut b.cx(), Nanos::ZERO);
    }
    assert_eq!((q.stats().qlen, q.stats().drops), (10, 5));
    let run = || pass(&mut make("delay 10ms 5ms loss 5%"), 2000, Nanos::from_ms(1));
    assert_eq!(run(), run());
    let other = pass(&mut make("delay 10ms 5ms loss 5% seed 7"), 2000, Nanos::from_ms(1));
    assert_ne!(run(), other);
}
