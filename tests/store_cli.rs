//! The resolved-concerns store end to end, through the real binary: runs
//! that learn from earlier dismissals, decay, the store subcommands, the
//! adversary leaderboard, and the never-lose-data cases.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SPEC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-spec.md");
const T0: &str = "2026-01-01T00:00:00Z";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    c.env_remove("GAUNTLET_STORE_DIR")
        .env_remove("GAUNTLET_NOW")
        .env("NO_COLOR", "1");
    c
}

#[track_caller]
fn run_ok(cmd: &mut Command, codes: &[i32]) -> Output {
    let out = cmd.output().expect("binary runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "exit {code}, expected {codes:?}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// One gauntlet run on `spec` with the store in `dir` at time `now`; the JSON verdict.
#[track_caller]
fn verdict(dir: &Path, spec: &Path, now: &str) -> Value {
    let out = run_ok(
        bin()
            .arg(spec)
            .args(["--format", "json", "--quiet", "--now", now, "--store-dir"])
            .arg(dir),
        &[0, 1],
    );
    serde_json::from_slice(&out.stdout).expect("json verdict")
}

fn status_of<'a>(v: &'a Value, id: &str) -> &'a str {
    v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no concern {id}"))["status"]
        .as_str()
        .unwrap()
}

fn ids_with(v: &Value, status: &str) -> Vec<String> {
    let mut ids: Vec<String> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

fn store_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("resolved_concerns.json")).unwrap()).unwrap()
}

fn entries(dir: &Path) -> Vec<Value> {
    store_json(dir)["concerns"].as_array().unwrap().clone()
}

#[test]
fn second_run_drops_what_the_first_dismissed_and_evaluators_see_fewer() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let first = verdict(&dir, Path::new(SPEC), T0);
    let dismissed = ids_with(&first, "dismissed");
    let reinstated = ids_with(&first, "reinstated");
    // The fixture is built to give both outcomes: the offline attacker
    // raises what the spec answers, and the evaluators dismiss five of them
    // (token expiry, encryption, billing timeout, retries, nightly alerting).
    assert_eq!(dismissed.len(), 5, "{first:#}");
    let n = dismissed.len() as u64;
    assert_eq!(reinstated.len(), 1);
    let total = first["concerns"].as_array().unwrap().len() as u64;
    assert_eq!(first["stats"]["evaluation"]["evaluated"], total);

    // Exactly the dismissed concerns were saved (not the reinstated one),
    // with the evaluators' reasoning as the explanation.
    let saved = entries(&dir);
    let mut saved_ids: Vec<String> = saved
        .iter()
        .map(|e| e["concern_id"].as_str().unwrap().to_string())
        .collect();
    saved_ids.sort();
    assert_eq!(saved_ids, dismissed);
    for e in &saved {
        assert!(
            e["explanation"]
                .as_str()
                .unwrap()
                .contains("offline/section: "),
            "{e:#}"
        );
        assert_eq!(e["times_matched"], 0);
        assert_eq!(e["confidence"], 0.9);
        assert_eq!(e["added_at"], T0);
    }

    let second = verdict(&dir, Path::new(SPEC), "2026-01-02T00:00:00Z");
    for id in &dismissed {
        assert_eq!(status_of(&second, id), "filtered");
        let c = second["concerns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| &c["id"] == id)
            .unwrap();
        let f = &c["filter"];
        assert_eq!(f["action"], "dropped");
        assert_eq!(f["similarity"], 1.0);
        // 0.9 * 0.5^(1/14), rounded to 6 places.
        assert_eq!(f["confidence"], 0.856526);
        let entry = saved.iter().find(|e| &e["concern_id"] == id).unwrap();
        assert_eq!(f["entry_id"], entry["id"]);
        assert_eq!(f["explanation"], entry["explanation"]);
        assert!(
            c["votes"].as_array().unwrap().is_empty(),
            "no evaluator saw it"
        );
    }
    assert_eq!(status_of(&second, &reinstated[0]), "reinstated");
    assert_eq!(second["stats"]["filter"]["dropped"], n);
    assert_eq!(second["stats"]["filter"]["proceeding"], total - n);
    assert_eq!(second["stats"]["evaluation"]["evaluated"], total - n);

    // The matches were counted, and nothing was duplicated.
    let after = entries(&dir);
    assert_eq!(after.len() as u64, n);
    for e in &after {
        assert_eq!(e["times_matched"], 1);
        assert_eq!(e["last_matched"], "2026-01-02T00:00:00Z");
    }
}

