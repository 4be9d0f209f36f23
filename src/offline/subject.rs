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

/// Does `text` mention any of `terms` (lowercased)? A term counts where it
/// starts a word ("go" is not in "goals", "api" not in "rapid"); a term of
/// up to four characters must also end one, save a plural `s` ("pos" is
/// not in "post"), while a longer one may run on ("webhook" in "webhooks",
/// "process" in "processing").
pub fn mentions_any(text: &str, terms: &[String]) -> bool {
    let lower = text.to_lowercase();
    terms.iter().any(|t| !t.is_empty() && mentions(&lower, t))
}

fn mentions(lower: &str, term: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let starts_word = term.chars().next().is_some_and(word);
    let ends_word = term.chars().last().is_some_and(word) && term.chars().count() <= 4;
    lower.match_indices(term).any(|(at, _)| {
        let before_ok = !starts_word || !lower[..at].chars().next_back().is_some_and(word);
        let rest = &lower[at + term.len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let after_ok = !ends_word || !rest.chars().next().is_some_and(word);
        before_ok && after_ok
    })
}

static ROUTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/[^\s`'\x22),;|]*").unwrap()
});
/// Does a title's subject name a thing by itself: a route (`POST
/// /orders`), a path or a code span? A phrase ("without sign-in") does not.
pub fn names_itself(what: &str) -> bool {
    let what = what.trim_start();
    what.starts_with(['`', '/']) || ROUTE.find(what).is_some_and(|m| m.start() == 0)
}

static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:https?|ftp)://\S+|\bwww\.\S+").unwrap());
static PERCENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"%[0-9A-Fa-f]{2}").unwrap());
/// Markdown syntax a match can cut through: the `](target)` of a link
/// (also when the cut leaves it unclosed), brackets, emphasis markers and
/// backslash escapes.
static MARKUP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\]\([^)\s]*\)?|[\[\]]|\*+|\\").unwrap());

/// Words that cannot end a subject: a phrase ending in one was cut short.
const DANGLING: &[&str] = &[
    "a", "an", "the", "for", "to", "of", "on", "in", "at", "by", "with", "from", "into", "onto",
    "until", "via", "over", "and", "or", "its", "their", "our", "each", "every", "any", "all",
    "per", "is", "are", "it", "they", "this", "that", "them", "last", "first", "same", "previous",
    "latest", "whole", "entire", "next", "own", "new",
];

/// A readable subject for a concern's title from the trigger match
/// `range` of `text`: the full route when the match touches one
/// (`POST /api/invites/accept`, never `POST /`), a phrase completed to its
/// noun when the match stopped at a preposition or article ("wait for the
/// payment callback", not "wait for"), no URLs or percent-encoded bytes,
/// balanced backticks, at most about 60 characters.
pub fn clean(text: &str, range: std::ops::Range<usize>) -> String {
    if let Some(m) = ROUTE
        .find_iter(text)
        .find(|m| m.start() < range.end.max(range.start + 1) && range.start < m.end())
    {
        // The route, not its query string: `GET /v1/items?limit=50` is
        // about `GET /v1/items`, and a long query must not push the path
        // past the length limit (leaving a bare `GET`).
        let route = m.as_str().split(['?', '#']).next().unwrap_or_default();
        let tidied = tidy(route);
        return if tidied.contains('/') {
            tidied
        } else {
            route.trim_end_matches(['.', ',', ':']).to_string()
        };
    }
    if let Some(span) = code_span_at(text, range.start) {
        return tidy(span);
    }
    let mut s = text.get(range.clone()).unwrap_or_default().to_string();
    let mut rest = text.get(range.end..).unwrap_or_default();
    let mut added = 0;
    // Words that start a new clause: the noun phrase ends before them.
    const STOP: &[&str] = &[
        "and", "or", "but", "then", "which", "that", "when", "is", "are", "was", "were", "before",
        "after", "so", "if", "while", "because", "until", "with", "to", "in", "on",
    ];
    let mut complete_noun = false;
    while added < 5 {
        let last = s
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !DANGLING.contains(&last.as_str()) {
            // One more word completes a compound noun ("payment callback").
            if added == 0 || complete_noun {
                break;
            }
            complete_noun = true;
            let next = rest.split_whitespace().next().unwrap_or("");
            let bare = next.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
            if bare.is_empty()
                || !bare.chars().all(|c| c.is_alphabetic() || c == '-')
                || STOP.contains(&bare.to_ascii_lowercase().as_str())
                || !rest.starts_with(' ')
            {
                break;
            }
        }
        let trimmed = rest.trim_start();
        let Some(word) = trimmed.split_whitespace().next() else {
            break;
        };
        let word_end = word
            .find([',', '.', ';', ':', '(', ')', '?', '!'])
            .unwrap_or(word.len());
        if word_end == 0 {
            break;
        }
        s.push(' ');
        s.push_str(&word[..word_end]);
        rest = &trimmed[word_end..];
        added += 1;
        if word_end < word.len() {
            break;
        }
    }
    as_noun_phrase(&tidy(&s))
}

