//! The offline rebuttal and adjudication. The adversary re-reads every line
//! a dismissing evaluator cited and challenges the dismissal when a citation
//! does not really answer the concern:
//!
//! - it cites nothing;
//! - the cited line is hidden (an HTML comment is a note to editors, not
//!   the design);
//! - it is about something else: not next to the concern, not naming the
//!   same component, not a blanket policy, not a section about the thing;
//! - it mentions the safeguard only negated ("there is no timeout") or
//!   deferred ("we will add one later", an open question).
//!
//! A challenge names the evaluators whose citations failed. The pipeline
//! hands it to an evaluator that is not one of them, and that adjudicator
//! upholds the dismissal only if a majority of all votes still dismiss with
//! a sound citation; otherwise the concern is reinstated.

use super::attacker::{excerpt, relevant};
use super::evaluator::{concern_stems, names_topic, topic};
use super::evidence::{self, EvidenceKind};
use crate::catalog::Catalog;
use crate::concern::{
    Adjudication, AdjudicationOutcome, Concern, Decision, Rebuttal, RebuttalOutcome,
};
use crate::spec::{LineKind, Spec};

/// Why a cited line does not answer the concern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flaw {
    NoCitation,
    Hidden(usize),
    OffTopic(usize),
    Negated(usize),
    Deferred(usize),
}

impl Flaw {
    fn describe(&self, spec: &Spec, concern: &Concern, terms: &[String]) -> String {
        let named = concern
            .subject
            .first()
            .or(terms.first())
            .map(String::as_str)
            .unwrap_or("the design element");
        let quote = |n: usize| {
            spec.line(n)
                .map(|l| format!("line {n} (\"{}\")", excerpt(&l.text)))
                .unwrap_or_else(|| format!("line {n} (not in the spec)"))
        };
        match self {
            Flaw::NoCitation => "no line of the spec".to_string(),
            Flaw::Hidden(n) => format!("{}, which is hidden text, not the design", quote(*n)),
            Flaw::OffTopic(n) => format!(
                "{}, which is about something else: it does not name {named} and is not next to {}",
                quote(*n),
                concern.lines_label()
            ),
            Flaw::Negated(n) => format!("{}, which says the safeguard is absent", quote(*n)),
            Flaw::Deferred(n) => format!(
                "{}, which only defers the safeguard or asks about it",
                quote(*n)
            ),
        }
    }
}

/// What is wrong with citing line `n` for `concern`, if anything.
pub fn cite_flaw(spec: &Spec, catalog: &Catalog, concern: &Concern, n: usize) -> Option<Flaw> {
    let Some(line) = spec.line(n) else {
        return Some(Flaw::OffTopic(n));
    };
    if line.kind == LineKind::Html {
        return Some(Flaw::Hidden(n));
    }
    let terms = topic(spec, concern);
    let heading_names = spec
        .section_of(n)
        .is_some_and(|s| super::subject::mentions_any(&s.heading, &terms));
    let blanket = super::evaluator::blanket_lines(spec)
        .iter()
        .any(|b| b.line == n);
    // In the concern's own section, a line that shares a content word with
    // the concern's lines ("requests are rate limited" for an endpoint that
    // takes requests) is about the same thing.
    let same_section = concern
        .lines
        .and_then(|(a, _)| spec.line(a))
        .is_some_and(|l| l.section == line.section)
        && shares_word(&concern_stems(spec, concern), &line.text);
    let rule = concern
        .rule
        .as_deref()
        .and_then(|r| catalog.persona(&concern.adversary)?.rule(r));
    // A section headed by the safeguard ("### Monitoring") answers a rule
    // that asks whether the design has it at all.
    let safeguard_section = rule.is_some_and(|r| !evidence::headed(spec, r, n..n + 1).is_empty());
    if !relevant(spec, concern.lines, &concern.subject, n)
        && !names_topic(spec, n, &terms)
        && !heading_names
        && !blanket
        && !same_section
        && !safeguard_section
    {
        return Some(Flaw::OffTopic(n));
    }
    // Re-read the line for the safeguard itself: a mention that is only
    // negated or deferred is no answer. A line with no mention at all (a
    // justification, a pair of bounds) is judged by the checks above.
    let rule = rule?;
    let synonyms = catalog
        .protocol(&concern.adversary)
        .map(|p| p.offline.synonyms_for(&rule.def.missing))
        .unwrap_or_default();
    match evidence::find_with(spec, &rule.safeguards, &synonyms, n..n + 1)
        .first()
        .map(|e| e.kind)
    {
        Some(EvidenceKind::Negated) => Some(Flaw::Negated(n)),
        Some(EvidenceKind::Deferred) => Some(Flaw::Deferred(n)),
        _ => None,
    }
}