#[test]
fn sixty_days_later_they_are_evaluated_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let first = verdict(&dir, Path::new(SPEC), T0);
    let later = verdict(&dir, Path::new(SPEC), "2026-03-02T00:00:00Z");
    // 0.9 * 0.5^(60/14) = 0.046: below the note threshold, ignored.
    assert!(ids_with(&later, "filtered").is_empty());
    assert_eq!(later["stats"]["filter"]["dropped"], 0);
    assert_eq!(later["stats"]["filter"]["noted"], 0);
    assert_eq!(
        later["stats"]["evaluation"]["evaluated"],
        first["stats"]["evaluation"]["evaluated"]
    );
    assert_eq!(ids_with(&later, "dismissed"), ids_with(&first, "dismissed"));
    for c in later["concerns"].as_array().unwrap() {
        assert!(c["filter"].is_null());
    }
    // Dismissed again: the same entries were re-verified, not duplicated.
    let e = entries(&dir);
    assert_eq!(e.len(), ids_with(&first, "dismissed").len());
    for x in &e {
        assert_eq!(x["added_at"], T0);
        assert_eq!(x["verified_at"], "2026-03-02T00:00:00Z");
    }
}

#[test]
fn fourteen_days_later_they_are_noted_then_reverified() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let first = verdict(&dir, Path::new(SPEC), T0);
    let dismissed = ids_with(&first, "dismissed");
    // 0.9 * 0.5 = 0.45: evaluated, with the earlier explanation attached.
    let noted = verdict(&dir, Path::new(SPEC), "2026-01-15T00:00:00Z");
    assert_eq!(noted["stats"]["filter"]["noted"], dismissed.len() as u64);
    assert_eq!(noted["stats"]["filter"]["dropped"], 0);
    for id in &dismissed {
        let c = noted["concerns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| &c["id"] == id)
            .unwrap();
        assert_eq!(c["filter"]["action"], "noted");
        assert_eq!(c["filter"]["confidence"], 0.45);
        assert_eq!(c["status"], "dismissed");
        assert!(!c["votes"].as_array().unwrap().is_empty());
    }
    // The review report carries the earlier explanation too.
    let report = std::fs::read_to_string(dir.join("reviews/review_2026-01-15_000000.md")).unwrap();
    for id in &dismissed {
        assert!(report.contains(&format!("{id} noted by rc-")), "{report}");
    }
    assert!(
        report.contains("confidence 0.45, now dismissed): offline/section: handled"),
        "{report}"
    );
    // Dismissed again on day 14, so on day 15 the explanation is fresh: dropped.
    let next = verdict(&dir, Path::new(SPEC), "2026-01-16T00:00:00Z");
    assert_eq!(ids_with(&next, "filtered"), dismissed);
}

#[test]
fn a_changed_spec_costs_thirty_percent() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    // The same spec file, edited between the runs.
    let edited = tmp.path().join("edited.md");
    std::fs::copy(SPEC, &edited).unwrap();
    let first = verdict(&dir, &edited, T0);
    let mut text = std::fs::read_to_string(SPEC).unwrap();
    text.push_str("\nThe archive format is zip.\n");
    std::fs::write(&edited, text).unwrap();
    let v = verdict(&dir, &edited, T0);
    // 0.9 * 0.7 = 0.63: noted, not dropped.
    assert_eq!(v["stats"]["filter"]["dropped"], 0);
    assert_eq!(
        v["stats"]["filter"]["noted"],
        ids_with(&first, "dismissed").len() as u64
    );
    let notes: Vec<&Value> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["filter"].is_null())
        .collect();
    assert!(notes.iter().all(|c| c["filter"]["confidence"] == 0.63));
}