/// When the match opens with a copula ("is down", "are unreachable",
/// "was slow"), the noun phrase before it in its clause: "if their API is
/// slow or unreachable" gives "their API", for a title that needs a
/// noun ("No timeout on their API", not "No timeout on is down"). `None`
/// when the match opens otherwise, or when no noun stands before it in
/// the clause (nothing, or only a pronoun).
pub fn subject_before_verb(text: &str, range: std::ops::Range<usize>) -> Option<String> {
    // Not "get": `GET /users` opens on a method.
    const COPULA: &[&str] = &["is", "are", "was", "were"];
    const CLAUSE_OPENERS: &[&str] = &[
        "if", "when", "whenever", "while", "once", "unless", "because", "since", "whether", "and",
        "or", "but", "so", "then", "where",
    ];
    let first = text.get(range.clone())?.split_whitespace().next()?;
    if !COPULA.contains(&first.to_ascii_lowercase().as_str()) {
        return None;
    }
    let before = text.get(..range.start)?;
    let clause = before
        .rfind([',', ';', ':', '(', '.', '!', '?'])
        .map_or(before, |i| &before[i + 1..]);
    let words: Vec<&str> = clause.split_whitespace().collect();
    let opener = words
        .iter()
        .rposition(|w| CLAUSE_OPENERS.contains(&w.to_ascii_lowercase().as_str()))
        .map_or(0, |i| i + 1);
    let noun = &words[opener..];
    if noun.is_empty() || noun.len() > 5 {
        return None;
    }
    // A list marker ("- if the cache is down") is not part of it.
    let noun: Vec<&str> = noun
        .iter()
        .copied()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    const PRONOUNS: &[&str] = &[
        "it", "they", "this", "that", "these", "those", "which", "who", "what", "there", "he",
        "she", "we", "you", "i",
    ];
    if noun.len() == 1 && PRONOUNS.contains(&noun[0].to_ascii_lowercase().as_str()) {
        return None;
    }
    let subject = tidy(&noun.join(" "));
    (!subject.is_empty()).then_some(subject)
}

/// Words for one exchange with another component: a light verb before one
/// ("makes discovery calls", "send a request") adds nothing to the subject.
const EXCHANGE_WORDS: &[&str] = &["call", "request", "rpc", "quer"];

/// A subject that starts with a verb, told as the thing a title is about
/// ("No timeout on calls to the billing API", not "on invokes the billing
/// API"): "call(s)/invoke(s)/contact(s) X" is "calls to X", "connect(s) to
/// X" is "connections to X", "make(s)/send(s)/issue(s)/perform(s) ...
/// requests" drops the light verb, "wait(s) for/until X" is "waiting for
/// X". Anything else is kept as written.
fn as_noun_phrase(s: &str) -> String {
    let Some((first, rest)) = s.split_once(' ') else {
        return s.to_string();
    };
    let rest = rest.trim_start();
    let starts = |w: &str| rest.to_ascii_lowercase().starts_with(w);
    match first.to_ascii_lowercase().as_str() {
        "call" | "calls" | "invoke" | "invokes" | "contact" | "contacts"
            if !starts("to ") && !starts("into ") && !starts("for ") =>
        {
            format!("calls to {rest}")
        }
        "connect" | "connects" if starts("to ") => format!("connections {rest}"),
        "make" | "makes" | "send" | "sends" | "issue" | "issues" | "perform" | "performs"
            if rest.split_whitespace().take(4).any(|w| {
                EXCHANGE_WORDS
                    .iter()
                    .any(|x| w.to_ascii_lowercase().starts_with(x))
            }) =>
        {
            rest.to_string()
        }
        "wait" | "waits" if starts("for ") || starts("until ") || starts("on ") => {
            format!("waiting {rest}")
        }
        _ => s.to_string(),
    }
}

