//! A deterministic in-process provider for tests and benchmarks: replies
//! come from a closure over the request, after an optional delay, and every
//! request it receives is kept so tests can check what would have left the
//! machine. No I/O.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError, estimate_tokens};
use crate::stats::Usage;
use futures::future::BoxFuture;
use std::sync::Mutex;
use std::time::Duration;

type Responder = dyn Fn(&CompletionRequest) -> Result<String, ProviderError> + Send + Sync;

pub struct FakeProvider {
    model: String,
    responder: Box<Responder>,
    delay: Duration,
    /// Every request received, in order.
    pub received: Mutex<Vec<CompletionRequest>>,
}

impl FakeProvider {
    pub fn new(
        model: &str,
        responder: impl Fn(&CompletionRequest) -> Result<String, ProviderError> + Send + Sync + 'static,
    ) -> FakeProvider {
        FakeProvider {
            model: model.to_string(),
            responder: Box::new(responder),
            delay: Duration::ZERO,
            received: Mutex::new(Vec::new()),
        }
    }

    pub fn with_delay(mut self, delay: Duration) -> FakeProvider {
        self.delay = delay;
        self
    }

    pub fn calls(&self) -> usize {
        self.received.lock().map(|r| r.len()).unwrap_or(0)
    }
}

impl Provider for FakeProvider {
    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            if let Ok(mut r) = self.received.lock() {
                r.push(request.clone());
            }
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            let text = (self.responder)(request)?;
            let usage = Usage {
                calls: 1,
                input_tokens: estimate_tokens(request.chars()),
                output_tokens: estimate_tokens(text.chars().count()),
                cost_usd: 0.0,
                estimated: true,
                ..Usage::default()
            };
            Ok(Completion { text, usage })
        })
    }
}
