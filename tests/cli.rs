//! The `gauntlet` binary end to end: input errors, exit codes, formats,
//! stats JSON, rebuttals and the final boss. Specs come from
//! tests/fixtures; rule-dependent tests use the fixed fixture rule pack in
//! tests/fixtures/personas so they do not move when built-in rules are tuned.

mod support;

use support::{fixture, gauntlet};

fn fixture_run() -> support::Run {
    gauntlet()
        .arg("--personas-dir")
        .path(&fixture("personas"))
        .args(["--adversaries", "lazy_developer", "--format", "json"])
}

#[test]
fn help_lists_exit_codes_and_examples() {
    let out = gauntlet().arg("--help").run().code(0);
    for needle in [
        "Exit codes:",
        "0  pass",
        "1  revise",
        "2  usage",
        "3  the run",
        "Examples:",
        "--fail-on",
        "--final-boss",
    ] {
        assert!(out.stdout.contains(needle), "help lacks {needle}");
    }
}

/// Every bundled spec an example in `--help` names is in the repository.
#[test]
fn help_examples_name_files_that_exist() {
    for sub in [None, Some("review")] {
        let mut run = gauntlet();
        if let Some(s) = sub {
            run = run.arg(s);
        }
        let out = run.arg("--help").run().code(0);
        let examples = out
            .stdout
            .split("Examples:")
            .nth(1)
            .expect("an Examples section")
            .split("\n\n")
            .next()
            .unwrap();
        let mut named = 0;
        for word in examples.split_whitespace() {
            if word.starts_with("examples/") {
                named += 1;
                assert!(
                    support::root().join(word).is_file(),
                    "{word} does not exist"
                );
            }
        }
        if sub.is_none() {
            assert!(named > 0, "no example names a bundled spec:\n{examples}");
        }
    }
}

#[test]
fn version_prints_the_crate_version() {
    gauntlet()
        .arg("--version")
        .run()
        .code(0)
        .stdout_has(env!("CARGO_PKG_VERSION"));
}

#[test]
fn empty_stdin_is_a_usage_error() {
    gauntlet()
        .stdin("")
        .run()
        .one_line_error("standard input is empty");
    gauntlet()
        .stdin("  \n\n")
        .run()
        .one_line_error("standard input is empty");
}

#[test]
fn empty_file_missing_file_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.md");
    std::fs::write(&empty, "").unwrap();
    gauntlet().path(&empty).run().one_line_error("is empty");
    gauntlet()
        .path(&dir.path().join("nope.md"))
        .run()
        .one_line_error("not found");
    gauntlet()
        .path(dir.path())
        .run()
        .one_line_error("is a directory");
}

#[test]
fn binary_input_is_rejected() {
    gauntlet()
        .stdin(b"# Spec\n\0\x01\x02".to_vec())
        .run()
        .one_line_error("binary");
}

#[test]
fn oversized_input_is_rejected_from_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.md");
    std::fs::write(&big, "# Big\n".repeat(100)).unwrap();
    gauntlet()
        .args(["--max-bytes", "100"])
        .path(&big)
        .run()
        .one_line_error("over the 100-byte limit");
    gauntlet()
        .args(["--max-bytes", "100"])
        .stdin("# Big\n".repeat(100))
        .run()
        .one_line_error("over the 100-byte limit");
}

#[test]
fn invalid_utf8_is_decoded_with_a_warning() {
    let out = fixture_run()
        .stdin(b"# Spec\n\nWe frobnicate \xff widgets.\n".to_vec())
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);
    let v = out.json();
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("not valid UTF-8")
    );
}

#[test]
fn unknown_adversary_and_bad_flags_are_usage_errors() {
    gauntlet()
        .args(["--adversaries", "paranoid_security,nobody"])
        .stdin("# x\n")
        .run()
        .one_line_error("unknown adversary `nobody`");
    let out = gauntlet()
        .args(["--batch-size", "0"])
        .stdin("# x\n")
        .run()
        .code(2);
    assert!(out.stderr.contains("--batch-size"), "{}", out.stderr);
    gauntlet()
        .args(["--format", "yaml"])
        .stdin("# x\n")
        .run()
        .code(2);
}

