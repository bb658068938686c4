//! The virtual devices and the egress hook applied to the model: tc/virt.rs parses the
//! `ip link`, `modprobe ifb`, `iptables -j IMQ` and clsact lines (the userland side); this file
//! does what they do: creates ifb and imq devices (`drivers/net/ifb.c`; linuximq's
//! `drivers/net/imq.c`), keeps the clsact egress hook's filters (`net/sched/sch_ingress.c`,
//! `sch_handle_egress` in `net/core/dev.c`) and, after the script, checks the mirred redirects
//! (`net/sched/act_mirred.c`) and gives each real device's egress hook ([`DevHook`]). Also the
//! list of devices a script creates ([`virtual_devices`]).

use crate::qdisc::classify::{Filter, ETH_P_ALL};
use crate::tc::filter::Redirect;
use crate::tc::lex::{err, warn, Handle, Severity, TcDiag};
use crate::tc::script::{Command, FilterCmd, Op, Script};
use crate::tc::virt::{VirtKind, VirtualCmd, VirtualOp};

use super::{FNode, Model};

impl<'a> Model<'a> {
    pub(super) fn virtual_cmd(&mut self, c: &VirtualCmd<'a>, diags: &mut Vec<TcDiag>) {
        for op in &c.ops {
            match op {
                VirtualOp::Add { name, kind, at } => {
                    let Some(i) = self.devs.iter().position(|d| d.name == *name) else { continue };
                    match self.devs[i].virt {
                        None => err(diags, *at, format!("{name} is a real device of this node; name the ifb another way, like ifb0 (the kernel: File exists)")),
                        Some((_, true)) => err(diags, *at, format!("{name} exists already (the kernel: File exists)")),
                        Some((_, false)) => self.devs[i].virt = Some((*kind, true)),
                    }
                }
                VirtualOp::Set { name, .. } => {
                    self.dev(*name, diags);
                }
                VirtualOp::Del { name } => {
                    err(diags, *name, "ip link del is not modelled: a scenario's devices live for the whole run");
                }
                VirtualOp::Imq { out, todev, at } => {
                    let Some(di) = self.dev(*out, diags) else { continue };
                    if self.devs[di].virt.is_some() {
                        err(
                            diags,
                            *out,
                            format!("{} is a virtual device: IMQ captures what leaves a real device", out.text),
                        );
                        continue;
                    }
                    let name = format!("imq{todev}");
                    let Some(ii) = self.devs.iter().position(|d| d.name == name) else { continue };
                    self.devs[ii].virt = Some((VirtKind::Imq, true));
                    if self.devs[di].imq.is_some_and(|(j, _)| j != ii) {
                        err(diags, *at, format!("{} already goes through another imq device; the first matching IMQ rule takes the packet, so this one never would", out.text));
                        continue;
                    }
                    self.devs[di].imq = Some((ii, *at));
                }
                VirtualOp::ClsactAdd { dev } => {
                    let Some(di) = self.dev(*dev, diags) else { continue };
                    if self.devs[di].clsact.is_some() {
                        err(
                            diags,
                            *dev,
                            format!(
                                "{} has a clsact qdisc already (the kernel: Exclusivity flag on, cannot modify)",
                                dev.text
                            ),
                        );
                    } else if self.devs[di].ingress.is_some() {
                        err(diags, *dev, format!("{} has an ingress qdisc at ffff: already (the kernel: Exclusivity flag on, cannot modify)", dev.text));
                    } else {
                        self.devs[di].clsact = Some(Vec::new());
                        self.devs[di].ingress = Some((true, Vec::new()));
                    }
                }
                VirtualOp::ClsactDel { dev } => {
                    let Some(di) = self.dev(*dev, diags) else { continue };
                    if self.devs[di].clsact.take().is_none() {
                        warn(diags, *dev, format!("{} has no clsact qdisc: nothing to delete", dev.text));
                    } else {
                        self.devs[di].ingress = None;
                    }
                }
                VirtualOp::IngressAdd { dev } => {
                    let Some(di) = self.dev(*dev, diags) else { continue };
                    if self.devs[di].virt.is_some() {
                        err(diags, *dev, format!("{} is a virtual device: its receive path is not modelled (an ifb sends what it is given back out)", dev.text));
                    } else if self.devs[di].ingress.is_some() {
                        err(diags, *dev, format!("{} has an ingress or clsact qdisc already (the kernel: Exclusivity flag on, cannot modify)", dev.text));
                    } else {
                        self.devs[di].ingress = Some((false, Vec::new()));
                    }
                }
                VirtualOp::IngressDel { dev } => {
                    let Some(di) = self.dev(*dev, diags) else { continue };
                    match self.devs[di].ingress {
                        Some((false, _)) => self.devs[di].ingress = None,
                        Some((true, _)) => {
                            err(diags, *dev, format!("{}'s ffff: is a clsact qdisc; delete it as clsact", dev.text))
                        }
                        None => warn(diags, *dev, format!("{} has no ingress qdisc: nothing to delete", dev.text)),
                    }
                }
            }
        }
    }

