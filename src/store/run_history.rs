//! The run history under `.adversarial-spec/runs/`: one folder per run.
//! Every recorded run (offline or not) gets `runs/<id>/run.json`: when,
//! which spec, and the whole verdict (the JSON of `--format json`); model
//! runs also get their raw calls (`provider::record`) in folders of their
//! own. `gauntlet runs list|show` read them back.
//!
//! Writes happen under the store lock: the run folder is created fresh
//! (never reused), `run.json` is written atomically inside it, and the
//! oldest run records beyond `MAX_SAVED_RUNS` are deleted. A symlink is
//! never followed: not `runs/` itself, not a run folder, not a file in one.
//! Only `run.json` files this module wrote, and then their emptied folders,
//! are ever deleted.

use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const RUNS_DIR: &str = "runs";
pub const RUN_FILE: &str = "run.json";
pub const RUN_SCHEMA_VERSION: u32 = 1;
/// Run records kept; the oldest beyond this are deleted after each run.
pub const MAX_SAVED_RUNS: usize = 200;

/// `runs/<id>/run.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    pub schema_version: u32,
    pub id: String,
    pub at: DateTime<Utc>,
    pub verdict: Verdict,
}

/// One folder of `runs/` as `runs list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct RunEntry {
    pub id: String,
    /// The run record, when the folder has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<RunSummary>,
    /// Raw model calls saved in the folder.
    pub calls: usize,
    /// Why the run record could not be read, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub at: DateTime<Utc>,
    pub spec: Option<String>,
    pub verdict: String,
    pub requiring_revision: u64,
    pub high: u64,
    pub medium: u64,
    pub low: u64,
    pub dismissed: u64,
    pub models: Vec<String>,
}

