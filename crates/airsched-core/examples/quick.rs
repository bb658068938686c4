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
    println!("total goodput {:.4} Mb/s, events {}, wall {:.3}s, frames {}", r.summary.total_goodput_mbps, r.summary.events, r.summary.wall_seconds, r.summary.frames);
    for s in &r.stations {
        println!("{:8} rate {:>4} goodput {:.4} std {:.4} air {:.3} frames {} att {} retr {} coll {} drops {}/{}", s.name, s.rate_mbps, s.goodput_mbps, s.goodput_std_mbps, s.airtime_share, s.tx_frames, s.tx_attempts, s.retries, s.collisions, s.drops_queue, s.drops_retry);
    }
    for f in &r.flows {
        println!("{:8} {}->{} goodput {:.4} std {:.4} sent {} rx {} lost {} delay {:.3}ms qd {:.3}ms rtx {} fr {} rto {} cwnd {} srtt {:.1} rtt50 {:.1}", f.name, f.src, f.dst, f.goodput_mbps, f.goodput_std_mbps, f.sent_packets, f.received_packets, f.lost_packets, f.delay_mean_ms, f.queue_delay_mean_ms, f.tcp_retransmits, f.tcp_fast_recoveries, f.tcp_rtos, f.tcp_cwnd_end, f.tcp_srtt_ms, f.rtt_p50_ms);
    }
    for n in &r.nodes {
        println!("node {:8} air {:.4} att {} beacons {}", n.name, n.airtime_share, n.tx_attempts, n.beacons);
    }
}
