//! Offline evaluators. Each judges the same question (does the spec state
//! the safeguard this concern asks for?) with a different evidence model,
//! so they can disagree with each other and with the attacker:
//!
//! - `section` (the lexicon model): any stated safeguard in the concern's
//!   section and its subsections, from the rule's patterns, the protocol's
//!   stemmed synonyms ("a maximum duration" for a TTL) and complementary
//!   bounds (`< 10` beside `>= 10`). It does not ask what the safeguard is
//!   about, so it is the most lenient inside its section and blind outside.
//! - `document` (the design-wide model): safeguards that hold wherever they
//!   are written: blanket policies about the same kind of thing ("every
//!   call has a 3 s timeout", a quantified rule in Goals), a "Why X?"
//!   section or an Alternatives section that justifies the thing, a line or
//!   a config / struct example that names the component (a `timeout:`
//!   field); plus what the concern's own paragraph (or the part of the spec
//!   the rule names as its scope) states. No protocol test.
//! - `strict` (the component model): the persona's response protocol
//!   applied literally. Evidence must sit next to the concern or name the
//!   same component (a code block counts by its whole content), must not be
//!   one of the protocol's invalid dismissals ("unlikely", "later"), and
//!   where the protocol asks for a justification (lazy_developer), one must
//!   be written down.
//!
//! All three read negation ("there is no timeout"), deferral ("we will add
//! retries later", Open questions, Non-goals) and Alternatives (a rejected
//! option is not the design) through `evidence::classify`.

use super::attacker::excerpt;
use super::evidence::{self, Evidence, EvidenceKind};
use super::lexicon::Lexicon;
use super::subject;
use crate::catalog::Catalog;
use crate::concern::{Concern, Decision, Vote};
use crate::per_spec::PerSpec;
use crate::rule::Rule;
use crate::spec::{LineKind, SectionRole, Spec};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standard {
    Section,
    Document,
    Strict,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::Section => "offline/section",
            Standard::Document => "offline/document",
            Standard::Strict => "offline/strict",
        }
    }

    pub fn parse(s: &str) -> Option<Standard> {
        match s {
            "section" | "offline/section" => Some(Standard::Section),
            "document" | "offline/document" => Some(Standard::Document),
            "strict" | "offline/strict" => Some(Standard::Strict),
            _ => None,
        }
    }

    /// What this standard accepts as evidence, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Standard::Section => "in its section",
            Standard::Document => "in the design as a whole",
            Standard::Strict => "next to it or about the same component",
        }
    }
}

fn scope(
    spec: &Spec,
    standard: Standard,
    rule: &Rule,
    concern: &Concern,
    window: usize,
) -> Range<usize> {
    let all = 1..spec.lines.len() + 1;
    let Some((a, b)) = concern.lines else {
        return all;
    };
    // Where the rule says its safeguard is written (the attacker's scope):
    // the lenient models never look less widely than that.
    let rule_scope = match rule.def.scope {
        crate::rule::Scope::Block => spec.block_lines(a).start..spec.block_lines(b).end,
        crate::rule::Scope::Section => {
            spec.section_lines(spec.line(a).map(|l| l.section).unwrap_or(0))
        }
        crate::rule::Scope::Document => all.clone(),
    };
    match standard {
        Standard::Document => rule_scope,
        Standard::Section => {
            if rule.def.scope == crate::rule::Scope::Document {
                return all;
            }
            let sec = spec.line(a).map(|l| l.section).unwrap_or(0);
            spec.section_tree_lines(sec)
        }
        Standard::Strict => {
            let block = spec.block_lines(a);
            let lo = a.saturating_sub(window).max(1).min(block.start);
            let hi = (b + window + 1).max(spec.block_lines(b).end);
            lo..hi
        }
    }
}

/// The components a concern is about: names on its lines (Postgres,
/// `orders`, /events), else the design element the rule matched. Computed
/// once per concern and spec (see `cache_for`): the three evaluators and
/// the rebuttal all ask, and a concern may span a whole section.
pub fn topic(spec: &Spec, concern: &Concern) -> Arc<Vec<String>> {
    once(&cache_for(spec).topics, concern_key(concern), || {
        compute_topic(spec, concern)
    })
}

