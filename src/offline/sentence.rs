//! Does a sentence state the proposed design? A trigger word in a sentence
//! that denies it ("the controller does not make any HTTP calls"), imagines
//! it ("if we were to retry forever"), tells what another system or today's
//! system does ("currently the app polls"), states the problem the design
//! removes ("protect the leader from retry storms"), tells a user story, or
//! asks a question is not a design element, and raises nothing.

use crate::ascii_first::AsciiFirst;
use crate::spec::Spec;
use regex::Regex;
use std::sync::LazyLock;

/// Why a sentence is not read as the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// "does not", "MUST NOT", "never", "no", "without", "instead of".
    Negated,
    /// A denial inside the match itself ("the tokens are never written to
    /// logs" read by a `tokens ... logs` trigger). The attacker keeps the
    /// match when its pattern needs the denial ("API keys never expire").
    NegatedInside,
    /// "if we were to", "suppose", "one option would be", "we considered".
    Hypothetical,
    /// "today", "currently", "the existing system", "used to".
    Today,
    /// "like Stripe", "other systems", "unlike".
    OtherSystem,
    /// "to prevent", "protects ... from", "avoids": the problem, not the design.
    Problem,
    /// "As an admin, I want ...".
    UserStory,
    /// The sentence is a question.
    Question,
    /// A person does it ("the customer can retry", "wait for their review"),
    /// not the system.
    Person,
    /// A comment inside a code block: it documents the code, it does not
    /// state the design's behaviour.
    CodeComment,
    /// A "Cons:" / "Drawbacks:" item: a risk of an option, not the design.
    Drawback,
}

impl Reading {
    pub fn describe(self) -> &'static str {
        match self {
            Reading::Negated | Reading::NegatedInside => "negated",
            Reading::Hypothetical => "hypothetical",
            Reading::Today => "today's system",
            Reading::OtherSystem => "another system",
            Reading::Problem => "the problem the design solves",
            Reading::UserStory => "a user story",
            Reading::Question => "a question",
            Reading::Person => "a person's action",
            Reading::CodeComment => "a comment in code",
            Reading::Drawback => "a drawback of an option",
        }
    }
}

/// Negation words that, earlier in the same clause, deny what follows.
static NEGATION: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:not|never|no|without|neither|nor|cannot|none of|no longer|instead of|rather than|avoid(?:s|ing)?|eliminat(?:e|es|ing)|forbid(?:s|den)?|prohibit(?:s|ed)?|disallow(?:s|ed)?)\b|n't\b",
);
/// Negation words that are bounds, not denials ("no more than 3 retries").
static NOT_A_DENIAL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:no|not) (?:more|less|fewer|later|earlier|longer|sooner|greater|smaller) than\b|\bnot only\b|\bno matter\b|\bif not\b|\bwhether or not\b|\bnot yet\b|\b\w+-(?:not|no)-\w+\b|\bno-(?:op|reply|store|cache)\b|\bnot null\b",
);
/// Words after the match that deny it ("retries are disabled", "retry
/// does not apply").
static NEGATION_AFTER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:\w+\W+){0,2}?(?:(?:is|are|will be|must be|should be|gets?)\s+(?:not (?:used|supported|enabled|allowed|planned|needed|required|in scope|part of)|disabled|removed|out of scope|forbidden|prohibited)|(?:do|does|did)(?:n't| not)(?: quite| really| even)? (?:apply|exist|happen)|(?:no longer|never) (?:applies|apply|exists?|happens?))\b",
);
static HYPOTHETICAL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:if we were to|were we to|suppose|imagine|hypothetical(?:ly)?|one option would be|another option would be|we (?:also )?considered|(?:was|were) considered|we could (?:also )?instead|a naive|naively|strawman|(?:as )?an? worst[- ]case (?:example|scenario))\b",
);
/// A deferral after the match, in its own clause: "caching the results could
/// be considered", "a cleanup job might be added in the future". Nothing is
/// built yet.
static DEFERRED_AFTER: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:could|might|may|can) (?:also |later |eventually |still )?be (?:considered|explored|investigated|revisited|evaluated|discussed|added (?:later|in (?:the|a) future)|introduced (?:later|in (?:the|a) future))\b",
);
/// A deferral before the match: "in a future release we may cache ...".
static DEFERRED_BEFORE: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:in (?:the|a) future (?:release|version|iteration|phase|kep|enhancement)s?|(?:could|might|may) (?:\w+ ){0,2}?in (?:the|a) future|as future work|left for (?:later|future work))\b",
);
/// A sentence labelled as left out: "Out of scope: recurring imports",
/// "**Future work:** ...", "Non-goals: ...".
static LEFT_OUT_LABEL: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:out of scope|not in scope|non-?goals?|future work|later phases?|deferred|not planned)\W*:",
);
/// Where the clause after the match ends, for `DEFERRED_AFTER`.
static AFTER_CLAUSE_END: AsciiFirst =
    AsciiFirst::new(r"(?i)[,;:]|\b(?:but|and|while|whereas|because)\b");
