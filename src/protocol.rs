//! A persona's response protocol: what counts as a valid dismissal of its
//! concerns. Model evaluators get the text; the offline strict evaluator uses
//! the `[offline]` part.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Protocol {
    pub name: String,
    #[serde(default)]
    pub valid_dismissal: String,
    #[serde(default)]
    pub invalid_dismissal: String,
    #[serde(default)]
    pub valid_acceptance: String,
    pub rule: String,
    #[serde(default)]
    pub offline: OfflineProtocol,
}

/// How the offline strict evaluator applies the protocol.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OfflineProtocol {
    /// Evidence sentences containing one of these are not valid dismissals
    /// ("unlikely", "later", ...).
    #[serde(default)]
    pub invalid_phrases: Vec<String>,
    /// A dismissal must also show one of these near the evidence (e.g. a
    /// justification for complexity: "because", "required").
    #[serde(default)]
    pub require_justification: Vec<String>,
    /// Safeguards phrased differently from the rule packs' patterns, for the
    /// evaluators (see `Synonyms`).
    #[serde(default)]
    pub synonyms: Vec<Synonyms>,
    /// How many lines around the concern the strict evaluator searches.
    #[serde(default = "default_window")]
    pub window: usize,
    /// `invalid_phrases`, compiled when the catalog loads.
    #[serde(skip)]
    pub invalid_re: Vec<crate::rule::Regex>,
    /// `require_justification`, compiled when the catalog loads.
    #[serde(skip)]
    pub justification_re: Vec<crate::rule::Regex>,
}

/// A group of safeguard phrasings that an evaluator credits as well as the
/// rule's own patterns ("a maximum duration" for a TTL). The group applies
/// to every rule whose `missing` text (what the concern asks for) contains
/// one of `about`, so it follows the meaning of a rule, not its id.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Synonyms {
    /// Lowercase words of a rule's `missing` text that select this group.
    pub about: Vec<String>,
    /// Phrases, matched as stemmed whole tokens (`offline::lexicon`).
    pub phrases: Vec<String>,
    #[serde(skip)]
    lexicon: std::sync::OnceLock<crate::offline::lexicon::Lexicon>,
}

impl Synonyms {
    pub fn applies_to(&self, missing: &str) -> bool {
        let m = missing.to_lowercase();
        self.about.iter().any(|a| m.contains(a.as_str()))
    }

    /// The phrases compiled, on first use.
    pub fn lexicon(&self) -> &crate::offline::lexicon::Lexicon {
        self.lexicon
            .get_or_init(|| crate::offline::lexicon::Lexicon::new(&self.phrases))
    }
}

impl OfflineProtocol {
    /// The synonym lexicons for a rule that asks for `missing`.
    pub fn synonyms_for(&self, missing: &str) -> Vec<&crate::offline::lexicon::Lexicon> {
        self.synonyms
            .iter()
            .filter(|s| s.applies_to(missing))
            .map(Synonyms::lexicon)
            .collect()
    }
}

fn default_window() -> usize {
    3
}

impl Protocol {
    /// The protocol as prompt text for model evaluators.
    pub fn as_prompt(&self) -> String {
        let mut s = format!("Response protocol for {}:\n", self.name);
        for (label, text) in [
            ("Valid dismissal", &self.valid_dismissal),
            ("Invalid dismissal", &self.invalid_dismissal),
            ("Valid acceptance", &self.valid_acceptance),
        ] {
            if !text.trim().is_empty() {
                s.push_str(&format!("{label}:\n{}\n", text.trim()));
            }
        }
        s.push_str(&format!("Rule: {}\n", self.rule.trim()));
        s
    }
}
