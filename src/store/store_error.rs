//! `StoreError`: everything that can go wrong reading or writing the
//! project's `.adversarial-spec/` folder. Every message names the file (and
//! the position, for parse problems) so the user can fix it by hand. This
//! module only describes errors; it never decides what to do about them.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    /// Not JSON, truncated, or the wrong shape. Never overwritten.
    #[error(
        "{file} is corrupt at line {line}, column {column}: {message} (left untouched; fix or move it, or run with --no-store)"
    )]
    Corrupt {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A `format_version` this build does not know. Never overwritten.
    #[error(
        "{file} has format_version {found} at line {line}, column {column}; this gauntlet reads version {supported} (left untouched; use a matching gauntlet, or run with --no-store)"
    )]
    UnknownVersion {
        file: String,
        found: String,
        supported: u32,
        line: usize,
        column: usize,
    },
    #[error("cannot read {file}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {file} (the previous file, if any, is untouched)")]
    Write {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A symlink, FIFO, device or oversized file where a store file should
    /// be: refused, never followed or overwritten.
    #[error("{file} {why} (left untouched)")]
    Unsafe { file: String, why: String },
    #[error("cannot lock {file}")]
    Lock {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no stored entry with id `{0}` (see `gauntlet store list`)")]
    UnknownId(String),
    #[error("id prefix `{prefix}` matches {count} entries; give more of it")]
    AmbiguousId { prefix: String, count: usize },
    #[error("{0}")]
    Invalid(String),
}

/// A parser's message on one line: serde quotes some values from the file
/// verbatim (an unknown variant), and an error is one line.
pub fn one_line(message: &str) -> String {
    message
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

impl StoreError {
    /// Builds `Corrupt` from a serde_json error, which knows the position.
    pub fn corrupt(file: &std::path::Path, e: &serde_json::Error) -> StoreError {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the position is reported separately.
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        StoreError::Corrupt {
            file: file.display().to_string(),
            line: e.line(),
            column: e.column(),
            message: one_line(&message),
        }
    }

    /// A read error: `InvalidInput` from `fsutil::read_regular` (a link, a
    /// FIFO, a device, too big) is `Unsafe`, anything else `Read`.
    pub fn read(file: &std::path::Path, source: std::io::Error) -> StoreError {
        if source.kind() == std::io::ErrorKind::InvalidInput {
            StoreError::Unsafe {
                file: file.display().to_string(),
                why: source.to_string(),
            }
        } else {
            StoreError::Read {
                file: file.display().to_string(),
                source,
            }
        }
    }

    /// True for errors the user can fix by giving another id (usage, not data).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            StoreError::UnknownId(_) | StoreError::AmbiguousId { .. } | StoreError::Invalid(_)
        )
    }
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Deserialize)]
    enum Kind {
        #[allow(dead_code)]
        A,
    }

    #[test]
    fn a_corrupt_file_message_stays_on_one_line() {
        let e = serde_json::from_str::<Kind>("\"x\\ny\"").unwrap_err();
        // serde quotes an unknown variant from the file verbatim.
        assert!(e.to_string().contains('\n'), "{e}");
        let text = super::StoreError::corrupt(std::path::Path::new("s.json"), &e).to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains("x\\ny"), "{text}");
    }
}
