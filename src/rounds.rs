//! The debate rounds (`--rounds N`, hard cap 3, after the GSD seeds): what
//! each round found and why the run stopped. Values for the verdict and the
//! stop rules as plain functions; `pipeline/rounds.rs` runs them.

use crate::concern::{Concern, Severity, Status};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The seeds' CONV-01: a debate never exceeds three rounds.
pub const MAX_ROUNDS: u8 = 3;

/// Why the rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// CONVERGE: the last round raised no new high or medium concern (or,
    /// offline, nothing could change: no response edited the spec).
    Converged,
    /// Concerns the previous round settled came back.
    Oscillation,
    /// The round limit was reached with new concerns still appearing.
    Cap,
    /// A round was incomplete; later rounds would build on sand.
    Incomplete,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Converged => "converged (no new high or medium concern)",
            StopReason::Oscillation => "oscillation (settled concerns came back)",
            StopReason::Cap => "round limit reached",
            StopReason::Incomplete => "a round was incomplete",
        }
    }
}

/// One round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundSummary {
    pub round: u8,
    /// Concerns requiring revision after this round.
    pub requiring_revision: u64,
    /// Ids of high or medium concerns requiring revision that the previous
    /// round did not have open.
    #[serde(default)]
    pub new_high_medium: Vec<String>,
    /// Ids of concerns the previous round settled that are open again.
    #[serde(default)]
    pub returned: Vec<String>,
    /// The author's responses this round took into account.
    #[serde(default)]
    pub responses: u64,
    /// The spec changed before this round (edits from the responses).
    #[serde(default)]
    pub spec_edited: bool,
    pub calls: u64,
    pub tokens: u64,
}

/// The verdict's `rounds` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsReport {
    /// Rounds asked for (after the cap).
    pub max: u8,
    pub rounds: Vec<RoundSummary>,
    pub stop: StopReason,
}

fn open(c: &Concern) -> bool {
    c.status.requires_revision()
}

/// Fingerprints a round settled: dismissed or filtered concerns, and open
/// concerns the author agreed to and fixed (`fixed`).
pub fn settled<'a>(concerns: &'a [Concern], fixed: &HashSet<&str>) -> HashSet<&'a str> {
    concerns
        .iter()
        .filter(|c| {
            matches!(c.status, Status::Dismissed | Status::Filtered)
                || (open(c) && fixed.contains(c.id.as_str()))
        })
        .map(|c| c.fingerprint.as_str())
        .collect()
}

/// High or medium concerns open now that were not open in `previous`.
pub fn new_high_medium(previous: &[Concern], now: &[Concern]) -> Vec<String> {
    let before: HashSet<&str> = previous
        .iter()
        .filter(|c| open(c))
        .map(|c| c.fingerprint.as_str())
        .collect();
    let mut ids: Vec<String> = now
        .iter()
        .filter(|c| open(c) && c.severity >= Severity::Medium)
        .filter(|c| !before.contains(c.fingerprint.as_str()))
        .map(|c| c.id.clone())
        .collect();
    ids.sort();
    ids
}

/// Open concerns whose fingerprint the previous round settled.
pub fn returned(settled: &HashSet<&str>, now: &[Concern]) -> Vec<String> {
    let mut ids: Vec<String> = now
        .iter()
        .filter(|c| open(c) && settled.contains(c.fingerprint.as_str()))
        .map(|c| c.id.clone())
        .collect();
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::RawConcern;

    fn c(title: &str, sev: Severity, status: Status) -> Concern {
        let mut c = Concern::from_raw(
            "burned_oncall",
            "BURN",
            RawConcern::for_tests(title, String::new(), sev),
        );
        c.status = status;
        c
    }

    #[test]
    fn new_and_returned_by_fingerprint() {
        let r1 = vec![
            c("a", Severity::High, Status::Accepted),
            c("b", Severity::High, Status::Dismissed),
            c("c", Severity::Low, Status::Accepted),
        ];
        let r2 = vec![
            c("a", Severity::High, Status::Accepted),
            c("b", Severity::High, Status::Accepted),
            c("d", Severity::Low, Status::Accepted),
            c("e", Severity::Medium, Status::Accepted),
        ];
        let new = new_high_medium(&r1, &r2);
        assert_eq!(
            new,
            vec![r2[1].id.clone(), r2[3].id.clone()]
                .into_iter()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        );
        let fixed: HashSet<&str> = [r1[0].id.as_str()].into();
        let s = settled(&r1, &fixed);
        assert_eq!(s.len(), 2);
        let mut want = vec![r2[0].id.clone(), r2[1].id.clone()];
        want.sort();
        assert_eq!(returned(&s, &r2), want);
    }
}
