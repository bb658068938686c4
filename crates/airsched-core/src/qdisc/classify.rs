//! tc filters: what they match and which class they name (`net/sched/cls_u32.c`, `cls_fw.c`,
//! as in Linux 6.x, reduced to what an IPv4/UDP cell needs).
//!
//! A qdisc runs the filters attached to it (or to one of its classes) in order of priority
//! (`prio`/`pref`, lower first; equal priorities in the order they were added) and takes the
//! first match's `classid`/`flowid`. u32 matches 32-bit words of the packet at byte offsets from
//! the start of the IP header, under a mask, as the kernel's u32 does; tc's `match ip src ...`
//! sugar is turned into such keys by the tc parser. The skb->priority shortcut (a priority whose
//! major equals the qdisc handle selects a class directly) is each qdisc's own business.

use super::police::{Control, Police};
use super::Handle;
use crate::packet::FlowKey;
use crate::time::Nanos;

/// One u32 key: the 32-bit big-endian word at byte offset `off` of the IP header, masked,
/// must equal `val` (already masked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct U32Key {
    pub off: u32,
    pub mask: u32,
    pub val: u32,
}

impl U32Key {
    /// Where tc puts a `bytes`-wide field (1, 2 or 4) at byte offset `off`: the aligned word's
    /// offset and the left shift of value and mask in it (iproute2's `pack_key8/16/32`: a 16-bit
    /// field at an odd offset lands in the low half of its word, as tc packs it).
    /// Offsets may be negative (u32's `nexthdr+` arithmetic), hence i64.
    pub fn packing(off: i64, bytes: u32) -> (i64, u32) {
        match bytes {
            4 => (off, 0),
            2 => (off & !3, if off & 3 == 0 { 16 } else { 0 }),
            _ => (off & !3, 8 * (3 - (off & 3)) as u32),
        }
    }

    /// A key on `bytes` bytes at `off` (1, 2 or 4), expressed on the aligned word as tc does:
    /// `match u8 0x10 0xff at 1` becomes mask 0x00ff0000 at offset 0.
    #[cfg(test)]
    pub fn from_field(off: u32, bytes: u32, value: u32, mask: u32) -> U32Key {
        let (word, shift) = Self::packing(off as i64, bytes);
        let word = word as u32;
        let width_mask = if bytes >= 4 { u32::MAX } else { (1u32 << (8 * bytes)) - 1 };
        let m = (mask & width_mask) << shift;
        U32Key { off: word, mask: m, val: (value << shift) & m }
    }

    #[inline]
    fn matches(&self, hdr: &[u8; 28]) -> bool {
        let o = self.off as usize;
        let word = if o + 4 <= hdr.len() {
            u32::from_be_bytes([hdr[o], hdr[o + 1], hdr[o + 2], hdr[o + 3]])
        } else {
            0 // payload bytes: zero in the model
        };
        word & self.mask == self.val
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// All keys must match (an empty list matches everything: `match u32 0 0`).
    U32 { keys: Vec<U32Key> },
    /// cls_fw: matches when `skb->mark & mask == handle`.
    Fw { handle: u32, mask: u32 },
    /// matchall: every packet.
    MatchAll,
    /// cls_flower: the IPv4/L4 keys airsched's packets carry, each under its mask.
    Flower(FlowerKeys),
    /// cls_basic: an ematch tree (qdisc/ematch.rs); an empty tree matches every packet.
    Basic(Vec<super::ematch::Term>),
}

/// cls_flower's keys that airsched models (`fl_classify` masks the packet's dissected keys and
/// compares; a port range is `min <= port <= max`, `fl_range_port_dst_cmp`). `None`: not
/// given, any value matches. Addresses are (value, prefix length); ports inclusive ranges (a
/// single port is min = max); tos (value, mask).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowerKeys {
    pub ip_proto: Option<u8>,
    pub src_ip: Option<(u32, u32)>,
    pub dst_ip: Option<(u32, u32)>,
    pub src_port: Option<(u16, u16)>,
    pub dst_port: Option<(u16, u16)>,
    pub ip_tos: Option<(u8, u8)>,
}

