//! Which model runs each role when the user names none, following the
//! seed's priority: attackers prefer a $0 CLI on PATH (gemini-cli, then
//! claude-cli, then codex), else the cheapest API model whose key is set;
//! evaluators prefer the strongest CLI (codex, then gemini-cli, then
//! claude-cli), else the strongest API model with a key; else `offline`.
//! Looks at PATH and the environment only through `Probe`, so tests decide
//! what is installed. Never calls a model.

use super::model_name::{ModelName, ProviderKind};

/// What is installed and configured.
pub trait Probe {
    fn on_path(&self, program: &str) -> bool;
    fn var(&self, name: &str) -> Option<String>;
}

/// The real PATH and environment.
pub struct SystemProbe;

impl Probe for SystemProbe {
    fn on_path(&self, program: &str) -> bool {
        let Some(path) = std::env::var_os("PATH") else {
            return false;
        };
        std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)))
    }

    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

fn is_executable(p: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file() || p.with_extension("exe").is_file() || p.with_extension("cmd").is_file()
    }
}

/// CLI attackers, cheapest first.
const CLI_ATTACKERS: [(ProviderKind, &str); 3] = [
    (ProviderKind::GeminiCli, "gemini-3-flash-preview"),
    (ProviderKind::ClaudeCli, "haiku"),
    (ProviderKind::Codex, "gpt-5.2-codex"),
];
/// API attackers, cheapest first.
const API_ATTACKERS: [(ProviderKind, &str); 4] = [
    (ProviderKind::Gemini, "gemini-2.5-flash-lite"),
    (ProviderKind::OpenAi, "gpt-4o-mini"),
    (ProviderKind::OpenRouter, "google/gemini-2.5-flash-lite"),
    (ProviderKind::Anthropic, "claude-3-5-haiku-latest"),
];
/// CLI evaluators, strongest first.
const CLI_EVALUATORS: [(ProviderKind, &str); 3] = [
    (ProviderKind::Codex, "gpt-5.2-codex"),
    (ProviderKind::GeminiCli, "gemini-3-pro-preview"),
    (ProviderKind::ClaudeCli, "opus"),
];
/// API evaluators, strongest first.
const API_EVALUATORS: [(ProviderKind, &str); 4] = [
    (ProviderKind::Anthropic, "claude-opus-4-1"),
    (ProviderKind::OpenAi, "gpt-5"),
    (ProviderKind::Gemini, "gemini-2.5-pro"),
    (ProviderKind::OpenRouter, "anthropic/claude-opus-4.1"),
];
/// At most this many CLI evaluators are picked automatically.
const MAX_AUTO_EVALUATORS: usize = 2;

/// A choice and the reason, for stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice<T> {
    pub value: T,
    pub why: String,
}

fn available(probe: &dyn Probe, kind: ProviderKind) -> bool {
    if let Some(p) = kind.program() {
        return probe.on_path(p);
    }
    kind.key_var().is_some_and(|v| probe.var(v).is_some())
}

fn reason(kind: ProviderKind) -> String {
    match (kind.program(), kind.key_var()) {
        (Some(p), _) => format!("`{p}` found on PATH, $0"),
        (_, Some(v)) => format!("{v} is set"),
        _ => String::new(),
    }
}

pub fn attacker(probe: &dyn Probe) -> Choice<ModelName> {
    for (kind, model) in CLI_ATTACKERS.iter().chain(API_ATTACKERS.iter()) {
        if available(probe, *kind) {
            return Choice {
                value: ModelName::new(*kind, model),
                why: format!("cheapest available: {}", reason(*kind)),
            };
        }
    }
    Choice {
        value: ModelName::offline(),
        why: "no model CLI on PATH and no API key set".to_string(),
    }
}

pub fn evaluators(probe: &dyn Probe) -> Choice<Vec<ModelName>> {
    let clis: Vec<ModelName> = CLI_EVALUATORS
        .iter()
        .filter(|(k, _)| available(probe, *k))
        .take(MAX_AUTO_EVALUATORS)
        .map(|(k, m)| ModelName::new(*k, m))
        .collect();
    if !clis.is_empty() {
        let why = clis
            .iter()
            .map(|m| reason(m.kind))
            .collect::<Vec<_>>()
            .join("; ");
        return Choice {
            value: clis,
            why: format!("strongest CLI available: {why}"),
        };
    }
    for (kind, model) in API_EVALUATORS {
        if available(probe, kind) {
            return Choice {
                value: vec![ModelName::new(kind, model)],
                why: format!("strongest API available: {}", reason(kind)),
            };
        }
    }
    Choice {
        value: vec![ModelName::offline()],
        why: "no model CLI on PATH and no API key set".to_string(),
    }
}

/// The final boss: Opus through the claude CLI or API when available, else
/// the first evaluator.
pub fn final_boss(probe: &dyn Probe, first_evaluator: &ModelName) -> Choice<ModelName> {
    for (kind, model) in [
        (ProviderKind::ClaudeCli, "opus"),
        (ProviderKind::Anthropic, "claude-opus-4-1"),
    ] {
        if !first_evaluator.is_offline() && available(probe, kind) {
            return Choice {
                value: ModelName::new(kind, model),
                why: format!("the most capable model available: {}", reason(kind)),
            };
        }
    }
    Choice {
        value: first_evaluator.clone(),
        why: "same as the first evaluator".to_string(),
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[derive(Default)]
    pub struct FakeProbe {
        pub programs: HashSet<&'static str>,
        pub vars: HashMap<&'static str, &'static str>,
    }

    impl Probe for FakeProbe {
        fn on_path(&self, program: &str) -> bool {
            self.programs.contains(program)
        }
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).map(|v| v.to_string())
        }
    }

    #[test]
    fn nothing_installed_means_offline() {
        let p = FakeProbe::default();
        assert!(attacker(&p).value.is_offline());
        assert_eq!(evaluators(&p).value, vec![ModelName::offline()]);
        assert!(final_boss(&p, &ModelName::offline()).value.is_offline());
    }

    #[test]
    fn cli_priority_differs_by_role() {
        let p = FakeProbe {
            programs: ["codex", "claude", "gemini"].into_iter().collect(),
            ..FakeProbe::default()
        };
        assert_eq!(attacker(&p).value.kind, ProviderKind::GeminiCli);
        let ev = evaluators(&p).value;
        assert_eq!(
            ev.iter().map(|m| m.kind).collect::<Vec<_>>(),
            vec![ProviderKind::Codex, ProviderKind::GeminiCli]
        );
        let p = FakeProbe {
            programs: ["claude", "codex"].into_iter().collect(),
            ..FakeProbe::default()
        };
        assert_eq!(attacker(&p).value.kind, ProviderKind::ClaudeCli);
        assert_eq!(evaluators(&p).value[0].kind, ProviderKind::Codex);
    }

    #[test]
    fn api_keys_pick_cheapest_attacker_and_strongest_evaluator() {
        let p = FakeProbe {
            vars: [("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]
                .into_iter()
                .collect(),
            ..FakeProbe::default()
        };
        let a = attacker(&p);
        assert_eq!(a.value.to_string(), "openai/gpt-4o-mini");
        assert!(a.why.contains("OPENAI_API_KEY"));
        assert_eq!(evaluators(&p).value[0].kind, ProviderKind::Anthropic);
    }
}
