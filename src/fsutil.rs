//! Atomic file writes: a temp file in the same folder, fsync, rename. A
//! reader sees the old file or the new one, never half of one.

use std::io::Write;
use std::path::Path;

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_paced(path, bytes, None)
}

/// `write_atomic`, optionally writing the temp file in 16 chunks with a
/// pause between them. Only tests use the pause: it widens the window in
/// which a killed process is mid-write, to show the target is never torn.
pub fn write_atomic_paced(
    path: &Path,
    bytes: &[u8],
    pause: Option<std::time::Duration>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        match pause {
            None => f.write_all(bytes)?,
            Some(p) => {
                for chunk in bytes.chunks(bytes.len().div_ceil(16).max(1)) {
                    f.write_all(chunk)?;
                    f.flush()?;
                    std::thread::sleep(p);
                }
            }
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Drop `.` and resolve `..` lexically (no symlink resolution).
pub fn normalise_lexically(p: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
