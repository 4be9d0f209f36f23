//! The resolved-concerns file (`resolved_concerns.json`): its versioned
//! format, loading (with the position of any problem), saving (atomic), and
//! importing the reference implementation's files.
//!
//! It never overwrites a file it could not read: `load` fails on a corrupt,
//! truncated or unknown-version file and callers stop there. Locking is the
//! caller's business (`lock.rs`).

use super::confidence;
use super::location::parse_time;
use super::store_error::StoreError;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FORMAT_VERSION: u32 = 1;

/// One resolved concern: a pattern (the concern text it answers) and the
/// explanation that answered it. The first ten fields are the reference
/// implementation's, so its files import field for field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub pattern: String,
    pub explanation: String,
    pub adversary: String,
    pub added_at: DateTime<Utc>,
    /// Base confidence, before decay.
    pub confidence: f64,
    #[serde(default)]
    pub spec_hash: Option<String>,
    #[serde(default)]
    pub times_matched: u64,
    #[serde(default)]
    pub last_matched: Option<DateTime<Utc>>,
    /// Re-verified (dismissed again by evaluators): decay restarts from here.
    #[serde(default)]
    pub verified_at: Option<DateTime<Utc>>,
    /// The concern's stable fingerprint, when it came from a gauntlet run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The concern id it was saved from (e.g. `BURN-0a3d1704`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concern_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Evaluators whose dismissal is the explanation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evaluators: Vec<String>,
    /// The spec it was dismissed in (`location::spec_identity`); it only
    /// answers concerns of that spec. `None` (imported entries) answers any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// Where it came from when not from a run (`import:<file>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Entry {
    /// When decay starts: the last re-verification, else when it was added.
    pub fn reference_time(&self) -> DateTime<Utc> {
        self.verified_at.unwrap_or(self.added_at)
    }

    /// Confidence now, for a spec with hash `spec_sha256` (`None`: ignore spec change).
    pub fn confidence_at(&self, now: DateTime<Utc>, spec_sha256: Option<&str>) -> f64 {
        let changed =
            spec_sha256.is_some_and(|s| confidence::spec_changed(self.spec_hash.as_deref(), s));
        confidence::current(
            self.confidence,
            confidence::age_days(self.reference_time(), now),
            changed,
            self.times_matched,
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreFile {
    pub format_version: u32,
    #[serde(default)]
    pub last_updated: Option<DateTime<Utc>>,
    /// The reference implementation's key, kept for familiarity.
    pub concerns: Vec<Entry>,
}

impl Default for StoreFile {
    fn default() -> Self {
        StoreFile {
            format_version: FORMAT_VERSION,
            last_updated: None,
            concerns: Vec::new(),
        }
    }
}

impl StoreFile {
    pub fn position(&self, id: &str) -> Option<usize> {
        self.concerns.iter().position(|e| e.id == id)
    }

    /// The entry with this id, or the only one whose id starts with it.
    pub fn find(&self, id: &str) -> Result<usize, StoreError> {
        if let Some(i) = self.position(id) {
            return Ok(i);
        }
        let hits: Vec<usize> = (0..self.concerns.len())
            .filter(|&i| self.concerns[i].id.starts_with(id))
            .collect();
        match hits.len() {
            0 => Err(StoreError::UnknownId(id.to_string())),
            1 => Ok(hits[0]),
            count => Err(StoreError::AmbiguousId {
                prefix: id.to_string(),
                count,
            }),
        }
    }
}

/// Reads the store; a missing file is an empty store.
pub fn load(path: &Path) -> Result<StoreFile, StoreError> {
    match read_store_file(path) {
        Ok(bytes) => parse(&bytes, path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(StoreFile::default()),
        Err(source) => Err(StoreError::read(path, source)),
    }
}

/// Reads a file of the store folder: a regular file (never through a
/// symlink, never a FIFO or device) of bounded size.
pub fn read_store_file(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::fsutil::read_regular(
        path,
        crate::fsutil::MAX_STORE_FILE_BYTES,
        crate::fsutil::Links::Refuse,
    )
}

#[derive(Deserialize)]
struct Probe {
    format_version: Option<serde_json::Value>,
}

/// Parses a store file. `path` is only used in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<StoreFile, StoreError> {
    match serde_json::from_slice::<StoreFile>(bytes) {
        Ok(file) if file.format_version == FORMAT_VERSION => Ok(file),
        Ok(file) => Err(version_error(bytes, path, file.format_version.to_string())),
        Err(e) => {
            // A valid document of another version explains itself better
            // than "missing field" deep inside it.
            if let Ok(probe) = serde_json::from_slice::<Probe>(bytes) {
                match probe.format_version {
                    Some(serde_json::Value::Number(n))
                        if n.as_u64() == Some(FORMAT_VERSION as u64) => {}
                    Some(v) => return Err(version_error(bytes, path, v.to_string())),
                    None => {
                        return Err(version_error(bytes, path, "(missing)".to_string()));
                    }
                }
            }
            Err(StoreError::corrupt(path, &e))
        }
    }
}

/// A version problem, positioned at the `format_version` key (or the start).
pub(crate) fn version_error(bytes: &[u8], path: &Path, found: String) -> StoreError {
    let at = find(bytes, b"\"format_version\"").unwrap_or(0);
    let (line, column) = line_column(bytes, at);
    StoreError::UnknownVersion {
        file: path.display().to_string(),
        found,
        supported: FORMAT_VERSION,
        line,
        column,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// 1-based line and column of byte offset `at`.
pub(crate) fn line_column(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

/// Serialises the store as JSON with one entry per line: a diff shows which
/// entries changed, and the file stays a quarter smaller (and faster to
/// parse) than fully pretty-printed JSON at 100,000 entries.
pub fn to_bytes(file: &StoreFile) -> Vec<u8> {
    let mut v = Vec::with_capacity(256 + file.concerns.len() * 600);
    v.extend_from_slice(b"{\n\"format_version\": ");
    v.extend_from_slice(file.format_version.to_string().as_bytes());
    v.extend_from_slice(b",\n\"last_updated\": ");
    serde_json::to_writer(&mut v, &file.last_updated).expect("time serializes");
    v.extend_from_slice(b",\n\"concerns\": [");
    for (i, e) in file.concerns.iter().enumerate() {
        v.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        serde_json::to_writer(&mut v, e).expect("entry serializes");
    }
    v.extend_from_slice(b"\n]\n}\n");
    v
}

/// Writes the store atomically. The caller holds the lock.
pub fn save(path: &Path, file: &StoreFile) -> Result<(), StoreError> {
    super::lock::write_file(path, &to_bytes(file))
}

/// A reference-format entry: the same names, looser types (naive ISO
/// times, nulls, missing fields).
#[derive(Deserialize)]
struct ReferenceEntry {
    #[serde(default)]
    id: Option<String>,
    pattern: String,
    #[serde(default)]
    explanation: String,
    #[serde(default)]
    adversary: Option<String>,
    #[serde(default)]
    added_at: Option<String>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    spec_hash: Option<String>,
    #[serde(default)]
    times_matched: Option<u64>,
    #[serde(default)]
    last_matched: Option<String>,
    #[serde(default)]
    verified_at: Option<String>,
}

#[derive(Deserialize)]
struct ReferenceFile {
    concerns: Vec<ReferenceEntry>,
}

/// Reads a reference implementation `resolved_concerns.json` (`{"concerns":
/// [...], "last_updated": ...}`), or one of ours, into entries. Entries
/// without a usable `added_at` are dated `now` (and said so in the notes).
pub fn import(
    bytes: &[u8],
    path: &Path,
    now: DateTime<Utc>,
) -> Result<(Vec<Entry>, Vec<String>), StoreError> {
    if let Ok(probe) = serde_json::from_slice::<Probe>(bytes)
        && probe.format_version.is_some()
    {
        return Ok((parse(bytes, path)?.concerns, Vec::new()));
    }
    let file: ReferenceFile =
        serde_json::from_slice(bytes).map_err(|e| StoreError::corrupt(path, &e))?;
    let source = format!("import:{}", path.display());
    let mut notes = Vec::new();
    let mut out = Vec::with_capacity(file.concerns.len());
    for (i, r) in file.concerns.into_iter().enumerate() {
        let added_at = match r.added_at.as_deref().and_then(parse_time) {
            Some(t) => t,
            None => {
                notes.push(format!(
                    "entry {}: no valid added_at; dated {}",
                    i + 1,
                    now.to_rfc3339()
                ));
                now
            }
        };
        let id =
            r.id.filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| entry_id(&format!("{source}\0{i}\0{}", r.pattern)));
        out.push(Entry {
            id,
            pattern: r.pattern,
            explanation: r.explanation,
            adversary: r
                .adversary
                .unwrap_or_else(|| super::similarity::GENERAL.to_string()),
            added_at,
            confidence: r
                .confidence
                .unwrap_or(confidence::DEFAULT_BASE)
                .clamp(0.0, 1.0),
            spec_hash: r.spec_hash.filter(|s| !s.is_empty()),
            times_matched: r.times_matched.unwrap_or(0),
            last_matched: r.last_matched.as_deref().and_then(parse_time),
            verified_at: r.verified_at.as_deref().and_then(parse_time),
            fingerprint: None,
            concern_id: None,
            section: None,
            evaluators: Vec::new(),
            spec: None,
            source: Some(source.clone()),
        });
    }
    Ok((out, notes))
}

/// A short stable id: `rc-` and 12 hex digits of sha256(`key`).
pub fn entry_id(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(key.as_bytes());
    format!("rc-{}", &crate::concern::hex(&h)[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        parse_time(s).unwrap()
    }

    fn entry(id: &str) -> Entry {
        Entry {
            id: id.into(),
            pattern: "No timeout on billing API".into(),
            explanation: "line 18 sets a 10 second timeout".into(),
            adversary: "burned_oncall".into(),
            added_at: t("2026-01-01T00:00:00Z"),
            confidence: 0.9,
            spec_hash: Some("ab".into()),
            times_matched: 0,
            last_matched: None,
            verified_at: None,
            fingerprint: Some("f".into()),
            concern_id: None,
            section: None,
            evaluators: vec![],
            spec: None,
            source: None,
        }
    }

    #[test]
    fn round_trips() {
        let f = StoreFile {
            format_version: 1,
            last_updated: Some(t("2026-01-02T00:00:00Z")),
            concerns: vec![entry("rc-1"), entry("rc-2")],
        };
        let back = parse(&to_bytes(&f), Path::new("x")).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn truncated_file_reports_position() {
        let f = StoreFile {
            concerns: vec![entry("rc-1")],
            ..StoreFile::default()
        };
        let bytes = to_bytes(&f);
        let cut = &bytes[..bytes.len() / 2];
        let err = parse(cut, Path::new("s.json")).unwrap_err();
        match err {
            StoreError::Corrupt { file, line, .. } => {
                assert_eq!(file, "s.json");
                let lines = cut.iter().filter(|&&b| b == b'\n').count() + 1;
                assert_eq!(line, lines, "error at the end of what is there");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_version_is_named_with_its_line() {
        let text = b"{\n  \"concerns\": [],\n  \"format_version\": 7\n}";
        match parse(text, Path::new("s.json")).unwrap_err() {
            StoreError::UnknownVersion {
                found,
                line,
                column,
                ..
            } => {
                assert_eq!(found, "7");
                assert_eq!((line, column), (3, 3));
            }
            other => panic!("{other:?}"),
        }
        // A reference-format file is not silently taken as ours.
        let text = br#"{"concerns": [], "last_updated": null}"#;
        assert!(matches!(
            parse(text, Path::new("s.json")).unwrap_err(),
            StoreError::UnknownVersion { .. }
        ));
    }

    #[test]
    fn find_by_id_or_unique_prefix() {
        let f = StoreFile {
            concerns: vec![entry("rc-aa1"), entry("rc-ab2"), entry("rc-ab3")],
            ..StoreFile::default()
        };
        assert_eq!(f.find("rc-aa").unwrap(), 0);
        assert_eq!(f.find("rc-ab3").unwrap(), 2);
        assert!(matches!(
            f.find("rc-ab"),
            Err(StoreError::AmbiguousId { count: 2, .. })
        ));
        assert!(matches!(f.find("zz"), Err(StoreError::UnknownId(_))));
    }

    #[test]
    fn imports_reference_shape() {
        let text = br#"{
          "concerns": [
            {"id": "5f0c1b9e-1111-4a4a-9c9c-000000000001", "pattern": "No rate limiting on /api/upload",
             "explanation": "Rate limits are enforced at the gateway (section 4.2).",
             "added_at": "2026-01-20T10:15:30.123456", "adversary": "paranoid_security",
             "confidence": 0.85, "spec_hash": "0123456789abcdef", "times_matched": 2,
             "last_matched": null, "verified_at": null},
            {"pattern": "Redis outage", "explanation": "cache only", "added_at": "garbage"}
          ],
          "last_updated": "2026-01-21T09:00:00"
        }"#;
        let now = t("2026-02-01T00:00:00Z");
        let (entries, notes) = import(text, Path::new("ref.json"), now).unwrap();
        assert_eq!(entries.len(), 2);
        let a = &entries[0];
        assert_eq!(a.id, "5f0c1b9e-1111-4a4a-9c9c-000000000001");
        assert_eq!(a.added_at, t("2026-01-20T10:15:30.123456Z"));
        assert_eq!(a.confidence, 0.85);
        assert_eq!(a.times_matched, 2);
        assert_eq!(a.spec_hash.as_deref(), Some("0123456789abcdef"));
        let b = &entries[1];
        assert_eq!(b.adversary, "general");
        assert_eq!(b.added_at, now);
        assert_eq!(b.confidence, 0.9);
        assert!(b.id.starts_with("rc-"));
        assert_eq!(notes.len(), 1);
    }
}
