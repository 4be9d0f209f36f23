//! The gauntlet: attack, self-filter, evaluate, rebut, adjudicate, final
//! boss, verdict. It drives the role traits and never knows whether the
//! offline engine or a model answers. Phase logic that is not I/O lives in
//! plain functions (`evaluation::tally`, ...); this module only sequences
//! phases, fans requests out and records what happened.

use crate::catalog::Catalog;
use crate::concern::{AdjudicationOutcome, Concern, RebuttalOutcome, Severity, Status, Vote};
use crate::evaluation::{batches, tally};
use crate::event::{Event, Phase};
use crate::filter::ConcernFilter;
use crate::persona::Persona;
use crate::roles::{Attacker, Evaluator, FinalBoss, RebuttalRequest};
use crate::spec::Spec;
use crate::stats::RunStats;
use crate::verdict::{Models, Outcome, SCHEMA_VERSION, SpecInfo, ToolInfo, Verdict};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Adversary names, validated against the catalog.
    pub adversaries: Vec<String>,
    pub batch_size: usize,
    pub rebuttals: bool,
    pub fail_on: Severity,
    /// Technology nuances (`None`: --no-nuances or not loaded).
    pub nuances: Option<Arc<crate::nuance::NuanceSet>>,
    /// The complexity requested (`--complexity`) and the explicit flags.
    pub complexity: crate::triage::Request,
    /// The level this run uses, set per spec by `triage::gauntlet_for`.
    pub assessment: Option<crate::triage::Assessment>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            adversaries: crate::catalog::DEFAULT_ADVERSARIES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            batch_size: 15,
            rebuttals: true,
            fail_on: Severity::Low,
            nuances: None,
            complexity: Default::default(),
            assessment: None,
        }
    }
}

/// Everything a run needs: the data, the roles and the options.
#[derive(Clone)]
pub struct Gauntlet {
    pub catalog: Arc<Catalog>,
    pub attacker: Arc<dyn Attacker>,
    /// The first one adjudicates.
    pub evaluators: Vec<Arc<dyn Evaluator>>,
    /// `Some` runs the final boss.
    pub final_boss: Option<Arc<dyn FinalBoss>>,
    pub options: RunOptions,
}

/// A sink for progress events.
pub type EventSink<'a> = &'a (dyn Fn(Event) + Send + Sync);

