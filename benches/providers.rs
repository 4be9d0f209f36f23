//! Model-run benchmark against the local mock server (no network): five
//! attackers, two evaluators, 30 concerns, rebuttals on, 200 ms latency per
//! call. Prints wall time, sequential round trips, and calls and tokens per
//! phase, and the share of prompt text in a prefix identical to an earlier
//! call (what a provider's prompt cache serves), next to the target
//! (4 x 200 ms plus the same run at 0 ms latency).
//! Run: `cargo bench --bench providers`. The issue-13 workload (photo-upload
//! spec against benches/mock_llm.py, the real binary) is
//! `scripts/bench_mock.sh`.

#[path = "../tests/support/mock_llm.rs"]
mod mock_llm;

use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::RunOptions;
use gauntlet::provider::model_run::api_provider;
use gauntlet::provider::selection::SystemProbe;
use gauntlet::provider::{ModelName, ModelRun, ModelSettings, ProviderKind};
use gauntlet::spec::Spec;
use mock_llm::{Api, Kind, MockServer, Reply};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CONCERNS_PER_PERSONA: usize = 6;

fn spec_text() -> String {
    let mut s = String::from("# Payments webhook service\n\n");
    for i in 1..=12 {
        s.push_str(&format!(
            "## Section {i}\n\nThe service handles step {i} of the flow, stores results in Postgres and calls the vendor API.\n\n"
        ));
    }
    s
}

