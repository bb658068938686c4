//! The classifiers' own options: `u32`, `fw` and `matchall`, as iproute2 parses them
//! (`tc/f_u32.c`, `f_fw.c`, `f_matchall.c`), turned into [`crate::qdisc::classify`] filters.
//!
//! u32 sugar becomes 32-bit keys on the IPv4 header exactly as tc packs them: `match ip src
//! A.B.C.D/LEN` (offset 12), `dst` (16), `tos`/`dsfield`/`precedence V M` (byte 1), `ihl` (byte
//! 0), `protocol V M` (byte 9), `sport`/`dport V M` (bytes 20/22, assuming no IP options),
//! `icmp_type`/`icmp_code`, `nofrag`/`firstfrag`/`df`/`mf`; `match u32|u16|u8 VAL MASK [at
//! OFF]`; `match tcp|udp src|dst V M` and `match icmp type|code V M`. Values are read like C's
//! `strtoul` with base 0 (`0x10`, `16`, `020`), masks in hexadecimal (`ffff` = `0xffff`), as tc
//! reads them. Two matches on the same word are merged; contradicting ones are an error (tc:
//! "Illegal match").
//!
//! `nexthdr+N` offsets (and the `tcp`/`udp`/`icmp` matches, which use them) are relative to an
//! offset that only a u32 hash-table link with `offset` sets; at the root table the kernel adds
//! nothing (`off2 = 0` in `u32_classify`), so `at nexthdr+2` reads byte 2 of the IP header, not
//! the destination port. airsched does the same ([`NEXTHDR_BASE`]) and warns; hash tables,
//! links and `offset` are not modelled.
//!
//! flower (`f_flower.c`, iproute2 6.1; `cls_flower.c`) reads the IPv4/L4/TOS keys airsched's
//! packets carry (docs/tc-flower.md).
//!
//! Actions change what happens to matched packets and are errors, except the no-op `action
//! pass`/`action ok` (a warning), `police`/`action police` (tc/police.rs, docs/tc-police.md)
//! and `action mirred egress redirect dev IFB` (`act_mirred.c`, Linux 6.6), which hands the
//! packet to an ifb device (docs/tc.md, "One qdisc over several interfaces"); the builder
//! checks that the device is an ifb.

use super::lex::{
    err, err_at, matches, parse_c_u32, parse_classid, parse_hex_u32, parse_ipv4_prefix, warn, Cursor, Handle, TcDiag,
    Tok,
};
use crate::qdisc::classify::{FilterKind, FlowerKeys, U32Key, ETH_P_ALL, ETH_P_IP};
use crate::qdisc::police::PoliceParams;

/// What `nexthdr+N` adds to N: the offset the u32 root table sees, 0 as in the kernel (see the
/// module documentation). A model that followed a `link ... offset at 0 mask 0f00 shift 6`
/// would use the IP header length, 20 bytes in airsched.
pub const NEXTHDR_BASE: u32 = 0;

/// flower keys tc accepts that airsched's packets do not carry (a trailing `_` is a prefix).
const FLOWER_UNMODELLED: &[&str] = &[
    "dst_mac",
    "src_mac",
    "vlan_",
    "cvlan_",
    "mpls",
    "mpls_",
    "ip_ttl",
    "ip_flags",
    "tcp_flags",
    "icmp_",
    "arp_",
    "enc_",
    "geneve_opts",
    "vxlan_opts",
    "erspan_opts",
    "gtp_opts",
    "ct_",
    "l2_miss",
    "num_of_vlans",
    "pppoe_sid",
    "ppp_proto",
    "l2tpv3_sid",
    "spi",
    "cfm",
    "hw_tc",
    "eth_type",
    "lse",
];

/// Bytes of header airsched packets carry for u32 (IPv4 without options + UDP header).
const MODELLED_BYTES: i64 = 28;

/// A filter's own part, from the tokens after its kind keyword.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterSpec {
    pub kind: FilterKind,
    /// `flowid`/`classid`.
    pub classid: Handle,
    /// u32: the node handle given with `handle` (htid << 20 | hash << 12 | node; 0 lets the
    /// kernel pick); fw: the mark; matchall: the id (0 lets the kernel pick).
    pub handle: u32,
    /// u32 `ht`: the hash table the node is put in, if named.
    pub ht: Option<u32>,
    /// u32 `order`: the node id, which orders nodes of one priority.
    pub order: Option<u32>,
    /// `skip_sw`: the filter never runs in software (airsched leaves it out).
    pub skip_sw: bool,
    /// `action mirred egress redirect dev NAME`: the device the matched packets go to.
    pub redirect: Option<Redirect>,
    /// `police ...` or `action police ...` (tc/police.rs); boxed: most filters have none.
    pub police: Option<Box<PoliceParams>>,
}

/// The target of `action mirred egress redirect dev NAME`, where the name was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub dev: String,
    pub line: u32,
    pub col: u32,
}

impl FilterSpec {
    pub fn kind_name(&self) -> &'static str {
        kind_name(&self.kind)
    }
}

pub fn kind_name(k: &FilterKind) -> &'static str {
    match k {
        FilterKind::U32 { .. } => "u32",
        FilterKind::Fw { .. } => "fw",
        FilterKind::MatchAll => "matchall",
        FilterKind::Flower(_) => "flower",
        FilterKind::Basic(_) => "basic",
    }
}

/// Protocol names tc knows (`ll_proto_a2n`), the common ones, case-insensitive, or a number.
pub fn parse_protocol(s: &str) -> Option<u16> {
    const NAMES: &[(&str, u16)] = &[
        ("ip", ETH_P_IP),
        ("ipv4", ETH_P_IP),
        ("all", ETH_P_ALL),
        ("ipv6", 0x86DD),
        ("arp", 0x0806),
        ("rarp", 0x8035),
        ("802.1q", 0x8100),
        ("802.1ad", 0x88A8),
        ("802_3", 0x0001),
        ("802_2", 0x0004),
        ("snap", 0x0005),
        ("loop", 0x0060),
        ("x25", 0x0805),
        ("ipx", 0x8137),
        ("ppp_disc", 0x8863),
        ("ppp_ses", 0x8864),
        ("mpls_uc", 0x8847),
        ("mpls_mc", 0x8848),
        ("teb", 0x6558),
        ("lldp", 0x88CC),
        ("cfm", 0x8902),
    ];
    if let Some((_, p)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(s)) {
        return Some(*p);
    }
    parse_c_u32(s).filter(|&n| n <= 0xFFFF).map(|n| n as u16)
}

/// tc's `get_u32_handle`: `HTID:HASH:NODE` in hexadecimal (each part may be empty), or a raw
/// `0x...` number.
pub fn parse_u32_handle(s: &str) -> Option<u32> {
    if !s.contains(':') {
        return if s.starts_with("0x") || s.starts_with("0X") { parse_hex_u32(s) } else { None };
    }
    let mut parts = s.splitn(3, ':');
    let part = |p: Option<&str>, max: u32| -> Option<u32> {
        match p {
            None | Some("") => Some(0),
            Some(t) => parse_hex_u32(t).filter(|&v| v < max),
        }
    };
    let htid = part(parts.next(), 0x1000)?;
    let hash = part(parts.next(), 0x100)?;
    let node = part(parts.next(), 0x1000)?;
    Some((htid << 20) | (hash << 12) | node)
}

