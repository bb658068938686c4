//! TCP over the simulated cell: segments and their ACKs contend for the air like any frame.

use crate::common;

use common::run;

use airsched_core::{parse_scenario, run_scenario, RunResults};

fn cell(flows: &str, ap_tc: &str) -> String {
    format!(
        "[run]\nduration = \"31s\"\nwarmup = \"1s\"\nseed = 3\n[cell]\nbeacons = false\n\
         [[station]]\nname = \"a\"\nrate = \"11Mbps\"\n[[station]]\nname = \"b\"\nrate = \"11Mbps\"\n\
         {flows}\n[ap]\ntc = \"{ap_tc}\"\n"
    )
}

fn tcp(name: &str, dst: &str, cc: &str) -> String {
    format!("[[flow]]\nname = \"{name}\"\nprotocol = \"tcp\"\ncc = \"{cc}\"\nsrc = \"server\"\ndst = \"{dst}\"\n")
}

const FQ_CODEL: &str = "tc qdisc replace dev wlan0 root fq_codel";

#[test]
fn one_tcp_download_fills_the_cell() {
    for cc in ["cubic", "newreno"] {
        let r = run(&cell(&tcp("dl", "a", cc), FQ_CODEL));
        let f = &r.flows[0];
        let ack = r.flows.iter().find(|f| f.name == "dl.ack").expect("the ACK flow");
        assert_eq!((ack.src.as_str(), ack.dst.as_str(), ack.protocol.as_str()), ("a", "server", "tcp-ack"));
        eprintln!(
            "{cc}: {:.3} Mb/s, busy {:.3}, srtt {:.1} ms, retransmits {}, fast recoveries {}, RTOs {}",
            f.goodput_mbps,
            r.summary.medium_busy_share,
            f.tcp_srtt_ms,
            f.tcp_retransmits,
            f.tcp_fast_recoveries,
            f.tcp_rtos
        );
        // The medium is as busy as under a saturated UDP download (DCF's idle DIFS and backoff
        // are all that is left); goodput is what remains after the ACKs' own channel accesses
        // (one per two segments).
        let udp = run(&cell(
            "[[flow]]\nname = \"u\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"saturate\"\nsize = 1448\n",
            FQ_CODEL,
        ));
        let busy = r.summary.medium_busy_share / udp.summary.medium_busy_share;
        assert!(busy > 0.97, "{cc}: busy {} vs UDP {}", r.summary.medium_busy_share, udp.summary.medium_busy_share);
        assert!(f.goodput_mbps > 4.5, "{cc}: {}", f.goodput_mbps);
        // Delayed ACKs: about one ACK per two segments.
        let ratio = ack.sent_packets as f64 / f.sent_packets as f64;
        assert!((0.45..0.65).contains(&ratio), "{cc}: {ratio} ACKs per segment");
        // fq_codel keeps the queue short: the RTT stays tens of milliseconds.
        assert!(f.tcp_srtt_ms < 60.0, "{cc}: srtt {}", f.tcp_srtt_ms);
    }
}

#[test]
fn two_tcp_downloads_share_the_cell_fairly() {
    let flows = format!("{}{}", tcp("to_a", "a", "cubic"), tcp("to_b", "b", "cubic"));
    let r = run(&cell(&flows, FQ_CODEL));
    let x: Vec<f64> = r.flows.iter().filter(|f| f.protocol == "tcp").map(|f| f.goodput_mbps).collect();
    let jain = x.iter().sum::<f64>().powi(2) / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>());
    eprintln!("goodputs {x:?}, Jain {jain:.4}");
    assert!(jain > 0.98, "Jain index {jain} for {x:?}");
    // Every sample of a TCP flow carries its sender's cwnd; CoDel keeps it a few packets deep.
    let cwnd: Vec<f64> = r
        .samples
        .iter()
        .filter(|s| s.kind == airsched_core::SampleKind::Flow && s.index == 0)
        .map(|s| s.cwnd_bytes)
        .collect();
    assert!(cwnd.len() >= 100 && cwnd.iter().all(|c| c.is_finite() && *c >= 1448.0), "{cwnd:?}");
    assert!(cwnd.iter().all(|c| *c < 200.0 * 1448.0), "{cwnd:?}");
    assert!(x.iter().sum::<f64>() > 4.5);
}

