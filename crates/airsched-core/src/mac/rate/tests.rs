//! Rate-control tests: exact ARF/AARF state sequences, Minstrel statistics and chains, and
//! settling on a synthetic 802.11b channel (fixed success probability per rate).

use super::*;
use crate::engine::{stream, StreamKind};
use crate::phy::dsss::{ack_time, txtime, DsssRate, Preamble, DIFS, SIFS, SLOT};
use rand::SeedableRng;

const RETRY_LIMIT: u32 = 7;

/// DATA (1088-B PSDU) + SIFS + ACK + DIFS + mean CWmin backoff at 1, 2, 5.5, 11 Mb/s,
/// long preamble, basic rates {1, 2}: 9570, 5162, 2393, 1602 us.
fn dsss_airtime() -> [Nanos; 4] {
    let basic = [DsssRate::R1, DsssRate::R2];
    let mean_backoff = Nanos(SLOT.0 * 31 / 2);
    DsssRate::ALL
        .map(|r| txtime(Preamble::Long, r, 1088) + SIFS + ack_time(Preamble::Long, &basic, r) + DIFS + mean_backoff)
}

/// argmax p * 8 * 1024 / airtime.
fn goodput_max_rate(p: &[f64; 4], airtime: &[Nanos; 4]) -> u8 {
    let g = |i: usize| p[i] * 8.0 * 1024.0 / airtime[i].0 as f64;
    (0..4).fold(0, |b, i| if g(i) > g(b) { i } else { b }) as u8
}

fn ctl(algo: RateAlgo, seed: u64) -> RateCtl {
    RateCtl::new(algo, &dsss_airtime(), RETRY_LIMIT, stream(seed, StreamKind::RateControl, 1)).unwrap()
}

#[derive(Default)]
struct Run {
    attempts: [u64; 4],
    frames: u64,
    sample_frames: u64,
    delivered: u64,
    /// Frames that ended with each rate as the controller's current best.
    best: [u64; 4],
    /// Step-ups into the top rate (each followed by a probe attempt there).
    probes_top: u64,
    /// Rate of every attempt, for the determinism test.
    seq: Vec<u8>,
}

impl Run {
    fn share(&self, rate: usize) -> f64 {
        self.attempts[rate] as f64 / self.attempts.iter().sum::<u64>() as f64
    }
    fn best_share(&self, rate: usize) -> f64 {
        self.best[rate] as f64 / self.frames as f64
    }
    fn most_used(&self) -> u8 {
        (0..4).fold(0, |b, i| if self.attempts[i] > self.attempts[b] { i } else { b }) as u8
    }
}

/// Saturated link over a channel with fixed per-rate success probabilities; each attempt
/// takes the rate's airtime. Statistics count from `warmup` to `end`.
fn run(c: &mut RateCtl, p: &[f64; 4], seed: u64, warmup: Nanos, end: Nanos) -> Run {
    let airtime = dsss_airtime();
    let mut chan = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut now = Nanos::ZERO;
    let mut out = Run::default();
    while now < end {
        let counting = now >= warmup;
        let mut delivered = false;
        for attempt in 1..=RETRY_LIMIT {
            let r = c.rate_for_attempt(now, attempt);
            let ok = chan.random_bool(p[r as usize]);
            now += airtime[r as usize];
            c.on_attempt(now, r, ok);
            if counting {
                out.attempts[r as usize] += 1;
                out.seq.push(r);
                if c.current() == 3 && r == 2 && ok {
                    out.probes_top += 1;
                }
            }
            if ok {
                delivered = true;
                break;
            }
        }
        if counting {
            out.frames += 1;
            out.sample_frames += c.is_sampling() as u64;
            out.delivered += delivered as u64;
            out.best[c.current() as usize] += 1;
        }
        c.on_frame_end(now, delivered);
    }
    out
}

fn arf_state(c: &RateCtl) -> &Arf {
    match &c.state {
        State::Arf(a) => a,
        _ => unreachable!(),
    }
}

fn minstrel_state(c: &mut RateCtl) -> &mut Minstrel {
    match &mut c.state {
        State::Minstrel(m) => m,
        _ => unreachable!(),
    }
}