#[test]
fn stats_are_exact_sums_over_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let runs = [
        verdict(&dir, Path::new(SPEC), T0),
        verdict(&dir, Path::new(SPEC), "2026-01-02T00:00:00Z"),
    ];
    // A third run with only one adversary: the others add nothing.
    let out = run_ok(
        bin()
            .arg(SPEC)
            .args([
                "--format",
                "json",
                "--quiet",
                "--adversaries",
                "paranoid_security",
                "--now",
                "2026-01-03T00:00:00Z",
                "--store-dir",
            ])
            .arg(&dir),
        &[0, 1],
    );
    let third: Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = [&runs[0], &runs[1], &third];
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.join("adversary_stats.json")).unwrap()).unwrap();
    assert_eq!(stats["total_runs"], 3);
    for adv in ["paranoid_security", "burned_oncall", "lazy_developer"] {
        let count = |status: &[&str]| -> u64 {
            all.iter()
                .flat_map(|v| v["concerns"].as_array().unwrap())
                .filter(|c| {
                    c["adversary"] == adv && status.contains(&c["status"].as_str().unwrap())
                })
                .count() as u64
        };
        let ran = all
            .iter()
            .filter(|v| {
                v["adversaries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|a| a == adv)
            })
            .count() as u64;
        let s = &stats["adversaries"][adv];
        assert_eq!(s["runs"], ran, "{adv}");
        assert_eq!(
            s["concerns_raised"],
            count(&[
                "accepted",
                "reinstated",
                "dismissed",
                "deferred",
                "filtered"
            ]),
            "{adv}"
        );
        assert_eq!(s["accepted"], count(&["accepted", "reinstated"]), "{adv}");
        assert_eq!(s["dismissed"], count(&["dismissed"]), "{adv}");
        assert_eq!(s["filtered"], count(&["filtered"]), "{adv}");
    }
    assert_eq!(stats["adversaries"]["paranoid_security"]["runs"], 3);
    assert_eq!(stats["adversaries"]["burned_oncall"]["runs"], 2);
    // burned_oncall, run 1: the batch-job alerting dismissal cites the
    // nightly job's line and is overturned (won); the other dismissals cite
    // lines about their own component and are not challenged. Run 2: those
    // are filtered, the batch job is overturned again.
    assert_eq!(stats["adversaries"]["burned_oncall"]["rebuttals_won"], 2);
    assert_eq!(stats["adversaries"]["burned_oncall"]["rebuttals_lost"], 0);
    assert_eq!(stats["models"]["offline"]["runs"], 3);
    assert_eq!(stats["models"]["offline"]["role"], "attack");

    // The leaderboard (both binaries) reads the same sums; --since uses the history.
    let board = |args: &[&str], exe: &str| -> Value {
        let out = run_ok(
            Command::new(exe)
                .args(args)
                .arg("--store-dir")
                .arg(&dir)
                .args(["--format", "json"]),
            &[0],
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let g = board(&["adversary-stats"], env!("CARGO_BIN_EXE_gauntlet"));
    let a = board(&[], env!("CARGO_BIN_EXE_adversary-stats"));
    assert_eq!(g, a);
    assert_eq!(g["total_runs"], 3);
    let since = board(
        &["adversary-stats", "--since", "2026-01-02"],
        env!("CARGO_BIN_EXE_gauntlet"),
    );
    assert_eq!(since["total_runs"], 2);
    let row = since["adversaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["adversary"] == "burned_oncall")
        .unwrap();
    assert_eq!(row["runs"], 1);
    let md = run_ok(
        bin()
            .args(["adversary-stats", "--format", "markdown", "--store-dir"])
            .arg(&dir),
        &[0],
    );
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("| burned_oncall | 2 |"), "{md}");
    assert!(md.contains("## Low Performers"));
}

#[test]
fn review_report_per_run_unless_no_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    verdict(&dir, Path::new(SPEC), "2026-01-22T14:30:00Z");
    verdict(&dir, Path::new(SPEC), "2026-01-22T14:30:00Z");
    let first = dir.join("reviews/review_2026-01-22_143000.md");
    let second = dir.join("reviews/review_2026-01-22_143000_2.md");
    let text = std::fs::read_to_string(&first).unwrap();
    for heading in [
        "# Spec Review Report",
        "### Shout-Outs",
        "### Low Performers",
        "### Rebuttal Effectiveness",
        "## Model Performance",
        "## Total Cost",
    ] {
        assert!(text.contains(heading), "{heading} missing:\n{text}");
    }
    assert!(
        text.contains("| burned_oncall | 7 | 0 | 3 | 43% |"),
        "{text}"
    );
    assert!(
        text.contains("## Since the Last Run\n- First run of this spec"),
        "{text}"
    );
    let again = std::fs::read_to_string(&second).unwrap();
    assert!(again.contains("dropped by rc-"), "{again}");
    // The accepted concerns of the first run are still open in the second.
    assert!(again.contains("- 1 earlier run(s)"), "{again}");
    assert!(again.contains("still open since 2026-01-22"), "{again}");
    // Second run: the 4 dismissed of burned_oncall's 7 were filtered; all 3
    // seen (the currency API call, the batch job reinstated again, the
    // billing API's rate limit) were accepted.
    assert!(
        again.contains("| burned_oncall | 7 | 4 | 3 | 100% |"),
        "{again}"
    );
    run_ok(
        bin()
            .arg(SPEC)
            .args([
                "--quiet",
                "--no-report",
                "--now",
                "2026-02-01T00:00:00Z",
                "--store-dir",
            ])
            .arg(&dir),
        &[0, 1],
    );
    assert_eq!(std::fs::read_dir(dir.join("reviews")).unwrap().count(), 2);
}

#[test]
fn no_store_reads_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("resolved_concerns.json"), "{ not json").unwrap();
    let out = run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--no-store", "--format", "json"])
            .env("GAUNTLET_STORE_DIR", &dir),
        &[1],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(ids_with(&v, "filtered").is_empty());
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("resolved_concerns.json")]
    );
    assert_eq!(
        std::fs::read(dir.join("resolved_concerns.json")).unwrap(),
        b"{ not json"
    );
}

