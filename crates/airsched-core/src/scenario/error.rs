//! What is wrong with a scenario: each problem at its file, line, column and key, with what would
//! be right.

use std::fmt;

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`super::parse_scenario`].
    pub file: String,
    /// 1-based line of the offending value, key or table header.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// Dotted path of the setting, e.g. `"flow[2].rate"`, `"run.duration"`; empty for TOML
    /// syntax errors.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// All problems of a scenario file, sorted by (line, column); never empty when returned by
/// [`super::parse_scenario`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}
