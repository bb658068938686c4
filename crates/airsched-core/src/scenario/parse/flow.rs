//! `[[flow]]`: protocol, endpoints, rate, size, times and header fields.

use super::*;

pub(super) fn endpoint(
    rd: &mut Reader<'_>,
    v: &Value<'_>,
    key: &str,
    stations: &HashMap<String, usize>,
    bt: &HashMap<String, usize>,
) -> Option<Endpoint> {
    let s = string(rd, v, key, "a string, \"server\", \"ap\", a station name or a Bluetooth client's name")?;
    match s {
        "server" => return Some(Endpoint::Server),
        "ap" => return Some(Endpoint::Ap),
        _ => {}
    }
    if let Some(&i) = stations.get(s) {
        return Some(Endpoint::Station(i));
    }
    if let Some(&i) = bt.get(s) {
        return Some(Endpoint::Bt(i));
    }
    fn by_index(names: &HashMap<String, usize>) -> Vec<&str> {
        let mut v: Vec<&str> = names.keys().map(String::as_str).collect();
        v.sort_by_key(|k| names[*k]);
        v
    }
    let (known, clients) = (by_index(stations), by_index(bt));
    let expected = if clients.is_empty() {
        "\"server\", \"ap\" or a station name"
    } else {
        "\"server\", \"ap\", a station name or a Bluetooth client's name"
    };
    let mut msg = format!("unknown endpoint {s:?}; expected {expected}");
    let candidates = known.iter().chain(clients.iter()).copied().chain(["server", "ap"]);
    if let Some(c) = closest(s, candidates) {
        msg.push_str(&format!("; did you mean {c:?}?"));
    }
    // The first ten names of each kind.
    let list = |names: &[&str]| {
        let shown: Vec<String> = names.iter().take(10).map(|k| format!("{k:?}")).collect();
        let more = if names.len() > 10 { ", ..." } else { "" };
        format!("{}{more}", shown.join(", "))
    };
    let stations_part =
        if known.is_empty() { "no [[station]] is defined".to_string() } else { format!("stations: {}", list(&known)) };
    if clients.is_empty() {
        msg.push_str(&format!(" ({stations_part})"));
    } else {
        msg.push_str(&format!(" ({stations_part}; Bluetooth clients: {})", list(&clients)));
    }
    rd.error(&v.span(), key, msg);
    None
}