#[test]
fn malformed_persona_file_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.toml"),
        "name = \"x\"\nprefix = \"X\"\n[[rules]\n",
    )
    .unwrap();
    gauntlet()
        .arg("--personas-dir")
        .path(dir.path())
        .stdin("# x\n")
        .run()
        .one_line_error("broken.toml, line 3");
}

#[test]
fn gap_is_accepted_and_exits_one() {
    let out = fixture_run().path(&fixture("gap.md")).run().code(1);
    let v = out.json();
    assert_eq!(v["verdict"], "revise");
    let cs = v["concerns"].as_array().unwrap();
    assert_eq!(cs.len(), 1);
    let c = &cs[0];
    assert_eq!(c["adversary"], "lazy_developer");
    assert_eq!(c["status"], "accepted");
    assert_eq!(c["lines"], serde_json::json!([5, 5]));
    assert!(c["id"].as_str().unwrap().starts_with("LAZY-"));
    assert!(c["detail"].as_str().unwrap().contains("Line 5"));
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("a guard on the frobnication")
    );
    assert_eq!(c["votes"].as_array().unwrap().len(), 3);
}

#[test]
fn mitigated_twin_is_dismissed_citing_the_line() {
    // The attacker looks only at the paragraph; put the guard in another one
    // so the attacker raises it and the evaluators must dismiss it.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.md");
    std::fs::write(
        &spec,
        "# W\n\n## Design\n\nThe Billing service calls the Ledger API to frobnicate each widget.\n\nThe Ledger API is guarded by a quota.\n",
    )
    .unwrap();
    let out = fixture_run().path(&spec).run().code(0);
    let v = out.json();
    assert_eq!(v["verdict"], "pass");
    let c = &v["concerns"][0];
    assert_eq!(c["status"], "dismissed");
    let dismissing: Vec<_> = c["votes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["decision"] == "dismiss")
        .collect();
    assert!(dismissing.len() >= 2, "{c}");
    for vote in dismissing {
        assert_eq!(vote["cites"], serde_json::json!([7]), "{vote}");
    }
    assert_eq!(c["rebuttal"]["outcome"], "accepted");
}

#[test]
fn safeguard_in_the_same_paragraph_is_dismissed_citing_it() {
    // The attacker raises it anyway; the lenient evaluators dismiss it with
    // line 6. The strict one accepts: lazy_developer's protocol also wants
    // the complexity justified in writing, and line 6 does not.
    let v = fixture_run()
        .path(&fixture("mitigated.md"))
        .run()
        .code(0)
        .json();
    assert_eq!(v["verdict"], "pass");
    let c = &v["concerns"][0];
    assert_eq!(c["status"], "dismissed", "{c}");
    let votes = c["votes"].as_array().unwrap();
    for vote in votes.iter().filter(|x| x["evaluator"] != "offline/strict") {
        assert_eq!(vote["decision"], "dismiss", "{vote}");
        assert_eq!(vote["cites"], serde_json::json!([6]), "{vote}");
    }
    let strict = votes.iter().find(|x| x["evaluator"] == "offline/strict");
    assert_eq!(strict.unwrap()["decision"], "accept");
}

#[test]
fn rebuttal_catches_evidence_about_something_else() {
    let v = fixture_run()
        .path(&fixture("off-topic.md"))
        .run()
        .code(1)
        .json();
    let c = &v["concerns"][0];
    assert_eq!(c["status"], "reinstated", "{c}");
    assert_eq!(c["rebuttal"]["outcome"], "challenged");
    assert!(
        c["rebuttal"]["reasoning"]
            .as_str()
            .unwrap()
            .contains("line 11"),
        "{c}"
    );
    assert_eq!(c["adjudication"]["outcome"], "overturned");
    assert_eq!(v["stats"]["rebuttal"]["challenges"], 1);
    assert_eq!(v["stats"]["rebuttal"]["sustained"], 1);
}

#[test]
fn no_rebuttals_lets_the_dismissal_stand() {
    let v = fixture_run()
        .arg("--no-rebuttals")
        .path(&fixture("off-topic.md"))
        .run()
        .code(0)
        .json();
    let c = &v["concerns"][0];
    assert_eq!(c["status"], "dismissed");
    assert!(c["rebuttal"].is_null());
    assert_eq!(v["stats"]["rebuttal"]["challenges"], 0);
}

#[test]
fn fail_on_sets_the_threshold() {
    // mixed.md: one medium concern is mitigated, one high (zap) survives.
    let v = fixture_run()
        .path(&fixture("mixed.md"))
        .run()
        .code(1)
        .json();
    let surviving: Vec<_> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "accepted")
        .collect();
    assert_eq!(surviving.len(), 1);
    assert_eq!(surviving[0]["severity"], "high");
    fixture_run()
        .args(["--fail-on", "high"])
        .path(&fixture("mixed.md"))
        .run()
        .code(1);
    // gap.md has only a medium concern: --fail-on high passes it.
    let v = fixture_run()
        .args(["--fail-on", "high"])
        .path(&fixture("gap.md"))
        .run()
        .code(0)
        .json();
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["stats"]["final"]["requiring_revision"], 1);
}

