//! The `schema-example` check: a field table and a JSON example in the same
//! part of the document that disagree about a field. API references, PRDs
//! and RFC-style specs define a request or record twice: once as a table of
//! fields (name, type, notes) and once as an example body. When the two
//! disagree, client authors copy the example and the server validates
//! against the table, or the reverse. Checkable without knowing the domain:
//!
//! - **type:** the table says `int` and the example sends `"48h"`; the
//!   table says `boolean` and the example sends `"yes"`; the table says
//!   `array` and the example sends one string;
//! - **range:** the notes say "1-indexed" or "1–64" and the example sends 0
//!   or 65;
//! - **enum:** the type is an enum of backticked values and the example
//!   sends another one.
//!
//! A field is compared only when every table in the document that defines
//! its name gives it the same kind of type, and only with examples in the
//! same top-level section as the table, so a response's `status` is never
//! compared with a request's. A string holding a number, and `null`, never
//! contradict anything.

use super::checks::{Candidate, is_design};
use crate::ascii_first::AsciiFirst;
use crate::spec::{LineKind, Spec, table_cells};
use std::collections::HashMap;

/// How far (in lines) an example may be from the table it is compared with.
const MAX_DISTANCE: usize = 120;

/// A header cell that names the fields.
static NAME_HEADER: AsciiFirst = AsciiFirst::new(
    r"(?i)^\W*(?:field|name|field name|parameter|param|property|attribute|key|argument|column)s?\W*$",
);
/// A header cell that gives their types.
static TYPE_HEADER: AsciiFirst = AsciiFirst::new(r"(?i)^\W*(?:type|data ?type|value type)\W*$");
/// A header cell of a yes / no column, which holds no notes.
static FLAG_HEADER: AsciiFirst =
    AsciiFirst::new(r"(?i)^\W*(?:required|optional|req\.?|nullable|mandatory|in)\W*$");
/// Notes that make a number start at 1.
static ONE_BASED: AsciiFirst = AsciiFirst::new(
    r"(?i)\b(?:1|one)[- ](?:indexed|based)\b|\bstarts? (?:at|from) 1\b|\bfirst \w+ is 1\b|\bminimum(?: of)? 1\b|\bmin(?:imum)?:? 1\b|\bpositive integer\b",
);
/// A stated range of values: "1–64", "1-120", "between 1 and 64", "0 to
/// 100"; not a range of lengths or counts of something else ("1–63
/// chars").
static RANGE: AsciiFirst = AsciiFirst::new(
    r"(?i)(?:^|[\s(,;:])(?:between\s+)?(-?\d{1,9})\s*(?:–|—|-|\.\.|to|and)\s*(-?\d{1,9})\b(\s*[a-z]+)?",
);
/// Words after a range that make it about something other than the value.
static NOT_VALUE_UNIT: AsciiFirst = AsciiFirst::new(
    r"(?i)^\s*(?:chars?|characters?|bytes?|items?|elements?|entries|digits?|letters?|words?|lines?|signers?|values?|members?|kb|mb|gb|per|times)\b",
);
/// Backticked or quoted values in a cell.
static LISTED_VALUE: AsciiFirst = AsciiFirst::new(r#"`([^`\s]{1,60})`|"([^"\s]{1,60})""#);
/// A `"key": value` pair in a JSON example.
static PAIR: AsciiFirst = AsciiFirst::new(
    r#""([A-Za-z_][\w.-]{0,60})"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|\[|\{)"#,
);
/// An identifier in a name cell: `signers[].routing_order`, `timeout`.
static NAME: AsciiFirst =
    AsciiFirst::new(r"`([A-Za-z_][\w.\[\]-]{0,80})`|^([A-Za-z_][\w.\[\]-]{0,80})$");

/// The kind of value a table gives a field.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Integer,
    Number,
    Text,
    Boolean,
    List,
    Object,
    /// An enum of the listed values.
    OneOf(Vec<String>),
}

