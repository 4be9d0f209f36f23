//! The divergence checklist in model prompts (fake provider): present in
//! attack and evaluation prompts, after the spec, only when the spec uses a
//! technology with nuances; and the token cost of each complexity level.

use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::fake::FakeProvider;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{
    CompletionRequest, ModelName, ModelRun, ModelSettings, Provider, ProviderKind,
};
use gauntlet::spec::Spec;
use std::sync::{Arc, Mutex};

fn respond(r: &CompletionRequest) -> String {
    if r.prompt.contains("as the adversary `") {
        return r#"{"concerns": [{"title": "Sessions may vanish", "detail": "no persistence stated", "severity": "high", "lines": [5, 5]}]}"#.to_string();
    }
    let id = regex::Regex::new(r"\[([A-Z]+-[0-9a-f]{8})\]")
        .unwrap()
        .captures(&r.prompt)
        .map(|c| c[1].to_string())
        .unwrap_or_default();
    format!(
        r#"{{"votes": [{{"id": "{id}", "decision": "dismiss", "reasoning": "line 5 covers it", "cites": [5]}}]}}"#
    )
}

/// Runs one spec on fake models; returns every prompt sent.
async fn prompts(
    spec: &str,
    nuances: bool,
    final_boss: bool,
    options: RunOptions,
) -> (Vec<String>, gauntlet::verdict::Verdict) {
    let k = ProviderKind::OpenAiCompatible;
    let settings = ModelSettings {
        attack: ModelName::new(k, "attacker"),
        eval: vec![ModelName::new(k, "eval-a"), ModelName::new(k, "eval-b")],
        final_boss: ModelName::new(k, "boss"),
        ..ModelSettings::offline()
    };
    let mr = ModelRun::new(settings);
    let options = RunOptions {
        nuances: if nuances {
            gauntlet::nuance::load(&Default::default())
                .unwrap()
                .map(Arc::new)
        } else {
            None
        },
        ..options
    };
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let s2 = seen.clone();
    let g = mr
        .gauntlet_with(
            Arc::new(Catalog::builtin().unwrap()),
            options,
            final_boss,
            &SystemProbe,
            &mut |m, _| {
                let seen = s2.clone();
                Ok(Arc::new(FakeProvider::new(&m.to_string(), move |r| {
                    // The whole user message: the shared spec context, then the prompt.
                    seen.lock()
                        .unwrap()
                        .push(format!("{}{}", r.context, r.prompt));
                    Ok(respond(r))
                })) as Arc<dyn Provider>)
            },
        )
        .unwrap();
    let spec = Spec::parse(None, spec.to_string());
    let (g, _) = gauntlet::triage::gauntlet_for(&g, &spec);
    let v = g.run(&spec, &NoFilter, &|_| {}).await;
    let p = seen.lock().unwrap().clone();
    (p, v)
}

const REDIS: &str = "# Sessions\n\n## Design\n\nUser sessions are stored in Redis.\n";
const PLAIN: &str = "# Sessions\n\n## Design\n\nUser sessions are stored in the session table.\n";

fn one_adversary() -> RunOptions {
    RunOptions {
        adversaries: vec!["burned_oncall".into()],
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn the_checklist_goes_after_the_spec_only_when_a_technology_is_detected() {
    let (p, _) = prompts(REDIS, true, false, one_adversary()).await;
    let attack: Vec<&String> = p
        .iter()
        .filter(|x| x.contains("as the adversary `"))
        .collect();
    let eval: Vec<&String> = p
        .iter()
        .filter(|x| x.contains("Concerns (vote on each, by id)"))
        .collect();
    assert!(!attack.is_empty() && !eval.is_empty());
    for prompt in attack.iter().chain(eval.iter()) {
        let list = prompt
            .find("DIVERGENCE CHECKLIST")
            .expect("checklist in prompt");
        let end = prompt.find("=== SPEC END ===").unwrap();
        assert!(list > end, "the checklist comes after the spec");
        assert!(prompt.contains("\n## Redis\n- "));
        assert!(!prompt.contains("## PostgreSQL"));
    }
    assert!(attack[0].contains("When critiquing, explicitly check:"));
    assert!(eval[0].contains("Do not dismiss") && eval[0].contains("the nuance wins"));

    // No technology: no checklist anywhere.
    let (p, _) = prompts(PLAIN, true, false, one_adversary()).await;
    assert!(!p.is_empty());
    assert!(p.iter().all(|x| !x.contains("DIVERGENCE CHECKLIST")));
    // Nuances off: none either, even with Redis.
    let (p, _) = prompts(REDIS, false, false, one_adversary()).await;
    assert!(p.iter().all(|x| !x.contains("DIVERGENCE CHECKLIST")));
}

/// The figure for the notes: tokens per level on a dev-corpus spec with the
/// fake provider (tokens are chars/4, as the fake reports them). Run with
/// `cargo test --test nuances_prompts -- --ignored --nocapture`.
#[tokio::test]
#[ignore]
async fn tokens_per_level_on_a_dev_spec() {
    let path = std::env::var("LEVEL_SPEC")
        .unwrap_or_else(|_| "../shared/corpus/dev/webhook-retry-dispatcher.md".into());
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("no spec at {path}");
        return;
    };
    for (level, final_boss) in [
        (gauntlet::triage::Level::Quick, false),
        (gauntlet::triage::Level::Standard, false),
        (gauntlet::triage::Level::Thorough, true),
    ] {
        let options = RunOptions {
            complexity: gauntlet::triage::Request {
                level: Some(level),
                ..Default::default()
            },
            ..RunOptions::default()
        };
        let (p, v) = prompts(&text, true, final_boss, options).await;
        let (calls, input, output) = v.stats.models.values().fold((0, 0, 0), |a, m| {
            (a.0 + m.calls, a.1 + m.input_tokens, a.2 + m.output_tokens)
        });
        println!(
            "{:<9} calls {calls:>3}  prompts {:>3}  input tokens {input:>7}  output tokens {output:>6}",
            level.as_str(),
            p.len(),
        );
    }
}
