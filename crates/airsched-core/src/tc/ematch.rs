//! The ematch tree of `basic match EXPR` as iproute2 6.1 reads it (`tc/m_ematch.c`,
//! `emp_ematch.l`/`emp_ematch.y`, `em_cmp.c`, `em_u32.c`, `em_meta.c`), turned into
//! [`crate::qdisc::ematch`] terms. docs/tc-basic.md lists the words.
//!
//! tc's lexer reads the words after `match` as one stream (so `'cmp(u8 at 9 eq 17) and
//! meta(priority eq 6)'` quoted as one word, or spread over several, reads the same): `(`,
//! `)`, `and`/`or`/`not` in any case, and every other run of characters. The grammar is
//! `EXPR := [not] TERM [{and|or} EXPR]`, `TERM := KIND(ARGS) | (EXPR)`. The expression ends at
//! the first word that cannot continue it (the filter's next option, which must then start a
//! word of its own: tc gives the parser's look-ahead back one word). An expression that ends
//! the command is refused, as tc 6.1 refuses it (`What is "meta(priority eq 1)"?`: the guest
//! showed it). Numbers are read as `strtoul(…, 0)` reads them (a prefix of digits is enough).

use super::lex::{err, warn, Cursor, TcDiag, Tok};
use crate::qdisc::ematch::{Cmp, EMatch, EmU32, Meta, MetaId, MetaObj, Op, Rel, Term};

/// CONFIG_NET_EMATCH_STACK: deeper nesting overflows the kernel's stack at run time.
const MAX_DEPTH: usize = 32;

/// Meta ids tc knows that airsched's packets cannot answer.
const META_UNMODELLED: &[&str] = &[
    "random",
    "loadavg_1",
    "loadavg_5",
    "loadavg_15",
    "dev",
    "data_len",
    "mac_len",
    "rt_classid",
    "rt_iif",
    "sk_family",
    "sk_state",
    "sk_reuse",
    "sk_bind_if",
    "sk_refcnt",
    "sk_shutdown",
    "sk_proto",
    "sk_type",
    "sk_rcvbuf",
    "sk_rmem",
    "sk_wmem",
    "sk_omem",
    "sk_wmem_queue",
    "sk_snd_queue",
    "sk_rcv_queue",
    "sk_err_queue",
    "sk_fwd_alloc",
    "sk_sndbuf",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lx {
    Open,
    Close,
    And,
    Or,
    Not,
    Attr,
    /// A `"..."` string (text without the quotes).
    Str,
}

#[derive(Clone, Copy, Debug)]
struct Lexeme<'a> {
    kind: Lx,
    tok: Tok<'a>,
    /// Index of the script word it came from, and whether it starts that word.
    word: usize,
    first: bool,
}

/// Split the words into ematch lexemes (tc's flex rules).
fn lex<'a>(words: &[Tok<'a>], diags: &mut Vec<TcDiag>) -> Option<Vec<Lexeme<'a>>> {
    let mut out = Vec::new();
    for (wi, w) in words.iter().enumerate() {
        let s = w.text;
        let mut b = 0;
        let mut first = true;
        while b < s.len() {
            let c = s[b..].chars().next().unwrap_or(' ');
            if c.is_whitespace() {
                b += c.len_utf8();
                continue;
            }
            let start = b;
            let col = w.col + s[..start].chars().count() as u32;
            let (kind, text) = match c {
                '(' | ')' => {
                    b += 1;
                    (if c == '(' { Lx::Open } else { Lx::Close }, &s[start..b])
                }
                '"' => match s[start + 1..].find('"') {
                    Some(rel) => {
                        b = start + 1 + rel + 1;
                        (Lx::Str, &s[start + 1..b - 1])
                    }
                    None => {
                        err(
                            diags,
                            Tok { text: &s[start..], line: w.line, col },
                            "unterminated \" string in the match expression",
                        );
                        return None;
                    }
                },
                _ => {
                    while b < s.len() {
                        let ch = s[b..].chars().next().unwrap_or(' ');
                        if ch.is_whitespace() || ch == '(' || ch == ')' {
                            break;
                        }
                        b += ch.len_utf8();
                    }
                    let t = &s[start..b];
                    let kind = if t.eq_ignore_ascii_case("and") {
                        Lx::And
                    } else if t.eq_ignore_ascii_case("or") {
                        Lx::Or
                    } else if t.eq_ignore_ascii_case("not") {
                        Lx::Not
                    } else {
                        Lx::Attr
                    };
                    (kind, t)
                }
            };
            out.push(Lexeme { kind, tok: Tok { text, line: w.line, col }, word: wi, first });
            first = false;
        }
    }
    Some(out)
}

