//! Built-in checks a rule can ask for with `check = "..."`: the ones a
//! pattern cannot express because they compare numbers (capacity, job
//! overlap, polling against a latency goal) or relate lines across the
//! document (two technologies for one job, call cycles, contradictions).
//!
//! Each returns candidate findings (lines + a sentence saying what was
//! computed); the attacker then looks for the rule's safeguards as usual.
//! Never decides alone whether a concern survives.

use crate::ascii_first::{AsciiFirst, Groups};
use crate::quantity::{self, human_bytes, human_secs};
use crate::rule::{Check, Rule};
use crate::spec::{LineKind, SectionRole, Spec, table_cells as cells};
use std::collections::BTreeMap;

/// A finding from a check: where, what it is about, what was worked out.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub first: usize,
    pub last: usize,
    pub what: String,
    pub note: String,
}

/// Lines that describe the design (not goals, background, non-goals...).
pub fn is_design(spec: &Spec, n: usize) -> bool {
    spec.line(n).is_some_and(|l| {
        !matches!(l.kind, LineKind::Heading | LineKind::Blank | LineKind::Html)
            && spec.sections[l.section].role.states_design()
    })
}

fn is_goal(spec: &Spec, n: usize) -> bool {
    spec.line(n)
        .is_some_and(|l| spec.sections[l.section].role.states_goals())
}

pub fn run(spec: &Spec, rule: &Rule, check: Check) -> Vec<Candidate> {
    match check {
        Check::TwoOf => two_of(spec, rule),
        Check::Capacity => capacity(spec),
        Check::JobOverlap => job_overlap(spec),
        Check::PollingLatency => polling_latency(spec),
        Check::CallCycle => call_cycle(spec),
        Check::Contradiction => contradiction(spec),
        Check::StatedMath => super::stated_math::run(spec),
        Check::SchemaExample => super::schema_example::run(spec),
    }
}

fn two_of(spec: &Spec, rule: &Rule) -> Vec<Candidate> {
    // First line naming each distinct technology on a trigger line.
    let mut seen: Vec<(usize, usize, String)> = Vec::new();
    for line in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        // A line counts when it, or the heading of its section, matches.
        let heading = &spec.sections[line.section].heading;
        if rule.trigger(&line.design).is_none()
            && rule.trigger(&heading.to_ascii_lowercase()).is_none()
        {
            continue;
        }
        for (i, d) in rule.distinct.iter().enumerate() {
            if let Some(m) = d.find(line.lower.as_bytes())
                && !seen.iter().any(|s| s.0 == i)
            {
                seen.push((i, line.number, line.text[m.range()].to_string()));
            }
        }
    }
    if seen.len() < 2 {
        return Vec::new();
    }
    seen.sort_by_key(|s| s.1);
    let names: Vec<String> = seen
        .iter()
        .map(|s| format!("{} (line {})", s.2, s.1))
        .collect();
    vec![Candidate {
        first: seen[0].1,
        last: seen[seen.len() - 1].1,
        what: seen
            .iter()
            .map(|s| s.2.clone())
            .collect::<Vec<_>>()
            .join(" and "),
        note: format!("The spec uses {} for the same job.", names.join(", ")),
    }]
}

static CAPACITY_WORD: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(disk|volume|share|provisioned|capacity|storage|quota|drive|nvme|ssd|partition|bucket limit|filesystem)\b",
);
static PER_ITEM_WORD: AsciiFirst =
    AsciiFirst::new(r"(?i)\b(avg|average|each|per|typical|mean|about|~)");

/// Words next to a size rate that make it a read speed ("a disk with 150
/// MB/s read throughput", "scans 2 GB/s"): reading fills no storage.
static READ_SPEED: AsciiFirst =
    AsciiFirst::new(r"(?i)\b(?:read|reads|reading|scan|scans|scanning)\b");

