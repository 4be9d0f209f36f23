//! `gauntlet review --changed-since REF`: the files that changed since a
//! git revision, so a pull request reviews only the specs it touches. It
//! asks the git CLI (no shell; arguments passed as they are): files that
//! differ between the merge base of REF and HEAD and the working tree
//! (committed, staged or not), plus untracked files that are not ignored.
//! Deleted files are left out. A repository's own configuration is not
//! allowed to run programs here (fsmonitor, external diff, textconv).

use crate::error::UsageError;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Canonical paths of the files changed since `reference`, in the git
/// repository holding `cwd`.
pub fn changed_since(reference: &str, cwd: &Path) -> Result<HashSet<PathBuf>, UsageError> {
    let bad = |why: String| UsageError::Invalid(format!("--changed-since: {why}"));
    if reference.trim().is_empty() || reference.starts_with('-') {
        return Err(bad(format!("`{reference}` is not a git revision")));
    }
    let top = git(cwd, &["rev-parse", "--show-toplevel"])
        .map_err(bad)?
        .ok_or_else(|| bad(format!("{} is not inside a git repository", cwd.display())))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim_end_matches(['\n', '\r']));
    let commit = format!("{reference}^{{commit}}");
    let sha = git(&top, &["rev-parse", "--verify", "--quiet", &commit])
        .map_err(bad)?
        .ok_or_else(|| bad(format!("unknown git revision `{reference}`")))?;
    let sha = String::from_utf8_lossy(&sha).trim().to_string();
    // The merge base, as a pull request sees it; the revision itself when
    // there is none (an unborn HEAD, unrelated histories).
    let base = match git(&top, &["merge-base", &sha, "HEAD"]).map_err(bad)? {
        Some(b) => String::from_utf8_lossy(&b).trim().to_string(),
        None => sha,
    };
    let diff = git(
        &top,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--diff-filter=ACMRT",
            &base,
            "--",
        ],
    )
    .map_err(bad)?
    .ok_or_else(|| bad(format!("git diff against `{reference}` failed")))?;
    let untracked = git(&top, &["ls-files", "--others", "--exclude-standard", "-z"])
        .map_err(bad)?
        .unwrap_or_default();
    let mut files = HashSet::new();
    for name in diff.split(|b| *b == 0).chain(untracked.split(|b| *b == 0)) {
        if name.is_empty() {
            continue;
        }
        let rel = PathBuf::from(String::from_utf8_lossy(name).into_owned());
        if let Ok(p) = std::fs::canonicalize(top.join(rel)) {
            files.insert(p);
        }
    }
    Ok(files)
}

/// Runs git; `Ok(None)` when it ran and failed, `Err` when it could not run.
fn git(dir: &Path, args: &[&str]) -> Result<Option<Vec<u8>>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "core.fsmonitor=false", "-c", "core.quotepath=off"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "needs git, which is not on PATH".to_string(),
            _ => format!("cannot run git: {e}"),
        })?;
    Ok(out.status.success().then_some(out.stdout))
}
