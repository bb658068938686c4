//! tbf, the Token Bucket Filter (Linux `net/sched/sch_tbf.c` as in 5.x-6.x mainline, with the
//! `mpu` handling restored in ≈5.17 (reference 0.4); iproute2 `tc/q_tbf.c`).
//!
//! Tokens are time credit in nanoseconds: a full bucket is `buffer` = the time to send `burst`
//! bytes at `rate`. A dequeue peeks the child's head packet of length L and computes
//! `toks = min(min(now - t_c, buffer) + tokens, buffer) - l2t(rate, L)` (and the same for the
//! optional peak bucket, depth `mtu` = l2t(peakrate, mtu bytes)); if both are non-negative the
//! packet leaves and the buckets keep the remainders, else the qdisc arms its watchdog at
//! `now + max(-toks, -ptoks)`, counts one overlimit and returns nothing. It never reorders.
//! A packet longer than `max_size` (burst, or the peak bucket's bytes if smaller) is dropped at
//! enqueue. The default child is a bfifo of `limit` bytes; `limit` comes from `latency` as tc
//! computes it (`rate*latency + burst`, with a peakrate also at most `peakrate*latency + mtu`).
//! TBF has one class, M:1, where another qdisc can be grafted.
//!
//! Time for L bytes at a rate: `l2t(L) = floor(L' * 10^9 / rate_bytes_per_s)` with
//! `L' = max(L + overhead, mpu)`, and for `linklayer atm` `L' = ceil(L'/48)*53` — the kernel's
//! `psched_l2t_ns` computes the same with a multiply and shift (less than 1 ns apart).
//! Rates are bytes per second as tc stores them (`rate 1001bit` = 125 B/s).
//! Deviations: GSO segmentation of oversize super-packets does not arise (airsched has no GSO);
//! a burst of 4 GiB or more is refused (tc would then send only the 64-ns tick value).

use super::common::{filter_diag, pending_wakeup, StashPeek};
use super::{
    diag_error, diag_warning, BuildCx, ClassReport, Enq, Fifo, FifoKind, Handle, QCtx, Qdisc, QdiscDecl, QdiscImpl,
    QdiscReport, QdiscStats,
};
use crate::packet::PacketId;
use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::tc::opts::{format_rate_bytes, format_size, format_time_us, OptParser};
use crate::time::Nanos;

pub use super::rate::{LinkLayer, RateCfg};

/// 64-ns psched ticks per microsecond, as tc derives it from /proc/net/psched.
const TICKS_PER_US: f64 = 1000.0 / 64.0;

pub struct Tbf {
    handle: Handle,
    rate: RateCfg,
    peak: Option<RateCfg>,
    /// Bytes of the bfifo child tc asked for (printed as `lat`).
    limit: u64,
    /// Largest packet that can ever conform.
    max_size: u32,
    /// Bucket depths in ns.
    buffer: i64,
    mtu: i64,
    tokens: i64,
    ptokens: i64,
    t_c: Nanos,
    child: Box<QdiscImpl>,
    /// The parent the child was grafted with, as tc shows it: the class 1:1 by default, or
    /// whatever the script said (`parent 1:` or `parent 1:5`; `tbf_find` ignores the minor).
    child_parent: Handle,
    /// A packet taken from the child by `peek` (qdisc_peek_dequeued), handed out next.
    stash: Option<PacketId>,
    /// When the head packet conforms (the watchdog), set by an unsuccessful dequeue.
    watchdog: Option<Nanos>,
    stats: QdiscStats,
}

/// The options of a TBF as tc would send them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TbfParams {
    pub rate: RateCfg,
    pub peak: Option<RateCfg>,
    pub burst: u32,
    /// Peak bucket depth in bytes (`mtu`/`minburst`), when a peakrate is set.
    pub pburst: u32,
    /// Bytes (given, or computed from latency).
    pub limit: u64,
}

impl Tbf {
    /// A TBF created at time 0 with full buckets and the default bfifo child of `limit` bytes.
    pub fn new(p: TbfParams, handle: Handle) -> Tbf {
        let buffer = p.rate.l2t_ns(p.burst);
        let (mtu, max_size) = match p.peak {
            Some(pk) => (pk.l2t_ns(p.pburst), p.burst.min(p.pburst)),
            None => (0, p.burst),
        };
        let child =
            QdiscImpl::Fifo(Fifo::new(FifoKind::Bfifo, p.limit, Handle::UNSPEC, Handle::new(handle.major(), 1)));
        Tbf {
            handle,
            rate: p.rate,
            peak: p.peak,
            limit: p.limit,
            max_size,
            buffer,
            mtu,
            tokens: buffer,
            ptokens: mtu,
            t_c: Nanos::ZERO,
            child: Box::new(child),
            child_parent: Handle::new(handle.major(), 1),
            stash: None,
            watchdog: None,
            stats: QdiscStats::default(),
        }
    }

