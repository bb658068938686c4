//! The words of the tc language, below both the command parser and the disciplines: tokens with
//! their positions and the tokenizer that splits a script into them (tc's batch reader:
//! comments, continuation lines, quotes); diagnostics ([`TcDiag`]); the one cursor every parser
//! walks a command's tokens with ([`Cursor`]); tc handles and class ids ([`Handle`], as
//! `get_qdisc_handle` and `get_tc_classid` read them); numbers as `strtoul` reads them; IPv4
//! addresses and prefixes.
//!
//! Nothing here depends on the rest of `tc` or on `qdisc`: both build on it.

use std::fmt;

// ----------------------------------------------------------------------------------------------
// Tokens and diagnostics

/// A whitespace-separated word of a tc command, with its position in the script (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok<'a> {
    pub text: &'a str,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    /// Accepted by tc but not modelled (or modelled differently): recorded in the run's
    /// metadata, never silently ignored.
    Warning,
}

/// An error or warning about a tc script, at a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcDiag {
    pub severity: Severity,
    pub line: u32,
    pub col: u32,
    /// The offending token ("" at the end of a line).
    pub token: String,
    pub message: String,
}

impl TcDiag {
    /// A diagnostic at token `at`.
    pub fn at(severity: Severity, at: Tok<'_>, message: impl Into<String>) -> TcDiag {
        TcDiag { severity, line: at.line, col: at.col, token: at.text.to_string(), message: message.into() }
    }

    /// A diagnostic at `(line, column)` without a token: the end of a command, or column 1 of a
    /// line as a whole.
    pub fn at_pos(severity: Severity, (line, col): (u32, u32), message: impl Into<String>) -> TcDiag {
        TcDiag { severity, line, col, token: String::new(), message: message.into() }
    }
}

/// True if a diagnostic pushed since index `from` is an error.
pub fn errors_since(diags: &[TcDiag], from: usize) -> bool {
    diags[from..].iter().any(|d| d.severity == Severity::Error)
}

impl std::fmt::Display for TcDiag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        if self.token.is_empty() {
            write!(f, "{}:{}: {what}: {}", self.line, self.col, self.message)
        } else {
            write!(f, "{}:{}: {what}: at \"{}\": {}", self.line, self.col, self.token, self.message)
        }
    }
}

/// Push an error at token `at`.
pub(crate) fn err(diags: &mut Vec<TcDiag>, at: Tok<'_>, message: impl Into<String>) {
    diags.push(TcDiag::at(Severity::Error, at, message));
}

/// Push a warning at token `at`.
pub(crate) fn warn(diags: &mut Vec<TcDiag>, at: Tok<'_>, message: impl Into<String>) {
    diags.push(TcDiag::at(Severity::Warning, at, message));
}

/// Push an error at a position without a token (the end of a command).
pub(crate) fn err_at(diags: &mut Vec<TcDiag>, pos: (u32, u32), message: impl Into<String>) {
    diags.push(TcDiag::at_pos(Severity::Error, pos, message));
}

/// Push a warning at a position without a token.
pub(crate) fn warn_at(diags: &mut Vec<TcDiag>, pos: (u32, u32), message: impl Into<String>) {
    diags.push(TcDiag::at_pos(Severity::Warning, pos, message));
}

/// iproute2's `matches(word, keyword)`: `word` is a non-empty prefix of `keyword`.
pub fn matches(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

// ----------------------------------------------------------------------------------------------
// The cursor

/// A cursor over one command's tokens (or the tail a kind keyword hands to its own parser).
/// `'t` is the slice being walked, `'a` the script text the tokens point into: a parser may
/// keep the tokens it reads after the slice is gone. `end` is the position just past the last
/// token, where "missing" errors point.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'t, 'a> {
    toks: &'t [Tok<'a>],
    pos: usize,
    end: (u32, u32),
}

