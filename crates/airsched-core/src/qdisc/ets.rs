//! ets — Enhanced Transmission Selection (IEEE 802.1Qaz), as `net/sched/sch_ets.c` of Linux 6.1
//! behaves, configured the way iproute2 6.1's `tc/q_ets.c` does it.
//!
//! `bands` classes `MAJOR:1..MAJOR:bands` exist with the qdisc (they are not added with `tc
//! class add`). The first `strict` bands are served in strict priority (band 0 first, like
//! prio); the others share what is left by deficit round robin with their `quanta` (default
//! `psched_mtu`, 1514 here), check before send: a band whose deficit covers its head packet sends
//! it, otherwise it gets another quantum and goes to the tail of the active list.
//! Quanta are clamped to 256 ... 1 MiB as the kernels since mid-2025 do (Debian's 6.1.0-56
//! included, checked in the guest). Classification (`ets_classify`): skb->priority `MAJOR:band` names a band, else the filters'
//! flowid, else the `priomap` of the low 4 bits of skb->priority (default: every priority to the
//! last band); a band number out of range goes to `priomap[0]`.
//!
//! Deviations (docs/qdisc-ets.md): a child's `NET_XMIT_CN` counts as queued (and activates the
//! band); `tc class change` quanta are applied after the qdisc's options whatever the order of
//! the commands (a `tc qdisc change` in the kernel resets every quantum); hardware offload is not
//! modelled.

use std::collections::VecDeque;
use std::fmt::Write as _;

