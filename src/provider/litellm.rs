//! litellm-rs 0.9: the price table (`cost`) for every API call, and a
//! `Provider` through a litellm router for any API provider that
//! `http_chat.rs` does not speak (none today: litellm-rs 0.9.0 drops
//! `Retry-After` and cannot mark a cache breakpoint on a text block, see
//! docs/litellm-retry-after.md), wrapped behind our `Provider` trait because
//! its API moves between minor versions.
//!
//! Each provider builds its own litellm router on first use (never the
//! process-global runtime), with the router's and the provider's retries
//! off (retries live in `retry.rs`), no per-deployment concurrency cap (our
//! semaphore in `client.rs` is the limit), no circuit breaker tripping on a
//! few failures, and `PrivateNetwork` endpoint access only when the user's
//! base URL is loopback or private. Error messages are scrubbed of URLs
//! (Gemini puts the key in the query string) and of the key itself.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError};
use super::model_name::{ModelName, ProviderKind};
use crate::stats::Usage;
use futures::future::BoxFuture;
use litellm_rs::Router as _;
use litellm_rs::config::models::provider::ProviderConfig;
use litellm_rs::core::completion::{CompletionOptions, DefaultRouter};
use litellm_rs::core::net::ProviderEndpointAccess;
use litellm_rs::core::router::{RouterConfig, RuntimeBinding, UnifiedRouter};
use regex::Regex;
use std::net::IpAddr;
use std::sync::{Arc, LazyLock};
use tokio::sync::OnceCell;

pub struct LitellmProvider {
    display: String,
    kind: ProviderKind,
    remote_model: String,
    api_key: Option<String>,
    base_url: Option<String>,
    timeout_secs: u64,
    router: OnceCell<Result<Arc<DefaultRouter>, String>>,
}

impl LitellmProvider {
    pub fn new(
        name: &ModelName,
        api_key: Option<String>,
        base_url: Option<String>,
        timeout_secs: u64,
    ) -> LitellmProvider {
        LitellmProvider {
            display: name.to_string(),
            kind: name.kind,
            remote_model: name.model.clone(),
            api_key,
            base_url,
            timeout_secs,
            router: OnceCell::new(),
        }
    }

