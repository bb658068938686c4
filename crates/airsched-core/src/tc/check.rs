//! `airsched tc check`: a tc script on its own, outside any scenario. It is parsed, every
//! device it names is accepted (with Linux's default txqueuelen), the trees are built as a run
//! would build them, and the result is text: the diagnostics as `PATH:LINE:COL: at "TOKEN":
//! message` lines, and per device the indented tree and the `tc qdisc show` / `tc class show`
//! lines. The command line and the Python binding only print what this returns.

#[cfg(test)]
use super::build::build_trees;
use super::build::{build_all, virtual_devices, DevHook, DeviceSpec};
use super::lex::{parse_classid, Handle, Severity, TcDiag};
use super::script::{parse_script, Command, Script};
use super::show::{class_show, qdisc_show, tree_text};
use crate::qdisc::{QdiscImpl, DEFAULT_TXQUEUELEN};

/// One device of a checked script: its tree in the three texts `tc check` offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedDevice {
    pub dev: String,
    /// [`tree_text`]: the qdiscs and classes, indented under their parents.
    pub tree: String,
    /// `tc qdisc show dev DEV`, without statistics.
    pub qdisc_text: String,
    /// `tc class show dev DEV`, without statistics.
    pub class_text: String,
    /// The quantum of each leaf class of a root htb (or whtb), as `tc -d class show` prints
    /// it: (class id, bytes).
    pub quanta: Vec<(String, i64)>,
}

/// A script that builds: its configured devices in the order the script first names them, and
/// its warnings as located lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub devices: Vec<CheckedDevice>,
    pub warnings: Vec<String>,
    /// One line per device whose packets go through a virtual device first ([`redirect_lines`]).
    pub redirects: Vec<String>,
}

/// The egress hooks as text: `wlan0 -> ifb0 -> wlan0 (clsact egress: matchall prio 49152)`,
/// or `wlan0 -> imq0 -> wlan0 (iptables POSTROUTING -o wlan0 -j IMQ)`.
pub fn redirect_lines(hooks: &[DevHook]) -> Vec<String> {
    let mut out = Vec::new();
    for h in hooks {
        if let Some(imq) = &h.imq {
            out.push(format!(
                "{} -> {imq} -> {} (every packet: iptables -t mangle -A POSTROUTING -o {} -j IMQ)",
                h.dev, h.dev, h.dev
            ));
            continue;
        }
        for r in &h.rules {
            let Some(to) = &r.to else { continue };
            let at = if r.filter.parent == super::lex::Handle::CLSACT_EGRESS {
                "clsact egress".to_string()
            } else {
                format!("root qdisc {}", r.filter.parent)
            };
            out.push(format!(
                "{} -> {to} -> {} ({at}, {} filter prio {}, line {})",
                h.dev,
                h.dev,
                super::filter::kind_name(&r.filter.kind),
                r.filter.prio,
                r.filter.line
            ));
        }
    }
    out
}

/// A diagnostic as `PATH:LINE:COL: at "TOKEN": message` (without the `at` part when it has no
/// token: the end of a command, or a filter line as a whole).
pub fn located(path: &str, d: &TcDiag) -> String {
    if d.token.is_empty() {
        format!("{path}:{}:{}: {}", d.line, d.col, d.message)
    } else {
        format!("{path}:{}:{}: at \"{}\": {}", d.line, d.col, d.token, d.message)
    }
}

/// Every device the script's commands name, in order of first mention.
pub fn named_devices(script: &Script<'_>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &script.commands {
        let dev = match c {
            Command::Qdisc(q) => q.dev.text,
            Command::Class(k) => k.dev.text,
            Command::Filter(f) => f.dev.text,
            Command::Virtual(v) => match v.ops.first() {
                Some(super::virt::VirtualOp::Imq { out, .. }) => out.text,
                Some(super::virt::VirtualOp::ClsactAdd { dev } | super::virt::VirtualOp::ClsactDel { dev }) => dev.text,
                _ => "",
            },
        };
        if !dev.is_empty() && !names.iter().any(|n| n == dev) {
            names.push(dev.to_string());
        }
    }
    names
}

/// Build a parsed script's trees unless `diags` already holds an error (a script whose parse
/// failed is not built: its commands with errors are missing, and building the rest would add
/// errors that are only consequences).
#[cfg(test)]
pub fn build_unless_errors(
    script: &Script<'_>,
    devices: &[DeviceSpec],
    diags: &mut Vec<TcDiag>,
) -> Vec<(String, QdiscImpl)> {
    if diags.iter().any(|d| d.severity == Severity::Error) {
        Vec::new()
    } else {
        build_trees(script, devices, diags)
    }
}

