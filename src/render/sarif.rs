//! SARIF 2.1.0 for GitHub code scanning: one rule per adversary, one result
//! per concern (dismissed, filtered and deferred ones carry `suppressions`),
//! the spec's path relative to its repository root, line regions, and the
//! concern fingerprint as `partialFingerprints` so alerts stay the same alert
//! across runs. Built on `serde-sarif`'s types (generated from the official
//! schema), never hand-written JSON. It never decides a verdict: it only
//! renders what the pipeline decided.

use crate::catalog::{Catalog, DEFAULT_ADVERSARIES};
use crate::concern::{Concern, RebuttalOutcome, Severity, Status};
use crate::verdict::{Outcome, Verdict};
use serde_json::{Value, json};
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    Result as SarifResult, ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub const SARIF_VERSION: &str = "2.1.0";
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// Key of the concern fingerprint in `partialFingerprints`; bump the version
/// if the fingerprint's recipe changes, so code scanning does not match old
/// alerts against new ones.
pub const FINGERPRINT_KEY: &str = "gauntletConcern/v1";
/// The tool's `informationUri`: the project's home, from Cargo.toml
/// (`repository`), so it is stated in one place.
pub const INFORMATION_URI: &str = env!("CARGO_PKG_REPOSITORY");
/// The artifact URI used for a spec read from standard input.
pub const STDIN_URI: &str = "stdin";

/// A spec that could not be reviewed, reported as a tool notification.
#[derive(Debug, Clone)]
pub struct Failure {
    pub path: String,
    pub message: String,
}

/// `ruleId` of an adversary's results.
pub fn rule_id(adversary: &str) -> String {
    format!("gauntlet/{adversary}")
}

/// SARIF level for a severity: high is an error, medium a warning, low a note.
pub fn level(sev: Severity) -> ResultLevel {
    match sev {
        Severity::High => ResultLevel::Error,
        Severity::Medium => ResultLevel::Warning,
        Severity::Low => ResultLevel::Note,
    }
}

/// The log for one run on one spec (`--format sarif`).
pub fn single(verdict: &Verdict, catalog: &Catalog) -> Sarif {
    log(&[verdict], &[], catalog)
}

/// One log with one run holding every spec's results (`summary.sarif`):
/// GitHub ingests one run per tool and category.
pub fn log(verdicts: &[&Verdict], failures: &[Failure], catalog: &Catalog) -> Sarif {
    let mut roots = RootCache::default();
    // Rules: the built-in adversaries first in their usual order, then others.
    let mut names: Vec<&str> = Vec::new();
    for v in verdicts {
        for a in &v.adversaries {
            if !names.contains(&a.as_str()) {
                names.push(a);
            }
        }
    }
    names.sort_by_key(|n| {
        (
            DEFAULT_ADVERSARIES
                .iter()
                .position(|d| d == n)
                .unwrap_or(usize::MAX),
            n.to_string(),
        )
    });
    let index: BTreeMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let rules: Vec<ReportingDescriptor> = names.iter().map(|n| rule(n, catalog)).collect();

    let mut results = Vec::new();
    for v in verdicts {
        let uri = roots.uri(v.spec.path.as_deref());
        for c in v.concerns.iter().filter(|c| c.status != Status::Raised) {
            results.push(result(c, &uri, index.get(c.adversary.as_str()).copied()));
        }
    }

    let mut totals = Counts::default();
    let mut specs = Vec::new();
    for v in verdicts {
        let c = Counts::of(v);
        totals.add(&c);
        specs.push(json!({
            "uri": roots.uri(v.spec.path.as_deref()),
            "verdict": v.verdict.as_str(),
            "counts": c.to_json(),
        }));
    }
    let overall =
        if !failures.is_empty() || verdicts.iter().any(|v| v.verdict == Outcome::Incomplete) {
            "incomplete"
        } else if verdicts.iter().any(|v| v.verdict == Outcome::Revise) {
            "revise"
        } else {
            "pass"
        };
    let mut props = BTreeMap::new();
    props.insert("verdict".to_string(), json!(overall));
    props.insert("counts".to_string(), totals.to_json());
    if let [v] = verdicts {
        props.insert("failOn".to_string(), json!(v.fail_on.as_str()));
        props.insert("spec".to_string(), json!(roots.uri(v.spec.path.as_deref())));
        props.insert("sha256".to_string(), json!(v.spec.sha256));
        if let Some(fb) = &v.final_boss {
            props.insert("finalBoss".to_string(), json!(fb.verdict.as_str()));
        }
    } else {
        props.insert("specs".to_string(), Value::Array(specs));
        if !failures.is_empty() {
            props.insert("notReviewed".to_string(), json!(failures.len()));
        }
    }

    let notifications: Vec<Notification> = failures
        .iter()
        .map(|f| {
            Notification::builder()
                .message(Message::from(f.message.as_str()))
                .level(json!("error"))
                .locations(vec![
                    Location::builder()
                        .physical_location(
                            PhysicalLocation::builder()
                                .artifact_location(
                                    ArtifactLocation::builder()
                                        .uri(roots.uri(Some(&f.path)))
                                        .build(),
                                )
                                .build(),
                        )
                        .build(),
                ])
                .build()
        })
        .collect();
    let invocation = if notifications.is_empty() {
        Invocation::builder().execution_successful(true).build()
    } else {
        Invocation::builder()
            .execution_successful(false)
            .tool_execution_notifications(notifications)
            .build()
    };

    let driver = ToolComponent::builder()
        .name("gauntlet")
        .information_uri(INFORMATION_URI)
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!(SARIF_VERSION))
        .runs(vec![run])
        .build()
}

