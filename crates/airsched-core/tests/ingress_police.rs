//! The ingress policer (`tc qdisc add dev D ingress` + `tc filter add dev D parent ffff: ...
//! action police ...`, `sch_handle_ingress` and `act_police.c`, Linux 6.1) on a node's receive
//! path, in whole runs, against the analytic policed rate: over the measured window a policer
//! of rate R passes R·t (the bucket's burst is spent in the warm-up) of **IP datagrams** — on
//! ingress the kernel has pulled the MAC header, so `skb->len` is the IP length (the Debian 6.1
//! guest counted 84 bytes for a 56-byte ping) — so a UDP flow of P-byte payloads gets
//! R·P/(P+28) of goodput. docs/tc-police.md, "The ingress policer".

use airsched_core::{parse_scenario, run_scenario, RunResults};

fn run(text: &str) -> RunResults {
    let scn = parse_scenario(text, "ingress.toml").unwrap_or_else(|e| panic!("{e}"));
    run_scenario(&scn).expect("conservation holds")
}

fn toml_str(s: &str) -> String {
    format!("\"\"\"\n{s}\"\"\"")
}

/// Server -> AP over the wire: a 6 Mbit/s flow a (dport 5001) and a 2 Mbit/s flow b (5002);
/// `ap_tc` on the AP.
fn wired(ap_tc: &str) -> String {
    format!(
        "[run]\nduration = \"4s\"\nwarmup = \"1s\"\n\n[wired]\nrate = \"1Gbit\"\ndelay = \"1ms\"\n\n\
         [[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n\n[ap]\ntc = {}\n\n\
         [[flow]]\nname = \"a\"\nsrc = \"server\"\ndst = \"ap\"\nrate = \"6Mbit\"\nsize = 1000\ndport = 5001\n\n\
         [[flow]]\nname = \"b\"\nsrc = \"server\"\ndst = \"ap\"\nrate = \"2Mbit\"\nsize = 1000\ndport = 5002\n",
        toml_str(ap_tc)
    )
}

fn goodput(r: &RunResults, name: &str) -> f64 {
    r.flows.iter().find(|f| f.name == name).map(|f| f.goodput_mbps).unwrap_or_else(|| panic!("no flow {name}"))
}

fn close(got: f64, want: f64, tol: f64) {
    assert!((got / want - 1.0).abs() < tol, "got {got}, want {want}");
}

#[test]
fn an_ingress_policer_passes_its_rate_of_ip_datagrams() {
    for filter in [
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop flowid :1",
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 basic match 'cmp(u16 at 22 eq 5001)' action police rate 4mbit burst 20k conform-exceed drop/ok",
        "tc filter add dev eth0 ingress protocol ip prio 1 flower ip_proto udp dst_port 5001 action police rate 4mbit burst 20k drop classid 1:1",
    ] {
        let qdisc = if filter.contains(" ingress ") { "clsact" } else { "ingress" };
        let tc = format!("tc qdisc add dev eth0 {qdisc}\n{filter}\n");
        let r = run(&wired(&tc));
        // 4 Mbit/s of 1028-byte datagrams (not 1042-byte frames, as on egress).
        close(goodput(&r, "a"), 4.0 * 1000.0 / 1028.0, 0.01);
        close(goodput(&r, "b"), 2.0, 0.01);
        let a = r.flows.iter().find(|f| f.name == "a").unwrap();
        assert!(a.drops_queue > 0, "{filter}: the policer's drops are the flow's");
    }
}

/// u32, fw and flower with a policer and no class id (tc marks such a u32 node terminal: its
/// result is class 0 and only the actions count); the Debian 6.1 guest accepts each on the
/// ingress hook (docs/tc-police.md).
#[test]
fn a_policer_needs_no_class_id_on_the_ingress_hook() {
    for filter in [
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop",
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff action police rate 4mbit burst 20k drop",
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 handle 6 fw police rate 4mbit burst 20k drop",
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 handle 6 fw action police rate 4mbit burst 20k drop",
        "tc filter add dev eth0 parent ffff: protocol ip prio 1 flower ip_proto udp dst_port 5001 action police rate 4mbit burst 20k drop",
    ] {
        let tc = format!("tc qdisc add dev eth0 ingress\n{filter}\n");
        let r = run(&wired(&tc).replace("dport = 5001\n", "dport = 5001\nmark = 6\n"));
        close(goodput(&r, "a"), 4.0 * 1000.0 / 1028.0, 0.01);
        close(goodput(&r, "b"), 2.0, 0.01);
    }
}

#[test]
fn without_a_drop_the_hook_changes_nothing() {
    let plain = run(&wired("tc qdisc add dev eth0 ingress\n"));
    for tc in [
        // continue: the exceeding packets go on to the next filter (none): they pass.
        "tc qdisc add dev eth0 ingress\ntc filter add dev eth0 parent ffff: protocol ip prio 1 matchall action police rate 1mbit burst 10k conform-exceed continue\n",
        // A filter without a policer only classifies.
        "tc qdisc add dev eth0 ingress\ntc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match u32 0 0 flowid :1\n",
    ] {
        let r = run(&wired(tc));
        for f in ["a", "b"] {
            assert_eq!(goodput(&r, f), goodput(&plain, f), "{tc}");
        }
    }
    close(goodput(&plain, "a"), 6.0, 0.01);
}

