//! Test helper: turn one-line tc commands into the declarations `build` receives, with token
//! positions as a script would give them, so that option parsing is exercised by every test.

use crate::qdisc::testutil::{run_link, Bench, LinkRun, Source};
use crate::qdisc::{build_qdisc, BuildCx, ClassDecl, Handle, Qdisc, QdiscDecl, QdiscImpl};
use crate::tc::{TcDiag, Tok};
use crate::time::Nanos;

/// Every word of `text` with its (line, column), the column 1-based.
pub(in crate::qdisc) fn words(line: u32, text: &str) -> Vec<Tok<'static>> {
    let text: &'static str = Box::leak(text.to_string().into_boxed_str());
    let mut out = vec![];
    let mut col = 1u32;
    for w in text.split(' ') {
        if !w.is_empty() {
            out.push(Tok { text: w, line, col });
        }
        col += w.len() as u32 + 1;
    }
    out
}

/// `1:`, `1:10`, `root` as tc reads them (hexadecimal).
pub(in crate::qdisc) fn handle(s: &str) -> Handle {
    if s == "root" {
        return Handle::ROOT;
    }
    let (maj, min) = s.split_once(':').unwrap_or((s, ""));
    let maj = u16::from_str_radix(maj, 16).expect("hex major");
    let min = if min.is_empty() { 0 } else { u16::from_str_radix(min, 16).expect("hex minor") };
    Handle::new(maj, min)
}

/// The end position of a line (for "missing" errors).
fn end_of(toks: &[Tok<'_>]) -> (u32, u32) {
    let last = toks.last().expect("a non-empty command");
    (last.line, last.col + last.text.len() as u32)
}

/// `tc qdisc add dev eth0 (root|parent X) [handle H] KIND OPTS...` on line `line`.
pub(in crate::qdisc) fn qdisc(line: u32, text: &str) -> QdiscDecl<'static> {
    let toks = words(line, text);
    let end = end_of(&toks);
    let mut i = toks.iter().position(|t| t.text == "dev").expect("dev") + 2;
    let (mut parent, mut h) = (Handle::ROOT, Handle::UNSPEC);
    loop {
        match toks[i].text {
            "root" => i += 1,
            "parent" => {
                parent = handle(toks[i + 1].text);
                i += 2;
            }
            "handle" => {
                h = handle(toks[i + 1].text);
                i += 2;
            }
            _ => break,
        }
    }
    QdiscDecl {
        kind: toks[i],
        handle: h,
        parent,
        opts: toks[i + 1..].to_vec(),
        end,
        classes: vec![],
        grafts: vec![],
        filters: vec![],
    }
}

/// `tc class add dev eth0 parent P classid C KIND OPTS...` on line `line`.
pub(in crate::qdisc) fn class(line: u32, text: &str) -> ClassDecl<'static> {
    let toks = words(line, text);
    let end = end_of(&toks);
    let p = toks.iter().position(|t| t.text == "parent").expect("parent");
    let c = toks.iter().position(|t| t.text == "classid").expect("classid");
    let k = p.max(c) + 2;
    ClassDecl {
        at: toks[c + 1],
        classid: handle(toks[c + 1].text),
        parent: handle(toks[p + 1].text),
        kind: toks[k],
        opts: toks[k + 1..].to_vec(),
        end,
    }
}

/// Build through the real dispatcher with the test device (txqueuelen 1000, mtu 1514).
pub(in crate::qdisc) fn build(d: QdiscDecl<'static>) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    let mut diags = vec![];
    let q = build_qdisc(d, &BuildCx::for_tests(), &mut diags);
    (q, diags)
}

/// Build a declaration that must be accepted (warnings allowed).
pub(in crate::qdisc) fn build_ok(d: QdiscDecl<'static>) -> QdiscImpl {
    let (q, diags) = build(d);
    match q {
        Some(q) => q,
        None => panic!("build failed: {diags:?}"),
    }
}

/// Jain's fairness index of the shares (1 = perfectly equal).
pub(in crate::qdisc) fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// One flow of 1514-byte frames offered at `percent` % of a `link` bit/s link for `secs`,
/// measured from `from` seconds; the stats identity must hold at the end.
pub(in crate::qdisc) fn overload(q: &mut QdiscImpl, link: u64, percent: u64, secs: u64, from: u64) -> LinkRun {
    let mut b = Bench::new(1);
    let src = Source { flow: 0, rate_bps: percent * link / 100, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(secs) };
    let r = run_link(q, &mut b, &[src], link, Nanos::from_secs(secs), Nanos::from_secs(from));
    assert!(q.stats().identity_holds(), "{:?}", q.stats());
    r
}
