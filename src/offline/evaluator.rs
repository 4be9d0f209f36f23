//! Offline evaluators. Each applies a different evidence standard to the
//! same question: does the spec state the safeguard this concern asks for?
//!
//! - `section`: a stated safeguard anywhere in the concern's section (and its
//!   subsections) dismisses it.
//! - `document`: a stated safeguard anywhere in the document dismisses it.
//! - `strict`: the persona's response protocol applied literally: the
//!   safeguard must be stated within a few lines of the concern or name the
//!   same component, the sentence must not be one of the protocol's invalid
//!   dismissals ("unlikely", "later"), and where the protocol asks for a
//!   justification (lazy_developer), one must be written down.

use super::attacker::{excerpt, relevant};
use super::evidence::{self, Evidence, EvidenceKind};
use crate::catalog::Catalog;
use crate::concern::{Adjudication, AdjudicationOutcome, Concern, Decision, Vote};
use crate::rule::compile;
use crate::spec::Spec;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standard {
    Section,
    Document,
    Strict,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::Section => "offline/section",
            Standard::Document => "offline/document",
            Standard::Strict => "offline/strict",
        }
    }

    pub fn parse(s: &str) -> Option<Standard> {
        match s {
            "section" | "offline/section" => Some(Standard::Section),
            "document" | "offline/document" => Some(Standard::Document),
            "strict" | "offline/strict" => Some(Standard::Strict),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Standard::Section => "in its section",
            Standard::Document => "anywhere in the document",
            Standard::Strict => "next to it, as the response protocol requires",
        }
    }
}

fn scope(spec: &Spec, standard: Standard, concern: &Concern, window: usize) -> Range<usize> {
    let all = 1..spec.lines.len() + 1;
    let Some((a, b)) = concern.lines else {
        return all;
    };
    match standard {
        Standard::Document => all,
        Standard::Section => {
            let sec = spec.line(a).map(|l| l.section).unwrap_or(0);
            spec.section_tree_lines(sec)
        }
        Standard::Strict => {
            let block = spec.block_lines(a);
            let lo = a.saturating_sub(window).max(1).min(block.start);
            let hi = (b + window + 1).max(spec.block_lines(b).end);
            lo..hi
        }
    }
}

