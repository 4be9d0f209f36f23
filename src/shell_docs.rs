//! `gauntlet completions SHELL` and `gauntlet man [COMMAND]`: shell
//! completion scripts (`clap_complete`) and roff man pages
//! (`clap_mangen`), generated from the same clap definitions as `--help`,
//! so they never drift from the flags. Output goes to the given writer;
//! nothing is installed.

use crate::cli::Cli;
use crate::error::{Error, RunError, UsageError};
use clap::CommandFactory;
use std::io::Write;

const BIN: &str = "gauntlet";

pub fn completions(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<u8, Error> {
    let mut cmd = Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut bytes);
    emit(&bytes, out)
}

/// The page of `gauntlet`, or of one subcommand as `gauntlet-COMMAND(1)`.
pub fn man(command: Option<&str>, out: &mut dyn Write) -> Result<u8, Error> {
    let top = Cli::command();
    let cmd = match command {
        None => top,
        Some(name) => {
            let known: Vec<String> = top
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let sub = top.find_subcommand(name).cloned().ok_or_else(|| {
                UsageError::Invalid(format!("no command `{name}` (known: {})", known.join(", ")))
            })?;
            let page = format!("{BIN}-{}", sub.get_name());
            sub.name(page).version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut bytes = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut bytes)
        .map_err(|source| RunError::Write {
            path: "<man page>".to_string(),
            source,
        })?;
    emit(&bytes, out)
}

fn emit(bytes: &[u8], out: &mut dyn Write) -> Result<u8, Error> {
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|source| RunError::Write {
            path: "<stdout>".to_string(),
            source,
        })?;
    Ok(crate::exit_code::PASS)
}
