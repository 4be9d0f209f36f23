//! `gauntlet nuances SPEC`: which technologies the spec uses (and the
//! words and lines that show it), the nuances that would be applied, and
//! which offline nuance checks would raise a concern. Nothing is run or
//! stored.

use super::{NuanceOptions, NuanceReport};
use crate::error::{Error, RunError};
use crate::render::Format;
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct NuancesArgs {
    /// The spec (Markdown). Reads standard input when absent or `-`.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Add a nuance file (repeatable); the project's NUANCES.md and the
    /// built-in files are always read.
    #[arg(long = "nuances", value_name = "PATH")]
    pub nuances: Vec<PathBuf>,

    /// Ignore every nuance file (shows nothing applies).
    #[arg(long)]
    pub no_nuances: bool,

    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Largest spec accepted, in bytes.
    #[arg(long, default_value_t = crate::input::DEFAULT_MAX_BYTES, value_name = "BYTES")]
    pub max_bytes: u64,
}

/// Text from a spec or a nuance file made safe for a terminal: control
/// characters (escape sequences included) become spaces.
pub fn plain(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[derive(Debug, Serialize)]
struct CheckOutcome {
    id: String,
    technology: String,
    adversary: String,
    /// Line ranges where the check would raise a concern.
    raises: Vec<(usize, usize)>,
}

#[derive(Debug, Serialize)]
struct Output {
    technologies: Vec<super::DetectedTechnology>,
    applied: Vec<super::Citation>,
    checks: Vec<CheckOutcome>,
    loaded_technologies: usize,
    loaded_nuances: usize,
}

/// Where a run looks for the project's NUANCES.md: the project root of the
/// working directory (the nearest ancestor holding `.git`).
pub fn project_root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    Some(crate::store::location::project_root(&cwd))
}

pub fn run(args: &NuancesArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let set = super::load(&NuanceOptions {
        disabled: args.no_nuances,
        extra: args.nuances.clone(),
        project_root: project_root(),
    })?;
    let loaded = crate::input::load(args.spec.as_deref(), args.max_bytes)?;
    let spec = &loaded.spec;
    let (report, checks, techs, count) = match &set {
        Some(set) => {
            let report = super::report(set, spec);
            let mut checks = Vec::new();
            for c in &set.checks {
                if !report
                    .technologies
                    .iter()
                    .any(|t| t.technology == c.citation.technology)
                {
                    continue;
                }
                let Ok(rule) = crate::rule::Rule::compile_embedded(c.def.clone()) else {
                    continue;
                };
                checks.push(CheckOutcome {
                    id: c.def.id.clone(),
                    technology: c.citation.technology.clone(),
                    adversary: c.adversary.clone(),
                    raises: crate::offline::attacker::attack_rule(spec, &rule)
                        .into_iter()
                        .filter_map(|r| r.lines)
                        .collect(),
                });
            }
            (report, checks, set.technologies.len(), set.nuance_count())
        }
        None => (NuanceReport::default(), Vec::new(), 0, 0),
    };
    let o = Output {
        technologies: report.technologies,
        applied: report.applied,
        checks,
        loaded_technologies: techs,
        loaded_nuances: count,
    };
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *out, &o)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out)),
        _ => write_text(&o, set.is_none(), out),
    };
    written.map_err(|source| RunError::Write {
        path: "<stdout>".to_string(),
        source,
    })?;
    Ok(crate::exit_code::PASS)
}

fn write_text(o: &Output, disabled: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if disabled {
        return writeln!(out, "Nuances are turned off (--no-nuances).");
    }
    writeln!(
        out,
        "Loaded {} nuances for {} technologies.",
        o.loaded_nuances, o.loaded_technologies
    )?;
    if o.technologies.is_empty() {
        return writeln!(
            out,
            "No technology with nuances detected: no divergence checklist, no nuance checks."
        );
    }
    for t in &o.technologies {
        writeln!(
            out,
            "\n{}: detected from {} (line{} {})",
            plain(&t.technology),
            plain(
                &t.matched
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            if t.lines.len() == 1 { "" } else { "s" },
            t.lines
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        for n in o.applied.iter().filter(|n| n.technology == t.technology) {
            writeln!(
                out,
                "  - {} [{}:{}]",
                plain(&n.nuance),
                plain(&n.source),
                n.line
            )?;
        }
        for c in o.checks.iter().filter(|c| c.technology == t.technology) {
            let what = if c.raises.is_empty() {
                "handled or not applicable: no concern".to_string()
            } else {
                format!(
                    "raises a concern ({}) at lines {}",
                    c.adversary,
                    c.raises
                        .iter()
                        .map(|(a, b)| if a == b {
                            a.to_string()
                        } else {
                            format!("{a}-{b}")
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            writeln!(out, "  check {}: {what}", c.id)?;
        }
    }
    Ok(())
}
