//! The `stated-math` check: figures a spec works out from its own numbers
//! that those numbers do not give. Three shapes, each common in capacity
//! sections and each checkable without knowing the domain:
//!
//! - **time to finish:** "20 workers × 500 req/s ⇒ 50M devices done in
//!   ~10 min" (50M at 10k/s takes about 83 minutes);
//! - **data volume:** "1.2 million players ... 64 samples per second and 32
//!   bytes per sample, roughly 2.5 TB per day" (about 200 TB/day);
//! - **shares:** a table or list of shares or guarantees that add up to
//!   more than 100%.
//!
//! Every figure is read from one paragraph, list item or table, so two
//! unrelated numbers in different places are never combined. When a
//! paragraph holds several candidates, the reading most favourable to the
//! spec is taken: a gap is raised only when no reading makes the claim
//! hold.

use super::checks::{Candidate, is_design};
use crate::ascii_first::AsciiFirst;
use crate::quantity::{self, human_bytes, human_secs};
use crate::spec::{LineKind, Spec, table_cells as cells};
use std::ops::Range;

/// How far a time-to-finish claim may be off before it is raised.
const TIME_SLACK: f64 = 1.5;
/// How far a volume claim may be off (either way) before it is raised.
const VOLUME_SLACK: f64 = 4.0;

/// A number with an optional magnitude: `quantity`'s letters (k, m, b) and
/// the words (thousand, million...); `quantity::number` reads both.
macro_rules! num {
    () => {
        r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|m|b|bn|thousand|million|billion)?\b"
    };
}

/// A count of things: "50M devices", "180,000 devices", "20 workers".
static COUNT: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)(?:^|[^\w.,])",
    num!(),
    r"\s*([a-z][a-z-]{2,})\b"
));
/// Events per unit of time: "500 req/s", "64 samples per second", "600k
/// msg/min", "64 Hz".
static RATE: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)(?:^|[^\w.,])",
    num!(),
    r"\s*(?:(?:[a-z][a-z-]*)\s*){0,2}?(?:/|\bper\b|\ba\b|\beach\b)\s*(s|sec|second|m|min|minute|h|hr|hour|d|day)\b|(?:^|[^\w.,])",
    num!(),
    r"\s*(hz)\b"
));
/// A multiplication between a count and a rate: "20 workers × 500 req/s".
static TIMES: AsciiFirst = AsciiFirst::new(r"^\s*(?:×|\*|x)\s*$");
/// What comes right before a duration that states when the work is done.
static FINISHED_BY: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:in|within|under|inside|takes?|taking|done in|finish(?:es|ed)? in|complete[sd]? in|less than)\s*(?:about|around|roughly|approximately|approx\.?|~|<)?\s*$",
);
/// What comes right after a duration that names a deadline: "the 10-minute
/// notice window".
static DEADLINE_AFTER: AsciiFirst =
    AsciiFirst::new(r"(?i)^\s*(?:[a-z-]+\s+)?(?:window|budget|deadline|target|sla)\b");
/// A size per item: "32 bytes per sample", "2 KB each".
static PER_ITEM: AsciiFirst = AsciiFirst::new(r"(?i)^\s*(?:per|each|a|/)\s*(?:[a-z][a-z-]*)?");
/// Words before a table or list that make its percentages shares of one
/// whole.
static SHARE_WORD: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:shares?|split|allocat\w*|quotas?|weights?|portions?|breakdown|distribution|guarantee[sd]?|percent of (?:the )?(?:capacity|traffic|budget|cluster|fleet))\b",
);
static PERCENT: AsciiFirst = AsciiFirst::new(r"(\d{1,3}(?:\.\d+)?)\s*%");
static TOTAL_ROW: AsciiFirst = AsciiFirst::new(r"(?i)\b(?:total|sum|overall)\b");

/// Nouns after a number that make it a unit, not a count of things.
const NOT_THINGS: &[&str] = &[
    "bytes", "byte", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "ms", "sec", "secs",
    "second", "seconds", "min", "mins", "minute", "minutes", "hour", "hours", "hrs", "day", "days",
    "week", "weeks", "month", "months", "year", "years", "percent", "hz", "vcpu", "vcpus", "cpu",
    "cpus", "cores", "core", "gbps", "mbps", "times", "x",
];

#[derive(Debug, Clone)]
struct Num {
    value: f64,
    span: Range<usize>,
}

