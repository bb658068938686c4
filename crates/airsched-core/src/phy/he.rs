//! 802.11ax HE PHY timing (IEEE 802.11ax-2021 clause 27): HE SU, HE ER SU, HE MU and HE TB
//! PPDUs; MCS 0-11, 1-4 spatial streams, 20-160 MHz, resource units of 26 to 2x996 tones,
//! guard interval 0.8/1.6/3.2 us, HE-LTF 1x/2x/4x, 12.8 us symbols, packet extension; 2.4, 5
//! and 6 GHz.
//!
//! Arithmetic (802.11ax-2021 27.3.12 and 27.4.3):
//! - N_DBPS = floor(N_SD x N_BPSCS x N_SS x R), N_SD of the RU ([`RuSize::n_sd`]: 24, 48, 102,
//!   234, 468, 980, 1960); T_SYM = 12.8 us + GI.
//! - TXTIME = 20 us (L-STF, L-LTF, L-SIG) + T_HE-PREAMBLE + N_SYM x T_SYM + T_PE + signal
//!   extension (6 us at 2.4 GHz), with T_HE-PREAMBLE = RL-SIG 4 + HE-SIG-A (8, 16 in ER SU) +
//!   HE-SIG-B (MU: 4 us per symbol) + HE-STF (4, 8 in TB) + N_HE-LTF x (HE-LTF + GI), HE-LTF
//!   3.2/6.4/12.8 us for 1x/2x/4x, N_HE-LTF = 1, 2, 4, 4 for 1-4 streams.
//! - Pre-FEC padding (27.3.12.2, eq. 27-62..27-65, LDPC: no tail bits): N_SYM,init =
//!   ceil((8 L + 16) / N_DBPS), N_excess = (8 L + 16) mod N_DBPS, a = 4 if N_excess = 0 else
//!   min(4, ceil(N_excess / N_DBPS,short)), N_DBPS,short = floor(N_SD,short x N_BPSCS x N_SS x R).
//! - Packet extension (Table 27-46 as a formula): T_PE = max(0, nominal - 4 us x (4 - a)) for a
//!   nominal packet padding of 0, 8 or 16 us (what the receiver advertised).
//!
//! Deviations, all documented in docs/model-vht-he.md: the LDPC extra symbol segment (which
//! adds one quarter symbol in some cases) is not modelled; no STBC, no DCM, no midambles.
//! ns-3 3.44 differs in three ways the docs list: it counts 6 tail bits (BCC), every HE-LTF as
//! 8 us whatever the type and GI, and no packet extension.

use crate::phy::vht::{self, Width};
use crate::phy::{error_rate::OfdmRate, ofdm::OfdmBand};
use crate::time::Nanos;

/// Highest HE MCS index.
pub const MAX_MCS: u8 = 11;
/// Spatial streams modelled (the standard goes to 8).
pub const MAX_NSS: u8 = 4;

/// Guard interval of the HE data field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeGi {
    Us0_8,
    Us1_6,
    Us3_2,
}

crate::words::words!(HeGi: "0.8us" => HeGi::Us0_8, "1.6us" => HeGi::Us1_6, "3.2us" => HeGi::Us3_2);

impl HeGi {
    pub const fn ns(self) -> u64 {
        match self {
            HeGi::Us0_8 => 800,
            HeGi::Us1_6 => 1600,
            HeGi::Us3_2 => 3200,
        }
    }

    /// Data symbol: 12.8 us + GI (13.6, 14.4, 16 us).
    pub const fn symbol(self) -> Nanos {
        Nanos(12_800 + self.ns())
    }
}

/// HE-LTF compression: its symbol lasts 3.2, 6.4 or 12.8 us before the GI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeLtf {
    X1,
    X2,
    X4,
}

crate::words::words!(HeLtf: "1x" => HeLtf::X1, "2x" => HeLtf::X2, "4x" => HeLtf::X4);

impl HeLtf {
    /// One HE-LTF symbol with its GI.
    pub const fn symbol(self, gi: HeGi) -> Nanos {
        let base = match self {
            HeLtf::X1 => 3_200,
            HeLtf::X2 => 6_400,
            HeLtf::X4 => 12_800,
        };
        Nanos(base + gi.ns())
    }
}

