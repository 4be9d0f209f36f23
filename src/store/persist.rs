//! `ProjectStore`: the resolved-concerns store and the cumulative stats as
//! the pipeline sees them, through the `Persistence` and `ConcernFilter`
//! hooks. The filter matches each new concern against a snapshot taken when
//! the store was opened; `record` re-reads everything under the folder lock,
//! applies this run (match counts, saved dismissals, stats, history) and
//! writes atomically, so concurrent runs both land. It never overwrites a
//! file it could not read.

use super::confidence::{self, Action};
use super::location::StorePaths;
use super::lock::StoreLock;
use super::resolved_store::{self, Entry, StoreFile};
use super::similarity::{Index, IndexItem};
use super::store_error::StoreError;
use crate::adversary_stats::{self, RunRecord};
use crate::concern::{AdjudicationOutcome, Concern, Decision, FilterAction, FilterNote, Status};
use crate::error::Error;
use crate::filter::ConcernFilter;
use crate::persistence::Persistence;
use crate::spec::Spec;
use crate::stats::FilterStats;
use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use std::sync::Mutex;

pub struct ProjectStore {
    pub paths: StorePaths,
    pub now: DateTime<Utc>,
    /// Write the Markdown review report after each run.
    pub report: bool,
    snapshot: StoreFile,
    index: Mutex<Index>,
    /// The carry-forward history as opened: which spec is which.
    history: super::history::HistoryFile,
}

impl ProjectStore {
    /// Reads the store and checks the stats file, so a corrupt file stops
    /// the run before any work (and long before any write).
    pub fn open(
        paths: StorePaths,
        now: DateTime<Utc>,
        report: bool,
    ) -> Result<ProjectStore, StoreError> {
        paths.check_folder()?;
        let snapshot = resolved_store::load(&paths.store())?;
        adversary_stats::load(&paths.stats())?;
        let history = super::history::load(&super::history::path(&paths))?;
        let index = build_index(&snapshot);
        Ok(ProjectStore {
            paths,
            now,
            report,
            snapshot,
            index: Mutex::new(index),
            history,
        })
    }

    pub fn snapshot(&self) -> &StoreFile {
        &self.snapshot
    }
}

/// The index partition of an entry: its adversary, scoped to the spec it
/// was dismissed in when it has one.
pub fn index_key(adversary: &str, spec: Option<&str>) -> String {
    match spec {
        Some(s) => format!("{adversary}\u{1}{s}"),
        None => adversary.to_string(),
    }
}

pub fn build_index(store: &StoreFile) -> Index {
    let keys: Vec<String> = store
        .concerns
        .iter()
        .map(|e| index_key(&e.adversary, e.spec.as_deref()))
        .collect();
    Index::build(store.concerns.iter().zip(&keys).map(|(e, key)| IndexItem {
        adversary: key,
        pattern: &e.pattern,
        fingerprint: e.fingerprint.as_deref(),
    }))
}

/// The best entry for a concern of the spec `spec_id`: entries dismissed in
/// that spec, and unscoped (imported) entries of the same adversary.
pub fn best_for(
    index: &mut Index,
    c: &Concern,
    spec_id: &str,
    fingerprint: bool,
) -> Option<crate::store::similarity::Match> {
    let scoped = index_key(&c.adversary, Some(spec_id));
    index.best_in(
        &[scoped.as_str(), c.adversary.as_str()],
        &c.title,
        fingerprint.then_some(c.fingerprint.as_str()),
    )
}

/// The self-filter over a store snapshot: marks each raised concern that a
/// stored explanation answers. Pure apart from the index's caches.
pub fn filter_concerns(
    store: &StoreFile,
    index: &mut Index,
    spec_sha256: &str,
    spec_id: &str,
    now: DateTime<Utc>,
    concerns: &mut [Concern],
) -> FilterStats {
    let mut stats = FilterStats {
        store: true,
        ..FilterStats::default()
    };
    for c in concerns.iter_mut() {
        if c.status != Status::Raised {
            continue;
        }
        let found = best_for(index, c, spec_id, true);
        let Some(m) = found else {
            stats.proceeding += 1;
            continue;
        };
        let e = &store.concerns[m.entry];
        let conf = e.confidence_at(now, Some(spec_sha256));
        let action = match confidence::action(conf) {
            Action::Drop => FilterAction::Dropped,
            Action::Note => FilterAction::Noted,
            Action::Ignore => {
                stats.proceeding += 1;
                continue;
            }
        };
        c.filter = Some(FilterNote {
            entry_id: e.id.clone(),
            similarity: m.similarity,
            confidence: conf,
            action,
            explanation: e.explanation.clone(),
        });
        if action == FilterAction::Dropped {
            c.status = Status::Filtered;
            stats.dropped += 1;
        } else {
            stats.noted += 1;
            stats.proceeding += 1;
        }
    }
    stats
}

