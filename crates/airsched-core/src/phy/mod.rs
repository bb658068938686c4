//! PHY models: rates, frame airtime and the control-response rate rule.

pub mod dsss;
pub mod error;
pub mod ht;
pub mod ofdm;