    /// `tc filter add|replace|del dev D egress ...`: the clsact egress hook's filters. They
    /// run in priority order before the root qdisc (`sch_handle_egress`); the first match ends.
    pub(super) fn egress_filter(&mut self, di: usize, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let at = c.parent.map(|p| p.tok).unwrap_or(c.op_tok);
        let name = self.devs[di].name.clone();
        let Some(hook) = self.devs[di].clsact.as_mut() else {
            if c.op == Op::Delete {
                warn(diags, at, format!("{name} has no clsact qdisc: nothing to delete"));
            } else {
                err(diags, at, format!("{name} has no clsact qdisc to hold egress filters; add \"tc qdisc add dev {name} clsact\" first"));
            }
            return;
        };
        if delete_or_change(hook, c, "egress", diags) {
            return;
        }
        let (Some(spec), Some(kind)) = (&c.spec, c.kind) else { return };
        let prio = new_prio(hook, c);
        let protocol = c.protocol.map(|p| p.1).unwrap_or(ETH_P_ALL);
        if spec.police.is_some() {
            err(
                diags,
                kind,
                "a policer on the clsact egress hook is not modelled; put the filter on the device's root qdisc",
            );
            return;
        }
        let filter = Filter {
            parent: Handle::CLSACT_EGRESS,
            prio,
            protocol,
            kind: spec.kind.clone(),
            classid: spec.classid,
            line: c.line,
            police: None,
        };
        self.seq += 1;
        hook.push(FNode {
            filter,
            handle: spec.handle,
            at: kind,
            seq: self.seq,
            skip: spec.skip_sw,
            redirect: spec.redirect.clone(),
        });
    }

    /// `tc filter add|replace|del dev D ingress ...` or `parent ffff: ...`: the ingress hook's
    /// filters (`sch_handle_ingress`, Linux 6.1). They run in priority order on every packet the
    /// device receives; the first match's actions decide (a policer's drop drops the packet).
    pub(super) fn ingress_filter(&mut self, di: usize, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let at = c.parent.map(|p| p.tok).unwrap_or(c.op_tok);
        let name = self.devs[di].name.clone();
        let Some((_, hook)) = self.devs[di].ingress.as_mut() else {
            if c.op == Op::Delete {
                warn(diags, at, format!("{name} has no ingress or clsact qdisc: nothing to delete"));
            } else {
                err(diags, at, format!("{name} has no ingress or clsact qdisc to hold ingress filters; add \"tc qdisc add dev {name} ingress\" first"));
            }
            return;
        };
        if delete_or_change(hook, c, "ingress", diags) {
            return;
        }
        let (Some(spec), Some(kind)) = (&c.spec, c.kind) else { return };
        if spec.redirect.is_some() {
            err(diags, kind, "mirred on the ingress hook is not modelled; airsched polices on ingress (action police)");
            return;
        }
        let prio = new_prio(hook, c);
        let protocol = c.protocol.map(|p| p.1).unwrap_or(ETH_P_ALL);
        let police = spec.police.as_deref().map(|&p| {
            self.police_index += 1;
            let index = if p.index != 0 { p.index } else { self.police_index };
            std::sync::Arc::new(crate::qdisc::police::Police::new(p, index))
        });
        if police.is_none() {
            warn(
                diags,
                kind,
                "an ingress filter without a policer only classifies: on the receive path its class has no effect",
            );
        }
        let filter = Filter {
            parent: Handle::CLSACT_INGRESS,
            prio,
            protocol,
            kind: spec.kind.clone(),
            classid: spec.classid,
            line: c.line,
            police,
        };
        self.seq += 1;
        let Some((_, hook)) = self.devs[di].ingress.as_mut() else { return };
        hook.push(FNode { filter, handle: spec.handle, at: kind, seq: self.seq, skip: spec.skip_sw, redirect: None });
    }

