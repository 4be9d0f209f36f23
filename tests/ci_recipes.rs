//! The CI recipes work: `action.yml` is a valid composite action whose
//! review step, run as GitHub would run it, writes the SARIF file its
//! upload step names; `.pre-commit-hooks.yaml` entries review the files
//! pre-commit passes; every YAML block and `gauntlet` command line in
//! docs/ci.md parses.

use clap::Parser;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gauntlet");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not a mapping: {v}"))
        .keys()
        .cloned()
        .collect()
}

#[track_caller]
fn only(v: &Value, allowed: &[&str], what: &str) {
    let extra: Vec<String> = keys(v)
        .into_iter()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    assert!(extra.is_empty(), "{what}: unknown keys {extra:?}");
}

/// `${{ ... }}` expressions in a text.
fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        let after = &rest[i + 3..];
        let end = after.find("}}").expect("closed expression");
        out.push(after[..end].trim().to_string());
        rest = &after[end + 2..];
    }
    out
}

/// The action metadata keys GitHub documents ("Metadata syntax for GitHub
/// Actions"), for a composite action.
#[test]
fn action_yml_is_a_valid_composite_action() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let a = yaml(&root().join("action.yml"));
    only(
        &a,
        &[
            "name",
            "author",
            "description",
            "inputs",
            "outputs",
            "runs",
            "branding",
        ],
        "action",
    );
    for k in ["name", "description", "runs"] {
        assert!(a.get(k).is_some(), "action.yml needs `{k}`");
    }
    only(&a["branding"], &["icon", "color"], "branding");
    let inputs = a["inputs"].as_object().unwrap();
    for (name, i) in inputs {
        only(
            i,
            &["description", "required", "default", "deprecationMessage"],
            name,
        );
        assert!(
            i["description"].is_string(),
            "input {name} needs a description"
        );
        assert!(
            i["default"].is_string(),
            "input {name}: defaults are strings"
        );
    }
    let runs = &a["runs"];
    only(runs, &["using", "steps"], "runs");
    assert_eq!(runs["using"], "composite");
    let steps = runs["steps"].as_array().unwrap();
    let mut ids = BTreeMap::new();
    for s in steps {
        only(
            s,
            &[
                "name",
                "id",
                "if",
                "run",
                "shell",
                "uses",
                "with",
                "env",
                "working-directory",
                "continue-on-error",
            ],
            "step",
        );
        assert!(
            s.get("run").is_some() != s.get("uses").is_some(),
            "a step has `run` or `uses`: {s}"
        );
        if s.get("run").is_some() {
            assert!(
                s["shell"].is_string(),
                "composite run steps need `shell`: {s}"
            );
        }
        if let Some(u) = s["uses"].as_str() {
            assert!(u.contains("@v"), "pin {u} to a version");
        }
        if let Some(id) = s["id"].as_str() {
            ids.insert(id.to_string(), s["run"].as_str().unwrap_or("").to_string());
        }
    }
    for (name, o) in a["outputs"].as_object().unwrap() {
        only(o, &["description", "value"], name);
        assert!(o["description"].is_string() && o["value"].is_string());
    }
    // Every expression names a declared input, or a step output the step writes.
    for e in expressions(&text) {
        for word in e.split(|c: char| !(c.is_alphanumeric() || "._-".contains(c))) {
            if let Some(input) = word.strip_prefix("inputs.") {
                assert!(inputs.contains_key(input), "undeclared input in `{e}`");
            }
            if let Some(rest) = word.strip_prefix("steps.") {
                let parts: Vec<&str> = rest.split('.').collect();
                assert_eq!(parts.get(1), Some(&"outputs"), "{e}");
                let script = ids
                    .get(parts[0])
                    .unwrap_or_else(|| panic!("no step with id `{}` ({e})", parts[0]));
                assert!(
                    script.contains(&format!("echo \"{}=", parts[2])),
                    "step {} never writes output {}",
                    parts[0],
                    parts[2]
                );
            }
        }
    }
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("a SARIF upload step");
    assert_eq!(
        upload["with"]["sarif_file"],
        "${{ steps.review.outputs.sarif }}"
    );
}

