//! Cumulative adversary statistics: `adversary_stats.json` (the seed's
//! schema: `last_updated`, `total_runs`, per adversary and per model sums),
//! the append-only run history `adversary_runs.jsonl` that `--since` reads,
//! and the leaderboard `gauntlet adversary-stats` prints.
//!
//! Counts are exact sums of `RunRecord`s, which are taken from verdicts: an
//! adversary that did not run (or whose attacker failed) adds nothing. Pure
//! values and renderers over writers; the caller holds the store lock for
//! updates (`store::persist`). Never prints.

use crate::concern::{AdjudicationOutcome, Status};
use crate::store::StoreError;
use crate::verdict::Verdict;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::AddAssign;
use std::path::Path;

pub const FORMAT_VERSION: u32 = 1;
/// Low performer: acceptance rate under this...
pub const LOW_ACCEPTANCE: f64 = 0.20;
/// ...with at least this many concerns raised.
pub const LOW_MIN_RAISED: u64 = 10;
/// Notable finds listed per adversary.
const NOTABLE: usize = 5;
/// Kinds of accepted concern counted per adversary (the most frequent kept).
const MAX_FINDS: usize = 50;

/// One adversary's counts, for one run or summed over many.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdversaryCounts {
    #[serde(default)]
    pub runs: u64,
    pub concerns_raised: u64,
    pub accepted: u64,
    pub dismissed: u64,
    pub deferred: u64,
    /// Dropped by the self-filter (never evaluated).
    #[serde(default)]
    pub filtered: u64,
    pub rebuttals_won: u64,
    pub rebuttals_lost: u64,
    /// Accepted concerns by kind (offline rule, else title): what
    /// `notable_finds` is made from.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub finds: BTreeMap<String, u64>,
}

impl AdversaryCounts {
    /// Accepted share of the concerns the evaluators saw (filtered ones were not seen).
    pub fn acceptance_rate(&self) -> f64 {
        let seen = self.concerns_raised.saturating_sub(self.filtered);
        if seen == 0 {
            0.0
        } else {
            self.accepted as f64 / seen as f64
        }
    }

    /// Won share of challenged dismissals, if any were challenged.
    pub fn rebuttal_win_rate(&self) -> Option<f64> {
        let n = self.rebuttals_won + self.rebuttals_lost;
        (n > 0).then(|| self.rebuttals_won as f64 / n as f64)
    }

    /// "missing-timeout (3 occurrences)", most frequent first.
    pub fn notable_finds(&self) -> Vec<String> {
        let mut v: Vec<(&String, &u64)> = self.finds.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.into_iter()
            .take(NOTABLE)
            .map(|(k, n)| format!("{k} ({n} occurrence{})", if *n == 1 { "" } else { "s" }))
            .collect()
    }
}

impl AddAssign<&AdversaryCounts> for AdversaryCounts {
    fn add_assign(&mut self, o: &AdversaryCounts) {
        self.runs = self.runs.saturating_add(o.runs);
        self.concerns_raised = self.concerns_raised.saturating_add(o.concerns_raised);
        self.accepted = self.accepted.saturating_add(o.accepted);
        self.dismissed = self.dismissed.saturating_add(o.dismissed);
        self.deferred = self.deferred.saturating_add(o.deferred);
        self.filtered = self.filtered.saturating_add(o.filtered);
        self.rebuttals_won = self.rebuttals_won.saturating_add(o.rebuttals_won);
        self.rebuttals_lost = self.rebuttals_lost.saturating_add(o.rebuttals_lost);
        for (k, n) in &o.finds {
            let e = self.finds.entry(k.clone()).or_default();
            *e = e.saturating_add(*n);
        }
        if self.finds.len() > MAX_FINDS {
            // Keep the file bounded: the rarest kinds go first (ties by name).
            let mut v: Vec<(String, u64)> = std::mem::take(&mut self.finds).into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            v.truncate(MAX_FINDS);
            self.finds = v.into_iter().collect();
        }
    }
}

