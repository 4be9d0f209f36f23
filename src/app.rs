//! What the `gauntlet` binary does for each command, as library functions
//! over writers and an event sink, so tests and the binary share them.

use crate::cli::{Cli, Command, SpecArgs};
use crate::config::Config;
use crate::error::{Error, RunError};
use crate::event::Event;
use crate::render::{self, Format, Style};
use std::io::Write;

/// Run the command line; returns the exit code.
pub fn run(
    cli: Cli,
    out: &mut dyn Write,
    events: &(dyn Fn(Event) + Send + Sync),
    color: bool,
) -> Result<u8, Error> {
    match cli.command {
        None => run_spec(&cli.args, out, events, color),
        Some(Command::Explain(args)) => crate::explain::run(&args.id, &args.args, out, events),
        Some(Command::Store(args)) => crate::store::commands::run_store(&args, out),
        Some(Command::History(args)) => crate::store::history_command::run(&args, out),
        Some(Command::AdversaryStats(args)) => {
            crate::store::commands::run_adversary_stats(&args, out)
        }
        Some(Command::Review(args)) => crate::review::run(&args, out),
        Some(Command::Nuances(args)) => crate::nuance::command::run(&args, out),
        Some(Command::Runs(args)) => crate::runs::run(&args, out),
        Some(Command::Completions(args)) => crate::shell_docs::completions(args.shell, out),
        Some(Command::Man(args)) => crate::shell_docs::man(args.command.as_deref(), out),
    }
}

pub fn run_spec(
    args: &SpecArgs,
    out: &mut dyn Write,
    events: &(dyn Fn(Event) + Send + Sync),
    color: bool,
) -> Result<u8, Error> {
    // Loading the packs and reading a spec file are independent: side by
    // side, with errors reported in the order a user reads the flags. Stdin
    // and special files are read after, as before: they may block, and a
    // bad flag must not wait for them.
    let load = || crate::input::load(args.spec.as_deref(), args.run.max_bytes);
    let regular_file = args
        .spec
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"))
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.is_file());
    let (config, early) = if regular_file {
        let (c, l) = rayon::join(|| Config::from_args(&args.run), load);
        (c, Some(l))
    } else {
        (Config::from_args(&args.run), None)
    };
    let config = config?;
    if let Some(path) = &args.report {
        crate::output_file::check(path)
            .map_err(|e| crate::error::UsageError::Invalid(format!("--report: {e}")))?;
    }
    let loaded = early.unwrap_or_else(load)?;
    for w in &loaded.warnings {
        events(Event::Warning(w.clone()));
    }
    // Issue 10: the complexity level for this spec (and --suggest).
    let assessment = crate::triage::assess_run(&config.options, &loaded.spec);
    if args.suggest {
        return crate::suggest::run(&config, &assessment, &loaded.spec, args.format, out);
    }
    events(Event::Note(crate::triage::describe(&assessment)));
    if args.dry_run {
        for n in &config.models.settings.notes {
            events(Event::Note(n.clone()));
        }
        let plan = crate::provider::plan::Plan::estimate(
            &config.models.settings,
            &config.catalog,
            &crate::triage::options_for(&config.options, &assessment, &loaded.spec),
            config.final_boss || assessment.level == crate::triage::Level::Thorough,
            &loaded.spec,
        );
        plan.write(&config.models.settings, out)
            .and_then(|_| {
                crate::level_cost::write(
                    &crate::level_cost::estimate(&config, &loaded.spec),
                    &assessment,
                    out,
                )
            })
            .map_err(|source| RunError::Write {
                path: "<stdout>".to_string(),
                source,
            })?;
        return Ok(crate::exit_code::PASS);
    }
    let gauntlet = crate::triage::apply(&config.gauntlet()?, &assessment, &loaded.spec);
    if assessment.level == crate::triage::Level::Thorough && gauntlet.final_boss.is_none() {
        events(Event::Warning(
            "complexity thorough: the final boss model cannot be used (see --final-boss-model); running without it"
                .to_string(),
        ));
    }
    let persistence = config.persistence(args.run.no_store)?;
    let mut verdict = if config.is_offline() {
        gauntlet.run_blocking(&loaded.spec, persistence.filter(), events)
    } else {
        config
            .models
            .run(&gauntlet, &loaded.spec, persistence.filter(), events)?
    };
    verdict.warnings.splice(0..0, loaded.warnings);
    for note in persistence.remember(&loaded.spec, &mut verdict)? {
        events(Event::Note(note));
    }
    for note in persistence.record(&loaded.spec, &verdict)? {
        events(Event::Note(note));
    }
    if let Some(path) = &args.stats_json {
        let json = serde_json::to_vec_pretty(&verdict.stats).expect("stats serialize");
        crate::fsutil::write_user_file(path, &json).map_err(|source| RunError::Write {
            path: path.display().to_string(),
            source,
        })?;
    }
    if let Some(path) = &args.report {
        write_report(&verdict, path)?;
    }
    let written = match args.format {
        Format::Json => render::json::write(&verdict, out),
        Format::Markdown => render::markdown::write(&verdict, out),
        Format::Sarif => render::sarif::write(&verdict, &config.catalog, out),
        Format::Text => render::text::write(&verdict, out, Style { color }),
    };
    match written {
        // A closed stdout (`gauntlet spec.md | head`) still exits with the
        // verdict: we are a gate, never 0 for a spec that fails.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.map_err(|source| RunError::Write {
            path: "<stdout>".to_string(),
            source,
        })?,
    }
    Ok(verdict.verdict.exit_code())
}

/// `--report PATH`: the human report, Markdown for `.md` / `.markdown`,
/// else plain text (never colored: it is a file).
fn write_report(verdict: &crate::verdict::Verdict, path: &std::path::Path) -> Result<(), Error> {
    let markdown = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
    let mut bytes = Vec::new();
    let rendered = if markdown {
        render::markdown::write(verdict, &mut bytes)
    } else {
        render::text::write(verdict, &mut bytes, Style { color: false })
    };
    rendered
        .and_then(|_| crate::output_file::write(path, &bytes))
        .map_err(|source| {
            RunError::Write {
                path: path.display().to_string(),
                source,
            }
            .into()
        })
}
