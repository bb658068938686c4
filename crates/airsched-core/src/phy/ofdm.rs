//! 802.11a OFDM (Clause 17) and 802.11g ERP-OFDM (Clause 18) timing: rates, TXTIME, slot and
//! interframe spaces, the control-response (ACK / BlockAck) rate rule and ACKTimeout.
//!
//! Follows IEEE 802.11-2016 clauses 17 and 18 (OFDM, ERP), as ns-3-dev
//! `non-ht/ofdm-phy.cc` / `erp-ofdm-phy.cc` implement it). TXTIME = 20 us + 4 us *
//! ceil((16 + 8 L + 6) / N_DBPS), + 6 us signal extension in 2.4 GHz. Deviation: ACKTimeout uses
//! ns-3's aRxPHYStartDelay (the 20 us preamble + SIGNAL of the response), not the standard's 25 us.
//! Only 20 MHz channels (no half/quarter clocking). The HT timing in `phy::ht` builds on this file.

use crate::phy::error_rate::{Modulation, OfdmRate};
use crate::time::Nanos;

/// OFDM symbol: 3.2 us FFT + 0.8 us guard interval.
pub const SYMBOL: Nanos = Nanos::from_us(4);
/// Short (8 us) + long (8 us) training sequence.
pub const PREAMBLE: Nanos = Nanos::from_us(16);
/// SIGNAL field (L-SIG): one 6 Mb/s BPSK 1/2 symbol.
pub const SIGNAL: Nanos = Nanos::from_us(4);
/// SERVICE field bits that precede the PSDU in the DATA field.
pub const SERVICE_BITS: u32 = 16;
/// Tail bits that flush each BCC encoder.
pub const TAIL_BITS: u32 = 6;
/// Signal extension after every OFDM PPDU in 2.4 GHz (ERP, HT): gives the receiver the 16 us of
/// decoding time it has at 5 GHz, where SIFS is 16 us instead of 10 us.
pub const SIGNAL_EXTENSION: Nanos = Nanos::from_us(6);
/// aRxPHYStartDelay as ns-3 takes it for ACKTimeout: the preamble + header of the response PPDU
/// (16 + 4 us). 802.11-2016 Table 17-21 lists 25 us; ns-3 and the DSSS model use the header time.
pub const RX_PHY_START_DELAY: Nanos = Nanos::from_us(20);

/// ACK and CTS: FC 2, Duration 2, RA 6, FCS 4.
pub const ACK_BYTES: u32 = 14;
/// Compressed BlockAck with a 64-bit bitmap: FC, Duration, RA, TA (16) + BA Control 2 +
/// Starting Sequence Control 2 + bitmap 8 + FCS 4.
pub const BLOCK_ACK_BYTES: u32 = 32;
/// Compressed BlockAck with the 256-bit bitmap of an HE agreement (802.11ax-2021 9.3.1.8):
/// 16 + 2 + 2 + 32 + 4.
pub const BLOCK_ACK_256_BYTES: u32 = 56;

/// The rates every OFDM STA supports (Clause 17.3.5.7): 6, 12 and 24 Mb/s. A control response
/// falls back to these when no basic rate qualifies; they are also the usual basic rate set.
pub const MANDATORY_RATES: [OfdmRate; 3] = [OfdmRate::R6, OfdmRate::R12, OfdmRate::R24];

/// Where an OFDM PHY operates, which fixes slot, SIFS and the signal extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OfdmBand {
    /// 5 GHz (802.11a, HT5): slot 9 us, SIFS 16 us, no signal extension.
    Ghz5,
    /// 2.4 GHz ERP with the short slot (9 us): only when every STA in the BSS is ERP (or HT) and
    /// short-slot capable, and the AP says so in its ERP/capability information.
    Ghz24ShortSlot,
    /// 2.4 GHz ERP with the long slot (20 us): the default, and mandatory as soon as a non-ERP
    /// (802.11b) STA is associated.
    Ghz24LongSlot,
}

impl OfdmBand {
    /// The ERP slot rule: short slot only if every associated STA is short-slot capable.
    #[cfg(test)]
    pub const fn erp(every_sta_short_slot: bool) -> OfdmBand {
        if every_sta_short_slot {
            OfdmBand::Ghz24ShortSlot
        } else {
            OfdmBand::Ghz24LongSlot
        }
    }

    pub const fn is_2_4ghz(self) -> bool {
        !matches!(self, OfdmBand::Ghz5)
    }

