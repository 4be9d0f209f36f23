//! One pass over a spec's lines that tells, for every rule of a pack, which
//! lines its triggers could match at all.
//!
//! Each rule knows what a line must hold for one of its trigger patterns to
//! match (`Rule::trigger_needs`, read from the patterns' syntax): for each
//! part of a pattern, literals one of which the line holds, some at a word
//! start. All of a pack's literals go into one Aho-Corasick automaton; a
//! line is a candidate for a rule when it meets every part of one of the
//! rule's patterns. The attacker then compiles and runs the rule's regexes
//! on its candidate lines only: the same matches, since a line that misses
//! a part cannot match. Rules without needs (and rules run by a built-in
//! check) have every line as a candidate.
//!
//! Linear in the text: matches are reported overlapping (a literal inside
//! another one's match must not be missed), and at one position at most as
//! many literals end as the pack has, a bound that does not grow with the
//! input.

use crate::persona::Persona;
use crate::rule::{Rule, is_word_byte};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use std::ops::Range;

#[derive(Debug, Clone)]
pub struct TriggerPrefilter {
    /// The automata over the literals, with each one's patterns' indices
    /// in `owners`: a large set is split by first byte (no prefix is shared
    /// across parts) and the parts built in parallel. Empty: no filter.
    acs: Vec<(AhoCorasick, Vec<u32>)>,
    /// Per automaton pattern: the rules' pattern parts it meets.
    owners: Vec<Vec<Owner>>,
    /// Per rule: whether its lines are filtered at all.
    filtered: Vec<bool>,
    /// Per slot (one per trigger pattern of a filtered rule): its rule and
    /// pattern, and the mask of its groups (all met: the pattern is).
    slots: Vec<Slot>,
    /// The ids of the rules it was built for, in order.
    ids: Vec<String>,
}

/// One trigger pattern of one rule.
#[derive(Debug, Clone, Copy)]
struct Slot {
    rule: u32,
    pattern: u16,
    /// Bit `g`: group `g` (at most 64 groups are read; more would only
    /// narrow the filter further).
    groups: u64,
}

/// A rule's candidate lines, and which of its trigger patterns they meet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidates {
    /// The lines (indices, ascending) that meet one of the patterns.
    pub lines: Vec<usize>,
    /// Bit `p`: some line meets pattern `p` (bit 63: pattern 63 or a
    /// later one); the others can match on none of the lines
    /// (`Rule::triggers_for`).
    pub patterns: u64,
}

/// One part of one rule's trigger pattern that a literal meets.
#[derive(Debug, Clone, Copy)]
struct Owner {
    slot: u32,
    /// The group's bit in its slot's mask.
    group: u64,
    /// Only where the literal starts a word.
    word_start: bool,
}

