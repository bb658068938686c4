//! EDCA (802.11-2016 10.22.2): the four access categories, their default parameter sets for the
//! OFDM, ERP and HT PHYs (aCWmin 15, aCWmax 1023), and how Linux maps a packet to a TID and AC.
//!
//! Sources: IEEE 802.11-2016 Table 9-155 (the default EDCA parameter set); ns-3-dev `wifi-mac.cc` `ConfigureDcf`
//! (802.11-2020 Table 9-155); Linux mac80211 `ieee80211_set_wmm_default` (the 802.11-2016 TXOP
//! limits, our default) and `ieee802_1d_to_ac`; Linux v6.12 net/wireless/util.c
//! `cfg80211_classify8021d`. Not modelled: VLAN priority, the QoS Map element, ACM (admission
//! control) downgrades, the AP's own (hostapd) parameter set, DSSS (aCWmin 31) sets.

use crate::phy::ofdm::OfdmBand;
use crate::time::Nanos;

/// aCWmin and aCWmax of the OFDM, ERP and HT PHYs.
pub const A_CW_MIN: u32 = 15;
pub const A_CW_MAX: u32 = 1023;
/// TXOP limits are carried in units of 32 us.
#[cfg(test)]
pub const TXOP_UNIT: Nanos = Nanos::from_us(32);

/// EDCA access category, ordered by priority (BK lowest, VO highest): when two ACs of a station
/// finish their backoff in the same slot, the higher one wins the internal collision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessCategory {
    Bk,
    Be,
    Vi,
    Vo,
}

impl AccessCategory {
    #[cfg(test)]
    pub const ALL: [AccessCategory; 4] =
        [AccessCategory::Bk, AccessCategory::Be, AccessCategory::Vi, AccessCategory::Vo];

    /// mac80211's queue number (`IEEE80211_AC_VO` = 0 ... `IEEE80211_AC_BK` = 3).
    #[cfg(test)]
    pub const fn mac80211_queue(self) -> u8 {
        match self {
            AccessCategory::Vo => 0,
            AccessCategory::Vi => 1,
            AccessCategory::Be => 2,
            AccessCategory::Bk => 3,
        }
    }
}

/// Which edition's default TXOP limits (`[cell] txop_limits` of an 802.11n cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxopTable {
    /// 802.11-2007 Table 7-37 (unchanged through 802.11-2016): VI 3.008 ms, VO 1.504 ms. Linux
    /// mac80211's `ieee80211_set_wmm_default` and hostapd use these: the default.
    Ieee2016,
    /// 802.11-2020 Table 9-155 as ns-3 `WifiMac::ConfigureDcf` uses it: VI 4.096, VO 2.080 ms
    /// (for comparisons with ns-3, the peer simulator).
    Ieee2020,
}

crate::words::words!(TxopTable: "802.11-2016" => TxopTable::Ieee2016, "802.11-2020" => TxopTable::Ieee2020);

/// One AC's EDCA parameter set. The backoff is drawn in [0, CW], CW from cw_min doubling to cw_max.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EdcaParams {
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Zero: one MSDU (or one A-MPDU) per channel access.
    pub txop_limit: Nanos,
}

/// Legacy DCF: DIFS (AIFSN 2), CW 15 ... 1023, no TXOP.
#[cfg(test)]
pub const DCF_PARAMS: EdcaParams = EdcaParams { aifsn: 2, cw_min: A_CW_MIN, cw_max: A_CW_MAX, txop_limit: Nanos::ZERO };

impl EdcaParams {
    /// The default (non-AP STA) parameter set of `ac`: AIFSN 7/3/2/2; CW BK and BE
    /// aCWmin..aCWmax, VI (aCWmin+1)/2-1 .. aCWmin, VO (aCWmin+1)/4-1 .. (aCWmin+1)/2-1.
    // The standard's formulas, (aCWmin + 1) / 2 - 1 etc., kept in its own words.
    #[allow(clippy::manual_div_ceil)]
    pub const fn default_for(ac: AccessCategory, table: TxopTable) -> EdcaParams {
        let half = (A_CW_MIN + 1) / 2 - 1;
        let quarter = (A_CW_MIN + 1) / 4 - 1;
        let (aifsn, cw_min, cw_max) = match ac {
            AccessCategory::Bk => (7, A_CW_MIN, A_CW_MAX),
            AccessCategory::Be => (3, A_CW_MIN, A_CW_MAX),
            AccessCategory::Vi => (2, half, A_CW_MIN),
            AccessCategory::Vo => (2, quarter, half),
        };
        let txop_us = match (ac, table) {
            (AccessCategory::Bk | AccessCategory::Be, _) => 0,
            (AccessCategory::Vi, TxopTable::Ieee2016) => 3008,
            (AccessCategory::Vo, TxopTable::Ieee2016) => 1504,
            (AccessCategory::Vi, TxopTable::Ieee2020) => 4096,
            (AccessCategory::Vo, TxopTable::Ieee2020) => 2080,
        };
        EdcaParams { aifsn, cw_min, cw_max, txop_limit: Nanos::from_us(txop_us) }
    }

