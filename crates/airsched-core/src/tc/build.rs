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
//!
//! The model and the entry points are here; the commands are applied by kind, as the kernel
//! separates `sch_api.c` from `cls_api.c`: `qdisc` (`tc qdisc`, sch_api.c `tc_modify_qdisc`,
//! `tc_get_qdisc`, `qdisc_alloc_handle`), `class` (`tc class`, sch_api.c `tc_ctl_tclass`),
//! `filter` (`tc filter`, cls_api.c) and `virt` (what the lines of tc/virt.rs do: ifb and
//! imq devices, the clsact egress hook and its mirred redirects; tc/virt.rs only parses them).

use crate::qdisc::classify::{Filter, FilterKind};
use crate::qdisc::kinds::qdisc_kind;
use crate::qdisc::{build_qdisc, BuildCx, ClassDecl, Graft, QdiscDecl, QdiscImpl, PSCHED_MTU};
use crate::tc::filter::{kind_name, Redirect};
use crate::tc::lex::{err, Handle, TcDiag, Tok};
use crate::tc::script::{Command, Script};
use crate::tc::virt::VirtKind;

mod class;
mod filter;
mod qdisc;
mod virt;

use filter::sorted_filters;
pub use virt::{virtual_devices, DevHook, VirtualDev};

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
    /// The ingress hook (`ingress` or `clsact` qdisc; whether it came with clsact), with its
    /// filters.
    ingress: Option<(bool, Vec<FNode<'a>>)>,
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
    /// The last policer index given (the kernel's per-namespace action index, from 1).
    police_index: u32,
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

    fn apply(&mut self, cmd: &Command<'a>, diags: &mut Vec<TcDiag>) {
        match cmd {
            Command::Qdisc(c) => self.qdisc(c, diags),
            Command::Class(c) => self.class(c, diags),
            Command::Filter(c) => self.filter(c, diags),
            Command::Virtual(c) => self.virtual_cmd(c, diags),
        }
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
                ingress: None,
                imq: None,
            })
            .collect(),
        autohandle: 0x8000,
        seq: 0,
        police_index: 0,
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
        if let Some(q) = build_qdisc_tree(dev, ri, spec, 0, diags) {
            out.push((spec.name.clone(), q));
        }
    }
    (out, hooks)
}

fn build_qdisc_tree(
    dev: &Dev<'_>,
    qi: usize,
    spec: &DeviceSpec,
    depth: u32,
    diags: &mut Vec<TcDiag>,
) -> Option<QdiscImpl> {
    let q = &dev.qdiscs[qi];
    if depth > 64 {
        err(diags, q.kind, "qdisc tree deeper than 64 levels");
        return None;
    }
    let mut ok = true;
    let mut grafts = Vec::new();
    for (ci, child) in dev.qdiscs.iter().enumerate() {
        if child.parent != Handle::ROOT && child.parent.major() == q.handle.major() && ci != qi {
            match build_qdisc_tree(dev, ci, spec, depth + 1, diags) {
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
        // The ingress hook, as `tc qdisc show` lists it: `qdisc ingress ffff: parent ffff:fff1`
        // (or clsact), with the ingress filters in the order they run.
        let ingress = dev.ingress.as_ref().map(|(clsact, fs)| {
            let mut fs: Vec<&FNode<'_>> = fs.iter().filter(|f| !f.skip).collect();
            fs.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
            DeclaredQdisc {
                kind: if *clsact { "clsact" } else { "ingress" }.to_string(),
                handle: Handle::new(0xFFFF, 0),
                parent: Handle(0xFFFF_FFF1),
                options: String::new(),
                classes: Vec::new(),
                filters: fs.into_iter().map(|f| f.filter.clone()).collect(),
            }
        });
        let Some(ri) = dev.root() else {
            if let Some(i) = ingress {
                out.push((dev.name.clone(), vec![i]));
            }
            continue;
        };
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
            .chain(ingress)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::kinds::{FilterBlock, QDISC_KINDS};
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
