//! Offline rule: a design element (triggers) and the safeguards a persona
//! expects near it. Rules are data (in `personas/*.toml`); this module only
//! defines their shape and compiles their patterns.

use crate::concern::Severity;
use regex_automata::meta;
use regex_syntax::hir::Hir;

/// A compiled rule pattern: a byte regex over ASCII-lowercased text (see
/// `compile`). Match it on `line.lower.as_bytes()`; offsets are byte
/// offsets into the original line too. The same engine as
/// `regex::bytes::Regex` (leftmost-first, same positions), built with our
/// own configuration (see `build`).
pub type Regex = meta::Regex;
use serde::Deserialize;

/// Where an attacker looks for a safeguard before raising a concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The paragraph, list or table the design element is in (aggressive).
    #[default]
    Block,
    /// The section the design element is in.
    Section,
    /// The whole document.
    Document,
}

/// A rule as written in a persona file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub id: String,
    /// One-line title; `{subject}` is replaced by what the trigger matched.
    pub title: String,
    /// The title when the matched text is not a route, path or code span
    /// ("without sign-in", "public route"), for a `title` that uses the
    /// subject as its grammatical subject ("{subject} has no ...").
    #[serde(default)]
    pub title_unnamed: Option<String>,
    pub severity: Severity,
    /// Patterns (case-insensitive regex) that find the design element.
    pub triggers: Vec<String>,
    /// A trigger line that also matches one of these is not the design element.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Patterns for the safeguard that answers the concern.
    #[serde(default)]
    pub safeguards: Vec<String>,
    /// The whole document must also match one of these for the rule to apply.
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub scope: Scope,
    /// What is missing, in words ("a timeout on the call").
    pub missing: String,
    /// Why it matters.
    pub impact: String,
    /// Raise at most this many concerns for the rule in one spec.
    #[serde(default)]
    pub max: Option<usize>,
    /// Which kinds of line may trigger: prose, list, table, code, heading.
    #[serde(default)]
    pub in_kinds: Vec<String>,
    /// The trigger's block (paragraph, list, table) must also match one of
    /// these, e.g. a client timestamp only matters next to "ordered by".
    #[serde(default)]
    pub near: Vec<String>,
    /// A line of a Goals section must match one of these for the rule to
    /// apply; the concern cites that goal ("the design does not reach it").
    #[serde(default)]
    pub goals: Vec<String>,
    /// A built-in check run instead of (or besides) the trigger scan; see
    /// `offline::checks` and personas/README.md.
    #[serde(default)]
    pub check: Option<Check>,
    /// For `check = "two-of"`: names of interchangeable technologies; the
    /// rule fires when trigger lines name two different ones.
    #[serde(default)]
    pub distinct: Vec<String>,
    /// Rules of the same pack that tell this rule's gap more precisely: a
    /// finding of this rule is not raised where one of theirs cites an
    /// overlapping line (one gap, one concern).
    #[serde(default)]
    pub yields_to: Vec<String>,
}

/// Built-in checks that need more than a pattern: they compare numbers or
/// relate lines across the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Trigger lines name two different entries of `distinct`.
    TwoOf,
    /// Stored volume per day against a stated disk or storage capacity.
    Capacity,
    /// A scheduled job whose stated duration exceeds its interval.
    JobOverlap,
    /// A polling interval longer than a stated latency goal.
    PollingLatency,
    /// Service A calls B and B calls A, synchronously.
    CallCycle,
    /// "We never store X" in one place, X stored in another.
    Contradiction,
    /// A figure worked out from the spec's own numbers that they do not
    /// give: a time to finish, a data volume, shares over 100%.
    StatedMath,
    /// A field table and a JSON example that disagree about a field's
    /// type, range or allowed values.
    SchemaExample,
}

/// The needs of every embedded pattern list that is asked about a text
/// before it is compiled (triggers, and the `exclude`, `requires`, `near`
/// and `goals` lists, see `LazyPatterns::is_match`), generated from the
/// packs by the test `literal_table_is_fresh`.
#[rustfmt::skip]
mod literal_table;
mod trigger_needs;
pub use trigger_needs::{Need, is_word_byte};

/// One entry of `literal_table::TABLE`: a pattern list and its needs
/// (`None`: the list has none).
type NeedsEntry = (&'static [&'static str], Option<&'static [Need]>);

/// The needs `needs_of` reads from an embedded pattern list: `None` when
/// the table does not hold the list, `Some(None)` when the list has none.
fn embedded_needs(list: &[String]) -> Option<Option<&'static [Need]>> {
    let table = literal_table::TABLE;
    let key = |k: &[&str]| k.iter().copied().cmp(list.iter().map(String::as_str));
    let i = table.binary_search_by(|(k, _)| key(k)).ok()?;
    Some(table[i].1)
}

/// Where a pack comes from, which decides when its patterns are checked
/// (see `Rule::compile` and `Rule::compile_embedded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Built into the binary; unit tests compile every pattern.
    Embedded,
    /// A user's file: every pattern is parsed when it is loaded.
    User,
}

impl Rule {
    /// `compile_embedded` or `compile`, as `origin` says.
    pub fn load(def: RuleDef, origin: Origin) -> Result<Rule, String> {
        match origin {
            Origin::Embedded => Rule::compile_embedded(def),
            Origin::User => Rule::compile(def),
        }
    }
}

