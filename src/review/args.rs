//! Raw flags of `gauntlet review` (clap derive). Kept beside the feature
//! rather than in `cli.rs` so that file only gains one enum variant. The
//! flags a review shares with a single run are the flattened `RunArgs`, so
//! a batch goes through exactly the same `Config` as `gauntlet SPEC`; only
//! their help is adjusted here where a batch differs.

use crate::run_args::RunArgs;
use clap::{Args, ValueEnum};
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
#[command(
    after_help = AFTER_HELP,
    mut_arg("fail_on", |a| a.help("Lowest severity that makes a spec's verdict `revise`")),
    mut_arg("no_report", |a| a.help(
        "Do not write a Markdown review report per spec to .adversarial-spec/reviews/"
    )),
    mut_arg("max_bytes", |a| a.help("Largest spec accepted, in bytes (larger files get an error row)")),
    mut_arg("color", |a| a.help("When to color the summary table (NO_COLOR is respected in auto)")),
    mut_arg("deadline", |a| a.help(
        "Seconds for the whole batch; calls still pending then fail (those specs are incomplete)"
    )),
)]
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

    /// Only specs changed since this git revision (branch, tag or commit;
    /// from its merge base with HEAD, plus uncommitted and untracked files).
    #[arg(long, value_name = "REF")]
    pub changed_since: Option<String>,

    /// Specs reviewed at once (default: all cores offline, 4 with model providers).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,

    /// Flags shared with a single run (declared once, in `run_args`).
    #[command(flatten)]
    pub run: RunArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command, SpecArgs};
    use crate::run_args::SeverityArg;
    use clap::{CommandFactory, Parser};

    fn review(args: &[&str]) -> ReviewArgs {
        let cli = Cli::try_parse_from(args).unwrap();
        match cli.command {
            Some(Command::Review(r)) => *r,
            _ => panic!("not a review"),
        }
    }

    fn single(args: &[&str]) -> SpecArgs {
        let cli = Cli::try_parse_from(args).unwrap();
        assert!(cli.command.is_none());
        cli.args
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
        assert_eq!(r.run.adversaries, vec!["burned_oncall".to_string()]);
        assert!(r.run.no_rebuttals);
        assert_eq!(r.run.fail_on, SeverityArg::High);
        assert_eq!(r.run.max_bytes, 99);
    }

    #[test]
    fn a_path_is_required() {
        assert!(Cli::try_parse_from(["gauntlet", "review"]).is_err());
    }

    /// A command line setting one shared flag to something other than its
    /// default. A flag added to `RunArgs` without a sample here fails
    /// `every_shared_flag_works_in_both_commands`, on purpose.
    fn sample(id: &str) -> &'static [&'static str] {
        match id {
            "adversaries" => &["--adversaries", "burned_oncall,lazy_developer"],
            "batch_size" => &["--batch-size", "7"],
            "no_rebuttals" => &["--no-rebuttals"],
            "final_boss" => &["--final-boss"],
            "fail_on" => &["--fail-on", "medium"],
            "no_store" => &["--no-store"],
            "store_dir" => &["--store-dir", "/tmp/elsewhere"],
            "now" => &["--now", "2026-01-02T03:04:05Z"],
            "no_report" => &["--no-report"],
            "quiet" => &["-q"],
            "max_bytes" => &["--max-bytes", "1234"],
            "personas_dir" => &["--personas-dir", "my-personas"],
            "protocols_dir" => &["--protocols-dir", "my-protocols"],
            "color" => &["--color", "never"],
            "attack_model" => &["--attack-model", "openai/gpt-4o-mini"],
            "eval_models" => &["--eval-models", "codex/a,claude-cli/b"],
            "final_boss_model" => &["--final-boss-model", "claude-cli/opus"],
            "api_base" => &["--api-base", "http://127.0.0.1:9/v1"],
            "allow_config_api_base" => &["--allow-config-api-base"],
            "timeout" => &["--timeout", "9"],
            "max_concurrency" => &["--max-concurrency", "3"],
            "deadline" => &["--deadline", "60"],
            "offline" => &["--offline"],
            "nuances" => &["--nuances", "extra-nuances.md"],
            "no_nuances" => &["--no-nuances"],
            "complexity" => &["--complexity", "thorough"],
            "allow_deferred" => &["--allow-deferred"],
            "fresh_eyes" => &["--fresh-eyes"],
            "rounds" => &["--rounds", "2"],
            "responses" => &["--responses", "answers.json"],
            other => panic!("add a sample value for the shared flag `{other}` to this test"),
        }
    }

    #[test]
    fn every_shared_flag_works_in_both_commands() {
        let shared = RunArgs::augment_args(clap::Command::new("shared"));
        let ids: Vec<String> = shared
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        assert!(ids.len() >= 22, "shared flags: {ids:?}");
        let default = single(&["gauntlet", "spec.md"]).run;
        assert_eq!(default, review(&["gauntlet", "review", "dir"]).run);
        for id in &ids {
            let flag = sample(id);
            let mut one = vec!["gauntlet"];
            one.extend_from_slice(flag);
            one.push("spec.md");
            let mut batch = vec!["gauntlet", "review"];
            batch.extend_from_slice(flag);
            batch.push("dir");
            let one = single(&one);
            let batch = review(&batch);
            assert_eq!(one.spec, Some(PathBuf::from("spec.md")), "{flag:?}");
            assert_eq!(batch.paths, vec![PathBuf::from("dir")], "{flag:?}");
            assert_ne!(one.run, default, "{flag:?} changed nothing");
            assert_eq!(one.run, batch.run, "{flag:?} differs between the commands");
        }
    }

    fn help(cmd: &clap::Command, id: &str) -> String {
        cmd.get_arguments()
            .find(|a| a.get_id() == id)
            .and_then(|a| a.get_help())
            .map(|h| h.to_string())
            .unwrap_or_else(|| panic!("no help for {id}"))
    }

    #[test]
    fn review_adjusts_the_help_of_shared_flags_where_a_batch_differs() {
        let top = Cli::command();
        let batch = top.find_subcommand("review").unwrap().clone();
        assert!(help(&top, "deadline").contains("whole run"));
        assert!(help(&batch, "deadline").contains("whole batch"));
        assert!(help(&batch, "max_bytes").contains("error row"));
        assert!(help(&batch, "color").contains("summary table"));
        assert_eq!(help(&top, "attack_model"), help(&batch, "attack_model"));
        // Every shared flag has help in both commands.
        for a in RunArgs::augment_args(clap::Command::new("shared")).get_arguments() {
            let id = a.get_id().as_str();
            assert!(!help(&top, id).is_empty() && !help(&batch, id).is_empty());
        }
    }
}
