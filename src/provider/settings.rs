//! The model settings of a run: flags, then `.adversarial-spec/config.toml`
//! (`[models]` table), then automatic selection, resolved into one value.
//! Flags win over the file; the file wins over auto selection. API keys
//! come only from the environment and are never stored here as settings
//! text (only looked up when the run is assembled).

use super::model_name::{ModelName, ProviderKind};
use super::selection::{self, Probe};
use crate::error::UsageError;
use crate::run_args::RunArgs;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Set (to 1/true/yes) by the invoker to let a repository's config file
/// choose `api_base`; same as `--allow-config-api-base`.
pub const ALLOW_CONFIG_API_BASE_ENV: &str = "GAUNTLET_ALLOW_CONFIG_API_BASE";
pub const DEFAULT_MAX_CONCURRENCY: u32 = 8;

/// The `[models]` table of `.adversarial-spec/config.toml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileModels {
    pub attack: Option<String>,
    pub eval: Option<Vec<String>>,
    pub final_boss: Option<String>,
    pub api_base: Option<String>,
    pub timeout: Option<u64>,
    pub max_concurrency: Option<u32>,
    pub deadline: Option<u64>,
}

/// Only `[models]` is read here; other tables belong to other features.
#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    #[serde(default)]
    models: FileModels,
}