#[test]
fn codel_drops_are_repaired_by_fast_recovery_not_timeouts() {
    let r = run(&cell(&tcp("dl", "a", "newreno"), FQ_CODEL));
    let f = &r.flows[0];
    assert!(f.drops_queue > 10, "CoDel dropped {}", f.drops_queue);
    assert!(f.tcp_fast_recoveries > 10, "fast recoveries {}", f.tcp_fast_recoveries);
    assert_eq!(f.tcp_rtos, 0, "no retransmission timeout");
    assert!(f.tcp_retransmits >= f.drops_queue, "every dropped segment was retransmitted");
}

#[test]
fn a_sized_transfer_delivers_exactly_its_bytes_then_stops() {
    let text = cell(&format!("{}bytes = \"2000000b\"\n", tcp("xfer", "a", "cubic")), FQ_CODEL)
        .replace("warmup = \"1s\"", "warmup = \"0s\"");
    let r = run(&text);
    let f = &r.flows[0];
    let bytes = f.goodput_mbps * 1e6 / 8.0 * r.summary.measured_seconds;
    assert!((bytes - 2_000_000.0).abs() < 1.0, "delivered {bytes} bytes");
    // 2 MB take about 3.3 s at 4.8 Mb/s: the cell is idle afterwards.
    assert!(r.summary.medium_busy_share < 0.2, "busy {}", r.summary.medium_busy_share);
}

#[test]
fn an_upload_and_a_download_contend_through_the_stations_own_access() {
    let flows = format!(
        "{}[[flow]]\nname = \"up\"\nprotocol = \"tcp\"\nsrc = \"b\"\ndst = \"server\"\n",
        tcp("down", "a", "cubic")
    );
    let r = run(&cell(&flows, FQ_CODEL));
    let down = r.flows.iter().find(|f| f.name == "down").unwrap();
    let up = r.flows.iter().find(|f| f.name == "up").unwrap();
    eprintln!("down {:.3}, up {:.3} Mb/s", down.goodput_mbps, up.goodput_mbps);
    // DCF gives each node the same share of accesses; the AP must carry the download's data
    // and the upload's ACKs in its share while the uploading station sends only data, so the
    // upload wins: the up/down unfairness of TCP over WiFi (Pilosof et al., INFOCOM 2003).
    assert!(up.goodput_mbps > 2.0 * down.goodput_mbps, "up {} down {}", up.goodput_mbps, down.goodput_mbps);
    assert!(down.goodput_mbps > 0.1, "the download is not starved: {}", down.goodput_mbps);
    assert!(down.goodput_mbps + up.goodput_mbps > 2.5);
}

#[test]
fn tcp_segments_and_acks_are_protocol_6_for_tc_filters() {
    // u32 `match ip protocol 6 0xff` at the AP puts the download in prio band 1:1.
    let tc = "tc qdisc add dev wlan0 root handle 1: prio\ntc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip protocol 6 0xff flowid 1:1";
    let text = cell(&tcp("dl", "a", "cubic"), "").replace("tc = \"\"", &format!("tc = \"\"\"\n{tc}\n\"\"\""));
    let r = run(&text);
    let wlan0 = r.tc.iter().find(|t| t.node == "ap" && t.dev == "wlan0").unwrap();
    let band =
        |id: &str| wlan0.qdiscs[0].classes.iter().find(|c| c.classid.to_string() == id).unwrap().stats.sent_packets;
    assert!(band("1:1") > 1000 && band("1:2") == 0, "1:1 {} 1:2 {}", band("1:1"), band("1:2"));
}

