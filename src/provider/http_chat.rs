//! Chat calls we make over HTTP ourselves, for two simple, stable wire
//! formats where litellm-rs 0.9.0 loses something a run needs:
//!
//! - the OpenAI chat-completions API (`openai/`, `openrouter/`,
//!   `openai-compatible/`, and Gemini's and Ollama's OpenAI-compatible
//!   endpoints): litellm drops the `Retry-After` header of a 429 on every
//!   chat path (docs/litellm-retry-after.md), so a rate-limited run retried
//!   too early;
//! - the Anthropic messages API (`anthropic/`): litellm cannot put a
//!   `cache_control` breakpoint on a text block, so the spec could not be
//!   cached.
//!
//! One attempt per call (retries live in `retry.rs`, the timeout in
//! `client.rs`). Redirects are never followed, so a key only goes to the
//! host the invoker chose. Error messages are scrubbed of URLs and keys.
//! The cached part of the input is read from the reply's usage and priced
//! at the cached rate.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError, estimate_tokens};
use super::litellm::{cost, scrub};
use super::model_name::{ModelName, ProviderKind};
use crate::stats::Usage;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::OnceLock;
use std::time::Duration;

/// The Anthropic API version we speak.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAiChat,
    AnthropicMessages,
}

impl Wire {
    /// The providers we call directly, and how.
    pub fn of(kind: ProviderKind) -> Option<Wire> {
        match kind {
            ProviderKind::OpenAi
            | ProviderKind::OpenRouter
            | ProviderKind::OpenAiCompatible
            | ProviderKind::Gemini
            | ProviderKind::Ollama => Some(Wire::OpenAiChat),
            ProviderKind::Anthropic => Some(Wire::AnthropicMessages),
            _ => None,
        }
    }
}

pub struct HttpChatProvider {
    display: String,
    kind: ProviderKind,
    remote_model: String,
    api_key: Option<String>,
    base_url: String,
    wire: Wire,
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl HttpChatProvider {
    /// `None` when `name` is not a provider we call directly. `base_url`
    /// replaces the provider's default host (required for openai-compatible).
    pub fn new(
        name: &ModelName,
        api_key: Option<String>,
        base_url: Option<String>,
    ) -> Option<HttpChatProvider> {
        let wire = Wire::of(name.kind)?;
        let default = match name.kind {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::OpenRouter => "https://openrouter.ai/api/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            // Google's OpenAI-compatible endpoint (key as a bearer token,
            // never in the URL as the native API wants it).
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com/v1beta/openai",
            ProviderKind::Ollama => "http://localhost:11434",
            _ => "",
        };
        let mut base_url = base_url.unwrap_or_else(|| default.to_string());
        // Ollama's base is the server (`OLLAMA_API_BASE`); its OpenAI API is under /v1.
        if name.kind == ProviderKind::Ollama && !base_url.trim_end_matches('/').ends_with("/v1") {
            base_url = format!("{}/v1", base_url.trim_end_matches('/'));
        }
        Some(HttpChatProvider {
            display: name.to_string(),
            kind: name.kind,
            remote_model: name.model.clone(),
            api_key: api_key.filter(|k| !k.is_empty()),
            base_url,
            wire,
            client: OnceLock::new(),
        })
    }

    fn client(&self) -> Result<&reqwest::Client, ProviderError> {
        self.client
            .get_or_init(|| {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(Duration::from_secs(10))
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| ProviderError::Fatal(format!("cannot set up the HTTP client: {e}")))
    }

    /// The endpoint URL for this wire format.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.wire {
            Wire::OpenAiChat => format!("{base}/chat/completions"),
            Wire::AnthropicMessages if base.ends_with("/v1") => format!("{base}/messages"),
            Wire::AnthropicMessages => format!("{base}/v1/messages"),
        }
    }

