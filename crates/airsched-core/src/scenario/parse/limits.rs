//! The bounds of what a scenario may ask for, and the checks that need the whole scenario
//! (a cell with stations, unique addresses, a bounded sample table).
//!
//! Every accepted scenario runs to an end in bounded time and memory: each bound below is either
//! physical (what the standard or the hardware allows) or practical (what keeps the number of
//! events per simulated second and the size of the result tables finite), and is named with its
//! value in the error that enforces it. docs/limits.md lists them.

use super::*;

/// Stations in one cell: 802.11 association IDs run from 1 to 2007.
pub(super) const MAX_STATIONS: usize = 2007;
/// Flows in one scenario (each has its own counters, sample rows and, for TCP, a connection).
pub(super) const MAX_FLOWS: usize = 10_000;
/// Shortest sample interval: samples are of goodput per interval, and at 1 ms an interval
/// already holds less than one 1500-byte frame at 11 Mb/s.
pub(super) const MIN_SAMPLE_INTERVAL: Nanos = Nanos::from_ms(1);
/// Largest samples table (rows = (stations + flows) x intervals); about 50 bytes a row.
pub(super) const MAX_SAMPLE_ROWS: u64 = 5_000_000;
/// Fastest link anywhere in a scenario: a UDP source's constant rate and the wired link.
pub(super) const MAX_LINK_BPS: u64 = 10_000_000_000;
/// Slowest wired link: below it a 1500-byte packet takes longer than 12 s to send.
pub(super) const MIN_WIRED_BPS: u64 = 1_000;
/// Longest one-way delay of the wired link (a geostationary hop is 0.25 s).
pub(super) const MAX_WIRED_DELAY: Nanos = Nanos::from_secs(1);
/// Shortest packet interval of a constant-rate source (one million packets per second).
pub(super) const MIN_PACKET_INTERVAL: Nanos = Nanos::from_us(1);
/// Beacon interval bounds: the Beacon Interval field counts time units (1024 us) from 1 to 65535.
pub(super) const TU: Nanos = Nanos::from_us(1024);
pub(super) const MAX_BEACON_TU: u64 = 65_535;

/// A rate in `min..=max` bit/s (formatted the way tc prints rates), or an error naming the bound.
pub(super) fn rate_in_bounds(
    rd: &mut Reader<'_>,
    v: &Value<'_>,
    key: &str,
    bps: u64,
    min: u64,
    max: u64,
) -> Option<u64> {
    if bps > max {
        rd.error(&v.span(), key, format!("{} is faster than airsched models; at most {}", bits(bps), bits(max)));
        None
    } else if bps < min {
        rd.error(&v.span(), key, format!("{} is too slow; at least {}", bits(bps), bits(min)));
        None
    } else {
        Some(bps)
    }
}

/// A rate in bit/s as tc would print it ("10Gbit", "1.5Mbit").
fn bits(bps: u64) -> String {
    crate::tc::format_rate(bps)
}

