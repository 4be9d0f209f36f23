//! The project store under `.adversarial-spec/`: resolved concerns with
//! confidence decay (the self-filter's memory), and where the cumulative
//! adversary statistics and review reports go. `ProjectStore` plugs it into
//! the pipeline through `persistence::Persistence`; `commands` holds the
//! `gauntlet store ...` subcommands. Nothing here prints.

pub mod args;
pub mod commands;
pub mod confidence;
pub mod history;
pub mod history_command;
pub mod location;
pub mod lock;
pub mod persist;
pub mod resolved_store;
pub mod run_history;
pub mod similarity;
pub mod spec_identity;
pub mod store_error;

pub use location::StorePaths;
pub use persist::ProjectStore;
pub use resolved_store::{Entry, StoreFile};
pub use store_error::StoreError;

use chrono::{DateTime, Utc};
use std::path::PathBuf;

/// The store options of one invocation, resolved from flags and environment.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `--store-dir` / `GAUNTLET_STORE_DIR`.
    pub dir: Option<PathBuf>,
    /// `--now` / `GAUNTLET_NOW`; `None` is the system clock.
    pub now: Option<DateTime<Utc>>,
    /// False with `--no-report`.
    pub report: bool,
}

impl StoreOptions {
    pub fn paths(&self) -> Result<StorePaths, StoreError> {
        let cwd = std::env::current_dir().map_err(|source| StoreError::Read {
            file: ".".to_string(),
            source,
        })?;
        let paths = StorePaths::resolve(self.dir.as_deref(), &cwd);
        paths.check_folder()?;
        Ok(paths)
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.now.unwrap_or_else(Utc::now)
    }

    pub fn open(&self) -> Result<ProjectStore, StoreError> {
        ProjectStore::open(self.paths()?, self.now(), self.report)
    }
}
