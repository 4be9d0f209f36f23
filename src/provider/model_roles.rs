//! The roles (`Attacker`, `Evaluator`, `FinalBoss`) answered by a model
//! through a `ModelClient`: build the prompt from the templates, call, parse
//! defensively, send one repair request if the reply cannot be read, and
//! turn what is left into a `RoleError`. A failure is never a silent pass:
//! the pipeline turns it into a warning, an abstention or `incomplete`.

use super::client::ModelClient;
use super::completion::{CompletionRequest, ProviderError};
use super::limit::Priority;
use super::parse::{self, ParseError};
use super::prompts;
use crate::catalog::Catalog;
use crate::concern::{Adjudication, Concern, RawConcern, Rebuttal, Vote};
use crate::error::RoleError;
use crate::persona::Persona;
use crate::roles::{
    Attacker, BatchVotes, Evaluator, FinalBoss, FinalBossReview, RebuttalRequest, RoleResult,
    RoundContext,
};
use crate::spec::Spec;
use crate::stats::Usage;
use futures::future::{BoxFuture, join_all};
use std::collections::HashSet;
use std::sync::Arc;

fn role_error(model: &str, e: &ProviderError) -> RoleError {
    match e {
        ProviderError::Timeout { secs } => RoleError::Timeout {
            model: model.to_string(),
            secs: *secs,
        },
        other => RoleError::Failed {
            model: model.to_string(),
            message: other.to_string(),
        },
    }
}

/// Concerns of one adversary answered in one rebuttal call.
pub const REBUTTAL_BATCH: usize = 8;
/// Challenged dismissals decided in one adjudication call.
pub const ADJUDICATION_BATCH: usize = 15;

