//! The fresh-eyes gate (`--fresh-eyes`), last: a reviewer that sees only
//! the spec (a model with the overviewer prompt, else the offline
//! reviewer). Round 1 reviews the spec as given. When the author has
//! answered some of its questions (`--responses`, by question id), round 2
//! reviews the spec with the author's edits and answers, without the
//! answered questions; a review still asking for changes after round 2 is
//! escalated to the author (accept as-is or abort), as the overviewer seed
//! says. A reviewer that fails makes the run incomplete.

use super::{Gauntlet, RunState};
use crate::event::Event;
use crate::fresh_eyes::{FreshEyesReview, MAX_ROUNDS, Recommendation, recommend};
use crate::roles::FreshEyesOutput;
use crate::spec::Spec;

impl Gauntlet {
    /// One look at `spec`; `None` when the model failed (recorded).
    async fn fresh_look(
        &self,
        run: &mut RunState<'_>,
        spec: &Spec,
        answers: &str,
    ) -> Option<FreshEyesOutput> {
        let Some(model) = &self.fresh_eyes else {
            return Some(crate::offline::fresh_eyes::review(spec));
        };
        let r = model.review(spec, answers).await;
        run.stats
            .add_model_usage("fresh_eyes", model.model(), &r.usage);
        match r.value {
            Ok(v) => Some(v),
            Err(e) => {
                run.incomplete.push(format!("fresh eyes failed: {e}"));
                None
            }
        }
    }

    pub(crate) async fn fresh_eyes(&self, run: &mut RunState<'_>) -> Option<FreshEyesReview> {
        if !self.options.fresh_eyes {
            return None;
        }
        run.event(Event::Note(
            "fresh eyes: reviewing the spec alone".to_string(),
        ));
        let spec = run.spec;
        let (findings, questions, assessment) = self.fresh_look(run, spec, "").await?;
        let mut review = FreshEyesReview {
            recommendation: recommend(&findings, &questions),
            findings,
            clarifying_questions: questions,
            assessment,
            rounds: 1,
            escalated: false,
        };
        let responses = &self.options.responses;
        // What the author answered, by text: ids are renumbered each look.
        let settled: std::collections::HashSet<String> = review
            .clarifying_questions
            .iter()
            .filter(|q| responses.get(&q.id).is_some())
            .map(|q| q.question.clone())
            .chain(
                review
                    .findings
                    .iter()
                    .filter(|f| responses.get(&f.id).is_some())
                    .map(|f| f.title.clone()),
            )
            .collect();
        let answered: Vec<String> = review
            .clarifying_questions
            .iter()
            .map(|q| (&q.id, &q.question))
            .chain(review.findings.iter().map(|f| (&f.id, &f.title)))
            .filter_map(|(id, text)| {
                responses
                    .get(id)
                    .map(|r| format!("- {id} ({text}): {}", r.reason.trim()))
            })
            .collect();
        if review.recommendation == Recommendation::Revise
            && !answered.is_empty()
            && MAX_ROUNDS >= 2
        {
            // Round 2: the spec with the author's edits, minus what they answered.
            let edited = responses
                .edited(&spec.text)
                .map(|t| Spec::parse(spec.path.clone(), t));
            let second = edited.as_ref().unwrap_or(spec);
            let (findings, questions, assessment) =
                self.fresh_look(run, second, &answered.join("\n")).await?;
            let mut questions: Vec<_> = questions
                .into_iter()
                .filter(|q| !settled.contains(&q.question))
                .collect();
            let mut findings: Vec<_> = findings
                .into_iter()
                .filter(|f| !settled.contains(&f.title))
                .collect();
            for (i, q) in questions.iter_mut().enumerate() {
                q.id = format!("OQ{}", i + 1);
            }
            for (i, f) in findings.iter_mut().enumerate() {
                f.id = format!("OF{}", i + 1);
            }
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
