//! The result of one gauntlet run: the JSON verdict's shape (schema_version 1).

use crate::carry_forward::CarryForward;
use crate::concern::{Concern, Severity, Status};
use crate::fresh_eyes::{FreshEyesReview, Recommendation};
use crate::roles::FinalBossReview;
use crate::rounds::RoundsReport;
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
    /// Carry-forward, decisions, fresh eyes and rounds (issue 11), at the
    /// top level of the JSON.
    #[serde(flatten)]
    pub memory: Memory,
}

/// The parts of the verdict that remember and ask: all absent from the
/// JSON when unused, so a plain run's verdict keeps its shape.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Memory {
    /// `--allow-deferred`: deferred concerns do not fail the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_deferred: bool,
    /// What earlier runs on this spec say (with the project store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry_forward: Option<CarryForward>,
    /// The fresh-eyes gate (`--fresh-eyes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_eyes: Option<FreshEyesReview>,
    /// The debate rounds (`--rounds N` above 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsReport>,
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

    /// Deferred concerns at or above `fail_on` that fail the run: the
    /// evaluators could not tell from the spec, a decision the author owes.
    /// Empty with `--allow-deferred`.
    pub fn needs_decision(&self) -> Vec<&Concern> {
        if self.memory.allow_deferred {
            return Vec::new();
        }
        let mut v: Vec<&Concern> = self
            .concerns
            .iter()
            .filter(|c| c.status == Status::Deferred && c.severity >= self.fail_on)
            .collect();
        v.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.id.cmp(&b.id)));
        v
    }

    /// Surviving concerns at or above `fail_on`, plus the deferred concerns
    /// that need a decision, plus one for a fresh-eyes REVISE.
    pub fn failing(&self) -> usize {
        let surviving = self
            .surviving()
            .iter()
            .filter(|c| c.severity >= self.fail_on)
            .count();
        let fresh = self
            .memory
            .fresh_eyes
            .as_ref()
            .is_some_and(|f| f.recommendation == Recommendation::Revise);
        surviving + self.needs_decision().len() + usize::from(fresh)
    }
}

/// A minimal verdict for unit tests: one burned_oncall run over `concerns`,
/// on a spec with the given content hash.
#[cfg(test)]
pub(crate) fn for_tests(concerns: Vec<Concern>, sha256: &str) -> Verdict {
    Verdict {
        schema_version: 1,
        tool: ToolInfo {
            name: "gauntlet".into(),
            version: "0".into(),
        },
        spec: SpecInfo {
            path: None,
            sha256: sha256.into(),
            bytes: 1,
            lines: 1,
            title: None,
        },
        verdict: Outcome::Pass,
        fail_on: Severity::Low,
        adversaries: vec!["burned_oncall".into()],
        models: Models {
            attack: vec![],
            eval: vec![],
            final_boss: None,
        },
        concerns,
        final_boss: None,
        stats: Default::default(),
        warnings: vec![],
        nuances: None,
        complexity: None,
        memory: Default::default(),
    }
}
