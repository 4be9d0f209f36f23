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
mod rebut;
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

    /// One spec, one verdict: the phases in order.
    pub async fn run(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Verdict {
        let mut run = RunState::new(spec, events);
        let personas = self.personas();
        run.concerns = self.attack(&mut run, &personas).await;
        self_filter::self_filter(&mut run, filter);
        self.evaluate(&mut run).await;
        if self.options.rebuttals {
            let challenged = self.rebut(&mut run).await;
            self.adjudicate(&mut run, &challenged).await;
        }
        let final_review = self.final_boss(&mut run).await;
        self.verdict(run, &personas, final_review)
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
