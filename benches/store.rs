//! Store benchmarks: the targets.
//! - self-filter: 100 new concerns against 100,000 stored entries (< 100 ms),
//! - load and save a 100,000-entry store (< 500 ms each),
//! - the stats update after a run with 100 adversaries x 10,000 runs of history (< 5 ms).
//! - carry-forward (issue 11): the self-filter of 100 concerns against 100,000
//!   entries plus a 100,000-timeline concern history (spec identity resolved
//!   first, as a run does), and recording one run in that history (< 100 ms).
//!
//! Run: `cargo bench --bench store`.

use chrono::{DateTime, Duration, Utc};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gauntlet::adversary_stats::{self, AdversaryCounts, ModelCounts, RunRecord, StatsFile};
use gauntlet::concern::{Concern, RawConcern, Severity};
use gauntlet::store::persist::{build_index, filter_concerns};
use gauntlet::store::resolved_store::{self, Entry, StoreFile};
use std::collections::BTreeMap;
use std::time::Duration as StdDuration;

/// CPU time of the calling thread (Linux `/proc/thread-self/stat`, utime +
/// stime). The machine these run on is shared; CPU time shows what the code
/// costs apart from waiting for a core. Only for single-threaded work.
fn thread_cpu() -> StdDuration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields after the comm: state is index 0, so utime (14th) is 11, stime 12.
    let ticks: u64 = f.get(11).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    StdDuration::from_millis(ticks * 10)
}

/// Runs `f` `iters` times and returns the thread CPU time it used.
fn cpu<O>(iters: u64, mut f: impl FnMut() -> O) -> StdDuration {
    let start = thread_cpu();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    thread_cpu() - start
}

const ADVERSARIES: [&str; 5] = [
    "paranoid_security",
    "burned_oncall",
    "lazy_developer",
    "pedantic_nitpicker",
    "asshole_loner",
];

