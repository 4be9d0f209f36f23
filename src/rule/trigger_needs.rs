//! What a line must hold for a trigger pattern to match in it, read from
//! the pattern's syntax: for each part every match needs (a word, an
//! alternation of words), the literals one of which that part starts with.
//! `\b(?:retr(?:y|ies))\b(?:[^.]|\.\w)*\b(?:publish|emit)` needs "retr"
//! and one of "publish" or "emit" in the line, each at the start of a
//! word; a line holding only "retries" cannot match. The prefilter
//! (`trigger_prefilter`) finds these literals in one pass, so a rule's
//! regexes are compiled and run only where all of a pattern's parts occur:
//! on a large spec most rules have a line with one word of their triggers,
//! and few with all of them.
//!
//! Every condition here is necessary, never sufficient: `\b` and classes
//! count as nothing, a long literal keeps only its first bytes, and a part
//! with no literal set (`\w+`, `(?:[^.]|\.\w)*`) adds no condition.

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind, Look};
use std::borrow::Cow;

/// One literal a line may hold to meet one part of one trigger pattern.
/// A line meets pattern `pattern` when, for each of its groups, it holds
/// one of the group's literals (where `word_start` asks, at a word start).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need {
    pub pattern: u16,
    pub group: u16,
    pub bytes: Cow<'static, [u8]>,
    /// The pattern has `\b` just before the part and the literal starts
    /// with a word byte: the byte before it in the line is not one.
    pub word_start: bool,
}

impl Need {
    /// An entry of the generated table (`literal_table.rs`).
    pub(crate) const fn embedded(
        pattern: u16,
        group: u16,
        bytes: &'static [u8],
        word_start: bool,
    ) -> Need {
        Need {
            pattern,
            group,
            bytes: Cow::Borrowed(bytes),
            word_start,
        }
    }
}

impl Need {
    /// Whether `text` holds the literal, at a word start where it must.
    fn holds_in(&self, text: &[u8]) -> bool {
        memchr::memmem::find_iter(text, &self.bytes[..])
            .any(|s| !self.word_start || s == 0 || !is_word_byte(text[s - 1]))
    }
}

/// Whether `text` meets the needs of one of the patterns (sorted by
/// pattern and group, as `needs_of` gives them): `false` means no pattern
/// can match anywhere in `text`. Each literal is looked for on its own
/// (`memchr::memmem`, fast on a whole document): for a list asked about a
/// few texts, far cheaper than compiling it. The same answer as `meets`.
pub fn met_in(needs: &[Need], text: &[u8]) -> bool {
    needs
        .chunk_by(|a, b| a.pattern == b.pattern)
        .any(|pattern| {
            pattern
                .chunk_by(|a, b| a.group == b.group)
                .all(|group| group.iter().any(|n| n.holds_in(text)))
        })
}

