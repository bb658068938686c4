//! The mac80211 queueing stack (placeholder, being written).
