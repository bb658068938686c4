//! `[[bluetooth]]` (the AP's piconet slaves) and `[piconet]` (host stack, controller and
//! coexistence options); docs/model-bluetooth.md.

use super::*;
use crate::bluetooth::PacketType;
use crate::scenario::{BluetoothConfig, PiconetConfig, Scenario};

pub(super) const BLUETOOTH_KEYS: &[&str] =
    &["name", "ip", "txqueuelen", "tc", "tc_file", "packet_types", "packet_error_rate", "position", "kernel"];
pub(super) const PICONET_KEYS: &[&str] = &[
    "bnep_header",
    "bnep_txq_len",
    "l2cap_sndbuf",
    "acl_mtu",
    "acl_pkts",
    "t_poll",
    "afh",
    "sir",
    "bt_power",
    "wlan_power",
];

/// A piconet has at most 7 active slaves (3-bit LT_ADDR, 0 is broadcast).
pub(super) const MAX_SLAVES: usize = 7;

const TYPES_EXAMPLE: &str = "a list of ACL packet types like [\"DH1\", \"DH3\", \"DH5\"] (DM1 DH1 DM3 DH3 DM5 DH5 2-DH1 2-DH3 2-DH5 3-DH1 3-DH3 3-DH5)";

fn packet_types(rd: &mut Reader<'_>, v: &Value<'_>, key: &str) -> Option<Vec<PacketType>> {
    let DeValue::Array(items) = v.get_ref() else {
        rd.error(&v.span(), key, format!("expected {TYPES_EXAMPLE}"));
        return None;
    };
    if items.is_empty() {
        rd.error(&v.span(), key, format!("must not be empty; expected {TYPES_EXAMPLE}"));
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(s) = string(rd, item, key, "a packet type name like \"DH5\"") else {
            ok = false;
            continue;
        };
        match PacketType::from_name(s) {
            Some(t) => out.push(t),
            None => {
                let names: Vec<&str> = PacketType::ALL.iter().map(|t| t.name()).collect();
                let mut msg = format!("unknown packet type {s:?}; expected one of {}", names.join(", "));
                if let Some(c) = closest(s, names.iter().copied()) {
                    msg.push_str(&format!("; did you mean {c:?}?"));
                }
                rd.error(&item.span(), key, msg);
                ok = false;
            }
        }
    }
    out.sort();
    out.dedup();
    ok.then_some(out)
}

fn number(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, min: f64, max: f64, ex: &str) -> Option<f64> {
    let x = match v.get_ref() {
        DeValue::Float(f) => f.to_string().parse::<f64>().ok(),
        DeValue::Integer(i) => i.to_string().parse::<f64>().ok(),
        _ => None,
    };
    match x {
        Some(x) if x.is_finite() && (min..=max).contains(&x) => Some(x),
        _ => {
            rd.error(&v.span(), key, format!("expected a number from {min} to {max}, e.g. {ex}"));
            None
        }
    }
}

/// Coordinates are accepted within this many metres of the AP (the 802.15.2 indoor path loss
/// is meant for tens of metres).
const MAX_COORDINATE_M: f64 = 10_000.0;

/// A point `[x, y]` in metres (`[[bluetooth]] position`, `[[station]] location`), the AP at
/// the origin.
pub(super) fn xy(rd: &mut Reader<'_>, v: &Value<'_>, key: &str, ex: &str) -> Option<(f64, f64)> {
    let msg = format!("expected [x, y] in metres from the AP (at [0, 0]), each within {MAX_COORDINATE_M} m, e.g. {ex}");
    let DeValue::Array(a) = v.get_ref() else {
        rd.error(&v.span(), key, msg);
        return None;
    };
    let coord = |v: &Value<'_>| match v.get_ref() {
        DeValue::Float(f) => f.to_string().parse::<f64>().ok(),
        DeValue::Integer(i) => i.to_string().parse::<f64>().ok(),
        _ => None,
    };
    match a.iter().map(coord).collect::<Option<Vec<f64>>>() {
        Some(c) if c.len() == 2 && c.iter().all(|x| x.is_finite() && x.abs() <= MAX_COORDINATE_M) => Some((c[0], c[1])),
        _ => {
            rd.error(&v.span(), key, msg);
            None
        }
    }
}

