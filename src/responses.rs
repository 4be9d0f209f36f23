//! `--responses FILE`: the author's answers to the concerns of a run, for
//! the debate rounds. Per concern id: agree or disagree, a reason, and the
//! spec edits already made (line replacements). A file that cannot be read
//! or parsed is a usage error naming the file and position.
//!
//! ```json
//! {"responses": [
//!   {"id": "BURN-1a2b3c4d", "response": "agree", "reason": "added a timeout",
//!    "edits": [{"line": 12, "text": "Every call has a 3 s timeout."}]},
//!   {"id": "LAZY-0badf00d", "response": "disagree", "reason": "line 30 covers it"}
//! ]}
//! ```

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stance {
    Agree,
    Disagree,
}

/// One line of the spec as the author has rewritten it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// 1-based line number in the spec as reviewed.
    pub line: usize,
    /// The line's new text (may hold several lines).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// A concern id (or a fresh-eyes question id such as `OQ1`).
    pub id: String,
    pub response: Stance,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub edits: Vec<Edit>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Responses {
    #[serde(default)]
    pub responses: Vec<Response>,
}

impl Responses {
    pub fn load(path: &Path) -> Result<Responses, String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read responses file {}: {e}", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("responses file {} is not valid: {e}", path.display()))
    }

    pub fn get(&self, id: &str) -> Option<&Response> {
        self.responses.iter().find(|r| r.id == id)
    }

    /// The spec text with every edit applied (later edits of the same line
    /// win). `None` when there is no edit, or none that lands in the spec.
    pub fn edited(&self, text: &str) -> Option<String> {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let mut changed = false;
        for e in self.responses.iter().flat_map(|r| &r.edits) {
            if let Some(l) = e.line.checked_sub(1).and_then(|i| lines.get_mut(i))
                && *l != e.text
            {
                *l = e.text.clone();
                changed = true;
            }
        }
        changed.then(|| {
            let mut s = lines.join("\n");
            if text.ends_with('\n') {
                s.push('\n');
            }
            s
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_applies_edits() {
        let r: Responses = serde_json::from_str(
            r#"{"responses": [{"id": "A-1", "response": "agree", "edits": [{"line": 2, "text": "b2"}]},
                              {"id": "A-2", "response": "disagree", "reason": "no"}]}"#,
        )
        .unwrap();
        assert_eq!(r.get("A-2").unwrap().response, Stance::Disagree);
        assert_eq!(r.edited("a\nb\nc\n").as_deref(), Some("a\nb2\nc\n"));
        assert_eq!(
            r.edited("a\nb2\n"),
            None,
            "an edit already made changes nothing"
        );
        assert!(
            serde_json::from_str::<Responses>(
                r#"{"responses": [{"id": "x", "response": "maybe"}]}"#
            )
            .is_err()
        );
    }
}
