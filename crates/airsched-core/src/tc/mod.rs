//! The `tc` language: tokens with positions, diagnostics, and the option parser every
//! discipline uses for its own options. The command-level parser (`tc qdisc|class|filter
//! add|replace|change|del`, batch files) and the tree builder live beside it.

pub mod opts;

pub use opts::{OptParser, Severity, TcDiag, Tok};
