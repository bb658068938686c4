//! cake's options as iproute2 reads and prints them (iproute2 6.x `tc/q_cake.c`:
//! `cake_parse_opt`, `cake_print_opt`) and as the kernel keeps them (Linux 6.6
//! `sch_cake.c`: `cake_change`, `cake_init`), with the tin tables of `cake_config_*`.
//!
//! tc sends only the attributes a command gave, and `cake_change` keeps the others, so a
//! `tc qdisc change` (its words arrive after the add's, on a later line) changes only what it
//! names. Within one command the overhead keywords add up (`ethernet ether-vlan` is 42), as in
//! tc; across commands the last `overhead` sent wins, as in the kernel.

use crate::tc::lex::Tok;
use crate::tc::opts::{format_rate_bytes, format_size, format_time_us, OptParser};

/// Diffserv modes (`TCA_CAKE_DIFFSERV_MODE`, values as the kernel numbers them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CakeDiffserv {
    Diffserv3 = 0,
    Diffserv4 = 1,
    Diffserv8 = 2,
    Besteffort = 3,
    Precedence = 4,
}
crate::words::words!(CakeDiffserv:
    "diffserv3" => CakeDiffserv::Diffserv3,
    "diffserv4" => CakeDiffserv::Diffserv4,
    "diffserv8" => CakeDiffserv::Diffserv8,
    "besteffort" => CakeDiffserv::Besteffort,
    "precedence" => CakeDiffserv::Precedence,
    "diffserv" => CakeDiffserv::Diffserv4,
);

/// Flow isolation modes (`TCA_CAKE_FLOW_MODE`): bit 0 source host, bit 1 destination host,
/// bit 2 flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CakeFlowMode {
    Flowblind = 0,
    Srchost = 1,
    Dsthost = 2,
    Hosts = 3,
    Flows = 4,
    DualSrchost = 5,
    DualDsthost = 6,
    TripleIsolate = 7,
}
crate::words::words!(CakeFlowMode:
    "flowblind" => CakeFlowMode::Flowblind,
    "srchost" => CakeFlowMode::Srchost,
    "dsthost" => CakeFlowMode::Dsthost,
    "hosts" => CakeFlowMode::Hosts,
    "flows" => CakeFlowMode::Flows,
    "dual-srchost" => CakeFlowMode::DualSrchost,
    "dual-dsthost" => CakeFlowMode::DualDsthost,
    "triple-isolate" => CakeFlowMode::TripleIsolate,
);

impl CakeFlowMode {
    pub fn bits(self) -> u8 {
        self as u8
    }
    /// Source hosts share fairly (`cake_dsrc`: dual-srchost and triple-isolate).
    pub fn dsrc(self) -> bool {
        self.bits() & 5 == 5
    }
    /// Destination hosts share fairly (`cake_ddst`: dual-dsthost and triple-isolate).
    pub fn ddst(self) -> bool {
        self.bits() & 6 == 6
    }
}

/// Link-layer framing (`TCA_CAKE_ATM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CakeAtm {
    None = 0,
    Atm = 1,
    Ptm = 2,
}
crate::words::words!(CakeAtm: "noatm" => CakeAtm::None, "atm" => CakeAtm::Atm, "ptm" => CakeAtm::Ptm);

/// The ACK filter (`TCA_CAKE_ACK_FILTER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CakeAckFilter {
    None = 0,
    Filter = 1,
    Aggressive = 2,
}
crate::words::words!(CakeAckFilter:
    "no-ack-filter" => CakeAckFilter::None,
    "ack-filter" => CakeAckFilter::Filter,
    "ack-filter-aggressive" => CakeAckFilter::Aggressive,
);

/// `rtt` presets: name, target and interval in microseconds (iproute2 `presets[]`).
pub const RTT_PRESETS: &[(&str, u32, u32)] = &[
    ("datacentre", 5, 100),
    ("lan", 50, 1000),
    ("metro", 500, 10_000),
    ("regional", 1500, 30_000),
    ("internet", 5000, 100_000),
    ("oceanic", 15_000, 300_000),
    ("satellite", 50_000, 1_000_000),
    ("interplanetary", 50_000_000, 1_000_000_000),
];