impl<'t, 'a> Cursor<'t, 'a> {
    pub fn new(toks: &'t [Tok<'a>], end: (u32, u32)) -> Self {
        Cursor { toks, pos: 0, end }
    }

    /// The next token, not consumed.
    pub fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    /// The token `n` places after the next one (`peek_nth(0)` is `peek()`), not consumed.
    pub fn peek_nth(&self, n: usize) -> Option<Tok<'a>> {
        self.toks.get(self.pos.saturating_add(n)).copied()
    }

    #[cfg(test)]
    pub fn is_done(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Tokens not consumed yet.
    pub fn rest(&self) -> &'t [Tok<'a>] {
        &self.toks[self.pos.min(self.toks.len())..]
    }

    /// Line and column just past the last token.
    pub fn end(&self) -> (u32, u32) {
        self.end
    }

    /// The value after option `key`, consumed, or an error at `key` saying what was expected.
    pub fn value(&mut self, key: Tok<'_>, expected: &str, diags: &mut Vec<TcDiag>) -> Option<Tok<'a>> {
        let v = self.next();
        if v.is_none() {
            err(diags, key, format!("\"{}\" needs a value: {expected}", key.text));
        }
        v
    }
}

impl<'a> Iterator for Cursor<'_, 'a> {
    type Item = Tok<'a>;

    /// The next token, consumed.
    fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.toks.get(self.pos).copied();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
}

// ----------------------------------------------------------------------------------------------
// Handles

/// A tc handle or class id: major in the upper 16 bits, minor in the lower (`TC_H_MAKE`).
/// Both halves are hexadecimal in tc syntax: `1:10` is major 1, minor 0x10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Handle(pub u32);

impl Handle {
    /// `TC_H_ROOT`.
    pub const ROOT: Handle = Handle(0xFFFF_FFFF);
    /// `TC_H_UNSPEC`.
    pub const UNSPEC: Handle = Handle(0);
    /// The clsact egress hook, `TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)` = ffff:fff3.
    pub const CLSACT_EGRESS: Handle = Handle(0xFFFF_FFF3);
    /// The ingress hook, `TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)` = ffff:fff2 (`tc filter add
    /// dev D ingress`); filters given `parent ffff:` land on the same hook.
    pub const CLSACT_INGRESS: Handle = Handle(0xFFFF_FFF2);

    pub const fn new(major: u16, minor: u16) -> Handle {
        Handle(((major as u32) << 16) | minor as u32)
    }
    pub const fn major(self) -> u16 {
        (self.0 >> 16) as u16
    }
    pub const fn minor(self) -> u16 {
        (self.0 & 0xFFFF) as u16
    }
    /// The qdisc handle this class id belongs to (`M:0`).
    pub const fn qdisc(self) -> Handle {
        Handle(self.0 & 0xFFFF_0000)
    }
}

impl fmt::Display for Handle {
    /// As tc prints it: `root`, `1:`, `1:10` (hex).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Handle::ROOT {
            write!(f, "root")
        } else if self.minor() == 0 {
            write!(f, "{:x}:", self.major())
        } else {
            write!(f, "{:x}:{:x}", self.major(), self.minor())
        }
    }
}

fn split_hex(s: &str) -> (Option<u64>, &str) {
    let body = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    let n = body.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
    if n == 0 {
        return (None, s);
    }
    let digits = &body[..n];
    let v =
        if digits.trim_start_matches('0').len() > 16 { Some(u64::MAX) } else { u64::from_str_radix(digits, 16).ok() };
    (v, &body[n..])
}

/// A qdisc handle as tc reads it (`get_qdisc_handle`): `M:` or `M` with M hexadecimal below
/// 0x10000, or `none`. Returns the handle (minor 0) and whether text after the colon was
/// ignored (tc ignores it; airsched warns).
pub fn parse_qdisc_handle(s: &str) -> Result<(Handle, bool), String> {
    if s == "none" {
        return Ok((Handle::UNSPEC, false));
    }
    let bad = || {
        format!(
            "invalid qdisc handle \"{s}\": expected a hexadecimal major number and a colon, like 1: or 10: (at most ffff:)"
        )
    };
    let (maj, rest) = split_hex(s);
    let maj = maj.ok_or_else(bad)?;
    if maj >= 0x1_0000 {
        return Err(bad());
    }
    let ignored = match rest.strip_prefix(':') {
        None if rest.is_empty() => false,
        None => return Err(bad()),
        Some(minor) => !(minor.is_empty() || minor.bytes().all(|b| b == b'0')),
    };
    Ok((Handle::new(maj as u16, 0), ignored))
}