/// A git repository holding `docs/` with a spec that needs revision.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let spec = root().join("tests/fixtures/review/payments/webhooks.md");
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::copy(&spec, docs.join("webhooks.md")).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/review/platform/glossary.md"),
        docs.join("glossary.md"),
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    git(&["tag", "base"]);
    dir
}

fn has_git() -> bool {
    Command::new("git").arg("--version").output().is_ok()
}

/// PATH with the gauntlet under test first, and no cargo: the install step
/// must find gauntlet and not try to build it.
fn path_with_gauntlet() -> String {
    let bin = Path::new(BIN).parent().unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

/// Runs one of the action's `run` steps the way GitHub does: bash, with the
/// step's `env` where `${{ inputs.X }}` is the given input or its default.
fn run_step(
    action: &Value,
    step_name: &str,
    given: &[(&str, &str)],
    cwd: &Path,
    github: &Path,
) -> std::process::Output {
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == step_name)
        .unwrap();
    assert_eq!(step["shell"], "bash");
    let mut cmd = Command::new("bash");
    cmd.arg("-e")
        .arg("-c")
        .arg(step["run"].as_str().unwrap())
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path_with_gauntlet())
        .env("HOME", github)
        .env("GAUNTLET_OFFLINE", "1")
        .env("GAUNTLET_STORE_DIR", github.join("store"))
        .env("GITHUB_OUTPUT", github.join("output"))
        .env("GITHUB_STEP_SUMMARY", github.join("summary"));
    for (k, v) in step["env"].as_object().into_iter().flatten() {
        let v = v.as_str().unwrap();
        let value = match expressions(v).first().map(String::as_str) {
            Some(e) if e.starts_with("inputs.") => {
                let name = &e["inputs.".len()..];
                given
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_else(|| {
                        action["inputs"][name]["default"]
                            .as_str()
                            .unwrap()
                            .to_string()
                    })
            }
            Some("github.base_ref") => String::new(),
            Some("github.action_path") => root().display().to_string(),
            Some(other) => panic!("unexpected expression {other}"),
            None => v.to_string(),
        };
        cmd.env(k, value);
    }
    cmd.output().unwrap()
}

