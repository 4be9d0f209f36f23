//! Whole offline gauntlet run on the largest real spec (target: under 50 ms
//! per run in release), plus the attack phase and spec parsing alone.

mod data;

use criterion::{Criterion, criterion_group, criterion_main};
use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::{Gauntlet, RunOptions};
use gauntlet::spec::Spec;
use std::hint::black_box;
use std::sync::Arc;

fn bench(c: &mut Criterion) {
    let (name, text) = data::largest_spec();
    let catalog = Arc::new(Catalog::builtin().expect("built-in catalog"));
    let g = Gauntlet::offline(catalog.clone(), RunOptions::default(), true);
    let spec = Spec::parse(None, text.clone());

    let mut group = c.benchmark_group(format!("offline/{name} ({} KB)", text.len() / 1024));
    group.sample_size(30);
    group.bench_function("parse", |b| {
        b.iter(|| Spec::parse(None, black_box(text.clone())))
    });
    group.bench_function("attack", |b| {
        b.iter(|| {
            for p in catalog.personas.values().filter(|p| !p.is_final_boss) {
                black_box(gauntlet::offline::attacker::attack(&spec, p));
            }
        })
    });
    group.bench_function("whole run", |b| {
        b.iter(|| {
            let spec = Spec::parse(None, text.clone());
            black_box(g.run_blocking(&spec, &NoFilter, &|_| {}))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