const FAILURES: [&str; 24] = [
    "timeout",
    "retry",
    "backoff",
    "rate limiting",
    "validation",
    "encryption",
    "authentication",
    "authorization",
    "idempotency",
    "alerting",
    "pagination",
    "quota",
    "audit log",
    "rollback",
    "migration",
    "cache invalidation",
    "circuit breaker",
    "dead letter queue",
    "signature",
    "escaping",
    "overflow",
    "unicode handling",
    "clock skew",
    "race condition",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

/// Components named like real ones: 4,000 distinct names.
fn component(r: &mut Rng) -> String {
    const A: [&str; 40] = [
        "billing",
        "ledger",
        "payroll",
        "invoice",
        "export",
        "import",
        "search",
        "upload",
        "webhook",
        "session",
        "token",
        "report",
        "tenant",
        "catalog",
        "checkout",
        "refund",
        "shipping",
        "inventory",
        "pricing",
        "coupon",
        "profile",
        "avatar",
        "message",
        "notify",
        "schedule",
        "backup",
        "archive",
        "metrics",
        "audit",
        "gateway",
        "proxy",
        "queue",
        "worker",
        "cron",
        "cache",
        "index",
        "feed",
        "stream",
        "batch",
        "sync",
    ];
    const B: [&str; 10] = [
        "api", "service", "job", "endpoint", "table", "bucket", "topic", "client", "worker",
        "store",
    ];
    format!(
        "{} {} {}",
        A[r.next() % 40],
        A[r.next() % 40],
        B[r.next() % 10]
    )
}

fn title(r: &mut Rng) -> String {
    let f = FAILURES[r.next() % FAILURES.len()];
    match r.next() % 3 {
        0 => format!("No {f} on the {}", component(r)),
        1 => format!("The {} has no {f}", component(r)),
        _ => format!("Missing {f} for calls to the {}", component(r)),
    }
}

fn store(n: usize, now: DateTime<Utc>) -> StoreFile {
    let mut r = Rng(7);
    let concerns = (0..n)
        .map(|i| Entry {
            id: format!("rc-{i:012x}"),
            pattern: title(&mut r),
            explanation: format!(
                "offline/section: the spec states the safeguard in its section: line {} \"{}\".\noffline/document: the same line answers it.",
                r.next() % 400,
                "the worker sets a 10 second timeout and retries up to 3 times with backoff"
            ),
            adversary: ADVERSARIES[r.next() % 5].to_string(),
            added_at: now - Duration::days((r.next() % 60) as i64),
            confidence: 0.9,
            spec_hash: Some(format!("{:064x}", r.next())),
            times_matched: (r.next() % 5) as u64,
            last_matched: None,
            verified_at: None,
            fingerprint: Some(format!("{:064x}", i)),
            concern_id: Some(format!("BURN-{:08x}", i)),
            section: Some("Design".to_string()),
            evaluators: vec!["offline/section".to_string(), "offline/document".to_string()],
            spec: None,
            source: None,
        })
        .collect();
    StoreFile {
        format_version: 1,
        last_updated: Some(now),
        concerns,
    }
}

fn concerns(n: usize) -> Vec<Concern> {
    let mut r = Rng(99);
    (0..n)
        .map(|_| {
            let adv = ADVERSARIES[r.next() % 5];
            Concern::from_raw(
                adv,
                "ADV",
                RawConcern {
                    title: title(&mut r),
                    detail: "detail".to_string(),
                    severity: Severity::High,
                    lines: Some((1, 2)),
                    rule: None,
                    section: Some("Design".to_string()),
                    subject: vec![],
                    confidence: None,
                },
            )
        })
        .collect()
}

/// Full sizes under `cargo bench` (criterion gets `--bench`); small ones when
/// the test runner only checks that the benchmarks run, to keep it fast.
fn scale(full: usize) -> usize {
    if std::env::args().any(|a| a == "--bench") {
        full
    } else {
        full / 100
    }
}

fn bench_filter(c: &mut Criterion) {
    let now = DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let s = store(scale(100_000), now);
    let mut g = c.benchmark_group("store");
    g.sample_size(10);
    g.bench_function("index build, 100k entries", |b| b.iter(|| build_index(&s)));
    let mut index = build_index(&s);
    let batch = concerns(100);
    // How many of the 100 find a stored match (sanity: the work is real).
    let mut probe = batch.clone();
    let st = filter_concerns(&s, &mut index, "abc", "title:", now, &mut probe);
    let matched = probe.iter().filter(|c| c.filter.is_some()).count();
    eprintln!("filter: {matched} of 100 matched an entry; {st:?}");
    g.bench_function("filter 100 concerns vs 100k entries", |b| {
        b.iter_batched(
            || batch.clone(),
            |mut cs| filter_concerns(&s, &mut index, "abc", "title:", now, &mut cs),
            BatchSize::SmallInput,
        )
    });
    g.bench_function(
        "filter 100 concerns vs 100k entries, thread CPU time",
        |b| {
            b.iter_custom(|iters| {
                let mut total = StdDuration::ZERO;
                for _ in 0..iters {
                    let mut cs = batch.clone();
                    total += cpu(1, || {
                        filter_concerns(&s, &mut index, "abc", "title:", now, &mut cs)
                    });
                }
                total
            })
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resolved_concerns.json");
    resolved_store::save(&path, &s).unwrap();
    g.bench_function("load 100k-entry store, thread CPU time", |b| {
        b.iter_custom(|iters| cpu(iters, || resolved_store::load(&path).unwrap()))
    });
    eprintln!(
        "store file: {} bytes",
        std::fs::metadata(&path).unwrap().len()
    );
    g.bench_function("load 100k-entry store", |b| {
        b.iter(|| resolved_store::load(&path).unwrap())
    });
    g.bench_function("save 100k-entry store (atomic, fsync)", |b| {
        b.iter(|| resolved_store::save(&path, &s).unwrap())
    });
    g.finish();
}

fn run_record(r: &mut Rng, at: DateTime<Utc>, advs: &[String]) -> RunRecord {
    let mut adversaries = BTreeMap::new();
    for _ in 0..5 {
        let name = advs[r.next() % advs.len()].clone();
        let raised = (r.next() % 10) as u64;
        let accepted = raised / 3;
        adversaries.insert(
            name,
            AdversaryCounts {
                runs: 1,
                concerns_raised: raised,
                accepted,
                dismissed: raised - accepted,
                deferred: 0,
                filtered: 0,
                rebuttals_won: (r.next() % 2) as u64,
                rebuttals_lost: (r.next() % 2) as u64,
                finds: [(format!("rule-{}", r.next() % 40), accepted)]
                    .into_iter()
                    .collect(),
            },
        );
    }
    let models = [(
        "gemini-cli/gemini-3-flash-preview".to_string(),
        ModelCounts {
            role: "attack".to_string(),
            total_tokens: 12_000,
            total_cost: 0.0,
            runs: 1,
        },
    )]
    .into_iter()
    .collect();
    RunRecord {
        at,
        spec_sha256: "x".repeat(64),
        spec_path: Some("spec.md".to_string()),
        adversaries,
        models,
    }
}

fn bench_stats(c: &mut Criterion) {
    let t0 = DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let advs: Vec<String> = (0..100).map(|i| format!("adversary_{i:03}")).collect();
    let mut r = Rng(3);
    let history: Vec<RunRecord> = (0..scale(10_000))
        .map(|i| run_record(&mut r, t0 + Duration::minutes(i as i64), &advs))
        .collect();
    let stats = StatsFile::from_runs(&history);
    assert_eq!(stats.total_runs, scale(10_000) as u64);
    assert_eq!(stats.adversaries.len(), 100);
    let dir = tempfile::tempdir().unwrap();
    let stats_path = dir.path().join("adversary_stats.json");
    let history_path = dir.path().join("adversary_runs.jsonl");
    adversary_stats::save(&stats_path, &stats).unwrap();
    for h in &history {
        adversary_stats::append_history(&history_path, h).unwrap();
    }
    eprintln!(
        "stats file: {} bytes; history: {} bytes",
        std::fs::metadata(&stats_path).unwrap().len(),
        std::fs::metadata(&history_path).unwrap().len()
    );
    let run = run_record(&mut r, t0 + Duration::days(30), &advs);
    let mut g = c.benchmark_group("stats");
    g.bench_function("apply one run (in memory)", |b| {
        b.iter_batched(
            || stats.clone(),
            |mut s| {
                s.apply(&run);
                s
            },
            BatchSize::SmallInput,
        )
    });
    let bytes = std::fs::read(&stats_path).unwrap();
    g.bench_function("update after a run without disk, thread CPU time", |b| {
        b.iter_custom(|iters| {
            cpu(iters, || {
                let mut s: StatsFile = serde_json::from_slice(&bytes).unwrap();
                s.apply(&run);
                serde_json::to_vec_pretty(&s).unwrap()
            })
        })
    });
    g.bench_function(
        "update after a run without disk: parse, apply, serialize",
        |b| {
            b.iter(|| {
                let mut s: StatsFile = serde_json::from_slice(&bytes).unwrap();
                s.apply(&run);
                serde_json::to_vec_pretty(&s).unwrap()
            })
        },
    );
    g.bench_function(
        "update after a run: load, apply, save (fsync), append history (fsync)",
        |b| {
            b.iter(|| {
                let mut s = adversary_stats::load(&stats_path).unwrap();
                s.apply(&run);
                adversary_stats::save(&stats_path, &s).unwrap();
                adversary_stats::append_history(&history_path, &run).unwrap();
            })
        },
    );
    g.finish();
}

/// A concern history of `n` timelines over `n / 100` specs, two events each.
fn history(n: usize, now: DateTime<Utc>) -> gauntlet::store::history::HistoryFile {
    use gauntlet::carry_forward::{RunOutcome, TimelineEvent};
    use gauntlet::store::history::{HistoryFile, Timeline};
    use gauntlet::store::spec_identity::SpecRecord;
    let mut r = Rng(11);
    let specs = (n / 100).max(1);
    let mut file = HistoryFile::default();
    for i in 0..specs {
        file.specs.push(SpecRecord {
            key: format!("docs/spec-{i:05}.md"),
            paths: vec![format!("docs/spec-{i:05}.md")],
            sha256: format!("{:064x}", r.next()),
            sections: (0..12).map(|_| format!("{:016x}", r.next())).collect(),
            first_seen: now - Duration::days(30),
            last_seen: now - Duration::days(1),
            runs: 2,
        });
    }
    for i in 0..n {
        let spec = file.specs[i % specs].key.clone();
        file.concerns.push(Timeline {
            spec,
            fingerprint: format!("{:064x}", i),
            id: format!("BURN-{:08x}", i),
            adversary: ADVERSARIES[r.next() % 5].to_string(),
            title: title(&mut r),
            severity: Severity::High,
            events: vec![
                TimelineEvent {
                    at: now - Duration::days(2),
                    outcome: RunOutcome::Open,
                },
                TimelineEvent {
                    at: now - Duration::days(1),
                    outcome: if r.next().is_multiple_of(2) {
                        RunOutcome::Open
                    } else {
                        RunOutcome::Resolved
                    },
                },
            ],
        });
    }
    file
}

fn bench_history(c: &mut Criterion) {
    use gauntlet::concern::Status;
    use gauntlet::store::history;
    let now = DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let s = store(scale(100_000), now);
    let h = history(scale(100_000), now);
    let mut index = build_index(&s);
    let batch = concerns(100);
    // A spec the history knows by path (its first record's key).
    let spec = gauntlet::spec::Spec::parse(
        Some("docs/spec-00000.md".to_string()),
        "# Spec\n\n## Design\n\nThe billing api calls the ledger.\n".to_string(),
    );
    let mut g = c.benchmark_group("history");
    g.sample_size(10);
    g.bench_function(
        "filter 100 concerns vs 100k entries + 100k history timelines",
        |b| {
            b.iter_batched(
                || batch.clone(),
                |mut cs| {
                    let key = history::resolve(&h, &spec).key;
                    filter_concerns(&s, &mut index, "abc", &key, now, &mut cs)
                },
                BatchSize::SmallInput,
            )
        },
    );
    // Recording a run: 100 concerns, half open, against the same history.
    let mut cs = concerns(100);
    for (i, c) in cs.iter_mut().enumerate() {
        c.status = if i.is_multiple_of(2) {
            Status::Accepted
        } else {
            Status::Dismissed
        };
    }
    let verdict = gauntlet::verdict::Verdict {
        schema_version: 1,
        tool: gauntlet::verdict::ToolInfo {
            name: "gauntlet".into(),
            version: "0".into(),
        },
        spec: gauntlet::verdict::SpecInfo {
            path: spec.path.clone(),
            sha256: spec.sha256.clone(),
            bytes: spec.bytes(),
            lines: spec.lines.len(),
            title: None,
        },
        verdict: gauntlet::verdict::Outcome::Revise,
        fail_on: Severity::Low,
        adversaries: ADVERSARIES.iter().map(|a| a.to_string()).collect(),
        models: gauntlet::verdict::Models {
            attack: vec!["offline".into()],
            eval: vec![],
            final_boss: None,
        },
        concerns: cs,
        final_boss: None,
        stats: Default::default(),
        warnings: vec![],
        nuances: None,
        complexity: None,
        memory: Default::default(),
    };
    g.bench_function(
        "carry-forward: record 100 concerns in 100k timelines",
        |b| {
            b.iter_batched(
                || h.clone(),
                |mut f| history::apply(&mut f, &spec, &verdict, now),
                BatchSize::LargeInput,
            )
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(history::FILE);
    history::save(&path, &h).unwrap();
    eprintln!(
        "history file: {} bytes for {} timelines over {} specs",
        std::fs::metadata(&path).unwrap().len(),
        h.concerns.len(),
        h.specs.len()
    );
    g.bench_function("load 100k-timeline history", |b| {
        b.iter(|| history::load(&path).unwrap())
    });
    g.bench_function("save 100k-timeline history (atomic, fsync)", |b| {
        b.iter(|| history::save(&path, &h).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_filter, bench_stats, bench_history);
criterion_main!(benches);
