//! The roles (`Attacker`, `Evaluator`, `FinalBoss`) answered by a model
//! through a `ModelClient`: build the prompt from the templates, call, parse
//! defensively, send one repair request if the reply cannot be read, and
//! turn what is left into a `RoleError`. A failure is never a silent pass:
//! the pipeline turns it into a warning, an abstention or `incomplete`.

use super::client::ModelClient;
use super::completion::{CompletionRequest, ProviderError};
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

/// Calls the model and parses the reply; one repair request when the reply
/// is empty or unreadable; after that the call has failed.
async fn ask<T>(
    client: &ModelClient,
    label: &str,
    prompt: String,
    format: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
) -> RoleResult<T> {
    let mut usage = Usage::default();
    let first = client
        .call(
            label,
            CompletionRequest {
                system: prompts::SYSTEM.to_string(),
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
            CompletionRequest {
                system: prompts::SYSTEM.to_string(),
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

/// Attacks and rebuttals on a model.
pub struct ModelAttacker {
    pub client: ModelClient,
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
            let numbered = prompts::numbered_spec(spec);
            let round_text = round.map(prompts::round_section);
            join_all(personas.iter().map(|p| {
                let mut prompt = prompts::fill(
                    prompts::ATTACK,
                    &[
                        ("persona_prompt", p.prompt.trim()),
                        ("persona", &p.name),
                        ("spec", &numbered),
                    ],
                );
                if let Some(r) = &round_text {
                    prompt.push_str("\n\n");
                    prompt.push_str(r);
                }
                async move {
                    let r = ask(
                        &self.client,
                        &format!("attack-{}", p.name),
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

    fn rebut<'a>(
        &'a self,
        spec: &'a Spec,
        requests: &'a [RebuttalRequest<'a>],
    ) -> BoxFuture<'a, Vec<RoleResult<Rebuttal>>> {
        Box::pin(async move {
            let numbered = prompts::numbered_spec(spec);
            join_all(requests.iter().map(|r| {
                let c = r.concern;
                let reasoning = c.dismissal_reasoning();
                let prompt = prompts::fill(
                    prompts::REBUTTAL,
                    &[
                        ("persona_prompt", r.persona.prompt.trim()),
                        ("id", &c.id),
                        ("title", &c.title),
                        ("lines", &c.lines_label()),
                        ("detail", &c.detail),
                        ("dismissal_reasoning", &reasoning),
                        ("spec", &numbered),
                    ],
                );
                async move {
                    let r = ask(
                        &self.client,
                        &format!("rebuttal-{}", c.id),
                        prompt,
                        prompts::REBUTTAL_FORMAT,
                        parse::parse_rebuttal,
                    )
                    .await;
                    RoleResult {
                        value: r.value.map(|(outcome, reasoning)| Rebuttal {
                            outcome,
                            reasoning,
                            challenged: Vec::new(),
                        }),
                        usage: r.usage,
                    }
                }
            }))
            .await
        })
    }
}

/// Evaluation and adjudication on a model.
pub struct ModelEvaluator {
    pub client: ModelClient,
    pub catalog: Arc<Catalog>,
}

impl ModelEvaluator {
    fn protocol_text(&self, adversary: &str) -> String {
        self.catalog
            .protocol(adversary)
            .map(|p| p.as_prompt())
            .unwrap_or_else(|| format!("(no response protocol for {adversary})\n"))
    }
}

impl Evaluator for ModelEvaluator {
    fn model(&self) -> &str {
        self.client.model()
    }

    fn evaluate<'a>(
        &'a self,
        spec: &'a Spec,
        batches: &'a [Vec<&'a Concern>],
    ) -> BoxFuture<'a, Vec<RoleResult<BatchVotes>>> {
        Box::pin(async move {
            let numbered = prompts::numbered_spec(spec);
            join_all(batches.iter().enumerate().map(|(bi, batch)| {
                let mut adversaries: Vec<&str> =
                    batch.iter().map(|c| c.adversary.as_str()).collect();
                adversaries.sort_unstable();
                adversaries.dedup();
                let protocols: Vec<String> =
                    adversaries.iter().map(|a| self.protocol_text(a)).collect();
                let concerns: Vec<String> =
                    batch.iter().map(|c| prompts::concern_block(c)).collect();
                let prompt = prompts::fill(
                    prompts::EVALUATE,
                    &[
                        ("spec", &numbered),
                        ("protocols", &protocols.join("\n")),
                        ("concerns", &concerns.join("\n")),
                    ],
                );
                let ids: HashSet<&str> = batch.iter().map(|c| c.id.as_str()).collect();
                async move {
                    let model = self.client.model().to_string();
                    let r = ask(
                        &self.client,
                        &format!("eval-batch{}", bi + 1),
                        prompt,
                        prompts::VOTES_FORMAT,
                        |t| {
                            let votes = parse::parse_votes(t)?;
                            if !votes.iter().any(|v| ids.contains(v.id.as_str())) {
                                return Err(ParseError(
                                    "no vote names a concern id of this batch".to_string(),
                                ));
                            }
                            Ok(votes)
                        },
                    )
                    .await;
                    RoleResult {
                        value: r.value.map(|votes| {
                            votes
                                .into_iter()
                                .map(|v| {
                                    // An id from outside this batch is reported
                                    // (and ignored) by the pipeline as unknown.
                                    let id = if ids.contains(v.id.as_str()) {
                                        v.id
                                    } else {
                                        format!("{} (not in this batch)", v.id)
                                    };
                                    (
                                        id,
                                        Vote {
                                            evaluator: model.clone(),
                                            decision: v.decision,
                                            reasoning: v.reasoning,
                                            cites: v.cites,
                                        },
                                    )
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

    fn adjudicate<'a>(
        &'a self,
        spec: &'a Spec,
        concerns: &'a [&'a Concern],
    ) -> BoxFuture<'a, Vec<RoleResult<Adjudication>>> {
        Box::pin(async move {
            let numbered = prompts::numbered_spec(spec);
            join_all(concerns.iter().map(|c| {
                let challenge = c
                    .rebuttal
                    .as_ref()
                    .map(|r| r.reasoning.clone())
                    .unwrap_or_default();
                let prompt = prompts::fill(
                    prompts::ADJUDICATE,
                    &[
                        ("protocol", &self.protocol_text(&c.adversary)),
                        ("id", &c.id),
                        ("adversary", &c.adversary),
                        ("title", &c.title),
                        ("lines", &c.lines_label()),
                        ("detail", &c.detail),
                        ("dismissal_reasoning", &c.dismissal_reasoning()),
                        ("challenge", &challenge),
                        ("spec", &numbered),
                    ],
                );
                async move {
                    let r = ask(
                        &self.client,
                        &format!("adjudicate-{}", c.id),
                        prompt,
                        prompts::ADJUDICATE_FORMAT,
                        parse::parse_adjudication,
                    )
                    .await;
                    RoleResult {
                        value: r.value.map(|(outcome, reasoning)| Adjudication {
                            outcome,
                            reasoning,
                            adjudicator: Some(self.client.model().to_string()),
                        }),
                        usage: r.usage,
                    }
                }
            }))
            .await
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
                &[
                    ("persona_prompt", &persona),
                    ("surviving", &list),
                    ("spec", &prompts::numbered_spec(spec)),
                ],
            );
            ask(
                &self.client,
                "final-boss",
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
            let prompt = prompts::fill(
                prompts::FRESH_EYES,
                &[
                    ("answers", &answers),
                    ("spec", &prompts::numbered_spec(spec)),
                ],
            );
            ask(
                &self.client,
                "fresh-eyes",
                prompt,
                prompts::FRESH_EYES_FORMAT,
                |t| parse::parse_fresh_eyes(t, spec.lines.len()),
            )
            .await
        })
    }
}
