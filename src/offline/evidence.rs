//! Finding a safeguard in the spec, and telling a real one from a negated
//! ("there is no rate limit"), deferred ("we will add retries later") or
//! merely questioned ("Do we need a replay tool?") mention.

use super::lexicon::Lexicon;
use crate::ascii_first::AsciiFirst;
use crate::rule::Regex as Pattern;
use crate::spec::{LineKind, SectionRole, Spec};
use regex::Regex;
use std::ops::Range;
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceKind {
    /// The spec states the safeguard.
    Affirmed,
    /// The spec says the safeguard is absent.
    Negated,
    /// Mentioned as future work, an open question or a non-goal.
    Deferred,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub line: usize,
    pub kind: EvidenceKind,
    /// The text that matched the safeguard pattern.
    pub matched: String,
}

static NEGATION_BEFORE: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(no|not|without|never|lacks?|lacking|missing|none|neither|nor|cannot|can't|don't|doesn't|isn't|aren't|won't|didn't|skips?|skipped|ignores?|ignored|instead of|rather than|regardless of|irrespective of|nothing|disabled?|disables|disabling|switch(?:es|ed|ing)? off|turn(?:s|ed|ing)? off)\b",
);
static NEGATION_AFTER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:\w+\W+){0,8}?(is|are|was|were|will be|gets?|get)\s+(not|never)\b|^\W*(?:\w+\W+){0,8}?(isn't|aren't|wasn't|weren't|is absent|are absent|is missing|are missing|not (?:needed|required|verified|checked|validated|enforced|used|applied|implemented|set|configured))",
);
static DEFERRAL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(later|tbd|todo|to be decided|to be determined|in (?:the )?future|follow[- ]?up|phase (?:2|two)|v2|not yet|eventually|someday|out of scope|might|maybe|consider(?:ing)?|could add|may add|nice to have)\b",
);
/// Reported speech asking about the safeguard ("a reviewer asked how the
/// service authenticates", "we wondered whether links expire"): a
/// question, not a statement that it is there.
static ASKED_ABOUT: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:asked|asks|asking|wondered|wonders|wondering|wants? to know|wanted to know|queried|is unclear|are unclear|unsure|not sure)\s+(?:\w+\s+){0,3}?(?:how|whether|if|what|which|when)\b",
);
static CLAUSE_BREAK: AsciiFirst =
    AsciiFirst::new(r"[.;!?:,(]|\bbut\b|\bwhile\b|\bwhereas\b|\bso\b|\band\b");
/// Where the clause after a safeguard's mention ends: a clause break, a
/// condition or reason ("an empty hint when the gates are not set"), or a
/// purpose ("stays empty to indicate that the lease is not managed"). Not a
/// relative clause: "the header that the sender attaches is not checked"
/// still denies the header.
static AFTER_BREAK: AsciiFirst = AsciiFirst::new(
    r"(?i)[;:,(]|\b(?:but|while|whereas|so|and|because|unless|until|when|if|meaning|which means)\b|\bto (?:indicate|signal|show|mean|ensure|say|mark|record|tell)\b",
);

