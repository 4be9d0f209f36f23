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
    /// The text a reader sees rendered, ASCII-lowercased, with the same byte
    /// offsets as `text`: what rule patterns and evidence are matched
    /// against. Text nobody sees on GitHub is blanked to spaces: HTML
    /// comments and tags, `[//]: # (...)` and other link reference
    /// definitions, image alt text, link destinations and titles, and the
    /// fences (with their info string) of code blocks.
    pub lower: String,
    /// `lower` with link text and bare URLs blanked too: the words that can
    /// state a design element. Triggers match here; a link's text names a
    /// document, not the design.
    pub design: String,
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
    /// Context, background, motivation, problem: today's system, not the design.
    Background,
    /// Summary, overview, concepts, user flow: the design told briefly; the
    /// details come later, so rules prefer findings elsewhere.
    Summary,
    Preamble,
    /// Requirements: in a product document they state what is built ("the
    /// system sends a reminder 24 h before"), so triggers fire there, and a
    /// quantified requirement is also a blanket policy, as in Goals.
    Requirements,
    /// Parts of a design document that are not the design: test plans,
    /// graduation and release checklists, implementation history, review
    /// questionnaires (a heading that is a question), tables of contents,
    /// references, glossaries and drawbacks. Their text may state a
    /// safeguard, but a trigger word there is not a design element.
    Process,
}

impl SectionRole {
    /// Whether the section may state the design: only there do triggers
    /// fire (not background, alternatives, goals, open questions, process).
    pub fn states_design(self) -> bool {
        matches!(
            self,
            SectionRole::Normal
                | SectionRole::Preamble
                | SectionRole::Summary
                | SectionRole::Requirements
        )
    }

    /// Whether the section states what is wanted: its quantified items are
    /// blanket policies and its figures are goals the design must reach.
    pub fn states_goals(self) -> bool {
        matches!(self, SectionRole::Goals | SectionRole::Requirements)
    }

    /// Whether the section tells the design briefly, with the details
    /// later: findings elsewhere are preferred.
    pub fn is_brief(self) -> bool {
        matches!(
            self,
            SectionRole::Summary | SectionRole::Preamble | SectionRole::Requirements
        )
    }
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
    /// `text` with ASCII letters lowercased.
    pub lower: String,
    pub sha256: String,
    pub lines: Vec<Line>,
    pub sections: Vec<Section>,
    /// Line range (1-based, end exclusive) of each block id.
    pub blocks: Vec<Range<usize>>,
    /// Lines holding text that is not rendered (comments, reference
    /// definitions, alt text, link titles): ignored as evidence and as
    /// triggers. Reports can say how much was ignored.
    pub hidden_lines: Vec<usize>,
    /// Computed-once facts about the lines that rules ask for repeatedly.
    pub memo: Memo,
}

/// Per-spec caches filled on first use (`std::sync::OnceLock`), so that a
/// question asked by every rule and every evaluator is answered once.
#[derive(Debug, Clone, Default)]
pub struct Memo {
    /// Lines stating a blanket policy ("every call has a 3 s timeout").
    pub universal_lines: std::sync::OnceLock<Vec<usize>>,
}

