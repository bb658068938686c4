//! What a run records besides the cumulative counters: the warm-up snapshot, per-flow maximum
//! delays, the goodput samples, the answered pings, and the calibration procedure's block
//! meter.

use super::{Counters, Sample};
use crate::time::Nanos;

/// One answered ping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PingSample {
    /// The ping (request) flow.
    pub flow: u32,
    pub seq: u64,
    /// When the reply arrived.
    pub time: Nanos,
    pub rtt: Nanos,
}

/// The paper's calibration measurement (Garroppo et al. 4.2): goodput n L / tau over
/// consecutive blocks of n received packets of one flow, after the warm-up.
pub struct BlockMeter {
    pub flow: u32,
    pub n: u32,
    count: u32,
    bytes: u64,
    start: Option<Nanos>,
    pub goodputs: Vec<f64>,
}

impl BlockMeter {
    pub fn new(flow: u32, n: u32) -> BlockMeter {
        BlockMeter { flow, n: n.max(1), count: 0, bytes: 0, start: None, goodputs: Vec::new() }
    }

    pub fn on_receive(&mut self, now: Nanos, payload: u32) {
        let Some(start) = self.start else {
            // The first packet opens the first block: tau is measured from its arrival.
            self.start = Some(now);
            return;
        };
        self.count += 1;
        self.bytes += payload as u64;
        if self.count == self.n {
            self.goodputs.push(self.bytes as f64 * 8.0 / (now - start).as_secs_f64());
            self.count = 0;
            self.bytes = 0;
            self.start = Some(now);
        }
    }
}

/// What one interface sent out in one sample interval (the paper's xnetload): bytes, packets
/// and drops of its root qdisc in the interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IfaceSample {
    /// End of the interval.
    pub time: Nanos,
    /// The device's index in the device table.
    pub dev: u32,
    pub bytes: u64,
    pub packets: u64,
    pub drops: u64,
}

pub struct Recorder {
    /// The counters at the end of the warm-up (None while warming up).
    pub at_warmup: Option<Counters>,
    pub delay_max_ns: Vec<u64>,
    pub samples: Vec<Sample>,
    pub last_sample_bytes: Vec<u64>,
    /// Interface counters: each device's (sent bytes, sent packets, drops) at the last sample
    /// (or the warm-up's end), and what each interval added.
    pub iface_last: Vec<[u64; 3]>,
    pub iface_samples: Vec<IfaceSample>,
    /// Round-trip times of the answered pings, in the measured window.
    pub pings: Vec<PingSample>,
    pub meter: Option<BlockMeter>,
}

impl Recorder {
    pub fn new(flows: usize, sample_capacity: usize) -> Recorder {
        Recorder {
            at_warmup: None,
            delay_max_ns: vec![0; flows],
            samples: Vec::with_capacity(sample_capacity),
            last_sample_bytes: vec![0; flows],
            iface_last: Vec::new(),
            iface_samples: Vec::new(),
            pings: Vec::new(),
            meter: None,
        }
    }

    /// The warm-up is over: what happens from now on is measured.
    #[inline]
    pub fn measuring(&self) -> bool {
        self.at_warmup.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_meter_measures_n_packets_from_the_packet_that_closed_the_last_block() {
        let mut m = BlockMeter::new(0, 2);
        m.on_receive(Nanos::from_ms(0), 1000); // opens the first block
        m.on_receive(Nanos::from_ms(1), 1000);
        m.on_receive(Nanos::from_ms(2), 1000); // 2 packets, 16 000 bits in 2 ms
        m.on_receive(Nanos::from_ms(6), 500);
        m.on_receive(Nanos::from_ms(10), 500); // 8 000 bits in 8 ms
        assert_eq!(m.goodputs, vec![8e6, 1e6]);
    }
}
