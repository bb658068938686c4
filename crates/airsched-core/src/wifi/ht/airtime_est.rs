//! mac80211's airtime estimate for VHT and HE rates, as AQL charges a frame at dequeue
//! (`ieee80211_calc_expected_tx_airtime`, net/mac80211/airtime.c of Linux 6.x, the form with
//! HT, VHT and HE groups and no EHT ones).
//!
//! The kernel keeps, per rate group (streams, GI, width), the data-symbol time of a 1024-byte
//! packet in 1/1024 us, stored right-shifted so it fits 16 bits (losing the low bits); a
//! frame's estimate is that time scaled to its length plus a fixed overhead of 36 + 4 x NSS us,
//! divided by 2^agg_shift on every AC but VO to stand for the A-MPDU's shared preamble, and at
//! least 4 us. `len` is the frame's length plus 38 ("Ethernet header length"). The HE tables
//! carry mt76's approximate bits per symbol (115 for 20 MHz MCS 0 instead of 117, ...), kept
//! here as the kernel has them. A non-HT (802.11a/g) station's frames take the kernel's legacy
//! formula. 802.11n frames keep the simpler estimate of `ht/mod.rs`.

use crate::phy::error_rate::OfdmRate;
use crate::phy::he::HeGi;
use crate::phy::ht::GuardInterval;
use crate::phy::vht::Width;
use crate::phy::TxVector;

const AVG_PKT_SIZE: u64 = 1024;
/// `MCS_NBITS << 10`: bits of a 1024-byte packet, in kilo-units.
const NBITS_K: u64 = (AVG_PKT_SIZE * 8) << 10;

/// Bits per symbol per stream of VHT MCS 0-9 as the kernel's `__VHT_GROUP` lists them
/// (20 MHz MCS 9 stored as 346).
fn vht_bps(width: Width, mcs: u8) -> u64 {
    const T: [[u64; 10]; 4] = [
        [26, 52, 78, 104, 156, 208, 234, 260, 312, 346],
        [54, 108, 162, 216, 324, 432, 486, 540, 648, 720],
        [117, 234, 351, 468, 702, 936, 1053, 1170, 1404, 1560],
        [234, 468, 702, 936, 1404, 1872, 2106, 2340, 2808, 3120],
    ];
    T[width as usize][mcs as usize]
}

/// Bits per symbol per stream of HE MCS 0-11 as the kernel's `__HE_GROUP` lists them.
fn he_bps(width: Width, mcs: u8) -> u64 {
    const T: [[u64; 12]; 4] = [
        [115, 230, 345, 475, 705, 936, 1051, 1166, 1411, 1555, 1756, 1944],
        [230, 475, 705, 936, 1411, 1872, 2102, 2347, 2808, 3124, 3513, 3902],
        [489, 979, 1468, 1958, 2937, 3916, 4406, 4896, 5875, 6523, 7344, 8164],
        [979, 1958, 2937, 3916, 5875, 7833, 8827, 9806, 11764, 13060, 14702, 16329],
    ];
    T[width as usize][mcs as usize]
}

/// `GROUP_SHIFT`: how far a group's table is shifted right to fit 16 bits.
fn group_shift(d: u64) -> u32 {
    let bits = 64 - d.leading_zeros();
    bits.saturating_sub(16)
}

/// The stored (shifted, then shifted back) per-1024-byte duration in 1/1024 us, and the
/// encoding's streams; `None` for an 802.11n or a non-HT vector.
fn rate_duration(tx: TxVector) -> Option<(u64, u64, bool)> {
    match tx {
        TxVector::Ht(_) | TxVector::NonHt(_) => None,
        TxVector::Vht(t) => {
            let sgi = t.gi == GuardInterval::Short;
            let sym = |bps: u64| {
                let ksyms = NBITS_K.div_ceil(t.nss as u64 * bps);
                if sgi {
                    ksyms * 4 * 18 / 20
                } else {
                    ksyms * 4
                }
            };
            // The kernel's shift list has 243 where 234 would be expected at 160 MHz.
            let shift_bps = match t.width {
                Width::Mhz160 => 243,
                w => vht_bps(w, 0),
            };
            let shift = group_shift(sym(shift_bps));
            let d = (sym(vht_bps(t.width, t.mcs)) >> shift) << shift;
            Some((d, t.nss as u64, false))
        }
        TxVector::He(t) => {
            let width = match t.ru.tones() {
                242 => Width::Mhz20,
                484 => Width::Mhz40,
                996 => Width::Mhz80,
                _ => Width::Mhz160,
            };
            let sym = |bps: u64| {
                let ksyms = NBITS_K.div_ceil(t.nss as u64 * bps);
                match t.gi {
                    HeGi::Us0_8 => ksyms * 16 * 17 / 20,
                    HeGi::Us1_6 => ksyms * 16 * 18 / 20,
                    HeGi::Us3_2 => ksyms * 16,
                }
            };
            let shift = group_shift(sym(he_bps(width, 0)));
            let d = (sym(he_bps(width, t.mcs)) >> shift) << shift;
            Some((d, t.nss as u64, true))
        }
    }
}

/// A legacy (non-HT) OFDM station's estimate: `ieee80211_calc_expected_tx_airtime` sends a
/// legacy rate to `ieee80211_calc_rx_airtime`, whose `ieee80211_calc_legacy_rate_duration`
/// charges 20 us of preamble and 16 of SIFS plus the bits of `len + 38` bytes at the rate
/// (kept in 100 kb/s units, the division truncating), whatever `ampdu` says.
fn legacy_ofdm_us(rate: OfdmRate, len: u32) -> u32 {
    let bits = (len + 38) << 3;
    20 + 16 + bits * 10 / (rate.mbps() * 10)
}

