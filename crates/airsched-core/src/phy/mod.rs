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
}

crate::words::words!(Standard: "802.11b" => Standard::Dot11b, "802.11n" => Standard::Dot11n);

/// The rate of a frame in the air (a DSSS/CCK rate, an HT MCS, or a legacy OFDM rate), which
/// its airtime, its capture's radiotap header and the EIFS it causes depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxRate {
    Dsss(dsss::DsssRate),
    Ht(ht::HtMcs),
    Ofdm(error_rate::OfdmRate),
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