/// Overhead keywords: name, overhead added (or assigned for `conservative`), framing set, mpu
/// set (iproute2 `cake_parse_opt`).
const OVERHEAD_KEYWORDS: &[(&str, i32, Option<CakeAtm>, Option<u32>)] = &[
    ("ipoa-vcmux", 8, Some(CakeAtm::Atm), None),
    ("ipoa-llcsnap", 16, Some(CakeAtm::Atm), None),
    ("bridged-vcmux", 24, Some(CakeAtm::Atm), None),
    ("bridged-llcsnap", 32, Some(CakeAtm::Atm), None),
    ("pppoa-vcmux", 10, Some(CakeAtm::Atm), None),
    ("pppoa-llc", 14, Some(CakeAtm::Atm), None),
    ("pppoe-vcmux", 32, Some(CakeAtm::Atm), None),
    ("pppoe-llcsnap", 40, Some(CakeAtm::Atm), None),
    ("pppoe-ptm", 30, Some(CakeAtm::Ptm), None),
    ("bridged-ptm", 22, Some(CakeAtm::Ptm), None),
    ("ethernet", 38, None, Some(84)),
    ("ether-vlan", 4, None, None),
    ("docsis", 18, Some(CakeAtm::None), Some(64)),
];

/// The words cake accepts, for the unknown-option error.
pub const KNOWN: &[&str] = &[
    "bandwidth",
    "unlimited",
    "autorate-ingress",
    "rtt",
    "datacentre|lan|metro|regional|internet|oceanic|satellite|interplanetary",
    "besteffort|diffserv3|diffserv4|diffserv8|precedence",
    "flowblind|srchost|dsthost|hosts|flows|dual-srchost|dual-dsthost|triple-isolate",
    "nat",
    "nonat",
    "wash",
    "nowash",
    "split-gso",
    "no-split-gso",
    "ack-filter|ack-filter-aggressive|no-ack-filter",
    "memlimit",
    "ptm|atm|noatm",
    "overhead",
    "mpu",
    "raw",
    "conservative",
    "ethernet|docsis|pppoe-ptm|bridged-ptm|ether-vlan|pppoa-*|pppoe-*|ipoa-*|bridged-*",
    "ingress",
    "egress",
    "fwmark",
];

/// The kernel's cake configuration (`struct cake_sched_data`'s settings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CakeConfig {
    /// Shaper rate in bytes per second; 0 = unlimited.
    pub rate_bps: u64,
    pub autorate: bool,
    pub diffserv: CakeDiffserv,
    pub flow_mode: CakeFlowMode,
    pub nat: bool,
    pub wash: bool,
    pub ingress: bool,
    pub ack_filter: CakeAckFilter,
    pub split_gso: bool,
    /// rtt (CoDel interval) and target, microseconds.
    pub interval_us: u32,
    pub target_us: u32,
    /// CAKE_FLAG_OVERHEAD: an overhead keyword was given (else tc shows `raw`).
    pub overhead_flag: bool,
    pub overhead: i32,
    pub mpu: u32,
    pub atm: CakeAtm,
    /// User memlimit in bytes; 0 = automatic.
    pub memlimit: u32,
    pub fwmark: u32,
}

impl Default for CakeConfig {
    /// `cake_init`.
    fn default() -> Self {
        CakeConfig {
            rate_bps: 0,
            autorate: false,
            diffserv: CakeDiffserv::Diffserv3,
            flow_mode: CakeFlowMode::TripleIsolate,
            nat: false,
            wash: false,
            ingress: false,
            ack_filter: CakeAckFilter::None,
            split_gso: true,
            interval_us: 100_000,
            target_us: 5000,
            overhead_flag: false,
            overhead: 0,
            mpu: 0,
            atm: CakeAtm::None,
            memlimit: 0,
            fwmark: 0,
        }
    }
}

