//! 802.11b DSSS (Clause 15) and HR/DSSS CCK (Clause 16) timing.
//!
//! Follows IEEE 802.11-2016 clauses 15 and 16 (DSSS, HR/DSSS), as ns-3-dev `non-ht/dsss-phy.cc`
//! implements them:
//! TXTIME = PLCP + ceil(8 * PSDU / R) us, long PLCP 192 us, short PLCP 96 us (never at 1 Mb/s).

use crate::time::Nanos;

/// One of the four DSSS/CCK rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DsssRate {
    R1,
    R2,
    R5_5,
    R11,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preamble {
    Long,
    Short,
}

crate::words::words!(Preamble: "long" => Preamble::Long, "short" => Preamble::Short);

pub const SLOT: Nanos = Nanos::from_us(20);
pub const SIFS: Nanos = Nanos::from_us(10);
/// DIFS = SIFS + 2 slots.
pub const DIFS: Nanos = Nanos::from_us(50);
/// PIFS = SIFS + 1 slot; beacons wait this long (no backoff), as the AP's beacon queue does.
pub const PIFS: Nanos = Nanos::from_us(30);
/// aRxPHYStartDelay for the long PLCP; ACKTimeout = SIFS + slot + this.
#[cfg(test)]
pub const RX_PHY_START_DELAY: Nanos = Nanos::from_us(192);
pub const ACK_TIMEOUT: Nanos = Nanos::from_us(10 + 20 + 192);
pub const ACK_BYTES: u32 = 14;
/// PSDU = IP datagram + LLC/SNAP 8 + MAC header 24 + FCS 4.
pub const DATA_OVERHEAD_BYTES: u32 = 36;
/// Largest PSDU the DSSS PHY carries.
#[cfg(test)]
pub const MAX_PSDU_BYTES: u32 = 4095;

impl DsssRate {
    pub const ALL: [DsssRate; 4] = [DsssRate::R1, DsssRate::R2, DsssRate::R5_5, DsssRate::R11];

    /// Rate in units of 100 kb/s (10, 20, 55, 110), so that arithmetic stays integral.
    #[inline]
    pub const fn hundred_kbps(self) -> u64 {
        match self {
            DsssRate::R1 => 10,
            DsssRate::R2 => 20,
            DsssRate::R5_5 => 55,
            DsssRate::R11 => 110,
        }
    }

    pub fn mbps(self) -> f64 {
        self.hundred_kbps() as f64 / 10.0
    }

    /// Mandatory rates of Clause 15 (DSSS): 1 and 2 Mb/s. 5.5 and 11 are HR/DSSS (Clause 16).
    pub fn is_dsss_mandatory(self) -> bool {
        matches!(self, DsssRate::R1 | DsssRate::R2)
    }

    /// "1Mbps", "2Mbps", "5.5Mbps", "11Mbps".
    pub fn label(self) -> &'static str {
        match self {
            DsssRate::R1 => "1Mbps",
            DsssRate::R2 => "2Mbps",
            DsssRate::R5_5 => "5.5Mbps",
            DsssRate::R11 => "11Mbps",
        }
    }
}

/// PLCP preamble + header duration. Short preamble is never used at 1 Mb/s: a frame at 1 Mb/s
/// always takes the long PLCP, whatever the cell's setting.
#[inline]
pub fn plcp(preamble: Preamble, rate: DsssRate) -> Nanos {
    match (preamble, rate) {
        (Preamble::Short, r) if r != DsssRate::R1 => Nanos::from_us(96),
        _ => Nanos::from_us(192),
    }
}

/// Airtime of a PPDU carrying `psdu_bytes` at `rate`: PLCP + ceil(8 * PSDU / R) whole microseconds.
#[inline]
pub fn txtime(preamble: Preamble, rate: DsssRate, psdu_bytes: u32) -> Nanos {
    // ceil(8 * B / (h * 0.1)) us = ceil(80 * B / h) us, with h the rate in 100 kb/s.
    let us = (80 * psdu_bytes as u64).div_ceil(rate.hundred_kbps());
    plcp(preamble, rate) + Nanos::from_us(us)
}

