//! The one `Concern` record shared by every phase, and the small value types
//! around it (severity, status, votes, rebuttals). Phases only ever add to a
//! concern; nothing here knows about providers or rendering.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How bad a concern is if it is real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    /// Parses the usual ways people and models write a severity
    /// ("HIGH", "critical", "blocking", "major", "minor", "P1"...).
    pub fn parse_loose(s: &str) -> Option<Severity> {
        let s = s
            .trim()
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase();
        match s.as_str() {
            "high" | "critical" | "blocking" | "blocker" | "severe" | "p0" | "p1" | "error" => {
                Some(Severity::High)
            }
            "medium" | "med" | "major" | "moderate" | "p2" | "warning" | "warn" => {
                Some(Severity::Medium)
            }
            "low" | "minor" | "trivial" | "nit" | "p3" | "p4" | "info" | "note" => {
                Some(Severity::Low)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a concern ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Raised and not yet evaluated (only seen mid-pipeline).
    Raised,
    /// Evaluators agreed it is real: the spec must be revised.
    Accepted,
    /// Evaluators dismissed it and the dismissal stood.
    Dismissed,
    /// Evaluators could not decide, or too few of them answered.
    Deferred,
    /// Dismissed, then the adversary's challenge was upheld.
    Reinstated,
    /// Dropped before evaluation by the resolved-concerns store.
    Filtered,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Raised => "raised",
            Status::Accepted => "accepted",
            Status::Dismissed => "dismissed",
            Status::Deferred => "deferred",
            Status::Reinstated => "reinstated",
            Status::Filtered => "filtered",
        }
    }

    /// Does a concern with this status require the spec to be revised?
    pub fn requires_revision(self) -> bool {
        matches!(self, Status::Accepted | Status::Reinstated)
    }
}

/// One evaluator's decision on one concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Accept,
    Dismiss,
    Defer,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Dismiss => "dismiss",
            Decision::Defer => "defer",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    pub evaluator: String,
    pub decision: Decision,
    pub reasoning: String,
    /// Spec lines the reasoning relies on.
    #[serde(default)]
    pub cites: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RebuttalOutcome {
    /// The adversary accepts the dismissal.
    Accepted,
    /// The adversary challenges the dismissal with logic.
    Challenged,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rebuttal {
    pub outcome: RebuttalOutcome,
    pub reasoning: String,
    /// The evaluators whose citations the challenge disputes; none of them
    /// may adjudicate it. Empty when the model did not say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub challenged: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdjudicationOutcome {
    /// The dismissal stands.
    Upheld,
    /// The challenge wins: the concern is reinstated.
    Overturned,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    pub outcome: AdjudicationOutcome,
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjudicator: Option<String>,
}

/// What the self-filter phase did with a concern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilterNote {
    /// The stored entry that matched.
    pub entry_id: String,
    pub similarity: f64,
    pub confidence: f64,
    /// `dropped` (status becomes filtered) or `noted` (evaluated with the earlier explanation).
    pub action: FilterAction,
    /// The explanation recorded when the concern was dismissed before.
    pub explanation: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterAction {
    Dropped,
    Noted,
}

/// A concern as an attacker raises it, before any phase has judged it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawConcern {
    pub title: String,
    pub detail: String,
    pub severity: Severity,
    /// First and last spec line the concern is about; `None` for the whole document.
    pub lines: Option<(usize, usize)>,
    /// The offline rule that fired, when an offline attacker raised it.
    pub rule: Option<String>,
    /// Heading of the section the concern is about.
    pub section: Option<String>,
    /// Words that name what the concern is about (the design element), used
    /// to check that a dismissal's evidence talks about the same thing.
    pub subject: Vec<String>,
    /// How sure the attacker is that this is a real gap (0 to 1), when it
    /// says; the offline attacker always does.
    pub confidence: Option<f64>,
}

#[cfg(test)]
impl RawConcern {
    /// A concern about the whole document, with no rule, section or subject.
    pub(crate) fn for_tests(
        title: impl Into<String>,
        detail: impl Into<String>,
        severity: Severity,
    ) -> RawConcern {
        RawConcern {
            title: title.into(),
            detail: detail.into(),
            severity,
            lines: None,
            rule: None,
            section: None,
            subject: Vec::new(),
            confidence: None,
        }
    }
}

/// A concern travelling through the pipeline and into the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Concern {
    pub id: String,
    pub adversary: String,
    pub title: String,
    pub detail: String,
    pub severity: Severity,
    #[serde(with = "line_range")]
    pub lines: Option<(usize, usize)>,
    pub fingerprint: String,
    pub status: Status,
    #[serde(default)]
    pub votes: Vec<Vote>,
    #[serde(default)]
    pub rebuttal: Option<Rebuttal>,
    #[serde(default)]
    pub adjudication: Option<Adjudication>,
    #[serde(default)]
    pub filter: Option<FilterNote>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subject: Vec<String>,
    /// The attacker's confidence that this is a real gap (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// The technology nuance an offline nuance check cites (issue 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nuance: Option<crate::nuance::Citation>,
    /// The evaluators' votes were split (not unanimous): worth a deeper look.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contested_vote: bool,
}

