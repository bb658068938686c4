//! One row per qdisc kind: what the tc builder and [`build_qdisc`](super::build_qdisc) need to
//! know about a kind before its own code runs, in one table, as the kernel keeps one `Qdisc_ops`
//! (and `Qdisc_class_ops`) per discipline. A new discipline is one row here and its file.
//!
//! The rows are in the order `tc` documents the kinds, then airsched's own `whtb` (which Linux
//! does not have); error messages list them in this order.

use super::{
    cake, cbq, codel, drr, ets, fifo, fq, fq_codel, fq_pie, hfsc, htb, netem, pfifo_fast, pie, prio, red, sfq, tbf,
};
use super::{BuildCx, QdiscDecl, QdiscImpl};
use crate::tc::lex::TcDiag;

/// Where a kind's filters may attach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterBlock {
    /// None: the kind has no `tcf_block` (fifos, tbf, red, codel).
    None,
    /// The qdisc itself (`prio`, `drr`, `sfq`, `fq_codel`).
    Qdisc,
    /// The qdisc and each of its classes (`htb`, `cbq`: a class's filters pick among its
    /// children).
    QdiscAndClasses,
}

/// A discipline's build function: parse the declaration's options, build its classes, attach
/// grafts and filters; `None` (with an error in the diagnostics) if it cannot be built.
pub type BuildFn = fn(QdiscDecl<'_>, &BuildCx, &mut Vec<TcDiag>) -> Option<QdiscImpl>;

/// What airsched knows about one qdisc kind.
#[derive(Clone, Copy)]
pub struct QdiscKind {
    /// The kind keyword of `tc qdisc add ... KIND`.
    pub name: &'static str,
    /// It has classes (kernel `Qdisc_class_ops`) that other qdiscs can be attached to.
    pub classful: bool,
    /// Its classes are made with `tc class add` (htb, drr, cbq); prio's bands and tbf's one
    /// class exist by themselves.
    pub explicit_classes: bool,
    /// The class kind keywords `tc class ... KIND` may give for its classes. tc picks its option
    /// parser by that word and the kernel does not compare it with the qdisc's, so htb and whtb
    /// classes, which have the same options, fit either. Empty for classless kinds.
    pub class_kinds: &'static [&'static str],
    pub filters: FilterBlock,
    /// `tc qdisc change` sends only the options given (netlink attributes), so earlier ones
    /// stay; other kinds take the whole new option list.
    pub partial_change: bool,
    /// The kernel's `Qdisc_ops` has a `change` operation. Without one, `tc qdisc change` (and
    /// `replace` of a qdisc of the same kind in place) with options is refused: "Change
    /// operation not supported by specified qdisc" (`qdisc_change` in sch_api.c). HTB has none
    /// in any kernel (checked on Linux 6.18: `tc qdisc change ... htb default 0x20` fails and
    /// the qdisc keeps its old default); sfq has none in 6.1 or 6.18 (`.change = NULL`), cbq
    /// none in 6.2. (pfifo_fast and drr have none either, but tc sends them no options, which
    /// the kernel accepts: their change is a no-op here too.)
    pub change_op: bool,
    /// A class that gets its first child class loses the qdisc attached to it (HTB turns the
    /// leaf into an inner class and deletes its leaf qdisc).
    pub first_child_drops_leaf_qdisc: bool,
    /// The kernel's `find` class op returns its one class whatever minor is asked (`tbf_find`
    /// returns 1), so `tc qdisc add ... parent 1:` (minor 0) grafts onto that class, and tc
    /// shows the child with the parent as given (`parent 1:`). Checked on Linux 6.18.
    pub find_ignores_minor: bool,
    pub build: BuildFn,
}

impl QdiscKind {
    /// Whether `tc class ... CLASS_KIND` fits a qdisc of this kind (always, for a classless
    /// kind: that the qdisc has no classes at all is reported by its build).
    pub fn accepts_class_kind(&self, class_kind: &str) -> bool {
        !self.classful || self.class_kinds.contains(&class_kind)
    }
}