pub(super) fn parse_flows(
    rd: &mut Reader<'_>,
    v: Option<&Value<'_>>,
    stations: &HashMap<String, usize>,
    bt: &HashMap<String, usize>,
    run: Option<&RunDuration>,
) -> Vec<FlowConfig> {
    let run_duration = run.map(|r| r.value);
    // An overridden duration that a flow's time in the file exceeds is reported at the override.
    let override_against =
        |rd: &Reader<'_>, v: &Value<'_>| run.and_then(|r| r.by_override.clone()).filter(|_| !rd.is_override(&v.span()));
    let mut flows = Vec::new();
    let mut names: HashMap<String, Span> = HashMap::new();
    for (i, tbl, tspan) in array_of_tables(rd, v, "flow") {
        let path = format!("flow[{i}]");
        let k = |key: &str| join(&path, key);
        check_keys(rd, tbl, &path, "[[flow]]", FLOW_KEYS);

        let name = lookup(rd, tbl, &tspan, &path, "name", Some("a unique name, e.g. name = \"down1\"")).and_then(|v| {
            let key = k("name");
            let s = string(rd, v, &key, "a string like \"down1\"")?;
            if s.trim().is_empty() {
                rd.error(&v.span(), &key, "must not be empty, e.g. \"down1\"");
                return None;
            }
            if let Some(first) = names.get(s) {
                let line = rd.line_of(first);
                rd.error(&v.span(), &key, format!("duplicate flow name {s:?} (already used on line {line})"));
                return None;
            }
            names.insert(s.to_string(), v.span());
            Some(s.to_string())
        });

        let mut protocol = Protocol::Udp;
        if let Some(v) = tbl.get("protocol") {
            let key = k("protocol");
            if let Some(s) = string(rd, v, &key, "a string, \"udp\", \"tcp\" or \"ping\"") {
                if s.eq_ignore_ascii_case("ping") {
                    protocol = Protocol::Ping;
                } else if s.eq_ignore_ascii_case("tcp") {
                    protocol = Protocol::Tcp;
                } else if !s.eq_ignore_ascii_case("udp") {
                    rd.error(&v.span(), &key, format!("unknown protocol {s:?}; \"udp\", \"tcp\" or \"ping\""));
                }
            }
        }
        let is_ping = protocol == Protocol::Ping;
        let is_tcp = protocol == Protocol::Tcp;
        if is_tcp {
            for key in ["rate", "jitter", "interval"] {
                if let Some(v) = tbl.get(key) {
                    rd.error(&v.span(), &k(key), format!("a TCP flow sends as fast as its congestion window allows; leave `{key}` out (give `bytes` for a transfer of fixed size)"));
                }
            }
        } else {
            for &key in TCP_FLOW_KEYS {
                if let Some(v) = tbl.get(key) {
                    rd.error(&v.span(), &k(key), format!("`{key}` is for TCP flows (protocol = \"tcp\")"));
                }
            }
        }
        let cc = tbl.get("cc").and_then(|v| word::<crate::tcp::CcKind>(rd, v, &k("cc")));
        let sack = tbl.get("sack").filter(|_| is_tcp).and_then(|v| boolean(rd, v, &k("sack")));
        let tcp_opts = if is_tcp {
            tcp_options(rd, tbl, &k, cc.is_some())
        } else {
            crate::traffic::flow::TcpFlowOptions::default()
        };
        let bytes = tbl.get("bytes").and_then(|v| {
            let key = k("bytes");
            let s = string(rd, v, &key, "a size like \"10MB\" or \"500kb\"")?;
            match units::parse_size_bytes(s) {
                Ok(0) => {
                    rd.error(&v.span(), &key, "a transfer needs at least one byte");
                    None
                }
                Ok(b) => Some(b),
                Err(e) => {
                    rd.error(&v.span(), &key, e.to_string());
                    None
                }
            }
        });

        let src_v = lookup(
            rd,
            tbl,
            &tspan,
            &path,
            "src",
            Some("\"server\", \"ap\", a station name or a Bluetooth client's name"),
        );
        let src = src_v.and_then(|v| endpoint(rd, v, &k("src"), stations, bt));
        let dst_v = lookup(
            rd,
            tbl,
            &tspan,
            &path,
            "dst",
            Some("\"server\", \"ap\", a station name or a Bluetooth client's name"),
        );
        let dst = dst_v.and_then(|v| endpoint(rd, v, &k("dst"), stations, bt));
        if let (Some(s), Some(d), Some(dv)) = (src, dst, dst_v) {
            if s == d {
                rd.error(&dv.span(), &k("dst"), "must differ from src (a flow needs two different endpoints)");
            }
        }

        if is_ping {
            for key in ["rate", "jitter"] {
                if let Some(v) = tbl.get(key) {
                    rd.error(
                        &v.span(),
                        &k(key),
                        "a ping flow sends one echo request per `interval`; leave `rate` and `jitter` out",
                    );
                }
            }
        } else if let (false, Some(v)) = (is_tcp, tbl.get("interval")) {
            rd.error(
                &v.span(),
                &k("interval"),
                "`interval` is for ping flows (protocol = \"ping\"); a UDP flow has a `rate`",
            );
        }
        let reply_delay = match tbl.get("reply_delay") {
            Some(v) if !is_ping => {
                rd.error(&v.span(), &k("reply_delay"), "`reply_delay` is for ping flows (protocol = \"ping\")");
                None
            }
            Some(v) => time_value(rd, v, &k("reply_delay"), "90us").and_then(|t| {
                if t > Nanos::from_secs(1) {
                    rd.error(&v.span(), &k("reply_delay"), format!("{t} is too long; at most 1s"));
                    None
                } else {
                    Some(t)
                }
            }),
            None => None,
        };
        let interval = if is_ping {
            match tbl.get("interval") {
                Some(v) => time_value(rd, v, &k("interval"), "200ms").and_then(|t| {
                    if t < Nanos::from_us(100) {
                        rd.error(&v.span(), &k("interval"), format!("{t} is too short; at least 100us"));
                        None
                    } else {
                        Some(t)
                    }
                }),
                None => Some(Nanos::from_secs(1)),
            }
        } else {
            None
        };
        let rate = if is_ping {
            interval.map(|interval| FlowRate::Periodic { interval })
        } else if is_tcp {
            Some(FlowRate::Window)
        } else {
            lookup(rd, tbl, &tspan, &path, "rate", Some("a tc rate like \"6mbit\", or \"saturate\"")).and_then(|v| {
                let key = k("rate");
                let s = string(rd, v, &key, "a string like \"6mbit\" or \"saturate\"")?;
                if s.trim().eq_ignore_ascii_case("saturate") {
                    return Some(FlowRate::Saturate);
                }
                match units::parse_rate_bps(s) {
                    Ok(_) if counts_bytes(s) => {
                        rd.error(
                            &v.span(),
                            &key,
                            format!(
                                "\"{s}\" is in bytes per second in tc units (\"mbps\" = megabytes/s); \
                             write the rate in bits, like \"6mbit\", so that it cannot be misread"
                            ),
                        );
                        None
                    }
                    Ok(b) => Some(FlowRate::Cbr { bits_per_second: b }),
                    Err(e) => {
                        rd.error(&v.span(), &key, format!("{e}; or \"saturate\" for an always-backlogged source"));
                        None
                    }
                }
            })
        };

        // TCP: the MSS; it must leave room for 52 bytes of IP and TCP headers (with timestamps).
        let size_max = if is_tcp {
            u64::from(MAX_UDP_PAYLOAD + UDP_IP_OVERHEAD - crate::tcp::TCP_IP_HEADER)
        } else {
            u64::from(MAX_UDP_PAYLOAD)
        };
        let size = tbl.get("size").and_then(|v| integer(rd, v, &k("size"), if is_tcp { 88 } else { 1 }, size_max));
        // A flow to or from a Bluetooth client crosses a bnep device, whose MTU is Ethernet's.
        let over_bt = [src, dst].iter().any(|e| matches!(e, Some(Endpoint::Bt(_))));
        if let (true, Some(n), Some(v)) = (over_bt, size, tbl.get("size")) {
            let headers = if is_tcp {
                crate::tcp::TCP_IP_HEADER
            } else if is_ping {
                crate::traffic::ping::ICMP_IP_HEADER
            } else {
                UDP_IP_OVERHEAD
            };
            let mtu = crate::bluetooth::BNEP_NETDEV_MTU;
            if n + u64::from(headers) > u64::from(mtu) {
                let what = if is_tcp {
                    "an MSS"
                } else if is_ping {
                    "an ICMP payload"
                } else {
                    "a UDP payload"
                };
                rd.error(
                    &v.span(),
                    &k("size"),
                    format!(
                        "{what} of {n} bytes makes {}-byte IP packets, more than the {mtu}-byte MTU of the Bluetooth link's bnep device \
                         (IP fragmentation is not modelled); at most {}",
                        n + u64::from(headers),
                        mtu - headers
                    ),
                );
            }
        }

        // A constant rate: at most the fastest link, and at most one packet per microsecond.
        if let (Some(FlowRate::Cbr { bits_per_second }), Some(v)) = (rate, tbl.get("rate")) {
            let key = k("rate");
            if rate_in_bounds(rd, v, &key, bits_per_second, 1, MAX_LINK_BPS).is_some() {
                let bytes = u128::from(size.unwrap_or(1470) as u32);
                let interval_ns = bytes * 8 * 1_000_000_000 / u128::from(bits_per_second);
                if interval_ns < u128::from(MIN_PACKET_INTERVAL.0) {
                    rd.error(
                        &v.span(),
                        &key,
                        format!(
                            "{} in {bytes}-byte packets is more than one packet per {MIN_PACKET_INTERVAL}; \
                             use larger packets (`size`) or a lower rate",
                            crate::tc::format_rate(bits_per_second)
                        ),
                    );
                }
            }
        }

        let start_v = tbl.get("start");
        let start = start_v.map_or(Some(Nanos::ZERO), |v| time_value(rd, v, &k("start"), "0s"));
        if let (Some(st), Some(d), Some(v)) = (start, run_duration, start_v) {
            if let (true, Some(span)) = (st >= d, override_against(rd, v)) {
                let flow = name.as_deref().unwrap_or(&path);
                rd.error(
                    &span,
                    "run.duration",
                    format!("duration {d} ends before flow {flow} starts at {st}; it would never send"),
                );
            } else if st >= d {
                rd.error(
                    &v.span(),
                    &k("start"),
                    format!(
                        "start ({st}) must be before the end of the run (run.duration = {d}); \
                         the flow would never send"
                    ),
                );
            }
        }
        let stop_v = tbl.get("stop");
        let stop = stop_v.and_then(|v| {
            let t = time_value(rd, v, &k("stop"), "30s")?;
            if let Some(st) = start {
                if t <= st {
                    let msg = format!("stop ({t}) must be after start ({st})");
                    rd.error(&v.span(), &k("stop"), msg);
                    return None;
                }
            }
            if let Some(d) = run_duration {
                if let (true, Some(span)) = (t > d, override_against(rd, v)) {
                    let flow = name.as_deref().unwrap_or(&path);
                    rd.error(&span, "run.duration", format!("duration {d} ends before flow {flow} stops at {t}"));
                    return None;
                }
                if t > d {
                    rd.error(
                        &v.span(),
                        &k("stop"),
                        format!(
                            "stop ({t}) is after the end of the run (run.duration = {d}); \
                             leave stop out to run to the end"
                        ),
                    );
                    return None;
                }
            }
            Some(t)
        });

        // Jitter: only for CBR, and shorter than the packet interval so packets stay in order.
        let jitter = tbl.get("jitter").and_then(|v| {
            let j = time_value(rd, v, &k("jitter"), "50us")?;
            match (rate, size) {
                (Some(FlowRate::Saturate), _) if j > Nanos::ZERO => {
                    rd.error(&v.span(), &k("jitter"), "jitter applies to CBR flows only; a saturating source has no send times to jitter".to_string());
                    None
                }
                (Some(FlowRate::Cbr { bits_per_second }), sz) => {
                    let bits = sz.unwrap_or(1470) as u128 * 8;
                    let period = Nanos((bits * 1_000_000_000u128 / bits_per_second as u128).min(u64::MAX as u128) as u64);
                    if j >= period {
                        rd.error(
                            &v.span(),
                            &k("jitter"),
                            format!("jitter ({j}) must be shorter than the packet interval ({period}) so that packets stay in order"),
                        );
                        None
                    } else {
                        Some(j)
                    }
                }
                _ => Some(j),
            }
        });

        let port = |rd: &mut Reader<'_>, name: &str| {
            tbl.get(name).and_then(|v| integer(rd, v, &k(name), 1, 65535)).map(|n| n as u16)
        };
        let sport = port(rd, "sport");
        let dport = port(rd, "dport");
        let tos_v = tbl.get("tos");
        let dscp_v = tbl.get("dscp");
        let tos = match (tos_v, dscp_v) {
            (Some(_), Some(d)) => {
                rd.error(
                    &d.span(),
                    &k("dscp"),
                    "give either `tos` (the whole byte) or `dscp` (its upper six bits), not both",
                );
                None
            }
            (Some(v), None) => integer(rd, v, &k("tos"), 0, 255).map(|n| n as u8),
            (None, Some(v)) => integer(rd, v, &k("dscp"), 0, 63).map(|n| (n as u8) << 2),
            (None, None) => None,
        };
        let mark = tbl.get("mark").and_then(|v| integer(rd, v, &k("mark"), 0, u32::MAX as u64)).map(|n| n as u32);
        let priority =
            tbl.get("priority").and_then(|v| integer(rd, v, &k("priority"), 0, u32::MAX as u64)).map(|n| n as u32);

        flows.push(FlowConfig {
            name: name.unwrap_or_default(),
            protocol,
            src: src.unwrap_or(Endpoint::Server),
            dst: dst.unwrap_or(Endpoint::Ap),
            rate: rate.unwrap_or(FlowRate::Saturate),
            size: size.map_or(
                if is_ping {
                    56
                } else if is_tcp {
                    crate::tcp::DEFAULT_MSS
                } else {
                    1470
                },
                |n| n as u32,
            ),
            start: start.unwrap_or(Nanos::ZERO),
            stop,
            jitter: jitter.unwrap_or(Nanos::ZERO),
            sport,
            dport: dport.unwrap_or(5001),
            tos: tos.unwrap_or(0),
            mark: mark.unwrap_or(0),
            priority,
            cc: cc.unwrap_or(crate::tcp::CcKind::Cubic),
            sack: sack.unwrap_or(true),
            bytes,
            tcp: tcp_opts,
            reply_delay: reply_delay.unwrap_or(Nanos::ZERO),
        });
    }
    flows
}