/// Is the rate at `span` of `text` a read speed (the words within 30 bytes
/// of it say so)?
fn is_read_speed(text: &str, span: &std::ops::Range<usize>) -> bool {
    let lo = (span.start.saturating_sub(30)..=span.start)
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(span.start);
    let hi = (span.end..=(span.end + 30).min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(span.end);
    READ_SPEED.is_match(&text[lo..hi])
}

/// Stored volume per day against a stated capacity: how many days to fill.
fn capacity(spec: &Spec) -> Vec<Candidate> {
    let design = |n: usize| {
        spec.line(n).is_some_and(|l| {
            !matches!(l.kind, LineKind::Heading | LineKind::Blank | LineKind::Html)
                && !matches!(
                    spec.sections[l.section].role,
                    SectionRole::NonGoals | SectionRole::OpenQuestions | SectionRole::Alternatives
                )
        })
    };
    // Daily volume: an explicit size rate, or a count rate times the sizes
    // written next to it (same line or the next).
    let mut volume: Option<(usize, f64, String)> = None;
    for l in spec.lines.iter().filter(|l| design(l.number)) {
        if let Some(r) = quantity::size_rates_per_day(&l.text)
            .into_iter()
            .find(|r| !is_read_speed(&l.text, &r.span))
        {
            volume = Some((l.number, r.value, r.text));
            break;
        }
        if let Some(c) = quantity::count_rates_per_day(&l.text).into_iter().next() {
            let mut per_item: f64 = quantity::plain_sizes(&l.text).iter().map(|f| f.value).sum();
            if per_item == 0.0
                && let Some(next) = spec.line(l.number + 1)
                && PER_ITEM_WORD.is_match(&next.text)
            {
                per_item = quantity::plain_sizes(&next.text)
                    .iter()
                    .map(|f| f.value)
                    .sum();
            }
            if per_item > 0.0 {
                let v = c.value * per_item;
                volume = Some((
                    l.number,
                    v,
                    format!("{} of about {} each", c.text, human_bytes(per_item)),
                ));
                break;
            }
        }
    }
    let Some((vline, per_day, vtext)) = volume else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in spec.lines.iter().filter(|l| design(l.number)) {
        if l.number == vline || !CAPACITY_WORD.is_match(&l.text) {
            continue;
        }
        let Some(cap) = quantity::plain_sizes(&l.text)
            .into_iter()
            .filter(|f| f.value >= 10.0 * 1024f64.powi(3))
            .max_by(|a, b| a.value.total_cmp(&b.value))
        else {
            continue;
        };
        let days = cap.value / per_day;
        if days < 365.0 {
            out.push(Candidate {
                first: vline.min(l.number),
                last: vline.max(l.number),
                what: format!("{} of storage", cap.text),
                note: format!(
                    "At {vtext} (line {vline}), about {}/day, the {} stated on line {} fills in about {} days.",
                    human_bytes(per_day),
                    cap.text,
                    l.number,
                    days.round().max(1.0)
                ),
            });
            break;
        }
    }
    out
}

/// How often something runs, in the ways people write it: "every 15
/// minutes", "every ten minutes", "every hour", "hourly", "once a minute",
/// "four times an hour", "twice a day". Groups: 1 a number and unit after
/// "every"; 2 a bare unit after "every"; 3 "hourly"...; 4 the unit of "once
/// a ..."; 5 and 6 the count and unit of "N times a ...".
static EVERY: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\bevery\s+((?:\d+(?:\.\d+)?|",
    quantity::word_num!(),
    r")\s*-?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|hours?|hrs?|h|days?))\b",
    r"|\bevery\s+(minute|hour|day|night)\b",
    r"|\b(hourly|daily|nightly)\b",
    r"|\bonce\s+(?:a|an|per|each)\s+(minute|hour|day|night)\b",
    r"|\b(twice|(?:\d{1,2}|",
    quantity::word_num!(),
    r")\s+times)\s+(?:a|an|per|each|every)\s+(minute|hour|day)\b",
));

/// The interval an `EVERY` match states, as text `quantity::durations`
/// reads: "every hour" and "hourly" are one hour, "four times an hour" 15
/// minutes.
fn interval_text(every: &Groups) -> String {
    let unit_secs = |u: &str| match u.to_lowercase().as_str() {
        "minute" => 60.0,
        "hour" => 3600.0,
        _ => 86400.0,
    };
    if let (Some(k), Some(u)) = (every.get(5), every.get(6)) {
        let k = k.as_str().to_lowercase();
        let times = match k.trim_end_matches("times").trim() {
            "twice" => Some(2.0),
            w => quantity::word_value(w).or_else(|| w.parse().ok()),
        };
        return match times {
            Some(t) if t > 0.0 => format!("{:.0} seconds", unit_secs(u.as_str()) / t),
            _ => String::new(),
        };
    }
    let t = every
        .get(1)
        .or_else(|| every.get(2))
        .or_else(|| every.get(3))
        .or_else(|| every.get(4))
        .map_or("", |m| m.as_str())
        .to_lowercase();
    match t.as_str() {
        "minute" => "1 minute".to_string(),
        "hour" | "hourly" => "1 hour".to_string(),
        "day" | "night" | "daily" | "nightly" => "1 day".to_string(),
        _ => t,
    }
}
static RUN_TAKES: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(takes?|lasts|lasting|runs? for|duration|completes? in|finishes in|needs?)\b",
);

/// A scheduled job that takes longer than its interval.
fn job_overlap(spec: &Spec) -> Vec<Candidate> {
    let mut out = Vec::new();
    for l in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        let Some(every) = EVERY.captures(&l.text) else {
            continue;
        };
        let stated = interval_text(&every);
        let Some(interval) = quantity::durations(&stated).first().map(|f| f.value) else {
            continue;
        };
        let block = spec.block_lines(l.number);
        for n in block.start.max(l.number)..block.end.min(l.number + 3) {
            let text = &spec.lines[n - 1].text;
            let Some(t) = RUN_TAKES.find(text) else {
                continue;
            };
            // The run's length is said right after "takes" ("a run takes
            // about 20 minutes"), not anywhere later in the line.
            let near = &text[t.start..];
            if let Some(d) = quantity::durations(near)
                .into_iter()
                .filter(|d| d.span.start <= 40)
                .find(|d| d.value > interval)
            {
                out.push(Candidate {
                    first: l.number,
                    last: n,
                    what: format!("a job every {stated}"),
                    note: format!(
                        "It runs every {stated} (line {}) but a run takes {} (line {n}), so runs overlap (concurrent runs pile up).",
                        l.number, d.text
                    ),
                });
                break;
            }
        }
    }
    out
}

