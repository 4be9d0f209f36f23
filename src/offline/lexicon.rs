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
    static STEMS: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Box<str>>> =
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
        if !self.may_match(text) {
            return Vec::new();
        }
        self.find_normalised(&Normalised::of(text))
    }

    /// Whether `text` may hold a phrase: it holds the first letters of one
    /// (most lines do not, and are never stemmed).
    pub fn may_match(&self, text: &str) -> bool {
        self.automaton.is_some() && self.anchors.as_ref().is_none_or(|a| a.is_match(text))
    }

    /// `find` on a text already normalised (`Normalised::of`).
    pub fn find_normalised(&self, n: &Normalised) -> Vec<(Range<usize>, &str)> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        if n.spans.is_empty() {
            return Vec::new();
        }
        let token_at = |offset: usize| {
            n.starts
                .partition_point(|&s| s as usize <= offset)
                .saturating_sub(1)
        };
        ac.find_iter(&n.norm)
            .map(|m| {
                let first = token_at(m.start() + 1);
                let last = token_at(m.end().saturating_sub(2));
                (
                    n.spans[first].0 as usize..n.spans[last].1 as usize,
                    self.phrases[m.pattern().as_usize()].as_str(),
                )
            })
            .collect()
    }
}

/// A text in normalised form: " s1 s2 s3 ", with the offset of each
/// token's first byte in it and each token's span in the text (offsets fit
/// in 32 bits: inputs are capped far below 4 GiB).
#[derive(Debug, Default)]
pub struct Normalised {
    norm: String,
    starts: Vec<u32>,
    spans: Vec<(u32, u32)>,
}

impl Normalised {
    pub fn of(text: &str) -> Normalised {
        // Sized up front: a stem is never longer than its word, and each
        // token adds one space (growing these was a tenth of a large run).
        let mut norm = String::with_capacity(text.len() + text.len() / 2 + 2);
        norm.push(' ');
        let mut starts = Vec::with_capacity(text.len() / 3 + 1);
        let mut spans = Vec::with_capacity(text.len() / 3 + 1);
        for_each_stem(text, |stem, span| {
            starts.push(norm.len() as u32);
            norm.push_str(stem);
            norm.push(' ');
            spans.push((span.start as u32, span.end as u32));
        });
        Normalised {
            norm,
            starts,
            spans,
        }
    }

    /// The stems, in order.
    pub fn stems(&self) -> impl Iterator<Item = &str> {
        self.norm.split(' ').filter(|s| !s.is_empty())
    }
}

/// Each line of a spec in normalised form, computed on first use and
/// shared by every thread: the evaluators read the same lines once per
/// rule, and on a large spec stemming them again was most of their time.
#[derive(Debug)]
pub struct SpecLines {
    lines: Vec<std::sync::OnceLock<Normalised>>,
}

impl SpecLines {
    /// Line `n` (1-based) of the spec, whose text is `text`.
    pub fn line(&self, n: usize, text: &str) -> &Normalised {
        match self.lines.get(n.wrapping_sub(1)) {
            Some(cell) => cell.get_or_init(|| Normalised::of(text)),
            None => unreachable_line(),
        }
    }
}

/// A line number outside the spec is a caller's bug; an empty form keeps
/// it from matching anything.
fn unreachable_line() -> &'static Normalised {
    static EMPTY: LazyLock<Normalised> = LazyLock::new(Normalised::default);
    &EMPTY
}

/// The normalised lines of the specs read most recently (a batch review
/// reads one spec per worker at a time).
static SPECS: crate::per_spec::PerSpec<SpecLines> = crate::per_spec::PerSpec::new(4);

/// The normalised lines of `spec` (see `SpecLines`), each computed when
/// first asked for.
pub fn spec_lines(spec: &crate::spec::Spec) -> std::sync::Arc<SpecLines> {
    SPECS.get(spec, || SpecLines {
        lines: (0..spec.lines.len()).map(|_| Default::default()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_line_normalised_once_finds_what_the_text_does() {
        let lex = Lexicon::new(&["expires after", "maximum duration", "time out"]);
        let text = "# T\n\nLinks EXPIRING  after 10 min.\n\nCalls time-out; a Maximum-Duration.\n\nNothing here.\n";
        let spec = crate::spec::Spec::parse(None, text.to_string());
        let lines = spec_lines(&spec);
        let mut found = 0;
        for (i, l) in spec.lines.iter().enumerate() {
            let cached = lex.find_normalised(lines.line(i + 1, &l.text));
            assert_eq!(cached, lex.find(&l.text), "line {}", i + 1);
            // Asked again, the same form.
            assert_eq!(lex.find_normalised(lines.line(i + 1, &l.text)), cached);
            found += cached.len();
        }
        assert_eq!(found, 3);
        let n = Normalised::of("Retries EXPIRED");
        let stems: Vec<&str> = n.stems().collect();
        assert_eq!(stems, ["retri", "expir"]);
    }

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
