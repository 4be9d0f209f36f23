//! The offline fresh-eyes reviewer: reads only the spec and turns what it
//! leaves undecided into clarifying questions, with lines:
//! - items still open under an "Open questions" or "Unresolved" heading;
//! - TBD / TODO / "to be decided" markers in the rest of the document;
//! - requirements that no design section talks about.
//!
//! It sees no concerns and no history, and it is linear in the spec.

use crate::fresh_eyes::{ClarifyingQuestion, FreshEyesFinding, QuestionOption};
use crate::spec::{LineKind, SectionRole, Spec};
use regex::Regex;
use std::collections::HashSet;
use std::sync::OnceLock;

/// More questions than this is noise: the assessment says how many more.
pub const MAX_QUESTIONS: usize = 40;

fn placeholder() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)\b(?:tbd|tbc|todo|fixme)\b|\bto be (?:decided|determined|defined|confirmed|agreed)\b|\?\?\?")
            .expect("placeholder pattern")
    })
}

fn answered() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)\b(?:answer(?:ed)?|resolved|decided|decision)\s*[:\-—]|^\s*(?:[-*+]|\d+[.)])\s*\[x\]|~~")
            .expect("answered pattern")
    })
}

fn is_open_questions(heading: &str) -> bool {
    let h = heading.to_lowercase();
    h.contains("open question") || h.contains("unresolved")
}

fn is_requirements(heading: &str) -> bool {
    heading.to_lowercase().contains("requirement")
}

/// The text of a list item or paragraph line without its marker.
fn item_text(s: &str) -> &str {
    let t = s.trim_start();
    let t = t
        .strip_prefix("- [ ]")
        .or_else(|| t.strip_prefix("* [ ]"))
        .unwrap_or(t);
    let t = t.trim_start_matches(['-', '*', '+']).trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let t = if digits > 0 && t[digits..].starts_with(['.', ')']) {
        &t[digits + 1..]
    } else {
        t
    };
    t.trim()
}

fn short(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Content words, cut to 6 letters so inflections meet ("retries"/"retry").
fn stems(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 5)
        .map(|w| w.to_lowercase().chars().take(6).collect())
        .collect()
}

fn options(decide: &str) -> Vec<QuestionOption> {
    vec![
        QuestionOption {
            label: "Decide it in the spec".into(),
            description: decide.into(),
        },
        QuestionOption {
            label: "Defer it explicitly".into(),
            description: "Move it to non-goals or future work, saying why it can wait.".into(),
        },
    ]
}

