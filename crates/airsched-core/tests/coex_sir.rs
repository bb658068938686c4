//! The SIR refinement of the Bluetooth/WLAN coexistence in whole runs (docs/model-bluetooth.md,
//! "Coexistence"; reference phy80211-bluetooth.md 8.3, next-capabilities.md 2.2 item 5): a hit
//! in time and frequency corrupts a frame only when the signal-to-interference ratio at its
//! receiver is below the threshold, the bookkeeping staying that of the worst case.

use airsched_core::parse_scenario_with;
use airsched_core::path_loss_db;
use airsched_core::{run_scenario, Nanos, RunResults, Simulation};
use rand::{Rng, SeedableRng};

fn scenario(text: &str, sets: &[&str]) -> airsched_core::Scenario {
    parse_scenario_with(text, "test.toml", sets).unwrap_or_else(|e| panic!("{e}"))
}

/// Yip & Kwok's NAP (scenarios/yip-kwok/coexistence.toml) with the WLAN station at
/// `station` and the Bluetooth slave at `slave` (metres, the AP and the master at the origin):
/// the server saturates the station (11 Mb/s, 1472-byte UDP) and the slave (DH5), and the
/// station saturates the server (`up`).
fn nap(station: [f64; 2], slave: [f64; 2], up: bool) -> String {
    let mut s = format!(
        r#"
[run]
duration = "12s"
warmup = "2s"
seed = 1

[cell]
channel = 6

[piconet]
sir = true

[[station]]
name = "wlan1"
rate = "11Mbps"
location = [{}, {}]

[[bluetooth]]
name = "bt1"
packet_types = ["DH5"]
position = [{}, {}]

[[flow]]
name = "wlan-down"
src = "server"
dst = "wlan1"
rate = "saturate"
size = 1472

[[flow]]
name = "bt-down"
src = "server"
dst = "bt1"
rate = "saturate"
size = 1321
"#,
        station[0], station[1], slave[0], slave[1]
    );
    if up {
        s.push_str(
            "\n[[flow]]\nname = \"wlan-up\"\nsrc = \"wlan1\"\ndst = \"server\"\nrate = \"saturate\"\nsize = 1472\n",
        );
    }
    s
}

/// (data frames checked, data frames hit, ACKs checked, ACKs hit) of the station's `dir`.
fn coex(r: &RunResults, dir: &str) -> (u64, u64, u64, u64) {
    let c = r.coexistence.iter().find(|c| c.direction == dir).unwrap();
    (c.data_frames, c.data_hit_by_bt, c.acks, c.acks_hit_by_bt)
}

/// Whether two hit proportions agree within 4.5 standard errors of their difference.
fn same_rate(a: (u64, u64), b: (u64, u64)) -> bool {
    let (pa, pb) = (a.1 as f64 / a.0 as f64, b.1 as f64 / b.0 as f64);
    let p = (a.1 + b.1) as f64 / (a.0 + b.0) as f64;
    let se = (p * (1.0 - p) * (1.0 / a.0 as f64 + 1.0 / b.0 as f64)).sqrt();
    (pa - pb).abs() < 4.5 * se
}

