//! What `tc` (iproute2 `tc/q_cbq.c`, `tc/tc_cbq.c`, `tc/tc_core.c` as of the parent of commit
//! 07ba0af3, "tc: remove support for CBQ", 2023) computes from the option words before it talks to
//! the kernel: the 256-slot rate tables, `maxidle` from `maxburst`, `offtime` from `minburst`,
//! the scaled `minidle`, and the default `allot`, `prio` and `weight`. The results are the
//! netlink attributes the kernel receives (`tc_ratespec` + table, `tc_cbq_lssopt`,
//! `tc_cbq_wrropt`, `tc_cbq_fopt`); `super` applies them as `sch_cbq.c` does.
//!
//! Times are psched ticks of 64 ns. tc converts a time in microseconds to ticks with
//! `tick_in_usec = 15.625` after truncating it to whole microseconds (`tc_core_time2tick` takes an
//! `unsigned int`), so `ticks = floor(floor(us) * 125 / 8)`; the rate tables are computed the same
//! way, in integers here (tc's double division can differ by one microsecond in rare cases).
//! `maxidle` and `offtime` use tc's floating-point formulas once, at build time.

use crate::qdisc::common::errors_since;
use crate::qdisc::{opt_parser, ClassDecl, Handle, QdiscDecl};
use crate::tc::lex::{TcDiag, Tok};
use crate::tc::opts::OptParser;

/// `TC_CBQ_MAXPRIO`: priorities 1..8 on the tc side, 0..7 in the kernel.
pub const MAXPRIO: u32 = 8;
/// `TC_CBQ_DEF_EWMA`.
pub const DEF_EWMA: u32 = 5;

/// `tc_cbq_lssopt.change` bits (`TCF_CBQ_LSS_*`).
pub const LSS_FLAGS: u32 = 1;
pub const LSS_EWMA: u32 = 2;
pub const LSS_MAXIDLE: u32 = 4;
pub const LSS_MINIDLE: u32 = 8;
pub const LSS_OFFTIME: u32 = 0x10;
pub const LSS_AVPKT: u32 = 0x20;

/// A `tc_ratespec` with its 256-entry transmission-time table (`qdisc_get_rtab`), looked up as
/// `qdisc_l2t` does: CBQ never moved to `psched_ratecfg`, so its times keep the table's
/// granularity (cells of `2^cell_log` bytes, whole microseconds, 64-ns ticks).
#[derive(Clone, Debug)]
pub struct RateTable {
    /// Bytes per second (`tc_ratespec.rate`, 32 bits: CBQ has no 64-bit rate attribute).
    pub rate: u32,
    pub cell_log: u32,
    pub overhead: u32,
    data: [u32; 256],
}

/// `tc_calc_xmittime`: ticks to send `size` bytes at `rate` bytes/s, truncated to whole
/// microseconds first, then to whole ticks.
pub fn xmittime(rate: u32, size: u32) -> u32 {
    let us = (u64::from(size) * 1_000_000 / u64::from(rate.max(1))).min(u64::from(u32::MAX));
    (us * 125 / 8).min(u64::from(u32::MAX)) as u32
}

/// `tc_core_time2tick` of a time given in (fractional) microseconds: both truncations.
fn time2tick(us: f64) -> u32 {
    let whole = us as u32; // saturating; tc's C cast is undefined beyond u32
    (f64::from(whole) * 15.625) as u32
}

impl RateTable {
    /// `tc_calc_rtable(r, rtab, cell_log, mtu, linklayer)`: `cell_log` None picks the smallest one
    /// with `mtu >> cell_log <= 255` (mtu 0 counts as 2047). Errors like `qdisc_get_rtab`, which
    /// rejects rate 0 and `cell_log` 0 (and, since Linux 5.11, `cell_log` >= 32).
    pub fn new(
        rate: u32,
        cell_log: Option<u32>,
        mtu: u32,
        mpu: u32,
        overhead: u32,
        atm: bool,
    ) -> Result<RateTable, String> {
        let mtu = if mtu == 0 { 2047 } else { mtu };
        let cell_log = cell_log.unwrap_or_else(|| {
            let mut c = 0;
            while (mtu >> c) > 255 {
                c += 1;
            }
            c
        });
        if rate == 0 {
            return Err("the rate is 0".into());
        }
        if cell_log == 0 || cell_log >= 32 {
            return Err(format!(
                "the kernel rejects a rate table with cell_log {cell_log} (\"Invalid rate table parameters\"): \
                 use a cell of at least 2 bytes, or an allot above 255 bytes"
            ));
        }
        let mut data = [0u32; 256];
        for (i, slot) in data.iter_mut().enumerate() {
            let mut sz = ((i as u32) + 1).wrapping_shl(cell_log).max(mpu);
            if atm {
                sz = sz.div_ceil(48) * 53; // tc_align_to_atm: whole 53-byte cells of 48 payload bytes
            }
            *slot = xmittime(rate, sz);
        }
        Ok(RateTable { rate, cell_log, overhead, data })
    }

