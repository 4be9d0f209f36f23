//! The report sections about what needs the author's attention beyond the
//! surviving concerns: contested concerns across runs (at the top), the
//! deferred concerns that need a decision, the concerns the evaluators
//! disagreed on, carry-forward labels and what was resolved since the last
//! run, the fresh-eyes questions and the debate rounds. Text and Markdown,
//! each as separate functions so the main renderers only call them.

use super::Style;
use crate::concern::Concern;
use crate::verdict::Verdict;
use std::io::{self, Write};

/// Control characters in untrusted text, shown escaped.
pub fn quote(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn cell(s: &str) -> String {
    quote(s).replace('|', "\\|")
}

fn day(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d").to_string()
}

fn history_line(c: &crate::carry_forward::Contested) -> String {
    c.history
        .iter()
        .map(|e| format!("{} {}", day(&e.at), e.outcome.as_str()))
        .collect::<Vec<_>>()
        .join(" → ")
}

/// Concerns with a split vote.
pub fn disagreed(v: &Verdict) -> Vec<&Concern> {
    v.concerns.iter().filter(|c| c.contested_vote).collect()
}

/// Contested concerns across runs, shown first: the spec is ambiguous there.
pub fn text_top(v: &Verdict, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let Some(cf) = &v.memory.carry_forward else {
        return Ok(());
    };
    if cf.contested.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "{}",
        style.bold("Contested across runs (the spec is ambiguous here; settle it in the text):")
    )?;
    for c in &cf.contested {
        writeln!(
            out,
            "  - {} [{}] {} ({} flips)",
            c.id,
            quote(&c.adversary),
            style.bold(&quote(&c.title)),
            c.flips
        )?;
        writeln!(out, "      {}", history_line(c))?;
    }
    writeln!(out)
}

/// Everything else, after the verdict's concern lists.
pub fn text_sections(v: &Verdict, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let needs = v.needs_decision();
    if !needs.is_empty() {
        writeln!(out)?;
        for c in needs {
            writeln!(
                out,
                "needs a decision: {} [{}] ({}, {}) {}",
                c.id,
                quote(&c.adversary),
                style.severity(c.severity),
                c.lines_label(),
                quote(&c.title)
            )?;
            writeln!(out, "      {}", quote(&c.detail))?;
        }
    }
    let split = disagreed(v);
    if !split.is_empty() {
        writeln!(out)?;
        writeln!(out, "Evaluators disagreed ({}):", split.len())?;
        for c in split {
            let votes = c
                .votes
                .iter()
                .map(|x| format!("{} {}", quote(&x.evaluator), x.decision.as_str()))
                .collect::<Vec<_>>()
                .join(", ");
            writeln!(
                out,
                "  - {} {} ({}): {votes}",
                c.id,
                quote(&c.title),
                c.status.as_str()
            )?;
        }
    }
    if let Some(cf) = &v.memory.carry_forward
        && cf.previous_runs == 0
    {
        writeln!(out)?;
        writeln!(
            out,
            "First run on `{}`: its concerns are remembered for the next run.",
            quote(&cf.spec_key)
        )?;
    } else if let Some(cf) = &v.memory.carry_forward {
        writeln!(out)?;
        writeln!(
            out,
            "Carried forward ({} earlier run(s) of `{}`, recognised by {}{}):",
            cf.previous_runs,
            quote(&cf.spec_key),
            cf.matched_by.as_str(),
            if cf.content_changed {
                "; content changed since the last run"
            } else {
                ""
            }
        )?;
        carry_items(cf, out, "  - ", str::to_string, quote)?;
        if cf.concerns.is_empty() && cf.resolved.is_empty() {
            writeln!(out, "  Nothing open, nothing resolved since the last run.")?;
        }
    }
    text_fresh_eyes(v, out, style)?;
    text_rounds(v, out)
}

fn text_fresh_eyes(v: &Verdict, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let Some(fe) = &v.memory.fresh_eyes else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "Fresh eyes: {} after {} round(s){}",
        style.bold(fe.recommendation.as_str()),
        fe.rounds,
        if fe.escalated {
            " (escalated: still REVISE after the last round; accept as-is or rework)"
        } else {
            ""
        }
    )?;
    if !fe.assessment.is_empty() {
        writeln!(out, "  {}", quote(&fe.assessment))?;
    }
    for f in &fe.findings {
        writeln!(
            out,
            "  - {} ({}) {}: {}",
            f.id,
            style.severity(f.severity),
            quote(&f.title),
            quote(&f.description)
        )?;
    }
    for q in &fe.clarifying_questions {
        let lines = q
            .lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(out, "  - {} (line {lines}) {}", q.id, quote(&q.question))?;
        writeln!(out, "      context: {}", quote(&q.context))?;
        writeln!(out, "      impact: {}", quote(&q.impact))?;
        for o in &q.options {
            writeln!(
                out,
                "      option: {}: {}",
                quote(&o.label),
                quote(&o.description)
            )?;
        }
    }
    Ok(())
}

fn text_rounds(v: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let Some(r) = &v.memory.rounds else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "Rounds: {} of at most {}; stopped: {}",
        r.rounds.len(),
        r.max,
        r.stop.as_str()
    )?;
    for s in &r.rounds {
        writeln!(
            out,
            "  round {}: {} require revision; new high/medium: {}; came back: {}; {} response(s){}; {} calls, {} tokens",
            s.round,
            s.requiring_revision,
            if s.new_high_medium.is_empty() {
                "none".to_string()
            } else {
                s.new_high_medium.join(", ")
            },
            if s.returned.is_empty() {
                "none".to_string()
            } else {
                s.returned.join(", ")
            },
            s.responses,
            if s.spec_edited { ", spec edited" } else { "" },
            s.calls,
            s.tokens
        )?;
    }
    Ok(())
}

