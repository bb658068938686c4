//! Configuration as the kernel applies it: `cbq_init` (the link class) and `cbq_change_class`
//! for a new class, with its link-sharing (`lss`), round-robin (`wrr`) and split/defmap (`fopt`)
//! attributes, quantum normalisation and the split nodes' default maps.

use super::params::{
    ClassSpec, Fopt, LinkOpts, Lss, Wrr, LSS_AVPKT, LSS_EWMA, LSS_FLAGS, LSS_MAXIDLE, LSS_MINIDLE, LSS_OFFTIME,
};
use super::{Cbq, Class, MAXLEVEL, NIL, NPRIO, TC_PRIO_MAX};
use crate::qdisc::{default_child, diag_error, diag_warning, BuildCx, ClassDecl, Handle, QdiscStats, L2_HEADER_BYTES};
use crate::tc::lex::TcDiag;

impl Cbq {
    /// `cbq_init`: the link class with the qdisc's rate table, `allot` = psched_mtu, band 7,
    /// weight = bandwidth, and a pfifo of its own (unclassified packets can land there).
    pub(super) fn new(handle: Handle, link: LinkOpts, cx: &BuildCx) -> Cbq {
        let mut l = Class::new(handle, link.rtab, default_child(cx, handle));
        l.priority = (NPRIO - 1) as u8;
        l.cpriority = l.priority;
        l.allot = i64::from(cx.mtu);
        l.quantum = l.allot;
        l.weight = i64::from(l.rtab.rate);
        l.ewma_log = link.ewma_log;
        l.avpkt = link.avpkt;
        l.maxidle = i64::from(link.maxidle);
        l.avgidle = l.maxidle;
        let mut q = Cbq {
            handle,
            classes: vec![l],
            by_id: vec![(handle.0, 0)],
            filters: Vec::new(),
            nclasses: [0; NPRIO],
            quanta: [0; NPRIO],
            activemask: 0,
            active: [NIL; NPRIO],
            tx_class: None,
            tx_borrowed: 0,
            tx_len: 0,
            now: 0,
            wd_expires: 0,
            toplevel: MAXLEVEL,
            watchdog: None,
            stash: None,
            stats: QdiscStats::default(),
            dev_mtu: i64::from(cx.mtu.saturating_sub(L2_HEADER_BYTES)),
        };
        q.addprio(0);
        q
    }

    pub(super) fn add_class(&mut self, c: &ClassDecl<'_>, spec: ClassSpec, cx: &BuildCx, diags: &mut Vec<TcDiag>) {
        let err = |diags: &mut Vec<TcDiag>, m: String| diags.push(diag_error(c.at, m));
        if c.parent == Handle::ROOT {
            return err(
                diags,
                format!(
                    "cbq class {} cannot be a root: its parent must be {} or one of its classes",
                    c.classid, self.handle
                ),
            );
        }
        let Some(rtab) = spec.rtab else {
            return err(
                diags,
                format!("new cbq class {} needs \"rate\" (the kernel rejects it without a rate)", c.classid),
            );
        };
        let Some(lss) = spec.lss else {
            return err(
                diags,
                format!(
                    "new cbq class {} has no link-sharing parameter, which the kernel rejects (EINVAL): \
                     give at least one of avpkt, maxburst, minburst, minidle, ewma, bounded, isolated",
                    c.classid
                ),
            );
        };
        let wrr = spec.wrr.unwrap_or_default();
        if c.classid.major() != self.handle.major() || c.classid.minor() == 0 {
            return err(
                diags,
                format!(
                    "class id {} does not belong to cbq {} (expected {:x}:N, N > 0)",
                    c.classid,
                    self.handle,
                    self.handle.major()
                ),
            );
        }
        if self.lookup(c.classid).is_some() {
            return err(diags, format!("cbq class {} already exists", c.classid));
        }
        let Some(parent) = self.lookup(c.parent) else {
            return err(diags, format!("parent class {} of {} does not exist (add it first)", c.parent, c.classid));
        };
        let idx = self.classes.len();
        let mut cl = Class::new(c.classid, rtab, default_child(cx, c.classid));
        cl.tparent = Some(parent);
        cl.allot = self.classes[parent].allot;
        cl.quantum = cl.allot;
        cl.weight = i64::from(cl.rtab.rate);
        cl.borrow = Some(parent);
        cl.share = (parent != 0).then_some(parent);
        self.classes.push(cl);
        let pos = self.by_id.partition_point(|e| e.0 < c.classid.0);
        self.by_id.insert(pos, (c.classid.0, idx));
        self.classes[parent].children.push(idx);
        self.adjust_levels(parent);
        self.set_lss(idx, &lss);
        self.set_wrr(idx, &wrr, c, diags);
        let link = &self.classes[0];
        let (ewma, maxidle, avpkt) = (link.ewma_log, link.maxidle, link.avpkt);
        let cl = &mut self.classes[idx];
        if cl.ewma_log == 0 {
            cl.ewma_log = ewma;
        }
        if cl.maxidle == 0 {
            cl.maxidle = maxidle;
        }
        if cl.avpkt == 0 {
            cl.avpkt = avpkt;
        }
        if let Some((m, _)) = spec.defmap_without_split {
            diags.push(diag_warning(
                c.at,
                format!(
                    "defmap {m:x} without \"split\" has no effect on a new class (the kernel needs the split node)"
                ),
            ));
        }
        if let Some(f) = spec.fopt {
            self.change_defmap(idx, &f, c, diags);
        }
    }

