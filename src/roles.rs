//! The role interfaces the pipeline drives: attacker (attack and rebuttal),
//! evaluator (vote and adjudication) and final boss. The offline engine and
//! every model provider implement these; the pipeline never knows which one
//! it runs.
//!
//! Methods take a whole phase's requests at once and return one result per
//! request, in order, so each backend picks its own parallelism: the offline
//! engine spreads CPU work with rayon, model providers fan out I/O under a
//! concurrency limit. Futures are boxed so the traits stay object safe.

use crate::concern::{Adjudication, Concern, RawConcern, Rebuttal, Severity, Vote};
use crate::error::RoleError;
use crate::persona::Persona;
use crate::spec::Spec;
use crate::stats::Usage;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// The outcome of one request to a role, with what it cost.
#[derive(Debug, Clone)]
pub struct RoleResult<T> {
    pub value: Result<T, RoleError>,
    pub usage: Usage,
}

impl<T> RoleResult<T> {
    pub fn ok(value: T, usage: Usage) -> Self {
        RoleResult {
            value: Ok(value),
            usage,
        }
    }

    pub fn err(error: RoleError, usage: Usage) -> Self {
        RoleResult {
            value: Err(error),
            usage,
        }
    }
}

/// Votes from one evaluator on one batch, keyed by concern id.
pub type BatchVotes = Vec<(String, Vote)>;

/// A dismissed concern sent back to its adversary.
#[derive(Debug, Clone, Copy)]
pub struct RebuttalRequest<'a> {
    pub concern: &'a Concern,
    pub persona: &'a Persona,
}

/// What round N+1 of a debate (`--rounds`) tells the attacker: the
/// previous round's surviving concerns and the author's answers to them.
#[derive(Debug, Clone)]
pub struct RoundContext {
    /// This round's number (2 or 3).
    pub round: u8,
    pub max_rounds: u8,
    /// Concerns that required revision after the previous round.
    pub previous: Vec<Concern>,
    pub responses: crate::responses::Responses,
}

pub trait Attacker: Send + Sync {
    /// The model name as shown in reports (`offline`, `gemini-cli/...`).
    fn model(&self) -> &str;

    /// Raise concerns for each persona, one result per persona.
    fn attack<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>>;

    /// `attack` in round 2 or 3 of a debate. The default ignores the
    /// context: a deterministic attacker raises the same concerns on the
    /// same spec, which is what lets offline rounds converge.
    fn attack_round<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
        round: &'a RoundContext,
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
        let _ = round;
        self.attack(spec, personas)
    }

    /// Each persona answers the dismissal of one of its concerns.
    fn rebut<'a>(
        &'a self,
        spec: &'a Spec,
        requests: &'a [RebuttalRequest<'a>],
    ) -> BoxFuture<'a, Vec<RoleResult<Rebuttal>>>;
}

pub trait Evaluator: Send + Sync {
    fn model(&self) -> &str;

    /// Vote on each batch of concerns, one result per batch.
    fn evaluate<'a>(
        &'a self,
        spec: &'a Spec,
        batches: &'a [Vec<&'a Concern>],
    ) -> BoxFuture<'a, Vec<RoleResult<BatchVotes>>>;

    /// Decide each challenged dismissal (concerns carry votes and rebuttal).
    fn adjudicate<'a>(
        &'a self,
        spec: &'a Spec,
        concerns: &'a [&'a Concern],
    ) -> BoxFuture<'a, Vec<RoleResult<Adjudication>>>;
}

pub trait FinalBoss: Send + Sync {
    fn model(&self) -> &str;

    /// Review the spec after the technical phases; `surviving` are the
    /// concerns that require revision.
    fn review<'a>(
        &'a self,
        spec: &'a Spec,
        surviving: &'a [&'a Concern],
    ) -> BoxFuture<'a, RoleResult<FinalBossReview>>;
}

/// What a fresh-eyes reviewer returns: findings, clarifying questions and
/// an assessment (the recommendation follows from them).
pub type FreshEyesOutput = (
    Vec<crate::fresh_eyes::FreshEyesFinding>,
    Vec<crate::fresh_eyes::ClarifyingQuestion>,
    String,
);

/// The fresh-eyes gate answered by a model (the overviewer seed). It sees
/// only the spec, plus the author's answers in its second round. Without
/// one, the offline reviewer answers the gate.
pub trait FreshEyesReviewer: Send + Sync {
    fn model(&self) -> &str;

    /// `answers` is empty in round 1; in round 2 it holds the author's
    /// answers to the questions of round 1.
    fn review<'a>(
        &'a self,
        spec: &'a Spec,
        answers: &'a str,
    ) -> BoxFuture<'a, RoleResult<FreshEyesOutput>>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FinalBossVerdict {
    Pass,
    Refine,
    Reconsider,
}

impl FinalBossVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            FinalBossVerdict::Pass => "PASS",
            FinalBossVerdict::Refine => "REFINE",
            FinalBossVerdict::Reconsider => "RECONSIDER",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalBossFinding {
    /// Which question this answers (user_problem, who_benefits, measurement, rollout...).
    pub check: String,
    pub severity: Severity,
    pub finding: String,
    #[serde(default)]
    pub lines: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalBossReview {
    pub verdict: FinalBossVerdict,
    pub findings: Vec<FinalBossFinding>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
}
