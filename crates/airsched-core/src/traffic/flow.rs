//! A flow's description: its endpoints, protocol, rate, size, timing and header fields, and a
//! TCP flow's per-flow settings (docs/traffic.md). The traffic sources run it; the scenario
//! language reads it from `[[flow]]`.

use crate::tcp::{CcKind, KernelEra};
use crate::time::Nanos;

/// Where a flow starts or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Server,
    Ap,
    /// Index into `Scenario::stations`.
    Station(usize),
    /// Index into `Scenario::bluetooth`.
    Bt(usize),
}

/// A flow's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Udp,
    /// ICMP echo requests at a fixed interval; the destination answers each.
    Ping,
    /// The echo replies of a ping flow (added by the simulator, one per ping flow).
    PingReply,
    /// A TCP bulk transfer (data segments from src to dst).
    Tcp,
    /// The ACKs of a TCP flow (added by the simulator, one per TCP flow).
    TcpAck,
    /// Packets from outside the simulation: a real host's, read from a TUN device by the live
    /// emulation (`sim/external.rs`, docs/emulation.md). No source runs it; each packet is
    /// injected at its node and, on arrival, handed back out instead of to an application.
    External,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Udp => "udp",
            Protocol::Ping => "ping",
            Protocol::PingReply => "ping-reply",
            Protocol::Tcp => "tcp",
            Protocol::TcpAck => "tcp-ack",
            Protocol::External => "external",
        }
    }
}

/// How a flow's source sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRate {
    /// Constant bit rate counted in UDP payload bits per second, as `iperf -u -b` counts it.
    Cbr { bits_per_second: u64 },
    /// Always backlogged: the source keeps its first-hop queue non-empty.
    Saturate,
    /// One packet every `interval` (ping).
    Periodic { interval: Nanos },
    /// Packets only in answer to another flow's (ping replies, TCP ACKs).
    Reactive,
    /// As fast as a TCP sender's congestion and receive windows allow.
    Window,
}

/// One flow (`[[flow]]`, or a reply flow the simulator adds).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    pub name: String,
    pub protocol: Protocol,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub rate: FlowRate,
    /// UDP payload bytes per packet (ping: ICMP payload bytes, 28 bytes of IP and ICMP header
    /// on top as for UDP).
    pub size: u32,
    pub start: Nanos,
    /// `None`: runs to the end.
    pub stop: Option<Nanos>,
    /// UDP source port (None: 40000 + the flow's index).
    pub sport: Option<u16>,
    /// UDP destination port (iperf 2's 5001 by default).
    pub dport: u16,
    /// IPv4 TOS byte (`tos`, or `dscp << 2`).
    pub tos: u8,
    /// Netfilter mark (`skb->mark`), matched by the fw classifier.
    pub mark: u32,
    /// Socket priority (`skb->priority`); None: derived from the TOS as the IP stack does.
    pub priority: Option<u32>,
    /// CBR only: each packet leaves up to this much after its nominal time (uniform), as an
    /// application's timer jitter does; zero by default (exact CBR).
    pub jitter: Nanos,
    /// TCP: the congestion control and the transfer size (None: until `stop` or the end).
    pub cc: CcKind,
    pub bytes: Option<u64>,
    /// TCP: selective acknowledgements (RFC 2018, on by default as in Linux).
    pub sack: bool,
    /// TCP: per-flow settings over the kernel era's (docs/model-tcp.md).
    pub tcp: TcpFlowOptions,
    /// Ping: the responder's turnaround, from the request's arrival at the destination to its
    /// reply's send (`reply_delay`); zero by default (a host that answers at once).
    pub reply_delay: Nanos,
}

/// A TCP flow's settings that override its hosts' kernel era, and the file options.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpFlowOptions {
    /// `kernel`: both ends' era (None: each end's node's).
    pub kernel: Option<KernelEra>,
    /// `cc` was given (otherwise the era's default congestion control).
    pub cc_given: bool,
    /// `initial_cwnd`, segments.
    pub initial_cwnd: Option<u32>,
    /// `rmem`, `wmem`: `tcp_rmem` / `tcp_wmem` (min, default, max), bytes.
    pub rmem: Option<[u64; 3]>,
    pub wmem: Option<[u64; 3]>,
    /// `adv_win_scale`.
    pub adv_win_scale: Option<u8>,
    /// `autotune`: `tcp_moderate_rcvbuf`.
    pub autotune: Option<bool>,
    /// `tsq`: `tcp_limit_output_bytes` (Some(0): TCP Small Queues off).
    pub tsq: Option<u64>,
    /// `repeat`: once the file (`bytes`) is acknowledged, the application writes it again.
    pub repeat: bool,
    /// `rack`, `tlp`, `frto`: each on (the era's version, 6.1's if the era has none) or off.
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub frto: Option<bool>,
}

/// Bytes a UDP packet of `payload` bytes occupies as an IP datagram (IPv4 20 + UDP 8).
pub const UDP_IP_OVERHEAD: u32 = 28;
/// Largest UDP payload that fits a 2304-byte MSDU (802.11 max MSDU) with IPv4 and UDP headers.
pub const MAX_UDP_PAYLOAD: u32 = 2304 - UDP_IP_OVERHEAD;