pub fn write(verdict: &Verdict, catalog: &Catalog, out: &mut dyn Write) -> io::Result<()> {
    write_log(&single(verdict, catalog), out)
}

pub fn write_log(log: &Sarif, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, log)?;
    writeln!(out)
}

fn rule(name: &str, catalog: &Catalog) -> ReportingDescriptor {
    let persona = catalog.persona(name);
    let description = persona
        .map(|p| p.description.clone())
        .unwrap_or_else(|| format!("Concerns raised by the {name} adversary."));
    let rules: Vec<String> = persona
        .map(|p| p.rules.iter().map(|r| r.def.id.clone()).collect())
        .unwrap_or_default();
    ReportingDescriptor::builder()
        .id(rule_id(name))
        .name(pascal(name))
        .help(help(name, &description, &rules))
        .short_description(
            MultiformatMessageString::builder()
                .text(description.clone())
                .build(),
        )
        .full_description(
            MultiformatMessageString::builder()
                .text(description)
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!("warning"))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(vec!["spec-review".to_string(), name.to_string()])
                .additional_properties(BTreeMap::new())
                .build(),
        )
        .build()
}

fn result(c: &Concern, uri: &str, rule_index: Option<usize>) -> SarifResult {
    let (start, end) = c.lines.unwrap_or((1, 1));
    let region = Region::builder()
        .start_line(start.max(1) as i64)
        .end_line(end.max(start).max(1) as i64)
        .build();
    let location = Location::builder()
        .physical_location(
            PhysicalLocation::builder()
                .artifact_location(ArtifactLocation::builder().uri(uri).build())
                .region(region)
                .build(),
        )
        .build();
    let mut fingerprints = BTreeMap::new();
    fingerprints.insert(FINGERPRINT_KEY.to_string(), c.fingerprint.clone());
    let mut props = BTreeMap::new();
    props.insert("concernId".to_string(), json!(c.id));
    props.insert("status".to_string(), json!(c.status.as_str()));
    props.insert("severity".to_string(), json!(c.severity.as_str()));
    if let Some(s) = &c.section {
        props.insert("section".to_string(), json!(s));
    }
    let text = format!("{} ({}): {}", c.title, c.id, c.detail);
    let builder = SarifResult::builder()
        .rule_id(rule_id(&c.adversary))
        .level(level(c.severity))
        .message(Message::builder().text(text).build())
        .locations(vec![location])
        .partial_fingerprints(fingerprints)
        .properties(PropertyBag::builder().additional_properties(props).build());
    let suppression = suppression(c);
    match (rule_index, suppression) {
        (Some(i), Some(s)) => builder.rule_index(i as i64).suppressions(vec![s]).build(),
        (Some(i), None) => builder.rule_index(i as i64).build(),
        (None, Some(s)) => builder.suppressions(vec![s]).build(),
        (None, None) => builder.build(),
    }
}

/// Dismissed and filtered concerns are accepted suppressions (the evidence
/// or the earlier explanation is the justification); deferred ones are
/// under review; concerns that require revision are not suppressed.
fn suppression(c: &Concern) -> Option<Suppression> {
    let (status, justification) = match c.status {
        Status::Dismissed => {
            let mut j = c.dismissal_reasoning();
            if let Some(r) = &c.rebuttal {
                let what = match r.outcome {
                    RebuttalOutcome::Accepted => "accepted the dismissal",
                    RebuttalOutcome::Challenged => "challenged, the dismissal was upheld",
                };
                j.push_str(&format!("\n{} {what}: {}", c.adversary, r.reasoning));
            }
            ("accepted", j)
        }
        Status::Filtered => (
            "accepted",
            c.filter
                .as_ref()
                .map(|f| format!("previously addressed ({}): {}", f.entry_id, f.explanation))
                .unwrap_or_else(|| "previously addressed".to_string()),
        ),
        Status::Deferred => (
            "underReview",
            "deferred: the evaluators could not decide; a person must".to_string(),
        ),
        _ => return None,
    };
    Some(
        Suppression::builder()
            .kind(json!("external"))
            .status(json!(status))
            .justification(justification)
            .build(),
    )
}

/// Counts for `run.properties`.
#[derive(Debug, Default, Clone)]
struct Counts {
    requiring_revision: u64,
    high: u64,
    medium: u64,
    low: u64,
    dismissed: u64,
    deferred: u64,
    filtered: u64,
}

