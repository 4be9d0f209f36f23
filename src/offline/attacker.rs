//! The offline attacker: each persona's rule pack finds the design elements
//! it cares about and raises a concern where the safeguard is not stated
//! close by. Aggressive by design: it only looks in the immediate block
//! (or the rule's scope); evaluators look wider.

use super::checks;
use super::evidence::{self, EvidenceKind};
use super::sentence;
use super::subject;
use crate::concern::RawConcern;
use crate::persona::Persona;
use crate::rule::{Rule, Scope};
use crate::spec::{LineKind, SectionRole, Spec};
use crate::trigger_prefilter::Candidates;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// Lines further apart than this start a new concern for the same rule.
const CLUSTER_GAP: usize = 6;

fn kind_allowed(rule: &Rule, kind: LineKind) -> bool {
    if rule.def.in_kinds.is_empty() {
        return !matches!(kind, LineKind::Heading | LineKind::Blank | LineKind::Html);
    }
    let name = match kind {
        LineKind::Prose => "prose",
        LineKind::ListItem => "list",
        LineKind::Table => "table",
        LineKind::Code => "code",
        LineKind::Heading => "heading",
        LineKind::Blank | LineKind::Html => return false,
    };
    rule.def.in_kinds.iter().any(|k| k == name)
}

struct Hit {
    line: usize,
    /// The trigger match's byte range in the line.
    range: Range<usize>,
    matched: String,
    /// How many different trigger matches the line holds: a line that states
    /// the element in several of the rule's ways states the gap most fully.
    strength: usize,
}

/// Whether a line's section may state the design (not background,
/// alternatives, goals, open questions or process): only there do
/// triggers fire.
fn states_design(spec: &Spec, line: &crate::spec::Line) -> bool {
    spec.sections[line.section].role.states_design()
}

/// The most findings one rule raises on one spec, before one-per-gap
/// (`dedupe`) collapses them. `max` caps only the findings with no
/// safeguard close by; those the spec seems to answer are raised too. A
/// spec that repeats one element thousands of times would otherwise give
/// thousands, and comparing every pair of them grows with the square of
/// the spec. Real specs give a handful.
const MAX_FINDINGS: usize = 64;

/// The most lines one rule's triggers are read on per spec. A rule that
/// has fired on this many lines has stated its finding many times over;
/// reading the rest of a pathological spec (one element repeated through
/// megabytes) only costs time. Real specs stay far below: the largest of
/// 656 KEPs gives every rule together about 3,000 candidate lines.
const MAX_HITS: usize = 2_048;

/// What the trigger prefilter reads of each line: its design text, or
/// nothing outside the design's sections (background, alternatives, test
/// plans...), where no trigger fires (`design_hits_in`).
pub fn prefilter_texts(spec: &Spec) -> Vec<&str> {
    spec.lines
        .iter()
        .map(|l| {
            if states_design(spec, l) && l.kind != LineKind::Blank {
                l.design.as_str()
            } else {
                ""
            }
        })
        .collect()
}

/// Every concern one persona raises on the spec.
pub fn attack(spec: &Spec, persona: &Persona) -> Vec<RawConcern> {
    attack_with(spec, persona, None)
}

/// `attack`, given the candidates of the persona's rules when a prefilter
/// shared with other personas has found them already (see
/// `Catalog::adversary_prefilter`); `None` scans with the persona's own.
pub fn attack_with(
    spec: &Spec,
    persona: &Persona,
    candidates: Option<Vec<Option<Candidates>>>,
) -> Vec<RawConcern> {
    use rayon::prelude::*;
    // Rules in parallel (rayon keeps their order): one persona's rules
    // dominate a huge spec, and personas alone leave cores idle.
    // One pass of the trigger prefilter tells each rule the lines it could
    // fire on; the rule's regexes then only read those.
    let candidates = match candidates {
        Some(c) if c.len() == persona.rules.len() => c,
        _ => match persona.prefilter() {
            Some(p) => p.candidates_par(&prefilter_texts(spec)),
            None => vec![None; persona.rules.len()],
        },
    };
    persona
        .rules
        .par_iter()
        .zip(&candidates)
        .map(|(rule, found)| attack_rule_on(spec, rule, found.as_ref()))
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect()
}