fn compute_topic(spec: &Spec, concern: &Concern) -> Vec<String> {
    let mut components: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    if let Some((a, b)) = concern.lines {
        for k in a..=b.min(spec.lines.len()) {
            for c in subject::components(&spec.lines[k - 1].text) {
                if seen.insert(c.clone()) {
                    components.push(c);
                }
            }
        }
    }
    // Prefer the components inside the design element the rule matched: on
    // "appends to `/var/spool/audit` ... and uploads to S3", a spool concern
    // is about the spool, not S3.
    if let Some(m) = concern
        .subject
        .first()
        .map(|m| m.to_lowercase().replace(['`', '"'], ""))
    {
        let primary: Vec<String> = components
            .iter()
            .filter(|c| m.contains(c.as_str()) || c.contains(m.as_str()))
            .cloned()
            .collect();
        if !primary.is_empty() {
            return primary;
        }
    }
    if components.is_empty() {
        components = concern.subject.clone();
    }
    components
}

/// Does line `n` name one of `terms`? A line of a code or config example
/// is read with its whole block and the sentence that introduces it, so a
/// `timeout:` field under `fraud_api:` is about the Fraud API.
pub fn names_topic(spec: &Spec, n: usize, terms: &[String]) -> bool {
    let Some(line) = spec.line(n) else {
        return false;
    };
    if subject::mentions_any(&line.text, terms) {
        return true;
    }
    if line.kind != LineKind::Code {
        return false;
    }
    let block = spec.block_lines(n);
    // The intro line just above the fence, then the block (bounded).
    let intro = block.start.saturating_sub(2).max(1)..block.start;
    let body = block.start..block.end.min(block.start + 80);
    intro
        .chain(body)
        .any(|k| subject::mentions_any(&spec.lines[k - 1].text, terms))
}

/// Stems of the concern's own lines and subject: what a blanket policy
/// must be about to answer it. A set: callers only ask whether a word is
/// among them, and a concern spanning a huge section has many.
pub fn concern_stems(spec: &Spec, concern: &Concern) -> Arc<HashSet<String>> {
    once(&cache_for(spec).stems, concern_key(concern), || {
        compute_concern_stems(spec, concern)
    })
}

fn compute_concern_stems(spec: &Spec, concern: &Concern) -> HashSet<String> {
    // Tokens never cross a line or the subject's end: the stems of each
    // part, the lines' from the shared cache.
    let mut out: HashSet<String> = super::lexicon::normalise(&concern.subject.join(" "))
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if let Some((a, b)) = concern.lines {
        let normalised = super::lexicon::spec_lines(spec);
        for n in a.max(1)..=b.min(spec.lines.len()) {
            for stem in normalised.line(n, &spec.lines[n - 1].text).stems() {
                if !out.contains(stem) {
                    out.insert(stem.to_string());
                }
            }
        }
    }
    // As the stems of the joined text split on spaces: one empty word
    // when there is no word at all.
    if out.is_empty() {
        out.insert(String::new());
    }
    out
}

/// Is line `n` part of a config file or code example (a struct, a YAML
/// block), where a `timeout` field is a stated setting? Requests and shell
/// sessions are not: "Authorization: Bearer" in an HTTP example is not an
/// authorization check. A block is read by its info string when that names
/// a config or programming language, else by its content (`key: value`
/// lines, see `reads_as_config`).
fn is_config_example(spec: &Spec, n: usize) -> bool {
    const CONFIG: &[&str] = &[
        "yaml",
        "yml",
        "json",
        "jsonc",
        "toml",
        "ini",
        "conf",
        "cfg",
        "hcl",
        "tf",
        "properties",
        "go",
        "rust",
        "rs",
        "java",
        "kotlin",
        "kt",
        "python",
        "py",
        "ts",
        "typescript",
        "js",
        "javascript",
        "cs",
        "csharp",
        "scala",
        "swift",
        "proto",
        "protobuf",
        "sql",
        "ruby",
        "rb",
        "php",
        "c",
        "cpp",
        "env",
        "dotenv",
        "xml",
    ];
    let line = &spec.lines[n - 1];
    line.kind == LineKind::Code
        && (line
            .code_lang
            .as_deref()
            .is_some_and(|l| CONFIG.contains(&l.to_ascii_lowercase().as_str()))
            || reads_as_config(spec, n))
}

/// Lines of a code block read to judge its content (a bound, so a huge
/// block costs the same as a small one).
const CONFIG_PROBE_LINES: usize = 40;

