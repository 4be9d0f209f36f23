//! Issue 12: a hostile or unlucky user, repository or model. Each test is a
//! case that once failed (lost a file, leaked a secret, obeyed an escape,
//! hung, or reported success), run against the real binary.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::mock_llm::{Api, MockServer, Received, Reply};
use support::{fixture, gauntlet};

const GAP: &str = "# Widget Service\n\n## Design\n\nThe Billing service calls the Ledger API to frobnicate each widget.\n";

fn write(p: &Path, text: impl AsRef<[u8]>) {
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(p, text).unwrap();
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every file under `dir` (recursively), as (relative path, bytes).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A temporary folder holding the one-gap spec and a store folder, for the
/// tests that damage a store between two runs.
struct GapStore {
    _tmp: tempfile::TempDir,
    spec: PathBuf,
    dir: PathBuf,
}

impl GapStore {
    fn new() -> GapStore {
        let tmp = tempfile::tempdir().unwrap();
        let spec = tmp.path().join("spec.md");
        write(&spec, GAP);
        let dir = tmp.path().join("store");
        GapStore {
            _tmp: tmp,
            spec,
            dir,
        }
    }

    /// One offline run on the spec with this store, at a fixed time.
    fn run(&self) -> support::Output {
        gauntlet()
            .args(["--quiet", "--now", "2026-01-02T00:00:00Z", "--store-dir"])
            .path(&self.dir)
            .path(&self.spec)
            .run()
    }
}

fn store_dir(root: &Path) -> PathBuf {
    root.join(".adversarial-spec")
}

// ---------------------------------------------------------------- data loss

#[test]
fn review_out_that_holds_the_specs_is_refused_and_specs_survive() {
    let tmp = tempfile::tempdir().unwrap();
    let specs = tmp.path().join("specs");
    write(&specs.join("spec.md"), GAP);
    for (paths, out) in [
        (vec!["specs"], "specs"),
        (vec!["specs"], "."),
        (vec!["."], "."),
        (vec!["specs"], "specs/../specs"),
    ] {
        gauntlet()
            .cwd(tmp.path())
            .arg("review")
            .args(&paths)
            .args(["--out", out, "--no-store", "--quiet"])
            .run()
            .one_line_error("reports would overwrite specs");
        assert_eq!(read(&specs.join("spec.md")), GAP.as_bytes());
    }
    #[cfg(unix)]
    {
        // The same folder reached through a symlink is the same folder.
        std::os::unix::fs::symlink(&specs, tmp.path().join("alias")).unwrap();
        gauntlet()
            .cwd(tmp.path())
            .args(["review", "specs", "--out", "alias", "--no-store", "--quiet"])
            .run()
            .one_line_error("reports would overwrite specs");
        assert_eq!(read(&specs.join("spec.md")), GAP.as_bytes());
    }
}

#[test]
fn a_spec_named_summary_keeps_its_report_beside_the_batch_summary() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("specs/summary.md"), GAP);
    write(&tmp.path().join("specs/other.md"), GAP);
    gauntlet()
        .cwd(tmp.path())
        .args(["review", "specs", "--out", "out", "--no-store", "--quiet"])
        .args(["--report-formats", "markdown"])
        .run()
        .code(1);
    let summary = String::from_utf8(read(&tmp.path().join("out/summary.md"))).unwrap();
    let report = String::from_utf8(read(&tmp.path().join("out/summary.md.md"))).unwrap();
    assert!(summary.contains("other.md"), "{summary}");
    assert!(report.contains("## Adversarial Gauntlet"), "{report}");
}