impl Kind {
    fn read(ty: &str, notes: &str) -> Option<Kind> {
        let t = ty.replace(['`', '*'], "").trim().to_ascii_lowercase();
        let base = t.split(['(', ',', ';']).next().unwrap_or("").trim();
        if base.ends_with("[]") || base.starts_with("array") || base.starts_with("list") {
            return Some(Kind::List);
        }
        if base.starts_with("map") || base == "object" || base.starts_with("dict") {
            return Some(Kind::Object);
        }
        if base == "enum" || base.starts_with("enum ") || base.starts_with("enum<") {
            let mut values: Vec<String> = LISTED_VALUE
                .captures_iter(&format!("{ty} {notes}"))
                .into_iter()
                .filter_map(|c| {
                    c.get(1)
                        .or_else(|| c.get(2))
                        .map(|m| m.as_str().to_string())
                })
                .collect();
            values.dedup();
            return (values.len() >= 2).then_some(Kind::OneOf(values));
        }
        Some(match base {
            "int" | "integer" | "int32" | "int64" | "uint" | "uint32" | "uint64" | "long" => {
                Kind::Integer
            }
            "number" | "float" | "double" | "float64" | "float32" => Kind::Number,
            "string" | "str" | "text" => Kind::Text,
            "bool" | "boolean" => Kind::Boolean,
            _ => return None,
        })
    }

    fn same_family(&self, other: &Kind) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// What the table says the field is: "an integer", "one of a, b".
    fn describe(&self) -> String {
        match self {
            Kind::Integer => "an integer".into(),
            Kind::Number => "a number".into(),
            Kind::Text => "a string".into(),
            Kind::Boolean => "a boolean".into(),
            Kind::List => "an array".into(),
            Kind::Object => "an object".into(),
            Kind::OneOf(values) => format!("one of {}", values.join(", ")),
        }
    }
}

/// A field as a table row defines it.
#[derive(Debug)]
struct Field {
    line: usize,
    /// Its full name as written (`fields[].page`).
    name: String,
    kind: Kind,
    min: Option<f64>,
    max: Option<f64>,
    /// The row's notes, for the finding.
    notes: String,
}

/// A value an example gives a key.
#[derive(Debug)]
enum Value {
    Text(String),
    Number(f64, bool),
    Boolean,
    Null,
    List,
    Object,
}

impl Value {
    fn read(raw: &str) -> Value {
        match raw {
            "true" | "false" => Value::Boolean,
            "null" => Value::Null,
            "[" => Value::List,
            "{" => Value::Object,
            s if s.starts_with('"') => Value::Text(s[1..s.len() - 1].to_string()),
            s => Value::Number(s.parse().unwrap_or(0.0), !s.contains(['.', 'e', 'E'])),
        }
    }

    fn describe(&self) -> String {
        match self {
            Value::Text(s) => format!("the string \"{s}\""),
            Value::Number(v, _) => format!("{v}"),
            Value::Boolean => "a boolean".into(),
            Value::Null => "null".into(),
            Value::List => "an array".into(),
            Value::Object => "an object".into(),
        }
    }
}

/// The last segment of a field's name: `fields[].page` → `page`.
fn leaf(name: &str) -> &str {
    let name = name.trim_end_matches("[]");
    name.rsplit('.')
        .next()
        .unwrap_or(name)
        .trim_end_matches("[]")
}

/// The section a table or example belongs to for comparison: its top-level
/// (level 1 or 2) ancestor.
fn top_section(spec: &Spec, line: usize) -> usize {
    let mut s = spec.lines[line - 1].section;
    while spec.sections[s].level > 2 {
        match spec.sections[s].parent {
            Some(p) => s = p,
            None => break,
        }
    }
    s
}

fn fields(spec: &Spec) -> Vec<Field> {
    let mut out = Vec::new();
    let mut n = 1;
    while n <= spec.lines.len() {
        let line = &spec.lines[n - 1];
        if line.kind != LineKind::Table {
            n += 1;
            continue;
        }
        let block = spec.block_lines(n);
        n = block.end;
        let header = table_cells(&line.text);
        let (Some(name_col), Some(type_col)) = (
            header.iter().position(|h| NAME_HEADER.is_match(h)),
            header.iter().position(|h| TYPE_HEADER.is_match(h)),
        ) else {
            continue;
        };
        for row_no in block.start + 1..block.end {
            let row = table_cells(&spec.lines[row_no - 1].text);
            if row
                .iter()
                .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
            {
                continue;
            }
            let (Some(name_cell), Some(ty)) = (row.get(name_col), row.get(type_col)) else {
                continue;
            };
            let notes = row
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    *i != name_col
                        && *i != type_col
                        && !header.get(*i).is_some_and(|h| FLAG_HEADER.is_match(h))
                })
                .map(|(_, c)| *c)
                .collect::<Vec<_>>()
                .join(" ");
            let Some(kind) = Kind::read(ty, &notes) else {
                continue;
            };
            let (min, max) = bounds(&kind, &notes);
            for c in NAME.captures_iter(name_cell) {
                let Some(m) = c.get(1).or_else(|| c.get(2)) else {
                    continue;
                };
                out.push(Field {
                    line: row_no,
                    name: m.as_str().to_string(),
                    kind: kind.clone(),
                    min,
                    max,
                    notes: notes.clone(),
                });
            }
        }
    }
    out
}

