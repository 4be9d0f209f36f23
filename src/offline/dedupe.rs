//! One concern per gap per spec. A rule that fires on the same design
//! element in several places (a Proposal paragraph, a Design Details
//! paragraph, a risk table) raises the same gap again each time, often in
//! more or fewer words ("requests" here, "requests to the API" there);
//! and only the most confident finding of each such group is kept, the
//! first of equals (the attacker orders a rule's findings with the design
//! details first). It never merges findings of different rules: two rules
//! on one element are two classes of gap (a public endpoint with no
//! authentication and no rate limit); nor, unless they name the same
//! element, findings that name different components. The one exception
//! is declared in the packs: a rule that `yields_to` another is not raised
//! where that rule's finding cites the same lines (`yielded`).

use crate::concern::RawConcern;
use std::collections::BTreeSet;

/// Words too common to name a design element on their own.
const FILLER: &[&str] = &[
    "the", "and", "for", "with", "from", "that", "this", "these", "those", "its", "our", "their",
    "into", "onto", "are", "was", "were", "has", "have", "had", "will", "can", "not", "all", "any",
    "each", "per", "via", "when", "then", "than", "new", "one", "use", "used", "using",
];

/// What one finding is about, read once.
struct Gap {
    rule: Option<String>,
    section: Option<String>,
    /// Stems of the design element the trigger matched (its first subject
    /// term), filler words dropped: "retries" and "retried", "re-run" and
    /// "rerun", "request to the API" and "requests" share one.
    element: BTreeSet<String>,
    /// `element` with the words for one exchange (`CALL_WORDS`) as one,
    /// for comparing elements told in other words.
    exchange: BTreeSet<String>,
    /// The components the cited lines name (`kubelet`, Postgres,
    /// `/v1/orders`), normalised.
    components: BTreeSet<String>,
}

/// Words for one exchange with another component: told in other words,
/// "makes discovery calls to" and "makes a discovery request to" name one
/// element (but a bare "calls" and a bare "request" are not the same
/// element: they may be calls to two components).
const CALL_WORDS: &[&str] = &["call", "request", "rpc"];

fn stems(text: &str) -> BTreeSet<String> {
    // "re-run" and "rerun", "time-out" and "timeout" are one word.
    let joined = text.replace(['-', '_'], "");
    super::lexicon::normalise(&joined)
        .split(' ')
        .filter(|s| s.len() >= 3 && !FILLER.contains(s) && s.chars().any(|c| c.is_alphabetic()))
        .map(str::to_string)
        .collect()
}

impl Gap {
    fn of(c: &RawConcern) -> Gap {
        let element = c.subject.first().map(|e| stems(e)).unwrap_or_default();
        // Whole names, not their words: "Billing API" and "Ledger API" are
        // two components.
        let components = c
            .subject
            .iter()
            .skip(1)
            .map(|s| super::lexicon::normalise(s))
            .filter(|s| !s.trim().is_empty())
            .collect();
        let exchange = element
            .iter()
            .map(|s| {
                if CALL_WORDS.contains(&s.as_str()) {
                    CALL_WORDS[0].to_string()
                } else {
                    s.clone()
                }
            })
            .collect();
        Gap {
            rule: c.rule.clone(),
            section: c.section.clone(),
            element,
            exchange,
            components,
        }
    }

    /// Both name components and none in common: two different things (the
    /// payment provider's API and the mail provider's API).
    fn names_other_components(&self, other: &Gap) -> bool {
        !self.components.is_empty()
            && !other.components.is_empty()
            && self.components.is_disjoint(&other.components)
    }

    /// Every word of the shorter element is in the other: one telling names
    /// the element more fully ("request to the API", "requests for the beta
    /// API"). Elements that differ in a word of their own name two things
    /// ("calls the billing API", "calls the currency API"; "batch job",
    /// "nightly job").
    fn mostly_same_element(&self, other: &Gap) -> bool {
        let (short, long) = if self.element.len() <= other.element.len() {
            (&self.element, &other.element)
        } else {
            (&other.element, &self.element)
        };
        !short.is_empty() && short.is_subset(long)
    }

    /// Three words or more in common, and those at least half of each
    /// telling: the same element told in other words ("waits for the async
    /// API calls to finish", "waits for the asynchronous API call"; "makes
    /// discovery calls to each peer", "makes a discovery request to the
    /// corresponding peer"). Two shared words are not enough: "calls the
    /// billing API" and "calls the currency API" share two and name two
    /// things.
    fn told_in_other_words(&self, other: &Gap) -> bool {
        let (mine, theirs) = (&self.exchange, &other.exchange);
        let shared = mine.intersection(theirs).count();
        shared >= 3 && 2 * shared >= mine.len() && 2 * shared >= theirs.len()
    }

