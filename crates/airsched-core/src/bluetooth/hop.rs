//! The piconet's hop sequence: the channel of the slot a packet starts in (a multi-slot packet
//! stays on it).
//!
//! Deviation from the spec: the Core spec's hop selection kernel maps the master's 28-bit
//! clock and address through a 32-hop segment that slides by 16 hops, so the basic sequence
//! visits every channel in a near-uniform way over short spans. Here the channel of slot k is a
//! uniform draw, SplitMix64 of (seed key, k), which is what the coexistence analysis of
//! reference phy80211-bluetooth.md section 8.3 assumes ("every BT packet is on an independent
//! hop") and is deterministic per seed and independent of the traffic.
//!
//! AFH (Core v1.2): with a channel map, the slot's draw picks among the used channels only
//! (uniformly; the spec instead remaps a hop that lands on an unused channel through the used
//! ones, which is uniform over them too). The map here excludes the channels in the WLAN's
//! 22 MHz band, as a host's channel classification from the WLAN's channel would.

use crate::time::Nanos;

use super::packet::SLOT;

#[derive(Clone, Debug)]
pub struct Hopper {
    key: u64,
    /// The channels in use (all 79 without AFH).
    used: Vec<u8>,
}

fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Hopper {
    /// The hop sequence of the run with seed `seed`; `avoid(k)`: channel k is not used (AFH).
    pub fn new(seed: u64, avoid: impl Fn(u32) -> bool) -> Hopper {
        let used = (0..crate::coex::BT_CHANNELS).filter(|&k| !avoid(k)).map(|k| k as u8).collect();
        Hopper { key: mix64(seed ^ crate::engine::rng::name_key("bluetooth/piconet")), used }
    }

    /// The channel of the slot that begins at `t`.
    #[inline]
    pub fn channel(&self, t: Nanos) -> u32 {
        let slot = t.0 / SLOT.0;
        let r = mix64(self.key ^ mix64(slot));
        // Lemire's multiply-shift: uniform over the used channels.
        self.used[(((r >> 32) * self.used.len() as u64) >> 32) as usize] as u32
    }

    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hops_are_uniform_over_the_79_channels_and_afh_avoids_the_wlan() {
        let h = Hopper::new(7, |_| false);
        let mut n = [0u32; 79];
        let slots = 790_000u64;
        for k in 0..slots {
            n[h.channel(Nanos(k * SLOT.0)) as usize] += 1;
        }
        // 10000 expected per channel, sd 99.4: within 5 sd.
        assert!(n.iter().all(|&c| (c as i64 - 10_000).abs() < 500), "{n:?}");
        // Deterministic per seed, another seed another sequence.
        let again = Hopper::new(7, |_| false);
        let other = Hopper::new(8, |_| false);
        let seq = |h: &Hopper| (0..64).map(|k| h.channel(Nanos(k * SLOT.0))).collect::<Vec<_>>();
        assert_eq!(seq(&h), seq(&again));
        assert_ne!(seq(&h), seq(&other));
        let afh = Hopper::new(7, |k| crate::coex::in_wlan_band(k, 6));
        assert_eq!(afh.used(), 57);
        assert!((0..10_000).all(|k| !crate::coex::in_wlan_band(afh.channel(Nanos(k * SLOT.0)), 6)));
    }
}