/// Feed ARF a sequence of outcomes ('S' ACKed, 'F' missed) and return the rate after each.
fn feed(c: &mut RateCtl, outcomes: &str) -> Vec<u8> {
    outcomes
        .chars()
        .map(|o| {
            let r = c.rate_for_attempt(Nanos::ZERO, 1);
            c.on_attempt(Nanos::ZERO, r, o == 'S');
            c.current()
        })
        .collect()
}

#[test]
fn construction_errors_are_typed() {
    let rng = || stream(0, StreamKind::RateControl, 0);
    assert_eq!(RateCtl::new(RateAlgo::Arf, &[], 7, rng()).unwrap_err(), RateCtlError::NoRates);
    let e = RateCtl::new(RateAlgo::Fixed(4), &dsss_airtime(), 7, rng()).unwrap_err();
    assert_eq!(e, RateCtlError::FixedOutOfRange { index: 4, n: 4 });
    assert!(e.to_string().contains("fixed rate index 4"));
    let mut f = RateCtl::new(RateAlgo::Fixed(2), &dsss_airtime(), 7, rng()).unwrap();
    assert_eq!(feed(&mut f, "FFFFSSSSSSSSSSSS"), vec![2; 16]);
}

#[test]
fn arf_steps_up_after_ten_successes_and_down_after_two_failures() {
    let mut c = ctl(RateAlgo::Arf, 1);
    assert_eq!(feed(&mut c, "SSSSSSSSS"), vec![0; 9]);
    assert_eq!(feed(&mut c, "S"), vec![1]);
    assert!(arf_state(&c).recovery);
    // The probe succeeds: recovery ends; one failure is not enough, the second steps down.
    assert_eq!(feed(&mut c, "SFF"), vec![1, 1, 0]);
    assert!(!arf_state(&c).recovery);
    // From the top, every second consecutive failure steps down once.
    let mut c = ctl(RateAlgo::Arf, 1);
    feed(&mut c, &"SSSSSSSSSS".repeat(3));
    feed(&mut c, "S");
    assert_eq!(c.current(), 3);
    assert_eq!(feed(&mut c, "FFFFFF"), vec![3, 2, 2, 1, 1, 0]);
    // At the top, success and timer run past their thresholds without effect.
    let mut c = ctl(RateAlgo::Arf, 1);
    feed(&mut c, &"S".repeat(30));
    assert_eq!(feed(&mut c, &"S".repeat(40)), vec![3; 40]);
}

#[test]
fn arf_failed_probe_falls_back_at_once_and_recovery_spans_retries() {
    let mut c = ctl(RateAlgo::Arf, 1);
    feed(&mut c, "SSSSSSSSSS");
    assert_eq!(c.current(), 1);
    // Probe fails: back to 0 at once. Still in recovery: further failures do not step down
    // (nothing lower here), they only restart the timer.
    assert_eq!(feed(&mut c, "F"), vec![0]);
    let a = arf_state(&c);
    assert!(a.recovery && a.timer == 0 && a.failed == 1);
    // At rate 2 after a failed probe to 3, failures before the next success stay at 2.
    let mut c = ctl(RateAlgo::Arf, 1);
    feed(&mut c, &"S".repeat(30));
    assert_eq!(c.current(), 3);
    let mut c2 = c.clone();
    assert_eq!(feed(&mut c2, "F"), vec![2], "the probe at the top rate failed");
    assert_eq!(feed(&mut c, "SFF"), vec![3, 3, 2], "after a good probe, two failures");
    let mut c = ctl(RateAlgo::Arf, 1);
    feed(&mut c, &"S".repeat(29));
    assert_eq!(c.current(), 2);
    feed(&mut c, "S");
    assert_eq!(feed(&mut c, "FFFFF"), vec![2, 2, 2, 2, 2]);
    assert_eq!(feed(&mut c, "SFF"), vec![2, 2, 1], "a success ends recovery");
}

