//! Phase 4, adjudication: the first evaluator rules on each challenged
//! dismissal; an overturned dismissal reinstates the concern.

use super::{Gauntlet, RunState, ms};
use crate::concern::{AdjudicationOutcome, Concern, Status};
use crate::event::{Event, Phase};
use std::time::Instant;

impl Gauntlet {
    /// Rules on the `challenged` concerns (indices into `run.concerns`).
    /// Does nothing, and emits no event, when there is nothing to rule on.
    pub(crate) async fn adjudicate(&self, run: &mut RunState<'_>, challenged: &[usize]) {
        let Some(adjudicator) = self.evaluators.first() else {
            return;
        };
        if challenged.is_empty() {
            return;
        }
        run.event(Event::PhaseStarted(Phase::Adjudication));
        let t = Instant::now();
        let results = {
            let refs: Vec<&Concern> = challenged.iter().map(|&i| &run.concerns[i]).collect();
            adjudicator.adjudicate(run.spec, &refs).await
        };
        for (&i, result) in challenged.iter().zip(results) {
            run.stats
                .add_model_usage("eval", adjudicator.model(), &result.usage);
            match result.value {
                Ok(a) => {
                    if a.outcome == AdjudicationOutcome::Overturned {
                        run.concerns[i].status = Status::Reinstated;
                        run.stats.rebuttal.sustained += 1;
                    }
                    run.concerns[i].adjudication = Some(a);
                }
                Err(e) => {
                    run.concerns[i].status = Status::Deferred;
                    let reason = format!("adjudication of {} failed: {e}", run.concerns[i].id);
                    run.incomplete.push(reason);
                }
            }
        }
        run.stats.duration_ms.adjudication = ms(t);
        run.event(Event::PhaseFinished {
            phase: Phase::Adjudication,
            summary: format!(
                "{} of {} challenges sustained",
                run.stats.rebuttal.sustained,
                challenged.len()
            ),
        });
    }
}
