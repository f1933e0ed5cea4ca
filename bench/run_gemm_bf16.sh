#!/usr/bin/env bash
# The bfloat16 matrix product (cpu::gemm_bf16) against cblas_sgemm, for the three
# products of a Linear layer's training step: interleaved repetitions, medians,
# GFLOP/s of each side and the ratio bf16 / sgemm; then the float32 -> bfloat16
# rounding of the forward operands (x and W), against the bf16 forward's time.
#   bash bench/run_gemm_bf16.sh [threads=2]
# BENCH_BUILD_DIR=<dir> runs an existing build instead of building build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
threads="${1:-2}"
program=$(bench_program bench_gemm_bf16)
json=$(mktemp)
# 5 repetitions of at least 0.2 s each keep the whole run near a minute.
OMP_NUM_THREADS="$threads" "$program" --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_enable_random_interleaving=true --benchmark_format=json --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null
python3 - "$json" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
gflops, seconds, gbps = {}, {}, {}
# Registration order (layer by layer), not the random order the repetitions ran in.
for run in sorted(report["benchmarks"], key=lambda run: run["family_index"]):
    if run.get("run_type") != "iteration":
        continue
    name = run["run_name"].removesuffix("/real_time")
    layer, rest = name.split("/", 1)
    seconds.setdefault(name, []).append(run["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[run["time_unit"]])
    if rest == "convert":
        gbps.setdefault(layer, []).append(run["GB/s"])
    else:
        form, side = rest.rsplit("/", 1)
        gflops.setdefault((layer, form), {}).setdefault(side, []).append(run["GFLOP/s"])
context = report["context"]
print(f"CPU: {context.get('cpu', '?')}; bf16 kernel: {context.get('bf16 kernel', '?')}")
print(context.get("threads", ""), "- medians of 5 interleaved repetitions")
print(f"{'layer (B*T x in -> out)':<30}{'product':<17}{'bf16 GF/s':>10}{'sgemm GF/s':>11}{'ratio':>7}{'fallback GF/s':>14}")
for (layer, form), sides in gflops.items():
    bf16, sgemm, fallback = (statistics.median(sides[side]) for side in ("bf16", "sgemm", "fallback"))
    print(f"{layer:<30}{form:<17}{bf16:>10.1f}{sgemm:>11.1f}{bf16 / sgemm:>7.2f}{fallback:>14.1f}")
print(f"\n{'float32 -> bfloat16 of x and W':<30}{'ms':>8}{'GB/s':>8}{'/ bf16 forward':>16}")
for layer, rates in gbps.items():
    convert = statistics.median(seconds[f"{layer}/convert"])
    forward = statistics.median(seconds[f"{layer}/forward/bf16"])
    print(f"{layer:<30}{convert * 1e3:>8.3f}{statistics.median(rates):>8.1f}{convert / forward:>16.2f}")
PY
rm -f "$json"
