//! The tc command language: real-world scripts parse into the trees they describe, batch files
//! with comments and continuations, every kind of error at its exact line, column and token,
//! add/replace/change/delete semantics, a property test (no input panics, every diagnostic has
//! a position) and the `tc show` text.
//!
//! Scripts from the papers and LARTC are checked twice: their declared tree (what the script
//! says) and the built tree (every kind named is there and its statistics identity holds).

use airsched_core::FlowKey;
use airsched_core::{
    build_trees, class_show, declared_trees, parse_script, qdisc_show, tree_text, Command, DeclaredQdisc, DeviceSpec,
    Op, Severity, TcDiag,
};
use airsched_core::{classify, Filter, FilterKind, U32Key, ETH_P_ALL, ETH_P_IP};
use airsched_core::{ClassReport, Handle, Qdisc, QdiscReport, QdiscStats};
use proptest::prelude::*;

fn devices(names: &[&str]) -> Vec<DeviceSpec> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| DeviceSpec { name: n.to_string(), txqueuelen: 1000, seed: 7, stream: i as u64 })
        .collect()
}

fn errors(d: &[TcDiag]) -> Vec<&TcDiag> {
    d.iter().filter(|d| d.severity == Severity::Error).collect()
}

fn warnings(d: &[TcDiag]) -> Vec<&TcDiag> {
    d.iter().filter(|d| d.severity == Severity::Warning).collect()
}

/// Parse and apply `text` to `devs`: the declared trees and every diagnostic.
fn declare(text: &str, devs: &[&str]) -> (Vec<(String, Vec<DeclaredQdisc>)>, Vec<TcDiag>) {
    let (script, mut d) = parse_script(text);
    let trees = declared_trees(&script, &devices(devs), &mut d);
    (trees, d)
}

/// The declared tree of the only configured device; panics on errors.
fn tree_of(text: &str, dev: &str) -> Vec<DeclaredQdisc> {
    let (trees, d) = declare(text, &[dev]);
    assert!(errors(&d).is_empty(), "unexpected errors: {d:#?}");
    assert_eq!(trees.len(), 1, "{trees:#?}");
    trees.into_iter().next().unwrap().1
}

/// The script builds without errors into one tree for `dev` that contains every kind listed.
#[track_caller]
fn builds_with(text: &str, dev: &str, kinds: &[&str]) {
    let (script, mut d) = parse_script(text);
    let built = build_trees(&script, &devices(&[dev]), &mut d);
    let errs = errors(&d);
    assert!(errs.is_empty(), "unexpected errors: {errs:#?}");
    assert_eq!(built.len(), 1, "one tree for {dev}");
    let reports = built[0].1.reports();
    for k in kinds {
        assert!(
            reports.iter().any(|r| r.kind == *k),
            "no {k} in the built tree: {:?}",
            reports.iter().map(|r| r.kind).collect::<Vec<_>>()
        );
    }
    for r in &reports {
        assert!(r.stats.identity_holds(), "{} {}", r.kind, r.handle);
    }
}

#[track_caller]
fn check(e: &TcDiag, line: u32, col: u32, token: &str, fragment: &str) {
    assert_eq!((e.line, e.col, e.token.as_str()), (line, col, token), "wrong position or token in: {e}");
    assert!(e.message.contains(fragment), "{fragment:?} not found in: {e}");
}

/// `text` applied to wlan0 and eth0 has exactly one error, as described.
#[track_caller]
fn one_error(text: &str, line: u32, col: u32, token: &str, fragment: &str) {
    let (script, mut d) = parse_script(text);
    let _ = build_trees(&script, &devices(&["wlan0", "eth0"]), &mut d);
    let errs: Vec<&TcDiag> = errors(&d);
    assert_eq!(errs.len(), 1, "expected one error, got: {d:#?}");
    check(errs[0], line, col, token, fragment);
}

fn h(major: u16, minor: u16) -> Handle {
    Handle::new(major, minor)
}

fn flow(dst: [u8; 4], dport: u16) -> FlowKey {
    FlowKey {
        src_ip: u32::from_be_bytes([10, 0, 0, 1]),
        dst_ip: u32::from_be_bytes(dst),
        sport: 40000,
        dport,
        proto: 17,
        tos: 0,
        mark: 0,
        priority: 0,
    }
}

// ------------------------------------------------------------------------------------------------
// Real-world scripts

/// Yip & Kwok, HTB+SFQ: HTB splits the IMQ device's traffic by interface, class 1:2 (WLAN) and
/// 1:3 (Bluetooth) under 1:1, an SFQ in each. (The paper gives the structure, not the command
/// lines; these are the commands that build it.)
const YIP_KWOK_HTB_SFQ: &str = "\
tc qdisc add dev imq0 root handle 1: htb default 3
tc class add dev imq0 parent 1: classid 1:1 htb rate 6mbit ceil 6mbit
tc class add dev imq0 parent 1:1 classid 1:2 htb rate 5mbit ceil 6mbit
tc class add dev imq0 parent 1:1 classid 1:3 htb rate 700kbit ceil 6mbit
tc qdisc add dev imq0 parent 1:2 handle 2: sfq perturb 10
tc qdisc add dev imq0 parent 1:3 handle 3: sfq perturb 10
tc filter add dev imq0 parent 1: protocol ip prio 1 u32 match ip dst 192.168.1.0/24 flowid 1:2
tc filter add dev imq0 parent 1: protocol ip prio 2 u32 match ip dst 192.168.2.0/24 flowid 1:3
";

/// Yip & Kwok, PRIO+TBF: WLAN in the high band, a TBF on each band.
const YIP_KWOK_PRIO_TBF: &str = "\
tc qdisc add dev imq0 root handle 1: prio
tc qdisc add dev imq0 parent 1:1 handle 10: tbf rate 5mbit burst 10kb latency 50ms
tc qdisc add dev imq0 parent 1:2 handle 20: tbf rate 700kbit burst 5kb latency 50ms
tc qdisc add dev imq0 parent 1:3 handle 30: tbf rate 700kbit burst 5kb latency 50ms
tc filter add dev imq0 parent 1: protocol ip prio 1 u32 match ip dst 192.168.1.0/24 flowid 1:1
tc filter add dev imq0 parent 1: protocol ip prio 2 u32 match ip dst 192.168.2.0/24 flowid 1:2
";

/// Yip & Kwok, SFQ alone, hash perturbed every ten seconds.
const YIP_KWOK_SFQ: &str = "tc qdisc add dev imq0 root sfq perturb 10\n";

/// Valenzuela et al.: HTB limits on a station's uplink (STA2 at 900 kbit/s, STA1 2400 kbit/s
/// in the 11/2 Mb/s experiment), written as a batch file.
const VALENZUELA_HTB: &str = "\
# HTB limits, Table III (STA1 11 Mb/s, STA2 2 Mb/s)
qdisc add dev wlan0 root handle 1: htb default 30
class add dev wlan0 parent 1: classid 1:1 htb rate 5mbit
class add dev wlan0 parent 1:1 classid 1:10 htb rate 2400kbit ceil 2400kbit   # STA1
class add dev wlan0 parent 1:1 classid 1:20 htb rate 900kbit ceil 900kbit     # STA2
class add dev wlan0 parent 1:1 classid 1:30 htb rate 100kbit ceil 5mbit
filter add dev wlan0 protocol ip parent 1:0 prio 1 u32 match ip src 192.168.0.11/32 flowid 1:10
filter add dev wlan0 protocol ip parent 1:0 prio 1 u32 match ip src 192.168.0.12/32 flowid 1:20
";

/// Garroppo et al.: the three reference schedulers, 4:1 share of 5 Mb/s between MS1 and MS2.
const GARROPPO_CBQ: &str = "\
tc qdisc add dev wlan0 root handle 1: cbq bandwidth 5mbit avpkt 1000
tc class add dev wlan0 parent 1: classid 1:1 cbq bandwidth 5mbit rate 5mbit allot 1514 prio 5 avpkt 1000 bounded
tc class add dev wlan0 parent 1:1 classid 1:10 cbq bandwidth 5mbit rate 4mbit allot 1514 prio 5 avpkt 1000 weight 400kbit
tc class add dev wlan0 parent 1:1 classid 1:20 cbq bandwidth 5mbit rate 1mbit allot 1514 prio 5 avpkt 1000 weight 100kbit
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.2 flowid 1:10
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.3 flowid 1:20
";

const GARROPPO_HTB: &str = "\
tc qdisc add dev wlan0 root handle 1: htb
tc class add dev wlan0 parent 1: classid 1:1 htb rate 5mbit
tc class add dev wlan0 parent 1:1 classid 1:10 htb rate 4mbit ceil 5mbit
tc class add dev wlan0 parent 1:1 classid 1:20 htb rate 1mbit ceil 5mbit
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.2 flowid 1:10
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.3 flowid 1:20
";

