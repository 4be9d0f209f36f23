//! Renderers: turn a `Verdict` into text, JSON, Markdown or SARIF on any writer.
//! They are the only code that formats results for people.

pub mod json;
pub mod markdown;
pub mod memory;
pub mod sarif;
pub mod text;

use crate::concern::Severity;

/// Output format for a single run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
}

/// Minimal ANSI styling, off unless the caller enables it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }

    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }

    pub fn severity(&self, sev: Severity) -> String {
        let code = match sev {
            Severity::High => "1;31",
            Severity::Medium => "33",
            Severity::Low => "36",
        };
        self.wrap(code, sev.as_str())
    }

    pub fn outcome(&self, s: &str, good: bool) -> String {
        self.wrap(if good { "1;32" } else { "1;31" }, s)
    }
}

/// `$0.00 (offline engine)` or `$1.2345`.
pub fn cost_line(verdict: &crate::verdict::Verdict) -> String {
    let offline = verdict
        .models
        .attack
        .iter()
        .chain(&verdict.models.eval)
        .all(|m| m.starts_with("offline"));
    if offline {
        "$0.00 (offline engine)".to_string()
    } else if verdict.stats.cost_usd == 0.0 {
        "$0.00 (all CLI tools or free models)".to_string()
    } else {
        format!("${:.4}", verdict.stats.cost_usd)
    }
}