/// The smallest and largest value a numeric field's notes allow.
fn bounds(kind: &Kind, notes: &str) -> (Option<f64>, Option<f64>) {
    if !matches!(kind, Kind::Integer | Kind::Number) {
        return (None, None);
    }
    let mut min = ONE_BASED.is_match(notes).then_some(1.0);
    let mut max = None;
    for c in RANGE.captures_iter(notes) {
        if c.get(3)
            .is_some_and(|u| NOT_VALUE_UNIT.is_match(u.as_str()))
        {
            continue;
        }
        let (Ok(lo), Ok(hi)) = (c[1].parse::<f64>(), c[2].parse::<f64>()) else {
            continue;
        };
        if lo < hi {
            min = Some(min.map_or(lo, |m: f64| m.max(lo)));
            max = Some(hi);
            break;
        }
    }
    (min, max)
}

/// Why `value` cannot be what `field` says, if it cannot.
fn conflict(field: &Field, value: &Value) -> Option<String> {
    let kind = &field.kind;
    let type_clash = match (kind, value) {
        (_, Value::Null) => false,
        // A number in a string is a common encoding (int64 as text).
        (Kind::Integer | Kind::Number, Value::Text(s)) => s.trim().parse::<f64>().is_err(),
        (Kind::Integer, Value::Number(_, integral)) => !integral,
        (Kind::Number, Value::Number(..)) => false,
        (Kind::Text, Value::Text(_)) => false,
        (Kind::Boolean, Value::Boolean) => false,
        (Kind::Boolean, Value::Text(s)) => !matches!(s.as_str(), "true" | "false"),
        (Kind::List, Value::List) => false,
        (Kind::Object, Value::Object) => false,
        (Kind::OneOf(values), Value::Text(s)) => !values.iter().any(|v| v == s),
        (Kind::OneOf(_), _) => false,
        _ => true,
    };
    if type_clash {
        return Some(format!(
            "the field table says `{}` is {}, but the example sends {}",
            field.name,
            kind.describe(),
            value.describe()
        ));
    }
    if let Value::Number(v, _) = value
        && (field.min.is_some_and(|m| *v < m) || field.max.is_some_and(|m| *v > m))
    {
        return Some(format!(
            "the field table allows `{}` only {} (\"{}\"), but the example sends {v}",
            field.name,
            match (field.min, field.max) {
                (Some(lo), Some(hi)) => format!("from {lo} to {hi}"),
                (Some(lo), None) => format!("from {lo} up"),
                (None, Some(hi)) => format!("up to {hi}"),
                (None, None) => "within its stated range".to_string(),
            },
            crate::offline::attacker::excerpt(&field.notes),
        ));
    }
    None
}

