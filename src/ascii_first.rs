//! `AsciiFirst`: a Unicode-aware English pattern (`(?i)`, `\w`, `\b`,
//! `\s`) matched through a pattern compiled without Unicode when the text
//! is ASCII, which is almost every sentence of a spec. Unicode classes
//! under case folding make a pattern tens of times costlier to compile
//! (`[\w -]{1,40}` alone was a tenth of a run on a large spec), and the
//! Unicode compilation is only paid for on the first non-ASCII text.
//!
//! On ASCII text both compilations agree exactly, positions included: the
//! Unicode word, digit and space classes restricted to ASCII are the ASCII
//! ones, a word boundary between two ASCII characters is the same, and
//! case folding only adds non-ASCII characters (the Kelvin sign, the long
//! s) that ASCII text cannot hold. This must never change a match; it is
//! only for patterns whose literals are ASCII.
//!
//! A pattern made with `AsciiFirst::word_shaped` also answers `is_match` on
//! most non-ASCII text with its ASCII compilation, on the text's word shape
//! (see `word_shape`): one more reason to compile the Unicode form only
//! when a sentence holds a character the shape cannot stand for.

use regex::Regex;
use regex_automata::meta;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// A pattern compiled on first use, once for ASCII text and, only when
/// some text is not ASCII, once with Unicode (see the module docs).
pub struct AsciiFirst {
    pattern: &'static str,
    /// `is_match` reads non-ASCII text through its word shape.
    shaped: bool,
    ascii: OnceLock<meta::Regex>,
    unicode: OnceLock<Regex>,
}

impl AsciiFirst {
    pub const fn new(pattern: &'static str) -> AsciiFirst {
        AsciiFirst {
            pattern,
            shaped: false,
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
        }
    }

    /// `new`, with `is_match` on non-ASCII text read through the text's
    /// word shape when it has one (see `word_shape`). Only for a pattern in
    /// which everything that can match a non-ASCII character is a `+` or
    /// `*` repetition of one class (`\w+`, `\W*`, `[^"]*`) that the
    /// pattern never splits: no `\w` alone or counted (`[\w -]{1,40}`),
    /// no `\w+\w+`. A word of n bytes is then one run of n stand-ins,
    /// matched whole exactly where the word would be.
    pub const fn word_shaped(pattern: &'static str) -> AsciiFirst {
        AsciiFirst {
            pattern,
            shaped: true,
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
        }
    }

    /// As `regex::bytes::RegexBuilder::new(pattern).unicode(false)` builds
    /// it, without the literal prefilter: the texts are single sentences,
    /// too short for one to pay for its construction.
    fn ascii(&self) -> &meta::Regex {
        self.ascii.get_or_init(|| {
            meta::Builder::new()
                .configure(crate::rule::meta_config(10 * (1 << 20)))
                .syntax(
                    regex_automata::util::syntax::Config::new()
                        .unicode(false)
                        .utf8(false),
                )
                .build(self.pattern)
                .expect("static pattern")
        })
    }

    fn unicode(&self) -> &Regex {
        self.unicode
            .get_or_init(|| Regex::new(self.pattern).expect("static pattern"))
    }

    pub fn is_match(&self, text: &str) -> bool {
        if text.is_ascii() {
            return self.ascii().is_match(text.as_bytes());
        }
        if self.shaped
            && let Some(shape) = word_shape(text)
        {
            return self.ascii().is_match(shape.as_bytes());
        }
        self.unicode().is_match(text)
    }

