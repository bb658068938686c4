//! Test bench for disciplines: a packet arena, flows, and a fixed-rate link that drains a qdisc
//! fed by CBR sources; and qdisc declarations built from tc-like text, with token positions as
//! a script would give them, so that option parsing is exercised by every test. Used by every
//! discipline's unit tests.

use super::{build_qdisc, BuildCx, ClassDecl, Enq, Filter, Graft, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl};
use crate::packet::{FlowKey, Packet, PacketId, Packets};
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::time::Nanos;

pub struct Bench {
    pub pkts: Packets,
    pub keys: Vec<FlowKey>,
    pub dropped: Vec<PacketId>,
    /// Relative goodput per flow handed to disciplines as `QCtx::chan` (all `REL_ONE` at first).
    pub chan: Vec<u32>,
}

impl Bench {
    /// `flows` UDP flows from 10.0.0.1 to 192.168.1.(2+i), source port 40000 + i, dport 5001.
    pub fn new(flows: usize) -> Bench {
        let keys = (0..flows)
            .map(|i| FlowKey {
                src_ip: 0x0a00_0001,
                dst_ip: 0xc0a8_0102 + i as u32,
                sport: 40000 + i as u16,
                dport: 5001,
                proto: 17,
                tos: 0,
                mark: 0,
                priority: 0,
            })
            .collect();
        Bench { pkts: Packets::with_capacity(1024), keys, dropped: Vec::new(), chan: vec![super::REL_ONE; flows] }
    }

    /// A packet of flow `flow` with an IP datagram of `ip_len` bytes (qdisc length ip_len + 14).
    pub fn pkt(&mut self, flow: u32, ip_len: u32) -> PacketId {
        self.pkts.alloc(Packet { payload: ip_len.saturating_sub(28), ..Packet::new(flow, ip_len, 0, Nanos::ZERO) })
    }

    pub fn cx(&mut self) -> QCtx<'_> {
        QCtx { pkts: &mut self.pkts, keys: &self.keys, dropped: &mut self.dropped, chan: &self.chan }
    }
}

/// A CBR source for [`run_link`].
#[derive(Clone, Copy, Debug)]
pub struct Source {
    pub flow: u32,
    /// Offered rate in bits per second of qdisc length (IP + 14).
    pub rate_bps: u64,
    pub ip_len: u32,
    pub start: Nanos,
    pub stop: Nanos,
}

#[derive(Clone, Debug, Default)]
pub struct LinkRun {
    /// Per flow: bytes (qdisc length) sent on the link after `measure_from`.
    pub bytes: Vec<u64>,
    pub packets: Vec<u64>,
    pub drops: Vec<u64>,
    /// Per flow: sum and maximum of queueing delays of packets sent after `measure_from`.
    pub delay_sum: Vec<u128>,
    pub delay_max: Vec<Nanos>,
    /// Every departure: (time it started on the link, flow, qdisc length).
    pub departures: Vec<(Nanos, u32, u32)>,
}

impl LinkRun {
    pub fn rate_bps(&self, flow: usize, seconds: f64) -> f64 {
        self.bytes[flow] as f64 * 8.0 / seconds
    }
    pub fn mean_delay(&self, flow: usize) -> Nanos {
        if self.packets[flow] == 0 {
            return Nanos::ZERO;
        }
        Nanos((self.delay_sum[flow] / self.packets[flow] as u128) as u64)
    }
}

