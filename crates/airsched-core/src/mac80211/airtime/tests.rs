use super::*;
use crate::mac80211::aql::{tx_time_est, AqlParams};

const BE: Ac = Ac::Be;

fn tin(sta: u16) -> TinId {
    TinId::new(StationId(sta), 0)
}

fn sched(kind: AtfKind, n: usize) -> (AirtimeScheduler, Aql) {
    (AirtimeScheduler::new(kind, AirtimeParams::default(), n), Aql::new(AqlParams::default(), n))
}

/// What a saturated run measured per station.
struct Run {
    airtime_us: Vec<u64>,
    packets: Vec<u64>,
    /// Every aggregate: (start of its transmission, station, airtime µs).
    log: Vec<(Nanos, u16, u32)>,
}

/// A driver with a two-aggregate hardware queue (ath9k's `ATH_AGGR_MIN_QDEPTH`), every station
/// always backlogged on BE, each aggregate taking `per_agg_us[sta]` of air. It refills the
/// hardware queue from the scheduler, transmits the head, and reports its airtime at completion
/// (and releases its AQL estimate), `completions` times.
fn run_saturated(atf: &mut AirtimeScheduler, aql: &mut Aql, per_agg_us: &[u32], completions: usize) -> Run {
    let n = per_agg_us.len();
    let mut now = Nanos::ZERO;
    for s in 0..n as u16 {
        atf.wake(tin(s), now, aql);
    }
    let mut hw: VecDeque<(TinId, u32, u32)> = VecDeque::new();
    let mut run = Run { airtime_us: vec![0; n], packets: vec![0; n], log: Vec::new() };
    for _ in 0..completions {
        while hw.len() < 2 {
            atf.schedule_start(BE, aql, now);
            let Some(t) = atf.next_tin(BE, aql, |_| true) else {
                // A cap may hold everyone back: the air stays idle until its balance is back.
                if hw.is_empty() {
                    if let Some(w) = atf.cap_wake(now) {
                        assert!(w > now, "a wake-up is in the future");
                        now = now.max(w);
                        continue;
                    }
                }
                break;
            };
            let sta = t.station();
            if atf.kind() == AtfKind::Mac80211 && !aql.can_queue(sta, BE) {
                atf.return_tin(t, true, now, aql);
                break;
            }
            let air = per_agg_us[sta.0 as usize];
            let est = tx_time_est(air);
            aql.on_queued(sta, BE, est);
            atf.on_built(t, air, now);
            hw.push_back((t, air, est));
            atf.return_tin(t, true, now, aql);
        }
        let (t, air, est) = hw.pop_front().expect("saturated stations keep the hardware busy");
        run.log.push((now, t.station().0, air));
        now += Nanos::from_us(air as u64);
        atf.report_airtime(t, air, 0, now);
        atf.report_policy_airtime(t, air, 0, air, now);
        aql.on_completed(t.station(), BE, est);
        run.airtime_us[t.station().0 as usize] += air as u64;
        run.packets[t.station().0 as usize] += 1;
    }
    run
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}

