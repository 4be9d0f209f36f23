//! The verdict remembers, through the real binary: carry-forward across
//! runs (new, still open, resolved, reopened, contested), spec identity
//! across rename, stdin and edits, `gauntlet history`, the final boss and
//! deferred concerns failing a run, split votes, fresh-eyes questions and
//! offline rounds. Specs use the fixed fixture rule pack.

mod support;

use serde_json::Value;
use std::path::Path;
use support::{fixture, gauntlet};

const GAP: &str = "# Widget Service\n\n## Design\n\nThe Billing service calls the Ledger API to frobnicate each widget.\n";
const GONE: &str =
    "# Widget Service\n\n## Design\n\nThe Billing service calls the Ledger API for each widget.\n";

/// A run in `dir` (the project root and the store's parent) at day `day`
/// of January 2026; the JSON verdict and the exit code.
fn run_in(
    dir: &Path,
    spec: Option<&str>,
    stdin: Option<&str>,
    day: u32,
    extra: &[&str],
) -> (Value, i32) {
    // `--builtin`: the built-in personas instead of the fixture rule pack.
    let pack = !extra.contains(&"--builtin");
    let extra: Vec<&str> = extra
        .iter()
        .copied()
        .filter(|a| *a != "--builtin")
        .collect();
    let mut r = gauntlet().cwd(dir);
    if pack {
        r = r
            .arg("--personas-dir")
            .path(&fixture("personas"))
            .args(["--adversaries", "lazy_developer"]);
    }
    let mut r = r
        .args(["--format", "json", "--quiet", "--no-report"])
        .args([
            "--now",
            &format!("2026-01-{day:02}T00:00:00Z"),
            "--store-dir",
        ])
        .path(&dir.join("store"))
        .args(&extra);
    if let Some(s) = spec {
        r = r.arg(s);
    }
    if let Some(s) = stdin {
        r = r.stdin(s);
    }
    let out = r.run();
    assert!(
        out.code == 0 || out.code == 1,
        "exit {}: {}",
        out.code,
        out.stderr
    );
    (out.json(), out.code)
}