impl FlowerKeys {
    #[inline]
    pub fn matches(&self, key: &FlowKey) -> bool {
        let prefix = |(addr, len): (u32, u32), ip: u32| {
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
            ip & mask == addr & mask
        };
        // Ports are dissected only for TCP, UDP and SCTP; tc requires ip_proto for them.
        let ports = matches!(key.proto, 6 | 17 | 132);
        self.ip_proto.is_none_or(|p| key.proto == p)
            && self.src_ip.is_none_or(|a| prefix(a, key.src_ip))
            && self.dst_ip.is_none_or(|a| prefix(a, key.dst_ip))
            && self.src_port.is_none_or(|(lo, hi)| ports && (lo..=hi).contains(&key.sport))
            && self.dst_port.is_none_or(|(lo, hi)| ports && (lo..=hi).contains(&key.dport))
            && self.ip_tos.is_none_or(|(v, m)| key.tos & m == v & m)
    }
}

/// One `tc filter add` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The qdisc or class the filter is attached to.
    pub parent: Handle,
    /// `prio`/`pref`: lower runs first.
    pub prio: u32,
    /// EtherType it applies to (`protocol ip` = 0x0800, `all` = 0x0003).
    pub protocol: u16,
    pub kind: FilterKind,
    /// `flowid`/`classid`.
    pub classid: Handle,
    /// Script line, for messages.
    pub line: u32,
    /// `police ...` / `action police ...`: the policer the filter's matches go through.
    /// Shared (`Arc`) with the device's policer list, which reports its counters
    /// ([`super::police::PolicerRef`]); one policer per filter, as built.
    pub police: Option<std::sync::Arc<Police>>,
}

/// What classification decided (`tcf_classify`'s result as a qdisc reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A filter matched and names this class.
    Class(Handle),
    /// No filter took the packet.
    Miss,
    /// An action said drop (TC_ACT_SHOT): the qdisc drops the packet and counts it.
    Shot,
}

impl Verdict {
    /// The class, if any (a shot packet has none).
    pub fn class(self) -> Option<Handle> {
        match self {
            Verdict::Class(h) => Some(h),
            _ => None,
        }
    }
}

/// `max_reclassify_loop` of `__tcf_classify` (Linux 6.1).
const MAX_RECLASSIFY_LOOP: u32 = 16;

pub const ETH_P_IP: u16 = 0x0800;
pub const ETH_P_ALL: u16 = 0x0003;

impl Filter {
    pub fn matches(&self, key: &FlowKey, ip_len: u32) -> bool {
        self.matches_on(key, ip_len, false)
    }

    /// [`Filter::matches`] on a device's egress (`ingress` false) or receive path.
    pub fn matches_on(&self, key: &FlowKey, ip_len: u32, ingress: bool) -> bool {
        if self.protocol != ETH_P_IP && self.protocol != ETH_P_ALL {
            return false;
        }
        match &self.kind {
            FilterKind::U32 { keys } => {
                let hdr = key.header_bytes(ip_len);
                keys.iter().all(|k| k.matches(&hdr))
            }
            FilterKind::Fw { handle, mask } => key.mark & mask == *handle,
            FilterKind::MatchAll => true,
            FilterKind::Flower(k) => k.matches(key),
            FilterKind::Basic(t) => super::ematch::matches(t, &super::ematch::View::new(key, ip_len, ingress)),
        }
    }
}

/// Run the filters attached to `at` (a qdisc handle or class id), in priority order; the first
/// match's class id, if any. `filters` must be sorted by (prio, script order), which
/// [`sort_filters`] does once at build time. A policer's drop is a miss here; qdiscs that
/// drop on it call [`classify_at`].
pub fn classify(filters: &[Filter], at: Handle, key: &FlowKey, ip_len: u32) -> Option<Handle> {
    classify_at(filters, at, key, ip_len, Nanos::ZERO).class()
}