/// One tc command's words (iproute2's locals in `cake_parse_opt`), sent as attributes.
#[derive(Default)]
struct Command {
    bandwidth: Option<u64>,
    autorate: Option<bool>,
    diffserv: Option<CakeDiffserv>,
    flow_mode: Option<CakeFlowMode>,
    nat: Option<bool>,
    wash: Option<bool>,
    split_gso: Option<bool>,
    ingress: Option<bool>,
    ack_filter: Option<CakeAckFilter>,
    interval: u32,
    target: u32,
    atm: Option<CakeAtm>,
    overhead: i32,
    overhead_set: bool,
    overhead_override: bool,
    mpu: u32,
    memlimit: u32,
    fwmark: Option<u32>,
    preset: Option<&'static str>,
}

impl Command {
    /// `cake_change`: apply the attributes tc sent.
    fn apply(self, c: &mut CakeConfig) {
        if let Some(b) = self.bandwidth {
            c.rate_bps = b;
        }
        // tc sends diffserv only when non-zero, and diffserv3 is 0: a change to diffserv3 is
        // not sent (on an add it is the default anyway).
        if let Some(d) = self.diffserv.filter(|&d| d != CakeDiffserv::Diffserv3) {
            c.diffserv = d;
        }
        if let Some(a) = self.atm {
            c.atm = a;
        }
        if let Some(f) = self.flow_mode {
            c.flow_mode = f;
        }
        if self.overhead_set {
            c.overhead = self.overhead;
            c.overhead_flag = true;
        }
        if self.overhead_override {
            c.overhead_flag = false;
        }
        if self.mpu > 0 {
            c.mpu = self.mpu;
        }
        if self.interval > 0 {
            c.interval_us = self.interval.max(1);
        }
        if self.target > 0 {
            c.target_us = self.target.max(1);
        }
        if let Some(a) = self.autorate {
            c.autorate = a;
        }
        if self.memlimit > 0 {
            c.memlimit = self.memlimit;
        }
        if let Some(n) = self.nat {
            c.nat = n;
        }
        if let Some(w) = self.wash {
            c.wash = w;
        }
        if let Some(s) = self.split_gso {
            c.split_gso = s;
        }
        if let Some(i) = self.ingress {
            c.ingress = i;
        }
        if let Some(a) = self.ack_filter {
            c.ack_filter = a;
        }
        if let Some(m) = self.fwmark {
            c.fwmark = m;
        }
    }
}

fn exact<T: crate::words::Words>(w: &str) -> Option<T> {
    T::WORDS.iter().find(|(x, _)| *x == w).map(|(_, v)| *v)
}