const USAGE: &str =
    "EXPR := [not] KIND(ARGS) | [not] (EXPR), joined by and/or, like: cmp(u8 at 9 eq 17) and not meta(priority eq 6)";

struct Parser<'l, 'a, 'd> {
    lx: &'l [Lexeme<'a>],
    pos: usize,
    diags: &'d mut Vec<TcDiag>,
    end: (u32, u32),
}

impl<'a> Parser<'_, 'a, '_> {
    fn peek(&self) -> Option<Lexeme<'a>> {
        self.lx.get(self.pos).copied()
    }

    fn syntax(&mut self, at: Option<Lexeme<'a>>, what: &str) {
        let msg = format!("syntax error in the match expression (tc: Parse error): {what}; {USAGE}");
        match at {
            Some(l) => err(self.diags, l.tok, msg),
            None => super::lex::err_at(self.diags, self.end, msg),
        }
    }

    /// EXPR: TERM [{and|or} EXPR].
    fn expr(&mut self, depth: usize) -> Option<Vec<Term>> {
        let mut seq = Vec::new();
        loop {
            let t = self.term(depth)?;
            seq.push(t);
            match self.peek().map(|l| l.kind) {
                Some(Lx::And) | Some(Lx::Or) => {
                    let l = self.lx[self.pos];
                    self.pos += 1;
                    if let Some(last) = seq.last_mut() {
                        last.rel = if l.kind == Lx::And { Rel::And } else { Rel::Or };
                    }
                }
                _ => return Some(seq),
            }
        }
    }

    /// TERM: [not] KIND ( ARGS ) | [not] ( EXPR ).
    fn term(&mut self, depth: usize) -> Option<Term> {
        let mut invert = false;
        if self.peek().is_some_and(|l| l.kind == Lx::Not) {
            invert = true;
            self.pos += 1;
        }
        let Some(l) = self.peek() else {
            self.syntax(None, "a match is missing at the end");
            return None;
        };
        match l.kind {
            Lx::Open => {
                if depth >= MAX_DEPTH {
                    err(self.diags, l.tok, format!("parentheses nested deeper than {MAX_DEPTH} overflow the kernel's ematch stack (CONFIG_NET_EMATCH_STACK); not modelled"));
                    return None;
                }
                self.pos += 1;
                let inner = self.expr(depth + 1)?;
                match self.peek() {
                    Some(c) if c.kind == Lx::Close => self.pos += 1,
                    other => {
                        self.syntax(other, "expected \")\"");
                        return None;
                    }
                }
                Some(Term { invert, rel: Rel::End, m: EMatch::Group(inner) })
            }
            Lx::Attr => {
                self.pos += 1;
                match self.peek() {
                    Some(o) if o.kind == Lx::Open => self.pos += 1,
                    other => {
                        self.syntax(other, &format!("expected \"(\" after \"{}\"", l.tok.text));
                        return None;
                    }
                }
                let start = self.pos;
                while self.peek().is_some_and(|a| matches!(a.kind, Lx::Attr | Lx::Str)) {
                    self.pos += 1;
                }
                let args: Vec<Lexeme<'a>> = self.lx[start..self.pos].to_vec();
                match self.peek() {
                    Some(c) if c.kind == Lx::Close && !args.is_empty() => self.pos += 1,
                    other => {
                        let what = if args.is_empty() { "a match needs arguments" } else { "expected \")\"" };
                        self.syntax(other, what);
                        return None;
                    }
                }
                let m = kind(l.tok, &args, self.diags)?;
                Some(Term { invert, rel: Rel::End, m })
            }
            _ => {
                self.syntax(Some(l), "expected a match, like cmp(...), or \"(\"");
                None
            }
        }
    }
}

