//! Secret redaction: applied to every prompt before it leaves the machine
//! (and so to everything saved under `runs/`), and to every model reply
//! before it is parsed, saved or printed. The rule families follow gitleaks
//! and detect-secrets: private key blocks (PKCS#1, PKCS#8, OpenSSH, PGP),
//! `name = value` and JSON `"name": "value"` credentials, connection-string
//! passwords, `Authorization` headers (Bearer, Basic, Token), and key shapes
//! that need no name (AWS, GitHub, GitLab, OpenAI, Anthropic, Google,
//! Slack tokens and webhooks, Stripe, SendGrid, npm, PyPI, Hugging Face,
//! Twilio, Mailgun, Shopify, DigitalOcean, JWTs, Azure `AccountKey=`), plus
//! a high-entropy check for bare base64 strings (an AWS secret key in a
//! table cell) and the literal value of every key-like environment
//! variable. It must never widen what it matches into ordinary prose: every
//! pattern needs a key-like shape, a `name = value`, or high entropy.

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
    /// Redact only when the `value` group (else the whole match) has at
    /// least this Shannon entropy in bits per character...
    min_entropy: f64,
    /// ...and mixes upper case, lower case and digits.
    mixed: bool,
}

/// Names under which a value is a credential (`client_secret`, `API-KEY`).
const SECRET_NAME: &str = r"[A-Za-z0-9_.-]*(?:secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth[_-]?key|signing[_-]?key)[A-Za-z0-9_.-]*";
const PASSWORD_NAME: &str = r"[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd)[A-Za-z0-9_.-]*";

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    let p = |re: &str, replacement: &'static str| Pattern {
        re: Regex::new(re).expect("redaction pattern compiles"),
        replacement,
        min_entropy: 0.0,
        mixed: false,
    };
    let e = |re: &str, replacement: &'static str, min_entropy: f64, mixed: bool| Pattern {
        re: Regex::new(re).expect("redaction pattern compiles"),
        replacement,
        min_entropy,
        mixed,
    };
    vec![
        // Private key blocks first, so nothing below splits one: PKCS#8
        // (`BEGIN PRIVATE KEY`), RSA/EC/DSA/OPENSSH/ENCRYPTED, PGP blocks.
        p(
            r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----",
            "[REDACTED_PRIVATE_KEY]",
        ),
        // A block cut off before its END line: everything to the end.
        p(
            r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*",
            "[REDACTED_PRIVATE_KEY]",
        ),
        // Webhook URLs carry their secret in the path.
        p(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{16,}",
            "[REDACTED_SLACK_WEBHOOK]",
        ),
        p(
            r"https://[a-z0-9-]+\.webhook\.office\.com/[A-Za-z0-9@/_+-]{20,}",
            "[REDACTED_WEBHOOK]",
        ),
        p(
            r"https://discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
            "[REDACTED_WEBHOOK]",
        ),
        // Passwords inside connection strings: scheme://user:PASSWORD@host.
        p(
            r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]{1,})(@)",
            "${1}[REDACTED_PASSWORD]${3}",
        ),
        // Azure storage / service bus connection strings.
        p(
            r"(?i)\b((?:AccountKey|SharedAccessKey|SharedAccessSignature)=)[A-Za-z0-9+/=%&:_.-]{16,}",
            "${1}[REDACTED_AZURE_KEY]",
        ),
        // Authorization headers: Basic, Bearer, Token, Digest credentials.
        p(
            r"(?i)\b(authorization[\x22']?\s*[:=]\s*[\x22']?(?:basic|token|digest|apikey)\s+)[A-Za-z0-9+/=._~-]{6,}",
            "${1}[REDACTED_TOKEN]",
        ),
        p(
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*",
            "Bearer [REDACTED_TOKEN]",
        ),
        // Key shapes that need no `name =` in front.
        p(
            r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{8,}",
            "[REDACTED_JWT]",
        ),
        p(
            r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b",
            "[REDACTED_AWS_KEY]",
        ),
        p(
            r"\bgh[pousr]_[A-Za-z0-9_]{36,}\b",
            "[REDACTED_GITHUB_TOKEN]",
        ),
        p(
            r"\bgithub_pat_[A-Za-z0-9_]{22,}\b",
            "[REDACTED_GITHUB_TOKEN]",
        ),
        p(
            r"\bgl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat)-[A-Za-z0-9_-]{20,}",
            "[REDACTED_GITLAB_TOKEN]",
        ),
        p(r"\bsk-[A-Za-z0-9]{48}\b", "[REDACTED_OPENAI_KEY]"),
        p(
            r"\bsk-(?:proj|ant|or|svcacct|admin)-[A-Za-z0-9_-]{20,}",
            "[REDACTED_API_KEY]",
        ),
        p(r"\bAIza[0-9A-Za-z_-]{35}\b", "[REDACTED_GOOGLE_KEY]"),
        p(r"\bya29\.[0-9A-Za-z_-]{20,}", "[REDACTED_GOOGLE_TOKEN]"),
        p(
            r"\bx(?:ox[abposr]|app)-[A-Za-z0-9-]{10,}\b",
            "[REDACTED_SLACK_TOKEN]",
        ),
        p(
            r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b",
            "[REDACTED_STRIPE_KEY]",
        ),
        p(r"\bwhsec_[0-9A-Za-z]{24,}\b", "[REDACTED_STRIPE_KEY]"),
        p(
            r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
            "[REDACTED_SENDGRID_KEY]",
        ),
        p(r"\bnpm_[A-Za-z0-9]{36}\b", "[REDACTED_NPM_TOKEN]"),
        p(r"\bpypi-AgE[A-Za-z0-9_-]{50,}", "[REDACTED_PYPI_TOKEN]"),
        p(r"\bhf_[A-Za-z]{34}\b", "[REDACTED_HUGGINGFACE_TOKEN]"),
        p(r"\bSK[0-9a-fA-F]{32}\b", "[REDACTED_TWILIO_KEY]"),
        p(r"\bkey-[0-9a-zA-Z]{32}\b", "[REDACTED_MAILGUN_KEY]"),
        p(
            r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
            "[REDACTED_SHOPIFY_TOKEN]",
        ),
        p(
            r"\bdo[por]_v1_[a-f0-9]{64}\b",
            "[REDACTED_DIGITALOCEAN_TOKEN]",
        ),
        p(r"\bdapi[a-f0-9]{32}\b", "[REDACTED_DATABRICKS_TOKEN]"),
        // Seed patterns (name = value forms).
        p(
            r#"(?i)(api[_-]?key|apikey)\s*[=:]\s*["']?[\w-]{20,}["']?"#,
            "[REDACTED_API_KEY]",
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
        // `name = value`, `name: value` and JSON `"name": "value"` forms.
        p(
            &format!(
                r#"(?i)(\b{PASSWORD_NAME}[\x22']?\s*(?:[:=]|=>)\s*[\x22']?)[^\s\x22'<>{{}}$,;]{{6,}}[\x22']?"#
            ),
            "${1}[REDACTED_PASSWORD]",
        ),
        e(
            &format!(
                r#"(?i)(\b{SECRET_NAME}[\x22']?\s*(?:[:=]|=>)\s*[\x22']?)(?P<value>[A-Za-z0-9_+/=.~-]{{12,}})[\x22']?"#
            ),
            "${1}[REDACTED_SECRET]",
            3.0,
            false,
        ),
        // Bare high-entropy strings (detect-secrets' Base64HighEntropyString):
        // an AWS secret key in a table cell. Mixed case and a digit, and
        // over 4.2 bits a character: more than hex digests or words reach.
        e(
            r"(?P<value>\b[A-Za-z0-9+/]{32,}={0,2})",
            "[REDACTED_HIGH_ENTROPY]",
            4.2,
            true,
        ),
    ]
});

