//! What a line talks about: the components it names (proper nouns, backticked
//! identifiers, endpoints). Used to check that a dismissal's evidence is about
//! the same thing as the concern.

use regex::Regex;
use std::sync::LazyLock;

static BACKTICK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`]{2,60})`").unwrap());
static PROPER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Z][a-zA-Z0-9]*(?:[A-Z0-9][a-zA-Z0-9]*)*)\b").unwrap());
static ENDPOINT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:GET|POST|PUT|PATCH|DELETE)\s+(/\S+)").unwrap());

/// Capitalised words that are not component names.
const COMMON: &[&str] = &[
    "a",
    "an",
    "the",
    "we",
    "our",
    "it",
    "its",
    "if",
    "when",
    "on",
    "in",
    "at",
    "to",
    "for",
    "each",
    "every",
    "all",
    "any",
    "this",
    "that",
    "these",
    "those",
    "there",
    "then",
    "they",
    "and",
    "or",
    "but",
    "no",
    "not",
    "yes",
    "with",
    "without",
    "after",
    "before",
    "during",
    "api",
    "apis",
    "http",
    "https",
    "json",
    "url",
    "urls",
    "ui",
    "id",
    "ids",
    "sql",
    "tls",
    "ms",
    "s",
    "gb",
    "mb",
    "kb",
    "tb",
    "p95",
    "p99",
    "utc",
    "v1",
    "v2",
    "ok",
    "status",
    "owner",
    "draft",
    "reviewers",
    "goals",
    "design",
    "context",
    "note",
    "notes",
    "open",
    "one",
    "two",
    "three",
    "new",
    "existing",
    "as",
    "by",
    "from",
    "is",
    "are",
    "be",
    "will",
    "can",
    "should",
    "must",
    "may",
    "only",
    "also",
    "so",
    "per",
    "up",
    "out",
    "of",
    "how",
    "what",
    "why",
    "who",
    "which",
    "where",
    "users",
    "user",
    "customers",
    "customer",
];

/// Component-like names on a line, lowercased, deduplicated, in order.
pub fn components(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim().to_lowercase();
        if s.len() >= 2 && !COMMON.contains(&s.as_str()) && !out.contains(&s) {
            out.push(s);
        }
    };
    for c in BACKTICK.captures_iter(text) {
        push(&c[1]);
    }
    for c in ENDPOINT.captures_iter(text) {
        push(&c[1]);
    }
    // Skip the first word of the line and of each sentence: capitalised by grammar.
    for m in PROPER.find_iter(text) {
        let before = text[..m.start()].trim_end();
        let sentence_start = before.is_empty()
            || before.ends_with(['.', '!', '?', ':', '-', '*', '|', '#', '>'])
            || before.chars().last().is_some_and(|c| c.is_ascii_digit());
        let word = m.as_str();
        let inner_caps = word
            .chars()
            .skip(1)
            .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
        if sentence_start && !inner_caps {
            continue;
        }
        push(word);
    }
    out
}

/// Does `text` mention any of `terms` (lowercased)?
pub fn mentions_any(text: &str, terms: &[String]) -> bool {
    let lower = text.to_lowercase();
    terms
        .iter()
        .any(|t| !t.is_empty() && lower.contains(t.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_proper_nouns_identifiers_and_endpoints() {
        let c = components(
            "The receiver writes to Postgres and publishes `OrderStatusChanged` via POST /events to Kafka.",
        );
        assert!(c.contains(&"postgres".to_string()), "{c:?}");
        assert!(c.contains(&"kafka".to_string()));
        assert!(c.contains(&"orderstatuschanged".to_string()));
        assert!(c.contains(&"/events".to_string()));
        assert!(!c.contains(&"the".to_string()));
    }

    #[test]
    fn sentence_initial_words_are_not_components() {
        let c = components("Retries happen. Uploads go to S3.");
        assert_eq!(c, vec!["s3".to_string()]);
    }
}