#[test]
fn arf_timer_steps_up_after_fifteen_attempts_without_two_failures() {
    let mut c = ctl(RateAlgo::Arf, 1);
    // Single failures reset the success count but not the timer.
    let rates = feed(&mut c, "SSSSFSSSSFSSSSS");
    assert_eq!(&rates[..14], &[0; 14]);
    assert_eq!(rates[14], 1, "15th attempt, 5 consecutive successes: the timer fires");
    // Two consecutive failures restart the timer (and step down).
    let mut c = ctl(RateAlgo::Arf, 1);
    let rates = feed(&mut c, "SSSSSSSFFSSSSSSSSS");
    assert_eq!(rates, vec![0; 18]);
    assert_eq!(arf_state(&c).timer, 9);
}

#[test]
fn aarf_doubles_thresholds_on_failed_probes_caps_them_and_resets_on_fallback() {
    let mut c = ctl(RateAlgo::Aarf, 1);
    let th = |c: &RateCtl| (arf_state(c).success_threshold, arf_state(c).timer_threshold);
    assert_eq!(th(&c), (10, 15));
    feed(&mut c, &"S".repeat(10));
    assert_eq!(c.current(), 1);
    feed(&mut c, "F");
    assert_eq!((c.current(), th(&c)), (0, (20, 30)));
    // Now 19 successes are not enough, the 20th steps up.
    assert_eq!(feed(&mut c, &"S".repeat(19)), vec![0; 19]);
    assert_eq!(feed(&mut c, "S"), vec![1]);
    feed(&mut c, "F");
    assert_eq!(th(&c), (40, 60));
    feed(&mut c, &"S".repeat(40));
    feed(&mut c, "F");
    assert_eq!(th(&c), (60, 120), "success threshold capped at 60");
    feed(&mut c, &"S".repeat(60));
    feed(&mut c, "F");
    assert_eq!(th(&c), (60, 240), "the timer keeps doubling, as ns-3 does");
    // The timer threshold still works: single failures, 240 attempts.
    let pattern = "SSSSSSSSSF".repeat(23) + "SSSSSSSSS" + "S";
    let rates = feed(&mut c, &pattern);
    assert_eq!(rates.len(), 240);
    assert!(rates[..239].iter().all(|&r| r == 0));
    assert_eq!(rates[239], 1);
    // A normal two-failure fallback resets both thresholds.
    feed(&mut c, &"S".repeat(5));
    assert_eq!(feed(&mut c, "FF"), vec![1, 0]);
    assert_eq!(th(&c), (10, 15));
}

#[test]
fn minstrel_retry_counts_fit_the_segment() {
    let mut c = ctl(RateAlgo::Minstrel, 1);
    let m = minstrel_state(&mut c);
    let counts: Vec<u8> = m.rates.iter().map(|r| r.retry_count).collect();
    // 11 Mb/s: 1602 + (1602+310) + (1602+630) = 5746 us < 6 ms, a fourth try would not fit.
    assert_eq!(counts, vec![1, 1, 2, 3]);
    // A 100 us frame: 100, 510, 1240, 2610, 5260 us for 1..5 tries; the 6th adds a 5.11 ms
    // mean backoff. A lower retry limit caps the count.
    let dsss = Contention::DSSS;
    assert_eq!(tries_within_segment(Nanos::from_us(100), dsss, 7), 5);
    assert_eq!(tries_within_segment(Nanos::from_us(100), dsss, 4), 4);
    let ofdm = Contention { slot: Nanos::from_us(9), cw_min: 15, cw_max: 1023 };
    assert_eq!(tries_within_segment(Nanos::from_us(100), ofdm, 7), 7);
}

/// One statistics interval with given (success, attempts) per rate, then an update.
fn feed_interval(m: &mut Minstrel, counts: [(u32, u32); 4]) {
    for (r, (s, a)) in m.rates.iter_mut().zip(counts) {
        r.success = s;
        r.attempts = a;
    }
    m.update_stats();
}