/// The HE PPDU formats (27.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeFormat {
    /// HE single-user PPDU.
    Su,
    /// HE extended-range SU: HE-SIG-A repeated (16 us), 242-tone or upper 106-tone RU, MCS 0-2,
    /// one stream.
    ErSu,
    /// HE multi-user (downlink OFDMA/MU-MIMO): HE-SIG-B.
    Mu,
    /// HE trigger-based (uplink, answering a Trigger frame): 8 us HE-STF, no HE-SIG-B.
    Tb,
}

/// Whether the standard allows HE-LTF `ltf` with `gi` in `format` (27.3.11.10, Table 27-1
/// "HE-LTF type and GI duration"): SU and ER SU: 1x+0.8 (SU only), 2x+0.8, 2x+1.6, 4x+0.8,
/// 4x+3.2; MU: 2x+0.8, 2x+1.6, 4x+0.8, 4x+3.2; TB: 1x+1.6, 2x+1.6, 4x+3.2.
pub const fn ltf_gi_allowed(format: HeFormat, ltf: HeLtf, gi: HeGi) -> bool {
    use HeGi::*;
    use HeLtf::*;
    match format {
        HeFormat::Su => matches!((ltf, gi), (X1, Us0_8) | (X2, Us0_8 | Us1_6) | (X4, Us0_8 | Us3_2)),
        HeFormat::ErSu | HeFormat::Mu => matches!((ltf, gi), (X2, Us0_8 | Us1_6) | (X4, Us0_8 | Us3_2)),
        HeFormat::Tb => matches!((ltf, gi), (X1, Us1_6) | (X2, Us1_6) | (X4, Us3_2)),
    }
}

/// A resource unit size (27.3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuSize {
    Tones26,
    Tones52,
    Tones106,
    Tones242,
    Tones484,
    Tones996,
    Tones2x996,
}

impl RuSize {
    pub const ALL: [RuSize; 7] = [
        RuSize::Tones26,
        RuSize::Tones52,
        RuSize::Tones106,
        RuSize::Tones242,
        RuSize::Tones484,
        RuSize::Tones996,
        RuSize::Tones2x996,
    ];

    pub const fn tones(self) -> u32 {
        match self {
            RuSize::Tones26 => 26,
            RuSize::Tones52 => 52,
            RuSize::Tones106 => 106,
            RuSize::Tones242 => 242,
            RuSize::Tones484 => 484,
            RuSize::Tones996 => 996,
            RuSize::Tones2x996 => 2 * 996,
        }
    }

    /// Data subcarriers N_SD (Table 27-13..27-17 and 27-51ff).
    pub const fn n_sd(self) -> u32 {
        match self {
            RuSize::Tones26 => 24,
            RuSize::Tones52 => 48,
            RuSize::Tones106 => 102,
            RuSize::Tones242 => 234,
            RuSize::Tones484 => 468,
            RuSize::Tones996 => 980,
            RuSize::Tones2x996 => 1960,
        }
    }

    /// N_SD,short, the data subcarriers of a quarter symbol (Table 27-33).
    pub const fn n_sd_short(self) -> u32 {
        match self {
            RuSize::Tones26 => 6,
            RuSize::Tones52 => 12,
            RuSize::Tones106 => 24,
            RuSize::Tones242 => 60,
            RuSize::Tones484 => 120,
            RuSize::Tones996 => 240,
            RuSize::Tones2x996 => 492,
        }
    }

    /// The RU that fills a channel of `width` (an SU PPDU).
    pub const fn of_width(width: Width) -> RuSize {
        match width {
            Width::Mhz20 => RuSize::Tones242,
            Width::Mhz40 => RuSize::Tones484,
            Width::Mhz80 => RuSize::Tones996,
            Width::Mhz160 => RuSize::Tones2x996,
        }
    }

