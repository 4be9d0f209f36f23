//! Full gauntlet runs against a scripted OpenAI / Anthropic server on
//! 127.0.0.1 (no network): every reply style and failure the issue lists,
//! each ending with checked statuses and verdict.

mod support;

use gauntlet::catalog::Catalog;
use gauntlet::concern::Status;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::litellm::LitellmProvider;
use gauntlet::provider::retry::RetryPolicy;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{ModelName, ModelRun, ModelSettings, Provider, ProviderKind};
use gauntlet::spec::Spec;
use gauntlet::verdict::{Outcome, Verdict};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::mock_llm::{self, Api, Kind, MockServer, Reply};

const SPEC: &str = "# Webhook receiver\n\n## Design\n\nThe service accepts POST /hooks from the vendor.\n\nEvents are stored in Postgres and retried on failure.\n\n## Rollout\n\nShip to all users at once.\n";

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Json,
    Fenced,
    Prose,
}

/// The well-behaved model: two concerns per persona, the "real gap" ones
/// accepted and the "false alarm" ones dismissed; paranoid_security
/// challenges its dismissal and wins, burned_oncall accepts.
fn good(prompt: &str, style: Style) -> String {
    match mock_llm::kind(prompt) {
        Kind::Attack => {
            let p = mock_llm::persona(prompt);
            match style {
                Style::Prose => format!(
                    "Here is what I found:\n\n1. **[HIGH]** {p} real gap: the receiver has a hole (line 5).\n2. (minor) {p} false alarm - probably nothing, see line 7.\n"
                ),
                _ => {
                    let json = format!(
                        r#"{{"concerns": [{{"title": "{p} real gap", "detail": "a hole", "severity": "high", "lines": [5, 5]}}, {{"title": "{p} false alarm", "detail": "nothing", "severity": "low", "lines": [7, 7],}}]}}"#
                    );
                    if style == Style::Fenced {
                        format!("Sure, here you go:\n```json\n{json}\n```\nHope this helps.")
                    } else {
                        json
                    }
                }
            }
        }
        Kind::Eval => {
            let cs = mock_llm::concerns(prompt);
            match style {
                Style::Prose => cs
                    .iter()
                    .map(|(id, title)| {
                        if title.contains("real gap") {
                            format!("{id}: ACCEPT - nothing in the spec covers it")
                        } else {
                            format!("{id}: DISMISS - handled at line 7")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => {
                    // Votes in reverse order: matching is by id, not position.
                    let mut votes: Vec<String> = cs
                        .iter()
                        .rev()
                        .map(|(id, title)| {
                            let d = if title.contains("real gap") { "accept" } else { "dismiss" };
                            format!(r#"{{"id": "{id}", "decision": "{d}", "reasoning": "see line 7", "cites": [7]}}"#)
                        })
                        .collect();
                    votes.push(
                        r#"{"id": "ZZZZ-00000000", "decision": "accept", "reasoning": "x"}"#
                            .to_string(),
                    );
                    let json = format!(r#"{{"votes": [{}]}}"#, votes.join(", "));
                    if style == Style::Fenced {
                        format!("```\n{json}\n```")
                    } else {
                        json
                    }
                }
            }
        }
        Kind::Rebuttal => {
            if mock_llm::concern_title(prompt).starts_with("paranoid_security") {
                "CHALLENGED: line 7 says nothing about verifying the sender.".to_string()
            } else {
                "ACCEPTED: the retry at line 7 covers it.".to_string()
            }
        }
        Kind::Adjudicate => match style {
            Style::Prose => "OVERTURNED: the challenge is right.".to_string(),
            _ => r#"{"outcome": "overturned", "reasoning": "line 7 does not verify the sender"}"#
                .to_string(),
        },
        Kind::FinalBoss => r#"{"verdict": "PASS", "findings": []}"#.to_string(),
        Kind::Unknown => "???".to_string(),
    }
}

fn settings(server: &MockServer, kind: ProviderKind) -> ModelSettings {
    ModelSettings {
        attack: ModelName::new(kind, "claude-3-5-haiku-20241022"),
        eval: vec![ModelName::new(kind, "claude-3-5-haiku-20241022")],
        final_boss: ModelName::new(kind, "claude-3-5-haiku-20241022"),
        api_base: Some(server.base.clone()),
        timeout: Duration::from_secs(5),
        ..ModelSettings::offline()
    }
}

async fn run_with(
    server: &MockServer,
    kind: ProviderKind,
    spec_text: &str,
    tweak: impl FnOnce(&mut ModelRun),
) -> (Verdict, ModelRun) {
    let mut run = ModelRun::new(settings(server, kind));
    run.retry = RetryPolicy {
        max_retries: 3,
        base: Duration::from_millis(20),
        max_wait: Duration::from_secs(3),
    };
    tweak(&mut run);
    let base = server.base.clone();
    let timeout = run.settings.timeout.as_secs();
    let catalog = Arc::new(Catalog::builtin().unwrap());
    let options = RunOptions {
        adversaries: vec!["paranoid_security".into(), "burned_oncall".into()],
        ..RunOptions::default()
    };
    let g = run
        .gauntlet_with(catalog, options, false, &SystemProbe, &mut |m, _| {
            let key = matches!(m.kind, ProviderKind::Anthropic | ProviderKind::OpenAi)
                .then(|| "sk-test-key-123456".to_string());
            Ok(
                Arc::new(LitellmProvider::new(m, key, Some(base.clone()), timeout))
                    as Arc<dyn Provider>,
            )
        })
        .unwrap();
    let spec = Spec::parse(Some("spec.md".into()), spec_text.to_string());
    let v = g.run(&spec, &NoFilter, &|_| {}).await;
    (v, run)
}

fn status_of(v: &Verdict, title: &str) -> Status {
    v.concerns
        .iter()
        .find(|c| c.title == title)
        .unwrap_or_else(|| {
            panic!(
                "no concern titled {title:?} in {:?}; warnings {:?}",
                v.concerns.iter().map(|c| &c.title).collect::<Vec<_>>(),
                v.warnings
            )
        })
        .status
}

/// The statuses the well-behaved script leads to.
#[track_caller]
fn assert_expected(v: &Verdict) {
    assert_eq!(status_of(v, "paranoid_security real gap"), Status::Accepted);
    assert_eq!(status_of(v, "burned_oncall real gap"), Status::Accepted);
    assert_eq!(
        status_of(v, "paranoid_security false alarm"),
        Status::Reinstated
    );
    assert_eq!(status_of(v, "burned_oncall false alarm"), Status::Dismissed);
    assert_eq!(v.verdict, Outcome::Revise, "warnings: {:?}", v.warnings);
    let para = v
        .concerns
        .iter()
        .find(|c| c.title == "paranoid_security real gap")
        .unwrap();
    assert_eq!(para.lines, Some((5, 5)));
    assert_eq!(para.severity, gauntlet::concern::Severity::High);
}

async fn openai(style: Style) -> (Verdict, MockServer) {
    let server =
        MockServer::start(Api::OpenAi, move |r, _| Reply::Text(good(&r.prompt, style))).await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    (v, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clean_json_reaches_the_right_verdict() {
    let (v, server) = openai(Style::Json).await;
    assert_expected(&v);
    // attack 2 + one eval batch + rebuttal 2 + adjudication 1.
    assert_eq!(server.count(), 6);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.path == "/v1/chat/completions")
    );
    // The evaluator's vote on an id that does not exist is ignored with a warning.
    assert!(
        v.warnings.iter().any(|w| w.contains("ZZZZ-00000000")),
        "{:?}",
        v.warnings
    );
    // Usage counted per role, from the server's reported tokens.
    let attack = v
        .stats
        .models
        .values()
        .find(|m| m.role == "attack")
        .unwrap();
    assert_eq!(attack.calls, 4, "2 attacks + 2 rebuttals");
    assert!(attack.input_tokens > 0 && !attack.estimated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_json_with_prose_and_trailing_commas() {
    let (v, _) = openai(Style::Fenced).await;
    assert_expected(&v);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prose_with_numbered_lists() {
    let (v, _) = openai(Style::Prose).await;
    assert_expected(&v);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_then_a_good_repair() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        if mock_llm::kind(&r.prompt) == Kind::Attack && !mock_llm::is_repair(&r.prompt) {
            Reply::Text("Honestly it all looks fine to me, ship it!".into())
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    assert_expected(&v);
    let repairs = server
        .requests()
        .iter()
        .filter(|r| mock_llm::is_repair(&r.prompt))
        .count();
    assert_eq!(repairs, 2, "one repair per persona");
    assert_eq!(server.count(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limited_with_retry_after_then_success() {
    let server = MockServer::start(Api::OpenAi, |r, n| {
        if n == 0 {
            Reply::Raw {
                status: 429,
                headers: vec![("retry-after".into(), "1".into())],
                body: r#"{"error": {"message": "slow down", "type": "rate_limit"}}"#.into(),
            }
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let t = Instant::now();
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    assert_expected(&v);
    assert_eq!(server.count(), 7, "one retried call");
    // Our backoff base is 20 ms, so only the 429 rule explains a 1 s wait:
    // the Retry-After value when the provider surfaces it, else the 1 s floor
    // (litellm-rs 0.9.0 drops this header on the OpenAI-compatible path).
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_error_twice_then_success() {
    let server = MockServer::start(Api::OpenAi, |r, n| {
        if n < 2 {
            Reply::Raw {
                status: 500,
                headers: vec![],
                body: r#"{"error": {"message": "internal"}}"#.into(),
            }
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    assert_expected(&v);
    assert_eq!(server.count(), 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_slower_than_the_timeout_defers_and_is_incomplete() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        let text = good(&r.prompt, Style::Json);
        if mock_llm::kind(&r.prompt) == Kind::Eval {
            Reply::Delay(Duration::from_secs(4), Box::new(Reply::Text(text)))
        } else {
            Reply::Text(text)
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |run| {
        run.settings.timeout = Duration::from_secs(1);
        run.retry.max_retries = 1;
    })
    .await;
    assert_eq!(v.concerns.len(), 4);
    assert!(v.concerns.iter().all(|c| c.status == Status::Deferred));
    assert_eq!(v.stats.evaluation.abstentions, 4);
    assert_eq!(v.verdict, Outcome::Incomplete);
    assert!(
        v.warnings.iter().any(|w| w.contains("timed out")),
        "{:?}",
        v.warnings
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_reply_fails_that_attacker_only() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        if mock_llm::kind(&r.prompt) == Kind::Attack && r.prompt.contains("`burned_oncall`") {
            Reply::Text(String::new())
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    assert_eq!(v.stats.attack.failed, vec!["burned_oncall".to_string()]);
    assert!(
        v.warnings
            .iter()
            .any(|w| w.contains("burned_oncall produced nothing"))
    );
    assert_eq!(v.concerns.len(), 2);
    assert_eq!(
        status_of(&v, "paranoid_security real gap"),
        Status::Accepted
    );
    assert_eq!(
        status_of(&v, "paranoid_security false alarm"),
        Status::Reinstated
    );
    assert_eq!(v.verdict, Outcome::Revise);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_messages_api() {
    let server = MockServer::start(Api::Anthropic, |r, _| {
        Reply::Text(good(&r.prompt, Style::Json))
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::Anthropic, SPEC, |_| {}).await;
    assert_expected(&v);
    let reqs = server.requests();
    assert!(
        reqs.iter().all(|r| r.path == "/v1/messages"),
        "{:?}",
        reqs.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert!(
        reqs[0]
            .headers
            .to_ascii_lowercase()
            .contains("x-api-key: sk-test-key-123456")
    );
    // Cost from the price table: a known Claude model is not free.
    assert!(v.stats.cost_usd > 0.0, "{}", v.stats.cost_usd);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_the_server() {
    let secret_key = "abcdefghijklmnopqrstuvwxyz0123";
    let pem = "MIIEowIBAAKCAQEAsecretkeymaterial";
    let spec = format!(
        "{SPEC}\n## Config\n\napi_key = {secret_key}\nDATABASE_URL=postgres://app:hunter2pass@db:5432/app\n\n-----BEGIN RSA PRIVATE KEY-----\n{pem}\n-----END RSA PRIVATE KEY-----\n"
    );
    let server = MockServer::start(Api::OpenAi, |r, _| {
        Reply::Text(good(&r.prompt, Style::Json))
    })
    .await;
    let (v, run) = run_with(&server, ProviderKind::OpenAiCompatible, &spec, |_| {}).await;
    assert_eq!(v.verdict, Outcome::Revise);
    let bodies: Vec<String> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(!bodies.is_empty());
    for b in &bodies {
        for secret in [secret_key, "hunter2pass", pem] {
            assert!(!b.contains(secret), "{secret} was sent");
        }
        assert!(b.contains("[REDACTED_API_KEY]"));
    }
    // Three secrets in every one of the 6 prompts (each carries the spec).
    assert_eq!(run.redacted(), 3 * bodies.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_provider_with_a_local_base_url() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        Reply::Text(good(&r.prompt, Style::Json))
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAi, SPEC, |run| {
        for m in [&mut run.settings.attack, &mut run.settings.final_boss] {
            m.model = "gpt-4o-mini".into();
        }
        run.settings.eval[0].model = "gpt-4o-mini".into();
    })
    .await;
    assert_expected(&v);
    let reqs = server.requests();
    assert!(
        reqs[0]
            .headers
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test-key-123456")
    );
    // The key goes in the header only, never in what is saved or sent as text.
    assert!(reqs.iter().all(|r| !r.body.contains("sk-test-key-123456")));
    assert!(v.stats.cost_usd > 0.0);
}