#[test]
fn minstrel_chain_is_best_tp_second_tp_best_prob_lowest() {
    let mut c = ctl(RateAlgo::Minstrel, 1);
    let m = minstrel_state(&mut c);
    // p = 0.9, 1.0, 0.8, 0.6: tp (capped at 90 %) 11 > 5.5 > 2 > 1; the only rate >= 95 % is
    // 2 Mb/s, so it is max_prob.
    feed_interval(m, [(9, 10), (10, 10), (8, 10), (6, 10)]);
    assert_eq!(m.max_tp, [3, 2]);
    assert_eq!(m.max_prob, 1);
    // Tries: 11 and 5.5 keep their segment counts (3, 2); 2 Mb/s is > 95 %, so
    // min(1 >> 1, 2) = 0 -> 2; the lowest rate gets the retry limit.
    assert_eq!(m.normal_chain(), [(3, 3), (2, 2), (1, 2), (0, 7)]);
    m.chain = m.normal_chain();
    let rates: Vec<u8> = (1..=9).map(|k| m.chain_rate(k)).collect();
    assert_eq!(rates, vec![3, 3, 3, 2, 2, 1, 1, 0, 0]);
    // EWMA: a second interval at 0 % moves 1.0 to 0.75 (75 % old).
    feed_interval(m, [(9, 10), (0, 10), (8, 10), (6, 10)]);
    assert_eq!(m.rates[1].prob_ewma, prob_pct(75));
    // Below 10 % the throughput is 0; above 90 % it is capped.
    m.rates[2].prob_ewma = PROB_MIN_TP - 1;
    assert_eq!(m.rates[2].expected_tp(), 0);
    m.rates[2].prob_ewma = PROB_MIN_TP;
    assert!(m.rates[2].expected_tp() > 0);
    m.rates[3].prob_ewma = PROB_ONE;
    let capped = m.rates[3].expected_tp();
    m.rates[3].prob_ewma = PROB_CAP_TP;
    assert_eq!(capped, m.rates[3].expected_tp());
    // 90 % x 9600 bits / 1602 us = 5.393 Mb/s.
    assert_eq!(capped / 1000, 5393);
}

#[test]
fn minstrel_sample_takes_stage_one_if_faster_and_stage_two_if_slower() {
    let mut c = ctl(RateAlgo::Minstrel, 1);
    let m = minstrel_state(&mut c);
    feed_interval(m, [(10, 10), (10, 10), (8, 10), (2, 10)]);
    assert_eq!((m.max_tp, m.max_prob), ([2, 1], 1));
    // Force a sample on the next frame and put 11 Mb/s, then 1 Mb/s, next in the table.
    for (want, rate) in [(Sample::Direct, 3u8), (Sample::Deferred, 0u8)] {
        m.total_packets = 99;
        m.sample_packets = 0;
        m.sample_deferred = 0;
        m.sample_table[m.sample_row * MINSTREL_SAMPLE_COLUMNS + m.sample_column] = rate;
        m.begin_frame(Nanos::ZERO);
        assert_eq!(m.frame_sample, want);
        let (s, best, prob) = (m.stage(rate), m.stage(2), m.stage(1));
        let expect = match want {
            Sample::Direct => [s, best, prob, (0, 7)],
            _ => [best, s, prob, (0, 7)],
        };
        assert_eq!(m.chain, expect);
        m.end_frame(Nanos::ZERO);
    }
}

#[test]
fn minstrel_statistics_wait_for_the_interval() {
    let mut c = ctl(RateAlgo::Minstrel, 1);
    let r = c.rate_for_attempt(Nanos::ZERO, 1);
    c.on_attempt(Nanos::from_ms(1), r, true);
    c.on_frame_end(Nanos::from_ms(99), true);
    let r = r as usize;
    assert_eq!(minstrel_state(&mut c).rates[r].prob_ewma, 0, "not yet 100 ms");
    c.on_frame_end(Nanos::from_ms(100), true);
    assert_eq!(minstrel_state(&mut c).rates[r].prob_ewma, PROB_ONE);
}

#[test]
fn sample_table_columns_are_permutations_and_depend_on_the_seed() {
    let mut a = ctl(RateAlgo::Minstrel, 1);
    let mut b = ctl(RateAlgo::Minstrel, 2);
    let ta = minstrel_state(&mut a).sample_table.clone();
    let tb = minstrel_state(&mut b).sample_table.clone();
    for col in 0..MINSTREL_SAMPLE_COLUMNS {
        let mut v: Vec<u8> = (0..4).map(|row| ta[row * MINSTREL_SAMPLE_COLUMNS + col]).collect();
        v.sort();
        assert_eq!(v, vec![0, 1, 2, 3]);
    }
    assert_ne!(ta, tb);
}

const END: Nanos = Nanos::from_secs(20);
const WARMUP: Nanos = Nanos::from_secs(1);

