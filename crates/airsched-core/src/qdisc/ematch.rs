//! Extended matches (ematches) as cls_basic runs them: a sequence of `cmp`, `u32` and `meta`
//! matches joined by AND/OR, each optionally inverted, with parenthesised groups (containers)
//! (`net/sched/ematch.c`, `em_cmp.c`, `em_u32.c`, `em_meta.c`, Linux 6.1; the text iproute2
//! 6.1's `print_ematch` and `em_*.c` print). docs/tc-basic.md describes the words.
//!
//! Evaluation is `__tcf_em_tree_match`: left to right; after each match (its result inverted
//! by NOT), an AND with a false result or an OR with a true one ends the sequence with that
//! result; the last match's result is the sequence's. So `a or b and c` is `a || (b && c)` and
//! `a and b or c` is `a && (b || c)`: right-associative, no precedence. A group is evaluated
//! the same way and its result (inverted by its NOT) goes on in the enclosing sequence.
//!
//! What a packet shows: airsched's packets carry a 14-byte Ethernet header (only its
//! EtherType, 0x0800, is modelled), the 20-byte IPv4 header and 8 bytes of L4 header
//! ([`crate::packet::FlowKey::header_bytes`]); payload bytes read as zero. A read past the end
//! of the packet does not match (`tcf_valid_offset`). On egress `skb->data` is the MAC header
//! (`pkt_len` = IP length + 14); on ingress (`sch_handle_ingress`) the MAC header has been
//! pulled (`pkt_len` = the IP length) and the transport header is still the network header
//! (`__netif_receive_skb_core` resets it), so `layer transport` reads the IP header there.

use crate::packet::FlowKey;

/// `eq`, `lt`, `gt` (TCF_EM_OPND_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Lt,
    Gt,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Lt => "lt",
            Op::Gt => "gt",
        }
    }

    pub fn from_word(w: &str) -> Option<Op> {
        match w {
            "eq" => Some(Op::Eq),
            "lt" => Some(Op::Lt),
            "gt" => Some(Op::Gt),
            _ => None,
        }
    }

    #[inline]
    fn holds(self, l: u64, r: u64) -> bool {
        match self {
            Op::Eq => l == r,
            Op::Lt => l < r,
            Op::Gt => l > r,
        }
    }
}

/// How a match joins the next one (TCF_EM_REL_*): End marks the last of a sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    End,
    And,
    Or,
}

/// One match of a sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// `not` (TCF_EM_INVERT).
    pub invert: bool,
    /// The relation to the next term.
    pub rel: Rel,
    pub m: EMatch,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EMatch {
    Cmp(Cmp),
    U32(EmU32),
    Meta(Meta),
    /// `( ... )`: a container whose result is its sequence's.
    Group(Vec<Term>),
}

/// `cmp(ALIGN at OFF [layer L] [mask M] [trans] OP VALUE)` (`struct tcf_em_cmp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmp {
    /// 1, 2 or 4 bytes (u8/u16/u32).
    pub bytes: u8,
    /// From the layer's header (tc truncates the word to 16 bits, as the kernel's field).
    pub off: u16,
    /// 0 link, 1 network, 2 transport.
    pub layer: u8,
    /// 0: none.
    pub mask: u32,
    /// TCF_EM_CMP_TRANS.
    pub trans: bool,
    pub op: Op,
    pub val: u32,
}

/// `u32(ALIGN VALUE MASK at [nexthdr+]OFF)`: a `struct tc_u32_key` at the network header.
/// `val`/`mask` are the big-endian word as tc packs it (`u32(u8 0x11 0xff at 9)` is
/// 00110000/00ff0000 at 8). cls_basic hands em_u32 no packet info, so `nexthdr+` adds nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmU32 {
    pub val: u32,
    pub mask: u32,
    pub off: i32,
    pub nexthdr: bool,
}

/// The meta ids airsched's packets can answer (iproute2's names; `fwmark` is read as
/// `nf_mark`, and printed so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaId {
    Priority,
    Protocol,
    PktType,
    PktLen,
    NfMark,
    TcIndex,
    Vlan,
}