#[test]
fn review_never_overwrites_a_file_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("specs/a.md"), GAP);
    write(&tmp.path().join("out/a.json"), "my own notes");
    let o = gauntlet()
        .cwd(tmp.path())
        .args(["review", "specs", "--out", "out", "--no-store", "--quiet"])
        .args(["--report-formats", "json"])
        .run();
    assert_ne!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("did not write it") || o.stderr.contains("did not write it"),
        "{}\n{}",
        o.stdout,
        o.stderr
    );
    assert_eq!(read(&tmp.path().join("out/a.json")), b"my own notes");
    // Its own reports it replaces on the next run.
    std::fs::remove_file(tmp.path().join("out/a.json")).unwrap();
    for _ in 0..2 {
        gauntlet()
            .cwd(tmp.path())
            .args(["review", "specs", "--out", "out", "--no-store", "--quiet"])
            .args(["--report-formats", "json"])
            .run()
            .code(1);
    }
    let v: Value = serde_json::from_slice(&read(&tmp.path().join("out/a.json"))).unwrap();
    assert_eq!(v["verdict"], "revise");
}

#[test]
fn stale_temp_files_of_a_killed_review_are_cleaned_up() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("specs/a.md"), GAP);
    // A pid above any pid_max: that writer is certainly dead.
    let stale = tmp.path().join("out/sub/.a.json.tmp.999999999.3");
    write(&stale, "half a report");
    let mine = tmp.path().join("out/.notes.tmp");
    write(&mine, "not ours");
    gauntlet()
        .cwd(tmp.path())
        .args(["review", "specs", "--out", "out", "--no-store", "--quiet"])
        .run()
        .code(1);
    assert!(!stale.exists(), "stale temp file left behind");
    assert!(mine.exists(), "a file that is not ours was removed");
}

#[cfg(unix)]
#[test]
fn stats_json_writes_devices_in_place_and_follows_links() {
    // Never /dev/null or /dev/full here: tests run as root on shared
    // machines, and a regression would replace the system's device. A FIFO
    // in a scratch folder is a special file just the same.
    use std::os::unix::fs::FileTypeExt;
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.md");
    write(&spec, GAP);
    let fifo = tmp.path().join("stats.fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        gauntlet()
            .args(["--no-store", "--quiet", "--stats-json"])
            .path(&fifo)
            .path(&spec)
            .run()
            .code(1);
        let got = reader.join().unwrap();
        let stats: Value = serde_json::from_slice(&got).unwrap();
        assert!(stats.get("attack").is_some(), "{stats}");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo(),
            "the FIFO was replaced by a regular file"
        );
    }
    // A directory is refused, and left alone.
    gauntlet()
        .args(["--no-store", "--quiet", "--stats-json"])
        .path(tmp.path())
        .path(&spec)
        .run()
        .code(3);
    assert!(tmp.path().is_dir());
    let real = tmp.path().join("real.json");
    write(&real, "old");
    let link = tmp.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    gauntlet()
        .args(["--no-store", "--quiet", "--stats-json"])
        .path(&link)
        .path(&spec)
        .run()
        .code(1);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let stats: Value = serde_json::from_slice(&read(&real)).unwrap();
    assert!(stats.get("attack").is_some(), "{stats}");
}

#[test]
fn a_failed_history_write_changes_none_of_the_three_files() {
    let store = GapStore::new();
    let dir = store.dir.clone();
    let run = || store.run();
    run().code(1);
    let before = tree(&dir);
    std::fs::remove_file(dir.join("adversary_runs.jsonl")).unwrap();
    std::fs::create_dir(dir.join("adversary_runs.jsonl")).unwrap();
    let before: Vec<_> = before
        .into_iter()
        .filter(|(p, _)| p != "adversary_runs.jsonl")
        .collect();
    for _ in 0..2 {
        run().code(3).stderr_has("adversary_runs.jsonl");
        let after: Vec<_> = tree(&dir)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("reviews"))
            .collect();
        let before: Vec<_> = before
            .iter()
            .filter(|(p, _)| !p.starts_with("reviews"))
            .cloned()
            .collect();
        assert_eq!(after, before, "a file changed, or a temp file was left");
    }
}