impl TriggerPrefilter {
    pub fn new<'r>(rules: impl IntoIterator<Item = &'r Rule> + Clone) -> TriggerPrefilter {
        let mut literals: Vec<&[u8]> = Vec::new();
        let mut owners: Vec<Vec<Owner>> = Vec::new();
        // Tens of thousands of short keys: a fast hash, sized once.
        let needs_count = rules
            .clone()
            .into_iter()
            .filter_map(|r| r.trigger_needs.as_ref())
            .map(|n| n.len())
            .sum();
        let mut index: rustc_hash::FxHashMap<&[u8], usize> =
            rustc_hash::FxHashMap::with_capacity_and_hasher(needs_count, Default::default());
        let mut filtered = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        for (i, rule) in rules.clone().into_iter().enumerate() {
            let (needs, rule_index) = match (&rule.trigger_needs, rule.def.check, u32::try_from(i))
            {
                (Some(n), None, Ok(i)) if !n.is_empty() => (n, i),
                _ => {
                    filtered.push(false);
                    continue;
                }
            };
            let Ok(base) = u32::try_from(slots.len()) else {
                filtered.push(false);
                continue;
            };
            let patterns = needs
                .iter()
                .map(|n| usize::from(n.pattern) + 1)
                .max()
                .unwrap_or(0);
            slots.extend((0..patterns).map(|p| Slot {
                rule: rule_index,
                pattern: p as u16,
                groups: 0,
            }));
            for n in needs.iter().filter(|n| n.group < 64) {
                let slot = base + u32::from(n.pattern);
                let group = 1u64 << n.group;
                slots[slot as usize].groups |= group;
                let k = *index.entry(&n.bytes[..]).or_insert_with(|| {
                    literals.push(&n.bytes[..]);
                    owners.push(Vec::new());
                    literals.len() - 1
                });
                owners[k].push(Owner {
                    slot,
                    group,
                    word_start: n.word_start,
                });
            }
            // A pattern with no need could match any line.
            let every_pattern_needs = slots[base as usize..].iter().all(|s| s.groups != 0);
            filtered.push(every_pattern_needs);
        }
        let acs = build_automata(&literals);
        if acs.is_empty() {
            filtered.iter_mut().for_each(|f| *f = false);
        }
        TriggerPrefilter {
            acs,
            owners,
            filtered,
            slots,
            ids: rules.into_iter().map(|r| r.id().to_string()).collect(),
        }
    }

    pub fn is_for(&self, rules: &[Rule]) -> bool {
        same_ids(&self.ids, rules)
    }

    /// `candidates` over `texts`, read in parallel chunks on a large spec
    /// and joined in order: the same answer as one pass.
    pub fn candidates_par(&self, texts: &[&str]) -> Vec<Option<Candidates>> {
        use rayon::prelude::*;
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        let chunks = (bytes / PARALLEL_CHUNK_BYTES).clamp(1, 4 * rayon::current_num_threads());
        if chunks == 1 {
            return self.candidates(texts.iter().copied());
        }
        let size = texts.len().div_ceil(chunks).max(1);
        let parts: Vec<Vec<Option<Candidates>>> = texts
            .par_chunks(size)
            .map(|c| self.candidates(c.iter().copied()))
            .collect();
        let mut parts = parts.into_iter().enumerate();
        let Some((_, mut out)) = parts.next() else {
            return self.candidates(std::iter::empty());
        };
        for (k, part) in parts {
            for (all, found) in out.iter_mut().zip(part) {
                if let (Some(all), Some(found)) = (all, found) {
                    all.patterns |= found.patterns;
                    all.lines.extend(found.lines.iter().map(|n| n + k * size));
                }
            }
        }
        out
    }

    /// Per rule, in the rules' order: the texts (indices) that may hold a
    /// match of its triggers and the patterns they meet, or `None` when
    /// any text may hold a match of any pattern.
    pub fn candidates<'t>(
        &self,
        texts: impl IntoIterator<Item = &'t str>,
    ) -> Vec<Option<Candidates>> {
        let mut out: Vec<Option<Candidates>> = self
            .filtered
            .iter()
            .map(|&f| f.then(Candidates::default))
            .collect();
        if self.acs.is_empty() {
            return out;
        }
        // Per slot, the groups one line meets, and the slots it touched.
        let mut met: Vec<u64> = vec![0; self.slots.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (n, text) in texts.into_iter().enumerate() {
            let bytes = text.as_bytes();
            let found = self.acs.iter().flat_map(|(ac, ids)| {
                ac.find_overlapping_iter(bytes)
                    .map(move |m| (m.start(), ids[m.pattern().as_usize()]))
            });
            for (s, literal) in found {
                let at_word_start = s == 0 || !is_word_byte(bytes[s - 1]);
                for o in &self.owners[literal as usize] {
                    if o.word_start && !at_word_start {
                        continue;
                    }
                    let groups = &mut met[o.slot as usize];
                    if *groups == 0 {
                        touched.push(o.slot);
                    }
                    *groups |= o.group;
                }
            }
            // A pattern is met when all its groups are.
            for slot in touched.drain(..) {
                let groups = std::mem::take(&mut met[slot as usize]);
                let Slot {
                    rule,
                    pattern,
                    groups: all,
                } = self.slots[slot as usize];
                if groups != all {
                    continue;
                }
                if let Some(c) = &mut out[rule as usize] {
                    c.patterns |= if pattern < 64 { 1 << pattern } else { !0 << 63 };
                    if c.lines.last() != Some(&n) {
                        c.lines.push(n);
                    }
                }
            }
        }
        out
    }
}

/// Whether `ids` are the ids of `rules`, in order: a prefilter built for
/// them serves them.
fn same_ids(ids: &[String], rules: &[Rule]) -> bool {
    ids.len() == rules.len() && ids.iter().zip(rules).all(|(id, r)| id == r.id())
}

/// Above this many literals the automaton is built in parts, in parallel.
const PARALLEL_LITERALS: usize = 2048;

