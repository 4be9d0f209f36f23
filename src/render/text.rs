//! The text report, shaped like the seed's "Adversarial Gauntlet Report".

use super::{Style, checked_summary, cost_line, count};
use crate::concern::{AdjudicationOutcome, Concern, Decision, Status};
use crate::verdict::{Outcome, Verdict};
use std::io::{self, Write};

pub fn write(v: &Verdict, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let s = &v.stats;
    writeln!(out, "{}", style.bold("=== Adversarial Gauntlet Report ==="))?;
    if let Some(p) = &v.spec.path {
        writeln!(out, "Spec: {p} ({} lines)", v.spec.lines)?;
    } else {
        writeln!(out, "Spec: <stdin> ({} lines)", v.spec.lines)?;
    }
    writeln!(
        out,
        "Adversaries: {} ({})",
        v.adversaries.len(),
        v.adversaries.join(", ")
    )?;
    writeln!(out, "Attack model: {}", v.models.attack.join(", "))?;
    writeln!(out, "Eval models: {}", v.models.eval.join(", "))?;
    writeln!(out, "Duration: {:.3}s", s.duration_ms.total as f64 / 1000.0)?;
    // Issue 10: complexity level and technologies.
    if let Some(a) = &v.complexity {
        writeln!(
            out,
            "Complexity: {} ({}: {})",
            a.level.as_str(),
            a.requested,
            crate::nuance::command::plain(&a.reasons.join("; "))
        )?;
    }
    if let Some(n) = &v.nuances {
        writeln!(
            out,
            "Technologies: {} ({} nuances applied)",
            crate::nuance::command::plain(
                &n.technologies
                    .iter()
                    .map(|t| t.technology.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            n.applied.len()
        )?;
    }
    writeln!(out)?;
    super::memory::text_top(v, out, style)?;
    writeln!(out, "Phase 1 - Attack Generation:")?;
    for a in &v.adversaries {
        let n = s.attack.per_adversary.get(a).copied().unwrap_or(0);
        let failed = if s.attack.failed.contains(a) {
            " (FAILED: produced nothing)"
        } else {
            ""
        };
        writeln!(out, "  {a}: {}{failed}", count(n, "concern"))?;
    }
    writeln!(out, "  Total: {} raised", count(s.attack.total, "concern"))?;
    if s.filter.store {
        writeln!(out)?;
        writeln!(out, "Phase 1.5 - Self-Filtering:")?;
        writeln!(
            out,
            "  Dropped: {} (already addressed with high confidence)",
            s.filter.dropped
        )?;
        writeln!(
            out,
            "  Noted: {} (has explanation but re-verifying)",
            s.filter.noted
        )?;
        writeln!(
            out,
            "  Proceeding with: {}",
            count(s.filter.proceeding, "concern")
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Phase 2 - Multi-Model Evaluation:")?;
    writeln!(
        out,
        "  Batches: {} ({})",
        s.evaluation.batches,
        count(s.evaluation.evaluated, "concern")
    )?;
    writeln!(out, "  Dismissed: {}", s.evaluation.dismissed)?;
    writeln!(out, "  Accepted: {}", s.evaluation.accepted)?;
    writeln!(out, "  Deferred: {}", s.evaluation.deferred)?;
    writeln!(
        out,
        "  Disagreements: {} (resolved by majority vote)",
        s.evaluation.disagreements
    )?;
    writeln!(out)?;
    writeln!(out, "Phase 3 - Rebuttals:")?;
    writeln!(
        out,
        "  Challenges: {} (of {})",
        s.rebuttal.challenges,
        count(s.rebuttal.dismissals, "dismissal")
    )?;
    writeln!(out, "  Reinstated: {}", s.rebuttal.sustained)?;
    if let Some(fb) = &v.final_boss {
        writeln!(out)?;
        writeln!(
            out,
            "Phase 5 - Final Boss (UX review): {}",
            style.bold(fb.verdict.as_str())
        )?;
        for f in &fb.findings {
            writeln!(
                out,
                "  - [{}] ({}) {}",
                f.check,
                style.severity(f.severity),
                f.finding
            )?;
        }
    }
    writeln!(out)?;
    let surviving = v.surviving();
    let label = match v.verdict {
        Outcome::Pass => style.outcome("PASS", true),
        Outcome::Revise => style.outcome("REVISE", false),
        Outcome::Incomplete => style.outcome("INCOMPLETE", false),
    };
    writeln!(out, "Final Verdict: {label}")?;
    if surviving.is_empty() {
        writeln!(out, "  No concern requires spec revision.")?;
        writeln!(out, "  Checked: {}", checked_summary(v))?;
    } else {
        writeln!(
            out,
            "  {} spec revision:",
            match surviving.len() {
                1 => "1 concern requires".to_string(),
                n => format!("{n} concerns require"),
            }
        )?;
        for c in &surviving {
            write_concern(out, c, style)?;
        }
    }
    // Deferrals that fail the run are listed once, under "needs a decision".
    let failing_deferrals: Vec<&str> = v.needs_decision().iter().map(|c| c.id.as_str()).collect();
    let deferred: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Deferred && !failing_deferrals.contains(&c.id.as_str()))
        .collect();
    if !deferred.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "  {} deferred (need a decision):",
            count(deferred.len() as u64, "concern")
        )?;
        for c in deferred {
            write_concern(out, c, style)?;
        }
    }
    let dismissed: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Dismissed)
        .collect();
    if !dismissed.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "Dismissed with cited evidence: {}",
            count(dismissed.len() as u64, "concern")
        )?;
        for c in dismissed {
            write_dismissed(out, c, style)?;
        }
    }
    if s.filter.store {
        let filtered = v
            .concerns
            .iter()
            .filter(|c| c.status == Status::Filtered)
            .count();
        writeln!(out)?;
        writeln!(out, "Filtered as already resolved: {filtered}")?;
    }
    super::memory::text_sections(v, out, style)?;
    writeln!(out)?;
    for w in &v.warnings {
        writeln!(out, "Warning: {w}")?;
    }
    writeln!(out, "Cost: {}", cost_line(v))?;
    Ok(())
}