/// Feed `q` from `sources` and drain it onto a link of `link_bps` for `duration`. Shapers are
/// polled again at their `next_wakeup`. Statistics count departures after `measure_from`.
pub fn run_link(
    q: &mut QdiscImpl,
    b: &mut Bench,
    sources: &[Source],
    link_bps: u64,
    duration: Nanos,
    measure_from: Nanos,
) -> LinkRun {
    let nf = b.keys.len();
    let mut r = LinkRun {
        bytes: vec![0; nf],
        packets: vec![0; nf],
        drops: vec![0; nf],
        delay_sum: vec![0; nf],
        delay_max: vec![Nanos::ZERO; nf],
        departures: vec![],
    };
    let mut next: Vec<Option<(Nanos, u64)>> = sources.iter().map(|s| Some((s.start, 0))).collect();
    let mut link_free = Nanos::ZERO;
    let mut wake: Option<Nanos> = None;
    let mut now;
    loop {
        // The next instant anything happens.
        let mut t = Nanos(u64::MAX);
        for n in next.iter().flatten() {
            t = t.min(n.0);
        }
        if link_free > Nanos::ZERO {
            t = t.min(link_free);
        }
        if let Some(w) = wake {
            t = t.min(w);
        }
        if t == Nanos(u64::MAX) || t > duration {
            break;
        }
        now = t;
        for (i, s) in sources.iter().enumerate() {
            while let Some((at, k)) = next[i] {
                if at != now {
                    break;
                }
                let id = b.pkt(s.flow, s.ip_len);
                let res = q.enqueue(id, &mut b.cx(), now);
                let _ = res == Enq::Dropped;
                let off = ((k + 1) as u128 * (s.ip_len as u128 + 14) * 8 * 1_000_000_000 / s.rate_bps as u128) as u64;
                let nt = s.start + Nanos(off);
                next[i] = if nt < s.stop { Some((nt, k + 1)) } else { None };
            }
        }
        for d in b.dropped.drain(..) {
            let f = b.pkts.get(d).flow as usize;
            r.drops[f] += 1;
            b.pkts.free(d);
        }
        if link_free <= now {
            link_free = Nanos::ZERO;
            wake = None;
            if let Some(p) = q.dequeue(&mut b.cx(), now) {
                let pk = *b.pkts.get(p);
                let len = pk.ip_len + 14;
                if now >= measure_from {
                    let f = pk.flow as usize;
                    r.bytes[f] += len as u64;
                    r.packets[f] += 1;
                    r.delay_sum[f] += pk.queue_delay.0 as u128;
                    r.delay_max[f] = r.delay_max[f].max(pk.queue_delay);
                }
                r.departures.push((now, pk.flow, len));
                b.pkts.free(p);
                link_free = now + Nanos::for_bits(len as u64 * 8, link_bps);
            } else if q.stats().qlen > 0 {
                wake = q.next_wakeup(now).map(|w| w.max(now + Nanos(1)));
            }
            for d in b.dropped.drain(..) {
                let f = b.pkts.get(d).flow as usize;
                r.drops[f] += 1;
                b.pkts.free(d);
            }
        }
    }
    r
}

/// The flows of the next `n` packets `q` hands out (at 1 ns) as letters: `A` for flow 0, `B`
/// for any other.
pub fn ab_order(q: &mut QdiscImpl, b: &mut Bench, n: usize) -> String {
    (0..n)
        .map(|_| {
            let p = q.dequeue(&mut b.cx(), Nanos(1)).unwrap();
            if b.pkts.get(p).flow == 0 {
                'A'
            } else {
                'B'
            }
        })
        .collect()
}

/// Jain's fairness index of the shares (1 = perfectly equal).
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

/// One flow of 1514-byte frames offered at `percent` % of a `link` bit/s link for `secs`,
/// measured from `from` seconds; the stats identity must hold at the end.
pub fn overload(q: &mut QdiscImpl, link: u64, percent: u64, secs: u64, from: u64) -> LinkRun {
    let mut b = Bench::new(1);
    let src = Source {
        flow: 0,
        rate_bps: percent * link / 100,
        ip_len: 1500,
        start: Nanos::ZERO,
        stop: Nanos::from_secs(secs),
    };
    let r = run_link(q, &mut b, &[src], link, Nanos::from_secs(secs), Nanos::from_secs(from));
    assert!(q.stats().identity_holds(), "{:?}", q.stats());
    r
}

// ---------------------------------------------------------------------------------------------
// Declarations from tc-like text

/// The words of `text` as tokens on line `line`, the first character at column `col` (1-based);
/// runs of spaces only move the column.
pub fn tokens(text: &str, line: u32, col: u32) -> Vec<Tok<'_>> {
    let mut out = vec![];
    let mut col = col;
    for w in text.split(' ') {
        if !w.is_empty() {
            out.push(Tok { text: w, line, col });
        }
        col += w.len() as u32 + 1;
    }
    out
}

/// Every word of `text` with its (line, column), the column 1-based; the text is leaked so that
/// declarations built from it can outlive it.
pub fn words(line: u32, text: &str) -> Vec<Tok<'static>> {
    let text: &'static str = Box::leak(text.to_string().into_boxed_str());
    tokens(text, line, 1)
}

/// `1:`, `1:10`, `root` as tc reads them (hexadecimal).
pub fn handle(s: &str) -> Handle {
    if s == "root" {
        return Handle::ROOT;
    }
    let (maj, min) = s.split_once(':').unwrap_or((s, ""));
    let maj = u16::from_str_radix(maj, 16).expect("hex major");
    let min = if min.is_empty() { 0 } else { u16::from_str_radix(min, 16).expect("hex minor") };
    Handle::new(maj, min)
}

