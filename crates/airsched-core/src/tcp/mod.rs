//! TCP senders and receivers as sans-I/O state machines (placeholder, being written).