/// The slaves, and a map from each name to its index (for flows).
pub(super) fn parse_bluetooth(
    rd: &mut Reader<'_>,
    v: Option<&Value<'_>>,
    stations: &HashMap<String, usize>,
    standard: Option<Standard>,
) -> (Vec<BluetoothConfig>, HashMap<String, usize>) {
    let mut out = Vec::new();
    let mut names: HashMap<String, (usize, Span)> = HashMap::new();
    for (i, tbl, tspan) in array_of_tables(rd, v, "bluetooth") {
        let path = format!("bluetooth[{i}]");
        check_keys(rd, tbl, &path, "[[bluetooth]]", BLUETOOTH_KEYS);
        if i == MAX_SLAVES {
            rd.error(
                &tspan,
                "bluetooth",
                format!("an 8th Bluetooth slave; a piconet has at most {MAX_SLAVES} active slaves (3-bit LT_ADDR)"),
            );
        }
        if i == 0 && standard.is_some_and(Standard::is_ht_mac) {
            rd.error(
                &tspan,
                "bluetooth",
                "Bluetooth and its coexistence are modelled beside an 802.11b cell only (cell.standard = \"802.11b\")",
            );
        }
        let index = out.len();
        let name = lookup(rd, tbl, &tspan, &path, "name", Some("a unique name, e.g. name = \"bt1\"")).and_then(|v| {
            let key = join(&path, "name");
            let s = string(rd, v, &key, "a string like \"bt1\"")?;
            if s.is_empty() || !s.chars().all(valid_name_char) {
                rd.error(
                    &v.span(),
                    &key,
                    format!("name {s:?} must be non-empty ASCII letters, digits, '_', '.' and '-'"),
                );
                return None;
            }
            if s.eq_ignore_ascii_case("server") || s.eq_ignore_ascii_case("ap") {
                rd.error(&v.span(), &key, format!("{s:?} is reserved; choose another name"));
                return None;
            }
            if stations.contains_key(s) {
                rd.error(
                    &v.span(),
                    &key,
                    format!(
                        "{s:?} is already a [[station]]'s name; names of stations and Bluetooth clients must differ"
                    ),
                );
                return None;
            }
            if let Some((_, first)) = names.get(s) {
                let line = rd.line_of(first);
                rd.error(
                    &v.span(),
                    &key,
                    format!("duplicate Bluetooth client name {s:?} (already used on line {line})"),
                );
                return None;
            }
            names.insert(s.to_string(), (index, v.span()));
            Some(s.to_string())
        });
        let types = tbl.get("packet_types").and_then(|v| packet_types(rd, v, &join(&path, "packet_types")));
        let per = tbl
            .get("packet_error_rate")
            .and_then(|v| number(rd, v, &join(&path, "packet_error_rate"), 0.0, 0.99, "packet_error_rate = 0.01"));
        let position = tbl.get("position").and_then(|v| xy(rd, v, &join(&path, "position"), "position = [3.0, 0.0]"));
        let node = parse_node(rd, tbl, &path);
        out.push(BluetoothConfig {
            name: name.unwrap_or_default(),
            packet_types: types.unwrap_or_else(|| vec![PacketType::Dh1, PacketType::Dh3, PacketType::Dh5]),
            packet_error_rate: per.unwrap_or(0.0),
            position,
            node,
        });
    }
    (out, names.into_iter().map(|(k, (i, _))| (k, i)).collect())
}

