//! Ping flows: echo requests answered by their destination, round trips recorded per sample.

use crate::common;

use common::run;

use airsched_core::{parse_scenario, RunResults};

const IDLE: &str = r#"
[run]
duration = "101s"
warmup = "1s"
seed = 4
[cell]
beacons = false
[[station]]
name = "b"
rate = "11Mbps"
[[flow]]
name = "ping"
protocol = "ping"
src = "server"
dst = "b"
interval = "100ms"
"#;

#[test]
fn a_ping_over_an_idle_cell_takes_the_computed_round_trip() {
    let r = run(IDLE);
    let f = r.flows.iter().find(|f| f.name == "ping").unwrap();
    let reply = r.flows.iter().find(|f| f.name == "ping.reply").expect("the reply flow is reported");
    assert_eq!((f.protocol.as_str(), reply.protocol.as_str()), ("ping", "ping-reply"));
    assert_eq!((reply.src.as_str(), reply.dst.as_str()), ("b", "server"));
    assert_eq!(f.rtt_samples, 1000);
    assert_eq!(r.pings.len(), 1000);
    // 84-byte IP packets (56 + 28). Server eth0: (84 + 38) * 8 bits at 100 Mbit/s = 9.76 us, plus
    // 100 us. AP: the medium has been idle, its post-backoff is over: sent at once, 120-byte
    // PSDU at 11 Mb/s = 192 + ceil(960 / 11) = 280 us. The station's reply is queued as the
    // request ends, when the station senses the medium idle (the frame is addressed to it and
    // sets no NAV there): no backoff (802.11-2016 10.3.4.2), so it goes out DIFS 50 us after its
    // own ACK (SIFS 10 + 248 us at 2 Mb/s), 280 us on the air, then the AP's eth0: 9.76 + 100
    // us. Every round trip is the same. (Before issue 27 the reply drew a backoff of 0-31
    // slots, which spread the RTTs over 620 us.)
    let fixed = 109.76 + 280.0 + 10.0 + 248.0 + 50.0 + 280.0 + 109.76;
    let min = r.pings.iter().map(|p| p.rtt_ms).fold(f64::INFINITY, f64::min) * 1e3;
    let max = r.pings.iter().map(|p| p.rtt_ms).fold(0.0, f64::max) * 1e3;
    assert!((min - fixed).abs() < 0.01, "min RTT {min} us vs {fixed}");
    assert!((max - fixed).abs() < 0.01, "max RTT {max} us vs {fixed}: a reply took a backoff");
    let mean = f.rtt_mean_ms * 1e3;
    assert!((mean - fixed).abs() < 0.01, "mean RTT {mean} us vs {fixed}");
    assert!(f.rtt_p50_ms <= f.rtt_p90_ms && f.rtt_p90_ms <= f.rtt_p99_ms && f.rtt_p99_ms <= f.rtt_max_ms);
    // Sequence numbers are the requests', in order.
    assert!(r.pings.windows(2).all(|w| w[1].seq == w[0].seq + 1));
}

#[test]
fn fq_codel_at_the_ap_takes_the_ping_out_of_the_bulk_queue() {
    // A saturating download to station a fills the AP's queue; station b is pinged from the
    // server. Behind the default 1000-packet pfifo every ping waits for the whole queue; with
    // fq_codel the ping is a sparse flow, served ahead of the bulk one.
    let base = r#"
[run]
duration = "21s"
warmup = "1s"
seed = 1
[[station]]
name = "a"
rate = "11Mbps"
[[station]]
name = "b"
rate = "11Mbps"
[[flow]]
name = "bulk"
src = "server"
dst = "a"
rate = "20mbit"
size = 1470
[[flow]]
name = "ping"
protocol = "ping"
src = "server"
dst = "b"
interval = "200ms"
"#;
    let fifo = run(base);
    let fq = run(&format!("{base}[ap]\ntc = \"tc qdisc replace dev wlan0 root fq_codel\"\n"));
    let p50 = |r: &RunResults| r.flows.iter().find(|f| f.name == "ping").unwrap().rtt_p50_ms;
    eprintln!("ping p50: pfifo {:.1} ms, fq_codel {:.1} ms", p50(&fifo), p50(&fq));
    assert!(p50(&fifo) > 500.0, "pfifo 1000 x 1.5 kB at ~5 Mbit/s: over a second of queue, got {}", p50(&fifo));
    assert!(p50(&fq) < 10.0, "fq_codel: a sparse flow waits at most a frame or two, got {}", p50(&fq));
    let bulk = |r: &RunResults| r.flows.iter().find(|f| f.name == "bulk").unwrap().goodput_mbps;
    assert!((bulk(&fq) / bulk(&fifo) - 1.0).abs() < 0.05, "the bulk flow keeps its goodput");
}

#[test]
fn pings_are_icmp_for_tc_filters_and_key_errors_are_clear() {
    // A u32 match on ip protocol 1 puts the pings in their own prio band.
    let text = format!(
        "{IDLE}[ap]\ntc = \"\"\"\ntc qdisc add dev wlan0 root handle 1: prio\ntc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip protocol 1 0xff flowid 1:1\n\"\"\"\n"
    );
    let r = run(&text);
    let wlan0 = r.tc.iter().find(|t| t.node == "ap" && t.dev == "wlan0").unwrap();
    let band1 = &wlan0.qdiscs[0].classes.iter().find(|c| c.classid.to_string() == "1:1").unwrap();
    assert!(band1.stats.sent_packets >= 1000, "{:?}", band1.stats);
    for (bad, want) in
        [("rate = \"1mbit\"", "leave `rate` and `jitter` out"), ("interval = \"10us\"", "at least 100us")]
    {
        let t = IDLE.replace("interval = \"100ms\"", bad);
        let e = parse_scenario(&t, "ping.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
    let udp_with_interval = IDLE.replace("protocol = \"ping\"", "protocol = \"udp\"\nrate = \"1mbit\"");
    let e = parse_scenario(&udp_with_interval, "ping.toml").unwrap_err().to_string();
    assert!(e.contains("`interval` is for ping flows"), "{e}");
}