impl ConcernFilter for ProjectStore {
    fn filter(&self, spec: &Spec, concerns: &mut [Concern]) -> FilterStats {
        let mut index = self.index.lock().unwrap_or_else(|p| p.into_inner());
        // The spec's key in the history: a renamed or piped spec keeps its dismissals.
        let spec_id = super::history::resolve(&self.history, spec).key;
        filter_concerns(
            &self.snapshot,
            &mut index,
            &spec.sha256,
            &spec_id,
            self.now,
            concerns,
        )
    }
}

/// What `record` changed in the store.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub matched: usize,
    pub saved: usize,
    pub updated: usize,
}

/// The explanation saved for a dismissed concern: the dismissing
/// evaluators' reasoning, plus the adjudication when a challenge was upheld.
pub fn explanation(c: &Concern) -> String {
    let mut s = c.dismissal_reasoning();
    if let Some(a) = &c.adjudication
        && a.outcome == AdjudicationOutcome::Upheld
    {
        s.push_str("\nupheld on challenge: ");
        s.push_str(&a.reasoning);
    }
    s
}

/// Applies one verdict to a freshly read store. `similar` finds an existing
/// entry for a concern by text (the snapshot index), returning its id.
pub fn apply_verdict(
    store: &mut StoreFile,
    verdict: &Verdict,
    now: DateTime<Utc>,
    mut similar: impl FnMut(&Concern, &str) -> Option<String>,
) -> Applied {
    let spec_id = match &verdict.memory.carry_forward {
        Some(cf) => cf.spec_key.clone(),
        None => crate::store::location::spec_identity(
            verdict.spec.path.as_deref(),
            verdict.spec.title.as_deref(),
        ),
    };
    let mut applied = Applied::default();
    for c in &verdict.concerns {
        if let Some(n) = &c.filter
            && n.action == FilterAction::Dropped
            && let Some(i) = store.position(&n.entry_id)
        {
            let e = &mut store.concerns[i];
            e.times_matched = e.times_matched.saturating_add(1);
            e.last_matched = Some(now);
            applied.matched += 1;
        }
    }
    for c in verdict
        .concerns
        .iter()
        .filter(|c| c.status == Status::Dismissed)
    {
        let reasoned = c
            .votes
            .iter()
            .any(|v| v.decision == Decision::Dismiss && !v.reasoning.trim().is_empty());
        if !reasoned {
            // Nothing to show a future evaluator: an empty answer is no answer.
            continue;
        }
        let explanation = explanation(c);
        let evaluators: Vec<String> = c
            .votes
            .iter()
            .filter(|v| v.decision == Decision::Dismiss)
            .map(|v| v.evaluator.clone())
            .collect();
        let existing = c
            .filter
            .as_ref()
            .and_then(|n| store.position(&n.entry_id))
            .or_else(|| {
                store.concerns.iter().position(|e| {
                    e.adversary == c.adversary
                        && e.fingerprint.as_deref() == Some(c.fingerprint.as_str())
                        && e.spec.as_deref().is_none_or(|s| s == spec_id)
                })
            })
            .or_else(|| similar(c, &spec_id).and_then(|id| store.position(&id)));
        match existing {
            Some(i) => {
                let e = &mut store.concerns[i];
                e.explanation = explanation;
                e.verified_at = Some(now);
                e.spec_hash = Some(verdict.spec.sha256.clone());
                e.confidence = e.confidence.max(confidence::DEFAULT_BASE);
                e.evaluators = evaluators;
                e.concern_id = Some(c.id.clone());
                e.spec = Some(spec_id.clone());
                if e.fingerprint.is_none() {
                    e.fingerprint = Some(c.fingerprint.clone());
                }
                if c.section.is_some() {
                    e.section = c.section.clone();
                }
                applied.updated += 1;
            }
            None => {
                store.concerns.push(Entry {
                    id: resolved_store::entry_id(&format!(
                        "{}\0{}\0{}",
                        c.adversary, c.fingerprint, spec_id
                    )),
                    pattern: c.title.clone(),
                    explanation,
                    adversary: c.adversary.clone(),
                    added_at: now,
                    confidence: confidence::DEFAULT_BASE,
                    spec_hash: Some(verdict.spec.sha256.clone()),
                    times_matched: 0,
                    last_matched: None,
                    verified_at: None,
                    fingerprint: Some(c.fingerprint.clone()),
                    concern_id: Some(c.id.clone()),
                    section: c.section.clone(),
                    evaluators,
                    spec: Some(spec_id.clone()),
                    source: None,
                });
                applied.saved += 1;
            }
        }
    }
    applied
}

