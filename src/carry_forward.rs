//! What a run remembers of earlier runs on the same spec, as it appears in
//! the verdict: which spec this is (and how it was recognised), each
//! concern's carry-forward state (new, still open, reopened), what was
//! resolved since the last run, and the contested concerns whose outcome
//! keeps flipping across runs. The store (`store::history`) fills it; this
//! module only holds the values, so renderers need not know the store.

use crate::concern::Severity;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How a spec was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Seen under this path (or from stdin with this title) before.
    Path,
    /// Same bytes as a spec seen under another path.
    Content,
    /// Most sections unchanged from a spec seen under another path.
    Sections,
    /// Never seen: a new spec.
    New,
}

impl MatchedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Path => "path",
            MatchedBy::Content => "content",
            MatchedBy::Sections => "sections",
            MatchedBy::New => "new",
        }
    }
}

/// A concern's outcome in one run, as the history records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Required revision (accepted, reinstated, or deferred and failing).
    Open,
    /// Dismissed (or filtered as already dismissed).
    Dismissed,
    /// Open in the previous run, not raised or not open in this one.
    Resolved,
}

impl RunOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Open => "open",
            RunOutcome::Dismissed => "dismissed",
            RunOutcome::Resolved => "resolved",
        }
    }

    /// Open versus closed: a flip is a change between the two.
    pub fn is_open(self) -> bool {
        self == RunOutcome::Open
    }
}

/// The carry-forward label of a concern that requires revision now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CarryState {
    /// Never open before on this spec.
    New,
    /// Open in the previous run too.
    StillOpen,
    /// Open once, then resolved or dismissed, and open again.
    Reopened,
}

impl CarryState {
    pub fn as_str(self) -> &'static str {
        match self {
            CarryState::New => "new",
            CarryState::StillOpen => "still open",
            CarryState::Reopened => "reopened",
        }
    }
}

/// One concern that requires revision, with its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Carried {
    pub id: String,
    pub fingerprint: String,
    pub state: CarryState,
    /// When the open streak began, for `still open` (absent otherwise: it
    /// began with this run, and a run's own clock is not part of a verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_since: Option<DateTime<Utc>>,
    /// Runs in a row it has been open, this one included.
    pub open_runs: u64,
}

/// One event of a concern's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEvent {
    pub at: DateTime<Utc>,
    pub outcome: RunOutcome,
}

/// A concern that was open in the last run and is not open now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub id: String,
    pub fingerprint: String,
    pub adversary: String,
    pub title: String,
    pub severity: Severity,
    /// When it was first open in its last streak.
    pub open_since: DateTime<Utc>,
}

/// A concern whose outcome flipped between open and closed more than once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contested {
    pub id: String,
    pub fingerprint: String,
    pub adversary: String,
    pub title: String,
    pub flips: u64,
    pub history: Vec<TimelineEvent>,
}

/// The verdict's `carry_forward` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarryForward {
    /// The spec's stable key in the store (its first path, or `title:...`).
    pub spec_key: String,
    /// How the spec was recognised: path, content, sections or new.
    pub matched_by: MatchedBy,
    /// The content differs from the previous run's.
    pub content_changed: bool,
    /// Earlier runs recorded for this spec.
    pub previous_runs: u64,
    #[serde(default)]
    pub concerns: Vec<Carried>,
    #[serde(default)]
    pub resolved: Vec<Resolved>,
    #[serde(default)]
    pub contested: Vec<Contested>,
}

impl CarryForward {
    pub fn state_of(&self, id: &str) -> Option<&Carried> {
        self.concerns.iter().find(|c| c.id == id)
    }
}

/// Changes between open and closed along a timeline.
pub fn flips(history: &[TimelineEvent]) -> u64 {
    history
        .windows(2)
        .filter(|w| w[0].outcome.is_open() != w[1].outcome.is_open())
        .count() as u64
}

/// Contested: the outcome flipped more than once.
pub fn is_contested(history: &[TimelineEvent]) -> bool {
    flips(history) > 1
}