/// Build the commands that parsed even when others did not, so that every error of the script
/// is reported at once, sorted by line and column (parse and build errors alike), except
/// knock-on errors: an error on a line whose `parent` is a handle or class id that an earlier
/// failed line would have created (it fails only because of that one).
pub(crate) fn build_reporting_all(
    text: &str,
    script: &Script<'_>,
    devices: &[DeviceSpec],
    real: Option<usize>,
    diags: &mut Vec<TcDiag>,
) -> (Vec<(String, QdiscImpl)>, Vec<DevHook>) {
    let lines: Vec<&str> = text.lines().collect();
    let words_of = |line: u32| {
        lines.get((line as usize).wrapping_sub(1)).map_or(Vec::new(), |l| l.split_whitespace().collect::<Vec<_>>())
    };
    let after = |words: &[&str], key: &str| {
        let word = words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1))?;
        parse_classid(word).ok().map(|(id, _)| id)
    };
    let mut built_diags = Vec::new();
    let built = build_all(script, devices, real, &mut built_diags);
    diags.append(&mut built_diags);
    diags.sort_by_key(|d| (d.line, d.col));
    // In line order: a failed line's handle or class id is never made; a later error on a line
    // whose parent is one of them is a consequence, not news (and that line counts as failed).
    let mut orphaned: std::collections::HashSet<Handle> = std::collections::HashSet::new();
    let mut failed_line = 0;
    let mut knock_on_line = 0;
    diags.retain(|d| {
        if d.severity != Severity::Error {
            return true;
        }
        let words = words_of(d.line);
        let knock_on = d.line == knock_on_line || after(&words, "parent").is_some_and(|p| orphaned.contains(&p));
        if d.line != failed_line {
            failed_line = d.line;
            for key in ["handle", "classid"] {
                if let Some(id) = after(&words, key) {
                    orphaned.insert(id);
                }
            }
        }
        if knock_on {
            knock_on_line = d.line;
        }
        !knock_on
    });
    built
}

/// Check a script read from `path` (used only to locate the diagnostics). Every device it names
/// exists, with txqueuelen 1000, seed 1 and a stream keyed by its name. `Err` holds every
/// error as a located line; otherwise the report holds the trees and the warnings.
#[cfg(test)]
pub fn check_script(text: &str, path: &str) -> Result<CheckReport, Vec<String>> {
    check_script_on(text, path, None)
}

