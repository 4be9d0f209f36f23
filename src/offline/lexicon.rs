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

/// The word spans of `text`: maximal runs of alphanumeric characters.
fn spans(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = None;
    text.char_indices()
        .chain(std::iter::once((text.len(), ' ')))
        .filter_map(move |(i, c)| {
            if c.is_alphanumeric() {
                start.get_or_insert(i);
                None
            } else {
                start.take().map(|s| s..i)
            }
        })
}

/// Words memoised to their stems: a spec repeats its words, and the
/// evaluators read the same lines once per rule, so stemming each distinct
/// word once is most of the saving. Bounded so a hostile input cannot grow
/// it without limit (clearing only costs re-stemming).
const STEM_CACHE_CAP: usize = 200_000;

thread_local! {
    static STEMS: std::cell::RefCell<std::collections::HashMap<Box<str>, Box<str>>> =
        Default::default();
}

/// Calls `f` with the stem and the span of each token of `text`, in order.
fn for_each_stem(text: &str, mut f: impl FnMut(&str, Range<usize>)) {
    STEMS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let mut word = String::new();
        for span in spans(text) {
            let raw = &text[span.clone()];
            word.clear();
            if raw.is_ascii() {
                word.push_str(raw);
                word.make_ascii_lowercase();
            } else {
                word.push_str(&raw.to_lowercase());
            }
            if let Some(stem) = cache.get(word.as_str()) {
                f(stem, span);
                continue;
            }
            let stem: Box<str> = STEMMER.stem(&word).into();
            f(&stem, span);
            if cache.len() >= STEM_CACHE_CAP {
                cache.clear();
            }
            cache.insert(word.as_str().into(), stem);
        }
    })
}

/// The normalised form of a phrase: its stems joined by single spaces.
pub fn normalise(text: &str) -> String {
    let mut out = String::new();
    let mut first = true;
    for_each_stem(text, |stem, _| {
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(stem);
    });
    out
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
                let first = spans(p).next()?;
                Some(p[first].to_lowercase().chars().take(3).collect::<String>())
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
        // " s1 s2 s3 " with the offset of each token's first byte, and
        // each token's span in `text`.
        // Sized up front: a stem is never longer than its word, and each
        // token adds one space (growing these was a tenth of a large run).
        let mut norm = String::with_capacity(text.len() + text.len() / 2 + 2);
        norm.push(' ');
        let mut starts = Vec::with_capacity(text.len() / 3 + 1);
        let mut toks: Vec<Range<usize>> = Vec::with_capacity(text.len() / 3 + 1);
        for_each_stem(text, |stem, span| {
            starts.push(norm.len());
            norm.push_str(stem);
            norm.push(' ');
            toks.push(span);
        });
        if toks.is_empty() {
            return Vec::new();
        }
        let token_at = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
        ac.find_iter(&norm)
            .map(|m| {
                let first = token_at(m.start() + 1);
                let last = token_at(m.end().saturating_sub(2));
                (
                    toks[first].start..toks[last].end,
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
    fn memoised_stems_match_fresh_ones_whatever_the_case() {
        // Reference: a fresh stemmer on each Unicode-lowercased word.
        let fresh = |text: &str| {
            let stemmer = Stemmer::create(Algorithm::English);
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(|w| stemmer.stem(&w.to_lowercase()).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let text = "Expiring EXPIRED expires, Straße ÉTÉS ΟΔΟΣ retries-RETRYING";
        assert_eq!(fresh(text).split(' ').filter(|w| *w == "expir").count(), 3);
        // The first call stems and memoises; later calls read the memo.
        for _ in 0..2 {
            assert_eq!(normalise(text), fresh(text));
        }
        assert_eq!(normalise("  -- "), "");
    }

    #[test]
    fn only_whole_tokens_match() {
        let lex = Lexicon::new(&["deadline"]);
        assert!(lex.find("the deadlines are set").len() == 1);
        assert!(lex.find("a bdeadline token").is_empty());
        assert!(Lexicon::new::<&str>(&[]).find("deadline").is_empty());
    }
}
