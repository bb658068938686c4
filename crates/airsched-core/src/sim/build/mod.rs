//! Building the world of a scenario, as ns-3's helpers do: the models take their own
//! parameters (`new(params, ..)`) and know nothing of the scenario; the functions here read the
//! scenario and build each one (`net.rs`: the network with its named devices and tc trees;
//! `traffic.rs`: the flows' applications; `bluetooth.rs`: the piconet and its coupling with the
//! cell; the cell's medium and MAC), then this file wires them together and schedules the
//! first events.

pub(crate) mod bluetooth;
pub(crate) mod net;
pub(crate) mod traffic;
pub(crate) mod wifi;

use crate::ctx::Ctx;
use crate::engine::{Event, EventQueue};
use crate::metrics::recorder::Recorder;
use crate::metrics::Counters;
use crate::net::Node;
use crate::scenario::Scenario;
use crate::time::Nanos;
use crate::traffic::flow::FlowRate;

use super::{SimError, Simulation};

impl Simulation {
    /// Build the world of a scenario. Fails only if a tc script does not build (a scenario from
    /// `parse_scenario` has had its scripts checked already).
    pub fn new(scn: &Scenario) -> Result<Simulation, SimError> {
        let (expanded, reply_of) = scn.with_reply_flows();
        let scn = &expanded;
        let n = scn.stations.len();

        let mut net = net::net(scn).map_err(|e| SimError::Tc(e.join("\n")))?;
        let (traffic, books) = traffic::traffic(scn, &net.topo, reply_of);
        for ((dev, flows), tsq) in net.devs.iter_mut().zip(&traffic.saturating_at).zip(&traffic.tsq_at) {
            dev.sourced = !flows.is_empty() || !tsq.is_empty();
        }
        let flow_dst: Vec<Node> = traffic.flows.iter().map(|f| f.dst).collect();
        let keys: Vec<_> = (0..scn.flows.len()).map(|i| scn.flow_key(i)).collect();
        let wifi = wifi::wifi(scn, &net.topo, &flow_dst, &keys);

        let end = scn.run.duration;
        let mut queue = EventQueue::with_capacity(1024 + 4 * scn.flows.len());
        for (fi, f) in scn.flows.iter().enumerate() {
            if f.start <= end && f.rate != FlowRate::Reactive {
                queue.schedule(f.start, Event::FlowStart { flow: fi as u32 });
            }
        }
        if scn.cell.beacons {
            queue.schedule(Nanos::ZERO, Event::Beacon);
        }
        if let Some(t) = wifi.ht().and_then(|h| h.ul_first_request()) {
            // Uplink OFDMA: the AP's first request for the medium (`mu_access_interval`).
            queue.schedule(t, Event::Cfp);
        }
        queue.schedule(scn.run.warmup, Event::WarmupEnd);
        let first_sample = scn.run.warmup + scn.run.sample_interval;
        if first_sample <= end {
            queue.schedule(first_sample, Event::Sample);
        }
        let n_samples = ((end.0 - scn.run.warmup.0) / scn.run.sample_interval.0) as usize;
        let mut counters = Counters::new(scn.flows.len(), n);
        if scn.cell.pcf.is_some() {
            counters.pcf.stations = vec![Default::default(); n];
        }
        if wifi.ht().is_some_and(|h| h.mu.is_some()) {
            counters.ofdma.stations = vec![Default::default(); n];
        }
        let mut cx = Ctx::new(keys, books, counters, queue);
        let mut bt = None;
        if !scn.bluetooth.is_empty() {
            let (piconet, coex) = bluetooth::piconet(scn, &net.topo);
            bt = Some(Box::new(piconet));
            cx.coex = Some(Box::new(coex));
            // The piconet's clock starts with the run: the master's first transmit slot.
            cx.schedule(Nanos::ZERO, Event::BtMasterTx);
        }
        for st in 0..n {
            wifi.medium.radio().refresh_chan(st, &mut cx.chan);
        }
        Ok(Simulation {
            scn: scn.clone(),
            end,
            cx,
            net,
            wifi,
            bt,
            traffic,
            // Reserve at most 64 Ki rows up front; a long run grows the table as it goes.
            rec: Recorder::new(scn.flows.len(), n_samples.saturating_mul(n + scn.flows.len()).min(1 << 16)),
            wall: std::time::Duration::ZERO,
            finished: false,
            queue_trace: None,
            iface_counters: false,
            mac_stats: false,
        })
    }
}
