//! Technology nuances: facts where a technology breaks the usual
//! assumptions (`nuances/README.md` is the format reference). This module
//! holds the loaded set and the records a verdict carries; `parse` reads a
//! file, `builtin` embeds the shipped ones, `detect` finds which
//! technologies a spec uses, `check` turns the shipped offline checks into
//! persona rules, `checklist` builds the prompt block for models, and
//! `command` is `gauntlet nuances SPEC`.

pub mod builtin;
pub mod check;
pub mod checklist;
pub mod command;
pub mod detect;
pub mod parse;

use crate::error::DataError;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest nuance file accepted, in bytes (the format's rule 4).
pub const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The project's own nuance file, looked up at the project root.
pub const PROJECT_FILE: &str = "NUANCES.md";

/// One fact about a technology, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Nuance {
    pub text: String,
    /// The file it came from (`nuances/redis.md`, `NUANCES.md`, a `--nuances` path).
    pub source: String,
    /// 1-based line of its bullet in that file.
    pub line: usize,
}

/// A technology and its nuances, merged across files.
#[derive(Debug, Clone)]
pub struct Technology {
    /// The heading as first written (`PostgreSQL`).
    pub name: String,
    /// The matching key: the name lowercased, whitespace collapsed.
    pub key: String,
    pub nuances: Vec<Nuance>,
}

/// Every technology loaded for a run, in load order.
#[derive(Debug, Clone, Default)]
pub struct NuanceSet {
    pub technologies: Vec<Technology>,
    /// Offline checks, already validated against the technologies above.
    pub checks: Vec<check::NuanceCheck>,
    detector: std::sync::OnceLock<detect::Detector>,
}

