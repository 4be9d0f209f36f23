//! Running a batch: every spec through the same `Gauntlet` and store hooks as
//! a single run, one summary row per spec. Offline, specs spread over all
//! cores with rayon; with model providers, specs run as futures on a tokio
//! runtime with at most `jobs` in flight, so a folder of 50 specs does not
//! fire 50 times the calls at once. A spec that cannot be reviewed becomes
//! an error row and the batch goes on. This module never prints.

use super::discover::Target;
use super::progress::BatchEvent;
use super::reports::ReportWriter;
use super::summary::Row;
use crate::catalog::Catalog;
use crate::error::InputError;
use crate::event::Event;
use crate::input::LoadedSpec;
use crate::persistence::Persistence;
use crate::pipeline::Gauntlet;
use crate::verdict::Verdict;
use futures::StreamExt;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// How specs are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// CPU-bound offline engine: rayon over `jobs` threads (0: all cores).
    Parallel { jobs: usize },
    /// Model providers: futures on a tokio runtime, `jobs` in flight.
    Concurrent { jobs: usize },
}

/// Everything a batch needs besides the list of specs.
pub struct Batch<'a> {
    pub gauntlet: &'a Gauntlet,
    pub persistence: &'a dyn Persistence,
    pub catalog: &'a Catalog,
    pub max_bytes: u64,
    pub reports: Option<&'a ReportWriter>,
    /// Keep each verdict for the caller (only needed for a combined SARIF log).
    pub keep_verdicts: bool,
    pub events: &'a (dyn Fn(BatchEvent<'_>) + Send + Sync),
}

/// One spec's outcome, in the order of the targets.
pub struct Reviewed {
    pub row: Row,
    pub verdict: Option<Verdict>,
}

impl Batch<'_> {
    pub fn run(&self, targets: &[Target], mode: Mode) -> Vec<Reviewed> {
        let done = AtomicUsize::new(0);
        match mode {
            Mode::Parallel { jobs } => {
                let work = || {
                    targets
                        .par_iter()
                        .enumerate()
                        .map(|(i, t)| {
                            let started = Instant::now();
                            let r = match self.load(t) {
                                Ok(loaded) => {
                                    // Issue 10: each spec at its complexity level.
                                    let (g, _) =
                                        crate::triage::gauntlet_for(self.gauntlet, &loaded.spec);
                                    let verdict = g.run_blocking(
                                        &loaded.spec,
                                        self.persistence.filter(),
                                        &quiet_events,
                                    );
                                    self.finish(i, t, loaded, verdict, started)
                                }
                                Err(e) => Self::unreadable(t, e, started),
                            };
                            self.report(&done, targets.len(), &r);
                            r
                        })
                        .collect()
                };
                if jobs == 0 {
                    work()
                } else {
                    match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
                        Ok(pool) => pool.install(work),
                        Err(_) => work(),
                    }
                }
            }
            Mode::Concurrent { jobs } => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build();
                let stream = futures::stream::iter(targets.iter().enumerate())
                    .map(|(i, t)| {
                        let done = &done;
                        async move {
                            let started = Instant::now();
                            let r = match self.load(t) {
                                Ok(loaded) => {
                                    // Issue 10: each spec at its complexity level.
                                    let (g, _) =
                                        crate::triage::gauntlet_for(self.gauntlet, &loaded.spec);
                                    let verdict = g
                                        .run(&loaded.spec, self.persistence.filter(), &quiet_events)
                                        .await;
                                    self.finish(i, t, loaded, verdict, started)
                                }
                                Err(e) => Self::unreadable(t, e, started),
                            };
                            self.report(done, targets.len(), &r);
                            (i, r)
                        }
                    })
                    .buffer_unordered(jobs.max(1))
                    .collect::<Vec<(usize, Reviewed)>>();
                let mut out = match runtime {
                    Ok(rt) => rt.block_on(stream),
                    // No runtime (no threads left?): run on this thread.
                    Err(_) => futures::executor::block_on(stream),
                };
                out.sort_by_key(|(i, _)| *i);
                out.into_iter().map(|(_, r)| r).collect()
            }
        }
    }

    fn report(&self, done: &AtomicUsize, total: usize, r: &Reviewed) {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        (self.events)(BatchEvent::Finished {
            done: n,
            total,
            row: &r.row,
        });
    }

    fn load(&self, t: &Target) -> Result<LoadedSpec, InputError> {
        (self.events)(BatchEvent::Started { spec: &t.display });
        let mut loaded = crate::input::load_file(&t.path, self.max_bytes)?;
        loaded.spec.path = Some(t.display.clone());
        Ok(loaded)
    }

    /// The error row of a spec that could not be read.
    fn unreadable(t: &Target, e: InputError, started: Instant) -> Reviewed {
        Reviewed {
            row: Row::failed(
                t.display.clone(),
                e.to_string(),
                started.elapsed().as_millis() as u64,
            ),
            verdict: None,
        }
    }

    /// After the pipeline: the store, the reports, the row.
    fn finish(
        &self,
        i: usize,
        t: &Target,
        loaded: LoadedSpec,
        mut verdict: Verdict,
        started: Instant,
    ) -> Reviewed {
        verdict.warnings.splice(0..0, loaded.warnings);
        let mut failures = Vec::new();
        if let Err(e) = self.persistence.remember(&loaded.spec, &mut verdict) {
            failures.push(format!("cannot update the store's history: {e}"));
        }
        match self.persistence.record(&loaded.spec, &verdict) {
            // Bookkeeping notes ("review report: ...") are per-spec noise in
            // a batch; the summary and --out carry what matters.
            Ok(_notes) => {}
            Err(e) => failures.push(format!("cannot update the store: {e}")),
        }
        let mut reports = Vec::new();
        if let Some(w) = self.reports {
            match w.write(i, &verdict, self.catalog) {
                Ok(paths) => reports = paths,
                Err(e) => failures.push(e),
            }
        }
        let mut row = Row::from_verdict(
            t.display.clone(),
            &verdict,
            started.elapsed().as_millis() as u64,
        );
        row.reports = reports;
        for f in failures {
            row.fail_after(f);
        }
        Reviewed {
            row,
            verdict: self.keep_verdicts.then_some(verdict),
        }
    }
}

