//! Queue length and queueing delay over time (`airsched run --queues`): an observer the sample
//! event hands every interface's root qdisc and the flows' counters to, when asked for. Each
//! sample reads the qdisc's statistics (the `tc -s` backlog and qlen) and, per flow, the mean
//! queueing and one-way delay of the packets received during the interval; nothing is changed,
//! so a run with the trace has the results of one without. Off (None), it costs one branch per
//! sample interval.

use crate::time::Nanos;

use super::FlowCounters;

/// One interface's queue at one sample time.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSample {
    pub time: Nanos,
    /// Index into the interface list (`Simulation::interface_names`), or the AP's MAC queues
    /// (802.11n driver frames), [`QueueTrace::MAC`].
    pub iface: u32,
    pub qlen: u64,
    pub backlog_bytes: u64,
}

/// One flow's delays over one sample interval (NaN: no packet received in it).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowDelaySample {
    pub time: Nanos,
    pub flow: u32,
    pub received: u64,
    pub queue_delay_ms: f64,
    pub delay_ms: f64,
}

#[derive(Clone, Debug, Default)]
pub struct QueueTrace {
    pub queues: Vec<QueueSample>,
    pub delays: Vec<FlowDelaySample>,
    last: Vec<FlowCounters>,
}

impl QueueTrace {
    /// The `iface` of the AP's MAC queue rows.
    pub const MAC: u32 = u32::MAX;

    pub fn new(flows: &[FlowCounters]) -> QueueTrace {
        QueueTrace { queues: Vec::new(), delays: Vec::new(), last: flows.to_vec() }
    }

    /// Take one sample: `queues` yields (interface, qlen, backlog bytes).
    pub fn sample(&mut self, now: Nanos, queues: impl Iterator<Item = (u32, u64, u64)>, flows: &[FlowCounters]) {
        for (iface, qlen, backlog_bytes) in queues {
            self.queues.push(QueueSample { time: now, iface, qlen, backlog_bytes });
        }
        for (f, (c, last)) in flows.iter().zip(self.last.iter_mut()).enumerate() {
            let received = c.received_packets - last.received_packets;
            let mean = |sum: u128, prev: u128| {
                if received == 0 {
                    f64::NAN
                } else {
                    (sum - prev) as f64 / received as f64 / 1e6
                }
            };
            self.delays.push(FlowDelaySample {
                time: now,
                flow: f as u32,
                received,
                queue_delay_ms: mean(c.queue_delay_sum_ns, last.queue_delay_sum_ns),
                delay_ms: mean(c.delay_sum_ns, last.delay_sum_ns),
            });
            *last = *c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_are_per_interval_means_of_received_packets() {
        let mut c = vec![FlowCounters::default()];
        let mut t = QueueTrace::new(&c);
        c[0].received_packets = 4;
        c[0].queue_delay_sum_ns = 8_000_000;
        c[0].delay_sum_ns = 20_000_000;
        t.sample(Nanos(1), [(0, 3, 4500)].into_iter(), &c);
        t.sample(Nanos(2), std::iter::empty(), &c);
        assert_eq!(t.queues, vec![QueueSample { time: Nanos(1), iface: 0, qlen: 3, backlog_bytes: 4500 }]);
        assert_eq!((t.delays[0].received, t.delays[0].queue_delay_ms, t.delays[0].delay_ms), (4, 2.0, 5.0));
        assert!(t.delays[1].queue_delay_ms.is_nan() && t.delays[1].received == 0);
    }
}
