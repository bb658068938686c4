//! Packets from outside the simulation: the hooks of the live emulation (docs/emulation.md).
//!
//! A real host's packets (read from a TUN device by `python/airsched/emulate.py`) travel through
//! the simulated network as packets of *external* flows (`Protocol::External`): flows with no
//! source, added to a scenario before it is built ([`Simulation::with_external_flows`]), each
//! given the 5-tuple of the real packets it carries when the emulation first sees one
//! ([`Simulation::bind_external`]). A packet enters at its flow's first hop at the current
//! simulated time ([`Simulation::inject`], which the caller has advanced to the packet's arrival
//! time), carrying an opaque tag (the emulation keeps the bytes), and goes through the qdiscs,
//! the MAC, the air and the wire as any simulated packet does. When it reaches its destination
//! node it is counted as any flow's packet and its tag and arrival time are filed
//! ([`Simulation::take_delivered`]) for the emulation to write out at that time.
//!
//! Nothing here runs in a scenario without external flows: the only cost on the normal path is
//! one arm of the receiving side's match on the protocol.

use crate::packet::{FlowKey, Packet};
use crate::scenario::Scenario;
use crate::tcp::CcKind;
use crate::time::Nanos;
use crate::traffic::flow::{Endpoint, FlowConfig, FlowRate, Protocol};

use super::{xmit, SimError, Simulation};

/// One external flow to add to a scenario: its name (until bound) and its two ends.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalFlow {
    pub name: String,
    pub src: Endpoint,
    pub dst: Endpoint,
}

impl ExternalFlow {
    fn config(&self) -> FlowConfig {
        FlowConfig {
            name: self.name.clone(),
            protocol: Protocol::External,
            src: self.src,
            dst: self.dst,
            rate: FlowRate::Reactive,
            size: 0,
            start: Nanos::ZERO,
            stop: None,
            jitter: Nanos::ZERO,
            sport: Some(0),
            dport: 0,
            tos: 0,
            mark: 0,
            priority: None,
            cc: CcKind::Cubic,
            bytes: None,
            sack: false,
            tcp: Default::default(),
            reply_delay: Nanos::ZERO,
        }
    }
}

/// Why an external packet or flow was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ExternalError {
    #[error("flow {0} is not an external flow")]
    NotExternal(u32),
    #[error("packet of {ip_len} bytes: an external packet is 20 to 65535 bytes and its payload at most its length")]
    BadLength { ip_len: u32 },
}

impl Simulation {
    /// Build `scn` with `external` flows appended after its own (and their reply flows): the
    /// first external flow's index is the number of flows `Simulation::new(scn)` would have.
    /// Their endpoints must be in the scenario (the caller's check).
    pub fn with_external_flows(scn: &Scenario, external: &[ExternalFlow]) -> Result<Simulation, SimError> {
        let mut scn = scn.clone();
        scn.flows.extend(external.iter().map(ExternalFlow::config));
        Simulation::new(&scn)
    }

    /// Index of the first external flow (flows are in order: the scenario's, their reply
    /// flows, the external ones), or None without external flows.
    pub fn first_external_flow(&self) -> Option<u32> {
        self.traffic.cfg.iter().position(|f| f.protocol == Protocol::External).map(|i| i as u32)
    }

    fn check_external(&self, flow: u32) -> Result<(), ExternalError> {
        match self.traffic.cfg.get(flow as usize) {
            Some(f) if f.protocol == Protocol::External => Ok(()),
            _ => Err(ExternalError::NotExternal(flow)),
        }
    }

    /// Give external flow `flow` the header fields of the real packets it carries (the
    /// classifiers and flow hashes read them from then on) and its name in the result tables.
    /// The 802.11n TID stays the one the cell was built with (best effort).
    pub fn bind_external(&mut self, flow: u32, key: FlowKey, name: &str) -> Result<(), ExternalError> {
        self.check_external(flow)?;
        self.cx.keys[flow as usize] = key;
        self.scn.flows[flow as usize].name = name.to_string();
        self.traffic.cfg[flow as usize].name = name.to_string();
        Ok(())
    }

    /// An external packet of `ip_len` bytes (`payload` of them counted as goodput) enters at
    /// its flow's first hop now, as a packet its node's stack sends: the qdisc's enqueue, then
    /// the device runs. `tag` comes back with it from [`Self::take_delivered`]. Returns whether
    /// the first hop's qdisc took it (a refused packet is counted as a queue drop).
    pub fn inject(&mut self, flow: u32, ip_len: u32, payload: u32, tag: u64) -> Result<bool, ExternalError> {
        self.check_external(flow)?;
        if !(20..=65535).contains(&ip_len) || payload > ip_len {
            return Err(ExternalError::BadLength { ip_len });
        }
        let now = self.cx.now;
        let id = self.cx.pkts.alloc(Packet { seq: tag, ..Packet::new(flow, ip_len, payload, now) });
        self.cx.counters.flows[flow as usize].sent_packets += 1;
        let hop = self.cx.flows[flow as usize].first_hop;
        let ok = xmit(&mut self.net, &mut self.wifi, &mut self.bt, &mut self.cx, hop, id);
        self.drain();
        Ok(ok)
    }

