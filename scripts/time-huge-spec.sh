#!/bin/sh
# Linear time on huge input (issue 12), end to end: times the release binary
# on a generated spec of SIZE bytes (default 10,000,000, just under the
# default 10 MiB input cap) whose one section is dense with trigger hits,
# safeguards and hidden Markdown (the shape `benches/huge_spec.rs` uses), and
# on a quarter of it, so the ratio shows the growth (about 4x for linear).
# Prints the median wall and CPU time of 5 runs each. Target: under 2 s.
# Usage: scripts/time-huge-spec.sh [SIZE]   (cargo build --release first)
set -eu
size=${1:-10000000}
bin=${GAUNTLET:-target/release/gauntlet}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$bin" "$size" "$tmp" <<'PY'
import os, resource, statistics, subprocess, sys, time
binary, size, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
LINES = [
    "The worker calls the Billing API for invoice {i} and retries immediately.",
    "- Every request to `POST /api/items/{i}` is stored in a local queue that grows.",
    "Failures are logged and ignored for job {i}; the cron job runs every 5 minutes.",
    "| step {i} | calls the Fraud API | 30 s timeout |",
    "Amounts are stored as float for order {i} in UTC and local time.",
    "[//]: # (comment {i} with a timeout and backoff)",
    "See ![alt text with a rate limit {i}](img.png) and [the retry doc](http://x/{i} \"title\").",
    "All calls to the Ledger API have a 2 s timeout.",
    "",
]

def spec(n):
    out, total, i = ["# Huge spec\n\n## Design\n\n"], 0, 0
    total = len(out[0])
    while True:
        line = LINES[i % len(LINES)].replace("{i}", str(i)) + "\n"
        if total + len(line) > n:
            break
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out)

for n in (size // 4, size):
    path = os.path.join(tmp, f"spec-{n}.md")
    with open(path, "w") as f:
        f.write(spec(n))
    wall, cpu, codes = [], [], set()
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run([binary, "--format", "json", "--no-store", "-q", path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "GAUNTLET_OFFLINE": "1"})
        wall.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        codes.add(r.returncode)
    if not codes <= {0, 1}:
        sys.exit(f"time-huge-spec: exit codes {sorted(codes)} on {os.path.getsize(path)} bytes")
    print(f"{os.path.getsize(path)} bytes: median wall {statistics.median(wall):.2f} s "
          f"(min {min(wall):.2f}), median cpu {statistics.median(cpu):.2f} s over {len(wall)} runs")
PY
