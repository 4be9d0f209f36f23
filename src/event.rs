//! Progress events the pipeline emits; the binary renders them on stderr.
//! The library never prints.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Attack,
    Filter,
    Evaluation,
    Rebuttal,
    Adjudication,
    FinalBoss,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Attack => "attack",
            Phase::Filter => "self-filter",
            Phase::Evaluation => "evaluation",
            Phase::Rebuttal => "rebuttal",
            Phase::Adjudication => "adjudication",
            Phase::FinalBoss => "final boss",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Event {
    PhaseStarted(Phase),
    PhaseFinished {
        phase: Phase,
        summary: String,
    },
    Warning(String),
    /// Something the user should know that is not a problem (which model
    /// was chosen and why, where the run was saved).
    Note(String),
}
