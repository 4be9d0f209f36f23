//! The `gauntlet store ...` and `adversary-stats` commands, as functions over
//! a writer returning an exit code. Changes happen under the store lock and
//! are written atomically; nothing is written when a file could not be read.

use super::args::{
    AdversaryStatsArgs, ListFormat, LocationArgs, StatsFormat, StoreArgs, StoreCommand,
};
use super::confidence;
use super::location::{StorePaths, parse_now, parse_time};
use super::lock::StoreLock;
use super::resolved_store::{self, Entry};
use super::store_error::StoreError;
use crate::adversary_stats::{self, Leaderboard, StatsFile};
use crate::error::{Error, RunError, UsageError};
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use std::io::Write;

fn resolve(loc: &LocationArgs) -> Result<(StorePaths, DateTime<Utc>), Error> {
    let now = match loc.now.as_deref() {
        Some(s) => parse_now(s).map_err(UsageError::Invalid)?,
        None => Utc::now(),
    };
    let opts = super::StoreOptions {
        dir: loc.store_dir.clone(),
        now: Some(now),
        report: false,
    };
    Ok((opts.paths()?, now))
}

fn io(e: std::io::Error) -> Error {
    RunError::Write {
        path: "<stdout>".to_string(),
        source: e,
    }
    .into()
}

pub fn run_store(args: &StoreArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let (paths, now) = resolve(&args.location)?;
    match &args.command {
        StoreCommand::List { format } => list(&paths, now, *format, out),
        StoreCommand::Show { id, format } => show(&paths, now, id, *format, out),
        StoreCommand::Forget { id } => forget(&paths, id, out),
        StoreCommand::Prune { below, dry_run } => prune(&paths, now, *below, *dry_run, out),
        StoreCommand::Import { file } => import(&paths, now, file, out),
        StoreCommand::Check => check(&paths, out),
    }
}

fn short(s: &str, n: usize) -> String {
    let one_line = s.replace('\n', " / ");
    if one_line.chars().count() <= n {
        one_line
    } else {
        format!(
            "{}...",
            one_line
                .chars()
                .take(n.saturating_sub(3))
                .collect::<String>()
        )
    }
}

fn action_label(c: f64) -> &'static str {
    match confidence::action(c) {
        confidence::Action::Drop => "drop",
        confidence::Action::Note => "note",
        confidence::Action::Ignore => "ignore",
    }
}

fn entry_json(e: &Entry, now: DateTime<Utc>) -> serde_json::Value {
    let mut v = serde_json::to_value(e).expect("entry serializes");
    let c = e.confidence_at(now, None);
    v["current_confidence"] = serde_json::json!(c);
    v["action_same_spec"] = serde_json::json!(action_label(c));
    v
}

fn list(
    paths: &StorePaths,
    now: DateTime<Utc>,
    format: ListFormat,
    out: &mut dyn Write,
) -> Result<u8, Error> {
    let store = resolved_store::load(&paths.store())?;
    match format {
        ListFormat::Json => {
            let v: Vec<serde_json::Value> =
                store.concerns.iter().map(|e| entry_json(e, now)).collect();
            serde_json::to_writer_pretty(&mut *out, &v).map_err(|e| io(e.into()))?;
            writeln!(out).map_err(io)?;
        }
        ListFormat::Text => {
            writeln!(
                out,
                "{} in {}",
                crate::render::count(store.concerns.len() as u64, "entry"),
                paths.store().display()
            )
            .map_err(io)?;
            if !store.concerns.is_empty() {
                writeln!(
                    out,
                    "{:<16} {:<20} {:>5} {:>6} {:>7} {:>6}  Pattern",
                    "Id", "Adversary", "Base", "Now", "Matched", "Age"
                )
                .map_err(io)?;
            }
            for e in &store.concerns {
                let c = e.confidence_at(now, None);
                writeln!(
                    out,
                    "{:<16} {:<20} {:>5.2} {:>6.3} {:>7} {:>5.0}d  {}",
                    short(&e.id, 16),
                    short(&e.adversary, 20),
                    e.confidence,
                    c,
                    e.times_matched,
                    confidence::age_days(e.reference_time(), now),
                    short(&e.pattern, 60)
                )
                .map_err(io)?;
            }
        }
    }
    Ok(0)
}

