//! Phase 5, final boss: one review of the spec and the concerns that
//! survived. A failure makes the run incomplete, never a silent pass. A
//! REFINE or RECONSIDER review's findings become concerns of their own
//! (adversary `ux_architect`), so they fail the run at `--fail-on` and show
//! in every format like any other concern; a PASS review's findings stay
//! informational, in the review only.

use super::{Gauntlet, RunState, ms};
use crate::concern::{Concern, Decision, RawConcern, Status, Vote};
use crate::event::{Event, Phase};
use crate::roles::{FinalBossReview, FinalBossVerdict};
use std::time::Instant;

impl Gauntlet {
    /// Returns the review, or `None` when there is no final boss or it failed.
    pub(crate) async fn final_boss(&self, run: &mut RunState<'_>) -> Option<FinalBossReview> {
        let boss = self.final_boss.as_ref()?;
        run.event(Event::PhaseStarted(Phase::FinalBoss));
        let t = Instant::now();
        let result = {
            let surviving: Vec<&Concern> = run
                .concerns
                .iter()
                .filter(|c| c.status.requires_revision())
                .collect();
            boss.review(run.spec, &surviving).await
        };
        run.stats
            .add_model_usage("final_boss", boss.model(), &result.usage);
        let mut review = None;
        match result.value {
            Ok(r) => {
                add_findings(run, &r, boss.model(), &self.catalog);
                run.event(Event::PhaseFinished {
                    phase: Phase::FinalBoss,
                    summary: format!("{} with {} findings", r.verdict.as_str(), r.findings.len()),
                });
                review = Some(r);
            }
            Err(e) => run.incomplete.push(format!("final boss failed: {e}")),
        }
        run.stats.duration_ms.final_boss = ms(t);
        review
    }
}

/// The review's findings as accepted concerns of the final boss, when its
/// verdict asks for changes. Two findings on one check are one concern.
fn add_findings(
    run: &mut RunState<'_>,
    review: &FinalBossReview,
    model: &str,
    catalog: &crate::catalog::Catalog,
) {
    if review.verdict == FinalBossVerdict::Pass {
        return;
    }
    let name = super::FINAL_BOSS_ADVERSARY;
    let prefix = catalog
        .persona(name)
        .map(|p| p.prefix.clone())
        .unwrap_or_else(|| "UXAR".to_string());
    for f in &review.findings {
        let lines = match (f.lines.iter().min(), f.lines.iter().max()) {
            (Some(&a), Some(&b)) if a > 0 && b <= run.spec.lines.len() => Some((a, b)),
            _ => None,
        };
        let mut c = Concern::from_raw(
            name,
            &prefix,
            RawConcern {
                title: f.finding.clone(),
                detail: format!(
                    "The final boss answered {} on `{}`.",
                    review.verdict.as_str(),
                    f.check
                ),
                severity: f.severity,
                lines,
                rule: Some(format!("final-boss/{}", f.check)),
                section: lines.and_then(|(a, _)| run.spec.section_of(a).map(|s| s.heading.clone())),
                subject: Vec::new(),
                confidence: None,
            },
        );
        if run.concerns.iter().any(|x| x.id == c.id) {
            continue;
        }
        c.status = Status::Accepted;
        c.votes = vec![Vote {
            evaluator: model.to_string(),
            decision: Decision::Accept,
            reasoning: review.summary.clone(),
            cites: f.lines.clone(),
        }];
        run.concerns.push(c);
    }
}