#[test]
fn a_distant_slave_spares_the_stations_downlink_while_the_colocated_master_still_hits_the_aps_uplink() {
    // The station 10 m east of the AP, the slave 2 m west: 12 m apart. Powers 15 dBm (WLAN) and
    // 0 dBm (Bluetooth). By hand (path loss in centi-dB, rounded as the model rounds):
    // * the station receives the AP at 15 - 61.50 = -46.50 dBm; the master (10 m) at -61.50,
    //   SIR 15.00 dB; the slave (12 m) at -64.11, SIR 17.61 dB: above 7.16 dB (11 Mb/s), no hit;
    //   the ACKs of its uplink (2 Mb/s, 1.63 dB) neither.
    // * the AP receives the station at -46.50 dBm; the master 10 cm away at -20.23 (SIR -26.27
    //   dB), the slave 2 m away at -46.25 (SIR -0.25 dB): every in-band packet hits, the
    //   worst case of section 8.3.
    let text = nap([10.0, 0.0], [-2.0, 0.0], true);
    let on = run_scenario(&scenario(&text, &[])).unwrap();
    let off = run_scenario(&scenario(&text, &["piconet.sir=false"])).unwrap();
    let (down, up) = (coex(&on, "down"), coex(&on, "up"));
    assert!(down.0 > 1000 && up.0 > 1000, "{down:?} {up:?}");
    // Downlink data at the station and the uplink's ACKs there: never hit.
    assert_eq!((down.1, up.3), (0, 0), "{down:?} {up:?}");
    // Without the refinement the same station loses about a third of its downlink.
    let off_down = coex(&off, "down");
    assert!(off_down.1 as f64 / off_down.0 as f64 > 0.25, "{off_down:?}");
    // The AP's receptions (uplink data, downlink ACKs) are hit as in the worst case: the same
    // proportion as without the refinement, within statistical error, and for the data
    // frames near section 8.3's 0.372 (1310 us beside DH5 + POLL/NULL at a random phase; the
    // MAC's timing is not random: a loose bound).
    let off_up = coex(&off, "up");
    assert!(same_rate((up.0, up.1), (off_up.0, off_up.1)), "uplink data {up:?} vs {off_up:?}");
    let p = up.1 as f64 / up.0 as f64;
    assert!((0.25..0.45).contains(&p), "{p}");
    // The AP's ACKs of the downlink: without the refinement an ACK is checked only after its
    // data frame survived, which leaves it mostly in the same gap between Bluetooth packets
    // (few are hit); with it every downlink frame survives and its ACK is hit about as an ACK
    // at a random phase is, 0.259 in section 8.3 (a loose bound again).
    let p = down.3 as f64 / down.2 as f64;
    assert!((0.15..0.35).contains(&p) && down.2 == down.0, "{down:?}");
    assert!((off_down.3 as f64 / off_down.2 as f64) < p / 2.0, "{off_down:?}");
    // The WLAN station's goodput gains from the spared downlink.
    let goodput = |r: &RunResults| r.flows.iter().find(|f| f.name == "wlan-down").unwrap().goodput_mbps;
    assert!(goodput(&on) > goodput(&off) * 1.1, "{} vs {}", goodput(&on), goodput(&off));
}

#[test]
fn everything_colocated_below_every_threshold_gives_the_worst_case_exactly() {
    // Every radio at the origin (10 cm apart), Bluetooth at 20 dBm (class 1), WLAN at 15 dBm:
    // a WLAN receiver sees SIR 15 - 20 = -5 dB (below -3.02, the lowest WLAN threshold), a
    // Bluetooth receiver C/I 20 - 15 = 5 dB (below 11): every overlap in time and frequency
    // is a loss, as without the refinement, so the run is the same run.
    let text = nap([0.0, 0.0], [0.0, 0.0], true).replace("sir = true", "sir = true\nbt_power = 20\nwlan_power = 15");
    let scn = scenario(&text, &[]);
    assert!(Simulation::new(&scn).unwrap().coex().unwrap().sir.is_some());
    let on = run_scenario(&scn).unwrap();
    let off = run_scenario(&scenario(&text, &["piconet.sir=false"])).unwrap();
    assert!(coex(&on, "down").1 > 100 && coex(&on, "up").1 > 100 && on.bluetooth[0].hit_by_wlan > 100);
    assert_eq!(on.coexistence, off.coexistence);
    assert_eq!(on.bluetooth, off.bluetooth);
    // (Debug text: the rows hold NaN for what a UDP flow has not, which is not == itself.)
    assert_eq!(format!("{:?}", on.flows), format!("{:?}", off.flows));
    assert_eq!(format!("{:?}", on.stations), format!("{:?}", off.stations));
}

