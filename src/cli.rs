//! Raw command-line flags (clap derive). No logic: `config.rs` turns these
//! into a validated `Config`.

use crate::concern::Severity;
use crate::render::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  gauntlet examples/payment-webhooks.md
  gauntlet --format json < spec.md > verdict.json
  gauntlet --adversaries paranoid_security,burned_oncall --final-boss spec.md
  gauntlet --fail-on high --format markdown spec.md > comment.md

Exit codes:
  0  pass: no concern requires revision at or above --fail-on
  1  revise: at least one concern requires revision at or above --fail-on
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
    pub run: RunArgs,
}

impl Cli {
    /// The run flags in effect: the subcommand's when there is one.
    pub fn run_args(&self) -> &RunArgs {
        match &self.command {
            Some(Command::Explain(a)) => &a.run,
            Some(Command::Store(_))
            | Some(Command::AdversaryStats(_))
            | Some(Command::Review(_))
            | Some(Command::Nuances(_))
            | None => &self.run,
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
    /// Adversary leaderboard from the cumulative statistics.
    AdversaryStats(crate::store::args::AdversaryStatsArgs),
    /// Review every spec in folders: progress, a report per spec, a summary.
    Review(Box<crate::review::ReviewArgs>),
    /// Show which technologies a spec uses, the nuances that would apply
    /// and which offline nuance checks would fire (nothing is run).
    Nuances(crate::nuance::command::NuancesArgs),
}

/// `gauntlet explain ID [SPEC]`: reruns the spec offline and explains ID.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// A concern id from a report (e.g. BURN-1a2b3c4d, or a unique prefix),
    /// or a rule id (e.g. missing-timeout) to see where it matched.
    #[arg(value_name = "ID")]
    pub id: String,

    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    High,
    Medium,
    Low,
}

impl From<SeverityArg> for Severity {
    fn from(s: SeverityArg) -> Severity {
        match s {
            SeverityArg::High => Severity::High,
            SeverityArg::Medium => Severity::Medium,
            SeverityArg::Low => Severity::Low,
        }
    }
}

/// `--complexity`: how much gauntlet a spec gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ComplexityArg {
    /// Read the spec's signals and pick a level (said on stderr).
    #[default]
    Auto,
    /// The adversaries the spec is about, one evaluator, no rebuttal.
    Quick,
    /// The full gauntlet.
    Standard,
    /// The full gauntlet plus the final boss.
    Thorough,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

/// Flags for a gauntlet run on one spec.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The spec (Markdown). Reads standard input when absent or `-`.
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,

    /// Adversaries to run, comma separated (default: all five).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub adversaries: Vec<String>,

    /// Concerns per evaluation batch.
    #[arg(long, default_value_t = 15, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub batch_size: u32,

    /// Skip the rebuttal phase (dismissals stand unchallenged).
    #[arg(long)]
    pub no_rebuttals: bool,

    /// Run the final boss UX review after the technical phases.
    #[arg(long)]
    pub final_boss: bool,

    /// Output format on standard output.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,

    /// Also write the run's stats JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,

    /// Lowest severity that makes the verdict `revise` (exit 1).
    #[arg(long, value_enum, default_value = "low")]
    pub fail_on: SeverityArg,

    /// Do not read or write the resolved-concerns store or the cumulative stats.
    #[arg(long)]
    pub no_store: bool,

    /// Store folder (default: .adversarial-spec/ in the project root, the
    /// nearest ancestor holding .git).
    #[arg(long, value_name = "DIR", env = "GAUNTLET_STORE_DIR")]
    pub store_dir: Option<PathBuf>,

    /// Fix the clock for confidence decay and timestamps (RFC 3339).
    #[arg(long, value_name = "TIME", env = "GAUNTLET_NOW")]
    pub now: Option<String>,

    /// Do not write the Markdown review report to .adversarial-spec/reviews/.
    #[arg(long)]
    pub no_report: bool,

    /// No progress on standard error.
    #[arg(long, short)]
    pub quiet: bool,

    /// Largest spec accepted, in bytes.
    #[arg(long, default_value_t = crate::input::DEFAULT_MAX_BYTES, value_name = "BYTES")]
    pub max_bytes: u64,

    /// Folder of persona files (*.toml) that add to or override the built-ins.
    #[arg(long, value_name = "DIR")]
    pub personas_dir: Option<PathBuf>,

    /// Folder of protocol files (*.toml) that add to or override the built-ins.
    #[arg(long, value_name = "DIR")]
    pub protocols_dir: Option<PathBuf>,

    /// When to color the text report (NO_COLOR is respected in auto).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,

    /// Model for attackers and rebuttals: PROVIDER/MODEL (openai, anthropic,
    /// gemini, openrouter, ollama, openai-compatible, codex, gemini-cli,
    /// claude-cli) or `offline`. Default: auto (see docs), else offline.
    #[arg(long, value_name = "MODEL")]
    pub attack_model: Option<String>,

    /// Models for evaluation, comma separated; the first also adjudicates.
    #[arg(long, value_delimiter = ',', value_name = "MODELS")]
    pub eval_models: Vec<String>,

    /// Model for the final boss review (implies --final-boss).
    #[arg(long, value_name = "MODEL")]
    pub final_boss_model: Option<String>,

    /// Base URL for openai-compatible and ollama models.
    #[arg(long, value_name = "URL")]
    pub api_base: Option<String>,

    /// Seconds per model call before it times out [default: 120].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Concurrent calls per model provider [default: 8].
    #[arg(long, value_name = "N")]
    pub max_concurrency: Option<u32>,

    /// Seconds for the whole run; calls still pending then fail (verdict incomplete).
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<u64>,

    /// Print the plan (models per role, estimated calls and tokens) and call nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Add a technology nuance file (repeatable); NUANCES.md at the project
    /// root and the built-in nuances are read too.
    #[arg(long = "nuances", value_name = "PATH")]
    pub nuances: Vec<PathBuf>,

    /// Do not read any nuance file: no divergence checklist, no nuance checks.
    #[arg(long)]
    pub no_nuances: bool,

    /// How much gauntlet the spec gets: auto reads its size and risk signals.
    #[arg(long, value_enum, default_value = "auto")]
    pub complexity: ComplexityArg,

    /// Print the suggested adversaries, complexity and models for the spec
    /// (text, or JSON with --format json) and run nothing.
    #[arg(long)]
    pub suggest: bool,

    /// Use the offline engine in every role, whatever is installed or configured.
    #[arg(long, env = "GAUNTLET_OFFLINE", value_parser = clap::builder::BoolishValueParser::new(), conflicts_with_all = ["attack_model", "eval_models", "final_boss_model"])]
    pub offline: bool,
}
