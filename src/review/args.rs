//! Raw flags of `gauntlet review` (clap derive). Kept beside the feature
//! rather than in `cli.rs` so that file only gains one enum variant. No
//! logic beyond handing the run flags to `Config` through a `RunArgs`.

use crate::cli::{ColorArg, RunArgs, SeverityArg};
use clap::{Args, Parser, ValueEnum};
use std::path::PathBuf;

pub const AFTER_HELP: &str = "\
Examples:
  gauntlet review docs/design
  gauntlet review --out gauntlet-reports --report-formats json,markdown,sarif rfcs/ specs/
  gauntlet review --format json --fail-on high docs/ > summary.json

Exit codes:
  0  every spec passed
  1  at least one spec needs revision
  2  usage error (bad flags, a PATH that does not exist, no spec found)
  3  at least one spec could not be reviewed (unreadable, binary, too large,
     empty, an incomplete run, a report that could not be written); wins over 1";

/// Formats of the per-spec reports written under `--out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum ReportFormat {
    Json,
    Markdown,
    Sarif,
}

/// What `gauntlet review` prints on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// A table, worst spec first, then totals.
    Text,
    /// The summary as one JSON object (same as `summary.json`).
    Json,
    /// The summary as Markdown (same as `summary.md`).
    Markdown,
    /// One SARIF log with every spec's results (same as `summary.sarif`).
    Sarif,
}

/// Flags for `gauntlet review`.
#[derive(Debug, Clone, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ReviewArgs {
    /// Folders (searched recursively) or spec files.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    /// Which files are specs, as a glob (repeatable; `!` excludes). Default: *.md and *.markdown.
    #[arg(long, short = 'g', value_name = "PATTERN")]
    pub glob: Vec<String>,

    /// Write one report per spec here, mirroring the input tree, plus summary files.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Formats of the per-spec reports under --out, comma separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "json,markdown",
        value_name = "FORMATS"
    )]
    pub report_formats: Vec<ReportFormat>,

    /// Output format of the summary on standard output.
    #[arg(long, value_enum, default_value = "text")]
    pub format: SummaryFormat,

    /// Specs reviewed at once (default: all cores offline, 4 with model providers).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,

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

    /// Lowest severity that makes a spec's verdict `revise`.
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

    /// Do not write a Markdown review report per spec to .adversarial-spec/reviews/.
    #[arg(long)]
    pub no_report: bool,

    /// Model for attackers and rebuttals (PROVIDER/MODEL or `offline`), as for a single run.
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

    /// Seconds for the whole batch; calls still pending then fail (those specs are incomplete).
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<u64>,

    /// Use the offline engine in every role, whatever is installed or configured.
    #[arg(long, env = "GAUNTLET_OFFLINE", value_parser = clap::builder::BoolishValueParser::new())]
    pub offline: bool,

    /// No progress on standard error.
    #[arg(long, short)]
    pub quiet: bool,

    /// Largest spec accepted, in bytes (larger files get an error row).
    #[arg(long, default_value_t = crate::input::DEFAULT_MAX_BYTES, value_name = "BYTES")]
    pub max_bytes: u64,

    /// Folder of persona files (*.toml) that add to or override the built-ins.
    #[arg(long, value_name = "DIR")]
    pub personas_dir: Option<PathBuf>,

    /// Folder of protocol files (*.toml) that add to or override the built-ins.
    #[arg(long, value_name = "DIR")]
    pub protocols_dir: Option<PathBuf>,

    /// When to color the summary table (NO_COLOR is respected in auto).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorArg,
}

/// Parses nothing: gives `RunArgs` with every default, so flags other
/// helpers add to single runs get their defaults here too.
#[derive(Parser)]
struct Defaults {
    #[command(flatten)]
    run: RunArgs,
}

impl ReviewArgs {
    /// The single-run flags these review flags stand for, so a batch goes
    /// through exactly the same `Config` as `gauntlet SPEC`.
    pub fn run_args(&self) -> RunArgs {
        let mut run = Defaults::try_parse_from(["gauntlet"])
            .map(|d| d.run)
            .expect("run flags all have defaults");
        run.adversaries = self.adversaries.clone();
        run.batch_size = self.batch_size;
        run.no_rebuttals = self.no_rebuttals;
        run.final_boss = self.final_boss;
        run.fail_on = self.fail_on;
        run.no_store = self.no_store;
        run.store_dir = self.store_dir.clone();
        run.now = self.now.clone();
        run.no_report = self.no_report;
        run.quiet = self.quiet;
        run.max_bytes = self.max_bytes;
        run.personas_dir = self.personas_dir.clone();
        run.protocols_dir = self.protocols_dir.clone();
        run.color = self.color;
        run.attack_model = self.attack_model.clone();
        run.eval_models = self.eval_models.clone();
        run.final_boss_model = self.final_boss_model.clone();
        run.api_base = self.api_base.clone();
        run.timeout = self.timeout;
        run.max_concurrency = self.max_concurrency;
        run.deadline = self.deadline;
        run.offline = self.offline;
        run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};

    fn review(args: &[&str]) -> ReviewArgs {
        let cli = Cli::try_parse_from(args).unwrap();
        match cli.command {
            Some(Command::Review(r)) => *r,
            _ => panic!("not a review"),
        }
    }

    #[test]
    fn run_flags_carry_over() {
        let r = review(&[
            "gauntlet",
            "review",
            "--adversaries",
            "burned_oncall",
            "--no-rebuttals",
            "--fail-on",
            "high",
            "--max-bytes",
            "99",
            "a",
            "b",
        ]);
        assert_eq!(r.paths, vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(
            r.report_formats,
            vec![ReportFormat::Json, ReportFormat::Markdown]
        );
        let run = r.run_args();
        assert_eq!(run.adversaries, vec!["burned_oncall".to_string()]);
        assert!(run.no_rebuttals);
        assert_eq!(run.fail_on, SeverityArg::High);
        assert_eq!(run.max_bytes, 99);
        assert!(run.spec.is_none());
    }

    #[test]
    fn a_path_is_required() {
        assert!(Cli::try_parse_from(["gauntlet", "review"]).is_err());
    }
}
