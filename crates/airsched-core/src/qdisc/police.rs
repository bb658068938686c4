//! The `police` action: a token-bucket policer on a filter (Linux `net/sched/act_police.c`,
//! `tcf_police_act`, as in 6.1-6.18; iproute2 6.1 `tc/m_police.c`). docs/tc-police.md.
//!
//! Tokens are time credit in nanoseconds, as in tbf: the bucket holds at most `burst` (the time
//! to send `burst` bytes at `rate`, from tc's 64-ns ticks). A packet of L bytes
//! (`qdisc_pkt_len`: IP datagram + 14) that fits `mtu` computes
//! `toks = min(min(now - t_c, burst) + toks, burst) - l2t(rate, L)` (and the peak bucket, depth
//! l2t(peakrate, mtu), the same way); if both are non-negative it **conforms**: the buckets
//! keep the remainders, `t_c = now`, and the conform action (`tcfp_result`, default `ok`) is the
//! result. Otherwise, or when L exceeds `mtu`, it **exceeds**: one overlimit is counted, nothing
//! of the buckets changes, and the exceed action (tc's default `reclassify`) is the result. A
//! result of `drop` counts a drop on the policer. Every packet the policer sees counts in its
//! bytes/packets. `mtu` 0 (not given) is `255 << cell_log` of tc's rate table, 2040 bytes for
//! the default cell_log 3.
//!
//! What the results do (`tcf_classify`, `tcf_action_exec`, Linux 6.1): `ok`/`pipe` (the last
//! action) take the filter's class; `drop` makes the qdisc drop the packet (counted as its
//! drop); `continue` goes on to the next filter; `reclassify` restarts classification at the
//! first filter, at most 16 times, then drops (`max_reclassify_loop`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub use super::rate::{LinkLayer, RateCfg};
use crate::time::Nanos;

/// A control word of an action (`TC_ACT_*`, iproute2 `action_n2a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// TC_ACT_UNSPEC (-1): go on to the next filter.
    Continue,
    /// TC_ACT_OK (0): the filter's class.
    Ok,
    /// TC_ACT_RECLASSIFY (1): classify again from the first filter.
    Reclassify,
    /// TC_ACT_SHOT (2): drop.
    Drop,
    /// TC_ACT_PIPE (3): the next action; after the last one, like ok.
    Pipe,
}

impl Control {
    /// As tc prints it (`action_n2a`: ok prints `pass`).
    pub fn name(self) -> &'static str {
        match self {
            Control::Continue => "continue",
            Control::Ok => "pass",
            Control::Reclassify => "reclassify",
            Control::Drop => "drop",
            Control::Pipe => "pipe",
        }
    }

    /// tc's `parse_action_control` words (`matches`: a prefix of the word; `ok` exactly).
    pub fn from_word(w: &str) -> Option<Control> {
        use crate::tc::lex::matches;
        if w.is_empty() {
            return None;
        }
        Some(if matches(w, "continue") {
            Control::Continue
        } else if matches(w, "drop") || matches(w, "shot") {
            Control::Drop
        } else if matches(w, "pass") || w == "ok" {
            Control::Ok
        } else if matches(w, "reclassify") {
            Control::Reclassify
        } else if matches(w, "pipe") {
            Control::Pipe
        } else {
            return None;
        })
    }
}

/// What tc sends for one policer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoliceParams {
    /// `rate` (None: an mtu-only policer, which passes what fits `mtu`).
    pub rate: Option<RateCfg>,
    pub peak: Option<RateCfg>,
    /// Bucket depth in 64-ns ticks (`tc_calc_xmittime(rate, burst)`).
    pub burst_ticks: u32,
    /// `burst` in bytes as given (for writing the policer back as tc words).
    pub burst: u32,
    /// `mtu` as given (0: not given).
    pub given_mtu: u32,
    /// Largest packet that can conform, bytes (tc's `mtu`, or 255 << cell_log when 0).
    pub mtu: u32,
    /// Exceed action (`conform-exceed EXCEED/..` or a bare control word).
    pub exceed: Control,
    /// Conform action (`tcfp_result`; `None` = not sent, which is ok).
    pub conform: Option<Control>,
    /// `index N` as given (0: the kernel picks).
    pub index: u32,
    /// The legacy `police` form (u32/fw's own attribute) rather than `action police`.
    pub legacy: bool,
}

/// psched ticks per microsecond (tc reads 1000/64 from /proc/net/psched).
const TICKS_PER_US: f64 = 1000.0 / 64.0;

/// `tc_calc_xmittime(rate, size)`: 64-ns ticks to send `size` bytes at `rate` bytes/s.
pub fn xmittime_ticks(rate_bytes: u64, size: u64) -> u32 {
    let us = 1e6 * (size as f64 / rate_bytes as f64);
    (us * TICKS_PER_US).min(u32::MAX as f64) as u32
}

