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
    /// The instant of the live `TcpTimer` event in the queue, if any: it may lie before
    /// `armed` (the timer was pushed back since; the event re-arms itself when it fires)
    /// but never after it.
    pub queued: Option<Nanos>,
    pub gen: u64,
    /// In-order bytes the receiver has delivered to its application.
    pub delivered: u64,
    /// Retransmissions, fast recoveries and RTOs at the end of the warm-up (the results count
    /// the measured window only).
    pub at_warmup: [u64; 3],
    /// TCP Small Queues: `tcp_limit_output_bytes` and the socket's pacing shift (None: off),
    /// and whether the socket is throttled (Linux `TSQ_THROTTLED`).
    pub tsq: Option<(u64, u8)>,
    pub throttled: bool,
    /// A file transfer: its size, whether the application writes it again once it is
    /// acknowledged, when the current copy started, and the copies completed with their
    /// summed transfer times.
    pub file: Option<u64>,
    pub repeat: bool,
    pub file_started: Nanos,
    pub files_done: u64,
    pub file_time_sum: Nanos,
    pub first_done: Option<Nanos>,
}

impl TcpConn {
    /// A connection whose sender and receiver run with different settings (each end's host).
    pub fn with_ends(sender: &TcpConfig, receiver: &TcpConfig, app: AppLimit) -> TcpConn {
        TcpConn {
            sender: TcpSender::new(sender, app),
            receiver: TcpReceiver::new(receiver),
            armed: None,
            queued: None,
            gen: 0,
            delivered: 0,
            at_warmup: [0; 3],
            tsq: None,
            throttled: false,
            file: match app {
                AppLimit::Bytes(n) => Some(n),
                AppLimit::Unlimited => None,
            },
            repeat: false,
            file_started: Nanos::ZERO,
            files_done: 0,
            file_time_sum: Nanos::ZERO,
            first_done: None,
        }
    }

    /// Retransmissions, fast recoveries and RTOs so far.
    pub fn counts(&self) -> [u64; 3] {
        let s = self.sender.stats();
        [s.fast_retransmits + s.timeout_retransmits, s.fast_recoveries, s.rtos]
    }
}
