#!/usr/bin/env bash
# The one-row kernels of decoding (bench/bench_quantized_rows.cpp) on one thread:
# float32, and int8 and bfloat16 with every kernel set this CPU runs, in cache
# and from memory. Interleaved repetitions, then a table of medians: G weights/s,
# GB/s of weights read, and each set's speed over float32's from memory.
#   bash bench/run_quantized_rows.sh [repetitions=5]
# BENCH_BUILD_DIR=<dir> runs an existing build instead of building build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
repetitions="${1:-5}"
program=$(bench_program bench_quantized_rows)
json=$(mktemp)
trap 'rm -f "$json"' EXIT
OMP_NUM_THREADS=1 "$program" --benchmark_repetitions="$repetitions" --benchmark_min_time=0.3 \
  --benchmark_enable_random_interleaving=true --benchmark_out="$json" --benchmark_out_format=json >/dev/null 2>&1
python3 - "$json" "$repetitions" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
rates = {}
for run in sorted(report["benchmarks"], key=lambda run: run["family_index"]):
    if run.get("run_type") != "iteration":
        continue
    name = run["run_name"].removesuffix("/real_time")
    rates.setdefault(name, {"weights": [], "bytes": []})
    rates[name]["weights"].append(run["weights"])
    rates[name]["bytes"].append(run["bytes"])
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
print(f"CPU: {cpu}; one thread; medians of {sys.argv[2]} interleaved repetitions")
base = statistics.median(rates["float32/from_memory"]["weights"])
print(f"{'kernel':<42}{'G weights/s':>12}{'GB/s':>8}{'x float32':>11}")
for name, rate in rates.items():
    weights, gbps = statistics.median(rate["weights"]), statistics.median(rate["bytes"])
    ratio = f"{weights / base:>11.2f}" if "from_memory" in name else ""
    print(f"{name:<42}{weights:>12.1f}{gbps:>8.1f}{ratio}")
PY
