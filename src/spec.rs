//! The spec as the phases see it: its text split into numbered lines, each
//! line classified (heading, prose, list item, table row, code) and placed in
//! its section and its block (paragraph, list, table or code block).
//!
//! Parsing uses pulldown-cmark and never fails: any text is a spec. Reading
//! the spec from disk or stdin (and rejecting bad input) lives in `input.rs`.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Blank,
    Heading,
    Prose,
    ListItem,
    Table,
    Code,
    Html,
}

#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    pub text: String,
    pub kind: LineKind,
    /// Index into `Spec::sections`.
    pub section: usize,
    /// Block id: consecutive lines of one paragraph, list, table or code block
    /// share it. Blank lines get their own.
    pub block: usize,
    /// Language tag of the fenced code block this line is in (`sql`, `json`...).
    pub code_lang: Option<String>,
}

/// What a section is for, judged from its heading. Evidence found in an
/// open-questions or non-goals section means something different from
/// evidence in the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionRole {
    Normal,
    Goals,
    NonGoals,
    OpenQuestions,
    Alternatives,
    Preamble,
}

#[derive(Debug, Clone)]
pub struct Section {
    pub heading: String,
    /// 0 for the preamble before the first heading.
    pub level: u8,
    /// First and last line (1-based, inclusive), heading included.
    pub start: usize,
    pub end: usize,
    pub parent: Option<usize>,
    pub role: SectionRole,
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub path: Option<String>,
    pub text: String,
    pub sha256: String,
    pub lines: Vec<Line>,
    pub sections: Vec<Section>,
}

impl Spec {
    pub fn parse(path: Option<String>, text: String) -> Spec {
        let sha256 = sha256_hex(text.as_bytes());
        let (lines, sections) = structure(&text);
        Spec {
            path,
            text,
            sha256,
            lines,
            sections,
        }
    }

    pub fn bytes(&self) -> usize {
        self.text.len()
    }

    /// The line with 1-based number `n`.
    pub fn line(&self, n: usize) -> Option<&Line> {
        n.checked_sub(1).and_then(|i| self.lines.get(i))
    }

    /// The first heading's text, if any.
    pub fn title(&self) -> Option<&str> {
        self.sections
            .iter()
            .find(|s| s.level > 0)
            .map(|s| s.heading.as_str())
    }

    pub fn section_of(&self, line: usize) -> Option<&Section> {
        self.line(line).map(|l| &self.sections[l.section])
    }

    /// Lines of the section `idx`, as a 1-based inclusive range.
    pub fn section_lines(&self, idx: usize) -> Range<usize> {
        let s = &self.sections[idx];
        s.start..s.end + 1
    }

    /// The section `idx` together with its subsections.
    pub fn section_tree_lines(&self, idx: usize) -> Range<usize> {
        let s = &self.sections[idx];
        let mut end = s.end;
        for t in &self.sections[idx + 1..] {
            if t.level <= s.level {
                break;
            }
            end = t.end;
        }
        s.start..end + 1
    }

    /// Lines of the block containing `line` (1-based inclusive range).
    pub fn block_lines(&self, line: usize) -> Range<usize> {
        let Some(l) = self.line(line) else {
            return line..line;
        };
        let mut a = line;
        while a > 1 && self.lines[a - 2].block == l.block {
            a -= 1;
        }
        let mut b = line;
        while b < self.lines.len() && self.lines[b].block == l.block {
            b += 1;
        }
        a..b + 1
    }

    /// A breadcrumb like "Design > Error handling" for the section `idx`.
    pub fn section_path(&self, idx: usize) -> String {
        let mut parts = vec![self.sections[idx].heading.clone()];
        let mut cur = self.sections[idx].parent;
        while let Some(p) = cur {
            if self.sections[p].level > 1 {
                parts.push(self.sections[p].heading.clone());
            }
            cur = self.sections[p].parent;
        }
        parts.reverse();
        parts.join(" > ")
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::concern::hex(&Sha256::digest(bytes))
}

fn section_role(heading: &str) -> SectionRole {
    let h = heading.to_lowercase();
    let has = |w: &str| h.contains(w);
    if has("non-goal") || has("non goal") || has("nongoal") || has("out of scope") {
        SectionRole::NonGoals
    } else if has("open question") || has("unresolved") || has("future work") || has("faq") {
        SectionRole::OpenQuestions
    } else if has("alternative") || has("rejected") {
        SectionRole::Alternatives
    } else if has("goal") || has("objective") || has("success") {
        SectionRole::Goals
    } else {
        SectionRole::Normal
    }
}

/// Offsets of line starts, to map byte offsets to 1-based lines.
fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    v
}