#[test]
fn slow_and_fast_stations_get_equal_airtime_and_the_packet_counts_invert() {
    // One station's aggregates take 10x the air of the other's. Without airtime accounting
    // the schedulers alternate: equal packets, 1:10 airtime (the performance anomaly). With it,
    // airtime is equal within 5 % and the fast station sends ~10x the packets.
    for kind in [AtfKind::Ath9k, AtfKind::Mac80211] {
        let (mut atf, mut aql) = sched(kind, 2);
        let r = run_saturated(&mut atf, &mut aql, &[100, 1_000], 40_000);
        let share = ratio(r.airtime_us[0], r.airtime_us[1]);
        assert!((0.95..1.05).contains(&share), "{kind:?}: airtime fast/slow {share:.3}");
        let pk = ratio(r.packets[0], r.packets[1]);
        assert!((9.0..11.0).contains(&pk), "{kind:?}: packets fast/slow {pk:.2}");

        let off = AirtimeParams { use_tx: false, use_rx: false, ..AirtimeParams::default() };
        let mut atf = AirtimeScheduler::new(kind, off, 2);
        let mut aql = Aql::new(AqlParams::default(), 2);
        let r = run_saturated(&mut atf, &mut aql, &[100, 1_000], 40_000);
        let pk = ratio(r.packets[0], r.packets[1]);
        assert!((0.95..1.05).contains(&pk), "{kind:?} round robin: packets {pk:.3}");
        let share = ratio(r.airtime_us[1], r.airtime_us[0]);
        assert!((9.5..10.5).contains(&share), "{kind:?} round robin: airtime slow/fast {share:.2}");
        assert_eq!(atf.station(StationId(0)).deficit_us[BE.index()], atf.station(StationId(1)).deficit_us[BE.index()]);
    }
}

#[test]
fn weights_2_to_1_give_2_to_1_airtime() {
    // mac80211 only (ath9k had no weights). Equal aggregates of 500 us; weights 512 and 256.
    let (mut atf, mut aql) = sched(AtfKind::Mac80211, 2);
    atf.set_weight(StationId(0), 512);
    let r = run_saturated(&mut atf, &mut aql, &[500, 500], 30_000);
    let share = ratio(r.airtime_us[0], r.airtime_us[1]);
    assert!((1.9..2.1).contains(&share), "airtime 0/1 {share:.3}");
    // Three stations 3:2:1 with unequal aggregates: shares follow the weights, not the rates.
    let (mut atf, mut aql) = sched(AtfKind::Mac80211, 3);
    atf.set_weight(StationId(0), 768);
    atf.set_weight(StationId(1), 512);
    let r = run_saturated(&mut atf, &mut aql, &[300, 1_200, 700], 60_000);
    let (a, b, c) = (r.airtime_us[0] as f64, r.airtime_us[1] as f64, r.airtime_us[2] as f64);
    assert!((a / c - 3.0).abs() < 0.15 && (b / c - 2.0).abs() < 0.1, "{a} {b} {c}");
}

#[test]
fn ath9k_a_station_in_debt_waits_out_its_quanta() {
    // Both TIDs on the new list with 300 us. A is charged 1000 us: -700. Each time A reaches
    // the head it gets +300 and goes to the back; B (charged 300 per turn) is served each turn
    // in between: B, B, B, then A (at +200).
    let (mut atf, aql) = sched(AtfKind::Ath9k, 2);
    atf.wake(tin(0), Nanos::ZERO, &aql);
    atf.wake(tin(1), Nanos::ZERO, &aql);
    atf.report_airtime(tin(0), 1_000, 0, Nanos::ZERO);
    assert_eq!(atf.station(StationId(0)).deficit_us[BE.index()], -700);
    let mut order = vec![];
    for _ in 0..4 {
        let t = atf.next_tin(BE, &aql, |_| true).unwrap();
        order.push(t.station().0);
        if t == tin(1) {
            atf.report_airtime(t, 300, 0, Nanos::ZERO);
        }
    }
    assert_eq!(order, [1, 1, 1, 0]);
    assert_eq!(atf.station(StationId(0)).deficit_us[BE.index()], 200);
}

