//! The personas and protocols a run uses: the built-in ones embedded in the
//! binary with `include_str!`, plus any `*.toml` from `--personas-dir` /
//! `--protocols-dir`, which add new files or override built-ins by name.

use crate::error::DataError;
use crate::persona::{Persona, PersonaDef};
use crate::protocol::Protocol;
use crate::rule::Origin;
use std::collections::BTreeMap;
use std::path::Path;

/// The five adversaries, in the order the seed lists them.
pub const DEFAULT_ADVERSARIES: [&str; 5] = [
    "paranoid_security",
    "burned_oncall",
    "lazy_developer",
    "pedantic_nitpicker",
    "asshole_loner",
];

pub const FINAL_BOSS: &str = "ux_architect";

/// Built-in data files: (path as shown in errors, contents).
pub const EMBEDDED_PERSONAS: &[(&str, &str)] = &[
    (
        "personas/paranoid_security.toml",
        include_str!("../personas/paranoid_security.toml"),
    ),
    (
        "personas/burned_oncall.toml",
        include_str!("../personas/burned_oncall.toml"),
    ),
    (
        "personas/lazy_developer.toml",
        include_str!("../personas/lazy_developer.toml"),
    ),
    (
        "personas/pedantic_nitpicker.toml",
        include_str!("../personas/pedantic_nitpicker.toml"),
    ),
    (
        "personas/asshole_loner.toml",
        include_str!("../personas/asshole_loner.toml"),
    ),
    (
        "personas/ux_architect.toml",
        include_str!("../personas/ux_architect.toml"),
    ),
];

pub const EMBEDDED_PROTOCOLS: &[(&str, &str)] = &[
    (
        "protocols/paranoid_security.toml",
        include_str!("../protocols/paranoid_security.toml"),
    ),
    (
        "protocols/burned_oncall.toml",
        include_str!("../protocols/burned_oncall.toml"),
    ),
    (
        "protocols/lazy_developer.toml",
        include_str!("../protocols/lazy_developer.toml"),
    ),
    (
        "protocols/pedantic_nitpicker.toml",
        include_str!("../protocols/pedantic_nitpicker.toml"),
    ),
    (
        "protocols/asshole_loner.toml",
        include_str!("../protocols/asshole_loner.toml"),
    ),
];

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub personas: BTreeMap<String, Persona>,
    pub protocols: BTreeMap<String, Protocol>,
    /// One trigger prefilter over every adversary's rules, built on first
    /// use (see `adversary_prefilter`).
    adversary_prefilter: std::sync::OnceLock<crate::trigger_prefilter::SharedPrefilter>,
}

impl Catalog {
    /// The trigger prefilter of every adversary persona at once: one scan
    /// of a spec gives each rule its candidate lines. A persona added or
    /// changed after it was built is not served by it (its own
    /// `Persona::prefilter` is).
    pub fn adversary_prefilter(&self) -> &crate::trigger_prefilter::SharedPrefilter {
        self.adversary_prefilter.get_or_init(|| {
            crate::trigger_prefilter::SharedPrefilter::new(
                self.personas.values().filter(|p| !p.is_final_boss),
            )
        })
    }

    /// The built-in catalog only.
    pub fn builtin() -> Result<Catalog, DataError> {
        Catalog::load(None, None)
    }

    pub fn load(
        personas_dir: Option<&Path>,
        protocols_dir: Option<&Path>,
    ) -> Result<Catalog, DataError> {
        let mut cat = Catalog::default();
        for (file, text) in EMBEDDED_PERSONAS {
            cat.add_persona(file, text, Origin::Embedded)?;
        }
        for (file, text) in EMBEDDED_PROTOCOLS {
            cat.add_protocol(file, text)?;
        }
        if let Some(dir) = personas_dir {
            // A user file may override a built-in persona by name, but two
            // user files naming the same persona is a mistake: say which.
            let mut from: BTreeMap<String, String> = BTreeMap::new();
            for (file, text) in read_dir_toml(dir)? {
                let name = cat.add_persona(&file, &text, Origin::User)?;
                if let Some(first) = from.insert(name.clone(), file.clone()) {
                    return Err(DataError::Invalid {
                        file,
                        message: format!("persona `{name}` is also defined in {first}"),
                    });
                }
            }
        }
        if let Some(dir) = protocols_dir {
            for (file, text) in read_dir_toml(dir)? {
                cat.add_protocol(&file, &text)?;
            }
        }
        Ok(cat)
    }