/// A dated past event before the match: "release 2.4 introduced a new
/// framework", "in 2021 we added a cache": history, not the proposal.
static DATED_PAST: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:v?\d+\.\d+(?:\.\d+)?|(?:19|20)\d\d)\b(?:,?\s+\w+){0,3}?\s+(?:introduced|added|shipped|released|created|built|implemented)\b|\b(?:was|were|been) (?:introduced|added|shipped|released|created) in (?:v|version |release )?(?:\d+\.\d+|(?:19|20)\d\d)\b",
);
/// "already" right before the match: what exists ("the informers are
/// already cached"), not what is proposed.
static ALREADY_BEFORE: AsciiFirst = AsciiFirst::new(r"(?i)\balready (?:\w+ )?$");
/// Words that date a statement to today's system; `TODAY` reads them
/// anywhere before a match, `TODAY_OPENER` at the start of a paragraph.
macro_rules! today_words {
    () => {
        r"today|currently|at present|at the moment (?:we|our|there (?:is|are))|presently|right now|as of now|historically|in the past"
    };
}
/// "At the moment, ..." (now), not "at the moment the embargo lifts" (when).
macro_rules! at_the_moment_now {
    () => {
        r"at the moment\s*(?:[,;.)]|$)"
    };
}
static TODAY: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b(?:",
    today_words!(),
    r"|previously|used to|no longer|the (?:current|existing|legacy|old|previous) (?:\w+ ){0,2}?(?:system|service|implementation|design|setup|flow|process|approach|behaviou?r|code|version|pipeline|job|mechanism))\b|\b",
    at_the_moment_now!(),
));
/// Words that turn from today's system to the proposal.
macro_rules! contrast_words {
    () => {
        r"but|however|whereas|instead|from now on|going forward"
    };
}
/// A turn from today's system to the proposal inside one sentence.
static CONTRAST: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b(?:",
    contrast_words!(),
    r"|with this (?:proposal|design|change)|under this (?:proposal|design)|in (?:the|this) (?:new )?(?:proposal|design))\b",
));
/// A prose paragraph that opens on today's system ("Today, the API server
/// does not ...", "Currently ..."): its later sentences go on describing
/// it until one turns to the proposal.
static TODAY_OPENER: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)^\W*(?:",
    today_words!(),
    r")\b|^\W*",
    at_the_moment_now!(),
));
/// A sentence that turns from today's system to the proposal: a contrast,
/// the future, or the proposal named.
static TURN_TO_PROPOSAL: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b(?:",
    contrast_words!(),
    r"|will|shall|won't|we'll|new|propos\w*|this (?:kep|proposal|design|change|document|feature|enhancement)|we (?:want|plan|intend|add|introduce)\w*)\b",
));
static OTHER_SYSTEM: AsciiFirst = AsciiFirst::new(
    r"(?:\b(?:[Ll]ike|[Uu]nlike|[Ss]imilar to|[Ii]nspired by|[Aa]s in|[Mm]odel(?:l)?ed (?:on|after))\s+`?[A-Z][\w.-]*|\b(?i:other|many|some|most|existing) (?:systems|tools|projects|products|vendors|implementations|libraries|frameworks|companies|teams|operators)\b)",
);
static PROBLEM: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:prevent(?:s|ing)?|protect(?:s|ing)? (?:\w+ ){0,3}?(?:from|against)|guard(?:s|ing)? against|defend(?:s|ing)? against|mitigat(?:e|es|ing)|reduc(?:e|es|ing) the (?:risk|chance|impact) of|(?:is|are) (?:vulnerable|prone|susceptible) to|suffer(?:s|ed)? from|the problem (?:is|of|with)|leads? to|resulting in|causes?|caused)\b",
);
static USER_STORY: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:as an? |as the )[\w -]{1,40},? i (?:want|need|would like|can|should)\b|\bso that i (?:can|don't|do not)\b|^\W*i (?:want|need|would like) to\b",
);
/// A person right before the verb: "the customer can retry".
static PERSON_BEFORE: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:customers?|users?|admins?|administrators?|(?:support|cx|cs|human|sales|service|help ?desk|live|care|tier[- ]?\d|call[- ]cent(?:er|re)|customer[- ](?:service|support|care)) agents?|operators?|reviewers?|approvers?|humans?|people|persons?|guests?|visitors?|shoppers?|buyers?|sellers?|you|someone|anyone|engineers?|developers?|maintainers?|support staff|account (?:owner|holder)s?|(?:customer |user |signed-in |logged-in )?accounts?)\s+(?:can\s+|may\s+|could\s+|might\s+|then\s+|must\s+|should\s+|will\s+|manually\s+)*$",
);
/// A person the system lets, asks or expects to act ("allows users to
/// migrate data", "asks the user/controller to resubmit it"), or a passive
/// done by hand ("should be manually purged"): the act is theirs.
static PERSON_ASKED: AsciiFirst = AsciiFirst::new(
    r"(?i)(?:\b(?:allow|let|ask|require|enable|expect|instruct|tell|permit)(?:s|ed|ing)?\s+(?:the\s+|a\s+|an\s+|their\s+)?(?:end[- ])?(?:users?|admins?|administrators?|operators?|customers?|cluster[- ]admins?|developers?|maintainers?|owners?|humans?)(?:(?:\s+or\s+|/)\w+)?\s+to\s+|\b(?:be|is|are|get|gets|been)\s+manually\s+|\bby hand\s+)$",
);
/// A person as the object: "wait for their review", "for a human to approve".
static PERSON_AFTER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\s*(?:their|his|her|your|a human|a person|someone|an? (?:reviewer|approver|admin|operator)|the (?:reviewer|approver|admin|operator|user|customer))\b",
);

