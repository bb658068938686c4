//! 802.11ac VHT PHY timing (IEEE 802.11-2020 clause 21, VHT SU PPDU): MCS 0-9, 1-4 spatial
//! streams, 20/40/80/160 MHz, long (800 ns) and short (400 ns) guard interval, BCC.
//!
//! Arithmetic (802.11-2020 21.4.3 TXTIME, 21.5 MCS tables):
//! - N_DBPS = N_SD x N_BPSCS x R x N_SS with N_SD = 52, 108, 234, 468 data subcarriers.
//! - Preamble: L-STF 8 + L-LTF 8 + L-SIG 4 + VHT-SIG-A 8 + VHT-STF 4 + 4 us per VHT-LTF +
//!   VHT-SIG-B 4 = 36 + 4 N_VHTLTF us, N_VHTLTF = 1, 2, 4, 4 for 1-4 streams (Table 21-13).
//! - Data: N_SYM = ceil((16 + 8 L + 6 N_ES) / N_DBPS); long GI: 4 us x N_SYM; short GI:
//!   4 us x ceil(3.6 us x N_SYM / 4 us) (eq. 21-104/21-105), as for HT.
//! - N_ES (BCC encoders): one per 540 Mb/s of long-GI rate, i.e. ceil(N_DBPS / 2160), with the
//!   one exception Tables 21-30 to 21-61 list for up to 4 streams (160 MHz, 4 SS, MCS 7: 6),
//!   as ns-3 3.44 `VhtPhy::GetNumberBccEncoders` also computes it.
//! - Combinations the standard excludes (N_DBPS or N_DBPS/N_ES not an integer) for up to 4
//!   streams: MCS 9 at 20 MHz with 1, 2 or 4 streams, MCS 6 at 80 MHz with 3, MCS 9 at 160 MHz
//!   with 3 (ns-3 `VhtPhy::IsCombinationAllowed`).
//!
//! Not modelled: LDPC's extra symbol, STBC, 80+80 MHz, 5-8 streams, VHT MU-MIMO. VHT exists
//! only at 5 GHz (and 6 GHz is HE-only); the scenario parser refuses 2.4 GHz.

use crate::phy::error_rate::{DenseQam, ErrMode, OfdmRate};
use crate::phy::ht::GuardInterval;
use crate::phy::ofdm;
use crate::time::Nanos;

/// Channel width of a VHT or HE PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Width {
    Mhz20,
    Mhz40,
    Mhz80,
    Mhz160,
}

impl Width {
    pub const ALL: [Width; 4] = [Width::Mhz20, Width::Mhz40, Width::Mhz80, Width::Mhz160];

    pub const fn mhz(self) -> u32 {
        match self {
            Width::Mhz20 => 20,
            Width::Mhz40 => 40,
            Width::Mhz80 => 80,
            Width::Mhz160 => 160,
        }
    }

    pub const fn from_mhz(mhz: u32) -> Option<Width> {
        match mhz {
            20 => Some(Width::Mhz20),
            40 => Some(Width::Mhz40),
            80 => Some(Width::Mhz80),
            160 => Some(Width::Mhz160),
            _ => None,
        }
    }
}

/// VHT data subcarriers per width (Table 21-5): 52, 108, 234, 468.
pub const fn n_sd(width: Width) -> u32 {
    match width {
        Width::Mhz20 => 52,
        Width::Mhz40 => 108,
        Width::Mhz80 => 234,
        Width::Mhz160 => 468,
    }
}

/// Highest VHT MCS index.
pub const MAX_MCS: u8 = 9;
/// Spatial streams modelled (the standard goes to 8).
pub const MAX_NSS: u8 = 4;

/// Bits per subcarrier and code rate (numerator, denominator) of VHT/HE MCS `mcs` (0-11; 10
/// and 11 are HE's 1024-QAM): Table 21-30ff and 27-55ff.
pub const fn modulation_and_rate(mcs: u8) -> (u32, u32, u32) {
    match mcs {
        0 => (1, 1, 2),
        1 => (2, 1, 2),
        2 => (2, 3, 4),
        3 => (4, 1, 2),
        4 => (4, 3, 4),
        5 => (6, 2, 3),
        6 => (6, 3, 4),
        7 => (6, 5, 6),
        8 => (8, 3, 4),
        9 => (8, 5, 6),
        10 => (10, 3, 4),
        _ => (10, 5, 6),
    }
}