/// Classify one match of a safeguard pattern at `start..end` in line `n`.
pub fn classify(spec: &Spec, n: usize, start: usize, end: usize) -> EvidenceKind {
    let Some(line) = spec.line(n) else {
        return EvidenceKind::Deferred;
    };
    let role = spec.sections[line.section].role;
    if matches!(
        role,
        SectionRole::OpenQuestions | SectionRole::NonGoals | SectionRole::Alternatives
    ) {
        return EvidenceKind::Deferred;
    }
    let text = line.text.as_str();
    // The sentence around the match.
    let sent_start = text[..start]
        .rfind(['.', '!', '?', ';'])
        .map(|i| i + 1)
        .unwrap_or(0);
    let sent_end = text[end..]
        .find(['.', '!', '?', ';'])
        .map(|i| end + i + 1)
        .unwrap_or(text.len());
    let sentence = &text[sent_start..sent_end];
    if sentence.trim_end().ends_with('?') {
        return EvidenceKind::Deferred;
    }
    if line.kind == LineKind::Code {
        // Code and config rarely negate in words ("NOT NULL" is not a negation).
        return EvidenceKind::Affirmed;
    }
    // A sentence wrapped from the line above ("starts regardless of
    // whether the inputs\nhave landed") keeps its opening words: the part
    // of the line above after its last sentence break.
    let carried = if sent_start == 0 {
        carried_clause(spec, n)
    } else {
        None
    };
    let before: std::borrow::Cow<str> = match carried {
        Some(head) => format!("{head} {}", &text[..start]).into(),
        None => text[sent_start..start].into(),
    };
    let before = before.as_ref();
    let clause = match CLAUSE_BREAK.find_last(before) {
        Some(m) => &before[m.end..],
        None => before,
    };
    // What follows the match up to the end of its clause: "the HMAC header
    // Slack attaches is not checked" denies the HMAC; "HMAC is verified, so
    // forged requests are not accepted" does not.
    let after = &text[end..sent_end];
    let after = match AFTER_BREAK.find(after) {
        Some(m) => &after[..m.start],
        None => after,
    };
    if NEGATION_BEFORE.is_match(clause) || NEGATION_AFTER.is_match(after) {
        return EvidenceKind::Negated;
    }
    if DEFERRAL.is_match(sentence) || ASKED_ABOUT.is_match(clause) {
        return EvidenceKind::Deferred;
    }
    EvidenceKind::Affirmed
}

/// The unfinished sentence that line `n` continues: the end of the line
/// above, after its last sentence break, when both belong to one paragraph
/// or list item (the same test as a `Seam`). Bounded, so a long paragraph
/// costs no more than one line per match.
fn carried_clause(spec: &Spec, n: usize) -> Option<&str> {
    if n < 2 || !Seam::continues(spec, n - 1) {
        return None;
    }
    let above = &spec.line(n - 1)?.text;
    Some(open_tail(above, &['.', '!', '?', ';']).trim())
}

/// The clause around `range` of line `n`'s `own` text when that clause is
/// wrapped across lines: the open clause the line above carries into it
/// (when nothing breaks the clause before `range` in this line) and the
/// next line's words up to the end of their first clause (when nothing
/// breaks it after `range`), each at most `SEAM_REACH` bytes of the
/// neighbours' design text. `None` when the clause stays on this line.
pub fn wrapped_clause(spec: &Spec, n: usize, own: &str, range: Range<usize>) -> Option<String> {
    const BREAK: [char; 5] = ['.', '!', '?', ';', ','];
    let open_before = !own.get(..range.start).is_some_and(|t| t.contains(BREAK));
    let open_after = !own.get(range.end..).is_some_and(|t| t.contains(BREAK));
    let before = (open_before && n >= 2 && Seam::continues(spec, n - 1))
        .then(|| spec.line(n - 1))
        .flatten()
        .map(|above| open_tail(&above.design, &BREAK));
    let after = (open_after && Seam::continues(spec, n))
        .then(|| spec.line(n + 1))
        .flatten()
        .map(|next| {
            let head = reach_forward(&next.design);
            match head.find(BREAK) {
                Some(i) => &head[..=i],
                None => head,
            }
        });
    if before.is_none() && after.is_none() {
        return None;
    }
    // The line's own indent (a list item's continuation) would put several
    // spaces where the break was, and a pattern's single space would miss.
    Some(format!(
        "{} {} {}",
        before.unwrap_or_default().trim(),
        own.trim(),
        after.unwrap_or_default()
    ))
}

