//! From a parsed script to qdisc trees: the commands are applied in order to a declarative model
//! of each device (what `tc qdisc|class|filter show` would list after each command), with the
//! kernel's rules for add/replace/change/delete (`net/sched/sch_api.c` `tc_modify_qdisc`,
//! `tc_get_qdisc`, `tc_ctl_tclass`; `cls_api.c` `tc_new_tfilter`, `tc_del_tfilter`), then every
//! configured device's tree is built bottom-up with [`build_qdisc`].
//!
//! Kernel rules kept (and their error texts quoted in the messages):
//! - a qdisc is added at `root` or at a class `M:N` of an existing qdisc; `add` fails if
//!   something non-default is already there (use `replace`) or the handle is taken;
//!   `replace` swaps what is there (keeping it and changing its options when the kind is the
//!   same and no other handle is given); `change` modifies what exists; a qdisc's kind never
//!   changes under the same handle;
//! - without `handle` the kernel picks one: `8001:`, `8002:`, ... (its counter is global and
//!   depends on what ran since boot; airsched starts it at 8001: for each script, across the
//!   devices, skipping handles in use);
//! - deleting a qdisc removes its classes, filters and the qdiscs below it; the class or device
//!   falls back to its default;
//! - classes belong to the qdisc of their major number; a class's parent must exist (HTB in the
//!   kernel quietly makes a class with a missing parent a top-level one: airsched reports it);
//!   giving an HTB leaf its first child deletes the qdisc attached to it (a warning); a class
//!   with children, or one a filter points to, cannot be deleted;
//! - filters attach to a qdisc that can hold them (prio, htb, drr, cbq, sfq, fq_codel), or to a
//!   class of htb/cbq; without `prio` the kernel gives the first filter of a parent 49152 and
//!   each later one one less than the lowest automatic priority there (so later automatic
//!   filters run first); one priority holds one protocol and one classifier kind; u32 node
//!   handles are numbered `800::800`, `800::801`, ... (the next priority's table is `801:`).
//!
//! Deviations, chosen because scripts commonly begin with cleanup lines: deleting something
//! that does not exist is a warning, not an error. Moving an existing qdisc to another parent
//! (`replace`/`link` naming a handle that lives elsewhere) is not modelled (an error).

use super::filter::{kind_name, parse_filter_handle, u32_handle_text, Redirect};
use super::lex::{err, warn, Handle, TcDiag, Tok};
use super::script::{ClassCmd, Command, FilterCmd, Op, QdiscCmd, Script};
use super::virt::{VirtKind, VirtualCmd, VirtualOp};
use crate::qdisc::classify::{Filter, FilterKind, ETH_P_ALL};
use crate::qdisc::kinds::{qdisc_kind, FilterBlock};
use crate::qdisc::{build_qdisc, BuildCx, ClassDecl, Graft, QdiscDecl, QdiscImpl, PSCHED_MTU};

/// An interface of the node the script is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSpec {
    pub name: String,
    pub txqueuelen: u32,
    /// Run seed and this device's stream key (`engine::rng::name_key` of its name); each qdisc
    /// of the device draws from the key mixed with its handle's major (see [`build_trees`]).
    pub seed: u64,
    pub stream: u64,
}

/// Whether a qdisc of kind `kind` makes its classes with `tc class add` (unknown kinds do not:
/// their build reports them).
fn explicit_classes(kind: &str) -> bool {
    qdisc_kind(kind).is_some_and(|r| r.explicit_classes)
}

struct QNode<'a> {
    kind: Tok<'a>,
    handle: Handle,
    /// `Handle::ROOT` or the class it hangs from.
    parent: Handle,
    /// The token to blame for attachment errors (the parent argument).
    at: Tok<'a>,
    opts: Vec<Tok<'a>>,
    end: (u32, u32),
    classes: Vec<CNode<'a>>,
    /// Filters attached to this qdisc or to one of its classes.
    filters: Vec<FNode<'a>>,
    /// u32 root tables allocated in this qdisc (the first is 800:, then 801:, ...).
    u32_tables: u32,
}

struct CNode<'a> {
    at: Tok<'a>,
    classid: Handle,
    /// The parent class, or the qdisc handle for a top-level class.
    parent: Handle,
    kind: Tok<'a>,
    opts: Vec<Tok<'a>>,
    end: (u32, u32),
}

struct FNode<'a> {
    filter: Filter,
    /// u32: full node handle; fw: the mark; matchall: the id.
    handle: u32,
    at: Tok<'a>,
    seq: u64,
    skip: bool,
    /// `action mirred egress redirect dev NAME`.
    redirect: Option<Redirect>,
}

impl FNode<'_> {
    fn kind(&self) -> &'static str {
        kind_name(&self.filter.kind)
    }
    /// Position among the filters of one priority: u32 nodes by node id, others in order.
    fn order_key(&self) -> u32 {
        match self.filter.kind {
            FilterKind::U32 { .. } => self.handle & 0xFFF,
            _ => 0,
        }
    }
}

struct Dev<'a> {
    name: String,
    qdiscs: Vec<QNode<'a>>,
    /// A virtual device (ifb, imq) and whether it exists yet at this point of the script.
    virt: Option<(VirtKind, bool)>,
    /// The clsact egress hook, when added, with its filters.
    clsact: Option<Vec<FNode<'a>>>,
    /// `iptables ... -o THIS -j IMQ --todev N`: the imq device (its index) and the rule's token.
    imq: Option<(usize, Tok<'a>)>,
}

impl<'a> Dev<'a> {
    fn root(&self) -> Option<usize> {
        self.qdiscs.iter().position(|q| q.parent == Handle::ROOT)
    }
    fn by_handle(&self, h: Handle) -> Option<usize> {
        self.qdiscs.iter().position(|q| q.handle == h.qdisc())
    }
    /// The qdisc attached at `parent` (root or a class).
    fn at_parent(&self, parent: Handle) -> Option<usize> {
        self.qdiscs.iter().position(|q| q.parent == parent)
    }
    /// The qdisc and everything below it.
    fn subtree(&self, qi: usize) -> Vec<usize> {
        let mut out = vec![qi];
        let mut i = 0;
        while i < out.len() {
            let major = self.qdiscs[out[i]].handle.major();
            for (j, q) in self.qdiscs.iter().enumerate() {
                if q.parent != Handle::ROOT && q.parent.major() == major && !out.contains(&j) {
                    out.push(j);
                }
            }
            i += 1;
        }
        out
    }
    fn remove_subtree(&mut self, qi: usize) {
        let mut gone = self.subtree(qi);
        gone.sort_unstable();
        for i in gone.into_iter().rev() {
            self.qdiscs.remove(i);
        }
    }
    fn describe(&self, qi: usize) -> String {
        let q = &self.qdiscs[qi];
        format!("{} {}", q.kind.text, q.handle)
    }
}

