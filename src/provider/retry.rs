//! The one retry loop for model calls: up to `max_retries` more attempts
//! on 429, 5xx, timeouts and connection errors, exponential backoff with
//! jitter, honouring Retry-After. Providers and litellm-rs never retry on
//! their own, so attempts never multiply.

use super::completion::ProviderError;
use std::future::Future;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Backoff before retry n (0-based) is `base * 2^n`, plus up to 50% jitter.
    pub base: Duration,
    /// No single wait is longer than this (a Retry-After above it is capped).
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(500),
            max_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// How long to wait before retry `n` (0-based) after `error`.
    pub fn wait(&self, n: u32, error: &ProviderError) -> Duration {
        if let Some(after) = error.retry_after() {
            return after.min(self.max_wait);
        }
        let exp = self.base.saturating_mul(1u32 << n.min(16));
        let jitter = exp.mul_f64(jitter_fraction() * 0.5);
        let mut wait = exp + jitter;
        // A 429 that does not say when to come back (no Retry-After header,
        // no wait in the body) gets at least the usual one second: hammering
        // a rate limiter with millisecond retries only extends the ban.
        if matches!(error, ProviderError::RateLimited { .. }) {
            wait = wait.max(RATE_LIMIT_FLOOR);
        }
        wait.min(self.max_wait)
    }
}

/// The least wait after a 429 without a Retry-After.
pub const RATE_LIMIT_FLOOR: Duration = Duration::from_secs(1);

/// A fraction in [0, 1) from the clock; good enough to spread retries.
fn jitter_fraction() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Scramble so consecutive calls differ.
    let x = (nanos as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
    (x as f64) / ((1u64 << 53) as f64)
}

/// What a retried call did.
#[derive(Debug)]
pub struct Attempts<T> {
    pub result: Result<T, ProviderError>,
    /// Every failed attempt, in order.
    pub failures: Vec<ProviderError>,
}

/// Runs `attempt` until it succeeds, fails with a non-retryable error, runs
/// out of retries, or the next wait would pass `deadline`.
pub async fn retry<T, F, Fut>(
    policy: &RetryPolicy,
    deadline: Option<Instant>,
    mut attempt: F,
) -> Attempts<T>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut failures = Vec::new();
    let mut n = 0;
    loop {
        match attempt(n).await {
            Ok(v) => {
                return Attempts {
                    result: Ok(v),
                    failures,
                };
            }
            Err(e) => {
                let retry = e.is_retryable() && n < policy.max_retries;
                let wait = policy.wait(n, &e);
                let past_deadline = deadline.is_some_and(|d| Instant::now() + wait >= d);
                if !retry || past_deadline {
                    return Attempts {
                        result: Err(e),
                        failures,
                    };
                }
                failures.push(e);
                tokio::time::sleep(wait).await;
                n += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fast() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(1),
            max_wait: Duration::from_millis(50),
        }
    }

    #[tokio::test]
    async fn retries_server_errors_then_succeeds() {
        let calls = AtomicU32::new(0);
        let out = retry(&fast(), None, |_| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(ProviderError::Server {
                        status: 500,
                        message: "boom".into(),
                    })
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(out.result.unwrap(), 2);
        assert_eq!(out.failures.len(), 2);
    }

    #[tokio::test]
    async fn gives_up_after_three_retries_and_never_retries_fatal() {
        let calls = AtomicU32::new(0);
        let out: Attempts<()> = retry(&fast(), None, |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(ProviderError::Connection("refused".into())) }
        })
        .await;
        assert!(out.result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 4);

        let calls = AtomicU32::new(0);
        let out: Attempts<()> = retry(&fast(), None, |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Err(ProviderError::Fatal("bad key".into())) }
        })
        .await;
        assert!(out.result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn rate_limit_without_retry_after_waits_at_least_the_floor() {
        let p = RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(20),
            max_wait: Duration::from_secs(60),
        };
        let rl = ProviderError::RateLimited {
            retry_after: None,
            message: String::new(),
        };
        assert_eq!(p.wait(0, &rl), RATE_LIMIT_FLOOR);
        let e = ProviderError::Timeout { secs: 1 };
        assert!(p.wait(0, &e) < Duration::from_millis(40));
    }

    #[test]
    fn wait_honours_retry_after_and_grows() {
        let p = RetryPolicy {
            max_retries: 3,
            base: Duration::from_millis(100),
            max_wait: Duration::from_secs(60),
        };
        let rl = ProviderError::RateLimited {
            retry_after: Some(Duration::from_secs(2)),
            message: String::new(),
        };
        assert_eq!(p.wait(0, &rl), Duration::from_secs(2));
        let e = ProviderError::Timeout { secs: 1 };
        let w0 = p.wait(0, &e);
        let w2 = p.wait(2, &e);
        assert!(w0 >= Duration::from_millis(100) && w0 <= Duration::from_millis(150));
        assert!(w2 >= Duration::from_millis(400) && w2 <= Duration::from_millis(600));
    }
}
