//! 802.11n HT PHY timing (Clause 19, HT-mixed format), QoS data framing and A-MPDU limits.
//!
//! Follows IEEE 802.11-2016 clause 19 (HT PHY) and 10.22 (as ns-3-dev
//! `ht/ht-phy.cc` and `wifi-phy-common.cc` implement it). Modelled: MCS 0-15 (1-2 spatial
//! streams, BCC, one encoder), 20/40 MHz, 800/400 ns GI, no STBC, HT-mixed format only.
//! Deviation from ns-3: with the short GI the data field is rounded up to the 4 us grid as
//! 802.11-2016 eq. 19-136 requires (ns-3 uses N_SYM x 3.6 us, up to 3.6 us shorter).
//! The EDCA parameters and TID mapping are in `mac::edca`.

use crate::phy::error_rate::{CodeRate, Modulation, OfdmRate};
use crate::phy::ofdm::{self, OfdmBand};
use crate::time::Nanos;

// ------------------------------------------------------------------------------------------------
// HT PHY

/// L-SIG (4 us) after the legacy preamble (L-STF 8 + L-LTF 8 = [`ofdm::PREAMBLE`]).
pub const L_SIG: Nanos = Nanos::from_us(4);
/// HT-SIG: two 4 us symbols.
pub const HT_SIG: Nanos = Nanos::from_us(8);
/// HT-STF.
pub const HT_STF: Nanos = Nanos::from_us(4);
/// One HT-LTF; a PPDU carries [`ht_ltf_count`] of them.
pub const HT_LTF: Nanos = Nanos::from_us(4);
/// Symbol with the long (800 ns) guard interval.
pub const SYMBOL_LGI: Nanos = Nanos::from_us(4);
/// Symbol with the short (400 ns) guard interval.
pub const SYMBOL_SGI: Nanos = Nanos(3_600);
/// BCC encoders: one for every HT rate up to 300 Mb/s, i.e. all of MCS 0-15 (802.11-2016
/// Tables 19-27 to 19-34; a second encoder appears only with 3 or more streams).
pub const N_ES: u32 = 1;
/// Data subcarriers: 52 at 20 MHz, 108 at 40 MHz.
const N_SD_20: u32 = 52;
const N_SD_40: u32 = 108;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelWidth {
    Mhz20,
    Mhz40,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GuardInterval {
    /// 800 ns: 4.0 us symbols.
    Long,
    /// 400 ns: 3.6 us symbols.
    Short,
}

crate::words::words!(GuardInterval: "long" => GuardInterval::Long, "short" => GuardInterval::Short);

impl GuardInterval {
    pub const fn symbol(self) -> Nanos {
        match self {
            GuardInterval::Long => SYMBOL_LGI,
            GuardInterval::Short => SYMBOL_SGI,
        }
    }
}

/// An HT MCS index 0-15: 0-7 one spatial stream, 8-15 the same modulations on two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HtMcs(u8);

impl HtMcs {
    /// Highest modelled index (two spatial streams).
    pub const MAX: u8 = 15;

    pub const ALL: [HtMcs; 16] = {
        let mut all = [HtMcs(0); 16];
        let mut i = 0;
        while i < 16 {
            all[i] = HtMcs(i as u8);
            i += 1;
        }
        all
    };

    /// `None` for indexes above 15 (3-4 streams and unequal modulation are not modelled).
    pub const fn new(index: u8) -> Option<HtMcs> {
        if index <= Self::MAX {
            Some(HtMcs(index))
        } else {
            None
        }
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    /// Number of spatial streams, N_SS.
    pub const fn n_ss(self) -> u32 {
        self.0 as u32 / 8 + 1
    }

    pub const fn modulation(self) -> Modulation {
        match self.0 % 8 {
            0 => Modulation::Bpsk,
            1 | 2 => Modulation::Qpsk,
            3 | 4 => Modulation::Qam16,
            _ => Modulation::Qam64,
        }
    }

    pub const fn code_rate(self) -> CodeRate {
        match self.0 % 8 {
            0 | 1 | 3 => CodeRate::R1_2,
            5 => CodeRate::R2_3,
            2 | 4 | 6 => CodeRate::R3_4,
            _ => CodeRate::R5_6,
        }
    }

    /// Data bits per symbol over all streams: N_SD x N_BPSCS x R x N_SS (integral for every
    /// MCS 0-15 at 20 and 40 MHz; MCS 7 gives 260 at 20 MHz, 540 at 40 MHz).
    pub const fn n_dbps(self, width: ChannelWidth) -> u32 {
        let n_sd = match width {
            ChannelWidth::Mhz20 => N_SD_20,
            ChannelWidth::Mhz40 => N_SD_40,
        };
        let n_bpscs = match self.modulation() {
            Modulation::Bpsk => 1,
            Modulation::Qpsk => 2,
            Modulation::Qam16 => 4,
            Modulation::Qam64 => 6,
        };
        let (num, den) = match self.code_rate() {
            CodeRate::R1_2 => (1, 2),
            CodeRate::R2_3 => (2, 3),
            CodeRate::R3_4 => (3, 4),
            CodeRate::R5_6 => (5, 6),
        };
        n_sd * n_bpscs * num / den * self.n_ss()
    }

    /// PHY data rate N_DBPS / T_SYM in bit/s, rounded down (72 222 222 for MCS 7 20 MHz SGI).
    pub const fn bits_per_second(self, width: ChannelWidth, gi: GuardInterval) -> u64 {
        self.n_dbps(width) as u64 * 1_000_000_000 / gi.symbol().as_ns()
    }

    pub fn mbps(self, width: ChannelWidth, gi: GuardInterval) -> f64 {
        self.n_dbps(width) as f64 * 1e3 / gi.symbol().as_ns() as f64
    }

    /// The non-HT reference rate (802.11-2016 10.7.9, ns-3 `GetNonHtReferenceRate`): the legacy
    /// rate with the same modulation and code rate; 5/6 maps to 54 Mb/s. The control response
    /// to an HT frame is chosen from the basic rates as if the frame had been sent at this rate.
    pub const fn non_ht_reference_rate(self) -> OfdmRate {
        match self.0 % 8 {
            0 => OfdmRate::R6,
            1 => OfdmRate::R12,
            2 => OfdmRate::R18,
            3 => OfdmRate::R24,
            4 => OfdmRate::R36,
            5 => OfdmRate::R48,
            _ => OfdmRate::R54,
        }
    }
}

/// What the timing of an HT PPDU depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HtTxVector {
    pub mcs: HtMcs,
    pub width: ChannelWidth,
    pub gi: GuardInterval,
}

impl HtTxVector {
    pub const fn new(mcs: HtMcs, width: ChannelWidth, gi: GuardInterval) -> HtTxVector {
        HtTxVector { mcs, width, gi }
    }

    pub const fn n_dbps(self) -> u32 {
        self.mcs.n_dbps(self.width)
    }

    pub const fn bits_per_second(self) -> u64 {
        self.mcs.bits_per_second(self.width, self.gi)
    }
}

/// Number of HT-LTFs for `n_ss` streams without STBC (802.11-2016 Table 19-13): 1, 2, 4, 4.
pub const fn ht_ltf_count(n_ss: u32) -> u32 {
    if n_ss <= 2 {
        n_ss
    } else {
        4
    }
}

/// HT-mixed preamble and headers: L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 +
/// 4 us per HT-LTF = 36 us (1 SS), 40 us (2 SS).
pub const fn ht_mf_preamble(n_ss: u32) -> Nanos {
    let fixed = ofdm::PREAMBLE.as_ns() + L_SIG.as_ns() + HT_SIG.as_ns() + HT_STF.as_ns();
    Nanos(fixed + ht_ltf_count(n_ss) as u64 * HT_LTF.as_ns())
}

/// Airtime of an HT-mixed PPDU carrying `psdu_bytes` (802.11-2016 eq. 19-135/136):
/// preamble + T_SYM x N_SYM with N_SYM = ceil((16 + 8 L + 6 N_ES) / N_DBPS); with the short GI
/// the data field is 4 us x ceil(3.6 us x N_SYM / 4 us), so the whole PPDU stays on the 4 us
/// grid. Plus the 6 us signal extension in 2.4 GHz.
#[inline]
pub fn txtime(band: OfdmBand, tx: HtTxVector, psdu_bytes: u32) -> Nanos {
    let n_sym = ofdm::n_sym(psdu_bytes, tx.n_dbps(), N_ES);
    let data_symbols_4us = match tx.gi {
        GuardInterval::Long => n_sym,
        GuardInterval::Short => (9 * n_sym).div_ceil(10),
    };
    ht_mf_preamble(tx.mcs.n_ss()) + Nanos(SYMBOL_LGI.as_ns() * data_symbols_4us) + band.signal_extension()
}

/// Legacy OFDM rate of the control response (ACK, BlockAck) to an HT frame at `mcs`: the highest
/// basic rate <= its non-HT reference rate (MCS 7 -> 54 -> 24 Mb/s with basic {6, 12, 24}).
/// The MAC reaches it through `phy::TxVector::response_time`.
#[cfg(test)]
pub fn control_response_rate(basic_rates: &[OfdmRate], mcs: HtMcs) -> OfdmRate {
    ofdm::control_response_rate(basic_rates, mcs.non_ht_reference_rate())
}

/// Airtime of the normal ACK answering a single (non-aggregated) MPDU at `mcs`.
#[cfg(test)]
pub fn ack_time(band: OfdmBand, basic_rates: &[OfdmRate], mcs: HtMcs) -> Nanos {
    ofdm::ack_time(band, basic_rates, mcs.non_ht_reference_rate())
}

/// Airtime of the compressed BlockAck (32 B) answering an A-MPDU at `mcs`; 32 us for MCS 7 at
/// 5 GHz with basic {6, 12, 24}.
pub fn block_ack_time(band: OfdmBand, basic_rates: &[OfdmRate], mcs: HtMcs) -> Nanos {
    ofdm::block_ack_time(band, basic_rates, mcs.non_ht_reference_rate())
}

/// EstimatedAckTxTime (802.11-2016 Table 10-5, ns-3 `GetEstimatedAckTxTime`) after an HT PPDU
/// that caused an EIFS: 68 us after BPSK, 44 us after QPSK, 32 us otherwise.
pub const fn estimated_ack_time(mcs: HtMcs) -> Nanos {
    match mcs.modulation() {
        Modulation::Bpsk => Nanos::from_us(68),
        Modulation::Qpsk => Nanos::from_us(44),
        Modulation::Qam16 | Modulation::Qam64 => Nanos::from_us(32),
    }
}

// ------------------------------------------------------------------------------------------------
// QoS data framing and A-MPDU

/// 3-address data MAC header 24 + QoS Control 2.
pub const QOS_DATA_HEADER_BYTES: u32 = 26;
pub const FCS_BYTES: u32 = 4;
/// RFC 1042 LLC/SNAP header in front of the IP datagram.
pub const LLC_SNAP_BYTES: u32 = 8;
/// MPDU = IP datagram + 38 for QoS data (reference 10 item 1).
pub const QOS_DATA_OVERHEAD_BYTES: u32 = QOS_DATA_HEADER_BYTES + LLC_SNAP_BYTES + FCS_BYTES;

/// MPDU delimiter in front of every A-MPDU subframe (reserved/EOF, 12-bit length, CRC, signature).
pub const MPDU_DELIMITER_BYTES: u32 = 4;
/// Largest HT A-MPDU (maximum A-MPDU length exponent 3: 2^16 - 1).
pub const AMPDU_MAX_BYTES: u32 = 65_535;
/// At most 64 MPDUs: the BlockAck window (64-bit compressed bitmap).
pub const AMPDU_MAX_MPDUS: u32 = 64;
/// Largest MPDU in an HT A-MPDU: the delimiter's length field has 12 bits.
#[cfg(test)]
pub const AMPDU_MAX_MPDU_BYTES: u32 = 4095;
/// aPPDUMaxTime for HT-mixed PPDUs as ns-3 `GetPpduMaxTime` applies it: the L-SIG LENGTH limit,
/// 4095 B at 6 Mb/s = 20 + 4 x ceil((16 + 8 x 4095 + 6) / 24) = 5484 us.
pub const HT_MF_PPDU_MAX_TIME: Nanos = Nanos::from_us(5484);
/// The aggregate airtime cap of Linux drivers (ath9k `ath_max_4ms_framelen`, also mt76 and
/// iwlwifi): 4 ms, a regulatory/implementation habit, not a standard limit.
pub const LINUX_MAX_AGGR_TIME: Nanos = Nanos::from_ms(4);

/// MPDU length for a QoS data frame carrying an IP datagram of `ip_bytes`.
pub const fn qos_data_mpdu_bytes(ip_bytes: u32) -> u32 {
    ip_bytes + QOS_DATA_OVERHEAD_BYTES
}

/// Length of an A-MPDU subframe that is not the last: delimiter + MPDU, padded to a multiple of 4.
pub const fn ampdu_subframe_bytes(mpdu_bytes: u32) -> u32 {
    (MPDU_DELIMITER_BYTES + mpdu_bytes).next_multiple_of(4)
}

/// A-MPDU (PSDU) length of the given MPDUs: every subframe padded except the last.
#[cfg(test)]
pub fn ampdu_bytes(mpdu_bytes: impl IntoIterator<Item = u32>) -> u32 {
    let mut total = 0;
    let mut last_padding = 0;
    for m in mpdu_bytes {
        let subframe = ampdu_subframe_bytes(m);
        total += subframe;
        last_padding = subframe - (MPDU_DELIMITER_BYTES + m);
    }
    total - last_padding
}

/// The limits an A-MPDU must respect; the duration limit applies to the PPDU without the 2.4 GHz
/// signal extension (as the L-SIG LENGTH does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AmpduLimits {
    /// A-MPDU length: 65 535 B, or less if the recipient advertised a smaller exponent
    /// (8191, 16 383, 32 767).
    pub max_bytes: u32,
    /// MPDUs per A-MPDU: 64, or the negotiated BlockAck buffer size.
    pub max_mpdus: u32,
    /// PPDU duration: [`HT_MF_PPDU_MAX_TIME`], [`LINUX_MAX_AGGR_TIME`], or a TXOP limit.
    pub max_duration: Nanos,
}