/// Does the code block holding line `n` read as configuration whatever its
/// info string says: most of its first lines are `key: value` or `key =
/// value` (YAML, TOML, INI, properties), and it is not an HTTP message or a
/// shell session, whose headers and prompts look alike?
fn reads_as_config(spec: &Spec, n: usize) -> bool {
    static KEY_VALUE: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r#"(?-u)^\s*(?:-\s+)?["']?[A-Za-z_][\w.-]{0,60}["']?\s*(?::(?:\s|$)|=)"#,
        )
        .expect("a valid pattern")
    });
    static NOT_CONFIG: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r"(?-u)^\s*(?:(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+\S|HTTP/\d|[$#>%]\s|curl\s)",
        )
        .expect("a valid pattern")
    });
    let block = spec.block_lines(n);
    let lines: Vec<&[u8]> = (block.start..block.end)
        .map(|k| spec.lines[k - 1].text.as_bytes())
        .filter(|t| {
            let t = t.trim_ascii_start();
            !t.is_empty() && !t.starts_with(b"```") && !t.starts_with(b"~~~")
        })
        .take(CONFIG_PROBE_LINES)
        .collect();
    if lines.len() < 2 || NOT_CONFIG.is_match(lines[0]) {
        return false;
    }
    let keyed = lines.iter().filter(|t| KEY_VALUE.is_match(t)).count();
    keyed * 5 >= lines.len() * 3
}

/// Does `matched` sit in the field name of a code line (`timeout: 2s`,
/// `Timeout time.Duration`, `"timeout_ms" = 300`) rather than in its type
/// or value (`unit_price BIGINT`)? A field is a stated setting.
fn is_field(line: &str, matched: &str) -> bool {
    let t = line
        .trim_start()
        .trim_start_matches(['-', '"', '\'', '`', ' ']);
    let key: String = t
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    let m = matched.to_lowercase();
    !key.is_empty() && !m.is_empty() && key.to_lowercase().contains(m.trim())
}

/// Is this rule's safeguard a justification (why it is built this way)
/// rather than a mechanism? Lazy developer's rules ask "why".
fn wants_justification(rule: &Rule, protocol_needs: bool) -> bool {
    protocol_needs
        || rule
            .def
            .missing
            .trim_start()
            .to_lowercase()
            .starts_with("why")
}

/// "Why X?" sections and Alternatives sections that name one of `terms`:
/// the text that justifies building X. Cites the first line of the
/// section's body that names the thing (or its first line).
fn justifications(spec: &Spec, terms: &[String]) -> Vec<Evidence> {
    let mut out = Vec::new();
    for (i, sec) in spec.sections.iter().enumerate() {
        let heading = sec.heading.trim().to_lowercase();
        let why = heading.starts_with("why") || heading.ends_with('?') && heading.contains("why");
        let alternatives = sec.role == SectionRole::Alternatives;
        if !(why || alternatives) || sec.level == 0 {
            continue;
        }
        let heading_names = subject::mentions_any(&sec.heading, terms);
        let body = spec.section_lines(i);
        let mut cite = None;
        for n in body.start + 1..body.end.min(spec.lines.len() + 1) {
            let l = &spec.lines[n - 1];
            if matches!(l.kind, LineKind::Blank | LineKind::Heading | LineKind::Html) {
                continue;
            }
            if subject::mentions_any(&l.text, terms) {
                cite = Some(n);
                break;
            }
            if heading_names && cite.is_none() && why {
                cite = Some(n);
                break;
            }
        }
        if let Some(n) = cite {
            out.push(Evidence {
                line: n,
                kind: EvidenceKind::Affirmed,
                matched: sec.heading.trim().to_string(),
            });
        }
    }
    out
}

/// Complementary bounds in `range` as evidence for a boundary concern.
fn bounds(spec: &Spec, rule: &Rule, range: Range<usize>) -> Vec<Evidence> {
    if !rule.def.missing.to_lowercase().contains("boundary") {
        return Vec::new();
    }
    match evidence::complementary_bounds(spec, range) {
        Some((a, b, what)) => [a, b]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .map(|line| Evidence {
                line,
                kind: EvidenceKind::Affirmed,
                matched: format!("complementary bounds ({what})"),
            })
            .collect(),
        None => Vec::new(),
    }
}

type CacheKey = (String, usize, String, String);

/// A blanket-policy line, read once per spec: its number, whether it is
/// the attack side's narrow universal form, and what it is about.
pub(crate) struct Blanket {
    pub line: usize,
    universal: bool,
    subject: Vec<String>,
}

/// What a concern's topic and stems depend on: its lines and subject.
type ConcernKey = (Option<(usize, usize)>, Vec<String>);

