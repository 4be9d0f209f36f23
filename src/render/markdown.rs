//! The Markdown report, readable as a pull-request comment.

use super::cost_line;
use crate::concern::{Concern, RebuttalOutcome, Status};
use crate::verdict::{Outcome, Verdict};
use std::io::{self, Write};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn write(v: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let s = &v.stats;
    let title = v
        .spec
        .title
        .as_deref()
        .or(v.spec.path.as_deref())
        .unwrap_or("spec");
    let badge = match v.verdict {
        Outcome::Pass => "✅ **PASS**",
        Outcome::Revise => "❌ **REVISE**",
        Outcome::Incomplete => "⚠️ **INCOMPLETE**",
    };
    writeln!(out, "## Adversarial Gauntlet: {}", cell(title))?;
    writeln!(out)?;
    writeln!(
        out,
        "{badge}: {} concern(s) require revision ({} high, {} medium, {} low); {} dismissed, {} filtered, {} deferred.",
        s.final_.requiring_revision,
        s.final_.high,
        s.final_.medium,
        s.final_.low,
        v.concerns
            .iter()
            .filter(|c| c.status == Status::Dismissed)
            .count(),
        v.concerns
            .iter()
            .filter(|c| c.status == Status::Filtered)
            .count(),
        v.concerns
            .iter()
            .filter(|c| c.status == Status::Deferred)
            .count(),
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Adversaries: {} · Attack model: `{}` · Eval models: {} · Duration: {} ms",
        v.adversaries.join(", "),
        v.models.attack.join(", "),
        v.models
            .eval
            .iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", "),
        s.duration_ms.total
    )?;
    writeln!(out)?;
    let surviving = v.surviving();
    if !surviving.is_empty() {
        writeln!(out, "### Concerns that require revision")?;
        writeln!(out)?;
        writeln!(out, "| Severity | Adversary | Lines | Concern | Votes |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for c in &surviving {
            writeln!(
                out,
                "| {} | {} | {} | **{}** `{}`<br>{}{} | {} |",
                c.severity,
                c.adversary,
                c.lines
                    .map(|(a, b)| if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    })
                    .unwrap_or_else(|| "—".into()),
                cell(&c.title),
                c.id,
                cell(&c.detail),
                if c.status == Status::Reinstated {
                    "<br>*Reinstated after rebuttal.*"
                } else {
                    ""
                },
                c.votes
                    .iter()
                    .map(|x| format!("{}: {}", x.evaluator, x.decision.as_str()))
                    .collect::<Vec<_>>()
                    .join("<br>")
            )?;
        }
        writeln!(out)?;
    }
    let deferred: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Deferred)
        .collect();
    if !deferred.is_empty() {
        writeln!(out, "### Deferred (need a decision)")?;
        writeln!(out)?;
        for c in deferred {
            writeln!(
                out,
                "- **{}** `{}` ({}, {}): {}",
                cell(&c.title),
                c.id,
                c.adversary,
                c.lines_label(),
                cell(&c.detail)
            )?;
        }
        writeln!(out)?;
    }
    let dismissed: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Dismissed)
        .collect();
    if !dismissed.is_empty() {
        writeln!(
            out,
            "<details><summary>{} dismissed concern(s) with their reasons</summary>",
            dismissed.len()
        )?;
        writeln!(out)?;
        for c in dismissed {
            writeln!(
                out,
                "- **{}** `{}` ({}, {})",
                cell(&c.title),
                c.id,
                c.adversary,
                c.lines_label()
            )?;
            for vote in c
                .votes
                .iter()
                .filter(|x| x.decision == crate::concern::Decision::Dismiss)
            {
                writeln!(out, "  - {}: {}", vote.evaluator, cell(&vote.reasoning))?;
            }
            if let Some(r) = &c.rebuttal {
                let what = if r.outcome == RebuttalOutcome::Accepted {
                    "accepted the dismissal"
                } else {
                    "challenged"
                };
                writeln!(out, "  - {} {what}: {}", c.adversary, cell(&r.reasoning))?;
            }
        }
        writeln!(out)?;
        writeln!(out, "</details>")?;
        writeln!(out)?;
    }
    let won: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Reinstated)
        .collect();
    if !won.is_empty() {
        writeln!(out, "### Rebuttals that won")?;
        writeln!(out)?;
        for c in won {
            if let Some(r) = &c.rebuttal {
                writeln!(out, "- `{}` {}: {}", c.id, c.adversary, cell(&r.reasoning))?;
            }
        }
        writeln!(out)?;
    }
    if let Some(fb) = &v.final_boss {
        writeln!(out, "### Final boss (UX review): {}", fb.verdict.as_str())?;
        writeln!(out)?;
        for f in &fb.findings {
            writeln!(
                out,
                "- **{}** ({}): {}",
                f.check,
                f.severity,
                cell(&f.finding)
            )?;
        }
        if fb.findings.is_empty() {
            writeln!(out, "No findings.")?;
        }
        writeln!(out)?;
    }
    for w in &v.warnings {
        writeln!(out, "> ⚠️ {}", cell(w))?;
    }
    writeln!(out, "**Cost:** {}", cost_line(v))?;
    Ok(())
}
