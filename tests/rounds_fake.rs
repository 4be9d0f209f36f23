//! Debate rounds on the deterministic fake provider: convergence when no
//! new high or medium concern appears, the stop on oscillation when a
//! settled concern comes back, and the cap of 3 rounds. The fake attacker
//! answers by round (the round section is in its prompt from round 2 on).

use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::fake::FakeProvider;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{
    CompletionRequest, ModelName, ModelRun, ModelSettings, Provider, ProviderKind,
};
use gauntlet::spec::Spec;
use gauntlet::verdict::Verdict;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const SPEC: &str = "# Title\n\n## Design\n\nThe API stores uploads.\nA worker resizes images.\n";

fn round_of(r: &CompletionRequest) -> u8 {
    for n in [3u8, 2] {
        if r.prompt.contains(&format!("Debate round {n} of")) {
            return n;
        }
    }
    1
}

fn concerns(titles: &[&str]) -> String {
    let items: Vec<String> = titles
        .iter()
        .map(|t| {
            format!(r#"{{"title": "{t}", "detail": "d", "severity": "high", "lines": [5, 5]}}"#)
        })
        .collect();
    format!(r#"{{"concerns": [{}]}}"#, items.join(", "))
}

/// Votes on every concern id in an evaluation prompt; `dismiss` decides per title.
fn votes(r: &CompletionRequest, dismiss: &dyn Fn(&str) -> bool) -> String {
    let re = regex::Regex::new(r"\[([A-Z]{2,8}-[0-9a-f]{8})\][^\n]*\nTitle: ([^\n]*)").unwrap();
    let items: Vec<String> = re
        .captures_iter(&r.prompt)
        .map(|c| {
            let d = if dismiss(&c[2]) { "dismiss" } else { "accept" };
            format!(
                r#"{{"id": "{}", "decision": "{d}", "reasoning": "line 5", "cites": [5]}}"#,
                &c[1]
            )
        })
        .collect();
    format!(r#"{{"votes": [{}]}}"#, items.join(", "))
}

async fn run(
    rounds: u8,
    respond: impl Fn(&CompletionRequest) -> String + Send + Sync + Clone + 'static,
) -> Verdict {
    run_with(
        RunOptions {
            adversaries: vec!["paranoid_security".into()],
            rounds,
            ..RunOptions::default()
        },
        respond,
    )
    .await
}

async fn run_with(
    options: RunOptions,
    respond: impl Fn(&CompletionRequest) -> String + Send + Sync + Clone + 'static,
) -> Verdict {
    let k = ProviderKind::OpenAiCompatible;
    let settings = ModelSettings {
        attack: ModelName::new(k, "attacker"),
        eval: vec![ModelName::new(k, "judge")],
        final_boss: ModelName::new(k, "boss"),
        ..ModelSettings::offline()
    };
    let g = ModelRun::new(settings)
        .gauntlet_with(
            Arc::new(Catalog::builtin().unwrap()),
            options,
            false,
            &SystemProbe,
            &mut |m, _| {
                let respond = respond.clone();
                Ok(
                    Arc::new(FakeProvider::new(&m.to_string(), move |r| Ok(respond(r))))
                        as Arc<dyn Provider>,
                )
            },
        )
        .unwrap();
    g.run(&Spec::parse(None, SPEC.into()), &NoFilter, &|_| {})
        .await
}

fn is_attack(r: &CompletionRequest) -> bool {
    r.prompt.contains("as the adversary `")
}

fn rounds_json(v: &Verdict) -> Value {
    serde_json::to_value(v).unwrap()["rounds"].clone()
}

#[tokio::test]
async fn rounds_stop_when_nothing_new_appears() {
    let v = run(3, |r| {
        if is_attack(r) {
            // The same concern every round: nothing new after round 1.
            concerns(&["Uploads unbounded"])
        } else {
            votes(r, &|_| false)
        }
    })
    .await;
    let r = rounds_json(&v);
    assert_eq!(r["stop"], "converged", "{r}");
    assert_eq!(r["rounds"].as_array().unwrap().len(), 2);
    assert!(
        r["rounds"][1]["new_high_medium"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Every round's calls are in the stats: 2 × (1 attack + 1 evaluation).
    let calls: u64 = v.stats.models.values().map(|m| m.calls).sum();
    assert_eq!(calls, 4);
}

#[tokio::test]
async fn rounds_stop_on_oscillation() {
    // Round 1 dismisses "Images unchecked"; in round 2 the attacker raises
    // it again and the evaluator accepts it: the settled concern came back.
    let evals = Arc::new(AtomicUsize::new(0));
    let v = run(3, move |r| {
        if is_attack(r) {
            concerns(&["Uploads unbounded", "Images unchecked"])
        } else if r.prompt.contains("ACCEPTED:") && r.prompt.contains("CHALLENGED:") {
            "ACCEPTED: fair".into()
        } else {
            let n = evals.fetch_add(1, Ordering::SeqCst);
            votes(r, &|t| n == 0 && t == "Images unchecked")
        }
    })
    .await;
    let r = rounds_json(&v);
    assert_eq!(r["stop"], "oscillation", "{r}");
    assert_eq!(r["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(r["rounds"][1]["returned"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn rounds_are_capped_at_three() {
    let v = run(3, |r| {
        if is_attack(r) {
            // A new high concern every round: never converges.
            let n = round_of(r);
            concerns(&[&format!("Problem number {n}")])
        } else {
            votes(r, &|_| false)
        }
    })
    .await;
    let r = rounds_json(&v);
    assert_eq!(r["stop"], "cap", "{r}");
    assert_eq!(r["max"], 3);
    assert_eq!(r["rounds"].as_array().unwrap().len(), 3);
    for round in r["rounds"].as_array().unwrap().iter().skip(1) {
        assert_eq!(round["new_high_medium"].as_array().unwrap().len(), 1);
    }
    // Asking for more is capped too (the CLI refuses it outright).
    let v = run(9, |r| {
        if is_attack(r) {
            concerns(&[&format!("Problem number {}", round_of(r))])
        } else {
            votes(r, &|_| false)
        }
    })
    .await;
    assert_eq!(rounds_json(&v)["rounds"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn the_second_round_shows_the_attacker_the_previous_concerns_and_answers() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s = seen.clone();
    run(2, move |r| {
        if is_attack(r) {
            s.lock().unwrap().push(r.prompt.clone());
            concerns(&["Uploads unbounded"])
        } else {
            votes(r, &|_| false)
        }
    })
    .await;
    let prompts = seen.lock().unwrap();
    assert_eq!(prompts.len(), 2);
    assert!(!prompts[0].contains("Debate round"));
    assert!(prompts[1].contains("Debate round 2 of at most 2"));
    assert!(prompts[1].contains("Title: Uploads unbounded"));
    assert!(prompts[1].contains("Author: no answer."));
}

/// The figure for the report: what a second round costs in tokens on a dev
/// spec with the fake provider (estimated tokens, 4 characters each). Run
/// with `cargo test --test rounds_fake -- --ignored --nocapture`.
#[tokio::test]
#[ignore]
async fn second_round_token_cost_on_a_dev_spec() {
    let path = std::env::var("GAUNTLET_DEV_SPEC").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/team-invites.md").to_string()
    });
    let text = std::fs::read_to_string(&path).unwrap();
    let k = ProviderKind::OpenAiCompatible;
    for rounds in [1u8, 2] {
        let settings = ModelSettings {
            attack: ModelName::new(k, "attacker"),
            eval: vec![ModelName::new(k, "a"), ModelName::new(k, "b")],
            final_boss: ModelName::new(k, "boss"),
            ..ModelSettings::offline()
        };
        let g = ModelRun::new(settings)
            .gauntlet_with(
                Arc::new(Catalog::builtin().unwrap()),
                RunOptions {
                    rounds,
                    ..RunOptions::default()
                },
                false,
                &SystemProbe,
                &mut |m, _| {
                    Ok(Arc::new(FakeProvider::new(&m.to_string(), |r| {
                        Ok(if is_attack(r) {
                            concerns(&["Uploads unbounded", "Images unchecked"])
                        } else {
                            votes(r, &|_| false)
                        })
                    })) as Arc<dyn Provider>)
                },
            )
            .unwrap();
        let v = g
            .run(
                &Spec::parse(Some(path.clone()), text.clone()),
                &NoFilter,
                &|_| {},
            )
            .await;
        let tokens: u64 = v.stats.models.values().map(|m| m.tokens).sum();
        let calls: u64 = v.stats.models.values().map(|m| m.calls).sum();
        println!("rounds={rounds}: {calls} calls, {tokens} tokens ({path})");
    }
}

#[tokio::test]
async fn fresh_eyes_on_a_model_uses_the_overviewer_prompt_and_revises_on_a_question() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s = seen.clone();
    let options = RunOptions {
        adversaries: vec!["paranoid_security".into()],
        fresh_eyes: true,
        // One concern, dismissed and not rebutted: the verdict is the fresh
        // eyes' alone (an attack that returns nothing at all is incomplete).
        rebuttals: false,
        ..RunOptions::default()
    };
    let v = run_with(options.clone(), move |r| {
        if is_attack(r) {
            concerns(&["Uploads unbounded"])
        } else if r.prompt.contains("You are a fresh reader") {
            // The whole user message: the shared spec context, then the prompt.
            s.lock().unwrap().push(format!("{}{}", r.context, r.prompt));
            r#"{"findings": [{"severity": "low", "title": "Naming", "description": "d", "lines": [5]}],
                "clarifying_questions": [{"question": "Who may upload?", "context": "line 5", "impact": "authz",
                  "options": [{"label": "Anyone", "description": "public"}], "lines": [5, 99]}],
                "assessment": "thin", "recommendation": "APPROVE"}"#
                .to_string()
        } else {
            votes(r, &|_| true)
        }
    })
    .await;
    {
        let prompts = seen.lock().unwrap();
        assert_eq!(prompts.len(), 1);
        assert!(prompts[0].contains("Could an engineer follow this spec literally"));
        assert!(prompts[0].contains("\n5|The API stores uploads."));
    }
    let fe = v.memory.fresh_eyes.as_ref().unwrap();
    // The model said APPROVE, but an open question means REVISE.
    assert_eq!(fe.recommendation.as_str(), "REVISE");
    assert_eq!(fe.clarifying_questions[0].id, "OQ1");
    assert_eq!(fe.clarifying_questions[0].lines, vec![5]);
    assert_eq!(v.verdict.as_str(), "revise");
    assert!(v.stats.models.keys().any(|k| k.starts_with("fresh_eyes:")));

    // Nothing open and nothing high: APPROVE, and the run passes.
    let v = run_with(options, |r| {
        if is_attack(r) {
            concerns(&["Uploads unbounded"])
        } else if r.prompt.contains("You are a fresh reader") {
            r#"{"findings": [], "clarifying_questions": [], "assessment": "fine"}"#.to_string()
        } else {
            votes(r, &|_| true)
        }
    })
    .await;
    assert_eq!(
        v.memory
            .fresh_eyes
            .as_ref()
            .unwrap()
            .recommendation
            .as_str(),
        "APPROVE"
    );
    assert_eq!(v.verdict.as_str(), "pass");
}

#[test]
fn the_dry_run_plan_counts_every_round_and_the_fresh_eyes_call() {
    use gauntlet::provider::plan::Plan;
    let k = ProviderKind::OpenAiCompatible;
    let settings = ModelSettings {
        attack: ModelName::new(k, "attacker"),
        eval: vec![ModelName::new(k, "judge")],
        final_boss: ModelName::new(k, "boss"),
        ..ModelSettings::offline()
    };
    let catalog = Catalog::builtin().unwrap();
    let spec = Spec::parse(None, SPEC.into());
    let calls = |options: &RunOptions, phase: &str| {
        Plan::estimate(&settings, &catalog, options, false, &spec)
            .phases
            .iter()
            .find(|p| p.phase == phase)
            .map(|p| p.calls)
    };
    let one = RunOptions::default();
    let three = RunOptions {
        rounds: 3,
        fresh_eyes: true,
        ..RunOptions::default()
    };
    assert_eq!(calls(&one, "attack"), Some(5));
    assert_eq!(calls(&three, "attack"), Some(15));
    assert_eq!(calls(&one, "fresh_eyes"), None);
    assert_eq!(calls(&three, "fresh_eyes"), Some(1));
}
