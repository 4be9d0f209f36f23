//! `gauntlet review PATH...`: review every spec under some folders with the
//! same pipeline and options as a single run, show progress, write a report
//! per spec under `--out`, and print a summary (table, JSON, Markdown or one
//! SARIF log). Discovery is in `discover`, scheduling in `batch`, the
//! `--out` folder in `reports`, the summary in `summary`, progress in
//! `progress`. Nothing here knows how a spec is judged: that is `pipeline`.

pub mod args;
pub mod batch;
pub mod changed;
pub mod discover;
pub mod progress;
pub mod reports;
pub mod summary;

pub use args::{ReportFormat, ReviewArgs, SummaryFormat};

use crate::config::Config;
use crate::error::{Error, RunError, UsageError};
use crate::render::Style;
use crate::render::sarif::Failure;
use crate::run_args::ColorArg;
use batch::{Batch, Mode};
use discover::Skip;
use progress::{BatchEvent, BatchProgress};
use reports::ReportWriter;
use std::io::{IsTerminal, Write};
use std::time::Instant;
use summary::{Row, Summary};

/// Specs in flight at once when roles call model providers.
pub const DEFAULT_CONCURRENT_SPECS: usize = 4;

/// Run `gauntlet review`; returns the exit code.
pub fn run(args: &ReviewArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let config = Config::from_args(&args.run)?;
    if let Some(o) = &args.out {
        reports::check_out(o, &args.paths)?;
        // Temp files of a `review --out` that was killed mid-write.
        crate::fsutil::remove_dead_temp_files(o);
    }
    let mut found = discover::discover(&args.paths, &args.glob, args.out.as_deref())?;
    // `--changed-since`: only the specs changed since that revision; none
    // changed is a pass with an empty summary, not an error.
    let mut unchanged = 0;
    if let Some(reference) = &args.changed_since {
        let cwd = std::env::current_dir().map_err(|e| {
            UsageError::Invalid(format!("--changed-since: no working directory: {e}"))
        })?;
        let changed = changed::changed_since(reference, &cwd)?;
        let before = found.targets.len();
        found
            .targets
            .retain(|t| std::fs::canonicalize(&t.path).is_ok_and(|p| changed.contains(&p)));
        unchanged = before - found.targets.len();
    }
    let unreadable = found
        .skipped
        .iter()
        .any(|s| matches!(s, Skip::Unreadable { .. }));
    if found.targets.is_empty() && !unreadable && unchanged == 0 {
        let looked_for = if args.glob.is_empty() {
            discover::DEFAULT_GLOBS.join(", ")
        } else {
            args.glob.join(", ")
        };
        return Err(UsageError::Invalid(format!(
            "no spec found in {} (looked for {looked_for}; change with --glob)",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let gauntlet = config.gauntlet()?;
    let persistence = config.persistence(args.run.no_store)?;
    let progress = BatchProgress::new(args.run.quiet, found.targets.len());
    let mut skipped = Vec::new();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for s in &found.skipped {
        match s {
            Skip::Outside { path, root } => {
                progress.handle(BatchEvent::Warning(format!(
                    "skipped {path}: a symlink leading out of {root}"
                )));
                skipped.push(path.clone());
            }
            Skip::Unreadable { path, message } => {
                rows.push(Row::failed(path.clone(), message.clone(), 0));
                failures.push(Failure {
                    path: path.clone(),
                    message: message.clone(),
                });
            }
        }
    }
    let writer = args
        .out
        .as_deref()
        .map(|o| ReportWriter::new(o, &args.report_formats, &found.targets));
    let sarif_out = writer
        .as_ref()
        .is_some_and(|w| w.formats().contains(&ReportFormat::Sarif));
    let keep_verdicts = sarif_out || args.format == SummaryFormat::Sarif;
    let mode = if config.is_offline() {
        Mode::Parallel {
            jobs: args.jobs.unwrap_or(0) as usize,
        }
    } else {
        Mode::Concurrent {
            jobs: args
                .jobs
                .map(|j| j as usize)
                .unwrap_or(DEFAULT_CONCURRENT_SPECS),
        }
    };
    let started = Instant::now();
    let batch = Batch {
        gauntlet: &gauntlet,
        persistence: persistence.as_ref(),
        catalog: &config.catalog,
        max_bytes: args.run.max_bytes,
        reports: writer.as_ref(),
        keep_verdicts,
        events: &|e| progress.handle(e),
    };
    let reviewed = batch.run(&found.targets, mode);
    progress.finish();
    let mut verdicts = Vec::new();
    for r in reviewed {
        if r.row.verdict == summary::RowVerdict::Error {
            failures.push(Failure {
                path: r.row.spec.clone(),
                message: r.row.error.clone().unwrap_or_default(),
            });
        }
        rows.push(r.row);
        verdicts.extend(r.verdict);
    }
    let summary = Summary::new(
        rows,
        config.options.fail_on,
        started.elapsed().as_millis() as u64,
        skipped,
    );
    let sarif = keep_verdicts.then(|| {
        let refs: Vec<&crate::verdict::Verdict> = verdicts.iter().collect();
        crate::render::sarif::log(&refs, &failures, &config.catalog)
    });

    // Summary files first, so a closed stdout does not lose them.
    let mut write_error = None;
    if let Some(w) = &writer {
        let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
        let mut json = Vec::new();
        let mut md = Vec::new();
        let rendered = summary::write_json(&summary, &mut json)
            .and_then(|_| summary::write_markdown(&summary, &mut md));
        if let Err(source) = rendered {
            return Err(RunError::Write {
                path: "summary".to_string(),
                source,
            }
            .into());
        }
        files.push(("summary.json", json));
        files.push(("summary.md", md));
        if let (true, Some(log)) = (sarif_out, &sarif) {
            let mut bytes = Vec::new();
            let _ = crate::render::sarif::write_log(log, &mut bytes);
            files.push(("summary.sarif", bytes));
        }
        for (name, bytes) in files {
            if let Err(e) = w.write_summary(name, &bytes) {
                write_error.get_or_insert(e);
            }
        }
    }

    let color = match args.run.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
                && args.format == SummaryFormat::Text
        }
    };
    let printed = match (args.format, &sarif) {
        (SummaryFormat::Text, _) => summary::write_text(&summary, out, Style { color }),
        (SummaryFormat::Json, _) => summary::write_json(&summary, out),
        (SummaryFormat::Markdown, _) => summary::write_markdown(&summary, out),
        (SummaryFormat::Sarif, Some(log)) => crate::render::sarif::write_log(log, out),
        (SummaryFormat::Sarif, None) => Ok(()),
    };
    match printed {
        // A closed stdout still exits with the batch's code (never 0 for a
        // failing spec).
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.map_err(|source| RunError::Write {
            path: "<stdout>".to_string(),
            source,
        })?,
    }
    if let Some(e) = write_error {
        return Err(RunError::Incomplete(e).into());
    }
    Ok(summary.exit_code)
}
