//! drr: Deficit Round Robin over explicit classes (Linux 6.18 `net/sched/sch_drr.c`).
//! Each class has a quantum (default psched_mtu) and a child qdisc (default pfifo); backlogged
//! classes sit on an active list served with check-before-send DRR. Classification: the
//! skb->priority shortcut, then the qdisc's filters; unclassified packets are dropped (there
//! is no default class). Deviations: a class is activated whenever its child queued the
//! packet (the kernel tests NET_XMIT_SUCCESS, which differs only if an empty child answers
//! NET_XMIT_CN, which none does); `peek` dequeues into a stash (`qdisc_peek_dequeued`).

use std::collections::VecDeque;

use super::classify::{classify_at, sort_filters};
use super::common::{errors_since, filter_diag, pending_wakeup, StashPeek};
use super::{
    default_child, opt_parser, BuildCx, ClassReport, Enq, Filter, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl,
    QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag};
use crate::tc::opts::format_size;
use crate::time::Nanos;

struct DrrClass {
    classid: Handle,
    quantum: u32,
    /// Bytes the class may still send this round.
    deficit: u32,
    child: QdiscImpl,
    /// The child's handle (`leaf` in `tc class show`; none for a default pfifo).
    leaf: Handle,
    active: bool,
}

pub struct Drr {
    handle: Handle,
    /// Sorted by class id.
    classes: Vec<DrrClass>,
    /// Indices of backlogged classes; the head is served.
    active: VecDeque<usize>,
    filters: Vec<Filter>,
    stash: Option<PacketId>,
    stats: QdiscStats,
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let from = diags.len();
    let mut p = opt_parser(&d.opts, d.end, diags);
    if let Some(k) = p.next() {
        p.error(
            k,
            format!(
                "drr takes no qdisc options, got \"{}\"; quantum is a class option: tc class add ... drr quantum BYTES",
                k.text
            ),
        );
    }
    let mut classes: Vec<DrrClass> = Vec::with_capacity(d.classes.len());
    for c in &d.classes {
        if c.kind.text != "drr" {
            diags.push(super::diag_error(
                c.kind,
                format!("class kind \"{}\" does not match its qdisc drr {}", c.kind.text, d.handle),
            ));
            continue;
        }
        if c.classid.qdisc() != d.handle || c.classid.minor() == 0 {
            diags.push(super::diag_error(c.at, format!("class id {} is not a class of drr {}", c.classid, d.handle)));
            continue;
        }
        if c.parent != d.handle && c.parent != Handle::ROOT {
            let mut w = super::diag_error(
                c.at,
                format!("drr classes are flat: parent {} is ignored, as the kernel ignores it", c.parent),
            );
            w.severity = Severity::Warning;
            diags.push(w);
        }
        let mut quantum = None;
        let mut p = opt_parser(&c.opts, c.end, diags);
        while let Some(k) = p.next() {
            match k.text {
                "quantum" => {
                    let at = p.peek();
                    match p.size(k) {
                        Some(0) => p.error(at.unwrap_or(k), "Specified DRR quantum cannot be zero"),
                        Some(v) if v > u32::MAX as u64 => {
                            p.error(at.unwrap_or(k), "quantum out of range: at most 4294967295 bytes")
                        }
                        Some(v) => quantum = Some(v as u32),
                        None => {}
                    }
                }
                _ => {
                    // tc stops at the first word it does not know; so does airsched.
                    p.unknown(k, "drr class", &["quantum"]);
                    break;
                }
            }
        }
        // A class declared again is changed (tc class change): a new quantum if one is given.
        match classes.iter_mut().find(|x| x.classid == c.classid) {
            Some(existing) => existing.quantum = quantum.unwrap_or(existing.quantum),
            None => {
                let q = quantum.unwrap_or(cx.mtu);
                classes.push(DrrClass {
                    classid: c.classid,
                    quantum: q,
                    deficit: 0,
                    child: default_child(cx, c.classid),
                    leaf: Handle::UNSPEC,
                    active: false,
                });
            }
        }
    }
    for g in d.grafts {
        match classes.iter_mut().find(|x| x.classid == g.classid) {
            Some(cl) => {
                cl.leaf = g.qdisc.reports()[0].handle;
                cl.child = g.qdisc;
            }
            None => diags.push(super::diag_error(
                g.at,
                format!("drr {} has no class {} to attach a qdisc to", d.handle, g.classid),
            )),
        }
    }
    let mut filters = d.filters;
    for f in &filters {
        if f.parent != d.handle {
            diags.push(filter_diag(f, Severity::Error, format!("drr takes filters on the qdisc only (parent {}), not on class {}: the kernel answers \"DRR classid must be zero\"", d.handle, f.parent)));
        } else if !classes.iter().any(|c| c.classid == f.classid) {
            diags.push(filter_diag(
                f,
                Severity::Warning,
                format!("flowid {} names no drr class: the packets it matches are dropped", f.classid),
            ));
        }
    }
    if errors_since(diags, from) {
        return None;
    }
    classes.sort_by_key(|c| c.classid);
    sort_filters(&mut filters);
    let n = classes.len();
    Some(QdiscImpl::Drr(Drr {
        handle: d.handle,
        classes,
        active: VecDeque::with_capacity(n),
        filters,
        stash: None,
        stats: QdiscStats::default(),
    }))
}

