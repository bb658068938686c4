//! pfifo_fast, the historic default qdisc (Linux `net/sched/sch_generic.c`, the lockless version
//! of 4.16 and later, unchanged in behaviour through 6.x).
//!
//! Three bands, 0 the highest. A packet goes to band `prio2band[skb->priority & 15]` with the
//! fixed map `1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1`. Each band is a ring of `txqueuelen` packets
//! (since 4.16; before that the three bands shared one limit of txqueuelen), and a packet whose
//! band is full is dropped. Dequeue is strict priority: band 0 until empty, then 1, then 2.
//! Nothing is configurable; `tc` refuses options ("qdisc 'pfifo_fast' does not support option
//! parsing") and the kernel refuses a device with txqueuelen 0 (EINVAL).
//! Deviations: none; the kernel's per-CPU statistics are summed here by construction.

use std::collections::VecDeque;

use super::{diag_error, BuildCx, Enq, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl, QdiscReport, QdiscStats};
use crate::packet::PacketId;
use crate::tc::lex::TcDiag;
use crate::time::Nanos;

/// `prio2band` of sch_generic.c (the same map as prio's default priomap).
pub const PRIO2BAND: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

const BANDS: usize = 3;

pub struct PfifoFast {
    handle: Handle,
    /// Per band, in packets (the device's txqueuelen).
    limit: usize,
    bands: [VecDeque<PacketId>; BANDS],
    stats: QdiscStats,
}

impl PfifoFast {
    pub fn new(txqueuelen: u32, handle: Handle) -> PfifoFast {
        let cap = (txqueuelen as usize).min(1 << 16);
        PfifoFast {
            handle,
            limit: txqueuelen as usize,
            bands: std::array::from_fn(|_| VecDeque::with_capacity(cap)),
            stats: QdiscStats::default(),
        }
    }

    /// The band a packet of this skb->priority goes to.
    pub fn band_of(priority: u32) -> usize {
        PRIO2BAND[(priority & 15) as usize] as usize
    }

    /// Packets queued in each band.
    #[cfg(test)]
    pub fn band_lens(&self) -> [usize; BANDS] {
        std::array::from_fn(|i| self.bands[i].len())
    }
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let mut ok = true;
    if let Some(first) = d.opts.first() {
        diags.push(diag_error(
            *first,
            "pfifo_fast takes no options (tc: \"qdisc 'pfifo_fast' does not support option parsing\"); \
             its bands and priomap are fixed and its per-band limit is the device's txqueuelen",
        ));
        ok = false;
    }
    if cx.txqueuelen == 0 {
        diags.push(diag_error(
            d.kind,
            format!("{} has txqueuelen 0: the kernel refuses pfifo_fast on it (EINVAL)", cx.dev),
        ));
        ok = false;
    }
    if !ok {
        return None;
    }
    Some(QdiscImpl::PfifoFast(PfifoFast::new(cx.txqueuelen, d.handle)))
}