/// A filter handle as the classifier reads it, for `filter del ... handle H KIND`.
pub fn parse_filter_handle(kind: &str, s: &str) -> Option<u32> {
    match kind {
        "u32" => parse_u32_handle(s),
        "fw" => parse_c_u32(s.split('/').next().unwrap_or(s)),
        _ => parse_c_u32(s),
    }
}

/// Print a u32 handle as tc does (`800::800`, `801:`).
pub fn u32_handle_text(h: u32) -> String {
    let htid = h >> 20;
    let hash = (h >> 12) & 0xFF;
    let node = h & 0xFFF;
    let mut s = String::new();
    if htid != 0 {
        s.push_str(&format!("{htid:x}:"));
    }
    if hash != 0 {
        s.push_str(&format!("{hash:x}"));
    }
    if node != 0 {
        s.push_str(&format!(":{node:x}"));
    }
    if s.is_empty() {
        s.push_str("none");
    }
    s
}

/// Parse a classifier's options (the tokens after the kind). `handle` is the `handle` argument
/// of the command. Errors and warnings go to `diags`; `None` if the filter cannot be built.
pub fn parse_filter<'a>(
    kind: Tok<'a>,
    handle: Option<Tok<'a>>,
    protocol: u16,
    opts: &[Tok<'a>],
    end: (u32, u32),
    diags: &mut Vec<TcDiag>,
) -> Option<FilterSpec> {
    let mut p = P { cur: Cursor::new(opts, end), diags, redirect: None, police: None };
    match kind.text {
        "u32" => p.u32(kind, handle),
        "fw" => p.fw(kind, handle),
        "matchall" => p.matchall(kind, handle),
        "flower" => p.flower(kind, handle, protocol),
        "basic" => p.basic(kind, handle),
        "bpf" | "route" | "flow" | "cgroup" | "tcindex" | "rsvp" | "rsvp6" => {
            err(
                p.diags,
                kind,
                format!(
                    "the {} classifier is not modelled; airsched supports u32, fw, matchall, flower and basic",
                    kind.text
                ),
            );
            None
        }
        other => {
            err(
                p.diags,
                kind,
                format!("unknown filter kind \"{other}\"; airsched supports u32, fw, matchall, flower and basic"),
            );
            None
        }
    }
}

/// A classifier's option parser: the cursor over its tokens and where its diagnostics go.
struct P<'t, 'a, 'd> {
    cur: Cursor<'t, 'a>,
    diags: &'d mut Vec<TcDiag>,
    /// The `action mirred egress redirect` seen so far.
    redirect: Option<Redirect>,
    /// The policer seen so far.
    police: Option<PoliceParams>,
}

/// One key while packing: offset (before adding the nexthdr base), nexthdr flag, value, mask
/// (host order of the big-endian word).
#[derive(Clone, Copy)]
struct RawKey {
    off: i64,
    nexthdr: bool,
    val: u32,
    mask: u32,
}

