//! Test helpers shared by the tbf, prio, red and pfifo_fast tests: a tc command line split into
//! positioned tokens, built through the real `build_qdisc` path.

use crate::qdisc::{build_qdisc, BuildCx, Filter, Graft, Handle, QdiscDecl, QdiscImpl};
use crate::tc::{Severity, TcDiag, Tok};

/// The column (1-based) where the options start on a line `<kind> <opts>`.
pub fn opts_col(kind: &str) -> u32 {
    kind.len() as u32 + 2
}

/// A qdisc declaration as if line 1 read `<kind> <opts>`: the kind at column 1, each option word
/// at its own column.
pub fn decl<'a>(kind: &'a str, handle: Handle, opts: &'a str) -> QdiscDecl<'a> {
    let mut col = opts_col(kind);
    let mut toks = Vec::new();
    for w in opts.split(' ') {
        if !w.is_empty() {
            toks.push(Tok { text: w, line: 1, col });
        }
        col += w.len() as u32 + 1;
    }
    let end = (1, col - 1);
    QdiscDecl {
        kind: Tok { text: kind, line: 1, col: 1 },
        handle,
        parent: Handle::ROOT,
        opts: toks,
        end,
        classes: vec![],
        grafts: vec![],
        filters: vec![],
    }
}

/// Column of the `n`-th (0-based) option word of `opts` on such a line.
pub fn word_col(kind: &str, opts: &str, n: usize) -> u32 {
    let mut col = opts_col(kind);
    let mut i = 0;
    for w in opts.split(' ') {
        if !w.is_empty() {
            if i == n {
                return col;
            }
            i += 1;
        }
        col += w.len() as u32 + 1;
    }
    panic!("no word {n} in {opts:?}")
}

/// Build through `build_qdisc`, with grafts and filters.
pub fn build_full(
    kind: &str,
    handle: Handle,
    opts: &str,
    grafts: Vec<Graft<'static>>,
    filters: Vec<Filter>,
    cx: &BuildCx,
) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    let mut d = decl(kind, handle, opts);
    d.grafts = grafts;
    d.filters = filters;
    let mut diags = vec![];
    let q = build_qdisc(d, cx, &mut diags);
    (q, diags)
}

/// Build with the test device (eth0, txqueuelen 1000); panics on errors.
pub fn build_ok(kind: &str, handle: Handle, opts: &str) -> QdiscImpl {
    let (q, diags) = build_full(kind, handle, opts, vec![], vec![], &BuildCx::for_tests());
    assert!(errors(&diags).is_empty(), "{kind} {opts}: {diags:?}");
    q.expect("built")
}

/// Build expecting failure: the errors.
pub fn build_err(kind: &str, opts: &str) -> Vec<TcDiag> {
    let (q, diags) = build_full(kind, Handle::new(1, 0), opts, vec![], vec![], &BuildCx::for_tests());
    assert!(q.is_none(), "{kind} {opts} should not build; diags {diags:?}");
    let e = errors(&diags);
    assert!(!e.is_empty(), "{kind} {opts}: no error reported");
    e
}

pub fn errors(diags: &[TcDiag]) -> Vec<TcDiag> {
    diags.iter().filter(|d| d.severity == Severity::Error).cloned().collect()
}

pub fn warnings(diags: &[TcDiag]) -> Vec<TcDiag> {
    diags.iter().filter(|d| d.severity == Severity::Warning).cloned().collect()
}

/// A graft of `q` onto `classid`, as `tc qdisc add ... parent <classid> ...` on line 2.
pub fn graft(classid: Handle, q: QdiscImpl) -> Graft<'static> {
    Graft { at: Tok { text: "parent", line: 2, col: 20 }, classid, qdisc: q }
}