    /// The first match's byte range.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        if text.is_ascii() {
            self.ascii().find(text.as_bytes()).map(|m| m.range())
        } else {
            self.unicode().find(text).map(|m| m.range())
        }
    }

    /// The first match's groups, as `Regex::captures` gives them.
    pub fn captures<'t>(&self, text: &'t str) -> Option<Groups<'t>> {
        if text.is_ascii() {
            let re = self.ascii();
            let mut caps = re.create_captures();
            re.captures(text.as_bytes(), &mut caps);
            caps.is_match().then(|| Groups::of_meta(text, &caps))
        } else {
            let c = self.unicode().captures(text)?;
            Some(Groups::of_regex(text, &c))
        }
    }

    /// Every successive non-overlapping match's groups, as
    /// `Regex::captures_iter` gives them.
    pub fn captures_iter<'t>(&self, text: &'t str) -> Vec<Groups<'t>> {
        if text.is_ascii() {
            self.ascii()
                .captures_iter(text.as_bytes())
                .map(|c| Groups::of_meta(text, &c))
                .collect()
        } else {
            self.unicode()
                .captures_iter(text)
                .map(|c| Groups::of_regex(text, &c))
                .collect()
        }
    }

    /// The last of the successive non-overlapping matches' byte ranges.
    pub fn find_last(&self, text: &str) -> Option<Range<usize>> {
        if text.is_ascii() {
            self.ascii()
                .find_iter(text.as_bytes())
                .last()
                .map(|m| m.range())
        } else {
            self.unicode().find_iter(text).last().map(|m| m.range())
        }
    }

    /// Every non-overlapping match replaced by `with`, as `Regex::replace_all`
    /// with a literal replacement.
    pub fn replace_all<'t>(&self, text: &'t str, with: &str) -> Cow<'t, str> {
        if text.is_ascii() {
            let mut matches = self.ascii().find_iter(text.as_bytes()).peekable();
            if matches.peek().is_none() {
                return Cow::Borrowed(text);
            }
            let mut out = String::with_capacity(text.len());
            let mut last = 0;
            for m in matches {
                out.push_str(&text[last..m.start()]);
                out.push_str(with);
                last = m.end();
            }
            out.push_str(&text[last..]);
            Cow::Owned(out)
        } else {
            self.unicode().replace_all(text, regex::NoExpand(with))
        }
    }
}

/// A match's groups (group 0 is the whole match), from either compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups<'t> {
    text: &'t str,
    spans: Vec<Option<Range<usize>>>,
}

/// One group of a match: where it is and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group<'t> {
    text: &'t str,
    range: Range<usize>,
}

impl<'t> Groups<'t> {
    fn of_meta(text: &'t str, caps: &regex_automata::util::captures::Captures) -> Groups<'t> {
        let spans = (0..caps.group_len())
            .map(|i| caps.get_group(i).map(|s| s.range()))
            .collect();
        Groups { text, spans }
    }

    fn of_regex(text: &'t str, caps: &regex::Captures<'_>) -> Groups<'t> {
        let spans = (0..caps.len())
            .map(|i| caps.get(i).map(|m| m.range()))
            .collect();
        Groups { text, spans }
    }

    /// Group `i`, if it took part in the match.
    pub fn get(&self, i: usize) -> Option<Group<'t>> {
        let range = self.spans.get(i)?.clone()?;
        Some(Group {
            text: self.text,
            range,
        })
    }
}

/// The text of group `i`; panics if it did not take part in the match, as
/// indexing `regex::Captures` does.
impl std::ops::Index<usize> for Groups<'_> {
    type Output = str;

    fn index(&self, i: usize) -> &str {
        match self.spans.get(i) {
            Some(Some(r)) => &self.text[r.clone()],
            _ => panic!("no group {i} in this match"),
        }
    }
}

impl<'t> Group<'t> {
    pub fn as_str(&self) -> &'t str {
        &self.text[self.range.clone()]
    }

    pub fn start(&self) -> usize {
        self.range.start
    }

    pub fn end(&self) -> usize {
        self.range.end
    }

    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }
}

