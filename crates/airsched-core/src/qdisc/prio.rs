//! prio, the strict-priority band scheduler (Linux `net/sched/sch_prio.c`, classification
//! unchanged since 3.x through 6.x; iproute2 `tc/q_prio.c`).
//!
//! `bands` classes M:1..M:bands are created with the qdisc, each with a default pfifo child of
//! txqueuelen packets; any qdisc can be grafted on them (`tc qdisc add parent 1:1 ... tbf`).
//! A packet's band (reference 2.2): if the major of skb->priority is the qdisc's handle, band =
//! minor - 1; otherwise the filters attached to the qdisc decide (band = minor(flowid) - 1), and
//! without a match `priomap[priority & 15]` (a priority with a non-zero major counts as 0).
//! A band outside 0..bands (minor 0 or above bands) falls back to `priomap[0]`.
//! Dequeue scans the bands from 0 and hands out the first packet a child gives: a shaping child
//! (TBF) that holds its packets lets lower bands send. prio never delays by itself; its
//! `next_wakeup` is the earliest of its children's.
//! Deviations: filter actions (`action drop`, ...) are not part of airsched's filters; tc's
//! `multiqueue` flag is accepted with a warning and ignored.

use super::classify::{classify_at, sort_filters, Verdict};
use super::common::{filter_diag, pending_wakeup};
use super::tbf::child_handle;
use super::{
    default_child, diag_error, BuildCx, ClassReport, Enq, Filter, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl,
    QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::time::Nanos;

/// TCQ_PRIO_BANDS.
pub const MAX_BANDS: usize = 16;
/// TCQ_MIN_PRIO_BANDS.
pub const MIN_BANDS: usize = 2;
/// tc's default priomap (the same as pfifo_fast's prio2band).
pub const DEFAULT_PRIOMAP: [u8; 16] = super::pfifo_fast::PRIO2BAND;

pub struct Prio {
    handle: Handle,
    priomap: [u8; 16],
    /// One child per band, band 0 first.
    children: Vec<QdiscImpl>,
    /// Filters attached to this qdisc, in the order they run.
    filters: Vec<Filter>,
    stats: QdiscStats,
}

impl Prio {
    #[cfg(test)]
    pub fn bands(&self) -> usize {
        self.children.len()
    }

    /// The statistics of band `i`'s child (what `tc -s class show` prints for class M:i+1).
    #[cfg(test)]
    pub fn band_stats(&self, i: usize) -> QdiscStats {
        self.children[i].stats()
    }

    /// prio_classify: the band of a packet (reference 2.2).
    /// None: a filter's action dropped the packet.
    pub fn classify(&self, cx: &QCtx<'_>, pkt: PacketId, now: Nanos) -> Option<usize> {
        let key = cx.key(pkt);
        let prio = key.priority;
        let bands = self.children.len() as u32;
        let minor = if self.handle != Handle::UNSPEC && Handle(prio).qdisc() == self.handle {
            prio & 0xFFFF
        } else {
            match classify_at(&self.filters, self.handle, key, cx.pkts.get(pkt).ip_len, now) {
                Verdict::Class(classid) => classid.minor() as u32,
                Verdict::Shot => return None,
                Verdict::Miss => {
                    let p = if prio >> 16 != 0 { 0 } else { prio };
                    return Some(self.priomap[(p & 15) as usize] as usize);
                }
            }
        };
        // TC_H_MIN(band) - 1 in u32: minor 0 wraps and falls back too.
        let band = minor.wrapping_sub(1);
        Some(if band >= bands { self.priomap[0] as usize } else { band as usize })
    }
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let mut p = super::opt_parser(&d.opts, d.end, diags);
    let mut bands: usize = 3;
    let mut bands_tok: Option<Tok<'_>> = None;
    let mut priomap = DEFAULT_PRIOMAP;
    // Where each priomap entry was given (None: tc's default stays).
    let mut given: [Option<Tok<'_>>; 16] = [None; 16];
    let mut pmap_mode = false;
    let mut idx = 0usize;
    while let Some(k) = p.next() {
        match k.text {
            "bands" => {
                if let Some(n) = p.uint(k, MIN_BANDS as u64, MAX_BANDS as u64) {
                    bands = n as usize;
                    bands_tok = Some(k);
                }
            }
            "priomap" => {
                if pmap_mode {
                    p.error(k, "duplicate priomap (tc refuses it)");
                    break;
                }
                pmap_mode = true;
            }
            "multiqueue" => p.warn(k, "multiqueue is accepted but not modelled: airsched's devices have one queue"),
            w if pmap_mode => {
                let Ok(band) = w.parse::<u32>() else {
                    p.error(k, format!("\"{w}\" is neither a priomap element (a band number) nor a prio option (bands, priomap, multiqueue)"));
                    break;
                };
                // tc checks each element against the bands given so far.
                if band as usize >= bands {
                    p.error(
                        k,
                        format!(
                            "priomap element {band} is out of bands: bands are 0..{} with bands {bands}",
                            bands - 1
                        ),
                    );
                    break;
                }
                if idx >= 16 {
                    p.error(k, "priomap has more than 16 elements (priorities 0..15; tc: index > TC_PRIO_MAX)");
                    break;
                }
                priomap[idx] = band as u8;
                given[idx] = Some(k);
                idx += 1;
            }
            _ => {
                p.unknown(k, "prio", &["bands", "priomap", "multiqueue"]);
                break;
            }
        }
    }
    if p.has_errors() {
        return None;
    }
    // The kernel (prio_tune) refuses any entry >= bands, including tc's defaults left in place.
    for (i, &b) in priomap.iter().enumerate() {
        if (b as usize) < bands {
            continue;
        }
        match given[i] {
            Some(t) => p.error(
                t,
                format!("priomap entry for priority {i} is band {b}, not below bands {bands}: the kernel refuses it (EINVAL)"),
            ),
            None => {
                let msg = format!(
                    "with bands {bands}, tc's default priomap entry for priority {i} (band {b}) is out of range and the \
                     kernel refuses it (EINVAL): give a priomap of 16 bands below {bands}"
                );
                match bands_tok {
                    Some(t) => p.error(t, msg),
                    None => p.error_at_end(msg),
                }
            }
        }
        break;
    }
    let ok = !p.has_errors();

    let major = d.handle.major();
    let mut ok = ok;
    for c in &d.classes {
        diags.push(diag_error(
            c.at,
            format!(
                "prio creates its classes {}1..{}{:x} itself; tc class add is not supported (EOPNOTSUPP)",
                d.handle, d.handle, bands
            ),
        ));
        ok = false;
    }
    let mut filters = Vec::with_capacity(d.filters.len());
    for f in d.filters {
        if f.parent.minor() != 0 {
            diags.push(filter_diag(
                &f,
                Severity::Error,
                format!("prio takes filters only on the qdisc ({}), not on its class {}", d.handle, f.parent),
            ));
            ok = false;
        } else {
            filters.push(f);
        }
    }
    sort_filters(&mut filters);
    let mut slots: Vec<Option<QdiscImpl>> = (0..bands).map(|_| None).collect();
    for g in d.grafts {
        let minor = g.classid.minor() as usize;
        if (d.handle != Handle::UNSPEC && g.classid.major() != major) || minor == 0 || minor > bands {
            diags.push(diag_error(
                g.at,
                format!(
                    "prio {} has classes {}1..{}{:x}: there is no class {}",
                    d.handle, d.handle, d.handle, bands, g.classid
                ),
            ));
            ok = false;
        } else if slots[minor - 1].is_some() {
            diags.push(diag_error(g.at, format!("class {} already has a grafted qdisc", g.classid)));
            ok = false;
        } else {
            slots[minor - 1] = Some(g.qdisc);
        }
    }
    if !ok {
        return None;
    }
    let children = slots
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.unwrap_or_else(|| default_child(cx, Handle::new(major, i as u16 + 1))))
        .collect();
    Some(QdiscImpl::Prio(Prio { handle: d.handle, priomap, children, filters, stats: QdiscStats::default() }))
}

impl Qdisc for Prio {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = match self.classify(cx, pkt, now) {
            Some(band) => self.children[band].enqueue(pkt, cx, now),
            None => {
                cx.drop(pkt);
                Enq::Dropped
            }
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        let out = self.children.iter_mut().find_map(|c| c.dequeue(cx, now));
        self.stats.after_dequeue(out, cx, mark);
        out
    }

    fn peek(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        let out = self.children.iter_mut().find_map(|c| c.peek(cx, now));
        // Children that drop while peeking (AQM stashes) made their packets leave.
        self.stats.after_dequeue(None, cx, mark);
        out
    }

    fn next_wakeup(&self, now: Nanos) -> Option<Nanos> {
        self.children.iter().filter_map(|c| pending_wakeup(c, now)).min()
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        for c in &self.children {
            c.for_each_queued(f);
        }
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let map: Vec<String> = self.priomap.iter().map(|b| b.to_string()).collect();
        let major = self.handle.major();
        let classes = self
            .children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let leaf = child_handle(c);
                ClassReport {
                    kind: "prio",
                    classid: Handle::new(major, i as u16 + 1),
                    parent: self.handle,
                    leaf: (leaf != Handle::UNSPEC).then_some(leaf),
                    options: String::new(),
                    stats: c.stats(),
                    xstats: vec![],
                    xstats_text: String::new(),
                }
            })
            .collect();
        out.push(QdiscReport {
            kind: "prio",
            handle: self.handle,
            parent,
            options: format!("bands {} priomap {}", self.children.len(), map.join(" ")),
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes,
        });
        for (i, c) in self.children.iter().enumerate() {
            c.report(Handle::new(major, i as u16 + 1), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::classify::{FilterKind, U32Key, ETH_P_IP};
    use crate::qdisc::testutil::{build_err, build_full, build_opts_ok, graft, run_link, word_col, Bench, Source};

    fn prio(q: &QdiscImpl) -> &Prio {
        match q {
            QdiscImpl::Prio(p) => p,
            _ => panic!("not prio"),
        }
    }

    fn src(flow: u32, rate_bps: u64, secs: u64) -> Source {
        Source { flow, rate_bps, ip_len: 1000, start: Nanos::ZERO, stop: Nanos::from_secs(secs) }
    }

    fn assert_identity(q: &QdiscImpl) {
        for r in q.reports() {
            assert!(r.stats.identity_holds(), "{} {}: {:?}", r.kind, r.handle, r.stats);
            for c in &r.classes {
                assert!(c.stats.identity_holds(), "class {}: {:?}", c.classid, c.stats);
            }
        }
    }

    #[test]
    fn band_0_saturated_starves_band_1_entirely() {
        let mut b = Bench::new(2);
        b.keys[0].priority = 6; // band 0
        b.keys[1].priority = 0; // band 1
        let mut q = build_opts_ok("prio", Handle::new(1, 0), "");
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 12_000_000, 3), src(1, 4_000_000, 3)],
            10_000_000,
            Nanos::from_secs(3),
            Nanos::from_secs(1),
        );
        assert_eq!(r.bytes[1], 0, "band 1 must not send while band 0 is backlogged");
        let rate0 = r.rate_bps(0, 2.0);
        assert!((rate0 - 10e6).abs() / 10e6 < 0.01, "band 0 rate {rate0}");
        let p = prio(&q);
        assert!(p.band_stats(1).drops > 0 && p.band_stats(1).sent_packets < 20);
        assert_identity(&q);
    }

    #[test]
    fn a_tbf_on_band_0_limits_it_and_band_1_gets_the_rest() {
        // Yip & Kwok style: a shaper per band. Band 0 limited to 2 Mbit/s on a 10 Mbit/s link.
        let tbf = build_opts_ok("tbf", Handle::new(0x10, 0), "rate 2mbit burst 10k latency 50ms");
        let (q, diags) = build_full(
            "prio",
            Handle::new(1, 0),
            "",
            vec![graft(Handle::new(1, 1), tbf)],
            vec![],
            &BuildCx::for_tests(),
        );
        assert!(diags.is_empty(), "{diags:?}");
        let mut q = q.unwrap();
        let mut b = Bench::new(2);
        b.keys[0].priority = 6;
        b.keys[1].priority = 0;
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 6_000_000, 6), src(1, 12_000_000, 6)],
            10_000_000,
            Nanos::from_secs(6),
            Nanos::from_secs(1),
        );
        let (r0, r1) = (r.rate_bps(0, 5.0), r.rate_bps(1, 5.0));
        assert!((r0 - 2e6).abs() / 2e6 < 0.01, "band 0 (TBF 2mbit) got {r0}");
        assert!((r1 - 8e6).abs() / 8e6 < 0.01, "band 1 gets the rest: {r1}");
        assert_identity(&q);
        // The report lists prio, its three classes, the TBF under 1:1 with its bfifo, and the
        // default pfifos of 1:2 and 1:3.
        let reps = q.reports();
        let kinds: Vec<_> = reps.iter().map(|r| (r.kind, r.parent)).collect();
        assert_eq!(
            kinds,
            vec![
                ("prio", Handle::ROOT),
                ("tbf", Handle::new(1, 1)),
                ("bfifo", Handle::new(0x10, 1)),
                ("pfifo", Handle::new(1, 2)),
                ("pfifo", Handle::new(1, 3)),
            ]
        );
        assert_eq!(reps[0].classes[0].leaf, Some(Handle::new(0x10, 0)));
        assert_eq!(reps[0].classes[1].leaf, None, "default children have handle 0");
        assert!(reps[1].stats.overlimits > 0);
    }

    #[test]
    fn next_wakeup_is_the_earliest_child_wakeup() {
        let t1 = build_opts_ok("tbf", Handle::new(10, 0), "rate 1mbit burst 1514 limit 100k");
        let t2 = build_opts_ok("tbf", Handle::new(20, 0), "rate 2mbit burst 1514 limit 100k");
        let (q, _) = build_full(
            "prio",
            Handle::new(1, 0),
            "bands 2 priomap 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
            vec![graft(Handle::new(1, 1), t1), graft(Handle::new(1, 2), t2)],
            vec![],
            &BuildCx::for_tests(),
        );
        let mut q = q.unwrap();
        let mut b = Bench::new(2);
        b.keys[0].priority = 0; // band 0
        b.keys[1].priority = 1; // band 1
        let pk: Vec<_> = (0..4).map(|i| b.pkt(i % 2, 1500)).collect();
        for &x in &pk {
            q.enqueue(x, &mut b.cx(), Nanos(0));
        }
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(0)), Some(pk[0]), "band 0 first");
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(0)), Some(pk[1]), "band 0 throttled: band 1 sends");
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(0)), None);
        // Band 0 refills 1514 B at 1 Mbit/s in 12.112 ms, band 1 at 2 Mbit/s in 6.056 ms.
        assert_eq!(q.next_wakeup(Nanos(0)), Some(Nanos(6_056_000)));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(6_056_000)), Some(pk[3]));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(6_056_000)), None);
        assert_eq!(q.next_wakeup(Nanos(6_056_000)), Some(Nanos(12_112_000)));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(12_112_000)), Some(pk[2]));
        assert_eq!(q.next_wakeup(Nanos(12_112_000)), None);
        assert_identity(&q);
    }

    #[test]
    fn classification_priority_shortcut_filters_priomap_and_fallback() {
        let filt = |sport: u32, prio: u32, minor: u16| Filter {
            parent: Handle::new(1, 0),
            prio,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys: vec![U32Key::from_field(20, 2, sport, 0xffff)] },
            classid: Handle::new(1, minor),
            line: 3,
            police: None,
        };
        // Flows: sport 40000+i.
        let filters = vec![filt(40001, 10, 3), filt(40002, 10, 9), filt(40003, 10, 0), filt(40001, 5, 2)];
        let (q, diags) = build_full(
            "prio",
            Handle::new(1, 0),
            "bands 4 priomap 3 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1",
            vec![],
            filters,
            &BuildCx::for_tests(),
        );
        assert!(diags.is_empty(), "{diags:?}");
        let q = q.unwrap();
        let p = prio(&q);
        let mut b = Bench::new(6);
        b.keys[0].priority = 6; // no filter: priomap[6] = 0
        b.keys[1].priority = 6; // filter prio 5 (before prio 10) says 1:2: band 1
        b.keys[2].priority = 6; // flowid 1:9 >= bands: priomap[0] = 3
        b.keys[3].priority = 6; // flowid 1:0: minor 0 wraps: priomap[0] = 3
        b.keys[4].priority = 0x1_0003; // major == handle: band minor - 1 = 2, filters skipped
        b.keys[5].priority = 0x2_0006; // other major, no filter: treated as 0: priomap[0] = 3
        let want = [0, 1, 3, 3, 2, 3];
        for (f, &w) in want.iter().enumerate() {
            let id = b.pkt(f as u32, 100);
            assert_eq!(p.classify(&b.cx(), id, Nanos::ZERO), Some(w), "flow {f}");
        }
        // The priority shortcut also applies out of range: 1:7 -> priomap[0].
        b.keys[4].priority = 0x1_0007;
        let id = b.pkt(4, 100);
        assert_eq!(p.classify(&b.cx(), id, Nanos::ZERO), Some(3));
    }

    #[test]
    fn filters_choose_the_band_on_a_link() {
        let f = Filter {
            parent: Handle::new(1, 0),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::U32 { keys: vec![U32Key::from_field(20, 2, 40001, 0xffff)] },
            classid: Handle::new(1, 1),
            line: 2,
            police: None,
        };
        let (q, _) = build_full("prio", Handle::new(1, 0), "", vec![], vec![f], &BuildCx::for_tests());
        let mut q = q.unwrap();
        let mut b = Bench::new(2); // both priority 0: band 1 by priomap
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 8_000_000, 2), src(1, 8_000_000, 2)],
            10_000_000,
            Nanos::from_secs(2),
            Nanos::from_ms(500),
        );
        // Flow 1 is lifted into band 0 by the filter and gets its full 8 Mbit/s.
        let r1 = r.rate_bps(1, 1.5);
        assert!((r1 - 8e6).abs() / 8e6 < 0.01, "{r1}");
        assert_eq!(r.drops[1], 0);
        let p = prio(&q);
        assert_eq!(p.band_stats(0).sent_packets, r.departures.iter().filter(|d| d.1 == 1).count() as u64);
        assert!(p.band_stats(1).drops > 0);
        assert_eq!(p.band_stats(2).offered_packets, 0);
        assert_identity(&q);
    }

    #[test]
    fn priomap_validation_errors_with_positions() {
        // An element >= bands, as tc checks it (against the bands given so far).
        let o = "bands 3 priomap 1 2 3 0";
        let e = build_err("prio", o);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].token.as_str(), e[0].col), ("3", word_col("prio", o, 5)));
        assert!(e[0].message.contains("out of bands"), "{}", e[0]);

        // bands 2 with tc's default map: entry 1 is band 2: the kernel's EINVAL, at "bands".
        let o = "bands 2";
        let e = build_err("prio", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("bands", word_col("prio", o, 0)));
        assert!(e[0].message.contains("priority 1") && e[0].message.contains("EINVAL"), "{}", e[0]);

        // A short priomap keeps tc's defaults for the rest: same check.
        let o = "bands 2 priomap 0 1 1";
        let e = build_err("prio", o);
        assert!(e[0].message.contains("priority 3"), "{}", e[0]);

        // bands reduced after the priomap: tc let it pass, the kernel refuses the element.
        let o = "priomap 2 1 1 1 1 1 0 0 1 1 1 1 1 1 1 1 bands 2";
        let e = build_err("prio", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("2", word_col("prio", o, 1)));

        // 17 elements.
        let o = "priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1 1";
        let e = build_err("prio", o);
        assert_eq!(e[0].col, word_col("prio", o, 17));
        assert!(e[0].message.contains("more than 16"));

        // bands out of 2..16.
        for (o, tok) in [("bands 1", "1"), ("bands 17", "17")] {
            let e = build_err("prio", o);
            assert_eq!((e[0].token.as_str(), e[0].col), (tok, word_col("prio", o, 1)));
        }
        let o = "bands 4 weight 2";
        let e = build_err("prio", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("weight", word_col("prio", o, 2)));
        assert!(e[0].message.contains("expected one of: bands, priomap"), "{}", e[0]);

        // A valid 2-band map.
        let q = build_opts_ok("prio", Handle::new(1, 0), "bands 2 priomap 1 1 1 1 1 1 0 0 1 1 1 1 1 1 1 1");
        assert_eq!(prio(&q).bands(), 2);
        assert_eq!(q.reports()[0].options, "bands 2 priomap 1 1 1 1 1 1 0 0 1 1 1 1 1 1 1 1");
        let q = build_opts_ok("prio", Handle::new(1, 0), "");
        assert_eq!(q.reports()[0].options, "bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1");
        assert_eq!(q.reports().len(), 4, "prio + three default pfifos");
    }

    #[test]
    fn grafts_and_filters_on_missing_classes_are_errors() {
        let t = build_opts_ok("tbf", Handle::new(10, 0), "rate 1mbit burst 10k limit 10k");
        let (q, diags) =
            build_full("prio", Handle::new(1, 0), "", vec![graft(Handle::new(1, 4), t)], vec![], &BuildCx::for_tests());
        assert!(q.is_none());
        assert!(diags[0].message.contains("no class 1:4"), "{}", diags[0]);
        let f = Filter {
            parent: Handle::new(1, 1),
            prio: 1,
            protocol: ETH_P_IP,
            kind: FilterKind::MatchAll,
            classid: Handle::new(1, 1),
            line: 4,
            police: None,
        };
        let (q, diags) = build_full("prio", Handle::new(1, 0), "", vec![], vec![f], &BuildCx::for_tests());
        assert!(q.is_none());
        assert_eq!(diags[0].line, 4);
        assert!(diags[0].message.contains("only on the qdisc"), "{}", diags[0]);
    }
}
