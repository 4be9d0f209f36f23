//! Defensive parsing of model replies: JSON inside code fences or prose,
//! trailing commas, numbered or bulleted lists as a fallback, severity words
//! in any usual form. Votes are keyed by concern id, never by position.
//! Parsing never panics and never guesses a vote or an outcome that the
//! reply does not state: what cannot be read is a `ParseError`, which the
//! caller answers with one repair request.

use crate::concern::{AdjudicationOutcome, Decision, RebuttalOutcome, Severity};
use crate::roles::{FinalBossFinding, FinalBossReview, FinalBossVerdict};
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;
use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ParseError(pub String);

/// A concern as a model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedConcern {
    pub title: String,
    pub detail: String,
    pub severity: Severity,
    pub lines: Option<(usize, usize)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParsedVote {
    pub id: String,
    pub decision: Decision,
    pub reasoning: String,
    pub cites: Vec<usize>,
}

static FENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```").unwrap());
static TRAILING_COMMA: LazyLock<Regex> = LazyLock::new(|| Regex::new(r",(\s*[}\]])").unwrap());
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:\d{1,3}[.)]|[-*•+])\s+(.+)$").unwrap());
static LINE_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:lines?|l\.?|ll\.)\s*(\d{1,6})(?:\s*(?:-|–|to|\.\.)\s*(\d{1,6}))?")
        .unwrap()
});
static SEVERITY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(critical|blocker|blocking|severe|high|major|medium|moderate|med|low|minor|trivial|nit|p[0-4])\b")
        .unwrap()
});
static CONCERN_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b([A-Z]{1,8}-[0-9a-f]{8})\b").unwrap());
static VOTE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([A-Z]{1,8}-[0-9a-f]{8})\b[^A-Za-z0-9]*(?:decision|vote)?[^A-Za-z0-9]*(accept|dismiss|defer)\w*[^A-Za-z0-9(]*(.*)")
        .unwrap()
});

/// The first JSON value found in `text`: the whole reply, a fenced block,
/// or the outermost `{...}` / `[...]` in prose; trailing commas forgiven.
pub fn extract_json(text: &str) -> Option<Value> {
    let mut candidates: Vec<&str> = vec![text.trim()];
    for c in FENCE.captures_iter(text) {
        candidates.push(c.get(1).map_or("", |m| m.as_str()));
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (text.find(open), text.rfind(close))
            && a < b
        {
            candidates.push(&text[a..=b]);
        }
    }
    for c in candidates {
        let c = c.trim();
        if c.is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(c)
            && (v.is_object() || v.is_array())
        {
            return Some(v);
        }
        let fixed = TRAILING_COMMA.replace_all(c, "$1");
        if let Ok(v) = serde_json::from_str::<Value>(&fixed)
            && (v.is_object() || v.is_array())
        {
            return Some(v);
        }
    }
    None
}

fn field<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Value> {
    let obj = v.as_object()?;
    for n in names {
        if let Some(x) = obj.get(*n) {
            return Some(x);
        }
    }
    // Case-insensitive second pass.
    obj.iter()
        .find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
        .map(|(_, x)| x)
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| text_of(Some(x)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        _ => String::new(),
    }
}

/// Line numbers from `12`, `"12"`, `[12, 15]`, `"12-15"`, `"lines 12 to 15"`.
fn numbers(v: Option<&Value>) -> Vec<usize> {
    match v {
        Some(Value::Number(n)) => n.as_u64().map(|n| vec![n as usize]).unwrap_or_default(),
        Some(Value::String(s)) => {
            let mut out = Vec::new();
            static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[0-9]{1,6}").unwrap());
            for m in NUMBER.find_iter(s) {
                if let Ok(n) = m.as_str().parse() {
                    out.push(n);
                }
            }
            out
        }
        Some(Value::Array(a)) => a.iter().flat_map(|x| numbers(Some(x))).collect(),
        Some(Value::Object(_)) => {
            let v = v.unwrap();
            let mut out = numbers(field(v, &["start", "from", "first"]));
            out.extend(numbers(field(v, &["end", "to", "last"])));
            out
        }
        _ => Vec::new(),
    }
}

/// A line range inside the spec, or `None` when absent or out of range.
fn range(nums: &[usize], spec_lines: usize) -> Option<(usize, usize)> {
    let valid: Vec<usize> = nums
        .iter()
        .copied()
        .filter(|&n| n >= 1 && n <= spec_lines)
        .collect();
    let a = *valid.iter().min()?;
    let b = *valid.iter().max()?;
    Some((a, b))
}

fn items<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Vec<Value>> {
    match v {
        Value::Array(a) => Some(a),
        Value::Object(_) => field(v, keys).and_then(Value::as_array),
        _ => None,
    }
}

/// Concerns from an attacker's reply.
pub fn parse_concerns(text: &str, spec_lines: usize) -> Result<Vec<ParsedConcern>, ParseError> {
    if let Some(v) = extract_json(text) {
        let list = match items(&v, &["concerns", "issues", "findings", "items"]) {
            Some(l) => l.clone(),
            None if v.is_object() && field(&v, &["title", "detail"]).is_some() => vec![v.clone()],
            None => {
                return Err(ParseError("the JSON has no `concerns` array".to_string()));
            }
        };
        let mut out = Vec::new();
        // Items with neither a title nor a detail: an unreadable reply, not
        // "no concern" (a model that emits `[{}]` must not pass quietly).
        let mut empty = 0;
        for item in &list {
            if let Value::String(s) = item {
                match concern_from_line(s, spec_lines) {
                    Some(c) => out.push(c),
                    None => empty += 1,
                }
                continue;
            }
            let mut title = text_of(field(
                item,
                &["title", "name", "summary", "concern", "issue"],
            ));
            let detail = text_of(field(
                item,
                &[
                    "detail",
                    "details",
                    "description",
                    "explanation",
                    "reasoning",
                    "why",
                ],
            ));
            if title.is_empty() && detail.is_empty() {
                empty += 1;
                continue;
            }
            if title.is_empty() {
                title = first_sentence(&detail);
            }
            let severity = severity_of(&text_of(field(
                item,
                &["severity", "priority", "level", "impact"],
            )))
            .unwrap_or(Severity::Medium);
            let mut nums = numbers(field(
                item,
                &["lines", "line", "line_range", "location", "spec_lines"],
            ));
            if nums.is_empty() {
                nums = line_refs(&detail);
            }
            out.push(ParsedConcern {
                title,
                detail,
                severity,
                lines: range(&nums, spec_lines),
            });
        }
        if empty > 0 {
            return Err(ParseError(format!(
                "{empty} of {} concerns have neither a title nor a detail",
                list.len()
            )));
        }
        return Ok(out);
    }
    let mut out = Vec::new();
    let mut current: Option<ParsedConcern> = None;
    for line in text.lines() {
        if let Some(c) = LIST_ITEM.captures(line) {
            if let Some(done) = current.take() {
                out.push(done);
            }
            current = concern_from_line(&c[1], spec_lines);
        } else if let Some(cur) = current.as_mut()
            && line.starts_with([' ', '\t'])
            && !line.trim().is_empty()
        {
            cur.detail.push(' ');
            cur.detail.push_str(line.trim());
            if cur.lines.is_none() {
                cur.lines = range(&line_refs(line), spec_lines);
            }
        }
    }
    if let Some(done) = current.take() {
        out.push(done);
    }
    if out.is_empty() {
        let lower = text.to_ascii_lowercase();
        if lower.contains("no concerns") || lower.contains("no issues") {
            return Ok(Vec::new());
        }
        return Err(ParseError(
            "no JSON and no numbered or bulleted list of concerns".to_string(),
        ));
    }
    Ok(out)
}

fn line_refs(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for c in LINE_REF.captures_iter(s) {
        for g in [1, 2] {
            if let Some(n) = c.get(g).and_then(|m| m.as_str().parse().ok()) {
                out.push(n);
            }
        }
    }
    out
}

fn first_sentence(s: &str) -> String {
    let end = s.find(['.', '\n']).unwrap_or(s.len());
    let t: String = s[..end].chars().take(100).collect();
    t.trim().to_string()
}

fn severity_of(s: &str) -> Option<Severity> {
    Severity::parse_loose(s).or_else(|| {
        SEVERITY_WORD
            .captures(s)
            .and_then(|c| Severity::parse_loose(&c[1]))
    })
}

/// `**[HIGH]** Title: detail (lines 3-5)` and similar list items.
fn concern_from_line(item: &str, spec_lines: usize) -> Option<ParsedConcern> {
    let mut s = item.replace("**", "").replace("__", "");
    let mut severity = None;
    // A leading tag: [HIGH], (minor), HIGH:, Severity: high -
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^\s*(?:severity\s*[:=]\s*)?[\[(]?\s*(critical|blocker|high|major|medium|moderate|low|minor|trivial|p[0-4])\s*[\])]?\s*[:\-–]?\s*").unwrap()
    });
    if let Some(c) = TAG.captures(&s) {
        severity = Severity::parse_loose(&c[1]);
        s = s[c.get(0).unwrap().end()..].to_string();
    }
    static INLINE_SEV: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)[\[(]?\s*severity\s*[:=]\s*(\w+)\s*[\])]?").unwrap());
    if severity.is_none()
        && let Some(c) = INLINE_SEV.captures(&s)
    {
        severity = Severity::parse_loose(&c[1]);
        s = format!(
            "{}{}",
            &s[..c.get(0).unwrap().start()],
            &s[c.get(0).unwrap().end()..]
        );
    }
    let lines = range(&line_refs(&s), spec_lines);
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (title, detail) = match s
        .find(": ")
        .or_else(|| s.find(" - "))
        .or_else(|| s.find(" — "))
    {
        Some(i) if i > 0 && i < 160 => {
            let rest = s[i..].trim_start_matches([':', ' ', '-', '—']).trim();
            (s[..i].trim().to_string(), rest.to_string())
        }
        _ => (first_sentence(s), s.to_string()),
    };
    Some(ParsedConcern {
        title,
        detail,
        severity: severity.unwrap_or(Severity::Medium),
        lines,
    })
}

fn normalise_id(id: &str) -> String {
    match id.trim().split_once('-') {
        Some((p, h)) => format!("{}-{}", p.to_ascii_uppercase(), h.to_ascii_lowercase()),
        None => id.trim().to_string(),
    }
}

pub fn decision_of(s: &str) -> Option<Decision> {
    let s = s
        .trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_ascii_lowercase();
    match s.as_str() {
        "accept" | "accepted" | "valid" | "real" | "keep" | "uphold concern" | "agree" => {
            Some(Decision::Accept)
        }
        "dismiss" | "dismissed" | "reject" | "rejected" | "invalid" | "not an issue" => {
            Some(Decision::Dismiss)
        }
        "defer" | "deferred" | "abstain" | "unsure" | "unclear" => Some(Decision::Defer),
        _ => None,
    }
}

/// Votes from an evaluator's reply, keyed by the concern ids it names.
pub fn parse_votes(text: &str) -> Result<Vec<ParsedVote>, ParseError> {
    let mut out = Vec::new();
    if let Some(v) = extract_json(text) {
        let list: Vec<Value> = match items(&v, &["votes", "evaluations", "decisions", "results"]) {
            Some(l) => l.clone(),
            // {"PARA-1234abcd": {"decision": ...}} or {"PARA-1234abcd": "accept"}
            None => match &v {
                Value::Object(m) => m
                    .iter()
                    .filter(|(k, _)| CONCERN_ID.is_match(k))
                    .map(|(k, x)| match x {
                        Value::Object(o) => {
                            let mut o = o.clone();
                            o.insert("id".into(), Value::String(k.clone()));
                            Value::Object(o)
                        }
                        other => serde_json::json!({"id": k, "decision": other}),
                    })
                    .collect(),
                _ => Vec::new(),
            },
        };
        for item in &list {
            let id = text_of(field(item, &["id", "concern_id", "concern", "concernId"]));
            let Some(decision) = decision_of(&text_of(field(
                item,
                &["decision", "vote", "verdict", "status"],
            ))) else {
                continue;
            };
            if id.is_empty() {
                continue;
            }
            out.push(ParsedVote {
                id: normalise_id(&id),
                decision,
                reasoning: text_of(field(
                    item,
                    &[
                        "reasoning",
                        "reason",
                        "explanation",
                        "rationale",
                        "justification",
                    ],
                )),
                cites: numbers(field(
                    item,
                    &[
                        "cites",
                        "lines",
                        "citations",
                        "cited_lines",
                        "evidence_lines",
                    ],
                )),
            });
        }
    } else {
        for line in text.lines() {
            if let Some(c) = VOTE_LINE.captures(line)
                && let Some(decision) = decision_of(&c[2])
            {
                let reasoning = c[3].trim().to_string();
                out.push(ParsedVote {
                    id: normalise_id(&c[1]),
                    decision,
                    cites: line_refs(&reasoning),
                    reasoning,
                });
            }
        }
    }
    if out.is_empty() {
        return Err(ParseError(
            "no vote with a concern id and a decision (accept, dismiss or defer)".to_string(),
        ));
    }
    Ok(out)
}

/// `ACCEPTED: ...` or `CHALLENGED: ...` (the seed's rebuttal format), or JSON.
pub fn parse_rebuttal(text: &str) -> Result<(RebuttalOutcome, String), ParseError> {
    if let Some(v) = extract_json(text)
        && v.is_object()
    {
        let o = text_of(field(&v, &["outcome", "decision", "response", "verdict"]))
            .to_ascii_lowercase();
        let reasoning = text_of(field(
            &v,
            &["reasoning", "reason", "explanation", "argument"],
        ));
        if o.starts_with("accept") {
            return Ok((RebuttalOutcome::Accepted, reasoning));
        }
        if o.starts_with("challeng") {
            return Ok((RebuttalOutcome::Challenged, reasoning));
        }
    }
    static WORD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(ACCEPTED|CHALLENGED)\b\s*[:\-–]?\s*").unwrap());
    let plain = text.replace("**", "");
    let Some(c) = WORD.captures(&plain) else {
        return Err(ParseError(
            "the reply starts with neither ACCEPTED: nor CHALLENGED:".to_string(),
        ));
    };
    let outcome = if c[1].eq_ignore_ascii_case("accepted") {
        RebuttalOutcome::Accepted
    } else {
        RebuttalOutcome::Challenged
    };
    let reasoning = plain[c.get(0).unwrap().end()..].trim().to_string();
    Ok((outcome, reasoning))
}

/// Adjudication: `{"outcome": "upheld" | "overturned", "reasoning": ...}` or
/// the words UPHELD / OVERTURNED.
pub fn parse_adjudication(text: &str) -> Result<(AdjudicationOutcome, String), ParseError> {
    let of = |s: &str| {
        let s = s.to_ascii_lowercase();
        if s.starts_with("uphe") || s.starts_with("uphold") || s.contains("dismissal stands") {
            Some(AdjudicationOutcome::Upheld)
        } else if s.starts_with("overturn") || s.starts_with("reinstat") || s.starts_with("sustain")
        {
            Some(AdjudicationOutcome::Overturned)
        } else {
            None
        }
    };
    if let Some(v) = extract_json(text)
        && let Some(o) = of(&text_of(field(
            &v,
            &["outcome", "decision", "verdict", "ruling"],
        )))
    {
        return Ok((
            o,
            text_of(field(&v, &["reasoning", "reason", "explanation"])),
        ));
    }
    static WORD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(UPHELD|OVERTURNED)\b\s*[:\-–]?\s*").unwrap());
    let plain = text.replace("**", "");
    match WORD.captures(&plain) {
        Some(c) => Ok((
            of(&c[1]).expect("matched word"),
            plain[c.get(0).unwrap().end()..].trim().to_string(),
        )),
        None => Err(ParseError(
            "no outcome: expected `upheld` or `overturned`".to_string(),
        )),
    }
}

/// The part of a batched reply about each concern id of `ids`: from the
/// first mention of the id to the next mention of another id of the batch.
/// Ids the reply never names are missing from the result.
fn segments_by_id<'a>(text: &'a str, ids: &[&str]) -> Vec<(String, &'a str)> {
    let mut marks: Vec<(usize, usize, String)> = Vec::new();
    for m in CONCERN_ID.find_iter(text) {
        let id = normalise_id(m.as_str());
        if ids.contains(&id.as_str()) && !marks.iter().any(|(_, _, seen)| *seen == id) {
            marks.push((m.start(), m.end(), id));
        }
    }
    // Segments end where any later id of the batch is mentioned.
    let mut starts: Vec<usize> = CONCERN_ID
        .find_iter(text)
        .filter(|m| ids.contains(&normalise_id(m.as_str()).as_str()))
        .map(|m| m.start())
        .collect();
    starts.push(text.len());
    marks
        .into_iter()
        .map(|(start, end, id)| {
            let stop = starts
                .iter()
                .copied()
                .find(|&s| s > start)
                .unwrap_or(text.len());
            let seg = text[end..stop.max(end)]
                .trim_start_matches([']', ')', ':', ' ', '*', '-', '\t'])
                .trim_end_matches(|c: char| c.is_whitespace() || "[(*-".contains(c));
            (id, seg)
        })
        .collect()
}

/// Items of a batched JSON reply, each with an id from `ids`.
fn json_items_by_id(v: &Value, keys: &[&str], ids: &[&str]) -> Vec<(String, Value)> {
    let list: Vec<Value> = match items(v, keys) {
        Some(l) => l.clone(),
        None => match v {
            // {"PARA-1234abcd": {...}} or {"PARA-1234abcd": "..."}
            Value::Object(m) => m
                .iter()
                .filter(|(k, _)| CONCERN_ID.is_match(k))
                .map(|(k, x)| match x {
                    Value::Object(o) => {
                        let mut o = o.clone();
                        o.insert("id".into(), Value::String(k.clone()));
                        Value::Object(o)
                    }
                    other => serde_json::json!({"id": k, "outcome": other}),
                })
                .collect(),
            _ => Vec::new(),
        },
    };
    list.into_iter()
        .filter_map(|item| {
            let id = normalise_id(&text_of(field(&item, &["id", "concern_id", "concern"])));
            ids.contains(&id.as_str()).then_some((id, item))
        })
        .collect()
}

/// Rebuttals of one adversary for several concerns: `[ID] ACCEPTED: ...` /
/// `[ID] CHALLENGED: ...` lines, or JSON by id. With a single id, a reply
/// that names no id is read as that concern's. Only ids of `ids` are kept.
pub fn parse_rebuttals(
    text: &str,
    ids: &[&str],
) -> Result<Vec<(String, RebuttalOutcome, String)>, ParseError> {
    parse_by_id(
        text,
        ids,
        &["rebuttals", "responses", "results", "decisions"],
        parse_rebuttal,
        "no line with a concern id followed by ACCEPTED: or CHALLENGED:",
    )
}

/// Adjudications of several challenged dismissals, by id: JSON
/// `{"decisions": [{"id", "outcome", "reasoning"}]}`, or per-id text with
/// UPHELD / OVERTURNED. With a single id, an unnamed ruling is that one's.
pub fn parse_adjudications(
    text: &str,
    ids: &[&str],
) -> Result<Vec<(String, AdjudicationOutcome, String)>, ParseError> {
    parse_by_id(
        text,
        ids,
        &[
            "decisions",
            "adjudications",
            "rulings",
            "results",
            "outcomes",
        ],
        parse_adjudication,
        "no decision with a concern id and an outcome (upheld or overturned)",
    )
}

/// A batched reply read item by item with `parse_one`, in the first form
/// that yields anything: a JSON list under one of `keys`, matched by id;
/// text segments that start with an id; or, with a single id, the whole
/// reply as that concern's. Only ids of `ids` are kept.
fn parse_by_id<O>(
    text: &str,
    ids: &[&str],
    keys: &[&str],
    parse_one: fn(&str) -> Result<(O, String), ParseError>,
    none_found: &str,
) -> Result<Vec<(String, O, String)>, ParseError> {
    let mut out = Vec::new();
    if let Some(v) = extract_json(text) {
        for (id, item) in json_items_by_id(&v, keys, ids) {
            if let Ok((o, r)) = parse_one(&item.to_string()) {
                out.push((id, o, r));
            }
        }
    }
    if out.is_empty() {
        for (id, seg) in segments_by_id(text, ids) {
            if let Ok((o, r)) = parse_one(seg) {
                out.push((id, o, r));
            }
        }
    }
    if out.is_empty()
        && let [only] = ids
        && let Ok((o, r)) = parse_one(text)
    {
        out.push((only.to_string(), o, r));
    }
    if out.is_empty() {
        return Err(ParseError(none_found.to_string()));
    }
    Ok(out)
}

/// The final boss's review.
pub fn parse_final_boss(text: &str, spec_lines: usize) -> Result<FinalBossReview, ParseError> {
    let verdict_of = |s: &str| match s.trim().to_ascii_uppercase().as_str() {
        "PASS" | "PASSED" | "APPROVE" | "APPROVED" => Some(FinalBossVerdict::Pass),
        "REFINE" | "REVISE" => Some(FinalBossVerdict::Refine),
        "RECONSIDER" | "REJECT" => Some(FinalBossVerdict::Reconsider),
        _ => None,
    };
    if let Some(v) = extract_json(text)
        && let Some(verdict) = verdict_of(&text_of(field(&v, &["verdict", "decision", "outcome"])))
    {
        let mut findings = Vec::new();
        for f in items(&v, &["findings", "concerns", "issues"])
            .cloned()
            .unwrap_or_default()
        {
            let finding = text_of(field(
                &f,
                &["finding", "detail", "description", "issue", "title"],
            ));
            if finding.is_empty() {
                continue;
            }
            findings.push(FinalBossFinding {
                check: {
                    let c = text_of(field(&f, &["check", "category", "area"]));
                    if c.is_empty() {
                        "general".to_string()
                    } else {
                        c
                    }
                },
                severity: severity_of(&text_of(field(&f, &["severity", "priority"])))
                    .unwrap_or(Severity::Medium),
                finding,
                lines: numbers(field(&f, &["lines", "line", "cites"]))
                    .into_iter()
                    .filter(|&n| n >= 1 && n <= spec_lines)
                    .collect(),
            });
        }
        return Ok(FinalBossReview {
            verdict,
            findings,
            summary: text_of(field(&v, &["summary", "reasoning", "overall"])),
        });
    }
    static WORD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(PASS|REFINE|RECONSIDER)\b").unwrap());
    let Some(c) = WORD.captures(text) else {
        return Err(ParseError(
            "no verdict: expected PASS, REFINE or RECONSIDER".to_string(),
        ));
    };
    let verdict = verdict_of(&c[1]).expect("matched word");
    let findings = text
        .lines()
        .filter_map(|l| LIST_ITEM.captures(l))
        .filter_map(|c| concern_from_line(&c[1], spec_lines))
        .map(|c| FinalBossFinding {
            check: "general".to_string(),
            severity: c.severity,
            finding: if c.detail.is_empty() {
                c.title
            } else {
                format!("{}: {}", c.title, c.detail)
            },
            lines: c.lines.map(|(a, b)| (a..=b).collect()).unwrap_or_default(),
        })
        .collect();
    Ok(FinalBossReview {
        verdict,
        findings,
        summary: String::new(),
    })
}

/// The fresh-eyes reviewer's reply: findings, clarifying questions and an
/// assessment. Ids are renumbered (`OF1`, `OQ1`...) in reply order, lines
/// outside the spec dropped. The recommendation is recomputed from the
/// seed's rule, never taken from the model.
pub fn parse_fresh_eyes(
    text: &str,
    spec_lines: usize,
) -> Result<
    (
        Vec<crate::fresh_eyes::FreshEyesFinding>,
        Vec<crate::fresh_eyes::ClarifyingQuestion>,
        String,
    ),
    ParseError,
> {
    use crate::fresh_eyes::{ClarifyingQuestion, FreshEyesFinding, QuestionOption};
    let Some(v) = extract_json(text) else {
        return Err(ParseError("no JSON object in the reply".to_string()));
    };
    let lines = |x: &Value| -> Vec<usize> {
        numbers(field(x, &["lines", "line", "cites"]))
            .into_iter()
            .filter(|&n| n >= 1 && n <= spec_lines)
            .collect()
    };
    let mut findings = Vec::new();
    for f in items(&v, &["findings", "issues"])
        .cloned()
        .unwrap_or_default()
    {
        let title = text_of(field(&f, &["title", "finding", "issue"]));
        let description = text_of(field(&f, &["description", "detail", "code_evidence"]));
        if title.is_empty() && description.is_empty() {
            continue;
        }
        findings.push(FreshEyesFinding {
            id: format!("OF{}", findings.len() + 1),
            severity: severity_of(&text_of(field(&f, &["severity", "priority"])))
                .unwrap_or(Severity::Medium),
            title: if title.is_empty() {
                description.clone()
            } else {
                title
            },
            description,
            suggestion: text_of(field(&f, &["suggestion", "fix"])),
            lines: lines(&f),
        });
    }
    let mut questions = Vec::new();
    for q in items(&v, &["clarifying_questions", "questions"])
        .cloned()
        .unwrap_or_default()
    {
        let question = match &q {
            Value::String(s) => s.trim().to_string(),
            _ => text_of(field(&q, &["question", "text"])),
        };
        if question.is_empty() {
            continue;
        }
        let options = items(&q, &["options"])
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|o| {
                let label = match o {
                    Value::String(s) => s.trim().to_string(),
                    _ => text_of(field(o, &["label", "option"])),
                };
                (!label.is_empty()).then(|| QuestionOption {
                    label,
                    description: text_of(field(o, &["description", "detail"])),
                })
            })
            .collect();
        questions.push(ClarifyingQuestion {
            id: format!("OQ{}", questions.len() + 1),
            question,
            context: text_of(field(&q, &["context"])),
            impact: text_of(field(&q, &["impact"])),
            options,
            lines: lines(&q),
        });
    }
    if findings.is_empty()
        && questions.is_empty()
        && field(
            &v,
            &[
                "recommendation",
                "assessment",
                "findings",
                "clarifying_questions",
            ],
        )
        .is_none()
    {
        return Err(ParseError(
            "no findings, clarifying_questions or assessment".to_string(),
        ));
    }
    Ok((
        findings,
        questions,
        text_of(field(&v, &["assessment", "summary"])),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_in_fences_with_prose_and_trailing_commas() {
        let text = "Sure! Here you go:\n```json\n{\"concerns\": [\n {\"title\": \"No auth\", \"detail\": \"Anyone can call it\", \"severity\": \"CRITICAL\", \"lines\": [4, 2],},\n],}\n```\nHope that helps.";
        let c = parse_concerns(text, 10).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "No auth");
        assert_eq!(c[0].severity, Severity::High);
        assert_eq!(c[0].lines, Some((2, 4)));
    }

    #[test]
    fn json_surrounded_by_prose_without_fences() {
        let text = "My concerns: [{\"title\":\"Retry storm\",\"description\":\"x\",\"severity\":\"minor\",\"line\":\"7-9\"}] end";
        let c = parse_concerns(text, 8).unwrap();
        assert_eq!(c[0].severity, Severity::Low);
        // 9 is past the end of an 8-line spec and is dropped.
        assert_eq!(c[0].lines, Some((7, 7)));
    }

    #[test]
    fn numbered_list_fallback() {
        let text = "Here are my concerns:\n\n1. **[HIGH]** Missing rate limit: the login endpoint (line 12) has none.\n2. (minor) Unicode names - what about emoji?\n   See lines 20-22.\n- Severity: medium - Retry policy unclear\n";
        let c = parse_concerns(text, 30).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].title, "Missing rate limit");
        assert_eq!(c[0].severity, Severity::High);
        assert_eq!(c[0].lines, Some((12, 12)));
        assert_eq!(c[1].severity, Severity::Low);
        assert_eq!(c[1].lines, Some((20, 22)));
        assert_eq!(c[2].severity, Severity::Medium);
        assert_eq!(c[2].title, "Retry policy unclear");
    }

    #[test]
    fn items_with_neither_title_nor_detail_make_the_reply_unreadable() {
        let e =
            parse_concerns(r#"{"concerns": [{"severity": "high", "lines": [2]}]}"#, 5).unwrap_err();
        assert!(e.0.contains("neither a title nor a detail"), "{e}");
        // One empty item among good ones is still an unreadable reply.
        assert!(
            parse_concerns(
                r#"{"concerns": [{"title": "x", "detail": "y"}, {"title": " ", "detail": ""}]}"#,
                5
            )
            .is_err()
        );
        assert!(parse_concerns(r#"{"concerns": ["", "  "]}"#, 5).is_err());
    }

    #[test]
    fn batched_rebuttals_by_id() {
        let ids = ["PARA-0123abcd", "PARA-deadbeef", "PARA-00000000"];
        let text = "[PARA-deadbeef] CHALLENGED: line 7 never verifies the sender.\n[para-0123ABCD] **ACCEPTED:** fair enough\n[ZZZZ-11111111] CHALLENGED: not ours";
        let r = parse_rebuttals(text, &ids).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, "PARA-deadbeef");
        assert_eq!(r[0].1, RebuttalOutcome::Challenged);
        assert_eq!(r[0].2, "line 7 never verifies the sender.");
        assert_eq!(r[1].0, "PARA-0123abcd");
        assert_eq!(r[1].1, RebuttalOutcome::Accepted);
        let json = r#"{"rebuttals": [{"id": "PARA-00000000", "outcome": "challenged", "reasoning": "x"}]}"#;
        let r = parse_rebuttals(json, &ids).unwrap();
        assert_eq!(
            r,
            vec![(
                "PARA-00000000".to_string(),
                RebuttalOutcome::Challenged,
                "x".to_string()
            )]
        );
        // A single concern may be answered without its id.
        let r = parse_rebuttals("ACCEPTED: fine", &ids[..1]).unwrap();
        assert_eq!(r[0].0, "PARA-0123abcd");
        assert!(parse_rebuttals("ACCEPTED: fine", &ids).is_err());
        assert!(parse_rebuttals("no idea", &ids[..1]).is_err());
    }

    #[test]
    fn batched_adjudications_by_id() {
        let ids = ["PARA-0123abcd", "BURN-deadbeef"];
        let json = r#"{"decisions": [{"id": "BURN-deadbeef", "outcome": "upheld", "reasoning": "a"}, {"id": "PARA-0123abcd", "outcome": "Overturned", "reasoning": "b"}, {"id": "XXXX-00000000", "outcome": "upheld"}]}"#;
        let r = parse_adjudications(json, &ids).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            (
                "BURN-deadbeef".to_string(),
                AdjudicationOutcome::Upheld,
                "a".to_string()
            )
        );
        assert_eq!(r[1].1, AdjudicationOutcome::Overturned);
        let text =
            "PARA-0123abcd: OVERTURNED - the challenge is right\nBURN-deadbeef: UPHELD. fine";
        let r = parse_adjudications(text, &ids).unwrap();
        assert_eq!(r[0].1, AdjudicationOutcome::Overturned);
        assert_eq!(r[1].1, AdjudicationOutcome::Upheld);
        assert_eq!(
            parse_adjudications(r#"{"outcome": "upheld"}"#, &ids[..1]).unwrap()[0].1,
            AdjudicationOutcome::Upheld
        );
        assert!(parse_adjudications("hmm", &ids).is_err());
    }

    #[test]
    fn garbage_is_an_error_and_empty_list_is_not() {
        assert!(parse_concerns("I like turtles.", 5).is_err());
        assert_eq!(parse_concerns("{\"concerns\": []}", 5).unwrap(), vec![]);
    }

    #[test]
    fn votes_by_id_in_any_order_and_shape() {
        let text = "```\n{\"votes\": [{\"id\": \"burn-0123abcd\", \"decision\": \"Dismissed\", \"reasoning\": \"retry at line 4\", \"cites\": [4]}, {\"concern_id\": \"PARA-deadbeef\", \"vote\": \"ACCEPT\", \"reason\": \"none\"}]}\n```";
        let v = parse_votes(text).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].id, "BURN-0123abcd");
        assert_eq!(v[0].decision, Decision::Dismiss);
        assert_eq!(v[0].cites, vec![4]);
        assert_eq!(v[1].id, "PARA-deadbeef");
        assert_eq!(v[1].decision, Decision::Accept);
        let map = parse_votes("{\"PARA-deadbeef\": \"defer\"}").unwrap();
        assert_eq!(map[0].decision, Decision::Defer);
        let lines = parse_votes(
            "PARA-deadbeef: DISMISS - handled at line 3\nBURN-0123abcd — accept: no alerting",
        )
        .unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].cites, vec![3]);
        assert_eq!(lines[1].decision, Decision::Accept);
        assert!(parse_votes("I agree with everything").is_err());
    }

    #[test]
    fn rebuttal_adjudication_and_final_boss() {
        let (o, r) = parse_rebuttal("**CHALLENGED:** line 5 has no timeout").unwrap();
        assert_eq!(o, RebuttalOutcome::Challenged);
        assert_eq!(r, "line 5 has no timeout");
        assert_eq!(
            parse_rebuttal("ACCEPTED: fair").unwrap().0,
            RebuttalOutcome::Accepted
        );
        assert!(parse_rebuttal("maybe").is_err());
        assert_eq!(
            parse_adjudication("{\"outcome\": \"overturned\", \"reasoning\": \"x\"}")
                .unwrap()
                .0,
            AdjudicationOutcome::Overturned
        );
        assert_eq!(
            parse_adjudication("Ruling: UPHELD. fine").unwrap().0,
            AdjudicationOutcome::Upheld
        );
        assert!(parse_adjudication("hmm").is_err());
        let r = parse_final_boss("{\"verdict\": \"refine\", \"findings\": [{\"check\": \"measurement\", \"severity\": \"low\", \"finding\": \"no metric\", \"lines\": [2, 99]}]}", 10).unwrap();
        assert_eq!(r.verdict, FinalBossVerdict::Refine);
        assert_eq!(r.findings[0].lines, vec![2]);
        assert_eq!(
            parse_final_boss("Verdict: PASS", 3).unwrap().verdict,
            FinalBossVerdict::Pass
        );
        assert!(parse_final_boss("looks ok", 3).is_err());
    }
}
