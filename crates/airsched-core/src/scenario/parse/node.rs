//! The keys every node shares (`[ap]`, `[server]`, each `[[station]]`): txqueuelen, address and
//! tc script.

use super::*;

/// `[ap]` or `[server]`: the node's settings and its table (None when absent or not a table).
pub(super) fn node_section<'t, 'i>(
    rd: &mut Reader<'_>,
    root: &'t DeTable<'i>,
    name: &str,
    known: &[&str],
) -> (NodeConfig, Option<(&'t DeTable<'i>, Span)>) {
    let header = format!("[{name}]");
    if let Some(v) = root.get(name) {
        if let Some(t) = as_table(rd, v, name, &header) {
            check_keys(rd, t, name, &header, known);
            return (parse_node(rd, t, name), Some((t, v.span())));
        }
    }
    let node = NodeConfig { txqueuelen: DEFAULT_TXQUEUELEN, ip: None, tc: None, kernel: None };
    (node, None)
}

pub(super) fn parse_node(rd: &mut Reader<'_>, tbl: &DeTable<'_>, path: &str) -> NodeConfig {
    let key = join(path, "txqueuelen");
    let q = tbl.get("txqueuelen").and_then(|v| integer(rd, v, &key, 1, MAX_TXQUEUELEN));
    let ip = tbl.get("ip").and_then(|v| {
        let key = join(path, "ip");
        let s = string(rd, v, &key, "an IPv4 address like \"192.168.1.20\"")?;
        let ip = crate::scenario::parse_ipv4(s);
        if ip.is_none() {
            rd.error(
                &v.span(),
                &key,
                format!("{s:?} is not an IPv4 address; expected four numbers 0-255 like \"192.168.1.20\""),
            );
        }
        ip
    });
    let tc = parse_tc_source(rd, tbl, path);
    let kernel = tbl.get("kernel").and_then(|v| kernel_era(rd, v, &join(path, "kernel")));
    NodeConfig { txqueuelen: q.map_or(DEFAULT_TXQUEUELEN, |n| n as u32), ip, tc, kernel }
}

/// `kernel = "2.4" | "4.9" | "6.1"`: a Linux generation's TCP defaults.
pub(super) fn kernel_era(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<crate::tcp::KernelEra> {
    word(rd, v, key)
}

/// `tc = """..."""` (inline) or `tc_file = "path"` (relative to the scenario file).
pub(super) fn parse_tc_source(rd: &mut Reader<'_>, tbl: &DeTable<'_>, path: &str) -> Option<TcSource> {
    let inline = tbl.get("tc");
    let file = tbl.get("tc_file");
    if let (Some(_), Some(f)) = (inline, file) {
        rd.error(
            &f.span(),
            &join(path, "tc_file"),
            "give either `tc` (the script inline) or `tc_file` (a file), not both",
        );
        return None;
    }
    if let Some(v) = inline {
        let key = join(path, "tc");
        let text = string(
            rd,
            v,
            &key,
            "a tc script as a string, e.g. tc = \"\"\"\ntc qdisc add dev wlan0 root pfifo limit 100\n\"\"\"",
        )?;
        // Where the script's first line sits in the file: after the opening quotes, or on the
        // next line when a multi-line string starts with a newline (TOML trims it).
        let span = v.span();
        let raw = rd.source(&span);
        let (file, line, col) = rd.locate(span.start);
        let (line_offset, first_line_col_offset) = if raw.starts_with("\"\"\"") || raw.starts_with("\'\'\'") {
            let after = &raw[3..];
            if after.starts_with('\n') || after.starts_with("\r\n") {
                (line, 0)
            } else {
                (line - 1, col - 1 + 3)
            }
        } else if raw.starts_with('"') || raw.starts_with('\'') {
            (line - 1, col - 1 + 1)
        } else {
            // An override's bare word: no quote before the script.
            (line - 1, col - 1)
        };
        return Some(TcSource {
            text: text.to_string(),
            file: file.to_string(),
            key,
            line_offset,
            first_line_col_offset,
        });
    }
    if let Some(v) = file {
        let key = join(path, "tc_file");
        let name = string(rd, v, &key, "a path like \"shaping.tc\"")?;
        let (file, text) = read_relative(rd, v, &key, name, "tc script", "")?;
        return Some(TcSource { text, file, key, line_offset: 0, first_line_col_offset: 0 });
    }
    None
}

/// `[ap] tx_buffers` and `[ap] rate_control` of an 802.11b AP
/// ([`crate::wifi::legacy::LegacyAp`]): how many frames its driver and card hold below the qdisc
/// (1 when absent) and who picks its frames' rates (each link's own when absent). An 802.11n AP
/// has its own driver queues (`driver_queue_limit`) and rate control; a point coordinator polls
/// with the MAC's one frame at the links' own rates.
pub(super) fn parse_legacy_ap(
    rd: &mut Reader<'_>,
    tbl: Option<&DeTable<'_>>,
    standard: Option<Standard>,
    pcf: bool,
) -> crate::wifi::legacy::LegacyAp {
    use crate::wifi::legacy::{ApRateControl, LegacyAp, TxBuffers};
    let mut ap = LegacyAp::default();
    let Some(tbl) = tbl else { return ap };
    let pcf_error = |rd: &mut Reader<'_>, v: &Value<'_>, key: &str, what: &str| {
        rd.error(
            &v.span(),
            key,
            format!(
                "a point coordinator (`pcf = true`) is modelled with the AP's one frame in its MAC at the links' own \
                 rates; leave `{what}` out"
            ),
        );
    };
    let why = "`tx_buffers` is the 802.11b AP's driver and card buffers; an 802.11n AP's driver FIFO is \
               `driver_queue_limit` (frames per access category)";
    if let Some(v) = ht::not_ht(rd, tbl, "ap", "tx_buffers", standard, why) {
        let key = "ap.tx_buffers";
        if let Some(n) = integer(rd, v, key, 1, TxBuffers::MAX as u64) {
            if pcf && n > 1 {
                pcf_error(rd, v, key, "tx_buffers");
            } else {
                ap.tx_buffers = TxBuffers(n as u32);
            }
        }
    }
    let why = "`[ap] rate_control` chooses the 802.11b AP's driver rate control; in an 802.11n cell give \
               `rate_control` per station or in [cell]";
    if let Some(v) = ht::not_ht(rd, tbl, "ap", "rate_control", standard, why) {
        let key = "ap.rate_control";
        if let Some(rc) = word::<ApRateControl>(rd, v, key) {
            if pcf && rc != ApRateControl::Firmware {
                pcf_error(rd, v, key, "rate_control");
            } else {
                ap.rate_control = rc;
            }
        }
    }
    ap
}