/// The key two headings must share to be the same technology.
pub fn key(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl NuanceSet {
    /// Adds parsed entries, merging technologies whose names match
    /// case-insensitively; a nuance already present (same text, any case)
    /// is not added twice.
    pub fn merge(&mut self, entries: Vec<parse::Entry>) {
        for e in entries {
            let k = key(&e.technology);
            let i = match self.technologies.iter().position(|t| t.key == k) {
                Some(i) => i,
                None => {
                    self.technologies.push(Technology {
                        name: e.technology.trim().to_string(),
                        key: k,
                        nuances: Vec::new(),
                    });
                    self.technologies.len() - 1
                }
            };
            let t = &mut self.technologies[i];
            for n in e.nuances {
                if !t
                    .nuances
                    .iter()
                    .any(|x| x.text.eq_ignore_ascii_case(&n.text))
                {
                    t.nuances.push(n);
                }
            }
        }
        self.detector = std::sync::OnceLock::new();
    }

    pub fn technology(&self, name: &str) -> Option<&Technology> {
        let k = key(name);
        self.technologies.iter().find(|t| t.key == k)
    }

    /// The technology detector for this set (built on first use).
    pub fn detector(&self) -> &detect::Detector {
        self.detector
            .get_or_init(|| detect::Detector::new(&self.technologies))
    }

    pub fn nuance_count(&self) -> usize {
        self.technologies.iter().map(|t| t.nuances.len()).sum()
    }
}

/// Where nuances come from for one run.
#[derive(Debug, Clone, Default)]
pub struct NuanceOptions {
    /// `--no-nuances`.
    pub disabled: bool,
    /// `--nuances PATH`, in order.
    pub extra: Vec<PathBuf>,
    /// The project root holding `NUANCES.md` (None: do not look).
    pub project_root: Option<PathBuf>,
}

/// Loads the built-in files, the project's `NUANCES.md` (when it exists)
/// and each `--nuances` file. `None` when nuances are turned off.
pub fn load(options: &NuanceOptions) -> Result<Option<NuanceSet>, DataError> {
    if options.disabled {
        return Ok(None);
    }
    let mut set = NuanceSet::default();
    for (name, text) in builtin::FILES {
        set.merge(parse::parse(name, text)?);
    }
    if let Some(root) = &options.project_root {
        let path = root.join(PROJECT_FILE);
        // Missing is fine: the project file is optional.
        if std::fs::symlink_metadata(&path).is_ok() {
            let text = read_file(&path, PROJECT_FILE)?;
            set.merge(parse::parse(PROJECT_FILE, &text)?);
        }
    }
    for p in &options.extra {
        let shown = p.display().to_string();
        let text = read_file(p, &shown)?;
        set.merge(parse::parse(&shown, &text)?);
    }
    set.checks = check::load_builtin(&set)?;
    Ok(Some(set))
}

/// Reads one nuance file: a regular file (symlinks to one are followed),
/// at most `MAX_FILE_BYTES`, UTF-8, no NUL bytes.
pub fn read_file(path: &Path, shown: &str) -> Result<String, DataError> {
    let invalid = |message: String| DataError::Invalid {
        file: shown.to_string(),
        message,
    };
    let meta = std::fs::metadata(path).map_err(|source| DataError::Io {
        file: shown.to_string(),
        source,
    })?;
    if !meta.is_file() {
        return Err(invalid(
            "not a regular file (a nuance file must be a Markdown file)".to_string(),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(invalid(format!(
            "{} bytes, over the {}-byte limit for a nuance file",
            meta.len(),
            MAX_FILE_BYTES
        )));
    }
    let file = std::fs::File::open(path).map_err(|source| DataError::Io {
        file: shown.to_string(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| DataError::Io {
            file: shown.to_string(),
            source,
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(invalid(format!(
            "over the {MAX_FILE_BYTES}-byte limit for a nuance file"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        DataError::Syntax {
            file: shown.to_string(),
            line,
            column: 1,
            message: "not valid UTF-8".to_string(),
        }
    })
}

/// A nuance a concern cites: which technology, the fact, and where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub technology: String,
    pub nuance: String,
    pub source: String,
    pub line: usize,
}

/// A technology found in a spec, for the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetectedTechnology {
    pub technology: String,
    /// The names or identifiers that matched, lowercased, first seen first.
    pub matched: Vec<String>,
    /// Spec lines of the first few matches.
    pub lines: Vec<usize>,
    /// How many nuances of it were applied.
    pub nuances: usize,
}

/// What the nuance feature did on one spec, for the verdict.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NuanceReport {
    pub technologies: Vec<DetectedTechnology>,
    /// The nuances applied: given to model reviewers as the divergence
    /// checklist, and the ones offline checks can cite.
    pub applied: Vec<Citation>,
}

/// What applies to a spec: detected technologies and their nuances.
pub fn report(set: &NuanceSet, spec: &crate::spec::Spec) -> NuanceReport {
    let mut out = NuanceReport::default();
    for d in set.detector().detect(spec) {
        let t = &set.technologies[d.technology];
        out.technologies.push(DetectedTechnology {
            technology: t.name.clone(),
            matched: d.matched.clone(),
            lines: d.lines.clone(),
            nuances: t.nuances.len(),
        });
        for n in &t.nuances {
            out.applied.push(Citation {
                technology: t.name.clone(),
                nuance: n.text.clone(),
                source: n.source.clone(),
                line: n.line,
            });
        }
    }
    out
}

/// Fills in what the nuance feature contributed to a verdict: the
/// technologies detected, the nuances applied, and on each concern raised
/// by a nuance check the nuance it cites.
pub fn annotate(verdict: &mut crate::verdict::Verdict, spec: &crate::spec::Spec, set: &NuanceSet) {
    let r = report(set, spec);
    for c in &mut verdict.concerns {
        let Some(rule) = c.rule.as_deref() else {
            continue;
        };
        if let Some(chk) = set.checks.iter().find(|k| k.rule_id() == rule) {
            c.nuance = Some(chk.citation.clone());
        }
    }
    verdict.nuances = (!r.technologies.is_empty()).then_some(r);
}

/// What the pipeline adds to every verdict: the nuance report and
/// citations (when nuances are loaded) and the complexity assessment.
pub fn finish_verdict(
    verdict: &mut crate::verdict::Verdict,
    spec: &crate::spec::Spec,
    options: &crate::pipeline::RunOptions,
) {
    if let Some(set) = &options.nuances {
        annotate(verdict, spec, set);
    }
    verdict.complexity = options.assessment.clone();
}