    /// `qdisc_l2t`: ticks to send `len` bytes (cell_align is -1, as tc sets it).
    #[inline]
    pub fn l2t(&self, len: u32) -> i64 {
        let slot = (i64::from(len) - 1 + i64::from(self.overhead)).max(0) as u64 >> self.cell_log;
        if slot > 255 {
            i64::from(self.data[255]) * (slot >> 8) as i64 + i64::from(self.data[(slot & 0xff) as usize])
        } else {
            i64::from(self.data[slot as usize])
        }
    }
}

/// `tc_cbq_calc_maxidle`: scaled by 2^ewma, in ticks.
pub fn calc_maxidle(bndw: u32, rate: u32, avpkt: u32, ewma_log: u32, maxburst: u32) -> u32 {
    let scale = (1u64 << ewma_log) as f64;
    let g = 1.0 - 1.0 / scale;
    let xmt = f64::from(avpkt) / f64::from(bndw);
    let mut maxidle = xmt * (1.0 - g);
    if bndw != rate && maxburst != 0 {
        let vxmt = (f64::from(avpkt) / f64::from(rate) - xmt) * (g.powf(-f64::from(maxburst)) - 1.0);
        if vxmt > maxidle {
            maxidle = vxmt;
        }
    }
    time2tick(maxidle * scale * 1e6)
}

/// `tc_cbq_calc_offtime`: in ticks (not scaled).
pub fn calc_offtime(bndw: u32, rate: u32, avpkt: u32, ewma_log: u32, minburst: u32) -> u32 {
    let g = 1.0 - 1.0 / (1u64 << ewma_log) as f64;
    let mut offtime = f64::from(avpkt) / f64::from(rate) - f64::from(avpkt) / f64::from(bndw);
    if minburst == 0 {
        return 0;
    }
    if minburst == 1 {
        offtime *= g.powf(-f64::from(minburst)) - 1.0;
    } else {
        offtime *= 1.0 + (g.powf(-f64::from(minburst - 1)) - 1.0) / (1.0 - g);
    }
    time2tick(offtime * 1e6)
}

/// The qdisc's own ("link") class as `cbq_init` receives it.
pub struct LinkOpts {
    pub rtab: RateTable,
    pub ewma_log: u32,
    pub avpkt: u32,
    /// tc sends `tc_calc_xmittime(bandwidth, avpkt)`, unscaled (sic).
    pub maxidle: u32,
}

/// `tc_cbq_lssopt`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lss {
    pub change: u32,
    pub bounded: bool,
    pub isolated: bool,
    pub ewma_log: u32,
    pub avpkt: u32,
    pub maxidle: u32,
    pub minidle: u32,
    pub offtime: u32,
}

/// `tc_cbq_wrropt` (priority 1..8 as tc sends it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wrr {
    pub allot: u32,
    pub priority: u32,
    pub weight: u32,
}

/// `tc_cbq_fopt`: split node, default map and which of its bits change.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fopt {
    pub split: Handle,
    pub defmap: u32,
    pub defchange: u32,
}

/// What tc sends the kernel for one `tc class add ... cbq ...`.
pub struct ClassSpec {
    pub rtab: Option<RateTable>,
    pub lss: Option<Lss>,
    pub wrr: Option<Wrr>,
    pub fopt: Option<Fopt>,
    /// `defmap` given without `split` (the kernel then ignores it for a new class).
    pub defmap_without_split: Option<(u32, u32)>,
}

const QDISC_KNOWN: &[&str] = &["bandwidth", "rate", "avpkt", "cell", "mpu", "ewma", "allot", "overhead", "linklayer"];
const CLASS_KNOWN: &[&str] = &[
    "rate",
    "bandwidth",
    "allot",
    "avpkt",
    "prio",
    "weight",
    "maxburst",
    "minburst",
    "minidle",
    "bounded",
    "borrow",
    "isolated",
    "sharing",
    "ewma",
    "cell",
    "mpu",
    "split",
    "defmap",
    "overhead",
    "linklayer",
    "estimator",
];