/// Markdown: contested concerns across runs, first.
pub fn markdown_top(v: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let Some(cf) = &v.memory.carry_forward else {
        return Ok(());
    };
    if cf.contested.is_empty() {
        return Ok(());
    }
    writeln!(out, "> [!WARNING]")?;
    writeln!(
        out,
        "> **Contested across runs**: the outcome of these concerns keeps flipping, so the spec is ambiguous on them."
    )?;
    for c in &cf.contested {
        writeln!(
            out,
            "> - `{}` {} ({} flips): {}",
            c.id,
            cell(&c.title),
            c.flips,
            history_line(c)
        )?;
    }
    writeln!(out)
}

/// Markdown: the remaining sections.
pub fn markdown_sections(v: &Verdict, out: &mut dyn Write) -> io::Result<()> {
    let needs = v.needs_decision();
    if !needs.is_empty() {
        writeln!(out, "### Needs a decision")?;
        writeln!(out)?;
        for c in needs {
            writeln!(
                out,
                "- needs a decision: `{}` **{}** ({}, {}, {}): {}",
                c.id,
                cell(&c.title),
                cell(&c.adversary),
                c.severity,
                c.lines_label(),
                cell(&c.detail)
            )?;
        }
        writeln!(out)?;
    }
    let split = disagreed(v);
    if !split.is_empty() {
        writeln!(out, "### Evaluators disagreed")?;
        writeln!(out)?;
        for c in split {
            let votes = c
                .votes
                .iter()
                .map(|x| format!("{}: {}", cell(&x.evaluator), x.decision.as_str()))
                .collect::<Vec<_>>()
                .join(", ");
            writeln!(
                out,
                "- `{}` {} — {} ({votes})",
                c.id,
                cell(&c.title),
                c.status.as_str()
            )?;
        }
        writeln!(out)?;
    }
    if let Some(cf) = &v.memory.carry_forward
        && cf.previous_runs > 0
        && (!cf.concerns.is_empty() || !cf.resolved.is_empty())
    {
        writeln!(out, "### Since the last run")?;
        writeln!(out)?;
        since_last_run(cf, out)?;
        writeln!(out)?;
    }
    if let Some(fe) = &v.memory.fresh_eyes {
        writeln!(
            out,
            "### Fresh eyes: {} ({} round(s){})",
            fe.recommendation.as_str(),
            fe.rounds,
            if fe.escalated { ", escalated" } else { "" }
        )?;
        writeln!(out)?;
        if !fe.assessment.is_empty() {
            writeln!(out, "{}", cell(&fe.assessment))?;
            writeln!(out)?;
        }
        for f in &fe.findings {
            writeln!(
                out,
                "- `{}` ({}) **{}**: {}",
                f.id,
                f.severity,
                cell(&f.title),
                cell(&f.description)
            )?;
        }
        for q in &fe.clarifying_questions {
            let lines = q
                .lines
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            writeln!(
                out,
                "- `{}` (line {lines}) **{}**<br>context: {}<br>impact: {}<br>options: {}",
                q.id,
                cell(&q.question),
                cell(&q.context),
                cell(&q.impact),
                q.options
                    .iter()
                    .map(|o| format!("{}: {}", cell(&o.label), cell(&o.description)))
                    .collect::<Vec<_>>()
                    .join("; ")
            )?;
        }
        writeln!(out)?;
    }
    if let Some(r) = &v.memory.rounds {
        writeln!(
            out,
            "### Rounds: {} of at most {} — stopped: {}",
            r.rounds.len(),
            r.max,
            r.stop.as_str()
        )?;
        writeln!(out)?;
        writeln!(
            out,
            "| Round | Require revision | New high/medium | Came back | Tokens |"
        )?;
        writeln!(out, "|---|---|---|---|---|")?;
        for s in &r.rounds {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                s.round,
                s.requiring_revision,
                s.new_high_medium.len(),
                s.returned.len(),
                s.tokens
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Markdown list items: what became of the previous runs' concerns (also in
/// the saved review report).
pub fn since_last_run(
    cf: &crate::carry_forward::CarryForward,
    out: &mut dyn Write,
) -> io::Result<()> {
    carry_items(cf, out, "- ", |id| format!("`{id}`"), cell)
}

/// What became of the previous runs' concerns, one list item each, for text
/// or Markdown: `bullet` starts each line, `id` and `title` format those.
fn carry_items(
    cf: &crate::carry_forward::CarryForward,
    out: &mut dyn Write,
    bullet: &str,
    id: fn(&str) -> String,
    title: fn(&str) -> String,
) -> io::Result<()> {
    for c in &cf.concerns {
        match c.state {
            crate::carry_forward::CarryState::StillOpen => writeln!(
                out,
                "{bullet}{} still open since {} ({} runs)",
                id(&c.id),
                c.open_since.as_ref().map(day).unwrap_or_default(),
                c.open_runs
            )?,
            s => writeln!(out, "{bullet}{} {}", id(&c.id), s.as_str())?,
        }
    }
    for r in &cf.resolved {
        writeln!(
            out,
            "{bullet}{} resolved since last run (open since {}): {}",
            id(&r.id),
            day(&r.open_since),
            title(&r.title)
        )?;
    }
    Ok(())
}
