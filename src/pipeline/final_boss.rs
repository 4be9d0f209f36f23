//! Phase 5, final boss: one review of the spec and the concerns that
//! survived. A failure makes the run incomplete, never a silent pass.

use super::{Gauntlet, RunState, ms};
use crate::concern::Concern;
use crate::event::{Event, Phase};
use crate::roles::FinalBossReview;
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