/// A person word that qualifies a thing: "in the admin console", "the user
/// table", "a customer portal" name no person.
static THING_AFTER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\s*(?:the|an?|their|your) (?:reviewer|approver|admin|operator|user|customer)[- ](?:console|panel|portal|ui|interface|dashboard|page|screen|app|application|tool|api|endpoint|view|table|service|database|db|record|row|id|list|settings|profile|directory|store)s?\b",
);

static QUOTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("\"[^\"]*\"|\u{201c}[^\u{201d}]*\u{201d}|`[^`]*`").unwrap());

/// Where clauses end: a negation before this does not reach the match.
static CLAUSE_BREAK: AsciiFirst = AsciiFirst::new(
    r"(?i)[,;:(]|\b(?:but|and then|then|while|whereas|so|which|that|when|where|if|unless|otherwise|because|until|once|after|before)\b",
);

/// A second finite verb joined by "and": "does not ack the message and
/// requeues it with a delay" denies only the first. A verb in `-s` or `-ed` with
/// an object after it, so a list of nouns ("no tokens and passwords")
/// stays under its negation.
static AND_VERB: AsciiFirst = AsciiFirst::new(
    r"(?i)^and\s+(?:also\s+|instead\s+)?[a-z]+(?:s|ed)\s+(?:the|a|an|it|its|their|them|each|every|all|any|this|that)\b",
);

/// "Cons:", "**Drawbacks:** ...", "- Downside: ...": the label of an
/// option's drawbacks, alone on its line or before the text.
static CONS_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:(?:the|its|their|main|key|known)\s+){0,2}(?:cons|drawbacks?|downsides?|disadvantages?)(?:\s+(?:are|include|of (?:this|that|the) (?:approach|option|alternative|design)))?(?:\*\*|__)?\s*:")
        .unwrap()
});
static PROS_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?:(?:the|its|their|main|key|known)\s+){0,2}(?:pros|advantages?|benefits?|upsides?)(?:\s+(?:are|include|of (?:this|that|the) (?:approach|option|alternative|design)))?(?:\*\*|__)?\s*:",
    )
    .unwrap()
});

/// A list item's first line: `- x`, `* x`, `+ x`, `1. x`.
pub(crate) fn is_list_item(text: &str) -> bool {
    let t = text.trim_start();
    // An ordered item: digits, then ". " (reading only the line's start).
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with("+ ")
        || (digits > 0 && t[digits..].starts_with(". "))
}

/// Line `n` is an option's drawback: it carries a "Cons:" label, or it is a
/// list item (or its wrapped tail) under a "Cons:" label line.
fn under_cons_label(spec: &Spec, n: usize) -> bool {
    let Some(line) = spec.line(n) else {
        return false;
    };
    if CONS_LABEL.is_match(&line.text) {
        return true;
    }
    for m in (n.saturating_sub(12).max(1)..n).rev() {
        let t = spec.lines[m - 1].text.as_str();
        if t.trim().is_empty() {
            continue;
        }
        if CONS_LABEL.is_match(t) {
            return true;
        }
        if PROS_LABEL.is_match(t) || t.trim_start().starts_with('#') {
            return false;
        }
        // Inside the list (an item or an indented continuation) keep looking.
        if !(is_list_item(t) || t.starts_with(' ') || t.starts_with('\t')) {
            return false;
        }
    }
    false
}

