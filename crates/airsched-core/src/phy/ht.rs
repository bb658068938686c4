//! 802.11a/g OFDM and 802.11n HT PHY timing (placeholder, being written).
