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
//! A pattern that reads a non-ASCII character only by whether it is a
//! word character (`reads_non_ascii_by_word_class`, decided once from
//! its syntax) answers every query on most non-ASCII text the same way, on
//! the text's character shape (`char_shape`: one stand-in byte per
//! character, positions mapped back). A spec with a dash, an arrow or an
//! accented name then costs no Unicode compilation (three to ten times the
//! ASCII one for the quantity patterns).

use regex::Regex;
use regex_automata::meta;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// A pattern compiled on first use, once for ASCII text and, only when
/// some text is not ASCII, once with Unicode (see the module docs).
pub struct AsciiFirst {
    pattern: &'static str,
    ascii: OnceLock<meta::Regex>,
    unicode: OnceLock<Regex>,
    /// `reads_non_ascii_by_word_class`, worked out on the first non-ASCII
    /// text.
    char_shaped: OnceLock<bool>,
}

impl AsciiFirst {
    pub const fn new(pattern: &'static str) -> AsciiFirst {
        AsciiFirst {
            pattern,
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
            char_shaped: OnceLock::new(),
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

    /// How the ASCII compilation reads `text`: as it is when it is ASCII,
    /// through its character shape when the pattern and the text allow
    /// it, or not at all (`None`: the Unicode compilation must).
    fn ascii_view<'t>(&self, text: &'t str) -> Option<View<'t>> {
        if text.is_ascii() {
            return Some(View::Same(text));
        }
        if !*self
            .char_shaped
            .get_or_init(|| reads_non_ascii_by_word_class(self.pattern))
        {
            return None;
        }
        char_shape(text).map(View::Shape)
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self.ascii_view(text) {
            Some(view) => self.ascii().is_match(view.bytes()),
            None => self.unicode().is_match(text),
        }
    }

    /// The first match's byte range.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        match self.ascii_view(text) {
            Some(view) => self
                .ascii()
                .find(view.bytes())
                .map(|m| view.original(m.range())),
            None => self.unicode().find(text).map(|m| m.range()),
        }
    }

    /// The first match's groups, as `Regex::captures` gives them.
    pub fn captures<'t>(&self, text: &'t str) -> Option<Groups<'t>> {
        match self.ascii_view(text) {
            Some(view) => {
                let re = self.ascii();
                let mut caps = re.create_captures();
                re.captures(view.bytes(), &mut caps);
                caps.is_match().then(|| Groups::of_meta(text, &caps, &view))
            }
            None => {
                let c = self.unicode().captures(text)?;
                Some(Groups::of_regex(text, &c))
            }
        }
    }

    /// Every successive non-overlapping match's groups, as
    /// `Regex::captures_iter` gives them.
    pub fn captures_iter<'t>(&self, text: &'t str) -> Vec<Groups<'t>> {
        match self.ascii_view(text) {
            Some(view) => self
                .ascii()
                .captures_iter(view.bytes())
                .map(|c| Groups::of_meta(text, &c, &view))
                .collect(),
            None => self
                .unicode()
                .captures_iter(text)
                .map(|c| Groups::of_regex(text, &c))
                .collect(),
        }
    }

    /// The last of the successive non-overlapping matches' byte ranges.
    pub fn find_last(&self, text: &str) -> Option<Range<usize>> {
        match self.ascii_view(text) {
            Some(view) => self
                .ascii()
                .find_iter(view.bytes())
                .last()
                .map(|m| view.original(m.range())),
            None => self.unicode().find_iter(text).last().map(|m| m.range()),
        }
    }

    /// Every non-overlapping match replaced by `with`, as `Regex::replace_all`
    /// with a literal replacement.
    pub fn replace_all<'t>(&self, text: &'t str, with: &str) -> Cow<'t, str> {
        let Some(view) = self.ascii_view(text) else {
            return self.unicode().replace_all(text, regex::NoExpand(with));
        };
        let mut matches = self.ascii().find_iter(view.bytes()).peekable();
        if matches.peek().is_none() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for m in matches {
            let m = view.original(m.range());
            out.push_str(&text[last..m.start]);
            out.push_str(with);
            last = m.end;
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }
}

/// What the ASCII compilation of a pattern reads: the text itself, or its
/// character shape.
enum View<'t> {
    Same(&'t str),
    Shape(CharShape),
}