/// `ieee80211_calc_expected_tx_airtime(.., len, ampdu)` in us for a VHT, HE or non-HT station whose last
/// rate is `tx`; `len` is the frame as mac80211 holds it at dequeue (802.11 header, LLC/SNAP
/// and payload, no FCS). `None` for an 802.11n vector.
pub fn expected_tx_airtime_us(tx: TxVector, len: u32, ampdu: bool) -> Option<u32> {
    if let TxVector::NonHt(r) = tx {
        return Some(legacy_ofdm_us(r, len));
    }
    let (duration, streams, he) = rate_duration(tx)?;
    let len = len as u64 + 38;
    let overhead = 36 + (streams << 2);
    let data = duration * len / AVG_PKT_SIZE / 1024;
    if !ampdu {
        return Some((data + overhead) as u32);
    }
    let agg_shift = if duration > 400 * 1024 {
        1
    } else if duration > 250 * 1024 {
        2
    } else if duration > 150 * 1024 {
        3
    } else if duration > 70 * 1024 {
        4
    } else if !he || duration > 20 * 1024 {
        5
    } else {
        6
    };
    Some((data + (overhead >> agg_shift)).max(4) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::he::{HeLtf, HeTxVector, PacketPadding};
    use crate::phy::vht::VhtTxVector;

    fn vht(mcs: u8, nss: u8, w: Width, gi: GuardInterval) -> TxVector {
        TxVector::Vht(VhtTxVector::new(mcs, nss, w, gi).unwrap())
    }

    #[test]
    fn a_legacy_rate_takes_the_legacy_formula_aggregated_or_not() {
        // A 1500-byte frame: (1500 + 38) x 8 = 12 304 bits; x 10 / 540 = 227 (truncated) + 36 =
        // 263 us at 54 Mb/s; at 6 Mb/s 123 040 / 60 = 2050 + 36 = 2086 us. `ampdu` changes nothing.
        for ampdu in [true, false] {
            assert_eq!(expected_tx_airtime_us(TxVector::NonHt(OfdmRate::R54), 1500, ampdu), Some(263));
            assert_eq!(expected_tx_airtime_us(TxVector::NonHt(OfdmRate::R6), 1500, ampdu), Some(2086));
        }
    }

    #[test]
    fn worked_values_of_the_kernel_formula() {
        // A 1500-byte frame (len 1500, +38 = 1538 in the formula). Hand computation of the
        // kernel's integer arithmetic:
        // VHT 80 MHz 2 SS MCS 7 LGI: ksyms = ceil(8 388 608 / 2340) = 3585; duration = 14 340;
        // shift of the group = bits(ceil(8 388 608 / 234) x 4 = 143 396) - 16 = 2, so the table
        // holds 14 340 >> 2 << 2 = 14 340. data = 14 340 x 1538 / 1024 / 1024 = 21 us;
        // overhead 44 us; agg_shift 5 (14 340 <= 70 x 1024): 21 + 1 = 22 us; single 65 us.
        let t = vht(7, 2, Width::Mhz80, GuardInterval::Long);
        assert_eq!(expected_tx_airtime_us(t, 1500, true), Some(22));
        assert_eq!(expected_tx_airtime_us(t, 1500, false), Some(65));
        // VHT 20 MHz 1 SS MCS 0 LGI: ksyms = ceil(8 388 608 / 26) = 322 639 -> 1 290 556;
        // shift 5: 1 290 556 >> 5 << 5 = 1 290 528; data = 1 290 528 x 1538 / 2^20 = 1892;
        // overhead 40 >> 1 = 20 -> 1912; single: 1932.
        let t = vht(0, 1, Width::Mhz20, GuardInterval::Long);
        assert_eq!(expected_tx_airtime_us(t, 1500, true), Some(1912));
        assert_eq!(expected_tx_airtime_us(t, 1500, false), Some(1932));
        // VHT 80 MHz 2 SS MCS 7 SGI: 3585 x 72 / 20 = 12 906 (shift 0 in this group); data
        // 18; + 44 >> 5 = 19; single 62.
        let t = vht(7, 2, Width::Mhz80, GuardInterval::Short);
        assert_eq!(expected_tx_airtime_us(t, 1500, true), Some(19));
        assert_eq!(expected_tx_airtime_us(t, 1500, false), Some(62));
        // HE 80 MHz 2 SS MCS 7 GI 0.8 (kernel bps 4896 per stream): ksyms = ceil(8 388 608 /
        // 9792) = 857 -> 857 x 272 / 20 = 11 655, shifted by 1 -> 11 654; data 17; HE under
        // 20 x 1024: agg_shift 6, 44 >> 6 = 0 -> 17; single 17 + 44 = 61.
        let he = HeTxVector::su(7, 2, Width::Mhz80, HeGi::Us0_8, HeLtf::X2, PacketPadding::Us0).unwrap();
        let t = TxVector::He(he);
        assert_eq!(expected_tx_airtime_us(t, 1500, false), Some(61));
        assert_eq!(expected_tx_airtime_us(t, 1500, true), Some(17));
        // HE 160 MHz 2 SS MCS 11: under 20 x 1024 per 1024 B -> agg_shift 6, floor of 4 us.
        let he = HeTxVector::su(11, 2, Width::Mhz160, HeGi::Us0_8, HeLtf::X2, PacketPadding::Us0).unwrap();
        assert_eq!(expected_tx_airtime_us(TxVector::He(he), 60, true), Some(4));
    }
}