impl Persistence for ProjectStore {
    fn filter(&self) -> &dyn ConcernFilter {
        self
    }

    fn remember(&self, spec: &Spec, verdict: &mut Verdict) -> Result<Vec<String>, Error> {
        Ok(super::history::remember(
            &self.paths,
            spec,
            verdict,
            self.now,
        )?)
    }

    fn record(&self, spec: &Spec, verdict: &Verdict) -> Result<Vec<String>, Error> {
        let _lock = StoreLock::acquire(&self.paths.dir)?;
        let mut notes = Vec::new();

        let store_path = self.paths.store();
        let mut store = resolved_store::load(&store_path)?;
        let applied = {
            let mut index = self.index.lock().unwrap_or_else(|p| p.into_inner());
            let snapshot = &self.snapshot;
            apply_verdict(&mut store, verdict, self.now, |c, spec_id| {
                best_for(&mut index, c, spec_id, false)
                    .map(|m| snapshot.concerns[m.entry].id.clone())
            })
        };
        // Nothing is replaced until the history line is written (below):
        // a failure leaves all three files as they were, and a retry adds
        // no phantom run.
        let staged_store = if applied != Applied::default() {
            store.last_updated = Some(self.now);
            Some(super::lock::stage_file(
                &store_path,
                &resolved_store::to_bytes(&store),
            )?)
        } else {
            None
        };
        if applied.saved + applied.updated > 0 {
            notes.push(format!(
                "auto-saved {} dismissal explanation(s) for future filtering ({} new, {} updated) in {}",
                applied.saved + applied.updated,
                applied.saved,
                applied.updated,
                store_path.display()
            ));
        }

        let run = RunRecord::from_verdict(verdict, self.now);
        let mut stats = adversary_stats::load(&self.paths.stats())?;
        stats.apply(&run);
        let staged_stats =
            super::lock::stage_file(&self.paths.stats(), &adversary_stats::to_bytes(&stats))?;
        // The carry-forward history, read afresh under the lock.
        let history_path = super::history::path(&self.paths);
        let mut history = super::history::load(&history_path)?;
        super::history::apply(&mut history, spec, verdict, self.now);
        let staged_history = super::history::stage(&history_path, &history)?;
        adversary_stats::append_history(&self.paths.history(), &run)?;
        if let Some(staged) = staged_store {
            staged.commit(&store_path)?;
        }
        staged_stats.commit(&self.paths.stats())?;
        staged_history.commit(&history_path)?;

        if self.report {
            let path = write_report(&self.paths, verdict, &run, &stats, self.now)?;
            notes.push(format!("review report: {}", path.display()));
        }
        // The run history (`gauntlet runs`): worth a note when it fails,
        // never worth failing the run.
        match super::run_history::save(&self.paths.dir, verdict, self.now) {
            Ok(id) => notes.push(format!("saved as run {id} (gauntlet runs show {id})")),
            Err(e) => notes.push(format!("warning: run history not saved: {e}")),
        }
        Ok(notes)
    }
}

