//! What surrounds a run when the project store is enabled: the self-filter
//! before evaluation and the bookkeeping after the verdict (saving dismissed
//! concerns, updating cumulative stats, writing the review report).
//! `NoPersistence` is `--no-store`. Single runs and batch review both go
//! through this trait, so the store is updated once per spec either way.

use crate::error::Error;
use crate::filter::{ConcernFilter, NoFilter};
use crate::spec::Spec;
use crate::verdict::Verdict;

pub trait Persistence: Send + Sync {
    /// The filter to run between attack and evaluation.
    fn filter(&self) -> &dyn ConcernFilter;

    /// Carry-forward: label the verdict's concerns from the spec's history
    /// and record this run in it. Called before `record`, which scopes
    /// dismissals to the spec the history recognised.
    fn remember(&self, _spec: &Spec, _verdict: &mut Verdict) -> Result<Vec<String>, Error> {
        Ok(Vec::new())
    }

    /// Record a finished run. Returns notes for the user (e.g. "auto-saved 7
    /// dismissal explanations"). Must be safe to call from several threads.
    fn record(&self, spec: &Spec, verdict: &Verdict) -> Result<Vec<String>, Error>;
}

/// Reads and writes nothing.
pub struct NoPersistence;

impl Persistence for NoPersistence {
    fn filter(&self) -> &dyn ConcernFilter {
        &NoFilter
    }

    fn record(&self, _spec: &Spec, _verdict: &Verdict) -> Result<Vec<String>, Error> {
        Ok(Vec::new())
    }
}