    /// `cbq_adjust_levels`: from `this` up to the root, level = 1 + the highest child level.
    fn adjust_levels(&mut self, mut this: usize) {
        loop {
            let lvl = self.classes[this].children.iter().map(|&ch| self.classes[ch].level).max().unwrap_or(0);
            self.classes[this].level = lvl + 1;
            match self.classes[this].tparent {
                Some(p) => this = p,
                None => return,
            }
        }
    }

    fn set_lss(&mut self, i: usize, lss: &Lss) {
        let cl = &mut self.classes[i];
        if lss.change & LSS_FLAGS != 0 {
            cl.share = if lss.isolated { None } else { cl.tparent };
            cl.borrow = if lss.bounded { None } else { cl.tparent };
        }
        if lss.change & LSS_EWMA != 0 {
            cl.ewma_log = lss.ewma_log;
        }
        if lss.change & LSS_AVPKT != 0 {
            cl.avpkt = lss.avpkt;
        }
        if lss.change & LSS_MINIDLE != 0 {
            cl.minidle = -i64::from(lss.minidle);
        }
        if lss.change & LSS_MAXIDLE != 0 {
            cl.maxidle = i64::from(lss.maxidle);
            cl.avgidle = cl.maxidle;
        }
        if lss.change & LSS_OFFTIME != 0 {
            cl.offtime = i64::from(lss.offtime);
        }
    }

    fn set_wrr(&mut self, i: usize, wrr: &Wrr, c: &ClassDecl<'_>, diags: &mut Vec<TcDiag>) {
        let cl = &mut self.classes[i];
        if wrr.allot != 0 {
            cl.allot = i64::from(wrr.allot);
        }
        if wrr.weight != 0 {
            cl.weight = i64::from(wrr.weight);
        }
        if wrr.priority != 0 {
            cl.priority = (wrr.priority - 1) as u8;
            cl.cpriority = cl.priority;
        }
        let repaired = self.addprio(i);
        for (id, bad) in repaired {
            diags.push(diag_warning(
                c.at,
                format!(
                    "class {id} has bad quantum=={bad} (weight x allot x classes / sum of weights in its band), repaired to {} as the kernel does",
                    self.dev_mtu / 2 + 1
                ),
            ));
        }
    }

    /// `cbq_addprio`; returns the classes whose quantum the kernel had to repair.
    fn addprio(&mut self, i: usize) -> Vec<(Handle, i64)> {
        let p = self.classes[i].priority as usize;
        self.nclasses[p] += 1;
        self.quanta[p] = self.quanta[p].wrapping_add(self.classes[i].weight as u32);
        self.normalize_quanta(p)
    }

    /// `cbq_normalize_quanta`: quantum = weight * allot * nclasses / sum of weights, so that the
    /// band's average quantum is its average allot; out-of-range quanta become mtu/2 + 1.
    fn normalize_quanta(&mut self, prio: usize) -> Vec<(Handle, i64)> {
        let mut repaired = Vec::new();
        if self.quanta[prio] == 0 {
            return repaired;
        }
        let (n, sum, mtu) = (self.nclasses[prio], i64::from(self.quanta[prio]), self.dev_mtu);
        for cl in &mut self.classes {
            if cl.priority as usize == prio {
                cl.quantum = cl.weight.wrapping_mul(cl.allot).wrapping_mul(n) / sum;
            }
            if cl.quantum <= 0 || cl.quantum > 32 * mtu {
                repaired.push((cl.classid, cl.quantum));
                cl.quantum = mtu / 2 + 1;
            }
        }
        repaired
    }

    /// `cbq_change_defmap` for a new class.
    fn change_defmap(&mut self, i: usize, f: &Fopt, c: &ClassDecl<'_>, diags: &mut Vec<TcDiag>) {
        let mut splitid = f.split;
        let mut split = None;
        if splitid == Handle::UNSPEC {
            let Some(s) = self.classes[i].split else { return };
            split = Some(s);
            splitid = self.classes[s].classid;
        }
        if split.filter(|&s| self.classes[s].classid == splitid).is_none() {
            split = None;
            let mut a = self.classes[i].tparent;
            while let Some(ai) = a {
                if self.classes[ai].classid == splitid {
                    split = Some(ai);
                    break;
                }
                a = self.classes[ai].tparent;
            }
        }
        let Some(split) = split else {
            diags.push(diag_warning(
                c.at,
                format!("split {splitid} is not an ancestor of {}: the kernel ignores split/defmap", c.classid),
            ));
            return;
        };
        let (def, mask) = (f.defmap, f.defchange);
        if self.classes[i].split != Some(split) {
            self.classes[i].defmap = 0;
            self.sync_defmap(i);
            self.classes[i].split = Some(split);
            self.classes[i].defmap = def & mask;
        } else {
            let cl = &mut self.classes[i];
            cl.defmap = (cl.defmap & !mask) | (def & mask);
        }
        self.sync_defmap(i);
    }

    /// `cbq_sync_defmap`: each free slot of the split node's map goes to the lowest-level class
    /// that asks for it (first found on ties; the kernel scans its class hash).
    fn sync_defmap(&mut self, i: usize) {
        let Some(split) = self.classes[i].split else { return };
        for p in 0..=TC_PRIO_MAX {
            if self.classes[split].defaults[p] == Some(i) && self.classes[i].defmap & (1 << p) == 0 {
                self.classes[split].defaults[p] = None;
            }
        }
        for p in 0..=TC_PRIO_MAX {
            if self.classes[split].defaults[p].is_some() {
                continue;
            }
            let mut level = self.classes[split].level;
            let mut best = None;
            for (ci, c) in self.classes.iter().enumerate() {
                if c.split == Some(split) && c.level < level && c.defmap & (1 << p) != 0 {
                    best = Some(ci);
                    level = c.level;
                }
            }
            self.classes[split].defaults[p] = best;
        }
    }
}