/// `text` with each non-ASCII character replaced by as many ASCII bytes
/// (offsets are kept): `_` for a word character, `\x01` for any other.
/// For a pattern whose classes and literals are ASCII and never match `_`
/// or `\x01`, and whose only Unicode-aware items are word boundaries, its
/// ASCII compilation (`(?-u)`) finds on the result exactly the matches its
/// Unicode compilation finds on `text`: a boundary depends only on whether
/// the characters around it are word characters, and nothing else in the
/// pattern can match a non-ASCII character or its stand-in.
pub fn ascii_word_shape(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let stand_in = if regex_syntax::is_word_character(c) {
                '_'
            } else {
                '\x01'
            };
            (0..c.len_utf8()).for_each(|_| out.push(stand_in));
        }
    }
    Cow::Owned(out)
}

/// `ascii_word_shape` for the patterns of `AsciiFirst::word_shaped`, or
/// `None` when `text` holds a non-ASCII character whose stand-in could
/// match differently: a space (`\s`), a digit (`\d`), or a letter related
/// by case to an ASCII one (`(?i)k` matches the Kelvin sign).
fn word_shape(text: &str) -> Option<Cow<'_, str>> {
    let odd = |c: char| {
        !c.is_ascii()
            && (c.is_whitespace()
                || c.is_numeric()
                || c.to_lowercase().any(|l| l.is_ascii())
                || c.to_uppercase().any(|u| u.is_ascii()))
    };
    if text.chars().any(odd) {
        return None;
    }
    Some(ascii_word_shape(text))
}

/// Texts for checking a word-shaped pattern against its Unicode
/// compilation: words of the built-in patterns mixed with non-ASCII
/// letters, marks, punctuation, spaces, digits and case-related letters.
#[cfg(test)]
pub(crate) fn sample_texts() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    const TOKENS: &[&str] = &[
        "no",
        "not",
        "never",
        "is",
        "are",
        "will be",
        "get",
        "isn't",
        "missing",
        "every",
        "all",
        "call",
        "calls",
        "requests",
        "has",
        "must",
        "the",
        "existing",
        "current",
        "system",
        "like",
        "Like",
        "Stripe",
        "other",
        "systems",
        "protect",
        "from",
        "prevent",
        "customer",
        "users",
        "can",
        "then",
        "their",
        "a human",
        "today",
        "used to",
        "if we were to",
        "considered",
        "later",
        "tbd",
        "phase two",
        "but",
        "so",
        "and",
        "which",
        "when",
        "n't",
        "disabled",
        "not used",
        "é",
        "naïve",
        "café",
        "x̃",
        "—",
        "…",
        "“",
        "”",
        "’",
        "\u{a0}",
        "\u{2003}",
        "ſ",
        "\u{212a}",
        "İ",
        "٣",
        "é3",
        "\u{85}",
        " ",
        "  ",
        "-",
        ",",
        ".",
        ":",
        ";",
        "(",
        "`",
        "\"",
        "1.",
        "*",
        "\n",
        "_",
        "\t",
    ];
    proptest::collection::vec(proptest::sample::select(TOKENS), 0..14).prop_map(|t| t.concat())
}

impl AsciiFirst {
    /// Whether `is_match` agrees with the Unicode compilation on `text`.
    #[cfg(test)]
    pub(crate) fn agrees_on(&self, text: &str) -> bool {
        self.is_match(text) == self.unicode().is_match(text)
    }
}

#[cfg(test)]
mod tests {
    use super::AsciiFirst;

    proptest::proptest! {
        /// Groups agree with the Unicode compilation's, positions
        /// included, on ASCII and non-ASCII text alike.
        #[test]
        fn captures_agree_with_the_unicode_compilation(text in super::sample_texts()) {
            static P: AsciiFirst =
                AsciiFirst::new(r"(?i)\b(every|call|is)\s+(\w+)?(?:\s+(n't|not))?\b");
            let unicode = P.unicode();
            let want: Vec<Vec<Option<std::ops::Range<usize>>>> = unicode
                .captures_iter(&text)
                .map(|c| (0..c.len()).map(|i| c.get(i).map(|m| m.range())).collect())
                .collect();
            let have: Vec<Vec<Option<std::ops::Range<usize>>>> = P
                .captures_iter(&text)
                .iter()
                .map(|g| (0..4).map(|i| g.get(i).map(|g| g.range())).collect())
                .collect();
            proptest::prop_assert_eq!(&have, &want);
            let first = P.captures(&text).map(|g| g[0].to_string());
            proptest::prop_assert_eq!(first, unicode.captures(&text).map(|c| c[0].to_string()));
        }
    }

