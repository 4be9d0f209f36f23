//! The suggester (`--suggest`, the seed's "Ensemble Suggester"): which
//! adversaries, complexity level and models suit a spec, each with the
//! keywords that drove it and a confidence (`min(0.9, 0.4 + 0.1 * score)`),
//! without running the gauntlet. Quick runs use `top_adversaries`.

use crate::catalog::DEFAULT_ADVERSARIES;
use crate::keyword_scan::{Category, Scanner};
use crate::spec::Spec;
use crate::triage::{Assessment, Level};
use serde::Serialize;
use std::sync::OnceLock;

/// A category needs this many distinct keywords to be suggested (the seed's threshold).
pub const THRESHOLD: usize = 2;

/// What each adversary looks for, in `DEFAULT_ADVERSARIES` order.
const PERSONA_KEYWORDS: &[Category] = &[
    Category {
        name: "paranoid_security",
        keywords: &[
            "auth",
            "authentication",
            "authorization",
            "permission",
            "permissions",
            "credential",
            "credentials",
            "token",
            "tokens",
            "injection",
            "vulnerability",
            "encrypt",
            "encrypted",
            "password",
            "api key",
            "oauth",
            "jwt",
            "login",
            "secret",
            "secrets",
            "upload",
            "admin",
            "tenant",
            "session",
            "csrf",
            "xss",
            "ssrf",
            "pii",
        ],
    },
    Category {
        name: "burned_oncall",
        keywords: &[
            "crash",
            "restart",
            "recovery",
            "failover",
            "retry",
            "retries",
            "circuit",
            "health check",
            "incident",
            "outage",
            "sla",
            "uptime",
            "production",
            "alert",
            "pager",
            "monitoring",
            "dashboard",
            "runbook",
            "timeout",
            "latency",
            "throughput",
            "queue",
            "worker",
            "cron",
            "backup",
            "p99",
            "p95",
        ],
    },
    Category {
        name: "lazy_developer",
        keywords: &[
            "framework",
            "plugin",
            "plugins",
            "abstraction",
            "configurable",
            "generic",
            "microservice",
            "microservices",
            "custom",
            "in-house",
            "home-grown",
            "extensible",
            "dsl",
            "engine",
            "layer",
            "rewrite",
            "build our own",
        ],
    },
    Category {
        name: "pedantic_nitpicker",
        keywords: &[
            "unicode",
            "timezone",
            "time zone",
            "dst",
            "pagination",
            "currency",
            "rounding",
            "overflow",
            "duplicate",
            "duplicates",
            "limit",
            "limits",
            "empty",
            "encoding",
            "locale",
            "utf-8",
            "utf8",
            "float",
            "decimal",
            "date",
            "csv",
            "import",
            "leap",
        ],
    },
    Category {
        name: "asshole_loner",
        keywords: &[
            "cache",
            "consistency",
            "replica",
            "distributed",
            "lock",
            "sync",
            "polling",
            "event",
            "events",
            "eventual",
            "dual write",
            "source of truth",
            "state",
            "multi-region",
            "leader",
            "consensus",
            "goal",
            "goals",
            "scale",
        ],
    },
];

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::new(PERSONA_KEYWORDS))
}

/// The seed's confidence formula.
pub fn confidence(score: usize) -> f64 {
    ((0.4 + score as f64 * 0.1).min(0.9) * 100.0).round() / 100.0
}

#[derive(Debug, Clone, Serialize)]
pub struct AdversarySuggestion {
    pub name: String,
    /// Distinct keywords found.
    pub score: usize,
    pub confidence: f64,
    pub keywords: Vec<String>,
    /// Part of the suggested set at the suggested level.
    pub selected: bool,
}

/// Adversaries ranked by how much the spec is about their topic (ties in
/// the default order).
pub fn rank(spec: &Spec) -> Vec<AdversarySuggestion> {
    let hits = scanner().scan(&spec.text);
    let mut out: Vec<AdversarySuggestion> = PERSONA_KEYWORDS
        .iter()
        .zip(hits)
        .map(|(c, h)| AdversarySuggestion {
            name: c.name.to_string(),
            score: h.keywords.len(),
            confidence: confidence(h.keywords.len()),
            keywords: h.keywords,
            selected: false,
        })
        .collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.score));
    out
}

/// The `n` adversaries the spec is most about.
pub fn top_adversaries(spec: &Spec, n: usize) -> Vec<String> {
    rank(spec).into_iter().take(n).map(|a| a.name).collect()
}