#[test]
fn the_aps_wlan0_ingress_polices_a_stations_uplink() {
    // Uplink over 802.11b: sta1 sends 3 Mbit/s to the server; the AP's wlan0 receives it.
    let text = "[run]\nduration = \"4s\"\nwarmup = \"1s\"\n\n[[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n\n\
         [ap]\ntc = \"\"\"\ntc qdisc add dev wlan0 handle ffff: ingress\n\
         tc filter add dev wlan0 parent ffff: protocol all prio 1 matchall action police rate 1mbit burst 10k drop\n\"\"\"\n\n\
         [[flow]]\nname = \"up\"\nsrc = \"sta1\"\ndst = \"server\"\nrate = \"3Mbit\"\nsize = 1000\n";
    let r = run(text);
    close(goodput(&r, "up"), 1.0 * 1000.0 / 1028.0, 0.01);
    // The drops are the station's.
    assert!(r.stations[0].drops_queue > 0);
}

#[test]
fn the_policers_counters_are_in_the_results_as_tc_s_filter_show_prints_them() {
    let tc = "tc qdisc add dev eth0 ingress\n\
              tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 5001 0xffff police rate 4mbit burst 20k drop flowid 1:1\n\
              tc qdisc add dev wlan0 root handle 1: prio\n\
              tc filter add dev wlan0 parent 1: protocol ip prio 1 matchall action police rate 1mbit burst 10k conform-exceed drop/pipe classid 1:1\n";
    let r = run(&wired(tc));
    let eth = r.tc.iter().find(|i| i.node == "ap" && i.dev == "eth0").expect("ap eth0");
    let [p] = eth.policers.as_slice() else { panic!("{:?}", eth.policers) };
    let s = p.stats;
    // Every packet of flow a met it: 1028 bytes each on ingress; what exceeded was dropped.
    assert_eq!(s.bytes, s.packets * 1028);
    assert_eq!(s.drops, s.overlimits);
    let a = r.flows.iter().find(|f| f.name == "a").unwrap();
    assert!(s.drops > 0 && a.drops_queue <= s.drops, "{s:?} {}", a.drops_queue);
    // What passed over the run: R·T + burst (4 s at 500 000 B/s, 20 KiB), within a packet.
    let passed = ((s.packets - s.drops) * 1028) as f64;
    let want = 500_000.0 * 4.0 + 20_480.0;
    assert!((passed - want).abs() <= 1028.0 * 2.0, "passed {passed} vs {want}");
    assert_eq!(
        p.show_text().lines().next().unwrap(),
        " police 0x1 rate 4Mbit burst 20Kb mtu 2Kb action drop overhead 0b "
    );
    assert!(p.show_text().contains(&format!(
        " Sent {} bytes {} pkts (dropped {}, overlimits {}) ",
        s.bytes, s.packets, s.drops, s.overlimits
    )));
    // The egress action policer on the AP's wlan0 (nothing goes there: no downlink flow).
    let wlan = r.tc.iter().find(|i| i.node == "ap" && i.dev == "wlan0").unwrap();
    assert_eq!(wlan.policers.len(), 1);
    assert!(wlan.policers[0]
        .show_text()
        .starts_with("\taction order 1:  police 0x2 rate 1Mbit burst 10Kb mtu 2Kb action drop/pipe overhead 0b \n"));
    // Devices without policers report none.
    assert!(r.tc.iter().filter(|i| i.node != "ap").all(|i| i.policers.is_empty()));
}

#[test]
fn a_policed_tcp_flow_sees_loss_not_delay() {
    // TCP from the server to the AP through the AP's eth0 ingress policer at 4 Mbit/s: the
    // policer has no queue, so the flow's delay stays the wire's 10 ms while its losses hold it
    // under R of IP datagrams, R·1448/1500 of payload.
    let text = "[run]\nduration = \"10s\"\nwarmup = \"2s\"\n\n[wired]\nrate = \"100Mbit\"\ndelay = \"10ms\"\n\n\
         [[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n\n[ap]\ntc = \"\"\"\ntc qdisc add dev eth0 ingress\n\
         tc filter add dev eth0 parent ffff: protocol ip prio 1 matchall action police rate 4mbit burst 20k drop\n\"\"\"\n\n\
         [[flow]]\nname = \"t\"\nprotocol = \"tcp\"\nsrc = \"server\"\ndst = \"ap\"\n";
    let r = run(text);
    let t = r.flows.iter().find(|f| f.name == "t").unwrap();
    let ceiling = 4.0 * 1448.0 / 1500.0;
    assert!(t.goodput_mbps <= ceiling * 1.005, "{} > {ceiling}", t.goodput_mbps);
    assert!(t.goodput_mbps > 0.8 * ceiling, "{}", t.goodput_mbps);
    assert!(t.drops_queue > 0);
    assert!(t.delay_mean_ms < 10.5, "no queue: {} ms", t.delay_mean_ms);
}
