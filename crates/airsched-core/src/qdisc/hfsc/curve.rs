//! HFSC's service curves: what tc sends (`struct tc_service_curve`, iproute2 `tc/q_hfsc.c`
//! `hfsc_get_sc1`/`hfsc_get_sc2`) and the kernel's fixed-point arithmetic on them
//! (`net/sched/sch_hfsc.c`, Linux 6.1-6.18: `internal_sc`, `runtime_sc`, `seg_x2y`, `seg_y2x`,
//! `m2sm`, `m2ism`, `d2dx`, `sm2m`, `dx2d`, `rtsc_y2x`, `rtsc_x2y`, `rtsc_min`).
//!
//! Units as the kernel's: x is psched ticks (64 ns, `PSCHED_SHIFT` 6, 15 625 000 per second),
//! y is bytes, slopes are bytes per tick scaled by 2^`SM_SHIFT` (24 = 30 - PSCHED_SHIFT) and
//! inverse slopes ticks per byte scaled by 2^`ISM_SHIFT` (14 = 8 + PSCHED_SHIFT). All sums wrap
//! as the kernel's u64 arithmetic does (an infinite inverse slope added to a start time wraps).

use crate::tc::lex::{Severity, TcDiag, Tok};
use crate::units::{parse_rate_bps, parse_size_bytes, parse_tc_time_us};

/// `PSCHED_TICKS_PER_SEC` (NSEC_PER_SEC >> PSCHED_SHIFT).
pub(crate) const TICKS_PER_SEC: u64 = 15_625_000;
const SM_SHIFT: u32 = 24;
const ISM_SHIFT: u32 = 14;
const SM_MASK: u64 = (1 << SM_SHIFT) - 1;
const ISM_MASK: u64 = (1 << ISM_SHIFT) - 1;
/// `HT_INFINITY`.
pub(crate) const INFINITY: u64 = u64::MAX;
const USEC_PER_SEC: u64 = 1_000_000;

/// `struct tc_service_curve`: slopes in bytes per second, `d` in microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Sc {
    pub(crate) m1: u32,
    pub(crate) d: u32,
    pub(crate) m2: u32,
}

/// `struct internal_sc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Isc {
    pub(crate) sm1: u64,
    pub(crate) ism1: u64,
    pub(crate) dx: u64,
    pub(crate) dy: u64,
    pub(crate) sm2: u64,
    pub(crate) ism2: u64,
}

/// `struct runtime_sc`: a two-segment curve starting at (x, y).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Rtsc {
    pub(crate) x: u64,
    pub(crate) y: u64,
    pub(crate) sm1: u64,
    pub(crate) ism1: u64,
    pub(crate) dx: u64,
    pub(crate) dy: u64,
    pub(crate) sm2: u64,
    pub(crate) ism2: u64,
}

pub(crate) fn seg_x2y(x: u64, sm: u64) -> u64 {
    (x >> SM_SHIFT).wrapping_mul(sm).wrapping_add((x & SM_MASK).wrapping_mul(sm) >> SM_SHIFT)
}

pub(crate) fn seg_y2x(y: u64, ism: u64) -> u64 {
    if y == 0 {
        0
    } else if ism == INFINITY {
        INFINITY
    } else {
        (y >> ISM_SHIFT).wrapping_mul(ism).wrapping_add((y & ISM_MASK).wrapping_mul(ism) >> ISM_SHIFT)
    }
}

pub(crate) fn m2sm(m: u32) -> u64 {
    ((m as u64) << SM_SHIFT).div_ceil(TICKS_PER_SEC)
}

pub(crate) fn m2ism(m: u32) -> u64 {
    if m == 0 {
        INFINITY
    } else {
        (TICKS_PER_SEC << ISM_SHIFT).div_ceil(m as u64)
    }
}

pub(crate) fn d2dx(d: u32) -> u64 {
    (d as u64 * TICKS_PER_SEC).div_ceil(USEC_PER_SEC)
}

/// What the kernel dumps back (`sm2m`): bytes per second, truncated.
pub(crate) fn sm2m(sm: u64) -> u32 {
    (sm.wrapping_mul(TICKS_PER_SEC) >> SM_SHIFT) as u32
}

pub(crate) fn dx2d(dx: u64) -> u32 {
    (dx.wrapping_mul(USEC_PER_SEC) / TICKS_PER_SEC) as u32
}