/// All mentions of any of `patterns` in `lines` (1-based, end exclusive),
/// skipping headings, one per line (the most affirmative one).
pub fn find(spec: &Spec, patterns: &[Pattern], lines: Range<usize>) -> Vec<Evidence> {
    let mut out = Vec::new();
    let end = lines.end.min(spec.lines.len() + 1);
    for n in lines.start.max(1)..end {
        let line = &spec.lines[n - 1];
        // Headings name topics, HTML comments are notes to editors: neither
        // states a safeguard (but see `headed`).
        if matches!(
            line.kind,
            LineKind::Heading | LineKind::Blank | LineKind::Html
        ) {
            continue;
        }
        let mut best: Option<Evidence> = None;
        let mut offer = |kind: EvidenceKind, matched: &str| {
            if best.as_ref().is_none_or(|b| rank(kind) > rank(b.kind)) {
                best = Some(Evidence {
                    line: n,
                    kind,
                    matched: matched.to_string(),
                });
            }
        };
        for p in patterns {
            for m in p.find_iter(line.lower.as_bytes()) {
                offer(classify(spec, n, m.start(), m.end()), &line.text[m.range()]);
            }
        }
        // A safeguard worded across a line break ("gives the remainder to
        // the last\nline"): matched on the seam, counted on this line.
        if let Some(seam) = Seam::after(spec, n) {
            for p in patterns {
                if let Some(m) = p
                    .find_iter(seam.text.as_bytes())
                    .find(|m| m.start() < seam.join && m.end() > seam.join + 1)
                {
                    let start = seam.from + m.start();
                    offer(
                        classify(spec, n, start, line.text.len()),
                        line.text.get(start..).unwrap_or_default().trim(),
                    );
                }
            }
        }
        out.extend(best);
    }
    out
}

/// `found` with, for a rule of document scope, the headings that state its
/// safeguard (`headed`), in line order.
pub fn and_headings(
    mut found: Vec<Evidence>,
    spec: &Spec,
    rule: &crate::rule::Rule,
    lines: Range<usize>,
) -> Vec<Evidence> {
    let more = headed(spec, rule, lines);
    if !more.is_empty() {
        found.extend(more);
        found.sort_by_key(|e| e.line);
    }
    found
}

/// Headings in `lines` that name one of the rule's safeguards over a
/// section with something in it ("### Monitoring", "### Rollback plan"),
/// for a rule that asks whether the design has the safeguard at all
/// (document scope); none for a section or paragraph rule, which needs the
/// safeguard said about its element: a heading "Authorization" over a
/// check that misses ownership answers nothing.
pub fn headed(spec: &Spec, rule: &crate::rule::Rule, lines: Range<usize>) -> Vec<Evidence> {
    if rule.def.scope != crate::rule::Scope::Document {
        return Vec::new();
    }
    headings_naming(spec, &rule.safeguards, lines)
}

/// Headings in `lines` made of `patterns` matches and fillers, over a
/// section with something in it.
fn headings_naming(spec: &Spec, patterns: &[Pattern], lines: Range<usize>) -> Vec<Evidence> {
    let end = lines.end.min(spec.lines.len() + 1);
    (lines.start.max(1)..end)
        .filter(|&n| spec.lines[n - 1].kind == LineKind::Heading && heads_content(spec, n))
        .filter_map(|n| {
            let line = &spec.lines[n - 1];
            let lower = line.lower.as_bytes();
            let found: Vec<Range<usize>> = patterns
                .iter()
                .flat_map(|p| p.find_iter(lower).map(|m| m.range()))
                .collect();
            let first = found.first()?.clone();
            names_only_safeguards(&line.lower, &found).then(|| Evidence {
                line: n,
                kind: classify(spec, n, first.start, first.end),
                matched: line.text[first].to_string(),
            })
        })
        .collect()
}

/// Whether every word of a heading is a safeguard match, a number or a
/// filler ("Monitoring and alerting", "4.2 Rollback plan"): "Success
/// metrics" and "Metrics engine" name something else.
fn names_only_safeguards(heading: &str, found: &[Range<usize>]) -> bool {
    const FILLER: &[&str] = &[
        "and",
        "or",
        "the",
        "of",
        "for",
        "our",
        "a",
        "an",
        "plan",
        "plans",
        "strategy",
        "approach",
        "policy",
        "policies",
        "considerations",
        "details",
        "design",
    ];
    heading
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
        .all(|w| {
            // `w` is a slice of `heading`: its offset is where it starts.
            let start = w.as_ptr() as usize - heading.as_ptr() as usize;
            let r = start..start + w.len();
            FILLER.contains(&w) || found.iter().any(|f| f.start < r.end && r.start < f.end)
        })
}