/// Rates per second in `text`, excluding data rates ("2 TB/day").
fn rates(text: &str) -> Vec<Num> {
    RATE.captures_iter(text)
        .into_iter()
        .filter_map(|c| {
            let (digits, mag, unit) = match c.get(1) {
                Some(d) => (d, c.get(2), c.get(3)?),
                None => (c.get(4)?, c.get(5), c.get(6)?),
            };
            let whole = &text[digits.start()..c.get(0)?.end()];
            if !quantity::sizes(whole).is_empty() {
                return None;
            }
            // Hertz is per second.
            let unit = unit.as_str();
            let per = if unit.eq_ignore_ascii_case("hz") {
                1.0
            } else {
                quantity::seconds_of(unit)?
            };
            Some(Num {
                value: quantity::number(digits.as_str(), mag.map(|m| m.as_str()))? / per,
                span: digits.start()..c.get(0)?.end(),
            })
        })
        .collect()
}

/// Counts of things in `text`: numbers followed by a noun that is not a
/// unit, and not part of a rate, a size or a duration.
fn counts(text: &str, rates: &[Num]) -> Vec<Num> {
    let sizes = quantity::sizes(text);
    let durations = quantity::durations(text);
    let inside = |r: &Range<usize>, s: &Range<usize>| r.start < s.end && s.start < r.end;
    COUNT
        .captures_iter(text)
        .into_iter()
        .filter_map(|c| {
            let digits = c.get(1)?;
            let noun = c.get(3)?.as_str().to_ascii_lowercase();
            let span = digits.start()..c.get(0)?.end();
            // "50M devices" is a count with a magnitude, not 50 minutes.
            let magnitude = c.get(2).is_some();
            if NOT_THINGS.contains(&noun.as_str())
                || rates.iter().any(|r| inside(&r.span, &span))
                || sizes.iter().any(|s| inside(&s.span, &span))
                || !magnitude && durations.iter().any(|d| inside(&d.span, &span))
                || text[span.end..].trim_start().starts_with('%')
            {
                return None;
            }
            Some(Num {
                value: quantity::number(digits.as_str(), c.get(2).map(|m| m.as_str()))?,
                span,
            })
        })
        .collect()
}

/// A paragraph, list item or table as one text, with the line each byte
/// came from.
struct Joined {
    text: String,
    /// (offset in `text`, line number), ascending.
    starts: Vec<(usize, usize)>,
}

impl Joined {
    fn of(spec: &Spec, lines: Range<usize>) -> Joined {
        let mut text = String::new();
        let mut starts = Vec::new();
        for n in lines {
            if let Some(l) = spec.line(n) {
                starts.push((text.len(), n));
                text.push_str(&l.text);
                text.push(' ');
            }
        }
        Joined { text, starts }
    }

    fn line_at(&self, offset: usize) -> usize {
        match self.starts.binary_search_by_key(&offset, |s| s.0) {
            Ok(i) => self.starts[i].1,
            Err(i) => self.starts[i.saturating_sub(1)].1,
        }
    }
}

/// Sentences of a joined paragraph: byte ranges ending at `. `, `! `, `? `
/// or `; ` (a decimal point has no space after it).
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = text.as_bytes();
    for i in 0..b.len() {
        if matches!(b[i], b'.' | b'!' | b'?' | b';') && b.get(i + 1).is_none_or(|c| *c == b' ') {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// The paragraphs, list items and tables of the design, once each.
fn design_blocks(spec: &Spec) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for l in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        if l.kind == LineKind::Code {
            continue;
        }
        let block = spec.block_lines(l.number);
        if out.last().is_none_or(|b| b.start != block.start) {
            out.push(block);
        }
    }
    out
}

pub fn run(spec: &Spec) -> Vec<Candidate> {
    let mut out = Vec::new();
    for block in design_blocks(spec) {
        let joined = Joined::of(spec, block.clone());
        if let Some(c) = time_to_finish(&joined).or_else(|| volume(&joined)) {
            out.push(c);
        }
    }
    out.extend(shares(spec));
    out
}

/// "20 workers × 500 req/s ⇒ 50M devices done in ~10 min".
fn time_to_finish(j: &Joined) -> Option<Candidate> {
    for s in sentences(&j.text) {
        let text = &j.text[s.clone()];
        let rates = rates(text);
        if rates.is_empty() {
            continue;
        }
        let counts = counts(text, &rates);
        // A count times a rate: "20 workers × 500 req/s".
        let mut multipliers = Vec::new();
        let mut best: Option<(f64, String)> = None;
        for r in &rates {
            let mut value = r.value;
            let mut shown = text[r.span.clone()].trim().to_string();
            if let Some(c) = counts.iter().find(|c| {
                c.span.end <= r.span.start && TIMES.is_match(&text[c.span.end..r.span.start])
            }) {
                value *= c.value;
                multipliers.push(c.span.clone());
                shown = format!("{} × {shown}", text[c.span.clone()].trim());
            }
            if best.as_ref().is_none_or(|b| value > b.0) {
                best = Some((value, shown));
            }
        }
        let (rate, rate_text) = best?;
        let Some(total) = counts
            .iter()
            .filter(|c| c.value >= 1000.0 && !multipliers.contains(&c.span))
            .max_by(|a, b| a.value.total_cmp(&b.value))
        else {
            continue;
        };
        let deadline = quantity::durations(text).into_iter().find(|d| {
            !counts.iter().any(|c| c.span.start == d.span.start)
                && FINISHED_BY.is_match(&text[..d.span.start])
                || DEADLINE_AFTER.is_match(&text[d.span.end..])
        });
        let Some(deadline) = deadline else {
            continue;
        };
        let needed = total.value / rate;
        if needed > TIME_SLACK * deadline.value && needed - deadline.value > 60.0 {
            let line = j.line_at(s.start + deadline.span.start);
            let first = j.line_at(s.start + total.span.start).min(line);
            let total_text = text[total.span.clone()].trim();
            return Some(Candidate {
                first,
                last: line,
                what: format!("{total_text} in {}", deadline.text.trim()),
                note: format!(
                    "The numbers do not add up: at {rate_text} (about {}/s), {total_text} take about {}, not {}.",
                    round_rate(rate),
                    human_secs(needed),
                    deadline.text.trim()
                ),
            });
        }
    }
    None
}

