//! Which technologies a spec uses: their names and well-known identifiers
//! (`ioredis`, `psql`, `pg_`, `schema.prisma`), found in one pass with
//! aho-corasick, ASCII case-insensitively, at word boundaries: `redis://`
//! and `node-redis` name Redis, `redistribute` does not.

use super::Technology;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// At most this many line numbers are kept per technology.
const MAX_LINES: usize = 5;

/// One technology found in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// Index into the set's technologies.
    pub technology: usize,
    /// Distinct identifiers that matched, lowercased, first seen first.
    pub matched: Vec<String>,
    /// Lines of the first matches (1-based).
    pub lines: Vec<usize>,
    /// Number of mentions.
    pub count: usize,
    last_start: usize,
}

/// The identifiers of a technology: the built-in list when it has one,
/// else its name (and its name without a trailing version, `Next.js 15`).
pub fn identifiers(t: &Technology) -> Vec<String> {
    if let Some(ids) = super::builtin::identifiers(&t.key) {
        return ids;
    }
    let mut out = vec![t.key.clone()];
    let words: Vec<&str> = t.key.split(' ').collect();
    if words.len() > 1
        && words[words.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == 'x')
        && words[words.len() - 1].starts_with(|c: char| c.is_ascii_digit())
    {
        out.push(words[..words.len() - 1].join(" "));
    }
    out
}

#[derive(Debug, Clone)]
pub struct Detector {
    automaton: Option<AhoCorasick>,
    /// Per pattern: (technology index, identifier).
    patterns: Vec<(usize, String)>,
    /// The last spec's detections: triage, the verdict's nuance report and
    /// the prompts' checklist all ask about the spec being run, and on a
    /// large spec the pass is not free.
    last: crate::per_spec::PerSpec<Vec<Detection>>,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Detector {
    pub fn new(technologies: &[Technology]) -> Detector {
        let mut patterns: Vec<(usize, String)> = Vec::new();
        for (i, t) in technologies.iter().enumerate() {
            for id in identifiers(t) {
                let id = id.to_lowercase();
                if !id.trim().is_empty()
                    && !id.contains('\n')
                    && !patterns.iter().any(|(j, p)| *j == i && *p == id)
                {
                    patterns.push((i, id));
                }
            }
        }
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(patterns.iter().map(|(_, p)| p.as_bytes()))
            .ok();
        Detector {
            automaton,
            patterns,
            last: crate::per_spec::PerSpec::new(1),
        }
    }

    /// The technologies `text` uses, in order of first mention. Time is
    /// linear in the text (one automaton pass plus the matches).
    pub fn detect_text(&self, text: &str) -> Vec<Detection> {
        let Some(ac) = &self.automaton else {
            return Vec::new();
        };
        let bytes = text.as_bytes();
        let mut out: Vec<Detection> = Vec::new();
        // Line numbers: count newlines as matches move forward.
        let (mut line, mut pos) = (1usize, 0usize);
        for m in ac.find_overlapping_iter(bytes) {
            let (s, e) = (m.start(), m.end());
            let (tech, id) = &self.patterns[m.pattern().as_usize()];
            let pat = id.as_bytes();
            if is_word(pat[0]) && s > 0 && is_word(bytes[s - 1]) {
                continue;
            }
            if is_word(pat[pat.len() - 1]) && e < bytes.len() && is_word(bytes[e]) {
                continue;
            }
            // Matches come in order of their end; a start never moves back
            // past a newline (identifiers have none).
            if s > pos {
                line += bytes[pos..s].iter().filter(|&&b| b == b'\n').count();
                pos = s;
            }
            let d = match out.iter_mut().find(|d| d.technology == *tech) {
                Some(d) => d,
                None => {
                    out.push(Detection {
                        technology: *tech,
                        matched: Vec::new(),
                        lines: Vec::new(),
                        count: 0,
                        last_start: usize::MAX,
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            // `redis` and `redis-cli` at one place are one mention.
            if d.last_start != s {
                d.count += 1;
                d.last_start = s;
            }
            if !d.matched.contains(id) {
                d.matched.push(id.clone());
            }
            if d.lines.len() < MAX_LINES && d.lines.last() != Some(&line) {
                d.lines.push(line);
            }
        }
        out
    }

    /// `detect_text` on the spec, remembered for the next call on it.
    pub fn detect(&self, spec: &crate::spec::Spec) -> Vec<Detection> {
        self.last
            .get(spec, || self.detect_text(&spec.text))
            .to_vec()
    }
}

#[cfg(test)]
mod tests {
    use crate::nuance::NuanceSet;

    fn builtin() -> NuanceSet {
        crate::nuance::load(&Default::default()).unwrap().unwrap()
    }

    fn names(set: &NuanceSet, text: &str) -> Vec<String> {
        set.detector()
            .detect_text(text)
            .into_iter()
            .map(|d| set.technologies[d.technology].name.clone())
            .collect()
    }

    #[test]
    fn a_remembered_detection_is_only_reused_for_the_same_spec() {
        let set = builtin();
        let spec = |t: &str| crate::spec::Spec::parse(None, t.to_string());
        let of = |s: &crate::spec::Spec| -> Vec<String> {
            set.detector()
                .detect(s)
                .into_iter()
                .map(|d| set.technologies[d.technology].name.clone())
                .collect()
        };
        let redis = spec("Sessions live in Redis.\n");
        let kafka = spec("Events go to Kafka.\n");
        assert_eq!(of(&redis), ["Redis"]);
        assert_eq!(of(&redis), ["Redis"]);
        assert_eq!(of(&kafka), ["Kafka"]);
        assert_eq!(of(&redis), ["Redis"]);
    }

    #[test]
    fn names_and_identifiers_are_detected() {
        let set = builtin();
        assert_eq!(names(&set, "Sessions live in Redis."), ["Redis"]);
        assert_eq!(names(&set, "the worker uses ioredis"), ["Redis"]);
        assert_eq!(names(&set, "connect to redis://cache:6379/0"), ["Redis"]);
        assert_eq!(names(&set, "run `psql` then pg_dump"), ["PostgreSQL"]);
        assert_eq!(names(&set, "edit schema.prisma"), ["Prisma"]);
        assert_eq!(names(&set, "POSTGRES and MySQL"), ["PostgreSQL", "MySQL"]);
        assert_eq!(names(&set, "a FIFO queue on Amazon SQS"), ["Amazon SQS"]);
    }

    #[test]
    fn words_that_only_contain_a_name_are_not_detected() {
        let set = builtin();
        for text in [
            "We redistribute the load.",
            "The Kafkaesque approval process.",
            "a striped RAID volume",
            "a lambda function sorts the list",
            "the Mongolian steppe",
            "next steps: review",
            "unpg_ prefix",
        ] {
            assert!(
                names(&set, text).is_empty(),
                "{text}: {:?}",
                names(&set, text)
            );
        }
    }

    #[test]
    fn lines_and_counts_are_recorded() {
        let set = builtin();
        let d = set
            .detector()
            .detect_text("# T\nuse Redis\n\nredis-cli and ioredis\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].lines, [2, 4]);
        assert_eq!(d[0].count, 3);
        assert_eq!(d[0].matched, ["redis", "redis-cli", "ioredis"]);
    }

    #[test]
    fn a_project_technology_is_found_by_its_name_with_or_without_version() {
        let mut set = NuanceSet::default();
        set.merge(crate::nuance::parse::parse("N.md", "## Convex 1.2\n- x\n").unwrap());
        assert_eq!(names(&set, "we use convex for state"), ["Convex 1.2"]);
        assert!(names(&set, "a convexity argument").is_empty());
    }
}