#[test]
fn ath9k_a_sparse_station_is_served_first_unless_in_debt() {
    let (mut atf, mut aql) = sched(AtfKind::Ath9k, 3);
    // Two saturated stations run a while: both end up on the old list.
    run_saturated(&mut atf, &mut aql, &[100, 1_000], 1_000);
    assert!(atf.lists.new[BE.index()].is_empty());
    // Station 2 wakes with a positive deficit: the new list, served before the old list.
    atf.wake(tin(2), Nanos::ZERO, &aql);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(2)));
    // Its frame goes out; once it has nothing left it is parked on the old list...
    let empty2 = |t: TinId| t != tin(2);
    assert_ne!(atf.next_tin(BE, &aql, empty2), Some(tin(2)));
    assert_eq!(atf.lists.listed[tin(2).index()], Listed::Old);
    // ... and then charged 2 ms: in debt, it stays on the old list, so new frames get no boost.
    atf.report_airtime(tin(2), 2_000, 0, Nanos::ZERO);
    atf.wake(tin(2), Nanos::ZERO, &aql);
    assert_eq!(atf.lists.listed[tin(2).index()], Listed::Old);
    assert!(atf.lists.new[BE.index()].is_empty());
}

#[test]
fn ath9k_a_tid_charged_into_debt_after_leaving_is_requeued_to_repay() {
    let (mut atf, aql) = sched(AtfKind::Ath9k, 1);
    atf.wake(tin(0), Nanos::ZERO, &aql);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(0)));
    // Empty with deficit 300 and no old list: it leaves.
    assert_eq!(atf.next_tin(BE, &aql, |_| false), None);
    assert!(!atf.is_listed(tin(0)));
    // Its aggregate completes: 500 us. Deficit -200: back on the old list (not new).
    atf.report_airtime(tin(0), 500, 0, Nanos::ZERO);
    assert_eq!(atf.lists.listed[tin(0).index()], Listed::Old);
    // Rotation refills it (+300 = 100) and then drops it as empty.
    assert_eq!(atf.next_tin(BE, &aql, |_| false), None);
    assert_eq!((atf.is_listed(tin(0)), atf.station(StationId(0)).deficit_us[BE.index()]), (false, 100));
    // RX airtime counts too (AIRTIME_USE_RX), and the totals keep TX and RX apart.
    atf.report_airtime(tin(0), 0, 150, Nanos::ZERO);
    let s = atf.station(StationId(0));
    assert_eq!((s.deficit_us[BE.index()], s.tx_airtime_us[BE.index()], s.rx_airtime_us[BE.index()]), (-50, 500, 150));
}

#[test]
fn mac80211_a_waking_station_goes_to_the_head() {
    let (mut atf, mut aql) = sched(AtfKind::Mac80211, 3);
    run_saturated(&mut atf, &mut aql, &[100, 1_000], 1_000);
    atf.wake(tin(2), Nanos::from_ms(200), &aql);
    assert_eq!(atf.lists.old[BE.index()].front(), Some(&tin(2)));
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(2)));
}

#[test]
fn mac80211_serves_each_txq_once_per_round() {
    let (mut atf, aql) = sched(AtfKind::Mac80211, 2);
    atf.wake(tin(0), Nanos::ZERO, &aql);
    atf.wake(tin(1), Nanos::ZERO, &aql);
    // Both at the head in turn: the last woken first.
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(1)));
    atf.return_tin(tin(1), true, Nanos::ZERO, &aql);
    // Back at the head with a non-negative deficit, already served this round: nothing more.
    assert_eq!(atf.next_tin(BE, &aql, |_| true), None);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(1)));
    // Charged into debt, it is refilled by its weight and moved back: tin 0's turn.
    atf.report_airtime(tin(1), 600, 0, Nanos::ZERO);
    atf.return_tin(tin(1), true, Nanos::ZERO, &aql);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(0)));
    assert_eq!(atf.station(StationId(1)).deficit_us[BE.index()], 256 - 600 + 256);
}

#[test]
fn mac80211_counts_pending_airtime_against_the_deficit() {
    // Station 1 has 300 us in flight (AQL pending) and deficit 256: effective -44, so it is
    // skipped (and refilled) although nothing was charged yet.
    let (mut atf, mut aql) = sched(AtfKind::Mac80211, 2);
    atf.wake(tin(0), Nanos::ZERO, &aql);
    atf.wake(tin(1), Nanos::ZERO, &aql);
    aql.on_queued(StationId(1), BE, 300);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(0)));
    assert_eq!(atf.station(StationId(1)).deficit_us[BE.index()], 512);
}

