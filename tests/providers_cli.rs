//! The codex / gemini / claude CLI providers against fake executables the
//! tests write (put first on PATH for the real binary), and the binary's
//! model flags: auto selection, --offline, --dry-run, saved runs.

use gauntlet::provider::cli::CliProvider;
use gauntlet::provider::{CompletionRequest, ModelName, Provider, ProviderError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const SPEC: &str =
    "# Webhooks\n\n## Design\n\nThe vendor POSTs events to /hooks and we store them.\n";

/// Votes for every concern id in the prompt on stdin: `accept` when the
/// title matches `$1`, else `dismiss`; printed as a JSON string body.
const VOTES_AWK: &str = r#"awk -v pat="$1" '
/^\[[A-Z]+-[0-9a-f]+\] from / { id=substr($1,2,length($1)-2); next }
/^Title: / && id != "" { d = "dismiss"; if (pat != "" && $0 ~ pat) d = "accept";
  printf "%s{\\\"id\\\": \\\"%s\\\", \\\"decision\\\": \\\"%s\\\", \\\"reasoning\\\": \\\"see line 5\\\", \\\"cites\\\": [5]}", sep, id, d; sep=", "; id="" }'"#;

/// Writes an executable script through a short-lived `sh`, so this process
/// never holds the file open for writing. Tests run on parallel threads: a
/// fork on another thread while our write descriptor is open gives the child
/// a copy until it execs, and running the script in that window fails with
/// "text file busy" (ETXTBSY), which made the timeout test flaky.
fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    let mut sh = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(&p)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = sh.stdin.take().unwrap();
    stdin
        .write_all(format!("#!/bin/sh\n{body}\n").as_bytes())
        .unwrap();
    drop(stdin);
    assert!(
        sh.wait().unwrap().success(),
        "could not write {}",
        p.display()
    );
    p
}

/// Fake `gemini` (attacks, rebuttals: plain text), `codex` (JSONL events,
/// accepts "Forged" concerns) and `claude` (JSON result, dismisses all).
fn fake_clis(dir: &Path) {
    write_script(
        dir,
        "gemini",
        r#"input=$(cat)
case "$input" in
  *"OPTION B - CHALLENGE DISMISSAL"*) echo "ACCEPTED: the reasoning holds." ;;
  *"as the adversary"*) echo 'Here: {"concerns": [{"title": "Forged webhooks", "detail": "no signature check", "severity": "high", "lines": [5, 5]}, {"title": "Minor nit", "detail": "wording", "severity": "low", "lines": [5, 5]}]}' ;;
  *) echo "unexpected prompt" >&2; exit 1 ;;
esac"#,
    );
    write_script(
        dir,
        "codex",
        &format!(
            r#"[ "$1 $2 $3 $4" = "exec --json --skip-git-repo-check --model" ] || {{ echo "bad args: $*" >&2; exit 2; }}
input=$(cat)
set -- Forged
votes=$(printf '%s\n' "$input" | {VOTES_AWK})
printf '{{"type":"thread.started","thread_id":"t1"}}\n'
printf '{{"type":"item.completed","item":{{"id":"i1","type":"agent_message","text":"{{\\"votes\\": [%s]}}"}}}}\n' "$votes"
printf '{{"type":"turn.completed","usage":{{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":50}}}}\n'"#
        ),
    );
    write_script(
        dir,
        "claude",
        &format!(
            r#"[ "$1" = "-p" ] && [ "$4 $5" = "--output-format json" ] || {{ echo "bad args: $*" >&2; exit 2; }}
input=$(cat)
set -- ""
votes=$(printf '%s\n' "$input" | {VOTES_AWK})
printf '{{"type":"result","subtype":"success","is_error":false,"result":"{{\\"votes\\": [%s]}}","usage":{{"input_tokens":400,"cache_read_input_tokens":100,"output_tokens":30}}}}\n' "$votes""#
        ),
    );
}

struct Env {
    _tmp: tempfile::TempDir,
    bin: PathBuf,
    cwd: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    let cwd = tmp.path().join("project");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    std::fs::write(cwd.join("spec.md"), SPEC).unwrap();
    Env {
        _tmp: tmp,
        bin,
        cwd,
    }
}