/// Parse cake's option words (an add's, then any changes' on later lines) into the kernel's
/// configuration. Errors and warnings go through `p`; tc stops at the first word it does not
/// know, and so does this.
pub fn parse(p: &mut OptParser<'_, '_>) -> CakeConfig {
    let mut conf = CakeConfig::default();
    let mut cmd = Command::default();
    let mut line = None;
    let mut preset_tok: Option<Tok<'_>> = None;
    while let Some(k) = p.next() {
        if line.is_some_and(|l| l != k.line) {
            std::mem::take(&mut cmd).apply(&mut conf);
            preset_tok = None;
        }
        line = Some(k.line);
        let w = k.text;
        if let Some(d) = exact::<CakeDiffserv>(w) {
            cmd.diffserv = Some(d);
        } else if let Some(f) = exact::<CakeFlowMode>(w) {
            cmd.flow_mode = Some(f);
        } else if let Some(a) = exact::<CakeAckFilter>(w) {
            cmd.ack_filter = Some(a);
        } else if let Some(a) = exact::<CakeAtm>(w) {
            cmd.atm = Some(a);
        } else if let Some(&(name, target, interval)) = RTT_PRESETS.iter().find(|r| r.0 == w) {
            if let (Some(prev), Some(t)) = (cmd.preset, preset_tok) {
                p.error(
                    k,
                    format!("duplicate \"{name}\": an rtt preset was already given (\"{prev}\" at column {})", t.col),
                );
                break;
            }
            cmd.preset = Some(name);
            preset_tok = Some(k);
            cmd.target = target;
            cmd.interval = interval;
        } else if let Some(&(_, ov, atm, mpu)) = OVERHEAD_KEYWORDS.iter().find(|o| o.0 == w) {
            cmd.overhead += ov;
            cmd.overhead_set = true;
            if atm.is_some() {
                cmd.atm = atm;
            }
            if let Some(m) = mpu {
                cmd.mpu = m;
            }
        } else {
            match w {
                "bandwidth" => {
                    let Some(bits) = p.rate(k) else { break };
                    cmd.bandwidth = Some(bits / 8);
                    cmd.autorate = Some(false);
                }
                "unlimited" => {
                    cmd.bandwidth = Some(0);
                    cmd.autorate = Some(false);
                }
                "autorate-ingress" => cmd.autorate = Some(true),
                "rtt" => {
                    let Some(t) = p.time(k) else { break };
                    let us = t.as_ns() / 1000;
                    if us > u32::MAX as u64 {
                        p.error(k, "rtt is too large: tc sends it as 32-bit microseconds (at most 4294s)");
                        break;
                    }
                    cmd.interval = us as u32;
                    cmd.target = (cmd.interval / 20).max(1);
                }
                "nat" => cmd.nat = Some(true),
                "nonat" => cmd.nat = Some(false),
                "wash" => cmd.wash = Some(true),
                "nowash" => cmd.wash = Some(false),
                "split-gso" => cmd.split_gso = Some(true),
                "no-split-gso" => cmd.split_gso = Some(false),
                "ingress" => cmd.ingress = Some(true),
                "egress" => cmd.ingress = Some(false),
                "raw" => {
                    cmd.atm = Some(CakeAtm::None);
                    cmd.overhead = 0;
                    cmd.overhead_set = true;
                    cmd.overhead_override = true;
                }
                "conservative" => {
                    cmd.atm = Some(CakeAtm::Atm);
                    cmd.overhead = 48;
                    cmd.overhead_set = true;
                }
                "via-ethernet" => {
                    p.warn(k, "via-ethernet is obsolete and ignored (tc ignores it too: cake strips the Ethernet header itself)");
                }
                "overhead" => {
                    let Some(v) = signed(p, k, -64, 256, "Illegal \"overhead\", valid range is -64 to 256") else {
                        break;
                    };
                    cmd.overhead = v;
                    cmd.overhead_set = true;
                }
                "mpu" => {
                    let Some(v) = signed(p, k, 0, 256, "Illegal \"mpu\", valid range is 0 to 256") else { break };
                    cmd.mpu = v as u32;
                }
                "memlimit" => {
                    let Some(v) = p.size(k) else { break };
                    if v > u32::MAX as u64 {
                        p.error(k, "memlimit is too large: tc sends it as 32 bits (at most 4294967295 bytes)");
                        break;
                    }
                    cmd.memlimit = v as u32;
                }
                "fwmark" => {
                    let Some(v) = p.uint(k, 0, u32::MAX as u64) else { break };
                    cmd.fwmark = Some(v as u32);
                }
                _ => {
                    p.unknown(k, "cake", KNOWN);
                    break;
                }
            }
        }
    }
    cmd.apply(&mut conf);
    conf
}

/// A signed integer in [min, max] as tc's `strtol` checks read it; `msg` is tc's error.
fn signed(p: &mut OptParser<'_, '_>, k: Tok<'_>, min: i64, max: i64, msg: &str) -> Option<i32> {
    let v = p.value(k, &format!("an integer from {min} to {max}"))?;
    match v.text.parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Some(n as i32),
        _ => {
            p.error(v, format!("{msg}; got \"{}\"", v.text));
            None
        }
    }
}