/// The automata over `literals` (see `TriggerPrefilter::acs`); empty when
/// there is none or one fails to build (never for plain literals), which
/// leaves every rule unfiltered rather than skipping lines.
fn build_automata(literals: &[&[u8]]) -> Vec<(AhoCorasick, Vec<u32>)> {
    if literals.is_empty() {
        return Vec::new();
    }
    let parts = if literals.len() >= PARALLEL_LITERALS {
        std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 4))
    } else {
        1
    };
    let mut ids: Vec<Vec<u32>> = vec![Vec::new(); parts];
    for (i, l) in literals.iter().enumerate() {
        let part = l.first().map_or(0, |&b| usize::from(b) % parts);
        ids[part].push(i as u32);
    }
    ids.retain(|ids| !ids.is_empty());
    let build = |ids: Vec<u32>| -> Option<(AhoCorasick, Vec<u32>)> {
        // Standard semantics: the only ones that report overlapping
        // matches. A noncontiguous NFA: a DFA over thousands of states
        // costs more to build than one spec's scan saves, and the
        // contiguous form's faster scan did not pay for building it
        // either (on a three-line spec or on the largest KEP).
        let ac = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::NoncontiguousNFA))
            .prefilter(false)
            .match_kind(MatchKind::Standard)
            .build(ids.iter().map(|&i| literals[i as usize]))
            .ok()?;
        Some((ac, ids))
    };
    // Plain scoped threads, not the rayon pool: this runs inside a
    // `OnceLock` initialiser, and a rayon worker waiting there could steal
    // a task that asks the same `OnceLock` (another spec of a batch
    // review), which would deadlock.
    let mut parts = ids.into_iter();
    let Some(first) = parts.next() else {
        return Vec::new();
    };
    let built: Option<Vec<(AhoCorasick, Vec<u32>)>> = std::thread::scope(|scope| {
        let others: Vec<_> = parts.map(|ids| scope.spawn(move || build(ids))).collect();
        let mut all = vec![build(first)?];
        for h in others {
            all.push(h.join().ok()??);
        }
        Some(all)
    });
    built.unwrap_or_default()
}

/// Below this much text a spec is scanned in one pass: a chunk must be
/// worth a thread.
const PARALLEL_CHUNK_BYTES: usize = 256 * 1024;

/// One prefilter over the rules of several personas, one after the other:
/// one scan of a spec serves every adversary (the literals they share are
/// found once, and the automaton is read once per byte instead of once per
/// persona).
#[derive(Debug, Clone)]
pub struct SharedPrefilter {
    prefilter: TriggerPrefilter,
    /// Each persona's name and the range of its rules.
    personas: Vec<(String, Range<usize>)>,
}