    /// aSlotTime: 9 us (5 GHz, ERP short slot) or 20 us (ERP long slot).
    pub const fn slot(self) -> Nanos {
        match self {
            OfdmBand::Ghz5 | OfdmBand::Ghz24ShortSlot => Nanos::from_us(9),
            OfdmBand::Ghz24LongSlot => Nanos::from_us(20),
        }
    }

    /// aSIFSTime: 16 us at 5 GHz, 10 us in 2.4 GHz (the 6 us signal extension, counted in
    /// TXTIME, makes up the difference).
    pub const fn sifs(self) -> Nanos {
        match self {
            OfdmBand::Ghz5 => Nanos::from_us(16),
            OfdmBand::Ghz24ShortSlot | OfdmBand::Ghz24LongSlot => Nanos::from_us(10),
        }
    }

    /// Signal extension appended to every OFDM PPDU: 6 us in 2.4 GHz, none at 5 GHz.
    pub const fn signal_extension(self) -> Nanos {
        if self.is_2_4ghz() {
            SIGNAL_EXTENSION
        } else {
            Nanos::ZERO
        }
    }

    /// SIFS + n slots: PIFS is n = 1, DIFS n = 2, AIFS[AC] n = AIFSN.
    pub const fn ifs(self, n_slots: u32) -> Nanos {
        Nanos(self.sifs().0 + n_slots as u64 * self.slot().0)
    }

    /// DIFS = SIFS + 2 slots: 34 us (5 GHz), 28 us (ERP short slot), 50 us (ERP long slot).
    #[cfg(test)]
    pub const fn difs(self) -> Nanos {
        self.ifs(2)
    }

    /// PIFS = SIFS + 1 slot.
    pub const fn pifs(self) -> Nanos {
        self.ifs(1)
    }

    /// ACKTimeout (also the BlockAck timeout) from the end of the eliciting PPDU:
    /// SIFS + slot + aRxPHYStartDelay, 45 us at 5 GHz (ns-3's value; see [`RX_PHY_START_DELAY`]).
    pub const fn ack_timeout(self) -> Nanos {
        Nanos(self.sifs().0 + self.slot().0 + RX_PHY_START_DELAY.0)
    }

    /// EIFS = SIFS + EstimatedAckTxTime of the PPDU that caused it + DIFS (802.11-2016 10.3.2.3.7;
    /// see [`estimated_ack_time`]). EDCA uses EIFS - DIFS + AIFS[AC].
    #[cfg(test)]
    pub const fn eifs(self, estimated_ack: Nanos) -> Nanos {
        Nanos(self.sifs().0 + estimated_ack.0 + self.difs().0)
    }
}

impl OfdmRate {
    /// Data bits per OFDM symbol: 48 data subcarriers x bits per subcarrier x code rate.
    pub const fn n_dbps(self) -> u32 {
        match self {
            OfdmRate::R6 => 24,
            OfdmRate::R9 => 36,
            OfdmRate::R12 => 48,
            OfdmRate::R18 => 72,
            OfdmRate::R24 => 96,
            OfdmRate::R36 => 144,
            OfdmRate::R48 => 192,
            OfdmRate::R54 => 216,
        }
    }

    /// From a rate in Mb/s, if it is one of the eight.
    #[cfg(test)]
    pub fn from_mbps(mbps: u32) -> Option<OfdmRate> {
        OfdmRate::ALL.into_iter().find(|r| r.mbps() == mbps)
    }

    #[cfg(test)]
    pub const fn is_mandatory(self) -> bool {
        matches!(self, OfdmRate::R6 | OfdmRate::R12 | OfdmRate::R24)
    }
}

/// Number of data symbols for a PSDU of `psdu_bytes`:
/// N_SYM = ceil((SERVICE 16 + 8 L + 6 N_ES) / N_DBPS) (17-11; 19-32 without STBC).
#[inline]
pub const fn n_sym(psdu_bytes: u32, n_dbps: u32, n_es: u32) -> u64 {
    let bits = SERVICE_BITS as u64 + 8 * psdu_bytes as u64 + (TAIL_BITS * n_es) as u64;
    bits.div_ceil(n_dbps as u64)
}

