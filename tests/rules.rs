//! Every offline rule against specs written for it (`tests/rules/`): each
//! `NAME.gap.md` plants the flaw and must end with a surviving concern from
//! the right adversary and rule whose lines include the flawed line; each
//! `NAME.ok.md` states the safeguard and must not end with one; each
//! `NAME.trap.md` holds wording an earlier, broader trigger misread as the
//! design element (a unit in a field's name, a shell only mentioned) and
//! must not end with one either.
//!
//! The first line of each file says what is expected:
//! `<!-- expect: ADVERSARY RULE "text on the flawed line" -->` or
//! `<!-- expect-none: ADVERSARY RULE -->`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs every fixture once (four at a time) and keeps the verdicts.
fn verdicts() -> Vec<(PathBuf, String, Value)> {
    let files = fixtures();
    let chunks: Vec<&[PathBuf]> = files.chunks(files.len().div_ceil(4).max(1)).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|p| (p.clone(), std::fs::read_to_string(p).unwrap(), run_json(p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn run_json(spec: &Path) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["--format", "json", "--no-store", "-q"])
        .arg(spec)
        .output()
        .expect("run gauntlet");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{}: exit {code}: {}",
        spec.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON verdict")
}

struct Expectation {
    gap: bool,
    adversary: String,
    rule: String,
    marker: Option<String>,
}

fn expectation(text: &str) -> Expectation {
    let first = text.lines().next().unwrap_or_default();
    let body = first
        .trim()
        .strip_prefix("<!--")
        .and_then(|s| s.strip_suffix("-->"))
        .unwrap_or_else(|| panic!("no expectation comment: {first}"))
        .trim();
    let (kind, rest) = body.split_once(':').expect("kind: ...");
    let mut words = rest.trim().splitn(3, ' ');
    let adversary = words.next().unwrap().to_string();
    let rule = words.next().unwrap().to_string();
    let marker = words
        .next()
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty());
    Expectation {
        gap: kind.trim() == "expect",
        adversary,
        rule,
        marker,
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    v.sort();
    v
}

fn surviving<'a>(v: &'a Value, e: &Expectation) -> Vec<&'a Value> {
    v["concerns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["adversary"] == e.adversary.as_str()
                && c["rule"] == e.rule.as_str()
                && matches!(c["status"].as_str(), Some("accepted" | "reinstated"))
        })
        .collect()
}

#[test]
fn every_rule_catches_its_gap_and_spares_its_mitigated_twin() {
    let all = verdicts();
    assert!(
        all.len() >= 90,
        "expected gap/ok pairs, found {}",
        all.len()
    );
    let mut failures = Vec::new();
    for (path, text, v) in &all {
        let e = expectation(text);
        let found = surviving(v, &e);
        let name = path.file_name().unwrap().to_string_lossy();
        if e.gap {
            let marker = e.marker.as_deref().expect("gap files name the flawed line");
            let line = text
                .lines()
                .enumerate()
                .skip(1)
                .find(|(_, l)| l.to_lowercase().contains(&marker.to_lowercase()))
                .map(|(i, _)| i + 1)
                .unwrap_or_else(|| panic!("{name}: marker `{marker}` not in the spec"));
            let hit = found.iter().any(|c| {
                let a = c["lines"][0].as_u64().unwrap_or(0) as usize;
                let b = c["lines"][1].as_u64().unwrap_or(0) as usize;
                a <= line && line <= b
            });
            if !hit {
                failures.push(format!(
                    "{name}: no surviving {} `{}` concern covering line {line}",
                    e.adversary, e.rule
                ));
            }
            // What is missing and where: the detail names the lines; the
            // attacker says how sure it is, and the title reads as a title.
            for c in &found {
                let confidence = c["confidence"].as_f64().unwrap_or(-1.0);
                if !(0.0..=1.0).contains(&confidence) || confidence == 0.0 {
                    failures.push(format!("{name}: no confidence in (0, 1]: {c}"));
                }
                let title = c["title"].as_str().unwrap_or_default();
                if title.chars().next().is_none_or(|ch| ch.is_lowercase()) {
                    failures.push(format!("{name}: title starts in lower case: {title}"));
                }
                if let Some(why) = garbled(title) {
                    failures.push(format!("{name}: title {why}: {title}"));
                }
                let detail = c["detail"].as_str().unwrap_or_default();
                if !detail.contains("Line") {
                    failures.push(format!("{name}: detail does not cite lines: {detail}"));
                }
            }
        } else {
            if !found.is_empty() {
                failures.push(format!(
                    "{name}: mitigated, yet {} `{}` survives: {}",
                    e.adversary, e.rule, found[0]["detail"]
                ));
            }
            // A concern that was raised and dismissed cites the line that
            // handles it.
            for c in v["concerns"].as_array().unwrap() {
                if c["status"] != "dismissed" {
                    continue;
                }
                let cited = c["votes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|v| v["decision"] == "dismiss")
                    .all(|v| !v["cites"].as_array().unwrap().is_empty());
                if !cited {
                    failures.push(format!(
                        "{name}: {} dismissed without citing a line",
                        c["id"]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What is wrong with a title cut from the spec's text, if anything: a
/// parenthesis or code span the cut left open, a double space where text
/// was removed, an HTTP method without its path, a phrase where the
/// template wants a noun.
fn garbled(title: &str) -> Option<&'static str> {
    let mut depth = 0i32;
    for ch in title.chars() {
        depth += match ch {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return Some("closes a parenthesis it never opened");
        }
    }
    if depth != 0 {
        return Some("leaves a parenthesis open");
    }
    if title.matches('`').count() % 2 == 1 {
        return Some("leaves a code span open");
    }
    if title.contains("  ") {
        return Some("has a double space");
    }
    // A template that opens with the subject needs a noun there, not a
    // phrase such as "without sign-in" or an adjective.
    let first = title.split_whitespace().next().unwrap_or_default();
    if ["Without", "With", "Unauthenticated", "That", "Which"].contains(&first) {
        return Some("opens with a word that cannot be its subject");
    }
    let words: Vec<&str> = title.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let method = w.trim_matches(|c: char| !c.is_ascii_alphabetic());
        if ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method)
            && !words.get(i + 1).is_some_and(|next| {
                // "POST requests to the vendor" names the method as a kind.
                next.starts_with('/') || ["request", "requests", "call", "calls"].contains(next)
            })
        {
            return Some("names an HTTP method without its path");
        }
    }
    None
}
