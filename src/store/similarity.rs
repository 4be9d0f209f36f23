//! Deterministic text similarity between a new concern and a stored one, and
//! the inverted index that finds the best stored match quickly.
//!
//! Text is normalised into a set of terms: lowercased words, a few two-word
//! phrases joined ("rate limit" -> throttle), English stop words and the
//! boilerplate of concern phrasing ("no", "missing", "spec", "line 12")
//! removed, Snowball stems, and a small table of domain synonyms (verify /
//! check / validate, call / request, ...). Two term sets are compared with
//! the Jaccard index, halved when each side has a term the other lacks.
//!
//! Why halved: a substitution ("no timeout" vs "no retry", "billing API" vs
//! "currency API") is the shape of a different concern, while an extra term
//! on one side only is an elaboration of the same one. A wrong match hides a
//! real concern from the evaluators; a missed match only costs another
//! evaluation, so the measure errs towards not matching.
//!
//! The index keeps, per adversary, a posting list per term and each entry's
//! term count; a query counts overlaps into a dense array and scores only
//! entries that share at least `ceil(t|A|)` terms and pass the length
//! filter. Never touches files or the clock.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;

/// Similarity at or above which a stored entry answers a new concern.
pub const THRESHOLD: f64 = 0.6;

/// Adversary name whose entries match every adversary (reference files use it).
pub const GENERAL: &str = "general";

const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "cannot",
    "could",
    "couldn",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "either",
    "else",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "may",
    "me",
    "might",
    "more",
    "most",
    "must",
    "mustn",
    "my",
    "neither",
    "nor",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "per",
    "same",
    "shall",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "very",
    "via",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "won",
    "would",
    "wouldn",
    "you",
    "your",
    "s",
    "t",
    "d",
    "ll",
    "re",
    "ve",
    "m",
    "etc",
    "e",
    "g",
    "ie",
    "eg",
    // Negations and absence: every concern is about something missing, so
    // "no timeout" and "timeout is not set" say the same thing.
    "no",
    "not",
    "never",
    "none",
    "without",
    "lack",
    "lacks",
    "lacking",
    "missing",
    "absent",
    "unspecified",
    "undefined",
    "unclear",
    "nothing",
    // Concern boilerplate.
    "spec",
    "specification",
    "document",
    "doc",
    "design",
    "state",
    "states",
    "stated",
    "describe",
    "describes",
    "described",
    "mention",
    "mentions",
    "mentioned",
    "concern",
    "concerns",
    "issue",
    "issues",
    "problem",
    "problems",
    "there",
    "anywhere",
    "nowhere",
    "currently",
    "proper",
    "properly",
    "adequate",
    "adequately",
    "sufficient",
    "sufficiently",
    "explicit",
    "explicitly",
    "clear",
    "clearly",
    "defined",
    "define",
    "defines",
    "specified",
    "specify",
    "specifies",
    "set",
    "configured",
    "given",
    "used",
    "uses",
    "using",
];

/// Stems (after Snowball) that mean the same thing in concerns, mapped to one.
const SYNONYMS: &[(&str, &str)] = &[
    ("deadlin", "timeout"),
    ("hang", "timeout"),
    ("request", "call"),
    ("invoc", "call"),
    ("invok", "call"),
    ("reattempt", "retri"),
    ("retry", "retri"),
    ("ratelimit", "throttl"),
    ("verif", "verifi"),
    ("check", "verifi"),
    ("valid", "verifi"),
    ("sanit", "verifi"),
    ("sanitis", "verifi"),
    ("sanitiz", "verifi"),
    ("authn", "authent"),
    ("authz", "author"),
    ("authoris", "author"),
    ("authoriz", "author"),
    ("permiss", "author"),
    ("db", "databas"),
    ("config", "configur"),
    ("unlimit", "unbound"),
    ("cap", "limit"),
    ("ceil", "limit"),
    ("quota", "limit"),
    ("cipher", "encrypt"),
    ("unencrypt", "plaintext"),
    ("cleartext", "plaintext"),
    ("alarm", "alert"),
    ("page", "alert"),
    ("monitor", "alert"),
    ("idempot", "idempot"),
];

