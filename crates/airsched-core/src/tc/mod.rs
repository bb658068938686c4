//! The `tc` language. [`lex`] is its ground floor, below the disciplines too: tokens with
//! positions, diagnostics, the one token cursor, handles, numbers and IPv4 prefixes. [`opts`]
//! is the option parser (and option printer) every discipline uses. Above them: the
//! command-level parser for scripts of `tc qdisc|class|filter add|replace|change|del` lines and
//! batch files ([`script`]); the classifiers' options ([`filter`]); the tree builder
//! ([`build`]); `tc show` output ([`show`]); `airsched tc check`, a script on its own
//! ([`check`]). docs/tc.md describes the supported language.

pub mod build;
pub mod check;
pub mod filter;
pub mod lex;
pub mod opts;
pub mod script;
pub mod show;
pub mod virt;

pub use build::{
    build_all, build_trees, declared_trees, virtual_devices, DeclaredClass, DeclaredQdisc, DevHook, DeviceSpec,
    HookRule, VirtualDev,
};
pub use check::{check_script, check_script_on, CheckReport, CheckedDevice};
pub use filter::{parse_filter, FilterSpec, NEXTHDR_BASE};
pub use lex::{
    errors_since, parse_classid, parse_ipv4, parse_ipv4_prefix, parse_qdisc_handle, Cursor, Severity, TcDiag, Tok,
};
pub use opts::{format_rate, format_rate_bytes, format_size, format_time_us, OptParser};
pub use script::{parse_script, ClassCmd, Command, FilterCmd, HandleArg, Op, QdiscCmd, Script};
pub use show::{class_show, qdisc_show, tree_text};
