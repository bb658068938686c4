//! `struct psched_ratecfg` (Linux `include/net/sch_generic.h`, `net/sched/sch_generic.c`
//! `psched_ratecfg_precompute`/`psched_l2t_ns`, 6.x): a rate with its per-packet length
//! adjustments, shared by tbf and the police action.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkLayer {
    Ethernet,
    /// `linklayer atm` / `adsl`: every packet padded to whole 53-byte cells of 48 payload bytes.
    Atm,
}

/// `struct psched_ratecfg`: a rate with its per-packet length adjustments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateCfg {
    pub bytes_per_sec: u64,
    pub overhead: u16,
    pub mpu: u16,
    pub linklayer: LinkLayer,
}

impl RateCfg {
    /// `psched_l2t_ns`: nanoseconds to send `len` bytes (floor).
    #[inline]
    pub fn l2t_ns(&self, len: u32) -> i64 {
        let mut l = len as u64 + self.overhead as u64;
        if l < self.mpu as u64 {
            l = self.mpu as u64;
        }
        if self.linklayer == LinkLayer::Atm {
            l = l.div_ceil(48) * 53;
        }
        (l as u128 * 1_000_000_000 / self.bytes_per_sec as u128) as i64
    }
}