/// Whether the heading on line `n` opens a section with something in it:
/// its first line after blanks is text (not a placeholder such as "TBD"),
/// or a deeper heading.
fn heads_content(spec: &Spec, n: usize) -> bool {
    static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)^\W*(?:tbd|tba|todo|n/?a|none|to be (?:decided|determined|defined|written|added)|coming soon)\W*$",
        )
        .expect("static pattern")
    });
    let level = spec.sections[spec.lines[n - 1].section].level;
    let Some(next) = spec.lines[n..]
        .iter()
        .find(|l| !matches!(l.kind, LineKind::Blank | LineKind::Html))
    else {
        return false;
    };
    match next.kind {
        LineKind::Heading => spec.sections[next.section].level > level,
        _ => !PLACEHOLDER.is_match(&next.text),
    }
}

/// The end of a line joined to the start of the next line of the same
/// paragraph or list item, as rendered lower-case text, so a phrase split
/// by the wrap can match.
struct Seam {
    text: String,
    /// Where in `text` the next line begins (after the joining space).
    join: usize,
    /// Where in the line `text` begins.
    from: usize,
}

/// How much of each line the seam holds: enough for a safeguard phrase,
/// little enough to keep the search linear.
const SEAM_REACH: usize = 80;

/// Where the last `SEAM_REACH` bytes of `text` begin, on a char boundary.
fn reach_back(text: &str) -> usize {
    let mut from = text.len().saturating_sub(SEAM_REACH);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    from
}

/// The first `SEAM_REACH` bytes of `text` after its leading blanks, ending
/// on a char boundary.
fn reach_forward(text: &str) -> &str {
    let head = text.trim_start();
    let mut to = head.len().min(SEAM_REACH);
    while !head.is_char_boundary(to) {
        to += 1;
    }
    &head[..to]
}

/// What the last `SEAM_REACH` bytes of `text` hold after the last of
/// `breaks`: the clause the line leaves open.
fn open_tail<'t>(text: &'t str, breaks: &[char]) -> &'t str {
    let tail = &text[reach_back(text)..];
    match tail.rfind(breaks) {
        Some(i) => &tail[i + 1..],
        None => tail,
    }
}

impl Seam {
    /// Does line `n + 1` go on with the sentence line `n` leaves open (the
    /// same paragraph or list item, no sentence end between)?
    fn continues(spec: &Spec, n: usize) -> bool {
        let (Some(line), Some(next)) = (spec.line(n), spec.line(n + 1)) else {
            return false;
        };
        next.block == line.block
            && next.kind == line.kind
            && matches!(line.kind, LineKind::Prose | LineKind::ListItem)
            && !super::sentence::is_list_item(&next.text)
            && !line.lower.trim_end().ends_with(['.', '!', '?', ';'])
    }

    fn after(spec: &Spec, n: usize) -> Option<Seam> {
        if !Seam::continues(spec, n) {
            return None;
        }
        let line = spec.line(n)?;
        let next = spec.line(n + 1)?;
        let mut from = reach_back(&line.lower);
        // Start at a word, so a pattern's leading \b is not met mid-word.
        if from > 0 {
            from = line.lower[from..]
                .find(' ')
                .map_or(line.lower.len(), |i| from + i);
        }
        let tail = line.lower[from..].trim_end();
        let text = format!("{tail} {}", reach_forward(&next.lower));
        Some(Seam {
            join: tail.len(),
            text,
            from,
        })
    }
}

/// The quantifier opens the sentence ("Every step call has...", "All
/// buckets are..."): "refreshed on every write" is not a policy.
static UNIVERSAL: AsciiFirst = AsciiFirst::new(
    r"(?i)(?:^|[.:;!?]\s+|^\s*(?:[-*+]|\d+\.)\s+)(?:every|all|each)\s+(?:\w+[\s-]+){0,3}?(?:calls?|requests?|endpoints?|routes?|quer(?:y|ies)|jobs?|steps?|handlers?|services?|apis?|dependenc(?:y|ies)|connections?|clients?|consumers?|workers?|messages?|events?|commands?|writes?|operations?|tables?|buckets?|logs?)\b\s+(?:\w+\s+){0,5}?(?:has|have|is|are|must|should|will|use|uses|gets?|goes|go|times?|carr(?:y|ies)|runs?|need|needs|require|requires)\b",
);