/// One model's usage, for one run or summed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCounts {
    /// attack, eval, final_boss; `attack+eval` for a model in several roles.
    pub role: String,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub runs: u64,
}

impl AddAssign<&ModelCounts> for ModelCounts {
    fn add_assign(&mut self, o: &ModelCounts) {
        self.role = merge_roles(&self.role, &o.role);
        self.total_tokens = self.total_tokens.saturating_add(o.total_tokens);
        self.total_cost += o.total_cost;
        self.runs = self.runs.saturating_add(o.runs);
    }
}

fn merge_roles(a: &str, b: &str) -> String {
    let mut roles: Vec<&str> = a
        .split('+')
        .chain(b.split('+'))
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort_unstable();
    roles.dedup();
    roles.join("+")
}

/// What one run adds; also one line of the history file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub at: DateTime<Utc>,
    pub spec_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_path: Option<String>,
    pub adversaries: BTreeMap<String, AdversaryCounts>,
    pub models: BTreeMap<String, ModelCounts>,
}

impl RunRecord {
    pub fn from_verdict(verdict: &Verdict, at: DateTime<Utc>) -> RunRecord {
        let failed = &verdict.stats.attack.failed;
        let mut adversaries: BTreeMap<String, AdversaryCounts> = verdict
            .adversaries
            .iter()
            .filter(|a| !failed.contains(a))
            .map(|a| {
                (
                    a.clone(),
                    AdversaryCounts {
                        runs: 1,
                        ..AdversaryCounts::default()
                    },
                )
            })
            .collect();
        for c in &verdict.concerns {
            let Some(a) = adversaries.get_mut(&c.adversary) else {
                continue;
            };
            a.concerns_raised += 1;
            match c.status {
                Status::Accepted | Status::Reinstated => {
                    a.accepted += 1;
                    let kind = c.rule.clone().unwrap_or_else(|| c.title.clone());
                    *a.finds.entry(kind).or_default() += 1;
                }
                Status::Dismissed => a.dismissed += 1,
                Status::Deferred => a.deferred += 1,
                Status::Filtered => a.filtered += 1,
                Status::Raised => {}
            }
            match c.adjudication.as_ref().map(|j| j.outcome) {
                Some(AdjudicationOutcome::Overturned) => a.rebuttals_won += 1,
                Some(AdjudicationOutcome::Upheld) => a.rebuttals_lost += 1,
                None => {}
            }
        }
        let mut models: BTreeMap<String, ModelCounts> = BTreeMap::new();
        for (key, m) in &verdict.stats.models {
            let name = key.split_once(':').map_or(key.as_str(), |(_, n)| n);
            let e = models.entry(name.to_string()).or_default();
            e.role = merge_roles(&e.role, &m.role);
            e.total_tokens = e.total_tokens.saturating_add(m.tokens);
            e.total_cost += m.cost_usd;
            e.runs = 1;
        }
        RunRecord {
            at,
            spec_sha256: verdict.spec.sha256.clone(),
            spec_path: verdict.spec.path.clone(),
            adversaries,
            models,
        }
    }
}

/// One adversary in `adversary_stats.json`: the seed's fields, then ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdversaryEntry {
    pub concerns_raised: u64,
    pub accepted: u64,
    pub dismissed: u64,
    pub deferred: u64,
    pub acceptance_rate: f64,
    pub rebuttals_won: u64,
    pub rebuttals_lost: u64,
    pub notable_finds: Vec<String>,
    #[serde(default)]
    pub filtered: u64,
    #[serde(default)]
    pub runs: u64,
    #[serde(default)]
    pub finds: BTreeMap<String, u64>,
}

impl AdversaryEntry {
    fn counts(&self) -> AdversaryCounts {
        AdversaryCounts {
            runs: self.runs,
            concerns_raised: self.concerns_raised,
            accepted: self.accepted,
            dismissed: self.dismissed,
            deferred: self.deferred,
            filtered: self.filtered,
            rebuttals_won: self.rebuttals_won,
            rebuttals_lost: self.rebuttals_lost,
            finds: self.finds.clone(),
        }
    }

