//! Numbers with units in spec text: durations ("every 15 minutes", "3 s"),
//! sizes ("4 TB", "3.5 MB"), counts ("~40k", "1,000") and rates ("160 GB/day",
//! "40k uploads/day"), normalised to seconds, bytes and per-day figures so
//! rules can compare a limit with a load instead of only seeing the words.
//!
//! Pure text functions: no spec structure, no rules, never fails (text that
//! is not a quantity is simply not returned).

use crate::ascii_first::AsciiFirst;
use std::ops::Range;

/// One quantity found in a line, with where it was found (byte range).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub value: f64,
    pub span: Range<usize>,
    /// The text as written ("15 minutes").
    pub text: String,
}

/// A number: `1,000`, `3.5`, `40`, with an optional `k`/`m`/`b` suffix
/// (groups 1 and 2). A macro so the patterns below are `concat!`ed.
macro_rules! num {
    () => {
        r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*([kmb]\b)?"
    };
}

/// A number written as a word ("ten minutes", "a five-second wait"):
/// writers spell small numbers out as often as they write digits.
macro_rules! word_num {
    () => {
        r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty-five|forty|fifty|sixty|ninety"
    };
}
pub(crate) use word_num;

static DURATION: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b(?:",
    num!(),
    r"|(",
    word_num!(),
    r"))\s*-?\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wk)\b"
));
static SIZE: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b",
    num!(),
    r"\s*(bytes?|b|kib|kb|mib|mb|gib|gb|tib|tb|pib|pb)\b"
));
static PER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\s*(?:/|per|a|each|every)\s*(second|sec|s|minute|min|hour|hr|h|day|d|week|month)\b",
);
static COUNT_RATE: AsciiFirst = AsciiFirst::new(concat!(
    r"(?i)\b",
    num!(),
    r"\s+(?:[a-z-]+\s*){0,2}?(?:/|\bper\b|\ba\b|\beach\b)\s*(second|sec|minute|min|hour|day|week|month)\b"
));

/// A number's value: digits with `,` separators, times its magnitude
/// (`k`, `m`, `b`, or the words `thousand`, `million`, `billion`, `bn`).
pub(crate) fn number(digits: &str, suffix: Option<&str>) -> Option<f64> {
    let n: f64 = digits.replace(',', "").parse().ok()?;
    let mult = match suffix.map(|s| s.to_ascii_lowercase()).as_deref() {
        Some("k" | "thousand") => 1e3,
        Some("m" | "million") => 1e6,
        Some("b" | "bn" | "billion") => 1e9,
        _ => 1.0,
    };
    Some(n * mult)
}

/// The value of a number `word_num!` spells.
pub(crate) fn word_value(word: &str) -> Option<f64> {
    const WORDS: &[(&str, f64)] = &[
        ("one", 1.0),
        ("two", 2.0),
        ("three", 3.0),
        ("four", 4.0),
        ("five", 5.0),
        ("six", 6.0),
        ("seven", 7.0),
        ("eight", 8.0),
        ("nine", 9.0),
        ("ten", 10.0),
        ("eleven", 11.0),
        ("twelve", 12.0),
        ("fifteen", 15.0),
        ("twenty", 20.0),
        ("thirty", 30.0),
        ("forty-five", 45.0),
        ("forty", 40.0),
        ("fifty", 50.0),
        ("sixty", 60.0),
        ("ninety", 90.0),
    ];
    let w = word.to_ascii_lowercase();
    WORDS.iter().find(|(k, _)| *k == w).map(|(_, v)| *v)
}

pub(crate) fn seconds_of(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "ms" | "millisecond" | "milliseconds" => 0.001,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        "wk" | "week" | "weeks" => 7.0 * 86400.0,
        "month" => 30.0 * 86400.0,
        _ => return None,
    })
}

fn bytes_of(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "b" | "byte" | "bytes" => 1.0,
        "kb" | "kib" => 1024.0,
        "mb" | "mib" => 1024.0 * 1024.0,
        "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "tb" | "tib" => 1024f64.powi(4),
        "pb" | "pib" => 1024f64.powi(5),
        _ => return None,
    })
}

/// Durations in seconds ("every 15 minutes" gives 900). A duration directly
/// followed by "/day" or "per hour" is a rate, not a duration, and is skipped.
pub fn durations(text: &str) -> Vec<Found> {
    DURATION
        .captures_iter(text)
        .into_iter()
        .filter_map(|c| {
            let m = c.get(0)?;
            // A bare "m" or "s" after a k/M suffix is ambiguous; require a real unit.
            let n = match c.get(3) {
                Some(word) => word_value(word.as_str())?,
                None => number(&c[1], c.get(2).map(|x| x.as_str()))?,
            };
            let unit = &c[4];
            // "one m", "ten s": a spelled number takes a spelled unit.
            if c.get(3).is_some() && unit.len() <= 2 {
                return None;
            }
            let secs = seconds_of(unit)?;
            Some(Found {
                value: n * secs,
                span: m.range(),
                text: m.as_str().to_string(),
            })
        })
        .collect()
}

