//! Error model: packet error rate from SNR, rate and frame length (placeholder, being written).
