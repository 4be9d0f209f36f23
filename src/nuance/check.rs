//! Offline nuance checks: a nuance may carry a persona rule (the same
//! trigger / safeguard machinery as `personas/*.toml`, used through
//! `rule::Rule`) that fires when a spec uses the technology the way the
//! nuance warns about and does not handle it. The shipped checks live in
//! `nuances/checks.toml`; each names the nuance it cites by a phrase of its
//! bullet, and the adversary whose voice raises it.

use super::{Citation, NuanceSet};
use crate::catalog::Catalog;
use crate::error::DataError;
use crate::rule::{Rule, RuleDef};
use serde::Deserialize;

/// Rule ids of nuance checks start with this.
pub const RULE_PREFIX: &str = "nuance-";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChecksFile {
    check: Vec<CheckDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckDef {
    technology: String,
    /// A phrase of the cited bullet (case-insensitive); it must match
    /// exactly one nuance of the technology.
    cites: String,
    /// The adversary who raises the concern.
    adversary: String,
    rule: RuleDef,
}

/// A check ready to be added to a persona's rules.
#[derive(Debug, Clone)]
pub struct NuanceCheck {
    pub adversary: String,
    pub citation: Citation,
    pub def: RuleDef,
}

impl NuanceCheck {
    pub fn rule_id(&self) -> &str {
        &self.def.id
    }
}

fn escape_identifier(id: &str) -> String {
    let mut p = regex::escape(id);
    if id.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        p = format!(r"\b{p}");
    }
    if id.ends_with(|c: char| c.is_ascii_alphanumeric()) {
        p.push_str(r"\b");
    }
    p
}

/// Parses and validates checks against the loaded technologies.
pub fn parse(file: &str, text: &str, set: &NuanceSet) -> Result<Vec<NuanceCheck>, DataError> {
    let f: ChecksFile = toml::from_str(text).map_err(|e| DataError::Invalid {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let invalid = |message: String| DataError::Invalid {
        file: file.to_string(),
        message,
    };
    let mut out: Vec<NuanceCheck> = Vec::new();
    for c in f.check {
        let id = &c.rule.id;
        if !id.starts_with(RULE_PREFIX) {
            return Err(invalid(format!(
                "check `{id}`: ids start with `{RULE_PREFIX}`"
            )));
        }
        if out.iter().any(|o| o.def.id == *id) {
            return Err(invalid(format!("duplicate check id `{id}`")));
        }
        let t = set
            .technology(&c.technology)
            .ok_or_else(|| invalid(format!("check `{id}`: no technology `{}`", c.technology)))?;
        let phrase = c.cites.to_lowercase();
        let cited: Vec<_> = t
            .nuances
            .iter()
            .filter(|n| n.text.to_lowercase().contains(&phrase))
            .collect();
        let [n] = cited[..] else {
            return Err(invalid(format!(
                "check `{id}`: `{}` matches {} nuances of {} (it must match exactly one)",
                c.cites,
                cited.len(),
                t.name
            )));
        };
        let mut def = c.rule;
        if def.requires.is_empty() {
            // Only where the spec uses the technology.
            def.requires = super::detect::identifiers(t)
                .iter()
                .map(|i| escape_identifier(i))
                .collect();
        }
        out.push(NuanceCheck {
            adversary: c.adversary,
            citation: Citation {
                technology: t.name.clone(),
                nuance: n.text.clone(),
                source: n.source.clone(),
                line: n.line,
            },
            def,
        });
    }
    Ok(out)
}

/// The shipped checks, validated against the loaded set.
pub fn load_builtin(set: &NuanceSet) -> Result<Vec<NuanceCheck>, DataError> {
    let (file, text) = super::builtin::CHECKS;
    // Checks cite built-in nuances; without their technology loaded
    // (impossible unless the set was built by hand) there is nothing to check.
    parse(file, text, set)
}

/// Adds each check as a rule of its adversary, so the offline attacker
/// raises it, the offline evaluators judge it and `explain` shows it like
/// any persona rule.
pub fn extend_catalog(catalog: &mut Catalog, set: &NuanceSet) -> Result<(), DataError> {
    let file = super::builtin::CHECKS.0;
    for c in &set.checks {
        let persona = catalog
            .personas
            .get_mut(&c.adversary)
            .filter(|p| !p.is_final_boss)
            .ok_or_else(|| DataError::Invalid {
                file: file.to_string(),
                message: format!("check `{}`: no adversary `{}`", c.def.id, c.adversary),
            })?;
        if persona.rules.iter().any(|r| r.id() == c.def.id) {
            // A persona file overriding the built-in may already define it.
            continue;
        }
        // Only the shipped checks exist (`load_builtin`); tests compile them.
        let rule = Rule::compile_embedded(c.def.clone()).map_err(|message| DataError::Invalid {
            file: file.to_string(),
            message,
        })?;
        persona.add_rule(rule);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> NuanceSet {
        let mut s = NuanceSet::default();
        s.merge(
            crate::nuance::parse::parse(
                "t.md",
                "## Redis\n- Keys expire silently.\n- Keys are strings.\n",
            )
            .unwrap(),
        );
        s
    }

    fn check(technology: &str, cites: &str, id: &str) -> String {
        format!(
            "[[check]]\ntechnology = \"{technology}\"\ncites = \"{cites}\"\nadversary = \"burned_oncall\"\n[check.rule]\nid = \"{id}\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = ['x']\nmissing = \"m\"\nimpact = \"i\"\n"
        )
    }

    #[test]
    fn a_check_cites_exactly_one_nuance_and_defaults_requires_to_the_identifiers() {
        let c = parse("c.toml", &check("redis", "EXPIRE", "nuance-a"), &set()).unwrap();
        assert_eq!(c[0].citation.nuance, "Keys expire silently.");
        assert_eq!(c[0].citation.source, "t.md");
        assert_eq!(c[0].citation.line, 2);
        assert!(
            c[0].def.requires.iter().any(|r| r == r"\bredis\b"),
            "{:?}",
            c[0].def.requires
        );
        let err = parse("c.toml", &check("Redis", "Keys", "nuance-a"), &set())
            .unwrap_err()
            .to_string();
        assert!(err.contains("matches 2 nuances"), "{err}");
        let err = parse("c.toml", &check("Mongo", "x", "nuance-a"), &set())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no technology `Mongo`"), "{err}");
        let err = parse("c.toml", &check("Redis", "expire", "redis-a"), &set())
            .unwrap_err()
            .to_string();
        assert!(err.contains("ids start with `nuance-`"), "{err}");
    }

    #[test]
    fn identifiers_get_word_boundaries_only_on_word_sides() {
        assert_eq!(escape_identifier("redis"), r"\bredis\b");
        assert_eq!(escape_identifier("pg_"), r"\bpg_");
        assert_eq!(escape_identifier("s3://"), r"\bs3://");
        assert_eq!(escape_identifier(".proto"), r"\.proto\b");
    }
}
