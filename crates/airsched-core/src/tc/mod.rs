//! The `tc` language: tokens with positions, diagnostics, and the option parser every
//! discipline uses for its own options ([`opts`]); the command-level parser for scripts of
//! `tc qdisc|class|filter add|replace|change|del` lines and batch files ([`script`]); the
//! classifiers' options ([`filter`]); the tree builder ([`build`]); and `tc show` output
//! ([`show`]). docs/tc.md describes the supported language.

pub mod build;
pub mod filter;
pub mod opts;
pub mod script;
pub mod show;

pub use build::{build_trees, declared_trees, DeclaredClass, DeclaredQdisc, DeviceSpec};
pub use filter::{parse_filter, FilterSpec, NEXTHDR_BASE};
pub use opts::{errors_since, OptParser, Severity, TcDiag, Tok};
pub use script::{
    parse_classid, parse_qdisc_handle, parse_script, ClassCmd, Command, FilterCmd, HandleArg, Op, QdiscCmd, Script,
};
pub use show::{class_show, format_rate, format_rate_bytes, format_size, format_time_us, qdisc_show, tree_text};
