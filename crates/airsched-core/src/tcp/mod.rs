//! TCP senders and receivers, and an ICMP-echo (ping) source, as sans-I/O state machines: every
//! call takes `now`, nothing reads a clock, and the simulator moves segments and ACKs between
//! them (see docs/model-tcp.md for the model, its constants and the integration contract).
//!
//! Models Linux 6.x behaviour (net/ipv4/tcp_input.c, tcp_output.c, tcp_cong.c, tcp_cubic.c)
//! where the RFCs leave a choice, and RFC 5681/6582/6298/7323/9438 elsewhere. Deviations: no
//! handshake (a connection starts established), no SACK (Linux negotiates it by default), no
//! PRR, no HyStart, no receive-buffer autotuning.
//!
//! Sequence numbers are byte offsets in a `u64` starting at 0 and never wrap.

pub mod cc;
pub mod ping;
pub mod receiver;
pub mod rtt;
pub mod sender;

#[cfg(test)]
mod tests;

pub use cc::{CcKind, CongestionControl};
pub use ping::{EchoRequest, PingConfig, PingSource, PingStats};
pub use receiver::{TcpReceiver, TcpReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{AckOutcome, AppLimit, TcpSender, TcpSenderStats};

use crate::time::Nanos;

/// IPv4 (20) + TCP (20) + timestamps option (12) bytes: what Linux puts in front of every
/// segment by default, hence the 1448-byte MSS over a 1500-byte MTU.
pub const TCP_IP_HEADER: u32 = 52;

/// MSS over a 1500-byte MTU with the timestamps option (1500 − 52).
pub const DEFAULT_MSS: u32 = 1448;

/// Initial window, segments: RFC 6928, Linux `TCP_INIT_CWND`.
pub const INITIAL_CWND_SEGMENTS: u32 = 10;

/// Linux `TCP_RTO_MIN` (HZ / 5).
pub const RTO_MIN: Nanos = Nanos::from_ms(200);
/// Linux `TCP_RTO_MAX` (120 × HZ).
pub const RTO_MAX: Nanos = Nanos::from_secs(120);
/// RFC 6298 (2.1) and Linux `TCP_TIMEOUT_INIT`: the RTO before the first RTT sample.
pub const RTO_INITIAL: Nanos = Nanos::from_secs(1);

/// Linux `TCP_DELACK_MIN` (HZ / 25) = `TCP_ATO_MIN`: the delayed-ACK timeout. Linux adapts
/// `ato` between this and `TCP_DELACK_MAX` (200 ms) from the inter-arrival times; the model
/// keeps it at the minimum, where a bulk receiver's `ato` stays.
pub const DELACK_TIMEOUT: Nanos = Nanos::from_ms(40);

/// Default receive window: Linux `tcp_rmem[2]` (6 MiB), i.e. a receiver whose buffer
/// autotuning has grown it to the maximum. Autotuning itself is not modelled.
pub const DEFAULT_RCV_WND: u64 = 6 * 1024 * 1024;

/// A data segment: `len` bytes from byte `seq`. SYN and FIN are not modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    /// RFC 7323 TSval: the sender's clock when it sent the segment (full resolution).
    pub tsval: Nanos,
    /// Sent before (fast retransmit, or go-back-N after an RTO); for statistics only, the
    /// receiver does not look at it.
    pub retransmission: bool,
}

impl Segment {
    /// First byte after the segment.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
    /// IP datagram length on the wire.
    #[inline]
    pub fn ip_len(&self) -> u32 {
        self.len + TCP_IP_HEADER
    }
}

/// A pure ACK: the cumulative acknowledgment (next byte expected), the advertised window in
/// bytes (window scaling is implicit: the model carries the full value) and the echoed
/// timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub ack: u64,
    pub rwnd: u64,
    /// RFC 7323 TSecr: TS.Recent, the TSval of the segment that last advanced the left edge.
    pub tsecr: Nanos,
}

impl Ack {
    /// IP datagram length of a pure ACK on the wire.
    pub const IP_LEN: u32 = TCP_IP_HEADER;
}

/// Parameters of one connection (both ends read the MSS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub mss: u32,
    pub cc: CcKind,
    pub initial_cwnd_segments: u32,
    pub rto_min: Nanos,
    pub rto_max: Nanos,
    pub rto_initial: Nanos,
    /// Receive buffer = advertised window, bytes.
    pub rcv_wnd: u64,
    pub delack_timeout: Nanos,
}

impl TcpConfig {
    pub fn new(cc: CcKind) -> TcpConfig {
        TcpConfig {
            mss: DEFAULT_MSS,
            cc,
            initial_cwnd_segments: INITIAL_CWND_SEGMENTS,
            rto_min: RTO_MIN,
            rto_max: RTO_MAX,
            rto_initial: RTO_INITIAL,
            rcv_wnd: DEFAULT_RCV_WND,
            delack_timeout: DELACK_TIMEOUT,
        }
    }
}

impl Default for TcpConfig {
    fn default() -> TcpConfig {
        TcpConfig::new(CcKind::Cubic)
    }
}