    fn same_gap(&self, other: &Gap) -> bool {
        let Some(rule) = &self.rule else { return false };
        let Some(other_rule) = &other.rule else {
            return false;
        };
        if rule != other_rule {
            // Two rules on one element are two classes of gap (no
            // authentication and no rate limit on one public endpoint).
            return false;
        }
        // The same element: one gap however many times it is told.
        if !self.element.is_empty() && self.element == other.element {
            return true;
        }
        if self.names_other_components(other) {
            return false;
        }
        // The same rule in one section, or on an element one telling names
        // more fully, is the same gap told again.
        let same_section = self.section.is_some() && self.section == other.section;
        same_section || self.mostly_same_element(other) || self.told_in_other_words(other)
    }
}

/// Which findings yield: their rule yields to another rule (`yields_to`
/// in its pack, looked up by `yields`) that has a finding on an
/// overlapping line, which tells the same gap more precisely ("immediate,
/// unbounded retries" over "retries without backoff").
fn yielded<'r>(concerns: &[RawConcern], yields: impl Fn(&str) -> &'r [String]) -> Vec<bool> {
    let overlaps = |a: &RawConcern, b: &RawConcern| match (a.lines, b.lines) {
        (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
        _ => false,
    };
    concerns
        .iter()
        .map(|c| {
            let to = c.rule.as_deref().map(&yields).unwrap_or_default();
            !to.is_empty()
                && concerns.iter().any(|o| {
                    o.rule.as_deref().is_some_and(|r| to.iter().any(|t| t == r)) && overlaps(c, o)
                })
        })
        .collect()
}

/// Drops the findings that repeat an earlier gap (see the module doc),
/// keeping the most confident of each group in its original place; a
/// group of which one finding yields to another rule's (see `yielded`)
/// goes whole: its other tellings are that gap too.
pub fn one_per_gap<'r>(
    concerns: Vec<RawConcern>,
    yields: impl Fn(&str) -> &'r [String],
) -> Vec<RawConcern> {
    let yielded = yielded(&concerns, yields);
    let gaps: Vec<Gap> = concerns.iter().map(Gap::of).collect();
    // Union-find over "is the same gap as": a handful of findings per
    // persona, so the pairwise comparison is cheap.
    let mut parent: Vec<usize> = (0..gaps.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..gaps.len() {
        for j in i + 1..gaps.len() {
            if gaps[i].same_gap(&gaps[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                if a != b {
                    parent[b.max(a)] = a.min(b);
                }
            }
        }
    }
    let rank = |c: &RawConcern| c.confidence.unwrap_or(0.0);
    let mut best: Vec<Option<usize>> = vec![None; concerns.len()];
    let mut gone = vec![false; concerns.len()];
    for i in 0..concerns.len() {
        let r = root(&mut parent, i);
        gone[r] |= yielded[i];
        match best[r] {
            Some(b) if rank(&concerns[i]) <= rank(&concerns[b]) => {}
            _ => best[r] = Some(i),
        }
    }
    concerns
        .into_iter()
        .enumerate()
        .filter(|(i, _)| {
            let r = root(&mut parent, *i);
            best[r] == Some(*i) && !gone[r]
        })
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

    /// `one_per_gap` with no rule yielding to another.
    fn alone(concerns: Vec<RawConcern>) -> Vec<RawConcern> {
        one_per_gap(concerns, |_| &[])
    }

    fn lines(kept: &[RawConcern]) -> Vec<usize> {
        kept.iter().map(|c| c.lines.unwrap().0).collect()
    }

    #[test]
    fn the_same_element_of_one_rule_is_one_gap() {
        let kept = alone(vec![
            raw("no-alerting", "sidecar", 40, 0.6),
            raw("no-alerting", "sidecars", 90, 0.75),
            raw("no-alerting", "sidecar", 120, 0.75),
            raw("no-alerting", "pipeline", 130, 0.6),
            raw("retry-backoff", "sidecar", 140, 0.6),
        ]);
        // The most confident "sidecar" finding (the first of two equals), and
        // the other element and the other rule untouched.
        assert_eq!(lines(&kept), vec![90, 130, 140]);
    }

    #[test]
    fn one_rule_in_one_section_or_on_a_shared_word_is_one_gap() {
        let in_section = |element: &str, line: usize, section: &str| {
            let mut c = raw("missing-timeout", element, line, 0.75);
            c.section = Some(section.to_string());
            c
        };
        let kept = alone(vec![
            in_section("calls", 10, "Design"),
            in_section("waits for the response", 30, "Design"),
            in_section("requests to the API", 60, "Risks"),
            in_section("request for the beta API", 90, "Rollout"),
            raw("retry-backoff", "re-run", 100, 0.6),
            raw("retry-backoff", "rerun", 120, 0.75),
        ]);
        assert_eq!(lines(&kept), vec![10, 60, 120]);
    }

    #[test]
    fn different_components_stay_apart() {
        let mut stripe = raw("missing-timeout", "calls", 10, 0.75);
        stripe.subject.push("stripe".to_string());
        stripe.section = Some("Design".to_string());
        let mut twilio = raw("missing-timeout", "calls", 20, 0.75);
        twilio.subject.push("twilio".to_string());
        twilio.section = Some("Design".to_string());
        let mut other = raw("missing-timeout", "request", 30, 0.75);
        other.subject.push("sendgrid".to_string());
        other.section = Some("Design".to_string());
        // The same element word is one gap; another component in the same
        // section is another.
        assert_eq!(
            lines(&alone(vec![stripe.clone(), twilio.clone()])),
            vec![10]
        );
        assert_eq!(lines(&alone(vec![stripe, other])), vec![10, 30]);
    }

    #[test]
    fn one_element_told_in_other_words_is_one_gap() {
        let kept = alone(vec![
            raw(
                "missing-timeout",
                "waits for the async API calls to finish",
                130,
                0.75,
            ),
            raw(
                "missing-timeout",
                "waits for the asynchronous API call",
                410,
                0.75,
            ),
            raw(
                "missing-timeout",
                "makes discovery calls to each peer",
                160,
                0.75,
            ),
            raw(
                "missing-timeout",
                "makes a discovery request to the corresponding peer",
                310,
                0.75,
            ),
            // Two words in common name two things.
            raw("missing-timeout", "calls the billing API", 500, 0.75),
            raw("missing-timeout", "calls the currency API", 510, 0.75),
            // Three in common but most of the longer telling its own.
            raw(
                "missing-timeout",
                "waits for the API calls of the ledger export job to the archive bucket",
                600,
                0.75,
            ),
        ]);
        assert_eq!(lines(&kept), vec![130, 160, 500, 510, 600]);
    }

    #[test]
    fn a_call_and_a_request_are_one_word() {
        let kept = alone(vec![
            raw("missing-timeout", "makes discovery calls to", 160, 0.75),
            raw("missing-timeout", "makes a discovery request to", 310, 0.75),
            raw("missing-timeout", "calls the billing API", 500, 0.75),
            raw(
                "missing-timeout",
                "sends a request to the currency API",
                510,
                0.75,
            ),
        ]);
        assert_eq!(lines(&kept), vec![160, 500, 510]);
    }

    #[test]
    fn a_rule_yields_only_where_the_other_cites_the_same_lines() {
        let to = vec!["retry-storm".to_string()];
        let yields = |id: &str| -> &[String] { if id == "retry-backoff" { &to } else { &[] } };
        let mut wide = raw("retry-storm", "retries forever", 18, 0.75);
        wide.lines = Some((16, 18));
        let mut told_again = raw("retry-backoff", "retried at once", 90, 0.75);
        told_again.section = Some("Risks".to_string());
        let mut first = raw("retry-backoff", "retried at once", 17, 0.75);
        first.section = Some("Design".to_string());
        let kept = one_per_gap(
            vec![
                first,
                wide,
                raw("retry-backoff", "re-sent", 40, 0.75),
                raw("missing-timeout", "calls", 17, 0.75),
                told_again,
            ],
            yields,
        );
        // The finding inside the other rule's lines goes, and so does its
        // element told again elsewhere; another element and another rule's
        // finding on the same line stay.
        let rules: Vec<(&str, usize)> = kept
            .iter()
            .map(|c| (c.rule.as_deref().unwrap(), c.lines.unwrap().0))
            .collect();
        assert_eq!(
            rules,
            vec![
                ("retry-storm", 16),
                ("retry-backoff", 40),
                ("missing-timeout", 17)
            ]
        );
    }

    #[test]
    fn two_rules_on_one_element_are_two_gaps() {
        let kept = alone(vec![
            raw("missing-authn", "public endpoint", 50, 0.75),
            raw("rate-limit", "public endpoint", 50, 0.75),
        ]);
        assert_eq!(kept.len(), 2);
    }
}