fn concern_key(concern: &Concern) -> ConcernKey {
    (concern.lines, concern.subject.clone())
}

/// Values computed once per key, each behind its own cell: the map is
/// locked only to find the cell, so threads voting on different concerns
/// compute in parallel, and two asking for one key compute it once.
type Cells<K, V> = Mutex<HashMap<K, Arc<OnceLock<Arc<V>>>>>;

/// What the evaluators compute once per spec (see `cache_for`).
#[derive(Default)]
struct SpecCache {
    rules: Cells<CacheKey, Vec<Evidence>>,
    blanket: OnceLock<Arc<Vec<Blanket>>>,
    topics: Cells<ConcernKey, Vec<String>>,
    stems: Cells<ConcernKey, HashSet<String>>,
}

/// The value of `key`, computed by `f` on first use. `f` must not use
/// rayon: a thread waiting on a cell another thread is filling must not
/// be handed that thread's work.
fn once<K: std::hash::Hash + Eq, V>(cells: &Cells<K, V>, key: K, f: impl FnOnce() -> V) -> Arc<V> {
    let cell = {
        let mut map = cells.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(key).or_default().clone()
    };
    cell.get_or_init(|| Arc::new(f())).clone()
}

/// The caches of the specs judged most recently, shared by every thread:
/// the three evaluators vote on each concern in parallel, and per-thread
/// caches made each thread read the whole document again.
static CACHES: PerSpec<SpecCache> = PerSpec::new(16);

fn cache_for(spec: &Spec) -> Arc<SpecCache> {
    CACHES.get(spec, SpecCache::default)
}

/// Every mention of the rule's safeguards (and synonyms) in the document,
/// classified, in line order.
fn document_evidence(
    spec: &Spec,
    adversary: &str,
    rule: &Rule,
    synonyms: &[&Lexicon],
) -> Arc<Vec<Evidence>> {
    // The rule's patterns are part of the key: two catalogs (built-in and
    // `--personas-dir`) may hold different rules under one id.
    let key = (
        spec.sha256.clone(),
        spec.lines.len(),
        adversary.to_string(),
        format!(
            "{}\u{1}{}\u{1}{}",
            rule.id(),
            rule.def.safeguards.join("\u{1}"),
            rule.def.missing
        ),
    );
    once(&cache_for(spec).rules, key, || {
        let all = 1..spec.lines.len() + 1;
        let found = evidence::find_with(spec, &rule.safeguards, synonyms, all.clone());
        evidence::and_headings(found, spec, rule, all)
    })
}

/// The blanket-policy lines of the spec (cached per spec).
pub(crate) fn blanket_lines(spec: &Spec) -> Arc<Vec<Blanket>> {
    cache_for(spec)
        .blanket
        .get_or_init(|| {
            Arc::new(
                evidence::blanket_lines(spec)
                    .into_iter()
                    .map(|n| {
                        let text = &spec.lines[n - 1].text;
                        Blanket {
                            line: n,
                            universal: evidence::is_universal(text),
                            subject: evidence::blanket_subject(text),
                        }
                    })
                    .collect(),
            )
        })
        .clone()
}

