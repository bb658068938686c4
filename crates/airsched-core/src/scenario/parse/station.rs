//! `[[station]]`: names, 802.11b rates and rate control (radio keys in `radio.rs`, 802.11n keys
//! in `ht.rs`).

use super::*;

pub(super) fn valid_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// The stations, and a map from every station name written (valid or not, first occurrence)
/// to its index, so that flows referring to a broken station do not add a second error.
pub(super) fn parse_stations(
    rd: &mut Reader<'_>,
    v: Option<&Value<'_>>,
    cell: &CellConfig,
    standard: Option<Standard>,
) -> (Vec<StationConfig>, HashMap<String, usize>) {
    let default_rc = cell.rate_control;
    let mut stations = Vec::new();
    let mut names: HashMap<String, (usize, Span)> = HashMap::new();
    for (i, tbl, tspan) in array_of_tables(rd, v, "station") {
        let path = format!("station[{i}]");
        check_keys(rd, tbl, &path, "[[station]]", STATION_KEYS);
        let index = stations.len();

        let name_v = lookup(rd, tbl, &tspan, &path, "name", Some("a unique name, e.g. name = \"sta1\""));
        let name = name_v.and_then(|v| {
            let key = join(&path, "name");
            let s = string(rd, v, &key, "a string like \"sta1\"")?;
            let mut ok = true;
            if s.is_empty() {
                rd.error(&v.span(), &key, "must not be empty, e.g. \"sta1\"");
                ok = false;
            } else if !s.chars().all(valid_name_char) {
                rd.error(
                    &v.span(),
                    &key,
                    format!(
                        "station name {s:?} may only contain ASCII letters, digits, '_', '.' \
                         and '-'"
                    ),
                );
                ok = false;
            } else if s.eq_ignore_ascii_case("server") || s.eq_ignore_ascii_case("ap") {
                let owner = if s.eq_ignore_ascii_case("ap") { "access point" } else { "wired server" };
                rd.error(&v.span(), &key, format!("{s:?} is reserved for the {owner}; choose another station name"));
                return None;
            }
            if let Some((_, first)) = names.get(s) {
                let line = rd.line_of(first);
                rd.error(&v.span(), &key, format!("duplicate station name {s:?} (already used on line {line})"));
                return None;
            }
            names.insert(s.to_string(), (index, v.span()));
            ok.then(|| s.to_string())
        });

        let rate_control = tbl
            .get("rate_control")
            .and_then(|v| ht::rate_control(rd, v, &join(&path, "rate_control"), standard))
            .unwrap_or(default_rc);
        // `mcs` in an 802.11b cell is reported as such; a missing `rate` would only repeat it.
        let rate_required = (rate_control == crate::mac::rate::RateControl::Fixed
            && standard == Some(Standard::Dot11b)
            && !tbl.contains_key("mcs"))
        .then_some("the station's 802.11b rate, e.g. rate = \"11Mbps\"");
        // A non-HT (802.11a/g) station of an 802.11n/ac/ax cell has an OFDM `rate` (`ht.rs`).
        let non_ht = tbl
            .get("standard")
            .and_then(|v| match v.get_ref() {
                DeValue::String(s) => Standard::from_word(s),
                _ => None,
            })
            .is_some_and(Standard::is_non_ht_ofdm);
        let rate_v = if standard.is_some_and(Standard::is_ht_mac) {
            if non_ht {
                None
            } else {
                ht::not_ht(rd, tbl, &path, "rate", standard, ht::RATE_IN_HT)
            }
        } else {
            lookup(rd, tbl, &tspan, &path, "rate", rate_required)
        };
        let rate = rate_v.and_then(|v| {
            let key = join(&path, "rate");
            let ex = "a string like \"11Mbps\"";
            let s = string(rd, v, &key, ex)?;
            match units::parse_phy_rate(s) {
                Ok(r) => Some(r),
                Err(e) => {
                    rd.error(&v.span(), &key, e.to_string());
                    None
                }
            }
        });
        let ht = ht::station_ht(rd, tbl, &tspan, &path, standard, cell.ht.as_ref(), rate_control);
        let channel = radio::channel(rd, tbl, &path);
        let node = parse_node(rd, tbl, &path);
        let mac = tbl.get("mac").and_then(|v| {
            let key = join(&path, "mac");
            let ex = "a MAC address like \"02:00:00:00:00:01\"";
            let s = string(rd, v, &key, ex)?;
            let m = parse_mac(s);
            if m.is_none() {
                rd.error(&v.span(), &key, format!("{s:?} is not a MAC address: expected six hexadecimal bytes separated by colons, like \"02:00:00:00:00:01\""));
            }
            m
        });
        let cf_pollable = tbl.get("cf_pollable").and_then(|v| boolean(rd, v, &join(&path, "cf_pollable")));
        let location =
            tbl.get("location").and_then(|v| bluetooth::xy(rd, v, &join(&path, "location"), "location = [10.0, 0.0]"));
        stations.push(StationConfig {
            name: name.unwrap_or_default(),
            // 802.11n: a placeholder, the link's rate is `ht.mcs`.
            rate: rate.unwrap_or(DsssRate::R11),
            rate_control,
            channel,
            node,
            ht,
            mac,
            cf_pollable: cf_pollable.unwrap_or(true),
            location,
        });
    }
    let names = names.into_iter().map(|(k, (i, _))| (k, i)).collect();
    (stations, names)
}

/// `aa:bb:cc:dd:ee:ff` (hexadecimal, either case) as six bytes.
pub(crate) fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut n = 0;
    for part in s.split(':') {
        if n == 6 || part.len() != 2 || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        out[n] = u8::from_str_radix(part, 16).ok()?;
        n += 1;
    }
    (n == 6).then_some(out)
}

#[cfg(test)]
mod mac_tests {
    use super::parse_mac;

    #[test]
    fn mac_addresses_are_six_colon_separated_hex_bytes() {
        assert_eq!(parse_mac("02:00:00:00:0a:FF"), Some([2, 0, 0, 0, 10, 255]));
        for bad in
            ["", "02:00:00:00:00", "02:00:00:00:00:01:02", "2:00:00:00:00:01", "02-00-00-00-00-01", "0g:00:00:00:00:01"]
        {
            assert_eq!(parse_mac(bad), None, "{bad}");
        }
    }
}
