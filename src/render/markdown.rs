//! The Markdown report, readable as a pull-request comment.

use super::{checked_summary, cost_line, count};
use crate::concern::{Concern, RebuttalOutcome, Status};
use crate::verdict::{Outcome, Verdict};
use std::io::{self, Write};

/// Untrusted text in the report: no live links, images, mentions or
/// control characters (see `escape::markdown`).
fn cell(s: &str) -> String {
    crate::escape::markdown(s)
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
    if let Some(path) = &v.spec.path {
        writeln!(
            out,
            "Spec: `{}` ({} lines)",
            crate::escape::markdown_code(path),
            v.spec.lines
        )?;
        writeln!(out)?;
    }
    let n = |st: Status| v.concerns.iter().filter(|c| c.status == st).count() as u64;
    let filtered_part = if s.filter.store {
        format!(", {} filtered", n(Status::Filtered))
    } else {
        String::new()
    };
    writeln!(
        out,
        "{badge}: {} revision ({} high, {} medium, {} low); {} dismissed{filtered_part}, {} deferred.",
        match s.final_.requiring_revision {
            1 => "1 concern requires".to_string(),
            k => format!("{k} concerns require"),
        },
        s.final_.high,
        s.final_.medium,
        s.final_.low,
        n(Status::Dismissed),
        n(Status::Deferred),
    )?;
    writeln!(out)?;
    if v.verdict == Outcome::Pass {
        writeln!(out, "Checked: {}", cell(&checked_summary(v)))?;
        writeln!(out)?;
    }
    writeln!(
        out,
        "Adversaries: {} · Attack model: `{}` · Eval models: {} · Duration: {} ms",
        v.adversaries.join(", "),
        crate::escape::markdown_code(&v.models.attack.join(", ")),
        v.models
            .eval
            .iter()
            .map(|m| format!("`{}`", crate::escape::markdown_code(m)))
            .collect::<Vec<_>>()
            .join(", "),
        s.duration_ms.total
    )?;
    writeln!(out)?;
    // Issue 10: the complexity level and the technologies detected.
    if let Some(a) = &v.complexity {
        writeln!(
            out,
            "Complexity: {} ({}: {})",
            a.level.as_str(),
            a.requested,
            cell(&a.reasons.join("; "))
        )?;
        writeln!(out)?;
    }
    if let Some(n) = &v.nuances {
        let names: Vec<&str> = n
            .technologies
            .iter()
            .map(|t| t.technology.as_str())
            .collect();
        writeln!(
            out,
            "Technologies: {} ({} nuances applied)",
            cell(&names.join(", ")),
            n.applied.len()
        )?;
        writeln!(out)?;
    }
    super::memory::markdown_top(v, out)?;
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
    // Deferrals that fail the run are listed once, under "needs a decision".
    let failing_deferrals: Vec<&str> = v.needs_decision().iter().map(|c| c.id.as_str()).collect();
    let deferred: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Deferred && !failing_deferrals.contains(&c.id.as_str()))
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
            "<details><summary>{} dismissed, with the lines that handle {}</summary>",
            count(dismissed.len() as u64, "concern"),
            if dismissed.len() == 1 { "it" } else { "them" }
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
            let dismissers: Vec<&crate::concern::Vote> = c
                .votes
                .iter()
                .filter(|x| x.decision == crate::concern::Decision::Dismiss)
                .collect();
            // One quote of the evidence, not one per vote.
            if let Some(first) = dismissers.first() {
                let cites = c.dismissal_cites();
                writeln!(
                    out,
                    "  - {} ({}): {}",
                    match cites.len() {
                        0 => "no line cited".to_string(),
                        1 => format!("cited line {}", cites[0]),
                        _ => format!(
                            "cited lines {}",
                            cites
                                .iter()
                                .map(|k| k.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    },
                    dismissers
                        .iter()
                        .map(|x| x.evaluator.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    cell(&first.reasoning)
                )?;
            }
            if let Some(r) = &c.rebuttal
                && r.outcome == RebuttalOutcome::Challenged
            {
                writeln!(
                    out,
                    "  - {} challenged: {}",
                    c.adversary,
                    cell(&r.reasoning)
                )?;
            }
            if let Some(a) = &c.adjudication {
                writeln!(
                    out,
                    "  - upheld by {}: {}",
                    a.adjudicator.as_deref().unwrap_or("the adjudicator"),
                    cell(&a.reasoning)
                )?;
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
        writeln!(out, "### Reinstated after rebuttal")?;
        writeln!(out)?;
        for c in won {
            if let Some(r) = &c.rebuttal {
                writeln!(out, "- `{}` {}: {}", c.id, c.adversary, cell(&r.reasoning))?;
            }
            if let Some(a) = &c.adjudication {
                writeln!(
                    out,
                    "  - reinstated by {}: {}",
                    a.adjudicator.as_deref().unwrap_or("the pipeline"),
                    cell(&a.reasoning)
                )?;
            }
        }
        writeln!(out)?;
    }
    let filtered: Vec<&Concern> = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Filtered)
        .collect();
    if !filtered.is_empty() {
        writeln!(
            out,
            "<details><summary>{} filtered as already resolved</summary>",
            count(filtered.len() as u64, "concern")
        )?;
        writeln!(out)?;
        for c in filtered {
            let why = c
                .filter
                .as_ref()
                .map(|f| f.explanation.as_str())
                .unwrap_or("");
            writeln!(
                out,
                "- **{}** `{}` ({}): {}",
                cell(&c.title),
                c.id,
                c.adversary,
                cell(why)
            )?;
        }
        writeln!(out)?;
        writeln!(out, "</details>")?;
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
    super::memory::markdown_sections(v, out)?;
    for w in &v.warnings {
        writeln!(out, "> ⚠️ {}", cell(w))?;
        // A blank line after each: a following line would join the quote.
        writeln!(out)?;
    }
    writeln!(out, "**Cost:** {}", cost_line(v))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::{
        Adjudication, AdjudicationOutcome, Decision, FilterAction, FilterNote, RawConcern,
        Rebuttal, Severity, Vote,
    };
    use crate::roles::{FinalBossFinding, FinalBossReview, FinalBossVerdict};
    use crate::stats::RunStats;
    use crate::verdict::{Models, SpecInfo, ToolInfo};

    fn concern(
        adversary: &str,
        prefix: &str,
        title: &str,
        sev: Severity,
        lines: Option<(usize, usize)>,
        status: Status,
    ) -> Concern {
        let mut c = Concern::from_raw(
            adversary,
            prefix,
            RawConcern {
                title: title.into(),
                detail: format!("{title}: what is missing | and why it hurts."),
                severity: sev,
                lines,
                rule: Some(title.to_lowercase().replace(' ', "-")),
                section: Some("Design".into()),
                subject: vec![],
                confidence: None,
            },
        );
        c.status = status;
        c
    }

    fn vote(evaluator: &str, decision: Decision, reasoning: &str) -> Vote {
        Vote {
            evaluator: evaluator.into(),
            decision,
            reasoning: reasoning.into(),
            cites: vec![],
        }
    }

    /// A verdict with one concern in every state the report shows.
    fn verdict() -> Verdict {
        use Decision::*;
        let mut accepted = concern(
            "burned_oncall",
            "BURN",
            "No timeout on the merchant call",
            Severity::High,
            Some((12, 14)),
            Status::Accepted,
        );
        accepted.votes = vec![
            vote(
                "offline/section",
                Accept,
                "no timeout stated in its section",
            ),
            vote("offline/document", Accept, "no timeout stated anywhere"),
            vote("offline/strict", Accept, "no timeout stated next to it"),
        ];
        let mut reinstated = concern(
            "paranoid_security",
            "PARA",
            "Signing secret readable by support",
            Severity::Medium,
            Some((20, 20)),
            Status::Reinstated,
        );
        reinstated.votes = vec![
            vote("offline/section", Dismiss, "line 31 mentions a vault"),
            vote("offline/document", Dismiss, "line 31 mentions a vault"),
            vote("offline/strict", Accept, "nothing next to it"),
        ];
        reinstated.rebuttal = Some(Rebuttal {
            outcome: RebuttalOutcome::Challenged,
            reasoning: "line 31 is about API keys, not the signing secret".into(),
            challenged: vec!["offline/section".into()],
        });
        reinstated.adjudication = Some(Adjudication {
            outcome: AdjudicationOutcome::Overturned,
            reasoning: "the cited line is about something else; the challenge holds".into(),
            adjudicator: Some("offline/strict".into()),
        });
        let mut dismissed = concern(
            "lazy_developer",
            "LAZY",
            "Custom queue instead of the platform one",
            Severity::Low,
            None,
            Status::Dismissed,
        );
        dismissed.votes = vec![
            vote(
                "offline/section",
                Dismiss,
                "line 8 justifies it: ordering per merchant",
            ),
            vote("offline/document", Dismiss, "line 8 justifies it"),
            vote("offline/strict", Accept, "no justification next to it"),
        ];
        for v in dismissed.votes.iter_mut().filter(|v| v.decision == Dismiss) {
            v.cites = vec![8];
        }
        dismissed.rebuttal = Some(Rebuttal {
            outcome: RebuttalOutcome::Accepted,
            reasoning: "fair, the ordering need is real".into(),
            challenged: Vec::new(),
        });
        let deferred = concern(
            "pedantic_nitpicker",
            "PEDA",
            "Undefined term settled",
            Severity::Low,
            Some((5, 5)),
            Status::Deferred,
        );
        let mut filtered = concern(
            "asshole_loner",
            "ASSH",
            "Why not polling",
            Severity::Medium,
            Some((3, 3)),
            Status::Filtered,
        );
        filtered.filter = Some(FilterNote {
            entry_id: "E-1".into(),
            similarity: 0.93,
            confidence: 0.9,
            action: FilterAction::Dropped,
            explanation: "merchants asked for push; polling was measured at 40x the load".into(),
        });
        let mut stats = RunStats::default();
        stats.final_.requiring_revision = 2;
        stats.final_.high = 1;
        stats.final_.medium = 1;
        stats.duration_ms.total = 1234;
        stats.filter.store = true;
        Verdict {
            schema_version: crate::verdict::SCHEMA_VERSION,
            tool: ToolInfo {
                name: "gauntlet".into(),
                version: "0.0.0-test".into(),
            },
            spec: SpecInfo {
                path: Some("docs/webhooks.md".into()),
                sha256: "0".repeat(64),
                bytes: 900,
                lines: 40,
                title: Some("Payment webhooks".into()),
            },
            verdict: Outcome::Revise,
            fail_on: Severity::Low,
            adversaries: crate::catalog::DEFAULT_ADVERSARIES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            models: Models {
                attack: vec!["offline".into()],
                eval: vec![
                    "offline/section".into(),
                    "offline/document".into(),
                    "offline/strict".into(),
                ],
                final_boss: Some("offline".into()),
            },
            concerns: vec![dismissed, accepted, filtered, reinstated, deferred],
            final_boss: Some(FinalBossReview {
                verdict: FinalBossVerdict::Refine,
                findings: vec![FinalBossFinding {
                    check: "measurement".into(),
                    severity: Severity::Medium,
                    finding: "No success metric for merchants".into(),
                    lines: vec![],
                }],
                summary: String::new(),
            }),
            stats,
            warnings: vec!["evaluator offline/strict failed on batch 2".into()],
            nuances: None,
            complexity: None,
            memory: Default::default(),
        }
    }

    fn render(v: &Verdict) -> String {
        let mut out = Vec::new();
        write(v, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn report_covers_every_section() {
        let md = render(&verdict());
        // Worst first: the high concern's row comes before the medium one's.
        let high = md.find("No timeout on the merchant call").unwrap();
        let medium = md.find("Signing secret readable by support").unwrap();
        assert!(high < medium);
        // A `|` in a detail must not break the table.
        assert!(md.contains("what is missing \\| and why"));
        for needle in [
            "❌ **REVISE**: 2 concerns require revision (1 high, 1 medium, 0 low); 1 dismissed, 1 filtered, 1 deferred.",
            "Spec: `docs/webhooks.md` (40 lines)",
            "offline/section: accept<br>offline/document: accept<br>offline/strict: accept",
            "<details><summary>1 concern dismissed, with the lines that handle it</summary>",
            "  - cited line 8 (offline/section, offline/document): line 8 justifies it: ordering per merchant",
            "### Reinstated after rebuttal",
            "  - reinstated by offline/strict: the cited line is about something else; the challenge holds",
            "### Needs a decision",
            "merchants asked for push; polling was measured at 40x the load",
            "### Final boss (UX review): REFINE",
            "> ⚠️ evaluator offline/strict failed on batch 2",
            "**Cost:** $0.00 (offline engine)",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
        }
        // The deferral that fails the run is listed once, not also under
        // "Deferred".
        assert_eq!(md.matches("Undefined term settled**").count(), 1, "{md}");
        assert!(!md.contains("### Deferred (need a decision)"), "{md}");
    }

    #[test]
    fn report_snapshot() {
        insta::assert_snapshot!(render(&verdict()));
    }
}
