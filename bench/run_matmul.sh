#!/usr/bin/env bash
# Matrix products through the tensor layer vs bare cblas_sgemm: interleaved
# repetitions, medians, and the ratio tensor / BLAS per shape (1.00 = no overhead);
# then one-row products (batch-1 generation) in GB/s against cblas_sgemv.
#   bash bench/run_matmul.sh [threads=2]
# BENCH_BUILD_DIR=<dir> runs an existing build instead of building build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
threads="${1:-2}"
json=$(run_repetitions bench_matmul "$threads")
python3 - "$json" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
gflops, gbps = {}, {}
for run in report["benchmarks"]:
    if run.get("run_type") == "iteration":
        case, side = run["run_name"].removesuffix("/real_time").rsplit("/", 1)
        table, unit = (gbps, "GB/s") if case.startswith("gemv_") else (gflops, "GFLOP/s")
        table.setdefault(case, {}).setdefault(side, []).append(run[unit])
print(report["context"].get("threads", ""), "- medians of 7 interleaved repetitions")
print(f"{'shape':<24}{'tensor GF/s':>12}{'BLAS GF/s':>11}{'ratio':>8}")
for case, sides in gflops.items():
    tensor, blas = statistics.median(sides["tensor"]), statistics.median(sides["blas"])
    print(f"{case:<24}{tensor:>12.1f}{blas:>11.1f}{tensor / blas:>8.3f}")
# One-row products: GB/s of weight read (memory-bound), raw::matmul, the gemv_rows
# kernel alone, its plain reference loop and cblas_sgemv.
print(f"\n{'one row (M = 1)':<28}{'tensor GB/s':>12}{'gemv GB/s':>10}{'plain GB/s':>11}{'sgemv GB/s':>11}")
for case, sides in gbps.items():
    medians = [statistics.median(sides[side]) for side in ("tensor", "gemv", "reference", "blas")]
    print(f"{case.removeprefix('gemv_'):<28}" + "".join(f"{m:>{w}.1f}" for m, w in zip(medians, (12, 10, 11, 11))))
PY
rm -f "$json"
