//! The offline attacker: each persona's rule pack finds the design elements
//! it cares about and raises a concern where the safeguard is not stated
//! close by. Aggressive by design: it only looks in the immediate block
//! (or the rule's scope); evaluators look wider.

use super::checks;
use super::evidence::{self, EvidenceKind};
use super::subject;
use crate::concern::RawConcern;
use crate::persona::Persona;
use crate::rule::{Rule, Scope};
use crate::spec::{LineKind, SectionRole, Spec};
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
    matched: String,
}

/// Every concern one persona raises on the spec.
pub fn attack(spec: &Spec, persona: &Persona) -> Vec<RawConcern> {
    let mut out = Vec::new();
    for rule in &persona.rules {
        out.extend(attack_rule(spec, rule));
    }
    out
}

/// The first line of a Goals section matching one of the rule's `goals`.
pub fn goal_line(spec: &Spec, rule: &Rule) -> Option<usize> {
    spec.lines
        .iter()
        .find(|l| {
            spec.sections[l.section].role == SectionRole::Goals
                && !matches!(l.kind, LineKind::Heading | LineKind::Blank)
                && rule.goals.iter().any(|g| g.is_match(l.lower.as_bytes()))
        })
        .map(|l| l.number)
}

/// The lines that fire a rule: trigger matches on design lines, kept when
/// the rule's `near` patterns also match the block. Public for `explain`.
pub fn trigger_hits(spec: &Spec, rule: &Rule) -> Vec<(usize, String)> {
    let mut hits = Vec::new();
    for line in &spec.lines {
        if !kind_allowed(rule, line.kind) {
            continue;
        }
        let role = spec.sections[line.section].role;
        if !matches!(
            role,
            SectionRole::Normal | SectionRole::Preamble | SectionRole::Summary
        ) {
            continue;
        }
        if let Some(m) = rule.trigger(&line.lower) {
            if !rule.near.is_empty() {
                let block = spec.block_lines(line.number);
                let near = (block.start..block.end).any(|n| {
                    rule.near
                        .iter()
                        .any(|r| r.is_match(spec.lines[n - 1].lower.as_bytes()))
                });
                if !near {
                    continue;
                }
            }
            hits.push((line.number, line.text[m].to_string()));
        }
    }
    hits
}

/// The first and last line of the group of trigger hits `line` belongs to.
pub fn cluster_of(spec: &Spec, rule: &Rule, line: usize) -> (usize, usize) {
    let hits: Vec<Hit> = trigger_hits(spec, rule)
        .into_iter()
        .map(|(line, matched)| Hit { line, matched })
        .collect();
    clusters(spec, &hits)
        .into_iter()
        .find(|c| c.iter().any(|h| h.line == line))
        .map(|c| (c[0].line, c[c.len() - 1].line))
        .unwrap_or((line, line))
}

/// The concerns one rule raises.
pub fn attack_rule(spec: &Spec, rule: &Rule) -> Vec<RawConcern> {
    let mut out = Vec::new();
    if !rule.requires.is_empty()
        && !rule
            .requires
            .iter()
            .any(|r| r.is_match(spec.lower.as_bytes()))
    {
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
    let max = rule.def.max.unwrap_or(usize::MAX);
    // `max` counts concerns with no safeguard close by; those the spec
    // seems to answer are raised too, for the evaluators to dismiss.
    let mut open = 0;
    if let Some(check) = rule.def.check {
        for c in checks::run(spec, rule, check) {
            if open >= max {
                break;
            }
            let hits = [
                Hit {
                    line: c.first,
                    matched: c.what.clone(),
                },
                Hit {
                    line: c.last,
                    matched: c.what.clone(),
                },
            ];
            let cluster = if c.first == c.last {
                &hits[..1]
            } else {
                &hits[..]
            };
            if let Some((k, stated)) = concern_for(spec, rule, cluster, Some(&c.note), goal) {
                open += usize::from(!stated);
                out.push(k);
            }
        }
        return out;
    }
    let hits: Vec<Hit> = trigger_hits(spec, rule)
        .into_iter()
        .map(|(line, matched)| Hit { line, matched })
        .collect();
    // Findings in the design's details come before those in a summary or
    // overview, which tells the same design briefly.
    let mut ordered = clusters(spec, &hits);
    ordered.sort_by_key(|c| {
        let role = spec.sections[spec.lines[c[0].line - 1].section].role;
        (
            matches!(role, SectionRole::Summary | SectionRole::Preamble),
            c[0].line,
        )
    });
    for cluster in ordered {
        if open >= max {
            break;
        }
        if let Some((c, stated)) = concern_for(spec, rule, cluster, None, goal) {
            open += usize::from(!stated);
            out.push(c);
        }
    }
    out
}

/// Group hits by section (public for `explain`), splitting runs with gaps wider than `CLUSTER_GAP`.
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
    let mut found = evidence::find(spec, &rule.safeguards, scope);
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

fn concern_for(
    spec: &Spec,
    rule: &Rule,
    cluster: &[Hit],
    note: Option<&str>,
    goal: Option<usize>,
) -> Option<(RawConcern, bool)> {
    let first = cluster.first()?.line;
    let last = cluster.last()?.line;
    let found = safeguard_evidence(spec, rule, first, last);
    // Issue 9: the attacker is aggressive. A safeguard stated close by no
    // longer holds the concern back: it is raised as a question and the
    // evaluators dismiss it, citing that line, so the store learns offline.
    let stated = found.iter().any(|e| e.kind == EvidenceKind::Affirmed);
    let section_idx = spec.lines[first - 1].section;
    let section = spec.section_path(section_idx);
    let mut subject: Vec<String> = Vec::new();
    for h in cluster {
        let m = h.matched.trim().to_lowercase();
        if !subject.contains(&m) {
            subject.push(m);
        }
    }
    for n in first..=last {
        for c in subject::components(&spec.lines[n - 1].text) {
            if !subject.contains(&c) && subject.len() < 6 {
                subject.push(c);
            }
        }
    }
    let what = cluster[0].matched.trim().to_string();
    // A subject cut inside `code` would leave a dangling backtick in the title.
    let what_title = if what.matches('`').count() % 2 == 1 {
        what.replace('`', "")
    } else {
        what.to_string()
    };
    let title = rule.def.title.replace("{subject}", &what_title);
    let where_ = if first == last {
        format!("Line {first}")
    } else {
        format!("Lines {first}-{last}")
    };
    let mut detail = if stated {
        format!(
            "{where_} ({section}) describe{} {what}: does the spec state {}?",
            if first == last { "s" } else { "" },
            rule.def.missing.trim_end_matches('.'),
        )
    } else {
        format!(
            "{where_} ({section}) describe{} {what}, but the spec does not state {}.",
            if first == last { "s" } else { "" },
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
        },
        stated,
    ))
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
}