const fn classless(name: &'static str, filters: FilterBlock, partial_change: bool, build: BuildFn) -> QdiscKind {
    QdiscKind {
        name,
        classful: false,
        explicit_classes: false,
        class_kinds: &[],
        filters,
        partial_change,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build,
    }
}

/// htb, and whtb (the same discipline and classes, with its channel-aware options).
const HTB: QdiscKind = QdiscKind {
    name: "htb",
    classful: true,
    explicit_classes: true,
    class_kinds: &["htb", "whtb"],
    filters: FilterBlock::QdiscAndClasses,
    partial_change: false,
    change_op: false,
    first_child_drops_leaf_qdisc: true,
    find_ignores_minor: false,
    build: htb::build,
};

/// Every kind airsched builds.
pub static QDISC_KINDS: &[QdiscKind] = &[
    classless("pfifo", FilterBlock::None, false, fifo::build),
    classless("bfifo", FilterBlock::None, false, fifo::build),
    classless("pfifo_head_drop", FilterBlock::None, false, fifo::build),
    classless("pfifo_fast", FilterBlock::None, false, pfifo_fast::build),
    QdiscKind {
        name: "prio",
        classful: true,
        explicit_classes: false,
        class_kinds: &["prio"],
        filters: FilterBlock::Qdisc,
        partial_change: false,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build: prio::build,
    },
    QdiscKind {
        name: "tbf",
        classful: true,
        explicit_classes: false,
        class_kinds: &["tbf"],
        filters: FilterBlock::None,
        partial_change: false,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: true,
        build: tbf::build,
    },
    // sfq_qdisc_ops has `.change = NULL` (Linux 6.1 and 6.18) and tc always sends options.
    QdiscKind { change_op: false, ..classless("sfq", FilterBlock::Qdisc, false, sfq::build) },
    QdiscKind {
        name: "drr",
        classful: true,
        explicit_classes: true,
        class_kinds: &["drr"],
        filters: FilterBlock::Qdisc,
        partial_change: false,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build: drr::build,
    },
    HTB,
    QdiscKind {
        name: "cbq",
        classful: true,
        explicit_classes: true,
        class_kinds: &["cbq"],
        filters: FilterBlock::QdiscAndClasses,
        partial_change: false,
        change_op: false, // cbq_qdisc_ops has `.change = NULL` (6.2)
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build: cbq::build,
    },
    classless("red", FilterBlock::None, false, red::build),
    classless("codel", FilterBlock::None, true, codel::build),
    classless("fq_codel", FilterBlock::Qdisc, true, fq_codel::build),
    // tc sends only the options given (0 = not sent), and pie_change keeps the rest.
    classless("pie", FilterBlock::None, true, pie::build),
    // fq_pie has no class operations, so no filter can attach (cls_api: "Qdisc not classful").
    classless("fq_pie", FilterBlock::None, true, fq_pie::build),
    // netem has one class for a child qdisc in the kernel; airsched builds it without one
    // (docs/qdisc-netem.md). A change replaces every option (the kernel keeps the attributes tc
    // does not send again: rate, slot, correlations).
    classless("netem", FilterBlock::None, false, netem::build),
    // fq has no class operations (no filters); tc sends only the options given and fq_change
    // keeps the rest.
    classless("fq", FilterBlock::None, true, fq::build),
    // cake_class_ops has a tcf_block: filters attach to the qdisc and override the tin's flow
    // and host hashes. tc sends only the options given and cake_change keeps the rest.
    classless("cake", FilterBlock::Qdisc, true, cake::build),
    // hfsc_class_ops has a tcf_block per class (filters on the qdisc and on inner classes); a
    // leaf that gets a child keeps its qdisc, purged; tc always sends `default` (0 if absent).
    QdiscKind {
        name: "hfsc",
        classful: true,
        explicit_classes: true,
        class_kinds: &["hfsc"],
        filters: FilterBlock::QdiscAndClasses,
        partial_change: false,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build: hfsc::build,
    },
    // ets: its bands exist with the qdisc (no `tc class add`); filters on the qdisc only ("ETS
    // classid must be zero"); tc sends every option and ets_qdisc_change replaces them all.
    QdiscKind {
        name: "ets",
        classful: true,
        explicit_classes: false,
        class_kinds: &["ets"],
        filters: FilterBlock::Qdisc,
        partial_change: false,
        change_op: true,
        first_child_drops_leaf_qdisc: false,
        find_ignores_minor: false,
        build: ets::build,
    },
    // HTB with the channel-aware options of Garroppo et al. (qdisc/htb/wireless.rs).
    QdiscKind { name: "whtb", ..HTB },
];