    /// How many RUs of this size a channel of `width` holds (Table 27-7ff; a 20 MHz channel
    /// holds 9 x 26, 4 x 52, 2 x 106 or 1 x 242; 80 MHz 37 x 26 with the centre one).
    pub const fn per_channel(self, width: Width) -> u32 {
        let per20 = match self {
            RuSize::Tones26 => 9,
            RuSize::Tones52 => 4,
            RuSize::Tones106 => 2,
            RuSize::Tones242 => 1,
            _ => 0,
        };
        match (self, width) {
            (RuSize::Tones484, Width::Mhz20) => 0,
            (RuSize::Tones484, w) => w.mhz() / 40,
            (RuSize::Tones996, Width::Mhz80) => 1,
            (RuSize::Tones996, Width::Mhz160) => 2,
            (RuSize::Tones2x996, Width::Mhz160) => 1,
            (RuSize::Tones996 | RuSize::Tones2x996, _) => 0,
            // 80 MHz has one more 26-tone RU in its centre; 160 MHz two.
            (RuSize::Tones26, w) => per20 * w.mhz() / 20 + w.mhz() / 80,
            (_, w) => per20 * w.mhz() / 20,
        }
    }
}

/// Data bits per symbol of HE MCS `mcs` with `nss` streams on an RU of `ru`, and of a quarter
/// symbol (N_DBPS, N_DBPS,short), rounded down as Tables 27-55ff print them.
pub const fn n_dbps(mcs: u8, nss: u8, ru: RuSize) -> (u32, u32) {
    let (bpscs, num, den) = vht::modulation_and_rate(mcs);
    let full = ru.n_sd() * bpscs * nss as u32 * num / den;
    let short = ru.n_sd_short() * bpscs * nss as u32 * num / den;
    (full, short)
}

/// Whether HE MCS `mcs` exists on `ru` with `nss` streams: 1024-QAM (MCS 10, 11) only on RUs
/// of 242 tones and more (27.5).
pub const fn mcs_allowed(mcs: u8, nss: u8, ru: RuSize) -> bool {
    mcs <= MAX_MCS && nss >= 1 && nss <= MAX_NSS && (mcs < 10 || ru.tones() >= 242)
}

/// The receiver's nominal packet padding (27.3.13, its PPE thresholds): 0, 8 or 16 us.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketPadding {
    Us0,
    Us8,
    Us16,
}

crate::words::words!(PacketPadding: "0us" => PacketPadding::Us0, "8us" => PacketPadding::Us8, "16us" => PacketPadding::Us16);

impl PacketPadding {
    pub const fn ns(self) -> u64 {
        match self {
            PacketPadding::Us0 => 0,
            PacketPadding::Us8 => 8_000,
            PacketPadding::Us16 => 16_000,
        }
    }

    /// T_PE for pre-FEC padding factor `a` (1-4).
    pub const fn pe(self, a: u32) -> Nanos {
        Nanos(self.ns().saturating_sub(4_000 * (4 - a as u64)))
    }
}

/// The transmit vector of an HE SU or ER SU PPDU (and of one user of an MU/TB PPDU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeTxVector {
    pub format: HeFormat,
    pub mcs: u8,
    pub nss: u8,
    pub ru: RuSize,
    pub gi: HeGi,
    pub ltf: HeLtf,
    pub padding: PacketPadding,
}

impl HeTxVector {
    /// An HE SU transmit vector over the whole of `width`; `None` if the MCS, streams or
    /// HE-LTF/GI pair is not allowed.
    pub const fn su(
        mcs: u8,
        nss: u8,
        width: Width,
        gi: HeGi,
        ltf: HeLtf,
        padding: PacketPadding,
    ) -> Option<HeTxVector> {
        let ru = RuSize::of_width(width);
        if !mcs_allowed(mcs, nss, ru) || !ltf_gi_allowed(HeFormat::Su, ltf, gi) {
            return None;
        }
        Some(HeTxVector { format: HeFormat::Su, mcs, nss, ru, gi, ltf, padding })
    }

    /// An HE ER SU transmit vector (20 MHz: 242 tones, or the upper 106 tones), MCS 0-2, one
    /// stream.
    pub const fn er_su(mcs: u8, ru106: bool, gi: HeGi, ltf: HeLtf, padding: PacketPadding) -> Option<HeTxVector> {
        if mcs > 2 || !ltf_gi_allowed(HeFormat::ErSu, ltf, gi) {
            return None;
        }
        let ru = if ru106 { RuSize::Tones106 } else { RuSize::Tones242 };
        Some(HeTxVector { format: HeFormat::ErSu, mcs, nss: 1, ru, gi, ltf, padding })
    }

