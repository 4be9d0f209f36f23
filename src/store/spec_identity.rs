//! Which spec is this? A spec is known by its path and by its content, so a
//! renamed, moved or piped spec finds its history and its dismissals. A
//! `SpecRecord` keeps every path a spec was seen at, the hash of its last
//! content and one hash per section; `resolve` matches a run's spec against
//! the records: by path first, then by identical content, then by shared
//! sections (at least half). This module is pure: it never reads or writes
//! files.

pub use crate::carry_forward::MatchedBy;
use crate::spec::Spec;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Two versions of a spec are the same spec when at least this share of
/// their sections is unchanged.
pub const SECTION_OVERLAP: f64 = 0.5;

/// One spec the store has seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecRecord {
    /// The stable key: the path identity the spec was first seen under
    /// (`docs/a.md`, or `title:...` from standard input). Dismissals and
    /// concern timelines are scoped to it.
    pub key: String,
    /// Every path identity the spec has been seen under, first one first.
    pub paths: Vec<String>,
    /// sha256 of the content at the last run.
    pub sha256: String,
    /// Hashes of the sections at the last run (see `section_hashes`).
    #[serde(default)]
    pub sections: Vec<String>,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// Runs recorded for this spec.
    #[serde(default)]
    pub runs: u64,
}

/// The result of `resolve`.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub key: String,
    /// Index into the records, `None` for a new spec.
    pub record: Option<usize>,
    pub matched_by: MatchedBy,
    /// The content differs from the last run's (false for a new spec).
    pub content_changed: bool,
}

/// One short hash per section: heading and body with whitespace collapsed,
/// so re-wrapping a paragraph elsewhere does not change a section's hash.
pub fn section_hashes(spec: &Spec) -> Vec<String> {
    (0..spec.sections.len())
        .filter_map(|i| {
            let mut text = String::new();
            for n in spec.section_lines(i) {
                if let Some(l) = spec.line(n) {
                    for w in l.text.split_whitespace() {
                        text.push_str(w);
                        text.push(' ');
                    }
                }
            }
            // An empty preamble is no evidence of sameness.
            (!text.is_empty()).then(|| crate::spec::sha256_hex(text.as_bytes())[..16].to_string())
        })
        .collect()
}

/// Share of `a`'s and `b`'s distinct sections they have in common, over the
/// larger of the two (so adding many sections also counts as change).
pub fn overlap(a: &[String], b: &[String]) -> f64 {
    let a: HashSet<&str> = a.iter().map(String::as_str).collect();
    let b: HashSet<&str> = b.iter().map(String::as_str).collect();
    let larger = a.len().max(b.len());
    if larger == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / larger as f64
}

/// Finds the spec among `records`: the record that has seen `path_id`;
/// else the one whose last content is `sha256`; else the one sharing the
/// most sections (at least `SECTION_OVERLAP`, ties to the earliest key);
/// else a new spec keyed by `path_id`. Deterministic for the same records.
///
/// Content only finds a record whose files are all gone (`exists` says
/// which of its paths is still a file): a renamed or moved spec. A copy
/// next to its original is another spec, whose dismissals would cite the
/// other file. A spec piped on standard input (`from_stdin`) has no file
/// of its own, so it finds any record by content.
pub fn resolve(
    records: &[SpecRecord],
    path_id: &str,
    sha256: &str,
    sections: &[String],
    from_stdin: bool,
    exists: &dyn Fn(&str) -> bool,
) -> Resolution {
    let found = |i: usize, by: MatchedBy| Resolution {
        key: records[i].key.clone(),
        record: Some(i),
        matched_by: by,
        content_changed: records[i].sha256 != sha256,
    };
    if let Some(i) = records
        .iter()
        .position(|r| r.key == path_id || r.paths.iter().any(|p| p == path_id))
    {
        return found(i, MatchedBy::Path);
    }
    let movable = |r: &SpecRecord| from_stdin || !r.paths.iter().any(|p| exists(p));
    if let Some(i) = records
        .iter()
        .position(|r| r.sha256 == sha256 && movable(r))
    {
        return found(i, MatchedBy::Content);
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, r) in records.iter().enumerate() {
        let o = overlap(&r.sections, sections);
        // `movable` may touch the disk: ask it last.
        if o >= SECTION_OVERLAP && best.is_none_or(|(_, b)| o > b) && movable(r) {
            best = Some((i, o));
        }
    }
    if let Some((i, _)) = best {
        return found(i, MatchedBy::Sections);
    }
    Resolution {
        key: path_id.to_string(),
        record: None,
        matched_by: MatchedBy::New,
        content_changed: false,
    }
}

