//! One TCP connection of a flow: the sender at its source and the receiver at its destination.

use crate::tcp::sender::{AppLimit, TcpSender};
use crate::tcp::{TcpConfig, TcpReceiver};
use crate::time::Nanos;

/// A TCP connection: both ends' state machines, and the one timer event armed for them.
pub struct TcpConn {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    /// The instant of the armed `TcpTimer` (the earlier of the two ends' timers).
    pub armed: Option<Nanos>,
    pub gen: u64,
    /// In-order bytes the receiver has delivered to its application.
    pub delivered: u64,
    /// Retransmissions, fast recoveries and RTOs at the end of the warm-up (the results count
    /// the measured window only).
    pub at_warmup: [u64; 3],
}

impl TcpConn {
    pub fn new(cfg: &TcpConfig, app: AppLimit) -> TcpConn {
        TcpConn { sender: TcpSender::new(cfg, app), receiver: TcpReceiver::new(cfg), armed: None, gen: 0, delivered: 0, at_warmup: [0; 3] }
    }

    /// Retransmissions, fast recoveries and RTOs so far.
    pub fn counts(&self) -> [u64; 3] {
        let s = self.sender.stats();
        [s.fast_retransmits + s.timeout_retransmits, s.fast_recoveries, s.rtos]
    }
}