    #[test]
    fn word_shape_keeps_offsets_and_word_boundaries() {
        let pattern = r"\b([a-z][a-z0-9]*(?:[- ][a-z][a-z0-9]*)?)[- ](service|api)\b";
        let unicode = regex::Regex::new(pattern).unwrap();
        let ascii = regex::bytes::RegexBuilder::new(pattern)
            .unicode(false)
            .build()
            .unwrap();
        for text in [
            "the billing service — and éauth-api, auth-apié, naïve-service",
            "café-api\u{a0}payments api—x foo-servicé bar-service",
        ] {
            let shaped = super::ascii_word_shape(text);
            assert_eq!(shaped.len(), text.len());
            let u: Vec<_> = unicode
                .captures_iter(text)
                .map(|c| (c.get(0).unwrap().range(), c.get(1).unwrap().range()))
                .collect();
            let a: Vec<_> = ascii
                .captures_iter(shaped.as_bytes())
                .map(|c| (c.get(0).unwrap().range(), c.get(1).unwrap().range()))
                .collect();
            assert_eq!(a, u, "{text}");
            assert!(!u.is_empty());
        }
    }

    #[test]
    fn ascii_and_unicode_compilations_agree_on_ascii_text() {
        let patterns = [
            r"(?i)^\W*(?:as an? |as the )[\w -]{1,40},? i (?:want|need|would like|can|should)\b|\bso that i (?:can|don't|do not)\b",
            r"(?i)\b(?:not|never|no)\b|n't\b",
            r"(?i)^\W*(?:\w+\W+){0,2}?(?:is|are)\s+(?:disabled|removed)\b",
            r"(?:\b(?:[Ll]ike|[Uu]nlike)\s+`?[A-Z][\w.-]*|\b(?i:other|many) (?:systems|tools)\b)",
            r"(?i)[,;:(]|\b(?:but|then|so)\b",
        ];
        let texts = [
            "As an admin, I want to retry failed exports.",
            "AS THE On-Call engineer, i need logs so that I can debug",
            "The worker does NOT retry; it isn't needed, then it stops.",
            "  -- Retries are disabled for now.",
            "Like Stripe, unlike other Systems, we retry: but so what (really)",
            "Skip k and s: KELVIN, Long, _under_score, tab\there, 1234 x",
            "",
        ];
        for p in patterns {
            let a = AsciiFirst::new(p);
            let u = regex::Regex::new(p).unwrap();
            for t in texts {
                assert_eq!(a.is_match(t), u.is_match(t), "{p} on {t:?}");
                assert_eq!(a.find(t), u.find(t).map(|m| m.range()), "{p} on {t:?}");
                assert_eq!(
                    a.find_last(t),
                    u.find_iter(t).last().map(|m| m.range()),
                    "{p} on {t:?}"
                );
                assert_eq!(
                    a.replace_all(t, " "),
                    u.replace_all(t, regex::NoExpand(" ")),
                    "{p} on {t:?}"
                );
            }
        }
    }

    #[test]
    fn non_ascii_text_uses_the_unicode_compilation() {
        // Under Unicode rules "é" is a word character: no boundary before "no".
        let a = AsciiFirst::new(r"(?i)\bno\b");
        assert!(!a.is_match("éno"));
        assert!(a.is_match("é no"));
        // Case folding: the Kelvin sign matches k.
        assert!(AsciiFirst::new(r"(?i)\bok\b").is_match("o\u{212a}"));
    }
}