impl View<'_> {
    fn bytes(&self) -> &[u8] {
        match self {
            View::Same(t) => t.as_bytes(),
            View::Shape(s) => s.text.as_bytes(),
        }
    }

    /// A range of `bytes()` as a range of the text.
    fn original(&self, r: Range<usize>) -> Range<usize> {
        match self {
            View::Same(_) => r,
            View::Shape(s) => s.starts[r.start]..s.starts[r.end],
        }
    }
}

/// A text with each non-ASCII character replaced by one ASCII byte, and
/// where each byte of the result starts in the text.
struct CharShape {
    text: String,
    /// Per byte of `text`, and one for its end: the byte offset in the
    /// original text.
    starts: Vec<usize>,
}

/// `text` with each non-ASCII character replaced by one byte, `_` for a
/// word character and `\x01` for any other, or `None` when it holds a
/// character whose stand-in could match differently (a
/// space, a digit, or a letter related by case to an ASCII one). Unlike
/// `ascii_word_shape`, a character is one byte, as the Unicode
/// compilation reads it: a class matched once (`[^\w.,]`) or counted
/// (`{1,40}`) takes one character either way.
fn char_shape(text: &str) -> Option<CharShape> {
    let mut shape = String::with_capacity(text.len());
    let mut starts = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        if c.is_ascii() {
            shape.push(c);
        } else if odd(c) {
            return None;
        } else if regex_syntax::is_word_character(c) {
            shape.push('_');
        } else {
            shape.push('\x01');
        }
        starts.push(at);
    }
    starts.push(text.len());
    Some(CharShape {
        text: shape,
        starts,
    })
}

/// A non-ASCII character that a stand-in cannot replace: a space (`\s`),
/// a digit (`\d`), or a letter related by case to an ASCII one (`(?i)k`
/// matches the Kelvin sign).
fn odd(c: char) -> bool {
    !c.is_ascii()
        && (c.is_whitespace()
            || c.is_numeric()
            || c.to_lowercase().any(|l| l.is_ascii())
            || c.to_uppercase().any(|u| u.is_ascii()))
}

/// Whether a pattern reads each non-ASCII character `char_shape` replaces
/// only by whether it is a word character, exactly as it reads that
/// character's stand-in, so that its ASCII compilation finds on the shape
/// what its Unicode compilation finds on the text. It must be ASCII text
/// naming no code point or property (`\x`, `\u`, `\p`), so that a class
/// holds either all or none of the word characters `char_shape` replaces,
/// and either all or none of the others; its literals must not be `_` or
/// `\x01`; and each class must hold `_` exactly when it holds the word
/// characters, and `\x01` exactly when it holds the others (`[a-z_]` and
/// `[ -~]` hold `_` but no accented letter: not shaped).
fn reads_non_ascii_by_word_class(pattern: &str) -> bool {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn reads(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => true,
            HirKind::Literal(l) => l.0.iter().all(|&b| b.is_ascii() && b != b'_' && b != 1),
            HirKind::Class(Class::Unicode(c)) => {
                let holds = |ch: char| c.ranges().iter().any(|r| r.start() <= ch && ch <= r.end());
                holds('_') == holds('\u{e9}') && holds('\x01') == holds('\u{2014}')
            }
            HirKind::Class(Class::Bytes(_)) => false,
            HirKind::Repetition(r) => reads(&r.sub),
            HirKind::Capture(c) => reads(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().all(reads),
        }
    }
    let names_code_points = ["\\x", "\\u", "\\U", "\\p", "\\P"]
        .iter()
        .any(|e| pattern.contains(e));
    pattern.is_ascii()
        && !names_code_points
        && regex_syntax::Parser::new()
            .parse(pattern)
            .is_ok_and(|h| reads(&h))
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
    fn of_meta(
        text: &'t str,
        caps: &regex_automata::util::captures::Captures,
        view: &View<'_>,
    ) -> Groups<'t> {
        let spans = (0..caps.group_len())
            .map(|i| caps.get_group(i).map(|s| view.original(s.range())))
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

/// Texts for checking a pattern read through the character shape against its Unicode
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
        "10",
        "3,000",
        "2.5",
        " ms",
        " s",
        "per",
        "second",
        "k",
        "as an ",
        "i want",
        "_at",
        "→",
        "×",
    ];
    proptest::collection::vec(proptest::sample::select(TOKENS), 0..14).prop_map(|t| t.concat())
}