/// Writes the review report under `reviews/`, never over an existing one.
fn write_report(
    paths: &StorePaths,
    verdict: &Verdict,
    run: &RunRecord,
    stats: &adversary_stats::StatsFile,
    now: DateTime<Utc>,
) -> Result<std::path::PathBuf, StoreError> {
    let dir = paths.reviews();
    crate::fsutil::create_dir_no_links(&paths.dir, &dir).map_err(|source| StoreError::Write {
        file: dir.display().to_string(),
        source,
    })?;
    let mut text = Vec::new();
    crate::review_report::write(&mut text, verdict, run, stats, now).expect("write to Vec");
    let base = crate::review_report::file_name(now);
    let stem = base.trim_end_matches(".md");
    let mut n = 1;
    loop {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{stem}_{n}.md")
        };
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_err() {
            super::lock::write_file(&path, &text)?;
            return Ok(path);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::{Adjudication, RawConcern, Severity, Vote};

    fn t(s: &str) -> DateTime<Utc> {
        crate::store::location::parse_time(s).unwrap()
    }

    fn concern(title: &str, rule: &str, status: Status) -> Concern {
        let mut c = Concern::from_raw(
            "burned_oncall",
            "BURN",
            RawConcern {
                title: title.into(),
                detail: "d".into(),
                severity: Severity::High,
                lines: Some((3, 3)),
                rule: Some(rule.into()),
                section: Some("Design".into()),
                subject: vec![],
                confidence: None,
            },
        );
        c.status = status;
        c.votes = vec![
            Vote {
                evaluator: "e1".into(),
                decision: Decision::Dismiss,
                reasoning: "line 9 sets it".into(),
                cites: vec![9],
            },
            Vote {
                evaluator: "e2".into(),
                decision: Decision::Accept,
                reasoning: "not next to it".into(),
                cites: vec![],
            },
        ];
        c
    }

    fn verdict(concerns: Vec<Concern>) -> Verdict {
        crate::verdict::for_tests(concerns, "feed")
    }

    #[test]
    fn saves_dismissed_only_and_updates_instead_of_duplicating() {
        let now = t("2026-01-01T00:00:00Z");
        let mut upheld = concern(
            "No timeout on the billing API",
            "missing-timeout",
            Status::Dismissed,
        );
        upheld.adjudication = Some(Adjudication {
            outcome: AdjudicationOutcome::Upheld,
            reasoning: "evidence holds".into(),
            adjudicator: None,
        });
        let reinstated = concern("No retry on the billing API", "retry", Status::Reinstated);
        // Dismissed without any reasoning: nothing worth saving.
        let mut silent = concern("No quota on uploads", "quota", Status::Dismissed);
        silent.votes.iter_mut().for_each(|v| v.reasoning.clear());
        let accepted = concern("No alerting", "alerting", Status::Accepted);
        let mut store = StoreFile::default();
        let a = apply_verdict(
            &mut store,
            &verdict(vec![upheld, reinstated, accepted, silent]),
            now,
            |_, _| None,
        );
        assert_eq!(
            a,
            Applied {
                matched: 0,
                saved: 1,
                updated: 0
            }
        );
        assert_eq!(store.concerns.len(), 1);
        let e = &store.concerns[0];
        assert_eq!(e.pattern, "No timeout on the billing API");
        assert_eq!(
            e.explanation,
            "e1: line 9 sets it\nupheld on challenge: evidence holds"
        );
        assert_eq!(e.evaluators, vec!["e1"]);
        assert_eq!(e.spec_hash.as_deref(), Some("feed"));

        // The same concern in other words (another fingerprint), found by the
        // text index: the entry is refreshed, not duplicated.
        let later = t("2026-01-10T00:00:00Z");
        let again = concern(
            "Billing API calls have no timeout",
            "other-rule",
            Status::Dismissed,
        );
        let id = e.id.clone();
        let mut index = build_index(&store);
        let snapshot = store.clone();
        let a = apply_verdict(&mut store, &verdict(vec![again]), later, |c, spec_id| {
            best_for(&mut index, c, spec_id, false).map(|m| snapshot.concerns[m.entry].id.clone())
        });
        assert_eq!(
            a,
            Applied {
                matched: 0,
                saved: 0,
                updated: 1
            }
        );
        assert_eq!(store.concerns.len(), 1);
        assert_eq!(store.concerns[0].id, id);
        assert_eq!(store.concerns[0].verified_at, Some(later));
        assert_eq!(store.concerns[0].added_at, now);
        assert_eq!(store.concerns[0].explanation, "e1: line 9 sets it");
    }

    #[test]
    fn drops_count_matches_and_filter_marks_concerns() {
        let now = t("2026-01-01T00:00:00Z");
        let mut store = StoreFile::default();
        apply_verdict(
            &mut store,
            &verdict(vec![concern(
                "No timeout on the billing API",
                "r",
                Status::Dismissed,
            )]),
            now,
            |_, _| None,
        );
        let mut index = build_index(&store);
        let mut fresh = vec![
            concern("No timeout on the billing API", "r", Status::Raised),
            concern("No timeout on the currency API", "r2", Status::Raised),
        ];
        let stats = filter_concerns(&store, &mut index, "feed", "title:", now, &mut fresh);
        assert_eq!((stats.dropped, stats.noted, stats.proceeding), (1, 0, 1));
        assert_eq!(fresh[0].status, Status::Filtered);
        assert_eq!(fresh[0].filter.as_ref().unwrap().confidence, 0.9);
        assert!(fresh[1].filter.is_none());
        let a = apply_verdict(
            &mut store,
            &verdict(fresh),
            t("2026-01-02T00:00:00Z"),
            |_, _| None,
        );
        assert_eq!(a.matched, 1);
        assert_eq!(store.concerns[0].times_matched, 1);
    }
}