fn line_of(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i,
    }
}

fn structure(text: &str) -> (Vec<Line>, Vec<Section>) {
    let raw: Vec<&str> = text.split('\n').collect();
    // A trailing newline does not make an extra line.
    let count = if text.is_empty() {
        0
    } else if text.ends_with('\n') {
        raw.len() - 1
    } else {
        raw.len()
    };
    let mut lines: Vec<Line> = raw[..count]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.strip_suffix('\r').unwrap_or(t);
            Line {
                number: i + 1,
                text: t.to_string(),
                kind: if t.trim().is_empty() {
                    LineKind::Blank
                } else {
                    LineKind::Prose
                },
                section: 0,
                block: 0,
                code_lang: None,
            }
        })
        .collect();
    let starts = line_starts(text);
    let n = lines.len();
    let mut headings: Vec<(usize, u8, Range<usize>)> = Vec::new();
    let mut heading_text = String::new();
    let mut heading_open: Option<(u8, Range<usize>)> = None;
    let mut marks: Vec<(Range<usize>, LineKind, Option<String>)> = Vec::new();

    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    for (ev, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                heading_open = Some((level as u8, range));
                heading_text.clear();
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, r)) = heading_open.take() {
                    headings.push((headings.len(), level, r.clone()));
                    marks.push((r, LineKind::Heading, Some(heading_text.trim().to_string())));
                }
            }
            Event::Text(t) | Event::Code(t) if heading_open.is_some() => heading_text.push_str(&t),
            Event::Start(Tag::CodeBlock(kind)) => {
                let code_lang = match kind {
                    pulldown_cmark::CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .map(|s| s.to_ascii_lowercase()),
                    pulldown_cmark::CodeBlockKind::Indented => None,
                };
                marks.push((range, LineKind::Code, code_lang));
            }
            Event::Start(Tag::Table(_)) => marks.push((range, LineKind::Table, None)),
            Event::Start(Tag::Item) => marks.push((range, LineKind::ListItem, None)),
            Event::Html(_) | Event::InlineHtml(_) if !range.is_empty() => {
                marks.push((range, LineKind::Html, None))
            }
            _ => {}
        }
    }

    // Mark kinds; code and tables override list items they sit inside.
    let mut heading_lines: Vec<(usize, u8, String)> = Vec::new();
    for (r, kind, extra) in &marks {
        let a = line_of(&starts, r.start).clamp(1, n.max(1));
        let end_off = r.end.saturating_sub(1).max(r.start);
        let b = line_of(&starts, end_off).clamp(a, n.max(1));
        if n == 0 {
            break;
        }
        for l in &mut lines[a - 1..b] {
            if l.kind == LineKind::Blank && *kind != LineKind::Code {
                continue;
            }
            let replace = !matches!(
                (l.kind, kind),
                (LineKind::Code, _)
                    | (LineKind::Heading, _)
                    | (LineKind::Table, LineKind::ListItem)
            );
            if replace {
                l.kind = *kind;
                if *kind == LineKind::Code {
                    l.code_lang = extra.clone();
                }
            }
        }
        if *kind == LineKind::Heading {
            let level = headings
                .iter()
                .find(|(_, _, hr)| hr == r)
                .map(|(_, lv, _)| *lv)
                .unwrap_or(1);
            heading_lines.push((a, level, extra.clone().unwrap_or_default()));
        }
    }
    heading_lines.sort_by_key(|h| h.0);

    // Sections: a preamble, then one per heading, each ending before the next heading.
    let mut sections = vec![Section {
        heading: "(preamble)".to_string(),
        level: 0,
        start: 1,
        end: heading_lines
            .first()
            .map(|h| h.0.saturating_sub(1))
            .unwrap_or(n),
        parent: None,
        role: SectionRole::Preamble,
    }];
    for (i, (line, level, heading)) in heading_lines.iter().enumerate() {
        let end = heading_lines
            .get(i + 1)
            .map(|h| h.0.saturating_sub(1))
            .unwrap_or(n);
        let parent = sections
            .iter()
            .rposition(|s: &Section| s.level < *level)
            .or(Some(0));
        let mut role = section_role(heading);
        if role == SectionRole::Normal
            && let Some(p) = parent
            && matches!(
                sections[p].role,
                SectionRole::NonGoals | SectionRole::OpenQuestions | SectionRole::Alternatives
            )
        {
            role = sections[p].role;
        }
        sections.push(Section {
            heading: heading.clone(),
            level: *level,
            start: *line,
            end: end.max(*line),
            parent,
            role,
        });
    }
    let mut si = 0;
    let mut block = 0;
    let mut prev_kind = LineKind::Blank;
    for l in &mut lines {
        while si + 1 < sections.len() && sections[si + 1].start <= l.number {
            si += 1;
        }
        l.section = si;
        let continues = l.kind != LineKind::Blank
            && l.kind != LineKind::Heading
            && prev_kind != LineKind::Blank
            && prev_kind != LineKind::Heading
            && (prev_kind == l.kind
                || (prev_kind == LineKind::Prose && l.kind == LineKind::ListItem)
                || (prev_kind == LineKind::ListItem && l.kind == LineKind::Prose));
        if !continues {
            block += 1;
        }
        l.block = block;
        prev_kind = l.kind;
    }
    (lines, sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Title\n\nIntro line.\n\n## Goals\n\n- fast\n- safe\n\n## Design\n\nWe call the API.\nIt has a timeout.\n\n```sql\nCREATE TABLE t (id INT);\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Non-goals\n\nNothing.\n";

    #[test]
    fn classifies_lines_and_sections() {
        let s = Spec::parse(None, DOC.to_string());
        assert_eq!(s.lines.len(), 25);
        assert_eq!(s.line(1).unwrap().kind, LineKind::Heading);
        assert_eq!(s.line(7).unwrap().kind, LineKind::ListItem);
        assert_eq!(s.line(16).unwrap().kind, LineKind::Code);
        assert_eq!(s.line(16).unwrap().code_lang.as_deref(), Some("sql"));
        assert_eq!(s.line(21).unwrap().kind, LineKind::Table);
        assert_eq!(s.title(), Some("Title"));
        let design = s.section_of(12).unwrap();
        assert_eq!(design.heading, "Design");
        assert_eq!((design.start, design.end), (10, 22));
        assert_eq!(s.section_of(6).unwrap().role, SectionRole::Goals);
        assert_eq!(s.section_of(25).unwrap().role, SectionRole::NonGoals);
    }

    #[test]
    fn blocks_group_paragraphs() {
        let s = Spec::parse(None, DOC.to_string());
        assert_eq!(s.block_lines(12), 12..14);
        assert_eq!(s.block_lines(7), 7..9);
        assert_ne!(s.line(3).unwrap().block, s.line(12).unwrap().block);
    }

    #[test]
    fn section_tree_includes_subsections() {
        let s = Spec::parse(None, "# A\n## B\nx\n### C\ny\n## D\nz\n".to_string());
        let b = s.sections.iter().position(|x| x.heading == "B").unwrap();
        assert_eq!(s.section_tree_lines(b), 2..6);
        let c = s.sections.iter().position(|x| x.heading == "C").unwrap();
        assert_eq!(s.section_path(c), "B > C");
    }

    #[test]
    fn empty_and_headingless_text() {
        let s = Spec::parse(None, String::new());
        assert!(s.lines.is_empty());
        let s = Spec::parse(None, "just text\nmore".to_string());
        assert_eq!(s.lines.len(), 2);
        assert_eq!(s.sections.len(), 1);
        assert_eq!(s.title(), None);
    }
}