pub(super) fn parse_piconet(rd: &mut Reader<'_>, v: Option<&Value<'_>>) -> PiconetConfig {
    let mut p = PiconetConfig::default();
    let Some(v) = v else { return p };
    let Some(tbl) = as_table(rd, v, "piconet", "[piconet]") else { return p };
    check_keys(rd, tbl, "piconet", "[piconet]", PICONET_KEYS);
    if let Some(v) = tbl.get("bnep_header") {
        let key = "piconet.bnep_header";
        let ex = "\"compressed\" (3 bytes), \"src-only\" or \"dst-only\" (9), \"general\" (15)";
        if let Some(s) = string(rd, v, key, ex) {
            match s {
                "compressed" => p.host.bnep_header = 3,
                "src-only" | "dst-only" => p.host.bnep_header = 9,
                "general" => p.host.bnep_header = 15,
                _ => rd.error(&v.span(), key, format!("unknown BNEP header {s:?}; expected {ex}")),
            }
        }
    }
    if let Some(n) = tbl.get("bnep_txq_len").and_then(|v| integer(rd, v, "piconet.bnep_txq_len", 1, 100_000)) {
        p.host.bnep_txq_len = n as u32;
    }
    if let Some(n) = tbl.get("l2cap_sndbuf").and_then(|v| integer(rd, v, "piconet.l2cap_sndbuf", 1, 1 << 30)) {
        p.host.l2cap_sndbuf = n;
    }
    if let Some(n) = tbl.get("acl_mtu").and_then(|v| integer(rd, v, "piconet.acl_mtu", 27, 65_535)) {
        p.host.acl_mtu = n as u32;
    }
    if let Some(n) = tbl.get("acl_pkts").and_then(|v| integer(rd, v, "piconet.acl_pkts", 1, 65_535)) {
        p.host.acl_pkts = n as u32;
    }
    if let Some(n) = tbl.get("t_poll").and_then(|v| integer(rd, v, "piconet.t_poll", 0, 65_534)) {
        if n % 2 == 1 {
            rd.error(
                &tbl.get("t_poll").expect("just read").span(),
                "piconet.t_poll",
                format!("{n} slots: T_poll is an even number of slots (the master transmits in even slots), e.g. 40"),
            );
        }
        p.host.t_poll = n as u32;
    }
    if let Some(b) = tbl.get("afh").and_then(|v| boolean(rd, v, "piconet.afh")) {
        p.afh = b;
    }
    if let Some(b) = tbl.get("sir").and_then(|v| boolean(rd, v, "piconet.sir")) {
        p.sir = b;
    }
    // Bluetooth power classes: 1 up to 20 dBm, 2 up to 4 dBm, 3 up to 0 dBm; power control
    // goes down to about -30 dBm. An 802.11b radio: 30 dBm is the 2.4 GHz band's regulatory
    // ceiling (1 W in the US); cards transmit about 13 to 20 dBm.
    if let Some(x) = tbl.get("bt_power").and_then(|v| {
        number(
            rd,
            v,
            "piconet.bt_power",
            -30.0,
            20.0,
            "bt_power = 0 (dBm; class 1 up to 20, class 2 up to 4, class 3 up to 0)",
        )
    }) {
        p.bt_power_dbm = x;
    }
    if let Some(x) =
        tbl.get("wlan_power").and_then(|v| number(rd, v, "piconet.wlan_power", -10.0, 30.0, "wlan_power = 15 (dBm)"))
    {
        p.wlan_power_dbm = x;
    }
    p
}

/// What the SIR refinement needs once the rest is valid: Bluetooth clients, and where every
/// radio is (each slave's `position`, each station's `location`).
pub(super) fn check_sir(rd: &mut Reader<'_>, root: &DeTable<'_>, scn: &Scenario) {
    if !scn.piconet.sir {
        return;
    }
    let items = |name: &str| -> Vec<Span> {
        match root.get(name).map(|v| v.get_ref()) {
            Some(DeValue::Array(items)) => items.iter().map(|i| i.span()).collect(),
            _ => Vec::new(),
        }
    };
    if scn.bluetooth.is_empty() {
        let span = root
            .get("piconet")
            .and_then(|v| v.get_ref().as_table())
            .and_then(|t| t.get("sir"))
            .map_or(0..0, |v| v.span());
        rd.error(&span, "piconet.sir", "the SIR refinement of the coexistence with Bluetooth needs [[bluetooth]] clients; add one or set sir = false");
        return;
    }
    let (bt, st) = (items("bluetooth"), items("station"));
    for (i, b) in scn.bluetooth.iter().enumerate() {
        if b.position.is_none() {
            let span = bt.get(i).cloned().unwrap_or(0..0);
            rd.error(&span, &format!("bluetooth[{i}].position"), format!("piconet.sir = true needs where the Bluetooth client {:?} is: position = [x, y] in metres, the AP and the piconet's master at [0, 0], e.g. position = [3.0, 0.0]", b.name));
        }
    }
    for (i, s) in scn.stations.iter().enumerate() {
        if s.location.is_none() {
            let span = st.get(i).cloned().unwrap_or(0..0);
            rd.error(&span, &format!("station[{i}].location"), format!("piconet.sir = true needs where the station {:?} is: location = [x, y] in metres, the AP at [0, 0], e.g. location = [10.0, 0.0]", s.name));
        }
    }
}

/// Keys of the SIR refinement given without `[piconet] sir = true`: accepted, without effect.
pub(super) fn sir_warnings(file: &str, root: &DeTable<'_>, scn: &Scenario) -> Vec<String> {
    if scn.piconet.sir {
        return Vec::new();
    }
    let mut given = Vec::new();
    let piconet = root.get("piconet").and_then(|v| v.get_ref().as_table());
    for key in ["bt_power", "wlan_power"] {
        if piconet.is_some_and(|t| t.contains_key(key)) {
            given.push(format!("piconet.{key}"));
        }
    }
    if let Some(i) = scn.bluetooth.iter().position(|b| b.position.is_some()) {
        given.push(format!("bluetooth[{i}].position"));
    }
    if let Some(i) = scn.stations.iter().position(|s| s.location.is_some()) {
        given.push(format!("station[{i}].location"));
    }
    given
        .iter()
        .map(|k| format!("{file}: {k}: warning: only the SIR refinement ([piconet] sir = true) uses it; without it every overlap of the two media in time and frequency is a loss"))
        .collect()
}
