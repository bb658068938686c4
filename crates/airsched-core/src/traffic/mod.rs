//! Traffic: the applications at the ends of the flows ([`source`]: UDP constant bit rate with
//! iperf `-u -b` semantics, the rate counting UDP payload bits; saturating "always backlogged"
//! sources; periodic pings and their responders; the receiving side) and the TCP glue
//! ([`tcp`]).

pub mod conn;
pub mod flow;
pub mod ping;
pub mod source;
pub mod tcp;

pub use source::Traffic;

use crate::time::Nanos;
use crate::traffic::flow::{FlowConfig, FlowRate};

/// Packets a saturating source keeps in its first-hop queue. Refilled whenever one leaves it,
/// so the queue never runs dry; more would only add queueing delay at the source.
pub const SATURATE_BACKLOG: u32 = 4;

/// In an 802.11n cell a saturating source keeps this many packets between itself and the air
/// (qdisc and driver queues together): two full 64-MPDU aggregates.
pub const SATURATE_BACKLOG_HT: u32 = 128;

/// Send time of the `k`-th packet of a CBR flow: start + floor(k * bits * 1e9 / rate).
/// Exact integer arithmetic, so a long run never drifts.
#[inline]
pub fn cbr_send_time(cfg: &FlowConfig, k: u64) -> Option<Nanos> {
    match cfg.rate {
        FlowRate::Cbr { bits_per_second } => {
            let bits = cfg.size as u64 * 8;
            // In 64 bits while the product fits (the first ~10^18 bit-nanoseconds: every
            // packet of a run of hours at Gbit/s); the same quotient in 128 bits after.
            let off = match k.checked_mul(bits).and_then(|b| b.checked_mul(1_000_000_000)) {
                Some(num) => num / bits_per_second,
                None => u64::try_from((k as u128 * bits as u128 * 1_000_000_000u128) / bits_per_second as u128).ok()?,
            };
            Some(cfg.start + Nanos(off))
        }
        FlowRate::Periodic { interval } => k.checked_mul(interval.0).map(|o| cfg.start + Nanos(o)),
        FlowRate::Saturate | FlowRate::Reactive | FlowRate::Window => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::flow::{Endpoint, Protocol};

    #[test]
    fn cbr_schedule_is_exact() {
        let cfg = FlowConfig {
            name: "f".into(),
            protocol: Protocol::Udp,
            src: Endpoint::Server,
            dst: Endpoint::Station(0),
            rate: FlowRate::Cbr { bits_per_second: 6_000_000 },
            size: 1024,
            start: Nanos::from_ms(5),
            stop: None,
            jitter: Nanos::ZERO,
            sport: None,
            dport: 5001,
            tos: 0,
            mark: 0,
            priority: None,
            cc: crate::tcp::CcKind::Cubic,
            bytes: None,
            sack: true,
            tcp: Default::default(),
            reply_delay: Nanos::ZERO,
        };
        // 8192 bits at 6 Mbit/s = 1365333.33 ns between packets.
        assert_eq!(cbr_send_time(&cfg, 0), Some(Nanos::from_ms(5)));
        assert_eq!(cbr_send_time(&cfg, 1), Some(Nanos::from_ms(5) + Nanos(1_365_333)));
        assert_eq!(cbr_send_time(&cfg, 3), Some(Nanos::from_ms(5) + Nanos(4_096_000)));
        // After one simulated hour the k-th packet is still exactly on the ideal grid.
        let k = 6_000_000u64 * 3600 / 8192;
        let t = cbr_send_time(&cfg, k).unwrap();
        assert!(t.0 - 5_000_000 <= 3600 * 1_000_000_000);
        // Either side of the last k whose numerator fits 64 bits, the quotient is the 128-bit
        // one.
        let last64 = u64::MAX / (8192 * 1_000_000_000);
        for k in [last64 - 1, last64, last64 + 1, last64 + 2] {
            let exact = (k as u128 * 8192 * 1_000_000_000) / 6_000_000;
            assert_eq!(cbr_send_time(&cfg, k), Some(Nanos::from_ms(5) + Nanos(exact as u64)), "k = {k}");
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod source_tests;
