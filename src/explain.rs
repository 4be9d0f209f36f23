//! `gauntlet explain ID [SPEC]`: why one concern ended as it did. For a
//! concern id (or a unique prefix of one) it shows the rule that fired and
//! on which lines (trigger text), the evidence each offline evaluator found
//! (lines, affirmed / negated / deferred) and its vote, the rebuttal and
//! adjudication, and a sentence on the outcome. Given a rule id instead, it
//! shows every line the rule's triggers match and what the attacker did
//! there (raised, or not raised and which safeguard line answers it), to see why a rule
//! did not fire.
//!
//! Builds a value (`Explanation`) and renders it; never prints, never runs
//! anything but the offline engine.

use crate::catalog::Catalog;
use crate::concern::{Concern, Decision, Status};
use crate::offline::attacker::{self, excerpt};
use crate::offline::evaluator::{self, Standard};
use crate::offline::evidence::{Evidence, EvidenceKind};
use crate::rule::Rule;
use crate::spec::Spec;
use crate::verdict::Verdict;
use serde::Serialize;
use std::io::{self, Write};

#[derive(Debug, Clone, Serialize)]
pub struct LineRef {
    pub line: usize,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvidenceLine {
    pub line: usize,
    /// affirmed, negated or deferred.
    pub kind: &'static str,
    pub matched: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvaluatorView {
    pub evaluator: String,
    /// What this standard accepts as evidence.
    pub standard: String,
    /// The lines it searched (first, last).
    pub searched: (usize, usize),
    pub evidence: Vec<EvidenceLine>,
    pub decision: Option<String>,
    pub reasoning: Option<String>,
    pub cites: Vec<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConcernExplanation {
    pub id: String,
    pub adversary: String,
    pub title: String,
    pub status: String,
    pub lines: Option<(usize, usize)>,
    pub rule: Option<String>,
    /// The technology nuance the rule cites, with its file and line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nuance: Option<crate::nuance::Citation>,
    /// Trigger matches of the rule inside the concern's lines.
    pub triggers: Vec<LineRef>,
    pub detail: String,
    pub evaluators: Vec<EvaluatorView>,
    pub rebuttal: Option<String>,
    pub adjudication: Option<String>,
    /// Why it ended as it did, in one or two sentences.
    pub outcome: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleHit {
    pub line: usize,
    pub matched: String,
    pub text: String,
    /// `raised as ID (status)` or `not raised (...); line N states ...`.
    pub result: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RuleExplanation {
    pub rule: String,
    pub adversary: String,
    pub check: Option<String>,
    pub hits: Vec<RuleHit>,
    pub concerns: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Explanation {
    Concern(Box<ConcernExplanation>),
    Rule(RuleExplanation),
}

/// Find what `id` names in this verdict: a concern id (case-insensitive,
/// unique prefix allowed) or a rule id of a loaded persona.
pub fn explain(
    spec: &Spec,
    catalog: &Catalog,
    verdict: &Verdict,
    id: &str,
) -> Result<Explanation, String> {
    let want = id.trim().to_ascii_lowercase();
    let matches: Vec<&Concern> = verdict
        .concerns
        .iter()
        .filter(|c| c.id.to_ascii_lowercase().starts_with(&want))
        .collect();
    match matches.len() {
        1 => {
            return Ok(Explanation::Concern(Box::new(concern(
                spec, catalog, matches[0],
            ))));
        }
        n if n > 1 => {
            return Err(format!(
                "`{id}` matches {n} concerns ({}); give more of the id",
                matches
                    .iter()
                    .map(|c| c.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        _ => {}
    }
    for persona in catalog.personas.values() {
        if let Some(rule) = persona.rule(id.trim()) {
            return Ok(Explanation::Rule(rule_view(
                spec,
                &persona.name,
                rule,
                verdict,
            )));
        }
    }
    let known: Vec<&str> = verdict.concerns.iter().map(|c| c.id.as_str()).collect();
    Err(format!(
        "no concern or rule `{id}` in this run (concerns: {})",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

fn kind_name(k: EvidenceKind) -> &'static str {
    match k {
        EvidenceKind::Affirmed => "affirmed",
        EvidenceKind::Negated => "negated",
        EvidenceKind::Deferred => "deferred",
    }
}

fn evidence_lines(spec: &Spec, found: &[Evidence]) -> Vec<EvidenceLine> {
    found
        .iter()
        .map(|e| EvidenceLine {
            line: e.line,
            kind: kind_name(e.kind),
            matched: e.matched.clone(),
            text: excerpt(&spec.lines[e.line - 1].text),
        })
        .collect()
}

fn concern(spec: &Spec, catalog: &Catalog, c: &Concern) -> ConcernExplanation {
    let rule = c
        .rule
        .as_deref()
        .and_then(|r| catalog.persona(&c.adversary)?.rule(r));
    let triggers: Vec<LineRef> = match (rule, c.lines) {
        (Some(rule), Some((a, b))) => attacker::trigger_hits(spec, rule)
            .into_iter()
            .filter(|(n, _)| *n >= a && *n <= b)
            .map(|(n, m)| LineRef {
                line: n,
                text: format!("\"{m}\" in: {}", excerpt(&spec.lines[n - 1].text)),
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut evaluators = Vec::new();
    for standard in [Standard::Section, Standard::Document, Standard::Strict] {
        let vote = c.votes.iter().find(|v| v.evaluator == standard.name());
        let (found, range) = evaluator::evidence(spec, catalog, standard, c)
            .unwrap_or((Vec::new(), 1..spec.lines.len() + 1));
        evaluators.push(EvaluatorView {
            evaluator: standard.name().to_string(),
            standard: standard.describe().to_string(),
            searched: (range.start, range.end.saturating_sub(1)),
            evidence: evidence_lines(spec, &found),
            decision: vote.map(|v| v.decision.as_str().to_string()),
            reasoning: vote.map(|v| v.reasoning.clone()),
            cites: vote.map(|v| v.cites.clone()).unwrap_or_default(),
        });
    }
    // Votes from evaluators that are not offline standards (model providers).
    for v in c
        .votes
        .iter()
        .filter(|v| Standard::parse(&v.evaluator).is_none())
    {
        evaluators.push(EvaluatorView {
            evaluator: v.evaluator.clone(),
            standard: "model".to_string(),
            searched: (0, 0),
            evidence: Vec::new(),
            decision: Some(v.decision.as_str().to_string()),
            reasoning: Some(v.reasoning.clone()),
            cites: v.cites.clone(),
        });
    }
    ConcernExplanation {
        id: c.id.clone(),
        adversary: c.adversary.clone(),
        title: c.title.clone(),
        status: c.status.as_str().to_string(),
        lines: c.lines,
        rule: c.rule.clone(),
        nuance: c.nuance.clone(),
        triggers,
        detail: c.detail.clone(),
        evaluators,
        rebuttal: c
            .rebuttal
            .as_ref()
            .map(|r| format!("{:?}: {}", r.outcome, r.reasoning).to_lowercase()),
        adjudication: c.adjudication.as_ref().map(|a| {
            format!(
                "{:?} by {}: {}",
                a.outcome,
                a.adjudicator.as_deref().unwrap_or("the adjudicator"),
                a.reasoning
            )
        }),
        outcome: outcome(c),
    }
}

fn count(c: &Concern, d: Decision) -> usize {
    c.votes.iter().filter(|v| v.decision == d).count()
}

fn outcome(c: &Concern) -> String {
    let (acc, dis, def) = (
        count(c, Decision::Accept),
        count(c, Decision::Dismiss),
        count(c, Decision::Defer),
    );
    let tally = format!("{acc} accept, {dis} dismiss, {def} defer");
    match c.status {
        Status::Accepted => format!(
            "accepted: the vote was {tally}; a majority found no line stating the safeguard, so the spec must be revised."
        ),
        Status::Dismissed => format!(
            "dismissed: the vote was {tally}; the dismissal cites lines {} and the rebuttal did not overturn it.",
            c.dismissal_cites()
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Status::Reinstated => format!(
            "reinstated: the vote was {tally} and dismissed it, but the adversary's challenge was upheld (the cited evidence is not about this concern)."
        ),
        Status::Deferred => format!(
            "deferred: the vote was {tally}; no majority, or the safeguard is only an open question or future work."
        ),
        Status::Filtered => {
            "filtered: a resolved-concerns entry matched it before evaluation.".to_string()
        }
        Status::Raised => "raised: it was not evaluated.".to_string(),
    }
}

fn rule_view(spec: &Spec, adversary: &str, rule: &Rule, verdict: &Verdict) -> RuleExplanation {
    let concerns: Vec<&Concern> = verdict
        .concerns
        .iter()
        .filter(|c| c.adversary == adversary && c.rule.as_deref() == Some(rule.id()))
        .collect();
    let found: Vec<(usize, String)> = match rule.def.check {
        Some(check) => crate::offline::checks::run(spec, rule, check)
            .into_iter()
            .map(|c| (c.first, format!("{}: {}", c.what, c.note)))
            .collect(),
        None => attacker::trigger_hits(spec, rule),
    };
    let hits = found
        .into_iter()
        .map(|(n, m)| {
            let raised = concerns
                .iter()
                .find(|c| c.lines.is_some_and(|(a, b)| n >= a && n <= b));
            // A rule that yields to another (`yields_to`) is not raised
            // where that rule's concern covers the line.
            let yielded_to = verdict.concerns.iter().find(|c| {
                c.adversary == adversary
                    && c.rule
                        .as_deref()
                        .is_some_and(|r| rule.def.yields_to.iter().any(|y| y == r))
                    && c.lines.is_some_and(|(a, b)| n >= a && n <= b)
            });
            let result = match (raised, yielded_to) {
                (Some(c), _) => format!("raised as {} ({})", c.id, c.status.as_str()),
                (None, Some(c)) => format!(
                    "not raised: {} (`{}`) tells the same gap on these lines (`yields_to`)",
                    c.id,
                    c.rule.as_deref().unwrap_or_default()
                ),
                (None, None) => match attacker::held_back_by(spec, rule, n, n)
                    .or_else(|| {
                        // Hits close together are judged as one finding.
                        let (a, b) = attacker::cluster_of(spec, rule, n);
                        attacker::held_back_by(spec, rule, a, b)
                    }) {
                    // The attacker raises stated safeguards too (issue 9), so
                    // a hit left out was cut by `max`; say what answers it.
                    Some(e) => format!(
                        "not raised (the rule's `max` was reached); line {} states the safeguard (\"{}\")",
                        e.line,
                        excerpt(&spec.lines[e.line - 1].text)
                    ),
                    None => "not raised: the rule's `max` was reached, or it merged into another concern".to_string(),
                },
            };
            RuleHit {
                line: n,
                matched: m,
                text: excerpt(&spec.lines[n - 1].text),
                result,
            }
        })
        .collect();
    RuleExplanation {
        rule: rule.id().to_string(),
        adversary: adversary.to_string(),
        check: rule.def.check.map(|c| format!("{c:?}")),
        hits,
        concerns: concerns
            .iter()
            .map(|c| format!("{} ({}) {}", c.id, c.status.as_str(), c.lines_label()))
            .collect(),
    }
}

/// The explanation as plain text.
pub fn write_text(e: &Explanation, out: &mut dyn Write) -> io::Result<()> {
    match e {
        Explanation::Concern(c) => {
            writeln!(out, "{} [{}] {}", c.id, c.adversary, c.title)?;
            writeln!(
                out,
                "status: {}   lines: {}   rule: {}",
                c.status,
                c.lines
                    .map(|(a, b)| if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    })
                    .unwrap_or_else(|| "whole document".to_string()),
                c.rule.as_deref().unwrap_or("(none)")
            )?;
            if let Some(n) = &c.nuance {
                writeln!(
                    out,
                    "nuance: {} ({}:{}): {}",
                    crate::nuance::command::plain(&n.technology),
                    crate::nuance::command::plain(&n.source),
                    n.line,
                    crate::nuance::command::plain(&n.nuance)
                )?;
            }
            writeln!(out, "\nWhy it was raised")?;
            if c.triggers.is_empty() {
                writeln!(
                    out,
                    "  (no trigger line: a built-in check or a model raised it)"
                )?;
            }
            for t in &c.triggers {
                writeln!(out, "  line {}: {}", t.line, t.text)?;
            }
            writeln!(out, "  {}", c.detail)?;
            writeln!(out, "\nEvaluators")?;
            for v in &c.evaluators {
                writeln!(
                    out,
                    "  {} ({}; searched lines {}-{}): {}",
                    v.evaluator,
                    v.standard,
                    v.searched.0,
                    v.searched.1,
                    v.decision.as_deref().unwrap_or("no vote")
                )?;
                if v.evidence.is_empty() {
                    writeln!(out, "    evidence: none")?;
                }
                for ev in &v.evidence {
                    writeln!(
                        out,
                        "    line {} {} (\"{}\"): {}",
                        ev.line, ev.kind, ev.matched, ev.text
                    )?;
                }
                if let Some(r) = &v.reasoning {
                    writeln!(out, "    reasoning: {r}")?;
                }
            }
            if let Some(r) = &c.rebuttal {
                writeln!(out, "\nRebuttal: {r}")?;
            }
            if let Some(a) = &c.adjudication {
                writeln!(out, "Adjudication: {a}")?;
            }
            writeln!(out, "\nOutcome: {}", c.outcome)?;
        }
        Explanation::Rule(r) => {
            writeln!(out, "rule {} [{}]", r.rule, r.adversary)?;
            if let Some(check) = &r.check {
                writeln!(out, "built-in check: {check}")?;
            }
            if r.hits.is_empty() {
                writeln!(
                    out,
                    "no trigger (or built-in check) matches a design line of this spec"
                )?;
            }
            for h in &r.hits {
                writeln!(out, "  line {} \"{}\": {}", h.line, h.matched, h.result)?;
            }
            writeln!(
                out,
                "concerns: {}",
                if r.concerns.is_empty() {
                    "none".to_string()
                } else {
                    r.concerns.join("; ")
                }
            )?;
        }
    }
    Ok(())
}

/// The `explain` command: run the spec offline (no store) and explain `id`.
pub fn run(
    id: &str,
    args: &crate::cli::SpecArgs,
    out: &mut dyn Write,
    events: &(dyn Fn(crate::event::Event) + Send + Sync),
) -> Result<u8, crate::error::Error> {
    use crate::error::{RunError, UsageError};
    let config = crate::config::Config::from_args(&args.run)?;
    let loaded = crate::input::load(args.spec.as_deref(), args.run.max_bytes)?;
    let gauntlet = config.gauntlet()?;
    let verdict = gauntlet.run_blocking(&loaded.spec, &crate::filter::NoFilter, events);
    let e = explain(&loaded.spec, &config.catalog, &verdict, id).map_err(UsageError::Invalid)?;
    let written = match args.format {
        crate::render::Format::Json => serde_json::to_writer_pretty(&mut *out, &e)
            .map_err(io::Error::other)
            .and_then(|_| writeln!(out)),
        _ => write_text(&e, out),
    };
    written.map_err(|source| RunError::Write {
        path: "<stdout>".to_string(),
        source,
    })?;
    Ok(crate::exit_code::PASS)
}
