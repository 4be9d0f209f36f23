//! The result of one gauntlet run: the JSON verdict's shape (schema_version 1).

use crate::concern::{Concern, Severity};
use crate::roles::FinalBossReview;
use crate::stats::RunStats;
use serde::{Deserialize, Serialize};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// No concern requires revision at or above `--fail-on`.
    Pass,
    /// At least one does.
    Revise,
    /// The run could not reach a trustworthy verdict (a role failed).
    Incomplete,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Revise => "revise",
            Outcome::Incomplete => "incomplete",
        }
    }

    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Pass => crate::exit_code::PASS,
            Outcome::Revise => crate::exit_code::REVISE,
            Outcome::Incomplete => crate::exit_code::INCOMPLETE,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecInfo {
    pub path: Option<String>,
    pub sha256: String,
    pub bytes: usize,
    pub lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Models {
    pub attack: Vec<String>,
    pub eval: Vec<String>,
    pub final_boss: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Verdict {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub spec: SpecInfo,
    pub verdict: Outcome,
    pub fail_on: Severity,
    pub adversaries: Vec<String>,
    pub models: Models,
    pub concerns: Vec<Concern>,
    pub final_boss: Option<FinalBossReview>,
    pub stats: RunStats,
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Technologies detected and nuances applied (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nuances: Option<crate::nuance::NuanceReport>,
    /// The complexity level the run used and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<crate::triage::Assessment>,
}

impl Verdict {
    /// Concerns that require revision, worst first, in a stable order.
    pub fn surviving(&self) -> Vec<&Concern> {
        let mut v: Vec<&Concern> = self
            .concerns
            .iter()
            .filter(|c| c.status.requires_revision())
            .collect();
        v.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(a.lines.map(|l| l.0).cmp(&b.lines.map(|l| l.0)))
                .then(a.id.cmp(&b.id))
        });
        v
    }

    /// Surviving concerns at or above `fail_on`.
    pub fn failing(&self) -> usize {
        self.surviving()
            .iter()
            .filter(|c| c.severity >= self.fail_on)
            .count()
    }
}
