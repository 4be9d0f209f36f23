//! The store learns offline: a first run dismisses a mitigated concern with
//! its cited line and saves the explanation; a second run against the same
//! store filters that concern before evaluation, while the real gap in the
//! same spec still stands. Runs the real binary, offline.

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use support::fixture;

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-02T00:00:00Z";

fn run(store: &Path, now: &str, format: &str) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .env_remove("GAUNTLET_STORE_DIR")
        .env_remove("GAUNTLET_NOW")
        .env("GAUNTLET_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .arg(fixture("judge-learning.md"))
        .arg("--personas-dir")
        .arg(fixture("judge"))
        .args(["--adversaries", "burned_oncall", "--quiet", "--now", now])
        .args(["--format", format, "--store-dir"])
        .arg(store)
        .output()
        .expect("binary runs");
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn by_status<'a>(v: &'a Value, status: &str) -> Vec<&'a Value> {
    v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .collect()
}

#[test]
fn a_second_offline_run_filters_what_the_first_dismissed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");

    let (out, code) = run(&store, T0, "json");
    assert_eq!(code, 1, "the Ledger API gap requires revision");
    let first: Value = serde_json::from_str(&out).unwrap();
    let dismissed = by_status(&first, "dismissed");
    assert_eq!(dismissed.len(), 1, "{first:#}");
    let learned = dismissed[0]["id"].as_str().unwrap().to_string();
    let cites: Vec<u64> = dismissed[0]["votes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["decision"] == "dismiss")
        .flat_map(|v| {
            v["cites"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
        })
        .collect();
    assert!(cites.contains(&6), "the dismissal cites line 6: {cites:?}");
    let gap: Vec<String> = by_status(&first, "accepted")
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(gap.len(), 1, "{first:#}");
    let saved = std::fs::read_to_string(store.join("resolved_concerns.json")).unwrap();
    assert!(saved.contains(&learned), "{saved}");

    let (out, code) = run(&store, T1, "json");
    assert_eq!(code, 1);
    let second: Value = serde_json::from_str(&out).unwrap();
    let filtered: Vec<&str> = by_status(&second, "filtered")
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(filtered, vec![learned.as_str()], "{second:#}");
    assert_eq!(second["stats"]["filter"]["dropped"], 1);
    // The real gap is not swallowed by the stored dismissal.
    let still: Vec<String> = by_status(&second, "accepted")
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(still, gap);

    // The text report shows the self-filter because a store is in use.
    let (text, _) = run(&store, T1, "text");
    assert!(text.contains("Phase 1.5 - Self-Filtering:"), "{text}");
    assert!(text.contains("Filtered as already resolved: 1"), "{text}");
}

#[test]
fn without_a_store_the_report_has_no_self_filter_block() {
    let out = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .env("GAUNTLET_OFFLINE", "1")
        .env("NO_COLOR", "1")
        .arg(fixture("judge-learning.md"))
        .arg("--personas-dir")
        .arg(fixture("judge"))
        .args(["--adversaries", "burned_oncall", "--quiet", "--no-store"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("Self-Filtering"), "{text}");
    assert!(!text.contains("Filtered as already resolved"), "{text}");
    // The dismissed concern is listed with its cited line.
    assert!(
        text.contains("Dismissed with cited evidence: 1 concern"),
        "{text}"
    );
    assert!(text.contains("cited line 6"), "{text}");
}