/// Whether byte `at` of `text` is inside a backticked code span (an odd
/// number of backticks before it).
fn in_code_span(text: &str, at: usize) -> bool {
    text.get(..at)
        .is_some_and(|before| before.matches('`').count() % 2 == 1)
}

/// The backticked name (a code span without spaces, with its backticks)
/// that byte `at` of `text` falls in, if any: a match that starts inside `float64` names `float64`,
/// not the prose up to the next code span ("float64` and stored as `").
fn code_span_at(text: &str, at: usize) -> Option<&str> {
    if !in_code_span(text, at) {
        return None;
    }
    let open = text[..at].rfind('`')?;
    let close = at + text.get(at..)?.find('`')?;
    let span = &text[open..=close];
    // Only a name (`float64`, `rate_to_usd`): a long expression is better
    // cut around the match as before.
    (span.len() > 2 && span.len() <= 42 && !span.contains(char::is_whitespace)).then_some(span)
}

/// Punctuation a cut leaves at the ends of a subject.
const EDGE: &[char] = &[',', '.', ';', ':', '-', '*', '|', '"', '\''];

/// Words that open a new clause, in lower case as prose writes them: a
/// subject cut right after one ("its own Kafka cluster, which") ends before
/// it. Only for trimming the end: unlike `DANGLING`, they never ask
/// `clean` for more words.
const CLAUSE_OPENERS: &[&str] = &[
    "which", "whereas", "whose", "who", "where", "while", "but", "because", "although", "though",
    "unless",
];

/// `s` without the punctuation a cut leaves at its ends. Its parentheses
/// are balanced here (`tidy` drops unbalanced ones), so a closing one at the
/// end closes one inside (`VARCHAR(255)`, `split(" ")`) and stays; only a
/// pair around the whole subject goes.
fn trim_edges(s: &str) -> &str {
    let mut s = s.trim();
    loop {
        let before = s.len();
        s = s.trim_matches(EDGE).trim();
        if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')'))
            && balanced(inner)
        {
            s = inner.trim();
        }
        if s.len() == before {
            return s;
        }
    }
}

/// Whether every parenthesis in `s` closes one opened before it.
fn balanced(s: &str) -> bool {
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return false,
            ')' => depth -= 1,
            _ => {}
        }
    }
    depth == 0
}

fn tidy(s: &str) -> String {
    let s = URL.replace_all(s, " ");
    let s = PERCENT.replace_all(&s, "");
    let s = MARKUP.replace_all(&s, "");
    // About 60 characters of whole words first, so that what the cut
    // leaves at the end (a dangling "and", half a code span) is tidied too.
    let mut words: Vec<&str> = Vec::new();
    let mut len = 0;
    for w in s.split_whitespace() {
        if len + w.chars().count() > 60 && !words.is_empty() {
            break;
        }
        len += w.chars().count() + usize::from(!words.is_empty());
        words.push(w);
    }
    // The last word as the title would end: without the comma the trim
    // below drops ("in MySQL and," ends in "and").
    let ends_cut = |w: &&str| {
        let w = w.trim_end_matches(EDGE);
        // As written: an upper-case `WHERE` is SQL, not a relative clause.
        DANGLING.contains(&w.to_ascii_lowercase().as_str()) || CLAUSE_OPENERS.contains(&w)
    };
    while words.len() > 1 && words.last().is_some_and(ends_cut) {
        words.pop();
    }
    let mut s = words.join(" ");
    if s.matches('`').count() % 2 == 1 {
        s = s.replace('`', "");
    }
    if s.matches('(').count() != s.matches(')').count() {
        s = s.replace(['(', ')'], "");
    }
    // A removed URL or backtick can leave two spaces in a row.
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = trim_edges(&s);
    if s.matches('"').count() % 2 == 1 {
        s.replace('"', "")
    } else {
        s.to_string()
    }
}