#[test]
fn default_location_is_the_project_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("proj");
    let sub = root.join("docs/specs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&sub).unwrap();
    run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--now", T0])
            .current_dir(&sub),
        &[1],
    );
    assert!(
        root.join(".adversarial-spec/resolved_concerns.json")
            .exists()
    );
    assert!(root.join(".adversarial-spec/adversary_stats.json").exists());
    assert!(!sub.join(".adversarial-spec").exists());
    // GAUNTLET_STORE_DIR overrides it.
    let other = tmp.path().join("elsewhere");
    run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--now", T0])
            .current_dir(&sub)
            .env("GAUNTLET_STORE_DIR", &other),
        &[1],
    );
    assert!(other.join("resolved_concerns.json").exists());
}

/// Runs that must stop with exit 3 and leave `file` exactly as it was.
#[track_caller]
fn refuses(dir: &Path, file: &str, bytes: &[u8], needle: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, bytes).unwrap();
    let out = run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--now", T0, "--store-dir"])
            .arg(dir),
        &[3],
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains(&path.display().to_string()),
        "names the file: {err}"
    );
    assert!(err.contains(needle), "says `{needle}`: {err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "left untouched");
    assert!(out.stdout.is_empty());
    // `store check` reports the same problem and exits 1.
    let check = run_ok(bin().args(["store", "check", "--store-dir"]).arg(dir), &[1]);
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(text.contains(needle), "{text}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn corrupt_truncated_and_unknown_version_files_stop_the_run_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    verdict(&good, Path::new(SPEC), T0);
    let valid = std::fs::read(good.join("resolved_concerns.json")).unwrap();

    let truncated = &valid[..valid.len() * 2 / 3];
    let lines = truncated.iter().filter(|&&b| b == b'\n').count() + 1;
    refuses(
        &tmp.path().join("t"),
        "resolved_concerns.json",
        truncated,
        &format!("corrupt at line {lines}"),
    );

    let mut garbage = valid.clone();
    let at = garbage.iter().position(|&b| b == b'[').unwrap();
    garbage[at] = b'?';
    refuses(
        &tmp.path().join("g"),
        "resolved_concerns.json",
        &garbage,
        "corrupt at line 4, column",
    );

    let v2 = String::from_utf8(valid.clone())
        .unwrap()
        .replace("\"format_version\": 1", "\"format_version\": 2");
    refuses(
        &tmp.path().join("v"),
        "resolved_concerns.json",
        v2.as_bytes(),
        "format_version 2 at line 2, column 1",
    );

    refuses(
        &tmp.path().join("e"),
        "resolved_concerns.json",
        b"",
        "corrupt at line 1",
    );

    let stats = std::fs::read(good.join("adversary_stats.json")).unwrap();
    refuses(
        &tmp.path().join("s"),
        "adversary_stats.json",
        &stats[..stats.len() / 2],
        "corrupt at line",
    );
}

/// Makes a folder unwritable even for root (immutable attribute), undone on drop.
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn new(dir: &Path) -> Option<ReadOnly> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        let guard = ReadOnly(dir.to_path_buf());
        if std::fs::write(dir.join(".probe"), b"x").is_err() {
            return Some(guard);
        }
        let _ = std::fs::remove_file(dir.join(".probe"));
        // Root ignores modes; the immutable attribute still binds it.
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        (ok && std::fs::write(dir.join(".probe"), b"x").is_err()).then_some(guard)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn read_only_folder_is_a_clear_error_and_data_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    verdict(&dir, Path::new(SPEC), T0);
    let before: Vec<(std::ffi::OsString, Vec<u8>)> = snapshot(&dir);
    let Some(_ro) = ReadOnly::new(&dir) else {
        eprintln!(
            "cannot make a read-only folder here (neither file modes nor chattr bind); skipped"
        );
        return;
    };
    let out = run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--now", "2026-01-02T00:00:00Z", "--store-dir"])
            .arg(&dir),
        &[3],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write") && err.contains(&dir.display().to_string()),
        "{err}"
    );
    assert_eq!(snapshot(&dir), before);
    // Reading still works.
    let list = run_ok(bin().args(["store", "list", "--store-dir"]).arg(&dir), &[0]);
    assert!(String::from_utf8_lossy(&list.stdout).starts_with("5 entries"));
}