const GARROPPO_DRR: &str = "\
tc qdisc add dev wlan0 root handle 1: drr
tc class add dev wlan0 parent 1: classid 1:1 drr quantum 6056
tc class add dev wlan0 parent 1: classid 1:2 drr quantum 1514
tc qdisc add dev wlan0 parent 1:1 pfifo limit 100
tc qdisc add dev wlan0 parent 1:2 pfifo limit 100
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.2 flowid 1:1
tc filter add dev wlan0 parent 1: protocol ip prio 2 u32 match ip dst 10.0.0.3 flowid 1:2
";

/// LARTC's HTB example (section 9.5.5.1 style): web traffic, one host, the rest.
const LARTC_HTB: &str = r#"#!/bin/sh
# LARTC-style HTB with SFQ leaves
tc qdisc del dev eth0 root 2>/dev/null || true
tc qdisc add dev eth0 root handle 1: htb default 30
tc class add dev eth0 parent 1: classid 1:1 htb rate 6mbit burst 15k
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 5mbit burst 15k
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 3mbit ceil 6mbit burst 15k
tc class add dev eth0 parent 1:1 classid 1:30 htb rate 1kbit ceil 6mbit burst 15k
tc qdisc add dev eth0 parent 1:10 handle 10: sfq perturb 10
tc qdisc add dev eth0 parent 1:20 handle 20: sfq perturb 10
tc qdisc add dev eth0 parent 1:30 handle 30: sfq perturb 10
U32="tc filter add dev eth0 protocol ip parent 1:0 prio 1 u32"
$U32 match ip dport 80 0xffff flowid 1:10
"#;

/// LARTC's prio example, wondershaper's ACK and TOS filters, and fw marks.
const LARTC_PRIO_FILTERS: &str = "\
tc qdisc add dev eth0 root handle 1: prio
tc qdisc add dev eth0 parent 1:1 handle 10: sfq
tc qdisc add dev eth0 parent 1:2 handle 20: tbf rate 20kbit buffer 1600 limit 3000
tc qdisc add dev eth0 parent 1:3 handle 30: sfq
tc filter add dev eth0 parent 1: protocol ip prio 10 u32 match ip tos 0x10 0xff flowid 1:1
tc filter add dev eth0 parent 1: protocol ip prio 11 u32 match ip protocol 1 0xff flowid 1:1
tc filter add dev eth0 parent 1: protocol ip prio 12 u32 \\
    match ip protocol 6 0xff \\
    match u8 0x05 0x0f at 0 \\
    match u16 0x0000 0xffc0 at 2 \\
    match u8 0x10 0xff at 33 \\
    flowid 1:1
tc filter add dev eth0 parent 1: protocol ip prio 13 handle 6 fw flowid 1:3
";

#[test]
fn yip_kwok_htb_sfq_declares_two_classes_under_one() {
    let t = tree_of(YIP_KWOK_HTB_SFQ, "imq0");
    assert_eq!(t.len(), 3);
    assert_eq!(
        (t[0].kind.as_str(), t[0].handle, t[0].parent, t[0].options.as_str()),
        ("htb", h(1, 0), Handle::ROOT, "default 3")
    );
    let classes: Vec<_> = t[0].classes.iter().map(|c| (c.classid, c.parent, c.options.as_str())).collect();
    assert_eq!(
        classes,
        vec![
            (h(1, 1), h(1, 0), "rate 6mbit ceil 6mbit"),
            (h(1, 2), h(1, 1), "rate 5mbit ceil 6mbit"),
            (h(1, 3), h(1, 1), "rate 700kbit ceil 6mbit"),
        ]
    );
    assert_eq!(
        (t[1].kind.as_str(), t[1].handle, t[1].parent, t[1].options.as_str()),
        ("sfq", h(2, 0), h(1, 2), "perturb 10")
    );
    assert_eq!((t[2].kind.as_str(), t[2].handle, t[2].parent), ("sfq", h(3, 0), h(1, 3)));
    let f = &t[0].filters;
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].prio, f[0].protocol, f[0].classid, f[0].line), (1, ETH_P_IP, h(1, 2), 7));
    assert_eq!(f[0].kind, FilterKind::U32 { keys: vec![U32Key { off: 16, mask: 0xffff_ff00, val: 0xc0a8_0100 }] });
    // The filters send the WLAN and Bluetooth subnets to their classes.
    assert_eq!(classify(f, h(1, 0), &flow([192, 168, 1, 7], 5001), 1500), Some(h(1, 2)));
    assert_eq!(classify(f, h(1, 0), &flow([192, 168, 2, 7], 5001), 1500), Some(h(1, 3)));
    assert_eq!(classify(f, h(1, 0), &flow([192, 168, 3, 7], 5001), 1500), None);
    builds_with(YIP_KWOK_HTB_SFQ, "imq0", &["htb", "sfq"]);
}

#[test]
fn yip_kwok_prio_tbf_puts_a_tbf_on_each_band() {
    let t = tree_of(YIP_KWOK_PRIO_TBF, "imq0");
    let shape: Vec<_> = t.iter().map(|q| (q.kind.as_str(), q.handle, q.parent)).collect();
    assert_eq!(
        shape,
        vec![
            ("prio", h(1, 0), Handle::ROOT),
            ("tbf", h(0x10, 0), h(1, 1)),
            ("tbf", h(0x20, 0), h(1, 2)),
            ("tbf", h(0x30, 0), h(1, 3))
        ]
    );
    assert_eq!(t[1].options, "rate 5mbit burst 10kb latency 50ms");
    assert_eq!(t[0].filters.iter().map(|f| f.classid).collect::<Vec<_>>(), vec![h(1, 1), h(1, 2)]);
    builds_with(YIP_KWOK_PRIO_TBF, "imq0", &["prio", "tbf"]);
}

#[test]
fn yip_kwok_sfq_gets_the_first_automatic_handle() {
    let t = tree_of(YIP_KWOK_SFQ, "imq0");
    assert_eq!((t[0].kind.as_str(), t[0].handle, t[0].options.as_str()), ("sfq", h(0x8001, 0), "perturb 10"));
    builds_with(YIP_KWOK_SFQ, "imq0", &["sfq"]);
}

#[test]
fn valenzuela_batch_file_limits_each_station() {
    let t = tree_of(VALENZUELA_HTB, "wlan0");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].classes.len(), 4);
    assert_eq!(t[0].classes[2].options, "rate 900kbit ceil 900kbit");
    let f = &t[0].filters;
    // Same priority: they run in the order they were added.
    assert_eq!(f.iter().map(|f| (f.prio, f.line)).collect::<Vec<_>>(), vec![(1, 7), (1, 8)]);
    let mut sta2 = flow([10, 0, 0, 9], 5001);
    sta2.src_ip = u32::from_be_bytes([192, 168, 0, 12]);
    assert_eq!(classify(f, h(1, 0), &sta2, 1028), Some(h(1, 0x20)));
    builds_with(VALENZUELA_HTB, "wlan0", &["htb"]);
}

#[test]
fn garroppo_reference_schedulers() {
    let cbq = tree_of(GARROPPO_CBQ, "wlan0");
    assert_eq!(cbq[0].classes.iter().map(|c| c.classid).collect::<Vec<_>>(), vec![h(1, 1), h(1, 0x10), h(1, 0x20)]);
    assert!(cbq[0].classes[0].options.ends_with("bounded"));
    builds_with(GARROPPO_CBQ, "wlan0", &["cbq"]);

    let htb = tree_of(GARROPPO_HTB, "wlan0");
    assert_eq!(htb[0].options, "");
    builds_with(GARROPPO_HTB, "wlan0", &["htb"]);

    // DRR leaves get pfifos with automatic handles 8001: and 8002:.
    let drr = tree_of(GARROPPO_DRR, "wlan0");
    let shape: Vec<_> = drr.iter().map(|q| (q.kind.as_str(), q.handle, q.parent, q.options.as_str())).collect();
    assert_eq!(
        shape,
        vec![
            ("drr", h(1, 0), Handle::ROOT, ""),
            ("pfifo", h(0x8001, 0), h(1, 1), "limit 100"),
            ("pfifo", h(0x8002, 0), h(1, 2), "limit 100")
        ]
    );
    builds_with(GARROPPO_DRR, "wlan0", &["drr"]);
}

/// Garroppo et al.'s WHTB setting (1:4 share): a whtb qdisc, classes given as `whtb` or as
/// `htb` (the class kind only picks tc's option parser; the kernel does not compare it).
const GARROPPO_WHTB: &str = "\
tc qdisc add dev wlan0 root handle 1: whtb gate 50% gate_skip 4
tc class add dev wlan0 parent 1: classid 1:1 whtb rate 5mbit
tc class add dev wlan0 parent 1:1 classid 1:10 whtb rate 4mbit ceil 4mbit
tc class add dev wlan0 parent 1:1 classid 1:20 htb rate 1mbit ceil 1mbit
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.2 flowid 1:10
tc filter add dev wlan0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.3 flowid 1:20
";

