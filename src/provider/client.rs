//! `ModelClient`: one model as the roles use it. Wraps a `Provider` with
//! everything that must happen exactly once per call: redaction of the
//! outgoing text, the per-provider concurrency limit, the per-call timeout,
//! the whole-run deadline, the retry loop, and recording of the raw request
//! and response. It never logs request URLs or API keys.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError};
use super::limit::{Limit, Priority};
use super::record::Recorder;
use super::redact::redact_with;
use super::retry::{RetryPolicy, retry};
use crate::stats::Usage;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    /// Shared by every client of the same provider (`--max-concurrency`);
    /// waiting calls of later phases go first.
    pub limit: Arc<Limit>,
    pub settings: CallSettings,
}

/// The outcome of one logical call (all attempts).
pub struct CallOutcome {
    pub result: Result<Completion, ProviderError>,
    /// Summed over every attempt that returned usage.
    pub usage: Usage,
}

impl ModelClient {
    pub fn new(provider: Arc<dyn Provider>, limit: Arc<Limit>, settings: CallSettings) -> Self {
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
    /// `label` names the call in the saved run (`attack-paranoid_security`);
    /// `priority` orders it among calls waiting for a slot.
    pub async fn call(
        &self,
        label: &str,
        priority: Priority,
        request: CompletionRequest,
    ) -> CallOutcome {
        let secrets = self.settings.secrets.as_slice();
        let system = redact_with(&request.system, secrets);
        let context = redact_with(&request.context, secrets);
        let prompt = redact_with(&request.prompt, secrets);
        let n = system.count + context.count + prompt.count;
        if n > 0 {
            self.settings.redacted.fetch_add(n, Ordering::Relaxed);
        }
        let request = CompletionRequest {
            system: system.text,
            context: context.text,
            prompt: prompt.text,
            ..request
        };
        let s = &self.settings;
        let started = Instant::now();
        let attempts = retry(&s.retry, s.deadline, |_| {
            let request = &request;
            async move {
                let _permit = self.limit.acquire(priority).await;
                let mut timeout = s.timeout;
                if let Some(d) = s.deadline {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ProviderError::Deadline);
                    }
                    timeout = timeout.min(left);
                }
                // The message names the timeout the user set (`--timeout`),
                // whichever layer noticed it first: ours, or the HTTP
                // client's own, which knows no seconds.
                let timed_out = ProviderError::Timeout {
                    secs: s.timeout.as_secs().max(1),
                };
                match tokio::time::timeout(timeout, self.provider.complete(request)).await {
                    Ok(Ok(c)) if c.text.trim().is_empty() => Err(ProviderError::Empty),
                    Ok(Err(ProviderError::Timeout { .. })) if timeout < s.timeout => {
                        Err(ProviderError::Deadline)
                    }
                    Ok(Err(ProviderError::Timeout { .. })) => Err(timed_out),
                    Ok(r) => r,
                    Err(_) if timeout < s.timeout => Err(ProviderError::Deadline),
                    Err(_) => Err(timed_out),
                }
            }
        })
        .await;
        // Replies are redacted too, before they are parsed, saved under
        // runs/, stored or printed: a model may echo a secret back.
        let mut attempts = attempts;
        if let Ok(c) = &mut attempts.result {
            let r = redact_with(&c.text, secrets);
            if r.count > 0 {
                self.settings.redacted.fetch_add(r.count, Ordering::Relaxed);
                c.text = r.text;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::fake::FakeProvider;

    fn client(fake: Arc<FakeProvider>, permits: usize, settings: CallSettings) -> ModelClient {
        ModelClient::new(fake, Limit::new(permits), settings)
    }

    fn req(prompt: &str) -> CompletionRequest {
        CompletionRequest {
            system: "sys".into(),
            prompt: prompt.into(),
            ..CompletionRequest::default()
        }
    }

    #[tokio::test]
    async fn secrets_are_redacted_before_the_provider_sees_them() {
        let fake = Arc::new(FakeProvider::new("fake/m", |_| Ok("ok".into())));
        let settings = CallSettings {
            secrets: Arc::new(vec!["literal-key-value".into()]),
            ..CallSettings::default()
        };
        let c = client(fake.clone(), 1, settings.clone());
        let out = c
            .call(
                "t",
                Priority::Attack,
                req("password = hunter2hunter2 and literal-key-value"),
            )
            .await;
        assert_eq!(out.result.unwrap().text, "ok");
        let seen = fake.received.lock().unwrap()[0].prompt.clone();
        assert!(
            !seen.contains("hunter2hunter2") && !seen.contains("literal-key-value"),
            "{seen}"
        );
        assert_eq!(settings.redacted.load(Ordering::Relaxed), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_semaphore_bounds_calls_in_flight() {
        let fake = Arc::new(
            FakeProvider::new("fake/m", |_| Ok("ok".into())).with_delay(Duration::from_millis(100)),
        );
        let c = client(fake, 2, CallSettings::default());
        crate::provider::redact::redact("warm up the patterns");
        let t = Instant::now();
        futures::future::join_all(
            (0..4).map(|i| c.call("t", Priority::Attack, req(&i.to_string()))),
        )
        .await;
        // 4 calls, 2 at a time, 100 ms each: two waves.
        assert!(
            t.elapsed() >= Duration::from_millis(195),
            "{:?}",
            t.elapsed()
        );
    }

    #[tokio::test]
    async fn the_run_deadline_cuts_a_call_short_without_retrying() {
        let fake = Arc::new(
            FakeProvider::new("fake/m", |_| Ok("ok".into())).with_delay(Duration::from_secs(5)),
        );
        let settings = CallSettings {
            deadline: Some(Instant::now() + Duration::from_millis(150)),
            ..CallSettings::default()
        };
        let c = client(fake.clone(), 1, settings);
        let t = Instant::now();
        let out = c.call("t", Priority::Attack, req("x")).await;
        assert_eq!(out.result.unwrap_err(), ProviderError::Deadline);
        // The 5 s reply was not waited for, and never retried.
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(fake.calls() <= 1);
        assert_eq!(out.usage.calls, 1);
    }

    #[tokio::test]
    async fn a_timeout_names_the_configured_seconds() {
        // The provider's own timeout knows no seconds (litellm says 0).
        let fake = Arc::new(FakeProvider::new("fake/m", |_| {
            Err(ProviderError::Timeout { secs: 0 })
        }));
        let settings = CallSettings {
            timeout: Duration::from_secs(2),
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            ..CallSettings::default()
        };
        let out = client(fake, 1, settings)
            .call("t", Priority::Attack, req("x"))
            .await;
        let e = out.result.unwrap_err();
        assert_eq!(e, ProviderError::Timeout { secs: 2 });
        assert_eq!(e.to_string(), "timed out after 2s");
    }

    #[tokio::test]
    async fn the_shared_context_is_redacted_too() {
        let fake = Arc::new(FakeProvider::new("fake/m", |_| Ok("ok".into())));
        let c = client(fake.clone(), 1, CallSettings::default());
        let request = CompletionRequest {
            context: "api_key = abcdefghijklmnop0123456789\n".into(),
            ..req("x")
        };
        c.call("t", Priority::Attack, request).await.result.unwrap();
        let seen = fake.received.lock().unwrap()[0].context.clone();
        assert!(!seen.contains("abcdefghijklmnop0123456789"), "{seen}");
    }

    #[tokio::test]
    async fn an_empty_reply_is_an_error() {
        let fake = Arc::new(FakeProvider::new("fake/m", |_| Ok("  \n".into())));
        let out = client(fake, 1, CallSettings::default())
            .call("t", Priority::Attack, req("x"))
            .await;
        assert_eq!(out.result.unwrap_err(), ProviderError::Empty);
    }
}
