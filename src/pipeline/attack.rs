//! Phase 1, attack: every adversary persona raises concerns; the same
//! concern raised twice is kept once with its lines widened.

use super::{Gauntlet, RunState, ms};
use crate::concern::Concern;
use crate::event::{Event, Phase};
use crate::persona::Persona;
use crate::roles::RoundContext;
use std::collections::HashMap;
use std::time::Instant;

impl Gauntlet {
    /// The personas this run attacks with, in the order asked for.
    pub(crate) fn personas(&self) -> Vec<&Persona> {
        self.options
            .adversaries
            .iter()
            .filter_map(|a| self.catalog.persona(a))
            .collect()
    }

    /// Returns the raised concerns, deduplicated by id.
    pub(crate) async fn attack(
        &self,
        run: &mut RunState<'_>,
        personas: &[&Persona],
        round: Option<&RoundContext>,
    ) -> Vec<Concern> {
        run.event(Event::PhaseStarted(Phase::Attack));
        let t = Instant::now();
        let results = match round {
            Some(r) => self.attacker.attack_round(run.spec, personas, r).await,
            None => self.attacker.attack(run.spec, personas).await,
        };
        let mut concerns: Vec<Concern> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (persona, result) in personas.iter().zip(results) {
            run.stats
                .add_model_usage("attack", self.attacker.model(), &result.usage);
            match result.value {
                Ok(raws) => {
                    let mut raised = 0;
                    for raw in raws {
                        let mut c = Concern::from_raw(&persona.name, &persona.prefix, raw);
                        raised += 1;
                        // Issue 12: a model that reuses one title for a
                        // different concern (another detail) in the same
                        // section keeps both, under distinct ids. Rule-based
                        // concerns and true repeats still merge below.
                        if let Some(&i) = index.get(&c.id)
                            && c.rule.is_none()
                            && !concerns[i].same_detail(&c)
                        {
                            c = c.with_detail_in_id();
                        }
                        if let Some(&i) = index.get(&c.id) {
                            // The same concern raised twice: widen its lines.
                            let e: &mut Concern = &mut concerns[i];
                            if let (Some((a, b)), Some((x, y))) = (e.lines, c.lines) {
                                e.lines = Some((a.min(x), b.max(y)));
                            }
                            continue;
                        }
                        index.insert(c.id.clone(), concerns.len());
                        concerns.push(c);
                    }
                    run.stats
                        .attack
                        .per_adversary
                        .insert(persona.name.clone(), raised);
                }
                Err(e) => {
                    run.stats
                        .attack
                        .per_adversary
                        .insert(persona.name.clone(), 0);
                    run.stats.attack.failed.push(persona.name.clone());
                    run.warn(format!("attacker {} produced nothing: {e}", persona.name));
                }
            }
        }
        if !personas.is_empty() && run.stats.attack.failed.len() == personas.len() {
            run.incomplete.push("every attacker failed".to_string());
        } else if !personas.is_empty()
            && concerns.is_empty()
            && self.attacker.model() != crate::offline::MODEL
        {
            // Issue 12 (hardening): a model endpoint that answers `[]` to
            // every attack did not review the spec; that is no pass.
            run.incomplete.push(format!(
                "every model attacker ({}) returned no concerns: nothing usable came back, so the spec was not reviewed",
                self.attacker.model()
            ));
        }
        run.stats.attack.total = concerns.len() as u64;
        run.stats.duration_ms.attack = ms(t);
        run.event(Event::PhaseFinished {
            phase: Phase::Attack,
            summary: format!(
                "{} raw concerns from {} adversaries",
                concerns.len(),
                personas.len()
            ),
        });
        concerns
    }
}