fn state(v: &Value, id: &str) -> Option<String> {
    v["carry_forward"]["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .map(|c| c["state"].as_str().unwrap().to_string())
}

fn the_concern(v: &Value) -> String {
    v["concerns"][0]["id"].as_str().unwrap().to_string()
}

#[test]
fn carry_forward_new_still_open_resolved_reopened_contested() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = dir.join("widgets.md");
    std::fs::write(&spec, GAP).unwrap();

    let (v1, code) = run_in(dir, Some("widgets.md"), None, 1, &[]);
    assert_eq!(code, 1);
    let id = the_concern(&v1);
    assert_eq!(state(&v1, &id).as_deref(), Some("new"));
    assert_eq!(v1["carry_forward"]["previous_runs"], 0);
    assert_eq!(v1["carry_forward"]["matched_by"], "new");
    assert_eq!(v1["carry_forward"]["spec_key"], "widgets.md");

    let (v2, _) = run_in(dir, Some("widgets.md"), None, 3, &[]);
    assert_eq!(state(&v2, &id).as_deref(), Some("still_open"));
    let c = &v2["carry_forward"]["concerns"][0];
    assert_eq!(c["open_since"], "2026-01-01T00:00:00Z");
    assert_eq!(c["open_runs"], 2);
    assert_eq!(v2["carry_forward"]["previous_runs"], 1);

    // The frobnication is gone from the spec: resolved, listed, not failing.
    std::fs::write(&spec, GONE).unwrap();
    let (v3, code) = run_in(dir, Some("widgets.md"), None, 5, &[]);
    assert_eq!(code, 0, "a resolved concern does not fail the run");
    let resolved = v3["carry_forward"]["resolved"].as_array().unwrap();
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0]["id"], id.as_str());
    assert_eq!(resolved[0]["open_since"], "2026-01-01T00:00:00Z");
    assert!(
        v3["carry_forward"]["contested"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(v3["carry_forward"]["content_changed"], true);

    // Back again: reopened, and with open → resolved → open the outcome has
    // flipped twice: contested, shown at the top of the report.
    std::fs::write(&spec, GAP).unwrap();
    let (v4, code) = run_in(dir, Some("widgets.md"), None, 7, &[]);
    assert_eq!(code, 1);
    assert_eq!(state(&v4, &id).as_deref(), Some("reopened"));
    let contested = v4["carry_forward"]["contested"].as_array().unwrap();
    assert_eq!(contested.len(), 1);
    assert_eq!(contested[0]["flips"], 2);
    let outcomes: Vec<&str> = contested[0]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["open", "open", "resolved", "open"]);

    // The text report puts it first, before the phases.
    let text = gauntlet()
        .cwd(dir)
        .arg("--personas-dir")
        .path(&fixture("personas"))
        .args(["--adversaries", "lazy_developer", "--quiet", "--no-report"])
        .args(["--now", "2026-01-09T00:00:00Z", "--store-dir"])
        .path(&dir.join("store"))
        .arg("widgets.md")
        .run();
    let top = text
        .stdout
        .find("Contested across runs")
        .expect("contested section");
    assert!(
        top < text.stdout.find("Phase 1").unwrap(),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains(&format!("{id} still open since 2026-01-07 (2 runs)"))
    );

    let md = gauntlet()
        .cwd(dir)
        .arg("--personas-dir")
        .path(&fixture("personas"))
        .args(["--adversaries", "lazy_developer", "--quiet", "--no-report"])
        .args([
            "--format",
            "markdown",
            "--now",
            "2026-01-09T00:00:00Z",
            "--store-dir",
        ])
        .path(&dir.join("store"))
        .arg("widgets.md")
        .run();
    let warn = md
        .stdout
        .find("**Contested across runs**")
        .expect("contested");
    assert!(
        warn < md
            .stdout
            .find("### Concerns that require revision")
            .unwrap()
    );

    // `gauntlet history` shows the timeline.
    let h = gauntlet()
        .cwd(dir)
        .args(["history", "widgets.md", "--store-dir"])
        .path(&dir.join("store"))
        .run()
        .code(0);
    assert!(h.stdout.contains("CONTESTED (2 flips)"), "{}", h.stdout);
    assert!(
        h.stdout.contains("2026-01-01 open → 2026-01-03 open → 2026-01-05 resolved → 2026-01-07 open → 2026-01-09 open → 2026-01-09 open"),
        "{}",
        h.stdout
    );
    let hj = gauntlet()
        .cwd(dir)
        .args(["history", "widgets.md", "--format", "json", "--store-dir"])
        .path(&dir.join("store"))
        .run()
        .json();
    assert_eq!(hj["runs"], 6);
    assert_eq!(hj["concerns"][0]["contested"], true);
    // Piped, the same content finds the same history.
    let piped = gauntlet()
        .cwd(dir)
        .args(["history", "--format", "json", "--store-dir"])
        .path(&dir.join("store"))
        .stdin(GAP)
        .run()
        .json();
    assert_eq!(piped["spec_key"], "widgets.md");
    assert_eq!(piped["matched_by"], "content");

    // The store check knows the new file.
    let check = gauntlet()
        .args(["store", "check", "--store-dir"])
        .path(&dir.join("store"))
        .run()
        .code(0);
    assert!(
        check.stdout.contains("concern_history.json"),
        "{}",
        check.stdout
    );
}

