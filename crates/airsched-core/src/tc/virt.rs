//! The lines of a tc script that are not tc but make one qdisc schedule several interfaces:
//! the virtual devices and what feeds them (docs/tc.md, "One qdisc over several interfaces").
//!
//! - `ip link add NAME type ifb` (iproute2 `ip/iplink.c`; `drivers/net/ifb.c`, Linux 6.6): an
//!   intermediate functional block, fed by `action mirred egress redirect dev NAME` filters on
//!   the real devices' clsact egress hook or root qdisc. `modprobe ifb [numifbs=N]` creates
//!   `ifb0` .. `ifbN-1` (the module's default is 2).
//! - `iptables -t mangle -A POSTROUTING -o DEV -j IMQ --todev N` (the out-of-tree IMQ patch,
//!   `net/netfilter/xt_IMQ.c` and `drivers/net/imq.c` of linuximq for 2.6/3.x, what Yip and Kwok
//!   used): every packet leaving DEV goes through `imqN` first; the rule creates `imqN`.
//! - `ip link set [dev] NAME up` (and `txqueuelen N`): accepted; a device is up once it exists.
//! - `tc qdisc add|del dev DEV clsact`: the egress hook that `tc filter add dev DEV egress ...`
//!   attaches to, and the ingress hook (`... ingress ...` or `parent ffff:`); `tc qdisc add dev
//!   DEV ingress` makes the ingress hook alone (parsed by the qdisc parser, kept here as
//!   [`VirtualOp`]s).
//!
//! Anything else these programs can do is an error naming what airsched reads.

use super::lex::{err, matches, parse_c_u32, warn, Cursor, TcDiag, Tok};

/// What kind a virtual device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VirtKind {
    /// `ip link add NAME type ifb`: fed by mirred redirects.
    Ifb,
    /// `imqN`: fed by the iptables IMQ target.
    Imq,
}

