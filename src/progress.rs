//! Progress on standard error: an indicatif spinner when stderr is a
//! terminal, one plain line per phase otherwise, nothing with `--quiet`.
//! Warnings are always shown (unless quiet).

use crate::event::Event;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

pub struct Progress {
    spinner: Option<ProgressBar>,
    quiet: bool,
    lock: Mutex<()>,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        let spinner = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} gauntlet: {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            pb.enable_steady_tick(Duration::from_millis(100));
            pb
        });
        Progress {
            spinner,
            quiet,
            lock: Mutex::new(()),
        }
    }

    pub fn handle(&self, event: Event) {
        if self.quiet {
            return;
        }
        let _guard = self.lock.lock();
        // Messages quote file names and spec text: no control characters.
        let event = match event {
            Event::PhaseFinished { phase, summary } => Event::PhaseFinished {
                phase,
                summary: crate::escape::terminal(&summary).into_owned(),
            },
            Event::Warning(w) => Event::Warning(crate::escape::terminal(&w).into_owned()),
            Event::Note(n) => Event::Note(crate::escape::terminal(&n).into_owned()),
            other => other,
        };
        match (&self.spinner, event) {
            (Some(pb), Event::PhaseStarted(p)) => pb.set_message(format!("{}...", p.label())),
            (Some(pb), Event::PhaseFinished { phase, summary }) => {
                pb.println(format!("  {}: {summary}", phase.label()))
            }
            (Some(pb), Event::Warning(w)) => pb.println(format!("gauntlet: warning: {w}")),
            (Some(pb), Event::Note(n)) => pb.println(format!("gauntlet: {n}")),
            (None, Event::PhaseStarted(_)) => {}
            (None, Event::PhaseFinished { phase, summary }) => {
                let _ = writeln!(std::io::stderr(), "gauntlet: {}: {summary}", phase.label());
            }
            (None, Event::Warning(w)) => {
                let _ = writeln!(std::io::stderr(), "gauntlet: warning: {w}");
            }
            (None, Event::Note(n)) => {
                let _ = writeln!(std::io::stderr(), "gauntlet: {n}");
            }
        }
    }

    pub fn finish(&self) {
        if let Some(pb) = &self.spinner {
            pb.finish_and_clear();
        }
    }
}