/// One evaluator's vote on one concern.
pub fn vote(spec: &Spec, catalog: &Catalog, standard: Standard, concern: &Concern) -> Vote {
    let evaluator = standard.name().to_string();
    let rule = concern
        .rule
        .as_deref()
        .and_then(|r| catalog.persona(&concern.adversary)?.rule(r));
    let protocol = catalog.protocol(&concern.adversary);
    let Some(rule) = rule else {
        return Vote {
            evaluator,
            decision: Decision::Accept,
            reasoning: format!(
                "no offline rule covers this concern, so no specific mitigation can be cited; {}",
                protocol
                    .map(|p| p.rule.trim())
                    .unwrap_or("the concern stands")
            ),
            cites: concern.lines.map(|(a, b)| vec![a, b]).unwrap_or_default(),
        };
    };
    let window = protocol.map(|p| p.offline.window).unwrap_or(3);
    let range = scope(spec, standard, concern, window);
    let mut found: Vec<Evidence> = evidence::find(spec, &rule.safeguards, range.clone());
    if standard == Standard::Strict {
        let invalid: Vec<regex::Regex> = protocol
            .map(|p| {
                p.offline
                    .invalid_phrases
                    .iter()
                    .filter_map(|s| compile(s).ok())
                    .collect()
            })
            .unwrap_or_default();
        for e in &mut found {
            let text = &spec.lines[e.line - 1].text;
            if e.kind == EvidenceKind::Affirmed && invalid.iter().any(|r| r.is_match(text)) {
                e.kind = EvidenceKind::Deferred;
            }
        }
        // Strict also accepts a same-section line naming the same component.
        if !found.iter().any(|e| e.kind == EvidenceKind::Affirmed)
            && let Some((a, _)) = concern.lines
        {
            let sec = spec.line(a).map(|l| l.section).unwrap_or(0);
            for e in evidence::find(spec, &rule.safeguards, spec.section_tree_lines(sec)) {
                if e.kind == EvidenceKind::Affirmed
                    && relevant(spec, concern.lines, &concern.subject, e.line)
                {
                    found.push(e);
                }
            }
        }
        let needs: Vec<regex::Regex> = protocol
            .map(|p| {
                p.offline
                    .require_justification
                    .iter()
                    .filter_map(|s| compile(s).ok())
                    .collect()
            })
            .unwrap_or_default();
        if !needs.is_empty() {
            let justified = evidence::find(spec, &needs, range.clone())
                .into_iter()
                .any(|e| e.kind == EvidenceKind::Affirmed);
            if !justified {
                for e in &mut found {
                    if e.kind == EvidenceKind::Affirmed {
                        e.kind = EvidenceKind::Deferred;
                    }
                }
            }
        }
    }
    let concern_cites: Vec<usize> = concern.lines.map(|(a, b)| vec![a, b]).unwrap_or_default();
    let affirmed: Vec<&Evidence> = found
        .iter()
        .filter(|e| e.kind == EvidenceKind::Affirmed)
        .collect();
    if !affirmed.is_empty() {
        // Prefer evidence next to the concern, then the earliest.
        let mut best = affirmed.clone();
        best.sort_by_key(|e| {
            let d = concern
                .lines
                .map(|(a, b)| {
                    if e.line < a {
                        a - e.line
                    } else {
                        e.line.saturating_sub(b)
                    }
                })
                .unwrap_or(0);
            (d, e.line)
        });
        let cites: Vec<usize> = best.iter().take(2).map(|e| e.line).collect();
        let quotes = best
            .iter()
            .take(2)
            .map(|e| {
                format!(
                    "line {} \"{}\"",
                    e.line,
                    excerpt(&spec.lines[e.line - 1].text)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Vote {
            evaluator,
            decision: Decision::Dismiss,
            reasoning: format!(
                "the spec states the safeguard ({}) {}: {quotes}.",
                best[0].matched.to_lowercase(),
                standard.describe()
            ),
            cites,
        };
    }
    if let Some(neg) = found.iter().find(|e| e.kind == EvidenceKind::Negated) {
        return Vote {
            evaluator,
            decision: Decision::Accept,
            reasoning: format!(
                "line {} says the safeguard is absent (\"{}\"); the spec needs {}.",
                neg.line,
                excerpt(&spec.lines[neg.line - 1].text),
                rule.def.missing.trim_end_matches('.')
            ),
            cites: [concern_cites.clone(), vec![neg.line]].concat(),
        };
    }
    if let Some(d) = found.iter().find(|e| e.kind == EvidenceKind::Deferred)
        && standard != Standard::Strict
    {
        {
            return Vote {
                evaluator,
                decision: Decision::Defer,
                reasoning: format!(
                    "line {} mentions it only as an open question, non-goal or future work (\"{}\"); the team must decide before this can be dismissed.",
                    d.line,
                    excerpt(&spec.lines[d.line - 1].text)
                ),
                cites: vec![d.line],
            };
        }
    }
    let noted = concern
        .filter
        .as_ref()
        .map(|f| format!(" It was dismissed before (\"{}\"), but that explanation is not borne out by this text.", excerpt(&f.explanation)))
        .unwrap_or_default();
    Vote {
        evaluator,
        decision: Decision::Accept,
        reasoning: format!(
            "no {} is stated {} ({}); {}{noted}",
            rule.def.missing.trim_end_matches('.'),
            standard.describe(),
            concern.lines_label(),
            protocol
                .map(|p| p.rule.trim())
                .unwrap_or("the concern stands")
        ),
        cites: concern_cites,
    }
}

/// The adjudicator decides a challenged dismissal: the dismissal stands only
/// if a majority of the votes dismissed it with evidence about this concern.
pub fn adjudicate(spec: &Spec, evaluator: &str, concern: &Concern) -> Adjudication {
    let total = concern.votes.len().max(1);
    let mut sound = Vec::new();
    for v in concern
        .votes
        .iter()
        .filter(|v| v.decision == Decision::Dismiss)
    {
        if v.cites
            .iter()
            .any(|&n| relevant(spec, concern.lines, &concern.subject, n))
        {
            sound.push(v.evaluator.clone());
        }
    }
    let challenge = concern
        .rebuttal
        .as_ref()
        .map(|r| r.reasoning.clone())
        .unwrap_or_default();
    if sound.len() * 2 > total {
        Adjudication {
            outcome: AdjudicationOutcome::Upheld,
            reasoning: format!(
                "{} of {} votes dismissed with evidence about this concern ({}); the challenge (\"{}\") does not undo that.",
                sound.len(),
                total,
                sound.join(", "),
                excerpt(&challenge)
            ),
            adjudicator: Some(evaluator.to_string()),
        }
    } else {
        Adjudication {
            outcome: AdjudicationOutcome::Overturned,
            reasoning: format!(
                "only {} of {} votes cite evidence about this concern; the challenge holds: {}",
                sound.len(),
                total,
                challenge
            ),
            adjudicator: Some(evaluator.to_string()),
        }
    }
}