impl MetaId {
    /// The name iproute2 prints.
    pub fn name(self) -> &'static str {
        match self {
            MetaId::Priority => "priority",
            MetaId::Protocol => "protocol",
            MetaId::PktType => "pkt_type",
            MetaId::PktLen => "pkt_len",
            MetaId::NfMark => "nf_mark",
            MetaId::TcIndex => "tc_index",
            MetaId::Vlan => "vlan",
        }
    }

    pub fn from_word(w: &str) -> Option<MetaId> {
        Some(match w {
            "priority" => MetaId::Priority,
            "protocol" => MetaId::Protocol,
            "pkt_type" => MetaId::PktType,
            "pkt_len" => MetaId::PktLen,
            "nf_mark" | "fwmark" => MetaId::NfMark,
            "tc_index" => MetaId::TcIndex,
            "vlan" => MetaId::Vlan,
            _ => return None,
        })
    }
}

/// One side of a meta comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaObj {
    Value(u32),
    /// An id; its value is shifted right by `shift`, then masked by `mask` (0: none), as
    /// `meta_int_apply_extras`.
    Id {
        id: MetaId,
        shift: u8,
        mask: u32,
    },
}

/// `meta(LEFT OP RIGHT)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub left: MetaObj,
    pub op: Op,
    pub right: MetaObj,
}

/// What the ematches see of one packet.
pub struct View<'k> {
    pub key: &'k FlowKey,
    pub hdr: [u8; 28],
    pub ip_len: u32,
    /// On a device's receive path (the MAC header pulled).
    pub ingress: bool,
}

impl<'k> View<'k> {
    pub fn new(key: &'k FlowKey, ip_len: u32, ingress: bool) -> Self {
        View { key, hdr: key.header_bytes(ip_len), ip_len, ingress }
    }

    /// `len` bytes at `off` from the network header, big-endian; None past the packet's end.
    /// Offsets -14..-1 are the Ethernet header: only the EtherType (-2, -1) is modelled (the
    /// parser refuses reads of the MAC addresses).
    fn read(&self, off: i64, len: u32) -> Option<u32> {
        if off < -14 || off + len as i64 > self.ip_len as i64 {
            return None;
        }
        let mut v = 0u32;
        for i in 0..len as i64 {
            let b = match off + i {
                -2 => 0x08,
                o if o < 0 => 0, // MAC addresses: refused by the parser
                o if (o as usize) < self.hdr.len() => self.hdr[o as usize],
                _ => 0, // payload: zero in the model
            };
            v = (v << 8) | u32::from(b);
        }
        Some(v)
    }

    /// `skb->len` (`meta pkt_len`).
    fn skb_len(&self) -> u32 {
        if self.ingress {
            self.ip_len
        } else {
            self.ip_len + super::L2_HEADER_BYTES
        }
    }
}

impl Cmp {
    /// Offset of the layer's header from the network header.
    fn base(&self, v: &View) -> i64 {
        match self.layer {
            0 => -i64::from(super::L2_HEADER_BYTES),
            1 => 0,
            // The transport header: after the 20-byte IP header on egress; on ingress the
            // receive path has reset it to the network header.
            _ => {
                if v.ingress {
                    0
                } else {
                    20
                }
            }
        }
    }

    /// `em_cmp_match`: with `trans`, the big-endian value read is byte-swapped once more
    /// (`be16_to_cpu`/`be32_to_cpu` on a little-endian host, as x86 runs it).
    fn matches(&self, v: &View) -> bool {
        let Some(mut val) = v.read(self.base(v) + i64::from(self.off), u32::from(self.bytes)) else { return false };
        if self.trans {
            val = match self.bytes {
                2 => u32::from((val as u16).swap_bytes()),
                4 => val.swap_bytes(),
                _ => val,
            };
        }
        if self.mask != 0 {
            val &= self.mask;
        }
        self.op.holds(u64::from(val), u64::from(self.val))
    }
}

impl EmU32 {
    /// `em_u32_match` with no packet info (cls_basic): the word at the network header + off.
    fn matches(&self, v: &View) -> bool {
        match v.read(i64::from(self.off), 4) {
            Some(w) => (w ^ self.val) & self.mask == 0,
            None => false,
        }
    }
}

