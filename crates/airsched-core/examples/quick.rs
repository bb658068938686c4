//! Runs a scenario file given on the command line and prints the raw results (a developer tool;
//! users run `airsched run`).
use airsched_core::{parse_scenario, run_scenario};

fn main() {
    let path = std::env::args().nth(1).expect("usage: quick SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let scn = match parse_scenario(&text, &path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let r = run_scenario(&scn).expect("run");
    println!(
        "total goodput {:.4} Mb/s, events {}, wall {:.3}s, frames {}",
        r.summary.total_goodput_mbps, r.summary.events, r.summary.wall_seconds, r.summary.frames
    );
    for s in &r.stations {
        println!(
            "{:8} rate {:>4} goodput {:.4} std {:.4} air {:.3} frames {} att {} retr {} coll {} drops {}/{}",
            s.name,
            s.rate_mbps,
            s.goodput_mbps,
            s.goodput_std_mbps,
            s.airtime_share,
            s.tx_frames,
            s.tx_attempts,
            s.retries,
            s.collisions,
            s.drops_queue,
            s.drops_retry
        );
    }
    for f in &r.flows {
        println!("{:8} {}->{} goodput {:.4} std {:.4} sent {} rx {} lost {} delay {:.3}ms qd {:.3}ms rtx {} fr {} rto {} cwnd {} srtt {:.1} rtt50 {:.1}", f.name, f.src, f.dst, f.goodput_mbps, f.goodput_std_mbps, f.sent_packets, f.received_packets, f.lost_packets, f.delay_mean_ms, f.queue_delay_mean_ms, f.tcp_retransmits, f.tcp_fast_recoveries, f.tcp_rtos, f.tcp_cwnd_end, f.tcp_srtt_ms, f.rtt_p50_ms);
    }
    for n in &r.nodes {
        println!("node {:8} air {:.4} att {} beacons {}", n.name, n.airtime_share, n.tx_attempts, n.beacons);
        for b in &r.bluetooth {
            println!("bt {:6} {:4} [{}] l2cap {:.1} kb/s data {} retx {} empty {} slots {:.3} air {:.3}s hit {} err {} dup {} delivered {}", b.name, b.direction, b.packet_types, b.l2cap_mbps * 1000.0, b.data_packets, b.retransmissions, b.empty_packets, b.slot_share, b.airtime_s, b.hit_by_wlan, b.lost_errors, b.duplicates, b.delivered);
        }
        for c in &r.coexistence {
            println!(
                "coex {:6} {:4} data {} hit {} ({:.3}) acks {} hit {} ({:.3})",
                c.station,
                c.direction,
                c.data_frames,
                c.data_hit_by_bt,
                c.data_hit_by_bt as f64 / c.data_frames.max(1) as f64,
                c.acks,
                c.acks_hit_by_bt,
                c.acks_hit_by_bt as f64 / c.acks.max(1) as f64
            );
        }
    }
}