    fn from_counts(c: AdversaryCounts) -> AdversaryEntry {
        AdversaryEntry {
            concerns_raised: c.concerns_raised,
            accepted: c.accepted,
            dismissed: c.dismissed,
            deferred: c.deferred,
            acceptance_rate: (c.acceptance_rate() * 1e4).round() / 1e4,
            rebuttals_won: c.rebuttals_won,
            rebuttals_lost: c.rebuttals_lost,
            notable_finds: c.notable_finds(),
            filtered: c.filtered,
            runs: c.runs,
            finds: c.finds,
        }
    }
}

/// `adversary_stats.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsFile {
    pub format_version: u32,
    pub last_updated: Option<DateTime<Utc>>,
    pub total_runs: u64,
    pub adversaries: BTreeMap<String, AdversaryEntry>,
    pub models: BTreeMap<String, ModelCounts>,
}

impl Default for StatsFile {
    fn default() -> Self {
        StatsFile {
            format_version: FORMAT_VERSION,
            last_updated: None,
            total_runs: 0,
            adversaries: BTreeMap::new(),
            models: BTreeMap::new(),
        }
    }
}

impl StatsFile {
    /// Adds one run. O(adversaries + models in the run).
    pub fn apply(&mut self, run: &RunRecord) {
        self.total_runs = self.total_runs.saturating_add(1);
        self.last_updated = Some(run.at);
        // A record is one run: whatever an edited file says, an adversary or
        // a model in it took part once.
        for (name, c) in &run.adversaries {
            let e = self.adversaries.entry(name.clone()).or_default();
            let mut sum = e.counts();
            sum += &AdversaryCounts {
                runs: c.runs.min(1),
                ..c.clone()
            };
            *e = AdversaryEntry::from_counts(sum);
        }
        for (name, m) in &run.models {
            *self.models.entry(name.clone()).or_default() += &ModelCounts {
                runs: m.runs.min(1),
                ..m.clone()
            };
        }
    }

    /// Sums of a history.
    pub fn from_runs<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> StatsFile {
        let mut s = StatsFile::default();
        for r in runs {
            s.apply(r);
        }
        s
    }
}

/// Values no sequence of runs can produce: what `store check` reports.
/// Counts only grow by whole runs (saturating at `u64::MAX`), so a counter
/// at the limit, or parts that add up to more than their whole, mean the
/// file was edited or damaged.
pub fn problems(stats: &StatsFile) -> Vec<String> {
    let mut out = Vec::new();
    let limit = |what: &str, v: u64, out: &mut Vec<String>| {
        if v == u64::MAX {
            out.push(format!("{what} is {v}, the largest value a count can hold"));
        }
    };
    limit("total_runs", stats.total_runs, &mut out);
    for (name, a) in &stats.adversaries {
        let at = format!("adversary {name}");
        for (field, v) in [
            ("concerns_raised", a.concerns_raised),
            ("accepted", a.accepted),
            ("dismissed", a.dismissed),
            ("deferred", a.deferred),
            ("filtered", a.filtered),
            ("rebuttals_won", a.rebuttals_won),
            ("rebuttals_lost", a.rebuttals_lost),
            ("runs", a.runs),
        ] {
            limit(&format!("{at}: {field}"), v, &mut out);
        }
        let parts = [a.accepted, a.dismissed, a.deferred, a.filtered]
            .iter()
            .try_fold(0u64, |s, &v| s.checked_add(v));
        if parts.is_none_or(|p| p > a.concerns_raised) {
            out.push(format!(
                "{at}: accepted + dismissed + deferred + filtered ({}) exceed concerns_raised ({})",
                parts.map_or("overflow".to_string(), |p| p.to_string()),
                a.concerns_raised
            ));
        }
        if a.rebuttals_won > a.accepted {
            out.push(format!(
                "{at}: rebuttals_won ({}) exceed accepted ({})",
                a.rebuttals_won, a.accepted
            ));
        }
        if a.rebuttals_lost > a.dismissed {
            out.push(format!(
                "{at}: rebuttals_lost ({}) exceed dismissed ({})",
                a.rebuttals_lost, a.dismissed
            ));
        }
        if a.runs > stats.total_runs {
            out.push(format!(
                "{at}: runs ({}) exceed total_runs ({})",
                a.runs, stats.total_runs
            ));
        }
        if !(0.0..=1.0).contains(&a.acceptance_rate) {
            out.push(format!(
                "{at}: acceptance_rate {} is outside 0..1",
                a.acceptance_rate
            ));
        }
    }
    for (name, m) in &stats.models {
        let at = format!("model {name}");
        limit(&format!("{at}: total_tokens"), m.total_tokens, &mut out);
        limit(&format!("{at}: runs"), m.runs, &mut out);
        if m.runs > stats.total_runs {
            out.push(format!(
                "{at}: runs ({}) exceed total_runs ({})",
                m.runs, stats.total_runs
            ));
        }
        if !(m.total_cost >= 0.0 && m.total_cost.is_finite()) {
            out.push(format!("{at}: total_cost {} is not a cost", m.total_cost));
        }
    }
    out
}