/// The evidence one evaluator standard finds for a concern: mentions of
/// the rule's safeguards in the standard's scope, classified (affirmed,
/// negated, deferred), after the standard's own tests. `None` when no
/// offline rule covers the concern.
pub fn evidence(
    spec: &Spec,
    catalog: &Catalog,
    standard: Standard,
    concern: &Concern,
) -> Option<(Vec<Evidence>, Range<usize>)> {
    let rule = concern
        .rule
        .as_deref()
        .and_then(|r| catalog.persona(&concern.adversary)?.rule(r))?;
    let protocol = catalog.protocol(&concern.adversary);
    let window = protocol.map(|p| p.offline.window).unwrap_or(3);
    let synonyms: Vec<&Lexicon> = protocol
        .map(|p| p.offline.synonyms_for(&rule.def.missing))
        .unwrap_or_default();
    let needs: &[crate::rule::Regex] = protocol
        .map(|p| p.offline.justification_re.as_slice())
        .unwrap_or_default();
    let justify = wants_justification(rule, !needs.is_empty());
    let terms = topic(spec, concern);
    let range = scope(spec, standard, rule, concern, window);
    let all = 1..spec.lines.len() + 1;
    // Every mention in the document, found once per spec and rule and
    // shared by the three models and by every concern of the rule.
    let everywhere = document_evidence(spec, &concern.adversary, rule, &synonyms);
    let within = |r: Range<usize>| {
        let lo = everywhere.partition_point(|e| e.line < r.start);
        everywhere[lo..]
            .iter()
            .take_while(move |e| e.line < r.end)
            .cloned()
    };
    // Needed only for a blanket line that is not the universal form.
    let about = std::cell::OnceCell::new();
    let blanket = |found: &mut Vec<Evidence>| {
        for b in blanket_lines(spec).iter() {
            // A policy answers the concern only when it is about the same
            // kind of thing ("all outbound calls" for a call) or names it.
            // The attack side's narrow form ("every call / request /
            // handler ... has") is about interactions in general and
            // answers any concern.
            let n = b.line;
            if !b.universal
                && !b.subject.iter().any(|w| {
                    about
                        .get_or_init(|| concern_stems(spec, concern))
                        .contains(w)
                })
                && !names_topic(spec, n, &terms)
            {
                continue;
            }
            found.extend(within(n..n + 1).filter(|e| e.kind == EvidenceKind::Affirmed));
        }
    };
    let mut found: Vec<Evidence> = Vec::new();
    match standard {
        Standard::Section => {
            found.extend(within(range.clone()));
            found.extend(bounds(spec, rule, range.clone()));
        }
        Standard::Document => {
            found.extend(within(range.clone()));
            found.extend(bounds(spec, rule, range.clone()));
            blanket(&mut found);
            // Prose anywhere that names the same component.
            found.extend(within(all.clone()).filter(|e| {
                e.kind == EvidenceKind::Affirmed
                    && spec.lines[e.line - 1].kind != LineKind::Code
                    && subject::mentions_any(&spec.lines[e.line - 1].text, &terms)
            }));
            // Config and struct examples anywhere, when they name the component.
            found.extend(within(all.clone()).filter(|e| {
                e.kind == EvidenceKind::Affirmed
                    && is_config_example(spec, e.line)
                    && names_topic(spec, e.line, &terms)
                    && (subject::mentions_any(&spec.lines[e.line - 1].text, &terms)
                        || is_field(&spec.lines[e.line - 1].text, &e.matched))
            }));
            if justify {
                found.extend(justifications(spec, &terms));
            }
        }
        Standard::Strict => {
            // Next to it: its own paragraph, or a line within the window
            // that names the same component.
            let own = concern
                .lines
                .map(|(a, b)| spec.block_lines(a).start..spec.block_lines(b).end)
                .unwrap_or(range.clone());
            found.extend(
                within(range.clone())
                    .filter(|e| own.contains(&e.line) || names_topic(spec, e.line, &terms)),
            );
            found.extend(bounds(spec, rule, range.clone()));
            blanket(&mut found);
            // Anywhere else, the evidence must name the same component.
            if !found.iter().any(|e| e.kind == EvidenceKind::Affirmed) {
                found.extend(within(all.clone()).filter(|e| {
                    e.kind == EvidenceKind::Affirmed
                        && !range.contains(&e.line)
                        && names_topic(spec, e.line, &terms)
                        && (spec.lines[e.line - 1].kind != LineKind::Code
                            || is_config_example(spec, e.line)
                                && (subject::mentions_any(&spec.lines[e.line - 1].text, &terms)
                                    || is_field(&spec.lines[e.line - 1].text, &e.matched)))
                }));
            }
            if justify {
                found.extend(justifications(spec, &terms));
            }
            let invalid: &[crate::rule::Regex] = protocol
                .map(|p| p.offline.invalid_re.as_slice())
                .unwrap_or_default();
            for e in &mut found {
                let text = &spec.lines[e.line - 1].lower;
                if e.kind == EvidenceKind::Affirmed
                    && invalid.iter().any(|r| r.is_match(text.as_bytes()))
                {
                    e.kind = EvidenceKind::Deferred;
                }
            }
            if !needs.is_empty() {
                // The justification must be written next to the concern or
                // next to the evidence itself.
                let near = |r: Range<usize>| {
                    evidence::find(spec, needs, r)
                        .into_iter()
                        .any(|e| e.kind == EvidenceKind::Affirmed)
                };
                // Beside the evidence, the words count as written: an
                // Alternatives section justifies by what it rejects.
                let beside = |r: Range<usize>| {
                    r.filter(|&k| k >= 1 && k <= spec.lines.len()).any(|k| {
                        needs
                            .iter()
                            .any(|p| p.is_match(spec.lines[k - 1].lower.as_bytes()))
                    })
                };
                let here = near(range.clone());
                for e in &mut found {
                    if e.kind == EvidenceKind::Affirmed
                        && !here
                        && !beside(spec.block_lines(e.line))
                    {
                        e.kind = EvidenceKind::Deferred;
                    }
                }
            }
        }
    }
    if let Some((a, b)) = concern.lines {
        let absent = concern.subject.first().is_some_and(|m| states_absence(m));
        own_item_only(spec, (a, b), absent, &mut found);
    }
    // One piece of evidence per line: the most affirmative.
    found.sort_by_key(|e| (e.line, e.kind != EvidenceKind::Affirmed));
    found.dedup_by_key(|e| e.line);
    Some((found, range))
}

