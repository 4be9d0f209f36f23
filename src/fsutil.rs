//! Safe file access for everything the tool reads or writes.
//!
//! - Atomic writes: a fresh temp file in the same folder (created with
//!   `O_EXCL` and `O_NOFOLLOW`, so a planted file or symlink of that name is
//!   never opened), fsync, rename. A reader sees the old file or the new one,
//!   never half of one; the rename replaces a symlink at the target, it never
//!   writes through it.
//! - Bounded reads of regular files only: a FIFO, a device or `/dev/zero`
//!   is refused with a clear error instead of blocking or filling memory.
//! - Writing a file the user named (`--stats-json`): through a symlink to
//!   its target, in place for a device or a pipe.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest store, history or stats file read (the store at 100,000 entries
/// is about 60 MB).
pub const MAX_STORE_FILE_BYTES: u64 = 512 * 1024 * 1024;
/// Largest data file read: persona, protocol, config.
pub const MAX_DATA_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The marker every temp file name carries: `.NAME.tmp.PID.N`.
pub const TEMP_MARKER: &str = ".tmp.";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether symlinks are followed when opening for reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

fn open_options_read(links: Links) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: opening a FIFO must not wait for a writer. Reads of
        // a regular file are unaffected.
        let mut flags = libc::O_NONBLOCK;
        if links == Links::Refuse {
            flags |= libc::O_NOFOLLOW;
        }
        o.custom_flags(flags);
    }
    o
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