/// A rule with its patterns compiled.
#[cfg(test)]
mod tests {
    #[test]
    fn lazy_patterns_are_checked_at_load_and_compiled_on_use() {
        let def = |safeguard: &str| -> super::RuleDef {
            toml::from_str(&format!(
                "id = \"r\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = ['call']\nsafeguards = ['{safeguard}']\nmissing = \"m\"\nimpact = \"i\"\n"
            ))
            .unwrap()
        };
        let err = super::Rule::compile(def("time(out")).unwrap_err();
        assert!(err.contains("bad pattern `time(out`"), "{err}");
        let rule = super::Rule::compile(def(r"\btime-?outs?\b")).unwrap();
        assert!(
            rule.safeguards
                .iter()
                .any(|r| r.is_match(b"calls have a 3 s timeout"))
        );
        assert!(!rule.safeguards.iter().any(|r| r.is_match(b"no deadline")));
    }

    use super::*;

    #[test]
    fn every_builtin_pattern_list_compiles_when_first_used() {
        let mut cat = crate::catalog::Catalog::builtin().unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        crate::nuance::check::extend_catalog(&mut cat, &set).unwrap();
        for rule in cat.personas.values().flat_map(|p| &p.rules) {
            let d = &rule.def;
            for (list, defs) in [
                (&rule.triggers, &d.triggers),
                (&rule.exclude, &d.exclude),
                (&rule.safeguards, &d.safeguards),
                (&rule.requires, &d.requires),
                (&rule.near, &d.near),
                (&rule.goals, &d.goals),
            ] {
                // A list that failed to compile would be empty: no matches.
                assert_eq!(list.len(), usize::from(!defs.is_empty()), "{}", d.id);
            }
        }
        // The final boss's evidence is compiled where it is used.
        for check in cat.personas.values().flat_map(|p| &p.checks) {
            for p in &check.evidence {
                assert!(compile(p).is_ok(), "check `{}`: `{p}`", check.id);
            }
        }
    }

    /// The lists `Rule::compile` reads needs for (`with_needs`), as
    /// `literal_table` holds them for the embedded packs.
    fn prechecked_lists(def: &RuleDef) -> [&Vec<String>; 5] {
        [
            &def.triggers,
            &def.exclude,
            &def.requires,
            &def.near,
            &def.goals,
        ]
    }

