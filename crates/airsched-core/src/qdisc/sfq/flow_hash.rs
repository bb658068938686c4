//! The keyed flow hash SFQ and fq_codel classify packets with.
//!
//! The kernel hashes the flow dissector's keys (addresses, ports, protocol) with SipHash under a
//! random key (`skb_get_hash_perturb` for SFQ, the per-boot `hashrnd` for fq_codel), after
//! ordering the endpoints so that both directions of a conversation hash alike
//! (`__flow_hash_consistentify`), and never returns 0. airsched does the same with SipHash-2-4
//! over its own byte layout of the IPv4 5-tuple, keyed from a seeded stream: deterministic per
//! seed, not bit-identical to a kernel (whose key is random anyway).

use rand::RngCore;

use crate::packet::FlowKey;

/// A 128-bit SipHash key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SipKey(pub u64, pub u64);

impl SipKey {
    pub(crate) fn draw(rng: &mut impl RngCore) -> SipKey {
        SipKey(rng.next_u64(), rng.next_u64())
    }
}

#[inline]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-2-4 (Aumasson and Bernstein, 2012) of `msg` under `key`.
pub(in crate::qdisc) fn siphash24(key: SipKey, msg: &[u8]) -> u64 {
    let mut v = [
        key.0 ^ 0x736f_6d65_7073_6575,
        key.1 ^ 0x646f_7261_6e64_6f6d,
        key.0 ^ 0x6c79_6765_6e65_7261,
        key.1 ^ 0x7465_6462_7974_6573,
    ];
    let mut words = msg.chunks_exact(8);
    for w in &mut words {
        let m = u64::from_le_bytes(w.try_into().expect("chunks of 8"));
        v[3] ^= m;
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^= m;
    }
    let mut last = (msg.len() as u64) << 56;
    for (i, &b) in words.remainder().iter().enumerate() {
        last |= (b as u64) << (8 * i);
    }
    v[3] ^= last;
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    for _ in 0..4 {
        sip_round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// The 32-bit flow hash of a packet's 5-tuple: endpoints put in a canonical order, SipHash-2-4,
/// low 32 bits, 0 replaced by 1 (as the kernel's `__flow_hash_from_keys`).
pub(crate) fn flow_hash(k: &FlowKey, key: SipKey) -> u32 {
    let (mut a, mut b, mut pa, mut pb) = (k.src_ip, k.dst_ip, k.sport, k.dport);
    if b < a || (b == a && pb < pa) {
        std::mem::swap(&mut a, &mut b);
        std::mem::swap(&mut pa, &mut pb);
    }
    let mut m = [0u8; 13];
    m[0..4].copy_from_slice(&a.to_be_bytes());
    m[4..8].copy_from_slice(&b.to_be_bytes());
    m[8..10].copy_from_slice(&pa.to_be_bytes());
    m[10..12].copy_from_slice(&pb.to_be_bytes());
    m[12] = k.proto;
    match siphash24(key, &m) as u32 {
        0 => 1,
        h => h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: SipKey = SipKey(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908);

    #[test]
    fn siphash24_matches_the_reference_vectors() {
        // Aumasson and Bernstein, "SipHash: a fast short-input PRF", appendix A: key 00..0f,
        // message 00..0e; and the first entry of the reference vectors (empty message).
        let msg: Vec<u8> = (0u8..15).collect();
        assert_eq!(siphash24(KEY, &msg), 0xa129_ca61_49be_45e5);
        assert_eq!(siphash24(KEY, &[]), 0x726f_db47_dd0e_0e31);
    }

    #[test]
    fn flow_hash_is_symmetric_and_keyed() {
        let fwd = FlowKey {
            src_ip: 0x0a00_0001,
            dst_ip: 0xc0a8_0102,
            sport: 40000,
            dport: 5001,
            proto: 17,
            tos: 0,
            mark: 0,
            priority: 0,
        };
        let rev = FlowKey { src_ip: fwd.dst_ip, dst_ip: fwd.src_ip, sport: fwd.dport, dport: fwd.sport, ..fwd };
        assert_eq!(flow_hash(&fwd, KEY), flow_hash(&rev, KEY));
        assert_ne!(flow_hash(&fwd, KEY), flow_hash(&fwd, SipKey(1, 2)));
        let other_port = FlowKey { sport: 40001, ..fwd };
        assert_ne!(flow_hash(&fwd, KEY), flow_hash(&other_port, KEY));
    }
}