/// Does this line state a blanket policy ("every outbound call has a 3 s
/// timeout", "all buckets are encrypted")? Such a line answers a concern
/// wherever the concern is in the document.
pub fn is_universal(text: &str) -> bool {
    UNIVERSAL.is_match(text)
}

/// Affirmed safeguards stated as a blanket policy anywhere in the design.
pub fn universal(spec: &Spec, patterns: &[Pattern]) -> Vec<Evidence> {
    let lines = spec.memo.universal_lines.get_or_init(|| {
        spec.lines
            .iter()
            .filter(|l| l.kind != LineKind::Code && is_universal(&l.text))
            .map(|l| l.number)
            .collect()
    });
    lines
        .iter()
        .flat_map(|&n| find(spec, patterns, n..n + 1))
        .filter(|e| e.kind == EvidenceKind::Affirmed)
        .collect()
}

/// Mentions of the rule's patterns or of the protocol's synonym phrases in
/// `lines`, one per line (the most affirmative), classified like `find`.
pub fn find_with(
    spec: &Spec,
    patterns: &[Pattern],
    synonyms: &[&Lexicon],
    lines: Range<usize>,
) -> Vec<Evidence> {
    let mut out = find(spec, patterns, lines.clone());
    if synonyms.iter().all(|l| l.is_empty()) {
        return out;
    }
    let end = lines.end.min(spec.lines.len() + 1);
    let normalised = super::lexicon::spec_lines(spec);
    for n in lines.start.max(1)..end {
        let line = &spec.lines[n - 1];
        if matches!(
            line.kind,
            LineKind::Heading | LineKind::Blank | LineKind::Html
        ) {
            continue;
        }
        let mut best: Option<Evidence> = None;
        for lex in synonyms.iter().filter(|l| l.may_match(&line.text)) {
            for (range, _) in lex.find_normalised(normalised.line(n, &line.text)) {
                let kind = classify(spec, n, range.start, range.end);
                if best.as_ref().is_none_or(|b| rank(kind) > rank(b.kind)) {
                    best = Some(Evidence {
                        line: n,
                        kind,
                        matched: line.text[range].to_string(),
                    });
                }
            }
        }
        let Some(b) = best else { continue };
        match out.iter_mut().find(|e| e.line == n) {
            Some(e) if rank(b.kind) > rank(e.kind) => *e = b,
            Some(_) => {}
            None => out.push(b),
        }
    }
    out.sort_by_key(|e| e.line);
    out
}

static BLANKET: LazyLock<Regex> = LazyLock::new(|| {
    // Matched on ASCII-lowercased text. A quantified rule that opens its sentence, with a verb of obligation
    // or state: "Every task must finish within 10 min", "All tokens expire".
    Regex::new(&crate::rule::asciify(r"(?:^|[.:;!?]\s+|^\s*(?:[-*+]|\d+\.)\s+(?:\*\*[^*]*\*\*:?\s+)?)(?:every|all|each|any)\s+(?:[\w`/-]+\s+){0,5}?(?:has|have|is|are|must|should|shall|will|uses?|gets?|times?|carr(?:y|ies)|runs?|needs?|requires?|expires?|finish(?:es)?|completes?|goes|go|is capped|are capped)\b|(?:^|[.:;!?]\s+|^\s*(?:[-*+]|\d+\.)\s+)no\s+(?:[\w`/-]+\s+){1,5}?without\b")).unwrap()
});

static QUANTIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&crate::rule::asciify(
        r"\b(?:all|every|each|any)\s+([\w`/-]+(?:\s+[\w`/-]+){0,3})",
    ))
    .unwrap()
});