impl CakeConfig {
    /// `tc qdisc show` options, as `cake_print_opt` prints the kernel's dump.
    pub fn options(&self) -> String {
        let mut o = if self.rate_bps > 0 {
            format!("bandwidth {} ", format_rate_bytes(self.rate_bps))
        } else {
            "bandwidth unlimited ".to_string()
        };
        if self.autorate {
            o += "autorate-ingress ";
        }
        o += self.diffserv_name();
        o.push(' ');
        o += self.flow_mode.name();
        o += if self.nat { " nat" } else { " nonat" };
        o += if self.wash { " wash" } else { " nowash" };
        if self.ingress {
            o += " ingress";
        }
        o.push(' ');
        o += self.ack_filter.name();
        o += if self.split_gso { " split-gso" } else { " no-split-gso" };
        o += &format!(" rtt {}", format_time_us(self.interval_us as u64));
        let raw = !self.overhead_flag;
        if raw {
            o += " raw";
        }
        // noatm is left out when raw.
        if self.atm != CakeAtm::None || !raw {
            o.push(' ');
            o += self.atm.name();
        }
        o += &format!(" overhead {}", self.overhead);
        if self.mpu > 0 {
            o += &format!(" mpu {}", self.mpu);
        }
        if self.memlimit > 0 {
            o += &format!(" memlimit {}", format_size(self.memlimit as u64));
        }
        if self.fwmark > 0 {
            o += &format!(" fwmark 0x{:x}", self.fwmark);
        }
        o
    }

    /// The name tc prints for the diffserv mode (`diffserv` is only an input alias).
    pub fn diffserv_name(&self) -> &'static str {
        self.diffserv.name()
    }
}

/// Tins of a diffserv mode: DSCP -> tin table, display order, and per tin (internal index) the
/// rate shift or 7/8 steps and the DRR quantum in unlimited mode.
pub struct TinLayout {
    pub count: usize,
    pub index: &'static [u8; 64],
    pub order: &'static [u8],
}

static BESTEFFORT: [u8; 64] = [0; 64];
static PRECEDENCE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = (i >> 3) as u8;
        i += 1;
    }
    t
};
#[rustfmt::skip]
static DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2,
    1, 2, 1, 2, 1, 2, 1, 2,
    5, 2, 4, 2, 4, 2, 4, 2,
    3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 2, 2, 6, 2, 6, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
    7, 2, 2, 2, 2, 2, 2, 2,
];
#[rustfmt::skip]
static DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 0, 0, 3, 0, 3, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
    3, 0, 0, 0, 0, 0, 0, 0,
];
#[rustfmt::skip]
static DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 2, 0, 2, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
    2, 0, 0, 0, 0, 0, 0, 0,
];
const NORMAL_ORDER: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
const BULK_ORDER: [u8; 4] = [1, 0, 2, 3];

impl CakeDiffserv {
    pub fn layout(self) -> TinLayout {
        match self {
            CakeDiffserv::Besteffort => TinLayout { count: 1, index: &BESTEFFORT, order: &NORMAL_ORDER[..1] },
            CakeDiffserv::Precedence => TinLayout { count: 8, index: &PRECEDENCE, order: &NORMAL_ORDER },
            CakeDiffserv::Diffserv8 => TinLayout { count: 8, index: &DIFFSERV8, order: &NORMAL_ORDER },
            CakeDiffserv::Diffserv4 => TinLayout { count: 4, index: &DIFFSERV4, order: &BULK_ORDER },
            CakeDiffserv::Diffserv3 => TinLayout { count: 3, index: &DIFFSERV3, order: &BULK_ORDER[..3] },
        }
    }

    /// Per tin (internal index): its rate from the base rate, and its DRR quantum for unlimited
    /// mode (`cake_config_besteffort`, `_diffserv3`, `_diffserv4`, `_diffserv8`/`_precedence`).
    pub fn tin_rates(self, rate: u64) -> Vec<(u64, u16)> {
        match self {
            CakeDiffserv::Besteffort => vec![(rate, 65535)],
            CakeDiffserv::Diffserv3 => vec![(rate, 1024), (rate >> 4, 64), (rate >> 2, 256)],
            CakeDiffserv::Diffserv4 => vec![(rate, 1024), (rate >> 4, 64), (rate >> 1, 512), (rate >> 2, 256)],
            CakeDiffserv::Diffserv8 | CakeDiffserv::Precedence => {
                let (mut r, mut q) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let t = (r, q.max(1) as u16);
                        r = ((r as u128 * 7) >> 3) as u64;
                        q = (q * 7) >> 3;
                        t
                    })
                    .collect()
            }
        }
    }
}