/// Sizes in bytes ("4 TB", "3.5 MB"), including those that are part of a rate.
pub fn sizes(text: &str) -> Vec<Found> {
    SIZE.captures_iter(text)
        .into_iter()
        .filter_map(|c| {
            let m = c.get(0)?;
            let n = number(&c[1], c.get(2).map(|x| x.as_str()))?;
            Some(Found {
                value: n * bytes_of(&c[3])?,
                span: m.range(),
                text: m.as_str().to_string(),
            })
        })
        .collect()
}

/// Sizes that are not followed by "/day", "per hour"...: amounts, capacities.
pub fn plain_sizes(text: &str) -> Vec<Found> {
    sizes(text)
        .into_iter()
        .filter(|f| !PER.is_match(&text[f.span.end..]))
        .collect()
}

/// Data rates in bytes per day ("160 GB/day", "2 MB per second").
pub fn size_rates_per_day(text: &str) -> Vec<Found> {
    sizes(text)
        .into_iter()
        .filter_map(|f| {
            let c = PER.captures(&text[f.span.end..])?;
            let per = seconds_of(&c[1])?;
            let end = f.span.end + c.get(0)?.end();
            Some(Found {
                value: f.value * 86400.0 / per,
                span: f.span.start..end,
                text: text[f.span.start..end].to_string(),
            })
        })
        .collect()
}

/// Event counts per day ("~40k uploads/day", "2,000 requests per second").
pub fn count_rates_per_day(text: &str) -> Vec<Found> {
    COUNT_RATE
        .captures_iter(text)
        .into_iter()
        .filter_map(|c| {
            let m = c.get(0)?;
            // "3.5 MB per day" is a size rate, not a count.
            if SIZE.is_match(m.as_str()) {
                return None;
            }
            let n = number(&c[1], c.get(2).map(|x| x.as_str()))?;
            let per = seconds_of(&c[3])?;
            Some(Found {
                value: n * 86400.0 / per,
                span: m.range(),
                text: m.as_str().to_string(),
            })
        })
        .collect()
}

/// "1.5 TB", "160 GB", "3.5 MB": a size in the largest unit that keeps it >= 1.
pub fn human_bytes(b: f64) -> String {
    let units = ["bytes", "KB", "MB", "GB", "TB", "PB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if v >= 10.0 || i == 0 {
        format!("{v:.0} {}", units[i])
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// "90 s", "15 min", "2 h", "3 days".
pub fn human_secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 3.0 * 86400.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} days", s / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_normalised_to_seconds() {
        let d =
            durations("polls every 15 minutes; a build takes about 20 min, timeout 300ms or 2 h");
        let v: Vec<f64> = d.iter().map(|f| f.value).collect();
        assert_eq!(v, vec![900.0, 1200.0, 0.3, 7200.0]);
        assert_eq!(d[0].text, "15 minutes");
    }

    #[test]
    fn every_spelled_number_the_patterns_match_has_a_value() {
        // A word added to `word_num!` without a value would match and then
        // be dropped (or panic an unwrap) where the duration is read.
        for word in word_num!().split('|') {
            assert!(word_value(word).is_some(), "no value for `{word}`");
            assert!(
                word_value(&word.to_uppercase()).is_some(),
                "`{word}` in capitals"
            );
        }
        assert_eq!(word_value("forty-five"), Some(45.0));
        assert_eq!(word_value("fourteen"), None);
    }

    #[test]
    fn spelled_numbers_are_durations_with_spelled_units() {
        let v: Vec<f64> = durations("a ten-minute poll, five seconds, forty-five minutes")
            .iter()
            .map(|f| f.value)
            .collect();
        assert_eq!(v, vec![600.0, 5.0, 2700.0]);
        // "one m" or "two s" is not a duration; "someone minutes" has no number.
        assert!(durations("one m, two s, someone minutes").is_empty());
    }

    #[test]
    fn sizes_rates_and_capacities() {
        let gb = 1024f64.powi(3);
        let t = "Share provisioned at 4 TB; we ingest 160 GB/day and 2 MB per second.";
        let plain: Vec<f64> = plain_sizes(t).iter().map(|f| f.value).collect();
        assert_eq!(plain, vec![4.0 * 1024.0 * gb]);
        let rates: Vec<f64> = size_rates_per_day(t).iter().map(|f| f.value).collect();
        assert_eq!(rates, vec![160.0 * gb, 2.0 * 1024.0 * 1024.0 * 86400.0]);
    }

    #[test]
    fn counts_with_suffixes_and_separators() {
        let c = count_rates_per_day("~40k uploads/day at launch and 1,200 requests per second");
        let v: Vec<f64> = c.iter().map(|f| f.value).collect();
        assert_eq!(v, vec![40_000.0, 1200.0 * 86400.0]);
        assert!(count_rates_per_day("3.5 MB per day").is_empty());
    }

    #[test]
    fn human_readable_forms() {
        assert_eq!(human_bytes(4.0 * 1024f64.powi(4)), "4.0 TB");
        assert_eq!(human_bytes(164.0 * 1024f64.powi(3)), "164 GB");
        assert_eq!(human_secs(900.0), "15 min");
        assert_eq!(human_secs(24.0 * 86400.0), "24 days");
    }
}