static POLL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(poll\w*|re-?fetch\w*|fetch\w*|refresh\w*|sync\w*|check\w*|crawl\w*|uploads?|uploaded|pulls?|pulled|recomput\w*|rebuil\w*|regenerat\w*|publish\w*|re-?request\w*|re-?load\w*|re-?read\w*|re-?quer\w*|quer(?:y|ies|ied)|downloads?|downloaded|visit\w*|scrap\w*)\b",
);
/// Periodic work other than polling whose period delays what it produces.
static PERIODIC: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(batch(?:es|ed)?|jobs?|runs?|aggregat\w*|exports?|exported|digests?|reports?|snapshots?|scans?|reconcil\w*|imports?|imported|rollups?|recalculat\w*|evaluat\w*)\b",
);
/// "a 6-hour crawl interval", "a 15-minute refresh cycle".
static INTERVAL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(\d+(?:\.\d+)?\s*-?\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?))\s+(?:[a-z-]+\s+){0,2}(?:interval|cadence|cycle|schedule|window)s?\b",
);
/// How long a copy is served: "cached by the CDN for 7 days", "a TTL of 6 hours".
static CACHED_FOR: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:cached|caches?|ttls?|max-age|stale)\b[^.;:]{0,60}?\b(?:for|of|=|up to)\s+(\d+(?:\.\d+)?\s*-?\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?))\b",
);
static LATENCY_GOAL: AsciiFirst = AsciiFirst::new(
    r"(?i)(?:\b(?:within|under|below|less than|at most|no more than|no later than|in)\s+|(?:<=?|≤)\s*|\bp\d{2}\s*(?:of|is|at|:)?\s*)(\d+(?:\.\d+)?\s*(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|hours?|h))\b",
);
static IMMEDIATE_GOAL: AsciiFirst =
    AsciiFirst::new(r"(?i)\b(?:the moment|immediately|instantly|in real[- ]time|as soon as)\b");
/// `Cache-Control: max-age=604800`: seconds.
static MAX_AGE: AsciiFirst = AsciiFirst::new(r"(?i)\bmax-age\s*=\s*(\d{1,9})\b");

/// A goal's whole sentence when a list item wraps onto several lines: the
/// line and the lines before it back to the item's start.
fn goal_text(spec: &Spec, n: usize) -> String {
    let starts_item = |t: &str| {
        let t = t.trim_start();
        t.starts_with("- ")
            || t.starts_with("* ")
            || t.starts_with('|')
            || t.split_once(". ")
                .is_some_and(|(a, _)| !a.is_empty() && a.chars().all(|c| c.is_ascii_digit()))
    };
    let block = spec.block_lines(n);
    let mut first = n;
    while first > block.start && first + 3 > n && !starts_item(&spec.lines[first - 1].text) {
        first -= 1;
    }
    (first..=n)
        .map(|i| spec.lines[i - 1].text.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A goal about how soon a change is seen (not how fast a request is
/// answered): a cache or a batch period can break only these.
static FRESHNESS_GOAL: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(visible|appear\w*|show(?:s|n)? up|reflect\w*|propagat\w*|vanish\w*|disappear\w*|removed|revoked|deleted|updated|fresh\w*|up to date|current|seen?|available|alert\w*|detect\w*|notif\w*|enforc\w*|take effect|takes effect|arriv\w*|land|lands|reach(?:es|ed)?|live|applied|in effect|delivered|sent|receiv\w*|picked up)\b",
);

/// A delay the design builds in, on one line: how long, stated how, and
/// whether the goal it breaks must be about the same thing.
struct Delay {
    secs: f64,
    what: String,
    /// Polling with an interval is checked against every freshness goal
    /// (how soon a change is seen, not how fast a request is answered); the
    /// wider forms (a batch period, an interval, a cache lifetime) only
    /// against one that names the same thing.
    same_topic: bool,
}

fn delays(text: &str) -> Vec<Delay> {
    let mut out = Vec::new();
    let secs_of = |t: &str| quantity::durations(t).first().map(|f| f.value);
    if let Some(every) = EVERY.captures(text) {
        let stated = interval_text(&every);
        if let Some(secs) = secs_of(&stated) {
            if POLL.is_match(text) {
                out.push(Delay {
                    secs,
                    what: format!("polling every {stated}"),
                    same_topic: false,
                });
            } else if let Some(w) = PERIODIC.find(text) {
                out.push(Delay {
                    secs,
                    what: format!("{} every {stated}", text[w].to_lowercase()),
                    same_topic: true,
                });
            }
        }
    }
    if let Some(c) = INTERVAL.captures(text)
        && let Some(secs) = secs_of(&c[1])
    {
        out.push(Delay {
            secs,
            what: format!("a {} interval", c[1].to_lowercase()),
            same_topic: true,
        });
    }
    if let Some(c) = MAX_AGE.captures(text)
        && let Ok(secs) = c[1].parse::<f64>()
    {
        out.push(Delay {
            secs,
            what: format!("copies cached for {}", human_secs(secs)),
            same_topic: true,
        });
    } else if let Some(c) = CACHED_FOR.captures(text)
        && let Some(secs) = secs_of(&c[1])
    {
        out.push(Delay {
            secs,
            what: format!("copies cached for {}", c[1].to_lowercase()),
            same_topic: true,
        });
    }
    out
}

static INTERVAL_HEADER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:(?:poll(?:ing)?|refresh|sync|crawl|check|update)\s+)?(?:interval|frequency|period|cadence|every|ttl|refresh(?: rate)?)\W*$",
);

