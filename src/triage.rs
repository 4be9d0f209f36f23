//! Complexity triage (the seed's "Triage / Complexity Assessment"): how
//! much gauntlet a spec needs. `quick` runs the adversaries the spec is
//! about with one evaluator and no rebuttal; `standard` is the full
//! gauntlet; `thorough` adds the final boss. `auto` reads the spec's
//! signals (size, components, external integrations, money, personal data,
//! auth, concurrency, the seed's critical and quick keywords) and picks one.
//!
//! `auto` never makes a typical spec's review weaker: it picks `quick` only
//! for a short spec that says it is a small change and shows no risk.

use crate::keyword_scan::{Category, Hits, Scanner};
use crate::pipeline::{Gauntlet, RunOptions};
use crate::spec::{LineKind, Spec};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Quick,
    Standard,
    Thorough,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Standard => "standard",
            Level::Thorough => "thorough",
        }
    }

    pub const ALL: [Level; 3] = [Level::Quick, Level::Standard, Level::Thorough];
}

/// What the user asked for (`--complexity`) and which settings they gave
/// explicitly: a level never overrides an explicit flag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// `None`: auto.
    pub level: Option<Level>,
    pub explicit_adversaries: bool,
    pub explicit_rebuttals: bool,
    pub explicit_final_boss: bool,
    pub explicit_rounds: bool,
}

/// The signals auto reads, for the JSON and `--suggest`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signals {
    /// Non-blank lines.
    pub lines: usize,
    pub words: usize,
    /// Named components (`billing service`, `ingest worker`...).
    pub components: Vec<String>,
    /// Technologies and external systems the spec integrates with.
    pub integrations: Vec<String>,
    pub money: Vec<String>,
    pub personal_data: Vec<String>,
    pub auth: Vec<String>,
    pub concurrency: Vec<String>,
    /// The seed's "thorough" keywords (crypto, wallet, HIPAA, PCI...).
    pub critical: Vec<String>,
    /// The seed's "quick" keywords (typo, rename, button...).
    pub small_change: Vec<String>,
}

/// The level a run uses and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    pub level: Level,
    /// `auto`, or the level given with `--complexity`.
    pub requested: String,
    pub reasons: Vec<String>,
    /// How sure auto is (0.4 to 0.9, the seed's formula); 1.0 when given.
    pub confidence: f64,
    pub signals: Signals,
}

const SMALL_LINES: usize = 40;
const LARGE_LINES: usize = 300;

const CATEGORIES: &[Category] = &[
    Category {
        name: "integrations",
        keywords: &[
            "webhook",
            "webhooks",
            "third-party",
            "third party",
            "external api",
            "partner api",
            "vendor",
            "upstream",
            "callback",
            "integration",
            "integrations",
            "provider's api",
        ],
    },
    Category {
        name: "money",
        keywords: &[
            "payment",
            "payments",
            "billing",
            "invoice",
            "invoices",
            "refund",
            "refunds",
            "charge",
            "charges",
            "checkout",
            "pricing",
            "currency",
            "payout",
            "payouts",
            "ledger",
            "subscription",
            "subscriptions",
            "credit card",
            "money",
            "price",
        ],
    },
    Category {
        name: "personal data",
        keywords: &[
            "pii",
            "personal data",
            "personal information",
            "gdpr",
            "ccpa",
            "email address",
            "email addresses",
            "phone number",
            "date of birth",
            "home address",
            "ssn",
            "social security",
            "medical",
            "patient",
            "passport",
            "health data",
        ],
    },
    Category {
        name: "auth",
        keywords: &[
            "authentication",
            "authorization",
            "authenticate",
            "oauth",
            "jwt",
            "login",
            "log in",
            "sign in",
            "password",
            "passwords",
            "permission",
            "permissions",
            "rbac",
            "api key",
            "api keys",
            "sso",
            "saml",
            "mfa",
            "2fa",
            "access token",
            "session",
            "sessions",
        ],
    },
    Category {
        name: "concurrency",
        keywords: &[
            "concurrent",
            "concurrently",
            "concurrency",
            "race",
            "race condition",
            "lock",
            "locks",
            "locking",
            "distributed",
            "consensus",
            "replica",
            "replicas",
            "replication",
            "parallel",
            "idempotent",
            "idempotency",
            "exactly-once",
            "at-least-once",
            "mutex",
            "contention",
            "leader election",
            "sharded",
            "shards",
        ],
    },
    Category {
        name: "critical",
        keywords: &[
            "crypto",
            "cryptocurrency",
            "wallet",
            "private key",
            "private keys",
            "blockchain",
            "hipaa",
            "pci",
            "pci-dss",
            "pci dss",
            "security-critical",
            "safety-critical",
            "multi-tenant",
            "compliance",
            "financial",
            "consensus",
        ],
    },
    Category {
        name: "small change",
        keywords: &[
            "button",
            "typo",
            "rename",
            "small change",
            "minor",
            "cosmetic",
            "copy change",
            "tooltip",
            "wording",
            "label text",
            "one-line",
            "trivial",
        ],
    },
];

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::new(CATEGORIES))
}