use super::classify::{classify_at, sort_filters, Verdict};
use super::common::{errors_since, filter_diag, pending_wakeup, StashPeek};
use super::{
    default_child, diag_error, BuildCx, ClassReport, Enq, Filter, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl,
    QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::time::Nanos;

/// `TCQ_ETS_MAX_BANDS`.
const MAX_BANDS: usize = 16;
/// `TC_PRIO_MAX`: the priomap has 16 entries.
const PRIO_MAX: usize = 15;

/// `ets_quantum_parse` (Linux 6.18, and Debian's 6.1.0-56, which has the backport): a quantum
/// is clamped to 256 ... 1 MiB bytes.
fn clamp_quantum(q: u32) -> u32 {
    q.clamp(256, 1 << 20)
}

struct Band {
    child: QdiscImpl,
    /// The grafted qdisc's handle (none for the default pfifo).
    leaf: Handle,
    quantum: u32,
    deficit: u32,
    active: bool,
    stats: QdiscStats,
}

pub struct Ets {
    handle: Handle,
    nstrict: usize,
    priomap: [u8; PRIO_MAX + 1],
    bands: Vec<Band>,
    /// Backlogged bandwidth-sharing bands; the head is served.
    active: VecDeque<usize>,
    filters: Vec<Filter>,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

/// What tc sends (`ets_parse_opt`).
struct Opts {
    nbands: usize,
    nstrict: usize,
    quanta: Vec<u32>,
    priomap: Vec<u8>,
}

/// `get_unsigned(.., 10)`.
fn unsigned(t: &str) -> Option<u32> {
    t.parse::<u32>().ok()
}

/// `ets_parse_opt` over the qdisc's words.
fn parse_opts(toks: &[Tok<'_>], end: (u32, u32), diags: &mut Vec<TcDiag>) -> Option<Opts> {
    let mut o = Opts { nbands: 0, nstrict: 0, quanta: Vec::new(), priomap: Vec::new() };
    #[derive(PartialEq)]
    enum Mode {
        None,
        Quanta,
        Priomap,
    }
    let mut mode = Mode::None;
    let missing = |diags: &mut Vec<TcDiag>, k: Tok<'_>| {
        diags.push(TcDiag::at_pos(
            Severity::Error,
            end,
            format!("a value is missing after \"{}\" (tc: Command line is incomplete)", k.text),
        ));
    };
    let mut i = 0;
    while let Some(&k) = toks.get(i) {
        match k.text {
            "bands" | "strict" => {
                let dup = if k.text == "bands" { o.nbands != 0 } else { o.nstrict != 0 };
                if dup {
                    diags.push(diag_error(k, format!("\"{}\" is given twice (tc: Duplicate \"{}\")", k.text, k.text)));
                    return None;
                }
                let Some(&v) = toks.get(i + 1) else {
                    missing(diags, k);
                    return None;
                };
                let n = match unsigned(v.text) {
                    Some(n) if n as usize <= MAX_BANDS => n as usize,
                    Some(_) => {
                        diags.push(diag_error(v, format!("the number of \"{}\" must be <= 16", k.text)));
                        return None;
                    }
                    None => {
                        diags.push(diag_error(
                            v,
                            format!("\"{}\" is not a number (tc: Illegal \"{}\")", v.text, k.text),
                        ));
                        return None;
                    }
                };
                if k.text == "bands" {
                    o.nbands = n;
                } else {
                    o.nstrict = n;
                }
                mode = Mode::None;
                i += 2;
                continue;
            }
            "quanta" | "priomap" => {
                let dup = if k.text == "quanta" { !o.quanta.is_empty() } else { !o.priomap.is_empty() };
                if dup {
                    diags.push(diag_error(k, format!("\"{}\" is given twice (tc: Duplicate \"{}\")", k.text, k.text)));
                    return None;
                }
                if toks.get(i + 1).is_none() {
                    missing(diags, k);
                    return None;
                }
                mode = if k.text == "quanta" { Mode::Quanta } else { Mode::Priomap };
                i += 1;
                continue;
            }
            "help" => {
                diags.push(diag_error(
                    k,
                    "help: ets [bands NUMBER] [strict NUMBER] [quanta Q1 Q2...] [priomap P1 P2...]",
                ));
                return None;
            }
            _ => {}
        }
        match mode {
            Mode::Quanta => match unsigned(k.text) {
                Some(0) => {
                    diags.push(diag_error(k, "a quantum must be > 0 (tc: \"quanta\" must be > 0)"));
                    return None;
                }
                Some(q) if o.quanta.len() < MAX_BANDS => o.quanta.push(q),
                Some(_) => {
                    diags.push(diag_error(k, "more than 16 quanta"));
                    return None;
                }
                None => {
                    diags.push(diag_error(
                        k,
                        format!("\"{}\" is not a quantum in bytes (tc: Illegal \"quanta\" element)", k.text),
                    ));
                    return None;
                }
            },
            Mode::Priomap => match unsigned(k.text) {
                Some(_) if o.priomap.len() > PRIO_MAX => {
                    diags.push(diag_error(
                        k,
                        "the priomap has 16 entries (tc: \"priomap\" index cannot be higher than 15)",
                    ));
                    return None;
                }
                Some(b) => o.priomap.push(b.min(255) as u8),
                None => {
                    diags.push(diag_error(
                        k,
                        format!("\"{}\" is not a band number (tc: Illegal \"priomap\" element)", k.text),
                    ));
                    return None;
                }
            },
            Mode::None => {
                diags.push(diag_error(
                    k,
                    format!(
                        "unknown ets option \"{}\"; expected bands, strict, quanta or priomap (tc: What is \"{}\"?)",
                        k.text, k.text
                    ),
                ));
                return None;
            }
        }
        i += 1;
    }
    if o.nbands == 0 {
        o.nbands = o.quanta.len() + o.nstrict;
    }
    if o.nbands == 0 {
        diags.push(TcDiag::at_pos(
            Severity::Error,
            end,
            "ets needs bands, quanta or strict (tc: One of \"bands\", \"quanta\" or \"strict\" needs to be specified)",
        ));
        return None;
    }
    if o.nstrict + o.quanta.len() > o.nbands {
        diags.push(TcDiag::at_pos(
            Severity::Error,
            end,
            format!(
                "{} strict bands and {} quanta need more than {} bands (tc: Not enough total bands to cover all the strict bands and quanta)",
                o.nstrict,
                o.quanta.len(),
                o.nbands
            ),
        ));
        return None;
    }
    if let Some(&b) = o.priomap.iter().find(|&&b| b as usize >= o.nbands) {
        let at = toks.iter().rev().find(|t| unsigned(t.text) == Some(b as u32)).copied();
        let msg =
            format!("priomap names band {b}, but there are {} (tc: \"priomap\" element is out of bounds)", o.nbands);
        match at {
            Some(t) => diags.push(diag_error(t, msg)),
            None => diags.push(TcDiag::at_pos(Severity::Error, end, msg)),
        }
        return None;
    }
    Some(o)
}

/// `ets_parse_copt`: `quantum Q` (or nothing).
fn parse_class_quantum(
    toks: &[Tok<'_>],
    end: (u32, u32),
    diags: &mut Vec<TcDiag>,
) -> Result<Option<(u32, Tok<'static>)>, ()> {
    let mut q = None;
    let mut i = 0;
    while let Some(&k) = toks.get(i) {
        if k.text == "quantum" {
            if q.is_some() {
                diags.push(diag_error(k, "\"quantum\" is given twice (tc: Duplicate \"quantum\")"));
                return Err(());
            }
            let Some(&v) = toks.get(i + 1) else {
                diags.push(TcDiag::at_pos(
                    Severity::Error,
                    end,
                    "a value is missing after \"quantum\" (tc: Command line is incomplete)",
                ));
                return Err(());
            };
            match unsigned(v.text) {
                Some(0) => {
                    diags.push(diag_error(v, "a quantum must be > 0 (tc: \"quanta\" must be > 0)"));
                    return Err(());
                }
                Some(n) => q = Some((n, Tok { text: "quantum", line: k.line, col: k.col })),
                None => {
                    diags.push(diag_error(
                        v,
                        format!("\"{}\" is not a quantum in bytes (tc: Illegal \"quanta\" element)", v.text),
                    ));
                    return Err(());
                }
            }
            i += 2;
        } else {
            diags.push(diag_error(
                k,
                format!("unknown ets class option \"{}\"; expected quantum (tc: What is \"{}\"?)", k.text, k.text),
            ));
            return Err(());
        }
    }
    Ok(q)
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let o = parse_opts(&d.opts, d.end, diags)?;
    // Unless overridden, traffic goes to the last band; bands without a quantum get the MTU.
    let mut priomap = [(o.nbands - 1) as u8; PRIO_MAX + 1];
    priomap[..o.priomap.len()].copy_from_slice(&o.priomap);
    let major = d.handle.major();
    let mut bands: Vec<Band> = (0..o.nbands)
        .map(|i| {
            let quantum =
                if i < o.nstrict { 0 } else { clamp_quantum(o.quanta.get(i - o.nstrict).copied().unwrap_or(cx.mtu)) };
            Band {
                child: default_child(cx, Handle::new(major, i as u16 + 1)),
                leaf: Handle::UNSPEC,
                quantum,
                deficit: 0,
                active: false,
                stats: QdiscStats::default(),
            }
        })
        .collect();
    for c in &d.classes {
        let band = c.classid.minor() as usize;
        if c.classid.major() != major || band == 0 || band > o.nbands {
            diags.push(diag_error(
                c.at,
                format!(
                    "ets {} has classes {major:x}:1..{major:x}:{:x}; classes cannot be added (the kernel: Fine-grained class addition and removal is not supported)",
                    d.handle, o.nbands
                ),
            ));
            continue;
        }
        let Ok(q) = parse_class_quantum(&c.opts, c.end, diags) else { continue };
        if let Some((q, at)) = q {
            if band <= o.nstrict {
                diags.push(diag_error(
                    Tok { text: at.text, line: at.line, col: at.col },
                    format!("{} is a strict band: strict bands do not have a configurable quantum (the kernel: Invalid argument)", c.classid),
                ));
                continue;
            }
            bands[band - 1].quantum = clamp_quantum(q);
        }
    }
    for g in d.grafts {
        let band = g.classid.minor() as usize;
        if g.classid.major() != major || band == 0 || band > o.nbands {
            diags.push(diag_error(g.at, format!("ets {} has no class {}", d.handle, g.classid)));
            continue;
        }
        bands[band - 1].leaf = g.qdisc.reports()[0].handle;
        bands[band - 1].child = g.qdisc;
    }
    let mut filters = d.filters;
    for f in &filters {
        if f.parent != d.handle {
            diags.push(filter_diag(
                f,
                Severity::Error,
                format!("ets takes filters on the qdisc only (parent {}), not on class {}: the kernel answers \"ETS classid must be zero\"", d.handle, f.parent),
            ));
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    sort_filters(&mut filters);
    Some(QdiscImpl::Ets(Box::new(Ets {
        handle: d.handle,
        nstrict: o.nstrict,
        priomap,
        active: VecDeque::with_capacity(bands.len()),
        bands,
        filters,
        stash: None,
        stats: QdiscStats::default(),
    })))
}

impl Ets {
    /// `ets_classify`: the band index; None when a filter's action shot the packet.
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<usize> {
        let key = cx.key(pkt);
        let mut band = key.priority;
        if band & 0xFFFF_0000 != self.handle.0 {
            match classify_at(&self.filters, self.handle, key, cx.pkts.get(pkt).ip_len, now) {
                Verdict::Class(res) => band = res.0,
                Verdict::Shot => return None,
                Verdict::Miss => {
                    if band & 0xFFFF_0000 != 0 {
                        band = 0;
                    }
                    return Some(self.priomap[band as usize & PRIO_MAX] as usize);
                }
            }
        }
        let b = (band & 0xFFFF).wrapping_sub(1) as usize;
        if b >= self.bands.len() {
            return Some(self.priomap[0] as usize);
        }
        Some(b)
    }

    fn deactivate_head(&mut self) {
        if let Some(i) = self.active.pop_front() {
            self.bands[i].active = false;
        }
    }

    /// `ets_qdisc_dequeue`.
    fn ets_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        for b in &mut self.bands[..self.nstrict] {
            let mark = cx.mark();
            let p = b.child.dequeue(cx, now);
            b.stats.after_dequeue(p, cx, mark);
            if p.is_some() {
                return p;
            }
        }
        loop {
            let &i = self.active.front()?;
            let b = &mut self.bands[i];
            let mark = cx.mark();
            let head = b.child.peek(cx, now);
            b.stats.after_dequeue(None, cx, mark);
            let Some(p) = head else {
                // A shaping child stalls the bands behind it; one whose AQM dropped its last
                // packets has left the list (qlen_notify).
                if b.child.stats().qlen == 0 {
                    self.deactivate_head();
                }
                return None;
            };
            let len = cx.len(p);
            if len <= b.deficit {
                b.deficit -= len;
                let mark = cx.mark();
                let out = b.child.dequeue(cx, now);
                b.stats.after_dequeue(out, cx, mark);
                if b.child.stats().qlen == 0 {
                    self.deactivate_head();
                }
                return out;
            }
            b.deficit = b.deficit.wrapping_add(b.quantum);
            self.active.rotate_left(1);
        }
    }
}

impl StashPeek for Ets {
    const LEAF: bool = false;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.ets_dequeue(cx, now)
    }
}

impl Qdisc for Ets {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let Some(i) = self.classify(cx, pkt, now) else {
            cx.drop(pkt);
            self.stats.after_enqueue(pkt, Enq::Dropped, cx, mark);
            return Enq::Dropped;
        };
        let strict = i < self.nstrict;
        let b = &mut self.bands[i];
        let cmark = cx.mark();
        let res = b.child.enqueue(pkt, cx, now);
        b.stats.after_enqueue(pkt, res, cx, cmark);
        if res != Enq::Dropped && !b.active && !strict {
            b.active = true;
            b.deficit = b.quantum;
            self.active.push_back(i);
        }
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.dequeue_stashed(cx, now)
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.peek_stashed(cx, now)
    }

    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        if self.stash.is_some() {
            return Some(now);
        }
        self.bands.iter().filter(|b| b.stats.qlen > 0).filter_map(|b| pending_wakeup(&b.child, now)).min()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().for_each(|&p| f(p));
        for b in &self.bands {
            b.child.for_each_queued(f);
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let major = self.handle.major();
        let mut options = format!("bands {} ", self.bands.len());
        if self.nstrict > 0 {
            let _ = write!(options, "strict {} ", self.nstrict);
        }
        if self.bands.len() > self.nstrict {
            options.push_str("quanta");
            for b in &self.bands[self.nstrict..] {
                let _ = write!(options, " {}", b.quantum);
            }
            options.push(' ');
        }
        options.push_str("priomap");
        for p in self.priomap {
            let _ = write!(options, " {p}");
        }
        let classes = self
            .bands
            .iter()
            .enumerate()
            .map(|(i, b)| ClassReport {
                kind: "ets",
                classid: Handle::new(major, i as u16 + 1),
                parent: Handle::ROOT,
                leaf: (b.leaf != Handle::UNSPEC).then_some(b.leaf),
                options: if i < self.nstrict { String::new() } else { format!("quantum {}", b.quantum) },
                stats: b.stats,
                xstats: vec![],
                xstats_text: String::new(),
            })
            .collect();
        out.push(QdiscReport {
            kind: "ets",
            handle: self.handle,
            parent,
            options,
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes,
        });
        for (i, b) in self.bands.iter().enumerate() {
            b.child.report(Handle::new(major, i as u16 + 1), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
    use crate::qdisc::testutil::{ab_order, build, build_ok, class, jain, qdisc, run_link, Bench, Source};

    fn by_sport(flow: u16, minor: u16) -> Filter {
        Filter {
            parent: Handle::new(1, 0),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys: vec![U32Key::from_field(20, 2, 40000 + flow as u32, 0xffff)] },
            classid: Handle::new(1, minor),
            line: 20 + flow as u32,
            police: None,
        }
    }

    /// ets 1: OPTS with bench flow i filtered to band i + 1.
    fn ets(opts: &str, flows: u16) -> QdiscDecl<'static> {
        let mut d = qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: ets {opts}"));
        d.filters = (0..flows).map(|f| by_sport(f, f + 1)).collect();
        d
    }

    fn saturate(q: &mut QdiscImpl, rates: &[u64], secs: u64) -> Vec<f64> {
        let mut b = Bench::new(rates.len());
        let srcs: Vec<_> = rates
            .iter()
            .enumerate()
            .map(|(f, &r)| Source {
                flow: f as u32,
                rate_bps: r,
                ip_len: 1500,
                start: Nanos::ZERO,
                stop: Nanos::from_secs(secs),
            })
            .collect();
        let r = run_link(q, &mut b, &srcs, 10_000_000, Nanos::from_secs(secs), Nanos::from_secs(1));
        for rep in q.reports() {
            assert!(rep.stats.identity_holds(), "{rep:?}");
        }
        (0..rates.len()).map(|f| r.rate_bps(f, (secs - 1) as f64)).collect()
    }

    #[test]
    fn quanta_set_the_shares() {
        // quanta 3000 1514 1514 (bytes): 2:1:1 of the link under saturation.
        let mut q = build_ok(ets("quanta 3028 1514 1514", 3));
        let s = saturate(&mut q, &[20_000_000; 3], 4);
        for (x, want) in s.iter().zip([5e6, 2.5e6, 2.5e6]) {
            assert!((x - want).abs() < 0.02 * want, "{s:?}");
        }
        // Equal default quanta (the MTU): fair.
        let mut q = build_ok(ets("bands 4", 4));
        let s = saturate(&mut q, &[20_000_000; 4], 3);
        assert!(jain(&s) > 0.99, "{s:?}");
    }

    #[test]
    fn strict_bands_go_first_in_order() {
        // bands 3 strict 2: band 1 starves band 2, which starves band 3, and the DRR band only
        // gets what is left.
        let mut q = build_ok(ets("bands 3 strict 2", 3));
        let s = saturate(&mut q, &[4_000_000, 20_000_000, 20_000_000], 3);
        assert!((s[0] - 4e6).abs() < 0.01 * 4e6 && (s[1] - 6e6).abs() < 0.01 * 6e6 && s[2] < 1e4, "{s:?}");
        let mut q = build_ok(ets("strict 1 quanta 1514", 2));
        let mut b = Bench::new(2);
        for _ in 0..3 {
            for f in [1, 0] {
                let p = b.pkt(f, 100);
                q.enqueue(p, &mut b.cx(), Nanos(0));
            }
        }
        assert_eq!(ab_order(&mut q, &mut b, 6), "AAABBB");
    }

    #[test]
    fn classification_and_priomap() {
        // No filters: priomap by the low bits of skb->priority (default: all to the last band).
        let mut q = build_ok(ets("bands 3 priomap 0 1 2", 0));
        let mut b = Bench::new(4);
        b.keys[0].priority = 0; // priomap[0] = band 0
        b.keys[1].priority = 2; // band 2
        b.keys[2].priority = 0x0001_0002; // 1:2 names band 1 directly
        b.keys[3].priority = 7; // priomap default: last band
        for f in 0..4 {
            let p = b.pkt(f, 100);
            q.enqueue(p, &mut b.cx(), Nanos(0));
        }
        let qlens: Vec<u64> = q.reports()[0].classes.iter().map(|c| c.stats.qlen).collect();
        assert_eq!(qlens, vec![1, 1, 2]);
    }

    #[test]
    fn tc_text_errors_and_class_changes() {
        let mut d = ets("bands 4 strict 1 quanta 3000 2000", 0);
        d.classes.push(class(2, "tc class change dev eth0 parent 1: classid 1:4 ets quantum 500"));
        let q = build_ok(d);
        let r = q.reports();
        assert_eq!(r[0].options, "bands 4 strict 1 quanta 3000 2000 500 priomap 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3");
        let opts: Vec<&str> = r[0].classes.iter().map(|c| c.options.as_str()).collect();
        assert_eq!(opts, vec!["", "quantum 3000", "quantum 2000", "quantum 500"]);
        assert_eq!((r[0].classes[0].parent, r.len()), (Handle::ROOT, 5));
        // The kernel's clamp (Debian 6.1.0-56 printed these: corpus script 125).
        let q = build_ok(ets("quanta 100 2000000 1514", 0));
        assert!(q.reports()[0].options.starts_with("bands 3 quanta 256 1048576 1514 "));
        for (opts, needle) in [
            ("", "needs bands"),
            ("bands 17", "must be <= 16"),
            ("bands 2 quanta 1 2 3", "Not enough total bands"),
            ("quanta 0", "must be > 0"),
            ("bands 2 priomap 0 2", "out of bounds"),
            ("bands 2 bands 3", "Duplicate"),
            ("bands 2 weight 1", "What is"),
        ] {
            let (q, diags) = build(qdisc(1, &format!("tc qdisc add dev eth0 root handle 1: ets {opts}")));
            assert!(q.is_none() && diags[0].message.contains(needle), "{opts}: {diags:?}");
        }
        let mut d = ets("bands 2 strict 1", 0);
        d.classes.push(class(2, "tc class change dev eth0 parent 1: classid 1:1 ets quantum 500"));
        let (q, diags) = build(d);
        assert!(q.is_none() && diags[0].message.contains("strict band") && diags[0].token == "quantum", "{diags:?}");
        let mut d = ets("bands 2", 0);
        d.classes.push(class(2, "tc class add dev eth0 parent 1: classid 1:3 ets quantum 500"));
        let (q, diags) = build(d);
        assert!(q.is_none() && diags[0].message.contains("Fine-grained"), "{diags:?}");
    }
}