/// A row of a table whose column is an interval ("| In transit | 15 min |"
/// under "| State | Interval |"): the period it states, as a delay. Read as
/// polling when the row, the header or the section heading says so.
fn table_delay(spec: &Spec, n: usize) -> Option<Delay> {
    let block = spec.block_lines(n);
    let header = &spec.lines[block.start - 1];
    if header.number == n || header.kind != LineKind::Table {
        return None;
    }
    let col = cells(&header.text)
        .iter()
        .position(|h| INTERVAL_HEADER.is_match(h))?;
    let row = cells(&spec.lines[n - 1].text);
    let cell = row.get(col)?;
    let secs = quantity::durations(cell).first()?.value;
    let heading = &spec.sections[spec.lines[n - 1].section].heading;
    let polling = POLL.is_match(&spec.lines[n - 1].text)
        || POLL.is_match(&header.text)
        || POLL.is_match(heading);
    let subject = row.first().filter(|c| !c.is_empty() && *c != cell)?;
    Some(Delay {
        secs,
        what: format!(
            "{} ({}) every {}",
            if polling { "polling" } else { "a refresh" },
            subject,
            cell
        ),
        same_topic: !polling,
    })
}

/// Content words two lines share, for "is this goal about that design line".
fn share_topic(a: &str, b: &str) -> bool {
    const GENERIC: &[&str] = &[
        "second", "minute", "hour", "within", "every", "under", "less", "most", "after", "before",
        "should", "must", "will", "when", "time", "times", "goal", "target", "service", "system",
        "new", "each", "once", "least", "there", "which", "where", "have", "been", "over", "then",
        "they", "what", "about", "would", "could", "same",
    ];
    let wa: Vec<String> = words(a)
        .into_iter()
        .filter(|w| !GENERIC.contains(&w.as_str()))
        .collect();
    words(b)
        .iter()
        .any(|w| !GENERIC.contains(&w.as_str()) && wa.contains(w))
}

/// A delay the design builds in (a polling interval, a batch period, a
/// cache lifetime) longer than a latency the goals promise.
fn polling_latency(spec: &Spec) -> Vec<Candidate> {
    struct Goal {
        line: usize,
        secs: f64,
        stated: String,
        text: String,
        /// Only a delay about the same thing can break it ("immediately").
        same_topic: bool,
    }
    let goals: Vec<Goal> = spec
        .lines
        .iter()
        .filter(|l| is_goal(spec, l.number))
        .filter_map(|l| {
            let text = goal_text(spec, l.number);
            if let Some(c) = LATENCY_GOAL.captures(&l.text) {
                let d = quantity::durations(&c[1]).first()?.value;
                return Some(Goal {
                    line: l.number,
                    secs: d,
                    stated: c[1].to_string(),
                    text,
                    same_topic: false,
                });
            }
            // "enforced the moment", "immediately": no delay at all is
            // promised, but only about what the goal names.
            let m = IMMEDIATE_GOAL.find(&l.text)?;
            Some(Goal {
                line: l.number,
                secs: 1.0,
                stated: l.text[m].to_string(),
                text,
                same_topic: true,
            })
        })
        .collect();
    if goals.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for l in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        let mut found = delays(&l.text);
        if l.kind == LineKind::Table {
            found.extend(table_delay(spec, l.number));
        }
        for delay in found {
            let broken = goals
                .iter()
                .filter(|g| g.secs < delay.secs)
                .filter(|g| {
                    FRESHNESS_GOAL.is_match(&g.text)
                        && (!(delay.same_topic || g.same_topic) || share_topic(&g.text, &l.text))
                })
                .min_by(|a, b| a.secs.total_cmp(&b.secs));
            if let Some(g) = broken {
                out.push(Candidate {
                    first: l.number,
                    last: l.number,
                    what: delay.what.clone(),
                    note: format!(
                        "The goal on line {} promises {} ({}), but {} can be up to {} late (stale for a whole interval).",
                        g.line,
                        g.stated,
                        crate::offline::attacker::excerpt(&g.text),
                        delay.what,
                        human_secs(delay.secs)
                    ),
                });
                break;
            }
        }
    }
    out
}

static CALLS: AsciiFirst = AsciiFirst::new(
    r"`?\b([A-Z][\w-]+)\b`?(?:'s)?(?:\s+(?:service|api|then|in turn|also|itself|synchronously|directly))*(?:,[^,.;]{1,80},)?\s+(?:calls|queries|asks|invokes|consults|hits|(?:requests|fetches|reads|pulls)\s+(?:\w+\s+)?from|depends\s+on)\s+(?:the\s+)?`?\b([A-Z][\w-]+)\b",
);

/// The verbs `CALLS` needs, one of which every match holds.
const CALL_VERBS: &[&str] = &[
    "calls", "queries", "asks", "invokes", "consults", "hits", "requests", "fetches", "reads",
    "pulls", "depends",
];

/// Service A calls B and B calls A.
fn call_cycle(spec: &Spec) -> Vec<Candidate> {
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for l in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        // `CALLS` is case-sensitive: a line without one of its verbs, as
        // written, cannot match, and most lines have none.
        if !CALL_VERBS.iter().any(|v| l.text.contains(v)) {
            continue;
        }
        for c in CALLS.captures_iter(&l.text) {
            let (a, b) = (c[1].to_lowercase(), c[2].to_lowercase());
            if a != b {
                edges.entry((a, b)).or_insert(l.number);
            }
        }
    }
    let mut out = Vec::new();
    for ((a, b), &n) in &edges {
        if a < b
            && let Some(&m) = edges.get(&(b.clone(), a.clone()))
        {
            out.push(Candidate {
                first: n.min(m),
                last: n.max(m),
                what: format!("{a} and {b} calling each other"),
                note: format!(
                    "{a} calls {b} (line {n}) and {b} calls {a} (line {m}): a synchronous cycle."
                ),
            });
        }
    }
    out
}

