#!/usr/bin/env bash
# Issue 12 measurements (docs/hardening.md): crash safety and concurrency of
# the store and of `review --out`, on the release binary.
#
#   1. `kill -9` during single runs, N times (default 50): after each kill,
#      `store check` must pass (no corrupt file), and after the next full
#      run no temp file may be left in the store folder.
#   2. `kill -9` during `review --out`, N times: the same, plus no temp file
#      left under --out after the next review.
#   3. 20 concurrent runs on one store: every run recorded (history lines,
#      total_runs), `store check` clean.
#
# Usage: scripts/hardening-measure.sh [BIN] [N]
#   BIN  the gauntlet binary (default target/release/gauntlet)
#   N    kills per scenario (default 50)
# Store writes are slowed with GAUNTLET_TEST_WRITE_PACE_MS (test-only) so a
# good share of the kills land mid-write.
set -u
BIN=${1:-target/release/gauntlet}
N=${2:-50}
CORPUS=${CORPUS:-/work/shared/corpus/dev}
BIN=$(realpath "$BIN")
export GAUNTLET_OFFLINE=1 GAUNTLET_TEST=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/specs"
ls "$CORPUS"/*.md | head -8 | xargs -I{} cp {} "$work/specs/"
spec=$(ls "$work"/specs/*.md | head -1)

temps() { find "$1" -name '.*.tmp.*' 2>/dev/null | wc -l; }
check() { "$BIN" store check --store-dir "$1" >/dev/null 2>&1; }

# Sleep a pseudo-random 0..max ms.
nap() { sleep "$(awk -v r=$RANDOM -v m="$1" 'BEGIN{printf "%.3f", (r % m)/1000}')"; }

echo "== 1. kill -9 during runs ($N)"
store="$work/store1"
corrupt=0; stray=0; killed_mid=0
for i in $(seq 1 "$N"); do
  GAUNTLET_TEST_WRITE_PACE_MS=3 "$BIN" --quiet --store-dir "$store" "$spec" >/dev/null 2>&1 &
  pid=$!
  nap 400
  kill -9 "$pid" 2>/dev/null && killed_mid=$((killed_mid + 1))
  wait "$pid" 2>/dev/null
  check "$store" || { corrupt=$((corrupt + 1)); "$BIN" store check --store-dir "$store" | grep problem | head -2; }
  "$BIN" --quiet --store-dir "$store" "$spec" >/dev/null 2>&1
  t=$(temps "$store"); [ "$t" -gt 0 ] && { stray=$((stray + 1)); find "$store" -name '.*.tmp.*' | head -2; }
done
echo "runs killed while running: $killed_mid/$N; store check failures: $corrupt; rounds with a temp file left after the next run: $stray"
r1="$killed_mid $corrupt $stray"

echo "== 2. kill -9 during review --out ($N)"
store="$work/store2"; out="$work/out"
corrupt=0; stray=0; killed_mid=0
for i in $(seq 1 "$N"); do
  GAUNTLET_TEST_WRITE_PACE_MS=2 "$BIN" review "$work/specs" --out "$out" --report-formats json,markdown,sarif \
    --quiet --store-dir "$store" -j 2 >/dev/null 2>&1 &
  pid=$!
  nap 800
  kill -9 "$pid" 2>/dev/null && killed_mid=$((killed_mid + 1))
  wait "$pid" 2>/dev/null
  check "$store" || corrupt=$((corrupt + 1))
  "$BIN" review "$work/specs" --out "$out" --quiet --store-dir "$store" -j 2 >/dev/null 2>&1
  code=$?
  if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then echo "next review exited $code"; fi
  t=$(( $(temps "$store") + $(temps "$out") )); [ "$t" -gt 0 ] && { stray=$((stray + 1)); find "$store" "$out" -name '.*.tmp.*' | head -2; }
done
echo "reviews killed while running: $killed_mid/$N; store check failures: $corrupt; rounds with a temp file left after the next review: $stray"
r2="$killed_mid $corrupt $stray"

echo "== 3. 20 concurrent runs on one store"
store="$work/store3"
"$BIN" --quiet --store-dir "$store" "$spec" >/dev/null 2>&1
before=$(wc -l < "$store/adversary_runs.jsonl")
start=$(date +%s.%N)
pids=()
for i in $(seq 1 20); do
  s=$(ls "$work"/specs/*.md | sed -n "$(( (i % 8) + 1 ))p")
  "$BIN" --quiet --store-dir "$store" "$s" >/dev/null 2>&1 &
  pids+=($!)
done
bad=0
for p in "${pids[@]}"; do wait "$p"; c=$?; [ "$c" -le 1 ] || bad=$((bad + 1)); done
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e-s}')
after=$(wc -l < "$store/adversary_runs.jsonl")
runs=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['total_runs'])" "$store/adversary_stats.json")
check "$store" && ok=clean || ok=PROBLEM
echo "history lines added: $((after - before))/20; total_runs: $runs (want 21); failed runs: $bad; store check: $ok; wall: ${secs}s"
r3="$((after - before)) $runs $bad $ok"

echo "== summary"
echo "kill-run (killed corrupt stray): $r1"
echo "kill-review (killed corrupt stray): $r2"
echo "concurrent (added total_runs failed check): $r3"