#[test]
fn mac80211_aql_limits_stop_scheduling() {
    let (mut atf, mut aql) = sched(AtfKind::Mac80211, 2);
    atf.wake(tin(0), Nanos::ZERO, &aql);
    // Station 0 alone at 12 ms pending: the per-station check fails (round runs, nothing
    // eligible), and with one active TXQ the PHY-wide limit (12 ms) closes the round.
    aql.on_queued(StationId(0), BE, 12_000);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), None);
    assert_eq!(atf.round[BE.index()], 0);
    aql.on_completed(StationId(0), BE, 8_000);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    // 4 ms pending against deficit 256 + refills: refilled until non-negative, then served.
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(0)));
}

#[test]
fn mac80211_only_recently_active_stations_are_charged_or_kept() {
    let (mut atf, aql) = sched(AtfKind::Mac80211, 1);
    // Never active: TX totals grow, the deficit does not.
    atf.report_airtime(tin(0), 1_000, 0, Nanos::ZERO);
    assert_eq!(atf.station(StationId(0)).deficit_us[BE.index()], 256);
    atf.wake(tin(0), Nanos::from_ms(10), &aql);
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    assert_eq!(atf.next_tin(BE, &aql, |_| true), Some(tin(0)));
    atf.report_airtime(tin(0), 1_000, 0, Nanos::from_ms(50));
    assert_eq!(atf.station(StationId(0)).deficit_us[BE.index()], -744);
    // Empty but in debt and active 60 ms ago: kept on the list to repay.
    atf.return_tin(tin(0), false, Nanos::from_ms(70), &aql);
    assert!(atf.is_listed(tin(0)));
    // A later report more than 100 ms after it was last active is not charged.
    atf.report_airtime(tin(0), 1_000, 0, Nanos::from_ms(111));
    let s = atf.station(StationId(0));
    assert_eq!((s.deficit_us[BE.index()], s.tx_airtime_us[BE.index()]), (-744, 3_000));
    // Handed back empty after 100 ms idle: dropped from the list with its debt.
    atf.schedule_start(BE, &aql, Nanos::ZERO);
    let t = atf.next_tin(BE, &aql, |_| false);
    assert_eq!(t, Some(tin(0)), "refilled by weight until non-negative, then returned");
    atf.return_tin(tin(0), false, Nanos::from_ms(200), &aql);
    assert!(!atf.is_listed(tin(0)));
}

// ---- Airtime policies (policy.rs): groups, caps, minimum rates on the mac80211 scheduler ----

use crate::mac80211::policy::{GroupParams, PolicyParams};

fn group(name: &str, weight: u32, parent: Option<u16>, cap_pct: Option<u32>) -> GroupParams {
    GroupParams { name: name.into(), weight, parent, cap_ppm: cap_pct.map(|p| p * 10_000) }
}

fn with_policy(n: usize, p: PolicyParams) -> (AirtimeScheduler, Aql) {
    let (mut atf, aql) = sched(AtfKind::Mac80211, n);
    atf.set_policy(&p);
    (atf, aql)
}