/// What a blanket policy is about: the stems of the few words after its
/// quantifier ("all outbound calls" -> outbound, call).
pub fn blanket_subject(text: &str) -> Vec<String> {
    QUANTIFIER
        .captures_iter(&text.to_ascii_lowercase())
        .flat_map(|c| {
            super::lexicon::normalise(&c[1])
                .split(' ')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|w| w.len() >= 3 && !BLANKET_STOP.contains(&w.as_str()))
        .collect()
}

const BLANKET_STOP: &[&str] = &[
    "the", "our", "its", "their", "other", "new", "one", "this", "that", "these", "those", "and",
    "for", "with", "are", "has", "have", "must", "should", "will", "time",
];

/// Lines stating a blanket policy: a quantified rule ("every outbound call
/// has a 3 s timeout"; "no export runs without a deadline") anywhere, or a
/// quantified item of a Goals section ("timeouts on all outbound calls").
pub fn blanket_lines(spec: &Spec) -> Vec<usize> {
    let mut lines: Vec<usize> = spec
        .lines
        .iter()
        .filter(|l| {
            l.kind != LineKind::Code
                && !matches!(l.kind, LineKind::Heading | LineKind::Blank | LineKind::Html)
                && (is_universal(&l.text)
                    || BLANKET.is_match(&l.lower)
                    || spec.sections[l.section].role.states_goals()
                        && QUANTIFIER.is_match(&l.lower))
        })
        .map(|l| l.number)
        .collect();
    lines.dedup();
    lines
}

static COMPARISON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&crate::rule::asciify(
        r"(<=|>=|≤|≥|<|>)\s*`?\s*(-?\d+(?:\.\d+)?)",
    ))
    .unwrap()
});

/// Complementary comparisons on the same value in `lines`: `< 10` with
/// `>= 10`, or `<= 10` with `> 10`. Together they cover every value exactly
/// once, so the boundary is stated, not a gap. Returns both lines of the
/// first pair found (the same line twice when one line states both).
pub fn complementary_bounds(spec: &Spec, lines: Range<usize>) -> Option<(usize, usize, String)> {
    let end = lines.end.min(spec.lines.len() + 1);
    let mut seen: Vec<(usize, &str, String)> = Vec::new();
    for n in lines.start.max(1)..end {
        let text = &spec.lines[n - 1].text;
        for c in COMPARISON.captures_iter(text) {
            let op = c.get(1).map_or("", |m| m.as_str());
            let value = c[2].to_string();
            let complement = match op {
                "<" => ">=",
                ">=" | "≥" => "<",
                "<=" | "≤" => ">",
                ">" => "<=",
                _ => continue,
            };
            let norm = match op {
                "≥" => ">=",
                "≤" => "<=",
                o => o,
            };
            if let Some((first, _, _)) = seen
                .iter()
                .find(|(_, o, v)| *v == value && (*o == complement))
            {
                return Some((*first, n, format!("{norm} {value}")));
            }
            seen.push((n, norm, value));
        }
    }
    None
}