/// Airtime of a non-HT OFDM PPDU: preamble 16 + SIGNAL 4 + 4 us * N_SYM, + 6 us signal
/// extension in 2.4 GHz.
#[inline]
pub fn txtime(band: OfdmBand, rate: OfdmRate, psdu_bytes: u32) -> Nanos {
    let data = Nanos(SYMBOL.0 * n_sym(psdu_bytes, rate.n_dbps(), 1));
    PREAMBLE + SIGNAL + data + band.signal_extension()
}

/// The rate of the ACK, CTS or BlockAck answering a frame whose (non-HT reference) rate is
/// `data_rate`: the highest rate in `basic_rates` <= `data_rate`; if none, the highest mandatory
/// rate (6, 12, 24) <= it (802.11-2016 10.7.6.5.2, as ns-3's `GetControlAnswerMode`).
/// `basic_rates` holds the BSSBasicRateSet's OFDM rates; DSSS basic rates of an ERP BSS are a
/// different modulation class and do not take part.
pub fn control_response_rate(basic_rates: &[OfdmRate], data_rate: OfdmRate) -> OfdmRate {
    super::response_rate(basic_rates, MANDATORY_RATES, data_rate, OfdmRate::R6)
}

/// Airtime of the ACK answering a frame at `data_rate`.
#[cfg(test)]
pub fn ack_time(band: OfdmBand, basic_rates: &[OfdmRate], data_rate: OfdmRate) -> Nanos {
    txtime(band, control_response_rate(basic_rates, data_rate), ACK_BYTES)
}

/// Airtime of the compressed BlockAck answering a frame (or A-MPDU) at `data_rate`.
pub fn block_ack_time(band: OfdmBand, basic_rates: &[OfdmRate], data_rate: OfdmRate) -> Nanos {
    txtime(band, control_response_rate(basic_rates, data_rate), BLOCK_ACK_BYTES)
}

