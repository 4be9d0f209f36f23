//! One concern per gap per spec. A rule that fires on the same design
//! element in several places (a Proposal paragraph, a Design Details
//! paragraph, a risk table) raises the same gap again each time; only the
//! most confident finding is kept, the first of equals (the attacker orders
//! a rule's findings with the design details first).

use crate::concern::RawConcern;
use std::collections::HashMap;

/// What makes two findings of one rule the same gap: the rule and the
/// design element it matched (its first subject term), stemmed, so that
/// "retries" and "retried" or "sidecar" and "sidecars" agree.
fn gap_key(c: &RawConcern) -> Option<(String, String)> {
    let rule = c.rule.clone()?;
    let element = c.subject.first()?;
    let stems = super::lexicon::normalise(element);
    if stems.trim().is_empty() {
        return None;
    }
    Some((rule, stems))
}

/// Drops the findings that repeat an earlier gap of the same rule, keeping
/// the most confident of each group in its original place.
pub fn one_per_gap(concerns: Vec<RawConcern>) -> Vec<RawConcern> {
    let mut best: HashMap<(String, String), (usize, f64)> = HashMap::new();
    for (i, c) in concerns.iter().enumerate() {
        let Some(key) = gap_key(c) else { continue };
        let conf = c.confidence.unwrap_or(0.0);
        best.entry(key)
            .and_modify(|e| {
                if conf > e.1 {
                    *e = (i, conf);
                }
            })
            .or_insert((i, conf));
    }
    concerns
        .into_iter()
        .enumerate()
        .filter(|(i, c)| gap_key(c).is_none_or(|k| best.get(&k).is_some_and(|b| b.0 == *i)))
        .map(|(_, c)| c)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concern::Severity;

    fn raw(rule: &str, element: &str, line: usize, confidence: f64) -> RawConcern {
        RawConcern {
            title: format!("{rule} {element} {line}"),
            detail: String::new(),
            severity: Severity::Medium,
            lines: Some((line, line)),
            rule: Some(rule.to_string()),
            section: None,
            subject: vec![element.to_string()],
            confidence: Some(confidence),
        }
    }

    #[test]
    fn the_same_element_of_one_rule_is_one_gap() {
        let kept = one_per_gap(vec![
            raw("no-alerting", "sidecar", 40, 0.6),
            raw("no-alerting", "sidecars", 90, 0.75),
            raw("no-alerting", "sidecar", 120, 0.75),
            raw("no-alerting", "pipeline", 130, 0.6),
            raw("retry-backoff", "sidecar", 140, 0.6),
        ]);
        let lines: Vec<usize> = kept.iter().map(|c| c.lines.unwrap().0).collect();
        // The most confident "sidecar" finding (the first of two equals), and
        // the other element and the other rule untouched.
        assert_eq!(lines, vec![90, 130, 140]);
    }
}
