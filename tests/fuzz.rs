//! Property-based fuzzing (proptest) of what reads untrusted bytes: the
//! spec decoder and parser (and the offline engine over what they make),
//! and the store loaders (resolved concerns, stats, history, reference
//! import). Each property is: no panic, and errors that say where.
//!
//! Bounded so it runs in the normal `cargo test`: a fixed number of cases
//! per property (raise with `PROPTEST_CASES=N` for a longer session).
//! Inputs are mutants of real specs and store files (byte flips, cut
//! points, spliced Markdown and JSON tokens) as well as free text.

use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::{Gauntlet, RunOptions};
use gauntlet::spec::Spec;
use proptest::prelude::*;
use std::path::Path;
use std::sync::{Arc, LazyLock};

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

static SEEDS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    v.sort();
    v
});

static GAUNTLET: LazyLock<Gauntlet> = LazyLock::new(|| {
    Gauntlet::offline(
        Arc::new(Catalog::builtin().unwrap()),
        RunOptions::default(),
        true,
    )
});

/// Tokens that exercise the Markdown parser and the rule engine.
const MD_TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    "\r",
    "# ",
    "## Goals\n",
    "## Non-goals\n",
    "- ",
    "1. ",
    "> ",
    "```\n",
    "~~~",
    "| a | b |\n|---|---|\n",
    "<!-- ",
    " -->",
    "[//]: # (",
    ")",
    "![alt](x.png)",
    "[l](u \"t\")",
    "**",
    "_",
    "`",
    "\\",
    "\u{feff}",
    "\u{200b}",
    "\u{1b}[2J",
    "timeout",
    "retry",
    "30s",
    "10 req/s",
    "calls the Ledger API",
    "TODO",
    "TBD",
    "every 5 minutes",
    "\t",
    "    ",
    "é",
    "\u{202e}",
    "@team",
    "<script>",
    "&amp;",
];

/// A mutant of a seed: some byte edits and spliced tokens.
fn mutant() -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<usize>(), any::<u8>(), 0usize..4), 0..24);
    (0..SEEDS.len(), edits).prop_map(|(seed, edits)| {
        let mut b = SEEDS[seed].clone();
        for (at, byte, op) in edits {
            let at = if b.is_empty() { 0 } else { at % (b.len() + 1) };
            match op {
                0 => b.insert(at, byte),
                1 if at < b.len() => {
                    b.remove(at);
                }
                2 => {
                    let t = MD_TOKENS[byte as usize % MD_TOKENS.len()].as_bytes();
                    b.splice(at..at, t.iter().copied());
                }
                _ => b.truncate(at),
            }
        }
        b
    })
}

/// Free text made of Markdown tokens and arbitrary characters.
fn token_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(MD_TOKENS).prop_map(str::to_string),
            1 => any::<char>().prop_map(|c| c.to_string()),
            1 => "[a-zA-Z0-9 .,:;()]{0,40}",
        ],
        0..80,
    )
    .prop_map(|v| v.concat())
}

/// Structural invariants: every line belongs to a section whose range
/// holds it, sections are in bounds, and the section of any line is found.
fn check_spec(spec: &Spec) {
    let n = spec.lines.len();
    for s in &spec.sections {
        assert!(s.start <= s.end + 1, "section {}..{}", s.start, s.end);
        assert!(s.end <= n.max(1), "section ends at {} of {n} lines", s.end);
        if let Some(p) = s.parent {
            assert!(p < spec.sections.len());
        }
    }
    for i in 1..=n {
        let s = spec.section_of(i).expect("every line has a section");
        assert!(
            s.start <= i && i <= s.end.max(s.start),
            "line {i} outside {}..{}",
            s.start,
            s.end
        );
    }
    let _ = spec.title();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn decoder_and_parser_never_panic(bytes in prop_oneof![mutant(), token_text().prop_map(String::into_bytes)]) {
        match gauntlet::input::decode(Some("f.md".into()), bytes, "f.md") {
            Ok(loaded) => {
                check_spec(&loaded.spec);
                // Normalised: no CR survives decoding.
                prop_assert!(!loaded.spec.text.contains('\r'));
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains('\n'), "{msg}");
            }
        }
    }

    #[test]
    fn parser_takes_any_string(text in token_text()) {
        let spec = Spec::parse(None, text);
        check_spec(&spec);
    }
}

proptest! {
    // The whole offline engine per case: fewer cases.
    #![proptest_config(ProptestConfig { cases: cases(128), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn offline_engine_runs_on_any_spec(bytes in mutant()) {
        if let Ok(loaded) = gauntlet::input::decode(Some("f.md".into()), bytes, "f.md") {
            let v = GAUNTLET.run_blocking(&loaded.spec, &NoFilter, &|_| {});
            for c in &v.concerns {
                if let Some((a, b)) = c.lines {
                    prop_assert!(a >= 1 && a <= b && b <= loaded.spec.lines.len().max(1), "{:?}", c.lines);
                }
            }
        }
    }
}