/// Evidence that is about another item than the concern's own:
///
/// - a row of a schema table (a header naming the column or field and its
///   type) is one field, and another row describes another: `| id |
///   bigint |` says nothing about `| amount | double |` below it;
/// - an item of a list that names its component first (`- **Name**: ...`,
///   `` - `name`: ... ``, `- Name: ...`) is that component (with its nested
///   items), and another item of the list is another component;
/// - when the concern's own lines say the safeguard is absent ("no login
///   needed", "without a timeout"), the design chose that for this item,
///   and a safeguard stated elsewhere is about something else; only its
///   own paragraph can qualify it. `absent` says the attacker's own match
///   states the absence (see `states_absence`), which the safeguard
///   lexicon may not read as a denial ("no login needed" names no
///   safeguard pattern).
fn own_item_only(spec: &Spec, (a, b): (usize, usize), absent: bool, found: &mut Vec<Evidence>) {
    let line = |n: usize| &spec.lines[n - 1];
    if a == b && a >= 1 && a <= spec.lines.len() && is_schema_row(spec, a) {
        let block = line(a).block;
        found.retain(|e| {
            e.line == a || line(e.line).kind != LineKind::Table || line(e.line).block != block
        });
    }
    // An item of a component list ("- **Orders DB**: one Postgres ...")
    // is one component; the next item ("- **Web**: 3 replicas") is another.
    if let Some(item) = labelled_item(spec, a)
        && b < item.end
    {
        let list = spec.block_lines(a);
        found.retain(|e| !list.contains(&e.line) || item.contains(&e.line));
    }
    let denied_here = absent
        || found
            .iter()
            .any(|e| e.kind == EvidenceKind::Negated && (a..=b).contains(&e.line));
    if denied_here {
        let own = spec.block_lines(a).start..spec.block_lines(b).end;
        found.retain(|e| e.kind != EvidenceKind::Affirmed || own.contains(&e.line));
    }
}

/// Whether the text the attacker matched states that a safeguard is
/// absent: "no login needed", "without a timeout", "with no upper bound",
/// "is not signed", "unauthenticated". The concern is then about a choice
/// the spec made for this item. A denial of something else ("holds no
/// local copy") is the design element, not the missing safeguard.
fn states_absence(matched: &str) -> bool {
    // Adjectives that deny a safeguard by themselves.
    const UNGUARDED: &[&str] = &[
        "unauthenticated",
        "unauthorized",
        "unauthorised",
        "unsigned",
        "unencrypted",
        "unverified",
        "unvalidated",
        "unchecked",
        "unbounded",
        "unlimited",
        "anonymous",
        "anonymously",
    ];
    // What a safeguard is called: word starts long enough to name nothing
    // else ("timeout", "auth...", "encrypt..."), and short words only as
    // whole words ("sign" of "sign-in", "log" of "log in", "check", but
    // not "significant", "logo" or "checkout").
    const SAFEGUARD_STARTS: &[&str] = &[
        "login",
        "logged",
        "logging",
        "signin",
        "signed",
        "signing",
        "signat",
        "auth",
        "password",
        "credential",
        "token",
        "mfa",
        "2fa",
        "captcha",
        "permission",
        "access",
        "timeout",
        "deadline",
        "limit",
        "bound",
        "backoff",
        "retr",
        "encrypt",
        "tls",
        "ssl",
        "https",
        "verif",
        "validat",
        "expir",
        "ttl",
        "lock",
        "approv",
        "review",
        "confirm",
        "quota",
        "throttl",
        "alert",
        "monitor",
        "backup",
        "audit",
        "idempot",
        "dedup",
    ];
    const SAFEGUARD_WORDS: &[&str] = &[
        "log", "sign", "key", "keys", "time", "cap", "caps", "capped", "rate", "check", "checks",
        "checked", "checking",
    ];
    let names_safeguard =
        |n: &str| SAFEGUARD_WORDS.contains(&n) || SAFEGUARD_STARTS.iter().any(|s| n.starts_with(s));
    const FILLER: &[&str] = &[
        "a", "an", "the", "any", "upper", "explicit", "further", "be", "is",
    ];
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    if words(matched)
        .iter()
        .any(|w| UNGUARDED.contains(&w.as_str()))
    {
        return true;
    }
    // A denial (the sentence reader's: "no", "without", "n't"...), then a
    // safeguard's name within the next two words that carry meaning.
    super::sentence::denials(matched).into_iter().any(|d| {
        words(&matched[d.end..])
            .iter()
            .filter(|n| !FILLER.contains(&n.as_str()))
            .take(2)
            .any(|n| names_safeguard(n))
    })
}

