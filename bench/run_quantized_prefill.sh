#!/usr/bin/env bash
# The many-row products of prefill (bench/bench_quantized_prefill.cpp): gpt2's
# four Linear shapes times TOKENS prompt tokens, with float32, bfloat16 and int8
# weights, on THREADS threads. Interleaved repetitions, then a table of medians
# and ranges of GFLOP/s, and each format's speed over float32's on the same shape.
#   bash bench/run_quantized_prefill.sh [repetitions=5]
# TOKENS (64), THREADS (2). BENCH_BUILD_DIR=<dir> runs an existing build instead
# of building build/release; TINYGPT_ISA=avx2 measures as on an AVX2-only CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
repetitions="${1:-5}"
tokens="${TOKENS:-64}"
threads="${THREADS:-2}"
program=$(bench_program bench_quantized_prefill)
json=$(mktemp)
trap 'rm -f "$json"' EXIT
OMP_NUM_THREADS="$threads" "$program" --tokens="$tokens" --benchmark_repetitions="$repetitions" \
  --benchmark_min_time=0.2s --benchmark_enable_random_interleaving=true --benchmark_out="$json" \
  --benchmark_out_format=json >/dev/null 2>&1
python3 - "$json" "$repetitions" "$tokens" "$threads" <<'PY'
import json, statistics, sys
report = json.load(open(sys.argv[1]))
rates = {}
for run in report["benchmarks"]:
    if run.get("run_type") != "iteration":
        continue
    format, shape = run["run_name"].removesuffix("/real_time").split("/")
    rates.setdefault(shape, {}).setdefault(format, []).append(run["gflops"])
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
repetitions, tokens, threads = sys.argv[2:5]
print(f"CPU: {cpu}; {threads} threads; {tokens} tokens; GFLOP/s, medians (ranges) of {repetitions} interleaved repetitions")
formats = ["float32", "bfloat16", "int8"]
print(f"{'shape':<11}" + "".join(f"{name:>22}" for name in formats) + "".join(f"{name + ' x f32':>15}" for name in formats[1:]))
for shape, by_format in rates.items():
    medians = {name: statistics.median(by_format[name]) for name in formats}
    cells = "".join(f"{medians[name]:>8.1f} ({min(by_format[name]):.1f}-{max(by_format[name]):.1f})".rjust(22) for name in formats)
    ratios = "".join(f"{medians[name] / medians['float32']:>15.2f}" for name in formats[1:])
    print(f"{shape:<11}{cells}{ratios}")
PY
