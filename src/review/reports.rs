//! The `--out` folder: one report per spec in each format asked for, at the
//! spec's place in the input tree (`design/auth.md` -> `design/auth.json`,
//! `design/auth.md`, `design/auth.sarif`), plus the summary files. Every
//! file is written atomically as soon as its spec is done, so an
//! interrupted batch keeps what it finished. It never reviews anything.

use super::args::ReportFormat;
use super::discover::Target;
use crate::catalog::Catalog;
use crate::fsutil::write_atomic;
use crate::verdict::Verdict;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct ReportWriter {
    out: PathBuf,
    formats: Vec<ReportFormat>,
    /// Report path per target, without the format's extension.
    stems: Vec<PathBuf>,
}

impl ReportWriter {
    pub fn new(out: &Path, formats: &[ReportFormat], targets: &[Target]) -> ReportWriter {
        let mut formats = formats.to_vec();
        formats.sort();
        formats.dedup();
        let short = |t: &Target| t.rel.with_extension("");
        let mut uses: HashMap<PathBuf, usize> = HashMap::new();
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
                .and_then(|_| match path.parent() {
                    Some(d) => std::fs::create_dir_all(d),
                    None => Ok(()),
                })
                .and_then(|_| write_atomic(&path, &bytes))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written.push(path.display().to_string());
        }
        Ok(written)
    }

    /// Write a summary file (`summary.json`, ...) at the top of `--out`.
    pub fn write_summary(&self, name: &str, bytes: &[u8]) -> Result<String, String> {
        let path = self.out.join(name);
        std::fs::create_dir_all(&self.out)
            .and_then(|_| write_atomic(&path, bytes))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    }
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
}