/// The first line of a Goals section matching one of the rule's `goals`.
pub fn goal_line(spec: &Spec, rule: &Rule) -> Option<usize> {
    spec.lines
        .iter()
        .find(|l| {
            spec.sections[l.section].role.states_goals()
                && !matches!(l.kind, LineKind::Heading | LineKind::Blank)
                && rule.goals.is_match(l.lower.as_bytes())
        })
        .map(|l| l.number)
}

/// The lines that fire a rule: trigger matches on design lines, in a
/// sentence that states the design (see `sentence`), kept when the rule's
/// `near` patterns also match the block. Public for `explain`.
pub fn trigger_hits(spec: &Spec, rule: &Rule) -> Vec<(usize, String)> {
    design_hits(spec, rule, None)
        .into_iter()
        .map(|h| (h.line, h.matched))
        .collect()
}

/// `candidates`: the only lines (0-based indices, ascending) that can hold
/// a trigger match and the patterns that can match there (see
/// `TriggerPrefilter`); `None` reads every line with every pattern.
fn design_hits(spec: &Spec, rule: &Rule, candidates: Option<&Candidates>) -> Vec<Hit> {
    match candidates {
        Some(c) => {
            // No line holds the words of any pattern: nothing can fire.
            if c.lines.is_empty() {
                return Vec::new();
            }
            let lines = || c.lines.iter().map(|&i| &spec.lines[i]);
            // Most candidates hold a pattern's words but no match: then
            // nothing fires, and the full regex is never compiled.
            if !rule.triggers_match_any(c.patterns, lines().map(|l| l.design.as_bytes())) {
                return Vec::new();
            }
            design_hits_in(spec, rule, &rule.triggers_for(c.patterns), lines())
        }
        None => design_hits_in(spec, rule, &rule.triggers, spec.lines.iter()),
    }
}

fn design_hits_in<'s>(
    spec: &'s Spec,
    rule: &Rule,
    triggers: &[crate::rule::Regex],
    lines: impl Iterator<Item = &'s crate::spec::Line>,
) -> Vec<Hit> {
    let mut hits = Vec::new();
    // Whether a block matches `near`, worked out once per block: a spec of
    // one huge paragraph must not be rescanned for every line.
    let mut near_blocks: HashMap<usize, bool> = HashMap::new();
    for line in lines {
        if !kind_allowed(rule, line.kind) {
            continue;
        }
        if !states_design(spec, line) {
            continue;
        }
        let found = design_matches(spec, rule, triggers, line);
        let mut design = found.into_iter();
        let Some(m) = design.next() else {
            continue;
        };
        if !rule.near.is_empty() {
            let near = *near_blocks.entry(line.block).or_insert_with(|| {
                spec.block_lines(line.number)
                    .any(|n| rule.near.is_match(spec.lines[n - 1].lower.as_bytes()))
            });
            if !near {
                continue;
            }
        }
        // The rest of the line's design matches, each read once.
        let mut distinct: HashSet<&str> = HashSet::from([&line.design[m.clone()]]);
        distinct.extend(design.map(|t| &line.design[t]));
        let strength = distinct.len();
        hits.push(Hit {
            line: line.number,
            matched: line.text[m.clone()].to_string(),
            range: m,
            strength,
        });
        if hits.len() >= MAX_HITS {
            break;
        }
    }
    hits
}

/// How many times a pattern looks again inside a match the sentence reading
/// rejected, per line: bounded so a line costs linear time.
const RETRIES_PER_LINE: usize = 8;

