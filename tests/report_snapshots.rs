//! Snapshots of the rendered reports, so a change of output is a reviewed
//! diff. Uses the fixed fixture rule pack and zeroes durations.

mod support;

use gauntlet::catalog::Catalog;
use gauntlet::filter::NoFilter;
use gauntlet::input::load_file;
use gauntlet::pipeline::{Gauntlet, RunOptions};
use gauntlet::render::{self, Style};
use std::sync::Arc;
use support::fixture;

fn verdict(spec: &str, final_boss: bool) -> gauntlet::verdict::Verdict {
    let catalog = Arc::new(Catalog::load(Some(&fixture("personas")), None).unwrap());
    let options = RunOptions {
        adversaries: vec!["lazy_developer".to_string()],
        ..RunOptions::default()
    };
    let g = Gauntlet::offline(catalog, options, final_boss);
    let mut loaded = load_file(&fixture(spec), 1 << 20).unwrap();
    loaded.spec.path = Some(format!("tests/fixtures/{spec}"));
    let mut v = g.run_blocking(&loaded.spec, &NoFilter, &|_| {});
    v.stats.duration_ms = Default::default();
    v
}

fn text(v: &gauntlet::verdict::Verdict) -> String {
    let mut out = Vec::new();
    render::text::write(v, &mut out, Style::default()).unwrap();
    String::from_utf8(out).unwrap()
}

fn markdown(v: &gauntlet::verdict::Verdict) -> String {
    let mut out = Vec::new();
    render::markdown::write(v, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn text_report_reinstated() {
    insta::assert_snapshot!(text(&verdict("off-topic.md", false)));
}

#[test]
fn text_report_with_final_boss() {
    insta::assert_snapshot!(text(&verdict("mixed.md", true)));
}

#[test]
fn markdown_report_reinstated() {
    insta::assert_snapshot!(markdown(&verdict("off-topic.md", false)));
}

#[test]
fn markdown_report_with_final_boss() {
    insta::assert_snapshot!(markdown(&verdict("mixed.md", true)));
}

#[test]
fn text_report_pass_says_what_was_checked() {
    insta::assert_snapshot!(text(&verdict("mitigated.md", false)));
}

#[test]
fn markdown_report_pass_says_what_was_checked() {
    insta::assert_snapshot!(markdown(&verdict("mitigated.md", false)));
}