fn snapshot(dir: &Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    v.sort();
    v
}

const REFERENCE: &str = r#"{
  "concerns": [
    {
      "id": "0b9d7c1e-6a43-4c1e-9a55-3f7c2d1b8e01",
      "pattern": "Billing API calls have no timeout",
      "explanation": "Section Design: the worker sets a 10 second timeout on billing API calls.",
      "added_at": "2026-01-01T09:30:00.123456",
      "adversary": "burned_oncall",
      "confidence": 0.85,
      "spec_hash": null,
      "times_matched": 0,
      "last_matched": null,
      "verified_at": null
    },
    {
      "id": "0b9d7c1e-6a43-4c1e-9a55-3f7c2d1b8e02",
      "pattern": "SQL injection in the search endpoint",
      "explanation": "All queries are parameterised.",
      "added_at": "2025-12-01T10:00:00",
      "adversary": "paranoid_security",
      "confidence": 0.9,
      "spec_hash": "0123456789abcdef",
      "times_matched": 4,
      "last_matched": "2025-12-20T10:00:00",
      "verified_at": null
    }
  ],
  "last_updated": "2026-01-01T09:30:00.123456"
}"#;

#[test]
fn imported_reference_entries_filter_paraphrased_concerns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let file = tmp.path().join("resolved_concerns.json");
    std::fs::write(&file, REFERENCE).unwrap();
    let out = run_ok(
        bin()
            .args(["store", "import"])
            .arg(&file)
            .arg("--store-dir")
            .arg(&dir)
            .args(["--now", T0]),
        &[0],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 2 entries"));
    // Importing again adds nothing.
    let out = run_ok(
        bin()
            .args(["store", "import"])
            .arg(&file)
            .arg("--store-dir")
            .arg(&dir),
        &[0],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("imported 0 entries"),
        "{out:?}"
    );
    let e = entries(&dir);
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["added_at"], "2026-01-01T09:30:00.123456Z");
    assert_eq!(e[1]["times_matched"], 4);

    // "No timeout on calls to the billing API" (the offline attacker's title)
    // is a paraphrase of the imported pattern: dropped at 0.85, 14.5 hours old.
    let v = verdict(&dir, Path::new(SPEC), "2026-01-02T00:00:00Z");
    let c = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "No timeout on calls to the billing API")
        .unwrap();
    assert_eq!(c["status"], "filtered");
    assert_eq!(
        c["filter"]["entry_id"],
        "0b9d7c1e-6a43-4c1e-9a55-3f7c2d1b8e01"
    );
    assert_eq!(c["filter"]["similarity"], 1.0);
    // ...while the near miss about the currency API is not.
    let cur = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == "No timeout on calls to the currency API")
        .unwrap();
    assert!(cur["filter"].is_null());
    assert_ne!(cur["status"], "filtered");
    let e = entries(&dir);
    assert_eq!(e[0]["times_matched"], 1);
}