/// `tc_calc_xmitsize(rate, ticks)`: the bytes tc prints back for a burst.
pub fn xmitsize(rate_bytes: u64, ticks: u32) -> u64 {
    (rate_bytes as f64 * (ticks as f64 / TICKS_PER_US) / 1e6) as u64
}

/// A policer's counters (`tc -s`: Sent bytes/pkt, dropped, overlimits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoliceStats {
    pub bytes: u64,
    pub packets: u64,
    pub drops: u64,
    pub overlimits: u64,
}

/// A 64-bit word the policer updates through `&self`: classification runs through the
/// qdiscs' `&self`, and a simulation must be `Sync` for the Python binding. One thread runs a
/// simulation, so relaxed loads and stores are all it needs (plain moves on x86-64).
#[derive(Debug, Default)]
struct Word(AtomicU64);

impl Word {
    fn new(v: u64) -> Word {
        Word(AtomicU64::new(v))
    }
    #[inline]
    fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
    #[inline]
    fn set(&self, v: u64) {
        self.0.store(v, Relaxed)
    }
}

impl Clone for Word {
    fn clone(&self) -> Word {
        Word::new(self.get())
    }
}

impl PartialEq for Word {
    fn eq(&self, other: &Word) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Word {}

/// A policer as a device lists it for its report: where its filter is and the policer itself
/// (shared with the filter that runs it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicerRef {
    /// The filter's parent (a qdisc or class; `ffff:fff2` for the ingress hook).
    pub parent: super::Handle,
    pub prio: u32,
    /// The classifier kind (`u32`, `basic`, ...).
    pub kind: &'static str,
    pub police: std::sync::Arc<Police>,
}

impl PolicerRef {
    pub fn report(&self) -> PolicerReport {
        PolicerReport {
            parent: self.parent,
            prio: self.prio,
            kind: self.kind,
            index: self.police.index,
            legacy: self.police.params.legacy,
            options: self.police.options_text(),
            stats: self.police.stats(),
        }
    }
}

/// A policer's counters at the end of a run, as `tc -s filter show` reports them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicerReport {
    pub parent: super::Handle,
    pub prio: u32,
    pub kind: &'static str,
    pub index: u32,
    /// The filter's own `police` attribute (u32, fw, basic) rather than `action police`.
    pub legacy: bool,
    /// `print_police`'s text after `police`: `0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop
    /// overhead 0b`.
    pub options: String,
    pub stats: PoliceStats,
}

impl PolicerReport {
    /// The policer's lines of `tc -s filter show` as iproute2 6.1 prints them (seen in the
    /// Debian 6.1 guest), without the install/use times: the legacy attribute
    /// (`tc_print_police`, then the filter's ` Sent B bytes P pkts (dropped D, overlimits O)`)
    /// or the action (`tc_print_action`: `action order 1:  police ...` with its `Action
    /// statistics`). Bytes are what the policer saw: IP + 14 on egress, the IP datagram on
    /// ingress.
    pub fn show_text(&self) -> String {
        let s = &self.stats;
        if self.legacy {
            format!(
                " police {} \n\tref 1 bind 1 \n\n Sent {} bytes {} pkts (dropped {}, overlimits {}) \n",
                self.options, s.bytes, s.packets, s.drops, s.overlimits
            )
        } else {
            format!(
                "\taction order 1:  police {} \n\tref 1 bind 1 \n\tAction statistics:\n\tSent {} bytes {} pkt (dropped {}, overlimits {} requeues 0) \n\tbacklog 0b 0p requeues 0\n",
                self.options, s.bytes, s.packets, s.drops, s.overlimits
            )
        }
    }
}

/// One policer with its state (see [`Word`] for why the state is atomic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Police {
    pub params: PoliceParams,
    /// The index the kernel gave it (1, 2, ... in the order policers are made).
    pub index: u32,
    burst_ns: i64,
    mtu_ptoks: i64,
    /// Tokens (ns, two's complement in the word), peak tokens, last conform time.
    toks: Word,
    ptoks: Word,
    t_c: Word,
    /// bytes, packets, drops, overlimits.
    counters: [Word; 4],
}

impl Police {
    /// A policer made at time 0 with full buckets.
    pub fn new(params: PoliceParams, index: u32) -> Police {
        let burst_ns = params.burst_ticks as i64 * 64;
        let mtu_ptoks = params.peak.map_or(0, |pk| pk.l2t_ns(params.mtu));
        Police {
            params,
            index,
            burst_ns,
            mtu_ptoks,
            toks: Word::new(burst_ns as u64),
            ptoks: Word::new(mtu_ptoks as u64),
            t_c: Word::new(0),
            counters: Default::default(),
        }
    }