#[test]
fn json_output_matches_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(support::root().join("schema/verdict.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for spec in ["gap.md", "mixed.md", "off-topic.md"] {
        let out = fixture_run().arg("--final-boss").path(&fixture(spec)).run();
        let v = out.json();
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{spec}: {errors:?}");
    }
    // The built-in rule packs on the bundled example, too.
    let out = gauntlet()
        .args(["--format", "json"])
        .path(&support::root().join("examples/team-invites.md"))
        .run();
    let v = out.json();
    assert!(
        validator.is_valid(&v),
        "{:?}",
        validator
            .iter_errors(&v)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(v["adversaries"].as_array().unwrap().len(), 5);
    assert_eq!(v["models"]["eval"].as_array().unwrap().len(), 3);
}

#[test]
fn stdout_holds_exactly_one_json_object() {
    let out = fixture_run().path(&fixture("gap.md")).run();
    let mut stream =
        serde_json::Deserializer::from_str(&out.stdout).into_iter::<serde_json::Value>();
    assert!(stream.next().unwrap().is_ok());
    assert!(
        stream.next().is_none(),
        "more than one JSON value on stdout"
    );
}

#[test]
fn stats_json_is_the_verdicts_stats() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats.json");
    let v = fixture_run()
        .arg("--stats-json")
        .path(&stats)
        .path(&fixture("off-topic.md"))
        .run()
        .json();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(written, v["stats"]);
    assert_eq!(written["attack"]["per_adversary"]["lazy_developer"], 1);
    assert_eq!(written["evaluation"]["batches"], 1);
    assert_eq!(written["evaluation"]["dismissed"], 1);
    assert_eq!(written["models"]["attack:offline"]["cost_usd"], 0.0);
}

#[test]
fn batch_size_splits_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("many.md");
    let mut text = String::from("# Many\n");
    for i in 0..7 {
        // A different element in each part: one concern per gap would
        // merge seven findings on the same one.
        text.push_str(&format!(
            "\n## Part {i}\n\nWe frobnicate_part{i} `part{i}`.\n"
        ));
    }
    std::fs::write(&spec, text).unwrap();
    let v = fixture_run()
        .args(["--batch-size", "3"])
        .path(&spec)
        .run()
        .code(1)
        .json();
    assert_eq!(v["concerns"].as_array().unwrap().len(), 7);
    assert_eq!(v["stats"]["evaluation"]["batches"], 3);
    assert_eq!(v["stats"]["evaluation"]["evaluated"], 7);
}