/// Reads `adversary_stats.json`; missing is empty.
pub fn load(path: &Path) -> Result<StatsFile, StoreError> {
    let bytes = match crate::store::resolved_store::read_store_file(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(StatsFile::default()),
        Err(source) => return Err(StoreError::read(path, source)),
    };
    match serde_json::from_slice::<StatsFile>(&bytes) {
        Ok(s) if s.format_version == FORMAT_VERSION => Ok(s),
        Ok(s) => Err(crate::store::resolved_store::version_error(
            &bytes,
            path,
            s.format_version.to_string(),
        )),
        Err(e) => {
            #[derive(Deserialize)]
            struct Probe {
                format_version: Option<serde_json::Value>,
            }
            if let Ok(p) = serde_json::from_slice::<Probe>(&bytes) {
                match p.format_version {
                    Some(serde_json::Value::Number(n))
                        if n.as_u64() == Some(FORMAT_VERSION as u64) => {}
                    Some(v) => {
                        return Err(crate::store::resolved_store::version_error(
                            &bytes,
                            path,
                            v.to_string(),
                        ));
                    }
                    None => {
                        return Err(crate::store::resolved_store::version_error(
                            &bytes,
                            path,
                            "(missing)".to_string(),
                        ));
                    }
                }
            }
            Err(StoreError::corrupt(path, &e))
        }
    }
}

pub fn save(path: &Path, stats: &StatsFile) -> Result<(), StoreError> {
    crate::store::lock::write_file(path, &to_bytes(stats))
}

/// `adversary_stats.json` as written.
pub fn to_bytes(stats: &StatsFile) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(stats).expect("stats serialize");
    bytes.push(b'\n');
    bytes
}