#[test]
fn a_concern_of_an_adversary_that_did_not_run_is_not_resolved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("w.md"), GAP).unwrap();
    let (v1, _) = run_in(dir, Some("w.md"), None, 1, &[]);
    let id = the_concern(&v1);
    // Only paranoid_security this time: nothing of lazy_developer is judged.
    let out = gauntlet()
        .cwd(dir)
        .args([
            "--adversaries",
            "paranoid_security",
            "--format",
            "json",
            "--quiet",
        ])
        .args([
            "--no-report",
            "--now",
            "2026-01-02T00:00:00Z",
            "--store-dir",
        ])
        .path(&dir.join("store"))
        .arg("w.md")
        .run();
    assert!(
        out.json()["carry_forward"]["resolved"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (v3, _) = run_in(dir, Some("w.md"), None, 3, &[]);
    assert_eq!(state(&v3, &id).as_deref(), Some("still_open"));
}

fn statuses(v: &Value) -> Vec<(String, String)> {
    v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn dismissals_follow_a_renamed_or_piped_spec_and_an_edit_costs_thirty_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = std::fs::read_to_string(fixture("store-spec.md")).unwrap();
    std::fs::write(dir.join("a.md"), &text).unwrap();
    // All on one day, so decay does not blur the 30% spec-change penalty.
    let b = ["--builtin"];
    let (v1, _) = run_in(dir, Some("a.md"), None, 1, &b);
    let dismissed = with_status(&v1, "dismissed");
    assert!(!dismissed.is_empty(), "the fixture must have dismissals");

    // Renamed: found by content, the dismissals still apply in full.
    std::fs::rename(dir.join("a.md"), dir.join("b.md")).unwrap();
    let (v2, _) = run_in(dir, Some("b.md"), None, 1, &b);
    assert_eq!(v2["carry_forward"]["matched_by"], "content");
    assert_eq!(v2["carry_forward"]["spec_key"], "a.md");
    assert_eq!(with_status(&v2, "filtered"), dismissed);
    let c = v2["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"] == "filtered")
        .unwrap();
    assert_eq!(c["filter"]["confidence"], 0.9);

    // Piped: the same content on standard input is the same spec.
    let (v3, _) = run_in(dir, None, Some(&text), 1, &b);
    assert_eq!(v3["carry_forward"]["spec_key"], "a.md");
    assert_eq!(v3["carry_forward"]["matched_by"], "content");
    assert_eq!(with_status(&v3, "filtered"), dismissed);

    // Edited in place: the same spec (by path), but each stored explanation
    // loses 30% (0.9 × 0.7 = 0.63, below the 0.7 drop threshold), so they
    // are evaluated again with the earlier explanation noted.
    let edited = format!("{text}\n## Rollout\n\nBehind a flag.\n");
    std::fs::write(dir.join("b.md"), &edited).unwrap();
    let (v4, _) = run_in(dir, Some("b.md"), None, 1, &b);
    assert_eq!(v4["carry_forward"]["matched_by"], "path");
    assert_eq!(v4["carry_forward"]["content_changed"], true);
    assert!(with_status(&v4, "filtered").is_empty());
    assert_eq!(v4["stats"]["filter"]["noted"], dismissed.len());
    for c in v4["concerns"].as_array().unwrap() {
        if let Some(conf) = c["filter"]["confidence"].as_f64() {
            assert!((conf - 0.63).abs() < 1e-9, "{conf}");
        }
    }

    // Renamed and edited: found by its unchanged sections.
    std::fs::rename(dir.join("b.md"), dir.join("c.md")).unwrap();
    std::fs::write(dir.join("c.md"), format!("{edited}Off by default.\n")).unwrap();
    let (v5, _) = run_in(dir, Some("c.md"), None, 1, &b);
    assert_eq!(v5["carry_forward"]["matched_by"], "sections");
    assert_eq!(v5["carry_forward"]["spec_key"], "a.md");

    // A copy beside its original is another spec.
    std::fs::copy(dir.join("c.md"), dir.join("d.md")).unwrap();
    let (v6, _) = run_in(dir, Some("d.md"), None, 1, &b);
    assert_eq!(v6["carry_forward"]["matched_by"], "new");
}

fn with_status(v: &Value, status: &str) -> Vec<String> {
    let mut ids: Vec<String> = statuses(v)
        .into_iter()
        .filter(|(_, s)| s == status)
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    ids
}

#[test]
fn the_final_boss_fails_a_run_with_its_own_concerns() {
    let base = |extra: &[&str]| {
        gauntlet()
            .arg("--personas-dir")
            .path(&fixture("personas"))
            .args(["--adversaries", "lazy_developer", "--no-store", "--quiet"])
            .args(["--fail-on", "high"])
            .args(extra)
            .path(&fixture("gap.md"))
            .run()
    };
    // The technical concern is medium: below --fail-on high.
    base(&["--format", "json"]).code(0);
    // The final boss finds no user problem (a fundamental, high finding).
    let out = base(&["--final-boss", "--format", "json"]).code(1);
    let v = out.json();
    assert_ne!(v["final_boss"]["verdict"], "PASS");
    let boss: Vec<&Value> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["adversary"] == "ux_architect")
        .collect();
    assert!(!boss.is_empty());
    assert!(boss.iter().all(|c| c["status"] == "accepted"));
    assert!(boss.iter().any(|c| c["severity"] == "high"));
    assert!(boss[0]["id"].as_str().unwrap().starts_with("UXAR-"));
    let sarif = base(&["--final-boss", "--format", "sarif"]).code(1).json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "gauntlet/ux_architect"),
        "{sarif}"
    );
    let text = base(&["--final-boss"]).code(1);
    assert!(
        text.stdout.contains("[ux_architect] UXAR-"),
        "{}",
        text.stdout
    );
}