#[test]
fn final_boss_reviews_the_user_story() {
    let v = fixture_run()
        .arg("--final-boss")
        .path(&fixture("mixed.md"))
        .run()
        .json();
    let fb = &v["final_boss"];
    assert!(
        ["PASS", "REFINE", "RECONSIDER"].contains(&fb["verdict"].as_str().unwrap()),
        "{fb}"
    );
    assert_eq!(v["models"]["final_boss"], "offline");
    // gap.md states no user problem at all: RECONSIDER.
    let v = fixture_run()
        .arg("--final-boss")
        .path(&fixture("gap.md"))
        .run()
        .json();
    assert_eq!(v["final_boss"]["verdict"], "RECONSIDER");
    assert!(
        v["final_boss"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "user_problem")
    );
    // Without the flag there is no final boss.
    let v = fixture_run().path(&fixture("gap.md")).run().json();
    assert!(v["final_boss"].is_null());
}

#[test]
fn text_and_markdown_name_surviving_concerns_with_lines() {
    let out = gauntlet()
        .arg("--personas-dir")
        .path(&fixture("personas"))
        .args(["--adversaries", "lazy_developer"])
        .path(&fixture("gap.md"))
        .run()
        .code(1);
    assert!(
        out.stdout
            .starts_with("=== Adversarial Gauntlet Report ===")
    );
    assert!(out.stdout.contains("[lazy_developer]"));
    assert!(out.stdout.contains("line 5"));
    assert!(out.stdout.contains("Final Verdict: REVISE"));
    assert!(out.stdout.contains("Cost: $0.00"));
    assert!(
        !out.stdout.contains('\x1b'),
        "no color when stdout is not a terminal"
    );
    let md = gauntlet()
        .arg("--personas-dir")
        .path(&fixture("personas"))
        .args(["--adversaries", "lazy_developer", "--format", "markdown"])
        .path(&fixture("gap.md"))
        .run()
        .code(1);
    assert!(
        md.stdout
            .starts_with("## Adversarial Gauntlet: Widget Service")
    );
    assert!(md.stdout.contains("| medium | lazy_developer | 5 |"));
}

#[test]
fn color_always_and_no_color() {
    let base = || {
        gauntlet()
            .arg("--personas-dir")
            .path(&fixture("personas"))
            .args(["--adversaries", "lazy_developer"])
            .path(&fixture("gap.md"))
    };
    assert!(
        base()
            .args(["--color", "always"])
            .run()
            .stdout
            .contains('\x1b')
    );
    assert!(!base().env("NO_COLOR", "1").run().stdout.contains('\x1b'));
}

#[test]
fn progress_goes_to_stderr_and_quiet_silences_it() {
    let out = fixture_run().path(&fixture("gap.md")).run();
    assert!(
        out.stderr.contains("gauntlet: attack: 1 raw concerns"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("gauntlet: evaluation:"),
        "{}",
        out.stderr
    );
    let quiet = fixture_run().arg("--quiet").path(&fixture("gap.md")).run();
    assert_eq!(quiet.stderr, "");
    assert_eq!(quiet.json()["verdict"], "revise");
}

#[test]
fn runs_are_deterministic() {
    let strip = |mut v: serde_json::Value| {
        v["stats"]["duration_ms"] = serde_json::Value::Null;
        v
    };
    let spec = support::root().join("examples/team-invites.md");
    let a = strip(
        gauntlet()
            .args(["--format", "json"])
            .path(&spec)
            .run()
            .json(),
    );
    let b = strip(
        gauntlet()
            .args(["--format", "json"])
            .path(&spec)
            .run()
            .json(),
    );
    assert_eq!(a, b);
}

#[test]
fn stdin_and_file_give_the_same_concerns() {
    let spec = support::root().join("examples/team-invites.md");
    let a = gauntlet()
        .args(["--format", "json"])
        .path(&spec)
        .run()
        .json();
    let b = gauntlet()
        .args(["--format", "json"])
        .stdin(std::fs::read(&spec).unwrap())
        .run()
        .json();
    assert_eq!(a["concerns"], b["concerns"]);
    assert!(b["spec"]["path"].is_null());
    assert_eq!(a["spec"]["sha256"], b["spec"]["sha256"]);
}

#[test]
fn one_gap_told_with_different_word_endings_is_one_concern() {
    // Built-in rules: three sections retry without backoff, in words that
    // differ only in their endings ("retried", "retries"): one gap.
    let spec = "# Sync\n\n## Pull\n\nThe agent pulls the catalog every hour. A failed pull is retried.\n\n## Push\n\nThe agent pushes orders to the warehouse and retries each failed push.\n\n## Cleanup\n\nThe cleanup step deletes old files. Failed deletes are retried.\n";
    let v = gauntlet()
        .args(["--format", "json", "--no-store"])
        .stdin(spec)
        .run()
        .json();
    let titles: Vec<&str> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["rule"] == "retry-backoff")
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 1, "{titles:?}");
}

