//! Run statistics: plain values that add up (`Default + AddAssign`), so a
//! batch review can sum the stats of many runs. The same object is written by
//! `--stats-json` and embedded in the JSON verdict.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::AddAssign;

/// What calls to one model cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider reports it read from its prompt
    /// cache (priced at the cached rate). 0 when the provider says nothing.
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub cost_usd: f64,
    /// True when any token count was estimated (chars / 4) rather than reported.
    #[serde(default)]
    pub estimated: bool,
}

impl Usage {
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl AddAssign<&Usage> for Usage {
    fn add_assign(&mut self, o: &Usage) {
        self.calls += o.calls;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.cost_usd += o.cost_usd;
        self.estimated |= o.estimated;
    }
}

/// Usage of one model in one role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelStats {
    /// attack, eval, final_boss (a model in several roles is listed once per role).
    pub role: String,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub tokens: u64,
    pub cost_usd: f64,
    pub estimated: bool,
}

impl ModelStats {
    pub fn add_usage(&mut self, u: &Usage) {
        self.calls += u.calls;
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cached_input_tokens += u.cached_input_tokens;
        self.tokens += u.tokens();
        self.cost_usd += u.cost_usd;
        self.estimated |= u.estimated;
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AttackStats {
    /// Raw concerns raised per adversary.
    pub per_adversary: BTreeMap<String, u64>,
    pub total: u64,
    /// Adversaries whose attacker failed and produced nothing.
    #[serde(default)]
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilterStats {
    /// Dropped: already addressed with high confidence.
    pub dropped: u64,
    /// Noted: evaluated again, with the earlier explanation attached.
    pub noted: u64,
    /// Concerns that went on to evaluation.
    pub proceeding: u64,
    /// A resolved-concerns store was consulted (false with `--no-store`);
    /// reports show the self-filter only when it was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub store: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvaluationStats {
    pub evaluators: u64,
    pub batches: u64,
    /// Concerns the evaluators saw.
    pub evaluated: u64,
    pub dismissed: u64,
    pub accepted: u64,
    pub deferred: u64,
    /// Concerns whose votes were not unanimous.
    pub disagreements: u64,
    /// Votes missing because an evaluator failed or skipped a concern.
    pub abstentions: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RebuttalStats {
    /// Dismissals sent back to their adversary.
    pub dismissals: u64,
    pub challenges: u64,
    /// Challenges upheld by adjudication: the concern is reinstated.
    pub sustained: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalStats {
    /// Concerns that require spec revision (accepted + reinstated).
    pub requiring_revision: u64,
    pub high: u64,
    pub medium: u64,
    pub low: u64,
}

/// Wall time per phase, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durations {
    pub attack: u64,
    pub filter: u64,
    pub evaluation: u64,
    pub rebuttal: u64,
    pub adjudication: u64,
    pub final_boss: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    pub attack: AttackStats,
    pub filter: FilterStats,
    pub evaluation: EvaluationStats,
    pub rebuttal: RebuttalStats,
    #[serde(rename = "final")]
    pub final_: FinalStats,
    pub duration_ms: Durations,
    /// Keyed by `role:model` so one model in two roles is counted per role.
    pub models: BTreeMap<String, ModelStats>,
    pub cost_usd: f64,
}

impl RunStats {
    pub fn add_model_usage(&mut self, role: &str, model: &str, u: &Usage) {
        let e = self
            .models
            .entry(format!("{role}:{model}"))
            .or_insert_with(|| ModelStats {
                role: role.to_string(),
                ..ModelStats::default()
            });
        e.add_usage(u);
        self.cost_usd += u.cost_usd;
    }
}

impl AddAssign<&RunStats> for RunStats {
    fn add_assign(&mut self, o: &RunStats) {
        for (k, v) in &o.attack.per_adversary {
            *self.attack.per_adversary.entry(k.clone()).or_default() += v;
        }
        self.attack.total += o.attack.total;
        for f in &o.attack.failed {
            if !self.attack.failed.contains(f) {
                self.attack.failed.push(f.clone());
            }
        }
        let f = &mut self.filter;
        f.dropped += o.filter.dropped;
        f.noted += o.filter.noted;
        f.proceeding += o.filter.proceeding;
        let e = &mut self.evaluation;
        e.evaluators = e.evaluators.max(o.evaluation.evaluators);
        e.batches += o.evaluation.batches;
        e.evaluated += o.evaluation.evaluated;
        e.dismissed += o.evaluation.dismissed;
        e.accepted += o.evaluation.accepted;
        e.deferred += o.evaluation.deferred;
        e.disagreements += o.evaluation.disagreements;
        e.abstentions += o.evaluation.abstentions;
        self.rebuttal.dismissals += o.rebuttal.dismissals;
        self.rebuttal.challenges += o.rebuttal.challenges;
        self.rebuttal.sustained += o.rebuttal.sustained;
        self.final_.requiring_revision += o.final_.requiring_revision;
        self.final_.high += o.final_.high;
        self.final_.medium += o.final_.medium;
        self.final_.low += o.final_.low;
        let d = &mut self.duration_ms;
        d.attack += o.duration_ms.attack;
        d.filter += o.duration_ms.filter;
        d.evaluation += o.duration_ms.evaluation;
        d.rebuttal += o.duration_ms.rebuttal;
        d.adjudication += o.duration_ms.adjudication;
        d.final_boss += o.duration_ms.final_boss;
        d.total += o.duration_ms.total;
        for (k, v) in &o.models {
            let m = self.models.entry(k.clone()).or_insert_with(|| ModelStats {
                role: v.role.clone(),
                ..ModelStats::default()
            });
            m.calls += v.calls;
            m.input_tokens += v.input_tokens;
            m.output_tokens += v.output_tokens;
            m.cached_input_tokens += v.cached_input_tokens;
            m.tokens += v.tokens;
            m.cost_usd += v.cost_usd;
            m.estimated |= v.estimated;
        }
        self.cost_usd += o.cost_usd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up() {
        let mut a = RunStats::default();
        a.attack.per_adversary.insert("x".into(), 2);
        a.attack.total = 2;
        a.add_model_usage(
            "attack",
            "m",
            &Usage {
                calls: 1,
                input_tokens: 10,
                output_tokens: 5,
                cached_input_tokens: 4,
                cost_usd: 0.5,
                estimated: false,
            },
        );
        let mut b = a.clone();
        b.add_model_usage(
            "attack",
            "m",
            &Usage {
                calls: 1,
                input_tokens: 1,
                output_tokens: 1,
                cached_input_tokens: 0,
                cost_usd: 0.25,
                estimated: true,
            },
        );
        a += &b;
        assert_eq!(a.attack.per_adversary["x"], 4);
        assert_eq!(a.attack.total, 4);
        let m = &a.models["attack:m"];
        assert_eq!(m.calls, 3);
        assert_eq!(m.tokens, 32);
        assert_eq!(m.cached_input_tokens, 8);
        assert!(m.estimated);
        assert!((a.cost_usd - 1.25).abs() < 1e-9);
    }
}