    /// AIFS = SIFS + AIFSN x slot (43 us for AC_BE at 5 GHz).
    pub const fn aifs(self, band: OfdmBand) -> Nanos {
        band.ifs(self.aifsn)
    }

    /// Mean backoff at CWmin, CWmin / 2 slots (the first attempt with no collisions).
    pub const fn mean_backoff(self, band: OfdmBand) -> Nanos {
        Nanos(self.cw_min as u64 * band.slot().as_ns() / 2)
    }
}

/// The MU EDCA Parameter Set an 802.11ax AP advertises (802.11ax-2021 9.4.2.251) and how a
/// station uses it (26.2.7): after the AP acknowledged a QoS Data frame of an access category
/// that the station sent in an HE TB PPDU, the station contends for that category with these
/// AIFSN, CWmin and CWmax until `timer` runs out (restarted by every such TB PPDU); AIFSN 0
/// means it may not contend with EDCA at all for that time (its backoff counter stays frozen
/// and resumes when the timer ends). As ns-3 3.44's `HeConfiguration` (`MuBeAifsn`, `MuBeCwMin`,
/// `MuBeCwMax`, `BeMuEdcaTimer`, ...) and `QosTxop::StartMuEdcaTimerNow` apply it; airsched
/// takes one set for every access category (`[ap] mu_edca_*`, docs/model-ofdma.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MuEdcaParams {
    /// 0 (EDCA disabled while the timer runs) or 2-15.
    pub aifsn: u32,
    /// 2^k - 1, at most 32 767 (the element carries ECWmin/ECWmax, 4 bits each).
    pub cw_min: u32,
    pub cw_max: u32,
    /// The MU EDCA Timer: a multiple of 8 TU (8.192 ms), 8.192 ms to 255 x 8 TU = 2088.96 ms.
    pub timer: Nanos,
}

/// The MU EDCA Timer's unit, 8 TU.
pub const MU_EDCA_TIMER_UNIT: Nanos = Nanos::from_us(8 * 1024);

impl MuEdcaParams {
    /// ns-3 3.44's `HeConfiguration` defaults for what the scenario leaves out: AIFSN 0 (EDCA
    /// disabled), CWmin 15, CWmax 1023.
    pub const fn ns3_default(timer: Nanos) -> MuEdcaParams {
        MuEdcaParams { aifsn: 0, cw_min: A_CW_MIN, cw_max: A_CW_MAX, timer }
    }

    /// Whether EDCA is disabled while the timer runs (AIFSN 0).
    pub const fn disables_edca(self) -> bool {
        self.aifsn == 0
    }

    /// What the element cannot carry, in words for an error message; None if it can.
    pub fn invalid(self) -> Option<String> {
        let cw_ok = |cw: u32| cw <= 32_767 && (cw + 1).is_power_of_two();
        let t = self.timer.as_ns();
        let unit = MU_EDCA_TIMER_UNIT.as_ns();
        if t == 0 || !t.is_multiple_of(unit) || t / unit > 255 {
            return Some(format!(
                "the MU EDCA Timer is a multiple of 8 TU (8.192ms) from 8.192ms to 2088.96ms, got {}",
                self.timer
            ));
        }
        if self.aifsn == 1 || self.aifsn > 15 {
            return Some(format!("AIFSN is 0 (EDCA disabled) or 2-15, got {}", self.aifsn));
        }
        if !cw_ok(self.cw_min) || !cw_ok(self.cw_max) || self.cw_min > self.cw_max {
            return Some(format!(
                "CWmin and CWmax are 2^k - 1 up to 32767 with CWmin <= CWmax, got {} and {}",
                self.cw_min, self.cw_max
            ));
        }
        None
    }

