//! `gauntlet history SPEC`: the timeline of a spec's concerns from the
//! store's carry-forward history (when each was open, dismissed or
//! resolved, and which ones keep flipping). Read-only: it takes no lock
//! and writes nothing. Untrusted text (titles from specs or models) is
//! escaped on the way out.

use super::args::{ListFormat, LocationArgs};
use super::history::{self, Timeline};
use crate::carry_forward::{flips, is_contested};
use crate::error::{Error, RunError};
use crate::render::memory::quote;
use std::io::Write;
use std::path::PathBuf;

/// Show the timeline of a spec's concerns across runs.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryArgs {
    /// The spec (Markdown). Reads standard input when absent or `-`; a
    /// renamed or piped spec is found by its content.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    #[arg(long, value_enum, default_value = "text")]
    pub format: ListFormat,

    /// Largest spec accepted, in bytes.
    #[arg(long, default_value_t = crate::input::DEFAULT_MAX_BYTES, value_name = "BYTES")]
    pub max_bytes: u64,

    #[command(flatten)]
    pub location: LocationArgs,
}

fn io(e: std::io::Error) -> Error {
    RunError::Write {
        path: "<stdout>".to_string(),
        source: e,
    }
    .into()
}

pub fn run(args: &HistoryArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let opts = super::StoreOptions {
        dir: args.location.store_dir.clone(),
        now: None,
        report: false,
    };
    let paths = opts.paths()?;
    let loaded = crate::input::load(args.spec.as_deref(), args.max_bytes)?;
    let file = history::load(&history::path(&paths))?;
    let res = history::resolve(&file, &loaded.spec);
    let mut timelines: Vec<&Timeline> = file
        .concerns
        .iter()
        .filter(|t| res.record.is_some() && t.spec == res.key)
        .collect();
    // Contested first, then the most recently changed, then by id.
    timelines.sort_by(|a, b| {
        is_contested(&b.events)
            .cmp(&is_contested(&a.events))
            .then(
                b.events
                    .last()
                    .map(|e| e.at)
                    .cmp(&a.events.last().map(|e| e.at)),
            )
            .then(a.id.cmp(&b.id))
    });
    let record = res.record.map(|i| &file.specs[i]);
    if args.format == ListFormat::Json {
        let v = serde_json::json!({
            "spec_key": res.key,
            "matched_by": res.matched_by,
            "known": record.is_some(),
            "runs": record.map(|r| r.runs).unwrap_or(0),
            "paths": record.map(|r| r.paths.clone()).unwrap_or_default(),
            "concerns": timelines.iter().map(|t| serde_json::json!({
                "id": t.id,
                "fingerprint": t.fingerprint,
                "adversary": t.adversary,
                "title": t.title,
                "severity": t.severity,
                "flips": flips(&t.events),
                "contested": is_contested(&t.events),
                "events": t.events,
            })).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &v)
            .map_err(std::io::Error::from)
            .map_err(io)?;
        writeln!(out).map_err(io)?;
        return Ok(crate::exit_code::PASS);
    }
    let Some(record) = record else {
        writeln!(
            out,
            "No history for this spec yet (it would be recorded as `{}`).",
            quote(&res.key)
        )
        .map_err(io)?;
        return Ok(crate::exit_code::PASS);
    };
    writeln!(
        out,
        "History of `{}` ({} run(s), recognised by {}; seen as {})",
        quote(&record.key),
        record.runs,
        res.matched_by.as_str(),
        record
            .paths
            .iter()
            .map(|p| quote(p))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .map_err(io)?;
    if timelines.is_empty() {
        writeln!(out, "  No concern has required revision or been dismissed.").map_err(io)?;
    }
    for t in timelines {
        let flag = if is_contested(&t.events) {
            format!(" CONTESTED ({} flips)", flips(&t.events))
        } else {
            String::new()
        };
        writeln!(
            out,
            "  {} [{}] ({}) {}{flag}",
            t.id,
            quote(&t.adversary),
            t.severity,
            quote(&t.title)
        )
        .map_err(io)?;
        let line = t
            .events
            .iter()
            .map(|e| format!("{} {}", e.at.format("%Y-%m-%d"), e.outcome.as_str()))
            .collect::<Vec<_>>()
            .join(" → ");
        writeln!(out, "      {line}").map_err(io)?;
    }
    Ok(crate::exit_code::PASS)
}