#[test]
fn garroppo_whtb_builds_and_shows_as_whtb() {
    let decl = tree_of(GARROPPO_WHTB, "wlan0");
    assert_eq!((decl[0].kind.as_str(), decl[0].options.as_str()), ("whtb", "gate 50% gate_skip 4"));
    builds_with(GARROPPO_WHTB, "wlan0", &["whtb"]);
    let (script, mut d) = parse_script(GARROPPO_WHTB);
    let built = build_trees(&script, &devices(&["wlan0"]), &mut d);
    assert!(d.is_empty(), "{d:?}");
    let reports = built[0].1.reports();
    assert_eq!(
        tree_text("wlan0", &reports),
        "dev wlan0\n\
         \x20 qdisc whtb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 0 direct_qlen 1000 gate 50% gate_skip 4\n\
         \x20   class whtb 1:1 root rate 5Mbit ceil 5Mbit burst 1600b cburst 1600b\n\
         \x20     class whtb 1:10 parent 1:1 prio 0 rate 4Mbit ceil 4Mbit burst 1600b cburst 1600b\n\
         \x20       qdisc pfifo 0: parent 1:10 limit 1000p\n\
         \x20     class whtb 1:20 parent 1:1 prio 0 rate 1Mbit ceil 1Mbit burst 1600b cburst 1600b\n\
         \x20       qdisc pfifo 0: parent 1:20 limit 1000p\n"
    );
    let s = class_show("wlan0", &reports, true);
    assert!(s.contains(" tokens: 50000 ctokens: 50000\n charged: 0 bytes gated: 0 forced: 0\n"), "{s}");

    // Other class kinds still do not fit, and whtb's options are not htb's.
    let base = "tc qdisc add dev eth0 root handle 1: whtb\n";
    one_error(
        &format!("{base}tc class add dev eth0 parent 1: classid 1:2 drr"),
        2,
        45,
        "drr",
        "class kind drr does not match qdisc 1:, which is a whtb",
    );
    one_error("tc qdisc add dev eth0 root handle 1: htb gate\n", 1, 42, "gate", "unknown htb option \"gate\"");
    one_error("tc qdisc add dev eth0 root handle 1: whtb gate 150%\n", 1, 48, "150%", "gate 150% is out of range");
}

#[test]
fn lartc_htb_script_with_shell_lines() {
    // The cleanup line and its shell decorations are warnings; the shell variables are errors.
    let (trees, d) = declare(LARTC_HTB, &["eth0"]);
    let w = warnings(&d);
    check(w[0], 3, 28, "2>/dev/null", "shell redirections");
    check(w[1], 3, 40, "||", "ignored");
    check(w[2], 3, 23, "root", "nothing to delete");
    let errs = errors(&d);
    assert_eq!(errs.len(), 2, "{d:#?}");
    check(errs[0], 12, 1, "U32=\"tc", "shell syntax");
    check(errs[1], 13, 1, "$U32", "shell syntax");
    let t = &trees[0].1;
    assert_eq!(t.len(), 4);
    assert_eq!(t[0].classes.len(), 4);
    assert_eq!(t[3].parent, h(1, 0x30));
}

#[test]
fn lartc_prio_with_wondershaper_filters_and_fw() {
    let t = tree_of(LARTC_PRIO_FILTERS, "eth0");
    assert_eq!(t.len(), 4);
    let f = &t[0].filters;
    assert_eq!(f.iter().map(|f| f.prio).collect::<Vec<_>>(), vec![10, 11, 12, 13]);
    assert_eq!(f[0].kind, FilterKind::U32 { keys: vec![U32Key { off: 0, mask: 0x00ff_0000, val: 0x0010_0000 }] });
    // The ACK filter: protocol, IHL, total length < 64, TCP flags byte 33 (word 32).
    assert_eq!(
        f[2].kind,
        FilterKind::U32 {
            keys: vec![
                U32Key { off: 8, mask: 0x00ff_0000, val: 0x0006_0000 },
                U32Key { off: 0, mask: 0x0f00_ffc0, val: 0x0500_0000 },
                U32Key { off: 32, mask: 0x00ff_0000, val: 0x0010_0000 },
            ]
        }
    );
    assert_eq!(f[2].line, 7);
    assert_eq!(f[3].kind, FilterKind::Fw { handle: 6, mask: u32::MAX });
    let mut marked = flow([10, 0, 0, 2], 80);
    marked.mark = 6;
    assert_eq!(classify(f, h(1, 0), &marked, 1500), Some(h(1, 3)));
    let mut lowdelay = flow([10, 0, 0, 2], 80);
    lowdelay.tos = 0x10;
    assert_eq!(classify(f, h(1, 0), &lowdelay, 1500), Some(h(1, 1)));
    builds_with(LARTC_PRIO_FILTERS, "eth0", &["prio", "sfq", "tbf"]);
}

#[test]
fn fifo_scripts_build() {
    let text =
        "tc qdisc add dev wlan0 root handle 1: bfifo limit 30k\ntc qdisc add dev eth0 root pfifo_head_drop limit 20";
    let (script, mut d) = parse_script(text);
    let mut devs = devices(&["wlan0", "eth0", "eth1"]);
    devs[0].txqueuelen = 50;
    let built = build_trees(&script, &devs, &mut d);
    assert!(d.is_empty(), "{d:#?}");
    let names: Vec<_> = built.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["wlan0", "eth0"], "eth1 is not configured and keeps its default");
    let r = built[0].1.reports();
    assert_eq!((r[0].kind, r[0].handle, r[0].parent), ("bfifo", h(1, 0), Handle::ROOT));
    assert_eq!(r[0].options, "limit 30Kb");
    let r = built[1].1.reports();
    assert_eq!((r[0].kind, r[0].handle, r[0].options.as_str()), ("pfifo_head_drop", h(0x8001, 0), "limit 20p"));
    // Default limits come from the device's txqueuelen.
    let (script, mut d) = parse_script("tc qdisc add dev wlan0 root pfifo");
    let built = build_trees(&script, &devs, &mut d);
    assert_eq!(built[0].1.reports()[0].options, "limit 50p");
}

// ------------------------------------------------------------------------------------------------
// Batch files

#[test]
fn batch_lines_comments_continuations_and_quotes_mix() {
    let text = "\
# a tc -b file, with a stray tc line
qdisc add dev eth0 root handle 1: prio   # three bands

tc qdisc add dev eth0 parent 1:1 \\
        handle 10: \\
        pfifo limit 10
/sbin/tc qdisc add dev eth0 parent 1:2 handle 20: \"bfifo\" limit 3000
sudo tc qdisc add dev eth0 parent 1:3 handle 30: pfifo_head_drop
\tqdisc\tadd dev eth0 parent 10:1 pfifo # tabs are blanks
";
    let (script, d) = parse_script(text);
    assert!(errors(&d).is_empty(), "{d:#?}");
    assert_eq!(script.commands.len(), 5);
    let lines: Vec<u32> = script.commands.iter().map(|c| c.line()).collect();
    assert_eq!(lines, vec![2, 4, 7, 8, 9]);
    let Command::Qdisc(q) = &script.commands[1] else { panic!() };
    let hd = q.handle.unwrap();
    assert_eq!((hd.tok.text, hd.tok.line, hd.tok.col), ("10:", 5, 16));
    let k = q.kind.unwrap();
    assert_eq!((k.line, k.col), (6, 9));
    assert_eq!(q.end, (6, 23));
    let Command::Qdisc(q) = &script.commands[2] else { panic!() };
    let k = q.kind.unwrap();
    assert_eq!((k.text, k.col), ("bfifo", 52));
    let Command::Qdisc(q) = &script.commands[4] else { panic!() };
    assert_eq!((q.op, q.dev.col), (Op::Add, 16));
    // The last one hangs from a class of a classless qdisc: the build says so.
    let mut d = vec![];
    let built = build_trees(&script, &devices(&["eth0"]), &mut d);
    assert!(built.is_empty());
    let errs = errors(&d);
    assert_eq!(errs.len(), 1, "only the pfifo error: {d:#?}");
    assert!(
        errs.iter().any(|e| e.line == 9 && e.token == "10:1" && e.message.contains("pfifo is classless")),
        "{d:#?}"
    );
}

