//! The store folder's exclusive lock and its atomic writes. Every
//! read-modify-write of the store, the stats and the history happens while
//! holding `StoreLock` (std's `File::lock` on `.adversarial-spec/.lock`, a
//! file that is never renamed, unlike the data files), so concurrent runs on
//! one project both land. Writes go through `fsutil::write_atomic`: a
//! reader, or a process killed mid-write, sees the old file or the new one.
//! This module never decides what to write.

use super::store_error::StoreError;
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::Duration;

/// Hidden, test-only: pause (ms) between the 16 chunks of every store write,
/// so a test can kill the process mid-write. Never set it in real use.
pub const TEST_PACE_ENV: &str = "GAUNTLET_TEST_WRITE_PACE_MS";

/// Held while the folder is being changed; released on drop.
pub struct StoreLock {
    file: File,
}

impl StoreLock {
    /// Creates `dir` if needed and blocks until the lock is ours.
    pub fn acquire(dir: &Path) -> Result<StoreLock, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Write {
            file: dir.display().to_string(),
            source,
        })?;
        let path = dir.join(super::location::LOCK_FILE);
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        let file = options
            .open(&path)
            .or_else(|e| {
                // A read-only folder whose lock file exists still locks; the
                // writes after it will fail with a clear error.
                if e.kind() == std::io::ErrorKind::PermissionDenied {
                    File::open(&path).map_err(|_| e)
                } else {
                    Err(e)
                }
            })
            .map_err(|source| StoreError::Lock {
                file: path.display().to_string(),
                source,
            })?;
        file.lock().map_err(|source| StoreError::Lock {
            file: path.display().to_string(),
            source,
        })?;
        remove_stale_temp_files(dir);
        // Sub-folders (`reviews/`, `runs/`): temp files of dead writers.
        crate::fsutil::remove_dead_temp_files(dir);
        Ok(StoreLock { file })
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Every write in the folder happens under the lock, so with the lock held
/// any `fsutil` temp file left there belongs to a process that died
/// mid-write: its target was never replaced, and the temp file is garbage.
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.')
            && name.contains(".tmp.")
            && e.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn pace() -> Option<Duration> {
    std::env::var(TEST_PACE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}

/// Atomic write of one store file.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    stage_file(path, bytes)?.commit(path)
}

/// A store file written to its temp name, replaced on `commit`; dropped
/// uncommitted, the target is untouched and the temp file removed.
pub struct StagedFile(crate::fsutil::Staged);

impl StagedFile {
    pub fn commit(self, path: &Path) -> Result<(), StoreError> {
        self.0.commit().map_err(|source| StoreError::Write {
            file: path.display().to_string(),
            source,
        })
    }
}

/// Writes `bytes` beside `path` without replacing it yet.
pub fn stage_file(path: &Path, bytes: &[u8]) -> Result<StagedFile, StoreError> {
    crate::fsutil::stage(path, bytes, pace())
        .map(StagedFile)
        .map_err(|source| StoreError::Write {
            file: path.display().to_string(),
            source,
        })
}
