//! The fresh-eyes gate (`--fresh-eyes`), after the overviewer seed: a last
//! reviewer that sees only the spec (no concerns, no history) and returns
//! findings plus clarifying questions. Any open question, or any high
//! finding, means REVISE. This module holds the values that go into the
//! verdict and the recommendation rule; the offline reviewer lives in
//! `offline/fresh_eyes.rs`.

use crate::concern::Severity;
use serde::{Deserialize, Serialize};

/// Rounds the gate may take before it escalates to the author.
pub const MAX_ROUNDS: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    pub description: String,
}

/// A clarifying question the spec leaves open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClarifyingQuestion {
    /// `OQ1`, `OQ2`...: stable within one review of one spec.
    pub id: String,
    pub question: String,
    pub context: String,
    pub impact: String,
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// Spec lines the question is about.
    #[serde(default)]
    pub lines: Vec<usize>,
}

/// A finding of the fresh-eyes reviewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FreshEyesFinding {
    /// `OF1`, `OF2`...
    pub id: String,
    pub severity: Severity,
    pub title: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub suggestion: String,
    #[serde(default)]
    pub lines: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Recommendation {
    Approve,
    Revise,
}

impl Recommendation {
    pub fn as_str(self) -> &'static str {
        match self {
            Recommendation::Approve => "APPROVE",
            Recommendation::Revise => "REVISE",
        }
    }
}

/// The verdict's `fresh_eyes` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreshEyesReview {
    pub recommendation: Recommendation,
    #[serde(default)]
    pub findings: Vec<FreshEyesFinding>,
    #[serde(default)]
    pub clarifying_questions: Vec<ClarifyingQuestion>,
    #[serde(default)]
    pub assessment: String,
    /// Rounds taken (1 or 2).
    pub rounds: u8,
    /// Still REVISE after the last round: the author must accept as-is or abort.
    #[serde(default)]
    pub escalated: bool,
}

/// The seed's rule: any HIGH finding, or any open question, means REVISE.
pub fn recommend(
    findings: &[FreshEyesFinding],
    questions: &[ClarifyingQuestion],
) -> Recommendation {
    if findings.iter().any(|f| f.severity == Severity::High) || !questions.is_empty() {
        Recommendation::Revise
    } else {
        Recommendation::Approve
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(s: Severity) -> FreshEyesFinding {
        FreshEyesFinding {
            id: "OF1".into(),
            severity: s,
            title: "t".into(),
            description: "d".into(),
            suggestion: String::new(),
            lines: vec![],
        }
    }

    #[test]
    fn high_finding_or_question_revises_medium_does_not() {
        assert_eq!(recommend(&[], &[]), Recommendation::Approve);
        assert_eq!(
            recommend(&[finding(Severity::Medium), finding(Severity::Low)], &[]),
            Recommendation::Approve
        );
        assert_eq!(
            recommend(&[finding(Severity::High)], &[]),
            Recommendation::Revise
        );
        let q = ClarifyingQuestion {
            id: "OQ1".into(),
            question: "q".into(),
            context: "c".into(),
            impact: "i".into(),
            options: vec![],
            lines: vec![3],
        };
        assert_eq!(recommend(&[], &[q]), Recommendation::Revise);
    }
}