#[test]
fn show_lines_and_global_options_are_warnings() {
    let text = "tc -s -d qdisc show dev eth0\ntc -s class ls dev eth0\ntc filter show dev eth0\n-force qdisc add dev eth0 root pfifo\ntc -n ns1 qdisc add dev eth0 root pfifo\n";
    let (script, d) = parse_script(text);
    assert!(errors(&d).is_empty(), "{d:#?}");
    assert_eq!(script.commands.len(), 2);
    let w = warnings(&d);
    assert_eq!(w.len(), 8, "{w:#?}");
    check(w[0], 1, 4, "-s", "only changes how tc prints");
    check(w[2], 1, 16, "show", "ignored");
    check(w[6], 4, 1, "-force", "no effect");
}

#[test]
fn continuation_at_end_of_file_and_after_spaces() {
    let (script, d) = parse_script("tc qdisc add dev eth0 \\   \n root pfifo \\");
    assert_eq!(script.commands.len(), 1);
    let w = warnings(&d);
    assert_eq!(w.len(), 2, "{d:#?}");
    check(w[0], 1, 23, "", "spaces after the line-continuation");
    check(w[1], 2, 13, "", "ends with a line-continuation");
}

// ------------------------------------------------------------------------------------------------
// Errors, one per kind, with their exact positions

#[test]
fn unknown_object() {
    one_error(
        "tc qdsic add dev eth0 root pfifo",
        1,
        4,
        "qdsic",
        "unknown tc object \"qdsic\"; expected qdisc, class or filter",
    );
    one_error("tc chain add dev eth0", 1, 4, "chain", "not modelled");
    // ip link lines make virtual devices (docs/tc.md); the rest of ip is not modelled.
    one_error("ip route add default dev wlan0", 1, 4, "route", "ip route is not modelled");
    one_error("tc", 1, 1, "tc", "needs an object");
    one_error("DEV=wlan0", 1, 1, "DEV=wlan0", "shell syntax");
    one_error("tc qdisc add dev $DEV root pfifo", 1, 18, "$DEV", "is a shell variable");
    one_error("tc qdisc del dev eth0 root; tc qdisc add dev eth0 root pfifo", 1, 27, ";", "one tc command per line");
}

#[test]
fn unknown_verb() {
    one_error(
        "tc qdisc insert dev eth0 root pfifo",
        1,
        10,
        "insert",
        "unknown qdisc command \"insert\"; expected one of: add, change, replace, link, delete",
    );
    one_error(
        "\n\ntc class remove dev eth0 classid 1:1",
        3,
        10,
        "remove",
        "expected one of: add, change, replace, delete",
    );
    one_error("filter flush dev eth0", 1, 8, "flush", "unknown filter command");
}

#[test]
fn bad_handles() {
    one_error("tc qdisc add dev eth0 root handle 1.0 pfifo", 1, 35, "1.0", "invalid qdisc handle \"1.0\"");
    one_error("tc qdisc add dev eth0 root handle 10000: pfifo", 1, 35, "10000:", "at most ffff:");
    one_error("tc qdisc add dev eth0 parent 1:x pfifo", 1, 30, "1:x", "invalid class id \"1:x\": expected MAJOR:MINOR");
    one_error(
        "tc qdisc add dev eth0 root handle 1: prio\ntc class add dev eth0 parent 1: classid 1:1:1 prio",
        2,
        41,
        "1:1:1",
        "invalid class id",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid root htb rate 1mbit",
        2,
        41,
        "root",
        "not a class id",
    );
    one_error("tc class add dev eth0 parent 1: handle 1:1 htb", 1, 33, "handle", "named with \"classid\"");
}

#[test]
fn missing_and_unknown_devices() {
    one_error("tc qdisc add root pfifo", 1, 10, "add", "missing \"dev NAME\"");
    one_error(
        "tc qdisc add dev wlan1 root pfifo",
        1,
        18,
        "wlan1",
        "unknown device \"wlan1\"; this node has wlan0, eth0",
    );
    one_error("tc qdisc add dev", 1, 14, "dev", "\"dev\" needs a value");
    let (script, mut d) = parse_script("tc filter add dev ifb0 parent 1: u32 match u32 0 0 flowid 1:1");
    build_trees(&script, &[], &mut d);
    check(errors(&d)[0], 1, 19, "ifb0", "this node has no interfaces");
}

#[test]
fn missing_parents() {
    one_error("tc qdisc add dev eth0 parent 2:1 handle 20: pfifo", 1, 30, "2:1", "no qdisc 2: on eth0");
    one_error(
        "tc qdisc add dev eth0 root handle 1: htb\ntc qdisc add dev eth0 parent 1:10 pfifo",
        2,
        30,
        "1:10",
        "has no class 1:10",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: drr\ntc class add dev eth0 parent 1:5 classid 1:10 drr",
        2,
        30,
        "1:5",
        "parent class 1:5 does not exist",
    );
    one_error("tc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit", 1, 30, "1:", "no qdisc 1: on eth0");
    one_error("tc class add dev eth0 classid :1 htb rate 1mbit", 1, 31, ":1", "no configured root qdisc");
    one_error(
        "tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 2: classid 2:1 htb",
        2,
        30,
        "2:",
        "no qdisc 2: on eth0",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: htb\ntc filter add dev eth0 parent 3: u32 match u32 0 0 flowid 1:1",
        2,
        31,
        "3:",
        "no qdisc 3: on eth0 to attach the filter to",
    );
    one_error(
        "tc filter add dev eth0 u32 match u32 0 0 flowid 1:1",
        1,
        11,
        "add",
        "default root qdisc, which holds no filters",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: htb\ntc qdisc add dev eth0 parent 1: pfifo",
        2,
        30,
        "1:",
        "is a qdisc, not a class",
    );
}

#[test]
fn duplicates() {
    let base = "tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit\n";
    one_error(
        &format!("{base}tc qdisc add dev eth0 parent 1:1 handle 1: pfifo"),
        3,
        41,
        "1:",
        "handle 1: is already used",
    );
    one_error(
        &format!("{base}tc class add dev eth0 parent 1: classid 1:1 htb rate 2mbit"),
        3,
        41,
        "1:1",
        "class 1:1 already exists",
    );
    one_error(
        &format!("{base}tc qdisc add dev eth0 root handle 2: pfifo"),
        3,
        35,
        "2:",
        "root already holds qdisc htb 1:; use replace",
    );
    one_error(&format!("{base}tc qdisc add dev eth0 root pfifo"), 3, 10, "add", "Exclusivity flag on");
    one_error("tc qdisc add dev eth0 dev eth1 root pfifo", 1, 27, "eth1", "duplicate \"dev\"");
    one_error("tc qdisc add dev eth0 root parent 1:1 pfifo", 1, 35, "1:1", "duplicate \"parent\"");
    one_error("tc qdisc add dev eth0 parent 1:1 root pfifo", 1, 34, "root", "second parent");
}

#[test]
fn class_on_a_classless_qdisc_comes_from_the_build() {
    one_error(
        "tc qdisc add dev eth0 root handle 1: pfifo\ntc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit",
        2,
        41,
        "1:1",
        "pfifo is classless: it has no class 1:1",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: bfifo\ntc qdisc add dev eth0 parent 1:1 pfifo",
        2,
        30,
        "1:1",
        "bfifo is classless: nothing can be attached to 1:1",
    );
    one_error(
        "tc qdisc add dev eth0 root handle 1: pfifo\ntc filter add dev eth0 parent 1: u32 match u32 0 0 flowid 1:1",
        2,
        31,
        "1:",
        "qdisc 1: is a pfifo, which cannot hold filters",
    );
}

#[test]
fn bad_u32_matches() {
    let base = "tc qdisc add dev eth0 root handle 1: prio\n";
    let f = |m: &str| format!("{base}tc filter add dev eth0 parent 1: protocol ip prio 1 u32 {m}");
    // Columns: the options start at 57 on line 2.
    one_error(&f("match ip dts 10.0.0.1 flowid 1:1"), 2, 66, "dts", "unknown \"match ip\" field \"dts\"");
    one_error(&f("match ip dport 80 flowid 1:1"), 2, 75, "flowid", "invalid match mask \"flowid\"");
    one_error(&f("match ip dport 80"), 2, 66, "dport", "\"dport\" needs a value");
    one_error(&f("match ip dst 10.1/8 flowid 1:1"), 2, 70, "10.1/8", "invalid IPv4 prefix");
    one_error(&f("match ip dport 70000 0xffff flowid 1:1"), 2, 72, "70000", "does not fit in 16 bits");
    one_error(&f("match u32 0x0a000001 0xffffffff at 13 flowid 1:1"), 2, 67, "0x0a000001", "multiple of 4");
    one_error(
        &f("match ip protocol 17 0xff match u8 6 0xff at 9 flowid 1:1"),
        2,
        92,
        "6",
        "contradicts an earlier match",
    );
    one_error(&f("match ether src 00:11:22:33:44:55 flowid 1:1"), 2, 63, "ether", "link-layer");
    one_error(&f("match ip dst 10.0.0.1 flowid 1:1 divisor 1"), 2, 90, "divisor", "hash tables");
    one_error(&f("match ip dst 10.0.0.1 bogus"), 2, 79, "bogus", "unknown u32 option \"bogus\"");
    one_error(
        &f("match ip dst 10.0.0.1 action mirred egress redirect dev ifb0"),
        2,
        113,
        "ifb0",
        "redirect to unknown device \"ifb0\"; no ifb device exists",
    );
    one_error(
        &f("match ip dst 10.0.0.1 action skbedit priority 1:1"),
        2,
        86,
        "skbedit",
        "filter actions are not modelled",
    );
}

