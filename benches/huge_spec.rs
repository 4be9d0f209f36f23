//! Linear time on huge input (issue 12): a whole offline run on a
//! generated 10 MB spec whose one section is dense with trigger hits,
//! safeguards, blanket policies and hidden Markdown (the shape that was
//! quadratic). Target: under 2 s per run in release. A 2.5 MB run is timed
//! beside it, so the ratio shows the growth (about 4x for linear).

use criterion::{Criterion, criterion_group, criterion_main};
use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::{Gauntlet, RunOptions};
use gauntlet::spec::Spec;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

const LINES: &[&str] = &[
    "The worker calls the Billing API for invoice {i} and retries immediately.",
    "- Every request to `POST /api/items/{i}` is stored in a local queue that grows.",
    "Failures are logged and ignored for job {i}; the cron job runs every 5 minutes.",
    "| step {i} | calls the Fraud API | 30 s timeout |",
    "Amounts are stored as float for order {i} in UTC and local time.",
    "[//]: # (comment {i} with a timeout and backoff)",
    "See ![alt text with a rate limit {i}](img.png) and [the retry doc](http://x/{i} \"title\").",
    "All calls to the Ledger API have a 2 s timeout.",
    "",
];

/// A spec of about `bytes` bytes: one section, the lines above repeated.
fn huge_spec(bytes: usize) -> String {
    let mut s = String::from("# Huge spec\n\n## Design\n\n");
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&LINES[i % LINES.len()].replace("{i}", &i.to_string()));
        s.push('\n');
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let catalog = Arc::new(Catalog::builtin().expect("built-in catalog"));
    let g = Gauntlet::offline(catalog, RunOptions::default(), true);
    let mut group = c.benchmark_group("huge spec");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for mb in [2.5f64, 10.0] {
        let text = huge_spec((mb * 1024.0 * 1024.0) as usize);
        group.bench_function(format!("whole offline run, {mb} MB"), |b| {
            b.iter(|| {
                let spec = Spec::parse(None, text.clone());
                black_box(g.run_blocking(&spec, &NoFilter, &|_| {}))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