/// Checks that need every section: at least one station, at most [`MAX_STATIONS`] and
/// [`MAX_FLOWS`], no address held twice, a samples table of bounded size. Run only when the
/// sections themselves parsed without error, so nothing here is a knock-on error.
pub(super) fn check_scenario(rd: &mut Reader<'_>, root: &DeTable<'_>, scn: &Scenario) {
    let station_spans: Vec<(Span, Option<Span>)> = match root.get("station").map(|v| v.get_ref()) {
        Some(DeValue::Array(items)) => items
            .iter()
            .map(|item| {
                let ip = item.get_ref().as_table().and_then(|t| t.get("ip")).map(|v| v.span());
                (item.span(), ip)
            })
            .collect(),
        _ => Vec::new(),
    };
    if scn.stations.is_empty() {
        let what = if rd.text.trim().is_empty()
            || rd.text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            "the scenario is empty"
        } else {
            "the cell has no stations"
        };
        rd.error(
            &(0..0),
            "station",
            format!(
                "{what}; add at least one [[station]] with a name and a rate, e.g. name = \"sta1\", rate = \"11Mbps\""
            ),
        );
        return;
    }
    if scn.stations.len() > MAX_STATIONS {
        let span = station_spans.get(MAX_STATIONS).map_or(0..0, |s| s.0.clone());
        rd.error(
            &span,
            "station",
            format!(
                "{} stations; a cell has at most {MAX_STATIONS} (802.11 association IDs 1-2007)",
                scn.stations.len()
            ),
        );
    }
    if scn.flows.len() > MAX_FLOWS {
        let span = match root.get("flow").map(|v| v.get_ref()) {
            Some(DeValue::Array(items)) => items.get(MAX_FLOWS).map_or(0..0, |i| i.span()),
            _ => 0..0,
        };
        rd.error(&span, "flow", format!("{} flows; at most {MAX_FLOWS}", scn.flows.len()));
    }
    check_addresses(rd, root, scn, &station_spans);

    let run = &scn.run;
    let window = run.duration.0.saturating_sub(run.warmup.0);
    let intervals = window / run.sample_interval.0.max(1);
    let rows = intervals.saturating_mul((scn.stations.len() + scn.flows.len()) as u64);
    if rows > MAX_SAMPLE_ROWS {
        let span = root
            .get("run")
            .and_then(|r| r.get_ref().as_table())
            .and_then(|t| t.get("sample_interval"))
            .map_or(0..0, |v| v.span());
        let entities = (scn.stations.len() + scn.flows.len()) as u64;
        let shortest = Nanos((window as u128 * entities as u128 / MAX_SAMPLE_ROWS as u128) as u64 + 1);
        rd.error(
            &span,
            "run.sample_interval",
            format!(
                "{} over a measured window of {} with {entities} stations and flows makes {rows} sample rows; \
                 at most {MAX_SAMPLE_ROWS}: use a sample interval of at least {}",
                run.sample_interval,
                Nanos(window),
                round_up_ms(shortest)
            ),
        );
    }
}

fn round_up_ms(t: Nanos) -> Nanos {
    Nanos(t.0.div_ceil(1_000_000) * 1_000_000)
}

/// No two nodes with one IPv4 address (given, or the default each node gets).
fn check_addresses(rd: &mut Reader<'_>, root: &DeTable<'_>, scn: &Scenario, station_spans: &[(Span, Option<Span>)]) {
    use crate::scenario::format_ipv4;
    use crate::traffic::flow::Endpoint;
    let node_span =
        |name: &str| root.get(name).and_then(|v| v.get_ref().as_table()).and_then(|t| t.get("ip")).map(|v| v.span());
    // (address, who, key, span of an explicit `ip`)
    let mut nodes: Vec<(u32, String, String, Option<Span>)> = vec![
        (scn.ip_of(Endpoint::Ap), "the AP".to_string(), "ap.ip".to_string(), node_span("ap")),
        (scn.ip_of(Endpoint::Server), "the server".to_string(), "server.ip".to_string(), node_span("server")),
    ];
    for (i, st) in scn.stations.iter().enumerate() {
        let span = station_spans.get(i).and_then(|s| s.1.clone());
        nodes.push((
            scn.ip_of(Endpoint::Station(i)),
            format!("station {:?}", st.name),
            format!("station[{i}].ip"),
            span,
        ));
    }
    // The Bluetooth clients are nodes of the network too (the AP routes to them over BNEP).
    let bt_ip_spans: Vec<Option<Span>> = match root.get("bluetooth").map(|v| v.get_ref()) {
        Some(DeValue::Array(items)) => {
            items.iter().map(|item| item.get_ref().as_table().and_then(|t| t.get("ip")).map(|v| v.span())).collect()
        }
        _ => Vec::new(),
    };
    for (i, bt) in scn.bluetooth.iter().enumerate() {
        nodes.push((
            scn.ip_of(Endpoint::Bt(i)),
            format!("Bluetooth client {:?}", bt.name),
            format!("bluetooth[{i}].ip"),
            bt_ip_spans.get(i).cloned().flatten(),
        ));
    }
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for (i, (ip, who, key, span)) in nodes.iter().enumerate() {
        if let Some(&first) = seen.get(ip) {
            let (_, other, _, other_span) = &nodes[first];
            // Report at the explicit address; if only the earlier one was given, there.
            let (at, key) = match (span, other_span) {
                (Some(s), _) => (s.clone(), key.clone()),
                (None, Some(s)) => (s.clone(), nodes[first].2.clone()),
                (None, None) => (0..0, key.clone()),
            };
            let default = if span.is_none() { " (its default address)" } else { "" };
            rd.error(
                &at,
                &key,
                format!(
                    "{} is also the address of {other}; {who}{default} needs an address of its own",
                    format_ipv4(*ip)
                ),
            );
        } else {
            seen.insert(*ip, i);
        }
    }
}