impl Counts {
    fn of(v: &Verdict) -> Counts {
        let mut c = Counts::default();
        for x in &v.concerns {
            match x.status {
                Status::Accepted | Status::Reinstated => {
                    c.requiring_revision += 1;
                    match x.severity {
                        Severity::High => c.high += 1,
                        Severity::Medium => c.medium += 1,
                        Severity::Low => c.low += 1,
                    }
                }
                Status::Dismissed => c.dismissed += 1,
                Status::Deferred => c.deferred += 1,
                Status::Filtered => c.filtered += 1,
                Status::Raised => {}
            }
        }
        c
    }

    fn add(&mut self, o: &Counts) {
        self.requiring_revision += o.requiring_revision;
        self.high += o.high;
        self.medium += o.medium;
        self.low += o.low;
        self.dismissed += o.dismissed;
        self.deferred += o.deferred;
        self.filtered += o.filtered;
    }

    fn to_json(&self) -> Value {
        json!({
            "requiringRevision": self.requiring_revision,
            "high": self.high,
            "medium": self.medium,
            "low": self.low,
            "dismissed": self.dismissed,
            "deferred": self.deferred,
            "filtered": self.filtered,
        })
    }
}

/// The rule's `help` (GitHub code scanning shows it beside every alert and
/// requires it): what the adversary looks for and how to resolve a result.
fn help(name: &str, description: &str, rules: &[String]) -> MultiformatMessageString {
    let how = "To resolve a result, state the missing safeguard in the spec next to \
               the design element the result points at, or answer it where the \
               concern's section discusses it; then run gauntlet again.";
    let why = "gauntlet explain ID SPEC shows which rule fired on which lines, the \
               evidence each evaluator found, and why the concern ended as it did.";
    let mut text = format!("{description}\n\n{how}\n\n{why}");
    let mut markdown = format!(
        "**{name}**: {description}\n\n{how}\n\n`gauntlet explain ID SPEC` shows which rule \
         fired on which lines, the evidence each evaluator found, and why the concern \
         ended as it did."
    );
    if !rules.is_empty() {
        text.push_str(&format!("\n\nRules: {}.", rules.join(", ")));
        let list: Vec<String> = rules.iter().map(|r| format!("`{r}`")).collect();
        markdown.push_str(&format!("\n\nRules: {}.", list.join(", ")));
    }
    MultiformatMessageString::builder()
        .text(text)
        .markdown(markdown)
        .build()
}

/// `paranoid_security` -> `ParanoidSecurity` (SARIF rule names are Pascal case).
fn pascal(name: &str) -> String {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f.to_uppercase().chain(cs).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

/// Artifact URIs relative to the repository root, looked up once per folder.
#[derive(Default)]
struct RootCache {
    cwd: Option<PathBuf>,
    roots: BTreeMap<PathBuf, Option<PathBuf>>,
}

impl RootCache {
    fn uri(&mut self, path: Option<&str>) -> String {
        let Some(path) = path.filter(|p| *p != "-" && *p != "<stdin>") else {
            return STDIN_URI.to_string();
        };
        if self.cwd.is_none() {
            self.cwd = std::env::current_dir().ok();
        }
        let abs = match std::path::absolute(path) {
            Ok(a) => normalise(&a),
            Err(_) => return encode(&slashes(Path::new(path))),
        };
        let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
        let root = self
            .roots
            .entry(dir.clone())
            .or_insert_with(|| repo_root(&dir))
            .clone();
        let base = root.or_else(|| self.cwd.as_deref().map(normalise));
        match base.as_deref().and_then(|b| abs.strip_prefix(b).ok()) {
            Some(rel) => encode(&slashes(rel)),
            None => format!("file://{}", encode(&slashes(&abs))),
        }
    }
}

/// The nearest ancestor holding `.git` (a folder, or a file in a worktree).
pub fn repo_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
}

fn normalise(p: &Path) -> PathBuf {
    crate::fsutil::normalise_lexically(p)
}

fn slashes(p: &Path) -> String {
    p.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Percent-encode everything but unreserved characters and `/`.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_levels_and_uris() {
        assert_eq!(pascal("paranoid_security"), "ParanoidSecurity");
        assert_eq!(rule_id("burned_oncall"), "gauntlet/burned_oncall");
        assert!(matches!(level(Severity::High), ResultLevel::Error));
        assert!(matches!(level(Severity::Medium), ResultLevel::Warning));
        assert!(matches!(level(Severity::Low), ResultLevel::Note));
        assert_eq!(encode("docs/my spec#1.md"), "docs/my%20spec%231.md");
        assert_eq!(
            normalise(Path::new("/a/./b/../c.md")),
            PathBuf::from("/a/c.md")
        );
    }

    #[test]
    fn uri_is_relative_to_the_nearest_git_root() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("docs/design")).unwrap();
        let spec = repo.join("docs/design/auth flow.md");
        let mut cache = RootCache::default();
        assert_eq!(
            cache.uri(Some(spec.to_str().unwrap())),
            "docs/design/auth%20flow.md"
        );
        assert_eq!(cache.uri(None), STDIN_URI);
        assert_eq!(cache.uri(Some("-")), STDIN_URI);
    }
}
