//! Minstrel-HT (Linux 4.11) against hand-computed values: the kernel's group durations and
//! frame overhead, the retry counts of `minstrel_calc_retransmit`, the EWMA, the chain order
//! and the fraction of sampling A-MPDUs.

use super::*;
use rand::SeedableRng;

fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

fn groups(top: u8, gi: GuardInterval) -> Vec<Group> {
    Group::for_link(HtMcs::new(top).unwrap(), ChannelWidth::Mhz20, gi)
}

#[test]
fn durations_and_overhead_are_the_kernels() {
    // MCS 0, 1 stream, LGI: ceil(9600 / 26) = 370 symbols of 4 µs.
    assert_eq!(mcs_duration_ns(1, false, 26), 1_480_000);
    // MCS 15 SGI: ceil(9600 / 520) = 19 symbols, (19 · 18000 + 4000) / 5 ns.
    assert_eq!(mcs_duration_ns(2, true, 260), 69_200);
    // 6 Mb/s: 16 + 16 + 4 + 4 · ceil((16 + 8 · 4 + 6) · 10 / 240) = 48 µs for 0 bytes; the
    // ACK (10 bytes) ceil(1340 / 240) = 6 symbols: 60 µs.
    assert_eq!(ofdm6_frame_duration_us(0), 48);
    assert_eq!(ofdm6_frame_duration_us(10), 60);
    let g = groups(15, GuardInterval::Short);
    assert_eq!(g.len(), 2);
    assert_eq!((g[0].supported, g[1].supported), (0xff, 0xff));
    assert_eq!(g[1].duration[7], 69_200);
    let g = groups(3, GuardInterval::Long);
    assert_eq!((g.len(), g[0].supported), (1, 0x0f));
}

#[test]
fn ewma_is_three_quarters_old() {
    // 4096 (100 %) after an interval at 0 %: 4096 + 32 · (0 − 4096) / 128 = 3072.
    assert_eq!(ewma(frac(1, 1), 0, EWMA_LEVEL), 3072);
    // Truncation toward zero as in C: 3072 + 32 · (1000 − 3072) / 128 = 3072 − 518 = 2554.
    assert_eq!(ewma(3072, 1000, EWMA_LEVEL), 2554);
    // Through the controller: MCS 0 all acked (100 %), then an interval with half acked.
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(1));
    let c = RateChain::single(0, 1);
    m.tx_status(Nanos::from_ms(1), &c, 0, 1, 1, 1);
    m.tx_status(Nanos::from_ms(51), &c, 0, 1, 1, 1);
    assert_eq!(m.prob_ewma(0), 4096, "the first interval takes the sample as it is");
    m.tx_status(Nanos::from_ms(60), &c, 0, 1, 2, 1);
    m.tx_status(Nanos::from_ms(102), &c, 0, 1, 2, 1);
    // 4 attempts, 2 successes: 2048; 4096 + 32 · (2048 − 4096) / 128 = 3584.
    assert_eq!(m.prob_ewma(0), 3584);
}

