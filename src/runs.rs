//! `gauntlet runs list` and `gauntlet runs show ID`: the run history saved
//! under `.adversarial-spec/runs/` (`store::run_history`). `show` renders a
//! saved verdict with the same renderers as a live run, or lists a model
//! run's saved calls. Read only: nothing here writes.

use crate::error::{Error, RunError, UsageError};
use crate::render::{self, Format, Style};
use crate::store::StorePaths;
use crate::store::args::{ListFormat, LocationArgs};
use crate::store::run_history::{self, Shown};
use clap::{Args, Subcommand};
use std::io::Write;

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,

    #[command(flatten)]
    pub location: LocationArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum RunsCommand {
    /// List saved runs, newest first: verdict records and model-call folders.
    List {
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
    },
    /// Show one run (id or unique prefix): its report, or its saved model calls.
    Show {
        #[arg(value_name = "ID")]
        id: String,
        /// Output format of a run's report (json is the saved verdict).
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

pub fn run(args: &RunsArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| UsageError::Invalid(format!("no working directory: {e}")))?;
    let paths = StorePaths::resolve(args.location.store_dir.as_deref(), &cwd);
    let written = match &args.command {
        RunsCommand::List { format } => {
            let entries = run_history::list(&paths.dir);
            match format {
                ListFormat::Json => serde_json::to_writer_pretty(&mut *out, &entries)
                    .map_err(std::io::Error::other)
                    .and_then(|_| writeln!(out)),
                ListFormat::Text => write_list(&entries, &paths, out),
            }
        }
        RunsCommand::Show { id, format } => {
            let (id, shown) = run_history::show(&paths.dir, id).map_err(UsageError::Invalid)?;
            match shown {
                Shown::Run(f) => match format {
                    Format::Json => render::json::write(&f.verdict, out),
                    Format::Markdown => render::markdown::write(&f.verdict, out),
                    Format::Sarif => {
                        let catalog = crate::catalog::Catalog::load(None, None)?;
                        render::sarif::write(&f.verdict, &catalog, out)
                    }
                    Format::Text => writeln!(out, "Run {id} at {}\n", f.at.to_rfc3339())
                        .and_then(|_| render::text::write(&f.verdict, out, Style { color: false })),
                },
                Shown::Calls(calls) => write_calls(&id, &calls, out),
            }
        }
    };
    written.map_err(|source| RunError::Write {
        path: "<stdout>".to_string(),
        source,
    })?;
    Ok(crate::exit_code::PASS)
}

/// Control characters in untrusted text (spec paths, model names) shown
/// escaped, so a file name cannot move the terminal's cursor.
fn clean(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn write_list(
    entries: &[run_history::RunEntry],
    paths: &StorePaths,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if entries.is_empty() {
        return writeln!(
            out,
            "No saved runs in {}.",
            clean(&run_history::runs_dir(&paths.dir).display().to_string())
        );
    }
    writeln!(
        out,
        "{:<28} {:<20} {:<10} {:>4} {:>6} {:>4} {:>9}  SPEC / MODELS",
        "ID", "WHEN (UTC)", "VERDICT", "HIGH", "MEDIUM", "LOW", "DISMISSED"
    )?;
    for e in entries {
        match (&e.run, &e.error) {
            (Some(r), _) => writeln!(
                out,
                "{:<28} {:<20} {:<10} {:>4} {:>6} {:>4} {:>9}  {}{}",
                clean(&e.id),
                r.at.format("%Y-%m-%d %H:%M:%S"),
                r.verdict,
                r.high,
                r.medium,
                r.low,
                r.dismissed,
                clean(r.spec.as_deref().unwrap_or("stdin")),
                if r.models
                    .iter()
                    .all(|m| m == "offline" || m.starts_with("offline/"))
                {
                    String::new()
                } else {
                    format!(" ({})", clean(&r.models.join(", ")))
                }
            )?,
            (None, Some(err)) => writeln!(out, "{:<28} error: {}", clean(&e.id), clean(err))?,
            (None, None) => writeln!(out, "{:<28} {} saved model call(s)", clean(&e.id), e.calls)?,
        }
    }
    Ok(())
}

fn write_calls(id: &str, calls: &[serde_json::Value], out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "Run {} : {} saved model call(s)",
        clean(id),
        calls.len()
    )?;
    for c in calls {
        let s = |k: &str| c[k].as_str().map(clean).unwrap_or_default();
        let tokens = &c["response"]["usage"];
        writeln!(
            out,
            "  {:>4}  {:<28} {:<32} {:>6} ms  in {} / out {} tokens{}",
            c["seq"].as_u64().unwrap_or(0),
            s("label"),
            s("model"),
            c["elapsed_ms"].as_u64().unwrap_or(0),
            tokens["input_tokens"].as_u64().unwrap_or(0),
            tokens["output_tokens"].as_u64().unwrap_or(0),
            c["error"]
                .as_str()
                .map(|e| format!("  error: {}", clean(e)))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}