fn outputs(github: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(github.join("output"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_action_review_step_writes_the_sarif_its_upload_step_names() {
    if !has_git() {
        eprintln!("SKIPPED: git is not installed");
        return;
    }
    let action = yaml(&root().join("action.yml"));
    let repo = repo();
    let github = tempfile::tempdir().unwrap();

    let install = run_step(&action, "Install gauntlet", &[], repo.path(), github.path());
    assert!(install.status.success(), "{install:?}");

    // Every spec under docs (no pull request, no changed-since).
    let out = run_step(
        &action,
        "Review specs",
        &[("paths", "docs")],
        repo.path(),
        github.path(),
    );
    assert!(out.status.success(), "the step itself never fails: {out:?}");
    let o = outputs(github.path());
    assert_eq!(o["exit-code"], "1", "webhooks.md needs revision: {o:?}");
    assert_eq!(o["sarif"], "gauntlet-reports/summary.sarif");
    let sarif: Value =
        serde_json::from_slice(&std::fs::read(repo.path().join(&o["sarif"])).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let uris: BTreeSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(uris.contains("docs/webhooks.md"), "{uris:?}");
    let summary = std::fs::read_to_string(github.path().join("summary")).unwrap();
    assert!(summary.contains("docs/webhooks.md"), "{summary}");

    // The pull-request case: only what changed since the base.
    std::fs::write(
        repo.path().join("docs/glossary.md"),
        std::fs::read_to_string(repo.path().join("docs/glossary.md")).unwrap() + "\nMore.\n",
    )
    .unwrap();
    std::fs::remove_file(github.path().join("output")).unwrap();
    let out = run_step(
        &action,
        "Review specs",
        &[("paths", "docs"), ("changed-since", "base"), ("out", "pr")],
        repo.path(),
        github.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let o = outputs(github.path());
    let summary: Value =
        serde_json::from_slice(&std::fs::read(repo.path().join("pr/summary.json")).unwrap())
            .unwrap();
    let specs: Vec<&str> = summary["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["spec"].as_str().unwrap())
        .collect();
    assert_eq!(specs, ["docs/glossary.md"]);
    assert_eq!(o["exit-code"], summary["exit_code"].to_string());
    assert!(repo.path().join(&o["sarif"]).is_file());
    assert_eq!(o["sarif"], "pr/summary.sarif");
}

#[test]
fn pre_commit_hooks_review_the_files_pre_commit_passes() {
    let hooks = yaml(&root().join(".pre-commit-hooks.yaml"));
    let hooks = hooks.as_array().expect("a list of hooks");
    assert!(!hooks.is_empty());
    let repo = repo();
    for h in hooks {
        only(
            h,
            &[
                "id",
                "name",
                "description",
                "entry",
                "language",
                "files",
                "exclude",
                "types",
                "require_serial",
                "pass_filenames",
                "args",
                "stages",
                "minimum_pre_commit_version",
            ],
            "hook",
        );
        for k in ["id", "name", "entry", "language"] {
            assert!(h[k].is_string(), "hook needs `{k}`: {h}");
        }
        assert_eq!(
            h["language"], "rust",
            "built from this repository with cargo"
        );
        let files = regex::Regex::new(h["files"].as_str().unwrap()).unwrap();
        assert!(files.is_match("docs/design/auth.md") && !files.is_match("src/main.rs"));
        let entry: Vec<&str> = h["entry"].as_str().unwrap().split_whitespace().collect();
        assert_eq!(entry[0], "gauntlet");
        // As pre-commit runs it: the entry, then the matching staged files.
        let store = tempfile::tempdir().unwrap();
        let run = |files: &[&str]| {
            Command::new(BIN)
                .args(&entry[1..])
                .args(files)
                .current_dir(repo.path())
                .env("GAUNTLET_OFFLINE", "1")
                .env("GAUNTLET_STORE_DIR", store.path())
                .output()
                .unwrap()
        };
        assert_eq!(
            run(&["docs/webhooks.md"]).status.code(),
            Some(1),
            "{}",
            h["id"]
        );
        let pass = run(&["docs/glossary.md"]);
        assert_eq!(pass.status.code(), Some(0), "{pass:?}");
    }
}

/// Splits a documented command line into words the way a shell would for
/// these simple cases (quotes, no expansion), up to `||`, `|`, `>` or `;`.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if started || !cur.is_empty() {
        out.push(cur);
    }
    let end = out
        .iter()
        .position(|w| ["||", "|", ">", ";", "&&"].contains(&w.as_str()))
        .unwrap_or(out.len());
    out.truncate(end);
    out
}

#[test]
fn docs_ci_yaml_blocks_and_gauntlet_commands_parse() {
    let doc = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let mut blocks = 0;
    let mut commands = 0;
    let mut in_yaml = None::<String>;
    for line in doc.lines() {
        match (&mut in_yaml, line.trim()) {
            (None, "```yaml") => in_yaml = Some(String::new()),
            (Some(text), "```") => {
                let parsed: Result<Value, _> = serde_norway::from_str(text);
                assert!(
                    parsed.is_ok(),
                    "docs/ci.md YAML block does not parse: {parsed:?}\n{text}"
                );
                blocks += 1;
                in_yaml = None;
            }
            (Some(text), _) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, _) => {}
        }
        let at = line
            .find("gauntlet review")
            .or_else(|| line.find("gauntlet --"));
        if let Some(at) = at.filter(|_| {
            line.trim_start().starts_with('-') || line.trim_start().starts_with("gauntlet")
        }) {
            let argv = words(&line[at..]);
            if let Err(e) = gauntlet::cli::Cli::try_parse_from(&argv) {
                panic!("docs/ci.md: `{}` does not parse: {e}", &line[at..]);
            }
            commands += 1;
        }
    }
    assert!(blocks >= 4, "{blocks} YAML blocks");
    assert!(commands >= 2, "{commands} gauntlet command lines");
}
