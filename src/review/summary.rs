//! The batch summary: one row per spec (worst first), totals, the summed
//! stats, and the exit code they imply; rendered as a text table, JSON
//! (`summary.json`, schema_version 1) or Markdown (`summary.md`). It only
//! describes results: it never runs or reads a spec.

use crate::concern::{Severity, Status};
use crate::render::Style;
use crate::stats::RunStats;
use crate::verdict::{Outcome, ToolInfo, Verdict};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

pub const SCHEMA_VERSION: u32 = 1;

/// How one spec came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RowVerdict {
    Pass,
    Revise,
    /// The run finished without a trustworthy verdict (a role failed).
    Incomplete,
    /// The spec could not be reviewed (unreadable, binary, too large, empty...).
    Error,
}

impl RowVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RowVerdict::Pass => "pass",
            RowVerdict::Revise => "revise",
            RowVerdict::Incomplete => "incomplete",
            RowVerdict::Error => "error",
        }
    }

    /// 0 is worst: specs nobody could review, then unfinished runs, then
    /// those needing revision, then passes.
    fn rank(self) -> u8 {
        match self {
            RowVerdict::Error => 0,
            RowVerdict::Incomplete => 1,
            RowVerdict::Revise => 2,
            RowVerdict::Pass => 3,
        }
    }
}

impl From<Outcome> for RowVerdict {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Pass => RowVerdict::Pass,
            Outcome::Revise => RowVerdict::Revise,
            Outcome::Incomplete => RowVerdict::Incomplete,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BySeverity {
    pub high: u64,
    pub medium: u64,
    pub low: u64,
}

impl BySeverity {
    pub fn total(&self) -> u64 {
        self.high + self.medium + self.low
    }
}

/// One spec in the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub spec: String,
    pub verdict: RowVerdict,
    /// Concerns that require revision (accepted or reinstated), by severity.
    pub requiring_revision: BySeverity,
    pub dismissed: u64,
    pub filtered: u64,
    pub deferred: u64,
    pub duration_ms: u64,
    /// Why the spec could not be reviewed, or what went wrong after (a
    /// report that could not be written, a store that could not be updated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Reports written under `--out`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<String>,
    #[serde(skip)]
    pub stats: RunStats,
}

impl Row {
    pub fn failed(spec: String, error: String, duration_ms: u64) -> Row {
        Row {
            spec,
            verdict: RowVerdict::Error,
            requiring_revision: BySeverity::default(),
            dismissed: 0,
            filtered: 0,
            deferred: 0,
            duration_ms,
            error: Some(error),
            warnings: Vec::new(),
            reports: Vec::new(),
            stats: RunStats::default(),
        }
    }

    pub fn from_verdict(spec: String, v: &Verdict, duration_ms: u64) -> Row {
        let mut r = Row::failed(spec, String::new(), duration_ms);
        r.error = None;
        r.verdict = v.verdict.into();
        for c in &v.concerns {
            match c.status {
                Status::Accepted | Status::Reinstated => match c.severity {
                    Severity::High => r.requiring_revision.high += 1,
                    Severity::Medium => r.requiring_revision.medium += 1,
                    Severity::Low => r.requiring_revision.low += 1,
                },
                Status::Dismissed => r.dismissed += 1,
                Status::Filtered => r.filtered += 1,
                Status::Deferred => r.deferred += 1,
                Status::Raised => {}
            }
        }
        r.warnings = v.warnings.clone();
        r.stats = v.stats.clone();
        r
    }

    /// The spec was reviewed but something after it failed: the row keeps
    /// its counts and counts as not reviewed for the exit code.
    pub fn fail_after(&mut self, error: String) {
        match &mut self.error {
            Some(e) => {
                e.push_str("; ");
                e.push_str(&error);
            }
            None => self.error = Some(error),
        }
    }

    /// True when this spec makes the batch exit 3.
    pub fn not_reviewed(&self) -> bool {
        self.error.is_some() || matches!(self.verdict, RowVerdict::Error | RowVerdict::Incomplete)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub specs: u64,
    pub pass: u64,
    pub revise: u64,
    pub incomplete: u64,
    pub error: u64,
    pub requiring_revision: BySeverity,
    pub dismissed: u64,
    pub filtered: u64,
    pub deferred: u64,
    /// Wall time of the whole batch.
    pub duration_ms: u64,
    /// Sum of the per-spec times (more than the wall time when specs run in parallel).
    pub spec_time_ms: u64,
}

/// The whole batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// pass, revise or incomplete (some spec was not reviewed).
    pub verdict: Outcome,
    pub exit_code: u8,
    pub fail_on: Severity,
    /// Worst first.
    pub specs: Vec<Row>,
    pub totals: Totals,
    /// Paths skipped on purpose (symlinks leading out of their folder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Every reviewed spec's stats, added up.
    pub stats: RunStats,
}