impl Isc {
    /// `sc2isc`.
    pub(crate) fn new(sc: Sc) -> Isc {
        let sm1 = m2sm(sc.m1);
        let dx = d2dx(sc.d);
        Isc { sm1, ism1: m2ism(sc.m1), dx, dy: seg_x2y(dx, sm1), sm2: m2sm(sc.m2), ism2: m2ism(sc.m2) }
    }

    /// The curve as the kernel dumps it (`hfsc_dump_sc`).
    pub(crate) fn dump(&self) -> Sc {
        Sc { m1: sm2m(self.sm1), d: dx2d(self.dx), m2: sm2m(self.sm2) }
    }

    /// Convex (or linear): the eligible curve is the deadline curve's second segment only.
    pub(crate) fn convex(&self) -> bool {
        self.sm1 <= self.sm2
    }
}

impl Rtsc {
    /// `rtsc_init`.
    pub(crate) fn new(isc: &Isc, x: u64, y: u64) -> Rtsc {
        Rtsc { x, y, sm1: isc.sm1, ism1: isc.ism1, dx: isc.dx, dy: isc.dy, sm2: isc.sm2, ism2: isc.ism2 }
    }

    /// `rtsc_y2x`: the time the curve reaches `y` bytes.
    pub(crate) fn y2x(&self, y: u64) -> u64 {
        if y < self.y {
            self.x
        } else if y <= self.y.wrapping_add(self.dy) {
            if self.dy == 0 {
                self.x.wrapping_add(self.dx)
            } else {
                self.x.wrapping_add(seg_y2x(y - self.y, self.ism1))
            }
        } else {
            self.x.wrapping_add(self.dx).wrapping_add(seg_y2x(y.wrapping_sub(self.y).wrapping_sub(self.dy), self.ism2))
        }
    }

    /// `rtsc_x2y`: the bytes the curve has reached at time `x`.
    pub(crate) fn x2y(&self, x: u64) -> u64 {
        if x <= self.x {
            self.y
        } else if x <= self.x.wrapping_add(self.dx) {
            self.y.wrapping_add(seg_x2y(x - self.x, self.sm1))
        } else {
            self.y.wrapping_add(self.dy).wrapping_add(seg_x2y(x.wrapping_sub(self.x).wrapping_sub(self.dx), self.sm2))
        }
    }

    /// `rtsc_min`: the minimum of this curve and `isc` started at (x, y).
    pub(crate) fn min_with(&mut self, isc: &Isc, x: u64, y: u64) {
        if isc.sm1 <= isc.sm2 {
            // convex
            if self.x2y(x) < y {
                return;
            }
            self.x = x;
            self.y = y;
            return;
        }
        // concave
        let y1 = self.x2y(x);
        if y1 <= y {
            return;
        }
        let y2 = self.x2y(x.wrapping_add(isc.dx));
        if y2 >= y.wrapping_add(isc.dy) {
            self.x = x;
            self.y = y;
            self.dx = isc.dx;
            self.dy = isc.dy;
            return;
        }
        // The curves intersect: seg_x2y(dx, sm1) == seg_x2y(dx, sm2) + (y1 - y).
        let mut dx = ((y1 - y).wrapping_shl(SM_SHIFT)) / (isc.sm1 - isc.sm2);
        if self.x.wrapping_add(self.dx) > x {
            dx = dx.wrapping_add(self.x.wrapping_add(self.dx) - x);
        }
        let dy = seg_x2y(dx, isc.sm1);
        self.x = x;
        self.y = y;
        self.dx = dx;
        self.dy = dy;
    }
}

// ----------------------------------------------------------------------------------------------
// tc's side: `SC := [ [ m1 BPS ] d SEC ] m2 BPS` or `[ [ umax BYTE ] dmax SEC ] rate BPS`

/// iproute2's `matches(arg, name)`: a non-empty `arg` is a prefix of `name`.
pub(crate) fn matches(arg: &str, name: &str) -> bool {
    !arg.is_empty() && name.starts_with(arg)
}

/// `get_rate`: bytes per second in a u32 (tc reads `0` and `0bit`, which the scenario's rate
/// parser refuses, as zero).
fn rate_bytes(t: &str) -> Result<u32, String> {
    let bits = match parse_rate_bps(t) {
        Ok(b) => b,
        Err(e) => {
            let num = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            if num.parse::<f64>().is_ok_and(|x| x == 0.0) && t.len() > num.len() || t == "0" {
                0
            } else {
                return Err(e.to_string());
            }
        }
    };
    u32::try_from(bits / 8).map_err(|_| format!("rate \"{t}\" is above tc's 32-bit limit of 4294967295 bytes/s"))
}

