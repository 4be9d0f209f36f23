//! The self-filter hook between attack and evaluation. The resolved-concerns
//! store implements it; `NoFilter` is what `--no-store` runs.

use crate::concern::Concern;
use crate::spec::Spec;
use crate::stats::FilterStats;

pub trait ConcernFilter: Send + Sync {
    /// Mark concerns already answered: set `filter` and, for dropped ones,
    /// `status = Filtered`. Returns the counts.
    fn filter(&self, spec: &Spec, concerns: &mut [Concern]) -> FilterStats;
}

/// Filters nothing.
pub struct NoFilter;

impl ConcernFilter for NoFilter {
    fn filter(&self, _spec: &Spec, concerns: &mut [Concern]) -> FilterStats {
        FilterStats {
            proceeding: concerns.len() as u64,
            ..FilterStats::default()
        }
    }
}