/// Calls the model and parses the reply; one repair request when the reply
/// is empty or unreadable; after that the call has failed. `context` is the
/// run-wide start of the user message (the numbered spec, or empty); the
/// repair request keeps it, so it is served from the prompt cache too.
async fn ask<T>(
    client: &ModelClient,
    label: &str,
    priority: Priority,
    context: &str,
    prompt: String,
    format: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> RoleResult<T> {
    let mut usage = Usage::default();
    let first = client
        .call(
            label,
            priority,
            CompletionRequest {
                system: prompts::SYSTEM.to_string(),
                context: context.to_string(),
                prompt: prompt.clone(),
                max_tokens: None,
            },
        )
        .await;
    usage += &first.usage;
    let (reply, problem) = match first.result {
        Ok(c) => match parse(&c.text) {
            Ok(v) => return RoleResult::ok(v, usage),
            Err(e) => (c.text, e.0),
        },
        Err(ProviderError::Empty) => (String::new(), "the reply was empty".to_string()),
        Err(e) => return RoleResult::err(role_error(client.model(), &e), usage),
    };
    let second = client
        .call(
            &format!("{label}-repair"),
            priority,
            CompletionRequest {
                system: prompts::SYSTEM.to_string(),
                context: context.to_string(),
                prompt: prompts::repair(&prompt, &reply, &problem, format),
                max_tokens: None,
            },
        )
        .await;
    usage += &second.usage;
    match second.result {
        Ok(c) => match parse(&c.text) {
            Ok(v) => RoleResult::ok(v, usage),
            Err(e) => RoleResult::err(
                RoleError::Failed {
                    model: client.model().to_string(),
                    message: format!("unreadable reply after one repair request: {e}"),
                },
                usage,
            ),
        },
        Err(e) => RoleResult::err(role_error(client.model(), &e), usage),
    }
}

fn section_heading(spec: &Spec, lines: Option<(usize, usize)>) -> Option<String> {
    let (a, _) = lines?;
    spec.section_of(a)
        .map(|s| s.heading.clone())
        .filter(|h| !h.is_empty())
}

/// Spreads the outcome of one batched call over the requests it answered,
/// in order: the value found for each id, or an error naming what went
/// wrong. The call's usage is counted once, on the first request.
fn spread<T: Clone>(
    client: &ModelClient,
    ids: &[&str],
    result: RoleResult<Vec<(String, T)>>,
    what: &str,
) -> Vec<RoleResult<T>> {
    let mut usage = Some(result.usage);
    let mut take = || usage.take().unwrap_or_default();
    match result.value {
        Ok(found) => ids
            .iter()
            .map(|id| match found.iter().find(|(f, _)| f == id) {
                Some((_, v)) => RoleResult::ok(v.clone(), take()),
                None => RoleResult::err(
                    RoleError::Failed {
                        model: client.model().to_string(),
                        message: format!("the reply gave no {what} for {id}"),
                    },
                    take(),
                ),
            })
            .collect(),
        Err(e) => ids
            .iter()
            .map(|_| RoleResult::err(e.clone(), take()))
            .collect(),
    }
}

/// The protocols of the adversaries of `concerns`, sorted, each once.
fn protocols_for(evaluator: &ModelEvaluator, concerns: &[&Concern]) -> String {
    let mut adversaries: Vec<&str> = concerns.iter().map(|c| c.adversary.as_str()).collect();
    adversaries.sort_unstable();
    adversaries.dedup();
    adversaries
        .iter()
        .map(|a| evaluator.protocol_text(a))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The start of the user message shared by every call of a run that reads
/// the whole spec: the numbered spec, then the divergence checklist of the
/// technologies it uses (the same for attackers and evaluators).
fn shared_context(spec: &Spec, nuances: Option<&crate::nuance::NuanceSet>) -> String {
    let checklist = nuances.and_then(|set| crate::nuance::checklist::items(set, spec));
    prompts::shared_context(spec, checklist.as_deref())
}

/// The audience's instructions for the checklist, after the role's text,
/// when the shared context carries one.
fn with_checklist_instructions(
    mut prompt: String,
    context: &str,
    audience: crate::nuance::checklist::Audience,
) -> String {
    if context.contains("**DIVERGENCE CHECKLIST") {
        prompt.push_str("\n\n");
        prompt.push_str(crate::nuance::checklist::instructions(audience));
        prompt.push_str(" (the checklist above)\n");
    }
    prompt
}

/// Evaluation batches (of `--batch-size` concerns, the voting unit) that
/// one evaluator answers in one call: each call carries the spec once, so
/// fewer calls send fewer copies of it; two batches of 15 keep a reply of
/// votes well under 4,096 output tokens.
pub const EVALUATION_BATCHES_PER_CALL: usize = 2;
/// At most this many concerns in one evaluation call, whatever the batch
/// size: batches are grouped into one call only up to this.
pub const EVALUATION_CONCERNS_PER_CALL: usize = 30;

/// Consecutive batches grouped into calls: at most
/// `EVALUATION_BATCHES_PER_CALL` batches and `EVALUATION_CONCERNS_PER_CALL`
/// concerns per call (a single larger batch gets a call of its own).
pub fn group_batches(sizes: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut concerns = 0;
    for (i, &n) in sizes.iter().enumerate() {
        match out.last_mut() {
            Some(r)
                if r.len() < EVALUATION_BATCHES_PER_CALL
                    && concerns + n <= EVALUATION_CONCERNS_PER_CALL =>
            {
                r.end = i + 1;
                concerns += n;
            }
            _ => {
                out.push(i..i + 1);
                concerns = n;
            }
        }
    }
    out
}

/// The votes of one batch out of a call's reply. A vote for an id of no
/// batch of the call is kept on the first batch, marked, so the pipeline
/// reports it as unknown; when the call carried several batches, a batch
/// without a single vote is an error (its concerns count as abstentions,
/// with a warning), as when a call per batch failed.
fn split_votes(
    all: &[(String, Vote)],
    group: &[Vec<&Concern>],
    index: usize,
) -> Result<BatchVotes, String> {
    let in_batch = |b: &[&Concern], id: &str| b.iter().any(|c| c.id == id);
    let mut mine: BatchVotes = all
        .iter()
        .filter(|(id, _)| in_batch(&group[index], id))
        .cloned()
        .collect();
    if group.len() > 1 && mine.is_empty() {
        return Err("the reply gave no vote for any concern".to_string());
    }
    if index == 0 {
        for (id, v) in all {
            if !group.iter().any(|b| in_batch(b, id)) {
                mine.push((format!("{id} (not in this call)"), v.clone()));
            }
        }
    }
    Ok(mine)
}

/// Attacks and rebuttals on a model.
pub struct ModelAttacker {
    pub client: ModelClient,
    /// Technology nuances: the divergence checklist after the spec (issue 10).
    pub nuances: Option<Arc<crate::nuance::NuanceSet>>,
}

/// One dismissed concern as its adversary sees it in a rebuttal: the
/// concern, the dismissal and the spec lines they cite (not the whole spec).
pub fn rebuttal_block(spec: &Spec, c: &Concern) -> String {
    format!(
        "[{}] {} ({})\nDetail: {}\nDismissal:\n{}\nSpec lines:\n=== SPEC START (excerpt) ===\n{}=== SPEC END ===\n",
        c.id,
        c.title,
        c.lines_label(),
        c.detail,
        prompts::dismissal_text(c),
        prompts::excerpt(spec, &prompts::cited_lines(c))
    )
}

impl ModelAttacker {
    /// Attacks, with the debate round's context appended to each prompt
    /// from round 2 on.
    fn attack_with<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
        round: Option<&'a RoundContext>,
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
        Box::pin(async move {
            let context = shared_context(spec, self.nuances.as_deref());
            let context = &context;
            let round_text = round.map(prompts::round_section);
            join_all(personas.iter().map(|p| {
                let mut prompt = prompts::fill(
                    prompts::ATTACK,
                    &[("persona_prompt", p.prompt.trim()), ("persona", &p.name)],
                );
                if let Some(r) = &round_text {
                    prompt.push_str("\n\n");
                    prompt.push_str(r);
                }
                let prompt = with_checklist_instructions(
                    prompt,
                    context,
                    crate::nuance::checklist::Audience::Attack,
                );
                async move {
                    let r = ask(
                        &self.client,
                        &format!("attack-{}", p.name),
                        Priority::Attack,
                        context,
                        prompt,
                        prompts::ATTACK_FORMAT,
                        |t| parse::parse_concerns(t, spec.lines.len()),
                    )
                    .await;
                    RoleResult {
                        value: r.value.map(|cs| {
                            cs.into_iter()
                                .map(|c| RawConcern {
                                    section: section_heading(spec, c.lines),
                                    title: c.title,
                                    detail: c.detail,
                                    severity: c.severity,
                                    lines: c.lines,
                                    rule: None,
                                    subject: Vec::new(),
                                    confidence: None,
                                })
                                .collect()
                        }),
                        usage: r.usage,
                    }
                }
            }))
            .await
        })
    }
}

impl Attacker for ModelAttacker {
    fn model(&self) -> &str {
        self.client.model()
    }

    fn attack<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
        self.attack_with(spec, personas, None)
    }

    fn attack_round<'a>(
        &'a self,
        spec: &'a Spec,
        personas: &'a [&'a Persona],
        round: &'a RoundContext,
    ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
        self.attack_with(spec, personas, Some(round))
    }

    /// One call per adversary (up to `REBUTTAL_BATCH` concerns each), with
    /// the cited lines of each concern instead of the whole spec: fewer
    /// tokens, and at most one call per persona in flight, so the rebuttals
    /// fit in one round trip under the default concurrency limit.
    fn rebut<'a>(
        &'a self,
        spec: &'a Spec,
        requests: &'a [RebuttalRequest<'a>],
    ) -> BoxFuture<'a, Vec<RoleResult<Rebuttal>>> {
        Box::pin(async move {
            // Requests grouped by adversary, in first-seen order.
            let mut groups: Vec<(&Persona, Vec<usize>)> = Vec::new();
            for (i, r) in requests.iter().enumerate() {
                match groups.iter_mut().find(|(p, _)| p.name == r.persona.name) {
                    Some((_, v)) => v.push(i),
                    None => groups.push((r.persona, vec![i])),
                }
            }
            let chunks: Vec<(&Persona, Vec<usize>, usize)> = groups
                .into_iter()
                .flat_map(|(p, idx)| {
                    idx.chunks(REBUTTAL_BATCH)
                        .enumerate()
                        .map(|(n, c)| (p, c.to_vec(), n))
                        .collect::<Vec<_>>()
                })
                .collect();
            let answers = join_all(chunks.iter().map(|(persona, idx, n)| {
                let blocks: Vec<String> = idx
                    .iter()
                    .map(|&i| rebuttal_block(spec, requests[i].concern))
                    .collect();
                let prompt = prompts::fill(
                    prompts::REBUTTAL,
                    &[
                        ("persona_prompt", persona.prompt.trim()),
                        ("concerns", &blocks.join("\n")),
                    ],
                );
                let ids: Vec<&str> = idx
                    .iter()
                    .map(|&i| requests[i].concern.id.as_str())
                    .collect();
                let label = if *n == 0 {
                    format!("rebuttal-{}", persona.name)
                } else {
                    format!("rebuttal-{}-{}", persona.name, n + 1)
                };
                async move {
                    let r = ask(
                        &self.client,
                        &label,
                        Priority::Rebuttal,
                        "",
                        prompt,
                        prompts::REBUTTAL_FORMAT,
                        |t| parse::parse_rebuttals(t, &ids),
                    )
                    .await;
                    let r = RoleResult {
                        value: r.value.map(|list| {
                            list.into_iter()
                                .map(|(id, outcome, reasoning)| {
                                    (
                                        id,
                                        Rebuttal {
                                            outcome,
                                            reasoning,
                                            challenged: Vec::new(),
                                        },
                                    )
                                })
                                .collect()
                        }),
                        usage: r.usage,
                    };
                    spread(&self.client, &ids, r, "rebuttal")
                }
            }))
            .await;
            let mut out: Vec<Option<RoleResult<Rebuttal>>> = vec![None; requests.len()];
            for ((_, idx, _), results) in chunks.iter().zip(answers) {
                for (&i, r) in idx.iter().zip(results) {
                    out[i] = Some(r);
                }
            }
            out.into_iter()
                .map(|r| r.expect("every request belongs to one chunk"))
                .collect()
        })
    }
}

