#!/usr/bin/env bash
# Elementwise kernels vs copy bandwidth: interleaved repetitions, medians, and
# each kernel's share of the copy bandwidth measured in the same run.
#   bash bench/run_elementwise.sh [threads=2]
# BENCH_BUILD_DIR=<dir> runs an existing build instead of building build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
threads="${1:-2}"
json=$(run_repetitions bench_elementwise "$threads")
python3 - "$json" "$threads" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
by_name = {}
for run in runs:
    if run.get("run_type") == "iteration":
        by_name.setdefault(run["run_name"].removeprefix("BM_").split("/")[0], []).append(run)
def median(name, key): return statistics.median(r[key] for r in by_name[name])
copy = median("copy", "GB/s") / 1e9
print(f"{sys.argv[2]} threads, 16M float32 (64 MB per tensor), medians of 7 interleaved repetitions")
print(f"{'kernel':<22}{'ms':>9}{'GB/s':>9}{'of copy':>9}")
for name in by_name:
    gbs = median(name, "GB/s") / 1e9
    print(f"{name:<22}{median(name, 'real_time'):>9.2f}{gbs:>9.1f}{gbs / copy:>8.0%}")
PY
rm -f "$json"
