//! Kernel eras over the simulated cell: TCP Small Queues and local congestion on a station's
//! upload, and a file download's completion time (docs/model-tcp.md, "Kernel eras").

use crate::common;

use common::run;

/// One 11 Mb/s station uploads to the server for 20 s (2 s warm-up) behind its default
/// 1000-packet pfifo; `extra` goes into the flow.
fn upload(kernel: &str, extra: &str) -> String {
    format!(
        "[run]\nduration = \"20s\"\nwarmup = \"2s\"\nseed = 1\n[server]\n{kernel}\n\
         [[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\n{kernel}\n\
         [[flow]]\nname = \"up\"\nprotocol = \"tcp\"\nsrc = \"sta1\"\ndst = \"server\"\n{extra}\n"
    )
}

#[test]
fn tsq_keeps_a_stations_upload_out_of_its_qdisc() {
    // 6.1: at ~5.2 Mb/s and SRTT ~30 ms the pacing rate is 1.2 · 5.2 Mb/s ≈ 780 kB/s; with
    // mac80211's shift 7 TSQ lets about 6 kB (4 segments) wait at the station, ~10 ms of
    // airtime at 2.3 ms per segment and its ACK's share.
    let r = run(&upload("kernel = \"6.1\"", ""));
    let f = &r.flows[0];
    eprintln!(
        "TSQ: {:.3} Mb/s, queue delay {:.1} ms, srtt {:.1} ms, drops {}",
        f.goodput_mbps, f.queue_delay_mean_ms, f.tcp_srtt_ms, f.drops_queue
    );
    assert!(f.queue_delay_mean_ms < 50.0, "{}", f.queue_delay_mean_ms);
    assert_eq!((f.drops_queue, f.tcp_retransmits), (0, 0));
    // Without TSQ the autotuned window (about 1.3 MB, some 900 segments) nearly fills the
    // 1000-packet queue (≈ 2 s at 2.3 ms per segment); it stays below it, so no loss.
    let r = run(&upload("kernel = \"6.1\"", "tsq = 0"));
    let g = &r.flows[0];
    eprintln!(
        "no TSQ: {:.3} Mb/s, queue delay {:.1} ms, refused {}",
        g.goodput_mbps, g.queue_delay_mean_ms, g.refused_sends
    );
    assert!(g.queue_delay_mean_ms > 1000.0, "{}", g.queue_delay_mean_ms);
    assert_eq!((g.drops_queue, g.tcp_retransmits), (0, 0));
    assert!((g.goodput_mbps - f.goodput_mbps).abs() < 0.05 * f.goodput_mbps);
    // A scenario that names no era runs 6.1: the same TSQ-limited upload.
    let r = run(&upload("", ""));
    let h = &r.flows[0];
    assert_eq!((h.goodput_mbps, h.queue_delay_mean_ms, h.drops_queue), (f.goodput_mbps, f.queue_delay_mean_ms, 0));
}

#[test]
fn a_file_download_reports_its_completion_time() {
    // 2 MB (tc units: 2 · 1048576 bytes) to an 11 Mb/s station at 4-5.5 Mb/s of goodput:
    // 3.05-4.2 s per copy, so 4-6 copies in 20 s; repeated.
    let text = "[run]\nduration = \"20s\"\nwarmup = \"0s\"\nseed = 1\n[server]\nkernel = \"2.4\"\n\
                [[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\nkernel = \"2.4\"\n\
                [[flow]]\nname = \"ftp\"\nprotocol = \"tcp\"\nsrc = \"server\"\ndst = \"sta1\"\nbytes = \"2MB\"\nrepeat = true\n";
    let r = run(text);
    let f = &r.flows[0];
    eprintln!("{} files, {:.3} s each", f.tcp_files_done, f.tcp_file_time_s);
    assert!(f.tcp_file_time_s > 3.05 && f.tcp_file_time_s < 4.2, "{}", f.tcp_file_time_s);
    assert!((4..=6).contains(&f.tcp_files_done), "{}", f.tcp_files_done);
    // Without repeat the flow stops after one file.
    let r = run(&text.replace("repeat = true\n", ""));
    let g = &r.flows[0];
    assert_eq!(g.tcp_files_done, 1);
    assert!((g.tcp_file_time_s - f.tcp_file_time_s).abs() < 0.5);
    // Exactly the file's bytes were delivered over the 20 s measured.
    let bytes = g.goodput_mbps * 1e6 * 20.0 / 8.0;
    assert!((bytes - 2_097_152.0).abs() < 1448.0, "{bytes}");
}

/// A 10-segment file from the server to an 11 Mb/s station behind an 8-packet pfifo at the
/// AP: the initial window arrives at once over the wired link, one segment is in service and
/// 8 wait, so the 10th, the file's last, is dropped: a tail loss with nothing after it.
fn tail_loss(extra: &str) -> String {
    tail_loss_n(10, 8, extra)
}

fn tail_loss_n(n: u64, limit: u64, extra: &str) -> String {
    format!(
        "[run]\nduration = \"5s\"\nwarmup = \"0s\"\nseed = 1\n[server]\nkernel = \"6.1\"\n\
         [ap]\ntc = \"tc qdisc add dev wlan0 root pfifo limit {limit}\"\n\
         [[station]]\nname = \"sta1\"\nrate = \"11Mbps\"\nkernel = \"6.1\"\n\
         [[flow]]\nname = \"dl\"\nprotocol = \"tcp\"\nsrc = \"server\"\ndst = \"sta1\"\nbytes = \"{}\"\n{extra}\n",
        n * 1448
    )
}

#[test]
fn linux_6_1_repairs_a_tail_loss_with_tlp_not_an_rto() {
    let r = run(&tail_loss(""));
    let f = &r.flows[0];
    eprintln!(
        "6.1: drops {}, rtx {}, recoveries {}, RTOs {}, file {:.3} s",
        f.drops_queue, f.tcp_retransmits, f.tcp_fast_recoveries, f.tcp_rtos, f.tcp_file_time_s
    );
    let r = run(&tail_loss("rack = false\ntlp = false\nfrto = false"));
    let g = &r.flows[0];
    eprintln!(
        "6.1 without RACK-TLP: drops {}, rtx {}, recoveries {}, RTOs {}, file {:.3} s",
        g.drops_queue, g.tcp_retransmits, g.tcp_fast_recoveries, g.tcp_rtos, g.tcp_file_time_s
    );
    assert_eq!((f.drops_queue, g.drops_queue), (1, 1), "the same tail segment is dropped");
    // 6.1: the probe (2 SRTT + 2 ms after the last send) resends the last segment, which is
    // the lost one: one retransmission, no recovery episode, no RTO.
    assert_eq!((f.tcp_files_done, f.tcp_retransmits, f.tcp_fast_recoveries, f.tcp_rtos), (1, 1, 0, 0));
    // Without RACK-TLP nothing is SACKed after the tail: the RTO (200 ms minimum) resends it.
    assert_eq!((g.tcp_files_done, g.tcp_retransmits, g.tcp_rtos), (1, 1, 1));
    assert!(g.tcp_file_time_s - f.tcp_file_time_s > 0.15, "{} {}", f.tcp_file_time_s, g.tcp_file_time_s);
}