impl AsciiFirst {
    /// Whether `is_match` agrees with the Unicode compilation on `text`,
    /// and the pattern reads non-ASCII text through its character shape
    /// (so only a space, digit or case-related letter outside ASCII makes
    /// it compile the Unicode form).
    #[cfg(test)]
    pub(crate) fn agrees_on(&self, text: &str) -> bool {
        reads_non_ascii_by_word_class(self.pattern)
            && self.is_match(text) == self.unicode().is_match(text)
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

    /// Every query agrees with the Unicode compilation on ASCII and
    /// non-ASCII text, for patterns read through the character shape
    /// (a class matched once next to a non-ASCII character, counted
    /// classes, digits, case folding) and for patterns that cannot be
    /// (a class or literal holding `_`, a printable-ASCII range).
    #[test]
    fn every_query_agrees_with_the_unicode_compilation() {
        static PATTERNS: [AsciiFirst; 7] = [
            AsciiFirst::new(
                r"(?i)(?:^|[^\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|m)?\s+(?:[a-z-]+\s*){0,2}?(?:/|\bper\b)\s*(second|minute)\b",
            ),
            AsciiFirst::new(r"(?i)\b(\d+)\s*-?\s*(ms|seconds?|s)\b"),
            AsciiFirst::new(r"[.;!?:,(]|\bbut\b|\band\b"),
            AsciiFirst::new(r"(?i)^\W*(?:as an? )[\w -]{1,12},? i (?:want|need)\b"),
            AsciiFirst::new(r"[a-z_]+"),
            AsciiFirst::new(r"\w+_at\b"),
            AsciiFirst::new(r"[ -~]{2,}"),
        ];
        let shaped: Vec<bool> = PATTERNS
            .iter()
            .map(|p| super::reads_non_ascii_by_word_class(p.pattern))
            .collect();
        assert_eq!(shaped, [true, true, true, true, false, false, false]);
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 600,
            ..Default::default()
        });
        runner
            .run(&super::sample_texts(), |text| {
                for p in &PATTERNS {
                    let u = p.unicode();
                    let spans = |c: regex::Captures<'_>| -> Vec<Option<std::ops::Range<usize>>> {
                        (0..c.len()).map(|i| c.get(i).map(|m| m.range())).collect()
                    };
                    let want: Vec<_> = u.captures_iter(&text).map(spans).collect();
                    let n = u.captures_len();
                    let have: Vec<Vec<_>> = p
                        .captures_iter(&text)
                        .iter()
                        .map(|g| (0..n).map(|i| g.get(i).map(|g| g.range())).collect())
                        .collect();
                    proptest::prop_assert_eq!(&have, &want, "{} on {:?}", p.pattern, text);
                    proptest::prop_assert_eq!(p.is_match(&text), u.is_match(&text));
                    proptest::prop_assert_eq!(p.find(&text), u.find(&text).map(|m| m.range()));
                    proptest::prop_assert_eq!(
                        p.find_last(&text),
                        u.find_iter(&text).last().map(|m| m.range())
                    );
                    proptest::prop_assert_eq!(
                        p.replace_all(&text, "#"),
                        u.replace_all(&text, regex::NoExpand("#"))
                    );
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_dash_or_an_accent_costs_no_unicode_compilation() {
        let p = AsciiFirst::new(r"(?i)(?:^|[^\w.,])(\d+)\s*(ms|s)\b");
        let text = "Café — 10 ms→20 s, naïve";
        let found: Vec<String> = p
            .captures_iter(text)
            .iter()
            .map(|g| g[1].to_string())
            .collect();
        assert_eq!(found, ["10", "20"]);
        assert_eq!(p.find(text), Some(9..15));
        assert!(p.unicode.get().is_none(), "compiled with Unicode");
        // A non-breaking space could be a `\s` the stand-in is not.
        assert_eq!(p.find("x\u{a0}10\u{a0}ms"), Some(1..9));
        assert!(p.unicode.get().is_some());
        // `_` stands for an accented letter: a class naming `_` cannot be shaped.
        let q = AsciiFirst::new(r"[a-z_]+");
        assert_eq!(q.find("é_a"), Some(2..4));
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
