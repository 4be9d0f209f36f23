//! Whole runs on the deterministic fake provider: the failure rules that
//! must never turn into a silent pass.

use gauntlet::catalog::Catalog;
use gauntlet::concern::Status;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::fake::FakeProvider;
use gauntlet::provider::retry::RetryPolicy;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{
    CompletionRequest, ModelName, ModelRun, ModelSettings, Provider, ProviderKind,
};
use gauntlet::spec::Spec;
use gauntlet::verdict::{Outcome, Verdict};
use std::sync::Arc;
use std::time::Duration;

const SPEC: &str = "# Title\n\n## Design\n\nThe API stores uploads.\n";

fn attack_json(p: &CompletionRequest) -> Option<String> {
    p.prompt.contains("as the adversary `").then(|| {
        r#"{"concerns": [{"title": "Uploads unbounded", "detail": "no size limit", "severity": "high", "lines": [5, 5]}]}"#.to_string()
    })
}

async fn run(
    eval: Vec<&str>,
    final_boss: bool,
    respond: impl Fn(&str, &CompletionRequest) -> String + Send + Sync + Clone + 'static,
) -> Verdict {
    let k = ProviderKind::OpenAiCompatible;
    let settings = ModelSettings {
        attack: ModelName::new(k, "attacker"),
        eval: eval.iter().map(|m| ModelName::new(k, m)).collect(),
        final_boss: ModelName::new(k, "boss"),
        ..ModelSettings::offline()
    };
    let mut mr = ModelRun::new(settings);
    mr.retry = RetryPolicy {
        max_retries: 1,
        base: Duration::from_millis(1),
        max_wait: Duration::from_millis(5),
    };
    let g = mr
        .gauntlet_with(
            Arc::new(Catalog::builtin().unwrap()),
            RunOptions {
                adversaries: vec!["paranoid_security".into()],
                ..RunOptions::default()
            },
            final_boss,
            &SystemProbe,
            &mut |m, _| {
                let name = m.to_string();
                let respond = respond.clone();
                Ok(Arc::new(FakeProvider::new(&name.clone(), move |r| {
                    Ok(respond(&name, r))
                })) as Arc<dyn Provider>)
            },
        )
        .unwrap();
    g.run(&Spec::parse(None, SPEC.into()), &NoFilter, &|_| {})
        .await
}

fn votes(r: &CompletionRequest, decision: &str) -> String {
    let id = regex::Regex::new(r"\[(PARA-[0-9a-f]{8})\]")
        .unwrap()
        .captures(&r.prompt)
        .unwrap()[1]
        .to_string();
    format!(r#"{{"votes": [{{"id": "{id}", "decision": "{decision}", "reasoning": "line 5"}}]}}"#)
}

#[tokio::test]
async fn an_evaluator_that_never_answers_readably_is_an_abstention_and_incomplete() {
    // Three evaluators: two answer, one babbles. 2 of 3 votes is a majority.
    let v = run(vec!["a", "b", "c"], false, |model, r| {
        attack_json(r).unwrap_or_else(|| {
            if model.ends_with("/c") {
                "no idea".into()
            } else {
                votes(r, "accept")
            }
        })
    })
    .await;
    assert_eq!(v.concerns[0].status, Status::Accepted);
    assert_eq!(v.stats.evaluation.abstentions, 1);
    assert_eq!(v.verdict, Outcome::Revise);
    assert!(
        v.warnings
            .iter()
            .any(|w| w.contains("after one repair request")),
        "{:?}",
        v.warnings
    );

    // Two of three babble: one vote is not a majority: deferred, incomplete.
    let v = run(vec!["a", "b", "c"], false, |model, r| {
        attack_json(r).unwrap_or_else(|| {
            if model.ends_with("/a") {
                votes(r, "accept")
            } else {
                "no idea".into()
            }
        })
    })
    .await;
    assert_eq!(v.concerns[0].status, Status::Deferred);
    assert_eq!(v.verdict, Outcome::Incomplete);
}

#[tokio::test]
async fn a_final_boss_that_fails_is_incomplete_never_pass() {
    let v = run(vec!["a"], true, |model, r| {
        attack_json(r).unwrap_or_else(|| {
            if model.ends_with("/boss") {
                "I cannot help with that.".into()
            } else {
                votes(r, "dismiss")
            }
        })
    })
    .await;
    // Dismissed (the rebuttal reply is unreadable too, so the dismissal stands) ...
    assert_eq!(v.concerns[0].status, Status::Dismissed);
    // ... which alone would pass, but the final boss failed.
    assert!(v.final_boss.is_none());
    assert_eq!(v.verdict, Outcome::Incomplete);
    assert!(
        v.warnings.iter().any(|w| w.contains("final boss failed")),
        "{:?}",
        v.warnings
    );
}

#[tokio::test]
async fn a_final_boss_that_passes_is_recorded() {
    let v = run(vec!["a"], true, |model, r| {
        attack_json(r).unwrap_or_else(|| {
            if model.ends_with("/boss") {
                r#"{"verdict": "PASS", "summary": "users are better off", "findings": []}"#.into()
            } else if r.prompt.contains("OPTION B - CHALLENGE DISMISSAL") {
                "ACCEPTED: fair".into()
            } else {
                votes(r, "dismiss")
            }
        })
    })
    .await;
    assert_eq!(v.verdict, Outcome::Pass, "{:?}", v.warnings);
    assert_eq!(
        v.final_boss.as_ref().unwrap().summary,
        "users are better off"
    );
    assert_eq!(
        v.models.final_boss.as_deref(),
        Some("openai-compatible/boss")
    );
}