fn show(
    paths: &StorePaths,
    now: DateTime<Utc>,
    id: &str,
    format: ListFormat,
    out: &mut dyn Write,
) -> Result<u8, Error> {
    let store = resolved_store::load(&paths.store())?;
    let e = &store.concerns[store.find(id)?];
    if format == ListFormat::Json {
        serde_json::to_writer_pretty(&mut *out, &entry_json(e, now)).map_err(|e| io(e.into()))?;
        writeln!(out).map_err(io)?;
        return Ok(0);
    }
    let c = e.confidence_at(now, None);
    let t = |x: Option<DateTime<Utc>>| x.map(|t| t.to_rfc3339()).unwrap_or_else(|| "-".to_string());
    let mut w = || -> std::io::Result<()> {
        writeln!(out, "id:            {}", e.id)?;
        writeln!(out, "adversary:     {}", e.adversary)?;
        writeln!(out, "pattern:       {}", e.pattern)?;
        writeln!(out, "added_at:      {}", e.added_at.to_rfc3339())?;
        writeln!(out, "verified_at:   {}", t(e.verified_at))?;
        writeln!(out, "last_matched:  {}", t(e.last_matched))?;
        writeln!(out, "times_matched: {}", e.times_matched)?;
        writeln!(
            out,
            "confidence:    {} base, {c} now on the same spec ({})",
            e.confidence,
            action_label(c)
        )?;
        writeln!(
            out,
            "               {} now if the spec changed",
            e.confidence_at(now, Some("\u{0}changed"))
        )?;
        writeln!(
            out,
            "spec_hash:     {}",
            e.spec_hash.as_deref().unwrap_or("-")
        )?;
        writeln!(
            out,
            "fingerprint:   {}",
            e.fingerprint.as_deref().unwrap_or("-")
        )?;
        writeln!(
            out,
            "concern_id:    {}",
            e.concern_id.as_deref().unwrap_or("-")
        )?;
        writeln!(
            out,
            "section:       {}",
            e.section.as_deref().unwrap_or("-")
        )?;
        writeln!(
            out,
            "evaluators:    {}",
            if e.evaluators.is_empty() {
                "-".to_string()
            } else {
                e.evaluators.join(", ")
            }
        )?;
        if let Some(s) = &e.source {
            writeln!(out, "source:        {s}")?;
        }
        writeln!(out, "explanation:")?;
        for line in e.explanation.lines() {
            writeln!(out, "  {line}")?;
        }
        Ok(())
    };
    w().map_err(io)?;
    Ok(0)
}

fn forget(paths: &StorePaths, id: &str, out: &mut dyn Write) -> Result<u8, Error> {
    let _lock = StoreLock::acquire(&paths.dir)?;
    let mut store = resolved_store::load(&paths.store())?;
    let i = store.find(id)?;
    let e = store.concerns.remove(i);
    resolved_store::save(&paths.store(), &store)?;
    writeln!(
        out,
        "forgot {} ({}: {})",
        e.id,
        e.adversary,
        short(&e.pattern, 60)
    )
    .map_err(io)?;
    Ok(0)
}