/// What kind of file this is, in words, for errors.
pub fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Reads a regular file of at most `cap` bytes. `NotFound` passes through
/// unchanged; a symlink (with `Links::Refuse`), a FIFO, a device, a
/// directory or a larger file is an `InvalidInput` error saying which.
pub fn read_regular(path: &Path, cap: u64, links: Links) -> std::io::Result<Vec<u8>> {
    if links == Links::Refuse {
        // O_NOFOLLOW fails with ELOOP, which says nothing useful; say it.
        if let Ok(m) = std::fs::symlink_metadata(path)
            && m.file_type().is_symlink()
        {
            return Err(invalid(
                "is a symbolic link (gauntlet does not follow links here)".to_string(),
            ));
        }
    }
    let file = open_options_read(links).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid(format!(
            "is {}, not a regular file",
            kind_of(meta.file_type())
        )));
    }
    if meta.len() > cap {
        return Err(invalid(format!(
            "is {} bytes, over the {} byte limit",
            meta.len(),
            cap
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(invalid(format!(
            "grew over the {cap} byte limit while read"
        )));
    }
    Ok(bytes)
}

/// `read_regular` as UTF-8 text.
pub fn read_regular_text(path: &Path, cap: u64, links: Links) -> std::io::Result<String> {
    let bytes = read_regular(path, cap, links)?;
    String::from_utf8(bytes).map_err(|e| {
        invalid(format!(
            "is not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// A new temp file beside `path`, created exclusively and never through a
/// symlink. Returns the file and its path.
pub fn create_temp(path: &Path) -> std::io::Result<(File, PathBuf)> {
    let dir = parent(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}{TEMP_MARKER}{}.{n}", std::process::id()));
        let mut o = OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.custom_flags(libc::O_NOFOLLOW);
        }
        match o.open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            // A leftover (or planted) file of that name: never reuse it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_paced(path, bytes, None)
}

/// A file written to its temp name and synced, waiting to be renamed over
/// its target. Dropping it without `commit` removes the temp file, so a
/// group of files can be prepared and then all replaced, or none.
pub struct Staged {
    tmp: PathBuf,
    target: PathBuf,
    done: bool,
}

impl Staged {
    /// Renames the temp file over the target and syncs the folder.
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.target)?;
        self.done = true;
        if let Ok(d) = File::open(parent(&self.target)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to a fresh temp file beside `path` and syncs it; the
/// target is untouched until `Staged::commit`.
pub fn stage(
    path: &Path,
    bytes: &[u8],
    pause: Option<std::time::Duration>,
) -> std::io::Result<Staged> {
    let (mut f, tmp) = create_temp(path)?;
    let staged = Staged {
        tmp,
        target: path.to_path_buf(),
        done: false,
    };
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
    Ok(staged)
}

/// `write_atomic`, optionally writing the temp file in 16 chunks with a
/// pause between them. Only tests use the pause: it widens the window in
/// which a killed process is mid-write, to show the target is never torn.
pub fn write_atomic_paced(
    path: &Path,
    bytes: &[u8],
    pause: Option<std::time::Duration>,
) -> std::io::Result<()> {
    stage(path, bytes, pause)?.commit()
}

/// Writes a file the user named on the command line. A symlink is followed
/// (its target is replaced atomically, the link kept); a device or a pipe
/// (`/dev/stderr`, `/dev/null`) is written in place, since renaming over it
/// would replace the device with a regular file; a directory is an error.
pub fn write_user_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(invalid("is a directory".to_string())),
        Ok(m) if !m.is_file() => {
            let mut f = OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
        _ => {
            let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            let target = if is_link {
                resolve_link(path)?
            } else {
                path.to_path_buf()
            };
            write_atomic(&target, bytes)
        }
    }
}

/// Where a symlink chain ends (the final target may not exist yet).
fn resolve_link(path: &Path) -> std::io::Result<PathBuf> {
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&cur)?;
                cur = if to.is_absolute() {
                    to
                } else {
                    parent(&cur).join(to)
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(invalid("has too many levels of symbolic links".to_string()))
}

/// Canonical form of a path that may not exist yet: its nearest existing
/// ancestor resolved (symlinks and all), the rest appended lexically.
pub fn resolve_maybe_missing(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("."))
            .join(p)
    };
    let abs = normalise_lexically(&abs);
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(cur) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return abs,
        }
    }
}

/// Whether a file name is one of our temp files (`.NAME.tmp.PID.N`), and if
/// so the pid that wrote it.
pub fn temp_file_pid(name: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    let at = name.rfind(TEMP_MARKER)?;
    let tail = &name[at + TEMP_MARKER.len()..];
    let (pid, n) = tail.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` may still be running (always true where that
/// cannot be told, so its files are kept).
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes our temp files under `dir` (recursively, never following links)
/// whose writer is no longer running: what a killed run left behind.
/// Returns how many were removed.
pub fn remove_dead_temp_files(dir: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
                continue;
            }
            let name = e.file_name();
            if ft.is_file()
                && temp_file_pid(&name.to_string_lossy()).is_some_and(|p| !process_alive(p))
                && std::fs::remove_file(e.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

/// Creates `dir` (a folder under `base`) and its missing parents, refusing
/// if any of them below `base` is a symlink or not a folder: a link planted
/// in a repository must not send our writes elsewhere.
pub fn create_dir_no_links(base: &Path, dir: &Path) -> std::io::Result<()> {
    let rel = dir.strip_prefix(base).unwrap_or(dir);
    let mut cur = base.to_path_buf();
    std::fs::create_dir_all(&cur)?;
    for c in rel.components() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(invalid(format!(
                    "{} is a symbolic link (gauntlet does not write through links here)",
                    cur.display()
                )));
            }
            Ok(m) if m.is_dir() => {}
            Ok(m) => {
                return Err(invalid(format!(
                    "{} is {}, not a folder",
                    cur.display(),
                    kind_of(m.file_type())
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::create_dir(&cur) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    if !std::fs::symlink_metadata(&cur).is_ok_and(|m| m.is_dir()) {
                        return Err(invalid(format!("{} is not a folder", cur.display())));
                    }
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_carry_the_pid() {
        assert_eq!(temp_file_pid(".a.json.tmp.123.4"), Some(123));
        assert_eq!(temp_file_pid(".a.json.tmp.77"), None);
        assert_eq!(temp_file_pid(".a.json.tmp.77.x"), None);
        assert_eq!(temp_file_pid("a.json.tmp.77"), None);
        assert_eq!(temp_file_pid(".a.json"), None);
    }

    #[cfg(unix)]
    #[test]
    fn planted_temp_symlink_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let target = dir.path().join("a.json");
        // Plant links under every temp name the next few writes could pick.
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        for n in next..next + 64 {
            let name = format!(".a.json.tmp.{}.{n}", std::process::id());
            std::os::unix::fs::symlink(&victim, dir.path().join(name)).unwrap();
        }
        write_atomic(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn reads_refuse_fifos_links_and_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let ok = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            let e = read_regular(&fifo, 10, Links::Follow).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
        }
        let e = read_regular(Path::new("/dev/zero"), 10, Links::Follow).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let f = dir.path().join("f");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_regular(&f, 5, Links::Refuse).unwrap(), b"12345");
        let e = read_regular(&f, 4, Links::Refuse).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        let l = dir.path().join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        assert_eq!(read_regular(&l, 5, Links::Follow).unwrap(), b"12345");
        let e = read_regular(&l, 5, Links::Refuse).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(
            read_regular(&dir.path().join("none"), 5, Links::Refuse)
                .unwrap_err()
                .kind(),
            std::io::ErrorKind::NotFound
        );
    }

    #[cfg(unix)]
    #[test]
    fn user_files_follow_links_and_write_devices_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_user_file(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A FIFO (never /dev/null or /dev/full: tests may run as root, and a
        // regression would replace the system's device) is written in place.
        let fifo = dir.path().join("fifo");
        if std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read(&fifo).unwrap())
            };
            write_user_file(&fifo, b"in place").unwrap();
            assert_eq!(reader.join().unwrap(), b"in place");
            assert!(
                std::fs::symlink_metadata(&fifo)
                    .unwrap()
                    .file_type()
                    .is_fifo()
            );
        }
        assert!(write_user_file(dir.path(), b"x").is_err());
    }

    #[test]
    fn staged_files_vanish_unless_committed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        drop(stage(&p, b"a", None).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        stage(&p, b"b", None).unwrap().commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"b");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
