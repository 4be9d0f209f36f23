//! Raw flags of `gauntlet store ...` and `gauntlet adversary-stats` (clap
//! derive). Kept beside the store rather than in `cli.rs` so that file only
//! gains two enum variants; no logic here.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Where the store is and what time it is; shared by the store commands.
#[derive(Debug, Clone, Default, Args)]
pub struct LocationArgs {
    /// Store folder (default: .adversarial-spec/ in the project root, the
    /// nearest ancestor holding .git).
    #[arg(long, value_name = "DIR", env = "GAUNTLET_STORE_DIR", global = true)]
    pub store_dir: Option<PathBuf>,

    /// Fix the clock for confidence decay (RFC 3339, e.g. 2026-01-22T14:30:00Z).
    #[arg(long, value_name = "TIME", env = "GAUNTLET_NOW", global = true)]
    pub now: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,

    #[command(flatten)]
    pub location: LocationArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Subcommand)]
pub enum StoreCommand {
    /// List stored explanations with their current confidence.
    List {
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
    },
    /// Show one entry in full (id or unique id prefix).
    Show {
        id: String,
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
    },
    /// Delete one entry.
    Forget { id: String },
    /// Delete entries whose current confidence (ignoring spec changes) is below a floor.
    Prune {
        #[arg(long, default_value_t = 0.2, value_name = "CONFIDENCE")]
        below: f64,
        /// Only list what would be deleted.
        #[arg(long)]
        dry_run: bool,
    },
    /// Merge a resolved_concerns.json from the reference implementation (or another store).
    Import { file: PathBuf },
    /// Validate the store, stats and history files; exit 0 if sound, 1 if not.
    Check,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Text,
    Json,
    Markdown,
}

/// The adversary leaderboard from the cumulative statistics.
#[derive(Debug, Clone, Parser)]
#[command(name = "adversary-stats", version)]
pub struct AdversaryStatsArgs {
    /// Output format on standard output.
    #[arg(long, value_enum, default_value = "text")]
    pub format: StatsFormat,

    /// Only runs on or after this date (YYYY-MM-DD or RFC 3339), from the run history.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,

    #[command(flatten)]
    pub location: LocationArgs,
}