fn prune(
    paths: &StorePaths,
    now: DateTime<Utc>,
    below: f64,
    dry_run: bool,
    out: &mut dyn Write,
) -> Result<u8, Error> {
    if !(0.0..=1.0).contains(&below) {
        return Err(UsageError::Invalid(format!("--below {below} is not between 0 and 1")).into());
    }
    let lock = if dry_run {
        None
    } else {
        Some(StoreLock::acquire(&paths.dir)?)
    };
    let mut store = resolved_store::load(&paths.store())?;
    let (gone, kept): (Vec<Entry>, Vec<Entry>) = store
        .concerns
        .drain(..)
        .partition(|e| e.confidence_at(now, None) < below);
    for e in &gone {
        writeln!(
            out,
            "{} {} (confidence {:.3}): {}",
            if dry_run { "would prune" } else { "pruned" },
            e.id,
            e.confidence_at(now, None),
            short(&e.pattern, 60)
        )
        .map_err(io)?;
    }
    writeln!(
        out,
        "{} of {} entries {} below confidence {below}",
        gone.len(),
        gone.len() + kept.len(),
        if dry_run { "would be pruned" } else { "pruned" }
    )
    .map_err(io)?;
    if !dry_run && !gone.is_empty() {
        store.concerns = kept;
        store.last_updated = Some(now);
        resolved_store::save(&paths.store(), &store)?;
    }
    drop(lock);
    Ok(0)
}

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn import(
    paths: &StorePaths,
    now: DateTime<Utc>,
    file: &std::path::Path,
    out: &mut dyn Write,
) -> Result<u8, Error> {
    // A regular file of bounded size (a FIFO or /dev/zero is an error).
    let bytes = crate::fsutil::read_regular(
        file,
        crate::fsutil::MAX_STORE_FILE_BYTES,
        crate::fsutil::Links::Follow,
    )
    .map_err(|source| StoreError::read(file, source))?;
    let (entries, notes) = resolved_store::import(&bytes, file, now)?;
    let _lock = StoreLock::acquire(&paths.dir)?;
    let mut store = resolved_store::load(&paths.store())?;
    let mut ids: HashSet<String> = store.concerns.iter().map(|e| e.id.clone()).collect();
    let mut keys: HashSet<(String, String)> = store
        .concerns
        .iter()
        .map(|e| (e.adversary.clone(), norm(&e.pattern)))
        .collect();
    let (mut added, mut skipped) = (0, 0);
    for e in entries {
        let key = (e.adversary.clone(), norm(&e.pattern));
        if ids.contains(&e.id) || keys.contains(&key) {
            skipped += 1;
            continue;
        }
        ids.insert(e.id.clone());
        keys.insert(key);
        store.concerns.push(e);
        added += 1;
    }
    if added > 0 {
        store.last_updated = Some(now);
        resolved_store::save(&paths.store(), &store)?;
    }
    for n in notes {
        writeln!(out, "note: {n}").map_err(io)?;
    }
    writeln!(
        out,
        "imported {added} entries from {} ({skipped} already present) into {}",
        file.display(),
        paths.store().display()
    )
    .map_err(io)?;
    Ok(0)
}

/// Problems in a loaded store that parsing alone does not catch.
pub fn problems(store: &resolved_store::StoreFile) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, e) in store.concerns.iter().enumerate() {
        let at = format!("entry {} ({})", i + 1, e.id);
        if e.id.trim().is_empty() {
            out.push(format!("entry {}: empty id", i + 1));
        } else if !seen.insert(e.id.as_str()) {
            out.push(format!("{at}: duplicate id"));
        }
        if !(0.0..=1.0).contains(&e.confidence) || e.confidence.is_nan() {
            out.push(format!("{at}: confidence {} is outside 0..1", e.confidence));
        }
        if e.pattern.trim().is_empty() {
            out.push(format!("{at}: empty pattern"));
        }
        if e.explanation.trim().is_empty() {
            out.push(format!("{at}: empty explanation"));
        }
        if e.adversary.trim().is_empty() {
            out.push(format!("{at}: empty adversary"));
        }
        if e.times_matched == u64::MAX {
            out.push(format!(
                "{at}: times_matched is {}, the largest value a count can hold",
                e.times_matched
            ));
        }
        if let Some(v) = e.verified_at
            && v < e.added_at
        {
            out.push(format!("{at}: verified_at is before added_at"));
        }
    }
    out
}

