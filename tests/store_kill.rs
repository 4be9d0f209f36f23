//! A process killed in the middle of writing the store leaves the old file
//! or the new one, never a broken one. The real binary imports entries with
//! its writes slowed down (the hidden, test-only GAUNTLET_TEST_WRITE_PACE_MS
//! splits each atomic write into 16 paced chunks, so "mid-write" is a window
//! we can hit), and is killed at random points, many times.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

fn reference(dir: &Path, name: &str, tag: &str, n: usize) -> std::path::PathBuf {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id": "{tag}-{i}", "pattern": "Concern {tag} number {i} about the export worker", "explanation": "Answered in section {i}: {pad}", "added_at": "2026-01-01T00:00:00", "adversary": "burned_oncall", "confidence": 0.9, "spec_hash": null, "times_matched": 0, "last_matched": null, "verified_at": null}}"#,
                pad = "x".repeat(200)
            )
        })
        .collect();
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!(
            "{{\"concerns\": [{}], \"last_updated\": null}}",
            entries.join(",")
        ),
    )
    .unwrap();
    p
}

fn import(store: &Path, file: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    c.args(["store", "import"])
        .arg(file)
        .arg("--store-dir")
        .arg(store)
        .args(["--now", "2026-01-02T00:00:00Z"])
        .env("GAUNTLET_TEST_WRITE_PACE_MS", "4")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    c
}

fn count(store: &Path) -> usize {
    let bytes = std::fs::read(store.join("resolved_concerns.json")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("store is broken after a kill ({} bytes): {e}", bytes.len()));
    assert_eq!(v["format_version"], 1);
    v["concerns"].as_array().unwrap().len()
}

fn temp_files(store: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".tmp."))
        .collect()
}

#[test]
fn killed_mid_write_leaves_old_or_new_file() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    // A store of a few thousand entries: each write is about a megabyte.
    let seed_file = reference(tmp.path(), "seed.json", "seed", 3000);
    let t = Instant::now();
    assert!(import(&store, &seed_file).status().unwrap().success());
    let full = t.elapsed();
    let mut have = count(&store);
    assert_eq!(have, 3000);

    let mut seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    eprintln!("random seed {seed}, one import takes {full:?}");
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed >> 33
    };
    let window = full.as_millis().max(50) as u64 + 50;
    let (mut mid_write, mut old, mut new, mut rounds) = (0, 0, 0, 0);
    while rounds < 30 || (mid_write < 3 && rounds < 150) {
        rounds += 1;
        let file = reference(tmp.path(), "batch.json", &format!("b{rounds}"), 5);
        let mut child = import(&store, &file).spawn().unwrap();
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(next() % window));
        let _ = child.kill();
        let _ = child.wait();
        // fsutil names its temp file after the writer's pid (`.tmp.PID.N`).
        let marker = format!(".tmp.{pid}.");
        if temp_files(&store)
            .iter()
            .any(|p| p.to_string_lossy().contains(&marker))
        {
            mid_write += 1;
        }
        let now = count(&store);
        if now == have {
            old += 1;
        } else {
            assert_eq!(
                now,
                have + 5,
                "round {rounds}: neither the old nor the new file"
            );
            new += 1;
        }
        have = now;
    }
    eprintln!("{rounds} kills: {mid_write} mid-write, {old} left the old file, {new} the new one");
    assert!(
        mid_write >= 3,
        "only {mid_write} kills landed mid-write in {rounds} rounds"
    );
    // The next write under the lock clears what killed writers left behind.
    let file = reference(tmp.path(), "last.json", "last", 1);
    let mut c = import(&store, &file);
    c.env_remove("GAUNTLET_TEST_WRITE_PACE_MS");
    assert!(c.status().unwrap().success());
    assert_eq!(count(&store), have + 1);
    std::fs::write(
        store.join(".resolved_concerns.json.tmp.999999"),
        b"half a wri",
    )
    .unwrap();
    let file = reference(tmp.path(), "last2.json", "last2", 1);
    assert!(import(&store, &file).status().unwrap().success());
    assert!(temp_files(&store).is_empty());
    let check = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["store", "check", "--store-dir"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}