/// A TCP flow's settings over its hosts' kernel era (docs/model-tcp.md, "Kernel eras").
fn tcp_options(
    rd: &mut Reader<'_>,
    tbl: &DeTable<'_>,
    k: &dyn Fn(&str) -> String,
    cc_given: bool,
) -> crate::traffic::flow::TcpFlowOptions {
    let buf = |rd: &mut Reader<'_>, name: &str| -> Option<[u64; 3]> {
        let v = tbl.get(name)?;
        let key = k(name);
        let example = if name == "rmem" { "[4096, 87380, 174760]" } else { "[4096, 16384, 131072]" };
        let DeValue::Array(items) = v.get_ref() else {
            type_error(rd, v, &key, &format!("an array of three byte counts (min, default, max) like {example}"));
            return None;
        };
        if items.len() != 3 {
            rd.error(
                &v.span(),
                &key,
                format!("needs three byte counts (min, default, max) like {example}, got {}", items.len()),
            );
            return None;
        }
        let mut out = [0u64; 3];
        for (i, it) in items.iter().enumerate() {
            out[i] = integer(rd, it, &key, 1, 1 << 31)?;
        }
        if !(out[0] <= out[1] && out[1] <= out[2]) {
            rd.error(&v.span(), &key, format!("must satisfy min <= default <= max like {example}, got {out:?}"));
            return None;
        }
        Some(out)
    };
    let rmem = buf(rd, "rmem");
    let wmem = buf(rd, "wmem");
    crate::traffic::flow::TcpFlowOptions {
        kernel: tbl.get("kernel").and_then(|v| super::node::kernel_era(rd, v, &k("kernel"))),
        cc_given,
        initial_cwnd: tbl
            .get("initial_cwnd")
            .and_then(|v| integer(rd, v, &k("initial_cwnd"), 1, 1000))
            .map(|n| n as u32),
        rmem,
        wmem,
        adv_win_scale: tbl
            .get("adv_win_scale")
            .and_then(|v| integer(rd, v, &k("adv_win_scale"), 1, 31))
            .map(|n| n as u8),
        autotune: tbl.get("autotune").and_then(|v| boolean(rd, v, &k("autotune"))),
        tsq: tbl.get("tsq").and_then(|v| integer(rd, v, &k("tsq"), 0, 1 << 31)),
        rack: sack_only(rd, tbl, &k, "rack"),
        tlp: sack_only(rd, tbl, &k, "tlp"),
        frto: sack_only(rd, tbl, &k, "frto"),
        repeat: tbl
            .get("repeat")
            .and_then(|v| {
                let r = boolean(rd, v, &k("repeat"))?;
                if r && tbl.get("bytes").is_none() {
                    rd.error(
                        &v.span(),
                        &k("repeat"),
                        "repeats a file: give its size in `bytes`, e.g. bytes = \"600MB\"",
                    );
                    return None;
                }
                Some(r)
            })
            .unwrap_or(false),
    }
}

/// A tc rate whose unit counts bytes per second (bps, kbps, mbps, ... and the IEC forms).
pub(super) fn counts_bytes(rate: &str) -> bool {
    let r = rate.trim().to_ascii_lowercase();
    r.ends_with("bps")
}

/// `rack`, `tlp`, `frto`: booleans; Linux runs all three on SACK connections only.
fn sack_only(rd: &mut Reader<'_>, tbl: &DeTable<'_>, k: &dyn Fn(&str) -> String, key: &str) -> Option<bool> {
    let v = tbl.get(key)?;
    let on = boolean(rd, v, &k(key))?;
    if on && tbl.get("sack").is_some_and(|s| matches!(s.get_ref(), DeValue::Boolean(false))) {
        rd.error(&v.span(), &k(key), format!("`{key}` needs SACK (Linux runs it on SACK connections only): drop `sack = false` or set `{key} = false`"));
        return None;
    }
    Some(on)
}
