//! Saves every raw model request and response of a run under
//! `.adversarial-spec/runs/<run-id>/`, one JSON file per logical call
//! (schema_version 1, written atomically), so a user can see what a model
//! said. What is saved is what was sent: already redacted. Never saves
//! headers, URLs or keys.

use super::completion::{Completion, CompletionRequest, ProviderError};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub const RECORD_SCHEMA_VERSION: u32 = 1;

pub struct Recorder {
    dir: PathBuf,
    seq: AtomicU64,
    /// The first write error, reported once at the end of the run.
    error: Mutex<Option<String>>,
}

#[derive(Serialize)]
struct Record<'a> {
    schema_version: u32,
    seq: u64,
    label: &'a str,
    model: &'a str,
    elapsed_ms: u64,
    request: RequestRecord<'a>,
    response: Option<ResponseRecord<'a>>,
    error: Option<String>,
    failed_attempts: Vec<String>,
}

#[derive(Serialize)]
struct RequestRecord<'a> {
    system: &'a str,
    prompt: &'a str,
}

#[derive(Serialize)]
struct ResponseRecord<'a> {
    text: &'a str,
    usage: &'a crate::stats::Usage,
}

impl Recorder {
    /// A new run folder `<store>/runs/<run-id>/`.
    pub fn create(store: &Path) -> std::io::Result<Recorder> {
        let id = format!(
            "{}-{}",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
            std::process::id()
        );
        let dir = store.join("runs").join(id);
        // Never through a `runs` link planted in the repository.
        crate::fsutil::create_dir_no_links(store, &dir)?;
        Ok(Recorder {
            dir,
            seq: AtomicU64::new(0),
            error: Mutex::new(None),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn record(
        &self,
        label: &str,
        model: &str,
        request: &CompletionRequest,
        result: &Result<Completion, ProviderError>,
        failures: &[ProviderError],
        elapsed: Duration,
    ) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let rec = Record {
            schema_version: RECORD_SCHEMA_VERSION,
            seq,
            label,
            model,
            elapsed_ms: elapsed.as_millis() as u64,
            request: RequestRecord {
                system: &request.system,
                prompt: &request.user_text(),
            },
            response: result.as_ref().ok().map(|c| ResponseRecord {
                text: &c.text,
                usage: &c.usage,
            }),
            error: result.as_ref().err().map(|e| e.to_string()),
            failed_attempts: failures.iter().map(|e| e.to_string()).collect(),
        };
        let safe: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = self.dir.join(format!("{seq:04}-{safe}.json"));
        let json = serde_json::to_vec_pretty(&rec).expect("record serializes");
        if let Err(e) = crate::fsutil::write_atomic(&path, &json)
            && let Ok(mut slot) = self.error.lock()
            && slot.is_none()
        {
            *slot = Some(format!("cannot save model call to {}: {e}", path.display()));
        }
    }

    /// The first write error, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    pub fn calls(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }
}