pub fn run(spec: &Spec) -> Vec<Candidate> {
    let fields = fields(spec);
    if fields.is_empty() {
        return Vec::new();
    }
    // A name two tables give different kinds of type is ambiguous.
    let mut by_leaf: HashMap<&str, Vec<&Field>> = HashMap::new();
    for f in &fields {
        by_leaf.entry(leaf(&f.name)).or_default().push(f);
    }
    by_leaf.retain(|_, fs| fs.iter().all(|f| f.kind.same_family(&fs[0].kind)));
    let mut out: Vec<Candidate> = Vec::new();
    for line in &spec.lines {
        if line.kind != LineKind::Code || !is_design(spec, line.number) {
            continue;
        }
        for c in PAIR.captures_iter(&line.text) {
            let Some(defs) = by_leaf.get(leaf(&c[1])) else {
                continue;
            };
            let value = Value::read(&c[2]);
            let top = top_section(spec, line.number);
            // Every definition in reach must disagree: a second table that
            // allows the value (a response's own field) answers it.
            let clashes: Option<Vec<(&Field, String)>> = defs
                .iter()
                .filter(|f| {
                    top_section(spec, f.line) == top && f.line.abs_diff(line.number) <= MAX_DISTANCE
                })
                .map(|f| conflict(f, &value).map(|why| (*f, why)))
                .collect();
            let Some((field, why)) = clashes.and_then(|c| c.into_iter().next()) else {
                continue;
            };
            let what = format!("`{}`", field.name);
            if out.iter().any(|o| o.what == what) {
                continue;
            }
            out.push(Candidate {
                first: field.line.min(line.number),
                last: field.line.max(line.number),
                what,
                note: format!(
                    "Line {} and line {} contradict each other: {why}.",
                    field.line, line.number
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn patterns_read_non_ascii_text_as_unicode_does(text in crate::ascii_first::sample_texts()) {
            for p in [&ONE_BASED, &NOT_VALUE_UNIT] {
                proptest::prop_assert!(p.agrees_on(&text), "{text:?}");
            }
        }
    }

    fn found(text: &str) -> Vec<Candidate> {
        run(&Spec::parse(None, text.to_string()))
    }

    const TABLE: &str = "# Jobs API\n\n## Create a job\n\n| Field | Type | Required | Notes |\n|---|---|---|---|\n| `timeout` | int | no | Runtime limit in seconds. |\n| `page` | integer | yes | page number, 1-indexed |\n| `workers` | int | yes | Worker count, 1–64. |\n| `name` | string | yes | 1–63 chars. |\n| `tier` | enum | no | `gold` (default), `silver` |\n| `tags` | string[] | no | Labels. |\n\nExample:\n\n```json\n{\n";

    fn spec_with(body: &str) -> String {
        format!("{TABLE}{body}\n}}\n```\n")
    }

    #[test]
    fn a_string_where_the_table_says_int_is_found() {
        let c = found(&spec_with("  \"timeout\": \"48h\","));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].first, c[0].last), (7, 18));
        assert!(c[0].note.contains("an integer"), "{}", c[0].note);
        assert!(c[0].note.contains("\"48h\""), "{}", c[0].note);
    }

    #[test]
    fn values_outside_the_stated_range_are_found() {
        assert_eq!(found(&spec_with("  \"page\": 0,")).len(), 1);
        assert_eq!(found(&spec_with("  \"workers\": 65,")).len(), 1);
        assert_eq!(found(&spec_with("  \"tier\": \"bronze\",")).len(), 1);
        assert_eq!(found(&spec_with("  \"tags\": \"a\",")).len(), 1);
    }

    #[test]
    fn values_the_table_allows_are_not() {
        for ok in [
            "  \"timeout\": 3600,",
            "  \"timeout\": \"3600\",",
            "  \"timeout\": null,",
            "  \"page\": 1,",
            "  \"workers\": 64,",
            // The range is of its length, not its value.
            "  \"name\": \"a-very-long-name-but-a-string\",",
            "  \"tier\": \"silver\",",
            "  \"tags\": [\"a\"],",
            "  \"unknown\": \"anything\",",
        ] {
            assert!(found(&spec_with(ok)).is_empty(), "{ok}");
        }
    }

    #[test]
    fn an_example_in_another_top_level_section_is_not_compared() {
        let text = format!(
            "{}\n## Another API\n\n```json\n{{\"timeout\": \"48h\"}}\n```\n",
            TABLE.trim_end_matches("Example:\n\n```json\n{\n")
        );
        assert!(found(&text).is_empty());
        // Under the same top-level section it is compared.
        assert_eq!(found(&text.replace("## Another", "### Another")).len(), 1);
    }

    #[test]
    fn a_name_two_tables_type_differently_is_left_alone() {
        let clash = spec_with("  \"timeout\": \"48h\",");
        let other = "| Name | Type | Notes |\n|---|---|---|\n| `timeout` | string | A duration such as `48h`. |\n";
        // A second table next to the example allows its value.
        let near = clash.replace("Example:", &format!("{other}\nExample:"));
        assert!(found(&near).is_empty());
        // A second table in another section, out of the example's reach,
        // still makes the name ambiguous.
        let far = format!("{clash}\n## Job status\n\n{other}");
        assert!(found(&far).is_empty());
        // The same section without a type makes no such table.
        assert_eq!(found(&far.replace("| string |", "| - |")).len(), 1);
    }
}
