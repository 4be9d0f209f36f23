//! A stemmed phrase lexicon: safeguard synonyms ("a maximum duration" for a
//! TTL, "must finish within" for a deadline) matched over normalised tokens
//! with one Aho-Corasick automaton, so "expires after", "expiring after" and
//! "Expired  after" are the same phrase and a regex per inflection is not
//! needed. Matches map back to byte ranges of the original line, so the
//! evidence classifier (negated, deferred, affirmed) reads the real text.

use aho_corasick::{AhoCorasick, MatchKind};
use rust_stemmers::{Algorithm, Stemmer};
use std::ops::Range;
use std::sync::LazyLock;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// One token of a line: its stem and where the word sits in the line.
struct Token {
    stem: String,
    span: Range<usize>,
}

fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            let word = text[s..i].to_lowercase();
            out.push(Token {
                stem: STEMMER.stem(&word).into_owned(),
                span: s..i,
            });
        }
    }
    out
}

/// The normalised form of a phrase: its stems joined by single spaces.
pub fn normalise(text: &str) -> String {
    tokens(text)
        .into_iter()
        .map(|t| t.stem)
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Clone)]
pub struct Lexicon {
    /// The phrases as written (for the evidence's `matched` text).
    phrases: Vec<String>,
    automaton: Option<AhoCorasick>,
    /// The first letters of each phrase's first word, lowercased: a line
    /// holding none of them cannot match, so most lines are never stemmed.
    anchors: Option<AhoCorasick>,
}

impl Lexicon {
    pub fn new<S: AsRef<str>>(phrases: &[S]) -> Lexicon {
        let phrases: Vec<String> = phrases
            .iter()
            .map(|p| p.as_ref().trim().to_string())
            .filter(|p| !normalise(p).is_empty())
            .collect();
        // Each pattern is padded with spaces, so it only matches whole tokens.
        let patterns: Vec<String> = phrases
            .iter()
            .map(|p| format!(" {} ", normalise(p)))
            .collect();
        let automaton = (!patterns.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&patterns)
                .expect("phrase patterns are plain strings")
        });
        // A stem keeps at least the first three letters of its word.
        let anchors: Vec<String> = phrases
            .iter()
            .filter_map(|p| {
                let first = tokens(p).into_iter().next()?;
                Some(
                    p[first.span]
                        .to_lowercase()
                        .chars()
                        .take(3)
                        .collect::<String>(),
                )
            })
            .collect();
        let anchors = (!anchors.is_empty()).then(|| {
            AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&anchors)
                .expect("anchors are plain strings")
        });
        Lexicon {
            phrases,
            automaton,
            anchors,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
    }

    /// Every phrase found in `text`: byte range in `text`, and the phrase.
    pub fn find(&self, text: &str) -> Vec<(Range<usize>, &str)> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        if self.anchors.as_ref().is_some_and(|a| !a.is_match(text)) {
            return Vec::new();
        }
        let toks = tokens(text);
        if toks.is_empty() {
            return Vec::new();
        }
        // " s1 s2 s3 " with the offset of each token's first byte.
        let mut norm = String::from(" ");
        let mut starts = Vec::with_capacity(toks.len());
        for t in &toks {
            starts.push(norm.len());
            norm.push_str(&t.stem);
            norm.push(' ');
        }
        let token_at = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
        ac.find_iter(&norm)
            .map(|m| {
                let first = token_at(m.start() + 1);
                let last = token_at(m.end().saturating_sub(2));
                (
                    toks[first].span.start..toks[last].span.end,
                    self.phrases[m.pattern().as_usize()].as_str(),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_and_spacing_match_the_same_phrase() {
        let lex = Lexicon::new(&["expires after", "maximum duration"]);
        let text = "Links EXPIRING  after 10 minutes; sessions have a Maximum-Duration of 1 h.";
        let found = lex.find(text);
        assert_eq!(found.len(), 2);
        assert_eq!(&text[found[0].0.clone()], "EXPIRING  after");
        assert_eq!(found[0].1, "expires after");
        assert_eq!(&text[found[1].0.clone()], "Maximum-Duration");
    }

    #[test]
    fn only_whole_tokens_match() {
        let lex = Lexicon::new(&["deadline"]);
        assert!(lex.find("the deadlines are set").len() == 1);
        assert!(lex.find("a bdeadline token").is_empty());
        assert!(Lexicon::new::<&str>(&[]).find("deadline").is_empty());
    }
}