    /// The JSON body of a request.
    pub fn body(&self, request: &CompletionRequest) -> Value {
        match self.wire {
            Wire::OpenAiChat => {
                // One user string: context first, so OpenAI's automatic prefix
                // caching (identical prefixes of 1,024 tokens or more) applies.
                let mut messages = Vec::new();
                if !request.system.is_empty() {
                    messages.push(json!({"role": "system", "content": request.system}));
                }
                messages.push(json!({"role": "user", "content": request.user_text()}));
                let mut body = json!({"model": self.remote_model, "messages": messages});
                if accepts_temperature(self.kind, &self.remote_model) {
                    body["temperature"] = json!(0.2);
                }
                if let Some(n) = request.max_tokens {
                    body["max_tokens"] = json!(n);
                }
                body
            }
            Wire::AnthropicMessages => {
                // The context block ends with a cache breakpoint: every call of
                // the run that sends the same system text and spec reads them
                // from the cache (when long enough for the model's minimum).
                let mut content = Vec::new();
                if !request.context.is_empty() {
                    content.push(json!({
                        "type": "text",
                        "text": request.context,
                        "cache_control": {"type": "ephemeral"}
                    }));
                }
                if !request.prompt.is_empty() || content.is_empty() {
                    content.push(json!({"type": "text", "text": request.prompt}));
                }
                let mut body = json!({
                    "model": self.remote_model,
                    "max_tokens": request.max_tokens.unwrap_or(4096),
                    "temperature": 0.2,
                    "messages": [{"role": "user", "content": content}],
                });
                if !request.system.is_empty() {
                    body["system"] = json!([{"type": "text", "text": request.system}]);
                }
                body
            }
        }
    }

    async fn run(&self, request: &CompletionRequest) -> Result<Completion, ProviderError> {
        let client = self.client()?;
        let mut builder = client.post(self.url()).json(&self.body(request));
        match (self.wire, &self.api_key) {
            (Wire::OpenAiChat, Some(key)) => builder = builder.bearer_auth(key),
            (Wire::AnthropicMessages, key) => {
                builder = builder.header("anthropic-version", ANTHROPIC_VERSION);
                if let Some(key) = key {
                    builder = builder.header("x-api-key", key);
                }
            }
            _ => {}
        }
        let key = self.api_key.as_deref();
        let response = builder.send().await.map_err(|e| transport_error(e, key))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let text = read_capped(response, key).await?;
        if !(200..300).contains(&status) {
            return Err(status_error(status, retry_after, &text, key));
        }
        let v: Value = serde_json::from_str(&text).map_err(|_| {
            ProviderError::Fatal(format!(
                "reply in an unknown shape (not JSON): {}",
                scrub(&text, key)
            ))
        })?;
        let (reply, mut usage) = match self.wire {
            Wire::OpenAiChat => openai_reply(&v),
            Wire::AnthropicMessages => anthropic_reply(&v),
        }
        .ok_or_else(|| {
            ProviderError::Fatal(format!("reply in an unknown shape: {}", scrub(&text, key)))
        })?;
        if usage.input_tokens + usage.output_tokens == 0 {
            usage.input_tokens = estimate_tokens(request.chars());
            usage.output_tokens = estimate_tokens(reply.chars().count());
            usage.cached_input_tokens = 0;
            usage.estimated = true;
        }
        usage.calls = 1;
        usage.cost_usd = cost(self.kind, &self.remote_model, &usage);
        Ok(Completion { text: reply, usage })
    }
}

/// The most a reply body may hold; a server sending more is refused
/// rather than read into memory.
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