fn check(paths: &StorePaths, out: &mut dyn Write) -> Result<u8, Error> {
    let mut bad = 0;
    let say = |line: String, out: &mut dyn Write| writeln!(out, "{line}").map_err(io);
    match resolved_store::load(&paths.store()) {
        Ok(store) => {
            let p = problems(&store);
            bad += p.len();
            for x in &p {
                say(format!("problem: {}: {x}", paths.store().display()), out)?;
            }
            if p.is_empty() {
                say(
                    format!(
                        "ok: {} ({} entries)",
                        paths.store().display(),
                        store.concerns.len()
                    ),
                    out,
                )?;
            }
        }
        Err(e) => {
            bad += 1;
            say(format!("problem: {e}"), out)?;
        }
    }
    let stats = match adversary_stats::load(&paths.stats()) {
        Ok(s) => {
            let p = adversary_stats::problems(&s);
            bad += p.len();
            for x in &p {
                say(format!("problem: {}: {x}", paths.stats().display()), out)?;
            }
            if p.is_empty() {
                say(
                    format!("ok: {} ({} runs)", paths.stats().display(), s.total_runs),
                    out,
                )?;
            }
            Some(s)
        }
        Err(e) => {
            bad += 1;
            say(format!("problem: {e}"), out)?;
            None
        }
    };
    match adversary_stats::load_history(&paths.history()) {
        Ok((runs, notes)) => {
            for n in notes {
                say(format!("note: {n}"), out)?;
            }
            say(
                format!("ok: {} ({} runs)", paths.history().display(), runs.len()),
                out,
            )?;
            if let Some(s) = stats
                && s.total_runs != runs.len() as u64
            {
                say(
                    format!(
                        "note: the stats count {} runs and the history {}; a run was cut off between the two writes",
                        s.total_runs,
                        runs.len()
                    ),
                    out,
                )?;
            }
        }
        Err(e) => {
            bad += 1;
            say(format!("problem: {e}"), out)?;
        }
    }
    bad += check_concern_history(paths, out)?;
    Ok(if bad == 0 { 0 } else { 1 })
}

/// `store check` for the carry-forward history; returns the problems found.
fn check_concern_history(paths: &StorePaths, out: &mut dyn Write) -> Result<usize, Error> {
    let path = super::history::path(paths);
    let line = match super::history::load(&path) {
        Ok(h) => {
            let p = super::history::problems(&h);
            for x in &p {
                writeln!(out, "problem: {}: {x}", path.display()).map_err(io)?;
            }
            if !p.is_empty() {
                return Ok(p.len());
            }
            format!(
                "ok: {} ({} specs, {} concern timelines)",
                path.display(),
                h.specs.len(),
                h.concerns.len()
            )
        }
        Err(e) => {
            writeln!(out, "problem: {e}").map_err(io)?;
            return Ok(1);
        }
    };
    writeln!(out, "{line}").map_err(io)?;
    Ok(0)
}

pub fn run_adversary_stats(args: &AdversaryStatsArgs, out: &mut dyn Write) -> Result<u8, Error> {
    let (paths, _now) = resolve(&args.location)?;
    let since = match args.since.as_deref() {
        Some(s) => Some(parse_time(s).ok_or_else(|| {
            UsageError::Invalid(format!(
                "invalid --since `{s}`: expected a date like 2026-01-22"
            ))
        })?),
        None => None,
    };
    let stats = match since {
        None => adversary_stats::load(&paths.stats())?,
        Some(t) => {
            let (runs, _) = adversary_stats::load_history(&paths.history())?;
            StatsFile::from_runs(runs.iter().filter(|r| r.at >= t))
        }
    };
    let board = Leaderboard::new(&stats, since);
    let written = match args.format {
        StatsFormat::Text => adversary_stats::write_text(&board, out),
        StatsFormat::Json => adversary_stats::write_json(&board, out),
        StatsFormat::Markdown => adversary_stats::write_markdown(&board, out),
    };
    written.map_err(io)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_finds_what_parsing_does_not() {
        let bytes = br#"{"format_version": 1, "last_updated": null, "concerns": [
          {"id": "a", "pattern": "p", "explanation": "e", "adversary": "x", "added_at": "2026-01-02T00:00:00Z", "confidence": 0.9},
          {"id": "a", "pattern": " ", "explanation": "e", "adversary": "x", "added_at": "2026-01-02T00:00:00Z", "confidence": 1.5,
           "verified_at": "2026-01-01T00:00:00Z"}
        ]}"#;
        let store = resolved_store::parse(bytes, std::path::Path::new("s")).unwrap();
        let p = problems(&store);
        assert_eq!(
            p,
            vec![
                "entry 2 (a): duplicate id",
                "entry 2 (a): confidence 1.5 is outside 0..1",
                "entry 2 (a): empty pattern",
                "entry 2 (a): verified_at is before added_at",
            ]
        );
        assert!(problems(&resolved_store::StoreFile::default()).is_empty());
    }
}
