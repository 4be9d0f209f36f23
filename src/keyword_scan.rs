//! Counting keyword categories in a spec in one aho-corasick pass, ASCII
//! case-insensitively and at word boundaries (`auth` is not in `author`).
//! Shared by complexity triage and the suggester.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// A named list of keywords.
pub struct Category {
    pub name: &'static str,
    pub keywords: &'static [&'static str],
}

/// Per category: the distinct keywords found, first seen first, and the
/// number of mentions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hits {
    pub keywords: Vec<String>,
    pub mentions: usize,
}

pub struct Scanner {
    ac: Option<AhoCorasick>,
    /// Per pattern: (category index, keyword).
    patterns: Vec<(usize, &'static str)>,
    categories: usize,
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Scanner {
    pub fn new(categories: &[Category]) -> Scanner {
        let patterns: Vec<(usize, &'static str)> = categories
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.keywords.iter().map(move |k| (i, *k)))
            .collect();
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(patterns.iter().map(|(_, k)| k.as_bytes()))
            .ok();
        Scanner {
            ac,
            patterns,
            categories: categories.len(),
        }
    }

    /// Hits per category, in the categories' order. Linear in the text.
    pub fn scan(&self, text: &str) -> Vec<Hits> {
        let mut out = vec![Hits::default(); self.categories];
        let Some(ac) = &self.ac else {
            return out;
        };
        let bytes = text.as_bytes();
        for m in ac.find_overlapping_iter(bytes) {
            let (cat, kw) = self.patterns[m.pattern().as_usize()];
            let k = kw.as_bytes();
            if is_word(k[0]) && m.start() > 0 && is_word(bytes[m.start() - 1]) {
                continue;
            }
            if is_word(k[k.len() - 1]) && m.end() < bytes.len() && is_word(bytes[m.end()]) {
                continue;
            }
            let h = &mut out[cat];
            h.mentions += 1;
            if !h.keywords.iter().any(|x| x == kw) {
                h.keywords.push(kw.to_string());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_whole_words_per_category() {
        let s = Scanner::new(&[
            Category {
                name: "auth",
                keywords: &["auth", "login", "api key"],
            },
            Category {
                name: "money",
                keywords: &["refund"],
            },
        ]);
        let h = s.scan("The author logs in (login) with an API key; Auth is OAuth-free. LOGIN");
        assert_eq!(h[0].keywords, ["login", "api key", "auth"]);
        assert_eq!(h[0].mentions, 4);
        assert_eq!(h[1], Hits::default());
    }
}
