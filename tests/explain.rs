//! Evaluators with different evidence standards, the rebuttal that catches a
//! dismissal citing a line about something else, and `gauntlet explain`.
//! Runs the real binary on specs in `tests/fixtures/`.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn gauntlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(args)
        .output()
        .expect("run gauntlet")
}

fn verdict(name: &str) -> Value {
    let spec = fixture(name);
    let out = gauntlet(&[
        "--format",
        "json",
        "--no-store",
        "-q",
        spec.to_str().unwrap(),
    ]);
    serde_json::from_slice(&out.stdout).expect("JSON verdict")
}

/// `gauntlet explain ID SPEC --format json`, which must exit 0.
fn explain_json(id: &str, spec: &std::path::Path) -> Value {
    let out = gauntlet(&[
        "explain",
        id,
        spec.to_str().unwrap(),
        "--format",
        "json",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).expect("JSON explanation")
}

fn concern<'a>(v: &'a Value, rule: &str) -> &'a Value {
    v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == rule)
        .unwrap_or_else(|| panic!("no `{rule}` concern"))
}

fn decision(c: &Value, evaluator: &str) -> String {
    c["votes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["evaluator"] == evaluator)
        .map(|v| v["decision"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn off_topic_evidence_fools_only_the_section_lexicon() {
    // Line 7 calls the Fraud API with no timeout; line 13 states a timeout
    // for a different job. The section lexicon accepts any timeout in its
    // section; the document model wants a policy or the same component, the
    // strict one wants it next to the call: they outvote it.
    let v = verdict("off-topic-evidence.md");
    let c = concern(&v, "missing-timeout");
    assert_eq!(c["lines"], serde_json::json!([7, 7]));
    assert_eq!(decision(c, "offline/section"), "dismiss");
    assert_eq!(decision(c, "offline/document"), "accept");
    assert_eq!(decision(c, "offline/strict"), "accept");
    let dismiss_cites = &c["votes"][0]["cites"];
    assert_eq!(dismiss_cites, &serde_json::json!([13]));
    assert_eq!(c["status"], "accepted");
    assert!(c["rebuttal"].is_null());
}

#[test]
fn on_topic_evidence_dismisses_and_the_rebuttal_accepts() {
    // The same call, with its timeout stated further down, naming the Fraud API.
    let v = verdict("on-topic-evidence.md");
    let c = concern(&v, "missing-timeout");
    assert_eq!(c["status"], "dismissed");
    for e in ["offline/section", "offline/document", "offline/strict"] {
        assert_eq!(decision(c, e), "dismiss", "{e}");
    }
    for vote in c["votes"].as_array().unwrap() {
        assert_eq!(vote["cites"], serde_json::json!([14]), "{vote}");
    }
    assert_eq!(c["rebuttal"]["outcome"], "accepted");
}

#[test]
fn explain_shows_rule_evidence_per_evaluator_and_outcome() {
    let v = verdict("off-topic-evidence.md");
    let id = concern(&v, "missing-timeout")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let spec = fixture("off-topic-evidence.md");
    // A unique prefix, in lower case, is enough.
    let prefix = id[..9].to_lowercase();
    let out = gauntlet(&["explain", &prefix, spec.to_str().unwrap(), "-q"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(&id), "{text}");
    assert!(text.contains("rule: missing-timeout"), "{text}");
    // The trigger line and what matched on it.
    assert!(text.contains("line 7: \"calls the Fraud API\""), "{text}");
    // Each evaluator's evidence, classified, and its vote.
    assert!(text.contains("offline/section"), "{text}");
    assert!(text.contains("line 13 affirmed"), "{text}");
    assert!(text.contains("offline/strict (next to it"), "{text}");
    assert!(text.contains("Outcome: accepted"), "{text}");
}

#[test]
fn explain_json_and_rule_mode() {
    let e = explain_json("missing-timeout", &fixture("off-topic-evidence.md"));
    assert_eq!(e["kind"], "rule");
    assert_eq!(e["hits"][0]["line"], 7);
    assert!(
        e["hits"][0]["result"]
            .as_str()
            .unwrap()
            .starts_with("raised as BURN-")
    );

    let v = verdict("on-topic-evidence.md");
    let id = concern(&v, "missing-timeout")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let e = explain_json(&id, &fixture("on-topic-evidence.md"));
    assert_eq!(e["kind"], "concern");
    assert_eq!(e["status"], "dismissed");
    let evaluators = e["evaluators"].as_array().unwrap();
    assert_eq!(evaluators.len(), 3);
    for ev in evaluators {
        assert!(
            ev["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x["line"] == 14 && x["kind"] == "affirmed"),
            "{ev}"
        );
    }
}

#[test]
fn explain_says_when_a_rule_yields_to_a_more_precise_one() {
    // `retry-backoff` yields to `retry-storm` (its pack's `yields_to`): on a
    // sentence of immediate, endless retries only the storm is raised, and
    // explaining the other rule names the concern that took its place.
    let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/rules/retry-backoff-yields-to-storm.trap.md");
    let e = explain_json("retry-backoff", &spec);
    let result = e["hits"][0]["result"].as_str().unwrap();
    assert!(result.starts_with("not raised: BURN-"), "{result}");
    assert!(result.contains("`retry-storm`"), "{result}");
    assert!(result.contains("yields_to"), "{result}");
}

#[test]
fn explain_unknown_id_is_a_usage_error() {
    let spec = fixture("on-topic-evidence.md");
    let out = gauntlet(&["explain", "NOPE-123", spec.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no concern or rule `NOPE-123`"), "{err}");
}