/// The component named within the few words after byte `from` of `text`:
/// a backticked name or a capitalised word, as written.
pub fn named_after(text: &str, from: usize) -> Option<String> {
    let mut rest = text.get(from..)?;
    if in_code_span(text, from) {
        // `from` is inside a code span: what follows its closing backtick.
        rest = rest.get(rest.find('`')? + 1..)?;
    }
    let window: String = rest.split_inclusive(' ').take(5).collect();
    let stop = window
        .find(['.', ',', ';', ':', '(', ')', '?', '!'])
        .unwrap_or(window.len());
    let window = &window[..stop];
    if let Some(c) = BACKTICK.captures(window) {
        return Some(format!("`{}`", &c[1]));
    }
    PROPER
        .find_iter(window)
        .map(|m| m.as_str())
        .find(|w| w.len() >= 2 && !COMMON.contains(&w.to_lowercase().as_str()))
        .map(str::to_string)
}

/// `s` with its first letter upper-cased ("no timeout" -> "No timeout").
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_paths_and_code_spans_name_themselves() {
        for named in [
            "POST /api/invites",
            "DELETE /a/{id}",
            "`/healthz`",
            "/metrics",
        ] {
            assert!(names_itself(named), "{named}");
        }
        for unnamed in [
            "without sign-in",
            "Unauthenticated",
            "public route",
            "POST",
            "endpoint, /x",
            "\u{a0}\u{3000}GET without a path",
        ] {
            assert!(!names_itself(unnamed), "{unnamed}");
        }
    }

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
    fn a_term_is_mentioned_only_where_a_word_starts() {
        let t = |terms: &[&str]| terms.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Inside another word: not a mention.
        assert!(!mentions_any(
            "Non-goals: dark mode and exports",
            &t(&["go"])
        ));
        assert!(!mentions_any("a rapid rollout", &t(&["api"])));
        assert!(!mentions_any("we post the result", &t(&["pos"])));
        // A word of its own, after punctuation, or its plural.
        assert!(mentions_any("an interpreter in Go.", &t(&["go"])));
        assert!(mentions_any("behind photos-api today", &t(&["api"])));
        assert!(mentions_any("two APIs", &t(&["api"])));
        // A longer term may run on into a longer word.
        assert!(mentions_any("the webhooks endpoint", &t(&["webhook"])));
        assert!(mentions_any("while processing", &t(&["process"])));
        // Terms that start with punctuation match as they are.
        assert!(mentions_any(
            "calls POST /v1/events/batch",
            &t(&["/v1/events"])
        ));
    }

    #[test]
    fn sentence_initial_words_are_not_components() {
        let c = components("Retries happen. Uploads go to S3.");
        assert_eq!(c, vec!["s3".to_string()]);
    }
    #[test]
    fn a_match_opening_on_the_verb_is_about_the_words_before_it() {
        let before = |t: &str, verb: &str| {
            let at = t.find(verb).unwrap();
            subject_before_verb(t, at..t.len())
        };
        let t = "- if the ledger API is unreachable when the job runs: it waits";
        assert_eq!(
            before(t, "is unreachable").as_deref(),
            Some("the ledger API")
        );
        let t = "For partners: if their endpoint is slow or unreachable, the worker waits";
        assert_eq!(before(t, "is slow").as_deref(), Some("their endpoint"));
        // Nothing, or only a pronoun, before the verb in its clause.
        assert_eq!(before("Is down for hours, then waits", "Is down"), None);
        assert_eq!(before("and it is never recomputed", "is never"), None);
        // A match opening on another word is not this case.
        assert_eq!(before("the worker waits for the bank", "waits"), None);
    }

    #[test]
    fn clean_subjects_are_whole_routes_and_noun_phrases() {
        let t = "The app calls `POST /api/invites/accept` when the user clicks.";
        let at = t.find("POST").unwrap();
        assert_eq!(clean(t, at..at + 6), "POST /api/invites/accept");
        let t = "The worker waits for the payment callback, then ships.";
        let at = t.find("waits for").unwrap();
        assert_eq!(clean(t, at..at + 9), "waiting for the payment callback");
        let t = "fetches https://example.com/a%20b and renders the page";
        assert_eq!(clean(t, 0..t.len()), "fetches and renders the page");
        assert_eq!(capitalise("no timeout on x"), "No timeout on x");
        let t = "Rates are parsed into `float64` and stored as `rate_to_usd` per currency.";
        let at = t.find("float64").unwrap();
        assert_eq!(clean(t, at..t.find("rate_to").unwrap()), "`float64`");
        // A match that starts outside a code span is completed as prose.
        let t = "Prices are floats and stored as `rate`.";
        let at = t.find("floats").unwrap();
        assert_eq!(clean(t, at..at + 6), "floats");
        // A determiner-like adjective is completed to its noun.
        let t = "On error the page keeps serving the last known rate to users.";
        let at = t.find("keeps").unwrap();
        assert_eq!(
            clean(t, at..t.find("known").unwrap() - 1),
            "keeps serving the last known rate"
        );
        // The name after a match that ends inside a code span is the next
        // code span, not the prose between two spans.
        let t = "parsed into `float64` and stored as `rate_to_usd` here";
        let end = t.find("` and").unwrap();
        assert_eq!(named_after(t, end).as_deref(), Some("`rate_to_usd`"));
        // What the length cut leaves is tidied: no dangling word, no
        // half-open parenthesis.
        let t = "runs from cron at 14:00 ET on both scheduler hosts (`sched-1` and `sched-2`) every day";
        let got = clean(t, 0..t.len());
        assert_eq!(
            got,
            "runs from cron at 14:00 ET on both scheduler hosts `sched-1`"
        );
        assert!(!got.ends_with("and"));
        // Markdown a match cut through is not part of the subject.
        let t = "see [why it will not save us](#the-ipvs-mode-will-not-save-us) and **in memory** state";
        assert_eq!(tidy(t), "see why it will not save us and in memory state");
        let t = r#"names \"custom-scheduler-1\" and"#;
        assert_eq!(tidy(t), "names custom-scheduler-1");
        // A verb told as the thing a title is about.
        for (said, told) in [
            (
                "invokes the `Resize` CRI API",
                "calls to the `Resize` CRI API",
            ),
            ("Call the billing service", "calls to the billing service"),
            (
                "calls to the billing service",
                "calls to the billing service",
            ),
            ("connects to the kubelet", "connections to the kubelet"),
            (
                "makes discovery calls to each peer",
                "discovery calls to each peer",
            ),
            ("send a request to etcd", "a request to etcd"),
            (
                "waits for all hooks to complete",
                "waiting for all hooks to complete",
            ),
            // Not an exchange: kept as written.
            ("makes a copy of the file", "makes a copy of the file"),
            ("issues tokens", "issues tokens"),
        ] {
            assert_eq!(as_noun_phrase(said), told);
        }
        // "its own" and "a new" are completed to their noun.
        let t = "The operator implements its own leader election for shards.";
        let at = t.find("implements").unwrap();
        assert_eq!(
            clean(t, at..t.find(" leader").unwrap()),
            "implements its own leader election"
        );
    }

    #[test]
    fn a_cut_subject_keeps_its_closing_parenthesis_and_drops_a_clause_opener() {
        // The route without its query string, however long the query.
        let t = "Clients page with GET /v3/boards/{board_id}/cards?cursor=abc&limit=100&sort=updated_at&expand=owner.";
        let at = t.find("GET").unwrap();
        assert_eq!(clean(t, at..at + 3), "GET /v3/boards/{board_id}/cards");
        // A parenthesis that closes one inside the subject stays.
        let t = "  display_label   NVARCHAR(120) NOT NULL,";
        let at = t.find("NVARCHAR").unwrap();
        assert_eq!(clean(t, at..at + 13), "NVARCHAR(120)");
        let t = "tags are read with raw.split(\",\") in the parser";
        let at = t.find(".split").unwrap();
        assert_eq!(clean(t, at..at + 11), "split(\",\")");
        // A pair around the whole subject goes; an unbalanced one goes too.
        assert_eq!(tidy("(the audit sink)"), "the audit sink");
        assert_eq!(tidy("quota (per tenant"), "quota per tenant");
        // A cut after a comma and a clause opener ends before them ("once"
        // is not one: it also ends a phrase, "cached once"), and a removed
        // URL leaves no double space.
        assert_eq!(
            tidy("each replica reads its own regional queue, which"),
            "each replica reads its own regional queue"
        );
        assert_eq!(
            tidy("writes the ledger row in Postgres and, once"),
            "writes the ledger row in Postgres and, once"
        );
        assert_eq!(
            tidy("stores the invoice row in the ledger and,"),
            "stores the invoice row in the ledger"
        );
        assert_eq!(
            tidy("pulls `http://mirror.example.org/feed.xml` unsigned"),
            "pulls unsigned"
        );
        // Upper case is SQL, not a relative clause.
        assert_eq!(
            tidy("DELETE FROM sessions WHERE"),
            "DELETE FROM sessions WHERE"
        );
    }
}