/// Just past the end of line `line` (where "missing" errors point).
fn end_of(line: u32, text: &str) -> (u32, u32) {
    (line, text.len() as u32 + 1)
}

/// `tc qdisc add dev eth0 (root|parent X) [handle H] KIND OPTS...` on line `line`.
pub fn qdisc(line: u32, text: &str) -> QdiscDecl<'static> {
    let toks = words(line, text);
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
        end: end_of(line, text),
        classes: vec![],
        grafts: vec![],
        filters: vec![],
    }
}

/// `tc class add dev eth0 parent P classid C KIND OPTS...` on line `line`.
pub fn class(line: u32, text: &str) -> ClassDecl<'static> {
    let toks = words(line, text);
    let p = toks.iter().position(|t| t.text == "parent").expect("parent");
    let c = toks.iter().position(|t| t.text == "classid").expect("classid");
    let k = p.max(c) + 2;
    ClassDecl {
        at: toks[c + 1],
        classid: handle(toks[c + 1].text),
        parent: handle(toks[p + 1].text),
        kind: toks[k],
        opts: toks[k + 1..].to_vec(),
        end: end_of(line, text),
    }
}

/// The column (1-based) where the options start on a line `<kind> <opts>`.
pub fn opts_col(kind: &str) -> u32 {
    kind.len() as u32 + 2
}

/// A root qdisc declaration as if line 1 read `<kind> <opts>`: the kind at column 1, each option
/// word at its own column.
pub fn decl<'a>(kind: &'a str, handle: Handle, opts: &'a str) -> QdiscDecl<'a> {
    QdiscDecl {
        kind: Tok { text: kind, line: 1, col: 1 },
        handle,
        parent: Handle::ROOT,
        opts: tokens(opts, 1, opts_col(kind)),
        end: (1, opts_col(kind) + opts.len() as u32),
        classes: vec![],
        grafts: vec![],
        filters: vec![],
    }
}

/// Column of the `n`-th (0-based) option word of `opts` on a line `<kind> <opts>`.
pub fn word_col(kind: &str, opts: &str, n: usize) -> u32 {
    match tokens(opts, 1, opts_col(kind)).get(n) {
        Some(t) => t.col,
        None => panic!("no word {n} in {opts:?}"),
    }
}

/// A graft of `q` onto `classid`, as `tc qdisc add ... parent <classid> ...` on line 2.
pub fn graft(classid: Handle, q: QdiscImpl) -> Graft<'static> {
    Graft { at: Tok { text: "parent", line: 2, col: 20 }, classid, qdisc: q }
}

// ---------------------------------------------------------------------------------------------
// Building

/// Build through the real dispatcher with the test device (eth0, txqueuelen 1000, mtu 1514).
pub fn build(d: QdiscDecl<'_>) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    build_with(d, &BuildCx::for_tests())
}

/// Build through the real dispatcher for the device `cx`.
pub fn build_with(d: QdiscDecl<'_>, cx: &BuildCx) -> (Option<QdiscImpl>, Vec<TcDiag>) {
    let mut diags = vec![];
    let q = build_qdisc(d, cx, &mut diags);
    (q, diags)
}

/// Build a declaration that must be accepted (warnings allowed).
pub fn build_ok(d: QdiscDecl<'_>) -> QdiscImpl {
    let (q, diags) = build(d);
    match q {
        Some(q) => q,
        None => panic!("build failed: {diags:?}"),
    }
}

/// The qdisc of a build that must have succeeded without errors (warnings allowed).
pub fn expect_built((q, diags): (Option<QdiscImpl>, Vec<TcDiag>), what: &str) -> QdiscImpl {
    assert!(errors(&diags).is_empty(), "{what}: {diags:?}");
    q.expect("built")
}

/// Build `<kind> <opts>` ([`decl`]) with grafts and filters.
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
    build_with(d, cx)
}

/// Build `<kind> <opts>` with the test device; panics on errors.
pub fn build_opts_ok(kind: &str, handle: Handle, opts: &str) -> QdiscImpl {
    let r = build_full(kind, handle, opts, vec![], vec![], &BuildCx::for_tests());
    expect_built(r, &format!("{kind} {opts}"))
}

/// Build `<kind> <opts>` expecting failure: the errors.
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