struct Model<'a> {
    devs: Vec<Dev<'a>>,
    /// The kernel's automatic handle counter (major number).
    autohandle: u16,
    seq: u64,
}

fn place(h: Handle) -> String {
    if h == Handle::ROOT {
        "root".to_string()
    } else {
        format!("parent {h}")
    }
}

impl<'a> Model<'a> {
    fn dev(&self, tok: Tok<'_>, diags: &mut Vec<TcDiag>) -> Option<usize> {
        match self.devs.iter().position(|d| d.name == tok.text) {
            Some(i) if self.devs[i].virt.is_some_and(|(_, made)| !made) => {
                err(diags, tok, format!("device \"{}\" does not exist yet: the line that creates it (ip link add / iptables -j IMQ) comes later (the kernel: Cannot find device)", tok.text));
                None
            }
            Some(i) => Some(i),
            None => {
                let names: Vec<&str> = self.devs.iter().map(|d| d.name.as_str()).collect();
                let known = if names.is_empty() { "no interfaces".to_string() } else { names.join(", ") };
                if tok.text.starts_with('$') {
                    err(diags, tok, format!("\"{}\" is a shell variable: airsched does not expand them; write the interface name ({known})", tok.text));
                } else {
                    err(diags, tok, format!("unknown device \"{}\"; this node has {known}", tok.text));
                }
                None
            }
        }
    }

    /// `qdisc_alloc_handle`: the next free automatic handle of the device.
    fn alloc_handle(&mut self, di: usize) -> Handle {
        for _ in 0..0x8000 {
            self.autohandle = self.autohandle.wrapping_add(1);
            if self.autohandle == 0xFFFF {
                self.autohandle = 0x8000;
            }
            let h = Handle::new(self.autohandle, 0);
            if self.devs[di].by_handle(h).is_none() {
                return h;
            }
        }
        Handle::new(0x8000, 0)
    }

    fn apply(&mut self, cmd: &Command<'a>, diags: &mut Vec<TcDiag>) {
        match cmd {
            Command::Qdisc(c) => self.qdisc(c, diags),
            Command::Class(c) => self.class(c, diags),
            Command::Filter(c) => self.filter(c, diags),
            Command::Virtual(c) => self.virtual_cmd(c, diags),
        }
    }

    // ------------------------------------------------------------------------------------------
    // virtual devices and the egress hook (tc/virt.rs)