impl Drr {
    fn find(&self, classid: Handle) -> Option<usize> {
        self.classes.binary_search_by_key(&classid, |c| c.classid).ok()
    }

    /// `drr_classify`: priority naming one of the classes, else the first matching filter's
    /// class; None (dropped) if neither names an existing class.
    fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<usize> {
        let key = cx.key(pkt);
        let prio = Handle(key.priority);
        // A kernel qdisc always has a handle (8001: and up when none is given); one declared
        // without a handle here must not take plain priorities (major 0) for its own.
        if self.handle != Handle::UNSPEC && prio.qdisc() == self.handle {
            if let Some(i) = self.find(prio) {
                return Some(i);
            }
        }
        self.find(classify_at(&self.filters, self.handle, key, cx.pkts.get(pkt).ip_len, now).class()?)
    }

    /// The class at the head of the active list leaves it (its child is empty).
    fn deactivate_head(&mut self) {
        if let Some(i) = self.active.pop_front() {
            self.classes[i].active = false;
        }
    }

    /// `drr_dequeue`: the head class sends its child's next packet if it fits the deficit;
    /// otherwise it gets another quantum and goes to the tail.
    fn drr_dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        loop {
            let &i = self.active.front()?;
            let cl = &mut self.classes[i];
            let Some(p) = cl.child.peek(cx, now) else {
                // A shaping child stalls the whole DRR until it may send. A child whose AQM
                // dropped its last packets is empty: the kernel's qlen_notify has taken the
                // class off the list, and this dequeue still returns nothing.
                if cl.child.stats().qlen == 0 {
                    self.deactivate_head();
                }
                return None;
            };
            let len = cx.len(p);
            if len <= cl.deficit {
                cl.deficit -= len;
                let out = cl.child.dequeue(cx, now);
                if cl.child.stats().qlen == 0 {
                    self.deactivate_head();
                }
                return out;
            }
            cl.deficit = cl.deficit.wrapping_add(cl.quantum);
            self.active.rotate_left(1);
        }
    }
}

impl StashPeek for Drr {
    /// Children stamp; DRR only passes packets on.
    const LEAF: bool = false;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.drr_dequeue(cx, now)
    }
}