    /// Every list of the embedded packs (personas and nuance checks) that
    /// is asked about texts before it is compiled (`prechecked_lists`),
    /// with its literals, rendered as `literal_table.rs`.
    fn render_literal_table() -> String {
        let mut defs: Vec<RuleDef> = Vec::new();
        for (file, text) in crate::catalog::EMBEDDED_PERSONAS {
            let p: crate::persona::PersonaDef =
                toml::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            defs.extend(p.rules);
        }
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        defs.extend(set.checks.iter().map(|c| c.def.clone()));
        let mut table = std::collections::BTreeMap::new();
        for d in &defs {
            for list in prechecked_lists(d).into_iter().filter(|l| !l.is_empty()) {
                let hirs: Vec<Hir> = list
                    .iter()
                    .map(|p| parse(p).unwrap_or_else(|e| panic!("rule `{}`: {e}", d.id)))
                    .collect();
                table.insert(list.clone(), trigger_needs::needs_of(&hirs));
            }
        }
        let bytes = |b: &[u8]| {
            let escaped: String = b
                .iter()
                .flat_map(|&c| std::ascii::escape_default(c))
                .map(char::from)
                .collect();
            format!("b\"{escaped}\"")
        };
        let mut out = String::from(
            "//! Generated by `GAUNTLET_BLESS=1 cargo test --lib literal_table` from the\n\
             //! embedded packs; do not edit. Per pattern list (triggers, exclude,\n\
             //! requires, near, goals), sorted: what a text must hold for one of its\n\
             //! patterns to match (`needs_of`), or `None`.\n\n\
             use super::Need;\n\n\
             pub(super) static TABLE: &[super::NeedsEntry] = &[\n",
        );
        for (list, needs) in &table {
            let keys: Vec<String> = list.iter().map(|t| format!("{t:?}")).collect();
            let lits = match needs {
                Some(l) => format!(
                    "Some(&[{}])",
                    l.iter()
                        .map(|n| format!(
                            "Need::embedded({}, {}, {}, {})",
                            n.pattern,
                            n.group,
                            bytes(&n.bytes),
                            n.word_start
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "None".to_string(),
            };
            out.push_str(&format!("    (&[{}], {lits}),\n", keys.join(", ")));
        }
        out.push_str("];\n");
        out
    }

    /// The table `Rule::compile_embedded` reads must be the one the packs
    /// give; `GAUNTLET_BLESS=1` rewrites it after a pack changes.
    #[test]
    fn literal_table_is_fresh() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rule/literal_table.rs");
        let want = render_literal_table();
        if std::env::var_os("GAUNTLET_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "src/rule/literal_table.rs is stale: run \
             `GAUNTLET_BLESS=1 cargo test --lib literal_table`"
        );
    }

    /// `date-format` matches a bare `12/31/2025` and `missing-units` a
    /// `key: 30` whose key only ends in a unit word: neither has a fixed word.
    const KNOWN_WITHOUT_NEEDS: &[&str] = &["date-format", "missing-units"];

    /// A trigger list with no literal need runs its regexes on every line
    /// of every spec: one such list (`divide-by-zero`, while a two-byte
    /// "km" was one of its alternatives) took the largest KEP from 42 to
    /// 57 ms. New rules must give the prefilter a word of at least three
    /// bytes in every pattern; the lists above are the known exceptions.
    #[test]
    fn every_embedded_trigger_list_but_the_known_ones_has_literal_needs() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let mut without: Vec<String> = cat
            .personas
            .values()
            .flat_map(|p| p.rules.iter())
            .filter(|r| !r.def.triggers.is_empty() && r.trigger_needs.is_none())
            .map(|r| r.id().to_string())
            .collect();
        without.sort();
        assert_eq!(
            without, KNOWN_WITHOUT_NEEDS,
            "rules whose triggers need no literal"
        );
    }

    #[test]
    fn embedded_rules_read_the_literals_their_syntax_gives() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let mut checked = 0;
        for p in cat.personas.values() {
            for rule in p.rules.iter().filter(|r| !r.def.triggers.is_empty()) {
                let user = Rule::compile(rule.def.clone()).unwrap();
                assert_eq!(rule.trigger_needs, user.trigger_needs, "{}", rule.id());
                for (embedded, own) in [
                    (&rule.exclude, &user.exclude),
                    (&rule.requires, &user.requires),
                    (&rule.near, &user.near),
                    (&rule.goals, &user.goals),
                ] {
                    assert_eq!(embedded.needs, own.needs, "{}", rule.id());
                }
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked}");
        // A list the table does not hold falls back to reading its syntax.
        assert_eq!(embedded_needs(&["zzz-not-a-trigger".to_string()]), None);
    }

    /// The check made before compiling (`LazyPatterns::is_match`) never
    /// says "no match" where the list's regex matches: every embedded list
    /// that has needs, on the texts it reads (lines for `exclude`, `near`
    /// and `goals`, the whole document for `requires`) of the rule test
    /// specs, written to fire each rule, and the examples.
    #[test]
    fn the_literal_check_never_hides_a_match() {
        let mut cat = crate::catalog::Catalog::builtin().unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        crate::nuance::check::extend_catalog(&mut cat, &set).unwrap();
        let docs: Vec<String> = crate::trigger_prefilter::tests::rule_specs_and_examples()
            .iter()
            .map(|d| d.to_ascii_lowercase())
            .collect();
        let lines: Vec<&str> = docs.iter().flat_map(|d| d.lines()).collect();
        let documents: Vec<&str> = docs.iter().map(String::as_str).collect();
        let (mut lists, mut skipped, mut matched) = (0, 0, 0);
        for rule in cat.personas.values().flat_map(|p| &p.rules) {
            for (list, texts) in [
                (&rule.exclude, &lines),
                (&rule.near, &lines),
                (&rule.goals, &lines),
                (&rule.requires, &documents),
            ] {
                let Some(needs) = list.needs.as_deref() else {
                    continue;
                };
                lists += 1;
                for text in texts.iter().map(|t| t.as_bytes()) {
                    let hit = list.iter().any(|r| r.is_match(text));
                    let met = trigger_needs::met_in(needs, text);
                    assert!(
                        met || !hit,
                        "rule `{}`: {:?}",
                        rule.id(),
                        String::from_utf8_lossy(text)
                    );
                    skipped += usize::from(!met);
                    matched += usize::from(hit);
                }
            }
        }
        assert!(lists > 100, "{lists}");
        assert!(skipped > 100_000, "{skipped}");
        assert!(matched > 1_000, "{matched}");
    }

    #[test]
    fn a_list_is_compiled_only_once_a_text_holds_its_literals() {
        let def: RuleDef = toml::from_str(
            "id = \"r\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = ['call']\nexclude = ['\\bdry[- ]runs?\\b']\nmissing = \"m\"\nimpact = \"i\"\n",
        )
        .unwrap();
        let rule = Rule::compile(def.clone()).unwrap();
        assert!(!rule.excludes("we call the api"));
        assert!(!rule.exclude.is_compiled(), "no \"dry\" in the line");
        // Its words are there, not the phrase: compiled, and no match.
        assert!(!rule.excludes("a dry runner call"));
        assert!(rule.exclude.is_compiled());
        assert!(rule.excludes("a dry-run call"));
        // A list the generated table does not hold (a stale table) has no
        // needs: it is compiled on its first question, same answers.
        let stale = Rule::compile_embedded(def).unwrap();
        assert!(!stale.excludes("we call the api"));
        assert!(stale.exclude.is_compiled());
        // An embedded list reads its needs from the table.
        let cat = crate::catalog::Catalog::builtin().unwrap();
        let embedded = cat
            .personas
            .values()
            .flat_map(|p| &p.rules)
            .find(|r| r.exclude.needs.is_some())
            .expect("an embedded rule with excludes");
        assert!(!embedded.excludes(""));
        assert!(!embedded.exclude.is_compiled());
    }

    /// Bit 63 of a candidate mask stands for pattern 63 and every later
    /// one (as the prefilter sets it): a rule with more patterns reads only
    /// those a line can meet, not its whole list.
    #[test]
    fn a_rule_with_more_than_64_patterns_reads_only_the_patterns_a_line_meets() {
        let triggers: Vec<String> = (0..70).map(|i| format!("'\\bword{i}x\\b'")).collect();
        let def: RuleDef = toml::from_str(&format!(
            "id = \"many\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = [{}]\nmissing = \"m\"\nimpact = \"i\"\n",
            triggers.join(", ")
        ))
        .unwrap();
        let rule = Rule::compile(def).unwrap();
        let reads = |mask: u64, text: &str| {
            let some = rule.triggers_for(mask);
            assert!(matches!(some, Triggers::Subset(_)));
            some.iter().any(|r| r.is_match(text.as_bytes()))
        };
        assert!(reads(1 << 1, "word1x") && !reads(1 << 1, "word0x"));
        assert!(reads(1 << 63, "word63x") && reads(1 << 63, "word69x"));
        assert!(!reads(1 << 63, "word62x"));
        assert!(!rule.triggers.is_compiled(), "only subsets were compiled");
        // The forward-only check before compiling reads the same subsets.
        let gate = Rule::compile(rule.def.clone()).unwrap();
        assert!(gate.triggers_match_any(1 << 63, std::iter::once(&b"word69x"[..])));
        assert!(!gate.triggers_match_any(1 << 1, std::iter::once(&b"word69x"[..])));
    }

    #[test]
    fn a_pattern_too_large_to_compile_is_reported_at_load() {
        let def: RuleDef = toml::from_str(
            "id = \"big\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = ['(?:a{1000}){1000}']\nmissing = \"m\"\nimpact = \"i\"\n",
        )
        .unwrap();
        let err = Rule::compile(def).unwrap_err();
        assert!(err.contains("rule `big`: bad pattern"), "{err}");
    }

    #[test]
    fn patterns_match_case_insensitively_through_lowercased_text() {
        let r = compile(r"\bPOST\s+/\w+|\bTimeout\b").unwrap();
        assert!(r.is_match("We POST /orders".to_ascii_lowercase().as_bytes()));
        assert!(r.is_match(b"a timeout"));
        // Escapes keep their case: \W is "not a word character".
        let w = compile(r"a\Wb").unwrap();
        assert!(w.is_match(b"a-b") && !w.is_match(b"axb"));
        // ASCII word boundaries: "café" has no boundary between é and nothing else.
        assert!(compile(r"\bcaf\b").unwrap().find(b"caf-x").is_some());
    }

    /// A tree with `A-Z` taken out of every byte class: patterns are matched
    /// on lowercased text, where no class can meet an upper-case letter
    /// (`lowercase_literals` turns a spelled-out `A-Z` into `a-z`).
    fn no_upper(hir: &Hir) -> Hir {
        use regex_syntax::hir::{Capture, Class, ClassBytes, ClassBytesRange, HirKind, Repetition};
        match hir.kind() {
            HirKind::Class(Class::Bytes(c)) => {
                let mut c = c.clone();
                c.difference(&ClassBytes::new([ClassBytesRange::new(b'A', b'Z')]));
                Hir::class(Class::Bytes(c))
            }
            HirKind::Repetition(r) => Hir::repetition(Repetition {
                sub: Box::new(no_upper(&r.sub)),
                ..r.clone()
            }),
            HirKind::Capture(c) => Hir::capture(Capture {
                sub: Box::new(no_upper(&c.sub)),
                ..c.clone()
            }),
            HirKind::Concat(hs) => Hir::concat(hs.iter().map(no_upper).collect()),
            HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(no_upper).collect()),
            _ => hir.clone(),
        }
    }