#[test]
fn store_list_show_forget_prune() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    verdict(&dir, Path::new(SPEC), T0);
    let d = |args: &[&str], codes: &[i32]| -> String {
        let out = run_ok(bin().args(args).arg("--store-dir").arg(&dir), codes);
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
    };
    let list = d(&["store", "list", "--now", "2026-01-15T00:00:00Z"], &[0]);
    assert!(list.starts_with("5 entries"), "{list}");
    assert!(list.contains(" 0.450 "), "{list}");
    let ids: Vec<String> = entries(&dir)
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let show = d(&["store", "show", &ids[0][..8], "--now", T0], &[0]);
    assert!(
        show.contains(&ids[0]) && show.contains("0.9 now on the same spec (drop)"),
        "{show}"
    );
    assert!(show.contains("0.63 now if the spec changed"), "{show}");
    assert!(d(&["store", "show", "rc-nope"], &[2]).contains("no stored entry"));

    // Prune: at day 28 all five are at 0.225, above 0.2; at day 42, 0.1125.
    let before = std::fs::read(dir.join("resolved_concerns.json")).unwrap();
    let dry = d(
        &[
            "store",
            "prune",
            "--dry-run",
            "--now",
            "2026-02-12T00:00:00Z",
        ],
        &[0],
    );
    assert!(dry.contains("5 of 5 entries would be pruned"), "{dry}");
    assert_eq!(
        std::fs::read(dir.join("resolved_concerns.json")).unwrap(),
        before
    );
    let keep = d(&["store", "prune", "--now", "2026-01-29T00:00:00Z"], &[0]);
    assert!(keep.contains("0 of 5 entries pruned"), "{keep}");
    let gone = d(&["store", "forget", &ids[1]], &[0]);
    assert!(gone.contains(&format!("forgot {}", ids[1])));
    assert_eq!(entries(&dir).len(), 4);
    let pruned = d(
        &[
            "store",
            "prune",
            "--below",
            "0.5",
            "--now",
            "2026-01-29T00:00:00Z",
        ],
        &[0],
    );
    assert!(pruned.contains("4 of 4 entries pruned"), "{pruned}");
    assert!(entries(&dir).is_empty());
    assert!(d(&["store", "check"], &[0]).contains("ok: "));
}