impl MetaObj {
    /// `meta_get` with the extras applied; None when the value is absent (no VLAN tag).
    fn get(&self, v: &View) -> Option<u64> {
        match *self {
            MetaObj::Value(x) => Some(u64::from(x)),
            MetaObj::Id { id, shift, mask } => {
                let mut x: u64 = match id {
                    MetaId::Priority => u64::from(v.key.priority),
                    // skb->protocol is big-endian and em_meta hands it over unconverted: on a
                    // little-endian host ETH_P_IP (0x0800) reads 8.
                    MetaId::Protocol => u64::from(0x0800u16.swap_bytes()),
                    MetaId::PktType => 0, // PACKET_HOST
                    MetaId::PktLen => u64::from(v.skb_len()),
                    MetaId::NfMark => u64::from(v.key.mark),
                    MetaId::TcIndex => 0,
                    MetaId::Vlan => return None, // no VLAN tag: meta_get fails, no match
                };
                if shift != 0 {
                    x >>= shift;
                }
                if mask != 0 {
                    x &= u64::from(mask);
                }
                Some(x)
            }
        }
    }
}

impl Meta {
    fn matches(&self, v: &View) -> bool {
        match (self.left.get(v), self.right.get(v)) {
            (Some(l), Some(r)) => self.op.holds(l, r),
            _ => false,
        }
    }
}

/// `__tcf_em_tree_match` on a sequence. An empty tree matches every packet
/// (`tcf_em_tree_match` with no matches).
pub fn matches(seq: &[Term], v: &View) -> bool {
    let mut res = true;
    for t in seq {
        let r = match &t.m {
            EMatch::Cmp(c) => c.matches(v),
            EMatch::U32(u) => u.matches(v),
            EMatch::Meta(m) => m.matches(v),
            EMatch::Group(g) => matches(g, v),
        };
        res = r != t.invert;
        match t.rel {
            Rel::End => return res,
            Rel::And if !res => return false,
            Rel::Or if res => return true,
            _ => {}
        }
    }
    res
}

/// The tree as iproute2 6.1's `print_ematch` prints it (from the newline after the filter's
/// `flowid`): `\n  cmp(u8 at 1 layer 1 mask 0xfc eq 184)\n  AND meta(priority eq 6)\n`.
pub fn text(seq: &[Term]) -> String {
    let mut s = String::new();
    if !seq.is_empty() {
        s.push_str("\n  ");
        print_seq(&mut s, seq, 1);
    }
    s
}

fn pad(s: &mut String, n: usize) {
    for _ in 0..n {
        s.push_str("  ");
    }
}

fn print_seq(s: &mut String, seq: &[Term], prefix: usize) {
    for t in seq {
        if t.invert {
            s.push_str("NOT ");
        }
        match &t.m {
            EMatch::Group(g) => {
                s.push_str("(\n");
                pad(s, prefix + 1);
                print_seq(s, g, prefix + 1);
                pad(s, prefix);
                s.push_str(") ");
            }
            m => {
                match m {
                    EMatch::Cmp(c) => {
                        let align = match c.bytes {
                            1 => "u8",
                            2 => "u16",
                            _ => "u32",
                        };
                        s.push_str(&format!("cmp({align} at {} layer {} ", c.off, c.layer));
                        if c.mask != 0 {
                            s.push_str(&format!("mask 0x{:x} ", c.mask));
                        }
                        if c.trans {
                            s.push_str("trans ");
                        }
                        s.push_str(&format!("{} {})\n", c.op.name(), c.val as i32));
                    }
                    EMatch::U32(u) => s.push_str(&format!(
                        "u32({:08x}/{:08x} at {}{})\n",
                        u.val,
                        u.mask,
                        if u.nexthdr { "nexthdr+" } else { "" },
                        u.off
                    )),
                    EMatch::Meta(mt) => {
                        s.push_str("meta(");
                        meta_obj_text(s, &mt.left);
                        s.push_str(&format!(" {} ", mt.op.name()));
                        meta_obj_text(s, &mt.right);
                        s.push_str(")\n");
                    }
                    EMatch::Group(_) => {}
                }
                if t.rel != Rel::End {
                    pad(s, prefix);
                }
            }
        }
        match t.rel {
            Rel::And => s.push_str("AND "),
            Rel::Or => s.push_str("OR "),
            Rel::End => return,
        }
    }
}