#[test]
fn retry_counts_fit_the_six_ms_segment() {
    // MCS 7 at 20 MHz LGI: 37 symbols, 148 µs per 1200 B. At avg_ampdu_len 10 the data of one
    // try is 1480 µs. Contention of tries 1-2: 9·15/2 + 9·31/2 = 67 + 139 = 206 µs;
    // 206 + 2 · (108 + 1480) = 3382; try 3: + 9·63/2 (283) + 1588 = 5253 < 6000 → 3;
    // try 4: + 571 + 1588 = 7412 ≥ 6000 → stop: count 3. With RTS/CTS (overhead 228):
    // 206 + 2 · 1708 = 3622, + 283 + 1708 = 5613 < 6000 → 3, + 571 + 1708 = 7892 → 3.
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(1));
    m.avg_ampdu_len = frac(10, 1);
    m.stats[0][7].prob_ewma = frac(1, 1);
    assert_eq!(m.set_rate(0, 7), Series { rate: 7, count: 3 });
    // MCS 15 SGI at 32 MPDUs: 69.2 µs · 32 = 2214 µs; 206 + 2 · 2322 = 4850, + 283 + 2322 =
    // 7455: count 2 (and 2 with RTS/CTS: 5090, 7815).
    let mut m = MinstrelHt::new(groups(15, GuardInterval::Short), Nanos::ZERO, &mut rng(1));
    m.avg_ampdu_len = frac(32, 1);
    m.stats[1][7].prob_ewma = frac(1, 1);
    assert_eq!(m.set_rate(0, 15), Series { rate: 15, count: 2 });
    // MCS 0 SGI, single frames: ceil(9600/26) = 370 symbols → (370·18000 + 4000)/5 = 1 332 800
    // ns → 1332 µs. 206 + 2·1440 = 3086; +283+1440 = 4809 → 3; +571+1440 = 6820 → stop: 3.
    // RTS/CTS: 206 + 2·1560 = 3326; +283+1560 = 5169 → 3; +571+1560 = 7300: 3.
    m.avg_ampdu_len = frac(1, 1);
    m.stats[0][0].prob_ewma = frac(1, 1);
    m.stats[0][0].retry_updated = false;
    assert_eq!(m.set_rate(1, 0), Series { rate: 0, count: 3 });
    // A short frame: MCS 7 SGI, 1 MPDU: 37 symbols, (37·18000 + 4000)/5 = 134 µs. 206 + 2·242 =
    // 690; tries 3-6 add 283, 571, 1147, 2299 of contention (CW 63, 127, 255, 511) and 242
    // each: 1215, 2028, 3417, 5958 < 6000; try 7 (CW 1023: 4603) passes 6000: count 6.
    m.stats[0][7].prob_ewma = frac(1, 1);
    assert_eq!(m.set_rate(0, 7), Series { rate: 7, count: 6 });
    // Below 20 % every stage gets 2 tries (`minstrel_ht_set_rate`).
    m.stats[0][5].prob_ewma = frac(15, 100);
    assert_eq!(m.set_rate(0, 5).count, 2);
    m.stats[0][4].prob_ewma = frac(5, 100);
    assert_eq!(m.set_rate(0, 4).count, 2);
}

/// One A-MPDU of `len` MPDUs through `c`: the first stage whose rate is at or below `works`
/// delivers everything, faster rates lose everything.
fn send(m: &mut MinstrelHt, now: Nanos, c: &RateChain, works: u8, len: u32) {
    send_if(m, now, c, |rate| rate <= works, len);
}

#[test]
fn the_chain_is_max_tp_max_tp2_max_prob() {
    // A link where MCS 0-4 always work and 5-7 never: after the statistics settle, max_tp[0]
    // is MCS 4, max_tp[1] MCS 3, and max_prob the best rate above 75 %: MCS 4. At 10 MPDUs
    // per A-MPDU the counts are (hand-computed as above with 9600-bit durations 384, 260 µs ·
    // 10 / 1000): MCS 4 (156 bits/sym: 62 symbols, 248 µs → 2480 µs): 206 + 2·2588 = 5382,
    // + 283 + 2588 ≥ 6000 → 2. MCS 3 fallback (RTS count, 104 bits: 93 sym, 372 µs → 3720):
    // 206 + 2·3948 ≥ 6000 → 2.
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(3));
    for k in 0..4000u64 {
        let now = Nanos::from_us(k * 500);
        let c = m.get_rates();
        send(&mut m, now, &c, 4, if c.probe { 1 } else { 10 });
    }
    assert_eq!(m.max_tp_rate()[0], 4);
    assert_eq!(m.max_tp_rate()[1], 3);
    assert_eq!(m.max_prob_rate(), 4);
    assert_eq!(trunc(m.avg_ampdu_len()), 9, "sampling frames are single MPDUs");
    let t = m.rate_table();
    assert_eq!(t.series(), &[Series { rate: 4, count: 2 }, Series { rate: 3, count: 2 }, Series { rate: 4, count: 2 }]);
}

#[test]
fn one_ampdu_in_nineteen_samples_when_frames_are_single() {
    // With single-MPDU frames (avg_ampdu_len 1) a sample is armed 16 + 2 = 18 TX statuses after
    // the last; the 19th call samples. Only MCS 0 works, so max_tp and max_prob are all MCS 0,
    // the faster rates are never "slow" samples and never above 95 %: a sample is refused only
    // when the table gives MCS 0 (1 of 8), which costs one more frame. 8 samples per
    // 7·19 + 20 = 153 frames: 5.23 %. The 4 initial tries and the per-interval budget
    // (8 per 50 ms) do not bind at one frame per ms.
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(7));
    let n = 153 * 40;
    let mut probes = 0;
    for k in 0..n as u64 {
        let c = m.get_rates();
        if c.probe {
            probes += 1;
            assert_eq!(c.s[0].count, 1, "a sample is tried once");
            assert_ne!(c.s[0].rate, 0);
        }
        send(&mut m, Nanos::from_ms(k + 1), &c, 0, 1);
    }
    let f = probes as f64 / n as f64;
    assert!((f - 8.0 / 153.0).abs() < 0.002, "sampling fraction {f}, expected 8/153 = 0.0523");
    // With 10-MPDU aggregates the wait is 16 + 20 = 36: about 1 in 37.
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(7));
    let mut probes = 0;
    for k in 0..n as u64 {
        let c = m.get_rates();
        probes += c.probe as u32;
        send(&mut m, Nanos::from_ms(k + 1), &c, 0, if c.probe { 1 } else { 10 });
    }
    let f = probes as f64 / n as f64;
    assert!(f > 1.0 / 40.0 && f < 1.0 / 30.0, "sampling fraction {f} with 10-MPDU aggregates");
}