fn ms(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

impl Gauntlet {
    /// The offline engine in every role.
    pub fn offline(catalog: Arc<Catalog>, options: RunOptions, final_boss: bool) -> Gauntlet {
        Gauntlet {
            attacker: Arc::new(crate::offline::OfflineAttacker {
                catalog: catalog.clone(),
            }),
            evaluators: crate::offline::evaluators(&catalog),
            final_boss: final_boss.then(|| {
                Arc::new(crate::offline::OfflineFinalBoss {
                    catalog: catalog.clone(),
                }) as Arc<dyn FinalBoss>
            }),
            catalog,
            options,
        }
    }

    pub async fn run(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Verdict {
        let started = Instant::now();
        let mut stats = RunStats::default();
        let mut warnings: Vec<String> = Vec::new();
        let mut incomplete: Vec<String> = Vec::new();
        let warn = |w: String, warnings: &mut Vec<String>| {
            events(Event::Warning(w.clone()));
            warnings.push(w);
        };

        // Phase 1: attack.
        events(Event::PhaseStarted(Phase::Attack));
        let t = Instant::now();
        let personas: Vec<&Persona> = self
            .options
            .adversaries
            .iter()
            .filter_map(|a| self.catalog.persona(a))
            .collect();
        let results = self.attacker.attack(spec, &personas).await;
        let mut concerns: Vec<Concern> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (persona, result) in personas.iter().zip(results) {
            stats.add_model_usage("attack", self.attacker.model(), &result.usage);
            match result.value {
                Ok(raws) => {
                    let mut raised = 0;
                    for raw in raws {
                        let c = Concern::from_raw(&persona.name, &persona.prefix, raw);
                        raised += 1;
                        if let Some(&i) = index.get(&c.id) {
                            // The same concern raised twice: widen its lines.
                            let e: &mut Concern = &mut concerns[i];
                            if let (Some((a, b)), Some((x, y))) = (e.lines, c.lines) {
                                e.lines = Some((a.min(x), b.max(y)));
                            }
                            continue;
                        }
                        index.insert(c.id.clone(), concerns.len());
                        concerns.push(c);
                    }
                    stats
                        .attack
                        .per_adversary
                        .insert(persona.name.clone(), raised);
                }
                Err(e) => {
                    stats.attack.per_adversary.insert(persona.name.clone(), 0);
                    stats.attack.failed.push(persona.name.clone());
                    warn(
                        format!("attacker {} produced nothing: {e}", persona.name),
                        &mut warnings,
                    );
                }
            }
        }
        if !personas.is_empty() && stats.attack.failed.len() == personas.len() {
            incomplete.push("every attacker failed".to_string());
        }
        stats.attack.total = concerns.len() as u64;
        stats.duration_ms.attack = ms(t);
        events(Event::PhaseFinished {
            phase: Phase::Attack,
            summary: format!(
                "{} raw concerns from {} adversaries",
                concerns.len(),
                personas.len()
            ),
        });

        // Phase 1.5: self-filter.
        events(Event::PhaseStarted(Phase::Filter));
        let t = Instant::now();
        stats.filter = filter.filter(spec, &mut concerns);
        stats.duration_ms.filter = ms(t);
        events(Event::PhaseFinished {
            phase: Phase::Filter,
            summary: format!(
                "dropped {}, noted {}, proceeding with {}",
                stats.filter.dropped, stats.filter.noted, stats.filter.proceeding
            ),
        });

        // Phase 2: evaluation, every evaluator on every batch, concurrently.
        events(Event::PhaseStarted(Phase::Evaluation));
        let t = Instant::now();
        let to_eval: Vec<usize> = (0..concerns.len())
            .filter(|&i| concerns[i].status != Status::Filtered)
            .collect();
        let ranges = batches(to_eval.len(), self.options.batch_size);
        let mut votes: HashMap<String, Vec<Vote>> = HashMap::new();
        {
            let batch_refs: Vec<Vec<&Concern>> = ranges
                .iter()
                .map(|r| to_eval[r.clone()].iter().map(|&i| &concerns[i]).collect())
                .collect();
            let known: std::collections::HashSet<&str> =
                to_eval.iter().map(|&i| concerns[i].id.as_str()).collect();
            let all = futures::future::join_all(
                self.evaluators
                    .iter()
                    .map(|e| e.evaluate(spec, &batch_refs)),
            )
            .await;
            for (ev, results) in self.evaluators.iter().zip(all) {
                for (bi, result) in results.into_iter().enumerate() {
                    stats.add_model_usage("eval", ev.model(), &result.usage);
                    match result.value {
                        Ok(batch_votes) => {
                            let mut seen = std::collections::HashSet::new();
                            for (id, vote) in batch_votes {
                                if !known.contains(id.as_str()) {
                                    warn(
                                        format!(
                                            "{} voted on unknown concern id {id}; ignored",
                                            ev.model()
                                        ),
                                        &mut warnings,
                                    );
                                    continue;
                                }
                                if seen.insert(id.clone()) {
                                    votes.entry(id).or_default().push(vote);
                                }
                            }
                        }
                        Err(e) => warn(
                            format!(
                                "evaluator {} failed on batch {}: {e}; counted as abstentions",
                                ev.model(),
                                bi + 1
                            ),
                            &mut warnings,
                        ),
                    }
                }
            }
        }
        stats.evaluation.evaluators = self.evaluators.len() as u64;
        stats.evaluation.batches = ranges.len() as u64;
        stats.evaluation.evaluated = to_eval.len() as u64;
        let mut quorum_missing = 0;
        for &i in &to_eval {
            let c = &mut concerns[i];
            c.votes = votes.remove(&c.id).unwrap_or_default();
            stats.evaluation.abstentions +=
                (self.evaluators.len() - c.votes.len().min(self.evaluators.len())) as u64;
            let tl = tally(&c.votes, self.evaluators.len());
            c.status = tl.status;
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
            incomplete.push(format!(
                "{quorum_missing} concern(s) got votes from fewer than a majority of the evaluators"
            ));
        }
        stats.duration_ms.evaluation = ms(t);
        events(Event::PhaseFinished {
            phase: Phase::Evaluation,
            summary: format!(
                "{} batches: accepted {}, dismissed {}, deferred {}, disagreements {}",
                ranges.len(),
                stats.evaluation.accepted,
                stats.evaluation.dismissed,
                stats.evaluation.deferred,
                stats.evaluation.disagreements
            ),
        });

        // Phase 3: rebuttals, phase 4: adjudication.
        if self.options.rebuttals {
            events(Event::PhaseStarted(Phase::Rebuttal));
            let t = Instant::now();
            let dismissed: Vec<usize> = (0..concerns.len())
                .filter(|&i| concerns[i].status == Status::Dismissed)
                .collect();
            let results = {
                let requests: Vec<RebuttalRequest> = dismissed
                    .iter()
                    .filter_map(|&i| {
                        Some(RebuttalRequest {
                            concern: &concerns[i],
                            persona: self.catalog.persona(&concerns[i].adversary)?,
                        })
                    })
                    .collect();
                self.attacker.rebut(spec, &requests).await
            };
            stats.rebuttal.dismissals = dismissed.len() as u64;
            for (&i, result) in dismissed.iter().zip(results) {
                stats.add_model_usage("attack", self.attacker.model(), &result.usage);
                match result.value {
                    Ok(r) => {
                        if r.outcome == RebuttalOutcome::Challenged {
                            stats.rebuttal.challenges += 1;
                        }
                        concerns[i].rebuttal = Some(r);
                    }
                    Err(e) => warn(
                        format!(
                            "rebuttal for {} failed: {e}; the dismissal stands unchallenged",
                            concerns[i].id
                        ),
                        &mut warnings,
                    ),
                }
            }
            stats.duration_ms.rebuttal = ms(t);
            events(Event::PhaseFinished {
                phase: Phase::Rebuttal,
                summary: format!(
                    "{} challenges of {} dismissals",
                    stats.rebuttal.challenges,
                    dismissed.len()
                ),
            });

            let challenged: Vec<usize> = (0..concerns.len())
                .filter(|&i| {
                    concerns[i]
                        .rebuttal
                        .as_ref()
                        .is_some_and(|r| r.outcome == RebuttalOutcome::Challenged)
                })
                .collect();
            if let Some(adjudicator) = self.evaluators.first()
                && !challenged.is_empty()
            {
                events(Event::PhaseStarted(Phase::Adjudication));
                let t = Instant::now();
                let results = {
                    let refs: Vec<&Concern> = challenged.iter().map(|&i| &concerns[i]).collect();
                    adjudicator.adjudicate(spec, &refs).await
                };
                for (&i, result) in challenged.iter().zip(results) {
                    stats.add_model_usage("eval", adjudicator.model(), &result.usage);
                    match result.value {
                        Ok(a) => {
                            if a.outcome == AdjudicationOutcome::Overturned {
                                concerns[i].status = Status::Reinstated;
                                stats.rebuttal.sustained += 1;
                            }
                            concerns[i].adjudication = Some(a);
                        }
                        Err(e) => {
                            concerns[i].status = Status::Deferred;
                            incomplete
                                .push(format!("adjudication of {} failed: {e}", concerns[i].id));
                        }
                    }
                }
                stats.duration_ms.adjudication = ms(t);
                events(Event::PhaseFinished {
                    phase: Phase::Adjudication,
                    summary: format!(
                        "{} of {} challenges sustained",
                        stats.rebuttal.sustained,
                        challenged.len()
                    ),
                });
            }
        }

        // Phase 5: final boss.
        let mut final_review = None;
        if let Some(boss) = &self.final_boss {
            events(Event::PhaseStarted(Phase::FinalBoss));
            let t = Instant::now();
            let result = {
                let surviving: Vec<&Concern> = concerns
                    .iter()
                    .filter(|c| c.status.requires_revision())
                    .collect();
                boss.review(spec, &surviving).await
            };
            stats.add_model_usage("final_boss", boss.model(), &result.usage);
            match result.value {
                Ok(r) => {
                    events(Event::PhaseFinished {
                        phase: Phase::FinalBoss,
                        summary: format!(
                            "{} with {} findings",
                            r.verdict.as_str(),
                            r.findings.len()
                        ),
                    });
                    final_review = Some(r);
                }
                Err(e) => incomplete.push(format!("final boss failed: {e}")),
            }
            stats.duration_ms.final_boss = ms(t);
        }

        // Verdict.
        for c in concerns.iter().filter(|c| c.status.requires_revision()) {
            stats.final_.requiring_revision += 1;
            match c.severity {
                Severity::High => stats.final_.high += 1,
                Severity::Medium => stats.final_.medium += 1,
                Severity::Low => stats.final_.low += 1,
            }
        }
        for reason in &incomplete {
            warn(format!("incomplete: {reason}"), &mut warnings);
        }
        stats.duration_ms.total = ms(started);
        let mut verdict = Verdict {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "gauntlet".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            spec: SpecInfo {
                path: spec.path.clone(),
                sha256: spec.sha256.clone(),
                bytes: spec.bytes(),
                lines: spec.lines.len(),
                title: spec.title().map(str::to_string),
            },
            verdict: Outcome::Pass,
            fail_on: self.options.fail_on,
            adversaries: personas.iter().map(|p| p.name.clone()).collect(),
            models: Models {
                attack: vec![self.attacker.model().to_string()],
                eval: self
                    .evaluators
                    .iter()
                    .map(|e| e.model().to_string())
                    .collect(),
                final_boss: self.final_boss.as_ref().map(|b| b.model().to_string()),
            },
            concerns,
            final_boss: final_review,
            stats,
            warnings,
            nuances: None,
            complexity: None,
        };
        // Issue 10: technologies, nuances applied, and the complexity level.
        crate::nuance::finish_verdict(&mut verdict, spec, &self.options);
        verdict.verdict = if !incomplete.is_empty() {
            Outcome::Incomplete
        } else if verdict.failing() > 0 {
            Outcome::Revise
        } else {
            Outcome::Pass
        };
        verdict
    }

    /// Runs the pipeline to completion on the current thread. Offline roles
    /// never wait on I/O, so no async runtime is needed.
    pub fn run_blocking(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Verdict {
        futures::executor::block_on(self.run(spec, filter, events))
    }
}
