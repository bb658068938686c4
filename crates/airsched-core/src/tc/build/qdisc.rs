//! `tc qdisc add|replace|change|del` applied to the model, with the kernel's rules of
//! `net/sched/sch_api.c` (`tc_modify_qdisc`, `tc_get_qdisc`, `qdisc_alloc_handle`: where a qdisc
//! may go, `add` against `replace` against `change`, automatic handles, what a delete takes
//! with it), and the trial build that refuses a line whose options tc or the kernel would
//! refuse before anything changes.

use crate::qdisc::kinds::qdisc_kind;
use crate::qdisc::{build_qdisc, BuildCx, ClassDecl, QdiscDecl, PSCHED_MTU};
use crate::tc::lex::{err, warn, Handle, Severity, TcDiag, Tok};
use crate::tc::script::{HandleArg, Op, QdiscCmd};

use super::{explicit_classes, Model, QNode};

fn place(h: Handle) -> String {
    if h == Handle::ROOT {
        "root".to_string()
    } else {
        format!("parent {h}")
    }
}

impl<'a> Model<'a> {
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

    pub(super) fn qdisc(&mut self, c: &QdiscCmd<'a>, diags: &mut Vec<TcDiag>) {
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
            let any_minor = qdisc_kind(dev.qdiscs[pi].kind.text).is_some_and(|r| r.find_ignores_minor);
            if target.minor() == 0 && !any_minor {
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
            if pq.kind.text == "hfsc" && pq.classes.iter().any(|cl| cl.parent == target) {
                // hfsc_graft_class: `if (cl->level > 0) return -EINVAL`.
                err(
                    diags,
                    p.tok,
                    format!("{target} is an inner class of hfsc {}: qdiscs attach to leaf classes only (the kernel: Invalid argument)", pq.handle),
                );
                return;
            }
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

    fn create(&mut self, di: usize, p: HandleArg<'a>, handle: Handle, c: &QdiscCmd<'a>, kind: Tok<'a>) {
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
        if kind.text == "ets" {
            // ets_qdisc_change (Linux 6.1) writes every band's quantum from the command (the
            // default MTU where none is given): earlier `class change` quanta are gone.
            for cl in &mut q.classes {
                cl.opts.clear();
            }
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

    /// A trial build of one qdisc (with at most one class) on its own: tc parses a command's
    /// options before it talks to the kernel, and a command tc or the kernel refuses changes
    /// nothing, so a line whose options (or kind) are refused must not reach the model either.
    /// Its errors go to `diags` and the answer is true; its warnings are dropped (the real
    /// build gives them once).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn refused(
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
        diags.extend(trial.into_iter().filter(|d| d.severity == Severity::Error));
        diags.len() > before
    }
}
