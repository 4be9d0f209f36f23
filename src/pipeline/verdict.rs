//! The last step: count what requires revision and assemble the `Verdict`.

use super::{Gauntlet, RunState, ms};
use crate::concern::Severity;
use crate::persona::Persona;
use crate::roles::FinalBossReview;
use crate::verdict::{Models, Outcome, SCHEMA_VERSION, SpecInfo, ToolInfo, Verdict};

impl Gauntlet {
    /// Turns the finished run into its verdict.
    pub(crate) fn verdict(
        &self,
        mut run: RunState<'_>,
        personas: &[&Persona],
        final_review: Option<FinalBossReview>,
        fresh_eyes: Option<crate::fresh_eyes::FreshEyesReview>,
    ) -> Verdict {
        let stats = &mut run.stats;
        for c in run.concerns.iter().filter(|c| c.status.requires_revision()) {
            stats.final_.requiring_revision += 1;
            match c.severity {
                Severity::High => stats.final_.high += 1,
                Severity::Medium => stats.final_.medium += 1,
                Severity::Low => stats.final_.low += 1,
            }
        }
        for reason in run.incomplete.clone() {
            run.warn(format!("incomplete: {reason}"));
        }
        run.stats.duration_ms.total = ms(run.started);
        let spec = run.spec;
        let mut verdict = Verdict {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "gauntlet".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
            },
            spec: SpecInfo {
                path: spec.path.clone(),
                sha256: spec.sha256.clone(),
                bytes: spec.bytes(),
                lines: spec.lines.len(),
                title: spec.title().map(str::to_string),
            },
            verdict: Outcome::Pass,
            fail_on: self.options.fail_on,
            adversaries: personas.iter().map(|p| p.name.clone()).collect(),
            models: Models {
                attack: vec![self.attacker.model().to_string()],
                eval: self
                    .evaluators
                    .iter()
                    .map(|e| e.model().to_string())
                    .collect(),
                final_boss: self.final_boss.as_ref().map(|b| b.model().to_string()),
            },
            concerns: run.concerns,
            final_boss: final_review,
            stats: run.stats,
            warnings: run.warnings,
            nuances: None,
            complexity: None,
            memory: crate::verdict::Memory {
                allow_deferred: self.options.allow_deferred,
                fresh_eyes,
                ..Default::default()
            },
        };
        // Issue 10: technologies, nuances applied, and the complexity level.
        crate::nuance::finish_verdict(&mut verdict, spec, &self.options);
        verdict.verdict = if !run.incomplete.is_empty() {
            Outcome::Incomplete
        } else if verdict.failing() > 0 {
            Outcome::Revise
        } else {
            Outcome::Pass
        };
        verdict
    }
}
