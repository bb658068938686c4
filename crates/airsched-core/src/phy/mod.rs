//! PHY models: rates, frame airtime and the control-response rate rule.

pub mod dsss;
pub mod error_rate;
pub mod he;
pub mod ht;
pub mod ofdm;
pub mod vht;

/// The cell's standard: which PHY and MAC its frames use (`[cell] standard`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standard {
    Dot11b,
    /// 802.11n (HT): OFDM PHY with HT MCS, EDCA, A-MPDU with BlockAck; `CellConfig::ht` holds
    /// its settings.
    Dot11n,
    /// 802.11ac (VHT, WiFi 5): the 802.11n MAC over VHT SU PPDUs (`phy::vht`) at 5 GHz; a
    /// station may be 802.11n (HT PPDUs). `CellConfig::ht` holds the settings.
    Dot11ac,
    /// 802.11ax (HE, WiFi 6/6E): the 802.11n MAC over HE SU PPDUs (`phy::he`) at 2.4, 5 or 6
    /// GHz; stations may be 802.11n or 802.11ac.
    Dot11ax,
    /// 802.11a (clause 17 OFDM at 5 GHz, 6-54 Mb/s): a station only, a non-HT client of an
    /// 802.11n/ac/ax cell. No A-MPDU, no BlockAck agreement: one MPDU per PPDU, each answered
    /// by an ACK.
    Dot11a,
    /// 802.11g (clause 18 ERP-OFDM at 2.4 GHz, 6-54 Mb/s): as [`Standard::Dot11a`], in a 2.4 GHz
    /// cell.
    Dot11g,
}

crate::words::words!(Standard: "802.11b" => Standard::Dot11b, "802.11n" => Standard::Dot11n,
    "802.11ac" => Standard::Dot11ac, "802.11ax" => Standard::Dot11ax, "802.11a" => Standard::Dot11a,
    "802.11g" => Standard::Dot11g);

impl Standard {
    /// The cell runs the EDCA / A-MPDU MAC (802.11n and later).
    pub const fn is_ht_mac(self) -> bool {
        !matches!(self, Standard::Dot11b | Standard::Dot11a | Standard::Dot11g)
    }

    /// A non-HT OFDM station (802.11a or 802.11g) in an 802.11n/ac/ax cell.
    pub const fn is_non_ht_ofdm(self) -> bool {
        matches!(self, Standard::Dot11a | Standard::Dot11g)
    }
}

/// The rate of a frame in the air (a DSSS/CCK rate, an HT MCS, or a legacy OFDM rate), which
/// its airtime, its capture's radiotap header and the EIFS it causes depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxRate {
    Dsss(dsss::DsssRate),
    Ht(ht::HtMcs),
    Ofdm(error_rate::OfdmRate),
    Vht(vht::VhtTxVector),
    He(he::HeTxVector),
}

/// The transmit vector of a data PPDU in an 802.11n/ac/ax cell: its format and everything its
/// airtime depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxVector {
    Ht(ht::HtTxVector),
    Vht(vht::VhtTxVector),
    He(he::HeTxVector),
    /// A non-HT (clause 17/18 OFDM) PPDU to or from an 802.11a/g station.
    NonHt(error_rate::OfdmRate),
}

impl TxVector {
    /// Airtime of the PPDU carrying `psdu_bytes` (signal extension included at 2.4 GHz).
    #[inline]
    pub fn txtime(self, band: ofdm::OfdmBand, psdu_bytes: u32) -> crate::time::Nanos {
        match self {
            TxVector::Ht(t) => ht::txtime(band, t, psdu_bytes),
            other => other.wide_txtime(band, psdu_bytes),
        }
    }

    /// [`TxVector::txtime`] of a VHT or HE vector, kept out of line so the 802.11n path (which
    /// the MAC calls once per MPDU it aggregates) stays as small as before.
    #[inline(never)]
    fn wide_txtime(self, band: ofdm::OfdmBand, psdu_bytes: u32) -> crate::time::Nanos {
        match self {
            TxVector::Ht(t) => ht::txtime(band, t, psdu_bytes),
            TxVector::Vht(t) => vht::txtime(t, psdu_bytes) + band.signal_extension(),
            TxVector::He(t) => {
                let b = if band.is_2_4ghz() { he::HeBand::Ghz24 } else { he::HeBand::Ghz5 };
                he::txtime(b, t, psdu_bytes)
            }
            TxVector::NonHt(r) => ofdm::txtime(band, r, psdu_bytes),
        }
    }

    /// PHY data rate, bit/s.
    pub const fn bits_per_second(self) -> u64 {
        match self {
            TxVector::Ht(t) => t.bits_per_second(),
            TxVector::Vht(t) => t.bits_per_second(),
            TxVector::He(t) => t.bits_per_second(),
            TxVector::NonHt(r) => r.mbps() as u64 * 1_000_000,
        }
    }