    pub fn stats(&self) -> PoliceStats {
        let [b, p, d, o] = &self.counters;
        PoliceStats { bytes: b.get(), packets: p.get(), drops: d.get(), overlimits: o.get() }
    }

    fn set_stats(&self, st: PoliceStats) {
        for (w, v) in self.counters.iter().zip([st.bytes, st.packets, st.drops, st.overlimits]) {
            w.set(v);
        }
    }

    /// `tcf_police_act` for a packet of `len` bytes (`qdisc_pkt_len`) at `now`.
    pub fn act(&self, len: u32, now: Nanos) -> Control {
        let p = &self.params;
        let mut st = self.stats();
        st.bytes += len as u64;
        st.packets += 1;
        let mut ret = p.exceed;
        let mut conformed = false;
        if len <= p.mtu {
            let Some(rate) = &p.rate else {
                // No bucket: the conform action, and no counting (`goto end`).
                self.set_stats(st);
                return p.conform.unwrap_or(Control::Ok);
            };
            let now = now.as_ns();
            let mut toks = (now.saturating_sub(self.t_c.get()) as i64).min(self.burst_ns);
            let mut ptoks = 0i64;
            if let Some(pk) = &p.peak {
                ptoks = (toks + self.ptoks.get() as i64).min(self.mtu_ptoks);
                ptoks -= pk.l2t_ns(len);
            }
            toks = (toks + self.toks.get() as i64).min(self.burst_ns);
            toks -= rate.l2t_ns(len);
            if (toks | ptoks) >= 0 {
                self.t_c.set(now);
                self.toks.set(toks as u64);
                self.ptoks.set(ptoks as u64);
                ret = p.conform.unwrap_or(Control::Ok);
                conformed = true;
            }
        }
        if !conformed {
            st.overlimits += 1;
        }
        if ret == Control::Drop {
            st.drops += 1;
        }
        self.set_stats(st);
        ret
    }

    /// The policer as tc words that make the kernel hold the same one (`airsched export`):
    /// `rate 1000000bit burst 10240 conform-exceed drop`.
    pub fn tc_words(&self) -> String {
        let p = &self.params;
        let mut s = String::new();
        if let Some(r) = &p.rate {
            s += &format!("rate {}bit burst {} ", r.bytes_per_sec * 8, p.burst);
        }
        if p.given_mtu != 0 {
            s += &format!("mtu {} ", p.given_mtu);
        }
        if let Some(pk) = &p.peak {
            s += &format!("peakrate {}bit ", pk.bytes_per_sec * 8);
        }
        if let Some(r) = &p.rate {
            if r.mpu != 0 {
                s += &format!("mpu {} ", r.mpu);
            }
            if r.overhead != 0 {
                s += &format!("overhead {} ", r.overhead);
            }
            if r.linklayer == LinkLayer::Atm {
                s += "linklayer atm ";
            }
        }
        // action_n2a: ok is "pass", continue is "continue".
        s += &format!("conform-exceed {}", p.exceed.name());
        if let Some(c) = p.conform {
            s += &format!("/{}", c.name());
        }
        s
    }