/// Phase events of the specs in a batch are not shown: the batch shows one
/// line per spec, and warnings end up in each verdict.
fn quiet_events(_: Event) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::{RawConcern, Rebuttal};
    use crate::error::Error;
    use crate::filter::{ConcernFilter, NoFilter};
    use crate::persona::Persona;
    use crate::roles::{Attacker, RebuttalRequest, RoleResult};
    use crate::spec::Spec;
    use crate::stats::Usage;
    use futures::FutureExt;
    use futures::future::BoxFuture;
    use std::sync::{Arc, Mutex};

    /// An attacker that waits like a model call and counts how many specs
    /// are being attacked at once.
    #[derive(Default)]
    struct SlowAttacker {
        in_flight: AtomicUsize,
        max: AtomicUsize,
    }

    impl Attacker for SlowAttacker {
        fn model(&self) -> &str {
            "fake/slow"
        }

        fn attack<'a>(
            &'a self,
            _spec: &'a Spec,
            personas: &'a [&'a Persona],
        ) -> BoxFuture<'a, Vec<RoleResult<Vec<RawConcern>>>> {
            async move {
                let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.max.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                personas
                    .iter()
                    .map(|_| RoleResult::ok(Vec::new(), Usage::default()))
                    .collect()
            }
            .boxed()
        }

        fn rebut<'a>(
            &'a self,
            _spec: &'a Spec,
            requests: &'a [RebuttalRequest<'a>],
        ) -> BoxFuture<'a, Vec<RoleResult<Rebuttal>>> {
            async move {
                requests
                    .iter()
                    .map(|_| {
                        RoleResult::err(
                            crate::error::RoleError::Failed {
                                model: "fake/slow".into(),
                                message: "no rebuttals".into(),
                            },
                            Usage::default(),
                        )
                    })
                    .collect()
            }
            .boxed()
        }
    }

    /// Counts `record` calls per spec.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl Persistence for Recorder {
        fn filter(&self) -> &dyn ConcernFilter {
            &NoFilter
        }

        fn record(&self, spec: &Spec, _verdict: &Verdict) -> Result<Vec<String>, Error> {
            self.0
                .lock()
                .unwrap()
                .push(spec.path.clone().unwrap_or_default());
            Ok(Vec::new())
        }
    }

    fn targets(dir: &std::path::Path, n: usize) -> Vec<Target> {
        (0..n)
            .map(|i| {
                let path = dir.join(format!("s{i:02}.md"));
                let text = if i == 3 {
                    String::new() // cannot be reviewed: empty
                } else {
                    format!("# Spec {i}\n\nThe importer calls the billing API for every row.\nIt retries immediately until the call succeeds.\n")
                };
                std::fs::write(&path, text).unwrap();
                Target {
                    display: format!("s{i:02}.md"),
                    rel: path.file_name().unwrap().into(),
                    path,
                }
            })
            .collect()
    }

    fn batch<'a>(gauntlet: &'a Gauntlet, store: &'a Recorder, catalog: &'a Catalog) -> Batch<'a> {
        Batch {
            gauntlet,
            persistence: store,
            catalog,
            max_bytes: 1 << 20,
            reports: None,
            keep_verdicts: true,
            events: &|_| {},
        }
    }

    #[test]
    fn concurrent_mode_bounds_specs_in_flight_and_records_each_once() {
        let dir = tempfile::tempdir().unwrap();
        let targets = targets(dir.path(), 10);
        let catalog = Arc::new(Catalog::builtin().unwrap());
        let slow = Arc::new(SlowAttacker::default());
        let mut gauntlet = Gauntlet::offline(catalog.clone(), Default::default(), false);
        gauntlet.attacker = slow.clone();
        let store = Recorder::default();
        let out = batch(&gauntlet, &store, &catalog).run(&targets, Mode::Concurrent { jobs: 3 });
        assert_eq!(
            slow.max.load(Ordering::SeqCst),
            3,
            "at most 3 specs at once, and it did use 3"
        );
        assert_eq!(out.len(), 10);
        for (t, r) in targets.iter().zip(&out) {
            assert_eq!(r.row.spec, t.display, "rows come back in target order");
        }
        assert_eq!(out[3].row.verdict, super::super::summary::RowVerdict::Error);
        let mut recorded = store.0.lock().unwrap().clone();
        recorded.sort();
        let want: Vec<String> = targets
            .iter()
            .filter(|t| t.display != "s03.md")
            .map(|t| t.display.clone())
            .collect();
        assert_eq!(recorded, want, "once per reviewed spec");
    }

    #[test]
    fn parallel_and_concurrent_modes_agree() {
        let dir = tempfile::tempdir().unwrap();
        let targets = targets(dir.path(), 6);
        let catalog = Arc::new(Catalog::builtin().unwrap());
        let gauntlet = Gauntlet::offline(catalog.clone(), Default::default(), false);
        let (a, b) = (Recorder::default(), Recorder::default());
        let par = batch(&gauntlet, &a, &catalog).run(&targets, Mode::Parallel { jobs: 2 });
        let con = batch(&gauntlet, &b, &catalog).run(&targets, Mode::Concurrent { jobs: 2 });
        for (x, y) in par.iter().zip(&con) {
            assert_eq!(x.row.spec, y.row.spec);
            assert_eq!(x.row.verdict, y.row.verdict);
            assert_eq!(x.row.requiring_revision, y.row.requiring_revision);
            let ids = |r: &Reviewed| {
                r.verdict.as_ref().map(|v| {
                    v.concerns
                        .iter()
                        .map(|c| (c.id.clone(), c.status))
                        .collect::<Vec<_>>()
                })
            };
            assert_eq!(ids(x), ids(y));
        }
        assert!(par.iter().any(|r| r.row.requiring_revision.total() > 0));
        assert_eq!(a.0.lock().unwrap().len(), 5);
    }
}
