//! Model names as users write them: `PROVIDER/MODEL` (`openai/gpt-4o-mini`,
//! `codex/gpt-5.2-codex`) or `offline`. Parsing only; nothing here touches
//! the network, the environment or PATH.

use crate::error::UsageError;
use std::fmt;

/// Where a model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProviderKind {
    OpenAi,
    Anthropic,
    Gemini,
    OpenRouter,
    Ollama,
    OpenAiCompatible,
    Codex,
    GeminiCli,
    ClaudeCli,
    Offline,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 10] = [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::OpenRouter,
        ProviderKind::Ollama,
        ProviderKind::OpenAiCompatible,
        ProviderKind::Codex,
        ProviderKind::GeminiCli,
        ProviderKind::ClaudeCli,
        ProviderKind::Offline,
    ];

    /// The prefix before the slash.
    pub fn prefix(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::OpenRouter => "openrouter",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Codex => "codex",
            ProviderKind::GeminiCli => "gemini-cli",
            ProviderKind::ClaudeCli => "claude-cli",
            ProviderKind::Offline => "offline",
        }
    }

    /// CLI subprocess providers cost nothing per call.
    pub fn is_cli(self) -> bool {
        matches!(
            self,
            ProviderKind::Codex | ProviderKind::GeminiCli | ProviderKind::ClaudeCli
        )
    }

    /// Providers reached over an HTTP API (not a CLI, not offline).
    pub fn is_api(self) -> bool {
        !self.is_cli() && self != ProviderKind::Offline
    }

    /// The executable a CLI provider runs.
    pub fn program(self) -> Option<&'static str> {
        match self {
            ProviderKind::Codex => Some("codex"),
            ProviderKind::GeminiCli => Some("gemini"),
            ProviderKind::ClaudeCli => Some("claude"),
            _ => None,
        }
    }

    /// The environment variable holding the API key, for API providers that need one.
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
            ProviderKind::OpenRouter => Some("OPENROUTER_API_KEY"),
            _ => None,
        }
    }
}

/// A parsed model name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelName {
    pub kind: ProviderKind,
    /// The part after the slash (empty for `offline`).
    pub model: String,
}

impl ModelName {
    pub fn offline() -> ModelName {
        ModelName {
            kind: ProviderKind::Offline,
            model: String::new(),
        }
    }

    pub fn new(kind: ProviderKind, model: &str) -> ModelName {
        ModelName {
            kind,
            model: model.to_string(),
        }
    }

    pub fn parse(s: &str) -> Result<ModelName, UsageError> {
        let s = s.trim();
        if s == "offline" || s == "offline/" {
            return Ok(ModelName::offline());
        }
        let known = || {
            ProviderKind::ALL
                .iter()
                .map(|k| k.prefix())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((prefix, model)) = s.split_once('/') else {
            return Err(UsageError::Invalid(format!(
                "model `{s}` must be PROVIDER/MODEL or `offline` (providers: {})",
                known()
            )));
        };
        let Some(kind) = ProviderKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix && *k != ProviderKind::Offline)
        else {
            return Err(UsageError::Invalid(format!(
                "unknown model provider `{prefix}` in `{s}` (known: {})",
                known()
            )));
        };
        if model.trim().is_empty() || model.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(UsageError::Invalid(format!(
                "model `{s}` has an empty or malformed model part"
            )));
        }
        Ok(ModelName {
            kind,
            model: model.to_string(),
        })
    }

    pub fn is_offline(&self) -> bool {
        self.kind == ProviderKind::Offline
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_offline() {
            f.write_str("offline")
        } else {
            write!(f, "{}/{}", self.kind.prefix(), self.model)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_prefix_and_round_trips() {
        for kind in ProviderKind::ALL {
            if kind == ProviderKind::Offline {
                continue;
            }
            let s = format!("{}/some-model:7b", kind.prefix());
            let m = ModelName::parse(&s).unwrap();
            assert_eq!(m.kind, kind);
            assert_eq!(m.model, "some-model:7b");
            assert_eq!(m.to_string(), s);
        }
        // openrouter models carry their own slash.
        let m = ModelName::parse("openrouter/anthropic/claude-3.5-haiku").unwrap();
        assert_eq!(m.model, "anthropic/claude-3.5-haiku");
        assert!(ModelName::parse("offline").unwrap().is_offline());
    }

    #[test]
    fn rejects_bad_names() {
        for bad in ["gpt-4o", "nope/x", "openai/", "openai/a b", "offline/x"] {
            assert!(ModelName::parse(bad).is_err(), "{bad}");
        }
    }
}