const DEFERRED: &str = "# Widget Service\n\n## Design\n\nThe Billing service calls the Ledger API to frobnicate each widget. Whether frobnication is guarded is to be decided.\n";

#[test]
fn a_deferred_concern_needs_a_decision_unless_allowed() {
    let run = |extra: &[&str]| {
        gauntlet()
            .arg("--personas-dir")
            .path(&fixture("personas"))
            .args(["--adversaries", "lazy_developer", "--no-store", "--quiet"])
            .args(extra)
            .stdin(DEFERRED)
            .run()
    };
    let v = run(&["--format", "json"]).code(1).json();
    assert_eq!(v["concerns"][0]["status"], "deferred");
    assert_eq!(v["verdict"], "revise");
    // The evaluators split (defer, defer, accept): marked and listed.
    assert_eq!(v["concerns"][0]["contested_vote"], true);
    let text = run(&[]).code(1);
    assert!(
        text.stdout.contains("needs a decision: LAZY-"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("Evaluators disagreed (1):"),
        "{}",
        text.stdout
    );
    let md = run(&["--format", "markdown"]).code(1);
    assert!(
        md.stdout.contains("### Evaluators disagreed"),
        "{}",
        md.stdout
    );
    let v = run(&["--format", "json", "--allow-deferred"])
        .code(0)
        .json();
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["allow_deferred"], true);
}

