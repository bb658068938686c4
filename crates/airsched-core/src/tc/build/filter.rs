//! `tc filter add|replace|change|del` applied to the model, with the kernel's rules of
//! `net/sched/cls_api.c` (`tc_new_tfilter`, `tc_del_tfilter`): which qdiscs and classes hold
//! filters, automatic priorities, one protocol and classifier kind per priority, u32 node
//! handles (`800::800`, ...); after the script, filters whose flowid names no class; and the
//! order filters run in (priority, then u32 node id, then creation).

use crate::qdisc::classify::{Filter, FilterKind, ETH_P_ALL};
use crate::qdisc::kinds::{qdisc_kind, FilterBlock};
use crate::qdisc::police::Police;
use crate::tc::filter::{parse_filter_handle, u32_handle_text};
use crate::tc::lex::{err, warn, Handle, TcDiag};
use crate::tc::script::{FilterCmd, Op};

use super::{explicit_classes, FNode, Model, QNode};

impl<'a> Model<'a> {
    pub(super) fn filter(&mut self, c: &FilterCmd<'a>, diags: &mut Vec<TcDiag>) {
        let Some(di) = self.dev(c.dev, diags) else { return };
        if c.parent.is_some_and(|p| p.value == Handle::CLSACT_EGRESS) {
            return self.egress_filter(di, c, diags);
        }
        // `ingress`, or `parent ffff:` on a device whose ffff: is the ingress qdisc (a clsact's
        // ffff: itself holds no filters: the kernel refuses them there, as the guest showed).
        if let Some(p) = c.parent.filter(|p| p.value.major() == 0xFFFF && p.value != Handle::ROOT) {
            let here = self.devs[di].by_handle(p.value.qdisc()).is_none();
            match self.devs[di].ingress {
                _ if p.value == Handle::CLSACT_INGRESS => return self.ingress_filter(di, c, diags),
                Some((false, _)) if here => return self.ingress_filter(di, c, diags),
                Some((true, _)) if here && c.op != Op::Delete => {
                    let name = &self.devs[di].name;
                    err(diags, p.tok, format!("{name}'s ffff: is a clsact qdisc, whose hooks are \"ingress\" (ffff:fff2) and \"egress\" (ffff:fff3); it holds no filters itself"));
                    return;
                }
                _ => {}
            }
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
                    "qdisc {} is a {}, which cannot hold filters ({} can)",
                    q.handle,
                    q.kind.text,
                    filter_holders()
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
            // fl_change / basic_change: the handle given, else the lowest free one from 1
            // (idr_alloc_u32).
            FilterKind::Flower(_) | FilterKind::Basic(_) => {
                if spec.handle == 0 {
                    let q = &self.devs[di].qdiscs[qi];
                    let used: Vec<u32> = same_tp.iter().map(|&i| q.filters[i].handle).collect();
                    (1..).find(|n| !used.contains(n)).unwrap_or(1)
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
        let police = spec.police.as_deref().map(|&p| {
            self.police_index += 1;
            let index = if p.index != 0 { p.index } else { self.police_index };
            std::sync::Arc::new(Police::new(p, index))
        });
        let filter =
            Filter { parent, prio, protocol, kind: spec.kind.clone(), classid: spec.classid, line: c.line, police };
        self.seq += 1;
        let node =
            FNode { filter, handle, at: kind, seq: self.seq, skip: spec.skip_sw, redirect: spec.redirect.clone() };
        match (dupe, c.op) {
            (Some(_), Op::Add) => {
                let what = match spec.kind {
                    FilterKind::U32 { .. } => format!("u32 filter {}", u32_handle_text(handle)),
                    FilterKind::Fw { .. } => format!("fw filter for mark {handle:#x}"),
                    FilterKind::MatchAll => "matchall filter".to_string(),
                    FilterKind::Flower(_) => format!("flower filter with handle {handle:#x}"),
                    FilterKind::Basic(_) => format!("basic filter with handle {handle:#x}"),
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
    pub(super) fn check_flowids(&self, diags: &mut Vec<TcDiag>) {
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

pub(super) fn sorted_filters(q: &QNode<'_>) -> Vec<Filter> {
    let mut fl: Vec<&FNode<'_>> = q.filters.iter().filter(|f| !f.skip).collect();
    fl.sort_by_key(|f| (f.filter.prio, f.order_key(), f.seq));
    fl.into_iter().map(|f| f.filter.clone()).collect()
}

/// The kinds that hold filters, as the registry says, for messages: `prio, htb, ... and cake`.
fn filter_holders() -> String {
    let names: Vec<&str> =
        crate::qdisc::kinds::QDISC_KINDS.iter().filter(|k| k.filters != FilterBlock::None).map(|k| k.name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}
