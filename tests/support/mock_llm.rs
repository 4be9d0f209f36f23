//! A tiny scripted HTTP server on 127.0.0.1 that speaks the OpenAI
//! chat-completions API and the Anthropic messages API, for tests and the
//! benchmark. Each request is answered by the test's script; every request
//! body is kept so tests can check what left the process.

#![allow(dead_code)]

use regex::Regex;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: String,
    pub body: String,
    /// The system prompt (Anthropic's `system`, or the system messages).
    pub system: String,
    /// The user prompt (last message's text).
    pub prompt: String,
    /// Characters at the start of `system` + `prompt` identical to an
    /// earlier request's (a prompt cache's view; see `cached_tokens`).
    pub shared_prefix: usize,
}

impl Received {
    /// What a prompt cache keys on: the system text, then the user text.
    pub fn cache_key(&self) -> String {
        format!("{}\u{0}{}", self.system, self.prompt)
    }
}

/// Simulated prompt caching: an earlier request's identical prefix counts as
/// cached, chars / 4 (no minimum length, unlike real providers).
fn shared_prefix(earlier: &[Received], key: &str) -> usize {
    earlier
        .iter()
        .map(|r| {
            r.cache_key()
                .chars()
                .zip(key.chars())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// What the server answers.
pub enum Reply {
    /// Model text, wrapped in the API's response shape with usage.
    Text(String),
    /// A raw status, extra headers and body.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Wait, then answer.
    Delay(Duration, Box<Reply>),
}

pub type Script = dyn Fn(&Received, usize) -> Reply + Send + Sync;

pub struct MockServer {
    pub base: String,
    pub received: Arc<Mutex<Vec<Received>>>,
    count: Arc<AtomicUsize>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

impl MockServer {
    /// Starts the server on the current tokio runtime.
    pub async fn start(
        api: Api,
        script: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static,
    ) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicUsize::new(0));
        let script: Arc<Script> = Arc::new(script);
        let (r, c) = (received.clone(), count.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let (r, c, script) = (r.clone(), c.clone(), script.clone());
                tokio::spawn(async move {
                    let Some(mut req) = read_request(&mut sock).await else {
                        return;
                    };
                    let n = c.fetch_add(1, Ordering::SeqCst);
                    {
                        let mut all = r.lock().unwrap();
                        req.shared_prefix = shared_prefix(&all, &req.cache_key());
                        all.push(req.clone());
                    }
                    let mut reply = script(&req, n);
                    while let Reply::Delay(d, inner) = reply {
                        tokio::time::sleep(d).await;
                        reply = *inner;
                    }
                    let (status, headers, body) = match reply {
                        Reply::Text(t) => (200, Vec::new(), wrap(api, &t, &req)),
                        Reply::Raw {
                            status,
                            headers,
                            body,
                        } => (status, headers, body),
                        Reply::Delay(..) => unreachable!(),
                    };
                    let mut head = format!(
                        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                        if status == 200 { "OK" } else { "ERR" },
                        body.len()
                    );
                    for (k, v) in headers {
                        head.push_str(&format!("{k}: {v}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock.write_all(body.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        let base = match api {
            Api::OpenAi => format!("http://{addr}/v1"),
            Api::Anthropic => format!("http://{addr}"),
        };
        MockServer {
            base,
            received,
            count,
        }
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body = String::from_utf8_lossy(&buf[header_end..]).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let text_of = |c: &Value| match c {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let prompt = v["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default();
    let mut system = text_of(&v["system"]);
    for m in v["messages"].as_array().into_iter().flatten() {
        if m["role"] == "system" {
            system.push_str(&text_of(&m["content"]));
        }
    }
    Some(Received {
        path,
        headers: head,
        body,
        system,
        prompt,
        shared_prefix: 0,
    })
}

fn wrap(api: Api, text: &str, req: &Received) -> String {
    let input = (req.body.len() / 4) as u64;
    let output = (text.len() / 4) as u64;
    let cached = ((req.shared_prefix / 4) as u64).min(input);
    match api {
        Api::OpenAi => json!({
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 1,
            "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
                      "prompt_tokens_details": {"cached_tokens": cached}}
        }),
        Api::Anthropic => json!({
            "id": "msg_mock",
            "type": "message",
            "role": "assistant",
            "model": "claude-3-5-haiku-20241022",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": null,
            "usage": {"input_tokens": input - cached, "cache_read_input_tokens": cached,
                      "cache_creation_input_tokens": 0, "output_tokens": output}
        }),
    }
    .to_string()
}

/// Which phase a prompt belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Attack,
    Eval,
    Rebuttal,
    Adjudicate,
    FinalBoss,
    Unknown,
}

pub fn kind(prompt: &str) -> Kind {
    if prompt.contains("You are the final adjudicator") {
        Kind::Adjudicate
    } else if prompt.contains("OPTION B - CHALLENGE DISMISSAL") {
        Kind::Rebuttal
    } else if prompt.contains("Concerns (vote on each, by id)") {
        Kind::Eval
    } else if prompt.contains("as the adversary `") {
        Kind::Attack
    } else if prompt.contains("Did we lose the forest") {
        Kind::FinalBoss
    } else {
        Kind::Unknown
    }
}

pub fn is_repair(prompt: &str) -> bool {
    prompt.contains("Your previous reply could not be read")
}

/// The adversary an attack prompt is for.
pub fn persona(prompt: &str) -> String {
    let re = Regex::new(r"as the adversary `(\w+)`").unwrap();
    re.captures(prompt)
        .map(|c| c[1].to_string())
        .unwrap_or_default()
}

/// (id, title) of every concern in an evaluation prompt.
pub fn concerns(prompt: &str) -> Vec<(String, String)> {
    let re = Regex::new(r"(?m)^\[([A-Z]+-[0-9a-f]{8})\] from \w+ .*\nTitle: (.*)$").unwrap();
    re.captures_iter(prompt)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// (id, title) of every concern in a (batched) rebuttal prompt.
pub fn rebuttal_concerns(prompt: &str) -> Vec<(String, String)> {
    let re = Regex::new(r"(?m)^\[([A-Z]+-[0-9a-f]{8})\] (.*?) \((?:line|lines|whole)").unwrap();
    re.captures_iter(prompt)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// (id, title) of every challenge in a (batched) adjudication prompt.
pub fn adjudication_concerns(prompt: &str) -> Vec<(String, String)> {
    let re = Regex::new(r"(?m)^\[([A-Z]+-[0-9a-f]{8})\] from \w+: (.*?) \((?:line|lines|whole)")
        .unwrap();
    re.captures_iter(prompt)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// The `[ID] Title` header of a rebuttal or adjudication prompt.
pub fn concern_title(prompt: &str) -> String {
    let re =
        Regex::new(r"(?m)^(?:Concern )?\[[A-Z]+-[0-9a-f]{8}\](?: from \w+:)? (.*?) \(").unwrap();
    re.captures(prompt)
        .map(|c| c[1].to_string())
        .unwrap_or_default()
}