/// Two-word phrases joined before stemming.
const PHRASES: &[(&str, &str, &str)] = &[
    ("rate", "limit", "ratelimit"),
    ("rate", "limits", "ratelimit"),
    ("rate", "limiting", "ratelimit"),
    ("rate", "limited", "ratelimit"),
    ("time", "out", "timeout"),
    ("times", "out", "timeout"),
    ("timed", "out", "timeout"),
    ("plain", "text", "plaintext"),
    ("clear", "text", "plaintext"),
    ("back", "off", "backoff"),
    ("circuit", "breaker", "circuitbreak"),
    ("dead", "letter", "deadlett"),
    ("single", "point", "spof"),
];

/// Turns text into sorted, deduplicated terms. Keeps a stem cache, so
/// normalising many texts costs little more than hashing their words.
pub struct Normaliser {
    stemmer: Stemmer,
    cache: HashMap<String, Option<String>>,
}

impl Default for Normaliser {
    fn default() -> Self {
        Normaliser::new()
    }
}

impl Normaliser {
    pub fn new() -> Normaliser {
        Normaliser {
            stemmer: Stemmer::create(Algorithm::English),
            cache: HashMap::new(),
        }
    }

    /// The term set of `text`, sorted and unique.
    pub fn terms(&mut self, text: &str) -> Vec<String> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut out: Vec<String> = Vec::with_capacity(words.len());
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            if let Some(next) = words.get(i + 1)
                && let Some((_, _, joined)) = PHRASES.iter().find(|(a, b, _)| *a == w && b == next)
            {
                if let Some(t) = self.term(joined) {
                    out.push(t);
                }
                i += 2;
                continue;
            }
            // "line 12", "lines 3-4": positions shift with every edit.
            let after_line = i > 0 && matches!(words[i - 1], "line" | "lines" | "l");
            if w.chars().all(|c| c.is_ascii_digit()) && after_line {
                i += 1;
                continue;
            }
            if !matches!(w, "line" | "lines")
                && let Some(t) = self.term(w)
            {
                out.push(t);
            }
            i += 1;
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn term(&mut self, word: &str) -> Option<String> {
        if let Some(t) = self.cache.get(word) {
            return t.clone();
        }
        let t = if STOP_WORDS.contains(&word) {
            None
        } else {
            let stem = self.stemmer.stem(word);
            let stem = SYNONYMS
                .iter()
                .find(|(from, _)| *from == stem)
                .map(|(_, to)| to.to_string())
                .unwrap_or_else(|| stem.into_owned());
            Some(stem)
        };
        self.cache.insert(word.to_string(), t.clone());
        t
    }
}

/// Similarity of two sorted, deduplicated term sets (see the module docs).
pub fn score<T: Ord>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let inter = intersection(a, b);
    score_counts(a.len(), b.len(), inter)
}

fn score_counts(a: usize, b: usize, inter: usize) -> f64 {
    let union = a + b - inter;
    if union == 0 {
        return 0.0;
    }
    let j = inter as f64 / union as f64;
    if inter < a && inter < b { j * 0.5 } else { j }
}

fn intersection<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Similarity of two texts (normalising both).
pub fn similarity(a: &str, b: &str) -> f64 {
    let mut n = Normaliser::new();
    score(&n.terms(a), &n.terms(b))
}

/// What the index needs to know about one stored entry.
pub struct IndexItem<'a> {
    pub adversary: &'a str,
    pub pattern: &'a str,
    pub fingerprint: Option<&'a str>,
}

#[derive(Default)]
struct Partition {
    /// term id -> positions of the entries holding it, ascending.
    postings: HashMap<u32, Vec<u32>>,
    /// Position -> index into the entries the index was built from.
    entries: Vec<usize>,
    /// Position -> number of distinct terms of that entry.
    lens: Vec<u32>,
}

