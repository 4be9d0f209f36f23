#!/usr/bin/env bash
# Times `gauntlet review` (release build, offline engine) on a folder of specs
# and compares it with reading the same files (`cat`) and with ripgrep
# searching them for the rule packs' trigger and safeguard patterns.
#
#   scripts/bench-review.sh [FOLDER] [RUNS]
#
# FOLDER defaults to ../shared/corpus/keps (656 specs, 22 MB); RUNS (default
# 3) repeats each measurement: wall time is the best run, peak memory the
# largest. Needs /usr/bin/time (apt-get install time) and rg (apt-get install
# ripgrep). Targets (issue 5): under 5 s wall and 300 MB peak on 2 cores; a
# second run with the store filled by the first must not be slower.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$root/../shared/corpus/keps}
runs=${2:-3}
bin=$root/target/release/gauntlet

[ -d "$corpus" ] || { echo "bench-review: no folder $corpus" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-review: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v rg >/dev/null || { echo "bench-review: needs rg (apt-get install ripgrep)" >&2; exit 2; }
cargo build --release --quiet --manifest-path "$root/Cargo.toml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=$(cd "$corpus" && pwd)

# The files gauntlet reviews (it honours .gitignore and hidden files; the
# corpus has neither, so find lists the same set).
find "$corpus" -type f \( -iname '*.md' -o -iname '*.markdown' \) -print0 > "$tmp/files"
specs=$(tr -cd '\0' < "$tmp/files" | wc -c)
bytes=$(xargs -0 cat < "$tmp/files" | wc -c)

# The patterns the offline attackers look for, for a like-for-like rg run,
# with the ASCII word semantics `rule::compile` gives them (\b, \w, \d).
python3 - "$root/personas" > "$tmp/patterns" <<'EOF'
import sys, tomllib, pathlib

def asciify(p):
    out, i, in_class = [], 0, False
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            n = p[i + 1]
            i += 2
            if n == "b" and not in_class: out.append("(?-u:\\b)")
            elif n == "B" and not in_class: out.append("(?-u:\\B)")
            elif n == "w": out.append("A-Za-z0-9_" if in_class else "[A-Za-z0-9_]")
            elif n == "d": out.append("0-9" if in_class else "[0-9]")
            else: out.append("\\" + n)
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            i += 1
            if i < len(p) and p[i] == "^": out.append("^"); i += 1
            if i < len(p) and p[i] == "]": out.append("]"); i += 1
            continue
        if c == "]" and in_class: in_class = False
        out.append(c)
        i += 1
    return "".join(out)

for f in sorted(pathlib.Path(sys.argv[1]).glob("*.toml")):
    d = tomllib.loads(f.read_text())
    for r in d.get("rules", []):
        for p in r.get("triggers", []) + r.get("safeguards", []):
            print(asciify(p))
EOF
patterns=$(wc -l < "$tmp/patterns")

# measure LABEL RUNS CMD...: best wall (s), its CPU time (user + sys, s) and
# the largest peak RSS (KB) over RUNS runs. CPU time is what the work costs
# when the machine is shared; wall time is what a user waits.
measure() {
    local label=$1 n=$2; shift 2
    local best="" cpu="" peak=0
    for _ in $(seq "$n"); do
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" > /dev/null 2> "$tmp/err" || true
        read -r wall user sys rss < <(tail -1 "$tmp/t")
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
            best=$wall
            cpu=$(awk "BEGIN{print $user + $sys}")
        fi
        if [ "$rss" -gt "$peak" ]; then peak=$rss; fi
    done
    printf '%s %s %s %s\n' "$label" "$best" "$cpu" "$peak" >> "$tmp/results"
}

# Warm the page cache so every contender reads from memory.
xargs -0 cat < "$tmp/files" > /dev/null

load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
measure cat "$runs" sh -c "xargs -0 cat < '$tmp/files' > /dev/null"
# One rg run: with every pattern at once it takes minutes, not seconds.
measure rg 1 rg --no-config -i -c -f "$tmp/patterns" "$corpus"
measure review "$runs" "$bin" review --quiet --no-store --format json "$corpus"
measure review-1-thread "$runs" "$bin" review --jobs 1 --quiet --no-store --format json "$corpus"

store=no
if "$bin" --help 2>/dev/null | grep -q -- '--store-dir'; then
    store=yes
    export GAUNTLET_STORE_DIR="$tmp/store"
    # First run fills the store; the measured runs then read a full one.
    measure review+store-first 1 "$bin" review --quiet --format json "$corpus"
    measure review+store-filled "$runs" "$bin" review --quiet --format json "$corpus"
fi

"$bin" review --quiet --no-store --format json "$corpus" > "$tmp/summary.json" || true

echo "gauntlet review benchmark: $specs specs, $bytes bytes in $corpus"
echo "machine: $(nproc) cores, load average $load at the start; $runs runs each (rg 1), best wall time, largest peak RSS"
echo "rg patterns: $patterns (every trigger and safeguard of personas/*.toml, case-insensitive, ASCII word semantics as the engine compiles them)"
echo
printf '%-22s %8s %8s %11s %9s %8s\n' what wall_s cpu_s specs_per_s MB_per_s peak_MB
while read -r label wall cpu rss; do
    awk -v l="$label" -v w="$wall" -v c="$cpu" -v r="$rss" -v s="$specs" -v b="$bytes" 'BEGIN{
        w2 = (w > 0 ? w : 0.005);
        printf "%-22s %8.2f %8.2f %11.0f %9.1f %8.1f\n", l, w, c, s / w2, b / 1e6 / w2, r / 1024 }'
done < "$tmp/results"
echo
get() { awk -v l="$1" -v f="$2" '$1 == l { print $f }' "$tmp/results"; }
awk -v g="$(get review 2)" -v c="$(get cat 2)" -v r="$(get rg 2)" \
    -v gc="$(get review 3)" -v cc="$(get cat 3)" -v rc="$(get rg 3)" 'BEGIN{
    m = 0.005
    printf "wall: review / cat %.0fx, review / rg %.2fx; cpu: review / cat %.0fx, review / rg %.2fx\n",
        g / (c > m ? c : m), g / (r > m ? r : m), gc / (cc > m ? cc : m), gc / (rc > m ? rc : m) }'
if [ "$store" = no ]; then
    echo "store: this build has no resolved-concerns store (--store-dir absent); measured with --no-store only"
fi
python3 - "$tmp/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
print(f"verdicts: {t['pass']} pass, {t['revise']} revise, {t['incomplete']} incomplete, {t['error']} error; "
      f"requiring revision {t['requiring_revision']['high']} high, {t['requiring_revision']['medium']} medium, "
      f"{t['requiring_revision']['low']} low; {t['dismissed']} dismissed")
EOF
