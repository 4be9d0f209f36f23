//! The embedded, deterministic offline engine: an implementation of every
//! role (attacker, evaluators, final boss) driven by the rule packs in
//! `personas/` and the protocols in `protocols/`. No I/O, no randomness: the
//! same spec and data always give the same verdict.

pub mod attacker;
pub mod checks;
pub mod dedupe;
pub mod evaluator;
pub mod evidence;
pub mod final_boss;
pub mod fresh_eyes;
pub mod lexicon;
pub mod rebuttal;
pub mod schema_example;
pub mod sentence;
pub mod stated_math;
pub mod subject;

use crate::catalog::{Catalog, FINAL_BOSS};
use crate::concern::{Adjudication, Concern, RawConcern, Rebuttal};
use crate::error::RoleError;
use crate::persona::Persona;
use crate::roles::{
    Attacker, BatchVotes, Evaluator, FinalBoss, FinalBossReview, RebuttalRequest, RoleResult,
};
use crate::spec::Spec;
use crate::stats::Usage;
pub use evaluator::Standard;
use futures::future::{BoxFuture, FutureExt};
use rayon::prelude::*;
use std::sync::Arc;

pub const MODEL: &str = "offline";

/// One offline call: counted, free.
fn usage() -> Usage {
    Usage {
        calls: 1,
        ..Usage::default()
    }
}

pub struct OfflineAttacker {
    pub catalog: Arc<Catalog>,
}

impl Attacker for OfflineAttacker {
    fn model(&self) -> &str {
        MODEL
    }

    fn attack<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
        // One scan of the spec finds every adversary's candidate lines.
        let found = self
            .catalog
            .adversary_prefilter()
            .candidates(&attacker::prefilter_texts(spec), personas);
        let out: Vec<_> = personas
            .par_iter()
            .zip(found)
            .map(|(p, c)| {
                let raised = attacker::attack_with(spec, p, c);
                let yields = |id: &str| {
                    p.rules
                        .iter()
                        .find(|r| r.id() == id)
                        .map_or(&[][..], |r| &r.def.yields_to[..])
                };
                RoleResult::ok(dedupe::one_per_gap(raised, yields), usage())
            })
            .collect();
        futures::future::ready(out).boxed()
    }

    fn rebut<'a>(
        &'a self,
        spec: &'a Spec,
        requests: &'a [RebuttalRequest<'a>],
    ) -> BoxFuture<'a, Vec<RoleResult<Rebuttal>>> {
        let out: Vec<_> = requests
            .iter()
            .map(|r| RoleResult::ok(rebuttal::rebut(spec, &self.catalog, r.concern), usage()))
            .collect();
        futures::future::ready(out).boxed()
    }
}

pub struct OfflineEvaluator {
    pub catalog: Arc<Catalog>,
    pub standard: Standard,
}

impl Evaluator for OfflineEvaluator {
    fn model(&self) -> &str {
        self.standard.name()
    }

    fn evaluate<'a>(
        &'a self,
        spec: &'a Spec,
        batches: &'a [Vec<&'a Concern>],
    ) -> BoxFuture<'a, Vec<RoleResult<BatchVotes>>> {
        let out: Vec<_> = batches
            .par_iter()
            .map(|batch| {
                // Concerns in parallel too (rayon keeps their order): a
                // batch is often the whole run, and a vote on a large spec
                // reads the whole document (once per rule and spec: the
                // evaluators' cache is shared by all threads).
                let votes: BatchVotes = batch
                    .par_iter()
                    .map(|c| {
                        (
                            c.id.clone(),
                            evaluator::vote(spec, &self.catalog, self.standard, c),
                        )
                    })
                    .collect();
                RoleResult::ok(votes, usage())
            })
            .collect();
        futures::future::ready(out).boxed()
    }

    fn adjudicate<'a>(
        &'a self,
        spec: &'a Spec,
        concerns: &'a [&'a Concern],
    ) -> BoxFuture<'a, Vec<RoleResult<Adjudication>>> {
        let out: Vec<_> = concerns
            .iter()
            .map(|c| {
                RoleResult::ok(
                    rebuttal::adjudicate(spec, &self.catalog, self.standard.name(), c),
                    usage(),
                )
            })
            .collect();
        futures::future::ready(out).boxed()
    }
}

pub struct OfflineFinalBoss {
    pub catalog: Arc<Catalog>,
}

impl FinalBoss for OfflineFinalBoss {
    fn model(&self) -> &str {
        MODEL
    }

    fn review<'a>(
        &'a self,
        spec: &'a Spec,
        surviving: &'a [&'a Concern],
    ) -> BoxFuture<'a, RoleResult<FinalBossReview>> {
        let out = match self.catalog.persona(FINAL_BOSS) {
            Some(p) => RoleResult::ok(final_boss::review(spec, p, surviving.len()), usage()),
            None => RoleResult::err(
                RoleError::Failed {
                    model: MODEL.to_string(),
                    message: format!("no `{FINAL_BOSS}` persona loaded"),
                },
                Usage::default(),
            ),
        };
        futures::future::ready(out).boxed()
    }
}

/// The three offline evaluators. A challenged dismissal is adjudicated by
/// the first of them whose citation was not challenged.
pub fn evaluators(catalog: &Arc<Catalog>) -> Vec<Arc<dyn Evaluator>> {
    [Standard::Section, Standard::Document, Standard::Strict]
        .into_iter()
        .map(|standard| {
            Arc::new(OfflineEvaluator {
                catalog: catalog.clone(),
                standard,
            }) as Arc<dyn Evaluator>
        })
        .collect()
}