impl Spec {
    pub fn parse(path: Option<String>, text: String) -> Spec {
        let sha256 = sha256_hex(text.as_bytes());
        let Structure {
            lines,
            sections,
            blocks,
            hidden_lines,
            lower,
        } = structure(&text);
        Spec {
            path,
            lower,
            text,
            sha256,
            lines,
            sections,
            blocks,
            hidden_lines,
            memo: Memo::default(),
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

    /// Lines of the block containing `line` (1-based, end exclusive).
    pub fn block_lines(&self, line: usize) -> Range<usize> {
        match self.line(line) {
            Some(l) => self.blocks[l.block].clone(),
            None => line..line,
        }
    }

    /// How many lines hold text that is not rendered and was ignored.
    pub fn hidden_count(&self) -> usize {
        self.hidden_lines.len()
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

/// The cells of a Markdown table row, trimmed; an escaped `\|` stays in
/// its cell.
pub fn table_cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = if row.ends_with('|') && !row.ends_with("\\|") {
        &row[..row.len() - 1]
    } else {
        row
    };
    let mut cells = Vec::new();
    let mut start = 0;
    let bytes = row.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'|' && (i == 0 || bytes[i - 1] != b'\\') {
            cells.push(row[start..i].trim());
            start = i + 1;
        }
    }
    cells.push(row[start..].trim());
    cells
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::concern::hex(&Sha256::digest(bytes))
}

fn section_role(heading: &str) -> SectionRole {
    let h = heading.to_lowercase();
    let has = |w: &str| h.contains(w);
    // The heading without its number ("3.1 History").
    let bare = h.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
    if is_process_heading(&h) {
        SectionRole::Process
    } else if has("non-goal") || has("non goal") || has("nongoal") || has("out of scope") {
        SectionRole::NonGoals
    } else if has("open question") || has("unresolved") || is_future_heading(&h) {
        SectionRole::OpenQuestions
    } else if has("alternative") || has("rejected") {
        SectionRole::Alternatives
    } else if has("context")
        || has("background")
        || has("motivation")
        || has("problem")
        || has("current state")
        || has("today")
        || has("user stor")
        || has("use case")
        || bare.starts_with("stories")
        || bare.starts_with("history")
        || bare == "why"
    {
        SectionRole::Background
    } else if has("summary")
        || has("overview")
        || has("tl;dr")
        || has("abstract")
        || has("introduction")
        || has("concept")
        || has("glossary")
        || has("terminology")
        || has("definition")
        || has("user flow")
        || has("user journey")
    {
        SectionRole::Summary
    } else if has("goal") || has("objective") || has("success") {
        SectionRole::Goals
    } else if has("requirement") {
        SectionRole::Requirements
    } else {
        SectionRole::Normal
    }
}

/// Words that, after "future", make a heading a list of what is not built
/// yet ("Future Work", "Possible future extensions", "Future use of the
/// field"); "Future state" or "Future architecture" is the proposal itself,
/// "Future-proofing" a goal, and "Handling future changes" or "future
/// workloads" a design concern.
const LATER_WORDS: &[&str] = &[
    "work",
    "enhancement",
    "improvement",
    "extension",
    "expansion",
    "consideration",
    "plan",
    "possibility",
    "possibilities",
    "direction",
    "idea",
    "iteration",
    "test",
    "use",
    "usage",
];

/// A heading for later work: "future" followed by one of `LATER_WORDS` as
/// a whole word (or its plural).
fn is_future_heading(h: &str) -> bool {
    h.match_indices("future")
        .filter(|(i, _)| !h[..*i].ends_with(|c: char| c.is_alphanumeric()))
        .any(|(i, w)| {
            let next = h[i + w.len()..].trim_start_matches([' ', ':']);
            LATER_WORDS.iter().any(|l| {
                next.strip_prefix(l).is_some_and(|rest| {
                    let rest = rest.strip_prefix('s').unwrap_or(rest);
                    !rest.starts_with(|c: char| c.is_alphanumeric())
                })
            })
        })
}

/// A release plan's graduation criteria ("Graduation Criteria", "Alpha ->
/// Beta Graduation"): what must be shown before a stage, not what is
/// built. "Graduation" alone, or "Graduation requirements", may be a
/// product's data (a student's).
fn is_graduation_heading(h: &str) -> bool {
    h.contains("graduation")
        && ["criteria", "alpha", "beta", " ga", "g.a", "stable"]
            .iter()
            .any(|w| h.contains(w))
}

/// A section weighing the proposal's risks ("Risks and Mitigations",
/// "Risks and how we address them"): like drawbacks, a risk named there is
/// the document's own worry, not a design element, and its mitigations
/// still count as safeguards. "Risk scoring" is a product's feature.
fn is_risks_heading(h: &str) -> bool {
    let bare = h
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
        .trim();
    bare == "risk" || bare.starts_with("risks")
}

/// Headings of the parts of a design document that describe how the work
/// is tested, reviewed, released or documented rather than what is built.
fn is_process_heading(h: &str) -> bool {
    if is_graduation_heading(h) || is_risks_heading(h) {
        return true;
    }
    let t = h
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
        .trim();
    const WORDS: &[&str] = &[
        "test plan",
        "testing plan",
        "unit test",
        "integration test",
        "e2e test",
        "end-to-end test",
        "implementation history",
        "release signoff",
        "release checklist",
        "readiness review",
        "questionnaire",
        "table of contents",
        "references",
        "glossary",
        "terminology",
        "definitions",
        "terms",
        "drawbacks",
        "infrastructure needed",
        "changelog",
        "change log",
        "revision history",
        "acknowledg",
    ];
    WORDS.iter().any(|w| t.contains(w)) || t == "contents" || t == "toc" || t == "tests"
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

/// What `structure` works out from the text.
struct Structure {
    lines: Vec<Line>,
    sections: Vec<Section>,
    blocks: Vec<Range<usize>>,
    hidden_lines: Vec<usize>,
    lower: String,
}

/// A Markdown element found by the parser, before lines are classified.
struct Mark {
    range: Range<usize>,
    kind: LineKind,
    /// Heading text or code-block language.
    extra: Option<String>,
    level: u8,
}

/// A bare URL in text: it names a place, it does not state the design.
static BARE_URL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b(?:https?|ftp)://[^\s<>()\[\]`]+|\bwww\.[^\s<>()\[\]`]+").unwrap()
});
/// A link reference definition (`[label]: dest "title"`); `[//]: # (note)`
/// is the common Markdown comment.
static REF_DEF: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^ {0,3}\[[^\]]+\]:\s*\S").unwrap());
static REF_DEF_TITLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"^ {0,3}\[[^\]]+\]:\s*\S+\s+(?:"[^"]*[A-Za-z][^"]*"|'[^']*[A-Za-z][^']*'|\([^)]*[A-Za-z][^)]*\))\s*$"#)
        .unwrap()
});