#[test]
fn filters_without_flowid_or_kind() {
    let base = "tc qdisc add dev eth0 root handle 1: prio\n";
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: u32 match ip dst 10.0.0.1/32"),
        2,
        62,
        "",
        "without flowid/classid",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: handle 6 fw"),
        2,
        45,
        "",
        "fw filter without classid/flowid",
    );
    one_error(&format!("{base}tc filter add dev eth0 parent 1: protocol ip prio 1"), 2, 52, "", "needs a filter kind");
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: u32 flowid 1:1"),
        2,
        34,
        "u32",
        "at least one \"match\"",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: prio 1 basic match 'meta(random eq 6)' classid 1:1"),
        2,
        59,
        "random",
        "not modelled",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: protocol ipx6 u32 match u32 0 0 flowid 1:1"),
        2,
        43,
        "ipx6",
        "unknown protocol",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: prio 70000 u32 match u32 0 0 flowid 1:1"),
        2,
        39,
        "70000",
        "invalid priority",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 ingress u32 match u32 0 0 flowid 1:1"),
        2,
        24,
        "ingress",
        "eth0 has no ingress or clsact qdisc to hold ingress filters",
    );
}

#[test]
fn ingress_stab_and_quotes() {
    // The ingress hook: its handle is ffff:; filters go to `parent ffff:` or `ingress`.
    one_error("tc qdisc add dev eth0 handle 1: ingress\ntc qdisc add dev eth0 ingress", 2, 18, "eth0", "already");
    one_error(
        "tc qdisc add dev eth0 ingress\ntc filter add dev eth0 parent ffff: matchall action mirred egress redirect dev ifb0",
        2,
        37,
        "matchall",
        "mirred on the ingress hook is not modelled",
    );
    let (script, mut d) = parse_script(
        "tc qdisc add dev eth0 handle ffff: ingress\n\
         tc filter add dev eth0 parent ffff: protocol ip prio 2 matchall action police rate 1mbit burst 10k drop\n\
         tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip dport 53 0xffff police rate 1mbit burst 10k flowid :1",
    );
    let _ = build_trees(&script, &devices(&["wlan0", "eth0"]), &mut d);
    let trees = declared_trees(&script, &devices(&["wlan0", "eth0"]), &mut d);
    assert!(errors(&d).is_empty(), "{d:#?}");
    // As tc qdisc show lists it (qdisc ingress ffff: parent ffff:fff1), with its filters in the
    // order they run, each with its policer.
    let (_, qs) = trees.iter().find(|(dev, _)| dev == "eth0").expect("eth0 declares the hook");
    assert_eq!((qs[0].kind.as_str(), qs[0].handle, qs[0].parent), ("ingress", h(0xffff, 0), h(0xffff, 0xfff1)));
    assert_eq!(qs[0].filters.iter().map(|f| f.prio).collect::<Vec<_>>(), [1, 2]);
    assert!(qs[0].filters.iter().all(|f| f.police.is_some()));
    // Deleting it takes its filters; a filter then has nowhere to go.
    one_error(
        "tc qdisc add dev eth0 ingress\ntc qdisc del dev eth0 ingress\ntc filter add dev eth0 parent ffff: matchall classid 1:1",
        3,
        31,
        "ffff:",
        "no qdisc ffff:",
    );
    // clsact is the egress hook that ifb redirects attach to; it takes no options.
    one_error("tc qdisc add dev eth0 clsact foo", 1, 30, "foo", "clsact takes no options");
    one_error("tc qdisc add dev eth0 root stab overhead 24 linklayer atm pfifo", 1, 28, "stab", "size tables");
    one_error("tc qdisc add dev eth0 root 'pfifo", 1, 28, "'pfifo", "unterminated quote");
    // Deleting an ingress qdisc that is not there (a common cleanup line) is only a warning.
    let (script, mut d) = parse_script("tc qdisc del dev eth0 ingress");
    let _ = build_trees(&script, &devices(&["wlan0", "eth0"]), &mut d);
    assert!(errors(&d).is_empty(), "{d:#?}");
    check(warnings(&d)[0], 1, 18, "eth0", "nothing to delete");
}

#[test]
fn kernel_refusals() {
    let base = "tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit\n";
    one_error(&format!("{base}tc qdisc change dev eth0 root handle 1: prio"), 3, 41, "prio", "Invalid qdisc name");
    one_error(
        &format!("{base}tc class change dev eth0 classid 1:2 htb rate 1mbit"),
        3,
        34,
        "1:2",
        "class 1:2 does not exist",
    );
    one_error(
        &format!("{base}tc class add dev eth0 parent 1: classid 1:2 drr"),
        3,
        45,
        "drr",
        "class kind drr does not match qdisc 1:, which is a htb",
    );
    one_error(
        &format!("{base}tc class add dev eth0 parent 1:1 classid 2:3 htb rate 1mbit"),
        3,
        42,
        "2:3",
        "belong to different qdiscs",
    );
    one_error(&format!("{base}tc qdisc del dev eth0 root handle 2:"), 3, 35, "2:", "Invalid handle");
    one_error(&format!("{base}tc qdisc del dev eth0 root pfifo"), 3, 28, "pfifo", "not a pfifo");
    one_error("tc qdisc del dev eth0 handle 1:", 1, 10, "del", "needs \"root\" or \"parent CLASSID\"");
    one_error("tc qdisc change dev eth0 root pfifo limit 1", 1, 10, "change", "no qdisc at root to change");
}

// ------------------------------------------------------------------------------------------------
// add / replace / change / delete

fn root_of(text: &str) -> (Option<QdiscReport>, Vec<TcDiag>) {
    let (script, mut d) = parse_script(text);
    let built = build_trees(&script, &devices(&["eth0"]), &mut d);
    (built.first().map(|(_, q)| q.reports()[0].clone()), d)
}

#[test]
fn qdisc_replace_and_change() {
    // Same kind, no handle: replace changes the options in place.
    let (r, d) = root_of("tc qdisc add dev eth0 root pfifo limit 10\ntc qdisc replace dev eth0 root pfifo limit 20");
    assert!(d.is_empty(), "{d:?}");
    let r = r.unwrap();
    assert_eq!((r.handle, r.options.as_str()), (h(0x8001, 0), "limit 20p"));
    // Another kind: a new qdisc with the next automatic handle.
    let (r, _) = root_of("tc qdisc add dev eth0 root pfifo limit 10\ntc qdisc replace dev eth0 root bfifo limit 2000");
    let r = r.unwrap();
    assert_eq!((r.kind, r.handle, r.options.as_str()), ("bfifo", h(0x8002, 0), "limit 2000b"));
    // Another handle: swapped.
    let (r, _) =
        root_of("tc qdisc add dev eth0 root handle 1: pfifo\ntc qdisc replace dev eth0 root handle 2: pfifo limit 5");
    assert_eq!(r.unwrap().handle, h(2, 0));
    // change by handle alone, and by place.
    let (r, d) =
        root_of("tc qdisc add dev eth0 root handle 1: pfifo\ntc qdisc change dev eth0 handle 1: pfifo limit 7");
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(r.unwrap().options, "limit 7p");
    let (r, _) = root_of("tc qdisc add dev eth0 root handle 1: pfifo\ntc qdisc change dev eth0 root pfifo limit 8");
    assert_eq!(r.unwrap().options, "limit 8p");
    // replace onto an empty place creates; link needs something to change.
    let (r, _) = root_of("tc qdisc replace dev eth0 root handle 3: pfifo");
    assert_eq!(r.unwrap().handle, h(3, 0));
    let (r, d) = root_of("tc qdisc link dev eth0 root handle 3: pfifo");
    assert!(r.is_none());
    check(errors(&d)[0], 1, 10, "link", "no qdisc at root to link");
    // Automatic handles skip the ones in use.
    let (r, _) = root_of("tc qdisc add dev eth0 root handle 8001: pfifo\ntc qdisc replace dev eth0 root bfifo");
    assert_eq!(r.unwrap().handle, h(0x8002, 0));
}