/// The lines of the list item that holds line `n` (its wrapped lines
/// included), when the item opens with a label naming what it describes:
/// `- **web-api**: ...`, `` - `orders-db`: ... ``, `- Storage: ...`.
fn labelled_item(spec: &Spec, n: usize) -> Option<Range<usize>> {
    // Bytes and ASCII classes: a counted Unicode class compiles to a large
    // automaton, and this runs once per process.
    static LABEL: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(
            r"(?-u)^\s*(?:[-*+]|\d+\.)\s+(?:\*\*[^*]{1,60}:\*\*|\*\*[^*]{1,60}\*\*:|`[^`]{1,60}`:|[A-Za-z][\w /-]{0,40}:)\s",
        )
        .expect("a valid pattern")
    });
    let line = spec.line(n)?;
    if line.kind != LineKind::ListItem {
        return None;
    }
    let block = spec.block_lines(n);
    let start = (block.start..=n)
        .rev()
        .find(|&k| super::sentence::is_list_item(&spec.lines[k - 1].text))?;
    if !LABEL.is_match(spec.lines[start - 1].text.as_bytes()) {
        return None;
    }
    // Nested items belong to it; the next item at its depth or less ends it.
    let indent = |k: usize| {
        let t = &spec.lines[k - 1].text;
        t.len() - t.trim_start().len()
    };
    let end = (start + 1..block.end)
        .find(|&k| {
            super::sentence::is_list_item(&spec.lines[k - 1].text) && indent(k) <= indent(start)
        })
        .unwrap_or(block.end);
    Some(start..end)
}

/// Is line `n` a row of a table whose header names fields and their types
/// (`| Column | Type |`, `| Field | Type | Notes |`)?
fn is_schema_row(spec: &Spec, n: usize) -> bool {
    let line = &spec.lines[n - 1];
    if line.kind != LineKind::Table {
        return false;
    }
    let header = &spec.lines[spec.block_lines(n).start - 1].lower;
    let cells: Vec<&str> = header.split('|').map(str::trim).collect();
    let starts = |words: &[&str]| cells.iter().any(|c| words.iter().any(|w| c.starts_with(w)));
    starts(&["column", "field", "member", "attribute", "property"]) && starts(&["type"])
}

