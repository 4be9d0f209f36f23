//! How much a stored explanation is still worth: the seed's decay model.
//!
//! ```text
//! confidence = base * 0.5^(age_days / 14)
//! confidence *= 0.7                              if the spec's hash differs
//! confidence += min(times_matched * 0.05, 0.3)   once times_matched >= 3
//! confidence  = min(confidence, 0.99)            capped below 1
//! ```
//!
//! At or above 0.7 the concern is dropped, at or above 0.4 it is evaluated
//! with the earlier explanation attached, below that the entry is ignored.
//!
//! Pure arithmetic over plain values: no clock, no files.

use chrono::{DateTime, Utc};

pub const HALF_LIFE_DAYS: f64 = 14.0;
pub const SPEC_CHANGE_PENALTY: f64 = 0.7;
pub const BOOST_PER_MATCH: f64 = 0.05;
pub const BOOST_CAP: f64 = 0.3;
/// Matches needed before the boost applies.
pub const BOOST_MIN_MATCHES: u64 = 3;
/// "Capped below 1": a stored explanation is never certain.
pub const CAP: f64 = 0.99;
pub const DROP_THRESHOLD: f64 = 0.7;
pub const NOTE_THRESHOLD: f64 = 0.4;
/// Base confidence of an explanation saved from a dismissal (the reference
/// implementation's default).
pub const DEFAULT_BASE: f64 = 0.9;

/// What the self-filter does with a concern matched to an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Drop,
    Note,
    Ignore,
}

/// Current confidence. Rounded to 6 decimals so thresholds compare the
/// numbers people read (0.9 * 0.7 is 0.63, not 0.6299999999999999).
pub fn current(base: f64, age_days: f64, spec_changed: bool, times_matched: u64) -> f64 {
    let mut c = base.clamp(0.0, 1.0) * 0.5f64.powf(age_days.max(0.0) / HALF_LIFE_DAYS);
    if spec_changed {
        c *= SPEC_CHANGE_PENALTY;
    }
    if times_matched >= BOOST_MIN_MATCHES {
        c += (times_matched as f64 * BOOST_PER_MATCH).min(BOOST_CAP);
    }
    round6(c.min(CAP))
}

pub fn action(confidence: f64) -> Action {
    if confidence >= DROP_THRESHOLD {
        Action::Drop
    } else if confidence >= NOTE_THRESHOLD {
        Action::Note
    } else {
        Action::Ignore
    }
}

/// Days (fractional) from `since` to `now`; never negative.
pub fn age_days(since: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    ((now - since).num_milliseconds() as f64 / 86_400_000.0).max(0.0)
}

/// Does the entry's spec hash name a different spec? Entries imported from
/// the reference implementation hold a 16-hex prefix of the sha256, so a
/// prefix counts as the same spec. No recorded hash counts as unchanged.
pub fn spec_changed(entry_hash: Option<&str>, current_sha256: &str) -> bool {
    match entry_hash {
        None | Some("") => false,
        Some(h) => !current_sha256.starts_with(&h.to_ascii_lowercase()),
    }
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_halves_every_fourteen_days() {
        assert_eq!(current(0.9, 0.0, false, 0), 0.9);
        assert_eq!(current(0.9, 14.0, false, 0), 0.45);
        assert_eq!(current(0.9, 28.0, false, 0), 0.225);
        assert_eq!(current(0.8, 7.0, false, 0), 0.565685); // 0.8 / sqrt(2)
    }

    #[test]
    fn spec_change_costs_thirty_percent() {
        assert_eq!(current(0.9, 0.0, true, 0), 0.63);
        assert_eq!(current(0.9, 14.0, true, 0), 0.315);
        assert_eq!(current(0.9, 28.0, true, 0), 0.1575);
    }

    #[test]
    fn matches_boost_from_three_and_cap_at_point_three() {
        // 0 and 2 matches: no boost yet.
        assert_eq!(current(0.5, 0.0, false, 0), 0.5);
        assert_eq!(current(0.5, 0.0, false, 2), 0.5);
        // 3 matches: +0.15.
        assert_eq!(current(0.5, 0.0, false, 3), 0.65);
        // 10 matches: 0.5 would be +0.5, capped at +0.3.
        assert_eq!(current(0.5, 0.0, false, 10), 0.8);
        assert_eq!(current(0.225, 0.0, false, 10), 0.525);
        // The total never reaches 1.
        assert_eq!(current(0.9, 0.0, false, 10), 0.99);
        // Boost applies after decay and penalty: 0.9 * 0.5 * 0.7 + 0.15.
        assert_eq!(current(0.9, 14.0, true, 3), 0.465);
    }

    #[test]
    fn thresholds_are_inclusive() {
        assert_eq!(action(0.7), Action::Drop);
        assert_eq!(action(0.699999), Action::Note);
        assert_eq!(action(0.4), Action::Note);
        assert_eq!(action(0.399999), Action::Ignore);
        // Exactly 0.7 and 0.4 reached through the formula, not typed in.
        assert_eq!(action(current(1.0, 0.0, true, 0)), Action::Drop);
        assert_eq!(action(current(0.8, 14.0, false, 0)), Action::Note);
        assert_eq!(current(0.8, 14.0, false, 0), 0.4);
    }

    #[test]
    fn age_and_spec_hash_helpers() {
        let t0 = crate::store::location::parse_time("2026-01-01T00:00:00Z").unwrap();
        let t1 = crate::store::location::parse_time("2026-01-15T00:00:00Z").unwrap();
        assert_eq!(age_days(t0, t1), 14.0);
        assert_eq!(age_days(t1, t0), 0.0);
        let sha = "abcdef0123456789abcdef";
        assert!(!spec_changed(Some("abcdef0123456789"), sha));
        assert!(!spec_changed(Some(sha), sha));
        assert!(spec_changed(Some("ffff"), sha));
        assert!(!spec_changed(None, sha));
    }
}