impl Summary {
    pub fn new(
        mut rows: Vec<Row>,
        fail_on: Severity,
        duration_ms: u64,
        skipped: Vec<String>,
    ) -> Summary {
        sort_worst_first(&mut rows);
        let mut totals = Totals {
            specs: rows.len() as u64,
            duration_ms,
            ..Totals::default()
        };
        let mut stats = RunStats::default();
        for r in &rows {
            match r.verdict {
                RowVerdict::Pass => totals.pass += 1,
                RowVerdict::Revise => totals.revise += 1,
                RowVerdict::Incomplete => totals.incomplete += 1,
                RowVerdict::Error => totals.error += 1,
            }
            totals.requiring_revision.high += r.requiring_revision.high;
            totals.requiring_revision.medium += r.requiring_revision.medium;
            totals.requiring_revision.low += r.requiring_revision.low;
            totals.dismissed += r.dismissed;
            totals.filtered += r.filtered;
            totals.deferred += r.deferred;
            totals.spec_time_ms += r.duration_ms;
            stats += &r.stats;
        }
        let (verdict, exit_code) = if rows.iter().any(Row::not_reviewed) {
            (Outcome::Incomplete, crate::exit_code::INCOMPLETE)
        } else if rows.iter().any(|r| r.verdict == RowVerdict::Revise) {
            (Outcome::Revise, crate::exit_code::REVISE)
        } else {
            (Outcome::Pass, crate::exit_code::PASS)
        };
        Summary {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "gauntlet".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            verdict,
            exit_code,
            fail_on,
            specs: rows,
            totals,
            skipped,
            stats,
        }
    }
}

/// Worst verdict first; then most high, medium, low concerns; then by path.
pub fn sort_worst_first(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        let key = |r: &Row| {
            (
                if r.error.is_some() {
                    0
                } else {
                    r.verdict.rank()
                },
                std::cmp::Reverse(r.requiring_revision.high),
                std::cmp::Reverse(r.requiring_revision.medium),
                std::cmp::Reverse(r.requiring_revision.low),
            )
        };
        key(a).cmp(&key(b)).then_with(|| a.spec.cmp(&b.spec))
    });
}

pub fn write_json(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, s)?;
    writeln!(out)
}

fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
}

