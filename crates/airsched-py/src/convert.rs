//! Results to Python: a dict of tables, each a dict of equal-length column lists, written by
//! walking the core's result schema (`airsched_core::schema`), never column by column.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use airsched_core::{
    schema, AggregateRow, BtLinkRow, Cell, CfpRow, CoexRow, ColumnType, Conservation, DemotionRow, FlowResult,
    InterfaceRow, MacStationRow, MacTxqRow, NodeResult, OfdmaRow, PingRow, PollRow, RateRow, SampleRow, StationResult,
    Summary, Table, SAMPLE_INTERVAL_COLUMN,
};
use airsched_core::{QdiscReport, QdiscStats};
use airsched_core::{RunResults, Scenario};

/// A cell as a Python object: str, float or int.
fn cell_to_py<'py>(py: Python<'py>, cell: Cell<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match cell {
        Cell::Str(s) => s.into_pyobject(py)?.into_any(),
        Cell::Float(x) => x.into_pyobject(py)?.into_any(),
        Cell::Int(i) => i.into_pyobject(py)?.into_any(),
        Cell::UInt(u) => u.into_pyobject(py)?.into_any(),
    })
}

/// `{column: [value per row]}` in schema order.
fn table_to_py<'py, T: Table>(py: Python<'py>, rows: &[T]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (i, col) in T::COLUMNS.iter().enumerate() {
        let values = PyList::empty(py);
        for row in rows {
            values.append(cell_to_py(py, row.cell(i))?)?;
        }
        d.set_item(col.name, values)?;
    }
    Ok(d)
}

/// `{column: typed column}` in schema order, for the tables that grow with the run (samples,
/// pings): a float column is `("f8", bytes)` (little-endian f64), an integer one `("i8", bytes)`
/// (little-endian i64, unsigned values saturating), a text one `("dict", bytes, [str])` (u32
/// codes into the list of distinct values). About 8 bytes a cell instead of a Python object of
/// 24 to 60 bytes plus its list slot; Python reads them with numpy.frombuffer, without a copy.
fn typed_table_to_py<'py, T: Table>(py: Python<'py>, rows: &[T]) -> PyResult<Bound<'py, PyDict>> {
    use pyo3::types::PyBytes;
    let d = PyDict::new(py);
    for (i, col) in T::COLUMNS.iter().enumerate() {
        let mut bytes: Vec<u8> = Vec::with_capacity(rows.len() * 8);
        let mut codes: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let mut names: Vec<String> = Vec::new();
        for row in rows {
            match row.cell(i) {
                Cell::Float(x) => bytes.extend_from_slice(&x.to_le_bytes()),
                Cell::Int(v) => bytes.extend_from_slice(&v.to_le_bytes()),
                Cell::UInt(u) => bytes.extend_from_slice(&i64::try_from(u).unwrap_or(i64::MAX).to_le_bytes()),
                Cell::Str(s) => {
                    let code = match codes.get(s) {
                        Some(&c) => c,
                        None => {
                            let c = names.len() as u32;
                            codes.insert(s.to_string(), c);
                            names.push(s.to_string());
                            c
                        }
                    };
                    bytes.extend_from_slice(&code.to_le_bytes());
                }
            }
        }
        // Tagged by the schema's type; the Python side checks the byte count against the rows.
        let column = match col.ty {
            ColumnType::Str => ("dict", PyBytes::new(py, &bytes), names).into_pyobject(py)?.into_any(),
            ColumnType::Float => ("f8", PyBytes::new(py, &bytes)).into_pyobject(py)?.into_any(),
            ColumnType::Int => ("i8", PyBytes::new(py, &bytes)).into_pyobject(py)?.into_any(),
        };
        d.set_item(col.name, column)?;
    }
    Ok(d)
}

/// `{column: value}` of a one-row table (the summary, the conservation counts).
fn record_to_py<'py, T: Table>(py: Python<'py>, row: &T) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (i, col) in T::COLUMNS.iter().enumerate() {
        d.set_item(col.name, cell_to_py(py, row.cell(i))?)?;
    }
    Ok(d)
}