/// Records this run's sighting of the spec: a new record, or the matched
/// one updated with the path, content and sections. Returns its index.
pub fn note_run(
    records: &mut Vec<SpecRecord>,
    resolution: &Resolution,
    path_id: &str,
    sha256: &str,
    sections: Vec<String>,
    now: DateTime<Utc>,
) -> usize {
    match resolution.record {
        Some(i) => {
            let r = &mut records[i];
            if !r.paths.iter().any(|p| p == path_id) {
                r.paths.push(path_id.to_string());
            }
            r.sha256 = sha256.to_string();
            r.sections = sections;
            r.last_seen = r.last_seen.max(now);
            r.runs += 1;
            i
        }
        None => {
            records.push(SpecRecord {
                key: resolution.key.clone(),
                paths: vec![path_id.to_string()],
                sha256: sha256.to_string(),
                sections,
                first_seen: now,
                last_seen: now,
                runs: 1,
            });
            records.len() - 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> DateTime<Utc> {
        crate::store::location::parse_time("2026-01-01").unwrap()
    }

    fn record(key: &str, sha: &str, sections: &[&str]) -> SpecRecord {
        SpecRecord {
            key: key.into(),
            paths: vec![key.into()],
            sha256: sha.into(),
            sections: sections.iter().map(|s| s.to_string()).collect(),
            first_seen: t(),
            last_seen: t(),
            runs: 1,
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn none(_: &str) -> bool {
        false
    }

    fn all(_: &str) -> bool {
        true
    }

    #[test]
    fn path_then_content_then_sections_then_new() {
        let records = vec![
            record("docs/a.md", "aaa", &["1", "2", "3", "4"]),
            record("docs/b.md", "bbb", &["5", "6"]),
        ];
        let r = resolve(&records, "docs/a.md", "zzz", &s(&["9"]), false, &none);
        assert_eq!(
            (r.key.as_str(), r.matched_by),
            ("docs/a.md", MatchedBy::Path)
        );
        assert!(r.content_changed);
        let r = resolve(&records, "title:b", "bbb", &[], true, &all);
        assert_eq!(
            (r.key.as_str(), r.matched_by),
            ("docs/b.md", MatchedBy::Content)
        );
        assert!(!r.content_changed);
        // Two of four sections unchanged: the same spec, edited.
        let r = resolve(
            &records,
            "new/place.md",
            "ccc",
            &s(&["1", "2", "7", "8"]),
            false,
            &none,
        );
        assert_eq!(
            (r.key.as_str(), r.matched_by),
            ("docs/a.md", MatchedBy::Sections)
        );
        assert!(r.content_changed);
        // One of four: another spec.
        let r = resolve(
            &records,
            "new/place.md",
            "ccc",
            &s(&["1", "7", "8", "9"]),
            false,
            &none,
        );
        assert_eq!(
            (r.key.as_str(), r.matched_by),
            ("new/place.md", MatchedBy::New)
        );
        assert_eq!(r.record, None);
        // A copy beside its original (still a file) is another spec; the
        // same bytes from standard input are the original.
        let r = resolve(&records, "docs/copy.md", "bbb", &[], false, &all);
        assert_eq!(r.matched_by, MatchedBy::New);
        let r = resolve(&records, "docs/moved.md", "bbb", &[], false, &none);
        assert_eq!(
            (r.key.as_str(), r.matched_by),
            ("docs/b.md", MatchedBy::Content)
        );
    }

    #[test]
    fn note_run_adds_paths_once_and_counts_runs() {
        let mut records = vec![record("docs/a.md", "aaa", &["1"])];
        let r = resolve(&records, "title:spec a", "aaa", &s(&["1"]), true, &none);
        note_run(&mut records, &r, "title:spec a", "aaa", s(&["1"]), t());
        note_run(&mut records, &r, "title:spec a", "aaa", s(&["1"]), t());
        assert_eq!(records[0].paths, vec!["docs/a.md", "title:spec a"]);
        assert_eq!(records[0].runs, 3);
        let r = resolve(&records, "x.md", "xxx", &s(&["2"]), false, &none);
        assert_eq!(note_run(&mut records, &r, "x.md", "xxx", s(&["2"]), t()), 1);
        assert_eq!(records[1].key, "x.md");
    }

    #[test]
    fn section_hashes_ignore_rewrapping() {
        let a = Spec::parse(None, "# T\n\nOne two\nthree.\n\n## B\n\nx\n".into());
        let b = Spec::parse(None, "# T\n\nOne two three.\n\n## B\n\ny\n".into());
        let (ha, hb) = (section_hashes(&a), section_hashes(&b));
        assert_eq!(ha.len(), 2);
        assert_eq!(ha[0], hb[0]);
        assert_ne!(ha[1], hb[1]);
        assert_eq!(overlap(&ha, &hb), 0.5);
    }
}
