//! The `Provider` trait every model backend implements (litellm-rs API
//! providers, the codex / gemini / claude CLIs, the test fake), with its
//! request, reply and error types. A provider makes exactly one attempt:
//! retries, timeouts, concurrency limits, redaction and recording live in
//! `client.rs`, in one place, so they never stack.

use crate::stats::Usage;
use futures::future::BoxFuture;
use std::time::Duration;
use thiserror::Error;

/// One request to a model: a system prompt and a user message made of a
/// shared `context` followed by the call's own `prompt`.
///
/// Cache-first layout: `system` and `context` (the numbered spec) are the
/// same for every call of a run, so providers with prompt caching serve
/// them from cache after the first call. A backend that sends one string
/// sends `context` then `prompt` (`user_text`); the Anthropic backend marks
/// the end of `context` as a cache breakpoint.
#[derive(Debug, Clone, Default)]
pub struct CompletionRequest {
    pub system: String,
    /// The run-wide part of the user message (may be empty).
    pub context: String,
    /// The call's own instructions and data, after `context`.
    pub prompt: String,
    /// Upper bound on the reply length, when the backend supports one.
    pub max_tokens: Option<u32>,
}

impl CompletionRequest {
    /// Input size in characters (for chars/4 token estimates).
    pub fn chars(&self) -> usize {
        self.system.chars().count() + self.context.chars().count() + self.prompt.chars().count()
    }

    /// The whole user message: `context` then `prompt`.
    pub fn user_text(&self) -> String {
        let mut s = String::with_capacity(self.context.len() + self.prompt.len());
        s.push_str(&self.context);
        s.push_str(&self.prompt);
        s
    }
}

/// A model's reply and what it cost.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    pub text: String,
    /// `calls` is 1; tokens as reported, or estimated (and marked) when the
    /// backend reports none.
    pub usage: Usage,
}

/// Why one attempt failed. Messages never contain API keys or request URLs.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum ProviderError {
    #[error("rate limited (429){}: {message}", retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("server error ({status}): {message}")]
    Server { status: u16, message: String },
    /// `secs` is the per-call timeout that ran out (`--timeout`).
    #[error("timed out after {secs}s")]
    Timeout { secs: u64 },
    #[error("connection failed: {0}")]
    Connection(String),
    #[error("run deadline reached before the call could finish")]
    Deadline,
    #[error("empty reply")]
    Empty,
    /// Not worth retrying: bad key, unknown model, bad request, a CLI that
    /// is missing or crashed, output in an unknown shape.
    #[error("{0}")]
    Fatal(String),
}

impl ProviderError {
    /// 429, 5xx, timeouts and connection errors are retried; the rest not.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Timeout { .. }
                | ProviderError::Connection(_)
        )
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// One model backend. `complete` makes a single attempt.
pub trait Provider: Send + Sync {
    /// The full model name as written by the user (`openai/gpt-4o-mini`).
    fn model(&self) -> &str;

    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>>;
}

/// Token estimate for text when a backend reports none: chars / 4, rounded up.
pub fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}