/// Where a comment begins on a line of code: `//`, `/*`, a leading `*`
/// (inside a block comment), `#` at the start or after a space, or ` -- `.
fn comment_start(text: &str) -> Option<usize> {
    let trimmed = text.trim_start();
    let indent = text.len() - trimmed.len();
    if trimmed.starts_with('#')
        || trimmed.starts_with("* ")
        || trimmed == "*"
        || trimmed.starts_with("--")
    {
        return Some(indent);
    }
    let b = text.as_bytes();
    (0..b.len())
        .filter(|&i| text.is_char_boundary(i))
        .find(|&i| {
            let prev_ok = i == 0 || b[i - 1] == b' ' || b[i - 1] == b'\t';
            let rest = &text[i..];
            (rest.starts_with("//") && !(i > 0 && b[i - 1] == b':'))
                || rest.starts_with("/*")
                || (prev_ok && (rest.starts_with("# ") || rest.starts_with(" -- ")))
        })
}

/// The sentence around bytes `start..end` of line `n`, and the match's
/// offsets inside it. A sentence that began on an earlier line of the same
/// block is joined to it, so "does not\nretry" is one sentence.
fn sentence_of(spec: &Spec, n: usize, start: usize, end: usize) -> (String, usize, usize) {
    let text = spec.lines[n - 1].text.as_str();
    let ends = |c: char| matches!(c, '.' | '!' | '?');
    // A period inside a word or number (`v1.2`, `api.example.com`) does not end a sentence.
    let boundary_before = |s: &str, upto: usize| -> Option<usize> {
        let b = s.as_bytes();
        (0..upto)
            .rev()
            .find(|&i| ends(b[i] as char) && (i + 1 >= b.len() || b[i + 1] == b' '))
            .map(|i| i + 1)
    };
    let sent_end = {
        let b = text.as_bytes();
        (end..b.len())
            .find(|&i| ends(b[i] as char) && (i + 1 >= b.len() || b[i + 1] == b' '))
            .map(|i| i + 1)
            .unwrap_or(text.len())
    };
    // A sentence that goes on to the next line of the same paragraph keeps
    // its tail, so "a cleanup job ...\nmight be added later" is one sentence.
    let mut suffix = String::new();
    if sent_end == text.len() && !text.trim_end().ends_with(['.', '!', '?', ':']) {
        let line = &spec.lines[n - 1];
        if let Some(next) = spec.lines.get(n)
            && next.block == line.block
            && next.kind == line.kind
        {
            let t = next.text.as_str();
            let b = t.as_bytes();
            let upto = (0..b.len())
                .find(|&i| ends(b[i] as char) && (i + 1 >= b.len() || b[i + 1] == b' '))
                .map(|i| i + 1)
                .unwrap_or(t.len());
            suffix = format!(" {}", t[..upto].trim_start());
        }
    }
    match boundary_before(text, start) {
        Some(s) => (
            format!("{}{suffix}", &text[s..sent_end]),
            start - s,
            end - s,
        ),
        None => {
            // Join the tail of the previous line of the same paragraph.
            let mut prefix = String::new();
            let line = &spec.lines[n - 1];
            if n >= 2 {
                let prev = &spec.lines[n - 2];
                if prev.block == line.block && prev.kind == line.kind {
                    let p = prev.text.as_str();
                    let from = boundary_before(p, p.len().saturating_sub(1)).unwrap_or(0);
                    if !p.trim_end().ends_with(['.', '!', '?', ':']) {
                        prefix = format!("{} ", &p[from..]);
                    }
                }
            }
            let off = prefix.len();
            (
                format!("{prefix}{}{suffix}", &text[..sent_end]),
                start + off,
                end + off,
            )
        }
    }
}

/// How far back a paragraph's opening line is looked for: paragraphs are a
/// few lines, and a bound keeps each match's reading constant-time (a
/// spec of one huge paragraph must not be reread for every match).
const TODAY_PARAGRAPH_LINES: usize = 12;

/// Whether the match at byte `start` of line `n` sits in a prose paragraph
/// that opened on today's system, with no turn to the proposal in the
/// sentences before the match's own (which `TODAY` and `CONTRAST` read).
fn in_todays_paragraph(spec: &Spec, n: usize, start: usize) -> bool {
    let line = &spec.lines[n - 1];
    if line.kind != crate::spec::LineKind::Prose {
        return false;
    }
    let first = n
        - (1..n)
            .rev()
            .take_while(|&k| spec.lines[k - 1].block == line.block)
            .take(TODAY_PARAGRAPH_LINES + 1)
            .count();
    if n - first > TODAY_PARAGRAPH_LINES {
        return false;
    }
    let mut para = String::new();
    for k in first..n {
        para.push_str(&spec.lines[k - 1].text);
        para.push(' ');
    }
    para.push_str(line.text.get(..start).unwrap_or_default());
    // The sentences before the match's own: up to the last sentence end.
    let b = para.as_bytes();
    let Some(cut) = (0..b.len())
        .rev()
        .find(|&i| matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1) == Some(&b' '))
    else {
        return false;
    };
    let before = &para[..=cut];
    TODAY_OPENER.is_match(before) && !TURN_TO_PROPOSAL.is_match(before)
}

