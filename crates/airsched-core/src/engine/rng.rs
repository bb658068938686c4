//! Seeded random streams: every component that draws random numbers owns its own stream,
//! derived from the run seed and the component's identity alone, so that adding a component
//! never changes another's draws.
//!
//! A component's identity is a stable name and a sub-index ([`named`]): a device ("ap/wlan0",
//! "sta1/wlan0") and an access category for channel access, frame errors and queues; a link
//! ("ap->sta1", "sta1->ap") for rate control; a station for its channel and the monitor's view of
//! it; a flow's name for its send-time jitter. Names, not positions in a table: inserting a
//! station before another, or giving a node another device, leaves every other stream as it
//! was.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Kinds of draw; a component's stream is keyed by its kind and its identity.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum StreamKind {
    /// Backoff draws of one contender (a device, and under EDCA one access category of it).
    Backoff = 1,
    /// Send-time jitter of one flow.
    Traffic = 2,
    /// Rate control of one link.
    RateControl = 3,
    /// Slow fading of one station's channel.
    Fading = 4,
    /// Frame and ACK error draws of one transmitting device.
    FrameError = 5,
    /// The channel monitor's SNR measurement noise towards one station.
    Monitor = 6,
    /// mac80211 FQ-MAC's flow hash key (one per WiFi device).
    FqMac = 7,
    /// A qdisc's random state (sfq perturbation, fq_codel hash key, RED's drop draws), keyed by
    /// its device and handle.
    Qdisc = 8,
    /// A Bluetooth link's baseband packet errors (`packet_error_rate`), keyed by the slave.
    BtError = 9,
}

/// SplitMix64 finaliser: spreads (seed, kind, index) over the whole state space.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random stream of kind `kind` keyed by `key`, derived from the run seed alone.
pub fn stream(seed: u64, kind: StreamKind, key: u64) -> Xoshiro256PlusPlus {
    let s = mix64(mix64(seed) ^ mix64((kind as u64) << 32 ^ key));
    Xoshiro256PlusPlus::seed_from_u64(s)
}

/// A stable 64-bit key of a name (FNV-1a over its bytes).
pub fn name_key(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The random stream of the component named `owner` (with a sub-index: an access category, a
/// qdisc handle), for draws of kind `kind`.
pub fn named(seed: u64, kind: StreamKind, owner: &str, sub: u64) -> Xoshiro256PlusPlus {
    stream(seed, kind, name_key(owner) ^ mix64(sub.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u32> = (0..5)
            .map({
                let mut r = stream(1, StreamKind::Backoff, 3);
                move |_| r.random_range(0..=1023)
            })
            .collect();
        let b: Vec<u32> = (0..5)
            .map({
                let mut r = stream(1, StreamKind::Backoff, 3);
                move |_| r.random_range(0..=1023)
            })
            .collect();
        let c: Vec<u32> = (0..5)
            .map({
                let mut r = stream(1, StreamKind::Backoff, 4);
                move |_| r.random_range(0..=1023)
            })
            .collect();
        let d: Vec<u32> = (0..5)
            .map({
                let mut r = stream(2, StreamKind::Backoff, 3);
                move |_| r.random_range(0..=1023)
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn named_streams_depend_on_the_name_and_sub_index_only() {
        let draw = |mut r: Xoshiro256PlusPlus| (0..4).map(|_| r.random::<u64>()).collect::<Vec<_>>();
        let a = draw(named(1, StreamKind::Backoff, "sta2/wlan0", 2));
        assert_eq!(a, draw(named(1, StreamKind::Backoff, "sta2/wlan0", 2)));
        assert_ne!(a, draw(named(1, StreamKind::Backoff, "sta2/wlan0", 1)));
        assert_ne!(a, draw(named(1, StreamKind::Backoff, "sta1/wlan0", 2)));
        assert_ne!(a, draw(named(1, StreamKind::FrameError, "sta2/wlan0", 2)));
        assert_ne!(a, draw(named(2, StreamKind::Backoff, "sta2/wlan0", 2)));
        assert_ne!(name_key("ab"), name_key("ba"));
    }
}