impl VirtKind {
    /// The device's default `tx_queue_len`: ifb's `TX_Q_LIMIT` 32, imq's 11000.
    pub fn txqueuelen(self) -> u32 {
        match self {
            VirtKind::Ifb => 32,
            VirtKind::Imq => 11000,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum VirtualOp<'a> {
    /// A virtual device is created (`ip link add`, `modprobe ifb`).
    Add { name: String, kind: VirtKind, at: Tok<'a> },
    /// `ip link del NAME`.
    Del { name: Tok<'a> },
    /// `ip link set NAME up [txqueuelen N]`.
    Set { name: Tok<'a>, txqueuelen: Option<u32> },
    /// `iptables -t mangle -A POSTROUTING -o DEV -j IMQ --todev N`.
    Imq { out: Tok<'a>, todev: u32, at: Tok<'a> },
    /// `tc qdisc add|replace dev DEV clsact`.
    ClsactAdd { dev: Tok<'a> },
    /// `tc qdisc del dev DEV clsact`.
    ClsactDel { dev: Tok<'a> },
    /// `tc qdisc add|replace dev DEV ingress` (`sch_ingress.c`): the receive-path hook.
    IngressAdd { dev: Tok<'a> },
    /// `tc qdisc del dev DEV ingress`.
    IngressDel { dev: Tok<'a> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct VirtualCmd<'a> {
    /// One line may do several things (`modprobe ifb` makes two devices).
    pub ops: Vec<VirtualOp<'a>>,
    pub line: u32,
}

/// The most imq devices the IMQ module makes (`IMQ_MAX_DEVS`).
pub const IMQ_MAX_DEVS: u32 = 16;

/// Whether `word` starts one of the commands this module reads.
pub fn is_virtual_program(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    matches!(base, "ip" | "iptables" | "modprobe")
}

/// Parse `ip link ...`, `iptables ...` or `modprobe ...`; the cursor stands on the program.
pub fn parse<'a>(c: &mut Cursor<'_, 'a>, line: u32, diags: &mut Vec<TcDiag>) -> Option<VirtualCmd<'a>> {
    let prog = c.next()?;
    let base = prog.text.rsplit('/').next().unwrap_or(prog.text);
    let ops = match base {
        "ip" => ip(c, prog, diags)?,
        "iptables" => iptables(c, prog, diags)?,
        _ => modprobe(c, prog, diags)?,
    };
    Some(VirtualCmd { ops, line })
}

fn ip<'a>(c: &mut Cursor<'_, 'a>, prog: Tok<'a>, diags: &mut Vec<TcDiag>) -> Option<Vec<VirtualOp<'a>>> {
    let Some(obj) = c.next() else {
        err(diags, prog, "\"ip\" needs an object: airsched reads ip link add|set|del");
        return None;
    };
    if !matches(obj.text, "link") {
        err(
            diags,
            obj,
            format!(
                "ip {} is not modelled; airsched reads ip link add NAME type ifb and ip link set NAME up",
                obj.text
            ),
        );
        return None;
    }
    let Some(verb) = c.next() else {
        err(diags, obj, "\"ip link\" needs a verb: add, set or del");
        return None;
    };
    // `ip link add [name|dev] NAME type ifb`, `ip link set [dev] NAME up`, `ip link del [dev] NAME`.
    let mut name = None;
    let mut kind = None;
    let mut txqueuelen = None;
    let is_add = matches(verb.text, "add");
    let is_set = matches(verb.text, "set");
    let is_del = matches(verb.text, "delete");
    if !(is_add || is_set || is_del) {
        err(diags, verb, format!("unknown ip link command \"{}\"; airsched reads add, set and del", verb.text));
        return None;
    }
    while let Some(t) = c.next() {
        match t.text {
            "dev" | "name" => name = Some(c.value(t, "a device name, like ifb0", diags)?),
            "type" => kind = Some(c.value(t, "a link type: ifb", diags)?),
            "up" | "down" if is_set => {
                if t.text == "down" {
                    warn(
                        diags,
                        t,
                        "a device that is down drops what is sent to it; airsched keeps every device up, ignored",
                    );
                }
            }
            "txqueuelen" | "qlen" | "txqlen" if !is_del => {
                let v = c.value(t, "a packet count", diags)?;
                match parse_c_u32(v.text) {
                    Some(n) if n > 0 => txqueuelen = Some(n),
                    _ => {
                        err(diags, v, format!("invalid txqueuelen \"{}\"; expected a packet count above 0", v.text));
                        return None;
                    }
                }
            }
            w if name.is_none() && !w.starts_with('-') => name = Some(t),
            w => {
                err(diags, t, format!("ip link {}: \"{w}\" is not modelled; airsched reads ip link add NAME type ifb [txqueuelen N], ip link set NAME up, ip link del NAME", verb.text));
                return None;
            }
        }
    }
    let Some(name) = name else {
        err(diags, verb, format!("ip link {} needs a device name", verb.text));
        return None;
    };
    if is_del {
        return Some(vec![VirtualOp::Del { name }]);
    }
    if is_set {
        return Some(vec![VirtualOp::Set { name, txqueuelen }]);
    }
    match kind {
        Some(k) if k.text == "ifb" => {}
        Some(k) => {
            err(diags, k, format!("link type \"{}\" is not modelled; airsched adds ifb devices (type ifb)", k.text));
            return None;
        }
        None => {
            err(diags, verb, "ip link add needs \"type ifb\": airsched adds ifb devices only");
            return None;
        }
    }
    let mut ops = vec![VirtualOp::Add { name: name.text.to_string(), kind: VirtKind::Ifb, at: name }];
    if txqueuelen.is_some() {
        ops.push(VirtualOp::Set { name, txqueuelen });
    }
    Some(ops)
}

/// `iptables [-t mangle] -A|-I POSTROUTING -o DEV -j IMQ --todev N`.
fn iptables<'a>(c: &mut Cursor<'_, 'a>, prog: Tok<'a>, diags: &mut Vec<TcDiag>) -> Option<Vec<VirtualOp<'a>>> {
    let mut table = None;
    let mut chain = None;
    let mut out = None;
    let mut target = None;
    let mut todev = None;
    while let Some(t) = c.next() {
        match t.text {
            "-t" | "--table" => table = Some(c.value(t, "a table: mangle", diags)?),
            "-A" | "--append" | "-I" | "--insert" => chain = Some(c.value(t, "a chain: POSTROUTING", diags)?),
            "-o" | "--out-interface" => out = Some(c.value(t, "an output device, like wlan0", diags)?),
            "-j" | "--jump" => target = Some(c.value(t, "a target: IMQ", diags)?),
            "--todev" => todev = Some(c.value(t, "an imq device number, like 0", diags)?),
            w => {
                err(diags, t, format!("iptables \"{w}\" is not modelled; airsched reads iptables -t mangle -A POSTROUTING -o DEV -j IMQ --todev N (every packet leaving DEV goes through imqN)"));
                return None;
            }
        }
    }
    match table {
        Some(t) if t.text == "mangle" => {}
        Some(t) => {
            err(diags, t, format!("the IMQ target lives in the mangle table, not \"{}\"", t.text));
            return None;
        }
        None => {
            err(diags, prog, "the IMQ target lives in the mangle table: add -t mangle");
            return None;
        }
    }
    let Some(chain) = chain else {
        err(diags, prog, "iptables needs -A POSTROUTING");
        return None;
    };
    if chain.text != "POSTROUTING" {
        let msg = if chain.text == "PREROUTING" {
            "IMQ in PREROUTING shapes what a device receives; airsched shapes egress: use -A POSTROUTING -o DEV"
                .to_string()
        } else {
            format!("chain \"{}\" is not modelled; airsched reads -A POSTROUTING -o DEV -j IMQ", chain.text)
        };
        err(diags, chain, msg);
        return None;
    }
    let Some(target) = target else {
        err(diags, prog, "iptables needs -j IMQ --todev N");
        return None;
    };
    if target.text != "IMQ" {
        err(diags, target, format!("target \"{}\" is not modelled; airsched reads -j IMQ --todev N", target.text));
        return None;
    }
    let Some(out) = out else {
        err(diags, chain, "-A POSTROUTING needs -o DEV: the device whose packets go through the imq device");
        return None;
    };
    // xt_IMQ: --todev defaults to 0.
    let n = match todev {
        None => 0,
        Some(v) => match parse_c_u32(v.text) {
            Some(n) if n < IMQ_MAX_DEVS => n,
            _ => {
                err(diags, v, format!("invalid --todev \"{}\"; expected 0 to {}", v.text, IMQ_MAX_DEVS - 1));
                return None;
            }
        },
    };
    Some(vec![VirtualOp::Imq { out, todev: n, at: target }])
}

/// `modprobe ifb [numifbs=N]` creates ifb0 .. ifbN-1; `modprobe imq` is accepted (the iptables
/// rule names the imq device).
fn modprobe<'a>(c: &mut Cursor<'_, 'a>, prog: Tok<'a>, diags: &mut Vec<TcDiag>) -> Option<Vec<VirtualOp<'a>>> {
    let Some(module) = c.next() else {
        err(diags, prog, "modprobe needs a module: ifb or imq");
        return None;
    };
    let mut n = 2u32;
    for t in c.by_ref() {
        match t.text.split_once('=') {
            Some(("numifbs", v)) if module.text == "ifb" => match parse_c_u32(v) {
                Some(k) if k <= 64 => n = k,
                _ => {
                    err(diags, t, format!("invalid numifbs \"{v}\"; expected 0 to 64"));
                    return None;
                }
            },
            Some(("numdevs", _)) if module.text == "imq" => {}
            _ => {
                err(diags, t, format!("modprobe {}: \"{}\" is not modelled", module.text, t.text));
                return None;
            }
        }
    }
    match module.text {
        "ifb" => {
            Some((0..n).map(|i| VirtualOp::Add { name: format!("ifb{i}"), kind: VirtKind::Ifb, at: module }).collect())
        }
        "imq" => Some(Vec::new()),
        other => {
            err(diags, module, format!("module \"{other}\" is not modelled; airsched knows ifb and imq"));
            None
        }
    }
}