#[test]
fn a_truncated_history_line_is_repaired_not_buried() {
    let store = GapStore::new();
    let dir = store.dir.clone();
    let run = || store.run().code(1);
    run();
    let history = dir.join("adversary_runs.jsonl");
    let mut bytes = read(&history);
    // A crash mid-append: half of a second record, no newline.
    let half = bytes[..bytes.len() / 2].to_vec();
    bytes.extend_from_slice(&half);
    write(&history, &bytes);
    run();
    let text = String::from_utf8(read(&history)).unwrap();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    assert_eq!(text.lines().count(), 2);
    let check = gauntlet()
        .args(["store", "check", "--store-dir"])
        .path(&dir)
        .run()
        .code(0);
    assert!(!check.stdout.contains("problem"), "{}", check.stdout);
}

#[test]
fn counters_at_the_limit_saturate_and_store_check_flags_them() {
    let store = GapStore::new();
    let dir = store.dir.clone();
    let run = || store.run().code(1);
    run();
    let path = dir.join("adversary_stats.json");
    let mut stats: Value = serde_json::from_slice(&read(&path)).unwrap();
    let max = u64::MAX;
    stats["total_runs"] = max.into();
    for (_, a) in stats["adversaries"].as_object_mut().unwrap() {
        for k in ["concerns_raised", "accepted", "runs"] {
            a[k] = max.into();
        }
    }
    write(&path, serde_json::to_vec_pretty(&stats).unwrap());
    run();
    let after: Value = serde_json::from_slice(&read(&path)).unwrap();
    assert_eq!(after["total_runs"].as_u64(), Some(max), "wrapped: {after}");
    for (name, a) in after["adversaries"].as_object().unwrap() {
        assert_eq!(a["concerns_raised"].as_u64(), Some(max), "{name}: {a}");
        let rate = a["acceptance_rate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&rate), "{name}: rate {rate}");
    }
    let check = gauntlet()
        .args(["store", "check", "--store-dir"])
        .path(&dir)
        .run()
        .code(1);
    assert!(
        check.stdout.contains("largest value a count can hold"),
        "{}",
        check.stdout
    );
}

// ------------------------------------------------------- hostile repositories

/// Runs the binary with model flags against a mock server (in this test's
/// runtime); the process runs on a blocking thread.
async fn run_binary(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn bin_in(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    c.current_dir(dir)
        .env("GAUNTLET_TEST", "1")
        .env("GAUNTLET_OFFLINE", "0")
        .env_remove("GAUNTLET_ALLOW_CONFIG_API_BASE")
        .env_remove("GAUNTLET_STORE_DIR")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    c
}

fn hostile_repo(base: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(".git")).unwrap();
    write(&tmp.path().join("spec.md"), GAP);
    write(
        &store_dir(tmp.path()).join("config.toml"),
        format!(
            "[models]\nattack = \"openai-compatible/m\"\neval = [\"openai-compatible/m\"]\napi_base = \"{base}\"\n"
        ),
    );
    tmp
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repo_config_cannot_choose_where_the_spec_is_sent() {
    let server = MockServer::start(Api::OpenAi, |_, _| Reply::Text("[]".into())).await;
    let repo = hostile_repo(&server.base);
    let mut cmd = bin_in(repo.path());
    cmd.args(["--quiet", "spec.md"]);
    let o = run_binary(cmd).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--allow-config-api-base"), "{err}");
    assert_eq!(server.count(), 0, "the spec left the machine");

    // The invoker may allow it; an endpoint answering `[]` still cannot pass.
    let mut cmd = bin_in(repo.path());
    cmd.env("GAUNTLET_ALLOW_CONFIG_API_BASE", "1").args([
        "--quiet",
        "--adversaries",
        "paranoid_security",
        "spec.md",
    ]);
    let o = run_binary(cmd).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(server.count() > 0, "{:?} {err}", o.status);
    assert_eq!(o.status.code(), Some(3), "an empty review passed: {err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("nothing usable"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_never_go_to_a_repo_chosen_host() {
    let repo_host = MockServer::start(Api::OpenAi, |_, _| Reply::Text("[]".into())).await;
    let invoker_host = MockServer::start(Api::OpenAi, |_, _| Reply::Text("[]".into())).await;
    let repo = hostile_repo(&repo_host.base);
    // Even allowed, the config's api_base is for keyless providers only: a
    // provider with a key goes to its default host, or to the base the
    // invoker set in the environment (here a second local server, so no
    // test ever reaches a real provider).
    write(
        &store_dir(repo.path()).join("config.toml"),
        format!(
            "[models]\nattack = \"openai/gpt-4o-mini\"\neval = [\"openai/gpt-4o-mini\"]\napi_base = \"{}\"\n",
            repo_host.base
        ),
    );
    let mut cmd = bin_in(repo.path());
    cmd.env("GAUNTLET_ALLOW_CONFIG_API_BASE", "1")
        .env("OPENAI_API_KEY", "sk-hostile-test-key-0123456789abcdef")
        .env("OPENAI_API_BASE", &invoker_host.base)
        .args([
            "--quiet",
            "--adversaries",
            "paranoid_security",
            "--no-store",
            "spec.md",
        ]);
    let o = run_binary(cmd).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        repo_host.count(),
        0,
        "a request reached the repo's host: {err}"
    );
    assert!(invoker_host.count() > 0, "{err}");
    assert!(
        invoker_host
            .requests()
            .iter()
            .all(|r| r.headers.contains("sk-hostile-test-key")),
        "the key goes with requests to the invoker's host"
    );
}

#[cfg(unix)]
#[test]
fn planted_symlinks_in_the_store_are_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(".git")).unwrap();
    write(&tmp.path().join("spec.md"), GAP);
    let victim = tmp.path().join("bashrc");
    write(&victim, "export PATH=/usr/bin\n");
    let store = store_dir(tmp.path());
    std::fs::create_dir_all(&store).unwrap();
    std::os::unix::fs::symlink(&victim, store.join("adversary_runs.jsonl")).unwrap();
    gauntlet()
        .cwd(tmp.path())
        .args(["--quiet", "spec.md"])
        .run()
        .code(3)
        .stderr_has("symbolic link");
    assert_eq!(read(&victim), b"export PATH=/usr/bin\n");

    // A store folder that is a link: refused unless the invoker names it.
    std::fs::remove_dir_all(&store).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &store).unwrap();
    gauntlet()
        .cwd(tmp.path())
        .args(["--quiet", "spec.md"])
        .run()
        .code(3)
        .stderr_has("symbolic link");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    gauntlet()
        .cwd(tmp.path())
        .args(["--quiet", "--store-dir", ".adversarial-spec", "spec.md"])
        .run()
        .code(1);
    assert!(elsewhere.join("adversary_stats.json").exists());

    // A store file linked to /dev/zero: refused at once, not read forever.
    let t = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", t.path().join("resolved_concerns.json")).unwrap();
    let mut cmd = bin_in(tmp.path());
    cmd.env("GAUNTLET_OFFLINE", "1")
        .args(["--quiet", "--store-dir"])
        .arg(t.path())
        .arg(tmp.path().join("spec.md"));
    // Bounded: a regression would read /dev/zero until out of memory.
    let o = finishes_within(cmd, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
}