fn components(spec: &Spec) -> Vec<String> {
    // Word boundaries are the pattern's only Unicode-aware items: its ASCII
    // compilation on the text's word shape finds the same matches, at the
    // same offsets, without the Unicode boundary that made the lazy DFA
    // give up on the whole document (see `ascii_word_shape`).
    static RE: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::bytes::RegexBuilder::new(
            r"\b([a-z][a-z0-9]*(?:[- ][a-z][a-z0-9]*)?)[- ](service|worker|gateway|queue|database|cache|scheduler|broker|proxy|cluster|api|store|pipeline)\b",
        )
        .unicode(false)
        .build()
        .expect("static pattern")
    });
    let shape = crate::ascii_first::ascii_word_shape(&spec.lower);
    const STOP: &[&str] = &[
        "the", "a", "an", "this", "that", "each", "every", "our", "its", "their", "new", "one",
        "same", "external", "other", "any", "no", "which", "per",
    ];
    let mut out: Vec<String> = Vec::new();
    for c in re.captures_iter(shape.as_bytes()) {
        let (Some(name), Some(kind)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let kind = &spec.lower[kind.range()];
        let mut name = spec.lower[name.range()].to_string();
        if let Some((first, rest)) = name.split_once([' ', '-'])
            && STOP.contains(&first)
        {
            name = rest.to_string();
        }
        if STOP.contains(&name.as_str()) {
            continue;
        }
        let full = format!("{name} {kind}");
        if !out.contains(&full) {
            out.push(full);
        }
        if out.len() >= 50 {
            break;
        }
    }
    out
}

/// Reads the spec's signals. `technologies` are those detected (nuances).
pub fn signals(spec: &Spec, technologies: &[String]) -> Signals {
    let hits: Vec<Hits> = scanner().scan(&spec.text);
    let kw = |i: usize| hits[i].keywords.clone();
    let mut integrations = technologies.to_vec();
    integrations.extend(kw(0));
    Signals {
        lines: spec
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Blank && !l.text.trim().is_empty())
            .count(),
        words: spec.text.split_whitespace().count(),
        components: components(spec),
        integrations,
        money: kw(1),
        personal_data: kw(2),
        auth: kw(3),
        concurrency: kw(4),
        critical: kw(5),
        small_change: kw(6),
    }
}

fn list(v: &[String]) -> String {
    v.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
}