    /// Append the external packets delivered since the last call to `out`: (tag, arrival
    /// time), in arrival order.
    pub fn take_delivered(&mut self, out: &mut Vec<(u64, Nanos)>) {
        out.append(&mut self.traffic.external_out);
    }

    /// The time of the next event, if any is left before the end of the run.
    pub fn next_event_time(&self) -> Option<Nanos> {
        self.cx.out.queue().peek_time().filter(|&t| t <= self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_scenario;

    const CELL: &str = r#"
[run]
duration = "2s"
warmup = "0s"
seed = 1

[cell]
standard = "802.11b"

[[station]]
name = "fast"
rate = "11Mbps"
"#;

    fn sim(text: &str, n: usize) -> Simulation {
        let scn = parse_scenario(text, "t.toml").expect("scenario");
        let ext: Vec<ExternalFlow> = (0..n)
            .map(|i| ExternalFlow { name: format!("x{i}"), src: Endpoint::Station(0), dst: Endpoint::Server })
            .collect();
        Simulation::with_external_flows(&scn, &ext).expect("build")
    }

    /// An external packet takes the path a simulated one takes: injected at a station, it
    /// reaches the server at the same time as a simulated UDP datagram of the same length sent
    /// at the same instant in the same cell.
    #[test]
    fn an_injected_packet_comes_out_at_its_simulated_arrival_time() {
        let mut s = sim(CELL, 2);
        let f = s.first_external_flow().expect("external flows");
        let key = FlowKey {
            src_ip: 0xc0a8_0102,
            dst_ip: 0x0a00_0001,
            sport: 1,
            dport: 2,
            proto: 6,
            tos: 0,
            mark: 0,
            priority: 0,
        };
        s.bind_external(f, key, "tcp 192.168.1.2:1 > 10.0.0.1:2").unwrap();
        s.advance(Nanos::from_ms(10));
        assert!(s.inject(f, 1500, 1448, 77).unwrap());
        let mut out = Vec::new();
        s.take_delivered(&mut out);
        assert!(out.is_empty(), "nothing arrives at the instant it is sent");
        s.advance(Nanos::from_ms(20));
        s.take_delivered(&mut out);
        assert_eq!(out.len(), 1);
        let (tag, at) = out[0];
        assert_eq!(tag, 77);
        // Same packet as a simulated UDP flow of 1472 payload bytes (1500-byte datagram): the
        // arrival times must be the same, since the external packet took the same path.
        let udp = format!(
            "{CELL}\n[[flow]]\nname = \"u\"\nsrc = \"fast\"\ndst = \"server\"\nprotocol = \"udp\"\nrate = \"8kbit\"\nsize = 1472\nstart = \"10ms\"\n"
        );
        let mut r = Simulation::new(&parse_scenario(&udp, "u.toml").unwrap()).unwrap();
        r.advance(Nanos::from_ms(20));
        let c = &r.cx.counters.flows[0];
        assert_eq!(c.received_packets, 1);
        let udp_delay = (c.delay_sum_ns) as u64;
        assert_eq!(at.0 - Nanos::from_ms(10).0, udp_delay, "external delay equals the UDP packet's");
        // The 802.11b 11 Mb/s exchange alone is over 1.3 ms: the delay is not zero.
        assert!(udp_delay > 1_300_000, "{udp_delay}");
        let res = s.finish().unwrap();
        let row = res.flows.iter().find(|r| r.name.starts_with("tcp ")).expect("bound flow reported by its 5-tuple");
        assert_eq!(row.received_packets, 1);
    }

    #[test]
    fn packets_keep_their_order_and_tags_and_conservation_holds() {
        let mut s = sim(CELL, 1);
        let f = s.first_external_flow().unwrap();
        s.advance(Nanos::from_ms(1));
        for tag in 0..20 {
            s.inject(f, 1000, 972, tag).unwrap();
        }
        let mut out = Vec::new();
        s.advance(Nanos::from_ms(200));
        s.take_delivered(&mut out);
        let tags: Vec<u64> = out.iter().map(|x| x.0).collect();
        // The station's pfifo_fast holds 1000 packets: all 20 arrive, in order, spaced by at
        // least one 802.11b exchange each.
        assert_eq!(tags, (0..20).collect::<Vec<_>>());
        assert!(out.windows(2).all(|w| w[1].1 > w[0].1 + Nanos::from_us(700)));
        assert!(s.finish().is_ok(), "packet conservation holds for external flows");
    }

    #[test]
    fn bad_flows_and_lengths_are_refused() {
        let text = format!(
            "{CELL}\n[[flow]]\nname = \"u\"\nsrc = \"fast\"\ndst = \"server\"\nprotocol = \"udp\"\nrate = \"8kbit\"\n"
        );
        let mut s = sim(&text, 1);
        assert_eq!(s.first_external_flow(), Some(1));
        assert_eq!(s.inject(0, 100, 72, 0), Err(ExternalError::NotExternal(0)));
        assert_eq!(s.inject(1, 10, 0, 0), Err(ExternalError::BadLength { ip_len: 10 }));
        assert_eq!(s.inject(1, 100, 200, 0), Err(ExternalError::BadLength { ip_len: 100 }));
        assert!(Simulation::new(&parse_scenario(&text, "t.toml").unwrap()).unwrap().first_external_flow().is_none());
    }
}