/// A dismissed concern, one line, then the lines that handle it as the
/// dismissing evaluators quoted them (once, not once per vote).
fn write_dismissed(out: &mut dyn Write, c: &Concern, style: Style) -> io::Result<()> {
    writeln!(
        out,
        "  - [{}] {} ({}, {}) {}",
        c.adversary,
        c.id,
        style.severity(c.severity),
        c.lines_label(),
        style.bold(&c.title)
    )?;
    let dismissers: Vec<&crate::concern::Vote> = c
        .votes
        .iter()
        .filter(|v| v.decision == Decision::Dismiss)
        .collect();
    let cites = c.dismissal_cites();
    let by = dismissers
        .iter()
        .map(|v| v.evaluator.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(first) = dismissers.first() {
        writeln!(
            out,
            "      {} ({}): {}",
            match cites.len() {
                0 => "no line cited".to_string(),
                1 => format!("cited line {}", cites[0]),
                _ => format!(
                    "cited lines {}",
                    cites
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            style.dim(&by),
            first.reasoning
        )?;
    }
    if let Some(a) = &c.adjudication
        && a.outcome == AdjudicationOutcome::Upheld
    {
        writeln!(
            out,
            "      upheld on challenge by {}: {}",
            a.adjudicator.as_deref().unwrap_or("the adjudicator"),
            a.reasoning
        )?;
    }
    Ok(())
}

fn write_concern(out: &mut dyn Write, c: &Concern, style: Style) -> io::Result<()> {
    let reinstated = if c.status == Status::Reinstated
        || c.adjudication
            .as_ref()
            .is_some_and(|a| a.outcome == AdjudicationOutcome::Overturned)
    {
        " (reinstated)"
    } else {
        ""
    };
    writeln!(
        out,
        "    - [{}]{reinstated} {} ({}, {}) {}",
        c.adversary,
        c.id,
        style.severity(c.severity),
        c.lines_label(),
        style.bold(&c.title)
    )?;
    writeln!(out, "        {}", c.detail)?;
    if let Some(n) = &c.nuance {
        writeln!(
            out,
            "        nuance ({}, {}:{}): {}",
            crate::nuance::command::plain(&n.technology),
            crate::nuance::command::plain(&n.source),
            n.line,
            crate::nuance::command::plain(&n.nuance)
        )?;
    }
    for vote in &c.votes {
        writeln!(
            out,
            "        {} {}: {}",
            style.dim(&vote.evaluator),
            vote.decision.as_str(),
            vote.reasoning
        )?;
    }
    if let Some(r) = &c.rebuttal {
        writeln!(
            out,
            "        rebuttal ({}): {}",
            match r.outcome {
                crate::concern::RebuttalOutcome::Accepted => "accepted the dismissal",
                crate::concern::RebuttalOutcome::Challenged => "challenged",
            },
            r.reasoning
        )?;
    }
    if let Some(a) = &c.adjudication {
        writeln!(
            out,
            "        adjudication{} ({}): {}",
            a.adjudicator
                .as_deref()
                .map(|n| format!(" by {n}"))
                .unwrap_or_default(),
            match a.outcome {
                AdjudicationOutcome::Upheld => "upheld",
                AdjudicationOutcome::Overturned => "reinstated",
            },
            a.reasoning
        )?;
    }
    if let Some(f) = &c.filter {
        writeln!(
            out,
            "        previously addressed ({}, confidence {:.2}): {}",
            f.entry_id, f.confidence, f.explanation
        )?;
    }
    Ok(())
}