    fn provider_type(&self) -> &'static str {
        match self.kind {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::Ollama => "ollama",
            _ => "openai_compatible",
        }
    }

    /// The litellm provider configuration for this run.
    pub fn provider_config(&self) -> ProviderConfig {
        let private = self.base_url.as_deref().is_some_and(is_private_url);
        ProviderConfig {
            name: format!("gauntlet-{}", self.provider_type()),
            provider_type: self.provider_type().to_string(),
            api_key: self.api_key.clone().unwrap_or_default(),
            base_url: self.base_url.clone(),
            endpoint_access: if private {
                ProviderEndpointAccess::PrivateNetwork
            } else {
                ProviderEndpointAccess::PublicOnly
            },
            // Our semaphore is the limit; litellm's default would fail the
            // excess requests instantly.
            max_concurrent_requests: 0,
            rpm: 0,
            tpm: 0,
            // litellm's Anthropic client insists on a 10 s connect timeout and
            // a request timeout no shorter; our own per-call timeout in
            // client.rs is the one that counts.
            timeout: if self.kind == ProviderKind::Anthropic {
                self.timeout_secs.max(10)
            } else {
                self.timeout_secs.max(1)
            },
            // Retries happen once, in retry.rs.
            max_retries: 0,
            models: vec![self.remote_model.clone()],
            settings: if self.kind == ProviderKind::Anthropic {
                // New Claude models must work before litellm's list knows them.
                [(
                    "allow_unknown_models".to_string(),
                    serde_json::Value::Bool(true),
                )]
                .into_iter()
                .collect()
            } else {
                Default::default()
            },
            ..ProviderConfig::default()
        }
    }

    async fn router(&self) -> Result<Arc<DefaultRouter>, ProviderError> {
        let r = self
            .router
            .get_or_init(|| async {
                let config = RouterConfig {
                    num_retries: 0,
                    max_fallbacks: 0,
                    // One bad reply must not put the only deployment in cooldown.
                    allowed_fails: u32::MAX,
                    min_requests: u32::MAX,
                    // A 429 or timeout would otherwise bench the deployment;
                    // our retry loop does the waiting (Retry-After included).
                    cooldown_time_secs: 0,
                    timeout_secs: self.timeout_secs.max(1),
                    enable_pre_call_checks: false,
                    ..RouterConfig::default()
                };
                UnifiedRouter::from_gateway_config(&[self.provider_config()], Some(config))
                    .await
                    .map(|router| {
                        Arc::new(DefaultRouter::from_runtime(RuntimeBinding::new(Arc::new(
                            router,
                        ))))
                    })
                    .map_err(|e| scrub(&e.to_string(), self.api_key.as_deref()))
            })
            .await;
        r.clone()
            .map_err(|e| ProviderError::Fatal(format!("cannot set up {}: {e}", self.kind.prefix())))
    }

    async fn run(&self, request: &CompletionRequest) -> Result<Completion, ProviderError> {
        let router = self.router().await?;
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(litellm_rs::system_message(request.system.clone()));
        }
        messages.push(litellm_rs::user_message(request.user_text()));
        let options = CompletionOptions {
            max_tokens: request.max_tokens,
            temperature: Some(0.2),
            ..CompletionOptions::default()
        };
        let response = router
            .complete(&self.remote_model, messages, options)
            .await
            .map_err(|e| classify(e, self.api_key.as_deref()))?;
        let text = response
            .choices
            .first()
            .and_then(|c| c.message.content.as_ref())
            .map(|c| match c {
                litellm_rs::MessageContent::Text(t) => t.clone(),
                litellm_rs::MessageContent::Parts(parts) => parts
                    .iter()
                    .filter_map(|p| match p {
                        litellm_rs::ContentPart::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(""),
            })
            .unwrap_or_default();
        let mut usage = Usage {
            calls: 1,
            ..Usage::default()
        };
        match &response.usage {
            Some(u) if u.prompt_tokens + u.completion_tokens > 0 => {
                usage.input_tokens = u.prompt_tokens as u64;
                usage.output_tokens = u.completion_tokens as u64;
                usage.cached_input_tokens = u
                    .prompt_tokens_details
                    .as_ref()
                    .and_then(|d| d.cached_tokens.or(d.cache_read_tokens))
                    .map_or(0, u64::from)
                    .min(usage.input_tokens);
            }
            _ => {
                usage.input_tokens = super::completion::estimate_tokens(request.chars());
                usage.output_tokens = super::completion::estimate_tokens(text.chars().count());
                usage.estimated = true;
            }
        }
        usage.cost_usd = cost(self.kind, &self.remote_model, &usage);
        Ok(Completion { text, usage })
    }
}

/// Cost from litellm's price table; local servers and unknown models are $0.
/// `cached_input_tokens` (a part of `input_tokens`) are priced at the
/// model's cache-read rate when the table has one.
pub fn cost(kind: ProviderKind, model: &str, usage: &Usage) -> f64 {
    let provider = match kind {
        ProviderKind::OpenAi => "openai",
        ProviderKind::Anthropic => "anthropic",
        ProviderKind::Gemini => "gemini",
        ProviderKind::OpenRouter => "openrouter",
        _ => return 0.0,
    };
    let mut tokens = litellm_rs::core::cost::types::UsageTokens::new(
        usage.input_tokens.min(u32::MAX as u64) as u32,
        usage.output_tokens.min(u32::MAX as u64) as u32,
    );
    if usage.cached_input_tokens > 0 {
        tokens.cached_tokens = Some(
            usage
                .cached_input_tokens
                .min(usage.input_tokens)
                .min(u32::MAX as u64) as u32,
        );
    }
    litellm_rs::core::cost::calculator::generic_cost_per_token(model, &tokens, provider)
        .map(|b| b.total_cost)
        .unwrap_or(0.0)
}

/// Is this base URL on this machine or a private network?
pub fn is_private_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(h) = host_port.strip_prefix('[') {
        h.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.eq_ignore_ascii_case("localhost") || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => {
            ip.is_loopback()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
        }
        Err(_) => false,
    }
}

static URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"https?://[^\s"')]+"#).unwrap());

/// Removes URLs (which may carry a key in the query) and the key itself.
pub(crate) fn scrub(message: &str, key: Option<&str>) -> String {
    let mut s = URL.replace_all(message, "<url>").into_owned();
    if let Some(k) = key.filter(|k| !k.is_empty()) {
        s = s.replace(k, "[REDACTED_API_KEY]");
    }
    let s = super::redact::redact(&s).text;
    s.chars().take(500).collect()
}