impl AmpduLimits {
    /// What the standard allows an HT-mixed A-MPDU: 65 535 B, 64 MPDUs, 5.484 ms.
    pub const HT: AmpduLimits =
        AmpduLimits { max_bytes: AMPDU_MAX_BYTES, max_mpdus: AMPDU_MAX_MPDUS, max_duration: HT_MF_PPDU_MAX_TIME };
    /// The standard's limits with the Linux drivers' 4 ms aggregate cap.
    #[cfg(test)]
    pub const LINUX: AmpduLimits = AmpduLimits { max_duration: LINUX_MAX_AGGR_TIME, ..Self::HT };

    /// These limits with the duration capped at `max_duration` (e.g. a non-zero TXOP limit);
    /// never above aPPDUMaxTime.
    pub const fn with_max_duration(self, max_duration: Nanos) -> AmpduLimits {
        let d = if max_duration.as_ns() < HT_MF_PPDU_MAX_TIME.as_ns() { max_duration } else { HT_MF_PPDU_MAX_TIME };
        AmpduLimits { max_duration: d, ..self }
    }
}

impl Default for AmpduLimits {
    fn default() -> Self {
        AmpduLimits::HT
    }
}

/// An A-MPDU that [`ampdu_fit`] built.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AmpduFit {
    /// How many of the offered MPDUs, from the front, go in.
    pub n_mpdus: u32,
    /// A-MPDU (PSDU) length, last subframe unpadded.
    pub psdu_bytes: u32,
    /// PPDU airtime ([`txtime`] of the PSDU, signal extension included).
    pub txtime: Nanos,
}