/// A piconet with DH1 both ways at saturation (the slave's DH1 every 1250 us) and an idle
/// station 5 m east of the AP; the slave at `slave`.
fn dh1(slave: [f64; 2], sir: bool) -> String {
    format!(
        r#"
[run]
duration = "1000s"
warmup = "1s"
seed = 5

[cell]
channel = 6
beacons = false

[piconet]
sir = {sir}

[[station]]
name = "wlan1"
rate = "11Mbps"
location = [5.0, 0.0]

[[bluetooth]]
name = "bt1"
packet_types = ["DH1"]
position = [{}, {}]

[[flow]]
name = "down"
src = "server"
dst = "bt1"
rate = "saturate"
size = 1315

[[flow]]
name = "up"
src = "bt1"
dst = "server"
rate = "saturate"
size = 1315
"#,
        slave[0], slave[1]
    )
}

/// Probability that an 11 Mb/s WLAN frame of 1310 us from the AP to the station, at a
/// uniformly random phase, is corrupted by the simulated piconet: `n` independent frames.
fn downlink_hit_probability(text: &str, n: usize, seed: u64) -> f64 {
    let scn = scenario(text, &[]);
    let mut sim = Simulation::new(&scn).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let t_w = Nanos::from_us(1310);
    let mut now = Nanos::from_secs(2);
    let mut hits = 0;
    for _ in 0..n {
        now = now + t_w + Nanos(rng.random_range(3_000_000..4_000_000));
        sim.advance(now);
        if sim.coex().unwrap().wlan_hit(now - t_w, now, 0, 1, 3) {
            hits += 1;
        }
    }
    hits as f64 / n as f64
}

/// Reference 8.3: a frame of `t_w` beside packets of `t_b` every `t_s` (independent hops,
/// p_f = 22/79) is hit with 1 - [(1 - f)(1 - p_f)^n + f (1 - p_f)^(n + 1)], x = (t_w + t_b) /
/// t_s, n = floor(x), f = frac(x).
fn reference_hit(t_w: f64, t_b: f64, t_s: f64) -> f64 {
    let pf: f64 = 22.0 / 79.0;
    let x = (t_w + t_b) / t_s;
    let (n, f) = (x.floor(), x.fract());
    1.0 - ((1.0 - f) * (1.0 - pf).powf(n) + f * (1.0 - pf).powf(n + 1.0))
}

#[test]
fn the_slave_corrupts_the_stations_downlink_up_to_the_hand_computed_crossover_distance() {
    // The station 5 m from the AP receives it at 15 - PL(5 m) = 15 - 54.21 = -39.21 dBm and
    // the master there at 0 - 54.21 (SIR 15 dB: never a hit at 11 Mb/s, threshold 7.16 dB).
    // The slave, r metres from the station, hits once its power there is above -39.21 - 7.16 =
    // -46.37 dBm: PL(r) < 46.37 dB, in the free-space part r < 0.1224 / (4 pi) 10^(46.37 / 20)
    // = 2.03 m (hand-computed). The slave sits due north of the station.
    let r_star = 2.03;
    assert!(path_loss_db(r_star * 0.99) < 46.37 && path_loss_db(r_star * 1.01) > 46.37);
    let n = 6000;
    // Inside: only the slave's DH1 packets (366 us every 1250 us) count: the reference's
    // formula with t_s = 1250 us, 0.347.
    let near = downlink_hit_probability(&dh1([5.0, 0.9 * r_star], true), n, 1);
    let want = reference_hit(1310.0, 366.0, 1250.0);
    let tol = 4.5 * (want * (1.0 - want) / n as f64).sqrt();
    assert!((near - want).abs() < tol, "{near} vs {want:.3} (tolerance {tol:.3})");
    // Outside: nothing.
    assert_eq!(downlink_hit_probability(&dh1([5.0, 1.1 * r_star], true), n, 1), 0.0);
    // Without the refinement every DH1 packet counts (t_s = 625 us): 0.578 (reference table).
    let off = downlink_hit_probability(&dh1([5.0, 1.1 * r_star], false), n, 1);
    let want = reference_hit(1310.0, 366.0, 625.0);
    assert!((want - 0.578).abs() < 0.001);
    let tol = 4.5 * (want * (1.0 - want) / n as f64).sqrt();
    assert!((off - want).abs() < tol, "{off} vs {want:.3}");
}