/// The level `auto` picks for these signals, with its reasons.
pub fn decide(s: &Signals) -> (Level, Vec<String>, f64) {
    let risks: Vec<(&str, &Vec<String>)> = [
        ("external integrations", &s.integrations),
        ("money", &s.money),
        ("personal data", &s.personal_data),
        ("auth", &s.auth),
        ("concurrency", &s.concurrency),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .collect();
    let risk_reasons: Vec<String> = risks
        .iter()
        .map(|(n, v)| format!("{n} ({})", list(v)))
        .collect();
    let size = crate::render::count(s.lines as u64, "non-blank line");
    let confidence = |score: usize| (0.4 + score as f64 * 0.1).min(0.9);
    if s.critical.len() >= 2 {
        let mut r = vec![format!("critical signals ({})", list(&s.critical))];
        r.extend(risk_reasons);
        return (Level::Thorough, r, confidence(s.critical.len() + 1));
    }
    if s.lines >= LARGE_LINES && risks.len() >= 4 {
        let mut r = vec![format!("large spec ({size})")];
        r.push(crate::render::count(risks.len() as u64, "risk area"));
        r.extend(risk_reasons);
        return (Level::Thorough, r, confidence(risks.len()));
    }
    if s.lines < SMALL_LINES
        && !s.small_change.is_empty()
        && risks.is_empty()
        && s.critical.is_empty()
        && s.components.len() <= 2
    {
        return (
            Level::Quick,
            vec![
                format!("small spec ({size})"),
                format!("a small change ({})", list(&s.small_change)),
                "no money, personal data, auth, concurrency or integrations".to_string(),
            ],
            confidence(s.small_change.len() + 1),
        );
    }
    let mut r = vec![size];
    if !s.components.is_empty() {
        r.push(crate::render::count(
            s.components.len() as u64,
            "named component",
        ));
    }
    if risk_reasons.is_empty() {
        r.push("no small-change keywords".to_string());
    }
    r.extend(risk_reasons);
    if !s.critical.is_empty() {
        r.push(format!("one critical signal ({})", list(&s.critical)));
    }
    (Level::Standard, r, confidence(risks.len().max(1)))
}

/// The assessment for a spec under a request.
pub fn assess(spec: &Spec, technologies: &[String], request: &Request) -> Assessment {
    assess_signals(signals(spec, technologies), request)
}

/// The assessment for a spec's signals under a request.
fn assess_signals(signals: Signals, request: &Request) -> Assessment {
    match request.level {
        Some(level) => Assessment {
            level,
            requested: level.as_str().to_string(),
            reasons: vec![format!("--complexity {}", level.as_str())],
            confidence: 1.0,
            signals,
        },
        None => {
            let (level, reasons, confidence) = decide(&signals);
            Assessment {
                level,
                requested: "auto".to_string(),
                reasons,
                confidence,
                signals,
            }
        }
    }
}

/// One line for stderr: `complexity: standard (auto: 92 non-blank lines; ...)`.
pub fn describe(a: &Assessment) -> String {
    format!(
        "complexity: {} ({}: {})",
        a.level.as_str(),
        a.requested,
        a.reasons.join("; ")
    )
}

/// The technologies a spec uses, by name (empty when nuances are off).
pub fn technologies(options: &RunOptions, spec: &Spec) -> Vec<String> {
    match &options.nuances {
        Some(set) => set
            .detector()
            .detect(spec)
            .iter()
            .map(|d| set.technologies[d.technology].name.clone())
            .collect(),
        None => Vec::new(),
    }
}

/// How many adversaries a quick run keeps.
pub const QUICK_ADVERSARIES: usize = 2;

/// The assessment of a spec under a run's options.
pub fn assess_run(options: &RunOptions, spec: &Spec) -> Assessment {
    // Two independent passes over the spec, side by side: on a large spec
    // each takes milliseconds, and the attack waits for the level.
    let (technologies, mut signals) =
        rayon::join(|| technologies(options, spec), || signals(spec, &[]));
    signals.integrations.splice(0..0, technologies);
    assess_signals(signals, &options.complexity)
}

/// The run options at a level: `quick` keeps the adversaries the spec is
/// about and drops the rebuttal. Explicit flags win.
pub fn options_for(options: &RunOptions, a: &Assessment, spec: &Spec) -> RunOptions {
    let mut o = options.clone();
    if a.level == Level::Quick {
        if !o.complexity.explicit_adversaries {
            o.adversaries = crate::suggest::top_adversaries(spec, QUICK_ADVERSARIES);
        }
        if !o.complexity.explicit_rebuttals {
            o.rebuttals = false;
        }
    }
    if a.level == Level::Thorough && !o.complexity.explicit_rounds {
        o.rounds = THOROUGH_ROUNDS;
    }
    o.assessment = Some(a.clone());
    o
}

/// Debate rounds at `thorough` unless `--rounds` says otherwise (with
/// models; offline, rounds converge after the first).
pub const THOROUGH_ROUNDS: u8 = 2;

/// The gauntlet at a level: `quick` also keeps one evaluator; the final
/// boss runs at `thorough` (or when asked for). `base` must carry a final
/// boss whenever thorough is possible (see `Config::gauntlet`).
pub fn apply(base: &Gauntlet, a: &Assessment, spec: &Spec) -> Gauntlet {
    let mut g = base.clone();
    g.options = options_for(&base.options, a, spec);
    if a.level == Level::Quick {
        g.evaluators.truncate(1);
    }
    if a.level != Level::Thorough && !base.options.complexity.explicit_final_boss {
        g.final_boss = None;
    }
    g
}

/// `assess_run` then `apply`.
pub fn gauntlet_for(base: &Gauntlet, spec: &Spec) -> (Gauntlet, Assessment) {
    let a = assess_run(&base.options, spec);
    (apply(base, &a, spec), a)
}

/// `--complexity`: how much gauntlet a spec gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ComplexityArg {
    /// Read the spec's signals and pick a level (said on stderr).
    #[default]
    Auto,
    /// The adversaries the spec is about, one evaluator, no rebuttal.
    Quick,
    /// The full gauntlet.
    Standard,
    /// The full gauntlet plus the final boss.
    Thorough,
}