/// A class id as tc reads it (`get_tc_classid`): `root`, `none`, `M:m`, `M:`, `:m` (hex), or a
/// bare hexadecimal number taken as the whole 32-bit id. The flag says there was no colon.
pub fn parse_classid(s: &str) -> Result<(Handle, bool), String> {
    match s {
        "root" => return Ok((Handle::ROOT, false)),
        "none" => return Ok((Handle::UNSPEC, false)),
        _ => {}
    }
    let bad = || {
        format!(
            "invalid class id \"{s}\": expected MAJOR:MINOR in hexadecimal, like 1:10 or 1: (each at most ffff), or root"
        )
    };
    let (maj, rest) = split_hex(s);
    match rest.strip_prefix(':') {
        Some(minor_text) => {
            let maj = maj.unwrap_or(0);
            if maj >= 0x1_0000 {
                return Err(bad());
            }
            let (min, tail) = split_hex(minor_text);
            if !tail.is_empty() {
                return Err(bad());
            }
            let min = min.unwrap_or(0);
            if min >= 0x1_0000 {
                return Err(bad());
            }
            Ok((Handle::new(maj as u16, min as u16), false))
        }
        None => {
            let v = maj.ok_or_else(bad)?;
            if !rest.is_empty() || v > u32::MAX as u64 {
                return Err(bad());
            }
            Ok((Handle(v as u32), true))
        }
    }
}

/// An unsigned number as C's `strtoul` reads it with base 0 (iproute2's `get_u32(..., 0)`):
/// `0x` hexadecimal, a leading `0` octal, else decimal; the whole word must be a number.
pub fn parse_c_u32(s: &str) -> Option<u32> {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// A hexadecimal number as `strtoul(..., 16)` reads it (optional `0x`), whole word.
pub fn parse_hex_u32(s: &str) -> Option<u32> {
    let d = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(d, 16).ok()
}

// ----------------------------------------------------------------------------------------------
// IPv4

/// `A.B.C.D`, `A.B.C.D/LEN` or `A.B.C.D/M.M.M.M` (contiguous), or `any`/`all`/`default` (0/0).
pub fn parse_ipv4_prefix(s: &str) -> Option<(u32, u32)> {
    if matches!(s, "any" | "all" | "default") {
        return Some((0, 0));
    }
    let (a, l) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let addr = parse_ipv4(a)?;
    let len = match l {
        None => 32,
        Some(l) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            let n: u32 = l.parse().ok()?;
            if n > 32 {
                return None;
            }
            n
        }
        Some(l) => {
            let m = parse_ipv4(l)?;
            let ones = m.leading_ones();
            if m.checked_shl(ones).unwrap_or(0) != 0 {
                return None;
            }
            ones
        }
    };
    Some((addr, len))
}

/// A dotted quad `A.B.C.D` (each part one to three decimal digits, at most 255) as a number in
/// host order (`10.0.0.1` is `0x0a00_0001`). The whole word: no spaces, signs or trailing dots.
pub fn parse_ipv4(s: &str) -> Option<u32> {
    let mut parts = s.split('.');
    let mut v = 0u32;
    for _ in 0..4 {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u32 = p.parse().ok()?;
        if n > 255 {
            return None;
        }
        v = (v << 8) | n;
    }
    if parts.next().is_some() {
        return None;
    }
    Some(v)
}

// ----------------------------------------------------------------------------------------------
// Tokenizer

/// One command's tokens (continuation lines joined), with the position just past its end.
pub(crate) struct RawCmd<'a> {
    pub toks: Vec<Tok<'a>>,
    pub end: (u32, u32),
    /// An error was found while splitting it (unterminated quote): not parsed further.
    pub bad: bool,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\u{b}' | '\u{c}')
}

/// 1-based character column of byte index `b` of `line`.
fn col_of(line: &str, b: usize) -> u32 {
    (line[..b].chars().count() + 1).min(u32::MAX as usize) as u32
}