/// EstimatedAckTxTime (802.11-2016 Table 10-5, ns-3 `GetEstimatedAckTxTime`) for a non-HT OFDM
/// PPDU that caused an EIFS: 44 us after BPSK, 32 us after QPSK, 28 us after 16/64-QAM (an ACK
/// at 6, 12 or 24 Mb/s; no signal extension counted).
pub const fn estimated_ack_time(rate: OfdmRate) -> Nanos {
    match rate.modulation() {
        Modulation::Bpsk => Nanos::from_us(44),
        Modulation::Qpsk => Nanos::from_us(32),
        Modulation::Qam16 | Modulation::Qam64 => Nanos::from_us(28),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OfdmRate::*;

    const BASIC: [OfdmRate; 3] = MANDATORY_RATES;

    #[test]
    fn n_dbps_is_48_subcarriers_times_bits_times_code_rate() {
        for r in OfdmRate::ALL {
            let bits = match r.modulation() {
                Modulation::Bpsk => 1.0,
                Modulation::Qpsk => 2.0,
                Modulation::Qam16 => 4.0,
                Modulation::Qam64 => 6.0,
            };
            assert_eq!(r.n_dbps() as f64, 48.0 * bits * r.code_rate().value(), "{r:?}");
            // Rate = N_DBPS per 4 us symbol.
            assert_eq!(r.n_dbps(), r.mbps() * 4, "{r:?}");
        }
    }

    #[test]
    fn txtime_of_a_1500_byte_mpdu_at_54() {
        // 20 + 4 * ceil((22 + 12000) / 216) = 20 + 4 * 56 = 244 us (12022 / 216 = 55.66).
        assert_eq!(txtime(OfdmBand::Ghz5, R54, 1500), Nanos::from_us(244));
        // 2.4 GHz adds the 6 us signal extension, whatever the slot.
        assert_eq!(txtime(OfdmBand::Ghz24LongSlot, R54, 1500), Nanos::from_us(250));
        assert_eq!(txtime(OfdmBand::Ghz24ShortSlot, R54, 1500), Nanos::from_us(250));
        // 1536 B at 6 Mb/s: ceil((22 + 12288) / 24) = 513 symbols -> 20 + 2052 = 2072 us.
        assert_eq!(txtime(OfdmBand::Ghz5, R6, 1536), Nanos::from_us(2072));
        // Rounding edge: 216 * 56 = 12096 bits = 22 + 8 * 1509.25, so 1509 B needs 56 symbols
        // and 1510 B needs 57.
        assert_eq!(txtime(OfdmBand::Ghz5, R54, 1509), Nanos::from_us(20 + 4 * 56));
        assert_eq!(txtime(OfdmBand::Ghz5, R54, 1510), Nanos::from_us(20 + 4 * 57));
    }

    #[test]
    fn ack_airtimes_match_the_reference_table() {
        // Reference section 2: 14-B ACK sent at each rate.
        let expected = [44, 36, 32, 28, 28, 24, 24, 24];
        for (r, us) in OfdmRate::ALL.into_iter().zip(expected) {
            assert_eq!(txtime(OfdmBand::Ghz5, r, ACK_BYTES), Nanos::from_us(us), "{r:?}");
        }
        // Compressed BlockAck at 24 Mb/s: 20 + 4 * ceil((22 + 256) / 96) = 32 us.
        assert_eq!(txtime(OfdmBand::Ghz5, R24, BLOCK_ACK_BYTES), Nanos::from_us(32));
    }

    #[test]
    fn control_response_takes_the_highest_basic_rate_not_above_the_data_rate() {
        // Basic {6, 12, 24}: 54 -> 24 (28 us), 18 -> 12, 9 -> 6 (44 us).
        assert_eq!(control_response_rate(&BASIC, R54), R24);
        assert_eq!(control_response_rate(&BASIC, R18), R12);
        assert_eq!(control_response_rate(&BASIC, R9), R6);
        assert_eq!(ack_time(OfdmBand::Ghz5, &BASIC, R54), Nanos::from_us(28));
        assert_eq!(ack_time(OfdmBand::Ghz5, &BASIC, R9), Nanos::from_us(44));
        assert_eq!(block_ack_time(OfdmBand::Ghz5, &BASIC, R54), Nanos::from_us(32));
        // Every rate basic: the response goes at the data rate.
        assert_eq!(control_response_rate(&OfdmRate::ALL, R48), R48);
        // Only 54 basic: a 36 Mb/s frame falls back to the highest mandatory rate <= 36.
        assert_eq!(control_response_rate(&[R54], R36), R24);
        assert_eq!(control_response_rate(&[], R9), R6);
        // 2.4 GHz: ACK at 24 Mb/s plus the signal extension.
        assert_eq!(ack_time(OfdmBand::Ghz24LongSlot, &BASIC, R54), Nanos::from_us(34));
    }

    #[test]
    fn interframe_spaces_per_band() {
        use OfdmBand::*;
        let us = Nanos::from_us;
        assert_eq!((Ghz5.slot(), Ghz5.sifs(), Ghz5.difs()), (us(9), us(16), us(34)));
        assert_eq!((Ghz24ShortSlot.slot(), Ghz24ShortSlot.difs()), (us(9), us(28)));
        assert_eq!((Ghz24LongSlot.slot(), Ghz24LongSlot.difs()), (us(20), us(50)));
        assert_eq!(Ghz24LongSlot.sifs(), us(10));
        assert_eq!(Ghz5.pifs(), us(25));
        // SIFS + extension is 16 us in both bands: the receiver gets the same decoding time.
        assert_eq!(Ghz24ShortSlot.sifs() + Ghz24ShortSlot.signal_extension(), Ghz5.sifs());
        // ERP slot rule: one long-slot (e.g. 802.11b) STA forces the long slot.
        assert_eq!(OfdmBand::erp(true), Ghz24ShortSlot);
        assert_eq!(OfdmBand::erp(false), Ghz24LongSlot);
        // ACKTimeout = SIFS + slot + 20 us.
        assert_eq!(Ghz5.ack_timeout(), us(45));
        assert_eq!(Ghz24LongSlot.ack_timeout(), us(50));
        // Legacy EIFS at 5 GHz: 16 + 44 (ACK at 6 Mb/s) + 34 = 94 us (reference section 2).
        assert_eq!(Ghz5.eifs(estimated_ack_time(R6)), us(94));
        assert_eq!(estimated_ack_time(R6), txtime(Ghz5, R6, ACK_BYTES));
        assert_eq!(estimated_ack_time(R18), txtime(Ghz5, R12, ACK_BYTES));
        assert_eq!(estimated_ack_time(R54), txtime(Ghz5, R24, ACK_BYTES));
    }

    #[test]
    fn rates_round_trip_and_mandatory_set() {
        for r in OfdmRate::ALL {
            assert_eq!(OfdmRate::from_mbps(r.mbps()), Some(r));
            assert_eq!(r.is_mandatory(), MANDATORY_RATES.contains(&r));
        }
        assert_eq!(OfdmRate::from_mbps(11), None);
    }
}
