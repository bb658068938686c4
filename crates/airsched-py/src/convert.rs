//! Results to Python: a dict of tables, each a dict of equal-length column lists.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use airsched_core::metrics::SampleKind;
use airsched_core::qdisc::{QdiscReport, QdiscStats};
use airsched_core::{RunResults, Scenario};

/// Build `{name: [values...]}` from rows with one closure per column.
macro_rules! columns {
    ($py:expr, $rows:expr, { $($col:literal => |$r:ident| $e:expr),* $(,)? }) => {{
        let d = PyDict::new($py);
        $(
            let v: Vec<_> = $rows.iter().map(|$r| $e).collect();
            d.set_item($col, v)?;
        )*
        d
    }};
}

pub fn results_to_py<'py>(py: Python<'py>, r: &RunResults, scn: &Scenario) -> PyResult<Bound<'py, PyAny>> {
    let out = PyDict::new(py);
    let s = &r.summary;
    let summary = PyDict::new(py);
    summary.set_item("sim_seconds", s.sim_seconds)?;
    summary.set_item("measured_seconds", s.measured_seconds)?;
    summary.set_item("wall_seconds", s.wall_seconds)?;
    summary.set_item("events", s.events)?;
    summary.set_item("seed", s.seed)?;
    summary.set_item("total_goodput_mbps", s.total_goodput_mbps)?;
    summary.set_item("frames", s.frames)?;
    summary.set_item("medium_busy_share", s.medium_busy_share)?;
    summary.set_item("sample_interval_s", r.sample_interval.as_secs_f64())?;
    let c = &s.conservation;
    let cons = PyDict::new(py);
    cons.set_item("offered", c.offered)?;
    cons.set_item("delivered", c.delivered)?;
    cons.set_item("dropped_queue", c.dropped_queue)?;
    cons.set_item("dropped_retry", c.dropped_retry)?;
    cons.set_item("in_flight", c.in_flight)?;
    summary.set_item("conservation", cons)?;
    out.set_item("summary", summary)?;

    out.set_item("stations", columns!(py, r.stations, {
        "name" => |x| x.name.clone(),
        "rate_mbps" => |x| x.rate_mbps,
        "goodput_mbps" => |x| x.goodput_mbps,
        "goodput_std_mbps" => |x| x.goodput_std_mbps,
        "goodput_up_mbps" => |x| x.goodput_up_mbps,
        "goodput_down_mbps" => |x| x.goodput_down_mbps,
        "airtime_s" => |x| x.airtime_s,
        "airtime_share" => |x| x.airtime_share,
        "tx_frames" => |x| x.tx_frames,
        "tx_attempts" => |x| x.tx_attempts,
        "retries" => |x| x.retries,
        "collisions" => |x| x.collisions,
        "drops" => |x| x.drops,
        "drops_queue" => |x| x.drops_queue,
        "drops_retry" => |x| x.drops_retry,
        "queue_delay_mean_ms" => |x| x.queue_delay_mean_ms,
        "rate_control" => |x| x.rate_control.clone(),
        "mean_rate_down_mbps" => |x| x.mean_rate_down_mbps,
        "mean_rate_up_mbps" => |x| x.mean_rate_up_mbps,
        "data_errors" => |x| x.data_errors,
        "ack_errors" => |x| x.ack_errors,
        "occupancy" => |x| x.occupancy,
        "snr_mean_db" => |x| x.snr_mean_db,
        "estimate_mean_mbps" => |x| x.estimate_mean_mbps,
        "rel_goodput_end" => |x| x.rel_goodput_end,
        "airtime_down_s" => |x| x.airtime_down_s,
        "airtime_up_s" => |x| x.airtime_up_s,
        "airtime_down_share" => |x| x.airtime_down_share,
        "ampdu_mean_down" => |x| x.ampdu_mean_down,
        "ampdu_mean_up" => |x| x.ampdu_mean_up,
    }))?;
    out.set_item("aggregates", columns!(py, r.aggregates, {
        "station" => |x| x.station.clone(),
        "direction" => |x| x.direction,
        "mpdus" => |x| x.mpdus,
        "count" => |x| x.count,
        "share" => |x| x.share,
    }))?;
    out.set_item("rates", columns!(py, r.rates, {
        "station" => |x| x.station.clone(),
        "direction" => |x| x.direction,
        "rate_mbps" => |x| x.rate_mbps,
        "mcs" => |x| x.mcs,
        "attempts" => |x| x.attempts,
        "acked" => |x| x.acked,
        "share" => |x| x.share,
    }))?;
    out.set_item("flows", columns!(py, r.flows, {
        "name" => |x| x.name.clone(),
        "src" => |x| x.src.clone(),
        "dst" => |x| x.dst.clone(),
        "protocol" => |x| x.protocol.clone(),
        "goodput_mbps" => |x| x.goodput_mbps,
        "goodput_std_mbps" => |x| x.goodput_std_mbps,
        "sent_packets" => |x| x.sent_packets,
        "received_packets" => |x| x.received_packets,
        "lost_packets" => |x| x.lost_packets,
        "drops_queue" => |x| x.drops_queue,
        "drops_retry" => |x| x.drops_retry,
        "in_flight" => |x| x.in_flight,
        "delay_mean_ms" => |x| x.delay_mean_ms,
        "delay_max_ms" => |x| x.delay_max_ms,
        "queue_delay_mean_ms" => |x| x.queue_delay_mean_ms,
        "rtt_mean_ms" => |x| x.rtt_mean_ms,
        "rtt_p50_ms" => |x| x.rtt_p50_ms,
        "rtt_p90_ms" => |x| x.rtt_p90_ms,
        "rtt_p99_ms" => |x| x.rtt_p99_ms,
        "rtt_max_ms" => |x| x.rtt_max_ms,
        "rtt_samples" => |x| x.rtt_samples,
        "tcp_retransmits" => |x| x.tcp_retransmits,
        "tcp_fast_recoveries" => |x| x.tcp_fast_recoveries,
        "tcp_rtos" => |x| x.tcp_rtos,
        "tcp_cwnd_end" => |x| x.tcp_cwnd_end,
        "tcp_srtt_ms" => |x| x.tcp_srtt_ms,
    }))?;
    out.set_item("pings", columns!(py, r.pings, {
        "flow" => |x| x.flow.clone(),
        "seq" => |x| x.seq,
        "time_s" => |x| x.time_s,
        "rtt_ms" => |x| x.rtt_ms,
    }))?;
    out.set_item("nodes", columns!(py, r.nodes, {
        "name" => |x| x.name.clone(),
        "airtime_s" => |x| x.airtime_s,
        "airtime_share" => |x| x.airtime_share,
        "tx_attempts" => |x| x.tx_attempts,
        "beacons" => |x| x.beacons,
    }))?;
    let name_of = |k: SampleKind, i: u32| match k {
        SampleKind::Station => scn.stations[i as usize].name.clone(),
        SampleKind::Flow => scn.flows[i as usize].name.clone(),
    };
    out.set_item("samples", columns!(py, r.samples, {
        "time_s" => |x| x.time.as_secs_f64(),
        "kind" => |x| match x.kind { SampleKind::Station => "station", SampleKind::Flow => "flow" },
        "name" => |x| name_of(x.kind, x.index),
        "goodput_mbps" => |x| x.goodput_bps / 1e6,
        "snr_db" => |x| x.snr_db,
        "estimate_mbps" => |x| x.estimate_bps / 1e6,
        "cwnd_bytes" => |x| x.cwnd_bytes,
    }))?;
    out.set_item("warnings", r.warnings.clone())?;
    let tc = PyList::empty(py);
    for iface in &r.tc {
        let d = PyDict::new(py);
        d.set_item("node", &iface.node)?;
        d.set_item("dev", &iface.dev)?;
        let qs = PyList::empty(py);
        for q in &iface.qdiscs {
            qs.append(qdisc_to_py(py, q)?)?;
        }
        d.set_item("qdiscs", qs)?;
        d.set_item("qdisc_text", airsched_core::tc::qdisc_show(&iface.dev, &iface.qdiscs, true))?;
        d.set_item("class_text", airsched_core::tc::class_show(&iface.dev, &iface.qdiscs, true))?;
        tc.append(d)?;
    }
    out.set_item("tc", tc)?;
    Ok(out.into_any())
}