/// [`check_script`] for the devices of one node: `devices` (name, txqueuelen) are the only
/// ones the script may name (another is an error: "unknown device ..., this node has ...", as
/// in a scenario); `None` accepts every device the script names, with txqueuelen 1000.
pub fn check_script_on(text: &str, path: &str, devices: Option<&[(String, u32)]>) -> Result<CheckReport, Vec<String>> {
    let (script, mut diags) = parse_script(text);
    let spec = |name: String, txqueuelen: u32| DeviceSpec {
        stream: crate::engine::rng::name_key(&name),
        name,
        txqueuelen,
        seed: 1,
    };
    let virt = virtual_devices(&script);
    let mut specs: Vec<DeviceSpec> = match devices {
        Some(devs) => devs.iter().map(|(n, q)| spec(n.clone(), *q)).collect(),
        None => named_devices(&script)
            .into_iter()
            .filter(|n| !virt.iter().any(|v| v.name == *n))
            .map(|n| spec(n, DEFAULT_TXQUEUELEN))
            .collect(),
    };
    let real = specs.len();
    for v in &virt {
        if !specs.iter().any(|s| s.name == v.name) {
            specs.push(spec(v.name.clone(), v.txqueuelen));
        }
    }
    let (built, hooks) = build_reporting_all(text, &script, &specs, Some(real), &mut diags);
    let of = |s: Severity| diags.iter().filter(move |d| d.severity == s).map(|d| located(path, d));
    let errors: Vec<String> = of(Severity::Error).collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    let devices = built
        .iter()
        .map(|(dev, root)| {
            let reports = root.reports();
            CheckedDevice {
                dev: dev.clone(),
                tree: tree_text(dev, &reports),
                qdisc_text: qdisc_show(dev, &reports, false),
                class_text: class_show(dev, &reports, false),
                quanta: match root {
                    QdiscImpl::Htb(h) => h.leaf_quanta().into_iter().map(|(c, q)| (c.to_string(), q)).collect(),
                    _ => Vec::new(),
                },
            }
        })
        .collect();
    Ok(CheckReport { devices, warnings: of(Severity::Warning).collect(), redirects: redirect_lines(&hooks) })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTB: &str = "\
# two devices, named in this order
tc qdisc add dev wlan0 root handle 1: htb default 20
tc class add dev wlan0 parent 1: classid 1:1 htb rate 2mbit
tc class add dev wlan0 parent 1:1 classid 1:20 htb rate 1mbit ceil 2mbit
tc qdisc add dev wlan0 parent 1:20 handle 20: sfq perturb 10
tc qdisc add dev eth0 root pfifo limit 50
";

    #[test]
    fn tc_check_reports_every_error_in_line_order_without_knock_on_errors() {
        let text = "\
tc qdisc add dev wlan0 root handle 1: htb default 10
tc class add dev wlan0 parent 1: classid 1:10 htb rate 1mbit burst
tc qdisc add dev wlan0 parent 1:10 handle 10: sfq perturb 10
tc foo
tc qdisc add dev wlan0 parent 1:30 pfifo
tc qdisc add dev eth0 root pfifo limit x
";
        let errs = check_script(text, "s.tc").unwrap_err();
        let lines: Vec<&str> = errs.iter().map(|e| e.split(':').nth(1).unwrap()).collect();
        // Line 3 fails only because line 2 did (its parent 1:10 was never made): not reported.
        // Line 5's parent 1:30 does not exist at all: its own error, reported after line 4's.
        assert_eq!(lines, ["2", "4", "5", "6"], "{errs:#?}");
        assert!(errs[0].contains("\"burst\" needs a value"), "{}", errs[0]);
        assert!(errs[1].contains("unknown tc object \"foo\""), "{}", errs[1]);
        assert!(errs[3].contains("\"x\" is not a size"), "{}", errs[3]);
    }

    #[test]
    fn a_valid_script_gives_each_devices_tree_and_show_texts() {
        let r = check_script(HTB, "shape.tc").unwrap();
        assert_eq!(r.devices.iter().map(|d| d.dev.as_str()).collect::<Vec<_>>(), vec!["wlan0", "eth0"]);
        let w = &r.devices[0];
        assert_eq!(
            w.tree,
            "dev wlan0\n  qdisc htb 1: root refcnt 2 r2q 10 default 0x20 direct_packets_stat 0 direct_qlen 1000\n    class htb 1:1 root rate 2Mbit ceil 2Mbit burst 1600b cburst 1600b\n      class htb 1:20 parent 1:1 leaf 20: prio 0 rate 1Mbit ceil 2Mbit burst 1600b cburst 1600b\n        qdisc sfq 20: parent 1:20 limit 127p quantum 1514b depth 127 divisor 1024 perturb 10sec\n"
        );
        assert!(w.qdisc_text.starts_with("qdisc htb 1: root refcnt 2 "), "{}", w.qdisc_text);
        assert_eq!(w.qdisc_text.lines().count(), 2);
        assert_eq!(w.class_text.lines().count(), 2);
        assert!(!w.qdisc_text.contains("Sent"), "no statistics: {}", w.qdisc_text);
        // eth0's root got the kernel's first automatic handle.
        assert_eq!(r.devices[1].qdisc_text, "qdisc pfifo 8001: root refcnt 2 limit 50p\n");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn warnings_are_located_lines_and_do_not_fail_the_check() {
        let r = check_script("tc -s qdisc add dev eth0 root sfq perturb 10 2>/dev/null\n", "w.tc").unwrap();
        assert_eq!(
            r.warnings,
            vec![
                "w.tc:1:4: at \"-s\": the global option -stats only changes how tc prints; ignored",
                "w.tc:1:46: at \"2>/dev/null\": shell redirections are not part of the tc command; ignored",
            ]
        );
        assert_eq!(r.devices.len(), 1);
    }

    #[test]
    fn errors_of_parsing_and_of_building_are_every_one_located() {
        // Parse errors: both reported, nothing built.
        let e = check_script("tc qdisc add dev eth0 root handle 1x: htb\ntc qdisc add dev eth0 root\n", "bad.tc")
            .unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("bad.tc:1:35: at \"1x:\": invalid qdisc handle \"1x:\""), "{}", e[0]);
        assert_eq!(e[1], "bad.tc:2:27: qdisc add needs a kind after the common arguments, like pfifo, htb or sfq");
        // Build errors (the parse was clean): missing options, at the end of the command, and an
        // unknown kind on another device.
        let e = check_script("tc qdisc add dev eth0 root tbf rate 1mbit\ntc qdisc add dev lo root choke\n", "b.tc")
            .unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(e[0], "b.tc:1:42: tbf: the \"burst\" parameter is mandatory (also spelt buffer or maxburst)");
        assert_eq!(e[1], "b.tc:1:42: tbf: either \"limit\" or \"latency\" is required");
        assert!(
            e[2].starts_with("b.tc:2:26: at \"choke\": unknown qdisc \"choke\"; airsched knows: pfifo,"),
            "{}",
            e[2]
        );
    }

    #[test]
    fn a_nodes_devices_are_the_only_ones_a_script_may_name() {
        let devs = [("wlan0".to_string(), 50u32), ("eth0".to_string(), 1000u32)];
        let e = check_script_on("tc qdisc add dev wlan1 root pfifo\n", "n.tc", Some(&devs)).unwrap_err();
        assert_eq!(e, vec!["n.tc:1:18: at \"wlan1\": unknown device \"wlan1\"; this node has wlan0, eth0"]);
        // The node's txqueuelen is the default fifo limit; an unconfigured device is not listed.
        let r = check_script_on("tc qdisc add dev wlan0 root pfifo\n", "n.tc", Some(&devs)).unwrap();
        assert_eq!(r.devices.len(), 1);
        assert_eq!(r.devices[0].qdisc_text, "qdisc pfifo 8001: root refcnt 2 limit 50p\n");
        // Without a node, any device is accepted.
        assert!(check_script_on("tc qdisc add dev wlan1 root pfifo\n", "n.tc", None).is_ok());
    }

    #[test]
    fn empty_and_comment_only_scripts_configure_nothing() {
        assert_eq!(check_script("", "e.tc"), Ok(CheckReport::default()));
        assert_eq!(check_script("# nothing\n\n", "e.tc"), Ok(CheckReport::default()));
        // A device whose root is deleted again is not listed.
        let r = check_script("tc qdisc add dev eth0 root pfifo\ntc qdisc del dev eth0 root\n", "d.tc").unwrap();
        assert!(r.devices.is_empty());
    }

    #[test]
    fn devices_are_listed_once_in_order_of_first_mention() {
        let (s, _) =
            parse_script("tc qdisc add dev b root pfifo\ntc qdisc add dev a root pfifo\nqdisc del dev b root\n");
        assert_eq!(named_devices(&s), vec!["b", "a"]);
    }

    const IFB: &str = "\
ip link add ifb0 type ifb
ip link set dev ifb0 up
tc qdisc add dev wlan0 clsact
tc filter add dev wlan0 egress matchall action mirred egress redirect dev ifb0
tc qdisc add dev eth0 root handle 1: prio
tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.1/32 action mirred egress redirect dev ifb0
tc qdisc add dev ifb0 root handle 1: htb default 20
tc class add dev ifb0 parent 1: classid 1:20 htb rate 5mbit
";

    #[test]
    fn ifb_scripts_build_the_shared_tree_and_list_the_redirects() {
        let r = check_script(IFB, "ifb.tc").unwrap();
        let devs: Vec<&str> = r.devices.iter().map(|d| d.dev.as_str()).collect();
        assert_eq!(devs, ["eth0", "ifb0"]);
        // ifb's tx_queue_len is 32 (TX_Q_LIMIT): the default leaf and direct queue.
        assert!(r.devices[1].tree.contains("direct_qlen 32"), "{}", r.devices[1].tree);
        assert_eq!(
            r.redirects,
            [
                "wlan0 -> ifb0 -> wlan0 (clsact egress, matchall filter prio 49152, line 4)",
                "eth0 -> ifb0 -> eth0 (root qdisc 1:, u32 filter prio 1, line 6)"
            ]
        );
        let imq = "iptables -t mangle -A POSTROUTING -o wlan0 -j IMQ --todev 1\ntc qdisc add dev imq1 root sfq\n";
        let r = check_script(imq, "imq.tc").unwrap();
        assert_eq!(
            r.redirects,
            ["wlan0 -> imq1 -> wlan0 (every packet: iptables -t mangle -A POSTROUTING -o wlan0 -j IMQ)"]
        );
        // On a node's devices the virtual ones are allowed too.
        let devs = [("wlan0".to_string(), 50u32), ("eth0".to_string(), 1000u32)];
        assert!(check_script_on(IFB, "n.tc", Some(&devs)).is_ok());
    }

    #[test]
    fn bad_redirects_are_one_line_errors_at_their_token() {
        let cases: &[(&str, &str)] = &[
            (
                "ip link add ifb0 type ifb\ntc qdisc add dev wlan0 clsact\ntc filter add dev wlan0 egress matchall action mirred egress redirect dev ifb9\n",
                "r.tc:3:75: at \"ifb9\": redirect to unknown device \"ifb9\"; the ifb devices are ifb0",
            ),
            (
                "tc qdisc add dev wlan0 clsact\ntc filter add dev wlan0 egress matchall action mirred egress redirect dev ifb0\n",
                "r.tc:2:75: at \"ifb0\": redirect to unknown device \"ifb0\"; no ifb device exists (add one: ip link add ifb0 type ifb)",
            ),
            (
                "ip link add ifb0 type ifb\nip link add ifb1 type ifb\ntc qdisc add dev ifb0 clsact\ntc filter add dev ifb0 egress matchall action mirred egress redirect dev ifb1\n",
                "r.tc:4:74: at \"ifb1\": a redirect from ifb0 (a virtual device) to another",
            ),
            (
                "tc qdisc add dev wlan0 clsact\ntc filter add dev wlan0 egress matchall action mirred egress redirect dev wlan0\n",
                "r.tc:2:75: at \"wlan0\": wlan0 redirects to itself: a loop",
            ),
            (
                "tc qdisc add dev wlan0 clsact\ntc filter add dev wlan0 egress matchall action mirred egress redirect dev eth0\ntc qdisc add dev eth0 root pfifo\n",
                "r.tc:2:75: at \"eth0\": a mirred redirect to eth0, a real device, is not modelled",
            ),
            (
                "ip link add ifb0 type ifb\ntc qdisc add dev wlan0 clsact\ntc filter add dev wlan0 egress matchall action mirred egress mirror dev ifb0\n",
                "r.tc:3:62: at \"mirror\": mirred mirror (a copy of the packet) is not modelled",
            ),
            (
                "ip link add ifb0 type ifb\ntc filter add dev wlan0 egress matchall action mirred egress redirect dev ifb0\n",
                "r.tc:2:25: at \"egress\": wlan0 has no clsact qdisc to hold egress filters",
            ),
            (
                "tc qdisc add dev ifb0 root pfifo\nip link add ifb0 type ifb\n",
                "r.tc:1:18: at \"ifb0\": device \"ifb0\" does not exist yet",
            ),
            ("ip link add ifb0 type veth\n", "r.tc:1:23: at \"veth\": link type \"veth\" is not modelled"),
            (
                "iptables -t mangle -A PREROUTING -i eth0 -j IMQ --todev 0\n",
                "r.tc:1:34: at \"-i\": iptables \"-i\" is not modelled",
            ),
            (
                "iptables -t mangle -A PREROUTING -o eth0 -j IMQ --todev 0\n",
                "r.tc:1:23: at \"PREROUTING\": IMQ in PREROUTING shapes what a device receives",
            ),
            ("iptables -t mangle -A POSTROUTING -o eth0 -j IMQ --todev 16\n", "r.tc:1:58: at \"16\": invalid --todev \"16\"; expected 0 to 15"),
        ];
        for (text, want) in cases {
            let e = check_script(text, "r.tc").unwrap_err();
            assert_eq!(e.len(), 1, "{text}: {e:?}");
            assert!(e[0].starts_with(want), "{text}:\n got {}\nwant {want}", e[0]);
        }
        // On a node, an ifb may not take a real device's name.
        let devs = [("wlan0".to_string(), 50u32)];
        let e = check_script_on("ip link add wlan0 type ifb\n", "r.tc", Some(&devs)).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("r.tc:1:13: at \"wlan0\": wlan0 is a real device of this node"), "{}", e[0]);
    }

    #[test]
    fn located_lines_follow_the_compiler_convention() {
        let d = TcDiag::at_pos(Severity::Error, (4, 9), "missing");
        assert_eq!(located("x/y.tc", &d), "x/y.tc:4:9: missing");
        let d = TcDiag { severity: Severity::Warning, line: 2, col: 3, token: "ecn".into(), message: "m".into() };
        assert_eq!(located("s.tc", &d), "s.tc:2:3: at \"ecn\": m");
    }
}