#[test]
fn fresh_eyes_offline_asks_about_what_the_spec_leaves_open() {
    let open = "# Widget Service\n\n## Requirements\n\n- Exports are encrypted at rest\n\n## Design\n\nThe Billing service guards every frobnication.\nThe queue size is TBD.\n\n## Open questions\n\n- Which region hosts the replica?\n";
    let out = gauntlet()
        .args(["--adversaries", "lazy_developer", "--personas-dir"])
        .path(&fixture("personas"))
        .args(["--no-store", "--quiet", "--fresh-eyes", "--format", "json"])
        .stdin(open)
        .run()
        .code(1);
    let v = out.json();
    let fe = &v["fresh_eyes"];
    assert_eq!(fe["recommendation"], "REVISE");
    let lines: Vec<u64> = fe["clarifying_questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["lines"][0].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [5, 10, 14]);
    for q in fe["clarifying_questions"].as_array().unwrap() {
        for k in ["question", "context", "impact"] {
            assert!(!q[k].as_str().unwrap().is_empty(), "{k} in {q}");
        }
        assert!(!q["options"].as_array().unwrap().is_empty());
    }

    let settled = "# Widget Service\n\n## Requirements\n\n- Frobnication is guarded\n\n## Design\n\nThe Billing service guards every frobnication.\n\n## Open questions\n\nNone.\n";
    let v = gauntlet()
        .args(["--adversaries", "lazy_developer", "--personas-dir"])
        .path(&fixture("personas"))
        .args(["--no-store", "--quiet", "--fresh-eyes", "--format", "json"])
        .stdin(settled)
        .run()
        .code(0)
        .json();
    assert_eq!(v["fresh_eyes"]["recommendation"], "APPROVE");
    assert!(
        v["fresh_eyes"]["clarifying_questions"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Answering the questions gives a second round; still open → escalate.
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("r.json");
    std::fs::write(
        &answers,
        r#"{"responses": [{"id": "OQ1", "response": "agree", "reason": "KMS"}]}"#,
    )
    .unwrap();
    let v = gauntlet()
        .args(["--adversaries", "lazy_developer", "--personas-dir"])
        .path(&fixture("personas"))
        .args([
            "--no-store",
            "--quiet",
            "--fresh-eyes",
            "--format",
            "json",
            "--responses",
        ])
        .path(&answers)
        .stdin(open)
        .run()
        .code(1)
        .json();
    assert_eq!(v["fresh_eyes"]["rounds"], 2);
    assert_eq!(v["fresh_eyes"]["escalated"], true);
    assert_eq!(
        v["fresh_eyes"]["clarifying_questions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn offline_rounds_converge_after_one_round_unless_responses_edit_the_spec() {
    let base = || {
        gauntlet()
            .args(["--adversaries", "lazy_developer", "--personas-dir"])
            .path(&fixture("personas"))
            .args(["--no-store", "--quiet", "--format", "json", "--rounds", "3"])
    };
    let v = base().stdin(GAP).run().code(1).json();
    let r = &v["rounds"];
    assert_eq!(r["max"], 3);
    assert_eq!(r["rounds"].as_array().unwrap().len(), 1);
    assert_eq!(r["stop"], "converged");

    // The author agrees and guards the frobnication (line 5): round 2 runs on
    // the edited spec, the concern is dismissed, nothing new: converged.
    let tmp = tempfile::tempdir().unwrap();
    let answers = tmp.path().join("r.json");
    let id = the_concern(&v);
    std::fs::write(
        &answers,
        format!(
            r#"{{"responses": [{{"id": "{id}", "response": "agree", "reason": "guarded", "edits": [{{"line": 5, "text": "The Billing service calls the Ledger API to frobnicate each widget, guarded by the Ledger quota."}}]}}]}}"#
        ),
    )
    .unwrap();
    let v = base()
        .arg("--responses")
        .path(&answers)
        .stdin(GAP)
        .run()
        .code(0)
        .json();
    let r = &v["rounds"];
    assert_eq!(r["rounds"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(r["stop"], "converged");
    assert_eq!(r["rounds"][1]["spec_edited"], true);
    assert_eq!(r["rounds"][1]["responses"], 1);
    // The offline attacker still raises it (a safeguard stated nearby is
    // for the evaluators to judge); the evaluators now dismiss it.
    let concerns = v["concerns"].as_array().unwrap();
    assert!(!concerns.is_empty(), "{v}");
    assert!(concerns.iter().all(|c| c["status"] == "dismissed"), "{v}");

    // More than 3 rounds is refused.
    gauntlet().args(["--rounds", "4"]).stdin(GAP).run().code(2);
    // A broken responses file is a usage error naming it.
    std::fs::write(&answers, "{").unwrap();
    gauntlet()
        .args(["--no-store", "--responses"])
        .path(&answers)
        .stdin(GAP)
        .run()
        .one_line_error("responses file");
}

#[test]
fn a_corrupt_history_stops_the_run_and_is_left_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("store")).unwrap();
    let file = dir.join("store/concern_history.json");
    std::fs::write(&file, b"{\"format_version\": 1, \"specs\": [").unwrap();
    let out = gauntlet()
        .cwd(dir)
        .args(["--store-dir"])
        .path(&dir.join("store"))
        .stdin(GAP)
        .run()
        .code(3);
    assert!(
        out.stderr.contains("concern_history.json is corrupt"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"{\"format_version\": 1, \"specs\": ["
    );
    std::fs::write(&file, b"{\"format_version\": 9}").unwrap();
    let check = gauntlet()
        .args(["store", "check", "--store-dir"])
        .path(&dir.join("store"))
        .run()
        .code(1);
    assert!(
        check.stdout.contains("format_version 9"),
        "{}",
        check.stdout
    );
}

#[test]
fn a_verdict_with_every_memory_field_matches_the_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(support::root().join("schema/verdict.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = dir.join("w.md");
    let open = format!("{GAP}\nThe queue size is TBD.\n");
    std::fs::write(&spec, &open).unwrap();
    let flags = [
        "--final-boss",
        "--fresh-eyes",
        "--rounds",
        "2",
        "--allow-deferred",
    ];
    run_in(dir, Some("w.md"), None, 1, &flags);
    run_in(dir, Some("w.md"), None, 2, &flags);
    std::fs::write(&spec, GONE).unwrap();
    run_in(dir, Some("w.md"), None, 3, &flags);
    std::fs::write(&spec, &open).unwrap();
    let (v, _) = run_in(dir, Some("w.md"), None, 4, &flags);
    for key in ["carry_forward", "fresh_eyes", "rounds", "allow_deferred"] {
        assert!(!v[key].is_null(), "{key} missing");
    }
    assert!(
        !v["carry_forward"]["contested"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_history_is_never_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("store")).unwrap();
    let victim = dir.join("victim.json");
    let original = br#"{"format_version": 1, "specs": [], "concerns": []}"#;
    std::fs::write(&victim, original).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("store/concern_history.json")).unwrap();
    let out = gauntlet()
        .cwd(dir)
        .args(["--quiet", "--store-dir"])
        .path(&dir.join("store"))
        .stdin(GAP)
        .run()
        .code(3);
    assert!(out.stderr.contains("symbolic link"), "{}", out.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), original);
    assert!(
        std::fs::symlink_metadata(dir.join("store/concern_history.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