/// How the sentence holding bytes `start..end` of line `n` reads, when it
/// does not state the proposed design; `None` when it does.
pub fn not_design(spec: &Spec, n: usize, start: usize, end: usize) -> Option<Reading> {
    if let Some(line) = spec.line(n)
        && line.kind == crate::spec::LineKind::Code
        && comment_start(&line.text).is_some_and(|c| c <= start)
    {
        return Some(Reading::CodeComment);
    }
    if under_cons_label(spec, n) {
        return Some(Reading::Drawback);
    }
    let (sentence, s, e) = sentence_of(spec, n, start, end);
    let before = &sentence[..s.min(sentence.len())];
    let after = &sentence[e.min(sentence.len())..];
    if sentence.trim_end().ends_with('?') {
        return Some(Reading::Question);
    }
    if USER_STORY.is_match(&sentence) {
        return Some(Reading::UserStory);
    }
    let mut clause_start = CLAUSE_BREAK.find_last(before).map_or(0, |m| m.end);
    // The verb after "and" may be the match's own first word: read from
    // each "and" of the clause, the last one first.
    let b = before.as_bytes();
    if let Some(at) = (clause_start..b.len().saturating_sub(2))
        .rev()
        .filter(|&i| b[i..i + 3].eq_ignore_ascii_case(b"and"))
        .filter(|&i| i == 0 || !b[i - 1].is_ascii_alphanumeric())
        .find(|&i| AND_VERB.is_match(&sentence[i..]))
    {
        clause_start = at + 3;
    }
    let clause = &before[clause_start.min(before.len())..];
    let clause_clean = NOT_A_DENIAL.replace_all(clause, " ");
    // A long trigger match can hold the denial itself ("the token ... are
    // never written to logs").
    // Quoted text is what the system says, not a denial ("shows \"No account\"").
    let unquoted = QUOTED.replace_all(&sentence, |c: &regex::Captures| " ".repeat(c[0].len()));
    let inside = unquoted
        .get(s.min(sentence.len())..e.min(sentence.len()))
        .unwrap_or_default();
    let inside = NOT_A_DENIAL.replace_all(inside, " ");
    let inner_denial = NEGATION
        .find(&inside)
        .is_some_and(|m| m.start > 0 && !CLAUSE_BREAK.is_match(&inside[..m.start]));
    if NEGATION.is_match(&clause_clean) || NEGATION_AFTER.is_match(after) {
        return Some(Reading::Negated);
    }
    // "the per-user quota" names no person: a person word joined to the
    // word before it by a hyphen qualifies a thing.
    let person_before = PERSON_BEFORE
        .find(clause)
        .is_some_and(|m| !clause[..m.start].ends_with('-'));
    if person_before
        || PERSON_ASKED.is_match(clause)
        || (PERSON_AFTER.is_match(after) && !THING_AFTER.is_match(after))
    {
        return Some(Reading::Person);
    }
    let after_clause = match AFTER_CLAUSE_END.find(after) {
        Some(m) => &after[..m.start],
        None => after,
    };
    if HYPOTHETICAL.is_match(before)
        || LEFT_OUT_LABEL.is_match(before)
        || DEFERRED_BEFORE.is_match(before)
        || DEFERRED_AFTER.is_match(after_clause)
    {
        return Some(Reading::Hypothetical);
    }
    // "Today every customer is on HTTP, but the new design ...": a contrast
    // after the word that dates the sentence ends what it dates.
    // A quoted word is a name, not a date: '"Today" comes from the clock'.
    let before_unquoted = unquoted.get(..s.min(unquoted.len())).unwrap_or(before);
    let today = TODAY
        .find_last(before_unquoted)
        .is_some_and(|m| !CONTRAST.is_match(&before_unquoted[m.end..]));
    if today || ALREADY_BEFORE.is_match(before) || DATED_PAST.is_match(before) {
        return Some(Reading::Today);
    }
    if !TURN_TO_PROPOSAL.is_match(&sentence) && in_todays_paragraph(spec, n, start) {
        return Some(Reading::Today);
    }
    if OTHER_SYSTEM.is_match(before) {
        return Some(Reading::OtherSystem);
    }
    if PROBLEM.is_match(clause) {
        return Some(Reading::Problem);
    }
    if inner_denial {
        return Some(Reading::NegatedInside);
    }
    None
}

/// `text` with every denial word in `range` blanked (same length), to ask
/// whether a trigger still matches there without it. Bounds ("no more
/// than") are not denials and stay.
pub fn without_denials(text: &str, range: std::ops::Range<usize>) -> String {
    let mut out = text.to_string();
    let Some(inside) = text.get(range.clone()) else {
        return out;
    };
    for m in denials(inside) {
        let at = range.start + m.start..range.start + m.end;
        out.replace_range(at.clone(), &" ".repeat(at.len()));
    }
    out
}

