//! Secret redaction: applied to every prompt before it leaves the machine
//! (and so to everything saved under `runs/`). The seed's SECRET_PATTERNS
//! plus connection-string passwords, bearer tokens, bare AWS key ids, modern
//! GitHub / OpenAI / Anthropic / Google / Slack tokens, and the literal values
//! of the API keys this run uses. It must never widen what it matches into
//! ordinary prose: every pattern needs a key-like shape or a `name = value`.

use regex::{Captures, Regex};
use std::sync::LazyLock;

/// Text with secrets replaced, and how many were replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub count: usize,
}

struct Pattern {
    re: Regex,
    /// `$name` references allowed (regex replacement syntax).
    replacement: &'static str,
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |re: &str, replacement: &'static str| Pattern {
        re: Regex::new(re).expect("redaction pattern compiles"),
        replacement,
    };
    vec![
        // Seed: private key blocks first, so nothing below splits one.
        p(
            r"-----BEGIN [A-Z ]+ PRIVATE KEY-----[\s\S]+?-----END [A-Z ]+ PRIVATE KEY-----",
            "[REDACTED_PRIVATE_KEY]",
        ),
        // Passwords inside connection strings: scheme://user:PASSWORD@host.
        p(
            r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]{1,})(@)",
            "${1}[REDACTED_PASSWORD]${3}",
        ),
        // Seed patterns (name = value forms).
        p(
            r#"(?i)(api[_-]?key|apikey)\s*[=:]\s*["']?[\w-]{20,}["']?"#,
            "[REDACTED_API_KEY]",
        ),
        p(
            r#"(?i)(password|passwd|pwd)\s*[=:]\s*["']?[^\s"']{8,}["']?"#,
            "[REDACTED_PASSWORD]",
        ),
        p(
            r#"(?i)(aws_access_key_id)\s*[=:]\s*["']?[A-Z0-9]{20}["']?"#,
            "[REDACTED_AWS_KEY]",
        ),
        p(
            r#"(?i)(aws_secret_access_key)\s*[=:]\s*["']?[\w/+=]{40}["']?"#,
            "[REDACTED_AWS_SECRET]",
        ),
        p(
            r#"(?i)(secret|token)\s*[=:]\s*["']?[\w-]{20,}["']?"#,
            "[REDACTED_SECRET]",
        ),
        // Bearer tokens in headers or examples.
        p(
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*",
            "Bearer [REDACTED_TOKEN]",
        ),
        // Key shapes that need no `name =` in front.
        p(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "[REDACTED_AWS_KEY]"),
        p(
            r"\bgh[pousr]_[A-Za-z0-9_]{36,}\b",
            "[REDACTED_GITHUB_TOKEN]",
        ),
        p(
            r"\bgithub_pat_[A-Za-z0-9_]{22,}\b",
            "[REDACTED_GITHUB_TOKEN]",
        ),
        p(r"\bsk-[A-Za-z0-9]{48}\b", "[REDACTED_OPENAI_KEY]"),
        p(
            r"\bsk-(?:proj|ant|or|svcacct|admin)-[A-Za-z0-9_-]{20,}",
            "[REDACTED_API_KEY]",
        ),
        p(r"\bAIza[0-9A-Za-z_-]{35}\b", "[REDACTED_GOOGLE_KEY]"),
        p(
            r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b",
            "[REDACTED_SLACK_TOKEN]",
        ),
    ]
});

/// Redacts the built-in patterns.
pub fn redact(text: &str) -> Redacted {
    redact_with(text, &[])
}

/// Redacts the built-in patterns and any of `literals` (e.g. the API keys
/// in this process's environment) found verbatim.
pub fn redact_with(text: &str, literals: &[String]) -> Redacted {
    let mut count = 0;
    let mut out = text.to_string();
    for lit in literals.iter().filter(|l| l.len() >= 8) {
        let n = out.matches(lit.as_str()).count();
        if n > 0 {
            count += n;
            out = out.replace(lit.as_str(), "[REDACTED_API_KEY]");
        }
    }
    for p in PATTERNS.iter() {
        if !p.re.is_match(&out) {
            continue;
        }
        out =
            p.re.replace_all(&out, |caps: &Captures| {
                count += 1;
                let mut s = String::new();
                caps.expand(p.replacement, &mut s);
                s
            })
            .into_owned();
    }
    Redacted { text: out, count }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(input: &str, secret: &str, marker: &str) {
        let r = redact(input);
        assert!(!r.text.contains(secret), "{input} -> {}", r.text);
        assert!(r.text.contains(marker), "{input} -> {}", r.text);
        assert_eq!(r.count, 1, "{input} -> {}", r.text);
    }

    #[test]
    fn each_pattern_redacts() {
        one(
            "api_key = abcdefghijklmnopqrstuvwx",
            "abcdefghijklmnopqrstuvwx",
            "[REDACTED_API_KEY]",
        );
        one(
            "password: hunter2hunter2",
            "hunter2hunter2",
            "[REDACTED_PASSWORD]",
        );
        one(
            "token=zzzzzzzzzzzzzzzzzzzzzzzzz",
            "zzzzzzzzzzzzzzzzzzzzzzzzz",
            "[REDACTED_SECRET]",
        );
        one(
            "aws_access_key_id = AKIAABCDEFGHIJKLMNOP",
            "AKIAABCDEFGHIJKLMNOP",
            "[REDACTED_AWS_KEY]",
        );
        one(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "[REDACTED_AWS_SECRET]",
        );
        let gh = format!("ghp_{}", "a".repeat(36));
        one(&format!("use {gh} here"), &gh, "[REDACTED_GITHUB_TOKEN]");
        let sk = format!("sk-{}", "B".repeat(48));
        one(&format!("key {sk} here"), &sk, "[REDACTED_OPENAI_KEY]");
        one(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
            "[REDACTED_PRIVATE_KEY]",
        );
        one(
            "DATABASE_URL=postgres://app:s3cretPass@db.internal:5432/app",
            "s3cretPass",
            "postgres://app:[REDACTED_PASSWORD]@db.internal",
        );
        one(
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
            "eyJhbGciOiJIUzI1NiJ9",
            "Bearer [REDACTED_TOKEN]",
        );
        one(
            "the key AKIAIOSFODNN7EXAMPLE leaked",
            "AKIAIOSFODNN7EXAMPLE",
            "[REDACTED_AWS_KEY]",
        );
        let ant = format!("sk-ant-api03-{}", "x".repeat(30));
        one(&format!("ANTHROPIC={ant}"), &ant, "[REDACTED_API_KEY]");
        let g = format!("AIza{}", "c".repeat(35));
        one(&format!("gemini {g}"), &g, "[REDACTED_GOOGLE_KEY]");
    }

    #[test]
    fn ordinary_prose_is_untouched() {
        let text = "The password reset endpoint issues a token to the user.\n\
                    Connect to https://example.com/path and use the API key header.";
        let r = redact(text);
        assert_eq!(r.count, 0);
        assert_eq!(r.text, text);
    }

    #[test]
    fn literal_values_are_redacted() {
        let r = redact_with("my key is plainvalue123", &["plainvalue123".to_string()]);
        assert_eq!(r.count, 1);
        assert!(!r.text.contains("plainvalue123"));
    }
}