/// A small deterministic generator (xorshift) for the seeded properties.
fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn group_weights_1_2_1_give_25_50_25_percent_for_any_aggregate_sizes() {
    // Seeded: 4 stations, groups a {0}, b {1, 2}, c {3}, weights 1:2:1, every station's
    // aggregates of a random length (100 µs to 4 ms). Shares within 3 % (relative) of 25/50/25.
    for seed in 1..=20u64 {
        let mut x = seed * 0x9e37_79b9_7f4a_7c15;
        let per: Vec<u32> = (0..4).map(|_| 100 + (xorshift(&mut x) % 3_900) as u32).collect();
        let p = PolicyParams {
            groups: vec![group("a", 1, None, None), group("b", 2, None, None), group("c", 1, None, None)],
            station_group: vec![Some(0), Some(1), Some(1), Some(2)],
            min_rate_bps: vec![],
        };
        let (mut atf, mut aql) = with_policy(4, p);
        let r = run_saturated(&mut atf, &mut aql, &per, 20_000);
        let total: u64 = r.airtime_us.iter().sum();
        let share = |i: &[usize]| i.iter().map(|&k| r.airtime_us[k]).sum::<u64>() as f64 / total as f64;
        let got = [share(&[0]), share(&[1, 2]), share(&[3])];
        for (g, want) in got.iter().zip([0.25, 0.5, 0.25]) {
            assert!((g / want - 1.0).abs() < 0.03, "seed {seed}, aggregates {per:?}: shares {got:?}");
        }
    }
}

#[test]
fn nested_groups_split_their_parents_share() {
    // home (3) = kids (1) + adults (2); guests (1): 25 / 50 / 25 %.
    let p = PolicyParams {
        groups: vec![
            group("home", 3, None, None),
            group("kids", 1, Some(0), None),
            group("adults", 2, Some(0), None),
            group("guests", 1, None, None),
        ],
        station_group: vec![Some(1), Some(2), Some(3)],
        min_rate_bps: vec![],
    };
    let (mut atf, mut aql) = with_policy(3, p);
    let r = run_saturated(&mut atf, &mut aql, &[3_800, 900, 2_500], 30_000);
    let total: u64 = r.airtime_us.iter().sum();
    let got: Vec<f64> = r.airtime_us.iter().map(|&a| a as f64 / total as f64).collect();
    for (g, want) in got.iter().zip([0.25, 0.5, 0.25]) {
        assert!((g / want - 1.0).abs() < 0.03, "shares {got:?}");
    }
}

#[test]
fn a_cap_is_never_exceeded_by_more_than_one_aggregate_in_any_second() {
    // Seeded: a capped group (20 %) of two stations beside two uncapped ones, random aggregate
    // lengths; every window of one second starting at any aggregate's start holds at most
    // 200 ms + one aggregate of the group's airtime. Also alone on the air (the cap idles it).
    for seed in 1..=10u64 {
        let mut x = seed * 0x2545_f491_4f6c_dd1d;
        let per: Vec<u32> = (0..4).map(|_| 200 + (xorshift(&mut x) % 3_800) as u32).collect();
        for n in [4usize, 2] {
            let p = PolicyParams {
                groups: vec![group("guests", 1, None, Some(20))],
                station_group: (0..n).map(|s| (s < 2).then_some(0)).collect(),
                min_rate_bps: vec![],
            };
            let (mut atf, mut aql) = with_policy(n, p);
            let r = run_saturated(&mut atf, &mut aql, &per[..n], 8_000);
            let guest: Vec<(Nanos, u32)> = r.log.iter().filter(|e| e.1 < 2).map(|e| (e.0, e.2)).collect();
            let biggest = *per[..2].iter().max().unwrap() as u64;
            let end = r.log.last().unwrap().0;
            let mut j = 0;
            let mut worst = 0u64;
            for i in 0..guest.len() {
                let from = guest[i].0;
                if from + Nanos::from_secs(1) > end {
                    break;
                }
                while j < guest.len() && guest[j].0 < from + Nanos::from_secs(1) {
                    j += 1;
                }
                let used: u64 = guest[i..j].iter().map(|e| e.1 as u64).sum();
                worst = worst.max(used);
                // Paid when built, sent when the aggregate ahead of it is done: the group may
                // have paid up to one aggregate (4 ms) before the window for what it sends in it.
                let bound = 200_000 + biggest + 4_000 / 5;
                assert!(
                    used <= bound,
                    "seed {seed}, n {n}, aggregates {per:?}: {used} µs of guest air in the second from {from}"
                );
            }
            // Alone on the air the guests use their whole 20 %; beside busy stations they can
            // start only when the hardware queue has room while their balance is not negative
            // (no burst), so part of it goes unused (65-90 % of it is used in these seeds).
            let floor = if n == 2 { 190_000 } else { 100_000 };
            assert!(worst > floor, "seed {seed}, n {n}: the cap should bind, worst second {worst}");
        }
    }
}