/// Read `basic match EXPR` from the cursor (positioned after `match`, which is `key`). The
/// cursor is left at the filter's next option.
pub fn parse_ematch<'a>(cur: &mut Cursor<'_, 'a>, key: Tok<'a>, diags: &mut Vec<TcDiag>) -> Option<Vec<Term>> {
    let words = cur.rest();
    if words.is_empty() {
        err(diags, key, "\"match\" needs an expression, like 'cmp(u8 at 9 layer network eq 17)'");
        return None;
    }
    let lx = lex(words, diags)?;
    let mut p = Parser { lx: &lx, pos: 0, diags, end: cur.end() };
    if lx.is_empty() {
        p.syntax(None, "the expression is empty");
        return None;
    }
    let seq = p.expr(0)?;
    let stop = p.pos;
    match lx.get(stop) {
        None => {
            let last = words[words.len() - 1];
            err(diags, last, format!("the match expression ends the command, which tc 6.1 refuses (What is \"{}\"?): put classid, action or police after it", last.text));
            None
        }
        Some(l) if !l.first => {
            let w = words[l.word];
            err(diags, w, format!("\"{}\" cannot follow the match expression inside one word (tc: What is \"{}\"?); the expression ends before it", l.tok.text, w.text));
            None
        }
        Some(l) => {
            for _ in 0..l.word {
                cur.next();
            }
            Some(seq)
        }
    }
}

/// strtoul(…, 0) as `bstrtoul` uses it: an optional sign, then a prefix of digits is enough;
/// a minus negates modulo 2^64 (so `-2147483648` reads as tc printed 0x80000000); no digits,
/// an overflow or ULONG_MAX itself (`-1`) is an error.
pub(crate) fn strtoul_prefix(s: &str) -> Option<u64> {
    bstrtoul(s)
}

fn bstrtoul(s: &str) -> Option<u64> {
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let n = digits.chars().take_while(|c| c.is_digit(radix)).count();
    let v = if n == 0 {
        // "0x" alone and "0" read as 0 in C (the 0 is the number).
        if s.starts_with('0') {
            0
        } else {
            return None;
        }
    } else {
        u64::from_str_radix(&digits[..n], radix).ok()?
    };
    let v = if neg { v.wrapping_neg() } else { v };
    (v != u64::MAX).then_some(v)
}

fn kind<'a>(k: Tok<'a>, args: &[Lexeme<'a>], diags: &mut Vec<TcDiag>) -> Option<EMatch> {
    match k.text {
        "cmp" => cmp(args, diags),
        "u32" => u32m(args, diags),
        "meta" => meta(args, diags),
        "nbyte" | "text" | "ipset" | "ipt" | "canid" => {
            err(diags, k, format!("the {} ematch is not modelled; airsched reads cmp, u32 and meta", k.text));
            None
        }
        other => {
            err(diags, k, format!("Unknown ematch \"{other}\" (tc's words); airsched reads cmp, u32 and meta"));
            None
        }
    }
}

fn number(a: &Lexeme, what: &str, diags: &mut Vec<TcDiag>) -> Option<u64> {
    let v = if a.kind == Lx::Attr { bstrtoul(a.tok.text) } else { None };
    if v.is_none() {
        err(diags, a.tok, what.to_string());
    }
    v
}

fn align<'a>(a: &Lexeme<'a>, kind: &str, diags: &mut Vec<TcDiag>) -> Option<u8> {
    match a.tok.text {
        "u8" => Some(1),
        "u16" => Some(2),
        "u32" => Some(4),
        _ => {
            err(diags, a.tok, format!("{kind}: invalid alignment (tc's words); expected u8, u16 or u32"));
            None
        }
    }
}