impl Qdisc for Drr {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = match self.classify(cx, pkt, now) {
            None => {
                cx.drop(pkt);
                Enq::Dropped
            }
            Some(i) => {
                let cl = &mut self.classes[i];
                let res = cl.child.enqueue(pkt, cx, now);
                if res != Enq::Dropped && !cl.active {
                    cl.active = true;
                    cl.deficit = cl.quantum;
                    self.active.push_back(i);
                }
                res
            }
        };
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
        self.classes.iter().filter(|c| c.active).filter_map(|c| pending_wakeup(&c.child, now)).min()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.stash.iter().for_each(|&p| f(p));
        for c in &self.classes {
            c.child.for_each_queued(f);
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let classes = self
            .classes
            .iter()
            .map(|c| {
                // Counters as the kernel dumps them: sent by the class, queue and drops of its
                // child; the deficit only while backlogged.
                let stats = c.child.stats();
                let deficit = if stats.qlen > 0 { c.deficit } else { 0 };
                ClassReport {
                    kind: "drr",
                    classid: c.classid,
                    parent: Handle::ROOT,
                    leaf: (c.leaf != Handle::UNSPEC).then_some(c.leaf),
                    options: format!("quantum {}", format_size(c.quantum as u64)),
                    stats,
                    xstats: vec![("deficit".into(), deficit as i64)],
                    xstats_text: format!(" deficit {}", format_size(deficit as u64)),
                }
            })
            .collect();
        out.push(QdiscReport {
            kind: "drr",
            handle: self.handle,
            parent,
            options: String::new(),
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes,
        });
        for c in &self.classes {
            c.child.report(c.classid, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
    use crate::qdisc::testutil::{ab_order, build, build_ok, class, jain, qdisc, run_link, words, Bench, Source};
    use crate::qdisc::Graft;

    /// `tc filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip sport SPORT 0xffff
    /// flowid 1:MINOR`.
    fn by_sport(sport: u16, minor: u16, line: u32) -> Filter {
        let keys = vec![U32Key::from_field(20, 2, sport as u32, 0xffff)];
        Filter {
            parent: Handle::new(1, 0),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys },
            classid: Handle::new(1, minor),
            line,
            police: None,
        }
    }

    /// drr 1: with classes 1:1.. (quantum given per class, or default) and a filter sending
    /// bench flow i (sport 40000 + i) to class 1:(i+1).
    fn drr(quanta: &[Option<u32>]) -> QdiscDecl<'static> {
        let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: drr");
        for (i, q) in quanta.iter().enumerate() {
            let opts = q.map(|q| format!(" quantum {q}")).unwrap_or_default();
            d.classes
                .push(class(2 + i as u32, &format!("tc class add dev eth0 parent 1: classid 1:{:x} drr{opts}", i + 1)));
            d.filters.push(by_sport(40000 + i as u16, i as u16 + 1, 10 + i as u32));
        }
        d
    }

    fn saturate(q: &mut QdiscImpl, flows: u32, link: u64, secs: u64) -> Vec<f64> {
        let mut b = Bench::new(flows as usize);
        let srcs: Vec<_> = (0..flows)
            .map(|f| Source { flow: f, rate_bps: link, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(secs) })
            .collect();
        let r = run_link(q, &mut b, &srcs, link, Nanos::from_secs(secs), Nanos::from_secs(1));
        let out = (0..flows as usize).map(|f| r.rate_bps(f, (secs - 1) as f64)).collect();
        for rep in q.reports() {
            assert!(rep.stats.identity_holds(), "{rep:?}");
        }
        out
    }

    #[test]
    fn equal_classes_share_equally() {
        let mut q = build_ok(drr(&[None; 4]));
        let shares = saturate(&mut q, 4, 10_000_000, 3);
        assert!(jain(&shares) >= 0.99, "{shares:?}");
        assert!(shares.iter().all(|&s| (s - 2.5e6).abs() < 0.05 * 2.5e6), "{shares:?}");
    }

    #[test]
    fn shares_follow_the_quanta() {
        // Reference 14.7: quanta 1514 and 3028, 1514-byte frames always backlogged: per round
        // class 1:1 sends one frame and 1:2 two, so the byte shares are 1:2.
        let mut q = build_ok(drr(&[Some(1514), Some(3028)]));
        let shares = saturate(&mut q, 2, 10_000_000, 3);
        let ratio = shares[1] / shares[0];
        assert!((ratio - 2.0).abs() < 0.03 * 2.0, "{shares:?}");
        // Check before send, packet by packet: A B B A B B ...
        let mut q = build_ok(drr(&[Some(1514), Some(3028)]));
        let mut b = Bench::new(2);
        for _ in 0..6 {
            for f in 0..2 {
                let p = b.pkt(f, 1500);
                q.enqueue(p, &mut b.cx(), Nanos(0));
            }
        }
        assert_eq!(ab_order(&mut q, &mut b, 9), "ABBABBABB");
        // Class 1:2 has just spent its deficit; 1:1 holds a fresh quantum.
        let deficits: Vec<i64> = q.reports()[0].classes.iter().map(|c| c.xstats[0].1).collect();
        assert_eq!(deficits, vec![1514, 0]);
    }

    #[test]
    fn unclassified_packets_are_dropped_at_the_qdisc() {
        // Only flow 0 has a filter; flow 1 matches nothing and there is no default class.
        let mut d = drr(&[None]);
        d.classes.push(class(3, "tc class add dev eth0 parent 1: classid 1:2 drr"));
        let mut q = build_ok(d);
        let shares = saturate(&mut q, 2, 10_000_000, 2);
        assert!(shares[1] == 0.0 && shares[0] > 9.9e6, "{shares:?}");
        let r = q.reports();
        let (qd, c1, c2) = (r[0].stats, r[0].classes[0].stats, r[0].classes[1].stats);
        assert_eq!(c2.offered_packets, 0, "nothing reached class 1:2");
        // Qdisc drops = unclassified + those of the children.
        assert_eq!(qd.drops, c1.drops + (qd.offered_packets - c1.offered_packets));
        assert!(qd.offered_packets - c1.offered_packets > 1_000);
    }

    #[test]
    fn priority_names_the_class_directly() {
        let mut q = build_ok(drr(&[None, None]));
        let mut b = Bench::new(3);
        b.keys[0].priority = 0x0001_0002; // flow 0 (filtered to 1:1) forced to 1:2
        b.keys[2].priority = 0x0001_0009; // no class 1:9, no filter for flow 2: dropped
        let ps: Vec<_> = (0..3).map(|f| b.pkt(f, 100)).collect();
        let res: Vec<_> = ps.iter().map(|&p| q.enqueue(p, &mut b.cx(), Nanos(0))).collect();
        assert_eq!(res, vec![Enq::Queued, Enq::Queued, Enq::Dropped]);
        let r = q.reports();
        assert_eq!((r[0].classes[0].stats.qlen, r[0].classes[1].stats.qlen, r[0].stats.drops), (0, 2, 1));
    }

    #[test]
    fn grafted_children_and_reports() {
        let mut d = drr(&[None, Some(3000)]);
        let child = build_ok(qdisc(5, "tc qdisc add dev eth0 parent 1:1 handle 10: pfifo limit 5"));
        d.grafts.push(Graft {
            at: words(5, "tc qdisc add dev eth0 parent 1:1 handle 10: pfifo limit 5")[6],
            classid: Handle::new(1, 1),
            qdisc: child,
        });
        let mut q = build_ok(d);
        let mut b = Bench::new(2);
        for _ in 0..8 {
            let p = b.pkt(0, 986);
            q.enqueue(p, &mut b.cx(), Nanos(0));
        }
        let r = q.reports();
        assert_eq!(
            r.iter().map(|x| (x.kind, x.handle, x.parent)).collect::<Vec<_>>(),
            vec![
                ("drr", Handle::new(1, 0), Handle::ROOT),
                ("pfifo", Handle::new(0x10, 0), Handle::new(1, 1)),
                ("pfifo", Handle::UNSPEC, Handle::new(1, 2)),
            ]
        );
        let c = &r[0].classes;
        assert_eq!((c[0].leaf, c[1].leaf), (Some(Handle::new(0x10, 0)), None));
        assert_eq!((c[0].options.as_str(), c[1].options.as_str()), ("quantum 1514b", "quantum 3000b"));
        assert_eq!((c[0].parent, c[0].xstats_text.as_str()), (Handle::ROOT, " deficit 1514b"));
        // The pfifo of 1:1 holds 5 and drops 3; the drops show at the class and the qdisc.
        assert_eq!((c[0].stats.qlen, c[0].stats.drops, r[0].stats.drops, r[0].stats.qlen), (5, 3, 3, 5));
        let mut held = 0;
        q.for_each_queued(&mut |_| held += 1);
        assert_eq!(held, 5);
        // peek stashes: the packet it shows is the one dequeue returns, still counted queued.
        let p = q.peek(&mut b.cx(), Nanos(1)).unwrap();
        assert_eq!(q.stats().qlen, 5);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(2)), Some(p));
        assert!(q.reports().iter().all(|r| r.stats.identity_holds()));
    }

    #[test]
    fn codel_children_drop_inside_and_the_counts_propagate() {
        // A codel leaf under 2x overload drops at dequeue (during DRR's peek of it): the drops
        // reach the DRR counters and the identity holds at both levels.
        let mut d = drr(&[None]);
        let child = build_ok(qdisc(5, "tc qdisc add dev eth0 parent 1:1 handle 10: codel"));
        d.grafts.push(Graft {
            at: words(5, "tc qdisc add dev eth0 parent 1:1 handle 10: codel")[6],
            classid: Handle::new(1, 1),
            qdisc: child,
        });
        let mut q = build_ok(d);
        let mut b = Bench::new(1);
        let src = Source { flow: 0, rate_bps: 8_000_000, ip_len: 1500, start: Nanos::ZERO, stop: Nanos::from_secs(5) };
        let run = run_link(&mut q, &mut b, &[src], 4_000_000, Nanos::from_secs(5), Nanos::ZERO);
        let r = q.reports();
        assert!(r[1].stats.drops > 500 && r[0].stats.drops == r[1].stats.drops, "{:?} {:?}", r[0].stats, r[1].stats);
        assert_eq!(run.drops[0], r[0].stats.drops);
        assert!(r.iter().all(|x| x.stats.identity_holds()));
    }

    #[test]
    fn declaration_errors_name_the_token() {
        // Class quantum 0 and an unknown class option.
        let mut d = drr(&[None]);
        d.classes.push(class(4, "tc class add dev eth0 parent 1: classid 1:2 drr quantum 0"));
        d.classes.push(class(5, "tc class add dev eth0 parent 1: classid 1:3 drr weight 2"));
        let (q, diags) = build(d);
        assert!(q.is_none());
        let got: Vec<_> = diags.iter().map(|x| (x.line, x.col, x.token.as_str())).collect();
        assert_eq!(got, vec![(4, 57, "0"), (5, 49, "weight")]);
        assert!(diags[0].message.contains("cannot be zero") && diags[1].message.contains("quantum"));
        // A qdisc option (drr has none) and a graft onto a missing class.
        let mut d = qdisc(1, "tc qdisc add dev eth0 root handle 1: drr quantum 1514");
        let child = build_ok(qdisc(6, "tc qdisc add dev eth0 parent 1:7 handle 70: pfifo"));
        d.grafts.push(Graft {
            at: words(6, "tc qdisc add dev eth0 parent 1:7 handle 70: pfifo")[6],
            classid: Handle::new(1, 7),
            qdisc: child,
        });
        let (q, diags) = build(d);
        assert!(q.is_none());
        let got: Vec<_> = diags.iter().map(|x| (x.line, x.col, x.token.as_str())).collect();
        assert_eq!(got, vec![(1, 42, "quantum"), (6, 30, "1:7")]);
        // Filters: on a class is an error, naming no class a warning.
        let mut d = drr(&[None]);
        d.filters.push(Filter { parent: Handle::new(1, 1), ..by_sport(1, 1, 20) });
        d.filters.push(by_sport(2, 9, 21));
        let (q, diags) = build(d);
        assert!(q.is_none());
        let got: Vec<_> = diags.iter().map(|x| (x.line, x.severity)).collect();
        assert_eq!(got, vec![(20, Severity::Error), (21, Severity::Warning)]);
    }
}
