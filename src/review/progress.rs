//! Batch progress on standard error: an indicatif bar (specs done / total,
//! the current spec, elapsed, ETA) when stderr is a terminal, one plain line
//! per finished spec otherwise, nothing with `--quiet`. It only renders
//! events; it never changes what the batch does.

use super::summary::{Row, RowVerdict};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

/// What the batch reports as it goes.
#[derive(Debug)]
pub enum BatchEvent<'a> {
    Started {
        spec: &'a str,
    },
    Finished {
        done: usize,
        total: usize,
        row: &'a Row,
    },
    Warning(String),
}

pub struct BatchProgress {
    bar: Option<ProgressBar>,
    quiet: bool,
    lock: Mutex<()>,
}

impl BatchProgress {
    pub fn new(quiet: bool, total: usize) -> BatchProgress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} gauntlet review [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb.enable_steady_tick(Duration::from_millis(100));
            pb
        });
        BatchProgress {
            bar,
            quiet,
            lock: Mutex::new(()),
        }
    }

    pub fn handle(&self, event: BatchEvent<'_>) {
        if self.quiet {
            return;
        }
        let _guard = self.lock.lock();
        match (&self.bar, event) {
            (Some(pb), BatchEvent::Started { spec }) => {
                pb.set_message(crate::escape::terminal(spec).into_owned())
            }
            (Some(pb), BatchEvent::Finished { row, .. }) => {
                pb.inc(1);
                if row.error.is_some() || row.verdict == RowVerdict::Incomplete {
                    pb.println(crate::escape::terminal(&line_for(row)));
                }
            }
            (Some(pb), BatchEvent::Warning(w)) => pb.println(format!(
                "gauntlet: warning: {}",
                crate::escape::terminal(&w)
            )),
            (None, BatchEvent::Started { .. }) => {}
            (None, BatchEvent::Finished { done, total, row }) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "gauntlet: [{done}/{total}] {}",
                    crate::escape::terminal(&line_for(row))
                );
            }
            (None, BatchEvent::Warning(w)) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "gauntlet: warning: {}",
                    crate::escape::terminal(&w)
                );
            }
        }
    }

    pub fn finish(&self) {
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
    }
}

/// `docs/a.md: revise (2 high, 1 medium, 0 low) in 12 ms` or
/// `docs/b.md: error: spec docs/b.md is empty`.
pub fn line_for(row: &Row) -> String {
    let rr = &row.requiring_revision;
    let mut s = match row.verdict {
        RowVerdict::Error => format!("{}: error", row.spec),
        v => format!(
            "{}: {} ({} high, {} medium, {} low) in {} ms",
            row.spec,
            v.as_str(),
            rr.high,
            rr.medium,
            rr.low,
            row.duration_ms
        ),
    };
    if let Some(e) = &row.error {
        s.push_str(": ");
        s.push_str(e);
    }
    s
}