    /// The options as tc 6.1 prints them (`print_police`), after `police`:
    /// `0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop overhead 0b`.
    pub fn options_text(&self) -> String {
        use crate::tc::opts::{format_rate_bytes, format_size};
        let p = &self.params;
        let bytes = p.rate.map_or(0, |r| r.bytes_per_sec);
        let mut s = format!(
            "0x{:x} rate {} burst {} mtu {} ",
            self.index,
            format_rate_bytes(bytes),
            format_size(xmitsize(bytes, p.burst_ticks)),
            format_size(p.mtu as u64)
        );
        if let Some(pk) = &p.peak {
            s += &format!("peakrate {} ", format_rate_bytes(pk.bytes_per_sec));
        }
        s += &format!("action {}", p.exceed.name());
        match p.conform {
            Some(c) if c != Control::Ok => s += &format!("/{} ", c.name()),
            _ => s.push(' '),
        }
        let overhead = p.rate.map_or(0, |r| r.overhead);
        s += &format!("overhead {}", format_size(overhead as u64));
        if p.rate.is_some_and(|r| r.linklayer == LinkLayer::Atm) {
            s += " linklayer atm";
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(bits: u64) -> RateCfg {
        RateCfg { bytes_per_sec: bits / 8, overhead: 0, mpu: 0, linklayer: LinkLayer::Ethernet }
    }

    fn police(bits: u64, burst: u64, exceed: Control) -> Police {
        let r = rate(bits);
        let params = PoliceParams {
            rate: Some(r),
            peak: None,
            burst_ticks: xmittime_ticks(r.bytes_per_sec, burst),
            burst: burst as u32,
            given_mtu: 0,
            mtu: 2040,
            exceed,
            conform: None,
            index: 0,
            legacy: false,
        };
        Police::new(params, 1)
    }

    /// A policer at R passes R*t + burst within a packet, however the load arrives.
    #[test]
    fn passes_rate_times_time_plus_burst_within_a_packet() {
        for (bits, burst, len, gap_ns) in [
            (1_000_000u64, 10_240u64, 1042u32, 1_000_000u64), // 8.3 Mbit/s offered into 1 Mbit/s
            (10_000_000, 15_000, 1514, 200_000),
            (2_000_000, 3_000, 100, 50_000),
            (50_000_000, 100_000, 1500, 100_000), // under the rate: all pass
        ] {
            let p = police(bits, burst, Control::Drop);
            let secs = 2u64;
            let n = secs * 1_000_000_000 / gap_ns;
            let mut passed = 0u64;
            for i in 0..n {
                if p.act(len, Nanos(i * gap_ns)) == Control::Ok {
                    passed += len as u64;
                }
            }
            let t = (n - 1) * gap_ns;
            let offered = n * len as u64;
            let bound = (bits / 8) as f64 * t as f64 / 1e9 + burst as f64;
            let expect = (offered as f64).min(bound);
            assert!(
                (passed as f64 - expect).abs() <= len as f64 + 1.0,
                "{bits} bit/s burst {burst}: passed {passed}, R*t+burst {bound}, offered {offered}"
            );
            let st = p.stats();
            assert_eq!(st.packets, n);
            assert_eq!(st.drops, st.overlimits);
            assert_eq!(st.packets - st.drops, passed / len as u64);
        }
    }

    #[test]
    fn a_full_bucket_passes_burst_bytes_back_to_back() {
        // 10 KiB burst: 9 packets of 1042 bytes fit (9378), the 10th (10420) does not.
        let p = police(1_000_000, 10_240, Control::Drop);
        let passed = (0..20).filter(|_| p.act(1042, Nanos(0)) == Control::Ok).count();
        assert_eq!(passed, 9);
        assert_eq!(p.stats().overlimits, 11);
    }

    #[test]
    fn packets_above_mtu_always_exceed() {
        let p = police(100_000_000, 100_000, Control::Drop);
        assert_eq!(p.act(2041, Nanos(0)), Control::Drop);
        assert_eq!(p.act(2040, Nanos(0)), Control::Ok);
    }

    #[test]
    fn conform_and_exceed_actions_are_returned_as_given() {
        let mut p = police(1_000_000, 2_000, Control::Continue);
        p.params.conform = Some(Control::Pipe);
        let p = Police::new(p.params, 1);
        // A 2000-byte bucket: two 1000-byte packets conform (the second leaves exactly 0), the
        // third exceeds.
        assert_eq!(p.act(1000, Nanos(0)), Control::Pipe);
        assert_eq!(p.act(1000, Nanos(0)), Control::Pipe);
        assert_eq!(p.act(1000, Nanos(0)), Control::Continue);
        // 8 ms later there are 1000 bytes of tokens again.
        assert_eq!(p.act(1000, Nanos(8_000_000)), Control::Pipe);
        assert_eq!(p.stats().drops, 0);
    }

    #[test]
    fn a_peak_bucket_spaces_packets_at_the_peak_rate() {
        let r = rate(1_000_000);
        let params = PoliceParams {
            rate: Some(r),
            peak: Some(rate(2_000_000)),
            burst_ticks: xmittime_ticks(r.bytes_per_sec, 100_000),
            burst: 100_000,
            given_mtu: 1500,
            mtu: 1500,
            exceed: Control::Drop,
            conform: None,
            index: 0,
            legacy: true,
        };
        let p = Police::new(params, 1);
        // The peak bucket holds one 1500-byte packet: two back to back do not both pass.
        assert_eq!(p.act(1500, Nanos(0)), Control::Ok);
        assert_eq!(p.act(1500, Nanos(0)), Control::Drop);
        // 1500 bytes at 2 Mbit/s = 6 ms.
        assert_eq!(p.act(1500, Nanos(5_900_000)), Control::Drop);
        assert_eq!(p.act(1500, Nanos(6_000_000)), Control::Ok);
    }

    #[test]
    fn prints_as_tc_6_1() {
        let p = police(1_000_000, 10_240, Control::Drop);
        assert_eq!(p.options_text(), "0x1 rate 1Mbit burst 10Kb mtu 2Kb action drop overhead 0b");
        let mut q = police(8_000_000, 100_000, Control::Drop);
        q.params.conform = Some(Control::Pipe);
        let q = Police::new(q.params, 3);
        assert_eq!(q.options_text(), "0x3 rate 8Mbit burst 100000b mtu 2Kb action drop/pipe overhead 0b");
        assert_eq!(q.tc_words(), "rate 8000000bit burst 100000 conform-exceed drop/pipe");
    }
}
