//! The Markdown review report written after each run that uses the store
//! (`.adversarial-spec/reviews/review_YYYY-MM-DD_HHMMSS.md`), following the
//! seed's "Spec Review Report": spec summary, shout-outs, low performers,
//! rebuttal effectiveness, what the self-filter did, model performance and
//! cost. Renders into a writer; `store::persist` decides where it goes.

use crate::adversary_stats::{Leaderboard, RunRecord, StatsFile, cell, low_performer, percent};
use crate::concern::{FilterAction, Status};
use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use std::io::{self, Write};

/// `review_2026-01-22_143000.md`.
pub fn file_name(now: DateTime<Utc>) -> String {
    format!("review_{}.md", now.format("%Y-%m-%d_%H%M%S"))
}

/// The report for one run. `cumulative` is the stats after this run.
pub fn write(
    out: &mut dyn Write,
    verdict: &Verdict,
    run: &RunRecord,
    cumulative: &StatsFile,
    now: DateTime<Utc>,
) -> io::Result<()> {
    writeln!(out, "# Spec Review Report")?;
    writeln!(out, "Generated: {}", now.format("%Y-%m-%dT%H:%M:%SZ"))?;
    writeln!(out)?;
    writeln!(out, "## Spec Summary")?;
    writeln!(
        out,
        "- Title: {}",
        cell(verdict.spec.title.as_deref().unwrap_or("(untitled)"))
    )?;
    writeln!(
        out,
        "- File: {}",
        cell(verdict.spec.path.as_deref().unwrap_or("<stdin>"))
    )?;
    writeln!(out, "- SHA-256: {}", verdict.spec.sha256)?;
    writeln!(out, "- Verdict: {}", verdict.verdict.as_str())?;
    writeln!(out, "- Adversaries: {}", verdict.adversaries.join(", "))?;
    writeln!(
        out,
        "- Models: attack {}; eval {}{}",
        verdict.models.attack.join(", "),
        verdict.models.eval.join(", "),
        verdict
            .models
            .final_boss
            .as_deref()
            .map(|m| format!("; final boss {m}"))
            .unwrap_or_default()
    )?;
    writeln!(out)?;

    writeln!(out, "## Adversary Performance (Gauntlet)")?;
    writeln!(out)?;
    writeln!(out, "### Shout-Outs (Valuable Contributions)")?;
    writeln!(
        out,
        "| Adversary | Concerns Raised | Filtered | Accepted | Acceptance Rate | Notable Finds |"
    )?;
    writeln!(
        out,
        "|-----------|-----------------|----------|----------|-----------------|---------------|"
    )?;
    let mut names: Vec<&String> = run.adversaries.keys().collect();
    names.sort_by(|a, b| {
        let (x, y) = (&run.adversaries[*a], &run.adversaries[*b]);
        y.acceptance_rate()
            .total_cmp(&x.acceptance_rate())
            .then(a.cmp(b))
    });
    for name in names {
        let c = &run.adversaries[name];
        let finds: Vec<String> = verdict
            .concerns
            .iter()
            .filter(|x| &x.adversary == name && x.status.requires_revision())
            .map(|x| {
                if x.status == Status::Reinstated {
                    format!("(rebuttal) {}", x.title)
                } else {
                    x.title.clone()
                }
            })
            .take(3)
            .collect();
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(name),
            c.concerns_raised,
            c.filtered,
            c.accepted,
            percent(c.acceptance_rate()),
            cell(&if finds.is_empty() {
                "-".to_string()
            } else {
                finds.join("; ")
            })
        )?;
    }
    writeln!(out)?;
    writeln!(out, "### Low Performers (For Review)")?;
    let board = Leaderboard::new(cumulative, None);
    let low: Vec<_> = board.adversaries.iter().filter_map(low_performer).collect();
    if low.is_empty() {
        writeln!(
            out,
            "- None over {} run(s) (acceptance under 20% with at least 10 raised).",
            cumulative.total_runs
        )?;
    }
    for l in &low {
        writeln!(
            out,
            "- {}: {} acceptance rate over {} concerns in {} run(s) - {}",
            l.adversary,
            percent(l.acceptance_rate),
            l.concerns_raised,
            cumulative.total_runs,
            l.recommendation
        )?;
    }
    writeln!(out)?;
    writeln!(out, "### Rebuttal Effectiveness")?;
    let s = &verdict.stats.rebuttal;
    writeln!(out, "- Dismissals sent back: {}", s.dismissals)?;
    writeln!(out, "- Challenged dismissals: {}", s.challenges)?;
    let overturned: Vec<String> = verdict
        .concerns
        .iter()
        .filter(|c| c.status == Status::Reinstated)
        .map(|c| format!("{} ({})", c.id, c.adversary))
        .collect();
    writeln!(
        out,
        "- Overturned: {}{}",
        s.sustained,
        if overturned.is_empty() {
            String::new()
        } else {
            format!(" ({})", overturned.join(", "))
        }
    )?;
    let rate = if s.challenges == 0 {
        "-".to_string()
    } else {
        percent(s.sustained as f64 / s.challenges as f64)
    };
    writeln!(out, "- Win rate: {rate}")?;
    writeln!(out)?;

    writeln!(out, "### Self-Filter")?;
    let f = &verdict.stats.filter;
    writeln!(
        out,
        "- Dropped: {} (already addressed with high confidence)",
        f.dropped
    )?;
    writeln!(
        out,
        "- Noted: {} (previously addressed, evaluated again)",
        f.noted
    )?;
    writeln!(out, "- Proceeding with: {}", f.proceeding)?;
    for c in &verdict.concerns {
        if let Some(n) = &c.filter {
            let what = match n.action {
                FilterAction::Dropped => "dropped",
                FilterAction::Noted => "noted",
            };
            writeln!(
                out,
                "  - {} {what} by {} (similarity {:.2}, confidence {:.2}, now {}): {}",
                c.id,
                n.entry_id,
                n.similarity,
                n.confidence,
                c.status.as_str(),
                cell(&n.explanation.replace('\n', " / "))
            )?;
        }
    }
    writeln!(out)?;

    if let Some(cf) = &verdict.memory.carry_forward {
        writeln!(out, "## Since the Last Run")?;
        if cf.previous_runs == 0 {
            writeln!(
                out,
                "- First run of this spec: its concerns are remembered for the next run."
            )?;
        } else {
            writeln!(
                out,
                "- {} earlier run(s), recognised by {}{}",
                cf.previous_runs,
                cf.matched_by.as_str(),
                if cf.content_changed {
                    "; content changed since the last run"
                } else {
                    ""
                }
            )?;
            crate::render::memory::since_last_run(cf, out)?;
        }
        writeln!(out)?;
    }

    writeln!(out, "## Model Performance")?;
    writeln!(out, "| Model | Role | Tokens | Cost | Notes |")?;
    writeln!(out, "|-------|------|--------|------|-------|")?;
    for (name, m) in &run.models {
        let note = if m.role.contains("attack") {
            format!("Generated {} concerns", verdict.stats.attack.total)
        } else if m.role.contains("eval") {
            format!("Evaluated {} concerns", verdict.stats.evaluation.evaluated)
        } else {
            String::new()
        };
        writeln!(
            out,
            "| {} | {} | {} | ${:.4} | {} |",
            cell(name),
            cell(&m.role),
            m.total_tokens,
            m.total_cost,
            note
        )?;
    }
    writeln!(out)?;
    writeln!(out, "## Total Cost: ${:.4}", verdict.stats.cost_usd)?;
    Ok(())
}
