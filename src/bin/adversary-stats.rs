//! The `adversary-stats` binary: `gauntlet adversary-stats` on its own.

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match gauntlet::store::args::AdversaryStatsArgs::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                gauntlet::exit_code::USAGE
            } else {
                0
            });
        }
    };
    let stdout = std::io::stdout();
    // Adversary names and finds come from data files: show control
    // characters, never obey them (JSON escapes its own).
    let raw = args.format == gauntlet::store::args::StatsFormat::Json;
    let mut out = gauntlet::escape::TerminalSafe::new(stdout.lock(), false, raw);
    let result = gauntlet::store::commands::run_adversary_stats(&args, &mut out);
    let _ = out.flush();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let mut msg = e.to_string();
            let mut cur = std::error::Error::source(&e);
            while let Some(c) = cur {
                let next = c.to_string();
                if !msg.contains(&next) {
                    msg.push_str(": ");
                    msg.push_str(&next);
                }
                cur = c.source();
            }
            let _ = writeln!(
                std::io::stderr(),
                "adversary-stats: error: {}",
                gauntlet::escape::terminal(&msg)
            );
            ExitCode::from(e.exit_code())
        }
    }
}