/// Runs `cmd`, failing the test if it has not finished in `limit`.
fn finishes_within(mut cmd: Command, limit: Duration) -> std::process::Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("blocked for over {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn fifos_in_the_store_or_persona_folder_never_block() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("spec.md"), GAP);
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let fifo = store.join("adversary_stats.json");
    if !Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        return;
    }
    let mut cmd = bin_in(tmp.path());
    cmd.env("GAUNTLET_OFFLINE", "1")
        .args(["--quiet", "--store-dir", "store", "spec.md"]);
    let o = finishes_within(cmd, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("FIFO"), "{err}");

    let personas = tmp.path().join("personas");
    std::fs::create_dir_all(&personas).unwrap();
    Command::new("mkfifo")
        .arg(personas.join("x.toml"))
        .status()
        .unwrap();
    let mut cmd = bin_in(tmp.path());
    cmd.env("GAUNTLET_OFFLINE", "1").args([
        "--quiet",
        "--no-store",
        "--personas-dir",
        "personas",
        "spec.md",
    ]);
    let o = finishes_within(cmd, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("x.toml") && err.contains("FIFO"), "{err}");
}

// ------------------------------------------------------------------ secrets

/// Real-looking secrets of every family the issue lists (none is live).
fn secret_fixture() -> Vec<(&'static str, String)> {
    let pkcs8 = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----";
    vec![
        ("pkcs8", pkcs8.to_string()),
        (
            "rsa",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----".to_string(),
        ),
        ("json-password", "Zq8#vLm2!pRt9wX".to_string()),
        ("json-api-key", "a8Fk2LpQ9zX7mN3vB6cR1tY4".to_string()),
        ("json-client-secret", "Qm9vN2pLx8Rt5Vb3Zc7Yw1Ks".to_string()),
        ("aws-secret", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY7Q2kLm9ZaB".to_string()),
        ("aws-id", "AKIAZ7QW3RT5YU8IO2PA".to_string()),
        ("stripe", format!("sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc")),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c".to_string(),
        ),
        ("basic", "dXNlcjpzM2NyZXRQYXNzMTIz".to_string()),
        (
            "slack-webhook",
            "https://hooks.slack.com/services/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".to_string(),
        ),
        (
            "sendgrid",
            "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".to_string(),
        ),
        ("npm", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8".to_string()),
        ("gitlab", "glpat-x7Yk2LmN9pQ4rS8tV1wZ".to_string()),
        (
            "azure",
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==".to_string(),
        ),
        ("github", "ghp_R8x2Lq7Vn4Kp9Zt3Wm6Yc1Hs5Jd0Fb2Ng8Qa".to_string()),
        (
            "openai",
            "sk-proj-Xk29LmQp8Rt4Vn7Bz3Hc6Wy1Js5Df0Ga2Ke9".to_string(),
        ),
        ("google", "AIzaSyD4Kx8Lm2Nq6Pr9St3Uv7Wx1Yz5Ab0Cd3E".to_string()),
    ]
}

fn secret_spec(secrets: &[(&str, String)]) -> String {
    let get = |k: &str| secrets.iter().find(|(n, _)| *n == k).unwrap().1.clone();
    format!(
        "# Payments Service\n\n## Design\n\nThe Billing service calls the Ledger API to settle each payment.\n\n\
         ## Config\n\n```json\n{{\"password\": \"{}\", \"api_key\": \"{}\", \"client_secret\": \"{}\"}}\n```\n\n\
         | id | secret |\n|---|---|\n| {} | {} |\n\n\
         Stripe key {} and session {} are used.\n\n\
         ```\nAuthorization: Basic {}\n```\n\n\
         Alerts go to {} and mail through {}.\n\n\
         Publish with {} and deploy with {}.\n\n\
         ```\nDefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net\n```\n\n\
         Tokens: {} {} {}\n\n{}\n\n{}\n",
        get("json-password"),
        get("json-api-key"),
        get("json-client-secret"),
        get("aws-id"),
        get("aws-secret"),
        get("stripe"),
        get("jwt"),
        get("basic"),
        get("slack-webhook"),
        get("sendgrid"),
        get("npm"),
        get("gitlab"),
        get("azure"),
        get("github"),
        get("openai"),
        get("google"),
        get("pkcs8"),
        get("rsa"),
    )
}

/// The parts of each secret worth searching for (a PEM block's body lines).
fn needles(secrets: &[(&str, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, s) in secrets {
        if s.starts_with("-----BEGIN") {
            for l in s.lines().filter(|l| !l.starts_with("-----")) {
                out.push((name.to_string(), l.to_string()));
            }
        } else {
            out.push((name.to_string(), s.clone()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_model_runs_the_store_or_stdout() {
    let secrets = secret_fixture();
    let env_key = "zK8pQ2mX7vR4nL9wT3yB6cF1hJ5";
    // The model echoes what it got, and the value of another provider's key
    // from the environment, back in its concerns.
    let echo = format!("also {env_key}");
    let server = MockServer::start(Api::OpenAi, move |r: &Received, _| {
        let prompt = r.prompt.replace('"', "'").replace('\n', " ");
        let prompt: String = prompt.chars().take(3000).collect();
        match support::mock_llm::kind(&r.prompt) {
            support::mock_llm::Kind::Attack => Reply::Text(
                serde_json::json!([{"title": format!("Leak {echo}"), "detail": prompt, "severity": "high", "lines": [5, 5]}])
                    .to_string(),
            ),
            _ => Reply::Text(format!("[] {echo}")),
        }
    })
    .await;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(".git")).unwrap();
    write(&tmp.path().join("spec.md"), secret_spec(&secrets));
    let mut cmd = bin_in(tmp.path());
    cmd.env("ANTHROPIC_API_KEY", env_key).args([
        "--attack-model",
        "openai-compatible/m",
        "--eval-models",
        "openai-compatible/m",
        "--api-base",
        &server.base,
        "--adversaries",
        "paranoid_security",
        "--format",
        "json",
        "--quiet",
        "spec.md",
    ]);
    let o = run_binary(cmd).await;
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(server.count() > 0, "{stderr}");
    let mut needles = needles(&secrets);
    needles.push(("env".into(), env_key.into()));
    let sent: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{}{}", r.headers, r.body))
        .collect();
    let stored: Vec<String> = tree(&store_dir(tmp.path()))
        .into_iter()
        .map(|(p, b)| format!("{p}: {}", String::from_utf8_lossy(&b)))
        .collect();
    assert!(
        stored.iter().any(|s| s.contains("runs/")),
        "no run saved: {stored:?}"
    );
    for (name, n) in &needles {
        if name != "env" {
            assert!(
                sent.iter().any(|s| !s.is_empty()) && !sent.iter().any(|s| s.contains(n.as_str())),
                "{name} reached the model"
            );
        }
        assert!(!stdout.contains(n.as_str()), "{name} reached stdout");
        assert!(!stderr.contains(n.as_str()), "{name} reached stderr");
        for s in &stored {
            assert!(
                !s.contains(n.as_str()),
                "{name} reached the store: {}",
                &s[..80.min(s.len())]
            );
        }
    }
}

// --------------------------------------------------- untrusted text in output

const ESCAPES: &str = "\u{1b}]52;c;cm0gLXJmIH4K\u{7}\u{1b}[2J\u{1b}]0;owned\u{7}\u{9b}31m";

fn hostile_spec() -> String {
    format!(
        "# Plan {ESCAPES} ![x](https://evil.example/p.png) @org/team\n\n## Design\n\nThe Billing service calls the Ledger API to frobnicate each widget. {ESCAPES}\n"
    )
}

#[track_caller]
fn no_escapes(what: &str, s: &str) {
    assert!(
        !s.contains('\u{1b}') && !s.contains('\u{9b}') && !s.contains('\u{7}'),
        "{what} carries raw control characters: {s:?}"
    );
}

#[test]
fn escapes_from_specs_are_shown_never_obeyed() {
    let tmp = tempfile::tempdir().unwrap();
    let name = format!("x{}.md", "\u{1b}]0;t\u{7}");
    let spec = tmp.path().join(&name);
    write(&spec, hostile_spec());
    for format in ["text", "markdown"] {
        let o = gauntlet()
            .args(["--no-store", "--color", "always", "--format", format])
            .path(&spec)
            .run()
            .code(1);
        no_escapes(format, &o.stdout.replace("\u{1b}[", "SGR["));
        no_escapes("progress", &o.stderr);
    }
    let md = gauntlet()
        .args(["--no-store", "--format", "markdown"])
        .path(&spec)
        .run()
        .code(1)
        .stdout;
    no_escapes("markdown", &md);
    assert!(!md.contains("![x]("), "image renders live:\n{md}");
    assert!(!md.contains("@org/team"), "mention pings:\n{md}");
    assert!(!md.contains("https://evil"), "link is live:\n{md}");

    let review = gauntlet()
        .cwd(tmp.path())
        .args(["review", ".", "--no-store"])
        .run()
        .code(1);
    no_escapes("review table", &review.stdout);
    no_escapes("review progress", &review.stderr);

    let text = gauntlet()
        .args(["--no-store", "--format", "json"])
        .path(&spec)
        .run()
        .json();
    let id = text["concerns"][0]["id"].as_str().unwrap().to_string();
    let explain = gauntlet().args(["explain", &id]).path(&spec).run();
    no_escapes("explain", &explain.stdout);
}

// ------------------------------------------ never hang, never report success

#[cfg(unix)]
#[test]
fn a_closed_stdout_still_exits_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.md");
    write(&spec, GAP);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .env("GAUNTLET_OFFLINE", "1")
        .args(["--no-store", "--quiet"])
        .arg(&spec)
        .stdout(writer)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    // And a review batch.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .env("GAUNTLET_OFFLINE", "1")
        .current_dir(tmp.path())
        .args(["review", ".", "--no-store", "--quiet"])
        .stdout(writer)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn invisible_input_is_empty_and_line_endings_are_normalised() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("bom.md", "\u{feff}".as_bytes().to_vec()),
        (
            "spaces.md",
            "\u{feff}\u{a0}\u{2003}\n\u{3000}\u{200b}\n"
                .as_bytes()
                .to_vec(),
        ),
    ] {
        let p = tmp.path().join(name);
        write(&p, bytes);
        gauntlet()
            .arg("--no-store")
            .path(&p)
            .run()
            .one_line_error("is empty");
    }
    gauntlet()
        .arg("--no-store")
        .stdin("\u{feff}\u{2028}")
        .run()
        .one_line_error("empty");
    let lf = gauntlet()
        .args(["--no-store", "--format", "json"])
        .stdin(GAP)
        .run()
        .code(1)
        .json();
    for ending in ["\r", "\r\n"] {
        let v = gauntlet()
            .args(["--no-store", "--format", "json"])
            .stdin(GAP.replace('\n', ending))
            .run()
            .code(1)
            .json();
        assert_eq!(v["concerns"], lf["concerns"], "{ending:?}");
        assert_eq!(v["spec"]["lines"], lf["spec"]["lines"]);
    }
}

#[test]
fn regex_errors_in_data_files_are_one_line_with_file_rule_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("personas");
    let base =
        std::fs::read_to_string(support::root().join("personas/burned_oncall.toml")).unwrap();
    // Break the first trigger pattern of the first rule.
    let broken = base.replacen("triggers = ['", "triggers = ['(unclosed ", 1);
    assert!(broken != base, "fixture changed shape");
    write(&dir.join("burned_oncall.toml"), broken);
    let spec = tmp.path().join("spec.md");
    write(&spec, GAP);
    gauntlet()
        .args(["--no-store", "--personas-dir"])
        .path(&dir)
        .path(&spec)
        .run()
        .one_line_error("burned_oncall.toml")
        .stderr_has("rule `")
        .stderr_has("at column");
}

#[test]
fn duplicate_persona_names_across_files_name_both_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("personas");
    let base =
        std::fs::read_to_string(support::root().join("personas/burned_oncall.toml")).unwrap();
    write(&dir.join("a.toml"), &base);
    write(&dir.join("b.toml"), &base);
    let spec = tmp.path().join("spec.md");
    write(&spec, GAP);
    gauntlet()
        .args(["--no-store", "--personas-dir"])
        .path(&dir)
        .path(&spec)
        .run()
        .one_line_error("a.toml")
        .stderr_has("b.toml");
}

#[test]
fn gauntlet_offline_zero_does_not_conflict_with_model_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("spec.md");
    write(&spec, GAP);
    gauntlet()
        .env("GAUNTLET_OFFLINE", "0")
        .args([
            "--no-store",
            "--quiet",
            "--attack-model",
            "offline",
            "--eval-models",
            "offline",
        ])
        .path(&spec)
        .run()
        .code(1);
    gauntlet()
        .env("GAUNTLET_OFFLINE", "1")
        .args(["--no-store", "--attack-model", "codex/x"])
        .path(&spec)
        .run()
        .one_line_error("--offline");
    let _ = fixture("gap.md");
}
