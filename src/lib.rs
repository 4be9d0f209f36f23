//! gauntlet: an adversarial review engine for software specs.
//!
//! A spec (Markdown) goes through the gauntlet: adversary personas attack it
//! (`offline::attacker` or a model provider behind `roles::Attacker`), the
//! self-filter drops concerns already resolved (`filter`), evaluators vote in
//! batches (`evaluation`), adversaries rebut dismissals and the first
//! evaluator adjudicates (`pipeline`), an optional final boss reviews the
//! user story, and a `verdict::Verdict` comes out, rendered by `render`.
//!
//! The library never prints: it returns values and emits `event::Event`s;
//! the binary renders them. See ARCHITECTURE.md for the code map.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod adversary_stats;
pub mod app;
pub mod ascii_first;
pub mod carry_forward;
pub mod catalog;
pub mod cli;
pub mod concern;
pub mod config;
pub mod error;
pub mod escape;
pub mod evaluation;
pub mod event;
pub mod exit_code;
pub mod explain;
pub mod filter;
pub mod fresh_eyes;
pub mod fsutil;
pub mod input;
pub mod keyword_scan;
pub mod level_cost;
pub mod nuance;
pub mod offline;
pub mod output_file;
pub mod per_spec;
pub mod persistence;
pub mod persona;
pub mod pipeline;
pub mod progress;
pub mod protocol;
pub mod provider;
pub mod quantity;
pub mod render;
pub mod responses;
pub mod review;
pub mod review_report;
pub mod roles;
pub mod rounds;
pub mod rule;
pub mod run_args;
pub mod runs;
pub mod shell_docs;
pub mod spec;
pub mod stats;
pub mod store;
pub mod suggest;
pub mod triage;
pub mod trigger_prefilter;
pub mod verdict;