#[test]
fn a_probe_leads_the_table_and_keeps_three_table_entries() {
    let mut m = MinstrelHt::new(groups(7, GuardInterval::Long), Nanos::ZERO, &mut rng(5));
    let t = m.rate_table();
    // At association nothing is known: MCS 0 everywhere, 2 tries each (below 20 %).
    assert_eq!(t.series(), &[Series { rate: 0, count: 2 }; 3]);
    let c = m.get_rates();
    assert!(c.probe, "the first frame samples (MRR: 4 tries, no wait)");
    assert_eq!(c.len, 4);
    assert_eq!(&c.s[1..4], t.series());
    assert_eq!(c.total_tries(), 7);
    assert_eq!(c.stage_of_try(0), Some(0));
    assert_eq!(c.stage_of_try(1), Some(1));
    assert_eq!(c.stage_of_try(6), Some(3));
    assert_eq!(c.stage_of_try(7), None);
}

#[test]
fn sudden_death_of_two_streams_falls_back_to_one() {
    let mut m = MinstrelHt::new(groups(15, GuardInterval::Short), Nanos::ZERO, &mut rng(9));
    // Everything works for a while: the best rate is two-stream.
    for k in 0..2000u64 {
        let c = m.get_rates();
        send(&mut m, Nanos::from_us(k * 400), &c, 15, if c.probe { 1 } else { 20 });
    }
    assert!(m.max_tp_rate()[0] >= 8, "a two-stream rate leads: {:?}", m.max_tp_rate());
    // Two streams die. The first TX status 60 ms later folds the old interval; in the new one
    // more than 30 attempts at max_tp[0] under 20 % success drop it to the one-stream group at
    // once (`minstrel_downgrade_rate`), without waiting for the next fold.
    let t0 = Nanos::from_us(2000 * 400) + Nanos::from_ms(60);
    let mut k = 0;
    while m.max_tp_rate()[0] >= 8 && k < 10 {
        let c = m.get_rates();
        send(&mut m, t0 + Nanos::from_us(k), &c, 7, 20);
        k += 1;
    }
    assert!(m.max_tp_rate()[0] < 8, "still {:?}", m.max_tp_rate());
    assert!(k <= 3, "took {k} A-MPDUs");
}

fn vht(mcs: u8, nss: u8, width: vht::Width, gi: GuardInterval) -> VhtTxVector {
    VhtTxVector::new(mcs, nss, width, gi).unwrap()
}