fn gauntlet(env: &Env, args: &[&str]) -> Output {
    let path = format!("{}:/usr/bin:/bin", env.bin.display());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    cmd.args(args)
        .current_dir(&env.cwd)
        .env("PATH", path)
        .env("NO_COLOR", "1");
    for v in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OPENROUTER_API_KEY",
        "GAUNTLET_OFFLINE",
        "GAUNTLET_STORE_DIR",
        "OPENAI_API_BASE",
        "OLLAMA_API_BASE",
    ] {
        cmd.env_remove(v);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn fake_clis_run_every_role_and_save_the_run() {
    let env = env();
    fake_clis(&env.bin);
    let o = gauntlet(
        &env,
        &[
            "--attack-model",
            "gemini-cli/gemini-3-flash-preview",
            "--eval-models",
            "codex/gpt-5.2-codex,claude-cli/opus",
            "--adversaries",
            "paranoid_security",
            "--format",
            "json",
            "spec.md",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let status = |title: &str| {
        v["concerns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["title"] == title)
            .map(|c| c["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no {title}: {v}"))
    };
    // codex accepts, claude dismisses: a tie is accepted.
    assert_eq!(status("Forged webhooks"), "accepted");
    // Both dismiss; gemini accepts the dismissal in its rebuttal.
    assert_eq!(status("Minor nit"), "dismissed");
    let models = &v["stats"]["models"];
    let codex = &models["eval:codex/gpt-5.2-codex"];
    assert_eq!(codex["input_tokens"], 1000);
    assert_eq!(codex["estimated"], false);
    assert_eq!(models["eval:claude-cli/opus"]["input_tokens"], 500);
    let gem = &models["attack:gemini-cli/gemini-3-flash-preview"];
    assert_eq!(gem["calls"], 2, "attack + rebuttal");
    assert_eq!(gem["estimated"], true, "gemini reports no usage");
    assert_eq!(v["stats"]["cost_usd"], 0.0);
    // Every call saved under .adversarial-spec/runs/<id>/.
    // (Beside the run record, runs/<id>/run.json, that `gauntlet runs` reads.)
    let runs = env.cwd.join(".adversarial-spec/runs");
    let folders: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 2, "{folders:?}");
    assert_eq!(
        folders
            .iter()
            .filter(|f| f.join("run.json").is_file())
            .count(),
        1
    );
    let run = folders
        .into_iter()
        .find(|f| !f.join("run.json").exists())
        .unwrap();
    let files: Vec<_> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 4, "attack, 2 evals, rebuttal: {files:?}");
    let attack = files
        .iter()
        .find(|f| f.to_string_lossy().contains("attack-paranoid_security"))
        .unwrap();
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(attack).unwrap()).unwrap();
    assert_eq!(rec["schema_version"], 1);
    assert!(
        rec["request"]["prompt"]
            .as_str()
            .unwrap()
            .contains("\n5|The vendor POSTs")
    );
    assert!(
        rec["response"]["text"]
            .as_str()
            .unwrap()
            .contains("Forged webhooks")
    );
    assert!(err.contains("saved 4 model call(s)"), "{err}");
}

#[test]
fn auto_selection_prefers_clis_and_says_why() {
    let env = env();
    fake_clis(&env.bin);
    let o = gauntlet(&env, &["--dry-run", "spec.md"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        out.contains("Attack model: gemini-cli/gemini-3-flash-preview"),
        "{out}"
    );
    assert!(
        out.contains("Eval models: codex/gpt-5.2-codex, gemini-cli/gemini-3-pro-preview"),
        "{out}"
    );
    // 5 attack calls, no model was called.
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("attack")
                && l.split_whitespace().nth(1) == Some("5")),
        "{out}"
    );
    assert!(!env.cwd.join(".adversarial-spec/runs").exists());
}