/// The non-HT reference rate of a VHT/HE MCS (802.11-2020 10.6.6.5.2, ns-3
/// `VhtPhy::GetNonHtReferenceRate`): the legacy rate of the same modulation and code rate;
/// 64-QAM 5/6 and everything denser map to 54 Mb/s. The (Block)Ack answering the PPDU is chosen
/// from the basic rates as if the PPDU had been sent at this rate.
pub const fn non_ht_reference_rate(mcs: u8) -> OfdmRate {
    match mcs {
        0 => OfdmRate::R6,
        1 => OfdmRate::R12,
        2 => OfdmRate::R18,
        3 => OfdmRate::R24,
        4 => OfdmRate::R36,
        5 => OfdmRate::R48,
        _ => OfdmRate::R54,
    }
}

/// The error model's mode for VHT/HE MCS `mcs` (0-11) under NIST: MCS 0-6 are the legacy rate
/// of the same modulation and code rate (the non-HT reference rate), MCS 7-11 [`DenseQam`].
pub const fn error_mode(mcs: u8) -> ErrMode {
    match mcs {
        7 => ErrMode::NistQam(DenseQam::Q64R5_6),
        8 => ErrMode::NistQam(DenseQam::Q256R3_4),
        9 => ErrMode::NistQam(DenseQam::Q256R5_6),
        10 => ErrMode::NistQam(DenseQam::Q1024R3_4),
        11 => ErrMode::NistQam(DenseQam::Q1024R5_6),
        m => ErrMode::nist(non_ht_reference_rate(m)),
    }
}

/// Whether the standard defines VHT MCS `mcs` with `nss` streams at `width` (see the module
/// comment); `mcs` <= 9 and 1 <= `nss` <= 4 are assumed.
pub const fn combination_allowed(mcs: u8, width: Width, nss: u8) -> bool {
    !matches!((mcs, width, nss), (9, Width::Mhz20, 1 | 2 | 4) | (6, Width::Mhz80, 3) | (9, Width::Mhz160, 3))
}

/// The transmit vector of a VHT SU PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VhtTxVector {
    pub mcs: u8,
    pub nss: u8,
    pub width: Width,
    pub gi: GuardInterval,
}

impl VhtTxVector {
    /// `None` for an MCS above 9, streams outside 1-4, or an excluded combination.
    pub const fn new(mcs: u8, nss: u8, width: Width, gi: GuardInterval) -> Option<VhtTxVector> {
        if mcs > MAX_MCS || nss == 0 || nss > MAX_NSS || !combination_allowed(mcs, width, nss) {
            return None;
        }
        Some(VhtTxVector { mcs, nss, width, gi })
    }

    /// Data bits per symbol over all streams.
    pub const fn n_dbps(self) -> u32 {
        let (bpscs, num, den) = modulation_and_rate(self.mcs);
        n_sd(self.width) * bpscs * self.nss as u32 * num / den
    }

    /// BCC encoders.
    pub const fn n_es(self) -> u32 {
        if matches!((self.width, self.nss, self.mcs), (Width::Mhz160, 4, 7)) {
            return 6;
        }
        self.n_dbps().div_ceil(2160)
    }

    /// PHY data rate in bit/s, rounded down (390 000 000 for MCS 9, 1 SS, 80 MHz, long GI).
    pub const fn bits_per_second(self) -> u64 {
        self.n_dbps() as u64 * 1_000_000_000 / self.gi.symbol().as_ns()
    }

    pub fn mbps(self) -> f64 {
        self.n_dbps() as f64 * 1e3 / self.gi.symbol().as_ns() as f64
    }
}

