#!/usr/bin/env bash
# The model benchmark workload of issue 13: the photo-upload spec, 5
# adversaries, 2 evaluators, default settings, against benches/mock_llm.py
# at 200 ms per call. Prints tokens per phase, cached-prefix share, round
# trips, wall time, and the verdict.
#   scripts/bench_mock.sh [GAUNTLET_BINARY] [MOCK] [SPEC]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/gauntlet}
mock=${2:-$here/benches/mock_llm.py}
spec=${3:-/work/shared/corpus/dev/photo-upload-service.md}
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; [ -n "${KEEP_LOGS:-}" ] && cp "$tmp"/*.jsonl "$KEEP_LOGS"/; rm -rf "$tmp"' EXIT
python3 "$mock" --port 0 --latency-ms "${LATENCY_MS:-200}" --log "$tmp/reqs.jsonl" \
  --log-prompts "$tmp/prompts.jsonl" --max-seconds 120 >"$tmp/port" 2>/dev/null &
pid=$!
for _ in $(seq 50); do grep -q PORT "$tmp/port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$tmp/port")
start=$(date +%s.%N)
set +e
env -u GAUNTLET_OFFLINE "$bin" --no-store --format json \
  --attack-model openai-compatible/mock \
  --eval-models openai-compatible/mock-a,openai-compatible/mock-b \
  --api-base "http://127.0.0.1:$port/v1" ${EXTRA_ARGS:-} "$spec" >"$tmp/verdict.json" 2>"$tmp/stderr"
code=$?
set -e
end=$(date +%s.%N)
python3 "$here/scripts/bench_report.py" "$tmp/reqs.jsonl" "$tmp/prompts.jsonl"
python3 - "$tmp/verdict.json" <<'PY'
import json, sys, collections
v = json.load(open(sys.argv[1]))
st = collections.Counter(c["status"] for c in v["concerns"])
print("verdict:", v["verdict"], dict(sorted(st.items())))
PY
echo "exit code: $code"
echo "wall time: $(echo "$end - $start" | bc) s"
# Where the time goes: process start to the first call, the waves of calls
# (first arrival to last reply of each phase), and the last reply to exit.
python3 - "$tmp/reqs.jsonl" "$start" "$end" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
start, end = float(sys.argv[2]), float(sys.argv[3])
phases = {}
for r in reqs:
    a, b = phases.get(r["phase"], (r["t_recv"], r["t_sent"]))
    phases[r["phase"]] = (min(a, r["t_recv"]), max(b, r["t_sent"]))
first = min(r["t_recv"] for r in reqs)
last = max(r["t_sent"] for r in reqs)
print(f"time: start -> first call {1000 * (first - start):.0f} ms; " + "; ".join(
    f"{k} {1000 * (b - a):.0f} ms" for k, (a, b) in phases.items()) +
    f"; last reply -> exit {1000 * (end - last):.0f} ms")
PY
