//! Reading a spec from a file or standard input, and rejecting what is not a
//! spec: nothing at all, a directory, a missing file, binary data, or more
//! than the size limit. Invalid UTF-8 is decoded lossily with a warning.

use crate::error::InputError;
use crate::spec::Spec;
use std::io::Read;
use std::path::Path;

pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// A spec read from somewhere, with any warnings about how it was decoded.
#[derive(Debug)]
pub struct LoadedSpec {
    pub spec: Spec,
    pub warnings: Vec<String>,
}

/// Read the spec at `path`, or standard input when `path` is `None` or `-`.
pub fn load(path: Option<&Path>, max_bytes: u64) -> Result<LoadedSpec, InputError> {
    match path {
        Some(p) if p != Path::new("-") => load_file(p, max_bytes),
        _ => {
            let stdin = std::io::stdin();
            let bytes = read_limited(stdin.lock(), max_bytes, "<stdin>")?;
            decode(None, bytes, "<stdin>")
        }
    }
}

pub fn load_file(p: &Path, max_bytes: u64) -> Result<LoadedSpec, InputError> {
    let shown = p.display().to_string();
    let meta = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(InputError::NotFound { path: shown });
        }
        Err(source) => {
            return Err(InputError::Read {
                path: shown,
                source,
            });
        }
    };
    if meta.is_dir() {
        return Err(InputError::IsDirectory { path: shown });
    }
    if meta.is_file() && meta.len() > max_bytes {
        return Err(InputError::TooLarge {
            path: shown,
            size: meta.len(),
            limit: max_bytes,
        });
    }
    let file = std::fs::File::open(p).map_err(|source| InputError::Read {
        path: shown.clone(),
        source,
    })?;
    let bytes = read_limited(file, max_bytes, &shown)?;
    decode(Some(shown.clone()), bytes, &shown)
}

fn read_limited(r: impl Read, max_bytes: u64, shown: &str) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::new();
    r.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Read {
            path: shown.to_string(),
            source,
        })?;
    if bytes.len() as u64 > max_bytes {
        return Err(InputError::TooLarge {
            path: shown.to_string(),
            size: bytes.len() as u64,
            limit: max_bytes,
        });
    }
    Ok(bytes)
}

/// Turn bytes into a spec (shared by single runs and batch review).
pub fn decode(path: Option<String>, bytes: Vec<u8>, shown: &str) -> Result<LoadedSpec, InputError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(match path {
            None => InputError::EmptyStdin,
            Some(path) => InputError::EmptyFile { path },
        });
    }
    if bytes.contains(&0) {
        return Err(InputError::Binary {
            path: shown.to_string(),
        });
    }
    let mut warnings = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            warnings.push(format!(
                "{shown} is not valid UTF-8 (first bad byte at offset {valid}); decoded lossily"
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let text = text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text);
    // Only a BOM, Unicode spaces or invisible format characters: nothing a
    // reader would see, so nothing to review.
    if text.chars().all(is_blank) {
        return Err(match path {
            None => InputError::EmptyStdin,
            Some(path) => InputError::EmptyFile { path },
        });
    }
    let text = normalise_apostrophes(normalise_line_endings(text));
    Ok(LoadedSpec {
        spec: Spec::parse(path, text),
        warnings,
    })
}

/// Whitespace, or a character that renders as nothing (BOM, zero-width
/// space and joiners, word joiner).
fn is_blank(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{feff}' | '\u{200b}'..='\u{200d}' | '\u{2060}')
}

/// CRLF and lone CR (old Mac) line endings become LF, so a spec reads the
/// same whatever editor saved it.
pub fn normalise_line_endings(text: String) -> String {
    if !text.contains('\r') {
        return text;
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Typographic single quotes (`’`, `‘`, as word processors type them)
/// become ASCII apostrophes, so "don’t" reads as the denial "don't" and
/// "user’s" as "user's" to every rule and sentence reading.
pub fn normalise_apostrophes(text: String) -> String {
    if !text.contains(['\u{2019}', '\u{2018}']) {
        return text;
    }
    text.replace(['\u{2019}', '\u{2018}'], "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            decode(None, b"  \n".to_vec(), "x"),
            Err(InputError::EmptyStdin)
        ));
        assert!(matches!(
            decode(Some("a".into()), vec![], "a"),
            Err(InputError::EmptyFile { .. })
        ));
        assert!(matches!(
            decode(None, b"a\0b".to_vec(), "x"),
            Err(InputError::Binary { .. })
        ));
        let l = decode(None, vec![b'#', b' ', 0xff, b'\n'], "x").unwrap();
        assert_eq!(l.warnings.len(), 1);
        assert!(l.spec.text.contains('\u{fffd}'));
    }

    #[test]
    fn invisible_only_input_is_empty() {
        for blank in [
            "\u{feff}".as_bytes().to_vec(),
            "\u{feff}\u{00a0}\u{2003}\u{3000}\n\u{200b}"
                .as_bytes()
                .to_vec(),
        ] {
            assert!(matches!(
                decode(Some("a".into()), blank, "a"),
                Err(InputError::EmptyFile { .. })
            ));
        }
    }

    #[test]
    fn cr_and_crlf_become_lf() {
        let cr = decode(None, b"# T\rline one\r\rline two\r".to_vec(), "x").unwrap();
        let crlf = decode(None, b"# T\r\nline one\r\n\r\nline two\r\n".to_vec(), "x").unwrap();
        let lf = decode(None, b"# T\nline one\n\nline two\n".to_vec(), "x").unwrap();
        assert_eq!(cr.spec.text, lf.spec.text);
        assert_eq!(crlf.spec.text, lf.spec.text);
        assert_eq!(cr.spec.sha256, lf.spec.sha256);
    }

    #[test]
    fn typographic_apostrophes_read_as_ascii_ones() {
        let curly = decode(
            None,
            "# T\nWe don\u{2019}t keep the user\u{2019}s \u{2018}draft\u{2019}.\n"
                .as_bytes()
                .to_vec(),
            "x",
        )
        .unwrap();
        assert_eq!(curly.spec.text, "# T\nWe don't keep the user's 'draft'.\n");
        assert_eq!(
            curly.spec.lines[1].lower,
            "we don't keep the user's 'draft'."
        );
    }

    #[test]
    fn size_limit_is_exact() {
        let r = read_limited(&b"12345"[..], 5, "x").unwrap();
        assert_eq!(r.len(), 5);
        assert!(matches!(
            read_limited(&b"123456"[..], 5, "x"),
            Err(InputError::TooLarge { .. })
        ));
    }
}