    /// After the script: each real device's egress rules, and the errors of redirects that go
    /// nowhere a packet can go (an unknown device, a real one, an imq, ifb to ifb).
    pub(super) fn hooks(&self, diags: &mut Vec<TcDiag>) -> Vec<DevHook> {
        let mut out = Vec::new();
        let redirect_err = |diags: &mut Vec<TcDiag>, r: &Redirect, msg: String| {
            diags.push(TcDiag {
                severity: Severity::Error,
                line: r.line,
                col: r.col,
                token: r.dev.clone(),
                message: msg,
            });
        };
        for dev in &self.devs {
            // Filters with a redirect that no hook runs: below the root, or on a virtual device.
            let root_handle = dev.root().map(|ri| dev.qdiscs[ri].handle);
            for f in dev.qdiscs.iter().flat_map(|q| q.filters.iter()).chain(dev.clsact.iter().flatten()) {
                if let Some(r) = &f.redirect {
                    if dev.virt.is_some() {
                        redirect_err(diags, r, format!("a redirect from {} (a virtual device) to another: the kernel drops packets sent from one ifb to another (mirred-usage: do not redirect from one IFB device to another); a loop", dev.name));
                    } else if Some(f.filter.parent) != root_handle && f.filter.parent != Handle::CLSACT_EGRESS {
                        redirect_err(diags, r, format!("mirred in a filter at {} is not modelled: attach the redirecting filter to the root qdisc ({}) or to the clsact egress hook", f.filter.parent, root_handle.map_or("none".to_string(), |h| h.to_string())));
                    }
                }
            }
            if dev.virt.is_some() {
                // A virtual device's qdiscs may police too.
                let policers = dev_policers(dev);
                if !policers.is_empty() {
                    out.push(DevHook {
                        dev: dev.name.clone(),
                        imq: None,
                        rules: Vec::new(),
                        ingress: Vec::new(),
                        policers,
                    });
                }
                continue;
            }
            let mut rules: Vec<&FNode<'a>> = Vec::new();
            if let Some(hook) = &dev.clsact {
                rules.extend(hook.iter().filter(|f| !f.skip));
            }
            if rules.iter().all(|f| f.redirect.is_none()) {
                rules.clear();
                if let Some(ri) = dev.root() {
                    let q = &dev.qdiscs[ri];
                    if dev.virt.is_none()
                        && q.filters.iter().any(|f| f.redirect.is_some() && f.filter.parent == q.handle)
                    {
                        rules.extend(q.filters.iter().filter(|f| f.filter.parent == q.handle && !f.skip));
                    }
                }
            }
            rules.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
            let mut hook = DevHook {
                dev: dev.name.clone(),
                imq: None,
                rules: Vec::new(),
                ingress: Vec::new(),
                policers: dev_policers(dev),
            };
            for f in &rules {
                let to = match &f.redirect {
                    None => None,
                    Some(r) => match self.devs.iter().find(|d| d.name == r.dev) {
                        _ if r.dev == dev.name => {
                            redirect_err(diags, r, format!("{} redirects to itself: a loop", dev.name));
                            continue;
                        }
                        Some(d) if d.virt == Some((VirtKind::Ifb, true)) => Some(r.dev.clone()),
                        Some(d) if d.virt.is_some_and(|(k, _)| k == VirtKind::Imq) => {
                            redirect_err(diags, r, format!("{} is an imq device, which takes packets from the iptables IMQ target, not from mirred; redirect to an ifb device", r.dev));
                            continue;
                        }
                        Some(d) if d.virt.is_none() => {
                            redirect_err(diags, r, format!("a mirred redirect to {}, a real device, is not modelled (it would bypass routing); redirect to an ifb device made with ip link add NAME type ifb", r.dev));
                            continue;
                        }
                        _ => {
                            let ifbs: Vec<&str> = self
                                .devs
                                .iter()
                                .filter(|d| d.virt == Some((VirtKind::Ifb, true)))
                                .map(|d| d.name.as_str())
                                .collect();
                            let known = if ifbs.is_empty() {
                                "no ifb device exists (add one: ip link add ifb0 type ifb)".to_string()
                            } else {
                                format!("the ifb devices are {}", ifbs.join(", "))
                            };
                            redirect_err(diags, r, format!("redirect to unknown device \"{}\"; {known}", r.dev));
                            continue;
                        }
                    },
                };
                hook.rules.push(HookRule { filter: f.filter.clone(), to });
            }
            if let Some((ii, at)) = dev.imq {
                if hook.rules.iter().any(|r| r.to.is_some()) {
                    err(diags, at, format!("{} goes through {} and is redirected to an ifb as well; chaining IMQ and IFB is not modelled", dev.name, self.devs[ii].name));
                }
                hook.imq = Some(self.devs[ii].name.clone());
                hook.rules.clear();
            }
            if let Some((_, fs)) = &dev.ingress {
                let mut fs: Vec<&FNode<'a>> = fs.iter().filter(|f| !f.skip).collect();
                fs.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
                hook.ingress = fs.into_iter().map(|f| f.filter.clone()).collect();
            }
            if hook.imq.is_some()
                || hook.rules.iter().any(|r| r.to.is_some())
                || !hook.ingress.is_empty()
                || !hook.policers.is_empty()
            {
                out.push(hook);
            }
        }
        out
    }
}