    /// `parse` reads `\\w`, `\\b`, `\\d` and `\\s` as ASCII (Unicode off), the
    /// same trees as `asciify` spells out, which take longer to parse.
    #[test]
    fn parsing_gives_the_ascii_classes_asciify_spells_out() {
        let mut cat = crate::catalog::Catalog::builtin().unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        crate::nuance::check::extend_catalog(&mut cat, &set).unwrap();
        let spelled = |p: &str| {
            regex_syntax::ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(&lowercase_literals(&asciify(p)))
                .unwrap()
        };
        let mut checked = 0;
        for d in cat.personas.values().flat_map(|p| &p.rules).map(|r| &r.def) {
            for p in [
                &d.triggers,
                &d.exclude,
                &d.safeguards,
                &d.requires,
                &d.near,
                &d.goals,
            ]
            .into_iter()
            .flatten()
            {
                assert_eq!(
                    no_upper(&parse(p).unwrap()),
                    no_upper(&spelled(p)),
                    "rule `{}`: `{p}`",
                    d.id
                );
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
        // The premise: a shorthand does parse to the spelled-out class.
        let all = r"\w\b\W\s\d[\w-]";
        assert_eq!(no_upper(&parse(all).unwrap()), no_upper(&spelled(all)));
        assert_ne!(parse(r"\w").unwrap(), parse(r"\d").unwrap());
    }

    #[test]
    fn asciify_rewrites_shorthands_outside_and_inside_classes() {
        assert_eq!(asciify(r"\w+"), "[0-9A-Za-z_]+");
        assert_eq!(asciify(r"[\w-]"), "[[0-9A-Za-z_]-]");
        assert_eq!(asciify(r"\bx\b"), "(?-u:\\b)x(?-u:\\b)");
        assert_eq!(asciify(r"[^.]"), "[^.]");
    }
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub def: RuleDef,
    pub triggers: LazyPatterns,
    pub exclude: LazyPatterns,
    pub safeguards: LazyPatterns,
    pub requires: LazyPatterns,
    pub near: LazyPatterns,
    pub goals: LazyPatterns,
    pub distinct: Vec<Regex>,
    /// What a line must hold for one of the trigger patterns to match
    /// (see `trigger_needs`): `TriggerPrefilter` skips the lines that do
    /// not. `None`: every line is a candidate.
    pub trigger_needs: Option<std::borrow::Cow<'static, [Need]>>,
    /// Regexes of some of the trigger patterns (see `triggers_for`).
    trigger_subsets: SubsetCache,
    /// The forward-only automata `triggers_match_any` built, by mask: a
    /// batch review meets the same candidates again on other specs.
    trigger_gates: GateCache,
}

/// The trigger regexes compiled for subsets of a rule's patterns, by mask.
/// A clone starts empty (the regexes compile again on use).
#[derive(Debug, Default)]
struct SubsetCache(std::sync::Mutex<Vec<(u64, std::sync::Arc<Regex>)>>);

impl Clone for SubsetCache {
    fn clone(&self) -> SubsetCache {
        SubsetCache::default()
    }
}

/// Subsets kept per rule; a rule asked for more uses its whole list.
const SUBSETS_KEPT: usize = 16;

/// The forward-only automata of some of a rule's trigger patterns, by mask
/// (all bits: the whole list). A clone starts empty.
#[derive(Debug, Default)]
struct GateCache(std::sync::Mutex<Vec<(u64, std::sync::Arc<Gate>)>>);

/// A forward-only automaton (see `forward_dfa`) with the states it has
/// worked out so far, kept for the next spec of a batch.
#[derive(Debug)]
struct Gate {
    dfa: regex_automata::hybrid::dfa::DFA,
    cache: std::sync::Mutex<regex_automata::hybrid::dfa::Cache>,
}

impl Clone for GateCache {
    fn clone(&self) -> GateCache {
        GateCache::default()
    }
}

/// The trigger regexes to read lines with (see `Rule::triggers_for`).
pub enum Triggers<'r> {
    All(&'r [Regex]),
    Subset(std::sync::Arc<Regex>),
}

impl std::ops::Deref for Triggers<'_> {
    type Target = [Regex];

    fn deref(&self) -> &[Regex] {
        match self {
            Triggers::All(all) => all,
            Triggers::Subset(one) => std::slice::from_ref(&**one),
        }
    }
}

/// Rewrites Unicode-aware shorthands (`\w`, `\b`, `\d`, `\s`) to their
/// ASCII forms, for a pattern compiled with Unicode on (a `regex::Regex`).
/// Rule patterns are English keywords, and the Unicode classes (times case
/// folding) make each compiled pattern many times larger and slower to
/// build. `parse` needs no rewriting: with Unicode off the shorthands are
/// ASCII already, and the spelled-out classes took a sixth longer to parse.
pub(crate) fn asciify(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push(c);
                    break;
                };
                let rep = match n {
                    'w' => Some("[0-9A-Za-z_]"),
                    'W' if in_class == 0 => Some("[^0-9A-Za-z_]"),
                    'd' => Some("[0-9]"),
                    's' => Some("[\\t\\n\\x0B\\x0C\\r ]"),
                    'b' if in_class == 0 => Some("(?-u:\\b)"),
                    _ => None,
                };
                match rep {
                    Some(r) => out.push_str(r),
                    None => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' => {
                in_class += 1;
                out.push(c);
                // A leading `]` or `^]` is a literal, not the end.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    out.push(chars.next().unwrap_or(']'));
                }
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// ASCII-lowercases a pattern's literals, leaving escapes (`\W`, `\S`,
/// `\B`, `\P{..}`) as written.
fn lowercase_literals(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut escaped = false;
    let mut in_braces = false;
    for c in pattern.chars() {
        if escaped {
            out.push(c);
            escaped = false;
            in_braces = c == 'p' || c == 'P' || c == 'x' || c == 'u' || c == 'U';
            continue;
        }
        if in_braces && c != '\\' {
            out.push(c);
            if c == '}' || (c != '{' && !c.is_ascii_alphanumeric()) {
                in_braces = c == '{';
            }
            continue;
        }
        in_braces = false;
        if c == '\\' {
            escaped = true;
            out.push(c);
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Compiles a rule pattern. Matching is case-insensitive for ASCII: the
/// pattern is lowercased here and matched against lowercased text
/// (`Line::lower`, `Spec::lower`, or `lower()`), which compiles several
/// times faster than Unicode case folding.
pub fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let hir = parse(pattern).map_err(|e| PatternError(e.to_string()))?;
    build(&hir)
}

/// Why a pattern did not compile; the messages are `regex::Error`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(String);

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

/// Builds a parsed pattern (see `parse`) as `regex::bytes::RegexBuilder`
/// would with `unicode(false)` and a 4 MiB size limit, but without the
/// literal prefilter: rule patterns are matched on one line at a time (or
/// once on the document), where extracting and optimising literals and
/// building a Teddy or Aho-Corasick searcher cost more than they save; that
/// was most of the time spent compiling a pattern list.
fn build(hir: &Hir) -> Result<Regex, PatternError> {
    meta::Builder::new()
        .configure(meta_config(1 << 22))
        .build_from_hir(hir)
        .map_err(|e| match e.size_limit() {
            Some(limit) => PatternError(format!(
                "Compiled regex exceeds size limit of {limit} bytes."
            )),
            None => PatternError(e.to_string()),
        })
}

/// The configuration `regex::bytes::RegexBuilder` would give a byte regex
/// (leftmost-first, empty matches anywhere, a 2 MiB lazy-DFA cache) with an
/// NFA size limit of `size_limit` bytes, without the literal prefilter.
/// Shared by rule patterns and `AsciiFirst`.
pub(crate) fn meta_config(size_limit: usize) -> meta::Config {
    meta::Config::new()
        .match_kind(regex_automata::MatchKind::LeftmostFirst)
        .utf8_empty(false)
        .nfa_size_limit(Some(size_limit))
        .hybrid_cache_capacity(2 * (1 << 20))
        .auto_prefilter(false)
}

/// The parser `compile` uses, for checking a pattern's syntax and reading
/// its literals without compiling it. Unicode is off: `\w`, `\b`, `\d` and
/// `\s` are ASCII (`parsing_gives_the_ascii_classes_asciify_spells_out`).
fn parse(pattern: &str) -> Result<Hir, Box<regex_syntax::Error>> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&lowercase_literals(pattern))
        .map_err(Box::new)
}

/// A pattern list compiled on first use. Most rules never fire on a given
/// spec, so their safeguard, goal and context patterns are never needed:
/// compiling every list up front was most of a short run's time. The
/// patterns of a user's file are parsed when the rule is loaded, so a bad
/// one is reported with its file, never at match time, and the parsed
/// patterns are kept; the embedded packs' patterns, which a unit test
/// compiles, are parsed on first use too (parsing every pattern at start
/// was most of a short run's start-up). Either way a list compiles to one
/// regex: the alternation compiles far faster than the patterns one by one.
///
/// A list may also carry its needs (`trigger_needs::needs_of`): literals
/// every match holds. A text without them cannot match, and `is_match`
/// says so without compiling: most exclusions, goals, context and
/// required-technology lists are asked about texts that do not hold one
/// of their words, and compiling them only to learn that was a tenth of
/// the largest KEP's run.
#[derive(Debug, Clone, Default)]
pub struct LazyPatterns {
    source: Source,
    /// What a text must hold for a pattern of the list to match; `None`:
    /// not known (or nothing), every text is read with the regex.
    needs: Option<std::borrow::Cow<'static, [Need]>>,
    compiled: std::sync::OnceLock<Vec<Regex>>,
}

#[derive(Debug, Clone, Default)]
enum Source {
    /// An empty list: matches nothing.
    #[default]
    Empty,
    /// The list as one alternation, `(?:p1)|(?:p2)|...`, parsed.
    Parsed(Hir),
    /// An embedded list, parsed on first use.
    Unparsed(Vec<String>),
}

impl LazyPatterns {
    /// Whether the list is compiled already.
    pub(crate) fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// Whether the list has no pattern, known without compiling it.
    pub fn is_empty(&self) -> bool {
        matches!(self.source, Source::Empty)
    }

