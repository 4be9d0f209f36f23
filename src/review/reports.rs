//! The `--out` folder: one report per spec in each format asked for, at the
//! spec's place in the input tree (`design/auth.md` -> `design/auth.json`,
//! `design/auth.md`, `design/auth.sarif`), plus the summary files. Every
//! file is written atomically as soon as its spec is done, so an
//! interrupted batch keeps what it finished. It never reviews anything.
//!
//! It never overwrites a file it did not create: the files it wrote are
//! listed in `.gauntlet-reports` at the top of `--out`, and an existing
//! file not on that list (a spec, a note, a symlink) stops that write with
//! an error. An `--out` that holds a reviewed path is refused up front
//! (`check_out`), comparing resolved paths, and a spec named `summary.*` at
//! the top keeps its full name so the batch summary cannot replace it.

use super::args::ReportFormat;
use super::discover::Target;
use crate::catalog::Catalog;
use crate::error::UsageError;
use crate::fsutil::{
    Links, create_dir_no_links, read_regular, resolve_maybe_missing, write_atomic,
};
use crate::verdict::Verdict;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The list of files this tool wrote under `--out`, one relative path a line.
pub const MANIFEST: &str = ".gauntlet-reports";
/// Names of the summary files at the top of `--out`.
const SUMMARY_STEM: &str = "summary";

/// Refuses an `--out` that is, or holds, one of the reviewed paths: its
/// reports would land on the specs. Paths are compared resolved (symlinks
/// and `..`), not as typed.
pub fn check_out(out: &Path, inputs: &[PathBuf]) -> Result<(), UsageError> {
    let out_r = resolve_maybe_missing(out);
    for p in inputs {
        let in_r = resolve_maybe_missing(p);
        if in_r.starts_with(&out_r) {
            return Err(UsageError::Invalid(format!(
                "--out {} holds the reviewed path {}: reports would overwrite specs (choose an --out folder outside the reviewed paths)",
                out.display(),
                p.display()
            )));
        }
    }
    Ok(())
}

pub struct ReportWriter {
    out: PathBuf,
    formats: Vec<ReportFormat>,
    /// Report path per target, without the format's extension.
    stems: Vec<PathBuf>,
    /// Files under `out` this tool wrote (relative, `/`-separated).
    owned: Mutex<HashSet<String>>,
}

impl ReportWriter {
    pub fn new(out: &Path, formats: &[ReportFormat], targets: &[Target]) -> ReportWriter {
        let mut formats = formats.to_vec();
        formats.sort();
        formats.dedup();
        let short = |t: &Target| t.rel.with_extension("");
        let mut uses: HashMap<PathBuf, usize> = HashMap::new();
        // The batch summary owns `summary.*` at the top.
        uses.insert(PathBuf::from(SUMMARY_STEM), 1);
        for t in targets {
            *uses.entry(short(t)).or_default() += 1;
        }
        // `a.md` and `a.markdown` side by side keep their full names.
        let stems = targets
            .iter()
            .map(|t| {
                let s = short(t);
                if uses[&s] > 1 { t.rel.clone() } else { s }
            })
            .collect();
        ReportWriter {
            out: out.to_path_buf(),
            formats,
            stems,
            owned: Mutex::new(read_manifest(out)),
        }
    }

    pub fn formats(&self) -> &[ReportFormat] {
        &self.formats
    }

    /// Where target `i`'s report in `format` goes.
    pub fn path(&self, i: usize, format: ReportFormat) -> PathBuf {
        let ext = match format {
            ReportFormat::Json => "json",
            ReportFormat::Markdown => "md",
            ReportFormat::Sarif => "sarif",
        };
        let stem = &self.stems[i];
        let mut name = stem.file_name().unwrap_or_default().to_os_string();
        name.push(".");
        name.push(ext);
        self.out.join(stem.with_file_name(name))
    }

    /// Write target `i`'s reports; returns the paths written.
    pub fn write(
        &self,
        i: usize,
        verdict: &Verdict,
        catalog: &Catalog,
    ) -> Result<Vec<String>, String> {
        let mut written = Vec::with_capacity(self.formats.len());
        for &f in &self.formats {
            let path = self.path(i, f);
            let mut bytes = Vec::new();
            let rendered = match f {
                ReportFormat::Json => crate::render::json::write(verdict, &mut bytes),
                ReportFormat::Markdown => crate::render::markdown::write(verdict, &mut bytes),
                ReportFormat::Sarif => crate::render::sarif::write(verdict, catalog, &mut bytes),
            };
            rendered
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
                .and_then(|_| self.write_owned(&path, &bytes))?;
            written.push(path.display().to_string());
        }
        Ok(written)
    }

    /// Write a summary file (`summary.json`, ...) at the top of `--out`.
    pub fn write_summary(&self, name: &str, bytes: &[u8]) -> Result<String, String> {
        let path = self.out.join(name);
        self.write_owned(&path, bytes)?;
        Ok(path.display().to_string())
    }