impl<'t, 'a, 'd> P<'t, 'a, 'd> {
    fn next(&mut self) -> Option<Tok<'a>> {
        self.cur.next()
    }
    fn peek(&self) -> Option<Tok<'a>> {
        self.cur.peek()
    }
    fn value(&mut self, key: Tok<'a>, what: &str) -> Option<Tok<'a>> {
        self.cur.value(key, what, self.diags)
    }

    fn classid(&mut self, key: Tok<'a>) -> Option<Handle> {
        let v = self.value(key, "a class id, like 1:10")?;
        match parse_classid(v.text) {
            Ok((h, no_colon)) => {
                if no_colon {
                    warn(
                        self.diags,
                        v,
                        format!(
                            "no colon: tc reads \"{}\" as the class id {h} (major 0); write MAJOR:MINOR, like 1:{}",
                            v.text, v.text
                        ),
                    );
                }
                Some(h)
            }
            Err(e) => {
                err(self.diags, v, e);
                None
            }
        }
    }

    /// `action ...`: `pass`/`ok` (optionally after `gact`) are accepted with a warning; every
    /// other action is an error. Returns false after an error.
    fn action(&mut self, key: Tok<'a>) -> bool {
        let mut v = match self.value(key, "an action, like pass or drop") {
            Some(v) => v,
            None => return false,
        };
        if v.text == "gact" {
            match self.value(v, "a control word, like pass or drop") {
                Some(w) => v = w,
                None => return false,
            }
        }
        if matches!(v.text, "pass" | "ok") {
            warn(self.diags, v, format!("action {} only confirms the filter's class; no effect", v.text));
            // gact's optional "index N".
            if self.peek().is_some_and(|t| t.text == "index") {
                let k = self.next().unwrap_or(v);
                self.value(k, "an action index");
            }
            return true;
        }
        if v.text == "mirred" {
            if self.police.is_some() {
                err(self.diags, v, "a policer and a mirred redirect on one filter are not modelled together");
                return false;
            }
            return self.mirred(v);
        }
        if v.text == "police" {
            return self.police(v, false);
        }
        err(
            self.diags,
            v,
            format!("filter actions are not modelled: \"action {}\" would change what happens to the packets the filter matches", v.text),
        );
        false
    }

    /// `mirred egress redirect dev NAME [index N]` (iproute2 `m_mirred.c`); mirror, ingress and
    /// a second redirect are errors.
    fn mirred(&mut self, key: Tok<'a>) -> bool {
        let Some(dir) = self.value(key, "egress redirect dev IFB") else { return false };
        if dir.text != "egress" {
            let msg = if dir.text == "ingress" {
                "mirred ingress (back into a device's receive path) is not modelled; airsched redirects egress to an ifb device: mirred egress redirect dev ifb0".to_string()
            } else {
                format!(
                    "expected \"egress\" after mirred, like: mirred egress redirect dev ifb0 (not \"{}\")",
                    dir.text
                )
            };
            err(self.diags, dir, msg);
            return false;
        }
        let Some(what) = self.value(dir, "redirect dev IFB") else { return false };
        if what.text != "redirect" {
            let msg = if what.text == "mirror" {
                "mirred mirror (a copy of the packet) is not modelled; airsched models mirred egress redirect"
                    .to_string()
            } else {
                format!("expected \"redirect\" after mirred egress (not \"{}\")", what.text)
            };
            err(self.diags, what, msg);
            return false;
        }
        let Some(d) = self.value(what, "dev IFB") else { return false };
        if d.text != "dev" {
            err(self.diags, d, format!("expected \"dev NAME\" after mirred egress redirect (not \"{}\")", d.text));
            return false;
        }
        let Some(name) = self.value(d, "an ifb device name, like ifb0") else { return false };
        if self.redirect.is_some() {
            err(self.diags, name, "a second mirred redirect: a packet goes to one device");
            return false;
        }
        self.redirect = Some(Redirect { dev: name.text.to_string(), line: name.line, col: name.col });
        if self.peek().is_some_and(|t| t.text == "index") {
            let k = self.next().unwrap_or(name);
            self.value(k, "an action index");
        }
        true
    }

    /// The class id of a basic, matchall, fw or flower filter (`kind`). Without one the kernel's result is
    /// class 0: with a redirect the qdisc reads it as "no class" when the packet comes back
    /// (prio: priomap[0]), and with a policer on the ingress hook only the actions count; with
    /// neither, a filter on a qdisc needs one (an error at the command's end).
    fn classid_or_actions(&mut self, classid: Option<Handle>, kind: &str) -> Option<Handle> {
        match classid {
            Some(c) => Some(c),
            None if self.redirect.is_some() || self.police.is_some() => Some(Handle::UNSPEC),
            None => {
                err_at(
                    self.diags,
                    self.cur.end(),
                    format!("{kind} filter without classid/flowid; add classid MAJOR:MINOR"),
                );
                None
            }
        }
    }

    /// `police ...` (legacy: u32/fw's own attribute) or `action police ...`.
    fn police(&mut self, key: Tok<'a>, legacy: bool) -> bool {
        if self.police.is_some() {
            err(self.diags, key, "a second policer on one filter is not modelled; one police per filter");
            return false;
        }
        if self.redirect.is_some() {
            err(self.diags, key, "a policer and a mirred redirect on one filter are not modelled together");
            return false;
        }
        match super::police::parse_police(&mut self.cur, key, legacy, self.diags) {
            Some(p) => {
                self.police = Some(p);
                true
            }
            None => false,
        }
    }

    fn u32(&mut self, kind: Tok<'a>, handle: Option<Tok<'a>>) -> Option<FilterSpec> {
        let mut h = 0u32;
        if let Some(t) = handle {
            match parse_u32_handle(t.text) {
                Some(v) => h = v,
                None => {
                    err(
                        self.diags,
                        t,
                        format!(
                            "invalid u32 handle \"{}\"; expected HTID:HASH:NODE in hexadecimal, like 800::800",
                            t.text
                        ),
                    );
                    return None;
                }
            }
        }
        let mut keys: Vec<RawKey> = Vec::new();
        let mut matched = false;
        let mut classid = None;
        let mut ht = None;
        let mut order = None;
        let mut skip_sw = false;
        let mut nexthdr_warned = false;
        let mut ok = true;
        while let Some(t) = self.next() {
            let w = t.text;
            if matches(w, "match") {
                let uses_nexthdr = self.selector(t, &mut keys)?;
                matched = true;
                if uses_nexthdr && !nexthdr_warned {
                    nexthdr_warned = true;
                    warn(
                        self.diags,
                        t,
                        "nexthdr+ offsets (and match tcp/udp/icmp) count from the transport header only after a u32 hash-table link with \"offset\", which airsched does not model; like the kernel at the root table, airsched reads them from the start of the IP header. For ports use \"match ip sport|dport N 0xffff\"",
                    );
                }
            } else if matches(w, "classid") || w == "flowid" {
                classid = Some(self.classid(t)?);
            } else if matches(w, "offset")
                || matches(w, "hashkey")
                || matches(w, "divisor")
                || w == "link"
                || w == "sample"
            {
                err(self.diags, t, format!("u32 hash tables and links (\"{w}\") are not modelled; write each filter with its own matches at the root table"));
                return None;
            } else if matches(w, "order") {
                let v = self.value(t, "a node id from 1 to fff")?;
                match parse_c_u32(v.text) {
                    Some(n) if (1..0x1000).contains(&n) => order = Some(n),
                    _ => {
                        err(
                            self.diags,
                            v,
                            format!("invalid u32 order \"{}\"; expected a node id from 1 to 4095", v.text),
                        );
                        ok = false;
                    }
                }
            } else if w == "ht" {
                let v = self.value(t, "a hash table id, like 800:")?;
                match parse_u32_handle(v.text) {
                    Some(x) if x & 0xFFF == 0 || handle.is_none() => ht = Some((x & 0xFFF0_0000, v)),
                    Some(_) => {
                        err(self.diags, v, "\"ht\" must be a hash table (HTID:), not a node");
                        ok = false;
                    }
                    None => {
                        err(
                            self.diags,
                            v,
                            format!("invalid u32 hash table \"{}\"; expected HTID: in hexadecimal, like 800:", v.text),
                        );
                        ok = false;
                    }
                }
            } else if w == "indev" {
                err(self.diags, t, "indev (the interface a forwarded packet came in on) is not modelled");
                return None;
            } else if matches(w, "action") {
                if !self.action(t) {
                    return None;
                }
            } else if matches(w, "police") {
                if !self.police(t, true) {
                    return None;
                }
            } else if w == "skip_hw" {
                // Only hardware offload is skipped: no effect on the software path.
            } else if w == "skip_sw" {
                warn(self.diags, t, "skip_sw: the filter runs in hardware only, so the software path airsched models never sees it; left out");
                skip_sw = true;
            } else if w == "help" {
                warn(self.diags, t, "\"help\" prints usage; ignored");
            } else {
                err(
                    self.diags,
                    t,
                    format!("unknown u32 option \"{w}\"; expected match, flowid/classid, order, ht, action or skip_hw"),
                );
                return None;
            }
        }
        if !ok {
            return None;
        }
        if !matched {
            err(self.diags, kind, "a u32 filter needs at least one \"match\" (match u32 0 0 matches every packet); the kernel answers \"Selector not specified\"");
            return None;
        }
        // tc marks a node with a flowid, an action or a policer terminal (f_u32.c `terminal_ok`):
        // without a flowid its result is class 0 and only the actions count.
        let classid = match classid {
            Some(c) => c,
            None if self.redirect.is_some() || self.police.is_some() => Handle::UNSPEC,
            None => {
                err_at(
                    self.diags,
                    self.cur.end(),
                    "u32 filter without flowid/classid: it would never classify a packet; add flowid MAJOR:MINOR",
                );
                return None;
            }
        };
        if let (Some(o), true) = (order, h & 0xFFF != 0) {
            if o != h & 0xFFF {
                err(self.diags, handle.unwrap_or(kind), "\"order\" contradicts the node id of \"handle\"");
                return None;
            }
        }
        let mut out = Vec::with_capacity(keys.len());
        for k in &keys {
            let off = k.off + if k.nexthdr { NEXTHDR_BASE as i64 } else { 0 };
            if off < 0 {
                err(self.diags, kind, format!("a u32 match at offset {off} reads the link-layer header before the IP header, which airsched does not model"));
                return None;
            }
            if off >= MODELLED_BYTES {
                warn(
                    self.diags,
                    kind,
                    format!("a u32 match at offset {off} reads payload bytes, which are zero in airsched's packets"),
                );
            }
            out.push(U32Key { off: off as u32, mask: k.mask, val: k.val & k.mask });
        }
        Some(FilterSpec {
            kind: FilterKind::U32 { keys: out },
            classid,
            handle: h,
            ht: ht.map(|x| x.0),
            order,
            skip_sw,
            redirect: self.redirect.take(),
            police: self.police.take().map(Box::new),
        })
    }

    /// Pack one key as tc's `pack_key` does: merge with a key on the same word, error on a
    /// contradiction.
    fn pack(&mut self, at: Tok<'a>, keys: &mut Vec<RawKey>, k: RawKey) -> Option<()> {
        let val = k.val & k.mask;
        if k.off % 4 != 0 {
            err(
                self.diags,
                at,
                format!("a 32-bit u32 match must be at an offset that is a multiple of 4, not {}", k.off),
            );
            return None;
        }
        if let Some(e) = keys.iter_mut().find(|e| e.off == k.off && e.nexthdr == k.nexthdr) {
            if (val ^ e.val) & (k.mask & e.mask) != 0 {
                err(self.diags, at, "this match contradicts an earlier match on the same bytes: no packet could match (tc: Illegal \"match\")");
                return None;
            }
            e.val |= val;
            e.mask |= k.mask;
            return Some(());
        }
        if keys.len() >= 128 {
            err(self.diags, at, "a u32 filter holds at most 128 keys");
            return None;
        }
        keys.push(RawKey { val, ..k });
        Some(())
    }

    /// `VAL MASK [at [nexthdr+]OFF]` for a `bytes`-wide field at `off`.
    fn field(&mut self, key: Tok<'a>, keys: &mut Vec<RawKey>, bytes: u32, off: i64, nexthdr: bool) -> Option<bool> {
        let what = match bytes {
            1 => "a value and a mask, like 0x10 0xff",
            2 => "a value and a mask, like 5001 0xffff",
            _ => "a value and a mask, like 0x0a000001 0xffffffff",
        };
        let v = self.value(key, what)?;
        let m = self.value(key, what)?;
        let max = if bytes == 4 { u32::MAX } else { (1u32 << (8 * bytes)) - 1 };
        let Some(val) = parse_c_u32(v.text) else {
            err(
                self.diags,
                v,
                format!("invalid match value \"{}\"; expected a number (decimal, or hexadecimal with 0x)", v.text),
            );
            return None;
        };
        let Some(mask) = parse_hex_u32(m.text) else {
            err(self.diags, m, format!("invalid match mask \"{}\"; a mask is hexadecimal, like 0xffff or ff", m.text));
            return None;
        };
        if val > max {
            err(self.diags, v, format!("{val} does not fit in {} bits", 8 * bytes));
            return None;
        }
        if mask > max {
            err(self.diags, m, format!("mask {mask:#x} does not fit in {} bits", 8 * bytes));
            return None;
        }
        let (off, nexthdr) = self.at(off, nexthdr)?;
        if bytes == 2 && off & 3 != 0 && off & 3 != 2 {
            warn(
                self.diags,
                v,
                format!(
                    "tc packs a 16-bit match at odd offset {off} into bytes {}-{} of its word",
                    (off & !3) + 2,
                    (off & !3) + 3
                ),
            );
        }
        let (word_off, shift) = U32Key::packing(off, bytes);
        self.pack(v, keys, RawKey { off: word_off, nexthdr, val: val << shift, mask: mask << shift })?;
        Some(nexthdr)
    }

    /// An optional `at [nexthdr+]N` overriding the default offset.
    fn at(&mut self, off: i64, nexthdr: bool) -> Option<(i64, bool)> {
        if self.peek().map(|t| t.text) != Some("at") {
            return Some((off, nexthdr));
        }
        let at = self.next()?;
        let mut v = self.value(at, "an offset, like 20 or nexthdr+2")?;
        let mut nh = false;
        let mut text = v.text;
        if text.len() > "nexthdr+".len() && text.starts_with("nexthdr+") {
            nh = true;
            text = &text["nexthdr+".len()..];
        } else if matches(text, "nexthdr+") {
            nh = true;
            v = self.value(v, "an offset after nexthdr+")?;
            text = v.text;
        }
        let (neg, body) = match text.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, text),
        };
        match parse_c_u32(body) {
            Some(n) => Some((if neg { -(n as i64) } else { n as i64 }, nh)),
            None => {
                err(
                    self.diags,
                    v,
                    format!("invalid offset \"{}\"; expected a byte offset like 20 or nexthdr+2", v.text),
                );
                None
            }
        }
    }

    fn ip_addr(&mut self, key: Tok<'a>, keys: &mut Vec<RawKey>, off: i64) -> Option<bool> {
        let v = self.value(key, "an address like 10.0.0.0/24")?;
        let Some((addr, len)) = parse_ipv4_prefix(v.text) else {
            err(
                self.diags,
                v,
                format!("invalid IPv4 prefix \"{}\"; expected A.B.C.D or A.B.C.D/LEN (LEN 0 to 32)", v.text),
            );
            return None;
        };
        let (off, nexthdr) = self.at(off, false)?;
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        self.pack(v, keys, RawKey { off, nexthdr, val: addr, mask })?;
        Some(nexthdr)
    }

    /// `match SELECTOR`: returns whether a nexthdr+ offset was used.
    fn selector(&mut self, key: Tok<'a>, keys: &mut Vec<RawKey>) -> Option<bool> {
        let s = self.value(key, "a selector: ip, u32, u16, u8, tcp, udp or icmp")?;
        let w = s.text;
        if matches(w, "u32") {
            self.field(s, keys, 4, 0, false)
        } else if matches(w, "u16") {
            self.field(s, keys, 2, 0, false)
        } else if matches(w, "u8") {
            self.field(s, keys, 1, 0, false)
        } else if matches(w, "ip") {
            let f = self.value(s, "a field: src, dst, tos, dsfield, protocol, sport, dport, ...")?;
            match f.text {
                "src" => self.ip_addr(f, keys, 12),
                "dst" => self.ip_addr(f, keys, 16),
                "tos" => self.field(f, keys, 1, 1, false),
                x if matches(x, "dsfield") || matches(x, "precedence") => self.field(f, keys, 1, 1, false),
                "ihl" => self.field(f, keys, 1, 0, false),
                "protocol" => self.field(f, keys, 1, 9, false),
                "sport" => self.field(f, keys, 2, 20, false),
                "dport" => self.field(f, keys, 2, 22, false),
                "icmp_type" => self.field(f, keys, 1, 20, false),
                "icmp_code" => self.field(f, keys, 1, 21, false),
                "nofrag" | "firstfrag" | "df" | "mf" => {
                    let (v, m) = match f.text {
                        "nofrag" => (0, 0x3FFF),
                        "firstfrag" => (0x2000, 0x3FFF),
                        "df" => (0x4000, 0x4000),
                        _ => (0x2000, 0x2000),
                    };
                    self.pack(f, keys, RawKey { off: 4, nexthdr: false, val: v, mask: m })?;
                    Some(false)
                }
                other => {
                    err(
                        self.diags,
                        f,
                        format!("unknown \"match ip\" field \"{other}\"; expected src, dst, tos, dsfield, precedence, ihl, protocol, sport, dport, icmp_type, icmp_code, nofrag, firstfrag, df or mf"),
                    );
                    None
                }
            }
        } else if matches(w, "ip6") {
            err(self.diags, s, "IPv6 matches never apply: airsched's packets are IPv4");
            None
        } else if matches(w, "udp") || matches(w, "tcp") {
            let f = self.value(s, "src or dst")?;
            match f.text {
                "src" => self.field(f, keys, 2, 0, true),
                "dst" => self.field(f, keys, 2, 2, true),
                other => {
                    err(self.diags, f, format!("unknown \"match {w}\" field \"{other}\"; expected src or dst"));
                    None
                }
            }
        } else if matches(w, "icmp") {
            let f = self.value(s, "type or code")?;
            match f.text {
                "type" => self.field(f, keys, 1, 0, true),
                "code" => self.field(f, keys, 1, 1, true),
                other => {
                    err(self.diags, f, format!("unknown \"match icmp\" field \"{other}\"; expected type or code"));
                    None
                }
            }
        } else if matches(w, "mark") {
            err(self.diags, s, "u32 \"match mark\" is not modelled; use the fw classifier (handle MARK fw flowid ...)");
            None
        } else if matches(w, "ether") {
            err(self.diags, s, "link-layer (ether) matches are not modelled");
            None
        } else {
            err(self.diags, s, format!("unknown match selector \"{w}\"; expected ip, u32, u16, u8, tcp, udp or icmp"));
            None
        }
    }

    fn fw(&mut self, kind: Tok<'a>, handle: Option<Tok<'a>>) -> Option<FilterSpec> {
        let Some(ht) = handle else {
            err(
                self.diags,
                kind,
                "fw without \"handle MARK\" (the legacy mode where the mark is the class id) is not modelled; write handle MARK fw flowid MAJOR:MINOR",
            );
            return None;
        };
        let (mark_text, mask_text) = match ht.text.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (ht.text, None),
        };
        let Some(mark) = parse_c_u32(mark_text) else {
            err(
                self.diags,
                ht,
                format!("invalid fw handle \"{}\"; expected MARK or MARK/MASK, like 6 or 0x10/0xff", ht.text),
            );
            return None;
        };
        let mask = match mask_text {
            None => u32::MAX,
            Some(m) => match parse_c_u32(m) {
                Some(v) => v,
                None => {
                    err(
                        self.diags,
                        ht,
                        format!("invalid fw mask in \"{}\"; expected MARK/MASK, like 0x10/0xff", ht.text),
                    );
                    return None;
                }
            },
        };
        if mark & !mask != 0 {
            warn(self.diags, ht, format!("mark {mark:#x} has bits outside mask {mask:#x}: the filter never matches"));
        }
        let mut classid = None;
        while let Some(t) = self.next() {
            let w = t.text;
            if matches(w, "classid") || matches(w, "flowid") {
                classid = Some(self.classid(t)?);
            } else if matches(w, "police") {
                if !self.police(t, true) {
                    return None;
                }
            } else if matches(w, "action") {
                if !self.action(t) {
                    return None;
                }
            } else if w == "indev" {
                err(self.diags, t, "indev (the interface a forwarded packet came in on) is not modelled");
                return None;
            } else if w == "help" {
                warn(self.diags, t, "\"help\" prints usage; ignored");
            } else {
                err(self.diags, t, format!("unknown fw option \"{w}\"; expected classid/flowid"));
                return None;
            }
        }
        let classid = self.classid_or_actions(classid, "fw")?;
        Some(FilterSpec {
            kind: FilterKind::Fw { handle: mark, mask },
            classid,
            handle: mark,
            ht: None,
            order: None,
            skip_sw: false,
            redirect: self.redirect.take(),
            police: self.police.take().map(Box::new),
        })
    }

    /// cls_flower's options as iproute2 6.1 `f_flower.c` reads them, the keys airsched's
    /// packets carry: `ip_proto`, `src_ip`/`dst_ip` (prefixes), `src_port`/`dst_port` (a port or
    /// MIN-MAX), `ip_tos VAL[/MASK]`; `classid`/`flowid`, `action ...`, `skip_sw`/`skip_hw`,
    /// `verbose`. Keys airsched's packets do not carry are one-line errors.
    fn flower(&mut self, _kind: Tok<'a>, handle: Option<Tok<'a>>, protocol: u16) -> Option<FilterSpec> {
        let mut id = 0;
        if let Some(t) = handle {
            match parse_c_u32(t.text) {
                Some(v) => id = v,
                None => {
                    err(self.diags, t, format!("invalid flower handle \"{}\"; expected a number", t.text));
                    return None;
                }
            }
        }
        let ip = protocol == ETH_P_IP;
        let mut k = FlowerKeys::default();
        let mut classid = None;
        let mut skip_sw = false;
        while let Some(t) = self.next() {
            let w = t.text;
            let need_ip = |d: &mut Vec<TcDiag>, what: &str| {
                if !ip {
                    err(d, t, format!("flower {what} needs protocol ip on the filter (tc: Illegal \"eth_type\" for {what}); airsched's packets are IPv4"));
                }
                ip
            };
            match w {
                "classid" | "flowid" => classid = Some(self.classid(t)?),
                "skip_hw" | "verbose" => {}
                "skip_sw" => {
                    warn(self.diags, t, "skip_sw: the filter runs in hardware only, so the software path airsched models never sees it; left out");
                    skip_sw = true;
                }
                "action" => {
                    if !self.action(t) {
                        return None;
                    }
                }
                "ip_proto" => {
                    let v = self.value(t, "tcp, udp, sctp, icmp or a hexadecimal number")?;
                    if !need_ip(self.diags, "ip_proto") {
                        return None;
                    }
                    // flower_parse_ip_proto: names, else get_u8 in base 16 ("11" is 17).
                    k.ip_proto = match v.text {
                        "tcp" => Some(6),
                        "udp" => Some(17),
                        "sctp" => Some(132),
                        "icmp" => Some(1),
                        other => {
                            match u8::from_str_radix(other.trim_start_matches("0x").trim_start_matches("0X"), 16) {
                                Ok(n) => Some(n),
                                Err(_) => {
                                    err(self.diags, v, format!("invalid ip_proto \"{other}\"; expected tcp, udp, sctp, icmp or a hexadecimal number up to ff"));
                                    return None;
                                }
                            }
                        }
                    };
                }
                "src_ip" | "dst_ip" => {
                    let v = self.value(t, "an IPv4 address or prefix, like 192.168.1.0/24")?;
                    if !need_ip(self.diags, w) {
                        return None;
                    }
                    let Some(a) = parse_ipv4_prefix(v.text) else {
                        err(
                            self.diags,
                            v,
                            format!(
                                "invalid {w} \"{}\"; expected an IPv4 address or prefix, like 192.168.1.0/24",
                                v.text
                            ),
                        );
                        return None;
                    };
                    if w == "src_ip" {
                        k.src_ip = Some(a)
                    } else {
                        k.dst_ip = Some(a)
                    }
                }
                "src_port" | "dst_port" => {
                    let v = self.value(t, "a port or a range MIN-MAX")?;
                    if !matches!(k.ip_proto, Some(6 | 17 | 132)) {
                        err(
                            self.diags,
                            t,
                            format!("flower {w} needs ip_proto tcp, udp or sctp before it (tc: Illegal \"{w}\")"),
                        );
                        return None;
                    }
                    let port = |s: &str| s.parse::<u16>().ok();
                    let r = match v.text.split_once('-') {
                        None => port(v.text).map(|p| (p, p)),
                        Some((a, b)) => match (port(a), port(b)) {
                            // fl_set_key_port_range: min must be strictly smaller than max.
                            (Some(lo), Some(hi)) if lo < hi => Some((lo, hi)),
                            (Some(_), Some(_)) => {
                                err(self.diags, v, format!("invalid {w} range \"{}\": min must be strictly smaller than max (the kernel's words)", v.text));
                                return None;
                            }
                            _ => None,
                        },
                    };
                    let Some(r) = r else {
                        err(
                            self.diags,
                            v,
                            format!("invalid {w} \"{}\"; expected a port from 0 to 65535 or MIN-MAX", v.text),
                        );
                        return None;
                    };
                    if w == "src_port" {
                        k.src_port = Some(r)
                    } else {
                        k.dst_port = Some(r)
                    }
                }
                "ip_tos" => {
                    let v = self.value(t, "a TOS byte, like 0x10 or 0x10/0xfc")?;
                    if !need_ip(self.diags, "ip_tos") {
                        return None;
                    }
                    // flower_parse_ip_tos_ttl: base 10, else base 16; the mask defaults to 0xff.
                    let byte = |s: &str| {
                        s.parse::<u8>().ok().or_else(|| {
                            u8::from_str_radix(s.trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
                        })
                    };
                    let (a, m) = match v.text.split_once('/') {
                        Some((a, m)) => (a, Some(m)),
                        None => (v.text, None),
                    };
                    match (byte(a), m.map(byte)) {
                        (Some(val), None) => k.ip_tos = Some((val, 0xff)),
                        (Some(val), Some(Some(mask))) => k.ip_tos = Some((val, mask)),
                        _ => {
                            err(
                                self.diags,
                                v,
                                format!("invalid ip_tos \"{}\"; expected a byte, like 0x10 or 0x10/0xfc", v.text),
                            );
                            return None;
                        }
                    }
                }
                "indev" => {
                    err(self.diags, t, "indev (the interface a forwarded packet came in on) is not modelled");
                    return None;
                }
                "help" => warn(self.diags, t, "\"help\" prints usage; ignored"),
                _ if FLOWER_UNMODELLED.iter().any(|u| w == *u || (u.ends_with('_') && w.starts_with(u))) => {
                    err(self.diags, t, format!("flower key \"{w}\" is not modelled: airsched's packets carry IPv4 addresses, protocol, ports and TOS (ip_proto, src_ip, dst_ip, src_port, dst_port, ip_tos)"));
                    return None;
                }
                _ => {
                    err(self.diags, t, format!("unknown flower option \"{w}\" (tc: What is \"{w}\"?); airsched reads ip_proto, src_ip, dst_ip, src_port, dst_port, ip_tos, classid, action, skip_sw, skip_hw"));
                    return None;
                }
            }
        }
        let classid = self.classid_or_actions(classid, "flower")?;
        Some(FilterSpec {
            kind: FilterKind::Flower(k),
            classid,
            handle: id,
            ht: None,
            order: None,
            skip_sw,
            redirect: self.redirect.take(),
            police: self.police.take().map(Box::new),
        })
    }

    /// cls_basic (`f_basic.c`): `[match EXPR] [classid|flowid X:Y] [action ...] [police ...]`,
    /// in any order; a second `match` replaces the first (the kernel keeps the last attribute).
    fn basic(&mut self, _kind: Tok<'a>, handle: Option<Tok<'a>>) -> Option<FilterSpec> {
        // f_basic.c reads the handle with strtol(.., 0) and refuses only LONG_MIN/LONG_MAX: a
        // word that is not a number reads as its numeric prefix, or 0 (the kernel then picks).
        let mut id = 0;
        if let Some(t) = handle {
            match parse_c_u32(t.text) {
                Some(v) => id = v,
                None => {
                    id = super::ematch::strtoul_prefix(t.text).map_or(0, |v| v as u32);
                    warn(
                        self.diags,
                        t,
                        format!("tc reads the basic handle \"{}\" as {id} (strtol); write a number", t.text),
                    );
                }
            }
        }
        let mut tree = Vec::new();
        let mut classid = None;
        while let Some(t) = self.next() {
            let w = t.text;
            if matches(w, "match") {
                tree = super::ematch::parse_ematch(&mut self.cur, t, self.diags)?;
            } else if matches(w, "classid") || w == "flowid" {
                classid = Some(self.classid(t)?);
            } else if matches(w, "action") {
                if !self.action(t) {
                    return None;
                }
            } else if matches(w, "police") {
                if !self.police(t, true) {
                    return None;
                }
            } else if w == "help" {
                warn(self.diags, t, "\"help\" prints usage; ignored");
            } else {
                err(self.diags, t, format!("unknown basic option \"{w}\" (tc: What is \"{w}\"?); expected match, classid/flowid, action or police"));
                return None;
            }
        }
        let classid = self.classid_or_actions(classid, "basic")?;
        Some(FilterSpec {
            kind: FilterKind::Basic(tree),
            classid,
            handle: id,
            ht: None,
            order: None,
            skip_sw: false,
            redirect: self.redirect.take(),
            police: self.police.take().map(Box::new),
        })
    }

    fn matchall(&mut self, _kind: Tok<'a>, handle: Option<Tok<'a>>) -> Option<FilterSpec> {
        let mut id = 0;
        if let Some(t) = handle {
            match parse_c_u32(t.text) {
                Some(v) => id = v,
                None => {
                    err(self.diags, t, format!("invalid matchall handle \"{}\"; expected a number", t.text));
                    return None;
                }
            }
        }
        let mut classid = None;
        let mut skip_sw = false;
        while let Some(t) = self.next() {
            let w = t.text;
            if matches(w, "classid") || w == "flowid" {
                classid = Some(self.classid(t)?);
            } else if matches(w, "action") {
                if !self.action(t) {
                    return None;
                }
            } else if w == "skip_hw" {
            } else if w == "skip_sw" {
                warn(self.diags, t, "skip_sw: the filter runs in hardware only, so the software path airsched models never sees it; left out");
                skip_sw = true;
            } else if w == "help" {
                warn(self.diags, t, "\"help\" prints usage; ignored");
            } else {
                err(self.diags, t, format!("unknown matchall option \"{w}\"; expected classid/flowid"));
                return None;
            }
        }
        let classid = self.classid_or_actions(classid, "matchall")?;
        let redirect = self.redirect.take();
        Some(FilterSpec {
            kind: FilterKind::MatchAll,
            classid,
            handle: id,
            ht: None,
            order: None,
            skip_sw,
            redirect,
            police: self.police.take().map(Box::new),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tc::Severity;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let mut col = 1u32;
        s.split(' ')
            .map(|w| {
                let t = Tok { text: w, line: 1, col };
                col += w.len() as u32 + 1;
                t
            })
            .collect()
    }

    fn u32_keys(opts: &str) -> (Option<FilterSpec>, Vec<TcDiag>) {
        let t = toks(opts);
        let kind = Tok { text: "u32", line: 1, col: 1 };
        let mut d = vec![];
        let s = parse_filter(kind, None, ETH_P_IP, &t, (1, 99), &mut d);
        (s, d)
    }

    fn keys_of(s: &FilterSpec) -> Vec<U32Key> {
        match &s.kind {
            FilterKind::U32 { keys } => keys.clone(),
            _ => panic!(),
        }
    }

    #[test]
    fn ip_sugar_packs_like_tc() {
        let (s, d) = u32_keys("match ip src 192.168.1.0/24 match ip dport 5001 0xffff match ip tos 0x10 0xff match ip protocol 17 0xff flowid 1:10");
        assert!(d.is_empty(), "{d:?}");
        let s = s.unwrap();
        assert_eq!(s.classid, Handle::new(1, 0x10));
        assert_eq!(
            keys_of(&s),
            vec![
                U32Key { off: 12, mask: 0xffff_ff00, val: 0xc0a8_0100 },
                U32Key { off: 20, mask: 0x0000_ffff, val: 5001 },
                U32Key { off: 0, mask: 0x00ff_0000, val: 0x0010_0000 },
                U32Key { off: 8, mask: 0x00ff_0000, val: 0x0011_0000 },
            ]
        );
    }

    #[test]
    fn keys_on_one_word_merge_and_contradictions_are_errors() {
        let (s, _) = u32_keys("match ip sport 40000 0xffff match ip dport 5001 0xffff flowid 1:1");
        assert_eq!(keys_of(&s.unwrap()), vec![U32Key { off: 20, mask: 0xffff_ffff, val: (40000 << 16) | 5001 }]);
        let (s, d) = u32_keys("match u8 1 0xff at 9 match ip protocol 6 0xff flowid 1:1");
        assert!(s.is_none());
        assert_eq!(d[0].token, "6");
    }

    #[test]
    fn raw_matches_offsets_and_nexthdr() {
        let (s, d) = u32_keys("match u16 0x1389 0xffff at 22 match u32 0 0 at 0 flowid 1:2");
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            keys_of(&s.unwrap()),
            vec![U32Key { off: 20, mask: 0xffff, val: 0x1389 }, U32Key { off: 0, mask: 0, val: 0 }]
        );
        // udp dst: nexthdr+2 reads bytes 2-3 of the IP header at the root table.
        let (s, d) = u32_keys("match udp dst 5001 0xffff flowid 1:2");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(keys_of(&s.unwrap()), vec![U32Key { off: 0, mask: 0xffff, val: 5001 }]);
        let (s, _) = u32_keys("match u8 6 0xff at nexthdr+ 9 flowid 1:2");
        assert_eq!(keys_of(&s.unwrap()), vec![U32Key { off: 8, mask: 0x00ff_0000, val: 0x0006_0000 }]);
        let (s, d) = u32_keys("match u32 1 1 at 2 flowid 1:2");
        assert!(s.is_none());
        assert!(d[0].message.contains("multiple of 4"));
        let (s, d) = u32_keys("match u32 1 1 at -4 flowid 1:2");
        assert!(s.is_none());
        assert!(d[0].message.contains("link-layer"));
    }

    #[test]
    fn missing_flowid_or_match_and_bad_values() {
        let (s, d) = u32_keys("match ip dst 10.0.0.1");
        assert!(s.is_none());
        assert!(d[0].message.contains("without flowid"));
        assert_eq!((d[0].line, d[0].col), (1, 99));
        let (s, d) = u32_keys("flowid 1:1");
        assert!(s.is_none());
        assert!(d[0].message.contains("at least one"));
        let (s, d) = u32_keys("match ip dst 10.0.0.300 flowid 1:1");
        assert!(s.is_none());
        assert_eq!((d[0].token.as_str(), d[0].col), ("10.0.0.300", 14));
        let (s, d) = u32_keys("match ip dport 80 0xfffff flowid 1:1");
        assert!(s.is_none());
        assert_eq!(d[0].token, "0xfffff");
        let (s, d) = u32_keys("match ip dport 80 0xffff action pass flowid 1:1");
        assert!(s.is_some());
        assert_eq!(d[0].severity, Severity::Warning);
        let (s, d) = u32_keys("match ip dport 80 0xffff action drop");
        assert!(s.is_none());
        assert_eq!(d[0].token, "drop");
    }

    #[test]
    fn fw_and_matchall() {
        let kind = Tok { text: "fw", line: 1, col: 1 };
        let h = Tok { text: "0x10/0xff", line: 1, col: 5 };
        let t = toks("flowid 1:30");
        let mut d = vec![];
        let s = parse_filter(kind, Some(h), ETH_P_IP, &t, (1, 20), &mut d).unwrap();
        assert_eq!(s.kind, FilterKind::Fw { handle: 0x10, mask: 0xff });
        assert_eq!(s.classid, Handle::new(1, 0x30));
        assert!(parse_filter(kind, None, ETH_P_IP, &t, (1, 20), &mut d).is_none());
        assert!(d.last().unwrap().message.contains("legacy"));
        let kind = Tok { text: "matchall", line: 1, col: 1 };
        let t = toks("classid 1:1");
        let s = parse_filter(kind, None, ETH_P_IP, &t, (1, 20), &mut d).unwrap();
        assert_eq!(s.kind, FilterKind::MatchAll);
        let kind = Tok { text: "route", line: 1, col: 1 };
        assert!(parse_filter(kind, None, ETH_P_IP, &t, (1, 20), &mut d).is_none());
        assert!(d.last().unwrap().message.contains("not modelled"));
        // basic without a match takes every packet.
        let kind = Tok { text: "basic", line: 1, col: 1 };
        let s = parse_filter(kind, None, ETH_P_IP, &t, (1, 20), &mut d).unwrap();
        assert_eq!((s.kind, s.classid), (FilterKind::Basic(vec![]), Handle::new(1, 1)));
    }

    #[test]
    fn u32_handles_and_protocols() {
        assert_eq!(parse_u32_handle("800::800"), Some(0x8000_0800));
        assert_eq!(parse_u32_handle("801:"), Some(0x8010_0000));
        assert_eq!(parse_u32_handle("::1"), Some(1));
        assert_eq!(parse_u32_handle("0x80000800"), Some(0x8000_0800));
        assert_eq!(parse_u32_handle("1000::"), None);
        assert_eq!(u32_handle_text(0x8000_0800), "800::800");
        assert_eq!(u32_handle_text(0x8010_0000), "801:");
        assert_eq!(parse_protocol("IP"), Some(0x0800));
        assert_eq!(parse_protocol("all"), Some(3));
        assert_eq!(parse_protocol("0x86dd"), Some(0x86dd));
        assert_eq!(parse_protocol("bogus"), None);
    }

    fn flower(opts: &str, protocol: u16) -> (Option<FilterSpec>, Vec<TcDiag>) {
        let t = toks(opts);
        let kind = Tok { text: "flower", line: 1, col: 1 };
        let mut d = vec![];
        let s = parse_filter(kind, None, protocol, &t, (1, 99), &mut d);
        (s, d)
    }

    fn flower_keys(s: FilterSpec) -> FlowerKeys {
        match s.kind {
            FilterKind::Flower(k) => k,
            _ => panic!(),
        }
    }

    #[test]
    fn flower_reads_tc_words_and_matches_exactly_its_packets() {
        let (s, d) =
            flower("ip_proto udp src_ip 192.168.1.0/24 dst_port 5000-5009 ip_tos 0xb8/0xfc classid 1:3", ETH_P_IP);
        assert!(d.is_empty(), "{d:?}");
        let s = s.unwrap();
        assert_eq!(s.classid, Handle::new(1, 3));
        let k = flower_keys(s);
        assert_eq!(k.ip_proto, Some(17));
        assert_eq!(k.src_ip, Some((0xc0a8_0100, 24)));
        assert_eq!(k.dst_port, Some((5000, 5009)));
        assert_eq!(k.ip_tos, Some((0xb8, 0xfc)));
        let base = crate::packet::FlowKey {
            src_ip: 0xc0a8_0107,
            dst_ip: 0x0a00_0001,
            sport: 40000,
            dport: 5003,
            proto: 17,
            tos: 0xb9, // EF + ECT(1): the mask keeps DSCP only
            mark: 0,
            priority: 0,
        };
        assert!(k.matches(&base));
        // Each key, one at a time, off by the least: no match.
        for f in [
            |p: &mut crate::packet::FlowKey| p.proto = 6,
            |p: &mut crate::packet::FlowKey| p.src_ip = 0xc0a8_0207,
            |p: &mut crate::packet::FlowKey| p.dport = 5010,
            |p: &mut crate::packet::FlowKey| p.dport = 4999,
            |p: &mut crate::packet::FlowKey| p.tos = 0xb4,
        ] {
            let mut p = base;
            f(&mut p);
            assert!(!k.matches(&p), "{p:?}");
        }
        // ip_proto is hexadecimal when not a name (flower_parse_ip_proto: get_u8 base 16).
        assert_eq!(flower_keys(flower("ip_proto 11 classid 1:1", ETH_P_IP).0.unwrap()).ip_proto, Some(17));
        // A single port is min = max; a /32 is the address.
        let k = flower_keys(flower("ip_proto tcp dst_ip 10.1.2.3 src_port 80 classid 1:1", ETH_P_IP).0.unwrap());
        assert_eq!((k.dst_ip, k.src_port), (Some((0x0a01_0203, 32)), Some((80, 80))));
    }

    #[test]
    fn flower_errors_are_one_line_at_the_word() {
        for (opts, proto, tok, what) in [
            ("dst_port 80 classid 1:1", ETH_P_IP, "dst_port", "needs ip_proto"),
            ("ip_proto tcp dst_port 2000-1000 classid 1:1", ETH_P_IP, "2000-1000", "strictly smaller"),
            ("src_ip 300.1.1.1 classid 1:1", ETH_P_IP, "300.1.1.1", "invalid src_ip"),
            ("ip_proto bogus classid 1:1", ETH_P_IP, "bogus", "invalid ip_proto"),
            ("colour red classid 1:1", ETH_P_IP, "colour", "unknown flower option"),
            ("ip_proto udp classid 1:1", ETH_P_ALL, "ip_proto", "protocol ip"),
            ("dst_mac 00:11:22:33:44:55 classid 1:1", ETH_P_IP, "dst_mac", "not modelled"),
            ("vlan_id 5 classid 1:1", ETH_P_IP, "vlan_id", "not modelled"),
            ("ip_proto udp", ETH_P_IP, "", "without classid"),
        ] {
            let (s, d) = flower(opts, proto);
            assert!(s.is_none(), "{opts}");
            assert_eq!(d.len(), 1, "{opts}: {d:?}");
            assert!(d[0].message.contains(what), "{opts}: {}", d[0].message);
            if !tok.is_empty() {
                assert_eq!(d[0].token, tok, "{opts}");
            }
        }
    }

    #[test]
    fn police_reads_tc_words() {
        use crate::qdisc::police::Control;
        let (s, d) = u32_keys("match ip dport 80 0xffff police rate 1mbit burst 10k drop flowid 1:1");
        assert!(d.is_empty(), "{d:?}");
        let p = s.unwrap().police.unwrap();
        assert_eq!(p.rate.unwrap().bytes_per_sec, 125_000);
        assert_eq!((p.burst, p.mtu, p.exceed, p.conform, p.legacy), (10_240, 2040, Control::Drop, None, true));
        let (s, d) = u32_keys("match u32 0 0 action police rate 8mbit burst 100k peakrate 10mbit mtu 1600 overhead 10 linklayer atm conform-exceed drop/pipe flowid 1:1");
        assert!(d.is_empty(), "{d:?}");
        let p = s.unwrap().police.unwrap();
        assert_eq!((p.mtu, p.exceed, p.conform, p.legacy), (1600, Control::Drop, Some(Control::Pipe), false));
        assert_eq!(p.peak.unwrap().bytes_per_sec, 1_250_000);
        assert_eq!(p.rate.unwrap().overhead, 10);
        // tc's default exceed action is reclassify; burst/8 sets cell_log 3 -> mtu 2040.
        let p = u32_keys("match u32 0 0 police rate 1mbit burst 10k/16 flowid 1:1").0.unwrap().police.unwrap();
        assert_eq!((p.exceed, p.mtu), (Control::Reclassify, 255 << 4));
        for (opts, tok, what) in [
            ("match u32 0 0 police rate 1mbit drop flowid 1:1", "1mbit", "'burst' requires 'rate'"),
            ("match u32 0 0 police rate 1mbit burst 10k peakrate 2mbit drop flowid 1:1", "2mbit", "'mtu' is required"),
            ("match u32 0 0 police burst 10k drop flowid 1:1", "police", "MUST be specified"),
            (
                "match u32 0 0 action police rate 1mbit burst 10k conform-exceed drop/nothing flowid 1:1",
                "drop/nothing",
                "invalid police action",
            ),
            ("match u32 0 0 police rate fast burst 10k drop flowid 1:1", "fast", "invalid rate"),
            ("match u32 0 0 police rate 1mbit burst 10k burst 20k drop flowid 1:1", "burst", "duplicate"),
            ("match u32 0 0 police rate 1mbit burst 10k linklayer token drop flowid 1:1", "token", "invalid linklayer"),
            ("match u32 0 0 police avrate 1mbit drop flowid 1:1", "avrate", "not modelled"),
        ] {
            let (s, d) = u32_keys(opts);
            assert!(s.is_none(), "{opts}");
            let e: Vec<_> = d.iter().filter(|d| d.severity == Severity::Error).collect();
            assert_eq!(e.len(), 1, "{opts}: {d:?}");
            assert!(e[0].message.contains(what), "{opts}: {}", e[0].message);
            assert_eq!(e[0].token, tok, "{opts}");
        }
    }
}