    /// Whether a pattern of the list matches `text`. A text that lacks the
    /// list's needs cannot match: then the answer is `false` and the list
    /// is not compiled. Once it is compiled, the regex answers alone (it
    /// reads the text about as fast as the literals would be looked for).
    pub fn is_match(&self, text: &[u8]) -> bool {
        let impossible = !self.is_compiled()
            && self
                .needs
                .as_deref()
                .is_some_and(|needs| !trigger_needs::met_in(needs, text));
        !impossible && self.iter().any(|r| r.is_match(text))
    }

    /// An embedded list, parsed and compiled on first use: its syntax is
    /// checked by `every_builtin_pattern_list_compiles_when_first_used`.
    /// `needs` come from `literal_table` (`embedded_needs`).
    fn unparsed(patterns: &[String], needs: Option<&'static [Need]>) -> LazyPatterns {
        LazyPatterns {
            source: if patterns.is_empty() {
                Source::Empty
            } else {
                Source::Unparsed(patterns.to_vec())
            },
            needs: needs.map(std::borrow::Cow::Borrowed),
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// An embedded list with the needs the generated table gives it; a
    /// list the table does not hold (a stale table) has none, so it is
    /// compiled on its first question: slower, never different.
    fn embedded(patterns: &[String]) -> LazyPatterns {
        LazyPatterns::unparsed(patterns, embedded_needs(patterns).flatten())
    }

    /// A user's list, parsed now so that a bad pattern is an error naming
    /// the rule. `with_needs`: its needs are read from the syntax too (see
    /// `is_match`), for a list asked about texts before it is compiled;
    /// not for safeguards, which are read line by line over whole
    /// sections, where looking for their many literals in every line
    /// would cost about what compiling them does.
    fn parsed(rule: &str, patterns: &[String], with_needs: bool) -> Result<LazyPatterns, String> {
        if patterns.is_empty() {
            return Ok(LazyPatterns::default());
        }
        let mut weight = 0usize;
        let mut hirs = Vec::with_capacity(patterns.len());
        for p in patterns {
            let hir = parse(p).map_err(|e| format!("rule `{rule}`: bad pattern `{p}`: {e}"))?;
            weight = weight.saturating_add(rough_size(&hir));
            hirs.push(hir);
        }
        // Read before the trees are joined, so they are never copied.
        let needs = with_needs
            .then(|| trigger_needs::needs_of(&hirs))
            .flatten()
            .map(std::borrow::Cow::Owned);
        // The same tree as parsing the patterns joined as `(?:p1)|(?:p2)`:
        // a non-capturing group adds no node, and flags set inside a
        // pattern end with its group.
        let hir = Hir::alternation(hirs);
        // Only a big list (long alternations, counted repeats) could pass
        // the syntax check and still exceed the compiled size limit: such a
        // list is compiled now, so the error names the rule at load.
        let compiled = std::sync::OnceLock::new();
        if weight > EAGER_WEIGHT {
            let r = build(&hir).map_err(|_| {
                patterns
                    .iter()
                    .find_map(|p| {
                        compile(p)
                            .err()
                            .map(|e| format!("rule `{rule}`: bad pattern `{p}`: {e}"))
                    })
                    .unwrap_or_else(|| format!("rule `{rule}`: patterns too large together"))
            })?;
            let _ = compiled.set(vec![r]);
        }
        Ok(LazyPatterns {
            source: Source::Parsed(hir),
            needs,
            compiled,
        })
    }
}

/// Above this `rough_size`, a pattern list is compiled when loaded (see
/// `LazyPatterns::parsed`). The built-in lists weigh a few hundred to a few
/// thousand; the compiled size limit is reached far above this.
const EAGER_WEIGHT: usize = 20_000;

/// A rough size of a pattern once compiled: literal bytes, class ranges
/// (Unicode ones count more: they compile to UTF-8 byte sequences) and
/// repetitions multiplied out by their bound.
fn rough_size(hir: &Hir) -> usize {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len(),
        HirKind::Class(Class::Bytes(c)) => c.ranges().len(),
        HirKind::Class(Class::Unicode(c)) => 8 * c.ranges().len(),
        HirKind::Repetition(r) => {
            let times = r.max.unwrap_or(r.min).max(1) as usize;
            rough_size(&r.sub).saturating_mul(times)
        }
        HirKind::Capture(c) => rough_size(&c.sub),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => hs
            .iter()
            .fold(1usize, |acc, h| acc.saturating_add(rough_size(h))),
    }
}

impl std::ops::Deref for LazyPatterns {
    type Target = [Regex];