/// The row of kind `name` (exact, as tc compares kind names), if airsched builds it.
pub fn qdisc_kind(name: &str) -> Option<&'static QdiscKind> {
    QDISC_KINDS.iter().find(|k| k.name == name)
}

/// The kind names, comma-separated in table order, for messages.
pub fn kind_names() -> String {
    QDISC_KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{build_full, decl};
    use crate::qdisc::{build_qdisc, Handle, Qdisc};

    #[test]
    fn names_are_unique_and_in_tcs_order() {
        assert_eq!(
            kind_names(),
            "pfifo, bfifo, pfifo_head_drop, pfifo_fast, prio, tbf, sfq, drr, htb, cbq, red, codel, fq_codel, pie, fq_pie, netem, fq, cake, hfsc, ets, whtb"
        );
        for (i, k) in QDISC_KINDS.iter().enumerate() {
            assert!(QDISC_KINDS[i + 1..].iter().all(|o| o.name != k.name), "{} twice", k.name);
            assert!(std::ptr::eq(qdisc_kind(k.name).unwrap(), k));
        }
        assert!(qdisc_kind("HTB").is_none() && qdisc_kind("ht").is_none() && qdisc_kind("").is_none());
    }

    #[test]
    fn rows_are_consistent() {
        for k in QDISC_KINDS {
            // Explicit classes, class filters and leaf rules only make sense with classes.
            assert!(k.classful || !k.explicit_classes, "{}", k.name);
            assert!(k.classful || k.filters != FilterBlock::QdiscAndClasses, "{}", k.name);
            assert!(k.explicit_classes || !k.first_child_drops_leaf_qdisc, "{}", k.name);
            assert_eq!(k.classful, !k.class_kinds.is_empty(), "{}", k.name);
            if k.classful {
                assert!(k.accepts_class_kind(k.name), "{}", k.name);
            }
            assert!(k.accepts_class_kind("anything") != k.classful, "{}", k.name);
        }
        let htb = qdisc_kind("htb").unwrap();
        assert!(htb.accepts_class_kind("whtb") && qdisc_kind("whtb").unwrap().accepts_class_kind("htb"));
        assert!(!htb.accepts_class_kind("drr") && !qdisc_kind("drr").unwrap().accepts_class_kind("htb"));
    }

    /// Each row builds the discipline it names, with default options where the kind allows.
    #[test]
    fn each_row_builds_its_kind() {
        let needs_opts = [
            ("tbf", "rate 1mbit burst 10k latency 50ms"),
            ("red", "limit 400000 min 30000 max 90000 avpkt 1000 burst 55 bandwidth 10mbit"),
            ("cbq", "bandwidth 10mbit avpkt 1000"),
            ("ets", "bands 3"),
        ];
        for k in QDISC_KINDS {
            let opts = needs_opts.iter().find(|(n, _)| *n == k.name).map_or("", |(_, o)| *o);
            let (q, diags) = build_full(k.name, Handle::new(1, 0), opts, vec![], vec![], &BuildCx::for_tests());
            let q = q.unwrap_or_else(|| panic!("{}: {diags:?}", k.name));
            assert_eq!(q.reports()[0].kind, k.name);
            // The row's build function is what build_qdisc runs.
            let direct = (k.build)(decl(k.name, Handle::new(1, 0), opts), &BuildCx::for_tests(), &mut vec![]);
            assert_eq!(direct.map(|q| q.stats()), Some(q.stats()), "{}", k.name);
        }
        let mut diags = vec![];
        assert!(build_qdisc(decl("fq_pi", Handle::new(1, 0), ""), &BuildCx::for_tests(), &mut diags).is_none());
        assert_eq!(diags[0].message, format!("unknown qdisc \"fq_pi\"; airsched knows: {}", kind_names()));
    }
}