impl Qdisc for PfifoFast {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let band = PfifoFast::band_of(cx.key(pkt).priority);
        let res = if self.bands[band].len() < self.limit {
            cx.stamp(pkt, now);
            self.bands[band].push_back(pkt);
            Enq::Queued
        } else {
            cx.drop(pkt);
            Enq::Dropped
        };
        self.stats.after_enqueue(pkt, res, cx, mark);
        res
    }

    fn dequeue(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let mark = cx.mark();
        let out = self.bands.iter_mut().find_map(|b| b.pop_front());
        if let Some(p) = out {
            cx.unstamp(p, now);
        }
        self.stats.after_dequeue(out, cx, mark);
        out
    }

    fn peek(&mut self, _cx: &mut QCtx<'_>, _now: Nanos) -> Option<PacketId> {
        self.bands.iter().find_map(|b| b.front().copied())
    }

    fn next_wakeup(&self, _now: Nanos) -> Option<Nanos> {
        None
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        self.bands.iter().flatten().for_each(|&p| f(p));
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let map: Vec<String> = PRIO2BAND.iter().map(|b| b.to_string()).collect();
        out.push(QdiscReport {
            kind: "pfifo_fast",
            handle: self.handle,
            parent,
            options: format!("bands {BANDS} priomap {}", map.join(" ")),
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes: vec![],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{build_full, build_opts_ok, decl, opts_col, run_link, Bench, Source};

    /// The IP stack's TOS -> skb->priority table (`rt_tos2priority`), reference section 2.2.
    fn tos2prio(tos: u8) -> u32 {
        const T: [u32; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];
        T[((tos & 0x1e) >> 1) as usize]
    }

    fn pf(q: &mut QdiscImpl) -> &mut PfifoFast {
        match q {
            QdiscImpl::PfifoFast(p) => p,
            _ => panic!("not pfifo_fast"),
        }
    }

    #[test]
    fn band_follows_the_tos_table_of_reference_2_2() {
        // (TOS byte, expected Linux priority, expected band), reference 2.2 and 14.14.
        let table = [
            (0x00u8, 0u32, 1usize), // normal
            (0x04, 0, 1),           // max reliability
            (0x08, 2, 2),           // max throughput
            (0x10, 6, 0),           // min delay
            (0x18, 4, 1),           // min delay + max throughput
            (0xB8, 4, 1),           // DSCP EF
            (0x88, 2, 2),           // DSCP AF41
            (0x20, 0, 1),           // DSCP CS1
            (0xC0, 0, 1),           // DSCP CS6
        ];
        let mut b = Bench::new(table.len());
        for (i, &(tos, prio, _)) in table.iter().enumerate() {
            b.keys[i].tos = tos;
            b.keys[i].priority = tos2prio(tos);
            assert_eq!(b.keys[i].priority, prio, "TOS {tos:#x}");
        }
        let mut q = build_opts_ok("pfifo_fast", Handle::new(1, 0), "");
        for (i, &(tos, _, band)) in table.iter().enumerate() {
            let before = pf(&mut q).band_lens();
            let id = b.pkt(i as u32, 100);
            assert_eq!(q.enqueue(id, &mut b.cx(), Nanos(0)), Enq::Queued);
            let after = pf(&mut q).band_lens();
            let mut want = before;
            want[band] += 1;
            assert_eq!(after, want, "TOS {tos:#x} must go to band {band}");
        }
        // Only priority & 15 counts: 0x10006 behaves as 6.
        assert_eq!(PfifoFast::band_of(0x1_0006), 0);
        assert_eq!(PfifoFast::band_of(15), 1);
    }

    #[test]
    fn dequeue_is_strict_priority_and_fifo_within_a_band() {
        let mut b = Bench::new(3);
        b.keys[0].priority = 1; // band 2
        b.keys[1].priority = 0; // band 1
        b.keys[2].priority = 7; // band 0
        let mut q = build_opts_ok("pfifo_fast", Handle::UNSPEC, "");
        let mut ids = vec![];
        for round in 0..2 {
            for f in 0..3 {
                let id = b.pkt(f, 100 + round);
                q.enqueue(id, &mut b.cx(), Nanos(0));
                ids.push((f, id));
            }
        }
        let order: Vec<_> = std::iter::from_fn(|| q.dequeue(&mut b.cx(), Nanos(5))).collect();
        let of = |f: u32| ids.iter().filter(|x| x.0 == f).map(|x| x.1).collect::<Vec<_>>();
        let want: Vec<_> = [2, 1, 0].iter().flat_map(|&f| of(f)).collect();
        assert_eq!(order, want);
        let s = q.stats();
        assert_eq!((s.offered_packets, s.sent_packets, s.qlen, s.backlog_bytes), (6, 6, 0, 0));
        assert!(s.identity_holds());
    }

    #[test]
    fn each_band_holds_txqueuelen_packets() {
        let mut cx = BuildCx::for_tests();
        cx.txqueuelen = 5;
        let (q, diags) = build_full("pfifo_fast", Handle::new(1, 0), "", vec![], vec![], &cx);
        assert!(diags.is_empty());
        let mut q = q.unwrap();
        let mut b = Bench::new(3);
        b.keys[0].priority = 6;
        b.keys[1].priority = 0;
        b.keys[2].priority = 2;
        let mut drops = [0; 3];
        for f in 0..3 {
            for _ in 0..7 {
                let id = b.pkt(f, 500);
                if q.enqueue(id, &mut b.cx(), Nanos(0)) == Enq::Dropped {
                    drops[f as usize] += 1;
                }
            }
        }
        // 5 per band (the >= 4.16 per-band rings): 15 queued in all, 2 dropped per band.
        assert_eq!(pf(&mut q).band_lens(), [5, 5, 5]);
        assert_eq!(drops, [2, 2, 2]);
        let s = q.stats();
        assert_eq!((s.qlen, s.drops, s.backlog_bytes), (15, 6, 15 * 514));
        assert!(s.identity_holds());
        assert_eq!(b.dropped.len(), 6);
    }

    #[test]
    fn band_0_starves_band_2_on_a_saturated_link() {
        let mut b = Bench::new(2);
        b.keys[0].priority = tos2prio(0x10); // interactive: band 0
        b.keys[1].priority = tos2prio(0x08); // bulk: band 2
        let mut q = build_opts_ok("pfifo_fast", Handle::new(1, 0), "");
        let secs = 2;
        let src =
            |flow, rate_bps| Source { flow, rate_bps, ip_len: 1000, start: Nanos::ZERO, stop: Nanos::from_secs(secs) };
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 12_000_000), src(1, 5_000_000)],
            10_000_000,
            Nanos::from_secs(secs),
            Nanos::from_ms(500),
        );
        // Once band 0's backlog exists, band 2 never sends.
        assert_eq!(r.bytes[1], 0, "band 2 must be starved");
        let rate0 = r.rate_bps(0, 1.5);
        assert!((rate0 - 10e6).abs() / 10e6 < 0.01, "band 0 gets the whole link: {rate0}");
        assert!(q.stats().identity_holds());
    }

    #[test]
    fn report_prints_bands_and_priomap_like_tc() {
        let q = build_opts_ok("pfifo_fast", Handle::UNSPEC, "");
        let r = q.reports();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, "pfifo_fast");
        assert_eq!(r[0].options, "bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1");
    }

    #[test]
    fn options_and_txqueuelen_0_are_refused() {
        let mut diags = vec![];
        let d = decl("pfifo_fast", Handle::new(1, 0), "limit 100");
        assert!(crate::qdisc::build_qdisc(d, &BuildCx::for_tests(), &mut diags).is_none());
        assert_eq!(diags.len(), 1);
        assert_eq!((diags[0].col, diags[0].token.as_str()), (opts_col("pfifo_fast"), "limit"));
        assert!(diags[0].message.contains("takes no options"), "{}", diags[0]);

        let mut cx = BuildCx::for_tests();
        cx.txqueuelen = 0;
        let (q, diags) = build_full("pfifo_fast", Handle::new(1, 0), "", vec![], vec![], &cx);
        assert!(q.is_none());
        assert_eq!((diags[0].col, diags[0].token.as_str()), (1, "pfifo_fast"));
        assert!(diags[0].message.contains("txqueuelen 0"));
    }
}