    fn deref(&self) -> &[Regex] {
        self.compiled.get_or_init(|| match &self.source {
            Source::Empty => Vec::new(),
            // Syntax was checked at load; only the size limit could fail here.
            Source::Parsed(h) => build(h).map(|r| vec![r]).unwrap_or_default(),
            // Embedded: a unit test compiles every list, so neither fails.
            Source::Unparsed(patterns) => build_list(patterns.iter().map(String::as_str))
                .map(|r| vec![r])
                .unwrap_or_default(),
        })
    }
}

/// Patterns parsed and compiled as one alternation; `None` when one does
/// not parse or the whole exceeds the size limit.
fn build_list<'p>(patterns: impl Iterator<Item = &'p str>) -> Option<Regex> {
    let hirs: Vec<Hir> = patterns.map(parse).collect::<Result<_, _>>().ok()?;
    build(&Hir::alternation(hirs)).ok()
}

impl Rule {
    /// Compiles a rule from a user's file: every pattern is parsed now, so
    /// a bad one is an error that names the rule.
    pub fn compile(def: RuleDef) -> Result<Rule, String> {
        if def.triggers.is_empty() && def.check.is_none() {
            return Err(format!("rule `{}` has no triggers", def.id));
        }
        let triggers = LazyPatterns::parsed(&def.id, &def.triggers, true)?;
        Ok(Rule {
            trigger_needs: triggers.needs.clone(),
            trigger_subsets: SubsetCache::default(),
            trigger_gates: GateCache::default(),
            // Compiled on first use: with the prefilter, most rules never
            // read a line on a given spec.
            triggers,
            exclude: LazyPatterns::parsed(&def.id, &def.exclude, true)?,
            safeguards: LazyPatterns::parsed(&def.id, &def.safeguards, false)?,
            requires: LazyPatterns::parsed(&def.id, &def.requires, true)?,
            near: LazyPatterns::parsed(&def.id, &def.near, true)?,
            goals: LazyPatterns::parsed(&def.id, &def.goals, true)?,
            distinct: compile_distinct(&def)?,
            def,
        })
    }