fn reply(prompt: &str) -> String {
    match mock_llm::kind(prompt) {
        Kind::Attack => {
            let p = mock_llm::persona(prompt);
            let items: Vec<String> = (0..CONCERNS_PER_PERSONA)
                .map(|i| {
                    format!(
                        r#"{{"title": "{p} concern {i}", "detail": "detail {i}", "severity": "{}", "lines": [{}, {}]}}"#,
                        if i.is_multiple_of(3) { "high" } else { "medium" },
                        3 + i * 4,
                        4 + i * 4
                    )
                })
                .collect();
            format!(r#"{{"concerns": [{}]}}"#, items.join(", "))
        }
        Kind::Eval => {
            let votes: Vec<String> = mock_llm::concerns(prompt)
                .iter()
                .map(|(id, title)| {
                    let n: usize = title.rsplit(' ').next().and_then(|d| d.parse().ok()).unwrap_or(0);
                    let d = if n.is_multiple_of(2) { "accept" } else { "dismiss" };
                    format!(r#"{{"id": "{id}", "decision": "{d}", "reasoning": "see line 7", "cites": [7]}}"#)
                })
                .collect();
            format!(r#"{{"votes": [{}]}}"#, votes.join(", "))
        }
        Kind::Rebuttal => mock_llm::rebuttal_concerns(prompt)
            .iter()
            .map(|(id, title)| {
                if title.ends_with(" 1") {
                    format!("[{id}] CHALLENGED: line 7 does not address it.")
                } else {
                    format!("[{id}] ACCEPTED: fair.")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Kind::Adjudicate => {
            let decisions: Vec<String> = mock_llm::adjudication_concerns(prompt)
                .iter()
                .map(|(id, _)| {
                    format!(r#"{{"id": "{id}", "outcome": "overturned", "reasoning": "line 7 is silent"}}"#)
                })
                .collect();
            format!(r#"{{"decisions": [{}]}}"#, decisions.join(", "))
        }
        _ => r#"{"verdict": "PASS", "findings": []}"#.into(),
    }
}

struct Measured {
    wall: Duration,
    rounds: usize,
    /// Share of prompt characters in a prefix identical to an earlier call.
    cached_share: f64,
    per_phase: BTreeMap<&'static str, (u64, u64, u64)>,
    statuses: BTreeMap<String, usize>,
}

fn phase_name(k: Kind) -> &'static str {
    match k {
        Kind::Attack => "1 attack",
        Kind::Eval => "2 evaluation",
        Kind::Rebuttal => "3 rebuttal",
        Kind::Adjudicate => "4 adjudication",
        Kind::FinalBoss => "5 final boss",
        Kind::Unknown => "? unknown",
    }
}

fn measure(rt: &tokio::runtime::Runtime, latency: Duration, max_concurrency: u32) -> Measured {
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::new(Mutex::new(Vec::new()));
    let a = arrivals.clone();
    let server = rt.block_on(MockServer::start(Api::OpenAi, move |r, _| {
        a.lock().unwrap().push(Instant::now());
        Reply::Delay(latency, Box::new(Reply::Text(reply(&r.prompt))))
    }));
    let kind = ProviderKind::OpenAiCompatible;
    let settings = ModelSettings {
        attack: ModelName::new(kind, "attacker"),
        eval: vec![
            ModelName::new(kind, "eval-a"),
            ModelName::new(kind, "eval-b"),
        ],
        final_boss: ModelName::new(kind, "boss"),
        api_base: Some(server.base.clone()),
        max_concurrency,
        ..ModelSettings::offline()
    };
    let run = ModelRun::new(settings);
    let base = server.base.clone();
    let g = run
        .gauntlet_with(
            Arc::new(Catalog::builtin().unwrap()),
            RunOptions::default(),
            false,
            &SystemProbe,
            &mut |m, _| Ok(api_provider(m, None, Some(base.clone()), 120)),
        )
        .unwrap();
    let spec = Spec::parse(None, spec_text());
    let t = Instant::now();
    let v = rt.block_on(g.run(&spec, &NoFilter, &|_| {}));
    let wall = t.elapsed();
    // Sequential round trips: the longest chain of calls where each one
    // starts after the previous one has been answered (arrival + latency).
    let mut times = arrivals.lock().unwrap().clone();
    times.sort();
    let mut chain: Vec<usize> = Vec::with_capacity(times.len());
    for (i, t) in times.iter().enumerate() {
        let before = (0..i)
            .filter(|&j| times[j] + latency.max(Duration::from_millis(1)) <= *t)
            .map(|j| chain[j])
            .max()
            .unwrap_or(0);
        chain.push(before + 1);
    }
    let rounds = chain.into_iter().max().unwrap_or(0);
    let requests = server.requests();
    let shared: usize = requests.iter().map(|r| r.shared_prefix).sum();
    let all: usize = requests.iter().map(|r| r.cache_key().chars().count()).sum();
    let cached_share = shared as f64 / all.max(1) as f64;
    let mut per_phase = BTreeMap::new();
    for r in requests {
        let e = per_phase
            .entry(phase_name(mock_llm::kind(&r.prompt)))
            .or_insert((0, 0, 0));
        e.0 += 1;
        e.1 += (r.body.len() / 4) as u64;
        e.2 += (reply(&r.prompt).len() / 4) as u64;
    }
    let mut statuses = BTreeMap::new();
    for c in &v.concerns {
        *statuses.entry(c.status.as_str().to_string()).or_default() += 1;
    }
    Measured {
        wall,
        rounds,
        cached_share,
        per_phase,
        statuses,
    }
}

fn main() {
    // `cargo bench` passes --bench; test runners (`cargo test`, nextest's
    // --list) do not, and this takes seconds of wall time: skip.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let runs = 3;
    for concurrency in [32u32, 8] {
        let mut base = Vec::new();
        let mut slow = Vec::new();
        let mut last = None;
        for _ in 0..runs {
            base.push(measure(&rt, Duration::ZERO, concurrency).wall);
            let m = measure(&rt, Duration::from_millis(200), concurrency);
            slow.push(m.wall);
            last = Some(m);
        }
        let m = last.unwrap();
        let median = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let (b, s) = (median(&mut base), median(&mut slow));
        let target = Duration::from_millis(800) + b;
        println!("== max concurrency {concurrency} per provider, {runs} runs, medians ==");
        println!(
            "offline work (same run, 0 ms latency): {:.0} ms",
            b.as_secs_f64() * 1000.0
        );
        println!(
            "wall time at 200 ms/call: {:.0} ms; target 4 x 200 ms + offline work = {:.0} ms; ratio {:.2}",
            s.as_secs_f64() * 1000.0,
            target.as_secs_f64() * 1000.0,
            s.as_secs_f64() / target.as_secs_f64()
        );
        println!("sequential round trips: {}", m.rounds);
        println!("cached-prefix share: {:.1}%", m.cached_share * 100.0);
        println!("statuses: {:?}", m.statuses);
        println!(
            "  {:<16} {:>6} {:>12} {:>12}",
            "phase", "calls", "input tok", "output tok"
        );
        for (phase, (calls, i, o)) in &m.per_phase {
            println!("  {phase:<16} {calls:>6} {i:>12} {o:>12}");
        }
        println!();
    }
}
