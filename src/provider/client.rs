//! `ModelClient`: one model as the roles use it. Wraps a `Provider` with
//! everything that must happen exactly once per call: redaction of the
//! outgoing text, the per-provider concurrency limit, the per-call timeout,
//! the whole-run deadline, the retry loop, and recording of the raw request
//! and response. It never logs request URLs or API keys.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError};
use super::record::Recorder;
use super::redact::redact_with;
use super::retry::{RetryPolicy, retry};
use crate::stats::Usage;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Settings shared by every client of a run.
#[derive(Clone)]
pub struct CallSettings {
    pub timeout: Duration,
    pub deadline: Option<Instant>,
    pub retry: RetryPolicy,
    pub recorder: Option<Arc<Recorder>>,
    /// Literal secrets (the API keys in use) that must never be sent.
    pub secrets: Arc<Vec<String>>,
    /// Secrets redacted from outgoing text over the run (a count, for stderr).
    pub redacted: Arc<AtomicUsize>,
}

impl Default for CallSettings {
    fn default() -> Self {
        CallSettings {
            timeout: Duration::from_secs(120),
            deadline: None,
            retry: RetryPolicy::default(),
            recorder: None,
            secrets: Arc::new(Vec::new()),
            redacted: Arc::new(AtomicUsize::new(0)),
        }
    }
}

#[derive(Clone)]
pub struct ModelClient {
    pub provider: Arc<dyn Provider>,
    /// Shared by every client of the same provider (`--max-concurrency`).
    pub limit: Arc<Semaphore>,
    pub settings: CallSettings,
}

/// The outcome of one logical call (all attempts).
pub struct CallOutcome {
    pub result: Result<Completion, ProviderError>,
    /// Summed over every attempt that returned usage.
    pub usage: Usage,
}

impl ModelClient {
    pub fn new(provider: Arc<dyn Provider>, limit: Arc<Semaphore>, settings: CallSettings) -> Self {
        ModelClient {
            provider,
            limit,
            settings,
        }
    }

    pub fn model(&self) -> &str {
        self.provider.model()
    }

    /// One logical call: redact, wait for a slot, try (with retries), record.
    /// `label` names the call in the saved run (`attack-paranoid_security`).
    pub async fn call(&self, label: &str, request: CompletionRequest) -> CallOutcome {
        let secrets = self.settings.secrets.as_slice();
        let system = redact_with(&request.system, secrets);
        let prompt = redact_with(&request.prompt, secrets);
        let n = system.count + prompt.count;
        if n > 0 {
            self.settings.redacted.fetch_add(n, Ordering::Relaxed);
        }
        let request = CompletionRequest {
            system: system.text,
            prompt: prompt.text,
            ..request
        };
        let s = &self.settings;
        let started = Instant::now();
        let attempts = retry(&s.retry, s.deadline, |_| {
            let request = &request;
            async move {
                let _permit = self
                    .limit
                    .acquire()
                    .await
                    .map_err(|_| ProviderError::Fatal("provider closed".into()))?;
                let mut timeout = s.timeout;
                if let Some(d) = s.deadline {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ProviderError::Deadline);
                    }
                    timeout = timeout.min(left);
                }
                match tokio::time::timeout(timeout, self.provider.complete(request)).await {
                    Ok(Ok(c)) if c.text.trim().is_empty() => Err(ProviderError::Empty),
                    Ok(r) => r,
                    Err(_) if timeout < s.timeout => Err(ProviderError::Deadline),
                    Err(_) => Err(ProviderError::Timeout {
                        secs: timeout.as_secs().max(1),
                    }),
                }
            }
        })
        .await;
        let mut usage = Usage::default();
        if let Ok(c) = &attempts.result {
            usage += &c.usage;
        }
        // A call is one call however many attempts it took.
        usage.calls = 1;
        if let Some(rec) = &s.recorder {
            rec.record(
                label,
                self.model(),
                &request,
                &attempts.result,
                &attempts.failures,
                started.elapsed(),
            );
        }
        CallOutcome {
            result: attempts.result,
            usage,
        }
    }
}