#[test]
fn in_a_whole_run_the_crossover_separates_a_hit_downlink_from_a_spared_one() {
    // The same geometry with the station downloading at saturation (WLAN frames also hit the
    // piconet, which then skips some of its answers: a loose bound inside).
    let run = |r: f64| {
        let text = dh1([5.0, r], true).replace("duration = \"1000s\"", "duration = \"8s\"")
            + "\n[[flow]]\nname = \"wlan-down\"\nsrc = \"server\"\ndst = \"wlan1\"\nrate = \"saturate\"\nsize = 1472\n";
        coex(&run_scenario(&scenario(&text, &[])).unwrap(), "down")
    };
    let near = run(0.9 * 2.03);
    assert!(near.0 > 1000 && near.1 as f64 / near.0 as f64 > 0.1, "{near:?}");
    let far = run(1.1 * 2.03);
    assert!(far.0 > 1000 && far.1 == 0, "{far:?}");
}

#[test]
fn the_sir_keys_are_checked_with_their_line() {
    let base = nap([10.0, 0.0], [-2.0, 0.0], false);
    let err = |text: &str| parse_scenario_with(text, "t.toml", &[] as &[&str]).unwrap_err().to_string();
    // A slave without its position, a station without its location.
    let e = err(&base.replace("position = [-2, 0]\n", ""));
    assert!(
        e.contains("t.toml:")
            && e.contains("bluetooth[0].position")
            && e.contains("needs where the Bluetooth client \"bt1\" is"),
        "{e}"
    );
    let e = err(&base.replace("location = [10, 0]\n", ""));
    assert!(e.contains("station[0].location") && e.contains("needs where the station \"wlan1\" is"), "{e}");
    // Wrong shapes and ranges.
    for bad in ["[1.0]", "[1, 2, 3]", "\"near\"", "[1e9, 0]", "[\"a\", 0]"] {
        let e = err(&base.replace("position = [-2, 0]", &format!("position = {bad}")));
        assert!(e.contains("bluetooth[0].position") && e.contains("expected [x, y] in metres"), "{bad}: {e}");
    }
    let e = err(&base.replace("location = [10, 0]", "location = [10]"));
    assert!(e.contains("station[0].location") && e.contains("expected [x, y]"), "{e}");
    let e = err(&base.replace("sir = true", "sir = true\nbt_power = 25"));
    assert!(e.contains("piconet.bt_power") && e.contains("from -30 to 20"), "{e}");
    let e = err(&base.replace("sir = true", "sir = true\nwlan_power = 40"));
    assert!(e.contains("piconet.wlan_power") && e.contains("from -10 to 30"), "{e}");
    // A station's `position` names its radio conditions: coordinates there point to location.
    let e = err(&base.replace("location = [10, 0]", "position = [10, 0]"));
    assert!(e.contains("station[0].position") && e.contains("location = [x, y]"), "{e}");
    // sir without a piconet.
    let bare = "[[station]]\nname = \"s\"\nrate = \"11Mbps\"\n\n[piconet]\nsir = true\n";
    let e = err(bare);
    assert!(e.contains("t.toml:6") && e.contains("piconet.sir") && e.contains("needs [[bluetooth]] clients"), "{e}");
    // Given without sir: accepted, with a warning naming the key.
    let scn = scenario(&base.replace("sir = true", "sir = false\nbt_power = 4"), &[]);
    assert!(
        scn.warnings.iter().any(|w| w.contains("piconet.bt_power: warning: only the SIR refinement")),
        "{:?}",
        scn.warnings
    );
    assert!(
        scn.warnings.iter().any(|w| w.contains("station[0].location"))
            && scn.warnings.iter().any(|w| w.contains("bluetooth[0].position"))
    );
    // With sir, no warning about them.
    assert!(scenario(&base, &[]).warnings.iter().all(|w| !w.contains("SIR")));
}
