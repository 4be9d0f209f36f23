//! The `gauntlet` binary: parse flags, call the library, map to an exit code.

use clap::Parser;
use gauntlet::render::Format;
use gauntlet::run_args::ColorArg;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

// mimalloc: the offline run allocates many small, short-lived buffers (regex
// compilation, per-line matching); glibc malloc spent ~12% of a large spec's
// run in malloc and free.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match gauntlet::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                gauntlet::exit_code::USAGE
            } else {
                0
            });
        }
    };
    // `review` draws its own progress bar.
    let own_progress = matches!(cli.command, Some(gauntlet::cli::Command::Review(_)));
    let args = cli.spec_args();
    let progress = gauntlet::progress::Progress::new(args.run.quiet || own_progress);
    let color = match args.run.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
                && args.format == Format::Text
        }
    };
    // Human-readable output shows control characters from specs and file
    // names instead of obeying them; JSON and SARIF escape their own.
    let color_arg = match &cli.command {
        Some(gauntlet::cli::Command::Review(r)) => r.run.color,
        _ => args.run.color,
    };
    let keep_sgr = match color_arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let stdout = std::io::stdout();
    let mut out =
        gauntlet::escape::TerminalSafe::new(stdout.lock(), keep_sgr, machine_output(&cli));
    let result = gauntlet::app::run(cli, &mut out, &|e| progress.handle(e), color);
    progress.finish();
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if is_broken_pipe(&e) {
                // The verdict is unknown here: 141 (128 + SIGPIPE), never 0.
                return ExitCode::from(gauntlet::exit_code::BROKEN_PIPE);
            }
            let _ = writeln!(
                std::io::stderr(),
                "gauntlet: error: {}",
                gauntlet::escape::terminal(&chain(&e))
            );
            ExitCode::from(e.exit_code())
        }
    }
}

/// Whether stdout gets JSON or SARIF, whose encoders escape control
/// characters themselves (passed through byte for byte).
fn machine_output(cli: &gauntlet::cli::Cli) -> bool {
    use gauntlet::cli::Command;
    use gauntlet::review::SummaryFormat;
    use gauntlet::runs::RunsCommand;
    use gauntlet::store::args::{ListFormat, StatsFormat, StoreCommand};
    match &cli.command {
        None => matches!(cli.spec_args().format, Format::Json | Format::Sarif),
        Some(Command::Review(r)) => matches!(r.format, SummaryFormat::Json | SummaryFormat::Sarif),
        Some(Command::AdversaryStats(a)) => a.format == StatsFormat::Json,
        Some(Command::Store(s)) => matches!(
            s.command,
            StoreCommand::List {
                format: ListFormat::Json
            } | StoreCommand::Show {
                format: ListFormat::Json,
                ..
            }
        ),
        Some(Command::History(h)) => h.format == ListFormat::Json,
        Some(Command::Runs(r)) => matches!(
            r.command,
            RunsCommand::List {
                format: ListFormat::Json
            } | RunsCommand::Show {
                format: Format::Json | Format::Sarif,
                ..
            }
        ),
        // Generated scripts and roff, from our own clap definitions.
        Some(Command::Completions(_)) | Some(Command::Man(_)) => true,
        Some(Command::Explain(_)) => false,
        Some(Command::Nuances(n)) => n.format == Format::Json,
    }
}

/// The error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let next = c.to_string();
        if !s.contains(&next) {
            s.push_str(": ");
            s.push_str(&next);
        }
        cur = c.source();
    }
    s
}

fn is_broken_pipe(e: &gauntlet::error::Error) -> bool {
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return true;
        }
        cur = c.source();
    }
    false
}