/// Shannon entropy of `s` in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    let mut n = 0usize;
    for b in s.bytes() {
        counts[b as usize] += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n as f64;
            -p * p.log2()
        })
        .sum()
}

fn looks_random(v: &str, min_entropy: f64, need_mixed: bool) -> bool {
    if min_entropy <= 0.0 {
        return true;
    }
    if !need_mixed {
        return entropy(v) >= min_entropy;
    }
    let upper = v.bytes().any(|b| b.is_ascii_uppercase());
    let lower = v.bytes().any(|b| b.is_ascii_lowercase());
    let digit = v.bytes().any(|b| b.is_ascii_digit());
    // Upper case, lower case and a digit: a random key has all three; a
    // path, an identifier or a hex digest rarely does.
    upper && lower && digit && entropy(v) >= min_entropy
}

/// Environment variables whose value is a secret by their name.
fn is_secret_var(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| n.contains(w))
        && !matches!(n.as_str(), "SSH_AUTH_SOCK" | "GPG_AGENT_INFO")
}

/// The values of every key-like variable in this process's environment
/// (`*_API_KEY`, `*_TOKEN`, `*SECRET*`, ...), longest first, so a key is
/// redacted even when another provider runs, or a model echoes it.
pub fn env_secrets() -> Vec<String> {
    let mut v: Vec<String> = std::env::vars_os()
        .filter_map(|(k, val)| {
            let k = k.to_str()?;
            let val = val.to_str()?.trim().to_string();
            (is_secret_var(k) && val.len() >= 8).then_some(val)
        })
        .collect();
    v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    v.dedup();
    v
}

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
                let whole = caps.get(0).map_or("", |m| m.as_str());
                let value = caps.name("value").map_or(whole, |m| m.as_str());
                if !looks_random(value, p.min_entropy, p.mixed) {
                    return whole.to_string();
                }
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
    fn issue_12_families_redact() {
        let cases = [
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n-----END OPENSSH PRIVATE KEY-----",
            r#"{"password": "Zq8#vLm2!pRt9wX"}"#,
            r#"{"api_key": "a8Fk2LpQ9zX7mN3vB6cR1tY4"}"#,
            r#"{"client_secret": "Qm9vN2pLx8Rt5Vb3Zc7Yw1Ks"}"#,
            "| AKIA... | wJalrXUtnFEMI/K7MDENG/bPxRfiCY7Q2kLm9ZaB |",
            "key sk_live_4eC39HqLyjWDarjtT1zdp7dc here",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "Authorization: Basic dXNlcjpzM2NyZXRQYXNzMTIz",
            "https://hooks.slack.com/services/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",
            "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",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "glpat-x7Yk2LmN9pQ4rS8tV1wZ",
            "AccountName=a;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
        ];
        for c in cases {
            let r = redact(c);
            assert!(r.count >= 1, "not redacted: {c} -> {}", r.text);
            for secret in [
                "MIIEvQ", "b3BlbnNz", "Zq8#vLm2", "a8Fk2LpQ", "Qm9vN2pL", "wJalrXUt", "4eC39Hq",
                "SflKxwRJ", "dXNlcjpz", "q8W7e6R5", "ngeVfQFY", "a1B2c3D4", "x7Yk2LmN", "Eby8vdM0",
            ] {
                assert!(!r.text.contains(secret), "{c} -> {}", r.text);
            }
        }
    }

    #[test]
    fn env_values_are_redacted_whichever_provider_runs() {
        assert!(is_secret_var("ANTHROPIC_API_KEY"));
        assert!(is_secret_var("GITHUB_TOKEN"));
        assert!(is_secret_var("db_password"));
        assert!(!is_secret_var("HOME"));
        assert!(!is_secret_var("SSH_AUTH_SOCK"));
    }

    #[test]
    fn prose_paths_and_digests_stay() {
        for text in [
            "See src/main/java/com/example/payments/PaymentServiceImpl.java for details.",
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "Basic authentication is not supported; the api_key field is documented below.",
            "token: issued per session and rotated daily",
            "The PaymentReconciliationServiceCoordinatorFactory class is long.",
        ] {
            let r = redact(text);
            assert_eq!(r.text, text, "{text}");
        }
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