/// `get_time`: microseconds in a u32.
fn time_us(t: &str) -> Result<u32, String> {
    let ns = parse_tc_time_us(t).map_err(|e| e.to_string())?;
    u32::try_from(ns.0 / 1000).map_err(|_| format!("time \"{t}\" is above tc's limit of 4294967295us"))
}

/// `get_size`: bytes in a u32.
fn size_bytes(t: &str) -> Result<u32, String> {
    let b = parse_size_bytes(t).map_err(|e| e.to_string())?;
    u32::try_from(b).map_err(|_| format!("size \"{t}\" is above tc's limit of 4294967295 bytes"))
}

/// A curve's parse failed: `Shape` if its words are not in the form (tc then tries the other
/// form), `Fatal` if an error was reported.
enum Fail {
    Shape,
    Fatal,
}

struct Words<'t, 'a> {
    toks: &'t [Tok<'a>],
    end: (u32, u32),
}

impl<'a> Words<'_, 'a> {
    fn get(&self, i: usize) -> Option<Tok<'a>> {
        self.toks.get(i).copied()
    }

    /// NEXT_ARG: the word after `i`, or "Command line is incomplete".
    fn next(&self, i: usize, diags: &mut Vec<TcDiag>) -> Result<Tok<'a>, Fail> {
        self.get(i + 1).ok_or_else(|| {
            diags.push(TcDiag::at_pos(
                Severity::Error,
                self.end,
                format!("a value is missing after \"{}\" (tc: Command line is incomplete)", self.toks[i].text),
            ));
            Fail::Fatal
        })
    }

    fn value<T>(
        &self,
        i: usize,
        what: &str,
        parse: fn(&str) -> Result<T, String>,
        diags: &mut Vec<TcDiag>,
    ) -> Result<T, Fail> {
        let v = self.next(i, diags)?;
        parse(v.text).map_err(|e| {
            diags.push(TcDiag::at(Severity::Error, v, format!("{e} (tc: HFSC: Illegal \"{what}\")")));
            Fail::Fatal
        })
    }

    /// `hfsc_get_sc1` from word `i`: returns the curve and the index of the word after it.
    fn sc1(&self, i: usize, diags: &mut Vec<TcDiag>) -> Result<(Sc, usize), Fail> {
        let mut j = i;
        let (mut m1, mut d) = (0, 0);
        if self.get(j).is_some_and(|t| matches(t.text, "m1")) {
            m1 = self.value(j, "m1", rate_bytes, diags)?;
            self.next(j + 1, diags)?;
            j += 2;
        }
        if self.get(j).is_some_and(|t| matches(t.text, "d")) {
            d = self.value(j, "d", time_us, diags)?;
            self.next(j + 1, diags)?;
            j += 2;
        }
        if !self.get(j).is_some_and(|t| matches(t.text, "m2")) {
            return Err(Fail::Shape);
        }
        let m2 = self.value(j, "m2", rate_bytes, diags)?;
        Ok((Sc { m1, d, m2 }, j + 2))
    }

    /// `hfsc_get_sc2`: umax/dmax/rate as the kernel's m1/d/m2 (iproute2's arithmetic in double).
    fn sc2(&self, i: usize, diags: &mut Vec<TcDiag>) -> Result<(Sc, usize), Fail> {
        let mut j = i;
        let (mut umax, mut dmax) = (0u32, 0u32);
        if self.get(j).is_some_and(|t| matches(t.text, "umax")) {
            umax = self.value(j, "umax", size_bytes, diags)?;
            self.next(j + 1, diags)?;
            j += 2;
        }
        if self.get(j).is_some_and(|t| matches(t.text, "dmax")) {
            dmax = self.value(j, "dmax", time_us, diags)?;
            self.next(j + 1, diags)?;
            j += 2;
        }
        let Some(rt) = self.get(j).filter(|t| matches(t.text, "rate")) else { return Err(Fail::Shape) };
        let rate = self.value(j, "rate", rate_bytes, diags)?;
        if umax != 0 && dmax == 0 {
            diags.push(TcDiag::at(
                Severity::Error,
                rt,
                "umax is given but dmax is zero (tc: HFSC: umax given but dmax is zero.)",
            ));
            return Err(Fail::Fatal);
        }
        let concave_m1 = if dmax != 0 { (umax as f64 * USEC_PER_SEC as f64 / dmax as f64).ceil() } else { 0.0 };
        let sc = if dmax != 0 && concave_m1 > rate as f64 {
            Sc { m1: concave_m1 as u32, d: dmax, m2: rate }
        } else {
            // Convex: m1 0 until dmax - umax/rate. A negative difference wraps as the C
            // conversion of a negative double to unsigned does on x86-64.
            let d = (dmax as f64 - umax as f64 * USEC_PER_SEC as f64 / rate as f64).ceil();
            Sc { m1: 0, d: (d as i64) as u32, m2: rate }
        };
        Ok((sc, j + 2))
    }
}