impl SharedPrefilter {
    pub fn new<'p>(personas: impl IntoIterator<Item = &'p Persona>) -> SharedPrefilter {
        let personas: Vec<&Persona> = personas.into_iter().collect();
        let mut ranges = Vec::with_capacity(personas.len());
        let mut at = 0;
        for p in &personas {
            ranges.push((p.name.clone(), at..at + p.rules.len()));
            at += p.rules.len();
        }
        SharedPrefilter {
            prefilter: TriggerPrefilter::new(personas.iter().flat_map(|p| &p.rules)),
            personas: ranges,
        }
    }

    /// For each of `personas`, its rules' candidates among `texts` (see
    /// `TriggerPrefilter::candidates`), or `None` for a persona this was
    /// not built for, or whose rules changed since.
    pub fn candidates(
        &self,
        texts: &[&str],
        personas: &[&Persona],
    ) -> Vec<Option<Vec<Option<Candidates>>>> {
        let range = |p: &Persona| {
            let (_, r) = self.personas.iter().find(|(name, _)| *name == p.name)?;
            same_ids(&self.prefilter.ids[r.clone()], &p.rules).then(|| r.clone())
        };
        let ranges: Vec<Option<Range<usize>>> = personas.iter().map(|p| range(p)).collect();
        if ranges.iter().all(Option::is_none) {
            return vec![None; personas.len()];
        }
        let all = self.prefilter.candidates_par(texts);
        ranges
            .into_iter()
            .map(|r| r.map(|r| all[r].to_vec()))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use proptest::prelude::*;

    fn rule(triggers: &[&str]) -> Rule {
        let list = triggers
            .iter()
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(", ");
        Rule::compile(
            toml::from_str(&format!(
                "id = \"r{}\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = [{list}]\nmissing = \"m\"\nimpact = \"i\"\n",
                triggers.len()
            ))
            .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn needs_come_from_each_part_of_a_pattern_and_never_from_classes() {
        let r = rule(&[r"\bretr(?:y|ies)\b", r"\w+ Queue\b"]);
        let needs: Vec<(u16, &[u8], bool)> = r
            .trigger_needs
            .as_ref()
            .unwrap()
            .iter()
            .map(|n| (n.pattern, &n.bytes[..], n.word_start))
            .collect();
        // Lowercased like the compiled pattern; the class adds nothing.
        assert_eq!(
            needs,
            [
                (0, &b"retries"[..], true),
                (0, b"retry", true),
                (1, b" queue", false)
            ]
        );
        // Nothing fixed to look for: no filter.
        assert!(rule(&[r"\bcalls\b", r"\w+"]).trigger_needs.is_none());
        assert!(rule(&[r"a?"]).trigger_needs.is_none());
    }

    #[test]
    fn candidates_are_the_lines_meeting_every_part_and_unfiltered_rules_get_none() {
        let rules = [
            rule(&[r"\bretr(?:y|ies)\b", r"\bqueue\b.*\bdepth\b"]),
            rule(&[r"\btime(?:out)?\b", r"\w+"]),
        ];
        let p = TriggerPrefilter::new(&rules);
        assert!(p.is_for(&rules));
        assert!(!p.is_for(&rules[..1]));
        let c = p.candidates([
            "no",
            "it retries",
            "retry, retry",
            "retr",
            "queue length",
            "the queue depth",
            "xretry; subqueue depth",
        ]);
        let lines: Vec<Option<&[usize]>> =
            c.iter().map(|c| c.as_ref().map(|c| &c.lines[..])).collect();
        assert_eq!(lines, [Some(&[1, 2, 5][..]), None]);
        // The first pattern is met on lines 1 and 2, the second on 5.
        assert_eq!(c[0].as_ref().map(|c| c.patterns), Some(0b11));
        let only_first = p.candidates(["it retries"]);
        assert_eq!(only_first[0].as_ref().map(|c| c.patterns), Some(0b01));
    }

    /// Every built-in rule, nuance checks included.
    fn builtin_rules() -> Vec<Rule> {
        let mut cat = Catalog::builtin().unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        crate::nuance::check::extend_catalog(&mut cat, &set).unwrap();
        cat.personas.into_values().flat_map(|p| p.rules).collect()
    }

    #[test]
    fn most_builtin_rules_are_filtered() {
        let rules = builtin_rules();
        let p = TriggerPrefilter::new(&rules);
        let filtered = p.filtered.iter().filter(|f| **f).count();
        let checks = rules.iter().filter(|r| r.def.check.is_some()).count();
        // Not a speed test: a regression in literal extraction (every
        // rule back on the slow path) would still give the same verdicts.
        assert!(
            filtered * 10 >= (rules.len() - checks) * 9,
            "{filtered} of {} rules filtered",
            rules.len() - checks
        );
    }

    /// The rule test specs (written to fire each rule) and the examples,
    /// in name order.
    pub(crate) fn rule_specs_and_examples() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths: Vec<_> = ["tests/rules", "examples"]
            .iter()
            .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    /// On real text (the rule test specs, written to fire each rule, and
    /// the examples), every line a rule's triggers match is a candidate,
    /// and the regex of the patterns met there (`Rule::triggers_for`)
    /// finds the same matches as the whole list.
    #[test]
    fn never_skips_a_line_of_the_rule_specs_the_triggers_match() {
        let cat = Catalog::builtin().unwrap();
        let texts = rule_specs_and_examples();
        assert!(texts.len() > 200, "{}", texts.len());
        let (mut matched, mut subsets, mut gates) = (0, 0, 0);
        for text in texts {
            let spec = crate::spec::Spec::parse(None, text);
            let lines: Vec<&str> = spec.lines.iter().map(|l| l.design.as_str()).collect();
            for persona in cat.personas.values() {
                let p = TriggerPrefilter::new(&persona.rules);
                let found = p.candidates(lines.iter().copied());
                for (rule, cand) in persona.rules.iter().zip(&found) {
                    // A copy with nothing compiled yet, so that it compiles
                    // the subset rather than reuse the whole list.
                    let fresh = Rule::compile_embedded(rule.def.clone()).unwrap();
                    // One copy for every line: its forward-only automata
                    // and their states are kept from line to line.
                    let gate = Rule::compile_embedded(rule.def.clone()).unwrap();
                    for (n, line) in lines.iter().enumerate() {
                        let hit = rule.triggers.iter().any(|r| r.is_match(line.as_bytes()));
                        let candidate = cand.as_ref().is_none_or(|c| c.lines.contains(&n));
                        assert!(
                            !hit || candidate,
                            "rule {} matches {line:?} but the prefilter skips it",
                            rule.id()
                        );
                        matched += usize::from(hit);
                        let Some(c) = cand.as_ref().filter(|c| c.lines.contains(&n)) else {
                            continue;
                        };
                        // The check made before compiling agrees with
                        // the compiled regex, line by line.
                        assert_eq!(
                            gate.triggers_match_any(c.patterns, std::iter::once(line.as_bytes())),
                            fresh
                                .triggers_for(c.patterns)
                                .iter()
                                .any(|r| r.is_match(line.as_bytes())),
                            "rule {}: {line:?}",
                            rule.id()
                        );
                        gates += 1;
                        let some = fresh.triggers_for(c.patterns);
                        subsets += usize::from(matches!(some, crate::rule::Triggers::Subset(_)));
                        let want: Vec<_> = rule.triggers_in(line).collect();
                        let got: Vec<_> = fresh.triggers_in_with(&some, line).collect();
                        assert_eq!(got, want, "rule {}: {line:?}", rule.id());
                    }
                }
            }
        }
        assert!(matched > 500, "{matched}");
        assert!(subsets > 100, "{subsets}");
        assert!(gates > 1000, "{gates}");
    }

    /// One scan for every adversary, read in parallel chunks on a large
    /// spec, gives each persona exactly what its own prefilter gives in
    /// one pass; a persona whose rules changed since is not served.
    #[test]
    fn the_shared_prefilter_gives_each_persona_its_own_candidates() {
        let cat = Catalog::builtin().unwrap();
        let text = rule_specs_and_examples().join("\n");
        // Large enough to be read in chunks.
        let text = text.repeat(3 * PARALLEL_CHUNK_BYTES / text.len() + 1);
        assert!(text.len() > 3 * PARALLEL_CHUNK_BYTES, "{}", text.len());
        let spec = crate::spec::Spec::parse(None, text);
        let texts = crate::offline::attacker::prefilter_texts(&spec);
        let personas: Vec<&Persona> = cat.personas.values().filter(|p| !p.is_final_boss).collect();
        assert_eq!(personas.len(), 5);
        let shared = cat.adversary_prefilter().candidates(&texts, &personas);
        let chunk = texts.len() / 2;
        let mut late = 0;
        for (p, got) in personas.iter().zip(shared) {
            let own = TriggerPrefilter::new(&p.rules).candidates(texts.iter().copied());
            late += own
                .iter()
                .flatten()
                .filter(|c| c.lines.iter().any(|&n| n > chunk))
                .count();
            assert_eq!(got.as_ref(), Some(&own), "{}", p.name);
        }
        assert!(late > 100, "{late}");
        let mut changed = personas[0].clone();
        changed.rules.pop();
        assert_eq!(
            cat.adversary_prefilter().candidates(&texts, &[&changed]),
            [None]
        );
    }

    /// Words the rules look for, and ones that are near misses, so that
    /// generated lines often hold matches.
    fn vocabulary(rules: &[Rule]) -> Vec<String> {
        let mut words: Vec<String> = rules
            .iter()
            .filter_map(|r| r.trigger_needs.as_ref())
            .flat_map(|n| n.iter())
            .map(|n| String::from_utf8_lossy(&n.bytes).into_owned())
            .collect();
        words.sort();
        words.dedup();
        words.extend(
            [
                "the", "a", "to", "api", "service", "calls", " ", ".", "-", "`", "é", "ß", "İ",
                "K", "日本", "\u{200b}", "CALLS", "Retries", "TimeOut", "x.y", "5", "gb",
                "per day",
            ]
            .map(String::from),
        );
        words
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The prefilter never drops a line the rule's own regexes match:
        /// lines built from the rules' words, their case variants,
        /// non-ASCII text and random characters.
        #[test]
        fn never_skips_a_line_the_triggers_match(
            picks in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..24),
        ) {
            static RULES: std::sync::LazyLock<(Vec<Rule>, Vec<String>)> =
                std::sync::LazyLock::new(|| {
                    let rules = builtin_rules();
                    let words = vocabulary(&rules);
                    (rules, words)
                });
            let (rules, words) = &*RULES;
            let mut line = String::new();
            for (i, how, c) in picks {
                let w = i.get(words);
                match how {
                    0 => line.push_str(w),
                    1 => line.push_str(&w.to_uppercase()),
                    2 => { line.push_str(w); line.push(' '); }
                    _ => { line.push(c); line.push_str(w); }
                }
            }
            let lower = line.to_ascii_lowercase();
            let prefilter = TriggerPrefilter::new(rules);
            let texts = [line.as_str(), lower.as_str()];
            let found = prefilter.candidates(texts);
            for (rule, cand) in rules.iter().zip(&found) {
                for (n, text) in texts.iter().enumerate() {
                    if rule.triggers.iter().any(|r| r.is_match(text.as_bytes())) {
                        prop_assert!(
                            cand.as_ref().is_none_or(|c| c.lines.contains(&n)),
                            "rule {} matches {:?} but the prefilter skips it", rule.id(), text
                        );
                    }
                }
            }
        }
    }
}