#[test]
fn qdisc_delete() {
    // Deleting the root returns the device to its default: not returned.
    let (r, d) = root_of("tc qdisc add dev eth0 root handle 1: pfifo\ntc qdisc del dev eth0 root");
    assert!(r.is_none());
    assert!(d.is_empty());
    // Cleanup lines before anything exists are warnings.
    let (r, d) =
        root_of("tc qdisc del dev eth0 root\ntc qdisc delete dev eth0 parent 1:1\ntc qdisc add dev eth0 root pfifo");
    assert!(r.is_some());
    assert_eq!(errors(&d).len(), 0);
    let w = warnings(&d);
    check(w[0], 1, 23, "root", "Cannot delete qdisc with handle of zero");
    check(w[1], 2, 33, "1:1", "no qdisc 1: on eth0: nothing to delete");
    // Deleting a subtree takes the qdiscs below it.
    let text = "\
tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 1mbit
tc qdisc add dev eth0 parent 1:10 handle 10: drr
tc class add dev eth0 parent 10: classid 10:1 drr
tc qdisc add dev eth0 parent 10:1 handle 11: pfifo
tc qdisc del dev eth0 parent 1:10 handle 10:
";
    let t = tree_of(text, "eth0");
    assert_eq!(t.len(), 1);
}

#[test]
fn class_semantics() {
    let base = "\
tc qdisc add dev eth0 root handle 1: htb default 20
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 5mbit
tc class add dev eth0 parent 1:1 classid 1:20 htb rate 5mbit
tc qdisc add dev eth0 parent 1:10 handle 10: pfifo
tc filter add dev eth0 parent 1: prio 1 u32 match ip dport 5001 0xffff flowid 1:20
";
    // change and replace modify; replace adds a missing one; a parent given with change stays.
    let t = tree_of(
        &format!("{base}tc class change dev eth0 classid 1:10 htb rate 6mbit\ntc class replace dev eth0 parent 1:1 classid 1:30 htb rate 1mbit\ntc class replace dev eth0 parent 1: classid 1:30 htb rate 2mbit\n"),
        "eth0",
    );
    let opts: Vec<_> = t[0].classes.iter().map(|c| (c.classid, c.parent, c.options.as_str())).collect();
    assert_eq!(opts[1], (h(1, 0x10), h(1, 1), "rate 6mbit"));
    assert_eq!(opts[3], (h(1, 0x30), h(1, 1), "rate 2mbit"));
    // Deleting a leaf takes its qdisc with it.
    let t = tree_of(&format!("{base}tc class del dev eth0 classid 1:10"), "eth0");
    assert_eq!((t.len(), t[0].classes.len()), (1, 2));
    // A class with children, or one a filter points to, stays.
    one_error(&format!("{base}tc class del dev eth0 classid 1:1"), 7, 31, "1:1", "has child classes (1:10, 1:20)");
    one_error(
        &format!("{base}tc class del dev eth0 classid 1:20 htb"),
        7,
        31,
        "1:20",
        "in use by the filter on line 6",
    );
    // Deleting a class that is not there is a warning.
    let (_, d) = declare(&format!("{base}tc class del dev eth0 classid 1:99"), &["eth0"]);
    check(warnings(&d)[0], 7, 31, "1:99", "nothing to delete");
    // The first child of an HTB leaf deletes the leaf's qdisc, as the kernel does.
    let (trees, d) =
        declare(&format!("{base}tc class add dev eth0 parent 1:10 classid 1:11 htb rate 1mbit"), &["eth0"]);
    assert_eq!(trees[0].1.len(), 1);
    check(warnings(&d)[0], 7, 43, "1:11", "deletes it when 1:10 gets its first child class");
    // A classid without a major belongs to the root qdisc; a parent alone gives the major.
    let t = tree_of("tc qdisc add dev eth0 root handle 5: htb\ntc class add dev eth0 classid :1 htb rate 1mbit\ntc class add dev eth0 parent 5:1 classid :2 htb rate 1mbit", "eth0");
    assert_eq!(
        t[0].classes.iter().map(|c| (c.classid, c.parent)).collect::<Vec<_>>(),
        vec![(h(5, 1), h(5, 0)), (h(5, 2), h(5, 1))]
    );
}

#[test]
fn filter_priorities_and_handles() {
    let base = "tc qdisc add dev eth0 root handle 1: prio\n";
    // Automatic priorities count down from 49152, so later ones run first.
    let t = tree_of(
        &format!("{base}tc filter add dev eth0 parent 1: u32 match ip dport 1 0xffff flowid 1:1\ntc filter add dev eth0 parent 1: u32 match ip dport 2 0xffff flowid 1:2\ntc filter add dev eth0 parent 1: prio 5 u32 match ip dport 3 0xffff flowid 1:3\ntc filter add dev eth0 parent 1: protocol all u32 match ip dport 4 0xffff flowid 1:3\n"),
        "eth0",
    );
    let f = &t[0].filters;
    assert_eq!(
        f.iter().map(|f| (f.prio, f.protocol, f.line)).collect::<Vec<_>>(),
        vec![(5, ETH_P_ALL, 4), (49150, ETH_P_ALL, 5), (49151, ETH_P_ALL, 3), (49152, ETH_P_ALL, 2)]
    );
    // Deleting by priority, by handle, and everything.
    let adds = format!(
        "{base}tc filter add dev eth0 parent 1: prio 1 protocol ip u32 match ip dport 1 0xffff flowid 1:1\ntc filter add dev eth0 parent 1: prio 1 protocol ip u32 match ip dport 2 0xffff flowid 1:2\ntc filter add dev eth0 parent 1: prio 2 protocol ip u32 match ip dport 3 0xffff flowid 1:3\n"
    );
    let t = tree_of(&format!("{adds}tc filter del dev eth0 parent 1: prio 1 handle 800::801 u32"), "eth0");
    assert_eq!(t[0].filters.iter().map(|f| f.line).collect::<Vec<_>>(), vec![2, 4]);
    let t = tree_of(&format!("{adds}tc filter del dev eth0 parent 1: prio 2 handle 801::800 u32"), "eth0");
    assert_eq!(t[0].filters.len(), 2);
    let t = tree_of(&format!("{adds}tc filter del dev eth0 parent 1: prio 1"), "eth0");
    assert_eq!(t[0].filters.len(), 1);
    let t = tree_of(&format!("{adds}tc filter del dev eth0 parent 1:"), "eth0");
    assert!(t[0].filters.is_empty());
    // change by handle swaps what the filter matches.
    let t = tree_of(
        &format!(
            "{adds}tc filter change dev eth0 parent 1: prio 2 handle 801::800 u32 match ip dport 9 0xffff flowid 1:1"
        ),
        "eth0",
    );
    assert_eq!((t[0].filters[2].classid, t[0].filters[2].line), (h(1, 1), 5));
    // One priority, one protocol and one kind; fw marks are unique.
    one_error(
        &format!("{adds}tc filter add dev eth0 parent 1: prio 1 protocol all u32 match u32 0 0 flowid 1:1"),
        5,
        50,
        "all",
        "one priority takes one protocol",
    );
    one_error(
        &format!("{adds}tc filter add dev eth0 parent 1: prio 2 protocol ip handle 3 fw flowid 1:1"),
        5,
        62,
        "fw",
        "already holds u32 filters",
    );
    one_error(
        &format!(
            "{adds}tc filter add dev eth0 parent 1: prio 1 protocol ip handle 800::800 u32 match u32 0 0 flowid 1:1"
        ),
        5,
        60,
        "800::800",
        "already has a u32 filter 800::800",
    );
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1: prio 3 handle 6 fw flowid 1:1\ntc filter add dev eth0 parent 1: prio 3 handle 6 fw flowid 1:2"),
        3,
        48,
        "6",
        "fw filter for mark 0x6",
    );
    // replace swaps a filter with the same handle.
    let t = tree_of(&format!("{base}tc filter add dev eth0 parent 1: prio 3 handle 6 fw flowid 1:1\ntc filter replace dev eth0 parent 1: prio 3 handle 6 fw flowid 1:2"), "eth0");
    assert_eq!((t[0].filters.len(), t[0].filters[0].classid), (1, h(1, 2)));
    // Filters on classes of the prio qdisc are refused; a flowid naming no HTB class warns.
    one_error(
        &format!("{base}tc filter add dev eth0 parent 1:1 u32 match u32 0 0 flowid 1:1"),
        2,
        31,
        "1:1",
        "not to its classes",
    );
    let (_, d) = declare(
        "tc qdisc add dev eth0 root handle 1: htb\ntc filter add dev eth0 parent 1: u32 match u32 0 0 flowid 1:5",
        &["eth0"],
    );
    check(warnings(&d)[0], 2, 34, "u32", "1:5, which is not a class of htb 1:");
}