impl RunSummary {
    fn of(f: &RunFile) -> RunSummary {
        let v = &f.verdict;
        let s = &v.stats.final_;
        let mut models: Vec<String> = v.models.attack.clone();
        for m in v.models.eval.iter().chain(v.models.final_boss.iter()) {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        RunSummary {
            at: f.at,
            spec: v.spec.path.clone(),
            verdict: v.verdict.as_str().to_string(),
            requiring_revision: s.requiring_revision,
            high: s.high,
            medium: s.medium,
            low: s.low,
            dismissed: v.stats.evaluation.dismissed,
            models,
        }
    }
}

pub fn runs_dir(store: &Path) -> PathBuf {
    store.join(RUNS_DIR)
}

fn is_symlink(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// Saves a run record; returns its id. Call under the store lock.
pub fn save(store: &Path, verdict: &Verdict, at: DateTime<Utc>) -> std::io::Result<String> {
    let runs = runs_dir(store);
    if is_symlink(&runs) {
        return Err(std::io::Error::other(format!(
            "{} is a symlink; refusing to follow it",
            runs.display()
        )));
    }
    match std::fs::create_dir(&runs) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && runs.is_dir() => {}
        Err(e) => return Err(e),
    }
    let sha = verdict.spec.sha256.get(..8).unwrap_or("spec");
    let stem = format!("{}-{sha}", at.format("%Y%m%dT%H%M%SZ"));
    let mut n = 1;
    let (id, dir) = loop {
        let id = if n == 1 {
            stem.clone()
        } else {
            format!("{stem}-{n}")
        };
        let dir = runs.join(&id);
        // create_dir never follows a symlink at `dir`: it fails instead.
        match std::fs::create_dir(&dir) {
            Ok(()) => break (id, dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(e) => return Err(e),
        }
    };
    let file = RunFile {
        schema_version: RUN_SCHEMA_VERSION,
        id: id.clone(),
        at,
        verdict: verdict.clone(),
    };
    let json = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&dir.join(RUN_FILE), &json)?;
    prune(&runs, MAX_SAVED_RUNS);
    Ok(id)
}

/// Deletes the oldest run records beyond `keep` (ids start with the time,
/// so name order is time order). Folders holding anything else stay.
fn prune(runs: &Path, keep: usize) {
    let mut records: Vec<PathBuf> = folders(runs)
        .into_iter()
        .filter(|d| {
            std::fs::symlink_metadata(d.join(RUN_FILE)).is_ok_and(|m| m.file_type().is_file())
        })
        .collect();
    if records.len() <= keep {
        return;
    }
    records.sort();
    let excess = records.len() - keep;
    for dir in records.into_iter().take(excess) {
        if std::fs::remove_file(dir.join(RUN_FILE)).is_ok() {
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// The real folders (not symlinks) directly in `runs`.
fn folders(runs: &Path) -> Vec<PathBuf> {
    if is_symlink(runs) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// Raw model-call files (`NNNN-label.json`) in a run folder.
fn call_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && name.as_bytes().first().is_some_and(u8::is_ascii_digit)
        })
        .collect();
    files.sort();
    files
}

fn read_run(dir: &Path) -> Option<Result<RunFile, String>> {
    let path = dir.join(RUN_FILE);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() {
        return Some(Err(format!("{} is not a regular file", path.display())));
    }
    Some(
        std::fs::read(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|b| {
                serde_json::from_slice::<RunFile>(&b)
                    .map_err(|e| format!("{} is not a run record: {e}", path.display()))
            }),
    )
}

/// Every run folder, newest first.
pub fn list(store: &Path) -> Vec<RunEntry> {
    let mut out: Vec<RunEntry> = folders(&runs_dir(store))
        .into_iter()
        .map(|dir| {
            let id = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (run, error) = match read_run(&dir) {
                Some(Ok(f)) => (Some(RunSummary::of(&f)), None),
                Some(Err(e)) => (None, Some(e)),
                None => (None, None),
            };
            RunEntry {
                id,
                run,
                calls: call_files(&dir).len(),
                error,
            }
        })
        .collect();
    out.sort_by(|a, b| b.id.cmp(&a.id));
    out
}

/// What `runs show ID` shows.
#[derive(Debug)]
pub enum Shown {
    Run(Box<RunFile>),
    /// A folder of raw model calls: each call's JSON.
    Calls(Vec<serde_json::Value>),
}

/// The run `id` (or the only one starting with it).
pub fn show(store: &Path, id: &str) -> Result<(String, Shown), String> {
    let entries = list(store);
    let matches: Vec<&RunEntry> = match entries.iter().find(|e| e.id == id) {
        Some(e) => vec![e],
        None => entries.iter().filter(|e| e.id.starts_with(id)).collect(),
    };
    let entry = match matches.as_slice() {
        [one] => *one,
        [] => return Err(format!("no run `{id}` (see gauntlet runs list)")),
        many => {
            return Err(format!(
                "`{id}` matches {} runs; give more of the id",
                many.len()
            ));
        }
    };
    let dir = runs_dir(store).join(&entry.id);
    match read_run(&dir) {
        Some(Ok(f)) => Ok((entry.id.clone(), Shown::Run(Box::new(f)))),
        Some(Err(e)) => Err(e),
        None => {
            let calls = call_files(&dir)
                .iter()
                .filter_map(|p| std::fs::read(p).ok())
                .filter_map(|b| serde_json::from_slice(&b).ok())
                .collect();
            Ok((entry.id.clone(), Shown::Calls(calls)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict() -> Verdict {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gap.md"),
        )
        .unwrap();
        let spec = crate::spec::Spec::parse(Some("gap.md".to_string()), text);
        let catalog = std::sync::Arc::new(crate::catalog::Catalog::load(None, None).unwrap());
        let options = crate::pipeline::RunOptions::default();
        crate::pipeline::Gauntlet::offline(catalog, options, false).run_blocking(
            &spec,
            &crate::filter::NoFilter,
            &|_| {},
        )
    }

    #[test]
    fn saves_fresh_folders_lists_newest_first_and_keeps_a_bounded_number() {
        let store = tempfile::tempdir().unwrap();
        let v = verdict();
        let at: DateTime<Utc> = "2026-01-02T03:04:05Z".parse().unwrap();
        let a = save(store.path(), &v, at).unwrap();
        let b = save(store.path(), &v, at).unwrap();
        assert_ne!(a, b, "same second, same spec: a new folder anyway");
        let later = save(store.path(), &v, at + chrono::Duration::seconds(1)).unwrap();
        let ids: Vec<String> = list(store.path()).into_iter().map(|e| e.id).collect();
        assert_eq!(ids, [later.clone(), b.clone(), a.clone()]);
        let (_, shown) = show(store.path(), &later).unwrap();
        match shown {
            Shown::Run(f) => assert_eq!(f.verdict.concerns, v.concerns),
            Shown::Calls(_) => panic!("a run record"),
        }
        // A folder of model calls stays when pruning; the oldest records go.
        let calls = runs_dir(store.path()).join("20250101T000000Z-99");
        std::fs::create_dir_all(&calls).unwrap();
        std::fs::write(calls.join("0001-attack.json"), "{}").unwrap();
        prune(&runs_dir(store.path()), 1);
        let ids: Vec<String> = list(store.path()).into_iter().map(|e| e.id).collect();
        assert_eq!(ids, [later, "20250101T000000Z-99".to_string()]);
        assert!(show(store.path(), "2026").is_ok());
        assert!(show(store.path(), "nope").unwrap_err().contains("no run"));
    }

    #[test]
    fn never_follows_symlinks() {
        let store = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), runs_dir(store.path())).unwrap();
        let at: DateTime<Utc> = "2026-01-02T03:04:05Z".parse().unwrap();
        assert!(save(store.path(), &verdict(), at).is_err());
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        assert!(list(store.path()).is_empty());

        // A symlinked run folder inside a real runs/ is not listed or pruned.
        let store = tempfile::tempdir().unwrap();
        let runs = runs_dir(store.path());
        std::fs::create_dir_all(&runs).unwrap();
        let victim = tempfile::tempdir().unwrap();
        std::fs::write(victim.path().join(RUN_FILE), "keep").unwrap();
        std::os::unix::fs::symlink(victim.path(), runs.join("19990101T000000Z-x")).unwrap();
        save(store.path(), &verdict(), at).unwrap();
        prune(&runs, 0);
        assert_eq!(
            std::fs::read_to_string(victim.path().join(RUN_FILE)).unwrap(),
            "keep"
        );
        assert!(list(store.path()).is_empty());
    }
}
