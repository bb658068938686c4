//! Nested queueing disciplines wake their device only when something can be sent (issue 28).
//!
//! Every pair and every triple of nested kinds (an outer classful qdisc or shaper, a middle one,
//! an innermost one of any kind) runs three UDP flows from the server to the AP through the
//! server's `eth0` for one simulated second. A run may take a few events per packet sent (the
//! source's tick, the wire's end of serialisation and delivery, a shaper's watchdog); a wake-up
//! loop takes millions (HTB -> prio -> tbf took 203 M events for 1.4 s, issue 28: a child's
//! stale watchdog time made the device retry every nanosecond while HTB's class was
//! throttled). The bound is [`EVENTS_PER_PACKET`] events per packet sent, plus a constant for
//! the beacons and samples of a second.

use airsched_core::{parse_scenario, run_scenario};

/// The bound on events per packet sent (measured: at most about 4 with every kind below).
const EVENTS_PER_PACKET: u64 = 8;
/// Beacons, samples and the watchdogs of an idle second.
const EVENTS_FIXED: u64 = 200;

/// One kind as it is declared at `parent` with handle `h`; `Some(slot)` for the kinds that take
/// a child qdisc at class `h:slot` (their traffic all goes there or to their other classes).
struct Kind {
    name: &'static str,
    /// The tc lines (`{P}` is the `root` / `parent X:Y` part, `{H}` the handle's major).
    lines: &'static str,
    takes_child: bool,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "htb",
        lines: "tc qdisc add dev eth0 {P} handle {H}: htb default 1\n\
                tc class add dev eth0 parent {H}: classid {H}:1 htb rate 6mbit ceil 6mbit\n",
        takes_child: true,
    },
    Kind {
        name: "prio",
        lines: "tc qdisc add dev eth0 {P} handle {H}: prio bands 3 priomap 0 1 2 2 2 2 2 2 2 2 2 2 2 2 2 2\n",
        takes_child: true,
    },
    Kind {
        name: "drr",
        lines: "tc qdisc add dev eth0 {P} handle {H}: drr\n\
                tc class add dev eth0 parent {H}: classid {H}:1 drr\n\
                tc filter add dev eth0 parent {H}: protocol ip prio 1 u32 match u32 0 0 flowid {H}:1\n",
        takes_child: true,
    },
    Kind {
        name: "cbq",
        lines: "tc qdisc add dev eth0 {P} handle {H}: cbq bandwidth 100mbit avpkt 1000\n\
                tc class add dev eth0 parent {H}: classid {H}:1 cbq bandwidth 100mbit rate 5mbit allot 1514 prio 5 avpkt 1000 bounded\n\
                tc filter add dev eth0 parent {H}: protocol ip prio 1 u32 match u32 0 0 flowid {H}:1\n",
        takes_child: true,
    },
    Kind {
        name: "tbf",
        lines: "tc qdisc add dev eth0 {P} handle {H}: tbf rate 3mbit burst 10kb latency 50ms\n",
        takes_child: true,
    },
    Kind {
        name: "hfsc",
        lines: "tc qdisc add dev eth0 {P} handle {H}: hfsc default 1\n\
                tc class add dev eth0 parent {H}: classid {H}:1 hfsc sc rate 6mbit ul rate 6mbit\n",
        takes_child: true,
    },
    Kind {
        name: "ets",
        lines: "tc qdisc add dev eth0 {P} handle {H}: ets bands 3 strict 1 priomap 0 1 2\n",
        takes_child: true,
    },
    Kind { name: "pfifo", lines: "tc qdisc add dev eth0 {P} handle {H}: pfifo limit 100\n", takes_child: false },
    Kind { name: "sfq", lines: "tc qdisc add dev eth0 {P} handle {H}: sfq\n", takes_child: false },
    Kind { name: "fq_codel", lines: "tc qdisc add dev eth0 {P} handle {H}: fq_codel\n", takes_child: false },
    Kind { name: "codel", lines: "tc qdisc add dev eth0 {P} handle {H}: codel\n", takes_child: false },
    Kind {
        name: "red",
        lines: "tc qdisc add dev eth0 {P} handle {H}: red limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit\n",
        takes_child: false,
    },
];

/// The tc script of `chain` (outermost first), handles 1:, 10:, 11:.
fn script(chain: &[&Kind]) -> String {
    let handles = [1u32, 10, 11];
    let mut out = String::new();
    for (i, k) in chain.iter().enumerate() {
        let parent = if i == 0 { "root".to_string() } else { format!("parent {}:1", handles[i - 1]) };
        out += &k.lines.replace("{P}", &parent).replace("{H}", &handles[i].to_string());
    }
    out
}

/// A cell needs a station (idle here: the flows end at the AP).
const STATION: &str = "[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n";

/// Three 3 Mbit/s UDP flows from the server to the AP, skb priorities 0, 1, 2 (prio bands 0,
/// 1, 2 with the priomap above), for one second.
fn scenario(tc: &str) -> String {
    let mut s = String::from("[run]\nduration = \"1s\"\nwarmup = \"0s\"\nseed = 3\n");
    s += STATION;
    for i in 0..3 {
        s += &format!(
            "[[flow]]\nname = \"f{i}\"\nsrc = \"server\"\ndst = \"ap\"\nrate = \"3Mbit\"\nsize = 1000\npriority = {i}\ndport = {}\n",
            5001 + i
        );
    }
    s += &format!("[server]\ntc = \"\"\"\n{tc}\"\"\"\n");
    s
}