/// The trigger matches in a line's design text that state the design, in
/// pattern order. Where a match is rejected (negated, hypothetical...), the
/// pattern looks again from just after the match's start: a long match
/// holding a denial must not hide a shorter one inside it. A denial inside
/// a match rejects it only when the pattern matches there without the
/// denial too ("tokens are never written to logs" for `tokens ... logs`);
/// a pattern that needs it ("API keys never expire") states a flaw.
fn design_matches(
    spec: &Spec,
    rule: &Rule,
    triggers: &[crate::rule::Regex],
    line: &crate::spec::Line,
) -> Vec<std::ops::Range<usize>> {
    use regex_automata::Input;
    let text = line.design.as_str();
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut excluded: Option<bool> = None;
    let mut retries = 0;
    // Past a match (one byte past an empty one).
    let after = |m: &std::ops::Range<usize>| m.end.max(m.start + 1);
    for r in triggers {
        let mut pos = 0;
        while pos <= bytes.len() {
            let Some(m) = r.search(&Input::new(bytes).span(pos..bytes.len())) else {
                break;
            };
            let m = m.range();
            if *excluded.get_or_insert_with(|| rule.excludes(text)) {
                return Vec::new();
            }
            // An exclude also reads the match's clause where it is wrapped
            // onto the line above or below (built only for a rule that has
            // excludes: the join allocates).
            if !rule.def.exclude.is_empty()
                && evidence::wrapped_clause(spec, line.number, text, m.clone())
                    .is_some_and(|s| rule.excludes(&s))
            {
                pos = after(&m);
                continue;
            }
            let reading = sentence::not_design(spec, line.number, m.start, m.end);
            let states = match reading {
                None => true,
                Some(sentence::Reading::NegatedInside) => {
                    let plain = sentence::without_denials(text, m.clone());
                    !triggers.iter().any(|t| {
                        t.search(&Input::new(plain.as_bytes()).span(m.start..bytes.len()))
                            .is_some_and(|p| p.start() < m.end)
                    })
                }
                Some(_) => false,
            };
            if states {
                pos = after(&m);
                out.push(m);
            } else if retries < RETRIES_PER_LINE {
                retries += 1;
                pos = m.start + 1;
                while pos < bytes.len() && !text.is_char_boundary(pos) {
                    pos += 1;
                }
            } else {
                pos = after(&m);
            }
        }
    }
    out
}

/// The first and last line of the group of trigger hits `line` belongs to.
pub fn cluster_of(spec: &Spec, rule: &Rule, line: usize) -> (usize, usize) {
    let hits = design_hits(spec, rule, None);
    clusters(spec, &hits)
        .into_iter()
        .find(|c| c.iter().any(|h| h.line == line))
        .map(|c| (c[0].line, c[c.len() - 1].line))
        .unwrap_or((line, line))
}

/// What the attacker already found while looking for a rule's safeguard,
/// so that many findings in one section or block scan it once (linear time
/// on huge specs).
struct Looked<'s> {
    spec: &'s Spec,
    rule: &'s Rule,
    universal: Option<Vec<evidence::Evidence>>,
    scopes: HashMap<(usize, usize), Vec<evidence::Evidence>>,
}

impl Looked<'_> {
    fn evidence(&mut self, first: usize, last: usize) -> Vec<evidence::Evidence> {
        let scope = scope_lines(self.spec, self.rule.def.scope, first, last);
        let (spec, rule) = (self.spec, self.rule);
        let mut found = self
            .scopes
            .entry((scope.start, scope.end))
            .or_insert_with(|| {
                evidence::and_headings(
                    evidence::find(spec, &rule.safeguards, scope.clone()),
                    spec,
                    rule,
                    scope,
                )
            })
            .clone();
        found.extend(
            self.universal
                .get_or_insert_with(|| evidence::universal(spec, &rule.safeguards))
                .iter()
                .cloned(),
        );
        found
    }
}

/// The concerns one rule raises.
pub fn attack_rule(spec: &Spec, rule: &Rule) -> Vec<RawConcern> {
    attack_rule_on(spec, rule, None)
}

