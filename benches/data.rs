//! Benchmark inputs, shared by the benches: the largest real spec from the
//! KEP corpus beside the repository, or a synthetic one of similar size when
//! the corpus is absent.

use std::path::PathBuf;

pub fn keps_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/keps")
}

/// (name, text) of the largest KEP, or a ~170 KB synthetic spec.
pub fn largest_spec() -> (String, String) {
    let best = std::fs::read_dir(keps_dir()).ok().and_then(|rd| {
        rd.filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
            .max_by_key(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
    });
    if let Some(e) = best
        && let Ok(text) = std::fs::read_to_string(e.path())
    {
        return (e.file_name().to_string_lossy().into_owned(), text);
    }
    let mut text = String::from("# Synthetic spec\n\n## Context\n\nUsers wait too long today.\n");
    let mut i = 0;
    while text.len() < 170_000 {
        text.push_str(&format!(
            "\n## Component {i}\n\nThe worker calls the Billing API for each job and retries failed calls.\nUploads are stored under the original file name in a bucket.\nWe cache prices in memory at startup.\n\n```yaml\ntimeout: 5s\n```\n"
        ));
        i += 1;
    }
    ("synthetic.md".to_string(), text)
}
