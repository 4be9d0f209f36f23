//! Test helpers: run the real `gauntlet` binary with a builder and assert on
//! its exit code and output (in the style of just's tests/test.rs).

#![allow(dead_code)]

pub mod mock_llm;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

pub struct Run {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn gauntlet() -> Run {
    Run {
        args: Vec::new(),
        stdin: None,
        env: Vec::new(),
        cwd: None,
    }
}

impl Run {
    pub fn arg(mut self, a: impl AsRef<str>) -> Self {
        self.args.push(a.as_ref().to_string());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<str>>(mut self, a: I) -> Self {
        self.args
            .extend(a.into_iter().map(|s| s.as_ref().to_string()));
        self
    }

    pub fn path(self, p: &Path) -> Self {
        self.arg(p.to_str().unwrap())
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    pub fn cwd(mut self, p: &Path) -> Self {
        self.cwd = Some(p.to_path_buf());
        self
    }

    pub fn run(self) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
        cmd.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("NO_COLOR")
            .env("GAUNTLET_TEST", "1")
            // Never call real models from tests, whatever is installed.
            .env("GAUNTLET_OFFLINE", "1");
        // Kept until the process has finished, then removed.
        let _scratch = match &self.cwd {
            Some(c) => {
                cmd.current_dir(c);
                None
            }
            None => {
                let tmp = tempfile::tempdir().unwrap();
                cmd.current_dir(tmp.path());
                Some(tmp)
            }
        };
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn gauntlet");
        {
            let mut stdin = child.stdin.take().unwrap();
            if let Some(bytes) = &self.stdin {
                let _ = stdin.write_all(bytes);
            }
        }
        let out = child.wait_with_output().unwrap();
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Output {
    #[track_caller]
    pub fn code(self, expected: i32) -> Self {
        assert_eq!(
            self.code, expected,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stdout_has(self, needle: &str) -> Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}",
            self.stdout
        );
        self
    }

    /// A usage or input error: exit 2 and exactly one line on stderr, no panic.
    #[track_caller]
    pub fn one_line_error(self, needle: &str) -> Self {
        let s = self.code(2);
        let lines: Vec<&str> = s.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "want one line, got:\n{}", s.stderr);
        assert!(lines[0].starts_with("gauntlet: error: "), "{}", lines[0]);
        assert!(!s.stderr.contains("panicked"), "{}", s.stderr);
        s.stderr_has(needle)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }
}