async fn read_capped(
    mut response: reqwest::Response,
    key: Option<&str>,
) -> Result<String, ProviderError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(e, key))?
    {
        if body.len() + chunk.len() > MAX_REPLY_BYTES {
            return Err(ProviderError::Fatal(format!(
                "reply larger than {} MB",
                MAX_REPLY_BYTES / (1024 * 1024)
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) reject a
/// temperature; every other model of every OpenAI-format server takes one.
fn accepts_temperature(kind: ProviderKind, model: &str) -> bool {
    if kind != ProviderKind::OpenAi {
        return true;
    }
    let m = model.to_ascii_lowercase();
    let reasoning = m.starts_with("gpt-5")
        || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()));
    !reasoning
}

/// Text and usage of an OpenAI chat-completions reply.
fn openai_reply(v: &Value) -> Option<(String, Usage)> {
    let content = &v.get("choices")?.get(0)?.get("message")?["content"];
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let u = &v["usage"];
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let input = n(&u["prompt_tokens"]);
    let usage = Usage {
        input_tokens: input,
        output_tokens: n(&u["completion_tokens"]),
        // OpenAI: a part of prompt_tokens. Some compatible servers say it
        // at the top level of usage.
        cached_input_tokens: n(&u["prompt_tokens_details"]["cached_tokens"])
            .max(n(&u["cached_tokens"]))
            .min(input),
        ..Usage::default()
    };
    Some((text, usage))
}

/// Text and usage of an Anthropic messages reply. Anthropic's
/// `input_tokens` excludes the cached part; ours includes it.
fn anthropic_reply(v: &Value) -> Option<(String, Usage)> {
    let blocks = v.get("content")?.as_array()?;
    let text = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("");
    let u = &v["usage"];
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let read = n(&u["cache_read_input_tokens"]);
    let written = n(&u["cache_creation_input_tokens"]);
    let usage = Usage {
        input_tokens: n(&u["input_tokens"]) + read + written,
        output_tokens: n(&u["output_tokens"]),
        cached_input_tokens: read,
        ..Usage::default()
    };
    Some((text, usage))
}

/// `Retry-After` as seconds or an HTTP date, or `retry-after-ms`
/// (OpenAI), whichever is present; a date in the past is no wait.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = get("retry-after")?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// A wait stated in a 429's body: Google's `RetryInfo` (`"retryDelay":
/// "37s"`, also inside a list) or `retry_after` seconds.
fn body_retry_after(body: &str) -> Option<Duration> {
    fn find(v: &Value) -> Option<Duration> {
        match v {
            Value::Object(m) => {
                if let Some(d) = m.get("retryDelay").and_then(Value::as_str)
                    && let Some(secs) = d.trim().strip_suffix('s')
                    && let Ok(secs) = secs.parse::<f64>()
                    && secs.is_finite()
                    && secs >= 0.0
                {
                    return Some(Duration::from_secs_f64(secs));
                }
                if let Some(secs) = m.get("retry_after").and_then(Value::as_f64)
                    && secs.is_finite()
                    && secs >= 0.0
                {
                    return Some(Duration::from_secs_f64(secs));
                }
                m.values().find_map(find)
            }
            Value::Array(a) => a.iter().find_map(find),
            _ => None,
        }
    }
    find(&serde_json::from_str::<Value>(body).ok()?)
}

/// The error of a non-2xx reply.
fn status_error(
    status: u16,
    retry_after: Option<Duration>,
    body: &str,
    key: Option<&str>,
) -> ProviderError {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["error"].as_str())
                .or_else(|| v["message"].as_str())
                .map(str::to_string)
        })
        .or_else(|| {
            // Google wraps its error in a list.
            serde_json::from_str::<Value>(body)
                .ok()?
                .get(0)?
                .get("error")?
                .get("message")?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.to_string());
    let message = scrub(&message, key);
    match status {
        429 => ProviderError::RateLimited {
            retry_after: retry_after.or_else(|| body_retry_after(body)),
            message,
        },
        // 408 request timeout, 409 conflict (OpenAI), 5xx and Anthropic's
        // 529 "overloaded" are worth another try.
        408 | 409 | 500..=599 => ProviderError::Server { status, message },
        401 | 403 => ProviderError::Fatal(format!("not authorised ({status}): {message}")),
        _ => ProviderError::Fatal(format!("request refused ({status}): {message}")),
    }
}

fn transport_error(e: reqwest::Error, key: Option<&str>) -> ProviderError {
    if e.is_timeout() {
        // client.rs names the configured timeout.
        return ProviderError::Timeout { secs: 0 };
    }
    let e = e.without_url();
    let mut message = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    ProviderError::Connection(scrub(&message, key))
}

impl Provider for HttpChatProvider {
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
    use reqwest::header::{HeaderMap, HeaderValue};

    fn provider(kind: ProviderKind, model: &str, base: Option<&str>) -> HttpChatProvider {
        HttpChatProvider::new(
            &ModelName::new(kind, model),
            Some("k".into()),
            base.map(str::to_string),
        )
        .unwrap()
    }

    fn request() -> CompletionRequest {
        CompletionRequest {
            system: "sys".into(),
            context: "SPEC\n".into(),
            prompt: "do it".into(),
            max_tokens: None,
        }
    }