/// `attack_rule`, reading only the `candidates` lines for triggers (see
/// `design_hits`).
fn attack_rule_on(spec: &Spec, rule: &Rule, candidates: Option<&Candidates>) -> Vec<RawConcern> {
    let mut out = Vec::new();
    // No line holds the words of a trigger pattern: nothing can fire
    // (`design_hits`), so the document is not searched for the rule's
    // `requires` and goals, which cost more than the rest of such a rule.
    if rule.def.check.is_none() && candidates.is_some_and(|c| c.lines.is_empty()) {
        return out;
    }
    if !rule.requires.is_empty() && !rule.requires.is_match(spec.lower.as_bytes()) {
        return out;
    }
    let goal = if rule.goals.is_empty() {
        None
    } else {
        match goal_line(spec, rule) {
            Some(g) => Some(g),
            None => return out,
        }
    };
    let mut looked = Looked {
        spec,
        rule,
        universal: None,
        scopes: HashMap::new(),
    };
    let max = rule.def.max.unwrap_or(usize::MAX);
    // `max` counts concerns with no safeguard close by; those the spec
    // seems to answer are raised too, for the evaluators to dismiss.
    let mut open = 0;
    if let Some(check) = rule.def.check {
        for c in checks::run(spec, rule, check) {
            if open >= max || out.len() >= MAX_FINDINGS {
                break;
            }
            let hit = |line: usize| Hit {
                line,
                range: 0..0,
                matched: c.what.clone(),
                strength: 1,
            };
            let hits = [hit(c.first), hit(c.last)];
            let cluster = if c.first == c.last {
                &hits[..1]
            } else {
                &hits[..]
            };
            if let Some((k, stated)) =
                concern_for(spec, rule, cluster, Some(&c.note), goal, &mut looked)
            {
                open += usize::from(!stated);
                out.push(k);
            }
        }
        return out;
    }
    let hits = design_hits(spec, rule, candidates);
    // Findings in the design's details come before those in a summary or
    // overview, which tells the same design briefly, and before a mention
    // only in a diagram, table or code block.
    let mut ordered = clusters(spec, &hits);
    ordered.sort_by_key(|c| {
        let role = spec.sections[spec.lines[c[0].line - 1].section].role;
        let only_figure = c.iter().all(|h| {
            matches!(
                spec.lines[h.line - 1].kind,
                LineKind::Code | LineKind::Table
            )
        });
        // The section about the element ("Query API" under "4.2 Query
        // API") is where its details are.
        let heading = spec.sections[spec.lines[c[0].line - 1].section]
            .heading
            .to_lowercase();
        let words: Vec<&str> = heading
            .split(|ch: char| !ch.is_alphanumeric())
            .filter(|w| w.len() >= 3 && w.chars().any(|ch| ch.is_alphabetic()))
            .collect();
        let lower = spec.lines[c[0].line - 1].text.to_lowercase();
        let covered = words.iter().filter(|w| lower.contains(**w)).count();
        let own_section = if words.is_empty() {
            0
        } else {
            100 * covered / words.len()
        };
        // A line that matches several of the rule's triggers ("session
        // cookie" and "SameSite=None") states the gap more fully than a
        // passing mention of one.
        let strength = c.iter().map(|h| h.strength).max().unwrap_or(1);
        (
            role.is_brief(),
            only_figure,
            std::cmp::Reverse(strength),
            std::cmp::Reverse(own_section),
            c[0].line,
        )
    });
    // One concern per gap: a second finding about the same subject is the
    // same gap told again.
    let mut raised: HashSet<String> = HashSet::new();
    let mut norm = crate::store::similarity::Normaliser::new();
    for cluster in ordered {
        if open >= max || out.len() >= MAX_FINDINGS {
            break;
        }
        if let Some((c, stated)) = concern_for(spec, rule, cluster, None, goal, &mut looked) {
            // One concern per gap: the same title again, in a summary, a
            // figure or another section, is the same gap told again; so is
            // one differing only in word endings ("retry", "retried").
            if raised.insert(norm.terms(&c.title).join(" ")) {
                open += usize::from(!stated);
                out.push(c);
            }
        }
    }
    out
}

/// Group hits by section, splitting runs with gaps wider than `CLUSTER_GAP`.
fn clusters<'h>(spec: &Spec, hits: &'h [Hit]) -> Vec<&'h [Hit]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=hits.len() {
        let split = i == hits.len()
            || spec.lines[hits[i].line - 1].section != spec.lines[hits[i - 1].line - 1].section
            || hits[i].line - hits[i - 1].line > CLUSTER_GAP;
        if split {
            out.push(&hits[start..i]);
            start = i;
        }
    }
    out
}

fn scope_lines(spec: &Spec, scope: Scope, first: usize, last: usize) -> Range<usize> {
    match scope {
        Scope::Block => {
            let a = spec.block_lines(first);
            let b = spec.block_lines(last);
            a.start..b.end
        }
        Scope::Section => spec.section_lines(spec.lines[first - 1].section),
        Scope::Document => 1..spec.lines.len() + 1,
    }
}

/// What the attacker finds when it looks for the rule's safeguard around
/// lines `first..=last`: its scope, plus blanket policies anywhere.
fn safeguard_evidence(
    spec: &Spec,
    rule: &Rule,
    first: usize,
    last: usize,
) -> Vec<evidence::Evidence> {
    let scope = scope_lines(spec, rule.def.scope, first, last);
    let mut found = evidence::and_headings(
        evidence::find(spec, &rule.safeguards, scope.clone()),
        spec,
        rule,
        scope,
    );
    found.extend(evidence::universal(spec, &rule.safeguards));
    found
}