    /// Adds (or overrides) a persona; returns its name.
    fn add_persona(&mut self, file: &str, text: &str, origin: Origin) -> Result<String, DataError> {
        let def: PersonaDef = parse_toml(file, text)?;
        let persona = Persona::from_def(def, origin).map_err(|message| DataError::Invalid {
            file: file.to_string(),
            message: one_line(&message),
        })?;
        let name = persona.name.clone();
        self.personas.insert(name.clone(), persona);
        Ok(name)
    }

    fn add_protocol(&mut self, file: &str, text: &str) -> Result<(), DataError> {
        let mut p: Protocol = parse_toml(file, text)?;
        let compile_all = |phrases: &[String]| -> Result<Vec<crate::rule::Regex>, DataError> {
            phrases
                .iter()
                .map(|phrase| {
                    crate::rule::compile(phrase).map_err(|e| DataError::Invalid {
                        file: file.to_string(),
                        message: one_line(&format!("bad pattern `{phrase}`: {e}")),
                    })
                })
                .collect()
        };
        p.offline.invalid_re = compile_all(&p.offline.invalid_phrases)?;
        p.offline.justification_re = compile_all(&p.offline.require_justification)?;
        self.protocols.insert(p.name.clone(), p);
        Ok(())
    }

    pub fn persona(&self, name: &str) -> Option<&Persona> {
        self.personas.get(name)
    }

    pub fn protocol(&self, name: &str) -> Option<&Protocol> {
        self.protocols.get(name)
    }

    /// Names of the adversaries (not the final boss), sorted.
    pub fn adversary_names(&self) -> Vec<&str> {
        self.personas
            .values()
            .filter(|p| !p.is_final_boss)
            .map(|p| p.name.as_str())
            .collect()
    }
}

fn read_dir_toml(dir: &Path) -> Result<Vec<(String, String)>, DataError> {
    let entries = std::fs::read_dir(dir).map_err(|source| DataError::Io {
        file: dir.display().to_string(),
        source,
    })?;
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            // Regular files only (a FIFO would block forever), of bounded size.
            let text = crate::fsutil::read_regular_text(
                &p,
                crate::fsutil::MAX_DATA_FILE_BYTES,
                crate::fsutil::Links::Follow,
            )
            .map_err(|e| DataError::Invalid {
                file: p.display().to_string(),
                message: format!("cannot read: {e}"),
            })?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}

/// A regex error spans several lines (the pattern, a caret under the
/// problem, the reason); errors here are one line: `...: unclosed group at
/// column 4 of the pattern`.
pub fn one_line(message: &str) -> String {
    if !message.contains('\n') {
        return message.to_string();
    }
    let lines: Vec<&str> = message.lines().collect();
    let reason = lines
        .iter()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .unwrap_or_else(|| lines.last().map_or("", |l| l.trim()));
    // The caret line: spaces then `^`; the pattern line above it shares its
    // indentation, so the caret's offset from that indentation is the column.
    let column = lines.iter().enumerate().find_map(|(i, l)| {
        let t = l.trim_start();
        if i == 0 || t.is_empty() || !t.chars().all(|c| c == '^') {
            return None;
        }
        let above = lines[i - 1];
        let indent = above.len() - above.trim_start().len();
        Some(l.len() - t.len() - indent + 1)
    });
    let head = lines[0].trim_end_matches(':').trim_end();
    let head = head
        .strip_suffix("regex parse error")
        .unwrap_or(head)
        .trim_end();
    let head = head.trim_end_matches(':').trim_end();
    match column {
        Some(c) => format!("{head}: {reason} at column {c} of the pattern"),
        None => format!("{head}: {reason}"),
    }
}