#[test]
fn vht_groups_are_the_kernels() {
    use vht::Width::{Mhz20, Mhz80};
    // Linux 5.10's VHT durations: symbols for 16 frames of 1200 bytes (153 600 bits), the time
    // divided by 16, then cut to the group's 16-bit shift. 80 MHz long GI, one stream: MCS 0
    // (117 bits per symbol) ceil(153600 / 117) = 1313 symbols, 5 252 000 / 16 = 328 250 ns,
    // 19 bits long: shift 3. MCS 0 → 328 248; MCS 9 (1560 bits) 99 symbols, 396 000 / 16 =
    // 24 750 → 24 744. Two streams: MCS 0 657 symbols, 164 250 ns, 18 bits: shift 2; MCS 9
    // (3120) 50 symbols, 12 500 → 12 500.
    let g = vht_groups(vht(9, 2, Mhz80, GuardInterval::Long));
    assert_eq!(g.len(), 2);
    assert_eq!((g[0].rates, g[0].supported, g[1].supported), (10, 0x3ff, 0x3ff));
    assert_eq!((g[0].duration[0], g[0].duration[9], g[1].duration[9]), (328_248, 24_744, 12_500));
    // Short GI: 99 symbols, (99 · 18000 + 4000) / 5 = 357 200, / 16 = 22 325; MCS 0
    // (1313 · 18000 + 4000) / 5 / 16 = 295 475, 19 bits: shift 3 → 22 320.
    assert_eq!(vht_groups(vht(9, 1, Mhz80, GuardInterval::Short))[0].duration[9], 22_320);
    // 20 MHz: MCS 9 exists only with 3 streams (N_DBPS 346.67 per stream is not an integer);
    // 80 MHz: MCS 6 does not exist with 3 streams. Kernel masks 0x1ff and 0x3bf.
    let g = vht_groups(vht(8, 3, Mhz20, GuardInterval::Long));
    assert_eq!(g.iter().map(|g| g.supported).collect::<Vec<_>>(), vec![0x1ff, 0x1ff, 0x1ff]);
    let g = vht_groups(vht(9, 3, Mhz20, GuardInterval::Long));
    assert_eq!(g.iter().map(|g| g.supported).collect::<Vec<_>>(), vec![0x1ff, 0x1ff, 0x3ff]);
    // MCS 9 at 20 MHz, one stream, 346 bits as the kernel's table has it: 444 symbols,
    // 1 776 000 / 16 = 111 000; MCS 0 5908 symbols, 1 477 000 ns, 21 bits: shift 5 → 110 976.
    assert_eq!(g[0].duration[9], 110_976);
    let g = vht_groups(vht(9, 3, Mhz80, GuardInterval::Long));
    assert_eq!(g[2].supported, 0x3bf);
    // A rate index is group · 10 + MCS; the vector keeps the link's width and GI.
    let top = TxVector::Vht(vht(9, 2, Mhz80, GuardInterval::Short));
    assert_eq!(vector_at(top, 19), TxVector::Vht(vht(9, 2, Mhz80, GuardInterval::Short)));
    assert_eq!(vector_at(top, 4), TxVector::Vht(vht(4, 1, Mhz80, GuardInterval::Short)));
    let ht = TxVector::Ht(HtTxVector::new(HtMcs::new(15).unwrap(), ChannelWidth::Mhz40, GuardInterval::Long));
    assert_eq!(
        vector_at(ht, 12),
        TxVector::Ht(HtTxVector::new(HtMcs::new(12).unwrap(), ChannelWidth::Mhz40, GuardInterval::Long))
    );
}

/// Like [`send`], with the link's behaviour given per rate index.
fn send_if(m: &mut MinstrelHt, now: Nanos, c: &RateChain, works: impl Fn(u8) -> bool, len: u32) {
    for (i, s) in c.series().iter().enumerate() {
        if works(s.rate) {
            m.tx_status(now, c, i, 1, len, len);
            return;
        }
    }
    let last = c.len as usize - 1;
    m.tx_status(now, c, last, c.s[last].count, len, 0);
}

#[test]
fn on_vht_groups_the_best_working_rate_leads() {
    use vht::Width::Mhz80;
    let top = TxVector::Vht(vht(9, 2, Mhz80, GuardInterval::Short));
    // Every rate up to MCS 7 works with one or two streams, MCS 8-9 never: the two-stream MCS 7
    // (index 17: 66 symbols per 16 frames, 14 900 ns a frame) leads, the two-stream MCS 6 (73
    // symbols, 16 472 ns) is second. (With 4.11's one-frame table both took 5 symbols and tied.)
    let works = |i: u8| i % 10 <= 7;
    let mut m = MinstrelHt::new(groups_for(top), Nanos::ZERO, &mut rng(11));
    let mut probed = [false; 20];
    for k in 0..6000u64 {
        let c = m.get_rates();
        if c.probe {
            probed[c.s[0].rate as usize] = true;
        }
        send_if(&mut m, Nanos::from_us(k * 300), &c, works, if c.probe { 1 } else { 16 });
    }
    assert_eq!(&m.max_tp_rate()[..2], &[17, 16], "{:?}", m.max_tp_rate());
    assert_eq!(vector_at(top, m.max_tp_rate()[0]), TxVector::Vht(vht(7, 2, Mhz80, GuardInterval::Short)));
    // Sampling reaches the VHT-only rates MCS 8 and 9 of both groups.
    assert!(probed[8] || probed[9], "one-stream MCS 8/9 never sampled");
    assert!(probed[18] || probed[19], "two-stream MCS 8/9 never sampled");
    // Two streams die: the leader falls back to the one-stream group.
    let t0 = Nanos::from_us(6000 * 300) + Nanos::from_ms(60);
    let mut k = 0;
    while m.max_tp_rate()[0] >= 10 && k < 10 {
        let c = m.get_rates();
        send_if(&mut m, t0 + Nanos::from_us(k), &c, |i| i < 10 && works(i), 16);
        k += 1;
    }
    assert!(m.max_tp_rate()[0] < 10, "still {:?}", m.max_tp_rate());
}
