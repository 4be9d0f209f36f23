//! `--dry-run`: the plan of a run (models per role, estimated calls and
//! tokens per phase) without calling anything. Estimates are deliberately
//! simple and labelled as such: concerns per adversary and dismissal and
//! challenge rates are the seed's typical figures, tokens are chars / 4.

use super::completion::estimate_tokens;
use super::model_roles::{ADJUDICATION_BATCH, REBUTTAL_BATCH};
use super::prompts;
use super::settings::ModelSettings;
use crate::catalog::Catalog;
use crate::pipeline::RunOptions;
use crate::spec::Spec;
use serde::Serialize;
use std::io::Write;

/// Typical raw concerns per adversary (the seed's example: 17 from 5).
const CONCERNS_PER_ADVERSARY: f64 = 4.0;
/// Typical share of concerns dismissed (the seed expects 60% false positives).
const DISMISSED_SHARE: f64 = 0.6;
/// Typical share of dismissals challenged.
const CHALLENGED_SHARE: f64 = 0.3;
/// Typical reply sizes, in tokens.
const ATTACK_REPLY: u64 = 800;
const VOTE_REPLY_PER_CONCERN: u64 = 80;
const SHORT_REPLY: u64 = 150;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhasePlan {
    pub phase: &'static str,
    pub models: Vec<String>,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub phases: Vec<PhasePlan>,
    pub estimated_concerns: u64,
}

impl Plan {
    pub fn estimate(
        settings: &ModelSettings,
        catalog: &Catalog,
        options: &RunOptions,
        final_boss: bool,
        spec: &Spec,
    ) -> Plan {
        let spec_tokens = estimate_tokens(prompts::numbered_spec(spec).chars().count());
        let adversaries = options.adversaries.len() as u64;
        let persona_tokens: u64 = options
            .adversaries
            .iter()
            .filter_map(|a| catalog.persona(a))
            .map(|p| estimate_tokens(p.prompt.len()))
            .sum();
        let concerns = (adversaries as f64 * CONCERNS_PER_ADVERSARY).round() as u64;
        // Each evaluator answers its batches in calls of up to
        // EVALUATION_BATCHES_PER_CALL batches (and a concern cap).
        let sizes: Vec<usize> = crate::evaluation::batches(concerns as usize, options.batch_size)
            .iter()
            .map(|r| r.len())
            .collect();
        let eval_calls = super::model_roles::group_batches(&sizes).len() as u64;
        let evaluators = settings.eval.len() as u64;
        let template = |t: &str| estimate_tokens(t.len());
        let mut phases = vec![PhasePlan {
            phase: "attack",
            models: vec![settings.attack.to_string()],
            calls: adversaries,
            input_tokens: adversaries * (spec_tokens + template(prompts::ATTACK)) + persona_tokens,
            output_tokens: adversaries * ATTACK_REPLY,
        }];
        phases.push(PhasePlan {
            phase: "evaluation",
            models: settings.eval.iter().map(|m| m.to_string()).collect(),
            calls: evaluators * eval_calls,
            input_tokens: evaluators
                * (eval_calls * (spec_tokens + template(prompts::EVALUATE) + 400) + concerns * 120),
            output_tokens: evaluators * concerns * VOTE_REPLY_PER_CONCERN,
        });
        if options.rebuttals {
            let dismissed = (concerns as f64 * DISMISSED_SHARE).round() as u64;
            let challenged = (dismissed as f64 * CHALLENGED_SHARE).round() as u64;
            // One rebuttal call per adversary (up to REBUTTAL_BATCH concerns),
            // each concern with its cited lines (~10 lines) instead of the spec.
            let per_adversary = dismissed.div_ceil(adversaries.max(1));
            let rebuttal_calls = if dismissed == 0 {
                0
            } else {
                adversaries * per_adversary.div_ceil(REBUTTAL_BATCH as u64)
            };
            phases.push(PhasePlan {
                phase: "rebuttal",
                models: vec![settings.attack.to_string()],
                calls: rebuttal_calls,
                input_tokens: rebuttal_calls * template(prompts::REBUTTAL)
                    + persona_tokens
                    + dismissed * (300 + 150),
                output_tokens: dismissed * SHORT_REPLY,
            });
            // One adjudication call per ADJUDICATION_BATCH challenges, each
            // challenge with its cited lines (~10 lines) instead of the spec.
            let adjudication_calls = challenged.div_ceil(ADJUDICATION_BATCH as u64);
            phases.push(PhasePlan {
                phase: "adjudication",
                models: settings
                    .eval
                    .first()
                    .map(|m| m.to_string())
                    .into_iter()
                    .collect(),
                calls: adjudication_calls,
                input_tokens: adjudication_calls * template(prompts::ADJUDICATE)
                    + challenged * (400 + 150),
                output_tokens: challenged * SHORT_REPLY,
            });
        }
        if final_boss {
            phases.push(PhasePlan {
                phase: "final_boss",
                models: vec![settings.final_boss.to_string()],
                calls: 1,
                input_tokens: spec_tokens + template(prompts::FINAL_BOSS) + 500,
                output_tokens: 600,
            });
        }
        // Debate rounds repeat every phase, at most `rounds` times (an upper
        // bound: they stop early on convergence); the fresh-eyes gate adds
        // one call on the final boss's model.
        let rounds = options.rounds.clamp(1, crate::rounds::MAX_ROUNDS) as u64;
        for p in &mut phases {
            p.calls *= rounds;
            p.input_tokens *= rounds;
            p.output_tokens *= rounds;
        }
        if options.fresh_eyes {
            phases.push(PhasePlan {
                phase: "fresh_eyes",
                models: vec![settings.final_boss.to_string()],
                calls: 1,
                input_tokens: spec_tokens + template(prompts::FRESH_EYES),
                output_tokens: ATTACK_REPLY,
            });
        }
        // The offline engine makes no calls and uses no tokens.
        for p in &mut phases {
            if p.models.iter().all(|m| m == "offline") {
                p.calls = 0;
                p.input_tokens = 0;
                p.output_tokens = 0;
            }
        }
        Plan {
            phases,
            estimated_concerns: concerns,
        }
    }

    pub fn write(&self, settings: &ModelSettings, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "=== Gauntlet plan (dry run: no model is called) ===")?;
        writeln!(out, "Attack model: {}", settings.attack)?;
        writeln!(
            out,
            "Eval models: {} (the first adjudicates)",
            settings
                .eval
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        writeln!(out, "Final boss model: {}", settings.final_boss)?;
        writeln!(
            out,
            "Timeout: {}s per call, max concurrency {} per provider{}",
            settings.timeout.as_secs(),
            settings.max_concurrency,
            settings
                .deadline
                .map(|d| format!(", deadline {}s", d.as_secs()))
                .unwrap_or_default()
        )?;
        writeln!(
            out,
            "\nEstimates (about {} concerns; tokens are chars/4):",
            self.estimated_concerns
        )?;
        writeln!(
            out,
            "  {:<13} {:>6} {:>12} {:>12}  models",
            "phase", "calls", "input tok", "output tok"
        )?;
        let (mut c, mut i, mut o) = (0, 0, 0);
        for p in &self.phases {
            writeln!(
                out,
                "  {:<13} {:>6} {:>12} {:>12}  {}",
                p.phase,
                p.calls,
                p.input_tokens,
                p.output_tokens,
                p.models.join(", ")
            )?;
            c += p.calls;
            i += p.input_tokens;
            o += p.output_tokens;
        }
        writeln!(out, "  {:<13} {:>6} {:>12} {:>12}", "total", c, i, o)?;
        Ok(())
    }
}
