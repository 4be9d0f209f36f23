//! Carry-forward: the store remembers, per spec, every concern that
//! required revision or was dismissed, by fingerprint, as a timeline of
//! outcomes (open, dismissed, resolved). The next run on the same spec
//! labels each open concern new, still open (since when, after how many
//! runs) or reopened, lists what was resolved since the last run, and flags
//! as contested a concern whose outcome flipped more than once.
//!
//! The file is `.adversarial-spec/concern_history.json` with its own
//! `format_version`. It also holds the spec records (`spec_identity`) that
//! let a renamed or piped spec find its history. It is read and written
//! only under the store lock, atomically; a file that cannot be read is
//! reported and never overwritten, and a symlink in its place is refused.

use super::location::StorePaths;
use super::lock::StoreLock;
use super::spec_identity::{self, Resolution, SpecRecord};
use super::store_error::StoreError;
use crate::carry_forward::{
    Carried, CarryForward, CarryState, Contested, Resolved, RunOutcome, TimelineEvent, flips,
};
use crate::concern::{Concern, Severity, Status};
use crate::spec::Spec;
use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const FORMAT_VERSION: u32 = 1;
pub const FILE: &str = "concern_history.json";

/// Where the history lives in a store folder.
pub fn path(paths: &StorePaths) -> PathBuf {
    paths.dir.join(FILE)
}

/// One concern's outcomes on one spec, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// The spec's key (`SpecRecord::key`).
    pub spec: String,
    pub fingerprint: String,
    /// The concern id when last seen (ids derive from the fingerprint).
    pub id: String,
    pub adversary: String,
    pub title: String,
    pub severity: Severity,
    pub events: Vec<TimelineEvent>,
}

