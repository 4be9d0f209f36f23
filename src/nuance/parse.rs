//! Reads one nuance file (the format in `nuances/README.md`): `##`
//! headings start technologies, `- ` bullets are nuances, indented lines
//! continue a bullet, everything else is a comment. Errors name the file
//! and the line.

use super::{MAX_FILE_BYTES, Nuance};
use crate::error::DataError;

/// One `##` section of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub technology: String,
    pub nuances: Vec<Nuance>,
}

fn syntax(file: &str, line: usize, message: &str) -> DataError {
    DataError::Syntax {
        file: file.to_string(),
        line,
        column: 1,
        message: message.to_string(),
    }
}

/// Parses a nuance file's text; `file` is the name shown in errors and
/// recorded as each nuance's source.
pub fn parse(file: &str, text: &str) -> Result<Vec<Entry>, DataError> {
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(DataError::Invalid {
            file: file.to_string(),
            message: format!(
                "{} bytes, over the {MAX_FILE_BYTES}-byte limit for a nuance file",
                text.len()
            ),
        });
    }
    let mut out: Vec<Entry> = Vec::new();
    // The bullet being read: its first line and text so far.
    let mut open: Option<(usize, String)> = None;
    let mut fence: Option<&str> = None;
    let close = |open: &mut Option<(usize, String)>, out: &mut Vec<Entry>| {
        if let Some((line, text)) = open.take()
            && let Some(e) = out.last_mut()
        {
            e.nuances.push(Nuance {
                text,
                source: file.to_string(),
                line,
            });
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.contains('\0') {
            return Err(syntax(file, n, "NUL byte (a nuance file is Markdown text)"));
        }
        let trimmed = raw.trim();
        // Fenced code is a comment, bullets and headings inside it included.
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            close(&mut open, &mut out);
            fence = Some(&trimmed[..3]);
            continue;
        }
        if let Some(rest) = raw.strip_prefix("## ").or(if raw.trim_end() == "##" {
            Some("")
        } else {
            None
        }) {
            close(&mut open, &mut out);
            let name = rest.trim().trim_end_matches('#').trim();
            if name.is_empty() {
                return Err(syntax(file, n, "`##` heading without a technology name"));
            }
            out.push(Entry {
                technology: name.to_string(),
                nuances: Vec::new(),
            });
            continue;
        }
        if raw.starts_with('#') {
            // The `#` title and deeper headings are comments.
            close(&mut open, &mut out);
            continue;
        }
        if let Some(rest) = raw.strip_prefix("- ").or((raw == "-").then_some("")) {
            close(&mut open, &mut out);
            if out.is_empty() {
                return Err(syntax(
                    file,
                    n,
                    "bullet before any `## Technology` heading (each nuance belongs to a technology)",
                ));
            }
            let t = rest.trim();
            if t.is_empty() {
                return Err(syntax(file, n, "empty bullet"));
            }
            open = Some((n, t.to_string()));
            continue;
        }
        if trimmed.is_empty() {
            close(&mut open, &mut out);
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            if let Some((_, t)) = &mut open {
                t.push(' ');
                t.push_str(trimmed);
            }
            // An indented line with no bullet above is a comment.
            continue;
        }
        // Any other text is a comment and ends the bullet.
        close(&mut open, &mut out);
    }
    if fence.is_some() {
        let line = text.lines().count();
        return Err(syntax(file, line, "code fence opened and never closed"));
    }
    close(&mut open, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(e: &Entry) -> Vec<&str> {
        e.nuances.iter().map(|n| n.text.as_str()).collect()
    }

    #[test]
    fn headings_bullets_continuations_and_comments() {
        let src = "# Technology Nuances\n\nIntro text is a comment.\n\n## Redis\n- Memory-only by default.\n  Budget for RAM.\n- Keys expire.\nA comment line.\n  indented, but no bullet above\n\n## MySQL\n- `utf8` is 3-byte.\n### Sub heading is a comment\n- Second.\n";
        let e = parse("N.md", src).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].technology, "Redis");
        assert_eq!(
            texts(&e[0]),
            ["Memory-only by default. Budget for RAM.", "Keys expire."]
        );
        assert_eq!(e[0].nuances[0].line, 6);
        assert_eq!(e[0].nuances[1].line, 8);
        assert_eq!(e[0].nuances[0].source, "N.md");
        assert_eq!(texts(&e[1]), ["`utf8` is 3-byte.", "Second."]);
    }

    #[test]
    fn fenced_code_is_a_comment() {
        let src = "## A\n- real\n```markdown\n## B\n- not a nuance\n```\n- also real\n";
        let e = parse("f", src).unwrap();
        assert_eq!(e.len(), 1);
        assert_eq!(texts(&e[0]), ["real", "also real"]);
        let err = parse("f", "## A\n```\n- x\n").unwrap_err().to_string();
        assert!(err.contains("never closed"), "{err}");
    }

    #[test]
    fn malformed_files_name_file_and_line() {
        let err = parse("p/NUANCES.md", "# T\n\n- orphan\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "p/NUANCES.md, line 3, column 1: bullet before any `## Technology` heading (each nuance belongs to a technology)"
        );
        let err = parse("x.md", "## A\n- ok\n##   \n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.md, line 3,") && err.contains("without a technology name"));
        let err = parse("x.md", "## A\n-   \n").unwrap_err().to_string();
        assert!(err.starts_with("x.md, line 2,") && err.contains("empty bullet"));
        let err = parse("x.md", "## A\n- a\0b\n").unwrap_err().to_string();
        assert!(err.starts_with("x.md, line 2,") && err.contains("NUL"));
    }

    #[test]
    fn size_limit_is_64_kib() {
        let ok = format!("## A\n- {}\n", "x".repeat(64 * 1024 - 10));
        assert!(ok.len() as u64 <= MAX_FILE_BYTES);
        assert!(parse("ok.md", &ok).is_ok());
        let big = format!("## A\n- {}\n", "x".repeat(64 * 1024));
        let err = parse("big.md", &big).unwrap_err().to_string();
        assert!(
            err.starts_with("big.md: ") && err.contains("65536-byte limit"),
            "{err}"
        );
    }

    #[test]
    fn names_merge_case_insensitively_across_files() {
        let mut set = crate::nuance::NuanceSet::default();
        set.merge(parse("a.md", "## PostgreSQL\n- one\n").unwrap());
        set.merge(parse("b.md", "## postgresql\n- two\n- ONE\n\n##  Redis \n- r\n").unwrap());
        assert_eq!(set.technologies.len(), 2);
        let pg = set.technology("POSTGRESQL").unwrap();
        assert_eq!(pg.name, "PostgreSQL");
        let got: Vec<(&str, &str)> = pg
            .nuances
            .iter()
            .map(|n| (n.text.as_str(), n.source.as_str()))
            .collect();
        // "ONE" repeats "one" in another case: kept once, from the first file.
        assert_eq!(got, [("one", "a.md"), ("two", "b.md")]);
        assert_eq!(set.technology("redis").unwrap().nuances.len(), 1);
    }
}