    /// Whether a timer started at `start` still runs at `now` (ns-3's `MuEdcaTimerRunning`).
    pub fn running(self, start: Nanos, now: Nanos) -> bool {
        start + self.timer > now
    }
}

/// mac80211 `ieee802_1d_to_ac`: 802.1D user priority (TID 0-7) -> AC. Priorities 1 and 2 are
/// background, 0 and 3 best effort, 4 and 5 video, 6 and 7 voice. TIDs 8-15 (TSPEC) are taken
/// mod 8, as mac80211 masks with `IEEE80211_QOS_CTL_TAG1D_MASK`.
#[cfg(test)]
pub const fn tid_to_ac(tid: u8) -> AccessCategory {
    match tid & 7 {
        1 | 2 => AccessCategory::Bk,
        0 | 3 => AccessCategory::Be,
        4 | 5 => AccessCategory::Vi,
        _ => AccessCategory::Vo,
    }
}

/// Linux `cfg80211_classify8021d` (net/wireless/util.c, v6.12) for an IPv4/IPv6 packet with no
/// VLAN tag and no QoS Map: `skb->priority` 256-263 names the TID directly; otherwise the TID is
/// the DSCP's top three bits (DSCP >> 3, RFC 8325 section 2.3), except the RFC 8325 section 4
/// cases the kernel lists: AF11-13 and CS2 -> 0, AF21-23 -> 3, CS3 and AF31-33 -> 4, VA and
/// EF -> 6, CS6 -> 7. The exceptions arrived in v6.7 (6fdb8b8781d5) and AF31-33 in v6.12
/// (a68b22e2905b); older kernels use DSCP >> 3 alone.
pub const fn classify8021d(tos: u8, skb_priority: u32) -> u8 {
    if skb_priority >= 256 && skb_priority <= 263 {
        return (skb_priority - 256) as u8;
    }
    let dscp = tos >> 2;
    match dscp {
        10 | 12 | 14 => 0, // AF11, AF12, AF13: high-throughput data
        16 => 0,           // CS2: OAM
        18 | 20 | 22 => 3, // AF21, AF22, AF23: low-latency data
        24 => 4,           // CS3: broadcast video
        26 | 28 | 30 => 4, // AF31, AF32, AF33: multimedia streaming
        44 | 46 => 6,      // VOICE-ADMIT, EF: telephony
        48 => 7,           // CS6: network control
        _ => dscp >> 3,
    }
}