#[test]
fn minstrel_settles_on_5_5_with_a_bad_11() {
    let p = [1.0, 1.0, 0.95, 0.05];
    let mut c = ctl(RateAlgo::Minstrel, 7);
    let r = run(&mut c, &p, 11, WARMUP, END);
    eprintln!("minstrel {p:?}: shares {:?}", (0..4).map(|i| r.share(i)).collect::<Vec<_>>());
    assert!(r.best_share(2) >= 0.95, "max_tp at 5.5 Mb/s for {:?} frames", r.best);
    assert!(r.share(2) >= 0.80, "share at 5.5 Mb/s {}", r.share(2));
    let frac = r.sample_frames as f64 / r.frames as f64;
    eprintln!("minstrel sample fraction {frac:.4} of {} frames, best {:?}", r.frames, r.best);
    assert!((0.07..=0.13).contains(&frac), "look-around fraction {frac}");
}

#[test]
fn minstrel_settles_on_11_on_a_clean_channel() {
    let p = [1.0; 4];
    let mut c = ctl(RateAlgo::Minstrel, 7);
    let r = run(&mut c, &p, 11, WARMUP, END);
    eprintln!("minstrel {p:?}: shares {:?}", (0..4).map(|i| r.share(i)).collect::<Vec<_>>());
    assert_eq!(c.current(), 3);
    assert!(r.share(3) >= 0.85, "share at 11 Mb/s {}", r.share(3));
    let frac = r.sample_frames as f64 / r.frames as f64;
    assert!((0.07..=0.13).contains(&frac), "look-around fraction {frac}");
}

#[test]
fn arf_and_aarf_stay_at_5_5_and_aarf_probes_less() {
    let p = [1.0, 1.0, 0.95, 0.05];
    let arf = run(&mut ctl(RateAlgo::Arf, 3), &p, 5, WARMUP, END);
    let aarf = run(&mut ctl(RateAlgo::Aarf, 3), &p, 5, WARMUP, END);
    eprintln!(
        "ARF share at 5.5 {:.3}, probes of 11 {}; AARF share {:.3}, probes {} ({} frames)",
        arf.share(2),
        arf.probes_top,
        aarf.share(2),
        aarf.probes_top,
        arf.frames
    );
    assert!(arf.share(2) > 0.75 && aarf.share(2) > 0.75);
    assert!(aarf.share(2) > arf.share(2));
    assert!(aarf.probes_top * 2 < arf.probes_top, "{} vs {}", aarf.probes_top, arf.probes_top);
}

#[test]
fn every_algorithm_settles_on_the_goodput_maximising_rate() {
    let airtime = dsss_airtime();
    let channels = [[1.0, 1.0, 0.95, 0.05], [1.0, 1.0, 1.0, 1.0], [1.0, 0.98, 0.3, 0.0]];
    let expect = [2, 3, 1];
    for (ch, want) in channels.iter().zip(expect) {
        assert_eq!(goodput_max_rate(ch, &airtime), want, "channel {ch:?}");
        for algo in [RateAlgo::Arf, RateAlgo::Aarf, RateAlgo::Minstrel] {
            let mut c = ctl(algo, 9);
            let r = run(&mut c, ch, 13, WARMUP, END);
            let shares: Vec<String> = (0..4).map(|i| format!("{:.3}", r.share(i))).collect();
            eprintln!(
                "{algo:?} {ch:?}: most used {}, attempt shares {shares:?}, best {:?}, \
                 delivered {:.4}, sample frames {:.3}",
                r.most_used(),
                r.best,
                r.delivered as f64 / r.frames as f64,
                r.sample_frames as f64 / r.frames as f64
            );
            assert_eq!(r.most_used(), want, "{algo:?} on {ch:?}");
            assert!(r.share(want as usize) > 0.5, "{algo:?} on {ch:?}");
            assert!(r.best_share(want as usize) > 0.5, "{algo:?} on {ch:?}: {:?}", r.best);
        }
    }
}

