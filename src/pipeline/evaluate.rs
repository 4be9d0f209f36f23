//! Phase 2, evaluation: every evaluator on every batch, concurrently; the
//! votes are tallied into each concern's status.

use super::{Gauntlet, RunState, ms};
use crate::concern::{Concern, Status, Vote};
use crate::evaluation::{batches, tally};
use crate::event::{Event, Phase};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

impl Gauntlet {
    /// Votes on every concern the filter let through and sets its status.
    pub(crate) async fn evaluate(&self, run: &mut RunState<'_>) {
        run.event(Event::PhaseStarted(Phase::Evaluation));
        let t = Instant::now();
        let to_eval: Vec<usize> = (0..run.concerns.len())
            .filter(|&i| run.concerns[i].status != Status::Filtered)
            .collect();
        let ranges = batches(to_eval.len(), self.options.batch_size);
        let mut votes: HashMap<String, Vec<Vote>> = HashMap::new();
        let mut warnings: Vec<String> = Vec::new();
        {
            let concerns = &run.concerns;
            let batch_refs: Vec<Vec<&Concern>> = ranges
                .iter()
                .map(|r| to_eval[r.clone()].iter().map(|&i| &concerns[i]).collect())
                .collect();
            let known: HashSet<&str> = to_eval.iter().map(|&i| concerns[i].id.as_str()).collect();
            let all = futures::future::join_all(
                self.evaluators
                    .iter()
                    .map(|e| e.evaluate(run.spec, &batch_refs)),
            )
            .await;
            for (ev, results) in self.evaluators.iter().zip(all) {
                for (bi, result) in results.into_iter().enumerate() {
                    run.stats.add_model_usage("eval", ev.model(), &result.usage);
                    match result.value {
                        Ok(batch_votes) => {
                            let mut seen = HashSet::new();
                            for (id, vote) in batch_votes {
                                if !known.contains(id.as_str()) {
                                    let w = format!(
                                        "{} voted on unknown concern id {id}; ignored",
                                        ev.model()
                                    );
                                    (run.events)(Event::Warning(w.clone()));
                                    warnings.push(w);
                                    continue;
                                }
                                if seen.insert(id.clone()) {
                                    votes.entry(id).or_default().push(vote);
                                }
                            }
                        }
                        Err(e) => {
                            let w = format!(
                                "evaluator {} failed on batch {}: {e}; counted as abstentions",
                                ev.model(),
                                bi + 1
                            );
                            (run.events)(Event::Warning(w.clone()));
                            warnings.push(w);
                        }
                    }
                }
            }
        }
        run.warnings.extend(warnings);
        let stats = &mut run.stats;
        stats.evaluation.evaluators = self.evaluators.len() as u64;
        stats.evaluation.batches = ranges.len() as u64;
        stats.evaluation.evaluated = to_eval.len() as u64;
        let mut quorum_missing = 0;
        for &i in &to_eval {
            let c = &mut run.concerns[i];
            c.votes = votes.remove(&c.id).unwrap_or_default();
            stats.evaluation.abstentions +=
                (self.evaluators.len() - c.votes.len().min(self.evaluators.len())) as u64;
            let tl = tally(&c.votes, self.evaluators.len());
            c.status = tl.status;
            c.contested_vote = tl.disagreement;
            if tl.disagreement {
                stats.evaluation.disagreements += 1;
            }
            if tl.quorum_missing {
                quorum_missing += 1;
            }
            match tl.status {
                Status::Accepted => stats.evaluation.accepted += 1,
                Status::Dismissed => stats.evaluation.dismissed += 1,
                _ => stats.evaluation.deferred += 1,
            }
        }
        if quorum_missing > 0 {
            run.incomplete.push(format!(
                "{quorum_missing} concern(s) got votes from fewer than a majority of the evaluators"
            ));
        }
        run.stats.duration_ms.evaluation = ms(t);
        run.event(Event::PhaseFinished {
            phase: Phase::Evaluation,
            summary: format!(
                "{}: accepted {}, dismissed {}, deferred {}, disagreements {}",
                crate::render::count(ranges.len() as u64, "batch"),
                run.stats.evaluation.accepted,
                run.stats.evaluation.dismissed,
                run.stats.evaluation.deferred,
                run.stats.evaluation.disagreements
            ),
        });
    }
}
