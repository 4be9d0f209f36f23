//! The offline final boss: the UX architect's questions (is there a user
//! problem, who is better off, how success is measured, rollout and
//! rollback) answered from the spec's own text, using the checks in
//! `personas/ux_architect.toml`.

use super::evidence::{self, EvidenceKind};
use crate::concern::Severity;
use crate::persona::Persona;
use crate::roles::{FinalBossFinding, FinalBossReview, FinalBossVerdict};
use crate::rule::compile;
use crate::spec::{LineKind, Spec};

/// How much of a line's opening a label ("Out of scope for this RFC:")
/// may take.
const LABEL_BYTES: usize = 48;
pub fn review(spec: &Spec, persona: &Persona, surviving: usize) -> FinalBossReview {
    let mut findings = Vec::new();
    let mut fundamental_missing = false;
    let mut answered = Vec::new();
    for check in &persona.checks {
        let patterns: Vec<crate::rule::Regex> = check
            .evidence
            .iter()
            .filter_map(|p| compile(p).ok())
            .collect();
        // A heading such as "## Rollout" answers a question as well as prose
        // does, and so does a line that opens with the answer as its label
        // ("Out of scope for this RFC:" over a list).
        let mut found: Vec<usize> = spec
            .lines
            .iter()
            .filter(|l| {
                if l.kind == LineKind::Heading {
                    return patterns.iter().any(|p| p.is_match(l.lower.as_bytes()));
                }
                // Only the line's opening words are read: a label is short,
                // and reading whole lines for every check costs a long spec.
                let lead = l.lower.len()
                    - l.lower
                        .trim_start_matches(|c: char| !c.is_alphanumeric())
                        .len();
                let opening = &l.lower.as_bytes()[lead..l.lower.len().min(lead + LABEL_BYTES)];
                l.kind != LineKind::Code
                    && patterns
                        .iter()
                        .any(|p| p.find_iter(opening).next().is_some_and(|m| m.start() == 0))
            })
            .map(|l| l.number)
            .collect();
        found.extend(
            evidence::find(spec, &patterns, 1..spec.lines.len() + 1)
                .into_iter()
                .filter(|e| e.kind == EvidenceKind::Affirmed)
                .map(|e| e.line),
        );
        found.sort_unstable();
        if found.is_empty() {
            fundamental_missing |= check.fundamental;
            findings.push(FinalBossFinding {
                check: check.id.clone(),
                severity: if check.fundamental {
                    Severity::High
                } else {
                    Severity::Medium
                },
                finding: format!("{} {}", check.question.trim(), check.finding.trim()),
                lines: Vec::new(),
            });
        } else {
            answered.push(format!("{} (line {})", check.id, found[0]));
        }
    }
    if surviving >= 8 {
        findings.push(FinalBossFinding {
            check: "lost_in_weeds".to_string(),
            severity: Severity::Medium,
            finding: format!(
                "{surviving} technical concerns still require revision; settle them before judging whether users are better off."
            ),
            lines: Vec::new(),
        });
    }
    let verdict = if fundamental_missing {
        FinalBossVerdict::Reconsider
    } else if findings.is_empty() {
        FinalBossVerdict::Pass
    } else {
        FinalBossVerdict::Refine
    };
    let summary = if answered.is_empty() {
        "the spec answers none of the user-level questions".to_string()
    } else {
        format!("answered: {}", answered.join(", "))
    };
    FinalBossReview {
        verdict,
        findings,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, FINAL_BOSS};

    fn missing(check: &str, doc: &str) -> bool {
        let catalog = Catalog::builtin().unwrap();
        let persona = catalog.persona(FINAL_BOSS).unwrap();
        let spec = Spec::parse(None, doc.to_string());
        review(&spec, persona, 0)
            .findings
            .iter()
            .any(|f| f.check == check)
    }

    fn rollout_missing(doc: &str) -> bool {
        missing("rollout", doc)
    }

    #[test]
    fn service_level_indicators_answer_the_measurement_question() {
        let base = "# Quota sync\n\n## Design\n\nThe controller copies quotas to every node.\n";
        assert!(missing("measurement", base));
        assert!(!missing(
            "measurement",
            &format!("{base}The SLI is the share of nodes whose copy is current.\n")
        ));
    }

    #[test]
    fn a_stated_limit_answers_the_scope_question() {
        let base = "# Quota sync\n\n## Summary\n\nThe controller copies quotas to every node.\n\n";
        assert!(missing("scope", base));
        // A lead-in label over a list, or a Limitations section.
        assert!(!missing(
            "scope",
            &format!("{base}Out of scope for this change:\n\n* per-user quotas\n")
        ));
        assert!(!missing(
            "scope",
            &format!("{base}## Limitations\n\nOnly cluster-wide quotas are copied.\n")
        ));
        // A mention deep in a sentence is not a label.
        assert!(missing(
            "scope",
            &format!("{base}Nodes read the copy; nothing is said of what is out of scope.\n")
        ));
    }

    #[test]
    fn administrators_whose_work_gets_easier_are_who_benefits() {
        let base = "# Certificate renewal\n\n## Design\n\nThe agent renews its certificate before it expires.\n";
        assert!(missing("who_benefits", base));
        for answer in [
            "Renewal is automatic, to make fleet administration manageable.",
            "Cluster administrators no longer copy certificates by hand.",
            "This makes the deployers' job simpler.",
        ] {
            assert!(
                !missing("who_benefits", &format!("{base}{answer}\n")),
                "{answer}"
            );
        }
    }

    #[test]
    fn a_feature_gate_or_a_downgrade_path_answers_the_rollout_question() {
        let base = "# Quota sync\n\n## Design\n\nThe controller copies quotas to every node.\n";
        assert!(rollout_missing(base));
        // Other words for shipping gradually and backing out.
        for answer in [
            "It ships behind the `QuotaSync` feature gate, off by default.",
            "Operators can downgrade to the previous release; the field is then ignored.",
            "A kill switch in the config turns the copy off.",
        ] {
            assert!(!rollout_missing(&format!("{base}{answer}\n")), "{answer}");
        }
        // A plan of milestones is how it reaches users.
        assert!(!rollout_missing(&format!(
            "{base}\n## Implementation plan\n\nMilestone 1: copy quotas.\n"
        )));
    }
}