/// Appends one run to the history (one JSON line, one `write`, then fsync).
/// Never through a symlink, never to a FIFO or device. A last line left
/// without its newline by a crash is cut off first (under the store lock),
/// so the new record starts on a line of its own and the file stays
/// readable: that cut-off record was never counted in the stats, which are
/// written after the history.
pub fn append_history(path: &Path, run: &RunRecord) -> Result<(), StoreError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut line = serde_json::to_vec(run).expect("run serializes");
    line.push(b'\n');
    let err = |source| StoreError::Write {
        file: path.display().to_string(),
        source,
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(StoreError::Unsafe {
            file: path.display().to_string(),
            why: "is a symbolic link (gauntlet does not follow links in the store folder)"
                .to_string(),
        });
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut f = options.open(path).map_err(err)?;
    let meta = f.metadata().map_err(err)?;
    if !meta.is_file() {
        return Err(StoreError::Unsafe {
            file: path.display().to_string(),
            why: format!(
                "is {}, not a regular file",
                crate::fsutil::kind_of(meta.file_type())
            ),
        });
    }
    let len = meta.len();
    if len > 0 {
        // Find the end of the last complete line, reading backwards.
        let mut keep = len;
        let mut buf = vec![0u8; 4096];
        let mut end = len;
        'scan: loop {
            let start = end.saturating_sub(buf.len() as u64);
            let chunk = &mut buf[..(end - start) as usize];
            f.seek(SeekFrom::Start(start)).map_err(err)?;
            f.read_exact(chunk).map_err(err)?;
            if end == len && chunk.last() == Some(&b'\n') {
                break 'scan;
            }
            if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
                keep = start + i as u64 + 1;
                break 'scan;
            }
            if start == 0 {
                keep = 0;
                break 'scan;
            }
            end = start;
        }
        if keep < len {
            f.set_len(keep).map_err(err)?;
        }
    }
    f.seek(SeekFrom::End(0)).map_err(err)?;
    f.write_all(&line).map_err(err)?;
    f.sync_data().map_err(err)
}

/// Reads the history. A last line without its newline is a write that was
/// cut off: it is skipped and reported in the notes. Any other bad line is
/// corruption.
pub fn load_history(path: &Path) -> Result<(Vec<RunRecord>, Vec<String>), StoreError> {
    let bytes = match crate::store::resolved_store::read_store_file(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(source) => return Err(StoreError::read(path, source)),
    };
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last = lines.len() - 1;
    for (i, line) in lines.iter().enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        match serde_json::from_slice::<RunRecord>(line) {
            Ok(r) => runs.push(r),
            Err(_) if i == last && !complete => notes.push(format!(
                "{}: line {} is an incomplete write and was skipped",
                path.display(),
                i + 1
            )),
            Err(e) => {
                return Err(StoreError::Corrupt {
                    file: path.display().to_string(),
                    line: i + 1,
                    column: e.column(),
                    message: crate::store::store_error::one_line(
                        e.to_string().split(" at line ").next().unwrap_or(""),
                    ),
                });
            }
        }
    }
    Ok((runs, notes))
}

/// One adversary's row in the leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub adversary: String,
    pub runs: u64,
    pub concerns_raised: u64,
    pub accepted: u64,
    pub dismissed: u64,
    pub deferred: u64,
    pub filtered: u64,
    pub acceptance_rate: f64,
    pub rebuttals_won: u64,
    pub rebuttals_lost: u64,
    pub rebuttal_win_rate: Option<f64>,
    pub notable_finds: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LowPerformer {
    pub adversary: String,
    pub acceptance_rate: f64,
    pub concerns_raised: u64,
    pub recommendation: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub role: String,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub runs: u64,
}

/// What `gauntlet adversary-stats` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Leaderboard {
    pub since: Option<DateTime<Utc>>,
    pub last_updated: Option<DateTime<Utc>>,
    pub total_runs: u64,
    /// Best acceptance rate first.
    pub adversaries: Vec<Row>,
    pub low_performers: Vec<LowPerformer>,
    pub models: Vec<ModelRow>,
    pub total_cost: f64,
}

