//! Files the user names on the command line for output (`--report`): the
//! path is checked before the run does any work, and written atomically
//! after it. A symlink, a folder or a special file at that path is refused,
//! never written through or replaced; a regular file is replaced whole
//! (temp file, fsync, rename), so a reader never sees half a report.

use std::io;
use std::path::Path;

/// Why `path` cannot take an output file, if it cannot.
pub fn check(path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err("the output path is empty".to_string());
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{shown} is a symlink; refusing to write through it"
        )),
        Ok(m) if m.is_dir() => Err(format!("{shown} is a directory")),
        Ok(m) if !m.is_file() => Err(format!(
            "{shown} is not a regular file; refusing to replace it"
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            match parent {
                Some(p) if !p.is_dir() => Err(format!("folder {} does not exist", p.display())),
                _ => Ok(()),
            }
        }
        Err(e) => Err(format!("cannot use {shown}: {e}")),
    }
}

/// Writes `bytes` to `path` after checking it again (it may have changed
/// while the run worked).
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    check(path).map_err(io::Error::other)?;
    crate::fsutil::write_atomic(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_symlinks_folders_and_missing_folders() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(check(&link).unwrap_err().contains("symlink"));
        assert!(write(&link, b"x").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert!(check(dir.path()).unwrap_err().contains("directory"));
        assert!(
            check(&dir.path().join("no/such/r.md"))
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(
            check(Path::new("/dev/null"))
                .unwrap_err()
                .contains("regular file")
        );

        let fresh = dir.path().join("r.md");
        write(&fresh, b"one").unwrap();
        write(&fresh, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "two");
    }
}