impl Concern {
    /// Builds a concern from what an attacker raised. The id and fingerprint
    /// are stable: they depend on the adversary, the rule (or title), the
    /// section and the subject, not on line numbers, so they survive edits
    /// elsewhere in the spec.
    pub fn from_raw(adversary: &str, prefix: &str, raw: RawConcern) -> Concern {
        let fingerprint = fingerprint(adversary, &raw);
        let id = format!("{prefix}-{}", &fingerprint[..8]);
        Concern {
            id,
            adversary: adversary.to_string(),
            title: raw.title,
            detail: raw.detail,
            severity: raw.severity,
            lines: raw.lines,
            fingerprint,
            status: Status::Raised,
            votes: Vec::new(),
            rebuttal: None,
            adjudication: None,
            filter: None,
            section: raw.section,
            rule: raw.rule,
            subject: raw.subject,
            confidence: raw.confidence,
            nuance: None,
            contested_vote: false,
        }
    }

    /// Same detail, ignoring case, spacing and punctuation.
    pub fn same_detail(&self, other: &Concern) -> bool {
        normalise_key(&self.detail) == normalise_key(&other.detail)
    }

    /// This concern with an id and fingerprint that also cover its detail:
    /// for a model concern that reuses the title of a different concern of
    /// the same adversary and section, so neither is lost.
    pub fn with_detail_in_id(mut self) -> Concern {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.fingerprint.as_bytes());
        h.update([0]);
        h.update(normalise_key(&self.detail).as_bytes());
        self.fingerprint = hex(&h.finalize());
        let prefix = self.id.split('-').next().unwrap_or_default().to_string();
        self.id = format!("{prefix}-{}", &self.fingerprint[..8]);
        self
    }

    /// The dismissing votes' reasoning, joined: what gets saved as the explanation.
    pub fn dismissal_reasoning(&self) -> String {
        self.votes
            .iter()
            .filter(|v| v.decision == Decision::Dismiss)
            .map(|v| format!("{}: {}", v.evaluator, v.reasoning))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Lines cited by the dismissing votes, sorted and unique.
    pub fn dismissal_cites(&self) -> Vec<usize> {
        let mut cites: Vec<usize> = self
            .votes
            .iter()
            .filter(|v| v.decision == Decision::Dismiss)
            .flat_map(|v| v.cites.iter().copied())
            .collect();
        cites.sort_unstable();
        cites.dedup();
        cites
    }

    pub fn lines_label(&self) -> String {
        match self.lines {
            Some((a, b)) if a == b => format!("line {a}"),
            Some((a, b)) => format!("lines {a}-{b}"),
            None => "whole document".to_string(),
        }
    }
}

pub(crate) fn normalise_key(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Stable fingerprint of a concern: sha256 over adversary, rule (or title),
/// section and subject, hex encoded.
pub fn fingerprint(adversary: &str, raw: &RawConcern) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(adversary.as_bytes());
    h.update([0]);
    match &raw.rule {
        Some(rule) => h.update(rule.as_bytes()),
        None => h.update(normalise_key(&raw.title).as_bytes()),
    }
    h.update([0]);
    h.update(normalise_key(raw.section.as_deref().unwrap_or("")).as_bytes());
    h.update([0]);
    let mut subject: Vec<String> = raw.subject.iter().map(|s| normalise_key(s)).collect();
    subject.sort();
    subject.dedup();
    h.update(subject.join(",").as_bytes());
    hex(&h.finalize())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `lines` is written as `[start, end]` or `null`.
mod line_range {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<(usize, usize)>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some((a, b)) => s.collect_seq([*a, *b]),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<(usize, usize)>, D::Error> {
        let v: Option<Vec<usize>> = Option::deserialize(d)?;
        Ok(match v.as_deref() {
            Some([a]) => Some((*a, *a)),
            Some([a, b, ..]) => Some((*a.min(b), *a.max(b))),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(section: &str) -> RawConcern {
        RawConcern {
            title: "No timeout".into(),
            detail: "d".into(),
            severity: Severity::High,
            lines: Some((3, 4)),
            rule: Some("missing-timeout".into()),
            section: Some(section.into()),
            subject: vec!["Stripe".into()],
            confidence: None,
        }
    }

    #[test]
    fn id_is_prefix_and_eight_hex_and_ignores_lines() {
        let a = Concern::from_raw("burned_oncall", "BURN", raw("Design"));
        let mut moved = raw("Design");
        moved.lines = Some((30, 40));
        let b = Concern::from_raw("burned_oncall", "BURN", moved);
        assert_eq!(a.id, b.id);
        assert!(a.id.starts_with("BURN-"));
        assert_eq!(a.id.len(), 13);
        assert!(a.id[5..].chars().all(|c| c.is_ascii_hexdigit()));
        let c = Concern::from_raw("burned_oncall", "BURN", raw("Rollout"));
        assert_ne!(a.id, c.id);
    }

    #[test]
    fn severity_parses_common_forms() {
        assert_eq!(Severity::parse_loose("**CRITICAL**"), Some(Severity::High));
        assert_eq!(Severity::parse_loose("Major"), Some(Severity::Medium));
        assert_eq!(Severity::parse_loose("minor"), Some(Severity::Low));
        assert_eq!(Severity::parse_loose("banana"), None);
    }

    #[test]
    fn lines_serialise_as_pair_or_null() {
        let c = Concern::from_raw("x", "X", raw("s"));
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["lines"], serde_json::json!([3, 4]));
        let mut r = raw("s");
        r.lines = None;
        let v = serde_json::to_value(Concern::from_raw("x", "X", r)).unwrap();
        assert!(v["lines"].is_null());
    }
}
