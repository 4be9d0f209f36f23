//! The flags every gauntlet run takes, declared once: `gauntlet [SPEC]`
//! (`cli::SpecArgs`) and `gauntlet review` (`review::ReviewArgs`) both
//! include `RunArgs` with `#[command(flatten)]`, so a flag added here works
//! in both commands and `Config::from_args` sees the same struct from each.
//!
//! Raw flags only (what the user typed): `config.rs` resolves them. This
//! module imports neither `cli` nor `review`, so those two do not depend on
//! each other through it. A command that needs different help for one of
//! these flags changes it with `#[command(mut_arg(...))]`, never a copy.

use crate::concern::Severity;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

/// Flags shared by a run on one spec and a batch review.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct RunArgs {
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

    /// Let the repository's .adversarial-spec/config.toml set api_base (off:
    /// a repository may pick models, not where specs are sent).
    #[arg(long, env = "GAUNTLET_ALLOW_CONFIG_API_BASE", value_parser = clap::builder::BoolishValueParser::new())]
    pub allow_config_api_base: bool,

    /// Seconds per model call before it times out [default: 120].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Concurrent calls per model provider [default: 8].
    #[arg(long, value_name = "N")]
    pub max_concurrency: Option<u32>,

    /// Seconds for the whole run; calls still pending then fail (verdict incomplete).
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<u64>,

    /// Add a technology nuance file (repeatable); NUANCES.md at the project
    /// root and the built-in nuances are read too.
    #[arg(long = "nuances", value_name = "PATH")]
    pub nuances: Vec<PathBuf>,

    /// Do not read any nuance file: no divergence checklist, no nuance checks.
    #[arg(long)]
    pub no_nuances: bool,

    /// How much gauntlet a spec gets: auto reads its size and risk signals.
    #[arg(long, value_enum, default_value = "auto")]
    pub complexity: crate::triage::ComplexityArg,

    /// Let concerns the evaluators deferred pass (by default each one fails
    /// the run with a "needs a decision" line).
    #[arg(long)]
    pub allow_deferred: bool,

    /// Run the fresh-eyes gate last: a reviewer that sees only the spec and
    /// asks clarifying questions; any open question makes the run revise.
    #[arg(long)]
    pub fresh_eyes: bool,

    /// Debate rounds: round N+1 re-attacks with round N's surviving concerns
    /// and the answers from --responses; stops on convergence or
    /// oscillation. Capped at 3.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub rounds: u8,

    /// The author's answers per concern id (agree/disagree, reason, spec
    /// edits), JSON; see docs/memory.md.
    #[arg(long, value_name = "FILE")]
    pub responses: Option<PathBuf>,

    /// Use the offline engine in every role, whatever is installed or configured.
    #[arg(long, env = "GAUNTLET_OFFLINE", value_parser = clap::builder::BoolishValueParser::new())]
    pub offline: bool,
}