impl Leaderboard {
    pub fn new(stats: &StatsFile, since: Option<DateTime<Utc>>) -> Leaderboard {
        let mut rows: Vec<Row> = stats
            .adversaries
            .iter()
            .map(|(name, e)| {
                let c = e.counts();
                Row {
                    adversary: name.clone(),
                    runs: c.runs,
                    concerns_raised: c.concerns_raised,
                    accepted: c.accepted,
                    dismissed: c.dismissed,
                    deferred: c.deferred,
                    filtered: c.filtered,
                    acceptance_rate: c.acceptance_rate(),
                    rebuttals_won: c.rebuttals_won,
                    rebuttals_lost: c.rebuttals_lost,
                    rebuttal_win_rate: c.rebuttal_win_rate(),
                    notable_finds: c.notable_finds(),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.acceptance_rate
                .total_cmp(&a.acceptance_rate)
                .then(b.concerns_raised.cmp(&a.concerns_raised))
                .then(a.adversary.cmp(&b.adversary))
        });
        let low_performers = rows.iter().filter_map(low_performer).collect();
        let models: Vec<ModelRow> = stats
            .models
            .iter()
            .map(|(name, m)| ModelRow {
                model: name.clone(),
                role: m.role.clone(),
                total_tokens: m.total_tokens,
                total_cost: m.total_cost,
                runs: m.runs,
            })
            .collect();
        Leaderboard {
            since,
            last_updated: stats.last_updated,
            total_runs: stats.total_runs,
            total_cost: models.iter().map(|m| m.total_cost).sum(),
            adversaries: rows,
            low_performers,
            models,
        }
    }
}

/// Acceptance under 20% with at least 10 raised, and what to do about it.
pub fn low_performer(r: &Row) -> Option<LowPerformer> {
    if r.concerns_raised < LOW_MIN_RAISED || r.acceptance_rate >= LOW_ACCEPTANCE {
        return None;
    }
    let seen = r.concerns_raised.saturating_sub(r.filtered).max(1) as f64;
    let recommendation = if r.filtered * 2 >= r.concerns_raised {
        "mostly repeats concerns already resolved: tell the persona what was settled, or lower its rule count".to_string()
    } else if r.deferred as f64 / seen >= 0.5 {
        "most of its concerns end deferred: ask for concerns the spec can answer, with a concrete failure scenario".to_string()
    } else if r.rebuttal_win_rate.is_some_and(|w| w >= 0.5) {
        "evaluators dismiss it often but lose half its challenges: review the evaluators' dismissals before changing the persona".to_string()
    } else {
        "most concerns are dismissed with cited evidence: refine the prompt or rule pack to what the spec leaves open, or try another model".to_string()
    };
    Some(LowPerformer {
        adversary: r.adversary.clone(),
        acceptance_rate: r.acceptance_rate,
        concerns_raised: r.concerns_raised,
        recommendation,
    })
}

pub fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn win_rate(r: &Row) -> String {
    r.rebuttal_win_rate
        .map(percent)
        .unwrap_or_else(|| "-".to_string())
}

fn period(b: &Leaderboard) -> String {
    match b.since {
        Some(s) => format!("since {}", s.format("%Y-%m-%d")),
        None => "all time".to_string(),
    }
}

pub fn write_text(b: &Leaderboard, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "=== Adversary Leaderboard ({}) ===", period(b))?;
    writeln!(out, "Runs: {}", b.total_runs)?;
    if b.adversaries.is_empty() {
        writeln!(out, "No runs recorded yet.")?;
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7} {:>11}",
        "Adversary",
        "Runs",
        "Raised",
        "Accepted",
        "Dismissed",
        "Deferred",
        "Filtered",
        "Accept%",
        "Rebuttals"
    )?;
    for r in &b.adversaries {
        writeln!(
            out,
            "{:<22} {:>6} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7} {:>11}",
            r.adversary,
            r.runs,
            r.concerns_raised,
            r.accepted,
            r.dismissed,
            r.deferred,
            r.filtered,
            percent(r.acceptance_rate),
            format!(
                "{}/{} {}",
                r.rebuttals_won,
                r.rebuttals_won + r.rebuttals_lost,
                win_rate(r)
            ),
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Notable finds:")?;
    for r in &b.adversaries {
        if !r.notable_finds.is_empty() {
            writeln!(out, "  {}: {}", r.adversary, r.notable_finds.join(", "))?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "Low performers (acceptance under 20% with at least 10 raised):"
    )?;
    if b.low_performers.is_empty() {
        writeln!(out, "  none")?;
    }
    for l in &b.low_performers {
        writeln!(
            out,
            "  {}: {} acceptance of {} raised - {}",
            l.adversary,
            percent(l.acceptance_rate),
            l.concerns_raised,
            l.recommendation
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Models:")?;
    writeln!(
        out,
        "  {:<32} {:<18} {:>12} {:>10} {:>6}",
        "Model", "Role", "Tokens", "Cost", "Runs"
    )?;
    for m in &b.models {
        writeln!(
            out,
            "  {:<32} {:<18} {:>12} {:>10} {:>6}",
            m.model,
            m.role,
            m.total_tokens,
            format!("${:.4}", m.total_cost),
            m.runs
        )?;
    }
    writeln!(out, "Total cost: ${:.4}", b.total_cost)?;
    Ok(())
}

pub fn write_json(b: &Leaderboard, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, b)?;
    writeln!(out)
}

/// Markdown table cell: no pipes, newlines, live links, images, mentions
/// or control characters (see `escape::markdown`).
pub fn cell(s: &str) -> String {
    crate::escape::markdown(s)
}

pub fn write_markdown(b: &Leaderboard, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# Adversary Leaderboard")?;
    writeln!(out)?;
    writeln!(
        out,
        "Period: {}. Gauntlet runs: {}.",
        period(b),
        b.total_runs
    )?;
    writeln!(out)?;
    writeln!(out, "## Adversaries")?;
    writeln!(out)?;
    writeln!(
        out,
        "| Adversary | Runs | Raised | Accepted | Dismissed | Deferred | Filtered | Acceptance Rate | Rebuttals Won | Notable Finds |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")?;
    for r in &b.adversaries {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {}/{} ({}) | {} |",
            cell(&r.adversary),
            r.runs,
            r.concerns_raised,
            r.accepted,
            r.dismissed,
            r.deferred,
            r.filtered,
            percent(r.acceptance_rate),
            r.rebuttals_won,
            r.rebuttals_won + r.rebuttals_lost,
            win_rate(r),
            cell(&r.notable_finds.join(", "))
        )?;
    }
    writeln!(out)?;
    writeln!(out, "## Low Performers")?;
    writeln!(out)?;
    if b.low_performers.is_empty() {
        writeln!(
            out,
            "None (acceptance under 20% with at least 10 concerns raised)."
        )?;
    }
    for l in &b.low_performers {
        writeln!(
            out,
            "- {}: {} acceptance of {} raised - Recommendation: {}",
            cell(&l.adversary),
            percent(l.acceptance_rate),
            l.concerns_raised,
            l.recommendation
        )?;
    }
    writeln!(out)?;
    writeln!(out, "## Models")?;
    writeln!(out)?;
    writeln!(out, "| Model | Role | Tokens | Cost | Runs |")?;
    writeln!(out, "|---|---|---:|---:|---:|")?;
    for m in &b.models {
        writeln!(
            out,
            "| {} | {} | {} | ${:.4} | {} |",
            cell(&m.model),
            cell(&m.role),
            m.total_tokens,
            m.total_cost,
            m.runs
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Total cost: ${:.4}", b.total_cost)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_counts_one_run_whatever_it_says() {
        let record: RunRecord = serde_json::from_str(
            r#"{"at":"2026-01-02T00:00:00Z","spec_sha256":"feed","adversaries":{"burned_oncall":{"runs":11,"concerns_raised":2,"accepted":1,"dismissed":1,"deferred":0,"rebuttals_won":0,"rebuttals_lost":0}},"models":{"m":{"role":"attack","total_tokens":5,"total_cost":0.0,"runs":7}}}"#,
        )
        .unwrap();
        let s = StatsFile::from_runs([&record, &record]);
        assert_eq!(s.total_runs, 2);
        assert_eq!(s.adversaries["burned_oncall"].runs, 2);
        assert_eq!(s.adversaries["burned_oncall"].concerns_raised, 4);
        assert_eq!(s.models["m"].runs, 2);
        assert!(problems(&s).is_empty(), "{:?}", problems(&s));
    }

    fn counts(raised: u64, accepted: u64, dismissed: u64, filtered: u64) -> AdversaryCounts {
        AdversaryCounts {
            runs: 1,
            concerns_raised: raised,
            accepted,
            dismissed,
            deferred: raised - accepted - dismissed - filtered,
            filtered,
            rebuttals_won: 1,
            rebuttals_lost: 2,
            finds: [("missing-timeout".to_string(), accepted)]
                .into_iter()
                .collect(),
        }
    }

    fn run(at: &str, advs: &[(&str, AdversaryCounts)]) -> RunRecord {
        RunRecord {
            at: crate::store::location::parse_time(at).unwrap(),
            spec_sha256: "x".into(),
            spec_path: None,
            adversaries: advs
                .iter()
                .map(|(n, c)| (n.to_string(), c.clone()))
                .collect(),
            models: [(
                "m".to_string(),
                ModelCounts {
                    role: "attack".into(),
                    total_tokens: 100,
                    total_cost: 0.5,
                    runs: 1,
                },
            )]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn sums_are_exact_and_absent_adversaries_add_nothing() {
        let r1 = run(
            "2026-01-01",
            &[("a", counts(4, 2, 1, 0)), ("b", counts(3, 0, 3, 0))],
        );
        let r2 = run("2026-01-02", &[("a", counts(6, 1, 2, 2))]);
        let s = StatsFile::from_runs([&r1, &r2]);
        assert_eq!(s.total_runs, 2);
        let a = &s.adversaries["a"];
        assert_eq!(
            (
                a.runs,
                a.concerns_raised,
                a.accepted,
                a.dismissed,
                a.deferred,
                a.filtered
            ),
            (2, 10, 3, 3, 2, 2)
        );
        assert_eq!((a.rebuttals_won, a.rebuttals_lost), (2, 4));
        // 3 accepted of 8 evaluated (2 filtered were never seen).
        assert_eq!(a.acceptance_rate, 0.375);
        assert_eq!(a.notable_finds, vec!["missing-timeout (3 occurrences)"]);
        let b = &s.adversaries["b"];
        assert_eq!((b.runs, b.concerns_raised), (1, 3));
        let m = &s.models["m"];
        assert_eq!((m.runs, m.total_tokens), (2, 200));
        assert_eq!(m.total_cost, 1.0);
    }

    #[test]
    fn low_performers_need_ten_raised_and_under_twenty_percent() {
        let r = run(
            "2026-01-01",
            &[
                ("nine", counts(9, 0, 9, 0)),
                ("ten", counts(10, 1, 9, 0)),
                ("fifth", counts(10, 2, 8, 0)),
            ],
        );
        let b = Leaderboard::new(&StatsFile::from_runs([&r]), None);
        let low: Vec<&str> = b
            .low_performers
            .iter()
            .map(|l| l.adversary.as_str())
            .collect();
        // nine: too few raised; fifth: exactly 20% is not under 20%.
        assert_eq!(low, vec!["ten"]);
        assert!(b.low_performers[0].recommendation.contains("dismissed"));
        assert_eq!(b.adversaries[0].adversary, "fifth");
    }

    #[test]
    fn history_tolerates_only_a_torn_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.jsonl");
        let r = run("2026-01-01", &[("a", counts(1, 1, 0, 0))]);
        append_history(&p, &r).unwrap();
        append_history(&p, &r).unwrap();
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(b"{\"at\": \"2026-");
        std::fs::write(&p, &bytes).unwrap();
        let (runs, notes) = load_history(&p).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(notes.len(), 1);
        // Garbage in the middle is corruption, with its line.
        let text = String::from_utf8(bytes)
            .unwrap()
            .replacen("{\"at\"", "{\"at\"x", 1);
        std::fs::write(&p, text).unwrap();
        match load_history(&p).unwrap_err() {
            StoreError::Corrupt { line, .. } => assert_eq!(line, 1),
            e => panic!("{e:?}"),
        }
    }
}