#[test]
fn tcp_keys_are_checked() {
    for (extra, want) in [
        ("rate = \"1mbit\"\n", "leave `rate` out"),
        ("\n", ""),
        ("bytes = \"0b\"\n", "at least one byte"),
        ("size = 4000\n", "must be between 88 and"),
    ] {
        if want.is_empty() {
            continue;
        }
        let text = cell(&format!("{}{extra}", tcp("dl", "a", "cubic")), FQ_CODEL);
        let e = parse_scenario(&text, "tcp.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{extra}: {e}");
    }
    let text = cell(&tcp("dl", "a", "bbr"), FQ_CODEL);
    let e = parse_scenario(&text, "tcp.toml").unwrap_err().to_string();
    assert!(e.contains("unknown value \"bbr\""), "{e}");
    let udp =
        cell("[[flow]]\nname = \"u\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"1mbit\"\ncc = \"cubic\"\n", FQ_CODEL);
    let e = parse_scenario(&udp, "tcp.toml").unwrap_err().to_string();
    assert!(e.contains("`cc` is for TCP flows"), "{e}");
}

/// Run a scenario with every TCP flow's SACK switched on or off (set on the parsed scenario:
/// there is no scenario key for it yet).
fn run_sack(text: &str, sack: bool) -> RunResults {
    let mut scn = parse_scenario(text, "test.toml").unwrap_or_else(|e| panic!("{e}"));
    for f in &mut scn.flows {
        f.sack = sack;
    }
    run_scenario(&scn).expect("conservation holds")
}

#[test]
fn sack_repairs_a_download_behind_a_long_fifo() {
    // Linux 6.1 TCP (the default era) behind a 100-packet pfifo: slow start overshoots and the
    // FIFO drops bursts of segments. Without SACK, NewReno-style recovery repairs one hole per
    // RTT and the RTO's go-back-N resends whole windows; with SACK one recovery repairs them
    // all. Goodput barely differs (the 100-packet queue keeps the 11 Mb/s link busy through
    // either recovery); what SACK saves is retransmissions and RTOs. What is left with SACK is
    // mostly the RTOs' go-back-N: the queue's delay swings faster than the RTO (SRTT + 4 RTTVAR)
    // follows, and Linux would undo a spurious one with F-RTO, which is not modelled.
    // (Before issue 27 made 6.1 the default this test ran the era-less model, whose fixed
    // 6 MiB window overflowed a 1000-packet FIFO; 6.1's autotuned window does not.)
    let pfifo = "tc qdisc replace dev wlan0 root pfifo limit 100";
    let mut goodput = [[0.0; 2]; 2];
    for (c, cc) in ["cubic", "newreno"].into_iter().enumerate() {
        let text = cell(&tcp("dl", "a", cc), pfifo);
        let reference = run(&cell(&tcp("dl", "a", cc), FQ_CODEL)).flows[0].goodput_mbps;
        let mut r = Vec::new();
        for sack in [false, true] {
            let res = run_sack(&text, sack);
            let f = res.flows[0].clone();
            eprintln!(
                "{cc} pfifo 100, sack {sack}: {:.3} Mb/s (fq_codel {reference:.3}), retransmits {}, queue drops {}, fast recoveries {}, RTOs {}, srtt {:.0} ms",
                f.goodput_mbps, f.tcp_retransmits, f.drops_queue, f.tcp_fast_recoveries, f.tcp_rtos, f.tcp_srtt_ms
            );
            goodput[c][sack as usize] = f.goodput_mbps;
            r.push((f, reference));
        }
        if cc == "cubic" {
            let ((off, _), (on, fq)) = (&r[0], &r[1]);
            // Measured (seed 3): 4.898 → 4.940 Mb/s against 4.989 with fq_codel; 916 → 395
            // retransmissions for 208 / 30 queue drops; 6 → 4 RTOs.
            assert!(off.drops_queue > 0 && on.drops_queue > 0, "the FIFO must overflow");
            assert!(on.goodput_mbps >= off.goodput_mbps, "SACK {} vs {}", on.goodput_mbps, off.goodput_mbps);
            assert!(on.goodput_mbps > 0.95 * fq, "SACK {} vs fq_codel {fq}", on.goodput_mbps);
            assert!(on.tcp_rtos <= off.tcp_rtos, "RTOs {} vs {}", on.tcp_rtos, off.tcp_rtos);
            assert!(
                on.tcp_retransmits * 10 < off.tcp_retransmits * 7,
                "retransmits {} vs {}",
                on.tcp_retransmits,
                off.tcp_retransmits
            );
        }
    }
    eprintln!("goodput [cc][sack]: {goodput:?}");
}