/// `--complexity` as a level (`None` for auto).
pub fn requested_level(arg: ComplexityArg) -> Option<Level> {
    match arg {
        ComplexityArg::Auto => None,
        ComplexityArg::Quick => Some(Level::Quick),
        ComplexityArg::Standard => Some(Level::Standard),
        ComplexityArg::Thorough => Some(Level::Thorough),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> (Level, Vec<String>) {
        let spec = Spec::parse(None, text.to_string());
        let a = assess(&spec, &[], &Request::default());
        (a.level, a.reasons)
    }

    #[test]
    fn reasons_count_in_the_right_number() {
        let one = Signals {
            lines: 1,
            components: vec!["billing service".into()],
            ..Signals::default()
        };
        let (_, r, _) = decide(&one);
        assert!(r.contains(&"1 non-blank line".to_string()), "{r:?}");
        assert!(r.contains(&"1 named component".to_string()), "{r:?}");
        let two = Signals {
            lines: 2,
            components: vec!["billing service".into(), "ingest worker".into()],
            ..Signals::default()
        };
        let (_, r, _) = decide(&two);
        assert!(r.contains(&"2 named components".to_string()), "{r:?}");
        assert!(r.contains(&"2 non-blank lines".to_string()), "{r:?}");
    }

    #[test]
    fn thorough_debates_two_rounds_unless_rounds_were_given() {
        let spec = Spec::parse(None, "# Jobs\n\nA worker drains the queue.\n".to_string());
        let given = Request {
            level: Some(Level::Thorough),
            ..Request::default()
        };
        let a = assess(&spec, &[], &given);
        assert_eq!(a.level, Level::Thorough);
        let base = RunOptions {
            complexity: given.clone(),
            ..RunOptions::default()
        };
        assert_eq!(base.rounds, 1);
        assert_eq!(options_for(&base, &a, &spec).rounds, THOROUGH_ROUNDS);
        // `--rounds 1` given explicitly wins over the level.
        let explicit = RunOptions {
            complexity: Request {
                explicit_rounds: true,
                ..given
            },
            ..RunOptions::default()
        };
        assert_eq!(options_for(&explicit, &a, &spec).rounds, 1);
        // Standard keeps one round.
        let standard = assess(
            &spec,
            &[],
            &Request {
                level: Some(Level::Standard),
                ..Request::default()
            },
        );
        assert_eq!(options_for(&base, &standard, &spec).rounds, 1);
    }

    #[test]
    fn a_small_cosmetic_change_is_quick() {
        let (l, r) = level(
            "# Rename the export button\n\nRename the \"Export\" button to \"Download\" on the reports page. A cosmetic change; no behaviour changes.\n",
        );
        assert_eq!(l, Level::Quick, "{r:?}");
        assert!(r.iter().any(|x| x.contains("button")), "{r:?}");
    }

    #[test]
    fn a_small_spec_with_risk_is_not_quick() {
        let (l, r) = level(
            "# Rename the pay button\n\nRename the button; clicking it now issues a refund through the payment provider.\n",
        );
        assert_eq!(l, Level::Standard, "{r:?}");
        assert!(r.iter().any(|x| x.starts_with("money")), "{r:?}");
        // Small but not described as a small change: standard, not weaker.
        assert_eq!(
            level("# Jobs\n\nA worker drains the queue.\n").0,
            Level::Standard
        );
    }

    #[test]
    fn a_medium_feature_spec_is_standard() {
        let mut t = String::from("# Order service\n\n## Design\n\n");
        for i in 0..80 {
            t.push_str(&format!(
                "- Step {i}: the order service stores the order and sends a webhook; login uses sessions.\n"
            ));
        }
        assert_eq!(level(&t).0, Level::Standard);
    }

    #[test]
    fn large_risky_or_critical_specs_are_thorough() {
        let mut t = String::from("# Platform\n\n");
        for i in 0..320 {
            t.push_str(&format!(
                "Line {i}: payments and refunds, personal data (GDPR), login with OAuth, concurrent writers take a lock, a webhook to the vendor.\n"
            ));
        }
        let (l, r) = level(&t);
        assert_eq!(l, Level::Thorough);
        assert!(r[0].starts_with("large spec"), "{r:?}");
        let (l, r) =
            level("# Wallet\n\nUsers keep a crypto wallet; the private key is stored encrypted.\n");
        assert_eq!(l, Level::Thorough);
        assert!(
            r[0].contains("wallet") && r[0].contains("private key"),
            "{r:?}"
        );
    }

    #[test]
    fn an_explicit_level_wins() {
        let spec = Spec::parse(None, "# Wallet\n\ncrypto wallet private key\n".to_string());
        let a = assess(
            &spec,
            &[],
            &Request {
                level: Some(Level::Quick),
                ..Request::default()
            },
        );
        assert_eq!(a.level, Level::Quick);
        assert_eq!(a.requested, "quick");
        assert_eq!(a.confidence, 1.0);
    }

    #[test]
    fn components_are_named_things_not_articles() {
        let spec = Spec::parse(
            None,
            "The billing service calls the ledger-service and an external api; the ingest worker reads the queue.".to_string(),
        );
        let c = components(&spec);
        assert!(c.contains(&"billing service".to_string()), "{c:?}");
        assert!(c.contains(&"ingest worker".to_string()), "{c:?}");
        assert!(
            !c.iter()
                .any(|x| x.starts_with("the ") || x.starts_with("external")),
            "{c:?}"
        );
    }
}