#[test]
fn nexthdr_matches_read_the_ip_header_as_the_kernel_does() {
    let t = tree_of(
        "tc qdisc add dev eth0 root handle 1: prio\ntc filter add dev eth0 parent 1: u32 match udp dst 5001 0xffff flowid 1:1",
        "eth0",
    );
    let (_, d) = declare("tc qdisc add dev eth0 root handle 1: prio\ntc filter add dev eth0 parent 1: u32 match udp dst 5001 0xffff flowid 1:1", &["eth0"]);
    check(warnings(&d)[0], 2, 38, "match", "reads them from the start of the IP header");
    let f: &Vec<Filter> = &t[0].filters;
    // Bytes 2-3 of the IP header are the total length: a 5001-byte datagram would match.
    assert_eq!(classify(f, h(1, 0), &flow([10, 0, 0, 2], 5001), 1500), None);
    assert_eq!(classify(f, h(1, 0), &flow([10, 0, 0, 2], 80), 5001), Some(h(1, 1)));
}

#[test]
fn other_protocols_warn_and_deep_trees_do_not_overflow() {
    let (_, d) = declare(
        "tc qdisc add dev eth0 root handle 1: prio\ntc filter add dev eth0 parent 1: protocol ipv6 u32 match u32 0 0 flowid 1:1",
        &["eth0"],
    );
    assert!(errors(&d).is_empty());
    check(warnings(&d)[0], 2, 43, "ipv6", "never matches");
    // 300 nested qdiscs: declared in order, refused by the build at depth 64, no stack overflow.
    let mut text = String::from("tc qdisc add dev eth0 root handle 1: prio\n");
    for i in 1..300u32 {
        text.push_str(&format!("tc qdisc add dev eth0 parent {i:x}:1 handle {:x}: prio\n", i + 1));
    }
    let t = tree_of(&text, "eth0");
    assert_eq!(t.len(), 300);
    assert_eq!(t[299].parent, h(299, 1));
    let (script, mut d) = parse_script(&text);
    assert!(build_trees(&script, &devices(&["eth0"]), &mut d).is_empty());
    assert!(errors(&d).iter().any(|e| e.message.contains("deeper than 64")));
}

// ------------------------------------------------------------------------------------------------
// tc show

fn report(kind: &'static str, handle: Handle, parent: Handle, options: &str, stats: QdiscStats) -> QdiscReport {
    QdiscReport {
        kind,
        handle,
        parent,
        options: options.into(),
        stats,
        xstats: vec![],
        xstats_text: String::new(),
        classes: vec![],
    }
}

#[test]
fn qdisc_show_pfifo_and_bfifo() {
    let (script, mut d) = parse_script("tc qdisc add dev eth0 root handle 1: pfifo\ntc qdisc add dev wlan0 root bfifo");
    let built = build_trees(&script, &devices(&["eth0", "wlan0"]), &mut d);
    assert!(d.is_empty());
    let r0 = built[0].1.reports();
    assert_eq!(qdisc_show("eth0", &r0, false), "qdisc pfifo 1: root refcnt 2 limit 1000p\n");
    assert_eq!(
        qdisc_show("eth0", &r0, true),
        "qdisc pfifo 1: root refcnt 2 limit 1000p\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n"
    );
    let r1 = built[1].1.reports();
    assert_eq!(qdisc_show("wlan0", &r1, false), "qdisc bfifo 8001: root refcnt 2 limit 1514000b\n");
    let stats = QdiscStats {
        offered_packets: 113,
        sent_bytes: 151_400,
        sent_packets: 100,
        drops: 3,
        overlimits: 0,
        requeues: 0,
        backlog_bytes: 15_360,
        qlen: 10,
    };
    let child = report("pfifo", h(0x10, 0), h(1, 0x10), "limit 100p", stats);
    assert_eq!(
        qdisc_show("eth0", &[child], true),
        "qdisc pfifo 10: parent 1:10 limit 100p\n Sent 151400 bytes 100 pkt (dropped 3, overlimits 0 requeues 0) \n backlog 15Kb 10p requeues 0\n"
    );
    let mut x = report("fq_codel", h(0, 0), h(1, 2), "limit 10240p flows 1024 ", QdiscStats::default());
    x.xstats_text =
        "  maxpacket 1514 drop_overlimit 0 new_flow_count 1 ecn_mark 0\n  new_flows_len 0 old_flows_len 0".into();
    assert_eq!(
        qdisc_show("eth0", &[x], true),
        "qdisc fq_codel 0: parent 1:2 limit 10240p flows 1024 \n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n  maxpacket 1514 drop_overlimit 0 new_flow_count 1 ecn_mark 0\n  new_flows_len 0 old_flows_len 0\n"
    );
}

#[test]
fn class_show_and_tree_text() {
    let class = |id: Handle, parent: Handle, leaf: Option<Handle>, opts: &str| ClassReport {
        kind: "htb",
        classid: id,
        parent,
        leaf,
        options: opts.into(),
        stats: QdiscStats::default(),
        xstats: vec![],
        xstats_text: " lended: 0 borrowed: 0 giants: 0\n tokens: 50000 ctokens: 25000\n".into(),
    };
    let mut root = report(
        "htb",
        h(1, 0),
        Handle::ROOT,
        "r2q 10 default 0x20 direct_packets_stat 0 direct_qlen 1000",
        QdiscStats::default(),
    );
    root.classes = vec![
        class(h(1, 1), Handle::ROOT, None, "rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b"),
        class(h(1, 0x10), h(1, 1), Some(h(0x10, 0)), "prio 0 rate 4Mbit ceil 8Mbit burst 1600b cburst 1600b"),
        class(h(1, 0x20), h(1, 1), None, "prio 0 rate 900Kbit ceil 8Mbit burst 1600b cburst 1600b"),
    ];
    let leaf = report("pfifo", h(0x10, 0), h(1, 0x10), "limit 1000p", QdiscStats::default());
    let reports = vec![root, leaf];
    assert_eq!(
        qdisc_show("wlan0", &reports, false),
        "qdisc htb 1: root refcnt 2 r2q 10 default 0x20 direct_packets_stat 0 direct_qlen 1000\nqdisc pfifo 10: parent 1:10 limit 1000p\n"
    );
    assert_eq!(
        class_show("wlan0", &reports, false),
        "class htb 1:1 root rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b\n\
         class htb 1:10 parent 1:1 leaf 10: prio 0 rate 4Mbit ceil 8Mbit burst 1600b cburst 1600b\n\
         class htb 1:20 parent 1:1 prio 0 rate 900Kbit ceil 8Mbit burst 1600b cburst 1600b\n"
    );
    let s = class_show("wlan0", &reports[..1], true);
    assert!(s.starts_with(
        "class htb 1:1 root rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n lended: 0 borrowed: 0 giants: 0\n tokens: 50000 ctokens: 25000\n\nclass htb 1:10"
    ), "{s}");
    assert_eq!(
        tree_text("wlan0", &reports),
        "dev wlan0\n\
         \x20 qdisc htb 1: root refcnt 2 r2q 10 default 0x20 direct_packets_stat 0 direct_qlen 1000\n\
         \x20   class htb 1:1 root rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b\n\
         \x20     class htb 1:10 parent 1:1 leaf 10: prio 0 rate 4Mbit ceil 8Mbit burst 1600b cburst 1600b\n\
         \x20       qdisc pfifo 10: parent 1:10 limit 1000p\n\
         \x20     class htb 1:20 parent 1:1 prio 0 rate 900Kbit ceil 8Mbit burst 1600b cburst 1600b\n"
    );
}

// ------------------------------------------------------------------------------------------------
// Property: nothing panics, every diagnostic has a position

const VOCAB: &[&str] = &[
    "tc",
    "qdisc",
    "class",
    "filter",
    "add",
    "del",
    "replace",
    "change",
    "link",
    "show",
    "dev",
    "eth0",
    "wlan0",
    "root",
    "parent",
    "handle",
    "classid",
    "1:",
    "1:1",
    "1:10",
    "10:",
    "ffff:",
    "8001:",
    "none",
    "pfifo",
    "bfifo",
    "pfifo_head_drop",
    "htb",
    "sfq",
    "prio",
    "tbf",
    "drr",
    "limit",
    "100",
    "rate",
    "1mbit",
    "u32",
    "fw",
    "matchall",
    "match",
    "ip",
    "src",
    "dst",
    "dport",
    "10.0.0.1/24",
    "0xffff",
    "flowid",
    "prio",
    "pref",
    "protocol",
    "all",
    "at",
    "nexthdr+2",
    "u8",
    "u16",
    "6",
    "0xff",
    "\\",
    "#",
    "'",
    "\"",
    "-s",
    "-b",
    "ingress",
    "estimator",
    "stab",
    "action",
    "drop",
    "police",
    "\n",
    "\t",
    ":",
    "::",
    "800::800",
    "-",
    "0x",
    "\u{e9}",
    "\u{1F600}",
];

