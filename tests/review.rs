//! `gauntlet review` end to end: the real binary on folders built in a temp
//! dir from the fixtures in `tests/fixtures/review/` plus files that cannot
//! be reviewed (binary, empty, too large), ignored and hidden files, and
//! symlinks leading out of the folder.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gauntlet");
/// Small enough that `huge.md` is too large, big enough for every fixture.
const MAX_BYTES: &str = "4000";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/review")
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn write(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A repository (`.git` marks its root) holding `specs/`: the fixtures,
/// files that cannot be reviewed, and files that must not be found.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        let specs = dir.path().join("specs");
        std::fs::create_dir_all(&specs).unwrap();
        copy_tree(&fixtures(), &specs);
        Repo { dir }
    }

    /// Adds the files every batch must cope with.
    fn with_trouble(self) -> Repo {
        let specs = self.specs();
        write(
            &specs.join("broken/binary.md"),
            b"# Title\n\0\x01\x02 not text\n",
        );
        write(&specs.join("broken/empty.md"), b"  \n\n");
        let mut huge = b"# Huge\n\n".to_vec();
        huge.extend(std::iter::repeat_n(b"The service calls the API.\n".as_slice(), 400).flatten());
        write(&specs.join("huge.md"), &huge);
        // Not specs: ignored by .gitignore, hidden, or not Markdown.
        write(&specs.join(".gitignore"), b"drafts/\n");
        write(
            &specs.join("drafts/wip.md"),
            b"# WIP\n\nThe service calls the API.\n",
        );
        write(
            &specs.join(".private/notes.md"),
            b"# Notes\n\nThe service calls the API.\n",
        );
        write(
            &specs.join("payments/notes.txt"),
            b"The service calls the API.\n",
        );
        self
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn specs(&self) -> PathBuf {
        self.dir.path().join("specs")
    }

    /// Each run gets a fresh store, so a run never filters what an earlier
    /// run of the same test dismissed (the store has its own tests).
    fn run(&self, args: &[&str]) -> Output {
        let store = tempfile::tempdir().unwrap();
        Command::new(BIN)
            .args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .env("GAUNTLET_OFFLINE", "1")
            .env("GAUNTLET_STORE_DIR", store.path())
            .output()
            .unwrap()
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn specs_of(summary: &Value) -> Vec<String> {
    summary["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["spec"].as_str().unwrap().to_string())
        .collect()
}

fn row<'a>(summary: &'a Value, spec: &str) -> &'a Value {
    summary["specs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["spec"] == spec)
        .unwrap_or_else(|| panic!("no row for {spec}"))
}

#[track_caller]
fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const REVIEWED: [&str; 3] = [
    "specs/payments/webhooks.md",
    "specs/platform/glossary.md",
    "specs/platform/limits/rate-limits.md",
];

#[test]
fn summary_lists_every_spec_once_with_the_single_run_counts_worst_first() {
    let repo = Repo::new().with_trouble();
    let out = repo.run(&[
        "review",
        "--max-bytes",
        MAX_BYTES,
        "--format",
        "json",
        "specs",
    ]);
    assert_code(&out, 3);
    let s = json(&out);
    let mut found: Vec<String> = specs_of(&s);
    found.sort();
    let mut expected: Vec<String> = REVIEWED.iter().map(|s| s.to_string()).collect();
    expected.extend(
        [
            "specs/broken/binary.md",
            "specs/broken/empty.md",
            "specs/huge.md",
        ]
        .map(String::from),
    );
    expected.sort();
    assert_eq!(
        found, expected,
        "ignored, hidden and non-Markdown files must not be found"
    );

    for (spec, why) in [
        ("specs/broken/binary.md", "binary"),
        ("specs/broken/empty.md", "empty"),
        ("specs/huge.md", "over the 4000-byte limit"),
    ] {
        let r = row(&s, spec);
        assert_eq!(r["verdict"], "error", "{spec}");
        assert!(
            r["error"].as_str().unwrap().contains(why),
            "{spec}: {}",
            r["error"]
        );
    }

    // Each reviewed spec got exactly what a single run gives it.
    let mut totals = [0u64; 5];
    for spec in REVIEWED {
        let single = repo.run(&["--format", "json", spec]);
        let v = json(&single);
        let count = |status: &[&str], sev: Option<&str>| {
            v["concerns"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| status.contains(&c["status"].as_str().unwrap()))
                .filter(|c| sev.is_none_or(|s| c["severity"] == s))
                .count() as u64
        };
        let r = row(&s, spec);
        assert_eq!(r["verdict"], v["verdict"], "{spec}");
        let revise = ["accepted", "reinstated"];
        let got = [
            r["requiring_revision"]["high"].as_u64().unwrap(),
            r["requiring_revision"]["medium"].as_u64().unwrap(),
            r["requiring_revision"]["low"].as_u64().unwrap(),
            r["dismissed"].as_u64().unwrap(),
            r["filtered"].as_u64().unwrap(),
        ];
        let want = [
            count(&revise, Some("high")),
            count(&revise, Some("medium")),
            count(&revise, Some("low")),
            count(&["dismissed"], None),
            count(&["filtered"], None),
        ];
        assert_eq!(got, want, "{spec}");
        for (t, g) in totals.iter_mut().zip(got) {
            *t += g;
        }
    }
    // The fixtures are varied: something to revise, something dismissed.
    assert!(totals[0] > 0 && totals[3] > 0, "{totals:?}");
    let t = &s["totals"];
    assert_eq!(t["specs"], 6);
    assert_eq!(t["error"], 3);
    assert_eq!(t["requiring_revision"]["high"], totals[0]);
    assert_eq!(t["dismissed"], totals[3]);

    // Worst first: errors, then by verdict, then more high/medium/low first.
    let rank = |v: &str| {
        ["error", "incomplete", "revise", "pass"]
            .iter()
            .position(|x| *x == v)
    };
    let keys: Vec<_> = s["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let rr = &r["requiring_revision"];
            (
                rank(r["verdict"].as_str().unwrap()),
                std::cmp::Reverse(rr["high"].as_u64()),
                std::cmp::Reverse(rr["medium"].as_u64()),
                std::cmp::Reverse(rr["low"].as_u64()),
                r["spec"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(keys.last().unwrap().0, rank("pass"));
}

#[test]
fn text_table_has_one_row_per_spec_then_totals() {
    let repo = Repo::new();
    let out = repo.run(&["review", "specs"]);
    assert_code(&out, 1);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for h in [
        "SPEC",
        "VERDICT",
        "HIGH",
        "MEDIUM",
        "LOW",
        "DISMISSED",
        "FILTERED",
        "TIME",
    ] {
        assert!(lines[0].contains(h), "{}", lines[0]);
    }
    let rows: Vec<&str> = lines[1..4].to_vec();
    for spec in REVIEWED {
        assert_eq!(
            rows.iter().filter(|l| l.starts_with(spec)).count(),
            1,
            "{text}"
        );
    }
    assert!(rows[2].starts_with("specs/platform/glossary.md") && rows[2].contains(" pass "));
    assert_eq!(lines[4], "");
    assert!(
        lines[5].starts_with("3 spec(s): 2 revise, 1 pass;"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_folder_are_not_followed() {
    let repo = Repo::new();
    let outside = repo.path().join("outside");
    write(
        &outside.join("secret.md"),
        b"# Secret\n\nThe service calls the API.\n",
    );
    std::os::unix::fs::symlink(&outside, repo.specs().join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), repo.specs().join("leak.md")).unwrap();
    // A link that stays inside is followed, and its file reviewed once.
    std::os::unix::fs::symlink(
        repo.specs().join("payments"),
        repo.specs().join("platform/payments-again"),
    )
    .unwrap();
    let out = repo.run(&["review", "--format", "json", "specs"]);
    assert_code(&out, 1);
    let s = json(&out);
    let mut found = specs_of(&s);
    found.sort();
    assert_eq!(found, REVIEWED.to_vec());
    let skipped: BTreeSet<&str> = s["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(skipped, BTreeSet::from(["specs/escape", "specs/leak.md"]));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("warning: skipped specs/leak.md"),
        "{stderr}"
    );
}

#[test]
fn exit_codes() {
    let repo = Repo::new().with_trouble();
    let s = repo.specs();
    let p = |rel: &str| s.join(rel).display().to_string();
    let cases: [(&[String], i32); 7] = [
        (&[p("platform/glossary.md")], 0),
        (&[p("platform/glossary.md"), p("payments")], 1),
        // 3 wins over 1.
        (&[p("payments"), p("broken/empty.md")], 3),
        (&[p("broken")], 3),
        (&[p("does-not-exist")], 2),
        (&["--adversaries".into(), "nobody".into(), p("payments")], 2),
        // A folder without a spec is a usage error, not a silent pass.
        (&[p("drafts"), "--glob".into(), "*.rst".into()], 2),
    ];
    for (args, code) in cases {
        let mut full = vec!["review", "--quiet", "--max-bytes", MAX_BYTES];
        full.extend(args.iter().map(String::as_str));
        let out = repo.run(&full);
        assert_code(&out, code);
        if code == 2 {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.starts_with("gauntlet: error: ") && err.lines().count() == 1,
                "{err}"
            );
        }
    }
    assert_code(
        &repo.run(&["review", "--report-formats", "pdf", "specs"]),
        2,
    );
}

#[test]
fn progress_is_one_plain_line_per_spec_when_stderr_is_not_a_terminal() {
    let repo = Repo::new().with_trouble();
    let out = repo.run(&["review", "--max-bytes", MAX_BYTES, "specs"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    let re = regex::Regex::new(
        r"^gauntlet: \[(\d+)/6\] (specs/\S+): (?:(?:pass|revise|incomplete) \(\d+ high, \d+ medium, \d+ low\) in \d+ ms|error: .+)$",
    )
    .unwrap();
    let mut done = Vec::new();
    let mut specs = BTreeSet::new();
    for line in stderr.lines() {
        let c = re
            .captures(line)
            .unwrap_or_else(|| panic!("unexpected line: {line}"));
        done.push(c[1].parse::<usize>().unwrap());
        specs.insert(c[2].to_string());
    }
    assert_eq!(done, (1..=6).collect::<Vec<_>>(), "{stderr}");
    assert_eq!(specs.len(), 6);
    assert!(!stderr.contains('\x1b'), "no escape codes off a terminal");

    let quiet = repo.run(&["review", "--quiet", "--max-bytes", MAX_BYTES, "specs"]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    // Same table apart from timings (whose width moves the padding).
    let strip = |b: &[u8]| {
        let re = regex::Regex::new(r"\d+(?:\.\d+)? m?s\b").unwrap();
        let text = re
            .replace_all(&String::from_utf8_lossy(b), "T")
            .into_owned();
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&quiet.stdout), strip(&out.stdout));
}

#[test]
fn out_writes_a_report_per_spec_mirroring_the_tree_and_the_summaries() {
    let repo = Repo::new().with_trouble();
    let out = repo.run(&[
        "review",
        "--quiet",
        "--max-bytes",
        MAX_BYTES,
        "--format",
        "json",
        "--out",
        "reports",
        "specs",
    ]);
    assert_code(&out, 3);
    let reports = repo.path().join("reports");
    let mut files = Vec::new();
    collect(&reports, &reports, &mut files);
    files.sort();
    assert_eq!(
        files,
        [
            // The list of files gauntlet wrote there (never overwrites others).
            ".gauntlet-reports",
            "payments/webhooks.json",
            "payments/webhooks.md",
            "platform/glossary.json",
            "platform/glossary.md",
            "platform/limits/rate-limits.json",
            "platform/limits/rate-limits.md",
            "summary.json",
            "summary.md",
        ]
    );
    // summary.json is what --format json printed.
    let stdout = json(&out);
    let file: Value =
        serde_json::from_slice(&std::fs::read(reports.join("summary.json")).unwrap()).unwrap();
    assert_eq!(stdout, file);
    // The per-spec JSON is the single run's verdict.
    let single = json(&repo.run(&["--format", "json", "specs/payments/webhooks.md"]));
    let report: Value =
        serde_json::from_slice(&std::fs::read(reports.join("payments/webhooks.json")).unwrap())
            .unwrap();
    assert_eq!(report["concerns"], single["concerns"]);
    assert_eq!(report["spec"]["path"], "specs/payments/webhooks.md");
    let md = std::fs::read_to_string(reports.join("payments/webhooks.md")).unwrap();
    assert!(
        md.starts_with("## Adversarial Gauntlet: Payment webhooks"),
        "{md}"
    );
    assert!(md.contains("❌ **REVISE**"));
    let summary_md = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        summary_md.contains("| `specs/payments/webhooks.md` | revise |"),
        "{summary_md}"
    );
    assert!(summary_md.contains("### Not reviewed"));

    // A second run over the same folder does not review its own reports.
    let inside = [
        "review",
        "--quiet",
        "--format",
        "json",
        "--out",
        "specs/payments/out",
        "specs/payments",
    ];
    assert_code(&repo.run(&inside), 1);
    assert!(repo.specs().join("payments/out/webhooks.md").exists());
    let again = repo.run(&inside);
    assert_eq!(specs_of(&json(&again)), ["specs/payments/webhooks.md"]);
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(root, &p, out);
        } else {
            out.push(
                p.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

// ---------------------------------------------------------------- SARIF

fn sarif_validator() -> Option<jsonschema::Validator> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/schemas/sarif-schema-2.1.0.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIP schema validation: {} not found", path.display());
        return None;
    };
    let schema: Value = serde_json::from_str(&text).unwrap();
    Some(jsonschema::validator_for(&schema).unwrap())
}

#[track_caller]
fn assert_valid_sarif(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} is not valid SARIF 2.1.0:\n{}",
        errors.join("\n")
    );
}

/// fingerprint -> (ruleId, level, uri, startLine, suppression status)
fn results(doc: &Value) -> BTreeMap<String, (String, String, String, u64, Option<String>)> {
    let mut m = BTreeMap::new();
    for r in doc["runs"][0]["results"].as_array().unwrap() {
        let fp = r["partialFingerprints"]["gauntletConcern/v1"]
            .as_str()
            .unwrap()
            .to_string();
        let loc = &r["locations"][0]["physicalLocation"];
        let prev = m.insert(
            format!("{}#{fp}", loc["artifactLocation"]["uri"].as_str().unwrap()),
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                loc["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                loc["region"]["startLine"].as_u64().unwrap(),
                r["suppressions"][0]["status"].as_str().map(str::to_string),
            ),
        );
        assert!(prev.is_none(), "duplicate result {fp}");
    }
    m
}

#[test]
fn sarif_is_valid_stable_and_says_what_the_verdict_says() {
    let repo = Repo::new().with_trouble();
    let run = |out: &str| {
        let o = repo.run(&[
            "review",
            "--quiet",
            "--max-bytes",
            MAX_BYTES,
            "--format",
            "sarif",
            "--out",
            out,
            "--report-formats",
            "json,sarif",
            "specs",
        ]);
        assert_code(&o, 3);
        let read = |p: &str| -> Value {
            serde_json::from_slice(&std::fs::read(repo.path().join(out).join(p)).unwrap()).unwrap()
        };
        let file = read("summary.sarif");
        assert_eq!(json(&o), file, "--format sarif prints summary.sarif");
        file
    };
    let first = run("one");
    let second = run("two");
    let a = results(&first);
    let b = results(&second);
    assert!(!a.is_empty());
    assert_eq!(
        a, b,
        "fingerprints, rules, levels and locations are stable across runs"
    );

    let validator = sarif_validator();
    if let Some(v) = &validator {
        assert_valid_sarif(v, &first, "summary.sarif");
        // The validator is live: a level SARIF does not know is rejected.
        let mut bad = first.clone();
        bad["runs"][0]["results"][0]["level"] = "fatal".into();
        assert!(!v.is_valid(&bad));
        for spec in [
            "payments/webhooks",
            "platform/limits/rate-limits",
            "platform/glossary",
        ] {
            let doc: Value = serde_json::from_slice(
                &std::fs::read(repo.path().join("one").join(format!("{spec}.sarif"))).unwrap(),
            )
            .unwrap();
            assert_valid_sarif(v, &doc, spec);
        }
    }

    // Every concern of every verdict is one result, saying the same thing.
    let mut seen = 0;
    for spec in [
        "payments/webhooks",
        "platform/limits/rate-limits",
        "platform/glossary",
    ] {
        let verdict: Value = serde_json::from_slice(
            &std::fs::read(repo.path().join("one").join(format!("{spec}.json"))).unwrap(),
        )
        .unwrap();
        for c in verdict["concerns"].as_array().unwrap() {
            let uri = format!("specs/{spec}.md");
            let key = format!("{uri}#{}", c["fingerprint"].as_str().unwrap());
            let (rule, level, got_uri, line, suppression) =
                a.get(&key).unwrap_or_else(|| panic!("no result for {key}"));
            assert_eq!(
                rule,
                &format!("gauntlet/{}", c["adversary"].as_str().unwrap())
            );
            let want_level = match c["severity"].as_str().unwrap() {
                "high" => "error",
                "medium" => "warning",
                _ => "note",
            };
            assert_eq!(level, want_level);
            assert_eq!(got_uri, &uri, "relative to the repository root");
            assert_eq!(Some(*line), c["lines"][0].as_u64());
            let want = match c["status"].as_str().unwrap() {
                "dismissed" | "filtered" => Some("accepted"),
                "deferred" => Some("underReview"),
                _ => None,
            };
            assert_eq!(suppression.as_deref(), want, "{key}");
            seen += 1;
        }
    }
    assert_eq!(seen, a.len());
    assert!(
        a.values().any(|r| r.4.is_some()),
        "a dismissed concern is suppressed"
    );

    let run0 = &first["runs"][0];
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "gauntlet/paranoid_security",
            "gauntlet/burned_oncall",
            "gauntlet/lazy_developer",
            "gauntlet/pedantic_nitpicker",
            "gauntlet/asshole_loner"
        ]
    );
    assert!(
        run0["tool"]["driver"]["rules"][1]["shortDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("operational gaps")
    );
    // GitHub code scanning requires `help` on every rule (GH2012) and
    // wants the tool's `informationUri` (SARIF2005).
    for r in run0["tool"]["driver"]["rules"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        let adversary = id.trim_start_matches("gauntlet/");
        for kind in ["text", "markdown"] {
            let help = r["help"][kind].as_str().unwrap_or_default();
            assert!(help.contains("To resolve a result"), "{id} {kind}: {help}");
        }
        assert!(r["help"]["markdown"].as_str().unwrap().contains(adversary));
    }
    assert!(
        run0["tool"]["driver"]["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    assert_eq!(run0["properties"]["verdict"], "incomplete");
    assert_eq!(run0["invocations"][0]["executionSuccessful"], false);
    assert_eq!(
        run0["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn single_run_sarif_is_valid_and_relative_to_the_repository_root() {
    let repo = Repo::new();
    let spec = repo.specs().join("platform/limits/rate-limits.md");
    // Run from elsewhere: the URI still starts at the repository root.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .args(["--format", "sarif", spec.to_str().unwrap()])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    assert_code(&out, 1);
    let doc = json(&out);
    if let Some(v) = sarif_validator() {
        assert_valid_sarif(&v, &doc, "--format sarif");
    }
    let run0 = &doc["runs"][0];
    assert_eq!(run0["properties"]["verdict"], "revise");
    for r in run0["results"].as_array().unwrap() {
        assert_eq!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "specs/platform/limits/rate-limits.md"
        );
    }
    let dismissed: Vec<&Value> = run0["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["properties"]["status"] == "dismissed")
        .collect();
    assert!(!dismissed.is_empty());
    for r in dismissed {
        let s = &r["suppressions"][0];
        assert_eq!(s["kind"], "external");
        assert_eq!(s["status"], "accepted");
        assert!(
            s["justification"].as_str().unwrap().contains("offline/"),
            "{s}"
        );
    }

    // Standard input gets the placeholder URI. (Offline, with a store of
    // its own: never a real model, never this repository's store.)
    let store = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["--format", "sarif"])
        .env("GAUNTLET_OFFLINE", "1")
        .env("GAUNTLET_STORE_DIR", store.path())
        .stderr(std::process::Stdio::null())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&spec).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let doc = json(&out);
    assert_eq!(
        doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "stdin"
    );
}

/// The run flags are one declaration shared by both commands: with the same
/// flags, a review's per-spec verdict is the single run's verdict, and the
/// flags change it (so they were not ignored by either command).
#[test]
fn shared_run_flags_change_a_review_as_they_change_a_single_run() {
    let repo = Repo::new();
    let spec = "specs/payments/webhooks.md";
    let flags = [
        "--adversaries",
        "burned_oncall,paranoid_security",
        "--no-rebuttals",
        "--batch-size",
        "2",
        "--fail-on",
        "high",
    ];
    let verdict_of_review = |extra: &[&str]| -> Value {
        let out_dir = tempfile::tempdir().unwrap();
        let out = out_dir.path().to_str().unwrap();
        let mut args = vec![
            "review",
            "--quiet",
            "--out",
            out,
            "--report-formats",
            "json",
        ];
        args.extend_from_slice(extra);
        args.push(spec);
        let o = repo.run(&args);
        assert!(o.status.code().is_some_and(|c| c < 2), "{o:?}");
        serde_json::from_slice(&std::fs::read(out_dir.path().join("webhooks.json")).unwrap())
            .unwrap()
    };
    let mut single_args = vec!["--format", "json"];
    single_args.extend_from_slice(&flags);
    single_args.push(spec);
    let single = json(&repo.run(&single_args));
    let review = verdict_of_review(&flags);
    assert_eq!(review["concerns"], single["concerns"]);
    assert_eq!(review["adversaries"], single["adversaries"]);
    assert_eq!(review["fail_on"], single["fail_on"]);
    assert_eq!(single["adversaries"].as_array().unwrap().len(), 2);
    assert_eq!(single["fail_on"], "high");
    assert_eq!(single["stats"]["rebuttal"]["dismissals"], 0);
    assert!(single["stats"]["evaluation"]["batches"].as_u64().unwrap() > 1);
    let plain = verdict_of_review(&[]);
    assert_ne!(plain["adversaries"], review["adversaries"]);
    assert_ne!(plain["concerns"], review["concerns"]);
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn reviewed(out: &Output) -> BTreeSet<String> {
    specs_of(&json(out)).into_iter().collect()
}

/// `--changed-since REF`: committed, uncommitted and untracked changes
/// since the merge base count; unchanged and deleted files do not; no
/// changed spec is a pass; not a repository or a bad revision is exit 2.
#[test]
fn changed_since_reviews_only_what_changed() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("SKIPPED: git is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = std::fs::read_to_string(fixtures().join("payments/webhooks.md")).unwrap();
    git(root, &["init", "-q"]);
    for name in ["a", "b", "c", "gone"] {
        write(&root.join(format!("specs/{name}.md")), spec.as_bytes());
    }
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "base"]);
    git(root, &["tag", "base"]);
    git(root, &["checkout", "-qb", "topic"]);
    write(
        &root.join("specs/b.md"),
        format!("{spec}\nEdited.\n").as_bytes(),
    );
    write(&root.join("specs/d.md"), spec.as_bytes());
    std::fs::remove_file(root.join("specs/gone.md")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "topic"]);
    // main moves on: its own changes are not the branch's.
    git(root, &["checkout", "-q", "main"]);
    write(
        &root.join("specs/a.md"),
        format!("{spec}\nOn main.\n").as_bytes(),
    );
    git(root, &["commit", "-qam", "main"]);
    git(root, &["checkout", "-q", "topic"]);
    write(
        &root.join("specs/c.md"),
        format!("{spec}\nUncommitted.\n").as_bytes(),
    );
    write(&root.join("specs/e.md"), spec.as_bytes());

    let run = |args: &[&str]| -> Output {
        let store = tempfile::tempdir().unwrap();
        Command::new(BIN)
            .args(args)
            .current_dir(root)
            .env("GAUNTLET_OFFLINE", "1")
            .env("GAUNTLET_STORE_DIR", store.path())
            .output()
            .unwrap()
    };
    let all = ["specs/b.md", "specs/c.md", "specs/d.md", "specs/e.md"];
    for reference in ["main", "base"] {
        let out = run(&[
            "review",
            "--format",
            "json",
            "--changed-since",
            reference,
            "specs",
        ]);
        assert_eq!(
            reviewed(&out),
            all.iter().map(|s| s.to_string()).collect(),
            "{reference}"
        );
    }
    let out = run(&[
        "review",
        "--format",
        "json",
        "--changed-since",
        "HEAD",
        "specs",
    ]);
    assert_eq!(
        reviewed(&out),
        ["specs/c.md", "specs/e.md"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // Nothing changed among the PATHs: a pass with an empty summary.
    let out = run(&[
        "review",
        "--format",
        "json",
        "--changed-since",
        "main",
        "specs/a.md",
    ]);
    assert_code(&out, 0);
    assert!(reviewed(&out).is_empty());

    for (args, why) in [
        (
            vec!["--changed-since", "no-such-branch"],
            "unknown git revision `no-such-branch`",
        ),
        (vec!["--changed-since=--output=x"], "is not a git revision"),
    ] {
        let mut full = vec!["review"];
        full.extend(args);
        full.push("specs");
        let out = run(&full);
        assert_code(&out, 2);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{out:?}"
        );
    }
    let elsewhere = tempfile::tempdir().unwrap();
    write(&elsewhere.path().join("s.md"), spec.as_bytes());
    let out = Command::new(BIN)
        .args(["review", "--changed-since", "main", "s.md"])
        .current_dir(elsewhere.path())
        .env("GAUNTLET_OFFLINE", "1")
        .env(
            "GIT_CEILING_DIRECTORIES",
            elsewhere.path().parent().unwrap(),
        )
        .output()
        .unwrap();
    assert_code(&out, 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"),
        "{out:?}"
    );
}
