//! Raw flags (plus data folders) resolved into one validated `Config`: what
//! the run will actually do.

use crate::catalog::{Catalog, DEFAULT_ADVERSARIES};
use crate::error::{Error, UsageError};
use crate::pipeline::RunOptions;
use crate::run_args::RunArgs;
use std::sync::Arc;

#[derive(Clone)]
pub struct Config {
    pub catalog: Arc<Catalog>,
    pub options: RunOptions,
    pub final_boss: bool,
    /// Which model answers each role (all `offline` by default).
    pub models: crate::provider::ModelRun,
    /// Where the resolved-concerns store and stats live, and the clock.
    pub store: crate::store::StoreOptions,
}

impl Config {
    pub fn from_args(args: &RunArgs) -> Result<Config, Error> {
        let mut catalog =
            Catalog::load(args.personas_dir.as_deref(), args.protocols_dir.as_deref())?;
        // Issue 10: nuances load with the data; their checks join the personas' rules.
        let nuances = crate::nuance::load(&crate::nuance::NuanceOptions {
            disabled: args.no_nuances,
            extra: args.nuances.clone(),
            project_root: crate::nuance::command::project_root(),
        })?;
        if let Some(set) = &nuances {
            crate::nuance::check::extend_catalog(&mut catalog, set)?;
        }
        let adversaries = resolve_adversaries(&catalog, &args.adversaries)?;
        // A store folder planted as a symlink is refused (exit 3) before
        // anything reads it (config.toml) or writes to it (runs/).
        crate::store::StoreOptions {
            dir: args.store_dir.clone(),
            now: None,
            report: false,
        }
        .paths()?;
        let catalog = Arc::new(catalog);
        // The adversaries' trigger prefilter takes a core for a few
        // milliseconds: built now, it is ready by the time the attack
        // starts (the attack waits for it otherwise).
        let early = catalog.clone();
        rayon::spawn(move || {
            early.adversary_prefilter();
        });
        Ok(Config {
            catalog,
            options: RunOptions {
                adversaries,
                batch_size: args.batch_size as usize,
                rebuttals: !args.no_rebuttals,
                fail_on: args.fail_on.into(),
                nuances: nuances.map(Arc::new),
                complexity: crate::triage::Request {
                    level: crate::triage::requested_level(args.complexity),
                    explicit_adversaries: !args.adversaries.is_empty()
                        && args.adversaries.iter().any(|a| a.trim() != "all"),
                    explicit_rebuttals: args.no_rebuttals,
                    explicit_final_boss: args.final_boss || args.final_boss_model.is_some(),
                    explicit_rounds: args.rounds.is_some(),
                },
                assessment: None,
                allow_deferred: args.allow_deferred,
                fresh_eyes: args.fresh_eyes,
                rounds: args.rounds.unwrap_or(1),
                responses: match &args.responses {
                    Some(p) => crate::responses::Responses::load(p).map_err(UsageError::Invalid)?,
                    None => Default::default(),
                },
            },
            final_boss: args.final_boss || args.final_boss_model.is_some(),
            models: crate::provider::ModelRun::from_args(args)?,
            store: crate::store::StoreOptions {
                dir: args.store_dir.clone(),
                now: args
                    .now
                    .as_deref()
                    .map(crate::store::location::parse_now)
                    .transpose()
                    .map_err(UsageError::Invalid)?,
                report: !args.no_report,
            },
        })
    }
}

impl Config {
    /// The roles this run uses: the offline engine, or models where the
    /// model settings name them (`provider::ModelRun`).
    pub fn gauntlet(&self) -> Result<crate::pipeline::Gauntlet, Error> {
        // A final boss is built whenever the level may be thorough;
        // `triage::gauntlet_for` drops it for a spec that is not.
        let may_be_thorough = matches!(
            self.options.complexity.level,
            None | Some(crate::triage::Level::Thorough)
        );
        let built = self.models.gauntlet(
            self.catalog.clone(),
            self.options.clone(),
            self.final_boss || may_be_thorough,
        );
        match built {
            // The final boss model may be unusable (no key) when nobody asked
            // for it: the run goes on without it (app.rs warns at thorough).
            Err(_) if may_be_thorough && !self.final_boss => {
                self.models
                    .gauntlet(self.catalog.clone(), self.options.clone(), false)
            }
            other => other,
        }
    }

    /// True when every role runs on the offline engine (no I/O, so batch
    /// review can spread specs over all cores).
    pub fn is_offline(&self) -> bool {
        self.models.is_offline()
    }

    /// The store and stats hooks for this run.
    pub fn persistence(
        &self,
        no_store: bool,
    ) -> Result<Box<dyn crate::persistence::Persistence>, Error> {
        if no_store {
            return Ok(Box::new(crate::persistence::NoPersistence));
        }
        Ok(Box::new(self.store.open()?))
    }
}

/// `--adversaries`: names (or `all`), validated and deduplicated.
pub fn resolve_adversaries(catalog: &Catalog, given: &[String]) -> Result<Vec<String>, UsageError> {
    let given: Vec<&str> = given
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if given.is_empty() || given == ["all"] {
        return Ok(DEFAULT_ADVERSARIES.iter().map(|s| s.to_string()).collect());
    }
    let mut out: Vec<String> = Vec::new();
    for name in given {
        match catalog.persona(name) {
            Some(p) if !p.is_final_boss => {
                if !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
            }
            _ => {
                return Err(UsageError::UnknownAdversary {
                    name: name.to_string(),
                    known: catalog.adversary_names().join(", "),
                });
            }
        }
    }
    if out.is_empty() {
        return Err(UsageError::NoAdversaries);
    }
    Ok(out)
}