    /// The non-HT reference rate (the (Block)Ack's rate rule, and the error model's fallback).
    pub const fn non_ht_reference_rate(self) -> error_rate::OfdmRate {
        match self {
            TxVector::Ht(t) => t.mcs.non_ht_reference_rate(),
            TxVector::Vht(t) => vht::non_ht_reference_rate(t.mcs),
            TxVector::He(t) => t.non_ht_reference_rate(),
            TxVector::NonHt(r) => r,
        }
    }

    /// PHY data rate, Mb/s (unrounded).
    pub fn mbps(self) -> f64 {
        match self {
            TxVector::Ht(t) => t.mcs.mbps(t.width, t.gi),
            TxVector::Vht(t) => t.mbps(),
            TxVector::He(t) => t.mbps(),
            TxVector::NonHt(r) => r.mbps() as f64,
        }
    }

    /// The same vector at MCS index `mcs` (HT: 0-15), if that combination exists.
    pub fn with_mcs(self, mcs: u8) -> Option<TxVector> {
        match self {
            TxVector::Ht(t) => ht::HtMcs::new(mcs).map(|m| TxVector::Ht(ht::HtTxVector { mcs: m, ..t })),
            TxVector::Vht(t) => vht::VhtTxVector::new(mcs, t.nss, t.width, t.gi).map(TxVector::Vht),
            TxVector::He(t) => he::mcs_allowed(mcs, t.nss, t.ru).then_some(TxVector::He(he::HeTxVector { mcs, ..t })),
            TxVector::NonHt(_) => error_rate::OfdmRate::ALL.get(mcs as usize).copied().map(TxVector::NonHt),
        }
    }

    /// The MCS index as the station counters and iw print it: HT 0-15 (streams included),
    /// VHT 0-9, HE 0-11 (with [`TxVector::nss`] beside); a non-HT rate's place among the eight
    /// OFDM rates (0: 6 Mb/s ... 7: 54 Mb/s).
    pub const fn mcs_index(self) -> u8 {
        match self {
            TxVector::Ht(t) => t.mcs.index(),
            TxVector::Vht(t) => t.mcs,
            TxVector::He(t) => t.mcs,
            TxVector::NonHt(r) => r as u8,
        }
    }

    /// The vector names an MCS (HT, VHT, HE); a non-HT one has only its legacy rate.
    pub const fn has_mcs(self) -> bool {
        !matches!(self, TxVector::NonHt(_))
    }

    pub const fn nss(self) -> u8 {
        match self {
            TxVector::Ht(t) => t.mcs.n_ss() as u8,
            TxVector::Vht(t) => t.nss,
            TxVector::He(t) => t.nss,
            TxVector::NonHt(_) => 1,
        }
    }

    /// The rate a capture and the IFS rules see.
    pub const fn rate(self) -> TxRate {
        match self {
            TxVector::Ht(t) => TxRate::Ht(t.mcs),
            TxVector::Vht(t) => TxRate::Vht(t),
            TxVector::He(t) => TxRate::He(t),
            TxVector::NonHt(r) => TxRate::Ofdm(r),
        }
    }

    /// The HT transmit vector, for the HT-only rate controls (Minstrel, Minstrel-HT).
    pub fn ht(self) -> ht::HtTxVector {
        match self {
            TxVector::Ht(t) => t,
            other => unreachable!("{other:?}: rate control runs on HT links only"),
        }
    }

    /// Airtime of the control response (legacy OFDM at the rate of the non-HT reference rule):
    /// an ACK after a lone MPDU, else a compressed BlockAck of `block_ack_bytes`.
    pub fn response_time(
        self,
        band: ofdm::OfdmBand,
        basic: &[error_rate::OfdmRate],
        lone: bool,
        block_ack_bytes: u32,
    ) -> crate::time::Nanos {
        let rate = ofdm::control_response_rate(basic, self.non_ht_reference_rate());
        ofdm::txtime(band, rate, if lone { ofdm::ACK_BYTES } else { block_ack_bytes })
    }
}

/// EstimatedAckTxTime after a VHT or HE PPDU that caused an EIFS, by the modulation of its MCS
/// as for HT (802.11-2020 Table 10-5): 68 us after BPSK, 44 us after QPSK, 32 us otherwise.
pub const fn estimated_ack_time_mcs(mcs: u8) -> crate::time::Nanos {
    match mcs {
        0 => crate::time::Nanos::from_us(68),
        1 | 2 => crate::time::Nanos::from_us(44),
        _ => crate::time::Nanos::from_us(32),
    }
}

/// The control-response rate rule every PHY shares (802.11-2016 10.7.6.5.2, ns-3
/// `GetControlAnswerMode`): the highest basic rate <= `rate`; if there is none, the highest
/// mandatory rate <= it; if there is none either, `lowest`. Callers pass rates of one modulation
/// class only.
pub(crate) fn response_rate<R: Ord + Copy>(
    basic: &[R],
    mandatory: impl IntoIterator<Item = R>,
    rate: R,
    lowest: R,
) -> R {
    let at_most = |r: &R| *r <= rate;
    let basic = basic.iter().copied().filter(at_most).max();
    basic.or_else(|| mandatory.into_iter().filter(at_most).max()).unwrap_or(lowest)
}