static NEVER_STORE: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:never|not|no longer|don't|do not|does not|won't|will not)\s+(?:\w+\s+)?(?:persist|store|keep|log|retain|save|record|collect)\w*\s+([^.;]{3,80})",
);
/// The passive forms: "no token Google issues to us is ever written to
/// storage", "raw card numbers are never persisted".
static NEVER_STORED: AsciiFirst = AsciiFirst::new(
    r"(?i)(?:\b(?:no|none of (?:the|our|its|their))\s+([^.;]{3,80}?)\s+(?:is|are|gets?|will be|shall be)\s+(?:ever\s+)?|\b([^.;]{3,80}?)\s+(?:is|are|will be)\s+never\s+)(?:written|stored|persisted|kept|saved|logged|retained|recorded|collected)\b",
);

/// A "never kept" statement on a line: the whole statement and what it
/// says is never kept.
fn never_kept(text: &str) -> Option<(String, String)> {
    if let Some(c) = NEVER_STORE.captures(text) {
        return Some((c[0].to_string(), c[1].to_string()));
    }
    let c = NEVER_STORED.captures(text)?;
    let what = c.get(1).or_else(|| c.get(2))?.as_str();
    // "no more than 4K of messages are written" bounds them.
    let w = what.trim_start().to_ascii_lowercase();
    if ["more than", "less than", "fewer than", "longer than"]
        .iter()
        .any(|b| w.starts_with(b))
    {
        return None;
    }
    Some((c[0].to_string(), what.to_string()))
}

/// A case the statement is limited to: "if the hint was used", "when the
/// pod has no signature".
static CONDITION: AsciiFirst = AsciiFirst::new(r"(?i)\b(?:if|when|unless|otherwise|in case)\b");

/// "It determines whether to store new state": a decision with two
/// outcomes, not a statement that it is kept.
static DECIDES: AsciiFirst = AsciiFirst::new(r"(?i)\b(?:whether|decides?|determines?|chooses?)\b");

static STORE_CUE: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(column|table|stored?|stores|holds?|persist\w*|saved?|keeps?|kept|writes?|written|logs?|logged|retain\w*|text|varchar|blob|jsonb?)\b",
);
const STOP: &[&str] = &[
    "the", "and", "any", "our", "their", "from", "with", "only", "user", "users", "data", "them",
    "this", "that", "other", "more", "than", "into", "also", "ever",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.to_lowercase())
        .filter(|w| w.len() >= 4 && !STOP.contains(&w.as_str()))
        .map(|w| w.trim_end_matches('s').to_string())
        .collect()
}

/// "We never store X" on one line, X stored on another.
/// "- [Some title](#anchor)" or "* [issue 12 - title](https://...)": a list
/// item whose text is one Markdown link.
fn is_link_item(text: &str) -> bool {
    let t = text.trim();
    let Some(rest) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
        .map(str::trim_start)
    else {
        return false;
    };
    rest.starts_with('[')
        && rest.ends_with(')')
        && rest
            .find("](")
            .is_some_and(|i| !rest[i + 2..].contains(']'))
}

