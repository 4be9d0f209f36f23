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
}

/// A rule with its patterns compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    pub def: RuleDef,
    pub triggers: Vec<Regex>,
    pub exclude: Vec<Regex>,
    pub safeguards: Vec<Regex>,
    pub requires: Vec<Regex>,
}

/// Compile a data-file pattern: case-insensitive, with ASCII word semantics.
///
/// Rule patterns are English keywords; Unicode-aware `\b`, `\w` and `\d`
/// make each regex far more expensive to build and to run (the catalog took
/// ~100 ms to compile with them), so they are rewritten to their ASCII forms.
/// Literal non-ASCII characters in a pattern still match.
pub(crate) fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&asciify(pattern))
        .case_insensitive(true)
        .size_limit(1 << 22)
        .build()
}

fn asciify(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('b') if !in_class => out.push_str("(?-u:\\b)"),
                Some('B') if !in_class => out.push_str("(?-u:\\B)"),
                Some('w') => out.push_str(if in_class {
                    "A-Za-z0-9_"
                } else {
                    "[A-Za-z0-9_]"
                }),
                Some('d') => out.push_str(if in_class { "0-9" } else { "[0-9]" }),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().unwrap_or(']'));
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
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
        if def.triggers.is_empty() {
            return Err(format!("rule `{}` has no triggers", def.id));
        }
        Ok(Rule {
            triggers: all(&def.triggers)?,
            exclude: all(&def.exclude)?,
            safeguards: all(&def.safeguards)?,
            requires: all(&def.requires)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_word_semantics() {
        assert_eq!(asciify(r"\bfoo\w+\d"), r"(?-u:\b)foo[A-Za-z0-9_]+[0-9]");
        assert_eq!(asciify(r"[^\w.]"), r"[^A-Za-z0-9_.]");
        assert_eq!(asciify(r"a\.b"), r"a\.b");
        let r = compile(r"\brate[- ]limit\w*").unwrap();
        assert!(r.is_match("Requests are Rate-Limited per key"));
        assert!(!r.is_match("accelerate limits"));
        assert!(compile("≤|≥").unwrap().is_match("x ≤ 3"));
        // Word boundaries are ASCII: a non-ASCII letter is not a word character.
        assert!(compile(r"\bcaf").unwrap().is_match("the café is"));
    }
}