#[test]
fn same_seed_same_rate_sequence() {
    let p = [1.0, 0.9, 0.7, 0.3];
    let end = Nanos::from_secs(3);
    for algo in [RateAlgo::Arf, RateAlgo::Aarf, RateAlgo::Minstrel] {
        let a = run(&mut ctl(algo, 21), &p, 4, Nanos::ZERO, end);
        let b = run(&mut ctl(algo, 21), &p, 4, Nanos::ZERO, end);
        assert_eq!(a.seq, b.seq, "{algo:?}");
        assert!(a.seq.len() > 300, "{} attempts", a.seq.len());
    }
    // Minstrel's draws come only from its own stream: another seed, another sample order.
    let a = run(&mut ctl(RateAlgo::Minstrel, 21), &p, 4, Nanos::ZERO, end);
    let b = run(&mut ctl(RateAlgo::Minstrel, 22), &p, 4, Nanos::ZERO, end);
    assert_ne!(a.seq, b.seq);
}

/// One frame through HostAP's controller: handed, `attempts` attempts at the rate it was handed
/// with (all failed unless `delivered`, then the last is acked), then its end.
fn hostap_frame(c: &mut RateCtl, attempts: u32, delivered: bool) -> u8 {
    c.on_handed();
    hostap_finish(c, attempts, delivered)
}

fn hostap_finish(c: &mut RateCtl, attempts: u32, delivered: bool) -> u8 {
    let rate = c.rate_for_attempt(Nanos::ZERO, 1);
    for k in 1..=attempts {
        assert_eq!(c.rate_for_attempt(Nanos::ZERO, k), rate, "every attempt at the frame's rate");
        c.on_attempt(Nanos::ZERO, rate, delivered && k == attempts);
    }
    c.on_frame_end(Nanos::ZERO, delivered);
    rate
}

#[test]
fn hostap_steps_down_after_two_dropped_frames_with_no_frame_handed_between() {
    let mut c = ctl(RateAlgo::HostAp, 1);
    assert_eq!(c.current(), 3, "a new station starts at its highest rate (hostap_add_sta)");
    // A frame handed between two failures clears the count (ap_update_sta_tx_rate): no step.
    assert_eq!(hostap_frame(&mut c, 7, false), 3);
    assert_eq!(hostap_frame(&mut c, 7, false), 3);
    assert_eq!(c.current(), 3);
    // Two frames in the card that both fail: down one rate, the count starts again.
    c.on_handed();
    c.on_handed();
    assert_eq!(hostap_finish(&mut c, 7, false), 3);
    assert_eq!(c.current(), 3);
    assert_eq!(hostap_finish(&mut c, 7, false), 3);
    assert_eq!(c.current(), 2);
    // Delivered frames never step down.
    for _ in 0..10 {
        assert_eq!(hostap_frame(&mut c, 1, true), 2);
    }
    assert_eq!(c.current(), 2);
}

#[test]
fn hostap_steps_up_after_fifty_frames_handed_since_the_last_failure_and_rates_follow_the_card_fifo() {
    let mut c = ctl(RateAlgo::HostAp, 1);
    c.on_handed();
    c.on_handed();
    hostap_finish(&mut c, 4, false);
    hostap_finish(&mut c, 4, false);
    assert_eq!(c.current(), 2);
    // 49 frames handed and sent at 5.5 Mb/s: no step yet; the 50th is still sent at 5.5 and
    // moves the rate for the frames after it.
    for _ in 0..49 {
        assert_eq!(hostap_frame(&mut c, 1, true), 2);
    }
    assert_eq!(c.current(), 2);
    c.on_handed();
    assert_eq!(c.current(), 3);
    c.on_handed();
    assert_eq!(hostap_finish(&mut c, 1, true), 2, "the 50th keeps the rate it was handed with");
    assert_eq!(hostap_finish(&mut c, 1, true), 3);
    // A failure restarts the count: 49 more successes do not step (already at the top anyway,
    // so step down first).
    c.on_handed();
    c.on_handed();
    hostap_finish(&mut c, 4, false);
    hostap_finish(&mut c, 4, false);
    assert_eq!(c.current(), 2);
    hostap_frame(&mut c, 4, false);
    for _ in 0..49 {
        hostap_frame(&mut c, 1, true);
    }
    assert_eq!(c.current(), 2, "49 since the last failure");
    hostap_frame(&mut c, 1, true);
    assert_eq!(c.current(), 3);
}
