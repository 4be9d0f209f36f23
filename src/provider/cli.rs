//! The $0 providers: the `codex`, `claude` and `gemini` command-line tools
//! run as subprocesses. The prompt goes on stdin, the working folder is an
//! empty temporary one, the process is killed when the call is dropped (the
//! client's timeout), and nothing ever goes through a shell. A missing CLI,
//! a non-zero exit or output in an unknown shape is a provider error with
//! the stderr tail.

use super::completion::{Completion, CompletionRequest, Provider, ProviderError, estimate_tokens};
use super::model_name::{ModelName, ProviderKind};
use super::redact::redact;
use crate::stats::Usage;
use futures::future::BoxFuture;
use serde_json::Value;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

pub struct CliProvider {
    display: String,
    kind: ProviderKind,
    remote_model: String,
    program: String,
}

impl CliProvider {
    /// `None` when `name` is not a CLI model.
    pub fn new(name: &ModelName) -> Option<CliProvider> {
        Some(CliProvider {
            display: name.to_string(),
            kind: name.kind,
            remote_model: name.model.clone(),
            program: name.kind.program()?.to_string(),
        })
    }

    /// Runs `program` instead of the CLI's usual name (tests, wrappers).
    pub fn with_program(mut self, program: &str) -> CliProvider {
        self.program = program.to_string();
        self
    }

    /// The arguments after the program name.
    pub fn args(&self) -> Vec<String> {
        let m = self.remote_model.clone();
        match self.kind {
            ProviderKind::Codex => vec![
                "exec".into(),
                "--json".into(),
                "--skip-git-repo-check".into(),
                "--model".into(),
                m,
                "-".into(),
            ],
            ProviderKind::ClaudeCli => vec![
                "-p".into(),
                "--model".into(),
                m,
                "--output-format".into(),
                "json".into(),
            ],
            _ => vec!["-m".into(), m],
        }
    }

    async fn run(&self, request: &CompletionRequest) -> Result<Completion, ProviderError> {
        let dir = tempfile::tempdir()
            .map_err(|e| ProviderError::Fatal(format!("cannot create a temporary folder: {e}")))?;
        let mut child = tokio::process::Command::new(&self.program)
            .args(self.args())
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    ProviderError::Fatal(format!("`{}` not found on PATH", self.program))
                }
                _ => ProviderError::Fatal(format!("cannot start `{}`: {e}", self.program)),
            })?;
        let input = if request.system.is_empty() {
            request.user_text()
        } else {
            format!("{}\n\n{}", request.system, request.user_text())
        };
        let mut stdin = child.stdin.take().expect("stdin piped");
        // Write concurrently with reading, so a large prompt cannot deadlock
        // against a full stdout pipe.
        let writer = tokio::spawn(async move {
            let _ = stdin.write_all(input.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
        let out = child
            .wait_with_output()
            .await
            .map_err(|e| ProviderError::Fatal(format!("`{}` failed: {e}", self.program)))?;
        let _ = writer.await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(ProviderError::Fatal(format!(
                "`{}` exited with {}: {}",
                self.program,
                out.status,
                tail(&stderr)
            )));
        }
        let shape = |what: &str| {
            ProviderError::Fatal(format!(
                "`{}` output in an unknown shape ({what}); stderr: {}",
                self.program,
                tail(&stderr)
            ))
        };
        match self.kind {
            ProviderKind::Codex => {
                parse_codex(&stdout).ok_or_else(|| shape("no agent_message in the JSONL events"))
            }
            ProviderKind::ClaudeCli => parse_claude(&stdout).map_err(|m| shape(&m)),
            _ => {
                let text = stdout.trim().to_string();
                Ok(Completion {
                    usage: Usage {
                        calls: 1,
                        input_tokens: estimate_tokens(request.chars()),
                        output_tokens: estimate_tokens(text.chars().count()),
                        cost_usd: 0.0,
                        estimated: true,
                        ..Usage::default()
                    },
                    text,
                })
            }
        }
    }
}

/// The last 400 characters of stderr, redacted, on one line.
fn tail(stderr: &str) -> String {
    let s = stderr.trim();
    let start = s.char_indices().rev().nth(399).map(|(i, _)| i).unwrap_or(0);
    let t = redact(&s[start..]).text.replace('\n', " | ");
    if t.is_empty() {
        "(no stderr)".to_string()
    } else {
        t
    }
}

/// `codex exec --json`: JSONL events; the text of the last `agent_message`
/// item and the usage of `turn.completed`.
pub fn parse_codex(stdout: &str) -> Option<Completion> {
    let mut text = None;
    let mut usage = Usage {
        calls: 1,
        ..Usage::default()
    };
    let mut saw_usage = false;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if let Some(item) = v.get("item")
            && item.get("type").and_then(Value::as_str) == Some("agent_message")
            && let Some(t) = item.get("text").and_then(Value::as_str)
        {
            text = Some(t.to_string());
        }
        if ty == "turn.completed"
            && let Some(u) = v.get("usage")
        {
            saw_usage = true;
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            usage.input_tokens += n("input_tokens");
            usage.output_tokens += n("output_tokens");
        }
    }
    let text = text?;
    if !saw_usage {
        usage.output_tokens = estimate_tokens(text.chars().count());
        usage.estimated = true;
    }
    Some(Completion { text, usage })
}

/// `claude -p --output-format json`: `result` and `usage`.
pub fn parse_claude(stdout: &str) -> Result<Completion, String> {
    let v: Value =
        serde_json::from_str(stdout.trim()).map_err(|_| "not one JSON object".to_string())?;
    if v.get("is_error").and_then(Value::as_bool) == Some(true) {
        return Err(format!(
            "claude reported an error: {}",
            v.get("result").and_then(Value::as_str).unwrap_or("")
        ));
    }
    let text = v
        .get("result")
        .and_then(Value::as_str)
        .ok_or_else(|| "no `result` field".to_string())?
        .to_string();
    let mut usage = Usage {
        calls: 1,
        ..Usage::default()
    };
    match v.get("usage") {
        Some(u) => {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            usage.input_tokens =
                n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens");
            usage.output_tokens = n("output_tokens");
        }
        None => {
            usage.output_tokens = estimate_tokens(text.chars().count());
            usage.estimated = true;
        }
    }
    Ok(Completion { text, usage })
}

impl Provider for CliProvider {
    fn model(&self) -> &str {
        &self.display
    }

    fn complete<'a>(
        &'a self,
        request: &'a CompletionRequest,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(self.run(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_jsonl_takes_last_agent_message_and_turn_usage() {
        let out = r#"{"type":"thread.started","thread_id":"t"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"draft"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"{\"concerns\": []}"}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":34}}"#;
        let c = parse_codex(out).unwrap();
        assert_eq!(c.text, "{\"concerns\": []}");
        assert_eq!((c.usage.input_tokens, c.usage.output_tokens), (1200, 34));
        assert!(!c.usage.estimated);
        assert!(parse_codex("{\"type\":\"turn.completed\"}").is_none());
    }

    #[test]
    fn claude_json_result_and_usage() {
        let c = parse_claude(r#"{"type":"result","is_error":false,"result":"ACCEPTED: ok","usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":3}}"#).unwrap();
        assert_eq!(c.text, "ACCEPTED: ok");
        assert_eq!((c.usage.input_tokens, c.usage.output_tokens), (15, 3));
        assert!(parse_claude(r#"{"is_error":true,"result":"quota"}"#).is_err());
        assert!(parse_claude("plain text").is_err());
    }
}