/// The AC a packet with this TOS byte and socket priority is queued in (classify8021d + tid_to_ac).
#[cfg(test)]
pub const fn tos_to_ac(tos: u8, skb_priority: u32) -> AccessCategory {
    tid_to_ac(classify8021d(tos, skb_priority))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edca_defaults_per_access_category() {
        use AccessCategory::*;
        let g5 = OfdmBand::Ghz5;
        let p = |ac| EdcaParams::default_for(ac, TxopTable::Ieee2016);
        // Reference section 5: (AIFSN, CWmin, CWmax, TXOP us, AIFS at 5 GHz us).
        let expected =
            [(Bk, 7, 15, 1023, 0, 79), (Be, 3, 15, 1023, 0, 43), (Vi, 2, 7, 15, 3008, 34), (Vo, 2, 3, 7, 1504, 34)];
        for (ac, aifsn, cw_min, cw_max, txop, aifs) in expected {
            let e = p(ac);
            assert_eq!((e.aifsn, e.cw_min, e.cw_max), (aifsn, cw_min, cw_max), "{ac:?}");
            assert_eq!(e.txop_limit, Nanos::from_us(txop), "{ac:?}");
            assert_eq!(e.aifs(g5), Nanos::from_us(aifs), "{ac:?}");
            assert_eq!(e.txop_limit.as_ns() % TXOP_UNIT.as_ns(), 0);
        }
        let vi20 = EdcaParams::default_for(Vi, TxopTable::Ieee2020);
        let vo20 = EdcaParams::default_for(Vo, TxopTable::Ieee2020);
        assert_eq!((vi20.txop_limit, vo20.txop_limit), (Nanos::from_us(4096), Nanos::from_us(2080)));
        // AC_BE with AIFSN 3 at 2.4 GHz, long slot: 10 + 3 x 20 = 70 us.
        assert_eq!(p(Be).aifs(OfdmBand::Ghz24LongSlot), Nanos::from_us(70));
        assert_eq!(DCF_PARAMS.aifs(g5), g5.difs());
        assert_eq!(p(Be).mean_backoff(g5), Nanos(67_500));
        assert!(Bk < Be && Be < Vi && Vi < Vo);
        assert_eq!(AccessCategory::ALL.map(AccessCategory::mac80211_queue), [3, 2, 1, 0]);
    }

    #[test]
    fn tid_to_ac_follows_ieee802_1d() {
        use AccessCategory::*;
        let acs: [AccessCategory; 8] = core::array::from_fn(|t| tid_to_ac(t as u8));
        assert_eq!(acs, [Be, Bk, Bk, Be, Vi, Vi, Vo, Vo]);
        assert_eq!(tid_to_ac(14), Vo);
    }

    #[test]
    fn dscp_to_tid_as_linux_cfg80211() {
        let tid = |dscp: u8| classify8021d(dscp << 2, 0);
        // Default: DSCP >> 3. DF 0, CS1 1, CS4 4, AF41 4, CS5 5, CS7 7.
        for (dscp, t) in [(0, 0), (8, 1), (32, 4), (34, 4), (38, 4), (40, 5), (56, 7)] {
            assert_eq!(tid(dscp), t, "DSCP {dscp}");
        }
        // RFC 8325 exceptions.
        for (dscp, t) in
            [(10, 0), (12, 0), (14, 0), (16, 0), (18, 3), (22, 3), (24, 4), (26, 4), (30, 4), (44, 6), (46, 6), (48, 7)]
        {
            assert_eq!(tid(dscp), t, "DSCP {dscp}");
        }
        // ECN bits are ignored: TOS 0xB8 (EF) and 0xBB give 6 -> AC_VO.
        assert_eq!(classify8021d(0xB8, 0), 6);
        assert_eq!(classify8021d(0xBB, 0), 6);
        assert_eq!(tos_to_ac(0xB8, 0), AccessCategory::Vo);
        // CS1 (TOS 0x20) is background; AF11 (0x28) is best effort, not background.
        assert_eq!(tos_to_ac(0x20, 0), AccessCategory::Bk);
        assert_eq!(tos_to_ac(0x28, 0), AccessCategory::Be);
        // skb->priority 256 + n names TID n whatever the TOS; other priorities do not matter.
        assert_eq!(classify8021d(0xB8, 256 + 1), 1);
        assert_eq!(classify8021d(0, 263), 7);
        assert_eq!(classify8021d(0, 264), 0);
        assert_eq!(classify8021d(0, 6), 0);
    }

    #[test]
    fn mu_edca_timer_and_limits() {
        let p = MuEdcaParams { aifsn: 8, cw_min: 511, cw_max: 1023, timer: Nanos::from_us(255 * 8192) };
        assert_eq!(p.invalid(), None);
        // hostapd's example AC_BE set: 255 x 8 TU = 2088.96 ms.
        assert_eq!(p.timer, Nanos::from_us(2_088_960));
        assert!(!p.disables_edca());
        // Running from the start for exactly the timer: at start + timer it has ended.
        let start = Nanos::from_ms(10);
        assert!(p.running(start, start));
        assert!(p.running(start, start + p.timer - Nanos(1)));
        assert!(!p.running(start, start + p.timer));
        let d = MuEdcaParams::ns3_default(MU_EDCA_TIMER_UNIT);
        assert!(d.disables_edca());
        assert_eq!((d.cw_min, d.cw_max), (15, 1023));
        assert_eq!(d.invalid(), None);
        for bad in [
            MuEdcaParams { timer: Nanos::from_us(8000), ..d },
            MuEdcaParams { timer: Nanos::from_us(256 * 8192), ..d },
            MuEdcaParams { timer: Nanos::ZERO, ..d },
            MuEdcaParams { aifsn: 1, ..d },
            MuEdcaParams { aifsn: 16, ..d },
            MuEdcaParams { cw_min: 16, ..d },
            MuEdcaParams { cw_min: 2047, cw_max: 1023, ..d },
            MuEdcaParams { cw_max: 65_535, ..d },
        ] {
            assert!(bad.invalid().is_some(), "{bad:?}");
        }
    }
}