fn parse_toml<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, DataError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
                (line, col)
            })
            .unwrap_or((1, 1));
        DataError::Syntax {
            file: file.to_string(),
            line,
            column,
            message: e.message().to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_has_five_adversaries_and_final_boss() {
        let c = Catalog::builtin().unwrap();
        for name in DEFAULT_ADVERSARIES {
            let p = c.persona(name).unwrap_or_else(|| panic!("missing {name}"));
            assert!(!p.is_final_boss);
            assert!(!p.rules.is_empty(), "{name} has no rules");
            assert!(c.protocol(name).is_some(), "no protocol for {name}");
        }
        assert!(c.persona(FINAL_BOSS).unwrap().is_final_boss);
        assert_eq!(c.adversary_names().len(), 5);
    }

    #[test]
    fn embedded_files_match_the_folders() {
        for (file, text) in EMBEDDED_PERSONAS.iter().chain(EMBEDDED_PROTOCOLS) {
            let on_disk = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
            )
            .unwrap();
            assert_eq!(&on_disk, text, "{file}");
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("personas");
        let count = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "toml")
            })
            .count();
        assert_eq!(
            count,
            EMBEDDED_PERSONAS.len(),
            "a persona file is not embedded"
        );
    }

    #[test]
    fn prompts_are_verbatim_from_the_seed() {
        let c = Catalog::builtin().unwrap();
        assert!(
            c.persona("paranoid_security")
                .unwrap()
                .prompt
                .contains("Find security holes. Assume attackers are clever and persistent.")
        );
        assert!(
            c.persona("burned_oncall")
                .unwrap()
                .prompt
                .contains("You've been paged at 3am")
        );
    }

    #[test]
    fn malformed_override_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("bad.toml"),
            "name = \"x\"\nprefix = \"X\"\ndescription = \"d\"\nprompt = oops\n",
        )
        .unwrap();
        let err = Catalog::load(Some(dir.path()), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.toml"), "{err}");
        assert!(err.contains("line 4"), "{err}");
    }

    #[test]
    fn override_replaces_builtin_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "name = \"lazy_developer\"\nprefix = \"LAZY\"\ndescription = \"mine\"\nprompt = \"p\"\n\n[[rules]]\nid = \"r\"\ntitle = \"t\"\nseverity = \"low\"\ntriggers = [\"frobnicate\"]\nmissing = \"m\"\nimpact = \"i\"\n",
        )
        .unwrap();
        let c = Catalog::load(Some(dir.path()), None).unwrap();
        assert_eq!(c.persona("lazy_developer").unwrap().description, "mine");
        assert_eq!(c.persona("lazy_developer").unwrap().rules.len(), 1);
    }

    #[test]
    fn yields_to_must_name_another_rule_of_the_pack() {
        let rule = |id: &str, yields: &str| {
            format!(
                "[[rules]]\nid = \"{id}\"\ntitle = \"t\"\nseverity = \"low\"\nyields_to = [{yields}]\ntriggers = [\"frobnicate\"]\nmissing = \"m\"\nimpact = \"i\"\n"
            )
        };
        let head = "name = \"lazy_developer\"\nprefix = \"LAZY\"\ndescription = \"mine\"\nprompt = \"p\"\n\n";
        let load = |body: String| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("mine.toml"), format!("{head}{body}")).unwrap();
            Catalog::load(Some(dir.path()), None).map(|c| {
                c.persona("lazy_developer").unwrap().rules[0]
                    .def
                    .yields_to
                    .clone()
            })
        };
        let ok = load(rule("broad", "\"narrow\"") + &rule("narrow", ""));
        assert_eq!(ok.unwrap(), vec!["narrow".to_string()]);
        for bad in [rule("broad", "\"missing\""), rule("broad", "\"broad\"")] {
            let err = load(bad).unwrap_err().to_string();
            assert!(err.contains("yields_to"), "{err}");
            assert!(err.contains("mine.toml"), "{err}");
        }
    }
}