/// Replaces the bytes in `r` with spaces, keeping line breaks, so byte
/// offsets and line numbers stay as they were.
fn blank(buf: &mut [u8], r: Range<usize>) {
    let end = r.end.min(buf.len());
    for b in &mut buf[r.start.min(end)..end] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// Bytes to text. Blanking replaces whole characters (parser ranges fall on
/// character boundaries), so this never needs the lossy path in practice.
fn to_string(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn structure(text: &str) -> Structure {
    let raw: Vec<&str> = text.split('\n').collect();
    // A trailing newline does not make an extra line.
    let count = if text.is_empty() {
        0
    } else if text.ends_with('\n') {
        raw.len() - 1
    } else {
        raw.len()
    };
    let starts = line_starts(text);
    let n = count;
    // The 1-based lines a byte range touches.
    let span = |r: &Range<usize>| -> Range<usize> {
        let a = line_of(&starts, r.start).clamp(1, n.max(1));
        let end_off = r.end.saturating_sub(1).max(r.start);
        let b = line_of(&starts, end_off).clamp(a, n.max(1));
        a..b + 1
    };

    let mut lower_buf = text.as_bytes().to_ascii_lowercase();
    // Ranges blanked in `design` only (link text, autolinks).
    let mut design_only: Vec<Range<usize>> = Vec::new();
    let mut hidden = vec![false; n + 1];
    // Lines that hold rendered text or HTML (anything but a reference definition).
    let mut touched = vec![false; n + 1];
    let mut marks: Vec<Mark> = Vec::new();
    let mut heading_text = String::new();
    let mut heading_open: Option<(u8, Range<usize>)> = None;
    // Open links: their range, title, and the ranges of their visible text.
    let mut links: Vec<(Range<usize>, bool, Vec<Range<usize>>)> = Vec::new();
    let mut image_depth = 0usize;
    let mut code_open: Option<(Range<usize>, Vec<Range<usize>>)> = None;
    let mut in_comment = false;

    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    let mut iter = Parser::new_ext(text, opts).into_offset_iter();
    for (ev, range) in &mut iter {
        match &ev {
            Event::Text(_) | Event::Code(_) => {
                for l in span(&range) {
                    touched[l] = true;
                }
                if image_depth == 0
                    && let Some(top) = links.last_mut()
                {
                    top.2.push(range.clone());
                }
                if let Some((_, inner)) = &mut code_open {
                    inner.push(range.clone());
                }
            }
            _ => {}
        }
        match ev {
            Event::Start(Tag::Heading { level, .. }) => {
                heading_open = Some((level as u8, range));
                heading_text.clear();
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, r)) = heading_open.take() {
                    marks.push(Mark {
                        range: r,
                        kind: LineKind::Heading,
                        extra: Some(heading_text.trim().to_string()),
                        level,
                    });
                }
            }
            Event::Text(t) | Event::Code(t) if heading_open.is_some() && image_depth == 0 => {
                heading_text.push_str(&t)
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let code_lang = match kind {
                    pulldown_cmark::CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .map(|s| s.to_ascii_lowercase()),
                    pulldown_cmark::CodeBlockKind::Indented => None,
                };
                code_open = Some((range.clone(), Vec::new()));
                marks.push(Mark {
                    range,
                    kind: LineKind::Code,
                    extra: code_lang,
                    level: 0,
                });
            }
            Event::End(TagEnd::CodeBlock) => {
                // The fences and their info string are not content: a
                // `shell` tag over a directory listing says nothing.
                if let Some((r, inner)) = code_open.take() {
                    let mut content = std::collections::HashSet::new();
                    for t in &inner {
                        content.extend(span(t));
                    }
                    for l in span(&r) {
                        if !content.contains(&l) {
                            let a = starts[l - 1];
                            blank(&mut lower_buf, a..a + raw[l - 1].len());
                        }
                    }
                }
            }
            Event::Start(Tag::Table(_)) => marks.push(Mark {
                range,
                kind: LineKind::Table,
                extra: None,
                level: 0,
            }),
            Event::Start(Tag::Item) => marks.push(Mark {
                range,
                kind: LineKind::ListItem,
                extra: None,
                level: 0,
            }),
            Event::Start(Tag::Link { title, .. }) => {
                links.push((range, !title.is_empty(), Vec::new()))
            }
            Event::End(TagEnd::Link) => {
                if let Some((r, titled, visible)) = links.pop() {
                    // The destination and title are not shown; the text is,
                    // but names a document rather than the design.
                    let mut at = r.start;
                    for v in visible
                        .iter()
                        .filter(|v| v.start >= r.start && v.end <= r.end)
                    {
                        if v.start > at {
                            blank(&mut lower_buf, at..v.start);
                        }
                        at = at.max(v.end);
                    }
                    blank(&mut lower_buf, at..r.end);
                    design_only.push(r.clone());
                    if titled {
                        hidden[span(&r).end - 1] = true;
                    }
                    // The link's text is visible inside an enclosing link too.
                    if let Some(top) = links.last_mut() {
                        top.2.extend(visible);
                    }
                }
            }
            Event::Start(Tag::Image { title, .. }) => {
                image_depth += 1;
                let src = &text[range.clone()];
                let has_alt = src.starts_with("![") && !src[2..].starts_with(']');
                if has_alt || !title.is_empty() {
                    hidden[span(&range).start] = true;
                }
                blank(&mut lower_buf, range);
            }
            Event::End(TagEnd::Image) => image_depth = image_depth.saturating_sub(1),
            Event::Html(ref h) | Event::InlineHtml(ref h) if !range.is_empty() => {
                for l in span(&range) {
                    touched[l] = true;
                }
                let mut comment = in_comment;
                if let Some(i) = h.find("<!--") {
                    comment = true;
                    in_comment = !h[i + 4..].contains("-->");
                } else if in_comment && h.contains("-->") {
                    in_comment = false;
                }
                if comment && h.chars().any(|c| c.is_alphanumeric()) {
                    hidden[span(&range).start] = true;
                }
                blank(&mut lower_buf, range.clone());
                // An HTML block is a line of its own; inline HTML (a `<br>`,
                // a comment inside a sentence) leaves the line prose.
                if matches!(ev, Event::Html(_)) {
                    marks.push(Mark {
                        range,
                        kind: LineKind::Html,
                        extra: None,
                        level: 0,
                    })
                }
            }
            _ => {}
        }
    }

    let mut lines: Vec<Line> = raw[..count]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.strip_suffix('\r').unwrap_or(t);
            Line {
                number: i + 1,
                text: t.to_string(),
                lower: String::new(),
                design: String::new(),
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

    // Link reference definitions render as nothing; `[//]: # (...)` is how
    // Markdown authors write comments.
    let mut ref_defs = Vec::new();
    for l in &lines {
        if !touched[l.number] && l.kind != LineKind::Blank && REF_DEF.is_match(&l.text) {
            ref_defs.push(l.number);
            if REF_DEF_TITLE.is_match(&l.text) {
                hidden[l.number] = true;
            }
            let a = starts[l.number - 1];
            blank(&mut lower_buf, a..a + l.text.len());
        }
    }
    for &r in &ref_defs {
        lines[r - 1].kind = LineKind::Html;
    }

    let mut design_buf = lower_buf.clone();
    for r in design_only {
        blank(&mut design_buf, r);
    }
    let lower = to_string(lower_buf);
    let urls: Vec<Range<usize>> = BARE_URL.find_iter(&lower).map(|m| m.range()).collect();
    for r in urls {
        blank(&mut design_buf, r);
    }
    let design = to_string(design_buf);
    for l in &mut lines {
        let a = starts[l.number - 1];
        let b = a + l.text.len();
        l.lower = lower.get(a..b).unwrap_or_default().to_string();
        l.design = design.get(a..b).unwrap_or_default().to_string();
    }

    // Mark kinds; code and tables override list items they sit inside.
    let mut heading_lines: Vec<(usize, u8, String)> = Vec::new();
    for m in &marks {
        if n == 0 {
            break;
        }
        let lines_of = span(&m.range);
        let a = lines_of.start;
        for l in &mut lines[a - 1..lines_of.end - 1] {
            if l.kind == LineKind::Blank && m.kind != LineKind::Code {
                continue;
            }
            let replace = !matches!(
                (l.kind, m.kind),
                (LineKind::Code, _)
                    | (LineKind::Heading, _)
                    | (LineKind::Table, LineKind::ListItem)
            );
            if replace {
                l.kind = m.kind;
                if m.kind == LineKind::Code {
                    l.code_lang = m.extra.clone();
                }
            }
        }
        if m.kind == LineKind::Heading {
            heading_lines.push((a, m.level.max(1), m.extra.clone().unwrap_or_default()));
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
    // Open sections by increasing level: the parent of a new heading is the
    // last one above it with a lower level.
    let mut open: Vec<usize> = vec![0];
    for (i, (line, level, heading)) in heading_lines.iter().enumerate() {
        let end = heading_lines
            .get(i + 1)
            .map(|h| h.0.saturating_sub(1))
            .unwrap_or(n);
        while open.len() > 1 && sections[*open.last().unwrap_or(&0)].level >= *level {
            open.pop();
        }
        let parent = open.last().copied().or(Some(0));
        // The document title names the whole spec, not a part of it.
        let mut role = if *level == 1 && i == 0 {
            SectionRole::Preamble
        } else {
            section_role(heading)
        };
        if matches!(role, SectionRole::Normal | SectionRole::Requirements)
            && let Some(p) = parent
            && matches!(
                sections[p].role,
                SectionRole::NonGoals
                    | SectionRole::OpenQuestions
                    | SectionRole::Alternatives
                    | SectionRole::Background
                    | SectionRole::Goals
                    | SectionRole::Summary
                    | SectionRole::Process
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
        open.push(sections.len() - 1);
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
    let mut blocks = vec![0..0; block + 1];
    for l in &lines {
        let b = &mut blocks[l.block];
        if b.start == b.end {
            *b = l.number..l.number + 1;
        } else {
            b.end = l.number + 1;
        }
    }
    let hidden_lines = (1..=n).filter(|&l| hidden[l]).collect();
    Structure {
        lines,
        sections,
        blocks,
        hidden_lines,
        lower,
    }
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
    fn process_sections_and_their_subsections_are_not_the_design() {
        let doc = "# T\n\n## Design\n\nx\n\n## Test Plan\n\n### Unit tests\n\ny\n\n## Production Readiness Review Questionnaire\n\n### Scalability\n\n###### Will it make new API calls?\n\nz\n\n## Table of Contents\n\nw\n\n## How does it fail?\n\nv\n";
        let s = Spec::parse(None, doc.to_string());
        assert_eq!(s.section_of(5).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(11).unwrap().role, SectionRole::Process);
        assert_eq!(s.section_of(19).unwrap().role, SectionRole::Process);
        assert_eq!(s.section_of(23).unwrap().role, SectionRole::Process);
        // A question heading outside a questionnaire is part of the design.
        assert_eq!(s.section_of(27).unwrap().role, SectionRole::Normal);
    }

    #[test]
    fn future_work_graduation_criteria_and_risks_are_not_the_design() {
        let doc = "# T\n\n## Graduation Criteria\n\n### Alpha -> Beta Graduation\n\nx\n\n## Future Enhancements\n\ny\n\n## Possible future extensions\n\nz\n\n## Future state\n\nw\n\n## Graduation tracking\n\nv\n\n## Future-proofing\n\nu\n\n## Scheduling future workloads\n\nt\n\n## Graduation requirements\n\nr\n\n## 7. Risks and Mitigations\n\nq\n\n## Risk scoring\n\np\n\n## Future uses of the tag field\n\no\n";
        let s = Spec::parse(None, doc.to_string());
        assert_eq!(s.section_of(7).unwrap().role, SectionRole::Process);
        assert_eq!(s.section_of(11).unwrap().role, SectionRole::OpenQuestions);
        assert_eq!(s.section_of(15).unwrap().role, SectionRole::OpenQuestions);
        // The proposal told as the future, and a product's own graduations.
        assert_eq!(s.section_of(19).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(23).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(27).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(31).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(35).unwrap().role, SectionRole::Requirements);
        assert!(s.section_of(35).unwrap().role.states_design());
        assert_eq!(s.section_of(39).unwrap().role, SectionRole::Process);
        assert_eq!(s.section_of(43).unwrap().role, SectionRole::Normal);
        // Uses a field may get one day are not what is built.
        assert_eq!(s.section_of(47).unwrap().role, SectionRole::OpenQuestions);
    }

    #[test]
    fn a_heading_about_stories_as_data_is_design() {
        // "Removing expired stories" is about the product's stories (posts),
        // not user stories.
        let doc =
            "# T\n\n## Removing expired stories\n\nx\n\n## Stories\n\ny\n\n## User stories\n\nz\n";
        let s = Spec::parse(None, doc.to_string());
        assert_eq!(s.section_of(5).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(9).unwrap().role, SectionRole::Background);
        assert_eq!(s.section_of(13).unwrap().role, SectionRole::Background);
    }

    #[test]
    fn requirements_and_faq_sections_state_the_design() {
        // A product document's requirements and a design FAQ's answers say
        // what is built; a readiness questionnaire's "Monitoring
        // Requirements" stays part of the questionnaire.
        let doc = "# T\n\n## Functional Requirements\n\nx\n\n## FAQ\n\n### What if it fails?\n\ny\n\n## Goals and requirements\n\nz\n\n## Production Readiness Review Questionnaire\n\n### Monitoring Requirements\n\nw\n";
        let s = Spec::parse(None, doc.to_string());
        assert_eq!(s.section_of(5).unwrap().role, SectionRole::Requirements);
        assert_eq!(s.section_of(11).unwrap().role, SectionRole::Normal);
        assert_eq!(s.section_of(15).unwrap().role, SectionRole::Goals);
        assert_eq!(s.section_of(21).unwrap().role, SectionRole::Process);
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

    #[test]
    fn hidden_markdown_is_blanked_and_counted() {
        let doc = "# T\n\n## Design\n\nCalls retry immediately. ![backoff alt](x.png) [doc](http://e/backoff-url \"backoff title\") <!-- backoff note -->\n\n[//]: # (backoff comment)\n\n```shell\nls migrations\n```\n";
        let s = Spec::parse(None, doc.to_string());
        let l5 = s.line(5).unwrap();
        assert_eq!(l5.lower.len(), l5.text.len());
        assert!(l5.lower.contains("calls retry immediately"));
        assert!(!l5.lower.contains("backoff"), "{}", l5.lower);
        // Link text is rendered (evidence) but names a document (no trigger).
        assert!(l5.lower.contains("doc") && !l5.design.contains("doc"));
        let c = s.line(7).unwrap();
        assert_eq!(c.kind, LineKind::Html);
        assert!(c.lower.trim().is_empty());
        assert_eq!(s.hidden_lines, vec![5, 7]);
        assert_eq!(s.hidden_count(), 2);
        // The fence's info string is not content; the code is.
        assert!(s.line(9).unwrap().lower.trim().is_empty());
        assert_eq!(s.line(10).unwrap().lower, "ls migrations");
        // Spec::lower agrees with the lines.
        assert!(!s.lower.contains("backoff"));
    }

    #[test]
    fn table_cells_split_on_unescaped_pipes() {
        assert_eq!(table_cells("| a | `b` | c |"), ["a", "`b`", "c"]);
        assert_eq!(table_cells("a | b"), ["a", "b"]);
        assert_eq!(table_cells(r"| `x` \| `y` | z |"), [r"`x` \| `y`", "z"]);
    }

    #[test]
    fn a_reference_line_inside_a_paragraph_is_rendered_text() {
        let s = Spec::parse(None, "# T\n\nText.\n[//]: # (shown)\n".to_string());
        assert_eq!(s.line(4).unwrap().kind, LineKind::Prose);
        assert!(s.line(4).unwrap().lower.contains("shown"));
        assert!(s.hidden_lines.is_empty());
    }

    #[test]
    fn many_flat_headings_parse_in_linear_time_shape() {
        let mut doc = String::from("# T\n");
        for i in 0..2000 {
            doc.push_str(&format!("## H{i}\ntext\n### Sub{i}\nmore\n"));
        }
        let s = Spec::parse(None, doc);
        let last = s.sections.last().unwrap();
        assert_eq!(last.heading, "Sub1999");
        assert_eq!(s.sections[last.parent.unwrap()].heading, "H1999");
    }
}