/// Reads `[models]` from the config file, if the file exists.
pub fn read_config_file(path: &Path) -> Result<FileModels, UsageError> {
    let text = match crate::fsutil::read_regular_text(
        path,
        crate::fsutil::MAX_DATA_FILE_BYTES,
        crate::fsutil::Links::Refuse,
    ) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileModels::default()),
        Err(e) => {
            return Err(UsageError::Invalid(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    toml::from_str::<FileConfig>(&text)
        .map(|c| c.models)
        .map_err(|e| UsageError::Invalid(format!("{}: {}", path.display(), e.message().trim())))
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub attack: ModelName,
    /// The first one adjudicates.
    pub eval: Vec<ModelName>,
    pub final_boss: ModelName,
    /// Set by the invoker (`--api-base`), or by the config file when the
    /// invoker allowed that.
    pub api_base: Option<String>,
    /// An `api_base` from the config file that the invoker did not allow:
    /// a model that needs a base URL then fails with a message saying so.
    pub refused_api_base: Option<String>,
    pub timeout: Duration,
    pub max_concurrency: u32,
    pub deadline: Option<Duration>,
    /// Where raw requests and responses are saved (`None` with `--no-store`).
    pub store: Option<PathBuf>,
    /// What was chosen and why, for stderr.
    pub notes: Vec<String>,
}

impl ModelSettings {
    /// The offline engine in every role.
    pub fn offline() -> ModelSettings {
        ModelSettings {
            attack: ModelName::offline(),
            eval: vec![ModelName::offline()],
            final_boss: ModelName::offline(),
            api_base: None,
            refused_api_base: None,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            deadline: None,
            store: None,
            notes: Vec::new(),
        }
    }

    pub fn is_offline(&self) -> bool {
        self.attack.is_offline()
            && self.eval.iter().all(ModelName::is_offline)
            && self.final_boss.is_offline()
    }

    /// Every model the run may call (final boss only when it runs).
    pub fn models(&self, final_boss: bool) -> Vec<&ModelName> {
        let mut v = vec![&self.attack];
        v.extend(self.eval.iter());
        if final_boss {
            v.push(&self.final_boss);
        }
        v
    }

    /// Flags, then the config file, then auto selection.
    pub fn resolve(
        args: &RunArgs,
        file: &FileModels,
        store: Option<PathBuf>,
        probe: &dyn Probe,
    ) -> Result<ModelSettings, UsageError> {
        let mut notes = Vec::new();
        let parse_list = |v: &[String]| -> Result<Vec<ModelName>, UsageError> {
            v.iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .map(ModelName::parse)
                .collect()
        };
        let timeout = args
            .timeout
            .or(file.timeout)
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        if timeout == 0 {
            return Err(UsageError::Invalid(
                "--timeout must be at least 1 second".into(),
            ));
        }
        let max_concurrency = args
            .max_concurrency
            .or(file.max_concurrency)
            .unwrap_or(DEFAULT_MAX_CONCURRENCY);
        if max_concurrency == 0 {
            return Err(UsageError::Invalid(
                "--max-concurrency must be at least 1".into(),
            ));
        }
        let deadline = args.deadline.or(file.deadline);
        if deadline == Some(0) {
            return Err(UsageError::Invalid(
                "--deadline must be at least 1 second".into(),
            ));
        }
        // The config file lives in the repository under review, which may be
        // hostile: it may pick models, but where specs (and keys) are sent
        // is the invoker's choice.
        let allowed = args.allow_config_api_base
            || std::env::var(ALLOW_CONFIG_API_BASE_ENV).is_ok_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            });
        let (api_base, refused_api_base) = match (&args.api_base, &file.api_base) {
            (Some(b), _) => (Some(b.clone()), None),
            (None, Some(b)) if allowed => {
                notes.push(format!(
                    "api base: {b} (from the config file, allowed by the invoker)"
                ));
                (Some(b.clone()), None)
            }
            (None, Some(b)) => (None, Some(b.clone())),
            (None, None) => (None, None),
        };
        let mut s = ModelSettings {
            api_base,
            refused_api_base,
            timeout: Duration::from_secs(timeout),
            max_concurrency,
            deadline: deadline.map(Duration::from_secs),
            store,
            ..ModelSettings::offline()
        };
        if args.offline {
            // Checked here, not by clap: clap counts GAUNTLET_OFFLINE as given
            // whatever its value, so GAUNTLET_OFFLINE=0 broke every model flag.
            let flag = [
                (args.attack_model.is_some(), "--attack-model"),
                (!args.eval_models.is_empty(), "--eval-models"),
                (args.final_boss_model.is_some(), "--final-boss-model"),
            ]
            .into_iter()
            .find_map(|(given, name)| given.then_some(name));
            if let Some(flag) = flag {
                return Err(UsageError::Invalid(format!(
                    "{flag} cannot be used with --offline (or GAUNTLET_OFFLINE=1)"
                )));
            }
            s.notes.push("models: offline (--offline)".to_string());
            return Ok(s);
        }
        let from = |flag: bool| if flag { "--" } else { "config file " };

        s.attack = match (&args.attack_model, &file.attack) {
            (Some(m), _) => ModelName::parse(m)?,
            (None, Some(m)) => {
                notes.push(format!("attack model: {m} (from the config file)"));
                ModelName::parse(m)?
            }
            (None, None) => {
                let c = selection::attacker(probe);
                notes.push(format!("attack model: {} ({})", c.value, c.why));
                c.value
            }
        };
        let flag_eval = parse_list(&args.eval_models)?;
        s.eval = if !flag_eval.is_empty() {
            flag_eval
        } else if let Some(list) = &file.eval {
            let l = parse_list(list)?;
            if l.is_empty() {
                return Err(UsageError::Invalid(format!(
                    "{}eval in [models] is empty",
                    from(false)
                )));
            }
            notes.push(format!(
                "eval models: {} (from the config file)",
                l.iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            l
        } else {
            let c = selection::evaluators(probe);
            notes.push(format!(
                "eval models: {} ({})",
                c.value
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                c.why
            ));
            c.value
        };
        s.final_boss = match (&args.final_boss_model, &file.final_boss) {
            (Some(m), _) => ModelName::parse(m)?,
            (None, Some(m)) => ModelName::parse(m)?,
            (None, None) => {
                let c = selection::final_boss(probe, &s.eval[0]);
                if args.final_boss {
                    notes.push(format!("final boss model: {} ({})", c.value, c.why));
                }
                c.value
            }
        };
        if !s.is_offline() {
            s.notes = notes;
        } else if args.attack_model.is_none() && file.attack.is_none() {
            s.notes.push(format!(
                "models: offline ({})",
                "no model CLI on PATH and no API key set"
            ));
        }
        Ok(s)
    }

    /// The base URL for an API provider: `--api-base` / config for
    /// openai-compatible and ollama, else their environment variables.
    pub fn base_url(
        &self,
        kind: ProviderKind,
        probe: &dyn Probe,
    ) -> Result<Option<String>, UsageError> {
        let needs_base = matches!(kind, ProviderKind::OpenAiCompatible | ProviderKind::Ollama);
        if needs_base
            && self.api_base.is_none()
            && let Some(b) = &self.refused_api_base
        {
            return Err(UsageError::Invalid(format!(
                "the config file sets api_base = {b}, but a repository's config may not choose where specs are sent; pass --api-base yourself, or allow it with --allow-config-api-base or {ALLOW_CONFIG_API_BASE_ENV}=1"
            )));
        }
        Ok(match kind {
            ProviderKind::OpenAiCompatible => Some(
                self.api_base
                    .clone()
                    .or_else(|| probe.var("OPENAI_API_BASE"))
                    .ok_or_else(|| {
                        UsageError::Invalid(
                            "openai-compatible models need --api-base URL (or OPENAI_API_BASE)"
                                .into(),
                        )
                    })?,
            ),
            ProviderKind::Ollama => Some(
                self.api_base
                    .clone()
                    .or_else(|| probe.var("OLLAMA_API_BASE"))
                    .unwrap_or_else(|| "http://localhost:11434".to_string()),
            ),
            ProviderKind::OpenAi => probe.var("OPENAI_API_BASE"),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::selection::tests::FakeProbe;
    use clap::Parser;

    fn args(a: &[&str]) -> RunArgs {
        let mut v = vec!["gauntlet"];
        v.extend_from_slice(a);
        crate::cli::Cli::try_parse_from(v).unwrap().args.run
    }

    #[test]
    fn flags_win_over_file_and_file_over_auto() {
        let probe = FakeProbe {
            programs: ["gemini"].into_iter().collect(),
            ..FakeProbe::default()
        };
        let file = FileModels {
            attack: Some("openai/gpt-4o-mini".into()),
            eval: Some(vec!["anthropic/claude-x".into()]),
            timeout: Some(30),
            ..FileModels::default()
        };
        let s = ModelSettings::resolve(
            &args(&["--attack-model", "codex/m", "--timeout", "9"]),
            &file,
            None,
            &probe,
        )
        .unwrap();
        assert_eq!(s.attack.to_string(), "codex/m");
        assert_eq!(s.eval[0].to_string(), "anthropic/claude-x");
        assert_eq!(s.timeout, Duration::from_secs(9));
        let s = ModelSettings::resolve(&args(&[]), &FileModels::default(), None, &probe).unwrap();
        assert_eq!(s.attack.kind, ProviderKind::GeminiCli);
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("gemini") && n.contains("PATH"))
        );
    }

    #[test]
    fn offline_by_default_and_with_flag() {
        let none = FakeProbe::default();
        let s = ModelSettings::resolve(&args(&[]), &FileModels::default(), None, &none).unwrap();
        assert!(s.is_offline());
        let all = FakeProbe {
            programs: ["codex", "gemini", "claude"].into_iter().collect(),
            ..FakeProbe::default()
        };
        let s = ModelSettings::resolve(&args(&["--offline"]), &FileModels::default(), None, &all)
            .unwrap();
        assert!(s.is_offline());
        let s = ModelSettings::resolve(
            &args(&["--attack-model", "offline", "--eval-models", "offline"]),
            &FileModels::default(),
            None,
            &all,
        )
        .unwrap();
        assert!(s.is_offline());
    }

    #[test]
    fn config_file_models_table_parses_and_rejects_typos() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, "[models]\nattack = \"gemini-cli/x\"\neval = [\"codex/y\", \"claude-cli/z\"]\ntimeout = 60\n\n[store]\nother = 1\n").unwrap();
        let f = read_config_file(&p).unwrap();
        assert_eq!(f.eval.as_ref().unwrap().len(), 2);
        assert_eq!(f.timeout, Some(60));
        std::fs::write(&p, "[models]\natack = \"x\"\n").unwrap();
        assert!(
            read_config_file(&p)
                .unwrap_err()
                .to_string()
                .contains("atack")
        );
        assert_eq!(
            read_config_file(&dir.path().join("none.toml")).unwrap(),
            FileModels::default()
        );
    }
}