/// Two sets of processes update one store at once; no update is lost.
#[test]
fn concurrent_runs_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    verdict(&dir, Path::new(SPEC), T0);
    // Specs whose timeout concern is about a different API each: new entries.
    let base = std::fs::read_to_string(SPEC).unwrap();
    let specs: Vec<PathBuf> = ["ledger", "payroll", "tax"]
        .iter()
        .map(|name| {
            let p = tmp.path().join(format!("{name}.md"));
            std::fs::write(&p, base.replace("billing API", &format!("{name} API"))).unwrap();
            p
        })
        .collect();
    let n_same = 6;
    let mut children = Vec::new();
    for i in 0..n_same + specs.len() {
        let spec: &Path = if i < n_same {
            Path::new(SPEC)
        } else {
            &specs[i - n_same]
        };
        children.push(
            bin()
                .arg(spec)
                .args([
                    "--quiet",
                    "--format",
                    "json",
                    "--now",
                    "2026-01-02T00:00:00Z",
                    "--store-dir",
                ])
                .arg(&dir)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    for mut c in children {
        let code = c.wait().unwrap().code();
        assert!(matches!(code, Some(0 | 1)), "{code:?}");
    }
    let e = entries(&dir);
    let billing = e
        .iter()
        .find(|x| x["pattern"] == "No timeout on calls to the billing API")
        .unwrap();
    // Every one of the same-spec runs dropped it and counted the match.
    assert_eq!(billing["times_matched"], n_same as u64);
    for name in ["ledger", "payroll", "tax"] {
        assert!(
            e.iter()
                .any(|x| x["pattern"] == format!("No timeout on calls to the {name} API")),
            "{name} entry lost"
        );
    }
    let stats: Value =
        serde_json::from_slice(&std::fs::read(dir.join("adversary_stats.json")).unwrap()).unwrap();
    let runs = 1 + n_same + specs.len();
    assert_eq!(stats["total_runs"], runs as u64);
    assert_eq!(stats["adversaries"]["burned_oncall"]["runs"], runs as u64);
    let history = std::fs::read_to_string(dir.join("adversary_runs.jsonl")).unwrap();
    assert_eq!(history.lines().count(), runs);
    assert_eq!(
        std::fs::read_dir(dir.join("reviews")).unwrap().count(),
        runs
    );
    run_ok(
        bin().args(["store", "check", "--store-dir"]).arg(&dir),
        &[0],
    );
}

#[test]
fn bad_clock_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_ok(
        bin()
            .arg(SPEC)
            .args(["--quiet", "--now", "last tuesday", "--store-dir"])
            .arg(tmp.path()),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid time `last tuesday`"));
    let out = run_ok(
        bin()
            .args(["adversary-stats", "--since", "soon", "--store-dir"])
            .arg(tmp.path()),
        &[2],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid --since"));
    // Nothing was created.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn a_dismissal_only_answers_concerns_of_the_spec_it_was_made_in() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let a = tmp.path().join("a.md");
    let b = tmp.path().join("b.md");
    std::fs::copy(SPEC, &a).unwrap();
    std::fs::copy(SPEC, &b).unwrap();
    let first = verdict(&dir, &a, T0);
    let dismissed = ids_with(&first, "dismissed");
    assert!(!dismissed.is_empty(), "the fixture must have dismissals");
    // Another spec with the same text: its explanations would cite a.md's
    // lines, so nothing is filtered or noted.
    let other = verdict(&dir, &b, T0);
    assert_eq!(other["stats"]["filter"]["dropped"], 0);
    assert_eq!(other["stats"]["filter"]["noted"], 0);
    assert!(ids_with(&other, "filtered").is_empty());
    // The same spec again: its own dismissals are filtered.
    let again = verdict(&dir, &a, T0);
    assert_eq!(ids_with(&again, "filtered"), dismissed);
}
