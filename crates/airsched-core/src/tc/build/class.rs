//! `tc class add|replace|change|del` applied to the model, as `tc_ctl_tclass` of
//! `net/sched/sch_api.c` and the qdiscs' class operations decide: a class belongs to the qdisc
//! of its major number, its parent must exist, a class with children or filters pointing to it
//! is not deleted, HTB's first child replaces a leaf's qdisc.

use crate::qdisc::kinds::qdisc_kind;
use crate::qdisc::ClassDecl;
use crate::tc::lex::{err, warn, Handle, TcDiag};
use crate::tc::script::{ClassCmd, Op};

use super::{explicit_classes, CNode, Model};

impl<'a> Model<'a> {
    pub(super) fn class(&mut self, c: &ClassCmd<'a>, diags: &mut Vec<TcDiag>) {
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
        // htb_change_class takes any class id of its major but 0 itself (Linux 6.1, 6.18): minor
        // 0 makes a top-level class with the qdisc's own id, which tc shows as `1:` (kernel
        // corpus 36-htb-class-minor0). Other kinds, and a delete, still refuse it here.
        let htb = matches!(dev.qdiscs[qi].kind.text, "htb" | "whtb");
        if clid.minor() == 0 && htb && c.op == Op::Delete {
            err(
                diags,
                c.classid.tok,
                format!(
                    "deleting htb class {clid} (minor 0, the qdisc's own id) is not modelled: the kernel deletes it when no class is under it, which airsched's tree cannot tell (docs/qdisc-htb.md); delete the qdisc instead"
                ),
            );
            return;
        }
        if clid.minor() == 0 && !htb {
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
        if q.kind.text == "ets" {
            return self.ets_class(di, qi, clid, c, diags);
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
                    if q.classes[ci].parent != pnorm && q.kind.text == "hfsc" {
                        // hfsc_change_class: a parent other than the class's is -EINVAL.
                        err(diags, p.tok, format!("class {clid} is under {}, not {pnorm}: hfsc refuses to move a class (the kernel: Invalid argument)", q.classes[ci].parent));
                        return;
                    }
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
                let hfsc = q.kind.text == "hfsc";
                let cl = &mut self.devs[di].qdiscs[qi].classes[ci];
                if hfsc {
                    // The kernel keeps the curves a change does not send: hfsc reads the
                    // earlier commands' words first, the later curves replacing theirs.
                    cl.opts.extend(c.opts.iter().copied());
                } else {
                    cl.opts = c.opts.clone();
                }
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

    /// A class command on an ets qdisc: its bands exist with it (`ets_class_change`), so a command
    /// changes a band's quantum, and nothing is added or deleted.
    fn ets_class(&mut self, di: usize, qi: usize, clid: Handle, c: &ClassCmd<'a>, diags: &mut Vec<TcDiag>) {
        let q = &self.devs[di].qdiscs[qi];
        let qhandle = q.handle;
        if c.op == Op::Delete {
            err(diags, c.classid.tok, format!("class {clid} is a band of ets {qhandle} (bands go with the qdisc) and cannot be deleted (the kernel: Operation not supported)"));
            return;
        }
        let Some(kind) = c.kind else { return };
        let trial =
            ClassDecl { at: c.classid.tok, classid: clid, parent: qhandle, kind, opts: c.opts.clone(), end: c.end };
        if self.refused(di, q.kind, qhandle, &q.opts, q.end, Some(trial), diags) {
            return;
        }
        if c.op == Op::Add {
            err(diags, c.classid.tok, format!("class {clid} already exists as a band of ets {qhandle}; use change"));
            return;
        }
        let q = &mut self.devs[di].qdiscs[qi];
        match q.classes.iter_mut().find(|cl| cl.classid == clid) {
            // A change without options configures nothing.
            Some(_) if c.opts.is_empty() => {}
            Some(cl) => {
                cl.opts = c.opts.clone();
                cl.at = c.classid.tok;
                cl.end = c.end;
            }
            None => q.classes.push(CNode {
                at: c.classid.tok,
                classid: clid,
                parent: qhandle,
                kind,
                opts: c.opts.clone(),
                end: c.end,
            }),
        }
    }
}
