#!/bin/sh
# Times the offline run of the release binary on the largest KEP of the
# corpus: 20 runs, prints the median wall time and the median CPU time.
# Usage: scripts/time-largest-kep.sh [KEP_DIR]   (build with --release first)
set -eu
dir=${1:-/work/shared/corpus/keps}
bin=${GAUNTLET:-target/release/gauntlet}
spec=$(ls -S "$dir"/* | head -1)
echo "spec: $spec ($(wc -c < "$spec") bytes)"
for i in $(seq 20); do
  /usr/bin/time -f "%e %U %S" "$bin" --format json --no-store -q "$spec" 2>&1 >/dev/null | tail -1
done | awk '{ wall[NR] = $1 * 1000; cpu[NR] = ($2 + $3) * 1000 }
  END { n = asort(wall); asort(cpu); m = int((n + 1) / 2);
        printf "median wall %.0f ms, median cpu %.0f ms over %d runs\n", wall[m], cpu[m], n }'