    pub const fn n_dbps(self) -> u32 {
        n_dbps(self.mcs, self.nss, self.ru).0
    }

    /// PHY data rate in bit/s, rounded down.
    pub const fn bits_per_second(self) -> u64 {
        self.n_dbps() as u64 * 1_000_000_000 / self.gi.symbol().as_ns()
    }

    pub fn mbps(self) -> f64 {
        self.n_dbps() as f64 * 1e3 / self.gi.symbol().as_ns() as f64
    }

    /// (N_SYM, a) for a PSDU of `psdu_bytes` (pre-FEC padding, LDPC).
    pub const fn n_sym_a(self, psdu_bytes: u32) -> (u64, u32) {
        let (full, short) = n_dbps(self.mcs, self.nss, self.ru);
        let bits = 8 * psdu_bytes as u64 + 16;
        let n_sym = bits.div_ceil(full as u64);
        let excess = bits % full as u64;
        let a = if excess == 0 {
            4
        } else {
            let q = excess.div_ceil(short as u64);
            if q > 4 {
                4
            } else {
                q as u32
            }
        };
        (n_sym, a)
    }

    /// The HE preamble after L-SIG for a PPDU of this format (`sigb_symbols` of HE-SIG-B in an
    /// MU PPDU, ignored otherwise).
    pub const fn he_preamble(self, sigb_symbols: u32) -> Nanos {
        let sig_a = match self.format {
            HeFormat::ErSu => 16_000,
            _ => 8_000,
        };
        let sig_b = match self.format {
            HeFormat::Mu => 4_000 * sigb_symbols as u64,
            _ => 0,
        };
        let stf = match self.format {
            HeFormat::Tb => 8_000,
            _ => 4_000,
        };
        Nanos(4_000 + sig_a + sig_b + stf + vht::vht_ltf_count(self.nss) as u64 * self.ltf.symbol(self.gi).as_ns())
    }

    /// The whole preamble: L-STF, L-LTF, L-SIG (20 us) and the HE preamble.
    pub const fn preamble(self, sigb_symbols: u32) -> Nanos {
        Nanos(20_000 + self.he_preamble(sigb_symbols).as_ns())
    }

    /// The non-HT reference rate of its MCS (the (Block)Ack's rate rule).
    pub const fn non_ht_reference_rate(self) -> OfdmRate {
        vht::non_ht_reference_rate(self.mcs)
    }
}

/// TXTIME of an HE SU or ER SU PPDU carrying `psdu_bytes` (802.11ax-2021 eq. 27-135).
#[inline]
pub fn txtime(band: HeBand, tx: HeTxVector, psdu_bytes: u32) -> Nanos {
    let (n_sym, a) = tx.n_sym_a(psdu_bytes);
    tx.preamble(0) + Nanos(tx.gi.symbol().as_ns() * n_sym) + tx.padding.pe(a) + band.signal_extension()
}

/// TXTIME of an HE MU PPDU with `sigb_symbols` of HE-SIG-B whose users (RU, MCS, streams and
/// PSDU length each) share GI, HE-LTF and padding; the data field lasts as long as the user
/// needing the most (N_SYM, a), as the common pre-FEC padding of 27.3.12.4 makes it. (Not used
/// by the MAC yet: OFDMA is not modelled.)
#[cfg(test)]
pub fn mu_txtime(band: HeBand, users: &[(HeTxVector, u32)], sigb_symbols: u32) -> Nanos {
    let (first, _) = users[0];
    let (n_sym, a) = users
        .iter()
        .map(|&(t, len)| t.n_sym_a(len))
        .max_by_key(|&(n, a)| (n - 1) * 4 + a as u64)
        .expect("an MU PPDU has a user");
    let ltfs = users.iter().map(|(t, _)| t.nss).max().unwrap_or(1);
    let shape = HeTxVector { format: HeFormat::Mu, nss: ltfs, ..first };
    shape.preamble(sigb_symbols)
        + Nanos(first.gi.symbol().as_ns() * n_sym)
        + first.padding.pe(a)
        + band.signal_extension()
}