const VALID: &[&str] = &[
    YIP_KWOK_HTB_SFQ,
    YIP_KWOK_PRIO_TBF,
    VALENZUELA_HTB,
    GARROPPO_DRR,
    LARTC_PRIO_FILTERS,
    "tc qdisc add dev eth0 root handle 1: pfifo limit 10\ntc qdisc replace dev wlan0 root bfifo limit 10k\ntc qdisc del dev eth0 root\n",
];

fn check_all(text: &str) {
    let (script, mut d) = parse_script(text);
    let built = build_trees(&script, &devices(&["eth0", "wlan0", "imq0"]), &mut d);
    let (script2, mut d2) = parse_script(text);
    let _ = declared_trees(&script2, &devices(&["eth0", "wlan0"]), &mut d2);
    let lines = text.split('\n').count() as u32;
    for e in d.iter().chain(&d2) {
        assert!(e.line >= 1 && e.col >= 1, "diagnostic without a position: {e:?}");
        assert!(e.line <= lines, "diagnostic past the end: {e:?}");
        assert!(!e.message.is_empty());
    }
    for (_, q) in &built {
        let r = q.reports();
        let _ = qdisc_show("eth0", &r, true);
        let _ = class_show("eth0", &r, true);
        let _ = tree_text("eth0", &r);
        assert!(q.stats().identity_holds());
    }
}

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, usize),
    Insert(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Replace(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Insert(a, b)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

/// Split keeping separators, so that mutations keep line structure most of the time.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c == ' ' || c == '\n' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            out.push(c.to_string());
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "[ -~\\t\\n\u{e9}]{0,200}") {
        check_all(&text);
    }

    #[test]
    fn random_words_never_panic(words in prop::collection::vec(0..VOCAB.len(), 0..60), seps in prop::collection::vec(0u8..8, 60)) {
        let mut text = String::new();
        for (i, w) in words.iter().enumerate() {
            text.push_str(VOCAB[*w]);
            text.push(if seps[i] == 0 { '\n' } else { ' ' });
        }
        check_all(&text);
    }

    #[test]
    fn mutated_scripts_never_panic(which in 0..VALID.len(), edits in prop::collection::vec(edit(), 1..8)) {
        let mut p = pieces(VALID[which]);
        for e in edits {
            let n = p.len().max(1);
            match e {
                Edit::Delete(i) => { if !p.is_empty() { p.remove(i % n); } }
                Edit::Duplicate(i) => { if !p.is_empty() { let x = p[i % n].clone(); p.insert(i % n, x); } }
                Edit::Swap(a, b) => { if !p.is_empty() { p.swap(a % n, b % n); } }
                Edit::Replace(i, w) => { if !p.is_empty() { p[i % n] = VOCAB[w % VOCAB.len()].to_string(); } }
                Edit::Insert(i, w) => { p.insert(i % (p.len() + 1), VOCAB[w % VOCAB.len()].to_string()); }
                Edit::Truncate(i) => { p.truncate(i % n); }
            }
        }
        check_all(&p.concat());
    }
}

/// Issue 15: the four disagreements with the kernel (Linux 6.18 here), resolved its way.
#[test]
fn an_htb_class_whose_parent_does_not_exist_is_a_root_class_as_in_the_kernel() {
    let text = "tc qdisc add dev eth0 root handle 1: htb default 10\ntc class add dev eth0 parent 1:5 classid 1:10 htb rate 1mbit\n";
    let (trees, d) = declare(text, &["eth0"]);
    assert!(errors(&d).is_empty(), "{d:#?}");
    let w = warnings(&d);
    assert_eq!(w.len(), 1, "{d:#?}");
    check(
        w[0],
        2,
        30,
        "1:5",
        "parent class 1:5 does not exist: the kernel's HTB makes 1:10 a top-level class (parent 1:)",
    );
    assert_eq!(trees[0].1[0].classes[0].parent, h(1, 0));
    builds_with(text, "eth0", &["htb"]);
}

#[test]
fn htb_has_no_change_operation_so_change_and_in_place_replace_are_refused() {
    for second in [
        "tc qdisc change dev eth0 root handle 1: htb default 0x20",
        "tc qdisc change dev eth0 root htb default 0x20",
        "tc qdisc replace dev eth0 root htb default 0x20",
        "tc qdisc replace dev eth0 root handle 1: htb default 0x20",
    ] {
        let text = format!("tc qdisc add dev eth0 root handle 1: htb default 10\n{second}\n");
        let (trees, d) = declare(&text, &["eth0"]);
        let e = errors(&d);
        assert_eq!(e.len(), 1, "{second}: {d:#?}");
        assert!(e[0].message.contains("htb, which has no change operation in the kernel"), "{}", e[0]);
        // the kernel keeps the old options
        assert_eq!(trees[0].1[0].options, "default 10", "{second}");
    }
    // Another handle is a new qdisc: allowed.
    let (trees, d) = declare(
        "tc qdisc add dev eth0 root handle 1: htb\ntc qdisc replace dev eth0 root handle 2: htb default 3\n",
        &["eth0"],
    );
    assert!(errors(&d).is_empty(), "{d:#?}");
    assert_eq!(trees[0].1[0].handle, h(2, 0));
    // sfq has none either (.change = NULL in 6.1 and 6.18)
    let (trees, d) = declare(
        "tc qdisc add dev eth0 root handle 1: sfq perturb 10\ntc qdisc change dev eth0 root handle 1: sfq perturb 20\n",
        &["eth0"],
    );
    assert_eq!(errors(&d).len(), 1, "{d:#?}");
    assert!(errors(&d)[0].message.contains("sfq, which has no change operation"));
    assert_eq!(trees[0].1[0].options, "perturb 10");
    // tbf, which has a change operation, still changes.
    let (trees, d) = declare(
        "tc qdisc add dev eth0 root handle 5: tbf rate 1mbit burst 5k latency 50ms\ntc qdisc change dev eth0 root handle 5: tbf rate 2mbit burst 5k latency 50ms\n",
        &["eth0"],
    );
    assert!(errors(&d).is_empty(), "{d:#?}");
    assert!(trees[0].1[0].options.starts_with("rate 2mbit"));
}

#[test]
fn cbq_is_accepted_with_a_warning_that_linux_6_3_removed_it() {
    let (script, mut d) = parse_script(GARROPPO_CBQ);
    let _ = build_trees(&script, &devices(&["wlan0"]), &mut d);
    let w: Vec<&TcDiag> =
        warnings(&d).into_iter().filter(|w| w.message.contains("removed from Linux in 6.3")).collect();
    assert_eq!(w.len(), 1, "{d:#?}");
    assert_eq!(w[0].token, "cbq");
    builds_with(GARROPPO_CBQ, "wlan0", &["cbq"]);
}

#[test]
fn a_line_whose_options_are_refused_changes_nothing() {
    // tc refuses a tbf without burst before talking to the kernel: the next line can add the root.
    let text = "tc qdisc add dev eth0 root tbf rate 1mbit latency 50ms\ntc qdisc add dev eth0 root tbf rate 1mbit burst 5k latency 50ms\n";
    let (script, mut d) = parse_script(text);
    let built = build_trees(&script, &devices(&["eth0"]), &mut d);
    let e = errors(&d);
    assert!(!e.is_empty() && e.iter().all(|e| e.line == 1), "{d:#?}");
    // The refused line left nothing behind: the second line's tbf is the device's tree.
    assert_eq!(built.len(), 1);
    assert_eq!(built[0].1.reports()[0].kind, "tbf");
    let (trees, _) = declare(text, &["eth0"]);
    assert!(trees[0].1[0].options.contains("burst 5k"));
    // the same for a class without rate, and for an unknown kind
    for (text, line) in [
        ("tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:1 htb ceil 1mbit\ntc class add dev eth0 parent 1: classid 1:1 htb rate 1mbit\n", 2),
        ("tc qdisc add dev eth0 root handle 1: nosuchqdisc\ntc qdisc add dev eth0 root handle 1: pfifo\n", 1),
    ] {
        let (trees, d) = declare(text, &["eth0"]);
        let e = errors(&d);
        assert!(!e.is_empty() && e.iter().all(|e| e.line == line), "{text}: {d:#?}");
        assert_eq!(trees.len(), 1, "{text}");
    }
    // Warnings of the trial are not repeated.
    let (script, mut d) = parse_script("tc qdisc add dev eth0 root sfq perturb 10 quantum 100\n");
    let _ = build_trees(&script, &devices(&["eth0"]), &mut d);
    let ws = warnings(&d);
    let unique: std::collections::HashSet<String> = ws.iter().map(|w| w.to_string()).collect();
    assert_eq!(unique.len(), ws.len(), "{ws:#?}");
}