/// The three curves of one `tc class ... hfsc` command, as tc sends them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClassCurves {
    pub(crate) rsc: Option<Sc>,
    pub(crate) fsc: Option<Sc>,
    pub(crate) usc: Option<Sc>,
}

/// `hfsc_parse_class_opt` over a class command's words (a `tc class change` is parsed with the
/// words of the earlier commands before it, so a curve not given again keeps its value, as the
/// kernel keeps a curve whose attribute is not sent). Errors are pushed at the token; `None` if
/// there was one.
pub(crate) fn parse_class(toks: &[Tok<'_>], end: (u32, u32), diags: &mut Vec<TcDiag>) -> Option<ClassCurves> {
    let w = Words { toks, end };
    let mut cc = ClassCurves::default();
    let mut i = 0;
    while let Some(k) = w.get(i) {
        let which = ["rt", "ls", "sc", "ul"].into_iter().find(|n| matches(k.text, n));
        let Some(which) = which else {
            let msg = if matches(k.text, "help") {
                "help: hfsc class options are [ [ rt SC ] [ ls SC ] | [ sc SC ] ] [ ul SC ], SC := [ [ m1 RATE ] d TIME ] m2 RATE or [ [ umax BYTES ] dmax TIME ] rate RATE".to_string()
            } else {
                format!(
                    "unknown hfsc class option \"{}\"; expected rt, ls, sc or ul followed by a service curve (tc: HFSC: What is \"{}\" ?)",
                    k.text, k.text
                )
            };
            diags.push(TcDiag::at(Severity::Error, k, msg));
            return None;
        };
        if w.get(i + 1).is_none() {
            let _ = w.next(i, diags);
            return None;
        }
        let got = match w.sc1(i + 1, diags) {
            Ok(r) => Ok(r),
            Err(Fail::Fatal) => return None,
            Err(Fail::Shape) => w.sc2(i + 1, diags),
        };
        let (sc, next) = match got {
            Ok(r) => r,
            Err(Fail::Fatal) => return None,
            Err(Fail::Shape) => {
                diags.push(TcDiag::at(
                    Severity::Error,
                    toks[i + 1],
                    format!("\"{which}\" needs a service curve: [m1 RATE] [d TIME] m2 RATE, or [umax BYTES] [dmax TIME] rate RATE (tc: HFSC: Illegal \"{which}\")"),
                ));
                return None;
            }
        };
        if sc.m1 == 0 && sc.m2 == 0 {
            diags.push(TcDiag::at(
                Severity::Error,
                k,
                format!("the \"{which}\" curve has two zero slopes (tc: HFSC: Service Curve has two zero slopes)"),
            ));
            return None;
        }
        match which {
            "rt" => cc.rsc = Some(sc),
            "ls" => cc.fsc = Some(sc),
            "sc" => {
                cc.rsc = Some(sc);
                cc.fsc = Some(sc);
            }
            _ => cc.usc = Some(sc),
        }
        i = next;
    }
    if cc.rsc.is_none() && cc.fsc.is_none() && cc.usc.is_none() {
        diags.push(TcDiag::at_pos(
            Severity::Error,
            end,
            "an hfsc class needs at least one of rt, ls or sc (tc: HFSC: no parameters given)",
        ));
        return None;
    }
    if cc.usc.is_some() && cc.fsc.is_none() {
        diags.push(TcDiag::at_pos(
            Severity::Error,
            end,
            "ul needs ls or sc in the same command (tc: HFSC: Upper-limit Service Curve without Link-Share Service Curve)",
        ));
        return None;
    }
    Some(cc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::words;

    #[test]
    fn conversions_are_the_kernels() {
        // 10 Mbit/s = 1 250 000 B/s: sm = ceil(1.25e6 * 2^24 / 15.625e6) = ceil(1342177.28).
        assert_eq!(m2sm(1_250_000), 1_342_178);
        assert_eq!(sm2m(m2sm(1_250_000)), 1_250_000);
        // ism = ceil(15.625e6 * 2^14 / 1.25e6) = 204800 (12.5 ticks per byte, scaled).
        assert_eq!(m2ism(1_250_000), 204_800);
        assert_eq!(m2ism(0), INFINITY);
        // d: 10 ms = 156 250 ticks; 7 us = ceil(109.375) = 110 ticks, dumped back as 7 us.
        assert_eq!(d2dx(10_000), 156_250);
        assert_eq!((d2dx(7), dx2d(d2dx(7))), (110, 7));
        // 1500 bytes at 10 Mbit/s take 1.2 ms = 18 750 ticks.
        let isc = Isc::new(Sc { m1: 0, d: 0, m2: 1_250_000 });
        let r = Rtsc::new(&isc, 1000, 0);
        assert_eq!(r.y2x(1500), 1000 + 18_750);
        assert!(r.x2y(1000 + 18_750).abs_diff(1500) <= 1);
    }

    #[test]
    fn concave_min_keeps_the_burst_only_after_idling() {
        // rt m1 20mbit d 10ms m2 5mbit: 25 000 bytes in the first 10 ms.
        let isc = Isc::new(Sc { m1: 2_500_000, d: 10_000, m2: 625_000 });
        assert!(!isc.convex());
        assert_eq!(isc.dy, 25_000);
        let mut r = Rtsc::new(&isc, 0, 0);
        // Backlogged again right away after 25 000 bytes at x = 10 ms: the curve is below the
        // new start's, so it is kept (no second burst).
        r.min_with(&isc, 156_250, 25_000);
        assert_eq!((r.x, r.y), (0, 0));
        // After a long idle period the new curve starts fresh with the whole burst.
        r.min_with(&isc, 10 * TICKS_PER_SEC, 30_000);
        assert_eq!((r.x, r.y, r.dx, r.dy), (10 * TICKS_PER_SEC, 30_000, isc.dx, isc.dy));
        // Half-way: the curves intersect and the first segment is shortened.
        let mut r = Rtsc::new(&isc, 0, 0);
        r.min_with(&isc, 2 * 156_250, 25_000 + 2_000);
        assert_eq!((r.x, r.y), (2 * 156_250, 27_000));
        assert!(r.dx < isc.dx && r.dx > 0, "{r:?}");
    }

    fn parse(text: &str) -> (Option<ClassCurves>, Vec<TcDiag>) {
        let toks = words(1, text);
        let mut diags = vec![];
        let end = (1, text.len() as u32 + 1);
        (parse_class(&toks, end, &mut diags), diags)
    }

    #[test]
    fn tc_forms_and_errors() {
        let (c, _) = parse("sc m1 0 d 0 m2 10mbit ul m2 20mbit");
        let c = c.unwrap();
        assert_eq!(c.rsc, Some(Sc { m1: 0, d: 0, m2: 1_250_000 }));
        assert_eq!((c.fsc, c.usc.unwrap().m2), (c.rsc, 2_500_000));
        // umax 1500 dmax 5ms rate 1mbit: concave, m1 = 1500 B / 5 ms = 300 000 B/s.
        let (c, _) = parse("rt umax 1500 dmax 5ms rate 1mbit");
        assert_eq!(c.unwrap().rsc, Some(Sc { m1: 300_000, d: 5_000, m2: 125_000 }));
        // umax 1500 dmax 20ms rate 1mbit: convex, d = 20 ms - 12 ms.
        let (c, _) = parse("r umax 1500 dmax 20ms rate 1mbit");
        assert_eq!(c.unwrap().rsc, Some(Sc { m1: 0, d: 8_000, m2: 125_000 }));
        for (text, col, needle) in [
            ("rt m1 1mbit d 10ms", 19, "incomplete"),
            ("rt m1 1mbit rate 2mbit", 4, "needs a service curve"),
            ("ls m2 0", 1, "two zero slopes"),
            ("ul m2 1mbit", 12, "without Link-Share"),
            ("rt m2 10mbat", 7, "Illegal \"m2\""),
            ("rate 1mbit", 1, "What is"),
            ("rt umax 1500 rate 1mbit", 14, "dmax is zero"),
            ("", 1, "no parameters"),
        ] {
            let (c, d) = parse(text);
            assert!(c.is_none(), "{text}");
            assert_eq!(d.len(), 1, "{text}: {d:?}");
            assert!(d[0].message.contains(needle) && d[0].col == col, "{text}: {:?}", d[0]);
        }
    }
}