/// `cmp(ALIGN at OFFSET [layer L] [mask M] [trans] {eq|lt|gt} VALUE)` (em_cmp.c).
fn cmp(args: &[Lexeme], diags: &mut Vec<TcDiag>) -> Option<EMatch> {
    let bytes = align(&args[0], "cmp", diags)?;
    let (mut off, mut layer, mut mask, mut val, mut op, mut trans) = (None, 1u64, 0u64, None, Op::Eq, false);
    let mut i = 1;
    let missing = |a: &Lexeme, d: &mut Vec<TcDiag>| {
        err(d, a.tok, format!("cmp: missing argument after \"{}\" (tc's words)", a.tok.text))
    };
    while i < args.len() {
        let a = &args[i];
        let w = a.tok.text;
        let next = args.get(i + 1);
        match w {
            "at" | "layer" | "mask" | "eq" | "lt" | "gt" if next.is_none() => {
                missing(a, diags);
                return None;
            }
            "at" => {
                off = Some(number(&args[i + 1], "cmp: invalid offset, must be numeric (tc's words)", diags)?);
                i += 1;
            }
            "layer" => {
                let n = &args[i + 1];
                layer = match n.tok.text.as_bytes().first() {
                    Some(b'l') => 0,
                    Some(b'n') => 1,
                    Some(b't') => 2,
                    _ => {
                        number(n, "cmp: invalid layer (tc's words); expected link, network, transport or 0..2", diags)?
                    }
                };
                if layer > 2 {
                    err(diags, n.tok, "cmp: illegal layer, must be in 0..2 (tc's words)");
                    return None;
                }
                i += 1;
            }
            "mask" => {
                mask = number(&args[i + 1], "cmp: invalid mask (tc's words)", diags)?;
                i += 1;
            }
            "trans" => trans = true,
            "eq" | "lt" | "gt" => {
                op = Op::from_word(w).unwrap_or(Op::Eq);
                val = Some(number(&args[i + 1], "cmp: invalid value (tc's words)", diags)?);
                i += 1;
            }
            _ => {
                err(diags, a.tok, format!("cmp: unknown parameter \"{w}\" (tc: nbyte: unknown parameter); expected at, layer, mask, trans, eq, lt or gt"));
                return None;
            }
        }
        i += 1;
    }
    let (Some(off), Some(val)) = (off, val) else {
        err(diags, args[args.len() - 1].tok, "cmp: offset and value required (tc's words): cmp(u8 at 9 eq 17)");
        return None;
    };
    let off = off as u16; // tc stores it in a 16-bit field
    if layer == 0 && off < 12 {
        err(diags, args[0].tok, format!("cmp at link-layer offset {off} reads the MAC addresses, which airsched's packets do not carry; the EtherType (offset 12) and the network and transport layers are modelled"));
        return None;
    }
    Some(EMatch::Cmp(Cmp { bytes, off, layer: layer as u8, mask: mask as u32, trans, op, val: val as u32 }))
}

