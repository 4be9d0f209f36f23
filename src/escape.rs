//! Untrusted text (spec lines, file names, model replies) made safe for the
//! outputs people read. One place for every escaping rule, applied where
//! text leaves the program:
//!
//! - `terminal`: control characters shown, never obeyed. An escape
//!   sequence from a spec (OSC 52 clipboard write, screen clear, window
//!   title) or a C1 control becomes a visible symbol (`␛`), as do the
//!   bidirectional overrides that reorder what a reader sees.
//! - `TerminalSafe`: a writer that applies `terminal` to everything written
//!   through it, keeping only our own colour codes (SGR) when colour is on.
//!   `main.rs` puts stdout behind it for the human-readable formats.
//! - `markdown`: text for the Markdown (pull-request comment) report. It
//!   cannot open a link or load an image (`[`, `]`, `<`, `>` escaped), ping
//!   a person or team (`@name` broken by a zero-width space), autolink a
//!   URL, or break out of a table cell.

use std::borrow::Cow;
use std::io::{self, Write};

/// A character a terminal might obey rather than show.
fn is_dangerous(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// The visible stand-in for a dangerous character: the Unicode control
/// picture for C0 controls and DEL (`␛` for ESC), `\u{fffd}` otherwise.
fn visible(c: char) -> char {
    match c {
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// `s` with every control character except newline and tab made visible.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_dangerous) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| if is_dangerous(c) { visible(c) } else { c })
            .collect(),
    )
}

/// Length of an SGR sequence (`ESC [ digits ; ... m`) at the start of `s`.
fn sgr_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("\u{1b}[")?;
    let body = rest
        .bytes()
        .take(32)
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (rest.as_bytes().get(body) == Some(&b'm')).then_some(2 + body + 1)
}

/// `terminal`, keeping colour codes (SGR sequences) when `keep_sgr`.
pub fn terminal_keep_sgr(s: &str, keep_sgr: bool) -> Cow<'_, str> {
    if !keep_sgr || !s.contains('\u{1b}') {
        return terminal(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if let Some(n) = sgr_len(rest) {
            out.push_str(&rest[..n]);
            i += n;
            continue;
        }
        let c = rest.chars().next().expect("in bounds");
        out.push(if is_dangerous(c) { visible(c) } else { c });
        i += c.len_utf8();
    }
    Cow::Owned(out)
}

/// A writer that makes control characters visible, line by line. With
/// `keep_sgr`, our own colour codes pass. With `raw` (JSON, SARIF: their
/// encoders escape control characters themselves), bytes pass unchanged.
pub struct TerminalSafe<W: Write> {
    inner: W,
    line: Vec<u8>,
    keep_sgr: bool,
    raw: bool,
}

impl<W: Write> TerminalSafe<W> {
    pub fn new(inner: W, keep_sgr: bool, raw: bool) -> TerminalSafe<W> {
        TerminalSafe {
            inner,
            line: Vec::new(),
            keep_sgr,
            raw,
        }
    }

    fn emit(&mut self, upto: usize) -> io::Result<()> {
        let bytes: Vec<u8> = self.line.drain(..upto).collect();
        let text = String::from_utf8_lossy(&bytes);
        self.inner
            .write_all(terminal_keep_sgr(&text, self.keep_sgr).as_bytes())
    }
}

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.raw {
            return self.inner.write(buf);
        }
        self.line.extend_from_slice(buf);
        if let Some(i) = self.line.iter().rposition(|&b| b == b'\n') {
            self.emit(i + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            let n = self.line.len();
            self.emit(n)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for TerminalSafe<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Untrusted text inside a Markdown table cell or list item: one line, no
/// live links, images, HTML, mentions or autolinks, no cell break-out.
pub fn markdown(s: &str) -> String {
    let s = terminal(s);
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '[' | ']' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // `@team` pings; `@` + zero-width space + `team` looks the same
            // and pings no one (nor autolinks an e-mail address).
            '@' if next.is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '-') => {
                out.push_str("@\u{200b}");
            }
            // `https://host` and `www.host` autolink; break the pattern.
            ':' if chars[i + 1..].starts_with(&['/', '/']) => out.push_str(":\u{200b}"),
            '.' if i >= 3
                && chars[i - 3..i]
                    .iter()
                    .collect::<String>()
                    .eq_ignore_ascii_case("www")
                && (i == 3 || !chars[i - 4].is_alphanumeric()) =>
            {
                out.push_str("\u{200b}.");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Untrusted text inside a Markdown code span: one line, and a backtick
/// cannot close the span early (it is replaced by a look-alike `ˋ`).
pub fn markdown_code(s: &str) -> String {
    terminal(s)
        .chars()
        .map(|c| match c {
            '`' => '\u{2cb}',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_obeyed() {
        let osc52 = "copy \u{1b}]52;c;ZWNobyBwd25lZA==\u{7} me";
        let clear = "\u{1b}[2J\u{1b}[H";
        let title = "\u{1b}]0;owned\u{7}";
        for s in [osc52, clear, title, "a\u{9b}31mb", "x\u{202e}cba"] {
            let t = terminal(s);
            assert!(!t.chars().any(is_dangerous), "{t:?}");
        }
        assert_eq!(terminal(clear), "␛[2J␛[H");
        assert_eq!(terminal("tab\tand\nnewline"), "tab\tand\nnewline");
        // Our colours pass only when kept, and only SGR.
        let red = "\u{1b}[31mred\u{1b}[0m";
        assert_eq!(terminal_keep_sgr(red, true), red);
        assert_eq!(terminal_keep_sgr(red, false), "␛[31mred␛[0m");
        assert_eq!(terminal_keep_sgr(clear, true), "␛[2J␛[H");
    }

    #[test]
    fn writer_cleans_across_writes() {
        let mut out = Vec::new();
        {
            let mut w = TerminalSafe::new(&mut out, false, false);
            w.write_all(b"a\x1b").unwrap();
            w.write_all(b"]0;t\x07\nb").unwrap();
            // A C1 control split across two writes.
            w.write_all(&[0xc2]).unwrap();
            w.write_all(&[0x9b]).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "a␛]0;t␇\nb\u{fffd}");
        let mut raw = Vec::new();
        TerminalSafe::new(&mut raw, false, true)
            .write_all(b"\x1b")
            .unwrap();
        assert_eq!(raw, b"\x1b");
    }

    #[test]
    fn markdown_cannot_link_load_or_ping() {
        let s = "![x](https://evil.example/p.png) [click](http://x) <img src=x> @org/team @alice www.evil.com a|b";
        let m = markdown(s);
        assert!(!m.contains("!["), "{m}");
        assert!(!m.contains("](") || m.contains("\\]("), "{m}");
        assert!(!m.contains("<img"), "{m}");
        assert!(!m.contains("@org") && !m.contains("@alice"), "{m}");
        assert!(!m.contains("https://") && !m.contains("http://"), "{m}");
        assert!(!m.contains("www.evil"), "{m}");
        assert!(m.contains("a\\|b"), "{m}");
        assert_eq!(markdown("line\nbreak"), "line break");
        assert_eq!(markdown("plain words, 3 (ok)."), "plain words, 3 (ok).");
        assert_eq!(markdown_code("a`b"), "aˋb");
    }
}
