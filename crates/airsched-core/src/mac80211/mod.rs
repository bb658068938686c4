//! The mac80211 queueing stack of a Linux access point, as sans-I/O algorithm modules the
//! simulator drives (every call takes `now`; nothing reads a clock or allocates per packet):
//!
//! - [`fq`]: FQ-MAC, the per-radio flow pool with per-(station, TID) tins, DRR++ and CoDel per
//!   flow (`include/net/fq.h`, `fq_impl.h`, `net/mac80211/tx.c`; Algorithms 1 and 2 of
//!   Høiland-Jørgensen, "Bufferbloat mitigation in the WiFi stack").
//! - [`airtime`]: airtime fairness between stations, the ath9k in-driver scheduler of Linux
//!   ≈4.11 (Algorithm 3) or the mac80211 scheduler of Linux ≈6.0 and later (Fietkau's 2022
//!   rework, DRR with weights and AQL awareness).
//! - [`aql`]: Airtime Queue Limits (Linux ≈5.5 and later), pending airtime per station and AC.
//!
//! See docs/model-mac80211.md for the calling protocol, parameters and deviations.

pub mod airtime;
pub mod aql;
pub mod fq;
pub mod policy;

/// Data TIDs per station (802.1d user priorities 0..7). mac80211 allocates 16 TXQs per station
/// but data frames only use these; the management TXQ (TID 16) is not modelled.
pub const NUM_TIDS: usize = 8;

/// Access categories, numbered as mac80211 numbers its queues (`IEEE80211_AC_VO` = 0 ..
/// `IEEE80211_AC_BK` = 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ac {
    Vo = 0,
    Vi = 1,
    Be = 2,
    Bk = 3,
}

/// Number of access categories.
pub const NUM_ACS: usize = 4;

impl Ac {
    pub const ALL: [Ac; NUM_ACS] = [Ac::Vo, Ac::Vi, Ac::Be, Ac::Bk];

    /// `ieee802_1d_to_ac`: TIDs 1, 2 → BK; 0, 3 → BE; 4, 5 → VI; 6, 7 → VO.
    pub const fn from_tid(tid: u8) -> Ac {
        match tid & 7 {
            1 | 2 => Ac::Bk,
            0 | 3 => Ac::Be,
            4 | 5 => Ac::Vi,
            _ => Ac::Vo,
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A station of the cell, 0-based, as the simulator numbers them. A frame without a station
/// (multicast) can use a station index of its own set aside for the vif's TXQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StationId(pub u16);

/// A tin: the TXQ of one (station, TID), `struct txq_info` in mac80211. Its dense index is
/// `station * NUM_TIDS + tid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TinId(pub u32);

impl TinId {
    #[inline]
    pub fn new(sta: StationId, tid: u8) -> TinId {
        debug_assert!((tid as usize) < NUM_TIDS, "data TIDs are 0..7, got {tid}");
        TinId(sta.0 as u32 * NUM_TIDS as u32 + tid as u32)
    }
    #[inline]
    pub fn station(self) -> StationId {
        StationId((self.0 / NUM_TIDS as u32) as u16)
    }
    #[inline]
    pub fn tid(self) -> u8 {
        (self.0 % NUM_TIDS as u32) as u8
    }
    #[inline]
    pub fn ac(self) -> Ac {
        Ac::from_tid(self.tid())
    }
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tids_map_to_acs_as_mac80211_does() {
        let acs: Vec<Ac> = (0..8).map(Ac::from_tid).collect();
        assert_eq!(acs, vec![Ac::Be, Ac::Bk, Ac::Bk, Ac::Be, Ac::Vi, Ac::Vi, Ac::Vo, Ac::Vo]);
        let t = TinId::new(StationId(3), 5);
        assert_eq!((t.0, t.station(), t.tid(), t.ac()), (29, StationId(3), 5, Ac::Vi));
    }
}
