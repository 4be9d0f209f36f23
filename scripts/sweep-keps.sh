#!/usr/bin/env bash
# Robustness sweep: run the release binary over every spec in a folder (by
# default ../shared/corpus/keps), one process per spec, and check that every
# run exits 0 (pass) or 1 (revise) with a JSON verdict. Prints the number of
# specs, the exit-code histogram, the average number of surviving concerns
# per spec, and the slowest run.
#
#   scripts/sweep-keps.sh [DIR] [extra gauntlet flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-../shared/corpus/keps}
shift || true
cargo build --release --quiet
bin=target/release/gauntlet
python3 - "$bin" "$dir" "$@" <<'PY'
import json, subprocess, sys, time, pathlib, collections
bin, d, extra = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
codes = collections.Counter()
survivors = total = 0
bad = []
slowest = (0.0, "")
for spec in sorted(d.glob("*.md")):
    t = time.monotonic()
    p = subprocess.run([bin, "--format", "json", "--no-store", "-q", *extra, str(spec)], capture_output=True)
    dt = time.monotonic() - t
    slowest = max(slowest, (dt, spec.name))
    codes[p.returncode] += 1
    total += 1
    if p.returncode not in (0, 1):
        bad.append(f"{spec.name}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[:200]}")
        continue
    v = json.loads(p.stdout)
    survivors += sum(1 for c in v["concerns"] if c["status"] in ("accepted", "reinstated"))
print(f"specs {total}  exit codes {dict(sorted(codes.items()))}  "
      f"surviving concerns per spec {survivors / max(total, 1):.2f}  slowest {slowest[0]*1000:.0f} ms ({slowest[1]})")
for b in bad:
    print("  FAIL", b)
sys.exit(1 if bad else 0)
PY
