//! The keys of A-MSDU inside A-MPDU (`wifi::ht::amsdu`, docs/model-vht-he.md): `[ap] amsdu`,
//! `[ap] max_tx_fragments` and each station's `max_amsdu_len`.

use super::*;
use crate::wifi::ht::amsdu::{allowed_lengths, AmsduConfig, AmsduMode, MAX_TX_FRAGMENTS_LIMIT};
use crate::wifi::ht::ofdma::{Ofdma, OfdmaConfig};
use crate::wifi::ht::params::NextSteps;

/// The `[ap]` keys this file reads (listed in `AP_KEYS`).
#[cfg(test)]
const AMSDU_AP_KEYS: &[&str] = &["amsdu", "max_tx_fragments"];

/// `[ap]`'s A-MSDU keys; `get` reads a key of `tbl` (refusing it outside an 802.11n/ac/ax
/// cell), `fq` whether the queue is FQ-MAC (None: unknown), `next` and `ofdma` the mechanisms
/// A-MSDU is not modelled with.
pub(super) fn parse_amsdu<'t, 'i: 't>(
    rd: &mut Reader<'_>,
    get: impl Fn(&mut Reader<'_>, &str) -> Option<&'t Value<'i>>,
    fq: Option<bool>,
    next: &NextSteps,
    ofdma: &OfdmaConfig,
) -> AmsduConfig {
    let mode = get(rd, "amsdu").and_then(|v| {
        let key = "ap.amsdu";
        let a = word::<AmsduMode>(rd, v, key)?;
        if a == AmsduMode::Off {
            return Some(a);
        }
        if fq == Some(false) {
            rd.error(
                &v.span(),
                key,
                "mac80211 builds A-MSDUs from its per-station TXQs, which mac_queue = \"fifo\" (ath9k's driver \
                 FIFOs, no TX A-MSDU) does not have; set mac_queue = \"fq-mac\"",
            );
            return None;
        }
        let clash = [("aggregation", next.firmware.is_some()), ("ofdma", ofdma.mode == Ofdma::Dl)];
        if let Some((k, _)) = clash.iter().find(|(_, on)| *on) {
            rd.error(&v.span(), key, format!("A-MSDU is not modelled together with ap.{k}; leave one of them out"));
            return None;
        }
        Some(a)
    });
    let frags = get(rd, "max_tx_fragments").and_then(|v| {
        let key = "ap.max_tx_fragments";
        let n = integer(rd, v, key, 2, MAX_TX_FRAGMENTS_LIMIT as u64)? as u32;
        if mode != Some(AmsduMode::Mac80211) {
            rd.error(
                &v.span(),
                key,
                "applies only with amsdu = \"mac80211\" (the driver's MSDUs per A-MSDU); set it or leave \
                 `max_tx_fragments` out",
            );
            return None;
        }
        Some(n)
    });
    AmsduConfig { mode: mode.unwrap_or_default(), max_tx_fragments: frags.unwrap_or(0), station_max_len: Vec::new() }
}