const STORE: &str = r#"{
"format_version": 1,
"last_updated": "2026-01-02T00:00:00Z",
"concerns": [
{"id":"a1","pattern":"No timeout on the billing API","explanation":"e1: line 9 sets it","adversary":"burned_oncall","added_at":"2026-01-01T00:00:00Z","confidence":0.9,"spec_hash":"feed","times_matched":3,"fingerprint":"f","section":"Design","evaluators":["e1"],"spec":"docs/a.md"}
]
}
"#;

const STATS: &str = r#"{
  "format_version": 1,
  "last_updated": "2026-01-02T00:00:00Z",
  "total_runs": 2,
  "adversaries": {"burned_oncall": {"concerns_raised": 4, "accepted": 2, "dismissed": 1, "deferred": 0, "acceptance_rate": 0.5, "rebuttals_won": 0, "rebuttals_lost": 1, "notable_finds": [], "filtered": 1, "runs": 2, "finds": {"missing-timeout": 2}}},
  "models": {"offline": {"role": "attack+eval", "total_tokens": 0, "total_cost": 0.0, "runs": 2}}
}
"#;

const HISTORY: &str = "{\"at\":\"2026-01-02T00:00:00Z\",\"spec_sha256\":\"feed\",\"adversaries\":{\"burned_oncall\":{\"runs\":1,\"concerns_raised\":2,\"accepted\":1,\"dismissed\":1,\"deferred\":0,\"rebuttals_won\":0,\"rebuttals_lost\":0}},\"models\":{}}\n";

const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "1e999",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "0.5",
    "\"format_version\": 2",
    "\\u0000",
    "\n",
    "NaN",
    "true",
];

fn json_mutant(seed: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<usize>(), any::<u8>(), 0usize..4), 0..12);
    edits.prop_map(move |edits| {
        let mut b = seed.as_bytes().to_vec();
        for (at, byte, op) in edits {
            let at = at % (b.len() + 1);
            match op {
                0 => b.insert(at, byte),
                1 if at < b.len() => {
                    b.remove(at);
                }
                2 => {
                    let t = JSON_TOKENS[byte as usize % JSON_TOKENS.len()].as_bytes();
                    b.splice(at..at, t.iter().copied());
                }
                _ => b.truncate(at),
            }
        }
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn store_parser_never_panics(bytes in json_mutant(STORE)) {
        use gauntlet::store::StoreError;
        match gauntlet::store::resolved_store::parse(&bytes, Path::new("s.json")) {
            Ok(store) => {
                // Whatever parses can be checked and written back identically.
                let _ = gauntlet::store::commands::problems(&store);
                let again = gauntlet::store::resolved_store::to_bytes(&store);
                let reparsed = gauntlet::store::resolved_store::parse(&again, Path::new("s.json")).unwrap();
                prop_assert_eq!(reparsed.concerns.len(), store.concerns.len());
            }
            Err(StoreError::Corrupt { line, column, .. }) | Err(StoreError::UnknownVersion { line, column, .. }) => {
                prop_assert!(line >= 1 && column <= bytes.len() + 1);
            }
            Err(e) => prop_assert!(false, "unexpected error kind: {e}"),
        }
        let _ = gauntlet::store::resolved_store::import(&bytes, Path::new("ref.json"), chrono::Utc::now());
    }

    #[test]
    fn stats_and_history_loaders_never_panic(stats in json_mutant(STATS), history in json_mutant(HISTORY)) {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("adversary_stats.json");
        std::fs::write(&sp, &stats).unwrap();
        if let Ok(s) = gauntlet::adversary_stats::load(&sp) {
            let _ = gauntlet::adversary_stats::problems(&s);
            let board = gauntlet::adversary_stats::Leaderboard::new(&s, None);
            let mut out = Vec::new();
            gauntlet::adversary_stats::write_text(&board, &mut out).unwrap();
        }
        let hp = dir.path().join("adversary_runs.jsonl");
        let doubled = [history.as_slice(), HISTORY.as_bytes(), history.as_slice()].concat();
        std::fs::write(&hp, &doubled).unwrap();
        match gauntlet::adversary_stats::load_history(&hp) {
            Ok((runs, _)) => {
                let s = gauntlet::adversary_stats::StatsFile::from_runs(runs.iter());
                prop_assert!(gauntlet::adversary_stats::problems(&s).iter().all(|p| !p.contains("exceed total_runs")));
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
        }
    }
}
