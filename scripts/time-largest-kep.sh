#!/bin/sh
# Times the offline run of the release binary on the largest KEP of the
# corpus: 20 runs; prints the median wall time and the median CPU time
# (user + system of the child), the fairer figure on a shared, loaded machine.
# Usage: scripts/time-largest-kep.sh [KEP_DIR]   (cargo build --release first)
set -eu
dir=${1:-"$(dirname "$0")/../../shared/corpus/keps"}
bin=${GAUNTLET:-target/release/gauntlet}
[ -d "$dir" ] || { echo "time-largest-kep: no folder $dir (pass the KEP folder)" >&2; exit 2; }
spec=$(ls -S "$dir"/* | head -1)
echo "spec: $spec ($(wc -c < "$spec") bytes)"
python3 - "$bin" "$spec" <<'PY'
import resource, statistics, subprocess, sys, time
binary, spec = sys.argv[1], sys.argv[2]
wall, cpu = [], []
for _ in range(20):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([binary, "--format", "json", "--no-store", "-q", spec],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall.append((time.perf_counter() - t) * 1000)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000)
print(f"median wall {statistics.median(wall):.0f} ms (min {min(wall):.0f}), "
      f"median cpu {statistics.median(cpu):.0f} ms over {len(wall)} runs")
PY