/// TXTIME of an HE TB PPDU whose data field the Trigger frame fixed at `n_sym` symbols with
/// pre-FEC padding factor `a` (27.3.12.4). (Not used by the MAC yet: OFDMA is not modelled.)
#[cfg(test)]
pub fn tb_txtime(band: HeBand, tx: HeTxVector, n_sym: u64, a: u32) -> Nanos {
    let shape = HeTxVector { format: HeFormat::Tb, ..tx };
    shape.preamble(0) + Nanos(tx.gi.symbol().as_ns() * n_sym) + tx.padding.pe(a) + band.signal_extension()
}

/// Where an HE BSS operates: timing is 5 GHz's at 5 and 6 GHz (6 GHz is `Ghz5` here), ERP
/// short slot's at 2.4 GHz.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeBand {
    Ghz24,
    Ghz5,
}

impl HeBand {
    /// The OFDM timing (slot, SIFS, signal extension) of the band: 6 GHz has 5 GHz's.
    pub const fn timing(self) -> OfdmBand {
        match self {
            HeBand::Ghz24 => OfdmBand::Ghz24ShortSlot,
            HeBand::Ghz5 => OfdmBand::Ghz5,
        }
    }

    pub const fn signal_extension(self) -> Nanos {
        self.timing().signal_extension()
    }
}

