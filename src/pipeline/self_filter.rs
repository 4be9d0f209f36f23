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
        summary: format!(
            "dropped {}, noted {}, proceeding with {}",
            run.stats.filter.dropped, run.stats.filter.noted, run.stats.filter.proceeding
        ),
    });
}
