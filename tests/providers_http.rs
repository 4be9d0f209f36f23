//! Full gauntlet runs against a scripted OpenAI / Anthropic server on
//! 127.0.0.1 (no network): every reply style and failure the issue lists,
//! each ending with checked statuses and verdict.

mod support;

use gauntlet::catalog::Catalog;
use gauntlet::concern::Status;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::model_run::api_provider;
use gauntlet::provider::retry::RetryPolicy;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{ModelName, ModelRun, ModelSettings, ProviderKind};
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
        Kind::Rebuttal => mock_llm::rebuttal_concerns(prompt)
            .iter()
            .map(|(id, title)| {
                if title.starts_with("paranoid_security") {
                    format!("[{id}] CHALLENGED: line 7 says nothing about verifying the sender.")
                } else {
                    format!("[{id}] ACCEPTED: the retry at line 7 covers it.")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Kind::Adjudicate => {
            let ids = mock_llm::adjudication_concerns(prompt);
            match style {
                Style::Prose => ids
                    .iter()
                    .map(|(id, _)| format!("{id}: OVERTURNED: the challenge is right."))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => format!(
                    r#"{{"decisions": [{}]}}"#,
                    ids.iter()
                        .map(|(id, _)| format!(
                            r#"{{"id": "{id}", "outcome": "overturned", "reasoning": "line 7 does not verify the sender"}}"#
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
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
            Ok(api_provider(m, key, Some(base.clone()), timeout))
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
async fn openai_compatible_honours_retry_after() {
    let server = MockServer::start(Api::OpenAi, |r, n| {
        if n == 0 {
            Reply::Raw {
                status: 429,
                headers: vec![("retry-after".into(), "2".into())],
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
    // Our backoff base is 20 ms and the floor for a 429 without Retry-After
    // is 1 s: only the header explains a wait of 2 s. (Lower bound only.)
    assert!(
        t.elapsed() >= Duration::from_millis(1950),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_honours_retry_after_too() {
    let server = MockServer::start(Api::Anthropic, |r, n| {
        if n == 0 {
            Reply::Raw {
                status: 429,
                headers: vec![("retry-after".into(), "2".into())],
                body: r#"{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}"#.into(),
            }
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let t = Instant::now();
    let (v, _) = run_with(&server, ProviderKind::Anthropic, SPEC, |_| {}).await;
    assert_expected(&v);
    assert!(
        t.elapsed() >= Duration::from_millis(1950),
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
    // The message names the timeout that was set, never "after 0s".
    assert!(
        v.warnings.iter().any(|w| w.contains("timed out after 1s")),
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
    }
    // Three secrets in every prompt that carries the whole spec (rebuttals
    // carry only the lines they cite, far from the secrets).
    let with_spec = bodies
        .iter()
        .filter(|b| b.contains("=== SPEC START ==="))
        .count();
    assert_eq!(with_spec, 3, "2 attacks, 1 evaluation");
    for b in bodies.iter().filter(|b| b.contains("=== SPEC START ===")) {
        assert!(b.contains("[REDACTED_API_KEY]"));
    }
    assert_eq!(run.redacted(), 3 * with_spec);
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

/// The shared start of every prompt that carries the whole spec.
fn spec_prefix(prompt: &str) -> &str {
    let end = prompt.find("=== SPEC END ===").expect("the spec") + "=== SPEC END ===".len();
    &prompt[..end]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_cache_first_with_one_identical_prefix() {
    let (_, server) = openai(Style::Json).await;
    let reqs = server.requests();
    let with_spec: Vec<_> = reqs
        .iter()
        .filter(|r| r.prompt.contains("=== SPEC START ==="))
        .collect();
    assert_eq!(with_spec.len(), 3, "attacks, evaluation");
    let first = spec_prefix(&with_spec[0].prompt);
    for r in &with_spec {
        // The same system text and the same spec block open every call...
        assert_eq!(r.system, with_spec[0].system);
        assert!(r.prompt.starts_with(first), "{}", r.prompt);
        // ...and the role's instructions come after the spec.
        let spec_end = first.len();
        for marker in [
            "Raise every concern",
            "Concerns (vote on each, by id)",
            "You are the final adjudicator",
            "as the adversary `",
        ] {
            if let Some(i) = r.prompt.find(marker) {
                assert!(i > spec_end, "{marker} before the spec");
            }
        }
    }
    // Every call after the first reuses a prefix at least as long as the
    // system text and the spec.
    let spec_chars = with_spec[0].system.chars().count() + first.chars().count();
    for r in &with_spec[1..] {
        assert!(
            r.shared_prefix >= spec_chars,
            "{} < {spec_chars}",
            r.shared_prefix
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebuttals_get_the_cited_lines_not_the_whole_spec() {
    let spec = format!("{SPEC}\n## Appendix\n\nThe appendix mentions zebra migrations.\n");
    let server = MockServer::start(Api::OpenAi, |r, _| {
        Reply::Text(good(&r.prompt, Style::Json))
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, &spec, |_| {}).await;
    assert_expected(&v);
    let reqs = server.requests();
    let rebuttals: Vec<_> = reqs
        .iter()
        .filter(|r| mock_llm::kind(&r.prompt) == Kind::Rebuttal)
        .collect();
    assert_eq!(rebuttals.len(), 2, "one per adversary");
    for r in &rebuttals {
        assert!(!r.prompt.contains("=== SPEC START ==="));
        assert!(!r.prompt.contains("zebra migrations"), "{}", r.prompt);
        // The concern's line 7, the dismissal, and the section heading.
        assert!(
            r.prompt.contains("\n7|Events are stored in Postgres"),
            "{}",
            r.prompt
        );
        assert!(r.prompt.contains("\n3|## Design"), "{}", r.prompt);
        assert!(r.prompt.contains("see line 7"), "the dismissal reasoning");
        // Spec text stays between delimiters the system prompt names as data.
        assert!(
            r.prompt
                .contains("=== SPEC START (excerpt) ===\n3|## Design")
        );
    }
    // The attackers did see the whole spec.
    assert!(reqs.iter().any(
        |r| mock_llm::kind(&r.prompt) == Kind::Attack && r.prompt.contains("zebra migrations")
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adjudication_is_one_call_for_all_challenges() {
    // Both adversaries challenge: two challenges, one adjudication call.
    let server = MockServer::start(Api::OpenAi, |r, _| {
        if mock_llm::kind(&r.prompt) == Kind::Rebuttal {
            let lines: Vec<String> = mock_llm::rebuttal_concerns(&r.prompt)
                .iter()
                .map(|(id, _)| format!("[{id}] CHALLENGED: line 7 is silent on this."))
                .collect();
            Reply::Text(lines.join("\n"))
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    let adjudications: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| mock_llm::kind(&r.prompt) == Kind::Adjudicate)
        .collect();
    assert_eq!(adjudications.len(), 1);
    assert_eq!(
        mock_llm::adjudication_concerns(&adjudications[0].prompt).len(),
        2
    );
    // Not the whole spec: the cited lines (the concerns' line 7, which the
    // challenges name too) under their section heading.
    let p = &adjudications[0].prompt;
    assert!(!p.contains("=== SPEC START ===\n"), "{p}");
    assert!(
        p.contains("=== SPEC START (excerpt) ===\n3|## Design"),
        "{p}"
    );
    assert!(p.contains("\n7|Events are stored in Postgres"), "{p}");
    assert!(
        !p.contains("Webhook receiver") && !p.contains("Ship to all users"),
        "{p}"
    );
    assert_eq!(v.stats.rebuttal.challenges, 2);
    assert_eq!(v.stats.rebuttal.sustained, 2);
    for t in ["paranoid_security false alarm", "burned_oncall false alarm"] {
        assert_eq!(status_of(&v, t), Status::Reinstated);
    }
    // One call counted for the phase, however many concerns it decided.
    let eval = v.stats.models.values().find(|m| m.role == "eval").unwrap();
    assert_eq!(eval.calls, 2, "1 evaluation batch + 1 adjudication");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_input_tokens_are_counted() {
    for api in [Api::OpenAi, Api::Anthropic] {
        let server = MockServer::start(api, |r, _| Reply::Text(good(&r.prompt, Style::Json))).await;
        let kind = if api == Api::OpenAi {
            ProviderKind::OpenAi
        } else {
            ProviderKind::Anthropic
        };
        let (v, _) = run_with(&server, kind, SPEC, |run| {
            if api == Api::OpenAi {
                for m in [&mut run.settings.attack, &mut run.settings.final_boss] {
                    m.model = "gpt-4o-mini".into();
                }
                run.settings.eval[0].model = "gpt-4o-mini".into();
            }
        })
        .await;
        assert_expected(&v);
        let input: u64 = v.stats.models.values().map(|m| m.input_tokens).sum();
        let cached: u64 = v.stats.models.values().map(|m| m.cached_input_tokens).sum();
        // What the server said it served from cache, summed over the calls.
        let reported: u64 = server
            .requests()
            .iter()
            .map(|r| ((r.shared_prefix / 4) as u64).min((r.body.len() / 4) as u64))
            .sum();
        assert!(cached > 0 && cached < input, "{cached} of {input}");
        assert_eq!(cached, reported);
        if api == Api::Anthropic {
            // Anthropic's input_tokens leaves the cached part out; ours has it.
            let bodies: u64 = server
                .requests()
                .iter()
                .map(|r| (r.body.len() / 4) as u64)
                .sum();
            assert_eq!(input, bodies);
            // The spec block carries the cache breakpoint.
            let b: serde_json::Value = serde_json::from_str(&server.requests()[0].body).unwrap();
            let block = &b["messages"][0]["content"][0];
            assert_eq!(block["cache_control"]["type"], "ephemeral");
            assert!(block["text"].as_str().unwrap().contains("=== SPEC END ==="));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_title_model_concerns_keep_distinct_ids() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        if mock_llm::kind(&r.prompt) == Kind::Attack {
            Reply::Text(
                r#"{"concerns": [
                    {"title": "Unbounded retries", "detail": "the webhook retry has no cap", "severity": "high", "lines": [7, 7]},
                    {"title": "Unbounded retries", "detail": "the Postgres writes are retried forever", "severity": "medium", "lines": [7, 7]},
                    {"title": "Unbounded retries", "detail": "the webhook retry has no cap.", "severity": "high", "lines": [5, 5]}
                ]}"#
                .into(),
            )
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    // Per adversary: the two different details survive under distinct ids;
    // the true repeat (same detail) merges, widening the lines.
    assert_eq!(
        v.concerns.len(),
        4,
        "{:?}",
        v.concerns
            .iter()
            .map(|c| (&c.id, &c.detail))
            .collect::<Vec<_>>()
    );
    let mut ids: Vec<&str> = v.concerns.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);
    assert!(
        v.concerns
            .iter()
            .any(|c| c.detail.contains("Postgres writes"))
    );
    let capped = v
        .concerns
        .iter()
        .find(|c| c.adversary == "paranoid_security" && c.detail.contains("no cap"))
        .unwrap();
    assert_eq!(capped.lines, Some((5, 7)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attack_items_without_title_or_detail_are_repaired_then_fail() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        if mock_llm::kind(&r.prompt) == Kind::Attack {
            Reply::Text(r#"{"concerns": [{"severity": "high", "lines": [5, 5]}]}"#.into())
        } else {
            Reply::Text(good(&r.prompt, Style::Json))
        }
    })
    .await;
    let (v, _) = run_with(&server, ProviderKind::OpenAiCompatible, SPEC, |_| {}).await;
    let repairs = server
        .requests()
        .iter()
        .filter(|r| mock_llm::is_repair(&r.prompt))
        .count();
    assert_eq!(repairs, 2, "one repair per persona");
    assert_eq!(v.stats.attack.failed.len(), 2);
    assert!(
        v.warnings
            .iter()
            .any(|w| w.contains("neither a title nor a detail")),
        "{:?}",
        v.warnings
    );
    // Never a quiet pass.
    assert_eq!(v.verdict, Outcome::Incomplete);
}

/// The upstream gap (docs/litellm-retry-after.md): litellm-rs 0.9.0's
/// OpenAI-compatible chat path drops the `Retry-After` header of a 429,
/// which is why `openai-compatible/` runs through our own HTTP calls. When
/// this test fails, litellm has fixed it and the workaround can be revisited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn litellm_0_9_drops_retry_after_but_our_http_path_sees_it() {
    use gauntlet::provider::litellm::LitellmProvider;
    use gauntlet::provider::{CompletionRequest, Provider, ProviderError};
    let server = MockServer::start(Api::OpenAi, |_, _| Reply::Raw {
        status: 429,
        headers: vec![("retry-after".into(), "4".into())],
        body: r#"{"error": {"message": "slow down", "type": "rate_limit"}}"#.into(),
    })
    .await;
    let request = CompletionRequest {
        prompt: "hi".into(),
        ..CompletionRequest::default()
    };
    // Gemini and Ollama lose it too (their native paths; base without /v1).
    let root = server.base.trim_end_matches("/v1").to_string();
    for (kind, model, base) in [
        (ProviderKind::OpenAiCompatible, "m", server.base.clone()),
        (ProviderKind::Gemini, "gemini-2.5-flash", root.clone()),
        (ProviderKind::Ollama, "llama3", root.clone()),
    ] {
        let name = ModelName::new(kind, model);
        let key = Some("AIzaSyTESTKEY0123456789abcdefghijklmnopq".to_string());
        // litellm's Gemini client refuses a request timeout under its 10 s
        // connect timeout.
        let litellm = LitellmProvider::new(&name, key.clone(), Some(base.clone()), 30);
        let e = litellm.complete(&request).await.unwrap_err();
        // The header's 4 s is lost: nothing, or (Gemini) a 60 s guess made
        // because the body mentions a rate limit.
        assert!(
            matches!(e, ProviderError::RateLimited { .. })
                && e.retry_after() != Some(Duration::from_secs(4)),
            "{kind:?}: {e:?}"
        );
        // Our HTTP path, for every API provider (Gemini and Ollama through
        // their OpenAI-compatible endpoints).
        let ours_base = if kind == ProviderKind::Gemini {
            server.base.clone()
        } else {
            base
        };
        let ours = api_provider(&name, key, Some(ours_base), 5);
        let e = ours.complete(&request).await.unwrap_err();
        assert_eq!(
            e.retry_after(),
            Some(Duration::from_secs(4)),
            "{kind:?}: {e:?}"
        );
    }
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths
            .iter()
            .filter(|p| p.as_str() == "/v1/chat/completions")
            .count(),
        4,
        "{paths:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_reply_is_refused_not_read_into_memory() {
    use gauntlet::provider::http_chat::MAX_REPLY_BYTES;
    use gauntlet::provider::{CompletionRequest, ProviderError};
    let server = MockServer::start(Api::OpenAi, |_, _| Reply::Raw {
        status: 200,
        headers: vec![],
        body: "x".repeat(MAX_REPLY_BYTES + 1),
    })
    .await;
    let name = ModelName::new(ProviderKind::OpenAiCompatible, "m");
    let p = api_provider(&name, None, Some(server.base.clone()), 5);
    let request = CompletionRequest {
        prompt: "hi".into(),
        ..CompletionRequest::default()
    };
    let e = p.complete(&request).await.unwrap_err();
    assert!(
        matches!(e, ProviderError::Fatal(ref m) if m.contains("larger than")),
        "{e:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_evaluation_call_carries_several_batches() {
    let server = MockServer::start(Api::OpenAi, |r, _| {
        Reply::Text(good(&r.prompt, Style::Json))
    })
    .await;
    let run = ModelRun::new(settings(&server, ProviderKind::OpenAiCompatible));
    let base = server.base.clone();
    let options = RunOptions {
        adversaries: vec!["paranoid_security".into(), "burned_oncall".into()],
        // Four concerns in batches of two: two batches, one call.
        batch_size: 2,
        ..RunOptions::default()
    };
    let g = run
        .gauntlet_with(
            Arc::new(Catalog::builtin().unwrap()),
            options,
            false,
            &SystemProbe,
            &mut |m, _| Ok(api_provider(m, None, Some(base.clone()), 5)),
        )
        .unwrap();
    let spec = Spec::parse(Some("spec.md".into()), SPEC.to_string());
    let v = g.run(&spec, &NoFilter, &|_| {}).await;
    assert_expected(&v);
    assert_eq!(v.stats.evaluation.batches, 2);
    let evals: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| mock_llm::kind(&r.prompt) == Kind::Eval)
        .collect();
    assert_eq!(evals.len(), 1, "one call for both batches");
    assert_eq!(mock_llm::concerns(&evals[0].prompt).len(), 4);
    // The spec is sent once in it.
    assert_eq!(evals[0].prompt.matches("=== SPEC START ===").count(), 1);
}
