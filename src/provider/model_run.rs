//! A run on models: resolves the model settings from flags, the config file
//! and auto selection; assembles the `Gauntlet` with model-backed roles
//! (offline roles where a role is `offline`); and drives it on a tokio
//! runtime, reporting on stderr (through events) what was chosen, how many
//! secrets were redacted and where the raw calls were saved.

use super::cli::CliProvider;
use super::client::{CallSettings, ModelClient};
use super::completion::Provider;
use super::http_chat::HttpChatProvider;
use super::limit::Limit;
use super::litellm::LitellmProvider;
use super::model_name::ModelName;
use super::model_roles::{ModelAttacker, ModelEvaluator, ModelFinalBoss};
use super::record::Recorder;
use super::retry::RetryPolicy;
use super::selection::{Probe, SystemProbe};
use super::settings::{ModelSettings, read_config_file};
use crate::catalog::Catalog;
use crate::error::{Error, UsageError};
use crate::event::Event;
use crate::filter::ConcernFilter;
use crate::pipeline::{EventSink, Gauntlet, RunOptions};
use crate::roles::{Attacker, Evaluator, FinalBoss};
use crate::run_args::RunArgs;
use crate::spec::Spec;
use crate::verdict::Verdict;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Makes the provider for a model name (real ones, or fakes in tests).
pub type MakeProvider<'a> =
    dyn FnMut(&ModelName, &dyn Probe) -> Result<Arc<dyn Provider>, UsageError> + 'a;

/// The provider for an API model: our own HTTP calls for the OpenAI and
/// Anthropic wire formats (`http_chat.rs`: Retry-After, cache control),
/// which every API provider speaks; litellm-rs for any that does not.
pub fn api_provider(
    m: &ModelName,
    key: Option<String>,
    base: Option<String>,
    timeout_secs: u64,
) -> Arc<dyn Provider> {
    match HttpChatProvider::new(m, key.clone(), base.clone()) {
        Some(p) => Arc::new(p),
        None => Arc::new(LitellmProvider::new(m, key, base, timeout_secs)),
    }
}

/// The model side of a run: settings plus what the run accumulates.
#[derive(Clone)]
pub struct ModelRun {
    pub settings: ModelSettings,
    /// The retry policy of every call (tests shorten the waits).
    pub retry: RetryPolicy,
    recorder: Arc<Mutex<Option<Arc<Recorder>>>>,
    redacted: Arc<AtomicUsize>,
}