/// Each station's `max_amsdu_len`: one of the values its standard defines (HT 3839 or 7935;
/// VHT and HE 3895, 7991 or 11454); 0 (the largest) where absent.
pub(super) fn station_lengths(rd: &mut Reader<'_>, root: &DeTable<'_>, stations: &[StationConfig]) -> Vec<u32> {
    let mut out = vec![0; stations.len()];
    let Some(DeValue::Array(items)) = root.get("station").map(|v| v.get_ref()) else { return out };
    for (i, (st, item)) in stations.iter().zip(items.iter()).enumerate() {
        let DeValue::Table(tbl) = item.get_ref() else { continue };
        let Some(v) = tbl.get("max_amsdu_len") else { continue };
        let key = format!("station[{i}].max_amsdu_len");
        let Some(h) = st.ht else {
            rd.error(
                &v.span(),
                &key,
                "A-MSDU inside A-MPDU needs an 802.11n, 802.11ac or 802.11ax station (set [cell] standard)",
            );
            continue;
        };
        if h.link.is_some_and(|t| !t.has_mcs()) {
            rd.error(
                &v.span(),
                &key,
                "a non-HT (802.11a/g) station has no HT capabilities, so no A-MSDU: leave max_amsdu_len out",
            );
            continue;
        }
        let Some(n) = integer(rd, v, &key, 1, 65_535) else { continue };
        let allowed = allowed_lengths(h.link);
        if !allowed.contains(&(n as u32)) {
            let which = match h.link {
                Some(crate::phy::TxVector::Vht(_)) => "a VHT station's maximum MPDU length",
                Some(crate::phy::TxVector::He(_)) => "an HE station's maximum MPDU length (its VHT capability)",
                _ => "an HT station's maximum A-MSDU length",
            };
            let list: Vec<String> = allowed.iter().map(|l| l.to_string()).collect();
            rd.error(&v.span(), &key, format!("{n} is not {which}; expected {}", list.join(" or ")));
            continue;
        }
        out[i] = n as u32;
    }
    // None given: empty, as the default configuration has it.
    if out.iter().all(|&l| l == 0) {
        out.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::parse_scenario;

    #[test]
    fn every_key_read_here_is_an_ap_key() {
        for k in super::AMSDU_AP_KEYS {
            assert!(super::AP_KEYS.contains(k), "{k} is missing from AP_KEYS");
        }
        assert!(super::STATION_KEYS.contains(&"max_amsdu_len"));
    }

    fn parse(cell: &str, ap: &str, station: &str) -> Result<crate::Scenario, String> {
        let text = format!(
            "[cell]\n{cell}\n[ap]\n{ap}\n[[station]]\nname = \"a\"\n{station}\n\
             [[flow]]\nname = \"d\"\nsrc = \"server\"\ndst = \"a\"\nrate = \"1Mbit\"\n"
        );
        parse_scenario(&text, "s.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn the_keys_reach_the_config() {
        let s = parse(
            "standard = \"802.11ac\"",
            "mac_queue = \"fq-mac\"\namsdu = \"mac80211\"\nmax_tx_fragments = 8",
            "mcs = 9\nmax_amsdu_len = 7991",
        )
        .unwrap();
        assert_eq!(s.ap_mac.amsdu.mode, super::AmsduMode::Mac80211);
        assert_eq!(s.ap_mac.amsdu.max_tx_fragments, 8);
        assert_eq!(s.ap_mac.amsdu.station_max_len, vec![7991]);
        let s = parse("standard = \"802.11n\"", "", "mcs = 7").unwrap();
        assert_eq!(s.ap_mac.amsdu.mode, super::AmsduMode::Off);
    }

    #[test]
    fn bad_values_and_combinations_are_one_line_errors() {
        let one_line = |e: String, want: &str| {
            assert_eq!(e.trim().lines().count(), 1, "{e}");
            assert!(e.contains(want), "{e}");
        };
        // A length the station's standard does not define.
        let e = parse(
            "standard = \"802.11n\"",
            "mac_queue = \"fq-mac\"\namsdu = \"mac80211\"",
            "mcs = 7\nmax_amsdu_len = 11454",
        )
        .unwrap_err();
        one_line(e.clone(), "s.toml:");
        one_line(e, "expected 3839 or 7935");
        let e = parse(
            "standard = \"802.11ac\"",
            "mac_queue = \"fq-mac\"\namsdu = \"mac80211\"",
            "mcs = 7\nmax_amsdu_len = 3839",
        );
        one_line(e.unwrap_err(), "expected 3895 or 7991 or 11454");
        // ath9k's FIFOs: no TX A-MSDU.
        let e = parse("standard = \"802.11n\"", "amsdu = \"mac80211\"", "mcs = 7");
        one_line(e.unwrap_err(), "set mac_queue = \"fq-mac\"");
        // 802.11b: no A-MPDU, no A-MSDU here.
        let e = parse("standard = \"802.11b\"", "amsdu = \"mac80211\"", "rate = \"11Mbps\"");
        one_line(e.unwrap_err(), "ap.amsdu");
        let e = parse("standard = \"802.11b\"", "", "rate = \"11Mbps\"\nmax_amsdu_len = 3839");
        one_line(e.unwrap_err(), "max_amsdu_len");
        // A word it does not know, and the fragment count without A-MSDU.
        let e = parse("standard = \"802.11n\"", "mac_queue = \"fq-mac\"\namsdu = \"on\"", "mcs = 7");
        one_line(e.unwrap_err(), "\"off\" or \"mac80211\"");
        let e = parse("standard = \"802.11n\"", "mac_queue = \"fq-mac\"\nmax_tx_fragments = 4", "mcs = 7");
        one_line(e.unwrap_err(), "applies only with amsdu");
        let e = parse(
            "standard = \"802.11ax\"",
            "mac_queue = \"fq-mac\"\nofdma = \"dl\"\namsdu = \"mac80211\"",
            "standard = \"802.11ax\"\nmcs = 7",
        );
        one_line(e.unwrap_err(), "not modelled together with ap.ofdma");
        let e = parse(
            "standard = \"802.11ac\"",
            "mac_queue = \"fq-mac\"\namsdu = \"mac80211\"",
            "standard = \"802.11a\"\nrate = \"54Mbps\"\nmax_amsdu_len = 3839",
        );
        one_line(e.unwrap_err(), "a non-HT (802.11a/g) station has no HT capabilities, so no A-MSDU");
    }
}
