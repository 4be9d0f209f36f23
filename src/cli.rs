//! Raw command-line flags (clap derive). No logic: `config.rs` turns these
//! into a validated `Config`. The flags a single run shares with
//! `gauntlet review` are declared once, in `run_args::RunArgs`.

use crate::render::Format;
use crate::run_args::RunArgs;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  gauntlet examples/team-invites.md
  gauntlet --format json < spec.md > verdict.json
  gauntlet --adversaries paranoid_security,burned_oncall --final-boss spec.md
  gauntlet --fail-on high --format markdown spec.md > comment.md

Exit codes:
  0  pass: no concern requires revision at or above --fail-on
  1  revise: at least one concern requires revision at or above --fail-on,
     a deferred concern needs a decision (unless --allow-deferred), the final
     boss asks to refine or reconsider, or fresh eyes left a question open
  2  usage or input error (bad flags, no spec, a directory, binary or oversized input)
  3  the run could not complete (a role failed; the verdict is incomplete),
     or .adversarial-spec/ could not be read or written (see `gauntlet store check`)";

#[derive(Debug, Parser)]
#[command(
    name = "gauntlet",
    version,
    about = "Adversarial gauntlet for software specs: five adversary personas attack the spec, evaluators vote, adversaries rebut, and a verdict says what must be revised.",
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub args: SpecArgs,
}

impl Cli {
    /// The single-run flags in effect: the subcommand's when there is one.
    pub fn spec_args(&self) -> &SpecArgs {
        match &self.command {
            Some(Command::Explain(a)) => &a.args,
            Some(Command::Store(_))
            | Some(Command::History(_))
            | Some(Command::AdversaryStats(_))
            | Some(Command::Review(_))
            | Some(Command::Nuances(_))
            | Some(Command::Runs(_))
            | Some(Command::Completions(_))
            | Some(Command::Man(_))
            | None => &self.args,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Explain one concern (or one rule): which rule fired on which lines,
    /// the evidence each evaluator found, and why it ended as it did.
    Explain(Box<ExplainArgs>),
    /// Inspect and maintain the resolved-concerns store (.adversarial-spec/).
    Store(crate::store::args::StoreArgs),
    /// The timeline of a spec's concerns across runs (carry-forward history).
    History(crate::store::history_command::HistoryArgs),
    /// Adversary leaderboard from the cumulative statistics.
    AdversaryStats(crate::store::args::AdversaryStatsArgs),
    /// Review every spec in folders: progress, a report per spec, a summary.
    Review(Box<crate::review::ReviewArgs>),
    /// Show which technologies a spec uses, the nuances that would apply
    /// and which offline nuance checks would fire (nothing is run).
    Nuances(crate::nuance::command::NuancesArgs),
    /// Saved runs under .adversarial-spec/runs/: list them, show one.
    Runs(crate::runs::RunsArgs),
    /// Print a shell completion script (e.g. `gauntlet completions bash`).
    Completions(CompletionsArgs),
    /// Print the man page in roff (e.g. `gauntlet man > gauntlet.1`).
    Man(ManArgs),
}

/// `gauntlet completions SHELL`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `gauntlet man [COMMAND]`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// A subcommand (e.g. review) to print its own page, gauntlet-COMMAND(1).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// `gauntlet explain ID [SPEC]`: reruns the spec offline and explains ID.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// A concern id from a report (e.g. BURN-1a2b3c4d, or a unique prefix),
    /// or a rule id (e.g. missing-timeout) to see where it matched.
    #[arg(value_name = "ID")]
    pub id: String,

    #[command(flatten)]
    pub args: SpecArgs,
}

/// Flags for a gauntlet run on one spec: the spec, where its verdict goes,
/// and every flag a run shares with `gauntlet review` (`RunArgs`).
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// The spec (Markdown). Reads standard input when absent or `-`.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Output format on standard output.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Also write the run's stats JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,

    /// Also write the human report to this file: Markdown when PATH ends in
    /// .md or .markdown, else plain text. With --format json, one run gives
    /// JSON on stdout and the report for people.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,

    /// Print the plan (models per role, estimated calls and tokens) and call nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Print the suggested adversaries, complexity and models for the spec
    /// (text, or JSON with --format json) and run nothing.
    #[arg(long)]
    pub suggest: bool,

    #[command(flatten)]
    pub run: RunArgs,
}