/// litellm's timeouts carry no seconds; `client.rs` puts in the timeout
/// the user set, so `secs: 0` never reaches a message.
fn classify(e: litellm_rs::LiteLLMError, key: Option<&str>) -> ProviderError {
    use litellm_rs::GatewayError as G;
    use litellm_rs::ProviderError as P;
    let msg = |m: &str| scrub(m, key);
    match e {
        G::Provider(p) => match &p {
            P::RateLimit {
                retry_after,
                message,
                ..
            } => ProviderError::RateLimited {
                retry_after: retry_after.map(std::time::Duration::from_secs),
                message: msg(message),
            },
            P::ApiError {
                status, message, ..
            } if *status == 429 => ProviderError::RateLimited {
                retry_after: None,
                message: msg(message),
            },
            P::ApiError {
                status, message, ..
            } if *status >= 500 => ProviderError::Server {
                status: *status,
                message: msg(message),
            },
            P::ProviderUnavailable { message, .. } => ProviderError::Server {
                status: 503,
                message: msg(message),
            },
            P::Timeout { .. } => ProviderError::Timeout { secs: 0 },
            P::Network { message, .. } => ProviderError::Connection(msg(message)),
            other => ProviderError::Fatal(msg(&other.to_string())),
        },
        G::RateLimit {
            message,
            retry_after,
            ..
        } => ProviderError::RateLimited {
            retry_after: retry_after.map(std::time::Duration::from_secs),
            message: msg(&message),
        },
        G::Timeout(m) => {
            let _ = m;
            ProviderError::Timeout { secs: 0 }
        }
        G::Network(m) => ProviderError::Connection(msg(&m)),
        G::HttpClient(e) if e.is_timeout() => ProviderError::Timeout { secs: 0 },
        G::HttpClient(e) => ProviderError::Connection(msg(&e.without_url().to_string())),
        G::Unavailable(m) => ProviderError::Server {
            status: 503,
            message: msg(&m),
        },
        other => ProviderError::Fatal(msg(&other.to_string())),
    }
}

impl Provider for LitellmProvider {
    fn model(&self) -> &str {
        &self.display
    }

    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(self.run(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_only_for_local_hosts() {
        for u in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434",
            "http://10.1.2.3/v1",
            "http://192.168.0.5:1234",
            "http://[::1]:8000/v1",
            "http://user:pw@172.16.0.1/v1",
        ] {
            assert!(is_private_url(u), "{u}");
        }
        for u in [
            "https://api.openai.com/v1",
            "https://8.8.8.8/v1",
            "http://localhost.evil.com/",
            "https://openrouter.ai/api/v1",
        ] {
            assert!(!is_private_url(u), "{u}");
        }
    }

    #[test]
    fn scrub_removes_urls_and_keys() {
        let s = scrub(
            "error sending request for url (https://generativelanguage.googleapis.com/v1/x?key=AIzaSECRET) with sk-mykey-123456789",
            Some("sk-mykey-123456789"),
        );
        assert!(!s.contains("AIzaSECRET"));
        assert!(!s.contains("googleapis"));
        assert!(!s.contains("sk-mykey"));
    }

    #[test]
    fn known_models_have_a_price_and_local_ones_are_free() {
        let u = Usage {
            calls: 1,
            input_tokens: 1_000_000,
            output_tokens: 0,
            cost_usd: 0.0,
            estimated: false,
            ..Usage::default()
        };
        assert!(cost(ProviderKind::OpenAi, "gpt-4o-mini", &u) > 0.0);
        assert_eq!(cost(ProviderKind::Ollama, "llama3", &u), 0.0);
    }

    #[test]
    fn cached_input_is_priced_at_the_cached_rate() {
        let full = Usage {
            calls: 1,
            input_tokens: 1_000_000,
            ..Usage::default()
        };
        let cached = Usage {
            cached_input_tokens: 800_000,
            ..full.clone()
        };
        for (kind, model) in [
            (ProviderKind::OpenAi, "gpt-4o-mini"),
            (ProviderKind::Anthropic, "claude-3-5-haiku-20241022"),
        ] {
            let (a, b) = (cost(kind, model, &full), cost(kind, model, &cached));
            assert!(a > 0.0 && b > 0.0, "{model}: {a} {b}");
            // 80% of the input at a cache rate of at most half price.
            assert!(b < a * 0.65, "{model}: {a} {b}");
        }
    }
}
