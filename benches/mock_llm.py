#!/usr/bin/env python3
"""Deterministic OpenAI-compatible mock LLM for benchmarking `gauntlet` with real-model
flags (`--attack-model openai-compatible/...`). Copied from ../shared/bench/mock_llm.py and
adapted to the batched prompts (issue 13): a rebuttal call carries all dismissed concerns of
one adversary and is answered with one `[ID] ACCEPTED|CHALLENGED: ...` line per concern; an
adjudication call carries a batch of challenges and is answered with JSON decisions by id.
The decision for each concern is the same as the original's per-concern rule, so a verdict
can be compared before and after. Run by scripts/bench_mock.sh. The same workload was used to measure the
Python reference gauntlet (27.45k prompt tokens, 21 calls, 5 round trips at 200 ms per
call on ../corpus/dev/photo-upload-service.md): copy it into the project and adapt the
phase detection below when the prompts change.

  mock_llm.py [--port 0] [--latency-ms 200] [--log FILE] [--log-prompts FILE]
                   [--mode normal|error500|garbage|eval-timeout|rate-limit-first-2]
                   [--slow-s 30] [--retry-after 1] [--max-seconds 900]

Prints "PORT <n>" on stdout once listening (use --port 0 for an ephemeral port).
Serves POST /v1/chat/completions and /chat/completions, GET .../models.

Phase detection (from the user prompt text of prompts/*.md):
  repair        "--- Your previous reply ---" (answered as the phase it repairs)
  adjudication  "You are the final adjudicator"
  rebuttal      "OPTION B - CHALLENGE DISMISSAL"
  evaluation    "Concerns (vote on each, by id)"
  final_boss    "The technical review left these concerns requiring revision"
  attack        "as the adversary `"
Deterministic decisions, all derived from prompt content (never from arrival order):
  attack       -> 4 concerns per persona (4 fixed topics of the photo-upload spec), JSON
                  {"concerns":[{title,detail,severity,lines}]}; lines found by keyword
                  in the numbered spec
  evaluation   -> votes by concern id: topics #1,#3 dismissed, #2,#4 accepted (half)
  rebuttal     -> for each concern of the call: ordinal k = 2*persona_index + (topic==3);
                  CHALLENGED when k % 3 == 2 (3 of 10 with five personas, like the
                  1 call in 3), else ACCEPTED; one `[ID] ...` line per concern
  adjudication -> for each challenge of the call: the n-th challenged concern
                  (n = k // 3) is overturned when n is even, upheld when odd
  final_boss   -> {"verdict": "PASS", ...}
Fault modes (--mode):
  error500            every call: HTTP 500 (after the latency)
  garbage             every call: 200 with prose that is neither JSON nor a list
  eval-timeout        attack/rebuttal normal; evaluation and adjudication sleep --slow-s
                      (logged on arrival with status "slow-<s>s", since the client gives up)
  rate-limit-first-2  the first two calls get HTTP 429 + Retry-After: --retry-after (1), then normal
Log: one JSON line per request (--log): t_recv, t_sent, model, phase, status, persona,
prompt_chars, completion_chars, prompt_tokens, completion_tokens (chars/4, the same
numbers returned in `usage`), prompt_sha1 (system+user). --log-prompts FILE also
appends {"t_recv","model","phase","system","prompt"} per call (prefix-cache analysis).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTERS: dict[str, int] = {}
ARGS = None
LOG_FH = None
PROMPT_FH = None

# Fixed reasoning texts, so completion sizes are stable.
REASON_DISMISS = (
    "Dismissed: the specification already addresses this in its Architecture and Failure "
    "handling sections; the described mechanism covers the scenario raised, so no revision "
    "is required for this concern at this time."
)
REASON_ACCEPT = (
    "Accepted: the specification does not define the behaviour described by the reviewer; "
    "the spec needs an explicit section describing limits, failure modes and ownership so "
    "that implementers do not have to guess."
)
# (title, topic, spec keyword for the line range, severity)
TOPICS = [
    ("Upload size limit unspecified",
     "upload size limits and what happens when a client sends a 50 MB file to the photos-api",
     "5 mb", "high"),
    ("Duplicate thumbnail deliveries",
     "thumbnail worker retries when RabbitMQ redelivers the same photos.thumbnail message twice",
     "rabbitmq", "medium"),
    ("NFS mount outage during deploy",
     "the shared multi-AZ NFS mount at /srv/photos becoming unavailable during a deploy",
     "nfs", "low"),
    ("Stale CDN URLs after delete",
     "deleting originals when a listing is removed and the CDN still caches the old URLs",
     "cdn", "medium"),
]
TITLE_TO_J = {t[0]: j for j, t in enumerate(TOPICS, 1)}
PREFIXES = ["ASSH", "BURN", "LAZY", "PARA", "PEDA", "UXAR"]
GARBAGE = "I like turtles. The weather is lovely today and I have no opinion about this document."


def _next(counter: str) -> int:
    with LOCK:
        n = COUNTERS.get(counter, 0)
        COUNTERS[counter] = n + 1
        return n


def detect_phase(user: str) -> str:
    if "--- Your previous reply ---" in user:
        return "repair:" + detect_phase(user.split("--- Your previous reply ---", 1)[0])
    if "You are the final adjudicator" in user:
        return "adjudication"
    if "OPTION B - CHALLENGE DISMISSAL" in user:
        return "rebuttal"
    if "Concerns (vote on each, by id)" in user:
        return "evaluation"
    if "The technical review left these concerns requiring revision" in user:
        return "final_boss"
    if "as the adversary `" in user:
        return "attack"
    return "unknown"


def persona_of(user: str) -> str:
    m = re.search(r"as the adversary `(\w+)`", user)
    return m.group(1) if m else ""


def spec_line(user: str, keyword: str) -> int:
    for m in re.finditer(r"^(\d+)\|(.*)$", user, re.M):
        if keyword in m.group(2).lower():
            return int(m.group(1))
    return 1


def reply_attack(user: str) -> str:
    concerns = []
    for title, topic, kw, sev in TOPICS:
        n = spec_line(user, kw)
        concerns.append({
            "title": title,
            "detail": (f"The spec does not specify {topic}; without an explicit rule the "
                       f"implementation will pick an arbitrary behaviour and operators will "
                       f"discover it in production."),
            "severity": sev,
            "lines": [n, n],
        })
    return json.dumps({"concerns": concerns})


_EVAL_RE = re.compile(
    r"^\[([A-Z]+-[0-9a-f]{8})\] from (\w+) \(\w+ severity, (?:lines? (\d+)(?:-\d+)?|[^)]*)\)\nTitle: (.*)$", re.M)


def topic_j(title: str, fallback: int) -> int:
    return TITLE_TO_J.get(title.strip(), fallback)


def reply_evaluation(user: str) -> str:
    votes = []
    for i, (cid, _adv, line, title) in enumerate(_EVAL_RE.findall(user)):
        j = topic_j(title, i % 4 + 1)
        dismiss = j % 2 == 1
        votes.append({
            "id": cid,
            "decision": "dismiss" if dismiss else "accept",
            "reasoning": REASON_DISMISS if dismiss else REASON_ACCEPT,
            "cites": [int(line)] if line else [1],
        })
    return json.dumps({"votes": votes}, indent=1)


_HEAD_RE = re.compile(r"^(?:Concern )?\[(([A-Z]+)-[0-9a-f]{8})\](?: from \w+:)? (.*?) \((?:line|lines|whole)", re.M)


def ordinal(prefix: str, title: str) -> int:
    pi = PREFIXES.index(prefix) if prefix in PREFIXES else int(hashlib.sha1(prefix.encode()).hexdigest(), 16) % 5
    return 2 * pi + (1 if topic_j(title, 1) == 3 else 0)


def heads(user: str):
    """(id, ordinal) of every concern header of a batched call, in order."""
    return [(m.group(1), ordinal(m.group(2), m.group(3))) for m in _HEAD_RE.finditer(user)]


def reply_rebuttal(user: str) -> str:
    out = []
    for cid, k in heads(user):
        if k % 3 == 2:
            out.append(f"[{cid}] CHALLENGED: the dismissal cites the Architecture section, but that "
                       "section only names the component; it never states the limit or the failure "
                       "behaviour in question.")
        else:
            out.append(f"[{cid}] ACCEPTED: the dismissal reasoning is valid; the spec covers this "
                       "case adequately.")
    return "\n".join(out)


def reply_adjudication(user: str) -> str:
    decisions = []
    for cid, k in heads(user):
        if (k // 3) % 2 == 0:
            decisions.append({"id": cid, "outcome": "overturned",
                              "reasoning": "The rebuttal identifies a concrete gap in the specification."})
        else:
            decisions.append({"id": cid, "outcome": "upheld",
                              "reasoning": "The original dismissal stands; the spec covers the scenario."})
    return json.dumps({"decisions": decisions})


def reply_final_boss() -> str:
    return json.dumps({"verdict": "PASS",
                       "summary": "The user story is sound and the concerns are normal refinements.",
                       "findings": []})


def build_reply(phase: str, user: str) -> str:
    if phase.startswith("repair:"):
        phase = phase[len("repair:"):]
        user = user.split("--- Your previous reply ---", 1)[0]
    return {
        "attack": lambda: reply_attack(user),
        "evaluation": lambda: reply_evaluation(user),
        "rebuttal": lambda: reply_rebuttal(user),
        "adjudication": lambda: reply_adjudication(user),
        "final_boss": reply_final_boss,
    }.get(phase, lambda: "OK")()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def _send(self, code: int, obj: dict, headers: dict | None = None) -> bool:
        body = json.dumps(obj).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False  # the client gave up (timeout)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": []})
        return self._send(404, {"error": {"message": "not found"}})

    def do_POST(self):
        t_recv = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._send(404, {"error": {"message": f"unknown path {self.path}"}})
        try:
            req = json.loads(raw)
        except json.JSONDecodeError:
            return self._send(400, {"error": {"message": "bad json"}})
        msgs = req.get("messages", [])

        def text_of(m):
            c = m.get("content", "")
            if isinstance(c, list):
                return "".join(p.get("text", "") for p in c if isinstance(p, dict))
            return c or ""

        system = "\n".join(text_of(m) for m in msgs if m.get("role") == "system")
        user = "\n".join(text_of(m) for m in msgs if m.get("role") != "system")
        prompt_chars = sum(len(text_of(m)) for m in msgs)
        phase = detect_phase(user)
        ordinal = _next("calls")
        mode = ARGS.mode
        status, headers = 200, {}
        if mode == "error500":
            status = 500
        elif mode == "rate-limit-first-2" and ordinal < 2:
            status, headers = 429, {"Retry-After": str(ARGS.retry_after)}
        if mode == "garbage":
            content = GARBAGE
        else:
            content = build_reply(phase, user)
        sleep_s = ARGS.latency_ms / 1000.0
        if mode == "eval-timeout" and phase.split(":")[-1] in ("evaluation", "adjudication"):
            sleep_s = ARGS.slow_s
            # log the arrival now: the client will have given up before the reply is due
            with LOCK:
                LOG_FH.write(json.dumps({
                    "t_recv": round(t_recv, 6), "t_sent": round(t_recv + sleep_s, 6), "ordinal": ordinal,
                    "model": req.get("model"), "phase": phase, "status": "slow-%gs" % sleep_s,
                    "delivered": None, "persona": "", "prompt_chars": prompt_chars, "completion_chars": 0,
                    "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
                    "prompt_sha1": hashlib.sha1((system + "\x00" + user).encode()).hexdigest()}) + "\n")
                LOG_FH.flush()
        if sleep_s > 0:
            time.sleep(sleep_s)
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if status == 200:
            ok = self._send(200, {
                "id": "chatcmpl-" + uuid.uuid4().hex[:24],
                "object": "chat.completion",
                "created": int(t_recv),
                "model": req.get("model", "mock"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": usage,
            })
        else:
            msg = "rate limited" if status == 429 else "internal error (mock)"
            ok = self._send(status, {"error": {"message": msg, "type": "mock_error", "code": status}}, headers)
            usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
            content = ""
        rec = {"t_recv": round(t_recv, 6), "t_sent": round(time.time(), 6), "ordinal": ordinal,
               "model": req.get("model"), "phase": phase, "status": status, "delivered": ok,
               "persona": persona_of(user), "prompt_chars": prompt_chars,
               "completion_chars": len(content), **usage,
               "prompt_sha1": hashlib.sha1((system + "\x00" + user).encode()).hexdigest()}
        with LOCK:
            if not (mode == "eval-timeout" and sleep_s == ARGS.slow_s):
                LOG_FH.write(json.dumps(rec) + "\n")
            LOG_FH.flush()
            if PROMPT_FH:
                PROMPT_FH.write(json.dumps({"t_recv": rec["t_recv"], "model": rec["model"], "phase": phase,
                                            "system": system, "prompt": user}) + "\n")
                PROMPT_FH.flush()


def main():
    global ARGS, LOG_FH, PROMPT_FH
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency-ms", type=float, default=200.0)
    p.add_argument("--log", default="ours-mock-requests.jsonl")
    p.add_argument("--log-prompts")
    p.add_argument("--mode", default="normal",
                   choices=["normal", "error500", "garbage", "eval-timeout", "rate-limit-first-2"])
    p.add_argument("--slow-s", type=float, default=30.0)
    p.add_argument("--retry-after", type=int, default=1, help="Retry-After seconds in rate-limit-first-2")
    p.add_argument("--max-seconds", type=float, default=900.0)
    ARGS = p.parse_args()
    LOG_FH = open(ARGS.log, "a")
    PROMPT_FH = open(ARGS.log_prompts, "a") if ARGS.log_prompts else None
    srv = ThreadingHTTPServer((ARGS.host, ARGS.port), Handler)
    srv.daemon_threads = True
    srv.request_queue_size = 128
    print(f"PORT {srv.server_address[1]}", flush=True)
    print(f"ours mock on {ARGS.host}:{srv.server_address[1]} mode={ARGS.mode} latency={ARGS.latency_ms}ms",
          file=sys.stderr, flush=True)
    stopper = threading.Timer(ARGS.max_seconds, lambda: threading.Thread(target=srv.shutdown).start())
    stopper.daemon = True
    stopper.start()
    try:
        srv.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