    /// Compiles a rule of a pack embedded in the binary, whose patterns
    /// unit tests compile: nothing is parsed until first use, and the
    /// lists' needs come from the table generated from the embedded packs
    /// (`embedded_needs`). A trigger list the table does not hold (a stale
    /// table) has its needs read from its syntax, as `compile` does, and
    /// another list has none (`LazyPatterns::embedded`): slower, never
    /// different.
    pub fn compile_embedded(def: RuleDef) -> Result<Rule, String> {
        if def.triggers.is_empty() && def.check.is_none() {
            return Err(format!("rule `{}` has no triggers", def.id));
        }
        let triggers = match embedded_needs(&def.triggers) {
            Some(needs) => LazyPatterns::unparsed(&def.triggers, needs),
            None => LazyPatterns::parsed(&def.id, &def.triggers, true)?,
        };
        Ok(Rule {
            trigger_needs: triggers.needs.clone(),
            trigger_subsets: SubsetCache::default(),
            trigger_gates: GateCache::default(),
            triggers,
            exclude: LazyPatterns::embedded(&def.exclude),
            safeguards: LazyPatterns::unparsed(&def.safeguards, None),
            requires: LazyPatterns::embedded(&def.requires),
            near: LazyPatterns::embedded(&def.near),
            goals: LazyPatterns::embedded(&def.goals),
            distinct: compile_distinct(&def)?,
            def,
        })
    }

    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// Every trigger match on a line (given lowercased, see `compile`), in
    /// order, unless an exclusion matches: byte ranges, the same in the
    /// original. The exclusions are only read once a trigger matches.
    pub fn triggers_in<'t>(
        &'t self,
        lower: &'t str,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 't {
        self.triggers_in_with(&self.triggers, lower)
    }

    /// `triggers_in`, reading the line with `triggers` (the whole list's
    /// regexes, or those `triggers_for` gives for the line).
    pub fn triggers_in_with<'t>(
        &'t self,
        triggers: &'t [Regex],
        lower: &'t str,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 't {
        let mut matches = triggers
            .iter()
            .flat_map(move |r| r.find_iter(lower.as_bytes()).map(|m| m.range()))
            .peekable();
        let excluded = matches.peek().is_some() && self.excludes(lower);
        matches.filter(move |_| !excluded)
    }

    /// Whether an `exclude` pattern matches the line: then none of its
    /// trigger matches count.
    pub fn excludes(&self, lower: &str) -> bool {
        self.exclude.is_match(lower.as_bytes())
    }

    /// The trigger regexes for lines where only the patterns in `mask`
    /// (see `subset_mask`) can match, the others' needs being unmet there
    /// (`trigger_needs`): the same matches on those lines as the whole
    /// list, since an alternative that cannot match anywhere in a line
    /// never wins, from a regex that parses and compiles only those
    /// patterns. The whole list when `mask` holds all of them or when it
    /// is already compiled.
    pub fn triggers_for(&self, mask: u64) -> Triggers<'_> {
        let Some(mask) = self
            .subset_mask(mask)
            .filter(|_| !self.triggers.is_compiled())
        else {
            return Triggers::All(&self.triggers);
        };
        let mut kept = self
            .trigger_subsets
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = kept.iter().find(|(m, _)| *m == mask) {
            return Triggers::Subset(r.clone());
        }
        if kept.len() >= SUBSETS_KEPT {
            return Triggers::All(&self.triggers);
        }
        // Syntax was checked at load (or by a unit test for the embedded
        // packs); only the size limit could fail, then the whole list.
        match build_list(self.chosen_triggers(Some(mask))) {
            Some(r) => {
                let r = std::sync::Arc::new(r);
                kept.push((mask, r.clone()));
                Triggers::Subset(r)
            }
            None => Triggers::All(&self.triggers),
        }
    }