/// The safeguard line that stops the attacker raising a concern about
/// lines `first..=last`.
pub fn held_back_by(
    spec: &Spec,
    rule: &Rule,
    first: usize,
    last: usize,
) -> Option<evidence::Evidence> {
    safeguard_evidence(spec, rule, first, last)
        .into_iter()
        .find(|e| e.kind == EvidenceKind::Affirmed)
}

/// Most components a concern's subject keeps.
const SUBJECT_TERMS: usize = 6;

/// How sure the attacker is that the finding is a real gap, from 0 to 1: a
/// design detail stated in prose, or a spec that says the safeguard is
/// absent, is surer than a summary line, a diagram or a table cell; a
/// finding with its safeguard stated close by is least sure.
fn confidence(spec: &Spec, cluster: &[Hit], found: &[evidence::Evidence]) -> f64 {
    let first = &spec.lines[cluster[0].line - 1];
    let mut c: f64 = 0.6;
    let role = spec.sections[first.section].role;
    if role == SectionRole::Normal {
        c += 0.15;
    } else if role.is_brief() {
        c -= 0.15;
    }
    if cluster.iter().all(|h| {
        matches!(
            spec.lines[h.line - 1].kind,
            LineKind::Code | LineKind::Table
        )
    }) {
        c -= 0.1;
    }
    if cluster.len() > 1 {
        c += 0.05;
    }
    // A safeguard stated close by makes the gap a question, not a finding:
    // of two tellings of one gap, the unanswered one is kept (see `dedupe`).
    if found.iter().any(|e| e.kind == EvidenceKind::Affirmed) {
        c -= 0.2;
    }
    if found.iter().any(|e| e.kind == EvidenceKind::Negated) {
        c += 0.15;
    } else if found.iter().any(|e| e.kind == EvidenceKind::Deferred) {
        c += 0.05;
    }
    (c.clamp(0.2, 0.95) * 100.0).round() / 100.0
}

fn concern_for(
    spec: &Spec,
    rule: &Rule,
    cluster: &[Hit],
    note: Option<&str>,
    goal: Option<usize>,
    looked: &mut Looked,
) -> Option<(RawConcern, bool)> {
    let first = cluster.first()?.line;
    let last = cluster.last()?.line;
    let found = looked.evidence(first, last);
    // Issue 9: the attacker is aggressive. A safeguard stated close by no
    // longer holds the concern back: it is raised as a question and the
    // evaluators dismiss it, citing that line, so the store learns offline.
    let stated = found.iter().any(|e| e.kind == EvidenceKind::Affirmed);
    let section_idx = spec.lines[first - 1].section;
    let section = spec.section_path(section_idx);
    let mut subject: Vec<String> = Vec::new();
    for h in cluster {
        if subject.len() >= SUBJECT_TERMS {
            break;
        }
        let m = h.matched.trim().to_lowercase();
        if !subject.contains(&m) {
            subject.push(m);
        }
    }
    'lines: for n in first..=last {
        for c in subject::components(&spec.lines[n - 1].text) {
            if subject.len() >= SUBJECT_TERMS {
                break 'lines;
            }
            if !subject.contains(&c) {
                subject.push(c);
            }
        }
    }
    let what = match &cluster[0] {
        h if h.range.is_empty() => subject::clean(&h.matched, 0..h.matched.len()),
        h => subject::clean(&spec.lines[h.line - 1].text, h.range.clone()),
    };
    let what = if what.is_empty() {
        h_matched(cluster)
    } else if what
        .chars()
        .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        && !cluster[0].range.is_empty()
    {
        // A bare word ("retries") names no element; the component named
        // right after it does ("retries `SyncJob`"). A code span, a type
        // (`VARCHAR(255)`) or a call names itself.
        let line = &spec.lines[cluster[0].line - 1].text;
        match subject::named_after(line, cluster[0].range.end) {
            Some(name) => format!("{what} {name}"),
            None => what,
        }
    } else {
        what
    };
    // A route, a path or a code span can lead a sentence; a phrase such as
    // "without sign-in" cannot, so it takes the rule's other form.
    let template = match &rule.def.title_unnamed {
        Some(t) if !subject::names_itself(&what) => t,
        _ => &rule.def.title,
    };
    // A title that sets the subject as a noun ("No timeout on {subject}")
    // cannot take a match that opens on its verb ("is down, the worker
    // waits"): it names what stands before the verb; a parenthesised
    // subject reads either way. The detail keeps the match as written.
    let noun = match &cluster[0] {
        h if !template.contains("({subject})") && !h.range.is_empty() => {
            subject::subject_before_verb(&spec.lines[h.line - 1].text, h.range.clone())
        }
        _ => None,
    };
    let title =
        subject::capitalise(&template.replace("{subject}", noun.as_deref().unwrap_or(&what)));
    let where_ = if first == last {
        format!("Line {first}")
    } else {
        format!("Lines {first}-{last}")
    };
    // The subject is often a verb phrase ("retried immediately until they
    // succeed"), so the detail sets it after a colon rather than as the
    // object of "describes".
    let told = what.trim_end_matches('.');
    let mut detail = if stated {
        format!(
            "{where_} ({section}): {told}. Does the spec state {}?",
            rule.def.missing.trim_end_matches('.'),
        )
    } else {
        format!(
            "{where_} ({section}): {told}. The spec does not state {}.",
            rule.def.missing.trim_end_matches('.'),
        )
    };
    if let Some(note) = note {
        detail.push(' ');
        detail.push_str(note.trim());
    }
    if let Some(g) = goal {
        detail.push_str(&format!(
            " The goal on line {g} (\"{}\") is not reached by this design.",
            excerpt(&spec.lines[g - 1].text)
        ));
    }
    detail.push(' ');
    detail.push_str(rule.def.impact.trim());
    if stated {
    } else if let Some(neg) = found.iter().find(|e| e.kind == EvidenceKind::Negated) {
        detail.push_str(&format!(
            " Line {} says it is absent (\"{}\").",
            neg.line,
            excerpt(&spec.lines[neg.line - 1].text)
        ));
    } else if let Some(d) = found.iter().find(|e| e.kind == EvidenceKind::Deferred) {
        detail.push_str(&format!(" Line {} only defers it.", d.line));
    }
    Some((
        RawConcern {
            title,
            detail,
            severity: rule.def.severity,
            lines: Some((first, last)),
            rule: Some(rule.id().to_string()),
            section: Some(section),
            subject,
            confidence: Some(confidence(spec, cluster, &found)),
        },
        stated,
    ))
}

