//! Finding the specs under the PATHs given to `gauntlet review`, the way
//! ripgrep finds files (the `ignore` crate): `*.md` and `*.markdown` by
//! default (`--glob` changes that), `.gitignore` / `.ignore` honoured, hidden
//! files skipped. Symlinks are followed only while they stay inside the
//! folder they were found in. It only lists files: it never reads them.

use crate::error::UsageError;
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub const DEFAULT_GLOBS: [&str; 2] = ["*.md", "*.markdown"];

/// One spec to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Where to read it (as walked from the PATH given).
    pub path: PathBuf,
    /// How it is shown in the summary and the verdict (`/`-separated).
    pub display: String,
    /// Its place under `--out`: relative to the common folder of all PATHs.
    pub rel: PathBuf,
}

/// Something found that is not a spec to review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// Skipped on purpose (a symlink leading out of its folder); a warning.
    Outside { path: String, root: String },
    /// Could not be listed (an unreadable folder, a broken link); an error row.
    Unreadable { path: String, message: String },
}

#[derive(Debug, Default)]
pub struct Discovery {
    /// Sorted by display path, no file twice.
    pub targets: Vec<Target>,
    pub skipped: Vec<Skip>,
}

/// List the specs under `paths`. `exclude` (the `--out` folder) is never
/// searched, so reports from an earlier run are not reviewed as specs.
pub fn discover(
    paths: &[PathBuf],
    globs: &[String],
    exclude: Option<&Path>,
) -> Result<Discovery, UsageError> {
    let mut roots = Vec::with_capacity(paths.len());
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| {
            UsageError::Invalid(if e.kind() == std::io::ErrorKind::NotFound {
                format!("path {} not found", p.display())
            } else {
                format!("cannot read {}: {e}", p.display())
            })
        })?;
        roots.push((p.clone(), meta.is_dir()));
    }
    let base = common_base(&roots);
    // Resolved, so an `--out` reached through a symlink is still excluded.
    let exclude = exclude.map(crate::fsutil::resolve_maybe_missing);
    let mut found: Vec<Found> = Vec::new();
    let mut skipped = Vec::new();
    for (root, is_dir) in &roots {
        if !is_dir {
            // A file named on the command line is reviewed whatever its name.
            found.push(Found::new(root.clone(), false));
            continue;
        }
        walk(root, globs, exclude.as_deref(), &mut found, &mut skipped)?;
    }
    // A file reached twice (two PATHs, or a link inside the folder) is
    // reviewed once, under its real name when it has one.
    found.sort_by(|a, b| (a.link, &a.path).cmp(&(b.link, &b.path)));
    let mut seen = HashSet::new();
    let mut targets = Vec::with_capacity(found.len());
    for Found {
        path, canonical, ..
    } in found
    {
        if !seen.insert(canonical) {
            continue;
        }
        let abs = absolute(&path);
        let rel = abs
            .strip_prefix(&base)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| PathBuf::from(path.file_name().unwrap_or_default()));
        targets.push(Target {
            display: slashes(&path),
            path,
            rel,
        });
    }
    targets.sort_by(|a, b| a.display.cmp(&b.display));
    Ok(Discovery { targets, skipped })
}

fn walk(
    root: &Path,
    globs: &[String],
    exclude: Option<&Path>,
    found: &mut Vec<Found>,
    skipped: &mut Vec<Skip>,
) -> Result<(), UsageError> {
    let mut ob = OverrideBuilder::new(root);
    let bad = |g: &str, e: ignore::Error| UsageError::Invalid(format!("bad --glob `{g}`: {e}"));
    if globs.is_empty() {
        ob.case_insensitive(true).map_err(|e| bad("*.md", e))?;
        for g in DEFAULT_GLOBS {
            ob.add(g).map_err(|e| bad(g, e))?;
        }
    } else {
        for g in globs {
            ob.add(g).map_err(|e| bad(g, e))?;
        }
    }
    let overrides = ob.build().map_err(|e| bad("", e))?;
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| absolute(root));
    let outside: std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>> = Default::default();
    let outside_w = outside.clone();
    let exclude = exclude.map(Path::to_path_buf);
    let root_c = canonical_root.clone();
    // The globs pick files among those the walk keeps; given to the walker
    // as overrides they would beat .gitignore and hidden-file rules.
    let wanted = |p: &Path| match overrides.matched(p, false) {
        ignore::Match::Whitelist(_) => true,
        ignore::Match::Ignore(_) => false,
        ignore::Match::None => overrides.num_whitelists() == 0,
    };
    let walker = WalkBuilder::new(root)
        .follow_links(true)
        .filter_entry(move |e| {
            if let Some(x) = exclude.as_deref()
                && e.file_type().is_some_and(|t| t.is_dir())
                && (absolute(e.path()) == x
                    || std::fs::canonicalize(e.path()).is_ok_and(|c| c == x))
            {
                return false;
            }
            if e.path_is_symlink() {
                let inside = std::fs::canonicalize(e.path()).is_ok_and(|c| c.starts_with(&root_c));
                if !inside {
                    if let Ok(mut v) = outside_w.lock() {
                        v.push(e.path().to_path_buf());
                    }
                    return false;
                }
            }
            true
        })
        .build();
    for entry in walker {
        match entry {
            Ok(e) => {
                if e.file_type().is_some_and(|t| t.is_file()) && wanted(e.path()) {
                    let link = e.path_is_symlink();
                    found.push(Found::new(e.into_path(), link));
                }
            }
            Err(err) => {
                let path = err_path(&err).unwrap_or_else(|| root.display().to_string());
                skipped.push(Skip::Unreadable {
                    path,
                    message: err.to_string(),
                });
            }
        }
    }
    let mut outside = outside.lock().map(|v| v.clone()).unwrap_or_default();
    outside.sort();
    for p in outside {
        skipped.push(Skip::Outside {
            path: slashes(&p),
            root: root.display().to_string(),
        });
    }
    Ok(())
}