/// The denial words of `text` ("no", "without", "n't", "never"...), as
/// byte ranges, leaving out the bounds that look like them ("no more
/// than", "not only").
pub fn denials(text: &str) -> Vec<std::ops::Range<usize>> {
    let spans = |p: &AsciiFirst| -> Vec<std::ops::Range<usize>> {
        p.captures_iter(text)
            .iter()
            .filter_map(|g| g.get(0).map(|m| m.range()))
            .collect()
    };
    let bounds = spans(&NOT_A_DENIAL);
    spans(&NEGATION)
        .into_iter()
        .filter(|m| !bounds.iter().any(|b| b.start < m.end && m.start < b.end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_start_with_a_marker_or_digits_and_a_full_stop() {
        for item in ["- x", "* x", "+ x", "12. x", "  3. x", "1. "] {
            assert!(is_list_item(item), "{item:?}");
        }
        let long = format!("Section {} 2. x", "word ".repeat(50));
        for not in [
            "v1. x",
            "1.5 x",
            ". x",
            "12.x",
            "x. 1. y",
            "-x",
            long.as_str(),
        ] {
            assert!(!is_list_item(not), "{not:?}");
        }
    }

    /// How word `w` on line `n` of `spec` reads.
    fn reading_at(spec: &Spec, n: usize, w: &str) -> Option<Reading> {
        let l = spec.lines[n - 1].text.to_lowercase();
        let s = l.find(w).unwrap();
        not_design(spec, n, s, s + w.len())
    }

    fn reading(line: &str, word: &str) -> Option<Reading> {
        let spec = Spec::parse(None, format!("# T\n\n## Design\n\n{line}\n"));
        let start = line.to_lowercase().find(word).expect("word in line");
        not_design(&spec, 5, start, start + word.len())
    }

    #[test]
    fn design_statements_are_design() {
        assert_eq!(reading("The worker calls the Billing API.", "calls"), None);
        assert_eq!(
            reading("Failed sends are retried immediately.", "retried"),
            None
        );
        assert_eq!(
            reading(
                "Retries are capped at no more than 3 attempts, then we retry.",
                "retry"
            ),
            None
        );
        assert_eq!(
            reading("If the call fails, the worker retries.", "retries"),
            None
        );
    }

    #[test]
    fn negations_questions_and_others_are_not() {
        use Reading::*;
        assert_eq!(
            reading("The controller does not make any HTTP calls.", "http call"),
            Some(Negated)
        );
        assert_eq!(
            reading("Clients MUST NOT retry on 400.", "retry"),
            Some(Negated)
        );
        assert_eq!(
            reading("Interval and retry don't quite apply to pings.", "retry"),
            Some(Negated)
        );
        assert_eq!(reading("Should the worker retry?", "retry"), Some(Question));
        assert_eq!(
            reading("Currently the app polls the server every minute.", "polls"),
            Some(Today)
        );
        assert_eq!(
            reading("Like Stripe, the sender retries for three days.", "retries"),
            Some(OtherSystem)
        );
        assert_eq!(
            reading("This protects the leader from retry storms.", "retry"),
            Some(Problem)
        );
        assert_eq!(
            reading("As an admin, I want to retry failed exports.", "retry"),
            Some(UserStory)
        );
        assert_eq!(
            reading(
                "If we were to retry forever, the queue would grow.",
                "retry"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading(
                "Out of scope: deals import, scheduled recurring imports, exports.",
                "recurring"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading("**Future work:** retry failed exports.", "retry"),
            Some(Hypothetical)
        );
        assert_eq!(
            reading(
                "As a worst-case example, if an authorizer ran Python, then os.system would run.",
                "os.system"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading(
                "If payment fails the customer can retry until the hold expires.",
                "retry"
            ),
            Some(Person)
        );
        assert_eq!(
            reading(
                "The author waits for their review before merging.",
                "waits for"
            ),
            Some(Person)
        );
        // The attacker then asks whether the pattern needs the denial.
        assert_eq!(
            reading(
                "The token and the email are never written to logs.",
                "token and the email are never written"
            ),
            Some(NegatedInside)
        );
    }

    #[test]
    fn comments_in_code_are_not_design_but_code_is() {
        let doc = "# T\n\n## Design\n\n```go\n// Retries forever on failure.\nretries := 3 // retry count\n```\n";
        let spec = Spec::parse(None, doc.to_string());
        let at = |n: usize, w: &str| reading_at(&spec, n, w);
        assert_eq!(at(6, "retries"), Some(Reading::CodeComment));
        assert_eq!(at(7, "retry"), Some(Reading::CodeComment));
        assert_eq!(at(7, "retries"), None);
    }

    #[test]
    fn deferred_and_existing_things_are_not_the_design() {
        use Reading::*;
        assert_eq!(
            reading(
                "Memoizing the lookups could be considered for later needs.",
                "memoizing"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading(
                "A nightly sweep job might be added in the future.",
                "nightly sweep job"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading(
                "In a future release the uploader may retry the upload.",
                "retry"
            ),
            Some(Hypothetical)
        );
        assert_eq!(
            reading("The listers are already cached in memory.", "cached"),
            Some(Today)
        );
        assert_eq!(
            reading(
                "Release 2.4 introduced a new framework for export hooks.",
                "framework"
            ),
            Some(Today)
        );
        assert_eq!(
            reading("We will add a new framework for export hooks.", "framework"),
            None
        );
        // A deferral in another clause leaves the design statement standing.
        assert_eq!(
            reading(
                "The worker retries at once, and jitter could be considered later.",
                "retries"
            ),
            None
        );
    }

    #[test]
    fn software_agents_qualified_things_and_hyphenated_names_are_design() {
        // A software agent acts for the system; a support agent is a person.
        assert_eq!(
            reading("The backup agent retries the upload.", "retries"),
            None
        );
        assert_eq!(reading("The agent caches the credentials.", "caches"), None);
        assert_eq!(
            reading("Support agents can refund any amount.", "refund"),
            Some(Reading::Person)
        );
        // "per-user" qualifies the quota; no user acts.
        assert_eq!(reading("The per-user quota resets hourly.", "quota"), None);
        // "the admin console" is a place, "wait for the admin" a person.
        assert_eq!(
            reading(
                "Prices are edited both in the admin console and in the app.",
                "edited both in"
            ),
            None
        );
        assert_eq!(
            reading("The job waits for the admin to approve it.", "waits for"),
            Some(Reading::Person)
        );
        // A column's NOT NULL is a constraint, not a denial.
        assert_eq!(reading("hours REAL NOT NULL,", "hours real not null"), None);
        // "do-not-mail" is a list's name, not a denial.
        assert_eq!(
            reading(
                "The do-not-mail list is loaded into memory at start-up.",
                "loaded"
            ),
            None
        );
        assert_eq!(
            reading("The list is not loaded into memory.", "loaded"),
            Some(Reading::Negated)
        );
    }

    #[test]
    fn denials_are_blanked_inside_a_match_only() {
        let t = "Keys never expire; they are not rotated.";
        let plain = without_denials(t, 0..17);
        assert_eq!(plain, "Keys       expire; they are not rotated.");
        // A bound is no denial and stays.
        let t = "No more than 3 tries.";
        assert_eq!(without_denials(t, 0..t.len()), t);
    }

    #[test]
    fn a_paragraph_that_opens_on_today_goes_on_describing_it() {
        let spec = Spec::parse(
            None,
            "# T\n\n## Design\n\nToday, the gateway does not sign its requests. Any client\ncan send requests to the webhook. Teams retry by hand.\n\nCurrently exports run nightly. The new worker calls the billing API.\n\nToday exports run nightly. With this proposal the worker calls the ledger API.\n\nThe worker calls the tax API. Today it has no timeout.\n\n- Today exports run nightly.\n- The worker calls the fraud API.\n"
                .to_string(),
        );
        // Later sentences of a "Today, ..." paragraph, also across a line.
        assert_eq!(reading_at(&spec, 6, "send requests"), Some(Reading::Today));
        assert_eq!(reading_at(&spec, 6, "retry"), Some(Reading::Today));
        // A turn to the proposal (the new thing, a contrast) ends it.
        assert_eq!(reading_at(&spec, 8, "calls the billing"), None);
        assert_eq!(reading_at(&spec, 10, "calls the ledger"), None);
        // "Today" later in the paragraph dates nothing before it, and list
        // items are each their own statement.
        assert_eq!(reading_at(&spec, 12, "calls the tax"), None);
        assert_eq!(reading_at(&spec, 15, "calls the fraud"), None);
        // The opening line is looked for only so far back.
        let mut long =
            String::from("# T\n\n## Design\n\nToday, the gateway does not sign its requests.\n");
        for _ in 0..TODAY_PARAGRAPH_LINES {
            long.push_str("It logs each one.\n");
        }
        long.push_str("It sends requests to the webhook.\n");
        let spec = Spec::parse(None, long);
        let last = 5 + TODAY_PARAGRAPH_LINES + 1;
        assert_eq!(reading_at(&spec, last - 1, "logs"), Some(Reading::Today));
        assert_eq!(reading_at(&spec, last, "sends requests"), None);
    }

    #[test]
    fn a_contrast_ends_what_today_dates() {
        assert_eq!(
            reading("Today every customer uses HTTP.", "http"),
            Some(Reading::Today)
        );
        assert_eq!(
            reading(
                "Today every customer uses HTTP, but we also build MQTT and SMTP transports.",
                "mqtt"
            ),
            None
        );
    }

    #[test]
    fn at_the_moment_dates_only_as_now_not_as_when() {
        assert_eq!(
            reading("At the moment, the exporter retries forever.", "retries"),
            Some(Reading::Today)
        );
        assert_eq!(
            reading("At the moment we retry forever.", "retry"),
            Some(Reading::Today)
        );
        // "at the moment X happens" is a time in the design, not today.
        assert_eq!(
            reading(
                "At the moment the embargo lifts, the article is published at its public URL.",
                "published"
            ),
            None
        );
    }

    #[test]
    fn what_the_system_lets_or_asks_a_person_to_do_is_theirs() {
        use Reading::*;
        assert_eq!(
            reading(
                "The new flag allows users to migrate their data.",
                "migrate"
            ),
            Some(Person)
        );
        assert_eq!(
            reading(
                "The gateway returns a 409 to ask the user/agent to resubmit the form.",
                "resubmit"
            ),
            Some(Person)
        );
        assert_eq!(
            reading("Stale records should be manually purged.", "purged"),
            Some(Person)
        );
        // The system's own act stays design.
        assert_eq!(
            reading("The flag allows the worker to retry the upload.", "retry"),
            None
        );
    }

    #[test]
    fn an_options_cons_are_not_the_design() {
        let doc = "# T\n\n## Design\n\n* **Cons:** the worker retries forever.\n\nOption B:\n\nCons:\n- Needs a home-made parser.\n  The client retries on every 500.\n\nPros:\n- The worker retries once.\n";
        let spec = Spec::parse(None, doc.to_string());
        let at = |n: usize, w: &str| reading_at(&spec, n, w);
        assert_eq!(at(5, "retries"), Some(Reading::Drawback));
        assert_eq!(at(10, "parser"), Some(Reading::Drawback));
        assert_eq!(at(11, "retries"), Some(Reading::Drawback));
        assert_eq!(at(14, "retries"), None);
        // A label written as a sentence: "The downsides are:".
        let doc = "# T\n\n## Design\n\nThe downsides are:\n\n- The client retries on every 500.\n\nThe benefits of this approach:\n\n- The worker retries once.\n";
        let spec = Spec::parse(None, doc.to_string());
        let at = |n: usize, w: &str| reading_at(&spec, n, w);
        assert_eq!(at(7, "retries"), Some(Reading::Drawback));
        assert_eq!(at(11, "retries"), None);
    }

    #[test]
    fn a_negation_in_another_clause_does_not_count() {
        assert_eq!(
            reading("No login is needed, and the worker calls the API.", "calls"),
            None
        );
        // A second verb joined by "and" is not denied with the first.
        assert_eq!(
            reading(
                "The consumer does not ack the message and requeues it with a delay until it succeeds.",
                "requeues"
            ),
            None
        );
        // A quoted word is a name, not a date.
        assert_eq!(
            reading(
                "\"Today\" means the kiosk's clock, and the kiosk checks each ticket against that date.",
                "checks"
            ),
            None
        );
        // A list of nouns stays under its negation.
        assert_eq!(
            reading(
                "The service never logs tokens and passwords in plain text.",
                "passwords"
            ),
            Some(Reading::Negated)
        );
    }

    proptest::proptest! {
        #[test]
        fn patterns_read_non_ascii_text_as_unicode_does(text in crate::ascii_first::sample_texts()) {
            for p in [
                &NEGATION, &NEGATION_AFTER, &HYPOTHETICAL, &DEFERRED_AFTER, &DEFERRED_BEFORE,
                &AFTER_CLAUSE_END, &ALREADY_BEFORE, &DATED_PAST, &TODAY, &OTHER_SYSTEM, &PROBLEM,
                &PERSON_BEFORE, &PERSON_ASKED, &PERSON_AFTER, &THING_AFTER, &CLAUSE_BREAK, &CONTRAST,
                &AND_VERB,
            ] {
                proptest::prop_assert!(p.agrees_on(&text), "{text:?}");
            }
        }
    }

    #[test]
    fn a_sentence_wrapped_over_two_lines_is_read_whole() {
        let spec = Spec::parse(
            None,
            "# T\n\n## Design\n\nThe controller does not\nmake any HTTP calls.\n".to_string(),
        );
        assert_eq!(not_design(&spec, 6, 9, 19), Some(Reading::Negated));
        // The tail on the next line counts too.
        let spec = Spec::parse(
            None,
            "# T\n\n## Design\n\nA nightly sweep job that prunes old bundles\nmight be added in the future.\n".to_string(),
        );
        assert_eq!(not_design(&spec, 5, 2, 19), Some(Reading::Hypothetical));
    }
}