/// [`classify`] with the filters' actions run at `now` (`__tcf_classify`, Linux 6.1): a
/// policer's result decides: ok/pipe take the class, continue goes on to the next filter,
/// reclassify starts again at the first filter (at most 16 times, then the packet is shot),
/// drop shoots the packet. The policer sees `qdisc_pkt_len`, the IP datagram + 14.
pub fn classify_at(filters: &[Filter], at: Handle, key: &FlowKey, ip_len: u32, now: Nanos) -> Verdict {
    classify_on(filters, at, key, ip_len, now, false)
}

/// [`classify_at`] on a device's egress (`ingress` false) or on its receive path, where
/// `sch_handle_ingress` (Linux 6.1) runs the filters after the MAC header was pulled: the
/// policer sees `skb->len`, the IP datagram alone (84 bytes for a 56-byte ping in the Debian 6.1
/// guest), and the ematches see the packet from the network header.
pub fn classify_on(filters: &[Filter], at: Handle, key: &FlowKey, ip_len: u32, now: Nanos, ingress: bool) -> Verdict {
    let len = if ingress { ip_len } else { ip_len + super::L2_HEADER_BYTES };
    let mut loops = 0;
    'reclassify: loop {
        for f in filters.iter().filter(|f| f.parent == at) {
            if !f.matches_on(key, ip_len, ingress) {
                continue;
            }
            let Some(p) = &f.police else { return Verdict::Class(f.classid) };
            match p.act(len, now) {
                Control::Ok | Control::Pipe => return Verdict::Class(f.classid),
                Control::Drop => return Verdict::Shot,
                Control::Continue => continue,
                Control::Reclassify => {
                    if loops >= MAX_RECLASSIFY_LOOP {
                        return Verdict::Shot;
                    }
                    loops += 1;
                    continue 'reclassify;
                }
            }
        }
        return Verdict::Miss;
    }
}

