//! Debate rounds (`--rounds N`, capped at 3): round 1 is a normal run;
//! round N+1 re-runs the attack with round N's surviving concerns and the
//! author's answers (`--responses`), on the spec with the author's edits,
//! then evaluates again. The rounds stop on CONVERGE (no new high or medium
//! concern), on oscillation (concerns the previous round settled come
//! back), on an incomplete round, or at the cap. The verdict is the last
//! round's, with every round's model usage added to its stats.
//!
//! With only deterministic roles (the offline engine), a round without
//! spec edits would repeat the previous one exactly, so the rounds
//! converge after round 1 unless the responses change the spec.

use super::{EventSink, Gauntlet};
use crate::event::Event;
use crate::filter::ConcernFilter;
use crate::responses::Stance;
use crate::roles::RoundContext;
use crate::rounds::{self, MAX_ROUNDS, RoundSummary, RoundsReport, StopReason};
use crate::spec::Spec;
use crate::verdict::{Outcome, Verdict};
use std::collections::HashSet;

fn usage(v: &Verdict) -> (u64, u64) {
    v.stats
        .models
        .values()
        .fold((0, 0), |(c, t), m| (c + m.calls, t + m.tokens))
}

impl Gauntlet {
    /// True when every role is the offline engine (same input, same output).
    fn deterministic(&self) -> bool {
        self.attacker.model().starts_with("offline")
            && self
                .evaluators
                .iter()
                .all(|e| e.model().starts_with("offline"))
    }

    pub(crate) async fn run_rounds(
        &self,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Verdict {
        let max = self.options.rounds.clamp(1, MAX_ROUNDS);
        let responses = &self.options.responses;
        let mut verdict = self.run_once(spec, filter, events, None).await;
        let (calls, tokens) = usage(&verdict);
        let mut summaries = vec![RoundSummary {
            round: 1,
            requiring_revision: verdict.stats.final_.requiring_revision,
            new_high_medium: Vec::new(),
            returned: Vec::new(),
            responses: 0,
            spec_edited: false,
            calls,
            tokens,
        }];
        let mut spent = verdict.stats.clone();
        let mut current: Option<Spec> = None;
        let mut stop = StopReason::Cap;
        for n in 2..=max {
            if verdict.verdict == Outcome::Incomplete {
                stop = StopReason::Incomplete;
                break;
            }
            let base = current.as_ref().unwrap_or(spec);
            let edited = responses.edited(&base.text);
            if edited.is_none() && self.deterministic() {
                stop = StopReason::Converged;
                break;
            }
            let spec_edited = edited.is_some();
            if let Some(text) = edited {
                current = Some(Spec::parse(spec.path.clone(), text));
            }
            let previous: Vec<_> = verdict
                .concerns
                .iter()
                .filter(|c| c.status.requires_revision())
                .cloned()
                .collect();
            let answered = previous
                .iter()
                .filter(|c| responses.get(&c.id).is_some())
                .count() as u64;
            let fixed: HashSet<&str> = responses
                .responses
                .iter()
                .filter(|r| r.response == Stance::Agree && !r.edits.is_empty())
                .map(|r| r.id.as_str())
                .collect();
            let context = RoundContext {
                round: n,
                max_rounds: max,
                previous,
                responses: responses.clone(),
            };
            events(Event::Note(format!("round {n} of {max}")));
            let this_spec = current.as_ref().unwrap_or(spec);
            let next = self
                .run_once(this_spec, filter, events, Some(&context))
                .await;
            let settled = rounds::settled(&verdict.concerns, &fixed);
            let returned = rounds::returned(&settled, &next.concerns);
            let new = rounds::new_high_medium(&verdict.concerns, &next.concerns);
            let (calls, tokens) = usage(&next);
            summaries.push(RoundSummary {
                round: n,
                requiring_revision: next.stats.final_.requiring_revision,
                new_high_medium: new.clone(),
                returned: returned.clone(),
                responses: answered,
                spec_edited,
                calls,
                tokens,
            });
            add_usage(&mut spent, &next);
            verdict = next;
            if verdict.verdict == Outcome::Incomplete {
                stop = StopReason::Incomplete;
                break;
            }
            if !returned.is_empty() {
                stop = StopReason::Oscillation;
                break;
            }
            if new.is_empty() {
                stop = StopReason::Converged;
                break;
            }
        }
        if summaries.len() == 1 && max == 1 {
            stop = StopReason::Converged;
        }
        verdict.stats.models = spent.models;
        verdict.stats.cost_usd = spent.cost_usd;
        verdict.memory.rounds = Some(RoundsReport {
            max,
            rounds: summaries,
            stop,
        });
        verdict
    }
}

/// Adds `next`'s model usage to the running total.
fn add_usage(total: &mut crate::stats::RunStats, next: &Verdict) {
    for (k, m) in &next.stats.models {
        let e = total.models.entry(k.clone()).or_insert_with(|| {
            let mut z = m.clone();
            z.calls = 0;
            z.input_tokens = 0;
            z.output_tokens = 0;
            z.tokens = 0;
            z.cost_usd = 0.0;
            z
        });
        e.calls += m.calls;
        e.input_tokens += m.input_tokens;
        e.output_tokens += m.output_tokens;
        e.tokens += m.tokens;
        e.cost_usd += m.cost_usd;
        e.estimated |= m.estimated;
    }
    total.cost_usd += next.stats.cost_usd;
}
