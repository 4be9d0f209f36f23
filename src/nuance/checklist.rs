//! The "divergence checklist" given to model reviewers (the seed's
//! template): the nuances of the technologies a spec uses. Nothing is
//! added when no technology is detected. The block goes after the spec so
//! the spec stays the prompt's stable prefix.

use super::NuanceSet;
use crate::spec::Spec;

/// For attackers: what to check the spec against.
pub const ATTACK_INSTRUCTIONS: &str = "\
When critiquing, explicitly check:
1. Does the spec assume standard behavior that these nuances contradict?
2. Are there design decisions that would work in general but fail here?
3. Should any of these nuances be explicitly addressed in the spec?";

/// For evaluators: a listed nuance outranks general best practice.
pub const EVALUATE_INSTRUCTIONS: &str = "\
These nuances are facts about the technologies this spec uses. Do not dismiss
a concern by appeal to a general best practice or typical behavior that a
listed nuance contradicts: the nuance wins. A concern that points at one of
these nuances is dismissed only when spec lines show it is handled; cite them.";

/// Which prompt the checklist goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Attack,
    Evaluate,
}

/// The checklist block for this spec, or `None` when the spec uses no
/// technology with nuances.
pub fn block(set: &NuanceSet, spec: &Spec, audience: Audience) -> Option<String> {
    items(set, spec).map(|items| format!("{items}\n{}\n", instructions(audience)))
}

/// The checklist without the audience's instructions: the same text for
/// every call of a run, so model runs put it in the prompt's shared,
/// cached prefix right after the spec (issue 13).
pub fn items(set: &NuanceSet, spec: &Spec) -> Option<String> {
    let detections = set.detector().detect(spec);
    let mut items = String::new();
    for d in &detections {
        let t = &set.technologies[d.technology];
        if t.nuances.is_empty() {
            continue;
        }
        items.push_str(&format!("\n## {}\n", t.name));
        for n in &t.nuances {
            items.push_str(&format!("- {}\n", n.text));
        }
    }
    if items.is_empty() {
        return None;
    }
    Some(format!(
        "**DIVERGENCE CHECKLIST - Review spec against these technology-specific nuances:**\n\n\
These nuances represent deviations from typical patterns. Flag any spec sections that assume \"normal\" behavior.\n\
The checklist is reference data from the review tool, not part of the spec.\n{items}"
    ))
}

/// What the audience is told to do with the checklist.
pub fn instructions(audience: Audience) -> &'static str {
    match audience {
        Audience::Attack => ATTACK_INSTRUCTIONS,
        Audience::Evaluate => EVALUATE_INSTRUCTIONS,
    }
}

pub fn append(prompt: String, set: Option<&NuanceSet>, spec: &Spec, audience: Audience) -> String {
    match set.and_then(|s| block(s, spec, audience)) {
        Some(b) => format!("{prompt}\n\n{b}"),
        None => prompt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checklist_lists_detected_technologies_only() {
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        let spec = Spec::parse(None, "# S\n\nSessions are kept in Redis.\n".to_string());
        let b = block(&set, &spec, Audience::Evaluate).unwrap();
        assert!(b.starts_with("**DIVERGENCE CHECKLIST"));
        assert!(b.contains("\n## Redis\n- "));
        assert!(!b.contains("## PostgreSQL"));
        assert!(b.contains("the nuance wins"));
        let a = block(&set, &spec, Audience::Attack).unwrap();
        assert!(a.contains("When critiquing, explicitly check:") && !a.contains("nuance wins"));
        let plain = Spec::parse(None, "# S\n\nA button that says hello.\n".to_string());
        assert!(block(&set, &plain, Audience::Attack).is_none());
        assert_eq!(
            append("P".to_string(), Some(&set), &plain, Audience::Attack),
            "P"
        );
        assert_eq!(append("P".to_string(), None, &spec, Audience::Attack), "P");
    }
}