#[test]
fn nothing_installed_stays_offline_and_offline_flag_wins() {
    let env = env();
    let o = gauntlet(&env, &["--no-store", "--format", "json", "spec.md"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["models"]["attack"][0]
            .as_str()
            .unwrap()
            .starts_with("offline")
    );
    assert!(!stderr(&o).contains("attack model"), "{}", stderr(&o));
    fake_clis(&env.bin);
    let o = gauntlet(
        &env,
        &["--offline", "--no-store", "--format", "json", "spec.md"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["models"]["attack"][0]
            .as_str()
            .unwrap()
            .starts_with("offline"),
        "{}",
        stderr(&o)
    );
    assert!(
        v["models"]["eval"][0]
            .as_str()
            .unwrap()
            .starts_with("offline")
    );
}

#[test]
fn config_file_sets_models_and_flags_win() {
    let env = env();
    fake_clis(&env.bin);
    std::fs::create_dir_all(env.cwd.join(".adversarial-spec")).unwrap();
    std::fs::write(
        env.cwd.join(".adversarial-spec/config.toml"),
        "[models]\nattack = \"claude-cli/haiku\"\neval = [\"codex/gpt-5.2-codex\"]\ntimeout = 30\n",
    )
    .unwrap();
    let o = gauntlet(&env, &["--dry-run", "--timeout", "7", "spec.md"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Attack model: claude-cli/haiku"), "{out}");
    assert!(
        out.contains("Eval models: codex/gpt-5.2-codex (the first"),
        "{out}"
    );
    assert!(out.contains("Timeout: 7s"), "{out}");
}

#[test]
fn a_crashing_cli_is_a_failure_with_its_stderr_not_a_pass() {
    let env = env();
    write_script(
        &env.bin,
        "gemini",
        "cat >/dev/null; echo 'boom: quota exceeded' >&2; exit 3",
    );
    fake_clis_except_gemini(&env.bin);
    let o = gauntlet(
        &env,
        &[
            "--attack-model",
            "gemini-cli/x",
            "--eval-models",
            "codex/y",
            "--adversaries",
            "paranoid_security",
            "--no-store",
            "spec.md",
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("boom: quota exceeded") && err.contains("exited with"),
        "{err}"
    );
    assert!(err.contains("every attacker failed"), "{err}");
}

fn fake_clis_except_gemini(dir: &Path) {
    let keep = std::fs::read_to_string(dir.join("gemini")).unwrap();
    fake_clis(dir);
    std::fs::write(dir.join("gemini"), keep).unwrap();
}

#[test]
fn missing_api_key_is_a_usage_error_naming_the_variable() {
    let env = env();
    let o = gauntlet(
        &env,
        &[
            "--attack-model",
            "openai/gpt-4o-mini",
            "--eval-models",
            "offline",
            "spec.md",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("OPENAI_API_KEY is not set"),
        "{}",
        stderr(&o)
    );
    let o = gauntlet(&env, &["--attack-model", "nope/x", "spec.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown model provider `nope`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_cli_is_killed_at_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("pid");
    let script = write_script(
        tmp.path(),
        "codex",
        &format!("echo $$ > {}\nexec sleep 30", pidfile.display()),
    );
    let p = CliProvider::new(&ModelName::parse("codex/m").unwrap())
        .unwrap()
        .with_program(script.to_str().unwrap());
    let req = CompletionRequest {
        system: String::new(),
        prompt: "hello".into(),
        ..CompletionRequest::default()
    };
    let r = tokio::time::timeout(Duration::from_millis(800), p.complete(&req)).await;
    assert!(r.is_err(), "the fake hangs, so the call must time out");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let alive = Command::new("kill")
        .args(["-0", &pid])
        .status()
        .unwrap()
        .success();
    assert!(!alive, "process {pid} still running after the timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_output_and_missing_cli_are_provider_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let script = write_script(
        tmp.path(),
        "claude",
        "cat >/dev/null; echo 'not json at all'; echo 'warn: x' >&2",
    );
    let p = CliProvider::new(&ModelName::parse("claude-cli/opus").unwrap())
        .unwrap()
        .with_program(script.to_str().unwrap());
    let req = CompletionRequest {
        prompt: "hi".into(),
        ..CompletionRequest::default()
    };
    match p.complete(&req).await {
        Err(ProviderError::Fatal(m)) => {
            assert!(m.contains("unknown shape") && m.contains("warn: x"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let missing = CliProvider::new(&ModelName::parse("gemini-cli/x").unwrap())
        .unwrap()
        .with_program("/nonexistent/gemini");
    match missing.complete(&req).await {
        Err(ProviderError::Fatal(m)) => assert!(m.contains("not found"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn gauntlet_offline_env_forces_offline_with_clis_installed() {
    let env = env();
    fake_clis(&env.bin);
    for (value, offline) in [("1", true), ("true", true), ("0", false)] {
        let o = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
            .args(["--dry-run", "spec.md"])
            .current_dir(&env.cwd)
            .env("PATH", format!("{}:/usr/bin:/bin", env.bin.display()))
            .env("GAUNTLET_OFFLINE", value)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            out.contains("Attack model: offline"),
            offline,
            "GAUNTLET_OFFLINE={value}: {out}"
        );
    }
}