fn stats_to_py<'py>(py: Python<'py>, s: &QdiscStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("bytes", s.sent_bytes)?;
    d.set_item("packets", s.sent_packets)?;
    d.set_item("drops", s.drops)?;
    d.set_item("overlimits", s.overlimits)?;
    d.set_item("requeues", s.requeues)?;
    d.set_item("backlog", s.backlog_bytes)?;
    d.set_item("qlen", s.qlen)?;
    d.set_item("offered", s.offered_packets)?;
    Ok(d)
}

fn xstats_to_py<'py>(py: Python<'py>, x: &[(String, i64)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in x {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// One qdisc in the shape of `tc -s -j qdisc show` (plus its classes).
fn qdisc_to_py<'py>(py: Python<'py>, q: &QdiscReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", q.kind)?;
    d.set_item("handle", q.handle.to_string())?;
    d.set_item("parent", q.parent.to_string())?;
    d.set_item("options", &q.options)?;
    d.set_item("stats", stats_to_py(py, &q.stats)?)?;
    d.set_item("xstats", xstats_to_py(py, &q.xstats)?)?;
    let classes = PyList::empty(py);
    for c in &q.classes {
        let cd = PyDict::new(py);
        cd.set_item("kind", c.kind)?;
        cd.set_item("classid", c.classid.to_string())?;
        cd.set_item("parent", c.parent.to_string())?;
        cd.set_item("leaf", c.leaf.map(|h| h.to_string()))?;
        cd.set_item("options", &c.options)?;
        cd.set_item("stats", stats_to_py(py, &c.stats)?)?;
        cd.set_item("xstats", xstats_to_py(py, &c.xstats)?)?;
        classes.append(cd)?;
    }
    d.set_item("classes", classes)?;
    Ok(d)
}

/// What `validate` reports about a scenario the core accepted: station and flow names, the
/// duration, the cell, each station's link and (802.11n) the AP's MAC queueing.
pub fn scenario_to_py<'py>(py: Python<'py>, scn: &Scenario) -> PyResult<Bound<'py, PyDict>> {
    use airsched_core::phy::ht::{ChannelWidth, GuardInterval};
    use airsched_core::phy::ofdm::OfdmBand;
    use airsched_core::scenario::{AirtimeSched, FqKernel, MacQueue, Standard};

    let d = PyDict::new(py);
    d.set_item("stations", scn.stations.iter().map(|s| s.name.clone()).collect::<Vec<_>>())?;
    d.set_item("flows", scn.flows.iter().map(|f| f.name.clone()).collect::<Vec<_>>())?;
    d.set_item("duration_ns", scn.run.duration.as_ns())?;
    d.set_item("warmup_ns", scn.run.warmup.as_ns())?;
    d.set_item("warnings", scn.warnings.clone())?;

    let c = &scn.cell;
    let cell = PyDict::new(py);
    let standard = match c.standard {
        Standard::Dot11b => "802.11b",
        Standard::Dot11n => "802.11n",
    };
    d.set_item("standard", standard)?;
    cell.set_item("standard", standard)?;
    cell.set_item("retry_limit", c.retry_limit)?;
    cell.set_item("beacons", c.beacons)?;
    match &c.ht {
        None => {
            let preamble = match c.preamble {
                airsched_core::phy::dsss::Preamble::Long => "long",
                airsched_core::phy::dsss::Preamble::Short => "short",
            };
            cell.set_item("preamble", preamble)?;
            cell.set_item("basic_rates_mbps", c.basic_rates.iter().map(|r| r.mbps()).collect::<Vec<_>>())?;
            cell.set_item("cw_min", c.cw_min)?;
            cell.set_item("cw_max", c.cw_max)?;
        }
        Some(ht) => {
            let band = match ht.band {
                OfdmBand::Ghz5 => "5GHz",
                OfdmBand::Ghz24ShortSlot | OfdmBand::Ghz24LongSlot => "2.4GHz",
            };
            cell.set_item("band", band)?;
            cell.set_item("width_mhz", if ht.width == ChannelWidth::Mhz40 { 40 } else { 20 })?;
            cell.set_item("guard_interval", if ht.gi == GuardInterval::Short { "short" } else { "long" })?;
            cell.set_item("basic_rates_mbps", ht.basic_rates.iter().map(|r| f64::from(r.mbps())).collect::<Vec<_>>())?;
            cell.set_item("max_aggregate_time_ns", ht.max_aggregate_time.as_ns())?;
            cell.set_item("max_aggregate_mpdus", ht.max_aggregate_mpdus)?;
            cell.set_item("mpdu_retry_limit", ht.mpdu_retry_limit)?;
        }
    }
    d.set_item("cell", cell)?;

    let links = PyList::empty(py);
    for st in &scn.stations {
        let l = PyDict::new(py);
        l.set_item("name", &st.name)?;
        l.set_item("rate_control", st.rate_control.name())?;
        match (&st.ht, &c.ht) {
            (Some(sht), Some(cht)) => {
                l.set_item("mcs", sht.mcs.index())?;
                l.set_item("rate_mbps", sht.mcs.mbps(cht.width, cht.gi))?;
                l.set_item("airtime_weight", sht.airtime_weight)?;
            }
            _ => {
                l.set_item("mcs", py.None())?;
                l.set_item("rate_mbps", st.rate.mbps())?;
                l.set_item("airtime_weight", py.None())?;
            }
        }
        links.append(l)?;
    }
    d.set_item("station_links", links)?;

    if c.ht.is_some() {
        let m = &scn.ap_mac;
        let ap = PyDict::new(py);
        match m.queue {
            MacQueue::DriverFifo { limit } => {
                ap.set_item("mac_queue", "fifo")?;
                ap.set_item("driver_queue_limit", limit)?;
            }
            MacQueue::FqMac => {
                ap.set_item("mac_queue", "fq-mac")?;
                ap.set_item("driver_queue_limit", py.None())?;
            }
        }
        let airtime = match m.airtime {
            AirtimeSched::Off => "off",
            AirtimeSched::Ath9k => "ath9k",
            AirtimeSched::Mac80211 => "mac80211",
        };
        ap.set_item("airtime", airtime)?;
        ap.set_item("airtime_rx", m.airtime_rx)?;
        ap.set_item("aql", m.aql)?;
        ap.set_item("fq_kernel", if m.fq_kernel == FqKernel::Linux6_18 { "6.18" } else { "4.11" })?;
        // Where the AP's qdisc comes from: its tc script's key (`ap.queueing` for the fq_codel
        // preset), or None for the default.
        ap.set_item("tc", scn.ap.tc.as_ref().map(|t| t.key.clone()))?;
        d.set_item("ap_mac", ap)?;
    } else {
        d.set_item("ap_mac", py.None())?;
    }
    Ok(d)
}