/// `u32(ALIGN VALUE MASK at [nexthdr+]OFFSET)` (em_u32.c), packed as tc packs it.
fn u32m(args: &[Lexeme], diags: &mut Vec<TcDiag>) -> Option<EMatch> {
    let bytes = align(&args[0], "u32", diags)?;
    let last = args[args.len() - 1].tok;
    let Some(k) = args.get(1) else {
        err(diags, last, "u32: missing key (tc's words): u32(u16 0x1f90 0xffff at 22)");
        return None;
    };
    let mut key = number(k, "u32: invalid key, must be numeric (tc's words)", diags)?;
    let Some(m) = args.get(2) else {
        err(diags, last, "u32: missing mask (tc's words)");
        return None;
    };
    let mut mask = number(m, "u32: invalid mask, must be numeric (tc's words)", diags)?;
    if args.get(3).is_none_or(|a| a.tok.text != "at") {
        err(diags, args.get(3).map_or(last, |a| a.tok), "u32: missing \"at\" (tc's words)");
        return None;
    }
    let Some(o) = args.get(4) else {
        err(diags, last, "u32: missing offset (tc's words)");
        return None;
    };
    let mut at = 5;
    let (mut offset, nexthdr) = if let Some(rest) = o.tok.text.strip_prefix("nexthdr+").filter(|r| !r.is_empty()) {
        // tc reads the joined form with strtoul and no check.
        (bstrtoul(rest).unwrap_or(0), true)
    } else if o.tok.text == "nexthdr+" {
        let Some(n) = args.get(5) else {
            err(diags, o.tok, "u32: missing offset (tc's words)");
            return None;
        };
        at = 6;
        (number(n, "u32: invalid offset (tc's words)", diags)?, true)
    } else {
        (number(o, "u32: invalid offset (tc's words)", diags)?, false)
    };
    if let Some(t) = args.get(at) {
        err(diags, t.tok, "u32: unexpected trailer (tc's words)");
        return None;
    }
    match bytes {
        1 => {
            if key > 0xFF || mask > 0xFF {
                let what = if key > 0xFF { "Illegal key (>0xFF)" } else { "Illegal mask (>0xFF)" };
                err(diags, o.tok, format!("{what} (tc's words)"));
                return None;
            }
            let sh = 24 - (offset & 3) * 8;
            key <<= sh;
            mask <<= sh;
            offset &= !3;
        }
        2 => {
            if key > 0xFFFF || mask > 0xFFFF {
                let what = if key > 0xFFFF { "Illegal key (>0xFFFF)" } else { "Illegal mask (>0xFFFF)" };
                err(diags, o.tok, format!("{what} (tc's words)"));
                return None;
            }
            if offset & 3 == 0 {
                key <<= 16;
                mask <<= 16;
            }
            offset &= !3;
        }
        _ => {}
    }
    if offset % 4 != 0 {
        err(diags, o.tok, "u32: invalid offset alignment, must be aligned to 4. (tc's words)");
        return None;
    }
    let (key, mask) = (key as u32, mask as u32);
    if nexthdr {
        warn(diags, o.tok, "nexthdr+ adds nothing under basic: cls_basic gives em_u32 no packet info, so the offset is from the IP header (as the kernel reads it)");
    }
    Some(EMatch::U32(EmU32 { val: key & mask, mask, off: offset as i32, nexthdr }))
}

/// One side of `meta(...)`: a number, or an id with `shift`/`mask`; the index after it.
fn meta_object(args: &[Lexeme], i: usize, diags: &mut Vec<TcDiag>) -> Option<(MetaObj, usize)> {
    let a = &args[i];
    if a.kind == Lx::Str {
        err(diags, a.tok, "meta: string values (device names) are not modelled; airsched's meta compares numbers");
        return None;
    }
    if let Some(n) = bstrtoul(a.tok.text) {
        return Some((MetaObj::Value(n as u32), i + 1));
    }
    let w = a.tok.text;
    let Some(id) = MetaId::from_word(w) else {
        if META_UNMODELLED.contains(&w) {
            err(diags, a.tok, format!("meta id \"{w}\" is not modelled: airsched's packets answer priority, protocol, pkt_type, pkt_len, nf_mark (fwmark), tc_index and vlan"));
        } else {
            err(diags, a.tok, format!("meta: unknown meta id \"{w}\" (tc's words); airsched reads priority, protocol, pkt_type, pkt_len, nf_mark (fwmark), tc_index and vlan"));
        }
        return None;
    };
    let (mut shift, mut mask) = (0u8, 0u32);
    let mut j = i + 1;
    while let Some(b) = args.get(j) {
        let what = match b.tok.text {
            "shift" => "shift",
            "mask" => "mask",
            _ => break,
        };
        let Some(n) = args.get(j + 1) else {
            err(diags, b.tok, "meta: missing argument (tc's words)");
            return None;
        };
        let v = number(n, &format!("meta: invalid {what}, must be numeric (tc's words)"), diags)?;
        if what == "shift" {
            shift = v as u8;
        } else {
            mask = v as u32;
        }
        j += 2;
    }
    Some((MetaObj::Id { id, shift, mask }, j))
}

