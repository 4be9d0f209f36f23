//! The text report, shaped like the seed's "Adversarial Gauntlet Report".

use super::{Style, cost_line};
use crate::concern::{AdjudicationOutcome, Concern, Status};
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
    writeln!(out, "Phase 1 - Attack Generation:")?;
    for a in &v.adversaries {
        let n = s.attack.per_adversary.get(a).copied().unwrap_or(0);
        let failed = if s.attack.failed.contains(a) {
            " (FAILED: produced nothing)"
        } else {
            ""
        };
        writeln!(out, "  {a}: {n} concerns{failed}")?;
    }
    writeln!(out, "  Total: {} raw concerns", s.attack.total)?;
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
    writeln!(out, "  Proceeding with: {} concerns", s.filter.proceeding)?;
    writeln!(out)?;
    writeln!(out, "Phase 2 - Multi-Model Evaluation:")?;
    writeln!(out, "  Models: {}", v.models.eval.join(", "))?;
    writeln!(
        out,
        "  Batches: {} ({} concerns)",
        s.evaluation.batches, s.evaluation.evaluated
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
        "  Challenges: {} (of {} dismissals)",
        s.rebuttal.challenges, s.rebuttal.dismissals
    )?;
    writeln!(
        out,
        "  Sustained: {} (concern reinstated)",
        s.rebuttal.sustained
    )?;
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
    } else {
        writeln!(out, "  {} concerns require spec revision:", surviving.len())?;
        for c in &surviving {
            write_concern(out, c, style)?;
        }
    }
    let deferred: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Deferred)
        .collect();
    if !deferred.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "  {} concerns deferred (need a decision):",
            deferred.len()
        )?;
        for c in deferred {
            write_concern(out, c, style)?;
        }
    }
    let dismissed = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Dismissed)
        .count();
    let filtered = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Filtered)
        .count();
    writeln!(out)?;
    writeln!(
        out,
        "Dismissed with cited evidence: {dismissed}; filtered as already resolved: {filtered}"
    )?;
    for w in &v.warnings {
        writeln!(out, "Warning: {w}")?;
    }
    writeln!(out, "Cost: {}", cost_line(v))?;
    Ok(())
}

fn write_concern(out: &mut dyn Write, c: &Concern, style: Style) -> io::Result<()> {
    let reinstated = if c.status == Status::Reinstated
        || c.adjudication
            .as_ref()
            .is_some_and(|a| a.outcome == AdjudicationOutcome::Overturned)
    {
        " (rebuttal sustained)"
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
            "        adjudication ({}): {}",
            match a.outcome {
                AdjudicationOutcome::Upheld => "upheld",
                AdjudicationOutcome::Overturned => "overturned",
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
