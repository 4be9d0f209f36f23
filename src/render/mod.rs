//! Renderers: turn a `Verdict` into text, JSON, Markdown or SARIF on any writer.
//! They are the only code that formats results for people.

pub mod json;
pub mod markdown;
pub mod memory;
pub mod sarif;
pub mod text;

use crate::concern::Severity;

/// Output format for a single run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
}

/// Minimal ANSI styling, off unless the caller enables it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }

    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }

    pub fn severity(&self, sev: Severity) -> String {
        let code = match sev {
            Severity::High => "1;31",
            Severity::Medium => "33",
            Severity::Low => "36",
        };
        self.wrap(code, sev.as_str())
    }

    pub fn outcome(&self, s: &str, good: bool) -> String {
        self.wrap(if good { "1;32" } else { "1;31" }, s)
    }
}

/// `$0.00 (offline engine)` or `$1.2345`.
pub fn cost_line(verdict: &crate::verdict::Verdict) -> String {
    let offline = verdict
        .models
        .attack
        .iter()
        .chain(&verdict.models.eval)
        .all(|m| m.starts_with("offline"));
    if offline {
        "$0.00 (offline engine)".to_string()
    } else if verdict.stats.cost_usd == 0.0 {
        "$0.00 (all CLI tools or free models)".to_string()
    } else {
        format!("${:.4}", verdict.stats.cost_usd)
    }
}

/// "1 concern", "2 concerns": a count with its noun in the right number.
/// `noun` is the singular; the plural adds "s", "es" after s, x, ch, sh,
/// and turns a final consonant + y into "ies".
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        return format!("{n} {stem}ies");
    }
    let es = ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e));
    format!("{n} {noun}{}", if es { "es" } else { "s" })
}

/// What the run checked, in one sentence, for a PASS worth reading:
/// "5 adversaries raised 12 concerns; 10 were dismissed with cited lines, 2
/// filtered as already resolved."
pub fn checked_summary(v: &crate::verdict::Verdict) -> String {
    use crate::concern::Status;
    let n = |st: Status| v.concerns.iter().filter(|c| c.status == st).count() as u64;
    let dismissed_cited = v
        .concerns
        .iter()
        .filter(|c| c.status == Status::Dismissed && !c.dismissal_cites().is_empty())
        .count() as u64;
    let raised = v.stats.attack.total;
    let mut s = format!(
        "{} ({}) raised {}",
        count(v.adversaries.len() as u64, "adversary"),
        v.adversaries.join(", "),
        count(raised, "concern")
    );
    if raised > 0 {
        s.push_str(&format!("; {dismissed_cited} dismissed with cited lines"));
        let uncited = n(Status::Dismissed) - dismissed_cited;
        if uncited > 0 {
            s.push_str(&format!(", {uncited} dismissed without a citation"));
        }
        if v.stats.filter.store {
            s.push_str(&format!(
                ", {} filtered as already resolved",
                n(Status::Filtered)
            ));
        }
        let deferred = n(Status::Deferred);
        if deferred > 0 {
            s.push_str(&format!(", {deferred} deferred"));
        }
    }
    s.push('.');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_agree_in_number() {
        assert_eq!(super::count(1, "concern"), "1 concern");
        assert_eq!(super::count(0, "concern"), "0 concerns");
        assert_eq!(super::count(3, "batch"), "3 batches");
        assert_eq!(super::count(2, "dismissal"), "2 dismissals");
        assert_eq!(super::count(5, "adversary"), "5 adversaries");
        assert_eq!(super::count(2, "day"), "2 days");
    }
}
