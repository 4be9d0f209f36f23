//! The SARIF we write passes Microsoft's SARIF Multitool with the GitHub
//! code scanning rules (`--rule-kind Gh`) and the SARIF rules: zero errors.
//! The multitool is an external program (`npm install
//! @microsoft/sarif-multitool`); point `SARIF_MULTITOOL` at it, or put
//! `sarif-multitool` on PATH. Without it the test says so and passes:
//! `.ci/run` installs it, so CI always runs it. The schema check in
//! `tests/review.rs` runs everywhere.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gauntlet");

fn multitool() -> Option<PathBuf> {
    let found = match std::env::var_os("SARIF_MULTITOOL").filter(|p| !p.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "SARIF_MULTITOOL={} is not a file", p.display());
            p
        }
        None => std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join("sarif-multitool"))
            .find(|p| p.is_file())?,
    };
    Some(native(found))
}

/// npm's `node_modules/.bin/sarif-multitool` is a Node wrapper that passes
/// its arguments through a shell, which splits `Gh;Sarif`; use the native
/// binary it wraps when it is there.
fn native(tool: PathBuf) -> PathBuf {
    let beside = tool
        .parent()
        .filter(|d| d.ends_with(".bin"))
        .and_then(Path::parent)
        .map(|m| m.join("@microsoft/sarif-multitool-linux/Sarif.Multitool"));
    match beside {
        Some(b) if b.is_file() => b,
        _ => tool,
    }
}

fn gauntlet(cwd: &Path, store: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("GAUNTLET_OFFLINE", "1")
        .env("GAUNTLET_STORE_DIR", store)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Runs the multitool's GitHub and SARIF rules on `file`; returns its
/// findings as (level, rule id, message).
fn validate(tool: &Path, file: &Path, out: &Path) -> Vec<(String, String, String)> {
    let run = Command::new(tool)
        .args(["validate", "--rule-kind", "Gh;Sarif", "--output"])
        .arg(out)
        .arg(file)
        .output()
        .unwrap();
    let log: Value = serde_json::from_slice(&std::fs::read(out).unwrap_or_else(|e| {
        panic!(
            "the multitool wrote no log ({e}): {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        )
    }))
    .unwrap();
    let mut found = Vec::new();
    for r in log["runs"][0]["results"].as_array().into_iter().flatten() {
        found.push((
            r["level"].as_str().unwrap_or("warning").to_string(),
            r["ruleId"].as_str().unwrap_or("").to_string(),
            r["message"].to_string(),
        ));
    }
    found
}

#[test]
fn github_code_scanning_accepts_our_sarif() {
    let Some(tool) = multitool() else {
        eprintln!(
            "SKIPPED: SARIF Multitool not found (npm install @microsoft/sarif-multitool, \
             then set SARIF_MULTITOOL to node_modules/.bin/sarif-multitool)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let specs = root.join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    std::fs::copy(fixtures.join("gap.md"), specs.join("gap.md")).unwrap();
    for dir in ["payments", "platform", "platform/limits"] {
        std::fs::create_dir_all(specs.join(dir)).unwrap();
        for e in std::fs::read_dir(fixtures.join("review").join(dir)).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_file() {
                std::fs::copy(e.path(), specs.join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    std::fs::write(specs.join("empty.md"), "\n").unwrap();

    // One spec (`--format sarif`) and a batch with an error row (summary.sarif).
    let single = gauntlet(
        root,
        store.path(),
        &["--format", "sarif", "specs/payments/webhooks.md"],
    );
    assert!(single.status.code().is_some_and(|c| c < 2), "{single:?}");
    let one = root.join("one.sarif");
    std::fs::write(&one, &single.stdout).unwrap();
    let review = gauntlet(
        root,
        store.path(),
        &[
            "review",
            "--quiet",
            "--out",
            "out",
            "--report-formats",
            "sarif",
            "specs",
        ],
    );
    assert_eq!(review.status.code(), Some(3), "{review:?}");
    let summary = root.join("out/summary.sarif");
    let doc: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r.get("suppressions").is_some()));
    assert!(results.iter().any(|r| r.get("suppressions").is_none()));

    for file in [one, summary, root.join("out/gap.sarif")] {
        let found = validate(&tool, &file, &root.join("validation.sarif"));
        let errors: Vec<_> = found.iter().filter(|f| f.0 == "error").collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", file.display());
        for w in &found {
            eprintln!("{}: {} {} {}", file.display(), w.0, w.1, w.2);
        }
    }
}

/// The multitool itself finds what GitHub rejects, so a pass above means
/// something: the same log without `help` fails with GH2012.
#[test]
fn the_multitool_rejects_rules_without_help() {
    let Some(tool) = multitool() else {
        eprintln!(
            "SKIPPED: SARIF Multitool not found (see github_code_scanning_accepts_our_sarif)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gap.md");
    let out = gauntlet(
        dir.path(),
        store.path(),
        &["--format", "sarif", spec.to_str().unwrap()],
    );
    let mut doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array_mut()
        .unwrap()
    {
        r.as_object_mut().unwrap().remove("help");
    }
    let file = dir.path().join("nohelp.sarif");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let found = validate(&tool, &file, &dir.path().join("validation.sarif"));
    assert!(
        found.iter().any(|f| f.0 == "error" && f.1 == "GH2012"),
        "{found:#?}"
    );
}