struct Found {
    path: PathBuf,
    canonical: PathBuf,
    link: bool,
}

impl Found {
    fn new(path: PathBuf, link: bool) -> Found {
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| absolute(&path));
        Found {
            path,
            canonical,
            link,
        }
    }
}

fn err_path(e: &ignore::Error) -> Option<String> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.display().to_string()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            err_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.display().to_string()),
        _ => None,
    }
}

/// The deepest folder holding every root (a file root counts as its folder).
fn common_base(roots: &[(PathBuf, bool)]) -> PathBuf {
    let mut base: Option<PathBuf> = None;
    for (p, is_dir) in roots {
        let abs = absolute(p);
        let dir = if *is_dir {
            abs
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or(abs)
        };
        base = Some(match base {
            None => dir,
            Some(b) => b
                .components()
                .zip(dir.components())
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| x)
                .collect(),
        });
    }
    base.unwrap_or_default()
}

/// Absolute and lexically normalised (no symlink resolution).
pub fn absolute(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    crate::fsutil::normalise_lexically(&abs)
}

fn slashes(p: &Path) -> String {
    let s = p.to_string_lossy();
    let s = s.strip_prefix("./").unwrap_or(&s);
    if std::path::MAIN_SEPARATOR == '/' {
        s.to_string()
    } else {
        s.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, s: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }

    fn rels(d: &Discovery) -> Vec<String> {
        d.targets
            .iter()
            .map(|t| t.rel.to_string_lossy().replace('\\', "/"))
            .collect()
    }

    #[test]
    fn finds_markdown_recursively_and_skips_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(&r.join("a.md"), "# a");
        write(&r.join("sub/deeper/b.markdown"), "# b");
        write(&r.join("sub/C.MD"), "# c");
        write(&r.join("notes.txt"), "x");
        write(&r.join(".hidden/d.md"), "# d");
        write(&r.join(".e.md"), "# e");
        write(&r.join(".ignore"), "sub/ignored.md\n");
        write(&r.join("sub/ignored.md"), "# i");
        let d = discover(&[r.to_path_buf()], &[], None).unwrap();
        assert_eq!(rels(&d), vec!["a.md", "sub/C.MD", "sub/deeper/b.markdown"]);
        assert!(d.skipped.is_empty());
    }

    #[test]
    fn glob_replaces_the_default_and_out_is_excluded() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(&r.join("a.md"), "# a");
        write(&r.join("b.txt"), "b");
        write(&r.join("out/a.md"), "# report");
        let d = discover(&[r.to_path_buf()], &["*.txt".into()], None).unwrap();
        assert_eq!(rels(&d), vec!["b.txt"]);
        let d = discover(&[r.to_path_buf()], &[], Some(&r.join("out"))).unwrap();
        assert_eq!(rels(&d), vec!["a.md"]);
        assert!(matches!(
            discover(&[r.to_path_buf()], &["a{".into()], None),
            Err(UsageError::Invalid(_))
        ));
    }

    #[test]
    fn several_roots_mirror_from_their_common_folder_without_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        write(&r.join("docs/a.md"), "# a");
        write(&r.join("rfcs/a.md"), "# a2");
        let d = discover(
            &[r.join("docs"), r.join("rfcs"), r.join("docs/a.md")],
            &[],
            None,
        )
        .unwrap();
        assert_eq!(rels(&d), vec!["docs/a.md", "rfcs/a.md"]);
    }

    #[test]
    fn missing_path_is_a_usage_error() {
        let err = discover(&[PathBuf::from("/nonexistent/gauntlet")], &[], None).unwrap_err();
        assert!(err.to_string().contains("not found"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_only_inside_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path().join("root");
        write(&r.join("real/a.md"), "# a");
        write(&dir.path().join("outside/secret.md"), "# s");
        std::os::unix::fs::symlink(dir.path().join("outside"), r.join("escape")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside/secret.md"), r.join("leak.md"))
            .unwrap();
        std::os::unix::fs::symlink(r.join("real/a.md"), r.join("alias.md")).unwrap();
        let d = discover(std::slice::from_ref(&r), &[], None).unwrap();
        // alias.md points at real/a.md: the same file, reviewed once.
        assert_eq!(rels(&d), vec!["real/a.md"]);
        let outside: Vec<&Skip> = d
            .skipped
            .iter()
            .filter(|s| matches!(s, Skip::Outside { .. }))
            .collect();
        assert_eq!(outside.len(), 2, "{:?}", d.skipped);
    }
}
