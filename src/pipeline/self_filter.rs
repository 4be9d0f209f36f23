//! Phase 1.5, self-filter: the `ConcernFilter` (the resolved-concerns store)
//! drops or annotates concerns before anyone evaluates them.

use super::{RunState, ms};
use crate::event::{Event, Phase};
use crate::filter::ConcernFilter;
use std::time::Instant;

/// Filters `run.concerns` in place; the filter's stats go to the run.
pub(crate) fn self_filter(run: &mut RunState<'_>, filter: &dyn ConcernFilter) {
    run.event(Event::PhaseStarted(Phase::Filter));
    let t = Instant::now();
    run.stats.filter = filter.filter(run.spec, &mut run.concerns);
    run.stats.duration_ms.filter = ms(t);
    run.event(Event::PhaseFinished {
        phase: Phase::Filter,
        summary: self_filter_summary(&run.stats.filter),
    });
}

/// The phase's log line: the store's counts, or that no store was read
/// (`--no-store`), as the reports show the self-filter only with a store.
fn self_filter_summary(f: &crate::stats::FilterStats) -> String {
    if f.store {
        format!(
            "dropped {}, noted {}, proceeding with {}",
            f.dropped, f.noted, f.proceeding
        )
    } else {
        "no store in use, nothing filtered".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::FilterStats;

    #[test]
    fn the_log_line_says_when_no_store_was_read() {
        let none = FilterStats {
            proceeding: 4,
            ..FilterStats::default()
        };
        assert_eq!(
            self_filter_summary(&none),
            "no store in use, nothing filtered"
        );
        let store = FilterStats {
            dropped: 1,
            noted: 2,
            proceeding: 3,
            store: true,
        };
        assert_eq!(
            self_filter_summary(&store),
            "dropped 1, noted 2, proceeding with 3"
        );
    }
}
