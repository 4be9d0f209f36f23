//! Evaluation phase logic, as plain functions: split concerns into batches,
//! and turn evaluators' votes into a status (majority wins, a tie is
//! accepted, too few votes is deferred).

use crate::concern::{Decision, Status, Vote};

/// Indices of `count` concerns split into batches of at most `size`.
pub fn batches(count: usize, size: usize) -> Vec<std::ops::Range<usize>> {
    let size = size.max(1);
    (0..count)
        .step_by(size)
        .map(|s| s..(s + size).min(count))
        .collect()
}

/// The outcome of one concern's votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub status: Status,
    /// Votes were not unanimous.
    pub disagreement: bool,
    /// Fewer than a majority of the configured evaluators voted.
    pub quorum_missing: bool,
}

/// Majority wins; a tie between the top decisions is accepted (the seed's
/// rule: when evaluators cannot agree, the concern stands). A concern with
/// votes from fewer than a majority of the `configured` evaluators is
/// deferred.
pub fn tally(votes: &[Vote], configured: usize) -> Tally {
    let quorum = configured / 2 + 1;
    let disagreement = votes.windows(2).any(|w| w[0].decision != w[1].decision);
    if votes.len() < quorum {
        return Tally {
            status: Status::Deferred,
            disagreement,
            quorum_missing: true,
        };
    }
    let count = |d: Decision| votes.iter().filter(|v| v.decision == d).count();
    let (a, d, f) = (
        count(Decision::Accept),
        count(Decision::Dismiss),
        count(Decision::Defer),
    );
    let max = a.max(d).max(f);
    let winners = [a, d, f].iter().filter(|&&c| c == max).count();
    let status = if winners > 1 || a == max {
        Status::Accepted
    } else if d == max {
        Status::Dismissed
    } else {
        Status::Deferred
    };
    Tally {
        status,
        disagreement,
        quorum_missing: false,
    }
}

/// Which evaluator (index into `names`) adjudicates a challenged
/// dismissal: the first whose citation the challenge does not dispute.
/// `None` when the challenge disputes every evaluator.
pub fn adjudicator_for(names: &[&str], concern: &crate::concern::Concern) -> Option<usize> {
    let disputed: &[String] = concern
        .rebuttal
        .as_ref()
        .map(|r| r.challenged.as_slice())
        .unwrap_or_default();
    names.iter().position(|n| !disputed.iter().any(|d| d == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(d: Decision) -> Vote {
        Vote {
            evaluator: "e".into(),
            decision: d,
            reasoning: String::new(),
            cites: vec![],
        }
    }
    use Decision::*;

    #[test]
    fn batches_of_fifteen() {
        let b = batches(31, 15);
        assert_eq!(b, vec![0..15, 15..30, 30..31]);
        assert!(batches(0, 15).is_empty());
        assert_eq!(batches(3, 0), vec![0..1, 1..2, 2..3]);
    }

    #[test]
    fn majority_wins() {
        let t = tally(&[v(Dismiss), v(Dismiss), v(Accept)], 3);
        assert_eq!(t.status, Status::Dismissed);
        assert!(t.disagreement);
        let t = tally(&[v(Accept), v(Accept), v(Dismiss)], 3);
        assert_eq!(t.status, Status::Accepted);
        let t = tally(&[v(Defer), v(Defer), v(Dismiss)], 3);
        assert_eq!(t.status, Status::Deferred);
    }

    #[test]
    fn unanimous_is_not_a_disagreement() {
        let t = tally(&[v(Dismiss), v(Dismiss), v(Dismiss)], 3);
        assert_eq!(t.status, Status::Dismissed);
        assert!(!t.disagreement);
    }

    #[test]
    fn ties_are_accepted() {
        assert_eq!(tally(&[v(Dismiss), v(Accept)], 2).status, Status::Accepted);
        assert_eq!(tally(&[v(Dismiss), v(Defer)], 2).status, Status::Accepted);
        assert_eq!(
            tally(&[v(Dismiss), v(Defer), v(Accept)], 3).status,
            Status::Accepted
        );
    }

    #[test]
    fn too_few_votes_is_deferred() {
        let t = tally(&[v(Dismiss)], 3);
        assert_eq!(t.status, Status::Deferred);
        assert!(t.quorum_missing);
        // Two of three is a majority: it counts.
        assert_eq!(
            tally(&[v(Dismiss), v(Dismiss)], 3).status,
            Status::Dismissed
        );
    }

    #[test]
    fn the_adjudicator_is_the_first_evaluator_not_challenged() {
        use crate::concern::{Concern, RawConcern, Rebuttal, RebuttalOutcome, Severity};
        let mut c = Concern::from_raw(
            "burned_oncall",
            "BURN",
            RawConcern::for_tests("t", "d", Severity::Low),
        );
        let names = ["a", "b", "c"];
        assert_eq!(super::adjudicator_for(&names, &c), Some(0));
        c.rebuttal = Some(Rebuttal {
            outcome: RebuttalOutcome::Challenged,
            reasoning: String::new(),
            challenged: vec!["a".into()],
        });
        assert_eq!(super::adjudicator_for(&names, &c), Some(1));
        c.rebuttal.as_mut().unwrap().challenged = vec!["a".into(), "b".into(), "c".into()];
        assert_eq!(super::adjudicator_for(&names, &c), None);
    }
}