    /// `mask` limited to the rule's patterns, or `None` when it holds all
    /// of them (then the whole list is read). Bit `p` stands for trigger
    /// pattern `p`, and bit 63 for pattern 63 and every later one, as the
    /// prefilter sets them (`Candidates::patterns`): a rule with more than
    /// 64 patterns reads only those its lines can meet (all from the 64th
    /// on when one of them can), where it used to parse its whole list.
    fn subset_mask(&self, mask: u64) -> Option<u64> {
        let n = self.def.triggers.len();
        let all = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        (mask & all != all).then_some(mask & all)
    }

    /// The trigger patterns of a `subset_mask` (`None`: all of them).
    fn chosen_triggers(&self, subset: Option<u64>) -> impl Iterator<Item = &str> {
        self.def
            .triggers
            .iter()
            .enumerate()
            .filter(move |(p, _)| subset.is_none_or(|m| m & (1 << (*p).min(63)) != 0))
            .map(|(_, t)| t.as_str())
    }

    /// Whether a trigger pattern in `mask` (as `triggers_for` reads it)
    /// matches one of `texts`, known before the trigger regex is compiled.
    /// The prefilter's candidates meet every literal a pattern needs, yet
    /// on most of them the pattern does not match (the words are there,
    /// not in that order), and compiling the full regex (captures, a
    /// reverse automaton for match starts) was most of a large spec's run.
    /// Until it is compiled, a forward-only automaton without captures,
    /// built from the same syntax, answers: `false` means no trigger
    /// match at all, so no line fires. `true` when unsure (it could not
    /// be built, or gave up on a text).
    pub fn triggers_match_any<'t>(
        &self,
        mask: u64,
        mut texts: impl Iterator<Item = &'t [u8]>,
    ) -> bool {
        if self.triggers.is_compiled() {
            return texts.any(|t| self.triggers.iter().any(|r| r.is_match(t)));
        }
        let subset = self.subset_mask(mask);
        if let Some(mask) = subset {
            let kept = self
                .trigger_subsets
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some((_, r)) = kept.iter().find(|(m, _)| *m == mask) {
                return texts.any(|t| r.is_match(t));
            }
        }
        let key = subset.unwrap_or(u64::MAX);
        let mut gates = self
            .trigger_gates
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let gate = match gates.iter().find(|(m, _)| *m == key) {
            Some((_, gate)) => gate.clone(),
            None => {
                let chosen = self.chosen_triggers(subset);
                let Ok(hirs) = chosen.map(parse).collect::<Result<Vec<Hir>, _>>() else {
                    return true;
                };
                let Some(dfa) = forward_dfa(&Hir::alternation(hirs)) else {
                    return true;
                };
                let cache = std::sync::Mutex::new(dfa.create_cache());
                let gate = std::sync::Arc::new(Gate { dfa, cache });
                if gates.len() < SUBSETS_KEPT {
                    gates.push((key, gate.clone()));
                }
                gate
            }
        };
        drop(gates);
        // Another spec of a batch may be using the kept states: then a
        // fresh set.
        let mut fresh;
        let mut kept = gate.cache.try_lock();
        let cache = match kept.as_deref_mut() {
            Ok(c) => c,
            Err(_) => {
                fresh = gate.dfa.create_cache();
                &mut fresh
            }
        };
        forward_matches_any(&gate.dfa, cache, texts).unwrap_or(true)
    }

    pub fn trigger(&self, lower: &str) -> Option<std::ops::Range<usize>> {
        let lower = lower.as_bytes();
        let m = self.triggers.iter().find_map(|r| r.find(lower))?;
        if self.exclude.is_match(lower) {
            return None;
        }
        Some(m.range())
    }
}

/// A forward lazy DFA for `hir` over an NFA without captures: a fraction
/// of what building the full regex costs. `None` when it is too large.
fn forward_dfa(hir: &Hir) -> Option<regex_automata::hybrid::dfa::DFA> {
    use regex_automata::hybrid;
    use regex_automata::nfa::thompson;
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(false)
                .shrink(false)
                .which_captures(thompson::WhichCaptures::None)
                .nfa_size_limit(Some(1 << 22)),
        )
        .build_from_hir(hir)
        .ok()?;
    hybrid::dfa::Builder::new()
        .configure(hybrid::dfa::Config::new().cache_capacity(2 * (1 << 20)))
        .build_from_nfa(nfa)
        .ok()
}

/// Whether `dfa` (see `forward_dfa`) matches one of `texts`; `None` when
/// it gave up.
fn forward_matches_any<'t>(
    dfa: &regex_automata::hybrid::dfa::DFA,
    cache: &mut regex_automata::hybrid::dfa::Cache,
    texts: impl Iterator<Item = &'t [u8]>,
) -> Option<bool> {
    use regex_automata::Input;
    for text in texts {
        if dfa
            .try_search_fwd(cache, &Input::new(text).earliest(true))
            .ok()?
            .is_some()
        {
            return Some(true);
        }
    }
    Some(false)
}

/// The `distinct` patterns, kept apart: the check needs to know which one
/// matched.
fn compile_distinct(def: &RuleDef) -> Result<Vec<Regex>, String> {
    def.distinct
        .iter()
        .map(|p| compile(p).map_err(|e| format!("rule `{}`: bad pattern `{p}`: {e}", def.id)))
        .collect()
}