/// Largest HE A-MPDU: maximum A-MPDU length exponent 7 with the HE extension 3, 2^23 - 1
/// octets (9.4.2.248.2); aPPDUMaxTime (5.484 ms) bounds it long before.
pub const AMPDU_MAX_BYTES: u32 = (1 << 23) - 1;
/// Largest BlockAck window of an HE agreement (802.11ax-2021 10.25.2: buffer size up to 256;
/// 512 and 1024 are 802.11be EHT).
pub const BA_WINDOW_MAX: u32 = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use HeGi::*;
    use HeLtf::*;
    use Width::*;

    fn su(mcs: u8, nss: u8, w: Width, gi: HeGi, ltf: HeLtf) -> HeTxVector {
        HeTxVector::su(mcs, nss, w, gi, ltf, PacketPadding::Us0).unwrap()
    }

    fn r1(x: f64) -> f64 {
        (x * 10.0).round() / 10.0
    }

    #[test]
    fn rates_match_the_standard_tables() {
        // 802.11ax-2021 Table 27-55ff, 242-tone RU (20 MHz), 1 SS, Mb/s [0.8, 1.6, 3.2 us GI].
        let t20: [[f64; 3]; 12] = [
            [8.6, 8.1, 7.3],
            [17.2, 16.3, 14.6],
            [25.8, 24.4, 21.9],
            [34.4, 32.5, 29.3],
            [51.6, 48.8, 43.9],
            [68.8, 65.0, 58.5],
            [77.4, 73.1, 65.8],
            [86.0, 81.3, 73.1],
            [103.2, 97.5, 87.8],
            [114.7, 108.3, 97.5],
            [129.0, 121.9, 109.7],
            [143.4, 135.4, 121.9],
        ];
        for (m, row) in t20.iter().enumerate() {
            for (g, (gi, ltf)) in [(Us0_8, X2), (Us1_6, X2), (Us3_2, X4)].into_iter().enumerate() {
                assert_eq!(r1(su(m as u8, 1, Mhz20, gi, ltf).mbps()), row[g], "MCS {m} {gi:?}");
            }
        }
        // 996 tones (80 MHz) 1 SS, 0.8 us: MCS 0 36.0, MCS 9 480.4, MCS 11 600.4 (N_DBPS 8166);
        // 2 SS MCS 11: 1201.0; 160 MHz 2 SS MCS 11: 2401.9.
        assert_eq!(r1(su(0, 1, Mhz80, Us0_8, X2).mbps()), 36.0);
        assert_eq!(r1(su(9, 1, Mhz80, Us0_8, X2).mbps()), 480.4);
        assert_eq!(su(11, 1, Mhz80, Us0_8, X2).n_dbps(), 8166);
        assert_eq!(r1(su(11, 1, Mhz80, Us0_8, X2).mbps()), 600.4);
        assert_eq!(r1(su(11, 2, Mhz80, Us0_8, X2).mbps()), 1201.0);
        assert_eq!(r1(su(11, 2, Mhz160, Us0_8, X2).mbps()), 2401.9);
        assert_eq!(r1(su(11, 1, Mhz40, Us0_8, X2).mbps()), 286.8);
    }

    #[test]
    fn ru_rates_match_the_standard_tables() {
        // Tables 27-55ff, 1 SS, 0.8 us GI: 26-tone MCS 0 0.9, MCS 9 11.8; 52-tone MCS 9 23.5;
        // 106-tone MCS 7 37.5, MCS 9 50.0; 484-tone MCS 11 286.8.
        let rate = |mcs, ru: RuSize| r1(n_dbps(mcs, 1, ru).0 as f64 * 1e3 / 13_600.0);
        assert_eq!(rate(0, RuSize::Tones26), 0.9);
        assert_eq!(rate(9, RuSize::Tones26), 11.8);
        assert_eq!(rate(9, RuSize::Tones52), 23.5);
        assert_eq!(rate(7, RuSize::Tones106), 37.5);
        assert_eq!(rate(9, RuSize::Tones106), 50.0);
        assert_eq!(rate(11, RuSize::Tones484), 286.8);
        assert_eq!(rate(11, RuSize::Tones242), 143.4);
        // 1024-QAM only on 242 tones and more.
        assert!(!mcs_allowed(10, 1, RuSize::Tones106));
        assert!(mcs_allowed(9, 1, RuSize::Tones26));
        assert!(mcs_allowed(11, 4, RuSize::Tones242));
        // RUs per channel (27.3.2.2): 20 MHz 9/4/2/1; 40 MHz 18/8/4/2/1; 80 MHz 37/16/8/4/2/1.
        let per = |w| RuSize::ALL.map(|r| r.per_channel(w));
        assert_eq!(per(Mhz20), [9, 4, 2, 1, 0, 0, 0]);
        assert_eq!(per(Mhz40), [18, 8, 4, 2, 1, 0, 0]);
        assert_eq!(per(Mhz80), [37, 16, 8, 4, 2, 1, 0]);
        assert_eq!(per(Mhz160), [74, 32, 16, 8, 4, 2, 1]);
    }

    #[test]
    fn ltf_and_gi_pairs() {
        assert!(HeTxVector::su(7, 1, Mhz80, Us0_8, X1, PacketPadding::Us0).is_some());
        assert!(HeTxVector::su(7, 1, Mhz80, Us3_2, X2, PacketPadding::Us0).is_none());
        assert!(HeTxVector::su(7, 1, Mhz80, Us1_6, X1, PacketPadding::Us0).is_none());
        assert!(HeTxVector::er_su(2, false, Us0_8, X1, PacketPadding::Us0).is_none());
        assert!(HeTxVector::er_su(3, false, Us0_8, X2, PacketPadding::Us0).is_none());
        assert!(ltf_gi_allowed(HeFormat::Tb, X2, Us1_6));
        assert!(!ltf_gi_allowed(HeFormat::Tb, X2, Us0_8));
        assert_eq!(X1.symbol(Us0_8), Nanos(4_000));
        assert_eq!(X2.symbol(Us0_8), Nanos(7_200));
        assert_eq!(X2.symbol(Us1_6), Nanos(8_000));
        assert_eq!(X4.symbol(Us3_2), Nanos(16_000));
    }

    #[test]
    fn su_txtime_hand_computed() {
        let g5 = HeBand::Ghz5;
        // MCS 11, 2 SS, 80 MHz, 0.8 us GI, 2x HE-LTF: preamble 20 + 4 + 8 + 4 + 2 x 7.2 =
        // 50.4 us. 1542 B: 8 x 1542 + 16 = 12 352 bits, N_DBPS 16 333 -> 1 symbol (13.6 us);
        // excess 12 352, N_DBPS,short = floor(240 x 10 x 2 x 5/6) = 4000 -> a = 4.
        let t = su(11, 2, Mhz80, Us0_8, X2);
        assert_eq!(t.n_dbps(), 16_333);
        assert_eq!(t.n_sym_a(1542), (1, 4));
        assert_eq!(txtime(g5, t, 1542), Nanos(64_000));
        // With a 16 us nominal packet padding the PE is 16 us (a = 4); with 8 us it is 8 us.
        let p16 = HeTxVector { padding: PacketPadding::Us16, ..t };
        assert_eq!(txtime(g5, p16, 1542), Nanos(80_000));
        let p8 = HeTxVector { padding: PacketPadding::Us8, ..t };
        assert_eq!(txtime(g5, p8, 1542), Nanos(72_000));
        // 100 B: 816 bits, a = ceil(816 / 4000) = 1: PE 16 us -> 4 us; 8 us -> 0.
        assert_eq!(t.n_sym_a(100), (1, 1));
        assert_eq!(txtime(g5, p16, 100), Nanos(50_400 + 13_600 + 4_000));
        assert_eq!(txtime(g5, p8, 100), Nanos(50_400 + 13_600));
        // MCS 0, 1 SS, 20 MHz, 3.2 us GI, 4x HE-LTF: preamble 20 + 4 + 8 + 4 + 16 = 52 us;
        // 1542 B: 12 352 / 117 = 105.57 -> 106 symbols of 16 us = 1696 us -> 1748 us.
        let slow = su(0, 1, Mhz20, Us3_2, X4);
        assert_eq!(txtime(g5, slow, 1542), Nanos(1_748_000));
        // The same at 2.4 GHz adds the 6 us signal extension.
        assert_eq!(txtime(HeBand::Ghz24, slow, 1542), Nanos(1_754_000));
        // MCS 7, 1 SS, 20 MHz, 0.8 us, 1x LTF (4 us): 20 + 4 + 8 + 4 + 4 = 40 us; 64 x 1544 B
        // less 2 (98 814 B): 790 528 bits / 1170 = 675.67 -> 676 symbols x 13.6 = 9193.6 us.
        let t7 = su(7, 1, Mhz20, Us0_8, X1);
        assert_eq!(txtime(g5, t7, 98_814), Nanos(40_000 + 676 * 13_600));
        // ER SU: HE-SIG-A lasts 16 us.
        let er = HeTxVector::er_su(0, false, Us0_8, X2, PacketPadding::Us0).unwrap();
        assert_eq!(er.preamble(0), Nanos(20_000 + 4_000 + 16_000 + 4_000 + 7_200));
        assert_eq!(txtime(g5, er, 100), Nanos(51_200 + 7 * 13_600));
    }

    #[test]
    fn mu_and_tb_txtime_hand_computed() {
        let g5 = HeBand::Ghz5;
        let user = |mcs, ru| HeTxVector {
            format: HeFormat::Mu,
            mcs,
            nss: 1,
            ru,
            gi: Us0_8,
            ltf: X2,
            padding: PacketPadding::Us16,
        };
        // Two 106-tone users at 20 MHz, 2 SIG-B symbols. User A MCS 7 (510 bits/symbol) 1000 B:
        // 8016 bits -> 16 symbols (excess 366, N_DBPS,short 120 -> a = 4 ... ceil(366/120) =
        // 4); user B MCS 9 (680) 500 B: 4016 -> 6 symbols. A decides: 16 symbols, a = 4, PE
        // 16 us. 20 + 4 + 8 + 8 (SIG-B) + 4 + 7.2 + 16 x 13.6 + 16.
        let a = user(7, RuSize::Tones106);
        assert_eq!(a.n_sym_a(1000), (16, 4));
        let b = user(9, RuSize::Tones106);
        assert_eq!(b.n_sym_a(500).0, 6);
        let t = mu_txtime(g5, &[(a, 1000), (b, 500)], 2);
        assert_eq!(t, Nanos(20_000 + 4_000 + 8_000 + 8_000 + 4_000 + 7_200 + 16 * 13_600 + 16_000));
        // HE TB: 8 us HE-STF, no SIG-B; 2x LTF with 1.6 us GI (8 us); 10 symbols of 14.4 us,
        // a = 2 with 16 us padding -> PE 8 us.
        let tb = HeTxVector { gi: Us1_6, ..user(5, RuSize::Tones26) };
        assert_eq!(tb_txtime(g5, tb, 10, 2), Nanos(20_000 + 4_000 + 8_000 + 8_000 + 8_000 + 144_000 + 8_000));
    }
}