/// Findings and clarifying questions, plus a one-line assessment.
pub fn review(spec: &Spec) -> (Vec<FreshEyesFinding>, Vec<ClarifyingQuestion>, String) {
    let mut raw: Vec<(usize, String, String, String, Vec<QuestionOption>)> = Vec::new();
    let (mut open, mut markers, mut unmet) = (0, 0, 0);

    // Which sections are design: not requirements, goals, open questions,
    // non-goals, background, alternatives or the preamble.
    let design: Vec<bool> = spec
        .sections
        .iter()
        .map(|s| {
            !is_requirements(&s.heading)
                && !is_open_questions(&s.heading)
                && matches!(s.role, SectionRole::Normal | SectionRole::Summary)
        })
        .collect();
    let in_open = |i: usize| {
        let mut s = Some(i);
        while let Some(k) = s {
            if is_open_questions(&spec.sections[k].heading) {
                return true;
            }
            s = spec.sections[k].parent;
        }
        false
    };
    let in_requirements = |i: usize| {
        let mut s = Some(i);
        while let Some(k) = s {
            if is_requirements(&spec.sections[k].heading) {
                return true;
            }
            s = spec.sections[k].parent;
        }
        false
    };
    let design_stems: HashSet<String> = spec
        .lines
        .iter()
        .filter(|l| design[l.section] && l.kind != LineKind::Heading)
        .flat_map(|l| stems(&l.text))
        .collect();

    let mut last_block = usize::MAX;
    for l in &spec.lines {
        if matches!(l.kind, LineKind::Blank | LineKind::Code | LineKind::Html) {
            continue;
        }
        if in_open(l.section) {
            // One question per list item, or per paragraph.
            let first_of_paragraph = l.kind == LineKind::Prose && l.block != last_block;
            last_block = l.block;
            if l.kind == LineKind::Heading || !(l.kind == LineKind::ListItem || first_of_paragraph)
            {
                continue;
            }
            let text = item_text(&l.text);
            let lower = text.to_lowercase();
            if text.is_empty()
                || answered().is_match(&l.text)
                || matches!(lower.trim_end_matches('.'), "none" | "n/a" | "none yet")
            {
                continue;
            }
            open += 1;
            raw.push((
                l.number,
                text.to_string(),
                format!(
                    "Listed as open under \"{}\" (line {}).",
                    spec.sections[l.section].heading.trim(),
                    l.number
                ),
                "The design depends on the answer; until it is settled, implementers will guess."
                    .into(),
                options(
                    "Answer it where the design needs it and remove it from the open questions.",
                ),
            ));
            continue;
        }
        last_block = l.block;
        if let Some(m) = placeholder().find(&l.text) {
            markers += 1;
            raw.push((
                l.number,
                format!(
                    "What should replace the placeholder \"{}\" on line {}?",
                    m.as_str(),
                    l.number
                ),
                short(&l.text),
                "A placeholder in the design is a decision nobody has made yet.".into(),
                options("Replace the placeholder with the decision."),
            ));
            continue;
        }
        if l.kind == LineKind::ListItem && in_requirements(l.section) && !design_stems.is_empty() {
            let words = stems(item_text(&l.text));
            if !words.is_empty() && !words.iter().any(|w| design_stems.contains(w)) {
                unmet += 1;
                raw.push((
                    l.number,
                    format!(
                        "Which part of the design meets the requirement on line {}?",
                        l.number
                    ),
                    short(item_text(&l.text)),
                    "No design section mentions what this requirement is about, so nothing shows it is met.".into(),
                    options("Add the design that meets it, or say where it is met."),
                ));
            }
        }
    }
    let total = raw.len();
    let questions: Vec<ClarifyingQuestion> = raw
        .into_iter()
        .take(MAX_QUESTIONS)
        .enumerate()
        .map(
            |(i, (line, question, context, impact, options))| ClarifyingQuestion {
                id: format!("OQ{}", i + 1),
                question,
                context,
                impact,
                options,
                lines: vec![line],
            },
        )
        .collect();
    let mut assessment = format!(
        "{open} open question(s) left unanswered, {markers} placeholder(s) in the design, {unmet} requirement(s) no design section meets."
    );
    if total > MAX_QUESTIONS {
        assessment.push_str(&format!(
            " Showing the first {MAX_QUESTIONS} of {total} questions."
        ));
    }
    (Vec::new(), questions, assessment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn questions(text: &str) -> Vec<ClarifyingQuestion> {
        review(&Spec::parse(None, text.to_string())).1
    }

    #[test]
    fn a_settled_spec_has_no_questions() {
        let q = questions(
            "# Spec\n\n## Requirements\n\n- Retries are bounded\n\n## Design\n\nEach call retries at most 3 times.\n\n## Open questions\n\nNone.\n",
        );
        assert!(q.is_empty(), "{q:?}");
    }

    #[test]
    fn open_items_markers_and_unmet_requirements_become_questions() {
        let text = "# Spec\n\n## Requirements\n\n- Retries are bounded\n- Exports are encrypted at rest\n\n## Design\n\nEach call retries at most 3 times.\nThe queue size is TBD.\n\n## Open questions\n\n- Which region hosts the replica?\n- ~~Do we need SSO?~~ Answered: no.\n- Decision: keep v1 API.\n";
        let q = questions(text);
        let got: Vec<(usize, &str)> = q
            .iter()
            .map(|q| (q.lines[0], q.question.as_str()))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].0, 6);
        assert!(got[0].1.contains("requirement on line 6"));
        assert_eq!(got[1].0, 11);
        assert!(got[1].1.contains("\"TBD\""));
        assert_eq!(got[2], (15, "Which region hosts the replica?"));
        assert_eq!(q[0].id, "OQ1");
        assert_eq!(q[2].options.len(), 2);
        assert!(q[2].context.contains("Open questions"));
    }
}