/// Order filters as the kernel runs them: by priority, then in the order they were added.
pub fn sort_filters(filters: &mut [Filter]) {
    filters.sort_by_key(|f| f.prio); // stable: ties keep script order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> FlowKey {
        FlowKey {
            src_ip: 0xc0a8_0105,
            dst_ip: 0x0a00_0001,
            sport: 40001,
            dport: 5001,
            proto: 17,
            tos: 0x10,
            mark: 6,
            priority: 0,
        }
    }

    fn u32f(keys: Vec<U32Key>, prio: u32, minor: u16) -> Filter {
        Filter {
            parent: Handle::new(1, 0),
            prio,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys },
            classid: Handle::new(1, minor),
            line: 1,
            police: None,
        }
    }

    #[test]
    fn u32_keys_match_header_fields() {
        // match ip src 192.168.1.0/24
        let src = U32Key { off: 12, mask: 0xffff_ff00, val: 0xc0a8_0100 };
        // match ip dport 5001 0xffff
        let dport = U32Key::from_field(22, 2, 5001, 0xffff);
        assert_eq!(dport, U32Key { off: 20, mask: 0x0000_ffff, val: 5001 });
        // match ip tos 0x10 0xff
        let tos = U32Key::from_field(1, 1, 0x10, 0xff);
        assert_eq!(tos, U32Key { off: 0, mask: 0x00ff_0000, val: 0x0010_0000 });
        // match ip protocol 17 0xff
        let proto = U32Key::from_field(9, 1, 17, 0xff);
        let hdr = key().header_bytes(1500);
        for k in [src, dport, tos, proto] {
            assert!(k.matches(&hdr), "{k:?}");
        }
        let other_net = U32Key { off: 12, mask: 0xffff_ff00, val: 0xc0a8_0200 };
        assert!(!other_net.matches(&hdr));
    }

    #[test]
    fn odd_offsets_pack_as_tc_does_without_overflow() {
        // A 16-bit field at offset 3 goes into the low half of word 0 (tc's pack_key16).
        assert_eq!(U32Key::from_field(3, 2, 0x1234, 0xffff), U32Key { off: 0, mask: 0x0000_ffff, val: 0x1234 });
        assert_eq!(U32Key::packing(23, 1), (20, 0));
        assert_eq!(U32Key::packing(-2, 2), (-4, 0));
        assert_eq!(U32Key::packing(16, 4), (16, 0));
    }

    #[test]
    fn first_match_in_priority_order_wins() {
        let any = vec![];
        let dport = vec![U32Key::from_field(22, 2, 5001, 0xffff)];
        let mut fs = vec![u32f(any, 20, 0x30), u32f(dport, 10, 0x10)];
        sort_filters(&mut fs);
        assert_eq!(classify(&fs, Handle::new(1, 0), &key(), 1500), Some(Handle::new(1, 0x10)));
        // Filters on another parent are not consulted.
        assert_eq!(classify(&fs, Handle::new(1, 1), &key(), 1500), None);
    }

    #[test]
    fn fw_matches_the_mark() {
        let f = Filter {
            parent: Handle::new(1, 0),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::Fw { handle: 6, mask: 0xffff_ffff },
            classid: Handle::new(1, 0x30),
            line: 1,
            police: None,
        };
        assert!(f.matches(&key(), 100));
        let mut k = key();
        k.mark = 7;
        assert!(!f.matches(&k, 100));
    }

    fn policed(prio: u32, minor: u16, exceed: Control) -> Filter {
        use crate::qdisc::police::{xmittime_ticks, LinkLayer, PoliceParams, RateCfg};
        let rate = RateCfg { bytes_per_sec: 125_000, overhead: 0, mpu: 0, linklayer: LinkLayer::Ethernet };
        let params = PoliceParams {
            rate: Some(rate),
            peak: None,
            burst_ticks: xmittime_ticks(125_000, 1514),
            burst: 1514,
            given_mtu: 0,
            mtu: 2040,
            exceed,
            conform: None,
            index: 0,
            legacy: true,
        };
        let mut f = u32f(vec![], prio, minor);
        f.police = Some(std::sync::Arc::new(Police::new(params, 1)));
        f
    }

    #[test]
    fn a_policers_result_decides_as_tcf_classify_does() {
        let at = Handle::new(1, 0);
        // 1500 bytes at the qdisc: the 1514-byte bucket takes one, the next exceeds.
        let ip_len = 1486;
        for (exceed, want) in [
            (Control::Drop, Verdict::Shot),
            (Control::Continue, Verdict::Class(Handle::new(1, 2))), // on to the next filter
            (Control::Ok, Verdict::Class(Handle::new(1, 1))),
            (Control::Reclassify, Verdict::Shot), // 16 restarts, then shot
        ] {
            let mut fs = vec![policed(1, 1, exceed), u32f(vec![], 2, 2)];
            sort_filters(&mut fs);
            assert_eq!(classify_at(&fs, at, &key(), ip_len, Nanos::ZERO), Verdict::Class(Handle::new(1, 1)));
            assert_eq!(classify_at(&fs, at, &key(), ip_len, Nanos::ZERO), want, "{exceed:?}");
            let st = fs[0].police.as_ref().unwrap().stats();
            // A reclassified packet meets the policer 17 times, each an overlimit.
            let evaluations = if exceed == Control::Reclassify { 1 + 17 } else { 2 };
            assert_eq!((st.packets, st.overlimits), (evaluations, evaluations - 1), "{exceed:?}");
            assert_eq!(st.drops, u64::from(exceed == Control::Drop), "{exceed:?}");
            // 12 ms later the bucket has refilled (1500 bytes at 125 kB/s).
            assert_eq!(classify_at(&fs, at, &key(), ip_len, Nanos(12_000_000)), Verdict::Class(Handle::new(1, 1)));
        }
    }
}
