//! Error types, one enum per area, and the single place that maps them to
//! exit codes (`Error::exit_code`). Messages are lowercase fragments; the
//! cause sits in `#[source]` so `{:#}` prints the chain.

use crate::exit_code;
use thiserror::Error;

/// Reading the spec failed or the input is not a spec we accept.
#[derive(Debug, Error)]
pub enum InputError {
    #[error("no spec given: standard input is empty (pass a file or pipe a spec)")]
    EmptyStdin,
    #[error("spec {path} is empty")]
    EmptyFile { path: String },
    #[error("spec {path} not found")]
    NotFound { path: String },
    #[error("spec {path} is a directory (use `gauntlet review {path}` for folders)")]
    IsDirectory { path: String },
    #[error("spec {path} looks binary (it contains NUL bytes)")]
    Binary { path: String },
    #[error("spec {path} is {size} bytes, over the {limit}-byte limit (raise it with --max-bytes)")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error("cannot read spec {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A data file (persona, protocol, nuance) is unreadable or malformed.
#[derive(Debug, Error)]
pub enum DataError {
    #[error("{file}, line {line}, column {column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("cannot read {file}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

/// The options do not make sense together.
#[derive(Debug, Error)]
pub enum UsageError {
    #[error("unknown adversary `{name}` (known: {known})")]
    UnknownAdversary { name: String, known: String },
    #[error("no adversaries selected")]
    NoAdversaries,
    #[error("{0}")]
    Invalid(String),
}

/// A role (attacker, evaluator, final boss) failed to answer.
#[derive(Debug, Error, Clone)]
pub enum RoleError {
    #[error("{model}: {message}")]
    Failed { model: String, message: String },
    #[error("{model}: timed out after {secs}s")]
    Timeout { model: String, secs: u64 },
}

/// The run could not complete.
#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Incomplete(String),
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Every error the library returns, with its exit code.
#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("invalid data file {0}")]
    Data(#[from] DataError),
    #[error(transparent)]
    Usage(#[from] UsageError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl Error {
    /// The documented exit code for this error (see `exit_code`).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_) | Error::Data(_) | Error::Usage(_) => exit_code::USAGE,
            Error::Run(_) => exit_code::INCOMPLETE,
            Error::Store(e) if e.is_usage() => exit_code::USAGE,
            Error::Store(_) => exit_code::INCOMPLETE,
        }
    }
}