fn meta_obj_text(s: &mut String, o: &MetaObj) {
    match *o {
        MetaObj::Value(x) => s.push_str(&format!("{}", x as i32)),
        MetaObj::Id { id, shift, mask } => {
            s.push_str(id.name());
            if shift != 0 {
                s.push_str(&format!(" shift {shift}"));
            }
            if mask != 0 {
                s.push_str(&format!(" mask 0x{mask:08x}"));
            }
        }
    }
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
            tos: 0xb8,
            mark: 30,
            priority: 6,
        }
    }

    fn t(m: EMatch, rel: Rel) -> Term {
        Term { invert: false, rel, m }
    }

    fn meta_eq(id: MetaId, val: u32) -> EMatch {
        EMatch::Meta(Meta { left: MetaObj::Id { id, shift: 0, mask: 0 }, op: Op::Eq, right: MetaObj::Value(val) })
    }

    fn cmp(bytes: u8, off: u16, layer: u8, mask: u32, op: Op, val: u32) -> EMatch {
        EMatch::Cmp(Cmp { bytes, off, layer, mask, trans: false, op, val })
    }

    #[test]
    fn cmp_reads_each_layer_of_the_packet() {
        let k = key();
        let v = View::new(&k, 1000, false);
        let yes = |m: EMatch| matches(&[t(m, Rel::End)], &v);
        // DSCP EF under the ECN mask, the protocol byte, the destination port (transport).
        assert!(yes(cmp(1, 1, 1, 0xfc, Op::Eq, 0xb8)));
        assert!(!yes(cmp(1, 1, 1, 0xfc, Op::Eq, 0xb4)));
        assert!(yes(cmp(1, 9, 1, 0, Op::Eq, 17)));
        assert!(yes(cmp(2, 2, 2, 0, Op::Eq, 5001)));
        assert!(!yes(cmp(2, 2, 2, 0, Op::Eq, 5002)));
        assert!(yes(cmp(2, 2, 2, 0, Op::Gt, 5000)) && !yes(cmp(2, 2, 2, 0, Op::Gt, 5001)));
        assert!(yes(cmp(2, 2, 2, 0, Op::Lt, 5002)) && !yes(cmp(2, 2, 2, 0, Op::Lt, 5001)));
        // The EtherType at link offset 12; the total length; the source address.
        assert!(yes(cmp(2, 12, 0, 0, Op::Eq, 0x0800)));
        assert!(yes(cmp(2, 2, 1, 0, Op::Eq, 1000)));
        assert!(yes(cmp(4, 12, 1, 0xffff_ff00, Op::Eq, 0xc0a8_0100)));
        // Payload reads zero; past the end of the packet nothing matches, not even "eq 0".
        assert!(yes(cmp(1, 999, 1, 0, Op::Eq, 0)));
        assert!(!yes(cmp(1, 1000, 1, 0, Op::Eq, 0)));
        assert!(!yes(cmp(2, 999, 1, 0, Op::Eq, 0)));
        // trans: the big-endian port is swapped once more on a little-endian host.
        let tr = EMatch::Cmp(Cmp { bytes: 2, off: 2, layer: 2, mask: 0, trans: true, op: Op::Eq, val: 0x8913 });
        assert_eq!(5001u16.swap_bytes(), 0x8913);
        assert!(yes(tr));
        // On ingress the transport header is the network header.
        let vi = View::new(&k, 1000, true);
        assert!(matches(&[t(cmp(1, 9, 2, 0, Op::Eq, 17), Rel::End)], &vi));
    }

    #[test]
    fn u32_and_meta_read_what_the_kernel_does() {
        let k = key();
        let v = View::new(&k, 1000, false);
        let yes = |m: EMatch| matches(&[t(m, Rel::End)], &v);
        // u32(u8 0x11 0xff at 9) is 00110000/00ff0000 at 8.
        assert!(yes(EMatch::U32(EmU32 { val: 0x0011_0000, mask: 0x00ff_0000, off: 8, nexthdr: false })));
        assert!(!yes(EMatch::U32(EmU32 { val: 0x0006_0000, mask: 0x00ff_0000, off: 8, nexthdr: false })));
        assert!(!yes(EMatch::U32(EmU32 { val: 0, mask: 0, off: 997, nexthdr: false })));
        assert!(yes(meta_eq(MetaId::Priority, 6)) && !yes(meta_eq(MetaId::Priority, 5)));
        assert!(yes(meta_eq(MetaId::NfMark, 30)));
        assert!(yes(meta_eq(MetaId::Protocol, 8)) && !yes(meta_eq(MetaId::Protocol, 0x800)));
        assert!(yes(meta_eq(MetaId::PktLen, 1014)));
        assert!(matches(&[t(meta_eq(MetaId::PktLen, 1000), Rel::End)], &View::new(&k, 1000, true)));
        // No VLAN tag: the meta fails, and NOT of it matches.
        assert!(!yes(meta_eq(MetaId::Vlan, 0)));
        assert!(matches(&[Term { invert: true, rel: Rel::End, m: meta_eq(MetaId::Vlan, 0) }], &v));
        // Extras: shift, then mask. mark 30 >> 1 = 15, & 0x6 = 6.
        let m = EMatch::Meta(Meta {
            left: MetaObj::Id { id: MetaId::NfMark, shift: 1, mask: 6 },
            op: Op::Eq,
            right: MetaObj::Value(6),
        });
        assert!(yes(m));
    }

    #[test]
    fn sequences_end_early_as_the_kernel_walks_them() {
        let k = key();
        let v = View::new(&k, 1000, false);
        let (tt, ff) = (meta_eq(MetaId::Priority, 6), meta_eq(MetaId::Priority, 1));
        let seq = |a: &EMatch, r1: Rel, b: &EMatch, r2: Rel, c: &EMatch| {
            matches(&[t(a.clone(), r1), t(b.clone(), r2), t(c.clone(), Rel::End)], &v)
        };
        // a or b and c = a || (b && c); a and b or c = a && (b || c).
        for (a, b, c) in [(&tt, &ff, &ff), (&ff, &tt, &ff), (&ff, &tt, &tt), (&ff, &ff, &tt)] {
            let (x, y, z) = (a == &tt, b == &tt, c == &tt);
            assert_eq!(seq(a, Rel::Or, b, Rel::And, c), x || (y && z));
            assert_eq!(seq(a, Rel::And, b, Rel::Or, c), x && (y || z));
        }
        // (ff or tt) and not (tt): a group's result goes on in the outer sequence.
        let g1 = EMatch::Group(vec![t(ff.clone(), Rel::Or), t(tt.clone(), Rel::End)]);
        let g2 = EMatch::Group(vec![t(tt.clone(), Rel::End)]);
        assert!(!matches(&[t(g1.clone(), Rel::And), Term { invert: true, rel: Rel::End, m: g2.clone() }], &v));
        assert!(matches(&[t(g1, Rel::And), Term { invert: false, rel: Rel::End, m: g2 }], &v));
        assert!(matches(&[], &v));
    }

    #[test]
    fn text_is_what_iproute2_prints() {
        // From the Debian 6.1 guest's `tc filter show` (docs/tc-basic.md).
        let a = vec![t(cmp(1, 1, 1, 0xfc, Op::Eq, 184), Rel::And), t(meta_eq(MetaId::Priority, 6), Rel::End)];
        assert_eq!(text(&a), "\n  cmp(u8 at 1 layer 1 mask 0xfc eq 184)\n  AND meta(priority eq 6)\n");
        let g = vec![
            Term {
                invert: true,
                rel: Rel::Or,
                m: EMatch::U32(EmU32 { val: 0x1f90, mask: 0xffff, off: 0, nexthdr: true }),
            },
            t(
                EMatch::Group(vec![
                    t(
                        EMatch::Meta(Meta {
                            left: MetaObj::Id { id: MetaId::NfMark, shift: 0, mask: 0 },
                            op: Op::Gt,
                            right: MetaObj::Value(24),
                        }),
                        Rel::And,
                    ),
                    Term { invert: true, rel: Rel::End, m: cmp(2, 2, 2, 0, Op::Eq, 80) },
                ]),
                Rel::End,
            ),
        ];
        assert_eq!(
            text(&g),
            "\n  NOT u32(00001f90/0000ffff at nexthdr+0)\n  OR (\n    meta(nf_mark gt 24)\n    AND NOT cmp(u16 at 2 layer 2 eq 80)\n  ) "
        );
        let nested = vec![t(
            EMatch::Group(vec![t(EMatch::Group(vec![t(meta_eq(MetaId::Priority, 7), Rel::End)]), Rel::End)]),
            Rel::End,
        )];
        assert_eq!(text(&nested), "\n  (\n    (\n      meta(priority eq 7)\n    )   ) ");
        let big = vec![t(
            EMatch::Cmp(Cmp { bytes: 4, off: 12, layer: 2, mask: 0, trans: true, op: Op::Gt, val: 0x8000_0000 }),
            Rel::End,
        )];
        assert_eq!(text(&big), "\n  cmp(u32 at 12 layer 2 trans gt -2147483648)\n");
    }
}
