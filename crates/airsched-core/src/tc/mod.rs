//! The `tc` language. [`lex`] is its ground floor, below the disciplines too: tokens with
//! positions, diagnostics, the one token cursor, handles, numbers and IPv4 prefixes. [`opts`]
//! is the option parser (and option printer) every discipline uses. Above them: the
//! command-level parser for scripts of `tc qdisc|class|filter add|replace|change|del` lines and
//! batch files ([`script`]); the classifiers' options ([`filter`]); the tree builder
//! ([`build`]); `tc show` output ([`show`]); `airsched tc check`, a script on its own
//! ([`check`]). docs/tc.md describes the supported language.

pub mod build;
pub mod check;
pub mod ematch;
pub mod filter;
pub mod lex;
pub mod opts;
pub mod police;
pub mod script;
pub mod show;
pub mod virt;

pub use build::{build_trees, declared_trees, virtual_devices, DeclaredQdisc, DevHook, DeviceSpec, VirtualDev};
pub use check::check_script_on;
pub use lex::{Severity, TcDiag};
pub use opts::format_rate;
pub use script::{parse_script, Command, Op};
pub use show::{class_show, qdisc_show, tree_text};
