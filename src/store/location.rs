//! Where the project's store lives and what time it is. The store folder is
//! `.adversarial-spec/` under the project root (the nearest ancestor of the
//! working directory holding `.git`, else the working directory), unless
//! `--store-dir` / `GAUNTLET_STORE_DIR` say otherwise. The clock is fixed by
//! `--now` / `GAUNTLET_NOW` so decay is reproducible. This module only
//! resolves paths and times; it never creates or reads files.

use chrono::{DateTime, NaiveDate, Utc};
use std::path::{Path, PathBuf};

pub const FOLDER: &str = ".adversarial-spec";
pub const STORE_FILE: &str = "resolved_concerns.json";
pub const STATS_FILE: &str = "adversary_stats.json";
pub const HISTORY_FILE: &str = "adversary_runs.jsonl";
pub const REVIEWS_DIR: &str = "reviews";
pub const LOCK_FILE: &str = ".lock";

/// The files of one store folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorePaths {
    pub dir: PathBuf,
    /// The invoker named the folder (`--store-dir`, `GAUNTLET_STORE_DIR`):
    /// then it may be a symlink. A folder found in the repository may not.
    pub explicit: bool,
}

impl StorePaths {
    /// A folder the invoker chose.
    pub fn new(dir: impl Into<PathBuf>) -> StorePaths {
        StorePaths {
            dir: dir.into(),
            explicit: true,
        }
    }

    /// `explicit` (flag or env) wins; else `.adversarial-spec` under the project root of `cwd`.
    pub fn resolve(explicit: Option<&Path>, cwd: &Path) -> StorePaths {
        match explicit {
            Some(d) => StorePaths::new(d),
            None => StorePaths {
                dir: project_root(cwd).join(FOLDER),
                explicit: false,
            },
        }
    }

    /// A store folder found in the repository must not be a symlink: a
    /// hostile repository could point it at any folder of the user's.
    pub fn check_folder(&self) -> Result<(), super::StoreError> {
        if !self.explicit
            && std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(super::StoreError::Unsafe {
                file: self.dir.display().to_string(),
                why: "is a symbolic link; gauntlet only follows a store folder link that you name with --store-dir or GAUNTLET_STORE_DIR".to_string(),
            });
        }
        Ok(())
    }

    pub fn store(&self) -> PathBuf {
        self.dir.join(STORE_FILE)
    }
    pub fn stats(&self) -> PathBuf {
        self.dir.join(STATS_FILE)
    }
    pub fn history(&self) -> PathBuf {
        self.dir.join(HISTORY_FILE)
    }
    pub fn reviews(&self) -> PathBuf {
        self.dir.join(REVIEWS_DIR)
    }
    pub fn lock(&self) -> PathBuf {
        self.dir.join(LOCK_FILE)
    }
}

/// The nearest ancestor of `cwd` (itself included) that holds `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// `--now`: RFC 3339 (`2026-01-22T14:30:00Z`), or a bare date meaning its midnight UTC.
pub fn parse_now(s: &str) -> Result<DateTime<Utc>, String> {
    parse_time(s).ok_or_else(|| {
        format!("invalid time `{s}`: expected RFC 3339 like 2026-01-22T14:30:00Z or a date like 2026-01-22")
    })
}

/// RFC 3339, a naive ISO timestamp (taken as UTC, as the reference
/// implementation writes them), or a bare date.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(t.and_utc());
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
    }
    None
}

/// Which spec a stored dismissal belongs to: the spec's path relative to the
/// project root (so `docs/a.md` and `cd docs; a.md` agree), or `title:` and
/// its first heading when it came from standard input. Dismissals only answer
/// concerns of the same spec: an explanation cites that spec's lines.
pub fn spec_identity(path: Option<&str>, title: Option<&str>) -> String {
    if let Some(p) = path {
        let p = Path::new(p);
        if let Ok(abs) = p.canonicalize() {
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let root = project_root(&cwd);
            let root = root.canonicalize().unwrap_or(root);
            return key_under(&root, &abs);
        }
        return p.to_string_lossy().into_owned();
    }
    format!("title:{}", title.unwrap_or("").trim().to_lowercase())
}

/// The key of the spec at absolute path `abs` in the project at `root`: its
/// relative path with `/` separators, or, outside the project, the absolute
/// path as it is (joining its components would start it with "//").
fn key_under(root: &Path, abs: &Path) -> String {
    match abs.strip_prefix(root) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => abs.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_outside_the_project_is_known_by_its_absolute_path() {
        let root = Path::new("/work/project");
        assert_eq!(
            key_under(root, Path::new("/work/project/docs/a.md")),
            "docs/a.md"
        );
        assert_eq!(
            key_under(root, Path::new("/work/other/b.md")),
            "/work/other/b.md"
        );
    }

    #[test]
    fn project_root_is_nearest_git_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project_root(&deep), deep);
        std::fs::create_dir_all(tmp.path().join("a/.git")).unwrap();
        assert_eq!(project_root(&deep), tmp.path().join("a"));
        let p = StorePaths::resolve(None, &deep);
        assert_eq!(
            p.store(),
            tmp.path()
                .join("a/.adversarial-spec/resolved_concerns.json")
        );
        let p = StorePaths::resolve(Some(Path::new("/x")), &deep);
        assert_eq!(p.stats(), Path::new("/x/adversary_stats.json"));
    }

    #[test]
    fn times_parse_in_three_forms() {
        let a = parse_time("2026-01-22T14:30:00Z").unwrap();
        let b = parse_time("2026-01-22T14:30:00.000000").unwrap();
        assert_eq!(a, b);
        let d = parse_time("2026-01-22").unwrap();
        assert_eq!(d.to_rfc3339(), "2026-01-22T00:00:00+00:00");
        assert!(parse_now("yesterday").is_err());
    }
}
