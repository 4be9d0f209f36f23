//! Phase 4, adjudication: each challenged dismissal goes to the first
//! evaluator whose citation the challenge does not dispute, never to the one
//! being judged (`evaluation::adjudicator_for`, issue 9); an overturned
//! dismissal reinstates the concern. With no undisputed evaluator left, the
//! concern is reinstated without adjudication.

use super::{Gauntlet, RunState, ms};
use crate::concern::{Adjudication, AdjudicationOutcome, Concern, Status};
use crate::evaluation::adjudicator_for;
use crate::event::{Event, Phase};
use std::time::Instant;

impl Gauntlet {
    /// Rules on the `challenged` concerns (indices into `run.concerns`).
    /// Does nothing, and emits no event, when there is nothing to rule on.
    pub(crate) async fn adjudicate(&self, run: &mut RunState<'_>, challenged: &[usize]) {
        if self.evaluators.is_empty() || challenged.is_empty() {
            return;
        }
        run.event(Event::PhaseStarted(Phase::Adjudication));
        let t = Instant::now();
        let names: Vec<&str> = self.evaluators.iter().map(|e| e.model()).collect();
        for (ai, adjudicator) in self.evaluators.iter().enumerate() {
            let mine: Vec<usize> = challenged
                .iter()
                .copied()
                .filter(|&i| adjudicator_for(&names, &run.concerns[i]) == Some(ai))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let results = {
                let refs: Vec<&Concern> = mine.iter().map(|&i| &run.concerns[i]).collect();
                adjudicator.adjudicate(run.spec, &refs).await
            };
            for (&i, result) in mine.iter().zip(results) {
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
        }
        for &i in challenged {
            if adjudicator_for(&names, &run.concerns[i]).is_none() {
                run.concerns[i].status = Status::Reinstated;
                run.stats.rebuttal.sustained += 1;
                run.concerns[i].adjudication = Some(Adjudication {
                    outcome: AdjudicationOutcome::Overturned,
                    reasoning: "every evaluator's citation was challenged, so none can adjudicate."
                        .to_string(),
                    adjudicator: None,
                });
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