/// An ASCII word byte, as `\b` reads them with Unicode off.
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The literals one of which every match of `hir` starts with (or, for
/// `suffix`, ends with); `None` when there is no such set.
fn literals(hir: &Hir, kind: ExtractKind) -> Option<Vec<Vec<u8>>> {
    let prefix = kind.is_prefix();
    // Small limits: a few short literals per part are as good a filter as
    // thousands of long ones (alternations multiply), and far cheaper to
    // extract and to put in an automaton.
    let mut seq = Extractor::new()
        .kind(kind)
        .limit_class(4)
        .limit_repeat(2)
        .limit_literal_len(12)
        .limit_total(24)
        .extract(hir);
    // A match holding a literal holds its first (or last) bytes.
    if prefix {
        seq.keep_first_bytes(8);
    } else {
        seq.keep_last_bytes(8);
    }
    seq.dedup();
    let lits = seq.literals()?;
    // An empty literal is in every text; no literal at all (a part that
    // matches nothing) is left to the regex.
    if lits.is_empty() || lits.iter().any(|l| l.is_empty()) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// Literals shorter than this make a group that nearly every line meets
/// and that floods the automaton with matches: such a group is left out.
const MIN_LITERAL: usize = 3;

/// Whether a literal is rare enough in text to filter lines on: at least
/// `MIN_LITERAL` bytes, or a comparison operator (`<=`, `>=`, `!=`, `==`),
/// which prose almost never holds.
fn long_enough(lit: &[u8]) -> bool {
    lit.len() >= MIN_LITERAL || (lit.len() == 2 && lit.iter().all(|b| b"<>=!".contains(b)))
}

/// The groups every match of `hir` needs: for each part of a
/// concatenation (looking into groups and repeats of at least one), the
/// literals that the rest of the match starts with from that part on
/// (`retr(?:y|ies)` gives "retry" and "retries"), flagged when `\b` comes
/// just before the part.
fn groups(hir: &Hir, out: &mut Vec<(Vec<Vec<u8>>, bool)>) {
    let mut push = |lits: Option<Vec<Vec<u8>>>, after_boundary: bool| {
        if let Some(l) = lits.filter(|l| l.iter().all(|b| long_enough(b))) {
            out.push((l, after_boundary));
        }
    };
    match hir.kind() {
        HirKind::Concat(parts) => {
            for (k, part) in parts.iter().enumerate() {
                match part.kind() {
                    HirKind::Concat(_) | HirKind::Capture(_) | HirKind::Repetition(_) => {
                        let mut inner = Vec::new();
                        groups(part, &mut inner);
                        inner.into_iter().for_each(|(l, b)| push(Some(l), b));
                    }
                    HirKind::Look(_) | HirKind::Empty => {}
                    _ => {
                        let after_boundary =
                            k > 0 && matches!(parts[k - 1].kind(), HirKind::Look(Look::WordAscii));
                        let rest = Hir::concat(parts[k..].to_vec());
                        push(literals(&rest, ExtractKind::Prefix), after_boundary);
                    }
                }
            }
        }
        HirKind::Capture(c) => groups(&c.sub, out),
        HirKind::Repetition(r) if r.min >= 1 => groups(&r.sub, out),
        HirKind::Repetition(_) => {}
        _ => push(literals(hir, ExtractKind::Prefix), false),
    }
}

/// The needs of a trigger list (see the module doc), sorted; `None` when
/// one pattern has none (it can match text without a fixed word).
///
/// A pattern whose parts give no group falls back to its whole prefix or
/// suffix literals, whichever are longer.
pub fn needs_of(hirs: &[Hir]) -> Option<Vec<Need>> {
    if hirs.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (p, hir) in hirs.iter().enumerate() {
        let p = u16::try_from(p).ok()?;
        let mut found = Vec::new();
        groups(hir, &mut found);
        if found.is_empty() {
            let best = [ExtractKind::Prefix, ExtractKind::Suffix]
                .into_iter()
                .filter_map(|kind| literals(hir, kind))
                .max_by_key(|l| l.iter().map(Vec::len).min().unwrap_or(0))?;
            found.push((best, false));
        }
        for (g, (lits, after_boundary)) in found.into_iter().enumerate() {
            let g = u16::try_from(g).ok()?;
            let mut group: Vec<Need> = lits
                .into_iter()
                .map(|l| Need {
                    pattern: p,
                    group: g,
                    word_start: after_boundary && l.first().copied().is_some_and(is_word_byte),
                    bytes: Cow::Owned(l),
                })
                .collect();
            group.sort();
            group.dedup();
            // A line holding a literal holds any literal it contains (one
            // that needs no word start) and any it starts with (needing the
            // same): the longer one adds nothing to the group.
            let all = group.clone();
            group.retain(|n| {
                !all.iter().any(|o| {
                    o.bytes.len() < n.bytes.len()
                        && ((!o.word_start
                            && n.bytes.windows(o.bytes.len()).any(|w| w == &o.bytes[..]))
                            || (o.word_start == n.word_start && n.bytes.starts_with(&o.bytes)))
                })
            });
            out.extend(group);
        }
    }
    out.sort();
    Some(out)
}

/// Whether `text` meets the needs of one of the patterns: the reference
/// the prefilter's one-pass search must agree with (used by tests).
#[cfg(test)]
pub fn meets(needs: &[Need], text: &[u8]) -> bool {
    let holds = |n: &Need| {
        (0..text.len()).any(|s| {
            text[s..].starts_with(&n.bytes)
                && (!n.word_start || s == 0 || !is_word_byte(text[s - 1]))
        })
    };
    let patterns = needs.iter().map(|n| n.pattern).max().map_or(0, |m| m + 1);
    (0..patterns).any(|p| {
        let of: Vec<&Need> = needs.iter().filter(|n| n.pattern == p).collect();
        let groups = of.iter().map(|n| n.group).max().map_or(0, |m| m + 1);
        (0..groups).all(|g| of.iter().filter(|n| n.group == g).any(|n| holds(n)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(patterns: &[&str]) -> Vec<Need> {
        let hirs: Vec<Hir> = patterns
            .iter()
            .map(|p| super::super::parse(p).unwrap())
            .collect();
        needs_of(&hirs).unwrap()
    }

    #[test]
    fn every_part_of_a_pattern_is_needed_each_at_a_word_start_after_a_boundary() {
        let n = needs(&[r"\bretr(?:y|ies)\b(?:[^.]|\.\w)*\b(?:publish|emits?)\b"]);
        let shown: Vec<(u16, &[u8], bool)> = n
            .iter()
            .map(|n| (n.group, &n.bytes[..], n.word_start))
            .collect();
        assert_eq!(
            shown,
            [
                (0, &b"retries"[..], true),
                (0, b"retry", true),
                (1, b"emit", true),
                (1, b"publish", true)
            ]
        );
        assert!(meets(&n, b"it retries, then emits the event"));
        assert!(!meets(&n, b"it retries the call"));
        assert!(!meets(&n, b"the event is emitted"));
        // "retry" inside a word is not at a word start.
        assert!(!meets(&n, b"a-z: xretry then emit"));
        assert!(!meets(&n, b"retr then emit"));
    }

    #[test]
    fn any_pattern_of_a_list_may_be_met_and_classes_add_no_condition() {
        let n = needs(&[r"\bapi\b", r"\w+ queue\b"]);
        assert!(meets(&n, b"the api"));
        assert!(meets(&n, b"a job queue"));
        assert!(!meets(&n, b"rapid-queue"));
        // A pattern with no literal at all: no needs for the list.
        let hirs: Vec<Hir> = [r"\bcalls\b", r"\w+"]
            .iter()
            .map(|p| super::super::parse(p).unwrap())
            .collect();
        assert_eq!(needs_of(&hirs), None);
        let optional: Vec<Hir> = vec![super::super::parse("a?").unwrap()];
        assert_eq!(needs_of(&optional), None);
    }

    /// `met_in` (one literal search at a time) answers as the reference
    /// `meets` on every text made of up to three of these pieces: words a
    /// pattern needs, inside other words, repeated, in either order.
    #[test]
    fn met_in_answers_as_the_reference() {
        let lists = [
            needs(&[r"\bretr(?:y|ies)\b(?:[^.]|\.\w)*\b(?:publish|emits?)\b"]),
            needs(&[r"\bapi\b", r"\w+ queue\b", r"\bdead[- ]letter"]),
            needs(&[r"\w+_at\s*(?:<=|>=)\s*\w+"]),
        ];
        let pieces = [
            "",
            "retry",
            "xretry",
            "retries",
            " ",
            "emit",
            "publish",
            "api",
            "rapid",
            " queue",
            "dead-letter",
            "deadletter",
            "x_at <= y",
            "a_at < b",
            ".",
        ];
        let mut checked = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let text = format!("{a}{b} {c}{b}");
                    for n in &lists {
                        assert_eq!(
                            met_in(n, text.as_bytes()),
                            meets(n, text.as_bytes()),
                            "{text:?}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
        // Met only by its second occurrence, the first being inside a word.
        assert!(met_in(&lists[0], b"xretry, retry and emit"));
    }

    #[test]
    fn a_longer_literal_that_holds_a_shorter_one_of_its_group_is_dropped() {
        let n = needs(&[r"(?:retry|retries|retr)"]);
        let bytes: Vec<&[u8]> = n.iter().map(|n| &n.bytes[..]).collect();
        assert_eq!(bytes, [&b"retr"[..]]);
    }

    #[test]
    fn a_comparison_operator_is_a_need_but_two_letters_are_not() {
        let n = needs(&[r"\w+_at\s*(?:<=|>=)\s*\w+"]);
        let bytes: Vec<&[u8]> = n.iter().map(|n| &n.bytes[..]).collect();
        assert_eq!(bytes, [&b"_at"[..], b"<=", b">="]);
        assert!(meets(&n, b"if expires_at <= now"));
        assert!(!meets(&n, b"if expires_at < now"));
        // "ts" and "to" are in nearly every line: no filter on them.
        let hirs: Vec<Hir> = [r"\w+(?:ts|to)\w+"]
            .iter()
            .map(|p| super::super::parse(p).unwrap())
            .collect();
        assert_eq!(needs_of(&hirs), None);
    }
}