/// A virtual device a script creates (`ip link add NAME type ifb`, `modprobe ifb`, an
/// `iptables -j IMQ --todev N` rule), with its txqueuelen (the kind's default unless
/// `ip link set NAME txqueuelen N` changes it), in order of creation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualDev {
    pub name: String,
    pub kind: VirtKind,
    pub txqueuelen: u32,
}

/// The virtual devices a script creates. A caller adds them to the node's devices before
/// building (a name that is a real device is reported by the build).
pub fn virtual_devices(script: &Script<'_>) -> Vec<VirtualDev> {
    let mut out: Vec<VirtualDev> = Vec::new();
    for c in &script.commands {
        let Command::Virtual(v) = c else { continue };
        for op in &v.ops {
            match op {
                VirtualOp::Add { name, kind, .. } if !out.iter().any(|d| d.name == *name) => {
                    out.push(VirtualDev { name: name.clone(), kind: *kind, txqueuelen: kind.txqueuelen() });
                }
                VirtualOp::Imq { todev, .. } => {
                    let name = format!("imq{todev}");
                    if !out.iter().any(|d| d.name == name) {
                        out.push(VirtualDev { name, kind: VirtKind::Imq, txqueuelen: VirtKind::Imq.txqueuelen() });
                    }
                }
                VirtualOp::Set { name, txqueuelen: Some(q) } => {
                    if let Some(d) = out.iter_mut().find(|d| d.name == name.text) {
                        d.txqueuelen = *q;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The policers of a device's filters that run (not `skip_sw`): its qdiscs' in tree order, each
/// qdisc's in the order they run, then its ingress hook's.
/// A filter command on a hook's list (`which`: "egress" or "ingress", for the message): a
/// delete takes out the filters of its priority (all without one); a change is refused. True
/// when the command was one of the two.
fn delete_or_change(hook: &mut Vec<FNode>, c: &FilterCmd<'_>, which: &str, diags: &mut Vec<TcDiag>) -> bool {
    match c.op {
        Op::Delete => match c.prio {
            Some((_, p)) => hook.retain(|f| f.filter.prio != p),
            None => hook.clear(),
        },
        Op::Change => err(diags, c.op_tok, format!("filter change on the {which} hook is not modelled; use replace")),
        _ => return false,
    }
    true
}

/// The priority of a filter added to a hook (tc's automatic one when the command gives none:
/// one below the lowest automatic priority there, from 0xC000 down); a replace first takes out
/// the filter it replaces.
fn new_prio(hook: &mut Vec<FNode>, c: &FilterCmd<'_>) -> u32 {
    let prio = match c.prio {
        Some((_, p)) => p,
        None => hook.iter().map(|f| f.filter.prio).filter(|&p| p >= 0x8000).min().map_or(0xC000, |p| p - 1),
    };
    if c.op == Op::Replace {
        hook.retain(|f| f.filter.prio != prio);
    }
    prio
}

fn dev_policers(dev: &super::Dev<'_>) -> Vec<crate::qdisc::police::PolicerRef> {
    let mut out = Vec::new();
    let mut add = |f: &FNode<'_>| {
        if let (Some(p), false) = (&f.filter.police, f.skip) {
            out.push(crate::qdisc::police::PolicerRef {
                parent: f.filter.parent,
                prio: f.filter.prio,
                kind: f.kind(),
                police: p.clone(),
            });
        }
    };
    let mut qs: Vec<&super::QNode<'_>> = dev.qdiscs.iter().collect();
    qs.sort_by_key(|q| q.handle);
    for q in qs {
        let mut fs: Vec<&FNode<'_>> = q.filters.iter().collect();
        fs.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
        fs.into_iter().for_each(&mut add);
    }
    if let Some((_, fs)) = &dev.ingress {
        let mut fs: Vec<&FNode<'_>> = fs.iter().collect();
        fs.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
        fs.into_iter().for_each(&mut add);
    }
    out
}

/// One rule of a real device's egress hook: a filter and, if it redirects, the ifb device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookRule {
    pub filter: Filter,
    pub to: Option<String>,
}

/// What happens to a real device's packets before its root qdisc: the IMQ device all of them
/// go through, or the rules (the clsact egress filters, else the root qdisc's own filters when
/// one of them redirects) whose first match decides: its `to`, or the device's own qdisc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevHook {
    pub dev: String,
    pub imq: Option<String>,
    pub rules: Vec<HookRule>,
    /// The ingress hook's filters in the order they run (empty: none), each with its policer.
    pub ingress: Vec<Filter>,
    /// Every policer on the device's filters, qdiscs' and ingress hook's, in tree order.
    pub policers: Vec<crate::qdisc::police::PolicerRef>,
}