fn totals_line(s: &Summary) -> String {
    let t = &s.totals;
    let mut parts = vec![];
    for (n, label) in [
        (t.error, "error"),
        (t.incomplete, "incomplete"),
        (t.revise, "revise"),
        (t.pass, "pass"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    format!(
        "{} spec(s): {}; requiring revision: {} high, {} medium, {} low; {} dismissed, {} filtered, {} deferred; {} wall",
        t.specs,
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        },
        t.requiring_revision.high,
        t.requiring_revision.medium,
        t.requiring_revision.low,
        t.dismissed,
        t.filtered,
        t.deferred,
        duration(t.duration_ms)
    )
}

/// The table: spec, verdict, requiring revision by severity, dismissed,
/// filtered, duration; worst first; then totals.
pub fn write_text(s: &Summary, out: &mut dyn Write, style: Style) -> io::Result<()> {
    const HEAD: [&str; 8] = [
        "SPEC",
        "VERDICT",
        "HIGH",
        "MEDIUM",
        "LOW",
        "DISMISSED",
        "FILTERED",
        "TIME",
    ];
    let cells: Vec<[String; 8]> = s
        .specs
        .iter()
        .map(|r| {
            let reviewed = r.verdict != RowVerdict::Error;
            let n = |x: u64| {
                if reviewed {
                    x.to_string()
                } else {
                    "-".to_string()
                }
            };
            [
                r.spec.clone(),
                r.verdict.as_str().to_string(),
                n(r.requiring_revision.high),
                n(r.requiring_revision.medium),
                n(r.requiring_revision.low),
                n(r.dismissed),
                n(r.filtered),
                duration(r.duration_ms),
            ]
        })
        .collect();
    let mut width = HEAD.map(str::len);
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String; 8], verdict: Option<RowVerdict>| -> String {
        let mut s = String::new();
        for (i, (c, w)) in row.iter().zip(width).enumerate() {
            let pad = w - c.chars().count();
            let text = match (i, verdict) {
                (1, Some(v)) => style.outcome(c, v == RowVerdict::Pass),
                _ => c.clone(),
            };
            if i < 2 {
                s.push_str(&text);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(&text);
            }
            if i + 1 < row.len() {
                s.push_str("  ");
            }
        }
        s.trim_end().to_string()
    };
    writeln!(
        out,
        "{}",
        style.bold(&line(&HEAD.map(str::to_string), None))
    )?;
    for (r, row) in s.specs.iter().zip(&cells) {
        writeln!(out, "{}", line(row, Some(r.verdict)))?;
        if let Some(e) = &r.error {
            writeln!(out, "  error: {e}")?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", totals_line(s))?;
    for p in &s.skipped {
        writeln!(out, "skipped: {p}")?;
    }
    Ok(())
}

pub fn write_markdown(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    // Paths in code spans: no backtick to close the span, no control
    // characters, `|` escaped for the table (see `escape`).
    let cell = |x: &str| crate::escape::markdown_code(x).replace('|', "\\|");
    let badge = match s.verdict {
        Outcome::Pass => "✅ **PASS**",
        Outcome::Revise => "❌ **REVISE**",
        Outcome::Incomplete => "⚠️ **INCOMPLETE**",
    };
    writeln!(out, "## Adversarial Gauntlet: batch review")?;
    writeln!(out)?;
    writeln!(out, "{badge}: {}", totals_line(s))?;
    writeln!(out)?;
    writeln!(
        out,
        "| Spec | Verdict | High | Medium | Low | Dismissed | Filtered | Time |"
    )?;
    writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|")?;
    for r in &s.specs {
        let rr = &r.requiring_revision;
        writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            cell(&r.spec),
            r.verdict.as_str(),
            rr.high,
            rr.medium,
            rr.low,
            r.dismissed,
            r.filtered,
            duration(r.duration_ms)
        )?;
    }
    let errors: Vec<&Row> = s.specs.iter().filter(|r| r.error.is_some()).collect();
    if !errors.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Not reviewed")?;
        writeln!(out)?;
        for r in errors {
            writeln!(
                out,
                "- `{}`: {}",
                cell(&r.spec),
                crate::escape::markdown(r.error.as_deref().unwrap_or(""))
            )?;
        }
    }
    if !s.skipped.is_empty() {
        writeln!(out)?;
        for p in &s.skipped {
            writeln!(out, "- skipped `{}`", cell(p))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(spec: &str, v: RowVerdict, high: u64, medium: u64, low: u64) -> Row {
        let mut r = Row::failed(spec.into(), String::new(), 5);
        r.error = (v == RowVerdict::Error).then(|| "boom".to_string());
        r.verdict = v;
        r.requiring_revision = BySeverity { high, medium, low };
        r
    }

    #[test]
    fn worst_first_and_exit_codes() {
        let rows = vec![
            row("a.md", RowVerdict::Pass, 0, 0, 0),
            row("b.md", RowVerdict::Revise, 0, 3, 0),
            row("c.md", RowVerdict::Revise, 1, 0, 0),
            row("d.md", RowVerdict::Error, 0, 0, 0),
            row("e.md", RowVerdict::Revise, 1, 0, 2),
        ];
        let s = Summary::new(rows.clone(), Severity::Low, 10, vec![]);
        let order: Vec<&str> = s.specs.iter().map(|r| r.spec.as_str()).collect();
        assert_eq!(order, vec!["d.md", "e.md", "c.md", "b.md", "a.md"]);
        assert_eq!(s.exit_code, crate::exit_code::INCOMPLETE);
        assert_eq!(s.totals.error, 1);
        assert_eq!(s.totals.revise, 3);
        assert_eq!(
            s.totals.requiring_revision,
            BySeverity {
                high: 2,
                medium: 3,
                low: 2
            }
        );
        let s = Summary::new(rows[..3].to_vec(), Severity::Low, 10, vec![]);
        assert_eq!(s.exit_code, crate::exit_code::REVISE);
        let s = Summary::new(rows[..1].to_vec(), Severity::Low, 10, vec![]);
        assert_eq!(s.exit_code, crate::exit_code::PASS);
    }

    #[test]
    fn a_reviewed_spec_whose_report_failed_still_exits_3() {
        let mut r = row("a.md", RowVerdict::Pass, 0, 0, 0);
        r.fail_after("cannot write out/a.json".into());
        let s = Summary::new(vec![r], Severity::Low, 1, vec![]);
        assert_eq!(s.exit_code, crate::exit_code::INCOMPLETE);
        assert_eq!(s.specs[0].verdict, RowVerdict::Pass);
    }

    #[test]
    fn table_aligns_and_shows_errors() {
        let s = Summary::new(
            vec![
                row("docs/long-name.md", RowVerdict::Revise, 2, 1, 0),
                row("x.md", RowVerdict::Error, 0, 0, 0),
            ],
            Severity::Low,
            1500,
            vec![],
        );
        let mut out = Vec::new();
        write_text(&s, &mut out, Style::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("SPEC"));
        assert!(lines[1].starts_with("x.md "), "{text}");
        assert!(lines[1].contains(" error "));
        assert_eq!(lines[2], "  error: boom");
        assert!(lines[3].starts_with("docs/long-name.md  revise"));
        // Right-aligned numbers: the HIGH column ends where its header ends.
        let end = lines[0].find("HIGH").unwrap() + 4;
        assert_eq!(&lines[3][end - 1..end], "2");
        assert!(
            text.contains(
                "2 spec(s): 1 error, 1 revise; requiring revision: 2 high, 1 medium, 0 low"
            )
        );
        assert!(text.contains("1.50 s wall"));
    }
}
