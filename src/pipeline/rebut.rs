//! Phase 3, rebuttal: each dismissed concern goes back to its adversary,
//! who accepts the dismissal or challenges it.

use super::{Gauntlet, RunState, ms};
use crate::concern::{RebuttalOutcome, Status};
use crate::event::{Event, Phase};
use crate::roles::RebuttalRequest;
use std::time::Instant;

impl Gauntlet {
    /// Returns the indices of the concerns whose dismissal was challenged.
    pub(crate) async fn rebut(&self, run: &mut RunState<'_>) -> Vec<usize> {
        run.event(Event::PhaseStarted(Phase::Rebuttal));
        let t = Instant::now();
        let dismissed: Vec<usize> = (0..run.concerns.len())
            .filter(|&i| run.concerns[i].status == Status::Dismissed)
            .collect();
        let results = {
            let concerns = &run.concerns;
            let requests: Vec<RebuttalRequest> = dismissed
                .iter()
                .filter_map(|&i| {
                    Some(RebuttalRequest {
                        concern: &concerns[i],
                        persona: self.catalog.persona(&concerns[i].adversary)?,
                    })
                })
                .collect();
            self.attacker.rebut(run.spec, &requests).await
        };
        run.stats.rebuttal.dismissals = dismissed.len() as u64;
        for (&i, result) in dismissed.iter().zip(results) {
            run.stats
                .add_model_usage("attack", self.attacker.model(), &result.usage);
            match result.value {
                Ok(r) => {
                    if r.outcome == RebuttalOutcome::Challenged {
                        run.stats.rebuttal.challenges += 1;
                    }
                    run.concerns[i].rebuttal = Some(r);
                }
                Err(e) => {
                    let w = format!(
                        "rebuttal for {} failed: {e}; the dismissal stands unchallenged",
                        run.concerns[i].id
                    );
                    run.warn(w);
                }
            }
        }
        run.stats.duration_ms.rebuttal = ms(t);
        run.event(Event::PhaseFinished {
            phase: Phase::Rebuttal,
            summary: format!(
                "{} of {}",
                crate::render::count(run.stats.rebuttal.challenges, "challenge"),
                crate::render::count(dismissed.len() as u64, "dismissal")
            ),
        });

        (0..run.concerns.len())
            .filter(|&i| {
                run.concerns[i]
                    .rebuttal
                    .as_ref()
                    .is_some_and(|r| r.outcome == RebuttalOutcome::Challenged)
            })
            .collect()
    }
}
