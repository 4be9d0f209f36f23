//! `--dry-run` per complexity level: the estimated calls, tokens and cost
//! of a quick, standard and thorough run of this spec with the configured
//! models (the `provider::plan` estimate, plus the divergence checklist's
//! tokens, priced with litellm's table; local and unknown models are $0).

use crate::config::Config;
use crate::provider::plan::Plan;
use crate::provider::{ModelName, ModelSettings};
use crate::spec::Spec;
use crate::stats::Usage;
use crate::triage::{Assessment, Level};
use serde::Serialize;
use std::io::Write;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LevelCost {
    pub level: Level,
    pub adversaries: usize,
    pub evaluators: usize,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

fn price(m: &ModelName, input: u64, output: u64) -> f64 {
    if m.is_offline() {
        return 0.0;
    }
    let usage = Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    };
    crate::provider::litellm::cost(m.kind, &m.model, &usage)
}

/// The estimate for each level on this spec.
pub fn estimate(config: &Config, spec: &Spec) -> Vec<LevelCost> {
    let settings = &config.models.settings;
    let checklist = config
        .options
        .nuances
        .as_deref()
        .and_then(|set| {
            crate::nuance::checklist::block(set, spec, crate::nuance::checklist::Audience::Evaluate)
        })
        .map(|b| crate::provider::completion::estimate_tokens(b.chars().count()))
        .unwrap_or(0);
    let assessed = crate::triage::assess_run(&config.options, spec);
    Level::ALL
        .iter()
        .map(|&level| {
            // The same options a run at this level would get (one rule, in
            // triage), and quick keeps one evaluator as `triage::apply` does.
            let at_level = Assessment {
                level,
                ..assessed.clone()
            };
            let options = crate::triage::options_for(&config.options, &at_level, spec);
            let mut s: ModelSettings = settings.clone();
            if level == Level::Quick {
                s.eval.truncate(1);
            }
            let final_boss = level == Level::Thorough || config.final_boss;
            let plan = Plan::estimate(&s, &config.catalog, &options, final_boss, spec);
            let (mut calls, mut input, mut output, mut cost) = (0u64, 0u64, 0u64, 0.0f64);
            for p in &plan.phases {
                let mut extra = 0;
                if checklist > 0 && (p.phase == "attack" || p.phase == "evaluation") {
                    extra = checklist * p.calls;
                }
                let (i, o) = (p.input_tokens + extra, p.output_tokens);
                calls += p.calls;
                input += i;
                output += o;
                cost += match p.phase {
                    "attack" | "rebuttal" => price(&s.attack, i, o),
                    "evaluation" => {
                        let n = s.eval.len().max(1) as u64;
                        s.eval.iter().map(|m| price(m, i / n, o / n)).sum()
                    }
                    "adjudication" => s.eval.first().map_or(0.0, |m| price(m, i, o)),
                    "final_boss" => price(&s.final_boss, i, o),
                    _ => 0.0,
                };
            }
            LevelCost {
                level,
                adversaries: options.adversaries.len(),
                evaluators: s.eval.len(),
                calls,
                input_tokens: input,
                output_tokens: output,
                cost_usd: cost,
            }
        })
        .collect()
}

/// The table `--dry-run` prints after the plan.
pub fn write(rows: &[LevelCost], chosen: &Assessment, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "\nPer complexity level (this run: {}, {}):",
        chosen.level.as_str(),
        chosen.requested
    )?;
    writeln!(
        out,
        "  {:<9} {:>11} {:>10} {:>6} {:>12} {:>12} {:>10}",
        "level", "adversaries", "evaluators", "calls", "input tok", "output tok", "cost USD"
    )?;
    for r in rows {
        writeln!(
            out,
            "  {:<9} {:>11} {:>10} {:>6} {:>12} {:>12} {:>10.4}",
            r.level.as_str(),
            r.adversaries,
            r.evaluators,
            r.calls,
            r.input_tokens,
            r.output_tokens,
            r.cost_usd
        )?;
    }
    Ok(())
}