fn rank(k: EvidenceKind) -> u8 {
    match k {
        EvidenceKind::Affirmed => 2,
        EvidenceKind::Deferred => 1,
        EvidenceKind::Negated => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::compile;

    #[test]
    fn a_heading_counts_when_it_names_only_the_safeguard_over_some_text() {
        let patterns = [
            compile(r"\bmonitor").unwrap(),
            compile(r"\bmetrics?\b").unwrap(),
            compile(r"alert").unwrap(),
        ];
        let text = "# T\n\n## 4. Monitoring and alerting\n\nQueue depth per worker.\n\n## Metrics engine\n\nIt sums scores.\n\n## Success metrics\n\nMore sign-ups.\n\n## Metrics\n\nTBD\n\n## Monitor\n\n### Counters\n\nSent and failed.\n";
        let spec = Spec::parse(None, text.to_string());
        let lines: Vec<usize> = headings_naming(&spec, &patterns, 1..spec.lines.len() + 1)
            .iter()
            .map(|e| e.line)
            .collect();
        // Not "Metrics engine" (a component), "Success metrics" (product
        // measures) or "Metrics" over a placeholder.
        assert_eq!(lines, vec![3, 19]);
    }

    proptest::proptest! {
        #[test]
        fn patterns_read_non_ascii_text_as_unicode_does(text in crate::ascii_first::sample_texts()) {
            for p in [&NEGATION_BEFORE, &NEGATION_AFTER, &DEFERRAL, &UNIVERSAL, &AFTER_BREAK, &ASKED_ABOUT] {
                proptest::prop_assert!(p.agrees_on(&text), "{text:?}");
            }
        }
    }

    fn kinds(doc: &str, pat: &str) -> Vec<(usize, EvidenceKind)> {
        let spec = Spec::parse(None, doc.to_string());
        find(&spec, &[compile(pat).unwrap()], 1..spec.lines.len() + 1)
            .into_iter()
            .map(|e| (e.line, e.kind))
            .collect()
    }

    #[test]
    fn a_reported_question_about_a_safeguard_does_not_state_it() {
        let doc = "# D\n\nIn review, Omar asked how the kiosk authenticates to the API.\n\nWe check whether the kiosk authenticates with its client certificate.\n\nThe team wondered whether the links expire.\n";
        assert_eq!(
            kinds(doc, r"\bauthenticates\b|\bexpire"),
            vec![
                (3, EvidenceKind::Deferred),
                (5, EvidenceKind::Affirmed),
                (7, EvidenceKind::Deferred)
            ]
        );
    }

    #[test]
    fn a_denial_later_in_the_clause_or_a_switched_off_safeguard_is_negated() {
        let doc = "# D\n\nThe HMAC header that the sender attaches to each request is not checked.\n\nThe HMAC is empty when the keys are not set.\n\nWe switch off snapshotting to keep writes fast.\n\nThe HMAC is verified, so forged requests are not accepted.\n\nThe HMAC stays empty to indicate that the key is not managed here.\n";
        assert_eq!(
            kinds(doc, r"\b(?:hmac|snapshot)"),
            vec![
                (3, EvidenceKind::Negated),
                (5, EvidenceKind::Affirmed),
                (7, EvidenceKind::Negated),
                (9, EvidenceKind::Affirmed),
                (11, EvidenceKind::Affirmed)
            ]
        );
    }

    #[test]
    fn a_safeguard_wrapped_over_two_lines_is_found_on_its_first() {
        let pat = r"remainder\b(?:[^.]|\.\w)*\blast line";
        let doc =
            "# D\n\nEach line is rounded and the remainder goes to the last\nline of the order.\n";
        assert_eq!(kinds(doc, pat), vec![(3, EvidenceKind::Affirmed)]);
        let negated = "# D\n\nNothing gives the remainder to the last\nline of the order.\n";
        assert_eq!(kinds(negated, pat), vec![(3, EvidenceKind::Negated)]);
        // Two list items, two paragraphs, or a finished sentence are not one phrase.
        for apart in [
            "# D\n\n- the remainder goes to the last\n- line items are rounded\n",
            "# D\n\nThe remainder goes to the last\n\nline of the order.\n",
            "# D\n\nThe remainder goes to the last.\nLine items are rounded.\n",
        ] {
            assert!(kinds(apart, pat).is_empty(), "{apart}");
        }
    }

    #[test]
    fn a_clause_wrapped_onto_its_neighbours_is_read_whole_and_no_further() {
        let doc = "# D\n\nAt launch the app sends requests to\nour own API for the saved items.\n\nIt reads the list and\nsends requests to the vendor, which\nour own API logs.\n\n- it sends requests to\n- our own API\n\nThe app sends requests to the vendor.\nOur own API logs them.\n";
        let spec = Spec::parse(None, doc.to_string());
        let clause = |n: usize, word: &str| {
            let own = &spec.lines[n - 1].design;
            let at = own.find(word).expect("word on the line");
            wrapped_clause(&spec, n, own, at..at + word.len())
        };
        // The clause goes on below, up to its end.
        assert_eq!(
            clause(3, "sends requests to").as_deref(),
            Some(" at launch the app sends requests to our own api for the saved items.")
        );
        // The open clause above comes in; a comma after the match ends the
        // clause on this line, so the relative clause below stays out.
        assert_eq!(
            clause(7, "sends requests to").as_deref(),
            Some("it reads the list and sends requests to the vendor, which ")
        );
        // Another list item or a finished sentence is not the same clause.
        assert_eq!(clause(10, "sends requests to"), None);
        assert_eq!(clause(13, "sends requests to"), None);
        // A list item's indented continuation joins with one space.
        let item = Spec::parse(
            None,
            "# D\n\n- a chart of the time spent across upload\n  retries.\n".to_string(),
        );
        let own = &item.lines[3].design;
        let at = own.find("retries").expect("word on the line");
        assert_eq!(
            wrapped_clause(&item, 4, own, at..at + "retries".len()).as_deref(),
            Some("- a chart of the time spent across upload retries. ")
        );
    }

    #[test]
    fn a_denial_on_the_line_above_carries_into_the_wrapped_sentence() {
        let doc = "# D\n\nThe job starts at 06:00 regardless of whether the input tables\nhave landed; each step reads what is present.\n\nThe job never starts early.\nInputs have landed by 05:00.\n\nThe job waits until the input tables\nhave landed.\n\n- the job runs without a lock\n- inputs have landed\n";
        assert_eq!(
            kinds(doc, "landed"),
            vec![
                (4, EvidenceKind::Negated),
                (7, EvidenceKind::Affirmed),
                (10, EvidenceKind::Affirmed),
                (13, EvidenceKind::Affirmed),
            ]
        );
    }

    #[test]
    fn affirmed_negated_deferred() {
        let doc = "# D\n\nCalls have a 3 s timeout.\nThere is no timeout on the export call.\nThe call runs without a timeout.\nWe will add a timeout later.\nShould the call have a timeout?\nThe timeout is not configured.\n";
        assert_eq!(
            kinds(doc, "timeout"),
            vec![
                (3, EvidenceKind::Affirmed),
                (4, EvidenceKind::Negated),
                (5, EvidenceKind::Negated),
                (6, EvidenceKind::Deferred),
                (7, EvidenceKind::Deferred),
                (8, EvidenceKind::Negated),
            ]
        );
    }

    #[test]
    fn blanket_policies_open_the_sentence() {
        assert!(is_universal("Every step call has a 3 s timeout."));
        assert!(is_universal("- All outbound calls time out after 2 s."));
        assert!(is_universal(
            "Retries are capped. Every command handler must answer within 3 seconds."
        ));
        assert!(!is_universal("The TTL is refreshed on every write."));
        assert!(!is_universal("We log all requests."));
        assert!(is_universal(
            "Every command handler in the participating services must answer within 3 s."
        ));
    }

    #[test]
    fn negation_in_an_earlier_clause_does_not_count() {
        let doc = "# D\n\nNo login is needed for the health check, and requests are rate limited per key.\n";
        assert_eq!(kinds(doc, "rate limit"), vec![(3, EvidenceKind::Affirmed)]);
    }

    #[test]
    fn open_questions_section_is_deferred_and_code_is_affirmed() {
        let doc = "# D\n\n## Open questions\n\n- A replay tool for events.\n\n## Schema\n\n```sql\nemail TEXT NOT NULL UNIQUE\n```\n";
        assert_eq!(kinds(doc, "replay"), vec![(5, EvidenceKind::Deferred)]);
        assert_eq!(kinds(doc, "unique"), vec![(10, EvidenceKind::Affirmed)]);
    }

    #[test]
    fn blanket_rules_and_goals_are_policies_about_their_subject() {
        let doc = "# D\n\n## Goals\n\n- Timeouts on all outbound calls.\n- Retention of 7 years.\n\n## Design\n\nEach export task must finish within 20 minutes.\nThe TTL is refreshed on every write.\n";
        let spec = Spec::parse(None, doc.to_string());
        assert_eq!(blanket_lines(&spec), vec![5, 10]);
        assert_eq!(
            blanket_subject("Timeouts on all outbound calls."),
            vec!["outbound", "call"]
        );
    }

    #[test]
    fn complementary_bounds_pair_lt_with_ge_only() {
        let pair = |doc: &str| {
            let spec = Spec::parse(None, doc.to_string());
            complementary_bounds(&spec, 1..spec.lines.len() + 1).map(|(a, b, _)| (a, b))
        };
        assert_eq!(
            pair("score `< 50` ships\nscore `>= 50` is held\n"),
            Some((1, 2))
        );
        assert_eq!(
            pair("score <= 50 ships, score > 50 is held\n"),
            Some((1, 1))
        );
        assert_eq!(pair("score <= 50 ships\nscore >= 50 is held\n"), None);
        assert_eq!(pair("latency < 200 ms\nretries >= 3\n"), None);
    }
}
