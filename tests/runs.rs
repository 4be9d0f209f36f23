//! `gauntlet runs list|show` end to end: every recorded run (single or in a
//! review) is saved and shown back as it was; --no-store saves nothing.

mod support;

use serde_json::Value;
use support::{fixture, gauntlet};

#[test]
fn runs_are_saved_listed_and_shown_back() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".git")).unwrap();
    let store = project.path().join(".adversarial-spec");
    let spec = fixture("gap.md");
    let run = |args: &[&str]| {
        gauntlet()
            .args(args)
            .cwd(project.path())
            .env("GAUNTLET_NOW", "2026-03-04T05:06:07Z")
    };

    run(&["--no-store", "--format", "json"])
        .path(&spec)
        .run()
        .code(1);
    assert!(!store.join("runs").exists(), "--no-store saves nothing");
    run(&["runs", "list"])
        .run()
        .code(0)
        .stdout_has("No saved runs");

    let first = run(&["--format", "json"]).path(&spec).run().code(1);
    assert!(
        first.stderr.contains("saved as run 20260304T050607Z-"),
        "{}",
        first.stderr
    );
    let verdict: Value = first.json();
    let second = run(&["--format", "json"]).path(&spec).run().code(1);
    let _ = second;

    let list: Value = serde_json::from_str(
        &run(&["runs", "list", "--format", "json"])
            .run()
            .code(0)
            .stdout,
    )
    .unwrap();
    let entries = list.as_array().unwrap();
    assert_eq!(entries.len(), 2);
    let ids: Vec<&str> = entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(ids[0] > ids[1], "newest first: {ids:?}");
    for e in entries {
        assert_eq!(e["run"]["verdict"], "revise");
        assert_eq!(e["run"]["at"], "2026-03-04T05:06:07Z");
        assert_eq!(e["calls"], 0);
    }
    let text = run(&["runs", "list"]).run().code(0);
    assert!(
        text.stdout.contains(ids[0]) && text.stdout.contains("revise"),
        "{}",
        text.stdout
    );

    // The saved verdict is the one the run printed.
    let shown = run(&["runs", "show", ids[1], "--format", "json"])
        .run()
        .code(0);
    let saved: Value = shown.json();
    assert_eq!(saved["concerns"], verdict["concerns"]);
    assert_eq!(saved["spec"], verdict["spec"]);
    run(&["runs", "show", ids[1]])
        .run()
        .code(0)
        .stdout_has("Adversarial Gauntlet Report");
    run(&["runs", "show", "2026"])
        .run()
        .code(2)
        .stderr_has("matches 2 runs");
    run(&["runs", "show", "nosuch"])
        .run()
        .code(2)
        .stderr_has("no run `nosuch`");

    // A review records each spec as its own run.
    let specs = project.path().join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    std::fs::copy(&spec, specs.join("a.md")).unwrap();
    std::fs::copy(fixture("mitigated.md"), specs.join("b.md")).unwrap();
    let review = run(&["review", "--quiet", "specs"]).run();
    assert!(review.code == 0 || review.code == 1, "{}", review.stderr);
    let list: Value = serde_json::from_str(
        &run(&["runs", "list", "--format", "json"])
            .run()
            .code(0)
            .stdout,
    )
    .unwrap();
    let specs: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["run"]["spec"].as_str())
        .filter(|s| s.starts_with("specs/"))
        .collect();
    assert_eq!(specs.len(), 2, "{list}");
}

#[test]
fn a_model_run_folder_lists_its_calls() {
    let project = tempfile::tempdir().unwrap();
    let store = project.path().join("store");
    let calls = store.join("runs/20260101T000000Z-42");
    std::fs::create_dir_all(&calls).unwrap();
    let call = serde_json::json!({
        "schema_version": 1, "seq": 1, "label": "attack-burned_oncall",
        "model": "openai/gpt-4o-mini", "elapsed_ms": 12,
        "request": {"system": "s", "prompt": "p"},
        "response": {"text": "[]", "usage": {"calls": 1, "input_tokens": 100, "output_tokens": 7, "cost_usd": 0.0, "estimated": false}},
        "error": null, "failed_attempts": []
    });
    std::fs::write(
        calls.join("0001-attack-burned_oncall.json"),
        call.to_string(),
    )
    .unwrap();
    let env = |r: support::Run| {
        r.cwd(project.path())
            .env("GAUNTLET_STORE_DIR", store.to_str().unwrap())
    };
    env(gauntlet().args(["runs", "list"]))
        .run()
        .code(0)
        .stdout_has("1 saved model call(s)");
    env(gauntlet().args(["runs", "show", "20260101"]))
        .run()
        .code(0)
        .stdout_has("attack-burned_oncall")
        .stdout_has("openai/gpt-4o-mini")
        .stdout_has("in 100 / out 7 tokens");
}