    /// Writes `path` under `out` unless something we did not write is there.
    fn write_owned(&self, path: &Path, bytes: &[u8]) -> Result<(), String> {
        let rel = relative_key(&self.out, path);
        let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        if let Some(d) = path.parent() {
            create_dir_no_links(&self.out, d).map_err(cannot)?;
        }
        let mut owned = self.owned.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if m.file_type().is_symlink() {
                return Err(format!(
                    "refusing to write {}: it is a symbolic link (gauntlet never writes through links)",
                    path.display()
                ));
            }
            if !owned.contains(&rel) {
                return Err(format!(
                    "refusing to overwrite {}: gauntlet did not write it (move it away or choose another --out)",
                    path.display()
                ));
            }
        }
        if owned.insert(rel.clone()) {
            // Listed before the file exists: a crash in between leaves a
            // name on the list, never an unlisted file of ours.
            append_manifest(&self.out, &rel).map_err(|e| {
                owned.remove(&rel);
                format!("cannot write {}: {e}", self.out.join(MANIFEST).display())
            })?;
        }
        drop(owned);
        write_atomic(path, bytes).map_err(cannot)
    }
}

fn relative_key(out: &Path, path: &Path) -> String {
    path.strip_prefix(out)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn read_manifest(out: &Path) -> HashSet<String> {
    read_regular(&out.join(MANIFEST), 64 * 1024 * 1024, Links::Refuse)
        .map(|b| {
            String::from_utf8_lossy(&b)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn append_manifest(out: &Path, rel: &str) -> std::io::Result<()> {
    let path = out.join(MANIFEST);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is not a regular file",
        ));
    }
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = o.open(&path)?;
    f.write_all(format!("{rel}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(rel: &str) -> Target {
        Target {
            path: PathBuf::from(rel),
            display: rel.to_string(),
            rel: PathBuf::from(rel),
        }
    }

    #[test]
    fn report_paths_mirror_the_tree() {
        let targets = [t("design/auth.md"), t("a.md"), t("a.markdown"), t("notes")];
        let w = ReportWriter::new(
            Path::new("out"),
            &[ReportFormat::Sarif, ReportFormat::Json, ReportFormat::Json],
            &targets,
        );
        assert_eq!(w.formats(), &[ReportFormat::Json, ReportFormat::Sarif]);
        assert_eq!(
            w.path(0, ReportFormat::Json),
            Path::new("out/design/auth.json")
        );
        assert_eq!(
            w.path(0, ReportFormat::Markdown),
            Path::new("out/design/auth.md")
        );
        assert_eq!(w.path(1, ReportFormat::Json), Path::new("out/a.md.json"));
        assert_eq!(
            w.path(2, ReportFormat::Sarif),
            Path::new("out/a.markdown.sarif")
        );
        assert_eq!(w.path(3, ReportFormat::Json), Path::new("out/notes.json"));
    }

    #[test]
    fn a_top_level_summary_spec_keeps_its_full_name() {
        let targets = [t("summary.md"), t("sub/summary.md")];
        let w = ReportWriter::new(Path::new("out"), &[ReportFormat::Markdown], &targets);
        assert_eq!(
            w.path(0, ReportFormat::Markdown),
            Path::new("out/summary.md.md")
        );
        assert_eq!(
            w.path(1, ReportFormat::Markdown),
            Path::new("out/sub/summary.md")
        );
    }

    #[test]
    fn never_overwrites_a_file_it_did_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("a.md"), "# my notes").unwrap();
        let targets = [t("a.md"), t("b.md")];
        let w = ReportWriter::new(&out, &[ReportFormat::Markdown], &targets);
        let e = w
            .write_owned(&w.path(0, ReportFormat::Markdown), b"report")
            .unwrap_err();
        assert!(e.contains("did not write it"), "{e}");
        assert_eq!(
            std::fs::read_to_string(out.join("a.md")).unwrap(),
            "# my notes"
        );
        // Its own files it may replace, in this run and the next.
        w.write_owned(&w.path(1, ReportFormat::Markdown), b"one")
            .unwrap();
        w.write_owned(&w.path(1, ReportFormat::Markdown), b"two")
            .unwrap();
        let again = ReportWriter::new(&out, &[ReportFormat::Markdown], &targets);
        again
            .write_owned(&again.path(1, ReportFormat::Markdown), b"three")
            .unwrap();
        assert_eq!(std::fs::read_to_string(out.join("b.md")).unwrap(), "three");
    }

    #[test]
    fn out_holding_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let specs = dir.path().join("specs");
        std::fs::create_dir_all(&specs).unwrap();
        assert!(check_out(&specs, std::slice::from_ref(&specs)).is_err());
        assert!(check_out(dir.path(), std::slice::from_ref(&specs)).is_err());
        assert!(check_out(&specs.join("reports"), std::slice::from_ref(&specs)).is_ok());
        assert!(check_out(&dir.path().join("reports"), std::slice::from_ref(&specs)).is_ok());
        #[cfg(unix)]
        {
            // The same folder reached through a link is the same folder.
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&specs, &link).unwrap();
            assert!(check_out(&link, std::slice::from_ref(&specs)).is_err());
            assert!(check_out(&specs.join("x/.."), &[link]).is_err());
        }
    }
}