    fn virtual_cmd(&mut self, c: &VirtualCmd<'a>, diags: &mut Vec<TcDiag>) {
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
                    } else {
                        self.devs[di].clsact = Some(Vec::new());
                    }
                }
                VirtualOp::ClsactDel { dev } => {
                    let Some(di) = self.dev(*dev, diags) else { continue };
                    if self.devs[di].clsact.take().is_none() {
                        warn(diags, *dev, format!("{} has no clsact qdisc: nothing to delete", dev.text));
                    }
                }
            }
        }
    }

    /// `tc filter add|replace|del dev D egress ...`: the clsact egress hook's filters. They
    /// run in priority order before the root qdisc (`sch_handle_egress`); the first match ends.
    fn egress_filter(&mut self, di: usize, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
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
        match c.op {
            Op::Delete => match c.prio {
                Some((_, p)) => hook.retain(|f| f.filter.prio != p),
                None => hook.clear(),
            },
            Op::Change => err(diags, c.op_tok, "filter change on the egress hook is not modelled; use replace"),
            _ => {
                let (Some(spec), Some(kind)) = (&c.spec, c.kind) else { return };
                let prio = match c.prio {
                    Some((_, p)) => p,
                    None => hook.iter().map(|f| f.filter.prio).filter(|&p| p >= 0x8000).min().map_or(0xC000, |p| p - 1),
                };
                if c.op == Op::Replace {
                    hook.retain(|f| f.filter.prio != prio);
                }
                let protocol = c.protocol.map(|p| p.1).unwrap_or(ETH_P_ALL);
                let filter = Filter {
                    parent: Handle::CLSACT_EGRESS,
                    prio,
                    protocol,
                    kind: spec.kind.clone(),
                    classid: spec.classid,
                    line: c.line,
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
        }
    }

    /// After the script: each real device's egress rules, and the errors of redirects that go
    /// nowhere a packet can go (an unknown device, a real one, an imq, ifb to ifb).
    fn hooks(&self, diags: &mut Vec<TcDiag>) -> Vec<DevHook> {
        let mut out = Vec::new();
        let redirect_err = |diags: &mut Vec<TcDiag>, r: &Redirect, msg: String| {
            diags.push(TcDiag {
                severity: super::lex::Severity::Error,
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
            let mut hook = DevHook { dev: dev.name.clone(), imq: None, rules: Vec::new() };
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
            if hook.imq.is_some() || hook.rules.iter().any(|r| r.to.is_some()) {
                out.push(hook);
            }
        }
        out
    }

    /// A trial build of one qdisc (with at most one class) on its own: tc parses a command's
    /// options before it talks to the kernel, and a command tc or the kernel refuses changes
    /// nothing, so a line whose options (or kind) are refused must not reach the model either.
    /// Its errors go to `diags` and the answer is true; its warnings are dropped (the real
    /// build gives them once).
    #[allow(clippy::too_many_arguments)]
    fn refused(
        &self,
        di: usize,
        kind: Tok<'a>,
        handle: Handle,
        opts: &[Tok<'a>],
        end: (u32, u32),
        class: Option<ClassDecl<'a>>,
        diags: &mut Vec<TcDiag>,
    ) -> bool {
        let decl = QdiscDecl {
            kind,
            handle,
            parent: Handle::ROOT,
            opts: opts.to_vec(),
            end,
            classes: class.into_iter().collect(),
            grafts: Vec::new(),
            filters: Vec::new(),
        };
        let cx = BuildCx {
            dev: self.devs[di].name.clone(),
            txqueuelen: crate::qdisc::DEFAULT_TXQUEUELEN,
            mtu: PSCHED_MTU,
            seed: 1,
            stream: 0,
        };
        let mut trial = Vec::new();
        let _ = build_qdisc(decl, &cx, &mut trial);
        let before = diags.len();
        diags.extend(trial.into_iter().filter(|d| d.severity == super::lex::Severity::Error));
        diags.len() > before
    }

    // ------------------------------------------------------------------------------------------
    // qdisc

    fn qdisc(&mut self, c: &QdiscCmd<'a>, diags: &mut Vec<TcDiag>) {
        let Some(di) = self.dev(c.dev, diags) else { return };
        if c.op == Op::Delete {
            return self.qdisc_del(di, c, diags);
        }
        let Some(kind) = c.kind else { return };
        if kind.text == "cbq" {
            warn(diags, kind, "cbq was removed from Linux in 6.3: kernels since then answer \"Specified qdisc kind is unknown\"; airsched models the 6.2 discipline (htb is the usual replacement)");
        }
        let trial_handle = c.handle.map(|h| h.value).filter(|h| *h != Handle::UNSPEC).unwrap_or(Handle::new(0x8000, 0));
        if self.refused(di, kind, trial_handle, &c.opts, c.end, None, diags) {
            return;
        }
        let dev = &self.devs[di];
        // `parent none` is no parent, as in the kernel.
        let Some(p) = c.parent.filter(|p| p.value != Handle::UNSPEC) else {
            let Some(h) = c.handle else {
                err(diags, c.op_tok, format!("qdisc {} needs root or parent CLASSID (or the handle of an existing qdisc to change); the kernel answers \"Handle cannot be zero\"", c.op.name()));
                return;
            };
            let Some(qi) = dev.by_handle(h.value) else {
                err(
                    diags,
                    h.tok,
                    format!(
                        "no qdisc {} on {}; to create one, say where with root or parent CLASSID",
                        h.value, dev.name
                    ),
                );
                return;
            };
            if c.op == Op::Add {
                err(diags, h.tok, format!("qdisc {} already exists (the kernel: Exclusivity flag on, cannot modify); use change or replace", h.value));
                return;
            }
            return self.change_qdisc(di, qi, c, kind, diags);
        };
        let target = p.value;
        if target != Handle::ROOT {
            let Some(pi) = dev.by_handle(target.qdisc()) else {
                err(
                    diags,
                    p.tok,
                    format!(
                        "no qdisc {} on {}: a qdisc hangs from root or from a class MAJOR:MINOR of an existing qdisc",
                        target.qdisc(),
                        dev.name
                    ),
                );
                return;
            };
            if target.minor() == 0 {
                err(
                    diags,
                    p.tok,
                    format!(
                        "parent {target} is a qdisc, not a class: attach to one of its classes, like {}, or use root",
                        Handle::new(target.major(), 1)
                    ),
                );
                return;
            }
            let pq = &dev.qdiscs[pi];
            if explicit_classes(pq.kind.text) && !pq.classes.iter().any(|cl| cl.classid == target) {
                err(
                    diags,
                    p.tok,
                    format!(
                        "qdisc {} ({}) has no class {target} (the kernel: Specified class not found)",
                        pq.handle, pq.kind.text
                    ),
                );
                return;
            }
        }
        let cur = dev.at_parent(target);
        match (c.handle, cur) {
            (Some(h), Some(qi)) if dev.qdiscs[qi].handle != h.value => {
                if !matches!(c.op, Op::Replace | Op::Link) {
                    err(diags, h.tok, format!("{} already holds qdisc {}; use replace to swap it (the kernel: NLM_F_REPLACE needed to override)", place(target), dev.describe(qi)));
                    return;
                }
                if let Some(oi) = dev.by_handle(h.value) {
                    err(
                        diags,
                        h.tok,
                        format!(
                            "qdisc {} already exists at {}; moving a qdisc to another parent is not modelled",
                            h.value,
                            place(dev.qdiscs[oi].parent)
                        ),
                    );
                    return;
                }
                if c.op == Op::Link {
                    err(diags, h.tok, format!("no qdisc {} to link (link grafts an existing qdisc)", h.value));
                    return;
                }
                self.devs[di].remove_subtree(qi);
                self.create(di, p, h.value, c, kind);
            }
            (Some(h), Some(qi)) => {
                if c.op == Op::Add {
                    err(diags, h.tok, format!("qdisc {} already exists (the kernel: Exclusivity flag on, cannot modify); use change or replace", h.value));
                    return;
                }
                self.change_qdisc(di, qi, c, kind, diags);
            }
            (Some(h), None) => {
                if let Some(oi) = dev.by_handle(h.value) {
                    if c.op == Op::Add {
                        err(
                            diags,
                            h.tok,
                            format!(
                                "handle {} is already used by the qdisc at {}; pick another handle",
                                h.value,
                                place(dev.qdiscs[oi].parent)
                            ),
                        );
                    } else {
                        err(
                            diags,
                            h.tok,
                            format!(
                                "qdisc {} already exists at {}; moving a qdisc to another parent is not modelled",
                                h.value,
                                place(dev.qdiscs[oi].parent)
                            ),
                        );
                    }
                    return;
                }
                if matches!(c.op, Op::Change | Op::Link) {
                    err(
                        diags,
                        c.op_tok,
                        format!(
                            "no qdisc at {} to {}; use add or replace (the kernel: Qdisc not found)",
                            place(target),
                            c.op.name()
                        ),
                    );
                    return;
                }
                self.create(di, p, h.value, c, kind);
            }
            (None, None) => {
                if matches!(c.op, Op::Change | Op::Link) {
                    err(
                        diags,
                        c.op_tok,
                        format!(
                            "no qdisc at {} to {}; use add or replace (the kernel: Qdisc not found)",
                            place(target),
                            c.op.name()
                        ),
                    );
                    return;
                }
                let h = self.alloc_handle(di);
                self.create(di, p, h, c, kind);
            }
            (None, Some(qi)) => {
                let same = dev.qdiscs[qi].kind.text == kind.text;
                match c.op {
                    Op::Add => {
                        err(diags, c.op_tok, format!("{} already holds qdisc {}; use replace or change (the kernel: Exclusivity flag on, cannot modify)", place(target), dev.describe(qi)));
                    }
                    Op::Replace if !same => {
                        // The new qdisc gets its handle while the old one still exists.
                        let h = self.alloc_handle(di);
                        self.devs[di].remove_subtree(qi);
                        self.create(di, p, h, c, kind);
                    }
                    _ => self.change_qdisc(di, qi, c, kind, diags),
                }
            }
        }
    }

    fn create(&mut self, di: usize, p: super::script::HandleArg<'a>, handle: Handle, c: &QdiscCmd<'a>, kind: Tok<'a>) {
        self.devs[di].qdiscs.push(QNode {
            kind,
            handle,
            parent: p.value,
            at: if p.value == Handle::ROOT { kind } else { p.tok },
            opts: c.opts.clone(),
            end: c.end,
            classes: Vec::new(),
            filters: Vec::new(),
            u32_tables: 0,
        });
    }

    fn change_qdisc(&mut self, di: usize, qi: usize, c: &QdiscCmd<'a>, kind: Tok<'a>, diags: &mut Vec<TcDiag>) {
        let q = &mut self.devs[di].qdiscs[qi];
        if q.kind.text != kind.text {
            err(
                diags,
                kind,
                format!("qdisc {} is a {}; {} cannot make it a {} (the kernel: Invalid qdisc name): delete it first, or replace without a handle", q.handle, q.kind.text, c.op.name(), kind.text),
            );
            return;
        }
        if qdisc_kind(kind.text).is_some_and(|r| !r.change_op) {
            err(
                diags,
                kind,
                format!(
                    "qdisc {} is a {}, which has no change operation in the kernel (\"Change operation not supported by specified qdisc\"); {} would leave it as it is: delete it and add it again, or replace it with another handle",
                    q.handle,
                    q.kind.text,
                    c.op.name()
                ),
            );
            return;
        }
        if qdisc_kind(kind.text).is_some_and(|r| r.partial_change) {
            q.opts.extend(c.opts.iter().copied());
        } else {
            q.opts = c.opts.clone();
        }
        q.kind = kind;
        q.end = c.end;
    }

    fn qdisc_del(&mut self, di: usize, c: &QdiscCmd<'a>, diags: &mut Vec<TcDiag>) {
        let Some(p) = c.parent else { return };
        let dev = &self.devs[di];
        let target = p.value;
        if target != Handle::ROOT && dev.by_handle(target.qdisc()).is_none() {
            warn(diags, p.tok, format!("no qdisc {} on {}: nothing to delete", target.qdisc(), dev.name));
            return;
        }
        let Some(qi) = dev.at_parent(target) else {
            if target == Handle::ROOT {
                warn(diags, p.tok, format!("{} has its default root qdisc: nothing to delete (the kernel answers \"Cannot delete qdisc with handle of zero\")", dev.name));
            } else {
                warn(diags, p.tok, format!("no qdisc is attached to {target}: nothing to delete"));
            }
            return;
        };
        if let Some(h) = c.handle {
            if dev.qdiscs[qi].handle != h.value {
                err(
                    diags,
                    h.tok,
                    format!(
                        "the qdisc at {} is {}, not {} (the kernel: Invalid handle)",
                        place(target),
                        dev.describe(qi),
                        h.value
                    ),
                );
                return;
            }
        }
        if let Some(k) = c.kind {
            if dev.qdiscs[qi].kind.text != k.text {
                err(
                    diags,
                    k,
                    format!(
                        "the qdisc at {} is {}, not a {} (the kernel: Invalid qdisc name)",
                        place(target),
                        dev.describe(qi),
                        k.text
                    ),
                );
                return;
            }
        }
        self.devs[di].remove_subtree(qi);
    }

    // ------------------------------------------------------------------------------------------
    // class

    fn class(&mut self, c: &ClassCmd<'a>, diags: &mut Vec<TcDiag>) {
        let Some(di) = self.dev(c.dev, diags) else { return };
        let dev = &self.devs[di];
        let mut qid = c.classid.value.major();
        let pid = c.parent.map(|p| p.value);
        match c.parent {
            Some(p) if p.value != Handle::ROOT && p.value != Handle::UNSPEC => {
                let q1 = p.value.major();
                if qid != 0 && q1 != 0 && qid != q1 {
                    err(diags, c.classid.tok, format!("class {} and its parent {} belong to different qdiscs ({} and {}); a class's major number is its qdisc's", c.classid.value, p.value, Handle::new(qid, 0), Handle::new(q1, 0)));
                    return;
                }
                if q1 != 0 {
                    qid = q1;
                }
            }
            _ => {}
        }
        if qid == 0 {
            match dev.root() {
                Some(ri) => qid = dev.qdiscs[ri].handle.major(),
                None => {
                    err(
                        diags,
                        c.classid.tok,
                        format!("{} has no configured root qdisc to hold class {}", dev.name, c.classid.tok.text),
                    );
                    return;
                }
            }
        }
        let Some(qi) = dev.by_handle(Handle::new(qid, 0)) else {
            let at = c.parent.filter(|p| p.value.major() == qid).map(|p| p.tok).unwrap_or(c.classid.tok);
            err(
                diags,
                at,
                format!(
                    "no qdisc {} on {}: a class belongs to the qdisc of its major number",
                    Handle::new(qid, 0),
                    dev.name
                ),
            );
            return;
        };
        let clid = Handle::new(qid, c.classid.value.minor());
        if clid.minor() == 0 {
            err(
                diags,
                c.classid.tok,
                format!(
                    "class id {clid} has minor 0, which names the qdisc itself; use a minor like {}",
                    Handle::new(qid, 1)
                ),
            );
            return;
        }
        let qhandle = Handle::new(qid, 0);
        let pnorm = match pid {
            None | Some(Handle::ROOT) => qhandle,
            Some(p) if p.minor() == 0 => qhandle,
            Some(p) => Handle::new(qid, p.minor()),
        };
        let q = &dev.qdiscs[qi];
        if let Some(k) = c.kind {
            // A classless qdisc gets the class anyway: build_qdisc says it is classless.
            if c.op != Op::Delete && qdisc_kind(q.kind.text).is_some_and(|r| !r.accepts_class_kind(k.text)) {
                err(
                    diags,
                    k,
                    format!("class kind {} does not match qdisc {}, which is a {}", k.text, q.handle, q.kind.text),
                );
                return;
            }
        }
        if c.op != Op::Delete && explicit_classes(q.kind.text) {
            if let Some(kind) = c.kind {
                let trial = ClassDecl {
                    at: c.classid.tok,
                    classid: clid,
                    parent: qhandle,
                    kind,
                    opts: c.opts.clone(),
                    end: c.end,
                };
                if self.refused(di, q.kind, qhandle, &q.opts, q.end, Some(trial), diags) {
                    return;
                }
            }
        }
        let existing = q.classes.iter().position(|cl| cl.classid == clid);
        let explicit = explicit_classes(q.kind.text);
        match (c.op, existing) {
            (Op::Add, Some(_)) => {
                err(diags, c.classid.tok, format!("class {clid} already exists; use change or replace"));
            }
            (Op::Add | Op::Replace, None) => {
                let mut pnorm = pnorm;
                if explicit && pnorm.minor() != 0 && !q.classes.iter().any(|cl| cl.classid == pnorm) {
                    let at = c.parent.map(|p| p.tok).unwrap_or(c.classid.tok);
                    if matches!(q.kind.text, "htb" | "whtb") {
                        // htb_change_class: `parent = htb_find(parentid)`, NULL makes a root
                        // class (checked on Linux 6.18).
                        warn(diags, at, format!("parent class {pnorm} does not exist: the kernel's HTB makes {clid} a top-level class (parent {qhandle})"));
                        pnorm = qhandle;
                    } else {
                        err(diags, at, format!("parent class {pnorm} does not exist"));
                        return;
                    }
                }
                let Some(kind) = c.kind else { return };
                if qdisc_kind(q.kind.text).is_some_and(|r| r.first_child_drops_leaf_qdisc) && pnorm.minor() != 0 {
                    if let Some(gi) = dev.at_parent(pnorm) {
                        warn(diags, c.classid.tok, format!("class {pnorm} had qdisc {} attached; the kernel deletes it when {pnorm} gets its first child class", dev.describe(gi)));
                        self.devs[di].remove_subtree(gi);
                    }
                }
                let qi = self.devs[di].by_handle(qhandle).unwrap_or(qi);
                self.devs[di].qdiscs[qi].classes.push(CNode {
                    at: c.classid.tok,
                    classid: clid,
                    parent: pnorm,
                    kind,
                    opts: c.opts.clone(),
                    end: c.end,
                });
            }
            (Op::Change | Op::Replace | Op::Link, Some(ci)) => {
                let Some(kind) = c.kind else { return };
                if let Some(p) = c.parent {
                    if q.classes[ci].parent != pnorm {
                        warn(
                            diags,
                            p.tok,
                            format!(
                                "class {clid} stays under {}: a class cannot move to another parent; parent ignored",
                                q.classes[ci].parent
                            ),
                        );
                    }
                }
                let cl = &mut self.devs[di].qdiscs[qi].classes[ci];
                cl.opts = c.opts.clone();
                cl.kind = kind;
                cl.end = c.end;
                cl.at = c.classid.tok;
            }
            (Op::Change | Op::Link, None) => {
                err(diags, c.classid.tok, format!("class {clid} does not exist; use add or replace"));
            }
            (Op::Delete, None) => {
                warn(diags, c.classid.tok, format!("class {clid} does not exist: nothing to delete"));
            }
            (Op::Delete, Some(ci)) => {
                let kids: Vec<String> =
                    q.classes.iter().filter(|cl| cl.parent == clid).map(|cl| cl.classid.to_string()).collect();
                if !kids.is_empty() {
                    err(diags, c.classid.tok, format!("class {clid} has child classes ({}); delete them first (the kernel answers: Device or resource busy)", kids.join(", ")));
                    return;
                }
                if let Some(f) = q.filters.iter().find(|f| f.filter.classid == clid) {
                    err(diags, c.classid.tok, format!("class {clid} is in use by the filter on line {}; delete the filter first (the kernel: class in use)", f.filter.line));
                    return;
                }
                if let Some(gi) = dev.at_parent(clid) {
                    self.devs[di].remove_subtree(gi);
                }
                let qi = self.devs[di].by_handle(qhandle).unwrap_or(qi);
                let q = &mut self.devs[di].qdiscs[qi];
                q.classes.remove(ci);
                q.filters.retain(|f| f.filter.parent != clid);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // filter

    fn filter(&mut self, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let Some(di) = self.dev(c.dev, diags) else { return };
        if c.parent.is_some_and(|p| p.value == Handle::CLSACT_EGRESS) {
            return self.egress_filter(di, c, diags);
        }
        let dev = &self.devs[di];
        let at = c.parent.map(|p| p.tok).unwrap_or(c.op_tok);
        let parent = match c.parent.map(|p| p.value) {
            None | Some(Handle::ROOT) | Some(Handle::UNSPEC) => match dev.root() {
                Some(ri) => dev.qdiscs[ri].handle,
                None => {
                    if c.op == Op::Delete {
                        warn(
                            diags,
                            at,
                            format!(
                                "{} has its default root qdisc, which holds no filters: nothing to delete",
                                dev.name
                            ),
                        );
                    } else {
                        err(diags, at, format!("{} has its default root qdisc, which holds no filters; add a classful root qdisc first", dev.name));
                    }
                    return;
                }
            },
            Some(p) => p,
        };
        let Some(qi) = dev.by_handle(parent.qdisc()) else {
            if c.op == Op::Delete {
                warn(diags, at, format!("no qdisc {} on {}: nothing to delete", parent.qdisc(), dev.name));
            } else {
                err(
                    diags,
                    at,
                    format!(
                        "no qdisc {} on {} to attach the filter to (the kernel: Parent Qdisc doesn't exists)",
                        parent.qdisc(),
                        dev.name
                    ),
                );
            }
            return;
        };
        let q = &dev.qdiscs[qi];
        let filters = qdisc_kind(q.kind.text).map_or(FilterBlock::None, |r| r.filters);
        if filters == FilterBlock::None {
            err(
                diags,
                at,
                format!(
                    "qdisc {} is a {}, which cannot hold filters (prio, htb, whtb, drr, cbq, sfq and fq_codel can)",
                    q.handle, q.kind.text
                ),
            );
            return;
        }
        if parent.minor() != 0 {
            if filters != FilterBlock::QdiscAndClasses {
                err(
                    diags,
                    at,
                    format!("filters attach to the {} qdisc itself ({}), not to its classes", q.kind.text, q.handle),
                );
                return;
            }
            if !q.classes.iter().any(|cl| cl.classid == parent) {
                err(diags, at, format!("qdisc {} has no class {parent} to attach the filter to", q.handle));
                return;
            }
        }
        match c.op {
            Op::Delete => self.filter_del(di, qi, parent, c, diags),
            Op::Change => self.filter_change(di, qi, parent, c, diags),
            _ => self.filter_add(di, qi, parent, c, diags),
        }
    }

    fn filter_add(&mut self, di: usize, qi: usize, parent: Handle, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let (Some(spec), Some(kind)) = (&c.spec, c.kind) else { return };
        let q = &self.devs[di].qdiscs[qi];
        let protocol = c.protocol.map(|p| p.1).unwrap_or(ETH_P_ALL);
        let prio = match c.prio {
            Some((_, p)) => p,
            None => {
                // tcf_auto_prio: one below the lowest priority >= 0x8000 of this parent.
                let low = q
                    .filters
                    .iter()
                    .filter(|f| f.filter.parent == parent && f.filter.prio >= 0x8000)
                    .map(|f| f.filter.prio)
                    .min();
                low.map(|p| p - 1).unwrap_or(0xC000)
            }
        };
        let same_tp: Vec<usize> = q
            .filters
            .iter()
            .enumerate()
            .filter(|(_, f)| f.filter.parent == parent && f.filter.prio == prio)
            .map(|(i, _)| i)
            .collect();
        let mut u32_table = None;
        if let Some(&first) = same_tp.first() {
            let f0 = &q.filters[first];
            if f0.filter.protocol != protocol {
                let at = c.protocol.map(|p| p.0).unwrap_or(kind);
                err(diags, at, format!("priority {prio} of {parent} already holds filters for protocol {:#06x}; one priority takes one protocol (the kernel answers: Invalid argument)", f0.filter.protocol));
                return;
            }
            if f0.kind() != spec.kind_name() {
                err(diags, kind, format!("priority {prio} of {parent} already holds {} filters; give this {} filter another prio (the kernel: Specified filter kind does not match existing one)", f0.kind(), kind.text));
                return;
            }
            match (&f0.filter.kind, &spec.kind) {
                (FilterKind::Fw { mask: m0, .. }, FilterKind::Fw { mask, .. }) if m0 != mask => {
                    err(
                        diags,
                        c.handle.unwrap_or(kind),
                        format!("fw filters of one priority share one mask: priority {prio} uses {m0:#x}"),
                    );
                    return;
                }
                _ => {}
            }
            if let FilterKind::U32 { .. } = spec.kind {
                u32_table = Some(f0.handle & 0xFFF0_0000);
            }
        }
        // The filter's handle.
        let handle = match &spec.kind {
            FilterKind::U32 { .. } => {
                let table = match u32_table {
                    Some(t) => t,
                    None => (0x800 + q.u32_tables.min(0x7FF)) << 20,
                };
                if let Some(ht) = spec.ht {
                    if ht != table {
                        err(diags, kind, format!("ht {} is not this filter's table ({} for priority {prio}); other u32 hash tables are not modelled", u32_handle_text(ht), u32_handle_text(table)));
                        return;
                    }
                }
                if spec.handle & 0xFFF0_0000 != 0 && spec.handle & 0xFFF0_0000 != table {
                    err(
                        diags,
                        c.handle.unwrap_or(kind),
                        format!(
                            "handle {} names another hash table than this filter's ({} for priority {prio})",
                            u32_handle_text(spec.handle),
                            u32_handle_text(table)
                        ),
                    );
                    return;
                }
                if spec.handle & 0x000F_F000 != 0 {
                    err(
                        diags,
                        c.handle.unwrap_or(kind),
                        "u32 hash buckets are not modelled: the handle's middle part must be empty, like 800::1",
                    );
                    return;
                }
                let node = match (spec.handle & 0xFFF, spec.order) {
                    (0, Some(o)) => o,
                    (0, None) => {
                        let used: Vec<u32> = same_tp.iter().map(|&i| q.filters[i].handle & 0xFFF).collect();
                        (0x800..0x1000).find(|n| !used.contains(n)).unwrap_or(0xFFF)
                    }
                    (n, _) => n,
                };
                if u32_table.is_none() {
                    self.devs[di].qdiscs[qi].u32_tables += 1;
                }
                table | node
            }
            FilterKind::Fw { handle, .. } => *handle,
            FilterKind::MatchAll => {
                if spec.handle == 0 {
                    1
                } else {
                    spec.handle
                }
            }
        };
        let q = &mut self.devs[di].qdiscs[qi];
        let dupe = same_tp.iter().copied().find(|&i| match spec.kind {
            FilterKind::MatchAll => true,
            _ => q.filters[i].handle == handle,
        });
        let filter = Filter { parent, prio, protocol, kind: spec.kind.clone(), classid: spec.classid, line: c.line };
        self.seq += 1;
        let node =
            FNode { filter, handle, at: kind, seq: self.seq, skip: spec.skip_sw, redirect: spec.redirect.clone() };
        match (dupe, c.op) {
            (Some(_), Op::Add) => {
                let what = match spec.kind {
                    FilterKind::U32 { .. } => format!("u32 filter {}", u32_handle_text(handle)),
                    FilterKind::Fw { .. } => format!("fw filter for mark {handle:#x}"),
                    FilterKind::MatchAll => "matchall filter".to_string(),
                };
                err(diags, c.handle.unwrap_or(kind), format!("priority {prio} of {parent} already has a {what} (the kernel: Filter already exists); use replace"));
            }
            (Some(i), _) => {
                let seq = q.filters[i].seq;
                q.filters[i] = FNode { seq, ..node };
            }
            (None, _) => q.filters.push(node),
        }
    }

    fn find_filter(q: &QNode<'a>, parent: Handle, prio: u32, kind: &str, handle_text: &str) -> Option<usize> {
        let h = parse_filter_handle(kind, handle_text)?;
        q.filters.iter().position(|f| {
            f.filter.parent == parent
                && f.filter.prio == prio
                && f.kind() == kind
                && match f.filter.kind {
                    FilterKind::U32 { .. } if h & 0xFFF0_0000 == 0 => f.handle & 0xFFF == h & 0xFFF,
                    _ => f.handle == h,
                }
        })
    }

    fn filter_change(&mut self, di: usize, qi: usize, parent: Handle, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let (Some(spec), Some(kind), Some((_, prio)), Some(ht)) = (&c.spec, c.kind, c.prio, c.handle) else { return };
        let q = &self.devs[di].qdiscs[qi];
        let Some(i) = Self::find_filter(q, parent, prio, kind.text, ht.text) else {
            err(
                diags,
                ht,
                format!(
                    "no {} filter with handle {} at priority {prio} of {parent}; use add or replace",
                    kind.text, ht.text
                ),
            );
            return;
        };
        if let (FilterKind::Fw { mask: m0, .. }, FilterKind::Fw { mask, .. }) = (&q.filters[i].filter.kind, &spec.kind)
        {
            if m0 != mask {
                err(diags, ht, format!("fw filters of one priority share one mask: priority {prio} uses {m0:#x}"));
                return;
            }
        }
        let q = &mut self.devs[di].qdiscs[qi];
        let f = &mut q.filters[i];
        f.filter.kind = spec.kind.clone();
        f.filter.classid = spec.classid;
        f.filter.line = c.line;
        if let Some((_, p)) = c.protocol {
            f.filter.protocol = p;
        }
        f.skip = spec.skip_sw;
        f.redirect = spec.redirect.clone();
        f.at = kind;
    }

    fn filter_del(&mut self, di: usize, qi: usize, parent: Handle, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let q = &mut self.devs[di].qdiscs[qi];
        let Some((pt, prio)) = c.prio else {
            let before = q.filters.len();
            q.filters.retain(|f| f.filter.parent != parent);
            if q.filters.len() == before {
                warn(diags, c.op_tok, format!("no filters on {parent}: nothing to delete"));
            }
            self.reset_u32(di, qi);
            return;
        };
        let in_tp = |f: &FNode<'_>| {
            f.filter.parent == parent
                && f.filter.prio == prio
                && !matches!(c.protocol, Some((_, p)) if p != f.filter.protocol)
        };
        if !q.filters.iter().any(in_tp) {
            warn(diags, pt, format!("no filters with priority {prio} on {parent}: nothing to delete"));
            return;
        }
        match (c.handle, c.kind) {
            (Some(ht), Some(kind)) => {
                let tp_kind = q.filters.iter().find(|f| in_tp(f)).map(|f| f.kind()).unwrap_or("");
                if tp_kind != kind.text {
                    err(diags, kind, format!("priority {prio} of {parent} holds {tp_kind} filters, not {} (the kernel: Specified filter kind does not match existing one)", kind.text));
                    return;
                }
                match Self::find_filter(q, parent, prio, kind.text, ht.text) {
                    Some(i) => {
                        q.filters.remove(i);
                    }
                    None => warn(
                        diags,
                        ht,
                        format!(
                            "no {} filter with handle {} at priority {prio}: nothing to delete",
                            kind.text, ht.text
                        ),
                    ),
                }
            }
            _ => q.filters.retain(|f| !in_tp(f)),
        }
        self.reset_u32(di, qi);
    }

    /// The kernel frees a qdisc's u32 table numbering when its last u32 filter goes.
    fn reset_u32(&mut self, di: usize, qi: usize) {
        let q = &mut self.devs[di].qdiscs[qi];
        if !q.filters.iter().any(|f| matches!(f.filter.kind, FilterKind::U32 { .. })) {
            q.u32_tables = 0;
        }
    }

    /// After the script: filters naming classes that do not exist.
    fn check_flowids(&self, diags: &mut Vec<TcDiag>) {
        for dev in &self.devs {
            for q in &dev.qdiscs {
                if !explicit_classes(q.kind.text) {
                    continue;
                }
                for f in &q.filters {
                    let id = f.filter.classid;
                    if id != q.handle && !q.classes.iter().any(|cl| cl.classid == id) {
                        warn(diags, f.at, format!("the filter on line {} sends packets to {id}, which is not a class of {} {}: they are handled as unclassified", f.filter.line, q.kind.text, q.handle));
                    }
                }
            }
        }
    }
}

fn build_node(dev: &Dev<'_>, qi: usize, spec: &DeviceSpec, depth: u32, diags: &mut Vec<TcDiag>) -> Option<QdiscImpl> {
    let q = &dev.qdiscs[qi];
    if depth > 64 {
        err(diags, q.kind, "qdisc tree deeper than 64 levels");
        return None;
    }
    let mut ok = true;
    let mut grafts = Vec::new();
    for (ci, child) in dev.qdiscs.iter().enumerate() {
        if child.parent != Handle::ROOT && child.parent.major() == q.handle.major() && ci != qi {
            match build_node(dev, ci, spec, depth + 1, diags) {
                Some(imp) => grafts.push(Graft { at: child.at, classid: child.parent, qdisc: imp }),
                None => ok = false,
            }
        }
    }
    let classes = q
        .classes
        .iter()
        .map(|c| ClassDecl {
            at: c.at,
            classid: c.classid,
            parent: c.parent,
            kind: c.kind,
            opts: c.opts.clone(),
            end: c.end,
        })
        .collect();
    let filters = sorted_filters(q);
    let cx = BuildCx {
        dev: dev.name.clone(),
        txqueuelen: spec.txqueuelen,
        mtu: PSCHED_MTU,
        seed: spec.seed,
        stream: spec.stream.rotate_left(16) ^ q.handle.major() as u64,
    };
    let decl = QdiscDecl {
        kind: q.kind,
        handle: q.handle,
        parent: q.parent,
        opts: q.opts.clone(),
        end: q.end,
        classes,
        grafts,
        filters,
    };
    let built = build_qdisc(decl, &cx, diags);
    if ok {
        built
    } else {
        None
    }
}

/// `real`: how many of `devices` (the first ones) are the node's real devices; None: every
/// device a virtual-device command names is virtual, the others real.
fn run_model<'a>(
    script: &Script<'a>,
    devices: &[DeviceSpec],
    real: Option<usize>,
    diags: &mut Vec<TcDiag>,
) -> Model<'a> {
    let virt = virtual_devices(script);
    let mut model = Model {
        devs: devices
            .iter()
            .enumerate()
            .map(|(i, d)| Dev {
                name: d.name.clone(),
                qdiscs: Vec::new(),
                virt: virt.iter().find(|v| v.name == d.name && real.is_none_or(|r| i >= r)).map(|v| (v.kind, false)),
                clsact: None,
                imq: None,
            })
            .collect(),
        autohandle: 0x8000,
        seq: 0,
    };
    for cmd in &script.commands {
        model.apply(cmd, diags);
    }
    model.check_flowids(diags);
    model
}

/// Apply the script's commands to the devices and build each configured device's tree.
/// Devices the script leaves at their default (never configured, or whose root was deleted)
/// are not returned. Every qdisc is built with `BuildCx { dev, txqueuelen, mtu: 1514, seed,
/// stream: the device's key rotated by 16 bits ^ handle major }`. A device whose tree has an
/// error is left out.
pub fn build_trees(script: &Script<'_>, devices: &[DeviceSpec], diags: &mut Vec<TcDiag>) -> Vec<(String, QdiscImpl)> {
    build_all(script, devices, None, diags).0
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
}

/// [`build_trees`] and the devices' egress hooks. `real`: how many of `devices` (the first
/// ones) are real; the rest are the script's [`virtual_devices`]. None: decided by name.
pub fn build_all(
    script: &Script<'_>,
    devices: &[DeviceSpec],
    real: Option<usize>,
    diags: &mut Vec<TcDiag>,
) -> (Vec<(String, QdiscImpl)>, Vec<DevHook>) {
    let model = run_model(script, devices, real, diags);
    let hooks = model.hooks(diags);
    let mut out = Vec::new();
    for (dev, spec) in model.devs.iter().zip(devices) {
        let Some(ri) = dev.root() else { continue };
        if out.iter().any(|(n, _): &(String, QdiscImpl)| *n == spec.name) {
            continue;
        }
        if let Some(q) = build_node(dev, ri, spec, 0, diags) {
            out.push((spec.name.clone(), q));
        }
    }
    (out, hooks)
}

/// A qdisc as the script leaves it, before it is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredQdisc {
    pub kind: String,
    pub handle: Handle,
    /// `Handle::ROOT` or the class it is attached to.
    pub parent: Handle,
    /// The option words, separated by single spaces.
    pub options: String,
    pub classes: Vec<DeclaredClass>,
    /// The filters attached to it or to its classes, in the order they run.
    pub filters: Vec<Filter>,
}

/// A class as the script leaves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredClass {
    pub classid: Handle,
    /// The parent class, or the qdisc handle for a top-level class.
    pub parent: Handle,
    pub kind: String,
    pub options: String,
}

/// What the script declares on each configured device, without building anything: the qdiscs
/// in tree order (root first, then depth first in the order they were created). Diagnostics
/// are those of applying the commands (not the disciplines' option errors).
pub fn declared_trees(
    script: &Script<'_>,
    devices: &[DeviceSpec],
    diags: &mut Vec<TcDiag>,
) -> Vec<(String, Vec<DeclaredQdisc>)> {
    let model = run_model(script, devices, None, diags);
    let mut out = Vec::new();
    for dev in &model.devs {
        let Some(ri) = dev.root() else { continue };
        let mut order = Vec::new();
        tree_order(dev, ri, &mut order);
        let qs = order
            .into_iter()
            .map(|qi| {
                let q = &dev.qdiscs[qi];
                DeclaredQdisc {
                    kind: q.kind.text.to_string(),
                    handle: q.handle,
                    parent: q.parent,
                    options: words(&q.opts),
                    classes: q
                        .classes
                        .iter()
                        .map(|c| DeclaredClass {
                            classid: c.classid,
                            parent: c.parent,
                            kind: c.kind.text.to_string(),
                            options: words(&c.opts),
                        })
                        .collect(),
                    filters: sorted_filters(q),
                }
            })
            .collect();
        out.push((dev.name.clone(), qs));
    }
    out
}

fn words(t: &[Tok<'_>]) -> String {
    t.iter().map(|t| t.text).collect::<Vec<_>>().join(" ")
}

fn tree_order(dev: &Dev<'_>, qi: usize, out: &mut Vec<usize>) {
    // Depth first, children in creation order, without recursion.
    let mut stack = vec![qi];
    while let Some(i) = stack.pop() {
        if out.contains(&i) {
            continue;
        }
        out.push(i);
        let major = dev.qdiscs[i].handle.major();
        let children: Vec<usize> = (0..dev.qdiscs.len())
            .filter(|&c| dev.qdiscs[c].parent != Handle::ROOT && dev.qdiscs[c].parent.major() == major)
            .collect();
        stack.extend(children.into_iter().rev());
    }
}

fn sorted_filters(q: &QNode<'_>) -> Vec<Filter> {
    let mut fl: Vec<&FNode<'_>> = q.filters.iter().filter(|f| !f.skip).collect();
    fl.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
    fl.into_iter().map(|f| f.filter.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::kinds::QDISC_KINDS;
    use crate::tc::parse_script;

    /// The error for a filter on a qdisc without a filter block names the kinds that have one:
    /// exactly the registry's.
    #[test]
    fn the_filter_holders_named_in_the_message_are_the_registrys() {
        let text = "tc qdisc add dev eth0 root handle 1: tbf rate 1mbit burst 10k latency 50ms\n\
                    tc filter add dev eth0 parent 1: matchall flowid 1:1";
        let (script, mut diags) = parse_script(text);
        let dev = DeviceSpec { name: "eth0".into(), txqueuelen: 1000, seed: 1, stream: 0 };
        build_trees(&script, &[dev], &mut diags);
        let m = &diags.iter().find(|d| d.message.contains("cannot hold filters")).expect("an error").message;
        let list = m.split_once('(').and_then(|(_, l)| l.strip_suffix(" can)")).expect(m);
        let mut named: Vec<&str> = list.split(", ").flat_map(|w| w.split(" and ")).collect();
        let mut holders: Vec<&str> =
            QDISC_KINDS.iter().filter(|k| k.filters != FilterBlock::None).map(|k| k.name).collect();
        named.sort_unstable();
        holders.sort_unstable();
        assert_eq!(named, holders, "{m}");
    }
}