/// VHT-LTFs for `nss` streams without STBC (Table 21-13).
pub const fn vht_ltf_count(nss: u8) -> u32 {
    match nss {
        1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

/// L-STF + L-LTF + L-SIG + VHT-SIG-A + VHT-STF + VHT-LTFs + VHT-SIG-B: 40 us (1 SS), 44 us
/// (2 SS), 52 us (3-4 SS).
pub const fn preamble(nss: u8) -> Nanos {
    Nanos::from_us(16 + 4 + 8 + 4 + 4 * vht_ltf_count(nss) as u64 + 4)
}

/// TXTIME of a VHT SU PPDU carrying `psdu_bytes` (802.11-2020 eq. 21-104/21-105). Every VHT
/// PPDU is an A-MPDU (a lone MPDU goes as an S-MPDU); the caller passes the A-MPDU length.
#[inline]
pub fn txtime(tx: VhtTxVector, psdu_bytes: u32) -> Nanos {
    let n_sym = ofdm::n_sym(psdu_bytes, tx.n_dbps(), tx.n_es());
    let data_4us = match tx.gi {
        GuardInterval::Long => n_sym,
        GuardInterval::Short => (9 * n_sym).div_ceil(10),
    };
    preamble(tx.nss) + Nanos(4_000 * data_4us)
}

/// Largest VHT A-MPDU: maximum A-MPDU length exponent 7, 2^20 - 1 octets (9.4.2.157.2).
pub const AMPDU_MAX_BYTES: u32 = (1 << 20) - 1;

#[cfg(test)]
mod tests {
    use super::*;
    use GuardInterval::*;
    use Width::*;

    fn v(mcs: u8, nss: u8, w: Width, gi: GuardInterval) -> VhtTxVector {
        VhtTxVector::new(mcs, nss, w, gi).unwrap()
    }

    #[test]
    fn rates_match_the_standard_tables() {
        // 802.11-2020 Tables 21-30 (20 MHz), 21-38 (40), 21-46 (80), 21-54 (160), NSS 1,
        // Mb/s as printed (one decimal): [long GI, short GI].
        let t80: [[f64; 2]; 10] = [
            [29.3, 32.5],
            [58.5, 65.0],
            [87.8, 97.5],
            [117.0, 130.0],
            [175.5, 195.0],
            [234.0, 260.0],
            [263.3, 292.5],
            [292.5, 325.0],
            [351.0, 390.0],
            [390.0, 433.3],
        ];
        for (m, row) in t80.iter().enumerate() {
            for (g, gi) in [Long, Short].into_iter().enumerate() {
                let r = (v(m as u8, 1, Mhz80, gi).mbps() * 10.0).round() / 10.0;
                assert_eq!(r, row[g], "MCS {m} {gi:?}");
            }
        }
        let one = |m, n, w, g| (v(m, n, w, g).mbps() * 10.0).round() / 10.0;
        assert_eq!(one(8, 1, Mhz20, Long), 78.0);
        assert_eq!(one(8, 1, Mhz20, Short), 86.7);
        assert_eq!(one(9, 3, Mhz20, Short), 288.9);
        assert_eq!(one(9, 1, Mhz40, Long), 180.0);
        assert_eq!(one(9, 1, Mhz40, Short), 200.0);
        assert_eq!(one(9, 2, Mhz80, Short), 866.7);
        assert_eq!(one(9, 1, Mhz160, Short), 866.7);
        assert_eq!(one(9, 2, Mhz160, Short), 1733.3);
        assert_eq!(one(9, 4, Mhz160, Short), 3466.7);
        assert_eq!(one(0, 1, Mhz20, Long), 6.5);
        assert_eq!(v(9, 1, Mhz80, Long).bits_per_second(), 390_000_000);
    }

    #[test]
    fn excluded_combinations_are_refused() {
        for nss in [1, 2, 4] {
            assert_eq!(VhtTxVector::new(9, nss, Mhz20, Long), None);
        }
        assert!(VhtTxVector::new(9, 3, Mhz20, Long).is_some());
        assert_eq!(VhtTxVector::new(6, 3, Mhz80, Short), None);
        assert_eq!(VhtTxVector::new(9, 3, Mhz160, Short), None);
        assert_eq!(VhtTxVector::new(10, 1, Mhz80, Long), None);
        assert_eq!(VhtTxVector::new(0, 5, Mhz80, Long), None);
        assert_eq!(VhtTxVector::new(0, 0, Mhz80, Long), None);
        // The rule behind the first two: N_DBPS (or N_DBPS / N_ES) is not an integer.
        let (b, num, den) = modulation_and_rate(9);
        for nss in [1u32, 2, 4] {
            assert_ne!(n_sd(Mhz20) * b * nss * num % den, 0);
        }
        let t = VhtTxVector { mcs: 6, nss: 3, width: Mhz80, gi: Long };
        assert_eq!((t.n_dbps(), t.n_es()), (3159, 2));
        assert_ne!(t.n_dbps() % t.n_es(), 0);
        // Every allowed combination up to 4 streams has N_DBPS divisible by N_ES.
        for w in Width::ALL {
            for nss in 1..=4 {
                for mcs in 0..=9 {
                    if let Some(t) = VhtTxVector::new(mcs, nss, w, Long) {
                        assert_eq!(t.n_dbps() % t.n_es(), 0, "{t:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn encoders_follow_the_tables() {
        // Tables 21-46ff: 80 MHz 1 SS MCS 9 (1560 bits): 1; 80 MHz 2 SS MCS 9: 2; 80 MHz 4 SS
        // MCS 9: 3; 160 MHz 4 SS MCS 9: 6; the listed exception 160 MHz 4 SS MCS 7: 6.
        assert_eq!(v(9, 1, Mhz80, Long).n_es(), 1);
        assert_eq!(v(9, 2, Mhz80, Long).n_es(), 2);
        assert_eq!(v(9, 4, Mhz80, Long).n_es(), 3);
        assert_eq!(v(9, 4, Mhz160, Long).n_es(), 6);
        assert_eq!(v(7, 4, Mhz160, Long).n_es(), 6);
        assert_eq!(v(8, 2, Mhz40, Long).n_es(), 1);
    }

    #[test]
    fn txtime_hand_computed() {
        assert_eq!(preamble(1), Nanos::from_us(40));
        assert_eq!(preamble(2), Nanos::from_us(44));
        assert_eq!(preamble(3), Nanos::from_us(52));
        assert_eq!(preamble(4), Nanos::from_us(52));
        // MCS 9, 1 SS, 80 MHz, long GI, 1542-B S-MPDU: ceil((16 + 12336 + 6) / 1560) = 8
        // symbols -> 40 + 32 = 72 us.
        assert_eq!(txtime(v(9, 1, Mhz80, Long), 1542), Nanos::from_us(72));
        // Short GI: 8 x 3.6 = 28.8 -> 4 x ceil(7.2) = 32 us -> 72 us.
        assert_eq!(txtime(v(9, 1, Mhz80, Short), 1542), Nanos::from_us(72));
        // MCS 9, 2 SS, 80 MHz, short GI (3120 bits, 2 encoders), 64 x 1544-B subframes less the
        // last padding (98 814 B): ceil((16 + 790 512 + 12) / 3120) = 254 symbols -> 914.4 us
        // -> 4 x ceil(228.6) = 916 us; + 44 = 960 us.
        assert_eq!(txtime(v(9, 2, Mhz80, Short), 98_814), Nanos::from_us(960));
        // MCS 0, 1 SS, 20 MHz, long GI: 1542 B -> ceil(12358 / 26) = 476 -> 40 + 1904.
        assert_eq!(txtime(v(0, 1, Mhz20, Long), 1542), Nanos::from_us(1944));
        // 160 MHz 4 SS MCS 9 (N_DBPS 12 480, 6 encoders), 1000 B: ceil(8052 / 12480) = 1.
        assert_eq!(txtime(v(9, 4, Mhz160, Long), 1000), Nanos::from_us(56));
        // Every VHT PPDU is on the 4 us grid.
        for w in Width::ALL {
            for nss in 1..=4 {
                for mcs in 0..=9 {
                    if let Some(t) = VhtTxVector::new(mcs, nss, w, Short) {
                        for len in [1, 333, 1542, 65_535, 1_048_575] {
                            assert_eq!(txtime(t, len).as_ns() % 4_000, 0);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn reference_rates() {
        assert_eq!(non_ht_reference_rate(9), OfdmRate::R54);
        assert_eq!(non_ht_reference_rate(8), OfdmRate::R54);
        assert_eq!(non_ht_reference_rate(4), OfdmRate::R36);
    }

    #[test]
    fn vht_he_modes_need_more_snr_as_the_mcs_grows() {
        // The SNR (dB) where a 1500-byte frame has a 10 % error rate rises with every MCS
        // (NIST, 802.11-2020 Table 21-30 order); 1024-QAM needs well over 256-QAM's.
        let need: Vec<f64> = (0..=11)
            .map(|m| crate::phy::error_rate::snr_for_per(error_mode(m), crate::phy::dsss::Preamble::Long, 1500, 0.1))
            .collect();
        for w in need.windows(2) {
            assert!(w[1] > w[0], "{need:?}");
        }
        assert!(need[11] - need[9] > 4.0 && need[9] - need[7] > 4.0, "{need:?}");
        // MCS 0-6 are exactly the legacy rates'.
        assert_eq!(error_mode(4), ErrMode::nist(OfdmRate::R36));
        // 64-QAM 5/6 needs more than 64-QAM 3/4 (the 54 Mb/s curve HT MCS 7 uses).
        assert!(
            need[7]
                > crate::phy::error_rate::snr_for_per(
                    ErrMode::nist(OfdmRate::R54),
                    crate::phy::dsss::Preamble::Long,
                    1500,
                    0.1
                )
        );
    }
}
