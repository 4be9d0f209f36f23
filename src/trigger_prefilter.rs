//! One pass over a spec's lines that tells, for every rule of a pack, which
//! lines its triggers could match at all.
//!
//! Each rule knows literals one of which every trigger match contains
//! (`Rule::trigger_literals`, read from the patterns' syntax). All of a
//! pack's literals go into one Aho-Corasick automaton; a line is a
//! candidate for a rule when one of the rule's literals occurs in it. The
//! attacker then runs the rule's regexes on its candidate lines only,
//! instead of every regex on every line: the same matches, since a line
//! without any of the literals cannot match. Rules without literals (and
//! rules run by a built-in check) have every line as a candidate.
//!
//! Linear in the text: matches are reported overlapping (a literal inside
//! another one's match must not be missed), and at one position at most as
//! many literals end as the pack has, a bound that does not grow with the
//! input.

use crate::rule::Rule;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

#[derive(Debug, Clone)]
pub struct TriggerPrefilter {
    ac: Option<AhoCorasick>,
    /// Per automaton pattern: the rules (indices) whose literal it is.
    owners: Vec<Vec<usize>>,
    /// Per rule: whether its candidates are filtered at all.
    filtered: Vec<bool>,
    /// The ids of the rules it was built for, in order.
    ids: Vec<String>,
}

