//! The fresh-eyes gate (`--fresh-eyes`), last: a reviewer that sees only
//! the spec. Round 1 reviews the spec as given. When the author has
//! answered some of its questions (`--responses`, by question id) or
//! edited the spec, round 2 reviews again without the answered questions;
//! a review still asking for changes after round 2 is escalated to the
//! author (accept as-is or abort), as the overviewer seed says.

use super::{Gauntlet, RunState};
use crate::event::Event;
use crate::fresh_eyes::{FreshEyesReview, MAX_ROUNDS, Recommendation, recommend};
use crate::spec::Spec;

impl Gauntlet {
    pub(crate) fn fresh_eyes(&self, run: &mut RunState<'_>) -> Option<FreshEyesReview> {
        if !self.options.fresh_eyes {
            return None;
        }
        run.event(Event::Note(
            "fresh eyes: reviewing the spec alone".to_string(),
        ));
        let (findings, questions, assessment) = crate::offline::fresh_eyes::review(run.spec);
        let mut review = FreshEyesReview {
            recommendation: recommend(&findings, &questions),
            findings,
            clarifying_questions: questions,
            assessment,
            rounds: 1,
            escalated: false,
        };
        let responses = &self.options.responses;
        let answered = |id: &str| responses.get(id).is_some();
        let touched = review.clarifying_questions.iter().any(|q| answered(&q.id))
            || review.findings.iter().any(|f| answered(&f.id));
        if review.recommendation == Recommendation::Revise && touched && MAX_ROUNDS >= 2 {
            // Round 2: the spec with the author's edits, minus what they answered.
            let edited = responses
                .edited(&run.spec.text)
                .map(|t| Spec::parse(run.spec.path.clone(), t));
            let spec = edited.as_ref().unwrap_or(run.spec);
            let (findings, questions, assessment) = crate::offline::fresh_eyes::review(spec);
            let questions: Vec<_> = questions.into_iter().filter(|q| !answered(&q.id)).collect();
            let findings: Vec<_> = findings.into_iter().filter(|f| !answered(&f.id)).collect();
            let recommendation = recommend(&findings, &questions);
            review = FreshEyesReview {
                recommendation,
                findings,
                clarifying_questions: questions,
                assessment,
                rounds: 2,
                escalated: recommendation == Recommendation::Revise,
            };
        }
        run.event(Event::Note(format!(
            "fresh eyes: {} with {} question(s), {} finding(s)",
            review.recommendation.as_str(),
            review.clarifying_questions.len(),
            review.findings.len()
        )));
        Some(review)
    }
}