/// Evaluation and adjudication on a model.
pub struct ModelEvaluator {
    pub client: ModelClient,
    pub catalog: Arc<Catalog>,
    /// Technology nuances: the divergence checklist after the spec (issue 10).
    pub nuances: Option<Arc<crate::nuance::NuanceSet>>,
}

impl ModelEvaluator {
    fn protocol_text(&self, adversary: &str) -> String {
        self.catalog
            .protocol(adversary)
            .map(|p| p.as_prompt())
            .unwrap_or_else(|| format!("(no response protocol for {adversary})\n"))
    }
}

/// One challenged dismissal as the adjudicator sees it: the concern, the
/// dismissal, the challenge, and the spec lines the concern, the dismissal
/// and the challenge cite, under their section heading with a few lines
/// around them (not the whole spec, as for rebuttals).
pub fn challenge_block(spec: &Spec, c: &Concern) -> String {
    let challenge = c
        .rebuttal
        .as_ref()
        .map(|r| r.reasoning.as_str())
        .unwrap_or_default();
    let mut cited = prompts::cited_lines(c);
    cited.extend(prompts::lines_mentioned(challenge, spec.lines.len()));
    cited.sort_unstable();
    cited.dedup();
    format!(
        "[{}] from {}: {} ({})\nDetail: {}\nDismissal reasoning:\n{}\nChallenge:\n{}\nSpec lines:\n=== SPEC START (excerpt) ===\n{}=== SPEC END ===\n",
        c.id,
        c.adversary,
        c.title,
        c.lines_label(),
        c.detail,
        prompts::dismissal_text(c),
        challenge,
        prompts::excerpt(spec, &cited)
    )
}