impl TriggerPrefilter {
    pub fn new(rules: &[Rule]) -> TriggerPrefilter {
        let mut literals: Vec<&[u8]> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut index: std::collections::HashMap<&[u8], usize> = Default::default();
        let mut filtered = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            let lits = match (&rule.trigger_literals, rule.def.check) {
                (Some(l), None) => l,
                _ => {
                    filtered.push(false);
                    continue;
                }
            };
            filtered.push(true);
            for l in lits {
                let k = *index.entry(l.as_slice()).or_insert_with(|| {
                    literals.push(l);
                    owners.push(Vec::new());
                    literals.len() - 1
                });
                owners[k].push(i);
            }
        }
        let ac = if literals.is_empty() {
            None
        } else {
            // Standard semantics: the only ones that report overlapping
            // matches. A build error (never for plain literals) leaves every
            // rule unfiltered rather than skipping lines.
            // A contiguous NFA: a DFA over a few thousand states costs
            // more to build than one spec's scan saves.
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .match_kind(MatchKind::Standard)
                .build(&literals)
                .ok()
        };
        if ac.is_none() {
            filtered.iter_mut().for_each(|f| *f = false);
        }
        TriggerPrefilter {
            ac,
            owners,
            filtered,
            ids: rules.iter().map(|r| r.id().to_string()).collect(),
        }
    }

    /// Whether it was built for exactly these rules, in this order.
    pub fn is_for(&self, rules: &[Rule]) -> bool {
        self.ids.len() == rules.len() && self.ids.iter().zip(rules).all(|(id, r)| id == r.id())
    }

    /// Per rule, in the rules' order: the indices (ascending) of the texts
    /// that may hold a match of its triggers, or `None` when any may.
    pub fn candidates<'t>(
        &self,
        texts: impl IntoIterator<Item = &'t str>,
    ) -> Vec<Option<Vec<usize>>> {
        let mut out: Vec<Option<Vec<usize>>> =
            self.filtered.iter().map(|&f| f.then(Vec::new)).collect();
        let Some(ac) = &self.ac else {
            return out;
        };
        for (n, text) in texts.into_iter().enumerate() {
            for m in ac.find_overlapping_iter(text.as_bytes()) {
                for &r in &self.owners[m.pattern().as_usize()] {
                    if let Some(lines) = &mut out[r]
                        && lines.last() != Some(&n)
                    {
                        lines.push(n);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use proptest::prelude::*;

    fn rule(triggers: &[&str]) -> Rule {
        let list = triggers
            .iter()
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(", ");
        Rule::compile(
            toml::from_str(&format!(
                "id = \"r{}\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = [{list}]\nmissing = \"m\"\nimpact = \"i\"\n",
                triggers.len()
            ))
            .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn literals_come_from_prefixes_or_suffixes_and_never_from_classes() {
        let r = rule(&[r"\bretr(?:y|ies)\b", r"\w+ Queue\b"]);
        let lits: Vec<&[u8]> = r
            .trigger_literals
            .as_ref()
            .unwrap()
            .iter()
            .map(|l| l.as_slice())
            .collect();
        // Lowercased like the compiled pattern; the suffix of the second.
        assert_eq!(lits, [&b" queue"[..], b"retries", b"retry"]);
        // Nothing fixed to look for: no filter.
        assert!(rule(&[r"\bcalls\b", r"\w+"]).trigger_literals.is_none());
        assert!(rule(&[r"a?"]).trigger_literals.is_none());
    }

    #[test]
    fn candidates_are_the_lines_holding_a_literal_and_unfiltered_rules_get_none() {
        let rules = [
            rule(&[r"\bretr(?:y|ies)\b"]),
            rule(&[r"\btime(?:out)?\b", r"\w+"]),
        ];
        let p = TriggerPrefilter::new(&rules);
        assert!(p.is_for(&rules));
        assert!(!p.is_for(&rules[..1]));
        let c = p.candidates(["no", "it retries", "retry, retry", "retr"]);
        assert_eq!(c, [Some(vec![1, 2]), None]);
    }

    /// Every built-in rule, nuance checks included.
    fn builtin_rules() -> Vec<Rule> {
        let mut cat = Catalog::builtin().unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        crate::nuance::check::extend_catalog(&mut cat, &set).unwrap();
        cat.personas.into_values().flat_map(|p| p.rules).collect()
    }

    #[test]
    fn most_builtin_rules_are_filtered() {
        let rules = builtin_rules();
        let p = TriggerPrefilter::new(&rules);
        let filtered = p.filtered.iter().filter(|f| **f).count();
        let checks = rules.iter().filter(|r| r.def.check.is_some()).count();
        // Not a speed test: a regression in literal extraction (every
        // rule back on the slow path) would still give the same verdicts.
        assert!(
            filtered * 10 >= (rules.len() - checks) * 9,
            "{filtered} of {} rules filtered",
            rules.len() - checks
        );
    }

    /// Words the rules look for, and ones that are near misses, so that
    /// generated lines often hold matches.
    fn vocabulary(rules: &[Rule]) -> Vec<String> {
        let mut words: Vec<String> = rules
            .iter()
            .filter_map(|r| r.trigger_literals.as_ref())
            .flatten()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        words.sort();
        words.dedup();
        words.extend(
            [
                "the", "a", "to", "api", "service", "calls", " ", ".", "-", "`", "é", "ß", "İ",
                "K", "日本", "\u{200b}", "CALLS", "Retries", "TimeOut", "x.y", "5", "gb",
                "per day",
            ]
            .map(String::from),
        );
        words
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The prefilter never drops a line the rule's own regexes match:
        /// lines built from the rules' words, their case variants,
        /// non-ASCII text and random characters.
        #[test]
        fn never_skips_a_line_the_triggers_match(
            picks in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..24),
        ) {
            static RULES: std::sync::LazyLock<(Vec<Rule>, Vec<String>)> =
                std::sync::LazyLock::new(|| {
                    let rules = builtin_rules();
                    let words = vocabulary(&rules);
                    (rules, words)
                });
            let (rules, words) = &*RULES;
            let mut line = String::new();
            for (i, how, c) in picks {
                let w = i.get(words);
                match how {
                    0 => line.push_str(w),
                    1 => line.push_str(&w.to_uppercase()),
                    2 => { line.push_str(w); line.push(' '); }
                    _ => { line.push(c); line.push_str(w); }
                }
            }
            let lower = line.to_ascii_lowercase();
            let prefilter = TriggerPrefilter::new(rules);
            let texts = [line.as_str(), lower.as_str()];
            let found = prefilter.candidates(texts);
            for (rule, cand) in rules.iter().zip(&found) {
                for (n, text) in texts.iter().enumerate() {
                    if rule.triggers.iter().any(|r| r.is_match(text.as_bytes())) {
                        prop_assert!(
                            cand.as_ref().is_none_or(|c| c.contains(&n)),
                            "rule {} matches {:?} but the prefilter skips it", rule.id(), text
                        );
                    }
                }
            }
        }
    }
}