/// How many MPDUs from the front of `mpdu_bytes` fit in one A-MPDU at `tx` under `limits`
/// (bytes, MPDU count, duration; an MPDU over 4095 B ends the aggregate). Zero if even the first
/// does not fit; a caller then sends it alone, non-aggregated. With one MPDU the delimiter is
/// counted (an S-MPDU). Reads at most `limits.max_mpdus` + 1 lengths; no allocation.
#[cfg(test)]
pub fn ampdu_fit(
    band: OfdmBand,
    tx: HtTxVector,
    limits: &AmpduLimits,
    mpdu_bytes: impl IntoIterator<Item = u32>,
) -> AmpduFit {
    let mut fit = AmpduFit { n_mpdus: 0, psdu_bytes: 0, txtime: Nanos::ZERO };
    let mut padded = 0; // bytes of the subframes already in, each padded
    for m in mpdu_bytes {
        if fit.n_mpdus >= limits.max_mpdus || m > AMPDU_MAX_MPDU_BYTES {
            break;
        }
        let psdu = padded + MPDU_DELIMITER_BYTES + m;
        if psdu > limits.max_bytes {
            break;
        }
        let t = txtime(band, tx, psdu);
        if t - band.signal_extension() > limits.max_duration {
            break;
        }
        fit = AmpduFit { n_mpdus: fit.n_mpdus + 1, psdu_bytes: psdu, txtime: t };
        padded += ampdu_subframe_bytes(m);
    }
    fit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::edca::{AccessCategory, EdcaParams, TxopTable};
    use ChannelWidth::*;
    use GuardInterval::*;

    const BASIC: [OfdmRate; 3] = ofdm::MANDATORY_RATES;

    fn mcs(i: u8) -> HtMcs {
        HtMcs::new(i).unwrap()
    }

    fn tx(i: u8, width: ChannelWidth, gi: GuardInterval) -> HtTxVector {
        HtTxVector::new(mcs(i), width, gi)
    }

    #[test]
    fn n_dbps_per_stream_matches_the_standard() {
        // Reference section 3.
        let n20 = [26, 52, 78, 104, 156, 208, 234, 260];
        let n40 = [54, 108, 162, 216, 324, 432, 486, 540];
        for i in 0..8u8 {
            assert_eq!(mcs(i).n_dbps(Mhz20), n20[i as usize]);
            assert_eq!(mcs(i).n_dbps(Mhz40), n40[i as usize]);
            assert_eq!(mcs(i + 8).n_dbps(Mhz20), 2 * n20[i as usize]);
            assert_eq!(mcs(i + 8).n_dbps(Mhz40), 2 * n40[i as usize]);
            assert_eq!((mcs(i).n_ss(), mcs(i + 8).n_ss()), (1, 2));
        }
        assert_eq!(HtMcs::new(16), None);
        assert_eq!(HtMcs::ALL.map(HtMcs::index), core::array::from_fn(|i| i as u8));
    }

    #[test]
    fn data_rates_match_the_standard_table() {
        // Mb/s to one decimal, as 802.11-2016 Tables 19-27 ... 19-34 print them:
        // [20 MHz LGI, 20 MHz SGI, 40 MHz LGI, 40 MHz SGI], MCS 0-7 then MCS 8-15. The second
        // table is printed separately because the standard rounds each value on its own
        // (MCS 9 20 MHz SGI is 28.9, not 2 x 14.4).
        let table: [[f64; 4]; 8] = [
            [6.5, 7.2, 13.5, 15.0],
            [13.0, 14.4, 27.0, 30.0],
            [19.5, 21.7, 40.5, 45.0],
            [26.0, 28.9, 54.0, 60.0],
            [39.0, 43.3, 81.0, 90.0],
            [52.0, 57.8, 108.0, 120.0],
            [58.5, 65.0, 121.5, 135.0],
            [65.0, 72.2, 135.0, 150.0],
        ];
        let table2: [[f64; 4]; 8] = [
            [13.0, 14.4, 27.0, 30.0],
            [26.0, 28.9, 54.0, 60.0],
            [39.0, 43.3, 81.0, 90.0],
            [52.0, 57.8, 108.0, 120.0],
            [78.0, 86.7, 162.0, 180.0],
            [104.0, 115.6, 216.0, 240.0],
            [117.0, 130.0, 243.0, 270.0],
            [130.0, 144.4, 270.0, 300.0],
        ];
        let combos = [(Mhz20, Long), (Mhz20, Short), (Mhz40, Long), (Mhz40, Short)];
        for i in 0..8u8 {
            for (c, &(w, g)) in combos.iter().enumerate() {
                let one = (mcs(i).mbps(w, g) * 10.0).round() / 10.0;
                let two = (mcs(i + 8).mbps(w, g) * 10.0).round() / 10.0;
                assert_eq!(one, table[i as usize][c], "MCS {i} {w:?} {g:?}");
                assert_eq!(two, table2[i as usize][c], "MCS {} {w:?} {g:?}", i + 8);
            }
        }
        assert_eq!(mcs(7).bits_per_second(Mhz20, Long), 65_000_000);
        assert_eq!(mcs(7).bits_per_second(Mhz20, Short), 72_222_222);
        assert_eq!(mcs(15).bits_per_second(Mhz40, Short), 300_000_000);
    }

    #[test]
    fn preamble_is_36_us_for_one_stream_and_40_for_two() {
        assert_eq!(ht_mf_preamble(1), Nanos::from_us(36));
        assert_eq!(ht_mf_preamble(2), Nanos::from_us(40));
        assert_eq!(ht_mf_preamble(3), Nanos::from_us(48));
        assert_eq!(ht_mf_preamble(4), Nanos::from_us(48));
    }

    #[test]
    fn txtime_spot_cases() {
        let g5 = OfdmBand::Ghz5;
        // MCS 7 20 MHz LGI, 1538-B MPDU (1500-B IP datagram as QoS data):
        // ceil((16 + 12304 + 6) / 260) = ceil(47.41) = 48 symbols -> 36 + 192 = 228 us.
        assert_eq!(txtime(g5, tx(7, Mhz20, Long), 1538), Nanos::from_us(228));
        // Same with SGI: 48 x 3.6 = 172.8 us -> 4 x ceil(43.2) = 176 us -> 212 us.
        assert_eq!(txtime(g5, tx(7, Mhz20, Short), 1538), Nanos::from_us(212));
        // SGI that already lands on the grid: 10 symbols = 36 us = 9 x 4 us. 10 symbols of
        // MCS 7 hold 2600 bits: 16 + 8 x 322 + 6 = 2598 -> 322 B.
        assert_eq!(txtime(g5, tx(7, Mhz20, Short), 322), Nanos::from_us(36 + 36));
        assert_eq!(txtime(g5, tx(7, Mhz20, Short), 323), Nanos::from_us(36 + 40));
        // MCS 15 40 MHz SGI (1080 bits/symbol), 2 HT-LTFs: 1538 B -> ceil(12326 / 1080) = 12
        // symbols = 43.2 us -> 44 us; preamble 40 -> 84 us.
        assert_eq!(txtime(g5, tx(15, Mhz40, Short), 1538), Nanos::from_us(84));
        // MCS 0 20 MHz LGI: ceil(12326 / 26) = 475 symbols -> 36 + 1900 = 1936 us.
        assert_eq!(txtime(g5, tx(0, Mhz20, Long), 1538), Nanos::from_us(1936));
        // 2.4 GHz adds the signal extension.
        let g24 = OfdmBand::Ghz24LongSlot;
        assert_eq!(txtime(g24, tx(7, Mhz20, Long), 1538), Nanos::from_us(234));
        // Every HT PPDU at 5 GHz is a whole number of 4 us units.
        for m in HtMcs::ALL {
            for len in [1, 100, 1538, 4095, 65_535] {
                let t = txtime(g5, HtTxVector::new(m, Mhz40, Short), len);
                assert_eq!(t.as_ns() % 4_000, 0, "{m:?} {len}");
            }
        }
    }

    #[test]
    fn ppdu_max_time_is_the_l_sig_limit() {
        assert_eq!(ofdm::txtime(OfdmBand::Ghz5, OfdmRate::R6, 4095), HT_MF_PPDU_MAX_TIME);
    }

    #[test]
    fn control_response_uses_the_non_ht_reference_rate() {
        let g5 = OfdmBand::Ghz5;
        // MCS 7 -> 54 -> 24 Mb/s: BlockAck 32 us, ACK 28 us.
        assert_eq!(control_response_rate(&BASIC, mcs(7)), OfdmRate::R24);
        assert_eq!(block_ack_time(g5, &BASIC, mcs(7)), Nanos::from_us(32));
        assert_eq!(ack_time(g5, &BASIC, mcs(7)), Nanos::from_us(28));
        // MCS 2 (QPSK 3/4 -> 18) -> 12; MCS 8 (BPSK 1/2 on 2 SS -> 6) -> 6.
        assert_eq!(control_response_rate(&BASIC, mcs(2)), OfdmRate::R12);
        assert_eq!(control_response_rate(&BASIC, mcs(8)), OfdmRate::R6);
        assert_eq!(block_ack_time(g5, &BASIC, mcs(8)), Nanos::from_us(20 + 4 * 12));
        assert_eq!(mcs(13).non_ht_reference_rate(), OfdmRate::R48);
        // EIFS after an MCS 7 frame at 5 GHz: 16 + 32 + 34 = 82 us.
        assert_eq!(g5.eifs(estimated_ack_time(mcs(7))), Nanos::from_us(82));
        assert_eq!(estimated_ack_time(mcs(0)), Nanos::from_us(68));
    }

    #[test]
    fn qos_data_overhead_is_38_bytes() {
        assert_eq!(QOS_DATA_OVERHEAD_BYTES, 38);
        assert_eq!(qos_data_mpdu_bytes(1500), 1538);
    }

    #[test]
    fn subframes_are_padded_except_the_last() {
        assert_eq!(ampdu_subframe_bytes(1538), 1544);
        assert_eq!(ampdu_subframe_bytes(1540), 1544);
        assert_eq!(ampdu_bytes([1538]), 1542);
        assert_eq!(ampdu_bytes([1538; 28]), 27 * 1544 + 1542);
        assert_eq!(ampdu_bytes([101, 101, 101]), 108 + 108 + 105);
        assert_eq!(ampdu_bytes([]), 0);
    }

    #[test]
    fn ampdu_fit_stops_at_the_ppdu_time_limit() {
        let t = tx(7, Mhz20, Long);
        // Reference 9.4: 28 x 1538 B fit in 5.484 ms (43 230 B, 5360 us); 29 would take
        // 44 774 B -> ceil(358 214 / 260) = 1378 symbols -> 5548 us.
        let f = ampdu_fit(OfdmBand::Ghz5, t, &AmpduLimits::HT, [1538; 40]);
        assert_eq!(f, AmpduFit { n_mpdus: 28, psdu_bytes: 43_230, txtime: Nanos::from_us(5360) });
        assert!(txtime(OfdmBand::Ghz5, t, 43_230 + 1544) > HT_MF_PPDU_MAX_TIME);
        // Same at 2.4 GHz: the signal extension does not count against the limit.
        let f24 = ampdu_fit(OfdmBand::Ghz24ShortSlot, t, &AmpduLimits::HT, [1538; 40]);
        assert_eq!((f24.n_mpdus, f24.txtime), (28, Nanos::from_us(5366)));
    }

    #[test]
    fn ampdu_fit_stops_at_the_linux_4ms_cap() {
        // 20 x 1538 B: 30 878 B, 3840 us; 21 would be 32 422 B -> 998 symbols -> 4028 us.
        let f = ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz20, Long), &AmpduLimits::LINUX, [1538; 64]);
        assert_eq!(f, AmpduFit { n_mpdus: 20, psdu_bytes: 30_878, txtime: Nanos::from_us(3840) });
        // A 3.008 ms TXOP limit (AC_VI): 15 MPDUs, 23 158 B -> ceil(185 286/260) = 713 -> 2888 us;
        // 16 -> 24 702 B -> 761 symbols -> 3080 us.
        let vi = EdcaParams::default_for(AccessCategory::Vi, TxopTable::Ieee2016);
        let lim = AmpduLimits::HT.with_max_duration(vi.txop_limit);
        let f = ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz20, Long), &lim, [1538; 64]);
        assert_eq!((f.n_mpdus, f.psdu_bytes, f.txtime), (15, 23_158, Nanos::from_us(2888)));
        // A limit above aPPDUMaxTime is clamped.
        assert_eq!(AmpduLimits::HT.with_max_duration(Nanos::from_ms(10)), AmpduLimits::HT);
    }

    #[test]
    fn ampdu_fit_stops_at_65535_bytes() {
        // MCS 7 40 MHz LGI: 42 x 1538 B = 64 846 B (3880 us); a 43rd would make 66 390 B.
        let f = ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz40, Long), &AmpduLimits::HT, [1538; 64]);
        assert_eq!(f, AmpduFit { n_mpdus: 42, psdu_bytes: 64_846, txtime: Nanos::from_us(3880) });
        // The exact edge: 65 535 = 15 x 4096 + 4 + 4091, so a 4091-B last MPDU fits, 4092 does not.
        let big = [4092u32; 15]; // each subframe 4096 B
        let with =
            |last| ampdu_fit(OfdmBand::Ghz5, tx(15, Mhz40, Short), &AmpduLimits::HT, big.iter().copied().chain([last]));
        assert_eq!((with(4091).n_mpdus, with(4091).psdu_bytes), (16, 65_535));
        assert_eq!(with(4092).n_mpdus, 15);
    }

    #[test]
    fn ampdu_fit_stops_at_64_mpdus_and_at_oversize_mpdus() {
        // 100 tiny MPDUs at MCS 15 40 MHz: only the count limits.
        let f = ampdu_fit(OfdmBand::Ghz5, tx(15, Mhz40, Short), &AmpduLimits::HT, [100; 100]);
        assert_eq!((f.n_mpdus, f.psdu_bytes), (64, 63 * 104 + 104));
        let eight = AmpduLimits { max_mpdus: 8, ..AmpduLimits::HT };
        assert_eq!(ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz20, Long), &eight, [1538; 64]).n_mpdus, 8);
        // An MPDU over 4095 B cannot be in an HT A-MPDU: it ends the aggregate.
        let f = ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz20, Long), &AmpduLimits::HT, [1538, 4096, 1538]);
        assert_eq!(f.n_mpdus, 1);
        let f = ampdu_fit(OfdmBand::Ghz5, tx(7, Mhz20, Long), &AmpduLimits::HT, [4096]);
        assert_eq!(f, AmpduFit { n_mpdus: 0, psdu_bytes: 0, txtime: Nanos::ZERO });
        // At MCS 0 a 4095-B MPDU alone exceeds a 1 ms cap: nothing fits.
        let ms1 = AmpduLimits::HT.with_max_duration(Nanos::from_ms(1));
        assert_eq!(ampdu_fit(OfdmBand::Ghz5, tx(0, Mhz20, Long), &ms1, [4095]).n_mpdus, 0);
    }

    /// One row of reference 9.4: what is offered and what the reference computed.
    struct Row94 {
        case: &'static str,
        tx: HtTxVector,
        /// `None`: no aggregation, one MPDU answered by a normal ACK.
        limits: Option<AmpduLimits>,
        offered: usize,
        n_mpdus: u32,
        psdu_bytes: u32,
        ppdu_us: u64,
        mbps: f64,
    }

    /// Reference 9.4: one station, no collisions, AC_BE at 5 GHz. Cycle = AIFS 43 + mean backoff
    /// 7.5 slots (67.5 us) + PPDU + SIFS 16 + response (BlockAck, or ACK without aggregation),
    /// counting 1500 B of IP datagram per MPDU. Returns (MPDUs, PSDU bytes, PPDU, Mb/s).
    fn single_station(row: &Row94) -> (u32, u32, Nanos, f64) {
        let g5 = OfdmBand::Ghz5;
        let be = EdcaParams::default_for(AccessCategory::Be, TxopTable::Ieee2016);
        let mpdu = qos_data_mpdu_bytes(1500);
        let mcs = row.tx.mcs;
        let (n, psdu, ppdu, response) = match &row.limits {
            Some(l) => {
                let f = ampdu_fit(g5, row.tx, l, (0..row.offered).map(|_| mpdu));
                let ba = block_ack_time(g5, &BASIC, mcs);
                (f.n_mpdus, f.psdu_bytes, f.txtime, ba)
            }
            None => (1, mpdu, txtime(g5, row.tx, mpdu), ack_time(g5, &BASIC, mcs)),
        };
        let cycle = be.aifs(g5) + be.mean_backoff(g5) + ppdu + g5.sifs() + response;
        let mbps = (n as f64 * 1500.0 * 8.0) / cycle.as_ns() as f64 * 1e3;
        (n, psdu, ppdu, mbps)
    }

    #[test]
    fn single_station_mcs7_throughput_matches_reference_9_4() {
        // MPDU count, PSDU bytes and PPDU us must be equal; the reference prints Mb/s to two
        // decimals, and we must agree to that rounding (+-0.005 Mb/s).
        let over_ppdu_max = AmpduLimits { max_duration: Nanos::from_ms(10), ..AmpduLimits::HT };
        let lgi20 = tx(7, Mhz20, Long);
        #[rustfmt::skip]
        let rows = [
            Row94 { case: "32 x 1500 B (over 5.484 ms)", tx: lgi20, limits: Some(over_ppdu_max),
                offered: 32, n_mpdus: 32, psdu_bytes: 49_406, ppdu_us: 6120, mbps: 61.16 },
            Row94 { case: "largest within 5.484 ms", tx: lgi20, limits: Some(AmpduLimits::HT),
                offered: 64, n_mpdus: 28, psdu_bytes: 43_230, ppdu_us: 5360, mbps: 60.89 },
            Row94 { case: "within 4 ms", tx: lgi20, limits: Some(AmpduLimits::LINUX),
                offered: 64, n_mpdus: 20, psdu_bytes: 30_878, ppdu_us: 3840, mbps: 60.02 },
            Row94 { case: "no aggregation, normal ACK", tx: lgi20, limits: None,
                offered: 1, n_mpdus: 1, psdu_bytes: 1538, ppdu_us: 228, mbps: 31.37 },
            Row94 { case: "SGI within 5.484 ms", tx: tx(7, Mhz20, Short),
                limits: Some(AmpduLimits::HT),
                offered: 64, n_mpdus: 31, psdu_bytes: 47_862, ppdu_us: 5340, mbps: 67.65 },
            Row94 { case: "40 MHz within 65 535 B", tx: tx(7, Mhz40, Long),
                limits: Some(AmpduLimits::HT),
                offered: 64, n_mpdus: 42, psdu_bytes: 64_846, ppdu_us: 3880, mbps: 124.80 },
        ];
        for row in &rows {
            let (n, psdu, ppdu, mbps) = single_station(row);
            let expected = (row.n_mpdus, row.psdu_bytes, Nanos::from_us(row.ppdu_us));
            assert_eq!((n, psdu, ppdu), expected, "{}", row.case);
            let err = (mbps - row.mbps).abs();
            assert!(err <= 0.005 + 1e-9, "{}: {mbps:.4} vs {}", row.case, row.mbps);
        }
    }
}