impl ModelRun {
    pub fn new(settings: ModelSettings) -> ModelRun {
        ModelRun {
            settings,
            retry: RetryPolicy::default(),
            recorder: Arc::new(Mutex::new(None)),
            redacted: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Flags, then `.adversarial-spec/config.toml`, then auto selection.
    pub fn from_args(args: &RunArgs) -> Result<ModelRun, UsageError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
        // The same folder the resolved-concerns store uses (--store-dir,
        // GAUNTLET_STORE_DIR, else .adversarial-spec under the project root).
        let store =
            crate::store::location::StorePaths::resolve(args.store_dir.as_deref(), &cwd).dir;
        let file = read_config_file(&store.join("config.toml"))?;
        let settings =
            ModelSettings::resolve(args, &file, (!args.no_store).then_some(store), &SystemProbe)?;
        Ok(ModelRun::new(settings))
    }

    pub fn is_offline(&self) -> bool {
        self.settings.is_offline()
    }

    /// The roles for this run. Fails (usage error) when a needed API key or
    /// base URL is missing; never calls a model.
    pub fn gauntlet(
        &self,
        catalog: Arc<Catalog>,
        options: RunOptions,
        final_boss: bool,
    ) -> Result<Gauntlet, Error> {
        self.gauntlet_with(catalog, options, final_boss, &SystemProbe, &mut |m, s| {
            self.provider(m, s)
        })
    }

    /// Like `gauntlet`, with the providers made by `make` (tests and
    /// benchmarks pass fakes).
    pub fn gauntlet_with(
        &self,
        catalog: Arc<Catalog>,
        options: RunOptions,
        final_boss: bool,
        probe: &dyn Probe,
        make: &mut MakeProvider<'_>,
    ) -> Result<Gauntlet, Error> {
        let s = &self.settings;
        let offline = Gauntlet::offline(catalog.clone(), options.clone(), final_boss);
        if s.is_offline() {
            return Ok(offline);
        }
        // Every key-like value in the environment, not only the keys of the
        // providers in use (issue 12): another provider's key must not leak.
        let mut secrets = super::redact::env_secrets();
        for m in s.models(final_boss) {
            if let Some(v) = m.kind.key_var().and_then(|v| probe.var(v))
                && !secrets.contains(&v)
            {
                secrets.push(v);
            }
        }
        let recorder = match &s.store {
            Some(store) if !s.is_offline() => match Recorder::create(store) {
                Ok(r) => Some(Arc::new(r)),
                Err(e) => {
                    return Err(UsageError::Invalid(format!(
                        "cannot create the run folder under {}: {e} (use --no-store to skip saving)",
                        store.display()
                    ))
                    .into());
                }
            },
            _ => None,
        };
        if let Ok(mut slot) = self.recorder.lock() {
            slot.clone_from(&recorder);
        }
        let call = CallSettings {
            timeout: s.timeout,
            deadline: s.deadline.map(|d| Instant::now() + d),
            retry: self.retry,
            recorder,
            secrets: Arc::new(secrets),
            redacted: self.redacted.clone(),
        };
        let mut limits: HashMap<String, Arc<Limit>> = HashMap::new();
        let mut clients: HashMap<String, ModelClient> = HashMap::new();
        let mut client = |m: &ModelName| -> Result<ModelClient, Error> {
            if let Some(c) = clients.get(&m.to_string()) {
                return Ok(c.clone());
            }
            let provider = make(m, probe)?;
            let limit = limits
                .entry(m.kind.prefix().to_string())
                .or_insert_with(|| Limit::new(s.max_concurrency as usize))
                .clone();
            let c = ModelClient::new(provider, limit, call.clone());
            clients.insert(m.to_string(), c.clone());
            Ok(c)
        };
        let attacker: Arc<dyn Attacker> = if s.attack.is_offline() {
            offline.attacker.clone()
        } else {
            Arc::new(ModelAttacker {
                client: client(&s.attack)?,
                nuances: options.nuances.clone(),
            })
        };
        let mut evaluators: Vec<Arc<dyn Evaluator>> = Vec::new();
        for m in &s.eval {
            if m.is_offline() {
                evaluators.extend(offline.evaluators.iter().cloned());
            } else {
                evaluators.push(Arc::new(ModelEvaluator {
                    client: client(m)?,
                    catalog: catalog.clone(),
                    nuances: options.nuances.clone(),
                }));
            }
        }
        let boss: Option<Arc<dyn FinalBoss>> = if !final_boss {
            None
        } else if s.final_boss.is_offline() {
            offline.final_boss.clone()
        } else {
            Some(Arc::new(ModelFinalBoss {
                client: client(&s.final_boss)?,
                catalog: catalog.clone(),
            }))
        };
        // The fresh-eyes gate runs on the final boss's model (the seed's
        // overviewer is the strongest model), offline when that is offline.
        let fresh_eyes: Option<Arc<dyn crate::roles::FreshEyesReviewer>> =
            if options.fresh_eyes && !s.final_boss.is_offline() {
                Some(Arc::new(super::model_roles::ModelFreshEyes {
                    client: client(&s.final_boss)?,
                }))
            } else {
                None
            };
        Ok(Gauntlet {
            catalog,
            attacker,
            evaluators,
            final_boss: boss,
            fresh_eyes,
            options,
        })
    }

    /// The real provider for a model name.
    fn provider(&self, m: &ModelName, probe: &dyn Probe) -> Result<Arc<dyn Provider>, UsageError> {
        if let Some(cli) = CliProvider::new(m) {
            return Ok(Arc::new(cli));
        }
        let key =
            match m.kind.key_var() {
                Some(var) => Some(probe.var(var).ok_or_else(|| {
                    UsageError::Invalid(format!("{var} is not set (needed by {m})"))
                })?),
                None => None,
            };
        let base = self.settings.base_url(m.kind, probe)?;
        Ok(api_provider(m, key, base, self.settings.timeout.as_secs()))
    }

    /// Runs the pipeline on a tokio runtime; offline runs never come here.
    pub fn run(
        &self,
        gauntlet: &Gauntlet,
        spec: &Spec,
        filter: &dyn ConcernFilter,
        events: EventSink<'_>,
    ) -> Result<Verdict, Error> {
        for n in &self.settings.notes {
            events(Event::Note(n.clone()));
        }
        let found = super::redact::redact(&spec.text).count;
        if found > 0 {
            events(Event::Note(format!(
                "redacted {found} secret(s) from the spec before sending it to any model"
            )));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| UsageError::Invalid(format!("cannot start the async runtime: {e}")))?;
        let verdict = runtime.block_on(gauntlet.run(spec, filter, events));
        if let Some(rec) = self.recorder.lock().ok().and_then(|r| r.clone()) {
            if let Some(e) = rec.take_error() {
                events(Event::Warning(e));
            } else if rec.calls() > 0 {
                events(Event::Note(format!(
                    "saved {} model call(s) to {}",
                    rec.calls(),
                    rec.dir().display()
                )));
            }
        }
        Ok(verdict)
    }

    /// Secrets redacted from outgoing text so far.
    pub fn redacted(&self) -> usize {
        self.redacted.load(std::sync::atomic::Ordering::Relaxed)
    }
}