fn round_rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.1}M", r / 1e6)
    } else if r >= 1e4 {
        format!("{:.0}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

/// "1.2 million players ... 64 samples per second and 32 bytes per sample,
/// roughly 2.5 TB per day".
fn volume(j: &Joined) -> Option<Candidate> {
    let text = &j.text;
    let stated = quantity::size_rates_per_day(text).into_iter().next()?;
    let rates = rates(text);
    let per_item: Vec<f64> = quantity::plain_sizes(text)
        .into_iter()
        .filter(|s| PER_ITEM.is_match(&text[s.span.end..]))
        .map(|s| s.value)
        .collect();
    // Another data rate is another claim; this one is read alone.
    if rates.is_empty() || per_item.len() != 1 {
        return None;
    }
    let counts: Vec<Num> = counts(text, &rates)
        .into_iter()
        .filter(|c| c.value >= 2.0)
        .collect();
    if counts.is_empty() {
        return None;
    }
    let size = per_item[0];
    let within = |computed: f64| {
        let ratio = computed / stated.value;
        (1.0 / VOLUME_SLACK..=VOLUME_SLACK).contains(&ratio)
    };
    // The reading most favourable to the spec: any count and rate that give
    // the stated volume.
    if counts.iter().any(|c| {
        rates
            .iter()
            .any(|r| within(c.value * r.value * size * 86400.0))
    }) {
        return None;
    }
    let n = counts.iter().max_by(|a, b| a.value.total_cmp(&b.value))?;
    let r = rates.iter().max_by(|a, b| a.value.total_cmp(&b.value))?;
    let computed = n.value * r.value * size * 86400.0;
    let line = j.line_at(stated.span.start);
    Some(Candidate {
        first: j.line_at(n.span.start).min(line),
        last: line,
        what: format!("{} of data", stated.text.trim()),
        note: format!(
            "The numbers do not add up: {} × {} × {} per item is about {}/day, not {}.",
            text[n.span.clone()].trim(),
            text[r.span.clone()].trim(),
            human_bytes(size),
            human_bytes(computed),
            stated.text.trim()
        ),
    })
}

/// A table column or a list whose percentages are shares of one whole and
/// add up to more than 100%.
fn shares(spec: &Spec) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut seen = 0;
    for l in spec.lines.iter().filter(|l| is_design(spec, l.number)) {
        if l.number < seen || !matches!(l.kind, LineKind::Table | LineKind::ListItem) {
            continue;
        }
        let block = spec.block_lines(l.number);
        seen = block.end;
        // The share words may be in the heading, the lines just before the
        // block, or the table's header row.
        let before = block.start.saturating_sub(3).max(1)..block.start;
        let heading = &spec.sections[l.section].heading;
        let context = SHARE_WORD.is_match(heading)
            || before
                .clone()
                .chain(block.start..block.start + 1)
                .filter_map(|n| spec.line(n))
                .any(|x| SHARE_WORD.is_match(&x.text));
        if !context {
            continue;
        }
        // In a table, the percentages must sit under a column whose header
        // names shares: "Lendable 50%" beside "Nominal Shares" is a part of
        // each row's own share, not a share of the whole.
        let header = (l.kind == LineKind::Table)
            .then(|| spec.line(block.start).map(|h| cells(&h.text)))
            .flatten();
        let rows: Vec<(usize, f64)> = block
            .clone()
            .filter_map(|n| spec.line(n))
            .filter(|x| !TOTAL_ROW.is_match(&x.text))
            .filter_map(|x| {
                let p = PERCENT.captures_iter(&x.text);
                if p.len() != 1 {
                    return None;
                }
                if let Some(header) = &header {
                    let column = cells(&x.text).iter().position(|c| PERCENT.is_match(c))?;
                    if !header.get(column).is_some_and(|h| SHARE_WORD.is_match(h)) {
                        return None;
                    }
                }
                Some((x.number, p[0].get(1)?.as_str().parse::<f64>().ok()?))
            })
            .collect();
        if rows.len() < 3 {
            continue;
        }
        let sum: f64 = rows.iter().map(|r| r.1).sum();
        if sum > 100.5 {
            let (first, last) = (rows[0].0, rows[rows.len() - 1].0);
            out.push(Candidate {
                first,
                last,
                what: format!("shares adding up to {sum:.0}%"),
                note: format!(
                    "The numbers do not add up: the {} shares on lines {first}-{last} sum to {sum:.0}%, so they cannot all be guaranteed at once.",
                    rows.len()
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn patterns_read_non_ascii_text_as_unicode_does(text in crate::ascii_first::sample_texts()) {
            for p in [&FINISHED_BY, &DEADLINE_AFTER, &PER_ITEM, &SHARE_WORD, &TOTAL_ROW] {
                proptest::prop_assert!(p.agrees_on(&text), "{text:?}");
            }
        }
    }

    fn spec(text: &str) -> Spec {
        Spec::parse(None, text.to_string())
    }

    #[test]
    fn a_time_to_finish_the_rates_cannot_meet_is_raised() {
        let s = spec(
            "# S\n\n## Throughput\n\n- 20 workers × 500 req/s ⇒ 50M devices done in ~10 min.\n",
        );
        let c = run(&s);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].first, 5);
        // 50M / 10k per second = 5,000 s.
        assert!(c[0].note.contains("83 min"), "{}", c[0].note);
        // Forty workers would not do either; four hundred would.
        let s = spec(
            "# S\n\n## Throughput\n\n- 400 workers × 500 req/s ⇒ 50M devices done in ~10 min.\n",
        );
        assert!(run(&s).is_empty());
        // A deadline named after the figure, over wrapped lines.
        let s = spec(
            "# S\n\n## Decision\n\nThe platform calls each vendor once per device. At 50 req/s per vendor\n(150 req/s in total) this dispatches all 180,000 devices well within the\n10-minute notice window.\n",
        );
        let c = run(&s);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].first, c[0].last), (6, 7));
        assert!(c[0].note.contains("20 min"), "{}", c[0].note);
        // No deadline, or a deadline that holds: nothing to check.
        let s = spec("# S\n\n## D\n\nWe send 500 req/s to 50M devices.\n");
        assert!(run(&s).is_empty());
        let s =
            spec("# S\n\n## D\n\nAt 2,000 req/s the 100,000 devices are done in about 1 minute.\n");
        assert!(run(&s).is_empty());
    }

    #[test]
    fn a_data_volume_its_own_factors_contradict_is_raised() {
        let s = spec(
            "# S\n\n## Sizing\n\nAt peak we see 1.2 million players. At 64 samples per second and 32 bytes per sample that is roughly 2.5 TB per day.\n",
        );
        let c = run(&s);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].note.contains("2.5 TB per day"), "{}", c[0].note);
        // 1.2M × 64/s × 32 B ≈ 2.46 GB/s ≈ 193 TiB/day.
        assert!(c[0].note.contains("TB/day"), "{}", c[0].note);
        let fine = "# S\n\n## Sizing\n\nAt peak we see 12,000 players. At 64 samples per second and 32 bytes per sample that is roughly 2 TB per day.\n";
        assert!(run(&spec(fine)).is_empty());
    }

    #[test]
    fn shares_over_one_hundred_percent_are_raised() {
        let s = spec(
            "# S\n\n## Quotas\n\n| org | share | GPUs |\n|---|---|---|\n| research | 60% | 307 |\n| prod | 30% | 154 |\n| interns | 15% | 77 |\n",
        );
        let c = run(&s);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].first, c[0].last), (7, 9));
        assert!(c[0].note.contains("105%"), "{}", c[0].note);
        // A percentage column that is not the shares: a part of each row.
        let s = spec(
            "# S\n\n## Levels\n\n| name | shares | lendable |\n|---|---|---|\n| a | 10 | 50% |\n| b | 40 | 90% |\n| c | 30 | 33% |\n",
        );
        assert!(run(&s).is_empty());
        // Adding up to 100, or percentages that are not shares, are fine.
        let s = spec(
            "# S\n\n## Quotas\n\n| org | share |\n|---|---|\n| research | 55% |\n| prod | 30% |\n| interns | 15% |\n",
        );
        assert!(run(&s).is_empty());
        let s = spec(
            "# S\n\n## SLOs\n\n- 99.9% of requests succeed.\n- 95% of pages load in 1 s.\n- 90% of jobs start in 10 s.\n",
        );
        assert!(run(&s).is_empty());
    }
}