    /// Bucket depth in ns (`buffer`).
    #[cfg(test)]
    pub fn buffer_ns(&self) -> i64 {
        self.buffer
    }

    #[cfg(test)]
    pub fn max_size(&self) -> u32 {
        self.max_size
    }

    #[cfg(test)]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn class_id(&self) -> Handle {
        Handle::new(self.handle.major(), 1)
    }

    /// tbf_dequeue: the head packet if both buckets allow it now, else arm the watchdog.
    fn take_conforming(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        let Some(head) = self.child.peek(cx, now) else {
            // Empty, or a shaping child holds its packets: its own watchdog decides.
            self.watchdog = pending_wakeup(&self.child, now);
            return None;
        };
        let len = cx.len(head);
        let elapsed = now.saturating_sub(self.t_c).0.min(self.buffer as u64) as i64;
        let ptoks = match &self.peak {
            Some(pk) => (elapsed + self.ptokens).min(self.mtu) - pk.l2t_ns(len),
            None => 0,
        };
        let toks = (elapsed + self.tokens).min(self.buffer) - self.rate.l2t_ns(len);
        if toks >= 0 && ptoks >= 0 {
            let p = self.child.dequeue(cx, now)?;
            debug_assert_eq!(p, head, "a child's dequeue returns what it peeked");
            self.t_c = now;
            self.tokens = toks;
            self.ptokens = ptoks;
            self.watchdog = None;
            Some(p)
        } else {
            self.watchdog = Some(now + Nanos((-toks).max(-ptoks) as u64));
            self.stats.overlimits += 1;
            None
        }
    }
}

/// tc's `matches()`: `word` is a non-empty prefix of `keyword`.
fn matches(word: &str, keyword: &str) -> bool {
    !word.is_empty() && keyword.starts_with(word)
}

/// The option a word names, in the order tc's q_tbf.c tests them (some by prefix).
fn keyword(w: &str) -> Option<&'static str> {
    Some(if matches(w, "limit") {
        "limit"
    } else if matches(w, "latency") {
        "latency"
    } else if matches(w, "burst") || w == "buffer" || w == "maxburst" {
        "burst"
    } else if w == "mtu" || w == "minburst" {
        "mtu"
    } else if w == "mpu" {
        "mpu"
    } else if w == "rate" {
        "rate"
    } else if matches(w, "peakrate") {
        "peakrate"
    } else if matches(w, "overhead") {
        "overhead"
    } else if matches(w, "linklayer") {
        "linklayer"
    } else {
        return None;
    })
}

const KNOWN: &[&str] =
    &["rate", "burst|buffer|maxburst", "limit", "latency", "peakrate", "mtu|minburst", "mpu", "overhead", "linklayer"];

/// A value with the token it was read from.
type At<'a, T> = Option<(T, Tok<'a>)>;

fn duplicate<T>(p: &mut OptParser<'_, '_>, seen: &At<'_, T>, key: Tok<'_>, name: &str) -> bool {
    if seen.is_some() {
        p.error(key, format!("duplicate \"{name}\" specification (tc refuses it)"));
        true
    } else {
        false
    }
}