/// Events and packets sent of one run of `chain`.
fn run(chain: &[&Kind]) -> (u64, u64) {
    let tc = script(chain);
    let text = scenario(&tc);
    let scn = parse_scenario(&text, "nested.toml").unwrap_or_else(|e| panic!("{tc}\n{e}"));
    let r = run_scenario(&scn).expect("run");
    let sent: u64 = r.flows.iter().map(|f| f.sent_packets).sum();
    (r.summary.events, sent)
}

fn check(chains: Vec<Vec<&Kind>>) {
    let mut worst = (0.0f64, String::new());
    for chain in &chains {
        let names: Vec<_> = chain.iter().map(|k| k.name).collect();
        let (events, sent) = run(chain);
        assert!(sent > 1000, "{names:?}: the sources sent {sent} packets");
        let per = events as f64 / sent as f64;
        if per > worst.0 {
            worst = (per, names.join(" -> "));
        }
        assert!(
            events <= EVENTS_PER_PACKET * sent + EVENTS_FIXED,
            "{}: {events} events for {sent} packets sent in 1 s: a wake-up loop\n{}",
            names.join(" -> "),
            script(chain)
        );
    }
    eprintln!("{} trees, most events per packet sent: {:.2} ({})", chains.len(), worst.0, worst.1);
}

#[test]
fn every_pair_of_nested_kinds_wakes_only_to_send() {
    let outer = KINDS.iter().filter(|k| k.takes_child);
    check(outer.flat_map(|o| KINDS.iter().map(move |i| vec![o, i])).collect());
}

#[test]
fn every_triple_of_nested_kinds_wakes_only_to_send() {
    let mut chains = Vec::new();
    for o in KINDS.iter().filter(|k| k.takes_child) {
        for m in KINDS.iter().filter(|k| k.takes_child) {
            for i in KINDS {
                chains.push(vec![o, m, i]);
            }
        }
    }
    check(chains);
}

/// The tree of the issue with its flows filtered into the prio bands: the numbers are the
/// kernel's (tbf holds band 0 to 3 Mbit/s at L2, HTB the whole to 10 Mbit/s).
#[test]
fn htb_prio_tbf_of_the_issue_shapes_and_does_not_spin() {
    let tc = "tc qdisc add dev eth0 root handle 1: htb default 1\n\
              tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit ceil 10mbit\n\
              tc qdisc add dev eth0 parent 1:1 handle 10: prio\n\
              tc qdisc add dev eth0 parent 10:1 handle 11: tbf rate 3mbit burst 10kb latency 50ms\n\
              tc filter add dev eth0 parent 10: protocol ip prio 1 u32 match ip dport 5001 0xffff flowid 10:1\n\
              tc filter add dev eth0 parent 10: protocol ip prio 2 u32 match ip dport 5002 0xffff flowid 10:2\n\
              tc filter add dev eth0 parent 10: protocol ip prio 3 u32 match ip dport 5003 0xffff flowid 10:3\n";
    let mut text = String::from("[run]\nduration = \"4s\"\nwarmup = \"1s\"\nseed = 1\n");
    text += STATION;
    for (i, rate) in ["6Mbit", "4Mbit", "4Mbit"].iter().enumerate() {
        text += &format!(
            "[[flow]]\nname = \"f{i}\"\nsrc = \"server\"\ndst = \"ap\"\nrate = \"{rate}\"\nsize = 1000\ndport = {}\n",
            5001 + i
        );
    }
    text += &format!("[server]\ntc = \"\"\"\n{tc}\"\"\"\n");
    let scn = parse_scenario(&text, "issue28.toml").unwrap_or_else(|e| panic!("{e}"));
    let r = run_scenario(&scn).expect("run");
    let sent: u64 = r.flows.iter().map(|f| f.sent_packets).sum();
    assert!(
        r.summary.events <= EVENTS_PER_PACKET * sent + EVENTS_FIXED,
        "{} events for {sent} packets",
        r.summary.events
    );
    // Link-layer rates (IP + 14 bytes of Ethernet header, as tc counts): tbf's 3 Mbit/s for
    // band 0, and HTB's 10 Mbit/s in all, the rest shared by bands 1 and 2 in priority order.
    let l2 = |mbps: f64| mbps * (1000.0 + 42.0) / 1000.0;
    let f: Vec<f64> = r.flows.iter().map(|f| l2(f.goodput_mbps)).collect();
    assert!((f[0] - 3.0).abs() < 0.03, "band 0 through tbf: {:.4} Mbit/s at L2", f[0]);
    assert!((f.iter().sum::<f64>() - 10.0).abs() < 0.1, "HTB's ceiling in all: {f:?}");
    // Band 1 gets all it offers, band 2 what is left.
    assert!((f[1] - l2(4.0)).abs() < 0.04, "band 1: {:.4} Mbit/s at L2", f[1]);
    assert!((f[2] - (10.0 - 3.0 - l2(4.0))).abs() < 0.1, "band 2: {:.4} Mbit/s at L2", f[2]);
}