pub(crate) fn tokenize<'a>(text: &'a str, diags: &mut Vec<TcDiag>) -> Vec<RawCmd<'a>> {
    let mut cmds = Vec::new();
    let mut cur: Vec<Tok<'a>> = Vec::new();
    let mut cur_end = (1u32, 1u32);
    let mut continued = false;
    let mut bad = false;
    let mut last_backslash = (0u32, 0u32);
    for (i, raw_line) in text.split('\n').enumerate() {
        let lineno = (i + 1).min(u32::MAX as usize) as u32;
        // Comments end the line wherever they start (tc's batch reader).
        let content = match raw_line.find('#') {
            Some(p) => &raw_line[..p],
            None => raw_line,
        };
        let trimmed = content.trim_end_matches(is_space);
        let cont = trimmed.ends_with('\\');
        let body = if cont { &trimmed[..trimmed.len() - 1] } else { content };
        if cont {
            last_backslash = (lineno, col_of(raw_line, trimmed.len() - 1));
            if trimmed.len() < content.len() {
                warn_at(
                    diags,
                    last_backslash,
                    "spaces after the line-continuation backslash: tc and the shell would not continue the line here; airsched does",
                );
            }
        }
        // Split into words.
        let mut b = 0usize;
        while b < body.len() {
            let c = body[b..].chars().next().unwrap_or(' ');
            if is_space(c) {
                b += c.len_utf8();
                continue;
            }
            if c == '\'' || c == '"' {
                let start = b + 1;
                match body[start..].find(c) {
                    Some(rel) => {
                        let stop = start + rel;
                        let tok = Tok { text: &body[start..stop], line: lineno, col: col_of(raw_line, start) };
                        cur.push(tok);
                        cur_end = (lineno, col_of(raw_line, stop + 1));
                        b = stop + 1;
                    }
                    None => {
                        let tok = Tok { text: &body[b..], line: lineno, col: col_of(raw_line, b) };
                        err(
                            diags,
                            tok,
                            format!("unterminated quote: the word starting with {c} has no closing {c} on this line"),
                        );
                        b = body.len();
                        cur_end = (lineno, col_of(raw_line, b));
                        bad = true;
                    }
                }
                continue;
            }
            let start = b;
            while b < body.len() {
                let ch = body[b..].chars().next().unwrap_or(' ');
                if is_space(ch) {
                    break;
                }
                b += ch.len_utf8();
            }
            cur.push(Tok { text: &body[start..b], line: lineno, col: col_of(raw_line, start) });
            cur_end = (lineno, col_of(raw_line, b));
        }
        continued = cont;
        if !cont && !cur.is_empty() {
            cmds.push(RawCmd { toks: std::mem::take(&mut cur), end: cur_end, bad: std::mem::take(&mut bad) });
        }
    }
    if continued {
        warn_at(
            diags,
            last_backslash,
            "the script ends with a line-continuation backslash (tc would report a missing continuation line)",
        );
    }
    if !cur.is_empty() {
        cmds.push(RawCmd { toks: cur, end: cur_end, bad });
    }
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(text: &str, col: u32) -> Tok<'_> {
        Tok { text, line: 2, col }
    }

    #[test]
    fn handles_and_classids_read_like_tc() {
        assert_eq!(parse_qdisc_handle("1:"), Ok((Handle::new(1, 0), false)));
        assert_eq!(parse_qdisc_handle("ffff:"), Ok((Handle::new(0xffff, 0), false)));
        assert_eq!(parse_qdisc_handle("10"), Ok((Handle::new(0x10, 0), false)));
        assert_eq!(parse_qdisc_handle("0x10:0"), Ok((Handle::new(0x10, 0), false)));
        assert_eq!(parse_qdisc_handle("1:10"), Ok((Handle::new(1, 0), true)));
        assert_eq!(parse_qdisc_handle("none"), Ok((Handle::UNSPEC, false)));
        assert!(parse_qdisc_handle("10000:").is_err());
        assert!(parse_qdisc_handle("x:").is_err());
        assert!(parse_qdisc_handle("1;").is_err());
        assert!(parse_qdisc_handle("").is_err());
        assert_eq!(parse_classid("1:10"), Ok((Handle::new(1, 0x10), false)));
        assert_eq!(parse_classid("1:"), Ok((Handle::new(1, 0), false)));
        assert_eq!(parse_classid(":a"), Ok((Handle::new(0, 0xa), false)));
        assert_eq!(parse_classid("root"), Ok((Handle::ROOT, false)));
        assert_eq!(parse_classid("none"), Ok((Handle::UNSPEC, false)));
        assert_eq!(parse_classid("10"), Ok((Handle(0x10), true)));
        assert_eq!(parse_classid("ffff:ffff"), Ok((Handle::new(0xffff, 0xffff), false)));
        for bad in ["1:10000", "1:x", "1:1:1", "g", "", ":", "1::"] {
            if bad == ":" {
                assert_eq!(parse_classid(bad), Ok((Handle::UNSPEC, false)));
                continue;
            }
            assert!(parse_classid(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_c_u32("0x10"), Some(16));
        assert_eq!(parse_c_u32("010"), Some(8));
        assert_eq!(parse_c_u32("0"), Some(0));
        assert_eq!(parse_c_u32("09"), None);
        assert_eq!(parse_c_u32("-1"), None);
        assert_eq!(parse_hex_u32("ffff"), Some(0xffff));
        assert_eq!(parse_hex_u32("0xff"), Some(0xff));
    }

    #[test]
    fn handles_print_and_split_like_tc() {
        assert_eq!(Handle::new(1, 0x10).to_string(), "1:10");
        assert_eq!(Handle::new(0x10, 0).to_string(), "10:");
        assert_eq!(Handle::ROOT.to_string(), "root");
        assert_eq!(Handle::new(1, 0x10).qdisc(), Handle::new(1, 0));
        assert_eq!((Handle::new(0xabcd, 0x12).major(), Handle::new(0xabcd, 0x12).minor()), (0xabcd, 0x12));
        // What tc prints reads back as the same handle.
        for h in [Handle::new(1, 0), Handle::new(0xffff, 0), Handle::new(1, 0x10), Handle::new(0x10, 0xffff)] {
            assert_eq!(parse_classid(&h.to_string()), Ok((h, false)), "{h}");
        }
    }

    #[test]
    fn qdisc_handles_root_ingress_hex_and_bad_ones() {
        // `root` is a place, not a qdisc handle; `ffff:` is the ingress handle, still valid.
        assert!(parse_qdisc_handle("root").is_err());
        assert_eq!(parse_qdisc_handle("ffff:"), Ok((Handle::new(0xffff, 0), false)));
        assert_eq!(parse_qdisc_handle("FFFF:"), Ok((Handle::new(0xffff, 0), false)));
        assert_eq!(parse_qdisc_handle("0xa:"), Ok((Handle::new(0xa, 0), false)));
        assert_eq!(parse_qdisc_handle("1:0"), Ok((Handle::new(1, 0), false)));
        assert_eq!(parse_qdisc_handle("1:000"), Ok((Handle::new(1, 0), false)));
        // tc ignores whatever follows the colon of a qdisc handle; airsched flags it.
        assert_eq!(parse_qdisc_handle("1:2:3x"), Ok((Handle::new(1, 0), true)));
        // A huge number saturates rather than wrapping into a valid handle.
        assert!(parse_qdisc_handle("100000000000000000001:").is_err());
        for bad in ["-1:", "1 :", ":", ":1", "0x:", "1;2"] {
            let e = parse_qdisc_handle(bad).unwrap_err();
            assert!(e.starts_with(&format!("invalid qdisc handle \"{bad}\"")), "{bad}: {e}");
        }
        for bad in ["10000:10000", "1:10:", "12345678901234567890:1"] {
            let e = parse_classid(bad).unwrap_err();
            assert!(e.starts_with(&format!("invalid class id \"{bad}\"")), "{bad}: {e}");
        }
        // A bare 32-bit number is a whole class id, flagged for a warning.
        assert_eq!(parse_classid("10010"), Ok((Handle(0x10010), true)));
        assert!(parse_classid("100000000").is_err());
        assert_eq!(parse_classid("0x1:0x10"), Ok((Handle::new(1, 0x10), false)));
    }

    #[test]
    fn ipv4_addresses_and_prefixes() {
        assert_eq!(parse_ipv4("10.0.0.1"), Some(0x0a00_0001));
        assert_eq!(parse_ipv4("255.255.255.255"), Some(u32::MAX));
        assert_eq!(parse_ipv4("0.0.0.0"), Some(0));
        assert_eq!(parse_ipv4("192.168.001.010"), Some(0xc0a8_010a));
        for bad in [
            "",
            "10.0.0",
            "10.0.0.1.",
            "10.0.0.1.2",
            "256.0.0.1",
            "1..2.3",
            "a.b.c.d",
            "+1.2.3.4",
            "1.2.3.0004",
            " 1.2.3.4",
            "1.2.3.4 ",
            "1.2.3.-4",
        ] {
            assert_eq!(parse_ipv4(bad), None, "{bad:?}");
        }
        assert_eq!(parse_ipv4_prefix("10.0.0.0/8"), Some((0x0a00_0000, 8)));
        assert_eq!(parse_ipv4_prefix("10.0.0.1"), Some((0x0a00_0001, 32)));
        assert_eq!(parse_ipv4_prefix("10.0.0.0/0"), Some((0x0a00_0000, 0)));
        assert_eq!(parse_ipv4_prefix("10.0.0.0/32"), Some((0x0a00_0000, 32)));
        assert_eq!(parse_ipv4_prefix("10.0.0.0/255.255.0.0"), Some((0x0a00_0000, 16)));
        assert_eq!(parse_ipv4_prefix("10.0.0.0/0.0.0.0"), Some((0x0a00_0000, 0)));
        assert_eq!(parse_ipv4_prefix("10.0.0.0/255.255.255.255"), Some((0x0a00_0000, 32)));
        for any in ["any", "all", "default"] {
            assert_eq!(parse_ipv4_prefix(any), Some((0, 0)));
        }
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0/",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "10.0.0.0/255.0.255.0",
            "10.0.0/8",
            "10.0.0.0/8/8",
            "/8",
            "ANY",
            "10.0.0.0/99999999999",
        ] {
            assert_eq!(parse_ipv4_prefix(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_cursor_reads_peeks_and_reports_missing_values() {
        let toks = [tok("limit", 1), tok("10", 7), tok("ecn", 10)];
        let mut diags = vec![];
        let mut c = Cursor::new(&toks, (2, 13));
        assert_eq!(c.peek(), Some(toks[0]));
        assert_eq!(c.peek_nth(2), Some(toks[2]));
        assert_eq!(c.peek_nth(3), None);
        assert_eq!(c.peek_nth(usize::MAX), None);
        let k = c.next().unwrap();
        assert_eq!(c.value(k, "a packet count", &mut diags), Some(toks[1]));
        assert_eq!(c.rest(), &toks[2..]);
        assert!(!c.is_done());
        let k = c.next().unwrap();
        assert!(c.is_done());
        assert_eq!(c.rest(), &[] as &[Tok<'_>]);
        assert!(diags.is_empty());
        assert_eq!(c.value(k, "nothing", &mut diags), None);
        assert_eq!(c.next(), None);
        assert_eq!(c.end(), (2, 13));
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].to_string(), "2:10: error: at \"ecn\": \"ecn\" needs a value: nothing");
        // An empty cursor is done at once.
        let mut e = Cursor::new(&[], (1, 1));
        assert!(e.is_done());
        assert_eq!((e.next(), e.peek()), (None, None));
    }

    #[test]
    fn diagnostics_print_with_or_without_a_token() {
        let d = TcDiag::at(Severity::Warning, tok("5ms", 4), "ignored");
        assert_eq!(d.to_string(), "2:4: warning: at \"5ms\": ignored");
        let d = TcDiag::at_pos(Severity::Error, (3, 17), "missing");
        assert_eq!(d.to_string(), "3:17: error: missing");
        let ds = vec![TcDiag::at_pos(Severity::Error, (1, 1), "a"), TcDiag::at_pos(Severity::Warning, (1, 1), "b")];
        assert!(errors_since(&ds, 0));
        assert!(!errors_since(&ds, 1));
        assert!(!errors_since(&ds, 2));
        assert!(matches("pre", "preference") && matches("preference", "preference"));
        assert!(!matches("", "preference") && !matches("prefs", "preference"));
    }

    #[test]
    fn the_tokenizer_keeps_positions_quotes_and_continuations() {
        let mut diags = vec![];
        let cmds = tokenize("tc qdisc \\\n  add 'dev' \"wl an0\" # c\n\n\tx\u{e9}y z\n", &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(cmds.len(), 2);
        let t: Vec<(&str, u32, u32)> = cmds[0].toks.iter().map(|t| (t.text, t.line, t.col)).collect();
        assert_eq!(t, vec![("tc", 1, 1), ("qdisc", 1, 4), ("add", 2, 3), ("dev", 2, 8), ("wl an0", 2, 14)]);
        assert_eq!(cmds[0].end, (2, 21));
        // Columns count characters, not bytes.
        assert_eq!((cmds[1].toks[1].text, cmds[1].toks[1].col), ("z", 6));
        let cmds = tokenize("a 'open\nb \\", &mut diags);
        assert!(cmds[0].bad);
        assert_eq!((diags[0].severity, diags[0].line, diags[0].col), (Severity::Error, 1, 3));
        assert_eq!((diags[1].severity, diags[1].line, diags[1].col), (Severity::Warning, 2, 3));
        assert_eq!(cmds.len(), 2);
    }
}