/// One evaluator's vote on one concern. The reasoning says only what this
/// evaluator found: the concern's detail already says what is missing.
pub fn vote(spec: &Spec, catalog: &Catalog, standard: Standard, concern: &Concern) -> Vote {
    let evaluator = standard.name().to_string();
    let concern_cites: Vec<usize> = concern.lines.map(|(a, b)| vec![a, b]).unwrap_or_default();
    let Some((found, _)) = evidence(spec, catalog, standard, concern) else {
        return Vote {
            evaluator,
            decision: Decision::Accept,
            reasoning: "no offline rule covers this concern, so no mitigation can be cited."
                .to_string(),
            cites: concern_cites,
        };
    };
    let quote = |n: usize| format!("line {n} \"{}\"", excerpt(&spec.lines[n - 1].text));
    let affirmed: Vec<&Evidence> = found
        .iter()
        .filter(|e| e.kind == EvidenceKind::Affirmed)
        .collect();
    if !affirmed.is_empty() {
        // Prefer evidence next to the concern, then the earliest.
        let mut best = affirmed.clone();
        best.sort_by_key(|e| {
            let d = concern
                .lines
                .map(|(a, b)| {
                    if e.line < a {
                        a - e.line
                    } else {
                        e.line.saturating_sub(b)
                    }
                })
                .unwrap_or(0);
            (d, e.line)
        });
        let cites: Vec<usize> = best.iter().take(2).map(|e| e.line).collect();
        let quotes = cites
            .iter()
            .map(|&n| quote(n))
            .collect::<Vec<_>>()
            .join("; ");
        return Vote {
            evaluator,
            decision: Decision::Dismiss,
            reasoning: format!(
                "handled {} ({}): {quotes}.",
                standard.describe(),
                best[0].matched.to_lowercase(),
            ),
            cites,
        };
    }
    if let Some(neg) = found.iter().find(|e| e.kind == EvidenceKind::Negated) {
        return Vote {
            evaluator,
            decision: Decision::Accept,
            reasoning: format!("{} says the safeguard is absent.", quote(neg.line)),
            cites: [concern_cites, vec![neg.line]].concat(),
        };
    }
    if let Some(d) = found.iter().find(|e| e.kind == EvidenceKind::Deferred)
        && standard != Standard::Strict
    {
        return Vote {
            evaluator,
            decision: Decision::Defer,
            reasoning: format!(
                "{} mentions it only as an open question, non-goal, alternative or future work; the team must decide.",
                quote(d.line)
            ),
            cites: vec![d.line],
        };
    }
    let noted = concern
        .filter
        .as_ref()
        .map(|f| {
            format!(
                " It was dismissed before (\"{}\"), but this text does not bear that out.",
                excerpt(&f.explanation)
            )
        })
        .unwrap_or_default();
    let deferred = if found.iter().any(|e| e.kind == EvidenceKind::Deferred) {
        " (a mention that is deferred or not a valid dismissal under the protocol does not count)"
    } else {
        ""
    };
    Vote {
        evaluator,
        decision: Decision::Accept,
        reasoning: format!(
            "no safeguard stated {}{deferred}.{noted}",
            standard.describe()
        ),
        cites: concern_cites,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn an_unlabelled_block_counts_as_config_by_its_content() {
        let doc = "# D\n\n```\nkind: Hook\nspec:\n  timeoutSeconds: 30\n```\n\n```\nPOST /v1/jobs HTTP/1.1\nHost: jobs.example\nTimeout: 30\n```\n\n```\n$ job-cli run --timeout 30\nstarted: job 7\n```\n\n```\nretry the call until it answers\nthen store the result\n```\n\n```text\nname: a\ntimeout: 5\n```\n";
        let spec = Spec::parse(None, doc.to_string());
        let at = |needle: &str| {
            spec.lines
                .iter()
                .position(|l| l.text.contains(needle))
                .expect("line in the doc")
                + 1
        };
        // YAML with no info string, and behind a `text` tag, is config.
        assert!(is_config_example(&spec, at("timeoutSeconds")));
        assert!(is_config_example(&spec, at("timeout: 5")));
        // An HTTP message, a shell session and prose in a fence are not.
        assert!(!is_config_example(&spec, at("Timeout: 30")));
        assert!(!is_config_example(&spec, at("job-cli")));
        assert!(!is_config_example(&spec, at("retry the call")));
    }

    #[test]
    fn a_match_that_states_an_absence_is_recognised() {
        for m in [
            "no login needed",
            "without a timeout",
            "callers aren't checked",
            "Unauthenticated upload",
            "tokens never expire",
            "with no upper bound",
            "is not signed",
            "no sign-in required",
        ] {
            assert!(states_absence(m), "{m}");
        }
        // A denial of something else is the design element, and words
        // that only begin like a safeguard's name are not one.
        for m in [
            "holds no local copy",
            "never leaves the region",
            "no significant load",
            "without checkout",
            "no logo",
            "no more than three retries",
            "POST /notes",
            "known hosts",
            "retries on timeout",
            "nothing-else",
        ] {
            assert!(!states_absence(m), "{m}");
        }
    }

    #[test]
    fn a_cell_is_computed_once_however_many_threads_ask() {
        let cells: Cells<u8, usize> = Mutex::new(HashMap::new());
        let calls = AtomicUsize::new(0);
        let got: Vec<Arc<usize>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        once(&cells, 1, || {
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            calls.fetch_add(1, Ordering::SeqCst) + 100
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(got.iter().all(|g| Arc::ptr_eq(g, &got[0]) && **g == 100));
        // Another key is another computation.
        assert_eq!(*once(&cells, 2, || 7), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