fn h_matched(cluster: &[Hit]) -> String {
    cluster[0].matched.trim().replace('`', "")
}

pub(crate) fn excerpt(text: &str) -> String {
    let t = text.trim().trim_start_matches(['-', '*', '|', ' ']).trim();
    if t.chars().count() > 100 {
        let cut: String = t.chars().take(97).collect();
        format!("{cut}...")
    } else {
        t.to_string()
    }
}

/// Is line `n` relevant evidence for a concern with these lines and subject?
/// It is when it sits in the same block as the concern, or within two lines
/// of it, or names the concern's components (or, when the concern names no
/// component, its design element).
pub fn relevant(
    spec: &Spec,
    lines: Option<(usize, usize)>,
    subject_terms: &[String],
    n: usize,
) -> bool {
    let Some(line) = spec.line(n) else {
        return false;
    };
    if let Some((a, b)) = lines {
        if n + 2 >= a && n <= b + 2 {
            return true;
        }
        let block = spec.line(a).map(|l| l.block);
        if block == Some(line.block) {
            return true;
        }
    }
    if super::evidence::is_universal(&line.text) {
        return true;
    }
    // Prefer the concern's component names (Postgres, `orders`, /events):
    // a generic design word like "call" names half the lines of a spec.
    let mut components: Vec<String> = Vec::new();
    if let Some((a, b)) = lines {
        for k in a..=b.min(spec.lines.len()) {
            for c in subject::components(&spec.lines[k - 1].text) {
                if !components.contains(&c) {
                    components.push(c);
                }
            }
        }
    }
    if components.is_empty() {
        components = subject_terms.to_vec();
    }
    subject::mentions_any(&line.text, &components)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_and_goal_sections_do_not_trigger() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let p = cat.persona("burned_oncall").unwrap();
        let rule = p.rule("missing-timeout").unwrap();
        let doc = "# S\n\n## Background\n\nToday the app calls the Billing API directly.\n\n## Goals\n\n- Calls to the Billing API succeed 99.9% of the time.\n\n## Design\n\nThe worker calls the Billing API for each invoice.\n";
        let spec = Spec::parse(None, doc.to_string());
        let hits: Vec<usize> = trigger_hits(&spec, rule).into_iter().map(|h| h.0).collect();
        assert_eq!(hits, vec![13]);
    }

    fn rule(triggers: &str) -> Rule {
        let def: crate::rule::RuleDef = toml::from_str(&format!(
            "id = \"t\"\ntitle = \"t\"\nseverity = \"low\"\nmissing = \"m\"\nimpact = \"i\"\ntriggers = {triggers}\n"
        ))
        .unwrap();
        Rule::compile(def).unwrap()
    }

    fn hit_lines(doc: &str, rule: &Rule) -> Vec<usize> {
        let spec = Spec::parse(None, doc.to_string());
        trigger_hits(&spec, rule).into_iter().map(|h| h.0).collect()
    }

    /// A rule whose trigger words are on no line raises nothing, so the
    /// document is not searched for its `requires`: the list is never
    /// compiled, though the document holds its word.
    #[test]
    fn a_rule_with_no_candidate_line_never_reads_its_requires() {
        let def: crate::persona::PersonaDef = toml::from_str(
            r#"
name = "p"
prefix = "P"
description = "d"
prompt = "p"
[[rules]]
id = "r"
title = "t"
severity = "low"
triggers = ['\bqueue\b']
requires = ['\b(?:kafka|rabbitmq)\b']
missing = "m"
impact = "i"
"#,
        )
        .unwrap();
        let persona = Persona::from_def(def, crate::rule::Origin::User).unwrap();
        let spec = |design: &str| Spec::parse(None, format!("# S\n\n## Design\n\n{design}\n"));
        assert!(attack(&spec("Events go through Kafka."), &persona).is_empty());
        assert!(!persona.rules[0].requires.is_compiled());
        // With a trigger line, the requires decides.
        assert!(attack(&spec("Events go through a queue."), &persona).is_empty());
        assert_eq!(
            attack(&spec("Events go through a Kafka queue."), &persona).len(),
            1
        );
        assert!(persona.rules[0].requires.is_compiled());
    }

    #[test]
    fn a_rule_reads_its_triggers_on_at_most_max_hits_lines() {
        let r = rule(r#"['\bcalls the \w+ api\b']"#);
        let mut doc = String::from("# S\n\n## Design\n\n");
        for i in 0..MAX_HITS + 500 {
            doc.push_str(&format!("Worker {i} calls the Billing API.\n"));
        }
        let lines = hit_lines(&doc, &r);
        assert_eq!(lines.len(), MAX_HITS);
        // The first lines of the spec, in order.
        assert_eq!(lines.first(), Some(&5));
        assert_eq!(lines.last(), Some(&(4 + MAX_HITS)));
    }

    #[test]
    fn a_denial_the_pattern_needs_states_a_flaw() {
        let expiry = rule(r#"['\bkeys?\b(?:[^.]|\.\w)*\bnever expires?\b']"#);
        let doc = "# S\n\n## Design\n\nPersonal API keys never expire.\n";
        assert_eq!(hit_lines(doc, &expiry), vec![5]);
        // A denial in the gap of a pattern still denies it.
        let logs = rule(r#"['\btokens?\b(?:[^.]|\.\w)*\blogs?\b']"#);
        let doc = "# S\n\n## Design\n\nThe token and the email are never written to logs.\n";
        assert!(hit_lines(doc, &logs).is_empty());
    }

    #[test]
    fn a_rejected_long_match_does_not_hide_a_shorter_one_inside_it() {
        // The first match ("caches ... not ... logs") is denied; the pattern
        // looks again from inside it and finds "tokens in logs" stated.
        let logs = rule(r#"['\b(?:caches|tokens)\b(?:[^.]|\.\w)*\blogs\b']"#);
        let doc = "# S\n\n## Design\n\nCaches are not kept, yet tokens go to debug logs.\n";
        assert_eq!(hit_lines(doc, &logs), vec![5]);
    }

    #[test]
    fn a_rule_raises_a_bounded_number_of_findings_on_a_repetitive_spec() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let p = cat.persona("paranoid_security").unwrap();
        let rule = p.rule("missing-authn").unwrap();
        // Every route names a session nearby, so none counts toward `max`.
        let mut doc = String::from("# S\n\n## Design\n\n");
        for i in 0..300 {
            doc.push_str(&format!(
                "`POST /api/items{i}` stores item {i} for the session.\n\nA\n\nB\n\nC\n\nD\n\n"
            ));
        }
        let spec = Spec::parse(None, doc);
        let raised = attack_rule(&spec, rule);
        assert_eq!(raised.len(), MAX_FINDINGS);
    }
}