fn contradiction(spec: &Spec) -> Vec<Candidate> {
    // Each line is read once: its "never kept" claim, and whether it could
    // be the line that keeps what a claim names (with its words). The
    // claims are then matched against the keepers without reading a line
    // again.
    let claims: Vec<Option<(String, String)>> = spec
        .lines
        .iter()
        .map(|l| {
            if matches!(l.kind, LineKind::Heading | LineKind::Blank | LineKind::Html)
                || !may_deny(&l.lower)
            {
                return None;
            }
            never_kept(&l.text)
        })
        .collect();
    if claims.iter().all(Option::is_none) {
        return Vec::new();
    }
    let keepers: Vec<(usize, usize, Vec<String>)> = spec
        .lines
        .iter()
        .zip(&claims)
        .filter(|(o, claim)| {
            claim.is_none()
                && is_design(spec, o.number)
                && !is_link_item(&o.text)
                && STORE_CUE.is_match(&o.text)
                && !DECIDES.is_match(&o.text)
        })
        // Prose restating the stored thing beats a bare column name.
        .map(|(o, _)| {
            (
                o.number,
                usize::from(o.kind != LineKind::Code),
                words(&o.text),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (l, claim) in spec.lines.iter().zip(&claims) {
        let Some((whole, what)) = claim else {
            continue;
        };
        // A list item that is only a link (a Table of Contents entry, a
        // referenced issue's title) names another text; it states nothing.
        if is_link_item(&l.text) {
            continue;
        }
        // "If the hint was used: no new state is stored" holds in one case
        // only; a condition on the line or over its list does not contradict
        // the other case keeping it.
        let label = &spec.lines[spec.block_lines(l.number).start - 1].text;
        let before = spec.lines[l.number.saturating_sub(2)].text.as_str();
        if [l.text.as_str(), label, before]
            .iter()
            .any(|t| CONDITION.is_match(t))
        {
            continue;
        }
        // "not only logs X but also ..." affirms X.
        let head: Vec<String> = whole
            .split_whitespace()
            .take(3)
            .map(str::to_ascii_lowercase)
            .collect();
        if head.windows(2).any(|w| w[0] == "not" && w[1] == "only") {
            continue;
        }
        let claim = words(what);
        if claim.len() < 2 {
            continue;
        }
        let mut best: Option<(usize, usize)> = None;
        for (n, prose, have) in &keepers {
            if spec.lines[n - 1].block == l.block {
                continue;
            }
            let shared = claim.iter().filter(|w| have.contains(w)).count();
            let score = shared * 2 + prose;
            if shared >= 2 && best.is_none_or(|b| score > b.1) {
                best = Some((*n, score));
            }
        }
        if let Some((n, _)) = best {
            out.push(Candidate {
                first: l.number.min(n),
                last: l.number.max(n),
                what: what.trim().to_string(),
                note: format!(
                    "Line {} says it is never kept (\"{}\"), but line {n} keeps it (\"{}\"); the two sections contradict each other.",
                    l.number,
                    crate::offline::attacker::excerpt(&l.text),
                    crate::offline::attacker::excerpt(&spec.lines[n - 1].text)
                ),
            });
        }
    }
    out
}

/// Whether a line (lowercased) holds the words `never_kept` needs: a
/// denial ("never", "not", "n't", "no", "none") and a keeping verb. Most
/// lines lack one, and the patterns' bounded spans are costly to run on
/// every line.
fn may_deny(lower: &str) -> bool {
    let denies = lower.contains("never")
        || lower.contains("not")
        || lower.contains("n't")
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w == "no" || w == "none");
    denies && KEEP_VERBS.iter().any(|v| lower.contains(v))
}

/// The stems of every keeping verb `NEVER_STORE` and `NEVER_STORED` name.
const KEEP_VERBS: &[&str] = &[
    "persist", "store", "keep", "kept", "log", "retain", "save", "record", "collect", "written",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::RuleDef;

    fn rule(extra: &str) -> Rule {
        let def: RuleDef = toml::from_str(&format!(
            "id = \"t\"\ntitle = \"t\"\nseverity = \"low\"\nmissing = \"m\"\nimpact = \"i\"\n{extra}"
        ))
        .unwrap();
        Rule::compile(def).unwrap()
    }

    fn spec(text: &str) -> Spec {
        Spec::parse(None, text.to_string())
    }

    #[test]
    fn a_link_only_list_item_is_not_a_claim() {
        assert!(is_link_item(
            "  - [We do not store the raw body](#we-do-not-store)"
        ));
        assert!(is_link_item(
            "* [bug 7 - it does not keep the file](https://x.test/7)"
        ));
        assert!(!is_link_item(
            "- We do not store the body; see [notes](#notes)."
        ));
        let s = spec(
            "# S\n\n- [The service does not store uploaded photos](#photos)\n\n## Design\n\nThe worker will store uploaded photos in the bucket.\n",
        );
        assert!(contradiction(&s).is_empty());
        let s = spec(
            "# S\n\n## Privacy\n\nThe service does not store uploaded photos.\n\n## Design\n\nThe worker will store uploaded photos in the bucket.\n",
        );
        assert_eq!(contradiction(&s).len(), 1);
        let s = spec(
            "# S\n\n## Privacy\n\nThe service will not only store uploaded photos but also index them.\n\n## Design\n\nThe worker will store uploaded photos in the bucket.\n",
        );
        assert!(contradiction(&s).is_empty());
    }

    #[test]
    fn every_verb_the_call_pattern_reads_is_in_the_cheap_word_list() {
        for verb in [
            "calls",
            "queries",
            "asks",
            "invokes",
            "consults",
            "hits",
            "requests data from",
            "fetches rows from",
            "reads from",
            "pulls from",
            "depends on",
        ] {
            let line = format!("Orders {verb} Payments.");
            assert!(CALLS.is_match(&line), "{line}");
            assert!(CALL_VERBS.iter().any(|v| line.contains(v)), "{line}");
        }
    }

    #[test]
    fn the_cheap_word_test_passes_every_line_a_never_kept_claim_is_read_on() {
        let claims = [
            "We never store the raw card number.",
            "The service does not persist uploaded photos.",
            "It won't log the bearer token.",
            "Tokens are NEVER written to disk.",
            "No token Google issues to us is ever written to storage.",
            "None of the user's messages are retained.",
            "Raw card numbers are never persisted.",
            "We don't keep the address book.",
        ];
        for c in claims {
            assert!(never_kept(c).is_some(), "{c}");
            assert!(may_deny(&c.to_ascii_lowercase()), "{c}");
        }
        // Lines without a denial or without a keeping verb are skipped.
        for quiet in [
            "The worker stores uploaded photos in the bucket.",
            "Nothing here is ever deleted; notes are public.",
            "No reviewer signs off on a release.",
        ] {
            assert!(!may_deny(&quiet.to_ascii_lowercase()), "{quiet}");
            assert!(never_kept(quiet).is_none(), "{quiet}");
        }
    }

    #[test]
    fn intervals_are_read_in_the_ways_people_write_them() {
        let secs = |t: &str| {
            let g = EVERY.captures(t).expect(t);
            quantity::durations(&interval_text(&g))
                .first()
                .map(|d| d.value)
        };
        assert_eq!(secs("polls every 15 minutes"), Some(900.0));
        assert_eq!(secs("re-reads it once every ten minutes"), Some(600.0));
        assert_eq!(secs("Once a minute, each server asks again"), Some(60.0));
        assert_eq!(secs("rebuilt four times an hour"), Some(900.0));
        assert_eq!(secs("synced twice a day"), Some(43200.0));
        assert_eq!(secs("exported nightly"), Some(86400.0));
        assert!(EVERY.captures("once the minute hand moves").is_none());
    }

    #[test]
    fn a_run_length_is_said_right_after_takes() {
        // "the last valid state for three minutes" is no run length, and a
        // duration far after "takes" is about something else.
        let quiet = [
            "# S\n\n## Design\n\nIt checks every minute and keeps the last valid state for about three minutes.\n",
            "# S\n\n## Design\n\nIt checks every minute; how long it takes the plugin to notice the change is up to the plugin, at least five minutes.\n",
        ];
        for q in quiet {
            assert!(job_overlap(&spec(q)).is_empty(), "{q}");
        }
        let gap = "# S\n\n## Design\n\nThe index is rebuilt four times an hour; a rebuild takes about 20 minutes.\n";
        assert_eq!(job_overlap(&spec(gap)).len(), 1);
    }

    #[test]
    fn capacity_compares_daily_volume_with_stated_storage() {
        let s = spec(
            "# S\n\n## Capacity\n\n- About 20k files/day, average 5 MB each.\n- The volume is 2 TB.\n",
        );
        let c = capacity(&s);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].first, c[0].last), (5, 6));
        // 20k x 5 MB = ~98 GB/day: 2 TB lasts about 21 days.
        assert!(c[0].note.contains("21 days"), "{}", c[0].note);
        // Ten times the disk lasts over half a year: still flagged; 100 TB is not.
        let s =
            spec("# S\n\n## Capacity\n\n- 20k files/day, 5 MB each.\n- The volume is 100 TB.\n");
        assert!(capacity(&s).is_empty());
        // A direct rate works too, and goals do not count as design.
        let s = spec("# S\n\n## Design\n\nWe write 300 GB/day to the local disk of 1 TB.\n");
        assert!(
            capacity(&s).is_empty(),
            "same line is not a separate capacity"
        );
        let s = spec("# S\n\n## Design\n\nWe write 300 GB/day.\nThe disk is 1 TB.\n");
        assert_eq!(capacity(&s).len(), 1);
        // A read speed is not a growth rate.
        let s = spec(
            "# S\n\n## Design\n\nReloading from a disk with 150 MB/s read throughput takes minutes.\nThe disk is 2 TB.\n",
        );
        assert!(capacity(&s).is_empty());
        let s = spec("# S\n\n## Design\n\nThe job writes 150 MB/s of frames.\nThe disk is 2 TB.\n");
        assert_eq!(capacity(&s).len(), 1);
    }

    #[test]
    fn job_overlap_needs_a_run_longer_than_the_interval() {
        let s = spec(
            "# S\n\n## Build\n\nThe builder runs every 15 minutes; a full build takes about 20 minutes.\n",
        );
        assert_eq!(job_overlap(&s).len(), 1);
        let s = spec(
            "# S\n\n## Build\n\nThe builder runs every 15 minutes; a full build takes about 5 minutes.\n",
        );
        assert!(job_overlap(&s).is_empty());
        let s = spec(
            "# S\n\n## Retest\n\nA CronJob runs every hour; a full pass takes 90-140 minutes.\n",
        );
        assert_eq!(job_overlap(&s).len(), 1);
        let s =
            spec("# S\n\n## Retest\n\nThe report is built hourly; a run takes about 10 minutes.\n");
        assert!(job_overlap(&s).is_empty());
    }

    #[test]
    fn polling_is_checked_against_latency_goals() {
        let text = "# S\n\n## Goals\n\n- Changes are visible within 5 seconds.\n\n## Design\n\nEach server polls the origin every 60 seconds.\n";
        let c = polling_latency(&spec(text));
        assert_eq!(c.len(), 1);
        let hourly = "# S\n\n## Goals\n\n- Alerts fire within 2 minutes.\n\n## Design\n\nDevices upload their buffered readings hourly.\n";
        assert_eq!(polling_latency(&spec(hourly)).len(), 1);
        assert_eq!(c[0].first, 9);
        assert!(c[0].note.contains("line 5"), "{}", c[0].note);
        let fast = text.replace("every 60 seconds", "every 2 seconds");
        assert!(polling_latency(&spec(&fast)).is_empty());
    }

    #[test]
    fn batch_periods_intervals_and_cache_lifetimes_break_freshness_goals_on_their_topic() {
        let goals = "# S\n\n## Goals\n\n- Price changes are visible to shoppers within 5 minutes.\n- Checkout p95 < 2 s.\n\n## Design\n\n";
        let fires = |design: &str| polling_latency(&spec(&format!("{goals}{design}\n")));
        // A batch period, an interval and a cache lifetime on the goal's topic.
        let c = fires("A nightly batch job recomputes all prices.");
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].note.contains("line 5") && c[0].note.contains("5 minutes"),
            "{}",
            c[0].note
        );
        assert_eq!(
            fires("Prices are reloaded on a 30-minute refresh interval.").len(),
            1
        );
        assert_eq!(
            fires("Each shopper's price list is cached by the CDN for 2 hours.").len(),
            1
        );
        assert_eq!(
            fires("The price page is sent with Cache-Control: max-age=3600.").len(),
            1
        );
        // Shorter than the goal, or about something else: nothing.
        assert!(fires("Prices are cached for 60 seconds.").is_empty());
        assert!(fires("A nightly batch job compacts the audit log.").is_empty());
        assert!(fires("Product images are cached by the CDN for 7 days.").is_empty());
        // A request-latency goal ("p95 < 2 s") is not broken by a cache.
        let latency_only = "# S\n\n## Goals\n\n- Checkout p95 < 2 s for a cart.\n\n## Design\n\nThe cart page is cached for 1 day.\n";
        assert!(polling_latency(&spec(latency_only)).is_empty());
    }

    #[test]
    fn interval_tables_immediate_goals_and_wrapped_goal_lines() {
        let table = "# S\n\n## Goals\n\n- Delivered events are visible within 5 minutes of the scan.\n\n## Poll scheduler\n\n| State | Interval |\n|---|---|\n| In transit | 15 min |\n| Delivered | stop |\n";
        let c = polling_latency(&spec(table));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].first, 11);
        assert!(c[0].what.contains("In transit"), "{}", c[0].what);
        let fast = table.replace("15 min", "2 min");
        assert!(polling_latency(&spec(&fast)).is_empty());
        // "the moment": only a delay about the same thing breaks it.
        let now = "# S\n\n## Goals\n\n- The plan cap is enforced the moment a tenant exceeds its allowance.\n\n## Design\n\nThe gateway holds a snapshot of each tenant's allowance, recomputed every 15 minutes.\nA report of all invoices is exported every 15 minutes.\n";
        let c = polling_latency(&spec(now));
        assert_eq!(
            c.iter().map(|c| c.first).collect::<Vec<_>>(),
            vec![9],
            "{c:?}"
        );
        // A goal whose bound wraps onto the next line keeps its topic.
        let wrapped = "# S\n\n## Goals\n\n- Expired stories vanish from media URLs\n  within 60 seconds of expiry.\n\n## Design\n\nStory media is served with `Cache-Control: public, max-age=604800`.\n";
        let c = polling_latency(&spec(wrapped));
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].note.contains("vanish"), "{}", c[0].note);
    }

    #[test]
    fn call_cycles_and_contradictions() {
        let s = spec(
            "# S\n\n## Design\n\n- Orders calls Payments to authorise.\n- Payments calls Orders to read the total.\n",
        );
        let c = call_cycle(&s);
        assert_eq!((c[0].first, c[0].last), (5, 6));
        let s = spec(
            "# S\n\n## Design\n\n- Orders calls Payments to authorise.\n- Payments calls Ledger.\n",
        );
        assert!(call_cycle(&s).is_empty());

        let s = spec(
            "# S\n\n## Privacy\n\nWe never store raw passport scans.\n\n## Storage\n\nThe `documents` table keeps the raw passport scans for audits.\n",
        );
        let c = contradiction(&s);
        assert_eq!((c[0].first, c[0].last), (5, 9));
        let s = spec(
            "# S\n\n## Privacy\n\nWe never store raw passport scans.\n\n## Storage\n\nThe `documents` table keeps a hash of each scan.\n",
        );
        assert!(contradiction(&s).is_empty());
    }

    #[test]
    fn cycles_and_contradictions_in_other_words() {
        // Other verbs, and a clause between the caller and its verb.
        let s = spec(
            "# S\n\n## Design\n\n- Pricing asks Catalog's `GET /items` for the list price.\n- Catalog, to show a discount badge, queries Pricing's `GET /promos`.\n",
        );
        let c = call_cycle(&s);
        assert_eq!((c[0].first, c[0].last), (5, 6));
        // The passive form of "never kept".
        let s = spec(
            "# S\n\n## Privacy\n\nNo access token the provider issues is ever written to storage.\n\n## Storage\n\nThe `sessions` table keeps the provider access token for later calls.\n",
        );
        assert_eq!(contradiction(&s).len(), 1);
        // A bound, a case and a decision are no contradiction.
        let quiet = [
            "# S\n\n## Limits\n\nNo more than 4K of warning messages are written per response.\n\n## Design\n\nWarning messages are written to the response header.\n",
            "# S\n\n## Design\n\n**If the hint was used:**\n- No new batch state is stored.\n\n## Cache\n\nThe batch state is kept in memory for the next pod.\n",
            "# S\n\n## Design\n\nIt then determines whether to store new batch state.\n\n## Cache\n\n- No new batch state is stored; the old batch goes on.\n",
        ];
        for q in quiet {
            assert!(contradiction(&spec(q)).is_empty(), "{q}");
        }
    }

    #[test]
    fn two_of_needs_two_different_names_on_trigger_lines() {
        let r = rule(
            "check = \"two-of\"\ntriggers = ['\\bcach(?:e|ed|es|ing)\\b']\ndistinct = ['redis', 'memcached']",
        );
        let s = spec(
            "# S\n\n## Design\n\nSessions are cached in Redis.\nProfiles are cached in Memcached.\n",
        );
        assert_eq!(two_of(&s, &r).len(), 1);
        let s = spec(
            "# S\n\n## Design\n\nSessions are cached in Redis.\nProfiles are stored in Memcached.\n",
        );
        assert!(two_of(&s, &r).is_empty());
    }
}