impl Evaluator for ModelEvaluator {
    fn model(&self) -> &str {
        self.client.model()
    }

    /// One call per group of batches (`group_batches`): the spec is sent
    /// once for all of them; the votes come back by concern id and are
    /// handed to the batch each concern belongs to.
    fn evaluate<'a>(
        &'a self,
        spec: &'a Spec,
        batches: &'a [Vec<&'a Concern>],
    ) -> BoxFuture<'a, Vec<RoleResult<BatchVotes>>> {
        Box::pin(async move {
            let context = shared_context(spec, self.nuances.as_deref());
            let context = &context;
            let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
            let groups = group_batches(&sizes);
            let answers = join_all(groups.iter().enumerate().map(|(gi, group)| {
                let concerns: Vec<&Concern> = batches[group.clone()]
                    .iter()
                    .flat_map(|b| b.iter().copied())
                    .collect();
                let blocks: Vec<String> =
                    concerns.iter().map(|c| prompts::concern_block(c)).collect();
                let prompt = prompts::fill(
                    prompts::EVALUATE,
                    &[
                        ("protocols", &protocols_for(self, &concerns)),
                        ("concerns", &blocks.join("\n")),
                    ],
                );
                let prompt = with_checklist_instructions(
                    prompt,
                    context,
                    crate::nuance::checklist::Audience::Evaluate,
                );
                let ids: HashSet<&str> = concerns.iter().map(|c| c.id.as_str()).collect();
                async move {
                    let model = self.client.model().to_string();
                    let r = ask(
                        &self.client,
                        &format!("eval-batch{}", gi + 1),
                        Priority::Evaluation,
                        context,
                        prompt,
                        prompts::VOTES_FORMAT,
                        |t| {
                            let votes = parse::parse_votes(t)?;
                            if !votes.iter().any(|v| ids.contains(v.id.as_str())) {
                                return Err(ParseError(
                                    "no vote names a concern id of this call".to_string(),
                                ));
                            }
                            Ok(votes)
                        },
                    )
                    .await;
                    let votes: Result<Vec<(String, Vote)>, RoleError> = r.value.map(|votes| {
                        votes
                            .into_iter()
                            .map(|v| {
                                (
                                    v.id,
                                    Vote {
                                        evaluator: model.clone(),
                                        decision: v.decision,
                                        reasoning: v.reasoning,
                                        cites: v.cites,
                                    },
                                )
                            })
                            .collect()
                    });
                    (votes, r.usage)
                }
            }))
            .await;
            let mut out = Vec::with_capacity(batches.len());
            for (group, (votes, usage)) in groups.iter().zip(answers) {
                let mut usage = Some(usage);
                for bi in group.clone() {
                    let usage = usage.take().unwrap_or_default();
                    let value = match &votes {
                        Err(e) => Err(e.clone()),
                        Ok(all) => split_votes(all, &batches[group.clone()], bi - group.start)
                            .map_err(|m| RoleError::Failed {
                                model: self.client.model().to_string(),
                                message: format!("{m} of batch {}", bi + 1),
                            }),
                    };
                    out.push(RoleResult { value, usage });
                }
            }
            out
        })
    }

    /// One call per `ADJUDICATION_BATCH` challenges, decisions by id, with
    /// the cited lines of each challenge instead of the whole spec.
    fn adjudicate<'a>(
        &'a self,
        spec: &'a Spec,
        concerns: &'a [&'a Concern],
    ) -> BoxFuture<'a, Vec<RoleResult<Adjudication>>> {
        Box::pin(async move {
            // No spec context: each challenge carries the lines it is about.
            let context = "";
            let answers = join_all(concerns.chunks(ADJUDICATION_BATCH).enumerate().map(
                |(bi, chunk)| {
                    let blocks: Vec<String> =
                        chunk.iter().map(|c| challenge_block(spec, c)).collect();
                    let prompt = prompts::fill(
                        prompts::ADJUDICATE,
                        &[
                            ("protocols", &protocols_for(self, chunk)),
                            ("challenges", &blocks.join("\n")),
                        ],
                    );
                    let ids: Vec<&str> = chunk.iter().map(|c| c.id.as_str()).collect();
                    async move {
                        let r = ask(
                            &self.client,
                            &format!("adjudicate-batch{}", bi + 1),
                            Priority::Adjudication,
                            context,
                            prompt,
                            prompts::ADJUDICATE_FORMAT,
                            |t| parse::parse_adjudications(t, &ids),
                        )
                        .await;
                        let adjudicator = Some(self.client.model().to_string());
                        let r = RoleResult {
                            value: r.value.map(|list| {
                                list.into_iter()
                                    .map(|(id, outcome, reasoning)| {
                                        (
                                            id,
                                            Adjudication {
                                                outcome,
                                                reasoning,
                                                adjudicator: adjudicator.clone(),
                                            },
                                        )
                                    })
                                    .collect()
                            }),
                            usage: r.usage,
                        };
                        spread(&self.client, &ids, r, "decision")
                    }
                },
            ))
            .await;
            answers.into_iter().flatten().collect()
        })
    }
}

