//! Bluetooth BR/EDR ACL packet types: slots, maximum payload and on-air time (Bluetooth Core
//! spec, baseband, as tabulated in reference next-capabilities.md section 1.1 and
//! phy80211-bluetooth.md section 8.1).
//!
//! On-air time of a packet carrying `n` bytes of user data (the UCBT `packet_size()` formula):
//! 126 us of access code (72 bits) and header (54 bits), then the payload at 1 Msym/s:
//! payload header (1 byte for 1-slot BR packets, 2 bytes for multi-slot BR packets and every
//! EDR packet), the data and a 16-bit CRC. DM packets add 2/3 FEC (the bits are rounded up to a
//! multiple of 10, then times 3/2). EDR packets add 18 us (guard, sync and trailer) and carry
//! their payload at 2 (pi/4-DQPSK) or 3 (8DPSK) bits per symbol, rounded up to a whole us.

use crate::time::Nanos;

/// One slot: 625 us (1600 hops/s).
pub const SLOT: Nanos = Nanos(625_000);
/// Access code and packet header: 72 + 54 bits at 1 Mb/s.
pub const HEADER_US: u64 = 126;
/// POLL and NULL packets: access code and header only.
pub const POLL_NULL: Nanos = Nanos(HEADER_US * 1000);

/// An ACL packet type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketType {
    Dm1,
    Dh1,
    Dm3,
    Dh3,
    Dm5,
    Dh5,
    Edr2Dh1,
    Edr2Dh3,
    Edr2Dh5,
    Edr3Dh1,
    Edr3Dh3,
    Edr3Dh5,
}

impl PacketType {
    pub const ALL: [PacketType; 12] = [
        PacketType::Dm1,
        PacketType::Dh1,
        PacketType::Dm3,
        PacketType::Dh3,
        PacketType::Dm5,
        PacketType::Dh5,
        PacketType::Edr2Dh1,
        PacketType::Edr2Dh3,
        PacketType::Edr2Dh5,
        PacketType::Edr3Dh1,
        PacketType::Edr3Dh3,
        PacketType::Edr3Dh5,
    ];

    /// The name as the spec and `hciconfig ptype` write it.
    pub fn name(self) -> &'static str {
        match self {
            PacketType::Dm1 => "DM1",
            PacketType::Dh1 => "DH1",
            PacketType::Dm3 => "DM3",
            PacketType::Dh3 => "DH3",
            PacketType::Dm5 => "DM5",
            PacketType::Dh5 => "DH5",
            PacketType::Edr2Dh1 => "2-DH1",
            PacketType::Edr2Dh3 => "2-DH3",
            PacketType::Edr2Dh5 => "2-DH5",
            PacketType::Edr3Dh1 => "3-DH1",
            PacketType::Edr3Dh3 => "3-DH3",
            PacketType::Edr3Dh5 => "3-DH5",
        }
    }

    /// The type named `s` (case-insensitive), if any.
    pub fn from_name(s: &str) -> Option<PacketType> {
        PacketType::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(s))
    }

    /// Slots the packet occupies (1, 3 or 5).
    pub fn slots(self) -> u64 {
        match self {
            PacketType::Dm1 | PacketType::Dh1 | PacketType::Edr2Dh1 | PacketType::Edr3Dh1 => 1,
            PacketType::Dm3 | PacketType::Dh3 | PacketType::Edr2Dh3 | PacketType::Edr3Dh3 => 3,
            _ => 5,
        }
    }

    /// Maximum user data per packet, bytes.
    pub fn max_payload(self) -> u32 {
        match self {
            PacketType::Dm1 => 17,
            PacketType::Dh1 => 27,
            PacketType::Dm3 => 121,
            PacketType::Dh3 => 183,
            PacketType::Dm5 => 224,
            PacketType::Dh5 => 339,
            PacketType::Edr2Dh1 => 54,
            PacketType::Edr2Dh3 => 367,
            PacketType::Edr2Dh5 => 679,
            PacketType::Edr3Dh1 => 83,
            PacketType::Edr3Dh3 => 552,
            PacketType::Edr3Dh5 => 1021,
        }
    }

    /// Bits per payload symbol (1 for BR, 2 or 3 for EDR).
    fn bits_per_symbol(self) -> u64 {
        match self {
            PacketType::Edr2Dh1 | PacketType::Edr2Dh3 | PacketType::Edr2Dh5 => 2,
            PacketType::Edr3Dh1 | PacketType::Edr3Dh3 | PacketType::Edr3Dh5 => 3,
            _ => 1,
        }
    }

    fn is_dm(self) -> bool {
        matches!(self, PacketType::Dm1 | PacketType::Dm3 | PacketType::Dm5)
    }

    /// Payload header bytes: 1 for single-slot BR packets, 2 otherwise.
    fn payload_header(self) -> u64 {
        if self.slots() == 1 && self.bits_per_symbol() == 1 {
            1
        } else {
            2
        }
    }

    /// On-air time of a packet of this type carrying `bytes` of user data.
    pub fn airtime(self, bytes: u32) -> Nanos {
        let bits = (self.payload_header() + bytes as u64 + 2) * 8;
        let us = match self.bits_per_symbol() {
            1 if self.is_dm() => HEADER_US + bits.div_ceil(10) * 15,
            1 => HEADER_US + bits,
            b => HEADER_US + 18 + bits.div_ceil(b),
        };
        Nanos(us * 1000)
    }

    /// The asymmetric forward rate (b/s): full packets, each answered by a 1-slot packet.
    #[cfg(test)]
    pub fn asymmetric_bps(self) -> f64 {
        self.max_payload() as f64 * 8.0 / ((self.slots() + 1) as f64 * SLOT.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_and_on_air_times_match_the_spec_table() {
        // (type, max payload B, on-air us at max payload): reference next-capabilities 1.1.
        let table = [
            ("DM1", 17, 366),
            ("DH1", 27, 366),
            ("DM3", 121, 1626),
            ("DH3", 183, 1622),
            ("DM5", 224, 2871),
            ("DH5", 339, 2870),
            ("2-DH1", 54, 376),
            ("2-DH3", 367, 1628),
            ("2-DH5", 679, 2876),
            ("3-DH1", 83, 376),
            ("3-DH3", 552, 1627),
            ("3-DH5", 1021, 2878),
        ];
        for (name, payload, us) in table {
            let t = PacketType::from_name(name).unwrap();
            assert_eq!(t.name(), name);
            assert_eq!(t.max_payload(), payload, "{name}");
            assert_eq!(t.airtime(payload), Nanos(us * 1000), "{name}");
            // Every packet fits its slots with room for the turnaround.
            assert!(t.airtime(payload) < Nanos(SLOT.0 * t.slots()));
        }
    }

    #[test]
    fn asymmetric_maxima_are_172_8_585_6_and_723_2_kbps() {
        // 27 * 8 / 1.25 ms, 183 * 8 / 2.5 ms, 339 * 8 / 3.75 ms.
        assert!((PacketType::Dh1.asymmetric_bps() - 172_800.0).abs() < 1e-6);
        assert!((PacketType::Dh3.asymmetric_bps() - 585_600.0).abs() < 1e-6);
        assert!((PacketType::Dh5.asymmetric_bps() - 723_200.0).abs() < 1e-6);
        assert!((PacketType::Edr2Dh5.asymmetric_bps() - 1_448_533.3).abs() < 0.1);
        assert!((PacketType::Edr3Dh3.asymmetric_bps() - 1_766_400.0).abs() < 1e-6);
    }
}
