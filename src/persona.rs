//! A persona: an adversary (or the final boss) with its verbatim prompt for
//! model providers and its offline rule pack.

use crate::rule::{Origin, Rule, RuleDef};
use crate::trigger_prefilter::TriggerPrefilter;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaDef {
    pub name: String,
    pub prefix: String,
    pub description: String,
    /// The persona prompt, verbatim from the seed; used by model providers.
    pub prompt: String,
    /// `adversary` (default) or `final_boss`.
    #[serde(default = "default_kind")]
    pub kind: String,
    #[serde(default, rename = "rules")]
    pub rules: Vec<RuleDef>,
    /// Final-boss checks (only for `kind = "final_boss"`).
    #[serde(default)]
    pub checks: Vec<CheckDef>,
}

fn default_kind() -> String {
    "adversary".to_string()
}

/// A final-boss question and the evidence that answers it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckDef {
    pub id: String,
    pub question: String,
    /// Patterns that show the spec answers the question.
    pub evidence: Vec<String>,
    /// Finding text when no evidence is found.
    pub finding: String,
    /// `fundamental` checks failing make the verdict RECONSIDER.
    #[serde(default)]
    pub fundamental: bool,
}

#[derive(Debug, Clone)]
pub struct Persona {
    pub name: String,
    pub prefix: String,
    pub description: String,
    pub prompt: String,
    pub is_final_boss: bool,
    pub rules: Vec<Rule>,
    pub checks: Vec<CheckDef>,
    /// The rules' trigger prefilter, built on first use (see `prefilter`).
    prefilter: std::sync::OnceLock<TriggerPrefilter>,
}

impl Persona {
    /// Builds a persona; the patterns of a user's file (`Origin::User`) are
    /// all checked now, an embedded pack's on first use (see `Origin`).
    pub fn from_def(def: PersonaDef, origin: Origin) -> Result<Persona, String> {
        let is_final_boss = match def.kind.as_str() {
            "adversary" => false,
            "final_boss" => true,
            other => return Err(format!("unknown kind `{other}` (adversary or final_boss)")),
        };
        if def.prefix.is_empty()
            || def.prefix.len() > 8
            || !def.prefix.chars().all(|c| c.is_ascii_uppercase())
        {
            return Err(format!(
                "prefix `{}` must be 1-8 uppercase ASCII letters",
                def.prefix
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for r in &def.rules {
            if !seen.insert(r.id.clone()) {
                return Err(format!("duplicate rule id `{}`", r.id));
            }
        }
        for r in &def.rules {
            if let Some(other) = r
                .yields_to
                .iter()
                .find(|o| !seen.contains(*o) || **o == r.id)
            {
                return Err(format!(
                    "rule `{}`: yields_to names `{other}`, not another rule of this pack",
                    r.id
                ));
            }
        }
        // Compiling patterns is most of a run's start-up: spread it over cores.
        use rayon::prelude::*;
        let rules = def
            .rules
            .into_par_iter()
            .map(|r| Rule::load(r, origin))
            .collect::<Result<Vec<Rule>, String>>()?;
        // Final-boss evidence is compiled where it is used; only a user's
        // patterns need their syntax checked here.
        for c in def.checks.iter().filter(|_| origin == Origin::User) {
            for p in &c.evidence {
                crate::rule::compile(p)
                    .map_err(|e| format!("check `{}`: bad pattern `{p}`: {e}", c.id))?;
            }
        }
        Ok(Persona {
            name: def.name,
            prefix: def.prefix,
            description: def.description,
            prompt: def.prompt,
            is_final_boss,
            rules,
            checks: def.checks,
            prefilter: std::sync::OnceLock::new(),
        })
    }

    /// Adds a rule at the end (nuance checks join their adversary's pack).
    pub fn add_rule(&mut self, rule: Rule) {
        self.rules.push(rule);
        self.prefilter = std::sync::OnceLock::new();
    }

    /// One automaton over all the rules' trigger literals, built once per
    /// persona; `None` if `rules` was changed by hand since it was built
    /// (then the caller scans without it).
    pub fn prefilter(&self) -> Option<&TriggerPrefilter> {
        let p = self
            .prefilter
            .get_or_init(|| TriggerPrefilter::new(&self.rules));
        p.is_for(&self.rules).then_some(p)
    }

    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id() == id)
    }
}