    #[test]
    fn every_api_provider_has_its_endpoint() {
        assert!(
            HttpChatProvider::new(&ModelName::new(ProviderKind::Codex, "c"), None, None).is_none()
        );
        assert_eq!(
            provider(ProviderKind::Gemini, "gemini-2.5-flash", None).url(),
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
        );
        assert_eq!(
            provider(ProviderKind::Ollama, "llama3", None).url(),
            "http://localhost:11434/v1/chat/completions"
        );
        assert_eq!(
            provider(
                ProviderKind::Ollama,
                "llama3",
                Some("http://10.0.0.2:11434/v1")
            )
            .url(),
            "http://10.0.0.2:11434/v1/chat/completions"
        );
        assert_eq!(
            provider(ProviderKind::OpenAi, "gpt-4o", None).url(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            provider(ProviderKind::Anthropic, "c", None).url(),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            provider(
                ProviderKind::OpenAiCompatible,
                "m",
                Some("http://127.0.0.1:9/v1/")
            )
            .url(),
            "http://127.0.0.1:9/v1/chat/completions"
        );
    }

    #[test]
    fn anthropic_marks_the_context_as_a_cache_breakpoint() {
        let b = provider(ProviderKind::Anthropic, "claude-x", None).body(&request());
        let content = b["messages"][0]["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        assert_eq!(content[0]["text"], "SPEC\n");
        assert_eq!(content[0]["cache_control"]["type"], "ephemeral");
        assert!(content[1].get("cache_control").is_none());
        assert_eq!(b["system"][0]["text"], "sys");
        // No context: no breakpoint.
        let b = provider(ProviderKind::Anthropic, "claude-x", None).body(&CompletionRequest {
            context: String::new(),
            ..request()
        });
        assert!(!b.to_string().contains("cache_control"));
    }

    #[test]
    fn openai_sends_context_then_prompt_as_one_user_message() {
        let b = provider(ProviderKind::OpenAiCompatible, "m", Some("http://x")).body(&request());
        assert_eq!(b["messages"][0]["content"], "sys");
        assert_eq!(b["messages"][1]["content"], "SPEC\ndo it");
        assert_eq!(b["temperature"], 0.2);
        let b = provider(ProviderKind::OpenAi, "o3-mini", None).body(&request());
        assert!(b.get("temperature").is_none());
        let b = provider(ProviderKind::OpenAi, "gpt-4o-mini", None).body(&request());
        assert_eq!(b["temperature"], 0.2);
    }

    #[test]
    fn cached_tokens_are_read_from_both_usage_shapes() {
        let (_, u) = openai_reply(&json!({
            "choices": [{"message": {"content": "hi"}}],
            "usage": {"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1536}}
        }))
        .unwrap();
        assert_eq!((u.input_tokens, u.cached_input_tokens), (2000, 1536));
        let (t, u) = anthropic_reply(&json!({
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 50, "cache_read_input_tokens": 1500, "cache_creation_input_tokens": 0, "output_tokens": 7}
        }))
        .unwrap();
        assert_eq!(t, "hi");
        assert_eq!(
            (u.input_tokens, u.cached_input_tokens, u.output_tokens),
            (1550, 1500, 7)
        );
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_or_a_date() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("4"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(4)));
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(1500)));
        let mut h = HeaderMap::new();
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc2822();
        h.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let d = retry_after(&h).unwrap();
        assert!(
            d > Duration::from_secs(25) && d <= Duration::from_secs(30),
            "{d:?}"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn a_wait_in_the_body_counts_when_the_header_has_none() {
        // Google: a list with RetryInfo in the details.
        let google = r#"[{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}]"#;
        let e = status_error(429, None, google, None);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(37)));
        assert!(e.to_string().contains("Resource has been exhausted"), "{e}");
        let e = status_error(429, None, r#"{"error": {"retry_after": 3}}"#, None);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(3)));
        // The header wins over the body.
        let e = status_error(429, Some(Duration::from_secs(1)), google, None);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(1)));
        assert_eq!(
            status_error(429, None, "slow down", None).retry_after(),
            None
        );
    }

    #[test]
    fn statuses_map_to_retryable_or_fatal_errors() {
        let e = status_error(
            429,
            Some(Duration::from_secs(2)),
            r#"{"error": {"message": "slow down"}}"#,
            None,
        );
        assert_eq!(e.retry_after(), Some(Duration::from_secs(2)));
        assert!(e.to_string().contains("slow down"));
        assert!(status_error(529, None, "overloaded", None).is_retryable());
        let e = status_error(
            401,
            None,
            "bad key sk-secret-123456789",
            Some("sk-secret-123456789"),
        );
        assert!(!e.is_retryable());
        assert!(!e.to_string().contains("sk-secret-123456789"));
    }
}