impl Timeline {
    /// The start of the open streak at the end of the timeline and its length.
    fn open_streak(&self) -> Option<(DateTime<Utc>, u64)> {
        let n = self
            .events
            .iter()
            .rev()
            .take_while(|e| e.outcome.is_open())
            .count();
        (n > 0).then(|| (self.events[self.events.len() - n].at, n as u64))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryFile {
    pub format_version: u32,
    #[serde(default)]
    pub specs: Vec<SpecRecord>,
    #[serde(default)]
    pub concerns: Vec<Timeline>,
}

impl Default for HistoryFile {
    fn default() -> Self {
        HistoryFile {
            format_version: FORMAT_VERSION,
            specs: Vec::new(),
            concerns: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
struct Probe {
    format_version: Option<serde_json::Value>,
}

/// Reads the history; a missing file is an empty history.
pub fn load(path: &Path) -> Result<HistoryFile, StoreError> {
    match std::fs::read(path) {
        Ok(bytes) => parse(&bytes, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HistoryFile::default()),
        Err(source) => Err(StoreError::Read {
            file: path.display().to_string(),
            source,
        }),
    }
}

pub fn parse(bytes: &[u8], path: &Path) -> Result<HistoryFile, StoreError> {
    let version_error = |found: String| {
        let at = bytes
            .windows(16)
            .position(|w| w == b"\"format_version\"")
            .unwrap_or(0);
        let (line, column) = super::resolved_store::line_column(bytes, at);
        StoreError::UnknownVersion {
            file: path.display().to_string(),
            found,
            supported: FORMAT_VERSION,
            line,
            column,
        }
    };
    match serde_json::from_slice::<HistoryFile>(bytes) {
        Ok(f) if f.format_version == FORMAT_VERSION => Ok(f),
        Ok(f) => Err(version_error(f.format_version.to_string())),
        Err(e) => {
            if let Ok(probe) = serde_json::from_slice::<Probe>(bytes) {
                match probe.format_version {
                    Some(serde_json::Value::Number(n))
                        if n.as_u64() == Some(FORMAT_VERSION as u64) => {}
                    Some(v) => return Err(version_error(v.to_string())),
                    None => return Err(version_error("(missing)".to_string())),
                }
            }
            Err(StoreError::corrupt(path, &e))
        }
    }
}

fn refuse_symlink(path: &Path) -> Result<(), StoreError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(StoreError::Write {
            file: path.display().to_string(),
            source: std::io::Error::other(
                "it is a symbolic link, and the store never writes through one (move it away)",
            ),
        });
    }
    Ok(())
}

/// Writes the history atomically; refuses to replace a symlink.
pub fn save(path: &Path, file: &HistoryFile) -> Result<(), StoreError> {
    refuse_symlink(path)?;
    super::lock::write_file(path, &to_bytes(file))
}

/// Stages the history as a temp file, to be committed with the store and
/// the stats once the run's history line is written; refuses a symlink.
pub fn stage(path: &Path, file: &HistoryFile) -> Result<super::lock::StagedFile, StoreError> {
    refuse_symlink(path)?;
    super::lock::stage_file(path, &to_bytes(file))
}

/// One spec or timeline per line: readable with `grep`, a fraction of the
/// size of pretty-printed JSON, and still one JSON document.
pub fn to_bytes(file: &HistoryFile) -> Vec<u8> {
    fn list<T: Serialize>(out: &mut Vec<u8>, items: &[T]) {
        for (i, x) in items.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
            serde_json::to_writer(&mut *out, x).expect("history serializes");
        }
        out.extend_from_slice(b"\n");
    }
    let mut out = Vec::with_capacity(file.concerns.len() * 300 + 256);
    out.extend_from_slice(
        format!(
            "{{\n\"format_version\": {},\n\"specs\": [",
            file.format_version
        )
        .as_bytes(),
    );
    list(&mut out, &file.specs);
    out.extend_from_slice(b"],\n\"concerns\": [");
    list(&mut out, &file.concerns);
    out.extend_from_slice(b"]\n}\n");
    out
}

/// A concern's outcome in this run, or `None` when it tells nothing.
fn outcome(c: &Concern) -> Option<RunOutcome> {
    if c.status.requires_revision() || c.status == Status::Deferred {
        Some(RunOutcome::Open)
    } else if matches!(c.status, Status::Dismissed | Status::Filtered) {
        Some(RunOutcome::Dismissed)
    } else {
        None
    }
}

/// Did this run look for concerns of `adversary`? Only then can the
/// absence of one of its concerns mean it was resolved.
fn looked_for(verdict: &Verdict, adversary: &str) -> bool {
    let attacked = verdict.adversaries.iter().any(|a| a == adversary)
        && !verdict.stats.attack.failed.iter().any(|a| a == adversary);
    let boss = adversary == crate::pipeline::FINAL_BOSS_ADVERSARY && verdict.final_boss.is_some();
    attacked || boss
}

/// The spec's path identity, as dismissals were scoped before spec records.
pub fn path_identity(spec: &Spec) -> String {
    super::location::spec_identity(spec.path.as_deref(), spec.title())
}

/// Which spec `spec` is among the file's records. Path identities are
/// relative to the project root (or `title:...`, never a file).
pub fn resolve(file: &HistoryFile, spec: &Spec) -> Resolution {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = super::location::project_root(&cwd);
    let exists = |p: &str| !p.starts_with("title:") && root.join(p).is_file();
    spec_identity::resolve(
        &file.specs,
        &path_identity(spec),
        &spec.sha256,
        &spec_identity::section_hashes(spec),
        spec.path.is_none(),
        &exists,
    )
}

/// Records one run of `spec` in the history and returns what the verdict
/// should say about it. Deterministic: the same history and verdict give the
/// same labels, whatever the order of the verdict's concerns.
pub fn apply(
    file: &mut HistoryFile,
    spec: &Spec,
    verdict: &Verdict,
    now: DateTime<Utc>,
) -> CarryForward {
    let res = resolve(file, spec);
    let previous_runs = res.record.map(|i| file.specs[i].runs).unwrap_or(0);
    spec_identity::note_run(
        &mut file.specs,
        &res,
        &path_identity(spec),
        &spec.sha256,
        spec_identity::section_hashes(spec),
        now,
    );
    let key = res.key.clone();
    let mut index: HashMap<String, usize> = file
        .concerns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.spec == key)
        .map(|(i, t)| (t.fingerprint.clone(), i))
        .collect();

    let mut current: Vec<(&Concern, RunOutcome)> = verdict
        .concerns
        .iter()
        .filter_map(|c| outcome(c).map(|o| (c, o)))
        .collect();
    current.sort_by(|a, b| a.0.fingerprint.cmp(&b.0.fingerprint));
    current.dedup_by(|a, b| a.0.fingerprint == b.0.fingerprint);

    let mut carried = Vec::new();
    let mut resolved = Vec::new();
    for (c, out) in &current {
        let i = *index.entry(c.fingerprint.clone()).or_insert_with(|| {
            file.concerns.push(Timeline {
                spec: key.clone(),
                fingerprint: c.fingerprint.clone(),
                id: c.id.clone(),
                adversary: c.adversary.clone(),
                title: c.title.clone(),
                severity: c.severity,
                events: Vec::new(),
            });
            file.concerns.len() - 1
        });
        let t = &mut file.concerns[i];
        let was_open = t.events.last().is_some_and(|e| e.outcome.is_open());
        if *out == RunOutcome::Open {
            let state = if was_open {
                CarryState::StillOpen
            } else if t.events.iter().any(|e| e.outcome.is_open()) {
                CarryState::Reopened
            } else {
                CarryState::New
            };
            let (open_since, open_runs) = match (state, t.open_streak()) {
                (CarryState::StillOpen, Some((since, n))) => (Some(since), n + 1),
                _ => (None, 1),
            };
            carried.push(Carried {
                id: c.id.clone(),
                fingerprint: c.fingerprint.clone(),
                state,
                open_since,
                open_runs,
            });
        } else if was_open {
            resolved.push(resolved_entry(t));
        }
        t.id = c.id.clone();
        t.title = c.title.clone();
        t.severity = c.severity;
        t.events.push(TimelineEvent {
            at: now,
            outcome: *out,
        });
    }
    // Open last time, not raised this time by an adversary that looked.
    let seen: std::collections::HashSet<&str> = current
        .iter()
        .map(|(c, _)| c.fingerprint.as_str())
        .collect();
    let mut absent: Vec<usize> = index
        .iter()
        .filter(|(fp, _)| !seen.contains(fp.as_str()))
        .map(|(_, &i)| i)
        .filter(|&i| {
            let t = &file.concerns[i];
            t.events.last().is_some_and(|e| e.outcome.is_open())
                && looked_for(verdict, &t.adversary)
        })
        .collect();
    absent.sort_unstable();
    for i in absent {
        let t = &mut file.concerns[i];
        resolved.push(resolved_entry(t));
        t.events.push(TimelineEvent {
            at: now,
            outcome: RunOutcome::Resolved,
        });
    }

    let mut contested: Vec<Contested> = file
        .concerns
        .iter()
        .filter(|t| t.spec == key)
        .filter_map(|t| {
            let n = flips(&t.events);
            (n > 1).then(|| Contested {
                id: t.id.clone(),
                fingerprint: t.fingerprint.clone(),
                adversary: t.adversary.clone(),
                title: t.title.clone(),
                flips: n,
                history: t.events.clone(),
            })
        })
        .collect();
    carried.sort_by(|a, b| a.id.cmp(&b.id));
    resolved.sort_by(|a, b| a.id.cmp(&b.id));
    contested.sort_by(|a, b| a.id.cmp(&b.id));
    CarryForward {
        spec_key: key,
        matched_by: res.matched_by,
        content_changed: res.content_changed,
        previous_runs,
        concerns: carried,
        resolved,
        contested,
    }
}

fn resolved_entry(t: &Timeline) -> Resolved {
    Resolved {
        id: t.id.clone(),
        fingerprint: t.fingerprint.clone(),
        adversary: t.adversary.clone(),
        title: t.title.clone(),
        severity: t.severity,
        open_since: t.open_streak().map(|(s, _)| s).unwrap_or(t.events[0].at),
    }
}

/// Under the store lock: reads the history afresh, records this run, writes
/// it, and puts the carry-forward into the verdict.
pub fn remember(
    paths: &StorePaths,
    spec: &Spec,
    verdict: &mut Verdict,
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    // Only labels the verdict: the history itself is written by
    // `ProjectStore::record`, with the other store files, once the run's
    // history line is written (so a failed run changes none of them).
    let _lock = StoreLock::acquire(&paths.dir)?;
    let mut file = load(&path(paths))?;
    let cf = apply(&mut file, spec, verdict, now);
    let mut notes = Vec::new();
    if matches!(
        cf.matched_by,
        crate::carry_forward::MatchedBy::Content | crate::carry_forward::MatchedBy::Sections
    ) {
        notes.push(format!(
            "recognised this spec by its {} as `{}`: its history and dismissals apply",
            cf.matched_by.as_str(),
            cf.spec_key
        ));
    }
    verdict.memory.carry_forward = Some(cf);
    Ok(notes)
}

/// Problems `gauntlet store check` reports in a history that parses.
pub fn problems(file: &HistoryFile) -> Vec<String> {
    let mut out = Vec::new();
    let keys: std::collections::HashSet<&str> = file.specs.iter().map(|s| s.key.as_str()).collect();
    if keys.len() != file.specs.len() {
        out.push("two spec records share a key".to_string());
    }
    let mut seen = std::collections::HashSet::new();
    for t in &file.concerns {
        if !keys.contains(t.spec.as_str()) {
            out.push(format!("{}: timeline of unknown spec `{}`", t.id, t.spec));
        }
        if !seen.insert((t.spec.as_str(), t.fingerprint.as_str())) {
            out.push(format!("{}: two timelines for one fingerprint", t.id));
        }
        if t.events.is_empty() {
            out.push(format!("{}: empty timeline", t.id));
        }
        if t.events.windows(2).any(|w| w[1].at < w[0].at) {
            out.push(format!("{}: events out of order", t.id));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::RawConcern;

    fn t(day: u32) -> DateTime<Utc> {
        crate::store::location::parse_time(&format!("2026-02-{day:02}")).unwrap()
    }

    fn concern(title: &str, status: Status) -> Concern {
        let mut c = Concern::from_raw(
            "burned_oncall",
            "BURN",
            RawConcern::for_tests(title, "d", Severity::High),
        );
        c.status = status;
        c
    }

    fn verdict(concerns: Vec<Concern>) -> Verdict {
        crate::verdict::for_tests(concerns, "x")
    }

    #[test]
    fn dismissed_accepted_dismissed_is_contested_and_labels_ignore_order() {
        let spec = Spec::parse(None, "# Quota spec\n\nText.\n".into());
        let mut file = HistoryFile::default();
        let a = |s| concern("No quota on uploads", s);
        let b = |s| concern("No timeout on billing", s);
        let cf = apply(
            &mut file,
            &spec,
            &verdict(vec![a(Status::Dismissed), b(Status::Accepted)]),
            t(1),
        );
        assert_eq!(cf.concerns.len(), 1);
        assert_eq!(cf.concerns[0].state, CarryState::New);
        // Order of the verdict's concerns does not matter.
        let mut other = file.clone();
        let x = apply(
            &mut file,
            &spec,
            &verdict(vec![a(Status::Accepted), b(Status::Accepted)]),
            t(2),
        );
        let y = apply(
            &mut other,
            &spec,
            &verdict(vec![b(Status::Accepted), a(Status::Accepted)]),
            t(2),
        );
        assert_eq!(x, y);
        assert_eq!(file, other);
        // Dismissed → accepted is one flip: `new` (it never required
        // revision before), not contested yet.
        let id_a = a(Status::Raised).id;
        assert_eq!(x.state_of(&id_a).unwrap().state, CarryState::New);
        assert!(x.contested.is_empty());
        // Accepted → dismissed: resolved since last run, and two flips.
        let z = apply(
            &mut file,
            &spec,
            &verdict(vec![a(Status::Dismissed), b(Status::Accepted)]),
            t(3),
        );
        assert_eq!(z.resolved.len(), 1);
        assert_eq!(z.resolved[0].id, id_a);
        assert_eq!(z.contested.len(), 1);
        assert_eq!(z.contested[0].flips, 2);
        let id_b = b(Status::Raised).id;
        let still = z.state_of(&id_b).unwrap();
        assert_eq!((still.state, still.open_runs), (CarryState::StillOpen, 3));
        assert_eq!(still.open_since, Some(t(1)));
        assert_eq!(z.previous_runs, 2);
        assert!(problems(&file).is_empty(), "{:?}", problems(&file));
        // What is written reads back the same.
        assert_eq!(parse(&to_bytes(&file), Path::new("h")).unwrap(), file);
    }

    #[test]
    fn parse_rejects_other_versions_and_garbage() {
        let p = Path::new("h.json");
        assert!(matches!(
            parse(br#"{"format_version": 2, "specs": []}"#, p),
            Err(StoreError::UnknownVersion { .. })
        ));
        assert!(matches!(
            parse(b"{\"specs\": ", p),
            Err(StoreError::Corrupt { .. })
        ));
        let ok = to_bytes(&HistoryFile::default());
        assert_eq!(parse(&ok, p).unwrap(), HistoryFile::default());
    }
}