/// Parse tbf options as tc does, apply the kernel's checks. Errors and warnings go to `diags`.
pub fn parse_params(d: &QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<TbfParams> {
    let mut p = super::opt_parser(&d.opts, d.end, diags);
    let mut rate: At<u64> = None;
    let mut peak: At<u64> = None;
    let mut burst: At<u64> = None;
    let mut mtu: At<u64> = None;
    let mut limit: At<u64> = None;
    let mut latency: At<u64> = None; // microseconds
    let mut mpu: At<u64> = None;
    let mut overhead: At<u64> = None;
    let mut linklayer = LinkLayer::Ethernet;
    while let Some(k) = p.next() {
        let Some(name) = keyword(k.text) else {
            // tc stops at the first word it does not know.
            p.unknown(k, "tbf", KNOWN);
            break;
        };
        let vt = p.peek();
        match name {
            "limit" => {
                if duplicate(&mut p, &limit, k, "limit") {
                    p.next();
                    continue;
                }
                if latency.is_some_and(|(l, _)| l > 0) {
                    p.error(k, "specifying both \"latency\" and \"limit\" is not allowed (tc)");
                    p.next();
                    continue;
                }
                if let Some(v) = p.size(k) {
                    if v > u32::MAX as u64 {
                        p.error(vt.unwrap(), "limit must be below 4 GiB (tc stores it in 32 bits)");
                    } else if v > 0 {
                        limit = Some((v, vt.unwrap()));
                    }
                }
            }
            "latency" => {
                if duplicate(&mut p, &latency, k, "latency") {
                    p.next();
                    continue;
                }
                if limit.is_some_and(|(l, _)| l > 0) {
                    p.error(k, "specifying both \"limit\" and \"latency\" is not allowed (tc)");
                    p.next();
                    continue;
                }
                if let Some(t) = p.time(k) {
                    let us = t.0 / 1000;
                    if us > u32::MAX as u64 {
                        p.error(vt.unwrap(), "latency must be below 4295 s (tc stores microseconds in 32 bits)");
                    } else if us > 0 {
                        latency = Some((us, vt.unwrap()));
                    }
                }
            }
            "burst" => {
                if duplicate(&mut p, &burst, k, "buffer/burst/maxburst") {
                    p.next();
                    continue;
                }
                if let Some(v) = p.size(k) {
                    if v > 0 {
                        burst = Some((v, vt.unwrap()));
                    }
                }
            }
            "mtu" => {
                if duplicate(&mut p, &mtu, k, "mtu/minburst") {
                    p.next();
                    continue;
                }
                if let Some(v) = p.size(k) {
                    if v > u32::MAX as u64 {
                        p.error(vt.unwrap(), "mtu must be below 4 GiB (tc stores it in 32 bits)");
                    } else if v > 0 {
                        mtu = Some((v, k));
                    }
                }
            }
            "mpu" => {
                if duplicate(&mut p, &mpu, k, "mpu") {
                    p.next();
                    continue;
                }
                if let Some(v) = p.size(k) {
                    if v > u16::MAX as u64 {
                        p.error(vt.unwrap(), "mpu must be at most 65535 bytes (tc_ratespec stores 16 bits)");
                    } else if v > 0 {
                        mpu = Some((v, k));
                    }
                }
            }
            "rate" | "peakrate" => {
                let slot = if name == "rate" { &mut rate } else { &mut peak };
                if slot.is_some() {
                    p.error(k, format!("duplicate \"{name}\" specification (tc refuses it)"));
                    p.next();
                    continue;
                }
                if let Some(bps) = p.rate(k) {
                    let bytes = bps / 8;
                    if bytes == 0 {
                        p.error(vt.unwrap(), "below 8bit: tc stores rates in bytes per second, so this is rate 0");
                    } else {
                        *slot = Some((bytes, vt.unwrap()));
                    }
                }
            }
            "overhead" => {
                if duplicate(&mut p, &overhead, k, "overhead") {
                    p.next();
                    continue;
                }
                if let Some(v) = p.uint(k, 0, u16::MAX as u64) {
                    if v > 0 {
                        overhead = Some((v, k));
                    }
                }
            }
            "linklayer" => {
                if let Some(v) = p.value(k, "ethernet, atm or adsl") {
                    match v.text.to_ascii_lowercase().as_str() {
                        "ethernet" => linklayer = LinkLayer::Ethernet,
                        "atm" | "adsl" => linklayer = LinkLayer::Atm,
                        _ => p.error(v, format!("unknown linklayer \"{}\"; expected ethernet, atm or adsl", v.text)),
                    }
                }
            }
            _ => unreachable!("keyword() returns only these"),
        }
    }
    // tc reports every missing mandatory parameter at once.
    if rate.is_none() {
        p.error_at_end("tbf: the \"rate\" parameter is mandatory");
    }
    if burst.is_none() {
        p.error_at_end("tbf: the \"burst\" parameter is mandatory (also spelt buffer or maxburst)");
    }
    if peak.is_some() && mtu.is_none() {
        p.error_at_end("tbf: when \"peakrate\" is specified, \"mtu\" (or \"minburst\") must also be specified");
    }
    if limit.is_none() && latency.is_none() {
        p.error_at_end("tbf: either \"limit\" or \"latency\" is required");
    }
    if p.has_errors() {
        return None;
    }
    let (rate_b, _) = rate.unwrap();
    let (burst_b, burst_tok) = burst.unwrap();
    let adj = |bytes_per_sec| RateCfg {
        bytes_per_sec,
        overhead: overhead.map_or(0, |o| o.0 as u16),
        mpu: mpu.map_or(0, |m| m.0 as u16),
        linklayer,
    };
    let rate_cfg = adj(rate_b);
    let peak_cfg = peak.map(|(b, _)| adj(b));
    let pburst = mtu.map_or(0, |m| m.0 as u32);

    // tc: limit from latency, in doubles, truncated to 32 bits.
    let limit_b = match (limit, latency) {
        (Some((l, _)), _) => l,
        (None, Some((lat_us, lat_tok))) => {
            let mut lim = rate_b as f64 * lat_us as f64 / 1e6 + burst_b as f64;
            if let Some((pk, _)) = peak {
                lim = lim.min(pk as f64 * lat_us as f64 / 1e6 + pburst as f64);
            }
            if lim >= 4_294_967_296.0 {
                p.error(lat_tok, format!("the limit this latency gives ({lim:.0} bytes) does not fit tc's 32 bits"));
                return None;
            }
            lim as u64
        }
        (None, None) => unreachable!("checked above"),
    };
    // tc: "burst out of range" when the tick count would not fit 32 bits.
    let ticks = (1e6 * burst_b as f64 / rate_b as f64 * TICKS_PER_US).ceil();
    if ticks >= u32::MAX as f64 {
        p.error(burst_tok, "tbf: burst out of range (more than ~274 s of credit at this rate)");
        return None;
    }
    if burst_b > u32::MAX as u64 {
        p.error(burst_tok, "airsched: burst must be below 4 GiB");
        return None;
    }
    // Kernel: peakrate must exceed rate.
    if let (Some((pk, pk_tok)), Some(_)) = (peak, rate) {
        if pk <= rate_b {
            p.error(
                pk_tok,
                format!(
                    "peakrate {} is not above rate {}: the kernel refuses it (EINVAL)",
                    format_rate_bytes(pk),
                    format_rate_bytes(rate_b)
                ),
            );
            return None;
        }
    }
    if peak.is_none() {
        if let Some((_, t)) = mtu {
            p.warn(t, "mtu/minburst sizes the peak bucket and has no effect without peakrate");
        }
    }
    let max_size = match peak {
        Some(_) => (burst_b as u32).min(pburst),
        None => burst_b as u32,
    };
    if max_size < cx.mtu {
        p.warn(
            burst_tok,
            format!(
                "burst {max_size} is lower than device {} mtu ({}): the kernel warns, and drops every \
                 packet longer than {max_size} bytes",
                cx.dev, cx.mtu
            ),
        );
    }
    Some(TbfParams { rate: rate_cfg, peak: peak_cfg, burst: burst_b as u32, pburst, limit: limit_b })
}

pub(super) fn build(d: QdiscDecl<'_>, cx: &BuildCx, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let params = parse_params(&d, cx, diags);
    let mut ok = params.is_some();
    for c in &d.classes {
        diags.push(diag_error(
            c.at,
            format!(
                "tbf has a single class {}1, created with the qdisc; classes cannot be added (EOPNOTSUPP)",
                d.handle
            ),
        ));
        ok = false;
    }
    for f in &d.filters {
        diags.push(filter_diag(
            f,
            Severity::Error,
            format!("tbf does not classify: no filter can be attached to {} (the kernel refuses it)", f.parent),
        ));
        ok = false;
    }
    if d.grafts.len() > 1 {
        for g in &d.grafts[1..] {
            diags.push(diag_error(
                g.at,
                format!("tbf has one class; it already has a grafted qdisc ({})", d.grafts[0].classid),
            ));
        }
        ok = false;
    }
    for g in &d.grafts {
        if d.handle != Handle::UNSPEC && g.classid.major() != d.handle.major() {
            diags.push(diag_error(g.at, format!("{} is not a class of tbf {}", g.classid, d.handle)));
            ok = false;
        } else if g.classid.minor() != 1 && g.classid.minor() != 0 {
            diags.push(diag_warning(
                g.at,
                format!("tbf has one class, {}1; the kernel grafts onto it whatever minor is given", d.handle),
            ));
        }
    }
    if !ok {
        return None;
    }
    let params = params.expect("ok");
    let mut tbf = Tbf::new(params, d.handle);
    if let Some(g) = d.grafts.into_iter().next() {
        diags.push(diag_warning(
            g.at,
            "tbf's limit/latency only sizes its default bfifo: with a grafted qdisc, that qdisc's own limit applies",
        ));
        tbf.child = Box::new(g.qdisc);
        tbf.child_parent = g.classid;
    }
    Some(QdiscImpl::Tbf(tbf))
}

/// qdisc_peek_dequeued: a packet is returned only if it conforms now; it waits in a stash,
/// still held here (only drops inside the child count).
impl StashPeek for Tbf {
    /// The child stamps; TBF only passes packets on.
    const LEAF: bool = false;

    fn stash_and_stats(&mut self) -> (&mut Option<PacketId>, &mut QdiscStats) {
        (&mut self.stash, &mut self.stats)
    }

    fn dequeue_inner(&mut self, cx: &mut QCtx<'_>, now: Nanos) -> Option<PacketId> {
        self.take_conforming(cx, now)
    }
}

impl Qdisc for Tbf {
    fn enqueue(&mut self, pkt: PacketId, cx: &mut QCtx<'_>, now: Nanos) -> Enq {
        let mark = cx.mark();
        let res = if cx.len(pkt) > self.max_size {
            cx.drop(pkt);
            Enq::Dropped
        } else {
            self.child.enqueue(pkt, cx, now)
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
        if self.stats.qlen == 0 {
            None
        } else if self.stash.is_some() {
            Some(now)
        } else {
            self.watchdog
        }
    }

    fn stats(&self) -> QdiscStats {
        self.stats
    }

    fn for_each_queued(&self, f: &mut dyn FnMut(PacketId)) {
        if let Some(p) = self.stash {
            f(p);
        }
        self.child.for_each_queued(f);
    }

    fn report(&self, parent: Handle, out: &mut Vec<QdiscReport>) {
        let child = self.child.stats();
        let child_handle = child_handle(&self.child);
        out.push(QdiscReport {
            kind: "tbf",
            handle: self.handle,
            parent,
            options: self.options_text(),
            stats: self.stats,
            xstats: vec![],
            xstats_text: String::new(),
            classes: vec![ClassReport {
                kind: "tbf",
                classid: self.class_id(),
                parent: self.handle,
                leaf: (child_handle != Handle::UNSPEC).then_some(child_handle),
                options: String::new(),
                stats: child,
                xstats: vec![],
                xstats_text: String::new(),
            }],
        });
        self.child.report(self.child_parent, out);
    }
}

/// The handle of a qdisc (from its report: the contract has no accessor).
pub(in crate::qdisc) fn child_handle(q: &QdiscImpl) -> Handle {
    let mut r = Vec::with_capacity(4);
    q.report(Handle::UNSPEC, &mut r);
    r.first().map_or(Handle::UNSPEC, |r| r.handle)
}

impl Tbf {
    /// `tc qdisc show` options: `rate 4Mbit burst 15Kb lat 50ms`, computed from what the kernel
    /// dumps (64-ns ticks) the way tc_calc_xmitsize does.
    pub fn options_text(&self) -> String {
        let rate = self.rate.bytes_per_sec as f64;
        let buffer_ticks = (self.buffer as u64 >> 6) as f64;
        let burst = (rate * (buffer_ticks / TICKS_PER_US) / 1e6) as u64;
        let mut s = format!("rate {} burst {}", format_rate_bytes(self.rate.bytes_per_sec), format_size(burst));
        let mut latency = 1e6 * (self.limit as f64 / rate) - buffer_ticks / TICKS_PER_US;
        if let Some(pk) = &self.peak {
            let prate = pk.bytes_per_sec as f64;
            let mtu_ticks = (self.mtu as u64 >> 6) as f64;
            s += &format!(" peakrate {}", format_rate_bytes(pk.bytes_per_sec));
            if mtu_ticks > 0.0 || pk.mpu > 0 {
                let minburst = (prate * (mtu_ticks / TICKS_PER_US) / 1e6) as u64;
                s += &format!(" minburst {}", format_size(minburst));
            }
            let lat2 = 1e6 * (self.limit as f64 / prate) - mtu_ticks / TICKS_PER_US;
            latency = latency.max(lat2);
        }
        if latency >= 0.0 {
            s += &format!(" lat {}", format_time_us(u64::from(latency.min(u32::MAX as f64) as u32)));
        } else {
            s += &format!(" limit {}", format_size(self.limit));
        }
        if self.rate.overhead > 0 {
            s += &format!(" overhead {}", self.rate.overhead);
        }
        if self.rate.linklayer == LinkLayer::Atm {
            s += " linklayer atm";
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{build_err, build_full, build_opts_ok, run_link, warnings, word_col, Bench, Source};

    fn tbf(q: &QdiscImpl) -> &Tbf {
        match q {
            QdiscImpl::Tbf(t) => t,
            _ => panic!("not tbf"),
        }
    }

    fn src(flow: u32, rate_bps: u64, ip_len: u32, secs: u64) -> Source {
        Source { flow, rate_bps, ip_len, start: Nanos::ZERO, stop: Nanos::from_secs(secs) }
    }

    #[test]
    fn worked_numbers_of_reference_section_14() {
        // 14.3: rate 4mbit burst 15k latency 50ms.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 4mbit burst 15k latency 50ms");
        let t = tbf(&q);
        assert_eq!(t.rate.bytes_per_sec, 500_000);
        assert_eq!(t.limit(), 40_360);
        assert_eq!(t.buffer_ns(), 30_720_000);
        assert_eq!(t.max_size(), 15_360);
        // 14.2: 1514 B at 4mbit.
        assert_eq!(t.rate.l2t_ns(1514), 3_028_000);
        assert_eq!(t.options_text(), "rate 4Mbit burst 15Kb lat 50ms");
        // Its default child is a bfifo of `limit` bytes under class 1:1.
        let r = q.reports();
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].kind, r[1].parent, r[1].options.as_str()), ("bfifo", Handle::new(1, 1), "limit 40360b"));
        assert_eq!(r[0].classes.len(), 1);
        assert_eq!(r[0].classes[0].classid, Handle::new(1, 1));

        // With peakrate 8mbit mtu 1514: min(40360, 1000000*0.05 + 1514 = 51514) = 40360.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 4mbit burst 15k peakrate 8mbit mtu 1514 latency 50ms");
        let t = tbf(&q);
        assert_eq!(t.limit(), 40_360);
        assert_eq!(t.mtu, 1_514_000);
        assert_eq!(t.max_size(), 1514);
        // tc prints the peak bucket back from 64-ns ticks: 1514000 ns >> 6 = 23656 ticks = 1513.98 B.
        assert_eq!(t.options_text(), "rate 4Mbit burst 15Kb peakrate 8Mbit minburst 1513b lat 50ms");

        // When the peak term is smaller it wins: 625000*0.05 + 1514 = 32764 < 500000*0.05 + 102400.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 4mbit burst 100k peakrate 5mbit mtu 1514 latency 50ms");
        assert_eq!(tbf(&q).limit(), 32_764);
        // bfifo limits print as tc's print_size does (a fifo.rs fix).
        let bf = build_opts_ok("bfifo", Handle::new(2, 0), "limit 15k");
        assert_eq!(bf.reports()[0].options, "limit 15Kb");
        // An explicit limit is kept as given.
        // lat = limit/rate - burst/rate = 163.84 ms - 81.92 ms.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 10k limit 20k");
        assert_eq!(tbf(&q).limit(), 20_480);
        assert_eq!(tbf(&q).options_text(), "rate 1Mbit burst 10Kb lat 81.9ms");
        // A limit below the burst makes tc's latency negative: it prints the limit instead.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 10k limit 2000");
        assert_eq!(tbf(&q).options_text(), "rate 1Mbit burst 10Kb limit 2000b");
    }

    #[test]
    fn long_run_output_rate_is_within_1_percent_of_rate() {
        let mut b = Bench::new(1);
        let mut q = build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 10k latency 50ms");
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 2_000_000, 1000, 20)],
            10_000_000,
            Nanos::from_secs(20),
            Nanos::from_secs(2),
        );
        let rate = r.rate_bps(0, 18.0);
        assert!((rate - 1e6).abs() / 1e6 < 0.01, "TBF output {rate} bit/s, configured 1 Mbit/s");
        let s = q.stats();
        assert!(s.identity_holds(), "{s:?}");
        assert!(s.drops > 0 && s.overlimits > 0, "{s:?}");
        // limit = 125000 B/s * 50 ms + 10240 = 16490 B: 16 packets of 1014 B wait at most
        // 16 * 8.112 ms behind a full queue (the burst part only helps after idle periods).
        assert_eq!(tbf(&q).limit(), 16_490);
        let dmax = r.delay_max[0];
        assert!(dmax > Nanos::from_ms(120) && dmax <= Nanos::from_ms(16 * 8112 / 1000 + 9), "max delay {dmax}");
    }

    #[test]
    fn initial_burst_is_exactly_burst_bytes_at_line_rate() {
        // 10 packets of 1514 B = 15140 B of burst; link 100 Mbit/s, source 200 Mbit/s.
        let mut b = Bench::new(1);
        let mut q = build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 15140 limit 1mb");
        let r =
            run_link(&mut q, &mut b, &[src(0, 200_000_000, 1500, 1)], 100_000_000, Nanos::from_ms(200), Nanos::ZERO);
        let d: Vec<Nanos> = r.departures.iter().map(|x| x.0).collect();
        let line = Nanos::for_bits(1514 * 8, 100_000_000); // 121.12 us
        for i in 1..10 {
            assert_eq!(d[i] - d[i - 1], line, "packet {i} of the burst leaves back to back");
        }
        // The 11th must wait until 11 packets' worth of credit (11 * 12.112 ms) minus the full
        // bucket (121.12 ms) has accrued: 12.112 ms after the start.
        let per_pkt = Nanos(12_112_000);
        assert_eq!(d[10], per_pkt, "11th departure");
        // Then one packet per 12.112 ms.
        for i in 11..15 {
            assert_eq!(d[i] - d[i - 1], per_pkt);
        }
        let burst_bytes: u32 = r.departures.iter().take_while(|x| x.0 < per_pkt).map(|x| x.2).sum();
        assert_eq!(burst_bytes, 15_140);
    }

    #[test]
    fn peakrate_limits_the_speed_of_the_burst() {
        let mut b = Bench::new(1);
        let mut q =
            build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 15140 peakrate 10mbit mtu 1514 limit 1mb");
        let r = run_link(
            &mut q,
            &mut b,
            &[src(0, 200_000_000, 1500, 3)],
            100_000_000,
            Nanos::from_secs(3),
            Nanos::from_secs(1),
        );
        let d: Vec<Nanos> = r.departures.iter().map(|x| x.0).collect();
        let peak_gap = Nanos(1_211_200); // 1514 B at 10 Mbit/s
        for i in 1..8 {
            assert_eq!(d[i] - d[i - 1], peak_gap, "burst packet {i} paced at peakrate");
        }
        let rate = r.rate_bps(0, 2.0);
        assert!((rate - 1e6).abs() / 1e6 < 0.01, "long-run rate {rate}");
        assert!(q.stats().identity_holds());
    }

    #[test]
    fn packets_longer_than_burst_are_dropped() {
        let (q, diags) = build_full(
            "tbf",
            Handle::new(1, 0),
            "rate 1mbit burst 1000 latency 50ms",
            vec![],
            vec![],
            &BuildCx::for_tests(),
        );
        let mut q = q.unwrap();
        let w = warnings(&diags);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].token.as_str(), w[0].col), ("1000", word_col("tbf", "rate 1mbit burst 1000 latency 50ms", 3)));
        assert!(w[0].message.contains("lower than device eth0 mtu (1514)"), "{}", w[0]);
        let mut b = Bench::new(1);
        let big = b.pkt(0, 1000 - 14 + 1); // 1001 B
        let fits = b.pkt(0, 1000 - 14); // exactly 1000 B
        assert_eq!(q.enqueue(big, &mut b.cx(), Nanos(0)), Enq::Dropped);
        assert_eq!(q.enqueue(fits, &mut b.cx(), Nanos(0)), Enq::Queued);
        assert_eq!(b.dropped, vec![big]);
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(0)), Some(fits));
        // On a link: every 1514 B packet is dropped, nothing is sent.
        let mut b = Bench::new(1);
        let r = run_link(&mut q, &mut b, &[src(0, 1_000_000, 1500, 1)], 10_000_000, Nanos::from_secs(1), Nanos::ZERO);
        assert_eq!(r.packets[0], 0);
        assert!(r.drops[0] > 80);
        let s = q.stats();
        assert_eq!(s.drops, 1 + r.drops[0]);
        assert!(s.identity_holds());
    }

    #[test]
    fn throttled_dequeue_counts_an_overlimit_and_arms_the_watchdog() {
        let mut q = build_opts_ok("tbf", Handle::new(1, 0), "rate 1mbit burst 2000 limit 100k");
        let mut b = Bench::new(1);
        let a = b.pkt(0, 1486); // 1500 B: 12 ms at 1 Mbit/s; the bucket holds 16 ms
        let c = b.pkt(0, 1486);
        q.enqueue(a, &mut b.cx(), Nanos(0));
        q.enqueue(c, &mut b.cx(), Nanos(0));
        assert_eq!(q.dequeue(&mut b.cx(), Nanos(0)), Some(a));
        // 4 ms of credit left; the next needs 12 ms: 8 ms from now.
        assert_eq!(q.dequeue(&mut b.cx(), Nanos::from_ms(1)), None);
        assert_eq!(q.next_wakeup(Nanos::from_ms(1)), Some(Nanos::from_ms(8)));
        assert_eq!(q.stats().overlimits, 1);
        // Peek (a parent's view) gives nothing either until the watchdog time.
        assert_eq!(q.peek(&mut b.cx(), Nanos::from_ms(7)), None);
        assert_eq!(q.stats().overlimits, 2);
        assert_eq!(q.peek(&mut b.cx(), Nanos::from_ms(8)), Some(c));
        assert_eq!(q.stats().qlen, 1, "a peeked packet stays counted until dequeued");
        assert_eq!(q.dequeue(&mut b.cx(), Nanos::from_ms(9)), Some(c));
        let s = q.stats();
        assert_eq!((s.sent_packets, s.qlen, s.overlimits), (2, 0, 2));
        assert!(s.identity_holds());
        assert_eq!(q.next_wakeup(Nanos::from_ms(9)), None);
    }

    #[test]
    fn mpu_overhead_and_atm_change_the_time_per_packet() {
        let eth = RateCfg { bytes_per_sec: 1_000_000, overhead: 0, mpu: 0, linklayer: LinkLayer::Ethernet };
        assert_eq!(eth.l2t_ns(100), 100_000);
        assert_eq!(RateCfg { mpu: 200, ..eth }.l2t_ns(100), 200_000);
        assert_eq!(RateCfg { overhead: 24, ..eth }.l2t_ns(100), 124_000);
        // 100 B -> 3 cells of 48 -> 159 B on the wire.
        assert_eq!(RateCfg { linklayer: LinkLayer::Atm, ..eth }.l2t_ns(100), 159_000);
        let q = build_opts_ok(
            "tbf",
            Handle::new(1, 0),
            "rate 8mbit burst 20k limit 100k overhead 10 mpu 64 linklayer adsl",
        );
        let t = tbf(&q);
        assert_eq!(t.rate, RateCfg { bytes_per_sec: 1_000_000, overhead: 10, mpu: 64, linklayer: LinkLayer::Atm });
        assert!(t.options_text().ends_with("overhead 10 linklayer atm"), "{}", t.options_text());
    }

    #[test]
    fn abbreviations_tc_accepts() {
        // q_tbf.c matches limit/latency/burst/peakrate/overhead/linklayer by prefix.
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 4mbit b 15k lat 50ms peak 8mbit minburst 1514");
        assert_eq!(tbf(&q).limit(), 40_360);
        let q = build_opts_ok("tbf", Handle::new(1, 0), "rate 4mbit maxburst 15k l 40360");
        assert_eq!(tbf(&q).limit(), 40_360);
    }

    #[test]
    fn option_errors_carry_positions() {
        let o = "rate 1mbit burst 10k latency 50ms bogus 3";
        let e = build_err("tbf", o);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].token.as_str(), e[0].col), ("bogus", word_col("tbf", o, 6)));
        assert!(e[0].message.contains("unknown tbf option") && e[0].message.contains("peakrate"), "{}", e[0]);

        let o = "burst 10k latency 50ms";
        let e = build_err("tbf", o);
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("\"rate\" parameter is mandatory"));
        assert_eq!(
            (e[0].token.as_str(), e[0].col),
            ("", 4 + o.len() as u32 + 1),
            "missing options are reported at the end"
        );

        let e = build_err("tbf", "rate 1mbit");
        assert_eq!(e.len(), 2, "tc reports every missing mandatory option: {e:?}");

        let o = "rate 1mbit burst 10k latency 50ms limit 10k";
        let e = build_err("tbf", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("limit", word_col("tbf", o, 6)));
        assert!(e[0].message.contains("both"));

        let o = "rate 1mbit burst 10k limit 10k rate 2mbit";
        let e = build_err("tbf", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("rate", word_col("tbf", o, 6)));
        assert!(e[0].message.contains("duplicate"));

        let o = "rate 2mbit burst 10k limit 10k peakrate 2mbit mtu 1514";
        let e = build_err("tbf", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("2mbit", word_col("tbf", o, 7)));
        assert!(e[0].message.contains("EINVAL"));

        let e = build_err("tbf", "rate 2mbit burst 10k limit 10k peakrate 4mbit");
        assert!(e[0].message.contains("\"mtu\""), "{}", e[0]);

        let o = "rate 1mbit burst 10k limit 10k linklayer token-ring";
        let e = build_err("tbf", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("token-ring", word_col("tbf", o, 7)));

        let o = "rate 1mbit burst 10k latency 50";
        let q = build_opts_ok("tbf", Handle::new(1, 0), o);
        assert_eq!(tbf(&q).limit(), 125_000 * 50 / 1_000_000 + 10_240, "a bare latency is microseconds");

        let o = "rate 7bit burst 10k limit 10k";
        let e = build_err("tbf", o);
        assert_eq!((e[0].token.as_str(), e[0].col), ("7bit", word_col("tbf", o, 1)));
    }
}