/// A rate as tc's `get_rate` stores it: bytes per second in 32 bits.
fn rate_bytes(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let bps = p.rate(k)?;
    match u32::try_from(bps / 8) {
        Ok(r) if r > 0 => Some(r),
        Ok(_) => {
            p.error(at.unwrap_or(k), "below 8 bit/s, which is 0 bytes/s: cbq rates are whole bytes per second");
            None
        }
        Err(_) => {
            p.error(at.unwrap_or(k), "too large: cbq rates are 32-bit bytes per second (at most 34.3 Gbit/s)");
            None
        }
    }
}

fn size_u32(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let v = p.size(k)?;
    match u32::try_from(v) {
        Ok(v) => Some(v),
        Err(_) => {
            p.error(at.unwrap_or(k), "too large: tc keeps this size in 32 bits");
            None
        }
    }
}

/// `cell BYTES`: a power of two, as its log.
fn cell_log(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    let at = p.peek();
    let v = size_u32(p, k)?;
    if v.is_power_of_two() {
        Some(v.trailing_zeros())
    } else {
        p.error(at.unwrap_or(k), format!("cell must be a power of 2 (tc: \"cell must be 2^n\"), not {v}"));
        None
    }
}

fn linklayer_atm(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<bool> {
    let v = p.value(k, "ethernet, atm or adsl")?;
    match v.text {
        "ethernet" => Some(false),
        "atm" | "adsl" => Some(true),
        _ => {
            p.error(v, format!("unknown link layer \"{}\"; expected ethernet, atm or adsl", v.text));
            None
        }
    }
}

fn overhead(p: &mut OptParser<'_, '_>, k: Tok<'_>) -> Option<u32> {
    p.uint(k, 0, u64::from(u16::MAX)).map(|v| v as u32)
}

/// `cbq_parse_opt`: `bandwidth` and `avpkt` are required.
pub fn parse_qdisc(d: &QdiscDecl<'_>, diags: &mut Vec<TcDiag>) -> Option<LinkOpts> {
    let n0 = diags.len();
    let mut p = opt_parser(&d.opts, d.end, diags);
    let (mut rate, mut avpkt, mut cell, mut mpu, mut ewma, mut allot, mut ovh, mut atm) =
        (0, 0, None, 0, DEF_EWMA, 0u32, 0, false);
    let (mut rate_given, mut avpkt_given) = (false, false);
    let (mut cell_at, mut allot_at) = (None, None);
    while let Some(k) = p.next() {
        match k.text {
            "bandwidth" | "rate" => {
                rate_given = true;
                rate = rate_bytes(&mut p, k).unwrap_or(rate);
            }
            "avpkt" => {
                avpkt_given = true;
                avpkt = size_u32(&mut p, k).unwrap_or(avpkt);
            }
            "cell" => {
                cell_at = p.peek();
                cell = cell_log(&mut p, k).or(cell);
            }
            "mpu" => mpu = size_u32(&mut p, k).unwrap_or(mpu),
            "ewma" => ewma = p.uint(k, 0, 31).map_or(ewma, |v| v as u32),
            "allot" => {
                // tc: "Accept and ignore allot for backward compatibility"; it still sizes the
                // rate table's cells.
                allot_at = p.peek();
                allot = size_u32(&mut p, k).unwrap_or(allot);
            }
            "overhead" => ovh = overhead(&mut p, k).unwrap_or(ovh),
            "linklayer" => atm = linklayer_atm(&mut p, k).unwrap_or(atm),
            _ => p.unknown(k, "cbq", QDISC_KNOWN),
        }
    }
    if !rate_given {
        p.error_at_end(
            "cbq needs \"bandwidth RATE\", the physical link rate its idle-time estimator is computed against",
        );
    }
    if !avpkt_given {
        p.error_at_end("cbq needs \"avpkt BYTES\", the average packet size");
    } else if avpkt == 0 {
        p.error_at_end("cbq needs a non-zero \"avpkt\" (tc: \"avpkt\" is required)");
    }
    if errors_since(diags, n0) {
        return None;
    }
    allot = allot.max(avpkt * 3 / 2);
    let rtab = match RateTable::new(rate, cell, allot, mpu, ovh, atm) {
        Ok(t) => t,
        Err(e) => {
            diags.push(crate::qdisc::diag_error(cell_at.or(allot_at).unwrap_or(d.kind), e));
            return None;
        }
    };
    Some(LinkOpts { maxidle: xmittime(rate, avpkt), rtab, ewma_log: ewma, avpkt })
}

/// `get_tc_classid`: `root`, `none`, `M:`, `M:m`, `:m` or a bare hex number (hex halves).
pub fn parse_classid(s: &str) -> Option<Handle> {
    match s {
        "root" => return Some(Handle::ROOT),
        "none" => return Some(Handle::UNSPEC),
        _ => {}
    }
    let hex = |t: &str| if t.is_empty() { Some(0) } else { u32::from_str_radix(t, 16).ok() };
    match s.split_once(':') {
        Some((maj, min)) => {
            let (maj, min) = (hex(maj)?, hex(min)?);
            (maj <= 0xffff && min <= 0xffff).then_some(Handle((maj << 16) | min))
        }
        None => u32::from_str_radix(s, 16).ok().map(Handle),
    }
}

/// `defmap MASK[/CHANGE]` as tc's `sscanf("%08x/%08x")` reads it; CHANGE defaults to all bits.
fn parse_defmap(s: &str) -> Option<(u32, u32)> {
    let hex = |t: &str| {
        let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
        (!t.is_empty() && t.len() <= 8).then(|| u32::from_str_radix(t, 16).ok()).flatten()
    };
    match s.split_once('/') {
        Some((m, c)) => Some((hex(m)?, hex(c)?)),
        None => Some((hex(s)?, u32::MAX)),
    }
}

/// `cbq_parse_class_opt` for `tc class add` (tc sets NLM_F_EXCL, so a missing `prio` becomes 8
/// and the WRR attribute is always sent).
pub fn parse_class(c: &ClassDecl<'_>, diags: &mut Vec<TcDiag>) -> Option<ClassSpec> {
    let n0 = diags.len();
    let mut p = opt_parser(&c.opts, c.end, diags);
    let mut lss = Lss::default();
    let mut wrr = Wrr::default();
    let mut fopt = Fopt::default();
    let (mut fopt_ok, mut split_given) = (false, false);
    let (mut rate, mut bndw, mut mpu, mut cell, mut ewma, mut ovh, mut atm) =
        (0u32, 0u32, 0u32, None, None, 0u32, false);
    let (mut minburst, mut maxburst) = (0u32, 0u32);
    let (mut cell_at, mut allot_at) = (None, None);
    while let Some(k) = p.next() {
        match k.text {
            "rate" => rate = rate_bytes(&mut p, k).unwrap_or(rate),
            "bandwidth" => bndw = rate_bytes(&mut p, k).unwrap_or(bndw),
            "minidle" => {
                lss.minidle = p.uint(k, 0, u64::from(u32::MAX)).map_or(0, |v| v as u32);
                lss.change |= LSS_MINIDLE;
            }
            "minburst" => {
                minburst = p.uint(k, 0, u64::from(u32::MAX)).map_or(0, |v| v as u32);
                lss.change |= LSS_OFFTIME;
            }
            "maxburst" => {
                maxburst = p.uint(k, 0, u64::from(u32::MAX)).map_or(0, |v| v as u32);
                lss.change |= LSS_MAXIDLE;
            }
            "bounded" | "borrow" => {
                lss.bounded = k.text == "bounded";
                lss.change |= LSS_FLAGS;
            }
            "isolated" | "sharing" => {
                lss.isolated = k.text == "isolated";
                lss.change |= LSS_FLAGS;
            }
            "ewma" => {
                ewma = p.uint(k, 0, 31).map(|v| v as u32).or(ewma);
                lss.change |= LSS_EWMA;
            }
            "cell" => {
                cell_at = p.peek();
                cell = cell_log(&mut p, k).or(cell);
            }
            "prio" => wrr.priority = p.uint(k, 0, u64::from(MAXPRIO)).map_or(wrr.priority, |v| v as u32),
            "allot" => {
                allot_at = p.peek();
                wrr.allot = size_u32(&mut p, k).unwrap_or(wrr.allot);
            }
            "avpkt" => {
                lss.avpkt = size_u32(&mut p, k).unwrap_or(lss.avpkt);
                lss.change |= LSS_AVPKT;
            }
            "mpu" => mpu = size_u32(&mut p, k).unwrap_or(mpu),
            "weight" => wrr.weight = size_u32(&mut p, k).unwrap_or(wrr.weight),
            "split" => {
                if let Some(v) = p.value(k, "a class id like 1:0") {
                    match parse_classid(v.text) {
                        Some(h) => fopt.split = h,
                        None => {
                            p.error(v, format!("\"{}\" is not a class id (tc: \"Invalid split node ID.\")", v.text))
                        }
                    }
                }
                fopt_ok = true;
                split_given = true;
            }
            "defmap" => {
                if let Some(v) = p.value(k, "a hexadecimal priority mask like c0 or c0/ff") {
                    match parse_defmap(v.text) {
                        Some((m, ch)) => (fopt.defmap, fopt.defchange) = (m, ch),
                        None => {
                            p.error(v, format!("\"{}\" is not a defmap: expected MASK32[/MASK] in hexadecimal", v.text))
                        }
                    }
                }
                fopt_ok = true;
            }
            "overhead" => ovh = overhead(&mut p, k).unwrap_or(ovh),
            "linklayer" => atm = linklayer_atm(&mut p, k).unwrap_or(atm),
            "estimator" => {
                let _ = p.value(k, "an interval like 1s");
                let _ = p.value(k, "a time constant like 8s");
                p.warn(k, "estimator accepted but not modelled: no rate estimator, so tc -s shows no \"rate\" line");
            }
            _ => p.unknown(k, "cbq class", CLASS_KNOWN),
        }
    }
    // 1. Link-sharing parameters (tc's order of checks and defaults).
    let pktsize = wrr.allot;
    if rate != 0 {
        wrr.allot = wrr.allot.max(lss.avpkt.wrapping_mul(3) / 2);
    }
    let ewma = ewma.unwrap_or(DEF_EWMA);
    lss.ewma_log = ewma;
    if lss.change & (LSS_OFFTIME | LSS_MAXIDLE) != 0 {
        if lss.avpkt == 0 {
            p.error_at_end("maxburst/minburst need \"avpkt\" (tc: avpkt is required for max/minburst)");
        }
        if bndw == 0 || rate == 0 {
            p.error_at_end(
                "maxburst/minburst need \"bandwidth\" and \"rate\" (tc: bandwidth&rate are required for max/minburst)",
            );
        }
    }
    if wrr.priority == 0 {
        wrr.priority = MAXPRIO;
        if wrr.allot == 0 {
            wrr.allot = lss.avpkt.wrapping_mul(3) / 2;
        }
    }
    if wrr.weight == 0 {
        wrr.weight = if wrr.priority == MAXPRIO { 1 } else { rate };
    }
    if wrr.allot == 0 {
        p.error_at_end("cbq class needs \"allot BYTES\" (or \"avpkt\" to derive it): tc: \"allot\" is required to set WRR parameters");
    }
    if errors_since(diags, n0) {
        return None;
    }
    if lss.change & LSS_MAXIDLE != 0 {
        lss.maxidle = calc_maxidle(bndw, rate, lss.avpkt, ewma, maxburst);
        lss.change |= LSS_EWMA | LSS_AVPKT;
    }
    if lss.change & LSS_OFFTIME != 0 {
        lss.offtime = calc_offtime(bndw, rate, lss.avpkt, ewma, minburst);
        lss.change |= LSS_EWMA | LSS_AVPKT;
    }
    if lss.change & LSS_MINIDLE != 0 {
        lss.minidle = lss.minidle.wrapping_shl(ewma);
        lss.change |= LSS_EWMA;
    }
    let rtab = if rate != 0 {
        match RateTable::new(rate, cell, pktsize, mpu, ovh, atm) {
            Ok(t) => Some(t),
            Err(e) => {
                diags.push(crate::qdisc::diag_error(cell_at.or(allot_at).unwrap_or(c.kind), e));
                return None;
            }
        }
    } else {
        None
    };
    let defmap_without_split = (fopt_ok && !split_given).then_some((fopt.defmap, fopt.defchange));
    Some(ClassSpec {
        rtab,
        lss: (lss.change != 0).then_some(Lss { change: lss.change | LSS_FLAGS, ..lss }),
        wrr: Some(wrr),
        fopt: fopt_ok.then_some(fopt),
        defmap_without_split,
    })
}