#[derive(Debug, Clone, Serialize)]
pub struct ComplexitySuggestion {
    pub level: Level,
    pub confidence: f64,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelSuggestion {
    pub attack: String,
    pub eval: Vec<String>,
    pub final_boss: Option<String>,
    pub reasoning: String,
    pub confidence: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    pub complexity: ComplexitySuggestion,
    pub adversaries: Vec<AdversarySuggestion>,
    pub models: ModelSuggestion,
    pub technologies: Vec<String>,
    pub warnings: Vec<String>,
}

/// Suggestions for a spec, given the complexity assessment and the models
/// the settings would use.
pub fn suggest(
    spec: &Spec,
    assessment: &Assessment,
    technologies: Vec<String>,
    settings: &crate::provider::ModelSettings,
) -> Suggestion {
    let mut adversaries = rank(spec);
    let mut warnings = Vec::new();
    let n = match assessment.level {
        Level::Quick => crate::triage::QUICK_ADVERSARIES,
        _ => DEFAULT_ADVERSARIES.len(),
    };
    for a in adversaries.iter_mut().take(n) {
        a.selected = true;
    }
    if adversaries.iter().all(|a| a.score < THRESHOLD) {
        warnings.push(format!(
            "no adversary topic reached {THRESHOLD} keywords; the ranking is a weak signal"
        ));
    }
    let eval: Vec<String> = match assessment.level {
        Level::Quick => settings
            .eval
            .iter()
            .take(1)
            .map(|m| m.to_string())
            .collect(),
        _ => settings.eval.iter().map(|m| m.to_string()).collect(),
    };
    let final_boss = (assessment.level == Level::Thorough).then(|| settings.final_boss.to_string());
    let reasoning = match assessment.level {
        Level::Quick => "quick: the attack model and only the first evaluator".to_string(),
        Level::Standard => "standard: the attack model and every evaluator".to_string(),
        Level::Thorough => "thorough: every evaluator, plus the final boss model".to_string(),
    };
    Suggestion {
        complexity: ComplexitySuggestion {
            level: assessment.level,
            confidence: assessment.confidence,
            reasons: assessment.reasons.clone(),
        },
        adversaries,
        models: ModelSuggestion {
            attack: settings.attack.to_string(),
            eval,
            final_boss,
            reasoning,
            confidence: assessment.confidence,
        },
        technologies,
        warnings,
    }
}

/// The suggestion as text (for standard output).
pub fn write_text(s: &Suggestion, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let esc = crate::nuance::command::plain;
    writeln!(
        out,
        "Complexity: {} (confidence {:.2})",
        s.complexity.level.as_str(),
        s.complexity.confidence
    )?;
    for r in &s.complexity.reasons {
        writeln!(out, "  - {}", esc(r))?;
    }
    writeln!(out, "Adversaries:")?;
    for a in &s.adversaries {
        writeln!(
            out,
            "  {} {:<19} confidence {:.2}  keywords: {}",
            if a.selected { "*" } else { " " },
            a.name,
            a.confidence,
            if a.keywords.is_empty() {
                "(none)".to_string()
            } else {
                esc(&a.keywords.join(", "))
            }
        )?;
    }
    writeln!(out, "  (* = suggested at this level)")?;
    writeln!(out, "Models (confidence {:.2}):", s.models.confidence)?;
    writeln!(out, "  attack: {}", s.models.attack)?;
    writeln!(out, "  eval: {}", s.models.eval.join(", "))?;
    writeln!(
        out,
        "  final boss: {}",
        s.models
            .final_boss
            .as_deref()
            .unwrap_or("(not at this level)")
    )?;
    writeln!(out, "  why: {}", s.models.reasoning)?;
    if !s.technologies.is_empty() {
        writeln!(out, "Technologies: {}", esc(&s.technologies.join(", ")))?;
    }
    for w in &s.warnings {
        writeln!(out, "Warning: {w}")?;
    }
    Ok(())
}

/// `--suggest`: prints the suggestion and runs nothing (exit 0).
pub fn run(
    config: &crate::config::Config,
    assessment: &Assessment,
    spec: &Spec,
    format: crate::render::Format,
    out: &mut dyn std::io::Write,
) -> Result<u8, crate::error::Error> {
    let s = suggest(
        spec,
        assessment,
        crate::triage::technologies(&config.options, spec),
        &config.models.settings,
    );
    let written = match format {
        crate::render::Format::Json => serde_json::to_writer_pretty(&mut *out, &s)
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(out)),
        _ => write_text(&s, out),
    };
    written.map_err(|source| crate::error::RunError::Write {
        path: "<stdout>".to_string(),
        source,
    })?;
    Ok(crate::exit_code::PASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_follows_the_spec_topic() {
        let spec = Spec::parse(
            None,
            "# Login\n\nUsers log in with a password; the session token is a JWT. Admin permissions via OAuth.\nThe worker retries on timeout.\n".to_string(),
        );
        let r = rank(&spec);
        assert_eq!(r[0].name, "paranoid_security");
        assert!(r[0].keywords.contains(&"password".to_string()));
        assert!(r[0].score >= 5);
        assert_eq!(r[0].confidence, 0.9);
        assert_eq!(r[1].name, "burned_oncall");
        assert_eq!(
            top_adversaries(&spec, 2),
            ["paranoid_security", "burned_oncall"]
        );
        assert_eq!(confidence(0), 0.4);
        assert_eq!(confidence(2), 0.6);
    }
}