/// Inverted index over stored entries, by adversary.
pub struct Index {
    normaliser: Normaliser,
    dictionary: HashMap<String, u32>,
    partitions: HashMap<String, Partition>,
    fingerprints: HashMap<String, usize>,
    /// Overlap counters, one per position of the largest partition; all
    /// zero between queries.
    counts: Vec<u16>,
    touched: Vec<u32>,
}

/// The best stored entry for a concern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// Index into the entries the index was built from.
    pub entry: usize,
    pub similarity: f64,
}

impl Index {
    pub fn build<'a>(items: impl IntoIterator<Item = IndexItem<'a>>) -> Index {
        use rayon::prelude::*;
        let items: Vec<IndexItem<'a>> = items.into_iter().collect();
        // Normalising is the expensive part and independent per entry.
        let terms: Vec<Vec<String>> = items
            .par_iter()
            .with_min_len(1024)
            .map_init(Normaliser::new, |n, item| n.terms(item.pattern))
            .collect();
        let mut index = Index {
            normaliser: Normaliser::new(),
            dictionary: HashMap::new(),
            partitions: HashMap::new(),
            fingerprints: HashMap::new(),
            counts: Vec::new(),
            touched: Vec::new(),
        };
        for (i, (item, terms)) in items.into_iter().zip(terms).enumerate() {
            index.insert(i, item, terms);
        }
        let largest = index
            .partitions
            .values()
            .map(|p| p.entries.len())
            .max()
            .unwrap_or(0);
        index.counts = vec![0; largest];
        index
    }

    fn insert(&mut self, entry: usize, item: IndexItem<'_>, terms: Vec<String>) {
        if let Some(fp) = item.fingerprint.filter(|f| !f.is_empty()) {
            // Later entries win, like the newest explanation.
            self.fingerprints
                .insert(format!("{}\0{fp}", item.adversary), entry);
        }
        let part = self
            .partitions
            .entry(item.adversary.to_string())
            .or_default();
        let pos = part.entries.len() as u32;
        part.entries.push(entry);
        part.lens.push(terms.len() as u32);
        for t in terms {
            let next = self.dictionary.len() as u32;
            let id = *self.dictionary.entry(t).or_insert(next);
            part.postings.entry(id).or_default().push(pos);
        }
    }

    /// The stored entry that best answers a concern by `adversary` with this
    /// text and fingerprint: an identical fingerprint first (similarity 1),
    /// else the highest text similarity at or above `THRESHOLD` among the
    /// adversary's entries and the `general` ones. Ties go to the newest entry.
    ///
    /// Overlaps are counted by walking the postings of the concern's terms
    /// into a dense counter array (sequential reads, no per-candidate
    /// pointer chasing); only entries sharing enough terms to reach the
    /// threshold are scored.
    pub fn best(
        &mut self,
        adversary: &str,
        text: &str,
        fingerprint: Option<&str>,
    ) -> Option<Match> {
        self.best_in(&[adversary], text, fingerprint)
    }

    /// The best entry over several partitions (e.g. an adversary scoped to a
    /// spec, then the adversary unscoped); `general` entries always count.
    pub fn best_in(
        &mut self,
        partitions: &[&str],
        text: &str,
        fingerprint: Option<&str>,
    ) -> Option<Match> {
        if let Some(fp) = fingerprint.filter(|f| !f.is_empty()) {
            for name in partitions {
                if let Some(&entry) = self.fingerprints.get(&format!("{name}\0{fp}")) {
                    return Some(Match {
                        entry,
                        similarity: 1.0,
                    });
                }
            }
        }
        let terms = self.normaliser.terms(text);
        if terms.is_empty() {
            return None;
        }
        let known: Vec<u32> = terms
            .iter()
            .filter_map(|t| self.dictionary.get(t).copied())
            .collect();
        let a_len = terms.len();
        // Jaccard >= t needs |A n B| >= t|A| and t|A| <= |B| <= |A|/t.
        let min_overlap = ((THRESHOLD * a_len as f64) - 1e-9).ceil().max(1.0) as usize;
        if min_overlap > known.len() {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        let mut names: Vec<&str> = partitions.to_vec();
        if !names.contains(&GENERAL) {
            names.push(GENERAL);
        }
        for name in names {
            let Some(part) = self.partitions.get(name) else {
                continue;
            };
            for t in &known {
                if let Some(list) = part.postings.get(t) {
                    for &pos in list {
                        let c = &mut self.counts[pos as usize];
                        if *c == 0 {
                            self.touched.push(pos);
                        }
                        *c += 1;
                    }
                }
            }
            for &pos in &self.touched {
                let inter = std::mem::take(&mut self.counts[pos as usize]) as usize;
                if inter < min_overlap {
                    continue;
                }
                let b_len = part.lens[pos as usize] as usize;
                if (b_len as f64) < THRESHOLD * a_len as f64 - 1e-9
                    || (b_len as f64) > a_len as f64 / THRESHOLD + 1e-9
                {
                    continue;
                }
                let s = score_counts(a_len, b_len, inter);
                if s + 1e-12 < THRESHOLD {
                    continue;
                }
                let entry = part.entries[pos as usize];
                let better = match best {
                    None => true,
                    Some((bs, be)) => s > bs + 1e-12 || ((s - bs).abs() <= 1e-12 && entry > be),
                };
                if better {
                    best = Some((s, entry));
                }
            }
            self.touched.clear();
        }
        best.map(|(s, entry)| Match {
            entry,
            similarity: (s * 1e6).round() / 1e6,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn matches(a: &str, b: &str) {
        let s = similarity(a, b);
        assert!(s >= THRESHOLD, "expected a match ({s:.3}):\n  {a}\n  {b}");
    }

    #[track_caller]
    fn differs(a: &str, b: &str) {
        let s = similarity(a, b);
        assert!(s < THRESHOLD, "expected no match ({s:.3}):\n  {a}\n  {b}");
    }

    #[test]
    fn paraphrases_match() {
        // Reordered, with negation phrased differently.
        matches(
            "No timeout on calls to the Stripe API",
            "Calls to the Stripe API have no timeout",
        );
        // Synonyms: request/call, lacks/no.
        matches(
            "Stripe API requests lack a timeout",
            "No timeout on calls to the Stripe API",
        );
        // Elaboration on one side only.
        matches(
            "Stripe API calls have no timeout",
            "No timeout is configured for calls to the Stripe API",
        );
        // verify / check, plural / singular.
        matches(
            "Webhook signatures are not verified",
            "The webhook signature is never checked",
        );
        // "rate limiting" / "throttled", word forms.
        matches(
            "No rate limiting on the login endpoint",
            "Login endpoint is not throttled",
        );
        // "timed out" / "timeout", "hangs" / "timeout".
        matches(
            "The export job can hang on the warehouse query",
            "No timeout on the export job warehouse query",
        );
        // Boilerplate and line numbers are ignored.
        matches(
            "Line 47 (Design) describes the upload handler, but the spec does not state a size limit",
            "Upload handler has no size limit (line 12)",
        );
        // Case and punctuation.
        matches(
            "PASSWORDS stored in plain-text!",
            "Passwords are stored in plain text",
        );
    }

    #[test]
    fn near_misses_do_not_match() {
        // Same component, different failure mode.
        differs(
            "No timeout on calls to the Stripe API",
            "No retry on calls to the Stripe API",
        );
        // Same failure mode, different component.
        differs(
            "No timeout on calls to the billing API",
            "No timeout on calls to the currency API",
        );
        differs(
            "Webhook signatures are not verified",
            "Webhook payloads are not encrypted",
        );
        differs(
            "Uploaded files are not size limited",
            "Uploaded files are not scanned for malware",
        );
        // A generic explanation does not answer a specific concern.
        differs(
            "No timeout on calls",
            "No timeout on calls to the billing API from the export worker",
        );
        // Same words, different subject.
        differs(
            "Passwords are stored in plain text",
            "API keys are logged in plain text",
        );
        // Long titles that differ in one word only.
        differs(
            "Nightly export worker retries failed billing API calls without exponential backoff",
            "Nightly export worker retries failed currency API calls without exponential backoff",
        );
    }

    #[test]
    fn score_is_symmetric_and_bounded() {
        let a = ["a", "b", "c"];
        let b = ["b", "c", "d", "e"];
        assert_eq!(score(&a, &b), score(&b, &a));
        assert_eq!(score(&a, &a), 1.0);
        // 2 shared of 5, both sides have extra terms: 0.4 halved.
        assert_eq!(score(&a, &b), 0.2);
        // Subset: 3 of 4, no penalty.
        assert_eq!(score(&a, &["a", "b", "c", "d"]), 0.75);
        let empty: [&str; 0] = [];
        assert_eq!(score(&a, &empty), 0.0);
    }

    fn item<'a>(adversary: &'a str, pattern: &'a str) -> IndexItem<'a> {
        IndexItem {
            adversary,
            pattern,
            fingerprint: None,
        }
    }

    #[test]
    fn index_finds_best_match_of_same_adversary() {
        let mut idx = Index::build([
            item("burned_oncall", "No retry on calls to the Stripe API"),
            item("burned_oncall", "No timeout on calls to the Stripe API"),
            item("paranoid_security", "Stripe API calls have no timeout"),
            item("general", "Webhook signatures are not verified"),
        ]);
        let m = idx
            .best(
                "burned_oncall",
                "Calls to the Stripe API have no timeout",
                None,
            )
            .unwrap();
        assert_eq!(m.entry, 1);
        assert_eq!(m.similarity, 1.0);
        // Another adversary's entry is not used...
        assert!(
            idx.best("lazy_developer", "Stripe API calls have no timeout", None)
                .is_none()
        );
        // ...but a general one is.
        let m = idx
            .best("lazy_developer", "webhook signature never checked", None)
            .unwrap();
        assert_eq!(m.entry, 3);
        assert!(
            idx.best("burned_oncall", "No alerting on the nightly job", None)
                .is_none()
        );
    }

    #[test]
    fn index_prefers_identical_fingerprint() {
        let mut idx = Index::build([
            item("x", "something entirely different"),
            IndexItem {
                adversary: "x",
                pattern: "zzz",
                fingerprint: Some("abc"),
            },
        ]);
        let m = idx
            .best("x", "something entirely different", Some("abc"))
            .unwrap();
        assert_eq!(m.entry, 1);
        assert!(idx.best("y", "zzz", Some("abc")).is_none());
    }

    #[test]
    fn index_agrees_with_brute_force() {
        // Deterministic pseudo-random corpus over a small vocabulary.
        let vocab = [
            "timeout",
            "retry",
            "stripe",
            "billing",
            "webhook",
            "queue",
            "worker",
            "token",
            "signature",
            "upload",
            "export",
            "cache",
            "tenant",
            "invoice",
            "quota",
            "schema",
        ];
        let mut seed = 42u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let texts: Vec<String> = (0..400)
            .map(|_| {
                let n = 2 + next() % 4;
                (0..n)
                    .map(|_| vocab[next() % vocab.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let mut idx = Index::build(texts.iter().map(|t| item("a", t)));
        let mut norm = Normaliser::new();
        let terms: Vec<Vec<String>> = texts.iter().map(|t| norm.terms(t)).collect();
        for q in 0..60 {
            let n = 2 + next() % 4;
            let query: String = (0..n)
                .map(|_| vocab[next() % vocab.len()])
                .collect::<Vec<_>>()
                .join(" ");
            let qt = norm.terms(&query);
            let brute = terms
                .iter()
                .enumerate()
                .map(|(i, t)| (score(&qt, t), i))
                .filter(|(s, _)| *s >= THRESHOLD)
                .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
            let got = idx.best("a", &query, None);
            assert_eq!(
                got.map(|m| m.entry),
                brute.map(|b| b.1),
                "query {q}: {query}"
            );
        }
    }
}
