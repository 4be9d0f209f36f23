//! `RunState`: what a run has gathered so far, handed from phase to phase.
//! It holds no roles and does no I/O; phases read it and add to it.

use crate::concern::Concern;
use crate::event::Event;
use crate::pipeline::EventSink;
use crate::spec::Spec;
use crate::stats::RunStats;
use std::time::Instant;

pub(crate) struct RunState<'a> {
    pub spec: &'a Spec,
    pub events: EventSink<'a>,
    pub started: Instant,
    pub stats: RunStats,
    pub warnings: Vec<String>,
    /// Why the verdict cannot be trusted; any entry makes it incomplete.
    pub incomplete: Vec<String>,
    pub concerns: Vec<Concern>,
}

impl<'a> RunState<'a> {
    pub fn new(spec: &'a Spec, events: EventSink<'a>) -> RunState<'a> {
        RunState {
            spec,
            events,
            started: Instant::now(),
            stats: RunStats::default(),
            warnings: Vec::new(),
            incomplete: Vec::new(),
            concerns: Vec::new(),
        }
    }

    /// Reports a warning now and keeps it for the verdict.
    pub fn warn(&mut self, w: String) {
        (self.events)(Event::Warning(w.clone()));
        self.warnings.push(w);
    }

    pub fn event(&self, e: Event) {
        (self.events)(e);
    }
}