/// The final boss on a model.
pub struct ModelFinalBoss {
    pub client: ModelClient,
    pub catalog: Arc<Catalog>,
}

impl FinalBoss for ModelFinalBoss {
    fn model(&self) -> &str {
        self.client.model()
    }

    fn review<'a>(
        &'a self,
        spec: &'a Spec,
        surviving: &'a [&'a Concern],
    ) -> BoxFuture<'a, RoleResult<FinalBossReview>> {
        Box::pin(async move {
            let persona = self
                .catalog
                .persona(crate::catalog::FINAL_BOSS)
                .map(|p| p.prompt.trim().to_string())
                .unwrap_or_default();
            let list = if surviving.is_empty() {
                "(none)".to_string()
            } else {
                surviving
                    .iter()
                    .map(|c| {
                        format!(
                            "- [{}] {} ({}, {})",
                            c.id,
                            c.title,
                            c.severity,
                            c.lines_label()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let prompt = prompts::fill(
                prompts::FINAL_BOSS,
                &[("persona_prompt", &persona), ("surviving", &list)],
            );
            ask(
                &self.client,
                "final-boss",
                Priority::FinalBoss,
                &prompts::spec_context(spec),
                prompt,
                prompts::FINAL_BOSS_FORMAT,
                |t| parse::parse_final_boss(t, spec.lines.len()),
            )
            .await
        })
    }
}

/// The fresh-eyes gate on a model, with the overviewer prompt.
pub struct ModelFreshEyes {
    pub client: ModelClient,
}

impl crate::roles::FreshEyesReviewer for ModelFreshEyes {
    fn model(&self) -> &str {
        self.client.model()
    }

    fn review<'a>(
        &'a self,
        spec: &'a Spec,
        answers: &'a str,
    ) -> BoxFuture<'a, RoleResult<crate::roles::FreshEyesOutput>> {
        Box::pin(async move {
            let answers = if answers.is_empty() {
                String::new()
            } else {
                format!(
                    "This is your second look. The author answered your earlier questions:\n{answers}\nCheck whether the answers and the spec settle them."
                )
            };
            let prompt = prompts::fill(prompts::FRESH_EYES, &[("answers", &answers)]);
            ask(
                &self.client,
                "fresh-eyes",
                Priority::FinalBoss,
                &prompts::spec_context(spec),
                prompt,
                prompts::FRESH_EYES_FORMAT,
                |t| parse::parse_fresh_eyes(t, spec.lines.len()),
            )
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::group_batches;

    #[test]
    fn batches_are_grouped_two_per_call_within_the_concern_cap() {
        // The benchmark: 20 concerns in batches of 15 and 5, one call.
        assert_eq!(group_batches(&[15, 5]), vec![0..2]);
        assert_eq!(group_batches(&[15, 15, 15]), vec![0..2, 2..3]);
        // A batch larger than the cap gets a call of its own.
        assert_eq!(group_batches(&[40, 5, 20]), vec![0..1, 1..3]);
        assert_eq!(group_batches(&[20, 20]), vec![0..1, 1..2]);
        assert!(group_batches(&[]).is_empty());
    }
}