/// `meta(OBJECT {eq|lt|gt} OBJECT)` (em_meta.c), with the ids airsched's packets answer.
fn meta(args: &[Lexeme], diags: &mut Vec<TcDiag>) -> Option<EMatch> {
    if args[0].tok.text == "list" {
        err(diags, args[0].tok, "meta(list) prints tc's meta ids and fails; it is not a match");
        return None;
    }
    let (left, i) = meta_object(args, 0, diags)?;
    let Some(o) = args.get(i) else {
        err(diags, args[args.len() - 1].tok, "meta: missing operand (tc's words); expected eq, lt or gt");
        return None;
    };
    let Some(op) = Op::from_word(o.tok.text) else {
        err(diags, o.tok, "meta: invalid operand (tc's words); expected eq, lt or gt");
        return None;
    };
    if args.get(i + 1).is_none() {
        err(diags, o.tok, "meta: missing rvalue (tc's words)");
        return None;
    }
    let (right, j) = meta_object(args, i + 1, diags)?;
    if let Some(t) = args.get(j) {
        err(diags, t.tok, "meta: unexpected trailer (tc's words)");
        return None;
    }
    Some(EMatch::Meta(Meta { left, op, right }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::ematch::text;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        // Words as the script tokenizer gives them: single-quoted runs are one word.
        let mut out = Vec::new();
        let mut col = 1u32;
        let mut rest = s;
        while !rest.is_empty() {
            let trimmed = rest.trim_start();
            col += (rest.len() - trimmed.len()) as u32;
            rest = trimmed;
            if rest.is_empty() {
                break;
            }
            let (word, skip) = if let Some(r) = rest.strip_prefix('\'') {
                let e = r.find('\'').unwrap();
                (&r[..e], e + 2)
            } else {
                let e = rest.find(' ').unwrap_or(rest.len());
                (&rest[..e], e)
            };
            out.push(Tok { text: word, line: 1, col: if skip > word.len() { col + 1 } else { col } });
            col += skip as u32;
            rest = &rest[skip..];
        }
        out
    }

    fn parse(s: &str) -> (Option<Vec<Term>>, Vec<TcDiag>, usize) {
        let t = toks(s);
        let mut cur = Cursor::new(&t, (1, 200));
        let mut d = vec![];
        let key = Tok { text: "match", line: 1, col: 1 };
        let r = parse_ematch(&mut cur, key, &mut d);
        (r, d, cur.rest().len())
    }

    fn ok(s: &str) -> String {
        let (r, d, _) = parse(s);
        assert!(d.iter().all(|x| x.severity != super::super::lex::Severity::Error), "{s}: {d:?}");
        text(&r.unwrap_or_else(|| panic!("{s}")))
    }

    #[test]
    fn prints_what_the_guest_printed() {
        // Each pair: the words given to tc in the Debian 6.1 guest and its `tc filter show`.
        for (words, shown) in [
            (
                "'cmp(u8 at 1 layer network mask 0xfc eq 0xb8) and meta(priority eq 6)' classid 1:10",
                "\n  cmp(u8 at 1 layer 1 mask 0xfc eq 184)\n  AND meta(priority eq 6)\n",
            ),
            (
                "'not u32(u16 0x1f90 0xffff at nexthdr+2) or (meta(nf_mark gt 24) and not cmp(u16 at 2 layer transport eq 80))' flowid 1:20",
                "\n  NOT u32(00001f90/0000ffff at nexthdr+0)\n  OR (\n    meta(nf_mark gt 24)\n    AND NOT cmp(u16 at 2 layer 2 eq 80)\n  ) ",
            ),
            ("'meta(protocol eq 8)' and 'u32(u8 0x11 0xff at 9)' classid 1:20", "\n  meta(protocol eq 8)\n  AND u32(00110000/00ff0000 at 8)\n"),
            ("cmp(u32 at 12 layer 2 trans gt 0x80000000) classid 1:10", "\n  cmp(u32 at 12 layer 2 trans gt -2147483648)\n"),
            (
                "'(cmp(u8 at 9 eq 17) or cmp(u8 at 9 eq 6)) and not (meta(fwmark eq 1) or meta(tc_index eq 2))' classid 1:20",
                "\n  (\n    cmp(u8 at 9 layer 1 eq 17)\n    OR cmp(u8 at 9 layer 1 eq 6)\n  ) AND NOT (\n    meta(nf_mark eq 1)\n    OR meta(tc_index eq 2)\n  ) ",
            ),
            ("'meta(6 eq priority)' classid 1:20", "\n  meta(6 eq priority)\n"),
            (
                "'u32(u32 0xc0a80100 0xffffff00 at 12) AND u32(u8 0x1 0x1 at 3) Or u32(u16 5 0xffff at 1)' classid 1:20",
                "\n  u32(c0a80100/ffffff00 at 12)\n  AND u32(00000001/00000001 at 0)\n  OR u32(00000005/0000ffff at 0)\n",
            ),
            ("'((meta(priority eq 7)))' classid 1:10", "\n  (\n    (\n      meta(priority eq 7)\n    )   ) "),
            ("'cmp(u8 at 70000 eq 1)' classid 1:10", "\n  cmp(u8 at 4464 layer 1 eq 1)\n"),
            ("'meta(nf_mark shift 2 mask 0xff0 lt 100)' classid 1:1", "\n  meta(nf_mark shift 2 mask 0x00000ff0 lt 100)\n"),
        ] {
            assert_eq!(ok(words), shown, "{words}");
        }
        // The cursor is left at the filter's next option.
        let (_, _, left) = parse("'meta(priority eq 1)' classid 1:1 action drop");
        assert_eq!(left, 4);
    }

    #[test]
    fn refuses_what_tc_refuses_at_the_word() {
        for (words, bad, msg) in [
            ("'cmp(u8 at 1 eq 1' classid 1:10", "", "syntax error"),
            ("'cmp(u64 at 1 eq 1)' classid 1:10", "u64", "invalid alignment"),
            ("'cmp(u8 eq 1)' classid 1:10", "1", "offset and value required"),
            ("'cmp(u8 at 1 layer 3 eq 1)' classid 1:10", "3", "illegal layer"),
            ("'u32(u32 1 1 at 2)' classid 1:10", "2", "aligned to 4"),
            ("'u32(u8 0x100 0xff at 2)' classid 1:10", "2", "Illegal key"),
            ("'meta(foo eq 1)' classid 1:10", "foo", "unknown meta id"),
            ("'meta(priority 1)' classid 1:10", "1", "invalid operand"),
            ("'nbyte(xx)' classid 1:10", "nbyte", "not modelled"),
            (
                "'meta(priority eq 1) xor meta(priority eq 2)' classid 1:10",
                "meta(priority eq 1) xor meta(priority eq 2)",
                "cannot follow",
            ),
            ("'meta(priority eq 1) and' classid 1:10", "1:10", "syntax error"),
            ("'meta(priority eq 1)'", "meta(priority eq 1)", "ends the command"),
            ("'meta(random gt 100)' classid 1:10", "random", "not modelled"),
            (
                "'cmp(u8 at 1 eq 1) meta(priority eq 1)' classid 1:10",
                "cmp(u8 at 1 eq 1) meta(priority eq 1)",
                "cannot follow",
            ),
            ("'' classid 1:10", "1:10", "syntax error"),
            ("'not not meta(priority eq 7)' classid 1:10", "not", "syntax error"),
            ("'u32(u16 0x1 0xffff at 1 2)' classid 1:10", "2", "unexpected trailer"),
            ("'cmp(u8 at 3 layer link eq 1)' classid 1:1", "u8", "MAC addresses"),
            ("'meta(dev eq \"eth0\")' classid 1:1", "dev", "not modelled"),
            ("'foo(1)' classid 1:1", "foo", "Unknown ematch"),
        ] {
            let (r, d, _) = parse(words);
            assert!(r.is_none(), "{words}");
            let e = d
                .iter()
                .find(|x| x.severity == super::super::lex::Severity::Error)
                .unwrap_or_else(|| panic!("{words}: {d:?}"));
            assert!(e.message.contains(msg), "{words}: {e:?}");
            if !bad.is_empty() {
                assert_eq!(e.token, bad, "{words}: {e:?}");
            }
        }
    }

    #[test]
    fn strtoul_reads_a_prefix_in_c_bases() {
        assert_eq!(bstrtoul("0x1f"), Some(31));
        assert_eq!(bstrtoul("010"), Some(8));
        assert_eq!(bstrtoul("12abc"), Some(12));
        assert_eq!(bstrtoul("0"), Some(0));
        assert_eq!(bstrtoul("abc"), None);
        assert_eq!(bstrtoul("-1"), None);
        assert_eq!(bstrtoul("-2147483648").map(|v| v as u32), Some(0x8000_0000));
    }
}