/// The columns of every result table: {table: [(name, type, unit, doc), ...]}, type being
/// "str", "float" or "int"; "summary" and its nested "conservation" are included.
#[pyfunction(name = "schema")]
pub fn result_schema(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (table, columns) in schema() {
        let cols: Vec<_> = columns.iter().map(|c| (c.name, c.ty.name(), c.unit, c.doc())).collect();
        d.set_item(table, cols)?;
    }
    Ok(d)
}

/// The results of a run: the summary (with its nested conservation counts), every table as
/// column lists, the warnings and the tc trees. `scn` is the scenario the simulation ran.
pub fn results_to_py<'py>(py: Python<'py>, r: &RunResults, scn: &Scenario) -> PyResult<Bound<'py, PyAny>> {
    let out = PyDict::new(py);
    let summary = record_to_py(py, &r.summary)?;
    summary.set_item(SAMPLE_INTERVAL_COLUMN.name, r.sample_interval.as_secs_f64())?;
    summary.set_item(Conservation::NAME, record_to_py(py, &r.summary.conservation)?)?;
    out.set_item(Summary::NAME, summary)?;
    out.set_item(StationResult::NAME, table_to_py(py, &r.stations)?)?;
    out.set_item(AggregateRow::NAME, table_to_py(py, &r.aggregates)?)?;
    out.set_item(RateRow::NAME, table_to_py(py, &r.rates)?)?;
    out.set_item(FlowResult::NAME, table_to_py(py, &r.flows)?)?;
    out.set_item(PingRow::NAME, typed_table_to_py(py, &r.pings)?)?;
    out.set_item(NodeResult::NAME, table_to_py(py, &r.nodes)?)?;
    out.set_item(BtLinkRow::NAME, table_to_py(py, &r.bluetooth)?)?;
    out.set_item(CoexRow::NAME, table_to_py(py, &r.coexistence)?)?;
    out.set_item(CfpRow::NAME, table_to_py(py, &r.cfp)?)?;
    out.set_item(PollRow::NAME, table_to_py(py, &r.polls)?)?;
    out.set_item(OfdmaRow::NAME, table_to_py(py, &r.ofdma)?)?;
    out.set_item(MacStationRow::NAME, table_to_py(py, &r.mac_stations)?)?;
    out.set_item(MacTxqRow::NAME, table_to_py(py, &r.mac_txqs)?)?;
    out.set_item(DemotionRow::NAME, table_to_py(py, &r.demotions)?)?;
    let stations: Vec<&str> = scn.stations.iter().map(|s| s.name.as_str()).collect();
    let flows: Vec<&str> = scn.flows.iter().map(|f| f.name.as_str()).collect();
    let samples: Vec<SampleRow<'_>> = r.samples.iter().map(|s| SampleRow::new(s, &stations, &flows)).collect();
    out.set_item(SampleRow::NAME, typed_table_to_py(py, &samples)?)?;
    out.set_item(InterfaceRow::NAME, typed_table_to_py(py, &r.interfaces)?)?;
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
        d.set_item("qdisc_text", airsched_core::qdisc_show(&iface.dev, &iface.qdiscs, true))?;
        d.set_item("class_text", airsched_core::class_show(&iface.dev, &iface.qdiscs, true))?;
        // Only where there are policers (the JSON of every other run stays as it was).
        if !iface.policers.is_empty() {
            let ps = PyList::empty(py);
            for p in &iface.policers {
                let pd = PyDict::new(py);
                pd.set_item("parent", p.parent.to_string())?;
                pd.set_item("prio", p.prio)?;
                pd.set_item("kind", p.kind)?;
                pd.set_item("index", p.index)?;
                pd.set_item("police", &p.options)?;
                pd.set_item("bytes", p.stats.bytes)?;
                pd.set_item("packets", p.stats.packets)?;
                pd.set_item("drops", p.stats.drops)?;
                pd.set_item("overlimits", p.stats.overlimits)?;
                pd.set_item("text", p.show_text())?;
                ps.append(pd)?;
            }
            d.set_item("policers", ps)?;
        }
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
    use airsched_core::ChannelWidth;
    use airsched_core::MacQueue;
    use airsched_core::OfdmBand;

    let d = PyDict::new(py);
    d.set_item("stations", scn.stations.iter().map(|s| s.name.clone()).collect::<Vec<_>>())?;
    d.set_item("flows", scn.flows.iter().map(|f| f.name.clone()).collect::<Vec<_>>())?;
    d.set_item("duration_ns", scn.run.duration.as_ns())?;
    d.set_item("warmup_ns", scn.run.warmup.as_ns())?;
    d.set_item("warnings", scn.warnings.clone())?;

    let c = &scn.cell;
    let cell = PyDict::new(py);
    let standard = c.standard.name();
    d.set_item("standard", standard)?;
    cell.set_item("standard", standard)?;
    cell.set_item("retry_limit", c.retry_limit)?;
    cell.set_item("beacons", c.beacons)?;
    match &c.ht {
        None => {
            cell.set_item("preamble", c.preamble.name())?;
            cell.set_item("basic_rates_mbps", c.basic_rates.iter().map(|r| r.mbps()).collect::<Vec<_>>())?;
            cell.set_item("cw_min", c.cw_min)?;
            cell.set_item("cw_max", c.cw_max)?;
        }
        Some(ht) => {
            let band = match ht.band {
                OfdmBand::Ghz5 => "5GHz",
                OfdmBand::Ghz24ShortSlot | OfdmBand::Ghz24LongSlot => "2.4GHz",
            };
            match &ht.wide {
                None => {
                    cell.set_item("band", band)?;
                    cell.set_item("width_mhz", if ht.width == ChannelWidth::Mhz40 { 40 } else { 20 })?;
                    cell.set_item("guard_interval", ht.gi.name())?;
                }
                // 802.11ac/ax: the BSS width, the AP's streams, the HE GI and HE-LTF.
                Some(w) => {
                    cell.set_item("band", if w.six_ghz { "6GHz" } else { band })?;
                    cell.set_item("width_mhz", w.width.mhz())?;
                    cell.set_item("nss", w.nss)?;
                    if w.standard == airsched_core::Standard::Dot11ax {
                        cell.set_item("guard_interval", w.he_gi.name())?;
                        cell.set_item("ltf", w.ltf.name())?;
                        cell.set_item("packet_padding", w.padding.name())?;
                    } else {
                        cell.set_item("guard_interval", w.vht_gi.name())?;
                    }
                }
            }
            cell.set_item("basic_rates_mbps", ht.basic_rates.iter().map(|r| f64::from(r.mbps())).collect::<Vec<_>>())?;
            cell.set_item("max_aggregate_time_ns", ht.max_aggregate_time.as_ns())?;
            cell.set_item("max_aggregate_mpdus", ht.max_aggregate_mpdus)?;
            cell.set_item("mpdu_retry_limit", ht.mpdu_retry_limit)?;
            cell.set_item("txop_limits", ht.txop_limits.name())?;
            cell.set_item("backoff_countdown", ht.backoff_countdown.name())?;
            cell.set_item("collision_ifs", ht.collision_ifs.name())?;
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
                match sht.link {
                    Some(t) if !t.has_mcs() => {
                        // A non-HT (802.11a/g) station: its legacy rate only.
                        l.set_item("mcs", py.None())?;
                        l.set_item("rate_mbps", t.mbps())?;
                    }
                    Some(t) => {
                        l.set_item("mcs", t.mcs_index())?;
                        l.set_item("nss", t.nss())?;
                        l.set_item("rate_mbps", t.mbps())?;
                    }
                    None => {
                        l.set_item("mcs", sht.mcs.index())?;
                        l.set_item("rate_mbps", sht.mcs.mbps(cht.width, cht.gi))?;
                    }
                }
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
        ap.set_item("mac_queue", m.queue.name())?;
        match m.queue {
            MacQueue::DriverFifo { limit } => ap.set_item("driver_queue_limit", limit)?,
            MacQueue::FqMac => ap.set_item("driver_queue_limit", py.None())?,
        }
        ap.set_item("airtime", m.airtime.name())?;
        ap.set_item("airtime_rx", m.airtime_rx)?;
        ap.set_item("aql", m.aql)?;
        ap.set_item("fq_kernel", m.fq_kernel.name())?;
        // Where the AP's qdisc comes from: its tc script's key (`ap.queueing` for the fq_codel
        // preset), or None for the default.
        ap.set_item("tc", scn.ap.tc.as_ref().map(|t| t.key.clone()))?;
        d.set_item("ap_mac", ap)?;
    } else {
        d.set_item("ap_mac", py.None())?;
    }
    Ok(d)
}