/// The rate of the ACK (or CTS) answering a frame sent at `data_rate`: the highest basic rate
/// <= the data rate of the same modulation class; otherwise the highest mandatory rate <= it.
/// All DSSS/HR-DSSS rates are one modulation class for this rule (Clause 16 is an extension of 15).
pub fn control_response_rate(basic_rates: &[DsssRate], data_rate: DsssRate) -> DsssRate {
    let mandatory = DsssRate::ALL.into_iter().filter(|r| r.is_dsss_mandatory());
    super::response_rate(basic_rates, mandatory, data_rate, DsssRate::R1)
}

/// Airtime of the ACK answering a frame at `data_rate` (same preamble as the eliciting frame).
pub fn ack_time(preamble: Preamble, basic_rates: &[DsssRate], data_rate: DsssRate) -> Nanos {
    txtime(preamble, control_response_rate(basic_rates, data_rate), ACK_BYTES)
}

/// EstimatedAckTxTime of 802.11-2016 Table 10-5 for the PPDU that caused an EIFS:
/// 304 us if that PPDU was sent at 1 Mb/s, else 248 us (long preamble) or 152 us (short).
pub fn estimated_ack_time(preamble: Preamble, rate: DsssRate) -> Nanos {
    match (rate, preamble) {
        (DsssRate::R1, _) => Nanos::from_us(304),
        (_, Preamble::Long) => Nanos::from_us(248),
        (_, Preamble::Short) => Nanos::from_us(152),
    }
}

/// Legacy (802.11-1999) EIFS: SIFS + ACK at 1 Mb/s with long preamble + DIFS = 364 us.
pub const EIFS_LEGACY: Nanos = Nanos::from_us(10 + 304 + 50);

#[cfg(test)]
mod tests {
    use super::*;
    use DsssRate::*;

    #[test]
    fn txtime_rounds_the_payload_up_to_a_whole_microsecond() {
        // Reference 1.2: 1536 B at 11 Mb/s = 1117.09 us -> 1118 us, TXTIME 1310 us.
        assert_eq!(txtime(Preamble::Long, R11, 1536), Nanos::from_us(1310));
        // 1536 B at 5.5 Mb/s = 2234.18 us -> 2235 us.
        assert_eq!(txtime(Preamble::Long, R5_5, 1536), Nanos::from_us(192 + 2235));
        assert_eq!(txtime(Preamble::Long, R1, 1536), Nanos::from_us(192 + 12288));
        assert_eq!(txtime(Preamble::Short, R2, 1536), Nanos::from_us(96 + 6144));
    }

    #[test]
    fn short_preamble_is_never_used_at_1mbps() {
        assert_eq!(txtime(Preamble::Short, R1, 14), Nanos::from_us(304));
        assert_eq!(txtime(Preamble::Short, R2, 14), Nanos::from_us(96 + 56));
    }

    #[test]
    fn ack_rate_follows_the_basic_rate_set() {
        let basic = [R1, R2];
        // Reference 1.4: 304 us after 1 Mb/s data, 248 us after 2, 5.5, 11 Mb/s.
        assert_eq!(ack_time(Preamble::Long, &basic, R1), Nanos::from_us(304));
        for r in [R2, R5_5, R11] {
            assert_eq!(ack_time(Preamble::Long, &basic, r), Nanos::from_us(248));
            assert_eq!(ack_time(Preamble::Short, &basic, r), Nanos::from_us(152));
        }
        // All four basic: ACK to 11 Mb/s data at 11 Mb/s, 192 + ceil(112/11) = 203 us.
        assert_eq!(ack_time(Preamble::Long, &DsssRate::ALL, R11), Nanos::from_us(203));
        // Only 11 basic: a 2 Mb/s frame falls back to the highest mandatory rate <= 2.
        assert_eq!(control_response_rate(&[R11], R2), R2);
        assert_eq!(control_response_rate(&[R11], R5_5), R2);
    }

    #[test]
    fn interframe_spaces_are_consistent() {
        assert_eq!(DIFS, SIFS + SLOT + SLOT);
        assert_eq!(PIFS, SIFS + SLOT);
        assert_eq!(ACK_TIMEOUT, SIFS + SLOT + RX_PHY_START_DELAY);
        assert_eq!(EIFS_LEGACY, SIFS + txtime(Preamble::Long, R1, ACK_BYTES) + DIFS);
    }
}
