//! The gauntlet: attack, self-filter, evaluate, rebut, adjudicate, final
//! boss, verdict. It drives the role traits and never knows whether the
//! offline engine or a model answers. Each phase is its own function in its
//! own file, over the run's state (`RunState`); `Gauntlet::run` is the list
//! of phases in order. Phase logic that is not I/O lives in plain functions
//! (`evaluation::tally`, ...); the phases only fan requests out and record
//! what happened.

mod adjudicate;
mod attack;
mod evaluate;
mod final_boss;
mod fresh_eyes;
mod rebut;
mod rounds;
mod run_state;
mod self_filter;
mod verdict;

use crate::catalog::Catalog;
use crate::concern::Severity;
use crate::event::Event;
use crate::filter::ConcernFilter;
use crate::roles::{Attacker, Evaluator, FinalBoss};
use crate::spec::Spec;
use crate::verdict::Verdict;
use run_state::RunState;
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
    /// `--allow-deferred`: deferred concerns do not fail the run.
    pub allow_deferred: bool,
    /// `--fresh-eyes`: run the fresh-eyes gate last.
    pub fresh_eyes: bool,
    /// `--rounds`: debate rounds, 1 to `rounds::MAX_ROUNDS`.
    pub rounds: u8,
    /// `--responses`: the author's answers, for rounds and fresh eyes.
    pub responses: crate::responses::Responses,
}

/// The adversary name under which the final boss's findings are concerns.
pub const FINAL_BOSS_ADVERSARY: &str = "ux_architect";

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
            allow_deferred: false,
            fresh_eyes: false,
            rounds: 1,
            responses: Default::default(),
        }
    }
}

/// Everything a run needs: the data, the roles and the options.
#[derive(Clone)]
pub struct Gauntlet {
    pub catalog: Arc<Catalog>,
    pub attacker: Arc<dyn Attacker>,
    /// A challenged dismissal goes to the first one whose citation was not challenged.
    pub evaluators: Vec<Arc<dyn Evaluator>>,
    /// `Some` runs the final boss.
    pub final_boss: Option<Arc<dyn FinalBoss>>,
    /// The model for `--fresh-eyes`; `None` is the offline reviewer.
    pub fresh_eyes: Option<Arc<dyn crate::roles::FreshEyesReviewer>>,
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
            fresh_eyes: None,
            catalog,
            options,
        }
    }

    /// One spec, one verdict: the rounds (usually one) of the phases.
    pub async fn run(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Verdict {
        if self.options.rounds > 1 {
            return self.run_rounds(spec, filter, events).await;
        }
        self.run_once(spec, filter, events, None).await
    }

    /// One round: the phases in order. `round` carries the previous
    /// round's concerns and the author's answers from round 2 on.
    async fn run_once(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
        round: Option<&crate::roles::RoundContext>,
    ) -> Verdict {
        let mut run = RunState::new(spec, events);
        let personas = self.personas();
        run.concerns = self.attack(&mut run, &personas, round).await;
        self_filter::self_filter(&mut run, filter);
        self.evaluate(&mut run).await;
        if self.options.rebuttals {
            let challenged = self.rebut(&mut run).await;
            self.adjudicate(&mut run, &challenged).await;
        }
        let final_review = self.final_boss(&mut run).await;
        let fresh = self.fresh_eyes(&mut run).await;
        self.verdict(run, &personas, final_review, fresh)
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
