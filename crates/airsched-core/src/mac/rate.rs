//! Rate control (placeholder, being written).
