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
            items.push_str(&format!("- {}\n", statement(&n.text)));
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

/// A nuance as a model reads it: the fact without the `Source: ...` clause
/// the built-in files end each bullet with. The source is for people (JSON
/// verdict, `explain`, `gauntlet nuances`); in a prompt it would be about a
/// third of the checklist's tokens, sent with every attack and evaluation
/// call, and tell the model nothing it needs to check the spec.
pub fn statement(text: &str) -> &str {
    match text.rfind(" Source: ") {
        Some(i) if i > 0 => text[..i].trim_end(),
        _ => text,
    }
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

    #[test]
    fn prompts_carry_the_fact_without_its_source() {
        assert_eq!(
            statement("Keys expire silently. Source: Redis docs, EXPIRE (https://redis.io/x)."),
            "Keys expire silently."
        );
        // A bullet with no source (a project's NUANCES.md) is sent whole.
        assert_eq!(statement("SCAN is O(N)."), "SCAN is O(N).");
        // Only a clause at the end counts: a bullet that is nothing but a
        // source is kept rather than emptied.
        assert_eq!(statement("Source: x"), "Source: x");
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        let spec = Spec::parse(None, "# S\n\nSessions are kept in Redis.\n".to_string());
        let items = items(&set, &spec).unwrap();
        let redis = set.technology("Redis").unwrap();
        assert!(redis.nuances.iter().all(|n| n.text.contains("Source:")));
        assert!(!items.contains("Source:") && !items.contains("https://"));
        for n in &redis.nuances {
            assert!(items.contains(statement(&n.text)), "{} missing", n.text);
        }
    }
}