/// `--report PATH`: one run gives JSON on stdout and the human report in a
/// file (Markdown or text by extension); a symlink is never written through.
#[test]
fn report_writes_the_human_report_beside_json_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let spec = fixture("gap.md");
    let md = dir.path().join("report.md");
    let out = fixture_run()
        .args(["--no-store", "--report"])
        .path(&md)
        .path(&spec)
        .run()
        .code(1);
    let v = out.json();
    let report = std::fs::read_to_string(&md).unwrap();
    assert!(report.starts_with("## Adversarial Gauntlet"), "{report}");
    let accepted: Vec<&str> = v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "accepted")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(!accepted.is_empty());
    for id in &accepted {
        assert!(report.contains(id), "the report lacks {id}");
    }

    let txt = dir.path().join("report.txt");
    fixture_run()
        .args(["--no-store", "--color", "always", "--report"])
        .path(&txt)
        .path(&spec)
        .run()
        .code(1);
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.contains("Adversarial Gauntlet Report"), "{text}");
    assert!(!text.contains('\u{1b}'), "a report file is never colored");

    let target = dir.path().join("victim.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    fixture_run()
        .args(["--no-store", "--report"])
        .path(&link)
        .path(&spec)
        .run()
        .code(2)
        .stderr_has("symlink");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

/// Completion scripts come from the clap definitions: every shell clap
/// supports, valid shell syntax where we can check it, and they know the
/// subcommands and the flags shared by a run and review.
#[test]
fn completions_know_the_commands_and_flags() {
    let bash = gauntlet().args(["completions", "bash"]).run().code(0);
    for needle in [
        "review",
        "explain",
        "--adversaries",
        "--report",
        "--fail-on",
    ] {
        assert!(
            bash.stdout.contains(needle),
            "bash completion lacks {needle}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("gauntlet.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    if let Ok(check) = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
    {
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    let zsh = gauntlet().args(["completions", "zsh"]).run().code(0);
    assert!(zsh.stdout.starts_with("#compdef gauntlet"));
    let fish = gauntlet().args(["completions", "fish"]).run().code(0);
    assert!(fish.stdout.contains("complete -c gauntlet"));
    for shell in ["elvish", "powershell"] {
        let out = gauntlet().args(["completions", shell]).run().code(0);
        assert!(out.stdout.contains("gauntlet"), "{shell}");
    }
    gauntlet().args(["completions", "tcsh"]).run().code(2);
}

#[test]
fn man_pages_for_gauntlet_and_each_command() {
    let top = gauntlet().arg("man").run().code(0);
    assert!(top.stdout.contains(".TH gauntlet 1"), "{}", top.stdout);
    assert!(top.stdout.contains("fail\\-on"));
    assert!(top.stdout.contains("review"));
    let review = gauntlet().args(["man", "review"]).run().code(0);
    assert!(
        review.stdout.contains(".TH gauntlet-review 1"),
        "{}",
        review.stdout
    );
    assert!(review.stdout.contains("report\\-formats"));
    gauntlet()
        .args(["man", "nosuch"])
        .run()
        .code(2)
        .stderr_has("no command `nosuch`");
}