#[test]
fn a_minimum_rate_lifts_a_slow_station_above_its_fair_share() {
    // Two stations, equal aggregates of 1000 µs; station 1's carry 1/10 of the payload of
    // station 0's. The scheduler is told of deliveries as the driver would (bytes at TX status).
    fn run(min_bps: u64) -> (f64, f64) {
        let p = PolicyParams { groups: vec![], station_group: vec![], min_rate_bps: vec![0, min_bps] };
        let (mut atf, mut aql) = with_policy(2, p);
        let mut now = Nanos::ZERO;
        for s in 0..2 {
            atf.wake(tin(s), now, &aql);
        }
        let mut bytes = [0u64; 2];
        for _ in 0..20_000 {
            atf.schedule_start(BE, &aql, now);
            let t = atf.next_tin(BE, &aql, |_| true).expect("backlogged");
            let s = t.station().0 as usize;
            let est = tx_time_est(1000);
            aql.on_queued(t.station(), BE, est);
            atf.return_tin(t, true, now, &aql);
            now += Nanos::from_us(1000);
            atf.report_airtime(t, 1000, 0, now);
            aql.on_completed(t.station(), BE, est);
            let b = if s == 0 { 10_000 } else { 1_000 };
            atf.on_delivered(t, b, now);
            bytes[s] += b as u64;
        }
        let secs = now.as_secs_f64();
        (bytes[0] as f64 * 8.0 / secs, bytes[1] as f64 * 8.0 / secs)
    }
    let (fast, slow) = run(0);
    // Fair: half the air each, 40 Mb/s and 4 Mb/s.
    assert!((slow / 4e6 - 1.0).abs() < 0.01 && (fast / 40e6 - 1.0).abs() < 0.01, "{fast} {slow}");
    // A 6 Mb/s minimum is feasible (75 % of the air): met within 1 %, the rest to the other.
    let (fast, slow) = run(6_000_000);
    assert!((6e6 * 0.99..6e6 * 1.02).contains(&slow), "slow {slow}");
    assert!((fast / 20e6 - 1.0).abs() < 0.03, "fast {fast}");
    // 9 Mb/s would need 112 % of the air: the station gets all the air there is (8 Mb/s).
    let (_, slow) = run(9_000_000);
    assert!(slow > 7.9e6, "slow {slow}");
}

#[test]
fn a_station_below_its_minimum_with_nothing_to_send_is_passed_over() {
    // Station 1 has a minimum rate, frames in flight (AQL pending, so mac80211 keeps its
    // emptied TXQ listed) and nothing queued: the minimum-rate path must not hand it out round
    // after round (the driver would build nothing and ask again for ever); station 0 gets served.
    let p = PolicyParams { groups: vec![], station_group: vec![], min_rate_bps: vec![0, 1_000_000] };
    let (mut atf, mut aql) = with_policy(2, p);
    let now = Nanos::from_ms(10);
    aql.on_queued(StationId(1), BE, 1_000);
    atf.wake(tin(0), now, &aql);
    atf.wake(tin(1), now, &aql);
    let mut served = Vec::new();
    for _ in 0..4 {
        atf.schedule_start(BE, &aql, now);
        let Some(t) = atf.next_tin(BE, &aql, |t| t == tin(0)) else { break };
        served.push(t);
        atf.return_tin(t, t == tin(0), now, &aql);
        if t == tin(0) {
            break;
        }
    }
    assert_eq!(served.last(), Some(&tin(0)), "served {served:?}");
}
