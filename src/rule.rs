//! Offline rule: a design element (triggers) and the safeguards a persona
//! expects near it. Rules are data (in `personas/*.toml`); this module only
//! defines their shape and compiles their patterns.

use crate::concern::Severity;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;

/// Where an attacker looks for a safeguard before raising a concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The paragraph, list or table the design element is in (aggressive).
    #[default]
    Block,
    /// The section the design element is in.
    Section,
    /// The whole document.
    Document,
}

/// A rule as written in a persona file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub id: String,
    /// One-line title; `{subject}` is replaced by what the trigger matched.
    pub title: String,
    pub severity: Severity,
    /// Patterns (case-insensitive regex) that find the design element.
    pub triggers: Vec<String>,
    /// A trigger line that also matches one of these is not the design element.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Patterns for the safeguard that answers the concern.
    #[serde(default)]
    pub safeguards: Vec<String>,
    /// The whole document must also match one of these for the rule to apply.
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub scope: Scope,
    /// What is missing, in words ("a timeout on the call").
    pub missing: String,
    /// Why it matters.
    pub impact: String,
    /// Raise at most this many concerns for the rule in one spec.
    #[serde(default)]
    pub max: Option<usize>,
    /// Which kinds of line may trigger: prose, list, table, code, heading.
    #[serde(default)]
    pub in_kinds: Vec<String>,
    /// The trigger's block (paragraph, list, table) must also match one of
    /// these, e.g. a client timestamp only matters next to "ordered by".
    #[serde(default)]
    pub near: Vec<String>,
    /// A line of a Goals section must match one of these for the rule to
    /// apply; the concern cites that goal ("the design does not reach it").
    #[serde(default)]
    pub goals: Vec<String>,
    /// A built-in check run instead of (or besides) the trigger scan; see
    /// `offline::checks` and personas/README.md.
    #[serde(default)]
    pub check: Option<Check>,
    /// For `check = "two-of"`: names of interchangeable technologies; the
    /// rule fires when trigger lines name two different ones.
    #[serde(default)]
    pub distinct: Vec<String>,
}

/// Built-in checks that need more than a pattern: they compare numbers or
/// relate lines across the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Trigger lines name two different entries of `distinct`.
    TwoOf,
    /// Stored volume per day against a stated disk or storage capacity.
    Capacity,
    /// A scheduled job whose stated duration exceeds its interval.
    JobOverlap,
    /// A polling interval longer than a stated latency goal.
    PollingLatency,
    /// Service A calls B and B calls A, synchronously.
    CallCycle,
    /// "We never store X" in one place, X stored in another.
    Contradiction,
}

/// A rule with its patterns compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    pub def: RuleDef,
    pub triggers: Vec<Regex>,
    pub exclude: Vec<Regex>,
    pub safeguards: Vec<Regex>,
    pub requires: Vec<Regex>,
    pub near: Vec<Regex>,
    pub goals: Vec<Regex>,
    pub distinct: Vec<Regex>,
}

pub(crate) fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 22)
        .build()
}

impl Rule {
    pub fn compile(def: RuleDef) -> Result<Rule, String> {
        let all = |ps: &[String]| -> Result<Vec<Regex>, String> {
            ps.iter()
                .map(|p| {
                    compile(p).map_err(|e| format!("rule `{}`: bad pattern `{p}`: {e}", def.id))
                })
                .collect()
        };
        if def.triggers.is_empty() && def.check.is_none() {
            return Err(format!("rule `{}` has no triggers", def.id));
        }
        Ok(Rule {
            triggers: all(&def.triggers)?,
            exclude: all(&def.exclude)?,
            safeguards: all(&def.safeguards)?,
            requires: all(&def.requires)?,
            near: all(&def.near)?,
            goals: all(&def.goals)?,
            distinct: all(&def.distinct)?,
            def,
        })
    }

    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// The first trigger match on `text`, unless an exclusion matches.
    pub fn trigger<'t>(&self, text: &'t str) -> Option<regex::Match<'t>> {
        if self.exclude.iter().any(|r| r.is_match(text)) {
            return None;
        }
        self.triggers.iter().find_map(|r| r.find(text))
    }
}