/// Does `text` share a content word (stemmed, four letters or more) with
/// `stems`?
fn shares_word(stems: &std::collections::HashSet<String>, text: &str) -> bool {
    const GENERIC: &[&str] = &[
        "that", "this", "with", "from", "when", "each", "everi", "have", "will", "into", "then",
        "than", "they", "their", "user", "data", "also",
    ];
    super::lexicon::normalise(text)
        .split(' ')
        .any(|w| w.len() >= 4 && !GENERIC.contains(&w) && stems.contains(w))
}

/// The first flaw of a dismissing vote: `None` when at least one of its
/// citations is sound.
fn vote_flaw(spec: &Spec, catalog: &Catalog, concern: &Concern, cites: &[usize]) -> Option<Flaw> {
    if cites.is_empty() {
        return Some(Flaw::NoCitation);
    }
    let mut first = None;
    for &n in cites {
        match cite_flaw(spec, catalog, concern, n) {
            None => return None,
            Some(f) => {
                first.get_or_insert(f);
            }
        }
    }
    first
}

/// The adversary answers a dismissal: accepted when every dismissing vote
/// cites a line that handles the concern, challenged otherwise, naming the
/// evaluators whose citations fail.
pub fn rebut(spec: &Spec, catalog: &Catalog, concern: &Concern) -> Rebuttal {
    let terms = topic(spec, concern);
    let mut challenged = Vec::new();
    // Evaluators that cite the same flawed line are named together, so the
    // quote appears once.
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    for v in concern
        .votes
        .iter()
        .filter(|v| v.decision == Decision::Dismiss)
    {
        if let Some(flaw) = vote_flaw(spec, catalog, concern, &v.cites) {
            let why = flaw.describe(spec, concern, &terms);
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, who)) => who.push(v.evaluator.clone()),
                None => reasons.push((why, vec![v.evaluator.clone()])),
            }
            challenged.push(v.evaluator.clone());
        }
    }
    if !challenged.is_empty() {
        let text = reasons
            .iter()
            .map(|(why, who)| {
                format!(
                    "{} {} {why}",
                    who.join(" and "),
                    if who.len() == 1 { "cites" } else { "cite" }
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        return Rebuttal {
            outcome: RebuttalOutcome::Challenged,
            reasoning: format!("{text}; that does not show this concern is handled."),
            challenged,
        };
    }
    let cites = concern.dismissal_cites();
    Rebuttal {
        outcome: RebuttalOutcome::Accepted,
        reasoning: format!(
            "the cited line{} {} answer{} it.",
            if cites.len() == 1 { "" } else { "s" },
            cites
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if cites.len() == 1 { "s" } else { "" },
        ),
        challenged: Vec::new(),
    }
}

/// The adjudicator decides a challenged dismissal: it stands only if a
/// majority of all the votes dismissed it with a sound citation.
/// `evaluator` is the adjudicator's name; the pipeline never passes one
/// whose citation was challenged.
pub fn adjudicate(
    spec: &Spec,
    catalog: &Catalog,
    evaluator: &str,
    concern: &Concern,
) -> Adjudication {
    let total = concern.votes.len().max(1);
    let sound: Vec<&str> = concern
        .votes
        .iter()
        .filter(|v| {
            v.decision == Decision::Dismiss && vote_flaw(spec, catalog, concern, &v.cites).is_none()
        })
        .map(|v| v.evaluator.as_str())
        .collect();
    let vote_word = |n: usize| if n == 1 { "vote" } else { "votes" };
    if sound.len() * 2 > total {
        Adjudication {
            outcome: AdjudicationOutcome::Upheld,
            reasoning: format!(
                "{} of {} {} still dismiss with a line that handles it ({}); the dismissal stands.",
                sound.len(),
                total,
                vote_word(total),
                sound.join(", ")
            ),
            adjudicator: Some(evaluator.to_string()),
        }
    } else {
        Adjudication {
            outcome: AdjudicationOutcome::Overturned,
            reasoning: format!(
                "only {} of {} {} cite a line that handles it.",
                sound.len(),
                total,
                vote_word(total)
            ),
            adjudicator: Some(evaluator.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::{Concern, Decision, RawConcern, Severity, Vote};

    const DOC: &str = "# S\n\n## Integrations\n\nThe checkout service calls the Fraud API to score orders.\nA high score holds the order.\n\nAnalysts review held orders daily.\nAnalysts can release orders.\n\nThe nightly export to the Warehouse has a 10-minute timeout.\nCalls to the Fraud API time out after 2 s.\nThe Fraud API has no timeout on the batch endpoint.\n<!-- Fraud API calls time out after 1 s. -->\n";

    fn concern(votes: &[(Decision, Vec<usize>)]) -> Concern {
        let mut c = Concern::from_raw(
            "burned_oncall",
            "BURN",
            RawConcern {
                title: "No timeout on calls the Fraud API".into(),
                detail: "d".into(),
                severity: Severity::High,
                lines: Some((5, 5)),
                rule: Some("missing-timeout".into()),
                section: Some("Integrations".into()),
                subject: vec!["calls the fraud api".into()],
                confidence: None,
            },
        );
        c.votes = votes
            .iter()
            .enumerate()
            .map(|(i, (d, cites))| Vote {
                evaluator: format!("e{i}"),
                decision: *d,
                reasoning: String::new(),
                cites: cites.clone(),
            })
            .collect();
        c
    }

    fn setup() -> (Spec, Catalog) {
        (
            Spec::parse(None, DOC.to_string()),
            Catalog::builtin().unwrap(),
        )
    }

    #[test]
    fn challenges_missing_off_topic_negated_and_hidden_citations() {
        let (spec, cat) = setup();
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![])]));
        assert_eq!(r.outcome, RebuttalOutcome::Challenged);
        assert_eq!(r.challenged, vec!["e0"]);
        // Line 11 is about the export job: no Fraud API, not next to line 5.
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![11])]));
        assert_eq!(r.outcome, RebuttalOutcome::Challenged);
        assert!(r.reasoning.contains("line 11"), "{}", r.reasoning);
        assert!(r.reasoning.contains("something else"), "{}", r.reasoning);
        // Line 13 names the Fraud API but says it has no timeout.
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![13])]));
        assert_eq!(r.outcome, RebuttalOutcome::Challenged);
        assert!(r.reasoning.contains("absent"), "{}", r.reasoning);
        // Line 14 is an HTML comment.
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![14])]));
        assert_eq!(r.outcome, RebuttalOutcome::Challenged);
        assert!(r.reasoning.contains("hidden"), "{}", r.reasoning);
    }

    #[test]
    fn accepts_citations_that_name_the_component_or_sit_next_to_it() {
        let (spec, cat) = setup();
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![12])]));
        assert_eq!(r.outcome, RebuttalOutcome::Accepted, "{}", r.reasoning);
        assert!(r.challenged.is_empty());
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![6])]));
        assert_eq!(r.outcome, RebuttalOutcome::Accepted);
        // One sound citation is enough for a vote.
        let r = rebut(&spec, &cat, &concern(&[(Decision::Dismiss, vec![11, 12])]));
        assert_eq!(r.outcome, RebuttalOutcome::Accepted);
    }

    #[test]
    fn only_the_failing_evaluators_are_named_and_adjudication_counts_sound_votes() {
        use crate::concern::AdjudicationOutcome::{Overturned, Upheld};
        let (spec, cat) = setup();
        let c = concern(&[
            (Decision::Dismiss, vec![12]),
            (Decision::Dismiss, vec![11]),
            (Decision::Dismiss, vec![12]),
        ]);
        let r = rebut(&spec, &cat, &c);
        assert_eq!(r.challenged, vec!["e1"]);
        let a = adjudicate(&spec, &cat, "e0", &c);
        assert_eq!(a.outcome, Upheld, "{}", a.reasoning);
        let c = concern(&[
            (Decision::Dismiss, vec![12]),
            (Decision::Dismiss, vec![11]),
            (Decision::Accept, vec![5]),
        ]);
        let a = adjudicate(&spec, &cat, "e2", &c);
        assert_eq!(a.outcome, Overturned);
        assert!(a.reasoning.contains("only 1 of 3 votes"), "{}", a.reasoning);
        assert_eq!(a.adjudicator.as_deref(), Some("e2"));
    }
}
