//! The frames in the air during a busy period: who sent each, when it ends, at what rate, and
//! what became of a lone frame.

use crate::phy::TxRate;
use crate::time::Nanos;

/// A frame in the air in the current busy period.
#[derive(Clone, Copy, Debug)]
pub struct AirTx {
    /// The contender that sent it (the WiFi node under DCF; node × 4 + AC under EDCA).
    pub node: u32,
    pub end: Nanos,
    pub rate: TxRate,
}

/// What became of the busy period's single data frame (or why there was none alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Data decoded and its (Block)Ack decoded.
    Success,
    /// Data decoded (the receiver has it) but the (Block)Ack was lost: the sender retries.
    AckLost,
    /// The data frame was not decoded: no (Block)Ack.
    DataLost,
    /// Two or more frames overlapped (or a beacon alone: nothing to acknowledge).
    Collision,
}
